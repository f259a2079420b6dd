"""LIM 2-DOF hydraulic manipulator, manoeuvre M1 (monolithic and split for co-simulation).

Benchmark: ``fgonzalezLIM/cosim-benchmarks`` (Universidade da Coruna, F. Gonzalez),
``doc/hydraulicManipulator.tex`` and the MATLAB reference implementation
``matlab/hydraulicManipulator/`` (``getManipulatorProperties.m``, ``mech/evalMassMatrix.m``,
``mech/evalGravForces.m``, ``hyd/evalPressureRates.m``, ``hyd/updateKappa.m``); model of
Naya et al. (2011), co-simulation benchmark of Peiret et al. (2018).  The numbers below are
copied from ``/work/shared/research/anchors-domain.md`` section 2.2 (and 2.1 for the bulk
modulus), which transcribes those files.

Mechanics (planar, gravity -y, g = 9.81 m/s^2)
----------------------------------------------
* link 1: uniform rod O-Q, L = 1 m, m = 200 kg (J_cm = m L^2 / 12), revolute to the
  ground at O = (0, 0), theta1(0) = pi/6;
* point mass m_p = 250 kg at its tip Q (a particle pinned to Q);
* massless link 2 of length L_h = 0.5 m, hinged at Q, carrying m_h = 100 kg at R
  (a particle at distance L_h from Q), theta2(0) = 3 pi/2 (hanging);
* the actuator runs from B = (sqrt(3)/2, 0) on the ground to the link-1 midpoint P
  (its centre of mass); its force f_h acts on P along (P - B)/s, s = |P - B|.

This is the mechanism of the benchmark in absolute coordinates (a
:class:`blocks.multibody.MultibodyBlock`, Lagrange multipliers with Baumgarte
stabilization); in the benchmark's minimal coordinates q = (theta1, theta2) it is

.. math::

    M \\ddot q + c = f + J^T f_h, \\quad
    M = \\begin{pmatrix} L^2 (m/3 + m_p + m_h) & L L_h m_h \\cos(\\theta_1 - \\theta_2) \\\\
        \\cdot & L_h^2 m_h \\end{pmatrix}, \\quad
    c = L L_h m_h \\sin(\\theta_1 - \\theta_2)\\,(\\dot\\theta_2^2, -\\dot\\theta_1^2), \\\\
    f = -g\\,(L \\cos\\theta_1 (m/2 + m_p + m_h),\\ L_h m_h \\cos\\theta_2), \\quad
    s = L\\sqrt{1 - (\\sqrt 3/2)\\cos\\theta_1}, \\quad
    J = (\\sqrt 3 L^2 \\sin\\theta_1 / (4 s),\\ 0)

(:func:`minimal_rhs`, used by the tests as a cross-check).

Hydraulics
----------
Cylinder A = 65e-4 m^2 both sides, length l = 0.442 m, chambers of lengths
l_1 = l/2 + s0 - s and l_2 = l/2 + s - s0 (s0 = 0.5 m, no dead volume), viscous friction
c = 1e5 N s/m; valve areas a_i = 5e-4 kappa, a_o = 5e-4 (1 - kappa), Cd = 0.67;
rho = 850 kg/m^3; bulk modulus beta(p) = (1 + a p + b p^2)/(a + 2 b p), a = 6.53e-10 1/Pa,
b = -1.19e-18 1/Pa^2 (Cardona and Geradin 1990; ``LIM_OIL``); p_P = 7.6 MPa, p_T = 0.1 MPa.

.. math::

    \\dot p_1 = \\frac{\\beta(p_1)}{A l_1}\\big[A \\dot s + a_i C_d \\sqrt{2(p_P - p_1)/\\rho}
                - a_o C_d \\sqrt{2(p_1 - p_T)/\\rho}\\big] \\\\
    \\dot p_2 = \\frac{\\beta(p_2)}{A l_2}\\big[-A \\dot s + a_o C_d \\sqrt{2(p_P - p_2)/\\rho}
                - a_i C_d \\sqrt{2(p_2 - p_T)/\\rho}\\big] \\\\
    f_h = (p_2 - p_1) A - c \\dot s

Mapping onto the blocks (as ``tests/unit/hydraulics/test_hydraulics_lim.py``): the valve
is a fully underlapped :class:`~blocks.hydraulics.SpoolValve43` (lap = -1, spool
u = 2 kappa - 1) with LIM chamber 1 on port A and chamber 2 on port B; the
:class:`~blocks.hydraulics.DoubleActingCylinder`'s chamber 1 (piston side, grows with x)
is LIM chamber 2, with x = l/2 + s - s0, so its force p_1 A - p_2 A - c v is f_h.
The blocks' square root is regularized below 1e4 Pa; every valve pressure drop in M1
stays above 2.9 MPa (10 ms output grid), where it is the benchmark's square root exactly.

Initial static equilibrium (anchors 2.2, ``doc/data/hydraulicManipulator_ref.csv``):
f_h = 8829 N, p1 = 3170846.2 Pa, p2 = 4529153.8 Pa, kappa0 = 0.45434559.

Manoeuvre M1 (``hyd/updateKappa.m``): kappa = kappa0 up to t = 2 s, a linear ramp of
-0.01 over 1 ms, held to t = 6 s, then a ramp of +0.03 over 2 ms to kappa0 + 0.02.

Reference s1(t) (``hydraulicManipulator_ref.csv``: index-3 augmented Lagrangian,
trapezoidal rule, h = 0.05 ms): :data:`REF_S1`.

Run ``python examples/lim_manipulator.py [--cosim]``, or
``cosim run examples/lim_manipulator.py --rtol 1e-10`` (Radau, :data:`SIMULATION`).
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from blocks.hydraulics import (
    LIM_OIL,
    CylinderFriction,
    DoubleActingCylinder,
    PressureSource,
    SpoolValve43,
    ValveControlledCylinder,
)
from blocks.multibody import Mechanism, MultibodyBlock
from cosim import Block, DiagramBuilder, FunctionBlock, Simulator
from cosim.codegen.model import CContext, CModel, c_float
from cosim.errors import ParameterError

# ---------------------------------------------------------------- parameters (anchors 2.2)
L, L_H = 1.0, 0.5                 # link 1 and link 2 lengths [m]
M_LINK, M_P, M_H = 200.0, 250.0, 100.0   # link-1 rod (distributed), tip mass, hand mass [kg]
G = 9.81                          # gravity [m/s^2]
B_X = math.sqrt(3.0) / 2.0        # actuator ground point B = (sqrt(3)/2, 0) [m]
TH1_0, TH2_0 = math.pi / 6.0, 3.0 * math.pi / 2.0   # initial angles [rad]
S0 = 0.5                          # initial actuator length [m]

A_P = 65e-4                       # piston area [m^2]
L_CYL = 0.442                     # cylinder length [m]
C_VISC = 1e5                      # viscous friction [N s/m]
CD = 0.67                         # valve discharge coefficient
A_VALVE = 5e-4                    # valve area at full opening [m^2]
P_PUMP, P_TANK = 7.6e6, 0.1e6     # supply and tank pressures [Pa]

# initial equilibrium (published, hydraulicManipulator_ref.csv)
F_H0 = 8829.0
P1_0, P2_0 = 3170846.2, 4529153.8
KAPPA0 = 0.45434559

#: Defaults for ``cosim run``: the hydraulics are stiff (use an implicit solver).
SIMULATION = dict(t_end=10.0, solver="radau", dt=0.01,
                  record=["actuator.s", "actuator.sd", "cyl.p_1", "cyl.p_2", "cyl.force",
                          "kappa.kappa"])

#: M1 valve opening breakpoints (hyd/updateKappa.m), linear in between.
M1_T = (0.0, 2.0, 2.001, 6.0, 6.002)
M1_KAPPA = (KAPPA0, KAPPA0, KAPPA0 - 0.01, KAPPA0 - 0.01, KAPPA0 + 0.02)

#: Reference s1 [m] at the tabulated times (anchors 2.2, 8 decimals).
REF_S1 = {2.0: 0.5, 2.5: 0.50802336, 4.0: 0.53918989, 6.0: 0.59603536, 6.01: 0.59625263,
          8.0: 0.56266526, 10.0: 0.51536899}


def m1_kappa(t: float) -> float:
    """Valve opening of manoeuvre M1 at time t (hyd/updateKappa.m)."""
    return float(np.interp(t, M1_T, M1_KAPPA))


class ValveCommand(Block):
    """M1 valve opening as a time source; the integrators stop at its corners.

    Ports
    -----
    out  kappa  scalar  1   valve opening (a_i = A_max kappa)
    out  u      scalar  1   spool position 2 kappa - 1 of the lap = -1 SpoolValve43
    """

    def __init__(self, name: str, t: tuple = M1_T, kappa: tuple = M1_KAPPA) -> None:
        super().__init__(name)
        self._t, self._k = [float(x) for x in t], [float(x) for x in kappa]
        if len(self._t) != len(self._k) or not self._t or any(
                b < a for a, b in zip(self._t, self._t[1:])):
            raise ParameterError(f"ValveCommand '{name}': t must be non-decreasing breakpoints "
                                 f"[s], one per kappa value; got t={t!r}, kappa={kappa!r}")
        self.declare_time_event([x for x in self._t if x > 0.0])
        self.kappa, self.u = self.declare_outputs([("kappa", "1"), ("u", "1")], self._values,
                                                  depends_on=())

    def _values(self, ctx) -> tuple[float, float]:
        k = self.at(ctx.time)
        return k, 2.0 * k - 1.0

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`_values` and :meth:`at` (the bisection as a scan of the sorted
        breakpoints, the same segment and the same arithmetic: bit for bit)."""
        ts, ks = [c_float(v) for v in self._t], [c_float(v) for v in self._k]
        n = len(ts)
        chain = "".join(f"else if ({cg.t} < {ts[i]}) k = {ks[i - 1]} + ({ks[i]} - {ks[i - 1]})"
                        f" * ({cg.t} - {ts[i - 1]}) / ({ts[i]} - {ts[i - 1]});\n"
                        for i in range(1, n))
        code = (f"{{\ndouble k;\nif ({cg.t} < {ts[0]}) k = {ks[0]};\n" + chain
                + f"else k = {ks[-1]};\n{cg.y(self.kappa)} = k;\n"
                f"{cg.y(self.u)} = 2.0 * k - 1.0;\n}}")
        return CModel(outputs={"kappa": code, "u": ""}, time_dependent=True)

    def at(self, t: float) -> float:
        """kappa(t): piecewise linear through the breakpoints, constant outside them."""
        ts, ks = self._t, self._k
        i = bisect.bisect_right(ts, t)
        if i == 0:
            return ks[0]
        if i == len(ts):
            return ks[-1]
        t0, t1 = ts[i - 1], ts[i]
        return ks[i - 1] + (ks[i] - ks[i - 1]) * (t - t0) / (t1 - t0)


