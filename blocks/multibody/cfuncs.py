"""The multibody block's compiled kernels as C-callable functions (Numba ``cfunc``).

The compiled Simulator's C calls these by address (``CContext.extern_fn``,
:mod:`blocks.multibody.cform`); they run the same Numba kernels as the block's Python path
(:meth:`.block.MultibodyBlock.derivatives`, :meth:`.mechanism.Mechanism.accelerations`), in
the same order and with arrays of the same types, so the same machine code computes the
same numbers.  The mechanism's tables come packed in two arrays (:func:`pack`): ``I``
(int64: a header of sizes, then the integer tables) and ``F`` (float64); the C holds them
as constants.

``deriv(t, x, u, dx, I, F)``: ``dx = [q', v̇]`` of ``x = [q, v]`` with the loads ``u``
(each force load its components, each torque one value, in ``Mechanism.load_names``
order); returns 0 where the Python path leaves the compiled solve (a singular or redundant
configuration: its general path), 1 otherwise.  ``accel(t, x, u, out, I, F)``:
``out = [v̇, λ]`` as :meth:`Mechanism.accelerations` (the reaction outputs), the same
return value.  ``monitor(t, x, u, out, I, F)``: ``out = [rho, dependent, drift, worst
row]`` as ``Tables.monitor`` (the block's monitors), returns 1.

Each is compiled on first use (:func:`function`) and cached by Numba: once per machine, not
per mechanism (the tables are arguments); measured on the 2-core VM, 10-20 s afresh (with
the block's kernels' own first compilation), 0.1 s from the cache.  Without Numba there are
none (:func:`function` raises).
"""

from __future__ import annotations

import numpy as np

from ._numba import HAVE_NUMBA, _inline, _njit, numba
from .fast import (
    constraints_kernel,
    derivative_kernel,
    forces_kernel,
    monitor_kernel,
    qdot_kernel,
)
from .sparse import jmul, lagrange_band, penalty_band

#: header of ``I``: scalars, then (offset, d0, d1, d2) per table
H_M, H_NV, H_NQ, H_KD, H_FORM, H_ITER, H_NL, H_NU = range(8)
N_SCALARS = 8
#: integer tables (name, ndim) in ``I`` order
INT_TABLES = (("kind", 1), ("iq", 1), ("iv", 1), ("ncol", 1), ("sel", 2), ("typ", 1),
              ("bi", 1), ("bj", 1), ("drv", 1), ("row", 1), ("nrows", 1), ("jcol", 2),
              ("rbody", 2), ("brow_ptr", 1), ("brow_idx", 1), ("brow_slot", 1), ("rperm", 1),
              ("lkind", 1), ("liv", 1), ("liq", 1), ("lu", 1), ("hol", 1), ("eb", 2),
              ("erope", 1))
#: float tables (name, ndim) in ``F`` order
FLOAT_TABLES = (("si", 2), ("sj", 2), ("ai", 2), ("aj", 2), ("cst", 1), ("f", 2), ("c", 3),
                ("mass", 1), ("inertia", 3), ("gravity", 1), ("Minv", 2), ("M", 2),
                ("a", 1), ("ls", 2), ("coef", 1), ("W", 2), ("row_scale", 1), ("es", 2),
                ("ep", 2))
#: ``coef``: alpha, beta, 2 alpha, beta^2, 2 mu omega, omega^2 (as Python computes them)
FORMS = {"lagrange": 0, "projection": 0, "partitioning": 0, "penalty": 1,
         "augmented_lagrangian": 1}


