"""The flagship plant: an electro-hydraulic manipulator in three domains, and its controller.

Used by ``examples/flagship.py`` (module docstring there: design and figures).

Domains and blocks
------------------
* **Mechanics** (:mod:`blocks.multibody`): the LIM 2-DOF boom of
  ``examples/lim_manipulator.py`` unchanged (link 1, tip and hanging hand masses,
  Lagrange multipliers with Baumgarte; actuator geometry s(P), f_h along P - B).
* **Hydraulics** (:mod:`blocks.hydraulics`): the LIM cylinder (A = 65 cm^2 both
  sides, stroke 0.442 m, viscous friction 1e5 N s/m, LIM oil), here with 0.2 L of hose
  volume per chamber, fed by a 4/3 servo-sized spool valve (edge area 10 mm^2, 5 %
  underlap) from a **supply volume** (1 L) that a fixed-displacement pump
  (25 cm^3/rev) charges and a relief valve (cracking 10 MPa, fully open 11 MPa)
  limits.  The supply pressure is a state, not a constant: it comes from the drive.
* **Electric drive** (:mod:`blocks.electric`): a 6 kW permanent-magnet DC motor
  (1.2 N m/A, 0.4 Ohm, 4 mH, 0.08 kg m^2 with the pump) on the pump shaft, with a
  sampled PI speed controller (2 ms, 1500 rpm); its load torque is the pump's,
  D (p_s - p_T).

The **position controller** (:func:`controller_diagram`) is the part exported as an FMU:
a set-point profile (a table over time), velocity feed-forward through the nominal
valve gain, and a sampled PI (1 ms) on the measured actuator length s; output the spool
position u.  All its blocks have generated-C descriptions (``fmus.cgen``).

Co-simulation semantics of a sampled controller: a Co-Simulation FMU holds its inputs
over a communication step and its PI at the hit ending the step reads the input set
at its start, i.e. u(t_k) is computed from s(t_{k-1}).  The monolithic reference
(:func:`monolithic_diagram`) reproduces exactly that with a :class:`~blocks.discrete.
UnitDelay` on the measurement, so that the co-simulated and the monolithic runs differ
by the coupling of the continuous parts only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from blocks.discrete import UnitDelay, ZeroOrderHold
from blocks.electric import DCMotor
from blocks.hydraulics import (
    LIM_OIL,
    CylinderFriction,
    DoubleActingCylinder,
    FixedDisplacementPump,
    PressureSource,
    ReliefValve,
    SpoolValve43,
    Volume,
)
from blocks.math import Sum
from blocks.pid import DiscretePID
from blocks.sources import Constant, TimeSource
from blocks.tables import Table1D
from cosim import DiagramBuilder, FunctionBlock

try:  # imported as examples.flagship_model (tests)
    from examples.lim_manipulator import (
        A_P,
        C_VISC,
        CD,
        F_H0,
        L_CYL,
        S0,
        add_mechanics,
        mechanics_diagram,  # noqa: F401  (re-exported: the boom subsystem is the LIM one)
    )
except ModuleNotFoundError:  # run from examples/
    from lim_manipulator import (
        A_P,
        C_VISC,
        CD,
        F_H0,
        L_CYL,
        S0,
        add_mechanics,
        mechanics_diagram,  # noqa: F401  (re-exported: the boom subsystem is the LIM one)
    )

# ------------------------------------------------------------------ parameters
P_TANK = 0.1e6                     # tank [Pa]
PUMP_DISP = 25e-6                  # pump displacement [m^3/rev]
SUPPLY_VOLUME = 1.0e-3             # supply volume (pump to valve, hoses) [m^3]
RELIEF_CRACK, RELIEF_FULL = 10.0e6, 11.0e6   # relief valve [Pa]
RELIEF_AREA = 1.0e-5               # relief valve fully open area [m^2]
VALVE_AREA = 1.0e-5                # spool valve edge area at full opening [m^2]
VALVE_LAP = -0.05                  # 5 % underlap (open centre: well-defined pressures)
DEAD_VOLUME = 2.0e-4               # hose volume per chamber [m^3]
MOTOR = dict(resistance_ohm=0.4, inductance_h=4e-3, torque_constant_nm_per_a=1.2,
             inertia_kgm2=0.08, friction_nms_per_rad=0.005)
SPEED_REF = 1500.0 * 2.0 * math.pi / 60.0   # [rad/s]
SPEED_PERIOD = 2e-3                # speed controller period [s]
SPEED_KP, SPEED_KI = 1.0, 20.0     # [V s/rad], [V/rad]
U_MAX = 400.0                      # DC link [V]
CTRL_PERIOD = 1e-3                 # position controller period [s]
POS_KP, POS_KI = 60.0, 150.0       # [1/m], [1/(m s)]
#: Nominal valve velocity gain ds/du [m/s] at 5 MPa across an edge (for the feed-forward).
KV_NOMINAL = CD * VALVE_AREA * math.sqrt(2.0 * 5.0e6 / LIM_OIL.density_kg_m3) / A_P


# ------------------------------------------------------------------ manoeuvre
def profile(quick: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Set-point of the actuator length s: holds and cosine moves.

    Returns ``(t, s_ref, v_ref, t_end)`` sampled every 10 ms (the controller's tables).
    Full: 0.50 m, up to 0.60 m over 2 s, hold, down to 0.48 m over 2 s, hold (8 s);
    quick: 0.50 -> 0.56 m over 1.2 s, back to 0.52 m over 1.2 s (4 s).
    """
    if quick:
        moves, t_end = [(0.3, 1.5, S0, 0.56), (2.0, 3.2, 0.56, 0.52)], 4.0
    else:
        moves, t_end = [(0.5, 2.5, S0, 0.60), (4.0, 6.0, 0.60, 0.48)], 8.0
    t = np.round(np.arange(0.0, t_end + 0.1 + 1e-9, 0.01), 10)
    s = np.full_like(t, S0)
    v = np.zeros_like(t)
    for t0, t1, a, b in moves:
        on = (t >= t0) & (t <= t1)
        ph = (t[on] - t0) / (t1 - t0)
        s[on] = a + (b - a) * 0.5 * (1.0 - np.cos(math.pi * ph))
        v[on] = (b - a) * 0.5 * math.pi / (t1 - t0) * np.sin(math.pi * ph)
        s[t > t1] = b
    return t, s, v, t_end


