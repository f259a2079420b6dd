"""C building blocks shared by the hydraulic blocks' C forms (``c_model`` methods).

Each helper mirrors one Python function of the package operation by operation, so a
compiled run equals the Python loop bit for bit (the C is built with ``-ffp-contract=off``):
:func:`~.orifice.regularized_sqrt`, :func:`~.valves.smooth_opening`,
:func:`~.valves.edge_opening`, :func:`~.volume.pressure_rate`, the bulk modulus models of
:mod:`.fluid` (as inline statements with their error messages), the 4/3 spool's edge flows
(:func:`~.valves.spool_edge_flows`) and the cylinder's rod force and chamber rates.
Parameters are constants of the generated code (not tunable), except a pressure source's
``pressure``.
"""

from __future__ import annotations

from typing import Any

from cosim.codegen.model import CodegenError, c_float

from .fluid import ConstantBulkModulus, EntrainedAirBulkModulus, PressureDependentBulkModulus

#: regularized_sqrt (orifice.py)
_RSQRT = """static double cosim_hyd_rsqrt(double dp, double dp_tr) {
    double r;
    if (dp >= dp_tr) return sqrt(dp);
    if (dp <= -dp_tr) return -sqrt(-dp);
    r = dp / dp_tr;
    return sqrt(dp_tr) * r * (1.25 - 0.25 * r * r);
}"""

#: smooth_opening (valves.py)
_SMOOTH = """static double cosim_hyd_smooth(double x) {
    if (x <= 0.0) return 0.0;
    if (x >= 1.0) return 1.0;
    return x * x * (3.0 - 2.0 * x);
}"""

#: edge_opening (valves.py)
_EDGE = """static double cosim_hyd_edge(double s, double lap) {
    double a = (s - lap) / (1.0 - lap);
    return a <= 0.0 ? 0.0 : (a >= 1.0 ? 1.0 : a);
}"""

#: pressure_rate (volume.py)
_PRATE = """static double cosim_hyd_prate(double p, double beta, double volume, double net_flow,
                              double p_min, double band) {
    double rate = beta / volume * net_flow, s;
    if (rate < 0.0 && p < p_min) {
        s = (p - p_min + band) / band;
        if (s <= 0.0) return 0.0;
        rate *= s * s * (3.0 - 2.0 * s);
    }
    return rate;
}"""

_HELPERS = {"rsqrt": _RSQRT, "smooth": _SMOOTH, "edge": _EDGE, "prate": _PRATE}


def use(cg: Any, *names: str) -> None:
    """Emit the C helpers ``names`` ("rsqrt", "smooth", "edge", "prate") once per program."""
    for n in names:
        cg.helper(f"cosim_hyd_{n}", _HELPERS[n])


def clip(v: str, lo: str, hi: str, out: str) -> str:
    """``out = min(max(v, lo), hi)`` with Python's tie rules (the first argument wins)."""
    return (f"{out} = ({lo} > {v}) ? {lo} : {v};\n"
            f"{out} = ({hi} < {out}) ? {hi} : {out};")


def block(code: str) -> str:
    """Statements in their own ``{ }``."""
    return "{\n    " + code.strip().replace("\n", "\n    ") + "\n}"


def beta(cg: Any, model: Any, p: str, out: str) -> str:
    """Statements setting ``out`` to the bulk modulus ``model(p)`` (``p`` a C variable),
    failing the call where the Python model raises."""
    f = c_float
    if isinstance(model, ConstantBulkModulus):
        return f"{out} = {f(model.beta_pa)};"
    if isinstance(model, PressureDependentBulkModulus):
        a, b = f(model.a_per_pa), f(model.b_per_pa2)
        msg = (f"PressureDependentBulkModulus: a pressure is beyond the validity limit "
               f"{model.max_pressure_pa:.6g} Pa (a + 2 b p <= 0)")
        return (f"{{\n    double den_ = {a} + 2.0 * {b} * {p};\n"
                f"    if (den_ <= 0.0) {cg.fail(msg)}\n"
                f"    {out} = (1.0 + {a} * {p} + {b} * {p} * {p}) / den_;\n}}")
    if isinstance(model, EntrainedAirBulkModulus):
        e0, p0 = f(model.air_fraction), f(model.reference_pressure_pa)
        n, bl = f(model.polytropic_index), f(model.liquid_beta_pa)
        msg = "EntrainedAirBulkModulus: needs an absolute pressure > 0"
        return (f"{{\n    double e_, va_, vl_;\n"
                f"    if ({p} <= 0.0) {cg.fail(msg)}\n"
                f"    if ({e0} == 0.0) e_ = 0.0;\n"
                f"    else {{\n"
                f"        va_ = {e0} * pow({p0} / {p}, 1.0 / {n});\n"
                f"        vl_ = (1.0 - {e0}) * exp(-({p} - {p0}) / {bl});\n"
                f"        e_ = va_ / (va_ + vl_);\n    }}\n"
                f"    {out} = 1.0 / ((1.0 - e_) / {bl} + e_ / ({n} * {p}));\n}}")
    raise CodegenError(
        f"block '{cg.block.path}': its bulk modulus model {type(model).__name__} has no C "
        "form (ConstantBulkModulus, PressureDependentBulkModulus and "
        "EntrainedAirBulkModulus have one)")


def net_flow(cg: Any, ins: list, outs: list) -> str:
    """C of ``q = 0.0; q += each inflow; q -= each outflow`` (left to right)."""
    expr = "0.0"
    for port in ins:
        expr = f"({expr} + {cg.u(port)})"
    for port in outs:
        expr = f"({expr} - {cg.u(port)})"
    return expr


