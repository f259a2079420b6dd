"""Independent reference models for the multibody blocks (plain numpy/scipy, no cosim engine).

Two published cases from seed 000 (NATO ASI "Virtual Nonlinear Multibody Systems"), notes in
``/work/shared/research/seed-000-part1.md`` section 8 and ``seed-000-part2.md`` section 10,
OCR text in ``/work/shared/seeds/000_52df95033d5b08bb.txt``.  Every equation below was
re-derived here; nothing is taken from the project's multibody engine.

1. Chernousko, "Snake-like locomotions of multilink systems" (pp. 70-79, OCR lines 5545-6020)
==========================================================================================

System.  Planar three-link linkage O1 C1 C2 O2 on a horizontal plane.  Massless rigid bars;
point masses m1 at the joints C1, C2 and m0 at the ends O1, O2 (m = 2 (m0 + m1)).  Central
link C1 C2 of length 2a, end links of length l.  Generalized coordinates q = (x, y, theta):
midpoint P of C1 C2 and angle of C1 C2 to the x axis.  The joint angles alpha_1, alpha_2
(end link relative to the central link, both counter-clockwise) are *prescribed* functions
of time (the torques M1, M2 at C1, C2 are whatever enforces them).  Body-frame positions
(central-link frame, origin P, x axis along C1 -> C2)::

    s_C1 = (-a, 0)                s_O1 = (-a - l cos alpha_1, -l sin alpha_1)
    s_C2 = (+a, 0)                s_O2 = (+a + l cos alpha_2, +l sin alpha_2)
    r_j  = P + R(theta) s_j

(with this convention the lateral gait's C shape is alpha_2 = -alpha_1: "links rotating in
opposite directions").  Each point mass j carries dry (Coulomb) friction, isotropic in the
plane, ``F_j = -k_j m_j g v_j/|v_j|`` when sliding, ``|F_j| <= k_j m_j g`` when at rest
(k1 for C1, C2 and k0 for O1, O2).  Joint forces and torques are internal, so the three
equations for q are the whole-system momentum and angular-momentum balances::

    sum_j m_j a_j = sum_j F_j,       sum_j (r_j - P) x m_j a_j = sum_j (r_j - P) x F_j
    a_j = P'' + R [theta'' J s_j - theta'^2 s_j + 2 theta' J s_j' + s_j''],  J = rot(90 deg)

(linear in (P'', theta''); solved as a 3x3 system at every evaluation).  Joint torque on
end link i from the central link: ``M_i = (r_Oi - r_Ci) x (m0 a_Oi - F_Oi)`` (massless bar).

Friction regularization (ours; the paper does not say how it simulated the "complete
nonlinear equations"): ``F_j = -k_j m_j g v_j / sqrt(|v_j|^2 + eps^2)``, eps = 1e-4 m/s by
default, integrated with the implicit Radau method (the stick regime is stiff, time constant
eps/(k g)).  "Sticking" then means creeping at speeds of order eps: the central link creeps
by ~1e-4 rad per slow phase at eps = 1e-4 and the creep scales with eps.

Prescribed joint motion (paper Sec. 6): every elementary motion has a triangular angular-
velocity profile, |alpha'| = eps0 t on [0, D/2] and eps0 (D - t) on [D/2, D], so that
|Delta alpha| = eps0 D^2 / 4; slow phases use eps0 = 4 s^-2 (D = T), fast phases are the same
shape with duration tau << T (tau is not given in the paper; ours, default 0.01 s).

Gaits (S = slow, F = fast; alpha_1, alpha_2 end values)::

    longitudinal: 1 S (g, 0) | cycle: 2 F (0, g)  3 S (-g, 0)  4 F (0, -g)  5 S (g, 0)
    lateral:      1 S (-g, g) | cycle: 2 F (g, -g)  3 S (-g, g)

Data (paper Sec. 6): a = l = 0.2 m, m1 = 1.2 kg, m0 = 0.4 kg (m = 3.2 kg), k1 = k0 = 0.2,
g = 9.81 m/s^2, gamma = 1 rad, eps0 = 4 s^-2.  Longitudinal: |Delta alpha| = 1, T = 1 s,
omega0 = 2 s^-1.  Lateral: |Delta alpha| = 2, T = sqrt(2) = 1.414 s (paper: "1.4 s"),
omega0 = 2.83 s^-1 (paper: "2.8").

Published numbers and what this module gets:

* v1 = 0.023 m/s.  Closed form (3.1)-(3.2): Delta x = 8 m0 l sin^2(gamma/2)/m = 0.045970 m per
  cycle, v1 = Delta x/(2T) = 0.022985 m/s.  Full friction simulation (eps = 1e-4 m/s,
  tau = 0.01 s, friction active in all phases): Delta x = 0.04580 m, v1 = 0.02290 m/s
  (Delta y ~ 1e-5 m, Delta theta ~ 1e-8 rad per cycle, paper: 0 and 0).  With friction off
  in the fast phases (the paper's idealization) and eps = 1e-5: v1 = 0.022981 m/s.  The
  -0.37 % deficit of the full simulation is ~0.19 % creep of the "resting" central link
  (eps = 1e-4; proportional to eps) plus ~0.18 % friction impulse during the 10 ms fast
  phases (the latter grows as tau^2: -0.9 % at tau = 0.02 s, -16 % at tau = 0.1 s).
  **Reproduced**: 0.023 to the printed 2 significant digits.
* Slow-phase conditions (2.2)/(2.3): longitudinal 2.255 N <= m1 g k1 = 2.354 N (2.2 holds);
  lateral (2.2) 2.375 N fails but (2.3) 1.270 N holds, as the paper says.  Reproduced.
* v2 = 0.034 m/s: **not reproduced**.  By symmetry (alpha_2 = -alpha_1 in the fast phase,
  x and theta stay constant) conservation of the centre of mass gives exactly
  Delta y = 4 m0 l sin(gamma)/m = 0.08415 m per cycle, i.e. the OCR formula (3.3) is right,
  and the simulation confirms it (0.08402 m per cycle with full friction, 0.08414 with
  ideal fast phases and eps = 1e-5; Delta x = Delta theta = 0 exactly); then
  v2 = Delta y/T = 0.0595 m/s (T = sqrt 2; 0.060 with T = 1.4).  The printed 0.034 equals
  4 m0 l sin(gamma/2)/(m T) = 0.0339 (T = sqrt 2) / 0.0342 (T = 1.4): apparently the
  paper's number was evaluated with sin(gamma/2), i.e. with the half swing; we treat it as
  an error in the paper (or in the data it was evaluated with), not as a model difference.
* "6-8 N m" joint torque: depends on tau, which the paper does not give.  With our
  triangular fast profile the peak |M_i| of the longitudinal gait (``.torques``) is 566 N m
  at tau = 0.01 s, 23 at 0.05, 9.1 at 0.08, 7.2 at 0.09 and 5.9 N m at 0.1 s; so the
  printed range corresponds to tau ~ 0.08-0.1 s, where the fast-phase friction already
  lowers v1 by 11-16 %.  Not a reproduction (tau unknown), only a consistency note.

OCR corrections: lateral gait stage 1 prints ``alpha_2: 0 -> -gamma``; the text says the
state after stage 3 (alpha_1 = -gamma, alpha_2 = gamma) equals that after stage 1, so it is
``0 -> +gamma``.  (2.2) is read as m0 l {[w0^4 + (e0 + g k0/l)^2]^(1/2) + (e0 + g k0/l) l/a}
<= m1 g k1, consistent with the paper's limits m0 k0 (a + l) < m1 k1 a and m0 k0 < m1 k1.

2. Schwab & Meijaard, "How to linearize your non-holonomic multibody system" (pp. II/220-227,
   OCR lines 15513-16084): Den Hartog's swivel-wheel shimmy
==========================================================================================

System (plan view).  The strut bottom B moves forward at constant speed v along x
(x_B = v t, rheonomic) and deflects laterally by u against a spring k (force -k u along y).
One rigid body (beam + wheel, mass m, centre of gravity G, moment of inertia m r^2 about G,
no wheel spin inertia, zero rotational stiffness at B) is hinged at B; the wheel centre A is
at the trail l behind B, phi is the shimmy angle.  a = |AG|, b = |GB| = l - a (this
convention is inferred: it reproduces M below and the caption wn = sqrt(k/(0.3 m)) at
a/l = 0.3; the stability results are symmetric in a and b)::

    B = (v t, u),  G = B - b e(phi),  A = B - l e(phi),  e(phi) = (cos phi, sin phi)

Non-holonomic constraint: zero lateral slip of the (rigid) wheel at A,
``n(phi) . v_A = 0`` with n = (-sin phi, cos phi), i.e. ``l phi' = u' cos phi - v sin phi``.
Lagrange's equations with multiplier lam (= lateral tyre force at A, along n)::

    m (u'' - b cos(phi) phi'' + b sin(phi) phi'^2) + k u = lam cos(phi)
    m ((b^2 + r^2) phi'' - b cos(phi) u'')               = -l lam

q_d = u (degree of freedom), q_k = phi (kinematic coordinate), nominal (u', u, phi) = 0.
Linearized coefficients (paper (30), reconstructed from garbled OCR and re-derived)::

    M = m (a^2 + r^2)/l^2,   C = m v (a b - r^2)/l^3,   K_d = k,   K_k = -m v^2 (a b - r^2)/l^3
    A = 1/l,   B_d = 0,   B_k = -v/l,   f_d = 0

State form (29): ``diag(M, 1, 1) z' = -[[C, K_d, K_k], [-1, 0, 0], [-A, -B_d, -B_k]] z``,
z = (du', du, dphi).  Characteristic equation (31)::

    lam^3 + (1 + mu) w lam^2 + wn^2 lam + w wn^2 = 0
    mu = (a b - r^2)/(a^2 + r^2),   w = v/l,   wn = sqrt(k l^2 / (m (a^2 + r^2)))

Hurwitz (32): asymptotically stable iff w > 0 and mu > 0, i.e. a (l - a) > r^2, the band
a/l in 1/2 -/+ sqrt(1/4 - r^2/l^2).  With I = m r^2 = 0.21 m l^2: **0.3 < a/l < 0.7**
(exactly; reproduced analytically and by bisection on the largest real part of the roots,
to ~1e-12).  At the boundaries the roots are exactly -w and +/- i wn (the cubic factors as
(lam + w)(lam^2 + wn^2)); reproduced.

Independent checks in this module: (i) eigenvalues of the state matrix built from (30);
(ii) eigenvalues of the Jacobian (complex-step, exact to rounding) of the *nonlinear*
Lagrange equations above, which do not use (30) at all; both equal the cubic's roots.
Mode shape: the lateral displacement of A, u - l sin(phi), over u is w/(lam + w).

OCR corrections: (30) is printed as scattered fragments ("m( p, )i", "ab - r2 w2") and is
reconstructed as above; in (31) ``(1 -f /v,)wA2 + ca2 A + caw2`` is (1 + mu) w lam^2 +
wn^2 lam + w wn^2 and ``un - sjki1/(m(ak + r2))`` is wn = sqrt(k l^2/(m (a^2 + r^2))).
Parameters other than I = 0.21 m l^2 are not given; ours: m = 1 kg, l = 1 m, v = 1 m/s,
k = 0.3 N/m, so w = 1 s^-1 and wn = 1 s^-1 at the critical a/l = 0.3 (the figure's
normalization is unreadable).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

# =========================================================================================
# 1. Chernousko: three-link snake-like linkage with dry friction
# =========================================================================================

_JOINTS = ("C1", "C2", "O1", "O2")


@dataclass(frozen=True)
class SnakeParameters:
    """Chernousko's example (paper Sec. 6; seed-000-part1.md 8.3)."""

    a: float = 0.2  # half length of the central link C1 C2 [m]
    ell: float = 0.2  # end-link length [m]
    m1: float = 1.2  # point masses at C1, C2 [kg]
    m0: float = 0.4  # point masses at O1, O2 [kg]
    k1: float = 0.2  # friction coefficient of m1
    k0: float = 0.2  # friction coefficient of m0
    g: float = 9.81  # [m/s^2]
    gamma: float = 1.0  # joint-angle amplitude [rad]
    eps0: float = 4.0  # slow-phase angular acceleration [s^-2]
    source: str = field(
        default="Chernousko, Snake-like Locomotions of Multilink Systems, Sec. 6 "
        "(seed 000, OCR lines 5545-6020; notes seed-000-part1.md 8.3)",
        compare=False,
    )

    @property
    def m(self) -> float:
        """Total mass 2 (m0 + m1) [kg] (paper: 3.2 kg)."""
        return 2.0 * (self.m0 + self.m1)

    @property
    def masses(self) -> np.ndarray:
        return np.array([self.m1, self.m1, self.m0, self.m0])

    @property
    def friction(self) -> np.ndarray:
        return np.array([self.k1, self.k1, self.k0, self.k0])

    def slow_duration(self, delta_alpha: float) -> float:
        """Duration T of a slow phase with swing |delta_alpha|: |da| = eps0 T^2/4."""
        return math.sqrt(4.0 * abs(delta_alpha) / self.eps0)


