"""The three FMU wrappers open their FMU in one place (:func:`fmus.opening.open_instance`):
the same checks for each, and none of them repeats the opening."""

from __future__ import annotations

import ast
import pathlib

import pytest

from fmus import FMU, FMUBlock, FMUScheduledBlock, FMUSubsystem
from fmus.errors import FMUConfigError

ROOT = pathlib.Path(__file__).resolve().parents[3]

#: what opening an FMU calls: only fmus/opening.py may call these
OPENING_CALLS = {"as_fmu", "FMUInstance", "check_parameters", "check_start",
                 "check_no_clocks", "check_instance", "default_name"}


@pytest.mark.parametrize("module", ["fmu_block.py", "scheduled.py", "subsystem.py"])
def test_a_wrapper_does_not_repeat_the_opening(module):
    tree = ast.parse((ROOT / "fmus" / module).read_text())
    called = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            called.add(f.id if isinstance(f, ast.Name) else getattr(f, "attr", None))
    assert "open_instance" in called
    assert not called & OPENING_CALLS, f"{module} opens its FMU itself: " \
                                       f"{sorted(called & OPENING_CALLS)}"


_SE = '''<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="Scripted" instantiationToken="{S}">
 <ScheduledExecution modelIdentifier="Scripted"/>
 <ModelVariables>
  <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
  <Clock name="c" valueReference="1" causality="input" intervalVariability="constant"
         intervalDecimal="0.1"/>
  <Float64 name="k" valueReference="2" causality="parameter" variability="fixed" start="1"/>
 </ModelVariables>
 <ModelStructure/>
</fmiModelDescription>
'''


def test_a_scheduled_block_refuses_a_parameter_given_two_values(tmp_path, monkeypatch):
    """As the ME block and the CS subsystem always did (it took the start= value)."""
    monkeypatch.setattr(FMU, "check_binary", lambda self, interface: None)  # no binary
    d = tmp_path / "fmu"
    d.mkdir()
    (d / "modelDescription.xml").write_text(_SE)
    blk = FMUScheduledBlock(FMU(d), "se", check=False, parameters={"k": 2.0},
                            start={"k": 2.0})
    assert [(v.name, h.default) for v, h in blk._params] == [("k", 2.0)]
    with pytest.raises(FMUConfigError, match="block 'se': 'k' given different values in "
                                             "parameters= and start="):
        FMUScheduledBlock(FMU(d), "se", check=False, parameters={"k": 2.0}, start={"k": 3.0})


@pytest.mark.parametrize(("cls", "owner"), [(FMUBlock, "block 'osc'"),
                                            (FMUSubsystem, "subsystem 'osc'")])
def test_the_me_block_and_the_cs_subsystem_open_alike(fmu_files, cls, owner):
    path = fmu_files["Oscillator"]
    with pytest.raises(FMUConfigError, match=f"{owner}: 'k' given different values"):
        cls(path, "osc", parameters={"k": 1.0}, start={"k": 2.0})
    w = cls(path, "osc", parameters={"k": 1.0}, start={"k": 1.0, "x": 0.5},
            call_log=pathlib.Path(path).with_suffix(".log"))
    assert w.name == "osc" and w.inst.instance_name == "osc"
    assert callable(w.inst.call_log)  # a path: appended to
