"""Our engine's side of the ``core`` suite.

Contract (the suite calls nothing else; ``bench/core.py`` does the timing):

``msd_pid(solver, compiled) / lag_chain(n, solver, compiled) / nl_chain(...) / udb_chain(...)``
    build a fresh model with ``cosim``, run it fixed step at 1 ms, return
    ``(build_s, run_s, extra)``; ``build_s`` covers building, compiling and
    initialising (everything before the first step); ``run_s`` the run with
    recording of the probed output.
``build_lag_chain(n) -> float``
    build + compile + initialise time of model B.

``compiled`` is the Simulator's option: ours runs ``msd_pid`` and ``lag_chain`` compiled
(``True``: the whole fixed-step run in C, :mod:`cosim.compiled_run`; the C is built in
``build_s``, from the cache after the first repeat), ``nl_chain`` and ``udb_chain`` with
``None`` (their FunctionBlocks and user blocks have no C form: the Python loop, the reason
in ``extra["compiled"]``); the suite's peer ``ours-python-loop`` passes ``False``.

``solver`` is ``"RK4"`` or ``"Heun"``.  What the engine does here is what a user
gets by default: linear blocks (the StateSpace blocks, the Sum, the lags) are
fused into one state-space update and, where the inputs of the fused part do not
depend on its state, stepped by the exact propagator of the chosen RK method;
the FunctionBlocks of model C are called from generated straight-line code.
Model D's :class:`NonlinearLag` is an ordinary user block (a ``Block`` subclass with a
Python ``derivatives``): nothing to fuse or generate, so the engine calls its output
and derivative functions once per stage (the interpreted path for arbitrary blocks).
"""

from __future__ import annotations

import math
import time

from blocks.continuous import Integrator
from blocks.lti import FirstOrderLag, StateSpace
from blocks.math import Sum
from blocks.sources import Sine, Step
from cosim import Block, DiagramBuilder, FunctionBlock, Simulator

from . import models as m

_SOLVERS = {"RK4": "rk4", "Heun": "heun"}


def _solver(name: str) -> str:
    try:
        return _SOLVERS[name]
    except KeyError:
        raise NotImplementedError(f"solver {name!r}") from None


def _msd_pid_diagram():
    b = DiagramBuilder("msd_pid")
    ref = b.add(Step("ref", m.T_STEP))
    err = b.add(Sum("err", "+-"))
    pid = b.add(StateSpace("pid", m.PID_A, m.PID_B, m.PID_C, m.PID_D))
    plant = b.add(StateSpace("plant", m.PLANT_A, m.PLANT_B, m.PLANT_C, m.PLANT_D))
    b.connect(ref.y, err.ins[0])
    b.connect(plant.y, err.ins[1])
    b.connect(err.y, pid.u)
    b.connect(pid.y, plant.u)
    return b.build(), plant.y


def msd_pid(solver: str, compiled: bool | None = True) -> tuple[float, float, dict]:
    s = _solver(solver)
    t0 = time.perf_counter()
    d, probe = _msd_pid_diagram()
    sim = Simulator(d, solver=s, dt=m.DT, record=[probe], compiled=compiled)
    sim.initialize()
    t1 = time.perf_counter()
    res = sim.run(m.T_END_A)
    t2 = time.perf_counter()
    extra = m.accuracy_msd_pid(res.time, res[probe.path])
    extra.update(steps=res.diagnostics["steps"], propagator=res.diagnostics["propagator"],
                 compiled=res.diagnostics["compiled"])
    return t1 - t0, t2 - t1, extra


def _lag_chain_sim(n: int, solver: str, compiled: bool | None = True):
    b = DiagramBuilder("lag_chain")
    prev = b.add(Step("src", 0.0)).y
    for i in range(n):
        lag = b.add(FirstOrderLag(f"lag{i}", m.TAU))
        b.connect(prev, lag.u)
        prev = lag.y
    sim = Simulator(b.build(), solver=solver, dt=m.DT, record=[prev], compiled=compiled)
    sim.initialize()
    return sim, prev


def lag_chain(n: int, solver: str, compiled: bool | None = True) -> tuple[float, float, dict]:
    s = _solver(solver)
    t0 = time.perf_counter()
    sim, probe = _lag_chain_sim(n, s, compiled)
    t1 = time.perf_counter()
    res = sim.run(m.T_END_B)
    t2 = time.perf_counter()
    extra = m.accuracy_lag_chain(n, float(res[probe.path][-1]))
    extra.update(steps=res.diagnostics["steps"], propagator=res.diagnostics["propagator"],
                 compiled=res.diagnostics["compiled"])
    return t1 - t0, t2 - t1, extra


def build_lag_chain(n: int) -> float:
    t0 = time.perf_counter()
    _lag_chain_sim(n, "rk4")
    return time.perf_counter() - t0


def nl_chain(n: int, solver: str, compiled: bool | None = True) -> tuple[float, float, dict]:
    """Model C; ``compiled=True`` as models A and B: the C is built by ``initialize`` (the
    build time), not inside the timed run, as ``compiled=None`` would for a run of this work
    (generating and loading the C of 100 function blocks: about 9 ms)."""
    s = _solver(solver)
    t0 = time.perf_counter()
    b = DiagramBuilder("nl_chain")
    prev = b.add(Sine("src", 1.0, m.NL_FREQ)).y
    f = m.nl_map
    for i in range(n):
        fb = b.add(FunctionBlock(f"f{i}", f))
        b.connect(prev, fb.in_ports[0])
        prev = fb.out_ports[0]
    integ = b.add(Integrator("z"))
    b.connect(prev, integ.u)
    sim = Simulator(b.build(), solver=s, dt=m.DT, record=[integ.y], compiled=compiled)
    sim.initialize()
    t1 = time.perf_counter()
    res = sim.run(m.T_END_C)
    t2 = time.perf_counter()
    extra = m.accuracy_nl_chain(n, float(res["z.y"][-1]))
    extra.update(steps=res.diagnostics["steps"], compiled=res.diagnostics["compiled"])
    return t1 - t0, t2 - t1, extra


class NonlinearLag(Block):
    """Model D's block, written the way a user would: ``x' = (tanh(u) - x) / tau``, y = x."""

    def __init__(self, name, tau):
        super().__init__(name)
        self.k = 1.0 / tau
        self.u = self.declare_input("u")
        self.x = self.declare_continuous_state("x", 0.0)
        self.y = self.declare_output("y", lambda ctx: ctx.state(self.x), depends_on=())

    def derivatives(self, ctx):
        return self.k * (math.tanh(ctx.input(self.u)) - ctx.state(self.x))


def udb_chain(n: int, solver: str, compiled: bool | None = None) -> tuple[float, float, dict]:
    s = _solver(solver)
    t0 = time.perf_counter()
    b = DiagramBuilder("udb_chain")
    prev = b.add(Step("src", 0.0)).y
    for i in range(n):
        lag = b.add(NonlinearLag(f"nlag{i}", m.UDB_TAU))
        b.connect(prev, lag.u)
        prev = lag.y
    sim = Simulator(b.build(), solver=s, dt=m.DT, record=[prev], compiled=compiled)
    sim.initialize()
    t1 = time.perf_counter()
    res = sim.run(m.T_END_D)
    t2 = time.perf_counter()
    extra = m.accuracy_udb_chain(n, float(res[prev.path][-1]))
    d = res.diagnostics
    extra.update(steps=d["steps"], rhs_evals=d["rhs_evals"], propagator=d["propagator"],
                 fused_groups=d["fused_groups"], compiled=d["compiled"])
    return t1 - t0, t2 - t1, extra
