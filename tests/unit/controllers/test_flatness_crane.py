"""Planar crane with cable-length control as a flat system (blocks.controllers.flatness.crane)."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from blocks.controllers.flatness import SingularityError, check_plan
from blocks.controllers.flatness.crane import (
    PlanarCrane,
    TableReference,
    crane_references,
    effective_length,
    plan_transfer,
    rope_length,
    simulate_planar,
    sts_planar_crane,
    transfer_profile,
)
from blocks.cranes import STS_CRANE, ContainerLoad
from cosim.errors import ParameterError

G = 9.81


@pytest.fixture
def crane():
    return PlanarCrane(38e3, 40e3, 12e3, G)


def test_reverse_inverts_forward(crane):
    rng = np.random.default_rng(1)
    for _ in range(20):
        x = np.array([rng.uniform(-5, 5), rng.uniform(3, 30), rng.uniform(-0.3, 0.3),
                      rng.uniform(-3, 3), rng.uniform(-1, 1), rng.uniform(-0.2, 0.2)])
        u = np.array([rng.uniform(-5e4, 5e4), rng.uniform(2e5, 6e5)])
        ex, eu = crane.check_inverse(x, u)
        assert ex < 1e-11
        assert eu < 1e-9 * 6e5


def test_forward_flag_is_the_derivatives_of_the_motion(crane):
    """For constant inputs the flag's derivatives are those of the integrated load path."""
    x = np.array([1.0, 18.0, 0.1, 0.5, -0.3, 0.05])
    u = np.array([2e4, 3.9e5])
    fl = crane.forward(x, u)
    # the motion on [-0.2, 0.2] s, fitted by a degree-10 polynomial: derivatives at 0
    ts = np.linspace(-0.2, 0.2, 41)
    fwd = solve_ivp(lambda t, y: crane.rhs(y, u), (0, 0.2), x, method="DOP853", rtol=1e-13,
                    atol=1e-13, dense_output=True).sol
    bwd = solve_ivp(lambda t, y: crane.rhs(y, u), (0, -0.2), x, method="DOP853", rtol=1e-13,
                    atol=1e-13, dense_output=True).sol
    xs = np.array([fwd(t) if t >= 0 else bwd(t) for t in ts]).T
    z = np.array([xs[0] + xs[1] * np.sin(xs[2]), -xs[1] * np.cos(xs[2])])
    for i in range(2):
        c = np.polynomial.polynomial.polyfit(ts, z[i], 10)
        d = [c[k] * math.factorial(k) for k in range(5)]
        assert fl[i][0] == pytest.approx(d[0], abs=1e-12)
        assert fl[i][1] == pytest.approx(d[1], abs=1e-9)
        assert fl[i][2] == pytest.approx(d[2], abs=1e-7)
        assert fl[i][3] == pytest.approx(d[3], rel=1e-5, abs=1e-6)
        assert fl[i][4] == pytest.approx(d[4], rel=1e-4, abs=1e-5)


def test_reverse_geometry(crane):
    """The cable is parallel to (x_L'', y_L'' + g); the tension balances the load."""
    zx = [3.0, 1.0, 0.8, 0.1, 0.0]
    zy = [-15.0, 0.2, -0.5, 0.0, 0.0]
    x, u = crane.reverse([zx, zy])
    a, b = zx[2], zy[2] + G
    assert x[0] == pytest.approx(3.0 + 15.0 * a / b, rel=1e-14)
    assert x[1] == pytest.approx(15.0 * math.hypot(a, b) / b, rel=1e-14)
    assert math.tan(x[2]) == pytest.approx(-a / b, rel=1e-14)
    # the trolley's position is where the cable meets the sheave level
    assert x[0] + 0.0 - (zx[0] - x[1] * math.sin(x[2])) == pytest.approx(0.0, abs=1e-12)


def test_singularity_reported_when_the_load_would_fall_freely(crane):
    """Lowering 25 m in 2 s asks y_L'' < -g: the plan crosses y_L'' + g = 0."""
    plan = plan_transfer(crane, 0.0, 2.0, 0.0, 5.0, 0.0, 30.0)
    with pytest.raises(SingularityError) as err:
        check_plan(crane, plan)
    assert 0.0 < err.value.time_s < 2.0
    assert "singular" in str(err.value)
    fl = plan.flag_array(err.value.time_s, 4)
    assert abs(fl[1, 2] + G) < 0.5  # the load's acceleration is about -g there
    # the same lowering in 8 s is fine
    assert check_plan(crane, plan_transfer(crane, 0.0, 8.0, 0.0, 5.0, 0.0, 30.0)) \
        .min_singularity[0] > 0


