"""Flexible-joint robot (blocks/controllers/flatness/flexible_joint.py; Agrawal's slides,
seed §2) against closed forms.

Parameters are ours (the seed gives none): DEFAULT_PARAMS, I = 1, J = 0.5 kg m^2, M = 1 kg,
g = 9.81 m/s^2, L = 0.5 m, k = 100 N m/rad, and one other set.

1. the reverse map for q1 = t against q2 = t + (MgL/k) sin t,
   u = MgL sin t - (J MgL/k) sin t (by hand: q1'' = 0, q2'' = -(MgL/k) sin t,
   u = J q2'' - k(q1 - q2)), to 1e-12;
2. open loop: the plant driven by that u from the consistent state follows q1 = t;
3. closed loop from a perturbed state: the error equals the solution of the fourth-order
   error equation with poles -4, -5, -6, -7, to RK4 accuracy.
"""

import numpy as np
import pytest
from scipy.linalg import expm

from blocks.controllers.flatness import FlatTracker, PolynomialPlan, check_plan
from blocks.controllers.flatness.flexible_joint import (
    DEFAULT_PARAMS,
    FlexibleJoint,
    FlexibleJointFlat,
    FlexibleJointLaw,
    ramp_reference,
)
from blocks.sources import ClosedFormSource
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

OTHER = {"I": 0.2, "J": 0.05, "M": 2.0, "g": 9.81, "L": 0.3, "k": 40.0}
POLES = [-4.0, -5.0, -6.0, -7.0]


@pytest.mark.parametrize("params", [{}, OTHER], ids=["ours", "other"])
@pytest.mark.parametrize("t", [0.0, 0.4, 1.3, 2.0, 3.7, 5.5])
def test_reverse_map_of_the_ramp(params, t):
    fj = FlexibleJointFlat(**params)
    P = {**DEFAULT_PARAMS, **params}
    mgl = P["M"] * P["g"] * P["L"]
    x, u = fj.reverse([[t, 1.0, 0.0, 0.0, 0.0]])
    q2 = t + mgl / P["k"] * np.sin(t)
    u_hand = mgl * np.sin(t) - P["J"] * mgl / P["k"] * np.sin(t)
    np.testing.assert_allclose(x, [t, 1.0, q2, 1.0 + mgl / P["k"] * np.cos(t)],
                               rtol=0, atol=1e-12)
    assert u[0] == pytest.approx(u_hand, abs=1e-12)
    r = ramp_reference(t, **params)
    assert r["u"] == pytest.approx(u_hand, abs=1e-15) and r["q2"] == pytest.approx(q2)


def test_forward_reverse_round_trip():
    rng = np.random.default_rng(7)
    for params in ({}, OTHER):
        fj = FlexibleJointFlat(**params)
        for _ in range(20):
            x = rng.uniform(-2, 2, 4)
            u = rng.uniform(-20, 20, 1)
            ex, eu = fj.check_inverse(x, u)
            assert ex < 1e-12 and eu < 1e-9 * max(1.0, abs(u[0]))


def test_forward_flag_is_the_model():
    """q1''' and q1'''' of the flag against differences of the model's solution."""
    fj = FlexibleJointFlat()
    x, u = np.array([0.3, -0.2, 0.25, 0.4]), np.array([1.5])
    f = fj.forward(x, u)[0]
    xd = fj.rhs(x, u)
    assert f[1] == xd[0] and f[2] == pytest.approx(xd[1], abs=1e-14)
    # q1''' = d/dt q1'' along the flow
    h = 1e-6
    d3 = (fj.q1_ddot(x + h * xd) - fj.q1_ddot(x - h * xd)) / (2 * h)
    assert f[3] == pytest.approx(d3, rel=1e-7)
    d4 = (fj.output_derivatives(x + h * xd)[3] - fj.output_derivatives(x - h * xd)[3]) / (2 * h)
    assert f[4] == pytest.approx(d4, rel=1e-6)
    assert fj.gain == pytest.approx(100.0 / 0.5)


@pytest.mark.parametrize("bad", [{"k": 0.0}, {"I": -1.0}, {"J": float("nan")}, {"g": -9.81},
                                 {"mass": 1.0}])
def test_bad_parameters(bad):
    with pytest.raises(ParameterError):
        FlexibleJointFlat(**bad)
    with pytest.raises(ParameterError):
        FlexibleJoint("joint", **bad)


def ramp_plan(T=5.0):
    """q1 = t as a degree-7 PolynomialPlan (unique: t meets the 8 boundary conditions)."""
    return PolynomialPlan(0.0, T, [[0.0, 1.0, 0.0, 0.0]], [[T, 1.0, 0.0, 0.0]])


def test_ramp_plan_is_the_line_and_passes_check_plan():
    plan = ramp_plan()
    np.testing.assert_allclose(plan.coefficients[0], [0, 1, 0, 0, 0, 0, 0, 0], atol=1e-13)
    report = check_plan(FlexibleJointFlat(), plan, n=201)
    r = ramp_reference(report.time)
    np.testing.assert_allclose(report.x[2], r["q2"], atol=1e-12)
    np.testing.assert_allclose(report.u[0], r["u"], atol=1e-11)
    assert report.singularity is None


