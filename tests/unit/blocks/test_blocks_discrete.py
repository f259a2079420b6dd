"""Tests of blocks.discrete: hold/delay semantics at hits, integrators, state space, c2d."""

from __future__ import annotations

import control
import numpy as np
import pytest
from scipy.linalg import expm
from scipy.signal import lfilter

from blocks import (
    Constant,
    DiscreteIntegrator,
    DiscretePID,
    DiscreteStateSpace,
    DiscreteTransferFunction,
    FirstOrderLag,
    Integrator,
    RateTransition,
    Sine,
    StateSpace,
    Sum,
    UnitDelay,
    ZeroOrderHold,
    c2d,
)
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness


def hit_index(res, t_hit: float) -> int:
    i = int(np.argmin(np.abs(res.time - t_hit)))
    assert abs(res.time[i] - t_hit) < 1e-12, f"no recorded sample at t = {t_hit}"
    return i


def run_multirate(t_end: float = 0.1):
    """Sine -> ZOH, UnitDelay, offset ZOH and rate transitions; RK4 at dt = 1 ms."""
    b = DiagramBuilder("multirate")
    s = b.add(Sine("s", amplitude=1.0, frequency_hz=7.0, phase_rad=0.3))
    zoh = b.add(ZeroOrderHold("zoh", 0.01))
    dl = b.add(UnitDelay("dl", 0.01, initial=5.0))
    zoff = b.add(ZeroOrderHold("zoff", 0.01, offset_s=0.003))
    fast = b.add(ZeroOrderHold("fast", 0.002))
    f2s = b.add(RateTransition("f2s", 0.01))
    s2f = b.add(RateTransition("s2f", 0.002))
    itg = b.add(Integrator("itg"))  # a continuous part, so the solver grid applies
    for blk in (zoh, dl, zoff, fast):
        b.connect(s.y, blk.u)
    b.connect(fast.y, f2s.u)
    b.connect(zoh.y, s2f.u)
    b.connect(zoh.y, itg.u)
    return Simulator(b.build(), solver="rk4", dt=0.001).run(t_end)


def test_zoh_equals_input_at_hits_and_is_held_between():
    res = run_multirate()
    s, z = res["s.y"], res["zoh.y"]
    assert len(res.time) == 101
    for k in range(11):
        i = hit_index(res, 0.01 * k)
        assert z[i] == s[i]  # sampled at the hit, same evaluation time: exact
        held = z[i:i + 10]
        assert np.all(held == z[i]), f"output changed between hits after t = {0.01 * k}"
    # and it really is a sampled copy, not the continuous signal
    assert np.max(np.abs(z - s)) > 0.1


def test_zoh_with_offset_samples_at_offset_hits():
    res = run_multirate()
    s, z = res["s.y"], res["zoff.y"]
    for k in range(10):
        i = hit_index(res, 0.003 + 0.01 * k)
        assert z[i] == s[i]
        j = hit_index(res, min(0.003 + 0.01 * (k + 1), 0.1))
        assert np.all(z[i:j] == z[i])


def test_unit_delay_outputs_previous_hit_input():
    res = run_multirate()
    s, d = res["s.y"], res["dl.y"]
    i0 = hit_index(res, 0.0)
    assert np.all(d[i0:i0 + 10] == 5.0)  # the initial value until the second hit
    for k in range(1, 11):
        i, iprev = hit_index(res, 0.01 * k), hit_index(res, 0.01 * (k - 1))
        assert d[i] == s[iprev]
        assert np.all(d[i:i + 10] == d[i])


def test_rate_transitions_fast_to_slow_and_slow_to_fast():
    res = run_multirate()
    s, f2s, s2f, z = res["s.y"], res["f2s.y"], res["s2f.y"], res["zoh.y"]
    for k in range(11):
        i = hit_index(res, 0.01 * k)
        assert f2s[i] == s[i]  # the fast signal at the slow hit
        assert np.all(f2s[i:i + 10] == f2s[i])
    np.testing.assert_array_equal(s2f, z)  # slow -> fast: the held value, unchanged


def test_unit_delay_has_no_feedthrough_and_breaks_a_loop():
    b = DiagramBuilder("counter")
    one = b.add(Constant("one", 1.0))
    add = b.add(Sum("add", "++"))
    dl = b.add(UnitDelay("dl", 0.1))
    b.connect(dl.y, add.ins[0])
    b.connect(one.y, add.ins[1])
    b.connect(add.y, dl.u)
    d = b.build(loops="error")  # would raise if the delay had feedthrough
    assert dl.y.depends_on == frozenset()
    res = Simulator(d, dt=0.1).run(0.5)
    np.testing.assert_allclose(res["dl.y"], [0, 1, 2, 3, 4, 5])
    np.testing.assert_allclose(res.time, np.arange(6) * 0.1, atol=1e-15)


