"""Compiled evaluation of a mechanism's constraints and forces (optional: Numba).

The same equations as :mod:`.constraints` and :mod:`.bodies`, written once in
3-D for every body kind (a planar body is a spatial one rotating about z with
generalized velocities ``(x', y', w_z)``; a particle has no rotation) and
compiled by Numba: a generic kernel over tables of bodies and primitives,
compiled once per machine (cached), not per mechanism.  Driving functions are
Python callables: their values are computed before the kernel is called.
Force elements written in Python (springs, contacts, marker forces) are added
by the mechanism after the kernel's gravity and gyroscopic terms.

Without Numba (``pip install 'cosim[fast]'``) the mechanism uses the Python
path; the tests check that both agree to rounding.
"""

from __future__ import annotations

import numpy as np

from ._numba import HAVE_NUMBA, _inline, _njit  # noqa: F401 (HAVE_NUMBA: public)
from .sparse import Banding, jmul, lagrange_band, penalty_band, rank_measure, schur_correction

# derivative_kernel compiles sparse.lagrange_band into itself, and Numba's cache of this file
# is checked against this file only: a change of sparse.py's kernels needs a change here (or
# removing __pycache__/*.nbi) before a cached derivative_kernel sees it (last: the refinement
# step of lagrange_band)

# primitive type codes
POINTS, DOT1, DOT2, DISTANCE, ANGLE, NOSLIP, PATH = range(7)
_TYPES = {"Points": POINTS, "Dot1": DOT1, "Dot2": DOT2, "Distance": DISTANCE,
          "Angle": ANGLE, "NoSideSlip": NOSLIP, "PathPoint": PATH}


class NotSupported(Exception):
    """A primitive the kernel does not implement: the mechanism uses the Python path."""


# body kind codes
GROUND, PARTICLE, PLANAR, SPATIAL = range(4)
_KINDS = {"ground": GROUND, "particle": PARTICLE, "planar": PLANAR, "spatial": SPATIAL}


@_njit
def _body_states(kind, iq, q, v, iv):
    """r, A, rd, w (body-frame angular velocity) of every body, 3-D."""
    nb = kind.shape[0]
    r = np.zeros((nb, 3))
    A = np.zeros((nb, 3, 3))
    rd = np.zeros((nb, 3))
    w = np.zeros((nb, 3))
    th = np.zeros(nb)
    for b in range(nb):
        k = kind[b]
        A[b, 0, 0] = 1.0
        A[b, 1, 1] = 1.0
        A[b, 2, 2] = 1.0
        if k == 1:  # particle (2 or 3 coordinates; dim from iv spacing is not needed)
            n = iq[b + 1] - iq[b]
            for i in range(n):
                r[b, i] = q[iq[b] + i]
                rd[b, i] = v[iv[b] + i]
        elif k == 2:
            r[b, 0] = q[iq[b]]
            r[b, 1] = q[iq[b] + 1]
            t = q[iq[b] + 2]
            th[b] = t
            c, s = np.cos(t), np.sin(t)
            A[b, 0, 0] = c
            A[b, 0, 1] = -s
            A[b, 1, 0] = s
            A[b, 1, 1] = c
            rd[b, 0] = v[iv[b]]
            rd[b, 1] = v[iv[b] + 1]
            w[b, 2] = v[iv[b] + 2]
        elif k == 3:
            for i in range(3):
                r[b, i] = q[iq[b] + i]
                rd[b, i] = v[iv[b] + i]
                w[b, i] = v[iv[b] + 3 + i]
            e0, e1, e2, e3 = q[iq[b] + 3], q[iq[b] + 4], q[iq[b] + 5], q[iq[b] + 6]
            nrm = np.sqrt(e0 * e0 + e1 * e1 + e2 * e2 + e3 * e3)
            e0, e1, e2, e3 = e0 / nrm, e1 / nrm, e2 / nrm, e3 / nrm
            A[b, 0, 0] = 2 * (e0 * e0 + e1 * e1) - 1
            A[b, 0, 1] = 2 * (e1 * e2 - e0 * e3)
            A[b, 0, 2] = 2 * (e1 * e3 + e0 * e2)
            A[b, 1, 0] = 2 * (e1 * e2 + e0 * e3)
            A[b, 1, 1] = 2 * (e0 * e0 + e2 * e2) - 1
            A[b, 1, 2] = 2 * (e2 * e3 - e0 * e1)
            A[b, 2, 0] = 2 * (e1 * e3 - e0 * e2)
            A[b, 2, 1] = 2 * (e2 * e3 + e0 * e1)
            A[b, 2, 2] = 2 * (e0 * e0 + e3 * e3) - 1
    return r, A, rd, w, th


