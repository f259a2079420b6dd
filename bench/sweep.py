"""Suite ``sweep``: cost of running studies (cosim.studies) on each backend.

Case ``overhead/N``: N runs of a nearly empty simulation (the ``examples/pid_sweep.py``
loop for 10 ms, 10 RK4 steps): the time per run is the study machinery's overhead
(dispatch, context, journal with fsync, progress).  Ours: the local process pool with 2
workers; peers: the same study in-process (serial executor), a Dask local cluster with 2
workers, and a bare loop of ``Simulator`` runs with no study around it (the floor).  Pool
and cluster start-up are not timed (reported separately in ``extra``).

Case ``speedup``: 40 runs of the full 3 s loop (about 25 ms each) with 1 and with 2
workers, local and Dask; the speed-up is t(1 worker) / t(2 workers) on these 2-core
machines (the ideal is 2).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

from .harness import make_case, make_target, measure

NAME = "sweep"
DESCRIPTION = "Studies: overhead per run (serial, local processes, Dask) and 1->2 speed-up"
PACKAGES = ("dask", "distributed", "pyarrow")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "examples", "pid_sweep.py")


def _design(n: int):
    import numpy as np

    return [{"pid.kp": float(k)} for k in np.linspace(20.0, 200.0, n)]


def _study(n: int, t_end: float):
    from cosim.studies import Study

    return Study(MODEL, _design(n), t_end=t_end, solver="rk4", dt=1e-3,
                 record=["plant.y", "pid.u", "err.y"], metrics="metrics")


def _study_case(n: int, t_end: float, make_executor):
    def fn():
        ex = make_executor()
        out = tempfile.mkdtemp(prefix="bench_sweep_")
        try:
            study = _study(n, t_end)
            # warm the workers (imports, first build) outside the timing
            _study(2, 0.002).run(tempfile.mkdtemp(dir=out), ex, progress=False)
            t0 = time.perf_counter()
            df = study.run(os.path.join(out, "s"), ex, progress=False)
            run_s = time.perf_counter() - t0
        finally:
            ex.close()
            shutil.rmtree(out, ignore_errors=True)
        if set(df.status) != {"ok"} or len(df) != n:
            raise RuntimeError(f"study failed: {df[df.status != 'ok'].error.tolist()[:2]}")
        return 0.0, run_s / n, {"runs": n}
    return fn


def _bare(n: int, t_end: float):
    def fn():
        import examples.pid_sweep as ex
        from cosim import Simulator

        d = ex.build()
        t0 = time.perf_counter()
        for p in _design(n):
            ctx = d.create_context()
            ctx.set_param("pid.kp", p["pid.kp"])
            res = Simulator(d, context=ctx, solver="rk4", dt=1e-3,
                            record=["plant.y", "pid.u", "err.y"]).run(t_end)
            ex.metrics(res, p)
        return 0.0, (time.perf_counter() - t0) / n, {"runs": n}
    return fn


def _executors(workers: int):
    from cosim.studies import DaskExecutor, LocalExecutor, SerialExecutor

    return {"local": lambda: LocalExecutor(workers), "serial": SerialExecutor,
            "dask": lambda: DaskExecutor(workers=workers)}


def run(options) -> dict:
    n = 40 if options.quick else 200
    reps = 1 if options.quick else max(1, options.repeats // 3)
    ex2 = _executors(2)
    cases = []
    ours = measure(_study_case(n, 0.01, ex2["local"]), repeats=reps, steps=None, blocks=None)
    peers = {"serial": measure(_study_case(n, 0.01, ex2["serial"]), repeats=reps,
                               steps=None, blocks=None),
             "dask": measure(_study_case(n, 0.01, ex2["dask"]), repeats=reps, steps=None,
                             blocks=None),
             "bare-loop": measure(_bare(n, 0.01), repeats=reps, steps=None, blocks=None)}
    cases.append(make_case(f"overhead/{n}", ours, peers))

    m = 20 if options.quick else 40
    ex1 = _executors(1)
    times = {}
    for label, make in (("local-1", ex1["local"]), ("local-2", ex2["local"]),
                        ("dask-1", ex1["dask"]), ("dask-2", ex2["dask"])):
        times[label] = measure(_study_case(m, 3.0, make), repeats=reps, steps=None,
                               blocks=None)
    cases.append(make_case("speedup", times["local-2"],
                           {k: v for k, v in times.items() if k != "local-2"}))

    def med(x):
        return x.get("median_s")

    def speed(a, b):
        return None if not (med(a) and med(b)) else med(a) / med(b)

    over_local = med(ours)
    over_dask = med(peers["dask"])
    floor = med(peers["bare-loop"])
    return {"cases": cases, "targets": [
        make_target("overhead per run, local pool (2 workers) [ms]",
                    None if over_local is None else 1e3 * over_local, "<=", "20",
                    note=f"bare Simulator loop {1e3 * floor:.1f} ms/run" if floor else ""),
        make_target("overhead per run, Dask local cluster (2 workers) [ms]",
                    None if over_dask is None else 1e3 * over_dask, "<=", "50"),
        make_target("speed-up 1 -> 2 workers, local pool", speed(times["local-1"],
                                                                 times["local-2"]),
                    ">=", "1.5", note="2-core machine, shared"),
        make_target("speed-up 1 -> 2 workers, Dask", speed(times["dask-1"], times["dask-2"]),
                    ">=", "1.5", note="2-core machine, shared"),
    ]}
