"""The C form of :class:`~blocks.multibody.block.MultibodyBlock` (the compiled Simulator).

The C does not rewrite the mechanism's equations: it calls the block's own compiled
kernels (:mod:`.fast`, :mod:`.sparse`) through the Numba ``cfunc`` of :mod:`.cfuncs`, by
address (``CContext.extern_fn``), with the mechanism's tables as constants of the C
(:func:`.cfuncs.pack`).  The same machine code runs in the same order as the Python path,
so a run in C equals the Python loop's bit for bit (``tests/system/test_c_forms_multibody.py``),
except with spring-dampers and where a spatial body takes a load or has a marker output:
NumPy computes ``J' F``, ``A' n``, ``A s'`` and ``d . d`` with BLAS, in an order of its
own, where the C sums left to right (1e-12 of the range; measured on the corpus after
0.3 s: 5.1e-13 with loads and markers on the spatial RSSR, 2.6e-13 with springs).

=================  ==============================================================
derivatives        ``deriv``: the fused ``derivative_kernel`` (``lagrange``,
                   ``projection``, ``partitioning``), or ``Mechanism.accelerations``'
                   compiled path and ``q' = T(q) v`` (``penalty``,
                   ``augmented_lagrangian``); the loads' and the linear point-to-point
                   spring-dampers' generalized forces in the cfunc, in the order of
                   ``Mechanism.external_forces`` (elements, then loads)
``q``, ``v``       copies of the state
markers            planar bodies: ``bodies.planar_point`` in C (the same operations,
                   ``cos``/``sin`` of the C library as ``math``'s); particles: ``r + s'``
                   and ``r'``; spatial bodies: ``Kin.point`` in C (1e-12, above)
``<j>_reaction``   ``accel``: ``-λ`` of the joint's rows
=================  ==============================================================

A mechanism without constraints (particles and planar bodies: free bodies, on its compiled
or its Python path) needs no kernel: plain C, ``q' = v``, ``Q`` = gravity then the loads,
``v̇ = Q / diag(M)`` (the Python path's ``np.linalg.solve`` of the diagonal ``M``, which
LAPACK solves by division: the tests check it bit for bit).

Where the Python path leaves the compiled solve (a singular or redundant configuration: its
general path, ``Mechanism.accelerations``; coinciding spring markers: its error), the cfunc
says so and the C run fails: the Python loop takes the slice over and gives its own result
or error.  Limitation: the Python loop may then keep a reduced set of constraint rows
(``redundancy.RowSet``) while it stays valid, and its reaction outputs come from those rows;
a later advance in C computes the reactions from all rows (the derivatives do not depend
on it: the block's fused path ignores the set, in both loops).

The block's monitor (``_check_constraints``) has a C condition where the codegen has
``CModel.monitors`` (:func:`monitor_condition`, from the ``monitor`` cfunc): the C returns
to Python where the Python monitor would check further or raise.

No C form (the reason is the error, and the compiled Simulator's ``diagnostics``): with
constraints, without Numba or with the mechanism on its Python path (``compiled=False``, a
primitive the kernel lacks, dropped rows); without constraints, spatial bodies (a dense
``M`` block solved by LAPACK), a penalty formulation or force elements; redundant rows at
the start (index-1 forms: the dense path), driving functions of time (Python callables),
force elements other than linear point-to-point spring-dampers and ropes (``force=``
callables, marker forces, bushings, contacts), a torque on a particle (the Python path
refuses it), the periodic corrections of ``projection`` and ``partitioning`` (a Python
update that sets the continuous state, which a C form's update cannot).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from cosim.codegen.model import CModel, CodegenError, c_float

try:  # the C conditions of monitors (CModel.monitors), where the codegen has them
    from cosim.codegen.model import CMonitor
except ImportError:  # pragma: no cover - a codegen without monitors in C
    CMonitor = None

from . import cfuncs
from ._numba import HAVE_NUMBA
from .forces import PointToPoint

#: C type of the cfuncs (:mod:`.cfuncs`)
C_RET, C_ARGS = "int", "double, const double *, const double *, double *, const int64_t *, " \
    "const double *"


def reason(block: Any) -> str:
    """Why ``block`` has no C form ('' when it has one)."""
    mech, form = block.mech, block.form
    t = mech._tables
    if not mech.m:  # free bodies: plain C (_free_bodies)
        if any(b.kind == "spatial" for b in mech.moving):
            return (f"mechanism '{mech.name}' has no constraints and spatial bodies (its "
                    "Python path solves M v' = Q with LAPACK)")
        if form.kind in ("penalty", "augmented_lagrangian"):
            return f"the {form.kind} formulation of a mechanism without constraints"
    elif not HAVE_NUMBA:
        return "it needs numba (pip install 'cosim[fast]'): its C calls the compiled kernels"
    elif t is None:
        return (f"mechanism '{mech.name}' runs on its Python path (compiled=False, a joint "
                "the compiled kernel lacks, or dropped rows)")
    index1 = form.kind in ("lagrange", "projection", "partitioning")
    if mech.m and index1 and (mech.rows.reduced or not block._fused):
        return (f"mechanism '{mech.name}' has redundant constraint rows (the index-1 "
                "formulations solve them on the dense Python path)")
    if form.kind in ("projection", "partitioning"):
        return f"the {form.kind} formulation's periodic correction is Python"
    if t is not None and (t._varying or t.path_fns):
        return "driving functions of time are Python callables"
    python = [f"'{n}' ({type(e).__name__})" for n, e in mech.elements.items()
              if not (isinstance(e, PointToPoint) and e.force is None) or not mech.m]
    if python:
        return f"force elements {', '.join(python)} are Python"
    for name in mech.load_names:
        kind, m = mech.loads[name]
        if kind == "torque" and m.body.kind == "particle":
            return f"load '{name}' is a torque on a particle (the Python path refuses it)"
    return ""


def _markers(block: Any) -> list:
    """``[((pos port, base name), marker)]`` of the block's marker outputs."""
    return [((f"{m.body.name}_{m.name}_pos", f"{m.body.name}_{m.name}"), m)
            for m in block._markers]


