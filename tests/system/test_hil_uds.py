"""Diagnostics of the ACC ECU over UDS on ISO-TP, read with udsoncan (hil.diag, issue 36).

The ECU's diagram (examples/acc_ecu.py, with its monitors) runs in this process on a
python-can ``virtual`` bus, stepped period by period on the simulated clock; the test is
the plant (it sends RADAR and EGO, or stops sending them) and the tester: udsoncan's
``Client`` on can-isotp over its own ``virtual`` bus talks to the ECU's UDS server (a
thread).  The simulation does not advance while a request is answered, so what the memory
holds at each request is fixed by the frames sent: no wall clock in the verdicts.

The last test runs the ECU as its own process (examples/acc_ecu.py) on ``udp_multicast``.
"""

import itertools
import json
import math
import os

import pytest

pytest.importorskip("can")
pytest.importorskip("cantools")
pytest.importorskip("isotp")
udsoncan = pytest.importorskip("udsoncan")

from cosim import Simulator  # noqa: E402
from examples.acc_ecu import CONTROL_PERIOD, ecu_diagram  # noqa: E402
from hil.can import ACC_DBC, CanBackend, CanDatabase  # noqa: E402
from hil.diag import Status  # noqa: E402
from hil.diag.acc import (  # noqa: E402
    BUS_OFF,
    DTCS,
    EGO_MISSING,
    RADAR_INVALID,
    RADAR_MISSING,
    SET_SPEED_INVALID,
    SOFTWARE_VERSION,
    client_config,
    serve,
)
from hil.diag.client import open_client  # noqa: E402
from hil.faults import Fault, FaultyBackend  # noqa: E402
from tests.can_env import multicast_ok  # noqa: E402

NegativeResponse = udsoncan.exceptions.NegativeResponseException
_names = itertools.count()

#: what a stored, still failing DTC shows (confirmed at the first failure)
FAILING = Status.TF | Status.TFTOC | Status.PDTC | Status.CDTC | Status.TFSLC
#: the same DTC once its monitor passes again
HEALED = FAILING & ~Status.TF


class Rig:
    """The ECU's diagram on a virtual bus, this test as the plant (module docstring)."""

    def __init__(self, faults=()):
        self.channel = f"uds-{os.getpid()}-{next(_names)}"
        self.db = CanDatabase(ACC_DBC)
        self.plant = CanBackend("virtual", self.channel, timeout=0.0).open()
        self.t = 0.0
        inner = CanBackend("virtual", self.channel, timeout=0.0)
        self.ecu_can = FaultyBackend(inner, faults, clock=lambda: self.t).open()
        self.diagram = ecu_diagram(self.ecu_can, self.db, diagnostics=True)
        self.monitor = self.diagram.blocks["diag"]
        self.sim = Simulator(self.diagram, solver="rk4", record=False)
        self.sim.initialize()
        self.k = 0
        self.server = serve(self.monitor, "virtual", self.channel)
        self.values = {"range": 40.0, "range_rate": 0.0, "target_valid": 1, "speed": 25.0,
                       "set_speed": 30.0, "gear_ratio": 3.0, "engine_speed": 300.0}

    def _send(self, message):
        import can
        msg = self.db.message(message)
        data = msg.encode({s.name: self.values[s.name] for s in msg.signals}, strict=False)
        self.plant.write(can.Message(arbitration_id=msg.frame_id, data=data,
                                     is_extended_id=False), timeout=0.0)

    def run(self, seconds, radar=True, ego=True, **values):
        """``seconds`` of ECU periods, the plant sending RADAR/EGO before each."""
        self.values.update(values)
        for _ in range(round(seconds / CONTROL_PERIOD)):
            self.k += 1
            self.t = self.k * CONTROL_PERIOD
            if radar:
                self._send("RADAR")
            if ego:
                self._send("EGO")
            self.sim.advance_to(self.t)
            while self.plant.read(0.0) is not None:  # the commands and UDS frames
                pass

    def close(self):
        self.server.close()
        self.ecu_can.close()
        self.plant.close()


@pytest.fixture
def rig():
    r = Rig()
    yield r
    r.close()


