"""A peer process of a real-time run (an ECU beside the plant) that never outlives it.

:class:`Peer` starts a command as a child process and ends it with the run:

* started by :func:`hil.lifeline.spawn`: its own process group (a new session): Ctrl-C on
  the terminal reaches only the run, which ends the peer in order; :meth:`Peer.stop` and
  :meth:`Peer.kill` signal the whole group, so the peer's own children go too;
* Linux's parent-death signal: the child asks the kernel (``prctl(PR_SET_PDEATHSIG,
  SIGTERM)``) for a SIGTERM when the thread that started it dies, and exits at once if
  its parent died before it asked, so a run that is killed (SIGKILL, a crash) takes its
  peer with it; a peer that handles SIGTERM (``examples/acc_ecu.py``) ends its run cleanly
  and still writes its summary.  A peer that calls :func:`hil.lifeline.tie_to_parent` at
  its start (``examples/acc_ecu.py`` does) also watches the run itself: it ends where the
  death signal does not reach it (module docstring of :mod:`hil.lifeline`);
* :meth:`Peer.wait_ready` waits for the peer's ready line on its standard output;
  :meth:`Peer.stop` waits ``grace_s`` for the peer to end by itself (after the run sent
  its end-of-session frame, :mod:`hil.can.session`), then sends SIGTERM, and SIGKILL
  after ``term_s``;
* the peer's standard error is copied line by line to ours, each line prefixed with
  ``[name]``, and its last lines are kept for error messages (the pipes are drained by
  threads: a peer that writes a lot never blocks on a full pipe).

Limitations
-----------
* The parent-death signal is Linux's; elsewhere a peer that does not call
  :func:`hil.lifeline.tie_to_parent` outlives a killed run (it is still ended by
  :meth:`Peer.stop`).  The kernel sends it when the *thread* that started the peer ends:
  start peers from the thread that lives as long as the run (the main thread).
"""

from __future__ import annotations

import collections
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from .errors import HILError
from .lifeline import signal_group, spawn

__all__ = ["Peer", "PeerError"]


#: how long an ended peer's output may take to be read (its pipes are at their end: the
#: drains finish as soon as the machine lets them; this bounds a pathological case only)
GRACE_DRAIN_S = 30.0


class PeerError(HILError):
    """A peer process did not start, or failed."""


class Peer:
    """A child process that lives no longer than the run that started it (module
    docstring).

    Parameters
    ----------
    argv : sequence of str
        The command (``argv[0]`` a path, e.g. ``sys.executable``).
    name : str
        For messages and the prefix of its standard error lines.
    ready : str or None
        The line the peer prints on its standard output when it is ready; None: ready at
        once.
    env, cwd
        As :class:`subprocess.Popen`.
    echo_stderr : bool
        Copy the peer's standard error to ours (prefixed); kept either way.
    """

    def __init__(self, argv: Sequence[str], *, name: str, ready: str | None = "READY",
                 env: dict | None = None, cwd: str | None = None,
                 echo_stderr: bool = True) -> None:
        self.argv = [str(a) for a in argv]
        self.name = name
        self.ready_line = ready
        self.echo_stderr = echo_stderr
        self._ready = threading.Event()
        self._stderr: collections.deque[str] = collections.deque(maxlen=40)
        self._stdout: collections.deque[str] = collections.deque(maxlen=40)
        try:
            self.proc = spawn(self.argv, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=cwd)
        except OSError as exc:
            raise PeerError(f"peer '{name}': cannot start {self.argv[0]!r}: {exc}") from exc
        if ready is None:
            self._ready.set()
        self._threads = [threading.Thread(target=self._drain, args=(s, k), daemon=True,
                                          name=f"peer {name} {k}")
                         for s, k in ((self.proc.stdout, "stdout"),
                                      (self.proc.stderr, "stderr"))]
        for t in self._threads:
            t.start()

    # ------------------------------------------------------------------ output
    def _drain(self, stream: Any, kind: str) -> None:
        for line in stream:
            line = line.rstrip("\n")
            if kind == "stdout":
                if not self._ready.is_set() and line.strip() == self.ready_line:
                    self._ready.set()
                    continue
                self._stdout.append(line)
            else:
                self._stderr.append(line)
                if self.echo_stderr:
                    print(f"[{self.name}] {line}", file=sys.stderr, flush=True)

    def output_tail(self) -> str:
        """The peer's last lines of standard error (and output), for messages."""
        self._join_drains(0.5)
        return "\n".join(list(self._stderr) or list(self._stdout))

    def _join_drains(self, timeout: float) -> None:
        if self.proc.poll() is not None:
            for t in self._threads:
                t.join(timeout)

    # ------------------------------------------------------------------ state
    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def wait_ready(self, timeout: float = 30.0) -> Peer:
        """Wait for the ready line; a peer that exits or stays silent is stopped and a
        :class:`PeerError` says what it printed."""
        end = time.monotonic() + timeout
        while not self._ready.wait(0.05):
            exited = self.proc.poll() is not None
            if exited:  # what it printed before it ended may not be read yet (a busy
                self._join_drains(GRACE_DRAIN_S)  # machine): read it all, then judge
                if self._ready.is_set():
                    break
            if exited or time.monotonic() > end:
                code = self.stop()
                why = (f"exited with status {code}" if time.monotonic() <= end else
                       f"printed no {self.ready_line!r} line within {timeout:g} s")
                raise PeerError(f"peer '{self.name}' did not start: it {why}; its last "
                                f"output:\n{self.output_tail()[-2000:]}")
        return self

    # ------------------------------------------------------------------ ending
    def kill(self) -> None:
        """SIGKILL to the peer's process group, not waited for (a frame must not block)."""
        signal_group(self.proc, signal.SIGKILL)

    def terminate(self) -> None:
        """SIGTERM to the peer's process group, not waited for."""
        signal_group(self.proc, signal.SIGTERM)

    def stop(self, grace_s: float = 0.0, term_s: float = 10.0) -> int:
        """End the peer: wait ``grace_s`` for it to end by itself, then SIGTERM to its
        group, then SIGKILL after ``term_s``; returns its exit status (negative: the
        signal that ended it)."""
        try:
            self.proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            self.terminate()
            try:
                self.proc.wait(term_s)
            except subprocess.TimeoutExpired:
                self.kill()
                self.proc.wait(10.0)
        self._join_drains(2.0)
        return self.proc.returncode

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else f"exit {self.returncode}"
        return f"<Peer {self.name} pid {self.proc.pid} {state}>"
