r"""Banded linear algebra for the constrained equations (compiled with Numba).

The Jacobian ``J`` of a mechanism in absolute coordinates is block-sparse: a constraint
row touches at most two bodies, at most 12 velocity variables.  The compiled kernel
(:mod:`.fast`) stores it *compact*, ``Jc (m, 12)`` (columns 0-5: the row's body i, 6-11:
body j; unused entries stay 0) with the map ``jcol (m, 25)``: ``jcol[r, k]`` the velocity
variable of entry k (0 if unused), ``jcol[r, 12]`` the number of used entries and
``jcol[r, 13:13 + n]`` their positions.
The matrices the formulations factorize inherit the sparsity:

* ``A = M + J' W J`` (``W`` diagonal; penalty, augmented Lagrangian, the index-3 Newton
  and projection matrices), ``nv x nv``, couples two velocity variables when they share a
  body or a constraint row;
* ``S = J M^-1 J'`` (the Lagrange Schur complement; ``M`` block diagonal), ``m x m``,
  couples two rows when they share a body.

:class:`Banding` orders the bodies by reverse Cuthill-McKee on the body graph (bodies
joined by a constraint) and the rows by their first body in that order; in these orders
both matrices are banded, with half bandwidths ``kd_v`` and ``kd_r`` (a chain of bodies:
one or two bodies' worth of variables, whatever its length).  They are assembled directly
in LAPACK's lower band storage (``ab[i - j, j] = A[i, j]``, ``j <= i <= j + kd``) and
factorized by a banded Cholesky, ``n kd^2`` operations instead of ``n^3/3``; a mechanism
whose graph has no narrow ordering (``kd`` close to ``n``) gets the dense cost, never a
wrong result.

The Cholesky returns ``rho = min_j (L_jj^2 / A_jj)``: the squared sine of the smallest
angle between a row (column) of the factorized matrix and the span of the earlier ones.
It is 1 for orthogonal rows and tends to 0 as the matrix loses rank: for ``S = J J'`` it is
the library's measure of a singular configuration.
"""

from __future__ import annotations

import numpy as np

from ._numba import _njit


class Banding:
    """Orderings and bandwidths for a mechanism's compiled tables (see module docstring).

    Attributes: ``vperm`` (new position of each velocity variable), ``kd_v``; ``rperm``
    (new position of each constraint row), ``kd_r``; ``body_rows`` in CSR form
    (``brow_ptr``, ``brow_idx``: the rows touching each body; ``brow_slot``: in which slot).
    """

    def __init__(self, kind: np.ndarray, iv: np.ndarray, ncol: np.ndarray,
                 rbody: np.ndarray, jcol: np.ndarray, jmask: np.ndarray) -> None:
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import reverse_cuthill_mckee
        nb, m = kind.shape[0], rbody.shape[0]
        nv = int(np.sum(ncol))
        moving = ncol > 0
        pairs = [(a, b) for a, b in rbody if moving[a] and moving[b]]
        if pairs:
            a, b = np.array(pairs).T
            G = coo_matrix((np.ones(2 * len(a)), (np.r_[a, b], np.r_[b, a])), shape=(nb, nb))
            order = list(reverse_cuthill_mckee(G.tocsr(), symmetric_mode=True))
        else:
            order = list(range(nb))
        order = [b for b in order if moving[b]]
        pos = np.full(nb, -1, dtype=np.int64)
        for k, b in enumerate(order):
            pos[b] = k
        vperm = np.empty(nv, dtype=np.int64)
        p = 0
        for b in order:
            for k in range(ncol[b]):
                vperm[iv[b] + k] = p
                p += 1
        self.vperm, self.body_order = vperm, np.array(order, dtype=np.int64)
        kd = 0
        for b in order:  # the mass matrix blocks
            kd = max(kd, int(ncol[b]) - 1)
        for r in range(m):
            cols = vperm[jcol[r, :12][jmask[r]]]
            if cols.size:
                kd = max(kd, int(cols.max() - cols.min()))
        self.kd_v = kd
        # rows: by the first (moving) body in the body order, stable
        key = np.array([min([pos[b] for b in rbody[r] if moving[b]] or [nb]) for r in range(m)])
        rorder = np.argsort(key, kind="stable")
        rperm = np.empty(m, dtype=np.int64)
        rperm[rorder] = np.arange(m)
        self.rperm = rperm
        rows_of = [[] for _ in range(nb)]
        for r in range(m):
            for slot in (0, 1):
                b = rbody[r, slot]
                if moving[b]:
                    rows_of[b].append((r, slot))
        ptr, idx, slots = [0], [], []
        kd_r = 0
        for b in range(nb):
            for r, s in rows_of[b]:
                idx.append(r)
                slots.append(s)
            ptr.append(len(idx))
            if rows_of[b]:
                ps = [rperm[r] for r, _ in rows_of[b]]
                kd_r = max(kd_r, max(ps) - min(ps))
        self.kd_r = kd_r
        self.brow_ptr = np.array(ptr, dtype=np.int64)
        self.brow_idx = np.array(idx, dtype=np.int64)
        self.brow_slot = np.array(slots, dtype=np.int64)

    def __repr__(self) -> str:
        return (f"Banding(nv={self.vperm.size}, kd_v={self.kd_v}, m={self.rperm.size}, "
                f"kd_r={self.kd_r})")


