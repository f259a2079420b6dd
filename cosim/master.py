"""The co-simulation master: couples subsystems with their own solvers and steps.

A :class:`MasterScheduler` advances in macro steps ``H`` on the integer tick
grid.  At each step the coupling strategy (:mod:`cosim.coupling`) gives every
due subsystem its inputs as polynomials (:mod:`cosim.extrapolation`), steps
it, and publishes its outputs.  Connections are checked like diagram wires
(names with suggestions, shapes, units with conversion).

The master's concepts live in three modules: this one holds the set-up,
the services the couplings call, rollback and the macro-step loop;
:mod:`cosim.master_settle` the initialization and the consistent feedthrough
outputs at communication points (algebraic loops, high-order start); and
:mod:`cosim.master_results` the recording of rows, per-step diagnostics and
the :class:`~cosim.observers.Results` (:class:`~cosim.master_results.MasterRecord`, held
as ``master.record``, reading the master through its recording interface:
:meth:`MasterScheduler.counters`, :meth:`~MasterScheduler.signal_specs`, ...), and
the settling in :class:`~cosim.master_settle.Settler` (held as ``master.settler``, using
the coupling services).

Example
-------
>>> master = MasterScheduler([plant, ctrl], [("plant.y", "ctrl.u"),     # doctest: +SKIP
...                                          ("ctrl.f", "plant.f")], step_s=1e-3,
...                          coupling=GaussSeidel(), extrapolation=1)
>>> res = master.run(10.0)                                               # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from time import perf_counter as _perf
from typing import Any

import numpy as np

from . import bonds, master_wiring
from .coupling import Coupling, Jacobi
from .errors import BuildError, ContextError, CosimWarning
from .extrapolation import SignalHistory
from .master_counters import MasterCounters
from .master_interface import InterfaceVectors
from .master_results import MasterRecord, package_versions
from .master_settle import Settler
from .observers import Results
from .progress import ProgressBar
from .step_control import run_controlled
from .time import SECONDS_PER_TICK, format_time, to_ticks

_NS = SECONDS_PER_TICK


def _compiled_loop(master: Any, want: bool | None) -> tuple:
    """``(loop, '')`` when the macro steps of ``master`` can run compiled, else ``(None,
    why not)``; ``want=True`` makes a reason a :class:`BuildError`."""
    if want is False:
        return None, "not asked for (compiled=False)"
    # the loop the FMUs offer (fmus.compiled_master); it decides whether it can also run
    # the other subsystems (native diagrams through their C twins); without FMUs, the
    # native loop (cosim.native_loop)
    loops = {id(loop): loop for s in master.subsystems
             if (loop := getattr(s, "compiled_loop", None)) is not None}
    loop = next(iter(loops.values())) if len(loops) == 1 else None
    if not loops:
        from .native_loop import NativeLoop
        loop = NativeLoop()
    if loop is None:
        why = "the subsystems offer different compiled loops"
    else:
        why = loop.reason(master)
    if why and want:
        raise BuildError(f"MasterScheduler(compiled=True): the macro steps cannot run "
                         f"compiled: {why}; pass compiled=None to fall back to the "
                         "Python loop")
    return (None, why) if why else (loop, "")


def _publish_pending(m: Any) -> None:
    """The outputs of slower subsystems whose time ``m.t`` has reached, published."""
    for name, (t_end, outs) in list(m.pending.items()):
        if t_end <= m.t:
            m.publish(m.by_name[name], t_end, outs)
            del m.pending[name]


class MasterScheduler:
    """Couple :class:`~cosim.subsystem.Subsystem` objects (see module docstring).

    Parameters
    ----------
    subsystems : list of Subsystem
    connections : list of ``("src.output", "dst.input")``
        or ``("src.output", "dst.input", (factor, offset))``: the input then
        receives ``factor * output + offset`` (in the output's unit, converted
        to the input's unit afterwards), as an SSP linear transformation.
    step_s : float
        Macro (communication) step ``H``.
    coupling : Coupling
        :class:`~cosim.coupling.Jacobi` (default) or :class:`~cosim.coupling.GaussSeidel`.
    extrapolation : int or dict, optional
        Polynomial order 0-3 of every coupling input, or ``{"dst.input": order}``
        with a ``"*"`` default (not given: 1).  A subsystem follows at most the
        degree its ``max_input_order`` says (a Co-Simulation FMU that cannot
        interpolate inputs holds them: 0); its inputs get the polynomial of that
        lower order (degree 0 is the newest sample: the value at the start of
        the step when extrapolating, at its end when interpolating, as iterative
        coupling and Gauss-Seidel's later subsystems do).  An order given here
        that a subsystem cannot follow is lowered with a :class:`CosimWarning`.
        Non-Real signals (Boolean, Integer of any width, Enumeration, String,
        Binary) are never extrapolated nor interpolated: every coupling holds
        them at the newest value, whatever the order (no warning).
    step_control : StepController, optional
        Communication-step control (:mod:`cosim.step_control`); ``step_s`` is
        then the initial step.
    power_bonds : list of ``("A.effort", "B.flow")``, optional
        Power-bond couplings (force-velocity, torque-speed, pressure-flow):
        ``A.effort`` feeds an input of ``B`` and ``B.flow`` an input of ``A``.
        The master records the energy residual of each macro step (see
        :func:`cosim.bonds.PowerBond.residual`) and the step controller can bound it.
    loop_solver : str
        How outputs with direct feedthrough are made consistent at a
        communication point when they form an algebraic loop across
        subsystems (:meth:`_solve_loop`): ``"newton"`` (default; interface
        Jacobian chained from the subsystems' ``output_jacobian()``),
        ``"broyden"`` (secant updates, no Jacobians needed, as Schiehlen &
        Scholz) or ``"fixed_point"`` (plain sweeps; diverges for loop gains
        of magnitude 1 or more).  Without such a loop one ordered sweep is exact.
    writers : list of StreamWriter, optional
        :class:`~cosim.writers.CsvWriter` / :class:`~cosim.writers.Hdf5Writer` given
        signal names (``"sub.output"``) or ``"all"``: every communication point is
        streamed to disk in chunks while the run goes, so a crash or a kill loses at
        most the last chunk (the file's status says how the run ended).
    energy_correction : bool
        With ``power_bonds``: give each bond's effort input an offset over the next
        step that returns the energy the coupling created in the step before
        (:meth:`cosim.bonds.PowerBond.correction`); the energy residual is still
        recorded as created, so ``energy_residual_total`` stays the uncorrected sum.
    compiled : bool, optional
        Run the macro steps in compiled code where the FMUs offer a ``compiled_loop``
        (:mod:`fmus.compiled_master`) and it accepts the master (explicit coupling, no
        step control or bonds; native diagram subsystems through their C twins,
        :mod:`fmus.native_twin`); a master without FMUs in the native loop
        (:mod:`cosim.native_loop`: Jacobi or Gauss-Seidel, orders 0-1).  ``None``
        (default): where possible, the reason otherwise in
        ``diagnostics["compiled"]``; ``True``: a reason is a :class:`BuildError`;
        ``False``: always the Python loop.  Results equal to round-off.
    progress : bool
        A progress bar on stderr (:mod:`cosim.progress`: a terminal only, runs over ~1 s).
    high_order_start : bool
        For extrapolation orders 2-3 (every coupling, iterative included),
        compute the first macro steps by waveform relaxation (``Settler.startup``)
        so the global order is ``p + 1`` from the start; otherwise the first
        step's zero-order hold (iterative coupling: linear interpolation) limits
        it to 2 (iterative: 3).  Where it cannot run (a subsystem without
        save/restore, or at a rate above 1) the master warns at construction;
        ``False`` accepts the hold start without a word.  With step control it
        does not apply: the controller sizes the first steps, whose short
        history allows only lower orders (down to ``h_min_s``, accepted there).
    """

    def __init__(self, subsystems: list, connections: list, step_s: float, *,
                 coupling: Coupling | None = None, extrapolation: Any = None,
                 step_control: Any = None, power_bonds: list | None = None,
                 loop_solver: str = "newton", high_order_start: bool = True,
                 writers: Any = (), compiled: bool | None = None,
                 energy_correction: bool = False, progress: bool = False) -> None:
        if loop_solver not in ("newton", "broyden", "fixed_point"):
            raise BuildError(f"MasterScheduler: loop_solver must be 'newton', 'broyden' or "
                             f"'fixed_point', got {loop_solver!r}")
        self.loop_solver = loop_solver
        self.high_order_start = high_order_start
        self.writers = list(writers)
        self.progress = progress
        self._bar = ProgressBar(0, 0, False)
        self.subsystems = list(subsystems)
        self.by_name: dict[str, Any] = master_wiring.by_name(self.subsystems)
        self.H = to_ticks(step_s, "macro step")
        if self.H <= 0:
            raise BuildError(f"MasterScheduler: macro step must be positive, got {step_s!r}")
        self.coupling = coupling or Jacobi()
        #: ``(subsystem, input)`` -> ``((subsystem, output), scale, bias)``
        self.sources = master_wiring.sources(self.by_name, connections)
        self.orders = master_wiring.orders(1 if extrapolation is None else extrapolation,
                                           self.sources)
        #: the order each input gets: ``orders`` lowered to what its subsystem follows
        self.input_orders = master_wiring.input_orders(self.orders, self.sources, self.by_name,
                                                       warn=extrapolation is not None)
        self.coupled_sources = sorted({src for src, _, _ in self.sources.values()})
        for s in self.subsystems:
            check = getattr(s, "check_step", None)
            if check is not None:
                check(s.rate * self.H)
        self.coupling.check(self)
        self.compiled = compiled
        # a non-Real output (its declared dtype) is held and never iterated numerically
        self.histories = {(s.name, o): SignalHistory(depth=5,
                                                     exact=master_wiring.declared_exact(s, o))
                          for s in self.subsystems for o in s.output_names}
        # per subsystem: (input, source history, order, scale, bias) and (output, history)
        self._feeds = {s.name: [(i, self.histories[self.sources[(s.name, i)][0]],
                                 self.input_orders[(s.name, i)], *self.sources[(s.name, i)][1:])
                                for i in s.input_names if (s.name, i) in self.sources]
                       for s in self.subsystems}
        self._outs = {s.name: [(o, self.histories[(s.name, o)]) for o in s.output_names]
                      for s in self.subsystems}
        #: every subsystem steps at the macro step
        self.single_rate = all(s.rate == 1 for s in self.subsystems)
        self._hist_list = list(self.histories.values())
        self._slots: dict[str, dict] = {}  # the per-step rollback slots of save()
        self._savers = [(s.name, getattr(s, "save_state_into", None) or
                         (lambda token, s=s: s.save_state())) for s in self.subsystems]
        #: the coupled outputs as one vector (iterative coupling, loops, step control)
        self.interface = InterfaceVectors(self.subsystems, self.histories,
                                          self.coupled_sources, self.sources, self.orders,
                                          self._feeds)
        self._fed: dict[str, dict] = {}  # the input polynomials of the last step, per subsystem
        self.bonds = [bonds.resolve(self, e, f) for e, f in (power_bonds or [])]
        if energy_correction and not self.bonds:
            raise BuildError("MasterScheduler: energy_correction=True needs power_bonds=[...] "
                             "(the effort/flow pairs whose energy to correct)")
        self.energy_correction = bool(energy_correction)
        self.pending: dict[str, tuple[int, dict]] = {}
        #: what the run counts (:class:`~cosim.master_counters.MasterCounters`)
        self.counters = MasterCounters([s.name for s in self.subsystems])
        #: initialization and consistent feedthrough outputs (cosim.master_settle)
        self.settler = Settler(self)
        self.step_control = step_control
        self._check_high_order_start()
        self.t = 0
        #: ``{"t", "by", "reason"}`` when a subsystem ended the run, else None
        self.terminated: dict | None = None
        #: the run's rows, marks and results (:class:`~cosim.master_results.MasterRecord`)
        self.record = MasterRecord(self)
        self._loop, self.compiled_reason = _compiled_loop(self, compiled)
        #: what ran the last run's macro steps: True (the compiled loop), else why the
        #: Python loop did (``diagnostics["compiled"]``)
        self.loop_ran: bool | str = self.compiled_reason or "not run yet"

    # ----------------------------------------------------------- set-up
    def _check_high_order_start(self) -> None:
        """Warn at construction when ``high_order_start`` is asked for but cannot run."""
        p = max(self.input_orders.values(), default=0)
        if not self.high_order_start or p < 2:
            return
        if self.step_control is not None:
            return  # the controller sizes the first steps itself (docstring)
        why = self._startup_obstacle()
        if why:
            capped = 3 if getattr(self.coupling, "needs_rollback", False) else 2
            if capped >= p + 1:
                return
            warnings.warn(
                f"MasterScheduler: high_order_start cannot run ({why}): the first macro step "
                f"uses a lower-order input, so extrapolation order {p} gives global order "
                f"{capped}, not {p + 1}; give the subsystems save/restore and rate 1, or pass "
                "high_order_start=False to accept it", CosimWarning, stacklevel=3)

    def _startup_obstacle(self) -> str:
        """Why the high-order start cannot run ('' when it can)."""
        slow = [s.name for s in self.subsystems if s.rate != 1]
        if slow:
            return f"subsystem(s) {', '.join(slow)} at a rate above 1"
        bad = [s.name for s in self.subsystems if not getattr(s, "can_save_state", False)]
        if bad:
            return f"subsystem(s) {', '.join(bad)} cannot save and restore their state"
        return ""

    def initialize(self, t0_s: float = 0.0, max_iter: int = 50, tol: float = 1e-12) -> None:
        """Initialize the subsystems at ``t0_s`` with consistent outputs
        (:meth:`Settler.initialize <cosim.master_settle.Settler.initialize>`)."""
        self.release_slots()
        self.settler.initialize(t0_s, max_iter, tol)

    # ------------------------------------------------ used by couplings
    def due(self, k: int) -> list:
        if self.single_rate:
            return self.subsystems
        return [s for s in self.subsystems if k % s.rate == 0]

    def input_polys(self, s: Any, t0: int, constant: bool = False) -> dict[str, Any]:
        """``s``'s inputs from ``t0`` on, as polynomials of the published histories.

        With ``constant`` the latest published values (a zero-order hold).
        """
        polys = {}
        for name, hist, order, scale, bias in self._feeds[s.name]:
            if (constant or order == 0) and hist.scalar:  # the common held input: no call
                v = hist.v[-1]
                polys[name] = (v * scale + bias,) if (scale != 1.0 or bias != 0.0) else (v,)
                continue
            c = hist.constant() if constant else hist.polynomial(order, t0)
            if scale != 1.0 or bias != 0.0:
                if isinstance(c, tuple):
                    c = (c[0] * scale + bias,) + tuple(x * scale for x in c[1:])
                else:
                    c = c * scale
                    c[0] = c[0] + bias
            polys[name] = c
        return polys

    def feed_inputs(self, s: Any, t0: int, correct: bool = True) -> None:
        """Set ``s``'s inputs from ``t0`` on from the published histories.

        Extrapolation or interpolation follows from what has been published: a
        source already stepped to the end of this macro step is interpolated.
        ``correct``: with the energy correction (``energy_correction=True``).
        """
        polys = self.input_polys(s, t0)
        if correct and self.energy_correction:
            bonds.correct_inputs(self.bonds, s.name, polys, self.input_orders, t0,
                                 self.H * _NS, self.counters.last_energy)
        self._fed[s.name] = polys
        s.set_inputs(t0 * _NS, polys)

    def step_subsystem(self, s: Any, t0: int, h: int) -> None:
        w = _perf()
        s.do_step(t0, h)
        c = self.counters  # (sums: added beside a compiled loop's counts not yet flushed)
        c._wall[s.name] += _perf() - w
        c._steps[s.name] += 1

    def refresh_subsystem(self, s: Any) -> None:
        """Recompute ``s``'s outputs for new inputs (timed as the subsystem's work)."""
        w = _perf()
        s.refresh_outputs()
        self.counters._wall[s.name] += _perf() - w

    def collect(self, s: Any, t_end: int) -> None:
        """Publish ``s``'s outputs now if its step ends within this macro step, else later."""
        outs = s.get_outputs()
        if t_end <= self.t + self.H:
            self.publish(s, t_end, outs)
        else:
            self.pending[s.name] = (t_end, outs)

    def publish(self, s: Any, t_end: int, outs: dict) -> None:
        """Publish ``s``'s outputs ``outs`` at ``t_end`` (pushed onto their histories)."""
        for o, hist in self._outs[s.name]:
            v = outs[o]
            ts = hist.t
            if hist.scalar and type(v) is float and ts and ts[-1] < t_end:
                ts.append(t_end)  # SignalHistory.push's common case, inline
                hist.v.append(v)
            else:
                hist.push(t_end, v)

    # --------------------------------------------------------- rollback
    def check_rollback(self, why: str) -> None:
        """Refuse rollback-based methods when a subsystem cannot save its state."""
        bad = [s.name for s in self.subsystems if not getattr(s, "can_save_state", False)]
        if bad:
            raise ContextError(f"{why} needs to redo macro steps, but subsystem(s) "
                               f"{', '.join(repr(b) for b in bad)} cannot save and restore "
                               "their state; use a non-iterative coupling without step "
                               "rejection, or give them save/restore")

    def save(self, slot: str | None = None, histories: bool = True) -> dict:
        """Checkpoint of the whole co-simulation (subsystems, histories, time).

        Without ``slot`` the checkpoint is new and the caller's to keep.  ``slot`` names
        one of the master's own per-step rollback slots (iterative coupling's, the step
        controller's): the checkpoint saved last under that name is overwritten and
        returned, each subsystem saving into the token it holds (``save_state_into``: an
        FMU's state memory is reused, not allocated and freed at every macro step).  So
        only the caller may hold a slot's checkpoint, and only until its next save under
        that name; the slots are released (their FMU states freed) when a run ends and
        at :meth:`initialize`.

        ``histories=False`` leaves the signal histories out (``"hist"`` None): for a
        caller that restores with ``restore(..., histories=False)`` only (iterative
        coupling, whose every sweep publishes every output at the step end before it reads
        a history there).
        """
        snap = self._slots.get(slot) if slot is not None else None
        hist = [(list(h.t), list(h.v)) for h in self._hist_list] if histories else None
        if snap is None:
            snap = {"t": self.t, "subs": {s.name: s.save_state() for s in self.subsystems},
                    "hist": hist, "pending": dict(self.pending),
                    "energy": self.counters.energy_total}
            if slot is not None:
                self._slots[slot] = snap
            return snap
        subs = snap["subs"]
        for name, into in self._savers:
            subs[name] = into(subs[name])
        snap["t"] = self.t
        snap["hist"] = hist  # (h.snapshot() of each, inline)
        snap["pending"] = dict(self.pending)
        snap["energy"] = self.counters.energy_total
        return snap

    def release_slots(self) -> None:
        """Drop the rollback slots of :meth:`save` (the FMU states they hold are freed)."""
        self._slots.clear()

    def restore(self, snap: dict, histories: bool = True) -> None:
        """Roll back to a checkpoint made by :meth:`save`.

        ``histories=False`` leaves the signal histories as they are: exact only where every
        history the caller reads next gets its samples after the checkpoint's time pushed
        again first (iterative coupling's sweeps: a push at the step end replaces the sample
        there, and the history's depth drops the same oldest sample either way).
        """
        self.t = snap["t"]
        subs = snap["subs"]
        for s in self.subsystems:
            s.restore_state(subs[s.name])
        if histories:
            kept = snap["hist"]
            if kept is None:
                raise ContextError("MasterScheduler.restore: this checkpoint was saved with "
                                   "histories=False and holds no signal histories; save it "
                                   "with histories=True to restore them")
            for h, k in zip(self._hist_list, kept):
                h.restore(k)
        self.pending = dict(snap["pending"])
        self.counters.energy_total = snap["energy"]
        self.counters.rollbacks += 1

    # ---------------------------------------------------------- running
    def _macro(self, k: int, H: int) -> None:
        """One macro step of size ``H`` from ``self.t`` (coupling, publication, settling)."""
        self.counters.exchanges += 1
        if self.pending:
            _publish_pending(self)
        due = self.due(k)
        saved_H, self.H = self.H, H
        try:
            self.coupling.step(self, k, self.t, H)
        finally:
            self.H = saved_H
        self.t += H
        if self.pending:
            _publish_pending(self)
        # feedthrough outputs at the new communication point see the inputs there (a
        # coupling whose last act settled them there, as iterative coupling's sweep does,
        # leaves nothing to do when one pass in dependency order settles them: a second
        # pass recomputes the same values)
        if self.single_rate:
            if not (self.settler.once and getattr(self.coupling, "settles_end_point", False)):
                self.settler.settle_point(self.t)
        else:
            self.settler.settle_point(self.t, [s for s in self.settler.subs
                                               if s.rate == 1 and s in due])
        if self.bonds:  # the energy the coupling created in the step (cosim.bonds)
            c = self.counters
            c.last_energy = sum(b.residual(self._fed, self.t - H, H * _NS) for b in self.bonds)
            c.energy_total += c.last_energy

    def run(self, t_end_s: float, t0_s: float = 0.0) -> Results:
        """Co-simulate from ``t0_s`` to ``t_end_s``; returns the published outputs.

        With ``writers``, every communication point also streams to disk; on failure
        the writers are closed with the error as their status.  On failure or Ctrl-C
        (``KeyboardInterrupt``) the exception carries the results up to the last
        completed macro step as ``exc.results`` (``master.t`` is that step's end).
        """
        error = None
        wall0 = _perf()
        self.record.times = []  # the partial results below are this run's (record.start)
        try:
            return self._run(t_end_s, t0_s)
        except BaseException as exc:
            error = exc
            if isinstance(exc, (Exception, KeyboardInterrupt)) and self.record.times:
                try:
                    exc.results = self.record.results(_perf() - wall0,
                                                      self.record.n_times - 1)
                except Exception:  # noqa: BLE001 - never hide the run's own error
                    pass
            raise
        finally:
            self.release_slots()
            self._bar.done()
            for w in self.writers:
                if getattr(w, "_state", None) == "open":
                    w.on_finish(self, error)

    def _run(self, t_end_s: float, t0_s: float) -> Results:
        self.terminated = None
        self.loop_ran = self.compiled_reason or \
            "no macro step was left for the compiled loop (the Python loop ran them)"
        if getattr(self.coupling, "needs_rollback", False):
            self.check_rollback(f"coupling '{self.coupling.name}'")
        self.initialize(t0_s)
        end = to_ticks(t_end_s, "end time")
        for s in self.subsystems:  # compiled=None weighs a subsystem's C on the whole run
            plan = getattr(s, "plan_run", None)
            if plan is not None:
                plan(end)
        self._bar = ProgressBar(self.t, end, self.progress)
        record = self.record
        if self.step_control is None and \
                (end - self.t) % (self.H * max(s.rate for s in self.subsystems)):
            raise BuildError(f"end time {t_end_s} s is not a whole number of macro steps "
                             f"H = {format_time(self.H)} (times the largest rate)")
        record.start()
        wall0 = _perf()
        if self.step_control is not None:
            k = run_controlled(self, end)
            return record.results(_perf() - wall0, k)
        k = 0
        H = self.H
        p = max(self.input_orders.values(), default=0)
        self._check_terminated()  # already at initialization
        if self.high_order_start and p >= 2 and end - self.t >= p * H \
                and not self._startup_obstacle() and self.terminated is None:
            k = self.settler.startup(p)
            self._check_terminated()
        array = None
        if self._loop is not None and self.t < end and self.terminated is None:
            why = self._loop.run_reason(self)
            if why and self.compiled:
                raise BuildError(f"MasterScheduler(compiled=True): the macro steps cannot run "
                                 f"compiled: {why}; pass compiled=None to fall back to the "
                                 "Python loop")
            self.compiled_reason = why
            if why:
                self.loop_ran = why
            else:
                self.loop_ran = True
                k, array = self._loop.run(self, k, end, record.times, record.rows)
                self._check_terminated()
        while self.t < end and self.terminated is None:
            self._macro(k, H)
            record.point(H)
            k += 1
            if self._check_terminated():
                break
        return record.results(_perf() - wall0, k, array)

    # --------------------------------------- the recording interface (MasterRecord)
    def outputs_now(self) -> list:
        """The newest published output of every signal (a row of the results)."""
        return [h.v[-1] for h in self._hist_list]  # values are never modified in place

    def signal_specs(self) -> list[tuple]:
        """``(path, unit, shape, dtype)`` of every signal, in row order: the declared
        dtype, or for an undeclared one text as text (object) and the rest float."""
        out = []
        for sname, o in self.histories:
            s = self.by_name[sname]
            dtype = getattr(s, "dtypes", {}).get(o)
            if dtype is None:
                last = self.histories[(sname, o)].v
                dtype = object if last and isinstance(last[-1], (str, bytes)) else float
            out.append((f"{sname}.{o}", s.units[o] or "", tuple(s.shapes[o]), np.dtype(dtype)))
        return out

    def provenance(self, stream: bool = False) -> dict:
        """The results' provenance (``stream``: the stream writers' header form)."""
        if stream:
            return {"model": "+".join(s.name for s in self.subsystems),
                    "master": {"H_s": self.H * _NS, "coupling": type(self.coupling).__name__,
                               "extrapolation": sorted({int(v) for v in self.orders.values()})},
                    "versions": package_versions()}
        return {"model": "+".join(self.by_name), "coupling": self.coupling.name,
                "macro_step_s": self.H * _NS,
                "extrapolation": {".".join(k): v for k, v in self.orders.items()},
                "versions": package_versions()}

    def run_diagnostics(self, wall: float, n_steps: int) -> dict:
        """The run's diagnostics (``n_steps`` macro steps in ``wall`` seconds)."""
        c = self.counters
        sub_wall = sum(c.wall.values())
        diag = {
            "macro_steps": n_steps, "communications": c.exchanges, "wall_s": wall,
            "subsystem_wall_s": dict(c.wall), "subsystem_steps": dict(c.steps),
            "master_overhead_us_per_subsystem_step":
                1e6 * (wall - sub_wall) / max(1, sum(c.steps.values())),
            "init_sweeps": self.settler.init_sweeps,
            "startup_sweeps": self.settler.startup_sweeps,
            "loop_solves": self.settler.loop_solves,
            "loop_evaluations_per_solve":
                self.settler.loop_evaluations / max(1, self.settler.loop_solves),
            "rollbacks": c.rollbacks,
            "rejections": c.rejections,
            "step_sizes_s": list(c.step_sizes),
            "unrecoverable_steps": c.unrecoverable,
            "steps_over_tol_at_h_min": c.over_tol_at_min,
            "energy_residual_total": c.energy_total if self.bonds else None,
            "compiled": self.loop_ran,
            "iterations_per_step_max": max(c.iterations, default=0),
            "iterations_per_step_mean": float(np.mean(c.iterations)) if c.iterations
            else 0.0,
        }
        if getattr(self, "terminated", None):
            diag["terminated"] = dict(self.terminated)
        return diag

    def tick_progress(self) -> None:
        self._bar.tick(self.t)

    def stepper(self, *, record_every: int | None = 1, t0_s: float = 0.0) -> Any:
        """The master stepped by the caller, one macro step at a time
        (:class:`~cosim.master_stepping.MasterStepper`: ``step()``, ``advance_to_ticks()``,
        ``results()``); the same outputs as :meth:`run`."""
        from .master_stepping import MasterStepper
        return MasterStepper(self, record_every=record_every, t0_s=t0_s)

    def _check_terminated(self) -> bool:
        """A subsystem ended the run (an FMU's terminateSimulation): not an error; the run
        stops after this communication point (``results.diagnostics["terminated"]``)."""
        for s in self.subsystems:
            term = getattr(s, "terminated", None)
            if term:
                self.terminated = {"t": term.get("t", self.t * _NS), "by": s.name,
                                   "reason": term.get("reason", "")}
                return True
        return False
