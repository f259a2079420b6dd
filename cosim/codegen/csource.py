"""C text of the model core (``sources/model.h``) from a :class:`~cosim.codegen.program.Program`.

The core is the template ``templates/core.c`` with the generated parts
filled in: sizes and options (``#define``), initial values, rate groups,
time events, the variable table, constant arrays, the blocks' helper
functions, and the four generated functions::

    cosim_eval(M, x, due)      outputs in evaluation order (sampled blocks if due)
    cosim_eval_deriv(M, x)     the outputs the derivatives read
    cosim_derivs(M, x, dx)     derivatives of the continuous states
    cosim_updates(M, due)      discrete updates of the due rate groups

(and ``cosim_zoh_inputs`` for the exact zero-order-hold integrator).
The FMI wrapper (``templates/fmi2.c`` or ``fmi3.c``) includes this header.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .model import c_float, c_string
from .program import Program, _indent
from .time_cache import ahead_ops, guarded, keys, lookahead

TEMPLATES = Path(__file__).parent / "templates"
#: ``COSIM_METHOD`` of each integrator (``ab3``: the compiled Simulator's, not an export's)
METHODS = {"euler": 1, "heun": 2, "midpoint": 3, "rk4": 4, "zoh": 5, "ab3": 6}
#: a function shared by at most this many blocks (``static COSIM_NOINLINE``,
#: :func:`cosim.codegen.pyfunc.shared_function`) is left to the compiler to inline: no call
#: and no store and reload of each output (the nonlinear chain of 100 function blocks ran
#: 3.6 % faster, its C compiled in 0.23 s instead of 0.15; at 1000 blocks 1.4 s instead of
#: 0.6, so a function of more blocks keeps one copy; one measurement each)
INLINE_USES_MAX = 128

KIND_CODES = {"time": 0, "param": 1, "input": 2, "output": 3, "state": 4, "der": 5, "local": 6,
              "indicator": 7}
AREA_CODES = {"T": 0, "P": 1, "S": 2, "X": 3, "DX": 4, "Z": 5}

_LOCALS = """ModelState *S = &M->st;
double *s = S->s;
double *xd = S->xd;
const double *p = S->p;
const double t = S->time;
const double mt = S->mode_time;
(void)S; (void)s; (void)xd; (void)p; (void)t; (void)mt;"""


def _array(name: str, values: list | np.ndarray, ctype: str = "double", minimum: int = 1,
           fmt=c_float) -> str:
    vals = list(values)
    if not vals:
        vals = [0] * minimum
    body = ", ".join(fmt(v) for v in vals)
    lines, line = [], ""
    for part in body.split(", "):
        if len(line) + len(part) > 90:
            lines.append(line)
            line = ""
        line += part + ", "
    lines.append(line)
    inner = "\n    ".join(x.rstrip() for x in lines)
    return f"static const {ctype} {name}[] = {{\n    {inner.rstrip(',')}\n}};"


def _i64(v: int) -> str:
    return f"INT64_C({int(v)})"


def model_source(prog: Program, *, fmi_version: str, model_identifier: str, token: str,
                 header: str, integrator: str | None = None) -> str:
    """The text of ``sources/model.h``; ``integrator``: the ``COSIM_METHOD`` (default the
    program's; ``"ab3"`` for the compiled Simulator, :mod:`cosim.compiled_run`)."""
    core = (TEMPLATES / "core.c").read_text()
    variables = flat_variables(prog, fmi_version)
    zoh = prog.zoh
    nv = len(zoh["v"]) if zoh else 0
    in_off = [v.offset + i for v in prog.variables if v.kind == "input" for i in range(v.size)]
    method = METHODS[integrator or prog.integrator]
    ahead = ahead_ops(prog.ops) if method == METHODS["rk4"] else []
    defines = "\n".join([
        f"#define COSIM_MODEL_IDENTIFIER {c_string(model_identifier)}",
        f"#define COSIM_TOKEN {c_string(token)}",
        f"#define NX {prog.plan.n_continuous}",
        f"#define NXD {len(prog.xd0)}",
        f"#define NP {len(prog.p0)}",
        f"#define NS {prog.n_signals}",
        f"#define NG {len(prog.rate_groups)}",
        f"#define NBP {len(prog.breakpoints)}",
        f"#define NV {nv}",
        f"#define NIN {len(in_off)}",
        f"#define NZ {len(prog.zero_crossings)}",
        f"#define COSIM_METHOD {method}",
        f"#define COSIM_H_TICKS INT64_C({int(prog.step_ticks)})",
        f"#define COSIM_NVARS {len(variables)}",
        f"#define COSIM_TC_MT {int(prog.time_only_mt)}",
        f"#define COSIM_TC_AHEAD {int(bool(ahead))}",
    ])
    ng = len(prog.rate_groups)
    tables = [
        _array("COSIM_X0", prog.x0),
        _array("COSIM_XD0", prog.xd0),
        _array("COSIM_P0", prog.p0),
        _array("COSIM_RG_PERIOD", [g[0] for g in prog.rate_groups], "int64_t", fmt=_i64),
        _array("COSIM_RG_OFFSET", [g[1] for g in prog.rate_groups], "int64_t", fmt=_i64),
        _array("COSIM_BREAKPOINTS", prog.breakpoints, "int64_t", fmt=_i64),
        _array("COSIM_X_NAMES", prog.x_names or [""], "char *const", fmt=c_string),
        _array("COSIM_IN_OFF", in_off, "int", fmt=str),
        _array("COSIM_ZC_DIR", [z[2] for z in prog.zero_crossings], "int", fmt=str),
        _array("COSIM_ZC_TERMINAL", [int(z[3]) for z in prog.zero_crossings], "int", fmt=str),
    ]
    if zoh:
        nx = prog.plan.n_continuous
        B = zoh["B"] if nv else np.zeros((nx, 1))
        tables += [_array("COSIM_ZOH_A", zoh["A"].reshape(-1)),
                   _array("COSIM_ZOH_B", B.reshape(-1)),
                   _array("COSIM_ZOH_E", zoh["e"])]
    for name, arr in prog.consts:
        tables.append(_array(name, arr.reshape(-1)))
    if prog.externs:
        tables.append(externs_table(prog.externs))
    tables.append(
        "enum { AREA_T, AREA_P, AREA_S, AREA_X, AREA_DX, AREA_Z };\n"
        "enum { VK_TIME, VK_PARAM, VK_INPUT, VK_OUTPUT, VK_STATE, VK_DER, VK_LOCAL, "
        "VK_INDICATOR };\n"
        "typedef struct { unsigned char kind, area; unsigned int offset, size; } CosimVar;\n"
        "static const CosimVar COSIM_VARS[COSIM_NVARS] = {\n"
        + ",\n".join(f"    {{{KIND_CODES[v.kind]}, {AREA_CODES[v.area]}, {off}, {size}}}"
                     f"  /* {vr}: {_comment(v.name)} */"
                     for vr, (v, off, size) in enumerate(variables))
        + "\n};")
    text = core.replace("/*@DEFINES@*/", defines)
    text = text.replace("/*@ALL_DUE@*/", ", ".join(["1"] * ng) if ng else "0")
    text = text.replace("/*@TABLES@*/", "\n\n".join(tables))
    text = text.replace("/*@HELPERS@*/", helpers_text(prog))
    functions = _functions(prog)
    if ahead:
        functions += "\n\n" + lookahead(ahead, _comment, _indent)
    text = text.replace("/*@FUNCTIONS@*/", functions)
    return header + text


def externs_table(externs: dict) -> str:
    """The table of external functions (``CContext.extern_fn``): pointers set after loading
    (``cosim_set_extern``, :func:`cosim.codegen.state.bind_externs`), one macro per
    function casting its entry to the function's type."""
    lines = ["/* external functions (cosim.codegen CContext.extern_fn): compiled code outside "
             "this source,\n * called by address; set once per process after loading "
             "(cosim_set_extern) */",
             f"static void *cosim_externs[{len(externs)}];",
             "void cosim_set_extern(int k, void *f) { cosim_externs[k] = f; }"]
    for key, (k, ret, args, _addr) in sorted(externs.items(), key=lambda kv: kv[1][0]):
        lines.append(f"typedef {ret} (*cosim_extern_{k}_t)({args});  /* {_comment(key)} */")
        lines.append(f"#define COSIM_EXTERN_{k} ((cosim_extern_{k}_t)cosim_externs[{k}])")
    return "\n".join(lines)


def flat_variables(prog: Program, fmi_version: str) -> list:
    """``(Var, offset, size)`` per value reference: FMI 2 one per scalar element, FMI 3
    one per variable."""
    out = []
    for v in prog.variables:
        if fmi_version.startswith("3") or v.size == 1:
            out.append((v, v.offset, v.size))
        else:
            out.extend((v, v.offset + i, 1) for i in range(v.size))
    return out


def _comment(text: str) -> str:
    return text.replace("*/", "* /")


def _functions(prog: Program) -> str:
    def block(ops, filt, which: tuple[int, ...]) -> str:
        parts = []
        cached = [k for k in which if any(op.time_only and filt(op) and
                                          op.for_derivatives == (k == 0) for op in ops)]
        for op in ops:
            if not filt(op):
                continue
            body = "{\n" + _indent(op.code) + "\n}"
            if op.groups:
                cond = " || ".join(f"due[{g}]" for g in op.groups)
                body = f"if (due && ({cond})) " + body
            elif op.time_only:
                body = guarded(op, body)
            parts.append(f"/* {_comment(op.comment)} */\n{body}")
        if not cached:
            return "\n".join(parts)
        before, after = keys(tuple(cached))
        return "\n".join([before, *parts, after])

    fns = []
    fns.append("static void cosim_eval(Model *M, const double *x, const int *due) {\n"
               + _indent(_LOCALS + "\n(void)x; (void)due;\n"
                         + block(prog.ops, lambda o: True, (0, 1)))
               + "\n}")
    fns.append("static void cosim_eval_deriv(Model *M, const double *x) {\n"
               + _indent(_LOCALS + "\n(void)x;\n"
                         + block(prog.ops, lambda o: o.for_derivatives and not o.groups, (0,)))
               + "\n}")
    fns.append("static void cosim_derivs(Model *M, const double *x, double *dx) {\n"
               + _indent(_LOCALS + "\n(void)x; (void)dx;\n" + "\n".join(prog.derivatives))
               + "\n}")
    upd = []
    for g, codes in enumerate(prog.updates):
        if codes:
            upd.append(f"if (due[{g}]) {{\n" + _indent("\n".join(codes)) + "\n}")
    fns.append("static void cosim_updates(Model *M, const int *due) {\n"
               + _indent(_LOCALS + "\nconst double *x = S->x;\n(void)x; (void)due;\n"
                         + "\n".join(upd)) + "\n}")
    zc = prog.zero_crossings
    fns.append("static void cosim_indicators(Model *M, double *z) {\n"
               + _indent(_LOCALS + "\nconst double *x = S->x;\n(void)x; (void)z;\n"
                         + "\n".join(f"z[{k}] = {w}; /* {_comment(label)} */"
                                      for k, (w, _h, _d, _t, label) in enumerate(zc)))
               + "\n}")
    cases = "\n".join(f"case {k}: /* {_comment(label)} */\n{{\n{_indent(h)}\n}}\nbreak;"
                       for k, (_w, h, _d, _t, label) in enumerate(zc))
    fns.append("static void cosim_zc_handle(Model *M, int k) {\n"
               + _indent(_LOCALS + "\ndouble *x = S->x;\n(void)x;\nswitch (k) {\n"
                         + cases + "\ndefault: break;\n}") + "\n}")
    fns.append(prog.tangent)
    if prog.zoh:
        body = "\n".join(f"v[{j}] = {name};" for j, name in enumerate(prog.zoh["v"]))
        fns.append("static void cosim_zoh_inputs(Model *M, double *v) {\n"
                   + _indent(_LOCALS + "\n(void)v;\n" + body) + "\n}")
    return "\n\n".join(fns)


def helpers_text(prog: Program) -> str:
    """The helpers' C in the order registered, functions shared by at most
    :data:`INLINE_USES_MAX` blocks without their ``COSIM_NOINLINE`` (inlining does not
    change a result: no contraction, ``-ffp-contract=off``, and no fast-math)."""
    out = []
    for key, code in prog.helpers.items():
        if prog.helper_uses.get(key, 0) <= INLINE_USES_MAX:
            code = code.replace("static COSIM_NOINLINE ", "static ", 1)
        out.append(code)
    return "\n\n".join(out)
