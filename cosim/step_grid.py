"""The Simulator's ``dt``, held once: what the grid of a run means for its solver.

``dt`` means one of three things, decided once here from the argument and the solver:

=============  ==============================================================
role           meaning
=============  ==============================================================
``"step"``     a fixed-step solver's step: every step ends on the grid
               ``t0 + k dt`` (sample periods and offsets must be multiples)
``"advance"``  ``dt="advance"`` (fixed-step solvers): no grid, every
               ``advance_to`` is one solver step (split at stops)
``"output"``   a variable-step solver's output grid: the solver chooses its
               steps, the observers are sampled on ``t0 + k dt``
``"none"``     no ``dt``: a variable-step run records every accepted step; a
               fixed-step diagram without continuous states moves from one
               major point to the next
=============  ==============================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import RateError
from .time import format_time, to_ticks


@dataclass(frozen=True)
class StepGrid:
    """A run's ``dt`` (module docstring): ``seconds`` as given (None for ``"advance"`` or
    none), ``ticks`` its integer form (None without a grid), ``role``."""

    seconds: float | None
    ticks: int | None
    role: str

    @classmethod
    def of(cls, dt: Any, solver_name: str, fixed: bool, n_continuous: int) -> StepGrid:
        """The grid of ``dt`` for a solver; :class:`RateError` when it cannot take effect
        (``"advance"`` with a variable-step solver, a fixed-step solver with continuous
        states and no ``dt``, a step that is not positive)."""
        if dt == "advance":
            if not fixed:
                raise RateError(f"dt='advance' needs a fixed-step solver, not '{solver_name}'")
            return cls(None, None, "advance")
        ticks = to_ticks(dt, "dt") if dt is not None else None
        if ticks is None:
            if fixed and n_continuous:
                raise RateError(f"solver '{solver_name}' is fixed-step: give dt (the step in "
                                "seconds, or 'advance': one step per advance_to)")
            return cls(None, None, "none")
        if ticks <= 0:
            raise RateError(f"dt must be positive, got {dt!r}")
        return cls(dt, ticks, "step" if fixed else "output")

    @property
    def argument(self) -> float | str | None:
        """``dt`` as the Simulator was given it (the solver settings)."""
        return "advance" if self.role == "advance" else self.seconds

    def check_rates(self, groups: Any) -> None:
        """Every sample period and offset of the rate ``groups`` is a multiple of a fixed
        step (a :class:`RateError` naming the blocks otherwise)."""
        if self.role != "step":
            return
        for g in groups:
            for what, val in (("period", g.period), ("offset", g.offset)):
                if val % self.ticks:
                    names = ", ".join(f"'{b.path}'" for b in g.blocks)
                    raise RateError(
                        f"block {names} {what} {format_time(val)} is not a multiple of the "
                        f"solver step dt = {format_time(self.ticks)}; choose dt dividing "
                        "every sample period and offset (or a variable-step solver)")
