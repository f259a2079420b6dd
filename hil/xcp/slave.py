"""The XCP slave's protocol: commands in, responses out; DAQ lists sampled at an event.

:class:`XcpSlave` is transport-free: :meth:`~XcpSlave.handle` takes one command packet
(CTO) and returns the packets to send back (one response or error; several for an
UPLOAD in slave block mode; none for a command while not connected, as the standard
asks); :meth:`~XcpSlave.event` takes the event instant and returns the DAQ packets
(DTOs) of every running list on that event.  :mod:`hil.xcp.can_port` puts it on a bus.

Commands served (ASAM MCD-1 XCP 1.x, the calibration and measurement subset):
CONNECT, DISCONNECT, GET_STATUS, SYNCH, GET_COMM_MODE_INFO, GET_ID (0: the identity,
1: the A2L name), SET_MTA, UPLOAD (up to 255 bytes, slave block mode), SHORT_UPLOAD,
DOWNLOAD (calibration writes), and the dynamic DAQ commands FREE_DAQ, ALLOC_DAQ,
ALLOC_ODT, ALLOC_ODT_ENTRY, SET_DAQ_PTR, WRITE_DAQ, SET_DAQ_LIST_MODE,
GET_DAQ_LIST_MODE, START_STOP_DAQ_LIST, START_STOP_SYNCH, GET_DAQ_CLOCK,
GET_DAQ_PROCESSOR_INFO, GET_DAQ_RESOLUTION_INFO, GET_DAQ_EVENT_INFO.  Every other
command: ERR_CMD_UNKNOWN.

DAQ: one event channel (number 0), the controller's cycle.  A DTO per ODT, identified
by its absolute ODT number (PID); the first ODT of a list with timestamps carries a
2-byte timestamp of the event's *simulated* time in units of 100 us (``1 us x 100
ticks``; it wraps every 6.5536 s), so a missing DTO shows as a gap of more than one
cycle between consecutive timestamps.  XCP on CAN has no DTO counter; lost samples
are counted from these timestamps (and :attr:`DaqTable.samples_sent` against what the
master received).

Limitations: no seed and key (every resource unlocked), no STIM, no calibration pages
(one RAM page: SET_CAL_PAGE etc. are ERR_CMD_UNKNOWN), no master block mode, no
interleaved mode, no PID_OFF, no resume mode, no bit-wise ODT entries, one address
extension (0), at most :data:`hil.xcp.daq.MAX_DAQ` lists and 0xFC ODTs in all.
"""

from __future__ import annotations

import threading
from typing import Any

from . import packets as P
from .daq import DaqTable
from .memory import A2L_NAME_BASE, EVENT_NAME_BASE, ID_BASE, MemoryMap
from .packets import XcpError


