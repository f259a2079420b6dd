"""C building blocks shared by the vehicle blocks' C forms (``c_model`` methods).

Each helper mirrors one piece of Python arithmetic the blocks use, operation by operation,
so a compiled run equals the Python loop bit for bit (the C is built with
``-ffp-contract=off``): the clipped table closures of :mod:`blocks.tables`
(``_linear_clip_1d``, ``_bilinear_clip``), :func:`numpy.interp` on a scalar, Python's
``min(max(v, lo), hi)`` and the efficiency factor of :class:`blocks.electric.Gearbox`.
"""

from __future__ import annotations

from typing import Any

from cosim.codegen.model import c_float

#: bisect.bisect_right over a double array (the tables' and np.interp's search)
_BISECT = """static int cosim_veh_bisect_right(const double *a, int n, double u) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (u < a[mid]) hi = mid; else lo = mid + 1;
    }
    return lo;
}"""

#: blocks.tables._linear_clip_1d: ends held, y_i + (u - x_i) / dx_i * dy_i inside
_LIN1D = """static double cosim_veh_lin1d(const double *x, const double *y, int n, double u) {
    int i;
    if (u <= x[0]) return y[0];
    if (u >= x[n - 1]) return y[n - 2] + (y[n - 1] - y[n - 2]);
    i = cosim_veh_bisect_right(x, n, u) - 1;
    if (i > n - 2) i = n - 2;
    return y[i] + (u - x[i]) / (x[i + 1] - x[i]) * (y[i + 1] - y[i]);
}"""

#: blocks.tables._bilinear_clip (z row-major, nx by ny)
_BILINEAR = """static double cosim_veh_bilinear(const double *x, int nx, const double *y, int ny,
                                 const double *z, double u0, double u1) {
    int i, j;
    double a, b;
    const double *z0, *z1;
    if (u0 <= x[0]) { i = 0; a = 0.0; }
    else if (u0 >= x[nx - 1]) { i = nx - 2; a = 1.0; }
    else {
        i = cosim_veh_bisect_right(x, nx, u0) - 1;
        if (i > nx - 2) i = nx - 2;
        a = (u0 - x[i]) / (x[i + 1] - x[i]);
    }
    if (u1 <= y[0]) { j = 0; b = 0.0; }
    else if (u1 >= y[ny - 1]) { j = ny - 2; b = 1.0; }
    else {
        j = cosim_veh_bisect_right(y, ny, u1) - 1;
        if (j > ny - 2) j = ny - 2;
        b = (u1 - y[j]) / (y[j + 1] - y[j]);
    }
    z0 = z + i * ny;
    z1 = z + (i + 1) * ny;
    return ((1 - a) * ((1 - b) * z0[j] + b * z0[j + 1])
            + a * ((1 - b) * z1[j] + b * z1[j + 1]));
}"""

#: numpy.interp(x, xp, fp) for a scalar x (numpy/_core/src/multiarray/compiled_base.c)
_INTERP = """static double cosim_veh_interp(double x, const double *xp, const double *fp, int n) {
    int j;
    double slope, r;
    if (n == 1) return fp[0];
    if (isnan(x)) return x;
    if (x > xp[n - 1]) return fp[n - 1];
    if (x < xp[0]) return fp[0];
    j = cosim_veh_bisect_right(xp, n, x) - 1;
    if (j >= n - 1) return fp[n - 1];
    if (xp[j] == x) return fp[j];
    slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
    r = slope * (x - xp[j]) + fp[j];
    if (isnan(r)) {
        r = slope * (x - xp[j + 1]) + fp[j + 1];
        if (isnan(r) && fp[j] == fp[j + 1]) r = fp[j];
    }
    return r;
}"""


def use(cg: Any, *names: str) -> None:
    """Emit the C helpers ``names`` ("lin1d", "bilinear", "interp") once per program."""
    cg.helper("cosim_veh_bisect_right", _BISECT)
    for n in names:
        cg.helper(f"cosim_veh_{n}", {"lin1d": _LIN1D, "bilinear": _BILINEAR,
                                     "interp": _INTERP}[n])


def clip(v: str, lo: str, hi: str, out: str) -> str:
    """``out = min(max(v, lo), hi)`` with Python's tie rules (the first argument wins)."""
    return (f"{out} = ({lo} > {v}) ? {lo} : {v};\n"
            f"{out} = ({hi} < {out}) ? {hi} : {out};")


def efficiency_factor(p_in: str, eta: float, p_s: float, out: str) -> str:
    """``out = f(p_in)`` of :class:`blocks.electric.Gearbox` (``eta``, ``p_s`` constants)."""
    e = c_float(eta)
    if p_s == 0.0:
        return f"{out} = ({p_in} >= 0.0) ? {e} : 1.0 / {e};"
    return (f"{{\n    double s_ = fabs({p_in}) / {c_float(p_s)};\n"
            "    s_ = (1.0 < s_) ? 1.0 : s_;\n"
            f"    {out} = ({p_in} >= 0.0) ? 1.0 - (1.0 - {e}) * s_ "
            f": 1.0 + (1.0 / {e} - 1.0) * s_;\n}}")


def scoped(outputs: dict[str, str]) -> dict[str, str]:
    """Each output's statements in their own ``{ }`` (the generator may emit the outputs
    of one evaluation node one after the other in one scope)."""
    return {k: "{\n    " + v.replace("\n", "\n    ") + "\n}" for k, v in outputs.items()}
