"""C form of :class:`~blocks.ocean.wave_loads.WaveLoads`: :meth:`WaveLoadModel.loads` as a
sum over the sea's components in C.

The component tables (amplitudes, frequencies, phases at the reference point, the complex
RAOs times the amplitudes, the drift coefficients times the amplitudes, the mean and the
weighted drift) are computed once in Python, by the block's own model, and become C
constants; C evaluates :math:`e_n = \\cos\\theta_n + i\\sin\\theta_n`,
:math:`\\theta_n = \\varepsilon_n - \\omega_n t` (NumPy's complex ``exp`` of a purely
imaginary argument: libm's ``cos`` and ``sin``) and the sums.

Limitation: NumPy sums the products ``e @ aX`` and ``e @ a`` (complex BLAS ``zgemv`` /
``zdotu``) in an order of its own (blocked, unrolled); C sums them in component order.  The
results agree to the rounding of a sum of N terms (about N * 1e-16 of the largest term),
not bit for bit.  The function takes the block (duck-typed) and does not import
:mod:`blocks.ocean.wave_loads`.
"""

from __future__ import annotations

import numpy as np

from cosim.codegen.model import CContext, CModel, c_float

__all__ = ["wave_loads_c"]


def wave_loads_c(block, cg: CContext) -> CModel:
    """C of :meth:`WaveLoads._calc` (module docstring); the sea and the tables are
    constants."""
    md = block.model
    n = int(md.sea.omega.size)
    a, w, eps = (cg.const(np.asarray(v, dtype=float).reshape(n))
                 for v in (md.sea.amplitude, md.sea.omega, md.eps))
    lines = ["double zr = 0.0, zi = 0.0, f1[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, "
             "f2[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, gr[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, "
             "gi[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, env;",
             "int n, j;", "(void)gr; (void)gi; (void)j;",
             f"for (n = 0; n < {n}; n++) {{",
             f"    double th = {eps.ptr}[n] - {w.ptr}[n] * {cg.t};",
             "    double er = cos(th), ei = sin(th);",
             f"    zr += er * {a.ptr}[n];", f"    zi += ei * {a.ptr}[n];"]
    if md.aX is not None:
        xr = cg.const(np.ascontiguousarray(md.aX.real))
        xi = cg.const(np.ascontiguousarray(md.aX.imag))
        lines.append("    for (j = 0; j < 6; j++) "
                     f"f1[j] += er * {xr.ptr}[6 * n + j] - ei * {xi.ptr}[6 * n + j];")
    if md.aF2 is not None and md.drift_method == "newman":
        f2 = cg.const(np.ascontiguousarray(md.aF2))
        lines.append("    for (j = 0; j < 6; j++) { "
                     f"gr[j] += er * {f2.ptr}[6 * n + j]; gi[j] += ei * {f2.ptr}[6 * n + j]; }}")
    lines += ["}", "env = hypot(zr, zi);"]
    if md.aF2 is not None:
        c = c_float(md.c)
        if md.drift_method == "mean":
            lines += [f"f2[{j}] = {c_float(float(md.mean[j]))};" for j in range(6)]
        elif md.drift_method == "seed":
            lines += [f"f2[{j}] = {c} * {c_float(float(md.weighted[j]))} * (env * env);"
                      for j in range(6)]
        else:   # Re[(e @ aF2) * conj(z)] = gr zr + gi zi
            lines += [f"f2[{j}] = {c} * (gr[{j}] * zr + gi[{j}] * zi);" for j in range(6)]
    for k in range(3):
        lines += [f"{cg.y(block.force, k)} = f1[{k}] + f2[{k}];",
                  f"{cg.y(block.moment, k)} = f1[{k + 3}] + f2[{k + 3}];"]
    lines += [f"{cg.y(block.first, j)} = f1[{j}];\n{cg.y(block.second, j)} = f2[{j}];"
              for j in range(6)]
    lines += [f"{cg.y(block.eta)} = zr;", f"{cg.y(block.envelope)} = env;"]
    body = "{\n" + "\n".join(lines) + "\n}"
    return CModel(outputs={"force": body, "moment": "", "first_order": "",
                           "second_order": "", "eta": "", "envelope": ""},
                  time_dependent=True)