# ---------------------------------------------------------------- mechanics
def mechanism() -> Mechanism:
    """The boom in absolute coordinates (module docstring), at theta1 = pi/6, theta2 = 3pi/2."""
    mech = Mechanism("lim_boom", dim=2, gravity=(0.0, -G))
    c1, s1 = math.cos(TH1_0), math.sin(TH1_0)
    q = (L * c1, L * s1)
    link = mech.add_body("link1", mass=M_LINK, inertia=M_LINK * L * L / 12.0,
                         position=(0.5 * L * c1, 0.5 * L * s1), orientation=TH1_0)
    link.marker("O", (-0.5 * L, 0.0))
    link.marker("Q", (0.5 * L, 0.0))
    tip = mech.add_particle("tip", mass=M_P, position=q)
    hand = mech.add_particle("hand", mass=M_H, position=(q[0] + L_H * math.cos(TH2_0),
                                                         q[1] + L_H * math.sin(TH2_0)))
    mech.add_joint("revolute", "A", mech.marker("ground", "A", (0.0, 0.0)), link.marker("O"))
    mech.add_joint("revolute", "Q", link.marker("Q"), tip.marker("cm"))
    mech.add_joint("distance", "link2", link.marker("Q"), hand.marker("cm"), length=L_H)
    mech.add_load("f_act", link.marker("cm"))   # the actuator force on P (midpoint = cm)
    return mech