def snake_parameters() -> SnakeParameters:
    """The seed's data: a = l = 0.2 m, m1 = 1.2 kg, m0 = 0.4 kg, k1 = k0 = 0.2, gamma = 1."""
    return SnakeParameters()


def snake_gait(kind: str, gamma: float) -> tuple[list, list]:
    """(prefix, cycle) stages as ``("S"|"F", (alpha1_end, alpha2_end))`` (Sec. 3)."""
    g = gamma
    if kind == "longitudinal":
        return [("S", (g, 0.0))], [("F", (0.0, g)), ("S", (-g, 0.0)), ("F", (0.0, -g)),
                                   ("S", (g, 0.0))]
    if kind == "lateral":  # stage 1 alpha_2: 0 -> +gamma (OCR prints -gamma; see docstring)
        return [("S", (-g, g))], [("F", (g, -g)), ("S", (-g, g))]
    raise ValueError(f"unknown gait {kind!r}")


def snake_closed_form(params: SnakeParameters | None = None) -> dict:
    """Paper (3.1)-(3.3): displacements per cycle and mean speeds (fast phases ideal)."""
    p = params or snake_parameters()
    t_long = p.slow_duration(p.gamma)
    t_lat = p.slow_duration(2.0 * p.gamma)
    dx = 8.0 * p.m0 / p.m * p.ell * math.sin(p.gamma / 2.0) ** 2
    dy = 4.0 * p.m0 / p.m * p.ell * math.sin(p.gamma)
    return {"dx": dx, "v1": dx / (2.0 * t_long), "T_long": t_long,
            "dy": dy, "v2": dy / t_lat, "T_lat": t_lat}


