"""C forms of the mooring blocks of :mod:`blocks.ocean.mooring`: the catenary solve ported
line for line.

With CPython's ``math.hypot`` in C, so the compiled run equals the Python loop bit for bit.
The functions take the block (duck-typed) and do not import :mod:`blocks.ocean.mooring`.
"""

from __future__ import annotations

import numpy as np

from cosim.codegen.model import CContext, CModel, c_float
from cosim.codegen.pymath import py_hypot

from .morison import rotation_rpy_c

__all__ = ["catenary_mooring_c", "polynomial_mooring_c"]

#: C of :func:`~blocks.ocean.mooring.catenary` (cold start, ``tol=1e-10, max_iter=100,
#: max_strain=0.1``; CPython's ``math.hypot`` from :mod:`cosim.codegen.pymath`)
_C_CATENARY = r"""/* blocks.ocean.mooring: _suspended, _grounded, _hang and catenary (cold start) */
static void cosim_oc_suspended(double H, double V, double L, double EA, double w,
                               double *X, double *Z, double *J) {
    double sb = V / H, sa = (V - w * L) / H;
    double qb = sqrt(1.0 + sb * sb), qa = sqrt(1.0 + sa * sa);
    *X = H / w * (asinh(sb) - asinh(sa)) + H * L / EA;
    *Z = H / w * (qb - qa) + (V * L - 0.5 * w * L * L) / EA;
    J[0] = (asinh(sb) - asinh(sa) - sb / qb + sa / qa) / w + L / EA;
    J[1] = (1.0 / qb - 1.0 / qa) / w;
    J[2] = (qb - qa - sb * sb / qb + sa * sa / qa) / w;
    J[3] = (sb / qb - sa / qa) / w + L / EA;
}

static void cosim_oc_grounded(double H, double V, double L, double EA, double w, double cb,
                              double *X, double *Z, double *J) {
    double LB = L - V / w;
    double s = V / H;
    double q = sqrt(1.0 + s * s);
    double dXdH, dXdV;
    *X = LB + H / w * asinh(s) + H * L / EA;
    dXdH = (asinh(s) - s / q) / w + L / EA;
    dXdV = -1.0 / w + 1.0 / (w * q);
    if (cb > 0) {
        double xb = LB - H / (cb * w);
        double xbl = (0.0 > xb) ? 0.0 : xb;
        *X -= 0.5 * cb * w / EA * (LB * LB - xb * xbl);
        dXdH -= xbl / EA;
        dXdV += cb / EA * (LB - xbl);
    }
    *Z = H / w * (q - 1.0) + V * V / (2.0 * EA * w);
    J[0] = dXdH;
    J[1] = dXdV;
    J[2] = (q - 1.0 - s * s / q) / w;
    J[3] = s / (w * q) + V / (EA * w);
}

static double cosim_oc_hang(double h, double EA_w) {
    return h > 0 ? sqrt(2.0 * h * EA_w + EA_w * EA_w) - EA_w : 0.0;
}

static void cosim_oc_evaluate(double H, double V, double L, double EA, double w, double cb,
                              double hA, double x_eff, double zf,
                              double *ex, double *ez, double *J) {
    double X, Z;
    if (hA > 0 || V - w * L >= 0) cosim_oc_suspended(H, V, L, EA, w, &X, &Z, J);
    else cosim_oc_grounded(H, V, L, EA, w, cb, &X, &Z, J);
    *ex = X - x_eff;
    *ez = Z - zf;
}

/* 0: solved, out = (h_fairlead, v_fairlead, h_anchor, v_anchor); 1: bad span; 2: fairlead
   below the seabed; 3: too short; 4: no convergence; 5: U-shaped seabed contact */
static int cosim_oc_catenary(double xf, double zf, double L, double EA, double w,
                             double friction, double hA, double tol, int max_iter,
                             double max_strain, double *out) {
    double chord, EA_w, cb, lh_a, lh_b, x_eff, H, V, ex, ez, J[4], atol;
    int it = 0;
    if (!(isfinite(xf) && xf >= 0)) return 1;
    if (zf + hA < -1e-9 * L) return 2;
    if (zf < 0 && hA > 0) {
        double rev[4];
        int rc = cosim_oc_catenary(xf, -zf, L, EA, w, 0.0, hA + zf, tol, max_iter,
                                   max_strain, rev);
        if (rc) return rc;
        out[0] = rev[2]; out[1] = -rev[3]; out[2] = rev[0]; out[3] = -rev[1];
        return 0;
    }
    chord = cosim_py_hypot(xf, zf);
    if (chord > L * (1.0 + max_strain)) return 3;
    EA_w = EA / w;
    cb = (hA == 0) ? friction : 0.0;
    if (zf == 0.0 && hA == 0.0) {
        double HF, HA;
        if (cb == 0 || xf <= L) {
            HF = (xf / L - 1.0) * EA;
            HF = (HF > 0.0) ? HF : 0.0;
            HA = HF;
        } else if (0.5 * L + EA / (cb * w) * (1.0 - xf / L) <= 0) {
            HF = (xf / L - 1.0) * EA + 0.5 * cb * w * L;
            HA = HF - cb * w * L;
            HA = (HA > 0.0) ? HA : 0.0;
        } else {
            HF = sqrt(2.0 * EA * cb * w * (xf - L));
            HA = 0.0;
        }
        out[0] = HF; out[1] = 0.0; out[2] = HA; out[3] = 0.0;
        return 0;
    }
    lh_a = cosim_oc_hang(hA, EA_w);
    lh_b = cosim_oc_hang(zf + hA, EA_w);
    if (L >= xf + lh_a + lh_b) {
        out[0] = 0.0; out[1] = w * lh_b; out[2] = 0.0;
        out[3] = (hA == 0.0) ? 0.0 : -w * lh_a;
        return 0;
    }
    if (zf > 0 && xf / zf < 1e-4) {
        double dz_hanging = L + 0.5 * w / EA * L * L;
        if (dz_hanging >= zf) {
            double LB = (zf + L + w * L * L / (2 * EA)) / (2 + w * L / EA);
            out[0] = 0.0; out[1] = w * LB; out[2] = 0.0; out[3] = -w * (L - LB);
            return 0;
        } else {
            double t0 = (zf - dz_hanging) / L * EA;
            out[0] = 0.0; out[1] = t0 + w * L; out[2] = 0.0; out[3] = t0;
            return 0;
        }
    }
    x_eff = (1e-12 * L > xf) ? 1e-12 * L : xf;
    {
        double lam = (L <= chord) ? 0.2
            : sqrt(3.0 * ((L * L - zf * zf) / (x_eff * x_eff) - 1.0));
        double h0 = fabs(0.5 * w * x_eff / lam), h1 = 1e-6 * w * L;
        H = (h1 > h0) ? h1 : h0;
        V = 0.5 * w * (zf / tanh(lam) + L);
    }
    cosim_oc_evaluate(H, V, L, EA, w, cb, hA, x_eff, zf, &ex, &ez, J);
    atol = tol * L;
    while (cosim_py_hypot(ex, ez) > atol && it < max_iter) {
        double det, dH, dV, a, r0, Hn = H, Vn = V, exn = ex, ezn = ez, Jn[4];
        int k;
        it++;
        det = J[0] * J[3] - J[1] * J[2];
        if (det == 0 || !isfinite(det)) break;
        dH = -(J[3] * ex - J[1] * ez) / det;
        dV = -(-J[2] * ex + J[0] * ez) / det;
        a = 1.0;
        if (H + dH < 0.1 * H) a = 0.9 * H / -dH;
        r0 = cosim_py_hypot(ex, ez);
        for (k = 0; k < 30; k++) {
            Hn = H + a * dH;
            Vn = V + a * dV;
            cosim_oc_evaluate(Hn, Vn, L, EA, w, cb, hA, x_eff, zf, &exn, &ezn, Jn);
            if (cosim_py_hypot(exn, ezn) < r0 || a < 1e-6) break;
            a *= 0.5;
        }
        H = Hn; V = Vn; ex = exn; ez = ezn;
        J[0] = Jn[0]; J[1] = Jn[1]; J[2] = Jn[2]; J[3] = Jn[3];
    }
    {
        double lim = (1e-12 > atol) ? 1e-12 : atol;
        if (!(cosim_py_hypot(ex, ez) <= lim)) return 4;
    }
    if (hA > 0 || V - w * L >= 0) {
        if (hA > 0 && V - w * L < 0) {
            double sa = (V - w * L) / H;
            double z_low = (1.0 - sqrt(1.0 + sa * sa)) * H / w
                - 0.5 * ((V - w * L) * (V - w * L)) / (EA * w);
            if (z_low < -hA) return 5;
        }
        out[0] = H; out[1] = V; out[2] = H; out[3] = V - w * L;
        return 0;
    }
    {
        double LB = L - V / w, HA = H - cb * w * LB;
        out[0] = H; out[1] = V; out[2] = (0.0 > HA) ? 0.0 : HA; out[3] = 0.0;
    }
    return 0;
}"""

