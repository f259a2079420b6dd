"""Framing of byte streams: COBS, SLIP, ASCII lines; fixed binary layouts.

A serial link carries a byte stream; framing cuts it into frames and makes a
frame boundary recoverable after line noise or a reconnect (resynchronisation
happens at the next delimiter).  Each :class:`Framing` has two sides:

* :meth:`Framing.encode` turns one payload into wire bytes (delimiters
  included);
* :meth:`Framing.feed` takes whatever bytes a read returned (any split: half
  a frame, three frames and a half) and returns the complete frame *bodies*
  seen so far (or a :class:`~hil.errors.FrameError` for an overlong frame);
  :meth:`Framing.decode` turns a body into the payload or raises
  :class:`~hil.errors.FrameError`.

Layers, writing: ``payload`` -> :class:`Layout` pack -> CRC append -> framing
encode; reading the other way round.

=========================  ================================================
framing                    wire format
=========================  ================================================
:class:`CobsFraming`       COBS (Cheshire & Baker, IEEE/ACM ToN 1999) then
                           one ``0x00`` delimiter.  Overhead: 1 byte per 254
                           plus the delimiter; no zero byte inside a frame.
:class:`SlipFraming`       SLIP (RFC 1055): ``END`` (0xC0) before and after,
                           ``0xC0`` -> ``DB DC``, ``0xDB`` -> ``DB DD``.
:class:`LineFraming`       ASCII text ended by ``\\n`` (``\\r\\n`` accepted);
                           optional decoding to ``str``.
=========================  ================================================

:class:`Layout` is a fixed binary record declared as a list of
:class:`Field` (name, :mod:`struct` code, scale, offset, unit); physical value
= raw * scale + offset, as in a CAN DBC signal.

Limitations
-----------
* No length-prefixed or sync-word framing (fixed-size packets behind a header
  without a delimiter): resynchronising those needs feedback from the CRC to
  the deframer; use COBS or SLIP where the protocol can be chosen.
* Layouts cover whole-byte fields only (no bit fields; use a ``B``/``H``
  field and mask it) and a single byte order per layout.
* An overlong frame (more than ``max_frame`` bytes without a delimiter) is
  reported once and discarded up to the next delimiter.
"""

from __future__ import annotations

import abc
import copy
import math
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cosim.units import parse_unit

from ..errors import FrameError, LayoutError

__all__ = ["cobs_encode", "cobs_decode", "slip_encode", "slip_decode", "Framing", "CobsFraming",
           "SlipFraming", "LineFraming", "make_framing", "Field", "Layout"]


# --------------------------------------------------------------------- COBS
def cobs_encode(data: bytes | bytearray | memoryview) -> bytes:
    """COBS-encode ``data`` (no delimiter added); the result contains no zero byte.

    A run of 254 non-zero bytes at the very end is not followed by a ``01``
    code (the minimal encoding, as in the examples of the COBS paper and of
    Wikipedia); :func:`cobs_decode` accepts both forms.

    Examples
    --------
    >>> cobs_encode(b"\\x11\\x22\\x00\\x33").hex(" ")
    '03 11 22 02 33'
    """
    out = bytearray()
    chunks = bytes(data).split(b"\x00")
    last = len(chunks) - 1
    for i, chunk in enumerate(chunks):
        pos, n = 0, len(chunk)
        while n - pos >= 254:
            out.append(0xFF)
            out += chunk[pos:pos + 254]
            pos += 254
        if pos and pos == n and i == last:
            break  # data ends right after a full block: no 01 code needed
        out.append(n - pos + 1)
        out += chunk[pos:]
    return bytes(out)


