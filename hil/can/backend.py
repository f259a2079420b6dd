"""CAN backend on python-can: any python-can interface, ``virtual`` for tests.

:class:`CanBackend` creates a ``can.Bus`` in ``_open`` (python-can is imported
there, never at import time; a missing python-can is a
:class:`~hil.errors.DriverMissing` with the pip command).  Frames are
``can.Message`` objects both ways.

Errors
------
* ``can.CanOperationError`` (bus-off, a closed or shut-down bus, a driver
  failure while sending or receiving) means the link is lost:
  :class:`~hil.errors.Disconnected`, naming the interface and channel.  With
  ``reconnect=True`` the base class re-creates the bus with backoff;
  :meth:`CanBackend.recover` does the same at once, on demand.
* ``can.CanTimeoutError`` (transmit buffer full) is
  :class:`~hil.errors.BackendTimeout`.
* ``can.CanInitializationError`` / ``CanInterfaceNotImplementedError`` at open
  are :class:`~hil.errors.BackendError` listing the interfaces python-can knows.
* Received error frames are counted (``error_frames`` and ``counters.errors``)
  and dropped, unless ``keep_error_frames=True``.  When the interface reports
  ``BusState.ERROR`` after an error frame, the bus is treated as bus-off, i.e.
  the link is lost.

udp_multicast isolation
-----------------------
python-can's ``udp_multicast`` binds every bus to its port on all addresses, and Linux
delivers to such a socket the datagrams of *every* group joined on the host: two rigs on
different groups but the same port (python-can's default 43113 for all) heard each other
(issue 22: a listener on group A received 100 of 100 frames sent to group B).  This
backend therefore, for ``udp_multicast``,

* uses a port of its own per group by default (:func:`multicast_port`: 20000-29999 from
  a hash of the group; ``port=`` still wins),
* sets ``IP_MULTICAST_ALL = 0`` (``IPV6_MULTICAST_ALL`` for IPv6) on the socket, so the
  kernel delivers only the groups this socket joined, whatever the port,
* sets hop limit 0 by default (nothing leaves the host; ``hop_limit=`` wins),
* drops a datagram that is not a python-can message (garbage, another protocol on the
  port): counted in ``bad_datagrams`` and ``counters.frame_errors``, never reported as a
  lost bus.

Fast receive on udp_multicast: :meth:`CanBackend.receive_batch` reads the socket
directly (``recvmsg`` without waiting, msgpack unpacked once, the kernel's receive time as
the timestamp) instead of python-can's ``recv`` (a ``select`` and a full message check
per datagram): 3-4 times less per frame, which matters under a flood of 5000 frames/s
(issue 22).  With ``accept=`` (the ids a bridge decodes) and no rx tap, other frames are
counted in ``filtered`` and dropped before a ``can.Message`` is built; with a tap (the bus
log, the monitor) every frame is built, tapped and then filtered by the base, still on the
fast path (issue 36: a tap used to switch it off, and the slow path's batch stopped at the
node's own echo).  python-can's software filters (``can_filters``) apply here as in
``recv``.

Fast receive and send on virtual
--------------------------------
python-can's ``virtual`` bus hands each receiver a queue; ``recv(0)`` takes one frame
from it with a clock read, a lock and, when the queue is empty, a ``queue.Empty``
exception: about 3 us per call, and :meth:`CanBackend.receive_batch` needs one more
call than there are frames.  For a plain ``VirtualBus`` (not a subclass, no software
``can_filters``, python-can's receive logging off) :meth:`CanBackend.receive_batch`
takes every waiting frame from that queue at once, under the queue's own lock, and
checks them as ``read`` does (the same frames in the same order, the same counters,
error frames and stops); anything else, or a python-can whose ``VirtualBus`` no longer
has that queue, uses ``recv``.  python-can itself is not changed.

Sending, ``VirtualBus.send`` deep-copies the message for each receiver (``copy.deepcopy``:
4 us of the 6 us python-can needs per frame sent and read).  For a plain ``VirtualBus``
whose receive queues are unbounded, :meth:`CanBackend.write` puts a new ``can.Message``
with the same fields and a copy of the data into each receiving queue itself, stamped,
named and flagged as ``send`` does, under the queue's lock as ``Queue.put`` does
(tested against python-can's ``send`` on a generated corpus of frames and bus options).
A bounded queue (``rx_queue_size``: ``put`` may wait or fail), a closed bus, a ``send``
replaced on the bus or its class, or data that is no ``bytearray`` goes through ``send``.

Reading on past what yields no frame
------------------------------------
A read takes every frame that has arrived, whatever lies between them (issue 36).  The
node's own echo (udp_multicast) and a dropped error frame are :data:`hil.backend.SKIP`:
the base reads on at once.  python-can's ``recv`` returns ``None`` both when nothing is
waiting and, with ``timeout=0``, for a line that is no frame (``slcan``'s ``z``/``Z`` acks
of its own transmissions: a backlog that grew for ever, issue 22 item 6) or a frame its
software filter (``can_filters``) rejects; after such a ``None`` this backend looks
whether more is waiting (the port's bytes for ``slcan``, the queue for ``virtual``, the
bus's file descriptor for the others) and reads on if so.

Limitations
-----------
* ``fd=True`` is passed to python-can as ``fd=True`` (and, for ``virtual``, as
  ``protocol=CanProtocol.CAN_FD``); whether a real adapter honours it, and the
  data bitrate options (``data_bitrate`` etc.), are up to its python-can
  interface.
* Bus state is polled only when an error frame arrives; interfaces that report
  bus-off only through ``bus.state`` without error frames are not detected.
* ``close()`` cannot interrupt a blocking ``recv`` on every interface; the
  reader thread's poll period bounds the wait.
* With ``can_filters`` on an interface that has no file descriptor (``fileno``) and is not
  ``virtual`` or ``slcan``, a frame the software filter rejects still ends a poll (python-
  can's ``recv(0)`` returns ``None`` for it and nothing tells what is waiting).
* python-can's ``udp_multicast`` delivers a bus's own frames back to it (its
  ``receive_own_messages=False`` is not implemented: multicast loopback reaches every
  socket on the host, ours included).  Unless ``receive_own_messages=True``, the
  backend drops received frames whose id it has sent itself (counted in
  ``own_echoes``): on a CAN network every id has one sender, so this removes exactly
  the echoes, but also frames of a second node that wrongly uses the same id.
"""

