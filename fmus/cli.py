"""``cosim fmu info|validate|simulate|export``: FMUs from the command line, as FMPy users expect.

``cosim fmu info FMU [--all]``
    Metadata, the default experiment, and the inputs, outputs and parameters with the
    units the FMU writes (``1/m``, ``m/s2``), start values and ranges; an array FMI 2
    spells as scalar variables (``table[1,1]``, ...) is one line (:mod:`fmus.cli_info`).
    ``--all`` lists every variable, the interfaces' capabilities, every other variable
    (locals, calculated parameters, clocks...), cosim's port names and the model
    description's problems.
    ``info`` never refuses an FMU for a broken model description rule: it reads it as
    ``--validate none`` does and says which problems make loading refuse it.
``cosim fmu validate FMU [--strict] [--instantiate]``
    The model description against the FMI schema and rules, the binary for each
    interface (read, not loaded: architecture and exported FMI functions) and
    (``--instantiate``) one instantiation and initialization of each interface, in a
    child process with the FMU's logging on: a failure reports what the FMU logged (a
    Python FMU's missing module, say).  Every failure is a reported problem, never a
    traceback.  Exit status 0: valid; 1: problems (errors, or warnings with
    ``--strict``); 2: not a file or bad usage.
``cosim fmu simulate FMU [--interface-type me|cs|se] [--t-end T] [--set NAME=VALUE] ...``
    Run the FMU alone through cosim's importer (not fmpy's ``simulate_fmu``): Model
    Exchange on a cosim solver (default ``bdf``, a stiff variable-order method like FMPy's
    CVode, so stiff models such as Robertson's do not crawl; results on the ``--dt`` grid),
    Co-Simulation on the master with communication step ``--step``.  ``--validate
    warn|strict|none`` as ``load_fmu(validate=...)`` (:mod:`fmus.description`).  ``--set`` sets any
    variable FMI lets an importer set before initialization (parameters, inputs,
    ``initial="exact"``/``"approx"`` variables), typed by its declared type (a String
    stays text, ``"1"`` for a Float64 is 1.0, Int64/UInt64 exact, Binary in hex, an
    Enumeration by number or item name).  Inputs not fed by ``--input`` keep their start
    (or ``--set``) value.  ``--input`` plays a CSV file as FMPy does: the ``time`` column
    (else the first column) and one column per input, by FMU name or port name;
    continuous Real inputs are interpolated linearly, the others held (zero-order); a
    time given twice is a step (the value changes at that instant).  Results stream to
    ``--out`` (default ``out/<model>``) as CSV while the run goes; a folder holding
    another run's results is refused unless ``--force`` (:mod:`cosim.results_folder`);
    ``--plot`` adds a PNG of the outputs beside them.

    FMPy's spellings work too: ``--start-time``, ``--stop-time``, ``--start-values NAME
    VALUE ...`` (repeatable), ``--input-file``, ``--relative-tolerance``,
    ``--interface-type``, ``--output-interval`` (the ``--dt`` output grid of Model
    Exchange, the ``--step`` of Co-Simulation) and ``--output-file FILE.csv`` (the results
    there, replaced if it exists, instead of a folder).  The FMU gets the tolerance FMPy
    gives it: ``--tolerance``, else ``--relative-tolerance``, else the default experiment's
    (``fmi2SetupExperiment`` / ``fmi3EnterInitializationMode``, every interface; FMPy hands
    it to Co-Simulation FMUs only).  ``--timeout`` is ours: the
    watchdog per FMU call of an ``--out-of-process`` run (FMPy's limits the whole run).
``cosim fmu export MODEL OUT.fmu [--via c|python] [--fmi 2|3] ...``
    ``MODEL`` is a model file (as for ``cosim run``) or ``package.module:function``.
    ``--via c`` (default): generated C (:func:`fmus.export.export_fmu`,
    ``--interface-type cs|me|both``); ``--via python``: pythonfmu/pythonfmu3
    (:func:`fmus.pyexport.export_python_fmu`), Co-Simulation, the model's own modules
    bundled in the FMU (:mod:`fmus.pybundle`).  The internal step defaults to the model
    file's ``SIMULATION`` ``dt`` (and, for Python, its solver).

``--interface-type`` is the FMI interface type everywhere in ``cosim fmu`` (FMPy's word);
the old spellings, ``simulate --interface`` and ``export --kind``, still work with a
note (``--interface`` is a CAN or I/O interface in ``cosim hil`` and ``cosim replay``).

Every failure ends in one ``cosim fmu <command>: error: ...`` line on stderr (details, if
any, indented below it; ``--debug`` adds the traceback) and exit status 2 (1 for a
failed ``validate``).

String and Binary inputs are fed by file columns too (a String cell as it is, a Binary
one as hex digits) and String and Binary outputs are written to the results CSV (text,
and hex digits; :mod:`cosim.csv_results`), which FMPy's recorder leaves out.

Limitations: input files feed inputs only (FMPy also plays tunable parameters from
them), scalar ones (String and Binary arrays take ``--set`` values); the results CSV
is cosim's (its sidecar holds units, provenance and status), not FMPy's.  A Scheduled
Execution FMU runs as a block (``--interface-type se`` or auto); its triggered input
clocks are fed by input-file columns named after them (a tick where the value increases).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from cosim.errors import CosimError
from cosim.results_folder import add_force_option

from .cli_info import describe, fmi_unit
from .cli_values import _add_sources, _sources, settings


def add_parser(sub: Any) -> None:
    """Add the ``fmu`` command and its subcommands to the ``cosim`` parser."""
    f = sub.add_parser("fmu", help="inspect, validate, simulate and export FMUs")
    fsub = f.add_subparsers(dest="fmu_command", required=True)
    i = fsub.add_parser("info", help="metadata, inputs, outputs and parameters of an FMU")
    i.add_argument("fmu", help="the .fmu file (or an extracted FMU folder)")
    i.add_argument("--all", action="store_true",
                   help="also capabilities, every other variable and the problems found")
    v = fsub.add_parser("validate", help="check an FMU's model description and binaries")
    v.add_argument("fmu", help="the .fmu file (or an extracted FMU folder)")
    v.add_argument("--strict", action="store_true", help="warnings count as failures")
    v.add_argument("--instantiate", action="store_true",
                   help="also load the binary and instantiate each interface once")
    s = fsub.add_parser("simulate", help="run an FMU alone through cosim's importer")
    s.add_argument("fmu", help="the .fmu file (or an extracted FMU folder)")
    s.add_argument("--interface-type", dest="interface", metavar="TYPE",
                   help="FMI interface type to run: auto (default), me (ModelExchange), "
                        "cs (CoSimulation) or se (ScheduledExecution)")
    s.add_argument("--interface", dest="interface_deprecated", metavar="TYPE",
                   help="deprecated spelling of --interface-type")
    s.add_argument("--t-start", "--start-time", dest="t_start", type=float,
                   help="start time [s] (default: the FMU's startTime, else 0)")
    s.add_argument("--t-end", "--stop-time", dest="t_end", type=float,
                   help="end time [s] (default: the FMU's stopTime, else 1)")
    s.add_argument("--step", type=float, help="co-simulation communication step [s]")
    s.add_argument("--solver", default="bdf",
                   help="Model Exchange solver (default bdf: stiff-safe, as FMPy's CVode; "
                        "rk45, dop853, radau, lsoda, or a fixed-step rk4/euler with --dt)")
    s.add_argument("--dt", type=float, help="Model Exchange output grid or fixed step [s]")
    s.add_argument("--output-interval", type=float, metavar="DT",
                   help="as FMPy: the output grid (--dt) of Model Exchange, the "
                        "communication step (--step) of Co-Simulation [s]")
    s.add_argument("--rtol", "--relative-tolerance", dest="rtol", type=float,
                   help="relative tolerance of a variable-step solver (Model Exchange; "
                        "default 1e-6); as FMPy's --relative-tolerance also the FMU's "
                        "tolerance unless --tolerance is given")
    s.add_argument("--tolerance", type=float,
                   help="relative tolerance given to the FMU (fmi2SetupExperiment, "
                        "fmi3EnterInitializationMode; every interface): default --rtol if "
                        "given, else the default experiment's tolerance, as FMPy")
    s.add_argument("--atol", type=float, default=1e-9,
                   help="absolute tolerance of a variable-step solver (Model Exchange)")
    s.add_argument("--validate", default="warn", choices=("warn", "strict", "none"),
                   help="model description rules: warn (default: load what FMPy loads, "
                        "derive what is left out, warn), strict (refuse any broken rule) or "
                        "none (do not check them, as FMPy's validate=False)")
    s.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="start value of a parameter, an input or an initial='exact'/'approx' "
                        "variable, typed by the variable (repeatable)")
    s.add_argument("--start-values", action="extend", nargs="+", default=[],
                   metavar="NAME VALUE",
                   help="as FMPy: start values as name-value pairs (--start-values k 50 m 2; "
                        "repeatable), the same as --set k=50 --set m=2")
    s.add_argument("--input", "--input-file", dest="input",
                   help="CSV file: a 'time' column (else the first column) and input "
                        "columns; a time given twice is a step")
    s.add_argument("--out", help="output folder (default out/<model>)")
    s.add_argument("--output-file", metavar="FILE.csv",
                   help="as FMPy: write the results to this CSV file (instead of "
                        "results.csv in --out); --plot writes FILE.png beside it")
    add_force_option(s)
    s.add_argument("--plot", action="store_true", help="also write plot.png of the outputs")
    s.add_argument("--out-of-process", action="store_true",
                   help="run the FMU in a child process with a watchdog")
    s.add_argument("--timeout", type=float,
                   help="watchdog timeout per FMU call [s] of an out-of-process run "
                        "(default 10; not FMPy's limit on the whole simulation)")
    s.add_argument("--quiet", "-q", action="store_true", help="short summary, no progress bar")
    e = fsub.add_parser("export", help="export a model as an FMU")
    e.add_argument("model", help="model file or package.module:function")
    e.add_argument("out", help="the .fmu file (or a folder) to write")
    e.add_argument("--function", help="diagram function in the model file")
    e.add_argument("--via", default="c", choices=("c", "python"),
                   help="c: generated C, compiled (default); python: a pythonfmu FMU that "
                        "runs the diagram in Python (needs cosim[fmi-export])")
    e.add_argument("--fmi", default="2", choices=("2", "3"), help="FMI version (default 2)")
    e.add_argument("--interface-type", dest="kind", choices=("cs", "me", "both"),
                   help="FMI interface types to export: cs (CoSimulation, default), me "
                        "(ModelExchange, generated C only) or both")
    e.add_argument("--kind", dest="kind_deprecated", choices=("cs", "me", "both"),
                   help="deprecated spelling of --interface-type")
    e.add_argument("--integrator",
                   help="generated C co-simulation integrator (rk4, heun, midpoint, euler, zoh)")
    e.add_argument("--step", type=float,
                   help="internal fixed step [s] (default: the model file's SIMULATION dt)")
    e.add_argument("--solver", help="--via python: internal solver (default: the model "
                                    "file's SIMULATION solver, else rk4)")
    e.add_argument("--model-name", help="the FMU's modelName (default: the diagram's name)")
    for p in (f, i, v, s, e):
        p.add_argument("--debug", action="store_true", help="show tracebacks")


def run(args: argparse.Namespace) -> int:
    """Run one ``fmu`` subcommand; every failure is one error line and exit status 2."""
    cmd = {"info": cmd_info, "validate": cmd_validate, "simulate": cmd_simulate,
           "export": cmd_export}[args.fmu_command]
    try:
        with _Notes():
            return cmd(args)
    except Exception as exc:  # noqa: BLE001 - a command line never shows a traceback
        return _fail(args, exc)


def _fail(args: argparse.Namespace, exc: BaseException) -> int:
    if getattr(args, "debug", False):
        import traceback
        traceback.print_exc()
    text = str(exc).strip() or type(exc).__name__
    first, _, rest = text.partition("\n")
    if not isinstance(exc, CosimError):
        first = (f"{type(exc).__name__}: {first} (unexpected: rerun with --debug for the "
                 "traceback and report it)")
    print(f"cosim fmu {args.fmu_command}: error: {first}", file=sys.stderr)
    if rest.strip():
        print("\n".join("  " + ln.strip() for ln in rest.strip().splitlines()),
              file=sys.stderr)
    return 2


class _Notes:
    """Within it, cosim's warnings (FMU notes, packaging slips) print as ``note:`` lines
    on stderr when they happen, each once, instead of Python's two-line warnings."""

    def __enter__(self) -> _Notes:
        import warnings

        from cosim.errors import CosimWarning
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("default", CosimWarning)
        old = warnings.showwarning
        seen: set[str] = set()

        def show(message: Any, category: Any, *args: Any, **kw: Any) -> None:
            if issubclass(category, CosimWarning):
                # once by text: the same note comes again when a model is built twice
                # (the export builds it, then the FMU builder instantiates it)
                if str(message) not in seen:
                    seen.add(str(message))
                    print(f"note: {message}", file=sys.stderr)
            else:
                old(message, category, *args, **kw)
        warnings.showwarning = show
        return self

    def __exit__(self, *exc: Any) -> None:
        self._ctx.__exit__(*exc)


