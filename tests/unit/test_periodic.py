"""cosim.periodic on analytic systems.

* A damped linear oscillator under harmonic forcing of period 1 s:
  :math:`\\ddot x + 2\\zeta\\omega_0\\dot x + \\omega_0^2 x = F\\cos(2\\pi t)`.  The
  exact flow is :math:`z(t_0+\\tau) = e^{A\\tau}(z_0 - z_p(t_0)) + z_p(t_0+\\tau)`
  with the steady state :math:`z_p`; the periodic orbit is :math:`z_p(0)` and the
  Floquet multipliers are :math:`e^{\\lambda_j(A) T}`.
* The 1/3 subharmonic of a hardening Duffing oscillator
  :math:`\\ddot x + \\delta\\dot x + x + x^3 = F\\cos\\Omega t` with
  :math:`\\delta = 0.05`, :math:`F = 3`, :math:`\\Omega = 3.3` (slightly above
  three times the linear natural frequency 1, as the multiple-scales theory of
  the 1/3 subharmonic requires for a hardening spring: Nayfeh & Mook, Nonlinear
  Oscillations, 1979, sec. 4.1.4).  That a stable period-3 orbit (from
  :math:`x_0 = 0`) coexists with a stable period-1 orbit (from :math:`x_0 = 3`)
  for this set was established by the simulations of this test itself (the
  period-1 orbit is the large-amplitude resonant branch of the bent
  primary-resonance curve).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import expm

from cosim import Block, DiagramBuilder, Simulator
from cosim.periodic import (
    bifurcation_diagram,
    detect_period,
    find_periodic_orbit,
    floquet_multipliers,
    poincare_section,
    simulator_flow,
)

W0, ZETA, F0, OMEGA = 2.0, 0.1, 1.5, 2 * math.pi  # linear oscillator, forcing period 1 s
A_LIN = np.array([[0.0, 1.0], [-W0 ** 2, -2 * ZETA * W0]])


def steady_state(t: float) -> np.ndarray:
    X = F0 / (W0 ** 2 - OMEGA ** 2 + 2j * ZETA * W0 * OMEGA)
    z = X * np.exp(1j * OMEGA * t)
    return np.array([z.real, (1j * OMEGA * z).real])


def exact_flow(x0, t0, tau):
    return expm(A_LIN * tau) @ (np.asarray(x0) - steady_state(t0)) + steady_state(t0 + tau)


class Forced(Block):
    """x'' + c x' + k x + beta x^3 = F cos(Omega t); state [x, v]; output x [m]."""

    def __init__(self, name, c, k, beta, F, omega, x0=0.0):
        super().__init__(name)
        self.p = (c, k, beta, F, omega)
        self.q = self.declare_continuous_state("q", [x0, 0.0])
        self.declare_output("x", lambda ctx: float(ctx.state(self.q)[0]), unit="m",
                            depends_on=())

    def derivatives(self, ctx):
        c, k, beta, F, w = self.p
        x, v = ctx.state(self.q)
        return np.array([v, F * math.cos(w * ctx.time) - c * v - k * x - beta * x ** 3])


def factory(c, k, beta, F, omega, x0=0.0, steps=64, record=False):
    b = DiagramBuilder("forced")
    b.add(Forced("osc", c, k, beta, F, omega, x0))
    d = b.build()
    dt = round(2 * math.pi / omega / steps, 9)
    return lambda: Simulator(d, solver="rk4", dt=dt, record=record)


LINEAR = (2 * ZETA * W0, W0 ** 2, 0.0, F0, OMEGA)
DUFFING = (0.05, 1.0, 1.0, 3.0, 3.3)


# ----------------------------------------------------------- linear oscillator
def test_linear_orbit_and_multipliers_from_the_exact_flow():
    orbit = find_periodic_orbit(exact_flow, [0.0, 0.0], 1.0, p=1, tol=1e-12)
    assert orbit.converged and orbit.iterations <= 2  # an affine map: one Newton step
    np.testing.assert_allclose(orbit.x, steady_state(0.0), rtol=0, atol=1e-10)
    expected = np.exp(np.linalg.eigvals(A_LIN) * 1.0)
    mu = np.sort_complex(orbit.multipliers)
    np.testing.assert_allclose(mu, np.sort_complex(expected), rtol=0, atol=1e-9)
    assert orbit.stable and orbit.spectral_radius == pytest.approx(math.exp(-ZETA * W0))
    # the monodromy matrix is expm(A T) and does not depend on the point
    mu2, M = floquet_multipliers(exact_flow, [3.0, -1.0], 1.0, p=2)
    np.testing.assert_allclose(M, expm(2 * A_LIN), atol=1e-8)