class XcpSlave:
    """The protocol state of one slave on the memory map ``memory``; ``event_period_s``:
    the cycle of its one event channel (the controller's period), named ``event_name``."""

    def __init__(self, memory: MemoryMap, event_period_s: float,
                 event_name: str = "controller") -> None:
        self.memory = memory
        self.cycle, self.cycle_unit = P.event_cycle(event_period_s)
        self.event_name = event_name.encode("ascii")
        self.connected = False
        self.mta = 0
        self.daq = DaqTable(memory)
        self._lock = threading.RLock()
        self.commands = 0
        self.last_fault = ""  # the last unexpected exception (answered ERR_GENERIC)
        self.errors: dict[str, int] = {}
        memory.extra[EVENT_NAME_BASE] = self.event_name

    @property
    def daq_running(self) -> bool:
        return self.daq.running

    # ---------------------------------------------------------------- commands
    def handle(self, cto: bytes) -> list[bytes]:
        """The packets answering the command ``cto`` (module docstring)."""
        cto = bytes(cto)
        if not cto:
            return []
        code = cto[0]
        if not self.connected and code != P.CMD["CONNECT"]:
            return []  # the standard: a slave not connected ignores every other command
        self.commands += 1
        name = P.CMD_NAMES.get(code)
        try:
            if name is None:
                raise XcpError("ERR_CMD_UNKNOWN", f"command 0x{code:02X} is not served")
            fn = getattr(self, "_" + name.lower(), None) or \
                getattr(self.daq, "_" + name.lower())
            with self._lock:
                out = fn(cto)
            return out if isinstance(out, list) else [out]
        except XcpError as exc:
            self.errors[exc.name] = self.errors.get(exc.name, 0) + 1
            return [P.error(exc.code)]
        except Exception as exc:  # noqa: BLE001 - a fault of the slave: answered, kept
            self.errors["ERR_GENERIC"] = self.errors.get("ERR_GENERIC", 0) + 1
            self.last_fault = f"{name}: {type(exc).__name__}: {exc}"
            return [P.error(P.ERR["ERR_GENERIC"])]

    def _connect(self, cto: bytes) -> bytes:
        P.need(cto, 2)
        if cto[1] not in (0, 1):
            raise XcpError("ERR_OUT_OF_RANGE", f"CONNECT mode {cto[1]} (0 normal, 1 user)")
        self.connected = True
        return P.connect_response(P.RESOURCE_CAL_PAG | P.RESOURCE_DAQ,
                                  P.COMM_MODE_SLAVE_BLOCK | P.COMM_MODE_OPTIONAL)

    def _disconnect(self, cto: bytes) -> bytes:
        self.daq.stop_all()
        self.connected = False
        return P.positive()

    def _get_status(self, cto: bytes) -> bytes:
        session = P.SESSION_DAQ_RUNNING if self.daq_running else 0
        return P.positive(session, 0, 0, P.u16(0))

    def _synch(self, cto: bytes) -> bytes:
        return P.error(P.ERR["ERR_CMD_SYNCH"])  # SYNCH's answer is this error, by definition

    def _get_comm_mode_info(self, cto: bytes) -> bytes:
        return P.positive(0, 0, 0, 0, 0, 0, 0x10)  # no master block, no interleave; v1.0

    def _get_id(self, cto: bytes) -> bytes:
        P.need(cto, 2)
        buf = {0: self.memory.identity, 1: self.memory.a2l_name}.get(cto[1], b"")
        base = {0: ID_BASE, 1: A2L_NAME_BASE}.get(cto[1], 0)
        self.mta = base
        return P.positive(0, 0, 0, P.u32(len(buf)))  # mode 0: the text by UPLOAD from MTA

    def _set_mta(self, cto: bytes) -> bytes:
        P.need(cto, 8)
        P.check_ext(cto[3])
        self.mta = P.dword(cto, 4)
        return P.positive()

    def _upload(self, cto: bytes) -> list[bytes]:
        P.need(cto, 2)
        n = cto[1]
        if n == 0:
            raise XcpError("ERR_OUT_OF_RANGE", "UPLOAD of 0 bytes")
        data = self.memory.read(self.mta, n)
        self.mta += n
        chunk = P.MAX_CTO - 1
        return [P.positive(data[i:i + chunk]) for i in range(0, n, chunk)]

    def _short_upload(self, cto: bytes) -> bytes:
        P.need(cto, 8)
        n = cto[1]
        if not 1 <= n <= P.MAX_CTO - 1:
            raise XcpError("ERR_OUT_OF_RANGE", f"SHORT_UPLOAD of {n} bytes (1..7 on CAN)")
        P.check_ext(cto[3])
        addr = P.dword(cto, 4)
        data = self.memory.read(addr, n)
        self.mta = addr + n
        return P.positive(data)

    def _download(self, cto: bytes) -> bytes:
        P.need(cto, 2)
        n = cto[1]
        if not 1 <= n <= P.MAX_CTO - 2:
            raise XcpError("ERR_OUT_OF_RANGE", f"DOWNLOAD of {n} bytes (1..6 on CAN; no "
                                               "master block mode)")
        P.need(cto, 2 + n)
        self.memory.write(self.mta, cto[2:2 + n])
        self.mta += n
        return P.positive()

    def _get_daq_event_info(self, cto: bytes) -> bytes:
        P.need(cto, 4)
        if P.word(cto, 2) != 0:
            raise XcpError("ERR_OUT_OF_RANGE", f"event channel {P.word(cto, 2)} (only 0)")
        self.mta = EVENT_NAME_BASE
        return P.event_info(len(self.event_name), self.cycle, self.cycle_unit)

    def event(self, t_s: float, channel: int = 0) -> list[bytes]:
        """The DTOs of every running list on ``channel`` at simulated time ``t_s`` (the
        memory map's measurements must have been refreshed for this instant)."""
        with self._lock:
            return self.daq.event(t_s, channel)

    def stats(self) -> dict[str, Any]:
        return {"connected": self.connected, "commands": self.commands,
                "errors": dict(self.errors), "last_fault": self.last_fault,
                "events": self.daq.events,
                "samples_sent": self.daq.samples_sent, "dtos_sent": self.daq.dtos_sent,
                "daq_lists": len(self.daq.lists), "daq_running": self.daq_running}
