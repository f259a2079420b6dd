"""Gearbox: ratio, and the efficiency applied by the direction of the power flow."""

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.electric import Gearbox
from blocks.math import Gain
from blocks.sources import Step
from cosim import DiagramBuilder, FunctionBlock, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

ETA, I = 0.9, 5.0


def _h(**kw):
    return BlockHarness(Gearbox("g", ratio=kw.pop("ratio", I), efficiency=ETA, **kw))


def _balance(h, t_in, w_out):
    h.set_inputs(torque_in=t_in, speed_out=w_out)
    w_in = h.output("speed_in")
    p_in = t_in * w_in
    p_out = h.output("torque_out") * w_out
    return w_in, p_in, p_out, h.output("power_loss")


@pytest.mark.parametrize("ratio", [I, -I])
def test_motoring_output_power_is_eta_times_input(ratio):
    h = _h(ratio=ratio)
    sign = np.sign(ratio)  # a negative ratio reverses the output's direction
    for t_in, w_out in ((10.0, sign * 20.0), (-10.0, -sign * 20.0)):  # forward, reverse
        w_in, p_in, p_out, loss = _balance(h, t_in, w_out)
        assert w_in == pytest.approx(ratio * w_out)
        assert p_in > 0
        assert p_out == pytest.approx(ETA * p_in, rel=1e-12)
        assert loss == pytest.approx((1 - ETA) * p_in, rel=1e-12)
        assert h.output("torque_out") == pytest.approx(ratio * ETA * t_in)


@pytest.mark.parametrize("ratio", [I, -I])
def test_back_driven_output_power_is_input_over_eta(ratio):
    """The load drives the motor (lowering a crane load, braking): power flows out -> in,
    and the motor receives eta times what the load delivers."""
    h = _h(ratio=ratio)
    sign = np.sign(ratio)
    for t_in, w_out in ((-10.0, sign * 20.0), (10.0, -sign * 20.0)):
        _, p_in, p_out, loss = _balance(h, t_in, w_out)
        assert p_in < 0
        assert p_out == pytest.approx(p_in / ETA, rel=1e-12)
        assert -p_in == pytest.approx(ETA * -p_out, rel=1e-12)  # what reaches the motor
        assert loss == pytest.approx((1 / ETA - 1) * -p_in, rel=1e-12)
        assert loss > 0


def test_standstill_counts_as_motoring():
    h = _h()
    h.set_inputs(torque_in=10.0, speed_out=0.0)
    assert h.output("torque_out") == pytest.approx(I * ETA * 10.0)
    assert h.output("power_loss") == 0.0


def test_smoothed_factor_is_continuous_and_never_creates_energy():
    p_s = 50.0
    g = Gearbox("g", ratio=I, efficiency=ETA, smoothing_power_w=p_s)
    sharp = Gearbox("s", ratio=I, efficiency=ETA)
    p = np.linspace(-3 * p_s, 3 * p_s, 6001)
    f = np.array([g.factor(x) for x in p])
    assert np.max(np.abs(np.diff(f))) < 1e-3  # continuous (no eta^2 jump)
    assert np.all(p - f * p >= -1e-12)  # loss = P_in - f P_in >= 0
    assert g.factor(0.0) == 1.0
    for x in (-2 * p_s, -p_s, p_s, 2 * p_s):
        assert g.factor(x) == pytest.approx(sharp.factor(x), rel=1e-15)


def test_energy_balance_over_motoring_then_braking():
    """Torque source -> gearbox -> load inertia; +T for 1 s, then -T (back-driven while the
    load still turns forward).  Input work = kinetic energy + losses, integrated by the
    solver (states), in both phases."""
    J = 4.0
    b = DiagramBuilder("d")
    src = b.add(Step("src", 1.0, -2.0, initial=2.0, unit="N*m"))
    g = b.add(Gearbox("g", ratio=I, efficiency=ETA))
    acc = b.add(Gain("acc", 1.0 / J, input_unit="N*m", unit="rad/s^2"))
    w = b.add(Integrator("w", input_unit="rad/s^2", unit="rad/s"))
    b.add(FunctionBlock("p_in", lambda t, wi: t * wi, inputs=[("t", "N*m"), ("wi", "rad/s")],
                        outputs=[("p", "W")]))
    e_in = b.add(Integrator("e_in", input_unit="W", unit="J"))
    e_loss = b.add(Integrator("e_loss", input_unit="W", unit="J"))
    b.connect(src.y, g.torque_in)
    b.connect(g.torque_out, acc.u)
    b.connect(acc.y, w.u)
    b.connect(w.y, g.speed_out)
    b.connect(src.y, "p_in.t")
    b.connect(g.speed_in, "p_in.wi")
    b.connect("p_in.p", e_in.u)
    b.connect(g.power_loss, e_loss.u)
    res = Simulator(b.build(), solver="rk4", dt=1e-3,
                    record=["w.y", "e_in.y", "e_loss.y"]).run(1.5)
    t, wo, ein, eloss = res.time, res["w.y"], res["e_in.y"], res["e_loss.y"]
    assert np.all(wo[1:] > 0)  # still turning forward at the end: back-driven after 1 s
    # analytic: accel I*eta*2/J while motoring, -I*2/(eta J) while braking
    w1 = I * ETA * 2.0 / J * 1.0
    assert res.at("w.y", 1.0) == pytest.approx(w1, rel=1e-12)
    assert wo[-1] == pytest.approx(w1 - I * 2.0 / (ETA * J) * 0.5, rel=1e-12)
    ke = 0.5 * J * wo ** 2
    np.testing.assert_allclose(ein - eloss, ke, rtol=1e-10, atol=1e-12)
    k1 = int(np.argmin(np.abs(t - 1.0)))
    assert eloss[k1] == pytest.approx((1 - ETA) * ein[k1], rel=1e-10)
    # braking phase: the load gives up kinetic energy, the motor receives eta of it
    d_ke, d_in = ke[-1] - ke[k1], ein[-1] - ein[k1]
    assert d_in == pytest.approx(ETA * d_ke, rel=1e-10)
    assert d_in < 0


def test_invalid_parameters():
    with pytest.raises(ParameterError, match="ratio must be finite and non-zero"):
        Gearbox("g", ratio=0.0)
    with pytest.raises(ParameterError, match=r"efficiency = 0.0: expected .* in \(0, 1\]"):
        Gearbox("g", ratio=2.0, efficiency=0.0)
