"""FMUs made by tools we did not write, imported and simulated: ME and CS, FMI 2 and 3.

* Co-Simulation: the LIM two-mass oscillator (tests/system/test_lim_oscillator.py) with
  mass 2 as a pythonfmu (FMI 2) or pythonfmu3 (FMI 3) FMU against the all-native run:
  Jacobi, Gauss-Seidel, Richardson step control (rollback with get/set FMU state) and
  iterative coupling; the algebraic loop of test_master_algebraic_loop.py with
  subsystem A as a C FMU whose directional derivatives feed the master's Newton solver.
* Model Exchange: a C bouncing ball (event indicator) against the analytic bounce
  times; a C forced oscillator (time event, feedthrough output, mm output) against the
  same equations as a native block and against the exact solution; a pythonfmu3 FMI 3
  ME FMU against its analytic solution; one FMU used through both interfaces.
* FMI 3 features with C FMUs (tests/fmu_sources/fmi3_template.c): early return and
  event mode in CS (bounce times), intermediate update of inputs in CS (against the
  native subsystem), ME state and time events, directional derivatives.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.linalg import expm

from bench.lim import CONNECTIONS, exact, m1_diagram, m2_diagram
from blocks.sources import Constant, Sine
from cosim import (
    Block,
    DiagramBuilder,
    GaussSeidel,
    Iterative,
    Jacobi,
    MasterScheduler,
    Simulator,
    StepController,
)
from cosim.subsystem import DiagramSubsystem

pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")

from fmus import FMU, load_fmu  # noqa: E402

H = 1e-3


# ------------------------------------------------------------------ Co-Simulation
def _lim(m2, order=0, coupling=None, t_end=1.0, **kw):
    subs = [DiagramSubsystem(m1_diagram(), solver="rk4", dt=kw.pop("dt", H / 10)), m2]
    master = MasterScheduler(subs, CONNECTIONS, H, coupling=coupling or Jacobi(),
                             extrapolation=order, **kw)
    return master.run(t_end)


def _native_m2(dt=H / 10):
    return DiagramSubsystem(m2_diagram(), solver="rk4", dt=dt)


@pytest.mark.parametrize("fmu, coupling", [("LimMass2", Jacobi()), ("LimMass2v3", Jacobi()),
                                           ("LimMass2", GaussSeidel(["m2", "m1"]))])
def test_lim_cosimulation_with_a_pythonfmu_mass_matches_the_native_run(fmu_files, fmu, coupling):
    m2 = load_fmu(fmu_files[fmu], name="m2", interface="cs",
                  feedthrough={"x2": [], "v2": []})
    a = _lim(_native_m2(), coupling=coupling)
    b = _lim(m2, coupling=coupling)
    diff = max(np.max(np.abs(a["m1.x1"] - b["m1.x1"])), np.max(np.abs(a["m2.x2"] - b["m2.x2"])))
    assert diff < 1e-10, diff  # measured 1.1e-12 (FMI 2, FMI 3, Gauss-Seidel)
    ref = exact(b.time)
    assert np.max(np.abs(b["m2.x2"] - ref[:, 1])) < 0.25  # zero-order hold, H = 1 ms
    assert b.units["m2.x2"] in ("", "m")


def test_richardson_step_control_rolls_the_fmu_back(fmu_files):
    """get/set FMU state: the controller redoes steps; same decisions as native."""
    def run(m2):
        ctl = StepController(rtol=1e-4, atol=1e-4, h_min_s=2e-4, h_max_s=1e-2, grid_s=1e-4)
        return _lim(m2, dt="advance", step_control=ctl, t_end=0.5)
    fmu = load_fmu(fmu_files["LimMass2"], name="m2", parameters={"substeps": 1},
                   feedthrough={"x2": [], "v2": []})
    a, b = run(_native_m2("advance")), run(fmu)
    assert b.diagnostics["rollbacks"] > 100 and b.diagnostics["rejections"] > 0
    np.testing.assert_array_equal(a.time, b.time)  # identical step-size sequence
    assert np.max(np.abs(a["m2.x2"] - b["m2.x2"])) < 1e-12  # measured 1.8e-15


@pytest.mark.parametrize("fmu", ["LimMass2", "LimMass2v3"])
def test_iterative_coupling_with_fmu_rollback(fmu_files, fmu):
    kw = {"parameters": {"substeps": 1}} if fmu == "LimMass2" else {}
    m2 = load_fmu(fmu_files[fmu], name="m2", feedthrough={"x2": [], "v2": []}, **kw)
    dt = "advance" if fmu == "LimMass2" else H / 10
    a = _lim(_native_m2(dt), coupling=Iterative("newton"), dt=dt, t_end=0.2)
    b = _lim(m2, coupling=Iterative("newton"), dt=dt, t_end=0.2)
    assert b.diagnostics["rollbacks"] > 200
    assert np.max(np.abs(a["m2.x2"] - b["m2.x2"])) < 1e-9  # measured 6.8e-12, 7.8e-12


def test_algebraic_loop_solved_with_the_fmus_directional_derivatives(fmu_files):
    """test_master_algebraic_loop.py with subsystem A as a C FMU (CS, canInterpolateInputs,
    providesDirectionalDerivative): Newton needs 2 evaluations per loop solve."""
    from tests.system.test_master_algebraic_loop import KA, KB, _b, _monolithic, _sub
    a = load_fmu(fmu_files["LoopA"], name="A", interface="cs")
    assert a.feedthrough() == {"x": set(), "y": {"u"}}
    master = MasterScheduler([a, _sub("B", _b)], [("A.y", "B.u"), ("B.y", "A.u")], 1e-3,
                             coupling=Jacobi(), extrapolation=2, loop_solver="newton")
    res = master.run(1.0)
    assert a.output_jacobian() == {("y", "u"): np.array([[KA]])}  # exact, from the FMU
    d = res.diagnostics
    # linear feedthrough, exact Jacobian: one Newton step per solve (evaluate, step,
    # evaluate), one more for the far-off initial guess
    n = d["loop_solves"]
    assert round(d["loop_evaluations_per_solve"] * n) <= 2 * n + 1
    ya, xa, xb = res["A.y"], res["A.x"], res["B.x"]
    np.testing.assert_allclose(ya, (xa + KA * xb) / (1 - KA * KB), rtol=1e-9, atol=1e-12)
    mono = _monolithic()
    err = np.max(np.abs(ya - mono["AB.ya"][::10]))
    assert err < 1e-9, err  # measured 3.7e-11 (the native subsystems: 3.6e-11)


# ---------------------------------------------------------------- Model Exchange
def _ball_times(n, h0=1.0, g=9.81, e=0.7):
    t1 = math.sqrt(2 * h0 / g)
    ts, v = [t1], g * t1
    for k in range(1, n):
        ts.append(ts[-1] + 2 * e ** k * v / g)
    return np.array(ts)


@pytest.mark.parametrize("solver, kw", [("rk4", {"dt": 1e-3}),
                                        ("rk45", {"rtol": 1e-9, "atol": 1e-12, "dt": 1e-2})])
def test_bouncing_ball_me_fmu_bounces_at_the_analytic_times(fmu_files, solver, kw):
    ball = load_fmu(fmu_files["BouncingBall"], name="ball")
    b = DiagramBuilder("drop")
    b.add(ball)
    res = Simulator(b.build(), solver=solver, **kw).run(2.0)
    times = np.array([t for t, kind in ball.events if kind == "state"])
    assert len(times) == 4
    err = np.max(np.abs(times - _ball_times(4)))
    assert err < 1e-8, err  # measured 2.8e-9 (event ticks are 1 ns)
    assert np.min(res["ball.h"]) > -1e-6
    # energy after k bounces: v_k = e^k v_1
    assert res["ball.h"][-1] >= 0.0


class NativeOscillator(Block):
    """The C oscillator's equations as a native block (time event at t_step)."""

    def __init__(self, name, m=1.0, k=40.0, c=0.4, t_step=0.5, F_step=2.0, x0=0.1):
        super().__init__(name)
        self.m, self.k, self.c, self.Fs = m, k, c, F_step
        self.F = self.declare_input("F", unit="N")
        self.s = self.declare_continuous_state("xv", [x0, 0.0])
        self.on = self.declare_discrete_state("on", 0.0)
        self.declare_time_event(t_step, lambda ctx: ctx.set_discrete(self.on, 1.0))
        self.declare_output("x", lambda ctx: float(ctx.state(self.s)[0]), unit="m",
                            depends_on=())
        self.declare_output("a", self._acc, unit="m/s2", depends_on=("F",))

    def _acc(self, ctx):
        x, v = ctx.state(self.s)
        return (ctx.input(self.F) + self.Fs * ctx.discrete(self.on) - self.k * x
                - self.c * v) / self.m

    def derivatives(self, ctx):
        return np.array([ctx.state(self.s)[1], self._acc(ctx)])


