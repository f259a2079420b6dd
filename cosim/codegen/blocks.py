"""C descriptions of the built-in blocks (registered by class name: the block modules
need no edits and are not imported here).

Each function mirrors the Python arithmetic of its block, expression by
expression (same operations in the same order), so an FMU and a Simulator run
agree to the last bit where NumPy does not reorder sums.  What is tunable in
the FMU:

==============================  ===============================================
block                           FMI parameters (tunable)
==============================  ===============================================
Gain                            ``k`` (scalar, vector or matrix)
Saturation, DeadZone            ``lower``, ``upper``
Switch                          ``threshold``
StateSpace (TransferFunction,   ``A``, ``B``, ``C`` and ``D`` (``D`` only if nonzero:
FirstOrderLag), DiscreteState-  the feedthrough is structural)
Space, DiscreteTransferFunction
Table1D, Table2D                ``values``: the table values (breakpoints are constants)
PID, DiscretePID                ``kp``, ``ki``, ``kd``, ``tracking_gain`` (those that must
                                stay zero, see ``blocks.pid``, are constants)
DiscreteIntegrator              ``gain``
FilteredDerivative              ``N``
RateLimiter                     ``rising_per_s``, ``falling_per_s``
Constant                        ``value``
==============================  ===============================================

Everything else (sample periods, signs, limits of PIDs, table breakpoints,
source shapes) is a constant of the generated code.  Blocks fused into a
linear group do not use these descriptions (their fused matrices are constants).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .model import CContext, CModel, c_float, register_c_model

_T = "blocks.{}"


def _els(fn: Any, port: Any) -> list[str]:
    return [fn(port, i) for i in range(port.size)]


def _sum(terms: list[str]) -> str:
    return " + ".join(terms) if terms else "0.0"


def _mv(M: Any, i: int, names: list[str]) -> str:
    """``M[i, 0]*n0 + M[i, 1]*n1 + ...`` (all terms: the matrix may be tuned)."""
    return _sum([f"{M[i, j]} * {n}" for j, n in enumerate(names)])


def _sat(v: str, lo: str, hi: str, out: str) -> str:
    """``out = min(max(v, lo), hi)`` with Python's min/max tie rules."""
    return (f"{out} = ({lo} > {v}) ? {lo} : {v};\n"
            f"{out} = ({hi} < {out}) ? {hi} : {out};")


# ------------------------------------------------------------------- math
def gain(b: Any, cg: CContext) -> CModel:
    u, y = _els(cg.u, b.u), _els(cg.y, b.y)
    unit = _ratio(b.y.unit_text, b.u.unit_text) if b.y.unit != b.u.unit else None
    K = np.asarray(cg.value(b.k), dtype=float)
    k = cg.param("k", K, unit=unit, description=f"gain of '{b.path}'")
    if K.ndim == 0:
        code = [f"{yi} = {k} * {ui};" for yi, ui in zip(y, u, strict=True)]
    elif K.ndim == 1:
        code = [f"{y[i]} = {k[i]} * {u[i]};" for i in range(len(y))]
    else:
        code = [f"{y[i]} = {_mv(k, i, u)};" for i in range(len(y))]
    return CModel(outputs={"y": "\n".join(code)})


def sum_(b: Any, cg: CContext) -> CModel:
    ins = [_els(cg.u, p) for p in b.ins]
    y = _els(cg.y, b.y)
    code = []
    for i, yi in enumerate(y):
        if len(ins) == 2 and b.signs in ([1.0, -1.0], [1.0, 1.0]):
            op = "-" if b.signs[1] < 0 else "+"
            code.append(f"{yi} = {ins[0][i]} {op} {ins[1][i]};")
        else:
            expr = "0.0"
            for s, u in zip(b.signs, ins, strict=True):
                expr = f"({expr} + {c_float(s)} * {u[i]})"
            code.append(f"{yi} = {expr};")
    return CModel(outputs={"y": "\n".join(code)})


