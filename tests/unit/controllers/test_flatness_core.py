"""Flat-output plans, plan checks and the generic FlatTracker (blocks.controllers.flatness)."""

import math

import numpy as np
import pytest

from blocks.controllers.flatness import (
    ConstraintError,
    FlatSystem,
    FlatTracker,
    LinearizingLaw,
    PlanError,
    PolynomialPlan,
    SingularityError,
    SplinePlan,
    check_plan,
    error_gains,
)
from cosim import DiagramBuilder, Simulator
from cosim.block import Block
from cosim.errors import ParameterError, StepError

# -- plans ---------------------------------------------------------------------------------


def test_polynomial_plan_meets_boundary_derivatives_with_least_degree():
    start = [[1.0, 0.5, -0.2], [0.0, 0.0, 0.0]]
    end = [[3.0, 0.0, 0.1], [-2.0, 1.0, 0.0]]
    p = PolynomialPlan(2.0, 7.0, start, end)
    assert p.degree == 5
    np.testing.assert_allclose(p.flag_array(2.0, 2), start, atol=1e-12)
    np.testing.assert_allclose(p.flag_array(7.0, 2), end, atol=1e-12)
    # the coefficients are in powers of t - t0 and reproduce the values
    t = 4.3
    for i in range(2):
        assert np.polyval(p.coefficients[i][::-1], t - 2.0) == pytest.approx(
            p.flag_array(t, 0)[i, 0], abs=1e-12)


def test_rest_to_rest_quintic_is_the_textbook_polynomial():
    p = PolynomialPlan(0.0, 4.0, [[-2.0, 0, 0]], [[2.0, 0, 0]])
    for t in np.linspace(0, 4, 9):
        tau = t / 4
        assert p.flag_array(t, 0)[0, 0] == pytest.approx(
            -2 + 4 * (10 * tau**3 - 15 * tau**4 + 6 * tau**5), abs=1e-12)


def test_plan_derivatives_agree_with_finite_differences():
    p = PolynomialPlan(0.0, 3.0, [[0.0, 1.0, 0.0, 0.0]], [[2.0, 0.0, 0.0, 0.0]])
    h = 1e-5
    for t in (0.4, 1.7, 2.9):
        f = p.flag_array(t, 4)[0]
        for j in range(4):
            fd = (p.flag_array(t + h, j)[0, j] - p.flag_array(t - h, j)[0, j]) / (2 * h)
            assert f[j + 1] == pytest.approx(fd, rel=1e-6, abs=1e-7)


def test_plan_continues_with_its_boundary_taylor_polynomial():
    p = PolynomialPlan(0.0, 10.0, [[0.3, 0.02]], [[0.4, 0.015]])
    np.testing.assert_allclose(p.flag_array(12.0, 2), [[0.43, 0.015, 0.0]], atol=1e-12)
    np.testing.assert_allclose(p.flag_array(-1.0, 1), [[0.28, 0.02]], atol=1e-12)
    rest = PolynomialPlan(0.0, 1.0, [[0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0]])
    np.testing.assert_allclose(rest.flag_array(5.0, 3), [[1.0, 0, 0, 0]], atol=1e-12)


def test_spline_plan_passes_its_way_points_and_rests_at_the_ends():
    times, pts = [0.0, 1.0, 2.5, 4.0], [[0.0, 1.0, 3.0, 4.0], [0.0, -1.0, -1.0, 0.0]]
    s = SplinePlan(times, pts, k=3)
    for j, t in enumerate(times):
        np.testing.assert_allclose(s.flag_array(t, 0)[:, 0], np.array(pts)[:, j], atol=1e-12)
    np.testing.assert_allclose(s.flag_array(0.0, 2)[:, 1:], 0.0, atol=1e-12)
    np.testing.assert_allclose(s.flag_array(4.0, 2)[:, 1:], 0.0, atol=1e-12)
    # C^4 for a quintic spline: the fourth derivative is continuous at a way point
    a, b = s.flag_array(1.0 - 1e-9, 4)[0, 4], s.flag_array(1.0 + 1e-9, 4)[0, 4]
    assert a == pytest.approx(b, rel=1e-6)


