r"""Real-time runner: the unchanged simulator paced against a monotonic clock.

>>> sim = Simulator(diagram, solver="rk4", dt=1e-3)            # doctest: +SKIP
>>> rt = RealTimeRunner(sim, period_s=1e-3, overrun="skip")      # doctest: +SKIP
>>> res = rt.run(10.0)                                           # doctest: +SKIP
>>> print(rt.telemetry.summary())                                # doctest: +SKIP

Frame ``k`` has the absolute deadline :math:`D_k = T_0 + k P` on the monotonic clock
(never "sleep for P": errors do not accumulate).  At each frame the runner waits until
:math:`D_k` (sleep until ``spin_s`` before it, then spin), applies queued live parameter
changes, advances the simulator to :math:`t_k = k P` (bridge blocks do their I/O inside
that step) and records per frame

* lateness :math:`L_k` = wake-up time - :math:`D_k` (scheduling jitter),
* execution time :math:`E_k` (dSPACE's turnaround time, Simulink Real-Time's TET),
* overrun: the frame ended after the next deadline :math:`D_{k+1}`.

Overrun policy (``overrun=``), chosen by the user:

``"raise"``     stop with :class:`DeadlineMissed` (telemetry up to the miss is kept);
``"skip"``      drop the missed frames: the next frame is the first deadline still ahead
                and the simulation jumps to it in one advance (time stays aligned with
                the wall clock; the model integrates every step, I/O frames are skipped);
``"catch_up"``  run up to ``max_catch_up`` missed frames back to back without waiting,
                then skip the rest;
``"degrade"``   double the frame period (up to ``max_degrade`` times) after
                ``degrade_after`` consecutive overruns, halve it again after
                ``recover_after`` frames without one.

``max_overruns`` (any policy) stops the run with :class:`DeadlineMissed` once exceeded.
:meth:`RealTimeRunner.stop` (thread-safe, also from a signal handler) ends the run after
the current frame, as a normal end (``telemetry.stopped_by`` says why).

Process settings, applied for the run and restored after it: ``priority`` (SCHED_FIFO
priority 1-99; needs root or CAP_SYS_NICE, refused with a clear error otherwise),
``cpus`` (affinity), ``gc_mode`` (``"normal"``, ``"disable"``: collector off during the
loop, ``"freeze"``: ``gc.freeze()`` after set-up then off), ``timer_slack_ns`` (Linux
``PR_SET_TIMERSLACK``; 1 ns halves the sleep lateness, anchors-hil-fmi.md A4),
``helper_priority`` (SCHED_FIFO for the process's other threads, below the frame's: the
GIL makes the frame wait for any thread that holds it, and SCHED_FIFO on the frame alone
does not stop the machine's load from preempting that thread; see the parameter).

Measured on these shared 2-vCPU VMs (anchors-hil-fmi.md A4, 1 kHz): unprivileged
absolute-deadline sleeping p50 81-95 us, p99 133-162 us lateness; with SCHED_FIFO
p99 47-98 us; the worst case is never below 0.5 ms (hypervisor preemption): soft real
time, not hard.  This runner, 2000 frames of 1 ms (a small RK4 diagram, ~50 us per frame):
defaults p50 108 us, p99 188 us, p99.9 0.89 ms, max 2.0 ms, 2 overruns; with
``priority=10, gc_mode="freeze", timer_slack_ns=1, spin_s=1e-4``: p50 0.0 us, p99 15 us,
p99.9 181 us, max 0.47 ms, no overrun.

Recording leaves the frame (``writer_thread=True``, the default): for the run, the runner
asks every observer of the simulator that has ``use_writer_thread()`` (the stream writers
of :mod:`cosim.writers`) to hand its full chunks to a bounded queue drained by a writer
thread, which formats, writes and fsyncs them; the frame only appends a chunk to the
queue (a few microseconds; it never waits).  Those threads are started inside the process
settings, so they inherit the frame's scheduling (SCHED_FIFO with ``priority=``, or
``helper_priority`` when given; they block in write and fsync, and a busy machine cannot
preempt them while they hold the GIL).  A chunk that finds the queue full is dropped and
counted; the writers' counts are in ``telemetry.writers`` (summed in
``as_dict()["recording"]``) and in the summary.  ``writer_thread=False`` keeps the writers
inline (each flush and fsync inside the frame that fills a chunk).

Limitations: one frame thread (the simulator and the bridges' I/O run in the frame; reader
threads of backends and writer threads feed or drain queues); no ``mlockall``; the clock
is ``time.monotonic_ns`` (CLOCK_MONOTONIC) in the process, no external synchronisation
(PTP, a DAQ clock).
"""

