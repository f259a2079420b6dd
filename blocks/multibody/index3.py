r"""Index-3 augmented Lagrangian with velocity and acceleration projections (ALI3-P).

A block that advances a :class:`~.mechanism.Mechanism` with its own fixed step
``h`` (Bayo & Ledesma 1996; Cuadrado, Cardenal & Bayo 1997; Cuadrado, Cardenal,
Morer & Bayo 2000): the trapezoidal rule on the index-3 equations of motion,
Newton-Raphson on the dynamic equilibrium at ``t_{n+1}``, and after convergence
mass-orthogonal projections of the velocities and accelerations onto the
constraint manifold.  Its state is discrete (``q, v, v̇, λ*``) and advanced by a
periodic update every ``h``; run it with a fixed-step simulator whose ``dt``
divides ``h`` (normally ``dt = h``).

Equations as implemented
------------------------
Equations of motion (velocity space; ``J = Phi_v``, sign convention of
:mod:`.formulations`: the constraint forces on the bodies are ``-J' λ``)::

    M v̇ + J' (α c + λ*) = Q(q, v, t),      λ*_{i+1} = λ*_i + α c_{i+1}

with ``c = Phi(q, t)`` for holonomic rows and ``c = h/2 (J v + Phi_t)`` for
nonholonomic (velocity-level) rows, so that ``dc/dΔ = J`` for both, and
``α = penalty * max(diag M)``.  Trapezoidal rule in the velocity space, unknown
``Δ`` = the step's displacement (``q_{n+1} = displace(q_n, Δ)``, i.e.
``q + T(q) Δ`` with the Euler parameters renormalized: exact for planar bodies
and particles, a second-order retraction for spatial ones)::

    Δ       = h v_n + h²/4 (v̇_n + v̇_{n+1})
    v_{n+1} = 2/h Δ - v_n
    v̇_{n+1} = 4/h² (Δ - h v_n) - v̇_n

Predictor ``Δ⁰ = h v_n + h²/2 v̇_n``, ``λ*⁰ = λ*_n``.  Newton on the residual of
the dynamic equilibrium scaled by ``h²/4``::

    f(Δ) = h²/4 [M v̇_{n+1} + J' (α c + λ*) - Q]
    [M + h/2 C + h²/4 (J' α J + K)] δΔ = -f(Δ_i),    Δ_{i+1} = Δ_i + δΔ

and after each correction ``λ* += α c(Δ_{i+1})``.  Converged when
``max|c| <= tol`` and ``max|δΔ| <= tol`` (``tol`` in the units of ``q`` and
``Phi``; default 1e-10).  ``C = -dQ/dv`` and ``K = -dQ/dq`` are approximated
(``force_jacobians``): ``"neglect"`` keeps only the gyroscopic part of ``C``
of spatial bodies, exact and analytic (``C_w = ~w J - ~(J w)`` in the body
frame), and neglects the rest (exact for gravity, which is constant); ``"fd"``
adds forward differences of ``Q`` (step ``1e-7 (1 + |x|)``) computed once per
step at the predictor (modified Newton: they are not updated per iteration).
A neglected derivative only slows the Newton convergence (linear instead of
quadratic), it does not change the converged solution.

Projections at ``q_{n+1}`` with ``P = M + h²/4 J' α J`` (Cholesky, symmetric
positive definite also for redundant constraints) and ``β = h²/4 α``::

    v  <- v  - β P⁻¹ J' (J v + Phi_t)      until max|J v + Phi_t| <= ptol s_v
    v̇  <- v̇  - β P⁻¹ J' (J v̇ - gamma)      until max|J v̇ - gamma| <= ptol s_a

(``gamma`` evaluated with the projected ``v``).  The first pass is Cuadrado's
projection ``P v = M v* - β J' Phi_t``; the repetitions are augmented-Lagrangian
iterations of the least-``M``-norm-change problem, so the result is the exact
mass-orthogonal projection (independent of ``α``), reached in 1-3 passes with
the default ``α``.  ``ptol`` (default 1e-12) is relative to the size of the
terms, ``s_v = max(1, max(|J| |v| + |Phi_t|))`` and
``s_a = max(1, max(|J| |v̇| + |gamma|))`` (row-wise; rounding makes a smaller
absolute tolerance unreachable when ``gamma`` is large).

Measured (``tests/system/test_multibody_index3.py``): second order in ``h``; on a
conservative four-bar the energy oscillates by O(h²) and decreases slowly, at a
rate proportional to h³ (the velocity projection can only remove kinetic
energy).  ``projections=False`` (plain trapezoidal index-3 scheme) diverged on
the four-bar after ~1.7 s at h = 2-4 ms: the projections are not optional.

Loads (block inputs) are read at ``t_n`` and held over the step (zero-order
hold, first order in time for varying loads).  Contact elements that need the
impact speed use their fallback (no zero-crossing events in a discrete block).

Ports
-----
in   <load>                  force (dim,) N at a marker or torque, per ``Mechanism.add_load``
out  q                       generalized coordinates (nq,)          sampled, state only
out  v                       velocity variables (nv,)              sampled, state only
out  <body>_<marker>_pos     marker origin, global (dim,) m         sampled, state only
out  <body>_<marker>_vel     its velocity (dim,) m/s                sampled, state only
out  <joint>_reaction        ``-λ*`` of the joint's rows (what it applies to body j)
out  iterations              Newton iterations of the step that produced the state (int)

State (discrete): ``q, v, vdot, lam`` (``λ*``), ``iterations``.  Initial state:
the assembled configuration (``Mechanism.assemble``), ``v̇_0`` and ``λ*_0`` from
the index-1 Lagrange equations (or, with redundant constraints, the library's
augmented Lagrangian).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import lapack

from cosim import Block
from cosim.errors import BuildError, StepError

from .block import declare_load_inputs, declare_marker_outputs, reaction_rows
from .bodies import Kin
from .formulations import Formulation
from .geometry import tilde

_potrf, _potrs = lapack.dpotrf, lapack.dpotrs
_getrf, _getrs = lapack.dgetrf, lapack.dgetrs
JACOBIANS = ("neglect", "fd")


class Index3Stepper(Block):
    """ALI3-P integration of a mechanism as a sampled block (see module docstring).

    Parameters
    ----------
    mechanism : Mechanism
    step_s : float
        Integration step ``h`` [s] (the block's period).
    markers, reactions : as for :class:`~.block.MultibodyBlock`.
    penalty : float
        ``α / max(diag M)`` (dimensionless scaling as in :mod:`.formulations`).
    tol, max_iter : Newton tolerance and iteration limit per step.
    ptol, max_projection : projection tolerance and pass limit.
    force_jacobians : ``"neglect"`` or ``"fd"`` (see module docstring).
    projections : False skips the velocity and acceleration projections (plain
        index-3 augmented Lagrangian with the trapezoidal rule; for comparison).
    strict : refuse inconsistent initial conditions instead of correcting them.
    """

    def __init__(self, name: str, mechanism: Any, step_s: float, *, markers: tuple = (),
                 reactions: tuple = (), penalty: float = 1e9, tol: float = 1e-10,
                 max_iter: int = 20, ptol: float = 1e-12, max_projection: int = 10,
                 force_jacobians: str = "neglect", projections: bool = True,
                 strict: bool = False) -> None:
        super().__init__(name)
        if not (np.isfinite(step_s) and step_s > 0):
            raise BuildError(f"block '{name}': step_s must be a positive number of seconds, "
                             f"got {step_s!r}")
        if force_jacobians not in JACOBIANS:
            raise BuildError(f"block '{name}': force_jacobians must be one of "
                             f"{', '.join(JACOBIANS)}, got {force_jacobians!r}")
        if not penalty > 0:
            raise BuildError(f"block '{name}': penalty must be positive, got {penalty!r}")
        mech = mechanism
        mech.finalize()
        self.mech, self.h = mech, float(step_s)
        self.alpha = float(penalty) * (float(np.diag(mech.M).max()) if mech.nv else 1.0)
        self.tol, self.max_iter, self.ptol = float(tol), int(max_iter), float(ptol)
        self.max_projection, self.fd = int(max_projection), force_jacobians == "fd"
        self.projections = bool(projections)
        self.assembly = mech.assemble(strict=strict)
        q0, v0 = mech.q_init.copy(), mech.v_init.copy()
        a0, lam0 = self._initial_accelerations(q0, v0)
        self._spatial = [b for b in mech.moving if b.kind == "spatial"]
        self._nonhol = ~mech.holonomic if mech.m else np.zeros(0, bool)
        self.q = self.declare_discrete_state("q", q0)
        self.v = self.declare_discrete_state("v", v0)
        self.vdot = self.declare_discrete_state("vdot", a0)
        self.lam = self.declare_discrete_state("lam", lam0)
        self.iters = self.declare_discrete_state("iterations", 0)
        self._loads = declare_load_inputs(self, mech)
        self.declare_output("q", lambda ctx: np.array(ctx.discrete(self.q)), shape=(mech.nq,),
                            depends_on=())
        self.declare_output("v", lambda ctx: np.array(ctx.discrete(self.v)), shape=(mech.nv,),
                            depends_on=())
        self.declare_output("iterations", lambda ctx: ctx.discrete(self.iters), dtype=int,
                            depends_on=())
        declare_marker_outputs(self, mech, markers, self._marker_out)
        for jname, rows in reaction_rows(self, mech, reactions):
            self.declare_output(f"{jname}_reaction",
                                lambda ctx, r=rows: -np.array(ctx.discrete(self.lam)[r]),
                                shape=(rows.stop - rows.start,), depends_on=())
        self.declare_periodic_update(self.h, self._update)

    # ------------------------------------------------------------ set-up
    def _initial_accelerations(self, q: np.ndarray, v: np.ndarray) -> tuple:
        mech = self.mech
        try:
            return mech.accelerations(q, v, 0.0, Formulation("lagrange"))
        except StepError:  # redundant constraints: the library's augmented Lagrangian
            form = Formulation("augmented_lagrangian", penalty=1e7, omega=0.0, mu=0.0,
                               iterations=30)
            return mech.accelerations(q, v, 0.0, form)

    def _marker_out(self, m: Any):
        def calc(ctx):
            k = Kin(m.body, ctx.discrete(self.q), ctx.discrete(self.v))
            p, _, pd, _ = k.point(m.s, with_jac=False)
            return p.copy(), pd.copy()
        return calc

    # ------------------------------------------------------------ stepping
    def _update(self, ctx: Any) -> None:
        loads = {n: ctx.input(p) for n, p in self._loads}
        q, v, a, lam, it = self.step(ctx.discrete(self.q), ctx.discrete(self.v),
                                     ctx.discrete(self.vdot), ctx.discrete(self.lam),
                                     ctx.time, loads)
        ctx.set_discrete(self.q, q)
        ctx.set_discrete(self.v, v)
        ctx.set_discrete(self.vdot, a)
        ctx.set_discrete(self.lam, lam)
        ctx.set_discrete(self.iters, it)

    def _gyro_damping(self, v: np.ndarray) -> np.ndarray | None:
        """``C = -dQ/dv`` of the gyroscopic terms ``-w x J w`` (body frame), or None."""
        if not self._spatial:
            return None
        C = np.zeros((self.mech.nv, self.mech.nv))
        for b in self._spatial:
            i = b.iv + 3
            w = v[i:i + 3]
            C[i:i + 3, i:i + 3] = tilde(w) @ b.inertia - tilde(b.inertia @ w)
        return C

    def _fd_jacobians(self, q, v, t, loads) -> tuple[np.ndarray, np.ndarray]:
        """Forward-difference ``K = -dQ/dq`` (velocity space) and ``C = -dQ/dv``."""
        mech = self.mech
        Q0 = mech.forces(q, v, t, loads)
        n = mech.nv
        K, C = np.empty((n, n)), np.empty((n, n))
        for j in range(n):
            e = np.zeros(n)
            eps = 1e-7 * (1.0 + abs(v[j]))
            e[j] = eps
            C[:, j] = -(mech.forces(q, v + e, t, loads) - Q0) / eps
            e[j] = 1e-7
            K[:, j] = -(mech.forces(mech.displace(q, e), v, t, loads) - Q0) / 1e-7
        return K, C

    def step(self, q: np.ndarray, v: np.ndarray, a: np.ndarray, lam: np.ndarray, t: float,
             loads: dict | None = None) -> tuple:
        """One ALI3-P step from ``t``: ``(q, v, v̇, λ*, Newton iterations)`` at ``t + h``."""
        mech, h, alpha = self.mech, self.h, self.alpha
        M, b, t1 = mech.M, 0.25 * h * h, t + h
        nonhol = self._nonhol
        D = h * v + 0.5 * h * h * a
        lam = np.array(lam, float)
        extra = None  # h/2 C + h²/4 K (force derivatives), fixed over the step
        if self.fd:
            K, C = self._fd_jacobians(mech.displace(q, D), 2.0 / h * D - v, t1, loads)
            extra = 0.5 * h * C + b * K
        dnorm = np.inf
        for it in range(self.max_iter + 1):
            q1 = mech.displace(q, D)
            v1 = (2.0 / h) * D - v
            phi, J, phit, _ = mech.constraints(q1, v1, t1)
            c = phi.copy()
            if nonhol.any():
                c[nonhol] = 0.5 * h * (J[nonhol] @ v1 + phit[nonhol])
            cnorm = float(np.abs(c).max()) if c.size else 0.0
            if it > 0:
                lam += alpha * c
                if cnorm <= self.tol and dnorm <= self.tol:
                    break
            if it == self.max_iter:
                worst = mech.row_labels[int(np.argmax(np.abs(c)))] if c.size else "-"
                raise StepError(f"block '{self.name}': Newton did not converge at t = "
                                f"{t1:.9g} s in {self.max_iter} iterations (max |c| = "
                                f"{cnorm:.3g}, worst '{worst}'; last correction "
                                f"{dnorm:.3g}); reduce step_s, raise max_iter or check "
                                "the driving constraints")
            a1 = (4.0 / (h * h)) * (D - h * v) - a
            Q = mech.forces(q1, v1, t1, loads)
            f = b * (M @ a1 + J.T @ (alpha * c + lam) - Q)
            T = M + (b * alpha) * (J.T @ J)
            C = self._gyro_damping(v1)
            if C is not None:
                T += 0.5 * h * C
            if extra is not None:
                T += extra
            dD = _solve(T, -f, C is None and extra is None, self.name, t1)
            D = D + dD
            dnorm = float(np.abs(dD).max())
        iterations = it
        a1 = (4.0 / (h * h)) * (D - h * v) - a
        # mass-orthogonal projections at q1 (P = M + β J'J, SPD)
        beta = b * alpha
        if J.shape[0] and self.projections:
            P = M + beta * (J.T @ J)
            c_, info = _potrf(P, lower=1)
            if info != 0:
                raise StepError(f"block '{self.name}' at t = {t1:.9g} s: M + h²/4 J' α J is "
                                "not positive definite (a body without mass or inertia in a "
                                "direction no constraint fixes)")
            v1 = self._project(c_, J, v1, phit, beta)
            _, _, _, gamma = mech.constraints(q1, v1, t1)
            a1 = self._project(c_, J, a1, -gamma, beta)
        return q1, v1, a1, lam, iterations

    def _project(self, chol: np.ndarray, J: np.ndarray, x: np.ndarray, const: np.ndarray,
                 beta: float) -> np.ndarray:
        """``x`` moved to ``J x + const = 0``: augmented-Lagrangian passes (module docstring)."""
        r = J @ x + const
        absJ = np.abs(J)
        for _ in range(self.max_projection + 1):
            tol = self.ptol * max(1.0, float((absJ @ np.abs(x) + np.abs(const)).max()))
            if np.abs(r).max() <= tol:
                return x
            x = x - beta * _potrs(chol, J.T @ r, lower=1)[0]
            r = J @ x + const
        raise StepError(f"block '{self.name}': projection did not reach {self.ptol:g} "
                        f"(relative) in {self.max_projection} passes (residual "
                        f"{np.max(np.abs(r)):.3g}); raise ptol or penalty")


def _solve(T: np.ndarray, rhs: np.ndarray, symmetric: bool, name: str, t: float) -> np.ndarray:
    if symmetric:
        c, info = _potrf(T, lower=1)
        if info == 0:
            return _potrs(c, rhs, lower=1)[0]
    lu, piv, info = _getrf(T)
    if info != 0:
        raise StepError(f"block '{name}' at t = {t:.9g} s: singular Newton matrix "
                        "M + h/2 C + h²/4 (J' α J + K)")
    return _getrs(lu, piv, rhs)[0]
