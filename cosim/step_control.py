r"""Communication-step control for the co-simulation master.

Two error estimates, chosen by ``method``:

``"richardson"`` (Schiehlen & Scholz's recommendation): from a
checkpoint at ``t`` the master does one macro step ``H`` and, after a
rollback, two steps ``H/2``.  For a coupling whose global error is
:math:`O(H^q)` (``q = p + 1`` for order-``p`` extrapolation) the error of
the half-step result is estimated as

.. math:: \varepsilon = \frac{\lVert y_{H/2} - y_H \rVert}{2^q - 1},

scaled per component by ``atol + rtol |y|``.  The step is accepted when the
scaled error is at most 1 (the state after the two half steps is kept) and
rejected otherwise (rollback, smaller ``H``).  Costs three macro steps'
work per accepted step and needs every subsystem to save its state.

``"extrapolation"`` (two extrapolation orders): the step is done once.  For
every extrapolated input, the order-``p`` polynomial it was given is compared
at the end of the step with the order-``p+1`` polynomial through the new
sample, i.e. with the output published there:

.. math:: \varepsilon = \max_i \frac{|\tilde u_i(t_k + H) - y_i(t_k + H)|}
          {atol + rtol\,|y_i(t_k + H)|},

a local error of order :math:`H^{p+1}`.  A step with
:math:`\varepsilon > 1` is redone smaller when the subsystems can save
their state; otherwise it is kept, counted in
``diagnostics["unrecoverable_steps"]``, and the next step is smaller (so
this method also serves FMUs without state get/set).  Inputs fed by
interpolation (Gauss-Seidel's later subsystems) have no defect; iterative
couplings have none at all and must use Richardson.

With ``energy_tol`` and the master's ``power_bonds``, the energy residual
of the step (:meth:`~cosim.master.MasterScheduler._energy_residual`) divided
by ``energy_tol`` is a further error term.

The next step follows the standard controller

.. math:: H_{new} = H \min\bigl(f_{max}, \max(f_{min}, s\,\varepsilon^{-1/(q+1)})\bigr)

rounded down to a multiple of ``grid_s`` (every subsystem's solver step must
divide it) and kept within ``[h_min, h_max]``; ``q = p + 1`` for Richardson,
``q = p`` for the defect.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class StepController:
    """Communication-step control (see module docstring).

    Parameters
    ----------
    method : str
        ``"richardson"`` or ``"extrapolation"``.
    rtol, atol : float
        Tolerances on the coupling outputs.
    h_min_s, h_max_s : float
        Step limits; a step that fails at ``h_min_s`` stops the run with a
        :class:`~cosim.errors.StepError`.
    grid_s : float
        Every macro step is a multiple of this (default ``h_min_s / 2``, so the
        smallest step can still be halved); every subsystem's fixed solver
        step must divide it.
    energy_tol : float, optional
        Bound on the energy residual per step of the master's power bonds
        (effort x flow x s, e.g. J).
    safety, fac_min, fac_max : float
        Controller constants.
    """

    method: str = "richardson"
    rtol: float = 1e-3
    atol: float = 1e-6
    h_min_s: float = 1e-5
    h_max_s: float = 1e-1
    grid_s: float | None = None
    safety: float = 0.9
    fac_min: float = 0.2
    fac_max: float = 4.0
    energy_tol: float | None = None

    def __post_init__(self) -> None:
        if self.method not in ("richardson", "extrapolation"):
            raise ValueError(f"StepController: method must be 'richardson' or 'extrapolation', "
                             f"got {self.method!r}")
        if not (self.rtol >= 0 and self.atol >= 0 and self.rtol + self.atol > 0):
            raise ValueError(f"StepController: rtol and atol must be >= 0 and not both 0, got "
                             f"rtol={self.rtol!r}, atol={self.atol!r}")
        if not 0 < self.h_min_s <= self.h_max_s:
            raise ValueError(f"StepController: need 0 < h_min_s <= h_max_s, got "
                             f"h_min_s={self.h_min_s!r}, h_max_s={self.h_max_s!r}")

    def next_step(self, H: int, err: float, q: int, grid: int, h_min: int, h_max: int) -> int:
        """New macro step (ticks) after a step of ``H`` with scaled error ``err``."""
        if err <= 0.0:
            fac = self.fac_max
        else:
            fac = min(self.fac_max, max(self.fac_min, self.safety * err ** (-1.0 / (q + 1))))
        new = int(H * fac) // grid * grid
        return max(h_min, min(h_max, new))
