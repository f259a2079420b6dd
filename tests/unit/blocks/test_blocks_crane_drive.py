"""The seed's crane drive (Paper V eqs. 21-23): torque-speed limit, first-order speed loop."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.interpolate import CubicSpline, PchipInterpolator
from scipy.linalg import expm

from blocks.continuous import Integrator
from blocks.electric import CraneDrive, TorqueSpeedCurve
from blocks.math import Gain
from blocks.sources import Constant, Step
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

# a constant-torque region up to 50 rad/s, then constant power (T w = 5000 W) to 150 rad/s
W_CURVE = [0.0, 50.0, 75.0, 100.0, 150.0]
T_CURVE = [100.0, 100.0, 5000.0 / 75.0, 50.0, 5000.0 / 150.0]
J = 2.0  # kg m^2 on the motor shaft
K, TAU = 20.0, 0.005


def _drive(**kw):
    args = dict(gain_nms_per_rad=K, time_constant_s=TAU, curve_speed_rad_s=W_CURVE,
                curve_torque_nm=T_CURVE)
    args.update(kw)
    return CraneDrive("drive", **args)


@pytest.mark.parametrize("interp, ref", [
    ("linear", lambda w: np.interp(w, W_CURVE, T_CURVE)),
    ("pchip", PchipInterpolator(W_CURVE, T_CURVE)),
    ("spline", CubicSpline(W_CURVE, T_CURVE)),
])
def test_curve_interpolation(interp, ref):
    c = TorqueSpeedCurve(W_CURVE, T_CURVE, interp)
    for w in (0.0, 20.0, 60.0, 87.5, 149.0):
        assert c(w) == pytest.approx(float(ref(w)), rel=1e-12)
        assert c(-w) == c(w)  # symmetric in speed
    assert c(500.0) == pytest.approx(T_CURVE[-1])  # end value held


def test_torque_limited_by_the_curve_in_four_quadrants():
    h = BlockHarness(_drive())
    d = h.block
    for w in (0.0, 30.0, 60.0, 120.0, -80.0):
        lim = float(np.interp(abs(w), W_CURVE, T_CURVE))
        h.set_input("speed", w)
        for t_ref, expected in ((1e4, lim), (-1e4, -lim), (0.3 * lim, 0.3 * lim)):
            h.set_state("torque_ref", t_ref)
            assert h.output("torque") == pytest.approx(expected, rel=1e-12)
            assert h.output("torque_ref") == t_ref
        assert h.output("torque_limit") == pytest.approx(lim)
    h.set_inputs(speed_ref=10.0, speed=4.0)
    h.set_state("torque_ref", 30.0)
    assert h.derivatives()[0] == pytest.approx((K * 6.0 - 30.0) / TAU)
    assert d.limited_torque(250.0, 100.0) == 50.0


def test_force_output():
    h = BlockHarness(_drive(travel_per_rad_m=0.02, efficiency=0.9, damping_ns_per_rad=3.0,
                            motors=4))
    h.set_inputs(speed=60.0)
    h.set_state("torque_ref", 50.0)
    assert h.output("force") == pytest.approx(4 * (50.0 / 0.02 * 0.9 - 3.0 * 60.0))


def _loop(speed_ref, t_end, dt=1e-4):
    """Drive + rotor inertia J w' = T_m (Gain 1/J and an integrator)."""
    b = DiagramBuilder("loop")
    d = b.add(_drive())
    ref = b.add(Step("ref", 0.0, speed_ref, unit="rad/s"))
    g = b.add(Gain("inv_j", 1.0 / J, input_unit="N*m", unit="rad/s^2"))
    w = b.add(Integrator("w", input_unit="rad/s^2", unit="rad/s"))
    b.connect(ref.y, d.speed_ref)
    b.connect(d.torque, g.u)
    b.connect(g.y, w.u)
    b.connect(w.y, d.speed)
    rec = ["w.y", "drive.torque", "drive.torque_ref", "drive.torque_limit"]
    return Simulator(b.build(), solver="rk4", dt=dt, record=rec).run(t_end)


