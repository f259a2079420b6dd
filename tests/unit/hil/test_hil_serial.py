"""SerialBackend over loop:// and over a real pty pair driven by the DeviceEmulator."""

from __future__ import annotations

import logging
import os
import threading
import time
import traceback

import pytest

pytest.importorskip("serial", reason="pyserial is in the 'hil' extra")

from hil import BackendState, BackendTimeout, CRCError, Disconnected  # noqa: E402
from hil.serial import (  # noqa: E402
    DeviceEmulator,
    EmulatedSerialBackend,
    Field,
    Layout,
    SerialBackend,
)
from tests.timing_plugin import GENEROUS_S, wait_for  # noqa: E402

#: real ptys, reader and emulator threads, timeouts and the baud-rate model's wire times
pytestmark = [pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs POSIX ptys"),
              pytest.mark.timing]

SENSOR = Layout([Field("seq", "I"), Field("speed", "h", scale=0.01, unit="m/s"),
                 Field("temp", "h", scale=0.1, offset=-40.0, unit="degC")], name="sensor")


def _collect(backend, n, timeout=GENEROUS_S):
    out, deadline = [], time.perf_counter() + timeout
    while len(out) < n and time.perf_counter() < deadline:
        f = backend.read(0.05)
        if f is not None:
            out.append(f)
    return out


# ------------------------------------------------------------------ loop://
@pytest.mark.parametrize("framing", ["cobs", "slip"])
def test_loop_url_round_trip_with_layout_and_crc(framing):
    with SerialBackend("loop://", framing=framing, crc="crc16-ccitt-false", layout=SENSOR,
                       timeout=0.5) as b:
        b.write({"seq": 1, "speed": -3.21, "temp": 21.5})
        b.write({"seq": 2, "speed": 0.0, "temp": -40.0})
        got = [b.read(), b.read()]
    assert got[0]["seq"] == 1 and got[0]["speed"] == pytest.approx(-3.21)
    assert got[0]["temp"] == pytest.approx(21.5)
    assert got[1] == {"seq": 2, "speed": 0.0, "temp": -40.0}
    assert b.counters.frames_in == 2 and b.counters.crc_errors == 0


def test_bad_values_do_not_fault_the_backend():
    with SerialBackend("loop://", layout=SENSOR) as b:
        with pytest.raises(ValueError, match="does not fit"):
            b.write({"seq": 1, "speed": 1000.0, "temp": 0.0})
        assert b.state is BackendState.OPEN
        with pytest.raises(TypeError, match="takes a mapping"):
            b.write(b"raw")


def test_line_framing_over_loop():
    with SerialBackend("loop://", framing="lines", timeout=0.5) as b:
        b.write(b"*IDN?")
        assert b.read() == b"*IDN?"
    with pytest.raises(ValueError, match="cannot ride on line framing"):
        SerialBackend("loop://", framing="lines", crc="crc8")


# ---------------------------------------------------------------------- pty
@pytest.fixture
def twin():
    b = EmulatedSerialBackend(baudrate=115200, crc="crc16-modbus", timeout=GENEROUS_S,
                              name="dev", backoff=(0.005, 0.05))
    b.open()
    yield b
    b.close()


def test_frames_from_the_emulator_arrive_decoded(twin):
    em = twin.emulator
    assert os.path.islink(em.port) and twin.serial.port == em.port
    payloads = [bytes([i]) * (i + 1) for i in range(20)] + [b"", b"\x00" * 300]
    for p in payloads:
        em.send(p)
    assert _collect(twin, len(payloads)) == payloads
    c = twin.counters
    assert c.frames_in == len(payloads) and c.crc_errors == 0 and c.frame_errors == 0


def test_request_response_through_the_device(twin):
    twin.write(b"ping")
    assert twin.expect() == b"ping"  # the default device echoes
    assert twin.emulator.received == [b"ping"]


