"""ACC cut-in (seed section 11, Fig. 8): a car cuts in at 50 s, 25 m ahead.

The ego follows a lead car at 25 m/s with the time gap 1.5 s and the standstill gap 5 m
(42.5 m).  At t = 50 s a car at the same speed enters the lane 25 m ahead: the radar target
switches, the range drops by 17.5 m, the ACC slows "a little" and the gap returns to its
original value (the seed: within 10 s), with the acceleration within [-2.5, 1] m/s^2 and
the ISO 15622 deceleration and jerk limits.

The car is the simple plant of :mod:`acc_plant` (AB3 at 8 ms), the controller
:class:`blocks.controllers.ACCController` is sampled every 16 ms, the recorder keeps every
40 ms.  Run ``python examples/acc_cut_in.py``.
"""

from __future__ import annotations

import numpy as np

from blocks.controllers import ACCSettings, check_iso15622
from blocks.vehicle.scenarios import cut_in_scenario

try:  # imported as examples.acc_cut_in (tests)
    from examples.acc_plant import build_loop, pedal_figures, run, simulation
except ModuleNotFoundError:  # run as a script, or by ``cosim run``
    from acc_plant import build_loop, pedal_figures, run, simulation

SPEED = 25.0
CUT_IN_S = 50.0
CUT_IN_GAP = 25.0
T_END = 80.0
SETTINGS = ACCSettings()
SIMULATION = simulation(T_END)


def scenario(settings: ACCSettings = SETTINGS):
    gap = settings.standstill_gap_m + settings.time_gap_s * SPEED
    return cut_in_scenario(gap, speed_m_s=SPEED, cut_in_s=CUT_IN_S, cut_in_gap_m=CUT_IN_GAP,
                           t_end_s=T_END)


def build(settings: ACCSettings = SETTINGS):
    """The closed loop: car, controller, lead car, cutting-in car, radar."""
    return build_loop(scenario(settings), settings)


def recovery_time(t, gap, target, t0: float, band: float) -> float:
    """Time after ``t0`` from which ``|gap - target| <= band`` holds to the end (inf if
    never)."""
    bad = np.flatnonzero((t >= t0) & (np.abs(gap - target) > band))
    if bad.size == 0:
        return 0.0
    if bad[-1] == t.size - 1:
        return np.inf
    return float(t[bad[-1] + 1] - t0)


def summary(res, settings: ACCSettings = SETTINGS) -> dict:
    t, r, v = res.time, res["radar.range"], res["car.v"]
    a, ar = res["car.a"], res["acc.accel_request"]
    pre = (t > CUT_IN_S - 10.0) & (t < CUT_IN_S)
    after = t >= CUT_IN_S
    gap0 = float(np.mean(r[pre]))
    d_des = settings.standstill_gap_m + settings.time_gap_s * v
    return {
        "gap_before_m": gap0,
        "gap_after_cut_in_m": float(r[np.argmax(after)]),
        "min_gap_m": float(r[after].min()),
        "min_speed_m_s": float(v[after].min()),
        # the gap back within 2 % of its value before the cut-in, and staying there
        "recovery_2pct_s": recovery_time(t, r, gap0, CUT_IN_S, 0.02 * gap0),
        "gap_at_10s_m": float(np.interp(CUT_IN_S + 10.0, t, r)),
        "policy_error_at_10s_m": float(np.interp(CUT_IN_S + 10.0, t, r - d_des)),
        "accel_request_range": (float(ar.min()), float(ar.max())),
        "accel_range": (float(a.min()), float(a.max())),
        "iso": check_iso15622(t, a, v),
        **pedal_figures(res),
    }


def main() -> dict:
    res, wall = run(build(), T_END)
    s = summary(res)
    print(f"ACC cut-in at {CUT_IN_S:g} s, {SPEED:g} m/s, time gap {SETTINGS.time_gap_s:g} s "
          f"(AB3 8 ms, controller 16 ms, record 40 ms)")
    print(f"  gap {s['gap_before_m']:.2f} m -> {s['gap_after_cut_in_m']:.2f} m at the cut-in, "
          f"min {s['min_gap_m']:.2f} m; speed down to {s['min_speed_m_s']:.2f} m/s")
    print(f"  gap back within 2 % after {s['recovery_2pct_s']:.2f} s; at +10 s "
          f"{s['gap_at_10s_m']:.2f} m (policy error {s['policy_error_at_10s_m']:+.2f} m)")
    lo, hi = s["accel_request_range"]
    alo, ahi = s["accel_range"]
    print(f"  acceleration request [{lo:.2f}, {hi:.2f}] m/s^2, vehicle [{alo:.2f}, {ahi:.2f}]")
    iso = s["iso"]
    print(f"  ISO 15622: max 2-s decel {iso.max_avg_decel_2s_m_s2:.2f} m/s^2 "
          f"({iso.decel_ratio:.0%} of the limit), max 1-s jerk {iso.max_avg_jerk_1s_m_s3:.2f} "
          f"m/s^3 ({iso.jerk_ratio:.0%}), {'pass' if iso.ok else 'FAIL'}")
    print(f"  brake-mode switches {s['brake_mode_switches']}, throttle and brake together in "
          f"{s['overlap_samples']} samples")
    print(f"wall time {wall:.2f} s: {T_END / wall:.0f}x faster than real time")
    return s


if __name__ == "__main__":
    main()
