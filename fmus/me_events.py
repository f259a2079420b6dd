"""The events of a Model Exchange FMU block: an object the block holds
(:class:`MEEvents`, ``block.me_events``), using the block only through :class:`MEHost`.

The dynamic time event ``fmu_event`` (the FMU's ``nextEventTime``, and "now" for step
events, tunable-parameter changes and termination requests), the monitor after each
accepted step (``completedIntegratorStep``, tunable-parameter changes), the event
iteration at state, time and step events, termination (``terminateSimulation`` ends the
run cleanly through :class:`~cosim.errors.SimulationTerminated`), and the nudge that
makes the FMU see a located state event (the limitations are in :mod:`fmus.fmu_block`).

It owns the event bookkeeping of the current run (:attr:`MEEvents.events`, the FMU's next
event time, a pending event, termination, the parameter values the FMU has, the time of
the last event) and saves it with the FMU state (:meth:`MEEvents.extra`).  A test reads
this module for any host name outside :class:`MEHost`
(``tests/unit/test_held_objects.py``).
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from cosim.errors import SimulationTerminated

from .errors import FMUError
from .instance import set_variables

_INF = math.inf


def _differs(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return not np.array_equal(np.asarray(a), np.asarray(b))
    return a != b


class MEHost(Protocol):
    """What :class:`MEEvents` may use of its block (:class:`~fmus.fmu_block.FMUBlock`)."""

    #: the FMU instance (:class:`~fmus.instance.FMUInstance`: ``drv``, ``broken``)
    inst: Any
    #: the block's path (for messages)
    path: str

    def follow(self, ctx: Any) -> None:
        """Make ``ctx`` the context the FMU instance follows (if it is not already)."""

    def evaluate(self, ctx: Any) -> tuple:
        """``(t, x, u, dx, z, outputs)`` of the FMU at the context's point (cached)."""

    def evaluated_time(self) -> float | None:
        """The time of the cached evaluation, or None."""

    def forget(self, inputs: bool = True) -> None:
        """Forget what the FMU was last given (``inputs=False``: keep the inputs)."""

    def note_states(self, x: list) -> None:
        """The FMU now holds the continuous states ``x``."""


