"""XCP packets on CAN (ASAM MCD-1 XCP 1.x): command codes, error codes, responses.

A CAN frame carries one XCP packet with no transport header (XCP on CAN): the first byte
is the packet identifier (PID).  Master to slave: a command (CTO, PID = the command code
0xC0..0xFF).  Slave to master: a positive response ``FF ...``, an error ``FE code``, an
event ``FD``, or a data-acquisition packet (DTO, PID = the absolute ODT number
``0x00..0xFB``, then the timestamp in the first ODT of a list with timestamps, then the
ODT's bytes).  ``MAX_CTO = MAX_DTO = 8`` (classic CAN).  Multi-byte fields are Intel
(little-endian): the byte order the slave announces at CONNECT.

This module is pure (bytes in, bytes out): :mod:`hil.xcp.slave` holds the state.
"""

from __future__ import annotations

import struct

from ..errors import HILError

#: Classic CAN: a CTO and a DTO are at most 8 bytes.
MAX_CTO = 8
MAX_DTO = 8
#: The protocol and transport layer versions announced at CONNECT (XCP 1.x).
PROTOCOL_LAYER_VERSION = 1
TRANSPORT_LAYER_VERSION = 1

PID_RES, PID_ERR, PID_EV = 0xFF, 0xFE, 0xFD

#: Command codes (the subset this slave serves; every other code: ERR_CMD_UNKNOWN).
CMD = {
    "CONNECT": 0xFF, "DISCONNECT": 0xFE, "GET_STATUS": 0xFD, "SYNCH": 0xFC,
    "GET_COMM_MODE_INFO": 0xFB, "GET_ID": 0xFA, "SET_MTA": 0xF6, "UPLOAD": 0xF5,
    "SHORT_UPLOAD": 0xF4, "DOWNLOAD": 0xF0, "SET_DAQ_PTR": 0xE2, "WRITE_DAQ": 0xE1,
    "SET_DAQ_LIST_MODE": 0xE0, "GET_DAQ_LIST_MODE": 0xDF, "START_STOP_DAQ_LIST": 0xDE,
    "START_STOP_SYNCH": 0xDD, "GET_DAQ_CLOCK": 0xDC, "GET_DAQ_PROCESSOR_INFO": 0xDA,
    "GET_DAQ_RESOLUTION_INFO": 0xD9, "GET_DAQ_EVENT_INFO": 0xD7, "FREE_DAQ": 0xD6,
    "ALLOC_DAQ": 0xD5, "ALLOC_ODT": 0xD4, "ALLOC_ODT_ENTRY": 0xD3,
}
CMD_NAMES = {v: k for k, v in CMD.items()}

#: Error codes (XCP 1.x, table "error codes").
ERR = {
    "ERR_CMD_SYNCH": 0x00, "ERR_CMD_BUSY": 0x10, "ERR_DAQ_ACTIVE": 0x11,
    "ERR_CMD_UNKNOWN": 0x20, "ERR_CMD_SYNTAX": 0x21, "ERR_OUT_OF_RANGE": 0x22,
    "ERR_WRITE_PROTECTED": 0x23, "ERR_ACCESS_DENIED": 0x24, "ERR_ACCESS_LOCKED": 0x25,
    "ERR_MODE_NOT_VALID": 0x27, "ERR_SEQUENCE": 0x29, "ERR_DAQ_CONFIG": 0x2A,
    "ERR_MEMORY_OVERFLOW": 0x30, "ERR_GENERIC": 0x31,
}
ERR_NAMES = {v: k for k, v in ERR.items()}

#: CONNECT's RESOURCE byte: CAL/PAG and DAQ (no STIM, no PGM).
RESOURCE_CAL_PAG, RESOURCE_DAQ = 0x01, 0x04
#: COMM_MODE_BASIC: Intel byte order, byte granularity, slave block mode, optional info.
COMM_MODE_SLAVE_BLOCK, COMM_MODE_OPTIONAL = 0x40, 0x80
#: SESSION_STATUS bit: DAQ running.
SESSION_DAQ_RUNNING = 0x40
#: SET_DAQ_LIST_MODE bits.
DAQ_MODE_TIMESTAMP, DAQ_MODE_DIRECTION_STIM, DAQ_MODE_PID_OFF = 0x10, 0x02, 0x20
#: DAQ timestamp unit codes (GET_DAQ_RESOLUTION_INFO) in seconds per unit.
TIMESTAMP_UNITS = {0: 1e-9, 1: 1e-8, 2: 1e-7, 3: 1e-6, 4: 1e-5, 5: 1e-4, 6: 1e-3,
                   7: 1e-2, 8: 1e-1, 9: 1.0}
