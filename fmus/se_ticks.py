"""When the partitions of a Scheduled Execution block run: an object the block holds
(:class:`SETicks`, ``block.se_ticks``), using the block only through :class:`SEHost`.

The block's one dynamic time event ``clock_tick``: its next instant (the earliest tick of
any time-based input clock, or now when a triggered clock's input rose), the wait for
blocks upstream with an event at the same instant (so that a partition reads their values
after it, see :mod:`fmus.scheduled`), and the handler that runs the partitions due, by
priority, with the countdown clocks the FMU announces during them, the intervals of
changing clocks, and tunable parameters and intervals.

It is made with the block's clocks and value-reference sets, and reaches the block's run
(``host.sync(ctx)``: timers, held outputs, trigger values), FMU instance, event list and
published outputs through :class:`SEHost` only (a test reads this module for any other
host name: ``tests/unit/test_held_objects.py``).
"""

from __future__ import annotations

import heapq
import math
import weakref
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from .errors import FMUCallError, FMUError
from .instance import port_dtype, set_variables
from .port_values import input_values
from .se_clocks import CHANGED, NOT_YET_KNOWN, TICKS_PER_SECOND, ClockTimer, grid_tick

_INF = math.inf
_NS = 1e-9


class SEHost(Protocol):
    """What :class:`SETicks` may use of its block
    (:class:`~fmus.scheduled.FMUScheduledBlock`)."""

    #: the FMU instance (:class:`~fmus.instance.FMUInstance`: ``drv``, ``broken``)
    inst: Any
    #: the block's input ports by name (:class:`~cosim.block.Block`)
    inputs: dict
    #: every activation and output clock tick as ``(time, clock name)`` (appended to)
    events: list

    def sync(self, ctx: Any) -> Any:
        """The run of ``ctx`` (``timers``, ``y``, ``trig``, ``pushed``, ``floor``,
        ``n_events``), made current."""

    def publish(self, run: Any) -> None:
        """The run's output values ``run.y`` changed: the block's outputs from now."""