def snake_slow_phase_conditions(params: SnakeParameters | None = None,
                                omega0: float = 2.0, eps0: float = 4.0) -> dict:
    """Sufficient conditions (2.2), (2.3) for the central link to stay at rest [N].

    ``lhs22 <= rhs`` (one end link moving, or both in the same direction),
    ``lhs23 <= rhs`` (end links rotating in opposite directions), ``rhs = m1 g k1``.
    """
    p = params or snake_parameters()
    e = eps0 + p.g * p.k0 / p.ell
    root = math.sqrt(omega0**4 + e**2)
    return {"lhs22": p.m0 * p.ell * (root + e * p.ell / p.a),
            "lhs23": p.m0 * p.ell * root, "rhs": p.m1 * p.g * p.k1}


def snake_body_points(alpha, params: SnakeParameters | None = None) -> np.ndarray:
    """Body-frame positions (4, 2) of C1, C2, O1, O2 (origin P, x along C1 -> C2)."""
    p = params or snake_parameters()
    a1, a2 = alpha
    return np.array([[-p.a, 0.0], [p.a, 0.0],
                     [-p.a - p.ell * math.cos(a1), -p.ell * math.sin(a1)],
                     [p.a + p.ell * math.cos(a2), p.ell * math.sin(a2)]])


