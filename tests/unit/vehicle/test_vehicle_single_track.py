"""Single-track model: steady-state cornering against the understeer-gradient formula.

r / delta = u / (L + K_us u^2),  K_us = m/L (l_r/C_f - l_f/C_r)  [rad/(m/s^2)],
a_y = u r,  beta = l_r/R - m l_f u^2 / (L C_r R),  v_ch = sqrt(L/K_us) where the yaw gain
peaks at v_ch / (2 L).  Sign convention: ISO 8855 (y left, left steer and left yaw
positive); C > 0 with F_y = C alpha, alpha_f = delta - (v_y + l_f r)/u.
"""

import dataclasses
import math

import numpy as np
import pytest

from blocks.sources import Constant
from blocks.vehicle import (
    PASSENGER_CAR,
    BrushTyre,
    LateralData,
    LinearTyre,
    SingleTrack,
    SingleTrackWithTyres,
    steady_state_cornering,
)
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

P = PASSENGER_CAR.lateral


def block_steady_state(params, u, delta):
    """Steady (v_y, r) from the block's own derivatives (linear in them): no formula used."""
    h = BlockHarness(SingleTrack("st", params))
    h.set_inputs(steer=delta, vx=u)

    def f(x):
        h.set_state("vy_r_psi_x_y", [x[0], x[1], 0.0, 0.0, 0.0])
        return h.derivatives()[:2]
    f0 = f([0.0, 0.0])
    J = np.column_stack([f([1.0, 0.0]) - f0, f([0.0, 1.0]) - f0])
    return np.linalg.solve(J, -f0), J


def test_understeer_gradient_and_characteristic_speed_of_the_default_car():
    assert P.understeer_gradient == pytest.approx(3.7963e-3, rel=1e-4)  # rad/(m/s^2)
    assert math.degrees(P.understeer_gradient) * 9.81 == pytest.approx(2.134, abs=1e-3)  # deg/g
    assert P.characteristic_speed_m_s == pytest.approx(26.669, abs=1e-3)  # 96 km/h


@pytest.mark.parametrize("u", [5.0, 15.0, 26.669, 40.0, 60.0])
def test_block_steady_state_matches_the_formula(u):
    delta = 0.02
    (vy, r), _ = block_steady_state(P, u, delta)
    ss = steady_state_cornering(P, u, delta)
    assert r == pytest.approx(u / (P.wheelbase_m + P.understeer_gradient * u * u) * delta,
                              rel=1e-12)
    assert r == pytest.approx(ss["yaw_rate"], rel=1e-12)
    assert vy / u == pytest.approx(ss["beta"], rel=1e-11, abs=1e-15)
    # delta = L/R + K_us a_y (Gillespie's form)
    assert delta == pytest.approx(P.wheelbase_m * r / u + P.understeer_gradient * u * r,
                                  rel=1e-12)


def test_yaw_gain_peaks_at_the_characteristic_speed():
    speeds = np.linspace(10.0, 45.0, 701)  # 0.05 m/s apart
    gains = [block_steady_state(P, u, 1.0)[0][1] for u in speeds]
    k = int(np.argmax(gains))
    assert speeds[k] == pytest.approx(P.characteristic_speed_m_s, abs=0.05)
    assert gains[k] == pytest.approx(P.characteristic_speed_m_s / (2 * P.wheelbase_m), rel=1e-5)


