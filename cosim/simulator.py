"""The scheduler: runs a compiled diagram from a context.

Semantics at a major time point ``t_k`` (a solver step end, a sample hit, a
time event or a breakpoint), in this order:

1. time events and manipulator actions due at ``t_k`` run (they may reset
   states or change parameters);
2. outputs are evaluated: continuous and direct blocks always; sampled blocks
   only if one of their rates is due (else their outputs keep the value held
   since their last hit, i.e. ``y_k = g(x_d[k], u_k)`` held on
   ``[t_k, t_{k+1})``; at the start time every sampled block's output is
   computed once from its initial state, also when its first hit comes later);
   algebraic loops are solved;
3. observers sample (record) the outputs;
4. discrete updates of the due blocks run, ``x_d[k+1] = f(x_d[k], u_k)``, all
   with the inputs of step 2;
5. the continuous states are integrated to the next major time point, with the
   held outputs of sampled blocks constant over the interval; zero crossings of
   declared witnesses are located by root finding and handled where they occur.

Data-exchange delay (timing diagram, 1 ms controller on a continuous plant)::

    t:         0        1ms       2ms
    plant y:   y0 ------y1--------y2        (continuous, every solver step)
    ctrl u:    u0=g(y0) u1=g(y1)  u2=g(y2)  (sampled, feedthrough: no delay)
    plant in:  [u0 held][u1 held ][u2 ...   (zero-order hold, no extra delay)

A sampled block reads its inputs at its own hit (no one-step delay is added);
a unit delay must be explicit (``UnitDelay``).

Fixed-step solvers take steps of exactly ``dt`` on the integer grid (all
sample periods and offsets must be multiples of ``dt``); partial steps are
taken only to reach breakpoints and events.  Variable-step solvers stop exactly
at every sample hit and breakpoint; ``dt`` is then the output grid.
"""

from __future__ import annotations

import time as _time
from typing import Any

import numpy as np

from .compiled_route import CompiledRoute
from .context import Context
from .diagram import require_diagram
from .errors import ParameterError, SimulationTerminated, StepError
from .evaluator import Evaluator
from .finite_check import FiniteCheck
from .fixed_step import FixedStepAdvancer
from .hit_plans import HitPlans
from .loops import LoopOptions
from .major_stops import MajorStops
from .observers import Observer, Recorder, Results, model_hash
from .program import Program
from .progress import ProgressBar
from .run_events import RunEvents, Terminate
from .solvers import FLOAT_STATES_MAX, make_fixed, resolve_solver
from .step_grid import StepGrid
from .time import SECONDS_PER_TICK, to_ticks
from .variable_step import VariableStepAdvancer

_NS = SECONDS_PER_TICK
#: rounds of re-initialization at the start time (:meth:`Simulator._initial_checks`): a
#: chain of blocks initializing from their inputs needs one per block, an algebraic loop at
#: initialization one or two per fixed-point iteration
INIT_ROUNDS = 100
#: the progress bar of a run without one (draws nothing; shared)
_NO_BAR = ProgressBar(0, 0, False)