def snake_points(q, alpha, params: SnakeParameters | None = None) -> np.ndarray:
    """World positions (4, 2) of C1, C2, O1, O2 for q = (x, y, theta)."""
    x, y, th = q
    c, s = math.cos(th), math.sin(th)
    return np.array([x, y]) + snake_body_points(alpha, params) @ np.array([[c, s], [-s, c]])


def _body_rates(alpha, alphad, alphadd, p: SnakeParameters):
    (a1, a2), (d1, d2), (e1, e2) = alpha, alphad, alphadd
    c1, s1, c2, s2 = math.cos(a1), math.sin(a1), math.cos(a2), math.sin(a2)
    sd = np.zeros((4, 2))
    sdd = np.zeros((4, 2))
    sd[2] = (p.ell * s1 * d1, -p.ell * c1 * d1)
    sd[3] = (-p.ell * s2 * d2, p.ell * c2 * d2)
    sdd[2] = (p.ell * (c1 * d1**2 + s1 * e1), p.ell * (s1 * d1**2 - c1 * e1))
    sdd[3] = (-p.ell * (c2 * d2**2 + s2 * e2), p.ell * (-s2 * d2**2 + c2 * e2))
    return sd, sdd


def _cross(u, v):
    return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]


def _snake_dynamics(z, alpha, alphad, alphadd, p, eps, friction_on):
    """Return (q'', velocities, friction forces, accelerations) of the four point masses."""
    _, _, th, xd, yd, thd = z
    mass = p.masses
    s = snake_body_points(alpha, p)
    sd, sdd = _body_rates(alpha, alphad, alphadd, p)
    c, sn = math.cos(th), math.sin(th)
    rot_t = np.array([[c, sn], [-sn, c]])  # row vectors times rot_t = R applied
    js = np.stack([-s[:, 1], s[:, 0]], axis=1)
    jsd = np.stack([-sd[:, 1], sd[:, 0]], axis=1)
    rho = s @ rot_t
    rjs = js @ rot_t
    vel = np.array([xd, yd]) + (thd * js + sd) @ rot_t
    if friction_on:
        speed = np.sqrt(np.sum(vel**2, axis=1) + eps**2)
        force = -(p.friction * mass * p.g / speed)[:, None] * vel
    else:
        force = np.zeros((4, 2))
    rest = (-thd**2 * s + 2.0 * thd * jsd + sdd) @ rot_t
    mat = np.zeros((3, 3))
    mat[0, 0] = mat[1, 1] = mass.sum()
    mat[0:2, 2] = (mass[:, None] * rjs).sum(0)
    mat[2, 0:2] = (-(mass * rho[:, 1]).sum(), (mass * rho[:, 0]).sum())
    mat[2, 2] = (mass * (s**2).sum(1)).sum()
    rhs = np.empty(3)
    rhs[0:2] = force.sum(0) - (mass[:, None] * rest).sum(0)
    rhs[2] = _cross(rho, force).sum() - (mass * _cross(rho, rest)).sum()
    qdd = np.linalg.solve(mat, rhs)
    acc = qdd[0:2] + qdd[2] * rjs + rest
    return qdd, vel, force, acc


