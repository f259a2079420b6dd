"""Logging and replay of CAN traffic through python-can's writers and readers.

:class:`MessageLog` writes messages with ``can.Logger`` (the format follows the
suffix: ``.asc``, ``.blf``, ``.csv``, ``.log``, ``.trc``, ...) on a writer thread
fed by a bounded queue, so that logging from the real-time frame costs a queue put,
not a file write; it is callable, so ``backend.start_reader(on_frame=log)`` logs
received frames, and :meth:`MessageLog.sent` logs a transmitted one (``is_rx=False``).
:func:`read_log` reads a file back with ``can.LogReader`` as ``(t, msg)``
pairs, ``t`` relative to the first message; :func:`replay` sends them on a
backend on the original time grid, scaled by ``speed``.  :func:`log_fit` says whether a
log's frames fit a DBC (ids, lengths, the database named by its DBC check frames) before
anyone decodes them with it.

Time order: a log file is written in time order (issue 22 item 11: ``bus.asc`` had 1423 of
5616 entries out of order, by up to 1.2 s: received frames carry the driver's receive time,
sent ones the time of sending, and a backlog delivers old frames late).  The writer holds
messages for ``reorder_s`` of message time (default 2 s) and writes them by timestamp; a
message older than one already written (it came more than ``reorder_s`` late) is written
with the last written time and counted in ``late``.

Channels: a log holds one bus, and every frame in it, received or sent, is written on the
log's ``channel`` (default 0, python-can's first channel: ``.asc``, ``.blf`` and ``.trc``
show it as 1, ``.log`` as ``can0``; ``.csv`` and ``.db`` store none).  python-can's writers
take a number from the digits at the end of a received frame's bus channel (the bus
``flagship-445520752546`` became channel 445520752547, a multicast group ``239.1.2.3``
channel 4) and write a sent frame, which has none, on their default channel 1: the same bus
showed up as two (issue 30).  Log two buses into two files, or give each its own
:class:`MessageLog` ``channel``.

Limitations
-----------
* Log formats store timestamps with limited resolution (ASC: microseconds,
  relative to the start of the file); compare timestamps with a tolerance.
  :func:`read_log` returns times relative to the first message, so the
  absolute start time does not matter.
* :func:`replay` sleeps with ``time.sleep``; it is for bench tests, not a
  real-time player (it does not drop late frames, it sends them at once).
"""

from __future__ import annotations

import copy
import heapq
import itertools
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from cosim.errors import OutputError

from ..backend import Backend
from .backend import import_can

__all__ = ["LogFit", "MessageLog", "log_fit", "protocol_ids", "read_log", "replay"]


_STOP = object()  # ends the writer thread


class _Sent(tuple):
    """A transmitted message queued as it was given, with its send time: the writer
    thread makes the logged copy (``is_rx=False``), not the real-time frame."""

    __slots__ = ()

    def __new__(cls, msg: Any, timestamp: float) -> _Sent:
        return tuple.__new__(cls, (msg, timestamp))


def _as_logged(item: Any) -> Any:
    """The message to write: a received one as it is, a sent one as a copy with
    ``is_rx=False`` and its send time."""
    if type(item) is not _Sent:
        return item
    msg, ts = item
    m = copy.copy(msg)
    m.is_rx = False
    m.timestamp = ts
    return m