def tables(block: Any) -> dict:
    """The packed tables' contents (:func:`.cfuncs.pack`) of ``block``."""
    mech, form = block.mech, block.form
    t, bd = mech._tables, mech._tables.band
    lkind, liv, liq, lu, ls = [], [], [], [], []
    j = 0
    for name in mech.load_names:
        kind, m = mech.loads[name]
        code = {"planar": 0, "spatial": 2}.get(m.body.kind)
        lkind.append(10 + mech.dim if code is None else code + (kind == "torque"))
        liv.append(m.body.iv)
        liq.append(m.body.iq)
        lu.append(j)
        ls.append(np.r_[m.s, np.zeros(3 - m.s.size)])
        j += mech.dim if kind == "force" else 1
    index = {b: k for k, b in enumerate(mech.bodies.values())}  # Tables' body order
    springs = list(mech.elements.values())
    eb = np.array([(index[e.mi.body], index[e.mj.body]) for e in springs], np.int64)
    es = np.array([np.r_[e.mi.s, np.zeros(3 - e.mi.s.size), e.mj.s,
                         np.zeros(3 - e.mj.s.size)] for e in springs], float)
    ep = np.array([(e.k, e.c, e.l0) for e in springs], float)
    pen = form.kind in ("penalty", "augmented_lagrangian")
    coef = [block._alpha, block._beta, 2.0 * block._alpha, block._beta ** 2,
            2.0 * form.mu * form.omega, form.omega ** 2]
    return dict(
        m=t.m, nv=t.nv, nq=mech.nq, kd=bd.kd_r, form=cfuncs.FORMS[form.kind],
        iterations=form.iterations if form.kind == "augmented_lagrangian" else 0,
        nl=len(lkind), nu=j, kind=t.kind, iq=t.iq, iv=t.iv, ncol=t.ncol, sel=t.sel,
        typ=t.typ, bi=t.bi, bj=t.bj, drv=t.drv, row=t.row, nrows=t.nrows, jcol=t.jcol,
        rbody=t.rbody, brow_ptr=bd.brow_ptr, brow_idx=bd.brow_idx, brow_slot=bd.brow_slot,
        rperm=bd.rperm, lkind=np.array(lkind, np.int64), liv=np.array(liv, np.int64),
        liq=np.array(liq, np.int64), lu=np.array(lu, np.int64), si=t.si, sj=t.sj, ai=t.ai,
        aj=t.aj, cst=t.cst, f=t._f, c=t._c, mass=t.mass, inertia=t.inertia,
        gravity=t.gravity, Minv=mech.Minv, M=mech.M,
        a=form.penalty * mech.penalty_rows if pen else np.zeros(t.m),
        ls=np.array(ls, float).reshape(-1, 3), coef=np.array(coef, float),
        hol=np.asarray(mech.holonomic, np.int64), W=t.minv, row_scale=mech.row_scale,
        eb=eb.reshape(-1, 2), erope=np.array([e.rope for e in springs], np.int64),
        es=es.reshape(-1, 6), ep=ep.reshape(-1, 3))


