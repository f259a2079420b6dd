"""A crane barge in 6 DOF in a JONSWAP sea lifting a pendulum load on an elastic hoist rope.

Blocks: :class:`~blocks.ocean.wave_loads.WaveLoads` (Froude-Krylov force RAOs of the box hull
and a representative slow drift, seed formula) drives a
:class:`~blocks.ocean.vessel.Vessel6DOF` (the representative 100 m x 30 m x 5 m barge of
:meth:`VesselData.box_barge`, 10/5/8 % critical damping in heave/roll/pitch, a linear
horizontal mooring with a 100 s surge period); the load is a particle of a
:mod:`blocks.multibody` mechanism (gravity, one ``rope`` load input); the :class:`HoistRope`
block joins the crane tip (a hull point of the vessel) and the hook.

Coupling (why this way).  The multibody package has no moving base driven by an input and
no place for a constant 6x6 added mass (its mass matrix is built per body, the translational
velocities of a spatial body are global, so a body-axes :math:`M_A` would be
configuration-dependent): so the vessel is its own block and the crane-load system a
mechanism, coupled by forces.  Crane tip position/velocity (vessel, state only) and hook
position/velocity (mechanism, state only) feed the rope, whose force goes back to both as
inputs: a force-displacement coupling without algebraic loop, all states in one integrator,
so no exchange delay and no co-simulation stability limit.  The only limit is the explicit
integrator on the stiffest mode, the load bouncing on the rope,
:math:`\\omega_r \\approx \\sqrt{k/m} \\approx 7` rad/s: RK4 with ``dt`` = 0.05 s
(:math:`h\\omega_r = 0.35`, limit 2.8).  The load (200 t) is 1.3 % of the barge's mass: in
a partitioned (co-simulated) scheme with an inextensible rope (tip acceleration to the load,
rope force back to the vessel) a Jacobi exchange of the force would then be stable (the
iteration matrix scales with the mass ratio); the elastic rope avoids that question here.
The crane itself (boom, slewing) is rigid and its mass is part of the barge's.

A counterweight equal to the load's weight, at the crane tip's mirror point about the CG,
keeps the barge upright (as the ballast does in practice); the barge then floats
:math:`2 m_l g/C_{33}` deeper.  The rope length is that of the loaded rope.

Run ``python examples/crane_vessel_6dof.py [--quick] [--out DIR] [--t-end S]``: prints the
load's sway and the barge's motions, writes ``results.csv`` to ``--out`` (default
``out/crane_vessel_6dof``).
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

from blocks.multibody import Mechanism, MultibodyBlock
from blocks.ocean import JONSWAP, IrregularSea
from blocks.ocean.vessel import Vessel6DOF, VesselData
from blocks.ocean.wave_loads import DriftCoefficients, ForceRAO, WaveLoads
from blocks.sources import Constant
from cosim import Block, DiagramBuilder, FunctionBlock, Simulator
from cosim.codegen.model import CContext, CModel, c_float
from cosim.writers import CsvWriter

G = 9.81
L_B, B_B, T_B, KG = 100.0, 30.0, 5.0, 8.0
#: Crane tip and counterweight in body coordinates (origin at the CG, 3 m above the
#: waterline): aft, over the port side, 40 m above the waterline.
TIP = np.array([-35.0, 12.0, 37.0])
BALLAST = np.array([35.0, -12.0, 0.0])
LOAD_MASS = 200e3  # kg
ROPE_LENGTH = 25.0  # m, loaded (the seed's l = 25 m)
ROPE_STIFFNESS = 1.0e7  # N/m, EA/l of the reeved hoist rope
ROPE_DAMPING = 2 * 0.02 * math.sqrt(ROPE_STIFFNESS * LOAD_MASS)  # 2 % of critical
MOORING_PERIOD = 100.0  # s, surge, sway and yaw
SEA = dict(hs=2.0, tp=8.0, gamma=3.3, heading=math.radians(150.0), n=100, seed=1)
SIMULATION = dict(t_end=600.0, quick_t_end=60.0, dt=0.05)


def barge(damped: bool = True) -> VesselData:
    d = VesselData.box_barge(L_B, B_B, T_B, KG)
    if not damped:
        return d
    Mt = d.total_mass()
    wm = 2 * math.pi / MOORING_PERIOD
    horiz = [2 * 0.05 * Mt[i, i] * wm for i in (0, 1, 5)]  # 5 % of the mooring modes
    return d.with_damping_ratios(0.10, 0.05, 0.08, horizontal=horiz)


def mooring_stiffness(data: VesselData) -> np.ndarray:
    """Surge, sway, yaw stiffness giving ``MOORING_PERIOD`` [N/m, N/m, N m/rad]."""
    Mt = data.total_mass()
    wm = 2 * math.pi / MOORING_PERIOD
    return np.array([Mt[0, 0], Mt[1, 1], Mt[5, 5]]) * wm * wm


class HoistRope(Block):
    """An elastic rope between the crane tip and the hook (tension only).

    .. math::

        \\ell = |\\mathbf d|, \\quad \\mathbf d = \\mathbf x_h - \\mathbf x_t, \\quad
        T = \\max\\big(0,\\; k(\\ell - \\ell_0) + c\\,\\dot\\ell\\big)
        \\ \\text{if}\\ \\ell > \\ell_0 \\ \\text{else}\\ 0, \\quad
        \\mathbf F_t = T\\,\\mathbf d/\\ell = -\\mathbf F_h

    Ports
    -----
    in   tip_pos, tip_vel    (3,)  m, m/s   crane tip (global)
    in   hook_pos, hook_vel  (3,)  m, m/s   hook (global)
    out  tip_force           (3,)  N        on the crane tip
    out  hook_force          (3,)  N        on the hook
    out  tension             scalar N
    """

    def __init__(self, name: str, length0: float, stiffness: float, damping: float = 0.0):
        super().__init__(name)
        self.l0, self.k, self.c = float(length0), float(stiffness), float(damping)
        self.pt = self.declare_input("tip_pos", shape=(3,), unit="m")
        self.vt = self.declare_input("tip_vel", shape=(3,), unit="m/s")
        self.ph = self.declare_input("hook_pos", shape=(3,), unit="m")
        self.vh = self.declare_input("hook_vel", shape=(3,), unit="m/s")
        self.tip_force, self.hook_force, self.tension = self.declare_outputs(
            [dict(name="tip_force", shape=(3,), unit="N"),
             dict(name="hook_force", shape=(3,), unit="N"),
             dict(name="tension", unit="N")], self._calc)

    def _calc(self, ctx):
        d = ctx.input(self.ph) - ctx.input(self.pt)
        ell = float(np.linalg.norm(d))
        e = d / ell
        rate = float(e @ (ctx.input(self.vh) - ctx.input(self.vt)))
        T = max(0.0, self.k * (ell - self.l0) + self.c * rate) if ell > self.l0 else 0.0
        return T * e, -T * e, T

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`_calc` term by term; length, stiffness and damping are constants.
        NumPy's ``norm`` and ``@`` of 3-vectors are OpenBLAS dot products (their own order,
        fused multiply-adds on some CPUs): equal to the Python loop to about 1e-16 relative,
        not bit for bit."""
        d = [f"({cg.u(self.ph, k)} - {cg.u(self.pt, k)})" for k in range(3)]
        dv = [f"({cg.u(self.vh, k)} - {cg.u(self.vt, k)})" for k in range(3)]
        k_, c_, l0 = c_float(self.k), c_float(self.c), c_float(self.l0)
        code = ("{\n" + "".join(f"double d{k} = {d[k]};\n" for k in range(3))
                + "double ell = sqrt(d0 * d0 + d1 * d1 + d2 * d2);\n"
                "double e0 = d0 / ell, e1 = d1 / ell, e2 = d2 / ell;\n"
                f"double rate = e0 * {dv[0]} + e1 * {dv[1]} + e2 * {dv[2]};\n"
                "double T = 0.0;\n"
                f"if (ell > {l0}) {{\n    double f = {k_} * (ell - {l0}) + {c_} * rate;\n"
                "    T = (0.0 >= f) ? 0.0 : f;\n}\n"
                + "".join(f"{cg.y(self.tip_force, k)} = T * e{k};\n"
                          f"{cg.y(self.hook_force, k)} = (-T) * e{k};\n" for k in range(3))
                + f"{cg.y(self.tension)} = T;\n}}")
        return CModel(outputs={"tip_force": code, "hook_force": "", "tension": ""})

    def energy(self, ell: float) -> float:
        return 0.5 * self.k * max(0.0, ell - self.l0) ** 2


