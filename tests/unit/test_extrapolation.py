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


@pytest.mark.parametrize("order", [0, 1, 2, 3])
@pytest.mark.parametrize("values", [
    [True, False, True, True], [2**64 - 1, 0, 7, 2**63 + 1], [-2**63, 5, -1, 2**53 + 1],
    ["a", "b, c", "", "d"], [b"\x00", b"\xff", b"", b"ab"],
    [np.array([1, -2], dtype=np.int64), np.array([2**62, 3], dtype=np.int64)] * 2])
def test_non_real_signals_are_held_never_extrapolated(order, values):
    """Every non-Real value (Boolean, integers of any width, String, Binary, integer
    vectors) comes back as the newest sample, exactly and in its type, at any order."""
    h = SignalHistory(depth=5)
    for k, v in enumerate(values):
        h.push(k * MS, v)
    assert h.exact
    c = h.polynomial(order, len(values) * MS)
    assert len(c) == 1
    newest = values[-1]
    if isinstance(newest, np.ndarray):
        assert c.dtype == newest.dtype and c[0].tolist() == newest.tolist()
    else:
        assert type(c[0]) is type(newest) and c[0] == newest


def test_a_declared_real_signal_stays_real_whatever_its_first_value():
    """A Real port whose first value happens to be a Python int (a block returning 0) is
    still extrapolated: the port's declared dtype decides, not the first value."""
    h = SignalHistory(depth=5, exact=False)
    for k, v in enumerate([0, 1.0, 2.0]):
        h.push(k * MS, v)
    assert not h.exact and type(h.last_value) is float
    np.testing.assert_allclose(evaluate(h.polynomial(1, 2 * MS), 1e-3), [3.0])
    guessed = SignalHistory(depth=5)
    guessed.push(0, 0)
    assert guessed.exact  # undeclared: the first value decides (an int is held)
