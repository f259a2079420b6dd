"""Kinematic car (blocks/controllers/flatness/kincar.py) against python-control's
``examples/kincar-flatsys.py`` (0.10.2) and closed forms.

1. the quintic lane change: our PolynomialPlan, mapped through ``reverse``, against the
   closed form (1e-9) and the example's printed table (6 decimals, 1e-6);
2. the same problem through python-control (``plan_flatsys`` with ``PolyFamily(6)``,
   1e-9), and the example's cost-weighted and input-constrained variants, solved once
   through ``plan_flatsys`` and once with the example's own functions (code to code,
   strength B; agreement to the optimizer's tolerance, constraints met);
3. closed loop: plant off the plan, FlatTracker; the error equals the solution of
   ``e'' + kv e' + kp e = 0`` to RK4 accuracy; ``check_plan`` on a plan that stops.
"""

import math

import numpy as np
import pytest
from scipy.linalg import expm

from blocks.controllers.flatness import (
    FlatTracker,
    PolynomialPlan,
    SingularityError,
    check_plan,
    plan_flatsys,
)
from blocks.controllers.flatness.kincar import (
    LANE_CHANGE,
    KinematicCar,
    KinematicCarFlat,
    KinematicCarLaw,
    lane_change_analytic,
)
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError, StepError
from cosim.testing import BlockHarness

LC = LANE_CHANGE
# python-control 0.10.2, kincar-flatsys.py approach 1 (traj1.eval), 6 decimals
TABLE = {1.0: (-1.585938, 0.105080, 10.055464, 0.041469),
         2.0: (0.0, 0.185348, 10.174263, 0.0),
         3.0: (1.585938, 0.105080, 10.055464, -0.041469)}


def quintic(b=3.0):
    car = KinematicCarFlat(b)
    return car, PolynomialPlan(0.0, LC["T"], car.forward(LC["x0"], LC["u0"]),
                               car.forward(LC["xf"], LC["uf"]))


# ---------------------------------------------------------------------------- the maps
def test_forward_reverse_round_trip_and_rhs():
    car = KinematicCarFlat(2.5)
    rng = np.random.default_rng(1)
    for _ in range(20):
        x = rng.uniform([-10, -10, -3.0], [10, 10, 3.0])
        u = rng.uniform([0.5, -1.2], [20, 1.2])
        ex, eu = car.check_inverse(x, u)
        assert ex < 1e-12 and eu < 1e-12
        # the flag's first derivatives are the model's rates
        f = car.forward(x, u)
        np.testing.assert_allclose([f[0][1], f[1][1]], car.rhs(x, u)[:2], atol=1e-12)
        # theta_dot = (xd ydd - yd xdd) / v^2 matches the model
        thd = (f[0][1] * f[1][2] - f[1][1] * f[0][2]) / u[0] ** 2
        assert thd == pytest.approx(car.rhs(x, u)[2], abs=1e-12)


def test_singularity_is_the_speed():
    car = KinematicCarFlat()
    assert car.singularity([[0, 3, 0], [0, 4, 0]]) == pytest.approx(5.0)
    assert car.singularity([[1, 0, 2], [2, 0, 1]]) == 0.0


@pytest.mark.parametrize("b", [0.0, -1.0, float("nan"), "x"])
def test_bad_wheelbase(b):
    with pytest.raises(ParameterError, match="wheelbase"):
        KinematicCarFlat(b)
    with pytest.raises(ParameterError, match="wheelbase"):
        KinematicCar("car", b=b)


# ------------------------------------------------------------------ (a) the quintic plan
def test_quintic_plan_is_the_closed_form():
    _, plan = quintic()
    tau = np.linspace(0, 1, 9)
    # x = 10 t, y = -2 + 4 (10 tau^3 - 15 tau^4 + 6 tau^5)
    np.testing.assert_allclose(plan.coefficients[0], [0, 10, 0, 0, 0, 0], atol=1e-12)
    np.testing.assert_allclose(plan.coefficients[1],
                               [-2, 0, 0, 40 / 4 ** 3, -60 / 4 ** 4, 24 / 4 ** 5], atol=1e-12)
    a = lane_change_analytic(4 * tau)
    F = plan.evaluate(4 * tau, 2)
    np.testing.assert_allclose(F[0, 0], a["x"], atol=1e-9)
    np.testing.assert_allclose(F[1, 0], a["y"], atol=1e-9)
    np.testing.assert_allclose(F[1, 1], a["ydot"], atol=1e-9)
    np.testing.assert_allclose(F[1, 2], a["yddot"], atol=1e-9)


