"""Objects that a block (or a mechanism) holds use it only through their named host interface (as
``cosim.advancer.SteppingHost``): each module is read for every ``host.NAME`` and
``self._host.NAME``, which must be in its protocol; the host implements the protocol."""

from __future__ import annotations

import ast
import inspect
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def host_names(module: pathlib.Path) -> set[str]:
    """Every ``host.NAME``, ``self.host.NAME`` and ``self._host.NAME`` read in ``module``."""
    names = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.Attribute):
            v = node.value
            if isinstance(v, ast.Name) and v.id == "host" or (
                    isinstance(v, ast.Attribute) and v.attr in ("host", "_host")
                    and isinstance(v.value, ast.Name) and v.value.id == "self"):
                names.add(node.attr)
    return names


def contract(protocol: type) -> set[str]:
    members = {n for n, _ in inspect.getmembers(protocol) if not n.startswith("_")}
    return members | set(getattr(protocol, "__annotations__", {}))


def _cases():
    from blocks.multibody.corrections import Corrections, CorrectionsHost
    from blocks.multibody.mechanism import Mechanism
    from fmus.fmu_block import FMUBlock
    from fmus.me_events import MEEvents, MEHost
    from fmus.scheduled import FMUScheduledBlock
    from fmus.se_ticks import SEHost, SETicks
    from fmus.subsystem import FMUSubsystem
    from fmus.subsystem_jacobian import JacobianHost, OutputJacobian
    return [("fmus/me_events.py", MEHost, MEEvents, FMUBlock),
            ("fmus/se_ticks.py", SEHost, SETicks, FMUScheduledBlock),
            ("fmus/subsystem_jacobian.py", JacobianHost, OutputJacobian, FMUSubsystem),
            ("blocks/multibody/corrections.py", CorrectionsHost, Corrections, Mechanism)]


@pytest.mark.parametrize(("module", "protocol", "held", "host"), _cases(),
                         ids=lambda c: c if isinstance(c, str) else "")
def test_a_held_object_uses_only_its_host_interface(module, protocol, held, host):
    used = host_names(ROOT / module)
    assert used, f"the scan of {module} found no host access"
    allowed = contract(protocol)
    assert used <= allowed, f"{module} reaches past {protocol.__name__}: " \
                            f"{sorted(used - allowed)}"
    assert len(allowed) <= 8, f"{protocol.__name__} is not narrow: {sorted(allowed)}"
    for name in allowed:  # the host implements it (methods on the class, data set on it)
        assert hasattr(host, name) or name in protocol.__annotations__, name
    assert not issubclass(host, held), f"{host.__name__} still inherits {held.__name__}"


def test_the_scan_sees_every_form_of_host_access(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("def f(host, self):\n    host.a\n    self._host.b()\n    self.host.c = 1\n"
                 "    self.d\n    other.e\n")
    assert host_names(p) == {"a", "b", "c"}
