"""An :class:`~hil.xcp.slave.XcpSlave` on a python-can bus: commands served by a thread.

The slave listens on ``cmd_id`` (master to slave: CMD) and answers on ``res_id`` (RES,
ERR and DAQ packets), 11-bit identifiers, classic CAN.  It opens a python-can bus of
its own on the controller's channel (``virtual`` in one process, ``udp_multicast``
between processes, any other python-can interface on a rig), so XCP traffic never
passes through the controller's frame reads.

Threads: commands are served by a daemon thread blocked in ``bus.recv`` (it holds no
lock while it waits, so the controller's frame does not wait for it); the DAQ packets
of an event are sent by the caller of :meth:`XcpCanPort.send_event` (the frame's
thread, :mod:`hil.xcp.ecu`).  ``recv`` returns when a command arrives; its timeout
(:data:`POLL_S`) only bounds how long :meth:`XcpCanPort.close` waits for the thread.

Limitations: classic CAN (8 bytes), no CAN FD; one slave per identifier pair; the
udp_multicast interface of plain python-can (the master must use it too).
"""

from __future__ import annotations

import threading
from typing import Any

from ..errors import require
from .slave import XcpSlave

#: Default identifiers: master -> slave and slave -> master.
CMD_ID, RES_ID = 0x6F0, 0x6F1
#: The command thread's receive timeout [s] (how fast close() ends it).
POLL_S = 0.05


def open_bus(interface: str, channel: str, **kw: Any) -> Any:
    """A python-can bus (imported here: ``pip install python-can``)."""
    can = require("can", who="hil.xcp", package="python-can")
    return can.Bus(interface=interface, channel=channel, **kw)


class XcpCanPort:
    """Serve ``slave`` on ``bus`` (an open python-can bus; closed by :meth:`close` when
    ``own_bus``)."""

    def __init__(self, slave: XcpSlave, bus: Any, *, cmd_id: int = CMD_ID,
                 res_id: int = RES_ID, own_bus: bool = False) -> None:
        for label, v in (("cmd_id", cmd_id), ("res_id", res_id)):
            if not 0 <= int(v) <= 0x7FF:
                raise ValueError(f"XcpCanPort: {label} = {v!r} must be an 11-bit identifier "
                                 "0..0x7FF")
        if cmd_id == res_id:
            raise ValueError(f"XcpCanPort: cmd_id and res_id must differ, both 0x{cmd_id:X}")
        import can
        self._msg = can.Message
        self.slave, self.bus = slave, bus
        self.cmd_id, self.res_id = int(cmd_id), int(res_id)
        self.own_bus = own_bus
        try:
            bus.set_filters([{"can_id": self.cmd_id, "can_mask": 0x7FF, "extended": False}])
        except Exception:  # noqa: BLE001 - a bus without filters: checked per frame below
            pass
        self._send_lock = threading.Lock()
        self._stop = threading.Event()
        self.send_errors = 0
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._serve, name="xcp-slave", daemon=True)
        self._thread.start()

    def _send(self, data: bytes) -> None:
        msg = self._msg(arbitration_id=self.res_id, is_extended_id=False, data=data)
        try:
            with self._send_lock:
                self.bus.send(msg)
        except Exception:  # noqa: BLE001 - counted: a full queue, a bus off
            self.send_errors += 1

    def _serve(self) -> None:
        recv, handle, stop = self.bus.recv, self.slave.handle, self._stop
        try:
            while not stop.is_set():
                msg = recv(POLL_S)
                if msg is None or msg.arbitration_id != self.cmd_id or msg.is_extended_id:
                    continue
                for pkt in handle(bytes(msg.data)):
                    self._send(pkt)
        except Exception as exc:  # noqa: BLE001 - kept for the caller (stats, close)
            if not stop.is_set():
                self.error = exc

    def send_event(self, t_s: float) -> int:
        """Sample the DAQ lists at simulated time ``t_s`` and send their DTOs; the count."""
        dtos = self.slave.event(t_s)
        for d in dtos:
            self._send(d)
        return len(dtos)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)
        if self.own_bus:
            self.bus.shutdown()
