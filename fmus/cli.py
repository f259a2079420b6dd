"""``cosim fmu info|validate|simulate|export``: FMUs from the command line.

``cosim fmu info FMU``
    Metadata, interfaces with their capabilities, and the ports table.
``cosim fmu validate FMU [--strict]``
    The model description against the FMI schema and rules, the binary for this
    platform for each interface, and (``--instantiate``) one instantiation.
    Exit status 0: valid; 1: problems (errors, or warnings with ``--strict``).
``cosim fmu simulate FMU [--interface me|cs] [--t-end T] ...``
    Run the FMU alone through cosim's importer (not fmpy's ``simulate_fmu``):
    Model Exchange on a cosim solver (default ``rk45``, results on the ``--dt``
    grid), Co-Simulation on the master with communication step ``--step``.
    Inputs are held at their start values, set with ``--set`` or played from a
    CSV file (``--input``, a ``time`` column and one column per input, by FMU
    name or port name, linearly interpolated).  Parameters with ``--set
    name=value``.  Results stream to ``--out`` as CSV while the run goes.
``cosim fmu export MODEL OUT.fmu [--via c|python] [--fmi 2|3] ...``
    ``MODEL`` is a model file (as for ``cosim run``) or ``package.module:function``.
    ``--via c`` (default): generated C (:func:`fmus.export.export_fmu`);
    ``--via python``: pythonfmu/pythonfmu3 (:func:`fmus.pyexport.export_python_fmu`),
    which needs an importable ``package.module:function``.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from cosim.errors import CosimError


def add_parser(sub: Any) -> None:
    """Add the ``fmu`` command and its subcommands to the ``cosim`` parser."""
    f = sub.add_parser("fmu", help="inspect, validate, simulate and export FMUs")
    fsub = f.add_subparsers(dest="fmu_command", required=True)
    i = fsub.add_parser("info", help="metadata, interfaces and ports of an FMU")
    i.add_argument("fmu")
    v = fsub.add_parser("validate", help="check an FMU's model description and binaries")
    v.add_argument("fmu")
    v.add_argument("--strict", action="store_true", help="warnings count as failures")
    v.add_argument("--instantiate", action="store_true",
                   help="also load the binary and instantiate each interface once")
    s = fsub.add_parser("simulate", help="run an FMU alone through cosim's importer")
    s.add_argument("fmu")
    s.add_argument("--interface", default="auto", help="auto, me or cs")
    s.add_argument("--t-end", type=float, help="end time [s] (default: the FMU's stopTime, "
                                                "else 1)")
    s.add_argument("--step", type=float, help="co-simulation communication step [s]")
    s.add_argument("--solver", default="rk45", help="Model Exchange solver (default rk45)")
    s.add_argument("--dt", type=float, help="Model Exchange output grid or fixed step [s]")
    s.add_argument("--rtol", type=float, default=1e-6)
    s.add_argument("--atol", type=float, default=1e-9)
    s.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="parameter or input value (repeatable)")
    s.add_argument("--input", help="CSV file with a 'time' column and input columns")
    s.add_argument("--out", help="output folder (default out/<model>)")
    s.add_argument("--out-of-process", action="store_true",
                   help="run the FMU in a child process with a watchdog")
    s.add_argument("--timeout", type=float, default=10.0,
                   help="watchdog timeout per FMU call [s] (with --out-of-process)")
    s.add_argument("--quiet", "-q", action="store_true")
    e = fsub.add_parser("export", help="export a model as an FMU")
    e.add_argument("model", help="model file or package.module:function")
    e.add_argument("out", help="the .fmu file (or a folder) to write")
    e.add_argument("--function", help="diagram function in the model file")
    e.add_argument("--via", default="c", choices=("c", "python"))
    e.add_argument("--fmi", default="2", choices=("2", "3"))
    e.add_argument("--kind", default="cs", choices=("cs", "me", "both"),
                   help="generated C: interfaces to export")
    e.add_argument("--integrator", default="rk4",
                   help="generated C co-simulation integrator (rk4, heun, midpoint, euler, zoh)")
    e.add_argument("--step", type=float, help="internal fixed step [s]")
    e.add_argument("--solver", default="rk4", help="--via python: internal solver")
    e.add_argument("--model-name")
    for p in (f, i, v, s, e):
        p.add_argument("--debug", action="store_true", help="show tracebacks")


def run(args: argparse.Namespace) -> int:
    return {"info": cmd_info, "validate": cmd_validate, "simulate": cmd_simulate,
            "export": cmd_export}[args.fmu_command](args)


def cmd_info(args: argparse.Namespace) -> int:
    from .importer import fmu_info
    print(fmu_info(args.fmu))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    import warnings

    from .archive import extract_fmu, platform_binary
    from .description import read_description
    from .errors import FMUError, ModelDescriptionError
    name = os.path.basename(args.fmu)
    archive = extract_fmu(args.fmu)
    try:
        info = read_description(archive.root, name, "warn")
    except ModelDescriptionError as exc:
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
        if itf == "ScheduledExecution":
            print(f"  {itf}: not supported by cosim's importer")
            continue
        try:
            lib = platform_binary(archive.root, info.fmi_major, caps["modelIdentifier"], name)
            print(f"  {itf}: binary {lib.relative_to(archive.root)}")
        except FMUError as exc:
            counts["error"] += 1
            print(f"  error: {itf}: {exc}")
            continue
        if args.instantiate:
            from .importer import FMU
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fmu = FMU(args.fmu)
                _instantiate(fmu, itf, info)
                print(f"  {itf}: instantiated and initialized")
            except (FMUError, CosimError) as exc:
                counts["error"] += 1
                print(f"  error: {itf}: {exc}")
    bad = counts["error"] + (counts["warning"] if args.strict else 0)
    print(f"{name}: FMI {info.fmi_version}, {'+'.join(info.interfaces)}; "
          f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} notes: "
          + ("INVALID" if bad else "valid"))
    return 1 if bad else 0


def _instantiate(fmu: Any, itf: str, info: Any) -> None:
    """Instantiate and initialize ``itf`` once (a Co-Simulation subsystem, or a Model
    Exchange block in a one-step run with its inputs at their start values)."""
    if itf == "CoSimulation":
        s = fmu.subsystem("check")
        try:
            s.initialize(0)
        finally:
            s.free()
        return
    from cosim import DiagramBuilder, Simulator
    b = DiagramBuilder("check")
    blk = b.add(fmu.block("check"))
    for v, src in _input_sources(info, {}, None):
        b.add(src)
        b.connect(src.y, blk.input(v.port))
    try:
        Simulator(b.build(), solver="euler", dt=1e-9).run(0.0)
    finally:
        blk.free()


def _value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _settings(info: Any, pairs: list[str]) -> tuple[dict, dict]:
    """``--set`` pairs split into parameters and held inputs (by FMU variable)."""
    params, inputs = {}, {}
    for pair in pairs:
        name, eq, text = pair.partition("=")
        if not eq:
            raise CosimError(f"--set {pair!r}: expected NAME=VALUE")
        var = info.variable(name.strip())
        if var.causality == "input":
            inputs[var.name] = _value(text)
        elif var.causality in ("parameter", "structuralParameter"):
            params[var.name] = _value(text)
        else:
            raise CosimError(f"--set {name}: variable '{var.name}' is {var.causality}, not a "
                             "parameter or input; only those can be set")
    return params, inputs


def _input_sources(info: Any, held: dict, csv_path: str | None) -> list:
    """One source block per FMU input: a CSV column, a --set value or the start value."""
    from blocks.sources import Constant
    from blocks.tables import FromFile
    header: list[str] = []
    if csv_path:
        from pathlib import Path

        from blocks.tables import _read_csv
        header, _ = _read_csv("--input", "input", Path(csv_path), ",")
    out = []
    for v in info.inputs:
        col = next((c for c in (v.name, v.port) if c in header), None)
        name = f"in_{v.port}"
        if col is not None and col not in held:
            out.append((v, FromFile(name, csv_path, columns=col, unit=v.unit or None)))
        else:
            value = held.get(v.name, v.start if v.start is not None else 0.0)
            out.append((v, Constant(name, value, unit=v.unit or None)))
    return out


def cmd_simulate(args: argparse.Namespace) -> int:
    import time
    import warnings

    from .errors import FMUWarning
    from .importer import FMU
    with warnings.catch_warnings():
        warnings.simplefilter("default", FMUWarning)
        fmu = FMU(args.fmu)
    info = fmu.info
    itf = fmu.interface(args.interface)
    params, held = _settings(info, args.set)
    exp = info.default_experiment
    t_end = args.t_end if args.t_end is not None else float(exp.get("stopTime") or 1.0)
    t0 = float(exp.get("startTime") or 0.0)
    out = args.out or os.path.join("out", info.model_name)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "results.csv")
    opts = {"parameters": params, "out_of_process": args.out_of_process,
            "timeout_s": args.timeout}
    sources = _input_sources(info, held, args.input)
    name = "fmu"
    wall = time.perf_counter()
    if itf == "ModelExchange":
        from cosim import DiagramBuilder, Simulator
        from cosim.writers import CsvWriter
        b = DiagramBuilder(info.model_name)
        blk = b.add(fmu.block(name, **opts))
        for v, src in sources:
            b.add(src)
            b.connect(src.y, blk.input(v.port))
        dt = args.dt or exp.get("stepSize") or (t_end - t0) / 500
        record = [f"{name}.{v.port}" for v in info.outputs] or "all"
        writer = CsvWriter(path, record)
        if t0 != 0.0:
            raise CosimError(f"FMU '{info.model_name}': startTime {t0:g} s; cosim's Simulator "
                             "starts Model Exchange runs at t = 0 (use --interface cs, or "
                             "shift the FMU's time)")
        res = Simulator(b.build(), solver=args.solver, dt=dt, rtol=args.rtol, atol=args.atol,
                        record=record, observers=[writer], progress=not args.quiet).run(t_end)
        how = f"Model Exchange on {args.solver}, dt {dt:g} s"
    else:
        from cosim import DiagramBuilder, MasterScheduler
        from cosim.subsystem import DiagramSubsystem
        from cosim.writers import CsvWriter
        step = args.step or exp.get("stepSize") or (t_end - t0) / 500
        subs = [fmu.subsystem(name, **opts)]
        conns = []
        if sources:
            b = DiagramBuilder("inputs")
            for v, src in sources:
                b.add(src)
                b.export_output(src.y, v.port)
                conns.append((f"inputs.{v.port}", f"{name}.{v.port}"))
            subs.insert(0, DiagramSubsystem(b.build(), solver="euler", dt=step))
        record = [f"{name}.{o}" for o in subs[-1].output_names]
        res = MasterScheduler(subs, conns, step, extrapolation=0,
                              writers=[CsvWriter(path, record)]).run(t_end, t0)
        how = f"Co-Simulation, communication step {step:g} s"
    wall = time.perf_counter() - wall
    print(f"FMU '{info.model_name}' ({os.path.basename(args.fmu)}): {how}, "
          f"t = {t0:g}..{t_end:g} s, wall {wall:.3f} s")
    if not args.quiet:
        for k, v in list(res.signals.items())[:12]:
            if k.startswith(f"{name}.") and v.ndim == 1 and v.size:
                unit = f" {res.units[k]}" if res.units.get(k) else ""
                print(f"  {k[len(name) + 1:]:<28} final {v[-1]: .6g}{unit}   "
                      f"min {v.min(): .4g}   max {v.max(): .4g}")
    print(f"results: {path}")
    return 0


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
        if ":" in model and not os.path.isfile(model):
            from .pyslave import load_factory
            diagram = load_factory(model)
        else:
            from cosim.cli import load_model
            diagram, _ = load_model(model, args.function)
        out = args.out
        if not out.endswith(".fmu"):
            os.makedirs(out, exist_ok=True)
            out = os.path.join(out, f"{args.model_name or diagram.name}.fmu")
        path = export_fmu(diagram, out, f"{args.fmi}.0", args.kind,
                          model_name=args.model_name, integrator=args.integrator,
                          step=args.step)
    print(f"wrote {path}")
    return 0
