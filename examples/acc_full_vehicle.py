"""ACC on the full conventional car: the seed's scenarios with engine, torque converter,
automatic gearbox and brakes (section 11 of the seed).

The loop of :mod:`acc_plant` with its point-mass car replaced by
:func:`blocks.vehicle.ConventionalVehicle` (2-litre engine map, torque converter, 4-speed
automatic with a shift schedule, final drive, brakes; :data:`blocks.vehicle.PASSENGER_CAR`).
The controller (:class:`blocks.controllers.ACCController`, sampled every 16 ms) runs the
inner acceleration loop of production ACC (``accel_input=True``): feed-forward through its
own nominal model of that car (:func:`controller_model`: the same engine map, mass, drag,
ratios, the converter's torque-ratio and capacity curves, the idle speed, the brake's lag)
plus PI feedback on the measured acceleration with anti-windup, behind the ISO jerk
limiter.  It reads the ECU signals a real car gives it: radar range and range rate, own
speed, acceleration, the engine speed and the current gearbox ratio.  Vehicle and traffic
integrate with AB3 at 8 ms, the recorder keeps 40 ms.

Measured (:func:`tracking`): the car's acceleration stays within 0.05 m/s^2 (cut-in) and
0.09 m/s^2 (stop-and-go) of the request while moving, except in the shift transients
(0.3 s after a gear change: up to 0.28 and 0.39 m/s^2, the engine's inertia torque as the
ratio moves); the peaks are 1.00 and 1.07 m/s^2 for a request of at most 1.  Without the
inner loop (``build(inner_loop=False)``: the open inversion through a rigid-coupling model,
as before) they were 1.20 at the 3-4 upshift and 1.89 at drive-off, where the converter
multiplies the torque by up to 2.0.

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

SETTINGS = ACCSettings(hysteresis_m_s2=0.05)
SIMULATION = simulation(80.0)
#: The wheel torque's response time to a throttle step through the converter [s] (the
#: engine's inertia must speed up the pump first; chosen from the step response).
DRIVE_LAG_S = 0.05


def rigid_model(car=PASSENGER_CAR) -> DrivelineModel:
    """The nominal model without the converter (torque ratio 1, no capacity, no lags):
    what the controller inverted before the inner acceleration loop."""
    import dataclasses
    return dataclasses.replace(controller_model(car), converter_speed_ratio=(),
                               converter_torque_ratio=(), converter_capacity=(),
                               idle_speed_rad_s=0.0, drive_lag_s=0.0, brake_lag_s=0.0)


def controller_model(car=PASSENGER_CAR) -> DrivelineModel:
    """The controller's nominal model of ``car`` (what an ECU would be calibrated with):
    engine map, mass, drag, ratios, the converter's torque ratio and capacity curves,
    idle speed, the brake's lag and the drive's response time."""
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
        gravity_m_s2=body.gravity_m_s2, max_brake_torque_nm=car.brake.max_torque_nm,
        converter_speed_ratio=tuple(car.torque_converter.speed_ratio),
        converter_torque_ratio=tuple(car.torque_converter.torque_ratio),
        converter_capacity=tuple(k * math.pi / 30.0
                                 for k in car.torque_converter.capacity_rpm_per_sqrt_nm),
        idle_speed_rad_s=e.idle_rpm * math.pi / 30.0,
        brake_lag_s=car.brake.time_constant_s, drive_lag_s=DRIVE_LAG_S)


def scenario(name: str):
    if name == "cut_in":
        gap = SETTINGS.standstill_gap_m + SETTINGS.time_gap_s * 25.0
        return cut_in_scenario(gap, speed_m_s=25.0, cut_in_s=50.0, cut_in_gap_m=25.0,
                               t_end_s=80.0)
    if name == "stop_and_go":
        return stop_and_go_scenario(SETTINGS.standstill_gap_m + SETTINGS.time_gap_s * 15.0,
                                    cruise_m_s=15.0)
    raise ValueError(f"scenario {name!r}: choose cut_in or stop_and_go")


def build(name: str = "cut_in", inner_loop: bool = True):
    """Full car + ACC controller + the scenario's traffic and radar.

    ``inner_loop=False``: the controller without the acceleration loop (the seed's open
    inversion through a rigid-coupling model), for comparison."""
    sc = scenario(name)
    b = DiagramBuilder(f"acc_full_{sc.name}")
    gear = 1 if sc.ego_v0_m_s < 5.0 else 4
    tr, body = PASSENGER_CAR.transmission, PASSENGER_CAR.body
    # the engine starts at its cruise speed: the turbine's over the converter's speed ratio
    # at cruise (0.96); from idle it would first be driven up by the car (a transient)
    w0 = sc.ego_v0_m_s * tr.gear_ratios[gear - 1] * tr.final_drive_ratio \
        / body.wheel_radius_m / 0.96
    car = b.add(ConventionalVehicle("car", initial_gear=gear, v0_m_s=sc.ego_v0_m_s,
                                    x0_m=sc.ego_x0_m, engine_speed0_rad_s=w0 or None))
    model = controller_model() if inner_loop else rigid_model()
    acc = b.add(ACCController("acc", CONTROL_PERIOD, model, SETTINGS,
                              engine_speed_input=True, accel_input=inner_loop))
    vset = b.add(Constant("set_speed", sc.set_speed_m_s, unit="m/s"))
    radar = sc.add_to(b, car.output("x"), car.output("v"))["radar"]
    b.connect(radar.range, acc.range)
    b.connect(radar.range_rate, acc.range_rate)
    b.connect(radar.valid, acc.target_valid)
    b.connect(car.output("v"), acc.speed)
    b.connect(car.output("engine_speed"), acc.input("engine_speed"))
    if inner_loop:
        b.connect(car.output("a"), acc.input("accel"))
    b.connect(vset.y, acc.set_speed)
    b.connect(car.output("gear_ratio"), acc.gear_ratio)
    b.connect(acc.throttle, car.input("throttle"))
    b.connect(acc.brake_torque, car.input("torque_request"))
    return b.build(), sc


RECORD = ["car.x", "car.v", "car.a", "car.gear", "car.gear_ratio", "car.engine_speed",
          "radar.range", "radar.valid", "radar.target", "acc.throttle", "acc.brake_torque",
          "acc.accel_request", "acc.accel_command", "acc.mode", "acc.braking"]


def simulate(name: str = "cut_in", inner_loop: bool = True):
    d, sc = build(name, inner_loop)
    record = RECORD if inner_loop else [p for p in RECORD if p != "acc.accel_command"]
    res, wall = run(d, sc.t_end_s, record=record)
    return res, wall, sc


#: After a gear change the ratio moves for the shift time (0.3 s, 95 %), the engine's
#: inertia torque and the converter's slip change faster than a 16 ms loop corrects:
#: the acceleration band is not asked there.
SHIFT_TRANSIENT_S = PASSENGER_CAR.transmission.shift_time_s


def tracking(res, start_s: float = 0.2, band_m_s2: float = 0.1) -> dict:
    """How the car follows the requested acceleration: the largest |a - a_request| while
    moving (v > 0.5 m/s; at rest the request is the standstill hold), after ``start_s``
    (the initial state is not the car's equilibrium) and outside the shift transients
    ``[t_shift, t_shift + SHIFT_TRANSIENT_S]``; and the largest overall."""
    t, a, ar, v = res.time, res["car.a"], res["acc.accel_request"], res["car.v"]
    moving = v > 0.5
    ok = moving & (t >= start_s)
    shifts = t[1:][np.diff(res["car.gear"]) != 0]
    for ts in shifts:
        ok &= ~((t >= ts) & (t <= ts + SHIFT_TRANSIENT_S))
    err = np.abs(a - ar)
    k = int(np.argmax(np.where(ok, err, -1.0)))
    return {"max_error_m_s2": float(err[k]), "at_s": float(t[k]),
            "max_error_in_shifts_m_s2": float(err[moving & ~ok & (t >= start_s)].max(
                initial=0.0)),
            "within_band": bool(err[ok].max() <= band_m_s2), "shifts_s": shifts.tolist(),
            "checked_fraction": float(ok.sum() / max(moving.sum(), 1))}


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
    tr = tracking(res)
    print(f"  acceleration within {tr['max_error_m_s2']:.3f} m/s^2 of the request outside "
          f"the shift transients ({tr['max_error_in_shifts_m_s2']:.2f} inside, "
          f"{SHIFT_TRANSIENT_S:g} s after each of {len(tr['shifts_s'])} shifts)")
    return s


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "cut_in")
