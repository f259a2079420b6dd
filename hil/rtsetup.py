"""Process settings of a real-time run: SCHED_FIFO for the frame and its helper threads,
memory locking, CPU pinning, the garbage collector and the timer slack, applied for the
run and undone after it.

:class:`ProcessSettings` applies what it is given.  ``realtime="auto"`` (the default of
:class:`~hil.runner.RealTimeRunner` on the wall clock) fills in what the caller left open,
each item where the process may use it, and says what it did and what it could not
(:meth:`ProcessSettings.report`, in the run's verdict):

======================  ==================================================  ==============
item                    what                                                needs
======================  ==================================================  ==============
gc freeze               ``gc.collect(); gc.freeze()`` after set-up, the     nothing
                        collector off during the loop
timer slack             1 ns (Linux ``PR_SET_TIMERSLACK``)                  Linux
GIL switch interval     100 us (``sys.setswitchinterval``; Python's 5 ms    nothing
                        default lets a helper thread hold the GIL for 5 ms
                        while the frame waits for it)
SCHED_FIFO              the frame at :data:`AUTO_PRIORITY`, every other     root or
                        thread of the process one level below (a thread     CAP_SYS_NICE
                        holding the GIL must not be preempted by the load)
memory locking          ``mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)``  CAP_IPC_LOCK or
                        (no page faults to disk in the frame)               RLIMIT_MEMLOCK
CPU pinning             the frame thread on one CPU of the process's set,   SCHED_FIFO
                        the highest-numbered one not claimed by another     granted, more
                        auto-pinned run on this machine (a lock file per    than one CPU
                        CPU in the temporary directory)
======================  ==================================================  ==============

Limitations: pinning is per thread (the frame's); two runs on the machine each claim a
CPU through lock files, a process that pins itself by other means is not seen.  Memory
locking is for the whole process; a run that cannot lock reports it and goes on.
"""

from __future__ import annotations

import ctypes
import errno
import gc
import os
import sys
import tempfile
import threading
from typing import Any

from cosim.errors import ParameterError

from .errors import HILError

__all__ = ["AUTO_PRIORITY", "ProcessSettings", "check_cpus", "fifo_permitted"]