def make_sea(hs=SEA["hs"], tp=SEA["tp"], heading=SEA["heading"], n=SEA["n"], seed=SEA["seed"]):
    return IrregularSea.from_spectrum(JONSWAP(hs, tp, SEA["gamma"]), n, heading=heading,
                                      seed=seed)


def make_tables(heading=SEA["heading"]):
    w = np.linspace(0.05, 4.0, 80)
    rao = ForceRAO.froude_krylov_box(L_B, B_B, T_B, w, heading=heading,
                                     reference=(0.0, 0.0, KG - T_B))
    drift = DriftCoefficients.box_reflection(L_B, B_B, T_B, w, heading=heading)
    return rao, drift


def equilibrium(data: VesselData, z_eq: float = 0.0, load_mass: float = LOAD_MASS,
                rope_length: float = ROPE_LENGTH, stiffness: float = ROPE_STIFFNESS) -> dict:
    """Static equilibrium: CG height, hook position, rope tension and unstretched length."""
    W = load_mass * G
    c33 = data.restoring()[0]
    z = z_eq - 2 * W / c33  # load and counterweight
    r = np.array([0.0, 0.0, z])
    hook = r + TIP - np.array([0.0, 0.0, rope_length])
    return {"r": r, "hook": hook, "tension": W, "length0": rope_length - W / stiffness,
            "weight": W}


