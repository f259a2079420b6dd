"""Output groups, pruning of unread outputs, monitors and one-step-per-advance subsystems."""

import math

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.sources import Constant
from cosim import Block, DiagramBuilder, DiagramSubsystem, Simulator
from cosim.errors import PortError, RateError


class Pair(Block):
    """Two outputs from one calculation (counted), feedthrough from u."""

    def __init__(self, name):
        super().__init__(name)
        self.calls = 0
        self.u = self.declare_input("u")
        self.a, self.b = self.declare_outputs([("a", None), ("b", None)], self._both)

    def _both(self, ctx):
        self.calls += 1
        u = ctx.input(self.u)
        return 2.0 * u, 3.0 * u


class Decay(Block):
    """x' = -x with a monitor counting the accepted steps and the lowest x seen."""

    def __init__(self, name):
        super().__init__(name)
        self.x = self.declare_continuous_state("x", 1.0)
        self.y = self.declare_output("y", lambda ctx: ctx.state(self.x), depends_on=())
        self.seen = []
        self.declare_monitor(lambda ctx: self.seen.append((ctx.time, ctx.state(self.x))))

    def derivatives(self, ctx):
        return -ctx.state(self.x)


class Count(Block):
    """A single output that counts its evaluations (the engine's evaluation count)."""

    def __init__(self, name):
        super().__init__(name)
        self.calls = 0
        self.u = self.declare_input("u")
        self.y = self.declare_output("y", self._calc)

    def _calc(self, ctx):
        self.calls += 1
        return ctx.input(self.u)


def _pair_diagram():
    b = DiagramBuilder("pair")
    c = b.add(Constant("c", 1.5))
    p = b.add(Pair("p"))
    n = b.add(Count("n"))
    ia = b.add(Integrator("ia"))
    ib = b.add(Integrator("ib"))
    b.connect(c.y, p.u)
    b.connect(p.a, ia.u)
    b.connect(p.b, n.u)
    b.connect(n.y, ib.u)
    return b.build(), p, n


def test_output_group_is_computed_once_per_evaluation():
    d, p, n = _pair_diagram()
    sim = Simulator(d, solver="euler", dt=0.1, record=["ia.y", "ib.y"])
    res = sim.run(1.0)
    assert res["ia.y"][-1] == pytest.approx(3.0)
    assert res["ib.y"][-1] == pytest.approx(4.5)
    assert n.calls > 10 and p.calls == n.calls  # two outputs, one call per evaluation


def test_output_group_members_keep_their_own_ports():
    _, p, _ = _pair_diagram()
    assert list(p.outputs) == ["a", "b"]
    assert p.a.group is p.b.group and p.a.group.calc == p._both


def test_unread_outputs_are_not_computed_and_reading_them_says_so():
    b = DiagramBuilder("prune")
    c = b.add(Constant("c", 1.0))
    p = b.add(Pair("p"))
    i = b.add(Integrator("i"))
    b.connect(c.y, p.u)
    b.connect(c.y, i.u)
    d = b.build()
    sim = Simulator(d, solver="rk4", dt=0.1, record=["i.y"])
    sim.run(1.0)
    assert p.calls == 0  # neither a nor b is read by anything
    with pytest.raises(PortError,
                       match=r"output 'p.a' is not computed in this run.*record=\[..., 'p.a'\]"):
        sim.ctx.output(p.a)
    # recorded, the same output is computed
    p2 = Pair("p")
    b = DiagramBuilder("prune")
    c = b.add(Constant("c", 1.0))
    b.add(p2)
    b.connect(c.y, p2.u)
    d = b.build()
    res = Simulator(d, solver="rk4", dt=0.1, record=["p.a"]).run(1.0)
    assert p2.calls > 0 and res["p.a"][-1] == 2.0


@pytest.mark.parametrize("solver,dt", [("rk4", 0.01), ("rk45", None)])
def test_monitor_sees_every_accepted_step(solver, dt):
    b = DiagramBuilder("mon")
    blk = b.add(Decay("d"))
    d = b.build()
    sim = Simulator(d, solver=solver, dt=dt, record=False)
    sim.run(1.0)
    times = [t for t, _ in blk.seen]
    assert len(times) >= sim.stats["steps"]  # every step, plus the major points
    for t, x in blk.seen:  # the state the monitor read is the solution at its time
        assert x == pytest.approx(math.exp(-t), rel=1e-4)
    assert max(times) == pytest.approx(1.0)


def test_monitor_keeps_the_fixed_step_fast_path():
    b = DiagramBuilder("mon")
    b.add(Decay("d"))
    sim = Simulator(b.build(), solver="rk4", dt=0.01, record=False)
    sim.run(1.0)
    # the fast path evaluates the outputs once per run of steps, not after each step
    assert sim.stats["steps"] == 100 and sim.stats["partial_steps"] == 0


def test_dt_advance_takes_one_solver_step_per_communication_step():
    b = DiagramBuilder("sub")
    dec = b.add(Decay("d"))
    b.export_output(dec.y, "y")
    sub = DiagramSubsystem(b.build(), solver="rk4", dt="advance")
    sub.initialize(0)
    tick = 0
    for h_ms in (3, 7, 1, 10):  # arbitrary communication steps
        sub.do_step(tick, h_ms * 1_000_000)
        tick += h_ms * 1_000_000
    assert sub.sim.stats["steps"] == 4
    # one RK4 step over h: the local error of RK4 on x' = -x, not a finer grid's
    y = 1.0
    for h in (3e-3, 7e-3, 1e-3, 10e-3):
        y *= 1 - h + h * h / 2 - h ** 3 / 6 + h ** 4 / 24
    out = sub.get_outputs()["y"]
    assert out == pytest.approx(y, rel=1e-15, abs=0.0)
    assert abs(out - np.exp(-0.021)) > 5e-13  # 4 RK4 steps, not a finer grid


def test_dt_advance_needs_a_fixed_step_solver():
    b = DiagramBuilder("sub")
    b.add(Decay("d"))
    with pytest.raises(RateError, match="dt='advance' needs a fixed-step solver"):
        Simulator(b.build(), solver="rk45", dt="advance")


def test_decimating_recorder_evaluates_outputs_only_for_the_samples_it_keeps():
    b = DiagramBuilder("dec")
    c = b.add(Constant("c", 1.0))
    i = b.add(Integrator("i"))
    n = b.add(Count("n"))
    b.connect(c.y, i.u)
    b.connect(i.y, n.u)  # n.y is read by the recorder only
    sim = Simulator(b.build(), solver="rk4", dt=0.01, record=["n.y"], record_every=10)
    res = sim.run(1.0)
    assert sim.stats["steps"] == 100
    np.testing.assert_allclose(res["n.y"], res.time, atol=1e-12)  # y = t, at the kept samples
    assert len(res.time) == 11
    assert n.calls <= 11 + 3, n.calls  # the kept samples, the start and the last step
