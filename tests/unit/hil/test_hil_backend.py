"""The abstract Backend: template methods, states, counters, reconnect, reader threads."""

from __future__ import annotations

import logging
import queue
import threading
import time
import traceback

import pytest

from cosim.errors import CosimError
from hil import (
    Backend,
    BackendError,
    BackendState,
    BackendTimeout,
    Disconnected,
    ErrorSink,
    HILError,
)
from tests.timing_plugin import GENEROUS_S, wait_for


class MemBackend(Backend):
    """In-memory backend: frames in ``inbox``; can fail opens and reads on demand."""

    kind = "mem"

    def __init__(self, **kw):
        super().__init__(**kw)
        self.inbox: queue.Queue = queue.Queue()
        self.sent: list = []
        self.opens = 0
        self.fail_opens = 0
        self.read_error: BaseException | None = None
        self.write_error: BaseException | None = None

    @property
    def channel(self):
        return "mem0"

    def _open(self):
        self.opens += 1
        if self.fail_opens:
            self.fail_opens -= 1
            raise OSError(2, "No such device")

    def _close(self):
        pass

    def _read_internal(self, timeout):
        if self.read_error is not None:
            exc, self.read_error = self.read_error, None
            raise exc
        try:
            return self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None

    def _write(self, data, timeout):
        if self.write_error is not None:
            exc, self.write_error = self.write_error, None
            raise exc
        self.sent.append(data)


def test_lifecycle_states_and_context_manager():
    b = MemBackend(name="m")
    assert b.state is BackendState.CLOSED
    with pytest.raises(BackendError, match=r"mem 'mem0' \('m'\): read\(\) on a closed backend; "
                                           r"call open\(\) first"):
        b.read()
    with b:
        assert b.state is BackendState.OPEN and b.is_open
        b.write(b"x")
        b.inbox.put(b"y")
        assert b.read(0.5) == b"y"
    assert b.state is BackendState.CLOSED
    assert (b.counters.frames_in, b.counters.frames_out) == (1, 1)
    b.close()  # idempotent


@pytest.mark.timing
def test_read_timeout_returns_none_and_expect_raises():
    b = MemBackend(timeout=0.02).open()
    t = time.perf_counter()
    assert b.read() is None  # the default timeout applies
    assert time.perf_counter() - t >= 0.02
    assert b.read(0) is None
    with pytest.raises(BackendTimeout, match=r"mem 'mem0': no frame within 0.01 s; check"):
        b.expect(0.01)
    assert isinstance(BackendTimeout("x"), TimeoutError)
    assert b.counters.timeouts == 1


def test_driver_errors_are_translated_and_chained():
    b = MemBackend().open()
    b.read_error = KeyError("bug in driver")
    with pytest.raises(BackendError, match="read failed with KeyError.*driver or backend bug") as e:
        b.read(0.1)
    assert isinstance(e.value.__cause__, KeyError)
    assert isinstance(e.value, HILError) and isinstance(e.value, CosimError)
    assert b.state is BackendState.FAULTED
    with pytest.raises(BackendError, match="faulted backend .*close\\(\\) and open\\(\\)"):
        b.write(b"x")
    b.open()  # reopening a faulted backend closes it first
    assert b.state is BackendState.OPEN


def test_oserror_without_reconnect_is_disconnected():
    b = MemBackend(reconnect=False).open()
    b.read_error = OSError(5, "Input/output error")
    with pytest.raises(Disconnected, match=r"mem 'mem0': read failed: .*Input/output error; the "
                                           r"device or port went away.*reconnect=True") as e:
        b.read(0.1)
    assert isinstance(e.value, ConnectionError)
    assert b.state is BackendState.FAULTED and b.counters.errors == 1


def test_open_failure_is_a_backend_error():
    b = MemBackend()
    b.fail_opens = 1
    with pytest.raises(BackendError, match="mem 'mem0': open failed: .*cannot be opened") as e:
        b.open()
    assert not isinstance(e.value, Disconnected)
    assert b.state is BackendState.CLOSED


@pytest.mark.timing
def test_reconnect_with_backoff_counts_and_logs(caplog):
    b = MemBackend(reconnect=True, backoff=(0.005, 0.02), reconnect_timeout=GENEROUS_S).open()
    b.read_error = OSError(5, "Input/output error")
    b.fail_opens = 3  # the device is away for three attempts
    b.inbox.put(b"after")
    with caplog.at_level(logging.INFO, logger="hil"):
        t = time.perf_counter()
        assert b.read(GENEROUS_S) == b"after"
        dt = time.perf_counter() - t
    c = b.counters
    assert (c.disconnects, c.reconnects, c.reconnect_attempts) == (1, 1, 4)
    assert b.opens == 1 + 4 and b.state is BackendState.OPEN
    # backoff: 5 + 10 + 20 ms of waiting between the four attempts (measured 36-40 ms)
    assert dt >= 0.9 * 0.035
    text = caplog.text
    assert "link lost" in text and "reconnected after 4 attempt(s)" in text


