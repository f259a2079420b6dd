"""Engine map and engine, torque converter, automatic gearbox, shift schedule, final drive."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from blocks.sources import Constant
from blocks.vehicle import (
    PASSENGER_CAR,
    AutomaticGearbox,
    Engine,
    EngineData,
    EngineMap,
    FinalDrive,
    ShiftSchedule,
    TorqueConverter,
    TorqueConverterData,
    TransmissionData,
    representative_engine_map,
)
from blocks.vehicle.powertrain import RPM
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError, StepError
from cosim.testing import BlockHarness

KMH = 1 / 3.6


# ------------------------------------------------------------------ engine map
def test_engine_map_reproduces_its_table_and_interpolates_bilinearly():
    thr, rpm, z = representative_engine_map()
    em = EngineMap()
    for i in (0, 4, 12):
        for j in (0, 5, 13):
            assert em.torque(thr[i], rpm[j] * RPM) == pytest.approx(z[i][j], rel=1e-13)
    # a cell centre is the mean of its corners
    a, n = 0.5 * (thr[3] + thr[4]), 0.5 * (rpm[6] + rpm[7])
    mean = 0.25 * (z[3][6] + z[3][7] + z[4][6] + z[4][7])
    assert em.torque(a, n * RPM) == pytest.approx(mean, rel=1e-13)
    # the representative figures: 200 N m at 4000 rpm, 175 N m (110 kW) at 6000 rpm
    assert em.full_load(4000 * RPM) == 200.0
    assert em.full_load(6000 * RPM) * 6000 * RPM == pytest.approx(109.96e3, rel=1e-4)
    assert em.closed_throttle(3000 * RPM) == pytest.approx(-33.423, abs=1e-3)  # motoring
    # held outside the speed range
    assert em.torque(1.0, 10.0) == em.torque(1.0, 600 * RPM)


def test_inverse_engine_map_round_trips():
    em = EngineMap()
    for n in (650.0, 1200.0, 2750.0, 4000.0, 6300.0):
        w = n * RPM
        for a in np.linspace(0.0, 1.0, 23):
            t = em.torque(a, w)
            assert em.throttle_for_torque(t, w) == pytest.approx(a, abs=1e-12)
        assert em.throttle_for_torque(1e4, w) == 1.0
        assert em.throttle_for_torque(-1e4, w) == 0.0


def test_inverse_takes_the_smallest_throttle_on_a_flat_stretch():
    d = EngineData(throttle=(0.0, 0.5, 1.0), speed_rpm=(1000.0, 2000.0),
                   torque_nm=((-10.0, -20.0), (100.0, 100.0), (100.0, 150.0)))
    em = EngineMap(d)
    assert em.throttle_for_torque(100.0, 1000 * RPM) == 0.5
    assert em.throttle_for_torque(45.0, 1000 * RPM) == pytest.approx(0.25, rel=1e-14)


def test_engine_data_rejects_a_map_falling_with_throttle():
    with pytest.raises(ParameterError, match="must not decrease with throttle.*1000.0 rpm"):
        EngineData(throttle=(0.0, 1.0), speed_rpm=(1000.0, 2000.0),
                   torque_nm=((50.0, 0.0), (40.0, 100.0)))
    with pytest.raises(ParameterError, match=r"shape \(len\(throttle\), len\(speed_rpm\)\)"):
        EngineData(throttle=(0.0, 1.0), speed_rpm=(1000.0, 2000.0), torque_nm=((1.0,),))


# ---------------------------------------------------------------------- engine
def test_engine_derivative_idle_governor_and_fuel_cut():
    d = PASSENGER_CAR.engine
    h = BlockHarness(Engine("e"))
    assert h.state() == pytest.approx(800 * RPM)  # starts at idle
    h.set_inputs(throttle=0.6, load_torque=40.0)
    w = 3000 * RPM
    h.set_state("speed", w)
    t = EngineMap().torque(0.6, w)
    assert h.output("torque") == pytest.approx(t, rel=1e-14)
    assert h.derivatives()[0] == pytest.approx((t - 40.0) / d.inertia_kgm2, rel=1e-14)
    # below idle the governor opens the throttle: k (w_idle - w)
    h.set_inputs(throttle=0.0)
    h.set_state("speed", 700 * RPM)
    assert h.output("throttle_effective") == pytest.approx(
        d.idle_gain_per_rad_s * 100 * RPM, rel=1e-14)
    # fuel cut: half-way down the ramp half the throttle, none at the cut-off
    h.set_inputs(throttle=1.0)
    h.set_state("speed", 6400 * RPM)
    assert h.output("throttle_effective") == pytest.approx(0.5, rel=1e-12)
    h.set_state("speed", 6600 * RPM)
    assert h.output("throttle_effective") == 0.0
    # the speed never goes negative
    h.set_state("speed", 0.0)
    h.set_inputs(throttle=0.0, load_torque=1e4)
    assert h.derivatives()[0] == 0.0


def engine_on_converter(throttle, turbine_speed, t_end, solver="ab3"):
    b = DiagramBuilder("bench")
    e = b.add(Engine("engine"))
    tc = b.add(TorqueConverter("tc"))
    a = b.add(Constant("throttle", throttle, unit="1"))
    wt = b.add(Constant("turbine", turbine_speed, unit="rad/s"))
    b.connect(a.y, e.throttle)
    b.connect(e.speed, tc.pump_speed)
    b.connect(tc.pump_torque, e.load_torque)
    b.connect(wt.y, tc.turbine_speed)
    return Simulator(b.build(), solver=solver, dt=0.008).run(t_end)


def test_stall_speed_is_where_full_load_meets_the_converter_capacity():
    """Turbine held (vehicle braked), full throttle: T_wot(n) = (n / K(0))^2."""
    em = EngineMap()
    k0 = 135.0  # rpm / sqrt(N m)
    n_stall = brentq(lambda n: em.full_load(n * RPM) - (n / k0) ** 2, 1000, 3000)
    assert n_stall == pytest.approx(1777.28, abs=0.01)
    res = engine_on_converter(1.0, 0.0, 4.0)
    assert res["engine.speed"][-1] / RPM == pytest.approx(n_stall, abs=1e-6)  # measured 2e-12
    assert res["tc.turbine_torque"][-1] == pytest.approx(2.0 * (n_stall / k0) ** 2, rel=1e-9)


def test_idle_droops_under_the_stall_load_as_the_proportional_governor_predicts():
    e, em = Engine("e"), EngineMap()
    c0 = (1 / (135.0 * RPM)) ** 2
    w_i = brentq(lambda w: em.torque(e.effective_throttle(0.0, w), w) - c0 * w * w,
                 30.0, 800 * RPM)
    assert w_i / RPM == pytest.approx(689.86, abs=0.01)  # 110 rpm droop
    res = engine_on_converter(0.0, 0.0, 6.0)
    assert res["engine.speed"][-1] == pytest.approx(w_i, rel=1e-9)


# ------------------------------------------------------------ torque converter
def test_converter_stall_coupling_point_and_between_table_points():
    h = BlockHarness(TorqueConverter("tc"))
    wp = 2000 * RPM
    h.set_inputs(pump_speed=wp, turbine_speed=0.0)  # stall
    assert h.output("pump_torque") == pytest.approx((2000 / 135.0) ** 2, rel=1e-13)
    assert h.output("turbine_torque") == pytest.approx(2.0 * (2000 / 135.0) ** 2, rel=1e-13)
    assert h.output("speed_ratio") == 0.0
    h.set_input("turbine_speed", 0.87 * wp)  # coupling point: torque ratio 1
    assert h.output("pump_torque") == pytest.approx((2000 / 195.0) ** 2, rel=1e-13)
    assert h.output("turbine_torque") == pytest.approx(h.output("pump_torque"), rel=1e-14)
    h.set_input("turbine_speed", 0.92 * wp)  # above it: still 1 (fluid coupling)
    assert h.output("turbine_torque") == pytest.approx(h.output("pump_torque"), rel=1e-14)
    h.set_input("turbine_speed", 0.65 * wp)  # between points: 1/K^2 and TR linear
    c = 0.5 * (1 / 147.0 ** 2 + 1 / 155.0 ** 2)
    assert h.output("pump_torque") == pytest.approx(c * 2000.0 ** 2, rel=1e-13)
    assert h.output("turbine_torque") == pytest.approx(1.22 * c * 2000.0 ** 2, rel=1e-13)
    # a turbine turning backwards is stall
    h.set_input("turbine_speed", -10.0)
    assert h.output("speed_ratio") == 0.0
    assert h.output("pump_torque") == pytest.approx((2000 / 135.0) ** 2, rel=1e-13)


def test_converter_torques_vanish_at_speed_ratio_one_and_are_continuous_into_overrun():
    tc = TorqueConverter("tc")
    wp = 300.0
    assert tc.torques(wp, wp)[:2] == (0.0, 0.0)
    assert tc.capacity_factor(1.0) == math.inf
    below = tc.torques(wp, wp * (1 - 1e-6))
    above = tc.torques(wp, wp * (1 + 1e-6))
    # continuous through zero: 1.7e-3 N m at 1e-6 off, linear in the offset (1/K^2 is)
    assert 0 < below[0] < 2e-3 and -2e-3 < above[0] < 0
    assert tc.torques(wp, wp * (1 - 1e-7))[0] == pytest.approx(below[0] / 10, rel=1e-5)
    # overrun: the fluid coupling driven backwards, T_t = T_p = -(w_t / K(w_p/w_t))^2
    tp, tt, nu = tc.torques(200.0, 250.0)
    k = tc.capacity_factor(200.0 / 250.0)
    assert tp == tt == pytest.approx(-(250.0 / k) ** 2, rel=1e-13)
    assert nu == pytest.approx(1.25)
    assert tc.torques(0.0, 0.0) == (0.0, 0.0, 0.0)
    assert tc.torques(0.0, 50.0)[2] == 10.0  # the speed ratio output is capped


def test_converter_data_validation():
    with pytest.raises(ParameterError, match="speed_ratio must run from 0 to 1"):
        TorqueConverterData(speed_ratio=(0.0, 0.9), torque_ratio=(2.0, 1.0),
                            capacity_rpm_per_sqrt_nm=(130.0, 200.0))
    with pytest.raises(ParameterError, match="finite except possibly the last"):
        TorqueConverterData(speed_ratio=(0.0, 0.5, 1.0), torque_ratio=(2.0, 1.5, 1.0),
                            capacity_rpm_per_sqrt_nm=(130.0, math.inf, math.inf))


# --------------------------------------------------------------------- gearbox
def test_gearbox_ratio_and_efficiency_by_power_flow():
    data = TransmissionData(shift_time_s=0.0)
    h = BlockHarness(AutomaticGearbox("gb", data, smoothing_power_w=0.0))
    h.set_inputs(torque_in=100.0, speed_out=50.0, gear=2)
    assert h.output("speed_in") == pytest.approx(1.54 * 50.0, rel=1e-15)
    assert h.output("torque_out") == pytest.approx(1.54 * 100.0 * 0.96, rel=1e-15)
    h.set_input("torque_in", -100.0)  # back-driven (engine braking): 1/eta
    assert h.output("torque_out") == pytest.approx(-1.54 * 100.0 / 0.96, rel=1e-15)
    assert h.block.output("torque_out").depends_on == {"torque_in", "speed_out", "gear"}
    h.set_input("gear", 5)
    with pytest.raises(ValueError,
                       match="AutomaticGearbox 'gb': input 'gear' = 5.0 is not a gear 1..4"):
        h.output("speed_in")


def test_gearbox_smoothing_blends_the_efficiency_near_zero_power():
    h = BlockHarness(AutomaticGearbox("gb", TransmissionData(shift_time_s=0.0),
                                      smoothing_power_w=100.0))
    h.set_inputs(torque_in=1.0, speed_out=50.0 / 2.8, gear=1)  # P_in = 50 W: half losses
    assert h.output("torque_out") == pytest.approx(2.8 * (1 - 0.5 * 0.04), rel=1e-14)


def test_gearbox_shift_time_is_a_first_order_lag_reaching_95_percent():
    b = DiagramBuilder("g")
    gb = b.add(AutomaticGearbox("gb", initial_gear=1))  # car's: shift time 0.3 s
    for name, value, unit in (("torque", 100.0, "N*m"), ("speed", 20.0, "rad/s")):
        src = b.add(Constant(name, value, unit=unit))
        b.connect(src.y, gb.torque_in if name == "torque" else gb.speed_out)
    gear = b.add(Constant("gear_src", 2.0, unit="1"))
    b.connect(gear.y, gb.gear)
    res = Simulator(b.build(), solver="rk4", dt=0.001).run(0.6)
    t = res.time
    expected = 1.54 + (2.80 - 1.54) * np.exp(-t / 0.1)
    np.testing.assert_allclose(res["gb.ratio"], expected, rtol=1e-9)
    k = np.searchsorted(t, 0.3)
    assert (res["gb.ratio"][k] - 1.54) / (2.80 - 1.54) == pytest.approx(math.exp(-3), rel=1e-6)
    assert gb.output("ratio").depends_on == frozenset()
    assert gb.output("speed_in").depends_on == {"speed_out"}


def test_final_drive_is_the_electric_gearbox():
    from blocks.electric import Gearbox
    fd = FinalDrive("fd")
    assert isinstance(fd, Gearbox)
    h = BlockHarness(fd)
    h.set_inputs(torque_in=300.0, speed_out=80.0)
    assert h.output("speed_in") == pytest.approx(3.7 * 80.0)
    assert h.output("torque_out") == pytest.approx(3.7 * 300.0 * 0.98, rel=1e-14)


# ------------------------------------------------------------- shift schedule
def schedule(data=None, gear=1):
    h = BlockHarness(ShiftSchedule("tcu", data, initial_gear=gear))
    h._t = 0.0
    return h


def step(h, speed_kmh, throttle, dt=0.04):
    h._t += dt
    h.set_time(h._t)
    h.set_inputs(speed=speed_kmh * KMH, throttle=throttle)
    h.update()
    return h.output("gear")


def test_upshift_then_no_immediate_downshift_hysteresis_alone():
    """With no minimum interval the hysteresis alone keeps the gear from hunting."""
    h = schedule(TransmissionData(min_shift_interval_s=0.0))
    assert step(h, 29.9, 0.5) == 1 and step(h, 29.0, 0.5) == 1
    assert step(h, 30.1, 0.5) == 2  # upshift 1->2 at 30 km/h (throttle 0.5)
    for v in (29.9, 28.0, 25.0, 20.0, 18.1):  # between the lines: stays in 2nd
        assert step(h, v, 0.5) == 2, v
    assert step(h, 17.9, 0.5) == 1  # downshift 2->1 at 18 km/h
    # interpolated lines: throttle 0.375 lies half-way between 0.25 and 0.5
    tcu = h.block
    assert tcu.upshift_speed(1, 0.375) == pytest.approx(24.0 * KMH, rel=1e-14)
    assert tcu.downshift_speed(2, 0.375) == pytest.approx(14.0 * KMH, rel=1e-14)
    assert tcu.upshift_speed(4, 0.5) == math.inf and tcu.downshift_speed(1, 0.5) == -math.inf


def test_one_gear_per_sample_and_the_minimum_interval():
    h = schedule()  # the car's: 1 s between shifts
    assert step(h, 100.0, 0.0) == 2  # far above all lines: one gear at a time
    assert step(h, 100.0, 0.0) == 2  # 40 ms later: held by the minimum interval
    gears = [step(h, 100.0, 0.0) for _ in range(60)]  # 2.4 s
    assert gears[-1] == 4 and gears.index(3) == 23  # 1.0 s after the first shift


def test_kick_down_when_the_throttle_is_floored():
    h = schedule(TransmissionData(min_shift_interval_s=0.0), gear=3)
    assert step(h, 50.0, 0.25) == 3
    assert step(h, 50.0, 1.0) == 2  # 3->2 line at full throttle is 85 km/h
    assert step(h, 50.0, 1.0) == 2  # the 2->1 line at full throttle is 40 km/h: stays


def test_schedule_ports_and_validation():
    tcu = ShiftSchedule("tcu")
    assert list(tcu.inputs) == ["speed", "throttle"]
    assert tcu.output("gear").dtype == np.dtype(int)
    assert tcu.output("gear").depends_on == frozenset()
    assert tcu.periodic_updates[0].period == 40_000_000  # 40 ms in ns: 5 seed steps
    with pytest.raises(ParameterError, match=r"downshift 3->2 at throttle 0.5 \(55.0 km/h\) "
                       r"must lie below the upshift 2->3 \(55.0 km/h\)"):
        TransmissionData(downshift_kmh=((7.0, 10.0, 18.0, 28.0, 40.0),
                                        (18.0, 25.0, 55.0, 60.0, 85.0),
                                        (35.0, 42.0, 60.0, 90.0, 120.0)))
    with pytest.raises(ParameterError, match="gear_ratios must decrease"):
        TransmissionData(gear_ratios=(1.0, 2.0, 0.8, 0.7))
    with pytest.raises(ParameterError, match="initial_gear must be an int in 1..4"):
        ShiftSchedule("tcu", initial_gear=5)


def test_gearbox_reports_a_bad_gear_during_a_run():
    b = DiagramBuilder("g")
    gb = b.add(AutomaticGearbox("gb", TransmissionData(shift_time_s=0.0)))
    for port, value, unit in ((gb.torque_in, 1.0, "N*m"), (gb.speed_out, 1.0, "rad/s")):
        src = b.add(Constant(f"src_{port.name}", value, unit=unit))
        b.connect(src.y, port)
    gear = b.add(Constant("gear_src", 0.0, unit="1"))
    b.connect(gear.y, gb.gear)
    with pytest.raises(StepError, match="input 'gear' = 0"):
        Simulator(b.build(), solver="rk4", dt=0.01).run(0.1)
