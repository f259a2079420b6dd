"""Vortex kernels: exact point-vortex motions and the Lamb–Oseen profile.

References (copied from research/anchors-domain.md §5.2, computed there from the formulas):
counter-rotating pair (±Γ, separation d) translates at Γ/(2πd) = 0.159155 for Γ = d = 1;
co-rotating pair rotates at Ω = Γ/(π d²); von Kármán street translates at
U = (Γ/2a) tanh(π b/a); Lamb–Oseen v_θ = Γ/(2πr) (1 − exp(−r²/(4νt))).
"""

import math

import numpy as np
import pytest

from blocks.vortex import induced_velocity, naive_self_induced, numba_available, self_induced
from cosim.errors import ParameterError

BACKENDS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(
    not numba_available(), reason="numba not installed"))]


@pytest.mark.parametrize("backend", BACKENDS)
def test_counter_rotating_pair_translates(backend):
    p = np.array([[0.0, 0.5], [0.0, -0.5]])       # d = 1
    u = self_induced(p, [1.0, -1.0], 0.0, "point", backend)
    np.testing.assert_allclose(u[:, 0], 0.159155, atol=5e-7)  # Γ/(2πd), anchors §5.2
    np.testing.assert_allclose(u[:, 1], 0.0, atol=1e-15)
    assert u[0, 0] == pytest.approx(1.0 / (2.0 * math.pi), rel=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_co_rotating_pair_rotates(backend):
    d, G = 0.8, 2.0
    p = np.array([[d / 2, 0.0], [-d / 2, 0.0]])
    u = self_induced(p, [G, G], 0.0, "point", backend)
    omega = u[0, 1] / (d / 2)                      # tangential speed / radius
    assert omega == pytest.approx(G / (math.pi * d * d), rel=1e-13)
    # the pair integrated for a quarter turn with RK4 keeps its separation
    T = 0.25 * 2 * math.pi / omega
    n = 200
    h = T / n
    x = p.copy()

    def f(x):
        return self_induced(x, [G, G], 0.0, "point", backend)
    for _ in range(n):
        k1 = f(x)
        k2 = f(x + 0.5 * h * k1)
        k3 = f(x + 0.5 * h * k2)
        k4 = f(x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    np.testing.assert_allclose(x, [[0.0, d / 2], [0.0, -d / 2]], atol=1e-9)


def test_von_karman_street_speed():
    a, G = 1.0, 1.0
    b = math.acosh(math.sqrt(2.0)) / math.pi * a   # neutral spacing b/a = 0.280550
    assert b / a == pytest.approx(0.280550, abs=1e-6)
    exact = G / (2 * a) * math.tanh(math.pi * b / a)  # anchors §5.2
    errors = []
    for K in (1000, 4000):                          # vortices per row (truncated street)
        x = np.arange(-K, K + 1) * a
        upper = np.column_stack([x, np.full(x.size, b / 2)])
        lower = np.column_stack([x[:-1] + a / 2, np.full(x.size - 1, -b / 2)])
        src = np.vstack([upper, lower])
        g = np.concatenate([np.full(x.size, G), np.full(x.size - 1, -G)])
        # speed of the upper vortex at x = 0 (it gets nothing from itself)
        u = induced_velocity([[0.0, b / 2]], src, g, 0.0, "point", "numpy")
        assert u[0, 1] == pytest.approx(0.0, abs=1e-12)
        errors.append(abs(u[0, 0] - exact))        # upper row +G, lower -G: moves along +x
    # truncation error ~ 1/K: measured 8.9e-5 (K = 1000) and 2.2e-5 (K = 4000)
    assert errors[1] < 3e-5 and errors[0] / errors[1] == pytest.approx(4.0, rel=0.05)


def test_lamb_oseen_profile():
    G, nu, t = 1.3, 1e-3, 2.0
    delta = math.sqrt(4 * nu * t)
    r = np.array([1e-4, 0.01, 0.05, delta, 0.15, 0.5])
    u = induced_velocity(np.column_stack([r, 0 * r]), [[0.0, 0.0]], [G], delta, "lamb_oseen")
    exact = G / (2 * math.pi * r) * -np.expm1(-r * r / (4 * nu * t))  # 1 - exp, no cancel
    np.testing.assert_allclose(u[:, 1], exact, rtol=1e-12)
    np.testing.assert_allclose(u[:, 0], 0.0, atol=1e-18)


@pytest.mark.parametrize("model", ["krasny", "rankine", "lamb_oseen"])
def test_core_models_far_field_and_centre(model):
    u = induced_velocity([[3.0, 0.0], [0.0, 0.0]], [[0.0, 0.0]], [1.0], 0.1, model)
    assert u[0, 1] == pytest.approx(1 / (2 * math.pi * 3.0), rel=2e-3)
    assert u[1].tolist() == [0.0, 0.0]


@pytest.mark.skipif(not numba_available(), reason="numba not installed")
@pytest.mark.parametrize("model", ["point", "krasny", "lamb_oseen", "rankine"])
def test_numba_equals_numpy(model):
    rng = np.random.default_rng(1)
    p = rng.normal(size=(300, 2))
    g = rng.normal(size=300)
    core = rng.uniform(0.01, 0.2, 300)
    a = self_induced(p, g, core, model, "numpy")
    b = self_induced(p, g, core, model, "numba")
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12 * np.abs(a).max())
    t = rng.normal(size=(50, 2))
    np.testing.assert_allclose(induced_velocity(t, p, g, core, model, "numpy"),
                               induced_velocity(t, p, g, core, model, "numba"),
                               rtol=1e-10, atol=1e-12)


def test_naive_loop_and_impulse_conservation():
    rng = np.random.default_rng(2)
    p = rng.normal(size=(60, 2))
    g = rng.normal(size=60)
    u = self_induced(p, g, 0.05)
    np.testing.assert_allclose(naive_self_induced(p, g, 0.05), u, rtol=1e-12, atol=1e-14)
    # antisymmetric pair interaction: sum Γ u = 0 (linear impulse conserved)
    np.testing.assert_allclose((g[:, None] * u).sum(axis=0), 0.0, atol=1e-12)


def test_bad_inputs():
    with pytest.raises(ParameterError, match="core radius must be >= 0"):
        self_induced([[0, 0], [1, 0]], [1, 1], -0.1)
    with pytest.raises(ParameterError, match="NaN"):
        self_induced([[0, np.nan], [1, 0]], [1, 1])
    with pytest.raises(ParameterError, match="unknown core model 'gauss'.*krasny"):
        induced_velocity([[0, 0]], [[1, 0]], [1], 0.1, "gauss")
    with pytest.raises(ParameterError, match=r"shape \(N, 2\)"):
        induced_velocity([0, 0], [[1, 0]], [1])
    with pytest.raises(ParameterError, match="2 sources but 1"):
        induced_velocity([[0, 0]], [[1, 0], [2, 0]], [1])
