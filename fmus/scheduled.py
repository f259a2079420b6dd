r"""An FMI 3 Scheduled Execution FMU as a block: each model partition at its clock's ticks.

A Scheduled Execution FMU (FMI 3.0 chapter 5) is a set of *model partitions*, one per
input clock; the importer's scheduler runs a partition at each tick of its clock:
set the partition's inputs, ``fmi3ActivateModelPartition(clock, t)``, get its outputs.
:class:`FMUScheduledBlock` does this inside a cosim diagram:

* **time-based input clocks** tick on their own: ``constant``/``fixed``/``tunable``
  (periodic: interval and shift from the model description, exact on the 1 ns grid;
  ``clock_intervals=`` sets a fixed/tunable clock's interval where the FMU lets the
  importer, ``fmi3SetIntervalDecimal``; without an ``intervalDecimal`` the FMU is
  asked, ``fmi3GetIntervalDecimal``/``fmi3GetShiftDecimal``), ``changing`` (the FMU gives
  the next interval after each tick) and ``countdown`` (the FMU announces a tick through
  its clockUpdate callback; an interval 0 runs the partition at the same instant, after
  the one that announced it).  The block stops the simulator exactly there (one dynamic
  time event, :meth:`~cosim.block.Block.declare_dynamic_time_event`);
* **triggered input clocks** get an input port of their name: the clock ticks at each
  major time point where that input *increases* (a Boolean or pulse going true, a tick
  counter stepping up; the value before the start counts as 0).  Connect another SE
  block's output clock port, a ``Pulse`` or a ``FromArrays`` step source;
* **output clocks** are output ports of their name holding the number of ticks so far
  (int64, +1 per tick: connect one to a triggered input clock of another SE block);
  :attr:`FMUScheduledBlock.events` lists every activation and output clock tick as
  ``(time, clock name)``;
* partitions due at the same instant run in the order of their clocks' ``priority``
  (lower value first, as FMI 3.0 section 5.1 asks of a scheduler);
* before a partition runs, its inputs (the inputs clocked by its clock and the unclocked
  ones, as section 5.2.1 allows) are set from the input ports, and tunable parameters
  that changed; after it, its outputs (clocked by its clock, and the unclocked ones) are
  read.  Outputs hold their value between activations; an output clocked by a clock
  that has not ticked yet holds its start value (or 0);
* parameters and ``start=`` values as in :class:`~fmus.fmu_block.FMUBlock` (FMI 3
  structural parameters in Configuration Mode); the FMU is initialized at the start time
  with the input ports' values (again, with the values its sources then give, if they had
  not run yet).

Data exchange at a tick (the block's outputs depend on no input at the same evaluation,
so a loop through the FMU is never an algebraic loop)::

    t:              t_k-                     t_k (the partition ran)
    inputs u:       evaluated at t_k  --->   set, fmi3ActivateModelPartition(c, t_k)
    outputs y:      y(t_k-) (held)           y(t_k), seen by the rest of the diagram
                                             from t_k on (recorded at t_k)

A partition reads its inputs at its own tick after every block upstream of it with an
event at that instant (another SE block's partition, a Model Exchange FMU's time event)
has handled it: chains of SE FMUs ticking together pass values without delay.  A value
fed back from the FMU's own outputs (directly or through other blocks) is the one from
before the instant.

Ports
-----
=====  ===============================  ==============================================
in     each FMU ``input``               FMU type (Float as float, integers exact,
                                        Boolean); unconnected: start value
in     each triggered input clock       float; the clock ticks where it increases;
                                        unconnected: never ticks
out    each FMU ``output``              held between the partitions that compute it
out    each output clock                int64: its number of ticks so far
=====  ===============================  ==============================================

Limitations
-----------
* Partitions run one after another in simulated time (no preemption, no real-time
  threads: ``lockPreemption``/``unlockPreemption`` are empty).  FMI's concurrency is not
  exercised; the results are those of a synchronous scheduler, as upstream's
  ``scs_synchronous`` importer example.
* Ticks land on the 1 ns grid (the FMU is told the exact time); a block with clocks
  disables the simulator's fixed-step fast path (every tick is a stop).
* Triggers are read at major time points: an input that changes between two of them
  (a continuous signal crossing a threshold) ticks its clock at the next one.  Use an
  event-driven source (``Pulse``, ``Step``, ``FromArrays``, another SE block) for exact
  instants.  Two increases at the same instant are one tick.
* Interval and shift *fractions* (``fmi3GetIntervalFraction``) are not used at run
  time (the decimal calls are); the XML's ``intervalCounter``/``resolution`` are.
* A tunable clock's interval is set only at initialization (``clock_intervals=``);
  a tunable parameter changed during a run is set before the next activation, and a
  tunable clock whose interval the FMU computes is asked for it then.
* Output-clock ticks are read in the clockUpdate callback only (FMI 3.0 section 5.2.2);
  an FMU that ticks an output clock without calling it is not seen.
* The FMU state (``canGetAndSetFMUState``) serves checkpoints and rollback; without it a
  snapshot of a context holding the block is refused (an opaque state without hooks).
* When the diagram records both sides of events (it holds a Model Exchange FMU), an
  instant where a partition waits for an upstream block's event adds one intermediate
  sample there; a run that an upstream block ends at an instant (``terminateSimulation``)
  ends before a partition waiting at that instant runs.
* String and Binary variables are not ports (``start=`` values).
* Out of process (``out_of_process=True``, :mod:`fmus.remote` forwards the Scheduled
  Execution calls ``_SE_CALLS``) every activation is one round trip to the child.
"""

