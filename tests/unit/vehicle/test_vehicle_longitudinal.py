"""Longitudinal vehicle: coast-down against the closed form, grade equilibrium, standstill.

Coast-down, :math:`m_{eq}\\dot v = -\\tfrac12\\rho C_d A v^2 - f_r m g` (no drive, no
brake), with :math:`c = f_r m g/m_{eq}`, :math:`k = \\rho C_d A/(2 m_{eq})`:

    v(t) = sqrt(c/k) tan(atan(v0 sqrt(k/c)) - sqrt(c k) t),
    t_stop = atan(v0 sqrt(k/c)) / sqrt(c k),   x_stop = ln(1 + k v0^2 / c) / (2 k)

(with the wheels' inertia the textbook's m is the equivalent mass in the inertial term
only).  The standstill method (module docstring) replaces the last v_c = tau (R + F_d)/m_eq
of speed (5.7 mm/s here) by an exponential decay: the stop adds exactly v_c tau / 2 of
distance, and the car then stays at rest.
"""

import math

import numpy as np
import pytest

from blocks.sources import Constant
from blocks.vehicle import PASSENGER_CAR, BodyData, Brake, BrakeData, LongitudinalVehicle
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

BODY = PASSENGER_CAR.body
V0 = 30.0


def closed_form(body: BodyData):
    me = body.equivalent_mass_kg
    c = body.rolling_resistance * body.mass_kg * body.gravity_m_s2 / me
    k = body.drag_constant / me
    return c, k


def vehicle_diagram(drive=0.0, brake=0.0, body=None, **kw):
    b = DiagramBuilder("road")
    veh = b.add(LongitudinalVehicle("veh", body, **kw))
    d = b.add(Constant("drive", drive, unit="N*m"))
    br = b.add(Constant("brake", brake, unit="N*m"))
    b.connect(d.y, veh.drive_torque)
    b.connect(br.y, veh.brake_torque)
    return b.build()


@pytest.fixture(scope="module", params=["ab3", "rk45"])
def coast_down(request):
    """Coast-down from 30 m/s past the stop: AB3 at the seed's 8 ms, and RK45."""
    kw = dict(dt=0.008) if request.param == "ab3" else dict(dt=0.1, rtol=1e-10, atol=1e-12)
    res = Simulator(vehicle_diagram(v0_m_s=V0), solver=request.param, **kw).run(195.0)
    return request.param, res


def test_coast_down_follows_the_closed_form(coast_down):
    solver, res = coast_down
    c, k = closed_form(BODY)
    t, v = res.time, res["veh.v"]
    phase = math.atan(V0 * math.sqrt(k / c)) - math.sqrt(c * k) * t
    exact = np.sqrt(c / k) * np.tan(np.maximum(phase, 0.0))
    moving = exact > 0.01  # above the standstill band (v_c = 5.7 mm/s)
    err = np.max(np.abs(v[moving] - exact[moving]))
    # measured: AB3 8 ms 1.5e-11 m/s, RK45 (rtol 1e-10) 2.1e-14 m/s
    assert err < 1e-9, (solver, err)


def test_coast_down_time_and_distance_to_stop(coast_down):
    solver, res = coast_down
    c, k = closed_form(BODY)
    t, v, x = res.time, res["veh.v"], res["veh.x"]
    t_stop = math.atan(V0 * math.sqrt(k / c)) / math.sqrt(c * k)
    x_stop = math.log(1.0 + k * V0 ** 2 / c) / (2.0 * k)
    assert t_stop == pytest.approx(176.0394, abs=1e-4)  # 2.9 minutes from 108 km/h
    assert x_stop == pytest.approx(2144.5054, abs=1e-4)
    # the time the speed falls through 2 cm/s, interpolated on the output grid (both
    # neighbours stay above the 5.7 mm/s band even on RK45's 0.1 s grid)
    i = int(np.flatnonzero(v < 0.02)[0])
    t_cross = t[i - 1] + (v[i - 1] - 0.02) / (v[i - 1] - v[i]) * (t[i] - t[i - 1])
    t_exact = (math.atan(V0 * math.sqrt(k / c)) - math.atan(0.02 * math.sqrt(k / c))) \
        / math.sqrt(c * k)
    assert t_stop - t_exact == pytest.approx(0.02 / c, rel=1e-4)  # linear near the stop
    # measured difference: AB3 -7.0e-11 s, RK45 1.2e-8 s (linear interpolation on 0.1 s)
    print(f"{solver}: t(v = 2 cm/s) - exact = {t_cross - t_exact:.3e} s, "
          f"x_end - x_stop = {x[-1] - x_stop:.6e} m")
    assert abs(t_cross - t_exact) < 1e-6, (solver, t_cross - t_exact)
    # distance: the closed form plus the exponential tail's extra v_c tau / 2
    veh = LongitudinalVehicle("v")
    r = BODY.rolling_resistance * BODY.mass_kg * BODY.gravity_m_s2
    v_c = veh.tau * r / veh.m_eq  # drag at 6 mm/s is 1.3e-5 N: negligible
    assert v_c == pytest.approx(5.742e-3, rel=1e-3)
    extra = x[-1] - x_stop
    # measured extra: 1.43762e-4 m (AB3), 1.43565e-4 m (RK45); v_c tau / 2 = 1.4356e-4 m
    assert extra == pytest.approx(v_c * veh.tau / 2, abs=5e-7), (solver, extra)


