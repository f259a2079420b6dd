"""No silent NaN: every stepper of the library checks its new state (issue 32 item 3).

:func:`check_state` raises a :class:`~cosim.errors.StepError` when a step produced a
non-finite (NaN or infinite) position or velocity, naming the bodies whose coordinates
went bad, the constraint rows that were dependent (redundant) or nearly so at the last
finite state, and what to use instead.  A stepper calls it once per step with the state
it is about to return and the last finite one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim.errors import StepError

__all__ = ["check_singular", "check_state", "diagnose", "singular_solve", "structural"]

#: a rank measure below this is a singular position (MultibodyBlock's default singular_tol)
SINGULAR = 1e-3


def check_state(mech: Any, q: np.ndarray, v: np.ndarray, t: float, where: str,
                last: tuple | None = None) -> None:
    """Raise :class:`StepError` if ``q`` or ``v`` holds a NaN or an infinity.

    ``where``: who stepped (``"staggered_integrate (index1)"``, ``"block 'arm'"``);
    ``last``: ``(q, v, t)`` of the last finite state, where the constraint rows are
    examined (redundant or nearly dependent rows are the usual cause)."""
    if np.isfinite(q).all() and np.isfinite(v).all():
        return
    bodies = [b.name for b in mech.moving
              if not (np.isfinite(q[b.iq:b.iq + b.nq]).all()
                      and np.isfinite(v[b.iv:b.iv + b.nv]).all())]
    rows, advice = (diagnose(mech, last[0], last[2]) if last is not None else
                    ("", "reduce the step, or use blocks.multibody.Index3Stepper"))
    raise StepError(f"{where}: mechanism '{mech.name}' at t = {t:.9g} s: the step gave a "
                    f"non-finite state (NaN or infinity) in "
                    f"{', '.join(bodies) or 'the state'}{rows}; {advice}")


def singular_solve(mech: Any, q: np.ndarray, t: float, where: str, what: str) -> StepError:
    """The error for a singular linear solve of a stepper (``what``: which system) at the
    finite state ``q``: the dependent rows and what to use instead."""
    rows, advice = diagnose(mech, q, t)
    return StepError(f"{where}: mechanism '{mech.name}' at t = {t:.9g} s: {what} is "
                     f"singular{rows}; {advice}")


def structural(mech: Any) -> int:
    """How many constraint rows depend on the others by construction: the redundant rows
    found at assembly and the dropped ones (:mod:`.redundancy`); 0 before assembly."""
    rep = getattr(mech, "assembly", None) or {}
    return len(rep.get("redundant", ())) + len(rep.get("dropped", ()))


def diagnose(mech: Any, q: np.ndarray, t: float) -> tuple[str, str]:
    """``(rows, advice)``: the constraint rows at ``q`` that are nearly dependent beyond
    the mechanism's redundant ones (a singular position), and what to use instead."""
    advice = "reduce the step, or use blocks.multibody.Index3Stepper"
    if not mech.m or not np.isfinite(q).all():
        return "", advice
    try:
        rho, dep, _ = mech.rank_measure(q, t)
        skip = structural(mech)
        weak = (mech.weak_rows(q, t, max(rho, 1e-12), skip)
                if rho < SINGULAR or dep > skip else [])
    except (np.linalg.LinAlgError, ValueError):  # a state too broken to examine
        return "", advice
    if weak:
        return (f"; nearly dependent constraint rows at t = {t:.9g} s: "
                f"{', '.join(weak[:12])} (a singular position: rank measure {rho:.3g}, "
                f"{dep} rows dependent, {skip} redundant at assembly)",
                "use blocks.multibody.Index3Stepper, which passes singular positions")
    return "", advice


def check_singular(mech: Any, q: np.ndarray, t: float, tol: float, who: str,
                   advice: str = "simulate the mechanism with blocks.multibody.Index3Stepper",
                   skip: int | None = None) -> None:
    """Stop at a singular position: a :class:`StepError` when more rows of ``J`` are within
    ``tol`` of dependence (:meth:`Mechanism.rank_measure`, squared sines, the same in any
    units) than the mechanism's redundant ones.  ``who`` cannot pass singular
    positions reliably (the index-1 forms: their result depends on where the steps fall);
    the message names the nearly dependent rows.  ``skip``: the rows dependent by
    construction (default :func:`structural`)."""
    if tol <= 0 or not mech.m:
        return
    # rows within tol of dependence count as dependent: a redundant row that drift has
    # moved a little off the span of the others (squared sine 1e-10) is still redundant
    rho, dep, _ = mech.rank_measure(q, t, eps=tol)
    skip = structural(mech) if skip is None else skip
    if dep <= skip:
        return
    rho = mech.rank_measure(q, t)[0]
    rows = mech.weak_rows(q, t, max(tol, rho), skip)
    raise StepError(
        f"mechanism '{mech.name}' at t = {t:.9g} s: the constraint Jacobian "
        f"lost rank (rank measure {rho:.3g}, singular_tol = {tol:g}; "
        f"{dep} rows exactly dependent, {skip} redundant at assembly; nearly "
        f"dependent rows: {', '.join(rows[:12]) or '?'}"
        f"{f' and {len(rows) - 12} more' if len(rows) > 12 else ''}): a singular "
        f"configuration, which {who} cannot pass reliably; {advice}, or set "
        "singular_tol=0 to go on at your own risk (the result may depend on the step)")
