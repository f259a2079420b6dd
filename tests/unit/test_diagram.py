"""Building diagrams: connections, units, hierarchy and every build-time error."""

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.math import Gain, Sum
from blocks.sources import Constant
from cosim import Block, DiagramBuilder, FunctionBlock, Simulator
from cosim.errors import AlgebraicLoopError, BuildError, ConnectError, PortError, UnitError


def test_unknown_port_lists_valid_names():
    b = DiagramBuilder("d")
    b.add(Gain("gain", 2.0))
    with pytest.raises(PortError) as ei:
        b.connect("gain.yy", "gain.u")
    msg = str(ei.value)
    assert "'yy' not found on block 'gain'" in msg and "valid names: y" in msg
    assert "Did you mean 'y'" in msg


def test_unknown_block_lists_blocks():
    b = DiagramBuilder("d")
    b.add(Gain("gain", 2.0))
    with pytest.raises(PortError, match="block 'gian' not found.*valid names: gain"):
        b.connect("gian.y", "gain.u")


def test_shape_mismatch_names_both_ports():
    b = DiagramBuilder("d")
    c = b.add(Constant("c", np.zeros(3)))
    g = b.add(Gain("g", 1.0))
    with pytest.raises(ConnectError, match=r"shape mismatch: output 'c.y' \(3,\) .*'g.u' scalar"):
        b.connect(c.y, g.u)


def test_dtype_mismatch():
    b = DiagramBuilder("d")
    f = b.add(FunctionBlock("f", lambda u: u, inputs=[{"name": "u"}],
                            outputs=[{"name": "y", "dtype": complex}]))
    g = b.add(Gain("g", 1.0))
    with pytest.raises(ConnectError, match="dtype mismatch: output 'f.y' \\(complex128\\)"):
        b.connect(f.out_ports[0], g.u)


def test_unit_mismatch_names_ports_and_units():
    b = DiagramBuilder("d")
    c = b.add(Constant("speed", 1.0, unit="rad/s"))
    g = b.add(Gain("gear", 2.0, input_unit="m/s"))
    with pytest.raises(UnitError) as ei:
        b.connect(c.y, g.u)
    msg = str(ei.value)
    assert "unit mismatch: output 'speed.y' [rad/s] -> input 'gear.u' [m/s]" in msg
    assert "UnitConversion" in msg


def test_compatible_units_are_converted_on_the_connection():
    b = DiagramBuilder("d")
    c = b.add(Constant("speed", 60.0, unit="rpm"))
    g = b.add(Gain("g", 1.0, input_unit="rad/s"))
    p = b.add(Constant("p", 2.0, unit="bar"))
    q = b.add(Gain("q", 1.0, input_unit="Pa"))
    b.connect(c.y, g.u)
    b.connect(p.y, q.u)
    d = b.build()
    res = Simulator(d, record=["g.y", "q.y"]).run(0.0)
    assert res["g.y"][-1] == pytest.approx(2 * np.pi)
    assert res["q.y"][-1] == pytest.approx(2e5)


def test_unconnected_input_is_reported_with_fix():
    b = DiagramBuilder("d")
    b.add(Gain("g", 1.0))
    with pytest.raises(PortError) as ei:
        b.build()
    assert "1 unconnected input(s):\n  'g.u' scalar" in str(ei.value)
    assert "export_input()" in str(ei.value)


def test_duplicate_block_names_and_double_connection():
    b = DiagramBuilder("d")
    b.add(Gain("g", 1.0))
    with pytest.raises(BuildError, match="duplicate block name 'g'"):
        b.add(Gain("g", 2.0))
    c1 = b.add(Constant("c1", 1.0))
    c2 = b.add(Constant("c2", 1.0))
    b.connect(c1.y, "g.u")
    with pytest.raises(PortError, match="already connected to 'c1.y'"):
        b.connect(c2.y, "g.u")


def test_invalid_names_and_duplicate_ports():
    with pytest.raises(BuildError, match="invalid block name"):
        Gain("my.gain", 1.0)

    class Twice(Block):
        def __init__(self):
            super().__init__("t")
            self.declare_input("u")
            self.declare_output("u", lambda ctx: 0.0)
    with pytest.raises(PortError, match="declared twice"):
        Twice()


