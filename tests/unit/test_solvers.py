"""Measured convergence order of every fixed-step method, on the engine itself."""

import math

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.lti import StateSpace
from blocks.sources import Sine
from cosim import Block, DiagramBuilder, FunctionBlock, Simulator
from cosim.solvers import AB3, RK4, Euler, ExplicitRungeKutta, Heun, Midpoint


class Nonlinear(Block):
    """x' = -x^3/4 + sin(t) + cos(x): no closed form, reference from a fine RK4 run.

    Ports
    -----
    out  x   state only
    """

    def __init__(self, name):
        super().__init__(name)
        self.s = self.declare_continuous_state("x", 0.5)
        self.x = self.declare_output("x", lambda ctx: ctx.state(self.s), depends_on=())

    def derivatives(self, ctx):
        x = ctx.state(self.s)
        return -x ** 3 / 4 + math.sin(ctx.time) + math.cos(x)


def _run(solver, dt, t_end=2.0):
    b = DiagramBuilder("nl")
    b.add(Nonlinear("n"))
    d = b.build()
    return Simulator(d, solver=solver, dt=dt, record=["n.x"]).run(t_end)["n.x"][-1]


@pytest.mark.parametrize("solver, order", [("euler", 1), ("heun", 2), ("midpoint", 2),
                                           ("rk4", 4), ("ab3", 3)])
def test_convergence_order(solver, order):
    ref = _run("rk4", 1e-4)
    h = 0.02 if order < 4 else 0.05
    e1 = abs(_run(solver, h) - ref)
    e2 = abs(_run(solver, h / 2) - ref)
    measured = math.log2(e1 / e2)
    assert abs(measured - order) < 0.25, (solver, measured)


def test_solver_classes_declare_their_order():
    assert [c.order for c in (Euler, Heun, Midpoint, RK4, AB3)] == [1, 2, 2, 4, 3]


def test_ab3_restarts_after_reset_and_counts_evaluations():
    calls = []

    def f(t, y):
        calls.append(t)
        return -y

    s = AB3(f)
    y = np.array([1.0])
    for k in range(5):
        y = s.advance(k * 0.1, y, 0.1)
    # 2 RK4 starter steps (f_n, reused as the starter's first stage, + 3 more each)
    # + 3 AB3 steps (1 each); counted as called
    assert s.nfev == len(calls) == 2 * 4 + 3
    assert calls[:4] == [0.0, 0.05, 0.05, 0.1]  # no second evaluation at t = 0
    assert y[0] == pytest.approx(math.exp(-0.5), rel=2e-4)  # AB3 error ~ h^3


@pytest.mark.parametrize("solver", ["euler", "heun", "rk4", "midpoint"])
def test_fused_propagator_equals_generic_rk(solver):
    """The exact propagator of a fused linear system is the same RK method."""
    def build():
        b = DiagramBuilder("lin")
        src = b.add(Sine("src", 1.0, 2.0))
        p = b.add(StateSpace("p", [[0, 1], [-20, -2]], [[0], [1]], [[1, 0]], [[0]]))
        b.connect(src.y, p.u)
        return b.build()
    a = Simulator(build(), solver=solver, dt=1e-3, record=["p.y"])
    ra = a.run(1.0)
    assert a.diagnostics()["propagator"]
    b = Simulator(build(), solver=solver, dt=1e-3, record=["p.y"], fuse_linear=False)
    rb = b.run(1.0)
    assert not b.diagnostics()["propagator"]
    np.testing.assert_allclose(ra["p.y"], rb["p.y"], rtol=0, atol=1e-13)


@pytest.mark.parametrize("solver", ["rk45", "dop853", "radau", "bdf", "lsoda"])
def test_variable_step_solvers_meet_tolerance(solver):
    b = DiagramBuilder("exp")
    f = b.add(FunctionBlock("f", lambda x: -2.0 * x))
    i = b.add(Integrator("i", x0=1.0))
    b.connect(i.y, f.in_ports[0])
    b.connect(f.out_ports[0], i.u)
    res = Simulator(b.build(), solver=solver, dt=0.1, rtol=1e-9, atol=1e-12,
                    record=["i.y"]).run(1.0)
    np.testing.assert_allclose(res.time, np.arange(11) * 0.1, atol=1e-12)
    np.testing.assert_allclose(res["i.y"], np.exp(-2.0 * res.time), rtol=1e-6)


def test_standalone_step_contract_like_scipy():
    s = RK4(lambda t, y: -y, t0=0.0, y0=[1.0], h=0.1, t_bound=0.35)
    ts = []
    while s.status == "running":
        s.step()
        ts.append(s.t)
    assert ts == pytest.approx([0.1, 0.2, 0.30000000000000004, 0.35])
    assert s.y[0] == pytest.approx(math.exp(-0.35), rel=1e-6)
    assert s.nfev == 16