def test_coast_down_stops_and_stays_stopped_without_chattering(coast_down):
    solver, res = coast_down
    t, v, x = res.time, res["veh.v"], res["veh.x"]
    after = t > 180.0  # 4 s after the stop
    assert np.all(v >= 0.0)  # never rolls back: no sign flips
    assert np.max(v[after]) < 1e-12
    assert np.ptp(x[after]) < 1e-12  # no creeping: 15 s without moving


def test_the_brief_formula_without_wheel_inertia():
    """With J_w = 0 the equivalent mass is m: the textbook constants c = g f_r, k = rho Cd A/2m."""
    body = BodyData(wheel_inertia_kgm2=0.0)
    c, k = closed_form(body)
    assert c == pytest.approx(body.gravity_m_s2 * body.rolling_resistance, rel=1e-15)
    assert k == pytest.approx(body.air_density_kg_m3 * body.drag_coefficient
                              * body.frontal_area_m2 / (2 * body.mass_kg), rel=1e-15)
    res = Simulator(vehicle_diagram(body=body, v0_m_s=20.0), solver="ab3",
                    dt=0.008).run(60.0)
    t, v = res.time, res["veh.v"]
    exact = np.sqrt(c / k) * np.tan(math.atan(20.0 * math.sqrt(k / c)) - math.sqrt(c * k) * t)
    assert np.max(np.abs(v - exact)) < 1e-9  # measured 5.5e-12 m/s


def test_grade_equilibrium_holds_the_speed_and_a_torque_error_shows():
    """On a 5 % grade the torque r (m g sin + f_r m g cos + k_d v0^2) holds v0 exactly."""
    theta, v0 = math.atan(0.05), 25.0
    p = BODY
    mg = p.mass_kg * p.gravity_m_s2
    t_eq = p.wheel_radius_m * (mg * math.sin(theta) + p.rolling_resistance * mg
                               * math.cos(theta) + p.drag_constant * v0 ** 2)
    assert t_eq == pytest.approx(359.194, abs=1e-3)  # N m at the wheels
    res = Simulator(vehicle_diagram(drive=t_eq, grade_rad=theta, v0_m_s=v0), solver="ab3",
                    dt=0.008).run(20.0)
    assert np.max(np.abs(res["veh.v"] - v0)) < 1e-10  # measured 0.0
    assert res["veh.x"][-1] == pytest.approx(v0 * 20.0, rel=1e-12)
    assert np.max(np.abs(res["veh.a"])) < 1e-12
    # 1 % less torque: a = -0.01 t_eq / (r m_eq) at the start
    h = BlockHarness(LongitudinalVehicle("veh", grade_rad=theta, v0_m_s=v0))
    h.set_inputs(drive_torque=0.99 * t_eq, brake_torque=0.0)
    a = h.output("a")
    assert a == pytest.approx(-0.01 * t_eq / p.wheel_radius_m / p.equivalent_mass_kg,
                              rel=1e-12)


