"""The state of a backend's link: open, reconnecting, faulted or closed, and its reconnects.

A :class:`~hil.backend.Backend` holds one :class:`Link`.  The link keeps the lifecycle
state, the fault that ended it, a *generation* (bumped by every successful open, so a
failure seen by two threads is acted on once), and the reconnect attempts with
exponential backoff after a lost link.  It applies the error policy of the backend's
template methods (:meth:`Link.handle_error`, :meth:`Link.bad_frame`).

It reaches its backend through a narrow interface only: ``where``, ``counters``,
``log``, the reconnect settings ``reconnect``, ``reconnect_timeout`` and ``backoff``
(read at each use: they may be changed on an open backend), and the driver calls
``_open()`` and ``_close()``.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from typing import Any

from .errors import BackendError, BackendTimeout, CRCError, Disconnected, FrameError, HILError

__all__ = ["BackendState", "Link", "chain"]


class BackendState(enum.Enum):
    """Lifecycle state of a backend."""

    CLOSED = "closed"
    OPEN = "open"
    RECONNECTING = "reconnecting"  # the link was lost; reads and writes try to reopen it
    FAULTED = "faulted"  # an unrecoverable error; close() and open() again


def chain(err: BaseException, exc: BaseException) -> Any:
    """``err`` with ``exc`` as its cause (``raise err from exc`` done ahead of time)."""
    if err is not exc:
        err.__cause__ = exc
        err.__suppress_context__ = True
    return err


class Link:
    """Lifecycle state, faults and reconnects of one backend (module docstring).

    Parameters
    ----------
    owner : hil.backend.Backend
        The backend, through the narrow interface of the module docstring.
    """

    def __init__(self, owner: Any) -> None:
        self.owner = owner
        self.state = BackendState.CLOSED
        self.fault: BaseException | None = None
        self.lock = threading.RLock()
        self.generation = 0  # bumped by every successful open: tells stale failures apart
        self.closing = threading.Event()
        self.down_since = 0.0
        self.next_attempt = 0.0
        self.attempts = 0
        self.last_error: BaseException | None = None
        self._bad_frame_logs = 0

    @property
    def is_open(self) -> bool:
        return self.state is BackendState.OPEN or self.state is BackendState.RECONNECTING

    def opened(self) -> None:
        """The driver opened (at ``open()`` or by ``recover()``): a new generation."""
        with self.lock:
            self.generation += 1
            self.state, self.fault = BackendState.OPEN, None

    def faulted(self, exc: BaseException) -> None:
        self.fault = exc
        self.state = BackendState.FAULTED

    def require_usable(self, op: str) -> None:
        """Raise unless the link is open or reconnecting (``op`` names the call)."""
        st = self.state
        if st is BackendState.OPEN or st is BackendState.RECONNECTING:
            return
        where = self.owner.where
        if st is BackendState.CLOSED:
            raise BackendError(f"{where}: {op}() on a closed backend; call open() first "
                               f"or use it as a context manager")
        raise BackendError(f"{where}: {op}() on a faulted backend (cause: "
                           f"{type(self.fault).__name__}: {self.fault}); close() and open() "
                           f"it again") from self.fault

    def handle_error(self, err: HILError, gen: int) -> None:
        """Count and log ``err`` (raised by generation ``gen``); return if a reconnect is
        now pending, raise otherwise."""
        owner = self.owner
        if isinstance(err, Disconnected) and (self.closing.is_set()
                                              or self.state is BackendState.CLOSED):
            raise err  # closed under our feet: not a lost link
        if isinstance(err, Disconnected) and owner.reconnect:
            self.lost(err, gen)
            return
        if isinstance(err, FrameError):
            raise err  # counted where it was detected (see bad_frame)
        owner.counters.add("errors")
        if isinstance(err, BackendTimeout):
            owner.counters.add("timeouts")
            raise err
        self.faulted(err)
        owner.log.error("%s: %s", owner.where, err)
        raise err

    def bad_frame(self, err: FrameError, policy: str) -> None:
        """Count a bad received frame; raise it under the ``"raise"`` policy, else log
        it (the first 10 at WARNING, then at DEBUG: the counters have the total)."""
        owner = self.owner
        owner.counters.add("errors", "crc_errors" if isinstance(err, CRCError)
                           else "frame_errors")
        if policy == "raise":
            raise err
        self._bad_frame_logs += 1
        level = logging.WARNING if self._bad_frame_logs <= 10 else logging.DEBUG
        if owner.log.isEnabledFor(level):
            more = (" (further bad frames are logged at DEBUG)"
                    if self._bad_frame_logs == 10 else "")
            owner.log.log(level, "%s: bad frame dropped: %s [%s]%s", owner.where, err,
                          owner.counters, more)

    def lost(self, err: HILError, gen: int) -> None:
        """The link of generation ``gen`` went down: start reconnecting (once, whatever
        the number of threads that saw it)."""
        owner = self.owner
        with self.lock:
            if gen != self.generation or self.state is not BackendState.OPEN:
                return  # another thread already saw this disconnect
            now = time.perf_counter()
            self.state = BackendState.RECONNECTING
            self.down_since = now
            self.next_attempt = now
            self.attempts = 0
            self.last_error = err
            owner.counters.add("disconnects", "errors")
            owner.log.warning("%s: link lost (%s); reconnecting", owner.where,
                              err.__cause__ or err)
            try:
                owner._close()
            except Exception as exc:  # noqa: BLE001
                owner.log.debug("%s: close after disconnect: %r ignored", owner.where, exc)

    def try_reconnect(self, deadline: float | None) -> bool:
        """Reconnect attempts until ``deadline``; True when the link is open again."""
        owner = self.owner
        while True:
            with self.lock:
                if self.state is not BackendState.RECONNECTING:
                    return self.state is BackendState.OPEN
                now = time.perf_counter()
                down = now - self.down_since
                limit = owner.reconnect_timeout
                if limit is not None and down > limit:
                    err = Disconnected(
                        f"{owner.where}: link down for {down:.2f} s, {self.attempts} reconnect "
                        f"attempts failed (last error: {self.last_error}); check the cable, "
                        f"the power and the port name, or raise reconnect_timeout "
                        f"(now {limit} s)")
                    self.faulted(err)
                    owner.log.error("%s", err)
                    raise err
                if now >= self.next_attempt and self._attempt():
                    return True
                wait = max(0.0, self.next_attempt - time.perf_counter())
            if deadline is not None:
                left = deadline - time.perf_counter()
                if left <= 0:
                    return False
                wait = min(wait, left)
            if self.closing.wait(wait):
                return False

    def _attempt(self) -> bool:
        """One reconnect attempt (under the lock); True when it succeeded."""
        owner = self.owner
        self.attempts += 1
        owner.counters.add("reconnect_attempts")
        try:
            owner._open()
        except Exception as exc:  # noqa: BLE001 - any failure means retry
            self.last_error = exc
            first, largest = owner.backoff
            delay = min(largest, first * 2 ** (self.attempts - 1))
            self.next_attempt = time.perf_counter() + delay
            owner.log.debug("%s: reconnect attempt %d failed: %s; next in %.3f s",
                            owner.where, self.attempts, exc, delay)
            return False
        self.generation += 1
        self.state = BackendState.OPEN
        owner.counters.add("reconnects")
        owner.log.warning("%s: reconnected after %d attempt(s), link was down %.3f s",
                          owner.where, self.attempts, time.perf_counter() - self.down_since)
        return True