# ------------------------------------------------------------------------ info
def cmd_info(args: argparse.Namespace) -> int:
    import warnings

    from .errors import FMUWarning, ModelDescriptionError
    from .importer import fmu_info
    try:
        with warnings.catch_warnings():  # info shows the problems, never refuses for them
            warnings.filterwarnings("ignore", ".*validate='none'", FMUWarning)
            info = fmu_info(args.fmu, validate="none")
    except ModelDescriptionError as exc:  # not readable: what it is, and why not
        print(_unreadable(args.fmu, exc))
        return 0
    print(describe(info, args.all))
    return 0


def _unreadable(path: str, exc: Any) -> str:
    """``info`` of an FMU whose model description cannot be read: the header attributes, if
    the XML parses, and every problem."""
    from .archive import extract_fmu
    from .description import _safe_parse
    head = f"FMU {os.path.basename(path)}"
    try:
        archive = extract_fmu(path)  # held: its folder goes with it
        root = _safe_parse(archive.root / "modelDescription.xml", path).getroot()
        head += (f": model '{root.get('modelName')}', FMI {root.get('fmiVersion')}"
                 + (f", generated by {root.get('generationTool')}"
                    if root.get("generationTool") else ""))
    except Exception:  # noqa: BLE001 - the problems below say why
        pass
    lines = [head, f"  the model description cannot be read ({len(exc.problems)} "
             "problem(s); no validate setting loads it):"]
    lines += [f"  error: {p}" for p in exc.problems]
    return "\n".join(lines)