from __future__ import annotations

import errno
import logging
import select
import socket
import struct
import time
import zlib
from typing import Any

from ..backend import SKIP, Backend, BackendState
from ..errors import BackendError, BackendTimeout, Disconnected, HILError, require

__all__ = ["CanBackend", "import_can", "multicast_port"]

_IP_MULTICAST_ALL = 49  # <linux/in.h>
_IPV6_MULTICAST_ALL = 29  # <linux/in6.h>


def multicast_port(group: str) -> int:
    """The default UDP port of a ``udp_multicast`` group: 20000-29999 from a CRC of the
    group's text (two groups share a port 1 time in 10 000; ``IP_MULTICAST_ALL = 0``
    keeps them apart even then)."""
    return 20000 + zlib.crc32(str(group).encode()) % 10000


def _virtual_queue(bus: Any) -> tuple | None:
    """``(bus, its receive queue, python-can's bus logger)`` of a plain python-can ``VirtualBus``
    that :meth:`CanBackend.receive_batch` may read directly (module docstring), else
    None."""
    import queue

    try:
        from can.bus import LOG, BusABC
        from can.interfaces.virtual import VirtualBus
    except ImportError:  # pragma: no cover - a python-can without these
        return None
    q = getattr(bus, "queue", None)
    if (type(bus) is not VirtualBus or type(bus).recv is not BusABC.recv
            or not isinstance(q, queue.Queue) or not hasattr(bus, "_filters")
            or not hasattr(bus, "_open")):
        return None
    if not _VSEND:
        _VSEND.append(VirtualBus.send)  # python-can's own, before anyone replaces it
    return bus, q, LOG  # recv logs every frame to LOG at RECV_LOGGING_LEVEL