from __future__ import annotations

import ctypes
import gc
import math
import os
import queue
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cosim.errors import CosimWarning, ParameterError
from cosim.time import TICKS_PER_SECOND, to_ticks

from .errors import HILError

__all__ = ["DeadlineMissed", "MonotonicClock", "RealTimeRunner", "Telemetry", "VirtualClock",
           "fifo_permitted"]

POLICIES = ("raise", "skip", "catch_up", "degrade")


class DeadlineMissed(HILError):
    """A frame ended after the next deadline under ``overrun="raise"``, or the
    overrun budget ``max_overruns`` was exceeded."""


# ------------------------------------------------------------------ clocks
class MonotonicClock:
    """CLOCK_MONOTONIC in ns; :meth:`wait_until` sleeps, then spins the last ``spin_ns``."""

    def now_ns(self) -> int:
        return time.monotonic_ns()

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
    """A clock for tests: waiting jumps to the deadline (plus ``wake_late_ns``);
    ``cost_ns(frame)`` is the execution time each frame takes (default 0)."""

    def __init__(self, wake_late_ns: int = 0, cost_ns: Any = None) -> None:
        self.t = 0
        self.wake_late_ns = int(wake_late_ns)
        self.cost = cost_ns or (lambda k: 0)
        self.frame = 0

    def now_ns(self) -> int:
        return self.t

    def wait_until(self, deadline_ns: int, spin_ns: int) -> int:
        self.t = max(self.t, deadline_ns + self.wake_late_ns)
        return self.t

    def work(self) -> None:
        """Called by the runner after each frame's advance: spend its cost."""
        self.t += int(self.cost(self.frame))
        self.frame += 1