# -------------------------------------------------------------------- validate
def cmd_validate(args: argparse.Namespace) -> int:
    from .archive import check_binary, extract_fmu, platform_binary
    from .description import read_description
    from .errors import FMUError, ModelDescriptionError
    name = os.path.basename(args.fmu)
    if not os.path.exists(args.fmu):
        raise CosimError(f"FMU '{args.fmu}': no such file")
    try:
        archive = extract_fmu(args.fmu)
        # every rule's problem listed ("none" reads on); a skipped one is an error
        info = read_description(archive.root, name, "none")
    except (ModelDescriptionError, FMUError) as exc:
        print(exc)
        print(f"{name}: INVALID")
        return 1
    counts = {"error": 0, "warning": 0, "info": 0}
    for p in info.problems:
        sev = "error" if p.severity == "skipped" else p.severity
        counts[sev] = counts.get(sev, 0) + 1
        print(f"  {sev}: {p}")
    for n in info.notes:
        print(f"  note: {n}")
    for itf, caps in info.interfaces.items():
        try:
            lib = platform_binary(archive.root, info.fmi_major, caps["modelIdentifier"], name)
            check_binary(lib, info.fmi_major, itf, info.token, name)
            print(f"  {itf}: binary {lib.relative_to(archive.root)}")
        except FMUError as exc:
            counts["error"] += 1
            print(f"  error: {itf}: {exc}")
            continue
        if args.instantiate:
            problem = _instantiate(args.fmu, itf)
            if problem:
                counts["error"] += 1
                print(f"  error: {itf}: {problem}")
            else:
                print(f"  {itf}: instantiated and initialized")
    bad = counts["error"] + (counts["warning"] if args.strict else 0)
    print(f"{name}: FMI {info.fmi_version}, {'+'.join(info.interfaces)}; "
          f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} notes: "
          + ("INVALID" if bad else "valid"))
    return 1 if bad else 0


