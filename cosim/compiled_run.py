"""A Simulator's fixed-step run in C: ``Simulator(diagram, ..., compiled=None|True|False)``.

The diagram is generated as C by :mod:`cosim.codegen` (the code generator of the FMU export:
straight-line outputs in evaluation order, fused linear groups, discrete updates per rate
group, the explicit Runge-Kutta stages of :mod:`cosim.solvers`), a driver
(``codegen/templates/driver.c``) is appended, and the one translation unit is compiled into
the trusted cache of :mod:`cosim.codegen.cache` (key: hash of source, flags and compiler; a
cached library needs no compiler and may sit in a read-only cache) and loaded with ctypes.

Each :meth:`CompiledRun.advance` (every ``Simulator.advance_to``: a run is one, a real-time
frame is one) copies the context's time, states and signals into the C state
(:class:`~cosim.codegen.state.StateMap`), runs the loop of
:class:`~cosim.fixed_step.FixedStepAdvancer` in C (a stop at every grid point, sample hit,
breakpoint and at the end; one Runge-Kutta step to each; the major point there: outputs, due
discrete updates) recording the Recorder's samples with its decimation, and copies the state
back, so the context, a later Python step and the next run go on from where C stopped.  The
C runs in slices of about :attr:`CompiledRun.slice_s` of wall time: Ctrl-C stops the run
within about that, with the context and the recorded rows at the last completed stop.

Equality with the Python loop: the same operations in the same order, except (a) an
all-fused linear diagram, which both step with the exact Runge-Kutta propagator
(:mod:`cosim.propagator`; in C :mod:`cosim.codegen.propagate_c`) summed in other orders, and
(b) the sums of fused outputs, whose terms NumPy adds in another order: results agree to
about 1e-13 relative where fused groups are involved (tested), bit for bit elsewhere.

What runs compiled (:func:`compiled_reason` says why not, ``diagnostics["compiled"]``):

* fixed-step ``rk4``, ``heun``, ``midpoint``, ``euler`` and ``ab3`` with a fixed ``dt``, and
  diagrams without continuous states (any solver); with ``compiled=True``, a variable-step
  run's right-hand side only (:mod:`cosim.compiled_rhs`: SciPy's integrator stays in Python);
* every block with a C form (:mod:`cosim.codegen.blocks`, a block's ``c_model``, a registered
  one, or ``linear_model``);
* the built-in recorder (any ``record`` / ``record_every``; numeric ports, arrays included)
  and the progress bar.

AB3 (:class:`~cosim.solvers.AB3`): its history lives in the C model between calls and is
handed over with the state: each advance starts from the Python solver's history
(:meth:`~cosim.solvers.AB3.history`) and gives C's back (:meth:`~cosim.solvers.AB3.restore`),
so C and Python advances may alternate.  The C restarts it where the Python loop does: a step
size other than the history's, a breakpoint, and per ``multistep_restart`` a sample hit where
a watched held output (the slots of :class:`~cosim.hit_plans.HitPlans`, per rate group, as C
tables) changes in the hit's output evaluation (``stats["multistep_restarts"]``); after a
parameter change, at the first stop (where the Python loop rebuilds its program).

Zero crossings (blocks' ``CModel(zero_crossings=...)``): located in C as
:meth:`~cosim.fixed_step.FixedStepAdvancer._locate` does, operation for operation (the
witnesses at the end of the step with the outputs evaluated at the step's start mode time,
:meth:`~cosim.zero_crossings.ZeroCrossings.crossed`'s direction rule,
:func:`~cosim.event_location.first_root`'s probes after an event and SciPy 1.17's ``brentq``
on a fresh step of the solver, AB3's starter or the chord of the step taken, the instant
rounded half to even to a tick, :meth:`~cosim.run_events.RunEvents.handle`'s Zeno guard, left
sample, C handler and history reset, a terminal crossing ending the run); the witnesses at the
last point, those an event left on zero and the Zeno guard's recent events are handed over
with the state.  Where the Python loop raises (no sign change, a NaN witness, no convergence,
Zeno) the C run fails and the Python loop takes the slice over and raises its own error.
``rhs_evals`` counts the location's steps as the Python loop's solver does (AB3's Python
starter adds them only at its next step).  A witness that reads a fused linear group's state
agrees to rounding (the fused sums' order): Brent's method may take an iteration more or less
there, and a root within rounding of a half tick could round to the other tick.

Monitors (blocks' ``CModel(monitors={name: CMonitor(condition)})``): the C evaluates the
conditions where the Python loop calls the monitors (after a point's outputs, before its
discrete updates) and returns there when one holds (``cosim_sim_run`` returns 2); the monitors
run in Python on the context (:meth:`CompiledRun._monitors`) and a call of no stops runs the
rest of the point.

Limitations (the Python loop runs, the reason named): variable-step solvers;
``dt="advance"``; zero crossings without C (a block whose C form does not describe one: the
code generator's error); dynamic time events and time events with Python handlers;
observers other than the recorder (stream writers), manipulators and monitors without a C
condition (the code generator's error); blocks without a C form that cannot be called back
in Python (:mod:`cosim.codegen.pycall`: continuous states, zero crossings, monitors,
non-numeric ports): one such block keeps the whole diagram in Python, the reason named (for
a FunctionBlock, the construct and its line).  Blocks without a C form that can be are called
back from the C (:mod:`cosim.codegen.pycall`); a co-simulation subsystem's step may hold its
state in C between macro steps (:attr:`CompiledRun.held`, :mod:`cosim.held_step`).
"""

