"""A fault memory with the DTC status byte of ISO 14229-1 (Annex D), for HIL tests.

Each diagnostic trouble code (DTC, a 3-byte number ``0x000001..0xFFFFFE``) has a *status
byte*; a *monitor* (a test run by the controller) reports a result for it, pass or fail,
as often as it runs (:meth:`FaultMemory.report`), and the controller marks the end of an
*operation cycle* (:meth:`FaultMemory.new_operation_cycle`: ignition off/on, here a run
of the ECU).  The status bits kept, and their rules (a documented subset of Annex D.2):

====  ======  =====================================  ===========================================
bit   mask    name                                   rule
====  ======  =====================================  ===========================================
0     0x01    testFailed (TF)                        the last result: 1 failed, 0 passed
1     0x02    testFailedThisOperationCycle (TFTOC)   a failure in this cycle; 0 at a new cycle
2     0x04    pendingDTC (PDTC)                      1 at a failure; 0 at the end of a cycle in
                                                     which the test ran and never failed
3     0x08    confirmedDTC (CDTC)                    1 when the test failed in ``confirm_cycles``
                                                     consecutive cycles in which it ran (1: at
                                                     the first failure); 0 after ``aging_cycles``
                                                     consecutive cycles that ran without failure
                                                     (aging; ``None``: never ages)
4     0x10    testNotCompletedSinceLastClear         1 after a clear until the first result
5     0x20    testFailedSinceLastClear               1 at a failure; 0 only at a clear
6     0x40    testNotCompletedThisOperationCycle     1 at a new cycle until the first result
7     0x80    warningIndicatorRequested              not supported: always 0
====  ======  =====================================  ===========================================

"Consecutive" counts the cycles in which the test ran: a cycle with no result neither
breaks a run of failing cycles nor ages a confirmed DTC.  A clear (:meth:`FaultMemory.clear`)
sets the status to 0x50 (not completed since the clear, not completed this cycle) and
forgets the counters and the snapshot; so does the first operation cycle (power on).
:data:`AVAILABILITY_MASK` (0x7F) is the bits this memory supports, the byte a
ReadDTCInformation response starts with.

Snapshot: at the first failure after a clear the memory stores what ``snapshot`` gives
(a dict, or a callable returning one, called only then) with the time of the report
(:meth:`FaultMemory.snapshot`); ``occurrences`` counts the pass-to-fail transitions.

Groups for :meth:`FaultMemory.clear`: ``0xFFFFFF`` (all), a DTC number (that DTC), and the
SAE J2012 groups by the two top bits, :data:`GROUPS` (``0x000000`` powertrain P,
``0x400000`` chassis C, ``0x800000`` body B, ``0xC00000`` network U).

Limitations: no debouncing (each report is a test result: debounce in the monitor); no
non-volatile storage (the memory lives as long as its process); no
warningIndicatorRequested, no DTC priority, severity or extended data records; one
snapshot record per DTC (the first failure), not one per occurrence.  Thread-safe: the
controller's frame reports while a diagnostic server reads and clears (one lock).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AVAILABILITY_MASK", "ALL_DTCS", "GROUPS", "Status", "DtcRecord", "FaultMemory",
           "dtc_text"]


class Status:
    """The status bits (module docstring)."""

    TF = 0x01
    TFTOC = 0x02
    PDTC = 0x04
    CDTC = 0x08
    TNCSLC = 0x10
    TFSLC = 0x20
    TNCTOC = 0x40
    WIR = 0x80
    #: after a clear, and at power on
    INITIAL = TNCSLC | TNCTOC


#: the status bits this memory supports (bit 7, warningIndicatorRequested, is not)
AVAILABILITY_MASK = 0x7F
#: groupOfDTC for "all groups"
ALL_DTCS = 0xFFFFFF
#: the functional groups :meth:`FaultMemory.clear` knows besides all and single DTCs
GROUPS = {0x000000: "powertrain (P)", 0x400000: "chassis (C)", 0x800000: "body (B)",
          0xC00000: "network (U)"}


def dtc_text(number: int) -> str:
    """The SAE J2012 form of a 3-byte DTC: ``0xC23587`` is ``"U0235-87"``."""
    hi = (number >> 16) & 0xFF
    letter = "PCBU"[hi >> 6]
    return f"{letter}{(hi >> 4) & 0x3}{hi & 0xF:X}{(number >> 8) & 0xFF:02X}-{number & 0xFF:02X}"


@dataclass
class DtcRecord:
    """One DTC's state in the memory."""

    number: int
    text: str = ""
    status: int = Status.INITIAL
    failed_cycles: int = 0  # consecutive cycles (that ran) with a failure
    aging: int = 0  # consecutive cycles (that ran) without a failure since confirmed
    occurrences: int = 0  # pass-to-fail transitions since the clear
    snapshot: dict | None = field(default=None)


