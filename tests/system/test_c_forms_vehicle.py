"""C forms of the vehicle blocks of the full car (``examples/acc_full_vehicle.py``): Engine,
TorqueConverter, ShiftSchedule, AutomaticGearbox, FinalDrive, Brake, LongitudinalVehicle, and
the electric car's AcceleratorMap, compiled (``Simulator(compiled=True)``) against the Python
loop, their oracle.

The class is "any valid parameter set, any input": per block a generated corpus (seeded
random data within the parameter classes' valid ranges, inputs as sums of Sine, Step and
Ramp sources of random amplitude) whose runs go through the blocks' branches (asserted per
seed: idle governor, fuel cut-off and the stopped engine; stall, drive and overrun of the
converter; shifts up and down; both power flows of the gears; the brake's saturations;
standstill and breakaway of the vehicle), with the four fixed-step solvers; then the
conventional car itself (its powertrain and vehicle, as acc_full_vehicle builds it) on
scripted throttle and brake profiles for 60 s.  Recorded times identical, every signal
within 1e-12 of its range (``_compare`` of test_compiled_run).  Without a block's C form
the diagram cannot be compiled (the last test removes each one).
"""

from __future__ import annotations

import dataclasses
import math
import shutil

import numpy as np
import pytest

import blocks as bl
from blocks.vehicle import (
    PASSENGER_CAR,
    AcceleratorMap,
    AutomaticGearbox,
    Brake,
    ConventionalVehicle,
    Engine,
    FinalDrive,
    LongitudinalVehicle,
    ShiftSchedule,
    TorqueConverter,
)
from blocks.vehicle.params import (
    BodyData,
    BrakeData,
    EngineData,
    TorqueConverterData,
    TransmissionData,
)
from cosim import DiagramBuilder, Simulator
from cosim.errors import StepError
from tests.corpus.compiled_oracle import check_without_c_form, run_both

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

SOLVERS = ["rk4", "heun", "midpoint", "euler"]
SEEDS = range(8)


def _both(make, t_end, record, **kw):
    """The Python loop's results of ``make()``, checked against the compiled run."""
    return run_both(make, t_end, record=record, **kw)[0]


def _signal(b, name, rng, lo, hi, t_end):
    """A source spanning about ``[lo, hi]``: bias + sine + a step up and back + a ramp."""
    span = hi - lo
    parts = [
        bl.Sine(f"{name}_sin", amplitude=rng.uniform(0.25, 0.5) * span,
                frequency_hz=rng.uniform(0.5, 3.0) / t_end, phase_rad=rng.uniform(0, 2 * np.pi),
                bias=lo + 0.5 * span),
        bl.Step(f"{name}_up", time_s=round(rng.uniform(0.1, 0.4) * t_end, 3),
                final=rng.uniform(-0.3, 0.3) * span),
        bl.Ramp(f"{name}_ramp", slope=rng.uniform(-0.2, 0.2) * span / t_end,
                start_s=round(rng.uniform(0.3, 0.7) * t_end, 3)),
    ]
    s = b.add(bl.Sum(name, "+++"))
    for i, p in enumerate(parts):
        b.connect(b.add(p).y, s.ins[i])
    return s.y


def _increasing(rng, lo, hi, n, first=None, last=None):
    x = np.sort(rng.uniform(lo, hi, n))
    x = np.maximum.accumulate(x + np.arange(n) * 1e-3 * (hi - lo))
    if first is not None:
        x[0] = first
    if last is not None:
        x[-1] = last
    return tuple(float(v) for v in x)


def _solver(seed):
    return {"solver": SOLVERS[seed % 4], "dt": [1e-3, 2e-3][seed % 2]}


