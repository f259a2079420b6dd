"""SLCAN (Lawicel ASCII) frames: the line format and the frame's length on the wire.

:func:`parse_frame` reads one frame command (``t T r R`` classic, ``d D b B`` CAN FD) into a
:class:`Frame`; :func:`frame_bits` counts its bits exactly (the stuff bits on the real bit
pattern, the CRC computed) and :func:`frame_time` turns them into seconds::

    bits = len(SOF .. CRC) + stuff_bits(SOF .. CRC) + 13
    # 13 = CRC delimiter 1 + ACK slot 1 + ACK delimiter 1 + EOF 7 + IFS 3
    # standard: SOF 1 + ID 11 + RTR 1 + IDE 1 + r0 1 + DLC 4 + 8*n data + CRC-15
    #   -> 47 + 8*n + stuffing (111..135 bits for 8 bytes)
    # extended: adds SRR 1 + IDE 1 + ID-B 18 + r1 1  -> 67 + 8*n + stuffing

CAN FD: the same dynamic stuffing over SOF .. data, then stuff count 4 + CRC-17/21 + 6/7
fixed stuff bits + CRC delimiter; with BRS the part after the BRS bit up to the CRC
delimiter runs at the data bitrate.  Used by :class:`hil.can.slcan_hub.SlcanHub`.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

__all__ = ["BITRATES", "FD_LENGTHS", "Frame", "btr_bitrate", "frame_bits", "frame_time",
           "parse_frame"]

#: ``S<n>`` -> nominal bitrate (python-can's table, Lawicel S0..S8 plus S9 = 83.3k).
BITRATES = {0: 10_000, 1: 20_000, 2: 50_000, 3: 100_000, 4: 125_000, 5: 250_000,
            6: 500_000, 7: 750_000, 8: 1_000_000, 9: 83_300}
FD_LENGTHS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64)
_HEX = frozenset(string.hexdigits)
_MAX_LINE = 200  # longest valid line: "B" + 8 + 1 + 128 = 138 characters


# ---------------------------------------------------------------- frames
@dataclass(frozen=True)
class Frame:
    """One parsed SLCAN frame command."""

    kind: str  # t T r R d D b B
    can_id: int
    dlc: int  # the DLC code (0..8 classic, 0..15 FD)
    data: bytes

    @property
    def extended(self) -> bool:
        return self.kind in "TRDB"

    @property
    def remote(self) -> bool:
        return self.kind in "rR"

    @property
    def fd(self) -> bool:
        return self.kind in "dDbB"

    @property
    def brs(self) -> bool:
        return self.kind in "bB"

    @property
    def line(self) -> str:
        """The normalised SLCAN line (without ``\\r``)."""
        ident = f"{self.can_id:08X}" if self.extended else f"{self.can_id:03X}"
        return f"{self.kind}{ident}{self.dlc:X}{self.data.hex().upper()}"

    @property
    def priority(self) -> tuple[int, int, int, int, int]:
        """Sort key of the arbitration field: lower wins the bus."""
        rtr = int(self.remote)
        if self.extended:  # base id, SRR (recessive), IDE (recessive), ID-B, RTR
            return (self.can_id >> 18, 1, 1, self.can_id & 0x3FFFF, rtr)
        return (self.can_id, rtr, 0, 0, 0)


def parse_frame(line: str) -> Frame | None:
    """Parse a frame command ``tIIIL..`` etc.; ``None`` if malformed."""
    if not line or line[0] not in "tTrRdDbB":
        return None
    kind = line[0]
    nid = 8 if kind in "TRDB" else 3
    head = line[1:nid + 2]
    if len(head) != nid + 1 or not _HEX.issuperset(line[1:]):
        return None
    can_id = int(line[1:nid + 1], 16)
    if can_id > (0x1FFFFFFF if nid == 8 else 0x7FF):
        return None
    dlc = int(line[nid + 1], 16)
    rest = line[nid + 2:]
    if kind in "rR":
        if dlc > 8 or rest:
            return None
        return Frame(kind, can_id, dlc, b"")
    if kind in "tT":
        if dlc > 8:
            return None
        n = dlc
    else:
        n = FD_LENGTHS[dlc]
    if len(rest) != 2 * n:
        return None
    return Frame(kind, can_id, dlc, bytes.fromhex(rest))


# ------------------------------------------------------------ bit timing
def _bits(value: int, width: int) -> list[int]:
    return [(value >> i) & 1 for i in range(width - 1, -1, -1)]


def _crc15(bits: list[int]) -> int:
    crc = 0
    for b in bits:
        nxt = b ^ ((crc >> 14) & 1)
        crc = (crc << 1) & 0x7FFF
        if nxt:
            crc ^= 0x4599
    return crc


def _stuff_positions(bits: list[int]) -> list[int]:
    """Indices (into ``bits``) after which a stuff bit is inserted (5 equal bits)."""
    out: list[int] = []
    last, run = -1, 0
    for i, b in enumerate(bits):
        if b == last:
            run += 1
        else:
            last, run = b, 1
        if run == 5:
            out.append(i)
            last, run = 1 - b, 1  # the stuff bit starts a new run
    return out


def frame_bits(frame: Frame | str) -> tuple[int, int]:
    """Bits of one frame on the wire: ``(nominal_bits, data_phase_bits)``.

    Classic frames are counted exactly (real CRC-15 and stuffing); CAN FD as
    described in the module docstring.  Includes the 3-bit interframe space.
    """
    f = parse_frame(frame) if isinstance(frame, str) else frame
    if f is None:
        raise ValueError(f"not an SLCAN frame: {frame!r}")
    data = [b for byte in f.data for b in _bits(byte, 8)]
    if f.extended:
        ident = _bits(f.can_id >> 18, 11) + [1, 1] + _bits(f.can_id & 0x3FFFF, 18)
    else:
        ident = _bits(f.can_id, 11)
    if not f.fd:
        ctrl = [int(f.remote), 0, 0]  # standard: RTR, IDE, r0; extended: RTR, r1, r0
        body = [0] + ident + ctrl + _bits(f.dlc, 4) + data
        body += _bits(_crc15(body), 15)
        return len(body) + len(_stuff_positions(body)) + 13, 0
    arb = [0] + ident + [0, 1, 0, int(f.brs)]  # SOF, id, RRS, FDF, res, BRS
    body = arb + [0] + _bits(f.dlc, 4) + data  # ESI, DLC, data
    stuffs = _stuff_positions(body)
    crc_part = 4 + (17 if len(f.data) <= 16 else 21) + (6 if len(f.data) <= 16 else 7) + 1
    if not f.brs:
        return len(body) + len(stuffs) + crc_part + 12, 0
    split = len(arb)
    nominal = split + sum(1 for i in stuffs if i < split) + 12  # + ACK, delim, EOF, IFS
    fast = len(body) - split + sum(1 for i in stuffs if i >= split) + crc_part
    return nominal, fast


def frame_time(frame: Frame | str, bitrate: float, data_bitrate: float | None = None) -> float:
    """Seconds one frame occupies the bus (see :func:`frame_bits`)."""
    nominal, fast = frame_bits(frame)
    return nominal / bitrate + (fast / (data_bitrate or bitrate) if fast else 0.0)


def btr_bitrate(btr0: int, btr1: int, f_clock: float = 8e6) -> float:
    """Bitrate of SJA1000 BTR0/BTR1 at ``f_clock`` (python-can's ``s`` convention)."""
    brp = (btr0 & 0x3F) + 1
    tseg1 = (btr1 & 0x0F) + 1
    tseg2 = ((btr1 >> 4) & 0x07) + 1
    return f_clock / (brp * (1 + tseg1 + tseg2))

