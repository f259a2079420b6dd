"""Seed 004 (Kim, Song, Huh 2004): a quarter car in relative Cartesian coordinates, three ways.

Research notes ``/work/shared/research/seed-002-003-004.md`` §3 (equations (1)-(31) with
the errata there); §3.3: the seed's HMMWV SLA quarter car has no parameters, tyre or road,
so the model below is ours (planar front view, x lateral outward, y up, units SI).

Model
-----
Reference body 0 = ``chassis`` (a quarter of the sprung mass) with 3 planar DOF
(x, y, roll); one short-long-arm (SLA, double wishbone) corner as the subsystem:
lower control arm ``lca``, upper control arm ``uca``, ``knuckle`` (with the wheel).
Revolute joints chassis-LCA, chassis-UCA, LCA-knuckle, UCA-knuckle (a planar four-bar
relative to the chassis: 1 DOF, the wheel travel).  4 DOF in total.

=====================  ==========================================  ==========
hardpoint (design)     global position [m]                         body
=====================  ==========================================  ==========
chassis c.m.           (0.00, 0.65)                                chassis
LCA inner / outer      (0.30, 0.25) / (0.72, 0.22)                 lca
UCA inner / outer      (0.42, 0.58) / (0.70, 0.57)                 uca
wheel centre           (0.80, 0.35) (knuckle c.m.)                 knuckle
tyre contact marker    (0.80, 0.00) (knuckle-fixed)                knuckle
spring lower / upper   65 % along the LCA (0.573, 0.2305) / (0.53, 0.80)
support (other side)   ground (-0.80, -0.30) to chassis (-0.80, 0.55)
=====================  ==========================================  ==========

Masses: chassis 400 kg, J = 80 kg m^2; LCA 6 kg, UCA 3 kg (uniform bars,
J = m L^2 / 12, c.m. mid-way between the joints); knuckle + wheel 45 kg, J = 1.2 kg m^2.
Gravity 9.81 m/s^2 along -y.

Force elements (TSDA, seed (10)-(13): tension ``f = k (l - l0) + c l'``):

* suspension spring-damper LCA-chassis: k = 60 kN/m, c = 4 kN s/m (internal to the
  subsystem: in relative coordinates it does not involve the chassis coordinates);
* "rest of the car" support, ground-chassis at the other side (x = -0.8 m):
  k = 20 kN/m, c = 1.5 kN s/m (gives the chassis roll and heave a second support);
* tyre, linear, at the knuckle-fixed contact marker ``P`` against the road:
  ``F = (-k_y (P_x - x_c) - c_y P_x',  k_t (r(t) - P_y) + c_t (r'(t) - P_y'))`` with
  k_t = 250 kN/m, c_t = 200 N s/m, k_y = 150 kN/m, c_y = 200 N s/m (no lift-off: the
  tyre stays in compression for the bump below, which the tests check).

The free lengths l0 of both TSDAs, the road level ``r_base`` and the lateral tyre anchor
``x_c`` are computed (:func:`equilibrium_parameters`, Newton on the independent-coordinate
model at rest) so that the design position is the static equilibrium.  Road: a
sin^4 bump ``r(t) = r_base + H sin^4(pi (t - t0) / T)`` on [t0, t0 + T], H = 0.05 m,
t0 = 0.1 s, T = 0.3 s (a 1 m long, 5 cm high bump at 3.3 m/s), C3-smooth.  Lowest tyre
load on it: 0.62 kN of the 2.48 kN static (no lift-off; a 0.1 s bump of 2 cm already
makes the 11.8 Hz wheel hop lift the linear tyre, which would then pull).

Three solutions
---------------
(i)  ``absolute_mechanism()``: the project's engine (``Mechanism`` + ``MultibodyBlock``),
     absolute coordinates, 4 bodies x 3 coordinates, 8 constraint rows.
(ii) ``RelativeLME`` (a block): relative coordinates ``z_i0 = (r*_i0, th_i0)`` of the
     three subsystem bodies in the chassis frame, velocity transformation (planar (5),
     (6)): ``Y_i = E_i0 Y_0 + G_0 Y_i0``, ``E_i0 = [[I, E A_0 r*_i0], [0, 1]]``,
     ``G_0 = diag(A_0, 1)``, ``h_i0 = (-w_0^2 A_0 r*_i0 + 2 w_0 E A_0 r*_i0', 0)``
     (E = 90 deg rotation).  Equations (20) with the multipliers eliminated by (21)-(24):
     ``M^c Y_0' = g^c`` for the chassis, then (21) for ``Y_i0'`` and lambda;
     ``M_EE = M_0 + E^T M E``, ``M_EG = E^T M G``, ``M_GG = G^T M G``,
     ``g_E = Q_0 + E^T (Q - M h)``, ``g_G = G^T (Q - M h) + Q_rel`` (Q: absolute forces on
     the subsystem bodies, gravity and tyre; ``Q_rel``: the internal TSDA by (13)).
     Constraints (7) in chassis coordinates; gamma with Baumgarte terms
     ``- 2 alpha Phi' - beta^2 Phi`` (alpha = beta = 10 /s, as the engine run).
(iii) ``RelativeIndependent`` (a block): independent coordinate theta = LCA angle relative
     to the chassis (driving constraint Gamma = th_lca0 - theta, (25)); at every
     evaluation the 9 relative coordinates are solved from Psi(z, theta) = 0 by Newton
     (to 1e-13), ``N = -Psi_z^-1 Psi_theta``, ``p = Psi_z^-1 gamma_hat`` ((26)-(27)),
     ``M^c = M_EE - M_Eth M_thth^-1 M_Eth^T``, ``g^c = g_E - M_EG p - M_Eth M_thth^-1
     g_th`` ((28)-(31)), ``theta'' = M_thth^-1 (g_th - M_Eth^T Y_0')`` (29).

Run ``python -m bench.quarter_car_relative`` for the comparison table
(``/tmp/quarter_car_relative.md``).  Tests: ``tests/system/test_multibody_relative_coordinates.py``.
"""

