"""C forms of the drive blocks of :mod:`blocks.electric.pmsm`.

Each ``*_c_model(blk, cg)`` is the body of the block's ``c_model``: it reads the block ``blk``'s
attributes (ports, states, parameters) and mirrors its Python arithmetic expression by
expression.  This module does not import :mod:`blocks.electric.pmsm` (it imports this one).
"""

from __future__ import annotations

import math
from typing import Any

from cosim.codegen.model import CModel, c_float
from cosim.codegen.pymath import py_hypot

#: :data:`blocks.electric.pmsm.SQRT3` (the same ``math.sqrt(3.0)``)
SQRT3 = math.sqrt(3.0)

#: C of :func:`~blocks.electric.pmsm.circle_limit` (needs ``cosim_py_hypot``)
CIRCLE_LIMIT_C = r"""/* blocks.electric.pmsm.circle_limit */
static void cosim_circle_limit(double u_d, double u_q, double u_max, double *od, double *oq) {
    double m = cosim_py_hypot(u_d, u_q), s;
    if (m <= u_max) {
        *od = u_d;
        *oq = u_q;
        return;
    }
    if (u_max <= 0.0) {
        *od = 0.0;
        *oq = 0.0;
        return;
    }
    s = u_max / m;
    *od = u_d * s;
    *oq = u_q * s;
}"""


def c_circle_limit(cg: Any, u_d: str, u_q: str, u_dc: str) -> str:
    """C statements declaring ``ud, uq``: :func:`~blocks.electric.pmsm.circle_limit` of
    ``(u_d, u_q)`` at ``max(u_dc, 0.0) / SQRT3``."""
    py_hypot(cg)
    cg.helper("cosim_circle_limit", CIRCLE_LIMIT_C)
    return (f"double ud, uq, udc = {u_dc};\n"
            f"cosim_circle_limit({u_d}, {u_q}, ((0.0 > udc) ? 0.0 : udc) / {c_float(SQRT3)}, "
            "&ud, &uq);\n")


def pmsm_c_model(blk: Any, cg: Any) -> CModel:
    """C of :class:`~blocks.electric.pmsm.PMSM` ``blk``: its torque, power and derivatives."""
    f = c_float
    xd, xq = cg.x(blk.x_d), cg.x(blk.x_q)
    torque = (f"1.5 * {f(blk.p)} * ({f(blk.psi)} + ({f(blk.Ld)} - {f(blk.Lq)}) * {xd}) "
              f"* {xq}")
    out = {"i_d": f"{cg.y(blk.i_d)} = {xd};", "i_q": f"{cg.y(blk.i_q)} = {xq};",
           "torque": f"{cg.y(blk.torque)} = {torque};",
           "power": f"{cg.y(blk.power)} = 1.5 * ({cg.u(blk.u_d)} * {xd} + "
                    f"{cg.u(blk.u_q)} * {xq});"}
    w = cg.x(blk.x_w) if blk.has_inertia else cg.u(blk.speed_in)
    der = [f"double w = {w}, we = {f(blk.p)} * w;",
           f"{cg.dx(blk.x_d)} = ({cg.u(blk.u_d)} - {f(blk.R)} * {xd} + we * "
           f"{f(blk.Lq)} * {xq}) / {f(blk.Ld)};",
           f"{cg.dx(blk.x_q)} = ({cg.u(blk.u_q)} - {f(blk.R)} * {xq} - we * "
           f"({f(blk.Ld)} * {xd} + {f(blk.psi)})) / {f(blk.Lq)};"]
    if blk.has_inertia:
        out["speed"] = f"{cg.y(blk.speed)} = {cg.x(blk.x_w)};"
        der.append(f"{cg.dx(blk.x_w)} = ({torque} - {f(blk.b)} * w - "
                   f"{cg.u(blk.load_torque)}) / {f(blk.J)};")
    return CModel(outputs=out, derivatives="\n".join(der))


