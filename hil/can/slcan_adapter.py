"""One emulated SLCAN adapter of a :class:`~hil.can.slcan_hub.SlcanHub`: its state and
its command interpreter.

:class:`SlcanAdapter` holds what a USB-serial CAN adapter holds (open or closed,
listen-only, bitrates, timestamps, the overrun flag, the bytes its client has not read
yet, its counters) and answers the Lawicel command lines of the table in
:mod:`hil.can.slcan_hub`.  A valid frame command is acknowledged and handed to the hub
through ``send(adapter, frame)``; the hub puts it on the bus and delivers it.  The
adapter does no I/O itself: the hub thread feeds it the bytes read from the pty
(:meth:`SlcanAdapter.feed`) and writes :attr:`SlcanAdapter.out` back.
"""

from __future__ import annotations

import logging
import termios
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..counters import Counters
from .slcan_frame import _HEX, _MAX_LINE, BITRATES, Frame, btr_bitrate, parse_frame

__all__ = ["SlcanAdapter"]

log = logging.getLogger("hil.can.slcan_hub")

_OK, _BELL = b"\r", b"\a"


@dataclass(eq=False)
class SlcanAdapter:
    """The emulated adapter on port ``index`` (module docstring).

    ``cond`` is the hub's condition (open/close are changed under it, for
    :meth:`~hil.can.slcan_hub.SlcanHub.wait_open`); ``send(adapter, frame)`` puts a
    transmitted frame on the hub's bus.
    """

    index: int
    master: int
    slave: int
    path: str
    bitrate: float
    data_bitrate: float
    cond: threading.Condition
    send: Callable[[SlcanAdapter, Frame], None]
    hub: str = "slcan-hub"
    inbuf: bytearray = field(default_factory=bytearray)
    out: bytearray = field(default_factory=bytearray)
    is_open: bool = False
    listen_only: bool = False
    timestamps: bool = False
    overrun: bool = False
    disconnected: bool = False
    txq: deque[tuple[float, int, Frame]] = field(default_factory=deque)
    counters: Counters = field(default_factory=Counters)

    VERSION = "V1013"
    DETAIL = "vSTM32"

    def state(self) -> dict[str, Any]:
        return {"open": self.is_open, "listen_only": self.listen_only,
                "bitrate": self.bitrate, "data_bitrate": self.data_bitrate,
                "timestamps": self.timestamps, "disconnected": self.disconnected,
                "path": self.path}

    def feed(self, data: bytes) -> None:
        """Bytes read from the client: run every complete command line."""
        self.counters.bytes_in += len(data)
        self.inbuf += data
        while True:
            j = self.inbuf.find(b"\r")
            if j < 0:
                break
            line = bytes(self.inbuf[:j])
            del self.inbuf[:j + 1]
            self.command(line.lstrip(b"\n"))  # tolerate "\r\n" line ends
        if len(self.inbuf) > _MAX_LINE:
            self.inbuf.clear()
            self._error("line too long")

    def _error(self, why: str, frame_error: bool = False) -> None:
        self.counters.errors += 1
        if frame_error:
            self.counters.frame_errors += 1
        log.debug("slcan hub %r port %d: BELL (%s)", self.hub, self.index, why)
        self.out += _BELL

    def command(self, raw: bytes) -> None:
        """Answer one command line (the table of :mod:`hil.can.slcan_hub`)."""
        try:
            line = raw.decode("ascii")
        except UnicodeDecodeError:
            self._error(f"not ASCII: {raw!r}")
            return
        if not line:
            return
        c, arg = line[0], line[1:]
        if c in "tTrRdDbB":
            self._transmit(line)
        elif c in "SsY":
            self._bitrate(line, c, arg)
        elif c in "OL" and not arg:
            with self.cond:
                self.is_open, self.listen_only = True, c == "L"
            self.out += _OK
        elif c == "C" and not arg:
            if self.is_open:
                self._discard_rx()
            with self.cond:
                self.is_open = self.listen_only = False
            self.out += _OK
        elif c == "V" and not arg:
            self.out += self.VERSION.encode() + _OK
        elif c == "v" and not arg:
            self.out += self.DETAIL.encode() + _OK
        elif c == "N" and not arg:
            self.out += f"NHUB{self.index}".encode() + _OK
        elif c == "F" and not arg:
            flags = 0x08 if self.overrun else 0
            self.overrun = False
            self.out += f"F{flags:02X}".encode() + _OK
        elif c == "Z" and arg in ("0", "1"):
            self.timestamps = arg == "1"
            self.out += _OK
        elif c in "Mm" and len(arg) == 8 and _HEX.issuperset(arg):
            self.out += _OK  # acceptance filters: accepted, not implemented
        elif c in "XWQU" and len(arg) == 1 and arg.isdigit():
            self.out += _OK  # auto-poll / filter mode / auto-start / UART: ignored
        else:
            self._error(f"unknown command {line!r}")

    def _bitrate(self, line: str, c: str, arg: str) -> None:
        if self.is_open:
            self._error(f"{line!r} while open")
        elif c == "S" and len(arg) == 1 and arg.isdigit():
            self.bitrate = BITRATES[int(arg)]
            self.out += _OK
        elif c == "s" and len(arg) == 4 and _HEX.issuperset(arg):
            self.bitrate = btr_bitrate(int(arg[:2], 16), int(arg[2:], 16))
            self.out += _OK
        elif c == "Y" and len(arg) == 1 and arg in "12345678":
            self.data_bitrate = int(arg) * 1_000_000
            self.out += _OK
        else:
            self._error(f"bad bitrate command {line!r}")

    def _discard_rx(self) -> None:
        """The adapter closes: what its client has not read yet is gone."""
        self.out.clear()
        try:
            termios.tcflush(self.slave, termios.TCIFLUSH)
        except (OSError, termios.error):
            pass

    def _transmit(self, line: str) -> None:
        frame = parse_frame(line)
        if frame is None:
            self._error(f"malformed frame {line!r}", frame_error=True)
            return
        if not self.is_open or self.listen_only:
            self._error("transmit on a closed port" if not self.is_open
                        else "transmit in listen-only mode")
            return
        self.counters.frames_in += 1
        self.out += b"Z\r" if frame.extended else b"z\r"
        self.send(self, frame)