# ------------------------------------------------------------------ band kernels
@_njit
def band_cholesky(ab, kd):
    """In-place lower banded Cholesky; returns ``(ok, rho)`` (module docstring)."""
    n = ab.shape[1]
    rho = 1.0
    for j in range(n):
        d = ab[0, j]
        s = d
        for k in range(max(0, j - kd), j):
            s -= ab[j - k, k] * ab[j - k, k]
        if not (s > 0.0) or not (d > 0.0):
            return False, 0.0
        if s / d < rho:
            rho = s / d
        ljj = np.sqrt(s)
        ab[0, j] = ljj
        for i in range(j + 1, min(n, j + kd + 1)):
            s2 = ab[i - j, j]
            for k in range(max(0, i - kd), j):
                s2 -= ab[i - k, k] * ab[j - k, k]
            ab[i - j, j] = s2 / ljj
    return True, rho


@_njit
def band_solve(ab, kd, b):
    """Solve ``L L' x = b`` with the factor of :func:`band_cholesky` (``b`` not modified)."""
    n = ab.shape[1]
    y = b.copy()
    for i in range(n):
        s = y[i]
        for k in range(max(0, i - kd), i):
            s -= ab[i - k, k] * y[k]
        y[i] = s / ab[0, i]
    for i in range(n - 1, -1, -1):
        s = y[i]
        for k in range(i + 1, min(n, i + kd + 1)):
            s -= ab[k - i, i] * y[k]
        y[i] = s / ab[0, i]
    return y


@_njit
def jmul(Jc, jcol, x):
    """``J x`` for the compact Jacobian (``jcol``: the column map; its last column holds
    the number of used entries of the row, which come first: see ``Tables.jcol``)."""
    m = Jc.shape[0]
    y = np.zeros(m)
    for r in range(m):
        s = 0.0
        for k in range(jcol[r, 12]):
            s += Jc[r, jcol[r, 13 + k]] * x[jcol[r, jcol[r, 13 + k]]]
        y[r] = s
    return y


@_njit
def jtmul(Jc, jcol, y, nv):
    """``J' y`` for the compact Jacobian."""
    x = np.zeros(nv)
    for r in range(Jc.shape[0]):
        yr = y[r]
        if yr != 0.0:
            for kk in range(jcol[r, 12]):
                k = jcol[r, 13 + kk]
                x[jcol[r, k]] += Jc[r, k] * yr
    return x


@_njit
def jabs(Jc, jcol, x, c):
    """``max_r (|J| |x| + |c|)_r``: the size of the terms of ``J x + c``."""
    out = 0.0
    for r in range(Jc.shape[0]):
        s = abs(c[r])
        for kk in range(jcol[r, 12]):
            k = jcol[r, 13 + kk]
            s += abs(Jc[r, k] * x[jcol[r, k]])
        if s > out:
            out = s
    return out