class SETicks:
    """Tick handling of a Scheduled Execution block (module docstring).

    Parameters
    ----------
    host : SEHost
        The block.
    owner, fmu_name : str
        The block's name and the FMU's file name (for messages).
    in_clocks, triggered : list
        The input clock variables, and the triggered ones.
    trig_ports : dict
        The input port of each triggered clock, by clock name.
    sets : dict
        The value-reference sets: ``"in"`` and ``"out"`` by input clock name, ``"oc"`` by
        output clock value reference, and the value references ``"out_clock_vrs"`` and
        ``"countdown_vrs"``.
    out_index, oc_index, oc_name : dict
        Where each output variable (by name) and output clock (by value reference) is in
        ``run.y``, and each output clock's name.
    tunable : list of (variable, handle)
        The tunable parameters.
    param_keys : dict
        The value-reference keys of single variables (shared with the block).
    """

    def __init__(self, host: SEHost, *, owner: str, fmu_name: str, in_clocks: list,
                 triggered: list, trig_ports: dict, sets: dict, out_index: dict,
                 oc_index: dict, oc_name: dict, tunable: list, param_keys: dict) -> None:
        self._host = host
        self.name = owner
        self.fmu_name = fmu_name
        self.in_clocks = in_clocks
        self.triggered = triggered
        self.trig_ports = trig_ports
        self.in_sets, self.out_sets, self.oc_sets = sets["in"], sets["out"], sets["oc"]
        self.out_clock_vrs = sets["out_clock_vrs"]
        self.countdown_vrs = sets["countdown_vrs"]
        self.out_index, self.oc_index, self.oc_name = out_index, oc_index, oc_name
        self.tunable = tunable
        self.param_keys = param_keys
        self.deferred = False
        self._upstream_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def store(self, run: Any, vs: list, flat: list) -> None:
        """Output values of variables ``vs`` from the driver's flat values into ``run.y``."""
        i = 0
        for v in vs:
            n = v.size
            run.y[self.out_index[v.name]] = _typed(v, flat[i:i + n])
            i += n

    def schedule(self, tm: ClockTimer, t_ref: float, interval: float) -> None:
        """The timer ``tm``'s next tick ``interval`` after ``t_ref`` (as the FMU says)."""
        try:
            tm.schedule(t_ref, interval)
        except ValueError as exc:
            raise FMUCallError(f"FMU '{self.fmu_name}' instance '{self.name}': {exc}",
                               "fmi3GetIntervalDecimal", "error", t_ref) from None

    def own_next_tick(self, ctx: Any) -> int | None:
        """The next tick this block must run at (its clocks, its triggers), ignoring the
        blocks upstream of it."""
        run = self._host.sync(ctx)
        ticks = [k for k in (tm.next_tick() for tm in run.timers) if k is not None]
        nxt = min(ticks) if ticks else None
        if self.triggered:
            for v in self.triggered:
                x = float(ctx.input(self.trig_ports[v.name]))
                last = run.trig[v.name]
                if x < last:
                    run.trig[v.name] = x  # a fall is no tick; the next rise is
                elif x > last:
                    nxt = ctx.ticks if nxt is None else min(nxt, ctx.ticks)
        return nxt

    def next_time(self, ctx: Any) -> float:
        """The dynamic time event: the next tick of any clock (now: a trigger rose)."""
        nxt = self.own_next_tick(ctx)
        self.deferred = nxt is not None and nxt <= ctx.ticks and self._upstream_busy(ctx)
        return _INF if nxt is None else nxt * _NS

    def upstream(self, plan: Any) -> list:
        """The blocks with dynamic time events whose outputs reach this block's inputs at
        the same instant (through feedthrough), once per plan.  Of two SE blocks upstream
        of each other, the one added later waits for the other."""
        ups = self._upstream_cache.get(plan)
        if ups is not None:
            return ups
        me = self._host
        found: list = []
        seen: set = set()
        stack = [plan.input_slot[p] for p in me.inputs.values() if p in plan.input_slot]
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            node = plan.producer.get(s)
            if node is None:
                continue
            b = node.block
            if b is not None and b is not me and b.dynamic_time_events and b not in found:
                found.append(b)
            stack.extend(node.reads)
        self._upstream_cache[plan] = found  # before the mutual check (it recurses)
        order = {b: i for i, b in enumerate(plan.blocks)}
        ups = [b for b in found if not (_ticks(b) is not None
                                        and me in _ticks(b).upstream(plan)
                                        and order.get(b, 0) > order.get(me, 0))]
        self._upstream_cache[plan] = ups
        return ups

    def _upstream_busy(self, ctx: Any) -> bool:
        """Whether a block upstream has an event at this instant still to handle (this
        block's partitions then wait one round, to read the values after it)."""
        ups = self.upstream(ctx.plan)
        if not ups:
            return False
        now = ctx.ticks
        for b in ups:
            if _ticks(b) is not None:
                k = _ticks(b).own_next_tick(ctx)
                if k is not None and k <= now:
                    return True
                continue
            for e in b.dynamic_time_events:
                t = e.next_time(ctx)
                if t != _INF and t == t and grid_tick(t) <= now:
                    return True
        return False

    def on_tick(self, ctx: Any) -> None:
        """Run the partitions due now, by priority (module docstring)."""
        host = self._host
        run = host.sync(ctx)
        if self.deferred:  # an upstream block handles its event at this instant first
            self.deferred = False
            return
        now = ctx.ticks
        run.floor = now
        due = [tm for tm in run.timers if tm.kind != "triggered"
               and (k := tm.next_tick()) is not None and k <= now]
        for tm in run.timers:
            if tm.kind == "triggered":
                x = float(ctx.input(self.trig_ports[tm.name]))
                if x > run.trig[tm.name]:
                    tm.next_time = now / TICKS_PER_SECOND  # correctly rounded
                    due.append(tm)
                run.trig[tm.name] = x
        if not due:
            return
        drv = host.inst.drv
        try:
            retuned = self._push_tunable(ctx, run, drv)
            self._activate_due(ctx, run, drv, due)
            for tm, interval in retuned:  # after this instant's ticks (they were due)
                try:
                    tm.retune(Fraction(now, TICKS_PER_SECOND), interval)
                except ValueError as exc:
                    raise FMUCallError(f"FMU '{self.fmu_name}': {exc}",
                                       "fmi3GetIntervalDecimal", "error", ctx.time) from None
        except FMUError:
            host.inst.broken = True
            raise
        run.n_events = len(host.events)
        host.publish(run)

    def _push_tunable(self, ctx: Any, run: Any, drv: Any) -> list:
        """Tunable parameters changed since the last activation: set them (Clock Activation
        Mode) and ask the tunable clocks whose interval the FMU computes; returns
        ``[(timer, new interval)]`` (counted from now)."""
        changed = {v: ctx.param(h) for v, h in self.tunable
                   if not _same(ctx.param(h), run.pushed.get(v))}
        if not changed:
            return []
        set_variables(self._host.inst, self.param_keys, changed)
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
        events = self._host.events
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
                    f"FMU '{self.fmu_name}' instance '{self.name}': clock {tm.name!r} "
                    f"would run its partition again at t = {t:.9g} s (last at {tm.last:.9g} "
                    "s); FMI 3 activates a partition once per time instant, with increasing "
                    "times: the FMU's countdown interval asks for what the standard forbids",
                    "fmi3ActivateModelPartition", "error", t)
            sets = [(key, input_values(ctx, vs, ports))
                    for key, vs, ports in self.in_sets[tm.name]]
            out = self.out_sets[tm.name]
            ticked, intervals, vals = drv.se_activate(
                tm.vr, t, sets, [k for k, _ in out], self.out_clock_vrs,
                self.countdown_vrs)
            done.add(tm.name)
            tm.fired(t)
            events.append((t, tm.name))
            for (_, vs), flat in zip(out, vals):
                self.store(run, vs, flat)
            for vr in ticked:
                run.y[self.oc_index[vr]] += 1
                events.append((t, self.oc_name[vr]))
                for key, vs in self.oc_sets[vr]:
                    self.store(run, vs, drv.get(key))
            if tm.kind == "changing":
                (val, q), = drv.get_intervals([tm.vr])
                if q != NOT_YET_KNOWN:
                    self.schedule(tm, t, val)
            for vr, (val, q) in intervals.items():
                cd = timer_of[vr]
                if q == CHANGED:
                    self.schedule(cd, t, val)
                    if cd.next_tick() <= now:
                        heapq.heappush(heap, (cd.priority, cd.order, cd))
                elif q == NOT_YET_KNOWN:
                    cd.next_time = None


def _ticks(block: Any) -> SETicks | None:
    """The tick handling a block holds, if it is a Scheduled Execution block."""
    ticks = getattr(block, "se_ticks", None)
    return ticks if isinstance(ticks, SETicks) else None


def _typed(var: Any, vals: list) -> Any:
    """One output value from its flat driver values."""
    if var.shape:
        return np.asarray(vals, dtype=port_dtype(var)).reshape(var.shape)
    x = vals[0]
    return float(x) if var.kind == "real" else (int(x) if var.kind == "int" else bool(x))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    return a == b
