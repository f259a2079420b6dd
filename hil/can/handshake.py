"""The DBC check between nodes: each node says which database it uses, so a mismatch
(another version, a changed scaling) is found at the start, not as wrong values.

A node's :class:`~hil.bridges.CanReceive` answers a request on the bus; a node that
starts calls :func:`check_peer` before its run::

    check_peer(wire, db)        # raises DbcMismatch, or warns when no node answers

The frame (id :data:`DBC_ID` for a request, :data:`DBC_ANSWER_ID` for an answer: one
sender per id, as CAN wants and as the udp_multicast echo filter of
:class:`~hil.can.CanBackend` assumes; 8 bytes, little endian): the database's
:attr:`~hil.can.CanDatabase.fingerprint` (4 bytes), a CRC-32 of its ``VERSION`` text
truncated to 3 bytes, and a flag (1: a request, 0: an answer).

Limitations: the check compares what the fingerprint covers (ids, lengths, signal layouts,
scaling, ranges, version), not comments or node names; a peer that does not answer (no
receiving bridge, another tool) is reported by a warning, not an error.
"""

from __future__ import annotations

import time
import warnings
import zlib
from typing import Any

from cosim.errors import CosimWarning

from ..errors import HILError
from .backend import import_can

__all__ = ["DBC_ANSWER_ID", "DBC_ID", "DbcMismatch", "check_peer", "dbc_frame", "parse_dbc_frame"]

#: Arbitration ids of the DBC check's request and answer (free in the bundled DBCs; they
#: must be free in yours).
DBC_ID, DBC_ANSWER_ID = 0x7F2, 0x7F3


class DbcMismatch(HILError):
    """The nodes use different CAN databases."""


def dbc_frame(db: Any, request: bool) -> Any:
    """The frame announcing ``db`` (a request asks the peers to answer)."""
    v = zlib.crc32(db.version.encode()) & 0xFFFFFF
    data = db.fingerprint.to_bytes(4, "little") + v.to_bytes(3, "little") + bytes([request])
    return import_can().Message(arbitration_id=DBC_ID if request else DBC_ANSWER_ID,
                                is_extended_id=False, data=data)


def parse_dbc_frame(msg: Any) -> tuple[int, int, bool]:
    """``(fingerprint, version crc, request)`` of a DBC check frame."""
    d = bytes(msg.data)
    return int.from_bytes(d[:4], "little"), int.from_bytes(d[4:7], "little"), bool(d[7])


def mismatch_text(db: Any, fingerprint: int, where: str) -> str:
    return (f"{where}: the peer's CAN database differs from this node's {db.source} (version "
            f"{db.version!r}, fingerprint 0x{db.fingerprint:08X}; the peer's fingerprint "
            f"0x{fingerprint:08X}): ids, lengths, layouts or scaling disagree and every value "
            "would be decoded wrong; load the same DBC file on both nodes")


def check_peer(backend: Any, db: Any, *, timeout: float = 2.0) -> bool:
    """Ask the peers for their database and compare (module docstring); True when a peer
    answered with the same one.  Frames read meanwhile that are not the check are
    dropped (call it before the run)."""
    backend.write(dbc_frame(db, request=True), timeout=0.0)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        msg = backend.read(min(0.05, max(0.0, end - time.monotonic())))
        if msg is None or msg.arbitration_id not in (DBC_ID, DBC_ANSWER_ID) \
                or len(msg.data) < 8:
            continue
        fp, _, request = parse_dbc_frame(msg)
        if fp != db.fingerprint:
            raise DbcMismatch(mismatch_text(db, fp, backend.where))
        if not request:
            return True
    warnings.warn(f"{backend.where}: no node answered the CAN database check within "
                  f"{timeout:g} s; the peer's DBC is not verified (does it run a CanReceive?)",
                  CosimWarning, stacklevel=2)
    return False