def test_partial_frames_across_reads(twin):
    em = twin.emulator
    wire = em.encode(b"split me please")
    em.send_raw(wire[:5])
    assert twin.read(0.1) is None  # half a frame: nothing yet, bytes held back
    assert twin.framing.pending == 5
    em.send_raw(wire[5:] + em.encode(b"next"))
    assert _collect(twin, 2) == [b"split me please", b"next"]


def _corrupt(wire: bytes) -> bytes:
    bad = bytearray(wire)
    bad[3] ^= 0x01  # a data byte (payloads below have no zeros: no COBS code is hit)
    assert 0 not in bad[:-1]
    return bytes(bad)


def test_corrupted_frame_is_counted_and_the_stream_resynchronises(twin, caplog):
    em = twin.emulator
    em.send(b"\x11" * 8)
    em.send_raw(_corrupt(em.encode(b"\x22" * 8)))
    for k in range(3, 6):
        em.send(bytes([k * 0x11]) * 8)
    with caplog.at_level(logging.WARNING, logger="hil"):
        got = _collect(twin, 4)
    assert got == [b"\x11" * 8, b"\x33" * 8, b"\x44" * 8, b"\x55" * 8]
    c = twin.counters
    assert (c.crc_errors, c.frame_errors, c.errors) == (1, 0, 1)
    assert "crc16-modbus mismatch" in caplog.text and "bad frame dropped" in caplog.text
    assert twin.state is BackendState.OPEN


def test_crc_policy_raise(twin):
    twin.on_frame_error = "raise"
    em = twin.emulator
    em.send_raw(_corrupt(em.encode(b"\x22" * 8)))
    em.send(b"good")
    with pytest.raises(CRCError, match=r"serial-emulator '.*tty' \('dev'\): crc16-modbus "
                                       r"mismatch") as e:
        twin.read(GENEROUS_S)
    assert isinstance(e.value, ValueError)
    assert twin.read(GENEROUS_S) == b"good"  # the stream goes on
    assert twin.counters.crc_errors == 1 and twin.state is BackendState.OPEN


def test_device_sees_host_crc_errors(twin):
    twin.write_raw(_corrupt(twin.encode(b"\x33" * 8)))
    twin.write(b"fine")
    assert twin.emulator.wait_received(1, GENEROUS_S)
    assert twin.emulator.received == [b"fine"]
    assert twin.emulator.counters.crc_errors == 1


def test_replug_while_streaming_reconnects_without_losing_the_reader(twin, caplog):
    """The device is pulled for 50 ms (and until a frame was lost on the way: a busy
    machine may not run the streamer in 50 ms) while it streams a frame every 2 ms; the
    reader thread survives, the backend reconnects once, frames resume, none is garbled."""
    em = twin.emulator
    stop = threading.Event()
    sent = []

    def stream():
        seq = 0
        while not stop.is_set():
            em.send(SENSOR.pack(seq=seq, speed=1.0, temp=20.0))
            sent.append(seq)
            seq += 1
            time.sleep(0.002)

    twin.layout = SENSOR
    with caplog.at_level(logging.INFO, logger="hil"):
        reader = twin.start_reader(poll=0.02)
        streamer = threading.Thread(target=stream, daemon=True)
        streamer.start()
        wait_for(lambda: len(sent) >= 50, "50 frames streamed before the pull")
        pulled = time.monotonic()
        em.unplug()
        wait_for(lambda: em.lost_bytes > 0, "a frame sent while unplugged")
        time.sleep(max(0.0, 0.05 - (time.monotonic() - pulled)))
        em.plug()
        wait_for(lambda: twin.counters.reconnects >= 1, "the reconnect")
        n_at_reconnect = len(sent)
        wait_for(lambda: len(sent) >= n_at_reconnect + 50, "50 frames after the reconnect")
        stop.set()
        streamer.join()
        frames = []

        def the_last_one():
            frames.extend(twin.drain())
            return frames and frames[-1]["seq"] == sent[-1]
        wait_for(the_last_one, "the last frame streamed")
        twin.check()  # no background error
    seqs = [f["seq"] for f in frames]
    c = twin.counters
    # measured (3 runs): 44-46 frames before the pull, 35 lost, 51-52 after the reconnect,
    # which came 77 ms after the pull (5 attempts: backoff 5, 10, 20, 40 ms; 50 ms down)
    assert (c.disconnects, c.reconnects) == (1, 1), c
    assert reader.is_alive() and twin.state is BackendState.OPEN
    assert seqs == sorted(set(seqs)), "frames duplicated or out of order"
    assert c.crc_errors == 0 and c.frame_errors == 0
    assert any(s >= n_at_reconnect for s in seqs), "no frame after the reconnect"
    assert len(seqs) < len(sent)  # frames sent while unplugged are lost, as on a real cable
    assert "link lost" in caplog.text and "reconnected after" in caplog.text
    assert em.lost_bytes > 0


