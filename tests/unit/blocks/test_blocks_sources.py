"""Sources: Constant, Step, Ramp, Sine, Pulse, ClosedFormSource, TimeSource.

Outputs are checked with the harness (no scheduler); in simulations the
switching instants of Step and Pulse must be hit exactly by the integrators,
also when they lie off the solver grid.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from blocks import (
    ClosedFormSource,
    Constant,
    Gain,
    Integrator,
    Mux,
    Pulse,
    Ramp,
    Sine,
    Step,
    TimeSource,
)
from cosim import DiagramBuilder, Simulator, to_ticks
from cosim.errors import ParameterError
from cosim.testing import BlockHarness


def at(block, t: float, port: str = "y"):
    """Output of ``block`` at time ``t`` (one harness per block: a block joins one diagram)."""
    h = _harnesses.get(id(block))
    if h is None or h.block is not block:
        h = _harnesses[id(block)] = BlockHarness(block)
    return h.set_time(t).output(port)


_harnesses: dict[int, BlockHarness] = {}


def event_ticks(block) -> list[int]:
    return sorted(t for ev in block.time_events for t in ev.times)


# ------------------------------------------------------------------ Constant
def test_constant_scalar_value_unit_and_no_feedthrough():
    c = Constant("c", 3, unit="V")
    y = BlockHarness(c).output("y")
    assert y == 3.0 and isinstance(y, float)
    assert c.y.unit_text == "V" and c.y.shape == ()
    assert c.y.depends_on == frozenset()
    assert not c.time_events and not c.continuous_states


def test_constant_vector_is_a_float_array_of_its_shape():
    # a list value must come out as an ndarray (array ports carry NumPy arrays)
    c = Constant("c", [1, 2, 3])
    y = BlockHarness(c).output("y")
    assert isinstance(y, np.ndarray) and y.dtype == float and y.shape == (3,)
    np.testing.assert_array_equal(y, [1.0, 2.0, 3.0])
    assert c.y.shape == (3,)


def test_constant_list_drives_a_vector_gain_on_the_generic_path():
    # regression: a list value reached Gain as a list, 2.0 * [1, 2] -> TypeError
    b = DiagramBuilder("cg")
    c = b.add(Constant("c", [1.0, 2.0]))
    g = b.add(Gain("g", 2.0, shape=2))
    b.connect(c.y, g.u)
    res = Simulator(b.build(), dt=0.1, fuse_linear=False).run(0.2)
    np.testing.assert_array_equal(res["g.y"], [[2.0, 4.0]] * 3)


def test_constant_value_is_a_tunable_parameter():
    b = DiagramBuilder("tune")
    c = b.add(Constant("c", 1.0))
    cv = b.add(Constant("cv", [1.0, 2.0]))
    d = b.build()
    ctx = d.create_context()
    ctx.set_param("c.value", 4)
    ctx.set_param("cv.value", [5, 6])
    res = Simulator(d, ctx, dt=0.5).run(1.0)
    np.testing.assert_array_equal(res["c.y"], [4.0, 4.0, 4.0])
    np.testing.assert_array_equal(res["cv.y"][-1], [5.0, 6.0])
    ctx2 = d.create_context()
    assert ctx2.param(c.value) == 1.0  # the blocks themselves are unchanged
    np.testing.assert_array_equal(ctx2.param(cv.value), [1.0, 2.0])
    with pytest.raises(ParameterError, match=r"'cv\.value'.*shape"):
        ctx2.set_param("cv.value", [1.0, 2.0, 3.0])


# ---------------------------------------------------------------------- Step
def test_step_values_around_the_switching_instant():
    s = Step("s", time_s=0.25, final=3.0, initial=-1.0, unit="m")
    assert at(s, 0.0) == -1.0
    assert at(s, 0.2499) == -1.0
    assert at(s, 0.25) == 3.0  # y = final for t >= t_s
    assert at(s, 7.0) == 3.0
    assert s.y.unit_text == "m" and s.y.depends_on == frozenset()
    assert event_ticks(s) == [to_ticks(0.25)]


def test_step_branch_is_chosen_by_mode_time():
    # while integrating [t_s - h, t_s] the stage at t = t_s still sees the left value
    s = Step("s", time_s=0.25, final=3.0)
    h = BlockHarness(s)
    h.ctx.time, h.ctx.mode_time = 0.25, 0.24
    assert h.output("y") == 0.0
    h.ctx.mode_time = 0.25
    assert h.output("y") == 3.0


def test_step_at_time_zero_has_no_event_and_starts_at_final():
    s = Step("s", time_s=0.0, final=2.0, initial=5.0)
    assert at(s, 0.0) == 2.0
    assert s.time_events == []


# ---------------------------------------------------------------------- Ramp
def test_ramp_values_and_kink_event():
    r = Ramp("r", slope=2.0, start_s=0.5, initial=1.0)
    assert at(r, 0.0) == 1.0
    assert at(r, 0.5) == 1.0
    assert at(r, 0.75) == pytest.approx(1.5, abs=1e-15)
    assert at(r, 3.0) == pytest.approx(6.0, abs=1e-15)
    assert event_ticks(r) == [to_ticks(0.5)]
    assert Ramp("r0", slope=-1.0).time_events == []
    assert at(Ramp("r1", slope=-1.0), 2.0) == -2.0


# ---------------------------------------------------------------------- Sine
def test_sine_matches_math_sin():
    A, f, ph, b = 1.7, 3.3, 0.4, -0.2
    s = Sine("s", amplitude=A, frequency_hz=f, phase_rad=ph, bias=b, unit="V")
    h = BlockHarness(s)
    for t in np.linspace(0.0, 2.0, 57):
        got = h.set_time(t).output("y")
        assert got == pytest.approx(A * math.sin(2 * math.pi * f * t + ph) + b,
                                    rel=1e-14, abs=1e-14)
    assert at(Sine("d"), 0.25) == pytest.approx(1.0, abs=1e-15)  # defaults: unit 1 Hz sine
    assert s.y.unit_text == "V" and s.time_events == []


# --------------------------------------------------------------------- Pulse
T, DUTY, AMP, DELAY = 0.0125, 0.3, 2.0, 0.0021  # edges off the 1 ms grid


def pulse_area(t: float, T=T, duty=DUTY, A=AMP, d=DELAY, stop=math.inf) -> float:
    """Exact integral of the pulse from 0 to t."""
    t = min(t, stop)
    tt = t - d
    if tt <= 0:
        return 0.0
    k = math.floor(tt / T)
    return A * (k * duty * T + min(tt - k * T, duty * T))


def test_pulse_values_on_and_around_edges():
    p = Pulse("p", T, DUTY, AMP, delay_s=DELAY)
    w = DUTY * T
    assert at(p, 0.0) == 0.0
    assert at(p, DELAY - 1e-6) == 0.0
    for k in (0, 1, 7):
        rise = DELAY + k * T
        assert at(p, rise) == AMP  # rising edge: on at the edge
        assert at(p, rise + 0.5 * w) == AMP
        assert at(p, rise + w) == 0.0  # falling edge: off at the edge
        assert at(p, rise + w + 1e-6) == 0.0
        assert at(p, rise + T - 1e-6) == 0.0
    ticks = event_ticks(p)
    assert ticks[:4] == [to_ticks(DELAY), to_ticks(DELAY + w), to_ticks(DELAY + T),
                         to_ticks(DELAY + T + w)]
    assert ticks == sorted(set(ticks))


def test_pulse_without_delay_starts_high():
    p = Pulse("p", 0.01, 0.5, 3.0)
    assert at(p, 0.0) == 3.0
    assert at(p, 0.005) == 0.0
    assert at(p, 0.01) == 3.0
    assert to_ticks(0.0) not in event_ticks(p)


def test_pulse_stop_s_ends_the_pulse_train():
    # regression: stop_s only truncated the event list; the pulses went on
    # after it without events (solver steps straddled their edges)
    p = Pulse("p", 0.01, 0.5, 1.0, stop_s=0.0325)
    assert at(p, 0.031) == 1.0
    assert at(p, 0.0325) == 0.0  # stopped in the middle of a pulse
    assert at(p, 0.04) == 0.0 and at(p, 0.1234) == 0.0
    ticks = event_ticks(p)
    assert ticks[-1] == to_ticks(0.0325)
    assert all(t <= to_ticks(0.0325) for t in ticks)


@pytest.mark.parametrize("kw, what", [
    (dict(period_s=0.01, duty=0.0), "duty"),
    (dict(period_s=0.01, duty=1.0), "duty"),
    (dict(period_s=0.0), "period_s"),
    (dict(period_s=-1.0), "period_s"),
])
def test_pulse_validation_names_the_block(kw, what):
    with pytest.raises(ParameterError, match=f"Pulse 'bad'.*{what}"):
        Pulse("bad", **kw)


# ------------------------------------------------- ClosedFormSource, TimeSource
def test_closed_form_source_and_time_source():
    c = ClosedFormSource("c", lambda t: 3.0 * t * t, unit="m")
    assert at(c, 0.5) == 0.75 and c.y.unit_text == "m"
    cv = ClosedFormSource("cv", lambda t: np.array([t, -t]), shape=(2,))
    assert cv.y.shape == (2,)
    np.testing.assert_array_equal(at(cv, 2.0), [2.0, -2.0])
    ts = TimeSource("ts")
    assert at(ts, 1.25, "t") == 1.25
    assert ts.t.unit_text == "s" and ts.t.depends_on == frozenset()


# --------------------------------------------------------------- simulations
def _pulse_integrator(stop_s=None):
    b = DiagramBuilder("pulse_area")
    p = b.add(Pulse("p", T, DUTY, AMP, delay_s=DELAY, stop_s=stop_s))
    i = b.add(Integrator("i"))
    b.connect(p.y, i.u)
    return b.build()


@pytest.mark.parametrize("solver", ["euler", "heun", "rk4", "rk45"])
@pytest.mark.parametrize("fuse", [True, False])
def test_integrated_pulse_gives_the_exact_area(solver, fuse):
    res = Simulator(_pulse_integrator(), solver=solver, dt=1e-3, fuse_linear=fuse).run(0.1)
    exact = np.array([pulse_area(t) for t in res.time])
    # every edge is a time event: no step straddles a jump, so any method is exact
    np.testing.assert_allclose(res["i.y"], exact, rtol=0, atol=1e-14)
    # the edges (off the 1 ms grid) are major time points
    assert np.min(np.abs(res.time - (DELAY + T + DUTY * T))) < 1e-15
    assert res["i.y"][-1] == pytest.approx(pulse_area(0.1), abs=1e-14)
    assert res["i.y"][-1] > 0.015  # non-trivial: 8 pulses of area 0.0075


def test_integrated_pulse_with_stop_s_stays_constant_after_it():
    stop = 0.0577
    res = Simulator(_pulse_integrator(stop_s=stop), dt=1e-3).run(0.1)
    exact = np.array([pulse_area(t, stop=stop) for t in res.time])
    np.testing.assert_allclose(res["i.y"], exact, rtol=0, atol=1e-14)
    assert res["i.y"][-1] == res.at("i.y", 0.06)


@pytest.mark.parametrize("solver", ["euler", "rk4", "rk45"])
def test_integrated_step_ramp_and_sine(solver):
    ts, tr = 0.0123, 0.0237  # off the grid

    def make():
        b = DiagramBuilder("srcs")
        st = b.add(Step("st", ts, 2.0, 0.5))
        rp = b.add(Ramp("rp", 3.0, tr, 1.0))
        sn = b.add(Sine("sn", 2.0, 3.0, 0.4, 0.1))
        mux = b.add(Mux("mux", 3))
        i = b.add(Integrator("i", [0.0, 0.0, 0.0]))
        for k, src in enumerate((st, rp, sn)):
            b.connect(src.y, mux.ins[k])
        b.connect(mux.y, i.u)
        return b.build()

    res = Simulator(make(), solver=solver, dt=1e-3, rtol=1e-12, atol=1e-14).run(0.1)
    t = res.time
    y = res["i.y"]
    step_area = np.where(t < ts, 0.5 * t, 0.5 * ts + 2.0 * (t - ts))
    np.testing.assert_allclose(y[:, 0], step_area, rtol=0, atol=1e-14)
    assert np.min(np.abs(t - ts)) < 1e-15 and np.min(np.abs(t - tr)) < 1e-15
    if solver == "euler":
        return
    # RK4 (and RK45 with its 4th/5th-order pair) integrate a piecewise quadratic exactly
    ramp_area = t + 1.5 * np.maximum(0.0, t - tr) ** 2
    np.testing.assert_allclose(y[:, 1], ramp_area, rtol=0, atol=1e-13)
    w = 2 * math.pi * 3.0
    sine_area = 2.0 * (math.cos(0.4) - np.cos(w * t + 0.4)) / w + 0.1 * t
    np.testing.assert_allclose(y[:, 2], sine_area, rtol=0, atol=1e-9)


def test_sources_fused_and_generic_agree(fused_vs_generic):
    def make():
        b = DiagramBuilder("srcs")
        p = b.add(Pulse("p", T, DUTY, AMP, delay_s=DELAY))
        st = b.add(Step("st", 0.0123, 2.0, 0.5))
        rp = b.add(Ramp("rp", 3.0, 0.0237, 1.0))
        sn = b.add(Sine("sn", 2.0, 3.0, 0.4, 0.1))
        ts = b.add(TimeSource("ts"))
        cf = b.add(ClosedFormSource("cf", lambda t: np.array([t, t * t]), shape=(2,)))
        mux = b.add(Mux("mux", 5))
        i = b.add(Integrator("i", np.zeros(5)))
        iv = b.add(Integrator("iv", [1.0, -1.0]))
        for k, src in enumerate((p, st, rp, sn)):
            b.connect(src.y, mux.ins[k])
        b.connect(ts.t, mux.ins[4])
        b.connect(mux.y, i.u)
        b.connect(cf.y, iv.u)
        return b.build()

    res, _, sim = fused_vs_generic(make, 0.1, solver="rk4", dt=1e-3)
    assert sim.diagnostics()["propagator"]  # sources drive the exact RK propagator
    t = res.time
    # RK4 is Simpson's rule on x' = f(t): exact for polynomials up to degree 3
    np.testing.assert_allclose(res["i.y"][:, 4], t * t / 2, rtol=0, atol=1e-15)
    np.testing.assert_allclose(res["iv.y"][:, 0], 1.0 + t * t / 2, rtol=0, atol=1e-15)
    np.testing.assert_allclose(res["iv.y"][:, 1], -1.0 + t ** 3 / 3, rtol=0, atol=1e-15)
    np.testing.assert_allclose(res["i.y"][:, 0], [pulse_area(x) for x in t], atol=1e-14)


def test_ab3_restarts_its_history_at_a_step_on_the_grid():
    b = DiagramBuilder("ab3")
    st = b.add(Step("st", 0.012, 1.0))  # on the 1 ms grid: no partial step clears the history
    i = b.add(Integrator("i"))
    b.connect(st.y, i.u)
    res = Simulator(b.build(), solver="ab3", dt=1e-3).run(0.03)
    np.testing.assert_allclose(res["i.y"], np.maximum(0.0, res.time - 0.012), atol=1e-14)
