"""Reverse spaghetti in water: critical drawing speed of FRP, aluminium and steel strips.

A 500 mm x 1.6 mm strip (per metre of span, Table 1 of Kobayashi et al.) is drawn out of a
0.1 mm wall gap into water at a constant speed V.  When a quarter of it is out
(``WETTED_START``), an impulse in Y hits the free end (``IMPULSE`` N*s per metre of span: the
paper does not give its size; this one gives a tip velocity of 0.1-0.5 m/s and a first peak of
a few tenths of a millimetre, inside the regime where the contacts in the gap matter).  The run
ends when 90 % of the strip is out.  Divergence = the tip displacement keeps one sign over the
second half of the run and grows there by more than ``GROWTH`` (20 %); the critical speed is
the smallest V of the grid that diverges.  Gravity is omitted (as in the paper).

Also printed: the quasi-static divergence speed at the final wetted length
(:func:`blocks.vortex.spaghetti.divergence_speed`).

Measured (16 segments): quasi-static divergence at 0.45 m out FRP 0.23, Al 0.79, steel
1.12 m/s (kappa = rho V^2 L^3/EI = 1.6-1.8, the inverted-flag value): the ordering of the paper
and its ratios (proportional to sqrt(EI)), but 2-4x below its bands.  In the time domain the
tip stays within a fraction of a millimetre up to 5 m/s: the growth rate of the divergent mode
is limited by the quasi-steady fluid damping (~ rho V L) to ~V/L, so over a run that lasts
(0.9 - 0.25) L / V the growth is O(1), and the gap contacts hold the strip.  The time-domain
criterion therefore finds no divergence in the grid (reported as None); see the module
docstring of :mod:`blocks.vortex.spaghetti` for the reasons.

Paper (seed §12.4): FRP < 1 m/s < Al ~ 2 m/s < steel 2-4 m/s in water; no divergence in air
(rho = 1.2) at 4 m/s; steel at 1 m/s a damped vibration.  Run
``python examples/reverse_spaghetti.py [--quick]``.
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import glob
import os
import time

import numpy as np

from blocks.sources import Constant
from blocks.vortex.spaghetti import (
    FLUID_DENSITY,
    LENGTH_M,
    SpaghettiBeam,
    beam_for,
    divergence_speed,
)
from blocks.vortex.spaghetti import MATERIALS as TABLE1
from cosim import DiagramBuilder, Simulator

MATERIALS = ("frp", "aluminium", "steel")
SPEEDS = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0)
WETTED_START = 0.25 * LENGTH_M
WETTED_END = 0.9 * LENGTH_M
IMPULSE = 0.05  # N*s per m span, Y, at the free end
GROWTH = 1.2
FULL = dict(n_segments=16, dt=1e-4)
QUICK = dict(n_segments=8, dt=2e-4)
# quick mode: only the speeds that bracket the published bands
QUICK_SPEEDS = {"frp": (1.0,), "aluminium": (1.0, 2.0), "steel": (2.0, 3.0)}


def single_thread_blas() -> None:
    """Use one BLAS thread: the many 50-150 sized solves are 3-6x slower when OpenBLAS
    threads contend for shared cores.  Best effort (threadpoolctl, else NumPy's OpenBLAS)."""
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
        return
    except ImportError:
        pass
    libdir = os.path.join(os.path.dirname(np.__file__) + ".libs")
    for path in glob.glob(os.path.join(libdir, "*openblas*")):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for fn in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_",
                   "openblas_set_num_threads"):
            if hasattr(lib, fn):
                getattr(lib, fn)(1)
                return


def build(material: str, rho: float, speed: float, n_segments: int,
          impulse: float = IMPULSE):
    b = DiagramBuilder("reverse_spaghetti")
    drive = b.add(Constant("drive", speed, unit="m/s"))
    beam = b.add(SpaghettiBeam("beam", beam_for(material, n_segments=n_segments,
                                                fluid_density=rho),
                               wetted_length_m=WETTED_START, tip_impulse=impulse))
    b.connect(drive.y, beam.speed)
    return b.build()


def run_case(material: str, rho: float, speed: float, n_segments: int = 16,
             dt: float = 1e-4, impulse: float = IMPULSE) -> dict:
    """One run: tip displacement history and the divergence verdict."""
    d = build(material, rho, speed, n_segments, impulse)
    t_end = (WETTED_END - WETTED_START) / speed
    t_end = round(t_end / dt) * dt
    res = Simulator(d, solver="rk4", dt=dt, record=["beam.tip_y", "beam.wetted_length"],
                    record_every=max(1, int(round(t_end / dt / 200)))).run(t_end)
    t, y = np.asarray(res.time), np.asarray(res["beam.tip_y"])
    angle = y / np.maximum(np.asarray(res["beam.wetted_length"]), 1e-9)
    return dict(material=material, rho=rho, speed=speed, t=t, tip_y=y, **verdict(angle, y))