def spool_edges(cg: Any, u: str, pP: str, pT: str, pA: str, pB: str, k: float, lap: float,
                dp_tr: float, g: float) -> str:
    """Statements declaring ``q_pa, q_at, q_pb, q_bt`` (:func:`~.valves.spool_edge_flows`)."""
    use(cg, "rsqrt", "edge")
    k, lap, dp_tr, g = (c_float(v) for v in (k, lap, dp_tr, g))
    return (f"double uc_, a_pos, a_neg, pP_ = {pP}, pT_ = {pT}, pA_ = {pA}, pB_ = {pB};\n"
            + clip(u, "(-1.0)", "1.0", "uc_") + "\n"
            f"a_pos = cosim_hyd_edge(uc_, {lap});\n"
            f"a_neg = cosim_hyd_edge(-uc_, {lap});\n"
            f"double q_pa = {k} * a_pos * cosim_hyd_rsqrt(pP_ - pA_, {dp_tr})"
            f" + {g} * (pP_ - pA_);\n"
            f"double q_at = {k} * a_neg * cosim_hyd_rsqrt(pA_ - pT_, {dp_tr})"
            f" + {g} * (pA_ - pT_);\n"
            f"double q_pb = {k} * a_neg * cosim_hyd_rsqrt(pP_ - pB_, {dp_tr})"
            f" + {g} * (pP_ - pB_);\n"
            f"double q_bt = {k} * a_pos * cosim_hyd_rsqrt(pB_ - pT_, {dp_tr})"
            f" + {g} * (pB_ - pT_);\n")


#: port_flows: output name -> C expression of the edge flows
PORT_FLOWS = {"q_A": "q_pa - q_at", "q_B": "q_pb - q_bt", "q_P": "q_pa + q_pb",
              "q_T": "q_at + q_bt"}


def rod_force(cg: Any, cyl: Any, p1: str, p2: str, x: str, v: str, out: str) -> str:
    """Statements setting ``out`` to :meth:`~.cylinder.DoubleActingCylinder.rod_force`
    (``cyl`` gives the parameters) with its friction and end stops."""
    use(cg, "smooth")
    f = c_float
    code = (f"double fp_ = {p1} * {f(cyl.A1)} - {p2} * {f(cyl.A2)} - {f(cyl.p_amb)} * "
            f"({f(cyl.A1)} - {f(cyl.A2)});\n"
            "double f_ = fp_;\n")
    fr = cyl.friction
    if fr is not None:
        fc, fs = f(fr.coulomb_n), f(fr.static_n)
        code += f"double ff_ = {f(fr.viscous_n_s_m)} * {v};\n"
        if fr.static_n > 0.0:
            code += (f"ff_ += ({fc} + ({fs} - {fc}) * exp(-pow({v} / "
                     f"{f(fr.stribeck_velocity_m_s)}, 2.0))) * tanh({v} / "
                     f"{f(fr.tanh_velocity_m_s)});\n")
        code += "f_ -= ff_;\n"
    if cyl.eta < 1.0:
        code += f"f_ -= (1.0 - {f(cyl.eta)}) * fabs(fp_) * tanh({v} / {f(cyl.v_t)});\n"
    ks, cs, dc, L = f(cyl.k_s), f(cyl.c_s), f(cyl.d_c), f(cyl.L)
    code += ("double es_, d_, dd_;\n"
             f"if ({x} < 0.0) {{\n"
             f"    d_ = -{x}; dd_ = -{v};\n"
             f"    es_ = {ks} * d_ + {cs} * cosim_hyd_smooth(d_ / {dc}) * dd_;\n"
             "    es_ = (es_ > 0.0) ? es_ : 0.0;\n"
             f"}} else if ({x} > {L}) {{\n"
             f"    d_ = {x} - {L}; dd_ = {v};\n"
             f"    es_ = {ks} * d_ + {cs} * cosim_hyd_smooth(d_ / {dc}) * dd_;\n"
             "    es_ = -((es_ > 0.0) ? es_ : 0.0);\n"
             "} else es_ = 0.0;\n"
             f"{out} = f_ + es_;\n")
    return code


def chamber_rates(cg: Any, cyl: Any, guard: Any, p1: str, p2: str, q1: str, q2: str, x: str,
                  v: str, owner: str) -> str:
    """Statements setting ``r1, r2`` to
    :meth:`~.cylinder.DoubleActingCylinder.pressure_rates` (the chamber-volume check fails
    the call as the Python raises a StepError)."""
    use(cg, "prate")
    f = c_float
    pm, bd = f(guard.p_min), f(guard.band)
    msg = (f"{owner}: chamber volume <= 0; give positive dead volumes or stiffer end stops")
    return (f"double v1_ = {f(cyl.V10)} + {f(cyl.A1)} * {x};\n"
            f"double v2_ = {f(cyl.V20)} + {f(cyl.A2)} * ({f(cyl.L)} - {x});\n"
            f"if (!(v1_ > 0.0 && v2_ > 0.0)) {cg.fail(msg)}\n"
            f"double p1_ = {p1}, p2_ = {p2}, b1_, b2_;\n"
            + beta(cg, cyl.beta, "p1_", "b1_") + "\n"
            + beta(cg, cyl.beta, "p2_", "b2_") + "\n"
            f"double r1 = cosim_hyd_prate(p1_, b1_, v1_, {q1} - {f(cyl.A1)} * {v}, {pm}, {bd});\n"
            f"double r2 = cosim_hyd_prate(p2_, b2_, v2_, {q2} + {f(cyl.A2)} * {v}, {pm}, {bd});\n")
