"""Force elements: spring-dampers, ropes and applied loads at markers.

A point-to-point element between markers i and j with ``d = P_j - P_i``,
length ``l = |d|``, direction ``u = d / l`` and rate ``l' = u . (P_j' - P_i')``
pulls the points together with tension ``f``:

* spring-damper: ``f = k (l - l0) + c l'`` or any ``f = force(l, l')``;
* rope: the same but only while ``f > 0`` and ``l > l0`` (slack: no force).

Contact of a sphere (radius ``R`` at a marker) with a plane (point ``p0``,
unit normal ``n``): penetration ``d = R - n . (P - p0)``, rate ``d' = -n . V_c``
at the contact point ``C = P - R n``; while ``d > 0``

* Lankarani-Nikravesh: ``F_n = K d^e (1 + 3 (1 - c_r^2) / 4 * d' / v_i)`` with
  ``v_i`` the approach speed at the start of this contact (a zero-crossing
  event of the block records it; without it, ``max(|d'|, 1 mm/s)``),
* Hunt-Crossley: ``F_n = K d^e (1 + 3/2 alpha d')``,

``F_n >= 0`` (no adhesion), Hertz exponent ``e = 1.5`` by default, and
regularized Coulomb friction ``F_t = -mu F_n V_t / sqrt(|V_t|^2 + v_s^2)``.

Applied loads come from the mechanism block's inputs: a force (global
components) at a marker, or a torque (planar: scalar; spatial: global vector).

Every element also evaluates at complex ``q``, ``v`` and keeps the imaginary parts
(complex-step differentiation, :mod:`.geometry`): lengths as ``sqrt(d . d)``, switches
(slack rope, contact, ``F_n >= 0``) decided on real parts, the approach speed's ``|d'|``
as ``±d'``.  A user function (``force``, ``fn``) receives the complex values too;
:func:`.analysis.linearize` checks whether it is analytic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cosim.errors import BuildError

from .bodies import Kin, Marker, planar_offset
from .geometry import cross, scalar


class PointToPoint:
    """A spring-damper or rope between two markers (see module docstring)."""

    def __init__(self, name: str, mi: Marker, mj: Marker, stiffness: float = 0.0,
                 damping: float = 0.0, length0: float | None = None,
                 force: Callable | None = None, rope: bool = False) -> None:
        if stiffness < 0 or damping < 0:
            raise BuildError(f"force element '{name}': stiffness and damping must be >= 0, "
                             f"got {stiffness!r}, {damping!r}")
        self.name, self.mi, self.mj = name, mi, mj
        self.k, self.c, self.l0, self.force, self.rope = stiffness, damping, length0, force, rope

    def tension(self, length: float, rate: float) -> float:
        if self.force is not None:
            f = scalar(self.force(length, rate))
        else:
            f = self.k * (length - self.l0) + self.c * rate
        if self.rope and (length.real <= self.l0 or f.real < 0.0):
            return 0.0
        return f

    def apply(self, kins: dict, Q: np.ndarray, memory: dict | None = None) -> float:
        ki, kj = kins[self.mi.body], kins[self.mj.body]
        Pi, Ji, Vi, _ = ki.point(self.mi.s)
        Pj, Jj, Vj, _ = kj.point(self.mj.s)
        d = Pj - Pi
        length = scalar(np.sqrt(d @ d))
        if length == 0.0:
            raise BuildError(f"force element '{self.name}': its markers coincide (length 0), "
                             "the direction of the force is undefined")
        u = d / length
        f = self.tension(length, scalar(u @ (Vj - Vi)))
        if Ji.size:
            Q[ki.cols] += Ji.T @ (f * u)
        if Jj.size:
            Q[kj.cols] -= Jj.T @ (f * u)
        return f


class MarkerForce:
    """A force ``F = fn(P, P', t)`` (global components) at a marker: springs to moving
    anchors, force fields, tyre or fluid forces written in Python."""

    def __init__(self, name: str, marker: Marker, fn: Callable) -> None:
        self.name, self.m, self.fn = name, marker, fn
        self.force = fn  # marks it as not writable as data

    def apply(self, kins: dict, Q: np.ndarray, memory: dict | None = None) -> np.ndarray:
        k = kins[self.m.body]
        P, J, V, _ = k.point(self.m.s)
        F = np.asarray(self.fn(P, V, self._t), np.result_type(P, V, float)).reshape(-1)
        if J.size:
            Q[k.cols] += J.T @ F
        return F

    _t = 0.0


class SpherePlaneContact:
    """Compliant contact of a sphere on a marker with a plane fixed to the ground (module doc)."""

    force = None  # writable as data

    def __init__(self, name: str, marker: Marker, radius: float, point: Any, normal: Any,
                 stiffness: float, restitution: float = 1.0, exponent: float = 1.5,
                 model: str = "lankarani_nikravesh", hc_alpha: float = 0.0,
                 friction: float = 0.0, slip_velocity: float = 1e-3) -> None:
        if model not in ("lankarani_nikravesh", "hunt_crossley"):
            raise BuildError(f"contact '{name}': model must be 'lankarani_nikravesh' or "
                             f"'hunt_crossley', got {model!r}")
        if not (radius >= 0 and stiffness > 0 and 0 < restitution <= 1 and friction >= 0):
            raise BuildError(f"contact '{name}': need radius >= 0, stiffness > 0, "
                             "0 < restitution <= 1, friction >= 0")
        n = np.asarray(normal, float)
        self.name, self.m, self.R = name, marker, float(radius)
        self.p0, self.n = np.asarray(point, float), n / np.linalg.norm(n)
        self.K, self.e, self.cr, self.model = stiffness, exponent, restitution, model
        self.alpha, self.mu, self.vs = hc_alpha, friction, slip_velocity
        self.needs_impact_speed = model == "lankarani_nikravesh" and restitution < 1

    def penetration(self, kins: dict) -> tuple[float, float]:
        """``(d, d')`` of the sphere's nearest point (``d > 0``: in contact)."""
        k = kins[self.m.body]
        P, _, V, _ = k.point(self.m.s, with_jac=False)
        d = self.R - float(self.n @ (P - self.p0))
        return d, -float(self.n @ V)  # the sphere's rotation does not move it normally

    def apply(self, kins: dict, Q: np.ndarray, memory: dict | None = None) -> float:
        k = kins[self.m.body]
        P, _, _, _ = k.point(self.m.s, with_jac=False)
        d = self.R - scalar(self.n @ (P - self.p0))
        if d.real <= 0.0:
            return 0.0
        C = P - self.R * self.n
        s_c = C - k.r if k.kind in ("particle", "ground") else k.A.T @ (C - k.r)
        _, J, Vc, _ = k.point(s_c)
        dd = -scalar(self.n @ Vc)
        base = self.K * d ** self.e
        if self.model == "hunt_crossley":
            fn = base * (1.0 + 1.5 * self.alpha * dd)
        else:
            vi = (memory or {}).get(self.name) or _speed(dd)
            fn = base * (1.0 + 0.75 * (1.0 - self.cr ** 2) * dd / vi)
        fn = max(fn, 0.0) if isinstance(fn, float) else (fn if fn.real > 0.0 else 0.0)
        F = fn * self.n
        if self.mu:
            vt = Vc - (self.n @ Vc) * self.n
            F = F - self.mu * fn * vt / np.sqrt(vt @ vt + self.vs ** 2)
        if J.size:
            Q[k.cols] += J.T @ F
        return fn


class Bushing:
    r"""Linear bushing between markers i and j (planar: 3 DOF, spatial: 6 DOF).

    Relative translation ``d = R_i' A_i' (P_j - P_i)`` and small rotation ``th``
    (planar: the angle between the marker x axes; spatial: the vector part of
    ``R_rel = (A_i R_i)' A_j R_j``, ``th = vee(R_rel - R_rel') / 2``), both in
    marker i's frame, and their rates give

    .. math:: f = -K_t d - C_t d', \qquad \tau = -K_r th - C_r th'

    applied to body j at its marker (and the opposite to body i at its marker);
    rates by the transport theorem in marker i's frame.  Stiffness and damping
    are per axis (scalars or vectors).
    """

    force = None  # writable as data

    def __init__(self, name: str, mi: Marker, mj: Marker, translational: Any,
                 rotational: Any, damping_translational: Any = 0.0,
                 damping_rotational: Any = 0.0) -> None:
        dim = mi.body.dim
        nr = 1 if dim == 2 else 3
        self.name, self.mi, self.mj = name, mi, mj
        self.kt = np.broadcast_to(np.asarray(translational, float), (dim,)).copy()
        self.kr = np.broadcast_to(np.asarray(rotational, float), (nr,)).copy()
        self.ct = np.broadcast_to(np.asarray(damping_translational, float), (dim,)).copy()
        self.cr = np.broadcast_to(np.asarray(damping_rotational, float), (nr,)).copy()
        if min(self.kt.min(), self.kr.min(), self.ct.min(), self.cr.min()) < 0:
            raise BuildError(f"bushing '{name}': stiffness and damping must be >= 0")

    def apply(self, kins: dict, Q: np.ndarray, memory: dict | None = None) -> np.ndarray:
        ki, kj = kins[self.mi.body], kins[self.mj.body]
        Pi, Ji, Vi, _ = ki.point(self.mi.s)
        Pj, Jj, Vj, _ = kj.point(self.mj.s)
        Ei = ki.A @ self.mi.R  # marker i's frame, global
        d_g, dd_g = Pj - Pi, Vj - Vi
        if self.mi.body.dim == 2:
            wi = ki.w if ki.kind == "planar" else 0.0
            wj = kj.w if kj.kind == "planar" else 0.0
            # rate in marker i's frame: Ei' (d' - w_i x d)
            rel = dd_g - wi * np.array([-d_g[1], d_g[0]])
            d, dd = Ei.T @ d_g, Ei.T @ rel
            th = (kj.th + np.arctan2(self.mj.R[1, 0], self.mj.R[0, 0])) - (
                ki.th + np.arctan2(self.mi.R[1, 0], self.mi.R[0, 0]))
            thd = wj - wi
            f = -(self.kt * d + self.ct * dd)
            tau = scalar(-(self.kr[0] * th + self.cr[0] * thd))
            F = Ei @ f
            if Jj.size:
                Q[kj.cols] += Jj.T @ F
            if Ji.size:
                Q[ki.cols] -= Ji.T @ F
            if kj.kind == "planar":
                Q[kj.body.iv + 2] += tau
            if ki.kind == "planar":
                Q[ki.body.iv + 2] -= tau
            return F
        wi_g = ki.A @ ki.w if ki.kind == "spatial" else np.zeros(3)
        wj_g = kj.A @ kj.w if kj.kind == "spatial" else np.zeros(3)
        Ej = kj.A @ self.mj.R
        Rrel = Ei.T @ Ej
        th = 0.5 * np.array([Rrel[2, 1] - Rrel[1, 2], Rrel[0, 2] - Rrel[2, 0],
                             Rrel[1, 0] - Rrel[0, 1]])
        thd = Ei.T @ (wj_g - wi_g)
        d = Ei.T @ d_g
        dd = Ei.T @ (dd_g - cross(wi_g, d_g))
        F = Ei @ -(self.kt * d + self.ct * dd)
        T = Ei @ -(self.kr * th + self.cr * thd)
        if Jj.size:
            Q[kj.cols] += Jj.T @ F
            if kj.kind == "spatial":
                Q[kj.body.iv + 3:kj.body.iv + 6] += kj.A.T @ T
        if Ji.size:
            Q[ki.cols] -= Ji.T @ F
            if ki.kind == "spatial":
                Q[ki.body.iv + 3:ki.body.iv + 6] -= ki.A.T @ T
        return F


def _speed(dd) -> Any:
    """The approach speed without a recorded impact: ``max(|d'|, 1 mm/s)``, with
    ``|d'| = ±d'`` by the sign of the real part at complex ``d'`` (analytic there)."""
    if isinstance(dd, complex):
        return (dd if dd.real >= 0.0 else -dd) if abs(dd.real) > 1e-3 else 1e-3
    return max(abs(dd), 1e-3)


def apply_force(k: Kin, m: Marker, F: Any, Q: np.ndarray) -> None:
    """A force ``F`` (global components) at marker ``m``: ``Q += (dP/dv)^T F``; for a
    planar body ``(F_x, F_y, (E A s') . F)`` in floats (at a complex angle, the
    general ``(dP/dv)^T F``)."""
    if k.kind == "planar" and not isinstance(k.th, complex):
        fx, fy = np.asarray(F, float).reshape(2).tolist()
        a0, a1 = planar_offset(*m.s.tolist(), k.th)
        i = k.body.iv
        Q[i] += fx
        Q[i + 1] += fy
        Q[i + 2] += a0 * fy - a1 * fx
        return
    _, J, _, _ = k.point(m.s)
    if J.size:
        Q[k.cols] += J.T @ np.asarray(F, float).reshape(-1)


def apply_torque(k: Kin, n: Any, Q: np.ndarray) -> None:
    """A torque (planar scalar, spatial global vector) on the body of ``k``."""
    if k.kind == "planar":
        Q[k.body.iv + 2] += float(n)
    elif k.kind == "spatial":
        Q[k.body.iv + 3:k.body.iv + 6] += k.A.T @ np.asarray(n, float).reshape(3)
    elif k.kind == "particle":
        raise BuildError(f"a torque cannot act on particle '{k.body.name}' (no orientation)")
