"""Cyclic redundancy checks for serial frames, table-driven, no dependencies.

Each algorithm is a :class:`Crc` in the Rocksoft/Williams parameter model
(width, poly, init, refin, refout, xorout) as used by the CRC catalogue of
Greg Cook ("reveng"), and carries the catalogue's *check* value, the CRC of
the nine ASCII bytes ``b"123456789"``; :meth:`Crc.self_test` verifies it.

==================  =====  ======  ======  =====  ==========  ==========  =====
name                width  poly    init    refl   xorout      check       bytes
==================  =====  ======  ======  =====  ==========  ==========  =====
crc8 (CRC-8/SMBUS)  8      0x07    0x00    no     0x00        0xF4        --
crc8-maxim          8      0x31    0x00    yes    0x00        0xA1        --
crc8-sae-j1850      8      0x1D    0xFF    no     0xFF        0x4B        --
crc16-ccitt-false   16     0x1021  0xFFFF  no     0x0000      0x29B1      big
crc16-xmodem        16     0x1021  0x0000  no     0x0000      0x31C3      big
crc16-kermit        16     0x1021  0x0000  yes    0x0000      0x2189      little
crc16-modbus        16     0x8005  0xFFFF  yes    0x0000      0x4B37      little
crc32 (ISO-HDLC)    32     zlib    --      yes    0xFFFFFFFF  0xCBF43926  little
crc32c              32     0x1EDC6F41 ...  yes    0xFFFFFFFF  0xE3069283  little
==================  =====  ======  ======  =====  ==========  ==========  =====

``bytes`` is the order in which :meth:`Crc.append` puts the checksum after the
payload, the convention of the protocols that use each one (Modbus RTU sends
the low byte first, XMODEM the high byte first); pass ``byteorder=`` to
:meth:`Crc.with_byteorder` to change it.  CRC-32 is computed by
:func:`zlib.crc32` (C speed); the others by a 256-entry table in pure Python,
about 0.1-0.2 us per byte, enough for frames of a few hundred bytes at 1 kHz.

Limitations
-----------
Widths are multiples of 8 (8, 16, 24, 32, 64) and ``refin == refout``; this
covers the common serial-protocol CRCs.  No residue-based verification: the
checksum is recomputed over the payload and compared.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..errors import CRCError, FrameError

__all__ = ["Crc", "CATALOGUE", "get_crc"]


def _reflect(value: int, width: int) -> int:
    out = 0
    for _ in range(width):
        out = (out << 1) | (value & 1)
        value >>= 1
    return out


@dataclass(frozen=True)
class Crc:
    """One CRC algorithm (Rocksoft model) with a precomputed table.

    Examples
    --------
    >>> crc = get_crc("crc16-modbus")
    >>> hex(crc.compute(b"123456789"))
    '0x4b37'
    >>> crc.verify(crc.append(b"hello"))
    b'hello'
    """

    name: str
    width: int
    poly: int
    init: int
    refin: bool
    refout: bool
    xorout: int
    check: int
    byteorder: str = "big"
    _table: tuple[int, ...] = field(default=(), repr=False, compare=False)
    _fast: Callable[[bytes], int] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.width % 8 or not 8 <= self.width <= 64:
            raise ValueError(f"CRC {self.name}: width must be 8, 16, 24, 32 or 64, got "
                             f"{self.width}")
        if self.refin != self.refout:
            raise ValueError(f"CRC {self.name}: refin != refout is not supported")
        if self.byteorder not in ("big", "little"):
            raise ValueError(f"CRC {self.name}: byteorder must be 'big' or 'little', got "
                             f"{self.byteorder!r}")
        if not self._table:
            object.__setattr__(self, "_table", self._make_table())

    @property
    def nbytes(self) -> int:
        return self.width // 8

    def _make_table(self) -> tuple[int, ...]:
        w, mask = self.width, (1 << self.width) - 1
        table = []
        if self.refin:
            rpoly = _reflect(self.poly, w)
            for b in range(256):
                c = b
                for _ in range(8):
                    c = (c >> 1) ^ rpoly if c & 1 else c >> 1
                table.append(c)
        else:
            top = 1 << (w - 1)
            for b in range(256):
                c = b << (w - 8)
                for _ in range(8):
                    c = ((c << 1) ^ self.poly) if c & top else c << 1
                table.append(c & mask)
        return tuple(table)

    def compute(self, data: bytes | bytearray | memoryview) -> int:
        """The CRC of ``data``."""
        if self._fast is not None:
            return self._fast(data)
        t, w, mask = self._table, self.width, (1 << self.width) - 1
        if self.refin:
            crc = _reflect(self.init, w)
            for b in bytes(data):
                crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
        else:
            crc, shift = self.init, w - 8
            for b in bytes(data):
                crc = t[((crc >> shift) ^ b) & 0xFF] ^ ((crc << 8) & mask)
        return (crc ^ self.xorout) & mask

    def to_bytes(self, value: int) -> bytes:
        return value.to_bytes(self.nbytes, self.byteorder)

    def append(self, payload: bytes | bytearray) -> bytes:
        """``payload`` followed by its CRC (in :attr:`byteorder`)."""
        return bytes(payload) + self.to_bytes(self.compute(payload))

    def verify(self, frame: bytes | bytearray, where: str = "") -> bytes:
        """Return the payload of ``frame`` (payload + CRC), or raise :class:`CRCError`
        (:class:`FrameError` if the frame is shorter than the CRC itself)."""
        n = self.nbytes
        at = f"{where}: " if where else ""
        if len(frame) < n:
            raise FrameError(f"{at}frame of {len(frame)} byte(s) is shorter than its "
                             f"{self.name} ({n} bytes); check the framing and the CRC setting")
        payload = bytes(frame[:-n])
        received = int.from_bytes(frame[-n:], self.byteorder)
        expected = self.compute(payload)
        if received != expected:
            hexw = 2 * n
            raise CRCError(f"{at}{self.name} mismatch: frame carries 0x{received:0{hexw}X}, "
                           f"payload of {len(payload)} bytes gives 0x{expected:0{hexw}X}; "
                           f"line noise, a wrong baud rate, or a different CRC/byte order on "
                           f"the device", expected=expected, received=received)
        return payload

    def with_byteorder(self, byteorder: str) -> Crc:
        return replace(self, byteorder=byteorder)

    def self_test(self) -> bool:
        """True if the CRC of ``b"123456789"`` is the catalogue check value."""
        return self.compute(b"123456789") == self.check


def _zlib_crc32(data: bytes | bytearray | memoryview) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


CATALOGUE: dict[str, Crc] = {c.name: c for c in (
    Crc("crc8", 8, 0x07, 0x00, False, False, 0x00, 0xF4),
    Crc("crc8-maxim", 8, 0x31, 0x00, True, True, 0x00, 0xA1),
    Crc("crc8-sae-j1850", 8, 0x1D, 0xFF, False, False, 0xFF, 0x4B),  # AUTOSAR E2E P1/P11
    Crc("crc16-ccitt-false", 16, 0x1021, 0xFFFF, False, False, 0x0000, 0x29B1, "big"),
    Crc("crc16-xmodem", 16, 0x1021, 0x0000, False, False, 0x0000, 0x31C3, "big"),
    Crc("crc16-kermit", 16, 0x1021, 0x0000, True, True, 0x0000, 0x2189, "little"),
    Crc("crc16-modbus", 16, 0x8005, 0xFFFF, True, True, 0x0000, 0x4B37, "little"),
    Crc("crc32", 32, 0x04C11DB7, 0xFFFFFFFF, True, True, 0xFFFFFFFF, 0xCBF43926, "little",
        _fast=_zlib_crc32),
    Crc("crc32c", 32, 0x1EDC6F41, 0xFFFFFFFF, True, True, 0xFFFFFFFF, 0xE3069283, "little"),
)}

_ALIASES = {
    "crc8smbus": "crc8", "crc8atm": "crc8", "crc8maximdow": "crc8-maxim",
    "crc8dallas": "crc8-maxim", "crc8saej1850": "crc8-sae-j1850",
    "crc8autosar": "crc8-sae-j1850", "crc16ibm3740": "crc16-ccitt-false",
    "crc16autoccitt": "crc16-ccitt-false", "crc16ccitt": "crc16-ccitt-false",
    "crc16xmodem": "crc16-xmodem", "crc16kermit": "crc16-kermit", "crc16modbus": "crc16-modbus",
    "crc32isohdlc": "crc32", "crc32iso": "crc32", "crc32zlib": "crc32", "crc32castagnoli": "crc32c",
    "crc32iscsi": "crc32c",
}


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def get_crc(spec: str | Crc | None) -> Crc | None:
    """A :class:`Crc` from a catalogue name (case, ``-``, ``/`` and ``_`` ignored:
    ``"CRC-16/MODBUS"`` works), a :class:`Crc` (returned as is) or ``None``."""
    if spec is None or isinstance(spec, Crc):
        return spec
    key = _key(spec)
    by_key = {_key(n): n for n in CATALOGUE}
    name = by_key.get(key) or _ALIASES.get(key)
    if name is None:
        raise ValueError(f"unknown CRC {spec!r}; known: {', '.join(CATALOGUE)} (or build a "
                       f"hil.serial.crc.Crc from its catalogue parameters)")
    return CATALOGUE[name]