@pytest.mark.parametrize("bad", [
    dict(t0=1.0, tf=1.0, start=[[0, 0]], end=[[1, 0]]),
    dict(t0=0.0, tf=1.0, start=[[0, 0]], end=[[1, 0, 0]]),
    dict(t0=0.0, tf=1.0, start=[[0, math.nan]], end=[[1, 0]]),
])
def test_bad_polynomial_plans_are_refused(bad):
    with pytest.raises(PlanError):
        PolynomialPlan(**bad)


def test_bad_spline_plans_are_refused():
    with pytest.raises(PlanError, match="increase"):
        SplinePlan([0.0, 2.0, 1.0], [[0, 1, 2]])
    with pytest.raises(PlanError, match="waypoints"):
        SplinePlan([0.0, 1.0, 2.0], [[0, 1]])
    with pytest.raises(PlanError, match="boundary derivatives"):
        SplinePlan([0.0, 1.0, 2.0], [[0, 1, 2]], start_derivatives=[[0.0, 0.0]], k=2)


# -- check_plan ----------------------------------------------------------------------------


class Unicycle(FlatSystem):
    """x' = v cos th, y' = v sin th, th' = w; flat outputs (x, y); singular at v = 0."""

    states, inputs, outputs, flaglen = ("x", "y", "th"), ("v", "w"), ("x", "y"), (3, 3)

    def rhs(self, x, u):
        return np.array([u[0] * math.cos(x[2]), u[0] * math.sin(x[2]), u[1]])

    def forward(self, x, u):
        c, s = math.cos(x[2]), math.sin(x[2])
        return [np.array([x[0], u[0] * c, -u[0] * s * u[1]]),
                np.array([x[1], u[0] * s, u[0] * c * u[1]])]

    def reverse(self, zflag):
        (x, dx, ddx), (y, dy, ddy) = zflag[0][:3], zflag[1][:3]
        v = math.hypot(dx, dy)
        return np.array([x, y, math.atan2(dy, dx)]), np.array([v, (dx * ddy - dy * ddx) / v**2])

    def singularity(self, zflag):
        return math.hypot(zflag[0][1], zflag[1][1])


def test_check_plan_maps_the_plan_and_checks_bounds():
    sys = Unicycle()
    p = PolynomialPlan(0, 4, [[0, 10, 0], [-2, 0, 0]], [[40, 10, 0], [2, 0, 0]])
    rep = check_plan(sys, p, n=401)
    assert rep.x.shape == (3, 401) and rep.u.shape == (2, 401)
    assert rep.min_singularity[0] == pytest.approx(10.0)
    with pytest.raises(ConstraintError, match=r"v = .* outside \[None, 10.1\]") as ei:
        check_plan(sys, p, bounds={"v": (None, 10.1)})
    assert ei.value.name == "v" and 1.0 < ei.value.time_s < 3.0
    with pytest.raises(PlanError, match="unknown signal"):
        check_plan(sys, p, bounds={"speed": (0, 1)})


def test_check_plan_reports_where_a_plan_reaches_the_singular_set():
    sys = Unicycle()
    # x turns back: the speed touches zero, theta is undefined there
    p = PolynomialPlan(0, 4, [[0, 1, 0], [0, 0, 0]], [[0, 1, 0], [0, 0, 0]])
    with pytest.raises(SingularityError) as ei:
        check_plan(sys, p, n=401, singular_tol=1e-9)
    # x' = 0 at t = 0.9613 and 3.0387 s (roots of the quintic's derivative)
    assert ei.value.time_s == pytest.approx(0.96134076, abs=1e-6)


# -- gains and the tracker -----------------------------------------------------------------


def test_error_gains_from_poles_kp_kv_and_rows():
    assert np.allclose(error_gains((2,), kp=10, kv=3)[0], [10, 3])
    np.testing.assert_allclose(error_gains((4,), poles=[[-1, -2, -3, -4]])[0], [24, 50, 35, 10])
    np.testing.assert_allclose(error_gains((2,), poles=[[-1 + 2j, -1 - 2j]])[0], [5, 2])
    with pytest.raises(ParameterError, match="one way"):
        error_gains((2,), kp=1, kv=1, poles=[[-1, -1]])
    with pytest.raises(ParameterError, match="relative degree 2"):
        error_gains((3,), kp=1, kv=1)
    with pytest.raises(ParameterError, match="not stable"):
        error_gains((2,), gains=[[1.0, -0.5]])
    with pytest.raises(ParameterError, match="conjugate"):
        error_gains((2,), poles=[[-1 + 1j, -2]])
    with pytest.raises(ParameterError, match="one row"):
        error_gains((2, 2), gains=[[1.0, 2.0]])


