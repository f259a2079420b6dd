"""Force elements: spring-dampers, ropes and applied loads at markers.

A point-to-point element between markers i and j with ``d = P_j - P_i``,
length ``l = |d|``, direction ``u = d / l`` and rate ``l' = u . (P_j' - P_i')``
pulls the points together with tension ``f``:

* spring-damper: ``f = k (l - l0) + c l'`` or any ``f = force(l, l')``;
* rope: the same but only while ``f > 0`` and ``l > l0`` (slack: no force).

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

    def apply(self, kins: dict, Q: np.ndarray) -> float:
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

    def apply(self, kins: dict, Q: np.ndarray) -> np.ndarray:
        k = kins[self.m.body]
        P, J, V, _ = k.point(self.m.s)
        F = np.asarray(self.fn(P, V, self._t), float).reshape(-1)
        if J.size:
            Q[k.cols] += J.T @ F
        return F

    _t = 0.0


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
