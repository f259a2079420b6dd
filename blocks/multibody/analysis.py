"""Kinematic analysis, inverse dynamics and linearization of a mechanism.

* :func:`kinematics` — a mechanism with as many driving constraints as
  degrees of freedom moves as prescribed: at each time ``Phi(q, t) = 0`` is
  solved by Newton (from the previous solution), then ``J v = -Phi_t`` and
  ``J v̇ = gamma``.
* :func:`inverse_dynamics` — the constraint forces along that motion,
  ``J' λ = Q - M v̇``; per joint ``-λ``, what the joint applies to body j
  (the convention of the block's reaction outputs): the actuator effort of a
  driver (torque of an angle driver, force of a slide driver, ``-2 L F`` of a
  distance driver since ``Phi = |d|^2 - L^2``).
* :func:`linearize` — ``x' = A x`` about an equilibrium or a *steady motion*
  ``(q0, v0)`` in minimal coordinates, in the *global chart*: a perturbation is
  a displacement ``d`` (translations, and rotations of spatial bodies as global
  rotation vectors, ``A = exp(~d_rot) A0``) and a velocity change ``w`` (linear
  and angular velocities in global components).  Orthonormal bases ``Nq`` of
  the null space of the holonomic rows of ``J G`` and ``N`` of all rows
  (``G`` maps global-chart increments to the velocity variables: ``A0'`` on the
  rotation block of a spatial body; nonholonomic rows restrict velocities, not
  positions); positions ``q(xi) = project(displace(q0, G Nq xi))``, velocities
  ``v = project(G(q) (w0 + N eta))``, ``x = (xi, eta)``.  With
  ``A = exp(~d) A0(t)`` and ``A' = A ~w_b``: ``d' = A0 (w_b - w_b0) = dw - d x w0``
  to first order (``dw`` the change of the global angular velocity: a motion turned
  as a whole by a fixed ``d`` has ``dw = d x w0`` and ``d' = 0``), and
  ``d(A w_b)/dt = A w_b'̇``, so::

      xi'  = Nq' (dw + W0 Nq xi),        eta' = N' (w' - C xi')

  with ``W0`` the skew matrices of the spatial bodies' global angular velocities
  (the transport term of the chart) and ``C = dw/dxi`` the velocity correction that
  keeps a perturbed state consistent; the rest by central differences of the
  constrained dynamics.  A
  steady motion is one whose global velocities are constant (``w0' = 0``): a
  wheel or disk rolling straight, a bicycle at speed, a top spinning upright;
  the coordinates that change along it (distance travelled, spin angles) are
  cyclic for axisymmetric spinning bodies, so ``A`` does not depend on the
  instant, and they show as zero eigenvalues.  Checked against the rolling
  disk's closed form (stable above ``v^2 = g R / 3``).  Limitations: the
  operating point must be a steady motion in this sense (a steady turn, whose
  velocities rotate, needs a rotating frame: not built); a body spinning about
  an axis that is not a symmetry axis makes ``A`` depend on the instant.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import null_space

from cosim.errors import BuildError

from .formulations import Formulation
from .geometry import tilde


def _require_driven(mech: Any, t: float) -> None:
    mech.finalize()
    rank, _ = mech.rank(mech.q0, t)
    if mech.nv - rank:
        raise BuildError(f"mechanism '{mech.name}': kinematic analysis needs the motion fully "
                         f"prescribed, but {mech.nv - rank} degree(s) of freedom are free; add "
                         "driving constraints (angle_driver, slide_driver, distance_driver)")


def kinematics(mech: Any, times: Any) -> dict[str, np.ndarray]:
    """Positions, velocities and accelerations of a fully driven mechanism at ``times``."""
    times = np.asarray(times, float)
    _require_driven(mech, float(times[0]))
    q = mech.q0.copy()
    Q, V, A = [], [], []
    for t in times:
        q, _ = mech.project_positions(q, float(t))
        _, J, phit, _ = mech.constraints(q, np.zeros(mech.nv), float(t))
        v = np.linalg.solve(J, -phit)
        _, J, _, gamma = mech.constraints(q, v, float(t))
        Q.append(q.copy())
        V.append(v)
        A.append(np.linalg.solve(J, gamma))
    return {"t": times, "q": np.array(Q), "v": np.array(V), "vdot": np.array(A)}


def inverse_dynamics(mech: Any, times: Any, loads: Any = None) -> dict[str, Any]:
    """Constraint forces (``λ`` per joint) along the prescribed motion; see module docstring."""
    kin = kinematics(mech, times)
    lam = []
    for t, q, v, vd in zip(kin["t"], kin["q"], kin["v"], kin["vdot"]):
        _, J, _, _ = mech.constraints(q, v, float(t))
        Qf = mech.forces(q, v, float(t), loads(t) if callable(loads) else loads)
        lam.append(np.linalg.solve(J.T, Qf - mech.M @ vd))
    lam = np.array(lam)
    kin["lambda"] = lam
    kin["joints"] = {name: -lam[:, rows] for name, rows in mech.joint_rows.items()}
    return kin


def _rotations(mech: Any, q: np.ndarray) -> list:
    """``(iv of the angular velocity, A)`` of every spatial body at ``q``."""
    from .geometry import quat_matrix
    return [(b.iv + 3, quat_matrix(q[b.iq + 3:b.iq + 7])) for b in mech.moving
            if b.kind == "spatial"]


def _to_global(mech: Any, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Body-frame angular velocities (and their rates) of spatial bodies to global."""
    out = np.array(v, float)
    for i, A in _rotations(mech, q):
        out[i:i + 3] = A @ v[i:i + 3]
    return out