#: python-can's ``VirtualBus.send`` as imported (the direct write stands in for it only)
_VSEND: list = []


def _send_virtual(bus: Any, msg: Any, message_type: Any) -> bool:
    """python-can's ``VirtualBus.send`` without ``deepcopy`` (module docstring): each
    receiving queue gets a new ``can.Message`` with the same fields and a copy of the
    data, stamped, named and flagged as ``send`` does.  False (nothing sent) where that
    would not be the same: a closed bus, a ``send`` replaced on the instance, a bounded
    queue (``put`` may wait or fail) or data that is not a ``bytearray``."""
    if (not bus._open or "send" in bus.__dict__ or type(bus).send is not _VSEND[0]
            or type(msg.data) is not bytearray):
        return False
    own = bus.queue
    targets = [q for q in bus.channel if q is not own or bus.receive_own_messages]
    for q in targets:
        if q.maxsize > 0:
            return False
    ts = msg.timestamp if bus.preserve_timestamps else time.time()
    data = bytearray() if msg.is_remote_frame else msg.data
    fields = (msg.arbitration_id, msg.is_extended_id, msg.is_remote_frame,
              msg.is_error_frame, bus.channel_id, msg.dlc)
    for q in targets:
        copy = message_type(ts, *fields, bytearray(data), msg.is_fd, q is not own,
                            msg.bitrate_switch, msg.error_state_indicator)
        with q.not_full:  # Queue.put of an unbounded queue, step for step
            q._put(copy)
            q.unfinished_tasks += 1
            q.not_empty.notify()
    return True


def import_can() -> Any:
    """``import can``, or :class:`DriverMissing` saying how to install it."""
    return require("can", who="can backend", package="python-can")


