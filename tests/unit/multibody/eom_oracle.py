r"""Backward errors of the constrained equations of motion: an oracle for any solver.

A solution ``(v̇, λ)`` is judged by how far it is from solving the formulation's equations
(:mod:`blocks.multibody.formulations`), written with an independent evaluation of ``M``,
``J``, ``Q``, ``gamma``, ``Phi``, ``Phi'`` (the Python path's), not by comparing it with
another round-off-polluted solution.

The measure is the normwise backward error (Rigal and Gaches, 1967; Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., thm. 7.1) of each block of equations,

.. math::

    \eta = \frac{\lVert f - K x \rVert_\infty}{\lVert K \rVert_\infty \lVert x \rVert_\infty
                                                + \lVert f \rVert_\infty},

the smallest relative change of that block's ``K`` and ``f`` that makes ``x`` exact.  A
backward-stable solver leaves a small multiple of the machine epsilon whatever the
conditioning.  It is computed in *mass-weighted coordinates*, so that it does not depend on
the units of the coordinates or on how each constraint row is scaled: with ``M = L L'``,

.. math::

    y = L' \dot v, \qquad B = R\, J L^{-T} \ (\text{unit rows}), \qquad \mu = R^{-1} \lambda,

every component of ``y`` and ``μ`` is in ``sqrt(kg) m/s^2`` (translations and rotations,
metres and radians, forces and torques alike).

Lagrange, block by block (the dynamics rows, then the constraint rows, each against its
own terms: with one norm over both, the large ``μ`` of near-massless links, whose
constraint forces cancel, would hide errors of the heavy bodies' accelerations)::

    y + B' μ = L^-1 Q                      c = gamma - 2 alpha Phi' - beta^2 Phi
    B y      = R c

Penalty and augmented Lagrangian, iteration ``i`` (the solver's own two steps)::

    L^-1 (M + J' a J) L^-T y_i = L^-1 (Q or M v̇_{i-1}) - L^-1 J' a b
    λ_i - λ_{i-1} = a (J v̇_i + b)                 (rows in μ units)

The multiplier update of the penalty forms carries the rounding of ``a (J v̇ + b)``,
a difference amplified by ``a``: ``λ`` is determined only to about ``eps a |J| |v̇|``
(relative 1e-8 in the seed-003 loop with ``a = 2e6``); and ``M + J' a J`` has a condition
number up to 1e16 there (``a`` against a 1e-9 kg m^2 inertia), so that its normwise check
sees only errors with a part along the penalized directions: the Lagrange cases check the
shared terms (``Q``, ``J``) sharply.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.linalg import solve_triangular

EPS = float(np.finfo(float).eps)


@dataclasses.dataclass
class Equations:
    """The Python path's terms of the equations of motion at one state."""

    M: np.ndarray
    J: np.ndarray
    Q: np.ndarray
    gamma: np.ndarray
    phi: np.ndarray
    phid: np.ndarray
    penalty_rows: np.ndarray  # the penalty forms' weight per row (before their factor)

    @classmethod
    def of(cls, mech, q: np.ndarray, v: np.ndarray, t: float = 0.0) -> Equations:
        phi, J, phit, gamma = mech.constraints(q, v, t)
        return cls(mech.M, J, mech.forces(q, v, t), gamma, phi, J @ v + phit,
                   mech.penalty_rows)


class EnergyFrame:
    """Mass-weighted coordinates of one state (module docstring)."""

    def __init__(self, M: np.ndarray, J: np.ndarray) -> None:
        self.L = np.linalg.cholesky(M)
        B = solve_triangular(self.L, J.T, lower=True).T  # J L^-T
        self.R = 1.0 / np.linalg.norm(B, axis=1)
        self.B = self.R[:, None] * B

    def y(self, vd: np.ndarray) -> np.ndarray:
        return self.L.T @ vd

    def vd(self, y: np.ndarray) -> np.ndarray:
        return solve_triangular(self.L.T, y, lower=False)

    def mu(self, lam: np.ndarray) -> np.ndarray:
        return lam / self.R

    def lam(self, mu: np.ndarray) -> np.ndarray:
        return mu * self.R

    def force(self, F: np.ndarray) -> np.ndarray:
        """A generalized force (or ``M v̇``-like term) in mass-weighted units."""
        return solve_triangular(self.L, F, lower=True)


