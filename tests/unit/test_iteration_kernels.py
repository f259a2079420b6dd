"""Iterative coupling's small-vector algebra (:func:`cosim.coupling._step`,
:func:`cosim.coupling._broyden_update`): the straight-line kernels (n <= 8), the loops
(n <= 16) and NumPy (beyond) against a reference written out here, bit for bit.

The reference is the order the compiled master loop's C adds in (each sum from 0.0, first
term first; ``fmus/compiled_master_c.py``): ``z - M g`` row by row, and Broyden's
``M + outer(dz - M dg, dz M) / (dz M dg)``.  Corpus: seeded random vectors and matrices of
sizes 1-20 with magnitudes over 30 decades (so a different summation order shows in the last
bits), with zeros of both signs, infinities and NaN mixed in, and a zero denominator.
And the predictor's inline cases (``InterfaceVectors.predict_values``) against the
polynomials they replace.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cosim.coupling import _SMALL, _broyden_update, _step


def _sum(terms):
    acc = 0.0
    for t in terms:
        acc += t
    return acc


def _ref_step(M, z, g):
    return [zi - _sum(r[j] * g[j] for j in range(len(g))) for zi, r in zip(z, M)]


def _ref_broyden(M, zn, z, gn, g):
    n = len(z)
    a = [zn[i] - z[i] for i in range(n)]
    b = [gn[i] - g[i] for i in range(n)]
    w = [_sum(a[i] * M[i][j] for i in range(n)) for j in range(n)]
    d = _sum(w[j] * b[j] for j in range(n))
    if d == 0.0:
        return M
    u = [a[i] - _sum(M[i][j] * b[j] for j in range(n)) for i in range(n)]
    return [[M[i][j] + (u[i] * w[j]) / d for j in range(n)] for i in range(n)]


def _same(x, y):
    """Equal bits (a NaN where the other has one)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape:
        return False
    nan = np.isnan(x)
    return np.array_equal(nan, np.isnan(y)) and \
        np.array_equal(x[~nan].view(np.int64), y[~nan].view(np.int64))


def _vec(rng, n, special):
    v = rng.standard_normal(n) * 10.0 ** rng.integers(-15, 15, n)
    if special and n > 1:
        v[rng.integers(n)] = rng.choice([0.0, -0.0, math.inf, -math.inf, math.nan])
    return v.tolist()


pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf - inf in the corpus

CASES = [(n, seed) for n in range(1, 21) for seed in range(6)]


def _case(base: int, n: int, seed: int) -> tuple:
    """(generator, whether the vectors hold signed zeros, infinities and NaN, M as rows)."""
    rng = np.random.default_rng(base * n + seed)
    special = seed >= 4
    return rng, special, [_vec(rng, n, special) for _ in range(n)]


@pytest.mark.parametrize("n,seed", CASES)
def test_the_newton_step_is_the_reference(n, seed):
    rng, special, M = _case(1000, n, seed)
    z, g = _vec(rng, n, special), _vec(rng, n, special)
    for m in (M, np.array(M)):  # a list of rows, or the array Newton's Jacobian gives
        got = _step(m, z, g)
        assert type(got) is list and len(got) == n
        if n > _SMALL:  # NumPy's order: as the Python loop always did there
            ref = (np.array(z) - np.array(M) @ np.array(g)).tolist()
        else:
            ref = _ref_step(M, z, g)
        assert _same(got, ref), (n, seed, got, ref)


@pytest.mark.parametrize("n,seed", CASES)
def test_the_broyden_update_is_the_reference(n, seed):
    rng, special, M = _case(2000, n, seed)
    z, g = _vec(rng, n, False), _vec(rng, n, False)
    zn, gn = _vec(rng, n, special), _vec(rng, n, special)
    if n > _SMALL:
        Ma = np.array(M)
        got = _broyden_update(Ma, zn, z, gn, g)
        dz, dg = np.array(zn) - np.array(z), np.array(gn) - np.array(g)
        w = dz @ Ma
        d = float(w @ dg)
        ref = Ma if d == 0.0 else Ma + ((dz - Ma @ dg)[:, None] * w[None, :]) / d
        assert _same(got, ref)
        return
    got = _broyden_update(M, zn, z, gn, g)
    assert type(got) is list and all(type(r) is list for r in got)
    assert _same(got, _ref_broyden(M, zn, z, gn, g)), (n, seed)
    # an array M (Newton's fresh inverse) gives the same rows
    assert _same(_broyden_update(np.array(M), zn, z, gn, g), got)


@pytest.mark.parametrize("n", [1, 3, 8, 12, 20])
def test_a_zero_denominator_keeps_m(n):
    M = (np.arange(n * n, dtype=float).reshape(n, n) + 1.0)
    Ml = M.tolist() if n <= _SMALL else M
    z = [1.0] * n
    assert _broyden_update(Ml, z, z, z, z) is Ml  # dz = 0: dz M dg = 0


def _old_predict(hists, orders, t0, H):
    """The predictor as it was: each history's polynomial, then Horner."""
    tau = H * 1e-9
    out = []
    for h, order in zip(hists, orders):
        c = h.polynomial(order, t0)
        acc = c[-1]
        for x in c[-2::-1]:
            acc = acc * tau + x
        out.append(float(acc))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_the_predictors_inline_cases_are_the_polynomials(seed):
    """:meth:`InterfaceVectors.predict_values` computes orders 0-1 of scalar histories inline:
    the same bits as :meth:`SignalHistory.polynomial` and Horner, for histories of 1-5
    samples at irregular times (the step controller's), orders 0-3."""
    from cosim.extrapolation import SignalHistory
    from cosim.master_interface import InterfaceVectors
    rng = np.random.default_rng(seed)
    keys, hists, orders, sources = [], [], {}, {}
    for i in range(12):
        h = SignalHistory(depth=5)
        t = 0
        for _ in range(1 + i % 5):
            t += int(rng.integers(1, 5)) * 250_000
            h.push(t, float(rng.standard_normal() * 10.0 ** rng.integers(-8, 8)))
        key = (f"s{i}", "y")
        keys.append(key)
        hists.append(h)
        sources[(f"d{i}", "u")] = (key, 1.0, 0.0)
        orders[(f"d{i}", "u")] = i % 4
    t0 = max(h.t[-1] for h in hists)
    iface = InterfaceVectors([], dict(zip(keys, hists)), keys, sources, orders, {})
    for H in (250_000, 1_000_000, 3_000_000):
        got = iface.predict_values(t0, H)
        assert _same(got, _old_predict(hists, [i % 4 for i in range(12)], t0, H))
        assert _same(iface.predict(t0, H), got)