def test_linear_section_and_orbit_with_the_simulator():
    make = factory(*LINEAR)
    sec = poincare_section(make, 1.0, n_transient=120, n_points=6)
    assert sec.labels == ["osc.q[0]", "osc.q[1]"]
    np.testing.assert_allclose(sec.times, np.arange(120, 126, dtype=float))
    assert sec.period(tol=1e-8) == 1
    np.testing.assert_allclose(sec.points[-1], steady_state(0.0), atol=1e-7)  # RK4, 64 steps
    outputs = poincare_section(factory(*LINEAR, record=["osc.x"]), 1.0, 120, 3,
                               states=["osc.x"])
    np.testing.assert_allclose(outputs.points[:, 0], sec.points[:3, 0], atol=1e-12)
    orbit = find_periodic_orbit(simulator_flow(make), [0.0, 0.0], 1.0)
    assert orbit.converged
    np.testing.assert_allclose(orbit.x, steady_state(0.0), atol=1e-7)
    np.testing.assert_allclose(np.sort_complex(orbit.multipliers),
                               np.sort_complex(np.exp(np.linalg.eigvals(A_LIN))), atol=1e-7)


def test_flow_starts_at_any_time():
    flow = simulator_flow(factory(*LINEAR))
    x0 = np.array([0.3, -0.2])
    np.testing.assert_allclose(flow(x0, 0.25, 0.6), exact_flow(x0, 0.25, 0.6), atol=1e-8)


# ----------------------------------------------------------------- Duffing 1/3
def test_duffing_coexisting_period_one_and_period_three():
    T = 2 * math.pi / DUFFING[4]
    sec3 = poincare_section(factory(*DUFFING, x0=0.0, steps=48), T, 400, 9)
    sec1 = poincare_section(factory(*DUFFING, x0=3.0, steps=48), T, 400, 9)
    assert sec3.period(tol=1e-5) == 3
    assert sec1.period(tol=1e-5) == 1
    flow = simulator_flow(factory(*DUFFING, steps=48))
    o3 = find_periodic_orbit(flow, sec3.points[-1], T, p=3, tol=1e-10)
    o1 = find_periodic_orbit(flow, sec1.points[-1], T, p=1, tol=1e-10)
    assert o3.converged and o1.converged
    assert detect_period(np.vstack([o3.points, o3.points]), tol=1e-8) == 3
    assert o3.stable and o1.stable
    # the subharmonic is large; the coexisting period-1 orbit is the resonant branch of the
    # bent primary-resonance curve, amplitude ~ sqrt(4 (Omega^2 - 1) / 3) = 3.6
    assert np.ptp(o3.points[:, 0]) > 0.5
    assert np.hypot(o1.x[0], o1.x[1] / DUFFING[4]) > 3.0
    # the damping fixes the product of the multipliers: det = exp(-delta p T)
    assert np.prod(o3.multipliers).real == pytest.approx(math.exp(-0.05 * 3 * T), rel=1e-5)


def test_bifurcation_diagram_continuation_keeps_the_branch():
    T = 2 * math.pi / DUFFING[4]
    start = poincare_section(factory(*DUFFING, x0=0.0, steps=48), T, 300, 1).final_state

    def make(F):
        return factory(DUFFING[0], 1.0, 1.0, F, DUFFING[4], steps=48)()

    d = bifurcation_diagram(make, [3.0, 2.9], T, 150, 6, coordinate="osc.q[0]", x0=start,
                            tol=1e-3)
    assert d.periods == [3, 3] and d.label == "osc.q[0]"
    assert len(d.rows()) == 12 and d.ranges(3) == [(3.0, 2.9)]
    fresh = bifurcation_diagram(make, [3.0], T, 150, 6, continuation=False, tol=1e-3)
    assert fresh.periods == [3]  # from the simulator's own initial state x0 = 0


# ------------------------------------------------------------ period detection
def test_detect_period_on_crafted_sequences():
    rng = np.random.default_rng(0)
    orbit = rng.normal(size=(5, 3))
    for p in (1, 2, 3, 5):
        seq = np.vstack([orbit[:p]] * (12 // p + 2))
        assert detect_period(seq) == p
        assert detect_period(seq + 1e-9 * rng.normal(size=seq.shape), tol=1e-6) == p
    # a period-6 sequence is not period 2 or 3
    seq6 = np.vstack([orbit[:1], orbit[1:2], orbit[2:3], orbit[:1], orbit[1:2], orbit[3:4]] * 3)
    assert detect_period(seq6) == 6
    assert detect_period(seq6, max_period=5) is None
    # quasi-periodic: an irrational rotation never repeats
    k = np.arange(60)
    quasi = np.c_[np.cos(2 * math.pi * k * (math.sqrt(5) - 1) / 2),
                  np.sin(2 * math.pi * k * (math.sqrt(5) - 1) / 2)]
    assert detect_period(quasi) is None
    # a decaying transient only converges to period 1 within the tolerance at the end
    decay = np.exp(-0.5 * k)[:, None] * np.ones((1, 2)) + 1.0
    assert detect_period(decay) is None
    assert detect_period(decay, window=10) == 1
    # too few points to accept period 3 (needs 2p)
    assert detect_period(np.vstack([orbit[:3], orbit[:2]])) is None
    # scalar sequences work; scale makes coordinates commensurable
    assert detect_period([1.0, 2.0, 1.0, 2.0]) == 2
    big_small = np.c_[np.ones(8) * 1e3, 1e-3 * (-1.0) ** np.arange(8)]
    assert detect_period(big_small, tol=1e-5) == 1
    assert detect_period(big_small, tol=1e-5, scale=[1e3, 1e-3]) == 2