def _triangular(t0, dur, a_start, a_end):
    """alpha(t), alpha'(t), alpha''(t) with a triangular velocity profile on [t0, t0+dur]."""
    a_start = np.asarray(a_start, float)
    da = np.asarray(a_end, float) - a_start
    acc = 4.0 * da / dur**2

    def profile(t):
        s = min(max(t - t0, 0.0), dur)
        if s <= 0.5 * dur:
            return a_start + 0.5 * acc * s**2, acc * s, acc
        r = dur - s
        return a_start + da - 0.5 * acc * r**2, acc * r, -acc

    return profile


@dataclass
class SnakeResult:
    """Trajectory of a snake_reference run (Radau step points, strictly increasing t)."""

    t: np.ndarray  # (N,)
    q: np.ndarray  # (N, 3): x, y, theta of the central-link midpoint
    qd: np.ndarray  # (N, 3)
    alpha: np.ndarray  # (N, 2) prescribed joint angles
    torques: np.ndarray  # (N, 2) joint torques M1, M2 on the end links [N m]
    stage_times: np.ndarray  # start of stage 1, end of every stage
    stage_q: np.ndarray  # q at stage_times
    stage_kinds: list  # "S"/"F" of every stage
    cycle_displacement: np.ndarray  # (dx, dy, dtheta) per cycle, averaged over the cycles
    mean_speed: float  # |(dx, dy)| / (slow time per cycle): the paper's v1 = dx/(2T), v2 = dy/T
    mean_speed_with_fast: float  # same over the real cycle duration (slow + fast phases)
    nfev: int


