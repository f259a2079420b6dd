"""Validation models for the multibody library (``blocks.multibody``) and their references.

Run ``python -m bench.multibody_models`` for the formulation table (constraint drift,
energy error, wall time per step for every formulation and mechanism); it is printed and
written to ``/tmp/multibody_table.md``.  The tests are
``tests/system/test_multibody_mechanisms.py``.

Models (every builder returns a :class:`~blocks.multibody.Mechanism`; the reference
numbers are module constants with their source):

``slider_crank()``  planar in-line crank-slider, the topology of Chiou (1990) example E1
    (research notes ``/work/shared/research/seed-002-003-004.md`` §1.3 E1):
    coordinates crank angle theta, rod angle phi and rod c.m. (x, y); the crank's c.m. is
    on its ground pivot (``M = diag(j1, j2, m, m)`` in the seed), the slider is massless
    (a point-on-line constraint ``(l - l1) sin phi + y = 0``: the rod end B stays on
    y = 0), initial state "rod horizontal".  The seed gives no numbers (r, l, l1, j1, j2,
    m, torque are all missing, §1.3 E1 "Missing"), so the parameters are ours:
    r = 0.15 m, l = 0.5 m, l1 = 0.25 m, m = 2 kg, j2 = m l^2/12, j1 = 0.05 kg m^2
    (crank with flywheel), gravity 9.81 m/s^2 along -y, no torque (conservative),
    theta(0) = phi(0) = 0 (top dead centre), theta'(0) = 10 rad/s.  Kinetic energy
    3.25 J exceeds the 1.47 J needed to lift the rod c.m. over theta = 90 deg, so the
    crank turns full revolutions through both dead centres.

``four_bar()``  planar Grashof crank-rocker (not in the seed: its "four-bar", E4, is a
    spatial chain of spherical joints with no geometry), our parameters: ground
    a0 = 0.4 m, crank a1 = 0.1 m, coupler a2 = 0.35 m, rocker a3 = 0.3 m
    (s + l = 0.5 <= p + q = 0.65, shortest link = crank, so the crank turns fully;
    transmission angle between 54 and 100 deg, no singular position).  Uniform bars with
    the c.m. at mid-length: m1 = 0.5 kg with J1 = 0.02 kg m^2 (crank with flywheel),
    m2 = 1.0 kg, m3 = 0.8 kg, J = m L^2/12; gravity along -y; crank at 60 deg, 10 rad/s,
    coupler joint on the upper (open) branch.  Four revolute joints.

``spatial_loop()``  the seed-003 closed spatial loop (notes §2, "Seed 003 - spatial
    multibody loop via kinematic differentials"): ground -R1(u1)- crank -S1- coupler
    -R4(u4)- link 3 -R3(u3)- Cardan cross -R2(u2 = e_z)- ground, 1 DOF, seven joint
    coordinates.  Geometry and mass data are the reviewer's reference case of §2.3
    (a = 0.3 m, b = 0.4 m, alpha = 20 deg, r1 = 0.1 m, r3 = 0.35 m, r4 = 0.3 m; coupler a
    slender rod m = 2 kg, H_S = m r4^2/12 (I - e e^T), c.m. at kappa = 0.5; g = 9.81 along
    -z), frame and joint axes as reconstructed in §2.2.  Only the coupler carries mass
    in the seed; the library refuses zero mass/inertia, so the crank, the cross and
    link 3 get 1e-6 kg and 1e-9 kg m^2 and the rod gets 1e-9 kg m^2 about its own axis
    (about 1e-7 of the generalized mass M(b1) = 7.86e-3 kg m^2, far below the 4-5
    printed digits of the references).  Initial state b1 = 1 rad, b1' = 0, with b2, b3,
    b4 from the closed-form position solution (4.45)-(4.59).

``free_body()``  one asymmetric spatial rigid body, no joints and no gravity, principal
    moments (0.1, 0.2, 0.3) kg m^2, body axes rotated by 0.7 rad about (1, 2, 3), spinning
    at w = (1.0, 0.5, 2.0) rad/s (global), c.m. moving at (0.3, -0.2, 0.1) m/s.  Exact
    invariants: kinetic energy and the angular momentum vector (global components).

Seed-003 references (notes §2.3, reviewer-generated with an RK4 minimal-coordinate
integration at dt = 1e-3 and 5e-4 agreeing to all printed digits; not seed results):
``LOOP_B1_REF`` b1(t), ``LOOP_TURNING_REF`` the turning points (b1 = 2 pi - 1 at
0.395 s and b1 = 1.0 at 0.790 s, so the oscillation period is 0.790 s),
``LOOP_ANGLES_REF`` the joint angles of the position solution, ``LOOP_M_Q_REF`` the
generalized mass and force at b1 = 1, ``LOOP_C1_C2_REF`` the constants of (4.45-46).
``loop_period_reference()`` recomputes the period independently by energy quadrature on
the closed-form kinematics: 0.789401 s (the notes' 0.790 s is twice the rounded 0.395 s;
the unrounded half period is 0.394700 s).
"""

