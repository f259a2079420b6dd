"""Tests of blocks.pid: continuous PID (linear model, anti-windup) and DiscretePID."""

from __future__ import annotations

import math

import control
import numpy as np
import pytest
from scipy.signal import lfilter

from blocks import PID, DiscretePID, FirstOrderLag, Step, Sum, TransferFunction
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness


# ------------------------------------------------------------------ continuous
def test_pid_output_and_derivatives_by_hand():
    h = BlockHarness(PID("c", kp=2.0, ki=3.0, kd=0.5, derivative_filter_rad_s=10.0))
    h.set_state("i", 0.4)
    h.set_state("z", 0.1)
    h.set_input("e", 1.5)
    # u = kp e + I + kd N (e - z) = 3 + 0.4 + 0.5 * 10 * 1.4
    assert h.output("u") == pytest.approx(10.4, abs=1e-14)
    np.testing.assert_allclose(h.derivatives(), [3.0 * 1.5, 10.0 * 1.4], atol=1e-14)


@pytest.mark.parametrize("filt", [None, 20.0])
def test_pid_linear_model_matches_calc_and_derivatives(filt):
    kd = 0.0 if filt is None else 0.3
    pid = PID("c", kp=1.7, ki=4.0, kd=kd, derivative_filter_rad_s=filt)
    h = BlockHarness(pid)
    m = pid.linear_model(h.ctx)
    assert m is not None
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = rng.normal(size=m.A.shape[0])
        e = float(rng.normal())
        h.set_state("i", x[0])
        if filt is not None:
            h.set_state("z", x[1])
        h.set_input("e", e)
        assert h.output("u") == pytest.approx((m.C @ x + m.D[:, 0] * e)[0], abs=1e-13)
        np.testing.assert_allclose(h.derivatives(), m.A @ x + m.B[:, 0] * e, atol=1e-13)


def test_pid_with_limits_is_nonlinear_and_saturates():
    pid = PID("c", kp=2.0, ki=1.0, lower=-1.0, upper=1.0, tracking_gain=3.0)
    h = BlockHarness(pid)
    assert pid.linear_model(h.ctx) is None
    h.set_state("i", 0.5)
    h.set_input("e", 1.0)  # v = 2 + 0.5 = 2.5 -> u = 1
    assert h.output("u") == 1.0
    # back-calculation: dI/dt = ki e + Kt (u - v) = 1 + 3 (1 - 2.5)
    assert h.derivatives()[0] == pytest.approx(1.0 - 4.5, abs=1e-14)
    h.set_input("e", -1.0)  # v = -2 + 0.5 = -1.5 -> u = -1
    assert h.output("u") == -1.0


def test_pid_clamping_stops_integration_only_when_pushing_into_the_limit():
    h = BlockHarness(PID("c", kp=2.0, ki=1.0, upper=1.0, anti_windup="clamping"))
    h.set_state("i", 0.5)
    h.set_input("e", 1.0)  # saturated high and ki e > 0: clamped
    assert h.derivatives()[0] == 0.0
    h.set_state("i", 5.0)
    h.set_input("e", -1.0)  # saturated high (v = 3) but ki e < 0: integrates back
    assert h.derivatives()[0] == -1.0
    h2 = BlockHarness(PID("c", kp=2.0, ki=1.0, upper=1.0, anti_windup=None))
    h2.set_state("i", 0.5)
    h2.set_input("e", 1.0)
    assert h2.derivatives()[0] == 1.0  # no anti-windup: winds up


def test_pid_default_tracking_gain():
    h = BlockHarness(PID("a", kp=2.0, ki=6.0, upper=1.0))
    assert h.ctx.param(h.block.kt) == pytest.approx(3.0)  # 1/Ti = ki/kp
    pid = PID("b", kp=2.0, ki=6.0, kd=1.5, derivative_filter_rad_s=10.0, upper=1.0)
    assert BlockHarness(pid).ctx.param(pid.kt) == pytest.approx(2.0)  # sqrt(ki/kd)


def closed_loop(pid, t_end=3.0, fuse=True, r=1.0):
    b = DiagramBuilder("loop")
    ref = b.add(Step("r", 0.0, r))
    e = b.add(Sum("e", "+-"))
    b.add(pid)
    plant = b.add(TransferFunction("p", [4.0], [1.0, 1.2, 4.0]))
    b.connect(ref.y, e.ins[0])
    b.connect(plant.y, e.ins[1])
    b.connect(e.y, pid.e)
    b.connect(pid.u, plant.u)
    sim = Simulator(b.build(), solver="rk4", dt=1e-3, fuse_linear=fuse)
    return sim.run(t_end), sim


