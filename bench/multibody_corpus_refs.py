r"""The independent references of the multibody corpus (:mod:`bench.multibody_corpus`):
each mechanism's equations of motion in minimal coordinates, written here without the
library's classes (nothing in this module imports ``blocks``; a test solves them in a
process where that import fails), integrated by ``scipy.integrate.solve_ivp`` (DOP853,
rtol = atol = 1e-12), or the exact solution of the A02 chain.

Reference equations
-------------------
Every reference but the chain's is the projected Newton-Euler (Kane) form of Lagrange's
equations in the minimal coordinates ``q`` (``n`` of them): body ``i`` with mass
``m_i``, centre of mass ``c_i(q)`` and, about an axis of fixed direction (planar bodies;
here also every spatial body), moment of inertia ``J_i`` and angular velocity
``w_i = W_i(q) q'``,

.. math::

    \Big(\sum_i m_i C_i^T C_i + J_i W_i^T W_i\Big) q''
      = \sum_i C_i^T m_i (g - b_i) - J_i W_i^T \beta_i + Q_x(q),

``C_i = dc_i/dq``, ``b_i = c_i''|_{q''=0}``, ``beta_i = w_i'|_{q''=0}``, ``Q_x = -dV_x/dq``
(springs).  For one coordinate ``theta`` this is ``m(theta) theta'' + 1/2 m'(theta)
theta'^2 = Q(theta)`` with ``m = sum m_i |c_i,theta|^2 + J_i w_i,theta^2`` and
``b_i = c_i,thetatheta theta'^2``.  Each reference's class docstring gives its kinematics.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp

G = 9.81
RTOL = ATOL = 1e-12   #: the references' integration tolerances
E2 = np.array([[0.0, -1.0], [1.0, 0.0]])  # planar 90-degree rotation
DEG50, DEG60 = math.radians(50.0), math.radians(60.0)


def _e(a: float) -> np.ndarray:
    return np.array([math.cos(a), math.sin(a)])



class Reference:
    """Minimal-coordinate model ``y = [q, q']``; subclasses give :meth:`terms`,
    :meth:`points` and the initial state ``q0``, ``qd0`` (module docstring: equations)."""

    n = 1
    gravity = np.zeros(2)
    q0 = np.zeros(1)
    qd0 = np.zeros(1)

    def terms(self, q: np.ndarray, qd: np.ndarray) -> list:
        """``[(m, J, c, C, b, W, beta)]`` per body (module docstring)."""
        raise NotImplementedError

    def points(self, q: np.ndarray) -> np.ndarray:
        """Tracked points, shape ``(k, dim)``, in the order of the case's markers."""
        raise NotImplementedError

    def extra_force(self, q: np.ndarray) -> np.ndarray:
        """``Q_x = -dV_x/dq`` (springs)."""
        return np.zeros(self.n)

    def extra_potential(self, q: np.ndarray) -> float:
        return 0.0

    def rhs(self, _t: float, y: np.ndarray) -> np.ndarray:
        q, qd = y[:self.n], y[self.n:]
        M = np.zeros((self.n, self.n))
        f = self.extra_force(q).astype(float)
        for m, J, _c, C, b, W, beta in self.terms(q, qd):
            M += m * C.T @ C + J * np.outer(W, W)
            f += C.T @ (m * (self.gravity - b)) - J * W * beta
        return np.concatenate([qd, np.linalg.solve(M, f)])

    def energy(self, q: np.ndarray, qd: np.ndarray) -> float:
        """Kinetic + potential energy (the reference's own check: constant)."""
        E = self.extra_potential(q)
        for m, J, c, C, _b, W, _beta in self.terms(q, qd):
            v = C @ qd
            E += 0.5 * m * v @ v + 0.5 * J * float(W @ qd) ** 2 - m * self.gravity @ c
        return E

    def solve(self, t: np.ndarray) -> dict:
        """``{"q", "qd", "points"}`` at the times ``t`` (DOP853, rtol = atol = 1e-12)."""
        t = np.asarray(t, float)
        sol = solve_ivp(self.rhs, (float(t[0]), float(t[-1])),
                        np.concatenate([self.q0, self.qd0]), method="DOP853", t_eval=t,
                        rtol=RTOL, atol=ATOL)
        if not sol.success:
            raise RuntimeError(f"{type(self).__name__}: {sol.message}")
        q, qd = sol.y[:self.n].T, sol.y[self.n:].T
        return {"q": q, "qd": qd, "points": np.array([self.points(qk) for qk in q])}


class Loop1(Reference):
    """A one-degree-of-freedom loop: :meth:`bodies` gives per body ``(m, J, c, c_th,
    c_thth, w_th, w_thth)`` at ``theta`` (``w`` the angular velocity about the body's
    fixed axis per unit ``theta'``); then ``C = c_th``, ``b = c_thth theta'^2``,
    ``W = w_th``, ``beta = w_thth theta'^2``."""

    n = 1

    def bodies(self, th: float) -> list:
        raise NotImplementedError

    def terms(self, q, qd):
        th, w2 = float(q[0]), float(qd[0]) ** 2
        return [(m, J, c, c1[:, None], c2 * w2, np.array([w1]), ww * w2)
                for m, J, c, c1, c2, w1, ww in self.bodies(th)]


class FourBarRef(Loop1):
    r"""The four-bar of ``four_bar()`` (crank angle ``theta`` from the ground line).

    Ground pivots ``A0 = 0``, ``D0 = (a0, 0)``; crank tip ``B = a1 e(theta)``; ``C`` the
    intersection of ``|C - B| = a2`` and ``|C - D0| = a3`` left of ``B -> D0`` (the
    assembly branch of the builder; never flips: ``|B - D0|`` stays in
    ``(|a2 - a3|, a2 + a3)``); coupler and rocker angles ``phi2 = arg(C - B)``,
    ``phi3 = arg(C - D0)``.  Loop closure ``a1 e1 + a2 e2 - a3 e3 - a0 e_x = 0``,
    differentiated (``E`` the 90-degree rotation, ``E^2 = -I``)::

        [a2 E e2, -a3 E e3] [phi2', phi3']   = -a1 E e1
        [a2 E e2, -a3 E e3] [phi2'', phi3''] =  a1 e1 + a2 e2 phi2'^2 - a3 e3 phi3'^2

    (derivatives by theta).  Centres of mass at mid-length: ``c1 = a1/2 e1``,
    ``c2 = a1 e1 + a2/2 e2``, ``c3 = D0 + a3/2 e3``.  Tracked points: ``B``, ``C``.
    """

    def __init__(self, a0=0.4, a1=0.1, a2=0.35, a3=0.3, m1=0.5, J1=0.02, m2=1.0, m3=0.8,
                 theta0=DEG60, w0=10.0, g=G) -> None:
        self.a = (a0, a1, a2, a3)
        self.m = (m1, m2, m3)
        self.J = (J1, m2 * a2 * a2 / 12.0, m3 * a3 * a3 / 12.0)
        self.gravity = np.array([0.0, -g])
        self.q0, self.qd0 = np.array([theta0]), np.array([w0])

    def angles(self, th: float) -> tuple:
        a0, a1, a2, a3 = self.a
        B, D0 = a1 * _e(th), np.array([a0, 0.0])
        d = float(np.linalg.norm(D0 - B))
        u = (D0 - B) / d
        x = (a2 * a2 - a3 * a3 + d * d) / (2.0 * d)
        C = B + x * u + math.sqrt(a2 * a2 - x * x) * (E2 @ u)
        return math.atan2(*(C - B)[::-1]), math.atan2(*(C - D0)[::-1])

    def bodies(self, th):
        a0, a1, a2, a3 = self.a
        p2, p3 = self.angles(th)
        e1, e2, e3 = _e(th), _e(p2), _e(p3)
        A = np.column_stack([a2 * E2 @ e2, -a3 * E2 @ e3])
        d2, d3 = np.linalg.solve(A, -a1 * E2 @ e1)
        dd2, dd3 = np.linalg.solve(A, a1 * e1 + a2 * e2 * d2 ** 2 - a3 * e3 * d3 ** 2)
        (m1, m2, m3), (J1, J2, J3) = self.m, self.J
        D0 = np.array([a0, 0.0])
        return [
            (m1, J1, 0.5 * a1 * e1, 0.5 * a1 * E2 @ e1, -0.5 * a1 * e1, 1.0, 0.0),
            (m2, J2, a1 * e1 + 0.5 * a2 * e2, a1 * E2 @ e1 + 0.5 * a2 * E2 @ e2 * d2,
             -a1 * e1 + 0.5 * a2 * (-e2 * d2 ** 2 + E2 @ e2 * dd2), d2, dd2),
            (m3, J3, D0 + 0.5 * a3 * e3, 0.5 * a3 * E2 @ e3 * d3,
             0.5 * a3 * (-e3 * d3 ** 2 + E2 @ e3 * dd3), d3, dd3)]

    def points(self, q):
        th = float(q[0])
        _, p3 = self.angles(th)
        return np.array([self.a[1] * _e(th), np.array([self.a[0], 0.0]) + self.a[3] * _e(p3)])


class SliderCrankRef(Loop1):
    r"""The slider-crank of ``slider_crank()`` (crank angle ``theta``).

    Crank pin ``A = r e(theta)``, rod angle ``phi = -asin(k sin theta)`` (``k = r/l``; the
    rod end ``B = A + l e(phi)`` on ``y = 0``, right of the crank),
    ``phi_th = -k cos theta / D``, ``phi_thth = k sin theta / D - k^3 sin theta cos^2
    theta / D^3``, ``D = sqrt(1 - k^2 sin^2 theta)``.  Crank: mass on its pivot, ``j1``;
    rod: ``m``, ``j2 = m l^2/12``, centre ``c = A + l1 e(phi)``.  Tracked: ``A``, ``B``.
    """

    def __init__(self, r=0.15, l=0.5, l1=0.25, m=2.0, j1=0.05, w0=10.0) -> None:
        self.r, self.l, self.l1, self.mr, self.j1 = r, l, l1, m, j1
        self.j2 = m * l * l / 12.0
        self.gravity = np.array([0.0, -G])
        self.q0, self.qd0 = np.array([0.0]), np.array([w0])

    def bodies(self, th):
        r, l1, k = self.r, self.l1, self.r / self.l
        s, c = math.sin(th), math.cos(th)
        D = math.sqrt(1.0 - k * k * s * s)
        ph = -math.asin(k * s)
        p1 = -k * c / D
        p2 = k * s / D - k ** 3 * s * c * c / D ** 3
        e1, ep = _e(th), _e(ph)
        return [(1.0, self.j1, np.zeros(2), np.zeros(2), np.zeros(2), 1.0, 0.0),
                (self.mr, self.j2, r * e1 + l1 * ep, r * E2 @ e1 + l1 * E2 @ ep * p1,
                 -r * e1 + l1 * (-ep * p1 ** 2 + E2 @ ep * p2), p1, p2)]

    def points(self, q):
        th = float(q[0])
        A = self.r * _e(th)
        return np.array([A, A + self.l * _e(-math.asin(self.r / self.l * math.sin(th)))])


class ParallelogramRef(Loop1):
    r"""The parallelogram of :func:`parallelogram` (crank angle ``theta``).

    ``cranks`` equal cranks (length ``r``, mass ``mc``, ``J = mc r^2/12``) about
    ``(a k, 0)``, centres ``(a k, 0) + r/2 e(theta)``; the coupler (mass ``mcp``)
    translates: centre ``r e(theta) + (span/2, 0)``, no rotation.  So
    ``m = cranks (mc r^2/12 + mc r^2/4) + mcp r^2`` is constant and
    ``m theta'' = -g cos theta (cranks mc r/2 + mcp r)`` (the test's minimal coordinate).
    Tracked: the tips of the first and last crank.
    """

    def __init__(self, cranks=3, r=0.2, a=0.5, theta0=-1.0, w0=0.0, mc=0.2, mcp=1.0) -> None:
        self.k, self.r, self.a, self.mc, self.mcp = cranks, r, a, mc, mcp
        self.gravity = np.array([0.0, -G])
        self.q0, self.qd0 = np.array([theta0]), np.array([w0])

    def bodies(self, th):
        r, e = self.r, _e(th)
        span = self.a * (self.k - 1)
        out = [(self.mc, self.mc * r * r / 12.0, np.array([self.a * k, 0.0]) + 0.5 * r * e,
                0.5 * r * E2 @ e, -0.5 * r * e, 1.0, 0.0) for k in range(self.k)]
        out.append((self.mcp, 1.0, r * e + np.array([span / 2, 0.0]), r * E2 @ e, -r * e,
                    0.0, 0.0))
        return out

    def points(self, q):
        tip = self.r * _e(float(q[0]))
        return np.array([tip, tip + np.array([self.a * (self.k - 1), 0.0])])


class SarrusRef(Loop1):
    r"""The Sarrus linkage of :func:`sarrus` (limb angle ``alpha`` from the vertical).

    Limb A (axes along x, in the plane x = 0): ground hinge ``(0, -w, 0)``, knee
    ``(0, -w - l s, l c)``, plate hinge ``(0, -w, 2 l c)`` (``s, c = sin, cos alpha``);
    limb B (axes along y, plane y = 0) the same with x and y exchanged.  Plate centre
    ``(0, 0, 2 l c)``, no rotation.  Link centres: first links ``(.., -w - l/2 s,
    l/2 c)``, second links ``(.., -w - l/2 s, 3/2 l c)``; every link turns about its
    fixed axis at ``+-alpha'`` (``J = m l^2/12``).  A spring ``k`` from the ground origin
    to the plate centre, rest length ``L0``: ``V_x = k/2 (2 l c - L0)^2``,
    ``Q_x = 2 k l s (2 l c - L0)``.  Tracked: plate centre, knee A, knee B.
    """

    def __init__(self, l=0.3, w=0.2, m_link=0.5, m_plate=2.0, k=500.0, alpha_eq=math.pi / 3,
                 alpha0=DEG50, w0=0.0) -> None:
        self.l, self.w, self.ml, self.mp, self.k = l, w, m_link, m_plate, k
        self.L0 = sarrus_rest_length(l, m_link, m_plate, k, alpha_eq)
        self.gravity = np.array([0.0, 0.0, -G])
        self.q0, self.qd0 = np.array([alpha0]), np.array([w0])

    def bodies(self, a):
        l, w, s, c = self.l, self.w, math.sin(a), math.cos(a)
        J = self.ml * l * l / 12.0
        out = [(self.mp, 1.0, np.array([0.0, 0.0, 2 * l * c]), np.array([0.0, 0.0, -2 * l * s]),
                np.array([0.0, 0.0, -2 * l * c]), 0.0, 0.0)]
        for h in (0.5, 1.5):  # first and second link of each limb
            p = np.array([-w - 0.5 * l * s, h * l * c])
            p1 = np.array([-0.5 * l * c, -h * l * s])
            p2 = np.array([0.5 * l * s, -h * l * c])
            for lift in (lambda v: np.array([0.0, v[0], v[1]]),   # limb A: (0, y, z)
                         lambda v: np.array([v[0], 0.0, v[1]])):  # limb B: (x, 0, z)
                out.append((self.ml, J, lift(p), lift(p1), lift(p2), 1.0, 0.0))
        return out

    def extra_force(self, q):
        a = float(q[0])
        return np.array([2 * self.k * self.l * math.sin(a)
                         * (2 * self.l * math.cos(a) - self.L0)])

    def extra_potential(self, q):
        return 0.5 * self.k * (2 * self.l * math.cos(float(q[0])) - self.L0) ** 2

    def points(self, q):
        l, w, a = self.l, self.w, float(q[0])
        s, c = math.sin(a), math.cos(a)
        return np.array([[0.0, 0.0, 2 * l * c], [0.0, -w - l * s, l * c],
                         [-w - l * s, 0.0, l * c]])


def sarrus_rest_length(l, m_link, m_plate, k, alpha_eq) -> float:
    """Spring rest length for equilibrium at ``alpha_eq``: the weight is that of a mass
    ``m_plate + 2 m_link`` at the plate height ``z = 2 l cos alpha`` (each limb's link
    centres sit at z/4 and 3z/4), so ``k (z_eq - L0) = -g (m_plate + 2 m_link)``."""
    return 2 * l * math.cos(alpha_eq) + G * (m_plate + 2 * m_link) / k


RSSR = dict(r1=0.1, r3=0.3, L=0.5, O2=(0.25, 0.3, -0.05), a2=(0.3, 1.0, 0.4), m1=1.0,
            m3=0.8, theta0=0.3, w0=4.0)


def rssr_axes(a2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rocker axis ``a2`` (unit) and the orthonormal pair ``u2 = a2 x e_z / |.|``,
    ``w2 = a2 x u2`` of its plane of rotation."""
    a2 = np.asarray(a2, float) / np.linalg.norm(a2)
    u2 = np.cross(a2, [0.0, 0.0, 1.0])
    u2 /= np.linalg.norm(u2)
    return a2, u2, np.cross(a2, u2)


class RSSRRef(Loop1):
    r"""The spatial four-bar of :func:`rssr` (crank angle ``theta``).

    Crank about the x axis through the origin: tip ``S1 = r1 (0, cos theta, sin theta)``.
    Rocker about ``a2`` through ``O2``: tip ``S2 = O2 + r3 n(psi)``,
    ``n = cos psi u2 + sin psi w2``, ``t = dn/dpsi``.  Coupler ``|S1 - S2| = L`` with
    ``p = S1 - O2``: ``f(theta, psi) = A cos psi + B sin psi - C = 0``, ``A = p.u2``,
    ``B = p.w2``, ``C = (|p|^2 + r3^2 - L^2) / (2 r3)``, so
    ``psi = atan2(B, A) + s acos(C / sqrt(A^2 + B^2))`` (branch ``s = +1``; the
    geometry keeps ``A^2 + B^2 - C^2 > 0.79 (A^2 + B^2)`` over the whole turn: the
    crank turns fully, no singular position).  Implicit differentiation::

        psi'  = -f_th / f_psi
        psi'' = -(f_thth + 2 f_thpsi psi' + f_psipsi psi'^2) / f_psi

    with ``A' = p'.u2``, ``C' = p.p'/r3``, ``C'' = (p'.p' + p.p'')/r3``, ``p' = S1'``.
    Crank and rocker are slender bars (``J = m r^2/12`` about their centres at
    mid-length, turning about their fixed axes); the coupler is massless.  Tracked:
    ``S1``, ``S2``.
    """

    def __init__(self, r1=0.1, r3=0.3, L=0.5, O2=(0.25, 0.3, -0.05), a2=(0.3, 1.0, 0.4),
                 m1=1.0, m3=0.8, theta0=0.3, w0=4.0) -> None:
        self.r1, self.r3, self.L, self.m1, self.m3 = r1, r3, L, m1, m3
        self.O2 = np.asarray(O2, float)
        self.a2, self.u2, self.w2 = rssr_axes(a2)
        self.gravity = np.array([0.0, 0.0, -G])
        self.q0, self.qd0 = np.array([theta0]), np.array([w0])

    def rocker(self, th: float) -> tuple:
        """``(psi, psi', psi'')`` (derivatives by theta)."""
        r1, r3, u2, w2 = self.r1, self.r3, self.u2, self.w2
        s, c = math.sin(th), math.cos(th)
        p = np.array([0.0, r1 * c, r1 * s]) - self.O2
        p1 = np.array([0.0, -r1 * s, r1 * c])
        p2 = np.array([0.0, -r1 * c, -r1 * s])
        A, B = p @ u2, p @ w2
        C = (p @ p + r3 * r3 - self.L ** 2) / (2 * r3)
        psi = math.atan2(B, A) + math.acos(C / math.hypot(A, B))
        A1, B1, C1 = p1 @ u2, p1 @ w2, p @ p1 / r3
        A2, B2, C2 = p2 @ u2, p2 @ w2, (p1 @ p1 + p @ p2) / r3
        sp, cp = math.sin(psi), math.cos(psi)
        f_p = -A * sp + B * cp
        f_t = A1 * cp + B1 * sp - C1
        d1 = -f_t / f_p
        f_tt = A2 * cp + B2 * sp - C2
        f_tp = -A1 * sp + B1 * cp
        f_pp = -A * cp - B * sp
        d2 = -(f_tt + 2 * f_tp * d1 + f_pp * d1 * d1) / f_p
        return psi, d1, d2

    def bodies(self, th):
        r1, r3 = self.r1, self.r3
        s, c = math.sin(th), math.cos(th)
        psi, d1, d2 = self.rocker(th)
        n = math.cos(psi) * self.u2 + math.sin(psi) * self.w2
        t = -math.sin(psi) * self.u2 + math.cos(psi) * self.w2
        e = np.array([0.0, c, s])
        de = np.array([0.0, -s, c])
        return [(self.m1, self.m1 * r1 * r1 / 12, 0.5 * r1 * e, 0.5 * r1 * de, -0.5 * r1 * e,
                 1.0, 0.0),
                (self.m3, self.m3 * r3 * r3 / 12, self.O2 + 0.5 * r3 * n, 0.5 * r3 * t * d1,
                 0.5 * r3 * (-n * d1 * d1 + t * d2), d1, d2)]

    def points(self, q):
        th = float(q[0])
        psi = self.rocker(th)[0]
        return np.array([[0.0, self.r1 * math.cos(th), self.r1 * math.sin(th)],
                         self.O2 + self.r3 * (math.cos(psi) * self.u2
                                              + math.sin(psi) * self.w2)])


class CartDoublePendulumRef(Reference):
    r"""The cart double pendulum of :func:`cart_double_pendulum`, ``q = (x, th1, th2)``
    (cart position, bar angles from the downward vertical).

    Cart (mass ``mc``) at ``(x, 0)``, no rotation; bar 1 (``m1``, ``l1``) hinged on the
    cart, bar 2 (``m2``, ``l2``) at bar 1's lower end; ``J_i = m_i l_i^2/12``::

        c1 = (x + l1/2 s1, -l1/2 c1)             C1 = [[1, l1/2 c1, 0], [0, l1/2 s1, 0]]
        c2 = (x + l1 s1 + l2/2 s2,               C2 = [[1, l1 c1, l2/2 c2],
              -l1 c1 - l2/2 c2)                        [0, l1 s1, l2/2 s2]]
        b1 = l1/2 th1'^2 (-s1, c1)               b2 = (l1 th1'^2 (-s1, c1)
                                                       + l2/2 th2'^2 (-s2, c2))

    ``W1 = (0, 1, 0)``, ``W2 = (0, 0, 1)``, ``beta = 0``: the Lagrangian of the open chain
    in the form of the module docstring.  Tracked: cart centre, the two bar ends.
    """

    n = 3

    def __init__(self, mc=1.0, m1=0.6, l1=0.4, m2=0.4, l2=0.3, th1=0.3, th2=-0.2,
                 x0=0.0) -> None:
        self.mc, self.m1, self.l1, self.m2, self.l2 = mc, m1, l1, m2, l2
        self.gravity = np.array([0.0, -G])
        self.q0, self.qd0 = np.array([x0, th1, th2]), np.zeros(3)

    def terms(self, q, qd):
        x, t1, t2 = q
        _, w1, w2 = qd
        l1, h1, h2 = self.l1, 0.5 * self.l1, 0.5 * self.l2
        s1, c1, s2, c2 = math.sin(t1), math.cos(t1), math.sin(t2), math.cos(t2)
        zero = np.zeros(3)
        return [
            (self.mc, 0.0, np.array([x, 0.0]), np.array([[1.0, 0, 0], [0, 0, 0]]),
             np.zeros(2), zero, 0.0),
            (self.m1, self.m1 * self.l1 ** 2 / 12, np.array([x + h1 * s1, -h1 * c1]),
             np.array([[1.0, h1 * c1, 0], [0, h1 * s1, 0]]),
             h1 * w1 * w1 * np.array([-s1, c1]), np.array([0.0, 1.0, 0.0]), 0.0),
            (self.m2, self.m2 * self.l2 ** 2 / 12,
             np.array([x + l1 * s1 + h2 * s2, -l1 * c1 - h2 * c2]),
             np.array([[1.0, l1 * c1, h2 * c2], [0, l1 * s1, h2 * s2]]),
             l1 * w1 * w1 * np.array([-s1, c1]) + h2 * w2 * w2 * np.array([-s2, c2]),
             np.array([0.0, 0.0, 1.0]), 0.0)]

    def points(self, q):
        x, t1, t2 = q
        P1 = np.array([x + self.l1 * math.sin(t1), -self.l1 * math.cos(t1)])
        return np.array([[x, 0.0], P1,
                         P1 + self.l2 * np.array([math.sin(t2), -math.cos(t2)])])


class ChainRef:
    """The A02 chain's exact parallelogram-branch motion (``bench.multibody_chain.
    ChainExact``: ``theta'' = -kappa cos theta`` solved with Jacobi elliptic functions, no
    library code).  Tracked: ``B_0`` and ``B_N`` (crank tips; every crank has the angle
    ``theta``)."""

    def __init__(self, N: int = 2, L: float = 1.0) -> None:
        from .multibody_chain import ChainExact
        self.N, self.L, self.exact = N, L, ChainExact(N, L)

    def solve(self, t: np.ndarray) -> dict:
        th, thd = self.exact.theta(np.asarray(t, float))
        e = np.column_stack([np.cos(th), np.sin(th)])
        P = np.stack([self.L * e, self.L * e + np.array([self.N * self.L, 0.0])], axis=1)
        return {"q": th[:, None], "qd": thd[:, None], "points": P}
