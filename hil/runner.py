r"""Real-time runner: the unchanged simulator (or co-simulation master) paced against a
monotonic clock, ending with a verdict.

>>> sim = Simulator(diagram, solver="rk4", dt=1e-3)            # doctest: +SKIP
>>> rt = RealTimeRunner(sim, period_s=1e-3, overrun="skip")      # doctest: +SKIP
>>> res = rt.run(10.0)                                           # doctest: +SKIP
>>> print(rt.verdict.line())                                     # doctest: +SKIP

Frame ``k`` has the absolute deadline :math:`D_k = T_0 + k P` on the monotonic clock
(never "sleep for P": errors do not accumulate).  At each frame the runner waits until
:math:`D_k` (sleep until ``spin_s`` before it, then spin), applies queued live parameter
changes, advances the simulator to :math:`t_k = k P` (bridge blocks do their I/O inside
that step) and records per frame

* lateness :math:`L_k` = wake-up time - :math:`D_k` (scheduling jitter),
* execution time :math:`E_k` (dSPACE's turnaround time, Simulink Real-Time's TET),
* the frame thread's CPU time :math:`C_k` in the frame (``clock.cpu_ns``: the frame's own
  work, without the time its thread was preempted or waited for the GIL),
* overrun: the frame ended after the next deadline :math:`D_{k+1}`, with its cause: the
  frame's own work, or a stall of :math:`L_k + E_k - C_k` off the CPU
  (:class:`~hil.telemetry.Telemetry`; the verdict's diagnosis tells the two apart).

Overrun policy (``overrun=``), chosen by the user:

``"raise"``     stop with :class:`DeadlineMissed` (telemetry up to the miss is kept);
``"skip"``      drop the missed frames: the model integrates through them in one advance
                with the I/O of every bridge block suppressed (a skipped frame sends and
                reads nothing: no burst of stale frames), then the clock is read again and
                any deadline that passed meanwhile is dropped too, so simulated time stays
                aligned with the wall clock;
``"catch_up"``  run up to ``max_catch_up`` missed frames back to back without waiting
                (with their I/O), then skip the rest; ``max_catch_up=None`` never skips
                (simulated time falls behind the wall clock and catches up): what a
                lock-step loop needs, where every frame must run;
``"degrade"``   double the frame period (up to ``max_degrade`` times) after
                ``degrade_after`` consecutive overruns, halve it again after
                ``recover_after`` frames without one.

A clock or ``on_frame`` that must see every frame (``needs_every_frame = True``: the two
ends of :mod:`hil.can.lockstep`) is refused with any policy that can drop or merge frames:
it takes ``overrun="raise"`` or ``overrun="catch_up", max_catch_up=None``.

``max_overruns`` (any policy) stops the run with :class:`DeadlineMissed` once exceeded.
:meth:`RealTimeRunner.stop` (thread-safe, also from a signal handler) ends the run after
the current frame, as a normal end (``telemetry.stopped_by`` says why).  A model that ends
the run itself (``sim.terminated``: an FMU's terminateSimulation, a terminal event) ends
the loop after that frame; the verdict says so.

Verdict (:mod:`hil.verdict`): after every run ``runner.verdict`` holds the checks of the
telemetry (overruns, skipped frames, lateness p99 and max) and of the I/O (stale episodes,
frames lost, link losses, bad frames, dropped recording, lock-step timeouts: summed from
every block of the model and every object in ``watch`` that has ``io_figures()``, and the
bridges' backends) against ``budget``; ``results.diagnostics["verdict"]`` has it as a dict.

Process settings (:mod:`hil.rtsetup`), applied for the run and restored after it:
``realtime="auto"`` (the default on the wall clock) applies gc freezing and 1 ns timer
slack always, and SCHED_FIFO (frame :data:`~hil.rtsetup.AUTO_PRIORITY`, helper threads one
below), memory locking and CPU pinning where the process may; what it could not apply is
said in the verdict's notes.  Explicit ``priority``, ``cpus``, ``gc_mode``,
``timer_slack_ns``, ``helper_priority`` and ``mlock`` win over auto; ``realtime="off"``
applies only those.  On a :class:`VirtualClock` auto applies nothing.  A clock paced by
something else (:class:`hil.can.lockstep.SyncClock`: a leader's sync messages) gets the
set-up as the wall clock does.

Measured on these shared 2-vCPU VMs (anchors-hil-fmi.md A4, 1 kHz): unprivileged
absolute-deadline sleeping p50 81-95 us, p99 133-162 us lateness; with SCHED_FIFO
p99 47-98 us; the worst case is never below 0.5 ms (hypervisor preemption): soft real
time, not hard.  This runner, 2000 frames of 1 ms (a small RK4 diagram, ~50 us per frame):
defaults without any set-up p50 108 us, p99 188 us, p99.9 0.89 ms, max 2.0 ms, 2 overruns;
with ``priority=10, gc_mode="freeze", timer_slack_ns=1, spin_s=1e-4``: p50 0.0 us, p99 15 us,
p99.9 181 us, max 0.47 ms, no overrun.

Nothing slow in the frame: for the run, the runner asks every observer of the simulator
that has ``use_writer_thread()`` (the stream writers of :mod:`cosim.writers`) to hand its
full chunks to a bounded queue drained by a writer thread (``writer_thread=True``, the
default); ``telemetry_csv=`` streams one row per frame the same way
(:class:`~hil.telemetry.TelemetryStream`).  A chunk or a batch of rows that finds its queue
full is dropped and counted (``recording_dropped`` in the verdict), never waited for.
Those threads are started inside the process settings, so they inherit the frame's
scheduling.  Telemetry is kept in constant memory (:mod:`hil.telemetry`: streaming
histograms and a ring of the last frames).

Limitations: one frame thread (the simulator and the bridges' I/O run in the frame; reader
threads of backends and writer threads feed or drain queues); the clock is
``time.monotonic_ns`` (CLOCK_MONOTONIC) in the process, no external synchronisation
(PTP, a DAQ clock); lateness quantiles are within 1.6 % (log-linear histogram).
"""