# ---------------------------------------------------------------- telemetry
@dataclass
class Telemetry:
    """Per-frame record of a real-time run (times in ns) and its summary."""

    period_ns: int
    t_sim: list = field(default_factory=list)        # simulated time of the frame [s]
    lateness_ns: list = field(default_factory=list)
    exec_ns: list = field(default_factory=list)
    end_ns: list = field(default_factory=list)       # clock time at the frame's end
    overrun: list = field(default_factory=list)      # bool per frame
    skipped: int = 0                                 # frames dropped (skip / catch_up)
    degraded: int = 0                                # frames run at a degraded period
    wall_s: float = 0.0
    stopped_by: str = ""
    #: the stream writers' ``stats()`` at the end of the run (:func:`recording_summary`)
    writers: list = field(default_factory=list)

    @property
    def frames(self) -> int:
        return len(self.lateness_ns)

    @property
    def overruns(self) -> int:
        return int(sum(self.overrun))

    def percentiles_us(self) -> dict:
        lat = np.asarray(self.lateness_ns, dtype=float) / 1e3
        if lat.size == 0:
            return {"p50": math.nan, "p99": math.nan, "p99.9": math.nan, "max": math.nan}
        p50, p99, p999 = np.percentile(lat, [50, 99, 99.9])
        return {"p50": float(p50), "p99": float(p99), "p99.9": float(p999),
                "max": float(lat.max())}

    def histogram(self, edges_us: tuple = (10, 50, 100, 250, 500, 1000, 5000)) -> dict:
        """Lateness counts per bin ``"<10us"``, ``"10-50us"``, ..., ``">=5000us"``."""
        lat = np.asarray(self.lateness_ns, dtype=float) / 1e3
        counts = np.histogram(lat, bins=[-np.inf, *edges_us, np.inf])[0]
        labels = [f"<{edges_us[0]}us"] + [f"{a}-{b}us" for a, b in zip(edges_us, edges_us[1:])] \
            + [f">={edges_us[-1]}us"]
        return dict(zip(labels, (int(c) for c in counts)))

    def real_time_factor(self, window: int | None = None) -> float:
        """Simulated time over wall time between frame ends, over the whole run or the
        last ``window`` frames (rolling): 1.0 when the run kept up."""
        if self.frames < 2:
            return math.nan
        k = self.frames - 1 if window is None else min(window, self.frames - 1)
        wall = (self.end_ns[-1] - self.end_ns[-1 - k]) * 1e-9
        return (self.t_sim[-1] - self.t_sim[-1 - k]) / wall if wall > 0 else math.nan

    def as_dict(self) -> dict:
        ex = np.asarray(self.exec_ns, dtype=float) / 1e3
        return {"period_us": self.period_ns / 1e3, "frames": self.frames,
                "lateness_us": self.percentiles_us(), "histogram": self.histogram(),
                "exec_us": {"p50": float(np.median(ex)) if ex.size else math.nan,
                            "max": float(ex.max()) if ex.size else math.nan},
                "overruns": self.overruns, "skipped_frames": self.skipped,
                "degraded_frames": self.degraded, "real_time_factor": self.real_time_factor(),
                "wall_s": self.wall_s, "stopped_by": self.stopped_by,
                "recording": recording_summary(self.writers)}

    def summary(self) -> str:
        d = self.as_dict()
        p = d["lateness_us"]
        return (f"real time: {d['frames']} frames of {d['period_us']:g} us; lateness p50 "
                f"{p['p50']:.1f} us, p99 {p['p99']:.1f} us, p99.9 {p['p99.9']:.1f} us, max "
                f"{p['max']:.1f} us; execution p50 {d['exec_us']['p50']:.1f} us, max "
                f"{d['exec_us']['max']:.1f} us; {d['overruns']} overruns, "
                f"{d['skipped_frames']} frames skipped, {d['degraded_frames']} degraded; "
                f"real-time factor {d['real_time_factor']:.3f}"
                + _recording_text(d["recording"])
                + (f"; stopped: {d['stopped_by']}" if d["stopped_by"] else ""))

    def write_csv(self, path: Any) -> None:
        """One row per frame: ``t_sim_s, lateness_us, exec_us, overrun``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write("t_sim_s,lateness_us,exec_us,overrun\n")
            for t, lat, ex, ov in zip(self.t_sim, self.lateness_ns, self.exec_ns,
                                      self.overrun):
                f.write(f"{t!r},{lat / 1e3!r},{ex / 1e3!r},{int(ov)}\n")


def recording_summary(writers: list) -> dict:
    """The writers' counts summed: chunks written and dropped (queue full), the deepest
    queue, the most the frame spent handing over or writing one chunk, and each
    writer's own ``stats()`` under ``"writers"``."""
    if not writers:
        return {"writers": []}
    return {"chunks_written": sum(w["chunks_written"] for w in writers),
            "samples_written": sum(w["samples_written"] for w in writers),
            "chunks_dropped": sum(w["chunks_dropped"] for w in writers),
            "samples_dropped": sum(w["samples_dropped"] for w in writers),
            "max_queued": max(w["max_queued"] for w in writers),
            "queue_chunks": min(w["queue_chunks"] for w in writers),
            "in_frame_us_max": max(w["caller_us"]["max"] for w in writers),
            "write_ms_max": max(w["write_ms"]["max"] for w in writers),
            "threaded": sum(w["mode"] == "thread" for w in writers),
            "errors": [w["error"] for w in writers if w["error"]],
            "writers": writers}


