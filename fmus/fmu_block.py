r"""A Model Exchange FMU as a block, integrated by cosim's solvers.

:class:`FMUBlock` declares, from the model description:

* an input port per FMU ``input`` and an output port per ``output``
  (Real/Float, Integer, Boolean; FMI 3 arrays as array ports), units mapped
  to cosim units; integers keep their FMI type (``Int64``/``UInt64`` pass as exact
  Python ints, never through float64); each output's ``depends_on`` is its
  ``ModelStructure`` dependencies on inputs (all inputs when the FMU does not say),
  and outputs with the same dependencies are computed by one FMU call;
* an input left unconnected takes the FMU's start value for it (or the ``start=``
  value): an explicit choice of FMI's, not an error;
* the continuous state vector ``x`` = the FMU's continuous states, in FMU
  order, initial value from the FMU (instantiated once at construction when a
  state has no start value);
* a parameter per FMU parameter (default: its start value, or the
  ``parameters=``/``start=`` value), set before each run's initialization (FMI 3
  structural parameters in Configuration Mode); ``tunable`` ones may change during a
  run; other variables FMI lets an importer set (``initial="exact"``/``"approx"``)
  take ``start=`` values before initialization;
* one zero crossing per event indicator (``indicator_<i>``), whose handler
  runs the FMU's event iteration; one dynamic time event ``fmu_event``
  (:meth:`~cosim.block.Block.declare_dynamic_time_event`) at the FMU's
  ``nextEventTime`` exactly (on the first 1 ns tick at or after it), and "now" for
  step events (``completedIntegratorStep`` asking for event mode), tunable
  parameter changes and termination requests;
* initialization with the connected inputs' values, set in Initialization Mode: the FMU
  is initialized at its first evaluation, inputs whose sources run later taking their start
  values then (:func:`~fmus.port_values.late_inputs`: never a zero from a signal not
  computed yet), and again (an initial check) while its inputs differ from those it was
  initialized with (Reals by more than :data:`~fmus.port_values.INIT_RTOL` relative): a
  fixed-point iteration over the diagram;
* ``terminateSimulation`` ends the run cleanly at that time (results kept, the reason
  in ``results.diagnostics["terminated"]``); the simulator records the value before
  and after every event (``event_samples``, as FMPy does);
* the FMU instance as opaque state, saved and restored with
  ``get/setFMUstate`` when the FMU has ``canGetAndSetFMUstate`` (so
  contexts holding it can be checkpointed and rolled back; otherwise a
  snapshot is refused).

The equations are the FMU's:

.. math:: \dot x = f(t, x, u, p),\quad y = g(t, x, u, p),\quad
          \text{events where } z_i(t, x, u, p) \text{ changes sign.}

Before each FMU query the block pushes the context's time, states and inputs
into the FMU, but only what changed since the last push: an RK stage costs one
``setTime``/``setContinuousStates``/``getDerivatives`` round, and an output
or event-indicator query at the same point is answered from the same call.

Ports
-----
======  =================================  =======================================
in      each FMU ``input``                 unit from the FMU's unit definitions
out     each FMU ``output``                depends on the inputs ``ModelStructure``
                                           lists (all when it lists none)
======  =================================  =======================================

Runs and instances
------------------
The block owns one FMU instance.  The first evaluation with a context
initializes it (parameters from the context, start time = the context's
time) and adopts its initial states into the context (unless the context's
state was set to something else, which is then pushed into the FMU).  A new
context, or time going back before the last event without a rollback, starts
a new run on the same instance after ``reset``.  Switching between live
contexts keeps each one's FMU state when the FMU can save it.

Limitations
-----------
* Time events land on the 1 ns tick grid: a ``nextEventTime`` between two ticks is
  handled at the next tick (the FMU is told the exact time it asked for).  A block
  with a dynamic time event disables the simulator's fixed-step fast path.
* With a variable-step solver ``completedIntegratorStep`` is called at the end
  of each accepted step before cosim locates a state event inside that step.
* State events are located by cosim's root finder to the 1 ns tick; if the
  FMU's indicator has not changed sign at the located tick, the state is
  moved along the derivative by up to ``nudge_max_s`` so the FMU sees the
  crossing (as integrators that step over the root do).
* Discrete-variability inputs are set in event mode when they change
  (at the evaluation where the change is seen).
* Directional derivatives serve :meth:`FMUBlock.jacobian` (linearisation); the
  implicit solvers still build their Jacobians by finite differences.
* Saving the FMU state refers to the context the block evaluated last; one
  instance follows the active context (contexts used alternately are swapped
  with get/set FMU state, so only when the FMU can save its state).
* Scalar String and Binary inputs and outputs are ports (``str`` and ``bytes`` values,
  dtype object; a String input changes in event mode, as every discrete input);
  String and Binary arrays are not ports: they take ``start=`` values (and String
  parameters are parameters); FMI 3 clocks and Scheduled Execution are not
  supported here; out of process every evaluation is a round trip (about 0.1 ms).
"""