from __future__ import annotations

import math
import time
from functools import cache

import numpy as np

from blocks.multibody import Mechanism, MultibodyBlock
from cosim import Block, DiagramBuilder, Simulator

G = 9.81
E90 = np.array([[0.0, -1.0], [1.0, 0.0]])

# hardpoints, global, design position [m]
CHASSIS_CM = np.array([0.0, 0.65])
LCA_IN, LCA_OUT = np.array([0.30, 0.25]), np.array([0.72, 0.22])
UCA_IN, UCA_OUT = np.array([0.42, 0.58]), np.array([0.70, 0.57])
WHEEL = np.array([0.80, 0.35])
CONTACT = np.array([0.80, 0.00])
SPRING_LCA = LCA_IN + 0.65 * (LCA_OUT - LCA_IN)
SPRING_CHASSIS = np.array([0.53, 0.80])
SUPPORT_GROUND, SUPPORT_CHASSIS = np.array([-0.80, -0.30]), np.array([-0.80, 0.55])

PARAMS = dict(m0=400.0, J0=80.0, m_lca=6.0, m_uca=3.0, m_knuckle=45.0, J_knuckle=1.2,
              k=60e3, c=4e3, k_support=20e3, c_support=1.5e3,
              k_t=250e3, c_t=200.0, k_y=150e3, c_y=200.0,
              bump_height=0.05, bump_start=0.1, bump_length=0.3)
BAUMGARTE = dict(alpha=10.0, beta=10.0)


def rot(th: float) -> np.ndarray:
    c, s = math.cos(th), math.sin(th)
    return np.array([[c, -s], [s, c]])


def _bar(a: np.ndarray, b: np.ndarray, m: float) -> dict:
    d = b - a
    L = float(np.linalg.norm(d))
    return dict(m=m, J=m * L * L / 12.0, r=(a + b) / 2, th=math.atan2(d[1], d[0]), L=L)