from __future__ import annotations

import ctypes
import time as _time
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["SOLVERS", "CompiledRun", "compiled_reason", "same_params"]

#: the fixed-step solvers the C integrates with
SOLVERS = ("rk4", "heun", "midpoint", "euler", "ab3")
_DRIVER = Path(__file__).parent / "codegen" / "templates" / "driver.c"
_I64 = ctypes.c_int64
_VP = ctypes.c_void_p


class FailedInC(Exception):
    """A C run failed (its message); the context is back at the start of the failing slice,
    where the Python loop takes over (:meth:`~cosim.compiled_route.CompiledRoute.advance`),
    so the failure, if it happens there too, is the Python loop's own error with its message
    and results."""


def compiled_reason(sim: Any) -> str:
    """Why the initialized Simulator ``sim`` cannot run in C ('' when it may: the code
    generator can still name blocks without a C form)."""
    nx = sim.plan.n_continuous
    if nx and not sim.fixed:  # the right-hand side in C (cosim.compiled_rhs): opt-in
        if sim.route.compiled is None:
            return (f"variable-step solver '{sim.solver_name}' (compiled=True runs its "
                    "right-hand side in C, SciPy's integrator staying in Python: at most "
                    "1.4x measured, python -m bench.compiled_findings)")
        if sim._monitors:
            return (f"variable-step solver '{sim.solver_name}' with monitors (they read the "
                    "signals of the last right-hand side, which the C's keeps)")
    elif nx and sim.solver_name not in SOLVERS:
        return (f"solver '{sim.solver_name}' (the compiled run integrates with "
                f"{', '.join(SOLVERS)})")
    elif nx and not sim.grid.ticks:
        return "dt='advance' (the compiled run steps on a fixed dt)"
    names = _names
    if sim.events.has_dynamic:
        return "dynamic time events (Python handlers)"
    handled = {b for b in sim.plan.blocks for ev in b.time_events if ev.handler is not None}
    if handled:
        return "time events with Python handlers in " + names(handled)
    others = [o for o in sim.observers if o is not sim.recorder]
    if others:
        return ("observers other than the recorder (" + ", ".join(type(o).__name__
                                                              for o in others) + ")")
    if sim.manipulators:
        return "manipulators (Python callbacks at their breakpoints)"
    if sim.recorder is not None:
        bad = [p.path for p in sim.recorder.ports if np.dtype(p.dtype).kind not in "fiub"]
        if bad:
            return f"recorded ports that are not numbers: {', '.join(bad)}"
    return ""


def _names(blocks: set) -> str:
    got = sorted(f"'{b.path}' ({type(b).__name__})" for b in blocks)
    return f"block{'s' if len(got) > 1 else ''} " + ", ".join(got[:8]) + \
        (f" and {len(got) - 8} more" if len(got) > 8 else "")