def _recording_text(r: dict) -> str:
    if not r["writers"]:
        return ""
    n, th = len(r["writers"]), r["threaded"]
    how = ("on writer threads" if th == n else "in the frame" if th == 0
           else f"{th} of {n} writers on threads")
    return (f"; recording {how}: {r['chunks_written']} chunks written, "
            f"{r['chunks_dropped']} dropped (queue full), queue max {r['max_queued']} of "
            f"{r['queue_chunks']}, per chunk {r['in_frame_us_max']:.0f} us max in the frame, "
            f"write max {r['write_ms_max']:.1f} ms")


# --------------------------------------------------------------- process setup
def _set_timer_slack(ns: int) -> int | None:
    """Set this thread's timer slack; returns the previous value (None off Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_TIMERSLACK, PR_GET_TIMERSLACK = 29, 30  # noqa: N806 - <linux/prctl.h>
    old = libc.prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)
    if libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(ns), 0, 0, 0) != 0:
        raise HILError(f"real-time runner: prctl(PR_SET_TIMERSLACK, {ns}) failed: "
                       f"{os.strerror(ctypes.get_errno())}")
    return old


def fifo_permitted(priority: int = 10) -> bool:
    """True when this process may run a thread under SCHED_FIFO at ``priority`` (root or
    CAP_SYS_NICE, and a real-time budget in its cgroup): tried on the calling thread and
    undone.  For callers that want ``priority=`` where it can take effect and best-effort
    pacing elsewhere (the runner itself refuses a priority it cannot get)."""
    if not hasattr(os, "sched_setscheduler"):
        return False
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except OSError:
        return False
    os.sched_setscheduler(0, policy, param)
    return True


def _thread_is_ours(tid: int) -> bool:
    return not sys.platform.startswith("linux") or os.path.exists(f"/proc/self/task/{tid}")


class _ProcessSettings:
    """Apply priority, affinity, gc mode and timer slack (and the helper threads'
    priority: :meth:`raise_helpers`); restore them on exit."""

    def __init__(self, priority: int | None, cpus: Any, gc_mode: str,
                 timer_slack_ns: int | None, helper_priority: int | None = None) -> None:
        self.priority, self.cpus, self.gc_mode = priority, cpus, gc_mode
        self.timer_slack_ns = timer_slack_ns
        self.helper_priority = helper_priority
        self.helpers: list[str] = []  # the threads raised for the run, by name
        self._undo: list = []

    def raise_helpers(self) -> None:
        """Every other live thread of this process to SCHED_FIFO ``helper_priority``,
        restored on exit (a thread that ended meanwhile is skipped)."""
        self.helpers = []
        if self.helper_priority is None:
            return
        me = threading.get_native_id()
        param = os.sched_param(self.helper_priority)
        for th in threading.enumerate():
            tid = th.native_id
            if tid is None or tid == me or not th.is_alive():
                continue
            try:
                old = os.sched_getscheduler(tid), os.sched_getparam(tid)
                os.sched_setscheduler(tid, os.SCHED_FIFO, param)
            except ProcessLookupError:
                continue  # it ended meanwhile
            except PermissionError:
                raise HILError(
                    f"real-time runner: SCHED_FIFO priority {self.helper_priority} for thread "
                    f"'{th.name}' refused (needs root or CAP_SYS_NICE); pass "
                    "helper_priority=None") from None

            def undo(tid: int = tid, old: tuple = old) -> None:
                if _thread_is_ours(tid):  # not a reused id of another process
                    try:
                        os.sched_setscheduler(tid, *old)
                    except ProcessLookupError:
                        pass

            self._undo.append(undo)
            self.helpers.append(th.name)

    def __enter__(self) -> _ProcessSettings:
        try:
            if self.cpus is not None:
                old = os.sched_getaffinity(0)
                os.sched_setaffinity(0, set(self.cpus))
                self._undo.append(lambda: os.sched_setaffinity(0, old))
            if self.priority is not None:
                old_policy, old_param = os.sched_getscheduler(0), os.sched_getparam(0)
                try:
                    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self.priority))
                except PermissionError:
                    raise HILError(
                        f"real-time runner: SCHED_FIFO priority {self.priority} refused "
                        "(needs root or CAP_SYS_NICE): run privileged, grant the capability "
                        "(setcap cap_sys_nice+ep on the interpreter) or pass priority=None "
                        "for best-effort pacing") from None
                self._undo.append(lambda: os.sched_setscheduler(0, old_policy, old_param))
            if self.timer_slack_ns is not None:
                old = _set_timer_slack(self.timer_slack_ns)
                if old is not None:
                    self._undo.append(lambda: _set_timer_slack(old))
            if self.gc_mode != "normal":
                was = gc.isenabled()
                if self.gc_mode == "freeze":
                    gc.collect()
                    gc.freeze()
                    self._undo.append(gc.unfreeze)
                gc.disable()
                self._undo.append(lambda: gc.enable() if was else None)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        while self._undo:
            self._undo.pop()()


# ------------------------------------------------------------------- runner
class RealTimeRunner:
    """Run a :class:`~cosim.simulator.Simulator` in real time (module docstring).

    Parameters
    ----------
    sim : Simulator
        Built as for an offline run; fixed-step solvers give a constant cost per frame.
    period_s : float
        Frame period; a whole number of the simulator's ``dt`` (its sample times
        and the frame grid should agree).
    overrun : {"raise", "skip", "catch_up", "degrade"}
    max_catch_up, max_overruns, degrade_after, recover_after, max_degrade
        Policy settings (module docstring).
    spin_s : float
        Spin this long before each deadline (0: sleep only).  Spinning costs CPU;
        it pays only with SCHED_FIFO (anchors-hil-fmi.md A4).
    priority, cpus, gc_mode, timer_slack_ns
        Process settings for the run (module docstring).
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
        docstring; default True).  Warns when the simulator has no observers to switch
        (a driven object that is not a :class:`~cosim.simulator.Simulator`).
    clock : MonotonicClock or VirtualClock
    on_frame : callable, optional
        ``on_frame(runner, k)`` after each frame (logging, a watchdog).
    """

    def __init__(self, sim: Any, period_s: float, *, overrun: str = "skip",
                 max_catch_up: int = 10, max_overruns: int | None = None,
                 degrade_after: int = 3, recover_after: int = 100, max_degrade: int = 3,
                 spin_s: float = 0.0, priority: int | None = None, cpus: Any = None,
                 gc_mode: str = "normal", timer_slack_ns: int | None = None,
                 helper_priority: int | None = None, writer_thread: bool = True,
                 clock: Any = None, on_frame: Any = None) -> None:
        if overrun not in POLICIES:
            raise ParameterError(f"RealTimeRunner: overrun must be one of {POLICIES}, got "
                                 f"{overrun!r}")
        if gc_mode not in ("normal", "disable", "freeze"):
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
        self.max_catch_up, self.max_overruns = int(max_catch_up), max_overruns
        self.degrade_after, self.recover_after = int(degrade_after), int(recover_after)
        self.max_degrade = int(max_degrade)
        self.spin_ns = int(round(spin_s * 1e9))
        self.settings = _ProcessSettings(priority, cpus, gc_mode, timer_slack_ns,
                                         helper_priority)
        self.writer_thread = bool(writer_thread)
        if self.writer_thread and not hasattr(sim, "observers"):
            warnings.warn(f"RealTimeRunner: writer_thread=True cannot take effect: "
                          f"{type(sim).__name__} has no observers to move to writer threads; "
                          "its recording (if any) stays in the frame", CosimWarning, stacklevel=2)
        self.clock = clock or MonotonicClock()
        self.on_frame = on_frame
        self._changes: queue.SimpleQueue = queue.SimpleQueue()
        self._stop = threading.Event()
        self._stop_reason = ""
        self.telemetry = Telemetry(self.period)

    def stop(self, reason: str = "stop()") -> None:
        """End the run after the current frame (thread-safe; a signal handler may call
        it).  :meth:`run` then returns normally with ``telemetry.stopped_by = reason``.
        Called before :meth:`run`, it makes the next run end before its first frame."""
        self._stop_reason = reason
        self._stop.set()

    # ------------------------------------------------------- live changes
    def set_parameter(self, path: str, value: Any) -> None:
        """Change ``'block.param'`` at the start of the next frame (thread-safe: call it
        from a UI or network thread while the run goes)."""
        self._changes.put((path, value))

    def _apply_changes(self) -> None:
        while True:
            try:
                path, value = self._changes.get_nowait()
            except queue.Empty:
                return
            self.sim.ctx.set_param(path, value)

    # ---------------------------------------------------------------- run
    def run(self, duration_s: float) -> Any:
        """Run ``duration_s`` of simulated time in real time; returns the simulator's
        results with ``diagnostics["realtime"]`` (the telemetry summary)."""
        end = self.sim.ctx.ticks + to_ticks(duration_s, "duration")
        tel = self.telemetry = Telemetry(self.period)
        error: BaseException | None = None
        writers = [o for o in getattr(self.sim, "observers", ()) if hasattr(o, "stats")
                   and hasattr(o, "use_writer_thread")]
        try:
            with self.settings:
                if self.writer_thread:
                    for w in writers:  # started here: they inherit the frame's scheduling
                        w.use_writer_thread()
                self.settings.raise_helpers()  # helper_priority: every other thread
                self._loop(end, tel)
        except BaseException as exc:
            error = exc
            tel.stopped_by = f"{type(exc).__name__}: {exc}"
        finally:
            if self._stop.is_set():
                tel.stopped_by = tel.stopped_by or self._stop_reason
                self._stop.clear()
        try:
            res = self.sim.finish(error)  # the writers drain their queues and close
        except Exception as exc:  # a writer thread's error that surfaced at the end
            tel.stopped_by = tel.stopped_by or f"{type(exc).__name__}: {exc}"
            exc.telemetry = tel
            raise
        finally:
            tel.writers = [w.stats() for w in writers]
        res.diagnostics["realtime"] = tel.as_dict()
        if error is not None:
            if isinstance(error, Exception):
                error.results = res
                error.telemetry = tel
            raise error
        return res

    def _loop(self, end: int, tel: Telemetry) -> None:
        sim, clock = self.sim, self.clock
        if not getattr(sim, "_initialized", False):
            sim.initialize()
        period = self.period
        t_sim = sim.ctx.ticks
        work = getattr(clock, "work", None)
        t0 = clock.now_ns()
        deadline = t0
        late_streak = ok_streak = 0
        level = 0  # degrade: period * 2**level
        stop = self._stop
        while t_sim < end and not stop.is_set():
            step = period << level
            deadline += step
            woke = clock.wait_until(deadline, self.spin_ns)
            t_sim = min(t_sim + step, end)
            self._apply_changes()
            sim.advance_to_ticks(t_sim)
            if work is not None:
                work()
            done = clock.now_ns()
            tel.t_sim.append(t_sim / TICKS_PER_SECOND)
            tel.lateness_ns.append(woke - deadline)
            tel.exec_ns.append(done - woke)
            tel.end_ns.append(done)
            over = done > deadline + step
            tel.overrun.append(over)
            if level:
                tel.degraded += 1
            if self.on_frame is not None:
                self.on_frame(self, tel.frames - 1)
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
            missed = (done - deadline) // step  # deadlines already in the past
            if self.policy == "skip":
                drop = missed
            elif self.policy == "catch_up":
                drop = max(0, missed - self.max_catch_up)
            else:  # degrade
                drop = missed
                if late_streak >= self.degrade_after and level < self.max_degrade:
                    level, late_streak = level + 1, 0
            drop = min(drop, (end - t_sim) // step)  # never past the end of the run
            if drop:
                tel.skipped += int(drop)
                deadline += drop * step
                t_sim = min(t_sim + drop * step, end)
                sim.advance_to_ticks(t_sim)  # the model still integrates the skipped span
        tel.wall_s = (clock.now_ns() - t0) * 1e-9