# ------------------------------------------------------------------ equilibrium
def _valve() -> SpoolValve43:
    return SpoolValve43("valve", area_max_m2=VALVE_AREA, cd=CD, fluid=LIM_OIL, lap=VALVE_LAP)


def _relief() -> ReliefValve:
    return ReliefValve("relief", cracking_pressure_pa=RELIEF_CRACK,
                       full_open_pressure_pa=RELIEF_FULL, area_max_m2=RELIEF_AREA, cd=CD,
                       fluid=LIM_OIL)


def equilibrium() -> dict:
    """The initial steady state: boom at rest at s = s0 (f_h = 8829 N, LIM), drive at
    its speed set-point, pump flow = valve + relief flow.

    Unknowns ``(p_s, p_A, p_B, u)`` (valve port A on the piston side = LIM chamber 2, B
    on the rod side) from: no flow into either chamber, (p_A - p_B) A = f_h, and the
    supply balance; then the motor current and voltage.
    """
    from scipy.optimize import fsolve
    valve, relief = _valve(), _relief()
    q_pump = PUMP_DISP / (2.0 * math.pi) * SPEED_REF

    def res(z):
        ps, pa, pb, u = z * np.array([1e6, 1e6, 1e6, 1e-3])
        qpa, qat, qpb, qbt = valve.edge_flows(u, ps, P_TANK, pa, pb)
        return np.array([(qpa - qat) * 1e5, (qpb - qbt) * 1e5,
                         ((pa - pb) * A_P - F_H0) * 1e-3,
                         (q_pump - qpa - qpb - relief.flow(ps - P_TANK)) * 1e5])
    z0 = np.array([10.3, 5.9, 4.5, 3.0])
    z, info, ok, msg = fsolve(res, z0, full_output=True, xtol=1e-13)
    if ok != 1 or np.max(np.abs(res(z))) > 1e-6:
        raise RuntimeError(f"flagship: no initial equilibrium ({msg})")
    ps, pa, pb, u = z * np.array([1e6, 1e6, 1e6, 1e-3])
    torque = PUMP_DISP / (2.0 * math.pi) * (ps - P_TANK)
    k, R, b = (MOTOR["torque_constant_nm_per_a"], MOTOR["resistance_ohm"],
               MOTOR["friction_nms_per_rad"])
    i0 = (torque + b * SPEED_REF) / k
    return {"p_s": ps, "p_piston": pa, "p_rod": pb, "u": u, "i": i0,
            "v": R * i0 + k * SPEED_REF, "torque": torque, "q_pump": q_pump,
            "q_relief": relief.flow(ps - P_TANK)}