def bodies(p: dict = PARAMS) -> dict:
    """Design data of the three subsystem bodies: mass, inertia, c.m., angle (global)."""
    return {"lca": _bar(LCA_IN, LCA_OUT, p["m_lca"]), "uca": _bar(UCA_IN, UCA_OUT, p["m_uca"]),
            "knuckle": dict(m=p["m_knuckle"], J=p["J_knuckle"], r=WHEEL.copy(), th=0.0)}


def local(body: dict, P: np.ndarray) -> np.ndarray:
    """Body-frame coordinates of the global design point ``P``."""
    return rot(body["th"]).T @ (P - body["r"])


def road(t: float, r_base: float, p: dict = PARAMS) -> tuple[float, float]:
    """Road height under the tyre and its rate ``(r, r')``."""
    H, t0, T = p["bump_height"], p["bump_start"], p["bump_length"]
    tau = t - t0
    if tau <= 0.0 or tau >= T:
        return r_base, 0.0
    s, c = math.sin(math.pi * tau / T), math.cos(math.pi * tau / T)
    return r_base + H * s ** 4, H * 4 * s ** 3 * c * math.pi / T


def tyre_force(P: np.ndarray, V: np.ndarray, t: float, eq: dict,
               p: dict = PARAMS) -> np.ndarray:
    """Linear tyre at the contact marker (global components), module docstring."""
    r, rd = road(t, eq["r_base"], p)
    return np.array([-p["k_y"] * (P[0] - eq["x_c"]) - p["c_y"] * V[0],
                     p["k_t"] * (r - P[1]) + p["c_t"] * (rd - V[1])])


def _tsda(d: np.ndarray, dd: np.ndarray, k: float, c: float, l0: float) -> float:
    """Tension ``f/l`` of a TSDA with ``d = P_j - P_i`` and its rate (seed (10)-(11))."""
    length = float(np.linalg.norm(d))
    return (k * (length - l0) + c * float(d @ dd) / length) / length


# ------------------------------------------------------------------------------------
# (i) absolute coordinates: the project's engine
# ------------------------------------------------------------------------------------
def absolute_mechanism(eq: dict | None = None, p: dict = PARAMS) -> Mechanism:
    """The quarter car as a :class:`Mechanism` at the design position, at rest."""
    eq = eq or equilibrium_parameters()
    bd = bodies(p)
    mech = Mechanism("quarter_car_sla", dim=2, gravity=(0.0, -G))
    ch = mech.add_body("chassis", p["m0"], p["J0"], CHASSIS_CM, 0.0)
    h = {n: mech.add_body(n, b["m"], b["J"], b["r"], b["th"]) for n, b in bd.items()}
    chl = {"lca_in": LCA_IN, "uca_in": UCA_IN, "spring": SPRING_CHASSIS,
           "support": SUPPORT_CHASSIS}
    for name, P in chl.items():
        ch.marker(name, P - CHASSIS_CM)
    for name, (body, P) in {"in": ("lca", LCA_IN), "out": ("lca", LCA_OUT),
                            "spring": ("lca", SPRING_LCA)}.items():
        h[body].marker(name, local(bd[body], P))
    h["uca"].marker("in", local(bd["uca"], UCA_IN))
    h["uca"].marker("out", local(bd["uca"], UCA_OUT))
    h["knuckle"].marker("low", local(bd["knuckle"], LCA_OUT))
    h["knuckle"].marker("up", local(bd["knuckle"], UCA_OUT))
    h["knuckle"].marker("contact", local(bd["knuckle"], CONTACT))
    mech.add_joint("revolute", "lca_chassis", ch.marker("lca_in"), h["lca"].marker("in"))
    mech.add_joint("revolute", "uca_chassis", ch.marker("uca_in"), h["uca"].marker("in"))
    mech.add_joint("revolute", "lca_knuckle", h["lca"].marker("out"), h["knuckle"].marker("low"))
    mech.add_joint("revolute", "uca_knuckle", h["uca"].marker("out"), h["knuckle"].marker("up"))
    mech.add_spring_damper("spring", ch.marker("spring"), h["lca"].marker("spring"),
                           stiffness=p["k"], damping=p["c"], length0=eq["l0"])
    mech.add_spring_damper("support", mech.ground.marker("support", SUPPORT_GROUND),
                           ch.marker("support"), stiffness=p["k_support"],
                           damping=p["c_support"], length0=eq["l0_support"])
    mech.add_force("tyre", h["knuckle"].marker("contact"),
                   lambda P, V, t: tyre_force(P, V, t, eq, p))
    return mech