def test_write_while_unplugged_times_out_then_recovers(twin):
    em = twin.emulator
    em.unplug()
    with pytest.raises(BackendTimeout, match="write not sent: the link has been down"):
        twin.write(b"lost", timeout=0.05)
    assert twin.state is BackendState.RECONNECTING
    em.plug()
    twin.write(b"after")
    assert em.wait_received(1, GENEROUS_S) and em.received == [b"after"]
    assert twin.counters.reconnects == 1 and twin.counters.disconnects == 1


def test_reader_and_writer_share_one_reconnect(twin):
    """Both threads hit the dead link; exactly one disconnect and one reconnect count,
    the reader thread survives and no background error is reported."""
    em = twin.emulator
    reader = twin.start_reader(poll=0.01)
    twin.write(b"one")
    frames = []

    def echo(payload):
        def back():
            frames.extend(twin.drain())
            return payload in frames
        return back
    wait_for(echo(b"one"), "the echo of 'one'")
    em.unplug()
    for _ in range(3):
        with pytest.raises(BackendTimeout):
            twin.write(b"lost", timeout=0.02)
    em.plug()
    # reconnects (here or in the reader thread), then sends
    twin.write(b"two", timeout=GENEROUS_S)
    wait_for(echo(b"two"), "the echo of 'two'")
    twin.check()
    assert frames == [b"one", b"two"] and reader.is_alive()
    c = twin.counters
    assert (c.disconnects, c.reconnects, c.timeouts) == (1, 1, 3), c


def test_device_gone_for_good_faults_after_reconnect_timeout(twin):
    twin.reconnect_timeout = 0.1
    twin.emulator.unplug()
    with pytest.raises(Disconnected, match="link down for .*reconnect attempts failed"):
        for _ in range(50):
            twin.read(0.02)
    assert twin.state is BackendState.FAULTED


def _bad_device(payload):
    return 1 / 0 if payload == b"crash" else payload


def test_device_exception_is_reraised_by_check():
    with EmulatedSerialBackend(device=_bad_device, timeout=GENEROUS_S) as b:
        b.write(b"crash")
        wait_for(b.emulator.errors.pending, "the device's exception")
        with pytest.raises(ZeroDivisionError) as e:
            b.check()
    names = [f.name for f in traceback.extract_tb(e.value.__traceback__)]
    assert names[-1] == "_bad_device" and "_handle" in names