def snake_reference(params: SnakeParameters | None = None, gait: str = "longitudinal",
                    n_cycles: int = 1, tau: float = 0.01, friction_eps: float = 1e-4,
                    fast_phase_friction: bool = True, slow_duration: float | None = None,
                    rtol: float = 1e-8, atol: float = 1e-10) -> SnakeResult:
    """Simulate Chernousko's three-link linkage through a gait with scipy's Radau.

    Starts at rest with all links along x (q = 0, alpha = 0), runs the gait's prefix stage
    and ``n_cycles`` repetitions of its cycle.  ``tau`` is the fast-phase duration (ours),
    ``friction_eps`` the regularization speed of Coulomb's law, ``fast_phase_friction=False``
    switches friction off in the fast phases (the paper's idealization).  ``slow_duration``
    defaults to sqrt(4 |Delta alpha| / eps0) (1 s longitudinal, sqrt(2) s lateral).
    """
    p = params or snake_parameters()
    prefix, cycle = snake_gait(gait, p.gamma)
    stages = prefix + cycle * n_cycles
    swing = p.gamma if gait == "longitudinal" else 2.0 * p.gamma
    t_slow = slow_duration if slow_duration is not None else p.slow_duration(swing)

    z = np.zeros(6)
    alpha = np.zeros(2)
    t = 0.0
    ts, zs, als, torques = [], [], [], []
    stage_times, stage_q, kinds = [0.0], [z[:3].copy()], []
    nfev = 0
    for kind, a_end in stages:
        dur = t_slow if kind == "S" else tau
        prof = _triangular(t, dur, alpha, a_end)
        fric = kind == "S" or fast_phase_friction

        def f(tt, zz, prof=prof, fric=fric):
            al, ad, add = prof(tt)
            qdd = _snake_dynamics(zz, al, ad, add, p, friction_eps, fric)[0]
            return np.concatenate((zz[3:], qdd))

        # the prescribed alpha'' jumps at mid-phase: integrate the two halves separately
        for ta, tb in ((t, t + 0.5 * dur), (t + 0.5 * dur, t + dur)):
            sol = solve_ivp(f, (ta, tb), z, method="Radau", rtol=rtol, atol=atol)
            if not sol.success:
                raise RuntimeError(sol.message)
            nfev += sol.nfev
            skip = 1 if ts else 0  # a segment's first point repeats the previous last one
            for tt, zz in zip(sol.t[skip:], sol.y.T[skip:]):
                al, ad, add = prof(tt)
                _, _, force, acc = _snake_dynamics(zz, al, ad, add, p, friction_eps, fric)
                s = snake_body_points(al, p)
                c, sn = math.cos(zz[2]), math.sin(zz[2])
                rho = (s[2:] - s[:2]) @ np.array([[c, sn], [-sn, c]])  # C_i -> O_i
                torques.append(_cross(rho, p.m0 * acc[2:] - force[2:]))
                ts.append(tt)
                zs.append(zz)
                als.append(al)
            z = sol.y[:, -1]
        t += dur
        alpha = np.asarray(a_end, float)
        stage_times.append(t)
        stage_q.append(z[:3].copy())
        kinds.append(kind)

    stage_q = np.array(stage_q)
    n_pre = len(prefix)
    disp = (stage_q[-1] - stage_q[n_pre]) / n_cycles
    n_slow = sum(1 for k, _ in cycle if k == "S")
    n_fast = len(cycle) - n_slow
    dist = float(np.hypot(disp[0], disp[1]))
    zs = np.array(zs)
    return SnakeResult(
        t=np.array(ts), q=zs[:, :3], qd=zs[:, 3:], alpha=np.array(als),
        torques=np.array(torques), stage_times=np.array(stage_times), stage_q=stage_q,
        stage_kinds=kinds, cycle_displacement=disp, mean_speed=dist / (n_slow * t_slow),
        mean_speed_with_fast=dist / (n_slow * t_slow + n_fast * tau), nfev=nfev)


# =========================================================================================
# 2. Schwab & Meijaard: swivel-wheel shimmy (Den Hartog)
# =========================================================================================


