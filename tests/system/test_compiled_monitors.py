"""Monitors in the compiled Simulator (``CModel(monitors={name: CMonitor(condition)})``): the
C loop evaluates the conditions where the Python loop calls the monitors, returns to Python
where one holds, the monitors run on the context there, and the run goes on in C.

Checked against the Python loop (``compiled=False``): the hydraulic low-pressure warning
(the same warning, text and time, on generated volume and cylinder diagrams that fall below
the bound; the results equal), the returns to Python only where a condition holds, a monitor
at the last stop of an advance and across interleaved advances, what stays in Python and why,
and the example diagrams' reasons (no monitors named).
"""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

from cosim import Block, DiagramBuilder, Simulator
from cosim.codegen import CModel, CMonitor
from cosim.compiled_run import CompiledRun
from cosim.errors import BuildError
from tests.system.test_c_forms_hydraulics import T_END, _cylinders, _volumes
from tests.system.test_compiled_run import _compare

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler")]


def _run_warned(make, compiled, t_end, dt, solver="rk4"):
    """The results and the low-pressure warnings (text) of one run."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        res = Simulator(make(), compiled=compiled, solver=solver, dt=dt).run(t_end)
    return res, [str(w.message) for w in got if "min_pressure_pa" in str(w.message)]


@pytest.mark.parametrize("seed", range(6))
def test_the_low_pressure_warning_of_a_compiled_run_is_the_python_loops(seed):
    """Volumes and accumulators whose drain falls below 1 kPa (test_c_forms_hydraulics's
    corpus): the same warnings, same block, same time, in the same order."""
    T_END[0] = 1.0
    solver = ["rk4", "heun", "ab3"][seed % 3]
    py, py_w = _run_warned(lambda: _volumes(seed), False, 1.0, 1e-4, solver)
    c, c_w = _run_warned(lambda: _volumes(seed), True, 1.0, 1e-4, solver)
    assert c.diagnostics["compiled"] is True
    assert py_w and c_w == py_w
    _compare(py, c)


@pytest.mark.parametrize("seed", range(3))
def test_the_cylinders_warn_as_the_python_loop(seed):
    T_END[0] = 0.1
    py, py_w = _run_warned(lambda: _cylinders(seed), False, 0.1, 2e-6)
    c, c_w = _run_warned(lambda: _cylinders(seed), True, 0.1, 2e-6)
    assert c.diagnostics["compiled"] is True
    assert c_w == py_w
    _compare(py, c)


def test_the_c_returns_to_python_only_where_a_condition_holds(monkeypatch):
    """The warn-once monitor: one return per warning (its condition reads the warned flag
    the monitor set), none where no pressure is low."""
    calls = []
    real = CompiledRun._monitors

    def counting(self, *args):
        calls.append(self.sim.ctx.time)
        return real(self, *args)

    monkeypatch.setattr(CompiledRun, "_monitors", counting)
    T_END[0] = 1.0
    _, c_w = _run_warned(lambda: _volumes(1), True, 1.0, 1e-4)
    assert len(calls) == len(c_w) >= 1


class _Late(Block):
    """``x' = 1``; a monitor that records the times it acts at: from ``t_on`` on, once per
    ``every`` seconds (its C condition: exactly when it acts)."""

    def __init__(self, name, t_on, every):
        super().__init__(name)
        self.t_on, self.every = t_on, every
        self.x = self.declare_continuous_state("x", 0.0)
        self.next = self.declare_discrete_state("next", t_on)
        self.y = self.declare_output("y", lambda c: float(c.state(self.x)), depends_on=())
        self.log: list = []
        self.declare_monitor(self._act, name="late")

    def derivatives(self, ctx):
        return 1.0

    def _act(self, ctx):
        if ctx.time >= ctx.discrete(self.next):
            self.log.append(ctx.time)
            ctx.set_discrete(self.next, ctx.discrete(self.next) + self.every)

    def c_model(self, cg):
        return CModel(outputs={"y": f"{cg.y(self.y)} = {cg.x(self.x)};"},
                      derivatives=f"{cg.dx(self.x)} = 1.0;",
                      monitors={"late": CMonitor(f"{cg.t} >= {cg.xd(self.next)}")})


def _late():
    b = DiagramBuilder("late")
    b.add(_Late("blk", 0.25, 0.125))
    return b.build()


def test_monitors_at_the_last_stop_and_across_interleaved_advances():
    """A monitor acting at the end of an advance (0.5 s), then C and Python advances in
    turn: it acts at the same times as in one Python run, the discrete state it sets goes
    over both ways."""
    logs = []
    for mode in ("python", "c", "mixed"):
        d = _late()
        sim = Simulator(d, compiled=mode != "python", solver="rk4", dt=1e-3)
        sim.advance_to(0.5)
        if mode == "mixed":
            sim.route.compiled = False
        sim.advance_to(0.8)
        sim.route.compiled = mode != "python"
        sim.advance_to(1.0)
        res = sim.finish()
        logs.append((d.find("blk").log, res))
    assert logs[0][0] == [0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0]
    for log, res in logs[1:]:
        assert log == logs[0][0]
        _compare(logs[0][1], res)


class _Unconditioned(_Late):
    def c_model(self, cg):
        cm = super().c_model(cg)
        cm.monitors = {}
        return cm


def test_a_monitor_without_a_c_condition_keeps_the_python_loop_with_the_reason():
    b = DiagramBuilder("py")
    b.add(_Unconditioned("blk", 0.25, 0.125))
    d = b.build()
    with pytest.raises(BuildError, match="gives no C condition for its monitor 'late'"):
        Simulator(d, compiled=True, solver="rk4", dt=1e-3).initialize()
    sim = Simulator(d, solver="rk4", dt=1e-3)
    sim.route.threshold = 0
    res = sim.run(1.0)
    assert "gives no C condition for its monitor 'late'" in res.diagnostics["compiled"]


def test_the_example_diagrams_no_longer_stay_in_python_for_monitors():
    """The paper reel (hydraulic cylinders with low-pressure monitors, the nip-load monitor's
    zero crossings) and the bouncing ball compile; the LIM manipulator names other reasons
    (blocks without a C form), never monitors."""
    from bench.compiled_coverage import scan
    rows = {r["example"]: r for r in scan()}
    assert "monitor" not in rows["lim_manipulator"]["reason"], rows["lim_manipulator"]
    assert rows["paper_reel"]["compiled"] is True and rows["bouncing_ball"]["compiled"] is True
    assert all("zero crossings of" not in r["reason"] and "monitors (" not in r["reason"]
               for r in rows.values())


def test_a_monitor_sees_the_point_as_in_the_python_loop():
    """The context a monitor gets from C: the time, the tick and the states of the point."""
    seen = []

    class Spy(_Late):
        def _act(self, ctx):
            if ctx.time >= ctx.discrete(self.next):
                seen.append((ctx.time, float(ctx.state(self.x)), ctx.ticks))
                ctx.set_discrete(self.next, ctx.discrete(self.next) + self.every)

    for compiled in (False, True):
        b = DiagramBuilder("spy")
        b.add(Spy("blk", 0.1, 0.3))
        Simulator(b.build(), compiled=compiled, solver="heun", dt=1e-3).run(1.0)
    n = len(seen) // 2
    assert n == 4 and seen[:n] == seen[n:]
    assert np.isclose(seen[0][1], 0.1)


def test_the_flagship_hydraulics_do_not_stay_in_python_for_monitors():
    """The flagship's hydraulic subsystem (a supply volume and a cylinder, both with
    low-pressure monitors) compiles, or names another reason (today its 'position'
    FunctionBlock), never monitors."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    try:
        from examples import flagship_model as fm
    finally:
        sys.path.pop(0)
    d = fm.hydraulics_diagram(fm.equilibrium())
    assert {b.path for b in d.leaf_blocks() if b.monitors} >= {"supply", "cyl"}
    ctx = d.create_context()
    for p in d.inputs.values():
        ctx.fix_input(p, 0.0)
    try:
        Simulator(d, ctx, solver="rk4", dt=1e-5, compiled=True).initialize()
    except BuildError as exc:
        assert "monitor" not in str(exc), str(exc)
