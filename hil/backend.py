"""The abstract base of every HIL I/O backend, python-can style.

A backend is a connection to one device or bus: a serial port, a CAN channel,
a DAQ card, or the virtual twin of one of them.  :class:`Backend` owns
everything that is the same for all of them, and a subclass implements only
the driver calls:

===========================  ==================================================
subclass implements          contract
===========================  ==================================================
``_open()``                  open the driver; raise on failure.  Called again
                             for every reconnect attempt.
``_close()``                 release the driver; must not raise on a broken
                             link.
``_read_internal(timeout)``  return one received frame, or ``None`` when nothing
                             complete arrived within ``timeout`` seconds
                             (``None``: block).  May return ``None`` early
                             (partial frame, dropped bad frame): the base calls
                             it again with the time left.
``_encode_frame(frame)``     optional: turn a frame into what ``_write`` sends
                             (called before any I/O; its errors do not fault
                             the backend).
``_write(data, timeout)``    send one encoded frame.
``channel``                  the port, channel or URL, for messages.
``_translate(exc, op)``      optional: map a driver exception onto the HIL
                             family (the default maps ``TimeoutError`` to
                             :class:`BackendTimeout` and ``OSError`` to
                             :class:`Disconnected`).
``_cancel_read()``           optional: wake a blocking ``_read_internal`` so
                             ``close()`` does not wait for the poll timeout.
===========================  ==================================================

The public template methods add the rest:

* :meth:`Backend.read` / :meth:`Backend.write` check the state, apply the
  default timeout, count frames, log at DEBUG, translate driver exceptions
  into :mod:`hil.errors` (chained with ``raise ... from``) and, with
  ``reconnect=True``, turn a lost link into reconnect attempts with
  exponential backoff instead of an exception.  :meth:`Backend.expect` is
  ``read`` that raises :class:`BackendTimeout` instead of returning ``None``.
* :attr:`Backend.state` is one of :class:`BackendState` (closed, open,
  reconnecting, faulted); :attr:`Backend.counters` counts frames, bytes,
  errors, CRC errors, disconnects and reconnects.
* :meth:`Backend.start_reader` runs a background reader thread.  Reader
  threads never die silently: an exception in the thread (driver error, a
  failing callback, a CRC error under the ``"raise"`` policy) ends the thread,
  faults the backend and goes on an :class:`ErrorSink`; :meth:`Backend.check`
  (which a runner calls every tick) re-raises the *original* exception object
  in the caller, with the thread's traceback and a note naming the thread.

Limitations
-----------
* ``read`` is meant to be called from one thread at a time (the reader thread
  *or* the caller); ``write`` may be called from another thread concurrently.
* A reconnect is attempted only while somebody calls ``read``/``write`` (or the
  reader thread runs); there is no separate watchdog thread.
* The first ``open()`` does not retry: a device that is absent at start is an
  error, reported at once.
* Counters are updated under a lock and are exact, but a snapshot taken while
  a reader thread runs is only consistent field by field.
"""

from __future__ import annotations

import abc
import enum
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from .errors import BackendError, BackendTimeout, CRCError, Disconnected, FrameError, HILError

__all__ = ["Backend", "BackendState", "Counters", "ErrorSink", "WorkerThread", "DEFAULT"]

log = logging.getLogger("hil")


class _Default:
    def __repr__(self) -> str:
        return "DEFAULT"


#: Sentinel for "use the backend's configured timeout".
DEFAULT: Any = _Default()


class BackendState(enum.Enum):
    """Lifecycle state of a backend."""

    CLOSED = "closed"
    OPEN = "open"
    RECONNECTING = "reconnecting"  # the link was lost; reads and writes try to reopen it
    FAULTED = "faulted"  # an unrecoverable error; close() and open() again