def run_open_loop(dt, t_end=5.0, params=None):
    params = params or {}
    r0 = ramp_reference(0.0, **params)
    x0 = [0.0, 1.0, float(r0["q2"]), float(r0["q2_dot"])]
    d = DiagramBuilder("fj_open")
    src = d.add(ClosedFormSource("torque", lambda t: np.array([ramp_reference(t, **params)["u"]]),
                                 shape=(1,)))
    joint = d.add(FlexibleJoint("joint", x0=x0, **params))
    d.connect(src.y, joint.u)
    return Simulator(d.build(), solver="rk4", dt=dt, record=["joint.x", "joint.q1"]).run(t_end)


@pytest.mark.parametrize("params", [{}, OTHER], ids=["ours", "other"])
def test_open_loop_follows_the_ramp(params):
    res = run_open_loop(2e-3, params=params)
    t = res.time
    X = np.asarray(res["joint.x"])
    r = ramp_reference(t, **params)
    assert np.max(np.abs(X[:, 0] - t)) < 1e-8        # measured 1.1e-12 (ours)
    assert np.max(np.abs(X[:, 2] - r["q2"])) < 1e-8
    assert np.max(np.abs(X[:, 3] - r["q2_dot"])) < 1e-7
    np.testing.assert_allclose(np.asarray(res["joint.q1"]), X[:, 0])


def run_closed_loop(dt, x0, t_end=5.0, poles=POLES):
    plan = ramp_plan()
    d = DiagramBuilder("fj_loop")
    joint = d.add(FlexibleJoint("joint", x0=x0))
    tr = d.add(FlatTracker("tracker", FlexibleJointLaw(), plan, poles=[poles]))
    d.connect(joint.x, tr.x)
    d.connect(tr.u, joint.u)
    res = Simulator(d.build(), solver="rk4", dt=dt,
                    record=["joint.x", "tracker.error", "tracker.u"]).run(t_end)
    return res, tr, plan


def analytic_error(tr, plan, x0, t):
    k = tr.k[0]
    A = np.zeros((4, 4))
    A[:3, 1:] = np.eye(3)
    A[3] = -k
    e0 = plan.flag_array(0.0, 3)[0] - FlexibleJointFlat().output_derivatives(x0)
    return np.array([(expm(A * ti) @ e0)[0] for ti in t])


def test_closed_loop_error_is_the_fourth_order_solution():
    x0 = np.array([0.2, 0.5, 0.1, 0.0])
    res, tr, plan = run_closed_loop(2e-3, x0)
    np.testing.assert_allclose(tr.k[0], [840.0, 638.0, 179.0, 22.0])   # (s+4)(s+5)(s+6)(s+7)
    e = np.asarray(res["tracker.error"])[:, 0]
    ea = analytic_error(tr, plan, x0, res.time)
    assert abs(ea[0]) == pytest.approx(0.2) and np.max(np.abs(ea)) > 0.2
    assert np.max(np.abs(e - ea)) < 1e-9             # measured 2.1e-10
    assert abs(e[-1]) < 1e-3
    # the torque the loop applies at the end is the ramp's feedforward
    u_end = np.asarray(res["tracker.u"])[-1, 0]
    assert u_end == pytest.approx(float(ramp_reference(res.time[-1])["u"]), abs=1e-3)


def test_closed_loop_converges_at_fourth_order():
    x0 = np.array([0.2, 0.5, 0.1, 0.0])
    errs = []
    for dt in (4e-3, 2e-3):
        res, tr, plan = run_closed_loop(dt, x0, t_end=2.0)
        e = np.asarray(res["tracker.error"])[:, 0]
        errs.append(np.max(np.abs(e - analytic_error(tr, plan, x0, res.time))))
    assert 10 < errs[0] / errs[1] < 25


def test_law_pointwise():
    """q1'''' of the plant with the law's torque equals v."""
    law = FlexibleJointLaw(**OTHER)
    fj = law.system
    rng = np.random.default_rng(11)
    for _ in range(10):
        x = rng.uniform(-1, 1, 4)
        v = rng.uniform(-50, 50, 1)
        u, dz = law.linearizing_input(x, np.zeros(0), v)
        assert dz.size == 0
        assert fj.forward(x, u)[0][4] == pytest.approx(v[0], abs=1e-9)
    np.testing.assert_allclose(law.measured_flag(x, None)[0], fj.output_derivatives(x))


def test_plant_block():
    h = BlockHarness(FlexibleJoint("joint", x0=(0.1, 0.2, 0.3, 0.4)))
    h.set_inputs(u=np.array([2.0]))
    np.testing.assert_allclose(h.output("x"), [0.1, 0.2, 0.3, 0.4])
    assert h.output("q1") == pytest.approx(0.1)
    np.testing.assert_allclose(h.derivatives(),
                               FlexibleJointFlat().rhs([0.1, 0.2, 0.3, 0.4], [2.0]))