from __future__ import annotations

import os
import queue
import time
import warnings
from typing import Any

from cosim.errors import CosimWarning, ParameterError
from cosim.time import TICKS_PER_SECOND, to_ticks

from .errors import HILError
from .rtsetup import ProcessSettings, fifo_permitted
from .telemetry import Telemetry, TelemetryStream, recording_summary
from .threads import StopFlag
from .verdict import Budget, Verdict, io_figures, runner_verdict

__all__ = ["Budget", "DeadlineMissed", "MonotonicClock", "RealTimeRunner", "Telemetry",
           "Verdict", "VirtualClock", "fifo_permitted", "recording_summary"]

POLICIES = ("raise", "skip", "catch_up", "degrade")


class DeadlineMissed(HILError):
    """A frame ended after the next deadline under ``overrun="raise"``, or the
    overrun budget ``max_overruns`` was exceeded."""


# ------------------------------------------------------------------ clocks
class MonotonicClock:
    """CLOCK_MONOTONIC in ns; :meth:`wait_until` sleeps, then spins the last ``spin_ns``;
    :meth:`cpu_ns` is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID)."""

    def now_ns(self) -> int:
        return time.monotonic_ns()

    cpu_ns = staticmethod(time.thread_time_ns)

    def wait_until(self, deadline_ns: int, spin_ns: int) -> int:
        now = time.monotonic_ns()
        coarse = deadline_ns - spin_ns - now
        if coarse > 0:
            time.sleep(coarse * 1e-9)
        now = time.monotonic_ns()
        while now < deadline_ns:
            now = time.monotonic_ns()
        return now