@pytest.fixture
def client(rig):  # udsoncan waits up to a minute for an answer: a guard against a hang
    with open_client("virtual", rig.channel, config=client_config(), timeout_s=60.0) as c:
        yield c


def dtcs(client, mask=None):
    """``{dtc: status}`` by udsoncan's ReadDTCInformation: 0x02 by status mask, or 0x0A
    (every supported DTC, whatever its status) without ``mask``."""
    r = client.get_supported_dtc() if mask is None else client.get_dtc_by_status_mask(mask)
    return {d.id: d.status.get_byte_as_int() for d in r.service_data.dtcs}


def stored(client):
    """The DTCs that failed since the last clear (testFailedSinceLastClear)."""
    return dtcs(client, Status.TFSLC)


def test_read_dids_sessions_and_no_dtcs_on_a_healthy_loop(rig, client):
    rig.run(0.5)
    v = client.read_data_by_identifier([0xF195, 0x0100, 0x0101, 0x0102, 0x0103, 0x0106,
                                        0xF186]).service_data.values
    assert v[0xF195].strip() == SOFTWARE_VERSION
    assert v[0x0100] == pytest.approx(30.0) and v[0x0102] == pytest.approx(25.0)
    assert v[0x0101] == pytest.approx(1.5)  # the controller's time gap parameter
    assert v[0x0103] == pytest.approx(40.0)
    assert v[0x0106] == (0b1111,)  # RADAR, EGO fresh, controller running, link up
    assert v[0xF186] == (1,)  # default session
    thr = client.read_data_by_identifier_first(0x0104)
    assert 0.0 <= thr <= 1.0 and thr == pytest.approx(rig.monitor.live["throttle"], abs=1e-3)
    r = client.change_session(3)
    assert r.service_data.session_echo == 3
    assert r.service_data.p2_server_max == 0.05
    assert client.read_data_by_identifier_first(0xF186) == (3,)
    client.tester_present()
    # none stored; every DTC supported, each ran at least once on the healthy loop
    assert stored(client) == {}
    supported = client.get_supported_dtc().service_data.dtcs
    assert {d.id for d in supported} == set(DTCS)
    assert client.get_number_of_dtc_by_status_mask(Status.CDTC).service_data.dtc_count == 0
    assert client.get_number_of_dtc_by_status_mask(Status.TNCSLC).service_data.dtc_count == 0
    client.change_session(1)
    assert client.read_data_by_identifier_first(0xF186) == (1,)


def test_stale_radar_is_stored_with_its_status_bits_and_cleared(rig, client):
    rig.run(0.3)
    last = rig.t  # the last RADAR frame was read at this hit
    rig.run(0.2, radar=False)  # the radar stops: stale after 3 periods
    got = stored(client)
    assert set(got) == {RADAR_MISSING}
    assert got[RADAR_MISSING] == FAILING
    with pytest.raises(NegativeResponse) as e:  # no range while RADAR is stale
        client.read_data_by_identifier([0x0103])
    assert e.value.response.code == 0x22
    assert client.read_data_by_identifier_first(0x0106) == (0b1010,)  # EGO, link
    snap = rig.monitor.memory.snapshot(RADAR_MISSING)
    assert snap["RADAR_ok"] == 0.0 and snap["speed"] == pytest.approx(25.0)
    # stored at the first hit where RADAR is older than 3 periods (48 ms): 4 periods on
    assert snap["time"] == pytest.approx(last + 4 * CONTROL_PERIOD)
    # the same snapshot over UDS (ReadDTCInformation 0x04, record 0x01)
    (dtc,) = client.get_dtc_snapshot_by_dtc_number(RADAR_MISSING).service_data.dtcs
    assert dtc.status.get_byte_as_int() == FAILING
    got = {(x.record_number, x.did): x.data for x in dtc.snapshots}
    assert got == {(1, 0x0100): pytest.approx(30.0), (1, 0x0102): pytest.approx(25.0),
                   (1, 0x0103): pytest.approx(40.0),
                   (1, 0x0104): pytest.approx(snap["throttle"], abs=1e-3),
                   (1, 0x0105): pytest.approx(snap["brake_torque"], abs=0.5)}
    rig.run(0.2)  # the radar is back: the test passes, the DTC stays confirmed
    assert stored(client) == {RADAR_MISSING: HEALED}
    # cleared only in the extended session
    with pytest.raises(NegativeResponse) as e:
        client.clear_dtc(0xFFFFFF)
    assert e.value.response.code == 0x7F
    assert stored(client) == {RADAR_MISSING: HEALED}
    client.change_session(3)
    client.clear_dtc(0xFFFFFF)
    assert stored(client) == {}
    assert dtcs(client)[RADAR_MISSING] == Status.INITIAL
    rig.run(0.1)
    assert dtcs(client)[RADAR_MISSING] == 0  # ran, passed: nothing pending
    assert rig.monitor.memory.snapshot(RADAR_MISSING) is None
    (dtc,) = client.get_dtc_snapshot_by_dtc_number(RADAR_MISSING).service_data.dtcs
    assert dtc.snapshots == []  # none stored since the clear