#: Event channel time units (GET_DAQ_EVENT_INFO) in seconds per unit (same code table).
EVENT_UNITS = TIMESTAMP_UNITS


class XcpError(HILError):
    """A command the slave refuses: ``code`` is the XCP error code sent back (``ERR_*``)."""

    def __init__(self, name: str, message: str) -> None:
        if name not in ERR:
            raise ValueError(f"unknown XCP error name {name!r}; known: {sorted(ERR)}")
        super().__init__(f"{name}: {message}")
        self.name, self.code = name, ERR[name]


def positive(*payload: int | bytes) -> bytes:
    """``FF`` then the payload (ints are bytes 0..255, bytes are copied)."""
    out = bytearray([PID_RES])
    for p in payload:
        out += p if isinstance(p, (bytes, bytearray)) else bytes([p & 0xFF])
    if len(out) > MAX_CTO:
        raise ValueError(f"XCP response of {len(out)} bytes exceeds MAX_CTO = {MAX_CTO}")
    return bytes(out)


def error(code: int) -> bytes:
    """``FE code``: the error packet."""
    return bytes([PID_ERR, code & 0xFF])


def u16(x: int) -> bytes:
    return struct.pack("<H", x & 0xFFFF)


def u32(x: int) -> bytes:
    return struct.pack("<I", x & 0xFFFFFFFF)


def need(cto: bytes, n: int) -> None:
    """A command shorter than its fixed part: ERR_CMD_SYNTAX."""
    if len(cto) < n:
        name = CMD_NAMES.get(cto[0], f"0x{cto[0]:02X}") if cto else "(empty)"
        raise XcpError("ERR_CMD_SYNTAX", f"{name} needs {n} bytes, got {len(cto)}")


def word(cto: bytes, at: int) -> int:
    return struct.unpack_from("<H", cto, at)[0]


def dword(cto: bytes, at: int) -> int:
    return struct.unpack_from("<I", cto, at)[0]


def connect_response(resource: int, comm_mode_basic: int) -> bytes:
    """CONNECT: ``FF RESOURCE COMM_MODE_BASIC MAX_CTO MAX_DTO(2) PL_VER TL_VER``."""
    return positive(resource, comm_mode_basic, MAX_CTO, u16(MAX_DTO), PROTOCOL_LAYER_VERSION,
                    TRANSPORT_LAYER_VERSION)


def daq_processor_info(max_daq: int, max_event: int, timestamps: bool = True) -> bytes:
    """GET_DAQ_PROCESSOR_INFO: dynamic configuration, prescaler, timestamps; key byte:
    absolute ODT number, one address extension for all, default optimisation."""
    props = 0x01 | 0x02 | (0x10 if timestamps else 0)
    return positive(props, u16(max_daq), u16(max_event), 0, 0x00)


def daq_resolution_info(max_entry: int, ts_size: int, ts_unit: int, ts_ticks: int) -> bytes:
    """GET_DAQ_RESOLUTION_INFO: granularity 1 byte, ``max_entry`` bytes per ODT entry, the
    timestamp mode (size, not fixed, unit) and ticks per timestamp unit."""
    mode = (ts_size & 0x07) | ((ts_unit & 0x0F) << 4)
    return positive(1, max_entry, 1, 0, mode, u16(ts_ticks))


def event_info(name_len: int, cycle: int, unit: int, max_lists: int = 0xFF) -> bytes:
    """GET_DAQ_EVENT_INFO: a DAQ event (no STIM), ``cycle`` x unit ``unit``."""
    return positive(0x04, max_lists, name_len, cycle, unit, 0)


def event_cycle(period_s: float) -> tuple[int, int]:
    """``(cycle, unit)``: the period as a cycle count 1..255 in the finest unit that
    holds it exactly (16 ms: 160 x 100 us; 1 ms: 100 x 10 us; 250 us: 250 x 1 us)."""
    for unit in sorted(EVENT_UNITS):
        n = period_s / EVENT_UNITS[unit]
        if abs(n - round(n)) < 1e-6 * max(1.0, n) and 1 <= round(n) <= 255:
            return int(round(n)), unit
    raise ValueError(f"event period {period_s!r} s is not n x 10^k s with n in 1..255")


def check_ext(ext: int) -> None:
    """Only address extension 0 exists: another is ERR_OUT_OF_RANGE."""
    if ext != 0:
        raise XcpError("ERR_OUT_OF_RANGE", f"address extension {ext} (only 0)")
