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
``disk_plane``  n . (P_j - p0) - R sqrt(1 - (n . a_j)^2)    1
``disk_slip``   t_k . V_C = 0 (nonholonomic), k = 1, 2      2
==============  ==========================================  ====

``f(t)`` is a callable returning ``(f, f', f'')`` (driving constraints).  Every
primitive also evaluates at complex ``q``, ``v`` (its arrays take the dtype of the
kinematics; complex-step differentiation, :mod:`.geometry`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .bodies import Kin, Marker
from .geometry import cross, scalar


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
    J = np.zeros((rows, n_v), np.result_type(Ji, Jj))
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
        J = np.zeros((1, n_v), np.result_type(a, b))
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
        J = np.zeros((1, n_v), np.result_type(a, d))
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
        J = np.zeros((1, n_v), np.result_type(n, Jp))
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


def _disk(prim: Primitive, kins: dict) -> tuple:
    """Shared geometry of a thin disk (radius R, axis = marker j's z) on marker i's x-y plane.

    ``n`` is the plane normal (marker i's z axis; marker i is on the ground),
    ``a = A_j h'_j`` the disk axis, ``k = n . a``, ``sigma = |n x a| = sqrt(1 - k^2)``.
    The unit vector from the centre towards the contact point, in the disk
    plane and as far down (along ``-n``) as the disk reaches, is

        c = (n x a) x a / |n x a| = (k a - n) / sigma,      n . c = -sigma,

    so the contact point is ``C = P + R c`` (``P`` marker j's origin, the
    centre).  Undefined when the disk lies flat (``sigma = 0``).
    """
    kj = kins[prim.mj.body]
    n = prim.mi.R[:, 2]
    P, JP, Pd, Pa = kj.point(prim.mj.s)
    a, Ja, ad, aa = kj.vector(prim.mj.R[:, 2])
    k = n @ a
    if isinstance(k, complex):  # complex step: sqrt(1 - k^2), analytic
        sigma = np.sqrt(1.0 - k * k)
    else:
        k = float(k)
        sigma = float(np.sqrt(max(1.0 - k * k, 0.0)))
    return kj, n, P, JP, Pd, Pa, a, Ja, ad, aa, k, sigma


class DiskPlane(Primitive):
    """Rolling disk, holonomic part: the contact point lies on the plane.

    ``Phi = n . (C - p0) = n . (P - p0) - R sigma`` (``p0`` marker i's origin;
    see :func:`_disk` for ``n, a, k, sigma, c``):

    * ``Phi_v = n . dP/dv + R (k / sigma) n . da/dv``,
    * ``Phi' = n . P' + R k k' / sigma`` with ``k' = n . a'``,
    * ``gamma = -(n . P'' + R (k'^2 / sigma^3 + k (n . a'') / sigma))`` at ``v̇ = 0``
      (``d/dt (k / sigma) = k' / sigma^3``).
    """

    def __init__(self, joint, mi, mj, radius: float) -> None:
        super().__init__(joint, mi, mj)
        self.radius = float(radius)

    def eval(self, kins, t, n_v):
        kj, n, P, JP, Pd, Pa, a, Ja, ad, aa, k, sig = _disk(self, kins)
        R = self.radius
        Jc = n @ JP + (R * k / sig) * (n @ Ja)
        J = np.zeros((1, n_v), Jc.dtype)
        J[0, kj.cols] = Jc
        kd = scalar(n @ ad)
        return np.array([n @ (P - self.mi.s) - R * sig]), J, np.zeros(1), \
            np.array([-(n @ Pa + R * (kd * kd / sig ** 3 + k * scalar(n @ aa) / sig))])


class DiskNoSlip(Primitive):
    """Rolling disk, nonholonomic part: the disk's material point at ``C`` does not slide.

    ``V_C = r' + w x (C - r)`` (the velocity of the body point at the contact
    point) along the plane's tangents ``t_1, t_2`` (marker i's x and y axes):
    ``t_k . V_C = 0``.  The normal component ``n . V_C`` equals ``Phi'`` of
    :class:`DiskPlane` (the contact point slides along the rim in the
    direction ``a x c``, which is tangent to the plane), so it is not repeated.

    With ``rho' = A' (C - r) = s'_j + R A' c`` (body frame), ``Phi_v = t_k .
    [I, -A ~rho']``.  At ``v̇ = 0`` the global angular velocity ``w = A w'`` is
    constant, so ``V_C' = w x (C - r)' = A (w' x (w' x s'_j)) + R w x c'`` with

        c' = (k' a + k a') / sigma + c k k' / sigma^2,

    and ``gamma = -t_k . V_C'``.  No ``Phi(q)`` (velocity level).
    """

    holonomic = False
    rows = 2

    def __init__(self, joint, mi, mj, radius: float) -> None:
        super().__init__(joint, mi, mj)
        self.radius = float(radius)

    def eval(self, kins, t, n_v):
        kj, n, P, JP, Pd, Pa, a, Ja, ad, aa, k, sig = _disk(self, kins)
        R = self.radius
        c = (k * a - n) / sig
        rho = self.mj.s + R * (kj.A.T @ c)
        _, JC, _, _ = kj.point(rho)
        T = self.mi.R[:, :2].T  # plane tangents as rows
        Jc = T @ JC
        J = np.zeros((2, n_v), Jc.dtype)
        J[:, kj.cols] = Jc
        kd = scalar(n @ ad)
        cd = (kd * a + k * ad) / sig + c * (k * kd / (sig * sig))
        wg = kj.A @ kj.w
        return np.zeros(2), J, np.zeros(2), -(T @ (Pa + R * cross(wg, cd)))
