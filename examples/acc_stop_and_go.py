"""ACC stop-and-go (seed section 11, Fig. 6): the car ahead stops completely and restarts.

A scripted head car cruises at 15 m/s, brakes at 1.5 m/s^2 to a standstill at 20 s, stands
8 s and accelerates at 1 m/s^2 back to 15 m/s; an IDM traffic agent follows it and is the
ego's target.  The ACC follows it down to a standstill 5 m behind (the standstill gap),
holds the brake, and drives off when the target has left; throttle and brake switch with
hysteresis and are never applied together.

The seed shows this qualitatively (pedal angles switching correctly, no numbers).  Run
``python examples/acc_stop_and_go.py``; ``--noise`` adds radar noise (0.1 m, 0.1 m/s,
20 Hz radar) and compares the brake-mode switches with and without hysteresis.
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np

from blocks.controllers import ACCSettings, check_iso15622
from blocks.vehicle.scenarios import stop_and_go_scenario
from cosim import Noise

try:  # imported as examples.acc_stop_and_go (tests)
    from examples.acc_plant import build_loop, pedal_figures, run, simulation
except ModuleNotFoundError:  # run as a script, or by ``cosim run``
    from acc_plant import build_loop, pedal_figures, run, simulation

CRUISE = 15.0
SETTINGS = ACCSettings()
#: Radar noise of the ``noisy`` run: standard deviations of range [m] and range rate [m/s].
NOISE_STD = 0.1
#: Radar cycle of the noisy run (20.8 Hz, a multiple of the 8 ms step) [s].
RADAR_PERIOD = 0.048


def scenario(settings: ACCSettings = SETTINGS):
    gap = settings.standstill_gap_m + settings.time_gap_s * CRUISE
    return stop_and_go_scenario(gap, cruise_m_s=CRUISE)


T_END = scenario().t_end_s
SIMULATION = simulation(T_END)


def build(settings: ACCSettings = SETTINGS, radar_period_s: float | None = None):
    """The closed loop: car, controller, head car, IDM lead car, radar."""
    return build_loop(scenario(settings), settings, radar_period_s=radar_period_s)


def run_noisy(settings: ACCSettings = SETTINGS, std: float = NOISE_STD, seed: int = 3):
    """The scenario with Gaussian noise on the radar's range and range rate."""
    noise = [Noise("radar.range", std, seed=seed), Noise("radar.range_rate", std, seed=seed + 1)]
    return run(build(settings, RADAR_PERIOD), T_END, manipulators=noise)


def summary(res, settings: ACCSettings = SETTINGS) -> dict:
    t, r, v, a = res.time, res["radar.range"], res["car.v"], res["car.a"]
    stopped = v < 0.01
    idx = np.flatnonzero(stopped)
    stop_t = (float(t[idx[0]]), float(t[idx[-1]])) if idx.size else None
    lead_v = res["lead.v"]
    go = np.flatnonzero((t > (stop_t[1] if stop_t else 0.0)) & (v > 5.0))
    return {
        "min_gap_m": float(r.min()),
        "standstill_gap_m": float(r[idx].mean()) if idx.size else None,
        "stopped_from_to_s": stop_t,
        "lead_stopped_s": float(np.sum(lead_v < 0.01) * (t[1] - t[0])),
        "restart_5ms_at_s": float(t[go[0]]) if go.size else None,
        "final_speed_m_s": float(v[-1]),
        "min_speed_m_s": float(v.min()),
        "accel_range": (float(a.min()), float(a.max())),
        "iso": check_iso15622(t, a, v),
        **pedal_figures(res),
    }


def main(argv: list[str] | None = None) -> dict:
    argv = sys.argv[1:] if argv is None else argv
    res, wall = run(build(), T_END)
    s = summary(res)
    print(f"ACC stop-and-go behind an IDM car, {CRUISE:g} m/s, time gap "
          f"{SETTINGS.time_gap_s:g} s, standstill gap {SETTINGS.standstill_gap_m:g} m")
    a, b = s["stopped_from_to_s"]
    print(f"  ego at rest from {a:.2f} s to {b:.2f} s, {s['standstill_gap_m']:.2f} m behind "
          f"(the lead stood {s['lead_stopped_s']:.1f} s); 5 m/s again at "
          f"{s['restart_5ms_at_s']:.2f} s; min gap {s['min_gap_m']:.2f} m")
    lo, hi = s["accel_range"]
    iso = s["iso"]
    print(f"  acceleration [{lo:.2f}, {hi:.2f}] m/s^2; ISO 15622 decel {iso.decel_ratio:.0%}, "
          f"jerk {iso.jerk_ratio:.0%} of the limits, {'pass' if iso.ok else 'FAIL'}")
    print(f"  brake-mode switches {s['brake_mode_switches']}, throttle and brake together in "
          f"{s['overlap_samples']} samples")
    if "--noise" in argv:
        for hyst in (SETTINGS.hysteresis_m_s2, 0.0):
            st = dataclasses.replace(SETTINGS, hysteresis_m_s2=hyst)
            n = summary(run_noisy(st)[0], st)
            print(f"  radar noise {NOISE_STD:g}: hysteresis {hyst:g} m/s^2 -> "
                  f"{n['brake_mode_switches']} brake-mode switches, min gap "
                  f"{n['min_gap_m']:.2f} m")
    print(f"wall time {wall:.2f} s: {T_END / wall:.0f}x faster than real time")
    return s


if __name__ == "__main__":
    main()
