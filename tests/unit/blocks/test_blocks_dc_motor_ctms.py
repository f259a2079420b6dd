"""DC motor against the CTMS "DC Motor Speed" example (anchors-domain.md section 6.1).

J = 0.01 kg m^2, b = 0.1 N m s, K = 0.01, R = 1 Ohm, L = 0.5 H; published (python-control
reproduction): poles -9.9975 and -2.0025, DC gain 0.0999001 (rad/s)/V, 1 V open-loop step:
rise time (10-90 %) 1.131 s, 2 % settling time 2.070 s, no overshoot.

The two times are python-control's ``step_info`` on its default grid of 251 points
(0.0138 s apart, no interpolation): it gives 1.13146 s and 2.06974 s.  The continuous
response has a rise time of 1.13503 s and a settling time of 2.06518 s (closed form
below, crossings located to 1e-6 s), so the simulation is held to the closed form
tightly and to the published figures within one step of python-control's grid.
"""

import numpy as np
import pytest

from blocks.electric import DCMotor
from blocks.sources import Constant
from cosim import DiagramBuilder, Simulator

CTMS = dict(resistance_ohm=1.0, inductance_h=0.5, torque_constant_nm_per_a=0.01,
            inertia_kgm2=0.01, friction_nms_per_rad=0.1)


def test_poles_and_dc_gain():
    A, B, C, _ = DCMotor("m", **CTMS).matrices()
    poles = np.sort(np.linalg.eigvals(A).real)
    assert poles == pytest.approx([-9.9975, -2.0025], abs=5e-5)
    assert np.all(np.linalg.eigvals(A).imag == 0)
    dc_gain = (-C @ np.linalg.solve(A, B))[0, 0]  # speed per volt
    assert dc_gain == pytest.approx(0.0999001, rel=1e-6)


def _crossing(t, y, level):
    """First time y crosses level upwards, linearly interpolated."""
    k = int(np.argmax(y >= level))
    return t[k - 1] + (level - y[k - 1]) / (y[k] - y[k - 1]) * (t[k] - t[k - 1])


def test_step_response_rise_and_settling_times():
    b = DiagramBuilder("ctms")
    v = b.add(Constant("v", 1.0, unit="V"))
    tl = b.add(Constant("tl", 0.0, unit="N*m"))
    m = b.add(DCMotor("m", **CTMS))
    b.connect(v.y, m.voltage)
    b.connect(tl.y, m.load_torque)
    res = Simulator(b.build(), solver="rk4", dt=1e-3, record=["m.speed"]).run(10.0)
    t, w = res.time, res["m.speed"]
    final = 0.01 / (0.1 * 1.0 + 0.01 ** 2)  # K / (b R + K^2)
    assert w[-1] == pytest.approx(final, rel=1e-6)  # e^(-2 * 10): 2e-9 left
    assert np.max(w) <= final * (1 + 1e-9)  # no overshoot
    rise = _crossing(t, w, 0.9 * final) - _crossing(t, w, 0.1 * final)
    outside = np.flatnonzero(np.abs(w - final) > 0.02 * final)
    k = outside[-1]  # last sample outside the 2 % band, then interpolate the exit
    settle = t[k] + (0.98 * final - w[k]) / (w[k + 1] - w[k]) * (t[k + 1] - t[k])
    exact_rise, exact_settle = _exact_times()
    assert exact_rise == pytest.approx(1.13503, abs=2e-5)
    assert exact_settle == pytest.approx(2.06518, abs=2e-5)
    assert rise == pytest.approx(exact_rise, abs=1e-5)
    assert settle == pytest.approx(exact_settle, abs=1e-5)
    grid = 0.0138  # python-control's default time step for this plant
    assert rise == pytest.approx(1.131, abs=grid)
    assert settle == pytest.approx(2.070, abs=grid)


def _exact_times():
    """Rise and settling times of the closed-form step response (modal solution)."""
    A, B, _, _ = DCMotor("ref", **CTMS).matrices()
    b = B[:, 0]  # 1 V
    x_inf = -np.linalg.solve(A, b)
    lam, V = np.linalg.eig(A)
    c = np.linalg.solve(V, -x_inf)
    t = np.linspace(0.0, 4.0, 4_000_001)
    w = (V[1] * c) @ np.exp(np.outer(lam, t)) + x_inf[1]
    w, f = w.real, x_inf[1]
    rise = _crossing(t, w, 0.9 * f) - _crossing(t, w, 0.1 * f)
    k = np.flatnonzero(np.abs(w - f) > 0.02 * f)[-1]
    return rise, t[k]
