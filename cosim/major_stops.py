"""Where a run must stop, and what it does there by the clock: the sample hits of the rate
groups, the blocks' time events, the manipulators' breakpoints.

(The dynamic time events, whose next time is known only as the run goes, are the run's
events: :mod:`cosim.run_events`.)
"""

from __future__ import annotations

import bisect
from typing import Any


class MajorStops:
    """The stops a run knows ahead.

    Parameters
    ----------
    blocks : list of Block
        The diagram's leaf blocks (their ``time_events``).
    groups : list of RateGroup
        The rate groups (their sample hits).
    manipulators : list
        Write hooks with ``breakpoints()`` and ``at_time(sim, tick)``.
    """

    def __init__(self, blocks: list, groups: list, manipulators: list) -> None:
        self.groups = groups
        self.manipulators = manipulators
        bps: set = set()
        for b in blocks:
            for ev in b.time_events:
                bps.update(ev.times)
        for m in manipulators:
            bps.update(m.breakpoints())
        #: the ticks of time events and manipulators' breakpoints, sorted
        self.breakpoints = sorted(bps)
        self._breakpoint_set = bps
        self._time_events = [(t, ev) for b in blocks for ev in b.time_events
                             for t in ev.times if ev.handler is not None]

    def next_stop(self, tick: int, dynamic: int | None) -> int | None:
        """The first tick after ``tick`` that must be a major point: a sample hit, a time
        event or breakpoint, or ``dynamic`` (the next dynamic time event's tick, moved to
        ``tick + 1`` if already due); None if none."""
        stop = None
        for g in self.groups:
            k = g.next_hit(tick)
            if stop is None or k < stop:
                stop = k
        bps = self.breakpoints
        if bps and bps[-1] > tick:
            k = bps[bisect.bisect_right(bps, tick)]
            if stop is None or k < stop:
                stop = k
        if dynamic is not None:
            k = max(dynamic, tick + 1)
            if stop is None or k < stop:
                stop = k
        return stop

    def act(self, tick: int, sim: Any) -> bool:
        """Run the time events and manipulator actions due at ``tick`` (in that order);
        whether ``tick`` is a breakpoint (a possible discontinuity)."""
        for t, ev in self._time_events:
            if t == tick:
                ev.handler(sim.ctx)
        for m in self.manipulators:
            if tick in m.breakpoints():
                m.at_time(sim, tick)
        return tick in self._breakpoint_set