def _instantiate(path: str, itf: str, timeout_s: float = 30.0) -> str | None:
    """Instantiate and initialize ``itf`` once, in a child process (a Co-Simulation
    subsystem, or a Model Exchange block in a one-step run with its inputs at their start
    values); the problem as one line, or None.  Nothing raised here escapes."""
    import warnings
    blk = None
    try:
        from .importer import FMU
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fmu = FMU(path, validate="none")  # the rules are reported above
            # in a child process: a crash of the FMU is a reported problem too
            if itf == "CoSimulation":
                blk = fmu.subsystem("check", out_of_process=True, timeout_s=timeout_s)
                blk.initialize(0)
                return None
            from cosim import DiagramBuilder, Simulator
            b = DiagramBuilder("check")
            make = fmu.block if itf == "ModelExchange" else fmu.scheduled
            blk = b.add(make("check", out_of_process=True, timeout_s=timeout_s))
            Simulator(b.build(), solver="euler", dt=1e-9).run(0.0)
            return None
    except Exception as exc:  # noqa: BLE001 - any failure is a reported problem
        # one line, the FMU's log included: it holds the reason (e.g. a missing module)
        text = " ".join(ln.strip() for ln in str(exc).strip().splitlines() if ln.strip())
        return (text or type(exc).__name__) + (
            "" if isinstance(exc, CosimError) else f" ({type(exc).__name__})")
    finally:
        if blk is not None:
            try:
                blk.free()
            except Exception:  # noqa: BLE001 - best effort
                pass