def test_out_of_range_inputs_are_stored_by_their_own_dtcs(rig, client):
    rig.run(0.2)
    rig.run(0.1, set_speed=60.0)  # above the ACC's 50 m/s
    assert stored(client) == {SET_SPEED_INVALID: FAILING}
    rig.run(0.1, set_speed=30.0, range=300.0)  # a range beyond the radar's 250 m
    assert stored(client) == {SET_SPEED_INVALID: HEALED, RADAR_INVALID: FAILING}
    rig.run(0.1, target_valid=0)  # no target: the range is not judged
    assert stored(client) == {SET_SPEED_INVALID: HEALED, RADAR_INVALID: HEALED}
    client.change_session(3)
    client.clear_dtc(SET_SPEED_INVALID)  # one DTC
    assert stored(client) == {RADAR_INVALID: HEALED}
    client.clear_dtc(0xC00000)  # the network (U) group
    assert stored(client) == {}


def test_bus_off_stores_the_link_dtc_only():
    r = Rig(faults=[Fault("bus_off", 0.3, 0.5)])
    try:
        with open_client("virtual", r.channel, config=client_config(),
                         timeout_s=60.0) as c:
            r.run(0.4)  # bus-off from 0.3 s
            assert r.monitor.live["link_up"] == 0.0
            assert stored(c) == {BUS_OFF: FAILING}
            assert c.read_data_by_identifier_first(0x0106) == (0,)
            r.run(0.6)  # recovered (the bridges retry every 0.1 s)
            assert r.monitor.live["link_up"] == 1.0
            # the missing-message monitors did not run while the bus was off
            assert stored(c) == {BUS_OFF: HEALED}
            assert dtcs(c)[RADAR_MISSING] == 0 and dtcs(c)[EGO_MISSING] == 0
    finally:
        r.close()


def test_negative_responses(rig, client):
    rig.run(0.1)
    cases = [
        (lambda: client.ecu_reset(1), 0x11),  # ECUReset: not supported
        (lambda: client.request_seed(1), 0x11),  # SecurityAccess: not supported
        (lambda: client.change_session(2), 0x12),  # programming session
        (lambda: client.read_data_by_identifier([0x1234]), 0x31),  # unknown DID
        (lambda: client.clear_dtc(0xFFFFFF), 0x7F),  # default session
    ]
    raw = udsoncan.Request(service=udsoncan.services.ReadDataByIdentifier, data=b"\x01")
    cases.append((lambda: client.send_request(raw), 0x13))  # half a DID
    raw19 = udsoncan.Request(service=udsoncan.services.ReadDTCInformation, subfunction=0x06,
                             data=b"\xc2\x35\x87\xff")
    cases.append((lambda: client.send_request(raw19), 0x12))  # extended data: not supported
    cases.append((lambda: client.get_dtc_snapshot_by_dtc_number(0x000001), 0x31))
    cases.append((lambda: client.get_dtc_snapshot_by_dtc_number(RADAR_MISSING, 2), 0x31))
    raw14 = udsoncan.Request(service=udsoncan.services.ClearDiagnosticInformation,
                             data=b"\xff\xff")
    cases.append((lambda: client.send_request(raw14), 0x13))  # a 2-byte group
    client.config["data_identifiers"][0x1234] = "H"
    for call, nrc in cases:
        with pytest.raises(NegativeResponse) as e:
            call()
        assert e.value.response.code == nrc, (call, nrc)
    client.change_session(3)
    with pytest.raises(NegativeResponse) as e:
        client.clear_dtc(0x123456)  # neither all, nor a DTC, nor a group
    assert e.value.response.code == 0x31
    rig.run(0.1, radar=False)
    with pytest.raises(NegativeResponse) as e:
        client.read_data_by_identifier([0x0100, 0x0103])  # RADAR stale
    assert e.value.response.code == 0x22
    s = rig.server.stats()
    assert s["errors"] == 0 and s["negative"]["0x11"] == 2


