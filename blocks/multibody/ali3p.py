r"""One step of the index-3 augmented Lagrangian with projections (ALI3-P).

Bayo & Ledesma 1996; Cuadrado, Cardenal & Bayo 1997; Cuadrado, Cardenal, Morer & Bayo
2000.  :class:`ALI3P` advances ``(q, v, v̇, λ*)`` by one step ``h``; the block is
:class:`~.index3.Index3Stepper`.  Two implementations of the same equations: a dense
NumPy/LAPACK one (the reference, and the path for ``force_jacobians="fd"`` and
mechanisms the compiled kernel does not cover) and a compiled one (Numba; the constraint
kernel of :mod:`.fast` and the banded Cholesky of :mod:`.sparse`: the whole step in one
call, or one call per Newton iteration when Python force elements or loads must be
evaluated in between), equal to the Newton tolerance (tested; the compiled Newton matrix
uses the symmetric part of the gyroscopic damping, ``h/4 (~w J - J ~w)``, because the
band factorization is symmetric: another iteration, the same solution).  The velocity
and acceleration projections share one factorization.

Equations
---------
Sign convention of :mod:`.formulations` (constraint forces ``-J' λ``)::

    M v̇ + J' (α c + λ*) = Q(q, v, t),      λ*_{i+1} = λ*_i + α c_{i+1}

``c = Phi(q, t)`` for holonomic rows and ``c = h/2 (J v + Phi_t)`` for nonholonomic ones
(``dc/dΔ = J`` for both).  Trapezoidal rule in velocity space, unknown the step's
displacement ``Δ`` (``q_{n+1} = displace(q_n, Δ)``, exact for planar bodies, a
second-order retraction for Euler parameters)::

    Δ = h v_n + h²/4 (v̇_n + v̇_{n+1}),   v_{n+1} = 2Δ/h - v_n,   v̇_{n+1} = 4/h² (Δ - h v_n) - v̇_n

Newton on ``f(Δ) = h²/4 [M v̇_{n+1} + J' (α c + λ*) - Q]`` from ``Δ⁰ = h v_n + h²/2 v̇_n``::

    [M + h/2 C + β J'J + h²/4 K] δΔ = -f,    β = h²/4 α = penalty · max(diag M)

so ``penalty`` is dimensionless and independent of ``h`` (it is the ratio of the
constraint term to the mass term of the Newton matrix; the previous definition,
``α / max diag M``, needed values growing as 1/h²).  ``C``, ``K``: the gyroscopic
damping of spatial bodies (always) and, with ``force_jacobians="fd"``, forward
differences of ``Q`` at the predictor.

*Near a singular position* a direction of ``J`` has a small singular value ``σ`` and the
multiplier iteration contracts only by ``1/(1 + penalty σ²)`` per iteration there.
*Penalty continuation*: whenever a Newton correction is not below a quarter of the
previous one, ``β`` is multiplied by 10 for the following iterations of this step (up to
``penalty_max · max diag M``); each iteration refactorizes anyway, so this costs nothing,
and ``λ*`` stays exact (the augmented Lagrangian converges to the same solution for any
penalty).  Converged when ``max |c| <= tol L`` and ``max |δΔ| <= max(tol L, 16 eps |q|
sqrt(β / max diag M))`` (``L`` the mechanism's length scale, ``Mechanism.length_scale``;
the second term is the rounding floor: ``Phi`` is evaluated to about ``eps |q|``, and
``α`` times that moves a direction of singular value ``σ`` by up to ``eps |q| sqrt(β /
m) / 2``; measured 1e-10 to 3e-10 m on the 40 m long A02 chain, where the fixed 1e-10
made Newton fail at the second singular position).

Projections at ``q_{n+1}`` with ``P = M + β₀ J'J`` (``β₀`` the step's initial penalty;
Cholesky, positive definite also for redundant and singular ``J``)::

    x <- x - β₀ P⁻¹ J' (J x + c)

for the velocities (``c = Phi_t``) and then the accelerations (``c = -gamma`` with the
projected velocities).  Each pass is an augmented-Lagrangian iteration of the least
``M``-norm change; passes repeat until ``max |J x + c| <= ptol s`` (``s = max_r (|J| |x|
+ |c|)_r``, the size of the terms: a tolerance relative to the problem), and stop
without error when a pass no longer halves the residual (a near-singular direction,
where the remaining residual is ``σ`` times a bounded component and a larger penalty
would only inject accelerations of order residual/σ: measured, this is what lost the
A02 chain's energy at a grid point 4 µs from a singular instant) or after
``max_projection`` passes.  The penalty is not raised in the projections for that
reason.  The kinetic energy a velocity projection removes is ``½ δv' M δv`` (it is
``M``-orthogonal); its fraction of the kinetic energy is the *branch monitor* of the
block.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import lapack

from cosim.errors import StepError

from ._numba import _njit
from .fast import constraints_kernel, forces_kernel, qdot_kernel
from .geometry import tilde
from .sparse import assemble_jtwj, band_cholesky, jabs, jmul, jtmul, spd_solve

_potrf, _potrs = lapack.dpotrf, lapack.dpotrs
_getrf, _getrs = lapack.dgetrf, lapack.dgetrs
GROW, SLOW = 10.0, 0.25  # penalty continuation: factor, and the contraction judged slow
EPS = np.finfo(float).eps


class ALI3P:
    """The ALI3-P step for one mechanism and step ``h`` (module docstring).

    ``compiled``: None uses the compiled path when the mechanism has compiled tables and
    ``force_jacobians == "neglect"``; True requires it; False uses the dense path.
    """

    def __init__(self, mech: Any, h: float, *, penalty: float = 1e4, tol: float = 1e-10,
                 max_iter: int = 30, ptol: float = 1e-12, max_projection: int = 10,
                 penalty_max: float = 1e8, force_jacobians: str = "neglect",
                 projections: bool = True, compiled: bool | None = None,
                 name: str = "index3") -> None:
        self.mech, self.h, self.name = mech, float(h), name
        self.m0 = float(np.diag(mech.M).max()) if mech.nv else 1.0
        self.penalty, self.penalty_max = float(penalty), float(penalty_max)
        self.tol = float(tol) * mech.length_scale
        self.max_iter, self.ptol, self.max_projection = int(max_iter), float(ptol), \
            int(max_projection)
        self.fd, self.projections = force_jacobians == "fd", bool(projections)
        self.spatial = [b for b in mech.moving if b.kind == "spatial"]
        self.nonhol = ~mech.holonomic if mech.m else np.zeros(0, bool)
        usable = mech._tables is not None and not self.fd
        if compiled and not usable:
            raise StepError(f"block '{name}': compiled=True needs the compiled tables (Numba) "
                            "and force_jacobians='neglect'")
        self.compiled = usable if compiled is None else bool(compiled)
        self.external = bool(mech.elements or mech.loads)

    # ------------------------------------------------------------------ step
    def step(self, q: np.ndarray, v: np.ndarray, a: np.ndarray, lam: np.ndarray, t: float,
             loads: dict | None = None) -> tuple:
        """``(q, v, v̇, λ*, info)`` at ``t + h``; ``loads`` are the load inputs at ``t + h``.

        ``info``: ``iterations``, ``penalty`` (the final ``β / max diag M``),
        ``v_passes``/``a_passes``, ``v_residual``/``a_residual`` (relative) and
        ``energy_removed`` (kinetic energy removed by the velocity projection, J) with
        ``kinetic`` (before it).
        """
        h, mech = self.h, self.mech
        t1 = t + h
        if self.compiled and not self.external:
            return self._step_fused(q, v, a, lam, t1)
        D = h * v + 0.5 * h * h * a
        lam = np.array(lam, float)
        beta = self.penalty * self.m0
        bmax = self.penalty_max * self.m0
        it_fn = self._iter_compiled if self.compiled else self._iter_dense
        extra = self._fd_extra(q, v, D, t1, loads) if self.fd else None
        dnorm, cnorm, worst = np.inf, np.inf, -1
        # rounding floor of the corrections: Phi is evaluated to ~eps |q|, and α c of that
        # moves a direction of singular value σ by up to eps |q| sqrt(β / m0) / 2
        qscale = max(self.mech.length_scale, float(np.abs(q).max()) if q.size else 0.0)
        for it in range(self.max_iter + 1):
            dtol = max(self.tol, 16 * EPS * qscale * np.sqrt(beta / self.m0))
            lam, cnorm, worst, dD = it_fn(q, v, a, D, lam, t1, beta, it, dnorm, dtol, loads,
                                          extra)
            if dD is None:  # converged (checked in the iteration, after the λ* update)
                break
            if it == self.max_iter:
                self._newton_failed(t1, cnorm, worst, dnorm, dtol, beta)
            if not np.all(np.isfinite(dD)):
                raise StepError(f"block '{self.name}' at t = {t1:.9g} s: the Newton matrix "
                                "M + h/2 C + β J'J is not positive definite (a body without "
                                "mass or inertia in a direction no constraint fixes)")
            D = D + dD
            dn = float(np.abs(dD).max())
            if it >= 1 and dn > SLOW * dnorm and beta < bmax:
                beta = min(beta * GROW, bmax)
            dnorm = dn
        q1 = mech.displace(q, D)
        v1 = (2.0 / h) * D - v
        a1 = (4.0 / (h * h)) * (D - h * v) - a
        info = {"iterations": it, "penalty": beta / self.m0, "v_passes": 0, "a_passes": 0,
                "v_residual": 0.0, "a_residual": 0.0, "energy_removed": 0.0,
                "kinetic": 0.5 * float(v1 @ mech.M @ v1)}
        if mech.m and self.projections:
            beta0 = self.penalty * self.m0
            if self.compiled:
                v1, a1, proj = self._project_compiled(q1, v1, a1, t1, beta0)
            else:
                v1, a1, proj = self._project_dense(q1, v1, a1, t1, beta0)
            info.update(proj)
        return q1, v1, a1, lam, info

    def _newton_failed(self, t1, cnorm, worst, dnorm, dtol, beta):
        mech = self.mech
        label = mech.row_labels[worst] if worst >= 0 else "-"
        raise StepError(
            f"block '{self.name}': Newton did not converge at t = {t1:.9g} s in "
            f"{self.max_iter} iterations (max |c| = {cnorm:.3g}, worst '{label}'; last "
            f"correction {dnorm:.3g}; tolerance {dtol:.3g} (tol x length scale "
            f"{mech.length_scale:g} m, or the rounding floor); penalty reached "
            f"{beta / self.m0:.3g} x max diag M); reduce step_s, raise max_iter, or check "
            "the driving constraints")

    def _step_fused(self, q, v, a, lam, t1):
        """The whole step in one compiled call (no Python force elements or loads)."""
        mech, tb = self.mech, self.mech._tables
        f, cc = tb._drivers_at(t1)
        bd = tb.band
        (q1, v1, a1, lam, status, it, beta, cnorm, worst, dnorm, dtol, kv, ka, rv, ra,
         dT, kin) = ali3_step(
            tb.ctab(), f[0], f[1], f[2], cc[0], cc[1], cc[2], tb.m, tb.nv,
            np.ascontiguousarray(q, float), np.ascontiguousarray(v, float),
            np.ascontiguousarray(a, float), np.array(lam, float), self.h,
            self.penalty * self.m0, self.penalty_max * self.m0, self.m0, self.tol,
            float(max(mech.length_scale, np.abs(q).max() if q.size else 0.0)),
            self.max_iter, self.nonhol, mech.M, tb.mass, tb.inertia, tb.gravity, tb.jcol,
            bd.vperm, bd.kd_v, self.ptol, self.max_projection,
            bool(mech.m and self.projections))
        if status == 1:
            self._newton_failed(t1, cnorm, worst, dnorm, dtol, beta)
        if status == 2:
            raise StepError(f"block '{self.name}' at t = {t1:.9g} s: a Newton or projection "
                            "matrix is not positive definite (a body without mass or inertia "
                            "in a direction no constraint fixes)")
        return q1, v1, a1, lam, {"iterations": it, "penalty": beta / self.m0,
                                 "v_passes": kv, "a_passes": ka, "v_residual": rv,
                                 "a_residual": ra, "energy_removed": dT, "kinetic": kin}

    # ------------------------------------------------------------ dense path
    def _forces(self, q1, v1, t1, loads):
        return self.mech.forces(q1, v1, t1, loads)

    def _gyro(self, v: np.ndarray) -> np.ndarray | None:
        """``C = -dQ/dv`` of the gyroscopic terms ``-w x J w`` (body frame), or None."""
        if not self.spatial:
            return None
        C = np.zeros((self.mech.nv, self.mech.nv))
        for b in self.spatial:
            i = b.iv + 3
            w = v[i:i + 3]
            C[i:i + 3, i:i + 3] = tilde(w) @ b.inertia - tilde(b.inertia @ w)
        return C

    def _fd_extra(self, q, v, D, t1, loads) -> np.ndarray:
        """``h/2 C + h²/4 K`` by forward differences of ``Q`` at the predictor."""
        mech, h = self.mech, self.h
        q1, v1 = mech.displace(q, D), 2.0 / h * D - v
        Q0 = mech.forces(q1, v1, t1, loads)
        n = mech.nv
        K, C = np.empty((n, n)), np.empty((n, n))
        for j in range(n):
            e = np.zeros(n)
            eps = 1e-7 * (1.0 + abs(v1[j]))
            e[j] = eps
            C[:, j] = -(mech.forces(q1, v1 + e, t1, loads) - Q0) / eps
            e[j] = 1e-7
            K[:, j] = -(mech.forces(mech.displace(q1, e), v1, t1, loads) - Q0) / 1e-7
        return 0.5 * h * C + 0.25 * h * h * K

    def _iter_dense(self, q, v, a, D, lam, t1, beta, it, dnorm, dtol, loads, extra):
        mech, h = self.mech, self.h
        b = 0.25 * h * h
        alpha = beta / b
        q1 = mech.displace(q, D)
        v1 = (2.0 / h) * D - v
        phi, J, phit, _ = mech.constraints(q1, v1, t1)
        c = phi.copy()
        if self.nonhol.any():
            c[self.nonhol] = 0.5 * h * (J[self.nonhol] @ v1 + phit[self.nonhol])
        cnorm = float(np.abs(c).max()) if c.size else 0.0
        worst = int(np.argmax(np.abs(c))) if c.size else -1
        if it > 0:
            lam = lam + alpha * c
            if cnorm <= self.tol and dnorm <= dtol:
                return lam, cnorm, worst, None
        a1 = (4.0 / (h * h)) * (D - h * v) - a
        Q = self._forces(q1, v1, t1, loads)
        f = b * (mech.M @ a1 + J.T @ (alpha * c + lam) - Q)
        T = mech.M + beta * (J.T @ J)
        C = self._gyro(v1)
        if C is not None:
            T += 0.5 * h * C
        if extra is not None:
            T += extra
        return lam, cnorm, worst, _solve(T, -f, C is None and extra is None, self.name, t1)

    def _project_dense(self, q1, v1, a1, t1, beta):
        mech = self.mech
        _, J, phit, _ = mech.constraints(q1, v1, t1)
        P = mech.M + beta * (J.T @ J)
        chol, info = _potrf(P, lower=1)
        if info != 0:
            raise StepError(f"block '{self.name}' at t = {t1:.9g} s: M + β J'J is not "
                            "positive definite (a body without mass or inertia in a direction "
                            "no constraint fixes)")
        v0 = v1

        def solve(rhs):
            return _potrs(chol, rhs, lower=1)[0]

        v1, kv, rv = _passes(lambda x: J @ x, lambda y: J.T @ y, solve,
                             lambda x, c: float((np.abs(J) @ np.abs(x) + np.abs(c)).max()),
                             v1, phit, beta, self.ptol, self.max_projection)
        _, _, _, gamma = mech.constraints(q1, v1, t1)
        a1, ka, ra = _passes(lambda x: J @ x, lambda y: J.T @ y, solve,
                             lambda x, c: float((np.abs(J) @ np.abs(x) + np.abs(c)).max()),
                             a1, -gamma, beta, self.ptol, self.max_projection)
        dv = v1 - v0
        return v1, a1, {"v_passes": kv, "a_passes": ka, "v_residual": rv, "a_residual": ra,
                        "energy_removed": 0.5 * float(dv @ mech.M @ dv)}

    # --------------------------------------------------------- compiled path
    def _iter_compiled(self, q, v, a, D, lam, t1, beta, it, dnorm, dtol, loads, extra):
        mech, tb = self.mech, self.mech._tables
        h = self.h
        Qext = tb._no_load
        if self.external:
            q1 = mech.displace(q, D)
            v1 = (2.0 / h) * D - v
            Qext = mech.external_forces(q1, v1, t1, loads)
        f, cc = tb._drivers_at(t1)
        bd = tb.band
        lam, cnorm, worst, dD, conv = ali3_iteration(
            tb.ctab(), f[0], f[1], f[2], cc[0], cc[1], cc[2], tb.m, tb.nv,
            np.ascontiguousarray(q, float), np.ascontiguousarray(v, float),
            np.ascontiguousarray(a, float), np.ascontiguousarray(D, float), lam, h, beta,
            it, dnorm, self.tol, dtol, self.nonhol, Qext, mech.M, tb.mass, tb.inertia, tb.gravity,
            tb.jcol, bd.vperm, bd.kd_v)
        return lam, cnorm, worst, (None if conv else dD)

    def _project_compiled(self, q1, v1, a1, t1, beta):
        mech, tb = self.mech, self.mech._tables
        f, cc = tb._drivers_at(t1)
        bd = tb.band
        v1n, a1n, kv, ka, rv, ra, dT = ali3_project(
            tb.ctab(), f[0], f[1], f[2], cc[0], cc[1], cc[2], tb.m, tb.nv,
            np.ascontiguousarray(q1, float), np.ascontiguousarray(v1, float),
            np.ascontiguousarray(a1, float), beta, mech.M, tb.jcol, bd.vperm, bd.kd_v,
            self.ptol, self.max_projection)
        return v1n, a1n, {"v_passes": kv, "a_passes": ka, "v_residual": rv,
                          "a_residual": ra, "energy_removed": dT}


def _passes(jx, jty, solve, size, x, c, beta, ptol, max_pass):
    """Projection passes of the module docstring: ``(x, passes, relative residual)``."""
    r = jx(x) + c
    prev = np.inf
    for k in range(max_pass + 1):
        rn = float(np.abs(r).max())
        s = size(x, c)
        if rn <= ptol * s or k == max_pass or rn > 0.5 * prev:
            return x, k, rn / s if s > 0 else 0.0
        prev = rn
        x = x - beta * solve(jty(r))
        r = jx(x) + c
    return x, max_pass, 0.0  # pragma: no cover


def _solve(T: np.ndarray, rhs: np.ndarray, symmetric: bool, name: str, t: float) -> np.ndarray:
    if symmetric:
        c, info = _potrf(T, lower=1)
        if info == 0:
            return _potrs(c, rhs, lower=1)[0]
    lu, piv, info = _getrf(T)
    if info != 0:
        raise StepError(f"block '{name}' at t = {t:.9g} s: singular Newton matrix "
                        "M + h/2 C + β J'J + h²/4 K")
    return _getrs(lu, piv, rhs)[0]


# ------------------------------------------------------------------ kernels
@_njit
def displace_kernel(q, D, kind, iq, iv, ncol):
    """``displace(q, D)``: ``q + T(q) D`` with the Euler parameters renormalized."""
    qn = q + qdot_kernel(q, D, kind, iq, iv, ncol)
    for b in range(kind.shape[0]):
        if kind[b] == 3:
            o = iq[b] + 3
            s = 0.0
            for k in range(4):
                s += qn[o + k] * qn[o + k]
            s = np.sqrt(s)
            for k in range(4):
                qn[o + k] /= s
    return qn


@_njit
def _constraints_t(ct, q, v, f0, f1, f2, c0, c1, c2, m, nv):
    kind, iq, iv, ncol, sel, typ, bi, bj, si, sj, ai, aj, cst, drv, row, nrows = ct
    return constraints_kernel(q, v, kind, iq, iv, ncol, sel, typ, bi, bj, si, sj, ai, aj, cst,
                              drv, row, nrows, f0, f1, f2, c0, c1, c2, m, nv)


@_njit
def ali3_iteration(ct, f0, f1, f2, c0, c1, c2, m, nv, q, v, a, D, lam, h, beta, it, dnorm,
                   tol, dtol, nonhol, Qext, M, mass, inertia, gravity, jcol, vperm, kd):
    """One Newton iteration of :meth:`ALI3P.step` (``_iter_dense`` in one call): returns
    ``(λ*, max |c|, worst row, δΔ, converged)``."""
    kind, iq, iv, ncol = ct[0], ct[1], ct[2], ct[3]
    b = 0.25 * h * h
    alpha = beta / b
    q1 = displace_kernel(q, D, kind, iq, iv, ncol)
    v1 = (2.0 / h) * D - v
    phi, Jc, phit, _ = _constraints_t(ct, q1, v1, f0, f1, f2, c0, c1, c2, m, nv)
    c = phi.copy()
    jv = jmul(Jc, jcol, v1)
    cnorm = 0.0
    worst = -1
    for r in range(m):
        if nonhol[r]:
            c[r] = 0.5 * h * (jv[r] + phit[r])
        if abs(c[r]) > cnorm:
            cnorm = abs(c[r])
            worst = r
    lam = lam.copy()
    if it > 0:
        for r in range(m):
            lam[r] += alpha * c[r]
        if cnorm <= tol and dnorm <= dtol:
            return lam, cnorm, worst, np.zeros(0), True
    Q = forces_kernel(v1, kind, iv, mass, inertia, gravity, nv)
    a1 = (4.0 / (h * h)) * (D - h * v) - a
    g = jtmul(Jc, jcol, alpha * c + lam, nv)
    f = np.empty(nv)
    Ma = _blockmul(M, a1, iv, ncol)
    for i in range(nv):
        f[i] = -b * (Ma[i] + g[i] - Q[i] - Qext[i])
    ab = assemble_jtwj(M, Jc, jcol, np.full(m, beta), vperm, kd, iv, ncol)
    # gyroscopic damping of spatial bodies, h/2 C with C = ~w J - ~(J w) in the rotation
    # block; its symmetric part (~w J - J ~w)/2 only (the band factorization is symmetric:
    # this changes the Newton matrix, i.e. the convergence rate, not the solution)
    for bb in range(kind.shape[0]):
        if kind[bb] == 3:
            o = iv[bb] + 3
            w = v1[o:o + 3]
            for i in range(3):
                for k in range(3):
                    val = 0.0
                    for l in range(3):
                        val += _tw(w, i, l) * inertia[bb, l, k] - inertia[bb, i, l] * _tw(w, l, k)
                    pi, pk = vperm[o + i], vperm[o + k]
                    if pi >= pk:
                        ab[pi - pk, pk] += 0.25 * h * val
    ok, _ = band_cholesky(ab, kd)
    if not ok:
        return lam, cnorm, worst, np.full(nv, np.nan), False
    return lam, cnorm, worst, spd_solve(ab, kd, vperm, f), False


@_njit
def _tw(w, i, k):
    """Entry ``[i, k]`` of ``tilde(w)``."""
    if i == k:
        return 0.0
    if i == 0:
        return -w[2] if k == 1 else w[1]
    if i == 1:
        return w[2] if k == 0 else -w[0]
    return -w[1] if k == 0 else w[0]


@_njit
def _blockmul(M, x, iv, ncol):
    y = np.zeros(x.shape[0])
    for b in range(iv.shape[0]):
        o = iv[b]
        for i in range(ncol[b]):
            s = 0.0
            for k in range(ncol[b]):
                s += M[o + i, o + k] * x[o + k]
            y[o + i] = s
    return y


@_njit
def _proj_passes(ab, kd, vperm, Jc, jcol, x, c, beta, ptol, max_pass, nv):
    r = jmul(Jc, jcol, x) + c
    prev = np.inf
    for k in range(max_pass + 1):
        rn = 0.0
        for i in range(r.shape[0]):
            rn = max(rn, abs(r[i]))
        s = jabs(Jc, jcol, x, c)
        if rn <= ptol * s or k == max_pass or rn > 0.5 * prev:
            return x, k, rn / s if s > 0 else 0.0
        prev = rn
        x = x - beta * spd_solve(ab, kd, vperm, jtmul(Jc, jcol, r, nv))
        r = jmul(Jc, jcol, x) + c
    return x, max_pass, 0.0


@_njit
def ali3_project(ct, f0, f1, f2, c0, c1, c2, m, nv, q1, v1, a1, beta, M, jcol, vperm, kd,
                 ptol, max_pass):
    """The velocity and acceleration projections of :meth:`ALI3P.step` in one call:
    ``(v, v̇, passes_v, passes_a, residual_v, residual_a, kinetic energy removed)``."""
    iv, ncol = ct[2], ct[3]
    _, Jc, phit, _ = _constraints_t(ct, q1, v1, f0, f1, f2, c0, c1, c2, m, nv)
    ab = assemble_jtwj(M, Jc, jcol, np.full(m, beta), vperm, kd, iv, ncol)
    ok, _ = band_cholesky(ab, kd)
    if not ok:
        return v1, a1, -1, -1, np.inf, np.inf, 0.0
    v0 = v1
    v1, kv, rv = _proj_passes(ab, kd, vperm, Jc, jcol, v1, phit, beta, ptol, max_pass, nv)
    _, _, _, gam = _constraints_t(ct, q1, v1, f0, f1, f2, c0, c1, c2, m, nv)
    a1, ka, ra = _proj_passes(ab, kd, vperm, Jc, jcol, a1, -gam, beta, ptol, max_pass, nv)
    dv = v1 - v0
    Mdv = _blockmul(M, dv, iv, ncol)
    return v1, a1, kv, ka, rv, ra, 0.5 * (dv @ Mdv)


@_njit
def ali3_step(ct, f0, f1, f2, c0, c1, c2, m, nv, q, v, a, lam, h, beta0, beta_max, m0, tol,
              qscale, max_iter, nonhol, M, mass, inertia, gravity, jcol, vperm, kd, ptol,
              max_pass, project):
    """:meth:`ALI3P.step` in one call (Newton with penalty continuation, then the
    projections); ``status`` 0 ok, 1 Newton failed, 2 a matrix not positive definite."""
    kind, iq, iv, ncol = ct[0], ct[1], ct[2], ct[3]
    eps = 2.220446049250313e-16
    D = h * v + 0.5 * h * h * a
    beta = beta0
    dnorm = np.inf
    cnorm = np.inf
    worst = -1
    dtol = tol
    Qext = np.zeros(nv)
    status = 1
    it = 0
    for it in range(max_iter + 1):
        dtol = max(tol, 16.0 * eps * qscale * np.sqrt(beta / m0))
        lam, cnorm, worst, dD, conv = ali3_iteration(
            ct, f0, f1, f2, c0, c1, c2, m, nv, q, v, a, D, lam, h, beta, it, dnorm, tol,
            dtol, nonhol, Qext, M, mass, inertia, gravity, jcol, vperm, kd)
        if conv:
            status = 0
            break
        if it == max_iter:
            break
        if dD.shape[0] and not np.isfinite(dD[0]):
            status = 2
            break
        dn = 0.0
        for i in range(nv):
            D[i] += dD[i]
            dn = max(dn, abs(dD[i]))
        if it >= 1 and dn > 0.25 * dnorm and beta < beta_max:
            beta = min(beta * 10.0, beta_max)
        dnorm = dn
    q1 = displace_kernel(q, D, kind, iq, iv, ncol)
    v1 = (2.0 / h) * D - v
    a1 = (4.0 / (h * h)) * (D - h * v) - a
    kin = 0.5 * (v1 @ _blockmul(M, v1, iv, ncol))
    kv, ka, rv, ra, dT = 0, 0, 0.0, 0.0, 0.0
    if status == 0 and project:
        v1, a1, kv, ka, rv, ra, dT = ali3_project(ct, f0, f1, f2, c0, c1, c2, m, nv, q1, v1,
                                                  a1, beta0, M, jcol, vperm, kd, ptol,
                                                  max_pass)
        if kv < 0:
            status = 2
    return (q1, v1, a1, lam, status, it, beta, cnorm, worst, dnorm, dtol, kv, ka, rv, ra, dT,
            kin)
