"""ACC on the full conventional car: the seed's scenarios with engine, torque converter,
automatic gearbox and brakes (section 11 of the seed).

The loop of :mod:`acc_plant` with its point-mass car replaced by
:func:`blocks.vehicle.ConventionalVehicle` (2-litre engine map, torque converter, 4-speed
automatic with a shift schedule, final drive, brakes; :data:`blocks.vehicle.PASSENGER_CAR`).
The controller (:class:`blocks.controllers.ACCController`, sampled every 16 ms) inverts its
own nominal model of that car (:func:`controller_model`: the same engine map, mass, drag,
ratios; the converter taken as a rigid coupling, torque ratio 1) and reads the ECU signals a
real car gives it: radar range and range rate, own speed, the engine speed and the current
gearbox ratio.  Vehicle and traffic integrate with AB3 at 8 ms, the recorder keeps 40 ms.

``python examples/acc_full_vehicle.py [cut_in|stop_and_go]``.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from blocks.controllers import (
    ACCController,
    ACCSettings,
    DrivelineModel,
    EngineMap,
    check_iso15622,
)
from blocks.sources import Constant
from blocks.vehicle import PASSENGER_CAR, ConventionalVehicle
from blocks.vehicle.scenarios import cut_in_scenario, stop_and_go_scenario
from cosim import DiagramBuilder

try:  # imported as examples.acc_full_vehicle (tests)
    from examples.acc_plant import CONTROL_PERIOD, pedal_figures, run, simulation
except ModuleNotFoundError:  # run as a script, or by ``cosim run``
    from acc_plant import CONTROL_PERIOD, pedal_figures, run, simulation

SETTINGS = ACCSettings()
SIMULATION = simulation(80.0)


def controller_model(car=PASSENGER_CAR) -> DrivelineModel:
    """The controller's nominal model of ``car`` (what an ECU would be calibrated with)."""
    e, body, tr = car.engine, car.body, car.transmission
    rad_s = np.asarray(e.speed_rpm, dtype=float) * math.pi / 30.0
    return DrivelineModel(
        engine=EngineMap(np.asarray(e.throttle, float), rad_s, np.asarray(e.torque_nm, float)),
        mass_kg=body.mass_kg, wheel_radius_m=body.wheel_radius_m,
        final_drive=tr.final_drive_ratio, engine_inertia_kg_m2=e.inertia_kgm2,
        wheel_inertia_kg_m2=body.wheel_inertia_kgm2,
        efficiency=tr.efficiency * tr.final_drive_efficiency,
        drag_area_m2=body.drag_coefficient * body.frontal_area_m2,
        air_density_kg_m3=body.air_density_kg_m3, rolling_resistance=body.rolling_resistance,
        gravity_m_s2=body.gravity_m_s2, max_brake_torque_nm=car.brake.max_torque_nm)


def scenario(name: str):
    if name == "cut_in":
        gap = SETTINGS.standstill_gap_m + SETTINGS.time_gap_s * 25.0
        return cut_in_scenario(gap, speed_m_s=25.0, cut_in_s=50.0, cut_in_gap_m=25.0,
                               t_end_s=80.0)
    if name == "stop_and_go":
        return stop_and_go_scenario(SETTINGS.standstill_gap_m + SETTINGS.time_gap_s * 15.0,
                                    cruise_m_s=15.0)
    raise ValueError(f"scenario {name!r}: choose cut_in or stop_and_go")


def build(name: str = "cut_in"):
    """Full car + ACC controller + the scenario's traffic and radar."""
    sc = scenario(name)
    b = DiagramBuilder(f"acc_full_{sc.name}")
    gear = 1 if sc.ego_v0_m_s < 5.0 else 4
    car = b.add(ConventionalVehicle("car", initial_gear=gear, v0_m_s=sc.ego_v0_m_s,
                                    x0_m=sc.ego_x0_m))
    acc = b.add(ACCController("acc", CONTROL_PERIOD, controller_model(), SETTINGS,
                              engine_speed_input=True))
    vset = b.add(Constant("set_speed", sc.set_speed_m_s, unit="m/s"))
    radar = sc.add_to(b, car.output("x"), car.output("v"))["radar"]
    b.connect(radar.range, acc.range)
    b.connect(radar.range_rate, acc.range_rate)
    b.connect(radar.valid, acc.target_valid)
    b.connect(car.output("v"), acc.speed)
    b.connect(car.output("engine_speed"), acc.input("engine_speed"))
    b.connect(vset.y, acc.set_speed)
    b.connect(car.output("gear_ratio"), acc.gear_ratio)
    b.connect(acc.throttle, car.input("throttle"))
    b.connect(acc.brake_torque, car.input("torque_request"))
    return b.build(), sc


RECORD = ["car.x", "car.v", "car.a", "car.gear", "car.engine_speed", "radar.range",
          "radar.valid", "radar.target", "acc.throttle", "acc.brake_torque",
          "acc.accel_request", "acc.mode", "acc.braking"]


def simulate(name: str = "cut_in"):
    d, sc = build(name)
    res, wall = run(d, sc.t_end_s, record=RECORD)
    return res, wall, sc


def summary(res) -> dict:
    t, r, v, a = res.time, res["radar.range"], res["car.v"], res["car.a"]
    valid = res["radar.valid"] > 0.5
    return {"min_gap_m": float(r[valid].min()), "min_speed_m_s": float(v.min()),
            "max_speed_m_s": float(v.max()), "accel_range": (float(a.min()), float(a.max())),
            "accel_request_range": (float(res["acc.accel_request"].min()),
                                    float(res["acc.accel_request"].max())),
            "gears": sorted({int(g) for g in res["car.gear"]}),
            "iso": check_iso15622(t, a, v), **pedal_figures(res)}


def main(name: str = "cut_in") -> dict:
    res, wall, sc = simulate(name)
    s = summary(res)
    iso = s["iso"]
    print(f"ACC {name} on the full conventional car (AB3 8 ms, controller 16 ms): "
          f"{sc.t_end_s:g} s in {wall:.2f} s ({sc.t_end_s / wall:.0f}x real time)")
    print(f"  min gap {s['min_gap_m']:.2f} m, speed {s['min_speed_m_s']:.2f}.."
          f"{s['max_speed_m_s']:.2f} m/s, gears used {s['gears']}")
    print(f"  acceleration [{s['accel_range'][0]:.2f}, {s['accel_range'][1]:.2f}] m/s^2; "
          f"ISO 15622 decel {iso.decel_ratio:.0%}, jerk {iso.jerk_ratio:.0%} of the limits")
    print(f"  brake-mode switches {s['brake_mode_switches']}, throttle and brake together in "
          f"{s['overlap_samples']} samples")
    return s


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "cut_in")