# ----------------------------------------------------------------- engine
def _engine_data(rng):
    thr = _increasing(rng, 0.0, 1.0, int(rng.integers(3, 7)), first=0.0, last=1.0)
    rpm = _increasing(rng, 500.0, 7500.0, int(rng.integers(4, 9)))
    base = rng.uniform(-40.0, -5.0, len(rpm))
    top = rng.uniform(100.0, 250.0, len(rpm))
    frac = np.sort(rng.uniform(0.0, 1.0, (len(thr) - 2, len(rpm))), axis=0)
    z = np.vstack([base, base + (top - base) * frac, top])  # non-decreasing in throttle
    cut = rng.uniform(5000.0, 7000.0)
    return EngineData(throttle=thr, speed_rpm=rpm, torque_nm=tuple(map(tuple, z.tolist())),
                      inertia_kgm2=rng.uniform(0.1, 0.4), idle_rpm=rng.uniform(600.0, 1000.0),
                      idle_gain_per_rad_s=float(rng.choice([0.0, rng.uniform(0.001, 0.01)])),
                      cutoff_rpm=cut, cutoff_ramp_rpm=rng.uniform(100.0, 400.0))


@pytest.mark.parametrize("seed", SEEDS)
def test_engine_corpus(seed):
    """Rev up into the fuel cut-off (little load, full throttle), stall to standstill (a
    large load step: the speed held at 0), idle governor, then a mixed phase."""
    rng = np.random.default_rng(100 + seed)
    data = _engine_data(rng)
    w0 = rng.uniform(0.4, 0.9) * data.cutoff_rpm * math.pi / 30
    t_end = 6.0

    def make():
        r = np.random.default_rng(1000 + seed)
        b = DiagramBuilder("engine_corpus")
        eng = b.add(Engine("engine", data, speed0_rad_s=w0))
        thr = b.add(bl.Sum("throttle", "++"))  # floored for the first 2 s
        b.connect(_signal(b, "thr", r, -0.3, 1.3, t_end), thr.ins[0])
        b.connect(_profile(b, "floor", [(0.0, 1.5), (2.0, -1.5)]), thr.ins[1])
        b.connect(thr.y, eng.throttle)
        load = b.add(bl.Sum("load", "+++"))
        b.connect(_signal(b, "ld", r, -20.0, 20.0, t_end), load.ins[0])
        big = r.uniform(500.0, 900.0)
        b.connect(b.add(bl.Step("stall_on", 2.0, big)).y, load.ins[1])
        b.connect(b.add(bl.Step("stall_off", 4.0, -big)).y, load.ins[2])
        b.connect(load.y, eng.load_torque)
        return b.build()

    rec = ["engine.speed", "engine.torque", "engine.throttle_effective"]
    py = _both(make, t_end, rec, **_solver(seed))
    w = py["engine.speed"]
    assert w.min() <= 0.0  # stopped: the clamp of the derivative at w <= 0 acts
    cut_from = (data.cutoff_rpm - data.cutoff_ramp_rpm) * math.pi / 30
    assert w.max() > cut_from  # into the fuel cut-off ramp


# -------------------------------------------------------------- converter
def _converter_data(rng):
    n = int(rng.integers(4, 12))
    sr = _increasing(rng, 0.05, 0.95, n - 2)
    sr = (0.0, *sr, 1.0)
    tr = np.maximum(np.linspace(rng.uniform(1.6, 2.5), 1.0, n)
                    * rng.uniform(0.98, 1.0, n), 0.5)
    k = np.cumsum(rng.uniform(0.0, 30.0, n)) + rng.uniform(100.0, 160.0)
    k = k.tolist()
    if rng.random() < 0.6:
        k[-1] = math.inf
    return TorqueConverterData(speed_ratio=sr, torque_ratio=tuple(tr.tolist()),
                               capacity_rpm_per_sqrt_nm=tuple(k))