class VirtualClock:
    """A clock for tests: waiting jumps to the deadline (plus ``wake_late_ns``, plus
    ``stall_ns(frame)`` before that frame); ``cost_ns(frame)`` is the execution time each
    frame takes (default 0), all of it CPU time but ``off_cpu_ns(frame)`` (the frame's
    thread preempted inside the frame)."""

    def __init__(self, wake_late_ns: int = 0, cost_ns: Any = None, *, stall_ns: Any = None,
                 off_cpu_ns: Any = None) -> None:
        self.t = 0
        self.cpu = 0
        self.wake_late_ns = int(wake_late_ns)
        self.cost = cost_ns or (lambda k: 0)
        self.stall = stall_ns or (lambda k: 0)
        self.off_cpu = off_cpu_ns or (lambda k: 0)
        self.frame = 0

    def now_ns(self) -> int:
        return self.t

    def cpu_ns(self) -> int:
        return self.cpu

    def wait_until(self, deadline_ns: int, spin_ns: int) -> int:
        self.t = max(self.t, deadline_ns + self.wake_late_ns) + int(self.stall(self.frame))
        return self.t

    def work(self) -> None:
        """Called by the runner after each frame's advance: spend its cost."""
        cost, off = int(self.cost(self.frame)), int(self.off_cpu(self.frame))
        self.t += cost
        self.cpu += cost - min(off, cost)
        self.frame += 1


