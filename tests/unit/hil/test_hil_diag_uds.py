"""The UDS services byte by byte (hil.diag.uds, no transport), and the ACC monitors'
rules and data identifiers (hil.diag.acc) without a bus."""

import math

import pytest

from hil.backend import BackendState
from hil.diag.acc import (
    BUS_OFF,
    COMMAND_INVALID,
    DTCS,
    EGO_INVALID,
    EGO_MISSING,
    RADAR_INVALID,
    RADAR_MISSING,
    SET_SPEED_INVALID,
    AccMonitor,
    acc_dids,
    evaluate,
)
from hil.diag.dtc import FaultMemory
from hil.diag.server import UdsServer
from hil.diag.uds import S3_SERVER_S, ConditionsNotCorrect, DataIdentifier, UdsHandler


class Clock:
    t = 0.0

    def __call__(self):
        return self.t


def handler(**kw):
    mem = FaultMemory({0xC23587: "u", 0x057929: "p"})
    clock = Clock()
    dids = [DataIdentifier(0x0100, 2, lambda: b"\x0b\xb8", "set speed"),
            DataIdentifier(0x0103, 2, _stale, "range"),
            DataIdentifier(0x0200, 2, lambda: b"\x01", "wrong size")]
    return UdsHandler(mem, dids, clock=clock, **kw), mem, clock


def _stale():
    raise ConditionsNotCorrect("RADAR is stale")


def h(hexstr):
    return bytes.fromhex(hexstr)


def test_session_control_and_tester_present():
    u, _, _ = handler()
    assert u.handle(h("1003")) == h("5003 0032 01f4")  # P2 50 ms, P2* 5000 ms / 10
    assert u.session == 3
    assert u.handle(h("22f186")) == h("62f186 03")
    assert u.handle(h("3e00")) == h("7e00")
    assert u.handle(h("3e80")) is None  # suppressPosRspMsgIndicationBit
    assert u.handle(h("1081")) is None and u.session == 1
    assert u.handle(h("1002")) == h("7f1012")  # programming: not supported
    assert u.handle(h("3e01")) == h("7f3e12")
    assert u.handle(h("100301")) == h("7f1013")
    assert u.handle(h("10")) == h("7f1013")
    assert u.handle(h("3e")) == h("7f3e13")


def test_a_non_default_session_ends_after_s3_without_requests():
    u, _, clock = handler()
    u.handle(h("1003"))
    clock.t = S3_SERVER_S - 0.1
    u.handle(h("3e00"))  # keeps it open
    clock.t = 2 * S3_SERVER_S - 0.2
    u.expire()
    assert u.session == 3
    clock.t = 2 * S3_SERVER_S
    u.expire()
    assert u.session == 1 and u.session_timeouts == 1
    assert u.handle(h("14ffffff")) == h("7f147f")  # clear: not in the default session


def test_read_dtc_information_and_clear():
    u, mem, _ = handler()
    mem.report(0xC23587, True)
    mem.report(0x057929, False)
    assert u.handle(h("190108")) == h("59017f 01 0001")  # one confirmed
    assert u.handle(h("190109")) == h("59017f 01 0001")
    assert u.handle(h("190208")) == h("59027f c23587 2f")
    assert u.handle(h("190200")) == h("59027f")  # an empty mask matches nothing
    assert u.handle(h("190a")) == h("590a7f 057929 00 c23587 2f")
    assert u.handle(h("1904")) == h("7f1912")  # snapshot records: not supported
    assert u.handle(h("1902")) == h("7f1913")
    assert u.handle(h("190a00")) == h("7f1913")
    assert u.handle(h("19")) == h("7f1913")
    u.handle(h("1003"))
    assert u.handle(h("14123456")) == h("7f1431")
    assert u.handle(h("14ffff")) == h("7f1413")
    assert u.handle(h("14c00000")) == h("54")  # the U group
    assert mem.status(0xC23587) == 0x50 and mem.status(0x057929) == 0x00
    assert u.handle(h("14ffffff")) == h("54")
    assert mem.status(0x057929) == 0x50


