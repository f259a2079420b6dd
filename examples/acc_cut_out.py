"""ACC cut-out (seed section 11, Fig. 7): the car ahead leaves the lane.

Two cars ahead at 20 m/s: V1 (``far``) and V2 (``near``, an IDM agent following V1 at its
equilibrium gap, 36.4 m).  The ego follows V2 at 35 m (time gap 1.5 s + 5 m) with the set
speed at 30 m/s.  At 30 s V2 changes lane: the radar target becomes V1, 76 m ahead.  As in
the seed the ego accelerates, then *holds a constant speed higher than V1's* - V1's speed
plus the reaching speed lambda = 3 m/s of the sliding law - until the desired gap is
recovered, and the gap settles at the headway distance.

``far_run()`` is the variant where V1 is beyond the radar's 150 m: the ego has no target
after the cut-out and accelerates toward the set speed (cruise mode) until V1 comes into
range.  Run ``python examples/acc_cut_out.py``.
"""

from __future__ import annotations

import numpy as np

from blocks.controllers import ACCSettings, check_iso15622
from blocks.vehicle.scenarios import cut_out_scenario

try:  # imported as examples.acc_cut_out (tests)
    from examples.acc_plant import build_loop, pedal_figures, run, simulation
except ModuleNotFoundError:  # run as a script, or by ``cosim run``
    from acc_plant import build_loop, pedal_figures, run, simulation

SPEED = 20.0
CUT_OUT_S = 30.0
T_END = 90.0
#: V1's gap ahead of V2 in the far variant (the range after the cut-out: 209.5 m).
FAR_GAP = 170.0
SETTINGS = ACCSettings()
SIMULATION = simulation(T_END)


def scenario(settings: ACCSettings = SETTINGS, far: bool = False):
    gap = settings.standstill_gap_m + settings.time_gap_s * SPEED
    if far:
        return cut_out_scenario(gap, speed_m_s=SPEED, cut_out_s=CUT_OUT_S, far_gap_m=FAR_GAP,
                                near_idm=False, t_end_s=T_END)
    return cut_out_scenario(gap, speed_m_s=SPEED, cut_out_s=CUT_OUT_S, t_end_s=T_END)


def build(settings: ACCSettings = SETTINGS, far: bool = False):
    """The closed loop: car, controller, the two cars ahead, radar."""
    return build_loop(scenario(settings, far), settings)


def far_run(settings: ACCSettings = SETTINGS):
    return run(build(settings, far=True), T_END)


def summary(res, settings: ACCSettings = SETTINGS) -> dict:
    t, r, v, a = res.time, res["radar.range"], res["car.v"], res["car.a"]
    after = t >= CUT_OUT_S
    v1 = float(res["far.v"][-1])
    d_des = settings.standstill_gap_m + settings.time_gap_s * v
    err = r - d_des
    # the hold: the longest stretch after the cut-out at constant speed (|a| < 0.05 m/s^2)
    # above V1's speed
    hold = np.flatnonzero(after & (np.abs(a) < 0.05) & (v > v1 + 0.5))
    runs = np.split(hold, np.flatnonzero(np.diff(hold) > 1) + 1) if hold.size else []
    longest = max(runs, key=len) if runs else np.zeros(0, dtype=int)
    ok = np.flatnonzero(after & (np.abs(err) > 0.5) & (res["radar.valid"] > 0.5))
    return {
        "v1_m_s": v1,
        "max_speed_m_s": float(v[after].max()),
        "hold_speed_m_s": float(v[longest].mean()) if longest.size else None,
        "hold_s": (float(t[longest[0]]), float(t[longest[-1]])) if longest.size else None,
        "range_after_cut_out_m": float(r[np.argmax(after)]),
        "gap_recovered_at_s": float(t[ok[-1] + 1]) if ok.size and ok[-1] + 1 < t.size else None,
        "final_gap_m": float(r[-1]),
        "final_speed_m_s": float(v[-1]),
        "cruise_mode_s": float(np.sum(after & (res["acc.mode"] < 0.5)) * (t[1] - t[0])),
        "no_target_s": float(np.sum(after & (res["radar.valid"] < 0.5)) * (t[1] - t[0])),
        "min_gap_m": float(r.min()),
        "accel_range": (float(a.min()), float(a.max())),
        "iso": check_iso15622(t, a, v),
        **pedal_figures(res),
    }


def _print(title: str, s: dict) -> None:
    a, b = s["hold_s"]
    lo, hi = s["accel_range"]
    iso = s["iso"]
    print(title)
    print(f"  range {s['range_after_cut_out_m']:.1f} m after the cut-out; no target for "
          f"{s['no_target_s']:.2f} s; top speed {s['max_speed_m_s']:.2f} m/s; held "
          f"{s['hold_speed_m_s']:.2f} m/s (V1 {s['v1_m_s']:g} m/s) from {a:.1f} to {b:.1f} s")
    print(f"  gap within 0.5 m of the policy from {s['gap_recovered_at_s']:.1f} s, final "
          f"{s['final_gap_m']:.2f} m at {s['final_speed_m_s']:.2f} m/s")
    print(f"  acceleration [{lo:.2f}, {hi:.2f}] m/s^2; ISO 15622 decel {iso.decel_ratio:.0%}, "
          f"jerk {iso.jerk_ratio:.0%} of the limits, {'pass' if iso.ok else 'FAIL'}; "
          f"brake-mode switches {s['brake_mode_switches']}, overlap {s['overlap_samples']}")


def main() -> dict:
    res, wall = run(build(), T_END)
    s = summary(res)
    _print(f"ACC cut-out at {CUT_OUT_S:g} s, {SPEED:g} m/s, V1 in radar range", s)
    far = summary(far_run()[0])
    _print(f"V1 {FAR_GAP:g} m ahead of V2: beyond the radar's range after the cut-out", far)
    print(f"wall time {wall:.2f} s: {T_END / wall:.0f}x faster than real time")
    return s


if __name__ == "__main__":
    main()