from __future__ import annotations

import copy
import os
import weakref
from typing import Any

import numpy as np

from cosim.block import Block, did_you_mean

from .errors import FMUCallError, FMUConfigError, FMUError
from .fmu_file import FMUFile as FMU
from .instance import (
    check_value,
    port_dtype,
    set_before_init,
)
from .opening import declare_inputs, declare_parameters, open_instance
from .port_values import Unconnected, input_values, late_inputs
from .se_clocks import (
    CHANGED,
    NOT_YET_KNOWN,
    ClockTimer,
    check_no_clocks,  # noqa: F401 - the ME/CS refusal
    exact,
)
from .se_ticks import SETicks

__all__ = ["FMUScheduledBlock", "check_no_clocks"]

#: the driver calls a Scheduled Execution block makes (out of process: forwarded ones)
_SE_CALLS = ("se_activate", "get_intervals", "get_shifts", "set_intervals")
_PORT_KINDS = ("real", "int", "bool")


def _zero(var: Any) -> Any:
    if var.shape:
        return np.zeros(var.shape, dtype=port_dtype(var))
    return {"real": 0.0, "int": 0, "bool": False}[var.kind]


class _Run:
    """What one run of the block changes (copied into saved states)."""

    def __init__(self, t0_ticks: int, timers: list, y: list, trig: dict) -> None:
        self.t0 = t0_ticks
        self.floor = t0_ticks          # the latest tick the block handled
        self.timers = timers           # ClockTimer per input clock (same order)
        self.y = y                     # output port values
        self.trig = trig               # triggered clock name -> last input value seen
        self.pushed: dict = {}         # tunable parameter values the FMU has
        self.init_u: list = []         # input values given at initialization
        self.n_events = 0


