r"""Periodic motion of forced systems: Poincaré sections, periods, orbits, stability.

For a system forced with period :math:`T` (waves, an unbalance, a periodic
reference), the stroboscopic Poincaré map samples the continuous state once per
forcing period,

.. math::

    P:\; x(t_0) \mapsto x(t_0 + T), \qquad P_k = P^k(x_0),

so a period-:math:`p` orbit (a response whose period is :math:`pT`, a
:math:`1/p` subharmonic) is a fixed point of :math:`P^p` and shows as :math:`p`
points in the section; a quasi-periodic response fills a closed curve, a
chaotic one a fractal set.  The tools here are generic (they know only the
:class:`~cosim.simulator.Simulator` and plain callables):

* :func:`poincare_section` advances a simulator to :math:`t_0 + kT` and
  collects the continuous state (or chosen outputs) after transients;
* :func:`detect_period` finds the smallest :math:`p` with
  :math:`\lVert P_{i+p} - P_i \rVert \le \mathrm{tol}` over the last points;
* :func:`find_periodic_orbit` solves :math:`P^p(x) - x = 0` by Newton's method
  with a finite-difference Jacobian, for any ``flow(x0, t0, duration) -> x1``
  (a simulator wrapped by :func:`simulator_flow`, or an analytic flow);
* :func:`floquet_multipliers`: the eigenvalues :math:`\mu_j` of the monodromy
  matrix :math:`\partial P^p / \partial x` at the orbit, by finite
  differences; the orbit is asymptotically stable if every
  :math:`|\mu_j| < 1` (for a linear system :math:`\dot x = Ax + f(t)`,
  :math:`\mu_j = e^{\lambda_j(A) pT}`);
* :func:`bifurcation_diagram`: a brute-force sweep of a parameter with
  natural continuation (each run starts from the previous end state, so a
  branch is followed as long as it stays stable; coexisting branches need
  several sweeps, e.g. up and down, or different start states).

Time is integer nanoseconds: the section instants are
:math:`t_0 + \mathrm{round}(kT)` in ns, computed from :math:`k` (never
accumulated), so a period that is not a whole number of ns (``2*pi/0.8``)
costs at most 0.5 ns of phase per sample and no drift.  A fixed-step solver
takes a partial step to reach each section instant that is off its grid.

Limitations
-----------
* Only continuous states are mapped; discrete states (sampled controllers) are
  taken from the fresh context of each run and not part of the orbit.
* The brute-force diagram finds stable orbits only; unstable branches and
  bifurcation points need a path-following (pseudo-arclength) continuation of
  :func:`find_periodic_orbit`, which is not implemented here.
* :func:`detect_period` returns ``None`` for quasi-periodic and chaotic
  responses and for transients not yet decayed: the three are not told apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import CosimError
from .time import TICKS_PER_SECOND

Flow = Callable[[np.ndarray, float, float], np.ndarray]

__all__ = [
    "BifurcationDiagram", "PeriodicOrbit", "PoincareSection", "bifurcation_diagram",
    "detect_period", "find_periodic_orbit", "floquet_multipliers", "poincare_section",
    "simulator_flow",
]


# --------------------------------------------------------------- sections
@dataclass
class PoincareSection:
    """Stroboscopic samples :math:`P_k` (rows of ``points``) at ``times`` [s]."""

    times: np.ndarray
    points: np.ndarray
    labels: list[str]
    period_s: float
    final_state: np.ndarray = field(repr=False, default=None)

    def period(self, tol: float = 1e-6, max_period: int = 12, window: int | None = None,
               scale: Any = None) -> int | None:
        """:func:`detect_period` of these points."""
        return detect_period(self.points, tol=tol, max_period=max_period, window=window,
                             scale=scale)

    def column(self, label: str | int) -> np.ndarray:
        """One coordinate of the points, by label or index."""
        j = label if isinstance(label, int) else self.labels.index(label)
        return self.points[:, j]


def _start_simulator(make_simulator: Any) -> Any:
    return make_simulator() if callable(make_simulator) else make_simulator


def _selector(sim: Any, states: Any) -> tuple[Callable[[], np.ndarray], list[str]]:
    """A function reading the chosen coordinates from ``sim.ctx``, and their labels."""
    plan = sim.plan
    names = [None] * plan.n_continuous
    for h, (a, b, _) in plan.cstate_index.items():
        for i in range(a, b):
            names[i] = h.path if b - a == 1 else f"{h.path}[{i - a}]"
    if states is None:
        return (lambda: sim.ctx.xc.copy()), names
    items = [states] if isinstance(states, (str, int)) else list(states)
    getters, labels = [], []
    for s in items:
        if isinstance(s, (int, np.integer)):
            i = int(s)
            getters.append(lambda i=i: float(sim.ctx.xc[i]))
            labels.append(names[i])
        else:
            port = sim.diagram.find(s) if isinstance(s, str) else s
            getters.append(lambda p=port: float(np.ravel(sim.ctx.output(p))[0]))
            labels.append(port.path if hasattr(port, "path") else str(s))
    return (lambda: np.array([g() for g in getters])), labels


def poincare_section(make_simulator: Any, period_s: float, n_transient: int, n_points: int,
                     states: Any = None, t0: float | None = None) -> PoincareSection:
    """Stroboscopic Poincaré section of a simulated forced system.

    Parameters
    ----------
    make_simulator : callable or Simulator
        ``make_simulator()`` returning a fresh :class:`~cosim.simulator.Simulator`,
        or a simulator to continue (its context time is the start).
    period_s : float
        Forcing period :math:`T` [s].
    n_transient : int
        Periods skipped before collecting (the transient).
    n_points : int
        Section points collected, at :math:`t_0 + kT`, ``k = n_transient ...
        n_transient + n_points - 1`` (``n_transient = 0`` includes the start state).
    states : None, int, str, port or a sequence of them
        ``None``: the whole continuous state vector ``ctx.xc``; ints: indices
        into it; strings (``'vessel.x'``) or ports: output values, which must be
        computed in the run (recorded, connected or exported).
    t0 : float, optional
        Start time [s] (default: the simulator's current time).

    Returns
    -------
    PoincareSection
        ``final_state`` is the continuous state at the last section instant
        (a start state for continuation).
    """
    if period_s <= 0:
        raise ValueError(f"poincare_section: period_s must be > 0, got {period_s!r}")
    if n_points < 1 or n_transient < 0:
        raise ValueError("poincare_section: need n_points >= 1 and n_transient >= 0")
    sim = _start_simulator(make_simulator)
    if t0 is not None:
        sim.ctx.set_time(t0)
    start = sim.ctx.ticks
    read, labels = _selector(sim, states)
    period_ticks = period_s * TICKS_PER_SECOND
    times, pts = [], []
    for k in range(n_transient + n_points):
        tick = start + int(round(k * period_ticks))
        if tick > sim.ctx.ticks or not getattr(sim, "_initialized", True):
            sim.advance_to_ticks(tick)
        if k >= n_transient:
            times.append(tick / TICKS_PER_SECOND)
            pts.append(np.atleast_1d(read()))
    return PoincareSection(np.array(times), np.array(pts), labels, float(period_s),
                           sim.ctx.xc.copy())


# ----------------------------------------------------------------- period
def detect_period(points: Any, tol: float = 1e-6, max_period: int = 12,
                  window: int | None = None, scale: Any = None) -> int | None:
    r"""The period (in forcing periods) of a sequence of section points.

    The smallest :math:`p \le` ``max_period`` with

    .. math::

        \max_i \lVert (P_{i+p} - P_i) / s \rVert_2 \le \mathrm{tol}
        \cdot \max\big(\max_i \lVert P_i / s \rVert_2,\ 10^{-300}\big)

    over the last ``window`` points (default: all), ``s`` = ``scale`` (one
    value per coordinate to make them commensurable, default 1); i.e. ``tol``
    is relative to the size of the points.  At least :math:`2p` points are
    needed to accept :math:`p` (every point of the orbit compared once).

    Returns ``None`` if no such :math:`p` exists: a quasi-periodic or chaotic
    response, a period above ``max_period``, or a transient not yet decayed
    (the three are not told apart; skip more transient periods, or look at the
    section).
    """
    P = np.asarray(points, dtype=float)
    if P.ndim == 1:
        P = P[:, None]
    if window is not None:
        P = P[-window:]
    if scale is not None:
        P = P / np.asarray(scale, dtype=float)
    size = max(float(np.max(np.linalg.norm(P, axis=1))) if len(P) else 0.0, 1e-300)
    for p in range(1, max_period + 1):
        if len(P) < 2 * p:
            break
        d = float(np.max(np.linalg.norm(P[p:] - P[:-p], axis=1)))
        if d <= tol * size:
            return p
    return None


# ------------------------------------------------------------------ flows
def simulator_flow(make_simulator: Callable[[], Any]) -> Flow:
    """``flow(x0, t0, duration) -> x1`` integrating a fresh simulator from ``x0`` at ``t0``.

    ``make_simulator()`` must return a new :class:`~cosim.simulator.Simulator`
    each call (``record=False`` saves the recording); its continuous state is
    replaced by ``x0``.  ``t0`` and ``t0 + duration`` are rounded to the 1 ns
    grid.  The same ``t0`` and ``duration`` give the same step sequence, so the
    map is a smooth function of ``x0`` and finite differences work.
    """
    def flow(x0: np.ndarray, t0: float, duration: float) -> np.ndarray:
        sim = make_simulator()
        ctx = sim.ctx
        start = int(round(t0 * TICKS_PER_SECOND))
        ctx.ticks = start
        ctx.time = ctx.mode_time = start / TICKS_PER_SECOND
        x0 = np.asarray(x0, dtype=float)
        if x0.shape != ctx.xc.shape:
            raise CosimError(f"simulator_flow: the state has {ctx.xc.size} entries, x0 has "
                             f"shape {x0.shape}")
        ctx.xc = x0.copy()
        sim.advance_to_ticks(start + int(round(duration * TICKS_PER_SECOND)))
        return sim.ctx.xc.copy()
    return flow


def _jacobian(flow: Flow, x: np.ndarray, t0: float, duration: float, eps: Any,
              central: bool, fx: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Finite-difference Jacobian of ``x -> flow(x, t0, duration)`` and ``flow(x)``."""
    n = x.size
    h = _steps(x, eps)
    if fx is None:
        fx = flow(x, t0, duration)
    J = np.empty((fx.size, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h[j]
        if central:
            J[:, j] = (flow(x + e, t0, duration) - flow(x - e, t0, duration)) / (2 * h[j])
        else:
            J[:, j] = (flow(x + e, t0, duration) - fx) / h[j]
    return J, fx


def _steps(x: np.ndarray, eps: Any) -> np.ndarray:
    if eps is None:
        return 1e-6 * np.maximum(np.abs(x), 1.0)
    return np.broadcast_to(np.asarray(eps, dtype=float), x.shape).copy()


# ----------------------------------------------------------------- orbits
@dataclass
class PeriodicOrbit:
    r"""A fixed point of :math:`P^p`, with its stability.

    ``x``: the state at :math:`t_0` (mod :math:`T`) on the orbit; ``points``:
    its :math:`p` section points :math:`x, P(x), \dots, P^{p-1}(x)`;
    ``monodromy``: :math:`\partial P^p/\partial x` at ``x``; ``multipliers``:
    its eigenvalues (Floquet multipliers), sorted by decreasing modulus.
    """

    x: np.ndarray
    period: int
    period_s: float
    t0: float
    points: np.ndarray
    residual: float
    iterations: int
    converged: bool
    monodromy: np.ndarray
    multipliers: np.ndarray

    @property
    def stable(self) -> bool:
        """All Floquet multipliers strictly inside the unit circle."""
        return bool(np.max(np.abs(self.multipliers)) < 1.0)

    @property
    def spectral_radius(self) -> float:
        return float(np.max(np.abs(self.multipliers)))


def floquet_multipliers(flow: Flow, x: Any, period_s: float, p: int = 1, t0: float = 0.0,
                        eps: Any = None, central: bool = True
                        ) -> tuple[np.ndarray, np.ndarray]:
    r"""Floquet multipliers and monodromy matrix :math:`\partial P^p/\partial x` at ``x``.

    By finite differences of ``flow(x, t0, p * period_s)`` with steps ``eps``
    (default :math:`10^{-6} \max(|x_j|, 1)`), central by default (error
    :math:`O(\varepsilon^2)`; forward: :math:`O(\varepsilon)`).  Multipliers are
    sorted by decreasing modulus.  ``x`` should lie on a periodic orbit (else
    the numbers are the local linearisation of the map, not multipliers).
    """
    x = np.asarray(x, dtype=float)
    J, _ = _jacobian(flow, x, t0, p * period_s, eps, central)
    mu = np.linalg.eigvals(J)
    return mu[np.argsort(-np.abs(mu), kind="stable")], J


def find_periodic_orbit(flow: Flow, x0: Any, period_s: float, p: int = 1, t0: float = 0.0,
                        tol: float = 1e-9, max_iter: int = 30, eps: Any = None,
                        central: bool = False) -> PeriodicOrbit:
    r"""Solve :math:`G(x) = P^p(x) - x = 0` by Newton's method.

    The Jacobian :math:`\partial P^p/\partial x - I` is computed by finite
    differences (:math:`n` extra flows per iteration with forward differences,
    :math:`2n` with ``central=True``); a step is halved (up to 10 times) while
    it does not decrease :math:`\lVert G\rVert`.  Converged when
    :math:`\lVert G(x)\rVert \le \mathrm{tol}\,\max(1, \lVert x\rVert)`.  Start
    from a section point after transients (:func:`poincare_section`): Newton
    converges to unstable orbits as well, and the multipliers tell which.

    ``p`` need not be the minimal period: a period-1 orbit also solves the
    :math:`p = 3` problem; check ``orbit.points`` (or :func:`detect_period` on
    them) when that matters.  The returned multipliers are those of
    :math:`P^p` at the solution, by central differences.
    """
    x = np.asarray(x0, dtype=float).copy()
    duration = p * period_s
    fx = flow(x, t0, duration)
    g = fx - x
    res = float(np.linalg.norm(g))
    it = 0
    converged = res <= tol * max(1.0, float(np.linalg.norm(x)))
    while not converged and it < max_iter:
        it += 1
        J, _ = _jacobian(flow, x, t0, duration, eps, central, fx=fx)
        try:
            dx = np.linalg.solve(J - np.eye(x.size), -g)
        except np.linalg.LinAlgError:
            dx = np.linalg.lstsq(J - np.eye(x.size), -g, rcond=None)[0]
        lam = 1.0
        for _ in range(10):
            xn = x + lam * dx
            fxn = flow(xn, t0, duration)
            gn = fxn - xn
            rn = float(np.linalg.norm(gn))
            if np.isfinite(rn) and rn < res:
                break
            lam *= 0.5
        else:
            break  # no decrease: give up (converged stays False)
        x, fx, g, res = xn, fxn, gn, rn
        converged = res <= tol * max(1.0, float(np.linalg.norm(x)))
    mu, M = floquet_multipliers(flow, x, period_s, p, t0, eps, central=True)
    pts = [x.copy()]
    for k in range(1, p):
        pts.append(flow(pts[-1], t0 + (k - 1) * period_s, period_s))
    return PeriodicOrbit(x, p, float(period_s), float(t0), np.array(pts), res, it,
                         bool(converged), M, mu)


# ---------------------------------------------------------------- sweeps
@dataclass
class BifurcationDiagram:
    """Section points of one coordinate per parameter value, and the detected periods."""

    params: np.ndarray
    points: list[np.ndarray]
    periods: list[int | None]
    label: str
    final_states: list[np.ndarray] = field(repr=False, default_factory=list)

    def rows(self) -> list[tuple[float, int, float, int | None]]:
        """``(param, k, value, period)`` rows, e.g. for a CSV file."""
        return [(float(q), k, float(v), per) for q, pts, per
                in zip(self.params, self.points, self.periods) for k, v in enumerate(pts)]

    def ranges(self, period: int | None) -> list[tuple[float, float]]:
        """Parameter intervals ``(first, last)`` over which the detected period is ``period``."""
        out, cur = [], None
        for q, per in zip(self.params, self.periods):
            if per == period:
                cur = (cur[0], float(q)) if cur else (float(q), float(q))
            elif cur:
                out.append(cur)
                cur = None
        if cur:
            out.append(cur)
        return out


def bifurcation_diagram(make_simulator: Callable[[float], Any], params: Iterable[float],
                        period_s: float | Callable[[float], float], n_transient: int,
                        n_points: int, coordinate: Any = 0, continuation: bool = True,
                        x0: Any = None, tol: float = 1e-6, max_period: int = 12,
                        scale: Any = None) -> BifurcationDiagram:
    """Brute-force bifurcation diagram over a parameter.

    For each value ``q`` of ``params`` (in the order given): a simulator
    ``make_simulator(q)`` is run for ``n_transient + n_points`` forcing periods
    ``period_s(q)`` (or a constant), the section of the full state is taken,
    and its period detected (:func:`detect_period` with ``tol``,
    ``max_period``, ``scale``).  With ``continuation`` each run starts from the
    state at the last section instant of the previous one (natural
    continuation: the start phase of the forcing is 0 in both), else from the
    simulator's own initial state; ``x0`` sets the start state of the first run.

    ``coordinate`` (an index or a label of the state vector) is the one kept in
    the diagram.  Returns a :class:`BifurcationDiagram`.
    """
    params = np.asarray(list(params), dtype=float)
    pts, periods, finals = [], [], []
    prev = None if x0 is None else np.asarray(x0, dtype=float)
    label = None
    for q in params:
        sim = make_simulator(float(q))
        start = prev if continuation else x0
        if start is not None:
            sim.ctx.xc = np.array(start, dtype=float)
        T = float(period_s(q)) if callable(period_s) else float(period_s)
        sec = poincare_section(sim, T, n_transient, n_points)
        j = coordinate if isinstance(coordinate, (int, np.integer)) else \
            sec.labels.index(coordinate)
        label = sec.labels[j]
        pts.append(sec.points[:, j].copy())
        periods.append(sec.period(tol=tol, max_period=max_period, scale=scale))
        finals.append(sec.final_state)
        prev = sec.final_state
    return BifurcationDiagram(params, pts, periods, label or "", finals)