def c_model(block: Any, cg: Any) -> CModel:
    """The C form of ``block`` (module docstring), or a CodegenError naming why not."""
    why = reason(block)
    if why:
        raise CodegenError(f"block '{block.path}' (MultibodyBlock) has no C form: {why}")
    mech = block.mech
    outputs = {
        "q": "\n".join(f"{cg.y('q', i)} = {cg.x(block.x, i)};" for i in range(mech.nq)),
        "v": "\n".join(f"{cg.y('v', i)} = {cg.x(block.x, mech.nq + i)};"
                        for i in range(mech.nv))}
    for (name, base), mk in _markers(block):
        outputs.update(_marker_c(block, cg, name, f"{base}_vel", mk))
    if not mech.m:
        return CModel(outputs=outputs, derivatives=_free_bodies(block, cg))
    deriv = cg.extern_fn("blocks.multibody.cfuncs.deriv", C_RET, C_ARGS,
                         cfuncs.function("deriv").address)
    I, F = cfuncs.pack(tables(block))
    inames = _int_table(cg, I)
    fname = cg.const(F if F.size > 1 else np.r_[F, 0.0]).ptr  # (an array, not a literal)
    nv, m = mech.nv, mech.m
    x0 = f"&{cg.x(block.x, 0)}"
    dx0 = f"&{cg.dx(block.x, 0)}"
    ulines, nu = _loads(block, cg)
    where = (f"block '{block.path}': the compiled solve left the mechanism's fast path (a "
             "singular or redundant configuration); the Python loop takes over")
    derivs = (f"{ulines}\nif (!{deriv}(t, {x0}, u_, {dx0}, {inames}, {fname})) "
              f"{cg.fail(where)}")
    if block._reactions:
        accel = cg.extern_fn("blocks.multibody.cfuncs.accel", C_RET, C_ARGS,
                             cfuncs.function("accel").address)
        for jname, rows in block._reactions:
            port = f"{jname}_reaction"
            body = "\n".join(f"{cg.y(port, k)} = -o_[{nv + r}];"
                             for k, r in enumerate(range(rows.start, rows.stop)))
            outputs[port] = (f"{ulines}\ndouble o_[{nv + m}] = {{0.0}};\n"
                             f"if (!{accel}(t, {x0}, u_, o_, {inames}, {fname})) "
                             f"{cg.fail(where)}\n{body}")
    cm = CModel(outputs=outputs, derivatives=derivs)
    if CMonitor is not None and block.monitors:
        cm.monitors = {"constraints": CMonitor(monitor_condition(block, cg, inames, fname))}
    return cm


def monitor_condition(block: Any, cg: Any, inames: str, fname: str) -> str:
    """The C condition of the block's monitor (``_check_constraints``): true where the
    Python monitor checks further or raises (``singular_tol > 0`` and more dependent rows
    than at assembly or ``rho < singular_tol``; ``drift > drift_tol``), from the ``monitor``
    cfunc (``Tables.monitor``: the same numbers)."""
    fn = cg.extern_fn("blocks.multibody.cfuncs.monitor", C_RET, C_ARGS,
                      cfuncs.function("monitor").address)
    conds = []
    if block.singular_tol > 0:
        conds.append(f"o_[1] > {block._redundant} || o_[0] < {c_float(block.singular_tol)}")
    if block.drift_tol is not None:
        conds.append(f"o_[2] > {c_float(block.drift_tol)}")
    code = (f"{{\n    double o_[4], u_[1] = {{0.0}};\n    {fn}(t, x, u_, o_, {inames}, {fname});"
            f"\n    return {' || '.join(f'({c})' for c in conds) or '0'};\n}}")
    name = "MB_MON_" + hashlib.sha256(code.encode()).hexdigest()[:16]
    cg.helper(name, f"static int {name}(const double *x, double t) {code}")
    return f"{name}(&{cg.x(block.x, 0)}, {cg.t})"