# ------------------------------------------------------------------------------------
# relative coordinates: shared kinematics and forces (seed §3.2, planar)
# ------------------------------------------------------------------------------------
NAMES = ("lca", "uca", "knuckle")


class RelativeModel:
    """Subsystem data in chassis coordinates and the seed's matrices at a state.

    ``z`` (9): ``(r*_i0, th_i0)`` per body in ``NAMES`` order; ``Y`` (9): their rates
    (planar: ``Y_i0 = z_i0'``).  Chassis ``(r_0, th_0)``, ``Y_0 = (r_0', w_0)``.
    """

    def __init__(self, eq: dict, p: dict = PARAMS) -> None:
        self.eq, self.p = eq, p
        bd = bodies(p)
        self.bd = bd
        self.m = np.concatenate([[b["m"], b["m"], b["J"]] for b in bd.values()])
        self.M = np.diag(self.m)
        self.M0 = np.diag([p["m0"], p["m0"], p["J0"]])
        self.z_design = np.concatenate([[*(b["r"] - CHASSIS_CM), b["th"]] for b in bd.values()])
        # revolute joints (i, s_i, j, s_j); body -1 = chassis (s in chassis frame)
        ch = lambda P: P - CHASSIS_CM  # noqa: E731
        self.joints = [(-1, ch(LCA_IN), 0, local(bd["lca"], LCA_IN)),
                       (-1, ch(UCA_IN), 1, local(bd["uca"], UCA_IN)),
                       (0, local(bd["lca"], LCA_OUT), 2, local(bd["knuckle"], LCA_OUT)),
                       (1, local(bd["uca"], UCA_OUT), 2, local(bd["knuckle"], UCA_OUT))]
        self.spring = (ch(SPRING_CHASSIS), local(bd["lca"], SPRING_LCA))
        self.s_support = ch(SUPPORT_CHASSIS)
        self.s_contact = local(bd["knuckle"], CONTACT)

    # -- constraints (7), in chassis coordinates; Phi_z, gamma = -(Phi'')|_{z''=0}
    def _point(self, b: int, s: np.ndarray, z: np.ndarray, Y: np.ndarray):
        if b < 0:
            return s, None, np.zeros(2)
        A = rot(z[3 * b + 2])
        As = A @ s
        return z[3 * b:3 * b + 2] + As, E90 @ As, -As * Y[3 * b + 2] ** 2

    def constraints(self, z: np.ndarray, Y: np.ndarray) -> tuple:
        phi, Jz, gam = np.zeros(8), np.zeros((8, 9)), np.zeros(8)
        for k, (i, si, j, sj) in enumerate(self.joints):
            rows = slice(2 * k, 2 * k + 2)
            Pi, EAi, ai = self._point(i, si, z, Y)
            Pj, EAj, aj = self._point(j, sj, z, Y)
            phi[rows] = Pj - Pi
            for b, EA, sign in ((i, EAi, -1.0), (j, EAj, 1.0)):
                if b >= 0:
                    Jz[rows, 3 * b:3 * b + 2] += sign * np.eye(2)
                    Jz[rows, 3 * b + 2] += sign * EA
            gam[rows] = -(aj - ai)
        return phi, Jz, gam

    # -- velocity transformation (5)-(6) and the seed's stacked matrices
    def transformation(self, th0: float, Y0: np.ndarray, z: np.ndarray, Y: np.ndarray):
        A0 = rot(th0)
        E = np.zeros((9, 3))
        Gm = np.zeros((9, 9))
        h = np.zeros(9)
        w0 = Y0[2]
        for b in range(3):
            rs, rsd = z[3 * b:3 * b + 2], Y[3 * b:3 * b + 2]
            Ar = A0 @ rs
            E[3 * b:3 * b + 2, :2] = np.eye(2)
            E[3 * b:3 * b + 2, 2] = E90 @ Ar
            E[3 * b + 2, 2] = 1.0
            Gm[3 * b:3 * b + 2, 3 * b:3 * b + 2] = A0
            Gm[3 * b + 2, 3 * b + 2] = 1.0
            h[3 * b:3 * b + 2] = -w0 * w0 * Ar + 2.0 * w0 * (E90 @ (A0 @ rsd))
        return E, Gm, h

    def absolute(self, r0, th0, Y0, z, Y):
        """Absolute ``(r_i, th_i)`` and velocities ``Y_i`` of the subsystem bodies (2), (5)."""
        E, Gm, _ = self.transformation(th0, Y0, z, Y)
        A0 = rot(th0)
        q = np.concatenate([[*(r0 + A0 @ z[3 * b:3 * b + 2]), th0 + z[3 * b + 2]]
                            for b in range(3)])
        return q, E @ Y0 + Gm @ Y

    # -- forces: chassis Q_0, absolute Q on the bodies, relative Q_rel (13)
    def forces(self, t, r0, th0, Y0, z, Y):
        p = self.p
        q_abs, v_abs = self.absolute(r0, th0, Y0, z, Y)
        Q = np.zeros(9)
        Q[1::3] -= self.m[0::3] * G
        # tyre at the knuckle contact marker (absolute)
        thk = q_abs[8]
        As = rot(thk) @ self.s_contact
        P = q_abs[6:8] + As
        V = v_abs[6:8] + v_abs[8] * (E90 @ As)
        F = tyre_force(P, V, t, self.eq, p)
        Q[6:8] += F
        Q[8] += (E90 @ As) @ F
        # chassis: gravity and the support TSDA (ground i -> chassis j)
        A0 = rot(th0)
        As0 = A0 @ self.s_support
        d = r0 + As0 - SUPPORT_GROUND
        dd = Y0[:2] + Y0[2] * (E90 @ As0)
        fl = _tsda(d, dd, p["k_support"], p["c_support"], self.eq["l0_support"])
        Q0 = np.array([0.0, -p["m0"] * G, 0.0])
        Q0 -= fl * np.array([*d, (E90 @ As0) @ d])
        # suspension TSDA chassis (i) -> LCA (j), relative coordinates only (13)
        sc, sl = self.spring
        As_l = rot(z[2]) @ sl
        d = z[0:2] + As_l - sc
        dd = Y[0:2] + Y[2] * (E90 @ As_l)
        fl = _tsda(d, dd, p["k"], p["c"], self.eq["l0"])
        Qrel = np.zeros(9)
        Qrel[0:3] = -fl * np.array([*d, (E90 @ As_l) @ d])
        return Q0, Q, Qrel, F

    def seed_matrices(self, t, r0, th0, Y0, z, Y):
        """``M_EE, M_EG, M_GG, g_E, g_G`` of (17)/(20) (definitions in the notes, §3.2)."""
        E, Gm, h = self.transformation(th0, Y0, z, Y)
        Q0, Q, Qrel, _ = self.forces(t, r0, th0, Y0, z, Y)
        f = Q - self.M @ h
        MEE = self.M0 + E.T @ self.M @ E
        MEG = E.T @ self.M @ Gm
        MGG = Gm.T @ self.M @ Gm
        return MEE, MEG, MGG, Q0 + E.T @ f, Gm.T @ f + Qrel


