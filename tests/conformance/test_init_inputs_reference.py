"""Issue 31 item 1 on a Reference FMU: Feedthrough with every input driven by a constant of a
legal value.  Before the fix the Model Exchange block was initialized at its first output,
before the constants of its other inputs had run, and a zero reached the FMU: it stopped at
t = 0 with "0 is not a legal value for Enumeration_input".  Exact answer: each output equals
its input from t = 0 on.
"""

from __future__ import annotations

import numpy as np
import pytest

from blocks.sources import Constant
from cosim import DiagramBuilder, MasterScheduler
from cosim.simulator import simulate
from cosim.subsystem import DiagramSubsystem

pytest.importorskip("fmpy")


def _value(port):
    from cosim.ports import text_kind
    text = text_kind(port.dtype)
    if text is not None:  # String and Binary inputs are ports too (issue 31 item 2)
        return "set, not the start" if text == "String" else b"\x00\x01set"
    kind = np.dtype(port.dtype).kind
    if kind == "b":
        return True
    if kind in "iu":
        return 2  # legal for every integer type and for the Enumeration (items 1, 2)
    return 1.5    # exact in Float32


def _out_name(inp: str) -> str:
    return inp.replace("input", "output")


@pytest.mark.parametrize("first", ["fmu", "constants"])
@pytest.mark.parametrize("fmi", [2, 3])
def test_feedthrough_me_with_every_input_connected_starts_with_their_values(
        reference_fmus, fmi, first):
    from fmus import load_fmu
    blk = load_fmu(reference_fmus[(fmi, "Feedthrough")], interface="ModelExchange")
    b = DiagramBuilder("d")
    if first == "fmu":  # the order blocks are added in decides the evaluation order of ties
        b.add(blk)
    consts = {p: b.add(Constant(f"c_{p.name}", _value(p), dtype=p.dtype))
              for p in blk.inputs.values()}
    if first != "fmu":
        b.add(blk)
    want = {}
    for p, c in consts.items():
        b.connect(c.y, p)
        want[_out_name(p.name)] = _value(p)
    res = simulate(b.build(), 0.1, dt=0.01)
    for name, v in want.items():
        y = np.asarray(res[f"Feedthrough.{name}"])
        assert np.all(y == v), (name, y[:3], v)


@pytest.mark.parametrize("fmi", [2, 3])
def test_feedthrough_cs_in_a_master_gets_its_inputs_in_initialization_mode(reference_fmus,
                                                                           fmi):
    """Real, integer and Boolean inputs (String and Binary: no Constant block makes them;
    they pass through couplings between FMUs, tests/conformance/test_nonreal_couplings.py)."""
    from fmus import load_fmu
    sub = load_fmu(reference_fmus[(fmi, "Feedthrough")], interface="CoSimulation")
    b = DiagramBuilder("src")
    conns, want = [], {}
    for name in sub.input_names:
        kind = np.dtype(sub.dtypes[name]).kind
        if kind not in "biuf":
            continue
        v = True if kind == "b" else 2 if kind in "iu" else 1.5
        c = b.add(Constant(f"c_{name}", v, dtype=sub.dtypes[name]))
        b.export_output(c.y, name)
        conns.append((f"src.{name}", f"Feedthrough.{name}"))
        want[_out_name(name)] = v
    src = DiagramSubsystem(b.build(), solver="euler", dt=0.01)
    res = MasterScheduler([sub, src], conns, 0.01, extrapolation=0).run(0.05)
    assert "Enumeration_output" in want
    for name, v in want.items():
        y = np.asarray(res[f"Feedthrough.{name}"])
        assert np.all(y == v), (name, y[:3], v)


@pytest.mark.parametrize("fmi", [2, 3])
def test_feedthrough_me_wrapped_for_a_master_gets_no_placeholder_zero(reference_fmus, fmi):
    """A DiagramSubsystem around the ME block: its coupling inputs hold a placeholder zero
    until the master sets them; the FMU starts from its start values instead, then from the
    master's.  Real inputs only: a diagram's exported inputs are float coupling inputs
    (integer and Boolean couplings are issue 31 item 2)."""
    from fmus import load_fmu
    blk = load_fmu(reference_fmus[(fmi, "Feedthrough")], interface="ModelExchange")
    w = DiagramBuilder("w")
    w.add(blk)
    src = DiagramBuilder("src")
    conns = []
    for p in blk.inputs.values():
        if np.dtype(p.dtype).kind != "f":
            continue
        w.export_input(p, p.name)
        w.export_output(blk.outputs[_out_name(p.name)], _out_name(p.name))
        c = src.add(Constant(f"c_{p.name}", _value(p), dtype=p.dtype))
        src.export_output(c.y, p.name)
        conns.append((f"src.{p.name}", f"ft.{p.name}"))
    subs = [DiagramSubsystem(w.build(), solver="euler", dt=0.01, name="ft"),
            DiagramSubsystem(src.build(), solver="euler", dt=0.01)]
    res = MasterScheduler(subs, conns, 0.01, extrapolation=0).run(0.05)
    for p in blk.inputs.values():
        if np.dtype(p.dtype).kind == "f":
            y = np.asarray(res[f"ft.{_out_name(p.name)}"])
            assert np.all(y == _value(p)), (p.name, y[:3])
