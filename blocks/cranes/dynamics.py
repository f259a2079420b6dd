"""The crane's state derivative in plain floats: the core of :class:`~blocks.cranes.GantryCrane`.

Implements the equations of :mod:`blocks.cranes.gantry` (see there) for the 33 mechanical
states :data:`STATE_NAMES`.  Written with Python floats and unrolled 3-vectors (no NumPy
inside): one evaluation costs 7-14 us on the 2-core test machine (depending on its
load), where NumPy's per-call overhead on 3-vectors would cost more than the arithmetic.
:func:`make_rhs` is also what the tests, the static equilibrium and the post-processing
(rope tensions from recorded states) use.
"""

from __future__ import annotations

import math

import numpy as np

from cosim.errors import ParameterError

from .guide_arms import make_arm_dynamics
from .parameters import ROPE_SIGNS, GantryCraneParameters, suspended_body, validate

#: Names of the 33 states, in order.
STATE_NAMES = (
    "gantry_position", "trolley_position", "trolley_height", "hoist_length",
    "spreader_x", "spreader_y", "spreader_z", "e0", "e1", "e2", "e3",
    "gantry_velocity", "trolley_velocity", "trolley_vertical_velocity", "hoist_velocity",
    "spreader_vx", "spreader_vy", "spreader_vz", "omega_x", "omega_y", "omega_z",
    *(f"arm{i}_angle" for i in range(1, 7)), *(f"arm{i}_rate" for i in range(1, 7)))
N_STATES = len(STATE_NAMES)
ZG, XT, YT, L0, RX, RY, RZ, E0 = 0, 1, 2, 3, 4, 5, 6, 7
VG, VT, WT, VH, VX, VY, VZ, WX = 11, 12, 13, 14, 15, 16, 17, 18
TH, OM = 21, 27


class CraneFault(Exception):
    """A physical limit of the model was reached (turned into a StepError by the block)."""


def rotation(e0: float, e1: float, e2: float, e3: float) -> tuple:
    """Rows of :math:`A(e/|e|)` (9 floats, row major)."""
    s = 2.0 / (e0 * e0 + e1 * e1 + e2 * e2 + e3 * e3)
    return (1.0 - s * (e2 * e2 + e3 * e3), s * (e1 * e2 - e0 * e3), s * (e1 * e3 + e0 * e2),
            s * (e1 * e2 + e0 * e3), 1.0 - s * (e1 * e1 + e3 * e3), s * (e2 * e3 - e0 * e1),
            s * (e1 * e3 - e0 * e2), s * (e2 * e3 + e0 * e1), 1.0 - s * (e1 * e1 + e2 * e2))


