"""The ACC controller on the full conventional car (engine map, torque converter,
automatic gearbox, brakes): examples/acc_full_vehicle.py, the seed's cut-in and
stop-and-go with AB3 at 8 ms and the controller at 16 ms."""

import numpy as np
import pytest

from examples.acc_cut_in import recovery_time
from examples.acc_full_vehicle import simulate, summary


@pytest.fixture(scope="module")
def cut_in():
    return simulate("cut_in")[0]


@pytest.fixture(scope="module")
def stop_and_go():
    return simulate("stop_and_go")[0]


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
    # the car itself: the 3-4 upshift adds the engine's inertia torque the controller's
    # model does not know: 1.20 m/s^2 for 0.1 s (no torque intervention during shifts),
    # inside ISO 15622's 2 m/s^2 ACC maximum
    assert s["accel_range"][1] < 1.25 and s["iso"].ok, s["iso"]
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
    assert s["min_gap_m"] > 2.5  # measured 3.19 m: no contact, inside the 5 m standstill gap
    assert s["overlap_samples"] == 0 and s["brake_mode_switches"] == 2
    assert s["gears"] == [1, 2, 3, 4]
    # launch: the converter multiplies the torque (2.0 at stall), which the controller's
    # rigid-coupling model does not: 1.89 m/s^2 at drive-off, inside ISO's 2 m/s^2
    assert s["accel_request_range"][1] <= 1.0 + 1e-9
    assert s["accel_range"][1] < 2.0 and s["iso"].ok, s["iso"]
