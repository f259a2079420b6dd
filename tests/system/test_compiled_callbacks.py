"""Blocks without a C form called back in Python from a compiled run
(:mod:`cosim.codegen.pycall`): the rest of the diagram in C, each such block at its own rate
at its place in the evaluation order.

The class: any diagram of C blocks with Python blocks of every kind that can be called back
(a sampled block with a Python-only state and side effects, an unsampled function of its
input and time, an output group, integer and boolean outputs, a ``FunctionBlock`` whose
function does not translate), generated from a seed (sources, gains, saturations, lags,
integrators, zero-order holds, unit delays; the Python blocks' outputs fed back into
integrators), every fixed-step solver.  Oracle: the Python loop (``compiled=False``): the same
recorded values (bit for bit with ``fuse_linear=False``, 1e-12 of each signal's range with fused
linear groups) and the same calls of the sampled Python blocks, in the same order with the
same inputs (their logs equal).  Then failures (a Python block's error is the Python loop's
error), Ctrl-C inside a call, what stays in Python and why, and the diagnostics.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

import blocks as bl
from cosim import Block, DiagramBuilder, FunctionBlock, Simulator
from cosim.errors import StepError
from tests.system.test_compiled_run import _compare

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

SOLVERS = ["rk4", "heun", "midpoint", "euler"]


class Averager(Block):
    """Sampled, no C form: the mean of its input over its hits (a Python-only state), the
    count (int) and whether the mean is positive (bool); every call logged (a side effect:
    an opaque state)."""

    def __init__(self, name: str, period: float, offset: float = 0.0) -> None:
        super().__init__(name)
        self.u = self.declare_input("u")
        self.acc = self.declare_discrete_state("acc", {"sum": 0.0, "n": 0})
        self.y = self.declare_output("y", self._mean, depends_on=())
        self.n = self.declare_output("n", lambda ctx: ctx.discrete(self.acc)["n"],
                                     dtype=np.int64, depends_on=())
        self.pos = self.declare_output("pos", lambda ctx: self._mean(ctx) > 0.0,
                                       dtype=np.bool_, depends_on=())
        self.declare_opaque_state("log")
        self.declare_periodic_update(period, self._update, offset)
        self.log: list = []

    def _mean(self, ctx):
        a = ctx.discrete(self.acc)
        return a["sum"] / a["n"] if a["n"] else 0.0

    def _update(self, ctx):
        u = ctx.input(self.u)
        self.log.append((ctx.ticks, ctx.time, u))
        a = ctx.discrete(self.acc)
        ctx.set_discrete(self.acc, {"sum": a["sum"] + u, "n": a["n"] + 1})


class Warp(Block):
    """Unsampled, no state, no C form: a function of its input and time."""

    def __init__(self, name: str, k: float) -> None:
        super().__init__(name)
        self.k = k
        self.u = self.declare_input("u")
        self.y = self.declare_output("y", self._calc)

    def _calc(self, ctx):
        table = {0: 1.0, 1: -0.5}  # (a dict: no C form)
        return self.k * math.atan2(ctx.input(self.u), 1.0 + ctx.time) + table[0]


class Split(Block):
    """An output group (one calc, two ports), no C form."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.u = self.declare_input("u")
        self.hi, self.lo = self.declare_outputs([{"name": "hi"}, {"name": "lo"}], self._calc)

    def _calc(self, ctx):
        v = ctx.input(self.u)
        return (max(v, 0.0), min(v, 0.0))


def _median3(u):
    return float(sorted([u, 0.25, -0.25])[1])  # sorted: not translated


