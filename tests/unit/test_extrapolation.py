"""Polynomial extrapolation/interpolation of coupling signals (cosim.extrapolation)."""

import numpy as np
import pytest

from cosim.extrapolation import SignalHistory, evaluate

MS = 1_000_000  # ticks per millisecond


def _cubic(t):
    return 0.3 - 2.0 * t + 40.0 * t**2 + 900.0 * t**3


@pytest.mark.parametrize("order", [0, 1, 2, 3])
def test_order_p_reproduces_polynomials_of_degree_p_exactly(order):
    def f(t):
        return sum(c * t**j for j, c in enumerate((0.3, -2.0, 40.0, 900.0)[:order + 1]))
    for vector in (False, True):
        h = SignalHistory(depth=5)
        for k in range(5):
            t = k * MS
            h.push(t, np.array([f(t * 1e-9), 2 * f(t * 1e-9)]) if vector else f(t * 1e-9))
        t0 = 4 * MS
        c = h.polynomial(order, t0)
        for tau in (0.0, 0.4e-3, 1e-3, 2.5e-3):
            got = evaluate(c, tau)
            want = f(t0 * 1e-9 + tau)
            np.testing.assert_allclose(got[0], want, rtol=1e-9, atol=1e-12)


def test_extrapolation_error_falls_as_h_to_the_order_plus_one():
    for order in (0, 1, 2, 3):
        errs = []
        for H in (1e-3, 5e-4):
            h = SignalHistory(depth=5)
            Hk = int(round(H * 1e9))
            for k in range(4):
                h.push(k * Hk, np.sin(10 * k * H + 0.7))
            c = h.polynomial(order, 3 * Hk)
            errs.append(abs(evaluate(c, H)[0] - np.sin(10 * 4 * H + 0.7)))
        assert abs(np.log2(errs[0] / errs[1]) - (order + 1)) < 0.15, (order, errs)


def test_interpolation_through_a_point_after_t0():
    h = SignalHistory()
    for k in range(4):
        h.push(k * MS, _cubic(k * 1e-3))
    c = h.polynomial(3, 2 * MS)  # last sample at t0 + H: interpolation
    np.testing.assert_allclose(evaluate(c, 0.5e-3)[0], _cubic(2.5e-3), rtol=1e-10)


def test_order_is_lowered_on_a_fresh_start_and_scalars_stay_plain_floats():
    h = SignalHistory()
    h.push(0, 2.0)
    assert h.polynomial(3, 0) == (2.0,)
    h.push(MS, 4.0)
    c = h.polynomial(3, MS)
    assert isinstance(c, tuple) and len(c) == 2
    assert c == pytest.approx((4.0, 2000.0))


def test_push_at_an_earlier_or_equal_time_replaces_later_samples():
    h = SignalHistory()
    for k in range(3):
        h.push(k * MS, float(k))
    h.push(1 * MS, 10.0)  # a redone step
    assert list(h.t) == [0, MS] and list(h.v) == [0.0, 10.0]
    h.push(2 * MS, 3.0)
    h.truncate_after(MS)
    assert list(h.t) == [0, MS]
    snap = h.snapshot()
    h.push(2 * MS, 7.0)
    h.restore(snap)
    assert h.last_value == 10.0