def build(data: VesselData | None = None, *, sea=None, waves: bool = True,
          mooring: bool = True, rope_damping: float = ROPE_DAMPING,
          vessel_state: np.ndarray | None = None, hook_pos=None, hook_vel=None,
          load_mass: float = LOAD_MASS):
    """The diagram; ``vessel_state`` (13,) and ``hook_pos``/``hook_vel`` override the
    equilibrium start."""
    data = barge() if data is None else data
    eq = equilibrium(data, load_mass=load_mass)
    b = DiagramBuilder("crane_vessel_6dof")
    v = b.add(Vessel6DOF("vessel", data, position=eq["r"], z_eq=0.0, points={"tip": TIP},
                         load_points={"tip": TIP, "ballast": BALLAST},
                         external=mooring, wave=waves, initial_state=vessel_state))
    mech = Mechanism("load", dim=3, gravity=(0.0, 0.0, -G), compiled=False)
    mech.add_particle("load", mass=load_mass,
                      position=eq["hook"] if hook_pos is None else hook_pos,
                      velocity=hook_vel)
    mech.add_load("rope", "load.cm")
    load = b.add(MultibodyBlock("load", mech, markers=["load.cm"]))
    rope = b.add(HoistRope("rope", eq["length0"], ROPE_STIFFNESS, rope_damping))
    ballast = b.add(Constant("ballast", np.array([0.0, 0.0, -eq["weight"]]), unit="N"))
    b.connect(v.output("tip_pos"), rope.input("tip_pos"))
    b.connect(v.output("tip_vel"), rope.input("tip_vel"))
    b.connect(load.output("load_cm_pos"), rope.input("hook_pos"))
    b.connect(load.output("load_cm_vel"), rope.input("hook_vel"))
    b.connect(rope.output("tip_force"), v.input("tip_force"))
    b.connect(rope.output("hook_force"), load.input("rope"))
    b.connect(ballast.output("y"), v.input("ballast_force"))
    if waves:
        rao, drift = make_tables(SEA["heading"] if sea is None else sea.heading[0])
        wl = b.add(WaveLoads("waves", make_sea() if sea is None else sea, rao, drift))
        b.connect(wl.output("force"), v.input("wave_force"))
        b.connect(wl.output("moment"), v.input("wave_moment"))
    if mooring:
        k = mooring_stiffness(data)
        moor = b.add(FunctionBlock(
            "mooring", lambda p, psi: (np.array([-k[0] * p[0], -k[1] * p[1], 0.0]),
                                       np.array([0.0, 0.0, -k[2] * psi])),
            inputs=[dict(name="position", shape=(3,), unit="m"),
                    dict(name="heading", unit="rad")],
            outputs=[dict(name="force", shape=(3,), unit="N"),
                     dict(name="moment", shape=(3,), unit="N*m")]))
        b.connect(v.output("position"), moor.input("position"))
        b.connect(v.output("heading"), moor.input("heading"))
        b.connect(moor.output("force"), v.input("force"))
        b.connect(moor.output("moment"), v.input("moment"))
    return b.build()


