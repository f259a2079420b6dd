"""HIL tests of the ACC controller under faults injected as test steps: stale radar,
an out-of-range command, bus-off, an unplugged bus, dropped and delayed frames.  The
faults act at the plant's side of the wire (hil.faults)."""

from __future__ import annotations

import pytest

from examples.acc_hil import safe_brake_nm
from hil.testing import sig

pytestmark = pytest.mark.hil(rig="virtual")

#: the plant's safe state on stale commands: closed throttle, the brake of 2 m/s^2
SAFE = (sig("throttle") <= 0.0) & (sig("brake") >= 0.99 * safe_brake_nm())


def test_stale_radar_brings_the_safe_state(rig):
    # (the DTC it stores: test_acc_hil_measure.py, with the rig's UDS diagnostics)
    rig.run(5.0)
    with rig.fault("stale", messages=["RADAR"]) as f:
        t0 = rig.time
        rig.run(1.0)
    # the ECU's inputs go stale (3 cycles), it stops commanding, the plant's command goes
    # stale (3 cycles + a frame) and the car brakes
    if "ecu_inputs_fresh" in rig.names:  # the controller's own flag: an in-process ECU
        rig.eventually(sig("ecu_inputs_fresh") < 0.5, within=0.06, start=t0)
    rig.eventually(sig("command_fresh") < 0.5, within=0.15, start=t0)
    rig.eventually(SAFE, within=0.15, start=t0)
    rig.always(SAFE, start=t0 + 0.15, during=0.8)
    assert f.injected.get("drop_tx", 0) > 0
    t1 = rig.time  # the radar back: the ECU commands again
    rig.run(1.0)
    rig.eventually(sig("command_fresh") >= 0.5, within=0.2, start=t1)


def test_out_of_range_command_is_rejected(rig):
    rig.run(3.0)
    rig.write("acc_throttle", 1.023)  # raw 0x3FF: above the DBC's maximum of 1.0
    t0 = rig.time
    rig.run(0.5)
    assert rig.read("acc_throttle") < 1.0  # the ECU's next command is on the bus again
    assert rig.stats("rx_cmd")["out_of_range"] == {"throttle": 1}
    rig.always(sig("throttle") < 0.5, start=t0)  # never reached the car
    rig.always(sig("command_fresh") >= 0.5, start=t0)


def test_bus_off_recovery(rig):
    rig.run(5.0)
    with rig.fault("bus_off", duration=0.5):
        rig.run(0.5)
    t_end = rig.time
    rig.run(3.0)
    rig.eventually(sig("command_fresh") < 0.5, within=0.5, start=5.0)  # it was felt
    t_back = rig.eventually(sig("command_fresh") >= 0.5, within=0.3, start=t_end).when
    rig.always(sig("command_fresh") >= 0.5, start=t_back)
    rig.settles("ego_speed", to=25.0, tol=0.5, within=2.5, start=t_end)


def test_unplugged_bus_safe_state_and_back(rig):
    rig.run(4.0)
    with rig.fault("unplug"):
        t0 = rig.time
        rig.run(1.0)
    t1 = rig.time
    rig.run(2.0)
    rig.eventually(SAFE, within=0.15, start=t0)
    rig.eventually(sig("command_fresh") >= 0.5, within=0.2, start=t1)


def test_dropped_commands_are_ridden_through(rig):
    rig.run(3.0)
    with rig.fault("drop", messages=["ACC_CMD"], direction="rx", probability=0.2) as f:
        t0 = rig.time
        rig.run(4.0)
    rig.always(abs(sig("ego_speed") - 25.0) <= 0.3, start=t0)
    n = f.injected["drop_rx"]
    assert n > 10
    rig.run(1.0)
    assert f.injected["drop_rx"] == n  # ended with the block


def test_delayed_commands_stay_fresh(rig):
    rig.run(3.0)
    with rig.fault("delay", messages=["ACC_CMD"], direction="rx", delay_s=0.02):
        t0 = rig.time
        rig.run(3.0)
    rig.always(sig("command_fresh") >= 0.5, start=t0)  # 20 ms < the 56 ms limit
