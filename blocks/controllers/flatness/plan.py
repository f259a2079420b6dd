r"""Trajectory plans in the flat outputs, and the checks run on them before a run.

A plan gives, at any time, the flag of every flat output (the output and its
derivatives).  Three kinds:

* :class:`PolynomialPlan`: point to point, each output a polynomial of the least degree
  :math:`2k-1` that meets :math:`k` boundary values (value, first, ..., (k-1)-th
  derivative) at both ends: the cubic of the expanding-wheel vehicle (k = 2), the
  quintic of a rest-to-rest lane change (k = 3), the degree-7 rest-to-rest plan of a
  crane (k = 4, the load's jerk zero at both ends so the trolley starts and stops at rest);
* :class:`SplinePlan`: through way points at given times (``scipy.interpolate``
  B-splines of degree :math:`2k-1`, :math:`C^{2k-2}`), boundary derivatives as above;
* :class:`FlatsysPlan`: a python-control ``SystemTrajectory`` (from
  :func:`plan_flatsys`, i.e. ``control.flatsys.point_to_point`` with its bases, costs
  and constraints) seen as a plan.

Outside :math:`[t_0, t_f]` a plan continues with the Taylor polynomial of its boundary
flag (the derivatives it was given at the boundary; a rest-to-rest plan holds still).

:func:`check_plan` maps a plan through a :class:`~.system.FlatSystem`'s inverse on a
fine grid and raises :class:`SingularityError` where the inverse map's singularity
function vanishes or changes sign (with the time), :class:`ConstraintError` where a
state or input leaves its bounds; it returns a :class:`PlanReport` with the mapped
trajectory otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cosim.errors import ParameterError


class PlanError(ParameterError):
    """A plan that cannot be built or followed (raised before the run)."""


class SingularityError(PlanError):
    """The plan crosses (or touches) the singular set of the inverse map."""

    def __init__(self, message: str, time_s: float, value: float) -> None:
        super().__init__(message)
        self.time_s = time_s
        self.value = value


class ConstraintError(PlanError):
    """A state or input of the plan leaves its bounds."""

    def __init__(self, message: str, name: str, time_s: float, value: float) -> None:
        super().__init__(message)
        self.name = name
        self.time_s = time_s
        self.value = value


def _taylor(flag: np.ndarray, dt: float, order: int) -> np.ndarray:
    """Derivatives 0..order at ``dt`` of the Taylor polynomial of ``flag`` (derivs 0..k-1)."""
    k = len(flag)
    out = np.zeros(order + 1)
    for j in range(order + 1):
        out[j] = sum(flag[j + i] * dt ** i / math.factorial(i) for i in range(k - j))
    return out


class Plan:
    """Base class: ``t0``, ``tf``, ``noutputs``; :meth:`flag` and :meth:`evaluate`.

    Subclasses implement :meth:`_inside` (derivatives 0..order of every output at a
    time inside :math:`[t_0, t_f]`) and set ``_bc_order`` (the number of boundary
    derivatives the plan was built with, used for the continuation outside).
    """

    t0: float = 0.0
    tf: float = 0.0
    noutputs: int = 0
    _bc_order: int = 1

    def _inside(self, t: float, order: int) -> np.ndarray:
        raise NotImplementedError

    def flag(self, t: float, order: int) -> list[np.ndarray]:
        """Flag (derivatives 0..order) of every output at time ``t`` [s]."""
        return list(self.flag_array(t, order))

    def flag_array(self, t: float, order: int) -> np.ndarray:
        """As :meth:`flag`, one ``(noutputs, order + 1)`` array."""
        t = float(t)
        if self.t0 <= t <= self.tf:
            return self._inside(t, order)
        edge = self.t0 if t < self.t0 else self.tf
        bc = self._inside(edge, self._bc_order - 1)
        return np.array([_taylor(bc[i], t - edge, order) for i in range(self.noutputs)])

    def evaluate(self, times: Any, order: int) -> np.ndarray:
        """Flags at many times: an array ``(noutputs, order + 1, len(times))``."""
        times = np.atleast_1d(np.asarray(times, dtype=float))
        return np.stack([self.flag_array(t, order) for t in times], axis=-1)


def _boundary(name: str, values: Any) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or not np.all(np.isfinite(arr)):
        raise PlanError(f"plan: {name} must be finite, one row per flat output "
                        f"(value, derivative, ...), got {values!r}")
    return arr


class PolynomialPlan(Plan):
    r"""Point-to-point plan: each flat output the polynomial of degree :math:`2k-1` in
    :math:`t - t_0` that takes the :math:`k` boundary derivatives given at both ends.

    ``start`` and ``end`` have one row per flat output: value, first derivative, ...
    (:math:`k` columns, the same for both ends).  :attr:`coefficients` are the
    polynomial's coefficients in powers of :math:`t - t_0` (physical units).
    """

    def __init__(self, t0: float, tf: float, start: Any, end: Any) -> None:
        self.t0, self.tf = float(t0), float(tf)
        if not (math.isfinite(self.t0) and math.isfinite(self.tf) and self.tf > self.t0):
            raise PlanError(f"PolynomialPlan: need t0 < tf, got t0={t0!r}, tf={tf!r}")
        a, b = _boundary("start", start), _boundary("end", end)
        if a.shape != b.shape:
            raise PlanError(f"PolynomialPlan: start {a.shape} and end {b.shape} must have "
                            "the same shape (outputs x boundary derivatives)")
        self.noutputs, k = a.shape
        self._bc_order = k
        n = 2 * k
        T = self.tf - self.t0
        # conditions on p(s) = sum c_j s^j with s = (t - t0) / T in [0, 1]
        M = np.zeros((n, n))
        for d in range(k):
            for j in range(d, n):
                fall = math.perm(j, d)
                M[d, j] = fall * (0.0 ** (j - d) if j > d else 1.0)
                M[k + d, j] = fall
        rhs = np.concatenate([a * T ** np.arange(k), b * T ** np.arange(k)], axis=1)
        c_s = np.linalg.solve(M, rhs.T).T                     # (m, n) in powers of s
        self.coefficients = c_s / T ** np.arange(n)           # powers of (t - t0)
        self.degree = n - 1
        # coefficients of every derivative, padded: _dcoef[j] @ dt**arange(n) = z^(j)
        self._dcoef = [self.coefficients.copy()]
        for _ in range(n - 1):
            c = self._dcoef[-1]
            d = np.zeros_like(c)
            d[:, :-1] = c[:, 1:] * np.arange(1, n)
            self._dcoef.append(d)

    def _inside(self, t: float, order: int) -> np.ndarray:
        powers = (t - self.t0) ** np.arange(self.degree + 1)
        out = np.zeros((self.noutputs, order + 1))
        for j in range(min(order, self.degree) + 1):
            out[:, j] = self._dcoef[j] @ powers
        return out


class SplinePlan(Plan):
    r"""Plan through way points: each flat output a B-spline of degree :math:`2k-1`
    through ``waypoints[i]`` at ``times``, with ``k - 1`` derivatives given at both
    ends (``start_derivatives`` / ``end_derivatives``, one row per output: first,
    second, ... derivative; default zeros: start and end at rest to order k - 1).
    """

    def __init__(self, times: Any, waypoints: Any, start_derivatives: Any = None,
                 end_derivatives: Any = None, k: int = 2) -> None:
        from scipy.interpolate import make_interp_spline

        t = np.asarray(times, dtype=float)
        y = np.atleast_2d(np.asarray(waypoints, dtype=float))
        if t.ndim != 1 or t.size < 2 or np.any(np.diff(t) <= 0):
            raise PlanError(f"SplinePlan: times must increase strictly, got {times!r}")
        if y.shape[1] != t.size or not np.all(np.isfinite(y)):
            raise PlanError(f"SplinePlan: waypoints need one finite row per flat output "
                            f"with {t.size} values, got shape {y.shape}")
        if int(k) < 1:
            raise PlanError(f"SplinePlan: k must be >= 1, got {k!r}")
        k = int(k)
        self.noutputs = y.shape[0]
        self.t0, self.tf = float(t[0]), float(t[-1])
        self._bc_order = k
        zero = np.zeros((self.noutputs, k - 1))
        d0 = zero if start_derivatives is None else _boundary("start_derivatives",
                                                              start_derivatives)
        d1 = zero if end_derivatives is None else _boundary("end_derivatives", end_derivatives)
        if d0.shape != zero.shape or d1.shape != zero.shape:
            raise PlanError(f"SplinePlan: boundary derivatives need shape {zero.shape} "
                            f"(outputs x {k - 1}), got {d0.shape} and {d1.shape}")
        self.degree = 2 * k - 1
        self._splines = []
        for i in range(self.noutputs):
            bc = None
            if k > 1:
                bc = ([(j + 1, d0[i, j]) for j in range(k - 1)],
                      [(j + 1, d1[i, j]) for j in range(k - 1)])
            self._splines.append(make_interp_spline(t, y[i], k=self.degree, bc_type=bc))

    def _inside(self, t: float, order: int) -> np.ndarray:
        out = np.zeros((self.noutputs, order + 1))
        for i, s in enumerate(self._splines):
            for j in range(min(order, self.degree) + 1):
                out[i, j] = s(t, nu=j)
        return out


class FlatsysPlan(Plan):
    """A python-control ``SystemTrajectory`` as a plan (flags from its basis)."""

    def __init__(self, trajectory: Any, t0: float, tf: float, bc_order: int = 1) -> None:
        self.trajectory = trajectory
        self.t0, self.tf = float(t0), float(tf)
        self.noutputs = len(trajectory.coeffs)
        self._bc_order = int(bc_order)

    def _inside(self, t: float, order: int) -> np.ndarray:
        tr = self.trajectory
        out = np.zeros((self.noutputs, order + 1))
        for i in range(self.noutputs):
            for j in range(tr.basis.var_ncoefs(i)):
                for d in range(order + 1):
                    out[i, d] += tr.coeffs[i][j] * tr.basis.eval_deriv(j, d, t, var=i)
        return out


def plan_flatsys(system: Any, T: float, x0: Any, u0: Any, xf: Any, uf: Any,
                 basis: Any = None, **kwargs: Any) -> FlatsysPlan:
    """Solve a point-to-point problem with ``control.flatsys.point_to_point``.

    ``system`` is a :class:`~.system.FlatSystem` (converted with ``to_flatsys``) or a
    python-control flat system; ``basis`` defaults to ``PolyFamily(2 * max(flaglen))``;
    further keyword arguments (``cost``, ``trajectory_constraints``, ``initial_guess``,
    ``timepts``, ...) go to ``point_to_point``.  The plan continues outside
    :math:`[0, T]` with the boundary flag up to order ``max(flaglen) - 1``.
    """
    from control import flatsys

    sys = system.to_flatsys() if hasattr(system, "to_flatsys") else system
    q = max(getattr(system, "flaglen", (2,)))
    if basis is None:
        basis = flatsys.PolyFamily(2 * q)
    timepts = kwargs.pop("timepts", [0.0, float(T)])
    traj = flatsys.point_to_point(sys, timepts, x0, u0, xf, uf, basis=basis, **kwargs)
    if getattr(traj, "success", True) is False:
        raise PlanError(f"plan_flatsys: point_to_point failed: {getattr(traj, 'message', '')}")
    return FlatsysPlan(traj, 0.0, float(T), bc_order=q)


@dataclass
class PlanReport:
    """A plan mapped through the inverse: times, states, inputs, singularity margin."""

    time: np.ndarray
    x: np.ndarray
    u: np.ndarray
    singularity: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def min_singularity(self) -> tuple[float, float] | None:
        """Smallest |singularity| on the plan and its time, or None."""
        if self.singularity is None:
            return None
        i = int(np.argmin(np.abs(self.singularity)))
        return float(abs(self.singularity[i])), float(self.time[i])


def check_plan(system: Any, plan: Plan, n: int = 2001, bounds: dict | None = None,
               singular_tol: float = 0.0, t0: float | None = None,
               tf: float | None = None) -> PlanReport:
    """Map ``plan`` through ``system.reverse`` on ``n`` points and check it.

    Raises :class:`SingularityError` where ``system.singularity`` changes sign between
    grid points, or its magnitude is ``<= singular_tol``, or a local minimum of its
    magnitude on the grid, refined by ``scipy.optimize.minimize_scalar``, reaches
    ``max(singular_tol, 1e-6 * max |s|)`` (a function that touches zero without a sign
    change: a speed); the message names the time and the value.  Raises
    :class:`PlanError` where the inverse map gives a non-finite value,
    :class:`ConstraintError` where a state or input named in ``bounds``
    (``{name: (lower, upper)}``, ``None`` for no bound) leaves its range.
    """
    a = plan.t0 if t0 is None else float(t0)
    b = plan.tf if tf is None else float(tf)
    times = np.linspace(a, b, int(n))
    q = max(system.flaglen)
    who = type(system).__name__

    def flag_at(t):
        return [row[:ql] for row, ql in zip(plan.flag_array(t, q - 1), system.flaglen)]

    def singular(t, s):
        return SingularityError(
            f"{who}: the plan reaches the singular set of the inverse map at t = {t:.6g} s "
            f"(singularity function {s:.3g}); change the boundary values or the duration",
            float(t), float(s))

    xs, us, sing = [], [], []
    for t in times:
        zflag = flag_at(t)
        s = system.singularity(zflag)
        if s is not None:
            sing.append(float(s))
            if abs(s) <= singular_tol:
                raise singular(t, s)
            if len(sing) > 1 and np.sign(sing[-1]) != np.sign(sing[-2]):
                raise SingularityError(
                    f"{who}: the plan crosses the singular set of the inverse map between "
                    f"t = {times[len(sing) - 2]:.6g} s and {t:.6g} s (singularity function "
                    f"{sing[-2]:.3g} -> {sing[-1]:.3g}); change the boundary values or the "
                    "duration", float(t), float(s))
        x, u = system.reverse(zflag)
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(u))):
            raise PlanError(f"{who}: the inverse map is not finite at t = {t:.6g} s "
                            f"(x = {x}, u = {u})")
        xs.append(np.asarray(x, float))
        us.append(np.asarray(u, float))
    if sing:
        # a singularity function that touches zero without changing sign (a speed, a
        # norm) shows as a small local minimum of |s| on the grid: refine each one
        from scipy.optimize import minimize_scalar

        mag = np.abs(np.array(sing))
        floor = max(singular_tol, 1e-6 * float(mag.max()))
        for i in range(1, len(mag) - 1):
            if mag[i] <= mag[i - 1] and mag[i] <= mag[i + 1] and mag[i] < 1e-2 * mag.max():
                r = minimize_scalar(lambda t: abs(system.singularity(flag_at(t))),
                                    bounds=(times[i - 1], times[i + 1]), method="bounded",
                                    options={"xatol": 1e-12 * max(1.0, abs(b))})
                if r.fun <= floor:
                    raise singular(r.x, r.fun)
    X, U = np.array(xs).T, np.array(us).T
    for name, (lo, hi) in (bounds or {}).items():
        if name in system.states:
            row = X[system.states.index(name)]
        elif name in system.inputs:
            row = U[system.inputs.index(name)]
        else:
            raise PlanError(f"check_plan: bound on unknown signal {name!r}; states "
                            f"{system.states}, inputs {system.inputs}")
        bad = np.zeros(row.shape, bool)
        if lo is not None:
            bad |= row < lo
        if hi is not None:
            bad |= row > hi
        if np.any(bad):
            i = int(np.argmax(bad))
            raise ConstraintError(
                f"{type(system).__name__}: {name} = {row[i]:.6g} at t = {times[i]:.6g} s is "
                f"outside [{lo}, {hi}] (first of {int(bad.sum())} of {len(times)} points)",
                name, float(times[i]), float(row[i]))
    return PlanReport(times, X, U, np.array(sing) if sing else None)
