"""Moored crane vessel with a hanging load: period-3 and period-2 subharmonics.

After Kreuzer & Ellermann (seed §13).

The seed gives only the mooring polynomial, the wave and the rope length of two
cases (a crane barge with "P3-motion", a crane ship with a "P2 solution"); the
vessel, its hydrodynamics and the load are documented choices here (see
``CASES`` and ``vessel_parameters``):

* hull: a box barge L x B x T, mass rho L B T, surge added mass 5 % of it (a
  typical surge value for a barge), linear surge damping 5 % of critical
  (radiation plus viscous, lumped), wave force per amplitude from the
  Froude-Krylov force on the box (diffraction neglected);
* P3 (barge): L, B, T = 44, 12, 1.2 m (650 t) and a 40 t load, so that the
  linear surge frequency (0.215 rad/s) lies somewhat below Omega/3 = 0.267
  rad/s: the 1/3 subharmonic of a hardening (c3 > 0) Duffing-like oscillator
  needs Omega a little above 3 times the linear natural frequency (the
  response amplitude stiffens the effective frequency up to Omega/3);
* P2 (crane ship): L, B, T = 150, 36, 9 m (49 800 t) and a 2000 t load, so that
  the linear surge frequency (0.111 rad/s) is about omega/2 = 0.115 rad/s: the
  1/2 subharmonic of an oscillator with a quadratic restoring term (the
  asymmetric mooring, c2 = -37.5 kN/m^2).  The pendulum (sqrt(g/l) = 0.445
  rad/s ~ 2 omega) is not what makes period 2: the planar cart-pendulum has only
  odd nonlinearities (x -> -x, phi -> -phi symmetry), and with c2 = 0 the same
  vessel responds with period 1 (checked in the tests); lighter or heavier
  ships (surge frequency 0.14 or 0.098 rad/s) also respond with period 1.

The Poincare section is stroboscopic at the wave period; the period is
detected, the orbit refined by Newton on P^p(x) - x = 0 and its Floquet
multipliers computed; a brute-force bifurcation diagram over the wave frequency
(natural continuation from the P3 orbit, down and up) shows where period-1 and
period-3 motion occur.  Over the rope length (full run only) the P3 orbit
persists from 10 to 45 m: the light load hardly changes the surge dynamics.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import time

import numpy as np

from blocks.ocean.crane_vessel import (
    RHO_SEAWATER,
    CraneVessel,
    froude_krylov_surge_force_per_amplitude,
    linearized_frequencies,
)
from cosim import DiagramBuilder, Simulator
from cosim.periodic import (
    bifurcation_diagram,
    find_periodic_orbit,
    poincare_section,
    simulator_flow,
)
from cosim.plotting import save_figure

G = 9.81
ADDED_MASS_RATIO = 0.05      # A11 / M, surge added mass of a barge (documented choice)
SURGE_DAMPING_RATIO = 0.05   # b / (2 sqrt(c1 (M + A11 + m)))
LOAD_DAMPING_RATIO = 0.05    # d1 / (2 m sqrt(g/l)): drag on the swinging load
STEPS_PER_PERIOD = 48        # RK4 steps per wave period

CASES = {
    # seed values: wave, rope and mooring; hull and load: documented choices (module docstring)
    "P3": dict(wave_amplitude_m=0.5, wave_frequency_rad_s=0.8, rope_length_m=25.0,
               c1_n_per_m=33.4e3, c2_n_per_m2=2.9e3, c3_n_per_m3=45.5e3,
               hull_m=(44.0, 12.0, 1.2), load_mass_kg=40e3, crane_tip_height_m=20.0,
               start_states=((0.0, 0.0, 0.0, 0.0), (0.5, 0.0, 0.0, 0.0)), expected_period=3),
    "P2": dict(wave_amplitude_m=2.25, wave_frequency_rad_s=0.23, rope_length_m=49.5,
               c1_n_per_m=669.8e3, c2_n_per_m2=-37.5e3, c3_n_per_m3=8e3,
               hull_m=(150.0, 36.0, 9.0), load_mass_kg=2000e3, crane_tip_height_m=60.0,
               start_states=((0.0, 0.0, 0.0, 0.0),), expected_period=2),
}


def vessel_parameters(case: str, **overrides: float) -> dict:
    """``CraneVessel`` keyword arguments of a case (``overrides`` replace seed values)."""
    c = {**CASES[case], **overrides}
    L, B, T = c["hull_m"]
    M = RHO_SEAWATER * L * B * T
    A = ADDED_MASS_RATIO * M
    m, l_ = c["load_mass_kg"], c["rope_length_m"]
    W = c["wave_frequency_rad_s"]
    b = 2.0 * SURGE_DAMPING_RATIO * math.sqrt(c["c1_n_per_m"] * (M + A + m))
    return dict(mass_kg=M, added_mass_kg=A, damping_n_s_per_m=b,
                c1_n_per_m=c["c1_n_per_m"], c2_n_per_m2=c["c2_n_per_m2"],
                c3_n_per_m3=c["c3_n_per_m3"], wave_amplitude_m=c["wave_amplitude_m"],
                wave_frequency_rad_s=W,
                wave_force_per_amplitude_n_per_m=froude_krylov_surge_force_per_amplitude(
                    L, B, T, W),
                rope_length_m=l_, load_mass_kg=m,
                load_damping_n_s_per_m=2.0 * LOAD_DAMPING_RATIO * m * math.sqrt(G / l_),
                crane_tip_height_m=c["crane_tip_height_m"])


def build(case: str = "P3", x0=(0.0, 0.0, 0.0, 0.0), **overrides: float):
    """The vessel as a one-block diagram (the function ``cosim run`` calls)."""
    b = DiagramBuilder(f"crane_vessel_{case.lower()}")
    b.add(CraneVessel("vessel", **vessel_parameters(case, **overrides), x0_m=x0[0],
                      v0_m_s=x0[1], phi0_rad=x0[2], phi_dot0_rad_s=x0[3]))
    return b.build()


def period_of(case: str, **overrides: float) -> float:
    return 2.0 * math.pi / {**CASES[case], **overrides}["wave_frequency_rad_s"]


def simulator_factory(case: str, x0=(0.0, 0.0, 0.0, 0.0), **overrides: float):
    """``make_simulator()`` for the tools of :mod:`cosim.periodic` (RK4, fixed step)."""
    d = build(case, x0, **overrides)
    dt = round(period_of(case, **overrides) / STEPS_PER_PERIOD, 9)
    return lambda: Simulator(d, solver="rk4", dt=dt, record=False)


def study_case(case: str, n_transient: int, n_points: int) -> dict:
    """Sections from each start state, detected periods, the Newton orbit and its multipliers."""
    spec = CASES[case]
    T = period_of(case)
    runs = []
    for x0 in spec["start_states"]:
        sec = poincare_section(simulator_factory(case, x0), T, n_transient, n_points)
        runs.append({"x0": x0, "section": sec, "period": sec.period(tol=1e-6)})
    target = next((r for r in runs if r["period"] == spec["expected_period"]), None)
    orbit = None
    if target is not None:
        flow = simulator_flow(simulator_factory(case))
        orbit = find_periodic_orbit(flow, target["section"].points[-1], T,
                                    p=target["period"], tol=1e-8)
    p = vessel_parameters(case)
    w_lin = linearized_frequencies(p["mass_kg"] + p["added_mass_kg"], p["c1_n_per_m"],
                                   p["load_mass_kg"], p["rope_length_m"])
    return {"case": case, "period_s": T, "runs": runs, "orbit": orbit,
            "linear_frequencies_rad_s": w_lin, "parameters": p}


def omega_diagram(start_state, omegas_down, omegas_up, n_transient: int, n_points: int):
    """Two natural-continuation sweeps of the wave frequency from the P3 orbit."""
    def make(w):
        return simulator_factory("P3", wave_frequency_rad_s=w)()
    out = []
    for ws in (omegas_down, omegas_up):
        out.append(bifurcation_diagram(make, ws, lambda w: 2 * math.pi / w, n_transient,
                                       n_points, coordinate=0, x0=start_state, tol=1e-3))
    return out


def rope_diagram(start_state, lengths, n_transient: int, n_points: int):
    def make(l_):
        return simulator_factory("P3", rope_length_m=l_)()
    return bifurcation_diagram(make, lengths, period_of("P3"), n_transient, n_points,
                               coordinate=0, x0=start_state, tol=1e-3)


def _write_rows(path: str, header: list, rows) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/crane_vessel", help="output folder")
    ap.add_argument("--quick", action="store_true", help="short runs (for the tests)")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    wall = time.perf_counter()
    n_tr, n_pts = (240, 12) if args.quick else (400, 30)
    studies = {c: study_case(c, n_tr if c == "P3" else n_tr // 2, n_pts) for c in CASES}
    summary: dict = {"cases": {}}
    for c, s in studies.items():
        o = s["orbit"]
        summary["cases"][c] = {
            "periods": [r["period"] for r in s["runs"]],
            "start_states": [r["x0"] for r in s["runs"]],
            "orbit_period": None if o is None else o.period,
            "orbit_converged": None if o is None else o.converged,
            "orbit_residual": None if o is None else o.residual,
            "floquet_multipliers": None if o is None else o.multipliers,
            "spectral_radius": None if o is None else o.spectral_radius,
            "stable": None if o is None else o.stable,
            "orbit_surge_m": None if o is None else o.points[:, 0],
            "linear_frequencies_rad_s": s["linear_frequencies_rad_s"],
        }
        rows = [(c, i, k, *pt) for i, r in enumerate(s["runs"])
                for k, pt in enumerate(r["section"].points)]
        _write_rows(os.path.join(args.out, f"sections_{c.lower()}.csv"),
                    ["case", "run", "k", "x_m", "v_m_s", "phi_rad", "phi_dot_rad_s"], rows)
    p3 = studies["P3"]
    start = next((r["section"].final_state for r in p3["runs"] if r["period"] == 3), None)
    if start is None:
        start = np.array(CASES["P3"]["start_states"][-1], dtype=float)
    if args.quick:
        down, up, dtr, dpts = [0.80, 0.76, 0.72], [0.80, 0.90, 1.00, 1.10], 200, 8
    else:
        down = np.round(np.arange(0.80, 0.659, -0.02), 3)
        up = np.round(np.arange(0.80, 1.121, 0.02), 3)
        dtr, dpts = 200, 24
    diagrams = omega_diagram(start, down, up, dtr, dpts)
    rows = [("down" if i == 0 else "up", *r) for i, d in enumerate(diagrams) for r in d.rows()]
    _write_rows(os.path.join(args.out, "diagram_omega.csv"),
                ["sweep", "omega_rad_s", "k", "x_m", "period"], rows)
    by_period: dict = {}
    for d in diagrams:
        for w, per in zip(d.params, d.periods):
            by_period.setdefault(per, set()).add(float(w))
    summary["omega_diagram"] = {str(k): sorted(v) for k, v in by_period.items()}
    if not args.quick:
        rd = rope_diagram(start, np.arange(10.0, 45.1, 5.0), dtr, dpts)
        _write_rows(os.path.join(args.out, "diagram_rope.csv"),
                    ["rope_length_m", "k", "x_m", "period"], rd.rows())
        summary["rope_diagram"] = dict(zip(rd.params.tolist(), rd.periods))
    summary["wall_s"] = time.perf_counter() - wall
    for c, s in summary["cases"].items():
        print(f"{c}: periods from the start states {s['periods']}; orbit period "
              f"{s['orbit_period']}, |mu|max = {s['spectral_radius']}, stable {s['stable']}")
    print("wave-frequency diagram (period: omegas):", summary["omega_diagram"])
    if "rope_diagram" in summary:
        print("rope-length diagram (l: period):", summary["rope_diagram"])
    print(f"wall time {summary['wall_s']:.1f} s; CSV files in {args.out}")
    if not args.no_plot:
        _plot(diagrams, studies, os.path.join(args.out, "crane_vessel.png"))
    return summary


def _plot(diagrams, studies, path: str) -> str | None:
    def draw(fig, ax):
        for d, mk in zip(diagrams, ("v", "^")):
            for w, pts in zip(d.params, d.points):
                ax[0].plot(np.full(len(pts), w), pts, mk, ms=3, color="k")
        ax[0].set_xlabel("wave frequency [rad/s]")
        ax[0].set_ylabel("surge at the section [m]")
        for c, s in studies.items():
            for r in s["runs"]:
                P = r["section"].points
                ax[1].plot(P[:, 0], P[:, 1], "o", ms=4, label=f"{c} from x0={r['x0'][0]}: "
                           f"period {r['period']}")
        ax[1].set_xlabel("surge x [m]")
        ax[1].set_ylabel("surge velocity [m/s]")
        ax[1].legend(fontsize=7)

    return save_figure(path, draw, 1, 2, figsize=(11, 4))


if __name__ == "__main__":
    main()