def actuator_kinematics(p: np.ndarray, pd: np.ndarray) -> tuple[float, float, float]:
    """(s, s', x) from the position and velocity of P; x = l/2 + s - s0 (cylinder position)."""
    dx, dy = p[0] - B_X, p[1]
    s = math.hypot(dx, dy)
    sd = (dx * pd[0] + dy * pd[1]) / s
    return s, sd, 0.5 * L_CYL + s - S0


def actuator_force(f: float, p: np.ndarray) -> np.ndarray:
    """The actuator force f along (P - B)/|P - B| (global components)."""
    d = np.array([p[0] - B_X, p[1]])
    return f * d / math.hypot(d[0], d[1])


def add_mechanics(b: DiagramBuilder, *, alpha: float = 10.0, beta: float = 10.0) -> tuple:
    """Add the boom and the actuator geometry; returns (boom, kinematics, force) blocks."""
    boom = b.add(MultibodyBlock("boom", mechanism(), "lagrange", alpha=alpha, beta=beta,
                                markers=["link1.cm"]))
    kin = b.add(FunctionBlock("actuator", actuator_kinematics,
                              inputs=[{"name": "p", "unit": "m", "shape": (2,)},
                                      {"name": "pd", "unit": "m/s", "shape": (2,)}],
                              outputs=[("s", "m"), ("sd", "m/s"), ("x", "m")]))
    force = b.add(FunctionBlock("actuator_force", actuator_force,
                                inputs=[("f", "N"), {"name": "p", "unit": "m", "shape": (2,)}],
                                outputs=[{"name": "f_vec", "unit": "N", "shape": (2,)}]))
    b.connect("boom.link1_cm_pos", kin.in_ports[0])
    b.connect("boom.link1_cm_vel", kin.in_ports[1])
    b.connect("boom.link1_cm_pos", force.in_ports[1])
    b.connect(force.out_ports[0], "boom.f_act")
    return boom, kin, force