def test_monitor_cost_per_frame(rig, client):
    """What the monitors add to the controller's frame (the server has its own thread)."""
    rig.run(1.0)
    cost = rig.monitor.cost()
    assert cost["updates"] == round(1.0 / CONTROL_PERIOD) + 1  # the hit at 0, then each
    assert cost["mean_us"] > 0.0
    print(f"AccMonitor: {cost}")  # the measured cost is reported (docs), not asserted


needs_multicast = pytest.mark.skipif(not multicast_ok(),
                                     reason="no IPv4 multicast route on this host")


@needs_multicast
@pytest.mark.timing  # a real-time ECU process: its frames follow the wall clock
def test_ecu_process_over_udp_multicast_serves_its_fault_memory(tmp_path):
    """examples/acc_ecu.py as a peer process: one RADAR and one EGO frame with a set speed
    out of range; both then go stale.  What the memory then holds does not depend on when
    the ECU's frames ran: the set speed failed once, the missing messages fail ever after."""
    import can

    from examples.acc_hil import EcuProcess, random_group
    group = random_group()
    ecu = EcuProcess("udp_multicast", group, tmp_path / "ecu.json", priority=None)
    db = CanDatabase(ACC_DBC)
    try:
        ecu.wait_ready(60.0)
        with CanBackend("udp_multicast", group, timeout=0.0) as plant, \
                open_client("udp_multicast", group, config=client_config(),
                            timeout_s=60.0) as c:
            assert c.read_data_by_identifier_first(0xF195).strip() == SOFTWARE_VERSION
            assert stored(c) == {}
            vals = {"range": 40.0, "range_rate": 0.0, "target_valid": 1, "speed": 25.0,
                    "set_speed": 60.0, "gear_ratio": 3.0, "engine_speed": 300.0}
            for name in ("RADAR", "EGO"):
                m = db.message(name)
                data = m.encode({s.name: vals[s.name] for s in m.signals}, strict=False)
                plant.write(can.Message(arbitration_id=m.frame_id, data=data,
                                        is_extended_id=False))
            want = {SET_SPEED_INVALID, RADAR_MISSING, EGO_MISSING}
            for _ in range(2000):  # polled: each request is answered at once
                got = stored(c)
                if set(got) == want:
                    break
            assert set(got) == want
            assert got[SET_SPEED_INVALID] == FAILING  # failed while EGO was fresh, then
            # did not run again (EGO stale): the last result stays a failure
            c.change_session(3)
            c.clear_dtc(0xFFFFFF)
            after = dtcs(c)
            assert after[SET_SPEED_INVALID] == Status.INITIAL  # EGO stale: not run again
        code = ecu.stop()
    finally:
        ecu.kill()
    assert code is not None and ecu.proc.poll() is not None  # no orphan
    summary = json.loads((tmp_path / "ecu.json").read_text())
    mem = summary["diag"]["memory"]["dtcs"]
    assert mem[f"0x{SET_SPEED_INVALID:06X}"]["status"] == "0x50"
    assert summary["diag"]["memory"]["clears"] == 1
    assert summary["diag"]["uds"]["negative"] == {}
    assert not math.isnan(summary["diag"]["cost"]["mean_us"])
