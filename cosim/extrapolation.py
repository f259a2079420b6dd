"""Polynomial extrapolation and interpolation of exchanged signals.

A co-simulation master knows a coupling signal only at communication points
``t_k``.  Over the next macro step ``[t_k, t_k + H]`` a subsystem's input is
the polynomial of order ``p`` (0 to 3) through the last ``p + 1`` known points
(extrapolation, Jacobi) or through points that include ``t_k + H`` when the
source has already stepped (interpolation, Gauss-Seidel).  With exact
subsystems the global coupling error of order-``p`` extrapolation is
:math:`O(H^{p+1})` (measured in the tests on the LIM oscillator: zero-order
hold O(H), linear O(H^2)).

Polynomials are returned as coefficients in :math:`\\tau = t - t_0`
(lowest power first) so the receiving subsystem evaluates them with Horner's
rule at any micro-step or stage time.
"""

from __future__ import annotations

from collections import deque

import numpy as np

_WEIGHTS: dict[tuple, np.ndarray] = {}
_WEIGHT_LISTS: dict[tuple, list] = {}


def lagrange_rows(x: list[float]) -> list[list[float]]:
    """``W`` (rows: powers of ``tau``, columns: samples) with ``coeffs = W @ values`` for
    the polynomial through the samples at ``tau = x`` (seconds): the Lagrange basis
    polynomials expanded, for 3 or 4 samples, in this order of operations (the native
    loop's C, :mod:`cosim.codegen.native_loop_c`, computes the same bits)."""
    n = len(x)
    rows = [[0.0] * n for _ in range(n)]
    for j in range(n):
        o = [x[k] for k in range(n) if k != j]
        if n == 3:
            a, b = o
            d = (x[j] - a) * (x[j] - b)
            col = (a * b / d, -(a + b) / d, 1.0 / d)
        else:
            a, b, c = o
            d = (x[j] - a) * (x[j] - b) * (x[j] - c)
            col = (-(a * b * c) / d, (a * b + a * c + b * c) / d, -(a + b + c) / d, 1.0 / d)
        for r in range(n):
            rows[r][j] = col[r]
    return rows


def _weights(offsets: tuple[int, ...]) -> np.ndarray:
    """``W`` with ``coeffs = W @ values`` for sample times ``t0 + offsets`` (ticks).

    3 or 4 samples: :func:`lagrange_rows` (a closed form the C repeats bit for bit); more:
    the inverse Vandermonde matrix of the sample times in seconds.  Cached, since a fixed
    macro step repeats the same offsets at every step.
    """
    w = _WEIGHTS.get(offsets)
    if w is None:
        tau = [float(o) * 1e-9 for o in offsets]
        if len(tau) in (3, 4):
            rows = lagrange_rows(tau)
            w = np.array(rows)
        else:
            w = np.linalg.inv(np.vander(np.array(tau), len(tau), increasing=True))
            rows = w.tolist()
        if len(_WEIGHTS) > 4096:
            _WEIGHTS.clear()
            _WEIGHT_LISTS.clear()
        _WEIGHTS[offsets] = w
        _WEIGHT_LISTS[offsets] = rows
    return w