# ---------------------------------------------------------------- hydraulics
def add_hydraulics(b: DiagramBuilder, *, p1_0: float = P1_0, p2_0: float = P2_0) -> tuple:
    """Add supply, tank, valve with its M1 command and cylinder; returns (valve, cyl, cmd).

    The cylinder's inputs x and v are left for the caller to connect.
    """
    pump = b.add(PressureSource("pump", P_PUMP))
    tank = b.add(PressureSource("tank", P_TANK))
    cmd = b.add(ValveCommand("kappa"))
    valve = b.add(SpoolValve43("valve", area_max_m2=A_VALVE, cd=CD, fluid=LIM_OIL, lap=-1.0))
    cyl = b.add(DoubleActingCylinder(
        "cyl", area_1_m2=A_P, area_2_m2=A_P, stroke_m=L_CYL, fluid=LIM_OIL,
        friction=CylinderFriction(viscous_n_s_m=C_VISC), p1_0_pa=p2_0, p2_0_pa=p1_0))
    b.connect(pump.p, valve.p_P)
    b.connect(tank.p, valve.p_T)
    b.connect(cmd.u, valve.u)
    b.connect(cyl.p_2, valve.p_A)   # LIM chamber 1 = cylinder rod side
    b.connect(cyl.p_1, valve.p_B)   # LIM chamber 2 = cylinder piston side
    b.connect(valve.q_A, cyl.q_2)
    b.connect(valve.q_B, cyl.q_1)
    return valve, cyl, cmd


def add_compact_hydraulics(b: DiagramBuilder, *, p1_0: float = P1_0,
                           p2_0: float = P2_0) -> tuple:
    """The same circuit as :func:`add_hydraulics` as one
    :class:`~blocks.hydraulics.ValveControlledCylinder` named ``cyl`` (same port names);
    returns (None, cyl, cmd).  Valve port A on the rod side (LIM chamber 1)."""
    cmd = b.add(ValveCommand("kappa"))
    cyl = b.add(ValveControlledCylinder(
        "cyl", supply_pressure_pa=P_PUMP, tank_pressure_pa=P_TANK, area_max_m2=A_VALVE, cd=CD,
        lap=-1.0, a_chamber=2, fluid=LIM_OIL, area_1_m2=A_P, area_2_m2=A_P, stroke_m=L_CYL,
        friction=CylinderFriction(viscous_n_s_m=C_VISC), p1_0_pa=p2_0, p2_0_pa=p1_0))
    b.connect(cmd.u, cyl.u)
    return None, cyl, cmd


def build(*, alpha: float = 10.0, beta: float = 10.0, compact: bool = False) -> object:
    """The monolithic diagram: boom + actuator geometry + valve + cylinder + M1 command.

    Signals of interest: ``actuator.s`` (s1), ``actuator.sd``, ``cyl.p_2`` (LIM p1),
    ``cyl.p_1`` (LIM p2), ``cyl.force`` (f_h), ``kappa.kappa``.  ``compact``: the
    hydraulics as one block (:func:`add_compact_hydraulics`), the same equations.
    """
    b = DiagramBuilder("lim_manipulator")
    _, kin, force = add_mechanics(b, alpha=alpha, beta=beta)
    _, cyl, _ = (add_compact_hydraulics if compact else add_hydraulics)(b)
    b.connect(kin.out_ports[2], cyl.x)
    b.connect(kin.out_ports[1], cyl.v)
    b.connect(cyl.force, force.in_ports[0])
    return b.build()


