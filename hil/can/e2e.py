"""End-to-end protection of CAN messages: an alive counter and a CRC per message, in the
style of the AUTOSAR E2E profiles 1 and 11 (CRC-8/SAE-J1850 over the data id and the
payload, a 4-bit counter).

A sender (:class:`~hil.bridges.CanTransmit`) increments the counter of each message it sends
and writes the CRC; a receiver (:class:`~hil.bridges.CanReceive`) checks both:

=====================  =========================================  =======================
received               meaning                                    the receiver
=====================  =========================================  =======================
CRC mismatch           corrupted, or a rogue frame with the       rejects it, counts
                       message's id                               ``crc_errors``
counter = last         a repeated (stale or replayed) frame       rejects it, counts
                                                                  ``repeated``
counter = last + d,    ``d - 1`` frames were lost on the way      accepts it, counts
1 < d <= max_delta+1                                              ``lost += d - 1``
larger jump            a restarted sender or a long outage        accepts it (resync),
                                                                  counts ``resyncs``
=====================  =========================================  =======================

Declared in code (``E2EProfile(...)``, ``e2e={"MSG": profile}`` on a bridge) or in the DBC:
a message with a signal whose name ends in ``CRC`` (8 bits, byte-aligned) and one ending
in ``Counter`` or ``Alive`` (4 bits) is protected; its data id is the message's frame id
(an ``E2EDataID`` message attribute overrides it).  Those two signals are not ports.

The CRC covers the two data-id bytes (low, high) then every payload byte except the CRC
byte, as profile 1's "both bytes" data-id mode.

Limitations: the counter wraps at 16 (0..15, profile 11; profile 1 skips 15); the CRC
signal must be 8 bits on a byte boundary; no profile 2/4/5 (CRC-16/32, 16-bit counters).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import LayoutError
from ..serial.crc import get_crc

__all__ = ["E2EProfile", "E2EState", "profile_from_dbc"]

_CRC8 = get_crc("crc8-sae-j1850")


@dataclass(frozen=True)
class E2EProfile:
    """Where the counter and CRC of one message are (module docstring).

    Parameters
    ----------
    crc_signal, counter_signal : str
        Signal names in the DBC message.
    data_id : int
        16-bit id mixed into the CRC (a frame of another message with the same layout
        fails the check).
    crc_byte : int
        Byte index of the CRC in the payload (filled in by :func:`bind`).
    max_delta : int
        Counter steps accepted as "frames lost" rather than a resync.
    """

    crc_signal: str
    counter_signal: str
    data_id: int
    crc_byte: int = -1
    max_delta: int = 3

    def crc(self, data: bytes | bytearray) -> int:
        d = self.data_id
        body = bytes((d & 0xFF, (d >> 8) & 0xFF)) + bytes(data[:self.crc_byte]) \
            + bytes(data[self.crc_byte + 1:])
        return _CRC8.compute(body)


def bind(profile: E2EProfile, cmsg: Any) -> E2EProfile:
    """The profile with ``crc_byte`` taken from the cantools message (checks the layout)."""
    sigs = {s.name: s for s in cmsg.signals}
    for name in (profile.crc_signal, profile.counter_signal):
        if name not in sigs:
            raise LayoutError(f"E2E on {cmsg.name}: no signal {name!r}; signals: "
                              f"{', '.join(sigs)}")
    crc = sigs[profile.crc_signal]
    if crc.length != 8 or crc.start % 8 or crc.byte_order != "little_endian":
        raise LayoutError(f"E2E on {cmsg.name}: the CRC signal {crc.name} must be 8 bits "
                          f"starting on a byte boundary (little endian), got start {crc.start}, "
                          f"length {crc.length}")
    if sigs[profile.counter_signal].length != 4:
        raise LayoutError(f"E2E on {cmsg.name}: the counter {profile.counter_signal} must be "
                          "4 bits (0..15)")
    return E2EProfile(profile.crc_signal, profile.counter_signal, profile.data_id & 0xFFFF,
                      crc.start // 8, profile.max_delta)


def profile_from_dbc(cmsg: Any) -> E2EProfile | None:
    """The profile a DBC message declares by its signal names (module docstring), else None."""
    crc = [s.name for s in cmsg.signals if s.name.lower().endswith("crc")]
    ctr = [s.name for s in cmsg.signals if s.name.lower().endswith(("counter", "alive"))]
    if len(crc) != 1 or len(ctr) != 1:
        return None
    data_id = int(cmsg.frame_id)
    try:
        attr = cmsg.dbc.attributes.get("E2EDataID") if cmsg.dbc is not None else None
        if attr is not None:
            data_id = int(attr.value)
    except AttributeError:
        pass
    return bind(E2EProfile(crc[0], ctr[0], data_id), cmsg)


class E2EState:
    """The receiver's check of one message (module docstring); counts in its attributes."""

    def __init__(self, profile: E2EProfile) -> None:
        self.p = profile
        self.last: int | None = None
        self.ok = self.crc_errors = self.repeated = self.lost = self.resyncs = 0

    def check(self, data: bytes | bytearray, counter: int) -> bool:
        """True to accept the frame."""
        p = self.p
        if len(data) <= p.crc_byte or data[p.crc_byte] != p.crc(data):
            self.crc_errors += 1
            return False
        counter = int(counter) & 0xF
        if self.last is not None:
            d = (counter - self.last) % 16
            if d == 0:
                self.repeated += 1
                return False
            if d - 1 > p.max_delta:
                self.resyncs += 1
            elif d > 1:
                self.lost += d - 1
        self.last = counter
        self.ok += 1
        return True

    def stats(self) -> dict:
        return {"ok": self.ok, "crc_errors": self.crc_errors, "repeated": self.repeated,
                "lost": self.lost, "resyncs": self.resyncs}
