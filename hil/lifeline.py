"""The processes of a HIL command end with it, and a stopped run ends in order (issue 36
item 2: after SIGTERM or SIGKILL of ``examples/acc_hil.py`` its ECU process could stay
alive, at SCHED_FIFO 20 with a one-day default duration, and a SIGTERM'd run wrote no
summary).

The command's side
------------------
* :func:`spawn` starts a child process that ends with this one: in its own process group
  (a new session: Ctrl-C on the terminal reaches only the command, which ends the child in
  order; :func:`signal_group` signals the child and its own children), through a small
  Python launcher (:data:`LAUNCHER`, no ``preexec_fn``: unsafe in a process with threads)
  that asks Linux for the parent-death signal (``prctl(PR_SET_PDEATHSIG)``), exits at
  once if the command died before it asked, and then ``exec``\\ s the child's command.
  The child's environment names the command (:data:`PARENT_ENV`: its pid and start time),
  for :func:`tie_to_parent`.  :class:`hil.peer.Peer` starts its peers this way.
* :class:`StopOnSignals`: SIGTERM and SIGINT stop the run in order: the runner handed to it
  stops at the end of its frame, and the command then writes its summary with the status
  ``"terminated"`` (``"interrupted"`` for SIGINT); before there is a runner, and at a
  second signal, :class:`Terminated` is raised (the command's ``finally`` blocks still end
  its children).

The child's side
----------------
* :func:`tie_to_parent` (at the child's start) sets the parent-death signal again, in the
  child itself, and starts a thread that watches the parent: when ``getppid()`` changes or
  the command named in :data:`PARENT_ENV` is gone, the child sends itself the signal (its
  handler ends its run in order and writes its summary; SIGKILL after ``grace_s`` if it is
  still there).  The death signal alone is not enough: the kernel clears it when the child
  ``exec``\\ s a binary with file capabilities (measured here: a Python given
  ``cap_sys_nice+ep`` with ``setcap``, which is how a rig grants SCHED_FIFO without root,
  started by a user who is not root, had it 0 after the launcher's ``exec``), it follows
  the *thread* that started the child, a wrapper (a shell script, ``make``) between the
  command and the real child gets it instead of the child, and it is Linux's alone.
* :func:`die_with_parent` is the same as a process pool's ``initializer``.

Limitations
-----------
* The watcher polls (every ``poll_s``, 0.25 s by default): where the death signal is
  missing, a child ends up to that much later than its parent (plus its own orderly stop).
* Only a child that calls :func:`tie_to_parent` watches its parent; any other command
  started by :func:`spawn` relies on the death signal (and on :func:`signal_group` when
  the command ends in order).
* A child started by hand (no :data:`PARENT_ENV`) is not tied to its shell.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["LAUNCHER", "PARENT_ENV", "ParentWatch", "StopOnSignals", "Terminated",
           "child_env", "die_with_parent", "launch_argv", "set_death_signal",
           "signal_group", "spawn", "tie_to_parent"]

#: The environment variable that names the command a child must not outlive:
#: ``"<pid>:<start time>"`` (the start time in clock ticks since boot, from
#: ``/proc/<pid>/stat``, so that a reused pid is not taken for the command; empty elsewhere).
PARENT_ENV = "COSIM_HIL_PARENT"

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

#: Sets the parent-death signal, checks that the command is still there, then becomes the
#: child's command (argv: signal number, command...; the command's pid in PARENT_ENV).
LAUNCHER = """\
import os, sys
sig, argv = int(sys.argv[1]), sys.argv[2:]
ppid = int(os.environ["COSIM_HIL_PARENT"].split(":")[0])
if sys.platform.startswith("linux"):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(1, sig, 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
        sys.exit("hil: prctl(PR_SET_PDEATHSIG) failed: " + os.strerror(ctypes.get_errno()))
if os.getppid() != ppid:
    sys.exit(0)  # the command ended before its child started
try:
    os.execv(argv[0], argv)
except OSError as exc:
    sys.exit("hil: cannot start " + repr(argv[0]) + ": " + str(exc))
"""


# ------------------------------------------------------------------ processes
def _start_time(pid: int) -> str:
    """A process's start time (clock ticks since boot; ``""`` where /proc has none)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _alive(pid: int, start: str) -> bool:
    """True while the process ``pid`` that started at ``start`` runs (a zombie has
    ended; a new process on a reused pid is another one)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return fields[0] != "Z" and (not start or fields[19] == start)


def child_env(env: dict | None = None) -> dict:
    """``env`` (default: this process's environment) naming this process as the parent
    of a child (:data:`PARENT_ENV`)."""
    pid = os.getpid()
    return {**(os.environ if env is None else env), PARENT_ENV: f"{pid}:{_start_time(pid)}"}


def launch_argv(argv: Sequence[str], sig: int = signal.SIGTERM) -> list[str]:
    """``argv`` behind the launcher that sets the parent-death signal ``sig``."""
    return [sys.executable, "-c", LAUNCHER, str(int(sig)), *[str(a) for a in argv]]


def spawn(argv: Sequence[str], *, env: dict | None = None, sig: int = signal.SIGTERM,
          **popen: Any) -> subprocess.Popen:
    """Start ``argv`` (``argv[0]`` a path, e.g. ``sys.executable``) as a child that ends
    with this process (module docstring); ``popen`` goes to :class:`subprocess.Popen`."""
    return subprocess.Popen(launch_argv(argv, sig), env=child_env(env),
                            start_new_session=True, **popen)


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    """Send ``sig`` to the process group of a child started by :func:`spawn` (the child
    and its own children), unless it has ended."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)


# ------------------------------------------------------------------ child
def set_death_signal(sig: int = signal.SIGTERM) -> bool:
    """Ask Linux for ``sig`` when this process's parent dies; False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    return True


class ParentWatch(threading.Thread):
    """The thread of :func:`tie_to_parent`: sends ``sig`` to this process when its parent
    changes or the named command is gone, and SIGKILL ``grace_s`` later if it is still
    there.

    Attributes
    ----------
    orphaned : str or None
        Why the parent counts as gone, once it does.
    """

    def __init__(self, pid: int, start: str, sig: int, poll_s: float,
                 grace_s: float) -> None:
        super().__init__(name="hil parent watch", daemon=True)
        self.pid, self.start_time, self.sig = pid, start, int(sig)
        self.poll_s, self.grace_s = poll_s, grace_s
        self.ppid = os.getppid()
        self.orphaned: str | None = None
        self._cancel = threading.Event()

    def gone(self) -> str | None:
        """Why the parent counts as gone, or None while it is there."""
        ppid = os.getppid()
        if ppid != self.ppid:
            return f"the parent process {self.ppid} ended (now {ppid})"
        if not _alive(self.pid, self.start_time):
            return f"the command {self.pid} that started this process ended"
        return None

    def run(self) -> None:
        while not self._cancel.wait(self.poll_s):
            why = self.gone()
            if why is not None:
                self.orphaned = why
                with contextlib.suppress(OSError, ValueError):  # (a pipe to the dead parent)
                    print(f"hil: {why}: ending this process (pid {os.getpid()}) with "
                          f"{signal.Signals(self.sig).name}", file=sys.stderr, flush=True)
                os.kill(os.getpid(), self.sig)
                if not self._cancel.wait(self.grace_s):
                    os.kill(os.getpid(), signal.SIGKILL)
                return

    def cancel(self) -> None:
        """Stop watching (the process is ending by itself)."""
        self._cancel.set()


def tie_to_parent(*, sig: int = signal.SIGTERM, parent: int | None = None,
                  poll_s: float = 0.25, grace_s: float = 10.0) -> ParentWatch | None:
    """Call at a child's start: end this process (``sig`` to itself) when the command that
    started it ends (module docstring).  The command is the one named in
    :data:`PARENT_ENV` (removed from the environment: this process's own children get
    their own), or ``parent``; ``None`` is returned, and nothing done, when neither names
    one (a run started by hand is not tied to its shell)."""
    token = os.environ.pop(PARENT_ENV, None)
    if parent is not None:
        pid, start = int(parent), _start_time(int(parent))
    elif token:
        text, _, start = token.partition(":")
        pid = int(text)
    else:
        return None
    set_death_signal(sig)
    watch = ParentWatch(pid, start, sig, poll_s, grace_s)
    if os.getppid() != pid and not _alive(pid, start):
        watch.ppid = -1  # gone before the watch began: the first look ends this process
    watch.start()
    return watch


def die_with_parent() -> None:
    """A process pool's ``initializer``: the worker ends (SIGTERM, its default action)
    when the process that made the pool ends, even by SIGKILL."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # (a forked worker inherits handlers)
    tie_to_parent(parent=os.getppid())


# ------------------------------------------------------------------ the command
class Terminated(KeyboardInterrupt):
    """A stop signal that could not stop a run in order (none was running yet), or a
    second one."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class StopOnSignals:
    """SIGTERM and SIGINT stop a run in order (module docstring); a context manager, in
    the main thread (elsewhere it installs nothing: signals belong to the main thread).

    Attributes
    ----------
    runner : object with ``stop(reason)``, or None
        Set it once the run's runner exists.
    signum : int or None
        The first stop signal received.
    """

    STATUS = {signal.SIGTERM: "terminated", signal.SIGINT: "interrupted"}

    def __init__(self) -> None:
        self.runner: Any = None
        self.signum: int | None = None
        self._old: dict[int, Any] = {}

    @property
    def status(self) -> str:
        """``"complete"``, or ``"terminated"`` (SIGTERM) / ``"interrupted"`` (SIGINT)."""
        return "complete" if self.signum is None else self.STATUS[self.signum]

    def _handler(self, signum: int, frame: Any) -> None:
        first = self.signum is None
        if first:
            self.signum = signum
        if first and self.runner is not None:
            self.runner.stop(signal.Signals(signum).name)
            return
        raise Terminated(signum)

    def __enter__(self) -> StopOnSignals:
        if threading.current_thread() is threading.main_thread():
            for s in self.STATUS:
                self._old[s] = signal.signal(s, self._handler)
        return self

    def __exit__(self, *exc: Any) -> None:
        for s, old in self._old.items():
            signal.signal(s, old)
        self._old.clear()