from __future__ import annotations

import math
import os
import weakref
from typing import Any

import numpy as np

from cosim.block import Block

from .errors import FMUConfigError, FMUError
from .fmu_file import FMUFile as FMU
from .instance import (
    is_port_var,
    port_dtype,
    set_before_init,
)
from .me_events import MEEvents
from .opening import declare_inputs, declare_parameters, open_instance
from .port_values import initial_values, input_values, late_inputs, moved, port_values

__all__ = ["FMUBlock"]

_INF = math.inf


def subsystem_hint(fmu: FMU, block: str, interface: str) -> str:
    """How to give FMU ``fmu``, imported as ``block`` for ``interface``, to a
    :class:`~cosim.master.MasterScheduler` (one sentence, for its refusal)."""
    label = {"ModelExchange": "Model Exchange",
             "ScheduledExecution": "Scheduled Execution"}.get(interface, interface)
    where = f"FMU '{fmu.path.name}' imported for {label}"
    wrap = f"DiagramSubsystem({block}, solver=..., dt=...)"
    if "CoSimulation" in fmu.info.interfaces:
        why = (" (load_fmu's choice when an FMU offers both)"
               if interface == "ModelExchange" else "")
        return (f"it is {where}{why}; for a master load it with "
                f"load_fmu(path, interface='CoSimulation'), or wrap the block, {wrap}")
    return (f"it is {where} and the FMU offers no Co-Simulation interface; wrap the block, "
            f"{wrap}")


