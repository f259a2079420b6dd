"""The corrupt fault of hil.faults: the payload XORed with the mask while active, a copy
(the sender's frame kept), counted; a zero mask refused."""

from __future__ import annotations

import os
import time

import pytest

from hil.can import CanBackend
from hil.faults import Fault, FaultyBackend


def test_corrupt_xors_the_payload_of_a_copy_while_active():
    import can
    ch = f"corrupt-{os.getpid()}-{time.monotonic_ns()}"  # not timing: a unique channel name
    now = [0.0]
    # (b's read timeout: a guard against a hang; the frames are on the bus already)
    with CanBackend("virtual", ch, timeout=0.0) as a, CanBackend("virtual", ch,
                                                                   timeout=60.0) as b:
        fb = FaultyBackend(a, [Fault("corrupt", 1.0, 2.0, direction="tx", mask=b"\x0f\xf0")],
                           clock=lambda: now[0]).open()
        msg = can.Message(arbitration_id=0x10, data=b"\x11\x22\x33", is_extended_id=False)
        fb.write(msg)  # t = 0: not active
        now[0] = 1.5
        fb.write(msg)
        now[0] = 2.0
        fb.write(msg)  # ended
        got = [bytes(b.read().data) for _ in range(3)]
    assert got == [b"\x11\x22\x33", b"\x1e\xd2\x33", b"\x11\x22\x33"]
    assert bytes(msg.data) == b"\x11\x22\x33" and fb.injected == {"corrupt_tx": 1}


def test_a_corrupt_fault_needs_a_non_zero_mask():
    with pytest.raises(ValueError, match=r"Fault\(corrupt\): mask must be non-zero bytes"):
        Fault("corrupt", mask=b"\x00")
