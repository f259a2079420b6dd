"""C forms of the ACC controller (:mod:`blocks.controllers.acc`): the scalar lookups of
its engine map and driveline model as C functions, and the controller's step as one static
C function per block (mirroring ``ACCController._step`` expression by expression).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from cosim.codegen.model import CModel, c_float

from . import iso15622 as iso

#: C of the scalar lookups (:meth:`EngineMap._interp`, ``bisect_right``,
#: :meth:`EngineMap.torque`, :meth:`EngineMap.throttle_for`), shared by the C forms.
_C_LOOKUPS = r"""/* blocks.controllers.acc: bisect_right(xl, x) - 1 */
static int cosim_acc_bisect(const double *xl, int n, double x) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (x < xl[mid]) hi = mid; else lo = mid + 1;
    }
    return lo - 1;
}

/* EngineMap._interp: np.interp for one point (ends held) */
static double cosim_acc_interp(double x, const double *xp, const double *fp, int n) {
    int i;
    if (x <= xp[0]) return fp[0];
    if (x >= xp[n - 1]) return fp[n - 1];
    i = cosim_acc_bisect(xp, n, x);
    if (i >= n - 1) return NAN;
    return fp[i] + (x - xp[i]) * (fp[i + 1] - fp[i]) / (xp[i + 1] - xp[i]);
}

/* EngineMap.torque: bilinear in (throttle, speed), inputs clipped to the grid;
 * tq[i * nw + j] is the torque at throttle a[i] and speed w[j] */
static double cosim_acc_torque(double th, double sp, const double *a, int na,
                               const double *w, const double *dw, int nw,
                               const double *tq) {
    int i, j;
    double fa, fw, lo, hi;
    if (th <= a[0]) { i = 0; fa = 0.0; }
    else if (th >= a[na - 1]) { i = na - 2; fa = 1.0; }
    else {
        i = cosim_acc_bisect(a, na, th);
        if (i > na - 2) return NAN;  /* NaN throttle (Python: IndexError) */
        fa = (th - a[i]) / (a[i + 1] - a[i]);
    }
    if (sp <= w[0]) { j = 0; fw = 0.0; }
    else if (sp >= w[nw - 1]) { j = nw - 2; fw = 1.0; }
    else {
        j = cosim_acc_bisect(w, nw, sp);
        if (j > nw - 2) return NAN;  /* NaN speed (Python: IndexError) */
        fw = (sp - w[j]) / dw[j];
    }
    lo = tq[i * nw + j] + fw * (tq[i * nw + j + 1] - tq[i * nw + j]);
    hi = tq[(i + 1) * nw + j] + fw * (tq[(i + 1) * nw + j + 1] - tq[(i + 1) * nw + j]);
    return lo + fa * (hi - lo);
}

