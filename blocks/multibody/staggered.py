"""Chiou's two-stage staggered explicit-implicit integrator (seed 002, thesis §5.5).

Research notes ``/work/shared/research/seed-002-003-004.md`` §1.2.7 (with the errata
there: stability limit ``h |w|_max <= 2``, Cayley ``Delta = 1 + h^2 |w|^2 / 16``, and the
damping remedy), §1.2.5 (the PCST multiplier solver (5.5.5.2)).

Scheme (half-step index ``k``, ``t_k = t0 + k h/2``; even ``k`` are the integer levels
``n``, odd ``k`` the half levels ``n + 1/2``; positions and velocities live on both
interleaved grids, each chain advanced by the other's value)::

    v_{k+1} = v_{k-1} + h a_k                              (5.5.3.1)
    q_{k+1} = q_{k-1} + h T v_k                            (5.5.3.2)  particles, planar bodies
    p_{k+1} = (I + h/2 A(w_k))^2 p_{k-1} / Delta           (5.5.4.6)  Euler parameters,
              Delta = 1 + h^2 |w_k|^2 / 16                 (corrected; exactly |p| = 1)

i.e. the explicit two-step midpoint (leapfrog) rule with step ``h/2`` on ``(q, v)``, two
evaluations of the equations of motion per step ``h``.  ``A(w)`` is the 4x4 matrix of
``p' = A(w) p`` (body-frame ``w``, thesis (2.8.7); the library's ``quat_rate``).

Accelerations at ``(q_k, v_k, t_k)`` (``M``, ``Q``, ``J``, ``gamma``, ``Phi_t`` from the
mechanism; ``D_k = -dQ/dv`` at the state)::

    (M + h/2 D_k) a_k + J_k' lambda_k = Q_k + D_k (v_k - v_{k-1})

``damping="trapezoidal"`` (default, the notes' remedy): the velocity-proportional part of
``Q`` is evaluated at the same-chain average ``(v_{k+1} + v_{k-1}) / 2`` instead of at
``v_k`` (exact for linear dampers; linearized about ``v_k`` otherwise, gyroscopic terms
included); ``D_k``: the gyroscopic part exactly (``~w' J' - ~(J' w')`` per spatial body),
the force elements that can depend on ``v`` by forward differences (``nv`` evaluations of
those elements; springs without damping and gravity do not), or
``damping_matrix(q, v, t)``.  ``damping="explicit"``: ``D = 0``, the
thesis' scheme, whose parasitic root ``-(1 + h c / (4 m))`` per half step makes it
unstable for every dissipative force (notes §1.2.7).

Constraints, ``constraints=``:

* ``"index1"`` (default): ``J_k a_k = gamma_k`` (the saddle-point system), in the
  independent rows when some depend on the others (:mod:`.redundancy`; ``lam`` then
  holds the minimum-norm reactions of all rows).
* ``"pcst"``: Chiou's penalty multiplier solver (5.5.5.2) with ``delta = h/2``,
  ``(E + delta^2 J M~^-1 J') lambda_k = E lambda_{k-1} + delta J v_{k-1}
  + delta^2 J M~^-1 F~ + delta Phi_t`` (``M~``, ``F~`` the damping-corrected matrix and
  force above), then ``a_k = M~^-1 (F~ - J' lambda_k)``.  ``E = eps I`` with the thesis'
  absolute ``eps`` [s^2/kg for a point row] when ``eps`` is given; by default
  ``E = eps_relative diag(delta^2 J M~^-1 J')``, which scales with the step and the
  mechanism's masses and units: the velocity-constraint violation
  ``J v + Phi_t = (E / delta)(lambda_k - lambda_{k-1})`` then shrinks with ``h`` and the
  scheme converges at second order (measured on a parallelogram: 3.7e-5, 9.1e-6, 2.3e-6
  rad at h = 2, 1, 0.5 ms), where a fixed ``eps = 1e-6`` left an error floor of 2.2e-4
  rad at every step.  Redundant rows need nothing more: ``E > 0`` keeps the matrix
  positive definite.  Solved at every half level (the
  thesis solves at n + 1/2 and extrapolates ``lambda^{n+1} = 2 lambda^{n+1/2} - lambda^n``;
  by default both chains solve, which keeps them symmetric; ``pcst_extrapolate=True``
  follows the thesis: the integer levels use ``2 lambda^{n-1/2} - lambda^{n-1}``).
* ``project=True`` additionally projects every new ``q_{k+1}`` onto ``Phi = 0`` (Newton,
  least mass-weighted change, with ``constraints()`` and ``displace()``, to
  ``|Phi_r| / row_scale_r < 1e-12``) and ``v_{k+1}`` onto ``J v + Phi_t = 0``, in the
  independent rows.

Start-up: ``(q_0, v_0)`` from ``mech.assemble()``; ``(q_1, v_1)`` by one classical RK4 step
of ``h/2`` with the index-1 accelerations (local error O(h^5), so the start excites the
parasitic mode only at that level).  Re-synchronization (``resync_s``, default 0.1 s; None:
the thesis' scheme): every ``resync_s`` the half-level chain is computed afresh from the
integer level by the same RK4 step.  The two-step rule's parasitic mode grows under
velocity-dependent accelerations that the trapezoidal remedy does not cover (the
constraints' ``gamma``, quadratic in ``v``): without it the 1 m four-bar of the corpus
(``bench/multibody_corpus.py``) turned NaN at t = 6.7 s, the slider-crank at 9.6 s, the
cart double pendulum drifted 4 m in 10 s; with it they stay within 1e-4..1e-3 m (the
scheme's second-order error at 1 ms), at the cost of four evaluations every ``resync_s``;
it injects energy where the step is coarse (``h omega > 0.3``: an undamped oscillator at
``h omega = 0.5`` grows to 2.3 times its amplitude in 50 s with ``resync_s = 0.1``), where
``resync_s=None`` is the better choice.  Stability (undamped, without resync):
``h |omega|_max <= 2``.

Step.  The scheme is second order (the error falls 4x per halving of ``h`` in every cell
below), so it needs a smaller step than the library's RK4 formulations for the same
accuracy.  Measured on the corpus of ``bench/multibody_corpus.py`` (2026-11-29; largest
tracked-point error over 10 s against the minimal-coordinate references [m]; the 1 cm and
1 mm four-bars scale with the 1 m one)::

                      h = 1 ms   0.5 ms    0.25 ms   0.125 ms   worst mechanism
    index1 + project  8.7e-5     2.2e-5    5.5e-6    .          Sarrus 6R
    index1            2.6e-3     6.5e-4    1.6e-4    4.1e-5     RSSR (drift)
    pcst + project    1.2e-3     2.9e-4    7.2e-5    .          four-bar 1 m
    pcst              stop       2.6e-2    6.0e-3    3.4e-5     Sarrus 6R (drift)

For 1e-4 m over 10 s on these mechanisms (1 m size, 3-4 rad/s): ``project=True`` with
``index1`` at 1 ms, with ``pcst`` at 0.25 ms; without projection 0.125 ms, where the
position drift sets the step (``stop``: the drift monitor).  PCST's error with projection
does not depend on ``eps_relative`` (the same from 1e-3 to 1e-8 on the four-bar); without
projection its drift does, erratically (the four-bar leaves its manifold for
``eps_relative <= 1e-4``, the Sarrus linkage for 1e-3): use ``project=True`` unless you
study the thesis' scheme itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.linalg as sla

from cosim.errors import StepError

from .finite import SINGULAR, check_singular, check_state, singular_solve, structural
from .geometry import tilde


def _omega(w: np.ndarray) -> np.ndarray:
    """``A(w)`` of ``p' = A(w) p`` (thesis (2.8.7), body-frame ``w``)."""
    w1, w2, w3 = w
    return 0.5 * np.array([[0.0, -w1, -w2, -w3], [w1, 0.0, w3, -w2],
                           [w2, -w3, 0.0, w1], [w3, w2, -w1, 0.0]])


