"""``cosim fmu info|validate|simulate|export``: FMUs from the command line, as FMPy users expect.

``cosim fmu info FMU [--all]``
    Metadata, the default experiment, and the inputs, outputs and parameters with the
    units the FMU writes (``1/m``, ``m/s2``), start values and ranges; ``--all`` adds the
    interfaces' capabilities, every other variable (locals, calculated parameters,
    clocks...), cosim's port names and the model description's problems.
``cosim fmu validate FMU [--strict] [--instantiate]``
    The model description against the FMI schema and rules, the binary for each
    interface (read, not loaded: architecture and exported FMI functions) and
    (``--instantiate``) one instantiation and initialization of each interface.  Every
    failure is a reported problem, never a traceback.  Exit status 0: valid; 1:
    problems (errors, or warnings with ``--strict``); 2: not a file or bad usage.
``cosim fmu simulate FMU [--interface me|cs|se] [--t-end T] [--set NAME=VALUE] ...``
    Run the FMU alone through cosim's importer (not fmpy's ``simulate_fmu``): Model
    Exchange on a cosim solver (default ``bdf``, a stiff variable-order method like FMPy's
    CVode, so stiff models such as Robertson's do not crawl; results on the ``--dt`` grid),
    Co-Simulation on the master with communication step ``--step``.  ``--set`` sets any
    variable FMI lets an importer set before initialization (parameters, inputs,
    ``initial="exact"``/``"approx"`` variables), typed by its declared type (a String
    stays text, ``"1"`` for a Float64 is 1.0, Int64/UInt64 exact, Binary in hex, an
    Enumeration by number or item name).  Inputs not fed by ``--input`` keep their start
    (or ``--set``) value.  ``--input`` plays a CSV file as FMPy does: the ``time`` column
    (else the first column) and one column per input, by FMU name or port name;
    continuous Real inputs are interpolated linearly, the others held (zero-order); a
    time given twice is a step (the value changes at that instant).  Results stream to
    ``--out`` (default ``out/<model>``) as CSV while the run goes; ``--plot`` adds a PNG
    of the outputs beside them.
``cosim fmu export MODEL OUT.fmu [--via c|python] [--fmi 2|3] ...``
    ``MODEL`` is a model file (as for ``cosim run``) or ``package.module:function``.
    ``--via c`` (default): generated C (:func:`fmus.export.export_fmu`);
    ``--via python``: pythonfmu/pythonfmu3 (:func:`fmus.pyexport.export_python_fmu`),
    which needs an importable ``package.module:function``.

Every failure ends in one ``cosim fmu <command>: error: ...`` line on stderr (details, if
any, indented below it; ``--debug`` adds the traceback) and exit status 2 (1 for a
failed ``validate``).

Limitations: input files feed inputs only (FMPy also plays tunable parameters from
them); String and Binary inputs take ``--set`` values, not file columns.  A Scheduled
Execution FMU runs as a block (``--interface se`` or auto); its triggered input clocks are
fed by input-file columns named after them (a tick where the value increases).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from cosim.errors import CosimError

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
    s.add_argument("--interface", default="auto", help="auto, me, cs or se")
    s.add_argument("--t-start", type=float, help="start time [s] (default: the FMU's "
                                                  "startTime, else 0)")
    s.add_argument("--t-end", type=float, help="end time [s] (default: the FMU's stopTime, "
                                                "else 1)")
    s.add_argument("--step", type=float, help="co-simulation communication step [s]")
    s.add_argument("--solver", default="bdf",
                   help="Model Exchange solver (default bdf: stiff-safe, as FMPy's CVode; "
                        "rk45, dop853, radau, lsoda, or a fixed-step rk4/euler with --dt)")
    s.add_argument("--dt", type=float, help="Model Exchange output grid or fixed step [s]")
    s.add_argument("--rtol", type=float, default=1e-6,
                   help="relative tolerance of a variable-step solver (Model Exchange)")
    s.add_argument("--atol", type=float, default=1e-9,
                   help="absolute tolerance of a variable-step solver (Model Exchange)")
    s.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="start value of a parameter, an input or an initial='exact'/'approx' "
                        "variable, typed by the variable (repeatable)")
    s.add_argument("--input", help="CSV file: a 'time' column (else the first column) and "
                                   "input columns; a time given twice is a step")
    s.add_argument("--out", help="output folder (default out/<model>)")
    s.add_argument("--force", action="store_true",
                   help="write into --out even when it holds another run's results (they "
                        "are removed)")
    s.add_argument("--plot", action="store_true", help="also write plot.png of the outputs")
    s.add_argument("--out-of-process", action="store_true",
                   help="run the FMU in a child process with a watchdog")
    s.add_argument("--timeout", type=float, default=10.0,
                   help="watchdog timeout per FMU call [s] (with --out-of-process)")
    s.add_argument("--quiet", "-q", action="store_true", help="short summary, no progress bar")
    e = fsub.add_parser("export", help="export a model as an FMU")
    e.add_argument("model", help="model file or package.module:function")
    e.add_argument("out", help="the .fmu file (or a folder) to write")
    e.add_argument("--function", help="diagram function in the model file")
    e.add_argument("--via", default="c", choices=("c", "python"),
                   help="c: generated C, compiled (default); python: a pythonfmu FMU that "
                        "runs the diagram in Python (needs cosim[fmi-export])")
    e.add_argument("--fmi", default="2", choices=("2", "3"), help="FMI version (default 2)")
    e.add_argument("--kind", default="cs", choices=("cs", "me", "both"),
                   help="generated C: interfaces to export")
    e.add_argument("--integrator", default="rk4",
                   help="generated C co-simulation integrator (rk4, heun, midpoint, euler, zoh)")
    e.add_argument("--step", type=float,
                   help="internal fixed step [s] (default: the model file's SIMULATION dt)")
    e.add_argument("--solver", default="rk4", help="--via python: internal solver")
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

        def show(message: Any, category: Any, *args: Any, **kw: Any) -> None:
            if issubclass(category, CosimWarning):
                print(f"note: {message}", file=sys.stderr)
            else:
                old(message, category, *args, **kw)
        warnings.showwarning = show
        return self

    def __exit__(self, *exc: Any) -> None:
        self._ctx.__exit__(*exc)


# ------------------------------------------------------------------------ info
def _unit(v: Any) -> str:
    """The unit as the FMU writes it (its own unit name), else cosim's mapping."""
    return v.fmi_unit or v.unit or ""


