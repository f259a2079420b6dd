"""What went over a backend: frames, bytes and errors, counted under one lock."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass

__all__ = ["Counters"]


@dataclass
class Counters:
    """What went over a backend since it was created (survives reconnects).

    Each ``add*`` call takes the counters' own lock, so a reader thread and a writer
    may count at once; a snapshot taken while a reader thread runs is consistent
    field by field only.
    """

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

    def __post_init__(self) -> None:
        self._lock = threading.Lock()  # not a field: as_dict and == leave it out

    def add(self, *fields: str, n: int = 1) -> None:
        """``field += n`` for each of ``fields``."""
        with self._lock:
            for f in fields:
                setattr(self, f, getattr(self, f) + n)

    def add_in(self, frames: int, nbytes: int) -> None:
        """``frames_in += frames`` and ``bytes_in += nbytes`` (a batch read)."""
        with self._lock:
            self.frames_in += frames
            self.bytes_in += nbytes

    def add_out(self, nbytes: int) -> None:
        """One frame written, ``nbytes`` of it counted here (0: its driver counted them)."""
        with self._lock:
            self.frames_out += 1
            self.bytes_out += nbytes

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def __str__(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.as_dict().items() if v)
