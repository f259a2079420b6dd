"""Integer simulation time.

Simulation time is an integer number of nanoseconds (``Ticks``).  Float seconds
appear only at the edges (user input, block equations through ``ctx.time``).
Never accumulate ``t += dt`` in floats: times are ``k * period`` in integers.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .errors import RateError

TICKS_PER_SECOND = 1_000_000_000
SECONDS_PER_TICK = 1.0 / TICKS_PER_SECOND
Ticks = int


def to_ticks(seconds: float, what: str = "time") -> Ticks:
    """Convert seconds to integer ticks, refusing values off the 1 ns grid.

    A float such as ``0.001`` is not exactly representable; it is accepted if
    it is within 1e-6 ns (relative 1e-12) of a whole tick.
    """
    if isinstance(seconds, int) and not isinstance(seconds, bool):
        return seconds * TICKS_PER_SECOND
    if isinstance(seconds, Fraction):
        t = seconds * TICKS_PER_SECOND
        if t.denominator != 1:
            raise RateError(f"{what} = {float(seconds)!r} s is not a whole number of ns")
        return int(t)
    x = float(seconds)
    if not math.isfinite(x):
        raise RateError(f"{what} = {seconds!r} s is not finite")
    t = x * TICKS_PER_SECOND
    k = round(t)
    if abs(t - k) > max(1e-6, 1e-12 * abs(t)):
        raise RateError(
            f"{what} = {seconds!r} s is not a whole number of nanoseconds "
            "(the time resolution is 1 ns); round it to the ns grid")
    return int(k)


def to_seconds(ticks: Ticks) -> float:
    """Convert ticks to float seconds."""
    return ticks / TICKS_PER_SECOND


def base_tick(periods: list[Ticks]) -> Ticks:
    """Greatest common divisor of the periods (and offsets) given, in ticks."""
    g = 0
    for p in periods:
        g = math.gcd(g, int(p))
    return g


def hyperperiod(periods: list[Ticks]) -> Ticks:
    """Least common multiple of the periods, in ticks."""
    h = 1
    for p in periods:
        h = h * int(p) // math.gcd(h, int(p))
    return h


def format_time(ticks: Ticks) -> str:
    """Human-readable time, e.g. ``'1.25 s'`` or ``'100 us'``."""
    s = ticks / TICKS_PER_SECOND
    if ticks == 0:
        return "0 s"
    a = abs(s)
    if a >= 1:
        return f"{s:g} s"
    if a >= 1e-3:
        return f"{s * 1e3:g} ms"
    if a >= 1e-6:
        return f"{s * 1e6:g} us"
    return f"{ticks} ns"
