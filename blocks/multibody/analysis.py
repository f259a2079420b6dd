"""Kinematic analysis, inverse dynamics and linearization of a mechanism.

* :func:`kinematics` — a mechanism with as many driving constraints as
  degrees of freedom moves as prescribed: at each time ``Phi(q, t) = 0`` is
  solved by Newton (from the previous solution), then ``J v = -Phi_t`` and
  ``J v̇ = gamma``.
* :func:`inverse_dynamics` — the constraint forces along that motion,
  ``J' λ = Q - M v̇``; per joint ``-λ``, what the joint applies to body j
  (the convention of the block's reaction outputs): the actuator effort of a
  driver (torque of an angle driver, force of a slide driver, ``-2 L F`` of a
  distance driver since ``Phi = |d|^2 - L^2``).  With redundant rows the
  minimum-norm ``λ`` (:mod:`.redundancy`: no part along a self-stress of the loop), and
  the kinematics in the independent rows.
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
  keeps a perturbed state consistent.

  The derivatives are exact (to rounding), not finite differences: the projections
  and the accelerations (``[M J'; J 0] [v̇; λ] = [Q; γ]``) are evaluated in complex
  arithmetic on a set of independent constraint rows chosen at ``q0`` (QR with
  column pivoting; a redundant row, such as a parallelogram's third crank, is left
  out, which is exact near ``q0``), and ``d f / dx_k = Im f(x + i h e_k) / h``
  (complex step, :mod:`.complex_dynamics`).  Central differences (the method before)
  left ``A`` with errors of ``eps^2`` (truncation) and ``1e-16 / eps`` (rounding, and
  the projections' tolerance over ``eps``): the zero eigenvalues of the cyclic
  coordinates, which form Jordan chains, split into spurious pairs of about
  ``3 eps`` (square roots of the error: 3.3e-4 at ``eps = 1e-4`` for the rolling
  disk), and the rolling disk's critical speed moved by up to 7.9e-9 relative with
  ``eps``; now ``A`` is the same for any step to 1.5e-15 and the critical speed is
  exact to 1e-12.  A force element whose function is not analytic in complex
  arithmetic (``float()``, ``abs``, ``max`` on its arguments) is found at the
  operating point and differenced alone (said in the result's ``method`` and by a
  warning).  A
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

import warnings
from typing import Any

import numpy as np
from scipy.linalg import null_space

from cosim.errors import BuildError, CosimWarning

from .complex_dynamics import ComplexDynamics, ComplexWarning
from .formulations import KINDS
from .geometry import quat_matrix, tilde
from .redundancy import independent_rows, min_norm_reactions, unit_rows


def _require_driven(mech: Any, t: float) -> None:
    mech.finalize()
    rank, _ = mech.rank(mech.q0, t)
    if mech.nv - rank:
        raise BuildError(f"mechanism '{mech.name}': kinematic analysis needs the motion fully "
                         f"prescribed, but {mech.nv - rank} degree(s) of freedom are free; add "
                         "driving constraints (angle_driver, slide_driver, distance_driver)")


def _independent(mech: Any, J: np.ndarray) -> np.ndarray:
    """The independent rows of ``J`` (:mod:`.redundancy`): a square set for a fully driven
    mechanism, redundant rows left out (their equations follow from the others)."""
    return independent_rows(unit_rows(J, mech.rank_metric))[0]


def kinematics(mech: Any, times: Any) -> dict[str, np.ndarray]:
    """Positions, velocities and accelerations of a fully driven mechanism at ``times``."""
    times = np.asarray(times, float)
    _require_driven(mech, float(times[0]))
    q = mech.q0.copy()
    Q, V, A = [], [], []
    for t in times:
        q, _ = mech.project_positions(q, float(t))
        _, J, phit, _ = mech.constraints(q, np.zeros(mech.nv), float(t))
        rows = _independent(mech, J)
        v = np.linalg.solve(J[rows], -phit[rows])
        _, J, _, gamma = mech.constraints(q, v, float(t))
        Q.append(q.copy())
        V.append(v)
        A.append(np.linalg.solve(J[rows], gamma[rows]))
    return {"t": times, "q": np.array(Q), "v": np.array(V), "vdot": np.array(A)}


def inverse_dynamics(mech: Any, times: Any, loads: Any = None) -> dict[str, Any]:
    """Constraint forces (``λ`` per joint) along the prescribed motion; see module docstring."""
    kin = kinematics(mech, times)
    lam = []
    for t, q, v, vd in zip(kin["t"], kin["q"], kin["v"], kin["vdot"]):
        _, J, _, _ = mech.constraints(q, v, float(t))
        Qf = mech.forces(q, v, float(t), loads(t) if callable(loads) else loads)
        lam.append(min_norm_reactions(J, Qf - mech.M @ vd, mech.row_scale / mech.length_scale))
    lam = np.array(lam)
    kin["lambda"] = lam
    kin["joints"] = {name: -lam[:, rows] for name, rows in mech.joint_rows.items()}
    return kin


def _rotations(mech: Any, q: np.ndarray) -> list:
    """``(iv of the angular velocity, A)`` of every spatial body at ``q``."""
    return [(b.iv + 3, quat_matrix(q[b.iq + 3:b.iq + 7])) for b in mech.moving
            if b.kind == "spatial"]


def _to_global(mech: Any, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Body-frame angular velocities (and their rates) of spatial bodies to global."""
    out = np.array(v, np.result_type(q, v, float))
    for i, A in _rotations(mech, q):
        out[i:i + 3] = A @ v[i:i + 3]
    return out