def velocity_independent(element: Any) -> bool:
    """Whether a force element's force cannot depend on the velocities: a spring without
    damping or a force function, a bushing without damping (others are assumed to)."""
    kind = type(element).__name__
    if kind == "PointToPoint":
        return element.c == 0.0 and element.force is None
    if kind == "Bushing":
        return not (np.any(element.ct) or np.any(element.cr))
    return False


def cayley(p: np.ndarray, w: np.ndarray, h: float) -> np.ndarray:
    """Euler parameters after ``h`` at constant body-frame ``w``: (5.5.4.6), corrected Delta."""
    B = np.eye(4) + 0.5 * h * _omega(w)
    return B @ (B @ p) / (1.0 + h * h * float(w @ w) / 16.0)


def staggered_integrate(mech: Any, t_end: float, h: float, *, t0: float = 0.0,
                        q0: Any = None, v0: Any = None, loads: Callable | None = None,
                        damping: str = "trapezoidal", damping_matrix: Callable | None = None,
                        constraints: str = "index1", eps: float | None = None,
                        eps_relative: float = 1e-3,
                        pcst_extrapolate: bool = False, project: bool = False,
                        record_every: int = 1, singular_tol: float = SINGULAR,
                        resync_s: float | None = 0.1,
                        drift_tol: float | None = 1e-3) -> dict:
    """Integrate ``mech`` from ``t0`` to ``t_end`` with the two-stage staggered scheme.

    ``loads(t) -> dict`` gives the mechanism's load inputs.  Returns ``t`` (integer levels
    ``t0 + n h``, every ``record_every``-th), ``q``, ``v``, ``lam`` there, and ``stats``
    (force and constraint evaluations, projections).  ``singular_tol``: the run stops at
    a singular position (rank measure of ``J`` below it, :func:`.finite.check_singular`),
    which neither variant passes reliably (0: go on at your own risk).  ``drift_tol``:
    the run stops when a position constraint is violated by more than this, relative to
    its row's scale (as :class:`MultibodyBlock`'s drift monitor; None: no check): the
    variants without projection keep the constraints at velocity level only, and their
    drift can grow to a wrong motion (measured: the Sarrus plate 0.23 m off in 10 s under
    PCST).  See the module docstring.
    """
    if damping not in ("trapezoidal", "explicit"):
        raise ValueError("damping must be 'trapezoidal' or 'explicit'")
    if constraints not in ("index1", "pcst"):
        raise ValueError("constraints must be 'index1' or 'pcst'")
    if q0 is None or v0 is None:
        mech.assemble(t0)
        q = mech.q_init.copy() if q0 is None else np.asarray(q0, float).copy()
        v = mech.v_init.copy() if v0 is None else np.asarray(v0, float).copy()
    else:
        mech.finalize()
        q, v = np.asarray(q0, float).copy(), np.asarray(v0, float).copy()
        if mech.m:  # the independent rows at the start (:mod:`.redundancy`)
            mech.rows.select(mech.constraints(q, v, t0)[1])
    skip = structural(mech) if q0 is None or v0 is None else mech.rows.D.size
    M = mech.M
    nv = mech.nv
    Minv = np.linalg.inv(M)
    spatial = [b for b in mech.moving if b.kind == "spatial"]
    tau = 0.5 * h
    stats = {"force_evaluations": 0, "constraint_evaluations": 0, "projections": 0,
             "resyncs": 0}
    where = f"staggered_integrate ({constraints}{', project' if project else ''})"

    def lin_solve(A, b, qk, t, what):
        """``A x = b``; a singular ``A`` is a StepError naming the dependent rows."""
        try:
            return np.linalg.solve(A, b)
        except np.linalg.LinAlgError:
            raise singular_solve(mech, qk, t, where, what) from None

    def F(qk, vk, t):
        stats["force_evaluations"] += 1
        return mech.forces(qk, vk, t, loads(t) if loads else None)

    def C(qk, vk, t):
        stats["constraint_evaluations"] += 1
        return mech.constraints(qk, vk, t)

    def index1(Mt, rhs, J, gamma, qk, t):
        """The saddle-point solve in the independent rows (:mod:`.redundancy`); ``λ`` of
        every row (the minimum-norm reactions when some depend on the others)."""
        if J.shape[0] == 0:
            return lin_solve(Mt, rhs, qk, t, "the mass matrix"), np.zeros(0)
        A = mech.rows.update(J)
        for attempt in (0, 1):
            Jr, gr = (J, gamma) if A is None else (J[A], gamma[A])
            m = Jr.shape[0]
            K = np.zeros((nv + m, nv + m))
            K[:nv, :nv], K[:nv, nv:], K[nv:, :nv] = Mt, Jr.T, Jr
            lu, piv = sla.lu_factor(K, check_finite=False)
            d = np.abs(np.diagonal(lu))
            if d.min() > 1e-12 * d.max() or not np.isfinite(d).all():  # NaN: check_state
                x = sla.lu_solve((lu, piv), np.concatenate([rhs, gr]), check_finite=False)
                return x[:nv], mech.rows.reactions(J, x[nv:])
            if attempt or not mech.rows.select(J):  # rank lost: choose the rows afresh
                break
            A = mech.rows.A
        raise singular_solve(mech, qk, t, where, "the index-1 system [M J'; J 0]")

    moving_elements = [e for e in mech.elements.values() if not velocity_independent(e)]

    def element_forces(qk, vk, t):
        """The generalized forces of the elements that depend on ``v``."""
        Q = np.zeros(nv)
        kins = mech.lazy_kins(qk, vk)
        for e in moving_elements:
            e._t = t
            e.apply(kins, Q, None)
        return Q

    def Dmat(qk, vk, t, Qk):
        """``-dQ/dv``: the gyroscopic part exactly, ``~w' J' - ~(J' w')`` per spatial
        body (``Q = -w' x J' w'``), the elements that depend on ``v`` by forward
        differences (gravity, loads and springs do not)."""
        if damping == "explicit":
            return None
        if damping_matrix is not None:
            return np.asarray(damping_matrix(qk, vk, t), float)
        D = np.zeros((nv, nv))
        for b in spatial:
            i = b.iv + 3
            w = vk[i:i + 3]
            D[i:i + 3, i:i + 3] = tilde(w) @ b.inertia - tilde(b.inertia @ w)
        if moving_elements:
            stats["force_evaluations"] += nv
            Qe = element_forces(qk, vk, t)
            for i in range(nv):
                dv = 1e-7 * (1.0 + abs(vk[i]))
                e = vk.copy()
                e[i] += dv
                D[:, i] -= (element_forces(qk, e, t) - Qe) / dv
        return D if np.any(D) else None

    def accel(qk, vk, t, v_prev, lam_prev, lam_extrapolated=None):
        Qk = F(qk, vk, t)
        phi, J, phit, gamma = C(qk, vk, t)
        D = Dmat(qk, vk, t, Qk)
        Mt, rhs = M, Qk
        if D is not None:
            Mt = M + tau * D
            rhs = Qk + D @ (vk - v_prev)
        if constraints == "index1" or J.shape[0] == 0:
            return index1(Mt, rhs, J, gamma, qk, t)
        Mti = Minv if D is None else np.linalg.inv(Mt)
        if lam_extrapolated is not None:
            return Mti @ (rhs - J.T @ lam_extrapolated), lam_extrapolated
        JMJ = tau * tau * J @ Mti @ J.T
        E = np.full(J.shape[0], eps) if eps is not None else \
            eps_relative * np.maximum(np.diagonal(JMJ), 1e-300)
        S = np.diag(E) + JMJ
        b = E * lam_prev + tau * J @ v_prev + tau * tau * J @ Mti @ rhs + tau * phit
        lam = lin_solve(S, b, qk, t, "the PCST multiplier system")
        return Mti @ (rhs - J.T @ lam), lam

    def advance(q_old, v_now, step):
        qn = q_old + step * mech.qdot(q_old, v_now)
        for b in spatial:
            qn[b.iq + 3:b.iq + 7] = cayley(q_old[b.iq + 3:b.iq + 7],
                                           v_now[b.iv + 3:b.iv + 6], step)
        return qn

    def project_state(qk, vk, t):
        """Least mass-weighted changes onto ``Phi = 0`` and ``J v + Phi_t = 0``, in the
        independent rows (:mod:`.redundancy`)."""
        if not mech.m:
            return qk, vk
        hol = mech.holonomic
        for _ in range(30):
            phi, J, _, _ = C(qk, np.zeros(nv), t)
            A = mech.rows.update(J)
            rows = np.flatnonzero(hol) if A is None else A[hol[A]]
            phi, J = phi[rows], J[rows]
            if phi.size == 0 or np.max(np.abs(phi) / mech.row_scale[rows]) < 1e-12:
                break
            mu = lin_solve(J @ Minv @ J.T, phi, qk, t, "the position projection J M^-1 J'")
            qk = mech.displace(qk, -Minv @ J.T @ mu)
        _, J, phit, _ = C(qk, vk, t)
        A = mech.rows.update(J)
        if A is not None:
            J, phit = J[A], phit[A]
        mu = lin_solve(J @ Minv @ J.T, J @ vk + phit, qk, t,
                       "the velocity projection J M^-1 J'")
        stats["projections"] += 1
        return qk, vk - Minv @ J.T @ mu

    # start-up: RK4 step of h/2 with the plain index-1 accelerations
    def f(qk, vk, t):
        Qk = F(qk, vk, t)
        _, J, _, gamma = C(qk, vk, t)
        return index1(M, Qk, J, gamma, qk, t)

    hol = mech.holonomic

    def check_drift(qk, t):
        """The drift monitor (``drift_tol``), at the integer levels."""
        phi = C(qk, np.zeros(nv), t)[0]
        rel = np.where(hol, np.abs(phi) / mech.row_scale, 0.0)
        worst = int(np.argmax(rel))
        if rel[worst] > drift_tol:
            raise StepError(
                f"{where}: mechanism '{mech.name}' at t = {t:.9g} s: the solution left its "
                f"constraint manifold (relative violation {rel[worst]:.3g} > drift_tol = "
                f"{drift_tol:g} in '{mech.row_labels[worst]}'); use project=True, a smaller "
                "step, or a MultibodyBlock formulation with constraint stabilization")

    def half_step(q, v, t):
        """The level ``t + h/2`` from the level ``t``: one RK4 step of ``h/2``."""
        a0, lam0 = f(q, v, t)
        k1q, k1v = v, a0
        k2q = v + 0.5 * tau * k1v
        k2v = f(mech.displace(q, 0.5 * tau * k1q), k2q, t + 0.5 * tau)[0]
        k3q = v + 0.5 * tau * k2v
        k3v = f(mech.displace(q, 0.5 * tau * k2q), k3q, t + 0.5 * tau)[0]
        k4q = v + tau * k3v
        k4v = f(mech.displace(q, tau * k3q), k4q, t + tau)[0]
        q1 = mech.displace(q, tau / 6.0 * (k1q + 2 * k2q + 2 * k3q + k4q))
        v1 = v + tau / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v)
        check_state(mech, q1, v1, t + tau, where, last=(q, v, t))
        if project:
            q1, v1 = project_state(q1, v1, t + tau)
        return q1, v1, lam0

    q1, v1, lam0 = half_step(q, v, t0)
    n_steps = int(round((t_end - t0) / h))
    every = 0 if resync_s is None else max(1, int(round(resync_s / h)))
    chain = {0: (q, v), 1: (q1, v1)}  # parity -> (q, v) of the latest level of that chain
    lam = {0: lam0, 1: lam0}
    T, Qs, Vs, Ls = [t0], [q.copy()], [v.copy()], [lam0.copy()]
    k = 1
    while k < 2 * n_steps:
        t = t0 + k * tau
        qk, vk = chain[k % 2]
        q_prev, v_prev = chain[(k + 1) % 2]           # level k - 1
        lam_x = None
        if pcst_extrapolate and constraints == "pcst" and k % 2 == 0:
            lam_x = 2.0 * lam[(k + 1) % 2] - lam[k % 2]  # 2 lambda^{n-1/2} - lambda^{n-1}
        ak, lk = accel(qk, vk, t, v_prev, lam[(k + 1) % 2], lam_x)
        v_new = v_prev + h * ak                        # level k + 1
        q_new = advance(q_prev, vk, h)
        check_state(mech, q_new, v_new, t + tau, where, last=(qk, vk, t))
        if (k + 1) % 2 == 0:  # the monitors at the integer levels
            check_singular(mech, q_new, t + tau, singular_tol, where, skip=skip)
            if drift_tol is not None and hol.any():
                check_drift(q_new, t + tau)
        if project:
            q_new, v_new = project_state(q_new, v_new, t + tau)
        chain[(k + 1) % 2] = (q_new, v_new)
        lam[k % 2] = lk
        n = (k + 1) // 2
        if (k + 1) % 2 == 0 and n % record_every == 0:
            T.append(t0 + n * h)
            Qs.append(q_new.copy())
            Vs.append(v_new.copy())
            Ls.append(lk.copy())  # the half level's multiplier (n + 1/2 before n + 1)
        k += 1
        if every and (k % 2 == 0) and n % every == 0 and k < 2 * n_steps:
            # re-synchronize: the half-level chain afresh from the integer level (the
            # start-up step), which resets the two-step rule's parasitic mode
            qh, vh, lam_h = half_step(q_new, v_new, t0 + n * h)
            chain[1] = (qh, vh)
            if constraints == "index1":  # pcst keeps its multiplier history
                lam[1] = lam_h
            stats["resyncs"] += 1
            k += 1
    return {"t": np.array(T), "q": np.array(Qs), "v": np.array(Vs), "lam": np.array(Ls),
            "stats": stats, "h": h}