def _norm(x: np.ndarray) -> float:
    return float(np.linalg.norm(x, np.inf))


def _eta(r: np.ndarray, K: np.ndarray, x: np.ndarray, f: np.ndarray) -> float:
    """Normwise backward error of ``x`` in ``K x = f`` with residual ``r``."""
    return _norm(r) / (_norm(K) * _norm(x) + _norm(f))


def kkt(fr: EnergyFrame) -> np.ndarray:
    n, m = fr.L.shape[0], fr.B.shape[0]
    return np.block([[np.eye(n), fr.B.T], [fr.B, np.zeros((m, m))]])


def condition(K: np.ndarray) -> float:
    """``||K|| ||K^-1||`` (infinity norm)."""
    return _norm(K) * _norm(np.linalg.inv(K))


def lagrange_rhs(eq: Equations, alpha: float, beta: float) -> np.ndarray:
    return eq.gamma - 2.0 * alpha * eq.phid - beta ** 2 * eq.phi


def lagrange_backward_errors(eq: Equations, fr: EnergyFrame, c: np.ndarray,
                             vd: np.ndarray, lam: np.ndarray) -> tuple[float, float]:
    """``(η of the dynamics rows, η of the constraint rows)`` of ``(v̇, λ)`` in the KKT
    system with constraint right-hand side ``c`` (module docstring)."""
    y, mu, Qh, ch = fr.y(vd), fr.mu(lam), fr.force(eq.Q), fr.R * c
    r_dyn = Qh - y - fr.B.T @ mu
    r_con = ch - fr.B @ y
    return (_norm(r_dyn) / (_norm(y) + _norm(fr.B.T) * _norm(mu) + _norm(Qh)),
            _norm(r_con) / (_norm(fr.B) * _norm(y) + _norm(ch)))


def penalty_terms(eq: Equations, form) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` of the penalty forms (``a`` per row, as the library weighs it)."""
    a = form.penalty * eq.penalty_rows
    b = -eq.gamma + 2.0 * form.mu * form.omega * eq.phid + form.omega ** 2 * eq.phi
    return a, b


def penalty_backward_errors(eq: Equations, fr: EnergyFrame, a: np.ndarray, b: np.ndarray,
                            vd: np.ndarray, lam: np.ndarray, vd_prev: np.ndarray | None,
                            lam_prev: np.ndarray) -> tuple[float, float]:
    """``(η of the solve, η of the multiplier update)`` of one penalty iteration
    (``vd_prev`` None for the first)."""
    J = eq.J
    A = fr.force(fr.force(eq.M + J.T @ (a[:, None] * J)).T).T  # L^-1 A L^-T (symmetric)
    y = fr.y(vd)
    g = fr.force((eq.Q if vd_prev is None else eq.M @ vd_prev) - J.T @ (a * b))
    eta_solve = _eta(g - A @ y, A, y, g)
    r = fr.mu(lam - lam_prev - a * (J @ vd + b))
    size = fr.mu(np.abs(lam) + np.abs(lam_prev) + a * (np.abs(J) @ np.abs(vd) + np.abs(b)))
    return eta_solve, _norm(r) / _norm(size)


def backward_errors(solve, eq: Equations, form) -> list[float]:
    """Every backward error of ``solve(form) -> (v̇, λ)`` for the formulation ``form``
    (the augmented Lagrangian: each iterate, from ``solve`` with 0..iterations)."""
    fr = EnergyFrame(eq.M, eq.J)
    if form.kind in ("lagrange", "projection", "partitioning"):
        alpha, beta = (form.alpha, form.beta) if form.kind == "lagrange" else (0.0, 0.0)
        vd, lam = solve(form)
        return list(lagrange_backward_errors(eq, fr, lagrange_rhs(eq, alpha, beta), vd, lam))
    a, b = penalty_terms(eq, form)
    n_it = form.iterations if form.kind == "augmented_lagrangian" else 0
    out, vd_prev, lam_prev = [], None, np.zeros(eq.J.shape[0])
    for i in range(n_it + 1):
        vd, lam = solve(dataclasses.replace(form, iterations=i))
        out += penalty_backward_errors(eq, fr, a, b, vd, lam, vd_prev, lam_prev)
        vd_prev, lam_prev = vd, lam
    return out