def test_feedforward_drives_the_planar_model_along_the_plan(crane):
    plan = plan_transfer(crane, 0.0, 24.0, 0.0, 20.0, 30.0, 12.0)
    sol = simulate_planar(crane, plan, 30.0)
    assert sol.success
    ts = np.linspace(0.0, 30.0, 151)
    X = sol.sol(ts)
    ref = np.array([crane.reverse(list(plan.flag_array(t, 4)))[0] for t in ts]).T
    err = np.abs(X - ref).max(axis=1)
    assert err[:3].max() < 1e-8          # positions [m], angle [rad]
    assert err[3:].max() < 1e-8          # rates
    # the load's position itself
    zl = np.array([X[0] + X[1] * np.sin(X[2]), -X[1] * np.cos(X[2])])
    zp = np.array([[plan.flag_array(t, 0)[i, 0] for t in ts] for i in range(2)])
    assert np.abs(zl - zp).max() < 1e-8


@pytest.mark.parametrize("k", [4, 5])
def test_rest_to_rest_boundary_conditions(crane, k):
    plan = plan_transfer(crane, 1.0, 24.0, 2.0, 20.0, 32.0, 12.0, k=k)
    assert plan.degree == 2 * k - 1
    prof = transfer_profile(crane, plan, [0.0, 1.0, 25.0, 30.0])
    for i, (xt, L) in enumerate([(2.0, 20.0), (2.0, 20.0), (32.0, 12.0), (32.0, 12.0)]):
        assert prof["x_t"][i] == pytest.approx(xt, abs=1e-10)
        assert prof["L"][i] == pytest.approx(L, abs=1e-10)
        for key in ("v_t", "L_dot", "theta"):
            assert abs(prof[key][i]) < 1e-9
        if k == 5:  # trolley acceleration and forces start and end at zero
            assert abs(prof["a_t"][i]) < 1e-9 and abs(prof["F"][i]) < 1e-5
        else:       # k = 4: the load's 4th derivative steps at the ends, so does a_t
            assert abs(prof["a_t"][i]) > 1e-3 or i in (0, 3)
        assert prof["T"][i] == pytest.approx(40e3 * G, rel=1e-12)
    for t in (1.0, 25.0):
        fl = plan.flag_array(t, 4)
        assert np.abs(fl[:, 1:k]).max() < 1e-9
    assert check_plan(crane, plan).min_singularity[0] > 0.9 * G


def test_force_rates_match_finite_differences(crane):
    plan = plan_transfer(crane, 0.0, 24.0, 0.0, 20.0, 30.0, 12.0)
    h = 1e-3
    for t in (3.0, 11.0, 20.0):
        p = transfer_profile(crane, plan, [t - h, t, t + h])
        assert p["F_dot"][1] == pytest.approx((p["F"][2] - p["F"][0]) / (2 * h), rel=1e-5)
        assert p["F_h_dot"][1] == pytest.approx((p["F_h"][2] - p["F_h"][0]) / (2 * h),
                                                rel=1e-4, abs=1e-2)


def test_effective_length_inverts_and_exceeds_the_rope():
    p = STS_CRANE.__class__(container=ContainerLoad())
    for l0 in (5.0, 12.0, 20.0, 35.0):
        Le = effective_length(p, l0)
        assert l0 < Le < l0 * 1.02
        assert rope_length(p, Le) == pytest.approx(l0, abs=1e-10)
    arr = rope_length(p, effective_length(p, np.array([12.0, 20.0])))
    assert np.allclose(arr, [12.0, 20.0], atol=1e-10)


def test_crane_references_hold_and_compensate():
    p = STS_CRANE.__class__(container=ContainerLoad())
    s = sts_planar_crane(p)
    assert s.m == pytest.approx(40e3)
    plan = plan_transfer(s, 1.0, 24.0, 0.0, effective_length(p, 20.0), 30.0,
                         effective_length(p, 12.0))
    plain = crane_references(p, plan, [0.0, 10.0, 30.0], compensate_drives=False, system=s)
    comp = crane_references(p, plan, [0.0, 10.0, 30.0], system=s)
    assert plain["trolley"][0] == 0.0 and plain["hoist"][0] == 0.0
    assert plain["l0"][0] == pytest.approx(20.0, abs=1e-9)
    assert plain["l0"][-1] == pytest.approx(12.0, abs=1e-9)
    d = p.hoist_drive
    droop = d.travel_per_rad_m ** 2 / (d.motors * d.efficiency * d.gain_nms_per_rad) * 40e3 * G
    assert comp["hoist"][0] == pytest.approx(droop, rel=1e-9)   # holds the load at rest
    assert comp["trolley"][0] == 0.0
    assert plain["hoist"][1] > 0.3                              # hoisting positive


def test_parameter_errors(crane):
    with pytest.raises(ParameterError, match="hoist_mass_kg"):
        PlanarCrane(1.0, 1.0, 0.0)
    with pytest.raises(ParameterError, match="k must be >= 4"):
        plan_transfer(crane, 0, 10, 0, 10, 5, 10, k=3)
    with pytest.raises(ParameterError, match="TableReference 'r'"):
        TableReference("r", [0.0, 1.0], trolley=[1.0])