def saturation(b: Any, cg: CContext) -> CModel:
    lo_v, hi_v = _limits_of(b, cg)
    lo = cg.param("lower", lo_v)
    hi = cg.param("upper", hi_v)
    code = []
    for ui, yi in zip(_els(cg.u, b.u), _els(cg.y, b.y), strict=True):
        code.append("{\n    double v = " + ui + ", w;\n    "
                    + _sat("v", lo, hi, "w").replace("\n", "\n    ") + f"\n    {yi} = w;\n}}")
    return CModel(outputs={"y": "\n".join(code)})


def _limits_of(b: Any, cg: CContext) -> tuple[float, float]:
    return float(cg.value(b.lower)), float(cg.value(b.upper))


def dead_zone(b: Any, cg: CContext) -> CModel:
    lo_v, hi_v = _limits_of(b, cg)
    lo, hi = cg.param("lower", lo_v), cg.param("upper", hi_v)
    u, y = cg.u(b.u), cg.y(b.y)
    return CModel(outputs={"y": f"{y} = ({u} > {hi}) ? {u} - {hi} : "
                                f"(({u} < {lo}) ? {u} - {lo} : 0.0);"})


def switch(b: Any, cg: CContext) -> CModel:
    th = cg.param("threshold", float(cg.value(b.threshold)))
    return CModel(outputs={"y": f"{cg.y(b.y)} = ({cg.u(b.control)} >= {th}) ? "
                                f"{cg.u(b.u_true)} : {cg.u(b.u_false)};"})


def unit_conversion(b: Any, cg: CContext) -> CModel:
    s, o = c_float(b.scale), c_float(b.bias)
    code = [f"{yi} = {s} * {ui} + {o};" for ui, yi in zip(_els(cg.u, b.u), _els(cg.y, b.y),
                                                          strict=True)]
    return CModel(outputs={"y": "\n".join(code)})


def mux(b: Any, cg: CContext) -> CModel:
    y = _els(cg.y, b.y)
    return CModel(outputs={"y": "\n".join(f"{y[i]} = {cg.u(p)};"
                                          for i, p in enumerate(b.ins))})


def demux(b: Any, cg: CContext) -> CModel:
    return CModel(outputs={p.name: f"{cg.y(p)} = {cg.u(b.u, i)};"
                           for i, p in enumerate(b.outs)})


def product(b: Any, cg: CContext) -> CModel:
    ins = [_els(cg.u, p) for p in b.ins]
    code = []
    for i, yi in enumerate(_els(cg.y, b.y)):
        expr = "1.0"
        for o, u in zip(b.ops, ins, strict=True):
            expr = f"({expr} {'*' if o == '*' else '/'} {u[i]})"
        code.append(f"{yi} = {expr};")
    return CModel(outputs={"y": "\n".join(code)})


def abs_(b: Any, cg: CContext) -> CModel:
    return CModel(outputs={"y": "\n".join(
        f"{yi} = fabs({ui});" for ui, yi in zip(_els(cg.u, b.u), _els(cg.y, b.y),
                                                strict=True))})


def min_max(b: Any, cg: CContext) -> CModel:
    ins = [_els(cg.u, p) for p in b.ins]
    op = "<" if b.function == "min" else ">"
    code = []
    for i, yi in enumerate(_els(cg.y, b.y)):
        lines = [f"double m = {ins[0][i]};"]
        lines += [f"if ({u[i]} {op} m) m = {u[i]};" for u in ins[1:]]
        code.append("{\n    " + "\n    ".join(lines) + f"\n    {yi} = m;\n}}")
    return CModel(outputs={"y": "\n".join(code)})


def rate_limiter(b: Any, cg: CContext) -> CModel:
    r = cg.param("rising_per_s", float(cg.value(b.rising_per_s)), unit=_per_s(b.u))
    f = cg.param("falling_per_s", float(cg.value(b.falling_per_s)), unit=_per_s(b.u))
    T = c_float(b.T)
    prev, u = cg.xd(b.x), cg.u(b.u)
    calc = (f"double up = {r} * {T}, dn = {f} * {T};\n"
            f"double d = {u} - {prev};\n"
            "double m = (-dn > d) ? -dn : d;\n"
            "m = (up < m) ? up : m;\n")
    return CModel(outputs={"y": calc + f"{cg.y(b.y)} = {prev} + m;"},
                  update=calc + f"{prev} = {prev} + m;")


