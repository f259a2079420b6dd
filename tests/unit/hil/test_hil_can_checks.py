"""Receive-side checks and safe buses (issue 22 items 5, 6, 8, 9, 10): DBC ranges, DLC,
end-to-end protection, message age, udp_multicast isolation, garbage datagrams, SLCAN
backlog; all on python-can's own interfaces."""

import os
import socket
import time

import pytest

pytest.importorskip("can")
pytest.importorskip("cantools")

import can  # noqa: E402

from blocks.sources import Constant  # noqa: E402
from cosim import DiagramBuilder, Simulator  # noqa: E402
from hil.bridges import CanReceive, CanTransmit  # noqa: E402
from hil.can import ACC_DBC, CanBackend, CanDatabase  # noqa: E402
from hil.can.e2e import E2EProfile, E2EState, bind, profile_from_dbc  # noqa: E402
from hil.errors import LayoutError  # noqa: E402
from tests.timing_plugin import GENEROUS_S, wait_for  # noqa: E402

DB = CanDatabase(ACC_DBC)
PROT_DBC = """VERSION "e2e test"

BS_:

BU_: A B

BO_ 768 PROT: 8 A
 SG_ value : 0|16@1+ (0.01,0) [0|100] "m" B
 SG_ PROT_Counter : 48|4@1+ (1,0) [0|15] "" B
 SG_ PROT_CRC : 56|8@1+ (1,0) [0|255] "" B
"""


def _chan(tag):
    return f"{tag}-{os.getpid()}-{time.monotonic_ns()}"  # not timing: a unique name


def _rx_sim(rx_backend, db, message, **kw):
    b = DiagramBuilder("rx")
    rx = b.add(CanReceive("rx", rx_backend, db, message, 0.01, **kw))
    return rx, Simulator(b.build(), solver="rk4", dt=0.01, record=False)


# ------------------------------------------------------------------ DBC range, DLC
def test_values_outside_the_dbc_range_are_counted_and_clamped_or_rejected():
    """A raw 0x3FF gives throttle 1.023 against the DBC's max of 1.0."""
    raw = can.Message(arbitration_id=0x200, data=bytes([0xFF, 0x03, 0x00, 0x00]),
                      is_extended_id=False)
    for policy, throttle, received in (("clamp", 1.0, 1), ("reject", None, 0),
                                       ("accept", 1.023, 1)):
        ch = _chan("range")
        with CanBackend("virtual", ch, timeout=0.0) as a, \
                CanBackend("virtual", ch, timeout=0.0) as b:
            rx, sim = _rx_sim(b, DB, "ACC_CMD", on_range=policy)
            sim.initialize()
            a.write(raw)
            sim.advance_to(0.01)
            st = rx.stats()
            assert st["out_of_range"] == {"throttle": 1} and st["received"]["ACC_CMD"] == received
            if throttle is not None:
                assert sim.ctx.output(rx.output("throttle")) == pytest.approx(throttle)
            assert rx.io_figures()["bad_frames"] == 1


def test_a_frame_with_a_wrong_length_is_counted_not_used():
    ch = _chan("dlc")
    with CanBackend("virtual", ch, timeout=0.0) as a, CanBackend("virtual", ch,
                                                                 timeout=0.0) as b:
        rx, sim = _rx_sim(b, DB, "ACC_CMD")
        sim.initialize()
        a.write(can.Message(arbitration_id=0x200, data=bytes(3), is_extended_id=False))
        a.write(DB.encode("ACC_CMD", {"throttle": 0.5, "brake_torque": 10.0}))
        sim.advance_to(0.01)
        assert rx.stats()["wrong_dlc"] == 1 and rx.stats()["received"]["ACC_CMD"] == 1
        assert sim.ctx.output(rx.output("throttle")) == pytest.approx(0.5)


