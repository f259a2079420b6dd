# ruff: noqa: B905  (hot loops of the py-engine floor: zip(strict=...) is ~30 % slower)
"""The benchmark models in peer tools and in two reference floors.

Every case function builds a fresh model, runs it and returns ``(build_s, run_s, extra)``
with ``extra["abs_err"]`` from ``bench.models.accuracy_*``.  Peer packages are imported
lazily through :func:`bench.harness.require`, so a missing package raises
:class:`~bench.harness.PeerNotInstalled` (reported as "skipped (not installed)").
``t_end`` lets quick mode run a shorter horizon (the harness scales the time).

PathSim 0.27.1 (``pathsim_*``)
    Fixed step 1 ms (``adaptive=False``), solvers ``"RK4"`` or ``"SSPRK22"`` (Heun, 2
    stages, PathSim's default); blocks StepSource, Adder, StateSpace, PT1,
    SinusoidalSource, Function, Integrator, Scope.  Built as in the anchor benchmark
    (research/anchor-bench/bench_pathsim.py).  Model D uses PathSim's generic user ODE
    block ``ODE(func, initial_value)`` with ``func(x, u, t) = (tanh(u) - x) / tau`` on
    NumPy arrays (as in its documentation), one block per lag.
bdsim 1.4.0 (``bdsim_*``)
    bdsim always integrates with ``scipy.integrate.solve_ivp``; as in the anchor
    (bench_bdsim.py): RK45 with ``max_step = first_step = 1 ms`` and a 1 ms output grid,
    so every step is 1 ms but costs 6 right-hand-side calls.  Blocks STEP, SUM, LTI_SS,
    LTI_SISO, WAVEFORM (sine), FUNCTION, INTEGRATOR, NULL; outputs read through ``watch``.
    Model D is skipped (:class:`~bench.harness.PeerUnsupported`): bdsim 1.4.0 has no
    block for a user-defined ODE with an input (its continuous blocks are INTEGRATOR,
    LTI_SS/LTI_SISO, PID, DERIV and fixed vehicle/robot dynamics; no DEINT-style block),
    and rebuilding the lag from FUNCTION + SUM + INTEGRATOR would not be a user block.
py-engine (``py_*``)
    The anchor's minimal Python block engine (bench_baseline.py): one object per block,
    scalar float maths, static schedule, fixed step; Heun as in the anchor plus RK4.
    Model D adds :class:`NLag` next to :class:`Lag` (``math.tanh`` of the input).
    (Its hot loops call ``zip`` without ``strict=``: the keyword disables zip's fast
    call path and costs ~30 % here.)
    Sources are evaluated at stage times (a step at a grid point is seen by the last
    stage of the step before it, an O(dt) error of ~1e-5 on model A, as in the anchor).
numpy-fused (``numpy_*``)
    The anchor's fused NumPy floor for the linear models A and B: all LTI blocks merged
    into one (A, B) pair, exact zero-order-hold discretisation (``expm``), one dense
    ``x <- Ad x + Bd u`` per step.  Not defined for models C and D (nonlinear).
"""

from __future__ import annotations

import math
import time
from functools import lru_cache

import numpy as np

from . import models as md
from .harness import PeerUnsupported, require

now = time.perf_counter


# ================================================================ PathSim
def _pathsim():
    require("pathsim")
    import pathsim
    import pathsim.blocks
    import pathsim.solvers

    return pathsim, pathsim.blocks, pathsim.solvers


def _pathsim_solver(name: str):
    _, _, solvers = _pathsim()
    try:
        return getattr(solvers, name)
    except AttributeError:
        raise ValueError(f"PathSim has no solver {name!r}") from None


def pathsim_msd_pid(solver: str = "RK4", t_end: float = md.T_END_A):
    ps, bl, _ = _pathsim()
    solver_cls = _pathsim_solver(solver)
    t0 = now()
    ref = bl.StepSource(amplitude=1.0, tau=md.T_STEP)
    err = bl.Adder("+-")
    pid = bl.StateSpace(md.PID_A, md.PID_B, md.PID_C, md.PID_D)
    plant = bl.StateSpace(md.PLANT_A, md.PLANT_B, md.PLANT_C, md.PLANT_D)
    sco = bl.Scope()
    sim = ps.Simulation(
        blocks=[ref, err, pid, plant, sco],
        connections=[
            ps.Connection(ref[0], err[0]),
            ps.Connection(plant[0], err[1], sco[0]),
            ps.Connection(err[0], pid[0]),
            ps.Connection(pid[0], plant[0]),
        ],
        dt=md.DT, Solver=solver_cls, log=False)
    t1 = now()
    stats = sim.run(t_end, adaptive=False)
    t2 = now()
    t, y = sco.read()
    extra = md.accuracy_msd_pid(t, y)
    extra["pathsim_steps"] = stats.get("total_steps")
    return t1 - t0, t2 - t1, extra