def _to_body(mech: Any, q: np.ndarray, w: np.ndarray) -> np.ndarray:
    out = np.array(w, float)
    for i, A in _rotations(mech, q):
        out[i:i + 3] = A.T @ w[i:i + 3]
    return out


def linearize(mech: Any, q0: Any = None, v0: Any = None, t: float = 0.0,
              form: Any = None, loads: dict | None = None, eps: float = 1e-6) -> dict:
    """``A`` (and the bases ``Nq``, ``N``) of the constrained dynamics about ``(q0, v0)``,
    an equilibrium or a steady motion (module docstring).

    Defaults: the mechanism's initial positions and velocities (made consistent).
    Returns ``A``, ``eigenvalues``, ``Nq``, ``N`` (global chart), ``q0``, ``v0`` and
    ``steady``: ``max |w0'|`` at the operating point (0 for a steady motion; a value of
    the order of the accelerations says the operating point is not one).
    """
    mech.finalize()
    form = form or Formulation("lagrange")
    q0 = mech.q0.copy() if q0 is None else np.asarray(q0, float)
    v0 = mech.v0.copy() if v0 is None else np.asarray(v0, float)
    q0, _ = mech.project_positions(q0, t)
    v0 = mech.project_velocities(q0, v0, t)
    w0 = _to_global(mech, q0, v0)
    G0 = _to_body(mech, q0, np.eye(mech.nv))  # global-chart increments -> velocity variables
    _, J, _, _ = mech.constraints(q0, v0, t)
    Jg = J @ G0
    Nq = null_space(Jg[mech.holonomic]) if mech.holonomic.any() else np.eye(mech.nv)
    Nv = null_space(Jg) if J.shape[0] else np.eye(mech.nv)
    fq, fv = Nq.shape[1], Nv.shape[1]

    def state(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q, _ = mech.project_positions(mech.displace(q0, G0 @ (Nq @ x[:fq])), t)
        v = mech.project_velocities(q, _to_body(mech, q, w0 + Nv @ x[fq:]), t)
        return q, v

    def rhs(x: np.ndarray) -> np.ndarray:
        q, v = state(x)
        vd, _ = mech.accelerations(q, v, t, form, loads)
        return np.concatenate([Nq.T @ _to_global(mech, q, v), _to_global(mech, q, vd)])

    n = fq + fv
    D = np.empty((fq + mech.nv, n))
    C = np.empty((mech.nv, fq))  # dw/dxi: the velocity correction that keeps w consistent
    for k in range(n):
        e = np.zeros(n)
        e[k] = eps
        D[:, k] = (rhs(e) - rhs(-e)) / (2 * eps)
        if k < fq:
            qp, vp = state(e)
            qm, vm = state(-e)
            C[:, k] = (_to_global(mech, qp, vp) - _to_global(mech, qm, vm)) / (2 * eps)
    # xi' gains the chart's transport term W0 d (d = Nq xi): dw - d x w0 = dw + w0 x d
    W0 = np.zeros((mech.nv, mech.nv))
    for i, _ in _rotations(mech, q0):
        W0[i:i + 3, i:i + 3] = tilde(w0[i:i + 3])
    Dq = D[:fq].copy()
    Dq[:, :fq] += Nq.T @ W0 @ Nq
    # eta' = N' (w' - C xi'): the part of the acceleration not due to the correction
    A = np.vstack([Dq, Nv.T @ (D[fq:] - C @ Dq)])
    steady = float(np.max(np.abs(rhs(np.zeros(n))[fq:]), initial=0.0))
    return {"A": A, "N": Nv, "Nq": Nq, "eigenvalues": np.linalg.eigvals(A), "q0": q0,
            "v0": v0, "steady": steady}