def _to_body(mech: Any, q: np.ndarray, w: np.ndarray) -> np.ndarray:
    out = np.array(w, np.result_type(q, w, float))
    for i, A in _rotations(mech, q):
        out[i:i + 3] = A.T @ w[i:i + 3]
    return out


def _formulation(form: Any) -> None:
    """Refuse a formulation whose accelerations on the manifold are not the constrained ones."""
    kind = getattr(form, "kind", form)
    if kind is None:
        return
    if kind not in KINDS:
        raise ValueError(f"linearize: form must be one of {', '.join(KINDS)} or None, "
                         f"got {kind!r}")
    if kind in ("penalty", "augmented_lagrangian"):
        raise ValueError(f"linearize: form={kind!r} cannot take effect: the linearization is "
                         "the exact constrained dynamics in independent coordinates (every "
                         "index-1 formulation gives it on the constraint manifold), while the "
                         f"{kind} accelerations approximate it to O(1/penalty) and leave the "
                         "manifold; leave form unset")


def linearize(mech: Any, q0: Any = None, v0: Any = None, t: float = 0.0,
              form: Any = None, loads: dict | None = None, eps: float | None = None) -> dict:
    """``A`` (and the bases ``Nq``, ``N``) of the constrained dynamics about ``(q0, v0)``,
    an equilibrium or a steady motion (module docstring), by complex step.

    Defaults: the mechanism's initial positions and velocities (made consistent).
    ``eps``: the complex step ``h`` (default ``1e-20``: derivatives exact to rounding);
    a step given is taken with one Richardson extrapolation, ``(4 D(h/2) - D(h)) / 3``,
    which removes the step's truncation ``h^2 f'''/6`` (left: ``O(h^4)``), so any ``eps``
    up to ``1e-4`` gives the same ``A`` to rounding (rolling disk: one step of 1e-4 leaves
    4.2e-9 of ``A``, as much as central differences did; extrapolated, 8e-16).
    ``form``: None or an index-1 kind
    (``lagrange`` with any Baumgarte constants, ``projection``, ``partitioning``: on the
    manifold their accelerations are the constrained ones, the Baumgarte terms vanish);
    a penalty kind is refused.  ``loads``: constant inputs ``{name: value}``.

    Returns ``A``, ``eigenvalues``, ``Nq``, ``N`` (global chart), ``q0``, ``v0``,
    ``steady``: ``max |w0'|`` at the operating point (0 for a steady motion; a value of
    the order of the accelerations says the operating point is not one), ``redundant``:
    the constraint rows left out (dependent on the others at ``q0``), and ``method``: how
    the derivatives were taken (naming any force element differenced because it is not
    analytic in complex arithmetic, :mod:`.complex_dynamics`).
    """
    mech.finalize()
    _formulation(form)
    q0 = mech.q0.copy() if q0 is None else np.asarray(q0, float)
    v0 = mech.v0.copy() if v0 is None else np.asarray(v0, float)
    if eps is not None and not 0.0 < float(eps) <= 1e-2:
        raise ValueError(f"linearize: eps is the complex step, 0 < eps <= 1e-2; got {eps!r}")
    q0, _ = mech.project_positions(q0, t)  # least squares: near, also when redundant
    dyn = ComplexDynamics(mech, q0, t, loads)
    with warnings.catch_warnings():  # a dropped imaginary part is an error, not a zero
        warnings.simplefilter("error", ComplexWarning)
        q0 = dyn.project_positions(q0)
        v0 = dyn.project_velocities(q0, v0)
        w0 = _to_global(mech, q0, v0)
        G0 = _to_body(mech, q0, np.eye(mech.nv))  # global-chart increments -> velocities
        Jg = dyn.constraints(q0, np.zeros(mech.nv))[1] @ G0
        Nq = null_space(Jg[dyn.hol_rows]) if dyn.hol_rows.size else np.eye(mech.nv)
        Nv = null_space(Jg[dyn.rows]) if dyn.rows.size else np.eye(mech.nv)
        fq, fv = Nq.shape[1], Nv.shape[1]
        n = fq + fv
        rng = np.random.default_rng(0)  # a generic direction for the analyticity check
        dyn.check_elements(q0, v0, G0 @ (Nq @ rng.normal(size=fq)),
                           _to_body(mech, q0, Nv @ rng.normal(size=fv)))

        def evaluate(x: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
            """``(Nq' w, w')`` (global) and ``w`` at ``x = (xi, eta)``."""
            q = dyn.project_positions(dyn.displace(q0, G0 @ (Nq @ x[:fq])), h)
            v = dyn.project_velocities(q, _to_body(mech, q, w0 + Nv @ x[fq:]))
            w = _to_global(mech, q, v)
            return np.concatenate([Nq.T @ w, _to_global(mech, q, dyn.accelerations(q, v))]), w

        def derivatives(h: float) -> tuple[np.ndarray, np.ndarray]:
            """``D = d(Nq' w, w')/dx`` and ``C = dw/dxi`` by complex step ``h``."""
            D = np.empty((fq + mech.nv, n))
            C = np.empty((mech.nv, fq))  # the velocity correction that keeps w consistent
            for k in range(n):
                x = np.zeros(n, complex)
                x[k] = 1j * h
                f, w = evaluate(x, h)
                D[:, k] = f.imag / h
                if k < fq:
                    C[:, k] = w.imag / h
            return D, C

        if eps is None:
            D, C = derivatives(1e-20)
            method = "complex step (h = 1e-20)"
        else:
            h = float(eps)
            (D1, C1), (D2, C2) = derivatives(h), derivatives(h / 2)
            D, C = (4 * D2 - D1) / 3, (4 * C2 - C1) / 3
            method = f"complex step (h = {h:.3g} and h/2, Richardson extrapolation)"
        steady = float(np.max(np.abs(evaluate(np.zeros(n), 0.0)[0][fq:].real), initial=0.0))
    if dyn.central:
        method += "; central differences (step 1e-6) for " + "; ".join(
            f"force element '{k}' ({why})" for k, why in dyn.central.items())
        warnings.warn(CosimWarning(
            f"linearize: mechanism '{mech.name}': force element(s) "
            f"{', '.join(repr(k) for k in dyn.central)} not analytic in complex arithmetic: "
            "differentiated by central differences (step 1e-6), so A depends on that step "
            "there; write their functions with NumPy operations on their arguments (no "
            "float(), abs(), max() on them) for exact derivatives"), stacklevel=2)
    # xi' gains the chart's transport term W0 d (d = Nq xi): dw - d x w0 = dw + w0 x d
    W0 = np.zeros((mech.nv, mech.nv))
    for i, _ in _rotations(mech, q0):
        W0[i:i + 3, i:i + 3] = tilde(w0[i:i + 3])
    Dq = D[:fq].copy()
    Dq[:, :fq] += Nq.T @ W0 @ Nq
    # eta' = N' (w' - C xi'): the part of the acceleration not due to the correction
    A = np.vstack([Dq, Nv.T @ (D[fq:] - C @ Dq)])
    return {"A": A, "N": Nv, "Nq": Nq, "eigenvalues": np.linalg.eigvals(A), "q0": q0,
            "v0": v0, "steady": steady, "redundant": dyn.redundant, "method": method}