from __future__ import annotations

import math
import os
import time
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from blocks.multibody import Mechanism, MultibodyBlock, driver  # noqa: E402
from cosim import DiagramBuilder, Simulator  # noqa: E402

G = 9.81
DEG20 = math.radians(20.0)
DEG60 = math.radians(60.0)

# ----------------------------------------------------------------------------------------
# (a) slider-crank (Chiou 1990, E1 topology; our parameters)
# ----------------------------------------------------------------------------------------
SLIDER_CRANK = dict(r=0.15, l=0.5, l1=0.25, m=2.0, j1=0.05, w0=10.0)


def slider_crank(r: float = 0.15, l: float = 0.5, l1: float = 0.25, m: float = 2.0,
                 j1: float = 0.05, w0: float = 10.0, crank_mass: float = 1.0) -> Mechanism:
    """Crank-slider of notes §1.3 E1; crank angle is ``q[2]`` (the crank body's angle).

    Bodies: ``crank`` (c.m. on the ground pivot O, marker ``A`` = crank pin), ``rod``
    (marker ``A`` at -l1, ``B`` = slider end at l - l1).  Joints: revolute ``O``
    (ground-crank), revolute ``A`` (crank-rod), ``slider`` = rod end B on the line y = 0
    (a ``slide_driver`` with f = 0 along a ground marker whose x axis is global y:
    Chiou's massless slider, third row of (7.2.4)).  Starts at top dead centre
    (theta = phi = 0) with consistent velocities for ``theta' = w0``.
    """
    mech = Mechanism("slider_crank", dim=2, gravity=(0.0, -G))
    j2 = m * l * l / 12.0
    w_rod = -r * w0 / l                      # B has zero velocity at dead centre
    crank = mech.add_body("crank", crank_mass, j1, (0.0, 0.0), 0.0, velocity=(0.0, 0.0),
                          angular_velocity=w0)
    rod = mech.add_body("rod", m, j2, (r + l1, 0.0), 0.0,
                        velocity=(0.0, -(l - l1) * w_rod), angular_velocity=w_rod)
    crank.marker("O", (0.0, 0.0))
    crank.marker("A", (r, 0.0))
    rod.marker("A", (-l1, 0.0))
    rod.marker("B", (l - l1, 0.0))
    mech.add_joint("revolute", "O", mech.ground.marker("O"), crank.marker("O"))
    mech.add_joint("revolute", "A", crank.marker("A"), rod.marker("A"))
    line = mech.ground.marker("line", (0.0, 0.0), math.pi / 2)  # x axis = global y
    mech.add_joint("slide_driver", "slider", line, rod.marker("B"), fn=driver(0.0))
    return mech


def slider_crank_reference(t: np.ndarray, r: float = 0.15, l: float = 0.5, l1: float = 0.25,
                           m: float = 2.0, j1: float = 0.05, w0: float = 10.0) -> np.ndarray:
    """Crank angle theta(t) of :func:`slider_crank` from the 1-DOF Lagrange equation.

    Independent of the library: closed-form kinematics with k = r/l,
    D = sqrt(1 - k^2 sin^2 theta), phi = -asin(k sin theta) (slider on y = 0, to the
    right of the crank), rod c.m. c = r (cos th, sin th) + l1 (cos phi, sin phi) and

        (j1 + m c_th.c_th + j2 phi_th^2) th'' + (m c_th.c_thth + j2 phi_th phi_thth) th'^2
            + m g c_th,y = 0,

    phi_th = -k cos th / D, phi_thth = k sin th / D - k^3 sin th cos^2 th / D^3;
    integrated by ``scipy.integrate.solve_ivp`` (DOP853, rtol 1e-12, atol 1e-12).
    """
    from scipy.integrate import solve_ivp
    j2, k = m * l * l / 12.0, r / l

    def rhs(_t, y):
        th, thd = y
        s, c = math.sin(th), math.cos(th)
        D = math.sqrt(1.0 - k * k * s * s)
        ph = -math.asin(k * s)
        ph1 = -k * c / D
        ph2 = k * s / D - k ** 3 * s * c * c / D ** 3
        sp, cp = math.sin(ph), math.cos(ph)
        c1 = np.array([-r * s - l1 * sp * ph1, r * c + l1 * cp * ph1])
        c2 = np.array([-r * c - l1 * cp * ph1 ** 2 - l1 * sp * ph2,
                       -r * s - l1 * sp * ph1 ** 2 + l1 * cp * ph2])
        Mth = j1 + m * c1 @ c1 + j2 * ph1 * ph1
        return [thd, -((m * c1 @ c2 + j2 * ph1 * ph2) * thd * thd + m * G * c1[1]) / Mth]

    sol = solve_ivp(rhs, (0.0, float(t[-1])), [0.0, w0], method="DOP853", t_eval=t,
                    rtol=1e-12, atol=1e-12)
    return sol.y[0]