# ---------------------------------------------------------------- co-simulation split
def mechanics_diagram() -> object:
    """Mechanics subsystem: input ``f_h`` [N]; outputs ``s`` [m], ``sd`` [m/s] (state only)."""
    b = DiagramBuilder("mech")
    _, kin, force = add_mechanics(b)
    b.export_input(force.in_ports[0], "f_h")
    b.export_output(kin.out_ports[0], "s")
    b.export_output(kin.out_ports[1], "sd")
    return b.build()


def hydraulics_diagram(force_output: bool = True, compact: bool = False) -> object:
    """Hydraulics subsystem: inputs ``s``, ``sd``; outputs ``f_h`` (reads s, sd; only with
    ``force_output``, the f-s split), ``p1``, ``p2`` (states).  ``compact``: one block
    (:func:`add_compact_hydraulics`)."""
    b = DiagramBuilder("hyd")
    _, cyl, _ = (add_compact_hydraulics if compact else add_hydraulics)(b)
    pos = b.add(FunctionBlock("position", lambda s: 0.5 * L_CYL + s - S0,
                              inputs=[("s", "m")], outputs=[("x", "m")]))
    b.connect(pos.out_ports[0], cyl.x)
    b.export_input(pos.in_ports[0], "s")
    b.export_input(cyl.v, "sd")
    if force_output:
        b.export_output(cyl.force, "f_h")
    b.export_output(cyl.p_2, "p1")
    b.export_output(cyl.p_1, "p2")
    return b.build()


#: Force-displacement coupling: mechanics gets f_h, hydraulics gets s and s'.
COSIM_CONNECTIONS = [("hyd.f_h", "mech.f_h"), ("mech.s", "hyd.s"), ("mech.sd", "hyd.sd")]


def cosim_m1(t_end: float = 10.0, *, step_s: float = 1e-3, extrapolation: int = 1,
             hydraulics_dt: float = 2e-4, mechanics_dt: float | None = None) -> object:
    """M1 co-simulated: explicit Jacobi, f-s coupling, macro step ``step_s``.

    Hydraulics RK4 at ``hydraulics_dt`` (the benchmark's h_H = 0.2 ms), mechanics RK4 at
    ``mechanics_dt`` (default the macro step, as the benchmark's h_M = H); every coupling
    input extrapolated with a polynomial of order ``extrapolation`` (0: zero-order hold).
    """
    from cosim import DiagramSubsystem, Jacobi, MasterScheduler
    hyd = DiagramSubsystem(hydraulics_diagram(), solver="rk4", dt=hydraulics_dt)
    mech = DiagramSubsystem(mechanics_diagram(), solver="rk4", dt=mechanics_dt or step_s)
    master = MasterScheduler([hyd, mech], COSIM_CONNECTIONS, step_s, coupling=Jacobi(),
                             extrapolation=extrapolation)
    return master.run(t_end)



# ---------------------------------------------------------------- pressure-displacement split
def chamber_force(p1: float, p2: float, sd: float) -> float:
    """f_h = (p2 - p1) A - c s' (the cylinder chambers and friction, LIM numbering)."""
    return (p2 - p1) * A_P - C_VISC * sd


def mechanics_ps_diagram() -> object:
    """Mechanics for the p-s coupling: inputs ``p1``, ``p2`` [Pa]; outputs ``s``, ``sd``.

    The subsystem also holds the cylinder's force computation :func:`chamber_force` from the
    pressures it receives and its own s' (as the benchmark's pressure-displacement coupling).
    """
    b = DiagramBuilder("mech")
    _, kin, force = add_mechanics(b)
    ch = b.add(FunctionBlock("chambers", chamber_force,
                             inputs=[("p1", "Pa"), ("p2", "Pa"), ("sd", "m/s")],
                             outputs=[("f_h", "N")]))
    b.connect(kin.out_ports[1], ch.in_ports[2])
    b.connect(ch.out_ports[0], force.in_ports[0])
    b.export_input(ch.in_ports[0], "p1")
    b.export_input(ch.in_ports[1], "p2")
    b.export_output(kin.out_ports[0], "s")
    b.export_output(kin.out_ports[1], "sd")
    return b.build()


