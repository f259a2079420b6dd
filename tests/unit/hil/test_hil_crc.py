"""CRC catalogue check values (the CRC of b"123456789") and the verify/append helpers."""

from __future__ import annotations

import random
import zlib

import pytest

from hil.errors import CRCError, FrameError
from hil.serial.crc import CATALOGUE, Crc, get_crc

CHECK = b"123456789"


@pytest.mark.parametrize("name, check", [
    ("crc8", 0xF4),  # CRC-8/SMBUS, poly 0x07
    ("crc8-maxim", 0xA1),
    ("crc16-ccitt-false", 0x29B1),
    ("crc16-xmodem", 0x31C3),
    ("crc16-kermit", 0x2189),
    ("crc16-modbus", 0x4B37),
    ("crc32", 0xCBF43926),
    ("crc32c", 0xE3069283),
])
def test_catalogue_check_values(name, check):
    crc = CATALOGUE[name]
    assert crc.compute(CHECK) == check  # literal catalogue value, not the stored one
    assert crc.self_test()


def test_table_driven_crc32_matches_zlib():
    slow = Crc("crc32-table", 32, 0x04C11DB7, 0xFFFFFFFF, True, True, 0xFFFFFFFF, 0xCBF43926)
    rng = random.Random(32)
    for n in (0, 1, 7, 100, 1000):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert slow.compute(data) == zlib.crc32(data) == CATALOGUE["crc32"].compute(data)


def test_modbus_byte_order_is_low_byte_first():
    # Modbus RTU request "read 1 holding register at 0 from device 1": 01 03 00 00 00 01 84 0A
    crc = get_crc("CRC-16/MODBUS")
    assert crc.append(bytes.fromhex("010300000001")).hex() == "01030000000184" + "0a"
    assert get_crc("crc16-ccitt-false").append(CHECK)[-2:] == b"\x29\xb1"


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_verify_detects_every_single_bit_flip(name):
    crc = CATALOGUE[name]
    frame = crc.append(b"\x10\x20hello world\x00\xff")
    assert crc.verify(frame) == b"\x10\x20hello world\x00\xff"
    for i in range(len(frame) * 8):
        bad = bytearray(frame)
        bad[i // 8] ^= 1 << (i % 8)
        with pytest.raises(CRCError) as info:
            crc.verify(bad, "test")
        assert info.value.expected != info.value.received


def test_crc_error_message_and_short_frame():
    crc = get_crc("crc16-modbus")
    with pytest.raises(CRCError, match=r"dev: crc16-modbus mismatch: frame carries 0x0000, "
                                       r"payload of 3 bytes gives 0x"):
        crc.verify(b"abc\x00\x00", "dev")
    with pytest.raises(FrameError, match="shorter than its crc16-modbus"):
        crc.verify(b"a")


def test_names_aliases_and_unknown():
    assert get_crc("CRC-16/CCITT-FALSE") is CATALOGUE["crc16-ccitt-false"]
    assert get_crc("crc-16/ibm-3740") is CATALOGUE["crc16-ccitt-false"]
    assert get_crc("CRC-8/SMBUS") is CATALOGUE["crc8"]
    assert get_crc(None) is None
    with pytest.raises(ValueError, match="known: crc8, crc8-maxim"):
        get_crc("crc-15/can")
    with pytest.raises(ValueError, match="refin != refout"):
        Crc("odd", 16, 0x1021, 0, True, False, 0, 0)
