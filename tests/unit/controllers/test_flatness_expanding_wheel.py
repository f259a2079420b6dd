"""Expanding-wheel vehicle (seed 000 §1): flat maps, the seed's numbers, the tracking law."""

import numpy as np
import pytest

from blocks.controllers.flatness import (
    SEED_BOUNDARY,
    SEED_GAINS,
    SEED_INITIAL,
    ExpandingWheelLaw,
    ExpandingWheelPlant,
    ExpandingWheelVehicle,
    PolynomialPlan,
    SingularityError,
    check_plan,
    flag_from_rates,
)
from cosim.errors import ParameterError, StepError
from examples.flatness_expanding_wheel import analytic_errors, closed_loop, seed_plan

B = SEED_BOUNDARY


def test_flat_boundary_values_and_cubics_of_the_seed():
    f0, f1 = flag_from_rates(B["x0"], B["xdot0"]), flag_from_rates(B["xf"], B["xdotf"])
    np.testing.assert_allclose(f0, [[0.3, 0.02], [0.3, 0.01], [0.0, 0.0]], atol=1e-15)
    assert round(f1[2, 0], 5) == 0.17857 and round(f1[2, 1], 4) == 0.0306
    c = PolynomialPlan(0.0, 10.0, f0, f1).coefficients
    np.testing.assert_allclose(c[0], [0.3, 0.02, -0.0025, 0.00015], atol=1e-15)
    np.testing.assert_allclose(c[1], [0.3, 0.01, -0.0015, 0.0001], atol=1e-15)
    # seed: z3 = 0.00229592 t^2 - 5.10204e-5 t^3 (six printed digits)
    np.testing.assert_allclose(c[2], [0.0, 0.0, 0.00229592, -5.10204e-5], rtol=5e-6, atol=1e-15)


def test_plan_stays_clear_of_the_singular_set_with_the_reported_minimum():
    rep = check_plan(ExpandingWheelVehicle(1.0), seed_plan(), n=20001)
    d, t = rep.min_singularity
    assert d == pytest.approx(9.66e-4, abs=5e-7) and t == pytest.approx(7.18, abs=0.01)


@pytest.mark.parametrize("l_, th1, th2", [(0.5, 2.859, 3.089), (1.0, 2.930, 3.170),
                                         (2.0, 2.965, 3.210), (1e6, 3.000, 3.250)])
def test_theta_at_10_s_reflects_the_seed_data_inconsistency(l_, th1, th2):
    x, _ = ExpandingWheelVehicle(l_).reverse(list(seed_plan().flag_array(10.0, 2)))
    assert round(x[2], 3) == th1 and round(x[3], 3) == th2
    # the closed form of the report: theta1(10) = 3 - 1.4 tan(alpha(10))
    d = 0.05
    assert x[2] == pytest.approx(3 - 1.4 * d / np.sqrt(l_**2 - d**2), abs=1e-12)


def test_the_t10_rates_violate_the_rolling_constraint_12():
    sys = ExpandingWheelVehicle(1.0)
    xdot = np.array(B["xdotf"])
    model = sys.rhs(np.array(B["xf"]), xdot[:3])
    assert abs(model[3] - xdot[3]) > 1e-4       # theta2' from (12) is not 0


def test_forward_and_reverse_are_inverse():
    sys = ExpandingWheelVehicle(0.8)
    rng = np.random.default_rng(1)
    for _ in range(20):
        x = np.array([0.3, 0.3, 0, 0]) + rng.normal(0, [0.03, 0.03, 1.0, 1.0])
        u = np.array([0.02, 0.005, 0.3]) + rng.normal(0, 0.01, 3)
        ex, eu = sys.check_inverse(x, u)
        assert ex < 1e-12 and eu < 1e-12


def test_reverse_gives_the_model_rates_along_the_plan():
    """theta1' from the inverse map equals d/dt of theta1 from the inverse map."""
    sys, p, h = ExpandingWheelVehicle(1.0), seed_plan(), 1e-5
    for t in (1.0, 4.0, 8.5):
        x, u = sys.reverse(list(p.flag_array(t, 2)))
        xp, _ = sys.reverse(list(p.flag_array(t + h, 2)))
        xm, _ = sys.reverse(list(p.flag_array(t - h, 2)))
        np.testing.assert_allclose((xp - xm) / (2 * h), sys.rhs(x, u), rtol=1e-6, atol=1e-9)