def dq_current_controller_c_model(blk: Any, cg: Any) -> CModel:
    """C of :class:`~blocks.electric.pmsm.DQCurrentController` ``blk``: its voltages and
    derivatives (the limit through :data:`CIRCLE_LIMIT_C`)."""
    f, p = c_float, blk.params
    i_d, i_q = cg.u(blk.i_d), cg.u(blk.i_q)
    calc = [f"double e_d = {cg.u(blk.i_d_ref)} - {i_d};",
            f"double e_q = {cg.u(blk.i_q_ref)} - {i_q};",
            f"double v_d = {f(blk.kp_d)} * e_d + {cg.x(blk.x_d)};",
            f"double v_q = {f(blk.kp_q)} * e_q + {cg.x(blk.x_q)};"]
    if blk.decoupling:
        calc += [f"double we = {f(p.pole_pairs)} * {cg.u(blk.speed)};",
                 f"v_d -= we * {f(p.q_inductance_h)} * {i_q};",
                 f"v_q += we * ({f(p.d_inductance_h)} * {i_d} + {f(p.flux_linkage_wb)});"]
    calc = "\n".join(calc) + "\n" + c_circle_limit(cg, "v_d", "v_q", cg.u(blk.u_dc))
    out = {"u_d_ref": f"{{\n{calc}{cg.y(blk.u_d_ref)} = ud;\n}}",
           "u_q_ref": f"{{\n{calc}{cg.y(blk.u_q_ref)} = uq;\n}}"}
    der = calc + (f"double dx_d = {f(blk.ki_d)} * e_d, dx_q = {f(blk.ki_q)} * e_q;\n")
    dd, dq = cg.dx(blk.x_d), cg.dx(blk.x_q)
    if blk.anti_windup == "clamping":
        der += ("if (ud != v_d || uq != v_q) {\n"
                "    if (dx_d * v_d > 0) dx_d = 0.0;\n"
                "    if (dx_q * v_q > 0) dx_q = 0.0;\n}\n"
                f"{dd} = dx_d;\n{dq} = dx_q;")
    else:
        der += (f"{dd} = dx_d + {f(blk.k_aw_d)} * (ud - v_d);\n"
                f"{dq} = dx_q + {f(blk.k_aw_q)} * (uq - v_q);")
    return CModel(outputs=out, derivatives=der)


def averaged_inverter_c_model(blk: Any, cg: Any) -> CModel:
    """C of :class:`~blocks.electric.pmsm.AveragedInverter` ``blk``: applied voltages, ``i_dc``
    and the delay's derivatives."""
    lim = c_circle_limit(cg, cg.u(blk.u_d_ref), cg.u(blk.u_q_ref), cg.u(blk.u_dc))
    u_dc = cg.u(blk.u_dc)
    if blk.T > 0:
        applied = f"double ud = {cg.x(blk.x_d)}, uq = {cg.x(blk.x_q)};\n"
        out = {"u_d": f"{cg.y(blk.u_d)} = {cg.x(blk.x_d)};",
               "u_q": f"{cg.y(blk.u_q)} = {cg.x(blk.x_q)};"}
    else:
        applied = lim
        out = {"u_d": f"{{\n{lim}{cg.y(blk.u_d)} = ud;\n}}",
               "u_q": f"{{\n{lim}{cg.y(blk.u_q)} = uq;\n}}"}
    out["i_dc"] = (f"if ({u_dc} <= 0.0) {{\n    {cg.y(blk.i_dc)} = 0.0;\n}} else {{\n"
                   + applied + f"{cg.y(blk.i_dc)} = 1.5 * (ud * {cg.u(blk.i_d)} + uq * "
                   f"{cg.u(blk.i_q)}) / {u_dc};\n}}")
    der = ""
    if blk.T > 0:
        T = c_float(blk.T)
        der = (lim + f"{cg.dx(blk.x_d)} = (ud - {cg.x(blk.x_d)}) / {T};\n"
               f"{cg.dx(blk.x_q)} = (uq - {cg.x(blk.x_q)}) / {T};")
    return CModel(outputs=out, derivatives=der)


def torque_to_current_c_model(blk: Any, cg: Any) -> CModel:
    """C of :class:`~blocks.electric.pmsm.TorqueToCurrent` ``blk`` (Python's min/max tie rules)."""
    lo, hi = c_float(-blk.i_max), c_float(blk.i_max)
    return CModel(outputs={
        "i_d_ref": f"{cg.y(blk.i_d_ref)} = 0.0;",
        "i_q_ref": (f"{{\n    double i = {cg.u(blk.torque_ref)} / {c_float(blk.kt)};\n"
                    f"    i = ({lo} > i) ? {lo} : i;\n"
                    f"    {cg.y(blk.i_q_ref)} = ({hi} < i) ? {hi} : i;\n}}")})
