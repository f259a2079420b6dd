"""Communication-step control for the co-simulation master.

Richardson extrapolation (Schiehlen & Scholz's recommendation): from a
checkpoint at ``t`` the master does one macro step ``H`` and, after a
rollback, two steps ``H/2``.  For a coupling whose global error is
:math:`O(H^q)` (``q = p + 1`` for order-``p`` extrapolation) the error of
the half-step result is estimated as

.. math:: \\varepsilon = \\frac{\\lVert y_{H/2} - y_H \\rVert}{2^q - 1},

scaled per component by ``atol + rtol |y|``.  The step is accepted when the
scaled error is at most 1 (the state after the two half steps is kept) and
rejected otherwise (rollback, smaller ``H``).  The next step follows the
standard controller

.. math:: H_{new} = H \\min\\bigl(f_{max}, \\max(f_{min}, s\\,\\varepsilon^{-1/(q+1)})\\bigr)

rounded down to a multiple of ``grid_s`` (every subsystem's solver step must
divide it) and kept within ``[h_min, h_max]``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class StepController:
    """Richardson communication-step control (see module docstring).

    Parameters
    ----------
    rtol, atol : float
        Tolerances on the coupling outputs.
    h_min_s, h_max_s : float
        Step limits; a step that fails at ``h_min_s`` stops the run with a
        :class:`~cosim.errors.StepError`.
    grid_s : float
        Every macro step is a multiple of this (default ``h_min_s / 2``, so the
        smallest step can still be halved); every subsystem's fixed solver
        step must divide it.
    safety, fac_min, fac_max : float
        Controller constants.
    """

    rtol: float = 1e-3
    atol: float = 1e-6
    h_min_s: float = 1e-5
    h_max_s: float = 1e-1
    grid_s: float | None = None
    safety: float = 0.9
    fac_min: float = 0.2
    fac_max: float = 4.0

    def next_step(self, H: int, err: float, q: int, grid: int, h_min: int, h_max: int) -> int:
        """New macro step (ticks) after a step of ``H`` with scaled error ``err``."""
        if err <= 0.0:
            fac = self.fac_max
        else:
            fac = min(self.fac_max, max(self.fac_min, self.safety * err ** (-1.0 / (q + 1))))
        new = int(H * fac) // grid * grid
        return max(h_min, min(h_max, new))