@pytest.mark.parametrize("seed", SEEDS)
def test_torque_converter_corpus(seed):
    """Pump and turbine speeds over stall, drive, coupling and overrun, negative speeds
    (pump clamped at 0, turbine read as stall) and the capped ratio with the pump at 0."""
    rng = np.random.default_rng(200 + seed)
    data = _converter_data(rng)
    t_end = 4.0

    def make():
        r = np.random.default_rng(2000 + seed)
        b = DiagramBuilder("converter_corpus")
        tc = b.add(TorqueConverter("tc", data))
        b.connect(_signal(b, "wp", r, -100.0, 500.0, t_end), tc.pump_speed)
        b.connect(_signal(b, "wt", r, -150.0, 550.0, t_end), tc.turbine_speed)
        return b.build()

    rec = ["tc.pump_torque", "tc.turbine_torque", "tc.speed_ratio"]
    py = _both(make, t_end, rec, **_solver(seed))
    nu = py["tc.speed_ratio"]
    assert (nu < 1.0).any() and (nu > 1.0).any()  # drive and overrun


# ----------------------------------------------------------- transmission
def _transmission_data(rng):
    n = int(rng.integers(2, 6))
    ratios = tuple(sorted(rng.uniform(0.6, 4.0, n).tolist(), reverse=True))
    m = int(rng.integers(1, 6))
    thr = _increasing(rng, 0.0, 1.0, m, first=0.0, last=1.0 if m > 1 else None)
    base = np.cumsum(rng.uniform(15.0, 30.0, n - 1))[:, None]  # km/h, rising with the gear
    slope = rng.uniform(0.0, 40.0, (n - 1, 1)) * np.asarray(thr)[None, :]
    up = base + slope + np.arange(n - 1)[:, None] * 20.0
    down = up - rng.uniform(3.0, 10.0, (n - 1, 1))
    return TransmissionData(
        gear_ratios=ratios, efficiency=rng.uniform(0.85, 1.0),
        shift_time_s=float(rng.choice([0.0, rng.uniform(0.1, 0.5)])),
        final_drive_ratio=rng.uniform(2.5, 4.5), final_drive_efficiency=rng.uniform(0.9, 1.0),
        shift_throttle=thr, upshift_kmh=tuple(map(tuple, up.tolist())),
        downshift_kmh=tuple(map(tuple, down.tolist())),
        shift_period_s=float(rng.choice([0.01, 0.02, 0.04])),
        min_shift_interval_s=float(rng.choice([0.0, rng.uniform(0.1, 1.5)])))


@pytest.mark.parametrize("seed", SEEDS)
def test_shift_schedule_gearbox_and_final_drive_corpus(seed):
    """A speed sweeping the shift lines up and down (kick-down by the throttle), the gear
    into the gearbox (ratio state or jumps), torque and speed of both signs (power flow
    both ways, the efficiency blend or the sharp switch)."""
    rng = np.random.default_rng(300 + seed)
    data = _transmission_data(rng)
    top = max(max(row) for row in np.reshape(data.upshift_kmh, (data.n_gears - 1, -1))) / 3.6
    ps = [float(rng.choice([0.0, rng.uniform(20.0, 500.0)])) for _ in range(2)]
    t_end = 12.0

    def make():
        r = np.random.default_rng(3000 + seed)
        b = DiagramBuilder("transmission_corpus")
        tcu = b.add(ShiftSchedule("tcu", data, initial_gear=int(r.integers(1, data.n_gears + 1))))
        gb = b.add(AutomaticGearbox("gb", data, smoothing_power_w=ps[0],
                                    initial_gear=int(r.integers(1, data.n_gears + 1))))
        fd = b.add(FinalDrive("fd", data, smoothing_power_w=ps[1]))
        b.connect(_signal(b, "v", r, -0.1 * top, 1.2 * top, t_end), tcu.speed)
        b.connect(_signal(b, "thr", r, -0.2, 1.2, t_end), tcu.throttle)
        b.connect(tcu.gear, gb.gear)
        b.connect(_signal(b, "tin", r, -150.0, 250.0, t_end), gb.torque_in)
        b.connect(_signal(b, "wout", r, -30.0, 150.0, t_end), gb.speed_out)
        b.connect(gb.torque_out, fd.torque_in)
        b.connect(_signal(b, "wwheel", r, -10.0, 60.0, t_end), fd.speed_out)
        return b.build()

    rec = ["tcu.gear", "gb.torque_out", "gb.speed_in", "gb.ratio", "fd.torque_out",
           "fd.speed_in", "fd.power_loss"]
    py = _both(make, t_end, rec, **_solver(seed))
    shifts = np.diff(py["tcu.gear"])
    assert (shifts > 0).any() and (shifts < 0).any()