def _cpu_jiffies() -> tuple[int, int] | None:
    """(steal, total) jiffies of all CPUs from ``/proc/stat`` (None off Linux)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return (v[7] if len(v) > 7 else 0), sum(v)


def _require_steppable(sim: Any) -> None:
    """Refuse what the runner cannot step (a diagram or builder: wrap it in a Simulator)."""
    from cosim.diagram import Diagram, DiagramBuilder, require_diagram
    from cosim.errors import NotADiagramError
    if hasattr(sim, "advance_to_ticks") and hasattr(sim, "ctx"):
        return
    wrap = ("a Simulator or a RealTimeMaster (Simulator(diagram, solver=..., dt=...) or "
            "RealTimeMaster(master))")
    if isinstance(sim, Diagram):
        raise NotADiagramError(f"RealTimeRunner takes {wrap}, got the Diagram "
                               f"'{sim.name}': wrap it in Simulator(diagram, solver='rk4', "
                               "dt=...)")
    if isinstance(sim, DiagramBuilder):
        require_diagram(sim, "RealTimeRunner", f"in {wrap}")
    try:
        require_diagram(sim, "RealTimeRunner", f"in {wrap}")
    except NotADiagramError as exc:
        raise NotADiagramError(str(exc).replace("a built Diagram in ", "")) from None


# ------------------------------------------------------------------- runner
class RealTimeRunner:
    """Run a :class:`~cosim.simulator.Simulator` (or a master through
    :class:`hil.master_rt.RealTimeMaster`) in real time (module docstring).

    Parameters
    ----------
    sim : Simulator or RealTimeMaster
        Built as for an offline run; fixed-step solvers give a constant cost per frame.
    period_s : float
        Frame period; a whole number of the simulator's ``dt`` (its sample times
        and the frame grid should agree).
    overrun : {"raise", "skip", "catch_up", "degrade"}
    max_catch_up, max_overruns, degrade_after, recover_after, max_degrade
        Policy settings (module docstring); ``max_catch_up=None``: catch up every frame.
    spin_s : float
        Spin this long before each deadline (0: sleep only).  Spinning costs CPU;
        it pays only with SCHED_FIFO (anchors-hil-fmi.md A4).
    realtime : {"auto", "off"}
        Fill in the process settings left open where permitted (module docstring).
    priority, cpus, gc_mode, timer_slack_ns, mlock
        Process settings for the run (:mod:`hil.rtsetup`); ``None``: auto's choice, or
        nothing with ``realtime="off"``.  ``cpus`` must be CPUs this process may use.
    helper_priority : int, optional
        With ``priority``: SCHED_FIFO priority (below ``priority``) for every other thread
        of the process during the run: reader and writer threads, device emulators, a
        software bus.  They share the GIL with the frame, and a thread preempted by the
        machine's load while it holds the GIL makes the frame wait for it (priority
        inversion: measured 6-25 ms of lateness at SCHED_FIFO with two busy processes,
        and a 130 ms stall of an in-process device emulator).  Give it only when those
        threads block most of the time: a busy thread at SCHED_FIFO takes a core from
        every ordinary process.  Threads started during the run inherit the priority of
        the thread that starts them (the frame's, for threads started in ``on_frame``).
    writer_thread : bool
        Move the simulator's stream writers to writer threads for the run (module
        docstring; default True).  Warns when the simulator has no observers to switch.
    budget : hil.verdict.Budget, optional
        What the run may show and still pass (default :class:`~hil.verdict.Budget()`).
    watch : list, optional
        More objects with ``io_figures()`` for the verdict (backends, bus logs, monitors).
    telemetry_csv : str or path-like, optional
        Stream one row per frame to this CSV file from a writer thread.
    telemetry_ring : int
        Frames kept in full in memory (the last ones).
    clock : MonotonicClock or VirtualClock
    on_frame : callable, optional
        ``on_frame(runner, k)`` after each frame (logging, a watchdog).
    hints : dict, optional
        How the program running this runner sets the period and the budget, for the
        verdict's advice (``{"period": "--period S", "budget": "--budget NAME=VALUE"}``;
        default: the API's ``period_s=`` and ``budget=``).
    """

    def __init__(self, sim: Any, period_s: float, *, overrun: str = "skip",
                 max_catch_up: int | None = 10, max_overruns: int | None = None,
                 degrade_after: int = 3, recover_after: int = 100, max_degrade: int = 3,
                 spin_s: float = 0.0, realtime: str = "auto", priority: int | None = None,
                 cpus: Any = None, gc_mode: str | None = None,
                 timer_slack_ns: int | None = None, helper_priority: int | None = None,
                 mlock: bool | None = None, writer_thread: bool = True,
                 budget: Budget | None = None, watch: Any = (), telemetry_csv: Any = None,
                 telemetry_ring: int = 10_000, clock: Any = None,
                 on_frame: Any = None, hints: dict | None = None) -> None:
        if overrun not in POLICIES:
            raise ParameterError(f"RealTimeRunner: overrun must be one of {POLICIES}, got "
                                 f"{overrun!r}")
        if realtime not in ("auto", "off"):
            raise ParameterError(f"RealTimeRunner: realtime must be 'auto' or 'off', got "
                                 f"{realtime!r}")
        if gc_mode not in (None, "normal", "disable", "freeze"):
            raise ParameterError("RealTimeRunner: gc_mode must be 'normal', 'disable' or "
                                 f"'freeze', got {gc_mode!r}")
        if priority is not None and not 1 <= int(priority) <= 99:
            raise ParameterError(f"RealTimeRunner: SCHED_FIFO priority must be 1..99, got "
                                 f"{priority!r}")
        if helper_priority is not None and (priority is None
                                            or not 1 <= int(helper_priority) < int(priority)):
            raise ParameterError(
                f"RealTimeRunner: helper_priority={helper_priority!r} needs a SCHED_FIFO "
                f"priority for the frame and must be 1..priority-1 (priority={priority!r}): "
                "the frame must preempt its helpers")
        _require_steppable(sim)
        if budget is not None and not isinstance(budget, Budget):
            raise ParameterError(f"RealTimeRunner: budget must be a hil.verdict.Budget, got "
                                 f"{type(budget).__name__}")
        self.sim = sim
        self.period = to_ticks(period_s, "real-time period")
        if self.period <= 0:
            raise ParameterError(f"RealTimeRunner: period must be positive, got {period_s!r}")
        dt = getattr(sim, "dt_ticks", None)
        if dt and self.period % dt:
            raise ParameterError(
                f"RealTimeRunner: period {period_s} s is not a whole number of the "
                f"simulator's step dt = {dt / TICKS_PER_SECOND} s; choose period = n * dt")
        self.policy = overrun
        self.max_catch_up = None if max_catch_up is None else int(max_catch_up)
        self.max_overruns = max_overruns
        strict = [o for o in (clock, on_frame) if getattr(o, "needs_every_frame", False)]
        if strict and not (overrun == "raise" or (overrun == "catch_up"
                                                  and self.max_catch_up is None)):
            what = type(strict[0]).__name__
            raise ParameterError(
                f"RealTimeRunner: {what} must see every frame (lock-step), but "
                f"overrun={overrun!r}" + (f" with max_catch_up={max_catch_up}"
                                          if overrun == "catch_up" else "")
                + " can drop or merge frames after an overrun; use overrun='catch_up', "
                "max_catch_up=None (late frames run back to back) or overrun='raise'")
        self.degrade_after, self.recover_after = int(degrade_after), int(recover_after)
        self.max_degrade = int(max_degrade)
        self.spin_ns = int(round(spin_s * 1e9))
        self.clock = clock or MonotonicClock()
        self.realtime = "off" if isinstance(self.clock, VirtualClock) else realtime
        self.settings = ProcessSettings(priority, cpus, gc_mode, timer_slack_ns,
                                        helper_priority, mlock=mlock,
                                        auto=self.realtime == "auto")
        self.writer_thread = bool(writer_thread)
        if self.writer_thread and not hasattr(sim, "observers"):
            warnings.warn(f"RealTimeRunner: writer_thread=True cannot take effect: "
                          f"{type(sim).__name__} has no observers to move to writer threads; "
                          "its recording (if any) stays in the frame", CosimWarning, stacklevel=2)
        self.budget = budget or Budget()
        self.watch = list(watch)
        self.telemetry_csv = telemetry_csv
        self.telemetry_ring = int(telemetry_ring)
        self.on_frame = on_frame
        self.hints = dict(hints or {})
        self._changes: queue.SimpleQueue = queue.SimpleQueue()
        self._stop = StopFlag()  # (no lock: stop() may run in a signal handler)
        self._stop_reason = ""
        self.telemetry = Telemetry(self.period, self.telemetry_ring)
        self.verdict: Verdict | None = None
        self.setup: dict | None = None

    def stop(self, reason: str = "stop()") -> None:
        """End the run after the current frame (thread-safe; a signal handler may call
        it).  :meth:`run` then returns normally with ``telemetry.stopped_by = reason``.
        Called before :meth:`run`, it makes the next run end before its first frame."""
        self._stop_reason = reason
        self._stop.set()

    # ------------------------------------------------------- live changes
    def set_parameter(self, path: str, value: Any) -> None:
        """Change ``'block.param'`` at the start of the next frame (thread-safe: call it
        from a UI or network thread while the run goes).  The value is checked now (an
        unknown path or a value of the wrong kind raises here, in the caller's thread)."""
        check = getattr(self.sim.ctx, "check_param", None)
        self._changes.put(check(path, value) if check is not None else (path, value))

    def _apply_changes(self) -> None:
        while True:
            try:
                path, value = self._changes.get_nowait()
            except queue.Empty:
                return
            self.sim.ctx.set_param(path, value)

    # -------------------------------------------------------------- I/O
    def io_objects(self) -> list:
        """Everything the verdict asks for ``io_figures()``: the model's blocks that have
        it, their backends, and ``watch`` (each once)."""
        blocks = getattr(self.sim, "io_blocks", None)
        if blocks is None:
            diagram = getattr(self.sim, "diagram", None)
            blocks = diagram.leaf_blocks() if diagram is not None else []
        out, seen = [], set()
        for o in [*blocks, *self.watch]:
            for x in (o, getattr(o, "backend", None)):
                if x is not None and hasattr(x, "io_figures") and id(x) not in seen:
                    seen.add(id(x))
                    out.append(x)
        return out

    # ---------------------------------------------------------------- run
    def run(self, duration_s: float) -> Any:
        """Run ``duration_s`` of simulated time in real time; returns the simulator's
        results with ``diagnostics["realtime"]`` (the telemetry summary) and
        ``diagnostics["verdict"]``; :attr:`verdict` holds the :class:`Verdict`.  An error
        is raised after the verdict was made (``exc.verdict``)."""
        start = self.sim.ctx.ticks
        end = start + to_ticks(duration_s, "duration")
        tel = self.telemetry = Telemetry(self.period, self.telemetry_ring)
        error: BaseException | None = None
        writers = [o for o in getattr(self.sim, "observers", ()) if hasattr(o, "stats")
                   and hasattr(o, "use_writer_thread")]
        io = self.io_objects()
        self._suppress = [o for o in io if hasattr(o, "suppress_io")]
        self.setup = None
        jiffies0 = _cpu_jiffies()
        try:
            with self.settings:
                self.setup = self.settings.report()
                if self.telemetry_csv is not None:
                    tel.stream = TelemetryStream(self.telemetry_csv)
                if self.writer_thread:
                    for w in writers:  # started here: they inherit the frame's scheduling
                        w.use_writer_thread()
                self.settings.raise_helpers()  # helper_priority: every other thread
                self.setup = self.settings.report()
                self._loop(end, tel)
        except BaseException as exc:
            error = exc
            tel.stopped_by = f"{type(exc).__name__}: {exc}"
        finally:
            if self._stop.is_set():
                tel.stopped_by = tel.stopped_by or self._stop_reason
                self._stop.clear()
            if tel.stream is not None:
                tel.stream.close()
            jiffies1 = _cpu_jiffies()
            if jiffies0 and jiffies1 and jiffies1[1] > jiffies0[1]:
                hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
                steal = jiffies1[0] - jiffies0[0]
                tel.steal = {"ms": 1e3 * steal / hz,
                             "fraction": steal / (jiffies1[1] - jiffies0[1])}
        try:
            res = self.sim.finish(error)  # the writers drain their queues and close
        except Exception as exc:  # a writer thread's error that surfaced at the end
            tel.stopped_by = tel.stopped_by or f"{type(exc).__name__}: {exc}"
            exc.telemetry = tel
            tel.writers = [w.stats() for w in writers]
            self._judge(exc, start, io)
            exc.verdict = self.verdict
            raise
        tel.writers = [w.stats() for w in writers]
        res.diagnostics["realtime"] = tel.as_dict()
        verdict = self._judge(error, start, io)
        res.diagnostics["verdict"] = verdict.as_dict()
        if error is not None:
            if isinstance(error, Exception):
                error.results = res
                error.telemetry = tel
                error.verdict = verdict
            raise error
        return res

    def _judge(self, error: BaseException | None, start: int, io: list) -> Verdict:
        tel = self.telemetry
        figures = io_figures(io)
        rec = tel.as_dict()["recording"]
        figures["recording_dropped"] += int(rec.get("chunks_dropped", 0))
        if tel.stream is not None:
            figures["recording_dropped"] += tel.stream.rows_dropped
        due = max(1, (self.sim.ctx.ticks - start) // self.period)
        name = getattr(getattr(self.sim, "diagram", None), "name", None) or \
            getattr(self.sim, "name", type(self.sim).__name__)
        self.verdict = runner_verdict(name, tel, self.budget, figures, error=error,
                                      terminated=getattr(self.sim, "terminated", None),
                                      setup=self.setup, frames_due=int(due),
                                      hints=self.hints)
        self.verdict.io = figures
        return self.verdict

    def _skip_advance(self, t_sim: int) -> None:
        """Advance through skipped frames with every bridge's I/O suppressed."""
        sup = self._suppress
        for o in sup:
            o.suppress_io(True)
        try:
            self.sim.advance_to_ticks(t_sim)
        finally:
            for o in sup:
                o.suppress_io(False)

    def _loop(self, end: int, tel: Telemetry) -> None:
        sim, clock = self.sim, self.clock
        if not getattr(sim, "_initialized", False):
            sim.initialize()
        # run in C where the whole run pays for it, built now rather than mid-run: a
        # Simulator's route, or a model that passes the end on (a master's subsystems)
        ahead = getattr(sim, "expect", None) or getattr(getattr(sim, "route", None),
                                                          "expect", None)
        if ahead is not None:
            ahead(end)
        period = self.period
        t_sim = sim.ctx.ticks
        work = getattr(clock, "work", None)
        cpu_ns = getattr(clock, "cpu_ns", time.thread_time_ns)  # the frame thread's CPU
        t0 = clock.now_ns()
        deadline = t0
        late_streak = ok_streak = 0
        level = 0  # degrade: period * 2**level
        stop = self._stop
        record = tel.record
        while t_sim < end and not stop.is_set():
            step = period << level
            deadline += step
            woke = clock.wait_until(deadline, self.spin_ns)
            cpu0 = cpu_ns()
            t_sim = min(t_sim + step, end)
            self._apply_changes()
            sim.advance_to_ticks(t_sim)
            if work is not None:
                work()
            done = clock.now_ns()
            over = done > deadline + step
            record(t_sim / TICKS_PER_SECOND, woke - deadline, done - woke, done, over,
                   cpu_ns() - cpu0, step)
            if level:
                tel.degraded += 1
            if self.on_frame is not None:
                self.on_frame(self, tel.frames - 1)
            if getattr(sim, "terminated", None):
                tel.stopped_by = "terminated by the model"
                break
            if not over:
                late_streak, ok_streak = 0, ok_streak + 1
                if level and ok_streak >= self.recover_after:
                    level, ok_streak = level - 1, 0
                continue
            late_streak, ok_streak = late_streak + 1, 0
            if self.max_overruns is not None and tel.overruns > self.max_overruns:
                raise DeadlineMissed(
                    f"real-time runner: {tel.overruns} overruns, more than max_overruns = "
                    f"{self.max_overruns}, at t = {t_sim / TICKS_PER_SECOND:.6g} s (last frame "
                    f"took {(done - woke) / 1e3:.0f} us of a {step / 1e3:.0f} us period); "
                    "lengthen the period, simplify the model or raise the priority")
            if self.policy == "raise":
                raise DeadlineMissed(
                    f"real-time runner: frame at t = {t_sim / TICKS_PER_SECOND:.6g} s ended "
                    f"{(done - deadline - step) / 1e3:.0f} us after the next deadline "
                    f"(execution {(done - woke) / 1e3:.0f} us, period {step / 1e3:.0f} us); "
                    "choose overrun='skip', 'catch_up' or 'degrade', or lengthen the period")
            if self.policy == "degrade" and late_streak >= self.degrade_after \
                    and level < self.max_degrade:
                level, late_streak = level + 1, 0
            allowed = 0 if self.policy != "catch_up" else \
                (1 << 62 if self.max_catch_up is None else self.max_catch_up)
            while t_sim < end:
                missed = (done - deadline) // step  # deadlines already in the past
                drop = min(max(0, missed - allowed), (end - t_sim) // step)
                if drop <= 0:
                    break
                allowed = 0  # a catch-up budget is spent once per overrun
                tel.skipped += int(drop)
                deadline += drop * step
                t_sim = min(t_sim + drop * step, end)
                self._skip_advance(t_sim)  # the model integrates the span, no I/O
                if getattr(sim, "terminated", None) or self.policy == "catch_up":
                    break  # catch_up: the frames allowed run back to back from here
                done = clock.now_ns()  # the span took time too: drop what passed meanwhile
        tel.wall_s = (clock.now_ns() - t0) * 1e-9
