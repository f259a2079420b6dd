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
are counted from these timestamps (and :attr:`XcpSlave.dtos_sent` against what the
master received).

Limitations: no seed and key (every resource unlocked), no STIM, no calibration pages
(one RAM page: SET_CAL_PAGE etc. are ERR_CMD_UNKNOWN), no master block mode, no
interleaved mode, no PID_OFF, no resume mode, no bit-wise ODT entries, one address
extension (0), at most :data:`MAX_DAQ` lists and 0xFC ODTs in all.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from . import packets as P
from .memory import A2L_NAME_BASE, EVENT_NAME_BASE, ID_BASE, MemoryMap
from .packets import XcpError

#: Dynamic DAQ lists the slave allocates at most.
MAX_DAQ = 16
#: Highest absolute ODT number + 1 (PIDs 0x00..0xFB are DTOs).
MAX_PID = 0xFC
#: Timestamp: 2 bytes, unit 1 us (code 3), 100 ticks per count: 100 us resolution.
TS_SIZE, TS_UNIT, TS_TICKS = 2, 3, 100
TS_SECONDS = 1e-6 * TS_TICKS
#: Largest ODT entry: a DTO's bytes after the PID.
MAX_ODT_ENTRY = P.MAX_DTO - 1


@dataclass
class DaqList:
    odts: list = field(default_factory=list)  # per ODT: list of [address, size] or None
    mode: int = 0
    event: int = 0
    prescaler: int = 1
    priority: int = 0
    selected: bool = False
    running: bool = False
    first_pid: int = 0
    tick: int = 0  # events seen, for the prescaler


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
        self.lists: list[DaqList] = []
        self._alloc = "free"  # free -> daq -> odt -> entry: the allocation sequence
        self._ptr: tuple[int, int, int] | None = None
        self._lock = threading.RLock()
        self.last_ts = 0
        self.events = 0       # events seen
        self.dtos_sent = 0    # DTOs made by event()
        self.samples_sent = 0  # list samples (a sample: every ODT of a list at an event)
        self.commands = 0
        self.errors: dict[str, int] = {}
        memory.extra[EVENT_NAME_BASE] = self.event_name

    @property
    def daq_running(self) -> bool:
        return any(d.running for d in self.lists)

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
            with self._lock:
                out = getattr(self, "_" + name.lower())(cto)
            return out if isinstance(out, list) else [out]
        except XcpError as exc:
            self.errors[exc.name] = self.errors.get(exc.name, 0) + 1
            return [P.error(exc.code)]

    def _connect(self, cto: bytes) -> bytes:
        P.need(cto, 2)
        if cto[1] not in (0, 1):
            raise XcpError("ERR_OUT_OF_RANGE", f"CONNECT mode {cto[1]} (0 normal, 1 user)")
        self.connected = True
        return P.connect_response(P.RESOURCE_CAL_PAG | P.RESOURCE_DAQ,
                                  P.COMM_MODE_SLAVE_BLOCK | P.COMM_MODE_OPTIONAL)

    def _disconnect(self, cto: bytes) -> bytes:
        self._stop_all()
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
        self._ext(cto[3])
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
        self._ext(cto[3])
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

    @staticmethod
    def _ext(ext: int) -> None:
        if ext != 0:
            raise XcpError("ERR_OUT_OF_RANGE", f"address extension {ext} (only 0)")

    # ------------------------------------------------------------- DAQ set-up
    def _free_daq(self, cto: bytes) -> bytes:
        self._stop_all()
        self.lists, self._alloc, self._ptr = [], "free", None
        return P.positive()

    def _alloc_daq(self, cto: bytes) -> bytes:
        P.need(cto, 4)
        if self._alloc != "free":
            raise XcpError("ERR_SEQUENCE", "ALLOC_DAQ must follow FREE_DAQ")
        n = P.word(cto, 2)
        if n > MAX_DAQ:
            raise XcpError("ERR_MEMORY_OVERFLOW", f"ALLOC_DAQ {n} lists (at most {MAX_DAQ})")
        self.lists = [DaqList() for _ in range(n)]
        self._alloc = "daq"
        return P.positive()

    def _alloc_odt(self, cto: bytes) -> bytes:
        P.need(cto, 5)
        if self._alloc not in ("daq", "odt"):
            raise XcpError("ERR_SEQUENCE", "ALLOC_ODT must follow ALLOC_DAQ (and come "
                                           "before ALLOC_ODT_ENTRY)")
        d = self._list(P.word(cto, 2))
        n = cto[4]
        if sum(len(x.odts) for x in self.lists) - len(d.odts) + n > MAX_PID:
            raise XcpError("ERR_MEMORY_OVERFLOW", f"more than {MAX_PID} ODTs in all")
        d.odts = [None] * n
        self._alloc = "odt"
        pid = 0
        for x in self.lists:  # absolute ODT numbers, list after list
            x.first_pid, pid = pid, pid + len(x.odts)
        return P.positive()

    def _alloc_odt_entry(self, cto: bytes) -> bytes:
        P.need(cto, 6)
        if self._alloc not in ("odt", "entry"):
            raise XcpError("ERR_SEQUENCE", "ALLOC_ODT_ENTRY must follow ALLOC_ODT")
        d = self._list(P.word(cto, 2))
        odt = cto[4]
        if odt >= len(d.odts):
            raise XcpError("ERR_OUT_OF_RANGE", f"ODT {odt} of a list with {len(d.odts)}")
        n = cto[5]
        if n > MAX_ODT_ENTRY:
            raise XcpError("ERR_MEMORY_OVERFLOW", f"{n} entries in an ODT (at most "
                                                  f"{MAX_ODT_ENTRY})")
        d.odts[odt] = [None] * n
        self._alloc = "entry"
        return P.positive()

    def _set_daq_ptr(self, cto: bytes) -> bytes:
        P.need(cto, 6)
        k, odt, entry = P.word(cto, 2), cto[4], cto[5]
        d = self._list(k)
        if d.running:
            raise XcpError("ERR_DAQ_ACTIVE", f"DAQ list {k} is running")
        if odt >= len(d.odts) or d.odts[odt] is None or entry >= len(d.odts[odt]):
            raise XcpError("ERR_OUT_OF_RANGE", f"no ODT entry {entry} in ODT {odt} of DAQ "
                                               f"list {k}")
        self._ptr = (k, odt, entry)
        return P.positive()

    def _write_daq(self, cto: bytes) -> bytes:
        P.need(cto, 8)
        if self._ptr is None:
            raise XcpError("ERR_SEQUENCE", "WRITE_DAQ before SET_DAQ_PTR")
        k, odt, entry = self._ptr
        entries = self.lists[k].odts[odt]
        if entry >= len(entries):
            raise XcpError("ERR_OUT_OF_RANGE", f"WRITE_DAQ past the last entry of ODT {odt} "
                                               f"of DAQ list {k}")
        if cto[1] != 0xFF:
            raise XcpError("ERR_OUT_OF_RANGE", "bit-wise ODT entries are not supported")
        size = cto[2]
        self._ext(cto[3])
        addr = P.dword(cto, 4)
        if not 1 <= size <= MAX_ODT_ENTRY:
            raise XcpError("ERR_OUT_OF_RANGE", f"ODT entry of {size} bytes (1..{MAX_ODT_ENTRY})")
        self.memory.read(addr, size)  # ERR_ACCESS_DENIED outside the memory
        entries[entry] = [addr, size]
        self._ptr = (k, odt, entry + 1)
        return P.positive()

    def _set_daq_list_mode(self, cto: bytes) -> bytes:
        P.need(cto, 8)
        mode, k, ev, pre, prio = cto[1], P.word(cto, 2), P.word(cto, 4), cto[6], cto[7]
        d = self._list(k)
        if mode & (P.DAQ_MODE_DIRECTION_STIM | P.DAQ_MODE_PID_OFF):
            raise XcpError("ERR_MODE_NOT_VALID", f"mode 0x{mode:02X}: no STIM, no PID_OFF")
        if ev != 0:
            raise XcpError("ERR_OUT_OF_RANGE", f"event channel {ev} (only 0)")
        if pre < 1:
            raise XcpError("ERR_OUT_OF_RANGE", "prescaler 0 (at least 1)")
        d.mode, d.event, d.prescaler, d.priority = mode, ev, pre, prio
        return P.positive()

    def _get_daq_list_mode(self, cto: bytes) -> bytes:
        P.need(cto, 4)
        d = self._list(P.word(cto, 2))
        state = (0x01 if d.selected else 0) | (0x40 if d.running else 0)
        return P.positive(d.mode | state, 0, 0, P.u16(d.event), d.prescaler, d.priority)

    def _start_stop_daq_list(self, cto: bytes) -> bytes:
        P.need(cto, 4)
        mode, k = cto[1], P.word(cto, 2)
        d = self._list(k)
        if mode not in (0, 1, 2):
            raise XcpError("ERR_MODE_NOT_VALID", f"START_STOP_DAQ_LIST mode {mode}")
        if mode in (1, 2):
            self._check_list(k, d)
        if mode == 0:
            d.running = False
        elif mode == 1:
            d.running, d.tick = True, 0
        else:
            d.selected = True
        return P.positive(d.first_pid)

    def _start_stop_synch(self, cto: bytes) -> bytes:
        P.need(cto, 2)
        mode = cto[1]
        if mode == 0:
            self._stop_all()
        elif mode in (1, 2):
            for d in self.lists:
                if d.selected:
                    d.running, d.tick, d.selected = mode == 1, 0, False
        else:
            raise XcpError("ERR_MODE_NOT_VALID", f"START_STOP_SYNCH mode {mode}")
        return P.positive()

    def _get_daq_clock(self, cto: bytes) -> bytes:
        return P.positive(0, 0, 0, P.u32(self.last_ts))

    def _get_daq_processor_info(self, cto: bytes) -> bytes:
        return P.daq_processor_info(MAX_DAQ, 1)

    def _get_daq_resolution_info(self, cto: bytes) -> bytes:
        return P.daq_resolution_info(MAX_ODT_ENTRY, TS_SIZE, TS_UNIT, TS_TICKS)

    def _get_daq_event_info(self, cto: bytes) -> bytes:
        P.need(cto, 4)
        if P.word(cto, 2) != 0:
            raise XcpError("ERR_OUT_OF_RANGE", f"event channel {P.word(cto, 2)} (only 0)")
        self.mta = EVENT_NAME_BASE
        return P.event_info(len(self.event_name), self.cycle, self.cycle_unit)

    def _list(self, k: int) -> DaqList:
        if k >= len(self.lists):
            raise XcpError("ERR_OUT_OF_RANGE", f"DAQ list {k} (allocated: {len(self.lists)})")
        return self.lists[k]

    def _check_list(self, k: int, d: DaqList) -> None:
        for j, entries in enumerate(d.odts):
            if entries is None or any(e is None for e in entries):
                raise XcpError("ERR_DAQ_CONFIG", f"DAQ list {k}: ODT {j} has entries not "
                                                 "written")
            head = 1 + (TS_SIZE if j == 0 and d.mode & P.DAQ_MODE_TIMESTAMP else 0)
            if head + sum(e[1] for e in entries) > P.MAX_DTO:
                raise XcpError("ERR_DAQ_CONFIG", f"DAQ list {k}: ODT {j} does not fit in a "
                                                 f"DTO of {P.MAX_DTO} bytes")

    def _stop_all(self) -> None:
        for d in self.lists:
            d.running = d.selected = False

    # ------------------------------------------------------------------ events
    def event(self, t_s: float, channel: int = 0) -> list[bytes]:
        """The DTOs of every running list on ``channel`` at simulated time ``t_s`` (the
        memory map's measurements must have been refreshed for this instant)."""
        ts = int(round(t_s / TS_SECONDS)) & 0xFFFF
        out: list[bytes] = []
        read = self.memory.read
        with self._lock:
            self.events += 1
            self.last_ts = int(round(t_s / TS_SECONDS)) & 0xFFFFFFFF
            for d in self.lists:
                if not d.running or d.event != channel:
                    continue
                d.tick += 1
                if (d.tick - 1) % d.prescaler:
                    continue
                for j, entries in enumerate(d.odts):
                    dto = bytearray([d.first_pid + j])
                    if j == 0 and d.mode & P.DAQ_MODE_TIMESTAMP:
                        dto += P.u16(ts)
                    for addr, size in entries:
                        dto += read(addr, size)
                    out.append(bytes(dto))
                self.samples_sent += 1
            self.dtos_sent += len(out)
        return out

    def stats(self) -> dict[str, Any]:
        return {"connected": self.connected, "commands": self.commands,
                "errors": dict(self.errors), "events": self.events,
                "samples_sent": self.samples_sent, "dtos_sent": self.dtos_sent,
                "daq_lists": len(self.lists), "daq_running": self.daq_running}