@pytest.mark.timing
def test_too_old_frames_are_rejected_by_their_age():
    """A backlog (here 0.6 s in the socket) shows in the frame's age, not in silence.  The
    fresh frame's age is the few lines between its write and the read: 0.3 s of margin for
    a busy machine's preemptions (with 30 ms of margin it went stale under load)."""
    ch = _chan("age")
    with CanBackend("virtual", ch, timeout=0.0) as a, CanBackend("virtual", ch,
                                                                 timeout=0.0) as b:
        rx, sim = _rx_sim(b, DB, "ACC_CMD", max_age_s=0.3)
        sim.initialize()
        a.write(DB.encode("ACC_CMD", {"throttle": 0.5, "brake_torque": 10.0}))
        time.sleep(0.6)
        a.write(DB.encode("ACC_CMD", {"throttle": 0.25, "brake_torque": 10.0}))
        sim.advance_to(0.01)
        assert rx.stats()["too_old"] == 1 and rx.stats()["received"]["ACC_CMD"] == 1
        assert sim.ctx.output(rx.output("throttle")) == pytest.approx(0.25)


# ------------------------------------------------------------------ E2E
def test_e2e_profile_from_the_dbc_and_its_layout_checks():
    db = CanDatabase(PROT_DBC)
    p = profile_from_dbc(db.message("PROT"))
    assert (p.crc_signal, p.counter_signal, p.data_id, p.crc_byte) == \
        ("PROT_CRC", "PROT_Counter", 768, 7)
    assert profile_from_dbc(DB.message("ACC_CMD")) is None
    with pytest.raises(LayoutError, match="must be 8 bits starting on a byte boundary"):
        bind(E2EProfile("value", "PROT_Counter", 1), db.message("PROT"))


def test_e2e_sender_and_receiver_detect_corruption_repeats_and_losses():
    db = CanDatabase(PROT_DBC)
    ch = _chan("e2e")
    with CanBackend("virtual", ch, timeout=0.0) as a, CanBackend("virtual", ch,
                                                                 timeout=0.0) as b, \
            CanBackend("virtual", ch, timeout=0.0) as rogue:
        bld = DiagramBuilder("e2e")
        v = bld.add(Constant("v", 12.34, unit="m"))
        tx = bld.add(CanTransmit("tx", a, db, "PROT", 0.01))
        rx = bld.add(CanReceive("rx", b, db, "PROT", 0.01))
        bld.connect(v.y, tx.value)
        assert "PROT_CRC" not in tx.inputs and "PROT_Counter" not in tx.inputs
        sim = Simulator(bld.build(), solver="rk4", dt=0.01, record=False)
        sim.advance_to(0.05)
        st = rx.stats()["e2e"]["PROT"]
        assert st["ok"] == 5 and st["crc_errors"] == st["repeated"] == st["lost"] == 0
        sent = []
        b2 = CanBackend("virtual", ch, timeout=0.0).open()
        sim.advance_to(0.06)
        sent = b2.read_available()  # the frame sent at 0.05 (counter 5), as a tap sees it
        b2.close()
        good = sent[-1]
        bad = bytearray(good.data)
        bad[0] ^= 0x01  # one bit flipped on the wire
        rogue.write(can.Message(arbitration_id=768, data=bytes(bad), is_extended_id=False))
        rogue.write(can.Message(arbitration_id=768, data=bytes(good.data),
                                is_extended_id=False))  # a replay of counter 5
        tx._counter = (tx._counter + 2) & 0xF  # two frames lost on the way
        sim.advance_to(0.08)
        st = rx.stats()["e2e"]["PROT"]
        assert st["crc_errors"] == 1 and st["repeated"] == 1 and st["lost"] == 2
        fig = rx.io_figures()
        assert fig["frames_lost"] == 2 and fig["bad_frames"] == 2
        assert sim.ctx.output(rx.output("value")) == pytest.approx(12.34)


def test_e2e_counter_wraps_and_resyncs():
    p = E2EProfile("c", "n", 0x123, crc_byte=7)
    st = E2EState(p)
    for k in range(40):
        data = bytearray(8)
        data[0] = k & 0xF
        data[7] = p.crc(data)
        assert st.check(data, k & 0xF)
    data = bytearray(8)
    data[7] = p.crc(data)
    assert st.check(data, 10)  # 40 & 15 = 8 expected; a jump of 3 (2 lost)
    assert st.lost == 2
    assert st.check(data, 3)  # a jump of 9: resynchronised, not 8 "lost"
    assert st.resyncs == 1 and st.lost == 2