def test_simulated_cornering_reaches_the_steady_state_with_left_positive_signs():
    b = DiagramBuilder("corner")
    st = b.add(SingleTrack("st"))
    d = b.add(Constant("steer", 0.01, unit="rad"))
    u = b.add(Constant("speed", 20.0, unit="m/s"))
    b.connect(d.y, st.steer)
    b.connect(u.y, st.vx)
    res = Simulator(b.build(), solver="rk45", dt=0.1, rtol=1e-10, atol=1e-12).run(10.0)
    ss = steady_state_cornering(P, 20.0, 0.01)
    # measured relative errors at 10 s: 1e-16 (yaw rate), 0 (ay); the beta output is
    # atan(v_y/u), the formula's v_y/u differs by beta^2/3 = 3.6e-7
    assert res["st.yaw_rate"][-1] == pytest.approx(ss["yaw_rate"], rel=1e-9)
    assert res["st.ay"][-1] == pytest.approx(ss["ay"], rel=1e-9)
    assert res["st.ay"][-1] == pytest.approx(0.94820, abs=1e-5)  # m/s^2, left
    assert res["st.beta"][-1] == pytest.approx(math.atan(ss["beta"]), rel=1e-9)
    assert ss["yaw_rate"] > 0 and ss["ay"] > 0  # left steer: left turn
    # the centre of mass drives on a circle of radius V / r, V = sqrt(u^2 + v_y^2) (pose
    # states; algebraic circle fit of the last 5 s; measured 8e-15 relative)
    xy = res["st.position"][-50:]
    A = np.column_stack([xy[:, 0], xy[:, 1], np.ones(len(xy))])
    d, e, f = np.linalg.lstsq(A, -(xy ** 2).sum(axis=1), rcond=None)[0]
    radius = math.sqrt(d * d / 4 + e * e / 4 - f)
    assert radius == pytest.approx(math.hypot(20.0, ss["vy"]) / ss["yaw_rate"], rel=1e-6)
    assert -e / 2 > 0  # centre to the left: counter-clockwise


def test_neutral_steer_and_oversteer():
    lf, lr = P.front_axle_m, P.rear_axle_m
    neutral = dataclasses.replace(P, rear_cornering_stiffness_n_per_rad=100e3 * lf / lr)
    assert neutral.understeer_gradient == pytest.approx(0.0, abs=1e-16)
    (_, r), _ = block_steady_state(neutral, 30.0, 0.01)
    assert r == pytest.approx(30.0 * 0.01 / neutral.wheelbase_m, rel=1e-12)  # kinematic
    over = dataclasses.replace(P, rear_cornering_stiffness_n_per_rad=50e3)
    k = over.understeer_gradient
    assert k < 0
    v_crit = math.sqrt(-over.wheelbase_m / k)
    assert v_crit == pytest.approx(28.46, abs=0.01)
    for u, stable in ((0.95 * v_crit, True), (1.05 * v_crit, False)):
        _, J = block_steady_state(over, u, 0.0)
        assert (np.max(np.linalg.eigvals(J).real) < 0) == stable, u


def test_linear_outputs_slip_angles_and_forces():
    h = BlockHarness(SingleTrack("st"))
    h.set_inputs(steer=0.03, vx=25.0)
    h.set_state("vy_r_psi_x_y", [0.2, 0.1, 0.0, 0.0, 0.0])
    af = 0.03 - (0.2 + 1.1 * 0.1) / 25.0
    ar = -(0.2 - 1.6 * 0.1) / 25.0
    assert h.output("alpha_front") == pytest.approx(af, rel=1e-14)
    assert h.output("alpha_rear") == pytest.approx(ar, rel=1e-14)
    assert h.output("fy_front_axle") == pytest.approx(100e3 * af, rel=1e-14)
    assert h.output("ay") == pytest.approx((100e3 * af + 120e3 * ar) / 1500.0, rel=1e-14)
    d = h.derivatives()
    assert d[0] == pytest.approx((100e3 * af + 120e3 * ar) / 1500.0 - 25.0 * 0.1, rel=1e-14)
    assert d[1] == pytest.approx((1.1 * 100e3 * af - 1.6 * 120e3 * ar) / 2400.0, rel=1e-14)
    st = h.block
    assert st.output("yaw_rate").depends_on == frozenset()
    assert st.output("alpha_front").depends_on == {"steer", "vx"}
    h.set_inputs(vx=0.2)  # below v_min the slip denominators use 1 m/s
    assert h.output("alpha_rear") == pytest.approx(-(0.2 - 1.6 * 0.1) / 1.0, rel=1e-14)


def tyre_model_diagram(front, rear, steer, relaxation=False):
    b = DiagramBuilder("corner")
    car = b.add(SingleTrackWithTyres("car", front, rear, relaxation=relaxation))
    d = b.add(Constant("steer", steer, unit="rad"))
    u = b.add(Constant("speed", 20.0, unit="m/s"))
    b.connect(d.y, car.input("steer"))
    b.connect(u.y, car.input("vx"))
    return b.build()


