"""The exact step of an all-fused linear diagram, in the compiled Simulator's C.

When the whole continuous part of a diagram is fused linear groups driven by
state-independent inputs, the Python loop steps it by the explicit Runge-Kutta method's
exact one-step map (:class:`cosim.propagator.Propagator`, :func:`cosim.linear.rk_propagator`):

.. math:: x_{n+1} = [\\Phi \\mid \\Gamma_{c_0} \\mid \\Gamma_{c_1} \\dots]
          \\, [x_n, v(t_n + c_0 h), v(t_n + c_1 h), \\dots] + g

:func:`propagation` gives the same step to the C: the matrix ``M = [Phi | Gamma ...]`` as
constant CSR tables, the inputs ``v`` evaluated at the stage times by the derivatives' output
evaluation (``cosim_eval_deriv``, whose time-only ops are evaluated once per distinct time,
:mod:`cosim.codegen.time_cache`), one sparse product a step.  A chain of 1000 first-order lags
under RK4 is five multiplications a state a step instead of four stages of derivatives.

Like the Python loop it serves whole steps of the grid only; partial steps (before a sample
hit, a breakpoint or the end) and the fresh steps of event location take the Runge-Kutta
stages (``cosim_rk_step``).  A matrix of at most :data:`UNROLL_MAX_NNZ` stored entries is
written out as one sum per row with its constants and columns in the code (no index loads:
the 1000-lag chain's run 17 % faster than with the tables' loop, one measurement), a larger
one loops over the tables; both sum in the same order.  Order of operations: a row's sum
runs over its stored entries in order from 0, then ``+ g``, as SciPy's CSR product in
:meth:`Propagator.step`; a dense ``M`` (a small system: NumPy's BLAS product, whose order
we cannot follow) is summed the same way over its non-zero entries, and
:meth:`Propagator.steps` (the Python loop's unobserved stretch of steps) adds ``Gamma v``
after ``Phi x``.  So the C's states equal the Python loop's to about 1e-12 relative, not
bit for bit (as the Runge-Kutta stages did before).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .model import c_float

#: the most stored entries of ``M`` written out as straight-line sums (compile time grows with
#: them: ~0.35 s for the 1000-lag chain's 5000); above it the sparse product loops over tables
UNROLL_MAX_NNZ = 20000
#: rows a function of the written-out sums
ROWS_PER_FUNCTION = 64


def _table(name: str, ctype: str, values: Any, fmt: Any = str) -> str:
    vals = [fmt(v) for v in values] or ["0"]
    rows = [", ".join(vals[i:i + 8]) for i in range(0, len(vals), 8)]
    return f"static const {ctype} {name}[] = {{\n    " + ",\n    ".join(rows) + "\n};"


def propagation(prop: Any, ev: Any, prog: Any, h_ticks: int, stages: int) -> tuple[str, str]:
    """``(header, source)`` for the C of the Python loop's propagator ``prop`` (``None``:
    ``("", "")``): ``header`` goes before the model core (sizes), ``source`` after it and
    before the driver (tables and ``cosim_prop_step``).  ``ev``: the evaluator ``prop`` was
    made from (its groups' inputs, in ``prop``'s column order); ``prog``: the code
    generator's program (signal offsets); ``h_ticks``: the step ``prop`` is exact for;
    ``stages``: the method's right-hand-side evaluations a step (a partial step's count)."""
    if prop is None or h_ticks <= 0:
        return "", ""
    n = prop.n
    v_off = [prog.slot_offset[k] + i for g in ev.groups
             for k, z in zip(g.v_slots, g.v_sizes, strict=True) for i in range(z)]
    if len(v_off) != prop.nv:
        raise AssertionError(f"propagator inputs: {len(v_off)} signals for {prop.nv} columns")
    Mx = prop.M if sp.issparse(prop.M) else sp.csr_matrix(np.asarray(prop.M))
    Mx = sp.csr_matrix(Mx)  # (the stored entries in their order: SciPy's sum follows it)
    nz = n + len(prop.cs) * prop.nv if prop.nv else n
    header = (f"#define COSIM_PROPAGATE 1\n#define COSIM_PROP_NZ {nz}\n"
              f"#define COSIM_PROP_NC {len(prop.cs) if prop.nv else 0}\n"
              f"#define COSIM_PROP_NV {prop.nv}\n"
              f"#define COSIM_PROP_H_TICKS INT64_C({int(h_ticks)})\n"
              f"#define COSIM_RK_STAGES {int(stages)}\n")
    g = np.asarray(prop.g, dtype=float).reshape(-1)
    source = "\n\n".join([
        "/* ------------------------------------------ the exact linear step "
        "(cosim/codegen/propagate_c.py) */",
        _rows(Mx, g if prop.has_g else None),
        _table("COSIM_PROP_C", "double", prop.cs, c_float),
        _table("COSIM_PROP_V", "int", v_off),
        _STEP])
    return header, source


def _rows(Mx: Any, g: Any) -> str:
    """``cosim_prop_rows(z, x)``: ``x_i = sum_k M_ik z_k (+ g_i)``, each row summed over its
    stored entries in order from ``0.0`` (as SciPy's CSR product), written out when ``M`` has
    at most :data:`UNROLL_MAX_NNZ` entries, else a loop over the CSR tables."""
    head = "/* x_i = sum over row i's stored entries of M, in order, of M_ik z_k (+ g_i) */\n"
    if Mx.nnz > UNROLL_MAX_NNZ:
        tables = [_table("COSIM_PROP_DATA", "double", Mx.data, c_float),
                  _table("COSIM_PROP_IDX", "int", Mx.indices),
                  _table("COSIM_PROP_PTR", "int", Mx.indptr)]
        if g is not None:
            tables.append(_table("COSIM_PROP_G", "double", g, c_float))
        add_g = "\n        acc += COSIM_PROP_G[i];" if g is not None else ""
        return "\n\n".join(tables) + "\n\n" + head + (
            "static void cosim_prop_rows(const double *z, double *x) {\n"
            "    int i, k;\n"
            "    for (i = 0; i < NX; i++) {\n"
            "        double acc = 0.0;\n"
            "        for (k = COSIM_PROP_PTR[i]; k < COSIM_PROP_PTR[i + 1]; k++)\n"
            "            acc += COSIM_PROP_DATA[k] * z[COSIM_PROP_IDX[k]];"
            f"{add_g}\n"
            "        x[i] = acc;\n"
            "    }\n}")
    lines = []
    for i in range(Mx.shape[0]):
        acc = "0.0"
        for k in range(Mx.indptr[i], Mx.indptr[i + 1]):
            acc = f"({acc} + {c_float(Mx.data[k])} * z[{int(Mx.indices[k])}])"
        if g is not None:
            acc = f"({acc} + {c_float(g[i])})"
        lines.append(f"    x[{i}] = {acc};")
    # rows in functions of ROWS_PER_FUNCTION, not inlined, optimised by gcc at -O1: the
    # 1000-lag chain's rows then add 0.35 s to its 0.65 s compile (one -O2 function of them:
    # 1.0 s) and run as fast (one measurement)
    parts = [lines[i:i + ROWS_PER_FUNCTION] for i in range(0, len(lines), ROWS_PER_FUNCTION)]
    out = ["#if defined(__GNUC__) && !defined(__clang__)\n"
           "#define COSIM_PROP_NOINLINE __attribute__((noinline, optimize(\"O1\")))\n"
           "#elif defined(__GNUC__)\n#define COSIM_PROP_NOINLINE __attribute__((noinline))\n#else\n"
           "#define COSIM_PROP_NOINLINE\n#endif"]
    for j, part in enumerate(parts):
        out.append(f"static COSIM_PROP_NOINLINE void cosim_prop_rows{j}(const double *z, "
                   "double *x) {\n" + "\n".join(part) + "\n}")
    calls = "".join(f"\n    cosim_prop_rows{j}(z, x);" for j in range(len(parts)))
    out.append(head + "static void cosim_prop_rows(const double *z, double *x) {"
               + (calls or "\n    (void)z; (void)x;") + "\n}")
    return "\n\n".join(out)


_STEP = r"""/* x <- M [x, v(t + c_0 h), v(t + c_1 h), ...] + g: Propagator.step (mode time t) */
static void cosim_prop_step(Model *M, double t, double h) {
    ModelState *S = &M->st;
    double *z = M->prop_z;
    int j, k;
    S->mode_time = t;
    memcpy(z, S->x, sizeof(double) * NX);
    for (j = 0; j < COSIM_PROP_NC; j++) {
        S->time = t + COSIM_PROP_C[j] * h;
#if COSIM_TC_AHEAD  /* times 1 and 2, 3 and 4 ... evaluated together (time_cache.py) */
        if (j % 2 == 1 && j + 1 < COSIM_PROP_NC)
            cosim_tc_ahead(M, S->time, t + COSIM_PROP_C[j + 1] * h);
        else if (j % 2 == 0 && j > 0)
            cosim_tc_take(M, t + COSIM_PROP_C[j - 1] * h, S->time);
#endif
        cosim_eval_deriv(M, S->x);
        for (k = 0; k < COSIM_PROP_NV; k++)
            z[NX + j * COSIM_PROP_NV + k] = S->s[COSIM_PROP_V[k]];
    }
    cosim_prop_rows(z, S->x);
}"""
