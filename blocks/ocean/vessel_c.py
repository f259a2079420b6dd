"""C form of :class:`~blocks.ocean.vessel.Vessel6DOF`: :meth:`Vessel6DOF.derivatives` and its
outputs written out expression by expression.

The mass, added-mass and damping matrices (:math:`M_c`, :math:`D`, :math:`(M_{RB}+M_A)^{-1}`
as the block computed them), the restoring coefficients, the hull points and the norm gain
are C constants.  Rotation matrix, cross products, hydrostatic and applied loads follow the
Python code term by term; ``atan2``/``asin``/``sqrt`` are libm's, as :mod:`math`'s.

Limitation: NumPy's small products (``np.dot``/``@`` of the quaternion's norm, ``R @ v``,
``R.T @ F``, the 6x6 ``Mc @ nu``, ``D @ nu``, ``Minv @ tau``) go to OpenBLAS, whose kernels
sum in an order of their own and use fused multiply-adds on CPUs that have them (chosen at
run time: ``DYNAMIC_ARCH``), so they cannot be reproduced in portable C; C sums in index
order.  The compiled run agrees with the Python loop to the rounding of these sums (about
1e-16 relative per step, 1e-12 of each signal's range over the tests' runs), not bit for
bit.  The function takes the block (duck-typed) and does not import
:mod:`blocks.ocean.vessel`.
"""

from __future__ import annotations

import numpy as np

from cosim.codegen.model import CContext, CModel, c_float

__all__ = ["vessel6dof_c"]


def _cross(a, b, k: int) -> str:
    """Component ``k`` of ``a x b`` as NumPy's ``np.cross`` computes it."""
    i, j = (k + 1) % 3, (k + 2) % 3
    return f"({a[i]} * {b[j]} - {a[j]} * {b[i]})"


def _matvec(m: str, n: int, v, i: int) -> str:
    """Row ``i`` of the constant ``n x n`` array ``m`` times ``v``, in index order."""
    return "(" + " + ".join(f"{m}[{n * i + j}] * {v[j]}" for j in range(n)) + ")"


def _vec(name: str, n: int = 3) -> list[str]:
    return [f"{name}[{k}]" for k in range(n)]


