"""The CAN identifiers a rig uses besides its DBC's, and the check that none collide.

==========  ===========================================  ==================================
id          what                                         defined in
==========  ===========================================  ==================================
the DBC's   the application messages (the ACC DBC:       the rig file's ``dbc``
            RADAR 0x100, EGO 0x101, ACC_CMD 0x200)
0x7E0       UDS requests (tester -> ECU, ISO-TP)          :data:`hil.diag.server.REQUEST_ID`
0x7E8       UDS responses (ECU -> tester)                 :data:`hil.diag.server.RESPONSE_ID`
0x6F0       XCP commands (master -> slave)                :data:`hil.xcp.can_port.CMD_ID`
0x6F1       XCP responses and DAQ (slave -> master)       :data:`hil.xcp.can_port.RES_ID`
0x7F0/0x7F1 lock-step SYNC / ACK                          :mod:`hil.can.lockstep`
0x7F2/0x7F3 the DBC handshake and its answer              :mod:`hil.can.handshake`
0x7F4       end of session                                :mod:`hil.can.session`
0x5A5       the bench's flood (no rig's: a load only)     :data:`FLOOD_ID`
==========  ===========================================  ==================================

A frame on an id of another protocol is not harmless: the UDS server's ISO-TP stack
takes every frame on 0x7E0 for a request (a flood there logged "Received invalid CAN
frame" per frame), a DBC message on 0x6F1 would be read as XCP.  :func:`check_ids` raises
:class:`IdCollision` naming both owners; a rig checks its buses' DBCs against the ids of
the parts it configures when it starts (:mod:`hil.testing.rig_loop`).

Limitations: 11-bit (standard) ids only (the DBC's extended ids are not compared); the
default ids (a rig whose ``[uds]``/``[xcp]`` args move them is checked on the defaults).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import HILError

__all__ = ["FLOOD_ID", "IdCollision", "reserved_ids", "dbc_ids", "check_ids"]

#: the bench's flood (bench/hil_soak.py): an id no rig uses
FLOOD_ID = 0x5A5


class IdCollision(HILError, ValueError):
    """Two users of one CAN id (the message names both and what to change)."""


def reserved_ids(parts: Iterable[str] = ("uds", "xcp", "session", "flood")) -> dict[int, str]:
    """``{id: owner}`` of the non-DBC ids of ``parts`` (module docstring)."""
    from ..can.handshake import DBC_ANSWER_ID, DBC_ID
    from ..can.lockstep import ACK_ID, SYNC_ID
    from ..can.session import END_ID
    from ..diag.server import REQUEST_ID, RESPONSE_ID
    from ..xcp.can_port import CMD_ID, RES_ID
    table = {"uds": {REQUEST_ID: "UDS request", RESPONSE_ID: "UDS response"},
             "xcp": {CMD_ID: "XCP command", RES_ID: "XCP response/DAQ"},
             "session": {SYNC_ID: "lock-step SYNC", ACK_ID: "lock-step ACK",
                         DBC_ID: "DBC handshake", DBC_ANSWER_ID: "DBC handshake answer",
                         END_ID: "end of session"},
             "flood": {FLOOD_ID: "bench flood"}}
    out: dict[int, str] = {}
    for p in parts:
        for i, owner in table[p].items():
            if i in out:
                raise IdCollision(f"CAN id 0x{i:03X}: both {out[i]} and {owner}")
            out[i] = owner
    return out


def dbc_ids(db: Any) -> dict[int, str]:
    """``{id: "DBC message NAME"}`` of a :class:`hil.can.CanDatabase` (standard ids)."""
    out = {}
    for m in db.message_names:
        msg = db.message(m)
        if not msg.is_extended_frame:
            out[int(msg.frame_id)] = f"DBC message {m}"
    return out


def check_ids(db: Any, parts: Iterable[str] = ("uds", "xcp", "session", "flood"),
              where: str = "") -> dict[int, str]:
    """Every id of the DBC ``db`` and of ``parts``, ``{id: owner}``; :class:`IdCollision`
    when two share one."""
    ids = reserved_ids(parts)
    for i, owner in dbc_ids(db).items():
        if i in ids:
            raise IdCollision(f"{where + ': ' if where else ''}CAN id 0x{i:03X} is both "
                              f"{owner} and the {ids[i]}: move the DBC's message to a free "
                              "id (hil.testing.can_ids lists the ids in use)")
        ids[i] = owner
    return ids
