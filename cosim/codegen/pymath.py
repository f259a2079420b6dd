"""Python's own arithmetic in C, where the C library's differs in the last bit, so C forms
that call it equal the Python loop bit for bit.  Each function registers its C helper once
per program (``cg.helper``) and returns the C function's name."""

from __future__ import annotations

from typing import Any

__all__ = ["OPAQUE_C", "PY_DIVMOD_C", "PY_HYPOT_C", "PY_POW_C", "opaque", "py_divmod",
           "py_hypot", "py_pow"]

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


#: C of an opaque copy of a double: the compiler cannot see its value, so it cannot fold a
#: C-library call of a constant at compile time (GCC folds ``tanh(0.53)`` with MPFR,
#: correctly rounded, where the C library at run time, and so Python, may differ in the
#: last bit)
OPAQUE_C = r"""/* x, hidden from the compiler's constant folding of C-library calls */
static inline double cosim_opaque(double x) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __asm__("" : "+x"(x));
#elif defined(__GNUC__) && defined(__aarch64__)
    __asm__("" : "+w"(x));
#elif defined(__GNUC__)
    __asm__("" : "+m"(x));
#else
    volatile double v = x;
    x = v;
#endif
    return x;
}"""

#: C of CPython 3.11's float ``%`` and ``//`` (Objects/floatobject.c: float_rem and
#: _float_div_mod); the caller checks the zero divisor (Python raises ZeroDivisionError)
PY_DIVMOD_C = r"""/* float % and // of CPython 3.11 (Objects/floatobject.c); wx != 0 */
static double cosim_py_mod(double vx, double wx) {
    double mod = fmod(vx, wx);
    if (mod) {
        if ((wx < 0) != (mod < 0)) mod += wx;
    } else {
        mod = copysign(0.0, wx);
    }
    return mod;
}
static double cosim_py_floordiv(double vx, double wx) {
    double mod = fmod(vx, wx), div = (vx - mod) / wx, floordiv;
    if (mod) {
        if ((wx < 0) != (mod < 0)) { mod += wx; div -= 1.0; }
    }
    if (div) {
        floordiv = floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
        floordiv = copysign(0.0, vx / wx);
    }
    return floordiv;
}"""

#: C of CPython 3.11's float ``**`` (float_pow): its special cases, then the C library's
#: ``pow``; ``*err``: 0, or 1 (0.0 to a negative power: ZeroDivisionError), 2 (a negative
#: number to a fractional power: Python returns a complex), 3 (overflow: OverflowError)
PY_POW_C = r"""/* float ** of CPython 3.11 (Objects/floatobject.c: float_pow) */
static int cosim_py_odd(double x) { return fmod(fabs(x), 2.0) == 1.0; }
static double cosim_py_pow(double iv, double iw, int *err) {
    int neg = 0;
    double ix;
    *err = 0;
    if (iw == 0) return 1.0;
    if (isnan(iv)) return iv;
    if (isnan(iw)) return iv == 1.0 ? 1.0 : iw;
    if (isinf(iw)) {
        iv = fabs(iv);
        if (iv == 1.0) return 1.0;
        if ((iw > 0.0) == (iv > 1.0)) return fabs(iw);
        return 0.0;
    }
    if (isinf(iv)) {
        int odd = cosim_py_odd(iw);
        if (iw > 0.0) return odd ? iv : fabs(iv);
        return odd ? copysign(0.0, iv) : 0.0;
    }
    if (iv == 0.0) {
        int odd = cosim_py_odd(iw);
        if (iw < 0.0) { *err = 1; return NAN; }
        return odd ? iv : 0.0;
    }
    if (iv < 0.0) {
        if (iw != floor(iw)) { *err = 2; return NAN; }
        iv = -iv;
        neg = cosim_py_odd(iw);
    }
    if (iv == 1.0) return neg ? -1.0 : 1.0;
    ix = pow(cosim_opaque(iv), cosim_opaque(iw));  /* GCC makes pow(x, -1.0) 1/x */
    if (isinf(ix)) { *err = 3; return ix; }
    return neg ? -ix : ix;
}"""


def py_divmod(cg: Any) -> tuple[str, str]:
    """``(cosim_py_mod, cosim_py_floordiv)``: float ``%`` and ``//`` as CPython computes them
    (the divisor must be nonzero: check it first)."""
    cg.helper("cosim_py_divmod", PY_DIVMOD_C)
    return "cosim_py_mod", "cosim_py_floordiv"


def py_pow(cg: Any) -> str:
    """``cosim_py_pow(x, y, &err)``: float ``**`` as CPython computes it (``err`` nonzero
    where Python raises or returns a complex)."""
    opaque(cg)
    cg.helper("cosim_py_pow", PY_POW_C)
    return "cosim_py_pow"


def opaque(cg: Any) -> str:
    """``cosim_opaque(x)``: ``x``, which the compiler cannot fold C-library calls of."""
    cg.helper("cosim_opaque", OPAQUE_C)
    return "cosim_opaque"