def _diagram(seed: int):
    """Sources and C blocks with the Python blocks between them (module docstring); returns
    the diagram and its sampled Python blocks."""
    rng = np.random.default_rng(seed)
    u = lambda lo, hi: float(rng.uniform(lo, hi))  # noqa: E731
    b = DiagramBuilder(f"cb{seed}")
    outs = []
    for i in range(int(rng.integers(1, 3))):
        src = b.add([bl.Sine(f"s{i}", u(0.3, 2), u(0.5, 4)),
                     bl.Step(f"s{i}", round(u(0.05, 0.4), 4), u(-2, 2), u(-1, 1)),
                     bl.Ramp(f"s{i}", u(-2, 2), round(u(0.0, 0.2), 4))][int(rng.integers(3))])
        outs.append(src.y)
    integ = b.add(bl.Integrator("x", u(-1, 1)))
    fb = b.add(bl.Sum("fb", "+-+"))
    b.connect(fb.y, integ.u)
    b.connect(integ.y, fb.input("u1"))
    outs.append(integ.y)
    sampled = []
    kinds = ["avg", "warp", "split", "fn", "gain", "sat", "lag", "zoh", "delay"]
    for k in range(int(rng.integers(4, 9))):
        kind = kinds[int(rng.integers(len(kinds)))] if k > 1 else ["avg", "warp"][k]
        src = outs[int(rng.integers(len(outs)))]
        period = float(rng.choice([0.002, 0.003, 0.005]))
        if kind == "avg":
            blk = b.add(Averager(f"a{k}", period, float(rng.choice([0.0, 0.001]))))
            sampled.append(blk)
            b.connect(src, blk.u)
            outs += [blk.y]
            n_out = blk.n  # (an integer output, recorded)
            cast = b.add(bl.Gain(f"c{k}", 0.01))
            b.connect(n_out, cast.u)
            outs.append(cast.y)
            continue
        if kind == "warp":
            blk = b.add(Warp(f"w{k}", u(-2, 2)))
            b.connect(src, blk.u)
        elif kind == "split":
            blk = b.add(Split(f"p{k}"))
            b.connect(src, blk.u)
            outs.append(blk.lo)
            blk = type("Hi", (), {"y": blk.hi})
        elif kind == "fn":
            blk = b.add(FunctionBlock(f"f{k}", _median3))
            b.connect(src, blk.inputs["u"])
            blk = type("Out", (), {"y": blk.outputs["y"]})
        elif kind == "gain":
            blk = b.add(bl.Gain(f"g{k}", u(-2, 2)))
            b.connect(src, blk.u)
        elif kind == "sat":
            blk = b.add(bl.Saturation(f"t{k}", u(-1, -0.2), u(0.2, 1)))
            b.connect(src, blk.u)
        elif kind == "lag":
            blk = b.add(bl.FirstOrderLag(f"l{k}", u(0.02, 0.3)))
            b.connect(src, blk.u)
        elif kind == "zoh":
            blk = b.add(bl.ZeroOrderHold(f"z{k}", period))
            b.connect(src, blk.u)
        else:
            blk = b.add(bl.UnitDelay(f"d{k}", period))
            b.connect(src, blk.u)
        outs.append(blk.y)
    # the Python blocks' outputs drive the integrator (through fb): their values reach C states
    b.connect(outs[-1], fb.input("u0"))
    b.connect(outs[int(rng.integers(len(outs) - 1))], fb.input("u2"))
    return b.build(), sampled


def _run(seed, compiled, fuse, solver, t_end=0.4):
    d, sampled = _diagram(seed)
    sim = Simulator(d, compiled=compiled, solver=solver, dt=1e-3, fuse_linear=fuse)
    return sim.run(t_end), [blk.log for blk in sampled], sim


@pytest.mark.parametrize("seed", range(40))
def test_python_blocks_called_back_equal_the_python_loop(seed):
    solver = SOLVERS[seed % 4]
    for fuse in (False, True):
        py, py_logs, _ = _run(seed, False, fuse, solver)
        c, c_logs, sim = _run(seed, True, fuse, solver)
        assert c.diagnostics["compiled"] is True
        assert c.diagnostics["called_back"], c.diagnostics
        assert np.array_equal(py.time, c.time)
        if fuse:
            _compare(py, c)
        else:
            for k, a in py.signals.items():
                assert c[k].dtype == a.dtype, k
                assert np.array_equal(np.asarray(a), np.asarray(c[k])), k
        # the same calls, in order, with the same inputs (fused: to their rounding)
        assert [[e[:2] for e in log] for log in py_logs] == \
            [[e[:2] for e in log] for log in c_logs]
        for a, b in zip(py_logs, c_logs):
            va, vb = np.array([e[2] for e in a]), np.array([e[2] for e in b])
            assert np.array_equal(va, vb) if not fuse else \
                np.max(np.abs(va - vb), initial=0.0) <= 1e-12 * max(1.0, np.max(np.abs(va)))
        # the context the C left: the Python blocks' own states included
        ref = Simulator(_diagram(seed)[0], compiled=False, solver=solver, dt=1e-3,
                        fuse_linear=fuse)
        ref.run(0.4)
        for h, i in ref.plan.dstate_index.items():
            a, c_ = ref.ctx.xd[i], sim.ctx.xd[i]
            if isinstance(a, dict):
                assert c_["n"] == a["n"], h
                assert c_["sum"] == a["sum"] if not fuse else \
                    abs(c_["sum"] - a["sum"]) <= 1e-12 * max(1.0, abs(a["sum"])), h