@_njit
def assemble_jtwj(M, Jc, jcol, w, vperm, kd, iv, ncol):
    """``M + J' diag(w) J`` in lower band storage (permuted by ``vperm``)."""
    nv = M.shape[0]
    ab = np.zeros((kd + 1, nv))
    for b in range(iv.shape[0]):
        o = iv[b]
        for k in range(ncol[b]):
            pk = vperm[o + k]
            for l in range(ncol[b]):
                pl = vperm[o + l]
                if pk >= pl:
                    ab[pk - pl, pl] += M[o + k, o + l]
    for r in range(Jc.shape[0]):
        wr = w[r]
        if wr == 0.0:
            continue
        n = jcol[r, 12]
        for kk in range(n):
            k = jcol[r, 13 + kk]
            jk = wr * Jc[r, k]
            pk = vperm[jcol[r, k]]
            for ll in range(n):
                ll_ = jcol[r, 13 + ll]
                pl = vperm[jcol[r, ll_]]
                if pk >= pl:
                    ab[pk - pl, pl] += jk * Jc[r, ll_]
    return ab


@_njit
def add_body_blocks(ab, Cb, iv, ncol, vperm, scale):
    """``ab += scale * blockdiag(Cb)`` (``Cb`` dense ``nv x nv``, only body blocks read)."""
    for b in range(iv.shape[0]):
        o = iv[b]
        for k in range(ncol[b]):
            pk = vperm[o + k]
            for l in range(ncol[b]):
                pl = vperm[o + l]
                if pk >= pl:
                    ab[pk - pl, pl] += scale * Cb[o + k, o + l]


@_njit
def permute(x, perm):
    y = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        y[perm[i]] = x[i]
    return y


@_njit
def unpermute(y, perm):
    x = np.empty(y.shape[0])
    for i in range(y.shape[0]):
        x[i] = y[perm[i]]
    return x


@_njit
def spd_solve(ab, kd, perm, rhs):
    """Solve with a factor in permuted band form, ``rhs`` and result in natural order."""
    return unpermute(band_solve(ab, kd, permute(rhs, perm)), perm)


@_njit
def blockdiag_mul(Mb, x, iv, ncol):
    """``Mb x`` for a block-diagonal ``Mb`` (one block per body, e.g. ``M^-1``)."""
    y = np.zeros(x.shape[0])
    for b in range(iv.shape[0]):
        o = iv[b]
        for i in range(ncol[b]):
            s = 0.0
            for k in range(ncol[b]):
                s += Mb[o + i, o + k] * x[o + k]
            y[o + i] = s
    return y


@_njit
def assemble_schur(Minv, Jc, iv, ncol, rbody, brow_ptr, brow_idx, brow_slot, rperm, kd, m,
                   diag_w):
    """``S = J M^-1 J' (+ diag(diag_w))`` in lower band storage (permuted by ``rperm``)."""
    ab = np.zeros((kd + 1, m))
    y = np.empty(6)
    for b in range(iv.shape[0]):
        n = ncol[b]
        if n == 0:
            continue
        o = iv[b]
        for ia in range(brow_ptr[b], brow_ptr[b + 1]):
            r, sr = brow_idx[ia], brow_slot[ia]
            for i in range(n):
                s = 0.0
                for k in range(n):
                    s += Minv[o + i, o + k] * Jc[r, 6 * sr + k]
                y[i] = s
            pr = rperm[r]
            for ib in range(brow_ptr[b], brow_ptr[b + 1]):
                rs, ss = brow_idx[ib], brow_slot[ib]
                ps = rperm[rs]
                if pr >= ps:
                    val = 0.0
                    for k in range(n):
                        val += Jc[rs, 6 * ss + k] * y[k]
                    ab[pr - ps, ps] += val
    for r in range(m):
        ab[0, rperm[r]] += diag_w[r]
    return ab


@_njit
def schur_diagonal(ab, rperm):
    """``S_rr`` in natural row order, from ``S`` in permuted band storage (before its
    factorization overwrites it)."""
    m = rperm.shape[0]
    d = np.empty(m)
    for r in range(m):
        d[r] = ab[0, rperm[r]]
    return d


