"""A parameter study: PID gains and plant mass of a mass-spring-damper position loop.

The plant m x'' + c x' + k x = u (m a build argument: one compiled diagram per mass),
the controller a :class:`~blocks.pid.PID` whose gains are context parameters
(``pid.kp``, ``pid.ki``, ``pid.kd``: no rebuild per run).  ``metrics`` reduces each run
to overshoot, settling time (2 %), integral of the absolute error and peak effort.

Run ``python examples/pid_sweep.py [--backend local|dask|serial] [--workers 2]
[--out DIR]`` (200 runs: 10 proportional x 20 derivative gains; 2 masses with
``--masses``), or from the shell ``cosim sweep examples/pid_sweep.py --param
pid.kp=20:200:10 --param pid.kd=1:20:20 --out out/pid_sweep``.
"""

from __future__ import annotations

import argparse

import numpy as np

from blocks.lti import StateSpace
from blocks.math import Sum
from blocks.pid import PID
from blocks.sources import Step
from cosim import DiagramBuilder

C, K = 2.0, 20.0
SIMULATION = dict(t_end=3.0, solver="rk4", dt=1e-3, record=["plant.y", "pid.u", "err.y"])


def build(m: float = 1.0):
    """Unit step at 0.1 s into a PID position loop on the mass ``m`` [kg]."""
    b = DiagramBuilder(f"pid_msd_m{m:g}")
    r = b.add(Step("ref", 0.1, final=1.0))
    e = b.add(Sum("err", "+-"))
    pid = b.add(PID("pid", kp=100.0, ki=50.0, kd=10.0, derivative_filter_rad_s=100.0))
    A = [[0.0, 1.0], [-K / m, -C / m]]
    plant = b.add(StateSpace("plant", A, [[0.0], [1.0 / m]], [[1.0, 0.0]], [[0.0]]))
    b.connect(r.y, e.ins[0])
    b.connect(plant.y, e.ins[1])
    b.connect(e.y, pid.e)
    b.connect(pid.u, plant.u)
    return b.build()


def metrics(res, point: dict) -> dict:
    """Overshoot [%], 2 % settling time [s], IAE [m s], peak |u| [N]."""
    t, y = res.time, np.asarray(res["plant.y"]).reshape(-1)
    e = np.asarray(res["err.y"]).reshape(-1)
    after = t >= 0.1
    outside = np.nonzero(np.abs(y[after] - 1.0) > 0.02)[0]
    settle = float(t[after][outside[-1]] - 0.1) if outside.size else 0.0
    if not np.all(np.isfinite(y)):
        raise FloatingPointError("the loop diverged")
    return {"overshoot_pct": float(max(0.0, y.max() - 1.0) * 100.0),
            "settling_s": settle if outside.size < after.sum() else float("inf"),
            "iae": float(np.sum(np.abs(e[after])) * (t[1] - t[0])),
            "peak_u": float(np.max(np.abs(np.asarray(res["pid.u"]))))}


def design(masses=(1.0,)):
    from cosim.studies import grid

    return grid(m=list(masses), **{"pid.kp": np.linspace(20, 200, 10),
                                   "pid.kd": np.linspace(1, 20, 20)})


def main(argv=None):
    from cosim.studies import Study, make_executor

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/pid_sweep")
    ap.add_argument("--backend", default="local", choices=("serial", "local", "dask"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--masses", type=float, nargs="*", default=[1.0])
    args = ap.parse_args(argv)
    study = Study(__file__, design(args.masses), metrics="metrics", **SIMULATION)
    with make_executor(args.backend, args.workers) as ex:
        df = study.run(args.out, ex)
    ok = df[df.status == "ok"]
    best = ok.sort_values("iae").iloc[0]
    print(f"{len(df)} runs ({len(ok)} ok) in {args.out}; best IAE {best.iae:.4f} m s at "
          f"kp = {best['pid.kp']:g}, kd = {best['pid.kd']:g} (overshoot "
          f"{best.overshoot_pct:.1f} %)")
    return df


if __name__ == "__main__":
    main()
