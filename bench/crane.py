"""Suite ``crane``: the seed's gantry-crane training simulator (Paper V) against real time.

Model: ``examples/gantry_crane.py`` (:class:`blocks.cranes.GantryCrane`, three
:class:`blocks.electric.CraneDrive` blocks, a scripted operator; a ship-to-shore crane whose
parameters are justified in :mod:`blocks.cranes.parameters`).  Cases:

``manoeuvre/rk4-5ms/60s``
    The example's container-pickup move (hoist up, trolley 35 m and gantry 6 m, lower
    onto the target container, guide arms down) at the seed's integrator, RK4 with a
    fixed 5 ms step, recording the state.  Accuracy: the spreader's end position against
    the same run at 1.25 ms (RK4, step/4).  Target: real-time factor (simulated seconds
    per wall second, from the median run time) >= 20, i.e. 1 s of crane in <= 50 ms.
``free-swing/rk4-5ms/5s``
    The mechanics alone (constant drive forces, a loaded spreader swinging and rotating
    with the trolley and gantry moving) as the block and, as the peer,
    rebuilt with :mod:`blocks.multibody` (:mod:`blocks.cranes.reference`: absolute
    coordinates, Lagrange multipliers with Baumgarte terms, Numba kernel when available):
    what the dedicated minimal-coordinate block saves.  Accuracy: max distance between
    the two spreader trajectories (the same equations: round-off).

Quick mode: the same cases with fewer repeats (well under a minute).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from .harness import make_case, make_target, measure

NAME = "crane"
DESCRIPTION = "Gantry crane (seed Paper V): container move at RK4 5 ms vs real time; " \
              "minimal coordinates vs the multibody formulation"
PACKAGES = ()

#: Simulated time of the manoeuvre [s] (the example's) and the seed's step [s].
T_MANOEUVRE, DT = 60.0, 0.005
T_SWING = 5.0


def _example():
    import examples.gantry_crane as gx
    return gx


def _manoeuvre(dt: float = DT, t_end: float = T_MANOEUVRE):
    """One run: (build_s, run_s, extra) with the spreader's end position."""
    from cosim import Simulator
    gx = _example()
    t0 = time.perf_counter()
    diagram = gx.build()
    sim = Simulator(diagram, solver="rk4", dt=dt, record=["crane.state"])
    t1 = time.perf_counter()
    res = sim.run(t_end)
    t2 = time.perf_counter()
    st = res["crane.state"]
    q = st[:, 7:11]
    return t1 - t0, t2 - t1, {
        "spreader_end": st[-1, 4:7].copy(), "steps": res.diagnostics["steps"],
        "rhs_evals": res.diagnostics.get("rhs_evals"), "simulated_s": float(res.time[-1]),
        "quaternion_norm_error": float(np.max(np.abs(np.linalg.norm(q, axis=1) - 1.0)))}


def swing_setup():
    """Parameters, initial state and constant drive forces of the free-swing case."""
    from blocks.cranes import STS_CRANE, ContainerLoad, equilibrium
    p = STS_CRANE
    p = dataclasses.replace(
        p, container=ContainerLoad(com_offset_m=(0.1, 0.0, 0.8)), wind_velocity_m_s=(3.0, 0, -2),
        gantry_drive=dataclasses.replace(p.gantry_drive, motor_inertia_kgm2=0.0),
        trolley_drive=dataclasses.replace(p.trolley_drive, motor_inertia_kgm2=0.0))
    hold: dict = {}
    x = equilibrium(p, 2.0, 10.0, 15.0, report=hold)
    x[4] += 0.4
    x[6] -= 0.3
    x[5] += 0.005
    e = np.array([0.999, 0.02, 0.03, -0.015])
    x[7:11] = e / np.linalg.norm(e)
    x[18:21] = (0.02, -0.03, 0.01)
    x[11], x[12], x[13], x[14], x[15] = -0.2, 0.5, 0.01, 0.05, 0.1
    forces = {"gantry": 20e3, "trolley": -5e3, "hoist": hold["hoist_force"] + 3e3}
    return p, x, forces


def swing_block_diagram(p, x, forces):
    """The crane block with constant drive forces and zero operator inputs."""
    from blocks.cranes import GantryCrane
    from blocks.sources import Constant
    from cosim import DiagramBuilder
    b = DiagramBuilder("swing")
    crane = b.add(GantryCrane("crane", p, initial_state=x))
    for axis in ("gantry", "trolley", "hoist"):
        c = b.add(Constant(f"{axis}_drive", float(forces[axis]), unit="N"))
        b.connect(c.y, getattr(crane, f"{axis}_force"))
        c = b.add(Constant(f"{axis}_ref", 0.0, unit="m/s"))
        b.connect(c.y, getattr(crane, f"{axis}_velocity_ref"))
    for name in ("arms_12", "arms_34", "arm_5", "arm_6"):
        c = b.add(Constant(name, 0.0, unit="1"))
        b.connect(c.y, getattr(crane, name))
    return b.build()


