"""Math primitives: Gain, Sum, Product, Saturation, DeadZone, Switch, UnitConversion,
Mux and Demux (RateLimiter, Relay, Abs and MinMax: test_blocks_math_ext.py).

Linear blocks (Gain, Sum, UnitConversion without offset, Mux, Demux) are
checked twice: their own ``calc`` against their ``LinearModel``, and fused
against unfused in a simulation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from blocks import (
    Constant,
    DeadZone,
    Demux,
    Gain,
    Integrator,
    Mux,
    Product,
    Saturation,
    Sine,
    Step,
    Sum,
    Switch,
    UnitConversion,
)
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError, UnitError
from cosim.testing import BlockHarness


def y_of(block, **inputs):
    return BlockHarness(block).set_inputs(**inputs).output("y")


# ---------------------------------------------------------------------- Gain
def test_scalar_gain(linear_check):
    g = Gain("g", -2.5, input_unit="N")
    h = BlockHarness(g)
    assert h.set_input("u", 4.0).output("y") == -10.0
    assert isinstance(h.output("y"), float)
    assert g.y.feedthrough_inputs() == [g.u]
    lm = linear_check(h)
    assert lm.D.tolist() == [[-2.5]]


def test_gain_keeps_the_input_unit_unless_output_unit_is_given():
    assert Gain("g", 2.0, input_unit="rpm").y.unit_text == "rpm"
    g = Gain("g2", 0.5, input_unit="A", unit="N*m")
    assert g.u.unit_text == "A" and g.y.unit_text == "N*m"
    assert Gain("g3", 1.0).y.unit is None


def test_gain_output_unit_is_used_on_connections():
    # the inherited unit is real: 2 * 60 rpm arrives at a rad/s input as 4 pi rad/s
    def make():
        b = DiagramBuilder("gu")
        c = b.add(Constant("c", 60.0, unit="rpm"))
        g = b.add(Gain("g", 2.0, input_unit="rpm"))
        i = b.add(Integrator("i", input_unit="rad/s", unit="rad"))
        b.connect(c.y, g.u)
        b.connect(g.y, i.u)
        return b.build()

    for fuse in (True, False):
        res = Simulator(make(), dt=0.01, fuse_linear=fuse).run(1.0)
        assert res["g.y"][-1] == 120.0
        assert res["i.y"][-1] == pytest.approx(4 * math.pi, rel=1e-12)


def test_scalar_gain_on_a_vector(linear_check):
    g = Gain("g", 3.0, shape=3)
    assert g.u.shape == g.y.shape == (3,)
    h = BlockHarness(g)
    np.testing.assert_array_equal(h.set_input("u", [1.0, -2.0, 0.5]).output("y"),
                                  [3.0, -6.0, 1.5])
    np.testing.assert_array_equal(linear_check(h).D, 3.0 * np.eye(3))


def test_vector_gain_is_element_wise(linear_check):
    g = Gain("g", [1.0, -2.0, 0.5])
    assert g.u.shape == g.y.shape == (3,)
    h = BlockHarness(g)
    np.testing.assert_array_equal(h.set_input("u", [2.0, 3.0, 4.0]).output("y"),
                                  [2.0, -6.0, 2.0])
    np.testing.assert_array_equal(linear_check(h).D, np.diag([1.0, -2.0, 0.5]))


def test_matrix_gain(linear_check):
    K = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 4.0]])
    g = Gain("g", K)
    assert g.u.shape == (3,) and g.y.shape == (2,)
    u = np.array([0.5, -1.0, 2.0])
    h = BlockHarness(g)
    np.testing.assert_allclose(h.set_input("u", u).output("y"), K @ u, rtol=1e-15)
    np.testing.assert_array_equal(linear_check(h).D, K)


# ----------------------------------------------------------------------- Sum
@pytest.mark.parametrize("signs, values, expected", [
    ("++", (1.5, 2.0), 3.5),
    ("+-", (1.5, 2.0), -0.5),
    ("-+", (1.5, 2.0), 0.5),
    ("+-+", (1.0, 2.0, 4.0), 3.0),
    ("--", (1.0, 2.0), -3.0),
    ("-", (7.0,), -7.0),
    ("+", (7.0,), 7.0),
])
def test_sum_signs(signs, values, expected, linear_check):
    s = Sum("s", signs, unit="V")
    assert [p.name for p in s.inputs.values()] == [f"u{i}" for i in range(len(signs))]
    assert all(p.unit_text == "V" for p in s.inputs.values()) and s.y.unit_text == "V"
    h = BlockHarness(s)
    got = h.set_inputs(**{f"u{i}": v for i, v in enumerate(values)}).output("y")
    assert got == expected and isinstance(got, float)
    lm = linear_check(h)
    assert lm.D.tolist() == [[1.0 if c == "+" else -1.0 for c in signs]]


def test_vector_sum(linear_check):
    h = BlockHarness(Sum("s", "+-+", shape=2))
    got = h.set_inputs(u0=[1.0, 2.0], u1=[10.0, 20.0], u2=[0.5, 0.25]).output("y")
    np.testing.assert_array_equal(got, [-8.5, -17.75])
    lm = linear_check(h)
    assert lm.D.shape == (2, 6)


@pytest.mark.parametrize("signs", ["", "+*", "+ -", "ab"])
def test_sum_rejects_bad_signs(signs):
    with pytest.raises(ParameterError, match="Sum 'bad'"):
        Sum("bad", signs)


# ------------------------------------------------------------------- Product
def test_product_and_quotient():
    assert y_of(Product("p"), u0=3.0, u1=-2.0) == -6.0
    assert y_of(Product("q", "*/"), u0=3.0, u1=-2.0) == -1.5
    assert y_of(Product("r", "/"), u0=4.0) == 0.25
    assert y_of(Product("s", "**/"), u0=2.0, u1=3.0, u2=4.0) == 1.5
    v = y_of(Product("v", "*/", shape=2), u0=[1.0, 6.0], u1=[2.0, 3.0])
    np.testing.assert_array_equal(v, [0.5, 2.0])


def test_product_is_nonlinear_and_validated():
    p = Product("p")
    assert p.linear_model(BlockHarness(p).ctx) is None
    with pytest.raises(ParameterError, match="Product 'bad'"):
        Product("bad", "*+")
    with pytest.raises(ParameterError, match="Product 'bad'"):
        Product("bad", "")


# ----------------------------------------------------------- Saturation etc.
def test_scalar_saturation():
    s = Saturation("s", -1.0, 2.0, unit="A")
    h = BlockHarness(s)
    for u, y in [(-5.0, -1.0), (-1.0, -1.0), (0.3, 0.3), (2.0, 2.0), (9.0, 2.0)]:
        assert h.set_input("u", u).output("y") == y
    assert s.y.unit_text == "A" and s.linear_model(h.ctx) is None
    assert y_of(Saturation("eq", 1.0, 1.0), u=-3.0) == 1.0  # lower == upper is allowed


def test_vector_saturation():
    s = Saturation("s", -1.0, 2.0, shape=4)
    assert s.u.shape == s.y.shape == (4,)
    np.testing.assert_array_equal(y_of(s, u=[-5.0, 0.5, 2.0, 3.0]), [-1.0, 0.5, 2.0, 2.0])


def test_saturation_validation():
    with pytest.raises(ParameterError, match="Saturation 'bad': lower 2.0 > upper 1.0"):
        Saturation("bad", 2.0, 1.0)
    with pytest.raises(ParameterError, match="Saturation 'nan'"):
        Saturation("nan", math.nan, 1.0)


def test_dead_zone():
    d = DeadZone("d", -1.0, 2.0, unit="V")
    h = BlockHarness(d)
    for u, y in [(-3.0, -2.0), (-1.0, 0.0), (0.0, 0.0), (2.0, 0.0), (5.0, 3.0)]:
        assert h.set_input("u", u).output("y") == y
    # continuous at the edges of the zone
    assert h.set_input("u", 2.0 + 1e-9).output("y") == pytest.approx(1e-9, abs=1e-15)
    assert h.set_input("u", -1.0 - 1e-9).output("y") == pytest.approx(-1e-9, abs=1e-15)
    assert d.linear_model(h.ctx) is None
    with pytest.raises(ParameterError, match="DeadZone 'bad'"):
        DeadZone("bad", 1.0, -1.0)


def test_switch():
    s = Switch("s", threshold=0.0, unit="m")
    h = BlockHarness(s).set_inputs(u_true=1.0, u_false=-1.0)
    assert h.set_input("control", 0.5).output("y") == 1.0
    assert h.set_input("control", 0.0).output("y") == 1.0  # >= threshold
    assert h.set_input("control", -1e-12).output("y") == -1.0
    assert s.u_true.unit_text == s.u_false.unit_text == s.y.unit_text == "m"
    assert s.control.unit is None
    assert set(s.y.feedthrough_inputs()) == {s.u_true, s.control, s.u_false}
    d = BlockHarness(Switch("d")).set_inputs(u_true=1.0, u_false=-1.0)
    assert d.set_input("control", 0.49).output("y") == -1.0  # default threshold 0.5
    assert d.set_input("control", 0.5).output("y") == 1.0


# ------------------------------------------------------------ UnitConversion
def test_unit_conversion_rpm_to_rad_per_s(linear_check):
    c = UnitConversion("c", "rpm", "rad/s")
    assert c.u.unit_text == "rpm" and c.y.unit_text == "rad/s"
    h = BlockHarness(c)
    assert h.set_input("u", 60.0).output("y") == pytest.approx(2 * math.pi, rel=1e-15)
    assert c.scale == pytest.approx(math.pi / 30, rel=1e-15) and c.bias == 0.0
    lm = linear_check(h)
    assert lm.D[0, 0] == c.scale
    hv = BlockHarness(UnitConversion("cv", "mm", "m", shape=2))
    np.testing.assert_allclose(hv.set_input("u", [1500.0, -2.0]).output("y"),
                               [1.5, -0.002], rtol=1e-15)
    linear_check(hv)


def test_unit_conversion_with_offset_is_affine_not_linear():
    c = UnitConversion("c", "degC", "K")
    h = BlockHarness(c)
    assert h.set_input("u", 25.0).output("y") == pytest.approx(298.15, abs=1e-12)
    assert h.set_input("u", -273.15).output("y") == pytest.approx(0.0, abs=1e-12)
    assert c.linear_model(h.ctx) is None  # y = u + 273.15 has no LinearModel
    f = UnitConversion("f", "degC", "degF")
    assert y_of(f, u=100.0) == pytest.approx(212.0, abs=1e-12)


def test_unit_conversion_rejects_incompatible_units():
    with pytest.raises(UnitError, match="incompatible"):
        UnitConversion("c", "rpm", "m")


def test_degc_to_kelvin_in_a_simulation_is_not_fused_and_right():
    def make():
        b = DiagramBuilder("temp")
        c = b.add(Constant("c", 25.0, unit="degC"))
        uc = b.add(UnitConversion("uc", "degC", "K"))
        g = b.add(Gain("g", 2.0, input_unit="K"))
        i = b.add(Integrator("i", input_unit="K", unit="K*s"))
        b.connect(c.y, uc.u)
        b.connect(uc.y, g.u)
        b.connect(g.y, i.u)
        return b.build()

    for fuse in (True, False):
        sim = Simulator(make(), dt=0.01, fuse_linear=fuse)
        res = sim.run(1.0)
        names = {b.name for b in sim.ev.fused_blocks}
        assert names == ({"g", "i"} if fuse else set())
        assert res["uc.y"][-1] == pytest.approx(298.15, abs=1e-12)
        assert res["g.y"][-1] == pytest.approx(596.3, abs=1e-12)
        np.testing.assert_allclose(res["i.y"], 596.3 * res.time, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- Mux, Demux
def test_mux(linear_check):
    m = Mux("m", 3, unit="V")
    assert m.y.shape == (3,) and m.y.unit_text == "V"
    h = BlockHarness(m)
    y = h.set_inputs(u0=1.0, u1=-2.0, u2=3.5).output("y")
    assert isinstance(y, np.ndarray)
    np.testing.assert_array_equal(y, [1.0, -2.0, 3.5])
    np.testing.assert_array_equal(linear_check(h).D, np.eye(3))


def test_demux(linear_check):
    d = Demux("d", 3, unit="V")
    assert d.u.shape == (3,) and [p.name for p in d.outs] == ["y0", "y1", "y2"]
    h = BlockHarness(d).set_input("u", [4.0, -5.0, 6.5])
    assert [h.output(f"y{i}") for i in range(3)] == [4.0, -5.0, 6.5]
    assert all(isinstance(h.output(f"y{i}"), float) for i in range(3))
    np.testing.assert_array_equal(linear_check(h).D, np.eye(3))


# --------------------------------------------------------------- simulation
def test_math_chain_fused_and_generic_agree(fused_vs_generic):
    """Linear blocks around nonlinear ones; the linear parts are fused."""

    def make():
        b = DiagramBuilder("chain")
        s = b.add(Sine("s", 2.0, 1.5))
        st = b.add(Step("st", 0.1, 1.0, -0.5))
        mux = b.add(Mux("mux", 2))
        K = b.add(Gain("K", [[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]]))
        dm = b.add(Demux("dm", 3))
        sm = b.add(Sum("sm", "+-+"))
        rpm = b.add(UnitConversion("rpm", "rpm", "rad/s"))
        sat = b.add(Saturation("sat", -1.5, 1.5))
        dz = b.add(DeadZone("dz", -0.2, 0.2))
        pr = b.add(Product("pr", "**"))
        sw = b.add(Switch("sw", 0.0))
        gv = b.add(Gain("gv", [2.0, -1.0]))
        mux2 = b.add(Mux("mux2", 2))
        i = b.add(Integrator("i", [0.5, -0.5]))
        b.connect(s.y, mux.ins[0])
        b.connect(st.y, mux.ins[1])
        b.connect(mux.y, K.u)
        b.connect(K.y, dm.u)
        for k in range(3):
            b.connect(dm.outs[k], sm.ins[k])
        b.connect(sm.y, rpm.u)
        b.connect(rpm.y, sat.u)
        b.connect(sat.y, dz.u)
        b.connect(dz.y, pr.ins[0])
        b.connect(s.y, pr.ins[1])
        b.connect(pr.y, sw.u_true)
        b.connect(st.y, sw.control)
        b.connect(dm.outs[1], sw.u_false)
        b.connect(sw.y, mux2.ins[0])
        b.connect(dm.outs[2], mux2.ins[1])
        b.connect(mux2.y, gv.u)
        b.connect(gv.y, i.u)
        return b.build()

    res, _, sim = fused_vs_generic(make, 0.5, solver="rk4", dt=1e-3)
    fused = {b.name for b in sim.ev.fused_blocks}
    assert {"mux", "K", "dm", "sm", "rpm", "gv", "mux2", "i"} <= fused
    assert not fused & {"sat", "dz", "pr", "sw", "s", "st"}
    # spot checks of the signal values against the equations
    t = res.time
    s = 2.0 * np.sin(2 * np.pi * 1.5 * t)
    st = np.where(t >= 0.1, 1.0, -0.5)
    sm = (s + 2 * st) - (0.5 * s - st) + 3.0 * s
    np.testing.assert_allclose(res["sm.y"], sm, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res["rpm.y"], sm * np.pi / 30, rtol=1e-12, atol=1e-12)
    assert np.ptp(res["sw.y"]) > 0.1 and np.ptp(res["i.y"][:, 0]) > 0.01
