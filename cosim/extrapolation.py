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


class SignalHistory:
    """The last few ``(t, value)`` samples of one coupling signal."""

    def __init__(self, depth: int = 4) -> None:
        self.t: deque[float] = deque(maxlen=depth)
        self.v: deque[np.ndarray] = deque(maxlen=depth)

    def push(self, t: float, value) -> None:
        if self.t and t <= self.t[-1]:
            # a redone step (rollback) or an update at the same instant: replace
            while self.t and self.t[-1] >= t:
                self.t.pop()
                self.v.pop()
        self.t.append(float(t))
        self.v.append(np.atleast_1d(np.asarray(value, dtype=float)).copy())

    def truncate_after(self, t: float) -> None:
        """Forget samples later than ``t`` (after a rollback)."""
        while self.t and self.t[-1] > t + 1e-15:
            self.t.pop()
            self.v.pop()

    def snapshot(self) -> tuple:
        return list(self.t), [v.copy() for v in self.v]

    def restore(self, snap: tuple) -> None:
        self.t.clear()
        self.v.clear()
        for t, v in zip(*snap):
            self.t.append(t)
            self.v.append(v.copy())

    @property
    def last(self) -> np.ndarray:
        return self.v[-1]

    def polynomial(self, order: int, t0: float) -> np.ndarray:
        """Coefficients ``(order'+1, size)`` in ``tau = t - t0`` through the last points.

        ``order`` is lowered to what the history supports (a fresh start uses
        a zero-order hold).
        """
        if not self.t:
            raise ValueError("no samples yet")
        n = min(order + 1, len(self.t))
        ts = np.array(list(self.t)[-n:]) - t0
        vs = np.array(list(self.v)[-n:])
        if n == 1:
            return vs[:1].copy()
        V = np.vander(ts, n, increasing=True)  # V[i, j] = ts[i] ** j
        return np.linalg.solve(V, vs)


def evaluate(coeffs: np.ndarray, tau: float) -> np.ndarray:
    """Horner evaluation of coefficient rows (lowest power first) at ``tau``."""
    out = coeffs[-1].copy()
    for c in coeffs[-2::-1]:
        out = out * tau + c
    return out