def test_snapshot_by_dtc_number():
    mem = FaultMemory([0xC23587, 0x057929])
    u = UdsHandler(mem, snapshot_dids=lambda snap: [(0x0100, int(snap["v"]).to_bytes(2, "big")),
                                                     (0x0102, b"\x00\x07")])
    assert u.handle(h("1904 c23587 01")) == h("5904 c23587 50")  # none stored
    mem.report(0xC23587, True, {"v": 3000})
    want = h("5904 c23587 2f 01 02 0100 0bb8 0102 0007")
    assert u.handle(h("1904 c23587 01")) == want
    assert u.handle(h("1904 c23587 ff")) == want  # all records: the one
    assert u.handle(h("1904 c23587 02")) == h("7f1931")
    assert u.handle(h("1904 123456 01")) == h("7f1931")
    assert u.handle(h("1904 c23587")) == h("7f1913")


def test_read_data_by_identifier():
    u, _, _ = handler()
    assert u.handle(h("220100")) == h("620100 0bb8")
    assert u.handle(h("220100 f186")) == h("620100 0bb8 f186 01")
    assert u.handle(h("220101")) == h("7f2231")  # unknown
    assert u.handle(h("220100 0101")) == h("7f2231")  # one unknown: all refused
    assert u.handle(h("220103")) == h("7f2222")  # stale
    assert u.handle(h("2201")) == h("7f2213")
    assert u.handle(h("22")) == h("7f2213")
    assert u.handle(h("22" + "0100" * 9)) == h("7f2213")  # more than 8
    with pytest.raises(RuntimeError, match="0x0200 .wrong size. read 1 bytes, declared 2"):
        u.handle(h("220200"))
    assert u.handle(h("2e0100 0000")) == h("7f2e11")  # WriteDataByIdentifier
    assert u.handle(b"") is None
    assert u.negative == {0x31: 2, 0x22: 1, 0x13: 3, 0x11: 1}


def test_handler_and_server_refuse_bad_arguments():
    mem = FaultMemory([0xC23587])
    with pytest.raises(TypeError, match="FaultMemory"):
        UdsHandler({})
    with pytest.raises(TypeError, match="DataIdentifier"):
        UdsHandler(mem, [0x0100])
    d = DataIdentifier(0x0100, 1, lambda: b"\x00")
    with pytest.raises(ValueError, match="0x0100 given twice"):
        UdsHandler(mem, [d, d])
    with pytest.raises(ValueError, match="0x0000..0xFFFF"):
        DataIdentifier(0x10000, 1, lambda: b"")
    u = UdsHandler(mem)
    with pytest.raises(ValueError, match="11-bit"):
        UdsServer(u, "virtual", "x", request_id=0x800)
    with pytest.raises(ValueError, match="must differ"):
        UdsServer(u, "virtual", "x", request_id=0x7E0, response_id=0x7E0)
    with pytest.raises(TypeError, match="UdsHandler"):
        UdsServer(mem, "virtual", "x")


# ------------------------------------------------------------------ ACC monitors
GOOD = {"range": 40.0, "range_rate": -1.0, "target_valid": 1.0, "speed": 25.0,
        "set_speed": 30.0, "gear_ratio": 3.0, "RADAR_ok": 1.0, "EGO_ok": 1.0, "ok": 1.0,
        "throttle": 0.2, "brake_torque": 0.0}


def failing(v=None, link_up=True, seen=True, **kw):
    res = dict(evaluate({**GOOD, **(v or {}), **kw}, link_up, seen))
    assert set(res) == set(DTCS)
    return {d for d, r in res.items() if r}, {d for d, r in res.items() if r is None}


