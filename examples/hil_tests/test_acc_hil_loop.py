"""HIL tests of the ACC controller in the closed loop: following, the cut-in, a set-speed
step, commands across the bus.  Run on any rig: ``pytest examples/hil_tests --rig virtual``
(the default of these tests) or ``--rig realtime``; the names are the rig file's
``[signals]``."""

from __future__ import annotations

import pytest

from hil.testing import Step, sig

pytestmark = pytest.mark.hil(rig="virtual")

#: the ACC's steady gap behind the lead at 25 m/s (standstill gap + time gap * speed) [m]
GAP0 = 42.5
CUT_IN_S = 10.0


def test_follows_the_lead_at_its_time_gap(rig):
    rig.run(9.0)
    rig.always(abs(sig("gap") - GAP0) <= 0.5, start=1.0)
    rig.always(abs(sig("ego_speed") - 25.0) <= 0.1, start=1.0)


def test_cut_in_gap_recovers_within_10_s(rig):
    rig.run(CUT_IN_S + 12.0)
    rig.eventually(sig("gap") < 30.0, within=0.5, start=CUT_IN_S)  # the car cut in
    rig.always(sig("gap") >= 24.0, start=CUT_IN_S)  # never closer than the cut-in gap - 1 m
    rig.settles("gap", to=GAP0, tol=0.02 * GAP0, within=10.0, start=CUT_IN_S)
    rig.always(sig("ego_speed") > 20.0, start=CUT_IN_S)  # slows a little


@pytest.mark.hil(plant={"cut_in_s": 1e9})
def test_set_speed_step_settles(rig):
    rig.run(2.0)
    rig.write("set_speed", 20.0)
    t0 = rig.time
    rig.run(20.0)
    rig.settles("ego_speed", to=20.0, tol=0.3, within=15.0, start=t0)
    rig.always((sig("ego_accel") >= -2.5) & (sig("ego_accel") <= 1.0), start=t0)


@pytest.mark.hil(plant={"cut_in_s": 1e9})
def test_a_set_speed_stimulus_moves_the_command_within_two_cycles(rig):
    rig.stimulus("set_speed", Step(20.0, initial=30.0, start=2.0))
    rig.run(4.0)
    r = rig.responds("set_speed", "throttle", latency=0.05, threshold=0.005)
    assert len(r.details["latencies"]) == 1


def test_no_throttle_and_brake_at_once(rig):
    rig.run(CUT_IN_S + 6.0)
    rig.always(~((sig("throttle") > 1e-9) & (sig("brake") > 1e-9)))


def test_the_bus_carries_the_plant_state(rig):
    rig.run(CUT_IN_S + 3.0)
    # EGO.speed on the bus (0.01 m/s resolution, sent every 16 ms) against the car's
    rig.always(abs(sig("bus_speed") - sig("ego_speed")) <= 0.05, start=0.1)
    rig.always(abs(sig("radar_range") - sig("gap")) <= 0.6, start=0.1)


def test_capture_around_the_cut_in(rig):
    cap = rig.capture(["gap", "ego_speed", "brake"], start=sig("gap") < 30.0, pre=1.0,
                      post=5.0)
    rig.run(CUT_IN_S + 6.0)
    tr = cap.trace()
    # (within a few frames: a real-time rig may skip one)
    assert tr.meta["trigger_time"] == pytest.approx(CUT_IN_S, abs=0.05)
    assert tr.t[0] == pytest.approx(tr.meta["trigger_time"] - 1.0, abs=0.05)
    assert tr.unit("gap") == "m" and tr.unit("brake") == "N*m"
    assert tr["brake"].max() > 0.0  # the ECU braked after the cut-in
