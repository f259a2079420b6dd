"""Benchmark models, their reference solutions and the block-count convention.

Every tool in every suite simulates exactly these equations; only the tool differs.

Model A, ``msd_pid`` (closed loop, unit step reference at t = 1 s)
    plant       m x'' + c x' + k x = u             m = 1, c = 2, k = 20
    controller  u = Kp e + Ki int(e) + Kd N s/(s + N) e,   e = r - x
                Kp = 100, Ki = 50, Kd = 10, N = 100 rad/s (filtered derivative),
                realised as a 2-state LTI (states: derivative filter, integral)
    simulated 0..10 s with a 1 ms step (10 000 steps).
    Reference: exact matrix-exponential solution of the 4-state closed loop
    (:func:`reference_msd_pid`).  Accuracy figure: max |y - y_ref| at t = 2, 5, 10 s.

Model B, ``lag_chain``
    unit step at t = 0 through N first-order lags 1/(tau s + 1), tau = 0.05 s,
    simulated 0..1 s with a 1 ms step (1000 steps), N = 10, 100, 1000.
    Reference: the N-th lag output is the Erlang(N, tau) cdf
    (:func:`reference_lag_chain_last`).  Accuracy figure: |y_N(1 s) - ref|.
    (For N >= 100 the output at 1 s is ~1e-37 or exactly 0, so the figure only
    shows that nothing blew up; the relative error is reported as well.)

Model C, ``nl_chain`` (new in this project, not part of the anchor benchmarks)
    source   u0(t) = sin(2 pi t)
    chain    y_i = tanh(1.05 y_{i-1}) + 0.01 y_{i-1}**2,  i = 1..N,  y_0 = u0
             (N stateless nonlinear function blocks: nothing to fuse into linear algebra)
    sink     one integrator z' = y_N, z(0) = 0
    simulated 0..1 s with a 1 ms step, N = 10, 100 (1000 in full mode).
    Reference: z(1 s) = int_0^1 f^N(sin 2 pi t) dt by ``scipy.integrate.quad`` on the
    four quarter periods (absolute and relative tolerance 1e-13 each, so the total is
    within 1e-12; :func:`reference_nl_chain`).  Accuracy figure: |z(1 s) - ref|.
    Note: f has slope 1.05 at 0 and stable fixed points y+ = 0.3856 and y- = -0.3565, so
    f^N(sin 2 pi t) tends to a square wave as N grows (transition width
    ~ 1.05**-N / (2 pi) s: 0.1 s at N = 10, 0.3 ms at N = 100, 1e-22 s at N = 1000).
    At N >= 100 the jumps at t = 0, 0.5, 1 s fall on the 1 ms grid, so any fixed-step
    solver has an O(dt) quadrature error (~ dt/6 * |y+| ~ 6e-5 for RK4) that also
    depends on how sin(2 pi t) rounds at those grid points (sin(pi) = +1.2e-16).
    The accuracy figure at N = 1000 therefore measures the model, not the engine.

Model D, ``udb_chain`` (user-defined stateful blocks; new in this project)
    unit step at t = 0 through N nonlinear first-order lags, each an ordinary user block
    with one continuous state (a ``cosim.Block`` subclass with a Python ``derivatives``):
             x_i' = (tanh(u_i) - x_i) / tau,   y_i = x_i,   x_i(0) = 0,   tau = 0.05 s
             u_1 = 1 (t >= 0),   u_{i+1} = y_i
    simulated 0..1 s with a 1 ms step, N = 10, 100, 1000.  Nothing can be fused into
    linear algebra or generated as straight-line maths: every block-step is a call into
    user Python code (this measures the interpreted path for arbitrary blocks).
    Reference: y_N(1 s) from ``scipy.integrate.solve_ivp`` (DOP853, rtol 1e-12,
    atol 1e-14) on the N-dimensional ODE system (:func:`reference_udb_chain`).
    Accuracy figure: |y_N(1 s) - ref|.  For N = 1, y_1 = tanh(1) (1 - exp(-t/tau))
    exactly.  As in model B the step needs ~N tau to travel down the chain, so for
    N >= 100 the output at 1 s is ~1e-37 (N = 100) or exactly 0 (N = 1000) and the figure
    only shows that nothing blew up.  The relative error is reported as well, but the
    reference's absolute tolerance 1e-14 does not control it: at N = 100 the reference
    is ~1e-4 relative off (atol 1e-60 gives 2.56889e-37 instead of 2.56866e-37).

Where the numbers come from
    Models A and B, their parameters, step sizes, horizons and references are copied from
    the anchor benchmarks (research/anchor-bench/common.py, reported in
    research/anchors-frameworks.md section 3).  Model C (map, constants 1.05 and 0.01,
    horizon, step, sizes, quad reference) was specified in the project's benchmark issue;
    the observations above about its fixed points and jumps are ours.  Model D (map,
    tau, horizon, step, sizes, solve_ivp reference) was specified the same way.

Block counts for microseconds per block-step (anchor convention)
    Framework tools (ours, PathSim, bdsim) count every block including the source and
    the recorder: msd_pid 5 (step, sum, PID, plant, recorder), lag_chain N + 2
    (step, N lags, recorder), nl_chain N + 3 (sine, N functions, integrator, recorder),
    udb_chain N + 2 (step, N nonlinear lags, recorder).
    The reference floors count the blocks they actually have (no recorder):
    py-engine msd_pid 4, lag_chain N + 1, nl_chain N + 2, udb_chain N + 1; numpy-fused
    as the anchor did (4 and N + 1, the number of blocks it replaces; no model C or D).
    us_per_block_step = 1e6 * run_s / (steps * blocks).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

# ---- common -----------------------------------------------------------------------------
DT = 1e-3

# ---- model A: msd_pid -------------------------------------------------------------------
M, C, K = 1.0, 2.0, 20.0
KP, KI, KD, NF = 100.0, 50.0, 10.0, 100.0
T_STEP = 1.0
T_END_A = 10.0
CHECK_TIMES_A = (2.0, 5.0, 10.0)

# plant state space (x = [pos, vel]), y = pos
PLANT_A = np.array([[0.0, 1.0], [-K / M, -C / M]])
PLANT_B = np.array([[0.0], [1.0 / M]])
PLANT_C = np.array([[1.0, 0.0]])
PLANT_D = np.array([[0.0]])

# PID with filtered derivative as a state space (input e, output u)
#   z1' = N (e - z1)      (derivative filter state)
#   z2' = e               (integrator)
#   u   = Kp e + Ki z2 + Kd N (e - z1)
PID_A = np.array([[-NF, 0.0], [0.0, 0.0]])
PID_B = np.array([[NF], [1.0]])
PID_C = np.array([[-KD * NF, KI]])
PID_D = np.array([[KD * NF + KP]])

# ---- model B: lag_chain -----------------------------------------------------------------
TAU = 0.05
T_END_B = 1.0
CHAIN_SIZES = (10, 100, 1000)

# ---- model C: nl_chain ------------------------------------------------------------------
NL_GAIN = 1.05
NL_QUAD = 0.01
NL_FREQ = 1.0  # Hz, u0 = sin(2 pi NL_FREQ t)
T_END_C = 1.0
NL_CHAIN_SIZES_QUICK = (10, 100, 1000)
NL_CHAIN_SIZES_FULL = (10, 100, 1000)

# ---- model D: udb_chain -----------------------------------------------------------------
UDB_TAU = 0.05
T_END_D = 1.0
UDB_CHAIN_SIZES = (10, 100, 1000)


def steps(t_end: float, dt: float = DT) -> int:
    """Number of fixed steps of size ``dt`` in ``[0, t_end]``."""
    return int(round(t_end / dt))


STEPS_A = steps(T_END_A)
STEPS_B = steps(T_END_B)
STEPS_C = steps(T_END_C)
STEPS_D = steps(T_END_D)


def blocks_msd_pid() -> int:
    """Framework block count of model A: step, sum, PID, plant, recorder."""
    return 5


def blocks_lag_chain(n: int) -> int:
    """Framework block count of model B: step, ``n`` lags, recorder."""
    return n + 2


def blocks_nl_chain(n: int) -> int:
    """Framework block count of model C: sine, ``n`` functions, integrator, recorder."""
    return n + 3


def blocks_udb_chain(n: int) -> int:
    """Framework block count of model D: step, ``n`` nonlinear lags, recorder."""
    return n + 2


# ---- model A reference ------------------------------------------------------------------
def closed_loop_msd_pid() -> tuple[np.ndarray, np.ndarray]:
    """Closed-loop ``(A, B)`` of model A, state ``[x, v, z1, z2]``, input ``r``."""
    a = np.zeros((4, 4))
    a[0:2, 0:2] = PLANT_A
    a[2:4, 2:4] = PID_A
    # plant input u = C_pid z + D_pid (r - x1)
    a[0:2, 2:4] = PLANT_B @ PID_C
    a[0:2, 0:1] += PLANT_B @ PID_D @ (-PLANT_C[:, 0:1])
    a[2:4, 0:1] = PID_B @ (-PLANT_C[:, 0:1])
    b = np.zeros((4, 1))
    b[0:2] = PLANT_B @ PID_D
    b[2:4] = PID_B
    return a, b


@lru_cache(maxsize=64)
def _reference_msd_pid_at(t: float) -> float:
    from scipy.linalg import expm

    if t <= T_STEP:
        return 0.0
    a, b = closed_loop_msd_pid()
    n = a.shape[0]
    big = np.zeros((n + 1, n + 1))
    big[:n, :n] = a
    big[:n, n:] = b
    # constant input r = 1 for t >= T_STEP: x(t) = int_0^{t - Ts} e^{A s} ds B
    return float(expm(big * (t - T_STEP))[0, n])


def reference_msd_pid(t) -> np.ndarray:
    """Exact (matrix-exponential) plant position ``y(t)`` of model A."""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    return np.array([_reference_msd_pid_at(float(ti)) for ti in t])


def accuracy_msd_pid(t, y) -> dict:
    """Accuracy entry for model A from a recorded trajectory ``(t, y)``.

    ``y`` is linearly interpolated at 2, 5 and 10 s (grid points at 1 ms); a shorter
    run is checked at the check times it reaches (or at its last time).
    """
    t = np.asarray(t, dtype=float).reshape(-1)
    y = np.asarray(y, dtype=float).reshape(-1)
    times = np.array([c for c in CHECK_TIMES_A if c <= t[-1] + 1e-9] or [t[-1]])
    yi = np.interp(times, t, y)
    err = float(np.max(np.abs(yi - reference_msd_pid(times))))
    return {"abs_err": err, "accuracy_metric": "max |y - ref| at " +
            ", ".join(f"{c:g}" for c in times) + " s"}


# ---- model B reference ------------------------------------------------------------------
@lru_cache(maxsize=64)
def reference_lag_chain_last(n: int, t_end: float = T_END_B) -> float:
    """Output of the ``n``-th lag at ``t_end`` for a unit step at 0 (Erlang cdf)."""
    from scipy.stats import gamma

    return float(gamma.cdf(t_end, a=n, scale=TAU))


def accuracy_lag_chain(n: int, y_last: float, t_end: float = T_END_B) -> dict:
    """Accuracy entry for model B from the last output ``y_N(t_end)``."""
    ref = reference_lag_chain_last(n, t_end)
    err = abs(float(y_last) - ref)
    return {"abs_err": err, "accuracy_metric": f"|y_N({t_end:g} s) - ref|",
            "y_last": float(y_last), "ref": ref,
            "rel_err": err / abs(ref) if ref != 0.0 else None}


# ---- model C ----------------------------------------------------------------------------
def nl_map(y: float) -> float:
    """One nonlinear function block of model C: ``tanh(1.05 y) + 0.01 y**2``."""
    return math.tanh(NL_GAIN * y) + NL_QUAD * y * y


def nl_map_np(y: np.ndarray) -> np.ndarray:
    """Vectorised :func:`nl_map`."""
    return np.tanh(NL_GAIN * y) + NL_QUAD * y * y


def nl_source(t: float) -> float:
    """Source of model C: ``sin(2 pi t)``."""
    return math.sin(2.0 * math.pi * NL_FREQ * t)


def nl_chain_output(t: float, n: int) -> float:
    """``y_N(t) = f^N(sin 2 pi t)`` (what the integrator of model C integrates)."""
    y = nl_source(t)
    for _ in range(n):
        y = nl_map(y)
    return y


@lru_cache(maxsize=16)
def reference_nl_chain(n: int, t_end: float = T_END_C) -> float:
    """``z(t_end) = int_0^t_end f^N(sin 2 pi t) dt`` by adaptive quadrature.

    Split at the quarter periods (the jumps of the large-N limit sit at half periods),
    tolerance 1e-13 absolute and relative per piece.
    """
    from scipy.integrate import quad

    quarter = 0.25 / NL_FREQ
    inner = [k * quarter for k in range(1, int(t_end / quarter) + 1) if k * quarter < t_end]
    edges = [0.0, *inner, t_end]
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        val, err = quad(nl_chain_output, a, b, args=(n,), epsabs=1e-13, epsrel=1e-13,
                        limit=2000)
        if err > 1e-12:
            raise RuntimeError(f"reference_nl_chain({n}): quad error estimate {err:.1e}")
        total += val
    return float(total)


def accuracy_nl_chain(n: int, z_end: float, t_end: float = T_END_C) -> dict:
    """Accuracy entry for model C from the integrator output ``z(t_end)``."""
    ref = reference_nl_chain(n, t_end)
    return {"abs_err": abs(float(z_end) - ref), "accuracy_metric": f"|z({t_end:g} s) - ref|",
            "z_end": float(z_end), "ref": ref}


# ---- model D ----------------------------------------------------------------------------
def udb_chain_rhs(x: np.ndarray, u0: float = 1.0, tau: float = UDB_TAU) -> np.ndarray:
    """Right-hand side of model D's N-dimensional system: ``(tanh(u) - x) / tau`` with
    ``u = [u0, x_1, ..., x_{N-1}]``."""
    u = np.empty_like(x)
    u[0] = u0
    u[1:] = x[:-1]
    return (np.tanh(u) - x) / tau


@lru_cache(maxsize=16)
def reference_udb_chain(n: int, t_end: float = T_END_D) -> float:
    """``y_N(t_end)`` of model D by ``solve_ivp`` (DOP853, rtol 1e-12, atol 1e-14)."""
    from scipy.integrate import solve_ivp

    sol = solve_ivp(lambda t, x: udb_chain_rhs(x), (0.0, t_end), np.zeros(n),
                    method="DOP853", rtol=1e-12, atol=1e-14)
    if not sol.success:
        raise RuntimeError(f"reference_udb_chain({n}): {sol.message}")
    return float(sol.y[-1, -1])


def accuracy_udb_chain(n: int, y_last: float, t_end: float = T_END_D) -> dict:
    """Accuracy entry for model D from the last output ``y_N(t_end)``."""
    ref = reference_udb_chain(n, t_end)
    err = abs(float(y_last) - ref)
    return {"abs_err": err, "accuracy_metric": f"|y_N({t_end:g} s) - ref|",
            "y_last": float(y_last), "ref": ref,
            "rel_err": err / abs(ref) if ref != 0.0 else None}