@dataclass(frozen=True)
class ShimmyParameters:
    """Swivel wheel; only I = 0.21 m l^2 is published, the rest is our normalization."""

    m: float = 1.0  # mass of wheel + beam [kg]
    l: float = 1.0  # trail |AB| [m]
    k: float = 0.3  # lateral strut stiffness at B [N/m]  (wn = 1/s at a/l = 0.3)
    v: float = 1.0  # forward speed of B [m/s]  (w = v/l = 1/s)
    inertia_ratio: float = 0.21  # I/(m l^2) = r^2/l^2 (paper Sec. 3, Fig. 2)
    source: str = field(
        default="Schwab & Meijaard, How to linearize your non-holonomic multibody system, "
        "Sec. 3, eqs. (30)-(32), Fig. 2 (seed 000, OCR lines 15855-15960; notes "
        "seed-000-part2.md 10)",
        compare=False,
    )

    @property
    def r2(self) -> float:
        """Squared radius of gyration about G [m^2]."""
        return self.inertia_ratio * self.l**2


def shimmy_parameters() -> ShimmyParameters:
    """m = 1 kg, l = 1 m, k = 0.3 N/m, v = 1 m/s (ours) and I = 0.21 m l^2 (paper)."""
    return ShimmyParameters()


@dataclass
class ShimmyCubic:
    coefficients: np.ndarray  # (1, (1 + mu) w, wn^2, w wn^2), highest power first
    roots: np.ndarray  # sorted by imaginary part
    mu: float
    w: float
    wn: float


def _sorted(z):
    z = np.asarray(z, complex)
    return z[np.lexsort((z.real, z.imag))]


def shimmy_cubic(a_over_l: float, params: ShimmyParameters | None = None) -> ShimmyCubic:
    """Characteristic cubic (31) and its roots; a = |AG| (wheel centre to centre of mass)."""
    p = params or shimmy_parameters()
    a = a_over_l * p.l
    b = p.l - a
    mu = (a * b - p.r2) / (a**2 + p.r2)
    w = p.v / p.l
    wn = math.sqrt(p.k * p.l**2 / (p.m * (a**2 + p.r2)))
    coeffs = np.array([1.0, (1.0 + mu) * w, wn**2, w * wn**2])
    return ShimmyCubic(coeffs, _sorted(np.roots(coeffs)), mu, w, wn)


def shimmy_coefficients(a_over_l: float, params: ShimmyParameters | None = None) -> dict:
    """Linearized state-derivative coefficients, paper eq. (30)."""
    p = params or shimmy_parameters()
    a = a_over_l * p.l
    b = p.l - a
    return {"M": p.m * (a**2 + p.r2) / p.l**2, "C": p.m * p.v * (a * b - p.r2) / p.l**3,
            "K_d": p.k, "K_k": -p.m * p.v**2 * (a * b - p.r2) / p.l**3,
            "A": 1.0 / p.l, "B_d": 0.0, "B_k": -p.v / p.l, "f_d": 0.0}


def shimmy_state_matrix(a_over_l: float, params: ShimmyParameters | None = None) -> np.ndarray:
    """First-order matrix of the linearized system (29)-(30), state (du', du, dphi)."""
    c = shimmy_coefficients(a_over_l, params)
    lhs = np.diag([c["M"], 1.0, 1.0])
    stiff = np.array([[c["C"], c["K_d"], c["K_k"]],
                      [-1.0, 0.0, 0.0],
                      [-c["A"], -c["B_d"], -c["B_k"]]])
    return -np.linalg.solve(lhs, stiff)


def shimmy_nonlinear_rhs(t: float, z, a_over_l: float,
                         params: ShimmyParameters | None = None):
    """Nonlinear minimal state equations, z = (u', u, phi), from Lagrange with a multiplier.

    Unknowns (u'', phi'', lam) from the two Lagrange equations and the differentiated
    no-slip constraint ``l phi'' = u'' cos phi - u' sin(phi) phi' - v cos(phi) phi'``, with
    ``phi' = (u' cos phi - v sin phi)/l``.  Complex-safe (used for complex-step Jacobians).
    """
    p = params or shimmy_parameters()
    ud, u, phi = z
    b = p.l - a_over_l * p.l
    c, s = np.cos(phi), np.sin(phi)
    phid = (ud * c - p.v * s) / p.l
    mat = np.array([[p.m, -p.m * b * c, -c],
                    [-p.m * b * c, p.m * (b**2 + p.r2), p.l],
                    [c, -p.l, 0.0 * c]], dtype=complex if np.iscomplexobj(z) else float)
    rhs = np.array([-p.m * b * s * phid**2 - p.k * u, 0.0 * u,
                    ud * s * phid + p.v * c * phid])
    udd, _, _ = np.linalg.solve(mat, rhs)
    return np.array([udd, ud, phid])


