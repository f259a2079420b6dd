"""C forms of the traffic and radar blocks of :mod:`blocks.vehicle.scenarios`.

Each function takes the block (or speed profile) and the :class:`~cosim.codegen.model.CContext`
and returns what the class's ``c_model`` (or ``c_motion``) returns; the classes call them.
This module reads the blocks' attributes only and never imports :mod:`.scenarios`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim.codegen.model import CModel, CodegenError, c_float

#: C of :class:`PiecewiseSpeed` (``bisect_right`` over the breakpoints, the segment's
#: speed, slope and exact integral).
_C_PIECEWISE = r"""/* blocks.vehicle.scenarios.PiecewiseSpeed */
static int cosim_acc_segment(double t, const double *tp, int n) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (t < tp[mid]) hi = mid; else lo = mid + 1;
    }
    return lo - 1;
}

static double cosim_acc_pw_speed(double t, const double *tp, const double *v,
                                 const double *sl, int n) {
    int i = cosim_acc_segment(t, tp, n);
    if (i < 0) return v[0];
    if (i >= n - 1) return v[n - 1];
    return v[i] + sl[i] * (t - tp[i]);
}

static double cosim_acc_pw_accel(double t, const double *tp, const double *sl, int n) {
    int i = cosim_acc_segment(t, tp, n);
    return (0 <= i && i < n - 1) ? sl[i] : 0.0;
}