class FMUBlock(Block):
    """A Model Exchange FMU as a :class:`~cosim.block.Block` (see the module docstring).

    Parameters
    ----------
    fmu : FMU or path
    name : str, optional
        Block name (default: the model name).
    parameters : dict, optional
        ``{variable: value}`` defaults of the block's parameters (the context can
        still change them).
    start : dict, optional
        ``{variable: value}`` start values of any variable FMI lets an importer set
        before initialization: parameters (as ``parameters=``), inputs (the value of
        an input left unconnected), and variables with ``initial="exact"`` or
        ``"approx"`` (states, String and Binary variables included; Binary as bytes or
        a hex string).
    tolerance : float, optional
        Passed to the FMU at initialization.
    nudge_max_s : float
        Largest time the state is moved along the derivative at a state event
        so that the FMU's indicator shows the crossing.
    out_of_process, timeout_s, call_log, logging_on
        As for :class:`~fmus.subsystem.FMUSubsystem` (every evaluation is then one
        round trip to the child process: slow, for robustness only).
    check : bool
        Check the FMU's instantiation token now (:meth:`fmus.fmu_file.FMUFile.check_instance`:
        free when the token occurs in the binary, else one instantiate-and-free), so a
        wrong token is a build error, not a failure at the first step.
    """

    records_event_limits = True  # the simulator records both sides of every event

    def __init__(self, fmu: FMU | str | os.PathLike, name: str | None = None, *,
                 check: bool = True,
                 parameters: dict | None = None, start: dict | None = None,
                 tolerance: float | None = None,
                 nudge_max_s: float = 1e-6, out_of_process: bool = False,
                 timeout_s: float | None = 10.0, call_log: Any = None,
                 logging_on: bool = False) -> None:
        op = open_instance(fmu, "ModelExchange", name, kind="block", check=check,
                           parameters=parameters, start=start, out_of_process=out_of_process,
                           timeout_s=timeout_s, call_log=call_log, logging_on=logging_on)
        super().__init__(op.name)
        self.fmu, self.info, self.caps, self.inst = op.fmu, op.info, op.caps, op.inst
        info = op.info
        self.tolerance = tolerance
        self.nudge_max_s = nudge_max_s
        self.can_save = bool(op.caps.get("canGetAndSetFMUstate"))
        self.needs_completed = bool(op.caps.get("needsCompletedIntegratorStep"))
        self.in_vars = [v for v in info.inputs if is_port_var(v)]
        self.out_vars = [v for v in info.outputs if is_port_var(v)]
        self.nx = sum(v.size for v in info.states)
        self.nz = info.n_event_indicators
        # --- inputs (an unconnected one holds its start value)
        self._in_ports = declare_inputs(self, op, self.in_vars)
        in_groups: dict[str, list] = {}
        for v in self.in_vars:
            in_groups.setdefault(v.type, []).append(v)
        self._in_groups = [(self.inst.register(t, [v.vr for v in vs], sum(v.size for v in vs)),
                            vs, [self._in_ports[v] for v in vs],
                            any(v.variability == "discrete" or v.kind in ("string", "binary")
                                for v in vs))
                           for t, vs in in_groups.items()]
        # groups of scalar Real inputs are read straight from the signal slots
        self._in_fast = [all(v.kind == "real" and not v.shape for v in vs)
                         for _, vs, _, _ in self._in_groups]
        self._in_slots: list = []
        self._late: set = set()  # inputs whose sources run after this block's first output
        self._partial: tuple | None = None  # (ctx, t0) of a run started before them
        self._sl = slice(0, 0)
        # --- parameters (defaults: start values, or the user's)
        self._params = declare_parameters(self, op)
        self._param_keys: dict = {}
        self._tunable = [(v, h) for v, h in self._params if v.variability == "tunable"]
        # start values of the other settable variables (states, locals, String/Binary)
        self._start_values = op.other_starts()
        self._init_u: dict = {}
        # --- states
        self.x0 = self._initial_states()
        self.xh = self.declare_continuous_state("x", list(self.x0)) if self.nx else None
        # --- outputs, grouped by their input dependencies
        deps: dict[frozenset, list] = {}
        ports_of = {v.name: v.port for v in self.in_vars}
        for v in self.out_vars:
            d = info.feedthrough.get(v.name)
            key = frozenset(ports_of.values()) if d is None else frozenset(
                ports_of[n] for n in d if n in ports_of)
            deps.setdefault(key, []).append(v)
        self._out_groups = []
        for dset, vs in deps.items():
            types: dict[str, list] = {}
            for v in vs:
                types.setdefault(v.type, []).append(v)
            keys = [(self.inst.register(t, [v.vr for v in tv], sum(v.size for v in tv)), tv)
                    for t, tv in types.items()]
            order = [v for _, tv in keys for v in tv]
            needs_inputs = bool(dset)
            idx = len(self._out_groups)
            self._out_groups.append((keys, order, needs_inputs,
                                     all(v.kind == "real" and not v.shape for v in order)))
            specs = [dict(name=v.port, shape=v.shape, dtype=port_dtype(v), unit=v.unit,
                          description=v.description) for v in order]
            self.declare_outputs(specs, lambda ctx, idx=idx: self._outputs(ctx, idx),
                                 depends_on=sorted(dset))
        # --- events (an object the block holds: fmus/me_events.py)
        ev = self.me_events = MEEvents(
            self, fmu_name=self.fmu.path.name, xh=self.xh, nz=self.nz,
            needs_completed=self.needs_completed, can_save=self.can_save,
            nudge_max_s=nudge_max_s, params=self._params, tunable=self._tunable,
            param_keys=self._param_keys)
        for i in range(self.nz):
            self.declare_zero_crossing(lambda ctx, i=i: self.evaluate(ctx)[4][i],
                                       ev.on_state_event, direction=0,
                                       name=f"indicator_{i}")
        self.declare_dynamic_time_event(ev.next_event_time, ev.on_pending_event,
                                        name="fmu_event")
        self.declare_initial_check(self._initial_inputs_check)
        self._ft_groups = [i for i, g in enumerate(self._out_groups) if g[2]]
        self._ft_keys = [k for i in self._ft_groups for k, _ in self._out_groups[i][0]]
        self.declare_monitor(ev.after_step, name="completed_step")
        if self.can_save:
            self.fmu_state = self.declare_opaque_state("fmu", self._save, self._restore,
                                                       self._save_into)
        else:
            self.fmu_state = self.declare_opaque_state("fmu")
        # run-time bookkeeping (one FMU instance follows the active context)
        self._ctx: Any = None
        self._stash: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._seen: weakref.WeakSet = weakref.WeakSet()
        self._starts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.forget()
        self._adopted: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @property
    def events(self) -> list[tuple[float, str]]:
        """Every event of the current run as ``(time, kind)``: "state", "time" or "step"."""
        return self.me_events.events

    # ---------------------------------------------------------- set-up
    def _initial_states(self) -> list:
        if not self.nx:
            return []
        starts = []
        for v in self.info.states:
            x = self._start_values.get(v, v.start)
            if x is None:
                break
            starts.extend(np.ravel(x).tolist())
        else:
            return [float(s) for s in starts]
        # some state has no start value: initialize once to read them
        drv = self.inst.start()
        try:
            set_before_init(self.inst, self._param_keys,
                            {v: h.default for v, h in self._params}, self._start_values)
            drv.enter_initialization(0.0, self.tolerance, None)
            drv.exit_initialization()
            self.inst.initialized = True
            return [float(s) for s in drv.get_states()]
        except FMUError:
            self.inst.broken = True
            raise

    def forget(self, inputs: bool = True) -> None:
        """Forget what the FMU was last given (``inputs=False``: keep the inputs)."""
        self._t: float | None = None
        self._x: list | None = None
        if inputs:
            self._u: dict = {}   # key -> values last set (unknown keys: set again)
        self._A: dict = {}        # group index -> (t, x, values)
        self._B: tuple | None = None  # (t, x, u-tuple, dx, z, {group: values})

    # -------------------------------------------------------- activation
    def _bind(self, ctx: Any) -> None:
        """Where this block's states and inputs live in ``ctx`` (per plan)."""
        plan = ctx.plan
        if self.nx:
            a, b, _ = plan.cstate_index[self.xh]
            self._sl = slice(a, b)
        self._in_slots = [tuple(plan.input_slot[p] for p in ports)
                          for _, _, ports, _ in self._in_groups]
        self._late = late_inputs(self, plan,
                                 [p for _, _, ports, _ in self._in_groups for p in ports])

    def _activate(self, ctx: Any) -> None:
        prev = self._ctx
        if prev is not None and self.can_save and self.inst.initialized \
                and not self.inst.broken:
            self._stash[prev] = self.inst.save(self.me_events.extra())
        self._ctx = None
        token = self._stash.pop(ctx, None)
        seen = ctx in self._seen
        if token is None and not seen:  # a copy of a context: resume from its snapshot
            token = getattr(ctx, "_opaque", {}).get(getattr(self, "fmu_state", None))
        if token is not None and token.generation == self.inst.generation:
            self._bind(ctx)
            self._restore(token)
            self._seen.add(ctx)
            self._ctx = ctx
            return
        if seen and ctx.time > self._starts.get(ctx, -_INF):
            from cosim.errors import ContextError
            why = ("its saved state is gone (the instance was restarted after an error)"
                   if self.can_save else f"FMU '{self.fmu.path.name}' cannot save its state "
                   "to resume it (canGetAndSetFMUstate is false)")
            raise ContextError(
                f"block '{self.path}': this context was left mid-run for another one, and "
                f"{why}; finish one run before starting another, or use one block per "
                "context")
        self._bind(ctx)
        self._seen.add(ctx)
        self._ctx = ctx
        self._start_run(ctx, partial=True)

    def _start_run(self, ctx: Any, partial: bool = False) -> None:
        """Initialize the FMU at the context's time with the inputs' values set in
        Initialization Mode.  ``partial`` (a run started by the block's first output at the
        start time): inputs whose sources have not run yet take their start values until
        the initial check (:meth:`_initial_inputs_check`) initializes again with all."""
        inst = self.inst
        ev = self.me_events
        drv = inst.start()
        self.forget()
        ev.begin()
        t0 = ctx.time
        self._starts[ctx] = t0
        try:
            params = {v: ctx.param(h) for v, h in self._params}
            set_before_init(inst, self._param_keys, params, self._start_values)
            ev.pushed_params = params
            drv.enter_initialization(t0, self.tolerance, None)
            self._init_u = {}
            late = self._late if partial else ()
            self._partial = (ctx, t0) if late else None
            for key, vs, ports, _ in self._in_groups:
                vals = tuple(initial_values(ctx, vs, ports, late))
                drv.set(key, vals)
                self._u[key] = self._init_u[key] = vals
            drv.exit_initialization()
            inst.initialized = True
            terminate, _, t_next = drv.event_iteration()
            drv.enter_continuous_mode()
            x0 = drv.get_states() if self.nx else []
        except FMUError:
            inst.broken = True
            raise
        ev.t_next = _INF if t_next is None else t_next
        self._t = t0
        ev.floor = t0
        if self.nx:
            cur = ctx.state(self.xh).tolist()
            if cur == list(self.x0) or cur == self._adopted.get(ctx):
                ctx.set_state(self.xh, x0)
                self._x = list(x0)
                self._adopted[ctx] = list(x0)
            else:
                self._x = None  # the context's own initial state is pushed
        if terminate:
            ev.request_termination(t0)

    def _initial_inputs_check(self, ctx: Any) -> bool:
        """After the start outputs are evaluated: initialize again if the inputs given at
        initialization were not yet their sources' values (the block ran first)."""
        self._partial = None
        if ctx is not self._ctx or not self._in_groups or not self.inst.initialized:
            return False
        for key, vs, ports, _ in self._in_groups:
            if moved(self._init_u.get(key), tuple(input_values(ctx, vs, ports))):
                self._start_run(ctx)
                return True
        return False

    def _save(self) -> Any:
        if not self.inst.initialized or self.inst.drv is None:
            return None
        return self.inst.save(self.me_events.extra())

    def _save_into(self, token: Any) -> Any:
        """:meth:`_save` into a token only the caller holds (a master's rollback slot)."""
        if not self.inst.initialized or self.inst.drv is None:
            return None
        return self.inst.save(self.me_events.extra(), into=token)

    def _restore(self, token: Any) -> None:
        if token is None:
            self.inst.initialized = False
            self._ctx = None
            return
        self.inst.restore(token)
        self.me_events.restore(token.extra)
        self.forget()

    # ---------------------------------------------------------- syncing
    # ------------------------------------ host of its events (fmus.me_events.MEHost)
    def follow(self, ctx: Any) -> None:
        """Make ``ctx`` the context the FMU instance follows (if it is not already)."""
        if ctx is not self._ctx:
            self._activate(ctx)

    def evaluated_time(self) -> float | None:
        """The time of the cached evaluation (:meth:`evaluate`), or None."""
        return None if self._B is None else self._B[0]

    def note_states(self, x: list) -> None:
        """The FMU now holds the continuous states ``x``."""
        self._x = x

    def _point(self, ctx: Any) -> tuple:
        if ctx is not self._ctx:
            self._activate(ctx)
        elif ctx.time < self.me_events.floor - 1e-15:  # time went back, no rollback: new run
            self._start_run(ctx)
        return ctx.time, (ctx.xc[self._sl].tolist() if self.nx else None)

    def _read_inputs(self, ctx: Any) -> tuple:
        part = self._partial
        if part is not None:
            if part[0] is ctx and ctx.time == part[1]:  # sources not run yet: as initialized
                return tuple(self._init_u[key] for key, _, _, _ in self._in_groups)
            self._partial = None
        s = ctx.signals
        out = []
        for fast, slots, (_, vs, ports, _) in zip(self._in_fast, self._in_slots,
                                                  self._in_groups):
            if fast:
                out.append(tuple([s[i] for i in slots]))
            else:
                out.append(tuple(input_values(ctx, vs, ports)))
        return tuple(out)

    def _outputs(self, ctx: Any, idx: int) -> tuple:
        keys, order, needs_inputs, fast = self._out_groups[idx]
        if needs_inputs:
            return self.evaluate(ctx)[5][idx]
        t, x = self._point(ctx)
        c = self._A.get(idx)
        if c is not None and c[0] == t and c[1] == x:
            return c[2]
        B = self._B
        if B is not None and B[0] == t and B[1] == x and idx in B[5]:
            return B[5][idx]
        try:
            _, _, outs = self.inst.drv.me_eval(t if t != self._t else None,
                                               x if x != self._x else None, [], False, False,
                                               [k for k, _ in keys])
        except FMUError:
            self.inst.broken = True
            raise
        if t != self._t or x != self._x:
            self._B = None
        self._t, self._x = t, x
        flat = outs[0] if len(outs) == 1 else [a for o in outs for a in o]
        vals = tuple(flat) if fast else tuple(port_values(order, flat))
        self._A[idx] = (t, x, vals)
        return vals

    def evaluate(self, ctx: Any) -> tuple:
        """``(t, x, u, dx, z, {group: values})`` at the context's point (cached)."""
        if ctx is not self._ctx:
            self._activate(ctx)
        elif ctx.time < self.me_events.floor - 1e-15:  # time went back, no rollback: new run
            self._start_run(ctx)
        t = ctx.time
        x = ctx.xc[self._sl].tolist() if self.nx else None
        u = self._read_inputs(ctx) if self._in_groups else ()
        B = self._B
        if B is not None and B[0] == t and B[1] == x and B[2] == u:
            return B
        sets = []
        discrete = []
        pushed = self._u
        for (key, _, _, disc), vals in zip(self._in_groups, u):
            if pushed.get(key) != vals:
                (discrete if disc else sets).append((key, vals))
                pushed[key] = vals
        try:
            if discrete:
                self._discrete_inputs(t, x, discrete)
            dx, z, outs = self.inst.drv.me_eval(t if t != self._t else None,
                                                x if x != self._x else None, sets, True,
                                                bool(self.nz), self._ft_keys)
        except FMUError:
            self.inst.broken = True
            raise
        if t != self._t or x != self._x or sets:
            self._A = {}
        self._t, self._x = t, x
        res, j = {}, 0
        for i in self._ft_groups:
            keys, order, _, fast = self._out_groups[i]
            n = len(keys)
            flat = outs[j] if n == 1 else [a for o in outs[j:j + n] for a in o]
            j += n
            res[i] = tuple(flat) if fast else tuple(port_values(order, flat))
        self._B = B = (t, x, u, dx, z, res)
        return B

    def _discrete_inputs(self, t: float, x: list | None, sets: list) -> None:
        """Discrete inputs change only in event mode (FMI 2.0 section 3.2.2)."""
        drv = self.inst.drv
        if t != self._t:
            drv.set_time(t)
            self._t = t
        if x is not None and x != self._x:
            drv.set_states(x)
            self._x = x
        drv.enter_event_mode()
        for key, vals in sets:
            drv.set(key, vals)
        terminate, _, t_next = drv.event_iteration()
        drv.enter_continuous_mode()
        self.me_events.t_next = _INF if t_next is None else t_next
        if terminate:
            self.me_events.request_termination(t)

    # ---------------------------------------------------------- protocol
    def derivatives(self, ctx: Any) -> Any:
        return self.evaluate(ctx)[3]

    # ------------------------------------------------------ linearisation
    def jacobian(self, ctx: Any) -> dict:
        """``{"A", "B", "C", "D"}`` of the FMU at the context's point.

        ``A = d xdot / d x``, ``B = d xdot / d u``, ``C = d y / d x``,
        ``D = d y / d u`` over the Real scalar inputs and outputs (names in
        ``"inputs"``, ``"outputs"``), from directional derivatives when the FMU
        provides them, else central differences.
        """
        B = self.evaluate(ctx)
        drv = self.inst.drv
        ins = [v for v in self.in_vars if v.kind == "real" and not v.shape]
        outs = [v for v in self.out_vars if v.kind == "real" and not v.shape]
        states = [v for v in self.info.states if not v.shape]
        ders = [v for v in self.info.derivatives if not v.shape]
        nx, nu, ny = len(states), len(ins), len(outs)
        J = np.zeros((nx + ny, nx + nu))
        knowns = [v.vr for v in states] + [v.vr for v in ins]
        unknowns = [v.vr for v in ders] + [v.vr for v in outs]
        if self.caps.get("providesDirectionalDerivative"):
            for j in range(nx + nu):
                seed = [0.0] * (nx + nu)
                seed[j] = 1.0
                J[:, j] = drv.directional(unknowns, knowns, seed)
        else:
            out_key = self.inst.register(outs[0].type, [v.vr for v in outs]) if outs else None
            in_key = self.inst.register(ins[0].type, [v.vr for v in ins]) if ins else None
            x0 = list(B[1] or [])
            u0 = drv.get(in_key) if in_key is not None else []
            for j in range(nx + nu):
                cols = []
                for sgn in (1.0, -1.0):
                    xs, us = list(x0), list(u0)
                    base = xs[j] if j < nx else us[j - nx]
                    h = 1e-6 * max(1.0, abs(base))
                    if j < nx:
                        xs[j] += sgn * h
                    else:
                        us[j - nx] += sgn * h
                    sets = [(in_key, us)] if in_key is not None else []
                    dxv, _, o = drv.me_eval(None, xs if nx else None, sets, True, False,
                                            [out_key] if out_key is not None else [])
                    cols.append(np.array(list(dxv or []) + (o[0] if o else [])))
                J[:, j] = (cols[0] - cols[1]) / (2 * h)
            if in_key is not None:
                drv.set(in_key, u0)
            if nx:
                drv.set_states(x0)
            self.forget()
        return {"A": J[:nx, :nx], "B": J[:nx, nx:], "C": J[nx:, :nx], "D": J[nx:, nx:],
                "states": [v.name for v in states], "inputs": [v.port for v in ins],
                "outputs": [v.port for v in outs]}

    # ------------------------------------------------------------- misc
    def free(self) -> None:
        """Free the FMU instance now (the next evaluation starts a new one)."""
        self.inst.free()
        self._ctx = None

    def describe_fmu(self) -> str:
        """The FMU's metadata and ports (``print(block.describe_fmu())``)."""
        return str(self.info)

    def subsystem_hint(self) -> str:
        """Why this block is not a master's subsystem and what to give instead (one
        sentence: the Co-Simulation interface, or a ``DiagramSubsystem``)."""
        return subsystem_hint(self.fmu, "block", "ModelExchange")

    def set_parameter_default(self, name: str, value: Any) -> None:
        """Change a parameter's default (contexts made later start from it)."""
        for v, h in self._params:
            if v.name == name or v.port == name:
                h.default = h.check(value)
                return
        raise FMUConfigError(f"block '{self.name}': no FMU parameter {name!r}")
