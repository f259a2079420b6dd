"""Terminator: an exported input nothing reads (issue 21 item 5)."""

import pytest

from blocks import Gain, Terminator
from cosim import DiagramBuilder, DiagramSubsystem


def _diagram(shape=()):
    b = DiagramBuilder("d")
    g = b.add(Gain("g", 2.0, input_unit="m"))
    t = b.add(Terminator("unused", shape=shape, unit="N"))
    b.export_input(g.u, "u")
    b.export_input(t.u, "spare")
    b.export_output(g.y, "y")
    return b.build()


@pytest.mark.parametrize("shape", [(), (2,)])
def test_a_terminator_ends_an_exported_input_and_reads_nothing(shape):
    t = Terminator("t", unit="m")
    assert t.discards_input and list(t.outputs) == [] and t.u.unit_text == "m"
    sub = DiagramSubsystem(_diagram(shape), solver="rk4", dt=1e-3)
    assert sub.shapes["spare"] == shape and sub.units["spare"] == "N"
    assert sub.unread_inputs() == {"spare"}
    assert sub.feedthrough() == {"y": {"u"}}


def test_inputs_read_by_other_blocks_are_not_unread():
    b = DiagramBuilder("d")
    g = b.add(Gain("g", 2.0))
    b.export_input(g.u, "u")
    b.export_output(g.y, "y")
    assert DiagramSubsystem(b.build(), solver="rk4", dt=1e-3).unread_inputs() == set()


def test_a_diagram_with_a_terminator_exports_to_c_and_ignores_the_input(tmp_path):
    pytest.importorskip("fmpy")
    from fmus import load_fmu
    from fmus.export import export_fmu
    path = export_fmu(_diagram(), tmp_path / "d.fmu", "2.0", "cs", step=1e-3)
    fmu = load_fmu(path, name="d")
    assert set(fmu.input_names) == {"u", "spare"}
    assert fmu.feedthrough() == {"y": {"u"}}  # the export declares no dependency on it
    fmu.initialize(0)
    fmu.set_inputs(0.0, {"u": (1.5,), "spare": (1e9,)})
    fmu.do_step(0, 1_000_000)
    assert fmu.get_outputs()["y"] == 3.0
