"""Bridge blocks (CAN, serial, DAQ) in ordinary offline simulations on virtual transports,
fault injection, backend taps and the udp_multicast own-echo filter."""

import itertools
import math

import numpy as np
import pytest

pytest.importorskip("can")
pytest.importorskip("cantools")

import can  # noqa: E402

from blocks.math import Gain  # noqa: E402
from blocks.sources import ClosedFormSource, Constant, Sine, Step  # noqa: E402
from cosim import DiagramBuilder, Simulator  # noqa: E402
from cosim.errors import ContextError, ParameterError, StepError  # noqa: E402
from hil.bridges import (  # noqa: E402
    BridgeError,
    CanReceive,
    CanTransmit,
    DaqInput,
    DaqOutput,
    SerialReceive,
    SerialTransmit,
)
from hil.can import ACC_DBC, CanBackend, CanDatabase, MessageLog, StaleSignal, read_log  # noqa: E402
from hil.daq import ChannelSpec  # noqa: E402
from hil.errors import Disconnected  # noqa: E402
from hil.faults import Fault, FaultyBackend  # noqa: E402
from hil.registry import create_backend  # noqa: E402

_ids = itertools.count()
DB = CanDatabase(ACC_DBC)


@pytest.fixture
def pair():
    ch = f"bridge-test-{next(_ids)}"
    a = CanBackend("virtual", ch, name="a", timeout=0.0).open()
    b = CanBackend("virtual", ch, name="b", timeout=0.0).open()
    yield a, b
    a.close()
    b.close()


def cmd_loop(a, b, *, period=0.01, enable_until=None, **rx_kw):
    """thr (sine) -> tx (ACC_CMD on a) ... bus ... rx (on b)."""
    bld = DiagramBuilder("loop")
    thr = bld.add(Sine("thr", amplitude=0.4, frequency_hz=1.0, bias=0.5))
    brk = bld.add(Constant("brk", 100.0, unit="N*m"))
    tx = bld.add(CanTransmit("tx", a, DB, "ACC_CMD", period,
                             enable_input=enable_until is not None))
    bld.add(CanReceive("rx", b, DB, "ACC_CMD", period, **rx_kw))
    bld.connect(thr.y, tx.throttle)
    bld.connect(brk.y, tx.brake_torque)
    if enable_until is not None:
        en = bld.add(Step("en", enable_until, final=0.0, initial=1.0))
        bld.connect(en.y, tx.enable)
    return bld.build()


def run(d, t_end, record, dt=0.01):
    return Simulator(d, solver="rk4", dt=dt, record=record).run(t_end)


# ------------------------------------------------------------------ CAN
def test_can_ports_are_typed_from_the_dbc(pair):
    a, b = pair
    rx = CanReceive("rx", b, DB, ["RADAR", "EGO"], 0.01)
    tx = CanTransmit("tx", a, DB, "ACC_CMD", 0.02)
    assert rx.range.unit_text == "m" and rx.range_rate.unit_text == "m/s"
    assert rx.output("engine_speed").unit_text == "rad/s"
    assert rx.output("RADAR_ok").unit_text == "1" and rx.ok.unit_text == "1"
    assert tx.brake_torque.unit_text == "N*m" and list(tx.inputs) == ["throttle",
                                                                      "brake_torque"]
    with pytest.raises(AttributeError, match="ports: throttle, brake_torque"):
        _ = tx.brake


def test_can_round_trip_is_quantized_by_the_dbc_and_one_period_late(pair):
    a, b = pair
    res = run(cmd_loop(a, b), 0.5, ["thr.y", "rx.throttle", "rx.brake_torque", "rx.ok"])
    thr, got = res["thr.y"], res["rx.throttle"]
    # sent in the update at t_k (after the outputs), read at t_{k+1}: one period late,
    # rounded to the 0.001 scale of the signal
    np.testing.assert_allclose(got[1:], np.round(thr[:-1] / 0.001) * 0.001, atol=1e-9)
    assert got[0] == 0.0 and res["rx.ok"][0] == 0.0 and np.all(res["rx.ok"][1:] == 1.0)
    assert np.all(res["rx.brake_torque"][1:] == 100.0)