def cobs_decode(data: bytes | bytearray | memoryview) -> bytes:
    """Decode one COBS frame (without its delimiter); :class:`FrameError` if malformed."""
    data = bytes(data)
    out = bytearray()
    i, n = 0, len(data)
    if n == 0:
        raise FrameError("empty COBS frame (a valid one has at least its code byte)")
    while i < n:
        code = data[i]
        if code == 0:
            raise FrameError(f"zero byte at offset {i} inside a COBS frame of {n} bytes; "
                             f"the sender is not COBS-encoding, or bytes were lost")
        end = i + code
        if end > n:
            raise FrameError(f"COBS code {code} at offset {i} runs past the end of the "
                             f"{n}-byte frame: frame truncated (bytes lost or corrupted)")
        block = data[i + 1:end]
        if 0 in block:
            raise FrameError(f"zero byte inside a COBS block at offset {i + 1 + block.index(0)}")
        out += block
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


# --------------------------------------------------------------------- SLIP
SLIP_END, SLIP_ESC, SLIP_ESC_END, SLIP_ESC_ESC = 0xC0, 0xDB, 0xDC, 0xDD
_BAD_ESC = re.compile(rb"\xDB(?![\xDC\xDD])")


def slip_encode(data: bytes | bytearray | memoryview) -> bytes:
    """SLIP-escape ``data`` (no ``END`` bytes added)."""
    return bytes(data).replace(b"\xDB", b"\xDB\xDD").replace(b"\xC0", b"\xDB\xDC")


def slip_decode(data: bytes | bytearray | memoryview) -> bytes:
    """Undo SLIP escaping of one frame body; :class:`FrameError` on a bad escape."""
    data = bytes(data)
    if b"\xC0" in data:
        raise FrameError(f"SLIP END byte at offset {data.index(0xC0)} inside a frame body")
    m = _BAD_ESC.search(data)
    if m:
        nxt = data[m.start() + 1:m.start() + 2].hex() or "end of frame"
        raise FrameError(f"SLIP ESC (0xDB) at offset {m.start()} followed by {nxt}, not by "
                         f"0xDC or 0xDD: corrupted frame")
    return data.replace(b"\xDB\xDC", b"\xC0").replace(b"\xDB\xDD", b"\xDB")