def test_pid_fused_equals_unfused():
    def make():
        return PID("c", kp=1.2, ki=2.5, kd=0.2, derivative_filter_rad_s=40.0)
    r1, s1 = closed_loop(make())
    r2, s2 = closed_loop(make(), fuse=False)
    assert any(isinstance(b, PID) for b in s1.ev.fused_blocks)  # linear_model path taken
    assert not s2.ev.fused_blocks  # generic calc/derivatives path
    assert np.ptp(r1["p.y"]) > 0.5
    np.testing.assert_allclose(r1["p.y"], r2["p.y"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(r1["c.u"], r2["c.u"], rtol=0, atol=1e-10)


def test_pid_with_limits_is_not_fused():
    _, sim = closed_loop(PID("c", kp=1.2, ki=2.5, upper=5.0), t_end=0.1)
    assert not any(isinstance(b, PID) for b in sim.ev.fused_blocks)


def lag_loop(**kw):
    b = DiagramBuilder("aw")
    ref = b.add(Step("r", 0.0, 1.0))
    e = b.add(Sum("e", "+-"))
    c = b.add(PID("c", kp=2.0, ki=5.0, lower=-1.2, upper=1.2, **kw))
    p = b.add(FirstOrderLag("p", 1.0, 1.0))
    b.connect(ref.y, e.ins[0])
    b.connect(p.y, e.ins[1])
    b.connect(e.y, c.e)
    b.connect(c.u, p.u)
    sim = Simulator(b.build(), solver="rk4", dt=1e-3, record=["p.y", "c.u"])
    return sim.run(10.0), sim, c


@pytest.mark.parametrize("mode", ["back_calculation", "clamping"])
def test_anti_windup_prevents_integrator_windup(mode):
    res_none, sim_none, c_none = lag_loop(anti_windup=None)
    res_aw, sim_aw, c_aw = lag_loop(anti_windup=mode)
    assert np.max(res_aw["c.u"]) == pytest.approx(1.2) and np.min(res_aw["c.u"]) >= -1.2
    over_none = np.max(res_none["p.y"]) - 1.0
    over_aw = np.max(res_aw["p.y"]) - 1.0
    assert over_none > 0.1  # the scenario does wind up without anti-windup
    assert over_aw < 0.3 * over_none
    assert res_aw["p.y"][-1] == pytest.approx(1.0, abs=1e-3)  # still no steady-state error


def test_pid_gains_are_tunable_parameters():
    h = BlockHarness(PID("c", kp=1.0, ki=0.0))
    h.set_input("e", 2.0)
    assert h.output("u") == 2.0
    h.ctx.set_param("c.kp", 3.0)
    assert h.output("u") == 6.0
    with pytest.raises(ParameterError, match="'c'"):
        h.ctx.set_param("c.kd", 1.0)  # no derivative filter: kd must stay 0
    hi = BlockHarness(PID("i_only", kp=0.0, ki=2.0))
    assert hi.block.u.depends_on == frozenset()  # pure I: no feedthrough
    with pytest.raises(ParameterError, match="feedthrough"):
        hi.ctx.set_param("i_only.kp", 1.0)
    ha = BlockHarness(PID("aw", kp=1.0, ki=1.0, upper=1.0))
    ha.ctx.set_param("aw.tracking_gain", 2.5)
    assert ha.ctx.param(ha.block.kt) == 2.5
    with pytest.raises(ParameterError, match=">= 0"):
        ha.ctx.set_param("aw.tracking_gain", -1.0)


@pytest.mark.parametrize("make", [
    lambda: PID("bad", 1.0, 1.0, kd=0.1),  # pure derivative
    lambda: PID("bad", 1.0, 1.0, kd=0.1, derivative_filter_rad_s=-5.0),
    lambda: PID("bad", 1.0, lower=1.0, upper=-1.0),
    lambda: PID("bad", 1.0, anti_windup="magic"),
    lambda: PID("bad", "one"),
    lambda: PID("bad", math.nan),
    lambda: PID("bad", 0.0, 1.0, upper=1.0),  # pure I with back-calculation: no default Kt
    lambda: PID("bad", 1.0, 1.0, upper=1.0, tracking_gain=-1.0),
    lambda: DiscretePID("bad", 0.0, 1.0),
    lambda: DiscretePID("bad", 0.1, 1.0, method="zoh"),
    lambda: DiscretePID("bad", 0.1, 1.0, kd=0.1, derivative_filter_rad_s=30.0),  # N T >= 2
])
def test_bad_parameters_raise_parameter_error_naming_the_block(make):
    with pytest.raises(ParameterError, match="'bad'"):
        make()


# -------------------------------------------------------------------- discrete
E_SEQ = [1.0, 0.5, -0.2, 0.8]
GAINS = dict(kp=2.0, ki=3.0, kd=0.05)  # with T = 0.1


def run_discrete(**kw) -> list[float]:
    h = BlockHarness(DiscretePID("c", 0.1, **{**GAINS, **kw}))
    out = []
    for e in E_SEQ:
        h.set_input("e", e)
        out.append(h.output("u"))
        h.update()
    return out


# Hand computations (T = 0.1, kp = 2, ki = 3, kd = 0.05), e = 1, 0.5, -0.2, 0.8:
# forward, N = 5 (N T = 0.5): D_k = kd N (e_k - z_k), z_{k+1} = z_k + 0.5 (e_k - z_k),
#   I_{k+1} = I_k + 0.3 e_k:   z = 0, 0.5, 0.5, 0.15;  I = 0, 0.3, 0.45, 0.39
#   u = 2 + 0.25 | 1 + 0.3 + 0 | -0.4 + 0.45 - 0.175 | 1.6 + 0.39 + 0.1625
# tustin, N = 5: a = 1.5/2.5 = 0.6, b = 2 kd N / 2.5 = 0.2; I_k = I_{k-1} + 0.15 (e_k + e_{k-1})
#   I = 0.15, 0.375, 0.42, 0.51;  D = 0.2, 0.02, -0.128, 0.1232
# backward difference (no filter): D_k = kd (e_k - e_{k-1}) / T = 0.5 (e_k - e_{k-1})
@pytest.mark.parametrize(("kw", "expected"), [
    (dict(derivative_filter_rad_s=5.0), [2.25, 1.3, -0.125, 2.1525]),
    (dict(derivative_filter_rad_s=5.0, method="tustin"), [2.35, 1.395, -0.108, 2.2332]),
    (dict(), [2.5, 1.05, -0.3, 2.49]),
    # limits [-1, 2], Kt = 4: I_1 = 0.1 (3 + 4 (2 - 2.25)) = 0.2 -> v_1 = 1 + 0.2 = 1.2
    (dict(derivative_filter_rad_s=5.0, lower=-1.0, upper=2.0, tracking_gain=4.0),
     [2.0, 1.2, -0.225, min(1.6 + 0.29 + 0.1625, 2.0)]),  # I_3 = 0.35 - 0.06
    # clamping: I_1 = 0 (saturated and ki e > 0), then integrates: I_2 = 0.15
    (dict(derivative_filter_rad_s=5.0, lower=-1.0, upper=2.0, anti_windup="clamping"),
     [2.0, 1.0, -0.425, 1.6 + 0.09 + 0.1625]),
    # tustin + back-calculation: stored I_0 = 0.15 + 0.1*4*(2 - 2.35) = 0.01
    (dict(derivative_filter_rad_s=5.0, method="tustin", lower=-1.0, upper=2.0,
          tracking_gain=4.0), [2.0, 1.0 + 0.235 + 0.02, -0.4 + 0.28 - 0.128,
                               min(1.6 + 0.37 + 0.1232, 2.0)]),
])
def test_discrete_pid_hand_computed_recurrence(kw, expected):
    np.testing.assert_allclose(run_discrete(**kw), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("method", "c2d_method"), [("tustin", "tustin"), ("forward", "euler")])
def test_discrete_pid_equals_c2d_of_the_continuous_pid(method, c2d_method):
    kp, ki, kd, N, T = 1.3, 4.0, 0.08, 12.0, 0.02
    s = control.tf("s")
    cz = control.c2d(kp + ki / s + kd * N * s / (s + N), T, method=c2d_method)
    num, den = np.asarray(cz.num[0][0], float), np.asarray(cz.den[0][0], float)
    num = np.concatenate([np.zeros(den.size - num.size), num])
    es = np.sin(np.arange(40) * 0.3) + 0.5
    h = BlockHarness(DiscretePID("c", T, kp, ki, kd, derivative_filter_rad_s=N, method=method))
    out = []
    for e in es:
        h.set_input("e", e)
        out.append(h.output("u"))
        h.update()
    np.testing.assert_allclose(out, lfilter(num, den, es), rtol=0, atol=1e-10)


def test_discrete_pid_feedthrough_and_held_output_in_simulation():
    assert DiscretePID("a", 0.1, 0.0, 1.0).u.depends_on == frozenset()  # forward pure I
    assert DiscretePID("b", 0.1, 0.0, 1.0, method="tustin").u.depends_on == {"e"}
    b = DiagramBuilder("d")
    ref = b.add(Step("r", 0.0, 1.0))
    c = b.add(DiscretePID("c", 0.01, kp=0.5, ki=2.0))
    b.connect(ref.y, c.e)
    res = Simulator(b.build(), dt=0.001).run(0.05)
    # u_k = 0.5 + I_k, I_k = 0.02 k, held for 10 ms
    k = np.floor(res.time / 0.01 + 1e-9)
    np.testing.assert_allclose(res["c.u"], 0.5 + 0.02 * k, atol=1e-12)
