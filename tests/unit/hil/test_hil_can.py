"""CAN backend (python-can virtual bus) and DBC mapping (cantools)."""

from __future__ import annotations

import itertools
import sys
import threading
import time

import pytest

can = pytest.importorskip("can")
pytest.importorskip("cantools")

import hil  # noqa: E402
from hil.can import (  # noqa: E402
    ACC_DBC,
    CanBackend,
    CanDatabase,
    CyclicSender,
    MessageLog,
    SignalCache,
    StaleSignal,
    UnknownName,
    read_log,
    replay,
)
from hil.errors import (  # noqa: E402
    BackendError,
    BackendTimeout,
    Disconnected,
    DriverMissing,
    LayoutError,
)
from tests.timing_plugin import wait_for  # noqa: E402

_ids = itertools.count()

RADAR = {"range": 42.5, "range_rate": -1.25, "target_valid": 1}
EGO = {"speed": 27.78, "set_speed": 30.0, "gear_ratio": 3.5, "engine_speed": 250.0}
CMD = {"throttle": 0.25, "brake_torque": 120.5}


@pytest.fixture
def channel():
    return f"cosim-test-{next(_ids)}"  # a fresh virtual channel per test


@pytest.fixture
def pair(channel):
    a = CanBackend(channel=channel, name="ecu", timeout=0.5).open()
    b = CanBackend(channel=channel, name="plant", timeout=0.5).open()
    yield a, b
    a.close()
    b.close()


@pytest.fixture(scope="module")
def db():
    return CanDatabase(ACC_DBC)


# --------------------------------------------------------------------- DBC
def test_dbc_messages_units_and_scaling(db):
    assert db.message_names == ["RADAR", "EGO", "ACC_CMD"]
    assert db.units("RADAR") == {"range": "m", "range_rate": "m/s", "target_valid": None}
    assert db.units("EGO")["engine_speed"] == "rad/s"
    assert db.units("ACC_CMD") == {"throttle": None, "brake_torque": "N*m"}
    assert db.unit_warnings == []
    info = db.signal("range_rate")
    assert (info.message, info.scale, info.offset, info.is_signed) == ("RADAR", 0.01, 0.0, True)
    assert db.signal("ACC_CMD.throttle").maximum == 1


def test_unknown_names_list_the_choices(db):
    with pytest.raises(UnknownName, match=r"unknown message 'RADR'; choices: RADAR, EGO, "
                                          r"ACC_CMD; did you mean 'RADAR'\?"):
        db.encode("RADR", RADAR)
    with pytest.raises(UnknownName, match=r"message RADAR has no signal 'rnage'; choices: range, "
                                          r"range_rate, target_valid; did you mean 'range'\?"):
        db.encode("RADAR", {**RADAR, "rnage": 1.0})
    with pytest.raises(UnknownName, match=r"unknown signal 'sped'.*did you mean 'speed'"):
        db.signal("sped")
    with pytest.raises(LayoutError, match="missing range_rate, target_valid"):
        db.encode("RADAR", {"range": 1.0})
    with pytest.raises(LayoutError, match="cannot encode RADAR.*655.35"):
        db.encode("RADAR", {**RADAR, "range": 5000.0})
    with pytest.raises(UnknownName, match=r"no message with standard id 0x7FF; known: "
                                          r"RADAR=0x100"):
        db.decode(can.Message(arbitration_id=0x7FF, is_extended_id=False, data=b"\0" * 8))
    assert isinstance(UnknownName("x"), KeyError)


def test_dbc_text_and_unit_aliases():
    text = ACC_DBC.read_text().replace('"N*m"', '"Nm"').replace('"rad/s"', '"furlong"')
    db2 = CanDatabase(text)
    assert db2.source == "<DBC text>"
    assert db2.signal("brake_torque").unit == "N*m"
    info = db2.signal("engine_speed")
    assert info.unit is None and info.dbc_unit == "furlong" and not info.unit_understood
    assert db2.unit_warnings == ["EGO.engine_speed: DBC unit 'furlong' is not a cosim unit; "
                                 "kept as text, not checked"]
    with pytest.raises(LayoutError, match="cannot load it as DBC"):
        CanDatabase("BO_ this is not a dbc\n")