def _check_number(dtc: Any, what: str = "DTC") -> int:
    if isinstance(dtc, bool) or not isinstance(dtc, int) or not 0 <= dtc <= 0xFFFFFF:
        raise ValueError(f"{what} must be a 3-byte number 0x000000..0xFFFFFF, got {dtc!r}")
    return dtc


class FaultMemory:
    """The DTC store (module docstring).

    Parameters
    ----------
    dtcs : iterable of int, or {int: str}
        The supported DTCs (with a description each).
    confirm_cycles : int
        Consecutive failing operation cycles that confirm a DTC (>= 1; 1: at once).
    aging_cycles : int or None
        Consecutive passing operation cycles that reset confirmedDTC (None: never).
    clock : callable
        Seconds for the snapshots' time (default ``time.monotonic``).
    """

    def __init__(self, dtcs: Iterable[int] | Mapping[int, str], *, confirm_cycles: int = 1,
                 aging_cycles: int | None = 40,
                 clock: Callable[[], float] = time.monotonic) -> None:
        texts = dict(dtcs) if isinstance(dtcs, Mapping) else {d: "" for d in dtcs}
        if not texts:
            raise ValueError("FaultMemory: give at least one DTC number")
        for d in texts:
            _check_number(d)
            if d in (0, ALL_DTCS):
                raise ValueError(f"FaultMemory: DTC 0x{d:06X} is reserved (0x000000 and "
                                 f"0xFFFFFF are groups, not DTCs)")
        if isinstance(confirm_cycles, bool) or not isinstance(confirm_cycles, int) \
                or confirm_cycles < 1:
            raise ValueError(f"FaultMemory: confirm_cycles must be an int >= 1, got "
                             f"{confirm_cycles!r}")
        if aging_cycles is not None and (isinstance(aging_cycles, bool)
                                         or not isinstance(aging_cycles, int)
                                         or aging_cycles < 1):
            raise ValueError(f"FaultMemory: aging_cycles must be an int >= 1 or None, got "
                             f"{aging_cycles!r}")
        self.confirm_cycles = confirm_cycles
        self.aging_cycles = aging_cycles
        self.clock = clock
        self.lock = threading.Lock()
        self.records = {d: DtcRecord(d, t) for d, t in sorted(texts.items())}
        #: operation cycles started (1: the one at power on)
        self.cycle = 1
        #: clears done (by any group)
        self.clears = 0

    # ------------------------------------------------------------ monitors
    def _record(self, dtc: int) -> DtcRecord:
        try:
            return self.records[dtc]
        except KeyError:
            raise KeyError(f"FaultMemory: DTC 0x{dtc:06X} is not supported; supported: "
                           f"{', '.join(f'0x{d:06X}' for d in self.records)}") from None

    def report(self, dtc: int, failed: bool, snapshot: Any = None) -> int:
        """A monitor's result for ``dtc`` (module docstring's rules); returns the new
        status.  ``snapshot``: a dict or a callable returning one, stored at the first
        failure after a clear."""
        with self.lock:
            r = self._record(dtc)
            s = r.status
            if failed:
                if not s & Status.TF:
                    r.occurrences += 1
                if not s & Status.TFTOC:  # the first failure of this cycle
                    r.failed_cycles += 1
                    r.aging = 0
                if not s & Status.TFSLC:
                    snap = snapshot() if callable(snapshot) else snapshot
                    r.snapshot = {"time": self.clock(), "cycle": self.cycle,
                                  **(dict(snap) if snap else {})}
                s |= Status.TF | Status.TFTOC | Status.PDTC | Status.TFSLC
                if r.failed_cycles >= self.confirm_cycles:
                    s |= Status.CDTC
            else:
                s &= ~Status.TF
            r.status = s & ~(Status.TNCSLC | Status.TNCTOC)
            return r.status

    def new_operation_cycle(self) -> None:
        """End the operation cycle and start the next: pending and aging by the ended
        cycle's results, then testFailedThisOperationCycle = 0 and
        testNotCompletedThisOperationCycle = 1 (module docstring)."""
        with self.lock:
            for r in self.records.values():
                s = r.status
                ran = not s & Status.TNCTOC
                if ran and not s & Status.TFTOC:  # ran and passed throughout
                    s &= ~Status.PDTC
                    r.failed_cycles = 0
                    if s & Status.CDTC and self.aging_cycles is not None:
                        r.aging += 1
                        if r.aging >= self.aging_cycles:
                            s &= ~Status.CDTC
                            r.aging = 0
                r.status = (s & ~Status.TFTOC) | Status.TNCTOC
            self.cycle += 1

    # ------------------------------------------------------------ server side
    def status(self, dtc: int) -> int:
        with self.lock:
            return self._record(dtc).status

    def snapshot(self, dtc: int) -> dict | None:
        """The values stored at the first failure since the clear (None: none yet)."""
        with self.lock:
            snap = self._record(dtc).snapshot
            return None if snap is None else dict(snap)

    def supported(self) -> list[tuple[int, int]]:
        """``(dtc, status)`` of every supported DTC, in number order."""
        with self.lock:
            return [(d, r.status) for d, r in self.records.items()]

    def by_status_mask(self, mask: int) -> list[tuple[int, int]]:
        """``(dtc, status)`` of the DTCs with ``status & mask & AVAILABILITY_MASK``."""
        m = _check_number(mask, "status mask") & AVAILABILITY_MASK
        with self.lock:
            return [(d, r.status) for d, r in self.records.items() if r.status & m]

    def count(self, mask: int) -> int:
        return len(self.by_status_mask(mask))

    def in_group(self, group: int) -> list[int]:
        """The DTCs a clear of ``group`` concerns (module docstring); ValueError for a
        group that is none of all, a supported DTC or :data:`GROUPS`."""
        _check_number(group, "groupOfDTC")
        if group == ALL_DTCS:
            return list(self.records)
        if group in self.records:
            return [group]
        if group in GROUPS:
            return [d for d in self.records if d & 0xC00000 == group]
        raise ValueError(f"groupOfDTC 0x{group:06X} is none of 0xFFFFFF (all), a supported "
                         f"DTC or a group ({', '.join(f'0x{g:06X}' for g in GROUPS)})")

    def clear(self, group: int = ALL_DTCS) -> list[int]:
        """Clear the DTCs of ``group`` (status 0x50, counters and snapshot forgotten);
        returns their numbers."""
        numbers = self.in_group(group)
        with self.lock:
            for d in numbers:
                r = self.records[d]
                r.status = Status.INITIAL
                r.failed_cycles = r.aging = r.occurrences = 0
                r.snapshot = None
            self.clears += 1
        return numbers

    def as_dict(self) -> dict:
        """The memory for a run's summary: ``{"0xC23587": {status, text, occurrences,
        snapshot}}``, the cycle and the clears."""
        with self.lock:
            dtcs = {f"0x{d:06X}": {"text": r.text, "code": dtc_text(d),
                                   "status": f"0x{r.status:02X}",
                                   "occurrences": r.occurrences, "snapshot": r.snapshot}
                    for d, r in self.records.items()}
        return {"dtcs": dtcs, "cycle": self.cycle, "clears": self.clears}