def _per_s(port: Any) -> str | None:
    return f"({port.unit_text})/s" if port.unit_text else None


def relay(b: Any, cg: CContext) -> CModel:
    u, on = cg.u(b.u), cg.xd(b.on)
    state = (f"double st = ({u} >= {c_float(b.on_th)}) ? 1.0 : "
             f"(({u} <= {c_float(b.off_th)}) ? 0.0 : ({on} != 0.0 ? 1.0 : 0.0));\n")
    return CModel(outputs={"y": state + f"{cg.y(b.y)} = st != 0.0 ? {c_float(b.on_value)} : "
                                        f"{c_float(b.off_value)};"},
                  update=state + f"{on} = st;")


# -------------------------------------------------------------- continuous
def state_space(b: Any, cg: CContext) -> CModel:
    u = _els(cg.u, b.u)
    xs = [cg.x(b.x, i) for i in range(b.n)] if b.n else []
    dxs = [cg.dx(b.x, i) for i in range(b.n)] if b.n else []
    A, B, C, D = _matrices(b, cg, b.n)
    out = []
    for i, yi in enumerate(_els(cg.y, b.y)):
        terms = [f"({_mv(C, i, xs)})"] if b.n else ["0.0"]
        if D is not None:
            terms.append(f"({_mv(D, i, u)})")
        out.append(f"{yi} = {' + '.join(terms)};")
    der = [f"{dxs[i]} = ({_mv(A, i, xs)}) + ({_mv(B, i, u) if B is not None else '0.0'});"
           for i in range(b.n)]
    return CModel(outputs={"y": "\n".join(out)}, derivatives="\n".join(der))


def _matrices(b: Any, cg: CContext, n: int) -> tuple:
    """Tunable ``A, B, C`` (if there are states) and ``D`` (if nonzero) of an LTI block."""
    A = cg.param("A", b.A) if n else None
    B = cg.param("B", b.B) if n and b.B.size else None
    C = cg.param("C", b.C) if n else None
    D = cg.param("D", b.D) if b._has_d else None
    return A, B, C, D


def integrator(b: Any, cg: CContext) -> CModel:
    n = b.x.size
    return CModel(outputs={"y": "\n".join(f"{cg.y(b.y, i)} = {cg.x(b.x, i)};"
                                          for i in range(n))},
                  derivatives="\n".join(f"{cg.dx(b.x, i)} = {cg.u(b.u, i)};"
                                        for i in range(n)))


def filtered_derivative(b: Any, cg: CContext) -> CModel:
    N = cg.param("N", b.N, unit="rad/s")
    expr = f"{N} * ({cg.u(b.u)} - {cg.x(b.z)})"
    return CModel(outputs={"y": f"{cg.y(b.y)} = {expr};"},
                  derivatives=f"{cg.dx(b.z)} = {expr};")


def _ratio(num: str | None, den: str | None, times: str = "") -> str | None:
    """The unit ``num/den`` (times ``s`` or ``1/s``) of a gain, if both are known."""
    if not num or not den:
        return None
    return f"({num})/({den}){times}"


def _pid_params(b: Any, cg: CContext, feedthrough_terms: tuple[str, ...],
                kd_needs_filter: bool) -> dict[str, str]:
    out = {}
    units = {"kp": "", "ki": "/s", "kd": "*s"}
    for g in ("kp", "ki", "kd"):
        fixed = (g in feedthrough_terms and not b.feedthrough) or (
            g == "kd" and kd_needs_filter and b.N is None)
        out[g] = cg.param(g, cg.value(getattr(b, g)), tunable=not fixed,
                          unit=_ratio(b.u.unit_text, b.e.unit_text, units[g]))
    out["kt"] = cg.param("tracking_gain", cg.value(b.kt), unit="1/s",
                         tunable=b.anti_windup == "back_calculation")
    return out