class CompiledRun:
    """The C of the initialized Simulator ``sim`` (module docstring); raises
    :class:`~cosim.codegen.model.CodegenError` naming what has no C form, or
    :class:`BuildError` when it cannot be compiled.

    ``build_s``: the time spent generating, and compiling or finding the library."""

    #: the wall time one call into C aims at [s] (Ctrl-C is seen that often)
    slice_s = 0.02

    def __init__(self, sim: Any) -> None:
        from .codegen import csource
        from .codegen.cache import CFLAGS, shared_library
        from .codegen.program import Program
        from .codegen.propagate_c import propagation
        from .codegen.sim_source import monitor_source, watch_tables
        from .codegen.state import LAYOUT_C, StateMap, bind_externs, state_type
        t0 = _time.perf_counter()
        self.sim = sim
        plan = sim.plan
        ports = list(sim.recorder.ports) if sim.recorder is not None else []
        dt = int(sim.grid.ticks or 0)
        method = sim.solver_name if sim.solver_name in SOLVERS else "euler"
        #: the AB3 history is handed over (module docstring)
        self.ab3 = method == "ab3"
        prog = Program(sim.diagram, sim.ctx,
                       integrator="rk4" if self.ab3 else method,  # (ab3: by COSIM_METHOD)
                       step_ticks=dt, fuse_linear=sim.fuse_linear,
                       observed=tuple(ports), state_events=True,
                       monitor_conditions=True, in_process=True).build()
        self.program = prog
        self._events = _event_options(sim)
        tab = sim.solver_class.tableau if sim.fixed else None
        stages = len(tab[1]) if tab is not None else 0  # (as the Python solver counts nfev)
        prop_h, prop_c = propagation(sim.program.propagator, sim.program.ev, prog, dt, stages)
        self.propagates = bool(prop_h)  #: whole steps by the exact linear map (propagate_c)
        #: right-hand-side evaluations a step not counted by the C (cnt[5])
        self._per_step = 0 if self.ab3 or self.propagates else stages
        header = (prop_h + "#define COSIM_HAS_CS 1\n#define COSIM_INTERPOLATE 0\n"
                  '#define COSIM_FINITE_HINT "or reduce dt"\n'
                  f"#define COSIM_ZENO_N {self._events[0]}\n"
                  f"#define COSIM_ZENO_SPAN {self._events[1]!r}\n"
                  f"#define COSIM_EVENT_LEFT {int(self._events[2])}\n")
        source = csource.model_source(prog, fmi_version="2.0", model_identifier="cosim_sim",
                                      token="cosim-sim", header=header, integrator=method) \
            + LAYOUT_C + (watch_tables(sim, prog) if self.ab3 else "") \
            + monitor_source(prog) + prop_c + _DRIVER.read_text()
        path = shared_library("cosim-sim", source, (*CFLAGS, "-lm"), "Simulator(compiled)")
        self.lib = lib = ctypes.CDLL(str(path))
        bind_externs(prog, lib)  # compiled functions the C calls by address (extern_fn)
        lib.cosim_sim_new.restype = _VP
        lib.cosim_sim_new.argtypes = []
        lib.cosim_sim_free.argtypes = [_VP]
        lib.cosim_sim_state.restype = _VP
        lib.cosim_sim_state.argtypes = [_VP]
        lib.cosim_sim_error.restype = ctypes.c_char_p
        lib.cosim_sim_error.argtypes = [_VP]
        lib.cosim_sim_clear_error.argtypes = [_VP]
        lib.cosim_sim_outputs.restype = ctypes.c_int
        lib.cosim_sim_outputs.argtypes = [_VP]
        lib.cosim_sim_run.restype = ctypes.c_int
        lib.cosim_sim_run.argtypes = [_VP, _I64, _I64, _I64, _VP, ctypes.c_int, _I64, _I64,
                                      _I64, _VP, _VP, _VP, _VP]
        lib.cosim_sim_held_step.restype = ctypes.c_int
        lib.cosim_sim_held_step.argtypes = [_VP, _I64, _I64, _VP, _VP, _VP]
        if self.ab3:
            lib.cosim_sim_ab3_set.argtypes = [_VP, ctypes.c_int, ctypes.c_double, _VP,
                                              ctypes.c_int]
            lib.cosim_sim_ab3_get.restype = ctypes.c_int
            lib.cosim_sim_ab3_get.argtypes = [_VP, _VP, _VP]
            self._hist = np.zeros(2 * max(1, plan.n_continuous))
        nz = len(prog.zero_crossings)
        #: the zero crossings' state handed over (cosim_sim_zc_set / get)
        self.zc = (np.zeros(max(1, nz)), np.zeros(max(1, nz), dtype=np.uint8),
                   np.zeros(self._events[0], dtype=np.int64)) if nz else None
        if nz:
            lib.cosim_sim_zc_set.argtypes = [_VP, _VP, _VP, ctypes.c_int, _VP, ctypes.c_int]
            lib.cosim_sim_zc_get.restype = ctypes.c_int
            lib.cosim_sim_zc_get.argtypes = [_VP, _VP, _VP, _VP, _VP]
        self.model = lib.cosim_sim_new()
        if not self.model:
            raise MemoryError("Simulator(compiled): no memory for the C model")
        self.state = state_type(prog, lib).from_address(lib.cosim_sim_state(self.model))
        self.state_map = StateMap.of_plan(plan, prog)
        #: NumPy views of the C state's ``x``, ``xd`` and ``s`` (layouts: :attr:`program`'s
        #: ``dstate_layout`` and ``slot_offset``)
        self.views = StateMap.views(self.state)
        # the recorded columns: each port's slots (an array port: its elements in C order)
        self.ports = ports
        self._widths = [int(p.size) for p in ports]
        off = [prog.slot_offset[plan.output_slot[p]] + i for p in ports for i in range(p.size)]
        self._off = np.array(off or [0], dtype=np.intc)
        self._off_at = self._off.ctypes.data
        self._first: tuple | None = None  # the first slice's buffers, kept (real-time frames)
        self._cnt = (_I64 * 8)()
        lib.cosim_sim_model_size.restype = ctypes.c_size_t
        self._snapshot = ctypes.create_string_buffer(lib.cosim_sim_model_size())
        self._count = _I64(0)
        self.params = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v
                       for v in sim.ctx.params]
        #: the blocks without a C form called back in Python (cosim.codegen.pycall)
        self._calls = None
        if prog.pycalls is not None and prog.pycalls.entries:
            from .codegen.pycall import register
            self._calls = register(self, prog.pycalls)
        self.called_back = self._calls.names if self._calls is not None else []
        self.build_s = _time.perf_counter() - t0

    def __del__(self) -> None:
        lib, m = getattr(self, "_lib", None), getattr(self, "_model", None)
        if lib is not None and m:
            if getattr(self, "_calls", None) is not None:
                self._calls.unregister(m)
            lib.cosim_sim_free(m)

    def stale(self) -> bool:
        """The Simulator's parameters changed since this C was generated (their values are
        constants in it)."""
        return not same_params(self.params, self.sim.ctx.params) or \
            self._events != _event_options(self.sim)

    # ------------------------------------------------------------------ the run
    #: the C state is newer than the context (an advance with ``hold``): :meth:`sync`
    #: hands it back
    held = False
    #: the last advance ran to its end in C (no failure handed to the Python loop, no
    #: terminal event, no interruption)
    whole = False

    def advance(self, end: int, bar: Any = None, hold: bool = False) -> None:
        """Advance the Simulator's context to tick ``end`` in C (module docstring): the
        recorder gets the samples, ``sim.stats`` the steps; the context is left at the last
        completed stop, also when interrupted or failing.

        ``hold``: an advance that completes leaves its state in C (:attr:`held`), not
        copied back, and the next advance starts from it without copying the context in:
        the caller (:mod:`cosim.held_step`) promises that nothing reads or writes the context
        until it calls :meth:`sync`.  An advance that fails, is interrupted or ends the run
        hands the state back as always."""
        if hold and self.lean and self.held and bar is None and self._held_step(end):
            return
        sim, lib, m = self.sim, self.lib, self.model
        ctx = sim.ctx
        rec = sim.recorder
        dt = int(sim.grid.ticks or 0)
        dec = rec._dec if rec is not None else None
        every = rec.every if rec is not None else 1
        grid = dt * every if (dec is not None and dec._ctx is not None) else 0
        t0 = dec._t0 if grid else 0
        self._count.value = dec._n if dec is not None else 0
        ncol = len(self._off) if self.ports else 0
        cnt = self._cnt
        cnt[1] = cnt[2] = cnt[3] = cnt[4] = cnt[5] = cnt[6] = cnt[7] = 0
        if self.held:  # the C state is the newer one: as a push of it would leave it
            st = self.state
            st.dirty = 0
            st.tc_ok[0] = st.tc_ok[1] = 0
        else:
            self.state_map.push(ctx, self.state, self.views)
            if self.ab3:
                self._push_history()
            if self.zc is not None:
                self._push_crossings()
        lib.cosim_sim_clear_error(m)
        chunk = 256  # stops of the first call; later calls sized to slice_s
        completed = False  # (with hold: the state stays in C)
        raised = None  # a failure of a run with blocks called back (not handed over)
        self.whole = False
        failed = None
        terminal = None
        keep = self._snapshot
        done = True  # the last slice's rows are kept (else Ctrl-C came while keeping them)
        try:
            while self.state.ticks < end:
                if chunk == 256 and self._first is not None:  # (the recorder copies)
                    rows, t, rows_at, t_at = self._first
                else:
                    rows = np.empty((2 * chunk, max(ncol, 1)))  # an event: two rows a stop
                    t = np.empty(2 * chunk)
                    rows_at, t_at = rows.ctypes.data, t.ctypes.data
                    if chunk == 256:
                        self._first = rows, t, rows_at, t_at
                cnt[0] = 0
                ctypes.memmove(keep, m, len(keep))  # the slice's start, for a failure
                kept = (list(cnt), self._count.value)
                undo = (len(rec.times), len(rec.rows)) if rec is not None else None
                w = _time.perf_counter()
                st = None
                done = False
                try:
                    st = lib.cosim_sim_run(m, end, chunk, dt, self._off_at, ncol, t0, grid,
                                           every, ctypes.byref(self._count), t_at, rows_at,
                                           cnt)
                finally:  # also when Ctrl-C arrives as the call returns: keep its rows
                    n = int(cnt[0])
                    if (st in (0, 1, 2, None) or self._stays()) \
                            and rec is not None and n:  # (else the slice is undone)
                        rec.extend(t[:n], rows[:n, :ncol], self._widths)
                    done = True
                if st == 1:  # a terminal zero crossing ended the run
                    terminal = int(cnt[7])
                    break
                if st == 2:  # a monitor's condition holds: the monitors run in Python
                    self._monitors(cnt, t, rows)
                    continue
                if st != 0 and self._stays():  # raised where it happened
                    raised = self._raised(st)
                    break
                if st != 0 and self._calls is not None:  # the Python loop raises it again
                    self._calls.error = None
                if st != 0:  # back to the slice's start: the Python loop takes it from there
                    failed = (lib.cosim_sim_error(m) or b"(no message)").decode()
                    ctypes.memmove(m, keep, len(keep))
                    cnt[:], self._count.value = kept
                    break
                if bar is not None:
                    bar.tick(int(self.state.ticks))
                w = _time.perf_counter() - w
                if w < self.slice_s / 4:
                    chunk = min(chunk * 8, 1 << 22) if w <= 0 else \
                        min(1 << 22, max(chunk, int(chunk * self.slice_s / 2 / w)))
            self.whole = failed is None and terminal is None and raised is None
            completed = hold and self.whole
        finally:
            if not done:  # Ctrl-C while the slice's rows were kept: back to the slice's start
                ctypes.memmove(m, keep, len(keep))
                cnt[:], self._count.value = kept
                if undo is not None:
                    del rec.times[undo[0]:], rec.rows[undo[1]:]
            self.held = completed
            if not completed:
                self._pull()
            if dec is not None:
                dec._n = int(self._count.value)
            self.counted(cnt)
        if raised is not None:
            raise raised
        if failed is not None:
            raise FailedInC(failed)
        if terminal is not None:
            from .run_events import Terminate
            raise Terminate(sim.events.crossings[terminal])

    @property
    def lean(self) -> bool:
        """A held step may take :meth:`_held_step`: no recorder, AB3 history, zero crossings
        or blocks called back (a failed call is redone by :meth:`advance`: pure C only)."""
        return (self.sim.recorder is None and not self.ab3 and self.zc is None
                and self._calls is None)

    def _held_step(self, end: int) -> bool:
        """:meth:`advance` of a held state to ``end`` when every call of it completes
        (``cosim_sim_held_step``: ``cosim_sim_run`` returning 0, without the slicing, the
        recorder's and the interruption's bookkeeping).  False (and the state as it was)
        otherwise: the caller redoes it the whole way, which runs the same C from the same
        state."""
        if self._lean_buf is None:  # the times of up to 256 stops a call (no rows), and its
            buf = np.empty(512)  # address (numpy's .ctypes builds an object each time)
            self._lean_buf = (buf, buf.ctypes.data)
        cnt = self._cnt
        if self.lib.cosim_sim_held_step(self.model, end, int(self.sim.grid.ticks or 0),
                                        self._lean_buf[1], cnt, self._snapshot):
            return False
        self.counted(cnt)
        self.whole = True
        return True

    def entry(self, name: str) -> int:
        """The address of this run's C function ``name`` (``cosim_sim_held_step``,
        ``cosim_sim_outputs``: the native master loop calls them, :mod:`cosim.native_loop`)."""
        return ctypes.cast(getattr(self.lib, name), ctypes.c_void_p).value

    def counted(self, cnt: Any) -> None:
        """The C's counts of an advance into the Simulator's stats (steps, partial steps,
        multistep restarts, events) and :attr:`stages`."""
        sim = self.sim
        stats = sim.stats
        stats["steps"] += int(cnt[1])
        stats["partial_steps"] += int(cnt[2])
        stats["multistep_restarts"] += int(cnt[4])
        stats["events"] += int(cnt[6])
        self.stages += int(cnt[5]) + int(cnt[1]) * self._per_step
        sim._fresh = None

    def _stays(self) -> bool:
        """A failed call is not undone (the Python loop does not take its slice over): blocks
        called back with states or side effects ran in it (their effects cannot be undone),
        or Ctrl-C arrived in a call.  Blocks called back that are functions of their inputs
        and time only are recomputed by the Python loop, which then raises its own error."""
        calls = self._calls
        return calls is not None and (not calls.pure or (
            calls.error is not None and not isinstance(calls.error, Exception)))

    def _raised(self, st: int) -> BaseException:
        """What a failed C call of a run that :meth:`_stays` raises: the exception a block
        raised in Python, or the C's own failure."""
        calls = self._calls
        err, calls.error = calls.error, None
        if err is not None:
            return err
        from .errors import StepError
        msg = (self.lib.cosim_sim_error(self.model) or b"(no message)").decode()
        return StepError(f"the compiled run failed at t = {self.state.time:.9g} s: {msg} (a "
                         f"run with blocks called back in Python that have states, "
                         f"{', '.join(self.called_back)}, is not handed to the Python loop: "
                         "their effects cannot be undone; Simulator(compiled=False) runs it "
                         "all in Python)")

    def sync(self) -> None:
        """Hand a :attr:`held` C state back to the context (nothing when none is held)."""
        if self.held:
            self.held = False
            self._pull()

    def _pull(self) -> None:
        """The C state into the context: time, states, signals (with the AB3 history and
        the zero crossings' state)."""
        self.state_map.pull(self.state, self.sim.ctx, self.views)
        if self.ab3:
            self._pull_history()
        if self.zc is not None:
            self._pull_crossings()

    def evaluate_outputs(self) -> bool:
        """:meth:`Simulator.evaluate_outputs <cosim.simulator.Simulator.evaluate_outputs>` on
        a :attr:`held` state, in C; False (nothing to trust) when the C failed."""
        return self.lib.cosim_sim_outputs(self.model) == 0

    @property
    def ticks(self) -> int:
        """The C state's time [ticks]."""
        return int(self.state.ticks)

    @property
    def c_xd(self) -> Any:
        """The C state's ``xd`` as its ctypes array."""
        return self.state.xd

    stages = 0  #: right-hand-side evaluations made in C (the Python loop's rhs_evals)
    _lean_buf: Any = None  # (_held_step's times buffer and its address)
    rhs: Any = None  #: a variable-step run's C right-hand side (cosim.compiled_rhs), once made

    def _push_history(self) -> None:
        """The Python solver's AB3 history into the C model (and whether the C forgets it
        at the first stop: :meth:`~cosim.compiled_route.CompiledRoute.choose` rebuilt the
        program)."""
        sim = self.sim
        hist, h = sim.program.solver.history()
        nx = sim.plan.n_continuous
        for j, f in enumerate(hist):
            self._hist[j * nx:(j + 1) * nx] = f
        drop, sim.route.drop_history = sim.route.drop_history, False
        self.lib.cosim_sim_ab3_set(self.model, len(hist), h or 0.0,
                                   self._hist.ctypes.data, int(drop))

    def _monitors(self, cnt: Any, t: np.ndarray, rows: np.ndarray) -> None:
        """The monitors at the major point where the C stopped (``Simulator.major`` calls
        them there: after the outputs, before the discrete updates), on the context; then the
        rest of the point in C (a call of no stops).  A failure of that rest (a discrete
        update) raises the C's message: the Python loop cannot take over mid-point."""
        sim, lib, m = self.sim, self.lib, self.model
        ctx = sim.ctx
        self.state_map.pull(self.state, ctx, self.views)
        for fn in sim._monitors:
            fn(ctx)
        self.state_map.push(ctx, self.state, self.views)
        rec = sim.recorder
        dec = rec._dec if rec is not None else None
        every = rec.every if rec is not None else 1
        dt = int(sim.grid.ticks or 0)
        grid = dt * every if (dec is not None and dec._ctx is not None) else 0
        cnt[0] = 0
        ncol = len(self._off) if self.ports else 0
        st = lib.cosim_sim_run(m, self.state.ticks, 0, dt, self._off.ctypes.data, ncol,
                               dec._t0 if grid else 0, grid, every, ctypes.byref(self._count),
                               t.ctypes.data, rows.ctypes.data, cnt)
        if st != 0:
            from .errors import StepError
            raise StepError(f"the compiled run failed at t = {ctx.time:.9g} s after the "
                            f"monitors: {(lib.cosim_sim_error(m) or b'').decode()}")
        n = int(cnt[0])
        if rec is not None and n:
            rec.extend(t[:n], rows[:n, :ncol], self._widths)

    def _push_crossings(self) -> None:
        """The Python loop's zero-crossing state (:class:`~cosim.zero_crossings.ZeroCrossings`:
        the witnesses at the last point, those an event left on zero; the Zeno guard's
        recent events) into the C model."""
        events = self.sim.events
        zc = events.crossings
        prev, zero, ticks = self.zc
        n = len(zc.items)
        prev[:n] = zc.previous if len(zc.previous) == n else np.nan
        zero[:n] = [i in zc._zero_after_event for i in range(n)]
        recent = list(events._recent)[-len(ticks):]
        ticks[:len(recent)] = recent
        self.lib.cosim_sim_zc_set(self.model, prev.ctypes.data, zero.ctypes.data,
                                  int(zc._post_event), ticks.ctypes.data, len(recent))

    def _pull_crossings(self) -> None:
        """The C model's zero-crossing state back into the Python loop's."""
        events = self.sim.events
        zc = events.crossings
        prev, zero, ticks = self.zc
        post = ctypes.c_int(0)
        k = self.lib.cosim_sim_zc_get(self.model, prev.ctypes.data, zero.ctypes.data,
                                      ctypes.byref(post), ticks.ctypes.data)
        n = len(zc.items)
        zc.previous = prev[:n].tolist()
        zc._zero_after_event = {i for i in range(n) if zero[i]}
        zc._post_event = bool(post.value)
        events._recent.clear()
        events._recent.extend(int(v) for v in ticks[:k])

    def _pull_history(self) -> None:
        """The C model's AB3 history back into the Python solver."""
        h = ctypes.c_double(0.0)
        n = self.lib.cosim_sim_ab3_get(self.model, ctypes.byref(h), self._hist.ctypes.data)
        nx = self.sim.plan.n_continuous
        self.sim.program.solver.restore([self._hist[j * nx:(j + 1) * nx] for j in range(n)],
                                        h.value or None)


def _event_options(sim: Any) -> tuple:
    """What the C of the zero crossings holds as constants: the Zeno guard's event count
    and span, and whether an event samples its left limit."""
    return (max(1, int(sim.zeno_events)), float(sim.zeno_span_s), bool(sim.events.left))


def same_params(a: list, b: list) -> bool:
    """Whether two parameter lists hold equal values (unequal if they do not compare)."""
    if len(a) != len(b):
        return False
    try:
        for x, y in zip(a, b):
            tx = type(x)
            if (tx is float or tx is int or tx is bool) and type(y) is tx:
                if not x == y:  # as np.array_equal decides for two Python scalars
                    return False
            elif not np.array_equal(x, y):  # (a NumPy call costs about 4 us: arrays only)
                return False
        return True
    except Exception:  # noqa: BLE001 - values that do not compare: assume changed
        return False