# --------------------------------------------------------------------- simulate
def cmd_simulate(args: argparse.Namespace) -> int:
    import time

    from .importer import FMU, default_name
    _renamed(args, "interface", "--interface-type", "--interface")
    fmu = FMU(args.fmu, validate=args.validate)
    info = fmu.info
    itf = fmu.interface(args.interface or "auto")
    values = settings(info, args.set + _start_values(args.start_values))
    _output_interval(args, itf)
    exp = info.default_experiment
    t_end = args.t_end if args.t_end is not None else float(exp.get("stopTime") or 1.0)
    t0 = args.t_start if args.t_start is not None else float(exp.get("startTime") or 0.0)
    if t_end <= t0:
        raise CosimError(f"end time {t_end:g} s is not after the start time {t0:g} s; give "
                         "--t-end (and --t-start)")
    if itf == "CoSimulation" and args.t_end is None:
        h = info.capability("CoSimulation", "fixedInternalStepSize", None)
        if isinstance(h, (int, float)) and h > 0 and (t_end - t0) / h > 1e8:
            raise CosimError(f"FMU '{info.model_name}' steps internally at {h:g} s: "
                             f"{(t_end - t0) / h:.3g} steps to its stopTime {t_end:g} s; "
                             "give a shorter --t-end")
    model = default_name(fmu)
    out, path, plot, note = _results_path(args, model)
    if args.timeout is not None and not args.out_of_process:
        raise CosimError("--timeout is the watchdog of an out-of-process run (a limit per FMU "
                         "call): add --out-of-process, or leave --timeout out")
    opts = dict(start=values, out_of_process=args.out_of_process,
                timeout_s=10.0 if args.timeout is None else args.timeout)
    tol = _tolerance(args, exp)
    if tol is not None:
        opts["tolerance"] = tol
    if args.rtol is None:
        args.rtol = 1e-6
    name = "fmu"
    wall = time.perf_counter()
    if itf in ("ModelExchange", "ScheduledExecution"):  # a block in a diagram
        res, how = _run_me(args, fmu, itf, model, name, opts, path, t_end, t0)
    else:
        res, how = _run_cs(args, fmu, name, opts, path, t_end, t0)
    wall = time.perf_counter() - wall
    print(f"FMU '{info.model_name}' ({os.path.basename(args.fmu)}): {how}, "
          f"t = {t0:g}..{t_end:g} s, wall {wall:.3f} s")
    if not args.quiet:
        units = {v.port: fmi_unit(v) for v in info.outputs}
        for k, v in list(res.signals.items())[:12]:
            if k.startswith(f"{name}.") and v.ndim == 1 and v.size:
                port = k[len(name) + 1:]
                if v.dtype.kind == "O":  # String/Binary: the last value as it is
                    print(f"  {port:<28} final {v[-1]!r:.60}")
                    continue
                unit = f" {units.get(port) or res.units.get(k) or ''}".rstrip()
                print(f"  {port:<28} final {_num(v[-1], 6)}{unit}   "
                      f"min {_num(v.min(), 4)}   max {_num(v.max(), 4)}")
    print(f"results: {path}{note}")
    if args.plot:
        from cosim.plotting import plot_results
        signals = [k for k, v in res.signals.items() if k.startswith(f"{name}.")
                   and v.ndim == 1 and v.dtype.kind != "O"]  # not String/Binary
        if signals:
            print("plot:", plot_results(res, plot, signals,
                                        title=f"{info.model_name} ({itf})"))
        else:
            print("plot: none (the FMU has no scalar numeric outputs)")
    return 0


