"""The rig API (hil.testing.rig) on the virtual ACC rig: names, reads and writes through
the map, runs, run_until, stimuli with triggers, captures, fault steps, determinism, and
clear errors; the corrupt fault of hil.faults."""

from __future__ import annotations

import copy
import pathlib

import numpy as np
import pytest

from hil.testing import CheckFailed, Ramp, Step, sig
from hil.testing.rig import Rig, RigError, RigNotConfigured, RigTimeout
from hil.testing.rigfile import load_rig

ROOT = pathlib.Path(__file__).resolve().parents[3]
SPEC = load_rig(ROOT / "examples" / "hil_tests" / "rigs" / "virtual.toml")


@pytest.fixture
def rig():
    with Rig(SPEC) as r:
        yield r


def test_reads_and_writes_go_through_the_map(rig):
    assert rig.time == 0.0 and len(rig.trace()) == 1
    assert rig.read("set_speed") == 30.0 and rig.read("ego_speed") == 25.0
    rig.run(0.1)
    assert rig.read("bus_speed") == pytest.approx(25.0, abs=0.01)  # EGO.speed, decoded
    assert rig.read("acc_throttle") == pytest.approx(rig.read("throttle"), abs=1e-3)
    assert rig.trace().unit("ego_speed") == "m/s" and rig.trace().unit("command_fresh") == ""
    rig.write("set_speed", 22.0)
    assert rig.read("set_speed") == 22.0
    assert [s for _, s in rig.steps][-1] == "write set_speed = 22 m/s"
    with pytest.raises(RigError, match=r"ego_speed \(plant:car.v\) is an output"):
        rig.write("ego_speed", 1.0)
    with pytest.raises(RigError, match=r"no signal 'ego_sped'.*did you mean 'ego_speed'"):
        rig.read("ego_sped")


def test_run_covers_the_time_asked_in_whole_frames(rig):
    rig.run(0.5)  # 62.5 frames of 8 ms: 63
    assert rig.time == pytest.approx(0.504)
    assert len(rig.trace()) == 64
    with pytest.raises(RigError, match=r"run: give a duration in seconds > 0"):
        rig.run(0.0)


def test_run_until_stops_at_the_frame_the_condition_holds(rig):
    t = rig.run_until(sig("gap") < 30.0, timeout=12.0)  # not timing: simulated seconds
    assert t == pytest.approx(10.0) and rig.time == t
    assert rig.trace()["gap"][-2] > 30.0 > rig.trace()["gap"][-1]
    with pytest.raises(RigTimeout, match=r"gap > 100 did not hold within 0.1 s \(from t = "
                                         r"10.000 s to 10.104 s\)"):
        rig.run_until(sig("gap") > 100.0, timeout=0.1)


def test_a_stimulus_started_by_a_trigger_drives_a_parameter(rig):
    rig.stimulus("set_speed", Ramp(-1.0, initial=30.0, limit=26.0, start=sig("ego_speed")
                                   > 24.0))
    rig.run(5.0)
    tr = rig.trace()
    # the trigger held at the first frame after the step (8 ms); a value written at a frame
    # is the parameter from the next frame on: the sample at 0.504 s is the ramp at 0.496 s
    assert tr.at(0.504, "set_speed") == pytest.approx(30.0 - (0.496 - 0.008), abs=1e-9)
    assert tr["set_speed"][-1] == 26.0
    with pytest.raises(RigError, match="is an output"):
        rig.stimulus("gap", Step(1.0))


def test_a_capture_triggers_on_test_names(rig):
    cap = rig.capture(["gap", "brake"], start=sig("gap") < 30.0, pre=0.1, post=0.2)
    rig.run(10.5)
    tr = cap.trace()
    assert tr.meta["trigger_time"] == pytest.approx(10.0)
    assert tr.t[0] == pytest.approx(9.904) and tr.t[-1] == pytest.approx(10.2)


def test_the_virtual_rig_is_deterministic():
    runs = []
    for _ in range(2):
        with Rig(SPEC) as r:
            r.run(11.0)
            with r.fault("drop", messages=["ACC_CMD"], direction="rx", probability=0.3):
                r.run(1.0)
            runs.append(r.trace())
    for n in runs[0].names:
        assert np.array_equal(runs[0][n], runs[1][n], equal_nan=True), n


def test_fault_steps_start_and_end_on_the_plant_clock(rig):
    rig.run(1.0)
    f = rig.fault("unplug")
    rig.run(0.2)
    f.stop()
    rig.run(0.5)
    tr = rig.trace()
    lost = tr.t[(tr["command_fresh"] < 0.5) & (tr.t > 0.5)]  # (not the start-up)
    assert lost[0] == pytest.approx(1.064) and lost[-1] < 1.3  # 3 cycles + a frame
    assert f.injected["drop_rx"] > 0 and f.injected["drop_tx"] > 0
    assert "fault unplug on can from t = 1.000 s" in [s for _, s in rig.steps][-4]
    with pytest.raises(RigError, match="fault stale: name the messages"):
        rig.fault("stale")
    with pytest.raises(RigError, match="kind must be one of drop, delay, corrupt"):
        rig.fault("melt")


def test_a_corrupted_command_is_rejected_by_the_range_check(rig):
    rig.run(1.0)
    # throttle raw bits 0-9 all flipped: 66 -> 957 (0.957, in range); brake 0 -> 0xFFFF *
    # 0.5 = 32767.5 N*m, above the DBC's 20000: the receiver rejects the frame
    with rig.fault("corrupt", messages=["ACC_CMD"], direction="rx",
                   mask=b"\xff\x03\xff\xff"):
        rig.run(0.1)
    assert rig.stats("rx_cmd")["out_of_range"]["brake_torque"] > 0
    rig.always(sig("throttle") < 0.5)