def _pathsim_udb_rhs(x, u, t, _k=1.0 / md.UDB_TAU):
    """Model D's lag for PathSim's ``ODE`` block: ``func(x, u, t)`` on NumPy arrays."""
    return _k * (np.tanh(u) - x)


def _pathsim_chain_sim(n: int, solver_cls, *, kind: str):
    """Build the lag chain (``kind="lag"``), the nonlinear function chain (``"nl"``) or
    the user-ODE chain (``"udb"``); return (sim, scope)."""
    ps, bl, _ = _pathsim()
    tail: list = []
    if kind == "lag":
        src = bl.StepSource(amplitude=1.0, tau=0.0)
        mid = [bl.PT1(K=1.0, T=md.TAU) for _ in range(n)]
    elif kind == "udb":
        src = bl.StepSource(amplitude=1.0, tau=0.0)
        mid = [bl.ODE(_pathsim_udb_rhs, 0.0) for _ in range(n)]
    else:
        sine = getattr(bl, "SinusoidalSource", None)
        src = sine(frequency=md.NL_FREQ) if sine else bl.Source(md.nl_source)
        mid = [bl.Function(md.nl_map) for _ in range(n)]
        tail = [bl.Integrator(0.0)]
    sco = bl.Scope()
    chain = [src, *mid, *tail]
    conns = [ps.Connection(a[0], b[0]) for a, b in zip(chain[:-1], chain[1:], strict=True)]
    conns.append(ps.Connection(chain[-1][0], sco[0]))
    sim = ps.Simulation(blocks=[*chain, sco], connections=conns, dt=md.DT, Solver=solver_cls,
                        log=False)
    return sim, sco


_ACCURACY = {"lag": md.accuracy_lag_chain, "nl": md.accuracy_nl_chain,
             "udb": md.accuracy_udb_chain}


def _pathsim_chain(n: int, solver: str, t_end: float, kind: str):
    solver_cls = _pathsim_solver(solver)
    t0 = now()
    sim, sco = _pathsim_chain_sim(n, solver_cls, kind=kind)
    t1 = now()
    stats = sim.run(t_end, adaptive=False)
    t2 = now()
    t, y = sco.read()
    last = float(np.asarray(y).reshape(-1)[-1])
    extra = _ACCURACY[kind](n, last, t_end)
    extra["pathsim_steps"] = stats.get("total_steps")
    extra["t_last"] = float(np.asarray(t).reshape(-1)[-1])
    return t1 - t0, t2 - t1, extra


def pathsim_lag_chain(n: int, solver: str = "RK4", t_end: float = md.T_END_B):
    return _pathsim_chain(n, solver, t_end, "lag")


def pathsim_nl_chain(n: int, solver: str = "RK4", t_end: float = md.T_END_C):
    return _pathsim_chain(n, solver, t_end, "nl")


def pathsim_udb_chain(n: int, solver: str = "RK4", t_end: float = md.T_END_D):
    return _pathsim_chain(n, solver, t_end, "udb")


def pathsim_build_lag_chain(n: int) -> float:
    """Build time of the lag chain (PathSim builds its graph in ``Simulation()``)."""
    solver_cls = _pathsim_solver("RK4")
    t0 = now()
    _pathsim_chain_sim(n, solver_cls, kind="lag")
    return now() - t0


# ================================================================ bdsim
@lru_cache(maxsize=1)
def _bdsim_sim():
    bdsim = require("bdsim")
    # sysargs=False: otherwise BDSim parses (and rewrites!) sys.argv, our CLI's options
    return bdsim.BDSim(banner=False, graphics=False, animation=False, progress=False,
                       quiet=True, toolboxes=False, sysargs=False)


def _bdsim_run(bd, t_end: float, method: str, watch: list):
    return _bdsim_sim().run(bd, T=t_end, dt=md.DT, max_step=md.DT, solver=method,
                            solver_args={"first_step": md.DT}, watch=watch)


