"""Python's own arithmetic in C, where the C library's differs in the last bit, so C forms
that call it equal the Python loop bit for bit.  Each function registers its C helper once
per program (``cg.helper``) and returns the C function's name."""

from __future__ import annotations

from typing import Any

__all__ = ["PY_HYPOT_C", "py_hypot"]

#: C of :func:`math.hypot` as CPython 3.11 computes it (``vector_norm`` of two coordinates:
#: lossless scaling and squaring, compensated sums, one correction step), so the C forms'
#: voltage limit equals :func:`~blocks.electric.pmsm.circle_limit` bit for bit (glibc's
#: ``hypot`` differs in the last bit for about 1 in 600 arguments)
PY_HYPOT_C = r"""/* math.hypot(x, y) of CPython 3.11 (Modules/mathmodule.c: vector_norm) */
static double cosim_py_hypot(double x, double y) {
    double v[2], mx, scale, csum = 1.0, frac1 = 0.0, frac2 = 0.0, h, t, p, pl, sh;
    int i, e;
    v[0] = fabs(x); v[1] = fabs(y);
    mx = 0.0;
    for (i = 0; i < 2; i++) if (v[i] > mx) mx = v[i];
    if (isinf(mx)) return mx;
    if (isnan(x) || isnan(y)) return NAN;
    if (mx == 0.0) return mx;
    frexp(mx, &e);
    if (e < -1023) {
        const double m = 2.2250738585072014e-308;  /* DBL_MIN: subnormals to normals */
        return m * cosim_py_hypot(v[0] / m, v[1] / m);
    }
    scale = ldexp(1.0, -e);
    for (i = 0; i < 2; i++) {
        t = v[i] * scale;
        p = t * t;
        pl = fma(t, t, -p);
        sh = csum + p;
        frac2 += (csum - sh) + p;
        csum = sh;
        frac1 += pl;
    }
    h = sqrt(csum - 1.0 + (frac1 + frac2));
    p = -h * h;
    pl = fma(-h, h, -p);
    sh = csum + p;
    frac2 += (csum - sh) + p;
    csum = sh;
    frac1 += pl;
    t = csum - 1.0 + (frac1 + frac2);
    h += t / (2.0 * h);
    return h / scale;
}"""


def py_hypot(cg: Any) -> str:
    """``cosim_py_hypot(x, y)``: :func:`math.hypot` of two floats as CPython computes it."""
    cg.helper("cosim_py_hypot", PY_HYPOT_C)
    return "cosim_py_hypot"
