"""The abstract base of every HIL I/O backend, python-can style.

A backend is a connection to one device or bus: a serial port, a CAN channel,
a DAQ card, or the virtual twin of one of them.  :class:`Backend` owns
everything that is the same for all of them, and a subclass implements only
the driver calls:

===========================  ==================================================
subclass implements          contract
===========================  ==================================================
``_open()``                  open the driver; raise on failure.  Called again
                             for every reconnect attempt: start clean there
                             (drop a partial frame).
``_close()``                 release the driver; must not raise on a broken
                             link.
``_read_internal(timeout)``  return one received frame, or ``None`` when nothing
                             complete arrived within ``timeout`` seconds
                             (``None``: block), or :data:`SKIP` when it took
                             something that yields no frame (the node's own
                             echo, a dropped bad or error frame, a line that is
                             no frame): the base calls it again at once, also
                             in a poll and a batch, since more may be waiting.
                             ``None`` before the time is up (a partial frame):
                             the base calls it again with the time left.
``_read_batch(out, limit,    optional: append to ``out`` up to ``limit`` frames
accept)``                    that have already arrived, without waiting (the
                             default calls ``_read_internal(0.0)`` until it
                             returns ``None``, reading on past :data:`SKIP`);
                             may leave out, before decoding them, frames whose
                             key is not in ``accept`` (count them in
                             ``filtered``); returns the payload bytes it read and
                             did not count itself.  A frame it drops must not end
                             the batch while frames are waiting.
``_encode_frame(frame)``     optional: turn a frame into what ``_write`` sends
                             (called before any I/O; its errors do not fault
                             the backend).
``_write(data, timeout)``    send one encoded frame; may return its payload
                             bytes for ``counters.bytes_out`` (``None``: it
                             counted them itself, or there are none).
``channel``                  the port, channel or URL, for messages.
``frame_key``                how ``accept`` selects frames: a function of a frame
                             (default: a CAN frame's ``(arbitration_id,
                             is_extended_id)``); ``None`` for frames that carry no
                             id (then ``accept`` is refused).
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
* :meth:`Backend.receive_batch` (also named ``read_available``) returns every frame
  that has arrived, without waiting: the per-frame overhead of ``read`` paid once per
  call, which is what a bridge block does once per sample hit.  The base owns the
  filtering, as python-can's ``BusABC`` owns its filters: with ``accept`` (a set of
  frame keys) it returns only the accepted frames and counts the others in
  :attr:`Backend.filtered`, whatever the driver; a driver's ``_read_batch`` may drop
  them earlier (before decoding) as an optimisation.  Frames read go to the taps and
  ``counters.frames_in`` before the filter (unless the driver dropped them
  undecoded).  While a reader thread runs, the batch is what it queued.
* :attr:`Backend.state` is one of :class:`BackendState` (closed, open,
  reconnecting, faulted), kept by the :class:`~hil.link.Link` the backend holds
  (:attr:`Backend.link`); :attr:`Backend.counters` (:class:`~hil.counters.Counters`)
  counts frames, bytes, errors, CRC errors, disconnects and reconnects.
* :meth:`Backend.start_reader` runs a background reader thread
  (:class:`~hil.threads.Reader`).  Reader threads never die silently: an
  exception in the thread (driver error, a failing callback, a CRC error under the
  ``"raise"`` policy) ends the thread, faults the backend and goes on an
  :class:`ErrorSink`; :meth:`Backend.check` (which a runner calls every tick)
  re-raises the *original* exception object in the caller, with the thread's
  traceback and a note naming the thread.

Implementers' checklist
-----------------------
1. Subclass :class:`Backend`, set ``kind`` and call ``super().__init__(...)`` with the
   backend keywords (``name``, ``timeout``, ``reconnect``, ...).
2. Implement ``channel``, ``_open``, ``_close``, ``_read_internal`` (one frame or
   ``None``) and ``_write``; never create threads or wait in them beyond the timeout.
3. Count what only the driver knows with ``self.counters.add(...)`` (bytes of a raw
   read); report a bad received frame with ``self.link.bad_frame(err, policy)``.
4. Translate driver exceptions in ``_translate``; never block ``close()``
   (``_cancel_read``).
5. Frames without an id set ``frame_key = None``; a fast batch read overrides
   ``_read_batch`` and is tested against the default (the same frames, counters and
   taps); filtering stays in the base.
6. Register the class (:func:`hil.registry.register_backend` or an entry point) and
   give it a virtual twin for tests.

Limitations
-----------
* A read goes on past a frame that yields nothing (issue 36: a batch that stopped at the
  node's own echo left the frames behind it in the socket for a frame or more) only when
  the driver says so with :data:`SKIP`; a driver that returns ``None`` for a dropped frame
  ends a poll or a batch there.  A flood of such input ends a poll or a batch after
  :data:`MAX_BATCH` of them in a row (the caller is not held for ever).
* ``read`` and ``receive_batch`` are meant to be called from one thread at a time
  (the reader thread *or* the caller); ``write`` may be called from another thread
  concurrently.
* A reconnect is attempted only while somebody calls ``read``/``write`` (or the
  reader thread runs); there is no separate watchdog thread.
* The first ``open()`` does not retry: a device that is absent at start is an
  error, reported at once.
* Counters are updated under a lock and are exact, but a snapshot taken while
  a reader thread runs is only consistent field by field.
* ``Backend`` defines 27 methods (the house limit is 25; 37 before issue 33): ``__init__``
  and the 9 driver calls of the table above (the python-can template: a subclass
  overrides methods), the lifecycle (``open``, ``close``, ``__enter__``, ``__exit__``,
  ``__del__``, ``state``, ``is_open``), the I/O (``read``, ``receive_batch``,
  ``expect``, ``write``), ``where`` and ``__repr__``, and four entry points that
  runners, tests and examples call on the backend (``add_tap``, ``start_reader``,
  ``drain``, ``check``).  The link state and reconnects (:class:`~hil.link.Link`), the
  counting (:class:`~hil.counters.Counters`) and the reader thread
  (:class:`~hil.threads.Reader`) are objects it holds.
"""