def _range(v: Any) -> str:
    from .description_rules import fmt
    if v.min is None and v.max is None:
        return ""
    lo = fmt(v.min) if v.min is not None else "-inf"
    hi = fmt(v.max) if v.max is not None else "inf"
    return f"[{lo}, {hi}]"


def _table(rows: list[tuple], indent: str = "    ") -> list[str]:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    return [(indent + "  ".join(str(c).ljust(w) for c, w in zip(r, widths))).rstrip()
            for r in rows]


def describe(info: Any, everything: bool = False) -> str:
    """The text of ``cosim fmu info`` (``everything``: ``--all``)."""
    from .description_rules import fmt
    lines = [f"FMU {info.path.name}: model '{info.model_name}', FMI {info.fmi_version}, "
             + " + ".join(info.interfaces)]
    for label, val in (("description", info.description), ("author", info.author),
                       ("version", info.version), ("generated by", info.generation_tool),
                       ("generated on", info.generation_date),
                       ("copyright", info.copyright), ("license", info.license)):
        if val and (everything or label in ("description", "generated by")):
            lines.append(f"  {label + ':':<14}{val}")
    de = info.default_experiment
    if de:
        parts = []
        if "startTime" in de or "stopTime" in de:
            parts.append(f"t = {de.get('startTime', 0.0):g} .. {de.get('stopTime', 1.0):g} s")
        if "stepSize" in de:
            parts.append(f"step {de['stepSize']:g} s")
        if "tolerance" in de:
            parts.append(f"tolerance {de['tolerance']:g}")
        lines.append(f"  {'experiment:':<14}" + ", ".join(parts))
    lines.append(f"  {'structure:':<14}{len(info.states)} continuous state"
                 f"{'s' if len(info.states) != 1 else ''}, {info.n_event_indicators} event "
                 f"indicator{'s' if info.n_event_indicators != 1 else ''}"
                 + (f", {len(info.clocks)} clocks" if info.clocks else ""))
    if everything:
        from .description import _CAP_ALIASES
        for itf, caps in info.interfaces.items():
            caps = {k: val for k, val in caps.items()  # each capability once, as written
                    if not any(a in caps and b == k for a, b in _CAP_ALIASES.items())}
            on = sorted(k for k, val in caps.items() if val is True)
            extra = [f"{k}={val}" for k, val in caps.items()
                     if val not in (True, False, None) and k != "modelIdentifier"]
            lines.append(f"  {itf} ({caps.get('modelIdentifier')}): "
                         + (", ".join(on + extra) or "no optional capabilities"))

    def row(v: Any) -> tuple:
        name = v.name + (f" ({v.port})" if everything and v.port != v.name else "")
        typ = v.type + (f"[{','.join(map(str, v.shape))}]" if v.shape else "")
        variability = v.variability + (", structural" if v.structural else "")
        if v.clock is not None:  # a clock: how it ticks
            c = v.clock
            variability = c.interval_variability + (
                f" {c.interval:g} s" if c.interval is not None else "") + (
                f" +{c.shift:g} s" if c.shift else "")
        cells = (name, typ, _unit(v), fmt(v.start), _range(v), variability)
        if clocked:
            cells += (" ".join(v.clocks),)
        return cells + (v.description[:60],)

    clocked = everything and any(v.clocks for v in info.variables)
    head = ("name", "type", "unit", "start", "range", "variability") + (
        ("clocked by",) if clocked else ()) + ("description",)
    sections = [("inputs", info.inputs), ("outputs", info.outputs),
                ("parameters", info.parameters)]
    if everything:
        shown = {id(v) for _, vs in sections for v in vs}
        rest: dict[str, list] = {}
        for v in info.variables:
            if id(v) not in shown:
                rest.setdefault(_group(v), []).append(v)
        sections += sorted(rest.items())
    for title, vs in sections:
        if not vs:
            continue
        lines.append(f"{title} ({len(vs)}):")
        lines += _table([head] + [row(v) for v in vs])
    settable = [v.name for v in info.variables if v.settable_before_init
                and v.causality not in ("input", "parameter", "structuralParameter")]
    if settable:
        lines.append("also settable with --set (initial exact/approx): " + ", ".join(settable))
    if everything:
        for p in info.problems:
            lines.append(f"{p.severity}: {p}")
        for n in info.notes:
            lines.append(f"note: {n}")
    elif info.problems:
        lines.append(f"({len(info.problems)} model description notes: --all shows them)")
    return "\n".join(lines)