def lme_accelerations(model: RelativeModel, t, r0, th0, Y0, z, Y, alpha=0.0, beta=0.0):
    """(ii) LME: ``(Y_0', Y_i0', lambda)`` from (21)-(24) (multipliers eliminated)."""
    MEE, MEG, MGG, gE, gG = model.seed_matrices(t, r0, th0, Y0, z, Y)
    phi, Pz, gam = model.constraints(z, Y)
    gam = gam - 2.0 * alpha * (Pz @ Y) - beta ** 2 * phi
    Minv = np.linalg.inv(MGG)
    S = Pz @ Minv @ Pz.T
    Sinv = np.linalg.inv(S)
    B = MEG @ Minv
    Mc = MEE - B @ MEG.T + B @ Pz.T @ Sinv @ Pz @ Minv @ MEG.T           # (23)
    gc = gE - B @ gG + B @ Pz.T @ Sinv @ (Pz @ Minv @ gG - gam)          # (24)
    Y0d = np.linalg.solve(Mc, gc)                                        # (22)
    K = np.block([[MGG, Pz.T], [Pz, np.zeros((8, 8))]])                  # (21)
    x = np.linalg.solve(K, np.concatenate([gG - MEG.T @ Y0d, gam]))
    return Y0d, x[:9], x[9:]