@pytest.mark.parametrize("t", [0.0, 0.5, 1.0, 2.0, 3.0, 3.7, 4.0])
def test_quintic_reverse_map_closed_form(t):
    car, plan = quintic()
    x, u = car.reverse(plan.flag(t, 2))
    a = lane_change_analytic(t)
    np.testing.assert_allclose(x, [a["x"], a["y"], a["theta"]], atol=1e-9)
    np.testing.assert_allclose(u, [a["v"], a["delta"]], atol=1e-9)


@pytest.mark.parametrize("t", sorted(TABLE))
def test_quintic_against_python_control_table(t):
    car, plan = quintic()
    x, u = car.reverse(plan.flag(t, 2))
    a = lane_change_analytic(t)
    got = (x[1], x[2], u[0], u[1])
    np.testing.assert_allclose(got, TABLE[t], atol=1e-6)
    np.testing.assert_allclose((a["y"], a["theta"], a["v"], a["delta"]), TABLE[t], atol=1e-6)


def test_quintic_meets_boundary_states_and_inputs():
    car, plan = quintic()
    for t, xs, us in ((0.0, LC["x0"], LC["u0"]), (4.0, LC["xf"], LC["uf"])):
        x, u = car.reverse(plan.flag(t, 2))
        np.testing.assert_allclose(x, xs, atol=1e-12)
        np.testing.assert_allclose(u, us, atol=1e-12)
    report = check_plan(car, plan)
    assert report.min_singularity[0] == pytest.approx(10.0)


# --------------------------------------------------------------- (b) through python-control
fs = pytest.importorskip("control.flatsys")
opt = pytest.importorskip("control.optimal")


def pc_vehicle():
    """The example's own functions (python-control examples/kincar-flatsys.py)."""

    def forward(x, u, params=None):
        b = (params or {}).get("wheelbase", 3.0)
        zflag = [np.zeros(3), np.zeros(3)]
        zflag[0][0], zflag[1][0] = x[0], x[1]
        zflag[0][1], zflag[1][1] = u[0] * np.cos(x[2]), u[0] * np.sin(x[2])
        thdot = (u[0] / b) * np.tan(u[1])
        zflag[0][2] = -u[0] * thdot * np.sin(x[2])
        zflag[1][2] = u[0] * thdot * np.cos(x[2])
        return zflag

    def reverse(zflag, params=None):
        b = (params or {}).get("wheelbase", 3.0)
        x, u = np.zeros(3), np.zeros(2)
        x[0], x[1] = zflag[0][0], zflag[1][0]
        x[2] = np.arctan2(zflag[1][1], zflag[0][1])
        u[0] = zflag[0][1] * np.cos(x[2]) + zflag[1][1] * np.sin(x[2])
        thdot_v = zflag[1][2] * np.cos(x[2]) - zflag[0][2] * np.sin(x[2])
        u[1] = np.arctan2(thdot_v, u[0] ** 2 / b)
        return x, u

    def update(t, x, u, params):
        b = (params or {}).get("wheelbase", 3.0)
        return np.array([np.cos(x[2]) * u[0], np.sin(x[2]) * u[0], (u[0] / b) * np.tan(u[1])])

    return fs.FlatSystem(forward, reverse, update, inputs=("v", "delta"), outputs=("x", "y"),
                         states=("x", "y", "theta"))


def test_plan_flatsys_poly6_matches_polynomial_plan():
    car, plan = quintic()
    fp = plan_flatsys(KinematicCarFlat(b=3), 4, LC["x0"], LC["u0"], LC["xf"], LC["uf"],
                      basis=fs.PolyFamily(6))
    T = np.linspace(0, 4, 81)
    assert np.max(np.abs(fp.evaluate(T, 2) - plan.evaluate(T, 2))) < 1e-9
    xd, ud = fp.trajectory.eval(T)
    ours = [car.reverse(plan.flag(t, 2)) for t in T]
    assert np.max(np.abs(xd - np.array([o[0] for o in ours]).T)) < 1e-9
    assert np.max(np.abs(ud - np.array([o[1] for o in ours]).T)) < 1e-9
    # and the example's own system gives the same trajectory
    ref = fs.point_to_point(pc_vehicle(), 4, LC["x0"], LC["u0"], LC["xf"], LC["uf"],
                            basis=fs.PolyFamily(6))
    xr, ur = ref.eval(T)
    assert np.max(np.abs(xr - xd)) < 1e-9 and np.max(np.abs(ur - ud)) < 1e-9


TIMEPTS = np.linspace(0, 4, 10)
TIGHT = {"minimize_method": "SLSQP", "minimize_options": {"ftol": 1e-12, "maxiter": 1000}}