class FMUScheduledBlock(Block):
    """A Scheduled Execution FMU as a :class:`~cosim.block.Block` (see the module
    docstring).

    Parameters
    ----------
    fmu : FMU or path
    name : str, optional
        Block name (default: the model name).
    parameters, start : dict, optional
        As for :class:`~fmus.fmu_block.FMUBlock`: parameter defaults, and start values of
        any variable FMI lets an importer set before initialization.
    clock_intervals : dict, optional
        ``{clock: interval_s}`` for ``fixed`` and ``tunable`` input clocks whose
        model description gives an ``intervalDecimal`` (the importer may choose the
        interval, ``fmi3SetIntervalDecimal`` at initialization).
    out_of_process, timeout_s, call_log, logging_on
        As for :class:`~fmus.subsystem.FMUSubsystem`.
    tolerance : float, optional
        The relative tolerance given to ``fmi3EnterInitializationMode`` (default: none).
    check : bool
        Check the FMU's instantiation token now (:meth:`fmus.fmu_file.FMUFile.check_instance`:
        free when the token occurs in the binary, else one instantiate-and-free), so a
        wrong token is a build error, not a failure at the first step.

    Attributes
    ----------
    events : list of (float, str)
        Every partition activation (its input clock's name) and output clock tick (the
        output clock's name), in order, with the exact time.
    """

    def __init__(self, fmu: FMU | str | os.PathLike, name: str | None = None, *,
                 check: bool = True,
                 parameters: dict | None = None, start: dict | None = None,
                 clock_intervals: dict | None = None, out_of_process: bool = False,
                 timeout_s: float | None = 10.0, call_log: Any = None,
                 logging_on: bool = False, tolerance: float | None = None) -> None:
        op = open_instance(fmu, "ScheduledExecution", name, kind="block", check=check,
                           parameters=parameters, start=start, out_of_process=out_of_process,
                           timeout_s=timeout_s, call_log=call_log, logging_on=logging_on)
        super().__init__(op.name)
        fmu, info = self.fmu, self.info = op.fmu, op.info
        self.inst = op.inst
        self.tolerance = tolerance
        owner = op.owner
        self.can_save = bool(op.caps.get("canGetAndSetFMUstate"))
        if out_of_process:
            from . import remote
            missing = [m for m in _SE_CALLS if m not in getattr(remote, "_FORWARDED", ())]
            if missing:
                raise FMUConfigError(
                    f"{owner}: out_of_process=True is not available for Scheduled Execution "
                    f"yet: the out-of-process driver does not forward {', '.join(missing)} "
                    "(fmus/remote.py); run the FMU in process")
        # --- clocks
        self.in_clocks = [v for v in info.clocks if v.causality == "input"]
        self.out_clocks = [v for v in info.clocks if v.causality == "output"]
        if not self.in_clocks:
            raise FMUConfigError(f"{owner}: FMU '{fmu.path.name}' offers Scheduled Execution "
                                 "but declares no input clock, so it has no model partition "
                                 "to run; its model description is incomplete")
        self._intervals = self._check_intervals(clock_intervals or {}, owner)
        self._triggered = [v for v in self.in_clocks
                           if v.clock.interval_variability == "triggered"]
        bad = [v for v in self.in_clocks if v.clock.interval_variability not in (
            "constant", "fixed", "tunable", "changing", "countdown", "triggered")]
        if bad:
            raise FMUConfigError(f"{owner}: input clock {bad[0].name!r} has "
                                 f"intervalVariability={bad[0].clock.interval_variability!r}"
                                 "; FMI 3 defines constant, fixed, tunable, changing, "
                                 "countdown and triggered")
        # --- parameters and start values (as FMUBlock)
        self._params = declare_parameters(self, op)
        self._tunable = [(v, h) for v, h in self._params if v.variability == "tunable"]
        self._param_keys: dict = {}
        self._start_values = op.other_starts()
        # --- input ports (an unconnected one holds its start value, or zero)
        self.in_vars = [v for v in info.inputs if v.kind in _PORT_KINDS]
        self._in_ports = declare_inputs(self, op, self.in_vars, fill=_zero)
        self._trig_ports = {v.name: self.declare_input(
            v.port, dtype=float, default=0.0,
            description=f"triggered input clock {v.name}: ticks where this input increases")
            for v in self._triggered}
        # --- output ports: data outputs, then output clocks (tick counts)
        self.out_vars = [v for v in info.outputs if v.kind in _PORT_KINDS]
        specs = [dict(name=v.port, shape=v.shape, dtype=port_dtype(v), unit=v.unit,
                      description=v.description) for v in self.out_vars]
        specs += [dict(name=v.port, dtype=np.int64,
                       description=f"output clock {v.name}: number of ticks so far")
                  for v in self.out_clocks]
        self.declare_outputs(specs, self._outputs, depends_on=())
        self._out_index = {v.name: i for i, v in enumerate(self.out_vars)}
        self._oc_index = {v.vr: len(self.out_vars) + i for i, v in enumerate(self.out_clocks)}
        self._oc_name = {v.vr: v.name for v in self.out_clocks}
        # --- value-reference sets per partition (registered once, reused every run)
        self._in_sets = {c.name: self._register_inputs(lambda v, c=c: c.name in v.clocks
                                                       or not v.clocks)
                         for c in self.in_clocks}
        self._all_in = self._register_inputs(lambda v: True)
        self._out_sets = {c.name: self._register_outputs(lambda v, c=c: c.name in v.clocks
                                                         or not v.clocks)
                          for c in self.in_clocks}
        self._oc_sets = {c.vr: self._register_outputs(lambda v, c=c: c.name in v.clocks)
                         for c in self.out_clocks}
        initial = {u.variable.name for u in (getattr(info.md, "initialUnknowns", None) or [])
                   if getattr(u, "variable", None) is not None}
        self._init_outs = [v for v in self.out_vars if not v.clocks or v.name in initial]
        self._init_set = self._register_outputs(lambda v: v in self._init_outs)
        self._countdown_vrs = [v.vr for v in self.in_clocks
                               if v.clock.interval_variability == "countdown"]
        self._out_clock_vrs = [v.vr for v in self.out_clocks]
        # --- scheduling and state
        # --- when the partitions run (an object the block holds: fmus/se_ticks.py)
        ticks = self.se_ticks = SETicks(
            self, owner=self.name, fmu_name=fmu.path.name, in_clocks=self.in_clocks,
            triggered=self._triggered, trig_ports=self._trig_ports,
            sets={"in": self._in_sets, "out": self._out_sets, "oc": self._oc_sets,
                  "out_clock_vrs": self._out_clock_vrs, "countdown_vrs": self._countdown_vrs},
            out_index=self._out_index, oc_index=self._oc_index, oc_name=self._oc_name,
            tunable=self._tunable, param_keys=self._param_keys)
        self.declare_dynamic_time_event(ticks.next_time, ticks.on_tick, name="clock_tick")
        self.declare_initial_check(self._initial_inputs_check)
        if self.can_save:
            self.fmu_state = self.declare_opaque_state("fmu", self._save, self._restore,
                                                       self._save_into)
        else:
            self.fmu_state = self.declare_opaque_state("fmu")
        self._ctx: Any = None
        self._run: _Run | None = None
        self._y: tuple = ()
        self._stash: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._starts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.events: list[tuple[float, str]] = []

    # ---------------------------------------------------------- set-up
    def _check_intervals(self, given: dict, owner: str) -> dict:
        """``clock_intervals=`` by clock name, where FMI lets the importer set them."""
        out = {}
        names = [v.name for v in self.in_clocks]
        for key, value in given.items():
            var = next((v for v in self.in_clocks if key in (v.name, v.port)), None)
            if var is None:
                raise FMUConfigError(f"{owner}: clock_intervals names {key!r}, which is not "
                                     "an input clock of FMU "
                                     f"'{self.fmu.path.name}'; {did_you_mean(key, names)}")
            c = var.clock
            if c.interval_variability not in ("fixed", "tunable") or (
                    c.interval is None and c.interval_counter is None):
                why = (f"a {c.interval_variability} clock" if c.interval_variability
                       not in ("fixed", "tunable") else
                       f"a {c.interval_variability} clock without intervalDecimal (the FMU "
                       "computes its interval)")
                raise FMUConfigError(f"{owner}: clock_intervals[{key!r}]: {var.name!r} is "
                                     f"{why}; FMI lets the importer set the interval only of "
                                     "fixed and tunable clocks that declare intervalDecimal")
            iv = float(value)
            if not iv > 0:
                raise FMUConfigError(f"{owner}: clock_intervals[{key!r}] must be > 0 s, got "
                                     f"{value!r}")
            out[var.name] = iv
        return out

    def _register_inputs(self, keep: Any) -> list:
        groups: dict[str, list] = {}
        for v in self.in_vars:
            if keep(v):
                groups.setdefault(v.type, []).append(v)
        return [(self.inst.register(t, [v.vr for v in vs], sum(v.size for v in vs)), vs,
                 [self._in_ports[v] for v in vs]) for t, vs in groups.items()]

    def _register_outputs(self, keep: Any) -> list:
        groups: dict[str, list] = {}
        for v in self.out_vars:
            if keep(v):
                groups.setdefault(v.type, []).append(v)
        return [(self.inst.register(t, [v.vr for v in vs], sum(v.size for v in vs)), vs)
                for t, vs in groups.items()]

    # ------------------------------------------------------------ runs
    # ----------------------------- host of its ticks (fmus.se_ticks.SEHost)
    def sync(self, ctx: Any) -> _Run:
        """The run of ``ctx``: the current one, a stashed or saved one, or a new run."""
        if ctx is not self._ctx:
            self._switch(ctx)
        elif ctx.ticks < self._run.floor:  # time went back without a rollback: new run
            self._start_run(ctx)
        return self._run

    def _switch(self, ctx: Any) -> None:
        prev = self._ctx
        if prev is not None and self.can_save and self.inst.initialized \
                and not self.inst.broken:
            self._stash[prev] = self._save()
        self._ctx = None
        token = self._stash.pop(ctx, None)
        if token is None and ctx not in self._starts:  # a copy of a context: its snapshot
            token = getattr(ctx, "_opaque", {}).get(self.fmu_state)
        if token is not None and token.generation == self.inst.generation:
            self._ctx = ctx
            self._restore(token)
            return
        if ctx in self._starts and ctx.ticks > self._starts[ctx]:
            from cosim.errors import ContextError
            why = ("its saved state is gone (the instance was restarted after an error)"
                   if self.can_save else f"FMU '{self.fmu.path.name}' cannot save its state "
                   "to resume it (canGetAndSetFMUState is false)")
            raise ContextError(
                f"block '{self.path}': this context was left mid-run for another one, and "
                f"{why}; finish one run before starting another, or use one block per context")
        self._ctx = ctx
        self._start_run(ctx, partial=True)

    def _start_run(self, ctx: Any, partial: bool = False) -> None:
        """Initialize the FMU at the context's time with its current inputs, set in
        Initialization Mode.  ``partial`` (started by the block's output at the start time):
        inputs whose sources have not run yet take their start values until the initial
        check initializes again with all (:func:`fmus.port_values.late_inputs`)."""
        late = late_inputs(self, ctx.plan, [p for _, _, ports in self._all_in
                                            for p in ports]) if partial else ()
        inst = self.inst
        drv = inst.start()
        self.events = []
        t0 = ctx.time
        self._starts[ctx] = ctx.ticks
        timers = [ClockTimer.for_clock(v, i) for i, v in enumerate(self.in_clocks)]
        y = [check_value(v, v.start, self.name) if v.start is not None else _zero(v)
             for v in self.out_vars] + [0] * len(self.out_clocks)
        run = _Run(ctx.ticks, timers, y, {v.name: 0.0 for v in self._triggered})
        try:
            params = {v: ctx.param(h) for v, h in self._params}
            set_before_init(inst, self._param_keys, params, self._start_values)
            run.pushed = {v: params[v] for v, _ in self._tunable}
            drv.enter_initialization(t0, self.tolerance, None)
            if self._intervals:
                vrs = [v.vr for v in self.in_clocks if v.name in self._intervals]
                drv.set_intervals(vrs, [self._intervals[v.name] for v in self.in_clocks
                                        if v.name in self._intervals])
            for key, vs, ports in self._all_in:
                vals = [x for v, p in zip(vs, ports)
                        for x in input_values(Unconnected() if p in late else ctx, [v], [p])]
                drv.set(key, vals)
                run.init_u.append(vals)
            self._place_timers(drv, timers, t0)
            for key, vs in self._init_set:
                self.se_ticks.store(run, vs, drv.get(key))
            drv.exit_initialization()
            inst.initialized = True
        except FMUError:
            inst.broken = True
            raise
        self._run = run
        self._y = tuple(run.y)

    def _place_timers(self, drv: Any, timers: list, t0: float) -> None:
        """Intervals and shifts of the time-based clocks, in Initialization Mode."""
        for v, tm in zip(self.in_clocks, timers):
            c = v.clock
            iv = c.interval_variability
            if tm.kind == "periodic":
                if v.name in self._intervals:
                    interval: Any = self._intervals[v.name]
                elif c.interval_counter is not None and c.resolution:
                    interval = exact(c.interval_counter) / c.resolution
                elif c.interval is not None:
                    interval = c.interval
                else:  # fixed/tunable without intervalDecimal: the FMU computes it
                    (val, q), = drv.get_intervals([v.vr])
                    if q == NOT_YET_KNOWN:
                        raise FMUCallError(
                            f"FMU '{self.fmu.path.name}': fmi3GetIntervalDecimal of the "
                            f"{iv} clock {v.name!r} says 'not yet known' in Initialization "
                            "Mode (FMI 3 allows that for countdown clocks only)",
                            "fmi3GetIntervalDecimal", "error", t0)
                    interval = val
                if c.shift_counter is not None and c.resolution:
                    shift: Any = exact(c.shift_counter) / c.resolution
                elif c.shift is not None:
                    shift = c.shift
                elif c.interval is None and c.interval_counter is None:
                    shift = drv.get_shifts([v.vr])[0]
                else:
                    shift = 0
                try:
                    tm.start(t0, interval, shift)
                except ValueError as exc:
                    raise FMUConfigError(f"block '{self.name}': FMU '{self.fmu.path.name}': "
                                         f"{exc}") from None
            elif tm.kind in ("changing", "countdown"):
                (val, q), = drv.get_intervals([v.vr])
                if q == CHANGED or (q != NOT_YET_KNOWN and tm.kind == "changing"):
                    self.se_ticks.schedule(tm, t0, val)

    def _initial_inputs_check(self, ctx: Any) -> bool:
        """After the start outputs are evaluated: initialize again if the inputs given at
        initialization were not yet their sources' values (the block ran first)."""
        if ctx is not self._ctx or not self._all_in or self._run is None \
                or self._run.n_events or self.events:
            return False
        now = [input_values(ctx, vs, ports) for _, vs, ports in self._all_in]
        if now != self._run.init_u:
            self._start_run(ctx)
            return True
        return False

    # ----------------------------------------------------- state hooks
    def _save(self) -> Any:
        if not self.inst.initialized or self.inst.drv is None or self._run is None:
            return None
        return self.inst.save((copy.deepcopy(self._run), len(self.events)))

    def _save_into(self, token: Any) -> Any:
        """:meth:`_save` into a token only the caller holds (a master's rollback slot)."""
        if not self.inst.initialized or self.inst.drv is None or self._run is None:
            return None
        return self.inst.save((copy.deepcopy(self._run), len(self.events)), into=token)

    def _restore(self, token: Any) -> None:
        if token is None:
            self.inst.initialized = False
            self._ctx = None
            return
        self.inst.restore(token)
        run, n = token.extra
        self._run = copy.deepcopy(run)
        del self.events[n:]
        self._y = tuple(self._run.y)

    # ---------------------------------------------------------- outputs
    def publish(self, run: _Run) -> None:
        """The run's output values changed: the block's outputs from now."""
        self._y = tuple(run.y)

    def _outputs(self, ctx: Any) -> tuple:
        self.sync(ctx)
        return self._y

    # ------------------------------------------------------------- misc
    def free(self) -> None:
        """Free the FMU instance now (the next evaluation starts a new one)."""
        self.inst.free()
        self._ctx = None

    def describe_fmu(self) -> str:
        """The FMU's metadata and ports (``print(block.describe_fmu())``)."""
        return str(self.info)

    def subsystem_hint(self) -> str:
        """Why this block is not a master's subsystem and what to give instead."""
        from .fmu_block import subsystem_hint
        return subsystem_hint(self.fmu, "block", "ScheduledExecution")

    def clock_ticks(self, clock: str) -> list[float]:
        """The times at which ``clock`` (an input clock: its partition ran; an output
        clock: it ticked) ticked in the current run."""
        names = [v.name for v in self.in_clocks + self.out_clocks]
        var = next((v for v in self.in_clocks + self.out_clocks
                    if clock in (v.name, v.port)), None)
        if var is None:
            raise FMUConfigError(f"block '{self.name}': no clock {clock!r}; "
                                 + did_you_mean(clock, names))
        return [t for t, c in self.events if c == var.name]