def pack(tables: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(I, F)`` of ``tables``: the scalars ``m, nv, nq, kd, form, iterations, nl, nu`` and
    every table of :data:`INT_TABLES` and :data:`FLOAT_TABLES`."""
    head = [int(tables[k]) for k in ("m", "nv", "nq", "kd", "form", "iterations", "nl", "nu")]
    nt = len(INT_TABLES) + len(FLOAT_TABLES)
    ints, floats, shapes = [], [], []
    io = N_SCALARS + 4 * nt
    fo = 0
    for name, ndim in INT_TABLES:
        a = np.ascontiguousarray(tables[name], dtype=np.int64)
        assert a.ndim == ndim, name
        shapes.append((io, *a.shape, *([0] * (3 - ndim))))
        ints.append(a.reshape(-1))
        io += a.size
    for name, ndim in FLOAT_TABLES:
        a = np.ascontiguousarray(tables[name], dtype=np.float64)
        assert a.ndim == ndim, name
        shapes.append((fo, *a.shape, *([0] * (3 - ndim))))
        floats.append(a.reshape(-1))
        fo += a.size
    I = np.concatenate([np.array(head, np.int64), np.array(shapes, np.int64).reshape(-1)]
                       + ints)
    F = np.concatenate(floats) if fo else np.zeros(1)
    return I, F


_FUNCS: dict = {}


def function(name: str):
    """The cfunc ``name`` (``"deriv"``, ``"accel"`` or ``"monitor"``; module docstring),
    compiled on first use in the process (from Numba's cache when it has it: about 0.1 s;
    compiling one afresh takes seconds, once per machine)."""
    if not HAVE_NUMBA:
        raise RuntimeError("blocks.multibody.cfuncs needs numba")
    if name not in _FUNCS:
        from numba import types
        sig = types.int32(types.float64, types.CPointer(types.float64),
                          types.CPointer(types.float64), types.CPointer(types.float64),
                          types.CPointer(types.int64), types.CPointer(types.float64))
        body = {"deriv": _deriv, "accel": _accel, "monitor": _monitor}[name]
        _FUNCS[name] = numba.cfunc(sig, cache=True)(body)
    return _FUNCS[name]


def cold() -> str:
    """'' when every cfunc is compiled in this process or in Numba's cache on disk (its index
    file next to this module, or under ``$NUMBA_CACHE_DIR``); else why the C form would first
    wait for a compilation of seconds (``compiled=None`` then keeps the Python loop:
    :meth:`cosim.compiled_route.CompiledRoute.choose`)."""
    import os
    import sys
    from pathlib import Path
    if not HAVE_NUMBA:
        return ""
    here = Path(__file__)
    dirs = [here.parent / "__pycache__"]
    if os.environ.get("NUMBA_CACHE_DIR"):
        dirs.append(Path(os.environ["NUMBA_CACHE_DIR"]))
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    for name, body in (("deriv", _deriv), ("accel", _accel), ("monitor", _monitor)):
        index = f"{here.stem}.{body.__name__}-{body.__code__.co_firstlineno}.{tag}.nbi"
        if name not in _FUNCS and not any(any(d.rglob(index)) for d in dirs if d.is_dir()):
            return ("the multibody block's compiled kernels are not in Numba's cache yet (a "
                    "one-time compilation of 10-20 s: compiled=True does it, later runs "
                    "find them)")
    return ""


NT = len(INT_TABLES) + len(FLOAT_TABLES)
NHEAD = N_SCALARS + 4 * NT


@_inline
def _i1(I, k):
    o = N_SCALARS + 4 * k
    return I[I[o]:I[o] + I[o + 1]]


@_inline
def _i2(I, k):
    o = N_SCALARS + 4 * k
    return I[I[o]:I[o] + I[o + 1] * I[o + 2]].reshape((I[o + 1], I[o + 2]))


@_inline
def _f1(I, F, k):
    o = N_SCALARS + 4 * (len(INT_TABLES) + k)
    return F[I[o]:I[o] + I[o + 1]]


@_inline
def _f2(I, F, k):
    o = N_SCALARS + 4 * (len(INT_TABLES) + k)
    return F[I[o]:I[o] + I[o + 1] * I[o + 2]].reshape((I[o + 1], I[o + 2]))


@_inline
def _f3(I, F, k):
    o = N_SCALARS + 4 * (len(INT_TABLES) + k)
    n = I[o + 1] * I[o + 2] * I[o + 3]
    return F[I[o]:I[o] + n].reshape((I[o + 1], I[o + 2], I[o + 3]))


@_inline
def _end(I, k):
    """The end of table ``k`` (its offset plus its size)."""
    o = N_SCALARS + 4 * k
    return I[o] + I[o + 1] * max(I[o + 2], 1) * max(I[o + 3], 1)


@_inline
def _quat_A(q, i):
    """``geometry.quat_matrix`` of the Euler parameters at ``q[i:i + 4]`` (normalized)."""
    p0, p1, p2, p3 = q[i], q[i + 1], q[i + 2], q[i + 3]
    n = np.sqrt(p0 * p0 + p1 * p1 + p2 * p2 + p3 * p3)
    e0, e1, e2, e3 = p0 / n, p1 / n, p2 / n, p3 / n
    A = np.empty((3, 3))
    A[0, 0] = 2 * (e0 * e0 + e1 * e1) - 1
    A[0, 1] = 2 * (e1 * e2 - e0 * e3)
    A[0, 2] = 2 * (e1 * e3 + e0 * e2)
    A[1, 0] = 2 * (e1 * e2 + e0 * e3)
    A[1, 1] = 2 * (e0 * e0 + e2 * e2) - 1
    A[1, 2] = 2 * (e2 * e3 - e0 * e1)
    A[2, 0] = 2 * (e1 * e3 - e0 * e2)
    A[2, 1] = 2 * (e2 * e3 + e0 * e1)
    A[2, 2] = 2 * (e0 * e0 + e3 * e3) - 1
    return A


@_inline
def _point(kind, iq, iv, b, q, v, s, P, V):
    """``Kin.point``'s ``P`` and ``P'`` of body ``b``'s point ``s'`` into ``P``, ``V``
    (3-vectors; 0 in z for a planar mechanism)."""
    k = kind[b]
    if k == 0:  # ground
        for d in range(3):
            P[d] = s[d]
            V[d] = 0.0
    elif k == 1:  # particle (2 or 3 coordinates)
        n = iq[b + 1] - iq[b]
        for d in range(3):
            P[d] = q[iq[b] + d] + s[d] if d < n else 0.0
            V[d] = v[iv[b] + d] if d < n else 0.0
    elif k == 2:  # planar: r + A s', r' + E A s' w
        th = q[iq[b] + 2]
        c, sn = np.cos(th), np.sin(th)
        a0, a1 = c * s[0] - sn * s[1], sn * s[0] + c * s[1]
        w = v[iv[b] + 2]
        P[0], P[1], P[2] = q[iq[b]] + a0, q[iq[b] + 1] + a1, 0.0
        V[0], V[1], V[2] = v[iv[b]] - a1 * w, v[iv[b] + 1] + a0 * w, 0.0
    else:  # spatial: r + A s', r' + A (w' x s')
        A = _quat_A(q, iq[b] + 3)
        w0, w1, w2 = v[iv[b] + 3], v[iv[b] + 4], v[iv[b] + 5]
        ws0, ws1, ws2 = w1 * s[2] - w2 * s[1], w2 * s[0] - w0 * s[2], w0 * s[1] - w1 * s[0]
        for d in range(3):
            P[d] = q[iq[b] + d] + (A[d, 0] * s[0] + A[d, 1] * s[1] + A[d, 2] * s[2])
            V[d] = v[iv[b] + d] + (A[d, 0] * ws0 + A[d, 1] * ws1 + A[d, 2] * ws2)


@_inline
def _add_point_force(kind, iq, iv, b, q, s, g, Q):
    """``Q[body] += J' g`` of body ``b``'s point ``s'`` (``Kin.point``'s ``J``)."""
    k = kind[b]
    i = iv[b]
    if k == 1:
        for d in range(iq[b + 1] - iq[b]):
            Q[i + d] += g[d]
    elif k == 2:
        th = q[iq[b] + 2]
        c, sn = np.cos(th), np.sin(th)
        a0, a1 = c * s[0] - sn * s[1], sn * s[0] + c * s[1]
        Q[i] += g[0]
        Q[i + 1] += g[1]
        Q[i + 2] += -a1 * g[0] + a0 * g[1]
    elif k == 3:  # [I, -A tilde(s')]' g = [g, s' x (A' g)]
        A = _quat_A(q, iq[b] + 3)
        h0 = A[0, 0] * g[0] + A[1, 0] * g[1] + A[2, 0] * g[2]
        h1 = A[0, 1] * g[0] + A[1, 1] * g[1] + A[2, 1] * g[2]
        h2 = A[0, 2] * g[0] + A[1, 2] * g[1] + A[2, 2] * g[2]
        for d in range(3):
            Q[i + d] += g[d]
        Q[i + 3] += s[1] * h2 - s[2] * h1
        Q[i + 4] += s[2] * h0 - s[0] * h2
        Q[i + 5] += s[0] * h1 - s[1] * h0


@_njit
def _add_springs(Q, I, F, q, v):
    """The point-to-point spring-dampers and ropes (``forces.PointToPoint.apply``, linear)
    into ``Q`` in element order; False where its markers coincide (the Python path raises
    there)."""
    kind, iq, iv = _i1(I, 0), _i1(I, 1), _i1(I, 2)
    eb, erope, es, ep = _i2(I, 22), _i1(I, 23), _f2(I, F, 17), _f2(I, F, 18)
    Pi, Vi, Pj, Vj, g = np.empty(3), np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    for e in range(eb.shape[0]):
        bi, bj = eb[e, 0], eb[e, 1]
        _point(kind, iq, iv, bi, q, v, es[e, :3], Pi, Vi)
        _point(kind, iq, iv, bj, q, v, es[e, 3:], Pj, Vj)
        d0, d1, d2 = Pj[0] - Pi[0], Pj[1] - Pi[1], Pj[2] - Pi[2]
        length = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        if length == 0.0:
            return False
        u0, u1, u2 = d0 / length, d1 / length, d2 / length
        rate = u0 * (Vj[0] - Vi[0]) + u1 * (Vj[1] - Vi[1]) + u2 * (Vj[2] - Vi[2])
        f = ep[e, 0] * (length - ep[e, 2]) + ep[e, 1] * rate
        if erope[e] and (length <= ep[e, 2] or f < 0.0):
            f = 0.0
        g[0], g[1], g[2] = f * u0, f * u1, f * u2
        _add_point_force(kind, iq, iv, bi, q, es[e, :3], g, Q)
        g[0], g[1], g[2] = -g[0], -g[1], -g[2]
        _add_point_force(kind, iq, iv, bj, q, es[e, 3:], g, Q)
    return True


@_njit
def _add_loads(Q, u, I, F, q):
    """The loads' generalized forces into ``Q`` in load order: the operations of
    ``Mechanism._planar_load_forces`` and ``forces.apply_force`` / ``apply_torque`` (planar
    bodies and particles: the same; spatial bodies: ``J' F`` and ``A' n`` summed left to
    right, where NumPy's BLAS has its own order)."""
    lkind, liv, liq, lu = _i1(I, 17), _i1(I, 18), _i1(I, 19), _i1(I, 20)
    ls = _f2(I, F, 13)
    for k in range(lkind.shape[0]):
        i, j = liv[k], lu[k]
        if lkind[k] == 0:  # a force on a planar body
            fx, fy = u[j], u[j + 1]
            th = q[liq[k] + 2]
            c, s = np.cos(th), np.sin(th)
            s0, s1 = ls[k, 0], ls[k, 1]
            a0, a1 = c * s0 - s * s1, s * s0 + c * s1
            Q[i] += fx
            Q[i + 1] += fy
            Q[i + 2] += a0 * fy - a1 * fx
        elif lkind[k] == 1:  # a torque on a planar body
            Q[i + 2] += u[j]
        elif lkind[k] == 2:  # a force on a spatial body: J' F, J = [I, -A tilde(s')]
            A = _quat_A(q, liq[k] + 3)
            s0, s1, s2 = ls[k, 0], ls[k, 1], ls[k, 2]
            for d in range(3):
                Q[i + d] += u[j + d]
            for c in range(3):  # column c of -A tilde(s'): -(A (e_c x s'))
                g = 0.0
                for d in range(3):
                    if c == 0:
                        js = -(A[d, 1] * s2 - A[d, 2] * s1)
                    elif c == 1:
                        js = -(A[d, 2] * s0 - A[d, 0] * s2)
                    else:
                        js = -(A[d, 0] * s1 - A[d, 1] * s0)
                    g += js * u[j + d]
                Q[i + 3 + c] += g
        elif lkind[k] == 3:  # a torque on a spatial body: A' n
            A = _quat_A(q, liq[k] + 3)
            for c in range(3):
                g = 0.0
                for d in range(3):
                    g += A[d, c] * u[j + d]
                Q[i + 3 + c] += g
        else:  # a force on a particle (lkind - 10 components)
            for d in range(lkind[k] - 10):
                Q[i + d] += u[j + d]


@_njit
def _accel_of(x, u, I, F):
    """``(v̇, λ, ok)`` as ``Mechanism.accelerations`` on its compiled path."""
    m, nv, nq, kd = I[H_M], I[H_NV], I[H_NQ], I[H_KD]
    q = x[:nq]
    v = x[nq:nq + nv]
    kind, iq, iv, ncol, sel = _i1(I, 0), _i1(I, 1), _i1(I, 2), _i1(I, 3), _i2(I, 4)
    typ, bi, bj, drv, row = _i1(I, 5), _i1(I, 6), _i1(I, 7), _i1(I, 8), _i1(I, 9)
    nrows, jcol, rbody = _i1(I, 10), _i2(I, 11), _i2(I, 12)
    brow_ptr, brow_idx, brow_slot, rperm = _i1(I, 13), _i1(I, 14), _i1(I, 15), _i1(I, 16)
    si, sj, ai, aj, cst = _f2(I, F, 0), _f2(I, F, 1), _f2(I, F, 2), _f2(I, F, 3), _f1(I, F, 4)
    f, c = _f2(I, F, 5), _f3(I, F, 6)
    mass, inertia, gravity = _f1(I, F, 7), _f3(I, F, 8), _f1(I, F, 9)
    Minv, M, a, coef = _f2(I, F, 10), _f2(I, F, 11), _f1(I, F, 12), _f1(I, F, 14)
    phi, Jc, phit, gamma = constraints_kernel(q, v, kind, iq, iv, ncol, sel, typ, bi, bj, si,
                                              sj, ai, aj, cst, drv, row, nrows, f[0], f[1],
                                              f[2], c[0], c[1], c[2], m, nv)
    Q = forces_kernel(v, kind, iv, mass, inertia, gravity, nv)
    if not _add_springs(Q, I, F, q, v):
        return Q, np.zeros(m), False
    _add_loads(Q, u, I, F, q)
    phid = jmul(Jc, jcol, v) + phit
    if I[H_FORM] == 0:
        rhs = gamma
        if coef[0] != 0.0 or coef[1] != 0.0:
            rhs = gamma - coef[2] * phid - coef[3] * phi
        vd, lam, ok, _ = lagrange_band(Minv, Q, Jc, jcol, rhs, iv, ncol, rbody, brow_ptr,
                                       brow_idx, brow_slot, rperm, kd)
        return vd, lam, ok
    b = -gamma + coef[4] * phid + coef[5] * phi
    return penalty_band(Minv, M, Q, Jc, jcol, a, b, I[H_ITER], iv, ncol, rbody, brow_ptr,
                        brow_idx, brow_slot, rperm, kd)


def _deriv(t, xp, up, dxp, Ip, Fp):
    """The ``deriv`` cfunc's body (module docstring)."""
    head = numba.carray(Ip, NHEAD)
    I = numba.carray(Ip, _end(head, len(INT_TABLES) - 1))
    F = numba.carray(Fp, max(_end(head, NT - 1), 1))
    m, nv, nq, kd = I[H_M], I[H_NV], I[H_NQ], I[H_KD]
    x = numba.carray(xp, nq + nv)
    u = numba.carray(up, max(I[H_NU], 1))
    dx = numba.carray(dxp, nq + nv)
    q = x[:nq]
    v = x[nq:nq + nv]
    kind, iq, iv, ncol = _i1(I, 0), _i1(I, 1), _i1(I, 2), _i1(I, 3)
    if I[H_FORM] == 0:  # MultibodyBlock.derivatives: the fused call
        sel, typ, bi, bj, drv = _i2(I, 4), _i1(I, 5), _i1(I, 6), _i1(I, 7), _i1(I, 8)
        row, nrows, jcol, rbody = _i1(I, 9), _i1(I, 10), _i2(I, 11), _i2(I, 12)
        brow_ptr, brow_idx, brow_slot, rperm = _i1(I, 13), _i1(I, 14), _i1(I, 15), _i1(I, 16)
        si, sj, ai, aj = _f2(I, F, 0), _f2(I, F, 1), _f2(I, F, 2), _f2(I, F, 3)
        cst, f, c = _f1(I, F, 4), _f2(I, F, 5), _f3(I, F, 6)
        mass, inertia, gravity = _f1(I, F, 7), _f3(I, F, 8), _f1(I, F, 9)
        Minv, coef = _f2(I, F, 10), _f1(I, F, 14)
        qe = np.zeros(nv)  # Mechanism.external_forces: the elements, then the loads
        if not _add_springs(qe, I, F, q, v):
            return 0
        _add_loads(qe, u, I, F, q)
        out, ok, _ = derivative_kernel(q, v, kind, iq, iv, ncol, sel, typ, bi, bj, si, sj, ai,
                                       aj, cst, drv, row, nrows, f[0], f[1], f[2], c[0], c[1],
                                       c[2], m, nv, mass, inertia, gravity, Minv, coef[0],
                                       coef[1], qe, jcol, rbody, brow_ptr, brow_idx,
                                       brow_slot, rperm, kd)
        if not ok:
            return 0
        for i in range(nq + nv):
            dx[i] = out[i]
        return 1
    vd, _, ok = _accel_of(x, u, I, F)  # the accelerations, then q' (the derivatives)
    if not ok:
        return 0
    qd = qdot_kernel(q, v, kind, iq, iv, ncol)
    for i in range(nq):
        dx[i] = qd[i]
    for i in range(nv):
        dx[nq + i] = vd[i]
    return 1


def _accel(t, xp, up, outp, Ip, Fp):
    """The ``accel`` cfunc's body (module docstring)."""
    head = numba.carray(Ip, NHEAD)
    I = numba.carray(Ip, _end(head, len(INT_TABLES) - 1))
    F = numba.carray(Fp, max(_end(head, NT - 1), 1))
    m, nv, nq = I[H_M], I[H_NV], I[H_NQ]
    x = numba.carray(xp, nq + nv)
    u = numba.carray(up, max(I[H_NU], 1))
    out = numba.carray(outp, nv + m)
    vd, lam, ok = _accel_of(x, u, I, F)
    if not ok:
        return 0
    for i in range(nv):
        out[i] = vd[i]
    for i in range(m):
        out[nv + i] = lam[i]
    return 1


def _monitor(t, xp, up, outp, Ip, Fp):
    """The ``monitor`` cfunc's body (module docstring): ``Tables.monitor`` at ``q``."""
    head = numba.carray(Ip, NHEAD)
    I = numba.carray(Ip, _end(head, len(INT_TABLES) - 1))
    F = numba.carray(Fp, max(_end(head, NT - 1), 1))
    m, nv, nq, kd = I[H_M], I[H_NV], I[H_NQ], I[H_KD]
    x = numba.carray(xp, nq + nv)
    out = numba.carray(outp, 4)
    q = x[:nq]
    kind, iq, iv, ncol, sel = _i1(I, 0), _i1(I, 1), _i1(I, 2), _i1(I, 3), _i2(I, 4)
    typ, bi, bj, drv, row = _i1(I, 5), _i1(I, 6), _i1(I, 7), _i1(I, 8), _i1(I, 9)
    nrows, rbody = _i1(I, 10), _i2(I, 12)
    brow_ptr, brow_idx, brow_slot, rperm = _i1(I, 13), _i1(I, 14), _i1(I, 15), _i1(I, 16)
    si, sj, ai, aj, cst = _f2(I, F, 0), _f2(I, F, 1), _f2(I, F, 2), _f2(I, F, 3), _f1(I, F, 4)
    f, c = _f2(I, F, 5), _f3(I, F, 6)
    W, row_scale, holi = _f2(I, F, 15), _f1(I, F, 16), _i1(I, 21)
    hol = np.empty(m, np.bool_)  # Mechanism.holonomic's type
    for r in range(m):
        hol[r] = holi[r] != 0
    rho, dep, drift, worst = monitor_kernel(q, kind, iq, iv, ncol, sel, typ, bi, bj, si, sj,
                                            ai, aj, cst, drv, row, nrows, f[0], f[1], f[2],
                                            c[0], c[1], c[2], m, nv, rbody, brow_ptr,
                                            brow_idx, brow_slot, rperm, kd, W, 1e-10, hol,
                                            row_scale)
    out[0] = rho
    out[1] = dep
    out[2] = drift
    out[3] = worst
    return 1