def test_grade_as_input_and_as_parameter_agree():
    h1 = BlockHarness(LongitudinalVehicle("a", grade_rad=0.08, v0_m_s=10.0))
    h2 = BlockHarness(LongitudinalVehicle("b", grade_input=True, v0_m_s=10.0))
    for h in (h1, h2):
        h.set_inputs(drive_torque=300.0, brake_torque=50.0)
    h2.set_input("grade", 0.08)
    assert h1.output("a") == h2.output("a")
    np.testing.assert_array_equal(h1.derivatives(), h2.derivatives())
    assert "grade" not in h1.block.inputs and "grade" in h1.block.parameters


def test_standstill_on_a_grade_with_brakes_holds_exactly_and_without_rolls_back():
    theta = 0.10  # rad, 10 % grade
    p = BODY
    mg = p.mass_kg * p.gravity_m_s2
    # brakes just able to hold: R = f_r m g cos + T_b / r > m g sin
    t_hold = 1.05 * p.wheel_radius_m * mg * math.sin(theta)
    res = Simulator(vehicle_diagram(brake=t_hold, grade_rad=theta), solver="ab3",
                    dt=0.008).run(30.0)
    assert np.max(np.abs(res["veh.v"])) == 0.0  # exactly at rest
    assert np.max(np.abs(res["veh.x"])) == 0.0
    assert np.max(np.abs(res["veh.a"])) == 0.0
    # the friction force is the holding force, not the Coulomb maximum
    assert res["veh.friction_force"][-1] == pytest.approx(-mg * math.sin(theta), rel=1e-12)
    # without brakes it rolls back with a = -(m g sin - f_r m g cos) / m_eq
    res = Simulator(vehicle_diagram(grade_rad=theta), solver="ab3", dt=0.008).run(5.0)
    a_back = -(mg * math.sin(theta) - p.rolling_resistance * mg * math.cos(theta)) \
        / p.equivalent_mass_kg
    t, v, a = res.time, res["veh.v"], res["veh.a"]
    late = t > 1.0  # beyond the standstill band the Coulomb force is reached
    drag = p.drag_constant * v[late] * np.abs(v[late]) / p.equivalent_mass_kg
    np.testing.assert_allclose(a[late], a_back - drag, rtol=1e-12, atol=1e-12)
    assert v[-1] < -4.0


def test_breakaway_needs_more_than_the_rolling_resistance():
    p = BODY
    r_roll = p.rolling_resistance * p.mass_kg * p.gravity_m_s2 * p.wheel_radius_m  # 54.7 N m
    h = BlockHarness(LongitudinalVehicle("veh"))
    h.set_inputs(drive_torque=0.99 * r_roll, brake_torque=0.0)
    assert h.derivatives()[1] == 0.0
    h.set_inputs(drive_torque=1.01 * r_roll)
    assert h.derivatives()[1] == pytest.approx(0.01 * r_roll / p.wheel_radius_m
                                               / p.equivalent_mass_kg, rel=1e-12)
    h.set_inputs(drive_torque=-1.01 * r_roll)  # pushing backwards breaks away backwards
    assert h.derivatives()[1] < 0
    h.set_inputs(drive_torque=1e4, brake_torque=-500.0)  # a negative brake torque is 0
    a_neg = h.derivatives()[1]
    h.set_inputs(brake_torque=0.0)
    assert a_neg == h.derivatives()[1]


def test_hard_stop_does_not_chatter_and_the_distance_matches():
    """0.7 g braking from 20 m/s: stops, stays; distance within v_c tau / 2 of the Coulomb
    model's, which with constant deceleration (drag neglected: 1.5 %) is v0^2 / 2a."""
    p = BODY
    t_b = 0.7 * p.mass_kg * p.gravity_m_s2 * p.wheel_radius_m
    res = Simulator(vehicle_diagram(brake=t_b, v0_m_s=20.0), solver="ab3", dt=0.008).run(6.0)
    v, x = res["veh.v"], res["veh.x"]
    assert np.all(v >= 0.0) and v[-1] < 1e-12
    stop = int(np.flatnonzero(v < 1e-9)[0])
    assert np.ptp(x[stop:]) < 1e-9
    # reference: solve_ivp of the Coulomb model m_eq v' = -k v^2 - R, to v = 0
    from scipy.integrate import solve_ivp
    r = p.rolling_resistance * p.mass_kg * p.gravity_m_s2 + t_b / p.wheel_radius_m

    def rhs(t, y):
        return [y[1], -(p.drag_constant * y[1] ** 2 + r) / p.equivalent_mass_kg]

    def stopped(t, y):
        return y[1]
    stopped.terminal = True
    ref = solve_ivp(rhs, (0, 10), [0.0, 20.0], events=stopped, rtol=1e-12, atol=1e-12)
    veh = LongitudinalVehicle("v")
    v_c = veh.tau * r / veh.m_eq
    assert v_c == pytest.approx(0.3407, abs=1e-4)  # the band at 0.7 g
    extra = x[-1] - ref.y[0, -1]
    # measured: 8.5192e-3 m vs v_c tau / 2 = 8.5182e-3 m (AB3, 8 ms)
    print(f"hard stop: extra distance {extra:.6e} m, v_c tau / 2 = {v_c * veh.tau / 2:.6e} m")
    assert extra == pytest.approx(v_c * veh.tau / 2, rel=2e-3), extra