# ------------------------------------------------------------------ brake
@pytest.mark.parametrize("seed", SEEDS)
def test_brake_corpus(seed):
    """Each request mode, with and without the lag, over requests below 0 and above the
    maximum (both saturations)."""
    rng = np.random.default_rng(400 + seed)
    t_end = 3.0
    datas = [BrakeData(max_torque_nm=rng.uniform(2000.0, 9000.0),
                       torque_per_pressure_nm_per_pa=rng.uniform(2e-4, 1e-3),
                       time_constant_s=float(rng.choice([0.0, rng.uniform(0.03, 0.3)])))
             for _ in range(3)]

    def make():
        r = np.random.default_rng(4000 + seed)
        b = DiagramBuilder("brake_corpus")
        for mode, d in zip(("torque", "pedal", "pressure"), datas, strict=True):
            full = {"torque": d.max_torque_nm, "pedal": 1.0,
                    "pressure": d.max_torque_nm / d.torque_per_pressure_nm_per_pa}[mode]
            brk = b.add(Brake(f"brake_{mode}", d, mode=mode))
            req = b.add(bl.Sum(f"req_{mode}", "++"))  # a full cycle beyond both limits
            b.connect(b.add(bl.Sine(f"req_{mode}_sin", r.uniform(0.8, 1.0) * full,
                                    r.uniform(1.0, 2.5) / t_end, r.uniform(0, 2 * np.pi),
                                    bias=0.5 * full)).y, req.ins[0])
            b.connect(_signal(b, f"req_{mode}_mix", r, -0.1 * full, 0.1 * full, t_end),
                      req.ins[1])
            b.connect(req.y, brk.request)
        return b.build()

    rec = [f"brake_{m}.torque" for m in ("torque", "pedal", "pressure")]
    py = _both(make, t_end, rec, **_solver(seed))
    for m, d in zip(("torque", "pedal", "pressure"), datas, strict=True):
        if d.time_constant_s == 0.0:
            tb = py[f"brake_{m}.torque"]
            assert tb.min() == 0.0 and tb.max() == d.max_torque_nm


# ---------------------------------------------------------------- vehicle
@pytest.mark.parametrize("seed", SEEDS)
def test_longitudinal_vehicle_corpus(seed):
    """Drive, coast, brake to standstill and hold (on a grade), breakaway; the grade as a
    parameter or an input."""
    rng = np.random.default_rng(500 + seed)
    body = BodyData(mass_kg=rng.uniform(800.0, 2500.0), drag_coefficient=rng.uniform(0.2, 0.5),
                    frontal_area_m2=rng.uniform(1.8, 3.0), air_density_kg_m3=1.2,
                    rolling_resistance=rng.uniform(0.005, 0.02),
                    wheel_radius_m=rng.uniform(0.25, 0.4), wheel_inertia_kgm2=rng.uniform(0, 6))
    grade_input = bool(seed % 2)
    tau = rng.uniform(0.03, 0.1)
    grade = rng.uniform(-0.08, 0.08)
    v0 = rng.uniform(0.0, 25.0)
    t_end = 20.0

    def make():
        r = np.random.default_rng(5000 + seed)
        b = DiagramBuilder("vehicle_corpus")
        veh = b.add(LongitudinalVehicle("veh", body, grade_input=grade_input, grade_rad=grade,
                                        v0_m_s=v0, x0_m=r.uniform(-50, 50),
                                        standstill_time_constant_s=tau))
        drive = b.add(bl.Sum("drive", "++-"))
        b.connect(_signal(b, "td", r, -200.0, 1500.0, t_end), drive.ins[0])
        b.connect(b.add(bl.Step("launch", 14.0, r.uniform(2000.0, 4000.0))).y, drive.ins[1])
        b.connect(b.add(bl.Step("cut", 4.0, 1800.0)).y, drive.ins[2])
        b.connect(drive.y, veh.drive_torque)
        press = r.uniform(4000.0, 8000.0)  # released at 13 s to a negative request (read 0)
        b.connect(_profile(b, "brake", [(5.0, press), (13.0, -press - r.uniform(0, 500))]),
                  veh.brake_torque)
        if grade_input:
            b.connect(_signal(b, "grade", r, -0.1, 0.1, t_end), veh.grade_in)
        return b.build()

    rec = ["veh.x", "veh.v", "veh.wheel_speed", "veh.drag_force", "veh.a", "veh.friction_force"]
    py = _both(make, t_end, rec, **_solver(seed))
    v, t = py["veh.v"], py.time
    held = (t > 11.0) & (t < 13.0)
    assert np.abs(v[held]).max() < 1e-3  # braked to standstill and held
    assert v[t > 17.0].max() > 1.0  # breakaway after the launch


