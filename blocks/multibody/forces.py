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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cosim.errors import BuildError

from .bodies import Kin, Marker


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
            f = float(self.force(length, rate))
        else:
            f = self.k * (length - self.l0) + self.c * rate
        if self.rope and (length <= self.l0 or f < 0.0):
            return 0.0
        return f

    def apply(self, kins: dict, Q: np.ndarray, memory: dict | None = None) -> float:
        ki, kj = kins[self.mi.body], kins[self.mj.body]
        Pi, Ji, Vi, _ = ki.point(self.mi.s)
        Pj, Jj, Vj, _ = kj.point(self.mj.s)
        d = Pj - Pi
        length = float(np.linalg.norm(d))
        if length == 0.0:
            raise BuildError(f"force element '{self.name}': its markers coincide (length 0), "
                             "the direction of the force is undefined")
        u = d / length
        f = self.tension(length, float(u @ (Vj - Vi)))
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
        F = np.asarray(self.fn(P, V, self._t), float).reshape(-1)
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
        d = self.R - float(self.n @ (P - self.p0))
        if d <= 0.0:
            return 0.0
        C = P - self.R * self.n
        s_c = C - k.r if k.kind in ("particle", "ground") else k.A.T @ (C - k.r)
        _, J, Vc, _ = k.point(s_c)
        dd = -float(self.n @ Vc)
        base = self.K * d ** self.e
        if self.model == "hunt_crossley":
            fn = base * (1.0 + 1.5 * self.alpha * dd)
        else:
            vi = (memory or {}).get(self.name) or max(abs(dd), 1e-3)
            fn = base * (1.0 + 0.75 * (1.0 - self.cr ** 2) * dd / vi)
        fn = max(fn, 0.0)
        F = fn * self.n
        if self.mu:
            vt = Vc - (self.n @ Vc) * self.n
            F = F - self.mu * fn * vt / np.sqrt(vt @ vt + self.vs ** 2)
        if J.size:
            Q[k.cols] += J.T @ F
        return fn


def apply_force(k: Kin, m: Marker, F: Any, Q: np.ndarray) -> None:
    """A force ``F`` (global components) at marker ``m``."""
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
