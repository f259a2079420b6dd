"""Solving algebraic loops between blocks at run time.

The unknowns ``z`` are the output values of the loop's member nodes.  One
sweep ``G(z)`` evaluates the members in order with the current values; the
loop is consistent when ``r(z) = G(z) - z = 0``.  Newton's method with a
finite-difference Jacobian (or a user Jacobian of ``r``) solves it, with a
damped fixed-point iteration as fallback.  Iteration counts and residuals are
kept for the diagnostics.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .errors import LoopConvergenceError


@dataclass
class LoopOptions:
    """Tolerances and method of algebraic-loop solving.

    ``method`` is ``"newton"`` (default; falls back to fixed point) or
    ``"fixed_point"``; ``jacobian(z) -> dr/dz`` may be given by the user.
    """

    method: str = "newton"
    tol: float = 1e-10
    max_iter: int = 50
    fd_step: float = 1e-7
    jacobian: Callable | None = None


class LoopSolver:
    """Newton / fixed-point solver for one loop (see module docstring)."""

    def __init__(self, label: str, slots: list[int], sweep: Callable, options: LoopOptions,
                 blocks: list[str]) -> None:
        self.label = label
        self.slots = slots
        self.sweep = sweep  # sweep(ctx, s) evaluates the members in order
        self.opt = options
        self.blocks = blocks
        self.calls = 0
        self.iterations = 0
        self.max_iterations = 0
        self.last_residual = 0.0
        self._shapes: list | None = None

    # ---- packing of slot values into a flat vector
    def _get(self, s: list) -> np.ndarray:
        vals = [s[i] for i in self.slots]
        if self._shapes is None:
            self._shapes = [np.shape(v) for v in vals]
        return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in vals])

    def _set(self, s: list, z: np.ndarray) -> None:
        k = 0
        for i, shp in zip(self.slots, self._shapes):
            n = int(np.prod(shp)) if shp else 1
            s[i] = float(z[k]) if shp == () else z[k:k + n].reshape(shp).copy()
            k += n

    def _g(self, ctx, s, z: np.ndarray) -> np.ndarray:
        self._set(s, z)
        self.sweep(ctx, s)
        return self._get(s)

    def solve(self, ctx, s: list) -> None:
        """Make the loop's slots consistent; raises :class:`LoopConvergenceError`."""
        self.calls += 1
        z = self._get(s)
        opt = self.opt
        it = 0
        res = np.inf
        if opt.method == "newton":
            z, it, res = self._newton(ctx, s, z)
        if not res <= opt.tol * (1.0 + np.max(np.abs(z), initial=0.0)):
            z, it2, res = self._fixed_point(ctx, s, z)
            it += it2
        self.iterations += it
        self.max_iterations = max(self.max_iterations, it)
        self.last_residual = res
        if not res <= opt.tol * (1.0 + np.max(np.abs(z), initial=0.0)):
            raise LoopConvergenceError(
                f"algebraic loop {self.label} (blocks {', '.join(self.blocks)}) did not "
                f"converge at t = {ctx.time:.9g} s: {it} iterations, residual {res:.3g} "
                f"(tol {opt.tol:g}); check the loop gain (|gain| >= 1 has no fixed point "
                "for fixed-point iteration), give a Jacobian, or break the loop with a delay")
        self._set(s, z)
        self.sweep(ctx, s)

    def _newton(self, ctx, s, z):
        opt = self.opt
        n = z.size
        res = np.inf
        for it in range(1, opt.max_iter + 1):
            gz = self._g(ctx, s, z)
            r = gz - z
            res = float(np.max(np.abs(r))) if n else 0.0
            if not np.isfinite(res):
                return z, it, np.inf
            if res <= opt.tol * (1.0 + np.max(np.abs(z), initial=0.0)):
                return z, it, res
            if opt.jacobian is not None:
                J = np.atleast_2d(opt.jacobian(z))
            else:
                J = np.empty((n, n))
                for j in range(n):
                    dz = opt.fd_step * max(1.0, abs(z[j]))
                    zp = z.copy()
                    zp[j] += dz
                    J[:, j] = ((self._g(ctx, s, zp) - zp) - r) / dz
            try:
                delta = np.linalg.solve(J, -r)
            except np.linalg.LinAlgError:
                return z, it, res
            # backtracking on the residual norm
            lam = 1.0
            for _ in range(8):
                zn = z + lam * delta
                rn = self._g(ctx, s, zn) - zn
                if np.max(np.abs(rn)) < res or lam < 0.02:
                    break
                lam *= 0.5
            z = zn
        gz = self._g(ctx, s, z)
        return z, opt.max_iter, float(np.max(np.abs(gz - z)))

    def _fixed_point(self, ctx, s, z):
        """Fixed-point iteration with Aitken (vector Delta^2) acceleration."""
        opt = self.opt
        res = np.inf
        for it in range(1, opt.max_iter + 1):
            g1 = self._g(ctx, s, z)
            r1 = g1 - z
            res = float(np.max(np.abs(r1))) if z.size else 0.0
            if not np.isfinite(res):
                return z, it, np.inf
            if res <= opt.tol * (1.0 + np.max(np.abs(z), initial=0.0)):
                return z, it, res
            g2 = self._g(ctx, s, g1)
            d2 = g2 - 2.0 * g1 + z
            denom = float(d2 @ d2)
            z = g2 - (float((g2 - g1) @ d2) / denom) * (g2 - g1) if denom > 0 else g2
        return z, opt.max_iter, res
