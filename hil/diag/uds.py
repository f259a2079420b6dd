"""UDS (ISO 14229-1) services of a diagnostic server: request bytes in, response bytes out.

:class:`UdsHandler` answers one request at a time (:meth:`UdsHandler.handle`), with no
transport: :class:`hil.diag.server.UdsServer` carries the requests over ISO-TP.

========  ==============================  ===============================================
SID       service                         supported
========  ==============================  ===============================================
0x10      DiagnosticSessionControl        0x01 default, 0x03 extended; the response
                                          carries P2 = 50 ms and P2* = 5000 ms
0x3E      TesterPresent                   0x00 (keeps a non-default session open)
0x19      ReadDTCInformation              0x01 number of DTCs by status mask, 0x02 DTCs by
                                          status mask, 0x0A supported DTCs; with
                                          ``snapshot_dids``, 0x04 the snapshot of a DTC
                                          (record 0x01, or 0xFF: all, i.e. that one)
0x14      ClearDiagnosticInformation      groupOfDTC 0xFFFFFF, a DTC, a J2012 group
                                          (:data:`hil.diag.dtc.GROUPS`); extended session
                                          only
0x22      ReadDataByIdentifier            the handler's data identifiers, up to
                                          :data:`MAX_DIDS` per request
========  ==============================  ===============================================

Negative responses are ``0x7F SID NRC``:

====  ====================================  ==========================================
NRC   name                                  when
====  ====================================  ==========================================
0x11  serviceNotSupported                   any other SID
0x12  subFunctionNotSupported               a sub-function not in the table above
0x13  incorrectMessageLengthOrInvalidFormat a request of the wrong length for its service
                                            (0x22: an odd DID list, or more than
                                            :data:`MAX_DIDS`)
0x22  conditionsNotCorrect                  a data identifier whose value is not valid
                                            now (its source message is stale)
0x31  requestOutOfRange                     an unknown data identifier (any in the list),
                                            a groupOfDTC the memory does not know, a
                                            snapshot of an unknown DTC or record
0x7F  serviceNotSupportedInActiveSession    ClearDiagnosticInformation in the default
                                            session
====  ====================================  ==========================================

Sessions: the server starts in the default session; a non-default session falls back to
the default one after :data:`S3_SERVER_S` without a request (TesterPresent keeps it).  The
suppressPosRspMsgIndicationBit (0x80 of the sub-function) of 0x10 and 0x3E suppresses the
positive response.  The data identifier 0xF186 (ActiveDiagnosticSessionDataIdentifier)
reads the session.

Limitations: physical addressing only (no functional requests, so no suppressed negative
responses for them); no responsePending (0x78): every answer is immediate; no security
access, no communication control, no extended data records; one snapshot record per DTC
(number 0x01: the first failure since the clear, :meth:`hil.diag.dtc.FaultMemory.snapshot`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .dtc import AVAILABILITY_MASK, FaultMemory

__all__ = ["UdsHandler", "DataIdentifier", "ConditionsNotCorrect", "NRC", "SESSIONS",
           "S3_SERVER_S", "MAX_DIDS", "P2_MS", "P2_STAR_MS", "ACTIVE_SESSION_DID"]

#: the sessions: default and extended (0x02 programming is not supported)
SESSIONS = {0x01: "default", 0x03: "extended"}
#: a non-default session ends this long after the last request [s] (ISO 14229-2 S3server)
S3_SERVER_S = 5.0
#: the server's response time P2 and its extended P2* [ms] (in the 0x10 response)
P2_MS, P2_STAR_MS = 50, 5000
#: the most data identifiers one ReadDataByIdentifier request may ask for
MAX_DIDS = 8
#: ActiveDiagnosticSessionDataIdentifier (ISO 14229-1 C.1)
ACTIVE_SESSION_DID = 0xF186


class NRC:
    """Negative response codes used here (module docstring)."""

    SERVICE_NOT_SUPPORTED = 0x11
    SUB_FUNCTION_NOT_SUPPORTED = 0x12
    INCORRECT_LENGTH = 0x13
    CONDITIONS_NOT_CORRECT = 0x22
    REQUEST_OUT_OF_RANGE = 0x31
    SERVICE_NOT_SUPPORTED_IN_SESSION = 0x7F


class ConditionsNotCorrect(Exception):
    """Raised by a data identifier's ``read`` when its value is not valid now (NRC 0x22)."""


