"""A software CAN bus of SLCAN (Lawicel ASCII) adapters on ptys.

:class:`SlcanHub` creates ``n_ports`` pseudo-terminal pairs.  The slave end of
each is a real tty (:attr:`SlcanHub.ports`) that a client opens exactly as it
would open a USB-serial CAN adapter, e.g. with python-can's own ``slcan``
interface::

    with SlcanHub(2) as hub:
        ecu = can.Bus(interface="slcan", channel=hub.ports[0], bitrate=500000,
                      sleep_after_open=0)
        plant = can.Bus(interface="slcan", channel=hub.ports[1], bitrate=500000,
                        sleep_after_open=0)

One hub thread sits on the master ends: it emulates one SLCAN adapter per pty
(:class:`~hil.can.slcan_adapter.SlcanAdapter`: its state and command interpreter)
and joins the adapters into one CAN bus.  A frame transmitted through one
adapter is received by every *other* adapter that is open (a CAN controller
does not receive its own frames).  The clients may live in different
processes: that is what the hub is for (an ECU process against a plant over
"slcan", no hardware, no socat, no vcan).

(python-can's ``slcan`` sleeps ``sleep_after_open`` = 2 s after opening the
port, for USB adapters that reset; pass ``sleep_after_open=0`` for the hub.)

Commands (one line each, terminated by ``\\r``; ``\\a`` is BELL = error)
----------------------------------------------------------------------

=================  ===========================================  ===================
command            meaning                                      reply
=================  ===========================================  ===================
``S0``..``S9``     nominal bitrate 10k 20k 50k 100k 125k 250k   ``\\r``; ``\\a`` if
                   500k 750k 1M 83.3k (python-can's table)      the port is open
``sXXYY``          bitrate from SJA1000 BTR0/BTR1 at 8 MHz      as ``S``
``Y1``..``Y8``     CAN FD data bitrate in Mbit/s (CANable 2)    as ``S``
``O``              open (normal mode)                           ``\\r``
``L``              open listen-only: receives, cannot transmit  ``\\r``
``C``              close                                        ``\\r``
``V``              hardware/software version                    ``V1013\\r``
``v``              firmware version (detail)                    ``vSTM32\\r``
``N``              serial number of port ``k``                  ``NHUB<k>\\r``
``F``              status flags (bit 3: RX overrun), then clear ``F<hex2>\\r``
``Z0`` / ``Z1``    timestamps off/on: with ``Z1`` every frame   ``\\r``
                   delivered to this port carries 4 hex digits
                   of milliseconds (0..59999, wraps), Lawicel
``M``/``m`` XXXX   acceptance code/mask (ignored: no filters)   ``\\r``
``X``/``W``/``Q``  auto-poll, filter mode, auto-start (ignored) ``\\r``
``U``n             UART baud rate (ignored: a pty has none)     ``\\r``
``tIIILDD..``      standard data frame, DLC 0..8                ``z\\r``
``TIIIIIIIILDD..`` extended data frame                          ``Z\\r``
``rIIIL``          standard remote frame                        ``z\\r``
``RIIIIIIIIL``     extended remote frame                        ``Z\\r``
``d``/``b``        CAN FD standard frame, without/with bitrate  ``z\\r``
                   switch; DLC is one hex digit 0..F (0..64 B)
``D``/``B``        CAN FD extended frame, without/with BRS      ``Z\\r``
(empty line)       ignored (python-can sends one when it sets   (nothing)
                   no FD data bitrate)
anything else      unknown/malformed                            ``\\a``
=================  ===========================================  ===================

A frame command is refused with ``\\a`` when the port is closed or
listen-only, or when it is malformed (non-hex digits, id out of range, DLC
out of range, wrong length).  The hub delivers frames in a normalised form
(upper-case hex), so the receiver parses exactly what the sender meant.
python-can's ``slcan`` sends all of ``t T r R d D b B`` (FD with
``BitTimingFd`` / ``is_fd=True``) and parses all of them on receive; it never
waits for the ``z``/``Z`` acks (it reads them as lines that are no frame).
``O``/``L``/``C`` are idempotent (python-can sends ``C`` before configuring a
closed port and ``O`` twice); an ``open -> closed`` transition discards what
the port still had buffered for its client (the RX FIFO of a real adapter, and
the pty's input queue), so a client that died without closing does not leave
stale frames to the next one.

Bus model
---------
``bitrate_model=False`` (default): a frame is delivered to the other ports as
soon as the hub has read its line, in the order read; no timing is modelled
(a pty moves a line in ~0.1 ms).

``bitrate_model=True``: the hub models the wire.  Each port has a transmit
FIFO; the bus carries one frame at a time.  When the bus falls idle, the
heads of the FIFOs that are waiting compete and the lowest arbitration field
wins (standard before extended with the same 11-bit base id, data before
remote), as CAN arbitration does; the frame occupies the bus for
``frame_time`` and is delivered to the receivers when it ends (absolute
deadlines, no drift; the ``select`` timeout is the time to the end of the
frame on the wire).  The frame's bits are counted exactly on its real bit pattern
(:mod:`hil.can.slcan_frame`: stuff bits, CRC, CAN FD with bitrate switch; the
sample-point position of the switch is ignored).  The frame time uses the
sender's bitrates.  Delivery is late by the thread's scheduling latency
(under load), never early.

A receiver whose nominal bitrate differs from the sender's by more than 1%
does not get the frame (on a wire it would see garbage), it counts an error;
``check_bitrate=False`` turns this off.

Fault hooks
-----------
:meth:`SlcanHub.drop_next` drops the next ``n`` frames on the bus (nobody
receives them; :attr:`SlcanHub.dropped` counts them).
:meth:`SlcanHub.disconnect` closes port ``k``'s master side like a USB adapter
pulled out: the client's tty hangs up.  python-can 4.6.1's ``slcan`` then
raises ``can.CanOperationError`` (a ``can.CanError``) from ``recv()``
("Could not read from serial device", caused by ``OSError(5, 'Input/output
error')``), from ``send()`` ("Could not write to serial device", caused by
pyserial's ``SerialException('write failed: [Errno 5] Input/output error')``)
and from ``shutdown()`` (its ``C`` cannot be written; the serial port is left
open, so catch it and let the process exit).  A disconnected port stays dead
until the hub is restarted.

Limitations
-----------
* No error frames, no error counters, no error-passive/bus-off; ``F`` only
  reports the RX overrun flag.  No ACK check: a frame sent while no other port
  is open is "transmitted" to nobody (a real controller would retry for ever
  and go error-passive).
* No acceptance filters (``M``/``m``/``W`` are accepted and ignored), no
  polling mode (``P``/``A`` answer BELL: auto-poll is always on).
* Arbitration (lowest id first) is modelled only with ``bitrate_model=True``;
  without it frames go out in the order the hub reads them.
* Frames accepted for transmission are sent even if the port is closed
  afterwards (a real adapter may abort them).
* What the hub has to deliver to a port whose client does not read is
  buffered (pty buffer plus ``max_buffer`` bytes); beyond that the frames are
  dropped for that port (``counters[k].dropped``, overrun flag in ``F``).
* The hub keeps every slave fd open itself, so it cannot see a client
  closing the tty; a client that dies without ``C`` leaves its port open.
* POSIX only (``os.openpty``, ``termios``).
"""