class Simulator:
    """Run a diagram.

    Parameters
    ----------
    diagram : Diagram
    context : Context, optional
        Made by ``diagram.create_context()`` (default: a fresh one).
    solver : str or solver class
        ``euler``, ``heun``, ``midpoint``, ``rk4`` (default), ``ab3`` (fixed
        step) or ``rk45``, ``rk23``, ``dop853``, ``radau``, ``bdf``, ``lsoda``; or a
        class (``cosim.solvers``: a ``FixedStepSolver`` subclass, see its checklist, or
        a ``VariableStepSolver``); ``register_solver`` gives a new class a name.
    dt : float or ``"advance"``
        Fixed step [s]; for variable-step solvers the output grid (optional:
        without it every accepted step is recorded).  ``"advance"`` (fixed-step
        solvers): no fixed grid, every :meth:`advance_to` is one solver step
        (split at breakpoints and sample hits) - a co-simulation subsystem that
        steps once per communication step, whatever its length.
    rtol, atol, max_step : float
        Variable-step tolerances and maximum step [s] (default: ``dt`` when
        given).  A zero-crossing witness that changes sign twice within one
        step is not seen: bound the step with ``max_step`` where that matters.  (A
        witness a handler left exactly on zero, a ball reset onto the floor, is probed
        inside the step for where it left the surface and came back.)
    record : ports, paths, ``"all"`` or ``False``
        What the built-in recorder keeps (default all leaf outputs).
    record_every : int
        Decimation of the built-in recorder.
    event_samples : {"auto", "both", "after"}
        What observers see at an event (a located zero crossing or a dynamic time
        event): ``"both"`` the value just before and just after it (two samples at the
        same time, as FMPy, Simulink and Dymola record), ``"after"`` one sample, after it
        (time strictly increasing).  ``"auto"`` (default): ``"both"`` when the diagram
        holds a block with ``records_event_limits = True`` (Model Exchange FMU blocks),
        else ``"after"``.
    observers, manipulators : sequences
        Read hooks and write hooks.
    loop_options : LoopOptions
    fuse_linear : bool
        Fuse connected linear blocks into one state-space update (default).
    multistep_restart : {"modes", "hits", "events"}
        When a multistep solver (``ab3``) forgets its history and restarts with its
        one-step starter, besides events, time events and breakpoints (always):
        ``"modes"`` (default) also at a sample hit where a held output of integer or
        Boolean type (a gear, a switch position: a mode) that the derivatives read
        changes value; ``"hits"`` at a hit where any held output the derivatives read
        changes (exact across every jump of a zero-order hold, at up to 4 evaluations
        per step); ``"events"`` only at events (the behaviour before: the steps after a
        jump extrapolate derivatives from before it, an error of about h/2 times the
        jump of the derivative, per jump).
    progress : bool
        Print a progress bar on stderr for runs longer than ~1 s.
    compiled : None, True or False
        Run in C (:mod:`cosim.compiled_run`: the diagram generated as C, compiled once and
        cached): ``None`` (default) when every block has a C form and the run needs no
        Python callbacks, else the Python loop with the reason in
        ``diagnostics["compiled"]``; ``True``: in C or a :class:`~cosim.errors.BuildError`
        naming why not; ``False``: the Python loop.
    """

    def __init__(self, diagram: Any, context: Any = None, *, solver: str = "rk4",
                 dt: float | None = None, rtol: float = 1e-6, atol: float = 1e-9,
                 max_step: float | None = None, record: Any = "all", record_every: int = 1,
                 observers: Any = (), manipulators: Any = (),
                 loop_options: LoopOptions | None = None, fuse_linear: bool = True,
                 progress: bool = False, event_samples: str = "auto",
                 multistep_restart: str = "modes", compiled: bool | None = None) -> None:
        self.diagram = diagram = require_diagram(diagram, "Simulator()")
        self.plan = diagram.compile()
        if context is None:
            context = diagram.create_context()
        if not isinstance(context, Context):
            from .errors import ContextError
            raise ContextError(f"Simulator(): context must be a Context made by "
                               f"diagram.create_context(), got {type(context).__name__}")
        if context.diagram is not diagram:
            from .errors import ContextError
            raise ContextError(
                f"Simulator: the context was made by diagram '{context.diagram.name}', not by "
                f"'{diagram.name}'; use diagram.create_context()")
        self.ctx = context
        #: the solver's class (``cosim.solvers``: a name resolved, or the class given)
        self.solver_class = resolve_solver(solver)
        self.solver_name = self.solver_class.name.lower()
        self.fixed = self.solver_class.fixed
        #: what ``dt`` means for this solver (:class:`~cosim.step_grid.StepGrid`)
        self.grid = StepGrid.of(dt, self.solver_name, self.fixed, self.plan.n_continuous)
        if self.plan.n_continuous:
            self.grid.check_rates(self.plan.rate_groups)
        self.rtol, self.atol, self.max_step = rtol, atol, max_step
        if event_samples not in ("auto", "both", "after"):
            raise ParameterError(f"event_samples must be 'auto', 'both' or 'after', got "
                             f"{event_samples!r}")
        if event_samples == "auto":
            event_samples = "both" if any(getattr(b, "records_event_limits", False)
                                          for b in self.plan.blocks) else "after"
        self.event_samples = event_samples
        if multistep_restart not in ("modes", "hits", "events"):
            raise ParameterError(f"multistep_restart must be 'modes', 'hits' or 'events', "
                                 f"got {multistep_restart!r}")
        self.multistep_restart = multistep_restart
        self.loop_options = loop_options or LoopOptions()
        self.fuse_linear = fuse_linear
        self.progress = progress
        #: whether each advance runs in C (:class:`~cosim.compiled_route.CompiledRoute`)
        self.route = CompiledRoute(self, compiled)
        self.observers: list[Observer] = list(observers)
        self.recorder = None
        if record is not False:
            self.recorder = Recorder(record, record_every)
            self.observers.insert(0, self.recorder)
        self.manipulators = list(manipulators)
        self.stats = {"steps": 0, "partial_steps": 0, "events": 0, "rhs_evals": 0,
                      "loop_iterations": 0, "rebuilds": 0, "reused_evaluations": 0,
                      "multistep_restarts": 0}
        self._initialized = False
        self._prepared = False  # prepare() built the program the next initialize() uses
        #: ``{"t", "by", "reason"}`` when a block ended the run (an FMU's
        #: terminateSimulation, a terminal zero crossing), else None
        self.terminated: dict | None = None
        #: the events of the run (:class:`~cosim.run_events.RunEvents`), made at
        #: :meth:`initialize`
        self.events: RunEvents | None = None
        #: stops the run on a state that is not finite, naming it
        self.check_finite = FiniteCheck(
            self.plan.cstate_index, f"solver {self.solver_name}"
            + (f", dt = {self.grid.seconds} s" if self.grid.seconds else ""))
        #: ``(x, t)`` at which the last full evaluation left every output the derivatives
        #: read up to date (see :meth:`major`); the next right-hand side there reuses it
        self._fresh: tuple | None = None

    # ----------------------------------------------------------- set-up
    @property
    def dt_ticks(self) -> int | None:
        """The grid's step in ticks (``grid.ticks``): the fixed step, or a variable-step
        run's output grid; None without a grid (what a real-time runner and a decimating
        recorder align to)."""
        return self.grid.ticks

    @property
    def ev(self) -> Evaluator:
        """The current program's generated evaluation code (``program.ev``)."""
        return self.program.ev

    def solver_settings(self) -> dict:
        return {"solver": self.solver_name, "dt": self.grid.argument, "rtol": self.rtol,
                "atol": self.atol, "max_step": self.max_step,
                "fuse_linear": self.fuse_linear, "multistep_restart": self.multistep_restart}

    def _build_program(self) -> None:
        for obs in self.observers:
            bind = getattr(obs, "bind", None)
            if bind is not None:
                bind(self)
        consumers = {self.plan.output_slot[p] for o in self.observers
                     for p in o.required_ports()}
        overrides = {}
        for m in self.manipulators:
            for port, fn in m.overrides(self).items():
                slot = self.plan.output_slot[port]
                if slot in overrides:
                    prev = overrides[slot]
                    overrides[slot] = (lambda f, g: lambda c, v: g(c, f(c, v)))(prev, fn)
                else:
                    overrides[slot] = fn
        ev = Evaluator(self.plan, self.ctx, consumers=consumers, overrides=overrides,
                       loop_options=self.loop_options, fuse_linear=self.fuse_linear)
        self.ctx.pruned_slots = frozenset(ev.pruned)
        derivs = ev.make_derivatives()
        # the solvers' right-hand side, one generated call per stage (and for small
        # systems its float form, cosim.solvers)
        rhs = ev.make_rhs(self.ctx, self._reuse_fresh, derivs)
        small = 0 < self.plan.n_continuous <= FLOAT_STATES_MAX
        rhs_floats = ev.make_rhs(self.ctx, self._reuse_fresh, derivs,
                                 floats=True) if small and self.fixed else None
        propagator = None
        tab = self.solver_class.tableau if self.fixed else None
        if (tab is not None and not self.solver_class.multistep and ev.can_propagate
                and not self.events.crossings and not self.events.has_dynamic
                and self.grid.ticks):
            propagator = ev.make_propagator(tab, self.grid.ticks * _NS)
        solver = make_fixed(self.solver_class, rhs, rhs_floats) if self.fixed else None
        self.program = Program(ev, ev.evaluator_for(frozenset()), rhs, propagator, solver)
        self._fresh = None
        restart_reads = None
        if (solver is not None and solver.multistep
                and self.multistep_restart != "events"):
            restart_reads = ev.derivative_reads()
        self.hits = HitPlans(self.program, self.plan.rate_groups, self.plan.output_slot,
                             bool(self._monitors), restart_reads,
                             "iub" if self.multistep_restart == "modes" else "iubfc")

    def _reuse_fresh(self, x: Any, t: float) -> bool:
        """At the first stage after a major point, whether the outputs the derivatives
        read were evaluated there, at this ``(t, x)``, and nothing has changed them since
        (:meth:`major`): then the stage computes only the derivatives."""
        fresh = self._fresh
        if fresh is not None and fresh[0] is x and fresh[1] == t:
            self._fresh = None
            self.stats["reused_evaluations"] += 1
            return True
        return False

    def initialize(self) -> None:
        """Compile the program and evaluate the outputs at the start time."""
        plan = self.plan
        ctx = self.ctx
        missing = [p for p in plan.root_input_slot if p not in getattr(ctx, "_fixed", ())]
        if missing:
            from .errors import PortError
            raise PortError("the diagram has exported inputs that were not given values: "
                            + ", ".join(p.describe() for p in missing)
                            + "; call ctx.fix_input(port, value) or wire them in a parent "
                            "diagram")
        self.terminated = None
        self._init_checks = [f for b in plan.blocks for f in b.initial_checks]
        if self._prepared and not self._dirty:  # prepare()'s program, parameters kept
            self.events = RunEvents(self, plan.blocks, self.event_samples == "both")
            self._fresh = None
        else:
            self.prepare()
        self._prepared = False
        self.stops = MajorStops(plan.blocks, plan.rate_groups, self.manipulators)
        self._observation = None  # step_end's observers (computed once per advance)
        self._t0 = ctx.ticks
        self.advancer = self._make_advancer()
        self.route.restart()
        for o in self.observers:
            o.on_start(self)
        self.major(ctx.ticks, first=True)
        self._initialized = True
        self.route.prepare()  # compiled=True: the C built now
        model_hash(self.diagram)  # the results' provenance: set-up work, once per diagram

    def prepare(self) -> None:
        """Build the evaluation program now, as :meth:`initialize` would first, so the run's
        start does not pay for it (a co-simulation subsystem prepares when it is made, as an
        FMU is instantiated then); a parameter set in between makes :meth:`initialize`
        build it again.  For diagrams whose exported inputs are driven by blocks (no
        ``fix_input``).  (:meth:`initialize` calls it unless a prepared program stands.)"""
        self.events = RunEvents(self, self.plan.blocks, self.event_samples == "both")
        self._monitors = [m.fn for b in self.plan.blocks for m in b.monitors]
        self._dirty = False
        self.ctx._param_listeners = [self._on_param_change]
        self._build_program()
        self._prepared = True

    def evaluate_outputs(self) -> None:
        """Recompute the outputs of continuous and direct blocks at the current time.

        For a co-simulation master after it changed inputs (no updates, no observers).
        """
        if not self._initialized:
            self.initialize()
        self._fresh = None
        self.ctx.time = self.ctx.mode_time = self.ctx.ticks * _NS
        self.program.evaluate(self.ctx)

    def reinitialize_outputs(self) -> None:
        """:meth:`evaluate_outputs` at the start time, then the blocks' initial checks (an
        FMU block initialized with other inputs initializes again with these): for a
        co-simulation master setting the inputs at initialization."""
        self.evaluate_outputs()
        if self._init_checks:
            self._initial_checks(self.program.outputs)

    def reset_solver_history(self) -> None:
        """Forget multistep history: a discontinuity (an event, a breakpoint, a rollback
        of the context)."""
        program = getattr(self, "program", None)
        if program is not None and program.solver is not None:
            program.solver.reset()

    def _on_param_change(self, handle: Any) -> None:
        self._dirty = True

    # ------------------------------------------- the advancer's host (cosim.advancer)
    def _make_advancer(self) -> Any:
        """The stepping strategy (:mod:`cosim.advancer`)."""
        if self.fixed or self.plan.n_continuous == 0:
            return FixedStepAdvancer(self, self.grid.ticks, self.plan.n_continuous)
        return VariableStepAdvancer(self, self.solver_class, self.grid.ticks, self.rtol,
                                    self.atol, self.max_step)

    def next_stop(self, tick: int) -> int | None:
        """The first tick after ``tick`` that must be a major point: a sample hit of a
        rate group, a time event or breakpoint, a dynamic time event; None if none."""
        return self.stops.next_stop(tick, self.events.next_dynamic)

    def watches_steps(self) -> bool:
        """Whether anything looks at step ends between major points (:meth:`step_end`)."""
        return bool(self._monitors or self.observers or self.progress)

    def step_end(self, last: bool) -> None:
        """A step end between major points (fixed-step runs of whole steps; the state
        already there): the monitors, then the observers, with the outputs evaluated
        first unless every observer says it does not read here (a decimating recorder),
        the progress bar; a parameter changed meanwhile rebuilds the program.  ``last``:
        the run's last step, whose outputs are left evaluated."""
        ctx = self.ctx
        for m in self._monitors:
            m(ctx)
        if self._observation is None:
            samplers = [o.on_sample for o in self.observers]
            wants = [getattr(o, "wants_sample", None) for o in self.observers]
            lazy = bool(samplers) and all(w is not None for w in wants)
            self._observation = (samplers, wants, lazy)
        samplers, wants, lazy = self._observation
        program = self.program
        if samplers or self.progress:  # else the next step's first stage evaluates them
            if not lazy or any(w() for w in wants):
                program.evaluate(ctx)
            for sample in samplers:
                sample(self)
            if self.progress:
                self._bar.tick(ctx.ticks)
        if self._dirty:
            self._dirty = False
            self.stats["rebuilds"] += 1
            self._build_program()
        if last and (lazy or not (samplers or self.progress)):
            self.program.evaluate(ctx)  # the outputs at the last step

    def sample(self, tick: int, x: Any, t: float | None = None) -> None:
        """An output point between major points: the state ``x`` at ``tick`` (time ``t``,
        default the tick's), outputs evaluated, observers sampled."""
        ctx = self.ctx
        ctx.xc = x
        ctx.ticks, ctx.time = tick, tick * _NS if t is None else t
        self.program.evaluate(ctx)
        for o in self.observers:
            o.on_sample(self)

    def check_monitors(self, x: Any, t: float) -> None:
        """The monitors at a solver step ``(x, t)``, the context left as it was."""
        if self._monitors:
            ctx = self.ctx
            x_keep, t_keep = ctx.xc, ctx.time
            ctx.xc, ctx.time = x, t
            for m in self._monitors:
                m(ctx)
            ctx.xc, ctx.time = x_keep, t_keep

    def major(self, tick: int, first: bool = False) -> None:
        """Steps 1-4 of the module docstring at ``tick``."""
        ctx = self.ctx
        self._fresh = None
        ctx.ticks = tick
        ctx.time = tick * _NS
        stops = self.stops
        if stops.breakpoints and stops.act(tick, self):
            self.reset_solver_history()  # a breakpoint is a possible discontinuity
        if self._dirty:
            self._dirty = False
            self.stats["rebuilds"] += 1
            self._build_program()
        fn, updates, reuse, watch = self.hits.at(tick, first)
        ctx.time = ctx.mode_time = tick * _NS
        if watch:
            sig = ctx.signals
            before = [sig[k] for k in watch]
            self.program.evaluate(ctx, fn)
            if any(_changed(a, sig[k]) for a, k in zip(before, watch)):
                # the right-hand side jumps here: multistep history from before is void
                self.program.solver.reset()
                self.stats["multistep_restarts"] += 1
        else:
            try:  # Program.evaluate, inline: once per major point
                fn(ctx, ctx.signals)
            except (StepError, SimulationTerminated):
                raise
            except Exception as exc:
                raise self.program.failure(exc, ctx) from exc
        if first and self._init_checks:
            self._initial_checks(fn)
        for m in self._monitors:
            m(ctx)
        events = self.events
        if events.has_dynamic:
            events.run_dynamic(tick, fn)
        if events.crossings:
            events.crossings.set_previous(events.crossings.witnesses(ctx))
        for o in self.observers:
            o.on_sample(self)
        if events.pending is not None:
            raise Terminate(events.pending)
        for b, handler in updates:
            try:
                handler(ctx)
            except Exception as exc:
                raise StepError(f"discrete update of block '{b.path}' failed at "
                                f"t = {ctx.time:.9g} s: {exc!r}") from exc
        if events.has_dynamic:
            events.refresh()
        if reuse and not self._dirty:
            self._fresh = (ctx.xc, ctx.time)
        if not first and self.progress:
            self._bar.tick(tick)

    # ------------------------------------------------------ run-time events
    def _initial_checks(self, fn: Any) -> None:
        """Blocks that initialized before their inputs were known redo it (and the start
        outputs are evaluated again) until none asks for it."""
        for _ in range(INIT_ROUNDS):
            if not any([check(self.ctx) for check in self._init_checks]):
                return
            self.program.evaluate(self.ctx, fn)
        raise StepError(f"the outputs at the start time t = {self.ctx.time:.9g} s did not "
                        f"settle in {INIT_ROUNDS} rounds of re-initialization (blocks whose "
                        "initial outputs depend on their own inputs through the diagram: an "
                        "algebraic loop at initialization, iterated as a fixed point, which "
                        "needs a loop gain well below 1); give the loop's inputs start "
                        "values that are consistent, or break the loop")

    # ---------------------------------------------------------- running
    def advance_to(self, t_end_s: float) -> None:
        """Advance the simulation to ``t_end_s`` (seconds)."""
        self.advance_to_ticks(to_ticks(t_end_s, "end time"))

    def advance_to_ticks(self, end: int) -> None:
        """Advance the simulation to ``end`` (integer ticks)."""
        if not self._initialized:
            self.initialize()
        # the caller may have changed inputs, states, parameters or observers since the
        # last point
        self._fresh = None
        self._observation = None
        if self.terminated is not None:
            return  # a block ended the run: nothing more to simulate
        if end < self.ctx.ticks:
            raise StepError(f"advance_to({end * _NS:g} s): the context is already at "
                            f"t = {self.ctx.time:g} s")
        # (no bar object per call without a bar: a co-simulation steps many short calls)
        bar = self._bar = ProgressBar(self.ctx.ticks, end) if self.progress else _NO_BAR
        try:
            if end > self.ctx.ticks:
                _route_advance(self, end, bar if bar is not _NO_BAR else None)
        finally:
            if bar is not _NO_BAR:
                bar.done()


    def run(self, t_end_s: float) -> Results:
        """Initialize, advance to ``t_end_s`` and return the recorded results.

        On failure or Ctrl-C every observer is finished with the error (so streamed
        results are flushed to disk) and the exception (``KeyboardInterrupt`` too)
        carries the partial results as ``exc.results``.
        """
        wall = _time.perf_counter()
        try:
            self.advance_to(t_end_s)
        except BaseException as exc:
            res = self.finish(exc)
            if isinstance(exc, (Exception, KeyboardInterrupt)):
                exc.results = res
            raise
        res = self.finish(None)
        res.diagnostics["wall_s"] = _time.perf_counter() - wall
        return res

    def finish(self, error: BaseException | None = None) -> Results:
        """Close the observers (with ``error`` as the run's status) and return the
        results; :meth:`run` does this itself, a driver calling :meth:`advance_to`
        (the real-time runner) calls it at the end."""
        errors = []
        for o in self.observers:
            try:
                o.on_finish(self, error)
            except Exception as exc:  # keep finishing the others
                errors.append(exc)
        res = self.recorder.results(self) if self.recorder is not None else \
            Results(np.zeros(0), {}, {}, {})
        res.diagnostics.update(self.diagnostics())
        if self.terminated is not None:
            res.diagnostics["terminated"] = dict(self.terminated)
        if errors and error is None:
            raise errors[0]
        return res

    def diagnostics(self) -> dict:
        d = dict(self.stats)
        program = getattr(self, "program", None)
        if program is not None:
            ev = program.ev
            d["loops"] = [{"loop": s.label, "calls": s.calls, "iterations": s.iterations,
                           "max_iterations": s.max_iterations, "last_residual": s.last_residual}
                          for s in ev.loop_solvers]
            d["loop_iterations"] = sum(s.iterations for s in ev.loop_solvers)
            d["fused_groups"] = len(ev.groups)
            d["propagator"] = program.propagator is not None
            if program.solver is not None:
                d["rhs_evals"] = program.solver.nfev
        run = self.route.run
        if run is not None and run.stages:  # the stages evaluated in C
            d["rhs_evals"] = d.get("rhs_evals", 0) + run.stages
        d["compiled"] = self.route.diagnostic()
        if d["compiled"] is True:  # whole steps by the exact linear map in C, or stages
            d["propagator"] = bool(run is not None and run.propagates)
        if run is not None and run.called_back and True in self.route.ran:
            d["called_back"] = list(run.called_back)  # blocks in Python, called from C
        return d

    #: Zeno guard: this many consecutive state events within this span of
    #: simulated time stop the run with a :class:`~cosim.errors.ZenoError`.
    #: Limitation: sliding modes (a switch whose handler drives the witness back
    #: across zero, Filippov chattering) are not handled; the fixed-step locator
    #: stops them with this error, the variable-step one may skip a crossing that
    #: sits exactly at a step start and leave the surface.
    zeno_events = 100
    zeno_span_s = 1e-6


