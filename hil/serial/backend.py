"""Serial-port backend on pyserial: framing, CRC, fixed layouts, reconnect.

:class:`SerialBackend` opens its port with ``serial.serial_for_url``, so a
device path (``/dev/ttyUSB0``, a pty, a symlink to either), ``loop://`` (an
in-process loopback) and ``socket://host:port`` all work.  pyserial is
imported when the port is opened, never at import time; a missing pyserial is
a :class:`~hil.errors.DriverMissing` that says how to install it.

Reading
-------
Received bytes go through the framing's incremental deframer, so frames split
across reads (or several frames in one read) are handled; each complete frame
body is decoded, its CRC checked and stripped, and, with a ``layout``, unpacked
into a dict of physical values.  A bad frame (malformed, CRC mismatch, wrong
size for the layout) is counted (``counters.crc_errors`` / ``frame_errors``)
and, under the default policy ``on_frame_error="drop"``, logged and dropped:
the stream resynchronises at the next delimiter.  With ``"raise"`` the
:class:`~hil.errors.CRCError` / :class:`~hil.errors.FrameError` is raised from
``read`` (the following frames stay buffered for the next ``read``).

Writing
-------
Every write is bounded (issue 22 item 7: a write to a stalled reader never returned and
burned CPU whatever ``write_timeout``): ``write()`` waits at most ``timeout`` (default
``write_timeout``; ``None`` means ``write_timeout`` too), on a file descriptor with
non-blocking writes and ``select`` (no spinning).  A reader that takes no bytes in that
time is a stalled link: :class:`~hil.errors.BackendTimeout` saying how much of the frame
went out (a cut frame shows up as a framing error at the reader), counted in ``stalls``.

Disconnects
-----------
A ``SerialException``/``OSError`` while reading or writing (a USB adapter
unplugged, the other end of a pty closed: Linux reports ``EIO``) means the
link is lost.  With ``reconnect=True`` (the default here) the port is closed
and reopened with exponential backoff (``backoff=(first, largest)`` seconds)
during subsequent reads and writes, a partial frame from before the loss is
dropped, and ``counters.disconnects`` / ``counters.reconnects`` count the
events (logged at WARNING on logger ``hil.serial``).  After
``reconnect_timeout`` seconds without success the backend faults and raises
:class:`~hil.errors.Disconnected`.

Limitations
-----------
* Bytes in flight when the link drops are lost; there is no retransmission
  (that is the protocol's job).
* The port is reopened under the same name: a device that comes back under
  another name (``/dev/ttyUSB1``) needs a stable path such as
  ``/dev/serial/by-id/...``.
* A CRC cannot be combined with :class:`~hil.serial.framing.LineFraming`
  (binary check bytes may contain the terminator).
* Changing the read timeout between calls costs a ``tcsetattr`` (pyserial
  reconfigures the port); the reader thread uses a constant poll period.
"""

from __future__ import annotations

import os
import select
import sys
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

from ..backend import DEFAULT, SKIP, Backend
from ..errors import BackendTimeout, FrameError, HILError, require
from .crc import Crc, get_crc
from .framing import Framing, Layout, LineFraming, make_framing

__all__ = ["SerialBackend", "SERIAL_OPTIONS"]

_POLICIES = ("drop", "raise")
#: Keywords of ``serial.serial_for_url`` that may go through ``**serial_options``.
SERIAL_OPTIONS = ("bytesize", "parity", "stopbits", "xonxoff", "rtscts", "dsrdtr",
                  "inter_byte_timeout", "exclusive")


def _import_pyserial() -> Any:
    return require("serial", who="serial backend", package="pyserial")