# ------------------------------------------------------------------ backend
@pytest.mark.timing
def test_two_virtual_buses_exchange_dbc_messages(pair, db):
    a, b = pair
    a.write(db.encode("RADAR", RADAR))
    a.write(db.encode("EGO", EGO))
    b.write(db.encode("ACC_CMD", CMD))
    m1, m2 = b.expect(), b.expect()
    assert m1.arbitration_id == 0x100 and m2.arbitration_id == 0x101
    assert db.decode(m1, with_units=True) == {"range": (42.5, "m"),
                                              "range_rate": (-1.25, "m/s"),
                                              "target_valid": (1, None)}
    name, ego = db.decode_named(m2)
    assert name == "EGO" and ego == pytest.approx(EGO, abs=0.05)
    assert db.decode(a.expect()) == pytest.approx(CMD, abs=1e-3)
    assert b.read(0.02) is None  # own messages are not received by default
    assert a.counters.frames_out == 2 and a.counters.frames_in == 1
    assert a.counters.bytes_out == 16 and b.counters.bytes_in == 16


def test_registry_and_repr(channel):
    assert "can" in hil.available_backends()
    assert hil.backend_class("can") is CanBackend
    b = hil.create_backend("can", channel=channel, bitrate=500_000, fd=True,
                           preserve_timestamps=True)
    assert b.bus_kwargs() == {"interface": "virtual", "channel": channel, "bitrate": 500_000,
                              "fd": True, "receive_own_messages": False,
                              "preserve_timestamps": True}
    assert repr(b) == f"<CanBackend can virtual:{channel!r} closed>"


def test_receive_own_messages_and_fd(channel):
    with CanBackend(channel=channel, fd=True, receive_own_messages=True) as a:
        msg = can.Message(arbitration_id=0x123, is_fd=True, data=bytes(range(24)))
        a.write(msg)
        got = a.expect(0.5)
        assert got.is_fd and bytes(got.data) == bytes(range(24))
    with CanBackend(channel=channel) as classic:
        with pytest.raises(ValueError, match="CAN FD message .* open the backend with fd=True"):
            classic.write(msg)
        with pytest.raises(TypeError, match="write\\(\\) takes a can.Message, got bytes"):
            classic.write(b"\x01")
        assert classic.state is hil.BackendState.OPEN  # bad frames fault nothing


@pytest.mark.timing
def test_error_frames_are_counted_and_dropped(pair):
    a, b = pair
    a.write(can.Message(is_error_frame=True, arbitration_id=0, data=b""))
    a.write(can.Message(arbitration_id=5, data=b"\x01"))
    assert b.expect().arbitration_id == 5
    assert b.error_frames == 1 and b.counters.errors == 1
    b.keep_error_frames = True
    a.write(can.Message(is_error_frame=True, arbitration_id=0, data=b""))
    assert b.expect().is_error_frame and b.error_frames == 2


@pytest.mark.timing
def test_bus_off_after_error_frame_is_disconnected(pair, monkeypatch):
    a, b = pair
    monkeypatch.setattr(type(b.bus), "state", property(lambda self: can.BusState.ERROR))
    a.write(can.Message(is_error_frame=True, arbitration_id=0, data=b""))
    with pytest.raises(Disconnected, match=r"can virtual:'cosim-test-\d+' \('plant'\): read "
                                           r"failed \(CanOperationError: bus-off") as e:
        b.read()
    assert isinstance(e.value.__cause__, can.CanOperationError)
    assert b.state is hil.BackendState.FAULTED
    monkeypatch.undo()
    b.recover()  # what the message tells the user to do: works on the faulted backend
    assert b.state is hil.BackendState.OPEN and b.counters.reconnects == 1
    a.write(can.Message(arbitration_id=5, data=b"\x05"))
    assert b.expect().arbitration_id == 5