_C_ERRORS = {1: "the horizontal span is not a finite number >= 0",
             2: "the fairlead is below the seabed",
             3: "the line is too short to reach the anchor (strain > max_strain)",
             4: "Newton did not converge in 100 iterations",
             5: "the slack line would touch the seabed between two elevated ends"}


def catenary_mooring_c(block, cg: CContext) -> CModel:
    """C of :meth:`~blocks.ocean.mooring.MooringSystem.solve` (zero roll and pitch) with
    :func:`~blocks.ocean.mooring.catenary` from the cold start, line by line in the same
    order; the lines are constants.  A line without a solution fails the step, as
    :class:`~blocks.ocean.mooring.CatenaryError` does in Python."""
    py_hypot(cg)
    cg.helper("cosim_oc_catenary", _C_CATENARY)
    sysm = block.system
    pos = [cg.u(block.position, i) for i in range(3)]
    code = [f"double hd = {cg.u(block.heading)}, F[3] = {{0.0, 0.0, 0.0}}, "
            "Mo[3] = {0.0, 0.0, 0.0}, R[9], T[" + str(len(sysm.lines)) + "];",
            rotation_rpy_c("0.0", "0.0", "hd", "R")]
    for i, ln in enumerate(sysm.lines):
        fl = [c_float(v) for v in np.asarray(ln.fairlead, dtype=float)]
        an = np.asarray(ln.anchor, dtype=float)
        h_a = max(an[2] + sysm.depth, 0.0)
        msg = {k: f"CatenaryMooring '{block.path}': catenary '{ln.name}': {v}"
               for k, v in _C_ERRORS.items()}
        rot = "".join(f"    r[{k}] = R[{3 * k}] * {fl[0]} + R[{3 * k + 1}] * {fl[1]} + "
                      f"R[{3 * k + 2}] * {fl[2]};\n    fair[{k}] = {pos[k]} + r[{k}];\n"
                      for k in range(3))
        code.append("{\n    double r[3], fair[3], d[2], xf, u[2], f[3];\n"
                    "    double out[4] = {0.0, 0.0, 0.0, 0.0};\n    int rc;\n" + rot
                    + f"    d[0] = fair[0] - {c_float(an[0])};\n"
                    f"    d[1] = fair[1] - {c_float(an[1])};\n"
                    "    xf = cosim_py_hypot(d[0], d[1]);\n"
                    f"    rc = cosim_oc_catenary(xf, fair[2] - {c_float(an[2])}, "
                    f"{c_float(ln.length)}, {c_float(ln.ea)}, {c_float(ln.w)}, "
                    f"{c_float(ln.friction)}, {c_float(h_a)}, 1e-10, 100, 0.1, out);\n"
                    + "".join(f"    if (rc == {k}) {cg.fail(m)}\n" for k, m in msg.items())
                    + "    if (xf > 0) { u[0] = d[0] / xf; u[1] = d[1] / xf; }\n"
                    "    else { u[0] = 0.0; u[1] = 0.0; }\n"
                    "    f[0] = -out[0] * u[0]; f[1] = -out[0] * u[1]; f[2] = -out[1];\n"
                    "    F[0] += f[0]; F[1] += f[1]; F[2] += f[2];\n"
                    "    Mo[0] += r[1] * f[2] - r[2] * f[1];\n"
                    "    Mo[1] += r[2] * f[0] - r[0] * f[2];\n"
                    "    Mo[2] += r[0] * f[1] - r[1] * f[0];\n"
                    f"    T[{i}] = cosim_py_hypot(out[0], out[1]);\n}}")
    code += [f"{cg.y(block.force, k)} = F[{k}];\n{cg.y(block.moment, k)} = Mo[{k}];"
             for k in range(3)]
    code += [f"{cg.y(block.tensions, i)} = T[{i}];" for i in range(len(sysm.lines))]
    body = "{\n" + "\n".join(code) + "\n}"
    return CModel(outputs={"force": body, "moment": "", "tensions": ""})


def polynomial_mooring_c(block, cg: CContext) -> CModel:
    """C of :func:`~blocks.ocean.mooring.polynomial_mooring_force` on a scalar; c1, c2, c3
    tunable."""
    c1, c2, c3 = (cg.param(h.name, float(cg.value(h)), unit=h.unit)
                  for h in (block.c1, block.c2, block.c3))
    x = cg.u(block.x)
    x2 = f"{x} * {x}" if block.even_term == "square" else f"{x} * fabs({x})"
    return CModel(outputs={"force": f"{cg.y(block.force)} = -({c1} * {x} + {c2} * ({x2})"
                                    f" + {c3} * {x} * {x} * {x});"})
