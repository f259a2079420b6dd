"""Redundant constraints: the rows an index-1 solve uses, and the reactions of the others.

A mechanism may hold more constraint rows than independent ones: an overconstrained loop
that moves although Grübler's count says it cannot (a parallelogram with a third crank,
the Sarrus linkage), or rows the user dropped (:meth:`Mechanism.drop_rows`, which zero
them).  ``[M J'; J 0]`` is then singular.  As mature multibody codes do, the index-1
solves (``lagrange``, ``projection``, ``partitioning``, the staggered integrator) use a
set ``A`` of independent rows:

* ``A`` is chosen by a rank-revealing QR with column pivoting of ``Jn'``, ``Jn`` the rows
  of ``J D^-1`` (:meth:`Mechanism._rank_metric`: dimensionless, the same in any units)
  scaled to unit length; a row whose remaining diagonal of ``R`` is below ``TOL`` is
  dependent (a zero row, i.e. a dropped one, always is).
* The constraint force ``f = J_A' λ_A`` does not depend on the choice of ``A``; the
  reactions of **all** rows are the minimum-norm solution of ``J' λ = f`` in the
  force-scaled norm ``|S λ|``, ``S = diag(row_scale / L)`` (point rows in N, angle rows
  as torque / L, distance rows as ``2 l λ``): no part along a self-stress of the loop, so
  identical redundant cranks under the same load share it equally::

      λ = S^-1 (J' S^-1)^+ f

  the penalty formulations give the same rule (their ``λ`` minimizes ``Σ λ_r² / a_r``
  with ``a_r ∝ (L / row_scale_r)²``).
* ``A`` is kept while it stays valid — the QR of ``Jn`` with the rows of ``A`` first has
  no ``A`` diagonal below ``1e3 TOL`` of its largest, and every other row stays within
  ``1e3 TOL`` of their span (a margin over the selection's ``TOL``, so that rounding does
  not flip the set) — and chosen afresh otherwise (the rank changed: a singular
  position, or an assembly whose dependence was only instantaneous).
* At assembly :func:`persistent` tells redundant rows from rows dependent only at the
  start (a singular start, which the monitors then stop).

Limitation: a redundant row whose equation does not follow from the others' (redundant
constraints that disagree, a geometry that cannot move) is not enforced by the index-1
solve; the drift monitors (:class:`MultibodyBlock`, ``staggered_integrate``) then stop
the run naming the row.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
from scipy.linalg import lapack

from cosim.errors import BuildError

TOL = 1e-9


def unit_rows(J: np.ndarray, metric: np.ndarray) -> np.ndarray:
    """The rows of ``J D^-1`` (``metric = D^-2``, diagonal) scaled to unit length (zero
    rows stay zero)."""
    Jn = J * np.sqrt(np.diagonal(metric))
    n = np.sqrt(np.einsum("ij,ij->i", Jn, Jn))
    return Jn / np.where(n > 0, n, 1.0)[:, None]


def independent_rows(Jn: np.ndarray, tol: float = TOL) -> tuple[np.ndarray, np.ndarray]:
    """``(A, D)``: sorted indices of independent rows of ``Jn`` (unit rows) and of the
    rows that depend on them, by QR with column pivoting of ``Jn'``."""
    m = Jn.shape[0]
    if m == 0:
        return np.zeros(0, int), np.zeros(0, int)
    _, R, piv = sla.qr(Jn.T, pivoting=True, mode="economic")
    d = np.abs(np.diag(R))
    r = int(np.sum(d > tol))
    return np.sort(piv[:r]), np.sort(piv[r:])


def still_independent(Jn: np.ndarray, A: np.ndarray, D: np.ndarray,
                      tol: float = TOL) -> bool:
    """Whether ``A`` is still a well-conditioned basis of the rows of ``Jn`` (module
    docstring): QR of ``[Jn_A; Jn_D]'`` without pivoting."""
    if A.size == 0:
        return not np.any(Jn[D])
    qr, _, _, _ = lapack.dgeqrf(Jn[np.concatenate([A, D])].T)
    R = np.triu(qr[:min(qr.shape)])
    dA = np.abs(np.diag(R)[:A.size])
    if dA.min() <= 1e3 * tol * max(dA.max(), 1.0):
        return False
    if D.size == 0:
        return True
    rest = R[A.size:, A.size:]  # the parts of the D rows outside the span of the A rows
    return bool(np.all(np.linalg.norm(rest, axis=0) <= tol * 1e3)) if rest.size else True