def _changed(a: Any, b: Any) -> bool:
    """Whether a held output changed (arrays element-wise)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return not np.array_equal(a, b)
    return a != b


def simulate(diagram: Any, t_end: float, **kwargs: Any) -> Results:
    """Convenience: ``Simulator(diagram, **kwargs).run(t_end)``."""
    return Simulator(diagram, **kwargs).run(t_end)


def advance_held(sim: Simulator, end: int) -> None:
    """:meth:`Simulator.advance_to_ticks` for the owner of a held C run
    (:mod:`cosim.held_step`: a co-simulation subsystem whose previous advance ran in C and
    left its state there, nothing having touched the Simulator since): the same C run to
    ``end``, its state held again (``CompiledRun.held``) unless the advance fails, is
    interrupted or ends the run."""
    sim._fresh = None
    sim._observation = None
    _route_advance(sim, end, None, hold=True)


def _route_advance(sim: Simulator, end: int, bar: Any, hold: bool = False) -> None:
    """The route's advance of ``sim`` to ``end``; a block ending the run sets
    ``terminated``."""
    try:
        sim.route.advance(end, bar, hold)
    except Terminate as term:
        sim.terminated_by = term.event
        sim.terminated = sim.events.stopped(term.event)
    except SimulationTerminated as exc:  # raised while evaluating outputs
        sim.terminated_by = exc
        sim.terminated = sim.events.stopped(exc, sample=True)