class SerialBackend(Backend):
    """A framed serial link through pyserial.

    Parameters
    ----------
    port : str
        Device path or pyserial URL (``loop://``, ``socket://host:port``).
    baudrate : int
        Line speed (a pty accepts and ignores it).
    framing : {"cobs", "slip", "lines"} or Framing
        How frames are delimited on the wire.
    crc : str, Crc or None
        Checksum appended to each payload, e.g. ``"crc16-ccitt-false"``,
        ``"crc16-modbus"``, ``"crc8"``, ``"crc32"`` (see :mod:`hil.serial.crc`).
    layout : Layout, optional
        Fixed binary record: ``write`` takes a mapping of physical values and
        ``read`` returns one.
    reconnect, reconnect_timeout, backoff, timeout, name
        See :class:`hil.backend.Backend`.
    write_timeout : float or None
        Default time a write may block on a full output buffer.
    on_frame_error : {"drop", "raise"}
        Policy for bad received frames (always counted).
    max_frame : int
        Largest frame body accepted by the deframer.
    **serial_options
        Passed to ``serial.serial_for_url``: one of :data:`SERIAL_OPTIONS`
        (``bytesize``, ``parity``, ``stopbits``, ``xonxoff``, ``rtscts``,
        ``dsrdtr``, ``inter_byte_timeout``, ``exclusive``).
    """

    kind = "serial"
    frame_key = None  # frames are bytes or records: no id for ``receive_batch(accept=...)``

    def __init__(self, port: str, baudrate: int = 115200, framing: str | Framing = "cobs",
                 crc: str | Crc | None = None, *, layout: Layout | None = None,
                 name: str | None = None, timeout: float | None = 1.0,
                 write_timeout: float | None = 1.0, reconnect: bool = True,
                 reconnect_timeout: float | None = 10.0,
                 backoff: tuple[float, float] = (0.01, 0.5), on_frame_error: str = "drop",
                 max_frame: int = 4096, **serial_options: Any) -> None:
        super().__init__(name=name, timeout=timeout, reconnect=reconnect,
                         reconnect_timeout=reconnect_timeout, backoff=backoff)
        if on_frame_error not in _POLICIES:
            raise ValueError(f"serial {port!r}: on_frame_error must be one of {_POLICIES}, got "
                             f"{on_frame_error!r}")
        if not isinstance(baudrate, int) or baudrate <= 0:
            raise ValueError(f"serial {port!r}: baudrate must be a positive int, got {baudrate!r}")
        unknown = sorted(set(serial_options) - set(SERIAL_OPTIONS))
        if unknown:
            raise TypeError(f"serial {port!r}: unknown option(s) {unknown}; SerialBackend takes "
                            f"port, baudrate, framing, crc, layout, name, timeout, "
                            f"write_timeout, reconnect, reconnect_timeout, backoff, "
                            f"on_frame_error, max_frame and the pyserial options "
                            f"{', '.join(SERIAL_OPTIONS)}")
        self.port = port
        self.baudrate = baudrate
        self.framing = make_framing(framing)
        self.framing.max_frame = max_frame
        self.crc = get_crc(crc)
        if self.crc is not None and isinstance(self.framing, LineFraming):
            raise ValueError(f"serial {port!r}: a binary CRC cannot ride on line framing (the "
                             f"check bytes may contain the terminator); use framing='cobs' or "
                             f"'slip', or put a text checksum in the line")
        self.layout = layout
        self.write_timeout = write_timeout
        self.on_frame_error = on_frame_error
        self.serial_options = serial_options
        if write_timeout is None or not write_timeout >= 0:
            raise ValueError(f"serial {port!r}: write_timeout must be a number of seconds >= 0 "
                             f"(every write is bounded: a stalled reader must not hang the "
                             f"frame), got {write_timeout!r}")
        #: writes that hit write_timeout (a stalled reader)
        self.stalls = 0
        self._port: Any = None
        self._port_timeout: Any = object()  # forces the first assignment
        self._port_write_timeout: Any = object()
        self._bodies: deque[bytes | FrameError] = deque()

    # ---------------------------------------------------------------- driver
    @property
    def channel(self) -> str:
        return self.port

    @property
    def serial(self) -> Any:
        """The underlying ``serial.Serial`` object (None while closed)."""
        return self._port

    def _open(self) -> None:
        serial = _import_pyserial()
        port = serial.serial_for_url(self.port, baudrate=self.baudrate, timeout=self.timeout,
                                     write_timeout=self.write_timeout, **self.serial_options)
        self._port = port
        self._port_timeout = self.timeout
        self._port_write_timeout = self.write_timeout
        self.framing.reset()  # (also on a reconnect: a partial frame from before the loss
        self._bodies.clear()  # would corrupt the next one)

    def _close(self) -> None:
        port, self._port = self._port, None
        if port is not None:
            port.close()

    def _cancel_read(self) -> None:
        port = self._port
        if port is not None and hasattr(port, "cancel_read"):
            port.cancel_read()

    def _translate(self, exc: BaseException, op: str) -> HILError:
        if isinstance(exc, HILError):
            return exc
        mod = sys.modules.get("serial")
        timeout_cls = getattr(mod, "SerialTimeoutException", None)
        if timeout_cls is not None and isinstance(exc, timeout_cls):
            return BackendTimeout(f"{self.where}: {op} timed out ({exc}); the device does not "
                                  f"drain its input (flow control? rtscts={self.serial_options.get('rtscts', False)}) "  # noqa: E501
                                  f"or write_timeout={self.write_timeout} s is too short")
        err = super()._translate(exc, op)
        if op == "open":
            return type(err)(f"{err}; serial ports here: {self._list_ports()}")
        return err

    @staticmethod
    def _list_ports() -> str:
        try:
            from serial.tools.list_ports import comports
            names = sorted(p.device for p in comports())
        except Exception:  # noqa: BLE001 - only a hint
            return "(cannot list)"
        if not names:
            return "none found (a pty or loop:// URL still works)"
        return ", ".join(names[:10]) + (" ..." if len(names) > 10 else "")

    # ----------------------------------------------------------------- bytes
    def _read_bytes(self, timeout: float | None) -> bytes:
        port = self._port
        if port is None:
            raise OSError("port closed")
        if timeout != self._port_timeout:
            port.timeout = timeout
            self._port_timeout = timeout
        n = port.in_waiting
        if n:
            return port.read(n)
        data = port.read(1)  # blocks up to the timeout
        if data:
            n = port.in_waiting
            if n:
                data += port.read(n)
        return data

    def _read_internal(self, timeout: float | None) -> Any | None:
        if not self._bodies:
            port = self._port
            try:
                data = self._read_bytes(timeout)
            except Exception:
                if self._port is not port:  # closed/reopened by another thread meanwhile
                    return None
                raise
            if not data:
                return None
            self.counters.add("bytes_in", n=len(data))
            self._bodies.extend(self.framing.feed(data))
            if not self._bodies:
                return None  # a partial frame: the base calls again with the time left
        item = self._bodies.popleft()
        try:
            if isinstance(item, FrameError):
                raise item
            return self._decode(item)
        except FrameError as err:
            if self.where not in str(err):
                err.args = (f"{self.where}: {err}",) + err.args[1:]
            self.link.bad_frame(err, self.on_frame_error)
            return SKIP  # dropped: the frames behind it may be waiting (issue 36)

    def _decode(self, body: bytes) -> Any:
        payload = self.framing.decode(body)
        if self.crc is not None:
            payload = self.crc.verify(payload)
        if self.layout is not None:
            payload = self.layout.unpack(payload)
        return payload

    def _encode_frame(self, frame: Any) -> bytes:
        return self.encode(frame)

    def encode(self, frame: Any) -> bytes:
        """Wire bytes for one frame: layout pack, CRC append, framing encode."""
        if self.layout is not None:
            if not isinstance(frame, Mapping):
                raise TypeError(f"{self.where}: with a layout, write() takes a mapping of "
                                f"{list(self.layout.names)}, got {type(frame).__name__}")
            frame = self.layout.pack(frame)
        if self.crc is not None:
            frame = self.crc.append(frame)
        return self.framing.encode(frame)

    def write(self, frame: Any, timeout: float | None = DEFAULT) -> None:
        """Send one frame within ``timeout`` (default ``write_timeout``; ``None`` is
        ``write_timeout`` too: every write is bounded).  A reader that does not take the
        bytes in time is a stalled link: :class:`~hil.errors.BackendTimeout` saying how much
        of the frame went out (module docstring)."""
        if timeout is DEFAULT or timeout is None:
            timeout = self.write_timeout
        super().write(frame, timeout)

    def _write(self, wire: bytes, timeout: float | None) -> None:
        port = self._port
        if port is None:
            raise OSError("port closed")
        fd = getattr(port, "fd", None)
        if not isinstance(fd, int):  # loop://, socket://: pyserial's own bounded write
            if timeout != self._port_write_timeout:
                port.write_timeout = timeout
                self._port_write_timeout = timeout
            port.write(wire)
            self.counters.add("bytes_out", n=len(wire))
            return
        self._write_fd(fd, wire, self.write_timeout if timeout is None else timeout)

    def _write_fd(self, fd: int, wire: bytes, timeout: float) -> None:
        """Non-blocking writes, waiting with ``select`` (never spinning) until ``timeout``."""
        view = memoryview(wire)
        sent = 0
        end = time.monotonic() + max(0.0, timeout)
        while sent < len(view):
            try:
                sent += os.write(fd, view[sent:])
                continue
            except BlockingIOError:
                pass
            left = end - time.monotonic()
            if left <= 0:
                self.stalls += 1
                self.counters.add("bytes_out", n=sent)
                cut = (f"{sent} of {len(view)} bytes of this frame went out: the frame is cut, "
                       "the reader will see a framing error" if sent else "nothing went out")
                raise BackendTimeout(
                    f"{self.where}: write stalled: the reader took no bytes for {timeout:.3g} s "
                    f"(the output buffer is full; {cut}); the device stopped reading, flow "
                    f"control holds it (rtscts={self.serial_options.get('rtscts', False)}), or "
                    "the baud rate is too low for the traffic")
            # a pty may report writable while full: wait at least a little, never spin
            _, w, _ = select.select([], [fd], [], min(left, 0.005))
            if w:
                time.sleep(min(left, 0.0005))
        self.counters.add("bytes_out", n=sent)

    def write_raw(self, data: bytes) -> None:
        """Send bytes as they are (no framing, no CRC), e.g. to inject faults."""
        self.link.require_usable("write_raw")
        port = self._port
        if port is None:
            raise self._translate(OSError("link down"), "write_raw")
        port.write(data)
        self.counters.add("bytes_out", n=len(data))