@pytest.mark.parametrize("relaxation", [False, True])
def test_tyre_block_model_with_linear_tyres_matches_the_formula(relaxation):
    """Two LinearTyres per axle of half the axle stiffness; small steer: the exact
    kinematics (atan, cos delta) differ from the linear model by O(delta^2)."""
    kw = dict(slip_stiffness_n=1e5, relaxation_lengths_m=(0.3, 0.5))
    front = LinearTyre(cornering_stiffness_n_per_rad=50e3, **kw)
    rear = LinearTyre(cornering_stiffness_n_per_rad=60e3, **kw)
    res = Simulator(tyre_model_diagram(front, rear, 0.01, relaxation), solver="rk45", dt=0.1,
                    rtol=1e-10, atol=1e-12).run(10.0)
    ss = steady_state_cornering(P, 20.0, 0.01)
    err = res["car/body.yaw_rate"][-1] / ss["yaw_rate"] - 1
    # measured: -3.8e-5 (both; O(delta^2) = 1e-4)
    assert abs(err) < 1e-4, err
    # ISO slip angle of the tyre is minus the bicycle model's
    assert res["car/tyre_front.alpha"][-1] == pytest.approx(
        -(0.01 - (ss["vy"] + 1.1 * ss["yaw_rate"]) / 20.0), rel=1e-3)


def tyre_steady_state(front, rear, u, delta):
    """Steady (v_y, r) of the tyre-block model solved directly from the tyre models'
    force functions and the exact wheel kinematics (independent of the diagram)."""
    from scipy.optimize import fsolve
    fzf, fzr = (f / 2 for f in P.static_axle_loads_n())
    lf, lr, m = P.front_axle_m, P.rear_axle_m, P.mass_kg

    def residual(x):
        vy, r = x
        w = vy + lf * r
        vxf = u * math.cos(delta) + w * math.sin(delta)
        vyf = -u * math.sin(delta) + w * math.cos(delta)
        fyf = front.forces(0.0, math.atan(vyf / vxf), 0.0, fzf, vxf)[1]
        fyr = rear.forces(0.0, math.atan((vy - lr * r) / u), 0.0, fzr, u)[1]
        fy_body = 2 * fyf * math.cos(delta)
        return [fy_body + 2 * fyr - m * u * r, lf * fy_body - lr * 2 * fyr]
    return fsolve(residual, [0.0, u * delta / P.wheelbase_m], xtol=1e-12)


def test_brush_tyres_steady_state_and_front_saturation():
    front = BrushTyre(cornering_stiffness_n_per_rad=50e3, slip_stiffness_n=1e5, mu=1.0)
    rear = BrushTyre(cornering_stiffness_n_per_rad=60e3, slip_stiffness_n=1e5, mu=1.0)
    linear = steady_state_cornering(P, 20.0, 1.0)["yaw_rate"]
    gains = {}
    for steer in (0.002, 0.08):
        res = Simulator(tyre_model_diagram(front, rear, steer), solver="rk45", dt=0.5,
                        rtol=1e-10, atol=1e-12).run(15.0)
        vy, r = tyre_steady_state(front, rear, 20.0, steer)
        # measured relative differences to the direct solution: below 4e-10
        assert res["car/body.yaw_rate"][-1] == pytest.approx(r, rel=1e-7), steer
        assert res["car/body.vy"][-1] == pytest.approx(vy, rel=1e-6), steer
        gains[steer] = r / steer
        ay = res["car/body.ay"][-1]
    # the brush softens at first order in the slip (F ~ C a (1 - theta |a|)): already
    # 0.23 % below the linear gain at 2 mrad; at 0.08 rad the front axle (normalised
    # stiffness C/F_z 11.5 vs 19.6 at the rear; slip angles 0.082 vs 0.047 rad) nears its
    # limit first and the yaw gain falls to 0.8745 of the linear one at a_y = 6.63 m/s^2
    # (measured): more understeer
    assert gains[0.002] / linear == pytest.approx(0.99767, abs=1e-5)
    assert gains[0.08] / linear == pytest.approx(0.8745, abs=1e-4)
    assert ay == pytest.approx(6.634, abs=1e-3)


def test_parameters_validated():
    with pytest.raises(ParameterError, match="LateralData: front_axle_m"):
        LateralData(front_axle_m=0.0)
    with pytest.raises(ParameterError, match="SingleTrack 'st': v_min_m_s"):
        SingleTrack("st", v_min_m_s=0.0)
