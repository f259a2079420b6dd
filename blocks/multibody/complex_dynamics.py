"""The constrained dynamics on the constraint manifold, in complex arithmetic.

:func:`.analysis.linearize` differentiates the map from independent coordinates to the
accelerations by *complex step*: for ``f`` analytic,

.. math:: f'(x) = \\operatorname{Im} f(x + i h) / h + O(h^2)

with no difference of nearly equal numbers, so ``h`` can be ``1e-20`` and the derivative is
exact to rounding (Squire & Trapp, SIAM Review 40, 1998; Martins, Sturdza & Alonso, ACM TOMS
29, 2003).  Everything here is analytic in ``(q, v)`` (complex throughout: no ``abs``,
norms, ``float()`` or real-only LAPACK on such data; :mod:`.geometry`), and works on
``rows``, a set of independent constraint rows chosen once at the operating point ``q0``:

* rows: QR with column pivoting of ``(J D^{-1})'`` with unit rows (``D`` the rank metric's
  lengths, so the choice does not depend on units; :mod:`.redundancy`); rank ``r`` at
  ``1e-9``.  The rows left
  out (redundant: a parallelogram's third crank) are combinations of the others near
  ``q0``, so the ``r`` rows define the same manifold there and give the same ``v̇`` (their
  ``λ`` alone is not unique);
* :meth:`~ComplexDynamics.project_positions`: Newton
  ``q <- q ⊕ (-M^{-1} J' (J M^{-1} J')^{-1} Phi)`` on the independent holonomic rows until
  both parts have converged, ``|Re Phi_r| <= tol s_r`` and ``|Im Phi_r| <= tol h s_r``
  (``s_r`` the row's scale, ``Mechanism.row_scale``; ``tol = 1e-12``), then one step more,
  which squares the error: both parts to rounding, whatever the step ``h`` (stopping at a
  fixed residual instead leaves an error that depends on ``h``, which a Richardson
  extrapolation over ``h`` and ``h/2`` would amplify);
* :meth:`~ComplexDynamics.project_velocities`:
  ``v - M^{-1} J' (J M^{-1} J')^{-1} (J v + Phi_t)`` (exact: linear in ``v``);
* :meth:`~ComplexDynamics.accelerations`: ``[M J'; J 0] [v̇; λ] = [Q; γ]`` on the
  independent rows, a dense complex solve;
* :meth:`~ComplexDynamics.forces`: gravity, the gyroscopic ``-w' x J' w'``, force elements
  and ``loads``.  A force element is used in complex arithmetic when it is analytic at the
  operating point (:meth:`~ComplexDynamics.check_elements`: its complex-step derivative
  equals central differences along a generic direction); otherwise the imaginary part of
  its force is a central difference along the imaginary part of ``(q, v)``,
  ``Im Q_e = (Q_e(x + s y) - Q_e(x - s y)) / 2 s`` with ``s max|y| = 1e-6``, which the
  linearization's ``method`` names.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from cosim.errors import StepError

from . import forces as _forces
from .redundancy import independent_rows as _independent
from .redundancy import unit_rows

ComplexWarning = np.exceptions.ComplexWarning
FD_STEP = 1e-6  # central differences for elements that are not analytic


def independent_rows(J: np.ndarray, metric: np.ndarray, rows: np.ndarray,
                     tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """``(independent, dependent)`` among ``rows`` of ``J``: the rank-revealing QR of
    :mod:`.redundancy` on those rows (dropped rows are zero: dependent)."""
    rows = np.asarray(rows, dtype=int)
    if rows.size == 0:
        return rows, rows
    A, D = _independent(unit_rows(J[rows], metric), tol)
    return rows[A], rows[D]


class ComplexDynamics:
    """The constrained dynamics of ``mech`` at time ``t`` on its independent rows at ``q0``
    (module docstring); ``loads``: constant inputs ``{name: value}``."""

    def __init__(self, mech: Any, q0: np.ndarray, t: float, loads: dict | None = None,
                 tol: float = 1e-12, max_iter: int = 30) -> None:
        self.mech, self.t, self.loads = mech, float(t), dict(loads or {})
        self.tol, self.max_iter = tol, max_iter
        _, J, _, _ = mech.constraints(q0, np.zeros(mech.nv), t)
        hol = np.flatnonzero(mech.holonomic)
        self.hol_rows, dep_q = independent_rows(J, mech.rank_metric, hol)
        self.rows, dep = independent_rows(J, mech.rank_metric, np.arange(mech.m))
        self.redundant = [mech.row_labels[i] for i in sorted(set(dep) | set(dep_q))]
        self.central: dict[str, str] = {}  # element -> why it is differenced

    # ------------------------------------------------------------ kinematics
    def qdot(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``q' = T(q) v`` (the Python path: complex-safe)."""
        return self.mech.qdot_py(q, v)

    def displace(self, q: np.ndarray, dv: np.ndarray) -> np.ndarray:
        """``q ⊕ dv = q + T(q) dv``, Euler parameters divided by ``sqrt(p . p)``."""
        return self.mech.displace(q, dv, python=True)

    def constraints(self, q: np.ndarray, v: np.ndarray) -> tuple:
        """``(Phi, J, Phi_t, gamma)`` of all rows (the Python primitives: complex-safe)."""
        return self.mech.constraints_py(q, v, self.t)

    # ----------------------------------------------------------- projections
    def _schur(self, J: np.ndarray, r: np.ndarray) -> np.ndarray:
        """``M^{-1} J' (J M^{-1} J')^{-1} r``."""
        MJ = self.mech.Minv @ J.T
        return MJ @ np.linalg.solve(J @ MJ, r)

    def project_positions(self, q: np.ndarray, h: float = 0.0) -> np.ndarray:
        """``q`` on ``Phi = 0`` (independent holonomic rows), both parts converged."""
        rows = self.hol_rows
        if rows.size == 0:
            return q
        scale = self.mech.row_scale[rows]
        v0 = np.zeros(self.mech.nv)
        done = False
        for _ in range(self.max_iter):
            phi, J, _, _ = self.constraints(q, v0)
            phi, J = phi[rows], J[rows]
            err = np.abs(phi.real) / scale, np.abs(np.imag(phi)) / scale
            q = self.displace(q, -self._schur(J, phi))
            if done:  # the extra step: Newton squares a 1e-12 error (both parts)
                return q
            done = np.max(err[0]) <= self.tol and np.max(err[1]) <= self.tol * h
        raise StepError(f"linearize: mechanism '{self.mech.name}': the positions did not "
                        f"converge onto the constraints (residual {np.max(err[0]):.3g} real, "
                        f"{np.max(err[1]):.3g} imaginary, relative) after {self.max_iter} "
                        "Newton iterations")

    def project_velocities(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``v`` on ``J v + Phi_t = 0`` with the least mass-weighted change."""
        if self.rows.size == 0:
            return v
        _, J, phit, _ = self.constraints(q, v)
        J, phit = J[self.rows], phit[self.rows]
        return v - self._schur(J, J @ v + phit)

    # --------------------------------------------------------------- forces
    def _element(self, e: Any, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The generalized force of element ``e`` alone."""
        Q = np.zeros(self.mech.nv, np.result_type(q, v, float))
        e._t = self.t
        e.apply(self.mech.lazy_kins(q, v), Q, None)
        return Q

    def _element_central(self, e: Any, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``Q_e(x) + i (Q_e(x + s y) - Q_e(x - s y)) / 2 s`` at ``(q, v) = x + i y``."""
        if not (np.iscomplexobj(q) or np.iscomplexobj(v)):
            return self._element(e, q, v)
        x = np.concatenate([q.real, v.real])
        y = np.concatenate([np.imag(q), np.imag(v)])
        nq = q.size
        Q = self._element(e, x[:nq], x[nq:]).astype(complex)
        big = np.max(np.abs(y), initial=0.0)
        if big > 0.0:
            s = FD_STEP / big
            Qp = self._element(e, x[:nq] + s * y[:nq], x[nq:] + s * y[nq:])
            Qm = self._element(e, x[:nq] - s * y[:nq], x[nq:] - s * y[nq:])
            Q += 1j * (Qp - Qm) / (2.0 * s)
        return Q

    def check_elements(self, q0: np.ndarray, v0: np.ndarray, dq: np.ndarray,
                       dv: np.ndarray) -> None:
        """Which force elements are analytic at ``(q0, v0)``: the complex step along
        ``(T dq, dv)`` against central differences (relative 1e-5); the others are
        differenced (:attr:`central`, with the reason)."""
        tq = self.qdot(q0, dq)
        h = 1e-20
        for name, e in self.mech.elements.items():
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error", ComplexWarning)
                    dc = self._element(e, q0 + 1j * h * tq, v0 + 1j * h * dv).imag / h
            except (TypeError, ComplexWarning) as exc:
                self.central[name] = f"{type(exc).__name__}: {exc}"
                continue
            Qp = self._element(e, q0 + FD_STEP * tq, v0 + FD_STEP * dv)
            Qm = self._element(e, q0 - FD_STEP * tq, v0 - FD_STEP * dv)
            fd = (Qp - Qm) / (2.0 * FD_STEP)
            size = np.max(np.abs(fd), initial=0.0) + np.max(np.abs(self._element(e, q0, v0)),
                                                           initial=0.0)
            miss = np.max(np.abs(dc - fd), initial=0.0)
            if miss > 1e-5 * size:
                self.central[name] = (f"its complex-step derivative is off central "
                                      f"differences by {miss:.3g}, their size {size:.3g}")

    def forces(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Generalized forces: gravity, gyroscopic terms, force elements, ``loads``."""
        mech = self.mech
        Q = mech.body_forces_py(v).astype(np.result_type(q, v, float))
        for name, e in mech.elements.items():
            Q += (self._element_central(e, q, v) if name in self.central
                  else self._element(e, q, v))
        if self.loads:
            kins = mech.lazy_kins(q, v)
            for name, value in self.loads.items():
                kind, m = mech.loads[name]
                if kind == "force":
                    _forces.apply_force(kins[m.body], m, value, Q)
                else:
                    _forces.apply_torque(kins[m.body], value, Q)
        return Q

    def accelerations(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``v̇`` of ``[M J'; J 0] [v̇; λ] = [Q; γ]`` on the independent rows."""
        mech = self.mech
        Q = self.forces(q, v)
        rows = self.rows
        if rows.size == 0:
            return np.linalg.solve(mech.M, Q)
        _, J, _, gamma = self.constraints(q, v)
        J, gamma = J[rows], gamma[rows]
        n, m = mech.nv, rows.size
        K = np.zeros((n + m, n + m), J.dtype)
        K[:n, :n] = mech.M
        K[:n, n:] = J.T
        K[n:, :n] = J
        return np.linalg.solve(K, np.concatenate([Q, gamma]))[:n]