def _bdsim_stats(out) -> dict:
    st = getattr(out, "stats", None)
    return {"integration_time_points": int(getattr(st, "integration_time_points", -1)),
            "ydot_calls": int(getattr(st, "ydot_calls", -1))}


def bdsim_msd_pid(method: str = "RK45", t_end: float = md.T_END_A):
    sim = _bdsim_sim()
    t0 = now()
    bd = sim.blockdiagram()
    ref = bd.STEP(T=md.T_STEP, off=0, on=1)
    err = bd.SUM("+-")
    pid = bd.LTI_SS(md.PID_A, md.PID_B, md.PID_C, md.PID_D)
    plant = bd.LTI_SS(md.PLANT_A, md.PLANT_B, md.PLANT_C, md.PLANT_D)
    rec = bd.NULL()  # sink; the plant output is logged through `watch`
    bd.connect(ref, err[0])
    bd.connect(plant, err[1], rec)
    bd.connect(err, pid)
    bd.connect(pid, plant)
    bd.compile(report=False, verbose=False)
    t1 = now()
    out = _bdsim_run(bd, t_end, method, [plant])
    t2 = now()
    t = np.asarray(out.t)
    y = np.asarray(out.y0).reshape(len(t), -1)[:, 0]
    extra = md.accuracy_msd_pid(t, y)
    extra.update(_bdsim_stats(out))
    return t1 - t0, t2 - t1, extra


def _bdsim_chain_diagram(n: int, *, lag: bool):
    bd = _bdsim_sim().blockdiagram()
    if lag:
        chain = [bd.STEP(T=0.0, off=0, on=1)]
        chain += [bd.LTI_SISO(1, [md.TAU, 1]) for _ in range(n)]
    else:
        chain = [bd.WAVEFORM(wave="sine", freq=md.NL_FREQ)]
        chain += [bd.FUNCTION(md.nl_map, nin=1, nout=1) for _ in range(n)]
        chain.append(bd.INTEGRATOR(x0=0.0))
    rec = bd.NULL()
    for a, b in zip(chain[:-1], chain[1:], strict=True):
        bd.connect(a, b)
    bd.connect(chain[-1], rec)
    bd.compile(report=False, verbose=False)
    return bd, chain[-1]


def _bdsim_chain(n: int, method: str, t_end: float, lag: bool):
    _bdsim_sim()
    t0 = now()
    bd, last_block = _bdsim_chain_diagram(n, lag=lag)
    t1 = now()
    out = _bdsim_run(bd, t_end, method, [last_block])
    t2 = now()
    last = float(np.asarray(out.y0).reshape(-1)[-1])
    extra = (md.accuracy_lag_chain(n, last, t_end) if lag else
             md.accuracy_nl_chain(n, last, t_end))
    extra.update(_bdsim_stats(out))
    return t1 - t0, t2 - t1, extra


def bdsim_lag_chain(n: int, method: str = "RK45", t_end: float = md.T_END_B):
    return _bdsim_chain(n, method, t_end, lag=True)


def bdsim_nl_chain(n: int, method: str = "RK45", t_end: float = md.T_END_C):
    return _bdsim_chain(n, method, t_end, lag=False)


def bdsim_udb_chain(n: int, method: str = "RK45", t_end: float = md.T_END_D):
    """Model D in bdsim: not possible, bdsim has no block for a user-defined ODE."""
    require("bdsim")
    raise PeerUnsupported("bdsim", "no user-defined ODE block")


def bdsim_build_lag_chain(n: int) -> float:
    """Build + ``compile()`` time of the lag chain."""
    _bdsim_sim()
    t0 = now()
    _bdsim_chain_diagram(n, lag=True)
    return now() - t0


# ================================================================ py-engine (floor)
class Step:
    nx = 0

    def __init__(self, t0, amp=1.0):
        self.t0, self.amp = t0, amp

    def out(self, t, x, u):
        return self.amp if t >= self.t0 else 0.0


class Sine:
    nx = 0

    def out(self, t, x, u):
        return md.nl_source(t)


class Sum2:  # u0 - u1
    nx = 0

    def out(self, t, x, u):
        return u[0] - u[1]


class Fn:
    nx = 0

    def __init__(self, f):
        self.f = f

    def out(self, t, x, u):
        return self.f(u[0])