def _integrator_input(b: Any, P: dict, e: str, v: str, u: str) -> str:
    """C expression of the PID integrator input with anti-windup (blocks.pid)."""
    ki = P["ki"]
    if b.anti_windup == "back_calculation":
        return f"({ki} * {e} + {P['kt']} * ({u} - {v}))"
    if b.anti_windup == "clamping":
        lo, hi = c_float(b.lo), c_float(b.hi)
        return (f"((({v} > {hi} && {ki} * {e} > 0.0) || ({v} < {lo} && {ki} * {e} < 0.0)) "
                f"? 0.0 : {ki} * {e})")
    return f"({ki} * {e})"


def pid(b: Any, cg: CContext) -> CModel:
    P = _pid_params(b, cg, ("kp", "kd"), kd_needs_filter=True)
    N = c_float(b.N) if b.N is not None else None
    i, z = cg.x(b.i), cg.x(b.z) if b.z is not None else None
    lo, hi = c_float(b.lo), c_float(b.hi)

    def v_code(e: str) -> str:
        code = f"double v = {P['kp']} * {e} + {i};\n"
        if z is not None:
            code += f"v = v + {P['kd']} * {N} * ({e} - {z});\n"
        return code

    e_out = cg.u(b.e) if b.feedthrough else "0.0"
    out = f"double e = {e_out};\n" + v_code("e")
    if b.limited:
        out += "double w;\n" + _sat("v", lo, hi, "w") + f"\n{cg.y(b.u)} = w;"
    else:
        out += f"{cg.y(b.u)} = v;"
    der = f"double e = {cg.u(b.e)};\ndouble di;\n"
    if b.limited:
        der += ("{\n" + v_code("e") + "double w;\n" + _sat("v", lo, hi, "w") + "\n"
                f"di = {_integrator_input(b, P, 'e', 'v', 'w')};\n}}\n")
    else:
        der += f"di = {P['ki']} * e;\n"
    der += f"{cg.dx(b.i)} = di;"
    if z is not None:
        der += f"\n{cg.dx(b.z)} = {N} * (e - {z});"
    return CModel(outputs={"u": out}, derivatives=der)


def discrete_pid(b: Any, cg: CContext) -> CModel:
    terms = ("kp", "kd") if b.method == "forward" else ("kp", "ki", "kd")
    P = _pid_params(b, cg, terms, kd_needs_filter=False)
    kp, ki, kd = P["kp"], P["ki"], P["kd"]
    T = c_float(b.T)
    N = c_float(b.N) if b.N is not None else None
    lo, hi = c_float(b.lo), c_float(b.hi)
    ip, dp, ep = cg.xd(b.i), cg.xd(b.d), cg.xd(b.e_prev)
    forward = b.method == "forward"

    def step(e: str) -> str:
        c = f"double i_prev = {ip}, d_prev = {dp}, ep = {ep};\n"
        c += "double i_out = " + ("i_prev" if forward else
                                  f"i_prev + 0.5 * {ki} * {T} * ({e} + ep)") + ";\n"
        c += "double dterm, d_new, v, u, i_new;\n"
        if b.N is None:
            c += f"dterm = {kd} * ({e} - ep) / {T};\nd_new = 0.0;\n"
        elif forward:
            c += (f"dterm = {kd} * {N} * ({e} - d_prev);\n"
                  f"d_new = d_prev + {N} * {T} * ({e} - d_prev);\n")
        else:
            c += (f"dterm = ((2.0 - {N} * {T}) * d_prev + 2.0 * {kd} * {N} * ({e} - ep)) / "
                  f"(2.0 + {N} * {T});\nd_new = dterm;\n")
        c += f"v = {kp} * {e} + i_out + dterm;\n"
        c += (_sat("v", lo, hi, "u") + "\n") if b.limited else "u = v;\n"
        if forward:
            c += f"i_new = i_prev + {T} * {_integrator_input(b, P, e, 'v', 'u')};\n"
        elif b.anti_windup == "back_calculation":
            c += f"i_new = i_out + {T} * {P['kt']} * (u - v);\n"
        elif b.anti_windup == "clamping":
            c += (f"i_new = (v > {hi} && {ki} * {e} > 0.0) || (v < {lo} && {ki} * {e} < 0.0) "
                  "? i_prev : i_out;\n")
        else:
            c += "i_new = i_out;\n"
        c += "(void)d_new; (void)i_new; (void)i_prev; (void)d_prev; (void)ep;\n"
        return c

    e_out = cg.u(b.e) if b.feedthrough else "0.0"
    out = f"double e = {e_out};\n" + step("e") + f"{cg.y(b.u)} = u;"
    upd = (f"double e = {cg.u(b.e)};\n" + step("e")
           + f"{ip} = i_new;\n{dp} = d_new;\n{ep} = e;")
    return CModel(outputs={"u": out}, update=upd)