def test_variable_step_without_grid_records_every_accepted_step():
    b = DiagramBuilder("exp")
    f = b.add(FunctionBlock("f", lambda x: -2.0 * x))
    i = b.add(Integrator("i", x0=1.0))
    b.connect(i.y, f.in_ports[0])
    b.connect(f.out_ports[0], i.u)
    sim = Simulator(b.build(), solver="rk45", rtol=1e-8, atol=1e-10, record=["i.y"])
    res = sim.run(2.0)
    assert len(res.time) == sim.diagnostics()["steps"] + 1
    assert res.time[-1] == 2.0 and np.all(np.diff(res.time) > 0)
    np.testing.assert_allclose(res["i.y"], np.exp(-2.0 * res.time), rtol=1e-6)


# ------------------------------------------------------------ solver classes, registry
class Ralston(ExplicitRungeKutta):
    """Ralston's second-order method: a user's solver, defined by its tableau alone."""

    order, name = 2, "ralston-test"
    tableau = (((0.0, 0.0), (2 / 3, 0.0)), (0.25, 0.75), (0.0, 2 / 3))


def _linear(solver, dt=0.01):
    b = DiagramBuilder("lin")
    src = b.add(Sine("src", 1.0, 2.0))
    p = b.add(StateSpace("p", [[0, 1], [-20, -2]], [[0], [1]], [[1, 0]], [[0]]))
    b.connect(src.y, p.u)
    sim = Simulator(b.build(), solver=solver, dt=dt, record=["p.y"])
    return sim, sim.run(1.0)["p.y"]


def test_a_solver_class_is_passed_as_a_name_is():
    """``solver=RK4`` is ``solver="rk4"`` bit for bit; a user's class needs no registry
    edit: its tableau alone gives it the fused propagation and its order."""
    a, ya = _linear(RK4)
    b, yb = _linear("rk4")
    assert a.solver_name == "rk4" and a.solver_class is RK4 and np.array_equal(ya, yb)
    sim, _ = _linear(Ralston)
    assert sim.solver_name == "ralston-test" and sim.program.propagator is not None
    ref = _run("rk4", 1e-4)
    e1, e2 = abs(_run(Ralston, 0.02) - ref), abs(_run(Ralston, 0.01) - ref)
    assert abs(math.log2(e1 / e2) - 2) < 0.25


def test_a_multistep_solver_gets_no_fused_propagator():
    sim, _ = _linear(AB3)
    assert sim.program.propagator is None and sim.program.solver.multistep


def test_register_solver_names_a_class_once():
    from cosim import solvers
    try:
        assert solvers.register_solver(Ralston) is Ralston
        assert solvers.resolve_solver("Ralston-Test") is Ralston
        assert solvers.FIXED_STEP["ralston-test"] is Ralston
        assert _run("ralston-test", 0.01) == _run(Ralston, 0.01)
        assert solvers.register_solver(Ralston) is Ralston  # again: the same class
        clash = type("Clash", (solvers.ExplicitRungeKutta,), {"name": "rk4"})
        with pytest.raises(ValueError, match="'rk4' is taken by RK4"):
            solvers.register_solver(clash)
        with pytest.raises(TypeError, match="not a FixedStepSolver subclass"):
            solvers.register_solver(int)
    finally:
        solvers.SOLVERS.pop("ralston-test", None)
        solvers.FIXED_STEP.pop("ralston-test", None)


def test_unknown_solvers_are_refused_with_the_choices():
    with pytest.raises(ValueError, match=r"unknown solver 'rk5'.*rk4.*lsoda.*solver class"):
        _run("rk5", 0.01)
    with pytest.raises(ValueError, match="neither a FixedStepSolver subclass"):
        _run(Nonlinear, 0.01)


def test_variable_step_solvers_are_classes_too():
    from cosim.solvers import SOLVERS, VariableStepSolver
    bdf = SOLVERS["bdf"]
    assert issubclass(bdf, VariableStepSolver) and bdf.stiff and not SOLVERS["rk45"].stiff
    import scipy.integrate as si
    assert bdf.scipy_class() is si.BDF
    b = DiagramBuilder("nl")
    b.add(Nonlinear("n"))
    d = b.build()
    y1 = Simulator(d, solver=bdf, dt=0.1, record=["n.x"]).run(1.0)["n.x"]
    y2 = Simulator(d, solver="bdf", dt=0.1, record=["n.x"]).run(1.0)["n.x"]
    assert np.array_equal(y1, y2)
