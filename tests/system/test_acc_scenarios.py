"""The seed's three ACC scenarios (Kim et al., seed section 11) as acceptance tests.

The examples ``examples/acc_cut_in.py``, ``acc_stop_and_go.py`` and ``acc_cut_out.py`` run
the ACC controller (:mod:`blocks.controllers.acc`, sampled every 16 ms) on the simple car of
``examples/acc_plant.py`` integrated with AB3 at 8 ms, recorded every 40 ms (the seed's
display rate).  The seed reports these runs only qualitatively; the acceptance criteria
are its statements turned into numbers, plus the ISO 15622 limits.  Measured figures are
quoted next to each assertion.
"""

import dataclasses

import numpy as np
import pytest

import examples.acc_cut_in as ci
import examples.acc_cut_out as co
import examples.acc_plant as plant
import examples.acc_stop_and_go as sg
from cosim import Simulator

SEED_LAW = dataclasses.replace(ci.SETTINGS, jerk_limit=None)


@pytest.fixture(scope="module")
def cut_in():
    res, wall = plant.run(ci.build(), ci.T_END)
    return res, ci.summary(res), wall


@pytest.fixture(scope="module")
def stop_and_go():
    res, _ = plant.run(sg.build(), sg.T_END)
    return res, sg.summary(res)


@pytest.fixture(scope="module")
def cut_out():
    res, _ = plant.run(co.build(), co.T_END)
    return res, co.summary(res)


@pytest.fixture(scope="module")
def cut_out_far():
    res, _ = co.far_run()
    return res, co.summary(res)


# ------------------------------------------------------------------------ cut-in


def test_cut_in_gap_returns_within_10_s_without_collision(cut_in):
    _, s, _ = cut_in
    assert s["gap_before_m"] == pytest.approx(42.5, abs=1e-6)  # 5 m + 1.5 s x 25 m/s
    assert s["gap_after_cut_in_m"] == pytest.approx(25.0, abs=1e-6)
    # the seed: "the relative distance returns to the original value within 10 s";
    # measured 9.52 s to be back within 2 % (0.85 m) for good
    assert s["recovery_2pct_s"] < 10.0
    # and on the policy d0 + t_h v: measured -0.13 m at +10 s
    assert abs(s["policy_error_at_10s_m"]) < 0.5
    assert s["min_gap_m"] >= 25.0 - 1e-6  # never closer than the cut-in gap (measured 25.00)
    assert s["min_speed_m_s"] > 20.0  # "slows a little": to 22.10 m/s


def test_cut_in_accelerations_within_the_seed_limits_and_iso15622(cut_in):
    _, s, _ = cut_in
    lo, hi = s["accel_request_range"]
    assert -2.5 <= lo and hi <= 1.0  # measured [-1.72, 0.87] m/s^2
    alo, ahi = s["accel_range"]
    assert -2.5 <= alo and ahi <= 1.0  # the car: measured [-1.59, 0.85] m/s^2
    iso = s["iso"]
    assert iso.ok
    assert iso.decel_ratio < 0.35  # 1.07 m/s^2 over 2 s: 30 % of 3.5
    assert iso.jerk_ratio < 0.7  # 1.59 m/s^3 over 1 s: 64 % of 2.5
    assert s["overlap_samples"] == 0 and s["brake_mode_switches"] == 2


def test_cut_in_with_the_seeds_law_alone():
    """Without the jerk limit (the seed's law): the lags of engine and brake keep the cut-in
    within ISO 15622 (1.68 m/s^3, 67 %), the gap back within 2 % after 9.16 s."""
    res, _ = plant.run(ci.build(SEED_LAW), ci.T_END)
    s = ci.summary(res, SEED_LAW)
    assert s["recovery_2pct_s"] < 10.0
    assert s["accel_request_range"][0] == pytest.approx(-2.0, abs=1e-9)  # -lambda / t_h
    assert s["iso"].ok and s["iso"].jerk_ratio < 0.7