# ------------------------------------------------------------------ domains
def add_drive(b: DiagramBuilder, eq: dict) -> dict:
    """DC motor + PI speed controller; the motor's ``load_torque`` is left to connect."""
    ref = b.add(Constant("speed_ref", SPEED_REF, unit="rad/s"))
    err = b.add(Sum("speed_err", "+-", unit="rad/s"))
    pi = b.add(DiscretePID("speed_pi", SPEED_PERIOD, kp=SPEED_KP, ki=SPEED_KI, lower=0.0,
                           upper=U_MAX, input_unit="rad/s", unit="V", initial=eq["v"]))
    motor = b.add(DCMotor("motor", **MOTOR, current0_a=eq["i"], speed0_rad_s=SPEED_REF))
    b.connect(ref.y, err.ins[0])
    b.connect(motor.speed, "speed_err.u1")
    b.connect(err.y, pi.e)
    b.connect(pi.u, motor.voltage)
    return {"motor": motor, "pi": pi}


def add_hydraulics(b: DiagramBuilder, eq: dict) -> dict:
    """Pump, supply volume, relief valve, spool valve, cylinder.  Left to connect:
    ``pump.speed``, ``valve.u``, ``position.s`` (actuator length), ``cyl.v``."""
    pump = b.add(FixedDisplacementPump("pump", displacement_m3_per_rev=PUMP_DISP))
    tank = b.add(PressureSource("tank", P_TANK))
    supply = b.add(Volume("supply", volume_m3=SUPPLY_VOLUME, fluid=LIM_OIL, inflows=1,
                          outflows=2, p0_pa=eq["p_s"]))
    relief = b.add(_relief())
    valve = b.add(_valve())
    cyl = b.add(DoubleActingCylinder(
        "cyl", area_1_m2=A_P, area_2_m2=A_P, stroke_m=L_CYL, fluid=LIM_OIL,
        dead_volume_1_m3=DEAD_VOLUME, dead_volume_2_m3=DEAD_VOLUME,
        friction=CylinderFriction(viscous_n_s_m=C_VISC), p1_0_pa=eq["p_piston"],
        p2_0_pa=eq["p_rod"]))
    pos = b.add(FunctionBlock("position", lambda s: 0.5 * L_CYL + s - S0,
                              inputs=[("s", "m")], outputs=[("x", "m")]))
    b.connect(tank.p, pump.p_in)
    b.connect(supply.p, pump.p_out)
    b.connect(pump.q, supply.q_in[0])
    b.connect(valve.q_P, supply.q_out[0])
    b.connect(relief.q, supply.q_out[1])
    b.connect(supply.p, relief.p_in)
    b.connect(tank.p, relief.p_out)
    b.connect(supply.p, valve.p_P)
    b.connect(tank.p, valve.p_T)
    b.connect(cyl.p_1, valve.p_A)   # A on the piston side (LIM chamber 2): u > 0 extends
    b.connect(cyl.p_2, valve.p_B)   # B on the rod side (LIM chamber 1)
    b.connect(valve.q_A, cyl.q_1)
    b.connect(valve.q_B, cyl.q_2)
    b.connect(pos.out_ports[0], cyl.x)
    return {"pump": pump, "supply": supply, "relief": relief, "valve": valve, "cyl": cyl,
            "position": pos}


def add_controller(b: DiagramBuilder, quick: bool, eq: dict) -> dict:
    """Set-point tables, velocity feed-forward, sampled PI, in extensions from the home
    position s0 (the FMU's inputs start at 0: a zero input is the start pose); input
    ``err.u1`` (measured extension s - s0), outputs ``u.y`` (spool) and ``ds_ref.y``."""
    t, s_ref, v_ref, _ = profile(quick)
    clock = b.add(TimeSource("clock"))
    sref = b.add(Table1D("ds_ref", t, s_ref - S0, input_unit="s", unit="m"))
    ff = b.add(Table1D("ff", t, v_ref / KV_NOMINAL, input_unit="s", unit="1"))
    ff_hold = b.add(ZeroOrderHold("ff_hold", CTRL_PERIOD, unit="1"))
    err = b.add(Sum("err", "+-", unit="m"))
    pi = b.add(DiscretePID("pi", CTRL_PERIOD, kp=POS_KP, ki=POS_KI, lower=-1.0, upper=1.0,
                           input_unit="m", unit="1", initial=eq["u"]))
    u = b.add(Sum("u", "++", unit="1"))
    b.connect(clock.t, sref.u)
    b.connect(clock.t, ff.u)
    b.connect(ff.output("y"), ff_hold.u)
    b.connect(sref.output("y"), err.ins[0])
    b.connect(err.y, pi.e)
    b.connect(pi.u, u.ins[0])
    b.connect(ff_hold.y, u.ins[1])
    return {"ds_ref": sref, "err": err, "u": u}