def _forced(osc, source):
    b = DiagramBuilder("forced")
    src = b.add(source)
    b.add(osc)
    b.connect(src.y, osc.input("F"))
    return b.build()


@pytest.mark.parametrize("solver, kw, tol", [("rk4", {"dt": 1e-3}, 1e-14),
                                             ("rk45", {"rtol": 1e-9, "atol": 1e-12,
                                                       "dt": 1e-2}, 1e-9)])
def test_oscillator_me_fmu_equals_the_native_block(fmu_files, solver, kw, tol):
    fmu = load_fmu(fmu_files["Oscillator"], name="osc")
    rec = ["osc.x", "osc.a"]
    a = Simulator(_forced(NativeOscillator("osc"), Sine("src", 1.0, 3.0, unit="N")),
                  solver=solver, record=rec, **kw).run(2.0)
    b = Simulator(_forced(fmu, Sine("src", 1.0, 3.0, unit="N")), solver=solver,
                  record=rec + ["osc.x_mm", "osc.phase", "osc.stepped"], **kw).run(2.0)
    keep = np.r_[np.diff(b.time) > 0, True]  # the event instant is recorded twice
    np.testing.assert_array_equal(a.time, b.time[keep])
    err = max(np.max(np.abs(a["osc.x"] - b["osc.x"][keep])),
              np.max(np.abs(a["osc.a"] - b["osc.a"][keep])) / 40)
    assert err <= tol, err  # measured 0 (rk4: identical arithmetic), 3.8e-11 (rk45)
    assert fmu.events == [(0.5, "time")]
    np.testing.assert_allclose(b["osc.x_mm"], 1000 * b["osc.x"], rtol=1e-15)
    assert b["osc.phase"][0] == 0 and b["osc.phase"][-1] == 1 and b["osc.stepped"][-1] == 1


