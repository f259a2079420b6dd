"""The compiled Simulator's zero crossings (``Simulator(..., compiled=True)``, located in C by
``cosim/codegen/templates/driver.c``) against the Python loop (``compiled=False``,
``FixedStepAdvancer._locate``): a generated corpus of diagrams with state events
(tests/corpus/event_diagrams.py: bouncing balls of several restitutions and scales, coming
to rest with flights shorter than a step, twin balls whose impacts fall in one step,
switches, a witness on an input in each direction, a clamp released from a witness left on
zero, alarms on and off the grid, terminal or not, with or without a handler) with every
solver the C integrates with, decimated recording and both ``event_samples``; equal results,
event counts and step counts; C and Python advances interleaved; the Zeno guard; what stays in
Python and why; the library's blocks with C zero crossings (the bouncing ball, the nip-load
fault monitor).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import blocks as bl
from blocks.benchmarks.bouncing_ball import build as build_ball
from blocks.paper.fault_detection import NipLoadMonitor
from cosim import Block, DiagramBuilder, Simulator
from cosim.codegen import CModel
from cosim.errors import BuildError, ZenoError
from tests.corpus.compiled_oracle import run_both
from tests.corpus.event_diagrams import LevelCounter, RestingBall, event_diagram
from tests.system.test_compiled_run import _compare

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

SOLVERS = ["rk4", "heun", "midpoint", "euler", "ab3"]


def _same_diagnostics(py, c, solver, evals=True):
    for key in ("events", "steps", "partial_steps", "multistep_restarts"):
        assert c.diagnostics[key] == py.diagnostics[key], key
    assert c.diagnostics.get("terminated") == py.diagnostics.get("terminated")
    if evals and solver != "ab3":  # (AB3: the Python loop counts its starter's late)
        assert c.diagnostics["rhs_evals"] == py.diagnostics["rhs_evals"]


@pytest.mark.parametrize("seed", range(60))
def test_generated_event_diagrams_compiled_equal_the_python_loop(seed):
    solver = SOLVERS[seed % 5]
    dt = [1e-3, 2e-3, 5e-3][seed % 3]
    kw = dict(solver=solver, dt=dt, record_every=[1, 1, 3, 4][seed % 4],
              event_samples=["after", "both"][(seed // 5) % 2],
              multistep_restart=["modes", "hits", "events"][(seed // 5) % 3])
    py, c = run_both(lambda: event_diagram(seed, 1.0, dt), 1.0, **kw)
    _same_diagnostics(py, c, solver)


def test_the_corpus_holds_what_it_claims():
    """Over the corpus's diagrams (the Python loop): events, terminal ones, several
    directions, and runs with many events."""
    events, terminated, directions = [], 0, set()
    for seed in range(60):
        dt = [1e-3, 2e-3, 5e-3][seed % 3]
        sim = Simulator(event_diagram(seed, 1.0, dt), compiled=False, solver="rk4", dt=dt,
                        record=False)
        res = sim.run(1.0)
        events.append(res.diagnostics["events"])
        terminated += bool(res.diagnostics.get("terminated"))
        directions |= {z.direction for b in sim.plan.blocks for z in b.zero_crossings}
    assert sum(e > 0 for e in events) >= 50 and max(events) >= 20
    assert terminated >= 2 and directions == {-1, 0, 1}


@pytest.mark.parametrize("seed", [1, 2, 4, 8])
def test_interleaved_c_and_python_advances_with_events(seed):
    """C, then the Python loop, then C again, in one run: the witnesses at the last point,
    those an event left on zero and the Zeno guard's recent events go over with the state."""
    dt = [1e-3, 2e-3, 5e-3][seed % 3]
    kw = dict(solver=SOLVERS[seed % 5], dt=dt, record_every=[1, 3][seed % 2])
    runs = []
    for compiled in (False, True):
        sim = Simulator(event_diagram(seed, 1.0, dt), compiled=compiled, **kw)
        sim.advance_to(0.2345)
        if compiled:
            sim.route.compiled = False
        sim.advance_to(0.5)
        sim.route.compiled = compiled
        sim.advance_to(1.0)
        runs.append(sim.finish())
    assert runs[0].diagnostics["events"] > 0
    assert runs[1].diagnostics["compiled"] == "partly: compiled=False"
    _compare(*runs)
    assert runs[0].diagnostics["events"] == runs[1].diagnostics["events"]


def _ball(v_rest):
    b = DiagramBuilder("zeno")
    b.add(RestingBall("ball", 0.5, 0.6, 9.81, v_rest))
    return b.build()


def test_zeno_in_c_ends_as_the_python_loop_does():
    """A ball that never rests: the C run fails at the Zeno guard, the Python loop takes the
    slice over and raises its own ZenoError, with the same message and partial results."""
    errs = []
    for compiled in (False, True):
        with pytest.raises(ZenoError) as exc:
            Simulator(_ball(0.0), compiled=compiled, solver="rk4", dt=1e-3).run(3.0)
        errs.append(exc.value)
    assert str(errs[0]) == str(errs[1])
    _compare(errs[0].results, errs[1].results)
    assert "Python loop took over" in errs[1].results.diagnostics["compiled"]