#: SCHED_FIFO priority of the frame under ``realtime="auto"`` (helpers one below).
AUTO_PRIORITY = 50
_MCL_CURRENT, _MCL_FUTURE, _MCL_ONFAULT = 1, 2, 4


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def set_timer_slack(ns: int) -> int | None:
    """Set this thread's timer slack; returns the previous value (None off Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    libc = _libc()
    PR_SET_TIMERSLACK, PR_GET_TIMERSLACK = 29, 30  # noqa: N806 - <linux/prctl.h>
    old = libc.prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)
    if libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(ns), 0, 0, 0) != 0:
        raise HILError(f"real-time runner: prctl(PR_SET_TIMERSLACK, {ns}) failed: "
                       f"{os.strerror(ctypes.get_errno())}")
    return old


def fifo_permitted(priority: int = 10) -> bool:
    """True when this process may run a thread under SCHED_FIFO at ``priority`` (root or
    CAP_SYS_NICE, and a real-time budget in its cgroup): tried on the calling thread and
    undone."""
    if not hasattr(os, "sched_setscheduler"):
        return False
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except OSError:
        return False
    os.sched_setscheduler(0, policy, param)
    return True


def check_cpus(cpus: Any) -> list[int] | None:
    """``cpus`` as a sorted list, every one available to this process, else a
    :class:`~cosim.errors.ParameterError` naming the CPU and the available ones."""
    if cpus is None:
        return None
    try:
        wanted = sorted({int(c) for c in cpus})
    except (TypeError, ValueError):
        raise ParameterError(f"real-time runner: cpus must be CPU numbers, got {cpus!r}") \
            from None
    if not wanted:
        raise ParameterError("real-time runner: cpus is empty; give at least one CPU number")
    avail = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        list(range(os.cpu_count() or 1))
    bad = [c for c in wanted if c not in avail]
    if bad:
        raise ParameterError(
            f"real-time runner: CPU {bad[0]} is not available to this process (cpus="
            f"{wanted}); available: {', '.join(map(str, avail))}; choose among those")
    return wanted


def _thread_is_ours(tid: int) -> bool:
    return not sys.platform.startswith("linux") or os.path.exists(f"/proc/self/task/{tid}")


class _CpuClaim:
    """An exclusive claim on one CPU among this machine's auto-pinned runs (flock on
    ``<tmp>/cosim-rt-cpu<N>.lock``; released on close or when the process ends)."""

    def __init__(self) -> None:
        self.fd: int | None = None
        self.cpu: int | None = None

    def claim(self, cpus: list[int]) -> int | None:
        import fcntl
        for c in sorted(cpus, reverse=True):  # CPU 0 takes most interrupts: last
            path = os.path.join(tempfile.gettempdir(), f"cosim-rt-cpu{c}.lock")
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.fd, self.cpu = fd, c
            return c
        return None

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = self.cpu = None


class ProcessSettings:
    """Apply priority, helper priority, memory locking, affinity, gc mode and timer
    slack; restore them on exit (module docstring).

    Parameters
    ----------
    priority, helper_priority : int, optional
        SCHED_FIFO of the frame and of the process's other threads.
    cpus : list of int, optional
        Affinity of the frame thread.
    gc_mode : {"normal", "disable", "freeze"}
    timer_slack_ns : int, optional
    mlock : bool
        ``mlockall`` for the run.
    auto : bool
        Fill in what is left open where permitted (module docstring).
    """

    def __init__(self, priority: int | None, cpus: Any, gc_mode: str | None,
                 timer_slack_ns: int | None, helper_priority: int | None = None, *,
                 mlock: bool | None = None, auto: bool = False) -> None:
        self.auto = bool(auto)
        self.given = {"priority": priority, "cpus": cpus, "gc_mode": gc_mode,
                      "timer_slack_ns": timer_slack_ns, "helper_priority": helper_priority,
                      "mlock": mlock}
        self.priority, self.cpus = priority, check_cpus(cpus)
        self.gc_mode = gc_mode or "normal"
        self.timer_slack_ns = timer_slack_ns
        self.helper_priority = helper_priority
        self.mlock = bool(mlock)
        self.switch_interval_s: float | None = None
        self.helpers: list[str] = []  # the threads raised for the run, by name
        self.refused: list[str] = []  # what auto could not apply, and why
        self.applied: dict[str, Any] = {}
        self._undo: list = []
        self._claim = _CpuClaim()

    # ------------------------------------------------------------ auto
    def _resolve_auto(self) -> None:
        """Fill in the items the caller left open (``None``), where permitted."""
        g = self.given
        self.switch_interval_s = 1e-4
        if g["gc_mode"] is None:
            self.gc_mode = "freeze"
        if g["timer_slack_ns"] is None and sys.platform.startswith("linux"):
            self.timer_slack_ns = 1
        fifo = g["priority"] is None and fifo_permitted(AUTO_PRIORITY)
        if g["priority"] is None:
            if fifo:
                self.priority = AUTO_PRIORITY
                if g["helper_priority"] is None:
                    self.helper_priority = AUTO_PRIORITY - 1
            else:
                self.refused.append("SCHED_FIFO not permitted (needs root or CAP_SYS_NICE, "
                                    "and a real-time budget): best-effort pacing, frames may "
                                    "be late on a busy machine")
        if g["mlock"] is None:
            self.mlock = True
        if g["cpus"] is None:
            if self.priority is None:
                pass  # pinning a normal thread only takes away the scheduler's freedom
            else:
                avail = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
                    else []
                if len(avail) > 1:
                    c = self._claim.claim(avail)
                    if c is None:
                        self.refused.append("CPU pinning: every CPU is claimed by another "
                                            "real-time run on this machine; not pinned")
                    else:
                        self.cpus = [c]

    # ---------------------------------------------------------- helpers
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
        self.applied["helpers"] = len(self.helpers)

    def _mlockall(self) -> None:
        libc = _libc()
        flags = _MCL_CURRENT | _MCL_FUTURE | _MCL_ONFAULT
        if libc.mlockall(flags) != 0 and ctypes.get_errno() == errno.EINVAL:
            flags = _MCL_CURRENT  # a kernel without MCL_ONFAULT: lock what is mapped
            libc.mlockall(flags)
        err = ctypes.get_errno()
        with open("/proc/self/status", encoding="ascii") as f:
            locked = next((ln.split()[1] for ln in f if ln.startswith("VmLck:")), "0")
        if int(locked) == 0 and err:
            msg = (f"memory not locked (mlockall: {os.strerror(err)}; needs CAP_IPC_LOCK or a "
                   "larger RLIMIT_MEMLOCK)")
            if self.auto and self.given["mlock"] is None:
                self.refused.append(msg)
                return
            raise HILError(f"real-time runner: {msg}; pass mlock=False")
        self.applied["mlock_kb"] = int(locked)
        self._undo.append(lambda: libc.munlockall())

    # ------------------------------------------------------------ enter
    def __enter__(self) -> ProcessSettings:
        self.refused, self.applied = [], {}
        try:
            if self.auto:
                self._resolve_auto()
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
                self._undo.append(lambda p=old_policy, q=old_param: os.sched_setscheduler(0, p, q))
                self.applied["priority"] = self.priority
            if self.cpus is not None:
                old = os.sched_getaffinity(0)
                try:
                    os.sched_setaffinity(0, set(self.cpus))
                except OSError as exc:
                    raise HILError(f"real-time runner: cannot pin the frame to CPUs "
                                   f"{self.cpus}: {exc.strerror}; choose among "
                                   f"{sorted(old)}") from None
                self._undo.append(lambda old=old: os.sched_setaffinity(0, old))
                self.applied["cpus"] = list(self.cpus)
            if self.mlock and sys.platform.startswith("linux"):
                self._mlockall()
            if self.timer_slack_ns is not None:
                old = set_timer_slack(self.timer_slack_ns)
                if old is not None:
                    self._undo.append(lambda old=old: set_timer_slack(old))
                    self.applied["timer_slack_ns"] = self.timer_slack_ns
            if self.switch_interval_s is not None:
                old_si = sys.getswitchinterval()
                sys.setswitchinterval(self.switch_interval_s)
                self._undo.append(lambda old=old_si: sys.setswitchinterval(old))
                self.applied["switch_interval_us"] = self.switch_interval_s * 1e6
            if self.gc_mode != "normal":
                was = gc.isenabled()
                if self.gc_mode == "freeze":
                    gc.collect()
                    gc.freeze()
                    self._undo.append(gc.unfreeze)
                gc.disable()
                self._undo.append(lambda was=was: gc.enable() if was else None)
                self.applied["gc"] = self.gc_mode
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        while self._undo:
            self._undo.pop()()
        self._claim.close()
        self.switch_interval_s = None
        if self.auto:  # the next run resolves again
            self.priority, self.cpus = self.given["priority"], check_cpus(self.given["cpus"])
            self.helper_priority = self.given["helper_priority"]

    def report(self) -> dict:
        """What was applied and refused, with a one-line ``text``."""
        a = self.applied
        parts = []
        if "priority" in a:
            parts.append(f"SCHED_FIFO {a['priority']}"
                         + (f" (helpers {self.helper_priority}: {a.get('helpers', 0)} threads)"
                            if self.helper_priority is not None else ""))
        if "mlock_kb" in a:
            parts.append(f"memory locked ({a['mlock_kb'] / 1024:.0f} MB)")
        if "cpus" in a:
            parts.append(f"frame on CPU {','.join(map(str, a['cpus']))}")
        if "gc" in a:
            parts.append(f"gc {a['gc']}")
        if "timer_slack_ns" in a:
            parts.append(f"timer slack {a['timer_slack_ns']} ns")
        if "switch_interval_us" in a:
            parts.append(f"GIL switch interval {a['switch_interval_us']:.0f} us")
        text = ("real-time set-up" + (" (auto)" if self.auto else "") + ": "
                + (", ".join(parts) or "none"))
        if self.refused:
            text += "; not applied: " + "; ".join(self.refused)
        return {"auto": self.auto, "applied": dict(a), "refused": list(self.refused),
                "text": text}