def test_a_chain_in_one_diagram_reads_before_it_computes(pair):
    """Frames that arrived before a hit are seen by blocks downstream in that hit."""
    a, b = pair
    bld = DiagramBuilder("chain")
    rx = bld.add(CanReceive("rx", b, DB, "ACC_CMD", 0.01))
    g = bld.add(Gain("g", 2.0))
    bld.connect(rx.throttle, g.u)
    d = bld.build()
    sim = Simulator(d, solver="rk4", dt=0.01, record=["g.y"])
    sim.initialize()
    for k, v in enumerate([0.1, 0.2, 0.3], start=1):
        a.write(DB.encode("ACC_CMD", {"throttle": v, "brake_torque": 0.0}))
        sim.advance_to(0.01 * k)
        assert sim.ctx.signals[d.plan.output_slot[g.y]] == pytest.approx(2 * v, abs=1e-12) \
            if hasattr(d, "plan") else True
    res = sim.finish()
    np.testing.assert_allclose(res["g.y"][1:], [0.2, 0.4, 0.6], atol=1e-12)


def test_stale_commands_take_the_safe_values_and_come_back(pair):
    a, b = pair
    d = cmd_loop(a, b, enable_until=0.3, stale_after_s=0.05, on_stale="safe",
                 safe={"throttle": 0.0, "brake_torque": 500.0})
    res = run(d, 0.6, ["rx.throttle", "rx.brake_torque", "rx.ok", "rx.ACC_CMD_ok"])
    t, ok = res.time, res["rx.ok"]
    # last frame sent at 0.29 s (enable drops at 0.3), read at 0.30; stale after 0.35
    assert np.all(ok[(t > 0.005) & (t < 0.355)] == 1.0)
    assert np.all(ok[t > 0.355] == 0.0)
    assert np.all(res["rx.brake_torque"][t > 0.355] == 500.0)
    assert np.all(res["rx.throttle"][t > 0.355] == 0.0)
    np.testing.assert_array_equal(res["rx.ACC_CMD_ok"], ok)
    rx = d.blocks["rx"]
    assert rx.stats()["stale_events"] == {"ACC_CMD": 1}


def test_hold_keeps_the_last_value(pair):
    a, b = pair
    d = cmd_loop(a, b, enable_until=0.3, stale_after_s=0.05)
    res = run(d, 0.6, ["rx.throttle", "rx.ok"])
    t = res.time
    last = res["rx.throttle"][np.argmin(np.abs(t - 0.3))]
    assert np.all(res["rx.throttle"][t > 0.3] == last) and res["rx.ok"][-1] == 0.0


def test_raise_names_block_message_and_age(pair):
    a, b = pair
    d = cmd_loop(a, b, enable_until=0.3, stale_after_s=0.05, on_stale="raise")
    with pytest.raises((StaleSignal, StepError)) as e:
        run(d, 0.6, ["rx.ok"])
    msg = str(e.value)
    assert "CanReceive 'rx'" in msg and "ACC_CMD is stale" in msg and "ms ago" in msg


def test_initial_values_until_the_first_frame_within_the_startup_grace(pair):
    a, b = pair
    d = cmd_loop(a, b, enable_until=0.0, on_stale="safe", startup_s=0.2,
                 safe={"throttle": 0.0, "brake_torque": 900.0},
                 initial={"throttle": 0.25, "brake_torque": 0.0})
    res = run(d, 0.4, ["rx.throttle", "rx.brake_torque", "rx.ok"])
    t = res.time
    assert np.all(res["rx.throttle"][t <= 0.2 + 1e-9] == 0.25)  # never received: initial
    assert np.all(res["rx.brake_torque"][t > 0.2 + 1e-9] == 900.0)  # then stale: safe
    assert np.all(res["rx.ok"] == 0.0)


def test_transmit_clips_into_the_dbc_range_and_refuses_nan(pair):
    a, b = pair
    bld = DiagramBuilder("clip")
    c = bld.add(Constant("c", 1.7))
    z = bld.add(Constant("z", -3.0, unit="N*m"))
    tx = bld.add(CanTransmit("tx", a, DB, "ACC_CMD", 0.01))
    bld.connect(c.y, tx.throttle)
    bld.connect(z.y, tx.brake_torque)
    d = bld.build()
    run(d, 0.05, [])
    got = DB.decode(b.expect(1.0))
    assert got == {"throttle": 1.0, "brake_torque": 0.0}
    assert d.blocks["tx"].stats()["clipped"] == {"throttle": 6, "brake_torque": 6}

    bld = DiagramBuilder("nan")
    c = bld.add(ClosedFormSource("c", lambda t: math.nan))   # a Constant refuses NaN
    tx = bld.add(CanTransmit("tx", a, DB, "ACC_CMD", 0.01))
    bld.connect(c.y, tx.throttle)
    bld.connect(c.y, tx.brake_torque)
    with pytest.raises((BridgeError, StepError), match="input 'throttle' is NaN"):
        run(bld.build(), 0.05, [])