def _free_bodies(block: Any, cg: Any) -> str:
    """The derivatives of a mechanism without constraints, particles and planar bodies (plain
    C): ``q' = v``; ``Q`` = gravity, then the loads (``Mechanism.forces``: the same
    operations in the same order); ``v̇ = Q / diag(M)`` (``np.linalg.solve`` of the
    diagonal ``M``: LAPACK divides, which the tests check bit for bit)."""
    mech = block.mech
    nq = mech.nq
    ulines, _ = _loads(block, cg)
    lines = [ulines, f"double Q_[{max(1, mech.nv)}];"]
    for b in mech.moving:
        for d in range(b.nv):
            lines.append(f"{cg.dx(block.x, b.iq + d)} = {cg.x(block.x, nq + b.iv + d)};")
            g = mech.gravity[d] if d < mech.dim else None
            grav = f"0.0 + {c_float(b.mass)} * {c_float(g)}" if g is not None else "0.0"
            lines.append(f"Q_[{b.iv + d}] = {grav};")
    j = 0
    for name in mech.load_names:
        kind, m = mech.loads[name]
        i = m.body.iv
        if m.body.kind == "planar" and kind == "force":
            s0, s1 = (c_float(v) for v in m.s.tolist())
            th = cg.x(block.x, m.body.iq + 2)
            lines.append(f"{{ const double c_ = cos({th}), s_ = sin({th});\n"
                         f"  const double a0_ = c_ * {s0} - s_ * {s1}, "
                         f"a1_ = s_ * {s0} + c_ * {s1};\n"
                         f"  Q_[{i}] += u_[{j}]; Q_[{i + 1}] += u_[{j + 1}];\n"
                         f"  Q_[{i + 2}] += a0_ * u_[{j + 1}] - a1_ * u_[{j}]; }}")
        elif kind == "torque":
            lines.append(f"Q_[{i + 2}] += u_[{j}];")
        else:
            lines += [f"Q_[{i + d}] += u_[{j + d}];" for d in range(mech.dim)]
        j += mech.dim if kind == "force" else 1
    for i in range(mech.nv):
        lines.append(f"{cg.dx(block.x, nq + i)} = Q_[{i}] / {c_float(mech.M[i, i])};")
    return "\n".join(lines)


def _int_table(cg: Any, I: np.ndarray) -> str:
    """``I`` as a file-scope ``static const int64_t`` array; its name."""
    name = "MB_I_" + hashlib.sha256(I.tobytes()).hexdigest()[:16]
    body = ", ".join(f"INT64_C({int(v)})" for v in I)
    cg.helper(name, f"static const int64_t {name}[{I.size}] = {{{body}}};")
    return name


def _loads(block: Any, cg: Any) -> tuple[str, int]:
    """C declaring ``u_``: the load inputs in ``Mechanism.load_names`` order."""
    vals = []
    for _name, port in block._loads:
        vals += [cg.u(port, k) if port.size > 1 else cg.u(port) for k in range(port.size)]
    decl = f"double u_[{max(1, len(vals))}];"
    if not vals:
        return decl + "\nu_[0] = 0.0;", 0
    return decl + "\n" + "\n".join(f"u_[{k}] = {v};" for k, v in enumerate(vals)), len(vals)