# ---------------------------------------------------------------- discrete
def zero_order_hold(b: Any, cg: CContext) -> CModel:
    return CModel(outputs={"y": "\n".join(f"{yi} = {ui};" for ui, yi in
                                          zip(_els(cg.u, b.u), _els(cg.y, b.y), strict=True))})


def unit_delay(b: Any, cg: CContext) -> CModel:
    n = b.u.size
    return CModel(outputs={"y": "\n".join(f"{cg.y(b.y, i)} = {cg.xd(b.x, i)};"
                                          for i in range(n))},
                  update="\n".join(f"{cg.xd(b.x, i)} = {cg.u(b.u, i)};" for i in range(n)))


def discrete_integrator(b: Any, cg: CContext) -> CModel:
    g = cg.param("gain", b.gain, description=f"gain K of '{b.path}' (y += K T u)")
    T = c_float(b.period_s)
    lo, hi = c_float(b.lo), c_float(b.hi)
    n = b.u.size

    def sat(expr: str, out: str) -> str:
        if not b.limited:
            return f"{out} = {expr};"
        return f"{{\n    double v = {expr}, w;\n    " + _sat("v", lo, hi, "w").replace(
            "\n", "\n    ") + f"\n    {out} = w;\n}}"

    outs, upds = [], []
    for i in range(n):
        x, u, y = cg.xd(b.x, i), cg.u(b.u, i), cg.y(b.y, i)
        kt = f"({g} * {T})"
        if b.method == "forward":
            outs.append(f"{y} = {x};")
            upds.append(sat(f"{x} + {kt} * {u}", x))
        elif b.method == "backward":
            outs.append(sat(f"{x} + {kt} * {u}", y))
            upds.append(sat(f"{x} + {kt} * {u}", x))
        else:
            up = cg.xd(b.u_prev, i)
            expr = f"{x} + 0.5 * {kt} * ({u} + {up})"
            outs.append(sat(expr, y))
            upds.append("{\n    double ui = " + u + ";\n    "
                        + sat(expr, x).replace("\n", "\n    ") + f"\n    {up} = ui;\n}}")
    return CModel(outputs={"y": "\n".join(outs)}, update="\n".join(upds))


def discrete_state_space(b: Any, cg: CContext) -> CModel:
    n = b.n
    u = _els(cg.u, b.u)
    xs = [cg.xd(b.x, i) for i in range(n)]
    A, B, C, D = _matrices(b, cg, n)
    out = []
    for i, yi in enumerate(_els(cg.y, b.y)):
        terms = [f"({_mv(C, i, xs)})"] if n else ["0.0"]
        if D is not None:
            terms.append(f"({_mv(D, i, u)})")
        out.append(f"{yi} = {' + '.join(terms)};")
    upd = ""
    if n:
        upd = (f"double xn[{n}];\n"
               + "\n".join(f"xn[{i}] = ({_mv(A, i, xs)}) + "
                           f"({_mv(B, i, u) if B is not None else '0.0'});" for i in range(n))
               + "\n" + "\n".join(f"{xs[i]} = xn[{i}];" for i in range(n)))
    else:
        upd = "/* no state */"
    return CModel(outputs={"y": "\n".join(out)}, update=upd)


