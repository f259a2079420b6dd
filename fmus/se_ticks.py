"""When the partitions of a Scheduled Execution block run (a mixin of
:class:`~fmus.scheduled.FMUScheduledBlock`).

The block's one dynamic time event ``clock_tick``: its next instant (the earliest tick of
any time-based input clock, or now when a triggered clock's input rose), the wait for
blocks upstream with an event at the same instant (so that a partition reads their values
after it, see :mod:`fmus.scheduled`), and the handler that runs the partitions due, by
priority, with the countdown clocks the FMU announces during them, the intervals of
changing clocks, and tunable parameters and intervals.

It uses the block's run (``_sync``, ``_run``: timers, held outputs, trigger values),
instance (``inst``), value-reference sets (``_in_sets``, ``_out_sets``, ``_oc_sets``) and
clocks (``in_clocks``, ``_triggered``, ``_trig_ports``), all set up by
:class:`~fmus.scheduled.FMUScheduledBlock`.
"""

from __future__ import annotations

import heapq
import math
from fractions import Fraction
from typing import Any

import numpy as np

from .errors import FMUCallError, FMUError
from .instance import set_variables
from .se_clocks import CHANGED, NOT_YET_KNOWN, TICKS_PER_SECOND, grid_tick

_INF = math.inf
_NS = 1e-9


