"""LIM 2-DOF linear oscillator co-simulation benchmark (shared by docs, tests and bench).

Source: fgonzalezLIM/cosim-benchmarks, doc/linearOscillator.tex (copied numbers in
../shared/research/anchors-domain.md section 9.1): ground-k1,c1-m1-kc,cc-m2-k2,c2-ground,
m1 = m2 = 1 kg, k1 = 10, kc = 100, k2 = 1000 N/m, case 1 undamped, case 2 all c = 0.01;
x(0) = 0, v(0) = (100, -100) m/s; 10 s.

Force-displacement coupling (f-s): M1 outputs the coupling force
f_c = kc (x1 - x2) + cc (v1 - v2) from M2's position (and velocity), M2 outputs
its position and velocity.  Displacement-displacement (s-s) and force-force
(f-f) couplings: :func:`mass_diagram`.
"""

from __future__ import annotations

import numpy as np

from cosim import Block, DiagramBuilder, LinearModel
from cosim.params import FINITE, NON_NEGATIVE, POSITIVE

from ..math import Gain, Sum

M1 = M2 = 1.0
K1, KC, K2 = 10.0, 100.0, 1000.0
V0 = (100.0, -100.0)
CASES = {1: 0.0, 2: 0.01}

# exact values at t = 1 and t = 10 s (case 1), from the benchmark definition
EXACT_CASE1 = {1.0: (-4.538448864121, -3.577411338828), 10.0: (-4.460797486077, -0.964932839104)}


class SpringMass(Block):
    r"""A mass on a spring-damper to the ground, driven by a force.

    .. math:: m \ddot x = -k x - c \dot x + F

    Ports
    -----
    in   force  scalar [N]    :math:`F`
    out  x      scalar [m]    state only
    out  v      scalar [m/s]  :math:`\dot x`; state only

    Parameters
    ----------
    m : float
        Mass [kg].
    k : float
        Stiffness [N/m].
    c : float
        Damping [N s/m].
    x0, v0 : float
        Initial position [m] and velocity [m/s].
    """

    argument_checks = {"m": POSITIVE, "k": NON_NEGATIVE, "c": NON_NEGATIVE, "x0": FINITE,
                       "v0": FINITE}

    def __init__(self, name, m, k, c, x0=0.0, v0=0.0):
        super().__init__(name)
        self.m, self.k, self.c = m, k, c
        self.f = self.declare_input("force", unit="N")
        self.s = self.declare_continuous_state("xv", [x0, v0])
        self.x = self.declare_output("x", lambda ctx: float(ctx.state(self.s)[0]), unit="m",
                                     depends_on=())
        self.v = self.declare_output("v", lambda ctx: float(ctx.state(self.s)[1]), unit="m/s",
                                     depends_on=())

    def _abcd(self):
        A = [[0.0, 1.0], [-self.k / self.m, -self.c / self.m]]
        return np.array(A), np.array([[0.0], [1.0 / self.m]]), np.eye(2), np.zeros((2, 1))

    def derivatives(self, ctx):
        A, B, _, _ = self._abcd()
        return A @ ctx.state(self.s) + B[:, 0] * ctx.input(self.f)

    def linear_model(self, ctx):
        A, B, C, D = self._abcd()
        return LinearModel(A, B, C, D, [self.f], [self.x, self.v], [self.s])


def m1_diagram(case=1):
    """M1 with the coupling spring: inputs x2, v2; output fc."""
    c = CASES[case]
    b = DiagramBuilder("m1")
    mass = b.add(SpringMass("mass", M1, K1, c, 0.0, V0[0]))
    dx = b.add(Sum("dx", "+-", unit="m"))
    dv = b.add(Sum("dv", "+-", unit="m/s"))
    kc = b.add(Gain("kc", KC, input_unit="m", unit="N"))
    cc = b.add(Gain("cc", c, input_unit="m/s", unit="N"))
    fc = b.add(Sum("fc", "++", unit="N"))
    neg = b.add(Gain("neg", -1.0, input_unit="N"))
    b.connect(mass.x, dx.ins[0])
    b.connect(mass.v, dv.ins[0])
    b.connect(dx.y, kc.u)
    b.connect(dv.y, cc.u)
    b.connect(kc.y, fc.ins[0])
    b.connect(cc.y, fc.ins[1])
    b.connect(fc.y, neg.u)
    b.connect(neg.y, mass.f)
    b.export_input(dx.ins[1], "x2")
    b.export_input(dv.ins[1], "v2")
    b.export_output(fc.y, "fc")
    b.export_output(mass.x, "x1")
    b.export_output(mass.v, "v1")
    return b.build()


def m2_diagram(case=1):
    """M2: input fc; outputs x2, v2."""
    c = CASES[case]
    b = DiagramBuilder("m2")
    mass = b.add(SpringMass("mass", M2, K2, c, 0.0, V0[1]))
    b.export_input(mass.f, "fc")
    b.export_output(mass.x, "x2")
    b.export_output(mass.v, "v2")
    return b.build()


CONNECTIONS = [("m1.fc", "m2.fc"), ("m2.x2", "m1.x2"), ("m2.v2", "m1.v2")]


