"""``cosim sweep FILE.py``: a parameter study from the shell.

Parameters: ``--param NAME=1,2,4`` (values), ``--param NAME=LO:HI:N`` (N values evenly
spaced), ``--param NAME=LO:HI:N:log`` (log-spaced); names with a dot are context
parameters (``pid.kp``), others keyword arguments of the diagram function.  Designs:
``grid`` (default: the full factorial), ``random`` (uniform on ``LO:HI``), ``lhs`` or
``sobol`` (``--n`` points, ``--seed``).  Simulation settings default to the file's
``SIMULATION`` dict; ``--metrics NAME`` names a function ``NAME(results, point) -> dict``
in the file.  Runs go to ``--backend local`` (``--workers``), ``dask`` (a local cluster,
or ``--scheduler tcp://host:8786``) or ``serial``; results to ``--out`` (journal and
``results.parquet``); running the same command again resumes the study.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from ..errors import CosimError


def _number(text: str) -> float | str:
    """A float if the text is one, else the text (a build argument may be a name)."""
    try:
        return float(text)
    except ValueError:
        return text


def _values(spec: str) -> tuple[str, list | tuple]:
    name, sep, rhs = spec.partition("=")
    if not sep or not name or not rhs:
        raise CosimError(f"--param {spec!r}: write NAME=1,2,3 or NAME=LO:HI:N[:log]")
    try:
        if ":" in rhs:
            parts = rhs.split(":")
            lo, hi = float(parts[0]), float(parts[1])
            if len(parts) == 2:
                return name, (lo, hi)
            n = int(parts[2])
            if len(parts) == 4 and parts[3] == "log":
                return name, list(np.geomspace(lo, hi, n))
            if len(parts) != 3:
                raise ValueError
            return name, list(np.linspace(lo, hi, n))
        return name, [_number(v.strip()) for v in rhs.split(",")]
    except ValueError:
        raise CosimError(f"--param {spec!r}: write NAME=1,2,3 or NAME=LO:HI:N[:log]") from None


def add_parser(sub) -> None:
    s = sub.add_parser("sweep", help="run a parameter study of a model file")
    s.add_argument("file")
    s.add_argument("--function", help="diagram function in the file (default: build)")
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUES")
    s.add_argument("--design", default="grid", choices=("grid", "random", "lhs", "sobol"))
    s.add_argument("--n", type=int, default=64, help="points of a random/lhs/sobol design")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--backend", default="local", choices=("serial", "local", "dask"))
    s.add_argument("--workers", type=int, help="worker processes (default: CPU count)")
    s.add_argument("--scheduler", help="Dask scheduler address (default: a local cluster)")
    s.add_argument("--out", help="study folder (default out/sweep_<model>)")
    s.add_argument("--t-end", type=float)
    s.add_argument("--solver")
    s.add_argument("--dt", type=float)
    s.add_argument("--record", nargs="*")
    s.add_argument("--metrics", help="metrics function in the file")
    s.add_argument("--retry-failed", action="store_true")
    s.add_argument("--quiet", action="store_true")
    s.add_argument("--debug", action="store_true", help="show tracebacks")


def build_design(args) -> list[dict]:
    from . import design as D

    params = dict(_values(p) for p in args.param)
    if not params:
        raise CosimError("cosim sweep: give at least one --param NAME=VALUES")
    if args.design == "grid":
        bad = [k for k, v in params.items() if isinstance(v, tuple)]
        if bad:
            raise CosimError(f"--param {bad[0]}: a grid needs values (1,2,3 or LO:HI:N), "
                             "not a range LO:HI")
        return D.grid(**params)
    ranges = {}
    for k, v in params.items():
        if not isinstance(v, tuple):
            v = (min(v), max(v))
        ranges[k] = v
    if args.design == "random":
        return D.random_samples(args.n, args.seed, **{k: D.Uniform(*v) for k, v in
                                                     ranges.items()})
    fn = D.latin_hypercube if args.design == "lhs" else D.sobol
    return fn(args.n, args.seed, **ranges)


def run(args: argparse.Namespace) -> int:
    from .executors import make_executor
    from .model import ModelSpec
    from .study import Study

    spec = ModelSpec(os.path.abspath(args.file), args.function)
    defaults = dict(spec.attribute("SIMULATION", {}) or {})
    study = Study(spec.source, build_design(args),
                  t_end=args.t_end if args.t_end is not None else defaults.get("t_end", 1.0),
                  solver=args.solver or defaults.get("solver", "rk4"),
                  dt=args.dt if args.dt is not None else defaults.get("dt"),
                  record=args.record or defaults.get("record", "all"),
                  metrics=args.metrics, function=args.function)
    name = os.path.splitext(os.path.basename(args.file))[0]
    out = args.out or os.path.join("out", f"sweep_{name}")
    with make_executor(args.backend, args.workers, args.scheduler) as ex:
        df = study.run(out, ex, progress=not args.quiet, retry_failed=args.retry_failed)
    failed = df[df.status != "ok"]
    print(f"{len(df)} of {len(study.design)} runs in {out} ({len(failed)} failed); "
          f"table: {os.path.join(out, 'results.parquet')}")
    for _, row in failed.head(5).iterrows():
        print(f"  failed {row.run_id}: {row.error}")
    return 0 if len(df) == len(study.design) else 1
