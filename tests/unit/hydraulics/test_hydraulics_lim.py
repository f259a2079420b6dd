"""LIM 2-DOF hydraulic manipulator benchmark: the initial static equilibrium from our blocks.

Reference: fgonzalezLIM/cosim-benchmarks, doc/hydraulicManipulator.tex and
doc/data/hydraulicManipulator_ref.csv (anchors-domain sec. 2.2): f_h = 8829 N,
p1 = 3170846.2 Pa, p2 = 4529153.8 Pa, kappa0 = 0.45434559.

Mapping onto the blocks: the LIM valve (a_i = A kappa, a_o = A (1 - kappa)) is a
fully underlapped SpoolValve43 (lap = -1, u = 2 kappa - 1) with LIM chamber 1 on
port A and chamber 2 on port B; LIM chamber 2 grows with the actuator length s,
so it is the cylinder's chamber 1 (x = l/2 + s - s0), and the cylinder force
p_1 A - p_2 A - c v is the LIM f_h = (p2 - p1) A - c s'.
"""

import math

import numpy as np
import pytest
from scipy.optimize import root

from blocks.hydraulics import LIM_OIL, CylinderFriction, DoubleActingCylinder, SpoolValve43
from cosim.testing import BlockHarness

A_P, L_CYL, C_VISC, CD, A_VALVE = 65e-4, 0.442, 1e5, 0.67, 5e-4
P_P, P_T = 7.6e6, 0.1e6


def lim_static_actuator_force():
    """f_h from the LIM mechanics at theta1 = pi/6 (anchors 2.2: f + J^T f_h = 0)."""
    L, m, m_p, m_h, g = 1.0, 200.0, 250.0, 100.0, 9.81
    th1 = math.pi / 6
    f1 = -math.cos(th1) * L * g * (m / 2 + m_p + m_h)
    s1 = L * math.sqrt(1 - math.sqrt(3) / 2 * math.cos(th1))
    j1 = math.sqrt(3) * L * L * math.sin(th1) / (4 * s1)
    return -f1 / j1, s1


def test_lim_initial_equilibrium_from_the_blocks():
    f_h, s1 = lim_static_actuator_force()
    assert f_h == pytest.approx(8829.0, rel=1e-6)
    assert s1 == pytest.approx(0.5, rel=1e-12)

    valve = BlockHarness(SpoolValve43("valve", area_max_m2=A_VALVE, cd=CD, fluid=LIM_OIL,
                                      lap=-1.0))
    cyl = BlockHarness(DoubleActingCylinder(
        "cyl", area_1_m2=A_P, area_2_m2=A_P, stroke_m=L_CYL, fluid=LIM_OIL,
        friction=CylinderFriction(viscous_n_s_m=C_VISC)))
    valve.set_inputs(p_P=P_P, p_T=P_T)
    cyl.set_inputs(x=L_CYL / 2, v=0.0)  # s = s0: both chambers at half stroke, at rest

    def residual(z):
        p1_lim, p2_lim, kappa = z[0] * 1e6, z[1] * 1e6, z[2]
        valve.set_inputs(p_A=p1_lim, p_B=p2_lim, u=2 * kappa - 1)
        cyl.set_inputs(q_1=valve.output("q_B"), q_2=valve.output("q_A"))
        cyl.set_state("p_1", p2_lim)
        cyl.set_state("p_2", p1_lim)
        dp1, dp2 = cyl.derivatives()
        return [dp1 / 1e8, dp2 / 1e8, (cyl.output("force") - f_h) / 1e3]

    sol = root(residual, [3.0, 4.5, 0.45], method="hybr", tol=1e-14)
    assert sol.success, sol.message
    p1_lim, p2_lim, kappa = sol.x[0] * 1e6, sol.x[1] * 1e6, sol.x[2]
    assert np.max(np.abs(residual(sol.x))) < 1e-9
    # published values (CSV to 0.1 Pa and 8 digits)
    assert p1_lim == pytest.approx(3170846.2, abs=0.1)
    assert p2_lim == pytest.approx(4529153.8, abs=0.1)
    assert kappa == pytest.approx(0.45434559, abs=1e-8)
    # bulk modulus at the equilibrium (anchors 2.1: 1.5525 GPa)
    assert LIM_OIL.beta(p1_lim) == pytest.approx(1.5525e9, rel=5e-5)


def test_lim_pressures_settle_to_the_equilibrium_with_the_piston_held():
    # piston held at mid-stroke, valve at kappa0: from any start the chamber pressures
    # relax to the valve's static balance, where the force is the published f_h
    from blocks.sources import Constant
    from cosim import DiagramBuilder, Simulator

    kappa0 = 0.45434559
    b = DiagramBuilder("lim_hydraulics")
    valve = b.add(SpoolValve43("valve", area_max_m2=A_VALVE, cd=CD, fluid=LIM_OIL, lap=-1.0))
    cyl = b.add(DoubleActingCylinder(
        "cyl", area_1_m2=A_P, area_2_m2=A_P, stroke_m=L_CYL, fluid=LIM_OIL,
        friction=CylinderFriction(viscous_n_s_m=C_VISC), p1_0_pa=6e6, p2_0_pa=2e6))
    for name, value, unit, port in (("pP", P_P, "Pa", valve.p_P), ("pT", P_T, "Pa", valve.p_T),
                                    ("u", 2 * kappa0 - 1, "1", valve.u),
                                    ("x", L_CYL / 2, "m", cyl.x), ("v", 0.0, "m/s", cyl.v)):
        b.connect(b.add(Constant(name, value, unit=unit)).y, port)
    b.connect(cyl.p_2, valve.p_A)  # LIM chamber 1
    b.connect(cyl.p_1, valve.p_B)  # LIM chamber 2
    b.connect(valve.q_A, cyl.q_2)
    b.connect(valve.q_B, cyl.q_1)
    res = Simulator(b.build(), solver="radau", rtol=1e-10, atol=1e-6, dt=0.01,
                    max_step=1.0).run(0.2)
    assert res["cyl.p_2"][-1] == pytest.approx(3170846.2, abs=0.5)
    assert res["cyl.p_1"][-1] == pytest.approx(4529153.8, abs=0.5)
    assert res["cyl.force"][-1] == pytest.approx(8829.0, abs=0.01)