def test_the_diagnostics_name_the_blocks_called_back():
    c, _, _ = _run(1, True, True, "rk4", 0.05)
    names = c.diagnostics["called_back"]
    assert any("(Averager)" in n for n in names) and any("(Warp)" in n for n in names)


def _raising(at_s: float, where: str):
    """A sine into a Python block that raises at ``at_s`` (in its output or its update)."""
    class Fails(Block):
        def __init__(self):
            super().__init__("bad")
            self.u = self.declare_input("u")
            self.y = self.declare_output("y", self._y, depends_on=())
            self.declare_periodic_update(0.002, self._up)

        def _y(self, ctx):
            if where == "output" and ctx.time >= at_s:
                raise ValueError("broken output")
            return 1.0

        def _up(self, ctx):
            if where == "update" and ctx.time >= at_s:
                raise ValueError("broken update")

    b = DiagramBuilder("r")
    s = b.add(bl.Sine("s", 1.0, 1.0))
    g = [b.add(bl.Gain(f"g{i}", 1.0 + i)) for i in range(5)]
    i = b.add(bl.Integrator("i"))
    f = b.add(Fails())
    b.connect(s.y, g[0].u)
    for a, c in zip(g, g[1:]):
        b.connect(a.y, c.u)
    b.connect(g[-1].y, f.u)
    b.connect(f.y, i.u)
    return b.build()


@pytest.mark.parametrize("where", ["output", "update"])
def test_a_python_blocks_error_is_the_python_loops(where):
    errs, parts = [], []
    for compiled in (False, True):
        with pytest.raises(StepError) as info:
            Simulator(_raising(0.1, where), compiled=compiled, dt=1e-3).run(0.3)
        errs.append(str(info.value))
        parts.append(info.value.results)
    assert errs[0] == errs[1], errs
    assert np.array_equal(parts[0].time, parts[1].time)
    for k in parts[0].signals:
        assert np.array_equal(parts[0][k], parts[1][k]), k


def test_ctrl_c_in_a_call_stops_the_run_with_the_completed_rows():
    class Interrupts(Block):
        def __init__(self):
            super().__init__("stop")
            self.u = self.declare_input("u")
            self.y = self.declare_output("y", lambda ctx: 0.0, depends_on=())
            self.declare_periodic_update(0.001, self._up)

        def _up(self, ctx):
            if ctx.ticks == 250_000_000:
                raise KeyboardInterrupt

    def make():
        b = DiagramBuilder("k")
        s = b.add(bl.Sine("s", 1.0, 1.0))
        i = b.add(bl.Integrator("i"))
        k = b.add(Interrupts())
        g = [b.add(bl.Gain(f"g{j}", 1.0)) for j in range(4)]
        b.connect(s.y, k.u)
        b.connect(s.y, g[0].u)
        for a, c in zip(g, g[1:]):
            b.connect(a.y, c.u)
        b.connect(g[-1].y, i.u)
        return b.build()
    got = []
    for compiled in (True, False):
        sim = Simulator(make(), compiled=compiled, dt=1e-3, fuse_linear=False)
        with pytest.raises(KeyboardInterrupt) as info:
            sim.run(1.0)
        got.append((info.value.results, sim.ctx.ticks))
    (res, ticks), (ref, ref_ticks) = got
    # the rows up to the interrupted point (its outputs were sampled before its updates)
    assert res.time[-1] == pytest.approx(0.25) and ticks == ref_ticks == 250_000_000
    assert np.array_equal(ref.time, res.time)
    assert np.array_equal(ref["i.y"], res["i.y"])