def test_unit_delay_vector_harness():
    h = BlockHarness(UnitDelay("d", 0.1, initial=[1.0, 2.0]))
    np.testing.assert_array_equal(h.output("y"), [1.0, 2.0])
    u = np.array([3.0, 4.0])
    h.set_input("u", u)
    h.update()
    u[:] = -1.0  # the stored copy must not follow the caller's array
    np.testing.assert_array_equal(h.output("y"), [3.0, 4.0])


# ---------------------------------------------------------- DiscreteIntegrator
U_SEQ = [1.0, 2.0, -1.0, 3.0]


def integrate(method: str, **kw) -> list[float]:
    h = BlockHarness(DiscreteIntegrator("i", 0.1, gain=2.0, method=method, initial=0.5, **kw))
    out = []
    for u in U_SEQ:
        h.set_input("u", u)
        out.append(h.output("y"))
        h.update()
    return out


@pytest.mark.parametrize(("method", "expected"), [
    ("forward", [0.5, 0.7, 1.1, 0.9]),      # y_k = x_k, x_{k+1} = x_k + K T u_k
    ("backward", [0.7, 1.1, 0.9, 1.5]),     # y_k = y_{k-1} + K T u_k
    ("trapezoidal", [0.6, 0.9, 1.0, 1.2]),  # y_k = y_{k-1} + K T (u_k + u_{k-1}) / 2
])
def test_discrete_integrator_recurrences(method, expected):
    np.testing.assert_allclose(integrate(method), expected, rtol=0, atol=1e-14)


def test_discrete_integrator_saturated_state_does_not_wind_up():
    # backward, upper = 1: 0.7, min(1.1, 1) = 1, then 1 - 0.2 at once (no wound-up excess)
    np.testing.assert_allclose(integrate("backward", upper=1.0), [0.7, 1.0, 0.8, 1.0],
                               atol=1e-14)
    np.testing.assert_allclose(integrate("forward", upper=1.0), [0.5, 0.7, 1.0, 0.8],
                               atol=1e-14)


def test_discrete_integrator_feedthrough_by_method():
    assert DiscreteIntegrator("a", 0.1).y.depends_on == frozenset()
    assert DiscreteIntegrator("b", 0.1, method="backward").y.depends_on == {"u"}
    assert DiscreteIntegrator("c", 0.1, method="trapezoidal").y.depends_on == {"u"}


# ------------------------------------------------------------------ state space
A2 = np.array([[0.9, 0.2], [-0.1, 0.7]])
B2 = np.array([[0.0], [1.0]])
C2 = np.array([[1.0, 0.5]])
D2 = np.array([[0.25]])


def drive(block, inputs) -> np.ndarray:
    h = BlockHarness(block)
    out = []
    for u in inputs:
        h.set_input("u", u)
        out.append(h.output("y"))
        h.update()
    return np.array(out)


def test_discrete_state_space_matches_recurrence():
    rng = np.random.default_rng(1)
    us = rng.normal(size=12)
    x = np.array([0.3, -0.2])
    ref = []
    for u in us:
        ref.append((C2 @ x + D2[:, 0] * u)[0])
        x = A2 @ x + B2[:, 0] * u
    y = drive(DiscreteStateSpace("ss", A2, B2, C2, D2, period_s=0.01, x0=[0.3, -0.2]), us)
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-14)


def test_discrete_state_space_from_control_objects_uses_their_dt():
    us = np.sin(np.arange(15) * 0.4)
    sys = control.ss(A2, B2, C2, D2, 0.02)
    blk = DiscreteStateSpace("ss", sys)
    assert blk.period_s == 0.02 and blk.periodic_updates[0].period == 20_000_000
    ref = lfilter(*_tf_coeffs(sys), us)
    np.testing.assert_allclose(drive(blk, us), ref, atol=1e-12)
    tf = control.tf([1.0, 0.5], [1.0, -0.8, 0.15], 0.05)
    y_tf = drive(DiscreteTransferFunction("tf", tf), us)
    np.testing.assert_allclose(y_tf, lfilter([0.0, 1.0, 0.5], [1.0, -0.8, 0.15], us),
                               atol=1e-12)
    np.testing.assert_allclose(drive(DiscreteStateSpace("ss2", tf), us), y_tf, atol=1e-12)


def _tf_coeffs(sys):
    tf = control.tf(sys)
    num, den = np.asarray(tf.num[0][0], float), np.asarray(tf.den[0][0], float)
    return np.concatenate([np.zeros(den.size - num.size), num]), den