def test_speed_step_response_unsaturated():
    """Small step (K e = 100 N m at most, the curve's limit): J tau s^2 + J s + K."""
    res = _loop(5.0, 0.6)
    assert np.all(np.abs(res["drive.torque_ref"]) <= 100.0 + 1e-9)
    A = np.array([[0.0, 1.0 / J], [-K / TAU, -1.0 / TAU]])  # x = [w, T_ref]
    B = np.array([0.0, K / TAU]) * 5.0
    for t in (0.02, 0.1, 0.3, 0.6):
        x = np.linalg.solve(A, (expm(A * t) - np.eye(2)) @ B)
        assert res.at("w.y", t) == pytest.approx(x[0], rel=1e-7)
    # time constant: about J/K = 0.1 s (the dominant pole of J tau s^2 + J s + K)
    slow = (-J + math.sqrt(J * J - 4 * J * TAU * K)) / (2 * J * TAU)
    assert -1 / slow == pytest.approx(J / K, rel=0.06)
    w = res["w.y"]
    t63 = res.time[int(np.argmax(w >= 5.0 * (1 - math.exp(-1))))]
    assert abs(t63 - J / K) < 2 * TAU


def test_speed_step_is_torque_limited_along_the_curve():
    """Large step: K e = 2400 N m >> the curve; the motor accelerates at T_max(w)/J."""
    res = _loop(120.0, 5.0, dt=1e-3)
    T, lim, T_ref = res["drive.torque"], res["drive.torque_limit"], res["drive.torque_ref"]
    w, t = res["w.y"], res.time
    limited = T_ref > lim
    assert limited.sum() > 100
    assert np.array_equal(T[limited], lim[limited])
    assert np.all(np.abs(T) <= lim + 1e-12)
    # in the constant-torque region (w < 50 rad/s) the speed is a ramp 100/J = 50 rad/s^2
    # (after T_ref has risen past the limit: tau ln(K e / (K e - 100)) < 0.3 ms)
    k = int(np.argmax(w > 50.0)) - 1
    assert w[k] == pytest.approx(50.0 * t[k], abs=50.0 * 3e-4)
    # above it the speed follows w' = T_max(w) / J while limited
    curve = TorqueSpeedCurve(W_CURVE, T_CURVE)
    end = int(np.flatnonzero(limited)[-1])
    sol = solve_ivp(lambda _, y: [curve(y[0]) / J], (t[k], t[end]), [w[k]], rtol=1e-10,
                    atol=1e-10)
    assert w[end] == pytest.approx(sol.y[0, -1], rel=1e-5)
    assert w[end] > 100.0
    assert w[-1] == pytest.approx(120.0, rel=1e-4)  # no load: the P loop reaches the reference


def test_invalid_parameters():
    with pytest.raises(ParameterError, match="strictly increasing"):
        _drive(curve_speed_rad_s=[0.0, 10.0, 10.0, 20.0, 30.0])
    with pytest.raises(ParameterError, match="magnitudes"):
        _drive(curve_torque_nm=[1.0, -1.0, 1.0, 1.0, 1.0])
    with pytest.raises(ParameterError, match="interpolation must be one of"):
        _drive(interpolation="akima")
    with pytest.raises(ParameterError, match=r"efficiency = 1.2: expected .* in \(0, 1\]"):
        _drive(efficiency=1.2)
    with pytest.raises(ParameterError, match="motors = 0: expected an integer >= 1"):
        _drive(motors=0)


def test_constant_curve_end_to_end():
    b = DiagramBuilder("d")
    d = b.add(_drive(curve_speed_rad_s=[0.0, 1.0], curve_torque_nm=[7.0, 7.0]))
    b.add(Constant("ref", 1.0, unit="rad/s"))
    b.add(Constant("w", 0.0, unit="rad/s"))
    b.connect("ref.y", d.speed_ref)
    b.connect("w.y", d.speed)
    res = Simulator(b.build(), solver="rk4", dt=1e-3, record=["drive.torque"]).run(0.1)
    assert res["drive.torque"][-1] == 7.0  # K e = 20 N m, limited to 7
