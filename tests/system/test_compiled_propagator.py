"""The exact linear step in the compiled Simulator's C (:mod:`cosim.codegen.propagate_c`) and
the time-only outputs evaluated once per distinct time (:mod:`cosim.codegen.time_cache`),
against the Python loop, their oracle.

The class: diagrams whose whole continuous part is fused linear blocks driven by
state-independent inputs (the Python loop steps those by the exact Runge-Kutta map).  A
generated corpus: chains and trees of first-order lags, integrators, transfer functions and
state-space blocks, small (dense maps) and large (more than ``SPARSE_FROM`` states: sparse
maps), fed by sources through nonlinear time-only blocks and held samples, with and without
an affine term (a unit conversion with an offset inside); step times and the end off the grid
(partial steps, taken by stages); every explicit method.
Both ways must record the same times, every value within 1e-12 of the signal's range, the
same steps, partial steps and right-hand-side evaluations, and both must say they propagated.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

import blocks as bl
from cosim import DiagramBuilder, FunctionBlock, Simulator
from cosim.codegen.program import Program
from cosim.linear import SPARSE_FROM
from tests.system.test_compiled_run import _compare

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

SOLVERS = ["rk4", "heun", "midpoint", "euler"]


def linear_diagram(seed: int):
    """A random all-linear continuous part driven by time-only and held inputs."""
    b, outs, record = linear_builder(seed)
    return b.build(), record


def linear_builder(seed: int):
    """:func:`linear_diagram`'s builder, its linear blocks' outputs and the recorded ports."""
    rng = np.random.default_rng(seed)
    u = lambda lo, hi: float(rng.uniform(lo, hi))  # noqa: E731
    b = DiagramBuilder(f"lin{seed}")
    srcs = [b.add(bl.Sine("sine", u(0.5, 2), u(0.5, 4), u(0, 3))).y,
            b.add(bl.Step("step", round(u(0.05, 0.4), 4) + 0.00013, u(-1, 1), u(-2, 2))).y,
            b.add(bl.Ramp("ramp", u(-1, 1), round(u(0.0, 0.2), 4) + 0.00021)).y]
    shaped = b.add(FunctionBlock("shape", lambda a: math.tanh(1.3 * a) + 0.1 * a * a))
    b.connect(srcs[0], shaped.in_ports[0])
    srcs.append(shaped.out_ports[0])
    if seed % 3 == 0:  # a held sample of a time-only signal
        zoh = b.add(bl.ZeroOrderHold("zoh", [0.004, 0.006][seed % 2]))
        b.connect(srcs[1], zoh.u)
        srcs.append(zoh.y)
    big = seed % 4 == 3
    n = int(rng.integers(SPARSE_FROM + 10, SPARSE_FROM + 60)) if big else \
        int(rng.integers(1, 9))
    outs = []
    for i in range(n):
        kind = int(rng.integers(4)) if not big else 0
        blk = b.add([lambda k: bl.FirstOrderLag(k, u(0.01, 0.5)),
                     lambda k: bl.Integrator(k),
                     lambda k: bl.TransferFunction(k, [1.0, u(0.5, 3)],
                                                   [1.0, u(1, 4), u(2, 9)]),
                     lambda k: bl.StateSpace(k, [[-u(1, 5)]], [[u(0.5, 2)]], [[1.0]],
                                             [[u(-0.5, 0.5)]])][kind](f"l{i}"))
        feed = outs[int(rng.integers(len(outs)))] if outs and rng.random() < 0.8 else \
            srcs[int(rng.integers(len(srcs)))]
        b.connect(feed, next(iter(blk.inputs.values())))
        outs.append(next(iter(blk.outputs.values())))
    if seed % 2:  # a unit conversion with an offset inside the fused part: x' = A x + B v + e
        hot = b.add(bl.FirstOrderLag("hot", u(0.05, 0.3), unit="degC"))
        kel = b.add(bl.FirstOrderLag("kel", u(0.05, 0.3), unit="K"))
        b.connect(outs[-1], hot.u)
        b.connect(hot.y, kel.u)
        outs.append(kel.y)
    record = [outs[-1], outs[len(outs) // 2], srcs[-1]]
    return b, outs, record


@pytest.mark.parametrize("seed", range(24))
def test_all_linear_diagrams_propagate_in_c_as_in_the_python_loop(seed):
    solver = SOLVERS[seed % 4]
    dt = [1e-3, 5e-4, 2e-3][seed % 3]
    t_end = 0.4 + 0.00031 * (seed % 2)  # the end off the grid for odd seeds

    def run(compiled):
        d, rec = linear_diagram(seed)
        sim = Simulator(d, solver=solver, dt=dt, record=rec, compiled=compiled)
        return sim.run(t_end), sim

    py, _ = run(False)
    c, sim = run(True)
    assert py.diagnostics["propagator"] is True, "the corpus must be of the class"
    assert c.diagnostics["compiled"] is True and sim.route.run.propagates
    assert c.diagnostics["propagator"] is True
    _compare(py, c)
    for key in ("steps", "partial_steps", "rhs_evals"):
        assert c.diagnostics[key] == py.diagnostics[key], key
    assert py.diagnostics["partial_steps"] > 0  # (the stages' path is taken too)
    assert sim.program.propagator.has_g == bool(seed % 2)


@pytest.mark.parametrize("seed", range(12))
def test_written_out_rows_equal_the_tables_loop_bit_for_bit(seed, monkeypatch):
    """The sparse product written out row by row (constants and columns in the code) and
    the loop over the CSR tables (matrices above ``UNROLL_MAX_NNZ`` entries) sum in the same
    order: the same bits, both forms checked to be the ones compiled."""
    from cosim.codegen import propagate_c

    forms = []
    rows = propagate_c._rows

    def spy(Mx, g):
        text = rows(Mx, g)
        forms.append("tables" if "COSIM_PROP_DATA" in text else
                     "written" if "cosim_prop_rows0(z, x)" in text else "?")
        return text

    monkeypatch.setattr(propagate_c, "_rows", spy)

    def run(limit):
        monkeypatch.setattr(propagate_c, "UNROLL_MAX_NNZ", limit)
        d, rec = linear_diagram(seed)
        sim = Simulator(d, solver=SOLVERS[seed % 4], dt=1e-3, record=rec, compiled=True)
        r = sim.run(0.3 + 0.00031 * (seed % 2))
        assert r.diagnostics["compiled"] is True and r.diagnostics["propagator"] is True
        return r

    written, tables = run(10**9), run(-1)
    assert forms == ["written", "tables"]
    assert np.array_equal(written.time, tables.time)
    for k in written.signals:
        assert np.array_equal(written[k], tables[k]), k


@pytest.mark.parametrize("seed", range(8))
def test_with_zero_crossings_both_loops_take_the_stages(seed):
    """A linear diagram with a counter of a linear output's crossings: the Python loop does
    not propagate where it locates events (Simulator._build_program), so neither does the
    C; the crossings are located alike."""
    from tests.corpus.event_diagrams import LevelCounter

    b, outs, _ = linear_builder(seed)  # a level the watched output crosses: its mid-range
    y = Simulator(b.build(), solver="rk4", dt=1e-3, record=[outs[0]],
                  compiled=False).run(0.6)[outs[0].path]
    level = 0.5 * (float(np.min(y)) + float(np.max(y)))

    def run(compiled):
        b, outs, record = linear_builder(seed)
        lc = b.add(LevelCounter("lc", level=level, direction=0))
        b.connect(outs[0], lc.u)
        sim = Simulator(b.build(), solver=SOLVERS[seed % 4], dt=1e-3,
                        record=[*record, lc.count, lc.sign], compiled=compiled)
        return sim.run(0.6), sim

    py, _ = run(False)
    c, sim = run(True)
    assert py.diagnostics["propagator"] is False and not sim.route.run.propagates
    assert c.diagnostics["compiled"] is True and c.diagnostics["propagator"] is False
    assert py.diagnostics["events"] > 0, "the corpus must cross"
    for key in ("events", "steps", "partial_steps"):
        assert c.diagnostics[key] == py.diagnostics[key], key
    _compare(py, c)


def test_a_state_dependent_block_keeps_the_stages():
    d, rec = linear_diagram(1)
    b = DiagramBuilder("nl")
    b.add(d)
    sq = b.add(bl.Integrator("z"))
    f = b.add(FunctionBlock("f", lambda a: -a * abs(a)))
    b.connect("z.y", f.in_ports[0])
    b.connect(f.out_ports[0], "z.u")
    sim = Simulator(b.build(), solver="rk4", dt=1e-3, record=[sq.y], compiled=True)
    r = sim.run(0.1)
    assert r.diagnostics["propagator"] is False and not sim.route.run.propagates
    assert r.diagnostics["rhs_evals"] == 4 * r.diagnostics["steps"]


def _program(diagram):
    sim = Simulator(diagram, solver="rk4", dt=1e-3, compiled=False)
    sim.initialize()
    return Program(diagram, sim.ctx, step_ticks=1_000_000, in_process=True,
                   state_events=True).build()


def test_which_outputs_are_time_only():
    b = DiagramBuilder("tc")
    b.add(bl.Sine("s", 1.0, 2.0))
    f = b.add(FunctionBlock("f", lambda a: math.tanh(a)))
    b.add(bl.Integrator("z"))
    g = b.add(FunctionBlock("g", lambda a: a * a))
    b.add(bl.ZeroOrderHold("h", 0.01))
    hf = b.add(FunctionBlock("hf", lambda a: a + 1.0))
    b.connect("s.y", f.in_ports[0])
    b.connect(f.out_ports[0], "z.u")
    b.connect("z.y", g.in_ports[0])
    b.connect("s.y", "h.u")
    b.connect("h.y", hf.in_ports[0])
    d = b.build()
    prog = _program(d)
    only = {op.comment.split("'")[1] for op in prog.ops if op.time_only}
    assert only == {"s", "f"}  # not: the state's output, what it feeds, a held sample
    assert not prog.time_only_mt  # (a sine reads the time, not the mode time)
    b2 = DiagramBuilder("tc2")
    b2.add(bl.Step("st", 0.5, 0.0, 1.0))
    b2.add(bl.Integrator("z"))
    b2.connect("st.y", "z.u")
    assert _program(b2.build()).time_only_mt  # a step selects its branch by the mode time