# ------------------------------------------------------------------ udp_multicast
def _group():
    return f"239.{os.getpid() % 200 + 20}.{time.monotonic_ns() % 250 + 1}.7"  # not timing


@pytest.mark.timing
def test_rigs_on_different_groups_do_not_hear_each_other_even_on_one_port():
    """Issue 22 item 5: a listener on group A received 100 of 100 frames sent to B."""
    ga, gb = _group(), _group() + "1"
    port = 20000 + os.getpid() % 5000
    a = CanBackend("udp_multicast", ga, port=port, timeout=0.0).open()
    b = CanBackend("udp_multicast", gb, port=port, timeout=0.0).open()
    other = can.Bus(interface="udp_multicast", channel=gb, port=port, hop_limit=0)
    try:
        for i in range(100):
            other.send(can.Message(arbitration_id=0x123, data=bytes([i]),
                                   is_extended_id=False))
        got_b = []

        def all_100():
            got_b.extend(b.read_available())
            return len(got_b) >= 100
        wait_for(all_100, f"100 frames on group B (got {len(got_b)})")
        assert len(got_b) == 100 and a.read_available() == []
    finally:
        other.shutdown()
        a.close()
        b.close()


def test_the_default_port_is_the_groups_own():
    from hil.can.backend import multicast_port
    a = CanBackend("udp_multicast", "239.1.2.3")
    assert a.bus_kwargs()["port"] == multicast_port("239.1.2.3") != multicast_port("239.1.2.4")
    assert a.bus_kwargs()["hop_limit"] == 0
    assert CanBackend("udp_multicast", "239.1.2.3", port=5000).bus_kwargs()["port"] == 5000


@pytest.mark.timing
def test_a_garbage_datagram_is_a_bad_frame_not_a_lost_bus():
    """Issue 22 item 10: one garbage datagram was 'the bus is off ... check the cable'."""
    g = _group()
    with CanBackend("udp_multicast", g, timeout=0.0) as bus:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 0)
        s.sendto(b"not a CAN frame", (g, bus.bus_kwargs()["port"]))
        s.close()
        deadline = time.monotonic() + GENEROUS_S
        while bus.bad_datagrams == 0 and time.monotonic() < deadline:
            assert bus.read(0.05) is None
        assert bus.bad_datagrams == 1 and bus.state.value == "open"
        assert bus.io_figures()["bad_frames"] == 1 and bus.counters.frame_errors == 1


# ------------------------------------------------------------------ SLCAN backlog
@pytest.mark.timing
def test_slcan_reads_past_ack_lines_to_every_waiting_frame():
    """Issue 22 item 6: reading stopped at the first ack line ('z'), one frame of lag per
    ack ever queued."""
    pytest.importorskip("serial")
    from hil.can.slcan_hub import SlcanHub
    with SlcanHub(2) as hub:
        kw = {"bitrate": 500000, "sleep_after_open": 0, "timeout": 0.0}
        a = CanBackend("slcan", hub.ports[0], **kw).open()
        b = CanBackend("slcan", hub.ports[1], **kw).open()
        try:
            assert hub.wait_open(0, GENEROUS_S) and hub.wait_open(1, GENEROUS_S)
            for i in range(5):  # a's own frames: five 'z' acks queue up on a's port
                a.write(can.Message(arbitration_id=0x100 + i, data=bytes([i]),
                                    is_extended_id=False))
            wait_for(lambda: hub.frames >= 5, "a's 5 frames on the hub's bus")
            assert hub.wait_idle(GENEROUS_S)
            for i in range(5):
                b.write(can.Message(arbitration_id=0x200 + i, data=bytes([i]),
                                    is_extended_id=False))
            wait_for(lambda: hub.frames >= 10, "b's 5 frames on the hub's bus")
            assert hub.wait_idle(GENEROUS_S)  # all of it written to a's pty: one read
            got = a.read_available()
            assert [m.arbitration_id for m in got] == [0x200 + i for i in range(5)]
            assert a.slcan_lines_skipped >= 5
        finally:
            a.close()
            b.close()