class CanBackend(Backend):
    """A CAN channel through python-can.

    Parameters
    ----------
    interface : str
        python-can interface (``"virtual"``, ``"socketcan"``, ``"pcan"``,
        ``"slcan"``, ``"udp_multicast"``, ...).
    channel : str or int
        The interface's channel (``"can0"``, ``"PCAN_USBBUS1"``; for
        ``virtual`` any name: buses on the same name see each other).
    bitrate : int, optional
        Nominal bitrate (not passed when ``None``).
    fd : bool
        CAN FD: passed through to python-can; messages with ``is_fd`` are
        refused before any I/O when this is off.
    receive_own_messages : bool
        Receive the frames this bus sends.
    keep_error_frames : bool
        Return received error frames from ``read`` (always counted).
    name, timeout, reconnect, reconnect_timeout, backoff
        See :class:`hil.backend.Backend` (``reconnect`` is off by default here).
    **options
        Passed to ``can.Bus`` (``can_filters``, ``data_bitrate``,
        ``preserve_timestamps``, ...).
    """

    kind = "can"

    def __init__(self, interface: str = "virtual", channel: str | int = "cosim",
                 bitrate: int | None = None, fd: bool = False,
                 receive_own_messages: bool = False, *, keep_error_frames: bool = False,
                 name: str | None = None, timeout: float | None = 1.0,
                 reconnect: bool = False, reconnect_timeout: float | None = 10.0,
                 backoff: tuple[float, float] = (0.01, 0.5), **options: Any) -> None:
        super().__init__(name=name, timeout=timeout, reconnect=reconnect,
                         reconnect_timeout=reconnect_timeout, backoff=backoff)
        if not isinstance(interface, str) or not interface:
            raise ValueError(f"can: interface must be a non-empty str, got {interface!r}")
        if bitrate is not None and (not isinstance(bitrate, int) or bitrate <= 0):
            raise ValueError(f"can {channel!r}: bitrate must be a positive int or None, "
                             f"got {bitrate!r}")
        self.interface = interface
        self._channel = channel
        self.bitrate = bitrate
        self.fd = bool(fd)
        self.receive_own_messages = bool(receive_own_messages)
        self.keep_error_frames = keep_error_frames
        self.options = options
        self.error_frames = 0
        #: own frames looped back by udp_multicast and dropped (see the module docstring)
        self.own_echoes = 0
        self._echo_filter = interface == "udp_multicast" and not self.receive_own_messages
        self._tx_ids: set[tuple[int, bool]] = set()
        self._bus: Any = None
        #: udp_multicast datagrams that were no python-can message (dropped)
        self.bad_datagrams = 0
        #: SLCAN reads that went on past a non-frame line (an ack) to a waiting frame
        self.slcan_lines_skipped = 0
        self._serial: Any = None  # the SLCAN serial port (to see what is waiting)
        self._sock: Any = None  # udp_multicast: the socket read directly
        self._vq: Any = None  # virtual: (the bus, its receive queue, its logger)
        self._message_type: Any = None  # can.Message, once python-can is imported

    # ---------------------------------------------------------------- driver
    @property
    def channel(self) -> str:
        return str(self._channel)

    @property
    def where(self) -> str:
        named = f" ({self.name!r})" if self.name else ""
        return f"can {self.interface}:{self.channel!r}{named}"

    @property
    def bus(self) -> Any:
        """The underlying ``can.BusABC`` (None while closed)."""
        return self._bus

    def bus_kwargs(self) -> dict[str, Any]:
        """The keyword arguments given to ``can.Bus``."""
        kw: dict[str, Any] = {"interface": self.interface, "channel": self._channel,
                              "receive_own_messages": self.receive_own_messages}
        if self.bitrate is not None:
            kw["bitrate"] = self.bitrate
        if self.fd:
            kw["fd"] = True
        if self.interface == "udp_multicast":
            kw["port"] = multicast_port(self.channel)
            kw["hop_limit"] = 0
        kw.update(self.options)
        return kw

    def _open(self) -> None:
        can = import_can()
        kw = self.bus_kwargs()
        if self.interface == "virtual" and self.fd and "protocol" not in kw:
            kw["protocol"] = can.CanProtocol.CAN_FD
        bus = can.Bus(**kw)
        if self.interface == "udp_multicast":
            self._isolate(bus)
            self._sock = self._fast_socket(bus)
        self._serial = getattr(bus, "serialPortOrig", None) if self.interface == "slcan" \
            else None
        self._vq = _virtual_queue(bus)
        self._message_type = can.Message
        self._bus = bus

    @staticmethod
    def _fast_socket(bus: Any) -> Any:
        mc = getattr(bus, "_multicast", None)
        if mc is None or not getattr(mc, "timestamp_nanosecond", False):
            return None
        try:
            import msgpack  # noqa: F401 - python-can's udp_multicast needs it too
        except ImportError:
            return None
        return mc._socket, mc.max_buffer, mc.received_ancillary_buffer_size

    def _read_batch(self, out: list, limit: int, accept: Any) -> int:
        """What has arrived, into ``out`` (module docstring: the fast paths on
        ``udp_multicast`` and ``virtual``; otherwise python-can's ``recv``)."""
        open_ = self.link.state is BackendState.OPEN
        if self._sock is not None and open_:
            # with a tap every frame is built (taps see all), then filtered by the base
            return self._read_udp(out, limit, None if self._rx_taps else accept)
        if self._vq is not None and open_:
            nbytes = self._read_virtual(out, limit)
            if nbytes is not None:
                return nbytes
        return super()._read_batch(out, limit, accept)

    def _read_udp(self, out: list, limit: int, accept: Any) -> int:
        """The udp_multicast socket read directly; frames not in ``accept`` are dropped
        before a ``can.Message`` is built (counted in ``filtered``), frames python-can's
        software filter rejects after (as ``recv`` does)."""
        import msgpack
        can = import_can()
        sock, size, anc = self._sock
        echo = self._tx_ids if self._echo_filter else ()
        bus = self._bus
        matches = bus._matches_filters if getattr(bus, "_filters", None) is not None else None
        n_bytes = 0
        try:
            while len(out) < limit:
                try:
                    data, ancdata, _, _ = sock.recvmsg(size, anc, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
                try:
                    d = msgpack.unpackb(data, raw=False)
                    key = (d["arbitration_id"], bool(d["is_extended_id"]))
                except Exception as exc:  # noqa: BLE001 - not a python-can datagram
                    self.bad_datagrams += 1
                    self.counters.add("errors", "frame_errors")
                    if self.bad_datagrams <= 10:
                        self.log.warning("%s: a datagram that is no CAN message was dropped "
                                         "(%s: %s)", self.where, type(exc).__name__, exc)
                    continue
                if key in echo:
                    self.own_echoes += 1
                    continue
                if accept is not None and key not in accept:
                    self.filtered += 1
                    continue
                if ancdata:
                    sec, ns = struct.unpack("@ll", ancdata[0][2])
                    d["timestamp"] = sec + ns * 1e-9
                else:
                    d["timestamp"] = time.time()
                try:
                    msg = can.Message(check=True, **d)
                except Exception as exc:  # noqa: BLE001
                    self.bad_datagrams += 1
                    self.counters.add("errors", "frame_errors")
                    self.log.debug("%s: bad message fields dropped: %s", self.where, exc)
                    continue
                if matches is not None and not matches(msg):
                    continue
                if msg.is_error_frame:
                    self.error_frames += 1
                    self.counters.add("errors")
                    if not self.keep_error_frames:
                        continue
                n_bytes += len(msg.data)
                out.append(msg)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                self.counters.add("bytes_in", n=n_bytes)  # (the frames before the error)
                raise
        return n_bytes

    def _read_virtual(self, out: list, limit: int) -> int | None:
        """The ``virtual`` bus's queue read directly (module docstring), into ``out``;
        ``None`` when this bus must be read through ``recv``."""
        bus = self._bus
        vbus, q, recv_log = self._vq
        if (bus is not vbus or not bus._open or bus._filters is not None
                or recv_log.isEnabledFor(bus.RECV_LOGGING_LEVEL)):
            return None
        n_bytes = 0
        echo = self._tx_ids if self._echo_filter else ()
        while len(out) < limit:  # (again when frames were dropped: the batch is not full)
            want = limit - len(out)
            with q.mutex:  # what queue.Queue.get does, for all waiting frames at once
                waiting = q.queue
                if len(waiting) <= want:
                    batch = list(waiting)
                    waiting.clear()
                else:
                    batch = [waiting.popleft() for _ in range(want)]
                if batch and q.maxsize > 0:  # senders wait for room only in a bounded queue
                    q.not_full.notify(len(batch))
            if not batch:
                break
            used = 0  # frames taken from the batch; after an error the rest go back
            try:
                # the checks of _read_internal, frame by frame; a frame it drops is skipped,
                # as the default batch read reads on past _read_internal's SKIP
                for msg in batch:
                    used += 1
                    if echo and (msg.arbitration_id, bool(msg.is_extended_id)) in echo:
                        self.own_echoes += 1
                        continue
                    n_bytes += len(msg.data)
                    if msg.is_error_frame:
                        self._error_frame(bus, msg)
                        if not self.keep_error_frames:
                            continue
                    out.append(msg)
            except Exception:
                self._requeue(batch[used:])
                self.counters.add("bytes_in", n=n_bytes)
                raise
        return n_bytes

    def _requeue(self, frames: list) -> None:
        """Put frames taken from the virtual bus's queue back at its front."""
        if frames:
            q = self._vq[1]
            with q.mutex:
                q.queue.extendleft(reversed(frames))

    def _isolate(self, bus: Any) -> None:
        """Only the joined group reaches this socket (module docstring)."""
        sock = getattr(getattr(bus, "_multicast", None), "_socket", None)
        if sock is None:
            return
        try:
            if sock.family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, _IPV6_MULTICAST_ALL, 0)
            else:
                sock.setsockopt(socket.IPPROTO_IP, _IP_MULTICAST_ALL, 0)
        except OSError as exc:  # not Linux: the port per group still separates rigs
            logging.getLogger("hil.can").warning(
                "%s: cannot set IP_MULTICAST_ALL=0 (%s): other groups on port %s may be "
                "heard; give each rig its own port", self.where, exc, bus._multicast.port)

    def _close(self) -> None:
        bus, self._bus = self._bus, None
        if bus is not None:
            bus.shutdown()

    def recover(self) -> None:
        """Re-create the bus now (e.g. after bus-off); counts a reconnect.  Works on an
        open or a faulted backend (a bus-off faults it) and leaves it open."""
        link = self.link
        if link.state is BackendState.CLOSED:
            link.require_usable("recover")
        with link.lock:
            try:
                self._close()
            except Exception as exc:  # noqa: BLE001 - the old bus may be broken
                self.log.debug("%s: shutdown before recover: %r ignored", self.where, exc)
            try:
                self._open()
            except Exception as exc:
                raise self._translate(exc, "recover") from exc
            link.opened()
            self.counters.add("reconnects")
        self.log.warning("%s: bus re-created by recover()", self.where)

    def _translate(self, exc: BaseException, op: str) -> HILError:
        if isinstance(exc, HILError):
            return exc
        import sys
        can = sys.modules.get("can")
        if can is not None and isinstance(exc, can.CanError):
            code = f" (error code {exc.error_code})" if getattr(exc, "error_code", None) else ""
            text = f"{type(exc).__name__}: {exc}{code}"
            if isinstance(exc, can.CanTimeoutError):
                return BackendTimeout(f"{self.where}: {op} timed out ({text}); the transmit "
                                      f"buffer is full: is anybody acknowledging frames "
                                      f"(bitrate {self.bitrate}, termination)?")
            if isinstance(exc, can.CanInitializationError | can.CanInterfaceNotImplementedError):
                return BackendError(f"{self.where}: cannot open the bus ({text}); check the "
                                    f"interface name, channel and adapter; python-can knows "
                                    f"{', '.join(sorted(can.VALID_INTERFACES))}")
            if isinstance(exc, can.CanOperationError):
                hint = ("" if self.reconnect else
                        "; call recover() or use reconnect=True to re-create the bus")
                return Disconnected(f"{self.where}: {op} failed ({text}); the bus is off, shut "
                                    f"down or the adapter went away: check the cable, "
                                    f"termination and bitrate{hint}")
            return BackendError(f"{self.where}: {op} failed ({text}); a python-can driver "
                                f"error")
        return super()._translate(exc, op)

    # ---------------------------------------------------------------- frames
    def _garbage(self, exc: BaseException) -> bool:
        """A udp_multicast datagram that python-can could not unpack (not a lost bus)."""
        return (self.interface == "udp_multicast"
                and "could not unpack" in str(exc) and exc.__cause__ is not None)

    def _recv(self, bus: Any, timeout: float | None) -> Any | None:
        for _ in range(100):  # a flood of garbage cannot hold the caller for ever
            try:
                msg = bus.recv(timeout)
            except Exception as exc:
                if self._bus is not bus:  # closed/re-created by another thread meanwhile
                    return None
                if not self._garbage(exc):
                    raise
                self.bad_datagrams += 1
                self.counters.add("errors", "frame_errors")
                if self.bad_datagrams <= 10:
                    self.log.warning("%s: a datagram that is no CAN message was dropped "
                                     "(%s: %s); is another program sending to this group and "
                                     "port?", self.where, type(exc.__cause__).__name__,
                                     exc.__cause__)
                timeout = 0.0
                continue
            if msg is None:
                try:
                    if self._more_waiting(bus):
                        return SKIP
                except Exception:
                    if self._bus is not bus:
                        return None
                    raise
            return msg
        return None

    def _more_waiting(self, bus: Any) -> bool:
        """After python-can's ``recv`` returned ``None``: is more waiting?  (It returns
        ``None`` for an SLCAN line that is no frame, an ack, and, with ``timeout=0``, for a
        frame its software filter rejects: module docstring.)"""
        if self._serial is not None:
            if self._serial.in_waiting:
                self.slcan_lines_skipped += 1
                return True
            return False
        if getattr(bus, "_filters", None) is None:  # (no software filter: None is nothing)
            return False
        q = getattr(bus, "queue", None)  # virtual
        if q is not None and hasattr(q, "empty"):
            return not q.empty()
        try:
            fd = bus.fileno()
        except NotImplementedError:
            return False  # (a limitation: module docstring)
        return fd >= 0 and bool(select.select([fd], [], [], 0)[0])

    def _read_internal(self, timeout: float | None) -> Any | None:
        bus = self._bus
        if bus is None:
            raise OSError("bus closed")
        msg = self._recv(bus, timeout)
        if msg is None or msg is SKIP:
            return msg
        if self._echo_filter and (msg.arbitration_id, bool(msg.is_extended_id)) in self._tx_ids:
            self.own_echoes += 1
            return SKIP
        self.counters.add("bytes_in", n=len(msg.data))
        if msg.is_error_frame:
            self._error_frame(bus, msg)
            return msg if self.keep_error_frames else SKIP
        return msg

    def _error_frame(self, bus: Any, msg: Any) -> None:
        self.error_frames += 1
        self.counters.add("errors")
        self.log.debug("%s: error frame %r", self.where, msg)
        try:
            state = bus.state
        except Exception:  # noqa: BLE001 - not every interface reports a state
            return
        if getattr(state, "name", "") == "ERROR":
            can = import_can()
            raise can.CanOperationError(f"bus-off (bus state {state.name} after an error frame)")

    def io_figures(self) -> dict:
        """Counters for the run's verdict: disconnects (link losses), frames dropped by a
        full reader queue (lost), datagrams that were no CAN message (bad frames)."""
        c = self.counters
        return {"link_losses": c.disconnects, "frames_lost": c.dropped,
                "bad_frames": self.bad_datagrams}

    def _encode_frame(self, frame: Any) -> Any:
        if type(frame) is self._message_type:  # a can.Message: the attributes are there
            if frame.is_fd and not self.fd:
                raise ValueError(f"{self.where}: a CAN FD message (is_fd=True) on a classic "
                                 f"bus; open the backend with fd=True")
            return frame
        if not all(hasattr(frame, a) for a in ("arbitration_id", "data", "is_fd")):
            raise TypeError(f"{self.where}: write() takes a can.Message, got "
                            f"{type(frame).__name__}")
        if frame.is_fd and not self.fd:
            raise ValueError(f"{self.where}: a CAN FD message (is_fd=True) on a classic bus; "
                             f"open the backend with fd=True")
        return frame

    def _write(self, msg: Any, timeout: float | None) -> int:
        bus = self._bus
        if bus is None:
            raise OSError("bus closed")
        if self._echo_filter:
            self._tx_ids.add((msg.arbitration_id, bool(msg.is_extended_id)))
        if (self._vq is None or type(msg) is not self._message_type
                or not _send_virtual(bus, msg, self._message_type)):
            bus.send(msg, timeout)
        return len(msg.data)  # counted with the frame (Counters.add_out)