class IndependentCoordinates:
    """(iii): dependent relative coordinates from Psi(z, theta) = 0 by Newton, (25)-(31)."""

    IND = 2  # theta = th_lca0

    def __init__(self, model: RelativeModel) -> None:
        self.model = model
        self.z = model.z_design.copy()
        self.newton_iterations = 0
        self.evaluations = 0

    def positions(self, theta: float, tol: float = 1e-13) -> tuple[np.ndarray, np.ndarray]:
        z = self.z.copy()
        z[self.IND] = theta
        for _ in range(20):
            phi, Pz, _ = self.model.constraints(z, np.zeros(9))
            Psi = np.concatenate([phi, [z[self.IND] - theta]])
            Psi_z = np.vstack([Pz, np.eye(9)[self.IND]])
            if np.max(np.abs(Psi)) < tol:
                break
            z = z - np.linalg.solve(Psi_z, Psi)
            self.newton_iterations += 1
        else:
            raise RuntimeError(f"Newton did not converge at theta = {theta}")
        self.z = z
        return z, Psi_z

    def state(self, theta: float, thetad: float):
        """``z, Y, N, Psi_z`` at ``(theta, theta')``: ``Y = N theta'`` (26)."""
        z, Psi_z = self.positions(theta)
        N = np.linalg.solve(Psi_z, np.eye(9)[8])  # -Psi_z^-1 Psi_theta, Psi_theta = -e_9
        return z, N * thetad, N, Psi_z

    def accelerations(self, t, r0, th0, Y0, theta, thetad):
        """``(Y_0', theta'')`` by (29)-(31)."""
        self.evaluations += 1
        z, Y, N, Psi_z = self.state(theta, thetad)
        _, _, gam = self.model.constraints(z, Y)
        p = np.linalg.solve(Psi_z, np.concatenate([gam, [0.0]]))          # (27)
        MEE, MEG, MGG, gE, gG = self.model.seed_matrices(t, r0, th0, Y0, z, Y)
        MEt = MEG @ N                                                       # (28)
        Mtt = float(N @ MGG @ N)
        gEh = gE - MEG @ p
        gt = float(N @ (gG - MGG @ p))
        Mc = MEE - np.outer(MEt, MEt) / Mtt                                 # (30)
        gc = gEh - MEt * gt / Mtt                                           # (31)
        Y0d = np.linalg.solve(Mc, gc)
        return Y0d, (gt - MEt @ Y0d) / Mtt                                  # (29)


