"""Constraint primitives: equations, Jacobians and acceleration right-hand sides.

Every primitive gives, at ``(q, v, t)``, its rows of

* ``Phi(q, t) = 0``,
* ``Phi_v`` (Jacobian with respect to the velocity variables ``v``),
* ``Phi_t`` (explicit time derivative, for driving constraints),
* ``gamma = -(Phi'' evaluated with v̇ = 0)`` so that ``Phi_v v̇ = gamma``.

Primitives (Haug; Korkealaakso's C^s, C^d1, C^d2, checked against finite
differences in the tests):

==============  ==========================================  ====
name            equation                                    rows
==============  ==========================================  ====
``points``      P_j - P_i = 0                               dim
``dot1``        a_i . a_j = c                               1
``dot2``        a_i . (P_j - P_i) = c                       1
``distance``    |P_j - P_i|^2 - L(t)^2 = 0                  1
``angle``       theta_j - theta_i - f(t) = 0 (planar)       1
``slide``       a_i . (P_j - P_i) - f(t) = 0                1
==============  ==========================================  ====

``f(t)`` is a callable returning ``(f, f', f'')`` (driving constraints).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .bodies import Kin, Marker
from .geometry import cross


def const(value: float) -> Callable:
    """A constant as a driving function ``(f, f', f'')`` (``fn.constant`` holds the value)."""
    v = float(value)

    def fn(t):
        return (v, 0.0, 0.0)
    fn.constant = v
    return fn


class Primitive:
    """Base: ``rows`` equations between markers on bodies ``i`` and ``j``."""

    rows = 1
    holonomic = True  # False: a velocity constraint J v + Phi_t = 0 without Phi(q)

    def __init__(self, joint: Any, mi: Marker, mj: Marker) -> None:
        self.joint, self.mi, self.mj = joint, mi, mj

    def eval(self, kins: dict, t: float, n_v: int) -> tuple:
        """``(Phi, Phi_v, Phi_t, gamma)`` rows at the current state."""
        raise NotImplementedError


def _scatter(n_v: int, rows: int, ki: Kin, Ji: np.ndarray, kj: Kin, Jj: np.ndarray) -> np.ndarray:
    J = np.zeros((rows, n_v))
    if Ji.size:
        J[:, ki.cols] -= Ji
    if Jj.size:
        J[:, kj.cols] += Jj
    return J


class Points(Primitive):
    """``P_j - P_i = 0`` (spherical / planar revolute)."""

    def __init__(self, joint, mi, mj, si=None, sj=None) -> None:
        super().__init__(joint, mi, mj)
        self.si = mi.s if si is None else si
        self.sj = mj.s if sj is None else sj
        self.rows = mi.body.dim

    def eval(self, kins, t, n_v):
        ki, kj = kins[self.mi.body], kins[self.mj.body]
        Pi, Ji, _, ai = ki.point(self.si)
        Pj, Jj, _, aj = kj.point(self.sj)
        return Pj - Pi, _scatter(n_v, self.rows, ki, Ji, kj, Jj), np.zeros(self.rows), \
            -(aj - ai)


class Dot1(Primitive):
    """``a_i . a_j = c`` for body-fixed directions (perpendicular when c = 0)."""

    def __init__(self, joint, mi, mj, ai, aj, value: float = 0.0) -> None:
        super().__init__(joint, mi, mj)
        self.ai, self.aj, self.c = np.asarray(ai, float), np.asarray(aj, float), float(value)

    def eval(self, kins, t, n_v):
        ki, kj = kins[self.mi.body], kins[self.mj.body]
        a, Ja, ad, aa = ki.vector(self.ai)
        b, Jb, bd, ba = kj.vector(self.aj)
        J = np.zeros((1, n_v))
        if Ja.size:
            J[0, ki.cols] += b @ Ja
        if Jb.size:
            J[0, kj.cols] += a @ Jb
        return np.array([a @ b - self.c]), J, np.zeros(1), \
            np.array([-(aa @ b + a @ ba + 2.0 * ad @ bd)])


class Dot2(Primitive):
    """``a_i . (P_j - P_i) = f(t)``: point on a plane or a line, translation driver."""

    def __init__(self, joint, mi, mj, ai, fn: Callable | None = None, si=None, sj=None) -> None:
        super().__init__(joint, mi, mj)
        self.ai = np.asarray(ai, float)
        self.fn = fn or const(0.0)
        self.si = mi.s if si is None else si
        self.sj = mj.s if sj is None else sj

    def eval(self, kins, t, n_v):
        ki, kj = kins[self.mi.body], kins[self.mj.body]
        a, Ja, ad, aa = ki.vector(self.ai)
        Pi, Jpi, Pdi, Pai = ki.point(self.si)
        Pj, Jpj, Pdj, Paj = kj.point(self.sj)
        d, dd, da = Pj - Pi, Pdj - Pdi, Paj - Pai
        f, fd, fdd = self.fn(t)
        J = np.zeros((1, n_v))
        if Jpi.size:
            J[0, ki.cols] -= a @ Jpi
        if Ja.size:
            J[0, ki.cols] += d @ Ja
        if Jpj.size:
            J[0, kj.cols] += a @ Jpj
        return np.array([a @ d - f]), J, np.array([-fd]), \
            np.array([-(aa @ d + a @ da + 2.0 * ad @ dd) + fdd])


class Distance(Primitive):
    """``|P_j - P_i|^2 - L(t)^2 = 0`` (massless link, rod; a driver when L varies)."""

    def __init__(self, joint, mi, mj, fn: Callable) -> None:
        super().__init__(joint, mi, mj)
        self.fn = fn

    def eval(self, kins, t, n_v):
        ki, kj = kins[self.mi.body], kins[self.mj.body]
        Pi, Jpi, Pdi, Pai = ki.point(self.mi.s)
        Pj, Jpj, Pdj, Paj = kj.point(self.mj.s)
        d, dd, da = Pj - Pi, Pdj - Pdi, Paj - Pai
        L, Ld, Ldd = self.fn(t)
        J = _scatter(n_v, 1, ki, (2.0 * d)[None, :] @ Jpi, kj, (2.0 * d)[None, :] @ Jpj)
        # d/dt (L^2) = 2 L L', d2/dt2 = 2 (L'^2 + L L'')
        return np.array([d @ d - L * L]), J, np.array([-2.0 * L * Ld]), \
            np.array([-2.0 * (dd @ dd + d @ da) + 2.0 * (Ld * Ld + L * Ldd)])


class Angle(Primitive):
    """Planar: ``theta_j - theta_i - f(t) = 0`` (marker x axes at the relative angle f)."""

    def __init__(self, joint, mi, mj, fn: Callable | None = None) -> None:
        super().__init__(joint, mi, mj)
        self.fn = fn or const(0.0)
        self.off = _angle(mj.R) - _angle(mi.R)

    def eval(self, kins, t, n_v):
        ki, kj = kins[self.mi.body], kins[self.mj.body]
        th_i, th_j = ki.th, kj.th
        f, fd, fdd = self.fn(t)
        J = np.zeros((1, n_v))
        if ki.kind == "planar":
            J[0, ki.body.iv + 2] -= 1.0
        if kj.kind == "planar":
            J[0, kj.body.iv + 2] += 1.0
        return np.array([th_j - th_i + self.off - f]), J, np.array([-fd]), np.array([fdd])


def _angle(R: np.ndarray) -> float:
    return float(np.arctan2(R[1, 0], R[0, 0]))


class NoSideSlip(Primitive):
    """Knife edge / rolling without side slip (nonholonomic): ``n . P_j' = 0``.

    ``P_j`` is marker j's origin, ``n = A_j n'`` its y axis (the blade is its x
    axis), velocities relative to the ground.  Velocity level only: the row
    has no ``Phi(q)``; ``gamma = -(n' . P' + n . P''|_{v̇=0})``.
    """

    holonomic = False

    def eval(self, kins, t, n_v):
        kj = kins[self.mj.body]
        n, Jn, nd, _ = kj.vector(self.mj.R[:, 1])
        _, Jp, Pd, Pa = kj.point(self.mj.s)
        J = np.zeros((1, n_v))
        if Jp.size:
            J[0, kj.cols] = n @ Jp
        return np.zeros(1), J, np.zeros(1), np.array([-(nd @ Pd + n @ Pa)])


class PathPoint(Primitive):
    """``P_j - (r_i + A_i c(t)) = 0``: marker j's origin follows a path ``c(t)`` fixed to body i.

    ``fn(t)`` returns ``(c, c', c'')`` in body-i coordinates (prescribed relative
    motion: moving joints, linkages with prescribed shape changes).
    ``Phi_t = -A_i c'``; the acceleration adds ``2 A_i (w x c') + A_i c''``.
    """

    def __init__(self, joint, mi, mj, fn: Callable) -> None:
        super().__init__(joint, mi, mj)
        self.fn = fn
        self.rows = mi.body.dim

    def eval(self, kins, t, n_v):
        ki, kj = kins[self.mi.body], kins[self.mj.body]
        c, cd, cdd = (np.asarray(x, float) for x in self.fn(t))
        Pi, Ji, _, ai = ki.point(c)
        Pj, Jj, _, aj = kj.point(self.mj.s)
        Acd = ki.A @ cd
        if ki.kind == "planar":
            cor = 2.0 * np.array([-Acd[1], Acd[0]]) * ki.w
        elif ki.kind == "spatial":
            cor = 2.0 * ki.A @ cross(ki.w, cd)
        else:
            cor = np.zeros(self.rows)
        extra = cor + ki.A @ cdd
        return Pj - Pi, _scatter(n_v, self.rows, ki, Ji, kj, Jj), -Acd, -(aj - ai - extra)