@pytest.mark.timing
def test_read_while_down_returns_none_then_recovers():
    b = MemBackend(reconnect=True, backoff=(0.01, 0.01)).open()
    b.read_error = OSError(5, "EIO")
    b.fail_opens = 10**9
    assert b.read(0.03) is None
    assert b.state is BackendState.RECONNECTING
    with pytest.raises(BackendTimeout, match="link has been down for .*last error: .*No such"):
        b.write(b"lost", timeout=0.02)
    assert b.sent == []
    b.fail_opens = 0  # the device is back
    b.write(b"sent")
    assert b.sent == [b"sent"] and b.state is BackendState.OPEN and b.counters.reconnects == 1


def test_write_disconnect_reconnects_and_resends_once():
    b = MemBackend(reconnect=True).open()
    b.write_error = OSError(32, "Broken pipe")
    b.write(b"frame")
    assert b.sent == [b"frame"] and b.counters.reconnects == 1 and b.counters.frames_out == 1


@pytest.mark.timing
def test_reconnect_timeout_faults_with_a_clear_message():
    b = MemBackend(reconnect=True, backoff=(0.005, 0.01), reconnect_timeout=0.05).open()
    b.read_error = OSError(5, "EIO")
    b.fail_opens = 10**9
    with pytest.raises(Disconnected, match=r"link down for \d+\.\d\d s, \d+ reconnect attempts "
                                           r"failed .*raise reconnect_timeout"):
        for _ in range(20):
            b.read(0.02)
    assert b.state is BackendState.FAULTED


def _explode():
    raise ZeroDivisionError("bad frame handler")


@pytest.mark.timing
def test_reader_thread_exception_is_reraised_by_check():
    b = MemBackend().open()
    got = []

    def on_frame(frame):
        got.append(frame)
        if frame == b"boom":
            _explode()

    reader = b.start_reader(on_frame, poll=0.01)
    b.inbox.put(b"ok")
    b.inbox.put(b"boom")
    reader.join(GENEROUS_S)
    assert not reader.is_alive() and got == [b"ok", b"boom"]
    assert b.state is BackendState.FAULTED
    with pytest.raises(ZeroDivisionError, match="bad frame handler") as e:
        b.check()
    names = [f.name for f in traceback.extract_tb(e.value.__traceback__)]
    # the caller's frames (check), then the thread's own frames down to the raise
    assert names.index("check") < names.index("run") < names.index("on_frame")
    assert names[-1] == "_explode"
    assert any("hil-reader-mem0" in n for n in e.value.__notes__)
    b.check()  # reported once
    b.close()


@pytest.mark.timing
def test_reader_thread_driver_error_keeps_its_cause():
    b = MemBackend(reconnect=False).open()
    sink = ErrorSink()
    b.start_reader(poll=0.01, errors=sink)  # frames onto the internal queue
    b.inbox.put(b"1")
    b.inbox.put(b"2")
    frames = []

    def two():
        frames.extend(b.drain())
        return len(frames) >= 2
    wait_for(two, "2 frames through the reader thread")
    assert frames == [b"1", b"2"]
    b.read_error = OSError(19, "No such device")
    wait_for(sink.pending, "the reader thread's error in the sink")
    with pytest.raises(Disconnected) as e:
        b.check()  # the backend checks the sink it was given
    assert isinstance(e.value.__cause__, OSError) and e.value.__cause__.errno == 19


@pytest.mark.timing
def test_close_stops_the_reader_promptly():
    b = MemBackend().open()
    reader = b.start_reader(poll=0.05)
    with pytest.raises(BackendError, match="already running"):
        b.start_reader()
    t = time.perf_counter()
    b.close()
    assert not reader.is_alive()
    # measured 0-50 ms (one poll period); the thread must be gone, no timing assert
    assert time.perf_counter() - t < 2.0 + 0.5


@pytest.mark.timing
def test_reader_queue_drops_oldest_when_full():
    b = MemBackend().open()
    for i in range(5):
        b.inbox.put(i)
    b.start_reader(poll=0.01, maxsize=2)
    wait_for(lambda: b.counters.frames_in >= 5, "5 frames read by the reader thread")
    b.close()
    assert b.drain() == [3, 4] and b.counters.dropped == 3


def test_concurrent_disconnect_is_counted_once():
    b = MemBackend(reconnect=True).open()
    gen = b.link.generation
    err = Disconnected("x")
    threads = [threading.Thread(target=b.link.lost, args=(err, gen)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert b.counters.disconnects == 1 and b.state is BackendState.RECONNECTING
