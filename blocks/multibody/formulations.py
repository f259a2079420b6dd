"""Equations of motion with constraints: the selectable formulations.

With ``M`` the mass matrix, ``Q`` the generalized forces (applied, gravity,
gyroscopic), ``J = Phi_v``, ``gamma = -(Phi'')|_{v̇=0}`` and
``Phi' = J v + Phi_t`` (Korkealaakso's thesis eqs. 26-44, Bayo's penalty and
augmented Lagrangian forms; sign conventions as in seed-001 §2.3):

``lagrange`` (Baumgarte; ``alpha = beta = 0`` is the plain index-1 form)::

    [M  J'] [v̇]   [Q                                  ]
    [J  0 ] [λ] = [gamma - 2 alpha Phi' - beta^2 Phi   ]

``penalty``::

    (M + J' a J) v̇ = Q - J' a (-gamma + 2 mu w Phi' + w^2 Phi)

solved in the range-space form (Woodbury: the same solution)::

    (J M^-1 J' + a^-1) λ = J M^-1 Q + b,     v̇ = M^-1 (Q - J' λ)

whose matrix has the condition of ``J M^-1 J'`` instead of ``~ a``: the rounding error
of a step is 1e-16, not ``1e-16 a`` (measured: the four-bar in m, mm and km agreed to
1e-9 with ``M + J' a J`` at ``a = 1e7``, to 2e-14 now), ``a^-1 > 0`` keeps it positive
definite with redundant rows, and ``a`` no longer trades accuracy for conditioning: the
default is ``1e10`` (it was ``1e7``, whose compliance left 1.7e-3 m on the corpus'
four-bar over 10 s; 2.2e-6 m at ``1e10``).

``augmented_lagrangian`` (index-1, the seed's practical iteration, fastest in
Korkealaakso's tests)::

    (M + J' a J) v̇_1     = Q        - J' a b,     b = -gamma + 2 mu w Phi' + w^2 Phi
    (M + J' a J) v̇_{i+1} = M v̇_i    - J' a b      (``iterations`` times)

(range-space: ``(J M^-1 J' + a^-1) μ = J v̇_i + b``, ``v̇_{i+1} = v̇_i - M^-1 J' μ``,
``λ_{i+1} = λ_i + μ``)

``projection``: ``lagrange`` without Baumgarte terms, and after every step
the positions are projected onto ``Phi = 0`` and the velocities onto
``Phi' = 0`` (mass-weighted least change; ``Mechanism.project_positions``).

``partitioning``: the same accelerations (``R' M R v̇_i = R' (Q - M gamma)``
is the Lagrange solution restricted to independent coordinates); after every
step the dependent coordinates are recomputed from the independent ones by
Newton, and the dependent velocities from ``J_d v_d = -(J_i v_i + Phi_t)``
(Korkealaakso's eqs. 35-44; ``Mechanism.correct_partitioned``).

Redundant constraint rows (rows that depend on the others): the index-1 forms solve in
independent rows and report minimum-norm reactions (:mod:`.redundancy`); the penalty
forms need nothing more (``M + J' a J`` stays positive definite).

Constraint forces on the bodies are ``-J' λ`` (``λ`` per constraint row; for
penalty ``λ = a (Phi'' + 2 mu w Phi' + w^2 Phi)``, for the augmented Lagrangian the sum of
these terms over the iterations, ``λ_i = λ_{i-1} + a (J v̇_i + b)``, so that
``M v̇_i = Q - J' λ_i`` holds at every iteration).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack

from cosim.errors import StepError

KINDS = ("lagrange", "penalty", "augmented_lagrangian", "projection", "partitioning")
_gesv, _potrf, _potrs = lapack.dgesv, lapack.dpotrf, lapack.dpotrs


@dataclass
class Formulation:
    """Which formulation, and its constants (see module docstring).

    ``alpha``, ``beta``: Baumgarte constants [1/s]; ``penalty``: ``a`` (dimensionless:
    each row's ``a`` is it times ``Mechanism.penalty_rows``, the largest body mass times
    ``(L / row scale)^2``, so the run is the same in any units); ``omega``,
    ``mu``: constraint natural frequency [rad/s] and damping ratio;
    ``iterations``: augmented-Lagrangian corrections.
    """

    kind: str = "lagrange"
    alpha: float = 0.0
    beta: float = 0.0
    penalty: float = 1e10
    omega: float = 10.0
    mu: float = 1.0
    iterations: int = 3

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"formulation must be one of {', '.join(KINDS)}, got "
                             f"{self.kind!r}")


def solve(form: Formulation, M: np.ndarray, Q: np.ndarray, J: np.ndarray, gamma: np.ndarray,
          phi: np.ndarray, phid: np.ndarray, where: str,
          penalty_rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(v̇, λ)`` for the formulation; raises StepError naming ``where`` if singular.
    ``penalty_rows``: the per-row weights of the penalty forms
    (``Mechanism.penalty_rows``; None: ``max(diag M)`` on every row)."""
    k = form.kind
    if k in ("lagrange", "projection", "partitioning"):
        n, m = M.shape[0], J.shape[0]
        rhs_c = gamma
        if k == "lagrange" and (form.alpha or form.beta):
            rhs_c = gamma - 2.0 * form.alpha * phid - form.beta ** 2 * phi
        if m == 0:
            return np.linalg.solve(M, Q), np.zeros(0)
        K = np.zeros((n + m, n + m))
        K[:n, :n] = M
        K[:n, n:] = J.T
        K[n:, :n] = J
        lu, _, x, info = _gesv(K, np.concatenate([Q, rhs_c]))
        d = np.abs(np.diagonal(lu))
        if info != 0 or d.min() < 1e-12 * d.max():
            raise StepError(f"{where}: the constraint Jacobian lost rank: a singular "
                            "configuration, which the index-1 formulations cannot pass "
                            "reliably (simulate the mechanism with "
                            "blocks.multibody.Index3Stepper)")
        return x[:n], x[n:]
    a = form.penalty * (np.full(J.shape[0], float(np.max(np.abs(np.diag(M)))))
                        if penalty_rows is None else np.asarray(penalty_rows, float))
    b = -gamma + 2.0 * form.mu * form.omega * phid + form.omega ** 2 * phi
    # range-space form (module docstring): S = J M^-1 J' + diag(1/a), well conditioned
    Minv = np.linalg.inv(M)
    MJt = Minv @ J.T
    c, info = _potrf(J @ MJt + np.diag(1.0 / a), lower=1)
    if info != 0:
        raise StepError(f"{where}: J M^-1 J' + 1/a is not positive definite (a body without "
                        "mass or inertia in a direction no constraint fixes)")

    def compliant(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[M J'; J -1/a] [x; mu] = [g; -b], one refinement step (sparse._compliant_solve)"""
        mu = _potrs(c, J @ (Minv @ g) + b, lower=1)[0]
        x = Minv @ g - MJt @ mu
        r1, r2 = g - M @ x - J.T @ mu, -b - J @ x + mu / a
        dmu = _potrs(c, J @ (Minv @ r1) - r2, lower=1)[0]
        return x + Minv @ r1 - MJt @ dmu, mu + dmu

    vd, lam = compliant(Q)
    if k == "augmented_lagrangian":
        for _ in range(form.iterations):  # λ accumulates: M v̇_i = Q - J' λ_i
            vd, mu = compliant(M @ vd)
            lam = lam + mu
    return vd, lam