def _swing_ours():
    from cosim import Simulator
    t0 = time.perf_counter()
    p, x, forces = swing_setup()
    sim = Simulator(swing_block_diagram(p, x, forces), solver="rk4", dt=DT,
                    record=["crane.state"])
    t1 = time.perf_counter()
    res = sim.run(T_SWING)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, {"spreader": res["crane.state"][:, 4:7].copy()}


def _swing_multibody():
    from blocks.cranes.reference import crane_states, multibody_block
    from cosim import DiagramBuilder, Simulator
    t0 = time.perf_counter()
    p, x, forces = swing_setup()
    b = DiagramBuilder("swing_mb")
    b.add(multibody_block("mb", p, x, forces))
    sim = Simulator(b.build(), solver="rk4", dt=DT, record=["mb.q"])
    t1 = time.perf_counter()
    res = sim.run(T_SWING)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, {"spreader": crane_states(res["mb.q"], x[3])["spreader"]}


def run(options) -> dict:
    reps = options.repeats
    ours = measure(_manoeuvre, repeats=reps, steps=int(round(T_MANOEUVRE / DT)), blocks=5,
                   budget_s=options.budget_s)
    ref = measure(lambda: _manoeuvre(DT / 4), repeats=1, steps=None, blocks=None)
    a = ours.get("extra", {}).pop("spreader_end", None)
    b = ref.get("extra", {}).pop("spreader_end", None)
    if a is not None and b is not None:
        ours["abs_err"] = float(np.max(np.abs(a - b)))
        ours["accuracy_metric"] = "spreader end position vs RK4 1.25 ms [m]"
    cases = [make_case(f"manoeuvre/rk4-{DT * 1e3:g}ms/{T_MANOEUVRE:g}s", ours,
                       {"same-model-rk4-1.25ms": ref})]
    sw = measure(_swing_ours, repeats=reps, steps=int(round(T_SWING / DT)), blocks=10,
                 budget_s=options.budget_s)
    mb = measure(_swing_multibody, repeats=1 if options.quick else min(reps, 3), steps=None,
                 blocks=None, budget_s=options.budget_s)
    sa = sw.get("extra", {}).pop("spreader", None)
    sb = mb.get("extra", {}).pop("spreader", None)
    if sa is not None and sb is not None:
        sw["abs_err"] = mb["abs_err"] = float(np.max(np.abs(sa - sb)))
        sw["accuracy_metric"] = mb["accuracy_metric"] = \
            "max |spreader(block) - spreader(multibody)| [m]"
    cases.append(make_case(f"free-swing/rk4-{DT * 1e3:g}ms/{T_SWING:g}s", sw,
                           {"blocks.multibody": mb}))
    return {"cases": cases, "targets": targets(cases)}


def real_time_factor(case: dict) -> float | None:
    """Simulated seconds per wall second from the case's median run time."""
    m = case.get("ours", {})
    if m.get("median_s") is None:
        return None
    return m.get("extra", {}).get("simulated_s", T_MANOEUVRE) / m["median_s"]


def targets(cases: list[dict]) -> list[dict]:
    by = {c["case"]: c for c in cases}
    man = by.get(f"manoeuvre/rk4-{DT * 1e3:g}ms/{T_MANOEUVRE:g}s")
    swing = by.get(f"free-swing/rk4-{DT * 1e3:g}ms/{T_SWING:g}s")
    return [
        make_target("crane manoeuvre at RK4 5 ms: real-time factor (simulated s / wall s)",
                    real_time_factor(man) if man else None, ">=", "20",
                    note="seed Paper V: real time at RK4 5 ms on RT-LAB/QNX; 20x leaves "
                         "room for I/O, visualisation and a motion platform"),
        make_target("free swing: block vs multibody formulation, max spreader distance [m]",
                    swing["ours"].get("abs_err") if swing else None, "<=", "1e-9"),
    ]


def main() -> None:
    """``python -m bench.crane [--quick]``: run the suite without registering it."""
    import sys

    from .harness import Options, env_info, format_table
    opts = Options.for_mode("--quick" in sys.argv[1:])
    w = time.perf_counter()
    body = run(opts)
    doc = {"suite": NAME, "quick": opts.quick, "repeats": opts.repeats,
           "budget_s": opts.budget_s, "env": env_info(PACKAGES), **body,
           "wall_s": time.perf_counter() - w}
    print(format_table(doc))


if __name__ == "__main__":
    main()
