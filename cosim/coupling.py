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

A subsystem with ``rate = r`` steps every ``r`` macro steps over ``r H`` and
publishes its outputs only when the master reaches the end of its step (a slow
subsystem never shows a future value early: results do not depend on which
thread finishes first).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any


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
            master.feed_inputs(s, t0, s.rate * H, interpolate=False)
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
            master.feed_inputs(s, t0, s.rate * H, interpolate=True)
            master.step_subsystem(s, t0, s.rate * H)
            master.collect(s, t0 + s.rate * H)
