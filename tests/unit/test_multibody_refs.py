"""Reference models of bench/multibody_refs.py against the published numbers (seed 000).

Chernousko's three-link snake (v1 = 0.023 m/s, slow-phase conditions) and Schwab &
Meijaard's swivel-wheel shimmy (cubic (31), stable band 0.3 < a/l < 0.7 for I = 0.21 m l^2,
critical roots -w, +/- i wn).  See the module docstring for equations and deviations.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from bench import multibody_refs as mr

# ------------------------------------------------------------------------------------------
# Chernousko snake
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def longitudinal():
    return mr.snake_reference()  # full friction in every phase, eps = 1e-4, tau = 10 ms


@pytest.fixture(scope="module")
def longitudinal_ideal():
    return mr.snake_reference(fast_phase_friction=False, friction_eps=1e-5)


@pytest.fixture(scope="module")
def lateral():
    return mr.snake_reference(gait="lateral")


def test_snake_parameters_are_the_papers():
    p = mr.snake_parameters()
    assert (p.a, p.ell, p.m1, p.m0, p.k1, p.k0, p.g, p.gamma) == (
        0.2, 0.2, 1.2, 0.4, 0.2, 0.2, 9.81, 1.0)
    assert p.m == pytest.approx(3.2)
    assert p.slow_duration(1.0) == pytest.approx(1.0)  # longitudinal T = 1 s
    assert round(p.slow_duration(2.0), 1) == 1.4  # lateral T = 1.4 s


def test_snake_closed_form_v1():
    cf = mr.snake_closed_form()
    assert cf["dx"] == pytest.approx(0.045970, abs=1e-6)
    assert round(cf["v1"], 3) == 0.023


def test_snake_slow_phase_conditions():
    long = mr.snake_slow_phase_conditions(omega0=2.0, eps0=4.0)
    assert long["rhs"] == pytest.approx(2.3544)
    assert long["lhs22"] == pytest.approx(2.255, abs=5e-4)
    assert long["lhs22"] <= long["rhs"]  # (2.2) holds for the longitudinal gait
    lat = mr.snake_slow_phase_conditions(omega0=2.8, eps0=4.0)
    assert lat["lhs22"] == pytest.approx(2.375, abs=5e-4)
    assert lat["lhs22"] > lat["rhs"]  # (2.2) fails ...
    assert lat["lhs23"] == pytest.approx(1.270, abs=5e-4)
    assert lat["lhs23"] <= lat["rhs"]  # ... but the weaker (2.3) holds (opposite rotation)


def test_snake_simulated_v1_reproduces_paper(longitudinal):
    r = longitudinal
    assert round(r.mean_speed, 3) == 0.023  # paper: v1 = 0.023 m/s
    cf = mr.snake_closed_form()
    assert r.mean_speed == pytest.approx(cf["v1"], rel=1e-2)
    dx, dy, dth = r.cycle_displacement
    assert dx > 0
    assert abs(dy) < 1e-4 and abs(dth) < 1e-6  # paper: Delta y = Delta theta = 0


def test_snake_ideal_fast_phase_converges_to_closed_form(longitudinal_ideal):
    cf = mr.snake_closed_form()
    assert longitudinal_ideal.cycle_displacement[0] == pytest.approx(cf["dx"], rel=5e-4)
    assert longitudinal_ideal.mean_speed == pytest.approx(cf["v1"], rel=5e-4)


def test_snake_central_link_rests_in_slow_phases(longitudinal):
    r = longitudinal
    for i, kind in enumerate(r.stage_kinds):
        dq = r.stage_q[i + 1] - r.stage_q[i]
        if kind == "S":  # friction holds the central link (creep of order eps only)
            assert np.all(np.abs(dq) < 1e-3)
        else:  # fast phases move it by ~ 0.02-0.04 m
            assert np.hypot(dq[0], dq[1]) > 0.02


def test_snake_fast_phase_keeps_centre_of_mass(longitudinal_ideal):
    r = longitudinal_ideal
    p = mr.snake_parameters()
    prefix, cycle = mr.snake_gait("longitudinal", p.gamma)
    alphas = [(0.0, 0.0)] + [a for _, a in prefix + cycle]

    def com(i):
        return p.masses @ mr.snake_points(r.stage_q[i], alphas[i], p) / p.m

    for i, kind in enumerate(r.stage_kinds):
        if kind == "F":
            assert np.allclose(com(i + 1), com(i), atol=1e-9)


def test_snake_lateral_gait_v2_not_the_printed_value(lateral):
    """Delta y = 4 m0 l sin(gamma)/m is exact here; the printed v2 = 0.034 is not reproduced."""
    cf = mr.snake_closed_form()
    dx, dy, dth = lateral.cycle_displacement
    assert abs(dx) < 1e-9 and abs(dth) < 1e-9  # mirror symmetry
    assert dy == pytest.approx(cf["dy"], rel=5e-3)
    assert lateral.mean_speed == pytest.approx(0.0595, abs=5e-4)
    assert abs(lateral.mean_speed - 0.034) > 0.02
    # the printed 0.034 matches the half-angle variant 4 m0 l sin(gamma/2)/(m T):
    p = mr.snake_parameters()
    half = 4 * p.m0 * p.ell * math.sin(p.gamma / 2) / (p.m * cf["T_lat"])
    assert round(half, 3) == 0.034


# ------------------------------------------------------------------------------------------
# Swivel-wheel shimmy
# ------------------------------------------------------------------------------------------

A_GRID = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]


def test_shimmy_stability_interval():
    lo, hi = mr.shimmy_stability_interval()
    assert (lo, hi) == pytest.approx((0.3, 0.7), abs=1e-12)
    lo_n, hi_n = mr.shimmy_stability_interval(method="numeric")
    assert (lo_n, hi_n) == pytest.approx((0.3, 0.7), abs=1e-9)
    for a in A_GRID:
        stable = mr.shimmy_max_real(a) < 0
        assert stable == (lo + 1e-9 < a < hi - 1e-9) or a in (0.3, 0.7)


@pytest.mark.parametrize("a_over_l", [0.3, 0.7])
def test_shimmy_critical_roots(a_over_l):
    c = mr.shimmy_cubic(a_over_l)
    assert c.mu == pytest.approx(0.0, abs=1e-14)
    expected = np.array([-1j * c.wn, -c.w, 1j * c.wn])
    assert np.allclose(c.roots, expected, atol=1e-12)
    assert np.allclose(mr.shimmy_eigenvalues(a_over_l, form="nonlinear"), expected, atol=1e-12)


def test_shimmy_critical_wn_caption():
    p = mr.shimmy_parameters()  # Fig. 2 caption: wn = sqrt(k/(0.3 m)) at a/l = 0.3
    assert mr.shimmy_cubic(0.3).wn == pytest.approx(math.sqrt(p.k / (0.3 * p.m)))


@pytest.mark.parametrize("a_over_l", A_GRID)
@pytest.mark.parametrize("form", ["coefficients", "nonlinear"])
def test_shimmy_cubic_roots_equal_first_order_eigenvalues(a_over_l, form):
    roots = mr.shimmy_cubic(a_over_l).roots
    eig = mr.shimmy_eigenvalues(a_over_l, form=form)
    assert np.allclose(eig, roots, rtol=0, atol=1e-12)


def test_shimmy_jacobian_equals_coefficient_matrix():
    for a in A_GRID:
        assert np.allclose(mr.shimmy_jacobian(a), mr.shimmy_state_matrix(a), atol=1e-13)


def test_shimmy_other_speeds_and_scales():
    p = dataclasses.replace(mr.shimmy_parameters(), m=7.0, l=0.35, k=2.0e4, v=12.0)
    assert mr.shimmy_stability_interval(p, "numeric") == pytest.approx((0.3, 0.7), abs=1e-9)
    for a in (0.2, 0.5, 0.8):
        assert np.allclose(mr.shimmy_eigenvalues(a, p, "nonlinear"), mr.shimmy_cubic(a, p).roots,
                           rtol=1e-10, atol=0)
    back = dataclasses.replace(p, v=-12.0)  # w < 0: unstable for every a/l (Hurwitz)
    assert all(mr.shimmy_max_real(a, back) > 0 for a in (0.2, 0.5, 0.8))


@pytest.mark.parametrize("a_over_l, mu, roots", [  # notes' table: w = wn = 1, r^2 = 0.21 l^2
    (0.1, -0.5455, [-0.7903, 0.1679 + 1.1123j]),
    (0.2, -0.2000, [-0.9095, 0.0547 + 1.0472j]),
    (0.5, 0.0870, [-1.0454, -0.0208 + 0.9778j]),
    (0.9, -0.1176, [-0.9445, 0.0311 + 1.0285j]),
])
def test_shimmy_notes_table(a_over_l, mu, roots):
    p = mr.shimmy_parameters()
    p = dataclasses.replace(p, k=p.m * (a_over_l**2 + p.inertia_ratio))  # wn = 1
    c = mr.shimmy_cubic(a_over_l, p)
    assert c.w == pytest.approx(1.0) and c.wn == pytest.approx(1.0)
    assert c.mu == pytest.approx(mu, abs=5e-5)
    expected = np.sort_complex(np.array([roots[0], roots[1], np.conj(roots[1])]))
    assert np.allclose(np.sort_complex(c.roots), expected, atol=5e-5)


def test_shimmy_mode_shape():
    """Shimmy eigenvector: lateral displacement of A (u - l phi) over u equals w/(lam + w)."""
    p = mr.shimmy_parameters()
    for a in (0.2, 0.3, 0.5):
        vals, vecs = np.linalg.eig(mr.shimmy_state_matrix(a, p))
        for lam, vec in zip(vals, vecs.T):
            if lam.imag <= 0:  # the oscillatory (shimmy) mode; at a/l = 0.3 lam = -w has u = 0
                continue
            ratio = (vec[1] - p.l * vec[2]) / vec[1]
            assert ratio == pytest.approx(mr.shimmy_mode_ratio(lam, p), abs=1e-12)


@pytest.mark.parametrize("a_over_l", [0.2, 0.5])
def test_shimmy_nonlinear_growth_rate(a_over_l):
    """Small-amplitude nonlinear motion grows/decays at the rate of the oscillatory root."""
    c = mr.shimmy_cubic(a_over_l)
    osc = c.roots[np.argmax(c.roots.imag)]
    period = 2 * np.pi / osc.imag
    n = 12
    sol = mr.shimmy_simulate(a_over_l, [0.0, 1e-5, 0.0], (n + 1) * period,
                             t_eval=np.linspace(0, (n + 1) * period, 4000))
    u = sol.y[1]
    first = np.abs(u[sol.t < period]).max()
    last = np.abs(u[sol.t > n * period]).max()
    rate = math.log(last / first) / (n * period)
    assert rate == pytest.approx(osc.real, abs=2e-3)
    assert (rate > 0) == (osc.real > 0)
