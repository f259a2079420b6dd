"""C forms of the paper-reel blocks (``c_model`` methods of :mod:`.reel`, :mod:`.system`,
:mod:`.sensors` and :mod:`.faults`), so the reel diagrams run in a compiled Simulator.

Each mirrors its block's Python arithmetic operation by operation (the C is built with
``-ffp-contract=off``; ``**`` is ``pow``, ``math`` functions are the C library's): constant
subexpressions the Python evaluates from constants alone are evaluated once in Python and
written as literals; a loop over the contact elements runs in the Python's order; the sensor
noise's sum is NumPy's pairwise summation (blocks of eight, :func:`_PAIRWISE`).  Tunable
parameters (the rail friction coefficients, a fault's magnitude, a sensor's bias and noise
level) are C parameters read at every use.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.codegen.model import CModel, c_float

f = c_float

#: NipContactLaw.line_load with smoothstep (nip.py)
_LINE_LOAD = """static double cosim_reel_line_load(double delta, double rate, double k_a, double e,
                                  double c, double depth) {
    double q, s, ss;
    if (delta <= 0.0) return 0.0;
    q = k_a * pow(delta, e);
    if (c != 0.0) {
        s = delta / depth;
        ss = s <= 0.0 ? 0.0 : (s >= 1.0 ? 1.0 : s * s * (3.0 - 2.0 * s));
        q += c * ss * rate;
    }
    return q > 0.0 ? q : 0.0;
}"""

#: RailFriction.force (reel.py)
_FRICTION = """static double cosim_reel_friction(double v, double normal, double ms, double md,
                                 double vs, double vt, double visc) {
    double r = v / vs;
    double mu = (md + (ms - md) * exp(-r * r)) * tanh(v / vt);
    return normal * mu + visc * v;
}"""

#: numpy's pairwise summation of n doubles (add.reduce of a contiguous float64 array)
_PAIRWISE = """static double cosim_pairwise_sum(const double *a, int n) {
    if (n < 8) {
        double res = 0.0;
        int i;
        for (i = 0; i < n; i++) res += a[i];
        return res;
    } else if (n <= 128) {
        double r[8], res;
        int i, j;
        for (j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (j = 0; j < 8; j++) r[j] += a[i + j];
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    } else {
        int n2 = n / 2;
        n2 -= n2 % 8;
        return cosim_pairwise_sum(a, n2) + cosim_pairwise_sum(a + n2, n - n2);
    }
}"""


def fault_ramp(b: Any, cg: Any) -> CModel:
    """:class:`~.faults.FaultRamp`: ``m clip((t - t0)/T_r, 0, 1)``."""
    m = cg.param("magnitude", float(cg.value(b.magnitude)))
    y = f"{cg.y(b.y)} = sr <= 0.0 ? 0.0 : {m} * (sr >= 1.0 ? 1.0 : sr);"
    return CModel(outputs={"y": f"{{ double sr = ({cg.t} - {f(b.t0)}) / {f(b.tr)};\n{y} }}"},
                  time_dependent=True)


def force_reference(b: Any, cg: Any, G: float) -> CModel:  # noqa: N803 - the module's G
    """:class:`~.system.NipForceReference`: ``q W/2 - G (mu_c m_c + mu_s (m_s + m_r/2))``
    (``G``: :data:`blocks.paper.system.G`)."""
    p = b.p
    carriage = p.carriage_friction.mu_dynamic * p.carriage_mass_kg  # (the Python's order)
    code = (f"{{ double fr = 0.5 * {cg.u(b.nip_ref)} * {f(p.web_width_m)} - {f(G)} * "
            f"({f(carriage)} + {f(p.sledge_friction.mu_dynamic)} * "
            f"({f(p.sledge_mass_kg)} + 0.5 * {cg.u(b.roll_mass)}));\n")
    return CModel(outputs={"force_ref_A": code + f"{cg.y(b.force_ref_A)} = fr; }}",
                           "force_ref_B": code + f"{cg.y(b.force_ref_B)} = fr; }}"})


def force_sensor(b: Any, cg: Any) -> CModel:
    """:class:`~.sensors.ForceSensor`: ``k F + bias (+ sigma n(t))``, the noise the sum of
    its cosines in NumPy's order."""
    cg.helper("cosim_pairwise_sum", _PAIRWISE)
    nz = b.noise
    om, ph = cg.const(np.asarray(nz.omega, dtype=float)), cg.const(np.asarray(nz.phase,
                                                                               dtype=float))
    bias = cg.param("bias", float(cg.value(b.bias)), unit="N")
    std = cg.param("noise_std", float(cg.value(b.noise_std)), unit="N")
    code = (f"double y = {f(b.k)} * {cg.u(b.force)} + {bias};\n"
            f"double sd = {std};\n"
            f"if (sd != 0.0) {{\n"
            f"    double c[{nz.n}];\n    int i;\n"
            f"    for (i = 0; i < {nz.n}; i++) c[i] = cos({om.ptr}[i] * {cg.t} + {ph.ptr}[i]);\n"
            f"    y += sd * ({f(nz.amp)} * cosim_pairwise_sum(c, {nz.n}));\n}}\n"
            f"{cg.y(b.measured)} = y;")
    return CModel(outputs={"measured": "{\n" + code + "\n}"}, time_dependent=True)


def reel_mechanics(b: Any, cg: Any) -> CModel:
    """:class:`~.reel.ReelMechanics`: roll growth, the nip's contact elements, rail friction
    and the 2 x 2 mass matrix solved by hand (:meth:`~.reel.ReelMechanics.derivatives`)."""
    cg.helper("cosim_reel_line_load", _LINE_LOAD)
    cg.helper("cosim_reel_friction", _FRICTION)
    law = b.contact
    lawargs = f"{f(law.k_a)}, {f(law.exponent)}, {f(law.damping_n_s_m2)}, " \
              f"{f(law.damping_depth_m)}"
    alpha = cg.const(np.array([a for a, _ in b._ab]))
    beta = cg.const(np.array([bb for _, bb in b._ab]))
    g0, g1 = cg.x(b.x_gap[0]), cg.x(b.x_gap[1])
    v0, v1 = cg.x(b.x_vel[0]), cg.x(b.x_vel[1])
    pi = f(math.pi)
    k_paper = b.rho * b.W * 0.25 * math.pi
    kin = (f"double d = sqrt({f(b.d0)} * {f(b.d0)} + 4.0 * {f(b.tau)} * {cg.x(b.x_l)} / {pi});\n"
           f"double m_p = {f(k_paper)} * (d * d - {f(b.dc * b.dc)});\n"
           f"(void)m_p;\n")
    rate = (f"double dd = 2.0 * {f(b.tau)} * {cg.u(b.web_speed)} / ({pi} * d);\n"
            f"double h = 0.5 * dd;\n(void)h;\n")
    sums = (f"double total = 0.0, fa = 0.0, fb = 0.0;\nint j;\n"
            f"for (j = 0; j < {b.n}; j++) {{\n"
            f"    double a = {alpha.ptr}[j], bb = {beta.ptr}[j];\n"
            f"    double q = cosim_reel_line_load(-(a * {g0} + bb * {g1}), "
            f"h - a * {v0} - bb * {v1}, {lawargs});\n"
            f"    if (q != 0.0) {{ total += q; fa += q * a; fb += q * bb; }}\n}}\n"
            f"total = total * {f(b.w)}; fa = fa * {f(b.w)}; fb = fb * {f(b.w)};\n")
    ea, eb = b.end_alpha, b.end_beta
    ends = (f"double qa = cosim_reel_line_load({f(-ea)} * {g0} - {f(eb)} * {g1}, "
            f"0.5 * dd - {f(ea)} * {v0} - {f(eb)} * {v1}, {lawargs});\n"
            f"double qb = cosim_reel_line_load({f(-eb)} * {g0} - {f(ea)} * {g1}, "
            f"0.5 * dd - {f(eb)} * {v0} - {f(ea)} * {v1}, {lawargs});\n(void)qa; (void)qb;\n")
    mu = {k: cg.param(f"mu_{k[0]}_{k[1]}_{k[2]}", float(cg.value(h)), unit="1")
          for k, h in b.mu.items()}
    fc, fs = b.friction["carriage"], b.friction["sledge"]
    n_c = b.m_c * b.g
    fric = f"double n_s = ({f(b.m_s)} + 0.5 * ({f(b.m_spool)} + m_p)) * {f(b.g)};\n"
    for i, side in enumerate("AB"):
        v = (v0, v1)[i]
        fric += (f"double ff{i} = cosim_reel_friction({v}, {f(n_c)}, "
                 f"{mu[('static', 'carriage', side)]}, {mu[('dynamic', 'carriage', side)]}, "
                 f"{f(fc.stribeck_velocity_m_s)}, {f(fc.tanh_velocity_m_s)}, "
                 f"{f(fc.viscous_n_s_m)}) + cosim_reel_friction({v}, n_s, "
                 f"{mu[('static', 'sledge', side)]}, {mu[('dynamic', 'sledge', side)]}, "
                 f"{f(fs.stribeck_velocity_m_s)}, {f(fs.tanh_velocity_m_s)}, "
                 f"{f(fs.viscous_n_s_m)});\n")
    fric += "(void)ff0; (void)ff1;\n"
    xz = f"double xz = 0.5 * (d + {f(b.d1)}) - {f(b.X0)};\n"

    def blk(code: str) -> str:
        return "{\n" + code + "}"

    outputs = {
        "x_A": blk(kin + xz + f"{cg.y(b.x_A)} = {g0} + xz;\n"),
        "x_B": blk(kin + xz + f"{cg.y(b.x_B)} = {g1} + xz;\n"),
        "v_A": f"{cg.y(b.v_A)} = {v0};",
        "v_B": f"{cg.y(b.v_B)} = {v1};",
        "nip_A": blk(kin + rate + ends + f"{cg.y(b.nip_A)} = qa;\n"),
        "nip_B": blk(kin + rate + ends + f"{cg.y(b.nip_B)} = qb;\n"),
        "nip_mean": blk(kin + rate + sums + f"{cg.y(b.nip_mean)} = total / {f(b.W)};\n"),
        "nip_force": blk(kin + rate + sums + f"{cg.y(b.nip_force)} = total;\n"),
        "diameter": blk(kin + f"{cg.y(b.diameter)} = d;\n"),
        "roll_mass": blk(kin + f"{cg.y(b.roll_mass)} = {f(b.m_spool)} + m_p;\n"),
        "friction_A": blk(kin + fric + f"{cg.y(b.friction_A)} = ff0;\n"),
        "friction_B": blk(kin + fric + f"{cg.y(b.friction_B)} = ff1;\n"),
    }
    m_rate_k = b.rho * b.W * b.tau
    dc2 = b.dc ** 2
    w2 = b.W ** 2 / 12.0
    lb2 = b.Lb ** 2
    j_spool = b.m_spool * (b.dc ** 2 / 8.0 + b.Lb ** 2 / 12.0)
    der = (kin + rate + sums + fric
           + f"double vw = {cg.u(b.web_speed)};\n"
           f"double r0 = {cg.u(b.force_A)} + fa - ff0;\n"
           f"double r1 = {cg.u(b.force_B)} + fb - ff1;\n"
           f"double m_rate = {f(m_rate_k)} * vw;\n"
           f"double j_rate = (m_rate * ((d * d + {f(dc2)}) / 16.0 + {f(w2)}) "
           f"+ m_p * d * dd / 8.0) / {f(lb2)};\n"
           f"double a = 0.25 * m_rate + j_rate, bq = 0.25 * m_rate - j_rate;\n"
           f"double m_r = {f(b.m_spool)} + m_p;\n"
           f"double jj = ({f(j_spool)} + m_p * ((d * d + {f(dc2)}) / 16.0 + {f(w2)})) "
           f"/ {f(lb2)};\n"
           f"double pp = {f(b.m_c + b.m_s)} + 0.25 * m_r + jj, qq = 0.25 * m_r - jj;\n"
           f"double det, acc0, acc1;\n"
           f"r0 -= a * {v0} + bq * {v1};\n"
           f"r1 -= bq * {v0} + a * {v1};\n"
           f"det = pp * pp - qq * qq;\n"
           f"acc0 = (pp * r0 - qq * r1) / det;\n"
           f"acc1 = (pp * r1 - qq * r0) / det;\n"
           f"{cg.dx(b.x_gap[0])} = {v0} - 0.5 * dd;\n"
           f"{cg.dx(b.x_gap[1])} = {v1} - 0.5 * dd;\n"
           f"{cg.dx(b.x_vel[0])} = acc0;\n"
           f"{cg.dx(b.x_vel[1])} = acc1;\n"
           f"{cg.dx(b.x_l)} = vw;\n")
    return CModel(outputs=outputs, derivatives=der)