def test_discrete_transfer_function_coefficients_and_feedthrough():
    us = np.cos(np.arange(10) * 0.7) + 0.1
    num, den = [0.2, 0.1], [1.0, -0.5]  # biproper: feedthrough 0.2
    blk = DiscreteTransferFunction("tf", num, den, period_s=0.001)
    assert blk.y.depends_on == {"u"}
    np.testing.assert_allclose(drive(blk, us), lfilter(num, den, us), atol=1e-14)
    strict = DiscreteTransferFunction("tf2", [1.0], [1.0, -0.5], 0.001)
    assert strict.y.depends_on == frozenset()
    np.testing.assert_allclose(drive(strict, us), lfilter([0.0, 1.0], [1.0, -0.5], us),
                               atol=1e-14)


def test_c2d_against_python_control_and_expm():
    A = np.array([[0.0, 1.0], [-4.0, -0.8]])
    B = np.array([[0.0], [2.0]])
    C = np.array([[1.0, 0.0]])
    D = np.array([[0.0]])
    T = 0.05
    for method in ("zoh", "tustin"):
        ref = control.c2d(control.ss(A, B, C, D), T, method=method)
        got = c2d(A, B, C, D, T, method=method)
        for m_got, m_ref in zip(got, (ref.A, ref.B, ref.C, ref.D), strict=True):
            np.testing.assert_allclose(m_got, m_ref, rtol=1e-12, atol=1e-14)
    # zoh independently: exp([[A, B], [0, 0]] T) = [[Ad, Bd], [0, I]]
    M = expm(np.block([[A, B], [np.zeros((1, 3))]]) * T)
    Ad, Bd, _, _ = c2d(A, B, C, D, T)
    np.testing.assert_allclose(Ad, M[:2, :2], rtol=1e-12)
    np.testing.assert_allclose(Bd, M[:2, 2:], rtol=1e-12)
    # tustin independently: Ad = (I - AT/2)^-1 (I + AT/2)
    Ad_t = c2d(A, B, C, D, T, method="tustin")[0]
    eye = np.eye(2)
    np.testing.assert_allclose(Ad_t, np.linalg.solve(eye - A * T / 2, eye + A * T / 2),
                               rtol=1e-12)


# ------------------------------------------- discrete controller on a plant
T_CTRL, TAU, K_PLANT, KP, KI, R0 = 0.01, 0.05, 2.0, 1.5, 20.0, 1.0


def pi_loop():
    b = DiagramBuilder("cl")
    r = b.add(Constant("r", R0))
    e = b.add(Sum("e", "+-"))
    c = b.add(DiscretePID("c", T_CTRL, KP, KI))
    p = b.add(FirstOrderLag("p", TAU, K_PLANT))
    b.connect(r.y, e.ins[0])
    b.connect(p.y, e.ins[1])
    b.connect(e.y, c.e)
    b.connect(c.u, p.u)
    return b.build()


def exact_pi_loop(n: int):
    """Closed loop at the sample instants: exact ZOH plant, forward-Euler PI."""
    A, B = np.array([[-1 / TAU]]), np.array([[K_PLANT / TAU]])
    M = expm(np.block([[A, B], [np.zeros((1, 2))]]) * T_CTRL)
    phi, gam = M[0, 0], M[0, 1]
    x = integral = 0.0
    ys, us = [], []
    for _ in range(n + 1):
        e = R0 - x
        u = KP * e + integral
        ys.append(x)
        us.append(u)
        integral += T_CTRL * KI * e
        x = phi * x + gam * u
    return np.array(ys), np.array(us)


def sampled(res, path: str, n: int) -> np.ndarray:
    return np.array([res[path][hit_index(res, k * T_CTRL)] for k in range(n + 1)])


@pytest.mark.parametrize("fuse", [True, False])
def test_discrete_controller_on_continuous_plant_matches_exact_zoh(fuse):
    n = 60
    y_ex, u_ex = exact_pi_loop(n)
    assert np.ptp(y_ex) > 0.5 and np.ptp(u_ex) > 0.5  # a real transient, not a trivial one
    err = {}
    for dt in (1e-3, 5e-4):
        res = Simulator(pi_loop(), solver="rk4", dt=dt, fuse_linear=fuse).run(n * T_CTRL)
        y, u = sampled(res, "p.y", n), sampled(res, "c.u", n)
        err[dt] = np.max(np.abs(y - y_ex))
        np.testing.assert_allclose(y, y_ex, rtol=0, atol=1e-8)
        np.testing.assert_allclose(u, u_ex, rtol=0, atol=1e-8)
        # the controller output is held between its hits
        for k in range(n):
            i = hit_index(res, k * T_CTRL)
            assert np.all(res["c.u"][i:i + round(T_CTRL / dt)] == res["c.u"][i])
    # the remaining gap is RK4 truncation error: it shrinks like dt^4
    assert 10 < err[1e-3] / err[5e-4] < 22, err