from __future__ import annotations

import abc
import logging
import time
from collections.abc import Callable
from operator import attrgetter
from typing import Any, ClassVar

from .counters import Counters
from .errors import BackendError, BackendTimeout, Disconnected, HILError
from .link import BackendState, Link, chain
from .threads import ErrorSink, Reader, WorkerThread

__all__ = ["Backend", "BackendState", "Counters", "ErrorSink", "WorkerThread", "DEFAULT",
           "MAX_BATCH", "SKIP", "can_frame_key"]

log = logging.getLogger("hil")

#: frames returned by one ``receive_batch`` at most by default (a flood cannot stall a frame)
MAX_BATCH = 10_000

#: the key of a CAN frame (``can.Message``): ``(arbitration_id, is_extended_id)``
can_frame_key = attrgetter("arbitration_id", "is_extended_id")

class _Default:
    def __repr__(self) -> str:
        return "DEFAULT"


#: Sentinel for "use the backend's configured timeout".
DEFAULT: Any = _Default()


class _Skip:
    def __repr__(self) -> str:
        return "SKIP"


#: What ``_read_internal`` returns when it took input that yields no frame (module
#: docstring): read on at once, more may be waiting.
SKIP: Any = _Skip()


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
    #: How ``receive_batch(accept=...)`` keys a frame (module docstring); None: no ids.
    frame_key: Callable[[Any], Any] | None = can_frame_key

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
        #: the link's state, faults and reconnects (:class:`hil.link.Link`)
        self.link = Link(self)
        #: frames ``receive_batch(accept=...)`` dropped (not in ``accept``)
        self.filtered = 0
        self._reader: Reader | None = None  # the last reader thread (drain() after close)
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
    def _write(self, frame: Any, timeout: float | None) -> int | None: ...

    def _read_batch(self, out: list, limit: int, accept: Any) -> int:
        """Append what has arrived to ``out`` (module docstring); the default reads
        frame by frame and leaves the filtering to :meth:`receive_batch`."""
        read = self._read_internal
        skips = 0
        while len(out) < limit:
            frame = read(0.0)
            if frame is None:
                break
            if frame is SKIP:  # (no frame, but more may be waiting)
                skips += 1
                if skips > MAX_BATCH:
                    break
                continue
            out.append(frame)
        return 0

    def _encode_frame(self, frame: Any) -> Any:
        """Turn a frame into what ``_write`` sends (optional; default: unchanged).
        Errors raised here (a value out of range, a wrong type) reach the caller
        as they are and do not fault the backend."""
        return frame

    def _cancel_read(self) -> None:  # noqa: B027 - optional hook
        """Wake a blocking ``_read_internal`` (optional)."""

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
        return self.link.state

    @property
    def is_open(self) -> bool:
        return self.link.is_open

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.where} {self.link.state.value}>"

    # --------------------------------------------------------------- lifecycle
    def open(self) -> Backend:
        """Open the link (idempotent); a faulted backend is closed and reopened."""
        link = self.link
        if link.is_open:
            return self
        if link.state is BackendState.FAULTED:
            self.close()
        link.closing.clear()
        try:
            with link.lock:
                self._open()
                link.opened()
        except Exception as exc:
            err = self._translate(exc, "open")
            if type(err) is Disconnected:  # at open time a missing port is not a lost link
                err = BackendError(str(err).replace("the device or port went away",
                                                    "the port cannot be opened"))
            self.counters.add("errors")
            if err is exc:
                raise
            raise err from exc
        self.log.info("%s: open", self.where)
        return self

    def close(self) -> None:
        """Stop the reader thread and release the link (idempotent, never raises
        for a broken link)."""
        link = self.link
        if link.state is BackendState.CLOSED:
            return
        link.closing.set()
        reader = self._reader
        if reader is not None and reader.thread.is_alive():
            reader.stop(self._cancel_read, self.log, self.where)
        with link.lock:
            try:
                self._close()
            except Exception as exc:  # noqa: BLE001 - closing a dead link may fail
                self.log.debug("%s: close: %r ignored", self.where, exc)
            link.state = BackendState.CLOSED
        self.log.info("%s: closed (%s)", self.where, self.counters)

    def __enter__(self) -> Backend:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            if self.link.state is not BackendState.CLOSED:
                self.close()
        except Exception:  # noqa: BLE001
            pass

    # ----------------------------------------------------------------- reading
    def read(self, timeout: float | None = DEFAULT) -> Any | None:
        """Return the next received frame, or ``None`` if none arrived within
        ``timeout`` seconds (default: the backend's ``timeout``; ``0`` polls,
        ``None`` blocks).  While the link is down and ``reconnect`` is on, the
        time is spent on reconnect attempts and ``None`` is returned."""
        link = self.link
        link.require_usable("read")
        timeout = self.timeout if timeout is DEFAULT else timeout
        deadline = None if timeout is None else time.perf_counter() + timeout
        skips = 0
        while True:
            if link.state is BackendState.RECONNECTING:
                if not link.try_reconnect(deadline):
                    return None
            remaining = None if deadline is None else max(0.0, deadline - time.perf_counter())
            gen = link.generation
            try:
                frame = self._read_internal(remaining)
            except Exception as exc:
                link.handle_error(chain(self._translate(exc, "read"), exc), gen)
                continue  # (handle_error returned: a reconnect is pending)
            if frame is SKIP:  # no frame, but more may be waiting: read on, even in a poll
                skips += 1
                if skips <= MAX_BATCH and not link.closing.is_set():
                    continue
                frame = None
            if frame is not None:
                self.counters.add("frames_in")
                for tap in self._rx_taps:
                    tap(frame)
                if self.log.isEnabledFor(logging.DEBUG):
                    self.log.debug("%s: rx %r", self.where, frame)
                return frame
            if link.closing.is_set() or (deadline is not None
                                         and time.perf_counter() >= deadline):
                return None

    def receive_batch(self, limit: int = MAX_BATCH, accept: Any = None) -> list[Any]:
        """Every frame that has arrived (up to ``limit``), without waiting; with
        ``accept`` (a set of frame keys, :attr:`frame_key`) only those frames, the
        others counted in :attr:`filtered` (module docstring).  While a reader thread
        runs: what it queued.  Errors are handled as in :meth:`read`; frames read
        before an error are returned when a reconnect is pending, else lost with the
        error."""
        if accept is not None and self.frame_key is None:
            raise BackendError(f"{self.where}: accept= selects frames by id, and this "
                               f"backend's frames carry none; filter them in the caller")
        reader = self._reader
        if reader is not None and reader.thread.is_alive():
            frames = reader.drain()  # read (counted, tapped) by the thread
        else:
            link = self.link
            if link.state is not BackendState.OPEN:
                link.require_usable("read")
                if link.state is BackendState.RECONNECTING and not link.try_reconnect(
                        time.perf_counter()):
                    return []
            frames = []
            gen = link.generation
            try:
                nbytes = self._read_batch(frames, limit, accept)
            except Exception as exc:
                nbytes = 0
                link.handle_error(chain(self._translate(exc, "read"), exc), gen)
            if frames:
                self.counters.add_in(len(frames), nbytes)
                for tap in self._rx_taps:
                    for frame in frames:
                        tap(frame)
            elif nbytes:
                self.counters.add("bytes_in", n=nbytes)
        if accept is None or not frames:
            return frames
        key = self.frame_key
        keep = [f for f in frames if key(f) in accept]
        self.filtered += len(frames) - len(keep)
        return keep

    #: the name of :meth:`receive_batch` before issue 33 (tests, examples and users call it)
    read_available = receive_batch

    def expect(self, timeout: float | None = DEFAULT) -> Any:
        """Like :meth:`read` but raise :class:`BackendTimeout` when nothing arrives."""
        timeout = self.timeout if timeout is DEFAULT else timeout
        frame = self.read(timeout)
        if frame is None:
            self.counters.add("timeouts", "errors")
            link = self.link
            state = ("" if link.state is BackendState.OPEN
                     else f" (link {link.state.value}: {link.last_error})")
            raise BackendTimeout(f"{self.where}: no frame within {timeout} s{state}; check that "
                                 f"the device is sending, the baud rate and the framing")
        return frame

    # ----------------------------------------------------------------- writing
    def write(self, frame: Any, timeout: float | None = DEFAULT) -> None:
        """Send one frame.  After a disconnect (with ``reconnect`` on) the link is
        reopened within ``timeout`` and the frame sent once more; if that does
        not succeed in time, :class:`BackendTimeout` is raised and the frame is
        not sent."""
        link = self.link
        if link.state is not BackendState.OPEN:
            link.require_usable("write")
        timeout = self.timeout if timeout is DEFAULT else timeout
        deadline = None if timeout is None else time.perf_counter() + timeout
        wire = self._encode_frame(frame)  # a bad frame raises here and faults nothing
        for attempt in range(3):
            if link.state is BackendState.RECONNECTING and not link.try_reconnect(deadline):
                self.counters.add("timeouts", "errors")
                raise BackendTimeout(
                    f"{self.where}: write not sent: the link has been down for "
                    f"{time.perf_counter() - link.down_since:.3f} s and did not come back "
                    f"within the {timeout} s timeout (last error: {link.last_error}); the "
                    f"backend keeps reconnecting, retry later or check the cable")
            # (a zero timeout leaves zero: no second clock read)
            remaining = None if deadline is None else 0.0 if timeout == 0.0 else \
                max(0.0, deadline - time.perf_counter())
            gen = link.generation
            try:
                nbytes = self._write(wire, remaining)
            except Exception as exc:
                err = chain(self._translate(exc, "write"), exc)
                if attempt == 2:
                    self.counters.add("errors")
                    if err is exc:
                        raise
                    raise err from exc
                link.handle_error(err, gen)
                continue
            break
        self.counters.add_out(nbytes or 0)
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
        """Read in a background thread (a :class:`~hil.threads.Reader`).

        Frames go to ``on_frame(frame)`` (called in the thread), or, by default,
        onto a bounded queue that :meth:`drain` (and :meth:`receive_batch`) empties
        (when it is full the oldest frame is dropped and counted).  Errors end the
        thread, fault the backend and go to ``errors`` (default: :attr:`errors`),
        which :meth:`check` re-raises.
        """
        self.link.require_usable("start_reader")
        if self._reader is not None and self._reader.thread.is_alive():
            raise BackendError(f"{self.where}: a reader thread is already running; "
                               f"close() stops it")
        if errors is not None:
            self.errors = errors

        def failed(exc: BaseException) -> None:
            self.link.faulted(exc)
            self.log.error("%s: reader thread stopped by %s: %s", self.where,
                           type(exc).__name__, exc)

        self._reader = Reader(f"hil-reader-{self.name or self.channel}", self.read,
                              self.counters, self.errors, failed, on_frame=on_frame,
                              poll=poll, maxsize=maxsize)
        self._reader.thread.start()
        return self._reader.thread

    def drain(self) -> list[Any]:
        """All frames the reader thread queued since the last call (oldest first)."""
        return [] if self._reader is None else self._reader.drain()

    def check(self) -> None:
        """Re-raise the first exception of a background thread (call every tick)."""
        errors = self.errors
        if type(errors) is not ErrorSink or not errors._q.empty():  # (else: nothing to do)
            errors.check()