# ---------------------------------------------------------- accelerator
@pytest.mark.parametrize("seed", SEEDS)
def test_accelerator_map_corpus(seed):
    """The torque envelope over both directions of rotation: constant torque, constant
    power, the fade to 0 before the top speed and beyond it; the pedal's saturations."""
    rng = np.random.default_rng(600 + seed)
    e = dataclasses.replace(PASSENGER_CAR.electric, max_torque_nm=rng.uniform(80.0, 400.0),
                            max_power_w=rng.uniform(30e3, 200e3),
                            max_speed_rad_s=rng.uniform(600.0, 2000.0))
    t_end = 2.0

    def make():
        r = np.random.default_rng(6000 + seed)
        b = DiagramBuilder("pedal_corpus")
        pedal = b.add(AcceleratorMap("pedal", e))
        b.connect(_signal(b, "thr", r, -0.3, 1.3, t_end), pedal.throttle)
        w = b.add(bl.Ramp("w", slope=2.3 * e.max_speed_rad_s / t_end,
                          initial=-1.15 * e.max_speed_rad_s))
        b.connect(w.y, pedal.motor_speed)
        return b.build()

    _both(make, t_end, ["pedal.torque_ref"], **_solver(seed))


# ---------------------------------------------------------------- the car
def _profile(b, name, steps, unit=None):
    """A piecewise-constant profile: a Sum of Steps ``[(time, jump), ...]``."""
    s = b.add(bl.Sum(name, "+" * len(steps), unit=unit))
    for i, (t, dy) in enumerate(steps):
        b.connect(b.add(bl.Step(f"{name}_{i}", t, dy, unit=unit)).y, s.ins[i])
    return s.y


def _car(variant):
    """The car as acc_full_vehicle builds it, driven by a scripted throttle and brake:
    drive-off, upshifts, kick-down, release (overrun), braking to standstill and hold,
    drive-off again ("urban"); or from cruise in 4th ("cruise", acc_full_vehicle's initial
    state) with lifts, kick-down and a stop."""
    b = DiagramBuilder(f"car_{variant}")
    tr, body = PASSENGER_CAR.transmission, PASSENGER_CAR.body
    if variant == "urban":
        car = b.add(ConventionalVehicle("car"))
        thr = [(1.0, 0.3), (12.0, 0.25), (20.0, 0.45), (26.0, -1.0), (40.0, 0.6),
               (48.0, -0.3), (55.0, 0.2)]
        brk = [(30.0, 2500.0), (38.0, -2500.0), (50.0, 1500.0), (53.0, -1500.0)]
    else:
        v0, gear = 25.0, 4
        w0 = v0 * tr.gear_ratios[gear - 1] * tr.final_drive_ratio / body.wheel_radius_m / 0.96
        car = b.add(ConventionalVehicle("car", initial_gear=gear, v0_m_s=v0, x0_m=10.0,
                                        engine_speed0_rad_s=w0))
        thr = [(0.0, 0.3), (8.0, -0.3), (15.0, 0.95), (22.0, -0.7), (30.0, -0.25),
               (44.0, 0.4)]
        brk = [(31.0, 4000.0), (42.0, -4000.0), (50.0, 800.0), (52.0, -800.0)]
    b.connect(_profile(b, "throttle", thr), car.input("throttle"))
    b.connect(_profile(b, "brake_request", brk, unit="N*m"), car.input("torque_request"))
    return b.build()