def vessel6dof_c(block, cg: CContext) -> CModel:
    """C of :meth:`Vessel6DOF.derivatives` and every output (module docstring)."""
    X = [cg.x(block.x, i) for i in range(13)]
    Mc, D, Minv = (cg.const(np.ascontiguousarray(m, dtype=float))
                   for m in (block.Mc, block.D, block.Minv))
    c33, c44, c55, zeq = (c_float(v) for v in (block.c33, block.c44, block.c55, block.z_eq))
    # quat_matrix: q / sqrt(q . q), then the matrix entries as written
    rot = ("double qq = " + " + ".join(f"{X[3 + k]} * {X[3 + k]}" for k in range(4)) + ";\n"
           "double sq_ = sqrt(qq);\n"
           + "".join(f"double {c}_ = {X[3 + k]} / sq_;\n" for k, c in enumerate("wxyz"))
           + "double R[3][3];\n"
           "R[0][0] = 1 - 2 * (y_ * y_ + z_ * z_); R[0][1] = 2 * (x_ * y_ - w_ * z_); "
           "R[0][2] = 2 * (x_ * z_ + w_ * y_);\n"
           "R[1][0] = 2 * (x_ * y_ + w_ * z_); R[1][1] = 1 - 2 * (x_ * x_ + z_ * z_); "
           "R[1][2] = 2 * (y_ * z_ - w_ * x_);\n"
           "R[2][0] = 2 * (x_ * z_ - w_ * y_); R[2][1] = 2 * (y_ * z_ + w_ * x_); "
           "R[2][2] = 1 - 2 * (x_ * x_ + y_ * y_);\n(void)qq;\n")

    def rv(i, v):   # (R @ v)[i]
        return f"(R[{i}][0] * {v[0]} + R[{i}][1] * {v[1]} + R[{i}][2] * {v[2]})"

    def rtv(i, v):  # (R.T @ v)[i]
        return f"(R[0][{i}] * {v[0]} + R[1][{i}] * {v[1]} + R[2][{i}] * {v[2]})"

    # applied_load + hydrostatic_load, then - (coriolis + D nu), then Minv tau
    acc = [rot, "double tau[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, fb[3], u[3], dv[3], "
           "h[6], ph[6], cor[6], nd[6], nuv[6];", "int i_;"]
    if block.f_in is not None:
        F = [cg.u(block.f_in, k) for k in range(3)]
        M = [cg.u(block.m_in, k) for k in range(3)]
        acc += [f"tau[{k}] += {rtv(k, F)};" for k in range(3)]
        acc += [f"tau[{k + 3}] += {rtv(k, M)};" for k in range(3)]
    if block.wf_in is not None:
        acc += [f"tau[{k}] += {cg.u(block.wf_in, k)};" for k in range(3)]
        acc += [f"tau[{k + 3}] += {cg.u(block.wm_in, k)};" for k in range(3)]
    for port, s in block.lp_in:
        P = [cg.u(port, k) for k in range(3)]
        sc = [c_float(float(v)) for v in s]
        acc += [f"fb[{k}] = {rtv(k, P)};" for k in range(3)]
        acc += [f"tau[{k}] += fb[{k}];" for k in range(3)]
        acc += [f"tau[{k + 3}] += {_cross(sc, _vec('fb'), k)};" for k in range(3)]
    acc += ["u[0] = R[2][0]; u[1] = R[2][1]; u[2] = R[2][2];",
            f"dv[0] = {c55} * u[0]; dv[1] = {c44} * u[1]; dv[2] = 0.0;"]
    acc += [f"h[{k}] = (-({c33})) * ({X[2]} - ({zeq})) * u[{k}];" for k in range(3)]
    acc += [f"h[{k + 3}] = {_cross(_vec('u'), _vec('dv'), k)};" for k in range(3)]
    acc += ["for (i_ = 0; i_ < 6; i_++) tau[i_] = tau[i_] + h[i_];"]
    acc += [f"nuv[{k}] = {X[7 + k]};" for k in range(6)]
    acc += [f"ph[{i}] = {_matvec(Mc.ptr, 6, _vec('nuv', 6), i)};" for i in range(6)]
    w, v, p, hh = _vec("nuv", 6)[3:], _vec("nuv", 6)[:3], _vec("ph", 6)[:3], _vec("ph", 6)[3:]
    acc += [f"cor[{k}] = {_cross(w, p, k)};" for k in range(3)]
    acc += [f"cor[{k + 3}] = {_cross(w, hh, k)} + {_cross(v, p, k)};" for k in range(3)]
    acc += [f"tau[{i}] -= cor[{i}] + {_matvec(D.ptr, 6, _vec('nuv', 6), i)};"
            for i in range(6)]
    acc += [f"nd[{i}] = {_matvec(Minv.ptr, 6, _vec('tau', 6), i)};" for i in range(6)]
    acc_code = "\n".join(acc) + "\n"

    qw, qx, qy, qz = X[3:7]
    pr, rr, ss = X[10:13]
    rate = [f"(-{qx}) * {pr} - {qy} * {rr} - {qz} * {ss}",
            f"{qw} * {pr} + {qy} * {ss} - {qz} * {rr}",
            f"{qw} * {rr} + {qz} * {pr} - {qx} * {ss}",
            f"{qw} * {ss} + {qx} * {rr} - {qy} * {pr}"]
    ng = c_float(block.norm_gain)
    der = (acc_code
           + "".join(f"{cg.dx(block.x, k)} = {rv(k, X[7:10])};\n" for k in range(3))
           + "{\n    double g_ = " + ng + " * (1.0 - qq);\n"
           + "".join(f"    {cg.dx(block.x, 3 + k)} = 0.5 * ({rate[k]}) + g_ * {X[3 + k]};\n"
                     for k in range(4)) + "}\n"
           + "".join(f"{cg.dx(block.x, 7 + k)} = nd[{k}];\n" for k in range(6)))

    outs = {
        "position": "".join(f"{cg.y(block.output('position'), k)} = {X[k]};\n"
                            for k in range(3)),
        "quaternion": rot + "".join(f"{cg.y(block.output('quaternion'), k)} = {X[3 + k]} / sq_;\n"
                                    for k in range(4)),
        "rotation": rot + "double r_ = R[2][0] > -1.0 ? R[2][0] : -1.0;\n"
                    "r_ = r_ < 1.0 ? r_ : 1.0;\n"
                    f"{cg.y(block.output('rotation'), 0)} = atan2(R[2][1], R[2][2]);\n"
                    f"{cg.y(block.output('rotation'), 1)} = -asin(r_);\n"
                    f"{cg.y(block.output('rotation'), 2)} = atan2(R[1][0], R[0][0]);\n",
        "heading": rot + f"{cg.y(block.output('heading'))} = atan2(R[1][0], R[0][0]);\n",
        "nu": "".join(f"{cg.y(block.output('nu'), k)} = {X[7 + k]};\n" for k in range(6)),
        "velocity": rot + "".join(f"{cg.y(block.output('velocity'), k)} = {rv(k, X[7:10])};\n"
                                  for k in range(3)),
        "angular_velocity": rot + "".join(
            f"{cg.y(block.output('angular_velocity'), k)} = {rv(k, X[10:13])};\n"
            for k in range(3)),
        "nu_dot": acc_code + "".join(f"{cg.y(block.output('nu_dot'), k)} = nd[{k}];\n"
                                     for k in range(6)),
    }
    for name, s in block.points.items():
        sc = [c_float(float(a)) for a in s]
        cw = [f"({X[7 + k]} + {_cross(X[10:13], sc, k)})" for k in range(3)]
        outs[f"{name}_pos"] = (rot + "".join(
            f"{cg.y(block.output(name + '_pos'), k)} = {X[k]} + {rv(k, sc)};\n"
            for k in range(3)) + "".join(
            f"{cg.y(block.output(name + '_vel'), k)} = {rv(k, cw)};\n" for k in range(3)))
        outs[f"{name}_vel"] = ""
        ws = [f"ws[{k}]" for k in range(3)]
        outs[f"{name}_acc"] = (
            acc_code + "double ws[3], a_[3];\n"
            + "".join(f"ws[{k}] = {_cross(X[10:13], sc, k)};\n" for k in range(3))
            + "".join(f"a_[{k}] = nd[{k}] + {_cross(X[10:13], X[7:10], k)} + "
                      f"{_cross(['nd[3]', 'nd[4]', 'nd[5]'], sc, k)} + "
                      f"{_cross(X[10:13], ws, k)};\n" for k in range(3))
            + "".join(f"{cg.y(block.output(name + '_acc'), k)} = {rv(k, _vec('a_'))};\n"
                      for k in range(3)))
    return CModel(outputs={k: "{\n" + c + "}" for k, c in outs.items()}, derivatives=der)