@_njit
def constraint_backward_error(Jc, jcol, x, rhs, Mx, sdiag):
    """Backward error of ``J x = rhs`` in mass-weighted units: rows scaled by
    ``1 / sqrt(S_rr)`` (unit rows of ``J M^-1/2``), ``x`` measured by ``sqrt(x' M x)``
    (``Mx``: ``M x``, to rounding)::

        max_r |rhs - J x|_r / sqrt(S_rr)  /  (sqrt(x' M x) + max_r |rhs_r| / sqrt(S_rr))

    It does not depend on the units of the coordinates or on the scaling of the rows."""
    r = rhs - jmul(Jc, jcol, x)
    num, den = 0.0, 0.0
    for i in range(r.shape[0]):
        w = 1.0 / np.sqrt(sdiag[i])
        num = max(num, abs(r[i]) * w)
        den = max(den, abs(rhs[i]) * w)
    e = 0.0
    for i in range(x.shape[0]):
        e += x[i] * Mx[i]
    den += np.sqrt(max(e, 0.0))
    if num == 0.0:
        return 0.0
    return num / den if den > 0.0 else np.inf


# refine when the constraint rows' backward error exceeds this many eps (a backward-stable
# solve of the KKT system leaves a few eps)
REFINE_ETA = 8.0 * np.finfo(np.float64).eps


@_njit
def schur_refinement(Minv, Jc, jcol, iv, ncol, ab, kd, rperm, x, rhs):
    """``(dx, dμ)``: one step of iterative refinement of ``J x = rhs`` for an ``x`` of the
    form ``x0 + M^-1 J' μ`` (``S = J M^-1 J'`` factorized in ``ab``): ``S dμ = rhs - J x``,
    ``dx = M^-1 J' dμ``.

    The Schur-complement route computes ``x`` as ``M^-1`` times a sum of forces.  With
    light bodies beside heavy ones (the seed-003 loop: inertias 1e-9 against 2 kg m^2,
    ``cond S = 1e10``) the constraint forces on the light bodies are large and cancel, and
    ``M^-1`` amplifies their rounding: ``J x`` misses ``rhs`` by 600-6000 eps
    (:func:`constraint_backward_error`; a well-conditioned chain: 1-6 eps), and the error
    reaches the heavy bodies (1e-8 m/s^2 of 4 m/s^2 on the loop's coupler), where the
    dense KKT factorization stays at a few eps.
    One refinement step with the same factor (Skeel 1980; Higham, *Accuracy and
    Stability*, ch. 12) brings it back to about 1 eps.  The callers refine only when the
    backward error exceeds ``REFINE_ETA`` (a well-conditioned mechanism pays one ``J x``)."""
    mu = spd_solve(ab, kd, rperm, rhs - jmul(Jc, jcol, x))
    return blockdiag_mul(Minv, jtmul(Jc, jcol, mu, x.shape[0]), iv, ncol), mu


@_njit
def lagrange_band(Minv, Q, Jc, jcol, rhs, iv, ncol, rbody, brow_ptr, brow_idx, brow_slot,
                  rperm, kd):
    """Lagrange by the banded Schur complement: ``(J M^-1 J') λ = J M^-1 Q - rhs``,
    ``v̇ = M^-1 (Q - J' λ)``, refined (:func:`schur_refinement`) when ``J v̇ = rhs`` is
    not met to ``REFINE_ETA``.  Returns ``(v̇, λ, ok, rho)``; ``ok`` False when ``S`` is
    not numerically positive definite (``rho <= 1e-12``: rank lost)."""
    nv, m = Q.shape[0], Jc.shape[0]
    MQ = blockdiag_mul(Minv, Q, iv, ncol)
    if m == 0:
        return MQ, np.zeros(0), True, 1.0
    ab = assemble_schur(Minv, Jc, iv, ncol, rbody, brow_ptr, brow_idx, brow_slot, rperm, kd,
                        m, np.zeros(m))
    sdiag = schur_diagonal(ab, rperm)
    ok, rho = band_cholesky(ab, kd)
    if not ok or rho <= 1e-12:
        return np.zeros(nv), np.zeros(m), False, rho
    bvec = jmul(Jc, jcol, MQ) - rhs
    lam = spd_solve(ab, kd, rperm, bvec)
    JtL = jtmul(Jc, jcol, lam, nv)
    vd = MQ - blockdiag_mul(Minv, JtL, iv, ncol)
    F = Q - JtL  # M v̇, for the size of v̇
    if constraint_backward_error(Jc, jcol, vd, rhs, F, sdiag) > REFINE_ETA:
        dvd, dlam = schur_refinement(Minv, Jc, jcol, iv, ncol, ab, kd, rperm, vd, rhs)
        vd, lam = vd + dvd, lam - dlam
    return vd, lam, True, rho


