"""A bus log costs the real-time frame a queue put (issue 30: with a log the flagship
frame's work was 20-25 % dearer than without: a copy of every sent message in the frame,
and a writer thread woken by every message took the GIL from the frame thousands of times
a second).  The sent message is copied in the writer thread, which takes the queue in
batches; what is written is unchanged."""

import threading
import time

import pytest

can = pytest.importorskip("can")

from hil.can import MessageLog, read_log  # noqa: E402


def _msg(i, ts=0.0):
    return can.Message(arbitration_id=0x100 + i % 4, data=bytes([i % 256] * 8),
                       is_extended_id=False, timestamp=ts)


def test_sent_copies_nothing_in_the_callers_thread(tmp_path, monkeypatch):
    import copy
    callers = []
    real = copy.copy

    def spy(x):
        callers.append(threading.current_thread().name)
        return real(x)

    monkeypatch.setattr("hil.can.log.copy.copy", spy)
    log = MessageLog(tmp_path / "bus.asc")
    m = _msg(1, ts=0.0)
    log.sent(m)
    log.stop()
    assert m.is_rx is True and m.timestamp == 0.0  # the caller's message unchanged
    assert callers and threading.main_thread().name not in callers, callers
    (t, got), = list(read_log(tmp_path / "bus.asc"))
    assert got.is_rx is False and bytes(got.data) == bytes(m.data)


def test_the_writer_takes_the_queue_in_batches(tmp_path):
    log = MessageLog(tmp_path / "bus.asc", batch_s=0.05)
    waits = []
    real_wait = log._wake.wait
    log._wake.wait = lambda s: (waits.append(s), real_wait(s))[1]
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < 0.4:  # 2 messages per ms, as the flagship's bus
        log(_msg(n, ts=time.time()))
        log.sent(_msg(n + 1))
        n += 2
        time.sleep(0.001)
    log.stop()
    assert log.written == n == log.count
    # about one wake-up per 50 ms (8 in 0.4 s), never one per message (n > 300)
    assert n > 300 and len(waits) <= 20, (n, len(waits))
    rx = [m.is_rx for _, m in read_log(tmp_path / "bus.asc")]
    assert len(rx) == n and rx.count(False) == n // 2


@pytest.mark.parametrize("bad", [-0.1, 2.0, "x", None])
def test_a_bad_batch_interval_is_refused(tmp_path, bad):
    with pytest.raises(ValueError, match="batch_s must be 0..1 s"):
        MessageLog(tmp_path / "bus.asc", batch_s=bad)
