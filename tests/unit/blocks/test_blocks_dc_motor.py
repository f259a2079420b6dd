"""DC motor: derivatives without the scheduler, steady state and step response."""

import numpy as np
import pytest
from scipy.linalg import expm

from blocks.electric import DCMotor
from blocks.sources import Constant
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

P = dict(resistance_ohm=0.5, inductance_h=1.5e-3, torque_constant_nm_per_a=0.05,
         inertia_kgm2=2.5e-4, friction_nms_per_rad=1e-4)


def test_derivatives_match_the_equations():
    h = BlockHarness(DCMotor("m", **P))
    h.set_inputs(voltage=12.0, load_torque=0.02)
    h.set_state("current_speed", [2.0, 100.0])
    di, dw = h.derivatives()
    assert di == pytest.approx((12.0 - 0.5 * 2.0 - 0.05 * 100.0) / 1.5e-3)
    assert dw == pytest.approx((0.05 * 2.0 - 1e-4 * 100.0 - 0.02) / 2.5e-4)
    assert h.output("torque") == pytest.approx(0.1)


def _run(fuse, t_end=0.3):
    b = DiagramBuilder("motor")
    v = b.add(Constant("v", 12.0, unit="V"))
    tl = b.add(Constant("tl", 0.0, unit="N*m"))
    m = b.add(DCMotor("m", **P))
    b.connect(v.y, m.voltage)
    b.connect(tl.y, m.load_torque)
    return Simulator(b.build(), solver="rk4", dt=1e-4, record=["m.speed", "m.current"],
                     fuse_linear=fuse).run(t_end)


@pytest.mark.parametrize("fuse", [True, False])
def test_step_response_matches_matrix_exponential(fuse):
    res = _run(fuse)
    m = DCMotor("ref", **P)
    A, B, C, _ = m.matrices()
    u = np.array([12.0, 0.0])
    for t in (0.005, 0.05, 0.3):
        x = np.linalg.solve(A, (expm(A * t) - np.eye(2)) @ B @ u)
        # RK4 at 0.1 ms on the 3 ms electrical time constant: ~1e-8 relative error
        assert res.at("m.speed", t) == pytest.approx(x[1], rel=1e-7)
        assert res.at("m.current", t) == pytest.approx(x[0], rel=1e-7, abs=1e-9)


def test_steady_state_speed_is_analytic():
    res = _run(True, t_end=1.0)
    R, k, b = 0.5, 0.05, 1e-4
    assert res["m.speed"][-1] == pytest.approx(k * 12.0 / (R * b + k * k), rel=1e-6)


def test_invalid_parameters():
    with pytest.raises(ParameterError, match="DCMotor 'm': inertia_kgm2 = 0.0: expected .* > 0"):
        DCMotor("m", **{**P, "inertia_kgm2": 0.0})
