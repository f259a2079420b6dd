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
interpolation (Gauss-Seidel's later subsystems) have no defect.  Iterative
couplings feed no extrapolated input; for them the two orders are the
predictor (the order-``p`` extrapolation of the coupled outputs that starts
the iteration) and the converged corrector at ``t_k + H`` (Milne's device):

.. math:: \varepsilon = \max_i \frac{|z^{pred}_i - y_i(t_k + H)|}
          {atol + rtol\,|y_i(t_k + H)|},

the local error of the explicit coupling, an upper bound of the implicit one's.

With ``energy_tol`` and the master's ``power_bonds``, the energy residual
of the step (:mod:`cosim.bonds`) divided
by ``energy_tol`` is a further error term.

The next step follows the standard controller

.. math:: H_{new} = H \min\bigl(f_{max}, \max(f_{min}, s\,\varepsilon^{-1/(q+1)})\bigr)

rounded down to a multiple of ``grid_s`` (every subsystem's solver step must
divide it) and kept within ``[h_min, h_max]``; ``q = p + 1`` for Richardson,
``q = p`` for the defect.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import BuildError, StepError
from .extrapolation import evaluate
from .time import SECONDS_PER_TICK, format_time, to_ticks

_NS = SECONDS_PER_TICK


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
    at_min_step : str
        A step over tolerance at ``h_min_s``: ``"raise"`` (default) stops the run
        with a :class:`~cosim.errors.StepError`; ``"accept"`` keeps it and counts it
        in ``diagnostics["steps_over_tol_at_h_min"]`` (for inputs with known
        discontinuities, e.g. a valve command ramp, where no explicit coupling
        step meets the tolerance: the step shrinks to ``h_min_s`` there and grows
        again after).
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
    at_min_step: str = "raise"

    def __post_init__(self) -> None:
        if self.at_min_step not in ("raise", "accept"):
            raise ValueError(f"StepController: at_min_step must be 'raise' or 'accept', got "
                             f"{self.at_min_step!r}")
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


def run_controlled(master: Any, end: int) -> int:
    """Run to ``end`` with communication-step control; returns the steps taken.

    ``method="richardson"``: each step is done as ``H`` and as two ``H/2``
    from a checkpoint.  ``method="extrapolation"``: each step is done once
    and the extrapolation defect is checked (:mod:`cosim.step_control`).
    """
    ctl = master.step_control
    richardson = ctl.method == "richardson"
    if any(s.rate != 1 for s in master.subsystems):
        raise BuildError("communication-step control needs every subsystem at rate 1")
    iterative = getattr(master.coupling, "needs_rollback", False)
    if richardson:
        master.check_rollback("Richardson communication-step control")
    can_redo = all(getattr(s, "can_save_state", False) for s in master.subsystems)
    grid = to_ticks(ctl.grid_s or ctl.h_min_s / 2, "step-control grid")
    h_min = to_ticks(ctl.h_min_s, "h_min") // grid * grid
    if richardson and h_min < 2 * grid:
        raise BuildError(f"step control: h_min_s = {ctl.h_min_s} s must be at least twice "
                         f"the grid {format_time(grid)} so that the smallest step can be "
                         "halved and checked")
    h_min = max(h_min, grid)
    h_max = max(h_min, to_ticks(ctl.h_max_s, "h_max") // grid * grid)
    for s in master.subsystems:
        check = getattr(s, "check_step", None)
        if check is not None:
            check(grid)
    p = min(master.orders.values(), default=0)
    # error exponents: Richardson estimates a global error O(H^(p+1)), the
    # defect a local one O(H^(p+1)); next_step uses err^(-1/(q+1))
    q = p + 1 if richardson else p
    H = max(h_min, min(h_max, master.H // grid * grid))
    k = 0
    counters = master.counters
    counters.step_sizes = []
    counters.unrecoverable = 0
    counters.over_tol_at_min = 0
    while master.t < end:
        if master._check_terminated():  # a subsystem ended the run (not an error)
            break
        H = min(H, end - master.t)
        half = H // 2 // grid * grid
        if richardson and half < grid:  # only a last step shorter than 2 grid steps
            master._macro(k, H)
            err = _energy_error(master, ctl)
            k += 1
            _accept(master, H, err)
            continue
        # the checkpoint of the step before: reused (MasterScheduler.save)
        snap = master.save(slot="step_control") if (richardson or can_redo) else None
        p_eff = _effective_order(master)  # lower while the history is short (start)
        if richardson:
            master._macro(k, H)
            y_full = master.interface.pack_last()
            master.restore(snap)
            master._macro(k, half)
            master._macro(k + 1, H - half)
            y_half = master.interface.pack_last()
            scale = ctl.atol + ctl.rtol * np.abs(y_half)
            err = float(np.max(np.abs(y_half - y_full) / scale)) / (2.0 ** (p_eff + 1) - 1.0)
            steps = 2
        else:
            master._macro(k, H)
            err = predictor_error(master, ctl) if iterative else defect_error(master, ctl, H)
            steps = 1
        err = max(err, _energy_error(master, ctl))
        startup = p_eff < p and H <= h_min
        forced = err > 1.0 and H <= h_min and ctl.at_min_step == "accept"
        if err <= 1.0 or snap is None or startup or forced:
            if forced and not startup:
                counters.over_tol_at_min += 1
            elif err > 1.0:
                # cannot redo, or the history is too short for order p even at h_min:
                # accepted above tolerance, counted, next step smaller
                counters.unrecoverable += 1
            k += steps
            _accept(master, H, err)
            H = ctl.next_step(H, err, q, grid, h_min, h_max)
            continue
        master.restore(snap)
        counters.rejections += 1
        if H <= h_min:
            raise StepError(
                f"communication step rejected at the minimum step "
                f"{format_time(h_min)} at t = {master.t * _NS:.9g} s (scaled error "
                f"{err:.3g}); loosen rtol/atol, lower h_min_s, use an iterative "
                "coupling, or StepController(at_min_step='accept') where an input has "
                "a known discontinuity")
        H = ctl.next_step(H, err, q, grid, h_min, h_max)
    return k


def _effective_order(master: Any) -> int:
    """The lowest extrapolation order the histories support now."""
    return min((min(order, len(hist.t) - 1) for feeds in master._feeds.values()
                for _, hist, order, _, _ in feeds), default=0)


def _accept(master: Any, H: int, err: float) -> None:
    master.counters.last_residual = err
    master.record.point(H)
    master.counters.step_sizes.append(H * _NS)


def defect_error(master: Any, ctl: Any, H: int) -> float:
    """Scaled extrapolation defect of the step that just ended at ``master.t``.

    For every input fed by extrapolation: the order-``p`` polynomial it used,
    at the end of the step, against the order-``p+1`` polynomial through the
    new sample, i.e. the published output there (converted to the input's
    unit).  Inputs fed by interpolation (Gauss-Seidel) and non-Real inputs (held,
    never extrapolated) have no defect.
    """
    err = 0.0
    tau = H * _NS
    for s in master.subsystems:
        fed = master._fed.get(s.name)
        if fed is None:
            continue
        for name, hist, _, scale, bias in master._feeds[s.name]:
            if hist.exact:  # a non-Real signal is held by design: no extrapolation defect
                continue
            used = evaluate(fed[name], tau)
            actual = hist.last * scale + bias
            e = np.abs(used - actual) / (ctl.atol + ctl.rtol * np.abs(actual))
            err = max(err, float(np.max(e)))
    return err


def predictor_error(master: Any, ctl: Any) -> float:
    """Scaled gap between an iterative coupling's predictor and its converged outputs."""
    gap = getattr(master.coupling, "predictor_gap", None)
    if gap is None:
        return 0.0
    z_pred, y = np.asarray(gap[0], float), np.asarray(gap[1], float)
    return float(np.max(np.abs(z_pred - y) / (ctl.atol + ctl.rtol * np.abs(y)), initial=0.0))


def _energy_error(master: Any, ctl: Any) -> float:
    """Scaled energy residual of the last macro step (0 without ``energy_tol``)."""
    if not ctl.energy_tol or not master.bonds:
        return 0.0
    return abs(master.counters.last_energy) / ctl.energy_tol
