"""Bodies and markers of a mechanism (absolute coordinates).

Coordinates ``q`` and velocity variables ``v`` per body:

=============  ===================  ==========================  ================
kind           q                    v                           mass matrix
=============  ===================  ==========================  ================
particle       r (2 or 3)           r' (2 or 3)                 m I
planar body    x, y, theta          x', y', w                   diag(m, m, J)
spatial body   r (3), p (4)         r' (3), w' (3, body frame)  diag(m I, J')
ground         -                    -                           -
=============  ===================  ==========================  ================

``q' = T(q) v``: the identity except ``p' = 1/2 L(p)^T w'`` (Euler parameters,
:mod:`.geometry`).  The centre of mass is the body frame's origin.

A :class:`Marker` is a frame fixed on a body: position ``s'`` and orientation
``R'`` (columns: the marker's x, y(, z) axes) in body coordinates.  For a point
``P = r + A s'`` the kinematic quantities the constraints and forces need are
(``v̇ = 0`` in the last column):

=============  =================  ======================  =====================
kind           dP/dv              P'                      P'' at v̇ = 0
=============  =================  ======================  =====================
particle       I                  r'                      0
planar         [I, A E s']        r' + A E s' w           -A s' w^2
spatial        [I, -A ~s']        r' + A (w' x s')        A (w' x (w' x s'))
=============  =================  ======================  =====================

with ``E`` the 90° rotation; a body-fixed direction ``a = A a'`` has the same
columns without the ``I`` and ``r'`` parts.  Complex ``q``, ``v`` keep their imaginary
parts (complex-step differentiation, :mod:`.geometry`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cosim.errors import BuildError

from .geometry import ROT90, cross, quat_matrix, scalar, tilde


@dataclass(eq=False)
class Body:
    """A body: ``kind`` is ``"particle"``, ``"planar"``, ``"spatial"`` or ``"ground"``."""

    name: str
    kind: str
    dim: int
    mass: float = 0.0
    inertia: Any = None  # planar: float J; spatial: 3x3 J' about the CM, body frame
    q0: np.ndarray = field(default_factory=lambda: np.zeros(0))
    v0: np.ndarray = field(default_factory=lambda: np.zeros(0))
    iq: int = 0  # offsets into q and v (set by the mechanism)
    iv: int = 0

    @property
    def nq(self) -> int:
        return {"ground": 0, "particle": self.dim, "planar": 3, "spatial": 7}[self.kind]

    @property
    def nv(self) -> int:
        return {"ground": 0, "particle": self.dim, "planar": 3, "spatial": 6}[self.kind]

    def check(self) -> None:
        """Clear errors for non-physical data."""
        if self.kind == "ground":
            return
        if not (np.isfinite(self.mass) and self.mass > 0):
            raise BuildError(f"body '{self.name}': mass must be positive and finite, got "
                             f"{self.mass!r} kg")
        if self.kind == "planar":
            if not (np.isfinite(self.inertia) and self.inertia > 0):
                raise BuildError(f"body '{self.name}': moment of inertia must be positive, got "
                                 f"{self.inertia!r} kg*m^2; for a point mass use "
                                 "add_particle()")
        elif self.kind == "spatial":
            J = np.asarray(self.inertia, float)
            if J.shape != (3, 3) or not np.allclose(J, J.T, rtol=1e-12, atol=1e-15):
                raise BuildError(f"body '{self.name}': inertia must be a symmetric 3x3 matrix "
                                 f"(or 3 principal moments), got shape {J.shape}")
            ev = np.linalg.eigvalsh(J)
            if ev[0] <= 0:
                raise BuildError(f"body '{self.name}': inertia tensor must be positive "
                                 f"definite, eigenvalues {ev}")
            tol = 1e-9 * ev[-1]
            if ev[0] + ev[1] < ev[2] - tol:
                raise BuildError(f"body '{self.name}': principal moments {ev} violate the "
                                 "triangle inequality J1 + J2 >= J3 (no real body has them)")

    def mass_diag(self) -> np.ndarray | None:
        """The mass matrix diagonal, or None for a spatial body (full 3x3 inertia block)."""
        if self.kind == "particle":
            return np.full(self.dim, self.mass)
        if self.kind == "planar":
            return np.array([self.mass, self.mass, self.inertia])
        return None


@dataclass(eq=False)
class Marker:
    """A frame on a body: position ``s`` and orientation ``R`` in body coordinates."""

    name: str
    body: Body
    s: np.ndarray
    R: np.ndarray

    @property
    def path(self) -> str:
        return f"{self.body.name}.{self.name}"


_EYE = {2: np.eye(2), 3: np.eye(3)}
_ZERO = {2: np.zeros(2), 3: np.zeros(3)}
_EMPTY = {2: np.zeros((2, 0)), 3: np.zeros((3, 0))}


class Kin:
    """Kinematic state of one body at an evaluation: ``r, A, rd, w`` and the v-columns.

    ``w`` is the planar angular velocity (float) or the body-frame ``w'`` (3,).
    """

    __slots__ = ("body", "r", "A", "rd", "w", "cols", "kind", "dim", "th")

    def __init__(self, body: Body, q: np.ndarray, v: np.ndarray) -> None:
        self.body = body
        self.kind = body.kind
        self.dim = body.dim
        self.cols = slice(body.iv, body.iv + body.nv)
        self.th = 0.0  # planar angle
        k = self.kind
        if k == "ground":
            self.r = np.zeros(body.dim)
            self.A = np.eye(body.dim)
            self.rd = np.zeros(body.dim)
            self.w = 0.0 if body.dim == 2 else np.zeros(3)
        elif k == "particle":
            self.r = q[body.iq:body.iq + body.dim]
            self.A = np.eye(body.dim)
            self.rd = v[body.iv:body.iv + body.dim]
            self.w = 0.0 if body.dim == 2 else np.zeros(3)
        elif k == "planar":
            th = q[body.iq + 2]
            if isinstance(th, complex):  # complex step (geometry): keep the imaginary parts
                c, s = np.cos(th), np.sin(th)
            else:
                th = float(th)
                c, s = math.cos(th), math.sin(th)
            self.th = th
            self.r = q[body.iq:body.iq + 2]
            self.A = np.array(((c, -s), (s, c)))
            self.rd = v[body.iv:body.iv + 2]
            self.w = scalar(v[body.iv + 2])
        else:
            self.r = q[body.iq:body.iq + 3]
            self.A = quat_matrix(q[body.iq + 3:body.iq + 7])
            self.rd = v[body.iv:body.iv + 3]
            self.w = v[body.iv + 3:body.iv + 6]

    def point(self, s: np.ndarray, with_jac: bool = True) -> tuple:
        """``(P, dP/dv (dim x nv_body) or None, P', P''|v̇=0)`` of body point ``s``."""
        k = self.kind
        if k == "particle":
            return self.r + s, (_EYE[self.dim] if with_jac else None), self.rd, _ZERO[self.dim]
        if k == "ground":
            return s, (_EMPTY[self.dim] if with_jac else None), _ZERO[self.dim], _ZERO[self.dim]
        As = self.A @ s
        if k == "planar":
            EAs = np.array([-As[1], As[0]])  # A E s = E A s in 2-D
            w = self.w
            J = None
            if with_jac:
                J = np.array([[1.0, 0.0, EAs[0]], [0.0, 1.0, EAs[1]]])
            return self.r + As, J, self.rd + EAs * w, -As * (w * w)
        w = self.w
        ws = cross(w, s)
        J = None
        if with_jac:
            Js = -self.A @ tilde(s)
            J = np.empty((3, 6), Js.dtype)
            J[:, :3] = _EYE[3]
            J[:, 3:] = Js
        return self.r + As, J, self.rd + self.A @ ws, self.A @ cross(w, ws)

    def vector(self, a: np.ndarray) -> tuple:
        """``(a, da/dv, a', a''|v̇=0)`` of body-fixed direction ``a'``."""
        k = self.kind
        Aa = self.A @ a
        if k in ("ground", "particle"):
            nv = 0 if k == "ground" else self.dim
            return Aa, np.zeros((self.dim, nv)), np.zeros(self.dim), np.zeros(self.dim)
        if k == "planar":
            EAa = ROT90 @ Aa
            w = self.w
            return Aa, np.column_stack([np.zeros((2, 2)), EAa]), EAa * w, -Aa * w * w
        w = self.w
        wa = cross(w, a)
        J = np.hstack([np.zeros((3, 3)), -self.A @ tilde(a)])
        return Aa, J, self.A @ wa, self.A @ cross(w, wa)


def planar_point(s0: float, s1: float, x: float, y: float, th: float, vx: float, vy: float,
                 w: float) -> tuple:
    """:meth:`Kin.point` of a planar body in plain floats (the hot path of marker outputs
    and loads): ``(Px, Py, P'x, P'y)`` of body point ``s' = (s0, s1)`` at
    ``q = (x, y, th)``, ``v = (vx, vy, w)``:

    .. math:: P = r + A s', \\quad P' = r' + E A s'\\, w, \\quad E (a, b) = (-b, a)
    """
    a0, a1 = planar_offset(s0, s1, th)
    return x + a0, y + a1, vx - a1 * w, vy + a0 * w


def planar_offset(s0: float, s1: float, th: float) -> tuple[float, float]:
    """``A s'`` of body point ``s' = (s0, s1)`` of a planar body at angle ``th``, in floats."""
    c, s = math.cos(th), math.sin(th)
    return c * s0 - s * s1, s * s0 + c * s1