@_njit
def _cross(a, b):
    out = np.empty(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


@_njit
def _mv(A, x):
    out = np.empty(3)
    for i in range(3):
        out[i] = A[i, 0] * x[0] + A[i, 1] * x[1] + A[i, 2] * x[2]
    return out


@_njit
def _rotcols(J, A, b, s):
    """J[:, 3:6] = -A tilde(s): column k is A (e_k x s)."""
    for i in range(3):
        J[i, 3] = -s[2] * A[b, i, 1] + s[1] * A[b, i, 2]
        J[i, 4] = s[2] * A[b, i, 0] - s[0] * A[b, i, 2]
        J[i, 5] = -s[1] * A[b, i, 0] + s[0] * A[b, i, 1]


@_njit
def _point(b, s, r, A, rd, w):
    """P, V, acc0 and the 3x6 Jacobian (translation, body-frame rotation) of point s."""
    As = _mv(A[b], s)
    ws = _cross(w[b], s)
    P = r[b] + As
    V = rd[b] + _mv(A[b], ws)
    acc = _mv(A[b], _cross(w[b], ws))
    J = np.zeros((3, 6))
    J[0, 0] = 1.0
    J[1, 1] = 1.0
    J[2, 2] = 1.0
    _rotcols(J, A, b, s)
    return P, V, acc, J


@_njit
def _vector(b, a, A, w):
    """a_g, rate, acc0 and the 3x6 Jacobian of body-fixed direction a."""
    g = _mv(A[b], a)
    wa = _cross(w[b], a)
    d = _mv(A[b], wa)
    acc = _mv(A[b], _cross(w[b], wa))
    J = np.zeros((3, 6))
    _rotcols(J, A, b, a)
    return g, d, acc, J


@_inline
def _point_into(b, s, r, A, rd, w, P, V, acc, J):
    """In-place version of :func:`_point` (no allocation)."""
    s0, s1, s2 = s[0], s[1], s[2]
    w0, w1, w2 = w[b, 0], w[b, 1], w[b, 2]
    ws0, ws1, ws2 = w1 * s2 - w2 * s1, w2 * s0 - w0 * s2, w0 * s1 - w1 * s0
    wws0, wws1, wws2 = w1 * ws2 - w2 * ws1, w2 * ws0 - w0 * ws2, w0 * ws1 - w1 * ws0
    for i in range(3):
        a0, a1, a2 = A[b, i, 0], A[b, i, 1], A[b, i, 2]
        P[i] = r[b, i] + a0 * s0 + a1 * s1 + a2 * s2
        V[i] = rd[b, i] + a0 * ws0 + a1 * ws1 + a2 * ws2
        acc[i] = a0 * wws0 + a1 * wws1 + a2 * wws2
        J[i, 0] = 0.0
        J[i, 1] = 0.0
        J[i, 2] = 0.0
        J[i, i] = 1.0
        J[i, 3] = -s2 * a1 + s1 * a2
        J[i, 4] = s2 * a0 - s0 * a2
        J[i, 5] = -s1 * a0 + s0 * a1


@_inline
def _scatter_row(Jc, row, slot, sign, Jrow6, b, ncol, sel):
    """Add sign * Jrow6 (length 6) into the compact row: body slot 0 (i) or 1 (j)."""
    for k in range(ncol[b]):
        Jc[row, 6 * slot + k] += sign * Jrow6[sel[b, k]]


@_njit
def constraints_kernel(q, v, kind, iq, iv, ncol, sel, typ, bi, bj, si, sj, ai, aj, cst,
                       drv, row, nrows, fval, fdot, fddot, cval, cdot, cddot, m, nv):
    """Phi, J, Phi_t, gamma of all primitives (see module docstring).

    ``J`` is compact, ``(m, 12)``: row r's entries for the generalized velocities of its
    primitive's body i (columns 0-5) and body j (6-11); :func:`dense_jacobian` and the
    column map ``Tables.jcol`` give the full matrix.
    """
    r, A, rd, w, th = _body_states(kind, iq, q, v, iv)
    phi = np.zeros(m)
    J = np.zeros((m, 12))
    phit = np.zeros(m)
    gam = np.zeros(m)
    # work arrays of the point evaluations (no allocation per primitive)
    Pi, Vi, ai_ = np.empty(3), np.empty(3), np.empty(3)
    Pj, Vj, aj_ = np.empty(3), np.empty(3), np.empty(3)
    Ji, Jj = np.empty((3, 6)), np.empty((3, 6))
    row6, row6b = np.empty(6), np.empty(6)
    s_i, extra, Acd = np.empty(3), np.zeros(3), np.zeros(3)
    for p in range(typ.shape[0]):
        t = typ[p]
        i, j, r0 = bi[p], bj[p], row[p]
        if t == 0 or t == 6:  # points / path point
            if t == 6:
                k = drv[p]
                s_i[:] = cval[k]
                Acd[:] = _mv(A[i], cdot[k])
                extra[:] = 2.0 * _mv(A[i], _cross(w[i], cdot[k])) + _mv(A[i], cddot[k])
            else:
                s_i[:] = si[p]
                extra[:] = 0.0
            _point_into(i, s_i, r, A, rd, w, Pi, Vi, ai_, Ji)
            _point_into(j, sj[p], r, A, rd, w, Pj, Vj, aj_, Jj)
            for d in range(nrows[p]):
                phi[r0 + d] = Pj[d] - Pi[d]
                gam[r0 + d] = -(aj_[d] - ai_[d] - extra[d])
                if t == 6:
                    phit[r0 + d] = -Acd[d]
                _scatter_row(J, r0 + d, 0, -1.0, Ji[d], i, ncol, sel)
                _scatter_row(J, r0 + d, 1, 1.0, Jj[d], j, ncol, sel)
        elif t == 1:  # dot1
            a, ad, aa, Ja = _vector(i, ai[p], A, w)
            b_, bd, ba, Jb = _vector(j, aj[p], A, w)
            phi[r0] = a @ b_ - cst[p]
            gam[r0] = -(aa @ b_ + a @ ba + 2.0 * (ad @ bd))
            _scatter_row(J, r0, 0, 1.0, b_ @ Ja, i, ncol, sel)
            _scatter_row(J, r0, 1, 1.0, a @ Jb, j, ncol, sel)
        elif t == 2:  # dot2 (with an optional driver)
            a, ad, aa, Ja = _vector(i, ai[p], A, w)
            Pi, Vi, pai, Jpi = _point(i, si[p], r, A, rd, w)
            Pj, Vj, paj, Jpj = _point(j, sj[p], r, A, rd, w)
            dv, ddv, dav = Pj - Pi, Vj - Vi, paj - pai
            f, fd, fdd = 0.0, 0.0, 0.0
            if drv[p] >= 0:
                f, fd, fdd = fval[drv[p]], fdot[drv[p]], fddot[drv[p]]
            phi[r0] = a @ dv - f
            phit[r0] = -fd
            gam[r0] = -(aa @ dv + a @ dav + 2.0 * (ad @ ddv)) + fdd
            _scatter_row(J, r0, 0, -1.0, a @ Jpi, i, ncol, sel)
            _scatter_row(J, r0, 0, 1.0, dv @ Ja, i, ncol, sel)
            _scatter_row(J, r0, 1, 1.0, a @ Jpj, j, ncol, sel)
        elif t == 3:  # distance
            _point_into(i, si[p], r, A, rd, w, Pi, Vi, ai_, Ji)
            _point_into(j, sj[p], r, A, rd, w, Pj, Vj, aj_, Jj)
            L, Ld, Ldd = fval[drv[p]], fdot[drv[p]], fddot[drv[p]]
            dd2 = 0.0
            dvv = 0.0
            dva = 0.0
            for d in range(3):
                dv = Pj[d] - Pi[d]
                ddv = Vj[d] - Vi[d]
                dd2 += dv * dv
                dvv += ddv * ddv
                dva += dv * (aj_[d] - ai_[d])
            phi[r0] = dd2 - L * L
            phit[r0] = -2.0 * L * Ld
            gam[r0] = -2.0 * (dvv + dva) + 2.0 * (Ld * Ld + L * Ldd)
            for k in range(6):
                gi = 0.0
                gj = 0.0
                for d in range(3):
                    dv = Pj[d] - Pi[d]
                    gi += dv * Ji[d, k]
                    gj += dv * Jj[d, k]
                row6[k] = gi
                row6b[k] = gj
            _scatter_row(J, r0, 0, -2.0, row6, i, ncol, sel)
            _scatter_row(J, r0, 1, 2.0, row6b, j, ncol, sel)
        elif t == 4:  # planar angle (+ driver)
            f, fd, fdd = 0.0, 0.0, 0.0
            if drv[p] >= 0:
                f, fd, fdd = fval[drv[p]], fdot[drv[p]], fddot[drv[p]]
            phi[r0] = th[j] - th[i] + cst[p] - f
            phit[r0] = -fd
            gam[r0] = fdd
            if kind[i] == 2:
                J[r0, 2] -= 1.0
            if kind[j] == 2:
                J[r0, 8] += 1.0
        elif t == 5:  # no side slip (velocity level)
            n, nd, na, Jn = _vector(j, aj[p], A, w)
            Pj, Vj, paj, Jpj = _point(j, sj[p], r, A, rd, w)
            gam[r0] = -(nd @ Vj + n @ paj)
            _scatter_row(J, r0, 1, 1.0, n @ Jpj, j, ncol, sel)
    return phi, J, phit, gam


@_njit
def forces_kernel(v, kind, iv, mass, inertia, gravity, nv):
    """Gravity on every body and the gyroscopic torque -w x J w of spatial bodies."""
    Q = np.zeros(nv)
    for b in range(kind.shape[0]):
        k = kind[b]
        if k == 0:
            continue
        n = 3 if k == 3 else gravity.shape[0]
        for d in range(n):
            Q[iv[b] + d] += mass[b] * gravity[d]
        if k == 3:
            wv = v[iv[b] + 3:iv[b] + 6].copy()
            Jw = inertia[b] @ wv
            g = _cross(wv, Jw)
            for d in range(3):
                Q[iv[b] + 3 + d] -= g[d]
    return Q


def _pad3(x) -> np.ndarray:
    out = np.zeros(3)
    x = np.asarray(x, float).reshape(-1)
    out[:x.size] = x
    return out


class Tables:
    """The kernel's input tables for one mechanism (built at finalize)."""

    def __init__(self, mech) -> None:
        # the rank measure's metric (J W J', Mechanism._rank_metric): the same in any units
        self.minv = np.ascontiguousarray(mech.rank_metric, float)
        bodies = list(mech.bodies.values())
        index = {b: k for k, b in enumerate(bodies)}
        nb = len(bodies)
        self.kind = np.array([_KINDS[b.kind] for b in bodies], dtype=np.int64)
        self.iq = np.array([b.iq for b in bodies] + [mech.nq], dtype=np.int64)
        self.iv = np.array([b.iv for b in bodies], dtype=np.int64)
        self.ncol = np.array([b.nv for b in bodies], dtype=np.int64)
        sel = np.zeros((nb, 6), dtype=np.int64)
        for k, b in enumerate(bodies):
            cols = {"ground": [], "particle": list(range(b.dim)), "planar": [0, 1, 5],
                    "spatial": [0, 1, 2, 3, 4, 5]}[b.kind]
            sel[k, :len(cols)] = cols
        self.sel = sel
        self.mass = np.array([b.mass for b in bodies])
        self.inertia = np.zeros((nb, 3, 3))
        for k, b in enumerate(bodies):
            if b.kind == "spatial":
                self.inertia[k] = b.inertia
        self.gravity = np.asarray(mech.gravity, float)
        self._no_load = np.zeros(mech.nv)
        prims = mech.prims
        n = len(prims)
        self.typ = np.zeros(n, dtype=np.int64)
        self.bi = np.zeros(n, dtype=np.int64)
        self.bj = np.zeros(n, dtype=np.int64)
        self.si, self.sj = np.zeros((n, 3)), np.zeros((n, 3))
        self.ai, self.aj = np.zeros((n, 3)), np.zeros((n, 3))
        self.cst = np.zeros(n)
        self.drv = np.full(n, -1, dtype=np.int64)
        self.row = np.zeros(n, dtype=np.int64)
        self.nrows = np.zeros(n, dtype=np.int64)
        self.scalar_fns, self.path_fns = [], []
        r0 = 0
        for k, p in enumerate(prims):
            name = type(p).__name__
            if name not in _TYPES:
                raise NotSupported(f"joint '{p.joint.name}' ({p.joint.kind}): primitive "
                                   f"{name} is not in the compiled kernel")
            self.typ[k] = _TYPES[name]
            self.bi[k], self.bj[k] = index[p.mi.body], index[p.mj.body]
            self.row[k], self.nrows[k] = r0, p.rows
            r0 += p.rows
            if name in ("Points",):
                self.si[k], self.sj[k] = _pad3(p.si), _pad3(p.sj)
            elif name == "Dot1":
                self.ai[k], self.aj[k], self.cst[k] = _pad3(p.ai), _pad3(p.aj), p.c
            elif name == "Dot2":
                self.ai[k], self.si[k], self.sj[k] = _pad3(p.ai), _pad3(p.si), _pad3(p.sj)
                self.drv[k] = len(self.scalar_fns)
                self.scalar_fns.append(p.fn)
            elif name == "Distance":
                self.si[k], self.sj[k] = _pad3(p.mi.s), _pad3(p.mj.s)
                self.drv[k] = len(self.scalar_fns)
                self.scalar_fns.append(p.fn)
            elif name == "Angle":
                self.cst[k] = p.off
                self.drv[k] = len(self.scalar_fns)
                self.scalar_fns.append(p.fn)
            elif name == "NoSideSlip":
                self.aj[k], self.sj[k] = _pad3(p.mj.R[:, 1]), _pad3(p.mj.s)
            elif name == "PathPoint":
                self.sj[k] = _pad3(p.mj.s)
                self.drv[k] = len(self.path_fns)
                self.path_fns.append(p.fn)
        self.m, self.nv = r0, mech.nv
        self._compact_maps()
        self._driver_arrays()

    def _compact_maps(self) -> None:
        """Column map of the compact Jacobian and the banded orderings (:mod:`.sparse`)."""
        m = self.m
        self.jcol = np.zeros((m, 25), dtype=np.int64)
        self.jmask = np.zeros((m, 12), dtype=bool)
        self.rbody = np.zeros((m, 2), dtype=np.int64)
        for p in range(self.typ.shape[0]):
            for d in range(self.nrows[p]):
                r = self.row[p] + d
                for slot, b in ((0, self.bi[p]), (1, self.bj[p])):
                    self.rbody[r, slot] = b
                    for k in range(self.ncol[b]):
                        self.jcol[r, 6 * slot + k] = self.iv[b] + k
                        self.jmask[r, 6 * slot + k] = True
                used = np.flatnonzero(self.jmask[r])
                self.jcol[r, 12] = used.size
                self.jcol[r, 13:13 + used.size] = used
        self.band = Banding(self.kind, self.iv, self.ncol, self.rbody, self.jcol, self.jmask)


    def ctab(self) -> tuple:
        """The constraint kernel's tables as one tuple (for the fused kernels)."""
        return (self.kind, self.iq, self.iv, self.ncol, self.sel, self.typ, self.bi, self.bj,
                self.si, self.sj, self.ai, self.aj, self.cst, self.drv, self.row, self.nrows)

    def btab(self) -> tuple:
        """The banded solver's tables as one tuple."""
        bd = self.band
        return (self.jcol, self.rbody, bd.brow_ptr, bd.brow_idx, bd.brow_slot, bd.rperm,
                bd.kd_r, bd.vperm, bd.kd_v)

    def jmul(self, Jc: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``J x`` for a compact ``Jc``."""
        return jmul(Jc, self.jcol, np.ascontiguousarray(x, float))

    def dense(self, Jc: np.ndarray) -> np.ndarray:
        """The full ``(m, nv)`` Jacobian of a compact one."""
        J = np.zeros((self.m, self.nv))
        rows = np.repeat(np.arange(self.m), 12).reshape(self.m, 12)
        np.add.at(J, (rows[self.jmask], self.jcol[:, :12][self.jmask]), Jc[self.jmask])
        return J

    def _driver_arrays(self) -> None:
        """Constant drivers are filled once; only time-varying ones are called."""
        ns, npth = len(self.scalar_fns), len(self.path_fns)
        self._f = np.zeros((3, max(ns, 1)))
        self._varying = []
        for k, fn in enumerate(self.scalar_fns):
            if hasattr(fn, "constant"):
                self._f[0, k] = fn.constant
            else:
                self._varying.append((k, fn))
        self._c = np.zeros((3, max(npth, 1), 3))

    def _drivers_at(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Values of the time-varying drivers at ``t`` in the kernel's arrays."""
        f, c = self._f, self._c
        for k, fn in self._varying:
            f[:, k] = fn(t)
        for k, fn in enumerate(self.path_fns):
            for d, x in enumerate(fn(t)):
                c[d, k, :len(x)] = x
        return f, c

    def constraints_compact(self, q: np.ndarray, v: np.ndarray, t: float) -> tuple:
        """``(Phi, Jc, Phi_t, gamma)`` with the compact Jacobian (:mod:`.sparse`)."""
        f, c = self._drivers_at(t)
        return constraints_kernel(np.ascontiguousarray(q, float), np.ascontiguousarray(v, float),
                                  self.kind, self.iq, self.iv, self.ncol, self.sel, self.typ,
                                  self.bi, self.bj, self.si, self.sj, self.ai, self.aj,
                                  self.cst, self.drv, self.row, self.nrows, f[0], f[1], f[2],
                                  c[0], c[1], c[2], self.m, self.nv)

    def constraints(self, q: np.ndarray, v: np.ndarray, t: float) -> tuple:
        """``(Phi, J, Phi_t, gamma)`` with the full Jacobian."""
        phi, Jc, phit, gam = self.constraints_compact(q, v, t)
        return phi, self.dense(Jc), phit, gam

    def lagrange(self, Minv: np.ndarray, Q: np.ndarray, Jc: np.ndarray,
                 rhs: np.ndarray) -> tuple:
        """``(v̇, λ, ok, rho)`` by the banded Schur complement (:func:`.sparse.lagrange_band`)."""
        bd = self.band
        return lagrange_band(Minv, Q, Jc, self.jcol, rhs, self.iv, self.ncol, self.rbody,
                             bd.brow_ptr, bd.brow_idx, bd.brow_slot, bd.rperm, bd.kd_r)

    def correction(self, Minv: np.ndarray, Jc: np.ndarray, rhs: np.ndarray) -> tuple:
        """``(M^-1 J' μ, ok)`` with ``J M^-1 J' μ = rhs`` (:func:`.sparse.schur_correction`)."""
        bd = self.band
        return schur_correction(Minv, Jc, self.jcol, self.iv, self.ncol, self.rbody,
                                bd.brow_ptr, bd.brow_idx, bd.brow_slot, bd.rperm, bd.kd_r,
                                np.ascontiguousarray(rhs, float))

    def penalty(self, Minv: np.ndarray, Q: np.ndarray, Jc: np.ndarray, a: np.ndarray,
                bvec: np.ndarray, iterations: int, M: np.ndarray | None = None) -> tuple:
        """``(v̇, λ, ok)`` of the penalty / augmented Lagrangian (:func:`.sparse.penalty_band`,
        range-space form; ``a`` per row)."""
        bd = self.band
        return penalty_band(Minv, np.linalg.inv(Minv) if M is None else M, Q, Jc,
                            self.jcol, np.ascontiguousarray(a, float), bvec, int(iterations),
                            self.iv, self.ncol, self.rbody, bd.brow_ptr, bd.brow_idx,
                            bd.brow_slot, bd.rperm, bd.kd_r)

    def monitor(self, q: np.ndarray, t: float, holonomic: np.ndarray, row_scale: np.ndarray,
                eps: float = 1e-10) -> tuple:
        """``(rho, dependent, drift, worst row)`` in one compiled call: the rank measure of
        :meth:`rank_measure` and ``max |Phi_r| / row_scale_r`` over the holonomic rows."""
        f, c = self._drivers_at(t)
        bd = self.band
        return monitor_kernel(np.ascontiguousarray(q, float), self.kind, self.iq, self.iv,
                              self.ncol, self.sel, self.typ, self.bi, self.bj, self.si,
                              self.sj, self.ai, self.aj, self.cst, self.drv, self.row,
                              self.nrows, f[0], f[1], f[2], c[0], c[1], c[2], self.m, self.nv,
                              self.rbody, bd.brow_ptr, bd.brow_idx, bd.brow_slot, bd.rperm,
                              bd.kd_r, self.minv, eps, holonomic, row_scale)

    def rank_measure(self, q: np.ndarray, t: float, eps: float = 1e-10) -> tuple:
        """``(rho, dependent, Phi)`` of ``J W J'`` at ``q`` (:func:`.sparse.rank_measure`)."""
        phi, Jc, _, _ = self.constraints_compact(q, self._no_load, t)
        bd = self.band
        rho, dep = rank_measure(Jc, self.iv, self.ncol, self.rbody, bd.brow_ptr, bd.brow_idx,
                                bd.brow_slot, bd.rperm, bd.kd_r, self.m, self.minv, eps)
        return rho, dep, phi

    def derivative(self, q: np.ndarray, v: np.ndarray, t: float, Minv: np.ndarray,
                   alpha: float, beta: float,
                   Qext: np.ndarray | None = None) -> tuple[np.ndarray, bool, float]:
        """``[q', v̇]`` in one compiled call, ``ok`` and ``rho`` (the Schur complement's rank
        measure); ``Qext``: generalized forces of the loads and force elements (see
        :meth:`Mechanism.external_forces`)."""
        f, c = self._drivers_at(t)
        bd = self.band
        return derivative_kernel(np.ascontiguousarray(q, float), np.ascontiguousarray(v, float),
                                 self.kind, self.iq, self.iv, self.ncol, self.sel, self.typ,
                                 self.bi, self.bj, self.si, self.sj, self.ai, self.aj,
                                 self.cst, self.drv, self.row, self.nrows, f[0], f[1], f[2],
                                 c[0], c[1], c[2], self.m, self.nv, self.mass, self.inertia,
                                 self.gravity, Minv, float(alpha), float(beta),
                                 self._no_load if Qext is None else Qext, self.jcol,
                                 self.rbody, bd.brow_ptr, bd.brow_idx, bd.brow_slot, bd.rperm,
                                 bd.kd_r)

    def qdot(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return qdot_kernel(np.ascontiguousarray(q, float), np.ascontiguousarray(v, float),
                           self.kind, self.iq, self.iv, self.ncol)

    def forces(self, v: np.ndarray) -> np.ndarray:
        return forces_kernel(np.ascontiguousarray(v, float), self.kind, self.iv, self.mass,
                             self.inertia, self.gravity, self.nv)


@_njit
def qdot_kernel(q, v, kind, iq, iv, ncol):
    """q' = T(q) v (Euler-parameter rates for spatial bodies)."""
    qd = np.empty(q.shape[0])
    for b in range(kind.shape[0]):
        k = kind[b]
        if k == 0:
            continue
        if k == 3:
            for d in range(3):
                qd[iq[b] + d] = v[iv[b] + d]
            e0, e1, e2, e3 = q[iq[b] + 3], q[iq[b] + 4], q[iq[b] + 5], q[iq[b] + 6]
            wx, wy, wz = v[iv[b] + 3], v[iv[b] + 4], v[iv[b] + 5]
            qd[iq[b] + 3] = 0.5 * (-e1 * wx - e2 * wy - e3 * wz)
            qd[iq[b] + 4] = 0.5 * (e0 * wx - e3 * wy + e2 * wz)
            qd[iq[b] + 5] = 0.5 * (e3 * wx + e0 * wy - e1 * wz)
            qd[iq[b] + 6] = 0.5 * (-e2 * wx + e1 * wy + e0 * wz)
        else:
            for d in range(ncol[b]):
                qd[iq[b] + d] = v[iv[b] + d]
    return qd


@_njit
def derivative_kernel(q, v, kind, iq, iv, ncol, sel, typ, bi, bj, si, sj, ai, aj, cst,
                      drv, row, nrows, fval, fdot, fddot, cval, cdot, cddot, m, nv,
                      mass, inertia, gravity, Minv, alpha, beta, Qext, jcol, rbody, brow_ptr,
                      brow_idx, brow_slot, rperm, kd):
    """``[q', v̇]`` (Lagrange + Baumgarte, banded Schur complement), ``ok`` and ``rho``;
    ``Qext``: generalized forces of the loads and force elements, computed in Python
    (zeros without them)."""
    phi, J, phit, gam = constraints_kernel(q, v, kind, iq, iv, ncol, sel, typ, bi, bj, si,
                                           sj, ai, aj, cst, drv, row, nrows, fval, fdot,
                                           fddot, cval, cdot, cddot, m, nv)
    Q = forces_kernel(v, kind, iv, mass, inertia, gravity, nv)
    for i in range(nv):
        Q[i] += Qext[i]
    rhs = gam.copy()
    if alpha != 0.0 or beta != 0.0:
        phid = jmul(J, jcol, v) + phit
        for i in range(m):
            rhs[i] = gam[i] - 2.0 * alpha * phid[i] - beta * beta * phi[i]
    vd, lam, ok, rho = lagrange_band(Minv, Q, J, jcol, rhs, iv, ncol, rbody, brow_ptr,
                                     brow_idx, brow_slot, rperm, kd)
    qd = qdot_kernel(q, v, kind, iq, iv, ncol)
    out = np.empty(q.shape[0] + nv)
    out[:q.shape[0]] = qd
    out[q.shape[0]:] = vd
    return out, ok, rho


@_njit
def monitor_kernel(q, kind, iq, iv, ncol, sel, typ, bi, bj, si, sj, ai, aj, cst, drv, row,
                   nrows, fval, fdot, fddot, cval, cdot, cddot, m, nv, rbody, brow_ptr,
                   brow_idx, brow_slot, rperm, kd, minv, eps, holonomic, row_scale):
    """:meth:`Tables.monitor` (the block's singular-position and drift monitors)."""
    phi, J, _, _ = constraints_kernel(q, np.zeros(nv), kind, iq, iv, ncol, sel, typ, bi, bj,
                                      si, sj, ai, aj, cst, drv, row, nrows, fval, fdot, fddot,
                                      cval, cdot, cddot, m, nv)
    rho, dep = rank_measure(J, iv, ncol, rbody, brow_ptr, brow_idx, brow_slot, rperm, kd, m,
                            minv, eps)
    drift = 0.0
    worst = -1
    for r in range(m):
        if holonomic[r]:
            d = abs(phi[r]) / row_scale[r]
            if d > drift:
                drift = d
                worst = r
    return rho, dep, drift, worst