class _PythonOnlyCrossing(Block):
    """A block with a C form that does not describe its zero crossing."""

    def __init__(self, name):
        super().__init__(name)
        self.x = self.declare_continuous_state("x", 1.0)
        self.y = self.declare_output("y", lambda c: float(c.state(self.x)), depends_on=())
        self.declare_zero_crossing(lambda c: float(c.state(self.x)) - 0.5,
                                   lambda c: None, name="half")

    def derivatives(self, ctx):
        return -float(ctx.state(self.x))

    def c_model(self, cg):
        return CModel(outputs={"y": f"{cg.y(self.y)} = {cg.x(self.x)};"},
                      derivatives=f"{cg.dx(self.x)} = -{cg.x(self.x)};")


def test_a_crossing_without_c_keeps_the_python_loop_with_the_reason():
    b = DiagramBuilder("py")
    b.add(_PythonOnlyCrossing("blk"))
    d = b.build()
    with pytest.raises(BuildError, match="gives no C for its zero crossing 'half'"):
        Simulator(d, compiled=True, solver="rk4", dt=1e-3).initialize()
    b = DiagramBuilder("py")
    b.add(_PythonOnlyCrossing("blk"))
    sim = Simulator(b.build(), solver="rk4", dt=1e-3)
    sim.route.threshold = 0
    res = sim.run(1.0)
    assert "gives no C for its zero crossing 'half'" in res.diagnostics["compiled"]
    assert res.diagnostics["events"] == 1


@pytest.mark.parametrize("solver", ["rk4", "ab3", "euler"])
def test_the_library_bouncing_ball_runs_in_c(solver):
    """``blocks.benchmarks.bouncing_ball`` (the example's diagram): the impacts, their
    instants (a discrete state of numbers) and the trajectory equal the Python loop's."""
    py, c = run_both(build_ball, 8.0, solver=solver, dt=0.01)
    _same_diagnostics(py, c, solver)
    assert c.diagnostics["events"] == 4


def test_the_bouncing_ball_impact_times_equal():
    out = []
    for compiled in (False, True):
        d = build_ball()
        ctx = d.create_context()
        Simulator(d, ctx, compiled=compiled, solver="rk4", dt=0.01).run(8.0)
        out.append(d.find("ball").impact_times(ctx))
    assert len(out[0]) == 4 and out[0] == out[1]


def _nip(seed):
    rng = np.random.default_rng(seed)
    b = DiagramBuilder("nip")
    b.add(bl.Constant("ref", 1000.0))
    for s in ("A", "B"):
        b.add(bl.Sine(f"p{s}", float(rng.uniform(45, 80)), float(rng.uniform(2, 9)),
                      float(rng.uniform(0, 3)), 1000.0))
        b.add(bl.Constant(f"s{s}", 1000.0))
    b.add(NipLoadMonitor("mon", threshold=0.04, persistence_s=float(rng.uniform(0.01, 0.05))))
    for s in ("A", "B"):
        b.connect(f"p{s}.y", f"mon.plant_{s}")
        b.connect(f"s{s}.y", f"mon.shadow_{s}")
    b.connect("ref.y", "mon.reference")
    b.add(bl.Integrator("i", 0.0))  # a continuous state: the crossings are located
    b.connect("mon.relative", "i.u")
    return b.build()


@pytest.mark.parametrize("seed", range(6))
def test_the_nip_load_monitor_runs_in_c(seed):
    """``blocks.paper.fault_detection.NipLoadMonitor``: threshold crossings up and down,
    the persistence timer and the latched alarm, as the Python loop."""
    solver = SOLVERS[seed % 5]
    py = Simulator(_nip(seed), compiled=False, solver=solver, dt=1e-3).run(1.0)
    c = Simulator(_nip(seed), compiled=True, solver=solver, dt=1e-3).run(1.0)
    assert c.diagnostics["compiled"] is True
    assert np.array_equal(py.time, c.time)
    for k in py.signals:  # (the detection time is NaN before the alarm: equal as NaN)
        assert np.array_equal(py[k], c[k], equal_nan=True), k
    _same_diagnostics(py, c, solver)
    assert py.diagnostics["events"] >= 2


def _fused_witness(seed):
    rng = np.random.default_rng(seed)
    b = DiagramBuilder("fused")
    b.add(bl.Sine("src", 1.0, float(rng.uniform(0.2, 0.8)), 0.0, 0.0))
    b.add(bl.TransferFunction("tf", [float(rng.uniform(0.5, 2))],
                              [1.0, float(rng.uniform(1, 4)), float(rng.uniform(1, 8))]))
    b.add(bl.Gain("g", float(rng.uniform(0.5, 2))))
    b.add(LevelCounter("lc", float(rng.uniform(-0.05, 0.05)), int(rng.integers(-1, 2))))
    b.connect("src.y", "tf.u")
    b.connect("tf.y", "g.u")
    b.connect("g.y", "lc.u")
    return b.build()


@pytest.mark.parametrize("seed", range(8))
def test_a_witness_on_a_fused_linear_group(seed):
    """A witness reading a fused two-state transfer function (whose sums the C orders
    otherwise than NumPy): the same event ticks and counts, signals to 1e-12 (measured
    below 2e-16 absolute).  Brent's method may take an iteration more or less on values
    that differ in the last bits, so the evaluation counts may differ (by a step's
    stages: measured in 2 of 8)."""
    solver = ["rk4", "heun", "ab3", "euler"][seed % 4]
    py, c = run_both(lambda: _fused_witness(seed), 4.0, solver=solver, dt=1e-3)
    _same_diagnostics(py, c, solver, evals=False)
    assert py.diagnostics["fused_groups"] >= 1 and py.diagnostics["events"] >= 1
