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
* :func:`linearize` — ``x' = A x + B u`` about ``(q0, v0)`` in minimal
  coordinates: orthonormal bases ``Nq`` of the null space of the holonomic
  rows of ``J`` and ``N`` of all rows (nonholonomic constraints restrict
  velocities, not positions), positions ``q(xi) = project(displace(q0, Nq
  xi))``, velocities ``v = project(v0 + N eta)``, ``x = (xi, eta)``; central
  differences of the constrained dynamics, with ``eta' = N' (v' - C xi')``
  where ``C = dv/dxi`` is the velocity correction that keeps a perturbed
  state consistent (non-zero for moving operating points).  Eigenvalues of
  ``A`` are the mechanism's modes (plus zeros for cyclic coordinates).
  Limitation: spatial bodies must not rotate at the operating point
  (refused with an error; planar bodies and translating motions are fine).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import null_space

from cosim.errors import BuildError

from .formulations import Formulation


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


def linearize(mech: Any, q0: Any = None, v0: Any = None, t: float = 0.0,
              form: Any = None, loads: dict | None = None, eps: float = 1e-6) -> dict:
    """``A`` (and the basis ``N``) of the constrained dynamics about ``(q0, v0)``.

    Defaults: the mechanism's initial positions and velocities (made consistent).
    """
    mech.finalize()
    form = form or Formulation("lagrange")
    q0 = mech.q0.copy() if q0 is None else np.asarray(q0, float)
    v0 = mech.v0.copy() if v0 is None else np.asarray(v0, float)
    q0, _ = mech.project_positions(q0, t)
    v0 = mech.project_velocities(q0, v0, t)
    for b in mech.moving:
        if b.kind == "spatial":
            w = v0[b.iv + 3:b.iv + 6]
            if np.max(np.abs(w)) > 1e-12:
                raise BuildError(
                    f"linearize: spatial body '{b.name}' rotates at the operating point "
                    f"(|w| = {np.linalg.norm(w):.3g} rad/s); linearizing about rotating spatial "
                    "bodies is not supported (the body-frame chart misses the rotation of the "
                    "perturbation): linearize about an equilibrium, or simulate small "
                    "perturbations instead")
    _, J, _, _ = mech.constraints(q0, v0, t)
    Nq = null_space(J[mech.holonomic]) if mech.holonomic.any() else np.eye(mech.nv)
    Nv = null_space(J) if J.shape[0] else np.eye(mech.nv)
    fq, fv = Nq.shape[1], Nv.shape[1]

    def state(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q, _ = mech.project_positions(mech.displace(q0, Nq @ x[:fq]), t)
        return q, mech.project_velocities(q, v0 + Nv @ x[fq:], t)

    def rhs(x: np.ndarray) -> np.ndarray:
        q, v = state(x)
        vd, _ = mech.accelerations(q, v, t, form, loads)
        return np.concatenate([Nq.T @ v, vd])

    n = fq + fv
    D = np.empty((fq + mech.nv, n))
    C = np.empty((mech.nv, fq))  # dv/dxi: the velocity correction that keeps v consistent
    for k in range(n):
        e = np.zeros(n)
        e[k] = eps
        D[:, k] = (rhs(e) - rhs(-e)) / (2 * eps)
        if k < fq:
            C[:, k] = (state(e)[1] - state(-e)[1]) / (2 * eps)
    # eta' = N' (v' - C xi'): the part of the acceleration not due to the correction
    A = np.vstack([D[:fq], Nv.T @ (D[fq:] - C @ D[:fq])])
    return {"A": A, "N": Nv, "Nq": Nq, "eigenvalues": np.linalg.eigvals(A), "q0": q0,
            "v0": v0}
