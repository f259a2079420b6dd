"""COBS, SLIP and line framing, incremental deframing, fixed binary layouts."""

from __future__ import annotations

import random

import pytest

from cosim.errors import UnitError
from hil.errors import FrameError, LayoutError
from hil.serial.framing import (
    CobsFraming,
    Field,
    Layout,
    LineFraming,
    SlipFraming,
    cobs_decode,
    cobs_encode,
    make_framing,
    slip_decode,
    slip_encode,
)

R254 = bytes(range(1, 255))  # 01 .. FE, 254 non-zero bytes

# The eleven examples of the Wikipedia article "Consistent Overhead Byte Stuffing"
# (same encoding rules as Cheshire & Baker 1999), without the trailing 00 delimiter.
COBS_VECTORS = [
    (b"\x00", b"\x01\x01"),
    (b"\x00\x00", b"\x01\x01\x01"),
    (b"\x00\x11\x00", b"\x01\x02\x11\x01"),
    (b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
    (b"\x11\x22\x33\x44", b"\x05\x11\x22\x33\x44"),
    (b"\x11\x00\x00\x00", b"\x02\x11\x01\x01\x01"),
    (R254, b"\xff" + R254),
    (b"\x00" + R254, b"\x01\xff" + R254),
    (bytes(range(1, 256)), b"\xff" + R254 + b"\x02\xff"),
    (bytes(range(2, 256)) + b"\x00", b"\xff" + bytes(range(2, 256)) + b"\x01\x01"),
    (bytes(range(3, 256)) + b"\x00\x01", b"\xfe" + bytes(range(3, 256)) + b"\x02\x01"),
]


@pytest.mark.parametrize("raw, enc", COBS_VECTORS, ids=[f"wiki{i + 1}" for i in range(11)])
def test_cobs_known_vectors(raw, enc):
    assert cobs_encode(raw) == enc
    assert cobs_decode(enc) == raw


def test_cobs_empty_and_non_minimal_forms():
    assert cobs_encode(b"") == b"\x01"
    assert cobs_decode(b"\x01") == b""
    # a full 254-byte block followed by a redundant 01 code decodes to the same data
    assert cobs_decode(b"\xff" + R254 + b"\x01") == R254


@pytest.mark.parametrize("n", [0, 1, 253, 254, 255, 508, 509, 1000])
@pytest.mark.parametrize("fill", [b"\x00", b"\x01", b"\xff", b"mixed"])
def test_cobs_round_trip_runs(n, fill):
    if fill == b"mixed":
        data = bytes((i * 37) % 256 for i in range(n))
    else:
        data = fill * n
    enc = cobs_encode(data)
    assert 0 not in enc
    assert len(enc) <= len(data) + 1 + len(data) // 254  # the COBS overhead bound
    assert cobs_decode(enc) == data


def test_cobs_round_trip_random():
    rng = random.Random(8)
    for _ in range(300):
        n = rng.randrange(0, 700)
        data = bytes(rng.choice((0, 0, rng.randrange(256))) for _ in range(n))
        assert cobs_decode(cobs_encode(data)) == data


@pytest.mark.parametrize("bad, why", [
    (b"", "empty"),
    (b"\x03\x11\x00", "zero byte"),
    (b"\x05\x11\x22", "runs past"),
])
def test_cobs_malformed_frames_raise(bad, why):
    with pytest.raises(FrameError, match=why):
        cobs_decode(bad)


def test_slip_escapes_round_trip():
    data = b"\xc0\xdb\xdc\xdd\xdb\xdc\xc0\xc0a"
    enc = slip_encode(data)
    assert enc == (b"\xdb\xdc\xdb\xdd\xdc\xdd\xdb\xdd\xdc\xdb\xdc\xdb\xdca")
    assert b"\xc0" not in enc
    assert slip_decode(enc) == data
    rng = random.Random(1055)
    for _ in range(200):
        d = bytes(rng.choice((0xC0, 0xDB, 0xDC, 0xDD, rng.randrange(256)))
                  for _ in range(rng.randrange(60)))
        assert slip_decode(slip_encode(d)) == d
    assert SlipFraming().encode(b"\xc0") == b"\xc0\xdb\xdc\xc0"  # RFC 1055: END before and after


@pytest.mark.parametrize("bad", [b"ab\xdb", b"\xdb\x01", b"a\xc0b"])
def test_slip_bad_escape_raises(bad):
    with pytest.raises(FrameError, match="SLIP"):
        slip_decode(bad)


@pytest.mark.parametrize("framing", ["cobs", "slip"])
def test_deframer_handles_any_split(framing):
    """Three frames, fed byte by byte and in random chunks, come out whole."""
    payloads = [b"\x00\x01\x02\x00", b"\xc0\xdb" * 5, R254 + b"\x00" + R254]
    f = make_framing(framing)
    wire = b"".join(f.encode(p) for p in payloads)
    out = []
    for b in wire:  # byte by byte
        out += f.feed(bytes([b]))
    assert [f.decode(x) for x in out] == payloads
    rng = random.Random(3)
    for _ in range(50):
        i, out = 0, []
        while i < len(wire):
            k = rng.randrange(1, 40)
            out += f.feed(wire[i:i + k])
            i += k
        assert [f.decode(x) for x in out] == payloads
        assert f.pending == 0


def test_deframer_resynchronises_after_garbage_and_overflow():
    f = CobsFraming(max_frame=16)
    good = f.encode(b"ok")
    out = f.feed(b"\x07\x07\x07" + b"\x00" + good)  # noise then a delimiter, then a frame
    assert len(out) == 2
    with pytest.raises(FrameError):
        f.decode(out[0])
    assert f.decode(out[1]) == b"ok"
    out = f.feed(b"\x05" * 40)  # 40 bytes, no delimiter: overlong
    assert len(out) == 1 and isinstance(out[0], FrameError)
    assert "max_frame=16" in str(out[0])
    out = f.feed(b"\x05" * 10 + b"\x00" + good)  # rest of the long frame dropped silently
    assert [f.decode(x) for x in out] == [b"ok"]


def test_make_framing_clones_and_rejects_unknown():
    a = CobsFraming()
    a.feed(b"\x03ab")
    b = make_framing(a)
    assert b is not a and b.pending == 0 and a.pending == 3
    with pytest.raises(ValueError, match="cobs, slip, lines"):
        make_framing("kiss")


def test_line_framing_text_and_crlf():
    f = LineFraming(encoding="ascii")
    assert f.encode("T=21.5") == b"T=21.5\n"
    out = f.feed(b"T=21.5\r\nP=1.0")
    assert [f.decode(x) for x in out] == ["T=21.5"]
    out = f.feed(b"13\n\n")  # the empty line is skipped
    assert [f.decode(x) for x in out] == ["P=1.013"]
    with pytest.raises(FrameError, match="not valid ascii"):
        f.decode(b"\xff\xfe")
    with pytest.raises(ValueError, match="terminator"):
        f.encode("a\nb")
    assert LineFraming().decode(b"raw\r") == b"raw"


# ------------------------------------------------------------------ layouts
IMU = Layout([
    Field("seq", "H"),
    Field("rate", "h", scale=0.001, unit="rad/s"),
    Field("temp", "b", scale=0.5, offset=20.0, unit="degC"),
    Field(None, "x"),
    Field("pressure", "I", scale=0.01, offset=-1000.0, unit="Pa"),
    Field("accel", "f", unit="m/s2"),
    Field("ok", "?"),
    Field("tag", "3s"),
], byteorder="<", name="imu")


def test_layout_round_trip_with_scale_and_offset():
    assert IMU.size == 2 + 2 + 1 + 1 + 4 + 4 + 1 + 3
    values = dict(seq=65535, rate=-1.234, temp=-12.5, pressure=101325.0, accel=-9.81, ok=True,
                  tag=b"ab\x00")
    data = IMU.pack(values)
    # raw values on the wire: rate -1234, temp (-12.5 - 20)/0.5 = -65, pressure 10232500
    assert data[2:4] == (-1234).to_bytes(2, "little", signed=True)
    assert data[4] == (-65) & 0xFF
    assert data[6:10] == (10232500).to_bytes(4, "little")
    back = IMU.unpack(data)
    assert back["seq"] == 65535 and isinstance(back["seq"], int)
    assert back["rate"] == pytest.approx(-1.234, abs=1e-12)
    assert back["temp"] == -12.5
    assert back["pressure"] == pytest.approx(101325.0, abs=1e-6)
    assert back["accel"] == pytest.approx(-9.81, rel=1e-7)  # float32
    assert back["ok"] is True and back["tag"] == b"ab\x00"
    assert IMU.units["temp"] == "degC"
    assert "pressure" in IMU.describe() and "Pa" in IMU.describe()


def test_layout_quantises_to_the_scale():
    lay = Layout([("v", "h", 0.01, 0.0, "V")], byteorder=">")
    assert lay.unpack(lay.pack(v=1.23456))["v"] == pytest.approx(1.23, abs=1e-12)
    assert lay.pack(v=1.0) == b"\x00\x64"  # big endian raw 100


def test_layout_errors_say_what_and_how():
    with pytest.raises(LayoutError, match=r"does not fit 'b' \[-128, 127\].*\[-44, 83.5\] degC"):
        IMU.pack(seq=1, rate=0, temp=100.0, pressure=0, accel=0, ok=False, tag=b"")
    with pytest.raises(LayoutError, match=r"unknown field\(s\) \['sqe'\]; missing field\(s\) "
                                          r"\['seq'\]"):
        IMU.pack(sqe=1, rate=0, temp=20, pressure=0, accel=0, ok=False, tag=b"")
    with pytest.raises(FrameError, match="expects 18 bytes, the frame has 17"):
        IMU.unpack(bytes(17))
    with pytest.raises(LayoutError, match="duplicate"):
        Layout([Field("a", "B"), Field("a", "B")])
    with pytest.raises(LayoutError, match="not supported"):
        Field("a", "Z")
    with pytest.raises(LayoutError, match="padding"):
        Field("a", "2x")
    with pytest.raises(LayoutError, match="byteorder"):
        Layout([Field("a", "B")], byteorder="@")
    with pytest.raises(UnitError):
        Field("a", "B", unit="furlongs")