@_njit
def schur_correction(Minv, Jc, jcol, iv, ncol, rbody, brow_ptr, brow_idx, brow_slot, rperm,
                     kd, rhs):
    """``M^-1 J' μ`` with ``(J M^-1 J') μ = rhs``: the least ``M``-norm change ``x`` with
    ``J x = rhs`` (mass-weighted projections), refined as in :func:`lagrange_band`.
    Returns ``(x, ok)``; ``ok`` False when the Schur complement is singular to
    ``rho <= 1e-12``."""
    m, nv = Jc.shape[0], Minv.shape[0]
    ab = assemble_schur(Minv, Jc, iv, ncol, rbody, brow_ptr, brow_idx, brow_slot, rperm, kd,
                        m, np.zeros(m))
    sdiag = schur_diagonal(ab, rperm)
    ok, rho = band_cholesky(ab, kd)
    if not ok or rho <= 1e-12:
        return np.zeros(nv), False
    mu = spd_solve(ab, kd, rperm, rhs)
    F = jtmul(Jc, jcol, mu, nv)  # = M x
    x = blockdiag_mul(Minv, F, iv, ncol)
    if constraint_backward_error(Jc, jcol, x, rhs, F, sdiag) > REFINE_ETA:
        x = x + schur_refinement(Minv, Jc, jcol, iv, ncol, ab, kd, rperm, x, rhs)[0]
    return x, True


@_njit
def band_cholesky_psd(ab, kd, eps):
    """Like :func:`band_cholesky` for a semi-definite matrix: a pivot ``<= eps * A_jj``
    marks row j dependent (its column of ``L`` is zeroed).  Returns ``(rho, dependent)``,
    ``rho`` the smallest ratio among the independent rows."""
    n = ab.shape[1]
    rho = 1.0
    dep = 0
    for j in range(n):
        d = ab[0, j]
        s = d
        for k in range(max(0, j - kd), j):
            s -= ab[j - k, k] * ab[j - k, k]
        if not (d > 0.0) or s <= eps * d:
            dep += 1
            for i in range(j, min(n, j + kd + 1)):
                ab[i - j, j] = 0.0
            continue
        if s / d < rho:
            rho = s / d
        ljj = np.sqrt(s)
        ab[0, j] = ljj
        for i in range(j + 1, min(n, j + kd + 1)):
            s2 = ab[i - j, j]
            for k in range(max(0, i - kd), j):
                s2 -= ab[i - k, k] * ab[j - k, k]
            ab[i - j, j] = s2 / ljj
    return rho, dep


@_njit
def rank_measure(Jc, iv, ncol, rbody, brow_ptr, brow_idx, brow_slot, rperm, kd, m, W,
                 eps):
    """``(rho, dependent)`` of ``J W J'`` (:func:`band_cholesky_psd`, pivots relative to the
    diagonal): ``rho`` is 1 for orthogonal rows and tends to 0 as ``J`` loses rank;
    ``dependent`` counts rows within ``eps`` of the span of the others (redundant
    constraints, or a configuration exactly singular).  ``W`` (``Mechanism._rank_metric``)
    divides the angular columns by a body length: a rotation column of a position row
    carries a length, so plain ``J J'`` made a regular mechanism of 1 cm read 1e-3 of the
    same one at 1 m; with ``W``, ``rho`` is the same in any units."""
    if m == 0:
        return 1.0, 0
    ab = assemble_schur(W, Jc, iv, ncol, rbody, brow_ptr, brow_idx, brow_slot, rperm, kd,
                        m, np.zeros(m))
    return band_cholesky_psd(ab, kd, eps)