from __future__ import annotations

import logging
import os
import select
import threading
import time
import tty
from collections import deque
from collections.abc import Callable
from typing import Any

from ..counters import Counters
from ..errors import BackendError
from ..threads import ErrorSink, WorkerThread
from .slcan_adapter import SlcanAdapter
from .slcan_frame import BITRATES, Frame, frame_bits, frame_time, parse_frame

__all__ = ["SlcanHub", "Frame", "parse_frame", "frame_bits", "frame_time", "BITRATES"]

log = logging.getLogger("hil.can.slcan_hub")

_OK = b"\r"


class _Bus:
    """The wire model of ``bitrate_model=True``: per-port FIFOs, arbitration by
    priority when the bus falls idle, one frame at a time.  Pure (no I/O, the
    time is passed in) so it can be tested on its own."""

    def __init__(self) -> None:
        self.queues: dict[int, deque[tuple[float, int, Frame, float]]] = {}
        self.current: tuple[float, int, Frame] | None = None  # (end, src, frame)
        self.free_at = 0.0
        self._seq = 0

    def submit(self, t: float, src: int, frame: Frame, duration: float) -> None:
        self._seq += 1
        self.queues.setdefault(src, deque()).append((t, self._seq, frame, duration))

    def pending(self) -> int:
        return sum(len(q) for q in self.queues.values()) + (self.current is not None)

    def next_deadline(self) -> float | None:
        return None if self.current is None else self.current[0]

    def due(self, now: float) -> list[tuple[int, Frame]]:
        """Advance to ``now``: the frames whose transmission ended, in bus order."""
        out: list[tuple[int, Frame]] = []
        while True:
            if self.current is not None:
                end, src, frame = self.current
                if now < end:
                    return out
                out.append((src, frame))
                self.current, self.free_at = None, end
            heads = [(src, q[0]) for src, q in self.queues.items() if q]
            if not heads:
                return out
            start = max(self.free_at, min(h[0] for _, h in heads))
            cands = [(h[2].priority, h[1], src) for src, h in heads if h[0] <= start]
            _, _, src = min(cands)
            _, _, frame, duration = self.queues[src].popleft()
            self.current = (start + duration, src, frame)