def test_send_on_shutdown_bus_names_the_channel(channel):
    b = CanBackend(channel=channel, name="ecu").open()
    b.bus.shutdown()  # the driver goes away under the backend
    with pytest.raises(Disconnected) as e:
        b.write(can.Message(arbitration_id=1, data=b"\x00"))
    msg = str(e.value)
    assert msg.startswith(f"can virtual:'{channel}' ('ecu'): write failed (CanOperationError: "
                          f"Cannot operate on a closed bus)")
    assert "call recover() or use reconnect=True" in msg
    assert isinstance(e.value, ConnectionError)
    b.close()


@pytest.mark.timing
def test_recover_recreates_the_bus(pair):
    a, b = pair
    b.bus.shutdown()
    b.recover()
    assert b.counters.reconnects == 1
    a.write(can.Message(arbitration_id=7, data=b"\x07"))
    assert b.expect().arbitration_id == 7


def test_reconnect_true_recreates_the_bus_on_write(channel):
    with CanBackend(channel=channel, reconnect=True, backoff=(0.001, 0.01)) as a, \
            CanBackend(channel=channel) as b:
        a.bus.shutdown()
        a.write(can.Message(arbitration_id=9, data=b"\x09"))
        assert b.expect().arbitration_id == 9
        assert (a.counters.disconnects, a.counters.reconnects) == (1, 1)


def test_open_errors(channel):
    with pytest.raises(BackendError, match=r"can nope:'x': cannot open the bus "
                                           r"\(CanInterfaceNotImplementedError.*virtual"):
        CanBackend(interface="nope", channel="x").open()
    with pytest.raises(ValueError, match="bitrate must be a positive int"):
        CanBackend(channel=channel, bitrate=-1)


def test_driver_missing(monkeypatch, channel):
    monkeypatch.setitem(sys.modules, "can", None)
    with pytest.raises(DriverMissing, match=r"pip install cosim \(or pip install "
                                            r"python-can\)"):
        CanBackend(channel=channel).open()


