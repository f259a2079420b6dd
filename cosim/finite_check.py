"""The check that stops a run on a state that is not finite, naming the state."""

from __future__ import annotations

import math

import numpy as np

from .errors import NonFiniteError
from .time import SECONDS_PER_TICK


class FiniteCheck:
    """``check(x, tick)``: raise :class:`~cosim.errors.NonFiniteError` if the continuous
    state ``x`` at ``tick`` holds a NaN or an infinity, naming the first such state by
    block and state (and the block's own label, ``state_label``) and the solver ``where``
    ran (``"solver rk4, dt = 0.001 s"``)."""

    def __init__(self, cstate_index: dict, where: str) -> None:
        self.cstate_index = cstate_index
        self.where = where

    def __call__(self, x: np.ndarray, tick: int) -> None:
        if x.size and not math.isfinite(float(x @ x)):
            bad = np.flatnonzero(~np.isfinite(x))
            if bad.size == 0:
                return  # overflow of the norm only
            i = int(bad[0])
            raise NonFiniteError(
                f"continuous state {self.name(i)} became {x[i]} at "
                f"t = {tick * SECONDS_PER_TICK:.9g} s ({self.where}); results up to the "
                "previous step were kept; check parameters and initial conditions, reduce "
                "the step, or use a stiff solver ('radau', 'bdf')")

    def name(self, i: int) -> str:
        """The state at index ``i`` of the state vector, by block and name."""
        for h, (a, b, _) in self.cstate_index.items():
            if a <= i < b:
                name = f"'{h.block.path}.{h.name}'" + (f"[{i - a}]" if b - a > 1 else "")
                label = getattr(h.block, "state_label", None)  # a block's own names
                if label is not None:
                    name += f" ({label(h, i - a)})"
                return name
        return f"index {i}"