class SS:
    """Scalar-in/scalar-out LTI block in plain Python lists."""

    def __init__(self, A, B, C, D):
        self.A = [list(map(float, r)) for r in np.atleast_2d(A)]
        self.B = [float(b) for b in np.asarray(B).reshape(-1)]
        self.C = [float(c) for c in np.asarray(C).reshape(-1)]
        self.D = float(np.asarray(D).reshape(-1)[0])
        self.nx = len(self.A)

    def out(self, t, x, u):
        s = self.D * u[0]
        for c, xi in zip(self.C, x):
            s += c * xi
        return s

    def deriv(self, t, x, u):
        u0 = u[0]
        return [sum(a * xi for a, xi in zip(row, x)) + b * u0
                for row, b in zip(self.A, self.B)]


class Lag:
    nx = 1

    def __init__(self, tau):
        self.k = 1.0 / tau

    def out(self, t, x, u):
        return x[0]

    def deriv(self, t, x, u):
        return [self.k * (u[0] - x[0])]


class NLag:
    """Model D's nonlinear lag: ``x' = k (tanh(u) - x)``, y = x."""

    nx = 1

    def __init__(self, tau):
        self.k = 1.0 / tau

    def out(self, t, x, u):
        return x[0]

    def deriv(self, t, x, u):
        return [self.k * (math.tanh(u[0]) - x[0])]


class Integ:
    nx = 1

    def out(self, t, x, u):
        return x[0]

    def deriv(self, t, x, u):
        return [u[0]]


class Engine:
    """blocks: list in a valid evaluation order (feedthrough-sorted);
    wires: for each block, the source-block indices feeding its inputs."""

    def __init__(self, blocks, wires):
        self.blocks, self.wires = blocks, wires
        self.y = [0.0] * len(blocks)
        self.x = [[0.0] * b.nx for b in blocks]
        self.dyn = [i for i, b in enumerate(blocks) if b.nx]

    def _outputs(self, t, xs):
        y, blocks, wires = self.y, self.blocks, self.wires
        for i, b in enumerate(blocks):
            y[i] = b.out(t, xs[i], [y[j] for j in wires[i]])

    def _derivs(self, t, xs):
        y, blocks, wires = self.y, self.blocks, self.wires
        return {i: blocks[i].deriv(t, xs[i], [y[j] for j in wires[i]]) for i in self.dyn}

    @staticmethod
    def _shift(xs, k, h):
        """xs + h k for the dynamic blocks (k: {block: derivative})."""
        return [xi if i not in k else [a + h * d for a, d in zip(xi, k[i])]
                for i, xi in enumerate(xs)]

    def run(self, t_end, dt, probe, method="RK4"):
        """Fixed-step run; outputs at the end of a step are reused for the next k1."""
        n = int(round(t_end / dt))
        log = [0.0] * (n + 1)
        x, h2, h6, shift = self.x, 0.5 * dt, dt / 6.0, self._shift
        self._outputs(0.0, x)
        log[0] = self.y[probe]
        for k in range(n):
            t = k * dt
            k1 = self._derivs(t, x)
            if method == "Heun":
                xp = shift(x, k1, dt)
                self._outputs(t + dt, xp)
                k2 = self._derivs(t + dt, xp)
                x = [xi if i not in k1 else
                     [a + h2 * (d1 + d2) for a, d1, d2 in zip(xi, k1[i], k2[i])]
                     for i, xi in enumerate(x)]
            else:
                xp = shift(x, k1, h2)
                self._outputs(t + h2, xp)
                k2 = self._derivs(t + h2, xp)
                xp = shift(x, k2, h2)
                self._outputs(t + h2, xp)
                k3 = self._derivs(t + h2, xp)
                xp = shift(x, k3, dt)
                self._outputs(t + dt, xp)
                k4 = self._derivs(t + dt, xp)
                x = [xi if i not in k1 else
                     [a + h6 * (d1 + 2.0 * (d2 + d3) + d4)
                      for a, d1, d2, d3, d4 in zip(xi, k1[i], k2[i], k3[i], k4[i])]
                     for i, xi in enumerate(x)]
            self._outputs((k + 1) * dt, x)
            log[k + 1] = self.y[probe]
        self.x = x
        return log


def _check_method(method: str) -> None:
    if method not in ("RK4", "Heun"):
        raise ValueError(f"py-engine method must be 'RK4' or 'Heun', not {method!r}")


