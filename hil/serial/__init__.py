"""Serial links: framing, CRCs, a pyserial backend and a pty device emulator.

=============================  ===============================================
module                         contents
=============================  ===============================================
:mod:`hil.serial.framing`      COBS, SLIP and line framing with incremental
                               deframers; fixed binary layouts (:class:`Layout`
                               of :class:`Field` with scale/offset/unit)
:mod:`hil.serial.crc`          table-driven CRC-8/16/32 with catalogue check
                               values
:mod:`hil.serial.backend`      :class:`SerialBackend` (pyserial, imported on
                               ``open()``): partial frames, CRC policy,
                               reconnect with backoff
:mod:`hil.serial.emulator`     :class:`DeviceEmulator` on a pty pair with a
                               baud-rate model; :class:`EmulatedSerialBackend`,
                               the virtual twin
=============================  ===============================================

Importing this package does not import pyserial.
"""

from .backend import SerialBackend
from .crc import CATALOGUE, Crc, get_crc
from .emulator import DeviceEmulator, EmulatedSerialBackend, echo
from .framing import (
    CobsFraming,
    Field,
    Framing,
    Layout,
    LineFraming,
    SlipFraming,
    cobs_decode,
    cobs_encode,
    make_framing,
    slip_decode,
    slip_encode,
)

__all__ = [
    "SerialBackend", "DeviceEmulator", "EmulatedSerialBackend", "echo",
    "Crc", "CATALOGUE", "get_crc",
    "Framing", "CobsFraming", "SlipFraming", "LineFraming", "make_framing",
    "cobs_encode", "cobs_decode", "slip_encode", "slip_decode", "Field", "Layout",
]