def m1_power_diagram(case=1):
    r"""M1 as a pure power bond: the coupling spring's deflection ``d`` is its own state.

    .. math:: \dot d = v_1 - v_2, \quad f_c = k_c d + c_c (v_1 - v_2)

    Input v2 only (no displacement), outputs fc, x1, v1, d: the energy balance
    of the coupled system is then exactly the bond's power residual.
    """
    from ..continuous import Integrator
    c = CASES[case]
    b = DiagramBuilder("m1")
    mass = b.add(SpringMass("mass", M1, K1, c, 0.0, V0[0]))
    dv = b.add(Sum("dv", "+-", unit="m/s"))
    d = b.add(Integrator("d", 0.0, unit="m", input_unit="m/s"))
    kc = b.add(Gain("kc", KC, input_unit="m", unit="N"))
    cc = b.add(Gain("cc", c, input_unit="m/s", unit="N"))
    fc = b.add(Sum("fc", "++", unit="N"))
    neg = b.add(Gain("neg", -1.0, input_unit="N"))
    b.connect(mass.v, dv.ins[0])
    b.connect(dv.y, d.u)
    b.connect(d.y, kc.u)
    b.connect(dv.y, cc.u)
    b.connect(kc.y, fc.ins[0])
    b.connect(cc.y, fc.ins[1])
    b.connect(fc.y, neg.u)
    b.connect(neg.y, mass.f)
    b.export_input(dv.ins[1], "v2")
    b.export_output(fc.y, "fc")
    b.export_output(mass.x, "x1")
    b.export_output(mass.v, "v1")
    b.export_output(d.y, "d")
    return b.build()


POWER_CONNECTIONS = [("m1.fc", "m2.fc"), ("m2.v2", "m1.v2")]


def energy_power(res):
    """Total energy of the power-bond variant (spring energy from M1's own deflection) [J]."""
    x1, v1, x2, v2, d = res["m1.x1"], res["m1.v1"], res["m2.x2"], res["m2.v2"], res["m1.d"]
    return (0.5 * M1 * v1 ** 2 + 0.5 * M2 * v2 ** 2 + 0.5 * K1 * x1 ** 2
            + 0.5 * KC * d ** 2 + 0.5 * K2 * x2 ** 2)


def mass_diagram(which, coupling, case=1):
    """M1 or M2 (``which`` = 1, 2) for displacement-displacement or force-force coupling.

    Each side holds its own half of the coupling element, no output has feedthrough.

    * ``"s-s"``: inputs ``x_in, v_in`` (the other mass), outputs ``x, v``; the force on
      this mass is ``-kc (x - x_in) - cc (v - v_in)``.
    * ``"f-f"``: input ``f_in``, outputs ``f = kc x + cc v`` (this side's spring end) and
      ``x, v``; the force on this mass is ``f_in - f``.  Extrapolating ``f`` is
      extrapolating ``x, v`` through a linear map, so for single-rate coupling it
      equals s-s (the benchmark notes this).
    """
    if coupling not in ("s-s", "f-f"):
        raise ValueError(f"coupling must be 's-s' or 'f-f', got {coupling!r}")
    c = CASES[case]
    m, k, v0 = (M1, K1, V0[0]) if which == 1 else (M2, K2, V0[1])
    b = DiagramBuilder(f"m{which}")
    mass = b.add(SpringMass("mass", m, k, c, 0.0, v0))
    kx = b.add(Gain("kc", KC, input_unit="m", unit="N"))
    cv = b.add(Gain("cc", c, input_unit="m/s", unit="N"))
    f_own = b.add(Sum("f_own", "++", unit="N"))
    b.connect(mass.x, kx.u)
    b.connect(mass.v, cv.u)
    b.connect(kx.y, f_own.ins[0])
    b.connect(cv.y, f_own.ins[1])
    net = b.add(Sum("net", "+-", unit="N"))
    b.connect(f_own.y, net.ins[1])
    b.connect(net.y, mass.f)
    if coupling == "s-s":
        kx_in = b.add(Gain("kc_in", KC, input_unit="m", unit="N"))
        cv_in = b.add(Gain("cc_in", c, input_unit="m/s", unit="N"))
        f_in = b.add(Sum("f_in", "++", unit="N"))
        b.connect(kx_in.y, f_in.ins[0])
        b.connect(cv_in.y, f_in.ins[1])
        b.connect(f_in.y, net.ins[0])
        b.export_input(kx_in.u, "x_in")
        b.export_input(cv_in.u, "v_in")
    else:
        b.export_input(net.ins[0], "f_in")
        b.export_output(f_own.y, "f")
    b.export_output(mass.x, f"x{which}")
    b.export_output(mass.v, f"v{which}")
    return b.build()


SS_CONNECTIONS = [("m1.x1", "m2.x_in"), ("m1.v1", "m2.v_in"),
                  ("m2.x2", "m1.x_in"), ("m2.v2", "m1.v_in")]
FF_CONNECTIONS = [("m1.f", "m2.f_in"), ("m2.f", "m1.f_in")]


def energy(res, case=1):
    """Total mechanical energy from the published outputs [J] (10000 J exactly, case 1)."""
    x1, v1, x2, v2 = res["m1.x1"], res["m1.v1"], res["m2.x2"], res["m2.v2"]
    return (0.5 * M1 * v1 ** 2 + 0.5 * M2 * v2 ** 2 + 0.5 * K1 * x1 ** 2
            + 0.5 * KC * (x1 - x2) ** 2 + 0.5 * K2 * x2 ** 2)


def exact(t, case=1):
    """x1(t), x2(t) of the monolithic system: z = expm(A t) z0."""
    from scipy.linalg import expm
    c = CASES[case]
    A = np.array([[0, 0, 1, 0], [0, 0, 0, 1],
                  [-(K1 + KC) / M1, KC / M1, -2 * c / M1, c / M1],
                  [KC / M2, -(K2 + KC) / M2, c / M2, -2 * c / M2]])
    z0 = np.array([0.0, 0.0, V0[0], V0[1]])
    return np.array([(expm(A * ti) @ z0)[:2] for ti in np.atleast_1d(t)])