def py_msd_pid(method: str = "RK4", t_end: float = md.T_END_A):
    _check_method(method)
    t0 = now()
    # order: plant (no feedthrough) first, then ref, err, pid
    blocks = [SS(md.PLANT_A, md.PLANT_B, md.PLANT_C, md.PLANT_D), Step(md.T_STEP), Sum2(),
              SS(md.PID_A, md.PID_B, md.PID_C, md.PID_D)]
    eng = Engine(blocks, [[3], [], [1, 0], [2]])
    t1 = now()
    y = eng.run(t_end, md.DT, probe=0, method=method)
    t2 = now()
    return t1 - t0, t2 - t1, md.accuracy_msd_pid(np.arange(len(y)) * md.DT, y)


def _py_lag_engine(n: int) -> Engine:
    blocks = [Step(0.0)] + [Lag(md.TAU) for _ in range(n)]
    return Engine(blocks, [[]] + [[i] for i in range(n)])


def py_lag_chain(n: int, method: str = "RK4", t_end: float = md.T_END_B):
    _check_method(method)
    t0 = now()
    eng = _py_lag_engine(n)
    t1 = now()
    y = eng.run(t_end, md.DT, probe=n, method=method)
    t2 = now()
    return t1 - t0, t2 - t1, md.accuracy_lag_chain(n, y[-1], t_end)


def py_nl_chain(n: int, method: str = "RK4", t_end: float = md.T_END_C):
    _check_method(method)
    t0 = now()
    blocks = [Sine()] + [Fn(md.nl_map) for _ in range(n)] + [Integ()]
    eng = Engine(blocks, [[]] + [[i] for i in range(n + 1)])
    t1 = now()
    y = eng.run(t_end, md.DT, probe=n + 1, method=method)
    t2 = now()
    return t1 - t0, t2 - t1, md.accuracy_nl_chain(n, y[-1], t_end)


def py_udb_chain(n: int, method: str = "RK4", t_end: float = md.T_END_D):
    _check_method(method)
    t0 = now()
    blocks = [Step(0.0)] + [NLag(md.UDB_TAU) for _ in range(n)]
    eng = Engine(blocks, [[]] + [[i] for i in range(n)])
    t1 = now()
    y = eng.run(t_end, md.DT, probe=n, method=method)
    t2 = now()
    return t1 - t0, t2 - t1, md.accuracy_udb_chain(n, y[-1], t_end)


def py_build_lag_chain(n: int) -> float:
    t0 = now()
    _py_lag_engine(n)
    return now() - t0


# ================================================================ numpy-fused (floor)
def _zoh(A, B, dt):
    from scipy.linalg import expm

    n, m = A.shape[0], B.shape[1]
    big = np.zeros((n + m, n + m))
    big[:n, :n], big[:n, n:] = A, B
    E = expm(big * dt)
    return E[:n, :n], E[:n, n:]


def numpy_msd_pid(t_end: float = md.T_END_A):
    t0 = now()
    A, B = md.closed_loop_msd_pid()
    Ad, Bd = _zoh(A, B, md.DT)
    Bd = Bd[:, 0]
    n = md.steps(t_end)
    t1 = now()
    x = np.zeros(4)
    y = np.empty(n + 1)
    y[0] = 0.0
    for k in range(n):
        r = 1.0 if k * md.DT >= md.T_STEP - 1e-12 else 0.0
        x = Ad @ x + Bd * r
        y[k + 1] = x[0]
    t2 = now()
    return t1 - t0, t2 - t1, md.accuracy_msd_pid(np.arange(n + 1) * md.DT, y)


def _numpy_lag_build(n: int):
    A = -np.eye(n) / md.TAU + np.eye(n, k=-1) / md.TAU
    B = np.zeros((n, 1))
    B[0, 0] = 1 / md.TAU
    Ad, Bd = _zoh(A, B, md.DT)
    return Ad, Bd[:, 0]


def numpy_lag_chain(n: int, t_end: float = md.T_END_B):
    t0 = now()
    Ad, Bd = _numpy_lag_build(n)
    steps = md.steps(t_end)
    t1 = now()
    x = np.zeros(n)
    y = np.empty(steps + 1)
    y[0] = 0.0
    for k in range(steps):
        x = Ad @ x + Bd
        y[k + 1] = x[-1]
    t2 = now()
    return t1 - t0, t2 - t1, md.accuracy_lag_chain(n, y[-1], t_end)


def numpy_build_lag_chain(n: int) -> float:
    """Build time of the fused chain: assembling and discretising (``expm``)."""
    t0 = now()
    _numpy_lag_build(n)
    return now() - t0

