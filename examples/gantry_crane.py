"""Ship-to-shore gantry crane (seed Paper V): an empty spreader goes to pick up a container.

The diagram: the crane mechanics (:class:`blocks.cranes.GantryCrane`: gantry, flexible
trolley, hoist, spreader on 4 unilateral ropes, 6 guide arms), the three 4-motor drives
(:class:`blocks.electric.CraneDrive`, built by :func:`blocks.cranes.make_drives`) and a
scripted operator (:class:`blocks.cranes.OperatorProgram`), at the seed's RK4 with a 5 ms
step.  Parameters: :data:`blocks.cranes.STS_CRANE` (documented in
:mod:`blocks.cranes.parameters`).

The move (:func:`manoeuvre`), from the spreader hanging on 20 m of rope over the quay:

1. hoist up 8 m (empty spreader: up to 1.5 m/s);
2. from t = 7 s (as the hoisting ends) trolley out 35 m over the ship (3 m/s) and gantry
   6 m along the quay (0.75 m/s) at the same time, each accelerating and braking over one
   sway period (6.95 s on 12 m of rope: such a ramp leaves little residual sway, the
   input-shaping trick operators learn by feel; what remains, ~0.1 m, comes from the
   drives' lag and the hoisting);
3. from t = 27 s lower 16.2 m (2 m/s) towards the target container (top 12 m above the
   quay, standing 0.35 m further out than the trolley stops), the guide arms going down
   at the start;
4. the arms reach the container's top edges at ~37.5 s, push the still swinging spreader
   back and forth and hold it within ~0.12 m of the container (the arms' channel: they
   hang 0.1 m outside its faces); the spreader waits ~0.4 m above it (landing is not
   modelled; the P-controlled hoist droops ~5 mm/s).

Run ``python examples/gantry_crane.py``: it prints the end state, the largest rope tension
and sway, the arms' contact and the wall time against real time.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from blocks.cranes import (
    STS_CRANE,
    GantryCrane,
    OperatorProgram,
    TargetContainer,
    connect_drives,
    equilibrium,
    make_drives,
    trapezoid,
    unpack,
)
from cosim import DiagramBuilder, Simulator

#: The seed's integrator: RK4 with a fixed 5 ms step.
DT = 0.005
#: Simulated time of the manoeuvre [s].
T_END = 60.0
#: Where the target container stands (0.35 m beyond the trolley's stop at 35 m).
TARGET = TargetContainer(center_x_m=35.35, center_z_m=6.0, top_m=12.0)
#: Crane parameters of the example: the STS crane, empty spreader, the target container.
PARAMS = dataclasses.replace(STS_CRANE, target=TARGET)
#: Initial unstretched rope length [m].
HOIST0 = 20.0
#: What :func:`run` records (rope and arm forces are recomputed from the states afterwards).
RECORD = ["crane.state", "trolley_drive.torque", "trolley_drive.torque_limit",
          "hoist_drive.torque", "hoist_drive.torque_limit"]
#: Defaults for ``cosim run examples/gantry_crane.py``.
SIMULATION = dict(t_end=T_END, solver="rk4", dt=DT,
                  record=["crane.spreader_x", "crane.spreader_y", "crane.spreader_z",
                          "crane.trolley_position", "crane.gantry_position",
                          "crane.hoist_length", "trolley_drive.torque", "hoist_drive.torque"])


def manoeuvre() -> dict:
    """The operator's program (keyword arguments of :class:`OperatorProgram`)."""
    sway = 6.95  # sway period on 12 m of rope, 2 pi sqrt(L/g)
    hoist = trapezoid(1.0, 8.0, 1.5, 0.5)
    trolley = trapezoid(7.0, 35.0, 3.0, 3.0 / sway)
    gantry = trapezoid(7.0, 6.0, 0.75, 0.75 / sway)
    lower = trapezoid(27.0, -16.2, 2.0, 0.5)
    return {"hoist": hoist + lower, "trolley": trolley, "gantry": gantry,
            "arms_12": [(27.0, 1.0)], "arms_34": [(27.0, 1.0)], "arm_5": [(27.0, 1.0)],
            "arm_6": [(27.0, 1.0)]}


def assemble(params=PARAMS, program: dict | None = None, hoist_length_m: float = HOIST0,
             diagnostics: bool = False):
    """The diagram: crane + 3 drives + operator; returns ``(diagram, crane, drives)``.

    The crane starts in static equilibrium (:func:`blocks.cranes.equilibrium`) with the
    gantry and trolley at 0 and ``hoist_length_m`` of rope; the drives' controllers start at
    the torques that hold it.
    """
    hold: dict = {}
    x0 = equilibrium(params, 0.0, 0.0, hoist_length_m, report=hold)
    b = DiagramBuilder("gantry_crane")
    crane = b.add(GantryCrane("crane", params, initial_state=x0, diagnostics=diagnostics))
    drives = make_drives(params, hold)
    for d in drives.values():
        b.add(d)
    connect_drives(b, crane, drives)
    op = b.add(OperatorProgram("operator", **(program if program is not None
                                              else manoeuvre())))
    for name in ("gantry_velocity_ref", "trolley_velocity_ref", "hoist_velocity_ref",
                 "arms_12", "arms_34", "arm_5", "arm_6"):
        b.connect(getattr(op, name), getattr(crane, name))
    return b.build(), crane, drives