def test_ports_units_and_feedthrough():
    veh = LongitudinalVehicle("veh")
    assert list(veh.inputs) == ["drive_torque", "brake_torque"]
    units = {n: p.unit_label() for n, p in veh.outputs.items()}
    assert units == {"x": "m", "v": "m/s", "wheel_speed": "rad/s", "drag_force": "N",
                     "a": "m/s^2", "friction_force": "N"}
    for n in ("x", "v", "wheel_speed", "drag_force"):
        assert veh.output(n).depends_on == frozenset()
    assert veh.output("a").depends_on is None  # reads every input
    h = BlockHarness(LongitudinalVehicle("veh", v0_m_s=12.4))
    assert h.output("wheel_speed") == pytest.approx(12.4 / BODY.wheel_radius_m, rel=1e-15)
    assert h.output("drag_force") == pytest.approx(BODY.drag_constant * 12.4 ** 2, rel=1e-15)


def test_parameter_errors_name_the_block():
    with pytest.raises(ParameterError, match="LongitudinalVehicle 'veh'.*standstill"):
        LongitudinalVehicle("veh", standstill_time_constant_s=0.0)
    with pytest.raises(ParameterError, match="BodyData: mass_kg"):
        BodyData(mass_kg=-1.0)
    with pytest.raises(ParameterError, match="'veh.grade'"):
        LongitudinalVehicle("veh", grade_rad=2.0)
    with pytest.raises(ParameterError, match="must be a BodyData"):
        LongitudinalVehicle("veh", BrakeData())


# ------------------------------------------------------------------ brake
@pytest.mark.parametrize("mode,request_value,expected", [
    ("torque", 1234.0, 1234.0), ("torque", 9000.0, 6000.0), ("torque", -5.0, 0.0),
    ("pedal", 0.25, 1500.0), ("pedal", 1.3, 6000.0),
    ("pressure", 2.0e6, 1200.0)])
def test_brake_modes_without_lag(mode, request_value, expected):
    data = BrakeData(time_constant_s=0.0)
    h = BlockHarness(Brake("brake", data, mode=mode))
    port = {"torque": "torque_request", "pedal": "pedal", "pressure": "pressure"}[mode]
    assert list(h.block.inputs) == [port]
    h.set_input(port, request_value)
    assert h.output("torque") == pytest.approx(expected, rel=1e-15)
    assert h.block.output("torque").depends_on == {port}


def test_brake_lag_is_first_order():
    b = DiagramBuilder("b")
    brk = b.add(Brake("brake", mode="pedal"))  # the car's brake: tau = 0.1 s
    src = b.add(Constant("pedal", 0.5, unit="1"))
    b.connect(src.y, brk.request)
    res = Simulator(b.build(), solver="rk4", dt=0.001).run(0.5)
    t = res.time
    np.testing.assert_allclose(res["brake.torque"], 3000.0 * (1 - np.exp(-t / 0.1)),
                               rtol=1e-9, atol=1e-9)  # measured 9.3e-8 N m (RK4 at 1 ms)
    assert brk.output("torque").depends_on == frozenset()


def test_brake_mode_error_lists_the_modes():
    with pytest.raises(ParameterError, match="'torque', 'pedal', 'pressure'"):
        Brake("brake", mode="hydraulic")
