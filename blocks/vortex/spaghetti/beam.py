"""The finite-segment strip in the wall gap: geometry, equations of motion, contacts, the
fluid force applied to it (model and choices: :mod:`blocks.vortex.spaghetti`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cosim.errors import ParameterError

from .fluid import (
    bound_vortex_circulation,
    chord_normals,
    induced_conj_velocity,
    normal_influence,
    vortex_forces,
    wake_circulation,
)

MATERIALS = {
    "frp": dict(density=1.40e3, youngs_modulus=7.80e9, bending_rigidity=2.66),
    "aluminium": dict(density=2.86e3, youngs_modulus=99.0e9, bending_rigidity=33.8),
    "steel": dict(density=7.85e3, youngs_modulus=206e9, bending_rigidity=70.3),
}
FLUID_DENSITY = {"vacuum": 0.0, "air": 1.2, "water": 1000.0}
LENGTH_M = 0.5
THICKNESS_M = 1.6e-3


# --------------------------------------------------------------------------- the model
@dataclass
class BeamGeometry:
    """Gap, guide and contact constants (see the :mod:`blocks.vortex.spaghetti` docstring)."""

    clearance_m: float = 1e-4
    gap_length_m: float = math.inf
    guide_angle_deg: float = 0.0
    guide_length_m: float = 0.0
    contact_stiffness: float = 1e7          # N/m per m span
    contact_damping_ratio: float = 0.5
    friction_coefficient: float = 0.2
    friction_velocity_m_s: float = 1e-3
    max_penetration_m: float = 5e-3


@dataclass
class SegmentedBeam:
    r"""Numerical core of :class:`SpaghettiBeam`: kinematics, forces and :math:`\ddot q`.

    State ``x = [X0, y0, φ_1..φ_n, ẏ0, φ̇_1..φ̇_n]`` (size 2 n + 3).
    """

    n_segments: int = 16
    length_m: float = LENGTH_M
    thickness_m: float = THICKNESS_M
    density: float = 7.85e3
    bending_rigidity: float = 70.3
    hinge_damping_time_s: float = 1e-5
    fluid_density: float = 1000.0
    vortices_per_segment: int = 5
    drag_coefficient: float = 1.0
    gravity: float = 0.0
    free_stream: float = 0.0
    mutual_induction: bool = True
    added_mass: bool = False
    kutta: str = "trailing"
    wake: bool = False
    geometry: BeamGeometry = field(default_factory=BeamGeometry)

    def __post_init__(self) -> None:
        n = int(self.n_segments)
        if n < 1:
            raise ParameterError(f"SegmentedBeam: n_segments must be >= 1, got {n}")
        if self.kutta not in ("trailing", "free_end"):
            raise ParameterError(f"SegmentedBeam: kutta must be 'trailing' or 'free_end', "
                                 f"got {self.kutta!r}")
        self.n = n
        self.dl = self.length_m / n
        self.m = self.density * self.thickness_m * self.dl  # per unit span
        self.k_phi = self.bending_rigidity / self.dl
        self.c_phi = self.hinge_damping_time_s * self.k_phi
        j = np.arange(1, n + 1)
        self.c_vec = n - j + 0.5
        jj = np.maximum(j[:, None], j[None, :])
        self.C = n - jj + 0.5
        np.fill_diagonal(self.C, n - j + 0.25)
        lap = np.zeros((n, n))
        for i in range(1, n):  # hinge between segments i-1 and i (0-based)
            lap[i, i] += 1
            lap[i - 1, i - 1] += 1
            lap[i, i - 1] -= 1
            lap[i - 1, i] -= 1
        self.lap = lap
        g = self.geometry
        self.cu = self.cl = 0.5 * g.clearance_m
        ta = math.tan(math.radians(g.guide_angle_deg))
        self.tan_a = ta
        self.kc = g.contact_stiffness
        self.cc = 2.0 * g.contact_damping_ratio * math.sqrt(g.contact_stiffness * self.m)
        corners = [(0.0, self.cu, -1.0), (0.0, -self.cl, 1.0)]
        if g.guide_length_m > 0:
            lg = g.guide_length_m
            corners += [(lg, self.cu + lg * ta, -1.0), (lg, -self.cl - lg * ta, 1.0)]
        self.corners = np.array(corners)

    # ----------------------------------------------------------------- kinematics
    def split(self, x: np.ndarray):
        n = self.n
        return x[0], x[1:n + 2], x[n + 2:]

    def nodes(self, x0: float, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        phi = q[1:]
        xs = np.concatenate(([x0], x0 + self.dl * np.cumsum(np.cos(phi))))
        ys = np.concatenate(([q[0]], q[0] + self.dl * np.cumsum(np.sin(phi))))
        return xs, ys

    def node_velocities(self, v_drive: float, q: np.ndarray, qd: np.ndarray):
        phi, w = q[1:], qd[1:]
        vx = np.concatenate(([v_drive], v_drive - self.dl * np.cumsum(np.sin(phi) * w)))
        vy = np.concatenate(([qd[0]], qd[0] + self.dl * np.cumsum(np.cos(phi) * w)))
        return vx, vy

    def points(self, s_arc: np.ndarray, xs, ys, vx, vy, q, qd):
        """Positions, velocities (complex), segment index and local s of arc lengths."""
        seg = np.minimum((s_arc / self.dl).astype(int), self.n - 1)
        s = s_arc - seg * self.dl
        phi, w = q[1:][seg], qd[1:][seg]
        c, sn = np.cos(phi), np.sin(phi)
        z = (xs[seg] + s * c) + 1j * (ys[seg] + s * sn)
        v = (vx[seg] - s * sn * w) + 1j * (vy[seg] + s * c * w)
        return z, v, seg, s

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        n, m, dl = self.n, self.m, self.dl
        phi = q[1:]
        M = np.empty((n + 1, n + 1))
        M[0, 0] = n * m
        M[0, 1:] = M[1:, 0] = m * dl * self.c_vec * np.cos(phi)
        M[1:, 1:] = m * dl * dl * self.C * np.cos(phi[:, None] - phi[None, :])
        M[1:, 1:] += np.eye(n) * (m * dl * dl / 12.0)
        return M

    def velocity_terms(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        m, dl = self.m, self.dl
        phi, w2 = q[1:], qd[1:] ** 2
        h = np.empty(self.n + 1)
        h[0] = -m * dl * np.sum(self.c_vec * np.sin(phi) * w2)
        h[1:] = m * dl * dl * ((self.C * np.sin(phi[:, None] - phi[None, :])) @ w2)
        return h

    def generalized(self, seg: np.ndarray, s: np.ndarray, fx: np.ndarray, fy: np.ndarray,
                    q: np.ndarray) -> np.ndarray:
        """Generalised force of point forces (fx, fy) at local ``s`` on segments ``seg``."""
        n = self.n
        phi = q[1:]
        Q = np.zeros(n + 1)
        if seg.size == 0:
            return Q
        Q[0] = fy.sum()
        ax = self._arm(seg, s, fx)
        ay = self._arm(seg, s, fy)
        Q[1:] = ay * np.cos(phi) - ax * np.sin(phi)
        return Q

    def _arm(self, seg, s, f):
        n = self.n
        fs = np.bincount(seg, f, n)
        ss = np.bincount(seg, s * f, n)
        after = np.cumsum(fs[::-1])[::-1] - fs  # sum over segments i > j
        return self.dl * after + ss

    # ----------------------------------------------------------------- forces
    def wetted_start(self, xs: np.ndarray) -> float | None:
        """Arc length where the beam leaves the wall (X = 0) for good; None if not out."""
        if xs[-1] <= 0.0:
            return None
        inside = np.nonzero(xs <= 0.0)[0]
        if inside.size == 0:
            return 0.0
        k = inside[-1]
        frac = -xs[k] / (xs[k + 1] - xs[k])
        return (k + frac) * self.dl

    def fluid(self, xs, ys, vx, vy, q, qd):
        """Generalised fluid force and the total force (complex) per unit span."""
        zero = np.zeros(self.n + 1)
        rho = self.fluid_density
        s0 = self.wetted_start(xs)
        if rho == 0.0 or s0 is None or self.length_m - s0 < 1e-6 * self.length_m:
            return zero, 0j
        nv = self.vortices_per_segment * self.n
        s_v = np.linspace(s0, self.length_m, nv + 1)
        s_v[-1] = self.length_m * (1 - 1e-12)
        zv, vv, seg_v, sl_v = self.points(s_v, xs, ys, vx, vy, q, qd)
        zc, vc, _, _ = self.points(0.5 * (s_v[1:] + s_v[:-1]), xs, ys, vx, vy, q, qd)
        u_inf = complex(self.free_stream)
        u_rel = vx[-1] - self.free_stream  # > 0: the free end leads (drawn out)
        kutta = 0 if (self.kutta == "trailing" and u_rel > 0.0) else -1
        if self.wake and self.kutta == "trailing" and kutta == 0:
            # wake frozen in the still fluid at the (fixed) wall-end trailing edge: it merges
            # with the trailing vortex (see "Wake" in the package docstring)
            gam, g_w = wake_circulation(zv, zc, vc, u_inf, kutta, np.zeros(0, complex),
                                        np.zeros(0))
            w_ext = np.zeros(zv.size, complex)
            w_ext[1:] = induced_conj_velocity(zv[1:], zv[:1], np.array([g_w]))
            f = vortex_forces(zv, gam, vv, rho, u_inf, self.mutual_induction, w_ext)
        else:
            gam = bound_vortex_circulation(zv, zc, vc, u_inf, kutta)
            f = vortex_forces(zv, gam, vv, rho, u_inf, self.mutual_induction)
        # drag on the free end along X
        drag = -0.5 * self.drag_coefficient * self.thickness_m * rho * abs(u_rel) * u_rel
        f[-1] += drag
        Q = self.generalized(seg_v, sl_v, f.real, f.imag, q)
        return Q, complex(f.sum())

    def added_mass_matrix(self, xs, ys, q, qd) -> np.ndarray:
        r"""Fluid inertia of the wetted part as an added generalised mass matrix.

        The non-circulatory bound-vortex solution of the same discretisation (collocation
        rows of :func:`bound_vortex_circulation`, :math:`\sum\Gamma_j = 0` instead of the
        Kutta row) gives Γ = G J_n q̇ (J_n: normal velocity of the collocation points per
        q̇).  The potential jump across panel k is :math:`[\phi]_k = \sum_{j\le k}\Gamma_j`
        and the unsteady Bernoulli term :math:`\rho\,\partial[\phi]/\partial t` loads panel
        k (length :math:`\Delta s_k`) along its normal, so that
        :math:`M_a = \rho J_n^T \mathrm{diag}(\Delta s) C G J_n` (C: cumulative sum),
        symmetrised.  Rates of the geometry and of the wetted length are neglected.  Flat
        plate in heave: ρπL²/4 (tested).  Zero without fluid or wetted part."""
        n = self.n
        rho = self.fluid_density
        s0 = self.wetted_start(xs)
        Ma = np.zeros((n + 1, n + 1))
        if rho == 0.0 or s0 is None or self.length_m - s0 < 1e-6 * self.length_m:
            return Ma
        nv = self.vortices_per_segment * n
        s_v = np.linspace(s0, self.length_m, nv + 1)
        s_v[-1] = self.length_m * (1 - 1e-12)
        zero = np.zeros(n + 1)
        zv, _, _, _ = self.points(s_v, xs, ys, zero, zero, q, qd)
        zc, _, seg, sl = self.points(0.5 * (s_v[1:] + s_v[:-1]), xs, ys, zero, zero, q, qd)
        ds = np.abs(np.diff(zv))
        nrm = chord_normals(zv)
        phi = q[1:]
        # normal-velocity Jacobian of the collocation points
        j = np.arange(n)
        w = np.where(j[None, :] < seg[:, None], self.dl,
                     np.where(j[None, :] == seg[:, None], sl[:, None], 0.0))
        J = np.empty((nv, n + 1))
        J[:, 0] = nrm.imag
        J[:, 1:] = w * (nrm.imag[:, None] * np.cos(phi)[None, :]
                        - nrm.real[:, None] * np.sin(phi)[None, :])
        a = np.empty((nv + 1, nv + 1))
        a[:-1] = normal_influence(zc, zv, nrm)
        a[-1] = 1.0
        B = np.vstack((J, np.zeros((1, n + 1))))
        G = np.linalg.solve(a, B)                       # Γ per unit q̇
        jump = np.cumsum(G, axis=0)[:-1]                # [φ] at the panels
        Ma = -rho * J.T @ (ds[:, None] * jump)
        return 0.5 * (Ma + Ma.T)

    def contacts(self, xs, ys, vx, vy, q, qd, detail: list | None = None):
        """Generalised contact force and the total contact force (complex).

        With a list ``detail``, one ``(surface, X, Y, F_n, s)`` tuple per active contact is
        appended (s: arc length on the beam from the driven end; surface: ``gap_upper/lower``,
        ``guide_upper/lower`` for nodes on the walls, ``inlet_upper/lower`` and
        ``guide_end_upper/lower`` for the corners)."""
        g = self.geometry
        n = self.n
        segs, ss, fxs, fys = [], [], [], []
        # nodes against channel walls (X <= 0) and guide surfaces (0 < X <= L_g)
        in_gap = (xs <= 0.0) & (xs >= -g.gap_length_m)
        in_guide = (xs > 0.0) & (xs <= g.guide_length_m)
        ca = 1.0 / math.sqrt(1.0 + self.tan_a ** 2)
        sa = self.tan_a * ca
        for sign, c in ((1.0, self.cu), (-1.0, self.cl)):
            # upper (sign=+1): surface Y = c + X tan a in the guide, Y = c in the gap
            surf = np.where(in_guide, c + np.maximum(xs, 0.0) * self.tan_a, c)
            nx = np.where(in_guide, sa, 0.0)        # inward normal (into the free region)
            ny = -sign * np.where(in_guide, ca, 1.0)
            pen = (sign * ys - surf) * np.where(in_guide, ca, 1.0)
            pdot = -(vx * nx + vy * ny)
            act = (in_gap | in_guide) & (pen > 0.0)
            if not act.any():
                continue
            fn = np.maximum(0.0, self.kc * pen + self.cc * pdot)[act]
            tx, ty = -ny[act], nx[act]
            vt = vx[act] * tx + vy[act] * ty
            ft = -g.friction_coefficient * fn * np.tanh(vt / g.friction_velocity_m_s)
            fxs.append(fn * nx[act] + ft * tx)
            fys.append(fn * ny[act] + ft * ty)
            idx = np.nonzero(act)[0]
            if detail is not None:
                side = "upper" if sign > 0 else "lower"
                for k, f in zip(idx, fn):
                    kind = "guide" if in_guide[k] else "gap"
                    detail.append((f"{kind}_{side}", float(xs[k]), float(ys[k]), float(f),
                                   k * self.dl))
            # node k is the end of segment k-1 (s = dl), node 0 the start of segment 0
            segs.append(np.where(idx == 0, 0, idx - 1))
            ss.append(np.where(idx == 0, 0.0, self.dl))
        # corners against segments
        phi, w = q[1:], qd[1:]
        ex, ey = np.cos(phi), np.sin(phi)
        for ic, (cx, cy, side) in enumerate(self.corners):
            rx, ry = cx - xs[:-1], cy - ys[:-1]
            t = rx * ex + ry * ey
            d = -rx * ey + ry * ex           # corner distance along the segment normal
            pen = side * d                    # upper corner (side=-1) penetrates if d < 0
            act = (t >= 0.0) & (t < self.dl) & (pen > 0.0) & (pen < g.max_penetration_m)
            if not act.any():
                continue
            i = np.nonzero(act)[0]
            nxs, nys = side * -ey[i], side * ex[i]   # force direction on the beam
            # velocity of the beam material point under the corner
            pvx = vx[i] - t[i] * ey[i] * w[i]
            pvy = vy[i] + t[i] * ex[i] * w[i]
            pdot = -(pvx * nxs + pvy * nys)
            fn = np.maximum(0.0, self.kc * pen[i] + self.cc * pdot)
            vt = pvx * ex[i] + pvy * ey[i]
            ft = -g.friction_coefficient * fn * np.tanh(vt / g.friction_velocity_m_s)
            fxs.append(fn * nxs + ft * ex[i])
            fys.append(fn * nys + ft * ey[i])
            if detail is not None:
                name = ("inlet" if ic < 2 else "guide_end") + ("_upper" if side < 0 else
                                                               "_lower")
                detail.extend((name, float(cx), float(cy), float(f), float(si))
                              for f, si in zip(fn, i * self.dl + t[i]))
            segs.append(i)
            ss.append(t[i])
        if not segs:
            return np.zeros(n + 1), 0j
        seg, s = np.concatenate(segs), np.concatenate(ss)
        fx, fy = np.concatenate(fxs), np.concatenate(fys)
        return self.generalized(seg, s, fx, fy, q), complex(fx.sum(), fy.sum())

    def evaluate(self, x: np.ndarray, v_drive: float, a_drive: float = 0.0) -> dict:
        """Every force of the current state (used by :meth:`rhs` and the outputs)."""
        x0, q, qd = self.split(x)
        xs, ys = self.nodes(x0, q)
        vx, vy = self.node_velocities(v_drive, q, qd)
        phi, w = q[1:], qd[1:]
        Q = np.zeros(self.n + 1)
        Q[1:] -= self.lap @ (self.k_phi * phi + self.c_phi * w)
        if self.gravity or a_drive:
            # gravity, and the drive's acceleration: X0(t) is prescribed, so its Ẍ0 acts on
            # every segment as the body force -m Ẍ0 along X at its centre (d'Alembert)
            s = np.full(self.n, 0.5 * self.dl)
            Q += self.generalized(np.arange(self.n), s, np.full(self.n, -self.m * a_drive),
                                  np.full(self.n, -self.m * self.gravity), q)
        Qc, fc = self.contacts(xs, ys, vx, vy, q, qd)
        Qf, ff = self.fluid(xs, ys, vx, vy, q, qd)
        ev = dict(xs=xs, ys=ys, Q=Q + Qc + Qf, contact=fc, fluid=ff)
        if self.added_mass:
            Ma = self.added_mass_matrix(xs, ys, q, qd)
            ev["added_mass"] = Ma
            # momentum form -d(M_a q̇)/dt: the added mass grows with the wetted length as
            # the strip is drawn out (von Kármán's water-entry term), -(∂M_a/∂X0) V q̇
            if v_drive != 0.0 and Ma.any():
                h = 1e-5 * self.length_m
                Mp = self.added_mass_matrix(*self.nodes(x0 + h, q), q, qd)
                ev["Q"] = ev["Q"] - (Mp - Ma) / h * v_drive @ qd
        return ev

    def contact_list(self, x: np.ndarray, v_drive: float) -> list:
        """Active contacts of state ``x``: ``(surface, X, Y, F_n, s)`` tuples (see
        :meth:`contacts`)."""
        x0, q, qd = self.split(x)
        xs, ys = self.nodes(x0, q)
        vx, vy = self.node_velocities(v_drive, q, qd)
        out: list = []
        self.contacts(xs, ys, vx, vy, q, qd, detail=out)
        return out

    def rhs(self, x: np.ndarray, v_drive: float, a_drive: float = 0.0) -> np.ndarray:
        """:math:`\\dot x` for the drive speed ``v_drive`` and acceleration ``a_drive``
        (the added mass, when on, ignores ``a_drive``)."""
        x0, q, qd = self.split(x)
        ev = self.evaluate(x, v_drive, a_drive)
        M = self.mass_matrix(q)
        if self.added_mass:
            M = M + ev["added_mass"]
        qdd = np.linalg.solve(M, ev["Q"] - self.velocity_terms(q, qd))
        return np.concatenate(([v_drive], qd, qdd))

    # ----------------------------------------------------------------- helpers
    def initial_state(self, wetted_length_m: float, tip_impulse: float = 0.0) -> np.ndarray:
        """Straight beam on the X axis with ``wetted_length_m`` outside the wall, at rest
        but for a Y impulse ``tip_impulse`` [N·s per m span] at the free end."""
        n = self.n
        x = np.zeros(2 * n + 3)
        x[0] = wetted_length_m - self.length_m
        if tip_impulse:
            q = x[1:n + 2]
            _, _, seg, s = self.points(np.array([self.length_m * (1 - 1e-12)]),
                                       *self.nodes(x[0], q), np.zeros(n + 1),
                                       np.zeros(n + 1), q, np.zeros(n + 1))
            J = self.generalized(seg, s, np.zeros(1), np.array([tip_impulse]), q)
            x[n + 2:] = np.linalg.solve(self.mass_matrix(q), J)
        return x

    def tip_deflection(self, x: np.ndarray) -> float:
        """Elastic tip deflection of the wetted part: the tip's distance from the tangent of
        the beam where it leaves the wall (removes the rigid rocking in the gap clearance)."""
        x0, q, qd = self.split(x)
        xs, ys = self.nodes(x0, q)
        s0 = self.wetted_start(xs)
        if s0 is None:
            return 0.0
        z, _, seg, _ = self.points(np.array([s0]), xs, ys, xs, ys, q, qd)
        phi = q[1 + seg[0]]
        return float(-math.sin(phi) * (xs[-1] - z[0].real) + math.cos(phi) * (ys[-1] - z[0].imag))

    def energy(self, x: np.ndarray) -> float:
        """Kinetic (drive speed 0) + hinge + contact-free potential energy [J/m]."""
        _, q, qd = self.split(x)
        phi = q[1:]
        return 0.5 * qd @ self.mass_matrix(q) @ qd + 0.5 * self.k_phi * phi @ self.lap @ phi

    def first_mode_rad_s(self, length_m: float | None = None) -> float:
        """Euler–Bernoulli first cantilever frequency 3.516 sqrt(EI/(μ L⁴))."""
        L = self.length_m if length_m is None else length_m
        mu = self.density * self.thickness_m
        return 1.875104 ** 2 * math.sqrt(self.bending_rigidity / (mu * L ** 4))



def beam_for(material: str, **kw: Any) -> SegmentedBeam:
    """A :class:`SegmentedBeam` of a Table 1 material ('frp', 'aluminium', 'steel')."""
    try:
        mat = MATERIALS[material]
    except KeyError:
        raise ParameterError(f"unknown material {material!r}; valid: "
                             f"{', '.join(MATERIALS)}") from None
    return SegmentedBeam(density=mat["density"], bending_rigidity=mat["bending_rigidity"], **kw)

