"""HIL tests of the rig itself and of what comes later: the virtual rig against the
offline lock-step reference, the measurement file, the time gap calibrated over XCP and
the fault memory over UDS (skipped until the rig has them), and a deliberately wrong
expectation whose failure shows the signals at the failing instant."""

from __future__ import annotations

import numpy as np
import pytest

from hil.testing import CheckFailed, sig

pytestmark = pytest.mark.hil(rig="virtual")


def test_virtual_rig_equals_the_offline_lockstep_loop(rig):
    if rig.spec.mode != "virtual":
        pytest.skip("the virtual rig's reference (a real-time rig depends on timing)")
    from examples.acc_hil import offline_lockstep
    rig.run(12.0)
    ref = offline_lockstep(t_end=12.0)  # the same diagrams stepped in one loop
    tr = rig.trace()
    idx = np.searchsorted(tr.t, ref.time - 1e-9)
    assert np.max(np.abs(tr.t[idx] - ref.time)) < 1e-9
    for name, path in (("ego_speed", "car.v"), ("gap", "radar.range"),
                       ("throttle", "rx_cmd.throttle"), ("brake", "rx_cmd.brake_torque")):
        assert np.max(np.abs(tr[name][idx] - ref[path])) <= 1e-9, name


def test_the_run_as_a_measurement_file(rig, tmp_path):
    pytest.importorskip("asammdf")
    from hil.testing import read_mdf
    cap = rig.capture(["gap", "ego_speed"], start=1.0, post=0.5)
    rig.run(2.0)
    path = rig.write_mf4(tmp_path / "run.mf4")
    back = read_mdf(path)
    run = back.traces["run"]
    assert set(rig.names) <= set(run.names)
    assert run.unit("ego_speed") == "m/s" and run.unit("brake") == "N*m"
    assert np.array_equal(run["gap"], rig.trace()["gap"])
    assert {"can.ACC_CMD", "can.EGO", "can.RADAR"} <= set(back.traces)
    assert back.traces["can.ACC_CMD"].unit("brake_torque") == "N*m"
    assert len(back.frames) == len(rig.frames()) > 300
    assert np.array_equal(back.traces["capture0"]["gap"], cap.trace()["gap"])


def test_time_gap_calibrated_over_xcp_changes_the_steady_gap(rig):
    if not rig.has("xcp"):
        pytest.skip("the rig has no XCP ([xcp] in the rig file): calibration over XCP "
                    "comes with examples/acc_ecu.py's XCP slave")
    rig.run(5.0)
    gap0 = rig.read("gap")
    rig.xcp.write("acc.time_gap_s", 2.0)  # 1.5 s -> 2.0 s
    rig.run(20.0)
    assert rig.read("gap") - gap0 == pytest.approx(0.5 * 25.0, abs=0.5)


def test_stale_radar_stores_a_dtc_read_over_uds(rig):
    if not rig.has("uds"):
        pytest.skip("the rig has no UDS diagnostics ([uds] in the rig file): the fault "
                    "memory comes with examples/acc_ecu.py's UDS server")
    rig.run(2.0)
    with rig.fault("stale", messages=["RADAR"]):
        rig.run(0.5)
    assert rig.uds.read_dtcs()


@pytest.mark.xfail(strict=True, raises=CheckFailed,
                   reason="deliberately wrong expectation: the gap does fall below 30 m at "
                          "the cut-in; the failure shows the signals at that instant")
def test_deliberately_wrong_expectation_fails_with_the_signals(rig):
    rig.run(12.0)
    rig.always(sig("gap") >= 30.0)  # wrong: the car cuts in 25 m ahead at 10 s
