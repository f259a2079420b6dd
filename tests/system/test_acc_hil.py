"""The ACC controller in the loop (examples/acc_hil.py): the ECU is a separate process that
speaks only CAN, the car runs in the real-time runner; then the same with faults.

Each run takes its simulated time in wall time (30 s for the cut-in, 16 s for the fault
cases): these are the slow tests of the suite, on purpose (a real-time loop)."""

import json
import math

import numpy as np
import pytest

pytest.importorskip("can")
pytest.importorskip("cantools")

from cosim.writers import read_csv  # noqa: E402
from examples.acc_hil import (  # noqa: E402
    CMD_STALE_S,
    PLANT_PERIOD,
    acceptance,
    offline,
    run_hil,
    safe_brake_nm,
    summary,
)
from hil.can import read_log  # noqa: E402

pytestmark = pytest.mark.slow


def _multicast_ok():
    import can
    try:
        b = can.Bus(interface="udp_multicast", channel="239.7.7.7", hop_limit=0)
    except Exception:  # noqa: BLE001
        return False
    b.shutdown()
    return True


needs_multicast = pytest.mark.skipif(not _multicast_ok(),
                                     reason="no IPv4 multicast route on this host")


@pytest.fixture(scope="module")
def reference():
    res = offline()
    return summary(res, throttle="acc.throttle", brake="acc.brake_torque")


def _check_files(out, r, t_end):
    res = read_csv(out / "results.csv")
    n = round(t_end / (5 * PLANT_PERIOD)) + 1
    assert len(res.time) == n and res.time[-1] == pytest.approx(t_end)
    s = json.loads((out / "summary.json").read_text())
    assert s["fault"] == r["fault"] and s["telemetry"]["frames"] >= 0.9 * t_end / PLANT_PERIOD
    frames = [m for _, m in read_log(out / "bus.asc")]
    assert len(frames) == r["bus_log_frames"] > 0
    assert (out / "telemetry.csv").stat().st_size > 0
    return res


def _cut_in_like_offline(r, ref):
    s = r["summary"]
    assert all(r["acceptance"].values()), r["acceptance"]
    # the bus adds 0-24 ms of delay and the DBC's quantization: the run stays close
    assert abs(s["recovery_2pct_s"] - ref["recovery_2pct_s"]) < 0.5
    assert abs(s["min_gap_m"] - ref["min_gap_m"]) < 0.5
    assert abs(s["min_speed_m_s"] - ref["min_speed_m_s"]) < 0.5
    assert r["command_stale_s"] is None  # no stale episode after the first command
    tel = r["telemetry"]
    assert tel["overruns"] <= 0.01 * tel["frames"]


@needs_multicast
def test_cut_in_over_udp_multicast_meets_the_offline_acceptance(tmp_path, reference):
    assert all(acceptance(reference).values())
    r = run_hil(tmp_path, interface="udp_multicast", plot=False)
    _cut_in_like_offline(r, reference)
    _check_files(tmp_path, r, r["t_end"])
    assert r["ecu_exit"] == 0  # SIGTERM: the ECU's runner stops cleanly
    ecu = json.loads((tmp_path / "ecu_summary.json").read_text())
    assert ecu["tx"]["sent"] >= 0.9 * r["t_end"] / 0.016


def test_cut_in_over_slcan_ptys_meets_the_offline_acceptance(tmp_path, reference):
    pytest.importorskip("serial")
    r = run_hil(tmp_path, interface="slcan", plot=False)
    _cut_in_like_offline(r, reference)
    _check_files(tmp_path, r, r["t_end"])


@needs_multicast
@pytest.mark.parametrize("fault", ["drop", "delay"])
def test_a_degraded_bus_keeps_the_acceptance(tmp_path, reference, fault):
    """20 % of the commands lost, or all delayed 40 ms, for 4 s after the cut-in."""
    r = run_hil(tmp_path, fault=fault, plot=False)
    key = f"{fault}_rx"
    assert r["injected"].get(key, 0) > 0
    assert all(r["acceptance"].values()), r["acceptance"]
    assert abs(r["summary"]["recovery_2pct_s"] - reference["recovery_2pct_s"]) < 1.0


def _safe_after(res, t0, t1=math.inf):
    t = res.time
    m = (t > t0) & (t <= t1)
    return (np.all(res["rx_cmd.ok"][m] == 0.0) and np.all(res["rx_cmd.throttle"][m] == 0.0)
            and np.all(res["rx_cmd.brake_torque"][m] == pytest.approx(safe_brake_nm())))


@needs_multicast
def test_bus_off_goes_safe_and_recovers(tmp_path):
    r = run_hil(tmp_path, fault="bus_off", t_end=16.0, plot=False)
    res = _check_files(tmp_path, r, 16.0)
    on, off = 12.0, 12.5
    assert r["injected"].get("bus_off_tx", 0) + r["injected"].get("bus_off_rx", 0) >= 1
    a, z = r["command_stale_s"]
    # stale within the limit (+ one frame, + the 40 ms recording grid) of the bus-off
    assert on < a <= on + CMD_STALE_S + PLANT_PERIOD + 0.04 + 1e-9
    assert _safe_after(res, a - 1e-9, off)
    # the plant recovers the bus, the ECU's inputs come back, commands are fresh again
    assert z < off + 0.5 and np.all(res["rx_cmd.ok"][res.time > off + 0.5] == 1.0)
    b = r["bridges"]
    # the three bridges share the backend: whichever comes first after the outage recovers it
    assert b["tx_ego"]["errors"] > 0 and sum(x["recoveries"] for x in b.values()) >= 1
    assert b["rx_cmd"]["stale_events"]["ACC_CMD"] == 1


@needs_multicast
def test_killed_ecu_leaves_the_plant_safe_and_the_run_complete(tmp_path):
    r = run_hil(tmp_path, fault="kill", t_end=12.0, kill_at=8.0, plot=False)
    res = _check_files(tmp_path, r, 12.0)
    assert r["ecu_exit"] == -9 and r["killed_at_s"] == pytest.approx(8.0, abs=0.01)
    a, z = r["command_stale_s"]
    assert 8.0 < a <= 8.0 + CMD_STALE_S + PLANT_PERIOD + 0.04 + 1e-9 and z == 12.0
    assert _safe_after(res, a - 1e-9)
    # the safe state decelerates the car at about 2 m/s^2 (brake lag 0.1 s, resistances)
    v = res["car.v"]
    t = res.time
    dv = (np.interp(a + 2.0, t, v) - np.interp(a + 1.0, t, v))
    assert -2.5 < dv < -1.9
    assert r["telemetry"]["frames"] >= 0.9 * 12.0 / PLANT_PERIOD