def build():
    """The example's diagram (for ``cosim run examples/gantry_crane.py``, :data:`SIMULATION`)."""
    return assemble()[0]


def run(t_end: float = T_END, dt: float = DT, record=RECORD, **build_options):
    """Build (:func:`assemble` with ``build_options``) and run; returns ``(results, wall_s)``
    (wall time of the run alone)."""
    diagram, _, _ = assemble(**build_options)
    sim = Simulator(diagram, solver="rk4", dt=dt, record=record)
    w = time.perf_counter()
    res = sim.run(t_end)
    return res, time.perf_counter() - w


def summary(res, params=PARAMS) -> dict:
    """Key figures of a run (rope tensions and arm contacts recomputed from the recorded
    states)."""
    states = res["crane.state"]
    crane = GantryCrane("post", params, initial_state=states[0])
    s = unpack(states)
    f = [crane.forces(x) for x in states]
    tens = np.array([x["rope_tension"] for x in f])
    ctq = np.array([x["arm_contact_torque"] for x in f])
    t = res.time
    sway_x = s["spreader_x"] - s["trolley_position"]
    sway_z = s["spreader_z"] - s["gantry_position"]
    q = np.stack([s[f"e{i}"] for i in range(4)], axis=1)
    end = {k: float(v[-1]) for k, v in s.items()}
    touched = np.flatnonzero(ctq.max(axis=1) > 0.0)
    last = t >= t[-1] - 5.0
    off = s["spreader_x"][last] - params.target.center_x_m if params.target else None
    return {
        "t_end": float(t[-1]),
        "gantry_position": end["gantry_position"], "trolley_position": end["trolley_position"],
        "hoist_length": end["hoist_length"],
        "spreader_xyz": (end["spreader_x"], end["spreader_y"], end["spreader_z"]),
        "spreader_bottom_above_target_m": end["spreader_y"] - 0.5 - params.target.top_m
        if params.target else None,
        "offset_from_target_last_5s_m": (float(off.min()), float(off.max()))
        if off is not None else None,
        "max_rope_tension_n": float(tens.max()),
        "min_rope_tension_n": float(tens.min()),
        "static_rope_tension_n": float(tens[0].mean()),
        "max_sway_x_m": float(np.max(np.abs(sway_x))),
        "max_sway_z_m": float(np.max(np.abs(sway_z))),
        "first_arm_contact_s": float(t[touched[0]]) if touched.size else None,
        "arms_that_touched": [i + 1 for i in range(6) if ctq[:, i].max() > 0.0],
        "arm_contact_max_nm": float(ctq.max()),
        "max_trolley_torque_nm": float(np.max(np.abs(res["trolley_drive.torque"]))),
        "max_hoist_torque_nm": float(np.max(np.abs(res["hoist_drive.torque"]))),
        "quaternion_norm_error": float(np.max(np.abs(np.linalg.norm(q, axis=1) - 1.0))),
    }


def main() -> None:
    res, wall = run()
    s = summary(res)
    print(f"gantry crane manoeuvre, RK4 dt = {DT * 1e3:g} ms, {s['t_end']:g} s simulated")
    print(f"  trolley at {s['trolley_position']:.3f} m, gantry at {s['gantry_position']:.3f} m, "
          f"rope {s['hoist_length']:.3f} m")
    x, y, z = s["spreader_xyz"]
    lo, hi = s["offset_from_target_last_5s_m"]
    print(f"  spreader centre ({x:.3f}, {y:.3f}, {z:.3f}) m, bottom "
          f"{s['spreader_bottom_above_target_m']:.3f} m above the target container; "
          f"X offset from it in the last 5 s: {lo:+.3f} .. {hi:+.3f} m")
    print(f"  rope tension: static {s['static_rope_tension_n'] / 1e3:.1f} kN, "
          f"max {s['max_rope_tension_n'] / 1e3:.1f} kN, min {s['min_rope_tension_n'] / 1e3:.1f} kN")
    print(f"  sway: max {s['max_sway_x_m']:.3f} m (X), {s['max_sway_z_m']:.3f} m (Z)")
    print(f"  guide arms {s['arms_that_touched']} touched the container from "
          f"t = {s['first_arm_contact_s']:.2f} s (max contact torque "
          f"{s['arm_contact_max_nm']:.0f} N m)")
    print(f"  max drive torque per motor: trolley {s['max_trolley_torque_nm']:.0f} N m, "
          f"hoist {s['max_hoist_torque_nm']:.0f} N m")
    print(f"  |quaternion| - 1: {s['quaternion_norm_error']:.1e}")
    print(f"wall time {wall:.3f} s: {s['t_end'] / wall:.1f}x faster than real time")


if __name__ == "__main__":
    main()