RECORD = ["vessel.position", "vessel.rotation", "vessel.tip_pos", "load.load_cm_pos",
          "rope.tension", "waves.eta", "waves.second_order"]


def run(t_end: float, dt: float = SIMULATION["dt"], observers=(), **kw):
    d = build(**kw)
    sim = Simulator(d, solver="rk4", dt=dt, record=RECORD, observers=list(observers))
    wall = time.perf_counter()
    res = sim.run(t_end)
    return res, time.perf_counter() - wall


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/crane_vessel_6dof", help="output folder")
    ap.add_argument("--t-end", type=float, default=None)
    ap.add_argument("--quick", action="store_true", help=f"{SIMULATION['quick_t_end']:g} s")
    args = ap.parse_args(argv)
    t_end = args.t_end or (SIMULATION["quick_t_end"] if args.quick else SIMULATION["t_end"])
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "results.csv")
    res, wall = run(t_end, observers=[CsvWriter(path, RECORD)])
    data = barge()
    eq = equilibrium(data)
    pos, rot = res["vessel.position"], res["vessel.rotation"]
    rel = res["load.load_cm_pos"] - res["vessel.tip_pos"]
    sway = np.hypot(rel[:, 0], rel[:, 1])
    angle = np.degrees(np.arctan2(sway, -rel[:, 2]))
    tens = res["rope.tension"]
    Tn = data.natural_periods()
    s = {
        "t_end_s": t_end, "wall_s": wall, "real_time_factor": t_end / wall,
        "heave_period_s": Tn["heave"], "roll_period_s": Tn["roll"],
        "pitch_period_s": Tn["pitch"],
        "pendulum_period_s": 2 * math.pi * math.sqrt(ROPE_LENGTH / G),
        "heave_std_m": float(np.std(pos[:, 2] - eq["r"][2])),
        "roll_std_deg": float(np.degrees(np.std(rot[:, 0]))),
        "pitch_std_deg": float(np.degrees(np.std(rot[:, 1]))),
        "surge_mean_m": float(np.mean(pos[:, 0])), "sway_mean_m": float(np.mean(pos[:, 1])),
        "load_sway_std_m": float(np.sqrt(np.mean(sway ** 2))),
        "load_sway_max_m": float(np.max(sway)), "rope_angle_max_deg": float(np.max(angle)),
        "tension_min_kn": float(np.min(tens) / 1e3), "tension_max_kn": float(np.max(tens) / 1e3),
        "tension_static_kn": eq["tension"] / 1e3,
        "drift_force_mean_kn": float(np.mean(res["waves.second_order"][:, 0]) / 1e3),
        "hs_realised_m": 4 * float(np.std(res["waves.eta"])), "csv": path,
    }
    print(f"Crane barge {L_B:g} x {B_B:g} x {T_B:g} m, load {LOAD_MASS / 1e3:g} t on "
          f"{ROPE_LENGTH:g} m rope, JONSWAP Hs {SEA['hs']} m Tp {SEA['tp']} s heading "
          f"{math.degrees(SEA['heading']):.0f} deg; {t_end:g} s in {wall:.1f} s "
          f"({s['real_time_factor']:.1f}x real time)")
    print(f"  periods: heave {Tn['heave']:.2f} s, roll {Tn['roll']:.2f} s, pitch "
          f"{Tn['pitch']:.2f} s, pendulum {s['pendulum_period_s']:.2f} s")
    print(f"  vessel: heave std {s['heave_std_m']:.3f} m, roll std {s['roll_std_deg']:.2f} "
          f"deg, pitch std {s['pitch_std_deg']:.2f} deg, mean offset "
          f"({s['surge_mean_m']:.2f}, {s['sway_mean_m']:.2f}) m")
    print(f"  load sway: rms {s['load_sway_std_m']:.3f} m, max {s['load_sway_max_m']:.3f} m "
          f"(rope angle max {s['rope_angle_max_deg']:.2f} deg)")
    print(f"  rope tension {s['tension_min_kn']:.0f}..{s['tension_max_kn']:.0f} kN (static "
          f"{s['tension_static_kn']:.0f} kN); mean drift {s['drift_force_mean_kn']:.1f} kN")
    print(f"  results: {path}")
    return s


if __name__ == "__main__":
    main()