def rank_measure_dense(J: np.ndarray, W: np.ndarray,
                       eps: float = 1e-10) -> tuple[float, int]:
    """:func:`rank_measure` of a full Jacobian (the Python path)."""
    m = J.shape[0]
    if m == 0:
        return 1.0, 0
    S = J @ W @ J.T
    ab = np.zeros((m, m))
    for k in range(m):
        ab[k, :m - k] = np.diagonal(S, -k)
    rho, dep = band_cholesky_psd(ab, m - 1, eps)
    return float(rho), int(dep)


@_njit
def _compliant_solve(ab, kd, rperm, Minv, M, Jc, jcol, iv, ncol, a, g, bvec, nv):
    """``[M J'; J -1/a] [x; μ] = [g; -b]`` with ``S = J M^-1 J' + diag(1/a)`` factorized
    in ``ab``: ``S μ = J M^-1 g + b``, ``x = M^-1 (g - J' μ)``, then one step of
    iterative refinement on the residuals of both rows (the range-space solve alone left
    3e7 eps of backward error on the seed-003 loop's 1e-9 kg m^2 links)."""
    Mg = blockdiag_mul(Minv, g, iv, ncol)
    mu = spd_solve(ab, kd, rperm, jmul(Jc, jcol, Mg) + bvec)
    x = Mg - blockdiag_mul(Minv, jtmul(Jc, jcol, mu, nv), iv, ncol)
    r1 = g - blockdiag_mul(M, x, iv, ncol) - jtmul(Jc, jcol, mu, nv)
    r2 = -bvec - jmul(Jc, jcol, x) + mu / a
    Mr = blockdiag_mul(Minv, r1, iv, ncol)
    dmu = spd_solve(ab, kd, rperm, jmul(Jc, jcol, Mr) - r2)
    x = x + Mr - blockdiag_mul(Minv, jtmul(Jc, jcol, dmu, nv), iv, ncol)
    return x, mu + dmu


@_njit
def penalty_band(Minv, M, Q, Jc, jcol, a, bvec, iterations, iv, ncol, rbody, brow_ptr,
                 brow_idx, brow_slot, rperm, kd):
    """Penalty / index-1 augmented Lagrangian (:mod:`.formulations`) in the range-space
    form: ``S = J M^-1 J' + diag(1/a)`` (banded by rows, as :func:`lagrange_band`),
    ``S λ = J M^-1 Q + b``, ``v̇ = M^-1 (Q - J' λ)`` (:func:`_compliant_solve`); then
    ``iterations`` times the same with ``M v̇`` for ``Q``, ``λ += μ`` (``a`` one weight
    per row).  The same solution as ``(M + J' a J) v̇ = Q - J' a b``, without that
    matrix's condition number ``~ a``.  Returns ``(v̇, λ, ok)``, ``M v̇ = Q - J' λ``."""
    nv, m = Q.shape[0], Jc.shape[0]
    ab = assemble_schur(Minv, Jc, iv, ncol, rbody, brow_ptr, brow_idx, brow_slot, rperm, kd,
                        m, 1.0 / a)
    ok, rho = band_cholesky(ab, kd)
    if not ok:
        return np.zeros(nv), np.zeros(m), False
    vd, lam = _compliant_solve(ab, kd, rperm, Minv, M, Jc, jcol, iv, ncol, a, Q, bvec, nv)
    for _ in range(iterations):  # λ accumulates: M v̇_i = Q - J' λ_i
        vd, mu = _compliant_solve(ab, kd, rperm, Minv, M, Jc, jcol, iv, ncol, a,
                                  blockdiag_mul(M, vd, iv, ncol), bvec, nv)
        lam += mu
    return vd, lam, True
