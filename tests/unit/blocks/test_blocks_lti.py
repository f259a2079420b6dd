"""LTI blocks: StateSpace, TransferFunction, FirstOrderLag and tf_to_ss.

Realisations are compared with python-control and SciPy (frequency response,
tf -> ss -> tf round trip, impulse response); the generic calc/derivatives
path against the LinearModel; fused against unfused simulation.
"""

from __future__ import annotations

import math

import control
import numpy as np
import pytest
from scipy import signal
from scipy.linalg import expm

from blocks import FirstOrderLag, Mux, Sine, StateSpace, Step, Sum, TransferFunction
from blocks.lti import tf_to_ss
from cosim import DiagramBuilder, LoopOptions, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

A2 = np.array([[0.0, 1.0], [-4.0, -0.5]])
B2 = np.array([[0.0, 0.5], [1.0, 0.0]])
C3 = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
D3 = np.array([[0.0, 0.0], [0.5, 0.0], [0.0, 0.0]])

W = np.array([0.0, 0.1, 1.0, 2.5, 10.0, 100.0])  # test frequencies [rad/s]


def freq_resp(A, B, C, D, w):
    """C (jw I - A)^-1 B + D for each w (SISO: a complex vector)."""
    A, B, C, D = (np.atleast_2d(np.asarray(m, float)) for m in (A, B, C, D))
    n = A.shape[0]
    out = []
    for wk in w:
        G = D.astype(complex)
        if n:
            G = G + C @ np.linalg.solve(1j * wk * np.eye(n) - A, B)
        out.append(G[0, 0])
    return np.array(out)


def poly_resp(num, den, w):
    s = 1j * np.asarray(w)
    return np.polyval(num, s) / np.polyval(den, s)


# --------------------------------------------------------------- StateSpace
def test_siso_state_space_without_feedthrough(linear_check):
    ss = StateSpace("ss", [[-2.0, 1.0], [0.0, -3.0]], [[0.0], [1.0]], [[1.0, 0.0]], [[0.0]],
                    x0=[0.5, -1.0], input_unit="V", unit="m")
    assert ss.u.shape == () and ss.y.shape == () and ss.n == 2
    assert ss.y.depends_on == frozenset()  # D = 0: no direct feedthrough, no false loops
    assert ss.u.unit_text == "V" and ss.y.unit_text == "m"
    h = BlockHarness(ss).set_input("u", 2.0)
    assert h.output("y") == 0.5 and isinstance(h.output("y"), float)
    np.testing.assert_allclose(h.derivatives(), [-2.0 * 0.5 - 1.0, 3.0 + 2.0])
    linear_check(h)


def test_siso_state_space_with_feedthrough_declares_it(linear_check):
    ss = StateSpace("ss", [[-1.0]], [[2.0]], [[3.0]], [[0.25]], x0=[1.0])
    assert ss.y.depends_on == frozenset({"u"})
    h = BlockHarness(ss).set_input("u", 4.0)
    assert h.output("y") == 3.0 + 1.0
    np.testing.assert_allclose(h.derivatives(), [-1.0 + 8.0])
    linear_check(h)


def test_mimo_state_space(linear_check):
    ss = StateSpace("ss", A2, B2, C3, D3, scalar=False, x0=[0.1, -0.2])
    assert ss.u.shape == (2,) and ss.y.shape == (3,)
    assert ss.y.depends_on == frozenset({"u"})
    h = BlockHarness(ss)
    u = np.array([1.5, -2.0])
    x = np.array([0.3, 0.7])
    h.set_input("u", u)
    h.set_state("x", x)
    np.testing.assert_allclose(h.output("y"), C3 @ x + D3 @ u, rtol=1e-15)
    np.testing.assert_allclose(h.derivatives(), A2 @ x + B2 @ u, rtol=1e-15)
    linear_check(h)
    # D = 0: no feedthrough in the MIMO case either
    ss0 = StateSpace("ss0", A2, B2, C3, np.zeros((3, 2)), scalar=False)
    assert ss0.y.depends_on == frozenset()
    linear_check(ss0)


def test_siso_system_with_vector_ports():
    ss = StateSpace("ss", [[-1.0]], [[1.0]], [[2.0]], [[0.0]], scalar=False, x0=[1.5])
    assert ss.u.shape == (1,) and ss.y.shape == (1,)
    np.testing.assert_array_equal(BlockHarness(ss).set_input("u", [0.0]).output("y"), [3.0])