def verdict(angle: np.ndarray, y: np.ndarray) -> dict:
    """Growth ratio over the second half and the divergence flag (see the module docstring)."""
    half = angle[len(angle) // 2:]
    y_mid, y_end = half[0], half[-1]
    one_sign = bool(np.all(half > 0) or np.all(half < 0))
    growth = abs(y_end) / max(abs(y_mid), 1e-12)
    return dict(growth=float(growth), one_sign=one_sign,
                peak_mm=float(np.max(np.abs(y)) * 1e3), final_mm=float(y[-1] * 1e3),
                diverged=bool(one_sign and growth > GROWTH))


def critical_speed(material: str, rho: float, speeds, rows: list, **kw) -> float | None:
    for v in speeds:
        r = run_case(material, rho, v, **kw)
        rows.append(r)
        print(f"  {material:9s} rho={rho:6g}  V={v:3.1f} m/s  growth {r['growth']:5.2f}  "
              f"peak {r['peak_mm']:6.3f} mm  final {r['final_mm']:7.3f} mm  "
              f"{'DIVERGES' if r['diverged'] else 'stable'}", flush=True)
        if r["diverged"]:
            return v
    return None


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/reverse_spaghetti", help="output folder")
    ap.add_argument("--quick", action="store_true", help="8 segments, a few speeds (tests)")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    single_thread_blas()
    os.makedirs(args.out, exist_ok=True)
    kw = QUICK if args.quick else FULL
    wall = time.perf_counter()
    rows: list = []
    crit = {}
    print(f"reverse spaghetti, {kw['n_segments']} segments, RK4 dt = {kw['dt']:g} s")
    for m in MATERIALS:
        speeds = QUICK_SPEEDS[m] if args.quick else SPEEDS
        crit[m] = critical_speed(m, FLUID_DENSITY["water"], speeds, rows, **kw)
    static = {m: divergence_speed(beam_for(m, n_segments=kw["n_segments"],
                                           fluid_density=FLUID_DENSITY["water"]), WETTED_END)
              for m in MATERIALS}
    kappa = {m: FLUID_DENSITY["water"] * v ** 2 * WETTED_END ** 3
             / TABLE1[m]["bending_rigidity"] for m, v in static.items()}
    for m in MATERIALS:
        print(f"  quasi-static divergence at {WETTED_END:.2f} m out: {m:9s} "
              f"V = {static[m]:.3f} m/s (kappa = rho V^2 L^3/EI = {kappa[m]:.2f})")
    air = run_case("steel", FLUID_DENSITY["air"], 4.0, **kw)
    vac = run_case("steel", 0.0, 4.0, **kw)
    slow = run_case("steel", FLUID_DENSITY["water"], 1.0, **kw)
    rows += [air, vac, slow]
    peak_ratio = air["peak_mm"] / vac["peak_mm"]
    print(f"  steel V=4 air: growth {air['growth']:.2f}, diverged {air['diverged']}; "
          f"peak air/vacuum = {peak_ratio:.3f}")
    print(f"  steel V=1 water: growth {slow['growth']:.2f}, final {slow['final_mm']:.3f} mm "
          f"(peak {slow['peak_mm']:.3f} mm)")
    with open(os.path.join(args.out, "runs.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["material", "rho", "speed_m_s", "growth", "peak_mm", "final_mm",
                    "diverged"])
        for r in rows:
            w.writerow([r["material"], r["rho"], r["speed"], f"{r['growth']:.4f}",
                        f"{r['peak_mm']:.5f}", f"{r['final_mm']:.5f}", r["diverged"]])
    summary = {
        "critical_speed_m_s": crit,
        "static_divergence_speed_m_s": static,
        "kappa_critical": kappa,
        "air_steel_4_diverged": air["diverged"],
        "air_vacuum_peak_ratio": peak_ratio,
        "steel_1_water_growth": slow["growth"],
        "steel_1_water_diverged": slow["diverged"],
        "n_segments": kw["n_segments"],
        "wall_s": time.perf_counter() - wall,
    }
    print("critical drawing speed in water [m/s]:",
          ", ".join(f"{m} {v}" for m, v in crit.items()),
          "(paper: FRP < 1, Al ~ 2, steel 2-4)")
    if not args.no_plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            fig, ax = plt.subplots(figsize=(7, 4))
            for r in rows:
                ax.plot(r["t"], r["tip_y"] * 1e3,
                        label=f"{r['material']} rho={r['rho']:g} V={r['speed']:g}")
            ax.set_xlabel("t [s]")
            ax.set_ylabel("tip Y [mm]")
            ax.legend(fontsize=6)
            path = os.path.join(args.out, "tip.png")
            fig.savefig(path, dpi=100)
            plt.close(fig)
            print("  plot:", path)
        except Exception as exc:  # plotting is optional
            print(f"  (no plot: {exc})")
    return summary


if __name__ == "__main__":
    main()