def test_oscillator_me_fmu_against_the_exact_solution(fmu_files):
    """Constant force F0: x(t) piecewise exact by the matrix exponential."""
    m, k, c, F0, Fs, ts = 1.0, 40.0, 0.4, 0.5, 2.0, 0.5
    A = np.array([[0, 1], [-k / m, -c / m]])
    Ab = np.zeros((3, 3))
    Ab[:2, :2] = A
    Ab[1, 2] = 1.0 / m

    def exact_x(t):
        x = np.array([0.1, 0.0, F0])
        if t <= ts:
            return (expm(Ab * t) @ x)[0]
        x = expm(Ab * ts) @ x
        x[2] = F0 + Fs
        return (expm(Ab * (t - ts)) @ x)[0]
    fmu = load_fmu(fmu_files["Oscillator"], name="osc")
    res = Simulator(_forced(fmu, Constant("src", F0, unit="N")), solver="rk4",
                    dt=1e-3).run(1.5)
    ref = np.array([exact_x(t) for t in res.time])
    err = np.max(np.abs(res["osc.x"] - ref))
    assert err < 1e-10, err  # measured 9.8e-12 (RK4, h = 1 ms)


def test_fmi3_model_exchange_fmu_from_pythonfmu3(fmu_files):
    dec = load_fmu(fmu_files["Decay3"], name="dec")
    b = DiagramBuilder("d")
    c = b.add(Constant("c", 0.5))
    b.add(dec)
    b.connect(c.y, dec.input("u"))
    res = Simulator(b.build(), solver="rk45", rtol=1e-10, atol=1e-12, dt=0.1).run(2.0)
    ref = 0.25 + 0.75 * np.exp(-2.0 * res.time)
    assert np.max(np.abs(res["dec.x"] - ref)) < 1e-9  # measured 8.5e-12


def test_one_fmu_through_both_interfaces_agrees(fmu_files):
    """Oscillator as ME (cosim's RK4) and as CS (its own RK4 sub-steps, the force
    interpolated from the master's quadratic extrapolation, canInterpolateInputs)."""
    fmu = FMU(fmu_files["Oscillator"])

    def source():
        b = DiagramBuilder("src")
        s = b.add(Sine("s", 1.0, 3.0, unit="N"))
        b.export_output(s.y, "F")
        return DiagramSubsystem(b.build(), solver="rk4", dt=1e-4)

    cs = fmu.subsystem("osc")
    res_cs = MasterScheduler([source(), cs], [("src.F", "osc.F")], 1e-3,
                             extrapolation=2).run(1.0)
    me = fmu.block("osc")
    res_me = Simulator(_forced(me, Sine("src", 1.0, 3.0, unit="N")), solver="rk4",
                       dt=1e-4, record=["osc.x"], event_samples="after").run(1.0)
    err = np.max(np.abs(res_cs["osc.x"] - res_me["osc.x"][::10]))
    assert err < 1e-7, err  # measured 1.3e-8: extrapolated vs exact force