def _marker_c(block: Any, cg: Any, pos: str, vel: str, m: Any) -> dict:
    """The C of a marker's position and velocity outputs (``MultibodyBlock._marker_out``)."""
    b, nq = m.body, block.mech.nq
    if b.kind == "planar":
        s0, s1 = (c_float(v) for v in m.s.tolist())
        x = [cg.x(block.x, b.iq + k) for k in range(3)]
        v = [cg.x(block.x, nq + b.iv + k) for k in range(3)]
        code = (f"const double c_ = cos({x[2]}), s_ = sin({x[2]});\n"
                f"const double a0_ = c_ * {s0} - s_ * {s1}, a1_ = s_ * {s0} + c_ * {s1};\n"
                f"{cg.y(pos, 0)} = {x[0]} + a0_;\n{cg.y(pos, 1)} = {x[1]} + a1_;\n"
                f"{cg.y(vel, 0)} = {v[0]} - a1_ * {v[2]};\n"
                f"{cg.y(vel, 1)} = {v[1]} + a0_ * {v[2]};")
        return {pos: code, vel: ""}
    if b.kind == "spatial":
        return {pos: _spatial_point(block, cg, pos, vel, m), vel: ""}
    d = block.mech.dim
    lines = []
    for k in range(d):
        s = c_float(float(m.s[k]))
        if b.kind == "ground":
            lines += [f"{cg.y(pos, k)} = {s};", f"{cg.y(vel, k)} = 0.0;"]
        else:  # a particle: r + s', r'
            lines += [f"{cg.y(pos, k)} = {cg.x(block.x, b.iq + k)} + {s};",
                      f"{cg.y(vel, k)} = {cg.x(block.x, nq + b.iv + k)};"]
    return {pos: "\n".join(lines), vel: ""}


def _spatial_point(block: Any, cg: Any, pos: str, vel: str, m: Any) -> str:
    """``Kin.point`` of a spatial body in C: ``A`` of the Euler parameters normalized by
    ``sqrt(p . p)`` (``geometry.quat_matrix``), ``P = r + A s'``, ``P' = r' + A (w' x s')``
    (``geometry.cross``); the sums left to right.  NumPy computes ``p . p`` and ``A s'``
    with BLAS, whose order of operations is its own: equal to 1e-12 of the range (the
    tests), bit for bit where BLAS sums left to right."""
    b, nq = m.body, block.mech.nq
    q = [cg.x(block.x, b.iq + k) for k in range(7)]
    v = [cg.x(block.x, nq + b.iv + k) for k in range(6)]
    s0, s1, s2 = (c_float(x) for x in m.s.tolist())
    rows = ("2.0 * (e0 * e0 + e1 * e1) - 1.0", "2.0 * (e1 * e2 - e0 * e3)",
            "2.0 * (e1 * e3 + e0 * e2)", "2.0 * (e1 * e2 + e0 * e3)",
            "2.0 * (e0 * e0 + e2 * e2) - 1.0", "2.0 * (e2 * e3 - e0 * e1)",
            "2.0 * (e1 * e3 - e0 * e2)", "2.0 * (e2 * e3 + e0 * e1)",
            "2.0 * (e0 * e0 + e3 * e3) - 1.0")
    lines = [f"const double p0 = {q[3]}, p1 = {q[4]}, p2 = {q[5]}, p3 = {q[6]};",
             "const double n_ = sqrt(p0 * p0 + p1 * p1 + p2 * p2 + p3 * p3);",
             "const double e0 = p0 / n_, e1 = p1 / n_, e2 = p2 / n_, e3 = p3 / n_;",
             "const double A[9] = {" + ", ".join(rows) + "};",
             f"const double w0 = {v[3]}, w1 = {v[4]}, w2 = {v[5]};",
             f"const double ws[3] = {{w1 * {s2} - w2 * {s1}, w2 * {s0} - w0 * {s2}, "
             f"w0 * {s1} - w1 * {s0}}};"]
    for i in range(3):
        lines.append(f"{cg.y(pos, i)} = {q[i]} + (A[{3 * i}] * {s0} + A[{3 * i + 1}] * {s1}"
                     f" + A[{3 * i + 2}] * {s2});")
        lines.append(f"{cg.y(vel, i)} = {v[i]} + (A[{3 * i}] * ws[0] + A[{3 * i + 1}] * ws[1]"
                     f" + A[{3 * i + 2}] * ws[2]);")
    return "\n".join(lines)