# ------------------------------------------------------------ stream framing
class Framing(abc.ABC):
    """A delimiter-based framing with an incremental deframer (see the module doc).

    Parameters
    ----------
    max_frame : int
        Largest accepted frame body in bytes; longer ones are reported as a
        :class:`FrameError` and discarded up to the next delimiter.
    """

    name: str = "framing"
    delimiter: bytes = b"\x00"

    def __init__(self, max_frame: int = 4096) -> None:
        if max_frame < 1:
            raise ValueError(f"{self.name} framing: max_frame must be >= 1, got {max_frame}")
        self.max_frame = max_frame
        self._buf = bytearray()
        self._discarding = False

    @abc.abstractmethod
    def encode(self, payload: Any) -> bytes:
        """Wire bytes of one frame, delimiters included."""

    @abc.abstractmethod
    def decode(self, body: bytes) -> Any:
        """Payload of one frame body (delimiters removed); :class:`FrameError` if bad."""

    def feed(self, data: bytes | bytearray) -> list[bytes | FrameError]:
        """Append received bytes; return the frame bodies completed by them."""
        buf = self._buf
        buf += data
        out: list[bytes | FrameError] = []
        d, start = self.delimiter, 0
        while True:
            j = buf.find(d, start)
            if j < 0:
                break
            body = bytes(buf[start:j])
            start = j + len(d)
            if self._discarding:
                self._discarding = False  # the tail of an overlong frame
            elif body:  # empty bodies: back-to-back delimiters, or a leading one
                out.append(body)
        del buf[:start]
        if len(buf) > self.max_frame and not self._discarding:
            out.append(FrameError(f"{self.name} frame longer than max_frame={self.max_frame} "
                                  f"bytes without a delimiter: discarded up to the next one; "
                                  f"check the framing setting or raise max_frame"))
            self._discarding = True
        if self._discarding:
            buf.clear()
        return out

    def reset(self) -> None:
        """Forget a partial frame (after a reconnect or a flush)."""
        self._buf.clear()
        self._discarding = False

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame held back."""
        return len(self._buf)

    def clone(self) -> Framing:
        """Same configuration, empty stream state."""
        new = copy.copy(self)
        new._buf = bytearray()
        new._discarding = False
        return new

    def __repr__(self) -> str:
        return f"{type(self).__name__}(max_frame={self.max_frame})"


class CobsFraming(Framing):
    """COBS-encoded frames, each followed by one zero byte."""

    name = "cobs"
    delimiter = b"\x00"

    def encode(self, payload: bytes) -> bytes:
        return cobs_encode(payload) + b"\x00"

    def decode(self, body: bytes) -> bytes:
        return cobs_decode(body)


class SlipFraming(Framing):
    """SLIP frames (RFC 1055), ``END`` sent before and after each frame."""

    name = "slip"
    delimiter = b"\xC0"

    def encode(self, payload: bytes) -> bytes:
        return b"\xC0" + slip_encode(payload) + b"\xC0"

    def decode(self, body: bytes) -> bytes:
        return slip_decode(body)


class LineFraming(Framing):
    """Text lines ended by ``terminator``; a ``\\r`` before it is stripped.

    With ``encoding`` (e.g. ``"ascii"``) payloads are ``str`` both ways, and a
    line that does not decode is a :class:`FrameError`; without, ``bytes``.
    """

    name = "lines"

    def __init__(self, terminator: bytes = b"\n", encoding: str | None = None,
                 max_frame: int = 4096) -> None:
        super().__init__(max_frame)
        if not terminator:
            raise ValueError("LineFraming: terminator must not be empty")
        self.delimiter = terminator
        self.encoding = encoding

    def encode(self, payload: str | bytes) -> bytes:
        if isinstance(payload, str):
            payload = payload.encode(self.encoding or "ascii")
        if self.delimiter in payload:
            raise ValueError(f"line payload {payload[:40]!r} contains the terminator "
                             f"{self.delimiter!r}; split it or use COBS/SLIP framing")
        return bytes(payload) + self.delimiter

    def decode(self, body: bytes) -> str | bytes:
        if body.endswith(b"\r"):
            body = body[:-1]
        if self.encoding is None:
            return body
        try:
            return body.decode(self.encoding)
        except UnicodeDecodeError as exc:
            raise FrameError(f"line {body[:40]!r} is not valid {self.encoding}: {exc.reason} "
                             f"at offset {exc.start}; wrong baud rate or binary data on a "
                             f"text link") from exc


_FRAMINGS: dict[str, type[Framing]] = {"cobs": CobsFraming, "slip": SlipFraming,
                                       "lines": LineFraming}


def make_framing(spec: str | Framing) -> Framing:
    """A framing from a name (``"cobs"``, ``"slip"``, ``"lines"``) or an instance
    (returned as a fresh :meth:`~Framing.clone`, so two ends never share state)."""
    if isinstance(spec, Framing):
        return spec.clone()
    try:
        return _FRAMINGS[spec]()
    except (KeyError, TypeError):
        raise ValueError(f"unknown framing {spec!r}; choose one of {', '.join(_FRAMINGS)} or "
                         f"pass a hil.serial.framing.Framing instance") from None


# ---------------------------------------------------------- fixed layouts
_INT_CODES = set("bBhHiIlLqQ")
_FLOAT_CODES = set("efd")
_CODE = re.compile(r"^(\d*)([bBhHiIlLqQefd?sx])$")


@dataclass(frozen=True)
class Field:
    """One field of a fixed binary :class:`Layout`.

    Parameters
    ----------
    name : str or None
        Field name; ``None`` only for padding (``fmt="3x"``).
    fmt : str
        One :mod:`struct` code: ``b B h H i I l L q Q`` (integers), ``e f d``
        (floats), ``?`` (bool), ``Ns`` (N raw bytes), ``Nx`` (N pad bytes).
    scale, offset : float
        physical = raw * scale + offset (numeric fields only).
    unit : str
        Unit of the physical value, checked by :func:`cosim.units.parse_unit`.
    """

    name: str | None
    fmt: str
    scale: float = 1.0
    offset: float = 0.0
    unit: str = ""
    doc: str = ""

    def __post_init__(self) -> None:
        m = _CODE.match(self.fmt)
        if not m:
            raise LayoutError(f"field {self.name!r}: struct code {self.fmt!r} not supported; "
                              f"use one of b B h H i I l L q Q e f d ? Ns Nx")
        count, code = m.groups()
        if count and code not in "sx":
            raise LayoutError(f"field {self.name!r}: a repeat count ({self.fmt!r}) is only "
                              f"allowed for 's' and 'x'; declare one field per value")
        if (code == "x") != (self.name is None):
            raise LayoutError(f"field {self.name!r} ({self.fmt!r}): padding ('x') has no name, "
                              f"every other field needs one")
        if self.scale == 0 or not math.isfinite(self.scale) or not math.isfinite(self.offset):
            raise LayoutError(f"field {self.name!r}: scale must be finite and non-zero, offset "
                              f"finite (got scale={self.scale}, offset={self.offset})")
        if (self.scale != 1.0 or self.offset != 0.0) and code not in _INT_CODES | _FLOAT_CODES:
            raise LayoutError(f"field {self.name!r}: scale/offset need a numeric code, not "
                              f"{self.fmt!r}")
        parse_unit(self.unit)  # raises cosim.errors.UnitError with the valid symbols

    @property
    def code(self) -> str:
        return self.fmt[-1]

    @property
    def scaled(self) -> bool:
        return self.scale != 1.0 or self.offset != 0.0

    def raw_range(self) -> tuple[int, int]:
        bits = 8 * struct.calcsize("<" + self.code)
        if self.code.islower():
            return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        return 0, (1 << bits) - 1

    def to_raw(self, value: Any) -> Any:
        code = self.code
        if code in _INT_CODES:
            try:
                r = (float(value) - self.offset) / self.scale if self.scaled else value
                raw = round(r) if self.scaled or isinstance(r, float) else int(r)
            except (TypeError, ValueError, OverflowError) as exc:
                raise LayoutError(f"field {self.name!r}: {value!r} is not a number") from exc
            lo, hi = self.raw_range()
            if not lo <= raw <= hi:
                unit = f" {self.unit}" if self.unit else ""
                phys_lo, phys_hi = sorted((lo * self.scale + self.offset,
                                           hi * self.scale + self.offset))
                raise LayoutError(f"field {self.name!r}: {value}{unit} -> raw {raw} does not fit "
                                  f"'{code}' [{lo}, {hi}], i.e. [{phys_lo:g}, {phys_hi:g}]{unit}; "
                                  f"clamp the value or change the scale or the field type")
            return raw
        if code in _FLOAT_CODES:
            try:
                return (float(value) - self.offset) / self.scale if self.scaled else float(value)
            except (TypeError, ValueError) as exc:
                raise LayoutError(f"field {self.name!r}: {value!r} is not a number") from exc
        if code == "?":
            return bool(value)
        if not isinstance(value, bytes | bytearray):  # "s"
            raise LayoutError(f"field {self.name!r} ({self.fmt}): expects bytes, got "
                              f"{type(value).__name__}")
        n = int(self.fmt[:-1] or 1)
        if len(value) > n:
            raise LayoutError(f"field {self.name!r}: {len(value)} bytes do not fit {self.fmt}")
        return bytes(value)

    def from_raw(self, raw: Any) -> Any:
        if self.scaled:
            return raw * self.scale + self.offset
        return raw


class Layout:
    """A fixed binary record: an ordered list of :class:`Field`.

    Parameters
    ----------
    fields : sequence of Field or (name, fmt[, scale[, offset[, unit]]]) tuples
    byteorder : {"<", ">", "!", "="}
        Little endian (default), big endian, network (= big), native order
        without alignment.  Native alignment (``"@"``) is refused: it inserts
        hidden padding.
    name : str, optional
        For messages.

    Examples
    --------
    >>> imu = Layout([Field("seq", "H"), Field("rate", "h", scale=0.01, unit="rad/s"),
    ...               Field("temp", "b", offset=20.0, unit="degC")], name="imu")
    >>> imu.size
    5
    >>> imu.unpack(imu.pack(seq=7, rate=-1.5, temp=25.0))
    {'seq': 7, 'rate': -1.5, 'temp': 25.0}
    """

    def __init__(self, fields: Sequence[Field | tuple], byteorder: str = "<",
                 name: str = "") -> None:
        if byteorder not in ("<", ">", "!", "="):
            raise LayoutError(f"layout {name!r}: byteorder must be '<', '>', '!' or '=', got "
                              f"{byteorder!r}")
        fs = [f if isinstance(f, Field) else Field(*f) for f in fields]
        names = [f.name for f in fs if f.name is not None]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise LayoutError(f"layout {name!r}: duplicate field name(s) {dup}")
        if not names:
            raise LayoutError(f"layout {name!r}: no named field")
        self.fields: tuple[Field, ...] = tuple(fs)
        self.byteorder = byteorder
        self.name = name
        self._struct = struct.Struct(byteorder + "".join(f.fmt for f in fs))
        self._values = tuple(f for f in fs if f.name is not None)
        self.names: tuple[str, ...] = tuple(names)

    @property
    def size(self) -> int:
        return self._struct.size

    @property
    def units(self) -> dict[str, str]:
        return {f.name: f.unit for f in self._values}

    def _label(self) -> str:
        return f"layout {self.name!r}" if self.name else "layout"

    def pack(self, values: Mapping[str, Any] | None = None, /, **kw: Any) -> bytes:
        """Bytes of one record from physical values (a mapping and/or keywords)."""
        vals = dict(values or {}, **kw)
        if vals.keys() != set(self.names):
            unknown = sorted(set(vals) - set(self.names))
            missing = [n for n in self.names if n not in vals]
            parts = []
            if unknown:
                parts.append(f"unknown field(s) {unknown}")
            if missing:
                parts.append(f"missing field(s) {missing}")
            raise LayoutError(f"{self._label()}.pack(): {'; '.join(parts)}; fields are "
                              f"{list(self.names)}")
        return self._struct.pack(*(f.to_raw(vals[f.name]) for f in self._values))

    def unpack(self, data: bytes | bytearray | memoryview) -> dict[str, Any]:
        """Physical values of one record; :class:`FrameError` if the size is wrong."""
        if len(data) != self.size:
            raise FrameError(f"{self._label()} expects {self.size} bytes, the frame has "
                             f"{len(data)}; the device sends another record or the framing/CRC "
                             f"setting differs")
        raw = self._struct.unpack(data)
        return {f.name: f.from_raw(r) for f, r in zip(self._values, raw)}

    def describe(self) -> str:
        """A table of the fields: byte offset, name, code, scale, offset, unit."""
        rows = [f"{self._label()}: {self.size} bytes, byte order {self.byteorder!r}",
                f"  {'off':>4}  {'name':<16} {'fmt':<5} {'scale':>10} {'offset':>10}  unit"]
        off = 0
        for f in self.fields:
            size = struct.calcsize(self.byteorder + f.fmt)
            rows.append(f"  {off:>4}  {f.name or '(pad)':<16} {f.fmt:<5} {f.scale:>10g} "
                        f"{f.offset:>10g}  {f.unit}")
            off += size
        return "\n".join(rows)

    def __repr__(self) -> str:
        return f"<Layout {self.name or ''} {self.size} bytes: {', '.join(self.names)}>"