def test_configuration_errors_say_what_and_where(pair):
    a, b = pair
    with pytest.raises(Exception, match="unknown message 'ACC'.*ACC_CMD"):
        CanReceive("rx", b, DB, "ACC", 0.01)
    with pytest.raises(ParameterError, match="needs a safe value for every signal; missing "
                                             "brake_torque"):
        CanReceive("rx", b, DB, "ACC_CMD", 0.01, on_stale="safe", safe={"throttle": 0.0})
    with pytest.raises(ParameterError, match="on_stale must be one of hold, safe, raise"):
        CanReceive("rx", b, DB, "ACC_CMD", 0.01, on_stale="ignore")
    with pytest.raises(ParameterError, match="no cycle time in the DBC"):
        CanTransmit("tx", a, DB, "ACC_CMD")
    with pytest.raises(ParameterError, match="backend must be a hil Backend"):
        CanReceive("rx", object(), DB, "ACC_CMD", 0.01)
    b.close()
    with pytest.raises((BridgeError, StepError), match="the backend is closed; open it"):
        run(cmd_loop(a, b), 0.02, ["rx.ok"])


def test_bridges_refuse_rollback(pair):
    a, b = pair
    d = cmd_loop(a, b)
    sim = Simulator(d, solver="rk4", dt=0.01, record=[])
    sim.initialize()
    with pytest.raises(ContextError, match="block '(rx|tx)' keeps state 'device' outside"):
        sim.ctx.snapshot()


# ------------------------------------------------------------------ faults
def _clocked(inner, faults, t):
    return FaultyBackend(inner, faults, clock=lambda: t[0]).open()


def test_bus_off_is_held_recovered_and_counted(pair):
    a, b = pair
    t = [0.0]
    fb = _clocked(a, [Fault("bus_off", 0.1, 0.2)], t)
    bld = DiagramBuilder("busoff")
    thr = bld.add(Constant("thr", 0.5))
    tx = bld.add(CanTransmit("tx", fb, DB, "ACC_CMD", 0.01, on_error="hold",
                             recover_every_s=0.01))
    bld.connect(thr.y, tx.throttle)
    bld.connect(thr.y, tx.brake_torque)
    d = bld.build()
    sim = Simulator(d, solver="rk4", dt=0.01, record=[])
    sim.initialize()
    for k in range(1, 31):
        t[0] = 0.01 * k
        sim.advance_to(0.01 * k)
    sim.finish()
    st = d.blocks["tx"].stats()
    # hits 0.00..0.30 (31 sends); 0.10..0.19 fail (10 hits, bus off); recover() is tried
    # before each hit while down (recover_every_s = the period) and works at 0.20
    assert st["errors"] == 10 and st["recoveries"] == 1 and st["sent"] == 21
    # the first write meets the bus-off; the backend stays faulted (and later writes are
    # refused without reaching the bus) until a recover() succeeds
    assert fb.injected["bus_off_tx"] == 1 and fb.counters.reconnects == 1
    assert len(b.drain()) == 0 and b.read(0) is not None  # frames flowed again


def test_bus_off_under_raise_stops_the_run(pair):
    a, b = pair
    fb = FaultyBackend(a, [Fault("bus_off", 0.0)]).open()
    bld = DiagramBuilder("busoff")
    thr = bld.add(Constant("thr", 0.5))
    tx = bld.add(CanTransmit("tx", fb, DB, "ACC_CMD", 0.01))
    bld.connect(thr.y, tx.throttle)
    bld.connect(thr.y, tx.brake_torque)
    with pytest.raises((BridgeError, StepError), match="send ACC_CMD failed at t = 0 s.*bus-off "
                                                       "\\(injected"):
        run(bld.build(), 0.05, [])


