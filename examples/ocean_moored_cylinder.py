"""Moored spar cylinder in a JONSWAP sea: Morison loads and three catenary lines (surge only).

A vertical cylinder (diameter 9.4 m, draft 120 m, the OC3-Hywind spar's lower column) moves
in surge only.  Its mass is the displaced water (freely floating), its added mass the
Morison :math:`C_a` term integrated over the draft (put into the body's mass, so the
Morison block sees no acceleration: no algebraic loop).  Loads: :class:`MorisonMember`
in relative-motion form in a JONSWAP sea (Hs = 6 m, Tp = 10 s, gamma 3.3, 100 components,
seeded phases), and the OC3-Hywind catenary lines (:class:`CatenaryMooring`, 320 m depth,
three lines at 120 deg).  The surge natural period
:math:`2\\pi\\sqrt{(m + m_a)/K_{11}}` is about 2 minutes, far above the wave periods.

Run ``python examples/ocean_moored_cylinder.py [--out DIR] [--t-end S]``: it prints the
surge statistics and writes ``results.csv`` to ``--out`` (default
``out/ocean_moored_cylinder``).
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

from blocks.ocean import (
    JONSWAP,
    CatenaryMooring,
    IrregularSea,
    MooringSystem,
    MorisonMember,
    MorisonMemberModel,
)
from cosim import Block, DiagramBuilder, Simulator
from cosim.writers import CsvWriter

DEPTH = 320.0
DIAMETER, DRAFT = 9.4, 120.0
CD, CA = 0.6, 1.0
RHO = 1025.0
#: OC3-Hywind lines (Jonkman 2010, NREL/TP-500-47535, via anchors-domain 4.4).
LINES = dict(n_lines=3, depth=DEPTH, anchor_radius=853.87, fairlead_radius=5.2,
             fairlead_z=-70.0, length=902.2, ea=384.243e6, w=698.094)
SEA = dict(hs=6.0, tp=10.0, gamma=3.3)
SIMULATION = dict(t_end=300.0, dt=0.2, solver="rk4")


class SurgeBody(Block):
    """A rigid body moving in surge only: :math:`(m + m_a)\\ddot x = F_x`.

    Ports
    -----
    in   force             (3,)  N      external forces (only x is used)
    in   mooring_force     (3,)  N
    out  position          (3,)  m      (x, 0, 0)
    out  rotation          (3,)  rad    zeros
    out  velocity          (3,)  m/s    (v, 0, 0)
    out  angular_velocity  (3,)  rad/s  zeros
    out  heading           scalar rad   0
    out  x                 scalar m
    """

    def __init__(self, name: str, mass: float, x0: float = 0.0) -> None:
        super().__init__(name)
        self.mass = float(mass)
        self.f = self.declare_input("force", shape=(3,), unit="N")
        self.fm = self.declare_input("mooring_force", shape=(3,), unit="N")
        self.s = self.declare_continuous_state("s", [x0, 0.0])
        z3 = np.zeros(3)

        def state(ctx):
            return ctx.state(self.s)
        self.position = self.declare_output(
            "position", lambda c: np.array([state(c)[0], 0.0, 0.0]), shape=(3,), unit="m",
            depends_on=())
        self.rotation = self.declare_output("rotation", lambda c: z3, shape=(3,), unit="rad",
                                            depends_on=())
        self.velocity = self.declare_output(
            "velocity", lambda c: np.array([state(c)[1], 0.0, 0.0]), shape=(3,), unit="m/s",
            depends_on=())
        self.angular_velocity = self.declare_output("angular_velocity", lambda c: z3,
                                                    shape=(3,), unit="rad/s", depends_on=())
        self.heading = self.declare_output("heading", lambda c: 0.0, unit="rad", depends_on=())
        self.x = self.declare_output("x", lambda c: float(state(c)[0]), unit="m",
                                     depends_on=())

    def c_model(self, cg):
        """C of the outputs and :meth:`derivatives`."""
        from cosim.codegen.model import CModel, c_float
        x, v = cg.x(self.s, 0), cg.x(self.s, 1)

        def vec(port, first):
            return "\n".join(f"{cg.y(port, i)} = {first if i == 0 else '0.0'};"
                             for i in range(3))
        return CModel(
            outputs={"position": vec(self.position, x), "rotation": vec(self.rotation, "0.0"),
                     "velocity": vec(self.velocity, v),
                     "angular_velocity": vec(self.angular_velocity, "0.0"),
                     "heading": f"{cg.y(self.heading)} = 0.0;", "x": f"{cg.y(self.x)} = {x};"},
            derivatives=(f"{cg.dx(self.s, 0)} = {v};\n{cg.dx(self.s, 1)} = "
                         f"({cg.u(self.f, 0)} + {cg.u(self.fm, 0)}) / {c_float(self.mass)};"))

    def derivatives(self, ctx):
        x, v = ctx.state(self.s)
        fx = ctx.input(self.f)[0] + ctx.input(self.fm)[0]
        return np.array([v, fx / self.mass])


def make_sea(hs: float = SEA["hs"], tp: float = SEA["tp"], seed: int = 1,
             n_components: int = 100) -> IrregularSea:
    return IrregularSea.from_spectrum(JONSWAP(hs, tp, SEA["gamma"]), n_components,
                                      method="equal_energy", seed=seed, depth=DEPTH, rho=RHO)


def masses(sea) -> tuple[float, float]:
    """Structural mass (displacement) and surge added mass [kg]."""
    m = RHO * math.pi * DIAMETER ** 2 / 4 * DRAFT
    model = MorisonMemberModel(sea, DIAMETER, CD, CA, wet_to="swl")
    ma = model.added_mass_matrix([0, 0, -DRAFT], [0, 0, 0.0])[0, 0]
    return m, ma


def build(sea=None, x0: float = 0.0):
    sea = make_sea() if sea is None else sea
    m, ma = masses(sea)
    b = DiagramBuilder("ocean_moored_cylinder")
    body = b.add(SurgeBody("body", m + ma, x0))
    # the member reaches above the SWL so that it is cut at the instantaneous surface
    member = b.add(MorisonMember("morison", sea, [0, 0, -DRAFT], [0, 0, 15.0], DIAMETER, CD,
                                 CA, motion="rigid_body"))
    moor = b.add(CatenaryMooring("mooring", MooringSystem.symmetric(
        heading0=math.pi, **LINES)))
    for p in ("position", "rotation", "velocity", "angular_velocity"):
        b.connect(body.output(p), member.input(p))
    b.connect(body.position, moor.position)
    b.connect(body.heading, moor.heading)
    b.connect(member.force, body.f)
    b.connect(moor.force, body.fm)
    return b.build()


RECORD = ["body.x", "morison.force", "mooring.force", "mooring.tensions"]


def run(sea=None, x0: float = 0.0, t_end: float = SIMULATION["t_end"],
        dt: float = SIMULATION["dt"], observers=()):
    d = build(sea, x0)
    sim = Simulator(d, solver=SIMULATION["solver"], dt=dt, record=RECORD,
                    observers=list(observers))
    wall = time.perf_counter()
    res = sim.run(t_end)
    return res, time.perf_counter() - wall


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/ocean_moored_cylinder", help="output folder")
    ap.add_argument("--t-end", type=float, default=SIMULATION["t_end"])
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "results.csv")
    res, wall = run(t_end=args.t_end, observers=[CsvWriter(path, RECORD)])
    sea = make_sea()
    m, ma = masses(sea)
    k11 = MooringSystem.symmetric(heading0=math.pi, **LINES).stiffness()[0, 0]
    x = res["body.x"]
    tens = res["mooring.tensions"]
    s = {
        "mass_kg": m, "added_mass_kg": ma, "k11_n_per_m": float(k11),
        "surge_period_s": 2 * math.pi * math.sqrt((m + ma) / k11),
        "surge_mean_m": float(np.mean(x)), "surge_std_m": float(np.std(x)),
        "surge_max_abs_m": float(np.max(np.abs(x))),
        "wave_force_max_n": float(np.max(np.abs(res["morison.force"][:, 0]))),
        "tension_max_n": float(np.max(tens)), "tension_min_n": float(np.min(tens)),
        "sea_hm0_m": 4 * math.sqrt(sea.variance),
        "wall_s": wall, "real_time_factor": args.t_end / wall, "csv": path,
    }
    print(f"Moored cylinder (D {DIAMETER} m, draft {DRAFT} m) in JONSWAP Hs {SEA['hs']} m, "
          f"Tp {SEA['tp']} s; {args.t_end:g} s in {wall:.2f} s "
          f"({s['real_time_factor']:.0f}x real time)")
    print(f"  mass {m:.4g} kg + added {ma:.4g} kg, K11 {k11:.5g} N/m, surge period "
          f"{s['surge_period_s']:.1f} s")
    print(f"  surge mean {s['surge_mean_m']:.3f} m, std {s['surge_std_m']:.3f} m, "
          f"max |x| {s['surge_max_abs_m']:.3f} m")
    print(f"  max wave force {s['wave_force_max_n'] / 1e3:.0f} kN, fairlead tension "
          f"{s['tension_min_n'] / 1e3:.0f}..{s['tension_max_n'] / 1e3:.0f} kN")
    print(f"  results: {path}")
    return s


if __name__ == "__main__":
    main()