# ----------------------------------------------------------------------------------------
# (b) four-bar (our parameters)
# ----------------------------------------------------------------------------------------
FOUR_BAR = dict(a0=0.4, a1=0.1, a2=0.35, a3=0.3, m1=0.5, J1=0.02, m2=1.0, m3=0.8,
                theta0=math.radians(60.0), w0=10.0)


def _circle_intersection(p0, r0, p1, r1, upper=True):
    d = np.linalg.norm(p1 - p0)
    a = (r0 * r0 - r1 * r1 + d * d) / (2 * d)
    h = math.sqrt(r0 * r0 - a * a)
    e = (p1 - p0) / d
    n = np.array([-e[1], e[0]])
    return p0 + a * e + (h if upper else -h) * n


def four_bar(a0=0.4, a1=0.1, a2=0.35, a3=0.3, m1=0.5, J1=0.02, m2=1.0, m3=0.8,
             theta0=DEG60, w0=10.0, g=G) -> Mechanism:
    """Planar crank-rocker; crank angle is ``q[2]``.  Consistent initial state in closed form;
    ``g``: gravity in the model's units of length per s^2.

    Positions: crank tip B on the circle about A0 = 0, coupler/rocker joint C the upper
    intersection of |C - B| = a2 and |C - D0| = a3 (D0 = (a0, 0)).  Velocities: w1 = w0,
    and w2, w3 from v_B + w2 E (C - B) = w3 E (C - D0) (E = 90 deg rotation).
    """
    E = np.array([[0.0, -1.0], [1.0, 0.0]])
    A0, D0 = np.zeros(2), np.array([a0, 0.0])
    B = a1 * np.array([math.cos(theta0), math.sin(theta0)])
    C = _circle_intersection(B, a2, D0, a3, upper=True)
    th2 = math.atan2(*(C - B)[::-1])
    th3 = math.atan2(*(C - D0)[::-1])
    vB = w0 * E @ (B - A0)
    w2, w3 = np.linalg.solve(np.column_stack([E @ (C - B), -E @ (C - D0)]), -vB)
    c1, c2, c3 = (A0 + B) / 2, (B + C) / 2, (D0 + C) / 2
    mech = Mechanism("four_bar", dim=2, gravity=(0.0, -g))
    crank = mech.add_body("crank", m1, J1, c1, theta0, velocity=w0 * E @ (c1 - A0),
                          angular_velocity=w0)
    coupler = mech.add_body("coupler", m2, m2 * a2 * a2 / 12, c2, th2,
                            velocity=vB + w2 * E @ (c2 - B), angular_velocity=w2)
    rocker = mech.add_body("rocker", m3, m3 * a3 * a3 / 12, c3, th3,
                           velocity=w3 * E @ (c3 - D0), angular_velocity=w3)
    for h, L in ((crank, a1), (coupler, a2), (rocker, a3)):
        h.marker("P", (-L / 2, 0.0))
        h.marker("Q", (L / 2, 0.0))
    mech.add_joint("revolute", "A", mech.ground.marker("A", (0.0, 0.0)), crank.marker("P"))
    mech.add_joint("revolute", "B", crank.marker("Q"), coupler.marker("P"))
    mech.add_joint("revolute", "C", coupler.marker("Q"), rocker.marker("Q"))
    mech.add_joint("revolute", "D", mech.ground.marker("D", (a0, 0.0)), rocker.marker("P"))
    return mech