def _variant(sys, constrained):
    cost = opt.quadratic_cost(sys, np.diag([0, 0.1, 0]), np.diag([0.1, 1]), x0=LC["xf"],
                              u0=LC["uf"])
    kw = dict(cost=cost, **TIGHT)
    if constrained:
        kw["constraints"] = [opt.input_range_constraint(sys, [8, -0.1], [12, 0.1])]
        kw["basis"] = fs.BSplineFamily([0, 2, 4], 6)
    else:
        kw["basis"] = fs.PolyFamily(8)
    return kw


@pytest.mark.parametrize("constrained", [False, True], ids=["cost", "cost+constraints"])
def test_cost_and_constraint_variants_code_to_code(constrained):
    car = KinematicCarFlat(b=3)
    ours = plan_flatsys(car, 4, LC["x0"], LC["u0"], LC["xf"], LC["uf"], timepts=TIMEPTS,
                        **_variant(car.to_flatsys(), constrained))
    vf = pc_vehicle()
    ref = fs.point_to_point(vf, TIMEPTS, LC["x0"], LC["u0"], LC["xf"], LC["uf"],
                            **_variant(vf, constrained))
    T = np.linspace(0, 4, 201)
    xd, ud = ours.trajectory.eval(T)
    xr, ur = ref.eval(T)
    # two runs of the same optimization (different function objects): the optimizer's
    # tolerance, measured 3e-6 (cost) and 8e-7 (constrained)
    assert np.max(np.abs(xd - xr)) < 2e-5 and np.max(np.abs(ud - ur)) < 2e-5
    # boundary conditions exactly (they are linear equality constraints)
    for t, xs, us in ((0.0, LC["x0"], LC["u0"]), (4.0, LC["xf"], LC["uf"])):
        x, u = car.reverse(ours.flag(t, 2))
        np.testing.assert_allclose(x, xs, atol=1e-9)
        np.testing.assert_allclose(u, us, atol=1e-9)
    # the penalty on the lateral error is lower than the quintic's
    y_q = lane_change_analytic(T)["y"]
    assert np.trapezoid((xd[1] - 2) ** 2, T) < np.trapezoid((y_q - 2) ** 2, T)
    if constrained:
        # input bounds hold at the collocation points (where python-control imposes them)
        _, uc = ours.trajectory.eval(TIMEPTS)
        assert np.all(uc[0] >= 8 - 1e-8) and np.all(uc[0] <= 12 + 1e-8)
        assert np.all(np.abs(uc[1]) <= 0.1 + 1e-8)
        assert np.max(np.abs(uc[1])) == pytest.approx(0.1, abs=1e-8)   # active
        # between them only by the interpolation error (measured 1.5e-5 rad)
        assert np.max(np.abs(ud[1])) < 0.1 + 1e-4
        report = check_plan(car, ours, bounds={"v": (8, 12), "delta": (-0.1001, 0.1001)})
        assert report.min_singularity[0] > 8
    else:
        # the quicker lane change needs more steering than the quintic
        assert np.max(np.abs(ud[1])) > 0.0415


# ----------------------------------------------------------------------- (c) closed loop
def closed_loop(plan, x0, t_end, dt, b=3.0, **gains):
    d = DiagramBuilder("kincar_loop")
    car = d.add(KinematicCar("car", x0=x0, b=b))
    tr = d.add(FlatTracker("tracker", KinematicCarLaw(b), plan, x0=x0, **gains))
    d.connect(car.x, tr.x)
    d.connect(tr.u, car.u)
    res = Simulator(d.build(), solver="rk4", dt=dt,
                    record=["tracker.error", "car.x", "tracker.u"]).run(t_end)
    return res, tr


def analytic_error(tracker, plan, x0, t):
    """e(t) = first row of expm(A t) e(0), A the companion matrix of the error dynamics."""
    zd = plan.flag(plan.t0, 2)
    zeta0 = tracker.law.extension_initial(np.asarray(x0), zd)[0]
    zm = tracker.law.measured_flag(np.asarray(x0), [zeta0])
    out = []
    for i in range(2):
        kp, kv = tracker.k[i]
        A = np.array([[0.0, 1.0], [-kp, -kv]])
        e0 = np.array([zd[i][0] - zm[i, 0], zd[i][1] - zm[i, 1]])
        out.append([(expm(A * ti) @ e0)[0] for ti in t])
    return np.array(out).T


@pytest.mark.parametrize("gains", [dict(kp=4.0, kv=4.0), dict(poles=[[-1.5, -3.0], [-2, -2.5]])],
                         ids=["kp_kv", "poles"])