def shimmy_lateral_force(z, a_over_l: float, params: ShimmyParameters | None = None):
    """Lateral tyre (constraint) force lam at A along n(phi) for state z = (u', u, phi)."""
    p = params or shimmy_parameters()
    ud, u, phi = z
    b = p.l - a_over_l * p.l
    c, s = np.cos(phi), np.sin(phi)
    phid = (ud * c - p.v * s) / p.l
    mat = np.array([[p.m, -p.m * b * c, -c], [-p.m * b * c, p.m * (b**2 + p.r2), p.l],
                    [c, -p.l, 0.0]])
    rhs = np.array([-p.m * b * s * phid**2 - p.k * u, 0.0, ud * s * phid + p.v * c * phid])
    return float(np.linalg.solve(mat, rhs)[2])


def shimmy_jacobian(a_over_l: float, params: ShimmyParameters | None = None) -> np.ndarray:
    """Complex-step Jacobian of shimmy_nonlinear_rhs at the steady motion z = 0."""
    h = 1e-30
    jac = np.empty((3, 3))
    for j in range(3):
        dz = np.zeros(3, complex)
        dz[j] = 1j * h
        jac[:, j] = shimmy_nonlinear_rhs(0.0, dz, a_over_l, params).imag / h
    return jac


def shimmy_eigenvalues(a_over_l: float, params: ShimmyParameters | None = None,
                       form: str = "coefficients") -> np.ndarray:
    """Eigenvalues of the first-order system: ``"coefficients"`` (30) or ``"nonlinear"``."""
    if form == "coefficients":
        mat = shimmy_state_matrix(a_over_l, params)
    elif form == "nonlinear":
        mat = shimmy_jacobian(a_over_l, params)
    else:
        raise ValueError(form)
    return _sorted(np.linalg.eigvals(mat))


def shimmy_max_real(a_over_l: float, params: ShimmyParameters | None = None) -> float:
    return float(np.max(shimmy_cubic(a_over_l, params).roots.real))


def shimmy_stability_interval(params: ShimmyParameters | None = None,
                              method: str = "analytic") -> tuple[float, float]:
    """Stable range (lo, hi) of a/l.

    ``"analytic"``: Hurwitz mu > 0, a/l = 1/2 -/+ sqrt(1/4 - I/(m l^2)).
    ``"numeric"``: brentq on the largest real part of the cubic's roots (no Hurwitz algebra).
    """
    p = params or shimmy_parameters()
    if p.v <= 0:
        raise ValueError("no stable range for v <= 0 (Hurwitz: w > 0)")
    disc = 0.25 - p.inertia_ratio
    if disc <= 0:
        raise ValueError("no stable range: I/(m l^2) >= 1/4")
    if method == "analytic":
        return 0.5 - math.sqrt(disc), 0.5 + math.sqrt(disc)
    if method == "numeric":
        f = lambda x: shimmy_max_real(x, p)  # noqa: E731
        return (brentq(f, 1e-6, 0.5, xtol=1e-14, rtol=1e-14),
                brentq(f, 0.5, 1.0 - 1e-6, xtol=1e-14, rtol=1e-14))
    raise ValueError(method)


def shimmy_mode_ratio(lam, params: ShimmyParameters | None = None):
    """Lateral displacement of the wheel centre A over that of B: w/(lam + w)."""
    p = params or shimmy_parameters()
    w = p.v / p.l
    return w / (lam + w)


def shimmy_simulate(a_over_l: float, z0, t_end: float,
                    params: ShimmyParameters | None = None, **kw):
    """Integrate the nonlinear equations (scipy solve_ivp, DOP853) from z0 = (u', u, phi)."""
    kw.setdefault("rtol", 1e-10)
    kw.setdefault("atol", 1e-12)
    return solve_ivp(shimmy_nonlinear_rhs, (0.0, t_end), np.asarray(z0, float),
                     args=(a_over_l, params), method="DOP853", **kw)