# ------------------------------------------------------------------------------------
# equilibrium: free lengths, road level, tyre anchor
# ------------------------------------------------------------------------------------
@cache
def _equilibrium(key: tuple) -> tuple:
    p = dict(key)
    x = np.zeros(4)  # corrections: l0, l0_support, r_base, x_c
    l_s = float(np.linalg.norm(SPRING_CHASSIS - SPRING_LCA))
    l_o = float(np.linalg.norm(SUPPORT_CHASSIS - SUPPORT_GROUND))
    base = np.array([l_s, l_o, CONTACT[1], CONTACT[0]])

    def residual(x):
        eq = dict(zip(("l0", "l0_support", "r_base", "x_c"), base + x))
        ic = IndependentCoordinates(RelativeModel(eq, p))
        Y0d, thdd = ic.accelerations(-1.0, CHASSIS_CM, 0.0, np.zeros(3),
                                     ic.model.z_design[2], 0.0)
        return np.concatenate([Y0d, [thdd]])

    for _ in range(10):
        r = residual(x)
        if np.max(np.abs(r)) < 1e-12:
            break
        Jm = np.column_stack([(residual(x + 1e-6 * e) - residual(x - 1e-6 * e)) / 2e-6
                              for e in np.eye(4)])
        x = x - np.linalg.solve(Jm, r)
    return tuple(float(v) for v in base + x)


def equilibrium_parameters(p: dict = PARAMS) -> dict:
    """``l0``, ``l0_support``, ``r_base``, ``x_c`` making the design position static."""
    vals = _equilibrium(tuple(sorted(p.items())))
    return dict(zip(("l0", "l0_support", "r_base", "x_c"), vals))


# ------------------------------------------------------------------------------------
# blocks and simulation
# ------------------------------------------------------------------------------------
class RelativeLME(Block):
    """(ii) as a block: state ``[r0, th0, z (9), Y0 (3), Y (9)]``."""

    def __init__(self, name: str, eq: dict, p: dict = PARAMS, alpha: float = 10.0,
                 beta: float = 10.0) -> None:
        super().__init__(name)
        self.model = RelativeModel(eq, p)
        self.alpha, self.beta = alpha, beta
        x0 = np.concatenate([CHASSIS_CM, [0.0], self.model.z_design, np.zeros(12)])
        self.x = self.declare_continuous_state("x", x0)
        self.declare_output("x_out", lambda ctx: np.array(ctx.state(self.x)), shape=(24,),
                            depends_on=())

    def derivatives(self, ctx):
        x = ctx.state(self.x)
        r0, th0, z, Y0, Y = x[0:2], x[2], x[3:12], x[12:15], x[15:24]
        Y0d, Yd, _ = lme_accelerations(self.model, ctx.time, r0, th0, Y0, z, Y,
                                       self.alpha, self.beta)
        return np.concatenate([Y0, Y, Y0d, Yd])


class RelativeIndependent(Block):
    """(iii) as a block: state ``[r0, th0, theta, Y0 (3), theta']``."""

    def __init__(self, name: str, eq: dict, p: dict = PARAMS) -> None:
        super().__init__(name)
        self.ic = IndependentCoordinates(RelativeModel(eq, p))
        x0 = np.concatenate([CHASSIS_CM, [0.0, self.ic.model.z_design[2]], np.zeros(4)])
        self.x = self.declare_continuous_state("x", x0)
        self.declare_output("x_out", lambda ctx: np.array(ctx.state(self.x)), shape=(8,),
                            depends_on=())

    def derivatives(self, ctx):
        x = ctx.state(self.x)
        Y0d, thdd = self.ic.accelerations(ctx.time, x[0:2], x[2], x[4:7], x[3], x[7])
        return np.concatenate([x[4:7], [x[7]], Y0d, [thdd]])


def _run(block: Block, port: str, t_end: float, dt: float) -> dict:
    b = DiagramBuilder("qc")
    blk = b.add(block)
    out = blk.output(port)
    sim = Simulator(b.build(), solver="rk4", dt=dt, record=[out])
    wall = time.perf_counter()
    res = sim.run(t_end)
    return {"t": res.time, "x": res[out.path], "wall": time.perf_counter() - wall,
            "steps": sim.stats["steps"], "block": blk}


