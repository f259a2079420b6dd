"""The events of a run: located zero crossings, dynamic time events and a termination a
block asked for.

At an event the observers see the value just before it (the left limit) when the run
records both limits (``event_samples="both"``), the handler runs, a multistep solver's
history is void, the outputs are evaluated again.  A handler that raises
:class:`~cosim.errors.SimulationTerminated` ends the run at this instant once the point is
complete (:meth:`RunEvents.check_pending`); a terminal zero crossing ends it at once.

The host (the :class:`~cosim.simulator.Simulator`) is used through ``ctx``, ``stats``,
``program``, ``observers``, ``reset_solver_history`` and the Zeno guard's
``zeno_events`` and ``zeno_span_s``.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from .errors import SimulationTerminated, ZenoError
from .time import SECONDS_PER_TICK, TICKS_PER_SECOND
from .zero_crossings import ZeroCrossings

_NS = SECONDS_PER_TICK


class Terminate(Exception):
    """Ends :meth:`Simulator.advance_to` at the current time: ``event`` is the terminal
    zero crossing or the :class:`SimulationTerminated` a handler raised."""

    def __init__(self, z: Any) -> None:
        what = z.reason if isinstance(z, SimulationTerminated) else \
            f"terminal event '{z.block.path}.{z.name}'"
        super().__init__(what)
        self.event = z


def event_tick(t: float) -> int | None:
    """The first tick at or after ``t`` seconds (None for no event: inf or NaN)."""
    if t == math.inf or t != t:
        return None
    return math.ceil(t * TICKS_PER_SECOND - 1e-3)


class RunEvents:
    """The events of one run (module docstring) of ``host``, for the diagram's leaf
    ``blocks``; ``left``: observers sample the left limit at an event."""

    def __init__(self, host: Any, blocks: list, left: bool) -> None:
        self.host = host
        self.left = left
        #: the declared zero-crossing witnesses (:class:`ZeroCrossings`)
        self.crossings = ZeroCrossings([z for b in blocks for z in b.zero_crossings])
        self.dynamic = [e for b in blocks for e in b.dynamic_time_events]
        #: blocks declare dynamic time events (their next time is asked each step)
        self.has_dynamic = bool(self.dynamic)
        #: the tick of the next dynamic time event, as last asked (:meth:`refresh`)
        self.next_dynamic: int | None = None
        #: the termination a handler asked for, pending until the point is complete
        self.pending: SimulationTerminated | None = None
        self._recent: deque = deque(maxlen=host.zeno_events)

    # ------------------------------------------------------- zero crossings
    def handle(self, z: Any) -> None:
        """A located zero crossing at the current tick: the Zeno guard, observers get the
        values just before it (left limit), then its handler runs."""
        host = self.host
        ctx = host.ctx
        host.stats["events"] += 1
        self.crossings.after_event()
        recent = self._recent
        recent.append(ctx.ticks)
        if len(recent) == recent.maxlen:
            span = (recent[-1] - recent[0]) * _NS
            if span < host.zeno_span_s:
                raise ZenoError(
                    f"zero crossing '{z.block.path}.{z.name}': {recent.maxlen} state events "
                    f"within {span:.3g} s of simulated time, up to t = {ctx.time:.9g} s: "
                    "the events accumulate (Zeno behaviour, e.g. a bouncing ball coming to "
                    "rest) and time cannot advance; give the model a resting mode (stop the "
                    "event when the impact speed falls below a threshold) or end the run "
                    "before this time (Simulator.zeno_events / zeno_span_s set the guard)")
        if self.left:
            self._sample()  # the left value at the event
        if z.handler is not None:
            self._run(z.handler, z.block.path)
        host.reset_solver_history()
        if z.terminal:
            raise Terminate(z)
        if self.dynamic:
            self.refresh()

    def after(self, tick: int) -> None:
        """The point right after an event handled inside a variable step: the outputs
        again, the time events its handler asked for at this instant, the witnesses, the
        observers, a termination the handler asked for."""
        host = self.host
        ctx = host.ctx
        host.program.evaluate(ctx)
        if self.dynamic:
            self.run_dynamic(tick, host.program.outputs)
            self.refresh()
        self.crossings.set_previous(self.crossings.witnesses(ctx))
        self._sample()
        self.check_pending()

    # ----------------------------------------------------- dynamic time events
    def due_tick(self) -> int | None:
        """The tick of the next dynamic time event, asked afresh."""
        ctx = self.host.ctx
        ticks = [event_tick(e.next_time(ctx)) for e in self.dynamic]
        ticks = [k for k in ticks if k is not None]
        return min(ticks) if ticks else None

    def refresh(self) -> None:
        """Ask the blocks for their next dynamic time event again (:attr:`next_dynamic`)."""
        self.next_dynamic = self.due_tick()

    def run_dynamic(self, tick: int, fn: Any) -> None:
        """Run the dynamic time events due at ``tick``: observers get the values just
        before (left limit), handlers run, outputs are evaluated again by ``fn``; until
        none is due (100 rounds, then :class:`ZenoError`)."""
        host = self.host
        ctx = host.ctx
        for rounds in range(100):
            due = [e for e in self.dynamic
                   if (k := event_tick(e.next_time(ctx))) is not None and k <= tick]
            if not due:
                return
            if self.left and rounds == 0:
                self._sample()  # the left value at the event (once per instant)
            for e in due:
                host.stats["events"] += 1
                self._run(e.handler, e.block.path)
            host.reset_solver_history()
            host.program.evaluate(ctx, fn)
            if self.pending is not None:
                return
        raise ZenoError(f"time events at t = {ctx.time:.9g} s: blocks "
                        f"{', '.join(sorted({e.block.path for e in due}))} keep asking for "
                        "another event at the same instant (100 rounds); the event "
                        "iteration between them does not converge")

    # ------------------------------------------------------------ termination
    def check_pending(self) -> None:
        """End the run now if a handler asked for it."""
        if self.pending is not None:
            raise Terminate(self.pending)

    def stopped(self, why: Any, sample: bool = False) -> dict:
        """A block ended the run at the current time (``why``: the terminal zero crossing
        or the :class:`SimulationTerminated` raised by a handler): the observers sample
        the point (a terminal crossing, or ``sample``); ``{"t", "by", "reason"}``."""
        if isinstance(why, SimulationTerminated):
            by, reason = why.source, why.reason
        else:
            by, reason = f"{why.block.path}.{why.name}", "terminal zero crossing"
            sample = True
        if sample:
            self._sample()
        return {"t": self.host.ctx.time, "by": by, "reason": reason}

    def _run(self, handler: Any, path: str) -> None:
        """Run an event's handler; a termination it asks for is kept pending (the first)."""
        try:
            handler(self.host.ctx)
        except SimulationTerminated as exc:
            exc.source = exc.source or path
            self.pending = self.pending or exc

    def _sample(self) -> None:
        host = self.host
        for o in host.observers:
            o.on_sample(host)