def test_acc_monitor_rules():
    assert failing() == (set(), set())
    assert failing(seen=False) == (set(), {EGO_MISSING, RADAR_MISSING})
    assert failing(RADAR_ok=0.0, ok=0.0) == (
        {RADAR_MISSING}, {RADAR_INVALID, COMMAND_INVALID})
    # bus-off: the missing-message monitors do not run
    assert failing(link_up=False, RADAR_ok=0.0, EGO_ok=0.0, ok=0.0)[0] == {BUS_OFF}
    assert failing(range=250.5)[0] == {RADAR_INVALID}
    assert failing(range=250.5, target_valid=0.0)[0] == set()  # no target, no range
    assert failing(range=math.nan)[0] == {RADAR_INVALID}
    assert failing(range_rate=-100.5)[0] == {RADAR_INVALID}
    assert failing(speed=70.5)[0] == {EGO_INVALID}
    assert failing(gear_ratio=math.inf)[0] == {EGO_INVALID}
    assert failing(gear_ratio=-0.1)[0] == {EGO_INVALID}
    assert failing(set_speed=50.01)[0] == {SET_SPEED_INVALID}
    assert failing(set_speed=math.nan)[0] == {SET_SPEED_INVALID}
    assert failing(set_speed=60.0, EGO_ok=0.0, ok=0.0)[0] == {EGO_MISSING}  # not judged
    assert failing(throttle=1.001)[0] == {COMMAND_INVALID}
    assert failing(brake_torque=math.nan)[0] == {COMMAND_INVALID}
    assert failing(brake_torque=-1.0, ok=0.0)[0] == set()  # not running: not judged


class FakeLink:
    state = BackendState.OPEN


def test_acc_monitor_block_reports_and_its_dids():
    from cosim.testing import BlockHarness
    link = FakeLink()
    mon = AccMonitor("diag", 0.016, link=link)
    harness = BlockHarness(mon).set_inputs(**GOOD).set_time(0.032)
    harness.update()
    mem = mon.memory
    assert mem.count(0x7F & ~0x50) == 0 and mon.seen
    link.state = BackendState.FAULTED
    harness.set_inputs(set_speed=55.0).set_time(0.048).update()
    assert mem.status(BUS_OFF) == 0x2F and mem.status(SET_SPEED_INVALID) == 0x2F
    assert mem.snapshot(BUS_OFF)["time"] == 0.048
    assert mem.snapshot(SET_SPEED_INVALID)["set_speed"] == 55.0
    dids = {d.number: d for d in acc_dids(mon)}
    assert dids[0x0100].read() == (5500).to_bytes(2, "big")
    assert dids[0x0104].read() == (200).to_bytes(2, "big")
    assert dids[0x0101].read() == b"\xff\xff"  # no time-gap parameter: not a number
    assert dids[0x0106].read() == bytes([0b0111])  # link down
    assert dids[0xF195].read() == b"COSIM-ACC 1.0.0 "
    harness.set_inputs(RADAR_ok=0.0).update()
    with pytest.raises(ConditionsNotCorrect):
        dids[0x0103].read()
    assert mon.cost()["updates"] == 3 and mon.cost()["max_us"] > 0
    with pytest.raises(TypeError, match="FaultMemory"):
        AccMonitor("bad", 0.016, memory={})


def test_a_missing_client_or_transport_names_the_pip_install(monkeypatch):
    import sys

    from hil.diag.client import import_udsoncan
    from hil.diag.server import import_isotp
    from hil.errors import DriverMissing
    monkeypatch.setitem(sys.modules, "udsoncan", None)
    monkeypatch.setitem(sys.modules, "isotp", None)
    with pytest.raises(DriverMissing, match="pip install udsoncan"):
        import_udsoncan()
    with pytest.raises(DriverMissing, match="pip install can-isotp"):
        import_isotp()
    with pytest.raises(DriverMissing, match="can-isotp"):
        UdsServer(UdsHandler(FaultMemory([0xC23587])), "virtual", "x").start()
