"""LIM 2-DOF hydraulic manipulator, manoeuvre M1 (issue 5): equilibrium, monolithic, co-simulation.

Model and sources: ``examples/lim_manipulator.py`` (fgonzalezLIM/cosim-benchmarks,
anchors-domain.md section 2.2).  Reference s1(t): ``hydraulicManipulator_ref.csv``
(index-3 augmented Lagrangian, trapezoidal rule, h = 0.05 ms), 8 decimals in the notes
(1e-8 m resolution, well below the 2e-6 m criterion).

Measured (Radau, rtol = atol = 1e-10): s1 - reference = -1.6e-9, 8.7e-7, 1.19e-6, 1.64e-6,
4.8e-7, -9.9e-7, -1.44e-6 m at t = 2, 2.5, 4, 6, 6.01, 8, 10 s (max 1.64e-6 m).  The
benchmark's own equations in minimal coordinates give the same numbers (our multibody model
agrees with them to ~1e-13 m), so the remaining difference is the reference's step-size
error, as the notes say.

Co-simulation (explicit Jacobi, f-s coupling, H = 1 ms, hydraulics RK4 0.2 ms, mechanics
RK4 1 ms), error in s1 at t = 6 s against the reference: zero-order hold 2.09e-5 m
(published explicit Jacobi ZOH with forward Euler subsystems: 5.67e-5 m); linear
extrapolation 1.65e-6 m (issue target <= 5.7e-6 m), of which 7e-9 m is coupling error
(against our monolithic solution) and the rest the reference's own error.
"""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import examples.lim_manipulator as lm
from cosim import Simulator

TIMES = sorted(lm.REF_S1)
# reference (s1', p1, p2, f_h) outside the t = 0-2 s rest phase (anchors 2.2)
REF_OTHER = {2.5: (0.017587521, 3051837.0, 4648163.1, 8617.37),
             4.0: (0.023922551, 3061370.4, 4638630.1, 7859.93),
             6.0: (0.033015556, 3075063.8, 4624937.4, 6772.62),
             8.0: (-0.019658323, 3435953.1, 4264046.1, 7348.44),
             10.0: (-0.028566162, 3422258.8, 4277740.9, 8417.25)}


def _at(res, key, t):
    time = np.asarray(res.time)
    i = int(np.argmin(np.abs(time - t)))
    assert abs(time[i] - t) < 1e-9, f"t = {t} not on the output grid"
    return float(res[key][i])


def test_initial_equilibrium_of_the_assembled_diagram():
    d = lm.build()
    ctx = d.create_context()
    sim = Simulator(d, ctx, solver="radau", record=False)
    sim.initialize()
    boom, cyl = d.find("boom"), d.find("cyl")
    assert boom.assembly["position_residual"] == 0.0 and boom.assembly["dof"] == 2
    plan = sim.plan
    sig = ctx.signals
    s = sig[plan.output_slot[d.find("actuator").out_ports[0]]]
    f_h = sig[plan.output_slot[cyl.force]]
    assert s == pytest.approx(0.5, abs=1e-15)
    assert d.find("kappa").at(0.0) == lm.KAPPA0
    # the published pressures are rounded to 0.1 Pa: (p2 - p1) A = 8828.9994 N
    assert f_h == pytest.approx(lm.F_H0, abs=1e-3)

    dx = sim.program.rhs(0.0, ctx.xc.copy())
    a, b, _ = plan.cstate_index[boom.x]
    nq = boom.mech.nq
    qdot, vdot = dx[a:a + nq], dx[a + nq:b]
    p_rates = [float(dx[plan.cstate_index[h][0]]) for h in (cyl.x_p2, cyl.x_p1)]  # LIM p1, p2
    print(f"\nequilibrium residuals: max|q'| = {np.max(np.abs(qdot)):.2e}, "
          f"max|v'| = {np.max(np.abs(vdot)):.2e} (m/s^2, rad/s^2), "
          f"p1' = {p_rates[0]:.1f} Pa/s, p2' = {p_rates[1]:.1f} Pa/s, "
          f"f_h - 8829 = {f_h - lm.F_H0:.2e} N")
    assert np.all(qdot == 0.0)
    # 6e-4 N of force error from the 0.1 Pa rounding over an effective mass of ~2000 kg
    assert np.max(np.abs(vdot)) < 2e-6
    # kappa0 rounded to 8 decimals: dp'/dkappa ~ 6.4e10 Pa/s, times 5e-9 ~ 320 Pa/s
    assert max(abs(r) for r in p_rates) < 400.0


@pytest.fixture(scope="module")
def m1():
    return lm.simulate_m1(rtol=1e-10, atol=1e-10)


def test_m1_monolithic_matches_the_reference_within_2e_6(m1):
    errors = {t: _at(m1, "actuator.s", t) - lm.REF_S1[t] for t in TIMES}
    print("\nM1 monolithic, s1 - reference [m]: "
          + ", ".join(f"t={t:g}: {e:.2e}" for t, e in errors.items())
          + f"; max {max(abs(e) for e in errors.values()):.2e}")
    assert max(abs(e) for e in errors.values()) < 2e-6
    # the other published signals, away from the pressure spike at 6.01 s (where the
    # reference's step-size error is ~150 Pa)
    for t, (sd, p1, p2, fh) in REF_OTHER.items():
        assert _at(m1, "actuator.sd", t) == pytest.approx(sd, abs=1e-6)
        assert _at(m1, "cyl.p_2", t) == pytest.approx(p1, abs=1.0)
        assert _at(m1, "cyl.p_1", t) == pytest.approx(p2, abs=1.0)
        assert _at(m1, "cyl.force", t) == pytest.approx(fh, abs=0.1)


def test_multibody_model_equals_the_benchmark_minimal_equations(m1):
    y = np.array([lm.TH1_0, lm.TH2_0, 0.0, 0.0, lm.P1_0, lm.P2_0])
    s_min = {}
    corners = [0.0, *lm.M1_T[1:], 10.0]
    for a, b in zip(corners[:-1], corners[1:]):
        sol = solve_ivp(lm.minimal_rhs, (a, b), y, method="Radau", rtol=1e-11, atol=1e-11,
                        dense_output=True, max_step=0.01)
        assert sol.success
        for t in TIMES:
            if a <= t <= b:
                s_min[t] = lm.actuator_length(sol.sol(t)[0])
        y = sol.y[:, -1]
    diff = max(abs(_at(m1, "actuator.s", t) - s_min[t]) for t in TIMES)
    print(f"\nmultibody (absolute coordinates) vs minimal coordinates: max |ds1| = {diff:.1e} m")
    assert diff < 1e-8


@pytest.mark.parametrize("order, measured, bound", [(0, 2.09e-5, 5.67e-5), (1, 1.65e-6, 5.7e-6)])
def test_m1_cosimulation_jacobi_force_displacement_h_1ms(m1, order, measured, bound):
    res = lm.cosim_m1(6.0, step_s=1e-3, extrapolation=order)
    err_ref = _at(res, "mech.s", 6.0) - lm.REF_S1[6.0]
    err_mono = _at(res, "mech.s", 6.0) - _at(m1, "actuator.s", 6.0)
    print(f"\nco-simulation, Jacobi, f-s, H = 1 ms, extrapolation order {order}: "
          f"s1(6) - reference = {err_ref:.3e} m, s1(6) - monolithic = {err_mono:.3e} m "
          f"(published explicit Jacobi ZOH 5.67e-5 m, issue target 5.7e-6 m)")
    assert abs(err_ref) < bound
    assert math.isclose(abs(err_ref), measured, rel_tol=0.1)