def test_cut_in_with_a_model_mismatch():
    """The car 20 % heavier (1800 kg) with C_dA 0.8 m^2 and f_r 0.015 (the controller's
    model: 1500 kg, 0.66 m^2, 0.012): no integral action, so the steady gap is 0.18 m long
    (42.68 m); the cut-in still recovers within 2 % in 9.16 s."""
    pm = dataclasses.replace(plant.demo_model(), mass_kg=1800.0, drag_area_m2=0.8,
                             rolling_resistance=0.015)
    d = plant.build_loop(ci.scenario(), ci.SETTINGS, plant_model=pm,
                         controller_model=plant.demo_model())
    s = ci.summary(plant.run(d, ci.T_END)[0])
    assert 0.0 < s["gap_before_m"] - 42.5 < 0.3
    assert s["recovery_2pct_s"] < 10.0 and s["iso"].ok and s["overlap_samples"] == 0


def test_multi_rate_grid_and_real_time(cut_in):
    res, _, wall = cut_in
    # the recorder keeps every 5th 8-ms step: the seed's 40 ms display grid
    np.testing.assert_allclose(np.diff(res.time), 0.04, rtol=0, atol=1e-12)
    assert res.time[-1] == pytest.approx(80.0)
    # the seed: 120 s in 5.23 s (22.9x real time); here 80 s in ~0.6 s (~130x)
    assert wall < ci.T_END / 10.0


def test_ab3_at_8_ms_against_rk4():
    """AB3 at 8 ms against RK4 at 4 ms (itself 2e-10 m from RK4 at 1 ms).

    The controller's outputs jump at its 16 ms hits and the multistep history is not
    restarted there, so AB3 converges only at first order here (measured errors 10.4, 5.6,
    2.8 mm at 16, 8, 4 ms; RK4: 5e-8, 3e-9, 2e-10 m): small against the 40 m gaps.
    """
    rec = dict(record=["radar.range"], record_every=10)
    ref = Simulator(ci.build(), solver="rk4", dt=0.004, **rec).run(ci.T_END)
    ab3 = Simulator(ci.build(), solver="ab3", dt=0.008, record=["radar.range"],
                    record_every=5).run(ci.T_END)
    np.testing.assert_array_equal(ref.time, ab3.time)
    err = np.max(np.abs(ab3["radar.range"] - ref["radar.range"]))
    assert err < 0.01  # measured 5.6 mm


# ------------------------------------------------------------------- stop-and-go


def test_stop_and_go_stops_behind_the_lead_and_restarts(stop_and_go):
    res, s = stop_and_go
    a, b = s["stopped_from_to_s"]
    assert b - a > 3.0  # at rest from 25.20 to 30.92 s
    assert 5.0 <= s["min_gap_m"] < 6.0  # 5.36 m: the standstill gap is 5 m
    assert s["min_speed_m_s"] >= 0.0  # never reverses
    assert s["restart_5ms_at_s"] < 40.0  # 5 m/s again at 38.44 s
    assert s["final_speed_m_s"] > 15.0  # following the IDM car at 17.9 m/s at the end
    t = res.time
    # the hold torque while at rest (released at 30.80 s; the engine lag keeps the car still
    # for another 0.12 s)
    at_rest = (t > a + 0.5) & (t < b - 0.2)
    assert np.all(res["acc.brake_torque"][at_rest] == sg.SETTINGS.standstill_brake_torque_nm)


def test_stop_and_go_pedals_switch_cleanly(stop_and_go):
    res, s = stop_and_go
    assert s["overlap_samples"] == 0  # never throttle and brake together
    # one switch to braking (11.68 s) and one back to the throttle on restart (30.80 s)
    assert s["brake_mode_switches"] == 2
    t, brk = res.time, res["acc.braking"]
    on = t[1:][np.diff(brk) > 0]
    off = t[1:][np.diff(brk) < 0]
    assert on[0] == pytest.approx(11.68, abs=0.05) and off[0] > s["stopped_from_to_s"][1] - 1
    alo, ahi = s["accel_range"]
    assert -2.5 <= alo and ahi <= 1.0  # measured [-1.53, 0.97] m/s^2
    assert s["iso"].ok  # decel 33 %, jerk 12 % of the limits


