"""Rank, assembly and constraint corrections of a mechanism: an object the mechanism
holds (:class:`Corrections`, ``mech.corrections``, made when it is finalized), using it
only through :class:`CorrectionsHost` (its name, its constraints and its displacement);
the finalized layout it works on (sizes, mass matrix, row scales, the rank metric, the
row set, the compiled tables) is given at construction.  ``Mechanism`` keeps the public
methods, which call these.  (:func:`.redundancy.persistent` is given the mechanism, and
uses its public methods.)  A test reads this module for any other host name
(``tests/unit/test_held_objects.py``).

* :meth:`Corrections.rank`, :meth:`~Corrections.rank_measure`,
  :meth:`~Corrections.weak_rows`: the rank of the constraint Jacobian ``J`` (QR with
  pivoting), a cheap measure of how close it is to losing rank (banded Cholesky of
  ``J J'``, :mod:`.sparse`) and the rows that take part in a near dependence;
* :meth:`~Corrections.project_positions`, :meth:`~Corrections.project_velocities`:
  least mass-weighted changes onto ``Phi = 0`` and ``J v + Phi_t = 0`` (Newton with
  ``(J M^-1 J') mu = Phi``; banded when compiled, least squares otherwise);
* :meth:`~Corrections.correct_partitioned`: coordinate partitioning (dependent
  coordinates by Newton with the independent ones held, sparse LU);
* :meth:`~Corrections.assemble`: consistent initial conditions and the assembly report.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import scipy.linalg as sla

from cosim.errors import BuildError

from .redundancy import independent_rows, persistent, unit_rows


class CorrectionsHost(Protocol):
    """What :class:`Corrections` may use of its :class:`~.mechanism.Mechanism`."""

    #: the mechanism's name (for messages)
    name: str

    def constraints(self, q: np.ndarray, v: np.ndarray, t: float) -> tuple:
        """``(Phi, J, Phi_t, gamma)`` at ``(q, v, t)``."""

    def displace(self, q: np.ndarray, dv: np.ndarray) -> np.ndarray:
        """``q`` moved by the velocity-space displacement ``dv``."""


class Corrections:
    """Rank, projections, partitioning and assembly of a finalized mechanism (module
    docstring).

    Parameters
    ----------
    host : CorrectionsHost
        The mechanism.
    nv, m : int
        Velocity variables and constraint rows.
    Minv : ndarray
        The inverse mass matrix.
    holonomic, dropped : ndarray of bool
        Per row: holonomic; dropped (``drop_rows``).
    row_scale : ndarray
        Per row, the size of a unit violation.
    rank_metric : ndarray
        ``W = D^-2`` of the rank measure.
    row_labels : list of str
        ``"joint.row"`` per row.
    rows : RowSet
        The independent rows the index-1 solves use (:mod:`.redundancy`).
    q0, v0 : ndarray
        The initial positions and velocities as given.
    tables : Tables or None
        The compiled kernel (:mod:`.fast`), or None on the Python path.
    """

    def __init__(self, host: CorrectionsHost, *, nv: int, m: int, Minv: np.ndarray,
                 holonomic: np.ndarray, dropped: np.ndarray, row_scale: np.ndarray,
                 rank_metric: np.ndarray, row_labels: list, rows: Any, q0: np.ndarray,
                 v0: np.ndarray, tables: Any) -> None:
        self._host = host
        self.nv, self.m, self.Minv = nv, m, Minv
        self.holonomic, self.dropped = holonomic, dropped
        self.row_scale, self.rank_metric = row_scale, rank_metric
        self.row_labels, self.rows = row_labels, rows
        self.q0, self.v0 = q0, v0
        self._tables = tables

    def rank_measure(self, q: np.ndarray, t: float, eps: float = 1e-10) -> tuple:
        """``(rho, dependent, Phi)`` at ``q``: ``rho`` in (0, 1] the squared sine of the
        smallest angle between a constraint row and the earlier ones (rows of ``J D^-1``,
        the angular columns divided by a body length: ``Mechanism._rank_metric``; 1:
        orthogonal rows, -> 0 at a singular configuration; the same in any units),
        ``dependent`` the rows within ``eps`` of dependence
        (redundant, or exactly singular); :func:`.sparse.rank_measure`."""
        if self._tables is not None:
            return self._tables.rank_measure(q, t, eps)
        from .sparse import rank_measure_dense
        phi, J, _, _ = self._host.constraints(q, np.zeros(self.nv), t)
        rho, dep = rank_measure_dense(J, self.rank_metric, eps)
        return rho, dep, phi

    def rank(self, q: np.ndarray, t: float, tol: float = 1e-9) -> tuple[int, list[str]]:
        """Rank of ``J`` and the rows that depend on the others (dropped rows included):
        QR with column pivoting of the unit rows of ``J D^-1`` (:mod:`.redundancy`, the
        same in any units)."""
        _, J, _, _ = self._host.constraints(q, np.zeros(self.nv), t)
        if J.shape[0] == 0:
            return 0, []
        A, D = independent_rows(unit_rows(J, self.rank_metric), tol)
        return int(A.size), [self.row_labels[i] for i in D]

    def weak_rows(self, q: np.ndarray, t: float, rho: float, skip: int = 0) -> list[str]:
        """The constraint rows (of ``J D^-1``, as :meth:`rank_measure` sees them, scaled to
        unit length) taking part in a near dependence: those with a weight above 0.1 in a
        left singular vector whose singular value is at most ``sqrt(rho)`` (at least the
        smallest one), leaving out the ``skip`` zero singular values of rows that depend on
        the others by construction (redundant or dropped)."""
        _, J, _, _ = self._host.constraints(q, np.zeros(self.nv), t)
        if J.shape[0] == 0:
            return []
        Jn = unit_rows(J, self.rank_metric)
        U, sv, _ = np.linalg.svd(Jn, full_matrices=True)
        sv = np.concatenate([sv, np.zeros(J.shape[0] - sv.size)])
        k_end = sv.size - skip
        weak = [k for k in range(k_end) if sv[k] <= np.sqrt(rho)] or \
            ([int(np.argmin(sv[:k_end]))] if k_end > 0 else [])
        rows = sorted({r for k in weak for r in np.flatnonzero(np.abs(U[:, k]) > 0.1)})
        return [self.row_labels[r] for r in rows]

    def project_positions(self, q: np.ndarray, t: float, tol: float = 1e-12,
                          max_iter: int = 30) -> tuple[np.ndarray, int]:
        """Newton projection onto ``Phi = 0``, least mass-weighted change; ``(q, iterations)``.
        Converged when every ``|Phi_r| / row_scale_r`` is at most ``tol`` (relative to the
        mechanism's length for a length row: the same in any units).

        Compiled banded Schur complement (:mod:`.sparse`) when available and every row is
        holonomic; least squares (``lstsq``, also near singular configurations) otherwise
        and whenever the banded factorization finds ``J M^-1 J'`` singular.
        """
        Minv = self.Minv
        hol = self.holonomic
        t_ = self._tables
        banded = t_ is not None and bool(hol.all()) and not self.rows.reduced
        scale = self.row_scale[hol]
        for it in range(max_iter + 1):
            if banded:
                phi, Jc, _, _ = t_.constraints_compact(q, np.zeros(self.nv), t)
            else:
                phi, J, _, _ = self._host.constraints(q, np.zeros(self.nv), t)
                phi, J = phi[hol], J[hol]
            if phi.size == 0 or np.max(np.abs(phi) / scale) <= tol:
                return q, it
            if it == max_iter:
                break
            if banded:
                dx, ok = t_.correction(Minv, Jc, phi)
                if ok:
                    q = self._host.displace(q, -dx)
                    continue
                J = t_.dense(Jc)
            JMJ = J @ Minv @ J.T
            mu = np.linalg.lstsq(JMJ, phi, rcond=1e-12)[0]
            q = self._host.displace(q, -Minv @ J.T @ mu)
        raise BuildError(f"mechanism '{self._host.name}': the constraints cannot be satisfied "
                         f"near the given positions at t = {t:.9g} s (residual "
                         f"{np.max(np.abs(phi)):.3g} after {max_iter} Newton iterations; largest "
                         f"in {np.array(self.row_labels)[hol][int(np.argmax(np.abs(phi)))]}): "
                         "conflicting "
                         "constraints or initial positions far from an assembled configuration")

    def project_velocities(self, q: np.ndarray, v: np.ndarray, t: float) -> np.ndarray:
        """``v`` corrected to ``J v + Phi_t = 0`` with the least mass-weighted change."""
        if not self.m:
            return v
        Minv = self.Minv
        t_ = self._tables
        if t_ is not None:
            _, Jc, phit, _ = t_.constraints_compact(q, v, t)
            dx, ok = t_.correction(Minv, Jc, t_.jmul(Jc, v) + phit)
            if ok:
                return v - dx
            J = t_.dense(Jc)
        else:
            _, J, phit, _ = self._host.constraints(q, v, t)
        res = J @ v + phit
        mu = np.linalg.lstsq(J @ Minv @ J.T, res, rcond=1e-12)[0]
        return v - Minv @ J.T @ mu

    def _partition_jacobian(self, q: np.ndarray, v: np.ndarray, t: float) -> tuple:
        """``(Phi, J, Phi_t)`` for partitioning: ``J`` a CSC matrix (from the compact
        Jacobian when compiled) above 60 velocity variables, a dense array below (where
        the sparse machinery costs more than it saves)."""
        t_ = self._tables
        if self.nv <= 60:
            phi, J, phit, _ = self._host.constraints(q, v, t)
            return phi, J, phit
        from scipy.sparse import csc_matrix
        if t_ is not None:
            phi, Jc, phit, _ = t_.constraints_compact(q, v, t)
            rows = np.broadcast_to(np.arange(self.m)[:, None], (self.m, 12))[t_.jmask]
            return phi, csc_matrix((Jc[t_.jmask], (rows, t_.jcol[:, :12][t_.jmask])),
                                   shape=(self.m, self.nv)), phit
        phi, J, phit, _ = self._host.constraints(q, v, t)
        return phi, csc_matrix(J), phit

    def correct_partitioned(self, q: np.ndarray, v: np.ndarray, t: float, tol: float = 1e-12,
                            max_iter: int = 30, dep: Any = None,
                            with_partition: bool = False) -> tuple:
        """Coordinate partitioning: with the independent coordinates held, Newton on the
        dependent ones for ``Phi = 0``, then ``J_d v_d = -(J_i v_i + Phi_t)``.

        ``dep``: the dependent variables of the previous correction, kept while the LU
        pivots of their square block ``J_d`` stay within 1e-3 of each other; otherwise (and
        without ``dep``) they are chosen afresh by QR with column pivoting, so the
        partition changes before a pivot of ``J_d`` approaches zero, as the seed asks.
        ``J_d`` is factorized once (LU: SuperLU above 60 variables, LAPACK below) and
        reused by the Newton iterations (a modified Newton).  Returns ``(q, v)``, or
        ``(q, v, dep)`` with ``with_partition``.
        """
        hol = self.holonomic
        allhol = bool(hol.all())
        _, Js, _ = self._partition_jacobian(q, v, t)
        Jh = Js[np.flatnonzero(hol)] if not allhol else Js
        lu = None
        if dep is not None and len(dep) == Jh.shape[0]:
            dep = np.asarray(dep, dtype=int)
            lu = _square_solver(Jh[:, dep])
        if lu is None:
            dep = partition(_dense(Jh))
            lu = _square_solver(Jh[:, dep], keep_tol=0.0)
        Jd_dense = None if lu is not None else _dense(Jh[:, dep])
        for _ in range(max_iter):
            phi, Js, _ = self._partition_jacobian(q, np.zeros(self.nv), t)
            phi = phi[hol]
            if phi.size == 0 or np.max(np.abs(phi)) <= tol:
                break
            step = np.zeros(self.nv)
            step[dep] = -(lu.solve(phi) if lu is not None else
                          np.linalg.lstsq(Jd_dense, phi, rcond=None)[0])
            q = self._host.displace(q, step)
        else:
            raise BuildError(f"mechanism '{self._host.name}': coordinate partitioning did not "
                             f"close the constraints at t = {t:.9g} s (residual "
                             f"{np.max(np.abs(phi)):.3g}); reduce the step")
        _, Js, phit = self._partition_jacobian(q, v, t)
        depv = dep
        lu_v = _square_solver(Js[:, depv], keep_tol=0.0) if allhol else None
        if lu_v is None:
            depv = partition(_dense(Js))
        ind = np.setdiff1d(np.arange(self.nv), depv)
        v = v.copy()
        rhs = Js[:, ind] @ v[ind] + phit
        v[depv] = -(lu_v.solve(rhs) if lu_v is not None else
                    np.linalg.lstsq(_dense(Js[:, depv]), rhs, rcond=None)[0])
        return (q, v, dep) if with_partition else (q, v)

    def assemble(self, t: float = 0.0, strict: bool = False, tol: float = 1e-9) -> tuple:
        """Consistent initial positions and velocities: ``(report, q, v)``.

        With ``strict`` an initial state that violates the constraints by more
        than ``tol`` is refused (naming the worst constraint) instead of corrected.
        """
        q0, v0 = self.q0.copy(), self.v0.copy()
        phi, J, phit, _ = self._host.constraints(q0, v0, t)
        pos_res = float(np.max(np.abs(phi), initial=0.0))
        vel_res = float(np.max(np.abs(J @ v0 + phit), initial=0.0))
        if strict and max(pos_res, vel_res) > tol:
            worst = self.row_labels[int(np.argmax(np.abs(phi)))] if pos_res > tol else \
                self.row_labels[int(np.argmax(np.abs(J @ v0 + phit)))]
            raise BuildError(f"mechanism '{self._host.name}': inconsistent initial conditions "
                             f"(position residual {pos_res:.3g}, velocity residual "
                             f"{vel_res:.3g}, worst '{worst}'); fix the positions/velocities "
                             "or let assemble() correct them (strict=False)")
        q, iters = self.project_positions(q0, t)
        v = self.project_velocities(q, v0, t)
        rank, dependent = self.rank(q, t)
        dropped = [lab for lab, d in zip(self.row_labels, self.dropped) if d]
        redundant = [lab for lab in dependent if lab not in dropped]
        singular: list[str] = []
        if self.m:  # the rows the index-1 solves use from here (:mod:`.redundancy`)
            self.rows.select(self._host.constraints(q, v, t)[1])
        if redundant:  # redundant, or dependent only at this position (a singular start)?
            D = self.rows.D  # the rank-revealing QR of rank(), at the same J
            keep = persistent(self._host, q, t, D)
            redundant = [self.row_labels[d] for d in keep if not self.dropped[d]]
            singular = [self.row_labels[d] for d in D
                        if d not in keep][:len(D) - len(keep)]
        report = {"position_residual": pos_res, "velocity_residual": vel_res,
                  "position_change": float(np.max(np.abs(q - q0), initial=0.0)),
                  "velocity_change": float(np.max(np.abs(v - v0), initial=0.0)),
                  "newton_iterations": iters, "constraints": self.m, "rank": rank,
                  "redundant": redundant, "dropped": dropped, "singular": singular,
                  "dof": self.nv - rank - len(singular)}
        return report, q, v


def partition(J: np.ndarray) -> np.ndarray:
    """Dependent velocity variables for ``J``: the best-conditioned square block (QR with
    column pivoting), one per independent row."""
    if J.shape[0] == 0:
        return np.zeros(0, dtype=int)
    R, piv = sla.qr(J, pivoting=True, mode="r")
    d = np.abs(np.diag(R))
    r = int(np.sum(d > 1e-9 * max(1.0, d[0])))
    return np.sort(piv[:r])


def _square_solver(Jd: Any, keep_tol: float = 1e-3):
    """A solver (``.solve(b)``) for the square block ``Jd`` (sparse: SuperLU; dense:
    LAPACK LU), or None when it is not square, singular, or its LU pivots are not
    within ``keep_tol`` of each other (then a new partition is chosen)."""
    if Jd.shape[0] != Jd.shape[1] or Jd.shape[0] == 0:
        return None
    if isinstance(Jd, np.ndarray):
        lu, piv = sla.lu_factor(Jd, check_finite=False)
        d = np.abs(np.diag(lu))
        if not d.min() > max(keep_tol, 1e-14) * d.max():
            return None
        return _DenseLU(lu, piv)
    from scipy.sparse.linalg import splu
    try:
        lu = splu(Jd.tocsc())
    except RuntimeError:  # exactly singular
        return None
    d = np.abs(lu.U.diagonal())
    return lu if d.min() >= keep_tol * d.max() else None


class _DenseLU:
    def __init__(self, lu: np.ndarray, piv: np.ndarray) -> None:
        self.lu, self.piv = lu, piv

    def solve(self, b: np.ndarray) -> np.ndarray:
        return sla.lu_solve((self.lu, self.piv), b, check_finite=False)


def _dense(J: Any) -> np.ndarray:
    return J if isinstance(J, np.ndarray) else J.toarray()