def controller_diagram(quick: bool = False, eq: dict | None = None) -> Any:
    """The position controller alone (exported as the FMU): input ``ds`` [m] (measured
    extension s - s0); outputs ``u`` (spool, 1) and ``ds_ref`` [m] (set-point)."""
    eq = eq or equilibrium()
    b = DiagramBuilder("position_controller")
    c = add_controller(b, quick, eq)
    b.export_input("err.u1", "ds")
    b.export_output(c["u"].y, "u")
    b.export_output(c["ds_ref"].output("y"), "ds_ref")
    return b.build()


# ------------------------------------------------------------------ split for co-simulation
def hydraulics_diagram(eq: dict) -> Any:
    """Inputs ``speed`` (pump shaft), ``s``, ``sd`` (actuator), ``u`` (spool); outputs
    ``f_h`` (reads s, sd), ``torque`` (pump), ``p_s``, ``p1``, ``p2`` (LIM numbering),
    ``q_relief``."""
    b = DiagramBuilder("hyd")
    h = add_hydraulics(b, eq)
    b.export_input(h["pump"].speed, "speed")
    b.export_input(h["position"].in_ports[0], "s")
    b.export_input(h["cyl"].v, "sd")
    b.export_input(h["valve"].u, "u")
    b.export_output(h["cyl"].force, "f_h")
    b.export_output(h["pump"].torque, "torque")
    b.export_output(h["supply"].p, "p_s")
    b.export_output(h["cyl"].p_2, "p1")
    b.export_output(h["cyl"].p_1, "p2")
    b.export_output(h["relief"].q, "q_relief")
    return b.build()


def drive_diagram(eq: dict) -> Any:
    """Input ``torque`` (load); outputs ``speed``, ``current``, ``voltage``."""
    b = DiagramBuilder("drive")
    d = add_drive(b, eq)
    b.export_input(d["motor"].load_torque, "torque")
    b.export_output(d["motor"].speed, "speed")
    b.export_output(d["motor"].current, "current")
    b.export_output(d["pi"].u, "voltage")
    return b.build()


#: Couplings of the co-simulation (the controller subsystem is named ``ctrl``).
CONNECTIONS = [("hyd.f_h", "mech.f_h"), ("mech.s", "hyd.s"), ("mech.sd", "hyd.sd"),
               ("drive.speed", "hyd.speed"), ("hyd.torque", "drive.torque"),
               ("mech.s", "ctrl.ds", (1.0, -S0)), ("ctrl.u", "hyd.u")]
#: Sampled signals are exchanged as held values (order 0), continuous ones extrapolated.
EXTRAPOLATION = {"*": 1, "ctrl.ds": 0, "hyd.u": 0}


# ------------------------------------------------------------------ monolithic
def plant_builder(eq: dict, name: str = "flagship") -> tuple[DiagramBuilder, dict]:
    """All three domains connected, the spool input ``valve.u`` left open."""
    b = DiagramBuilder(name)
    _, kin, force = add_mechanics(b)
    h = add_hydraulics(b, eq)
    d = add_drive(b, eq)
    b.connect(kin.out_ports[0], h["position"].in_ports[0])
    b.connect(kin.out_ports[1], h["cyl"].v)
    b.connect(h["cyl"].force, force.in_ports[0])
    b.connect(d["motor"].speed, h["pump"].speed)
    b.connect(h["pump"].torque, d["motor"].load_torque)
    return b, {**h, **d, "kin": kin}


def monolithic_diagram(quick: bool = False, eq: dict | None = None) -> Any:
    """Plant + the native controller behind a one-period delay of the measurement (the
    Co-Simulation FMU's sampling, module docstring): the reference of the co-simulation."""
    eq = eq or equilibrium()
    b, p = plant_builder(eq)
    c = add_controller(b, quick, eq)
    home = b.add(Constant("home", S0, unit="m"))
    ext = b.add(Sum("extension", "+-", unit="m"))
    delay = b.add(UnitDelay("meas", CTRL_PERIOD, initial=0.0, unit="m"))
    b.connect(p["kin"].out_ports[0], ext.ins[0])
    b.connect(home.y, ext.ins[1])
    b.connect(ext.y, delay.u)
    b.connect(delay.y, "err.u1")
    b.connect(c["u"].y, p["valve"].u)
    return b.build()


#: Signals recorded by the monolithic runs, and their co-simulation names.
MONO_SIGNALS = {"actuator.s": "mech.s", "actuator.sd": "mech.sd", "supply.p": "hyd.p_s",
                "cyl.p_2": "hyd.p1", "cyl.p_1": "hyd.p2", "cyl.force": "hyd.f_h",
                "motor.speed": "drive.speed", "motor.current": "drive.current",
                "u.y": "ctrl.u", "ds_ref.y": "ctrl.ds_ref", "relief.q": "hyd.q_relief"}
