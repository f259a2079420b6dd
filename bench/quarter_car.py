"""Quarter car on a flexible track: Schiehlen & Scholz's co-simulation test case.

Source: W. Schiehlen, B. Scholz, "Virtual assembly in multibody dynamics", Figs. 8-10
(notes: ../shared/research/seed-000-part2.md section 8).  Fig. 9 parameters::

    m1 = 1.0e2 kg    wheel mass              c2 = 1.5e6 N/m    wheel - track node
    c1 = 2.0e4 N/m   body - wheel spring     m2 = 1.0e2 kg     track node mass
    d1 = 1.0e3 N s/m body - wheel damper     c3 = 1.0e10 N/m   track node - ground

The vehicle body is fixed (inertial): ``K = [[c1+c2, -c2], [-c2, c2+c3]]``,
``M = diag(m1, m2)`` then give the stated modes, 19.62 Hz and 1591.67 Hz undamped
(19.60 Hz with zeta = 0.041 damped), the paper's "about 20 Hz and 1.6 kHz".

Split at the node (displacements upward, ``r`` the rail-head irregularity under the
wheel, ``F`` the upward force of the contact spring c2 on the node)::

    wheel:  m1 x1'' = -c1 x1 - d1 x1' - F,     F = c2 (x1 - x2 - r(t))
    track:  m2 x2'' = F - c3 x2

Subsystem 1 ("wheel") reads the node displacement x2 and outputs F (feedthrough);
subsystem 2 ("track") reads F and outputs x2 (no feedthrough): the loop is not
algebraic.  The track reports x2 in micrometres (the master converts to metres for the
wheel), so that one absolute step-control tolerance means the same for both exchanged
signals: 1 um of node deflection is c2 * 1 um = 1.5 N of contact force.

Excitation (the paper gives none; ours): the wheel rolls over a short rail-head bump
(e.g. a weld), ``r = h sin^4(pi (t - t0) / T)`` on ``[t0, t0 + T]``, 0 elsewhere
(C3-smooth), h = 0.5 mm, t0 = 20 ms, T = 2 ms.  The force pulse (about -750 N) excites
the 1.6 kHz node mode (undamped, zeta ~ 1e-11: it rings on) and kicks the wheel into its
19.6 Hz hop mode (about +-65 N of contact force afterwards, decaying in ~0.2 s), so the
exchanged force changes fast during the bump and slowly afterwards, as in Fig. 10.
A smooth bump of the body attachment (tens of ms) excites only the 20 Hz mode: the
controlled step then goes straight to its maximum and never varies.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp

from bench.lim import SpringMass
from blocks.math import UnitConversion
from cosim import Block, DiagramBuilder, LinearModel

M1 = M2 = 100.0
C1, D1, C2, C3 = 2.0e4, 1.0e3, 1.5e6, 1.0e10

BUMP_HEIGHT = 5e-4  # m
BUMP_START = 0.02  # s
BUMP_LENGTH = 0.002  # s

CONNECTIONS = [("wheel.F", "track.F"), ("track.x2", "wheel.x2")]


def bump(t, height=BUMP_HEIGHT, start=BUMP_START, length=BUMP_LENGTH):
    """Rail-head irregularity ``r(t)`` under the wheel [m]."""
    tau = t - start
    if height == 0.0 or tau <= 0.0 or tau >= length:
        return 0.0
    return height * math.sin(math.pi * tau / length) ** 4


class RailBump(Block):
    """Rail-head irregularity passed by the wheel (see :func:`bump`).

    Ports
    -----
    out  r   scalar m   time only
    """

    def __init__(self, name, height=BUMP_HEIGHT):
        super().__init__(name)
        self.r = self.declare_output("r", lambda ctx: bump(ctx.time, height), unit="m",
                                     depends_on=())


class Wheel(Block):
    """Wheel mass on the suspension (c1, d1, body fixed) and the contact spring c2.

    .. math:: m_1 x_1'' = -c_1 x_1 - d_1 x_1' - F, \\quad F = c_2 (x_1 - x_2 - r)

    Ports
    -----
    in   x2   scalar m    track node displacement
    in   r    scalar m    rail-head irregularity
    out  x1   scalar m    state only
    out  v1   scalar m/s  state only
    out  F    scalar N    contact force on the node; reads x2 and r (feedthrough)
    """

    def __init__(self, name, x0=0.0, v0=0.0):
        super().__init__(name)
        self.x2 = self.declare_input("x2", unit="m")
        self.r = self.declare_input("r", unit="m")
        self.s = self.declare_continuous_state("xv", [x0, v0])
        self.x1 = self.declare_output("x1", lambda ctx: float(ctx.state(self.s)[0]), unit="m",
                                      depends_on=())
        self.v1 = self.declare_output("v1", lambda ctx: float(ctx.state(self.s)[1]),
                                      unit="m/s", depends_on=())
        self.F = self.declare_output("F", self._force, unit="N", depends_on=(self.x2, self.r))

    def _force(self, ctx):
        return C2 * (float(ctx.state(self.s)[0]) - ctx.input(self.x2) - ctx.input(self.r))

    def _abcd(self):
        A = np.array([[0.0, 1.0], [-(C1 + C2) / M1, -D1 / M1]])
        B = np.array([[0.0, 0.0], [C2 / M1, C2 / M1]])
        C = np.array([[1.0, 0.0], [0.0, 1.0], [C2, 0.0]])
        D = np.array([[0.0, 0.0], [0.0, 0.0], [-C2, -C2]])
        return A, B, C, D

    def derivatives(self, ctx):
        A, B, _, _ = self._abcd()
        return A @ ctx.state(self.s) + B @ np.array([ctx.input(self.x2), ctx.input(self.r)])

    def linear_model(self, ctx):
        A, B, C, D = self._abcd()
        return LinearModel(A, B, C, D, [self.x2, self.r], [self.x1, self.v1, self.F],
                           [self.s])


def wheel_diagram(height=BUMP_HEIGHT, x0=0.0, v0=0.0):
    """Subsystem 1: input x2 [m]; outputs F [N] (feedthrough), x1 [m], v1 [m/s]."""
    b = DiagramBuilder("wheel")
    rail = b.add(RailBump("rail", height))
    wheel = b.add(Wheel("mass", x0, v0))
    b.connect(rail.r, wheel.r)
    b.export_input(wheel.x2, "x2")
    b.export_output(wheel.F, "F")
    b.export_output(wheel.x1, "x1")
    b.export_output(wheel.v1, "v1")
    return b.build()


def track_diagram(x0=0.0, v0=0.0):
    """Subsystem 2: input F [N]; outputs x2 [um], v2 [m/s] (state only, no feedthrough)."""
    b = DiagramBuilder("track")
    node = b.add(SpringMass("node", M2, C3, 0.0, x0, v0))
    um = b.add(UnitConversion("to_um", "m", "um"))
    b.connect(node.x, um.u)
    b.export_input(node.f, "F")
    b.export_output(um.y, "x2")
    b.export_output(node.v, "v2")
    return b.build()


def monolithic_diagram(height=BUMP_HEIGHT, x0=(0.0, 0.0), v0=(0.0, 0.0)):
    """Both subsystem diagrams wired directly (no co-simulation)."""
    b = DiagramBuilder("quarter_car")
    w = b.add(wheel_diagram(height, x0[0], v0[0]))
    t = b.add(track_diagram(x0[1], v0[1]))
    b.connect(w.outputs["F"], t.inputs["F"])
    b.connect(t.outputs["x2"], w.inputs["x2"])
    return b.build()


def matrices():
    """``M, D, K`` of the monolithic model (body fixed); coordinates x1, x2."""
    M = np.diag([M1, M2])
    D = np.array([[D1, 0.0], [0.0, 0.0]])
    K = np.array([[C1 + C2, -C2], [-C2, C2 + C3]])
    return M, D, K


def eigenfrequencies():
    """Undamped ``f`` [Hz] and damped ``[(f_d [Hz], zeta), ...]`` of both modes, ascending."""
    M, D, K = matrices()
    w2 = np.sort(np.linalg.eigvals(np.linalg.solve(M, K)).real)
    A = np.block([[np.zeros((2, 2)), np.eye(2)],
                  [-np.linalg.solve(M, K), -np.linalg.solve(M, D)]])
    lam = np.linalg.eigvals(A)
    lam = lam[lam.imag > 0]
    lam = lam[np.argsort(lam.imag)]
    damped = [(float(v.imag / (2 * np.pi)), float(-v.real / abs(v))) for v in lam]
    return np.sqrt(w2) / (2 * np.pi), damped


def reference(t_eval, height=BUMP_HEIGHT):
    """Monolithic solution at ``t_eval`` [s]: dict of x1, x2 [m], v1, v2 [m/s], F [N].

    ``solve_ivp`` (DOP853, rtol 1e-12), piecewise so that no step straddles an end of the
    bump.
    """
    M, D, K = matrices()
    Minv = np.linalg.inv(M)

    def rhs(t, y):
        r = bump(t, height)
        f = np.array([C2 * r, -C2 * r])
        return np.concatenate([y[2:], Minv @ (f - K @ y[:2] - D @ y[2:])])

    t_eval = np.asarray(t_eval, dtype=float)
    t_end = float(t_eval[-1])
    cuts = sorted({0.0, t_end} | {c for c in (BUMP_START, BUMP_START + BUMP_LENGTH)
                                  if 0.0 < c < t_end})
    y0 = np.zeros(4)
    out = np.empty((4, t_eval.size))
    for a, b in zip(cuts[:-1], cuts[1:]):
        sel = (t_eval >= a) & (t_eval < b)
        sol = solve_ivp(rhs, (a, b), y0, method="DOP853", rtol=1e-12,
                        atol=[1e-16, 1e-19, 1e-14, 1e-16], t_eval=np.append(t_eval[sel], b))
        out[:, sel] = sol.y[:, :-1]
        y0 = sol.y[:, -1]
    out[:, t_eval == t_end] = y0[:, None]
    x1, x2, v1, v2 = out
    r = np.array([bump(t, height) for t in t_eval])
    return {"x1": x1, "x2": x2, "v1": v1, "v2": v2, "F": C2 * (x1 - x2 - r)}