def test_discrete_controller_matches_exact_zoh_with_variable_step_solver():
    n = 60
    y_ex, u_ex = exact_pi_loop(n)
    res = Simulator(pi_loop(), solver="dop853", rtol=1e-12, atol=1e-14).run(n * T_CTRL)
    np.testing.assert_allclose(sampled(res, "p.y", n), y_ex, rtol=0, atol=1e-11)
    np.testing.assert_allclose(sampled(res, "c.u", n), u_ex, rtol=0, atol=1e-11)


def test_discrete_state_space_controller_on_two_state_plant_matches_exact_zoh():
    # plant: lightly damped oscillator with a nonzero initial state; controller: lead + PI in z
    Ap, Bp, Cp = np.array([[0.0, 1.0], [-25.0, -2.0]]), np.array([[0.0], [25.0]]), \
        np.array([[1.0, 0.0]])
    x0 = np.array([0.2, -1.0])
    Ac, Bc, Cc, Dc = np.array([[1.0, 0.0], [0.0, 0.6]]), np.array([[0.02], [1.0]]), \
        np.array([[1.0, -0.3]]), np.array([[0.8]])
    T, n = 0.02, 50
    b = DiagramBuilder("cl2")
    r = b.add(Constant("r", 0.5))
    e = b.add(Sum("e", "+-"))
    c = b.add(DiscreteStateSpace("c", Ac, Bc, Cc, Dc, period_s=T))
    p = b.add(StateSpace("p", Ap, Bp, Cp, [[0.0]], x0=x0))
    b.connect(r.y, e.ins[0])
    b.connect(p.y, e.ins[1])
    b.connect(e.y, c.u)
    b.connect(c.y, p.u)
    res = Simulator(b.build(), solver="rk4", dt=0.0005).run(n * T)
    M = expm(np.block([[Ap, Bp], [np.zeros((1, 3))]]) * T)
    Phi, Gam = M[:2, :2], M[:2, 2]
    x, xc = x0.copy(), np.zeros(2)
    for k in range(n + 1):
        y = (Cp @ x)[0]
        err = 0.5 - y
        u = (Cc @ xc)[0] + Dc[0, 0] * err
        i = hit_index(res, k * T)
        assert res["p.y"][i] == pytest.approx(y, abs=1e-8)
        assert res["c.y"][i] == pytest.approx(u, abs=1e-8)
        xc = Ac @ xc + Bc[:, 0] * err
        x = Phi @ x + Gam * u


# ------------------------------------------------------------- bad parameters
@pytest.mark.parametrize("make", [
    lambda: ZeroOrderHold("bad", 0.0),
    lambda: ZeroOrderHold("bad", -0.01),
    lambda: ZeroOrderHold("bad", 0.01, offset_s=0.01),
    lambda: RateTransition("bad", "fast"),
    lambda: UnitDelay("bad", 0.1, initial=[1.0, 2.0], shape=3),
    lambda: DiscreteIntegrator("bad", 0.1, method="euler"),
    lambda: DiscreteIntegrator("bad", 0.1, lower=1.0, upper=0.0),
    lambda: DiscreteIntegrator("bad", 0.1, initial=2.0, upper=1.0),
    lambda: DiscreteStateSpace("bad", A2, B2, C2, D2),  # no period
    lambda: DiscreteStateSpace("bad", A2, B2, [[1.0, 0.0, 0.0]], D2, period_s=0.1),
    lambda: DiscreteStateSpace("bad", A2, B2, C2, D2, period_s=0.1, x0=[1.0]),
    lambda: DiscreteStateSpace("bad", control.ss(A2, B2, C2, D2)),  # continuous
    lambda: DiscreteStateSpace("bad", control.ss(A2, B2, C2, D2, 0.1), period_s=0.2),
    lambda: DiscreteStateSpace("bad", control.ss(A2, B2, C2, D2, True)),  # dt unspecified
    lambda: DiscreteTransferFunction("bad", [1.0, 0.0, 0.0], [1.0, 0.5], 0.1),  # improper
    lambda: DiscreteTransferFunction("bad", [1.0], [1.0, 0.5]),  # no period
])
def test_bad_parameters_raise_parameter_error_naming_the_block(make):
    with pytest.raises(ParameterError, match="'bad'"):
        make()


def test_unspecified_dt_with_period_and_c2d_errors():
    blk = DiscreteStateSpace("ok", control.ss(A2, B2, C2, D2, True), period_s=0.1)
    assert blk.period_s == 0.1
    with pytest.raises(ParameterError, match="method"):
        c2d(A2, B2, C2, D2, 0.1, method="foh")
    with pytest.raises(ParameterError, match="period_s"):
        c2d(A2, B2, C2, D2, 0.0)