def test_valve_controlled_cylinder_is_the_component_circuit_in_one_block():
    """The one-block LIM hydraulics give the component diagram's results: exactly with the
    Python functions, to rounding with the compiled kernel."""
    import examples.lim_manipulator as lm
    from cosim import Simulator
    rec = ["actuator.s", "cyl.p_1", "cyl.p_2", "cyl.force"]
    a = Simulator(lm.build(), solver="rk4", dt=2.5e-4, record=rec).run(2.2)
    compiled = lm.build(compact=True)
    python = lm.build(compact=True)
    python.blocks["cyl"]._kernel_args = None  # the Python functions
    b = Simulator(python, solver="rk4", dt=2.5e-4, record=rec).run(2.2)
    c = Simulator(compiled, solver="rk4", dt=2.5e-4, record=rec).run(2.2)
    for k in rec:
        assert np.array_equal(np.asarray(a[k]), np.asarray(b[k])), k
        np.testing.assert_allclose(np.asarray(c[k]), np.asarray(a[k]), rtol=1e-9, atol=1e-9)
    assert abs(a["cyl.p_2"][-1] - a["cyl.p_2"][0]) > 1e4  # the valve step moved the pressures


@pytest.mark.parametrize("beta", ["lim", "constant"])
def test_valve_controlled_cylinder_kernel_matches_the_python_functions(beta):
    from blocks.hydraulics import ConstantBulkModulus, Fluid, ValveControlledCylinder
    from blocks.hydraulics.fast import HAVE_NUMBA
    if not HAVE_NUMBA:
        pytest.skip("Numba not installed: the block uses the Python functions")
    fluid = LIM_OIL if beta == "lim" else Fluid(850.0, ConstantBulkModulus(1.5e9))
    rng = np.random.default_rng(5)
    for a_chamber, lap in ((1, 0.0), (2, -1.0), (1, 0.2)):
        blk = ValveControlledCylinder(
            "v", supply_pressure_pa=7.6e6, tank_pressure_pa=1e5, area_max_m2=5e-4,
            lap=lap, a_chamber=a_chamber, fluid=fluid, area_1_m2=65e-4, area_2_m2=40e-4,
            stroke_m=0.442, dead_volume_1_m3=1e-5, p1_0_pa=3e6, p2_0_pa=4e6,
            leakage_m3_s_pa=1e-12, compiled=True)
        from blocks.hydraulics.fast import chamber_rates
        for _ in range(200):
            u = rng.uniform(-1.2, 1.2)
            p1, p2 = rng.uniform(500.0, 8e6, size=2)   # incl. the cavitation band
            x, v = rng.uniform(0.0, 0.442), rng.uniform(-0.5, 0.5)
            r1, r2, ok = chamber_rates(u, p1, p2, x, v, blk._kernel_args)
            assert ok
            e1, e2 = blk.rates_py(u, p1, p2, x, v)
            assert (r1, r2) == pytest.approx((e1, e2), rel=1e-12, abs=1e-6)
        # what the kernel cannot do, the Python path reports
        r1, r2, ok = chamber_rates(0.0, 3e6, 4e6, 0.5, 0.0, blk._kernel_args)
        assert not ok  # x beyond the stroke without dead volume 2: V2 < 0


def test_valve_controlled_cylinder_rejects_bad_parameters():
    from blocks.hydraulics import ValveControlledCylinder
    from cosim.errors import ParameterError
    kw = dict(supply_pressure_pa=7.6e6, tank_pressure_pa=1e5, area_max_m2=5e-4,
              area_1_m2=1e-3, area_2_m2=1e-3, stroke_m=0.5, p1_0_pa=1e6, p2_0_pa=1e6)
    with pytest.raises(ParameterError, match="a_chamber must be 1"):
        ValveControlledCylinder("v", a_chamber=3, **kw)
    with pytest.raises(ParameterError, match="supply_pressure_pa > tank_pressure_pa"):
        ValveControlledCylinder("v", **{**kw, "tank_pressure_pa": 8e6})
    with pytest.raises(ParameterError, match="stroke"):
        ValveControlledCylinder("v", **{**kw, "stroke_m": -1.0})


def test_valve_controlled_cylinder_reports_an_empty_chamber_by_name():
    from blocks.hydraulics import ValveControlledCylinder
    from cosim.errors import StepError
    from cosim.testing import BlockHarness
    h = BlockHarness(ValveControlledCylinder(
        "act", supply_pressure_pa=7.6e6, tank_pressure_pa=1e5, area_max_m2=5e-4,
        area_1_m2=1e-3, area_2_m2=1e-3, stroke_m=0.5, p1_0_pa=1e6, p2_0_pa=1e6))
    h.set_inputs(u=0.1, x=0.6, v=0.0)
    with pytest.raises(StepError, match="ValveControlledCylinder 'act': chamber volume <= 0"):
        h.derivatives()