/* EngineMap.throttle_for: the inverse map at one speed (EngineMap._column) */
static double cosim_acc_throttle_for(double t, double sp, const double *a, int na,
                                     const double *w, const double *dw, int nw,
                                     const double *tq) {
    double col[na];
    int i, j;
    if (sp <= w[0]) { for (i = 0; i < na; i++) col[i] = tq[i * nw]; }
    else if (sp >= w[nw - 1]) { for (i = 0; i < na; i++) col[i] = tq[i * nw + nw - 1]; }
    else {
        double f;
        j = cosim_acc_bisect(w, nw, sp);
        if (j > nw - 2) return NAN;  /* NaN speed (Python: IndexError) */
        f = (sp - w[j]) / dw[j];
        for (i = 0; i < na; i++)
            col[i] = tq[i * nw + j] + f * (tq[i * nw + j + 1] - tq[i * nw + j]);
    }
    return cosim_acc_interp(t, col, a, na);
}"""


#: C of :meth:`DrivelineModel.converter_wheel_force` (``k`` = efficiency * ratio / R).
_C_CONVERTER = r"""/* blocks.controllers.acc: DrivelineModel.converter_wheel_force */
static double cosim_acc_converter_force(double pump, double turbine, double k,
                                        const double *sr, const double *tr, const double *c,
                                        int n) {
    double w_p = (0.0 > pump) ? 0.0 : pump;
    if (turbine <= w_p) {
        double nu;
        if (w_p == 0.0) return 0.0;
        nu = ((0.0 > turbine) ? 0.0 : turbine) / w_p;
        return k * cosim_acc_interp(nu, sr, tr, n) * cosim_acc_interp(nu, sr, c, n)
            * w_p * w_p;
    }
    return -k * cosim_acc_interp(w_p / turbine, sr, c, n) * pow(turbine, 2.0);
}"""


def _c_lookups(cg: Any) -> None:
    cg.helper("cosim_acc_lookups", _C_LOOKUPS)


# ----------------------------------------- EngineMap and DrivelineModel (x: the object)
def engine_c_arrays(x: Any, cg: Any) -> str:
    """The C arguments ``a, na, w, dw, nw, tq`` of the lookups (constants)."""
    _c_lookups(cg)
    a, w = cg.const(x.throttle), cg.const(x.speed_rad_s)
    dw, tq = cg.const(np.asarray(x._dw)), cg.const(x.torque_nm)
    return (f"{a.ptr}, {x.throttle.size}, {w.ptr}, {dw.ptr}, {x.speed_rad_s.size}, "
            f"{tq.ptr}")


def engine_c_torque(x: Any, cg: Any, throttle: str, speed: str) -> str:
    """C expression of :meth:`EngineMap.torque` (``cosim_acc_torque``; a NaN input gives NaN
    where Python raises)."""
    return f"cosim_acc_torque({throttle}, {speed}, {x._c_arrays(cg)})"


def engine_c_throttle_for(x: Any, cg: Any, torque: str, speed: str) -> str:
    """C expression of :meth:`EngineMap.throttle_for` (``cosim_acc_throttle_for``)."""
    return f"cosim_acc_throttle_for({torque}, {speed}, {x._c_arrays(cg)})"


def engine_c_closed_throttle_torque(x: Any, cg: Any, speed: str) -> str:
    """C expression of :meth:`EngineMap.closed_throttle_torque` (``cosim_acc_interp``)."""
    _c_lookups(cg)
    w, c = cg.const(x.speed_rad_s), cg.const(np.asarray(x._closed))
    return f"cosim_acc_interp({speed}, {w.ptr}, {c.ptr}, {x.speed_rad_s.size})"


def driveline_c_converter_ratio(x: Any, cg: Any, speed_ratio: str) -> str:
    """C expression of :meth:`DrivelineModel.converter_ratio`."""
    if x._converter is None:
        return c_float(x.torque_ratio)
    _c_lookups(cg)
    sr, tr = (cg.const(np.asarray(v)) for v in x._converter)
    return f"cosim_acc_interp({speed_ratio}, {sr.ptr}, {tr.ptr}, {sr.size})"


def driveline_c_converter_wheel_force(x: Any, cg: Any, pump: str, turbine: str,
                                     ratio: str) -> str:
    """C expression of :meth:`DrivelineModel.converter_wheel_force` (only with a capacity curve)."""
    _c_lookups(cg)
    cg.helper("cosim_acc_converter_force", _C_CONVERTER)
    sr, tr = (cg.const(np.asarray(v)) for v in x._converter)
    c = cg.const(np.asarray(x._capacity[1]))
    k = f"{c_float(x.efficiency)} * {ratio} / {c_float(x.wheel_radius_m)}"
    return (f"cosim_acc_converter_force({pump}, {turbine}, {k}, {sr.ptr}, {tr.ptr}, "
            f"{c.ptr}, {sr.size})")


def driveline_c_resistance(x: Any, speed: str) -> str:
    """C expression of :meth:`DrivelineModel.resistance`."""
    f = c_float
    return (f"{f(0.5)} * {f(x.air_density_kg_m3)} * {f(x.drag_area_m2)} * {speed} "
            f"* {speed} + {f(x.mass_kg)} * {f(x.gravity_m_s2)} * "
            f"{f(x.rolling_resistance)}")


def controller_c_model(b: Any, cg: Any) -> CModel:
    """:meth:`~blocks.controllers.acc.ACCController.c_model` of block ``b``."""
    st, md, eng = b.settings, b.model, b.model.engine
    f = c_float
    inner = b.accel is not None
    es = b.engine_speed is not None
    names = ["range", "range_rate", "target_valid", "speed", "set_speed", "gear_ratio"]
    names += [n for n, h in (("engine_speed", b.engine_speed), ("enable", b.enable),
                             ("accel", b.accel)) if h is not None]
    u = {n: f"u[{k}]" for k, n in enumerate(names)}
    states = [b.a_prev, b.brake_mode, b.hold_state]
    if inner:
        states += [b.integral, b.ratio_prev]
    n_all = b._n_out + len(states)
    fn = ("cosim_acc_step_" + "".join(c if c.isalnum() else "_" for c in b.path)
          + f"_{zlib.crc32(b.path.encode()):08x}")
    r = f(md.wheel_radius_m)
    L = []
    if b.enable is not None:
        off = [f(float(eng.throttle[0]))] + ["0.0"] * (n_all - 1)
        if inner:
            off[-1] = "NAN"
        L.append(f"if (!({u['enable']} >= 0.5)) {{")
        L += [f"    o[{k}] = {v};" for k, v in enumerate(off)]
        L.append("    return;\n}")
    # desired_acceleration
    L += [f"double v = (0.0 > {u['speed']}) ? 0.0 : {u['speed']};",
          f"double vs = (0.0 > {u['set_speed']}) ? 0.0 : {u['set_speed']};",
          f"double a = {f(st.cruise_gain_1_s)} * (vs - v), mode = 0.0, m;",
          f"int valid = {u['target_valid']} >= 0.5, hold, stopped, braking, "
          "saturated = 0;",
          "double a_prev = xd[0], i_g, ratio, m_eff, w_e, u_cmd, lag, f_des, r_tq, gain;",
          "double t_des, f0, band, throttle, tb, b;",
          "if (valid) {",
          f"    double sg = {f(st.standstill_gap_m)} + th * v - {u['range']};",
          f"    double x = sg / {f(st.boundary_layer_m)};",
          "    double sat = (-1.0 <= x && x <= 1.0) ? x : copysign(1.0, x);",
          f"    double a_f = ({u['range_rate']} - {f(st.reaching_speed_m_s)} * sat) / th;",
          "    if (a_f < a) { a = a_f; mode = 1.0; }",
          "}",
          f"m = ({f(st.min_accel_m_s2)} > a) ? {f(st.min_accel_m_s2)} : a;",
          f"a = ({f(st.max_accel_m_s2)} < m) ? {f(st.max_accel_m_s2)} : m;"]
    # _hold
    vss = f(st.standstill_speed_m_s)
    L += ["{",
          f"    double v_target = valid ? v + {u['range_rate']} : HUGE_VAL;",
          f"    int near = valid && {u['range']} < {f(st.standstill_gap_m)} + "
          f"{f(st.standstill_window_m)};",
          "    if (xd[2] >= 0.5)",
          f"        hold = a <= 0.0 || near || v_target < {f(st.restart_speed_m_s)};",
          f"    else if (v >= {vss})",
          "        hold = 0;",
          "    else",
          f"        hold = a <= 0.0 || (near && v_target < {vss});",
          "}",
          f"stopped = hold && v < {f(b._v_stopped)};",
          "if (hold) {",
          f"    double c = -{f(st.stop_decel_m_s2)};",
          "    a = stopped ? 0.0 : ((c < a) ? c : a);",
          "}"]
    # jerk limit
    if b._jerk is not None:
        if st.jerk_limit == "iso":
            lo, hi = iso.MAX_JERK_LOW_M_S3, iso.MAX_JERK_HIGH_M_S3
            L += ["{",
                  f"    double w = (v - {f(iso.LOW_SPEED_M_S)}) / "
                  f"{f(iso.HIGH_SPEED_M_S - iso.LOW_SPEED_M_S)};",
                  "    w = (w < 0.0) ? 0.0 : ((w > 1.0) ? 1.0 : w);",
                  f"    double da = ({f(lo)} + {f(hi - lo)} * w) * {f(b.T)};"]
        else:
            L += ["{", f"    double da = {f(float(st.jerk_limit))} * {f(b.T)};"]
        L += ["    double lo = a_prev - da, hi = a_prev + da;",
              "    m = (lo > a) ? lo : a;",
              "    a = (hi < m) ? hi : m;",
              "}"]
    L += [f"i_g = (0.0 > {u['gear_ratio']}) ? 0.0 : {u['gear_ratio']};",
          f"ratio = i_g * {f(md.final_drive)};",
          f"m_eff = {f(md.mass_kg)} + ({f(md.wheel_inertia_kg_m2)} + "
          f"{f(md.engine_inertia_kg_m2)} * ratio * ratio) / ({r} * {r});",
          f"w_e = {u['engine_speed']};" if es else f"w_e = v * ratio / {r};",
          "u_cmd = a;"]
    if inner:
        T = f(b.T)
        lim = f(st.accel_integral_limit_m_s2)
        L += ["double integral = xd[3], r_prev = xd[4], e, new_i;",
              f"int moving = v >= {f(b._v_stopped)};",
              "if (moving) {",
              "    int shifting;",
              f"    e = a - {u['accel']};",
              "    shifting = r_prev == r_prev && fabs(i_g - r_prev) > "
              f"{f(st.shift_ratio_rate_1_s)} * {T} * ((r_prev > i_g) ? r_prev : i_g);",
              "    if (shifting) new_i = integral;",
              "    else {",
              f"        double q = integral + {f(st.accel_ki_1_s)} * {T} * e;",
              f"        q = (-{lim} > q) ? -{lim} : q;",
              f"        new_i = ({lim} < q) ? {lim} : q;",
              "    }",
              f"    u_cmd = a + {f(st.accel_kp)} * e + new_i;",
              "} else { e = 0.0; new_i = 0.0; }"]
    L += [f"lag = (xd[1] >= 0.5) ? {f(md.brake_lag_s)} : {f(md.drive_lag_s)};",
          f"if (lag != 0.0) u_cmd = u_cmd + lag * (a - a_prev) / {f(b.T)};",
          f"f_des = m_eff * u_cmd + ({md.c_resistance('v')});",
          f"r_tq = {f(md.torque_ratio)};"]
    if md._converter is not None and es:
        L.append(f"if (w_e > 0.0) r_tq = "
                 f"{md.c_converter_ratio(cg, f'v * ratio / {r} / w_e')};")
    L += [f"gain = {f(md.efficiency)} * r_tq * ratio / {r};",
          "if (gain > 0.0) {",
          "    t_des = f_des / gain;",
          f"    f0 = gain * {eng.c_closed_throttle_torque(cg, 'w_e')};"]
    if md._capacity is not None:
        idle = f(md.idle_speed_rad_s)
        L += ["    {",
              f"        double w_t = v * ratio / {r};",
              f"        if ({idle} > w_t) {{",
              "            double fc = "
              f"{md.c_converter_wheel_force(cg, idle, 'w_t', 'ratio')};",
              "            f0 = (fc > f0) ? fc : f0;",
              "        }",
              "    }"]
    L += ["} else { t_des = 0.0; f0 = 0.0; }",
          f"band = m_eff * {f(st.hysteresis_m_s2)};",
          "braking = (xd[1] >= 0.5) ? (f_des < f0 + band) : (f_des < f0 - band);",
          "if (braking || hold || gain <= 0.0) {",
          "    double f_now = f0;",
          f"    throttle = {f(eng._a[0])};"]
    if es and md._capacity is not None:
        L.append("    if (gain > 0.0) f_now = "
                 f"{md.c_converter_wheel_force(cg, 'w_e', f'v * ratio / {r}', 'ratio')};")
    maxb = f(md.max_brake_torque_nm)
    hold_tq = min(st.standstill_brake_torque_nm, md.max_brake_torque_nm)
    L += [f"    tb = (f_now - f_des) * {r};",
          f"    if (tb >= {maxb}) {{ tb = {maxb}; saturated = 1; }}",
          "    else if (tb < 0.0) tb = 0.0;",
          "    if (hold) {",
          f"        double ramp = stopped ? 1.0 : 1.0 - v / {vss};",
          f"        double q = ramp * {f(hold_tq)};",
          "        tb = (q > tb) ? q : tb;",
          "    }",
          "    braking = braking || hold || tb > 0.0;",
          "} else {",
          f"    throttle = {eng.c_throttle_for(cg, 't_des', 'w_e')};",
          "    tb = 0.0;",
          f"    saturated = throttle >= {f(eng._a[-1])};",
          "}",
          "b = braking ? 1.0 : 0.0;",
          "o[0] = throttle; o[1] = tb; o[2] = a; o[3] = t_des; o[4] = mode; o[5] = b;"]
    if inner:
        L += ["if (saturated && ((e > 0.0) == (tb == 0.0)))",
              "    new_i = moving ? integral : 0.0;",
              "o[6] = u_cmd; o[7] = a; o[8] = b; o[9] = hold ? 1.0 : 0.0; "
              "o[10] = new_i; o[11] = i_g;"]
    else:
        L += ["(void)saturated;", "o[6] = a; o[7] = b; o[8] = hold ? 1.0 : 0.0;"]
    cg.helper(fn, f"/* blocks.controllers.acc.ACCController._step of '{b.path}' */\n"
                  f"static void {fn}(const double *u, const double *xd, double th, "
                  "double *o) {\n    " + "\n".join(L).replace("\n", "\n    ") + "\n}")
    th = cg.param("time_gap_s", float(cg.value(b.time_gap)), unit="s")
    ins = ", ".join(cg.u(b.input(n)) for n in names)
    xds = ", ".join(cg.xd(h) for h in states)
    call = (f"double acc_u[{len(names)}] = {{{ins}}};\n"
            f"double acc_xd[{len(states)}] = {{{xds}}}, acc_o[{n_all}];\n"
            f"{fn}(acc_u, acc_xd, {th}, acc_o);\n")
    ports = [b.throttle, b.brake_torque, b.accel_request,
             b.engine_torque_request, b.mode, b.braking]
    if inner:
        ports.append(b.accel_command)
    outputs = {p.name: "{\n    " + call.replace("\n", "\n    ")
               + f"{cg.y(p)} = acc_o[{k}];\n}}" for k, p in enumerate(ports)}
    update = call + "\n".join(f"{cg.xd(h)} = acc_o[{b._n_out + k}];"
                              for k, h in enumerate(states))
    return CModel(outputs=outputs, update=update)