def test_state_space_defaults_and_initial_state():
    # regression: an omitted D became NaN (np.asarray(None, float))
    ss = StateSpace("ss", [[-1.0]], [[1.0]], [[2.0]])
    assert ss.D.tolist() == [[0.0]] and ss.y.depends_on == frozenset()
    assert BlockHarness(ss).set_input("u", 1.0).output("y") == 0.0
    # regression: a scalar x0 for a one-state system crashed in C @ x
    ss1 = StateSpace("ss1", [[-1.0]], [[1.0]], [[2.0]], [[0.0]], x0=0.5)
    assert BlockHarness(ss1).output("y") == 1.0


@pytest.mark.parametrize("args, kw, match", [
    ((A2, B2, C3, np.zeros((2, 2))), {}, r"D = .*: expected shape \(3, 2\)"),
    ((A2, [1.0, 2.0, 3.0], C3, D3), {}, "B = .*: expected a matrix of 2 rows"),
    ((A2, B2, C3, D3), {"x0": [1.0, 2.0, 3.0]}, "x0 = .*: expected 2 values"),
    ((A2,), {}, "give A, B, C"),
    ((np.ones((2, 3)), np.ones((2, 1)), np.ones((1, 2)), [[0.0]]), {}, "A = .*square"),
])
def test_state_space_validation_names_the_block(args, kw, match):
    with pytest.raises(ParameterError, match=f"StateSpace 'bad'.*{match}"):
        StateSpace("bad", *args, scalar=False, **kw)


def test_state_space_from_python_control(linear_check):
    sys = control.ss(A2, B2, C3, D3)
    ss = StateSpace("ss", sys, scalar=False)
    for mine, theirs in zip((ss.A, ss.B, ss.C, ss.D), (A2, B2, C3, D3)):
        np.testing.assert_array_equal(mine, theirs)
    linear_check(ss)


DISCRETE_TFS = [
    lambda: control.tf([1.0], [1.0, -0.5], 0.01),
    lambda: control.tf([1.0], [1.0, -0.5], True),  # discrete, unspecified sample time
]


@pytest.mark.parametrize("make", [
    lambda: control.ss([[0.5]], [[1.0]], [[1.0]], [[0.0]], 0.1), *DISCRETE_TFS])
def test_discrete_python_control_systems_are_rejected_by_state_space(make):
    with pytest.raises(ParameterError, match="StateSpace 'd'.*discrete.*DiscreteStateSpace"):
        StateSpace("d", make())


@pytest.mark.parametrize("make", DISCRETE_TFS)
def test_discrete_python_control_systems_are_rejected_by_transfer_function(make):
    with pytest.raises(ParameterError, match="TransferFunction 'd'.*discrete"):
        TransferFunction("d", make())


# ----------------------------------------------------------------- tf_to_ss
TFS = [
    ([1.0], [1.0, 1.0]),
    ([2.0, 3.0], [1.0, 4.0, 5.0]),
    ([1.0, 0.0, 4.0], [2.0, 3.0, 1.0, 0.5]),  # non-monic denominator
    ([2.0, 3.0, 1.0], [1.0, 4.0, 5.0]),  # biproper: D = 2
    ([0.0, 0.0, 5.0], [1.0, 2.0]),  # leading zeros of the numerator
    ([3.0, -1.0], [0.0, 2.0, 1.0]),  # leading zero of the denominator, biproper
]