class MEEvents:
    """The events of one Model Exchange FMU block (module docstring).

    Parameters
    ----------
    host : MEHost
        The block.
    fmu_name : str
        The FMU's file name (for messages).
    xh : handle or None
        The block's continuous state (None without states).
    nz : int
        The number of event indicators.
    needs_completed, can_save : bool
        The FMU's ``needsCompletedIntegratorStep`` and ``canGetAndSetFMUstate``.
    nudge_max_s : float
        Largest time the state is moved along the derivative at a state event.
    params, tunable : list of (variable, handle)
        The block's FMU parameters, and its tunable ones.
    param_keys : dict
        The value-reference keys of single variables (shared with the block).
    """

    def __init__(self, host: MEHost, *, fmu_name: str, xh: Any, nz: int,
                 needs_completed: bool, can_save: bool, nudge_max_s: float, params: list,
                 tunable: list, param_keys: dict) -> None:
        self._host = host
        self.fmu_name = fmu_name
        self.xh = xh
        self.nz = nz
        self.needs_completed = needs_completed
        self.can_save = can_save
        self.nudge_max_s = nudge_max_s
        self.params = params
        self.tunable = tunable
        self.param_keys = param_keys
        #: every event of the run as ``(time, kind)``: "state", "time" or "step"
        self.events: list[tuple[float, str]] = []
        self.t_next = _INF  # the FMU's next time event
        self.pending = _INF  # an event asked for "now" (step event, parameters, end)
        self.pending_params = False
        self.pushed_params: dict = {}  # the parameter values the FMU has
        self.terminated = False
        self.term_time = _INF
        self.floor = _INF  # the time of the run's start or its last event

    # ------------------------------------------------------------- runs
    def begin(self) -> None:
        """A new run starts: no event yet."""
        self.events = []
        self.terminated = False
        self.pending = _INF
        self.pending_params = False
        self.term_time = _INF

    def extra(self) -> tuple:
        """The bookkeeping saved with the FMU state."""
        return (self.floor, self.t_next, self.pending, self.pending_params,
                dict(self.pushed_params), self.terminated, len(self.events))

    def restore(self, extra: tuple) -> None:
        """Back to the bookkeeping ``extra`` (from :meth:`extra`)."""
        (self.floor, self.t_next, self.pending, self.pending_params, pushed,
         self.terminated, nev) = extra
        self.pushed_params = dict(pushed)
        del self.events[nev:]

    # ---------------------------------------------- time event, monitor
    def next_event_time(self, ctx: Any) -> float:
        """When the simulator must stop for this FMU: its time event, or now."""
        self._host.follow(ctx)
        return min(self.t_next, self.pending)

    def after_step(self, ctx: Any) -> None:
        """Monitor: completedIntegratorStep and tunable parameter changes."""
        if self.terminated:
            return
        host = self._host
        if self.needs_completed:
            if host.evaluated_time() != ctx.time:
                host.evaluate(ctx)
            try:
                enter, terminate = host.inst.drv.completed_step(not self.can_save)
            except FMUError:
                host.inst.broken = True
                raise
            if terminate:
                self.request_termination(ctx.time)
            elif enter:
                self.pending = min(self.pending, ctx.time)
        for v, h in self.tunable:
            if _differs(ctx.param(h), self.pushed_params.get(v)):
                self.pending_params = True
                self.pending = min(self.pending, ctx.time)
                break

    def request_termination(self, t: float) -> None:
        """The FMU asked to terminate: the run ends at ``t`` (through ``fmu_event``)."""
        self.terminated = True
        self.term_time = t
        self.pending = min(self.pending, t)

    def _terminate_now(self) -> SimulationTerminated:
        return SimulationTerminated(
            f"FMU '{self.fmu_name}' asked to terminate the simulation "
            f"(terminateSimulation) at t = {self.term_time:.9g} s", self._host.path)

    # ------------------------------------------------------------ events
    def on_state_event(self, ctx: Any) -> None:
        self._event(ctx, "state")

    def on_pending_event(self, ctx: Any) -> None:
        if self.terminated:
            raise self._terminate_now()
        t_next = self.t_next
        kind = "time" if ctx.time >= t_next - 1e-12 * max(1.0, abs(t_next)) else "step"
        self._event(ctx, kind)

    def _event(self, ctx: Any, kind: str) -> None:
        host = self._host
        t = ctx.time
        B = host.evaluate(ctx)
        x = B[1]
        inst = host.inst
        drv = inst.drv
        has_x = self.xh is not None
        try:
            if kind == "state" and has_x:
                x = self._nudge(B)
            if kind == "time" and self.t_next > t:
                drv.set_time(self.t_next)  # never before the event instant
            drv.enter_event_mode()
            if self.pending_params:
                params = {v: ctx.param(h) for v, h in self.params
                          if v.variability == "tunable"}
                set_variables(inst, self.param_keys, params)
                self.pushed_params.update(params)
                self.pending_params = False
            terminate, changed, t_next = drv.event_iteration()
            drv.enter_continuous_mode()
            x_new = drv.get_states() if has_x else None
        except FMUError:
            inst.broken = True
            raise
        self.events.append((t, kind))
        self.t_next = _INF if t_next is None else t_next
        if not self.terminated:
            self.pending = _INF
        if has_x and (changed or x != ctx.state(self.xh).tolist()):
            ctx.set_state(self.xh, x_new)
        host.forget(inputs=False)
        self.floor = t
        if terminate:
            self.request_termination(t)
            raise self._terminate_now()

    def _nudge(self, B: tuple) -> list:
        """The state at a located state event, moved along ``dx`` if needed so that the
        crossing indicator has changed sign (the root finder may stop just before it)."""
        x, dx, z = B[1], B[3], B[4]
        if not self.nz or dx is None:
            return x
        host = self._host
        sign = [zi > 0.0 for zi in z]
        drv = host.inst.drv
        tried = [x]

        def flipped(delta: float) -> bool:
            xn = [a + b * delta for a, b in zip(x, dx)]
            _, zn, _ = drv.me_eval(None, xn, [], False, True, [])
            host.note_states(xn)
            tried[0] = xn
            return any((zi > 0.0) != s for zi, s in zip(zn, sign))

        delta = 1e-9
        if flipped(-delta):  # already past the crossing: nothing to do
            drv.set_states(x)
            host.note_states(x)
            return x
        while delta <= self.nudge_max_s:
            if flipped(delta):
                return list(tried[0])
            delta *= 4.0
        drv.set_states(x)
        host.note_states(x)
        return x