def make_rhs(p: GantryCraneParameters):
    """The state derivative as a plain function of floats (the block's core).

    ``rhs(x, F_g, F_t, F_h, c12, c34, c5, c6, out=None) -> list`` with ``x`` the 33 states
    (a list); ``out`` (a dict) also receives ``"rope_tension"`` (4), ``"hoist_load"``,
    ``"arm_contact_torque"`` (6), ``"spreader_force"`` (all forces on the spreader but
    gravity) and ``"trolley_force"`` (the ropes' pull on the trolley; global, 3 each).  Raises
    :class:`CraneFault` at the model's limits (see the module docstring).
    """
    validate(p)
    body = suspended_body(p)
    g = p.gravity_m_s2
    m = body.mass
    inv_m = 1.0 / m
    J = [float(v) for v in body.inertia.ravel()]
    Ji = [float(v) for v in np.linalg.inv(body.inertia).ravel()]
    J00, J01, J02, J10, J11, J12, J20, J21, J22 = J
    I00, I01, I02, I10, I11, I12, I20, I21, I22 = Ji
    m_t = p.trolley_mass_kg
    m_zg = p.gantry_mass_kg + m_t + p.gantry_drive.equivalent_mass_kg
    m_xt = m_t + p.trolley_drive.equivalent_mass_kg
    m_h = p.hoist_drive.equivalent_mass_kg
    if not m_h > 0:
        raise ParameterError("GantryCrane: the hoist drive train has no mass (hoist_drive."
                             "motor_inertia_kgm2 and extra_mass_kg both 0); give it one")
    ky, cy, y_rest = (p.trolley_vertical_stiffness_n_m, p.trolley_vertical_damping_ns_m,
                      p.trolley_rest_height_m)
    EA, tau_r, l_min = p.rope_axial_stiffness_n, p.rope_damping_time_s, p.min_rope_length_m
    ssx, ssz = p.sheave_half_spacing_m
    ropes = [(float(pa[0]), float(pa[1]), float(pa[2]), sx * ssx, sz * ssz)
             for pa, (sx, sz) in zip(body.attachments, ROPE_SIGNS)]
    lam = 0.5 * p.quaternion_stabilization_per_s
    qd = 0.5 * p.air_density_kg_m3 * p.drag_coefficient
    ax_, ay_, az_ = (qd * a for a in body.areas)
    drag = qd > 0.0
    uwx, uwy, uwz = (float(u) for u in p.wind_velocity_m_s)
    bcx, bcy, bcz = body.bottom_center
    bhx, bhz = body.bottom_half
    ground = p.ground_level_m
    tg = p.target
    if tg is not None:
        t_top, t_x, t_z = tg.top_m, tg.center_x_m, tg.center_z_m
        t_hx, t_hz = tg.width_m / 2 + bhx, tg.length_m / 2 + bhz
    arm_p = p.arms
    arms = make_arm_dynamics(arm_p, body, tg)
    reach = arms.reach
    zero6 = [0.0] * 6
    up, dn = arm_p.up_angle_rad, arm_p.down_angle_rad
    sqrt = math.sqrt

    def rhs(x, fg, ft, fh, c12, c34, c5, c6, out=None):
        (zg, xt, yt, l0, rx, ry, rz, e0, e1, e2, e3, vg, vt, wt, vh, vx, vy, vz, wx, wy,
         wz) = x[:21]
        if l0 < l_min:
            raise CraneFault(f"hoist two-blocked: unstretched rope length {l0:.4g} m is below "
                         f"min_rope_length_m = {l_min:g} m (stop hoisting earlier)")
        n2 = e0 * e0 + e1 * e1 + e2 * e2 + e3 * e3
        s = 2.0 / n2
        R00 = 1.0 - s * (e2 * e2 + e3 * e3)
        R01 = s * (e1 * e2 - e0 * e3)
        R02 = s * (e1 * e3 + e0 * e2)
        R10 = s * (e1 * e2 + e0 * e3)
        R11 = 1.0 - s * (e1 * e1 + e3 * e3)
        R12 = s * (e2 * e3 - e0 * e1)
        R20 = s * (e1 * e3 - e0 * e2)
        R21 = s * (e2 * e3 + e0 * e1)
        R22 = 1.0 - s * (e1 * e1 + e2 * e2)
        # lowest point of the bottom face: ground and target container
        y_low = ry + R10 * bcx + R11 * bcy + R12 * bcz - abs(R10) * bhx - abs(R12) * bhz
        if y_low < ground:
            raise CraneFault(f"the spreader{' and container' if bcy < -1.0 else ''} hit the "
                         f"ground: lowest corner at y = {y_low:.4g} m < ground level "
                         f"{ground:g} m (landing is not modelled; stop lowering above it)")
        if tg is not None and y_low < t_top and abs(rx - t_x) < t_hx and abs(rz - t_z) < t_hz:
            raise CraneFault(f"the spreader landed on the target container: lowest corner at "
                         f"y = {y_low:.4g} m < its top {t_top:g} m (stacking contact is not "
                         "modelled; stop lowering above it)")
        # angular velocity in global components
        gx = R00 * wx + R01 * wy + R02 * wz
        gy = R10 * wx + R11 * wy + R12 * wz
        gz = R20 * wx + R21 * wy + R22 * wz
        k = EA / l0
        c = tau_r * k
        Fx = Fy = Fz = Mx = My = Mz = hoist = 0.0
        tens = [0.0, 0.0, 0.0, 0.0] if out is not None else None
        i = 0
        for px, py, pz, sx, sz in ropes:
            ax = R00 * px + R01 * py + R02 * pz
            ay = R10 * px + R11 * py + R12 * pz
            az = R20 * px + R21 * py + R22 * pz
            dx = xt + sx - rx - ax
            dy = yt - ry - ay
            dz = zg + sz - rz - az
            L = sqrt(dx * dx + dy * dy + dz * dz)
            e = L - l0
            if e > 0.0:
                ld = (dx * (vt - vx - gy * az + gz * ay) + dy * (wt - vy - gz * ax + gx * az)
                      + dz * (vg - vz - gx * ay + gy * ax)) / L
                T = k * e + c * ld
                if T > 0.0:
                    f = T / L
                    fx, fy, fz = f * dx, f * dy, f * dz
                    Fx += fx
                    Fy += fy
                    Fz += fz
                    Mx += ay * fz - az * fy
                    My += az * fx - ax * fz
                    Mz += ax * fy - ay * fx
                    hoist += T + 0.5 * k * e * e / l0
                    if tens is not None:
                        tens[i] = T
            i += 1
        if out is not None:
            out["trolley_force"] = (-Fx, -Fy, -Fz)
        # trolley and gantry take the opposite rope forces
        d_vg = (fg - Fz) / m_zg
        d_vt = (ft - Fx) / m_xt
        d_wt = -g - (ky * (yt - y_rest) + cy * wt + Fy) / m_t
        d_vh = (fh - hoist) / m_h
        # guide arms
        th = x[21:27]
        om = x[27:33]
        r12 = dn if c12 > 0.5 else up
        r34 = dn if c34 > 0.5 else up
        refs = [r12, r12, r34, r34, dn if c5 > 0.5 else up, dn if c6 > 0.5 else up]
        if th == refs and om == zero6 and (tg is None or ry - t_top >= reach) \
                and out is None:
            # arms at rest exactly on their references, no contact possible: the full
            # evaluation below gives exactly zero (the usual case away from the landing)
            dom = zero6
        else:
            dom, ax, ay, az, bx, by, bz = arms(
                th, om, refs, (rx, ry, rz), (R00, R01, R02, R10, R11, R12, R20, R21, R22),
                out)
            Fx += ax
            Fy += ay
            Fz += az
            Mx += bx
            My += by
            Mz += bz
        if drag:
            ux, uy, uz = uwx - vx, uwy - vy, uwz - vz
            sp = sqrt(ux * ux + uy * uy + uz * uz)
            Fx += ax_ * ux * sp
            Fy += ay_ * uy * sp
            Fz += az_ * uz * sp
        if out is not None:
            out["rope_tension"] = tens
            out["hoist_load"] = hoist
            out["spreader_force"] = (Fx, Fy, Fz)
        # Newton-Euler: body-frame moment, gyroscopic term, J^-1
        tx = R00 * Mx + R10 * My + R20 * Mz
        ty = R01 * Mx + R11 * My + R21 * Mz
        tz = R02 * Mx + R12 * My + R22 * Mz
        hx = J00 * wx + J01 * wy + J02 * wz
        hy = J10 * wx + J11 * wy + J12 * wz
        hz = J20 * wx + J21 * wy + J22 * wz
        tx -= wy * hz - wz * hy
        ty -= wz * hx - wx * hz
        tz -= wx * hy - wy * hx
        q = lam * (n2 - 1.0)
        return [vg, vt, wt, -vh, vx, vy, vz,
                0.5 * (-e1 * wx - e2 * wy - e3 * wz) - q * e0,
                0.5 * (e0 * wx - e3 * wy + e2 * wz) - q * e1,
                0.5 * (e3 * wx + e0 * wy - e1 * wz) - q * e2,
                0.5 * (-e2 * wx + e1 * wy + e0 * wz) - q * e3,
                d_vg, d_vt, d_wt, d_vh,
                Fx * inv_m, Fy * inv_m - g, Fz * inv_m,
                I00 * tx + I01 * ty + I02 * tz, I10 * tx + I11 * ty + I12 * tz,
                I20 * tx + I21 * ty + I22 * tz, *om, *dom]

    return rhs