class SETicks:
    """Tick handling of :class:`~fmus.scheduled.FMUScheduledBlock` (module docstring)."""

    def _own_next_tick(self, ctx: Any) -> int | None:
        """The next tick this block must run at (its clocks, its triggers), ignoring the
        blocks upstream of it."""
        run = self._sync(ctx)
        ticks = [k for k in (tm.next_tick() for tm in run.timers) if k is not None]
        nxt = min(ticks) if ticks else None
        if self._triggered:
            for v in self._triggered:
                x = float(ctx.input(self._trig_ports[v.name]))
                last = run.trig[v.name]
                if x < last:
                    run.trig[v.name] = x  # a fall is no tick; the next rise is
                elif x > last:
                    nxt = ctx.ticks if nxt is None else min(nxt, ctx.ticks)
        return nxt

    def _next_time(self, ctx: Any) -> float:
        """The dynamic time event: the next tick of any clock (now: a trigger rose)."""
        nxt = self._own_next_tick(ctx)
        self._deferred = nxt is not None and nxt <= ctx.ticks and self._upstream_busy(ctx)
        return _INF if nxt is None else nxt * _NS

    def _upstream(self, plan: Any) -> list:
        """The blocks with dynamic time events whose outputs reach this block's inputs at
        the same instant (through feedthrough), once per plan.  Of two SE blocks upstream
        of each other, the one added later waits for the other."""
        ups = self._upstream_cache.get(plan)
        if ups is not None:
            return ups
        found: list = []
        seen: set = set()
        stack = [plan.input_slot[p] for p in self.inputs.values() if p in plan.input_slot]
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            node = plan.producer.get(s)
            if node is None:
                continue
            b = node.block
            if b is not None and b is not self and b.dynamic_time_events and b not in found:
                found.append(b)
            stack.extend(node.reads)
        self._upstream_cache[plan] = found  # before the mutual check (it recurses)
        order = {b: i for i, b in enumerate(plan.blocks)}
        ups = [b for b in found if not (isinstance(b, SETicks)
                                        and self in b._upstream(plan)
                                        and order.get(b, 0) > order.get(self, 0))]
        self._upstream_cache[plan] = ups
        return ups

    def _upstream_busy(self, ctx: Any) -> bool:
        """Whether a block upstream has an event at this instant still to handle (this
        block's partitions then wait one round, to read the values after it)."""
        ups = self._upstream(ctx.plan)
        if not ups:
            return False
        now = ctx.ticks
        for b in ups:
            if isinstance(b, SETicks):
                k = b._own_next_tick(ctx)
                if k is not None and k <= now:
                    return True
                continue
            for e in b.dynamic_time_events:
                t = e.next_time(ctx)
                if t != _INF and t == t and grid_tick(t) <= now:
                    return True
        return False

    def _on_tick(self, ctx: Any) -> None:
        """Run the partitions due now, by priority (module docstring)."""
        run = self._sync(ctx)
        if self._deferred:  # an upstream block handles its event at this instant first
            self._deferred = False
            return
        now = ctx.ticks
        run.floor = now
        due = [tm for tm in run.timers if tm.kind != "triggered"
               and (k := tm.next_tick()) is not None and k <= now]
        for tm in run.timers:
            if tm.kind == "triggered":
                x = float(ctx.input(self._trig_ports[tm.name]))
                if x > run.trig[tm.name]:
                    tm.next_time = now / TICKS_PER_SECOND  # correctly rounded
                    due.append(tm)
                run.trig[tm.name] = x
        if not due:
            return
        drv = self.inst.drv
        try:
            retuned = self._push_tunable(ctx, run, drv)
            self._activate_due(ctx, run, drv, due)
            for tm, interval in retuned:  # after this instant's ticks (they were due)
                try:
                    tm.retune(Fraction(now, TICKS_PER_SECOND), interval)
                except ValueError as exc:
                    raise FMUCallError(f"FMU '{self.fmu.path.name}': {exc}",
                                       "fmi3GetIntervalDecimal", "error", ctx.time) from None
        except FMUError:
            self.inst.broken = True
            raise
        run.n_events = len(self.events)
        self._y = tuple(run.y)

    def _push_tunable(self, ctx: Any, run: Any, drv: Any) -> list:
        """Tunable parameters changed since the last activation: set them (Clock Activation
        Mode) and ask the tunable clocks whose interval the FMU computes; returns
        ``[(timer, new interval)]`` (counted from now)."""
        changed = {v: ctx.param(h) for v, h in self._tunable
                   if not _same(ctx.param(h), run.pushed.get(v))}
        if not changed:
            return []
        set_variables(self.inst, self._param_keys, changed)
        run.pushed.update(changed)
        out = []
        for v, tm in zip(self.in_clocks, run.timers):
            c = v.clock
            if c.interval_variability == "tunable" and c.interval is None \
                    and c.interval_counter is None:
                (val, q), = drv.get_intervals([v.vr])
                if q == CHANGED:
                    out.append((tm, val))
        return out

    def _activate_due(self, ctx: Any, run: Any, drv: Any, due: list) -> None:
        now = ctx.ticks
        heap = [(tm.priority, tm.order, tm) for tm in due]
        heapq.heapify(heap)
        done: set = set()
        timer_of = {tm.vr: tm for tm in run.timers}
        while heap:
            _, _, tm = heapq.heappop(heap)
            if tm.name in done:
                continue
            t = tm.activation_time()
            if tm.last is not None and not t > tm.last:
                raise FMUCallError(
                    f"FMU '{self.fmu.path.name}' instance '{self.name}': clock {tm.name!r} "
                    f"would run its partition again at t = {t:.9g} s (last at {tm.last:.9g} "
                    "s); FMI 3 activates a partition once per time instant, with increasing "
                    "times: the FMU's countdown interval asks for what the standard forbids",
                    "fmi3ActivateModelPartition", "error", t)
            sets = [(key, _flat_inputs(ctx, vs, ports))
                    for key, vs, ports in self._in_sets[tm.name]]
            out = self._out_sets[tm.name]
            ticked, intervals, vals = drv.se_activate(
                tm.vr, t, sets, [k for k, _ in out], self._out_clock_vrs,
                self._countdown_vrs)
            done.add(tm.name)
            tm.fired(t)
            self.events.append((t, tm.name))
            for (_, vs), flat in zip(out, vals):
                self._store(run, vs, flat)
            for vr in ticked:
                run.y[self._oc_index[vr]] += 1
                self.events.append((t, self._oc_name[vr]))
                for key, vs in self._oc_sets[vr]:
                    self._store(run, vs, drv.get(key))
            if tm.kind == "changing":
                (val, q), = drv.get_intervals([tm.vr])
                if q != NOT_YET_KNOWN:
                    self._schedule(tm, t, val)
            for vr, (val, q) in intervals.items():
                cd = timer_of[vr]
                if q == CHANGED:
                    self._schedule(cd, t, val)
                    if cd.next_tick() <= now:
                        heapq.heappush(heap, (cd.priority, cd.order, cd))
                elif q == NOT_YET_KNOWN:
                    cd.next_time = None


def _flat_inputs(ctx: Any, vs: list, ports: list) -> list:
    """The values of input ports as a flat list for the driver, typed by variable."""
    vals = []
    for v, p in zip(vs, ports):
        x = ctx.input(p)
        kind = v.kind
        if v.shape:
            arr = np.asarray(x).ravel()
            vals.extend(arr.astype(float).tolist() if kind == "real" else
                        [int(a) if kind == "int" else bool(a) for a in arr])
        elif kind == "real":
            vals.append(float(x))
        elif kind == "int":
            vals.append(int(x))
        else:
            vals.append(bool(x))
    return vals


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    return a == b
