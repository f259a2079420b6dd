"""Double-acting cylinder: chamber equations, force, friction, end stops, static balance."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from blocks.continuous import Integrator
from blocks.hydraulics import CylinderFriction, DoubleActingCylinder, Fluid
from blocks.math import Gain, Sum
from blocks.sources import Constant
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

OIL = Fluid(density_kg_m3=870.0, bulk_modulus=1.5e9)
GEOM = dict(area_1_m2=2e-3, area_2_m2=1e-3, stroke_m=0.5, dead_volume_1_m3=1e-4,
            dead_volume_2_m3=1e-4, fluid=OIL)


def test_chamber_pressure_rates_and_volumes():
    h = BlockHarness(DoubleActingCylinder("c", **GEOM, p1_0_pa=80e5, p2_0_pa=30e5))
    h.set_inputs(q_1=2e-4, q_2=-1e-4, x=0.2, v=0.05)
    v1, v2 = 1e-4 + 2e-3 * 0.2, 1e-4 + 1e-3 * 0.3
    assert h.output("volume_1") == pytest.approx(v1, rel=1e-14)
    assert h.output("volume_2") == pytest.approx(v2, rel=1e-14)
    dp1, dp2 = h.derivatives()
    assert dp1 == pytest.approx(1.5e9 / v1 * (2e-4 - 2e-3 * 0.05), rel=1e-13)
    assert dp2 == pytest.approx(1.5e9 / v2 * (-1e-4 + 1e-3 * 0.05), rel=1e-13)
    assert h.output("p_1") == 80e5 and h.output("p_2") == 30e5


def test_force_without_friction_is_the_pressure_balance():
    h = BlockHarness(DoubleActingCylinder("c", **GEOM, p1_0_pa=80e5, p2_0_pa=30e5))
    h.set_inputs(x=0.2, v=0.3)
    assert h.output("force") == pytest.approx(80e5 * 2e-3 - 30e5 * 1e-3, rel=1e-14)
    c = DoubleActingCylinder("c", **GEOM, p1_0_pa=80e5, p2_0_pa=30e5,
                             ambient_pressure_pa=1e5)
    h = BlockHarness(c)
    h.set_inputs(x=0.2, v=0.0)
    assert h.output("force") == pytest.approx(80e5 * 2e-3 - 30e5 * 1e-3 - 1e5 * 1e-3,
                                              rel=1e-14)


def test_friction_law():
    f = CylinderFriction(coulomb_n=200.0, static_n=300.0, stribeck_velocity_m_s=0.02,
                         viscous_n_s_m=1e3, tanh_velocity_m_s=1e-4)
    assert f.force(0.0) == 0.0
    for v in (0.005, 0.02, 0.1):  # v >> v_t: Stribeck curve, tanh = 1 in floats
        exact = 200.0 + 100.0 * math.exp(-(v / 0.02) ** 2) + 1e3 * v
        assert f.force(v) == pytest.approx(exact, rel=1e-12)
        assert f.force(-v) == pytest.approx(-exact, rel=1e-12)
    assert f.force(1e-4) == pytest.approx((200 + 100 * math.exp(-(0.005) ** 2)) * math.tanh(1)
                                          + 0.1, rel=1e-12)
    assert CylinderFriction(viscous_n_s_m=1e5).force(0.01) == pytest.approx(1e3)
    # the cylinder subtracts it, with the efficiency-type seal loss on top
    c = DoubleActingCylinder("c", **GEOM, p1_0_pa=80e5, p2_0_pa=30e5, friction=f,
                             efficiency=0.9)
    h = BlockHarness(c)
    h.set_inputs(x=0.2, v=0.05)
    fp = 80e5 * 2e-3 - 30e5 * 1e-3
    assert h.output("force") == pytest.approx(fp - f.force(0.05) - 0.1 * fp, rel=1e-12)


def test_end_stops_push_back_never_pull_and_are_continuous():
    c = DoubleActingCylinder("c", **GEOM, p1_0_pa=1e5, p2_0_pa=1e5, end_stop_stiffness_n_m=1e8,
                             end_stop_damping_n_s_m=1e5, end_stop_damping_depth_m=1e-4)
    assert c.end_stop_force(0.25, -1.0) == 0.0
    assert c.end_stop_force(0.0, -1.0) == 0.0 and c.end_stop_force(0.5, 1.0) == 0.0
    assert c.end_stop_force(-1e-9, 0.0) == pytest.approx(0.1, rel=1e-9)  # continuous at 0
    assert c.end_stop_force(-2e-4, 0.0) == pytest.approx(2e4)
    assert c.end_stop_force(-2e-4, -0.1) == pytest.approx(2e4 + 1e4)  # moving in: damped
    assert c.end_stop_force(-2e-4, 1.0) == 0.0  # leaving fast: no adhesion
    assert c.end_stop_force(0.5 + 2e-4, 0.1) == pytest.approx(-(2e4 + 1e4))
    # damping blended in over the depth: half way, S(0.5) = 0.5
    assert c.end_stop_force(-0.5e-4, -0.1) == pytest.approx(5e3 + 0.5 * 1e4)


def _closed_cylinder_with_mass(load_n, mass_kg=100.0):
    b = DiagramBuilder("closed_cylinder")
    cyl = b.add(DoubleActingCylinder(
        "cyl", **GEOM, p1_0_pa=50e5, p2_0_pa=50e5,
        friction=CylinderFriction(coulomb_n=200.0, static_n=300.0, viscous_n_s_m=5e4)))
    zero1 = b.add(Constant("q1", 0.0, unit="m^3/s"))
    zero2 = b.add(Constant("q2", 0.0, unit="m^3/s"))
    load = b.add(Constant("load", load_n, unit="N"))
    net = b.add(Sum("net", "+-", unit="N"))
    acc = b.add(Gain("acc", 1.0 / mass_kg, input_unit="N", unit="m/s^2"))
    vel = b.add(Integrator("vel", 0.0, unit="m/s", input_unit="m/s^2"))
    pos = b.add(Integrator("pos", 0.25, unit="m", input_unit="m/s"))
    b.connect(zero1.y, cyl.q_1)
    b.connect(zero2.y, cyl.q_2)
    b.connect(cyl.force, net.ins[0])
    b.connect(load.y, net.ins[1])
    b.connect(net.y, acc.u)
    b.connect(acc.y, vel.u)
    b.connect(vel.y, pos.u)
    b.connect(vel.y, cyl.v)
    b.connect(pos.y, cyl.x)
    return b.build()


def test_static_force_balance_of_a_closed_cylinder_under_load():
    # closed ports: each chamber is a fixed oil mass, p_i = p0 + beta ln(V_i(x0)/V_i(x));
    # at rest the pressure force balances the load: p1 A1 - p2 A2 = F_L
    load, x0 = 8000.0, 0.25
    A1, A2, beta = 2e-3, 1e-3, 1.5e9

    def pressures(x):
        v10, v20 = 1e-4 + A1 * x0, 1e-4 + A2 * (0.5 - x0)
        v1, v2 = 1e-4 + A1 * x, 1e-4 + A2 * (0.5 - x)
        return 50e5 + beta * math.log(v10 / v1), 50e5 + beta * math.log(v20 / v2)

    x_eq = brentq(lambda x: pressures(x)[0] * A1 - pressures(x)[1] * A2 - load, 0.2, 0.3,
                  xtol=1e-15)
    p1_eq, p2_eq = pressures(x_eq)
    res = Simulator(_closed_cylinder_with_mass(load), solver="radau", rtol=1e-9, atol=1e-9,
                    dt=0.01, max_step=1.0).run(0.3)
    assert x_eq < x0  # the load pushes the piston in
    assert res["pos.y"][-1] == pytest.approx(x_eq, abs=1e-9)
    assert res["cyl.p_1"][-1] == pytest.approx(p1_eq, rel=1e-6)
    assert res["cyl.p_2"][-1] == pytest.approx(p2_eq, rel=1e-6)
    assert res["cyl.force"][-1] == pytest.approx(load, rel=1e-6)
    assert abs(res["vel.y"][-1]) < 1e-7


@pytest.mark.parametrize("kw, match", [
    (dict(area_1_m2=0.0), "area_1_m2 must be finite and > 0"),
    (dict(dead_volume_2_m3=-1e-5), "dead_volume_2_m3 must be finite and >= 0"),
    (dict(efficiency=0.0), r"efficiency must lie in \(0, 1\]"),
    (dict(friction=5.0), "friction must be a CylinderFriction"),
    (dict(p1_0_pa=0.0), "initial pressure p1_0_pa"),
])
def test_bad_cylinder_parameters(kw, match):
    with pytest.raises(ParameterError, match=match):
        DoubleActingCylinder("c", **{**GEOM, **kw})
    with pytest.raises(ParameterError, match="static_n"):
        CylinderFriction(coulomb_n=100.0, static_n=50.0)


def test_array_outputs_are_floats():
    h = BlockHarness(DoubleActingCylinder("c", **GEOM))
    assert all(isinstance(h.output(n), float) for n in ("force", "p_1", "p_2", "volume_1"))
    assert isinstance(h.derivatives(), np.ndarray)