# ------------------------------------------------------------------ DBC check
@pytest.mark.timing
def test_nodes_with_different_databases_are_found_at_the_start():
    """Issue 22 item 8: a DBC mismatch between nodes (version, scaling) is detected."""
    import warnings

    from hil.can.handshake import DbcMismatch, check_peer, dbc_frame, parse_dbc_frame
    other = CanDatabase(ACC_DBC.read_text().replace("(0.001,0) [0|1]", "(0.002,0) [0|2]"))
    assert other.fingerprint != DB.fingerprint == CanDatabase(ACC_DBC).fingerprint
    ch = _chan("dbc")
    with CanBackend("virtual", ch, timeout=0.0) as a, CanBackend("virtual", ch,
                                                                 timeout=0.0) as b:
        rx, sim = _rx_sim(b, DB, "ACC_CMD")  # node B: answers requests from its receiver
        sim.initialize()
        a.write(dbc_frame(DB, request=True))
        sim.advance_to(0.01)
        answer = a.read(1.0)
        assert parse_dbc_frame(answer)[0] == DB.fingerprint and rx.dbc_checks == 1
        a.write(dbc_frame(other, request=True))  # a node with another DBC asks
        with pytest.raises(Exception, match="the peer's CAN database differs .* load the same "
                                            "DBC file on both nodes"):
            sim.advance_to(0.02)
        b.write(dbc_frame(other, request=False))
        with pytest.raises(DbcMismatch, match="fingerprint"):
            check_peer(a, DB, timeout=0.5)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert check_peer(a, DB, timeout=0.1) is False
        assert "no node answered the CAN database check" in str(w[-1].message)


# ------------------------------------------------------------------ bus monitor
def test_the_bus_monitor_reports_load_cycle_times_and_jitter():
    from hil.can.monitor import BusMonitor
    mon = BusMonitor(DB, cycle_s={"ACC_CMD": 0.016}, bitrate=500_000)
    t0 = 1000.0
    for k in range(101):  # one frame 2 ms late, one 10 ms late
        late = {50: 0.002, 80: 0.010}.get(k, 0.0)
        mon(can.Message(timestamp=t0 + 0.016 * k + late, arbitration_id=0x200, data=bytes(4),
                        is_extended_id=False))
    r = mon.report()
    m = r["messages"]["ACC_CMD"]
    assert m["count"] == 101 and m["cycle_ms"] == 16.0
    assert m["jitter_ms"] == pytest.approx(10.0) and m["off_cycle"] == 2
    assert m["mean_ms"] == pytest.approx(16.0) and m["max_ms"] == pytest.approx(26.0)
    # a standard frame with 4 data bytes is 76-84 bits with stuffing, 3 of interframe
    bits_per_frame = mon.bits / 101
    assert 70 < bits_per_frame < 95
    assert r["bus_load"] == pytest.approx(mon.bits / (1.6 * 500_000))
    assert "ACC_CMD 16.00 ms (cycle 16, jitter 10.00 ms, 2 off-cycle)" in mon.summary()


@pytest.mark.timing
def test_the_fast_udp_path_filters_before_decoding_and_keeps_kernel_timestamps():
    """Under a flood of other ids, a receiver's backend drops them undecoded (counted)."""
    g = _group()
    with CanBackend("udp_multicast", g, timeout=0.0) as rx, \
            CanBackend("udp_multicast", g, timeout=0.0) as tx:
        t0 = time.time()
        for _ in range(50):
            tx.write(can.Message(arbitration_id=0x7E0, data=bytes(8), is_extended_id=False))
        tx.write(DB.encode("ACC_CMD", {"throttle": 0.5, "brake_torque": 10.0}))
        got, deadline = [], time.monotonic() + GENEROUS_S
        while not got and time.monotonic() < deadline:
            got = rx.read_available(accept={(0x200, False)})
        assert [m.arbitration_id for m in got] == [0x200] and rx.filtered == 50
        assert t0 - 1.0 < got[0].timestamp <= time.time()  # the kernel's receive time
        assert rx.counters.frames_in == 1