def test_checks_raise_with_the_window_and_are_kept(rig):
    rig.run(1.0)
    with pytest.raises(CheckFailed, match=r"(?s)always gap >= 50 m.*t \[s\]  gap \[m\]"):
        rig.always(sig("gap") >= 50.0)
    r = rig.eventually(sig("gap") >= 50.0, within=0.5, expect=False)
    assert not r.passed and len(rig.checks) == 2


def test_a_rig_without_uds_or_xcp_says_so():
    spec = copy.deepcopy(SPEC)
    spec.uds = spec.xcp = None
    with Rig(spec) as rig:
        assert not rig.has("uds") and not rig.has("xcp")
        with pytest.raises(RigNotConfigured, match="no XCP configured"):
            rig.xcp.connect()
        with pytest.raises(RigNotConfigured, match="no UDS diagnostics configured"):
            rig.uds.read_dtcs()


def test_the_virtual_rig_serves_uds_and_xcp_from_its_controller(rig):
    """The shipped clients on the virtual ACC rig: udsoncan reads the ECU's version, pyxcp
    the time gap by its A2L name; a write is applied at the controller's next frame;
    a measurement is refused as a write; an unknown name is named."""
    from hil.diag.acc import SOFTWARE_VERSION
    assert rig.has("uds") and rig.has("xcp")
    assert rig.uds.read_did(0xF195).strip() == SOFTWARE_VERSION
    assert rig.xcp.read("acc.time_gap_s") == 1.5
    assert rig.xcp.variable("acc.a_prev").unit == "m/s^2"
    rig.xcp.write("acc.time_gap_s", 1.75)
    h = rig._loop.esim.ctx.plan.find_parameter("acc.time_gap_s")
    assert rig._loop.esim.ctx.param(h) == 1.5  # not before the controller's next frame
    rig.run(0.016)
    assert rig._loop.esim.ctx.param(h) == 1.75 == rig.uds.read_did(0x0101)
    with pytest.raises(ValueError, match=r"acc.a_prev is a MEASUREMENT"):
        rig.xcp.write("acc.a_prev", 1.0)
    with pytest.raises(KeyError, match=r"no variable 'acc.time_gap'.*did you mean"):
        rig.xcp.read("acc.time_gap")
    assert [s for _, s in rig.steps if "client" in s] == [
        "uds client hil.testing.clients:uds_client connected",
        "xcp client hil.testing.clients:xcp_client connected"]


def test_bad_map_entries_are_named_when_the_rig_starts():
    spec = copy.deepcopy(SPEC)
    from hil.testing.rigfile import SignalRef
    spec.signals = {"x": SignalRef("x", "plant", "car", "speed")}
    with pytest.raises(RigError, match=r"x = 'plant:car.speed': block 'car' has no output or "
                                       r"parameter 'speed'; outputs: x, v"):
        Rig(spec).start()
    spec.signals = {"x": SignalRef("x", "can", "ACC_CMD", "gas")}
    with pytest.raises(RigError, match=r"no signal 'gas' in ACC_CMD \(throttle, brake_torque\)"):
        Rig(spec).start()
    spec.signals = {"x": SignalRef("x", "plant", "engine", "v")}
    with pytest.raises(RigError, match=r"no block 'engine' in the plant"):
        Rig(spec).start()


FAKE_XCP = '''
class Client:
    def __init__(self, rig, gain):
        self.rig, self.gain, self.closed = rig, gain, False

    def read(self, name):
        return self.gain * self.rig.read(name)

    def close(self):
        self.closed = True


def client(rig, gain=1.0):
    return Client(rig, gain)
'''


def test_an_xcp_client_plugs_in_through_the_rig_file(tmp_path, monkeypatch):
    (tmp_path / "fake_xcp_client.py").write_text(FAKE_XCP)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = copy.deepcopy(SPEC)
    spec.xcp = {"client": "fake_xcp_client:client", "args": {"gain": 2.0}}
    spec.uds = None
    with Rig(spec) as r:
        assert r.has("xcp") and not r.has("uds")
        c = r.xcp
        assert r.xcp is c and c.read("ego_speed") == 50.0
        assert "xcp client fake_xcp_client:client connected" in [s for _, s in r.steps]
    assert c.closed


def test_a_controller_that_does_not_fit_the_mode_is_refused():
    from hil.testing.rigfile import RigFileError
    spec = copy.deepcopy(SPEC)
    spec.controller = {"kind": "process", "command": ["ecu"]}
    with pytest.raises(RigFileError, match=r"a virtual rig steps its controller in lock-step"):
        Rig(spec).start()
    spec = copy.deepcopy(SPEC)
    spec.mode = "realtime"
    with pytest.raises(RigFileError, match=r"a real-time rig runs its controller as a "
                                           r"process or a device"):
        Rig(spec).start()


def test_a_real_time_rig_reaches_no_controller_variable_but_over_xcp():
    from hil.testing.rigfile import BusSpec, SignalRef
    spec = copy.deepcopy(SPEC)
    spec.mode = "realtime"
    spec.buses = {"can": BusSpec("can", "udp_multicast", "auto", "acc")}
    spec.controller = {"kind": "device", "dbc_check": False}  # nothing started, no run
    spec.signals = {"v": SignalRef("v", "plant", "car", "v"),
                    "a": SignalRef("a", "ecu", "acc", "accel_request")}
    with pytest.raises(RigError, match=r"a = 'ecu:acc.accel_request': the controller runs "
                                       r"in its own process.*over XCP"):
        Rig(spec).start()