def hydraulics_ps_diagram() -> object:
    """Hydraulics for the p-s coupling: inputs ``s``, ``sd``; outputs ``p1``, ``p2`` (states)."""
    return hydraulics_diagram(force_output=False)


#: Pressure-displacement coupling: mechanics gets p1, p2, hydraulics gets s and s'.
PS_CONNECTIONS = [("hyd.p1", "mech.p1"), ("hyd.p2", "mech.p2"), ("mech.s", "hyd.s"),
                  ("mech.sd", "hyd.sd")]


def cosim_master(*, split: str = "fs", step_s: float = 1e-3, coupling: str = "jacobi",
                 extrapolation: int = 1, hydraulics_dt: float = 2e-4,
                 mechanics_dt: float | str | None = None, mechanics_rate: int = 1,
                 hydraulics_solver: str = "rk4", mechanics_solver: str = "rk4",
                 compact: bool = False, step_control: object = None,
                 **coupling_options) -> object:
    """A :class:`~cosim.MasterScheduler` for M1 (not run).

    ``split``: ``"fs"`` (force-displacement, :data:`COSIM_CONNECTIONS`) or ``"ps"``
    (pressure-displacement, :data:`PS_CONNECTIONS`).  ``coupling``: ``"jacobi"``,
    ``"gs_hyd"`` (Gauss-Seidel, hydraulics first: they extrapolate s, s', the mechanics
    interpolate the hydraulics' outputs), ``"gs_mech"`` (mechanics first) or
    ``"iterative"`` (:class:`~cosim.Iterative`, ``coupling_options`` passed on).  The
    mechanics step every ``mechanics_rate`` macro steps with solver step ``mechanics_dt``
    (default: one step per mechanics communication step; ``"advance"``: one step per
    communication step whatever its length, for ``step_control``, a
    :class:`~cosim.StepController`).  ``compact``: the hydraulics as one block
    (:func:`add_compact_hydraulics`).
    """
    from cosim import DiagramSubsystem, GaussSeidel, Iterative, Jacobi, MasterScheduler
    if split not in ("fs", "ps"):
        raise ValueError(f"split must be 'fs' or 'ps', got {split!r}")
    fs = split == "fs"
    hyd = DiagramSubsystem(hydraulics_diagram(force_output=fs, compact=compact),
                           solver=hydraulics_solver, dt=hydraulics_dt)
    mech = DiagramSubsystem(mechanics_diagram() if fs else mechanics_ps_diagram(),
                            solver=mechanics_solver,
                            dt=mechanics_dt or step_s * mechanics_rate, rate=mechanics_rate)
    couplings = {"jacobi": lambda: Jacobi(), "gs_hyd": lambda: GaussSeidel(["hyd", "mech"]),
                 "gs_mech": lambda: GaussSeidel(["mech", "hyd"]),
                 "iterative": lambda: Iterative(**coupling_options)}
    if coupling not in couplings:
        raise ValueError(f"coupling must be one of {sorted(couplings)}, got {coupling!r}")
    return MasterScheduler([hyd, mech], COSIM_CONNECTIONS if fs else PS_CONNECTIONS, step_s,
                           coupling=couplings[coupling](), extrapolation=extrapolation,
                           step_control=step_control)


def cosim_run(t_end: float = 10.0, **options) -> object:
    """M1 co-simulated with :func:`cosim_master` (``options``); returns the results."""
    return cosim_master(**options).run(t_end)


def monolithic_rk4(t_end: float = 10.0, dt: float = 2e-4, record_dt: float = 0.01,
                   compact: bool = False, solver: str = "rk4") -> object:
    """M1, monolithic, one explicit integrator (default RK4) at step ``dt`` (s1 recorded
    every 10 ms); ``compact``: the one-block hydraulics."""
    sim = Simulator(build(compact=compact), solver=solver, dt=dt, record=["actuator.s"],
                    record_every=max(1, int(round(record_dt / dt))))
    return sim.run(t_end)


