"""Flatness-planned container transfer against trapezoidal speed profiles, on the full crane.

The move: a 40 t load (10 t spreader + 30 t container, :class:`blocks.cranes.ContainerLoad`)
goes 30 m seaward with the trolley while it is hoisted from 20 m to 12 m of (unstretched)
rope, in 24 s, starting from rest at t = 1 s; the residual sway is measured over the 20 s
after the motion ends.  The crane is the full :class:`blocks.cranes.GantryCrane` (33
states: flexible girder, elastic ropes, tilting spreader on four ropes, drum) with its
three P-controlled :class:`~blocks.electric.CraneDrive` drives, RK4 at 5 ms.

Runs (velocity references into the drives, as an operator's levers):

* ``flat``: the flat plan of :mod:`blocks.controllers.flatness.crane` (degree-9
  polynomials in the load position, pendulum length the crane's effective length
  :func:`~blocks.controllers.flatness.crane.effective_length`), references
  :math:`\\dot x_t` and :math:`-\\dot l_0` *plus the drive compensation*
  (:func:`~blocks.controllers.flatness.crane.crane_references`: the planned force passed
  through the P speed loops' reference, since the drive block has no force-feedforward
  port);
* ``flat_plain``: the same plan, references :math:`\\dot x_t`, :math:`-\\dot l_0` only
  (shows what the P loops' lag and compliance cost);
* ``trapezoid_a<acc>``: a trapezoidal trolley speed profile with the same distance and
  duration (to 0.05 s: :func:`blocks.cranes.trapezoid`
  puts its corners on the 5 ms grid) for a few accelerations (0.3, 0.5 and 0.8 m/s^2, the
  cruise speed then follows from distance and duration), with a trapezoidal hoist profile
  of the same duration (0.5 m/s^2); the ramps are not tuned to the sway period.

Residual sway: half the peak-to-peak of the spreader's horizontal offset from the
trolley (centre of mass, X) over ``[t_end_of_move, + window]``.

Measured (``python examples/flatness_crane.py``, ~10 s wall): residual sway flat 0.87 mm,
trapezoids 518 / 1016 / 972 mm (a = 0.3 / 0.5 / 0.8 m/s^2): 0.17 % of the smallest;
``flat_plain`` 20.6 mm (4.0 %: fails the 1 % goal, hence the drive compensation).  The
crane's P speed loops also damp the sway after the move (the trolley yields to the
load: the trapezoids' sway halves about every period), so the figure is essentially the
first swing after the move.  The operator's trapezoids are not compensated: the loaded
hoist droops ~2.2 cm/s (P loop) and ends ~1 m short of 12 m; the trolley ends 3-5 cm
short.  The flat plan asks at most 2.80 m/s of the trolley (3 m/s rated) and 0.83 m/s of
the hoist (1 m/s loaded).

``python examples/flatness_crane.py [--quick] [--out DIR]``: prints the figures, writes
``sway.csv`` (time series) and ``summary.csv`` (and ``sway.png`` if matplotlib works)
under ``--out`` (default ``out/flatness_crane``).  ``--quick`` runs the flat plan and one
trapezoid (a = 0.5 m/s^2) only, with a 10 s window.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import os
import time

import numpy as np

from blocks.controllers.flatness import check_plan
from blocks.controllers.flatness.crane import (
    TableReference,
    crane_references,
    effective_length,
    plan_transfer,
    sts_planar_crane,
)
from blocks.cranes import (
    STS_CRANE,
    ContainerLoad,
    GantryCrane,
    OperatorProgram,
    connect_drives,
    equilibrium,
    make_drives,
    trapezoid,
)
from cosim import DiagramBuilder, Simulator
from cosim.plotting import save_figure

DT = 0.005
PARAMS = dataclasses.replace(STS_CRANE, container=ContainerLoad())
T0, DURATION = 1.0, 24.0
X0, XF = 0.0, 30.0
L0_START, L0_END = 20.0, 12.0          # unstretched rope [m]
WINDOW = 20.0
TRAPEZOID_ACCELS = (0.3, 0.5, 0.8)
HOIST_ACCEL = 0.5


def trapezoid_same_time(t0: float, distance: float, duration: float, accel: float):
    """:func:`blocks.cranes.trapezoid` breakpoints of ``distance`` in ``duration`` with
    ramps at ``accel``: cruise speed :math:`v = a(T - \\sqrt{T^2 - 4d/a})/2`."""
    d = abs(distance)
    disc = duration ** 2 - 4.0 * d / accel
    if disc < 0:
        raise ValueError(f"trapezoid_same_time: {d} m in {duration} s needs a >= "
                         f"{4 * d / duration ** 2:.3f} m/s^2, got {accel}")
    v = accel * (duration - math.sqrt(disc)) / 2.0
    return trapezoid(t0, distance, v * (1 + 1e-9), accel, DT)


def _diagram(params, program_or_table, l0: float):
    hold: dict = {}
    x0 = equilibrium(params, 0.0, X0, l0, report=hold)
    b = DiagramBuilder("flatness_crane")
    crane = b.add(GantryCrane("crane", params, initial_state=x0))
    drives = make_drives(params, hold)
    for d in drives.values():
        b.add(d)
    connect_drives(b, crane, drives)
    arms = b.add(OperatorProgram("arms"))
    for name in ("arms_12", "arms_34", "arm_5", "arm_6"):
        b.connect(getattr(arms, name), getattr(crane, name))
    src = b.add(program_or_table)
    for name in ("gantry_velocity_ref", "trolley_velocity_ref", "hoist_velocity_ref"):
        b.connect(getattr(src, name), getattr(crane, name))
    return b.build()


def run_case(source, t_end: float, params=PARAMS) -> dict:
    """Run the crane with the velocity-reference block ``source`` to ``t_end``."""
    sim = Simulator(_diagram(params, source, L0_START), solver="rk4", dt=DT,
                    record=["crane.spreader_x", "crane.trolley_position", "crane.hoist_length"])
    w = time.perf_counter()
    res = sim.run(t_end)
    wall = time.perf_counter() - w
    return {"time": res.time, "sway": res["crane.spreader_x"] - res["crane.trolley_position"],
            "trolley": res["crane.trolley_position"], "hoist": res["crane.hoist_length"],
            "wall_s": wall}


def residual(run: dict, t_move_end: float, window: float) -> float:
    """Half peak-to-peak of the sway over ``[t_move_end, t_move_end + window]``."""
    t, s = run["time"], run["sway"]
    sel = (t >= t_move_end - 1e-9) & (t <= t_move_end + window + 1e-9)
    return float((s[sel].max() - s[sel].min()) / 2.0)


def flat_plan(params=PARAMS):
    """The planar flat model of the crane and the plan (effective pendulum lengths)."""
    system = sts_planar_crane(params)
    plan = plan_transfer(system, T0, DURATION, X0, effective_length(params, L0_START),
                         XF, effective_length(params, L0_END), k=5)
    return system, plan


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default="out/flatness_crane")
    args = ap.parse_args(argv)
    window = 10.0 if args.quick else WINDOW
    t_move_end = T0 + DURATION
    t_end = t_move_end + window
    system, plan = flat_plan()
    report = check_plan(system, plan, bounds={"v_t": (-3.0, 3.0), "L_dot": (-1.0, 1.0)})
    grid = np.arange(0.0, t_end + DT, DT / 2)       # RK4 stage times: exact interpolation
    runs: dict = {}
    cases = ["flat", "flat_plain"] if not args.quick else ["flat"]
    for case in cases:
        ref = crane_references(PARAMS, plan, grid, compensate_drives=(case == "flat"),
                               system=system)
        runs[case] = run_case(TableReference("reference", grid, trolley=ref["trolley"],
                                             hoist=ref["hoist"]), t_end)
    accels = (0.5,) if args.quick else TRAPEZOID_ACCELS
    hoist = trapezoid_same_time(T0, L0_START - L0_END, DURATION, HOIST_ACCEL)
    ends = {}
    for a in accels:
        trolley = trapezoid_same_time(T0, XF - X0, DURATION, a)
        name = f"trapezoid_a{a:g}"
        ends[name] = max(trolley[-1][0], hoist[-1][0])
        runs[name] = run_case(OperatorProgram("reference", trolley=trolley, hoist=hoist),
                              t_end)
    out: dict = {"t_move_end": t_move_end, "window_s": window,
                 "plan_min_singularity": report.min_singularity[0],
                 "plan_max_trolley_speed": float(np.abs(report.x[3]).max()),
                 "plan_max_hoist_speed": float(np.abs(report.x[4]).max())}
    for name, r in runs.items():
        te = ends.get(name, t_move_end)
        out[f"{name}_residual_m"] = residual(r, te, window)
        out[f"{name}_move_end_s"] = te
        out[f"{name}_final_trolley_m"] = float(r["trolley"][-1])
        out[f"{name}_final_hoist_m"] = float(r["hoist"][-1])
        out[f"{name}_wall_s"] = r["wall_s"]
    traps = [k for k in runs if k.startswith("trapezoid")]
    out["smallest_trapezoid_residual_m"] = min(out[f"{k}_residual_m"] for k in traps)
    out["ratio"] = out["flat_residual_m"] / out["smallest_trapezoid_residual_m"]
    if "flat_plain_residual_m" in out:
        out["ratio_plain"] = out["flat_plain_residual_m"] / out["smallest_trapezoid_residual_m"]
    _write(args.out, runs, out)
    _print(out, runs)
    return out


def _write(folder: str, runs: dict, out: dict) -> None:
    os.makedirs(folder, exist_ok=True)
    names = list(runs)
    t = runs[names[0]]["time"]
    with open(os.path.join(folder, "sway.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time_s"] + [f"{n}_sway_m" for n in names] +
                   [f"{n}_trolley_m" for n in names])
        cols = [runs[n]["sway"] for n in names] + [runs[n]["trolley"] for n in names]
        for i in range(0, len(t), 4):
            w.writerow([f"{t[i]:.4f}"] + [f"{c[i]:.6g}" for c in cols])
    with open(os.path.join(folder, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["quantity", "value"])
        for k, v in out.items():
            w.writerow([k, v])

    def draw(fig, ax):
        for n in names:
            ax.plot(runs[n]["time"], runs[n]["sway"], label=n)
        ax.axvline(out["t_move_end"], color="k", lw=0.5)
        ax.set_xlabel("time [s]")
        ax.set_ylabel("spreader X - trolley X [m]")
        ax.legend()

    save_figure(os.path.join(folder, "sway.png"), draw, figsize=(9, 4))


def _print(out: dict, runs: dict) -> None:
    print(f"container transfer {XF - X0:g} m, rope {L0_START:g} -> {L0_END:g} m in "
          f"{DURATION:g} s, 40 t; residual sway over {out['window_s']:g} s after the move")
    for name in runs:
        print(f"  {name:18s} residual {out[f'{name}_residual_m'] * 1e3:9.3f} mm "
              f"(wall {out[f'{name}_wall_s']:.1f} s)")
    print(f"  ratio flat / smallest trapezoid: {out['ratio'] * 100:.3f} %")
    if "ratio_plain" in out:
        print(f"  ratio flat (no drive compensation) / smallest trapezoid: "
              f"{out['ratio_plain'] * 100:.3f} %")


if __name__ == "__main__":
    main()
