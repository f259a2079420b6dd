"""Coupling algorithms: how a macro step exchanges signals between subsystems.

Each is a small strategy object with ``step(master, k, t0, H)`` that sets
inputs, steps the subsystems that are due and publishes their outputs.

Timing (what subsystem B sees of A's output over the macro step
``[t_k, t_{k+1}]``, order-``p`` polynomials)::

    Jacobi:        A and B step from t_k at the same time (may run in parallel).
                   B's input = extrapolation of A's outputs at t_{k-p} .. t_k.
    Gauss-Seidel:  A steps first and publishes y_A(t_{k+1}); then B steps with
                   the interpolation through t_{k+1-p} .. t_{k+1} (no delay for
                   B; A still extrapolates B).
    Iterative:     A and B step from t_k with inputs interpolated through
                   t_{k+1-p} .. t_k and a guess z at t_{k+1}; both are rolled
                   back and redone until y(t_{k+1}) = z: each sees the other's
                   converged value at t_{k+1} (no delay, no extrapolation).

A subsystem with ``rate = r`` steps every ``r`` macro steps over ``r H`` and
publishes its outputs only when the master reaches the end of its step (a slow
subsystem never shows a future value early: results do not depend on which
thread finishes first).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np


class Coupling:
    """Base class of coupling strategies."""

    name = "base"

    def step(self, master: Any, k: int, t0: int, H: int) -> None:
        raise NotImplementedError


class Jacobi(Coupling):
    """All due subsystems step from the same extrapolated inputs.

    Parameters
    ----------
    parallel : bool
        Step the subsystems in a thread pool (results are identical: inputs are
        fixed before, outputs are published after all steps).
    """

    name = "jacobi"

    def __init__(self, parallel: bool = False, workers: int | None = None) -> None:
        self.parallel = parallel
        self.workers = workers
        self._pool = None

    def step(self, master: Any, k: int, t0: int, H: int) -> None:
        due = master.due(k)
        for s in due:
            master.feed_inputs(s, t0)
        if self.parallel and len(due) > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers or len(master.subsystems))
            futures = [self._pool.submit(master.step_subsystem, s, t0, s.rate * H)
                       for s in due]
            for f in futures:
                f.result()
        else:
            for s in due:
                master.step_subsystem(s, t0, s.rate * H)
        for s in due:
            master.collect(s, t0 + s.rate * H)


class GaussSeidel(Coupling):
    """Subsystems step one after the other; later ones interpolate earlier ones.

    Parameters
    ----------
    order : list of subsystem names, optional
        Stepping order (default: the order the subsystems were given in).
    """

    name = "gauss_seidel"

    def __init__(self, order: list[str] | None = None) -> None:
        self.order = order

    def step(self, master: Any, k: int, t0: int, H: int) -> None:
        due = master.due(k)
        if self.order:
            rank = {n: i for i, n in enumerate(self.order)}
            missing = [s.name for s in due if s.name not in rank]
            if missing:
                raise ValueError(f"GaussSeidel order {self.order} does not name subsystem(s) "
                                 f"{missing}")
            due = sorted(due, key=lambda s: rank[s.name])
        for s in due:
            master.feed_inputs(s, t0)
            master.step_subsystem(s, t0, s.rate * H)
            master.collect(s, t0 + s.rate * H)


class Iterative(Coupling):
    """Iterate each macro step until the coupling signals at its end are consistent.

    The unknowns are the coupling outputs ``z`` at ``t_{k+1}``.  One sweep rolls
    the subsystems back to ``t_k``, gives every input the polynomial through
    the history and the current guess at ``t_{k+1}`` (interpolation, order as
    configured), steps all subsystems (Jacobi) and reads ``y(z)`` at
    ``t_{k+1}``.  The step is accepted when ``|y(z) - z| <= tol (1 + |y|)``.

    Methods: ``"fixed_point"`` (z <- y), ``"aitken"`` (dynamic relaxation),
    ``"anderson"`` (Anderson acceleration over the last ``depth`` sweeps),
    ``"broyden"`` (quasi-Newton on ``g(z) = y(z) - z``, as Schiehlen & Scholz
    do), ``"newton"`` (finite-difference interface Jacobian over whole sweeps,
    one extra sweep per unknown).  Each sweep ends by solving the direct
    feedthrough at ``t_{k+1}`` (the master's loop solver, with the subsystems'
    output Jacobians), so ``y(z)`` depends on ``z`` only through the states:
    that is the part these methods iterate on.

    The converged result is an implicit (interpolating) coupling: no
    extrapolation error, stable where explicit coupling is not.  Needs
    subsystems that can save and restore their state; all rates must be 1.
    """

    name = "iterative"
    needs_rollback = True

    METHODS = ("fixed_point", "aitken", "anderson", "broyden", "newton")

    def __init__(self, method: str = "broyden", tol: float = 1e-10, max_iter: int = 30,
                 fd_step: float = 1e-7, depth: int = 5) -> None:
        if method not in self.METHODS:
            raise ValueError(f"Iterative: method must be one of {', '.join(self.METHODS)}, "
                             f"got {method!r}")
        self.method, self.tol, self.max_iter, self.fd_step = method, tol, max_iter, fd_step
        self.depth = int(depth)
        self.name = f"iterative/{method}"

    def _sweep(self, master: Any, snap: dict, t0: int, H: int, z: np.ndarray,
               first: bool) -> np.ndarray:
        if not first:
            master.restore(snap)
        keys = master.coupled_sources
        for key, val in zip(keys, master.unpack(z)):
            master.histories[key].push(t0 + H, val)
        polys = {s.name: master.input_polys(s, t0) for s in master.subsystems}
        for key in keys:
            master.histories[key].truncate_after(t0)
        master._fed.update(polys)
        for s in master.subsystems:
            s.set_inputs(t0 * 1e-9, polys[s.name])
        for s in master.subsystems:
            master.step_subsystem(s, t0, H)
        for s in master.subsystems:
            master._publish(s, t0 + H, s.get_outputs())
        if master.feedthrough_subs:
            master._settle(t0 + H, master.feedthrough_subs, once=master._settle_once)
        return master.pack_last()

    def step(self, master: Any, k: int, t0: int, H: int) -> None:
        from .errors import LoopConvergenceError
        if any(s.rate != 1 for s in master.subsystems):
            raise ValueError("Iterative coupling needs every subsystem at rate 1")
        snap = master.save()
        z = master.predict(t0, H)
        y = self._sweep(master, snap, t0, H, z, first=True)
        n = z.size
        it = 1
        omega = 0.5
        r_prev = None
        g = y - z
        Jinv = -np.eye(n)  # Broyden: inverse Jacobian of g(z) = y - z, initial g' = -I
        hist_g: list = []  # Anderson: recent residuals and images
        hist_y: list = []
        while True:
            res = float(np.max(np.abs(g)))
            if res <= self.tol * (1.0 + float(np.max(np.abs(y)))):
                break
            if it >= self.max_iter:
                raise LoopConvergenceError(
                    f"iterative coupling ({self.method}) did not converge in macro step "
                    f"t = {t0 * 1e-9:.9g} s: {it} sweeps, residual {res:.3g} (tol "
                    f"{self.tol:g}); subsystems {', '.join(s.name for s in master.subsystems)}"
                    "; reduce the macro step, use 'newton', or raise max_iter")
            if self.method == "fixed_point":
                z_new = y
            elif self.method == "aitken":
                if r_prev is not None:
                    d = g - r_prev
                    dd = float(d @ d)
                    if dd > 0:
                        omega = -omega * float(r_prev @ d) / dd
                z_new = z + omega * g
                r_prev = g
            elif self.method == "anderson":
                hist_g.append(g)
                hist_y.append(y)
                if len(hist_g) > self.depth + 1:
                    hist_g.pop(0)
                    hist_y.pop(0)
                z_new = y
                if len(hist_g) > 1:
                    dF = np.diff(np.array(hist_g), axis=0).T
                    dG = np.diff(np.array(hist_y), axis=0).T
                    gamma = np.linalg.lstsq(dF, g, rcond=None)[0]
                    z_new = y - dG @ gamma
            elif self.method == "broyden":
                z_new = z - Jinv @ g
            else:  # newton with a finite-difference interface Jacobian
                J = np.empty((n, n))
                for j in range(n):
                    dz = self.fd_step * max(1.0, abs(z[j]))
                    zp = z.copy()
                    zp[j] += dz
                    yp = self._sweep(master, snap, t0, H, zp, first=False)
                    it += 1
                    J[:, j] = ((yp - zp) - g) / dz
                z_new = z - np.linalg.solve(J, g)
            y_new = self._sweep(master, snap, t0, H, z_new, first=False)
            it += 1
            g_new = y_new - z_new
            if self.method == "broyden":
                dz, dg = z_new - z, g_new - g
                denom = float(dz @ Jinv @ dg)
                if denom != 0.0:
                    Jinv = Jinv + np.outer(dz - Jinv @ dg, dz @ Jinv) / denom
            z, y, g = z_new, y_new, g_new
        master.iterations.append(it)
        master.iteration_total += it
        master.last_residual = res