def _renamed(args: argparse.Namespace, dest: str, new: str, old: str) -> None:
    """Take the value of the deprecated option ``old`` (stored in ``<dest>_deprecated``)
    for ``new``, with a note on stderr; both given and different is an error."""
    value = getattr(args, f"{dest}_deprecated", None)
    if value is None:
        return
    given = getattr(args, dest)
    if given is not None and given != value:
        raise CosimError(f"{old} {value} and {new} {given} disagree; give {new} only ({old} is "
                         "its deprecated spelling)")
    setattr(args, dest, value)
    why = (" (in cosim, --interface names a CAN or I/O interface, as in cosim hil and cosim "
           "replay)" if old == "--interface" else " (one name for the FMI interface type)")
    print(f"note: {old} is deprecated here, use {new}{why}", file=sys.stderr)


def _tolerance(args: argparse.Namespace, exp: dict) -> float | None:
    """The tolerance the FMU gets (as FMPy's ``simulate_fmu``: the given relative tolerance,
    else the default experiment's; none: ``toleranceDefined`` false)."""
    for opt, tol in (("--tolerance", args.tolerance), ("--rtol", args.rtol)):
        if tol is not None:
            if not 0 < tol < 1:
                raise CosimError(f"{opt} {tol:g}: a relative tolerance is between 0 and 1")
            return float(tol)
    return exp.get("tolerance")


