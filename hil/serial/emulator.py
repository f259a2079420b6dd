"""A serial device emulator on a pty pair, with an explicit baud-rate model.

:class:`DeviceEmulator` is the device end of a pseudo-terminal pair made with
:func:`os.openpty`; the host end is a real tty that pyserial opens by path
(through a stable symlink, :attr:`DeviceEmulator.port`, that survives
re-plugging).  So a :class:`~hil.serial.backend.SerialBackend` under test runs
its real code path: termios, ``select``, ``read``/``write`` and the errors of a
vanishing device.

Baud-rate model
---------------
A pty moves bytes in about 0.1 ms whatever baud rate is set (measured in
``shared/research/anchors-hil-fmi.md`` A2: a 16-byte echo takes 82-151 us on a
pty against 2.78 ms on a 115200-baud wire).  The emulator therefore models the
wire itself, in both directions, with ``bits_per_byte`` (10 for 8N1: start, 8
data, stop) and ``baudrate``:

* device -> host: a frame of N bytes queued at ``t`` occupies the wire from
  ``t0 = max(t, wire free)``; byte k is delivered no earlier than
  ``t0 + (k + 1) * bits_per_byte / baudrate``.  Bytes are released in chunks
  of about ``chunk_time`` (1 ms) so the thread does not wake per byte.
* host -> device: bytes read from the pty at ``t`` are taken as received at
  ``max(t, wire free) + N * bits_per_byte / baudrate``; the device sees a
  frame only when its last byte has "arrived".

Deadlines are absolute (no accumulated drift) and never early; scheduling
makes them late by the usual CPython sleep latency (p50 ~0.1 ms here).
``baudrate=None`` turns the model off (pty speed).

Devices
-------
``device(payload) -> response`` is called in the emulator's receive thread for
every good frame; the response may be ``None``, one frame, or a list of frames.
The default echoes.  :meth:`DeviceEmulator.send` sends unsolicited frames
(telemetry), :meth:`DeviceEmulator.send_raw` arbitrary bytes (corrupted frames,
noise).  :meth:`DeviceEmulator.unplug` / :meth:`plug` / :meth:`replug` close
the pty and open a new one behind the same symlink, like a USB adapter pulled
and put back.

:class:`EmulatedSerialBackend` (registry name ``"serial-emulator"``) is the
virtual twin of the serial backend: a :class:`SerialBackend` that starts its
own emulator on ``open()`` and stops it on ``close()``.

Limitations
-----------
* POSIX only (``os.openpty``, ``termios``).
* Only the byte timing is modelled: no parity/framing errors, no
  break/modem lines, no inter-character gaps inside a burst.  Line noise is
  injected explicitly with :meth:`DeviceEmulator.send_raw`.
* The host's writes are not throttled: a pty accepts them at once (as a UART
  driver with a kernel buffer mostly does); only their arrival at the device
  is delayed.
* Timing is as good as the thread scheduling: under load deliveries are late,
  never early.
"""

from __future__ import annotations

import logging
import os
import queue
import select
import shutil
import tempfile
import threading
import time
import tty
from collections.abc import Callable, Mapping
from typing import Any

from ..backend import Counters, ErrorSink, WorkerThread
from ..errors import BackendError, CRCError, FrameError
from .backend import SerialBackend
from .crc import Crc, get_crc
from .framing import Framing, Layout, make_framing

__all__ = ["DeviceEmulator", "EmulatedSerialBackend", "echo"]

log = logging.getLogger("hil.serial.emulator")


def echo(payload: Any) -> Any:
    """The default device: answer every frame with itself."""
    return payload