def test_drop_is_seeded_and_counted(pair):
    a, b = pair
    t = [0.0]
    fb = _clocked(b, [Fault("drop", 0.0, 1.0, direction="rx", probability=0.3)], t)
    for _ in range(1000):
        a.write(can.Message(arbitration_id=0x200, data=b"\x01\x00\x00\x00"))
    got = 0
    while fb.read(0) is not None:
        got += 1
    dropped = fb.injected["drop_rx"]
    assert got + dropped == 1000 and 240 < dropped < 360  # 300 +- 4 sigma
    # the same seed drops the same frames
    c = CanBackend("virtual", b.channel, timeout=0.0).open()
    fb2 = _clocked(c, [Fault("drop", 0.0, 1.0, direction="rx", probability=0.3)], t)
    for _ in range(1000):
        a.write(can.Message(arbitration_id=0x200, data=b"\x01\x00\x00\x00"))
    while fb2.read(0) is not None:
        pass
    assert fb2.injected["drop_rx"] == dropped
    c.close()


def test_delay_holds_frames_back_in_order(pair):
    a, b = pair
    t = [0.0]
    fb = _clocked(b, [Fault("delay", 0.0, 1.0, direction="rx", delay_s=0.05)], t)
    for i in range(3):
        a.write(can.Message(arbitration_id=0x100 + i, data=b""))
    assert fb.read(0) is None and fb.pending() == 3
    t[0] = 0.049
    assert fb.read(0) is None
    t[0] = 0.05
    assert [fb.read(0).arbitration_id for _ in range(3)] == [0x100, 0x101, 0x102]
    t[0] = 2.0  # fault over: frames pass at once
    a.write(can.Message(arbitration_id=0x7, data=b""))
    assert fb.read(0).arbitration_id == 0x7


def test_recover_fails_while_the_bus_is_off(pair):
    a, _ = pair
    t = [0.0]
    fb = _clocked(a, [Fault("bus_off", 0.0, 0.5)], t)
    with pytest.raises(Disconnected, match="bus-off \\(injected fault at t = 0.000 s\\)"):
        fb.write(DB.encode("ACC_CMD", {"throttle": 0, "brake_torque": 0}))
    with pytest.raises(Disconnected, match="still off"):
        fb.recover()
    t[0] = 0.5
    fb.recover()
    fb.write(DB.encode("ACC_CMD", {"throttle": 0, "brake_torque": 0}))


def test_fault_validation():
    with pytest.raises(ValueError, match="kind must be one of drop, delay, bus_off"):
        Fault("jam")
    with pytest.raises(ValueError, match="delay_s must be > 0"):
        Fault("delay")
    with pytest.raises(ValueError, match="start_s .* must be before end_s"):
        Fault("drop", 2.0, 1.0)


# ------------------------------------------------------------------ taps, echo filter
def test_tap_logs_both_directions(pair, tmp_path):
    a, b = pair
    log = MessageLog(tmp_path / "bus.asc")
    a.add_tap(rx=log, tx=log.sent)
    a.write(can.Message(arbitration_id=0x10, data=b"\x01"))
    b.write(can.Message(arbitration_id=0x20, data=b"\x02"))
    assert a.read(1.0).arbitration_id == 0x20
    log.stop()
    msgs = [m for _, m in read_log(tmp_path / "bus.asc")]
    assert [(m.arbitration_id, m.is_rx) for m in msgs] == [(0x10, False), (0x20, True)]


@pytest.mark.timing
def test_udp_multicast_drops_only_its_own_echoes():
    import random

    from tests.timing_plugin import GENEROUS_S
    rnd = random.Random()  # a group of its own: other test runs on this machine stay apart
    group = f"239.{rnd.randint(1, 254)}.{rnd.randint(1, 254)}.{rnd.randint(1, 254)}"
    try:
        a = CanBackend("udp_multicast", group, hop_limit=0, timeout=0.5).open()
    except Exception as exc:  # noqa: BLE001 - no multicast route on this host
        pytest.skip(f"udp_multicast not available: {exc}")
    b = CanBackend("udp_multicast", group, hop_limit=0, timeout=0.5).open()
    try:
        a.write(can.Message(arbitration_id=0x123, data=b"\x01"))
        assert b.expect(GENEROUS_S).arbitration_id == 0x123
        b.write(can.Message(arbitration_id=0x321, data=b"\x02"))
        assert a.expect(GENEROUS_S).arbitration_id == 0x321  # a's own 0x123 was dropped before it
        assert a.own_echoes == 1  # b's echo of 0x321 is still queued: b reads no more
    finally:
        a.close()
        b.close()