def _start_values(words: list[str]) -> list[str]:
    """FMPy's ``--start-values NAME VALUE ...`` as ``--set NAME=VALUE`` pairs."""
    if len(words) % 2:
        raise CosimError(f"--start-values takes NAME VALUE pairs (as FMPy: --start-values k 50 "
                         f"m 2), got an odd number of words: {' '.join(words)}")
    return [f"{n}={v}" for n, v in zip(words[::2], words[1::2])]


def _output_interval(args: argparse.Namespace, itf: str) -> None:
    """FMPy's ``--output-interval``: the output grid (``--dt``) of Model Exchange and
    Scheduled Execution, the communication step (``--step``) of Co-Simulation."""
    h = args.output_interval
    if h is None:
        return
    if not h > 0:
        raise CosimError(f"--output-interval must be positive, got {h:g}")
    own = "step" if itf == "CoSimulation" else "dt"
    if getattr(args, own) is not None and getattr(args, own) != h:
        raise CosimError(f"--output-interval {h:g} and --{own} {getattr(args, own):g} "
                         f"disagree: for {itf} they are the same setting; give one")
    setattr(args, own, h)


def _results_path(args: argparse.Namespace, model: str) -> tuple[str, str, str, str]:
    """``(folder, results CSV, plot PNG, note)`` of a run: ``--output-file`` as given (the
    file was named: it may be replaced), else ``results.csv`` in the claimed ``--out``
    folder (:mod:`cosim.results_folder`)."""
    if args.output_file:
        if args.out or args.force:
            raise CosimError(f"give {'--out' if args.out else '--force'} (of a results "
                             "folder) or --output-file (a CSV file, replaced if it exists), "
                             "not both")
        path = args.output_file
        if not path.lower().endswith(".csv"):
            raise CosimError(f"--output-file {path!r}: the results are CSV; name a .csv file")
        out = os.path.dirname(path) or "."
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as exc:
            raise CosimError(f"--output-file {path!r}: cannot create its folder: "
                             f"{exc.strerror}") from None
        replaced = " (replaced the file)" if os.path.exists(path) else ""
        return out, path, os.path.splitext(path)[0] + ".png", replaced
    from cosim.csv_results import sidecar_path
    from cosim.results_folder import claim
    out = args.out or os.path.join("out", model)
    taken = claim(out, "cosim fmu simulate", args.fmu,
                  ["results.csv", sidecar_path("results.csv").name, "plot.png"],
                  force=args.force, argv=getattr(args, "argv", None))
    return out, os.path.join(out, "results.csv"), os.path.join(out, "plot.png"), taken.note()


def _num(x: Any, digits: int) -> str:
    """A value for the summary: integers exactly, floats to ``digits`` digits."""
    import numpy as np
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x)).lower()
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{float(x): .{digits}g}"


def _run_me(args: Any, fmu: Any, itf: str, model: str, name: str, opts: dict, path: str,
            t_end: float, t0: float) -> tuple:
    from cosim import DiagramBuilder, Simulator
    from cosim.writers import CsvWriter
    info = fmu.info
    b = DiagramBuilder(model)
    # Scheduled Execution: a block too (fmus.scheduled.FMUScheduledBlock)
    make = fmu.block if itf == "ModelExchange" else fmu.scheduled
    blk = b.add(make(name, **opts))
    _add_sources(b, _sources(info, args.input), blk)
    dt = args.dt or info.default_experiment.get("stepSize") or (t_end - t0) / 500
    record = [f"{name}.{p}" for p in blk.outputs] or "all"  # SE: output clock counts too
    diagram = b.build()
    ctx = diagram.create_context()
    ctx.set_time(t0)  # the FMU is initialized at the context's time
    res = Simulator(diagram, ctx, solver=args.solver, dt=dt, rtol=args.rtol, atol=args.atol,
                    record=record, observers=[CsvWriter(path, record,
                                                        names=_columns(name, record))],
                    progress=not args.quiet).run(t_end)
    what = "Model Exchange" if itf == "ModelExchange" else "Scheduled Execution"
    return res, f"{what} on {args.solver}, dt {dt:g} s"