T_END = 1.0


def simulate(method: str, t_end: float = T_END, dt: float = 1e-3, **options) -> dict:
    """Run one method; returns ``t`` and the common outputs (absolute, global).

    ``y`` (n x 12): absolute ``(x, y, theta)`` of chassis, LCA, UCA, knuckle (the engine's
    coordinate layout); ``theta_lca`` the LCA angle relative to the chassis.
    """
    eq = equilibrium_parameters()
    if method == "absolute":
        form = options.pop("formulation", "lagrange")
        opts = dict(BAUMGARTE) if form == "lagrange" else {"project_every_s": dt}
        opts.update(options)
        b = DiagramBuilder("qc")
        blk = b.add(MultibodyBlock("mech", absolute_mechanism(eq), form, **opts))
        pq, pv = blk.output("q"), blk.output("v")
        sim = Simulator(b.build(), solver="rk4", dt=dt, record=[pq, pv])
        wall = time.perf_counter()
        res = sim.run(t_end)
        y = res[pq.path]
        return {"t": res.time, "y": y, "v": res[pv.path], "theta_lca": y[:, 5] - y[:, 2],
                "wall": time.perf_counter() - wall, "steps": sim.stats["steps"],
                "mech": blk.mech}
    if method == "lme":
        run = _run(RelativeLME("lme", eq, **options), "x_out", t_end, dt)
        model = run["block"].model
        ys = []
        for x in run["x"]:
            q, _ = model.absolute(x[0:2], x[2], x[12:15], x[3:12], x[15:24])
            ys.append(np.concatenate([x[0:3], q]))
        run["y"] = np.array(ys)
        run["theta_lca"] = run["x"][:, 5]
        run["constraint"] = np.array([np.max(np.abs(model.constraints(x[3:12], x[15:24])[0]))
                                      for x in run["x"]])
        return run
    if method == "independent":
        run = _run(RelativeIndependent("ic", eq), "x_out", t_end, dt)
        ic = IndependentCoordinates(run["block"].ic.model)
        ys = []
        for x in run["x"]:
            z, Y, _, _ = ic.state(x[3], x[7])
            q, _ = ic.model.absolute(x[0:2], x[2], x[4:7], z, Y)
            ys.append(np.concatenate([x[0:3], q]))
        run["y"] = np.array(ys)
        run["theta_lca"] = run["x"][:, 3]
        run["newton_per_eval"] = (run["block"].ic.newton_iterations
                                  / max(run["block"].ic.evaluations, 1))
        return run
    raise ValueError(method)


def compare(dt: float = 1e-3, t_end: float = T_END) -> dict:
    runs = {m: simulate(m, t_end, dt) for m in ("absolute", "lme", "independent")}
    ref = runs["independent"]
    out = {}
    for m, r in runs.items():
        out[m] = {"max_dy": float(np.max(np.abs(r["y"] - ref["y"]))),
                  "wall": r["wall"], "us_per_step": 1e6 * r["wall"] / max(r["steps"], 1)}
    return {"runs": runs, "diff": out}


def main() -> None:
    eq = equilibrium_parameters()
    lines = ["Quarter car (SLA) three ways, RK4, 1 s; max |difference| of the absolute "
             "coordinates of all 4 bodies against the independent-coordinate run", "",
             f"equilibrium: {', '.join(f'{k} = {v:.6f}' for k, v in eq.items())}", "",
             "| dt | method | max diff vs (iii) | wall us/step |", "|---|---|---|---|"]
    for dt in (2e-3, 1e-3, 5e-4):
        c = compare(dt)
        for m, d in c["diff"].items():
            lines.append(f"| {dt:g} | {m} | {d['max_dy']:.2e} | {d['us_per_step']:.0f} |")
    text = "\n".join(lines)
    print(text)
    with open("/tmp/quarter_car_relative.md", "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