class DeviceEmulator:
    """The device side of a pty pair (see the module docstring).

    Parameters
    ----------
    device : callable, optional
        ``device(payload) -> None | frame | list of frames``; default :func:`echo`.
    framing, crc, layout
        As for :class:`~hil.serial.backend.SerialBackend` (both ends must agree).
    baudrate : float or None
        Modelled line speed in bit/s; ``None``: no wire model.
    bits_per_byte : int
        Bits on the wire per byte: 10 for 8N1, 11 for 8E1 or 8N2.
    chunk_time : float
        Granularity of the transmit pacing in seconds.
    name : str
        For messages and thread names.
    """

    def __init__(self, device: Callable[[Any], Any] | None = None, *,
                 framing: str | Framing = "cobs", crc: str | Crc | None = None,
                 layout: Layout | None = None, baudrate: float | None = 115200,
                 bits_per_byte: int = 10, chunk_time: float = 0.001,
                 name: str = "device") -> None:
        if baudrate is not None and baudrate <= 0:
            raise ValueError(f"emulator {name!r}: baudrate must be > 0 or None, got {baudrate}")
        if bits_per_byte < 1:
            raise ValueError(f"emulator {name!r}: bits_per_byte must be >= 1")
        self.device = device or echo
        self.framing = make_framing(framing)
        self.crc = get_crc(crc)
        self.layout = layout
        self.baudrate = baudrate
        self.bits_per_byte = bits_per_byte
        self.chunk_time = chunk_time
        self.name = name
        self.counters = Counters()
        self.errors = ErrorSink()
        self.received: list[Any] = []
        self.lost_bytes = 0  # bytes sent while unplugged
        self._cond = threading.Condition()
        self._lock = threading.Lock()  # guards the fds and the generation
        self._master: int | None = None
        self._slave: int | None = None
        self._gen = 0
        self._dir: str | None = None
        self._link: str | None = None
        self._txq: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._tx_free = 0.0
        self._rx_free = 0.0
        self._wake_r, self._wake_w = -1, -1
        self._threads: list[WorkerThread] = []
        self._stop = threading.Event()

    # ---------------------------------------------------------------- timing
    @property
    def byte_time(self) -> float:
        """Seconds per byte on the wire (0 without a baud-rate model)."""
        return 0.0 if self.baudrate is None else self.bits_per_byte / self.baudrate

    def wire_time(self, nbytes: int) -> float:
        """Seconds ``nbytes`` take on the modelled wire."""
        return nbytes * self.byte_time

    def _sleep_until(self, t: float) -> None:
        while True:
            d = t - time.perf_counter()
            if d <= 0 or self._stop.wait(d):
                return

    # ------------------------------------------------------------- lifecycle
    @property
    def port(self) -> str:
        """Path the host opens (a symlink to the current pty; stable across replug)."""
        if self._link is None:
            raise BackendError(f"emulator {self.name!r}: not started; call start() first")
        return self._link

    @property
    def plugged(self) -> bool:
        return self._master is not None

    def start(self) -> DeviceEmulator:
        if self._threads:
            return self
        self._stop.clear()
        self._dir = tempfile.mkdtemp(prefix="cosim-pty-")
        self._link = os.path.join(self._dir, "tty")
        self._wake_r, self._wake_w = os.pipe()
        self.plug()
        self._threads = [WorkerThread(f"emu-{self.name}-rx", self._rx_step, self.errors),
                         WorkerThread(f"emu-{self.name}-tx", self._tx_step, self.errors)]
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> None:
        if not self._threads:
            return
        self._stop.set()
        for t in self._threads:
            t.stop_event.set()
        self._wake()
        for t in self._threads:
            t.stop(timeout=2.0)
        self._threads = []
        self.unplug()
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
        self._dir = None

    def __enter__(self) -> DeviceEmulator:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def check(self) -> None:
        """Re-raise the first exception of the emulator's threads (e.g. a device bug)."""
        self.errors.check()

    def plug(self) -> None:
        """Create a new pty pair and point :attr:`port` at it."""
        if self._link is None:
            raise BackendError(f"emulator {self.name!r}: plug() before start()")
        with self._lock:
            if self._master is not None:
                return
            master, slave = os.openpty()
            tty.setraw(slave)  # no echo, no line editing, 8-bit clean
            os.set_blocking(master, False)
            tmp = self._link + ".new"
            if os.path.lexists(tmp):
                os.unlink(tmp)
            os.symlink(os.ttyname(slave), tmp)
            os.replace(tmp, self._link)
            self._master, self._slave = master, slave
            self._gen += 1
            self.framing.reset()
        self._wake()
        log.info("emulator %r: plugged in at %s -> %s", self.name, self._link,
                 os.ttyname(slave))

    def unplug(self) -> None:
        """Close the pty (the host sees EIO) and remove :attr:`port`."""
        with self._lock:
            if self._master is None:
                return
            master, slave = self._master, self._slave
            self._master = self._slave = None
            self._gen += 1
            os.close(master)
            if self._link is not None and os.path.lexists(self._link):
                os.unlink(self._link)
        # The receive thread's select() holds a reference to the master until it
        # returns, which delays the hangup: wake it, then wait (on our own slave fd)
        # until the hangup is visible, so the host sees the loss when we return.
        self._wake()
        hup = select.poll()
        hup.register(slave, select.POLLHUP)
        hup.poll(500)
        os.close(slave)
        log.info("emulator %r: unplugged", self.name)

    def replug(self, down_time: float = 0.05) -> None:
        """Unplug, wait ``down_time`` seconds, plug in again (a new pty)."""
        self.unplug()
        time.sleep(down_time)
        self.plug()

    def _wake(self) -> None:
        if self._wake_w >= 0:
            try:
                os.write(self._wake_w, b"!")
            except OSError:
                pass

    # --------------------------------------------------------------- sending
    def encode(self, frame: Any) -> bytes:
        """Wire bytes of one frame: layout pack, CRC append, framing encode."""
        if self.layout is not None and isinstance(frame, Mapping):
            frame = self.layout.pack(frame)
        if self.crc is not None:
            frame = self.crc.append(frame)
        return self.framing.encode(frame)

    def send(self, frame: Any) -> bytes:
        """Queue one frame for transmission (paced by the wire model); return its bytes."""
        wire = self.encode(frame)
        self._txq.put(wire)
        self._count("frames_out")
        return wire

    def send_raw(self, data: bytes) -> None:
        """Queue raw bytes (no framing, no CRC): noise, corrupted frames."""
        self._txq.put(bytes(data))

    def _count(self, *fields: str, n: int = 1) -> None:
        with self._cond:
            for f in fields:
                setattr(self.counters, f, getattr(self.counters, f) + n)

    def _tx_step(self) -> None:
        try:
            data = self._txq.get(timeout=0.05)
        except queue.Empty:
            return
        bt = self.byte_time
        t0 = max(time.perf_counter(), self._tx_free)
        per = max(1, int(self.chunk_time / bt)) if bt else len(data)
        i, n, gen = 0, len(data), self._gen
        while i < n and not self._stop.is_set():
            k = min(per, n - i)
            if bt:
                self._sleep_until(t0 + (i + k) * bt)  # the chunk's last stop bit
            self._write_master(data[i:i + k], gen)
            i += k
        self._tx_free = t0 + n * bt

    def _write_master(self, chunk: bytes, gen: int) -> None:
        view = memoryview(chunk)
        while view and not self._stop.is_set():
            with self._lock:
                fd = self._master
                if fd is None or gen != self._gen:  # unplugged (mid-frame: the rest is cut)
                    self.lost_bytes += len(view)
                    return
                try:
                    k = os.write(fd, view)
                except BlockingIOError:
                    k = 0  # the host does not read: pty buffer full
            if k:
                self._count("bytes_out", n=k)
                view = view[k:]
            else:
                self._stop.wait(0.001)

    # ------------------------------------------------------------- receiving
    def _rx_step(self) -> None:
        with self._lock:
            fd, gen = self._master, self._gen
        if fd is None:
            self._stop.wait(0.005)
            return
        try:
            ready, _, _ = select.select([fd, self._wake_r], [], [], 0.05)
        except (OSError, ValueError):
            return  # fd closed by unplug() between the lock and select: next round
        if self._wake_r in ready:
            os.read(self._wake_r, 512)
        if fd not in ready:
            return
        with self._lock:
            if gen != self._gen:
                return
            try:
                data = os.read(fd, 4096)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # EIO: no host end open; wait for one
                data = b""
        if not data:
            self._stop.wait(0.005)
            return
        self._count("bytes_in", n=len(data))
        bt = self.byte_time
        t0 = max(time.perf_counter(), self._rx_free)
        self._rx_free = t0 + len(data) * bt
        delim, start = self.framing.delimiter, 0
        while start < len(data):  # hand over frame by frame, each when its last byte is in
            j = data.find(delim, start)
            end = len(data) if j < 0 else j + len(delim)
            if bt:
                self._sleep_until(t0 + end * bt)
            for item in self.framing.feed(data[start:end]):
                self._handle(item)
            start = end

    def _handle(self, item: bytes | FrameError) -> None:
        try:
            if isinstance(item, FrameError):
                raise item
            payload = self.framing.decode(item)
            if self.crc is not None:
                payload = self.crc.verify(payload, f"emulator {self.name!r}")
            if self.layout is not None:
                payload = self.layout.unpack(payload)
        except FrameError as err:
            self._count("errors", "crc_errors" if isinstance(err, CRCError) else "frame_errors")
            log.warning("emulator %r: bad frame from the host dropped: %s", self.name, err)
            return
        with self._cond:
            self.received.append(payload)
            self.counters.frames_in += 1
            self._cond.notify_all()
        response = self.device(payload)  # a device bug ends the thread and goes to check()
        if response is None:
            return
        for frame in response if isinstance(response, list | tuple) else (response,):
            self.send(frame)

    def wait_received(self, n: int, timeout: float = 2.0) -> bool:
        """Block until the device has received ``n`` good frames in total."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self.received) >= n, timeout)


class EmulatedSerialBackend(SerialBackend):
    """Virtual twin of :class:`SerialBackend`: the same backend on a pty whose
    other end is a :class:`DeviceEmulator` it owns (started by ``open()``,
    stopped by ``close()``; reachable as :attr:`emulator` for fault injection).

    Parameters
    ----------
    device : callable, optional
        The emulated device (default: echo).
    baudrate : int
        Line speed, modelled by the emulator unless ``model_baudrate=False``.
    framing, crc, layout, **options
        As for :class:`SerialBackend` (the emulator uses the same framing, CRC
        and layout).
    bits_per_byte, chunk_time
        Passed to the emulator.
    """

    kind = "serial-emulator"

    def __init__(self, device: Callable[[Any], Any] | None = None, baudrate: int = 115200,
                 framing: str | Framing = "cobs", crc: str | Crc | None = None, *,
                 layout: Layout | None = None, model_baudrate: bool = True,
                 bits_per_byte: int = 10, chunk_time: float = 0.001,
                 **options: Any) -> None:
        super().__init__("(emulator not started)", baudrate, framing, crc, layout=layout,
                         **options)
        self.emulator = DeviceEmulator(device, framing=framing, crc=crc, layout=layout,
                                       baudrate=baudrate if model_baudrate else None,
                                       bits_per_byte=bits_per_byte, chunk_time=chunk_time,
                                       name=self.name or "device")

    def open(self) -> EmulatedSerialBackend:
        self.emulator.start()
        self.port = self.emulator.port
        try:
            super().open()
        except BaseException:
            self.emulator.stop()
            raise
        return self

    def close(self) -> None:
        super().close()
        self.emulator.stop()

    def check(self) -> None:
        """Re-raise a background error of the reader thread or of the emulator."""
        super().check()
        self.emulator.check()