def min_norm_reactions(J: np.ndarray, f: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``λ`` of least ``|diag(scale) λ|`` with ``J' λ = f`` (module docstring); exactly 0
    on zero rows (dropped ones)."""
    lam = np.zeros(J.shape[0])
    live = np.flatnonzero(np.any(J != 0.0, axis=1))
    if live.size:
        s = scale[live]
        lam[live] = np.linalg.lstsq(J[live].T / s[None, :], f, rcond=1e-10)[0] / s
    return lam


class RowSet:
    """Which constraint rows the index-1 solves use (module docstring): all of them until
    a solve finds ``J`` rank deficient or :meth:`select` is called (at assembly), then the
    independent set ``A``, kept while valid.

    ``metric``: ``Mechanism.rank_metric``; ``scale``: ``row_scale / length_scale`` (the
    norm of the reactions)."""

    def __init__(self, metric: np.ndarray, scale: np.ndarray) -> None:
        self.metric, self.scale = metric, scale
        self.A: np.ndarray | None = None  # None: every row
        self.D = np.zeros(0, int)
        self.selections = 0  # how many times a set was chosen (diagnostics)

    @property
    def reduced(self) -> bool:
        return self.A is not None

    def select(self, J: np.ndarray) -> bool:
        """Choose the rows afresh at this ``J``; True when some rows depend on others."""
        self.selections += 1
        A, D = independent_rows(unit_rows(J, self.metric))
        self.A, self.D = (A, D) if D.size else (None, D)
        return self.reduced

    def update(self, J: np.ndarray) -> np.ndarray | None:
        """The rows to use at this ``J`` (None: all), chosen afresh when the kept set is
        no longer valid."""
        if self.A is not None and not still_independent(unit_rows(J, self.metric),
                                                        self.A, self.D):
            self.select(J)
        return self.A

    def reactions(self, J: np.ndarray, lam_A: np.ndarray) -> np.ndarray:
        """``λ`` of every row from the multipliers of the rows in use."""
        if self.A is None:
            return lam_A
        return min_norm_reactions(J, J[self.A].T @ lam_A, self.scale)

    def labels(self, row_labels: list[str]) -> list[str]:
        """The labels of the dependent rows in use."""
        return [row_labels[i] for i in self.D] if self.A is not None else []


def persistent(mech: Any, q: np.ndarray, t: float, D: np.ndarray,
               step: float = 1e-2) -> list[int]:
    """The rows of ``D`` (dependent at ``q``) that stay dependent when the mechanism moves:
    redundant rows (a parallelogram's third crank), where the others are dependent only
    here (a singular position: two rods in line, a parallelogram with its cranks along
    the coupler).  Probe: a step of ``step`` (relative to the mechanism's length) either
    way along each direction the holonomic rows leave free at ``q``, back onto
    ``Phi = 0`` (:meth:`project_positions`); at each probe that moved (by more than a
    tenth of the step: it reached the motion through ``q``) the dependent rows are found
    by the same rank-revealing QR (:func:`independent_rows`), and the probe with the
    most gives the redundant rows (those of ``D`` when it finds as many).  When no probe
    moves the mechanism cannot move from ``q`` although ``J`` allows it to first order
    (two rods in line): every row of ``D`` is dependent only here.  Zero (dropped) and
    nonholonomic rows of ``D``, and a mechanism without a free direction (a rigid
    structure), count as redundant."""
    hol = mech.holonomic
    _, J, _, _ = mech.constraints(q, np.zeros(mech.nv), t)
    fixed = [int(d) for d in D if not hol[d] or not np.any(J[d] != 0.0)]
    if len(fixed) == D.size:
        return [int(d) for d in D]
    w = np.sqrt(np.diagonal(mech.rank_metric))
    N = sla.null_space(unit_rows(J[hol], mech.rank_metric), rcond=1e-9)
    if N.shape[1] == 0:
        return [int(d) for d in D]
    def probe(n: np.ndarray) -> tuple[float, np.ndarray | None]:
        """How far a step along ``n`` moved once back on ``Phi = 0``, and the rows
        dependent there (None: the projection failed)."""
        try:  # Newton from near a singular position: slow at first, 60 steps
            qk, _ = mech.project_positions(mech.displace(q, step * mech.length_scale * w * n),
                                           t, tol=1e-12, max_iter=60)
        except BuildError:
            return 0.0, None
        moved = np.linalg.norm((qk - q)[:mech.nq]) / mech.length_scale
        Jk = mech.constraints(qk, np.zeros(mech.nv), t)[1]
        return moved, independent_rows(unit_rows(Jk, mech.rank_metric), 1e-7)[1]

    best = None
    for n in N.T:
        for sign in (1.0, -1.0):
            moved, dep = probe(sign * n)
            if dep is not None and moved >= 0.1 * step and (best is None or
                                                              dep.size > best.size):
                best = dep
    if best is None and N.shape[1] >= 2:
        # at a singular position the motion through q may lie between the basis vectors
        # of the free directions (a narrow cone: the SVD's basis of a degenerate null
        # space is arbitrary), so search the plane of each pair of them
        best = _plane_search(probe, N, step)
    if best is None:
        return fixed
    if best.size >= D.size:
        return [int(d) for d in D]
    return sorted(set(int(d) for d in best) | set(fixed))


def _plane_search(probe: Any, N: np.ndarray, step: float) -> np.ndarray | None:
    """The dependent rows where a probe in the plane of two free directions moves the
    mechanism (by a tenth of the step); ``None`` when none does.  Angles every 10 degrees,
    then the best refined by halving (5, 2.5, ... degrees): deterministic."""
    k = N.shape[1]
    for i in range(k):
        for j in range(i + 1, k):
            def at(deg: float, i: int = i, j: int = j) -> tuple[float, Any]:
                th = np.radians(deg)
                return probe(np.cos(th) * N[:, i] + np.sin(th) * N[:, j])
            grid = [(at(d)[0], d) for d in range(0, 360, 10)]
            moved, deg = max(grid)
            width = 5.0
            while width >= 0.3 and moved < 0.1 * step:
                for d in (deg - width, deg + width):
                    m_d = at(d)[0]
                    if m_d > moved:
                        moved, deg = m_d, d
                width /= 2
            got, dep = at(deg)
            if dep is not None and got >= 0.1 * step:
                return dep
    return None
