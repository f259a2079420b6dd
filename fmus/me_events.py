"""Event handling of a Model Exchange FMU block (a mixin of :class:`~fmus.FMUBlock`).

The dynamic time event ``fmu_event`` (the FMU's ``nextEventTime``, and "now" for step
events, tunable-parameter changes and termination requests), the monitor after each
accepted step (``completedIntegratorStep``, tunable-parameter changes), the event
iteration at state, time and step events, termination (``terminateSimulation`` ends the
run cleanly through :class:`~cosim.errors.SimulationTerminated`), and the nudge that
makes the FMU see a located state event (the limitations are in :mod:`fmus.fmu_block`).

It uses the block's instance (``inst``), its cached evaluation (``_full``, ``_point``,
``_B``, ``_x``, ``_t``), its event bookkeeping (``_pending``, ``_t_next``,
``_terminated``, ``_floor``, ``events``) and parameters (``_params``, ``_param_keys``,
``_tunable``, ``_pushed_params``, ``_pending_params``), all set up by
:class:`~fmus.FMUBlock`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.errors import SimulationTerminated

from .errors import FMUError
from .instance import set_variables

_INF = math.inf


def _differs(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return not np.array_equal(np.asarray(a), np.asarray(b))
    return a != b


class MEEvents:
    """Event methods of :class:`~fmus.FMUBlock` (module docstring)."""

    def _next_event_time(self, ctx: Any) -> float:
        """When the simulator must stop for this FMU: its time event, or now."""
        if ctx is not self._ctx:
            self._point(ctx)
        return min(self._t_next, self._pending)

    def _after_step(self, ctx: Any) -> None:
        """Monitor: completedIntegratorStep and tunable parameter changes."""
        if self._terminated:
            return
        if self.needs_completed:
            if self._B is None or self._B[0] != ctx.time:
                self._full(ctx)
            try:
                enter, terminate = self.inst.drv.completed_step(not self.can_save)
            except FMUError:
                self.inst.broken = True
                raise
            if terminate:
                self._request_termination(ctx.time)
            elif enter:
                self._pending = min(self._pending, ctx.time)
        for v, h in self._tunable:
            if _differs(ctx.param(h), self._pushed_params.get(v)):
                self._pending_params = True
                self._pending = min(self._pending, ctx.time)
                break

    def _request_termination(self, t: float) -> None:
        """The FMU asked to terminate: the run ends at ``t`` (through ``fmu_event``)."""
        self._terminated = True
        self._term_time = t
        self._pending = min(self._pending, t)

    def _terminate_now(self) -> SimulationTerminated:
        return SimulationTerminated(
            f"FMU '{self.fmu.path.name}' asked to terminate the simulation "
            f"(terminateSimulation) at t = {self._term_time:.9g} s", self.path)

    # ------------------------------------------------------------ events
    def _on_state_event(self, ctx: Any) -> None:
        self._event(ctx, "state")

    def _on_pending_event(self, ctx: Any) -> None:
        if self._terminated:
            raise self._terminate_now()
        t_next = self._t_next
        kind = "time" if ctx.time >= t_next - 1e-12 * max(1.0, abs(t_next)) else "step"
        self._event(ctx, kind)

    def _event(self, ctx: Any, kind: str) -> None:
        t = ctx.time
        B = self._full(ctx)
        x = B[1]
        drv = self.inst.drv
        try:
            if kind == "state" and self.nx:
                x = self._nudge(B)
            if kind == "time" and self._t_next > t:
                drv.set_time(self._t_next)  # never before the event instant
            drv.enter_event_mode()
            if self._pending_params:
                params = {v: ctx.param(h) for v, h in self._params
                          if v.variability == "tunable"}
                set_variables(self.inst, self._param_keys, params)
                self._pushed_params.update(params)
                self._pending_params = False
            terminate, changed, t_next = drv.event_iteration()
            drv.enter_continuous_mode()
            x_new = drv.get_states() if self.nx else None
        except FMUError:
            self.inst.broken = True
            raise
        self.events.append((t, kind))
        self._t_next = _INF if t_next is None else t_next
        if not self._terminated:
            self._pending = _INF
        if self.nx and (changed or x != ctx.state(self.xh).tolist()):
            ctx.set_state(self.xh, x_new)
        self._reset_cache(inputs=False)
        self._floor = t
        if terminate:
            self._request_termination(t)
            raise self._terminate_now()

    def _nudge(self, B: tuple) -> list:
        """The state at a located state event, moved along ``dx`` if needed so that the
        crossing indicator has changed sign (the root finder may stop just before it)."""
        x, dx, z = B[1], B[3], B[4]
        if not self.nz or dx is None:
            return x
        sign = [zi > 0.0 for zi in z]
        drv = self.inst.drv

        def flipped(delta: float) -> bool:
            xn = [a + b * delta for a, b in zip(x, dx)]
            _, zn, _ = drv.me_eval(None, xn, [], False, True, [])
            self._x = xn
            return any((zi > 0.0) != s for zi, s in zip(zn, sign))

        delta = 1e-9
        if flipped(-delta):  # already past the crossing: nothing to do
            drv.set_states(x)
            self._x = x
            return x
        while delta <= self.nudge_max_s:
            if flipped(delta):
                return list(self._x)
            delta *= 4.0
        drv.set_states(x)
        self._x = x
        return x