def test_hysteresis_prevents_chattering_with_radar_noise():
    """Radar noise 0.1 m and 0.1 m/s at 20.8 Hz: the band of 0.1 m/s^2 keeps the 2 switches
    of the clean run; without it the mode chatters as braking begins (8 switches)."""
    with_band = sg.summary(sg.run_noisy()[0])
    st = dataclasses.replace(sg.SETTINGS, hysteresis_m_s2=0.0)
    without = sg.summary(sg.run_noisy(st)[0], st)
    assert with_band["brake_mode_switches"] == 2
    assert without["brake_mode_switches"] >= 3 * with_band["brake_mode_switches"]
    assert with_band["overlap_samples"] == 0 and without["overlap_samples"] == 0
    assert with_band["min_gap_m"] > 4.5  # measured 5.00 m


# ---------------------------------------------------------------------- cut-out


def test_cut_out_holds_a_higher_speed_until_the_gap_is_recovered(cut_out):
    _, s = cut_out
    assert s["range_after_cut_out_m"] == pytest.approx(35.0 + 4.5 + 36.4434, abs=1e-3)
    # the seed: "holds a constant speed higher than V1's until the desired gap is
    # recovered": V1 + lambda = 23 m/s (measured 22.99 from 36.0 to 43.1 s)
    assert s["hold_speed_m_s"] == pytest.approx(s["v1_m_s"] + ci.SETTINGS.reaching_speed_m_s,
                                                abs=0.05)
    a, b = s["hold_s"]
    assert b - a > 5.0 and a < co.CUT_OUT_S + 8.0
    assert s["gap_recovered_at_s"] < 50.0  # within 0.5 m of the policy from 45.7 s
    assert s["final_gap_m"] == pytest.approx(35.0, abs=0.01)
    assert s["final_speed_m_s"] == pytest.approx(20.0, abs=0.01)
    alo, ahi = s["accel_range"]
    assert -2.5 <= alo and ahi <= 1.0  # measured [-0.85, 1.00]
    assert s["iso"].ok and s["overlap_samples"] == 0


def test_cut_out_far_target_cruises_toward_the_set_speed(cut_out_far):
    _, s = cut_out_far
    # V1 beyond the 150 m radar range: no target for 11.52 s, cruise toward 30 m/s
    assert s["no_target_s"] > 10.0 and s["cruise_mode_s"] >= s["no_target_s"]
    assert s["max_speed_m_s"] > 29.0  # measured 29.51 m/s
    # then V1 in range: braked to V1 + lambda and held (23.00 m/s from 48.7 to 72.0 s)
    assert s["hold_speed_m_s"] == pytest.approx(23.0, abs=0.05)
    assert s["final_gap_m"] == pytest.approx(35.0, abs=0.01)
    assert s["accel_range"][0] >= -2.5 - 1e-3  # -2.497: the deceleration limit is reached
    assert s["iso"].ok  # jerk 99 % of the limit: the ISO jerk limiter is what keeps it


def test_the_seeds_law_exceeds_the_iso_jerk_limit_on_a_far_target():
    """Honest limitation: without the jerk limit the seed's law brakes for a target
    appearing 150 m ahead (closing at 9.4 m/s) at 2.73 m/s^3 over 1 s, 109 % of ISO 15622's
    2.5 m/s^3."""
    res, _ = co.far_run(SEED_LAW)
    s = co.summary(res, SEED_LAW)
    assert s["iso"].jerk_ratio > 1.0 and not s["iso"].ok
    assert s["iso"].decel_ratio < 1.0  # the deceleration limit itself holds (63 %)
