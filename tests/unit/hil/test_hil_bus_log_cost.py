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


@pytest.mark.timing
def test_the_writer_takes_the_queue_in_batches(tmp_path):
    """A fixed number of messages, 2 per ms as the flagship's bus: the writer wakes about
    once per ``batch_s`` of the run's wall time, never once per message.  The bound is
    relative to the measured wall time, so a busy machine (longer sleeps) moves both."""
    log = MessageLog(tmp_path / "bus.asc", batch_s=0.05)
    waits = []
    real_wait = log._wake.wait
    log._wake.wait = lambda s: (waits.append(s), real_wait(s))[1]
    n = 800
    t0 = time.monotonic()
    for i in range(0, n, 2):
        log(_msg(i, ts=time.time()))
        log.sent(_msg(i + 1))
        time.sleep(0.001)
    wall = time.monotonic() - t0
    log.stop()
    assert log.written == n == log.count
    # one wake-up per 50 ms of wall time (a few more at start and stop), never one per message
    bound = wall / 0.05 * 1.5 + 4
    assert len(waits) <= bound and len(waits) < n / 10, (n, wall, len(waits))
    rx = [m.is_rx for _, m in read_log(tmp_path / "bus.asc")]
    assert len(rx) == n and rx.count(False) == n // 2


@pytest.mark.parametrize("bad", [-0.1, 2.0, "x", None])
def test_a_bad_batch_interval_is_refused(tmp_path, bad):
    with pytest.raises(ValueError, match="batch_s must be 0..1 s"):
        MessageLog(tmp_path / "bus.asc", batch_s=bad)
