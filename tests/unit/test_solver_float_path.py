"""The fixed-step float path (issue 30): small systems' stages in Python floats, bit for bit.

The explicit Runge-Kutta methods compute the stages of a system of at most
``FLOAT_STATES_MAX`` states element by element in Python floats
(:mod:`cosim.solvers`), and the simulator gives them a generated right-hand side that
takes and returns lists (:meth:`cosim.evaluator.Evaluator.make_rhs`).  Oracle: the array
path, the same solver with ``fun_floats`` off / ``FLOAT_STATES_MAX = 0``; every result
must be equal bit for bit (``np.array_equal``), over a generated corpus of right-hand
sides, sizes, step sizes and diagrams.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import cosim.simulator as simulator_module
from blocks.continuous import Integrator
from blocks.discrete import ZeroOrderHold
from blocks.sources import Sine
from cosim import Block, DiagramBuilder, FunctionBlock, Simulator
from cosim.solvers import FIXED_STEP, FLOAT_STATES_MAX

FLOAT_SOLVERS = ("euler", "heun", "midpoint", "rk4")


def _rhs_corpus(seed: int, n: int):
    """A nonlinear right-hand side on ``n`` states with random coefficients."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n))
    b = rng.normal(size=n)
    w = rng.uniform(0.5, 3.0)

    def f(t, y):
        y = np.asarray(y, dtype=float)
        return np.tanh(a @ y) + b * math.sin(w * t) - 0.3 * y ** 3

    return f


@pytest.mark.parametrize("solver", FLOAT_SOLVERS)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_float_step_equals_array_step_bit_for_bit(solver, n):
    cls = FIXED_STEP[solver]
    for seed in range(4):
        f = _rhs_corpus(1000 * n + seed, n)
        array = cls(f)
        floats = cls(f, fun_floats=lambda t, y, f=f: f(t, y).tolist())
        assert floats.fun_floats is not None and array.fun_floats is None
        rng = np.random.default_rng(seed)
        y = rng.normal(size=n)
        ya, yf = y.copy(), y.copy()
        t = float(rng.uniform(0, 5))
        for k in range(25):
            h = float(rng.choice([1e-3, 0.0137, 0.1, 0.5]))
            ya = array.advance(t + k * 0.1, ya, h)
            yf = floats.advance(t + k * 0.1, yf, h)
            assert isinstance(yf, np.ndarray) and yf.dtype == float
            assert np.array_equal(ya, yf), (solver, n, seed, k)
        assert array.nfev == floats.nfev


def test_methods_without_a_float_step_ignore_fun_floats():
    ab3 = FIXED_STEP["ab3"](lambda t, y: -y, fun_floats=lambda t, y: [-v for v in y])
    assert ab3.fun_floats is None


class Pendulums(Block):
    """``k`` scalar states in one block: x_i' = -sin(x_{i-1}) + u - x_i / 10, returned as
    a float (k = 1) or, by ``form``, a tuple, a list, an array, a (1, k) array.

    Ports
    -----
    in   u  scalar
    out  y  scalar  (state only: the sum of the states)
    """

    def __init__(self, name, k, x0, form="tuple"):
        super().__init__(name)
        self.k, self.form = k, form
        self.u = self.declare_input("u")
        self.xs = [self.declare_continuous_state(f"x{i}", float(x0 + 0.1 * i))
                   for i in range(k)]
        self.y = self.declare_output("y", lambda ctx: sum(ctx.state(h) for h in self.xs),
                                     depends_on=())

    def derivatives(self, ctx):
        x = [ctx.state(h) for h in self.xs]
        u = ctx.input(self.u)
        d = [-math.sin(x[i - 1]) + u - 0.1 * x[i] for i in range(self.k)]
        if self.k == 1:
            return d[0]
        return {"tuple": tuple, "list": list, "array": np.array,
                "row": lambda v: np.array([v])}[self.form](d)


class Vector(Block):
    """One vector state of size ``k`` (returned as an array).

    Ports
    -----
    in   u  scalar
    out  y  scalar (state only)
    """

    def __init__(self, name, k):
        super().__init__(name)
        self.x = self.declare_continuous_state("x", np.linspace(0.1, 0.5, k))
        self.u = self.declare_input("u")
        self.y = self.declare_output("y", lambda ctx: float(ctx.state(self.x)[0]),
                                     depends_on=())

    def derivatives(self, ctx):
        x = ctx.state(self.x)
        return np.roll(x, 1) * 0.5 - x ** 2 + ctx.input(self.u)


