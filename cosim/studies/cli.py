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
from ..results_folder import add_force_option


def _number(text: str) -> float | str:
    """A float if the text is one, else the text (a build argument may be a name)."""
    try:
        return float(text)
    except ValueError:
        return text


_SYNTAX = "write NAME=1,2,3 (values), NAME=LO:HI:N (N values) or NAME=LO:HI:N:log"


def _values(spec: str) -> tuple[str, list | tuple]:
    """``NAME=VALUES`` of ``--param`` (module docstring); one-line reasons for bad specs."""
    name, sep, rhs = spec.partition("=")
    if not sep or not name or not rhs:
        raise CosimError(f"--param {spec!r}: {_SYNTAX}")
    if ":" in rhs:
        parts = rhs.split(":")
        if len(parts) not in (2, 3, 4) or (len(parts) == 4 and parts[3] != "log"):
            raise CosimError(f"--param {spec!r}: {_SYNTAX}")
        try:
            lo, hi = float(parts[0]), float(parts[1])
        except ValueError:
            raise CosimError(f"--param {spec!r}: LO and HI must be numbers") from None
        if len(parts) == 2:
            return name, (lo, hi)
        try:
            n = int(parts[2])
        except ValueError:
            raise CosimError(f"--param {spec!r}: N must be a whole number, got "
                             f"{parts[2]!r}") from None
        if n < 1:
            raise CosimError(f"--param {spec!r}: N must be at least 1, got {n}")
        if len(parts) == 4:
            if not (lo > 0 and hi > 0):
                raise CosimError(f"--param {spec!r}: a log range needs LO > 0 and HI > 0")
            return name, list(np.geomspace(lo, hi, n))
        return name, list(np.linspace(lo, hi, n))
    values = [_number(v.strip()) for v in rhs.split(",")]
    text = [v for v in values if isinstance(v, str)]
    if text and len(text) < len(values):
        raise CosimError(f"--param {spec!r}: {text[0]!r} is not a number (the other values "
                         "are); give numbers, or only names for a build argument that takes "
                         "names")
    if any(v == "" for v in values):
        raise CosimError(f"--param {spec!r}: an empty value; {_SYNTAX}")
    return name, values


def add_parser(sub) -> None:
    s = sub.add_parser("sweep", help="run a parameter study of a model file",
                       description=__doc__.split("\n\n")[1])
    s.add_argument("file", help="model file (a diagram function, optional SIMULATION dict)")
    s.add_argument("--function", help="diagram function in the file (default: build)")
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUES",
                   help="a parameter and its values: NAME=1,2,4, NAME=LO:HI:N, "
                        "NAME=LO:HI:N:log, or NAME=LO:HI (a range for random/lhs/sobol); "
                        "a dotted NAME (pid.kp) is a context parameter, else an argument "
                        "of the diagram function (repeatable)")
    s.add_argument("--design", default="grid", choices=("grid", "random", "lhs", "sobol"),
                   help="grid: every combination (default); random/lhs/sobol: --n points "
                        "drawn in the parameters' ranges")
    s.add_argument("--n", type=int, help="points of a random/lhs/sobol design (default 64)")
    s.add_argument("--seed", type=int,
                   help="random seed of a random/lhs/sobol design (default 0)")
    s.add_argument("--backend", default="local", choices=("serial", "local", "dask"),
                   help="where the runs execute: local processes (default), Dask, or "
                        "serial in this process")
    s.add_argument("--workers", type=int, help="worker processes (default: CPU count)")
    s.add_argument("--scheduler", help="Dask scheduler address (default: a local cluster)")
    s.add_argument("--out", help="study folder (default out/sweep_<model>)")
    add_force_option(s, resumes=True)
    s.add_argument("--t-end", type=float,
                   help="end time of each run [s] (default: the file's SIMULATION, else 1)")
    s.add_argument("--solver", help="solver of each run (default: the file's, else rk4)")
    s.add_argument("--dt", type=float,
                   help="fixed step or output grid of each run [s] (default: the file's)")
    s.add_argument("--record", nargs="*", help="output ports recorded in each run")
    s.add_argument("--metrics", help="metrics function NAME(results, point) -> dict in the "
                                     "file")
    s.add_argument("--retry-failed", action="store_true",
                   help="run again the runs that failed before (resuming a study)")
    s.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
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
        if args.n is not None or args.seed is not None:
            raise CosimError(f"cosim sweep: --{'n' if args.n is not None else 'seed'} "
                             "applies to random, lhs and sobol designs, not to the grid "
                             "(--design)")
        return D.grid(**params)
    if args.n is not None and args.n < 1:
        raise CosimError(f"cosim sweep: --n must be at least 1, got {args.n}")
    args.n = 64 if args.n is None else args.n
    args.seed = 0 if args.seed is None else args.seed
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
    from ..results_folder import claim
    claim(out, "cosim sweep", args.file, ["study.json", "journal.jsonl", "results.parquet",
                                          "results.csv"], force=args.force, resumable=True,
          own_marker="study.json", argv=getattr(args, "argv", None))
    with _terminate_as_interrupt(), \
            make_executor(args.backend, args.workers, args.scheduler) as ex:
        df = study.run(out, ex, progress=not args.quiet, retry_failed=args.retry_failed)
    failed = df[df.status != "ok"]
    table = next((os.path.join(out, f) for f in ("results.parquet", "results.csv")
                  if os.path.exists(os.path.join(out, f))), out)
    print(f"{len(df)} of {len(study.design)} runs in {out} ({len(failed)} failed); "
          f"table: {table}")
    for _, row in failed.head(5).iterrows():
        print(f"  failed {row.run_id}: {row.error}")
    if len(failed):
        print(f"FAIL: {len(failed)} of {len(df)} runs failed (their errors are in the "
              "table's 'error' column; --retry-failed runs them again)")
    return 0 if len(df) == len(study.design) and not len(failed) else 1


class _terminate_as_interrupt:
    """SIGTERM raises KeyboardInterrupt for the duration, so that a killed sweep closes its
    executor (which ends the worker processes) instead of dying and leaving them."""

    def __enter__(self):
        import signal
        self._old = signal.getsignal(signal.SIGTERM)

        def handler(signum, frame):
            raise KeyboardInterrupt("SIGTERM")
        try:
            signal.signal(signal.SIGTERM, handler)
        except ValueError:  # not the main thread: leave it
            self._old = None
        return self

    def __exit__(self, *exc):
        import signal
        if self._old is not None:
            signal.signal(signal.SIGTERM, self._old)
