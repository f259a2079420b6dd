"""Locating a zero crossing inside a step: the root of a witness on the step's interpolant.

Used by the fixed-step (:meth:`cosim.fixed_step.FixedStepAdvancer._locate`) and
variable-step (:meth:`cosim.variable_step.VariableStepAdvancer._locate`) advancers.
"""

from __future__ import annotations

from typing import Any

from scipy.optimize import brentq


def first_root(g: Any, lo: float, hi: float, g_lo: float, g_hi: float,
               probes: int = 16) -> float | None:
    """The first root of ``g`` in ``(lo, hi]`` given ``g(lo) = g_lo``, ``g(hi) = g_hi``.

    With a sign change between the ends: Brent's method.  With ``g_lo`` exactly zero (a
    handler left the state on the event surface) the interior is probed at ``probes``
    points for where ``g`` first left zero on the side opposite to ``g_hi``, and the
    root is bracketed after it (the ball rose and fell within one step).  ``None``: no
    departure was seen, ``g`` went straight from zero to ``g_hi``'s side.
    """
    def root(a: float, b: float) -> float:
        return brentq(g, a, b, xtol=1e-13, rtol=1e-14)

    if g_lo != 0.0:
        return root(lo, hi)
    side = g_hi > 0.0
    prev = None
    for k in range(1, probes + 1):
        th = hi if k == probes else lo + (hi - lo) * k / probes
        gk = g_hi if k == probes else g(th)
        if prev is None:
            if gk != 0.0 and (gk > 0.0) != side:
                prev = th  # left zero on the other side: a crossing follows
            continue
        if gk == 0.0 or (gk > 0.0) == side:
            return root(prev, th)
        prev = th
    return None
