r"""The IFToMM A02 benchmark: a chain of N four-bar linkages through singular positions.

Source: IFToMM multibody benchmark library, problem A02 "N four-bar mechanism"
(specification ``http://lim.ii.udc.es/mbsbenchmark/dist/A02/A02_specification.xml``;
González, Dopico, Lugrís, Cuadrado, "A benchmarking system for MBS simulation software",
Multibody Syst. Dyn. 16 (2006) 179-190; the two-window case is Bayo & Avello, "Singularity-
free augmented Lagrangian algorithms for constrained multibody dynamics", Nonlinear Dyn. 5
(1994) 209-231).  Geometry as in the OpenSim re-implementation
(``RehabEngGroup/MBSbenchmarksInOpenSim``, ``src/A02-NFourBarMechanism/createModel.cpp``):

* 2N+1 uniform bars of length L = 1 m and mass m = 1 kg (J = m L^2/12 about the centre);
  gravity 9.81 m/s^2 along -y;
* N+1 *cranks*: crank i turns about the ground pivot A_i = (i L, 0), its tip is B_i;
* N *couplers*: coupler i (i = 1..N) joins B_{i-1} and B_i;
* start: cranks vertical (B_i = (i L, L)), couplers horizontal; the x velocity of B_0 is
  1 m/s; the spec runs 20 s (N = 40) and compares B_0's position and velocity.

When the cranks are horizontal (theta = 0 or pi) all bars lie on the ground line and the
constraint Jacobian loses N ranks: the mechanism has N+1 degrees of freedom for an instant
(bifurcation into the branches "crank i held at 0 and the rest turning about A_{i+1}").

The exact 1-DOF reduction of the parallelogram branch (written here from the geometry)
-------------------------------------------------------------------------------------
On the parallelogram branch every crank has the same angle theta (from +x) and every
coupler translates without rotating: crank i's centre is ``A_i + L/2 e(theta)``, coupler
i's centre ``(i - 1/2) L e_x + L e(theta)`` with ``e = (cos, sin)``.  Kinetic and
potential energy::

    T = 1/2 [ (N+1) m L^2/3 + N m L^2 ] theta'^2            (constant mass: M0)
    V = m g L [ (N+1)/2 + N ] sin(theta)

so Lagrange's equation is a pendulum with a constant generalized mass::

    theta'' = -kappa cos(theta),   kappa = g ((N+1)/2 + N) / (L ((N+1)/3 + N)).

With ``psi = theta + pi/2`` (from the hanging position), ``psi'' = -kappa sin(psi)``; its
energy ``E = psi'^2/2 - kappa cos(psi)`` gives, with ``u = psi/2``,
``u'^2 = c^2 (1 - k sin^2 u)``, ``c^2 = (E + kappa)/2``, ``k = 2 kappa/(E + kappa)``.
For the benchmark's start (theta = pi/2, theta' = -vx/L) ``k < 1``: the mechanism turns
over (circulating pendulum) and

    u(t) = am( F(u_0 | k) + s c t | k ),        s = sign(theta'_0),

(Jacobi amplitude ``am``, incomplete elliptic integral ``F``; ``scipy.special.ellipj``
and ``ellipkinc``, continued beyond one quarter period by ``am(x + 2K) = am(x) + pi``).
``theta' = 2 s c dn(.)``.  B_0 = L e(theta), its velocity L theta' E e(theta).  Singular
instants: theta = 0 (mod pi), i.e. ``u = pi/4 (mod pi/2)``, at ``t = (F(u_s) - F(u_0)) /
(s c)``.  Checked against ``solve_ivp`` (DOP853, rtol 1e-13) in the tests.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ellipj, ellipk, ellipkinc

G = 9.81
A02 = dict(L=1.0, m=1.0, g=G, vx=1.0, t_end=20.0, N=40)


def chain_kappa(N: int, L: float = 1.0, g: float = G) -> float:
    """``kappa`` of ``theta'' = -kappa cos theta`` (module docstring)."""
    return g * ((N + 1) / 2.0 + N) / (L * ((N + 1) / 3.0 + N))


def four_bar_chain(N: int, L: float = 1.0, m: float = 1.0, g: float = G, vx: float = 1.0,
                   theta0: float = math.pi / 2, compiled: bool | None = None):
    """The A02 mechanism with ``N`` windows on the parallelogram branch at ``theta0``.

    Bodies in chain order ``crank0, coupler1, crank1, coupler2, ...`` (planar, frame at the
    centre, x along the bar); markers ``P`` (-L/2) and ``Q`` (+L/2) on each bar.  A crank's
    ``P`` is on its pivot, ``Q`` its tip; a coupler's ``P`` is at B_{i-1}, ``Q`` at B_i.
    Joints (planar revolute): ``A{i}`` ground-crank i, ``B{i}l`` coupler i - crank i-1,
    ``B{i}r`` coupler i - crank i.  Consistent initial velocities for ``B_0' x = vx``.
    """
    from blocks.multibody import Mechanism
    th = float(theta0)
    s, c = math.sin(th), math.cos(th)
    if abs(s) < 1e-12:
        raise ValueError("theta0 at a singular position: B_0's x velocity fixes nothing")
    w = -vx / (L * s)                                # B0' = L w (-sin, cos)
    mech = Mechanism(f"a02_chain_{N}", dim=2, gravity=(0.0, -g), compiled=compiled)
    J = m * L * L / 12.0
    e = np.array([c, s])
    de = np.array([-s, c])
    ground = mech.ground
    bodies = []
    for i in range(N + 1):
        if i > 0:
            cp = mech.add_body(f"coupler{i}", m, J, ((i - 0.5) * L + L * c, L * s), 0.0,
                               velocity=L * w * de, angular_velocity=0.0)
            cp.marker("P", (-L / 2, 0.0))
            cp.marker("Q", (L / 2, 0.0))
            bodies.append(cp)
        cr = mech.add_body(f"crank{i}", m, J, np.array([i * L, 0.0]) + 0.5 * L * e, th,
                           velocity=0.5 * L * w * de, angular_velocity=w)
        cr.marker("P", (-L / 2, 0.0))
        cr.marker("Q", (L / 2, 0.0))
        bodies.append(cr)
    for i in range(N + 1):
        mech.add_joint("revolute", f"A{i}", ground.marker(f"A{i}", (i * L, 0.0)),
                       f"crank{i}.P")
        if i > 0:
            mech.add_joint("revolute", f"B{i}l", f"crank{i - 1}.Q", f"coupler{i}.P")
            mech.add_joint("revolute", f"B{i}r", f"coupler{i}.Q", f"crank{i}.Q")
    return mech


class ChainExact:
    """The exact parallelogram-branch motion of :func:`four_bar_chain` (module docstring)."""

    def __init__(self, N: int, L: float = 1.0, g: float = G, vx: float = 1.0,
                 theta0: float = math.pi / 2) -> None:
        self.N, self.L = N, L
        self.kappa = kappa = chain_kappa(N, L, g)
        w0 = -vx / (L * math.sin(theta0))
        psi0 = theta0 + math.pi / 2
        E = 0.5 * w0 * w0 - kappa * math.cos(psi0)
        if E <= kappa:
            raise ValueError("the reduction implemented is the turning-over (circulating) one")
        self.c = math.sqrt(0.5 * (E + kappa))
        self.k = 2.0 * kappa / (E + kappa)
        self.K = float(ellipk(self.k))
        self.s = 1.0 if w0 > 0 else -1.0
        self.x0 = self._F(psi0 / 2.0)

    def _F(self, u: float) -> float:
        """F(u | k) continued over every half turn: F(u + n pi) = F(u) + 2 n K."""
        n = math.floor(u / math.pi + 0.5)
        return float(ellipkinc(u - n * math.pi, self.k)) + 2.0 * n * self.K

    def _am(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = np.floor(x / (2.0 * self.K) + 0.5)
        r = x - 2.0 * n * self.K
        sn, cn, dn, ph = ellipj(r, self.k)
        return ph + n * math.pi, dn

    def theta(self, t) -> tuple[np.ndarray, np.ndarray]:
        """``(theta(t), theta'(t))`` (theta continuous, unwrapped)."""
        x = self.x0 + self.s * self.c * np.asarray(t, float)
        u, dn = self._am(x)
        return 2.0 * u - math.pi / 2, 2.0 * self.s * self.c * dn

    def b0(self, t) -> tuple[np.ndarray, np.ndarray]:
        """Position and velocity of B_0, shape ``(len(t), 2)`` each."""
        th, thd = self.theta(t)
        P = self.L * np.column_stack([np.cos(th), np.sin(th)])
        V = self.L * thd[:, None] * np.column_stack([-np.sin(th), np.cos(th)])
        return P, V

    def singular_times(self, t_end: float) -> np.ndarray:
        """Instants in ``(0, t_end]`` where theta = 0 (mod pi) (all bars on the ground line)."""
        out = []
        # u = psi/2 = theta/2 + pi/4; theta = n pi  <=>  u = pi/4 + n pi/2
        th0 = self.theta(np.array([0.0]))[0][0]
        th1 = self.theta(np.array([t_end]))[0][0]
        lo, hi = sorted((th0, th1))
        for n in range(math.ceil(lo / math.pi), math.floor(hi / math.pi) + 1):
            u = math.pi / 4 + n * math.pi / 2
            t = (self._F(u) - self.x0) / (self.s * self.c)
            if 0.0 < t <= t_end:
                out.append(t)
        return np.array(sorted(out))

    def revolution_period(self) -> float:
        """Time for one full turn (theta by 2 pi)."""
        return 2.0 * self.K / self.c

    def energy(self, m: float = 1.0, g: float = G) -> float:
        """Mechanical energy of the chain (zero potential on the ground line) at the start."""
        th, thd = self.theta(np.array([0.0]))
        N, L = self.N, self.L
        M0 = (N + 1) * m * L * L / 3.0 + N * m * L * L
        return float(0.5 * M0 * thd[0] ** 2 + m * g * L * ((N + 1) / 2.0 + N) * math.sin(th[0]))


def chain_b0(mech, q: np.ndarray) -> np.ndarray:
    """B_0 (crank 0's tip) from the coordinates ``q`` (rows: samples)."""
    q = np.atleast_2d(q)
    b = mech.bodies["crank0"]
    x, y, th = q[:, b.iq], q[:, b.iq + 1], q[:, b.iq + 2]
    h = float(mech.markers[("crank0", "Q")].s[0])
    return np.column_stack([x + h * np.cos(th), y + h * np.sin(th)])


def chain_crank_angles(mech, q: np.ndarray) -> np.ndarray:
    """Angles of every crank, shape ``(samples, N + 1)`` (the branch check: all equal)."""
    q = np.atleast_2d(q)
    idx = [b.iq + 2 for name, b in mech.bodies.items() if name.startswith("crank")]
    return q[:, idx]


def chain_energy(mech, q: np.ndarray, v: np.ndarray, g: float = G) -> np.ndarray:
    """Kinetic plus potential energy of every sample (zero potential at y = 0)."""
    q, v = np.atleast_2d(q), np.atleast_2d(v)
    E = np.zeros(q.shape[0])
    for b in mech.moving:
        vv = v[:, b.iv:b.iv + 3]
        E += 0.5 * b.mass * (vv[:, 0] ** 2 + vv[:, 1] ** 2) + 0.5 * b.inertia * vv[:, 2] ** 2
        E += b.mass * g * q[:, b.iq + 1]
    return E


def simulate_index3(N: int, h: float, t_end: float, record_every: int = 1, **options):
    """The chain in an ``Index3Stepper`` under the simulator (``dt = h``): ``{"t", "q",
    "v", "B0", "iterations", "wall", "build", "loss", "block", "mech"}`` (B0 from the
    marker output ``crank0_Q_pos``, sampled every ``record_every`` steps)."""
    import time

    from blocks.multibody import Index3Stepper
    from cosim import DiagramBuilder, Simulator
    t0 = time.perf_counter()
    mech = four_bar_chain(N)
    b = DiagramBuilder("a02")
    blk = b.add(Index3Stepper("chain", mech, h, markers=["crank0.Q"], **options))
    ports = [blk.output("q"), blk.output("v"), blk.output("crank0_Q_pos"),
             blk.output("iterations"), blk.output("projection_loss")]
    sim = Simulator(b.build(), solver="rk4", dt=h, record=ports, record_every=record_every)
    t1 = time.perf_counter()
    res = sim.run(t_end)
    t2 = time.perf_counter()
    return {"t": res.time, "q": res[ports[0].path], "v": res[ports[1].path],
            "B0": res[ports[2].path], "iterations": res[ports[3].path],
            "loss": res[ports[4].path], "wall": t2 - t1, "build": t1 - t0, "block": blk,
            "mech": mech}
