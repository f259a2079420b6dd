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

__all__ = ["check_state", "diagnose", "singular_solve"]

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


def diagnose(mech: Any, q: np.ndarray, t: float) -> tuple[str, str]:
    """``(rows, advice)``: the constraint rows at ``q`` that depend on the others
    (redundant) or nearly so (a singular position), and what to use instead."""
    advice = "reduce the step, or use blocks.multibody.Index3Stepper"
    if not mech.m or not np.isfinite(q).all():
        return "", advice
    try:
        _, dep = mech.rank(q, t, tol=1e-9)
        rho = 1.0 if dep else mech.rank_measure(q, t)[0]
        weak = mech.weak_rows(q, t, rho) if rho < SINGULAR else []
    except (np.linalg.LinAlgError, ValueError):  # a state too broken to examine
        return "", advice
    if dep:
        return (f"; the constraint rows {', '.join(dep[:12])} depend on the others "
                "(redundant constraints)",
                "use formulation 'penalty' or 'augmented_lagrangian' (MultibodyBlock) or "
                "blocks.multibody.Index3Stepper, which accept redundant constraints")
    if weak:
        return (f"; nearly dependent constraint rows at t = {t:.9g} s: "
                f"{', '.join(weak[:12])} (a singular position: rank measure {rho:.3g})",
                "use blocks.multibody.Index3Stepper, which passes singular positions")
    return "", advice
