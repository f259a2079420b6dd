"""The end of a session between CAN nodes: a node that stops says so, and its peers end
their runs instead of taking its silence for a failure.

A node judges its inputs by their freshness: a message that stops coming is a stale
episode, and the run's verdict fails on it.  When a plant's run ends, its last frames are
followed by silence too, and a controller node that keeps running counted that silence
against itself ("EGO silent from t = 30 s to the end": issue 30, the documented
two-process recipe failed every time).  Stopping the controller from outside (a signal
after the plant's end) is a race with its staleness limit.  So the node that ends sends
:func:`end_frame` after its last frame, and a peer that reads it (:class:`EndWatch`, a
backend tap) ends its run at the end of that frame: before its inputs can go stale on
account of the end, while a stale episode that began before the end still counts.

The frame: id :data:`END_ID` (free in the bundled DBCs; it must be free in yours, as the
ids of :mod:`hil.can.handshake` and :mod:`hil.can.lockstep`), 8 bytes: the sender's DBC
fingerprint (4 bytes, little endian; 0 without a DBC) and ``b"END\\0"``.

Limitations: :class:`EndWatch` sees the frames its backend reads (a receiving bridge reads
every frame each period; a backend nobody reads never shows it); a peer that misses the
frame (a lossy transport, a peer started later) runs on until it is stopped otherwise (a
signal, its duration), and its verdict then reports the silence; the frame says that a
node ends, not which node (one sender per id, as CAN wants: one ending node per bus).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .backend import import_can

__all__ = ["END_ID", "EndWatch", "end_frame", "is_end"]

#: Arbitration id of the end-of-session frame.
END_ID = 0x7F4
_MAGIC = b"END\0"


def end_frame(db: Any = None) -> Any:
    """The frame a node sends after its last one (module docstring)."""
    fp = int(db.fingerprint) if db is not None else 0
    return import_can().Message(arbitration_id=END_ID, is_extended_id=False,
                                data=fp.to_bytes(4, "little") + _MAGIC)


def is_end(msg: Any) -> bool:
    """True for an end-of-session frame."""
    return (msg.arbitration_id == END_ID and not msg.is_extended_id
            and bytes(msg.data[4:8]) == _MAGIC)


class EndWatch:
    """A backend tap (``backend.add_tap(rx=EndWatch(on_end))``) that calls ``on_end(text)``
    once, in the reading thread, when a peer's end-of-session frame arrives.

    ``on_end`` is typically ``runner.stop`` (thread-safe; the run ends after the current
    frame).  :attr:`seen` is the frame's timestamp once it came, else None.
    """

    def __init__(self, on_end: Callable[[str], None]) -> None:
        self.on_end = on_end
        self.seen: float | None = None

    def __call__(self, msg: Any) -> None:
        if self.seen is None and is_end(msg):
            self.seen = float(msg.timestamp or 0.0)
            self.on_end("the peer ended the session (end-of-session frame)")