def test_a_plan_through_the_singular_set_is_reported_before_the_run():
    start = flag_from_rates(B["x0"], B["xdot0"])
    end = np.array([[0.4, 0.015], [0.35, 0.06], [0.2, 0.0]])   # r2 grows faster at the end
    with pytest.raises(SingularityError, match=r"crosses the singular set .* between t = "):
        check_plan(ExpandingWheelVehicle(1.0), PolynomialPlan(0, 10, start, end))


def test_closed_loop_errors_follow_the_linear_error_dynamics_at_order_four():
    plan = seed_plan()
    kp = np.array(SEED_GAINS["kp"])
    kv = 2.0 * np.sqrt(kp)                       # critically damped: D stays > 0
    law = ExpandingWheelLaw(1.0)
    zm = law.measured_flag(np.array(SEED_INITIAL["x0"]), np.array(SEED_INITIAL["zeta0"]))
    zd = plan.flag_array(0.0, 1)
    devs = []
    for dt in (1e-2, 5e-3):
        res = closed_loop(plan, kp, kv, 1.0, dt=dt)
        ref = analytic_errors(res.time, kp, kv, zd[:, 0] - zm[:, 0], zd[:, 1] - zm[:, 1])
        devs.append(np.max(np.abs(res["ctl.error"] - ref), axis=0))
        assert res["ctl.singularity"].min() > 9e-4
    assert np.all(devs[1] < 1e-9)
    order = np.log2(devs[0] / devs[1])
    assert np.all(order > 3.5), order


def test_seed_gains_reach_the_singular_set_of_the_law():
    with pytest.raises(StepError, match=r"at t = 1\.131\d* s: the closed loop crosses"):
        closed_loop(seed_plan(), SEED_GAINS["kp"], SEED_GAINS["kv"], 1.0, dt=5e-3)


def test_model_b_matches_model_a():
    kp = np.array(SEED_GAINS["kp"])
    a = closed_loop(seed_plan(), kp, 2 * np.sqrt(kp), 1.0, model="A", dt=1e-2)
    b = closed_loop(seed_plan(), kp, 2 * np.sqrt(kp), 1.0, model="B", dt=1e-2)
    assert np.max(np.abs(a["veh.x"] - b["veh.x"])) < 1e-9
    np.testing.assert_allclose(a["veh.alpha"], b["veh.alpha"], atol=1e-9)


def test_bad_parameters_are_refused():
    with pytest.raises(ParameterError, match="rod_length_m"):
        ExpandingWheelVehicle(-1.0)
    with pytest.raises(ParameterError, match="model must be"):
        ExpandingWheelPlant("v", SEED_INITIAL["x0"], model="C")
    with pytest.raises(ParameterError, match="below the rod length"):
        ExpandingWheelPlant("v", (0.9, 0.3, 0, 0), rod_length_m=0.5)


def test_to_flatsys_round_trip_and_python_control_plan():
    pytest.importorskip("control")
    from blocks.controllers.flatness import plan_flatsys

    sys = ExpandingWheelVehicle(1.0)
    fs = sys.to_flatsys()
    x = np.array([0.31, 0.3, 0.5, 0.2])
    u = np.array([0.02, 0.005, 0.3])
    for a, b in zip(fs.forward(x, u), sys.forward(x, u)):
        np.testing.assert_allclose(a, b)
    # a consistent transfer (the t = 10 s state taken from the inverse map)
    xf, _ = sys.reverse(list(seed_plan().flag_array(10.0, 2)))
    uf = np.array([0.015, 0.01, 0.0])
    p = plan_flatsys(sys, 10.0, np.array(B["x0"]), np.array([0.02, 0.01, 0.0]), xf, uf)
    rep = check_plan(sys, p, n=501)
    np.testing.assert_allclose(rep.x[:, 0], B["x0"], atol=1e-10)
    np.testing.assert_allclose(rep.x[:, -1], xf, atol=1e-9)