def scaled_four_bar(k: float, compiled: bool | None = None, w0: float = 1.0) -> Mechanism:
    """Issue 32's regular four-bar (crank : coupler : rocker : ground = 1 : 2.5 : 2 : 3,
    crank at 60 deg turning at ``w0`` rad/s, slender-bar inertias) with a crank of ``k``
    length units and gravity in those units: the same mechanism in m (``k = 1``), mm (1e3)
    or km (1e-3)."""
    a1, a2, a3, a0 = k, 2.5 * k, 2.0 * k, 3.0 * k
    mech = four_bar(a0=a0, a1=a1, a2=a2, a3=a3, m1=1.0, J1=a1 * a1 / 12, m2=1.0, m3=1.0,
                    theta0=DEG60, w0=w0, g=G * k)
    mech.compiled = compiled
    return mech


# ----------------------------------------------------------------------------------------
# (c) seed-003 spatial loop (notes §2.2 geometry, §2.3 reference case)
# ----------------------------------------------------------------------------------------
LOOP = dict(a=0.3, b=0.4, alpha=DEG20, r1=0.1, r3=0.35, r4=0.3, m=2.0,
            kappa=0.5, tiny_mass=1e-6, tiny_inertia=1e-9)
# notes §2.3: constants of (4.45-46)
LOOP_C1_C2_REF = (0.2684836, 0.1646897)
# notes §2.3: joint angles (b2, b3, b4) on the branch sin b4 > 0, by b1 [rad]
LOOP_ANGLES_REF = {0.0: (0.0, 0.346482, 1.674778), 1.0: (0.210226, 0.366030, 1.551168),
                   math.pi / 2: (0.260021, 0.395999, 1.405353),
                   math.pi: (0.0, 0.483211, 1.122786)}
# notes §2.3: at b1 = 1, M = 7.8576e-3 kg m^2 and Q = 0.82526 N m (so b1'' = Q/M at rest)
LOOP_M_Q_REF = (7.8576e-3, 0.82526)
# notes §2.3: free motion from b1(0) = 1, b1'(0) = 0 (RK4, dt = 1e-3 and 5e-4)
LOOP_B1_REF = {0.25: 4.0342, 0.5: 4.64089, 1.0: 3.36345, 1.5: 1.34615, 2.0: 5.24605}
# notes §2.3: turning points (t [s], b1 [rad]); period 0.790 s
LOOP_TURNING_REF = ((0.395, 2 * math.pi - 1.0), (0.790, 1.0))
LOOP_PERIOD_REF = 0.790