class MessageLog:
    """A ``can.Logger`` written on its own thread (context manager; ``stop()`` is
    idempotent and thread-safe).

    Calling the log (``log(msg)``, :meth:`sent`) only puts the message on a queue: these
    calls run where the backend's taps run, in the real-time frame (a bridge's read or
    write).  A writer thread formats and writes the messages (the standard library's
    ``QueueHandler``/``QueueListener`` pattern).

    Parameters
    ----------
    path : str or path-like
        Log file; the format follows the suffix (module docstring).
    queue_size : int
        Messages queued and not yet written, at most.  A message that finds the queue full
        is dropped and counted in :attr:`dropped` (the log then lacks it); the default
        holds over a minute of a loaded 500 kbit/s bus, so under normal load nothing is
        lost and the count is the alarm.
    thread : bool
        False: write in the caller's thread (what this class did before the writer
        thread; no queue, nothing dropped, the frame waits for the file).
    batch_s : float
        The writer thread takes the queued messages in batches this far apart (default
        50 ms; 0: as they come), so that it takes the GIL from the frame a few times a
        second instead of at every message.
    reorder_s : float, optional
        Messages are held this long (in message time) and written in timestamp order
        (module docstring); 0 writes them as they come.  Default 2 s with the thread, 0
        without (the call writes its message).
    channel : int
        The channel every frame is written on (python-can's 0-based numbering; module
        docstring); the frames the caller passes keep their own.
    **logger_options
        Passed to ``can.Logger``.

    Attributes
    ----------
    count : int
        Messages accepted (queued, or written when ``thread=False``); after :meth:`stop`
        every accepted message is in the file unless the writer failed.
    written, dropped : int
        Messages written to the file; messages dropped because the queue was full.
    late : int
        Messages that came more than ``reorder_s`` late (written with the last time).

    Notes
    -----
    An error of the writer thread (disk full, a file system gone) ends the writing; the
    next call of the log raises :class:`~cosim.errors.OutputError` with the original
    message and the file name (a bridge then stops the run: a tap's error is not a link
    error), and so does :meth:`stop` if no call did.  A kill loses the messages queued
    and not yet written (``can.Logger`` writers buffer in memory as well: a kill loses
    what they did not flush, with or without the thread).
    """

    def __init__(self, path: str | os.PathLike[str], *, queue_size: int = 100_000,
                 thread: bool = True, reorder_s: float | None = None, channel: int = 0,
                 batch_s: float = 0.05, **logger_options: Any) -> None:
        if int(queue_size) < 1:
            raise ValueError(f"MessageLog: queue_size must be >= 1, got {queue_size!r}")
        if not isinstance(channel, int) or isinstance(channel, bool) or channel < 0:
            raise ValueError(f"MessageLog: channel must be a channel number >= 0 (python-can "
                             f"counts from 0; ASC shows 0 as 1), got {channel!r}")
        if not (isinstance(batch_s, int | float) and 0 <= batch_s <= 1):
            raise ValueError(f"MessageLog: batch_s must be 0..1 s, got {batch_s!r}")
        self.channel = channel
        self.batch_s = float(batch_s)
        can = import_can()
        self.path = os.fspath(path)
        self._writer = can.Logger(self.path, **logger_options)
        self._lock = threading.Lock()  # producers only (the frame, reader threads)
        self._stopped = False
        self.queue_size = int(queue_size)
        self.count = self.written = self.dropped = 0
        self.late = 0
        self.max_queued = 0
        self.reorder_s = float((2.0 if thread else 0.0) if reorder_s is None else reorder_s)
        self._heap: list = []
        self._seq = itertools.count()
        self._newest = -float("inf")
        self._last_written = -float("inf")
        self._error: BaseException | None = None
        self._reported = False
        self._q: queue.SimpleQueue | None = None
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()  # stop() ends the writer's pause between batches
        if thread:
            self._q = queue.SimpleQueue()
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name=f"cosim bus log {os.path.basename(self.path)}")
            self._thread.start()

    def _emit(self, msg: Any) -> None:
        """Write one message on the log's channel, never before the last written time
        (a copy when it changes: the caller's frame is the one its bridges decode)."""
        late = msg.timestamp < self._last_written
        if late or msg.channel != self.channel:
            msg = copy.copy(msg)
            msg.channel = self.channel
        if late:
            self.late += 1
            msg.timestamp = self._last_written
        self._last_written = msg.timestamp
        self._writer.on_message_received(msg)
        self.written += 1

    def _put(self, msg: Any, flush: bool = False) -> None:
        """Into the reorder window; write what is older than the window (all: ``flush``)."""
        heap = self._heap
        if msg is not None:
            ts = msg.timestamp or 0.0
            heapq.heappush(heap, (ts, next(self._seq), msg))
            if ts > self._newest:
                self._newest = ts
        edge = float("inf") if flush else self._newest - self.reorder_s
        while heap and heap[0][0] <= edge:
            self._emit(heapq.heappop(heap)[2])

    def _run(self) -> None:
        """Take what is queued in batches, ``batch_s`` apart: a thread woken by every
        message took the GIL from the real-time frame thousands of times a second
        (measured: the frame's work 20-25 % dearer with a bus log than without)."""
        q = self._q
        while True:
            batch = [q.get()]
            while True:
                try:
                    batch.append(q.get_nowait())
                except queue.Empty:
                    break
            for msg in batch:
                stop = msg is _STOP
                if self._error is None:
                    try:
                        self._put(None if stop else _as_logged(msg), flush=stop)
                    except Exception as exc:  # noqa: BLE001 - raised by the next call, stop()
                        self._error = exc
                if stop:  # also when the last writes failed: stop() waits for this thread
                    return
            self._wake.wait(self.batch_s)

    def _failed(self) -> OutputError:
        self._reported = True
        err = OutputError(f"cannot write the bus log '{self.path}' (in its writer thread): "
                          f"{type(self._error).__name__}: {self._error}; free the disk, "
                          "choose another log path or remove the log")
        err.__cause__ = self._error
        return err

    def __call__(self, msg: Any) -> None:
        """Log a message (as it is: received frames have ``is_rx=True``)."""
        if self._error is not None:
            raise self._failed()
        with self._lock:
            if self._stopped:
                return
            if self._q is None:
                self._put(msg)
                self.count += 1
                return
            depth = self.count - self.written
            if depth >= self.queue_size:
                self.dropped += 1
                return
            self._q.put(msg)
            self.count += 1
            if depth + 1 > self.max_queued:
                self.max_queued = depth + 1

    log = __call__

    def sent(self, msg: Any) -> None:
        """Log a transmitted message (``is_rx=False``, with a timestamp).  The caller's
        message is not changed: the writer thread logs a copy (in the frame: a tuple)."""
        if self._q is None:
            self(_as_logged(_Sent(msg, msg.timestamp or time.time())))
        else:
            self(_Sent(msg, msg.timestamp or time.time()))

    def stats(self) -> dict:
        """Messages accepted, written and dropped, the deepest the queue got."""
        return {"path": self.path, "channel": self.channel, "count": self.count,
                "written": self.written, "dropped": self.dropped, "late": self.late,
                "max_queued": self.max_queued,
                "queue_size": self.queue_size, "thread": self._thread is not None,
                "error": None if self._error is None
                else f"{type(self._error).__name__}: {self._error}"}

    def io_figures(self) -> dict:
        """For the run's verdict: messages dropped because the queue was full."""
        return {"recording_dropped": self.dropped}

    def stop(self) -> None:
        """Write everything queued (waits), close the file; raise the writer thread's
        error if no call of the log has raised it yet."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        try:
            if self._thread is not None:
                self._q.put(_STOP)
                self._wake.set()
                self._thread.join()
            elif self._error is None:
                self._put(None, flush=True)
        finally:
            self._writer.stop()
        if self._error is not None and not self._reported:
            raise self._failed()

    close = stop

    def __enter__(self) -> MessageLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def read_log(path: str | os.PathLike[str], *, only_rx: bool = False,
             include_error_frames: bool = False) -> Iterator[tuple[float, Any]]:
    """``(t, msg)`` from a log file; ``t`` in seconds since the first message."""
    can = import_can()
    t0: float | None = None
    for msg in can.LogReader(os.fspath(path)):
        if msg.is_error_frame and not include_error_frames:
            continue
        if only_rx and not msg.is_rx:
            continue
        if t0 is None:
            t0 = msg.timestamp
        yield msg.timestamp - t0, msg


def replay(log_path: str | os.PathLike[str], backend: Backend, *, speed: float | None = 1.0,
           only_rx: bool = False, sleep: Callable[[float], None] = time.sleep,
           clock: Callable[[], float] = time.perf_counter) -> int:
    """Send the messages of a log on ``backend``, keeping their spacing divided by
    ``speed`` (``None``: as fast as possible); returns the number sent."""
    if speed is not None and not speed > 0:
        raise ValueError(f"replay: speed must be > 0 or None, got {speed}")
    start = clock()
    n = 0
    for t, msg in read_log(log_path, only_rx=only_rx):
        if speed is not None:
            wait = start + t / speed - clock()
            if wait > 0:
                sleep(wait)
        out = msg.__class__(timestamp=0.0, arbitration_id=msg.arbitration_id,
                            is_extended_id=msg.is_extended_id, is_remote_frame=msg.is_remote_frame,
                            is_fd=msg.is_fd, bitrate_switch=msg.bitrate_switch,
                            error_state_indicator=msg.error_state_indicator, dlc=msg.dlc,
                            data=msg.data)
        backend.write(out)
        n += 1
    return n


# ------------------------------------------------------------------ fit to a DBC
def protocol_ids() -> dict[int, str]:
    """Standard ids of hil's own protocols (not DBC messages): the DBC check
    (:mod:`hil.can.handshake`), lock-step (:mod:`hil.can.lockstep`), the end of a session
    (:mod:`hil.can.session`)."""
    from .handshake import DBC_ANSWER_ID, DBC_ID
    from .lockstep import ACK_ID, SYNC_ID
    from .session import END_ID
    return {DBC_ID: "DBC check request", DBC_ANSWER_ID: "DBC check answer",
            SYNC_ID: "lock-step SYNC", ACK_ID: "lock-step ACK", END_ID: "end of session"}


def _bytes(lengths: Counter) -> str:
    ls = sorted(lengths)
    return (" or ".join(str(n) for n in ls) if len(ls) < 4 else f"{ls[0]}..{ls[-1]}") \
        + " bytes"


@dataclass
class LogFit:
    """How a log's frames fit a DBC (:func:`log_fit`).

    Attributes
    ----------
    frames : int
        Frames read (error frames left out).
    unknown : dict
        ``{(id, extended): Counter(length: frames)}`` of ids in no message of the DBC
        (hil's protocol ids left out).
    wrong_length : dict
        ``{message: Counter(length: frames)}`` of frames whose length is not the
        message's.
    fingerprints : Counter
        Database fingerprints named by the log's DBC check frames, with their counts.
    found, missing : list of str
        The DBC's messages seen in the log, and those never seen.
    """

    source: str
    fingerprint: int
    frames: int = 0
    unknown: dict = field(default_factory=dict)
    wrong_length: dict = field(default_factory=dict)
    fingerprints: Counter = field(default_factory=Counter)
    found: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    lengths: dict = field(default_factory=dict)

    def problems(self, allow_unknown: bool = False) -> list[str]:
        """Why the log does not fit, one text each (empty: it fits).  ``allow_unknown``:
        ids the DBC lacks (other nodes' traffic) are no problem."""
        out = []
        for fp, n in sorted(self.fingerprints.items()):
            if fp != self.fingerprint:
                out.append(f"its DBC check frames ({n}) name database fingerprint "
                           f"0x{fp:08X}, this DBC's is 0x{self.fingerprint:08X}: the nodes "
                           "that wrote it used another database")
        for name, lengths in self.wrong_length.items():
            out.append(f"{name} has {self.lengths[name]} bytes in the DBC, the log's frames "
                       f"with its id have {_bytes(lengths)} ({sum(lengths.values())} frames)")
        if not allow_unknown:
            for (fid, ext), lengths in sorted(self.unknown.items()):
                out.append(f"{'extended ' if ext else ''}id 0x{fid:03X} "
                           f"({sum(lengths.values())} frames of {_bytes(lengths)}) is in no "
                           "message of it")
        return out

    @property
    def ok(self) -> bool:
        return not self.problems()


def log_fit(path: str | os.PathLike[str], db: Any, *, only_rx: bool = False) -> LogFit:
    """Read a log once and compare its frames with the :class:`~hil.can.CanDatabase`
    ``db``: ids in none of its messages, lengths that are not the message's, DBC check
    frames naming another database (:class:`LogFit`).  A log decoded with the wrong DBC
    gives plausible, wrong values (issue 30: the demo's actuator position frames, read
    with the ACC DBC, said ``RADAR range=500 m``)."""
    from .handshake import DBC_ANSWER_ID, DBC_ID, parse_dbc_frame
    protocol = protocol_ids()
    by_id = {(int(m.frame_id), bool(m.is_extended_frame)): m for m in db.db.messages}
    fit = LogFit(db.source, db.fingerprint)
    fit.lengths = {m.name: int(m.length) for m in db.db.messages}
    seen: dict[tuple[int, bool], Counter] = {}
    for _, msg in read_log(path, only_rx=only_rx):
        fit.frames += 1
        key = (msg.arbitration_id, bool(msg.is_extended_id))
        n = msg.dlc if msg.is_remote_frame else len(msg.data)
        seen.setdefault(key, Counter())[n] += 1
        if key not in by_id and key[0] in (DBC_ID, DBC_ANSWER_ID) and not key[1] and n >= 8:
            fit.fingerprints[parse_dbc_frame(msg)[0]] += 1
    for key, lengths in seen.items():
        m = by_id.get(key)
        if m is None:
            if key[1] or key[0] not in protocol:
                fit.unknown[key] = lengths
            continue
        fit.found.append(m.name)
        wrong = Counter({n: c for n, c in lengths.items() if n != m.length})
        if wrong:
            fit.wrong_length[m.name] = wrong
    fit.missing = [m.name for m in db.db.messages if m.name not in fit.found]
    return fit