class PendulumLaw(LinearizingLaw):
    """th'' = -g sin th + u (relative degree 2, no extension)."""

    states, inputs, relative_degree = ("th", "dth"), ("u",), (2,)

    def measured_flag(self, x, zeta):
        return np.array([[x[0], x[1]]])

    def linearizing_input(self, x, zeta, v):
        return np.array([v[0] + 9.81 * math.sin(x[0])]), np.zeros(0)


class Pendulum(Block):
    def __init__(self, name="plant", x0=(0.3, 0.0)):
        super().__init__(name)
        self.uin = self.declare_input("u", shape=(1,))
        self.q = self.declare_continuous_state("q", np.asarray(x0, float))
        self.xout = self.declare_output("x", lambda c: c.state(self.q), shape=(2,),
                                        depends_on=())

    def derivatives(self, ctx):
        th, dth = ctx.state(self.q)
        return np.array([dth, -9.81 * math.sin(th) + ctx.input(self.uin)[0]])


def _pendulum_loop(period_s=None, dt=1e-3, **gains):
    plan = PolynomialPlan(0.0, 2.0, [[0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0]])
    b = DiagramBuilder("pend")
    plant = b.add(Pendulum())
    ctl = b.add(FlatTracker("ctl", PendulumLaw(), plan, period_s=period_s, **gains))
    b.connect(plant.xout, ctl.x)
    b.connect(ctl.u, plant.uin)
    return Simulator(b.build(), solver="rk4", dt=dt,
                     record=["ctl.error", "ctl.z_ref", "plant.x"]).run(3.0)


def test_tracker_error_follows_the_chosen_poles():
    res = _pendulum_loop(poles=[[-3.0, -4.0]])
    t, e = res.time, res["ctl.error"][:, 0]
    # e(0) = -0.3, e'(0) = 0, poles -3, -4: e = -0.3 (4 e^{-3t} - 3 e^{-4t})
    np.testing.assert_allclose(e, -0.3 * (4 * np.exp(-3 * t) - 3 * np.exp(-4 * t)), atol=1e-10)
    assert res["ctl.z_ref"][-1, 0] == pytest.approx(1.0)


def test_sampled_tracker_is_close_but_not_exact():
    cont = _pendulum_loop(kp=12.0, kv=7.0)["ctl.error"][:, 0]
    samp = _pendulum_loop(period_s=0.01, kp=12.0, kv=7.0)["ctl.error"][:, 0]
    dev = np.max(np.abs(samp - cont))
    assert 1e-5 < dev < 0.02


def test_tracker_needs_matching_plan_and_extension_states():
    plan = PolynomialPlan(0.0, 1.0, [[0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]])
    with pytest.raises(ParameterError, match="2 flat outputs, the law 1"):
        FlatTracker("ctl", PendulumLaw(), plan, kp=1, kv=1)

    class Ext(LinearizingLaw):
        relative_degree, n_extension, states = (2,), 1, ("a",)

    one = PolynomialPlan(0.0, 1.0, [[0.0, 0.0]], [[1.0, 0.0]])
    with pytest.raises(ParameterError, match="dynamic-extension"):
        FlatTracker("ctl", Ext(), one, kp=1, kv=1)
    with pytest.raises(ParameterError, match="on_singular"):
        FlatTracker("ctl", PendulumLaw(), one, kp=1, kv=1, on_singular="warn")


def test_tracker_stops_with_a_clear_error_on_the_law_singular_set():
    class Singular(PendulumLaw):
        def singularity(self, x, zeta):
            return x[0] - 0.5          # pretend the law fails at th = 0.5 rad

    plan = PolynomialPlan(0.0, 2.0, [[0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0]])
    b = DiagramBuilder("pend")
    plant = b.add(Pendulum())
    ctl = b.add(FlatTracker("ctl", Singular(), plan, kp=12.0, kv=7.0))
    b.connect(plant.xout, ctl.x)
    b.connect(ctl.u, plant.uin)
    with pytest.raises(StepError, match=r"FlatTracker 'ctl' at t = .* singular set of Singular"):
        Simulator(b.build(), solver="rk4", dt=1e-3).run(3.0)