def _group(v: Any) -> str:
    if v.kind == "clock":
        return "clocks"
    return {"local": "locals", "calculatedParameter": "calculated parameters",
            "independent": "independent variable"}.get(v.causality, v.causality)


def cmd_info(args: argparse.Namespace) -> int:
    from .importer import fmu_info
    info = fmu_info(args.fmu)
    print(describe(info, args.all))
    return 0


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
        info = read_description(archive.root, name, "warn")
    except (ModelDescriptionError, FMUError) as exc:
        print(exc)
        print(f"{name}: INVALID")
        return 1
    counts = {"error": 0, "warning": 0, "info": 0}
    for p in info.problems:
        counts[p.severity] = counts.get(p.severity, 0) + 1
        print(f"  {p.severity}: {p}")
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
            fmu = FMU(path)
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
        text = str(exc).strip().splitlines()
        return (text[0] if text else type(exc).__name__) + (
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
    fmu = FMU(args.fmu)
    info = fmu.info
    itf = fmu.interface(args.interface)
    values = settings(info, args.set)
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
    out = args.out or os.path.join("out", model)
    from cosim.csv_results import sidecar_path
    from cosim.results_folder import claim
    taken = claim(out, "cosim fmu simulate", args.fmu,
                  ["results.csv", sidecar_path("results.csv").name, "plot.png"],
                  force=args.force, argv=getattr(args, "argv", None))
    path = os.path.join(out, "results.csv")
    opts = dict(start=values, out_of_process=args.out_of_process, timeout_s=args.timeout)
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
        units = {v.port: _unit(v) for v in info.outputs}
        for k, v in list(res.signals.items())[:12]:
            if k.startswith(f"{name}.") and v.ndim == 1 and v.size:
                port = k[len(name) + 1:]
                unit = f" {units.get(port) or res.units.get(k) or ''}".rstrip()
                print(f"  {port:<28} final {_num(v[-1], 6)}{unit}   "
                      f"min {_num(v.min(), 4)}   max {_num(v.max(), 4)}")
    print(f"results: {path}{taken.note()}")
    if args.plot:
        from cosim.plotting import plot_results
        signals = [k for k, v in res.signals.items() if k.startswith(f"{name}.")
                   and v.ndim == 1]
        if signals:
            print("plot:", plot_results(res, os.path.join(out, "plot.png"), signals,
                                        title=f"{info.model_name} ({itf})"))
        else:
            print("plot: none (the FMU has no scalar numeric outputs)")
    return 0


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
                    record=record, observers=[CsvWriter(path, record)],
                    progress=not args.quiet).run(t_end)
    what = "Model Exchange" if itf == "ModelExchange" else "Scheduled Execution"
    return res, f"{what} on {args.solver}, dt {dt:g} s"


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
    record = [f"{name}.{o}" for o in sub.output_names]
    res = MasterScheduler(subs, conns, step, extrapolation=0, writers=[CsvWriter(path, record)],
                          progress=not args.quiet).run(t_end, t0)
    return res, f"Co-Simulation, communication step {step:g} s"


# ----------------------------------------------------------------------- export
def cmd_export(args: argparse.Namespace) -> int:
    model = args.model
    if args.via == "python":
        from .pyexport import export_python_fmu
        if ":" not in model or model.endswith(".py"):
            raise CosimError(f"--via python needs an importable 'package.module:function' "
                             f"(the FMU imports it at run time), not {model!r}")
        kw = {"solver": args.solver, "solver_dt": args.step, "model_name": args.model_name}
        if args.fmi == "3":
            kw["fmi_version"] = 3
        path = export_python_fmu(model, args.out, **kw)
    else:
        from .export import export_fmu
        defaults: dict = {}
        if ":" in model and not os.path.isfile(model):
            from .pyslave import load_factory
            diagram = load_factory(model)
        else:
            from cosim.cli import load_model
            diagram, defaults = load_model(model, args.function)
        out = args.out
        if not out.endswith(".fmu"):
            os.makedirs(out, exist_ok=True)
            out = os.path.join(out, f"{args.model_name or diagram.name}.fmu")
        # the model file's SIMULATION step is the FMU's internal step unless --step says
        step = args.step if args.step is not None else defaults.get("dt")
        path = export_fmu(diagram, out, f"{args.fmi}.0", args.kind,
                          model_name=args.model_name, integrator=args.integrator,
                          step=step)
    print(f"wrote {path}")
    return 0