# -------------------------------------------------------------------- hub
class SlcanHub:
    """A CAN bus of emulated SLCAN adapters, one per pty (see the module docstring).

    Parameters
    ----------
    n_ports : int
        Number of adapters (ptys), at least 1.
    bitrate_model : bool
        Model the frame time on the wire, one frame at a time, arbitration.
    name : str
        For messages and the thread name.
    default_bitrate : int
        Nominal bitrate of a port before any ``S``/``s`` command.
    default_data_bitrate : int
        CAN FD data bitrate before any ``Y`` command.
    check_bitrate : bool
        Do not deliver to ports whose nominal bitrate differs from the sender's.
    max_buffer : int
        Bytes the hub buffers per port beyond the pty's own buffer while the
        client does not read; frames beyond are dropped (overrun).
    """

    VERSION = SlcanAdapter.VERSION
    DETAIL = SlcanAdapter.DETAIL

    def __init__(self, n_ports: int = 2, *, bitrate_model: bool = False,
                 name: str = "slcan-hub", default_bitrate: int = 500_000,
                 default_data_bitrate: int = 2_000_000, check_bitrate: bool = True,
                 max_buffer: int = 256 * 1024) -> None:
        if n_ports < 1:
            raise ValueError(f"slcan hub {name!r}: n_ports must be >= 1, got {n_ports}")
        self.n_ports = n_ports
        self.bitrate_model = bitrate_model
        self.name = name
        self.default_bitrate = default_bitrate
        self.default_data_bitrate = default_data_bitrate
        self.check_bitrate = check_bitrate
        self.max_buffer = max_buffer
        self.errors = ErrorSink()
        self.dropped = 0  # frames dropped by drop_next()
        self.frames = 0  # frames that went over the bus (delivered or dropped)
        self._ports: list[SlcanAdapter] = []
        self._bus = _Bus()
        self._cond = threading.Condition()
        self._drop = 0
        self._calls: deque[tuple[Callable[[], Any], threading.Event]] = deque()
        self._wake_r, self._wake_w = -1, -1
        self._thread: WorkerThread | None = None

    # ------------------------------------------------------------- lifecycle
    def start(self) -> SlcanHub:
        if self._thread is not None:
            return self
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._bus = _Bus()
        self._ports = []
        for k in range(self.n_ports):
            master, slave = os.openpty()
            tty.setraw(slave)  # no echo, no line discipline: '\r' stays '\r'
            os.set_blocking(master, False)
            self._ports.append(SlcanAdapter(k, master, slave, os.ttyname(slave),
                                            self.default_bitrate, self.default_data_bitrate,
                                            cond=self._cond, send=self._send, hub=self.name))
        self._thread = WorkerThread(f"{self.name}", self._step, self.errors)
        self._thread.start()
        log.info("slcan hub %r: %d ports %s", self.name, self.n_ports, self.ports)
        return self

    def stop(self) -> None:
        if self._thread is None:
            return
        self._thread.stop_event.set()
        self._wake()
        self._thread.stop(timeout=2.0)
        self._thread = None
        for p in self._ports:
            for fd in (p.master, p.slave):
                if fd >= 0:
                    os.close(fd)
            p.master = p.slave = -1
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        self._wake_r = self._wake_w = -1
        with self._cond:
            self._cond.notify_all()

    def __enter__(self) -> SlcanHub:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def check(self) -> None:
        """Re-raise the first exception of the hub thread."""
        self.errors.check()

    @property
    def running(self) -> bool:
        return self._thread is not None

    @property
    def ports(self) -> list[str]:
        """Device paths (``/dev/pts/N``) the clients open, one per adapter."""
        if not self._ports:
            raise BackendError(f"slcan hub {self.name!r}: not started; call start() first")
        return [p.path for p in self._ports]

    @property
    def counters(self) -> list[Counters]:
        """Per port: ``frames_in`` sent by the client onto the bus, ``frames_out``
        delivered to it, ``errors`` (BELLs and bitrate mismatches),
        ``frame_errors`` (malformed frame commands), ``dropped`` (overrun)."""
        return [p.counters for p in self._ports]

    def state(self, k: int) -> dict[str, Any]:
        """Adapter state of port ``k`` (open, listen_only, bitrate, ...)."""
        return self._ports[k].state()

    def wait_open(self, k: int, timeout: float = 5.0) -> bool:
        """Block until port ``k``'s client has opened the adapter (``O`` or ``L``)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._ports[k].is_open, timeout)

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Block until nothing is waiting for the bus or for a client's pty."""
        with self._cond:
            return self._cond.wait_for(
                lambda: not self._bus.pending() and not any(p.out for p in self._ports),
                timeout)

    # ----------------------------------------------------------- fault hooks
    def drop_next(self, n: int = 1) -> None:
        """Drop the next ``n`` frames on the bus (no port receives them)."""
        with self._cond:
            self._drop += n

    def disconnect(self, k: int, timeout: float = 2.0) -> None:
        """Close port ``k``'s master side: its client's tty hangs up (EIO)."""
        self._call(lambda: self._disconnect(k), timeout)

    def _disconnect(self, k: int) -> None:
        p = self._ports[k]
        if p.disconnected:
            return
        p.disconnected, p.is_open = True, False
        p.out.clear()
        os.close(p.master)
        p.master = -1
        # Wait (on our own slave fd) until the hangup is visible to the client.
        hup = select.poll()
        hup.register(p.slave, select.POLLHUP)
        hup.poll(500)
        os.close(p.slave)
        p.slave = -1
        p.counters.disconnects += 1
        log.info("slcan hub %r: port %d disconnected", self.name, k)

    def _call(self, fn: Callable[[], Any], timeout: float) -> None:
        if self._thread is None or not self._thread.is_alive():
            fn()
            return
        done = threading.Event()
        with self._cond:
            self._calls.append((fn, done))
        self._wake()
        if not done.wait(timeout):
            raise BackendError(f"slcan hub {self.name!r}: hub thread did not answer")

    def _wake(self) -> None:
        if self._wake_w >= 0:
            try:
                os.write(self._wake_w, b"!")
            except OSError:
                pass

    # ------------------------------------------------------------ the thread
    def _step(self) -> None:
        live = [p for p in self._ports if p.master >= 0]
        rlist = [p.master for p in live] + [self._wake_r]
        wlist = [p.master for p in live if p.out]
        timeout = 0.05
        deadline = self._bus.next_deadline()
        if deadline is not None:
            timeout = min(timeout, max(0.0, deadline - time.perf_counter()))
        ready_r, ready_w, _ = select.select(rlist, wlist, [], timeout)
        if self._wake_r in ready_r:
            try:
                os.read(self._wake_r, 4096)
            except BlockingIOError:
                pass
            self._run_calls()
        for p in live:
            if p.master >= 0 and p.master in ready_r:
                self._read_port(p)
        if self.bitrate_model:
            for src, frame in self._bus.due(time.perf_counter()):
                self._deliver(self._ports[src], frame)
        for p in self._ports:
            if p.out and p.master >= 0:
                self._flush(p)
        with self._cond:
            self._cond.notify_all()

    def _run_calls(self) -> None:
        while True:
            with self._cond:
                if not self._calls:
                    return
                fn, done = self._calls.popleft()
            try:
                fn()
            finally:
                done.set()

    def _read_port(self, p: SlcanAdapter) -> None:
        try:
            data = os.read(p.master, 4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # EIO: cannot happen while we hold the slave; be safe
            return
        p.feed(data)

    def _send(self, p: SlcanAdapter, frame: Frame) -> None:
        """A frame adapter ``p`` transmitted: onto the wire model, or delivered now."""
        if self.bitrate_model:
            self._bus.submit(time.perf_counter(), p.index, frame,
                             frame_time(frame, p.bitrate, p.data_bitrate))
        else:
            self._deliver(p, frame)

    def _deliver(self, src: SlcanAdapter, frame: Frame) -> None:
        self.frames += 1
        with self._cond:
            if self._drop > 0:
                self._drop -= 1
                self.dropped += 1
                return
        line = frame.line
        ms = None
        for p in self._ports:
            if p is src or not p.is_open or p.master < 0:
                continue
            if self.check_bitrate and abs(p.bitrate - src.bitrate) > 0.01 * src.bitrate:
                p.counters.errors += 1
                continue
            if len(p.out) > self.max_buffer:
                p.counters.dropped += 1
                p.overrun = True
                continue
            if p.timestamps:
                if ms is None:
                    ms = int(time.monotonic() * 1000) % 60000
                p.out += f"{line}{ms:04X}\r".encode()
            else:
                p.out += line.encode() + _OK
            p.counters.frames_out += 1

    def _flush(self, p: SlcanAdapter) -> None:
        try:
            k = os.write(p.master, p.out)
        except (BlockingIOError, InterruptedError):
            return  # the client does not read: the pty is full
        except OSError:
            p.out.clear()
            return
        p.counters.bytes_out += k
        del p.out[:k]