@pytest.mark.parametrize("num, den", TFS)
def test_tf_to_ss_frequency_response_matches_control(num, den):
    A, B, C, D = tf_to_ss(num, den)
    n = len(np.trim_zeros(np.asarray(den), "f")) - 1
    assert A.shape == (n, n) and B.shape == (n, 1) and C.shape == (1, n) and D.shape == (1, 1)
    G = control.tf(np.trim_zeros(num, "f") or [0.0], np.trim_zeros(den, "f"))
    ref = np.array([complex(G(1j * w)) for w in W])
    np.testing.assert_allclose(freq_resp(A, B, C, D, W), ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ref, poly_resp(num, den, W), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("num, den", TFS)
def test_tf_to_ss_round_trip_through_scipy(num, den):
    num_n = np.trim_zeros(np.asarray(num, float), "f")
    den_n = np.trim_zeros(np.asarray(den, float), "f")
    num_n, den_n = num_n / den_n[0], den_n / den_n[0]
    b, a = signal.ss2tf(*tf_to_ss(num, den))
    np.testing.assert_allclose(a, den_n, rtol=1e-12, atol=1e-14)
    b = np.trim_zeros(b[0], "f")
    np.testing.assert_allclose(b, num_n, rtol=1e-12, atol=1e-14)


def test_tf_to_ss_impulse_response():
    num, den = [1.0, 0.0, 4.0], [2.0, 3.0, 1.0, 0.5]
    A, B, C, D = tf_to_ss(num, den)
    t = np.linspace(0.0, 5.0, 11)
    _, y_ref = signal.impulse((num, den), T=t)
    y = np.array([(C @ expm(A * tk) @ B)[0, 0] for tk in t])  # strictly proper: no delta
    np.testing.assert_allclose(y, y_ref, rtol=1e-9, atol=1e-12)
    assert np.max(np.abs(y)) > 0.1


def test_tf_to_ss_static_gain_and_zero():
    A, B, C, D = tf_to_ss([3.0], [2.0])
    assert A.shape == (0, 0) and B.shape == (0, 1) and C.shape == (1, 0) and D[0, 0] == 1.5
    A, B, C, D = tf_to_ss([0.0], [1.0, 1.0])
    assert not np.any(C) and not np.any(D)


@pytest.mark.parametrize("num, den, match", [
    ([1.0, 0.0, 0.0], [1.0, 1.0], "improper"),
    ([1.0], [0.0, 0.0], "denominator"),
    ([1.0], [], "denominator"),
])
def test_tf_to_ss_rejects_bad_transfer_functions(num, den, match):
    with pytest.raises(ParameterError, match=match):
        tf_to_ss(num, den)


# ----------------------------------------------------------- TransferFunction
def test_strictly_proper_transfer_function(linear_check):
    tf = TransferFunction("tf", [2.0, 3.0], [1.0, 4.0, 5.0], input_unit="V", unit="A")
    assert tf.y.depends_on == frozenset() and tf.n == 2
    assert tf.u.unit_text == "V" and tf.y.unit_text == "A"
    np.testing.assert_allclose(freq_resp(tf.A, tf.B, tf.C, tf.D, W),
                               poly_resp([2.0, 3.0], [1.0, 4.0, 5.0], W), rtol=1e-12)
    h = BlockHarness(tf)
    assert h.set_input("u", 1.0).output("y") == 0.0  # zero initial state, no feedthrough
    linear_check(h)


def test_biproper_transfer_function_has_feedthrough(linear_check):
    tf = TransferFunction("tf", [2.0, 3.0, 1.0], [1.0, 4.0, 5.0])
    assert tf.D[0, 0] == 2.0
    assert tf.y.depends_on == frozenset({"u"})
    h = BlockHarness(tf)
    assert h.set_input("u", 1.5).output("y") == 3.0  # D u at zero state
    h.set_state("x", [1.0, -2.0])
    assert h.output("y") == pytest.approx(3.0 + (tf.C @ [1.0, -2.0])[0], rel=1e-15)
    linear_check(h)


def test_static_transfer_function_is_a_pure_gain(linear_check):
    tf = TransferFunction("tf", [3.0], [2.0])
    assert tf.n == 0 and tf.continuous_states == []
    assert tf.y.depends_on == frozenset({"u"})
    h = BlockHarness(tf)
    assert h.set_input("u", 4.0).output("y") == 6.0
    linear_check(h)


@pytest.mark.parametrize("num, den", [([2.0, 3.0], [1.0, 4.0, 5.0]),
                                      ([2.0, 3.0, 1.0], [1.0, 4.0, 5.0])])
def test_transfer_function_from_python_control(num, den, linear_check):
    G = control.tf(num, den)
    tf = TransferFunction("tf", G)
    ref = np.array([complex(G(1j * w)) for w in W])
    np.testing.assert_allclose(freq_resp(tf.A, tf.B, tf.C, tf.D, W), ref, rtol=1e-12,
                               atol=1e-14)
    assert (tf.y.depends_on == frozenset({"u"})) == (len(num) == len(den))
    linear_check(tf)


@pytest.mark.parametrize("make", [
    lambda: TransferFunction("t", [1.0, 0.0, 0.0], [1.0, 1.0]),
    lambda: TransferFunction("t", control.tf([1.0, 0.0, 0.0], [1.0, 1.0])),
])
def test_improper_transfer_functions_are_rejected(make):
    with pytest.raises(ParameterError, match="TransferFunction 't'.*(improper|non-proper)"):
        make()


def test_transfer_function_zero_denominator_names_the_block():
    with pytest.raises(ParameterError, match="TransferFunction 't'.*denominator"):
        TransferFunction("t", [1.0], [0.0])


# ------------------------------------------------------------- FirstOrderLag
def test_first_order_lag(linear_check):
    lag = FirstOrderLag("lag", tau_s=0.2, gain=3.0, y0=1.0, unit="degC")
    assert lag.y.depends_on == frozenset()
    assert lag.u.unit_text == lag.y.unit_text == "degC"
    h = BlockHarness(lag).set_input("u", 2.0)
    assert h.output("y") == 1.0
    np.testing.assert_allclose(h.derivatives(), [(3.0 * 2.0 - 1.0) / 0.2])
    linear_check(h)


@pytest.mark.parametrize("tau", [0.0, -1.0, math.nan])
def test_first_order_lag_validation(tau):
    with pytest.raises(ParameterError, match="FirstOrderLag 'lag': tau_s = .*: expected .* > 0"):
        FirstOrderLag("lag", tau)


# --------------------------------------------------------------- simulations
@pytest.mark.parametrize("fuse", [True, False])
def test_step_responses_match_the_analytic_solutions(fuse):
    b = DiagramBuilder("steps")
    st = b.add(Step("st", 0.0, 2.0))
    lag = b.add(FirstOrderLag("lag", 0.05, 3.0, y0=0.5))
    tf = b.add(TransferFunction("tf", [2.0, 3.0, 1.0], [1.0, 4.0, 5.0]))
    b.connect(st.y, lag.u)
    b.connect(st.y, tf.u)
    res = Simulator(b.build(), dt=1e-3, fuse_linear=fuse).run(1.0)
    t = res.time
    lag_ref = 6.0 + (0.5 - 6.0) * np.exp(-t / 0.05)
    np.testing.assert_allclose(res["lag.y"], lag_ref, rtol=1e-9)
    _, tf_ref = signal.step(([2.0, 3.0, 1.0], [1.0, 4.0, 5.0]), T=t)
    np.testing.assert_allclose(res["tf.y"], 2.0 * tf_ref, rtol=1e-8, atol=1e-10)
    assert res["tf.y"][0] == 4.0  # feedthrough D u at t = 0


def test_lti_chain_fused_and_generic_agree(fused_vs_generic):
    def make():
        b = DiagramBuilder("lti")
        r = b.add(Sine("r", 1.0, 2.0))
        tf = b.add(TransferFunction("tf", [2.0, 3.0, 1.0], [1.0, 4.0, 5.0]))
        tfc = b.add(TransferFunction("tfc", control.tf([1.0, 2.0], [1.0, 3.0, 2.0])))
        lag = b.add(FirstOrderLag("lag", 0.05, 2.0, y0=0.3))
        mux = b.add(Mux("mux", 2))
        ss = b.add(StateSpace("ss", A2, B2, C3, D3, scalar=False, x0=[0.1, -0.2]))
        b.connect(r.y, tf.u)
        b.connect(tf.y, tfc.u)
        b.connect(tfc.y, lag.u)
        b.connect(lag.y, mux.ins[0])
        b.connect(r.y, mux.ins[1])
        b.connect(mux.y, ss.u)
        return b.build()

    res, _, sim = fused_vs_generic(make, 0.5, solver="rk4", dt=1e-3)
    assert sim.diagnostics()["fused_groups"] == 1 and sim.diagnostics()["propagator"]
    assert np.ptp(res["ss.y"][:, 2]) > 0.01


def test_algebraic_loop_through_a_biproper_tf_fused_and_generic_agree(fused_vs_generic):
    # e = r - tf(e): fused it is solved exactly, unfused by Newton iterations
    def make():
        b = DiagramBuilder("loop")
        r = b.add(Sine("r", 1.0, 2.0))
        e = b.add(Sum("e", "+-"))
        tf = b.add(TransferFunction("tf", [2.0, 3.0, 1.0], [1.0, 4.0, 5.0]))
        b.connect(r.y, e.ins[0])
        b.connect(tf.y, e.ins[1])
        b.connect(e.y, tf.u)
        return b.build()

    res, _, sim = fused_vs_generic(make, 0.5, solver="rk4", dt=1e-3,
                                   loop_options=LoopOptions(tol=1e-14))
    # closed loop: E = R / (1 + G); with D = 2 the feedthrough part is e = (r - C x) / 3
    assert res["e.y"][0] == pytest.approx(res["r.y"][0] / 3.0, abs=1e-15)
    assert sim.diagnostics()["loop_iterations"] == 0
