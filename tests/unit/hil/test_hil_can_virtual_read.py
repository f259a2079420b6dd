"""CanBackend.read_available on python-can's ``virtual`` bus: the queue read directly (issue 30).

Oracle: the same backend reading through python-can's ``recv`` (the fast path switched
off), over a generated corpus of frame sequences (ids, lengths, extended ids, error frames
kept or dropped), limits, ``accept`` sets and taps: the same frames in the same order, the
same counters, the same frames left in the queue.
"""

from __future__ import annotations

import itertools
import logging
import random
import threading

import pytest

can = pytest.importorskip("can")

from hil.can import CanBackend  # noqa: E402

_ids = itertools.count()


def _pair(**options):
    ch = f"vfast-{next(_ids)}"
    tx = CanBackend("virtual", ch, timeout=0.0).open()
    rx = CanBackend("virtual", ch, timeout=0.0, **options).open()
    return tx, rx


def _frames(seed: int, n: int) -> list:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        ext = rng.random() < 0.2
        err = rng.random() < 0.1
        out.append(can.Message(arbitration_id=rng.randrange(0x100, 0x110) + (0x10000 if ext
                                                                             else 0),
                               is_extended_id=ext, is_error_frame=err,
                               data=bytes(rng.randrange(256)
                                          for _ in range(rng.randrange(9)))))
    return out


def _key(f) -> tuple:
    return (f.arbitration_id, f.is_extended_id, f.is_error_frame, bytes(f.data))


def _drain(rx, limit, accept, rounds=50):
    got = []
    for _ in range(rounds):
        batch = rx.read_available(limit, accept=accept)
        got.append([_key(f) for f in batch])
    return got


def test_plain_virtual_bus_is_read_without_recv():
    tx, rx = _pair()
    try:
        assert rx._vq is not None
        frames = _frames(1, 5)
        for f in frames:
            f.is_error_frame = False
            tx.write(f)

        def no_recv(*a, **k):
            raise AssertionError("recv called")
        rx.bus.recv = no_recv
        got = rx.read_available()
        assert [_key(f) for f in got] == [_key(f) for f in frames]
        assert rx.counters.frames_in == 5
        assert rx.counters.bytes_in == sum(len(f.data) for f in frames)
        assert rx.read_available() == []
    finally:
        tx.close()
        rx.close()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("keep_errors", [False, True])
def test_direct_read_equals_recv(seed, keep_errors):
    rng = random.Random(seed)
    limit = rng.choice([1, 2, 5, 10_000])
    accept = None if seed % 2 else {(0x100 + i, False) for i in range(0, 16, 2)}
    results = []
    for direct in (True, False):
        tx, rx = _pair(keep_error_frames=keep_errors)
        tapped = []
        rx.add_tap(rx=lambda f, tapped=tapped: tapped.append(_key(f)))
        try:
            if not direct:
                rx._vq = None  # python-can's recv, the path before issue 30
            frames = _frames(100 + seed, 40)
            got = []
            for chunk in (frames[:17], frames[17:]):
                for f in chunk:
                    tx.bus.send(f)
                got += _drain(rx, limit, accept)
            left = len(rx.bus.queue.queue)
            results.append((got, tapped, rx.counters.as_dict(), rx.filtered, rx.error_frames,
                            left))
        finally:
            tx.close()
            rx.close()
    assert results[0] == results[1]
    assert any(results[0][0])  # something was read


def test_software_filters_and_receive_logging_use_recv():
    tx, rx = _pair(can_filters=[{"can_id": 0x101, "can_mask": 0x7FF}])
    calls = []
    try:
        recv = rx.bus.recv
        rx.bus.recv = lambda timeout=None: calls.append(1) or recv(timeout)
        for i in (1, 2, 1):
            tx.write(can.Message(arbitration_id=0x100 + i, data=b"\x01", is_extended_id=False))
        # recv drops 0x102 by its filter and returns None there (python-can): the read stops
        got = [f.arbitration_id for f in rx.read_available()]
        got += [f.arbitration_id for f in rx.read_available()]
        assert got == [0x101, 0x101] and calls
    finally:
        tx.close()
        rx.close()
    tx, rx = _pair()
    log = logging.getLogger("can.bus")
    level = log.level
    calls = []
    try:
        log.setLevel(5)  # python-can's recv logs every frame at level 9
        recv = rx.bus.recv
        rx.bus.recv = lambda timeout=None: calls.append(1) or recv(timeout)
        tx.write(can.Message(arbitration_id=0x100, data=b"\x01", is_extended_id=False))
        assert len(rx.read_available()) == 1 and calls
    finally:
        log.setLevel(level)
        tx.close()
        rx.close()


@pytest.mark.timing
def test_a_sender_waiting_on_a_full_bounded_queue_is_released():
    tx, rx = _pair(rx_queue_size=2)
    try:
        for i in range(2):
            tx.write(can.Message(arbitration_id=0x100 + i, data=b"", is_extended_id=False))
        done = threading.Event()

        def third():
            tx.bus.send(can.Message(arbitration_id=0x102, data=b"", is_extended_id=False),
                        timeout=10.0)
            done.set()
        t = threading.Thread(target=third, daemon=True)
        t.start()
        got = [f.arbitration_id for f in rx.read_available()]
        t.join(10.0)
        assert done.is_set()
        got += [f.arbitration_id for f in rx.read_available()]
        assert got == [0x100, 0x101, 0x102]
    finally:
        tx.close()
        rx.close()


def test_a_bus_shut_down_under_the_backend_reports_as_before():
    from hil.errors import Disconnected
    tx, rx = _pair()
    try:
        rx.bus.shutdown()
        with pytest.raises(Disconnected):
            rx.read_available()
    finally:
        tx.close()
        rx.close()