# ---------------------------------------------------------------- reference equations
def minimal_rhs(t: float, y: np.ndarray, kappa=m1_kappa) -> np.ndarray:
    """The benchmark's equations in minimal coordinates, y = (th1, th2, th1', th2', p1, p2)."""
    th1, th2, w1, w2, p1, p2 = y
    s = L * math.sqrt(1.0 - math.sqrt(3.0) / 2.0 * math.cos(th1))
    j1 = math.sqrt(3.0) * L * L * math.sin(th1) / (4.0 * s)
    sd = j1 * w1
    k = kappa(t)
    ai, ao = A_VALVE * k, A_VALVE * (1.0 - k)
    rho, beta = LIM_OIL.density_kg_m3, LIM_OIL.beta

    def q(dp):
        return CD * math.sqrt(2.0 * dp / rho) if dp > 0 else 0.0
    l1, l2 = 0.5 * L_CYL + S0 - s, 0.5 * L_CYL + s - S0
    dp1 = beta(p1) / (A_P * l1) * (A_P * sd + ai * q(P_PUMP - p1) - ao * q(p1 - P_TANK))
    dp2 = beta(p2) / (A_P * l2) * (-A_P * sd + ao * q(P_PUMP - p2) - ai * q(p2 - P_TANK))
    fh = (p2 - p1) * A_P - C_VISC * sd
    c12 = math.cos(th1 - th2)
    s12 = math.sin(th1 - th2)
    mm = np.array([[L * L * (M_LINK / 3.0 + M_P + M_H), L * L_H * M_H * c12],
                   [L * L_H * M_H * c12, L_H * L_H * M_H]])
    c = L * L_H * M_H * s12 * np.array([w2 * w2, -w1 * w1])
    f = np.array([-math.cos(th1) * L * G * (M_LINK / 2.0 + M_P + M_H),
                  -M_H * L_H * G * math.cos(th2)])
    acc = np.linalg.solve(mm, f - c + np.array([j1 * fh, 0.0]))
    return np.array([w1, w2, acc[0], acc[1], dp1, dp2])


def actuator_length(th1: float) -> float:
    """s1 = L sqrt(1 - (sqrt 3/2) cos theta1)."""
    return L * math.sqrt(1.0 - math.sqrt(3.0) / 2.0 * math.cos(th1))


# ---------------------------------------------------------------- run M1
def simulate_m1(t_end: float = 10.0, *, rtol: float = 1e-10, atol: float = 1e-10,
                max_step: float = 0.01) -> object:
    """M1, monolithic, Radau; results on the reference's 10 ms grid (and the event times)."""
    d = build()
    sim = Simulator(d, solver="radau", rtol=rtol, atol=atol, dt=0.01, max_step=max_step,
                    record=["actuator.s", "actuator.sd", "cyl.p_1", "cyl.p_2", "cyl.force",
                            "kappa.kappa"])
    return sim.run(t_end)


def s1_at(res: object, times) -> np.ndarray:
    """s1 at the given times from a results object (exact grid points)."""
    t = np.asarray(res.time)
    out = []
    for ti in times:
        i = int(np.argmin(np.abs(t - ti)))
        if abs(t[i] - ti) > 1e-9:
            raise ValueError(f"t = {ti} s is not on the output grid")
        out.append(res["actuator.s"][i])
    return np.array(out)


def main() -> None:
    import sys
    import time
    w = time.perf_counter()
    res = simulate_m1()
    wall = time.perf_counter() - w
    print(f"LIM hydraulic manipulator, M1, monolithic Radau (rtol 1e-10): {wall:.1f} s wall")
    print(f"{'t [s]':>6} {'s1 [m]':>12} {'reference':>12} {'error [m]':>10}")
    times = sorted(REF_S1)
    for ti, s in zip(times, s1_at(res, times)):
        print(f"{ti:6.2f} {s:12.8f} {REF_S1[ti]:12.8f} {s - REF_S1[ti]:10.2e}")
    if "--cosim" in sys.argv[1:]:
        for order in (0, 1):
            w = time.perf_counter()
            r = cosim_m1(6.0, extrapolation=order)
            print(f"co-simulation, Jacobi f-s, H = 1 ms, extrapolation order {order}: "
                  f"s1(6) - reference = {r['mech.s'][-1] - REF_S1[6.0]:.3e} m "
                  f"(published explicit Jacobi ZOH: 5.67e-5 m), "
                  f"{time.perf_counter() - w:.1f} s wall")


if __name__ == "__main__":
    main()
