"""graph.py (components, cycles) and linear.py (fusion, RK propagators) on their own."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from cosim.graph import find_cycle, is_loop, order_with_loops
from cosim.linear import rk_propagator
from cosim.solvers import RK4, Euler, Heun


def test_components_come_out_dependencies_first():
    # 0 reads 1, 1 reads 2, 3 reads 4 and 4 reads 3 (a loop), 2 reads nothing
    deps = [[1], [2], [], [4], [3]]
    comps = order_with_loops(deps)
    pos = {n: i for i, c in enumerate(comps) for n in c}
    assert pos[2] < pos[1] < pos[0]
    loops = [c for c in comps if is_loop(c, deps)]
    assert loops == [[3, 4]]
    cyc = find_cycle([3, 4], deps)
    assert sorted(cyc) == [3, 4]
    assert is_loop([5], [[]] * 5 + [[5]])  # a self-loop is a loop


def test_long_chain_does_not_recurse():
    n = 50_000
    deps = [[i + 1] if i + 1 < n else [] for i in range(n)]
    comps = order_with_loops(deps)
    assert len(comps) == n and comps[0] == [n - 1]


def _taylor(A, h, order):
    out = np.eye(len(A))
    term = np.eye(len(A))
    for k in range(1, order + 1):
        term = term @ (h * A) / k
        out = out + term
    return out


@pytest.mark.parametrize("cls, order", [(Euler, 1), (Heun, 2), (RK4, 4)])
def test_propagator_is_the_rk_stability_polynomial(cls, order):
    rng = np.random.default_rng(1)
    A = rng.normal(size=(4, 4))
    B = rng.normal(size=(4, 2))
    h = 0.05
    Phi, gammas, g = rk_propagator(A, B, np.zeros(4), cls.tableau, h)
    np.testing.assert_allclose(Phi, _taylor(A, h, order), atol=1e-14)
    assert [c for c, _ in gammas] == sorted({float(c) for c in cls.tableau[2]})
    # constant input: sum of Gammas = h * sum_{k=1..order} (hA)^(k-1)/k! B
    S = sum(gm for _, gm in gammas)
    ref = h * sum(np.linalg.matrix_power(h * A, k - 1) / math.factorial(k)
                  for k in range(1, order + 1)) @ B
    np.testing.assert_allclose(S, ref, atol=1e-14)
    assert not np.any(g)


def test_propagator_matches_one_generic_rk4_step_with_time_varying_input():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(3, 3))
    B = rng.normal(size=(3, 1))
    e = rng.normal(size=3)
    h, t0 = 0.01, 0.3
    v = np.sin
    Phi, gammas, g = rk_propagator(A, B, e, RK4.tableau, h)
    x0 = rng.normal(size=3)
    x_prop = Phi @ x0 + sum(gm @ [v(t0 + c * h)] for c, gm in gammas) + g
    x_rk = RK4(lambda t, x: A @ x + B[:, 0] * v(t) + e).advance(t0, x0, h)
    np.testing.assert_allclose(x_prop, x_rk, atol=1e-15)
    Phs, _, _ = rk_propagator(sp.csr_matrix(A), sp.csr_matrix(B), e, RK4.tableau, h)
    np.testing.assert_allclose(Phs.toarray(), Phi, atol=1e-15)