static double cosim_acc_pw_anti(double t, const double *tp, const double *v,
                                const double *sl, const double *cum, int n) {
    int i = cosim_acc_segment(t, tp, n);
    double tau;
    if (i < 0) return v[0] * (t - tp[0]);
    tau = t - tp[i];
    if (i >= n - 1) return cum[n - 1] + v[n - 1] * tau;
    return cum[i] + v[i] * tau + 0.5 * sl[i] * tau * tau;
}"""

# ------------------------------------------------------------------ speed profiles


def piecewise_c_motion(profile: Any, cg: Any, t: str) -> tuple[str, str, str]:
    """C of a :class:`~.scenarios.PiecewiseSpeed`'s ``(antiderivative, speed, accel)`` at
    the C expression ``t`` (bisection over constant breakpoints)."""
    cg.helper("cosim_acc_piecewise", _C_PIECEWISE)
    n = len(profile._t)
    T, V = cg.const(profile.times), cg.const(profile.speeds)
    S = cg.const(np.asarray(profile._slope if n > 1 else [0.0]))  # unread if n = 1
    C = cg.const(np.asarray(profile._cum))
    return (f"cosim_acc_pw_anti({t}, {T.ptr}, {V.ptr}, {S.ptr}, {C.ptr}, {n})",
            f"cosim_acc_pw_speed({t}, {T.ptr}, {V.ptr}, {S.ptr}, {n})",
            f"cosim_acc_pw_accel({t}, {T.ptr}, {S.ptr}, {n})")


def sinusoidal_c_motion(profile: Any, t: str) -> tuple[str, str, str]:
    """C of a :class:`~.scenarios.SinusoidalSpeed`'s ``(antiderivative, speed, accel)`` at
    the C expression ``t``."""
    f = c_float
    m, a, w, t0 = f(profile.mean), f(profile.amp), f(profile.w), f(profile.t0)
    return (f"({m} * {t} + (({t} >= {t0}) ? ({a} / {w}) * (1.0 - cos({w} * ({t} - {t0})))"
            " : 0.0))",
            f"({m} + (({t} >= {t0}) ? {a} * sin({w} * ({t} - {t0})) : 0.0))",
            f"(({t} >= {t0}) ? {a} * {w} * cos({w} * ({t} - {t0})) : 0.0)")


# ------------------------------------------------------------------ blocks


def _c_lane(cg: Any, block: Any) -> str:
    """C of :func:`~.scenarios._lane_flag`'s ``calc`` writing ``block.in_lane`` (the changes
    counted at ``cg.mode_t``)."""
    first, ts = block._lane
    lines = [f"double q = {cg.mode_t} + 1e-12;", "int n = 0;"] if ts else ["int n = 0;"]
    lines += [f"n += {c_float(c)} <= q;" for c in ts]
    lines.append(f"{cg.y(block.in_lane)} = ({int(first)} ^ (n % 2 == 1)) ? 1.0 : 0.0;")
    return "{\n    " + "\n    ".join(lines) + "\n}"


def lead_vehicle_c_model(block: Any, cg: Any) -> CModel:
    """C form of a :class:`~.scenarios.LeadVehicle` (its ``motion`` and lane flag)."""
    p = block.profile
    if not hasattr(p, "c_motion"):
        raise CodegenError(f"LeadVehicle '{block.path}': the profile "
                           f"{type(p).__name__} has no C form (c_motion); "
                           "PiecewiseSpeed and SinusoidalSpeed have one")
    anti, speed, accel = p.c_motion(cg, cg.t)
    start = c_float(p._antiderivative(0.0))
    x = f"{c_float(block.x0)} + ({anti} - {start})"
    return CModel(outputs={
        "x": f"{cg.y(block.x)} = {x};",
        "x_rear": f"{cg.y(block.x_rear)} = ({x}) - {c_float(block.length)};",
        "v": f"{cg.y(block.v)} = {speed};",
        "a": f"{cg.y(block.a)} = {accel};",
        "in_lane": _c_lane(cg, block)}, time_dependent=True)


def idm_vehicle_c_model(block: Any, cg: Any) -> CModel:
    """C form of an :class:`~.scenarios.IDMVehicle` (its ``_accel`` and ``derivatives``)."""
    p, f = block.p, c_float
    x, v = cg.x(block.xs), cg.x(block.vs)
    free = f"1.0 - pow(vp / {f(p.desired_speed_m_s)}, {f(p.delta)})"
    lines = [f"double v = {v}, vp = (0.0 > v) ? 0.0 : v, a;"]
    if block.has_leader:
        lines += [f"double gap = {cg.u(block.leader_x_rear)} - {x};",
                  "gap = (1e-3 > gap) ? 1e-3 : gap;",
                  "if (!(gap > 0.0)) " + cg.fail(f"IDMVehicle '{block.path}': the gap to the "
                                               "leader is not a number"),
                  "{",
                  f"    double dv = vp - {cg.u(block.leader_v)};",
                  f"    double inner = vp * {f(p.time_gap_s)} + vp * dv / (2.0 * "
                  f"sqrt({f(p.max_accel_m_s2)} * {f(p.comfort_decel_m_s2)}));",
                  f"    double ss = {f(p.min_gap_m)} + ((0.0 < inner) ? inner : 0.0);",
                  f"    a = {f(p.max_accel_m_s2)} * (({free}) - pow(ss / gap, 2.0));",
                  "}"]
    else:
        lines.append(f"a = {f(p.max_accel_m_s2)} * ({free});")
    lines.append("if (v <= 0.0 && a < 0.0) a = -v / 0.05;")
    acc = "\n".join(lines)
    return CModel(outputs={
        "x": f"{cg.y(block.x)} = {x};",
        "x_rear": f"{cg.y(block.x_rear)} = {x} - {f(block.length)};",
        "v": f"{cg.y(block.v)} = {v};",
        "a": "{\n" + acc + f"\n{cg.y(block.a)} = a;\n}}",
        "in_lane": _c_lane(cg, block)},
        derivatives=f"{acc}\n{cg.dx(block.xs)} = vp;\n{cg.dx(block.vs)} = a;")


def radar_c_model(block: Any, cg: Any) -> CModel:
    """C form of a :class:`~.scenarios.Radar` (its ``_measure``, the targets unrolled)."""
    f = c_float
    lines = [f"double xe = {cg.u(block.ego_x)}, behind = -{f(block.ego_length)};",
             "double best = HUGE_VAL, r, vt = 0.0;", "int bi = -1;"]
    for i, (xr, _, lane) in enumerate(block.targets):
        lines += [f"if (!({cg.u(lane)} < 0.5)) {{",
                  f"    r = {cg.u(xr)} - xe;",
                  f"    if (behind < r && r < best) {{ best = r; bi = {i}; }}", "}"]
    lines += [f"if (bi == {i}) vt = {cg.u(v)};" for i, (_, v, _) in enumerate(block.targets)]
    mr = f(block.max_range)
    bad = f"bi < 0 || best > {mr}"
    calc = "\n    ".join(lines) + "\n    (void)vt;\n    "
    return CModel(outputs={
        "range": "{\n    " + calc + f"{cg.y(block.range)} = ({bad}) ? {mr} : best;\n}}",
        "range_rate": "{\n    " + calc + f"{cg.y(block.range_rate)} = ({bad}) ? 0.0 : "
                      f"vt - {cg.u(block.ego_v)};\n}}",
        "valid": "{\n    " + calc + f"{cg.y(block.valid)} = ({bad}) ? 0.0 : 1.0;\n}}",
        "target": "{\n    " + calc + f"{cg.y(block.target)} = ({bad}) ? -1.0 : "
                  "(double)bi;\n}"})
