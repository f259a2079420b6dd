"""The master's recording is an object it holds (``master.record``,
:class:`cosim.master_results.MasterRecord`), not a mixin: it reads the master only through
the recording interface its module docstring lists."""

import ast
import pathlib
import re

import cosim.master_results as mr
from cosim.master import MasterScheduler

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _master_names() -> set[str]:
    """Every attribute read on the master in ``cosim/master_results.py``: ``m.NAME``,
    ``master.NAME``, ``self.master.NAME``."""
    names = set()
    tree = ast.parse((ROOT / "cosim" / "master_results.py").read_text())
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
        assert hasattr(MasterScheduler, name) or name in ("t", "writers"), name


def test_no_mixin_left_in_the_master_for_results():
    assert not any("Results" in c.__name__ for c in MasterScheduler.__mro__)
