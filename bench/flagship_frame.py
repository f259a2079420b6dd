"""The flagship's real-time frame: the CPU work of one 2 ms frame of plant and ECU.

``examples/flagship_hil.py`` runs the co-simulated plant (mech, hyd and drive subsystems
at their own steps, an ``io`` subsystem of CAN bridges) and the ECU (the controller FMU
between two CAN bridges) in :class:`hil.RealTimeRunner` frames; before the real run it
probes the frame's work (:func:`examples.flagship_hil.probe_frame_work`: the frame
thread's CPU time per 2 ms frame, paced as in the run, with its bus log) and chooses the
frame from it.  This case is that probe, longer: ``seconds`` of 2 ms frames (the first
0.1 s left out), each two 1 ms macro steps of the plant's master and two ECU steps.

Reported: p50 and p99 of the work per frame [us], the share of the frame, and where each
subsystem ran (``compiled``: the C loop, or the Python loop's reason) and the master's macro
steps (``master``: the native loop, :mod:`cosim.native_loop`, or why not).  Issue 35's target:
p50 <= 300 us (the issue measured 1.2 ms when every subsystem ran in Python).  ``bench
vehicle`` runs the probe a second time with ``compiled=False`` (every subsystem, the master
and the ECU in the Python loop) and reports the ratio of the two, measured in the same
machine state (the microseconds move with it by half).  It is no target: the Python loop's
frame has got faster since the issue's 1.2 ms (the bridges, the FMU's step and the ECU,
Python in both, are most of both frames).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

#: the work per 2 ms frame, p50 [us] (issue 35)
GOAL_P50_US = 300.0


def frame_work(seconds: float = 2.0, compiled: bool | None = None) -> dict:
    """Probe the flagship's frame work for ``seconds`` (see module docstring); ``compiled``:
    the rig's (``False``: every subsystem, the master and the ECU in the Python loop)."""
    from examples import flagship as fl
    from examples import flagship_hil as fh
    from examples import flagship_model as fm
    from hil.can import CanDatabase
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-flagship-frame-") as tmp:
        out = Path(tmp)
        eq = fm.equilibrium()
        fmu, _ = fl.export_controller(out, True, eq)
        (out / "flagship.dbc").write_text(fh.DBC)
        db = CanDatabase(out / "flagship.dbc")
        ran = _where_it_runs(fh, fmu, eq, db, compiled)
        work = fh.probe_frame_work(fmu, eq, db, seconds, compiled) / 1e3  # us per 2 ms frame
    if len(work) < 10:
        raise RuntimeError(f"flagship frame probe: only {len(work)} frames measured")
    p50, p99 = float(np.median(work)), float(np.percentile(work, 99))
    frame_us = fh.FRAME_CHOICES[0] * 1e6
    return {"status": "ok", "median_s": p50 / 1e6, "p50_us": p50, "p99_us": p99,
            "share_p50": p50 / frame_us, "share_p99": p99 / frame_us, "frames": len(work),
            "frame_s": fh.FRAME_CHOICES[0], "compiled": ran,
            "wall_s": time.perf_counter() - t0}


def _where_it_runs(fh, fmu, eq, db, compiled: bool | None) -> dict:
    """Each plant subsystem and the ECU: True when it runs in C, else the reason."""
    rig = fh._Rig(fmu, eq, db, f"bench-flagship-where-{time.monotonic_ns()}",
                  compiled=compiled)
    try:
        psim = rig.psim
        psim.initialize()
        psim.expect(psim.ctx.ticks + 1000 * psim.dt_ticks)
        psim.advance_to_ticks(psim.ctx.ticks + 4 * psim.dt_ticks)
        out = {}
        for s in rig.master.subsystems:
            route = getattr(getattr(s, "sim", None), "route", None)
            out[s.name] = (None if route is None else
                           True if route.run is not None else route.reason)
        ran = rig.master.loop_ran  # the master's macro steps (cosim.native_loop)
        out["master"] = True if ran is True else str(ran)
        eroute = getattr(rig.esim, "route", None)
        out["ecu"] = None if eroute is None else (True if eroute.run is not None
                                                   else eroute.reason)
        return out
    finally:
        rig.close()


def note(m: dict) -> str:
    """One line: where the frame's parts ran."""
    ran = m.get("compiled") or {}
    c = [k for k, v in ran.items() if v is True]
    py = [f"{k} ({v})" for k, v in ran.items() if v is not True]
    return (f"in C: {', '.join(c) or 'none'}; in Python: {'; '.join(py) or 'none'}; "
            f"p99 {m.get('p99_us', float('nan')):.0f} us, {m.get('frames', 0)} frames")