def test_importing_hil_can_imports_no_driver():
    import subprocess
    code = ("import sys, hil, hil.can; "
            "print('can' in sys.modules, 'cantools' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "False"]


# ------------------------------------------------------- cyclic and caching
@pytest.mark.timing
def test_cyclic_sender_schedule_skips_missed_periods(pair, db):
    a, b = pair
    tx = CyclicSender(a, db, "ACC_CMD", 0.02)
    assert tx.values == {"throttle": 0.0, "brake_torque": 0.0}
    assert tx.due(0.0)
    tx.send(0.0, {"throttle": 0.5})
    assert not tx.due(0.019) and tx.due(0.02)
    assert tx.poll(0.021, {"brake_torque": 10.0})  # merged with throttle=0.5
    assert not tx.poll(0.03)
    tx.send(0.105)  # covers the 0.10 slot; 0.04, 0.06, 0.08 were missed: skipped
    assert tx.skipped == 3 and not tx.due(0.119) and tx.due(0.12)
    got = [db.decode(b.expect()) for _ in range(3)]
    assert got[0] == pytest.approx({"throttle": 0.5, "brake_torque": 0.0})
    assert got[1] == got[2] == pytest.approx({"throttle": 0.5, "brake_torque": 10.0})
    assert b.read(0.02) is None and tx.sent == 3
    with pytest.raises(UnknownName, match="no signal 'throtle'; choices: throttle"):
        tx.send(0.2, {"throtle": 1.0})
    with pytest.raises(ValueError, match="period_s must be > 0"):
        CyclicSender(a, db, "EGO", 0)


def test_signal_cache_fake_clock(db):
    now = [100.0]
    cache = SignalCache(db, {"RADAR": 0.05}, default_stale_after_s=1.0, clock=lambda: now[0])
    with pytest.raises(StaleSignal, match="CAN signal RADAR.range: never received"):
        cache.get("range")
    cache.feed(db.encode("RADAR", RADAR))
    cache.feed(db.encode("EGO", EGO))
    cache.feed(can.Message(arbitration_id=0x7FF, data=b""))  # not in the DBC: ignored
    assert (cache.received, cache.unknown) == (2, 1)
    now[0] += 0.04
    assert cache.get("range") == 42.5 and cache.get("RADAR.target_valid") == 1
    assert not cache.is_stale("range")
    now[0] += 0.02
    with pytest.raises(StaleSignal, match=r"RADAR.range: stale, last received 60.0 ms ago "
                                          r"\(limit 50.0 ms\)") as e:
        cache.get("range")
    assert e.value.age == pytest.approx(0.06) and isinstance(e.value, TimeoutError)
    assert isinstance(e.value, BackendTimeout)
    assert cache.get("range", allow_stale=True) == 42.5
    assert cache.get("speed") == pytest.approx(27.78)  # EGO: default limit 1 s
    snap = cache.snapshot()
    assert snap["RADAR.range"][2] and not snap["EGO.speed"][2]
    with pytest.raises(UnknownName, match="did you mean 'range'"):
        cache.get("rang")


@pytest.mark.timing
def test_staleness_after_the_sender_stops(pair, db):
    """Fresh while the sender sends, stale once it stopped for longer than the limit (0.5 s:
    a busy machine's preemptions between a frame and the read stay well below it)."""
    a, b = pair
    limit = 0.5
    cache = SignalCache(db, stale_after_s=limit)
    b.start_reader(on_frame=cache.feed, poll=0.005)
    tx = CyclicSender(a, db, "EGO", 0.005)
    t0 = time.monotonic()

    def send():
        t = time.monotonic() - t0
        tx.poll(t, {"speed": 10.0 + t})
        return tx.sent >= 12
    wait_for(send, "12 EGO frames sent", poll=0.001)
    wait_for(lambda: cache.received >= tx.sent, "the reader thread fed every frame")
    assert cache.received == tx.sent >= 12
    assert cache.get("speed") == pytest.approx(10.0 + tx.last_sent_t, abs=0.01)
    wait_for(lambda: cache.is_stale("speed"), "EGO.speed stale after the sender stopped")
    with pytest.raises(StaleSignal, match=r"EGO.speed: stale, last received \d+\.\d ms ago"):
        cache.get("speed")
    assert cache.age("speed") > limit
    b.check()


# ------------------------------------------------------------ log and replay
class _Gated:
    """Wraps a log's ``can.Logger``: each write waits for ``gate``, or fails."""

    def __init__(self, inner, fail=False):
        self.inner, self.fail = inner, fail
        self.gate = threading.Event()

    def on_message_received(self, msg):
        if self.fail:
            raise OSError(28, "No space left on device")
        self.gate.wait()
        self.inner.on_message_received(msg)

    def stop(self):
        self.inner.stop()


def test_log_calls_never_wait_for_the_file(db, tmp_path):
    """The writer thread is stuck: the calls (the frame's taps) return at once, 5 wait in
    the queue, the rest are dropped and counted; stop() writes the 5 and closes."""
    lg = MessageLog(tmp_path / "q.asc", queue_size=5)
    lg._writer = gated = _Gated(lg._writer)
    msgs = [db.encode("EGO", {**EGO, "speed": float(k)}) for k in range(20)]
    for m in msgs:
        lg.sent(m)
    assert lg.count == 5 and lg.dropped == 15 and lg.written == 0 and lg.max_queued == 5
    gated.gate.set()
    lg.stop()
    assert lg.written == 5 and lg.stats()["dropped"] == 15
    speeds = [db.decode(m)["speed"] for _, m in read_log(tmp_path / "q.asc")]
    assert speeds == pytest.approx([0.0, 1.0, 2.0, 3.0, 4.0], abs=0.01)


@pytest.mark.timing
def test_a_log_writer_error_is_raised_by_the_next_call_and_by_stop(db, tmp_path):
    from cosim.errors import OutputError
    m = db.encode("EGO", EGO)
    for raised_by in ("call", "stop"):
        path = tmp_path / f"e_{raised_by}.asc"
        lg = MessageLog(path, reorder_s=0)  # written at once: the error comes at once
        lg._writer = _Gated(lg._writer, fail=True)
        lg(m)
        wait_for(lambda lg=lg: lg.stats()["error"] is not None, "the writer thread's error")
        if raised_by == "call":
            with pytest.raises(OutputError, match="No space left on device") as info:
                lg(m)
            lg.stop()  # reported once: stop() does not raise it again
        else:
            with pytest.raises(OutputError, match="No space left on device") as info:
                lg.stop()
        assert str(path) in str(info.value) and isinstance(info.value.__cause__, OSError)
        assert lg.written == 0


def test_log_without_thread_writes_in_the_call(db, tmp_path):
    lg = MessageLog(tmp_path / "i.asc", thread=False)
    lg.sent(db.encode("EGO", EGO))
    assert lg.written == lg.count == 1 and lg.stats()["thread"] is False
    lg.stop()
    assert len(list(read_log(tmp_path / "i.asc"))) == 1


@pytest.mark.timing
@pytest.mark.parametrize("suffix", [".asc", ".blf"])
def test_log_round_trip_and_replay(pair, db, tmp_path, suffix):
    a, b = pair
    path = tmp_path / f"acc{suffix}"
    sent = [db.encode("RADAR", RADAR), db.encode("EGO", EGO), db.encode("ACC_CMD", CMD)]
    with MessageLog(path) as lg:
        b.start_reader(on_frame=lg)
        for m in sent[:2]:
            a.write(m)
            time.sleep(0.002)
        lg.sent(sent[2])
        wait_for(lambda: lg.count >= 3, "3 frames in the log")
        b.close()
    lg.stop()  # idempotent
    rows = list(read_log(path))
    assert [m.arbitration_id for _, m in rows] == [0x100, 0x101, 0x200]
    assert [m.is_rx for _, m in rows] == [True, True, False]
    assert rows[0][0] == 0.0 and 0 < rows[1][0] < rows[2][0] < 1.0
    assert db.decode(rows[0][1]) == db.decode(sent[0])
    assert db.decode(rows[2][1]) == pytest.approx(CMD, abs=1e-3)
    assert [m.arbitration_id for _, m in read_log(path, only_rx=True)] == [0x100, 0x101]

    # replay on a fresh listener, on a fake clock: spacing kept, scaled by speed
    b2 = CanBackend(channel=a.channel, timeout=0.5).open()
    clock = [0.0]
    slept: list[float] = []

    def sleep(dt):
        slept.append(dt)
        clock[0] += dt

    assert replay(path, a, speed=2.0, sleep=sleep, clock=lambda: clock[0]) == 3
    assert sum(slept) == pytest.approx(rows[2][0] / 2.0, abs=1e-5)
    assert [db.decode_named(b2.expect())[0] for _ in range(3)] == ["RADAR", "EGO", "ACC_CMD"]
    b2.close()
    with pytest.raises(ValueError, match="speed must be > 0"):
        replay(path, a, speed=0)


def test_the_bus_log_is_written_in_time_order(db, tmp_path):
    """Issue 22 item 11: bus.asc had 1423 of 5616 entries out of time order (up to 1.2 s):
    received frames carry their receive time, sent ones the time of sending."""
    import can as pycan
    lg = MessageLog(tmp_path / "o.asc")
    t0 = 1_700_000_000.0
    stamps = [0.0, 1.2, 0.1, 0.5, 1.0, 0.3, 2.5, 1.4, 4.0, 0.2]  # 0.2 arrives 3.8 s late
    for i, ts in enumerate(stamps):
        lg(pycan.Message(timestamp=t0 + ts, arbitration_id=0x100 + i, data=[i],
                         is_extended_id=False))
    lg.stop()
    got = list(read_log(tmp_path / "o.asc"))
    times = [t for t, _ in got]
    assert times == sorted(times) and len(got) == len(stamps)
    assert lg.late == 1 and lg.stats()["late"] == 1
    # the late one is written with the last time written (1.4 s), before 2.5 and 4.0
    assert [m.arbitration_id - 0x100 for _, m in got] == [0, 2, 5, 3, 4, 1, 7, 9, 6, 8]