# ---------------------------------------------------------------- FMI 3 features
def test_fmi3_cs_early_return_and_event_mode_report_the_bounces(fmu_files):
    """BouncingBall3 (C, FMI 3 CS, mightReturnEarlyFromDoStep + hasEventMode): the step
    returns at each bounce, the subsystem runs event mode and continues to the end of
    the communication step; without them the FMU handles the bounce inside the step."""
    heights = {}
    for early in (True, False):
        s = load_fmu(fmu_files["BouncingBall3"], name="ball", interface="cs",
                     early_return=early, event_mode=early)
        s.initialize(0)
        H = 10_000_000  # 10 ms
        for k in range(200):
            s.set_inputs(k * 0.01, {})
            s.do_step(k * H, H)
        heights[early] = s.get_outputs()["h"]
        if early:
            err = np.max(np.abs(np.array(s.events) - _ball_times(4)))
            assert len(s.events) == 4 and err < 1e-12, (s.events, err)  # measured 4.9e-15
        else:
            assert s.events == []
    assert heights[True] == pytest.approx(heights[False], abs=1e-12)


def test_fmi3_cs_intermediate_update_feeds_the_polynomial_inputs(fmu_files):
    """Oscillator3 (C, FMI 3 CS, providesIntermediateUpdate, F flagged intermediateUpdate)
    asks for F at every RK4 stage: the master's extrapolation polynomial is evaluated
    there, as for a native subsystem; without it F is held over the step."""
    def source():
        b = DiagramBuilder("src")
        s = b.add(Sine("s", 1.0, 3.0, unit="N"))
        b.export_output(s.y, "F")
        return DiagramSubsystem(b.build(), solver="rk4", dt=1e-4)

    def native():
        b = DiagramBuilder("osc")
        o = b.add(NativeOscillator("o"))
        b.export_input(o.input("F"), "F")
        b.export_output(o.output("x"), "x")
        return DiagramSubsystem(b.build(), solver="rk4", dt=1e-4, name="osc")

    ref = MasterScheduler([source(), native()], [("src.F", "osc.F")], 1e-3,
                          extrapolation=1).run(1.0)
    errs = {}
    for iu in (True, False):
        osc = load_fmu(fmu_files["Oscillator3"], name="osc", interface="cs",
                       intermediate_update=iu)
        assert osc.max_input_order == {"F": 3 if iu else 0}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            master = MasterScheduler([source(), osc], [("src.F", "osc.F")], 1e-3,
                                     extrapolation=1)
        # held: the order-1 extrapolation cannot reach the FMU, and the master says so
        assert any("'osc.F' (1 -> 0)" in str(w.message) for w in caught) != iu
        res = master.run(1.0)
        errs[iu] = np.max(np.abs(res["osc.x"] - ref["osc.x"]))
        assert osc.events == [0.5]  # the time event, through early return + event mode
    assert errs[True] < 1e-12, errs  # measured 6.8e-16
    assert errs[False] > 1e-6, errs  # held input: 4.6e-5


def test_fmi3_me_fmus_with_state_and_time_events(fmu_files):
    ball = load_fmu(fmu_files["BouncingBall3"], name="ball")
    b = DiagramBuilder("drop")
    b.add(ball)
    Simulator(b.build(), solver="rk4", dt=1e-3).run(2.0)
    times = np.array([t for t, kind in ball.events if kind == "state"])
    assert len(times) == 4 and np.max(np.abs(times - _ball_times(4))) < 1e-8
    osc = load_fmu(fmu_files["Oscillator3"], name="osc")
    a = Simulator(_forced(NativeOscillator("osc"), Sine("src", 1.0, 3.0, unit="N")),
                  solver="rk4", dt=1e-3, record=["osc.x"]).run(1.0)
    r = Simulator(_forced(osc, Sine("src", 1.0, 3.0, unit="N")), solver="rk4", dt=1e-3,
                  record=["osc.x", "osc.phase", "osc.stepped"]).run(1.0)
    # the FMU's run records both sides of its time event at 0.5 s (as FMPy does)
    assert r.time.size == a.time.size + 1 and np.sum(r.time == 0.5) == 2
    assert np.max(np.abs(a["osc.x"] - np.delete(r["osc.x"], 500))) <= 1e-14
    assert r["osc.stepped"][r.time == 0.5].tolist() == [0, 1]  # left and right values
    assert osc.events == [(0.5, "time")] and r["osc.stepped"][-1] == 1
    from cosim.testing import BlockHarness
    harness = BlockHarness(load_fmu(fmu_files["Oscillator3"], name="osc"))
    J = harness.block.jacobian(harness.ctx)  # fmi3GetDirectionalDerivative
    np.testing.assert_array_equal(J["A"], [[0, 1], [-40, -0.4]])
    np.testing.assert_array_equal(J["D"], [[0], [0], [1], [0]])