def _diagram(kind: int, k: int):
    """Generated diagrams: scalar-state blocks (tuples, one float), a vector state, a fused
    linear integrator, a sampled block on the derivatives' path, a feedthrough chain."""
    b = DiagramBuilder(f"d{kind}_{k}")
    src = b.add(Sine("src", amplitude=0.7, frequency_hz=2.0))
    hold = b.add(ZeroOrderHold("hold", 0.005))
    b.connect(src.y, hold.u)
    p = b.add(Pendulums("p", k, 0.2 * kind, ("tuple", "list", "array", "row")[kind]))
    if kind == 0:
        b.connect(src.y, p.u)
    else:
        b.connect(hold.y, p.u)
    sq = b.add(FunctionBlock("sq", lambda v: math.tanh(v), inputs=["v"], outputs=["w"]))
    b.connect(p.y, sq.in_ports[0])
    if kind >= 2:
        v = b.add(Vector("v", 3))
        b.connect(sq.out_ports[0], v.u)
    if kind >= 3:
        i = b.add(Integrator("i"))
        b.connect(sq.out_ports[0], i.u)
    return b.build()


@pytest.mark.parametrize("solver", FLOAT_SOLVERS)
@pytest.mark.parametrize("kind", [0, 1, 2, 3])
def test_simulator_float_path_equals_array_path(solver, kind, monkeypatch):
    for k in (1, 2, 4):
        d = _diagram(kind, k)
        n = d.compile().n_continuous
        fast = Simulator(d, solver=solver, dt=1e-3, record="all")
        res_fast = fast.run(0.3)
        assert (fast.program.solver.fun_floats is not None) == (n <= FLOAT_STATES_MAX)
        with monkeypatch.context() as m:
            m.setattr(simulator_module, "FLOAT_STATES_MAX", 0)
            slow = Simulator(d, solver=solver, dt=1e-3, record="all")
            res_slow = slow.run(0.3)
            assert slow.program.solver.fun_floats is None
        assert list(res_fast.signals) == list(res_slow.signals)
        assert np.array_equal(res_fast.time, res_slow.time)
        for name in res_fast.signals:
            assert np.array_equal(res_fast[name], res_slow[name]), (solver, kind, k, name)
        for key in ("rhs_evals", "steps", "reused_evaluations"):
            assert res_fast.diagnostics[key] == res_slow.diagnostics[key], key


def test_a_small_system_stage_does_not_build_the_state_array():
    """Scalar states only: a stage reads them from the list; ``ctx.xc`` stays unbuilt."""
    d = _diagram(1, 3)
    sim = Simulator(d, solver="rk4", dt=1e-3, record=False)
    sim.initialize()
    solver = sim.program.solver
    rhs = solver.fun_floats
    assert rhs is not None
    seen = []

    def spy(t, y):
        out = rhs(t, y)
        if type(y) is list:
            seen.append(sim.ctx._xc is None)
        return out

    solver.fun_floats = spy
    sim.advance_to(0.05)
    assert len(seen) == 3 * 50 and all(seen)


class Failing(Block):
    """``k`` scalar states whose derivatives raise after ``t_fail``.

    Ports
    -----
    out  y  scalar (state only)
    """

    def __init__(self, name, k, t_fail):
        super().__init__(name)
        self.xs = [self.declare_continuous_state(f"x{i}", 1.0) for i in range(k)]
        self.t_fail = t_fail
        self.y = self.declare_output("y", lambda ctx: ctx.state(self.xs[0]), depends_on=())

    def derivatives(self, ctx):
        if ctx.time > self.t_fail:
            raise ZeroDivisionError("boom")
        d = tuple(-ctx.state(h) for h in self.xs)
        return d[0] if len(d) == 1 else d


@pytest.mark.parametrize("k", [1, 2, FLOAT_STATES_MAX + 4])
def test_an_error_in_a_stage_names_the_block(k):
    from cosim.errors import StepError
    b = DiagramBuilder("err")
    b.add(Failing("bad", k, 0.0105))
    with pytest.raises(StepError, match=r"evaluating block 'bad' derivatives failed at "
                                        r"t = 0.011 s: ZeroDivisionError: boom"):
        Simulator(b.build(), solver="rk4", dt=1e-3).run(0.1)
