r"""The spreader's six guide arms (flippers), seed Paper V: PD control, stop bars, contact.

Each arm is a 1-DOF rotation about a horizontal hinge on the spreader, angle
:math:`\theta` measured from the outward horizontal (+pi/2 up against the upper stop bar,
-pi/2 down, hanging just outside the container faces; geometry in
:class:`~blocks.cranes.parameters.GuideArmParameters`):

.. math::

    J_a \ddot\theta &= T_a + T_s + T_c \\
    T_a &= \mathrm{sat}_{T_{max}}\big(K_a (\theta_{ref} - \theta)\big) - c_a \dot\theta,
        \qquad \theta_{ref} = -\pi/2 \text{ (command > 0.5) or } +\pi/2 \\
    T_s &= -\max\big(0,\ k_s (\theta - \theta_{up}) + c_s \dot\theta\big) \ (\theta > \theta_{up}),
        \quad \max\big(0,\ k_s (\theta_{down} - \theta) - c_s \dot\theta\big)
        \ (\theta < \theta_{down}) \\
    T_c &= \max\big(0,\ k_c (\alpha - \theta) - c_c \dot\theta\big) \quad (\theta < \alpha),
        \qquad F_a = T_c / \rho

(the seed's :math:`T_{tot} = T_a - T_{ca}`, :math:`F_a = T_{ca}/l_{ca}`, with the signs
made explicit).  The saturation acts on the proportional part only, like a hydraulic
actuator whose relief valve limits the torque and whose flow losses damp it: the arm
presses with up to :math:`T_{max}` when blocked and swings at most at
:math:`T_{max}/c_a` (1.7 rad/s, ~2 s from up to down with the defaults).  Control groups
as in the seed: arms 1+2, 3+4, 5 and 6 have one command each (input ports ``arms_12``,
``arms_34``, ``arm_5``, ``arm_6``; "all up" is all four at 0).

Contact with the container below (:class:`~blocks.cranes.parameters.TargetContainer`): in
the arm's plane, with :math:`c_n` the distance of the container face beyond the hinge
along the arm's outward axis (positive when the hinge is over the container) and
:math:`c_y < 0` the container top below the hinge, the arm sweeping down first touches

* the top edge at :math:`\alpha = \operatorname{atan2}(c_y, c_n)`, :math:`\rho = |c|`,
  when :math:`|c| \le l_a`;
* else the top face with its tip, :math:`\alpha = \arcsin(c_y / l_a)`, :math:`\rho = l_a`

(no contact when :math:`c_n \le 0`, :math:`c_y \ge 0` or :math:`c_y \le -l_a`).  The
container pushes the arm with :math:`F_a` normal to the arm,
:math:`(-\sin\theta\, a + \cos\theta\, e_Y)`, at distance :math:`\rho` from the hinge;
that force, with its moment, acts on the spreader (the arm's own mass is lumped into
the spreader: what the arm takes from the container the spreader gets).

Limitations: the arm dynamics are relative to the spreader and ignore its rotation and
acceleration; the actuator's reaction torque :math:`-T_a` on the spreader is neglected (as
in the seed); the contact geometry uses the global axis :math:`a` nearest the arm's outward
axis (exact for a level, unrotated spreader; the target container is axis-aligned); arms do
not touch the carried container, the target's vertical faces or each other; the contact
force is normal to the arm (frictionless) also for a tip on the top face.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .parameters import GuideArmParameters, SuspendedBody, TargetContainer

__all__ = ["ARM_GROUPS", "GuideArmParameters", "arm_references", "contact_angle",
           "make_arm_dynamics"]

#: Which command drives which arm: (input port, arm indices 0-5).
ARM_GROUPS = (("arms_12", (0, 1)), ("arms_34", (2, 3)), ("arm_5", (4,)), ("arm_6", (5,)))


def arm_references(a: GuideArmParameters, c12: float, c34: float, c5: float,
                   c6: float) -> tuple:
    """The six reference angles for the four group commands (> 0.5: down)."""
    up, dn = a.up_angle_rad, a.down_angle_rad
    r12 = dn if c12 > 0.5 else up
    r34 = dn if c34 > 0.5 else up
    return (r12, r12, r34, r34, dn if c5 > 0.5 else up, dn if c6 > 0.5 else up)


def contact_angle(c_n: float, c_y: float, length: float) -> tuple[float, float] | None:
    """``(alpha, rho)``: the arm angle at first contact and the lever of the contact force,
    or None when the arm cannot touch (module docstring)."""
    if c_n <= 0.0 or c_y >= 0.0 or c_y <= -length:
        return None
    r2 = c_n * c_n + c_y * c_y
    if r2 <= length * length:
        r = math.sqrt(r2)
        return math.asin(c_y / r), r
    return math.asin(c_y / length), length


def make_arm_dynamics(a: GuideArmParameters, body: SuspendedBody,
                      target: TargetContainer | None) -> Callable:
    """``arms(th, om, refs, r, R, out) -> (dom, F, M)``: the arm accelerations (6), and the
    contact force (global) and its moment about the centre of mass (global) on the spreader.

    ``r`` is the centre of mass, ``R`` the rotation matrix rows (9 floats, row major);
    ``out`` (a dict or None) receives the contact torques ``"arm_contact_torque"``.
    The function's attribute ``reach`` is the largest height of the centre of mass above
    the target's top at which an arm can touch it.
    """
    J, K, C, Tm = a.inertia_kgm2, a.gain_nm_per_rad, a.damping_nms_per_rad, a.torque_max_nm
    up, dn = a.up_angle_rad, a.down_angle_rad
    ks, cs = a.stop_stiffness_nm_per_rad, a.stop_damping_nms_per_rad
    kc, cc = a.contact_stiffness_nm_per_rad, a.contact_damping_nms_per_rad
    la = a.length_m
    inv_j = 1.0 / J
    hinges = [tuple(map(float, h)) for h in body.hinges]
    # global axis nearest the outward axis: (0 = X, 2 = Z, sign)
    axes = []
    for o in body.outward:
        k = 0 if abs(o[0]) >= abs(o[2]) else 2
        axes.append((k, 1.0 if o[k] > 0 else -1.0))
    reach = max(math.sqrt(h[0] ** 2 + h[1] ** 2 + h[2] ** 2) for h in hinges) + la
    if target is not None:
        tx, tz, top = target.center_x_m, target.center_z_m, target.top_m
        half = {0: target.width_m / 2, 2: target.length_m / 2}
        arm_geo = [(h, k, sg, half[k], half[2 - k]) for h, (k, sg) in zip(hinges, axes)]
    asin, atan2, sqrt, sin, cos = math.asin, math.atan2, math.sqrt, math.sin, math.cos

    def arms(th, om, refs, r, R, out):
        dom = []
        for t, w, ref in zip(th, om, refs):
            T = K * (ref - t)
            if T > Tm:
                T = Tm
            elif T < -Tm:
                T = -Tm
            T -= C * w
            if t > up:
                s = ks * (t - up) + cs * w
                if s > 0.0:
                    T -= s
            elif t < dn:
                s = ks * (dn - t) - cs * w
                if s > 0.0:
                    T += s
            dom.append(T * inv_j)
        Fx = Fy = Fz = Mx = My = Mz = 0.0
        if target is not None and r[1] - top < reach:
            rx, ry, rz = r
            R00, R01, R02, R10, R11, R12, R20, R21, R22 = R
            ctq = [0.0] * 6
            for i, (h, k, sg, hn, hl) in enumerate(arm_geo):
                hx, hy, hz = h
                px = R00 * hx + R01 * hy + R02 * hz
                py = R10 * hx + R11 * hy + R12 * hz
                pz = R20 * hx + R21 * hy + R22 * hz
                c_y = top - ry - py
                if c_y >= 0.0 or c_y <= -la:
                    continue
                if k == 0:
                    c_n = hn + sg * (tx - rx - px)
                    lat = rz + pz - tz
                else:
                    c_n = hn + sg * (tz - rz - pz)
                    lat = rx + px - tx
                if c_n <= 0.0 or lat > hl or lat < -hl:
                    continue
                r2 = c_n * c_n + c_y * c_y
                if r2 <= la * la:
                    rho = sqrt(r2)
                    alpha = atan2(c_y, c_n)
                else:
                    rho = la
                    alpha = asin(c_y / la)
                t = th[i]
                if t >= alpha:
                    continue
                Tc = kc * (alpha - t) - cc * om[i]
                if Tc <= 0.0:
                    continue
                dom[i] += Tc * inv_j
                ctq[i] = Tc
                f = Tc / rho
                st, ct = sin(t), cos(t)
                fa, fy = -st * sg * f, ct * f  # along the global axis k, and up
                # contact point relative to the centre of mass
                qa = (px if k == 0 else pz) + sg * rho * ct
                qy = py + rho * st
                qo = pz if k == 0 else px
                if k == 0:
                    Fx += fa
                    Fy += fy
                    # (qa, qy, qo) x (fa, fy, 0)
                    Mx -= qo * fy
                    My += qo * fa
                    Mz += qa * fy - qy * fa
                else:
                    Fz += fa
                    Fy += fy
                    # (qo, qy, qa) x (0, fy, fa)
                    Mx += qy * fa - qa * fy
                    My -= qo * fa
                    Mz += qo * fy
            if out is not None:
                out["arm_contact_torque"] = ctq
        elif out is not None:
            out["arm_contact_torque"] = [0.0] * 6
        return dom, Fx, Fy, Fz, Mx, My, Mz

    arms.reach = reach  # height above the target top from which a contact is possible
    return arms


def describe(a: GuideArmParameters) -> dict[str, Any]:
    """The arm layout as plain data (for reports)."""
    return {"groups": {name: [i + 1 for i in idx] for name, idx in ARM_GROUPS},
            "up_rad": a.up_angle_rad, "down_rad": a.down_angle_rad, "length_m": a.length_m}