def test_mostly_python_blocks_stay_in_python_unless_asked():
    """``compiled=None`` compiles only where the C takes over enough work: fewer than
    ``callback_share`` blocks in C per block called back stays in the Python loop (the reason
    says so); ``compiled=True`` compiles it anyway, equal to the Python loop."""
    b = DiagramBuilder("few")
    s = b.add(bl.Sine("s", 1.0, 1.0))
    w = b.add(Warp("w", 2.0))
    b.connect(s.y, w.u)
    d = b.build()
    sim = Simulator(d, dt=1e-3)
    sim.route.threshold = 1
    res = sim.run(0.2)
    why = res.diagnostics["compiled"]
    assert "1 of its 2 blocks would be called back in Python" in why and "'w'" in why, why
    c = Simulator(d, dt=1e-3, compiled=True).run(0.2)
    assert c.diagnostics["compiled"] is True and c.diagnostics["called_back"] == ["'w' (Warp)"]
    assert np.array_equal(c["w.y"], res["w.y"])


def test_what_cannot_be_called_back_keeps_the_python_loop_and_is_named():
    class Stateful(Block):  # a continuous state in Python: not called back
        def __init__(self):
            super().__init__("st")
            self.x = self.declare_continuous_state("x", 0.0)
            self.y = self.declare_output("y", lambda ctx: ctx.state(self.x))

        def derivatives(self, ctx):
            return 1.0

    b = DiagramBuilder("st")
    b.add(Stateful())
    res = Simulator(b.build(), dt=1e-3).run(0.01)
    assert "'st' (Stateful): not called back in Python: continuous states" in \
        res.diagnostics["compiled"], res.diagnostics["compiled"]


def test_the_fmu_export_still_refuses_a_python_block(tmp_path):
    from cosim.codegen.model import CodegenError
    from fmus import export_fmu
    b = DiagramBuilder("ex")
    s = b.add(bl.Sine("s", 1.0, 1.0))
    w = b.add(Warp("w", 2.0))
    b.connect(s.y, w.u)
    b.export_output(w.y, "y")
    with pytest.raises(CodegenError, match="'w' \\(Warp\\)"):
        export_fmu(b.build(), tmp_path / "ex.fmu", step=1e-3)


def _blowing_up(stateful: bool):
    """A state that overflows (``x' = 2000 x``) beside a Python block called back: a function
    of its input (``Warp``), or one with a state and a log (``Averager``)."""
    b = DiagramBuilder("boom")
    s = b.add(bl.Step("s", 0.0, 1.0))
    ss = b.add(bl.StateSpace("ss", [[2000.0]], [[1.0]], [[1.0]], [[0.0]]))
    py = b.add(Averager("py", 0.002) if stateful else Warp("py", 1.0))
    b.connect(s.y, ss.u)
    b.connect(ss.y, py.u)
    return b.build()


def test_a_c_failure_beside_a_pure_python_block_is_the_python_loops():
    """The Python block is a function of its input and time: the C's failure hands the slice
    to the Python loop (the block recomputed there), which raises its own error."""
    errs = []
    for compiled in (False, True):
        with pytest.raises(StepError) as ei:
            Simulator(_blowing_up(False), dt=1e-3, compiled=compiled,
                      fuse_linear=False).run(2.0)
        errs.append(ei.value)
    assert str(errs[0]) == str(errs[1])
    assert "the C run failed (continuous state 'ss.x[1]' became inf" in \
        errs[1].results.diagnostics["compiled"]
    _compare(errs[0].results, errs[1].results)


def test_a_c_failure_beside_a_stateful_python_block_raises_the_cs_message():
    """The Python block has a state and side effects (its log): the slice cannot be undone,
    so the C's own failure is raised where it happened, with the rows of the completed stops
    and the block's calls up to there (the same calls as the Python loop made)."""
    d = _blowing_up(True)
    with pytest.raises(StepError, match=r"the compiled run failed at t = .*continuous state "
                       r"'ss.x\[1\]' became inf.*'py' \(Averager\), is not handed to the "
                       "Python loop") as ei:
        Simulator(d, dt=1e-3, compiled=True, fuse_linear=False).run(2.0)
    ref_d = _blowing_up(True)
    with pytest.raises(StepError) as ref:
        Simulator(ref_d, dt=1e-3, compiled=False, fuse_linear=False).run(2.0)
    got, want = ei.value.results, ref.value.results
    assert np.array_equal(got.time, want.time)
    assert d.find("py").log == ref_d.find("py").log