def test_closed_loop_error_is_the_linear_solution(gains):
    _, plan = quintic()
    x0 = np.array([0.3, -1.5, 0.1])   # 0.3 m behind, 0.5 m off laterally, 0.1 rad heading
    res, tr = closed_loop(plan, x0, 6.0, 5e-3, **gains)
    e = np.asarray(res["tracker.error"])
    ea = analytic_error(tr, plan, x0, res.time)
    assert np.max(np.abs(ea[0])) > 0.29 and abs(ea[0, 1]) == pytest.approx(0.5)
    assert np.max(np.abs(e - ea)) < 1e-7            # measured 1.6e-10 (kp_kv)
    # after the plan (t > 4 s: straight on at 10 m/s) the car is back on it
    X = np.asarray(res["car.x"])
    assert abs(X[-1, 1] - 2.0) < 0.05 and abs(X[-1, 2]) < 0.05


def test_closed_loop_converges_at_fourth_order():
    _, plan = quintic()
    x0 = np.array([0.0, -1.5, 0.1])
    errs = []
    for dt in (2e-2, 1e-2):
        res, tr = closed_loop(plan, x0, 2.0, dt, kp=4.0, kv=4.0)
        errs.append(np.max(np.abs(np.asarray(res["tracker.error"])
                                  - analytic_error(tr, plan, x0, res.time))))
    assert 10 < errs[0] / errs[1] < 25   # RK4: 2^4 = 16


def test_law_is_singular_at_standstill():
    law = KinematicCarLaw(3.0)
    with pytest.raises(StepError, match="singular at standstill"):
        law.linearizing_input(np.zeros(3), np.array([0.0]), np.array([1.0, 0.0]))
    # in a run: a tracker started with zero speed stops at once with the message
    _, plan = quintic()
    d = DiagramBuilder("stand")
    car = d.add(KinematicCar("car", x0=LC["x0"]))
    tr = d.add(FlatTracker("tracker", law, plan, kp=1.0, kv=2.0, extension_initial=[0.0]))
    d.connect(car.x, tr.x)
    d.connect(tr.u, car.u)
    with pytest.raises(StepError, match="singular at standstill"):
        Simulator(d.build(), solver="rk4", dt=1e-2).run(0.1)


def test_law_exact_linearization_pointwise():
    """(xdd, ydd) of the plant with the law's input and zeta_dot equal v."""
    law = KinematicCarLaw(2.0)
    rng = np.random.default_rng(3)
    for _ in range(10):
        x = rng.uniform([-5, -5, -3], [5, 5, 3])
        zeta = rng.uniform(1.0, 15.0, 1)
        v = rng.uniform(-2, 2, 2)
        u, dz = law.linearizing_input(x, zeta, v)
        th_dot = u[0] / 2.0 * math.tan(u[1])
        xdd = dz[0] * math.cos(x[2]) - zeta[0] * math.sin(x[2]) * th_dot
        ydd = dz[0] * math.sin(x[2]) + zeta[0] * math.cos(x[2]) * th_dot
        np.testing.assert_allclose([xdd, ydd], v, atol=1e-12)


def stop_plan():
    """x: 0 -> 56/3 m on [0, 4] with speed 10 m/s at both ends; xdot(2) = 0 (a stop)."""
    return PolynomialPlan(0.0, 4.0, [[0.0, 10.0, 0.0], [0.0, 0.0, 0.0]],
                          [[56.0 / 3.0, 10.0, 0.0], [0.0, 0.0, 0.0]])


def test_check_plan_finds_a_stop_midway():
    car = KinematicCarFlat()
    plan = stop_plan()
    assert abs(plan.flag(2.0, 1)[0][1]) < 1e-12
    with pytest.raises(SingularityError) as info:
        check_plan(car, plan, singular_tol=0.05)
    assert 1.9 < info.value.time_s < 2.0 and abs(info.value.value) <= 0.05
    # a plan that keeps moving passes with the same minimum speed
    check_plan(car, quintic()[1], singular_tol=0.05)


def test_plant_block_rates():
    h = BlockHarness(KinematicCar("car", x0=(1.0, 2.0, 0.3), b=2.0))
    h.set_inputs(u=np.array([5.0, 0.2]))
    np.testing.assert_allclose(h.output("x"), [1.0, 2.0, 0.3])
    np.testing.assert_allclose(h.derivatives(), [5 * math.cos(0.3), 5 * math.sin(0.3),
                                                 2.5 * math.tan(0.2)], atol=1e-14)