# ------------------------------------------------------------------ tables
_TAB_INDEX = r"""/* Table1D/Table2D: bisect_right(xl, u) - 1 limited to [0, n-2], after
 * clipping u to the breakpoints when clip is set (blocks.tables) */
static int cosim_tab_index(const double *xl, int n, double *u, int clip) {
    int lo = 0, hi = n, i;
    if (clip && !(xl[0] <= *u && *u <= xl[n - 1])) {
        double v = (xl[0] > *u) ? xl[0] : *u;
        *u = (xl[n - 1] < v) ? xl[n - 1] : v;
    }
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (*u < xl[mid]) hi = mid; else lo = mid + 1;
    }
    i = lo - 1;
    if (i < 0) i = 0;
    if (i > n - 2) i = n - 2;
    return i;
}"""


def table1d(b: Any, cg: CContext) -> CModel:
    cg.helper("cosim_tab_index", _TAB_INDEX)
    n = b.x.size
    X = cg.const(b.x)
    Y = cg.param("values", b.y, unit=b.y_port.unit_text,
                 description=f"table values y of '{b.path}'")
    k = 1 if b.y.ndim == 1 else b.y.shape[1]
    code = [f"const double *X = {X.ptr}, *Y = {Y.ptr};",
            f"double u = {cg.u(b.u)};", "int i;"]
    if b.extrapolation == "error":
        code.append(f"if (!(X[0] <= u && u <= X[{n - 1}])) "
                    + cg.fail(f"Table1D '{b.path}': input u outside the breakpoints "
                              f"[{b.x[0]!r}, {b.x[-1]!r}] (extrapolation='error')"))
    code.append(f"i = cosim_tab_index(X, {n}, &u, {int(b.extrapolation != 'linear')});")
    if b.interpolation == "linear":
        code.append("{\n    double w = (u - X[i]) / (X[i + 1] - X[i]);")
    for c in range(k):
        y0, y1 = f"Y[i * {k} + {c}]", f"Y[(i + 1) * {k} + {c}]"
        yc = cg.y(b.y_port, c if k > 1 or b.y_port.shape else None)
        if b.interpolation == "previous":
            code.append(f"{yc} = (u >= X[i + 1]) ? {y1} : {y0};")
        elif b.interpolation == "nearest":
            code.append(f"{yc} = (u - X[i] >= X[i + 1] - u) ? {y1} : {y0};")
        else:
            code.append(f"    {yc} = {y0} + w * ({y1} - {y0});")
    if b.interpolation == "linear":
        code.append("}")
    return CModel(outputs={"y": "\n".join(code)})


def table2d(b: Any, cg: CContext) -> CModel:
    cg.helper("cosim_tab_index", _TAB_INDEX)
    nx, ny = b.x.size, b.y.size
    X, Y = cg.const(b.x), cg.const(b.y)
    Z = cg.param("values", b.z, unit=b.y_port.unit_text,
                 description=f"table values z of '{b.path}'")
    clip = int(b.extrapolation == "clip")
    code = [f"const double *X = {X.ptr}, *Y = {Y.ptr}, *Z = {Z.ptr};",
            f"double u0 = {cg.u(b.u0)}, u1 = {cg.u(b.u1)}, a, bb;", "int i, j;"]
    if b.extrapolation == "error":
        for u, g, n, nm in (("u0", "X", nx, "u0"), ("u1", "Y", ny, "u1")):
            code.append(f"if (!({g}[0] <= {u} && {u} <= {g}[{n - 1}])) "
                        + cg.fail(f"Table2D '{b.path}': input {nm} outside the breakpoints "
                                  "(extrapolation='error')"))
    code += [f"i = cosim_tab_index(X, {nx}, &u0, {clip});",
             "a = (u0 - X[i]) / (X[i + 1] - X[i]);",
             f"j = cosim_tab_index(Y, {ny}, &u1, {clip});",
             "bb = (u1 - Y[j]) / (Y[j + 1] - Y[j]);",
             f"{{\n    const double *z0 = Z + i * {ny}, *z1 = Z + (i + 1) * {ny};",
             f"    {cg.y(b.y_port)} = ((1 - a) * ((1 - bb) * z0[j] + bb * z0[j + 1])"
             " + a * ((1 - bb) * z1[j] + bb * z1[j + 1]));\n}"]
    return CModel(outputs={"y": "\n".join(code)})