# ----------------------------------------------------------- baud-rate model
def test_baud_rate_model_device_to_host():
    """96 wire bytes at 9600 baud, 8N1: 96 * 10 / 9600 = 100 ms on the wire.
    Measured: 100.2-100.3 ms (the pty alone moves them in ~0.1 ms)."""
    with EmulatedSerialBackend(baudrate=9600, timeout=GENEROUS_S) as b:
        em = b.emulator
        payload = bytes(range(1, 95))  # COBS: 1 code byte + 94 + delimiter = 96 bytes
        assert len(em.encode(payload)) == 96
        ideal = em.wire_time(96)
        assert ideal == pytest.approx(0.1)
        t = time.perf_counter()
        em.send(payload)
        assert b.read() == payload
        dt = time.perf_counter() - t
    assert dt >= 0.9 * ideal, f"{dt * 1e3:.1f} ms < 90% of {ideal * 1e3:.1f} ms"


def test_baud_rate_model_round_trip():
    """Echo of a 16-byte payload at 115200 baud: 19 wire bytes each way (COBS + CRC-8 +
    delimiter) = 38 * 10 / 115200 = 3.30 ms.  Measured over 50 runs: min 3.69, p50 3.73,
    max 6.6 ms; with the model off (model_baudrate=False) min 0.10, p50 0.13 ms."""
    with EmulatedSerialBackend(baudrate=115200, crc="crc8", timeout=GENEROUS_S) as b:
        wire = len(b.encode(b"x" * 16))
        assert wire == 19
        ideal = b.emulator.wire_time(2 * wire)
        times = []
        for _ in range(5):
            t = time.perf_counter()
            b.write(b"x" * 16)
            assert b.read() == b"x" * 16
            times.append(time.perf_counter() - t)
    assert min(times) >= 0.9 * ideal, [f"{x * 1e3:.2f} ms" for x in times]


def test_baud_rate_model_host_to_device_and_queueing():
    """Two 48-byte frames written back to back at 9600 baud: the device gets the
    second one only after both have crossed the wire, 96 bytes = 100 ms; the echoes
    are back at 150 ms (the wire is full duplex)."""
    with DeviceEmulator(baudrate=9600, framing="slip") as em:
        with SerialBackend(em.port, framing="slip", timeout=GENEROUS_S) as b:
            wire = b.encode(b"a" * 46)
            assert len(wire) == 48
            t = time.perf_counter()
            b.write(b"a" * 46)
            b.write(b"b" * 46)
            assert em.wait_received(2, GENEROUS_S)
            dt = time.perf_counter() - t
            assert em.received == [b"a" * 46, b"b" * 46]
            # full duplex: echo A goes out from 50 ms (while B still comes in) to 100 ms,
            # echo B from 100 ms (when B is in) to 150 ms
            assert _collect(b, 2) == [b"a" * 46, b"b" * 46]
            dt_back = time.perf_counter() - t
    assert dt >= 0.9 * 0.1, f"{dt * 1e3:.1f} ms"  # measured 100.3-100.7 ms
    assert dt_back >= 0.9 * 0.15, f"{dt_back * 1e3:.1f} ms"  # measured 150.8-150.9 ms


def test_a_write_to_a_stalled_reader_is_bounded_and_says_so():
    """Issue 22 item 7: a write to a reader that stopped reading never returned (and burned
    CPU whatever write_timeout); now it gives up after write_timeout, without spinning."""
    import os
    import tty

    from hil.errors import BackendTimeout
    from hil.serial.backend import SerialBackend
    master, slave = os.openpty()
    tty.setraw(slave)
    b = SerialBackend(os.ttyname(slave), framing="cobs", write_timeout=0.2,
                      reconnect=False).open()
    try:
        with pytest.raises(BackendTimeout, match=r"write stalled: the reader took no bytes for "
                                                 r"0\.2 s .* the frame is cut"):
            for _ in range(10_000):  # the pty's buffer fills: nobody reads the master
                b.write(b"x" * 200)
        assert b.stalls == 1
        with pytest.raises(BackendTimeout):  # None is bounded too
            b.write(b"x" * 200, timeout=None)
        with pytest.raises(ValueError, match="every write is bounded"):
            SerialBackend(os.ttyname(slave), write_timeout=None)
    finally:
        b.close()
        os.close(master)
        os.close(slave)
