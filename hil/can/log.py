"""Logging and replay of CAN traffic through python-can's writers and readers.

:class:`MessageLog` writes messages with ``can.Logger`` (the format follows the
suffix: ``.asc``, ``.blf``, ``.csv``, ``.log``, ``.trc``, ...); it is callable,
so ``backend.start_reader(on_frame=log)`` logs received frames, and
:meth:`MessageLog.sent` logs a transmitted one (``is_rx=False``).
:func:`read_log` reads a file back with ``can.LogReader`` as ``(t, msg)``
pairs, ``t`` relative to the first message; :func:`replay` sends them on a
backend on the original time grid, scaled by ``speed``.

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

import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..backend import Backend
from .backend import import_can

__all__ = ["MessageLog", "read_log", "replay"]


class MessageLog:
    """A thread-safe ``can.Logger`` (context manager; ``stop()`` is idempotent)."""

    def __init__(self, path: str | os.PathLike[str], **logger_options: Any) -> None:
        can = import_can()
        self.path = os.fspath(path)
        self._writer = can.Logger(self.path, **logger_options)
        self._lock = threading.Lock()
        self._stopped = False
        self.count = 0

    def __call__(self, msg: Any) -> None:
        """Log a message (as it is: received frames have ``is_rx=True``)."""
        with self._lock:
            if self._stopped:
                return
            self._writer.on_message_received(msg)
            self.count += 1

    log = __call__

    def sent(self, msg: Any) -> None:
        """Log a transmitted message (a copy with ``is_rx=False`` and a timestamp)."""
        import copy
        m = copy.copy(msg)
        m.is_rx = False
        if not m.timestamp:
            m.timestamp = time.time()
        self(m)

    def stop(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            self._writer.stop()

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
