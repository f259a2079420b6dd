"""Dynamic DAQ lists of the XCP slave: their set-up commands and the DTOs of an event.

The master allocates the lists (FREE_DAQ, ALLOC_DAQ, ALLOC_ODT, ALLOC_ODT_ENTRY, in
that order), writes the entries (SET_DAQ_PTR, WRITE_DAQ: an address and a size), sets
each list's mode (SET_DAQ_LIST_MODE: timestamp, event channel, prescaler) and starts
them (START_STOP_DAQ_LIST, START_STOP_SYNCH).  At each event :meth:`DaqTable.event`
makes one DTO per ODT of every running list: ``PID`` (the absolute ODT number: the
lists' ODTs numbered one after the other from 0), then in the first ODT of a list with
timestamps the 2-byte timestamp (:data:`TS_SECONDS` per count, the event's simulated
time, wrapping every 6.5536 s), then the ODT's entries' bytes read from the memory map.

Checks: an ODT that would not fit in ``MAX_DTO`` bytes with its header is refused at
start (ERR_DAQ_CONFIG); an entry outside the memory at WRITE_DAQ (ERR_ACCESS_DENIED);
out-of-sequence allocation (ERR_SEQUENCE); STIM and PID_OFF (ERR_MODE_NOT_VALID).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import packets as P
from .memory import MemoryMap
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


class DaqTable:
    """The DAQ lists on ``memory`` (module docstring); the slave calls the ``_name``
    method of each DAQ command under its lock."""

    def __init__(self, memory: MemoryMap) -> None:
        self.memory = memory
        self.lists: list[DaqList] = []
        self._alloc = "free"  # free -> daq -> odt -> entry: the allocation sequence
        self._ptr: tuple[int, int, int] | None = None
        self.last_ts = 0
        self.events = 0       # events seen
        self.dtos_sent = 0    # DTOs made by event()
        self.samples_sent = 0  # list samples (a sample: every ODT of a list at an event)

    @property
    def running(self) -> bool:
        return any(d.running for d in self.lists)

    def _free_daq(self, cto: bytes) -> bytes:
        self.stop_all()
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
        P.check_ext(cto[3])
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
            self.stop_all()
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

    def stop_all(self) -> None:
        for d in self.lists:
            d.running = d.selected = False

    def event(self, t_s: float, channel: int = 0) -> list[bytes]:
        """The DTOs of every running list on ``channel`` at simulated time ``t_s`` (the
        memory map's measurements must have been refreshed for this instant)."""
        ts = int(round(t_s / TS_SECONDS)) & 0xFFFF
        out: list[bytes] = []
        read = self.memory.read
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