# ----------------------------------------------------------------- sources
def constant(b: Any, cg: CContext) -> CModel:
    v = np.asarray(cg.value(b.value), dtype=float)
    p = cg.param("value", v, unit=b.y.unit_text)
    if v.ndim == 0:
        return CModel(outputs={"y": f"{cg.y(b.y)} = {p};"})
    return CModel(outputs={"y": "\n".join(f"{cg.y(b.y, i)} = {p[np.unravel_index(i, v.shape)]};"
                                          for i in range(v.size))})


def step(b: Any, cg: CContext) -> CModel:
    return CModel(outputs={"y": f"{cg.y(b.y)} = ({cg.mode_t} >= {c_float(b.t_s)} - 1e-12) ? "
                                f"{c_float(b.y1)} : {c_float(b.y0)};"})


def ramp(b: Any, cg: CContext) -> CModel:
    # constants of the generated code, read from the export context's parameters
    k, y0 = (c_float(cg.value(h)) for h in (b.slope, b.initial))
    t0 = c_float(b.start_s)
    return CModel(outputs={"y": f"{{\n    double d = {cg.t} - {t0};\n    "
                                f"{cg.y(b.y)} = {y0} + {k} * ((d > 0.0) ? d : 0.0);\n}}"},
                  time_dependent=True)


def sine(b: Any, cg: CContext) -> CModel:
    a, f, ph, o = (float(cg.value(h)) for h in (b.amplitude, b.frequency_hz, b.phase_rad,
                                                 b.bias))
    a, w, ph, o = (c_float(v) for v in (a, 2 * np.pi * f, ph, o))  # w as the block has it
    return CModel(outputs={"y": f"{cg.y(b.y)} = {a} * sin({w} * {cg.t} + {ph}) + {o};"},
                  time_dependent=True)


def terminator(b: Any, cg: CContext) -> CModel:
    """Nothing to compute: the input is discarded."""
    return CModel()


def time_source(b: Any, cg: CContext) -> CModel:
    return CModel(outputs={"t": f"{cg.y(b.t)} = {cg.t};"}, time_dependent=True)


_BUILTIN = {
    "math.Gain": gain, "math.Sum": sum_, "math.Saturation": saturation,
    "math.DeadZone": dead_zone, "math.Switch": switch, "math.UnitConversion": unit_conversion,
    "math.Mux": mux, "math.Demux": demux, "math.Product": product, "math.Abs": abs_,
    "math.MinMax": min_max, "math.RateLimiter": rate_limiter, "math.Relay": relay,
    "lti.StateSpace": state_space, "continuous.Integrator": integrator,
    "continuous.FilteredDerivative": filtered_derivative, "pid.PID": pid,
    "pid.DiscretePID": discrete_pid, "discrete.ZeroOrderHold": zero_order_hold,
    "discrete.UnitDelay": unit_delay, "discrete.DiscreteIntegrator": discrete_integrator,
    "discrete.DiscreteStateSpace": discrete_state_space, "tables.Table1D": table1d,
    "tables.Table2D": table2d, "sources.Constant": constant, "sources.Step": step,
    "sources.Ramp": ramp, "sources.Sine": sine, "sources.TimeSource": time_source,
    "sinks.Terminator": terminator,
}
for _name, _fn in _BUILTIN.items():
    register_c_model(_T.format(_name), _fn)