def loop_axes(alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``e1, e2, u1`` of notes §2.2 (crank plane and the R1 axis)."""
    e1 = np.array([0.0, -math.sin(alpha), math.cos(alpha)])
    e2 = np.array([1.0, 0.0, 0.0])
    return e1, e2, np.cross(e1, e2)


def loop_r0(a: float, b: float, alpha: float) -> np.ndarray:
    """Centre of R1 relative to the Cardan centre C (notes §2.2)."""
    return np.array([0.0, -b * math.cos(alpha), a - b * math.sin(alpha)])


def loop_position(b1: float, a=0.3, b=0.4, alpha=DEG20, r1=0.1, r3=0.35,
                  r4=0.3) -> dict:
    """Closed-form position solution (notes §2.2, (4.45)-(4.59)) on the branch sin b4 > 0.

    Returns the angles ``b2, b3, b4`` and the vectors ``r1, d, u3, r3, r4`` (frame 0).
    """
    sa, ca = math.sin(alpha), math.cos(alpha)
    r0sq = a * a - 2 * a * b * sa + b * b
    C1 = r1 * a * ca / (r3 * r4)
    C2 = (r3 * r3 + r4 * r4 - r0sq - r1 * r1) / (2 * r3 * r4)
    b4 = math.acos(-C1 * math.cos(b1) + C2)
    K1 = math.hypot(b * ca + r1 * math.cos(b1) * sa, r1 * math.sin(b1))
    cb2 = (b * ca + r1 * math.cos(b1) * sa) / K1
    sb2 = r1 * math.sin(b1) / K1
    b2 = math.atan2(sb2, cb2)
    K2 = r4 * r4 + r3 * r3 - 2 * r3 * r4 * math.cos(b4)
    dz = a - b * sa + r1 * math.cos(b1) * ca
    K3 = (r1 * math.sin(b1) * (r4 * math.cos(b4) - r3) + r4 * math.sin(b4) * dz * sb2) / K2
    K4 = ((r4 * math.cos(b4) - r3) * (b * ca + r1 * math.cos(b1) * sa)
          + r4 * math.sin(b4) * dz * cb2) / K2
    K5 = ((r3 - r4 * math.cos(b4)) * dz
          + r4 * math.sin(b4) * (b * ca * cb2 + r1 * math.sin(b1) * sb2
                                 + r1 * math.cos(b1) * cb2 * sa)) / K2
    b3 = math.atan2(-(K3 * sb2 + K4 * cb2), K5)
    e1, e2, _ = loop_axes(alpha)
    r1v = r1 * (math.cos(b1) * e1 + math.sin(b1) * e2)
    d = loop_r0(a, b, alpha) + r1v
    ez = np.array([0.0, 0.0, 1.0])
    u3 = np.array([cb2, sb2, 0.0])
    h = np.cross(u3, ez)
    r3v = r3 * (math.sin(b3) * h + math.cos(b3) * ez)
    r4v = r4 * (math.sin(b4 - b3) * h - math.cos(b4 - b3) * ez)
    return {"b2": b2, "b3": b3, "b4": b4, "r1": r1v, "d": d, "u3": u3, "r3": r3v,
            "r4": r4v, "C1": C1, "C2": C2}


def _frame(x, z) -> np.ndarray:
    """Rotation matrix with columns x, z x x, z (x, z orthonormal)."""
    x = np.asarray(x, float) / np.linalg.norm(x)
    z = np.asarray(z, float) / np.linalg.norm(z)
    return np.column_stack([x, np.cross(z, x), z])


def spatial_loop(b1: float = 1.0, a=0.3, b=0.4, alpha=DEG20, r1=0.1, r3=0.35,
                 r4=0.3, m=2.0, kappa=0.5, tiny_mass=1e-6, tiny_inertia=1e-9) -> Mechanism:
    """The seed-003 loop (notes §2.2/§2.3), assembled at ``b1`` at rest.

    Bodies (frames: x along the link, z along its joint axis): ``crank`` (link 1, R1 to
    S1, z = u1), ``cross`` (link 2 at C, x = u3, z = e_z), ``link3`` (C to R4, z = u3),
    ``coupler`` (link 4, R4 to S1, z = u4 = u3; the mass carrier, c.m. at kappa from R4).
    Joints: revolute ``R1`` (ground-crank), ``R2`` (ground-cross), ``R3`` (cross-link3),
    ``R4`` (link3-coupler), spherical ``S1`` (coupler-crank).
    """
    pos = loop_position(b1, a, b, alpha, r1, r3, r4)
    e1, e2, u1 = loop_axes(alpha)
    r0 = loop_r0(a, b, alpha)
    ez = np.array([0.0, 0.0, 1.0])
    u3, r1v, r3v, r4v, d = pos["u3"], pos["r1"], pos["r3"], pos["r4"], pos["d"]
    mech = Mechanism("seed003_loop", dim=3, gravity=(0.0, 0.0, -G))
    tiny = (tiny_inertia,) * 3
    crank = mech.add_body("crank", tiny_mass, tiny, r0 + r1v / 2, _frame(r1v, u1))
    cross = mech.add_body("cross", tiny_mass, tiny, np.zeros(3), _frame(u3, ez))
    link3 = mech.add_body("link3", tiny_mass, tiny, r3v / 2, _frame(r3v, u3))
    J = m * r4 * r4 / 12.0
    coupler = mech.add_body("coupler", m, (tiny_inertia, J, J), r3v + kappa * r4v,
                            _frame(r4v, u3))
    g = mech.ground
    mech.add_joint("revolute", "R1", g.marker("R1", r0, _frame(e1, u1)),
                   crank.marker("R1", (-r1 / 2, 0.0, 0.0)))
    mech.add_joint("revolute", "R2", g.marker("R2", (0.0, 0.0, 0.0)),
                   cross.marker("R2", (0.0, 0.0, 0.0)))
    # cross frame: x = u3, so a marker with z axis = body x: columns (y, z, x)
    mech.add_joint("revolute", "R3",
                   cross.marker("R3", (0.0, 0.0, 0.0),
                                np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])),
                   link3.marker("R3", (-r3 / 2, 0.0, 0.0)))
    mech.add_joint("revolute", "R4", link3.marker("R4", (r3 / 2, 0.0, 0.0)),
                   coupler.marker("R4", (-kappa * r4, 0.0, 0.0)))
    mech.add_joint("spherical", "S1", coupler.marker("S1", ((1 - kappa) * r4, 0.0, 0.0)),
                   crank.marker("S1", (r1 / 2, 0.0, 0.0)))
    assert np.allclose(r3v + r4v, d, atol=1e-12), "closed-form position solution inconsistent"
    return mech


def loop_b1(mech: Mechanism, q: np.ndarray) -> np.ndarray:
    """Crank angle b1 in [0, 2 pi) from the crank's S1 marker: angle of (S1 - r0) in (e1, e2)."""
    e1, e2, _ = loop_axes(LOOP["alpha"])
    r0 = loop_r0(LOOP["a"], LOOP["b"], LOOP["alpha"])
    P = marker_positions(mech, "crank", "S1", q) - r0
    return np.mod(np.arctan2(P @ e2, P @ e1), 2 * math.pi)


def loop_b4(mech: Mechanism, q: np.ndarray) -> np.ndarray:
    """b4 from ``r3 . r4 = -r3 r4 cos b4`` (notes (4.44)), link vectors from the markers."""
    R4 = marker_positions(mech, "link3", "R4", q)
    S1 = marker_positions(mech, "coupler", "S1", q)
    r3v, r4v = R4, S1 - R4  # link 3 starts at C = origin
    c = -np.einsum("ij,ij->i", r3v, r4v) / (np.linalg.norm(r3v, axis=1)
                                            * np.linalg.norm(r4v, axis=1))
    return np.arccos(np.clip(c, -1, 1))


def loop_b1_rate(mech: Mechanism, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """b1' = u1 . (crank angular velocity, global) along a trajectory."""
    _, _, u1 = loop_axes(LOOP["alpha"])
    c = mech.bodies["crank"]
    q, v = np.atleast_2d(q), np.atleast_2d(v)
    return np.array([u1 @ _quat_matrix(qk[c.iq + 3:c.iq + 7]) @ vk[c.iv + 3:c.iv + 6]
                     for qk, vk in zip(q, v)])


def _loop_coupler(b1: float) -> tuple[np.ndarray, np.ndarray]:
    """Coupler frame (x along r4, z = u3) and c.m. position from the closed form."""
    p = loop_position(b1, LOOP["a"], LOOP["b"], LOOP["alpha"], LOOP["r1"], LOOP["r3"],
                      LOOP["r4"])
    e = p["r4"] / np.linalg.norm(p["r4"])
    return np.column_stack([e, np.cross(p["u3"], e), p["u3"]]), p["r3"] + LOOP["kappa"] * p["r4"]


def loop_mass_and_potential(b1: float, h: float = 1e-6) -> tuple[float, float]:
    """Generalized mass M(b1) (4.86) and potential V(b1) = m g s_z of the seed-003 loop.

    From the closed-form positions only (no library code): the c.m. velocity and the
    coupler's angular velocity for b1' = 1 by central differences (step h) of
    :func:`loop_position`; H_S = m r4^2/12 (I - e e^T) (notes §2.3, massless links).
    """
    m, r4 = LOOP["m"], LOOP["r4"]
    R, s = _loop_coupler(b1)
    Rp, sp = _loop_coupler(b1 + h)
    Rm, sm = _loop_coupler(b1 - h)
    ds = (sp - sm) / (2 * h)
    W = R.T @ (Rp - Rm) / (2 * h)  # body-frame skew matrix of the unit-rate angular velocity
    w = np.array([W[2, 1], W[0, 2], W[1, 0]])
    H = np.diag([0.0, m * r4 * r4 / 12, m * r4 * r4 / 12])
    return float(m * ds @ ds + w @ H @ w), float(m * G * s[2])


def loop_period_reference(b1_0: float = 1.0) -> float:
    """Oscillation period from b1_0 at rest, by energy quadrature (independent of the notes).

    T = 2 int_{b1_0}^{2 pi - b1_0} sqrt(M(b1) / (2 (V(b1_0) - V(b1)))) db1 (the turning
    points are b1_0 and 2 pi - b1_0 by the loop's mirror symmetry), with
    b1 = pi - (pi - b1_0) cos u to remove the inverse square-root end singularities;
    ``scipy.integrate.quad`` to 1e-11 relative.  Gives 0.789401 s for b1_0 = 1; the notes
    (§2.3) print turning points at 0.395 s and 0.790 s, i.e. 0.3947 s rounded and twice
    the rounded value.
    """
    from scipy.integrate import quad
    A = math.pi - b1_0
    V0 = loop_mass_and_potential(b1_0)[1]

    def f(u):
        M, V = loop_mass_and_potential(math.pi - A * math.cos(u))
        return math.sqrt(M / (2.0 * (V0 - V))) * A * math.sin(u)

    half, _ = quad(f, 0.0, math.pi, epsabs=1e-12, epsrel=1e-11, limit=200)
    return 2.0 * half


# ----------------------------------------------------------------------------------------
# (d) free asymmetric body
# ----------------------------------------------------------------------------------------
FREE_BODY = dict(mass=1.5, inertia=(0.1, 0.2, 0.3), axis=(1.0, 2.0, 3.0), angle=0.7,
                 w=(1.0, 0.5, 2.0), v=(0.3, -0.2, 0.1))


def free_body(mass=1.5, inertia=(0.1, 0.2, 0.3), axis=(1.0, 2.0, 3.0), angle=0.7,
              w=(1.0, 0.5, 2.0), v=(0.3, -0.2, 0.1)) -> Mechanism:
    """Torque-free asymmetric rigid body (no joints, no gravity)."""
    mech = Mechanism("free_body", dim=3, gravity=None)
    mech.add_body("body", mass, inertia, (0.0, 0.0, 0.0), (axis, angle), velocity=v,
                  angular_velocity=w)
    return mech


# ----------------------------------------------------------------------------------------
# invariants and helpers (computed here from q, v: independent of the engine's EOM code)
# ----------------------------------------------------------------------------------------
def _quat_matrix(p: np.ndarray) -> np.ndarray:
    e0, e1, e2, e3 = p / np.linalg.norm(p)
    e = np.array([e1, e2, e3])
    et = np.array([[0, -e3, e2], [e3, 0, -e1], [-e2, e1, 0]])
    return (2 * e0 * e0 - 1) * np.eye(3) + 2 * (np.outer(e, e) + e0 * et)


def _rot(body, qb: np.ndarray) -> np.ndarray:
    if body.kind == "planar":
        c, s = math.cos(qb[2]), math.sin(qb[2])
        return np.array([[c, -s], [s, c]])
    if body.kind == "spatial":
        return _quat_matrix(qb[3:7])
    return np.eye(body.dim)


def marker_positions(mech: Mechanism, body: str, marker: str, q: np.ndarray) -> np.ndarray:
    """Global positions of marker ``body.marker`` along a trajectory ``q`` (n x nq)."""
    mech.finalize()
    b = mech.bodies[body]
    s = mech.markers[(body, marker)].s
    q = np.atleast_2d(q)
    out = np.empty((q.shape[0], mech.dim))
    for k, qk in enumerate(q):
        qb = qk[b.iq:b.iq + b.nq]
        out[k] = qb[:mech.dim] + _rot(b, qb) @ s
    return out


def kinetic_energy(mech: Mechanism, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Kinetic energy along (q, v) (rows are samples)."""
    mech.finalize()
    v = np.atleast_2d(v)
    out = np.zeros(v.shape[0])
    for b in mech.moving:
        rd = v[:, b.iv:b.iv + mech.dim]
        out += 0.5 * b.mass * np.einsum("ij,ij->i", rd, rd)
        if b.kind == "planar":
            out += 0.5 * b.inertia * v[:, b.iv + 2] ** 2
        elif b.kind == "spatial":
            w = v[:, b.iv + 3:b.iv + 6]
            out += 0.5 * np.einsum("ij,jk,ik->i", w, b.inertia, w)
    return out


def energy(mech: Mechanism, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Total mechanical energy (kinetic + gravity + linear springs) along (q, v)."""
    mech.finalize()
    q = np.atleast_2d(q)
    out = kinetic_energy(mech, q, v)
    for b in mech.moving:
        out -= b.mass * (q[:, b.iq:b.iq + mech.dim] @ mech.gravity)
    for e in mech.elements.values():
        if e.force is None and e.k:
            P = marker_positions(mech, e.mi.body.name, e.mi.name, q) if \
                e.mi.body.kind != "ground" else e.mi.s
            Q = marker_positions(mech, e.mj.body.name, e.mj.name, q)
            out += 0.5 * e.k * (np.linalg.norm(Q - P, axis=1) - e.l0) ** 2
    return out


def energy_error(mech: Mechanism, q: np.ndarray, v: np.ndarray) -> float:
    """max |E - E(0)| / max kinetic energy (independent of the potential's datum)."""
    E = energy(mech, q, v)
    return float(np.max(np.abs(E - E[0])) / np.max(kinetic_energy(mech, q, v)))


def angular_momentum(mech: Mechanism, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Angular momentum about the global origin, global components (n x 3)."""
    mech.finalize()
    q, v = np.atleast_2d(q), np.atleast_2d(v)
    out = np.zeros((q.shape[0], 3))
    for b in mech.moving:
        if b.kind != "spatial":
            raise ValueError("angular_momentum(): spatial bodies only")
        for k in range(q.shape[0]):
            A = _quat_matrix(q[k, b.iq + 3:b.iq + 7])
            r, rd = q[k, b.iq:b.iq + 3], v[k, b.iv:b.iv + 3]
            out[k] += A @ (b.inertia @ v[k, b.iv + 3:b.iv + 6]) + b.mass * np.cross(r, rd)
    return out


def constraint_residual(mech: Mechanism, t: np.ndarray, q: np.ndarray) -> np.ndarray:
    """max |Phi| at every sample."""
    z = np.zeros(mech.nv)
    return np.array([np.max(np.abs(mech.constraints(qk, z, float(tk))[0]), initial=0.0)
                     for tk, qk in zip(t, q)])


# Formulations compared (constants: Baumgarte alpha = beta = 10 /s, a critically damped
# constraint error ~ 0.1 s time constant, far slower than 1/dt; penalty 1e10 (the
# formulation's default since its range-space solve; it was 1e7) and the
# augmented Lagrangian 1e5 with 3 iterations as in the library's pendulum check).
def formulations(dt: float) -> dict[str, tuple[str, dict]]:
    return {"lagrange (Baumgarte)": ("lagrange", dict(alpha=10.0, beta=10.0)),
            "penalty": ("penalty", dict(penalty=1e10, omega=10.0, mu=1.0)),
            "augmented_lagrangian": ("augmented_lagrangian",
                                     dict(penalty=1e5, omega=10.0, mu=1.0, iterations=3)),
            "projection": ("projection", dict(project_every_s=dt)),
            "partitioning": ("partitioning", dict(project_every_s=dt))}


def simulate(mech: Mechanism, formulation: str, t_end: float, dt: float,
             solver: str = "rk4", **options: Any) -> dict:
    """Simulate ``mech`` in a MultibodyBlock; returns t, q, v, wall time, steps, block."""
    b = DiagramBuilder("mb")
    blk = b.add(MultibodyBlock("mech", mech, formulation, **options))
    pq, pv = blk.output("q"), blk.output("v")
    d = b.build()
    sim = Simulator(d, solver=solver, dt=dt, record=[pq, pv])
    wall = time.perf_counter()
    res = sim.run(t_end)
    wall = time.perf_counter() - wall
    return {"t": res.time, "q": res[pq.path], "v": res[pv.path], "wall": wall,
            "steps": sim.stats["steps"], "block": blk,
            "mech": mech}


def summarize(run: dict) -> dict:
    mech = run["mech"]
    return {"drift": float(np.max(constraint_residual(mech, run["t"], run["q"]))),
            "energy_rel": energy_error(mech, run["q"], run["v"]),
            "us_per_step": 1e6 * run["wall"] / max(run["steps"], 1)}


MECHANISMS = {"slider-crank": slider_crank, "four-bar": four_bar,
              "seed-003 loop": spatial_loop}


def table(t_end: float = 2.0, dt: float = 1e-3) -> str:
    """Markdown table: drift, energy error, wall time per step per formulation/mechanism."""
    lines = [f"RK4, dt = {dt:g} s, {t_end:g} s simulated; drift = max |Phi| over the run; "
             "energy = max |E - E0| / max kinetic energy; wall time per step includes 4 derivative "
             "evaluations and recording.", "",
             "| mechanism | formulation | max abs(Phi) | energy error (rel) | wall us/step |",
             "|---|---|---|---|---|"]
    for mname, build in MECHANISMS.items():
        for fname, (kind, opts) in formulations(dt).items():
            try:
                s = summarize(simulate(build(), kind, t_end, dt, **opts))
                lines.append(f"| {mname} | {fname} | {s['drift']:.2e} | {s['energy_rel']:.2e}"
                             f" | {s['us_per_step']:.0f} |")
            except Exception as exc:  # report, do not hide
                lines.append(f"| {mname} | {fname} | error: {type(exc).__name__}: "
                             f"{str(exc)[:80]} | | |")
    return "\n".join(lines)


def main() -> None:
    text = table()
    print(text)
    with open("/tmp/multibody_table.md", "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
