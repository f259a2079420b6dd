"""The master holds its recording (``master.record``,
:class:`cosim.master_results.MasterRecord`) and its settling (``master.settler``,
:class:`cosim.master_settle.Settler`) as objects, not mixins: each reads the master only
through the interface its module lists."""

import ast
import pathlib
import re

import cosim.master_results as mr
from cosim.master import MasterScheduler

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _master_names(module: str = "master_results.py") -> set[str]:
    """Every attribute read on the master in ``cosim/<module>``: ``m.NAME``,
    ``master.NAME``, ``self.master.NAME``."""
    names = set()
    tree = ast.parse((ROOT / "cosim" / module).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            v = node.value
            if isinstance(v, ast.Name) and v.id in ("m", "master") or (
                    isinstance(v, ast.Attribute) and v.attr == "master"):
                names.add(node.attr)
    return names


def test_the_record_reads_only_the_recording_interface():
    listed = set(re.findall(r"``(\w+)(?:\(\))?``", mr.__doc__.split("recording\ninterface:")[1]))
    used = _master_names()
    assert used and used <= listed, sorted(used - listed)
    assert len(listed) <= 10
    for name in listed:
        assert hasattr(MasterScheduler, name) or name in ("t", "writers", "bonds",
                                                          "counters"), name


def test_no_mixin_left_in_the_master():
    assert MasterScheduler.__mro__ == (MasterScheduler, object)


def test_the_settler_uses_only_the_coupling_services():
    import cosim.master_settle as ms
    used = _master_names("master_settle.py")
    assert used and used <= set(ms.SERVICES), sorted(used - set(ms.SERVICES))
    for name in ms.SERVICES:
        assert hasattr(MasterScheduler, name) or name in (
            "sources", "coupled_sources", "histories", "loop_solver", "t", "H",
            "single_rate", "record", "subsystems", "interface", "counters"), name