# ------------------------------------------------------------------ serial
def test_serial_bridges_over_loopback():
    from hil.serial import Field, Layout, SerialBackend
    lay = Layout([Field("seq", "H"), Field("pos", "h", scale=0.001, unit="m"),
                  Field("tag", "2s")], name="pos")
    port = SerialBackend("loop://", framing="cobs", crc="crc16-ccitt-false").open()
    bld = DiagramBuilder("ser")
    s = bld.add(Sine("s", amplitude=20.0, frequency_hz=2.0, unit="m"))
    n = bld.add(Constant("n", 7.0))
    tx = bld.add(SerialTransmit("tx", port, 0.01, layout=lay, clip=True))
    rx = bld.add(SerialReceive("rx", port, 0.01, layout=lay))
    bld.connect(s.y, tx.pos)
    bld.connect(n.y, tx.seq)
    d = bld.build()
    assert rx.pos.unit_text == "m" and "tag" not in rx.outputs
    res = run(d, 0.5, ["s.y", "rx.pos", "rx.seq", "rx.ok"])
    sent = np.clip(res["s.y"][:-1], -32.768, 32.767)
    np.testing.assert_allclose(res["rx.pos"][1:], np.round(sent / 0.001) * 0.001, atol=1e-9)
    assert np.all(res["rx.seq"][1:] == 7.0) and np.all(res["rx.ok"][1:] == 1.0)
    assert d.blocks["tx"].stats()["clipped"] == {}
    port.close()


def test_serial_transmit_refuses_a_second_layout():
    from hil.serial import Field, Layout, SerialBackend
    a = Layout([Field("x", "h")])
    port = SerialBackend("loop://", layout=a)
    with pytest.raises(ParameterError, match="the backend has its own layout"):
        SerialTransmit("tx", port, 0.01, layout=Layout([Field("y", "h")]))


# ------------------------------------------------------------------ DAQ
def test_daq_bridges_through_the_simulated_device():
    chans = [ChannelSpec("Dev1/ao0", "ao", (-10, 10), "V", 12),
             ChannelSpec("Dev1/ai0", "ai", (-10, 10), "V", 12),
             ChannelSpec("do0", "do"), ChannelSpec("di0", "di")]
    be = create_backend("daq-sim", channels=chans, wiring={"Dev1/ao0": "Dev1/ai0",
                                                           "do0": "di0"}).open()
    bld = DiagramBuilder("daq")
    s = bld.add(Sine("s", amplitude=5.0, frequency_hz=1.0, unit="V"))
    st = bld.add(Step("st", 0.2))
    out = bld.add(DaqOutput("out", be, 0.01, ports={"Dev1/ao0": "valve"}))
    inp = bld.add(DaqInput("inp", be, 0.01))
    bld.connect(s.y, out.valve)
    bld.connect(st.y, out.do0)
    d = bld.build()
    assert inp.Dev1_ai0.unit_text == "V" and inp.di0.unit_text == "1"
    res = run(d, 0.5, ["s.y", "inp.Dev1_ai0", "inp.di0", "inp.ok"])
    lsb = 20 / 4095
    err = res["inp.Dev1_ai0"][1:] - res["s.y"][:-1]
    assert np.max(np.abs(err)) <= lsb / 2 + 1e-12  # 12-bit quantization, one period late
    t = res.time
    assert np.all(res["inp.di0"][t > 0.215] == 1.0) and np.all(res["inp.di0"][t < 0.2] == 0.0)
    with pytest.raises(ParameterError, match="channel 'Dev1/ao0' is ao, not one of"):
        DaqInput("bad", be, 0.01, channels=["Dev1/ao0"])
    be.close()


def test_read_available_returns_what_arrived_counts_and_taps(pair):
    a, b = pair
    seen = []
    b.add_tap(rx=seen.append)
    assert b.read_available() == []
    for i in range(5):
        a.write(can.Message(arbitration_id=0x10 + i, data=b""))
    got = b.read_available(limit=3)
    assert [m.arbitration_id for m in got] == [0x10, 0x11, 0x12]
    assert [m.arbitration_id for m in b.read_available()] == [0x13, 0x14]
    assert b.counters.frames_in == 5 and len(seen) == 5