@dataclass
class Counters:
    """What went over a backend since it was created (survives reconnects)."""

    frames_in: int = 0
    frames_out: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    errors: int = 0  # every error, whatever its kind (includes the ones below)
    frame_errors: int = 0  # malformed frames (CRC errors not included)
    crc_errors: int = 0
    timeouts: int = 0  # expect() and write timeouts (read() returning None is not one)
    disconnects: int = 0
    reconnects: int = 0  # successful reconnects
    reconnect_attempts: int = 0
    dropped: int = 0  # frames dropped by a full reader queue (oldest first)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def __str__(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.as_dict().items() if v)


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


def _chain(err: BaseException, exc: BaseException) -> Any:
    """``err`` with ``exc`` as its cause (``raise err from exc`` done ahead of time)."""
    if err is not exc:
        err.__cause__ = exc
        err.__suppress_context__ = True
    return err


class Backend(abc.ABC):
    """Abstract base of an I/O backend (see the module docstring).

    Parameters
    ----------
    name : str, optional
        A name for messages and logs (e.g. ``"imu"``).
    timeout : float or None
        Default ``read``/``write`` timeout in seconds; ``None`` blocks.
    reconnect : bool
        Reopen the link after a disconnect instead of raising.
    reconnect_timeout : float or None
        Give up (state ``FAULTED``, :class:`Disconnected` raised) when the link
        has been down this long; ``None`` retries for ever.
    backoff : (float, float)
        First and largest delay between reconnect attempts in seconds; the
        delay doubles after each failed attempt.
    """

    #: Registry name of the backend kind ("serial", "can", ...).
    kind: ClassVar[str] = "backend"

    def __init__(self, *, name: str | None = None, timeout: float | None = 1.0,
                 reconnect: bool = False, reconnect_timeout: float | None = 10.0,
                 backoff: tuple[float, float] = (0.01, 0.5)) -> None:
        if timeout is not None and timeout < 0:
            raise ValueError(f"{type(self).__name__}: timeout must be >= 0 or None, got {timeout}")
        if backoff[0] <= 0 or backoff[1] < backoff[0]:
            raise ValueError(f"{type(self).__name__}: backoff must be (first > 0, largest >= "
                             f"first), got {backoff}")
        self.name = name
        self.timeout = timeout
        self.reconnect = reconnect
        self.reconnect_timeout = reconnect_timeout
        self.backoff = backoff
        self.counters = Counters()
        self.errors = ErrorSink()
        self.log = logging.getLogger(f"hil.{self.kind}")
        self._state = BackendState.CLOSED
        self._fault: BaseException | None = None
        self._count_lock = threading.Lock()
        self._link_lock = threading.RLock()
        self._generation = 0  # bumped by every successful open: tells stale failures apart
        self._closing = threading.Event()
        self._down_since = 0.0
        self._next_attempt = 0.0
        self._attempts = 0
        self._last_error: BaseException | None = None
        self._reader: WorkerThread | None = None
        self._rx: queue.Queue[Any] | None = None
        self._last_error_logs = 0
        self._rx_taps: list[Callable[[Any], None]] = []
        self._tx_taps: list[Callable[[Any], None]] = []

    # ------------------------------------------------------------ subclass API
    @property
    @abc.abstractmethod
    def channel(self) -> str:
        """The port, channel or URL, for messages."""

    @abc.abstractmethod
    def _open(self) -> None: ...

    @abc.abstractmethod
    def _close(self) -> None: ...

    @abc.abstractmethod
    def _read_internal(self, timeout: float | None) -> Any | None: ...

    @abc.abstractmethod
    def _write(self, frame: Any, timeout: float | None) -> None: ...

    def _encode_frame(self, frame: Any) -> Any:
        """Turn a frame into what ``_write`` sends (optional; default: unchanged).
        Errors raised here (a value out of range, a wrong type) reach the caller
        as they are and do not fault the backend."""
        return frame

    def _cancel_read(self) -> None:  # noqa: B027 - optional hook
        """Wake a blocking ``_read_internal`` (optional)."""

    def _on_reconnected(self) -> None:  # noqa: B027 - optional hook
        """Called after a successful reconnect, e.g. to drop a partial frame (optional)."""

    def _translate(self, exc: BaseException, op: str) -> HILError:
        """Map a driver exception onto the HIL family (subclasses may refine)."""
        if isinstance(exc, HILError):
            return exc
        if isinstance(exc, TimeoutError):
            return BackendTimeout(f"{self.where}: {op} timed out: {exc}; raise the timeout or "
                                  f"check that the device answers")
        if isinstance(exc, OSError):
            hint = "" if self.reconnect else "; reconnect=True reopens the link automatically"
            return Disconnected(f"{self.where}: {op} failed: {exc}; the device or port went "
                                f"away: check the cable, the power and the port name{hint}")
        return BackendError(f"{self.where}: {op} failed with {type(exc).__name__}: {exc}; "
                            f"this is a driver or backend bug, not a link problem")

    # ------------------------------------------------------------- properties
    @property
    def where(self) -> str:
        named = f" ({self.name!r})" if self.name else ""
        return f"{self.kind} {self.channel!r}{named}"

    @property
    def state(self) -> BackendState:
        return self._state

    @property
    def is_open(self) -> bool:
        return self._state in (BackendState.OPEN, BackendState.RECONNECTING)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.where} {self._state.value}>"

    # --------------------------------------------------------------- lifecycle
    def open(self) -> Backend:
        """Open the link (idempotent); a faulted backend is closed and reopened."""
        if self.is_open:
            return self
        if self._state is BackendState.FAULTED:
            self.close()
        self._closing.clear()
        try:
            with self._link_lock:
                self._open()
                self._generation += 1
        except Exception as exc:
            err = self._translate(exc, "open")
            if type(err) is Disconnected:  # at open time a missing port is not a lost link
                err = BackendError(str(err).replace("the device or port went away",
                                                    "the port cannot be opened"))
            self._count("errors")
            if err is exc:
                raise
            raise err from exc
        self._state = BackendState.OPEN
        self._fault = None
        self.log.info("%s: open", self.where)
        return self

    def close(self) -> None:
        """Stop the reader thread and release the link (idempotent, never raises
        for a broken link)."""
        if self._state is BackendState.CLOSED:
            return
        self._closing.set()
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.stop_event.set()
            try:
                self._cancel_read()
            except Exception:  # noqa: BLE001 - best effort wake-up
                pass
            reader.stop(timeout=2.0)
            if reader.is_alive():
                self.log.warning("%s: reader thread did not stop within 2 s", self.where)
        with self._link_lock:
            try:
                self._close()
            except Exception as exc:  # noqa: BLE001 - closing a dead link may fail
                self.log.debug("%s: close: %r ignored", self.where, exc)
            self._state = BackendState.CLOSED
        self.log.info("%s: closed (%s)", self.where, self.counters)

    def __enter__(self) -> Backend:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            if self._state is not BackendState.CLOSED:
                self.close()
        except Exception:  # noqa: BLE001
            pass

    # ----------------------------------------------------------------- reading
    def read(self, timeout: float | None = DEFAULT) -> Any | None:
        """Return the next received frame, or ``None`` if none arrived within
        ``timeout`` seconds (default: the backend's ``timeout``; ``0`` polls,
        ``None`` blocks).  While the link is down and ``reconnect`` is on, the
        time is spent on reconnect attempts and ``None`` is returned."""
        self._require_usable("read")
        timeout = self.timeout if timeout is DEFAULT else timeout
        deadline = None if timeout is None else time.perf_counter() + timeout
        while True:
            if self._state is BackendState.RECONNECTING:
                if not self._try_reconnect(deadline):
                    return None
            remaining = None if deadline is None else max(0.0, deadline - time.perf_counter())
            gen = self._generation
            try:
                frame = self._read_internal(remaining)
            except Exception as exc:
                err = _chain(self._translate(exc, "read"), exc)
                self._handle_error(err, gen)  # returns only when a reconnect is pending
                continue
            if frame is not None:
                self._count("frames_in")
                for tap in self._rx_taps:
                    tap(frame)
                if self.log.isEnabledFor(logging.DEBUG):
                    self.log.debug("%s: rx %r", self.where, frame)
                return frame
            if self._closing.is_set() or (deadline is not None
                                          and time.perf_counter() >= deadline):
                return None

    def read_available(self, limit: int = 10_000) -> list[Any]:
        """Every frame that has already arrived (up to ``limit``), without waiting: the
        per-frame overhead of :meth:`read` paid once per call (what a bridge block does
        at each sample hit).  Errors are handled as in :meth:`read`; frames read before
        an error are returned when a reconnect is pending, else lost with the error."""
        self._require_usable("read")
        if self._state is BackendState.RECONNECTING and not self._try_reconnect(
                time.perf_counter()):
            return []
        out: list[Any] = []
        gen = self._generation
        try:
            while len(out) < limit:
                frame = self._read_internal(0.0)
                if frame is None:
                    break
                out.append(frame)
        except Exception as exc:
            err = _chain(self._translate(exc, "read"), exc)
            self._handle_error(err, gen)  # returns only when a reconnect is pending
        if out:
            self._count("frames_in", n=len(out))
            for tap in self._rx_taps:
                for frame in out:
                    tap(frame)
        return out

    def expect(self, timeout: float | None = DEFAULT) -> Any:
        """Like :meth:`read` but raise :class:`BackendTimeout` when nothing arrives."""
        timeout = self.timeout if timeout is DEFAULT else timeout
        frame = self.read(timeout)
        if frame is None:
            self._count("timeouts", "errors")
            state = ("" if self._state is BackendState.OPEN
                     else f" (link {self._state.value}: {self._last_error})")
            raise BackendTimeout(f"{self.where}: no frame within {timeout} s{state}; check that "
                                 f"the device is sending, the baud rate and the framing")
        return frame

    # ----------------------------------------------------------------- writing
    def write(self, frame: Any, timeout: float | None = DEFAULT) -> None:
        """Send one frame.  After a disconnect (with ``reconnect`` on) the link is
        reopened within ``timeout`` and the frame sent once more; if that does
        not succeed in time, :class:`BackendTimeout` is raised and the frame is
        not sent."""
        if self._state is not BackendState.OPEN:
            self._require_usable("write")
        timeout = self.timeout if timeout is DEFAULT else timeout
        deadline = None if timeout is None else time.perf_counter() + timeout
        wire = self._encode_frame(frame)  # a bad frame raises here and faults nothing
        for attempt in range(3):
            if self._state is BackendState.RECONNECTING and not self._try_reconnect(deadline):
                self._count("timeouts", "errors")
                raise BackendTimeout(
                    f"{self.where}: write not sent: the link has been down for "
                    f"{time.perf_counter() - self._down_since:.3f} s and did not come back "
                    f"within the {timeout} s timeout (last error: {self._last_error}); the "
                    f"backend keeps reconnecting, retry later or check the cable")
            # (a zero timeout leaves zero: no second clock read)
            remaining = None if deadline is None else 0.0 if timeout == 0.0 else \
                max(0.0, deadline - time.perf_counter())
            gen = self._generation
            try:
                self._write(wire, remaining)
            except Exception as exc:
                err = _chain(self._translate(exc, "write"), exc)
                if attempt == 2:
                    self._count("errors")
                    if err is exc:
                        raise
                    raise err from exc
                self._handle_error(err, gen)
                continue
            break
        self._count_sent(wire)
        for tap in self._tx_taps:
            tap(frame)
        if self.log.isEnabledFor(logging.DEBUG):
            self.log.debug("%s: tx %r", self.where, frame)

    def add_tap(self, rx: Callable[[Any], None] | None = None,
                tx: Callable[[Any], None] | None = None) -> None:
        """Call ``rx(frame)`` for every frame read and ``tx(frame)`` for every frame
        written (in the calling thread): a bus log, a monitor.  For CAN:
        ``backend.add_tap(rx=log, tx=log.sent)`` with a :class:`hil.can.MessageLog`."""
        if rx is not None:
            self._rx_taps.append(rx)
        if tx is not None:
            self._tx_taps.append(tx)

    # ------------------------------------------------------------ reader thread
    def start_reader(self, on_frame: Callable[[Any], None] | None = None, *,
                     poll: float = 0.05, maxsize: int = 10_000,
                     errors: ErrorSink | None = None) -> WorkerThread:
        """Read in a background thread.

        Frames go to ``on_frame(frame)`` (called in the thread), or, by default,
        onto a bounded queue that :meth:`drain` empties (when it is full the
        oldest frame is dropped and counted).  Errors end the thread, fault the
        backend and go to ``errors`` (default: :attr:`errors`), which
        :meth:`check` re-raises.
        """
        self._require_usable("start_reader")
        if self._reader is not None and self._reader.is_alive():
            raise BackendError(f"{self.where}: a reader thread is already running; "
                               f"close() stops it")
        if errors is not None:
            self.errors = errors
        if on_frame is None:
            self._rx = queue.Queue(maxsize)
            on_frame = self._enqueue

        def step() -> None:
            frame = self.read(poll)
            if frame is not None:
                on_frame(frame)

        self._reader = WorkerThread(f"hil-reader-{self.name or self.channel}", step,
                                    self.errors, on_error=self._reader_failed)
        self._reader.start()
        return self._reader

    def _enqueue(self, frame: Any) -> None:
        rx = self._rx
        assert rx is not None
        while True:
            try:
                rx.put_nowait(frame)
                return
            except queue.Full:
                try:
                    rx.get_nowait()
                    self._count("dropped")
                except queue.Empty:
                    pass

    def drain(self) -> list[Any]:
        """All frames the reader thread queued since the last call (oldest first)."""
        out: list[Any] = []
        rx = self._rx
        if rx is None:
            return out
        while True:
            try:
                out.append(rx.get_nowait())
            except queue.Empty:
                return out

    def check(self) -> None:
        """Re-raise the first exception of a background thread (call every tick)."""
        errors = self.errors
        if type(errors) is not ErrorSink or not errors._q.empty():  # (else: nothing to do)
            errors.check()

    def _reader_failed(self, exc: BaseException) -> None:
        self._fault = exc
        self._state = BackendState.FAULTED
        self.log.error("%s: reader thread stopped by %s: %s", self.where,
                       type(exc).__name__, exc)

    # --------------------------------------------------------------- internals
    def _count(self, *fields: str, n: int = 1) -> None:
        with self._count_lock:
            c = self.counters
            for f in fields:
                setattr(c, f, getattr(c, f) + n)

    def _count_sent(self, wire: Any) -> None:
        """Count one frame written (``wire``: what ``_write`` sent); a subclass may count
        its bytes here too, under the same lock."""
        self._count("frames_out")

    def _count_frames_in(self, frames: int, nbytes: int) -> None:
        """``frames_in += frames`` and ``bytes_in += nbytes`` under one lock (a batch read)."""
        with self._count_lock:
            c = self.counters
            c.frames_in += frames
            c.bytes_in += nbytes

    def _require_usable(self, op: str) -> None:
        st = self._state
        if st is BackendState.OPEN or st is BackendState.RECONNECTING:
            return
        if st is BackendState.CLOSED:
            raise BackendError(f"{self.where}: {op}() on a closed backend; call open() first "
                               f"or use it as a context manager")
        raise BackendError(f"{self.where}: {op}() on a faulted backend (cause: "
                           f"{type(self._fault).__name__}: {self._fault}); close() and open() "
                           f"it again") from self._fault

    def _handle_error(self, err: HILError, gen: int) -> None:
        """Count and log ``err``; return if a reconnect is now pending, raise otherwise."""
        if isinstance(err, Disconnected) and (self._closing.is_set()
                                              or self._state is BackendState.CLOSED):
            raise err  # closed under our feet: not a lost link
        if isinstance(err, Disconnected) and self.reconnect:
            self._link_lost(err, gen)
            return
        if isinstance(err, FrameError):
            raise err  # counted where it was detected (see _frame_error)
        self._count("errors")
        if isinstance(err, BackendTimeout):
            self._count("timeouts")
            raise err
        self._fault = err
        self._state = BackendState.FAULTED
        self.log.error("%s: %s", self.where, err)
        raise err

    def _frame_error(self, err: FrameError, policy: str) -> None:
        """Count a bad received frame; raise it under the ``"raise"`` policy, else log
        it (the first 10 at WARNING, then at DEBUG: the counters have the total)."""
        self._count("errors", "crc_errors" if isinstance(err, CRCError) else "frame_errors")
        if policy == "raise":
            raise err
        self._last_error_logs += 1
        level = logging.WARNING if self._last_error_logs <= 10 else logging.DEBUG
        if self.log.isEnabledFor(level):
            more = (" (further bad frames are logged at DEBUG)"
                    if self._last_error_logs == 10 else "")
            self.log.log(level, "%s: bad frame dropped: %s [%s]%s", self.where, err,
                         self.counters, more)

    def _link_lost(self, err: HILError, gen: int) -> None:
        with self._link_lock:
            if gen != self._generation or self._state is not BackendState.OPEN:
                return  # another thread already saw this disconnect
            now = time.perf_counter()
            self._state = BackendState.RECONNECTING
            self._down_since = now
            self._next_attempt = now
            self._attempts = 0
            self._last_error = err
            self._count("disconnects", "errors")
            self.log.warning("%s: link lost (%s); reconnecting", self.where,
                             err.__cause__ or err)
            try:
                self._close()
            except Exception as exc:  # noqa: BLE001
                self.log.debug("%s: close after disconnect: %r ignored", self.where, exc)

    def _try_reconnect(self, deadline: float | None) -> bool:
        """Reconnect attempts until ``deadline``; True when the link is open again."""
        while True:
            with self._link_lock:
                if self._state is not BackendState.RECONNECTING:
                    return self._state is BackendState.OPEN
                now = time.perf_counter()
                down = now - self._down_since
                if self.reconnect_timeout is not None and down > self.reconnect_timeout:
                    err = Disconnected(
                        f"{self.where}: link down for {down:.2f} s, {self._attempts} reconnect "
                        f"attempts failed (last error: {self._last_error}); check the cable, "
                        f"the power and the port name, or raise reconnect_timeout "
                        f"(now {self.reconnect_timeout} s)")
                    self._fault = err
                    self._state = BackendState.FAULTED
                    self.log.error("%s", err)
                    raise err
                if now >= self._next_attempt:
                    self._attempts += 1
                    self._count("reconnect_attempts")
                    try:
                        self._open()
                    except Exception as exc:  # noqa: BLE001 - any failure means retry
                        self._last_error = exc
                        delay = min(self.backoff[1], self.backoff[0] * 2 ** (self._attempts - 1))
                        self._next_attempt = time.perf_counter() + delay
                        self.log.debug("%s: reconnect attempt %d failed: %s; next in %.3f s",
                                       self.where, self._attempts, exc, delay)
                    else:
                        self._generation += 1
                        self._state = BackendState.OPEN
                        self._count("reconnects")
                        try:
                            self._on_reconnected()
                        except Exception as exc:  # noqa: BLE001
                            self.log.debug("%s: _on_reconnected: %r", self.where, exc)
                        self.log.warning("%s: reconnected after %d attempt(s), link was down "
                                         "%.3f s", self.where, self._attempts,
                                         time.perf_counter() - self._down_since)
                        return True
                wait = max(0.0, self._next_attempt - time.perf_counter())
            if deadline is not None:
                left = deadline - time.perf_counter()
                if left <= 0:
                    return False
                wait = min(wait, left)
            if self._closing.wait(wait):
                return False
