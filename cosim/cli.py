"""The ``cosim`` console command.

``cosim run FILE.py``
    FILE.py defines a function returning a diagram (``build`` by default, or
    ``--function NAME``) and optionally a dict ``SIMULATION`` with defaults
    for ``t_end``, ``solver``, ``dt``, ``record``.  Results are streamed to
    ``--out`` (CSV and/or HDF5), a summary is printed, ``--plot`` writes a PNG.  A folder
    that holds another run's results is refused unless ``--force``; running the same
    command again replaces its own (:mod:`cosim.results_folder`).
``cosim info FILE.py``
    Blocks, ports with units, rates, execution order, algebraic loops and the
    fused linear groups; ``--dot PATH`` / ``--svg PATH`` also write the diagram
    as Graphviz DOT / SVG (:mod:`cosim.graphviz`; SVG needs Graphviz's ``dot``).
``cosim sweep FILE.py --param NAME=VALUES ...``
    A parameter study (:mod:`cosim.studies.cli`): local processes or Dask, results
    to a resumable folder (claimed as ``cosim run``'s, :mod:`cosim.results_folder`).
``cosim fmu info|validate|simulate|export``
    FMUs from the command line (:mod:`fmus.cli`, found as an entry point of
    group ``cosim.commands``, so that ``cosim`` never imports the outer packages).

The command list (``cosim --help``) is read from the entry points and the commands'
sources without importing them: only the command that runs is imported.  When the reader
of standard output leaves early (``cosim ... | head``), any command ends quietly with exit
status 141, as a process ended by SIGPIPE.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import sys
import time
import traceback
from collections.abc import Collection
from typing import Any

from .errors import CosimError
from .results_folder import add_force_option

DEFAULT_FUNCTIONS = ("build", "diagram", "make_diagram")


def load_model(path: str, function: str | None = None) -> tuple[Any, dict]:
    """Import ``path`` and call its diagram function; returns (diagram, SIMULATION).  The
    file's folder goes first on ``sys.path`` and stays (as for ``python FILE.py``)."""
    if not os.path.isfile(path):
        raise CosimError(f"model file {path!r} not found")
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(f"cosim_model_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    # registered while it runs: dataclasses and pickling look the module up by name
    sys.modules[spec.name] = mod
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:  # stays, as for `python FILE.py`: build() and the blocks'
        sys.path.insert(0, folder)  # code may import the model's own modules lazily
    try:
        spec.loader.exec_module(mod)
    except SyntaxError as exc:
        sys.modules.pop(spec.name, None)
        raise CosimError(f"{path}, line {exc.lineno}: syntax error: {exc.msg}"
                         + (f": {exc.text.strip()}" if exc.text else "")) from None
    except Exception as exc:
        sys.modules.pop(spec.name, None)
        raise CosimError(f"{path}: importing the model file failed{_where(exc, path)}: "
                         f"{type(exc).__name__}: {exc}") from exc
    except BaseException:
        sys.modules.pop(spec.name, None)
        raise
    funcs = {k: v for k, v in vars(mod).items()
             if inspect.isfunction(v) and v.__module__ == mod.__name__}
    if function is None:
        function = next((f for f in DEFAULT_FUNCTIONS if f in funcs), None)
    if function not in funcs:
        raise CosimError(
            f"{path}: no function {function or ' or '.join(DEFAULT_FUNCTIONS)!r} returning a "
            f"diagram; functions in the file: {', '.join(funcs) or '(none)'}; pass --function")
    from .diagram import Diagram
    required = [p.name for p in inspect.signature(funcs[function]).parameters.values()
                if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if required:
        raise CosimError(f"{path}: {function}() needs arguments ({', '.join(required)}); "
                         "cosim run/info call it without any: give them defaults, or pass "
                         "--function with a diagram function that needs none")
    try:
        d = funcs[function]()
    except CosimError as exc:  # a build error of ours already says what and where
        raise CosimError(f"{path}: {function}() failed: {exc}") from exc
    except Exception as exc:
        raise CosimError(f"{path}: {function}() failed{_where(exc, path)}: "
                         f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(d, Diagram):
        raise CosimError(f"{path}: {function}() returned {type(d).__name__}, not a Diagram "
                         "(call builder.build())")
    return d, dict(getattr(mod, "SIMULATION", {}))


def _where(exc: BaseException, path: str) -> str:
    """`` (line N)`` of the innermost frame of ``exc`` in the model file ``path``."""
    tb, line = exc.__traceback__, None
    target = os.path.abspath(path)
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == target:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f" (line {line})" if line else ""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("cosim")
    except PackageNotFoundError:  # run from a source tree without installing
        return "unknown (not installed)"


#: the commands defined here and in :mod:`cosim.studies.cli`: name -> (help, module)
_BUILTIN = {"run": ("simulate a model file", __name__),
            "sweep": (None, "cosim.studies.cli"), "info": ("describe a model file", __name__)}


def _parser(populate: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``cosim`` parser.  Every command is listed (with its help) but only those in
    ``populate`` (None: all) get their options, which imports their modules: ``cosim
    --help`` and ``cosim run`` import no other command's package (numpy, scipy, fmpy,
    ``fmus``, ``hil`` stay unloaded until a command needs them)."""
    p = argparse.ArgumentParser(prog="cosim", description="Block-diagram co-simulation.")
    p.add_argument("--version", action="version", version=f"cosim {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    for name, (text, module) in _commands().items():
        if populate is not None and name not in populate:
            sub.add_parser(name, help=text, add_help=False)
        elif module == __name__:
            _add_own_parser(sub, name, text)
        else:
            _load(name, module).add_parser(sub)
    return p


def _add_own_parser(sub: Any, name: str, text: str) -> None:
    if name == "run":
        r = sub.add_parser("run", help=text)
        r.add_argument("file", help="model file: a Python file with a diagram function "
                                    "(build()) and an optional SIMULATION dict of defaults")
        r.add_argument("--function", help="diagram function in the file (default: build)")
        r.add_argument("--t-end", type=float,
                       help="end time [s] (default: the file's SIMULATION t_end, else 1)")
        r.add_argument("--solver", help="euler, heun, midpoint, rk4, ab3, rk45, rk23, dop853, "
                                        "radau, bdf, lsoda (default: the file's, else rk4)")
        r.add_argument("--dt", type=float,
                       help="fixed step, or output grid for variable step [s]")
        r.add_argument("--rtol", type=float, default=1e-6,
                       help="relative tolerance of variable-step solvers (default 1e-6)")
        r.add_argument("--atol", type=float, default=1e-9,
                       help="absolute tolerance of variable-step solvers (default 1e-9)")
        r.add_argument("--out", help="output folder (default out/<model>)")
        add_force_option(r)
        r.add_argument("--format", default="csv", help="csv, hdf5 or csv,hdf5")
        r.add_argument("--record", nargs="*", help="output ports to record (default all)")
        r.add_argument("--every", type=int, default=1, help="record every n-th sample")
        r.add_argument("--plot", action="store_true", help="write plot.png (needs matplotlib)")
        r.add_argument("--quiet", "-q", action="store_true",
                       help="no progress bar, short summary")
        r.add_argument("--debug", action="store_true", help="show tracebacks")
    else:
        i = sub.add_parser("info", help=text)
        i.add_argument("file", help="model file (as for cosim run)")
        i.add_argument("--function", help="diagram function in the file (default: build)")
        i.add_argument("--dot", metavar="PATH", help="also write the diagram as Graphviz DOT")
        i.add_argument("--svg", metavar="PATH",
                       help="also write the diagram as SVG (needs dot)")
        i.add_argument("--debug", action="store_true", help="show tracebacks")


def _commands() -> dict[str, tuple[str, str]]:
    """``{command: (help, module)}``: the built-in commands, then those of other packages,
    entry points of group ``cosim.commands`` (each names a module with
    ``add_parser(subparsers)`` and ``run(args) -> int``), listed without importing them."""
    from importlib.metadata import entry_points
    out = {name: (text or _plugin_help(module, name), module)
           for name, (text, module) in _BUILTIN.items()}
    for ep in entry_points(group="cosim.commands"):
        if ep.name not in out:
            out[ep.name] = (_plugin_help(ep.value, ep.name), ep.value)
    return out


def _plugin_help(module: str, command: str) -> str:
    """The ``help=`` its module gives ``add_parser(command, ...)``, read from the source
    (not imported: importing it would load its package), else its docstring's first line."""
    import ast
    from importlib.machinery import PathFinder
    from importlib.util import find_spec
    try:
        top, *rest = module.split(".")
        spec = find_spec(top)
        for i in range(len(rest)):  # locate submodules without importing packages
            spec = PathFinder.find_spec(".".join([top, *rest[:i + 1]]),
                                        spec.submodule_search_locations)
        with open(spec.origin, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except Exception:  # noqa: BLE001 - a missing or odd plugin still gets listed
        return f"(from {module})"
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_parser"
                and node.args and isinstance(node.args[0], ast.Constant)
                and node.args[0].value == command):
            for kw in node.keywords:
                if kw.arg == "help" and isinstance(kw.value, ast.Constant):
                    return str(kw.value.value)
    doc = ast.get_docstring(tree) or f"(from {module})"
    return doc.strip().splitlines()[0]


def _load(name: str, module: str) -> Any:
    """The module of command ``name``, or a clear error when it cannot be imported."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # a plugin whose dependencies are missing
        raise SystemExit(f"cosim: command '{name}' unavailable: {exc}") from None


def _selected(argv: list[str]) -> set[str]:
    """The command named on the command line (the first word that is not an option)."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return {word} if word in _commands() else set()


def cmd_info(args: argparse.Namespace) -> int:
    d, _ = load_model(args.file, args.function)
    plan = d.compile()
    print(d.describe())
    print()
    print(plan.describe())
    from .evaluator import Evaluator
    ev = Evaluator(plan, d.create_context())
    print(ev.describe())
    for path in (args.dot, args.svg):
        if path:
            from .graphviz import write
            print("diagram:", write(d, path))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from .simulator import Simulator
    from .writers import CsvWriter, Hdf5Writer
    d, defaults = load_model(args.file, args.function)
    t_end = args.t_end if args.t_end is not None else defaults.get("t_end", 1.0)
    solver = args.solver or defaults.get("solver", "rk4")
    dt = args.dt if args.dt is not None else defaults.get("dt")
    record = args.record or defaults.get("record", "all")
    out = args.out or os.path.join("out", d.name)
    files = {}
    for fmt in args.format.split(","):
        fmt = fmt.strip().lower()
        if fmt not in ("csv", "hdf5", "h5"):
            raise CosimError(f"--format: unknown format {fmt!r}; use csv, hdf5 or csv,hdf5")
        files["results.csv" if fmt == "csv" else "results.h5"] = fmt
    from .csv_results import sidecar_path
    from .results_folder import claim
    outputs = [*files, sidecar_path("results.csv").name, "plot.png"]  # all a run may write
    taken = claim(out, "cosim run", args.file, outputs, force=args.force, argv=args.argv)
    writers = [(CsvWriter if fmt == "csv" else Hdf5Writer)(os.path.join(out, name), record,
                                                           args.every)
               for name, fmt in files.items()]
    sim = Simulator(d, solver=solver, dt=dt, rtol=args.rtol, atol=args.atol, record=record,
                    record_every=args.every, observers=writers, progress=not args.quiet)
    wall = time.perf_counter()
    res = sim.run(t_end)
    wall = time.perf_counter() - wall
    print(f"model '{d.name}': {len(d.leaf_blocks())} blocks, solver {solver}"
          + (f", dt {dt:g} s" if dt else "") + f", t_end {t_end:g} s")
    print(f"wall time {wall:.3f} s ({t_end / wall:.1f}x real time), "
          f"{res.diagnostics['steps']} steps, {res.diagnostics['events']} events")
    if not args.quiet:
        for k, v in list(res.signals.items())[:12]:
            if v.ndim == 1 and v.size:
                unit = f" {res.units[k]}" if res.units[k] else ""
                print(f"  {k:<32} final {v[-1]: .6g}{unit}   min {v.min(): .4g}   "
                      f"max {v.max(): .4g}")
    for w in writers:
        print(f"results: {w.path}{taken.note()}")
    if args.plot:
        from .plotting import plot_results
        print("plot:", plot_results(res, os.path.join(out, "plot.png"), title=d.name))
    return 0


class _StdoutClosed(BaseException):
    """Standard output was closed by its reader (``cosim ... | head``).  A BaseException,
    so that the commands' ``except Exception`` clauses (which report unexpected errors)
    let it through to :func:`main`, while ``finally`` blocks still run."""


class _PipeGuard:
    """``sys.stdout`` for the duration of a command: a write or flush that fails because
    the reader went away raises :class:`_StdoutClosed` instead of BrokenPipeError."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise _StdoutClosed from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise _StdoutClosed from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: list[str] | None = None) -> int:
    """Run one ``cosim`` command; its exit status (141 when the reader of standard output
    closed it early, as for a process that SIGPIPE ended: no traceback)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    stdout = sys.stdout
    sys.stdout = _PipeGuard(stdout)
    try:
        status = _dispatch(argv)
        sys.stdout.flush()  # output still buffered: a closed pipe shows here, not at exit
        return status
    except _StdoutClosed:
        try:  # the interpreter flushes stdout at exit: let that go nowhere
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stdout.fileno())
        except (OSError, ValueError, AttributeError):  # not a real file (captured output)
            pass
        return 141
    finally:
        sys.stdout = stdout


def _dispatch(argv: list[str]) -> int:
    command = _selected(argv)
    args = _parser(command).parse_args(argv)
    args.argv = ["cosim", *argv]  # recorded beside the results (cosim.results_folder)
    try:
        if args.command in ("run", "info"):
            return cmd_run(args) if args.command == "run" else cmd_info(args)
        name, module = args.command, _commands()[args.command][1]
        return _load(name, module).run(args)
    except CosimError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"cosim: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cosim: interrupted", file=sys.stderr)
        return 130