def _columns(name: str, record: Any) -> dict[str, str]:
    """The results CSV's columns named by the FMU's variables (``x``, as FMPy writes them),
    not by the block that holds the FMU (``fmu.x``); kept as they are if a variable is
    named ``time`` (the time column's name)."""
    if not isinstance(record, list):
        return {}
    names = {r: r[len(name) + 1:] for r in record if r.startswith(f"{name}.")}
    return {} if "time" in names.values() else names


def _run_cs(args: Any, fmu: Any, name: str, opts: dict, path: str, t_end: float,
            t0: float) -> tuple:
    from cosim import DiagramBuilder, MasterScheduler
    from cosim.subsystem import DiagramSubsystem
    from cosim.writers import CsvWriter
    info = fmu.info
    step = args.step or info.default_experiment.get("stepSize") or (t_end - t0) / 500
    sub = fmu.subsystem(name, **opts)
    subs, conns = [sub], []
    sources = _sources(info, args.input)
    if sources:
        b = DiagramBuilder("inputs")
        for v, src in sources:
            b.add(src)
            b.export_output(src.y, v.port)
            conns.append((f"inputs.{v.port}", f"{name}.{v.port}"))
        subs.insert(0, DiagramSubsystem(b.build(), solver="euler", dt=step))
    # every output (String as text, Binary as hex digits: cosim.csv_results)
    record = [f"{name}.{o}" for o in sub.output_names]
    res = MasterScheduler(subs, conns, step, extrapolation=0,
                          writers=[CsvWriter(path, record, names=_columns(name, record))],
                          progress=not args.quiet).run(t_end, t0)
    return res, f"Co-Simulation, communication step {step:g} s"


# ----------------------------------------------------------------------- export
def cmd_export(args: argparse.Namespace) -> int:
    _renamed(args, "kind", "--interface-type", "--kind")
    if args.via == "python":
        wrong = [o for o, given in (("--interface-type " + str(args.kind),
                                     args.kind not in (None, "cs")),
                                    ("--integrator", args.integrator is not None)) if given]
        if wrong:
            raise CosimError(f"{' and '.join(wrong)}: not for --via python (its FMU is "
                             "Co-Simulation, integrated by the internal --solver); leave "
                             "them out or export --via c")
        from .pyexport import export_python_fmu
        path = export_python_fmu(args.model, args.out, solver=args.solver,
                                 solver_dt=args.step, model_name=args.model_name,
                                 fmi_version=int(args.fmi), function=args.function)
    else:
        if args.solver is not None:
            raise CosimError("--solver is the internal solver of --via python; the generated "
                             "C integrates with --integrator")
        from .export import export_fmu
        from .pybundle import build_here, find_model
        diagram, defaults = build_here(find_model(args.model, args.function))
        out = args.out
        if not out.endswith(".fmu"):
            os.makedirs(out, exist_ok=True)
            out = os.path.join(out, f"{args.model_name or diagram.name}.fmu")
        # the model file's SIMULATION step is the FMU's internal step unless --step says
        step = args.step if args.step is not None else defaults.get("dt")
        # and its t_end the FMU's DefaultExperiment stopTime (what FMPy and cosim fmu
        # simulate run by default), so the FMU runs what `cosim run` of the file runs
        stop = defaults.get("t_end")
        path = export_fmu(diagram, out, f"{args.fmi}.0", args.kind or "cs",
                          model_name=args.model_name, integrator=args.integrator or "rk4",
                          step=step, stop_time=float(stop) if stop is not None else None)
    print(f"wrote {path}")
    return 0
