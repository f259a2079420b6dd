"""Background threads that never die silently, and a backend's reader thread.

An exception in a :class:`WorkerThread` ends it and goes on an :class:`ErrorSink`,
whose owner (a backend, a runner) re-raises the *original* exception object in its own
thread with :meth:`ErrorSink.check`, called every tick.  :class:`Reader` is the reader
thread of a backend (:meth:`hil.backend.Backend.start_reader`).  :class:`StopFlag` is a
flag that a signal handler may set.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from .errors import HILError

__all__ = ["ErrorSink", "WorkerThread", "Reader", "StopFlag"]


class StopFlag:
    """A flag that a signal handler may set: ``set``, ``clear`` and ``is_set`` take no lock.

    ``threading.Event`` takes one, and a signal handler runs in the main thread between two
    of its bytecodes: a handler that sets an event while the main thread is inside that
    event's ``set`` or ``clear`` waits for ever for a lock its own thread holds (issue 36:
    an ECU deadlocked in its SIGTERM handler when the plant's end-of-session frame and the
    plant's death came together, and outlived the plant).  Nothing can wait on this flag:
    poll it.
    """

    __slots__ = ("_flag",)

    def __init__(self) -> None:
        self._flag = False

    def set(self) -> None:
        self._flag = True

    def clear(self) -> None:
        self._flag = False

    def is_set(self) -> bool:
        return self._flag


class ErrorSink:
    """Collects exceptions from background threads for the owner to re-raise.

    A runner can give one sink to several backends and call :meth:`check` once
    per tick.
    """

    def __init__(self) -> None:
        self._q: queue.SimpleQueue[BaseException] = queue.SimpleQueue()

    def put(self, exc: BaseException, where: str) -> None:
        """Store ``exc`` (with its traceback) and note in it where it came from."""
        exc.add_note(f"(raised in {where}; re-raised by check())")
        self._q.put(exc)

    def __len__(self) -> int:
        return self._q.qsize()

    def pending(self) -> bool:
        return not self._q.empty()

    def check(self) -> None:
        """Re-raise the oldest stored exception, if any: the original object, so
        its type, message, traceback and ``__cause__`` are those of the thread."""
        if self._q.empty():  # the common case, called every tick: no exception to catch
            return
        try:
            exc = self._q.get_nowait()
        except queue.Empty:
            return
        raise exc


class WorkerThread(threading.Thread):
    """A daemon thread that calls ``step()`` until stopped; never dies silently.

    An exception from ``step`` ends the loop and goes to ``errors`` (an
    :class:`ErrorSink`); ``on_error(exc)``, if given, runs first (e.g. to fault
    the owner).
    """

    def __init__(self, name: str, step: Callable[[], None], errors: ErrorSink,
                 on_error: Callable[[BaseException], None] | None = None) -> None:
        super().__init__(name=name, daemon=True)
        self._step = step
        self._errors = errors
        self._on_error = on_error
        self.stop_event = threading.Event()

    def run(self) -> None:
        try:
            while not self.stop_event.is_set():
                self._step()
        except BaseException as exc:  # noqa: BLE001 - everything goes to the sink
            if self.stop_event.is_set() and isinstance(exc, HILError | OSError):
                return  # the owner is closing; errors from tearing down are expected
            if self._on_error is not None:
                try:
                    self._on_error(exc)
                except BaseException as exc2:  # noqa: BLE001
                    exc.add_note(f"(on_error handler failed too: {exc2!r})")
            self._errors.put(exc, f"thread '{self.name}'")

    def stop(self, timeout: float | None = 2.0) -> None:
        self.stop_event.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout)


class Reader:
    """A backend's reader thread: ``read(poll)`` in a loop, each frame to ``on_frame``
    (called in the thread) or, by default, onto a bounded queue that :meth:`drain`
    empties (when it is full the oldest frame is dropped and counted in
    ``counters.dropped``).

    Parameters
    ----------
    name : str
        The thread's name.
    read : callable
        ``read(timeout) -> frame or None``: the backend's :meth:`~hil.backend.Backend.read`.
    counters : hil.counters.Counters
    errors : ErrorSink
        Where an exception that ends the thread goes.
    on_error : callable
        Called first with that exception (the backend faults itself).
    on_frame : callable, optional
    poll, maxsize
        As :meth:`hil.backend.Backend.start_reader`.
    """

    def __init__(self, name: str, read: Callable[[float], Any], counters: Any,
                 errors: ErrorSink, on_error: Callable[[BaseException], None], *,
                 on_frame: Callable[[Any], None] | None = None, poll: float = 0.05,
                 maxsize: int = 10_000) -> None:
        self.counters = counters
        self.queue: queue.Queue[Any] | None = None
        if on_frame is None:
            self.queue = queue.Queue(maxsize)
            on_frame = self._enqueue

        def step() -> None:
            frame = read(poll)
            if frame is not None:
                on_frame(frame)

        self.thread = WorkerThread(name, step, errors, on_error=on_error)

    def _enqueue(self, frame: Any) -> None:
        rx = self.queue
        assert rx is not None
        while True:
            try:
                rx.put_nowait(frame)
                return
            except queue.Full:
                try:
                    rx.get_nowait()
                    self.counters.add("dropped")
                except queue.Empty:
                    pass

    def drain(self) -> list[Any]:
        """All frames queued since the last call (oldest first; none with ``on_frame``)."""
        out: list[Any] = []
        rx = self.queue
        if rx is None:
            return out
        while True:
            try:
                out.append(rx.get_nowait())
            except queue.Empty:
                return out

    def stop(self, cancel: Callable[[], None], log: Any, where: str) -> None:
        """Stop the thread: ``cancel()`` wakes a blocking read (best effort)."""
        self.thread.stop_event.set()
        try:
            cancel()
        except Exception:  # noqa: BLE001 - best effort wake-up
            pass
        self.thread.stop(timeout=2.0)
        if self.thread.is_alive():
            log.warning("%s: reader thread did not stop within 2 s", where)