CAR_RECORD = ["car.x", "car.v", "car.a", "car.wheel_speed", "car.engine_speed",
              "car.engine_torque", "car.gear", "car.gear_ratio", "car.speed_ratio",
              "car.drive_torque", "car.brake_torque"]


@pytest.mark.parametrize("variant, solver", [("urban", "rk4"), ("cruise", "rk4"),
                                             ("urban", "heun")])
def test_the_full_car_for_60_s(variant, solver):
    py = _both(lambda: _car(variant), 60.0, CAR_RECORD, solver=solver, dt=4e-3)
    gear, v = py["car.gear"], py["car.v"]
    shifts = np.diff(gear)
    assert (shifts > 0).any() and (shifts < 0).any()
    assert np.abs(v).min() < 1e-3  # braked to standstill
    assert py["car.speed_ratio"].max() > 1.0  # overrun: the wheels drive the engine


# ------------------------------------------------------ without a C form
_RIGS = {
    Engine: lambda b: b.add(Engine("blk")),
    TorqueConverter: lambda b: b.add(TorqueConverter("blk")),
    ShiftSchedule: lambda b: b.add(ShiftSchedule("blk")),
    AutomaticGearbox: lambda b: b.add(AutomaticGearbox("blk")),
    FinalDrive: lambda b: b.add(FinalDrive("blk")),
    Brake: lambda b: b.add(Brake("blk")),
    LongitudinalVehicle: lambda b: b.add(LongitudinalVehicle("blk")),
    AcceleratorMap: lambda b: b.add(AcceleratorMap("blk")),
}


@pytest.mark.parametrize("cls", list(_RIGS), ids=lambda c: c.__name__)
def test_without_its_c_form_the_block_is_called_back_or_refused(cls, monkeypatch):
    def make():
        b = DiagramBuilder("rig")
        blk = _RIGS[cls](b)
        for i, p in enumerate(blk.inputs.values()):
            b.connect(b.add(bl.Constant(f"c{i}", 1.0)).y, p)
        return b.build()

    res = Simulator(make(), compiled=True, solver="rk4", dt=1e-3).run(0.1)  # with it: C
    assert res.diagnostics["compiled"] is True
    monkeypatch.setattr(cls, "c_model", None)  # (not inherited: FinalDrive's base either)
    # without it: called back in Python from the C, or refused (never silently in C)
    check_without_c_form(make, cls.__name__, 0.1, solver="rk4", dt=1e-3)


@pytest.mark.parametrize("gear", [2.5, 0.0, 5.0])
def test_a_gear_out_of_range_fails_the_step_in_c_as_in_python(gear):
    def make():
        b = DiagramBuilder("rig")
        gb = b.add(AutomaticGearbox("gb"))
        for i, p in enumerate(gb.inputs.values()):
            b.connect(b.add(bl.Constant(f"c{i}", gear if p is gb.gear else 1.0)).y, p)
        return b.build()

    for compiled in (False, True):
        with pytest.raises(StepError, match="AutomaticGearbox 'gb': input 'gear'"):
            Simulator(make(), compiled=compiled, solver="rk4", dt=1e-3).run(0.1)