class _Negative(Exception):
    def __init__(self, nrc: int) -> None:
        super().__init__(nrc)
        self.nrc = nrc


@dataclass(frozen=True)
class DataIdentifier:
    """A data identifier: ``read()`` returns exactly ``size`` bytes (or raises
    :class:`ConditionsNotCorrect`)."""

    number: int
    size: int
    read: Callable[[], bytes]
    name: str = ""

    def __post_init__(self) -> None:
        if not 0 <= self.number <= 0xFFFF:
            raise ValueError(f"DataIdentifier {self.name!r}: number must be 0x0000..0xFFFF, "
                             f"got {self.number!r}")
        if self.size < 1:
            raise ValueError(f"DataIdentifier 0x{self.number:04X}: size must be >= 1 byte")


def _dtc_list(records: list[tuple[int, int]]) -> bytes:
    return b"".join(d.to_bytes(3, "big") + bytes([s & AVAILABILITY_MASK]) for d, s in records)


class UdsHandler:
    """The services of the module docstring on ``memory`` and ``dids``.

    Parameters
    ----------
    memory : FaultMemory
    dids : iterable of DataIdentifier
        0xF186 (the active session) is added unless given.
    clock : callable
        Seconds for the S3 timer (default ``time.monotonic``).
    snapshot_dids : callable, optional
        ``snapshot_dids(snapshot) -> [(did, data bytes)]``: a stored snapshot (a dict) as
        data identifiers, for ReadDTCInformation 0x04 (None: 0x04 is not supported).
    """

    def __init__(self, memory: FaultMemory, dids: Iterable[DataIdentifier] = (), *,
                 clock: Callable[[], float] = time.monotonic,
                 snapshot_dids: Callable[[dict], list] | None = None) -> None:
        if not isinstance(memory, FaultMemory):
            raise TypeError(f"UdsHandler: memory must be a FaultMemory, got {memory!r}")
        self.memory = memory
        self.dids: dict[int, DataIdentifier] = {}
        for d in dids:
            if not isinstance(d, DataIdentifier):
                raise TypeError(f"UdsHandler: dids must be DataIdentifier objects, got {d!r}")
            if d.number in self.dids:
                raise ValueError(f"UdsHandler: data identifier 0x{d.number:04X} given twice")
            self.dids[d.number] = d
        self.dids.setdefault(ACTIVE_SESSION_DID, DataIdentifier(
            ACTIVE_SESSION_DID, 1, lambda: bytes([self.session]), "active session"))
        self.clock = clock
        self.snapshot_dids = snapshot_dids
        self.session = 0x01
        self._last = clock()
        #: requests answered, per SID; negative responses, per NRC
        self.requests: dict[int, int] = {}
        self.negative: dict[int, int] = {}
        self.session_timeouts = 0
        self._services = {0x10: self._session_control, 0x3E: self._tester_present,
                          0x19: self._read_dtc, 0x14: self._clear, 0x22: self._read_did}

    # ------------------------------------------------------------ dispatch
    def expire(self) -> None:
        """Fall back to the default session when S3 has run out (module docstring)."""
        if self.session != 0x01 and self.clock() - self._last > S3_SERVER_S:
            self.session = 0x01
            self.session_timeouts += 1

    def handle(self, request: bytes) -> bytes | None:
        """The response to ``request`` (None: no response, a suppressed positive one or
        an empty request)."""
        if not request:
            return None
        self.expire()
        self._last = self.clock()
        sid = request[0]
        self.requests[sid] = self.requests.get(sid, 0) + 1
        service = self._services.get(sid)
        try:
            if service is None:
                raise _Negative(NRC.SERVICE_NOT_SUPPORTED)
            return service(bytes(request))
        except _Negative as neg:
            self.negative[neg.nrc] = self.negative.get(neg.nrc, 0) + 1
            return bytes([0x7F, sid, neg.nrc])

    @staticmethod
    def _length(req: bytes, n: int) -> None:
        if len(req) != n:
            raise _Negative(NRC.INCORRECT_LENGTH)

    # ------------------------------------------------------------ services
    def _session_control(self, req: bytes) -> bytes | None:
        if len(req) < 2:
            raise _Negative(NRC.INCORRECT_LENGTH)
        sub = req[1] & 0x7F
        if sub not in SESSIONS:
            raise _Negative(NRC.SUB_FUNCTION_NOT_SUPPORTED)
        self._length(req, 2)
        self.session = sub
        if req[1] & 0x80:
            return None
        return bytes([0x50, sub]) + P2_MS.to_bytes(2, "big") + \
            (P2_STAR_MS // 10).to_bytes(2, "big")

    def _tester_present(self, req: bytes) -> bytes | None:
        if len(req) < 2:
            raise _Negative(NRC.INCORRECT_LENGTH)
        if req[1] & 0x7F != 0x00:
            raise _Negative(NRC.SUB_FUNCTION_NOT_SUPPORTED)
        self._length(req, 2)
        return None if req[1] & 0x80 else b"\x7e\x00"

    def _read_dtc(self, req: bytes) -> bytes:
        if len(req) < 2:
            raise _Negative(NRC.INCORRECT_LENGTH)
        sub = req[1]
        head = bytes([0x59, sub, AVAILABILITY_MASK])
        if sub == 0x01:
            self._length(req, 3)
            n = self.memory.count(req[2])
            return head + b"\x01" + n.to_bytes(2, "big")  # format: ISO 14229-1
        if sub == 0x02:
            self._length(req, 3)
            return head + _dtc_list(self.memory.by_status_mask(req[2]))
        if sub == 0x0A:
            self._length(req, 2)
            return head + _dtc_list(self.memory.supported())
        if sub == 0x04 and self.snapshot_dids is not None:
            return self._snapshot(req)
        raise _Negative(NRC.SUB_FUNCTION_NOT_SUPPORTED)

    def _snapshot(self, req: bytes) -> bytes:
        """0x19 0x04: DTC, status, then record 0x01 (its DIDs) if one is stored."""
        self._length(req, 6)
        dtc, record = int.from_bytes(req[2:5], "big"), req[5]
        if dtc not in self.memory.records or record not in (0x01, 0xFF):
            raise _Negative(NRC.REQUEST_OUT_OF_RANGE)
        out = bytearray(b"\x59\x04" + req[2:5])
        out.append(self.memory.status(dtc) & AVAILABILITY_MASK)
        snap = self.memory.snapshot(dtc)
        if snap is not None:
            items = self.snapshot_dids(snap)
            out += bytes([0x01, len(items)])
            for did, data in items:
                out += did.to_bytes(2, "big") + bytes(data)
        return bytes(out)

    def _clear(self, req: bytes) -> bytes:
        self._length(req, 4)
        if self.session == 0x01:
            raise _Negative(NRC.SERVICE_NOT_SUPPORTED_IN_SESSION)
        try:
            self.memory.clear(int.from_bytes(req[1:4], "big"))
        except ValueError:
            raise _Negative(NRC.REQUEST_OUT_OF_RANGE) from None
        return b"\x54"

    def _read_did(self, req: bytes) -> bytes:
        n = len(req) - 1
        if n < 2 or n % 2 or n // 2 > MAX_DIDS:
            raise _Negative(NRC.INCORRECT_LENGTH)
        numbers = [int.from_bytes(req[i:i + 2], "big") for i in range(1, len(req), 2)]
        if any(x not in self.dids for x in numbers):
            raise _Negative(NRC.REQUEST_OUT_OF_RANGE)
        out = bytearray(b"\x62")
        for x in numbers:
            did = self.dids[x]
            try:
                data = bytes(did.read())
            except ConditionsNotCorrect:
                raise _Negative(NRC.CONDITIONS_NOT_CORRECT) from None
            if len(data) != did.size:
                raise RuntimeError(f"data identifier 0x{x:04X} ({did.name}) read {len(data)} "
                                   f"bytes, declared {did.size}: fix its read function")
            out += x.to_bytes(2, "big") + data
        return bytes(out)

    def stats(self) -> dict:
        return {"requests": {f"0x{k:02X}": v for k, v in self.requests.items()},
                "negative": {f"0x{k:02X}": v for k, v in self.negative.items()},
                "session": SESSIONS[self.session], "session_timeouts": self.session_timeouts}
