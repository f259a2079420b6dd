"""The ACC controller on the full conventional car (engine map, torque converter,
automatic gearbox, brakes): examples/acc_full_vehicle.py, the seed's cut-in and
stop-and-go with AB3 at 8 ms and the controller at 16 ms, with the inner acceleration
loop; the same runs without it show the overshoot the loop removes."""

import numpy as np
import pytest

from examples.acc_cut_in import recovery_time
from examples.acc_full_vehicle import SHIFT_TRANSIENT_S, simulate, summary, tracking


@pytest.fixture(scope="module")
def cut_in():
    return simulate("cut_in")[0]


@pytest.fixture(scope="module")
def stop_and_go():
    return simulate("stop_and_go")[0]


@pytest.mark.parametrize("name, within", [("cut_in", 0.05), ("stop_and_go", 0.09)])
def test_the_car_follows_the_requested_acceleration_within_the_band(name, within,
                                                                     cut_in, stop_and_go):
    """The inner loop: |a - a_request| <= 0.1 m/s^2 while moving, except the documented
    shift transients (SHIFT_TRANSIENT_S = 0.3 s after a gear change); the open inversion
    (no inner loop, the controller before) leaves the band by far."""
    res = cut_in if name == "cut_in" else stop_and_go
    tr = tracking(res)
    print(f"\n{name}: max |a - a_req| {tr['max_error_m_s2']:.4f} m/s^2 at {tr['at_s']:.2f} s "
          f"outside the shifts, {tr['max_error_in_shifts_m_s2']:.3f} inside; checked "
          f"{tr['checked_fraction']:.1%} of the moving samples")
    assert tr["within_band"] and tr["max_error_m_s2"] < within  # measured 0.049, 0.088
    assert tr["checked_fraction"] > 0.95  # the exclusions are the shifts only
    assert SHIFT_TRANSIENT_S == 0.3
    # the car's peak acceleration is now the request's (1 m/s^2) within the band
    assert res["car.a"].max() < 1.0 + 0.1  # measured 0.996, 1.068
    open_loop = simulate(name, inner_loop=False)[0]
    old = tracking(open_loop)
    assert not old["within_band"] and old["max_error_m_s2"] > 0.2, old  # 0.24, 0.8
    # the peaks the inner loop removes: 1.20 at the 3-4 upshift, 1.89 at drive-off
    assert open_loop["car.a"].max() > (1.15 if name == "cut_in" else 1.8)


def test_cut_in_on_the_full_car(cut_in):
    res = cut_in
    s = summary(res)
    t, r = res.time, res["radar.range"]
    gap0 = float(np.mean(r[(t > 40.0) & (t < 50.0)]))
    assert gap0 == pytest.approx(5.0 + 1.5 * 25.0, abs=0.05)  # the policy before the cut-in
    rec = recovery_time(t, r, gap0, 50.0, 0.02 * gap0)
    assert rec < 10.0, rec  # measured 9.52 s
    assert s["min_gap_m"] >= 24.9  # never closer than where the car cut in (measured 25.00)
    lo, hi = s["accel_request_range"]
    assert lo >= -2.5 - 1e-9 and hi <= 1.0 + 1e-9
    # the car itself: with the inner loop 0.996 m/s^2 at most (1.20 without it, at the
    # 3-4 upshift), inside ISO 15622's 2 m/s^2 ACC maximum
    assert s["accel_range"][1] < 1.05 and s["iso"].ok, s["iso"]
    assert s["overlap_samples"] == 0 and s["brake_mode_switches"] <= 2
    assert s["gears"] == [3, 4]


def test_stop_and_go_on_the_full_car(stop_and_go):
    res = stop_and_go
    s = summary(res)
    t, v = res.time, res["car.v"]
    rest = t[v < 0.01]
    # stops (held against the converter's creep by the standstill brake ramp) and restarts
    assert rest.size and rest.max() - rest.min() > 4.0, (rest.min(), rest.max())  # 27.5-32.6
    assert v[t > rest.max()].max() > 15.0
    # measured 5.59 m (3.19 m without the inner loop): no contact, at the standstill gap
    assert s["min_gap_m"] > 5.0
    assert s["overlap_samples"] == 0 and s["brake_mode_switches"] == 4
    assert s["gears"] == [1, 2, 3, 4]
    # launch: the converter multiplies the torque (2.0 at stall); the controller's model
    # knows it now and the loop corrects the rest: 1.07 m/s^2 at most (1.89 without)
    assert s["accel_request_range"][1] <= 1.0 + 1e-9
    assert s["accel_range"][1] < 1.1 and s["iso"].ok, s["iso"]