class SignalHistory:
    """The last few ``(t, value)`` samples of one coupling signal (times in ticks).

    Scalar signals are kept as floats and their polynomials computed in plain
    Python (a tuple of coefficients); vector signals as arrays.  Non-Real signals
    (``exact``: Boolean, Integer of any width, Enumeration, String, Binary; scalars
    as Python ``bool``/``int``/``str``/``bytes``, vectors as arrays of their own
    dtype) are kept as they are (an Int64 or UInt64 never passes through float64)
    and are never extrapolated or interpolated: :meth:`polynomial` holds the newest
    value whatever the order (a zero-order polynomial), and the master never
    iterates them numerically (:mod:`cosim.master_settle`).
    """

    __slots__ = ("t", "v", "scalar", "exact", "declared")

    def __init__(self, depth: int = 4, exact: bool | None = None) -> None:
        self.t: deque[int] = deque(maxlen=depth)
        self.v: deque = deque(maxlen=depth)
        self.scalar: bool | None = None
        #: ``exact`` as the source port declares it (its dtype), else from the first value
        self.declared = exact
        self.exact = bool(exact)

    def push(self, tk: int, value) -> None:
        """Add the sample ``value`` at ``tk`` ticks (replacing samples at or after ``tk``)."""
        t = self.t
        if t and t[-1] >= tk:
            while t and t[-1] >= tk:
                # a redone step (rollback) or an update at the same instant: replace
                t.pop()
                self.v.pop()
        if self.scalar and type(value) is float:  # the common case first
            t.append(tk)
            self.v.append(value)
            return
        if self.scalar is None:
            self.scalar = np.ndim(value) == 0
            self.exact = is_exact(value) if self.declared is None else self.declared
        t.append(tk)
        if self.scalar:
            if type(value) is not float:
                if self.exact:
                    value = value.item() if isinstance(value, np.generic) else value
                else:
                    value = float(np.ravel(value)[0])
            self.v.append(value)
        elif self.exact:  # kept in its own dtype (a copy: the source may reuse its buffer)
            self.v.append(np.array(value).reshape(-1))
        else:
            self.v.append(np.array(value, dtype=float).reshape(-1))

    def truncate_after(self, tk: int) -> None:
        """Forget samples later than ``tk`` ticks (after a rollback)."""
        while self.t and self.t[-1] > tk:
            self.t.pop()
            self.v.pop()

    def snapshot(self) -> tuple:
        return list(self.t), list(self.v)  # values are never modified in place

    def restore(self, snap: tuple) -> None:
        self.t.clear()
        self.v.clear()
        self.t.extend(snap[0])
        self.v.extend(snap[1])

    def holds(self, value) -> bool:
        """Whether the newest sample equals ``value`` exactly (non-Real signals)."""
        if not self.v:
            return False
        v = self.v[-1]
        if self.scalar:
            value = value.item() if isinstance(value, np.generic) else value
            return bool(v == value)
        return bool(np.array_equal(v, np.reshape(value, -1)))

    @property
    def last(self) -> np.ndarray:
        """The latest value as a 1-D array."""
        v = self.v[-1]
        return np.array((v,)) if self.scalar else v

    @property
    def last_value(self):
        """The latest value as stored (float for scalar signals)."""
        return self.v[-1]

    def constant(self):
        """The latest value as a zero-order polynomial (what :meth:`polynomial` gives for 0)."""
        return (self.v[-1],) if self.scalar else self.v[-1][None, :]

    def polynomial(self, order: int, t0k: int):
        """Coefficients in ``tau = t - t0`` (seconds) through the last ``order + 1`` points.

        ``t0k`` is in ticks.  A tuple of floats for scalar signals, else an array
        ``(n, size)``; lowest power first.  ``order`` is lowered to what the
        history supports (a fresh start uses a zero-order hold).
        """
        ts, vs = self.t, self.v
        m = len(ts)
        if not m:
            raise ValueError("no samples yet")
        if self.exact:  # non-Real: held, never extrapolated
            return (vs[-1],) if self.scalar else vs[-1][None, :]
        n = order + 1 if order + 1 < m else m
        if n == 1:
            return (vs[-1],) if self.scalar else vs[-1][None, :]
        if n == 2 and self.scalar:
            # closed form, anchored at the newest sample (exact hold of it at tau = its offset)
            ta, tb = ts[-2], ts[-1]
            va, vb = vs[-2], vs[-1]
            slope = (vb - va) / ((tb - ta) * 1e-9)
            return (vb - slope * ((tb - t0k) * 1e-9), slope)
        offsets = tuple(ts[i] - t0k for i in range(m - n, m))
        W = _weights(offsets)
        if self.scalar:
            rows = _WEIGHT_LISTS[offsets]
            vals = [vs[i] for i in range(m - n, m)]
            if n == 3:
                a, b, c = vals
                return tuple(r[0] * a + r[1] * b + r[2] * c for r in rows)
            if n == 4:
                a, b, c, d = vals
                return tuple(r[0] * a + r[1] * b + r[2] * c + r[3] * d for r in rows)
            return tuple(sum(w * v for w, v in zip(r, vals)) for r in rows)
        return W @ np.stack([vs[i] for i in range(m - n, m)])


def is_exact(value) -> bool:
    """Whether ``value`` is a non-Real signal value (held, never extrapolated or iterated).

    Booleans, integers of any width (Enumerations included), strings and bytes (FMI
    String and Binary), as Python or NumPy scalars or arrays of such a dtype.
    """
    if isinstance(value, (bool, int, str, bytes, np.integer, np.bool_, np.str_, np.bytes_)):
        return True
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        if isinstance(value, (list, tuple)) and value:
            return all(is_exact(x) for x in value)
        return False
    if dtype.kind == "O":
        return value.size > 0 and is_exact(np.ravel(value)[0])
    return dtype.kind in "biuUS"


def evaluate(coeffs, tau: float) -> np.ndarray:
    """Horner evaluation of coefficient rows (lowest power first) at ``tau`` (1-D result)."""
    if isinstance(coeffs, tuple):
        acc = coeffs[-1]
        for c in coeffs[-2::-1]:
            acc = acc * tau + c
        return np.array((acc,))
    out = coeffs[-1].copy()
    for c in coeffs[-2::-1]:
        out = out * tau + c
    return out