def test_frozen_after_build_and_single_owner():
    b = DiagramBuilder("d")
    c = b.add(Constant("c", 1.0))
    b.build()
    with pytest.raises(BuildError, match="already built"):
        b.add(Constant("c2", 1.0))
    b2 = DiagramBuilder("e")
    with pytest.raises(BuildError, match="already belongs to another diagram"):
        b2.add(c)


def test_algebraic_loop_rejected_with_port_path():
    b = DiagramBuilder("d")
    s = b.add(Sum("s", "+-"))
    g = b.add(Gain("g", 0.5))
    c = b.add(Constant("c", 1.0))
    b.connect(c.y, s.ins[0])
    b.connect(s.y, g.u)
    b.connect(g.y, s.ins[1])
    with pytest.raises(AlgebraicLoopError) as ei:
        b.build(loops="error")
    msg = str(ei.value)
    assert "g.y -> s.u1 (feedthrough) -> s.y -> g.u (feedthrough) -> g.y" in msg
    assert "depends_on" in msg
    # the failed build leaves the builder open: the loop can be accepted and solved
    d = b.build(loops="solve")
    assert set(d.blocks) == {"s", "g", "c"} and all(x.parent is d for x in d.blocks.values())


def test_hierarchy_with_exported_ports_and_nested_conversion():
    inner = DiagramBuilder("inner")
    g = inner.add(Gain("g", 3.0, input_unit="rad/s"))
    i = inner.add(Integrator("i", input_unit="rad/s", unit="rad"))
    inner.connect(g.y, i.u)
    inner.export_input(g.u, "w")
    inner.export_output(i.y, "angle")
    sub = inner.build()
    outer = DiagramBuilder("outer")
    c = outer.add(Constant("speed", 60.0, unit="rpm"))
    outer.add(sub)
    outer.connect(c.y, sub.input("w"))
    d = outer.build()
    assert i.path == "inner/i"
    res = Simulator(d, solver="rk4", dt=0.01, record=["inner/i.y"]).run(1.0)
    # 60 rpm = 2 pi rad/s, times 3, integrated for 1 s
    assert res["inner/i.y"][-1] == pytest.approx(6 * np.pi, rel=1e-12)
    assert d.find("inner/i.y") is i.y


def test_export_input_must_be_fixed_before_running():
    b = DiagramBuilder("d")
    g = b.add(Gain("g", 2.0))
    b.export_input(g.u, "u")
    d = b.build()
    with pytest.raises(PortError, match="exported inputs that were not given values"):
        Simulator(d).run(0.0)
    ctx = d.create_context()
    ctx.fix_input("u", 4.0)
    res = Simulator(d, ctx, record=["g.y"]).run(0.0)
    assert res["g.y"][-1] == 8.0


# ----------------------------------------------------------- inputs with a default
class _Scale(Block):
    """y = 3 u; ``u`` may be left unconnected (it then holds ``default``)."""

    def __init__(self, name, default=None, shape=()):
        super().__init__(name)
        self.u = self.declare_input("u", shape=shape, default=default)
        self.y = self.declare_output("y", lambda ctx: 3.0 * ctx.input(self.u), shape=shape)


def test_an_unconnected_input_with_a_default_holds_it():
    b = DiagramBuilder("d")
    s = b.add(_Scale("s", default=2.5))
    v = b.add(_Scale("v", default=[1.0, -1.0], shape=(2,)))
    res = Simulator(b.build(), solver="euler", dt=0.1, record=[s.y, v.y]).run(0.3)
    assert np.all(res["s.y"] == 7.5)
    assert np.array_equal(res["v.y"][-1], [3.0, -3.0])


def test_a_connected_input_with_a_default_takes_its_source():
    b = DiagramBuilder("d")
    c = b.add(Constant("c", 4.0))
    s = b.add(_Scale("s", default=2.5))
    b.connect(c.y, s.u)
    res = Simulator(b.build(), solver="euler", dt=0.1, record=[s.y]).run(0.2)
    assert np.all(res["s.y"] == 12.0)


def test_an_unconnected_input_without_a_default_is_still_a_build_error():
    b = DiagramBuilder("d")
    b.add(_Scale("s"))
    with pytest.raises(PortError, match="unconnected input"):
        b.build()
