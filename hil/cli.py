"""``cosim hil run FILE.py``: a model file run in real time with its hardware.

Found by ``cosim`` through the entry-point group ``cosim.commands`` (``hil``);
``cosim replay LOG`` is :mod:`hil.replay_cli`.

``cosim hil run FILE.py``
=========================

The model file follows the convention of ``cosim run``, plus the hardware::

    HIL = {"period_s": 1e-3, "duration_s": 10.0, "overrun": "skip"}   # optional defaults
    SIMULATION = {"solver": "rk4", "dt": 1e-3, "record": "all"}      # optional, as cosim run

    def build(io):                 # io: hil.cli.Interfaces
        can = io.open("can", interface="virtual", channel="acc")
        ...                        # blocks that use the opened backends
        return builder.build()     # a Diagram, or Simulator(diagram, solver="rk4", dt=1e-3)

* ``build`` (or ``--function NAME``, else ``diagram``/``make_diagram``) takes the
  :class:`Interfaces` or no argument at all (a model without hardware): it gets them as
  its parameter named ``io``, else as its one parameter without a default; a function
  whose parameters all have defaults is called without arguments (its defaults stand).
* ``io.open(role, **defaults)`` creates a backend with
  :func:`hil.registry.create_backend` (kind ``defaults["backend"]``, else the role
  itself: ``io.open("can", ...)`` is a ``"can"`` backend), named after the role, opens
  it and returns it.  Every backend is closed at the end, also on errors and Ctrl-C.
* ``HIL`` keys: ``period_s``, ``duration_s``, ``overrun``, ``max_overruns``,
  ``max_catch_up``, ``degrade_after``, ``recover_after``, ``max_degrade``, ``spin_s``,
  ``priority``, ``cpus``, ``gc_mode``, ``timer_slack_ns``, ``realtime`` (the options of
  :class:`~hil.runner.RealTimeRunner`), ``budget`` (a dict of
  :class:`~hil.verdict.Budget` fields); the command line wins over the file.
* A returned Diagram is run by a ``Simulator`` with ``SIMULATION["solver"]`` (default
  rk4) and step ``SIMULATION["dt"]`` (default: the frame period), recording nothing in
  memory: results go to the disk as they come (long runs are fine).  A returned
  Simulator must be fresh (not yet run); its own recorder keeps what it records in memory.

What a run brings beside its model (all optional):

``io.open(role, ..., log="bus.asc")``
    logs every frame the CAN interface reads and writes (:class:`hil.can.MessageLog`, on a
    writer thread, in time order) to that file in the output folder (any python-can
    format by its suffix); its dropped messages count in the verdict.
``io.open(role, ..., end_of_session="send" | "stop")``
    ``"send"``: when the run ends, the end-of-session frame (:mod:`hil.can.session`) goes
    out on the CAN interface, so the peers end their runs instead of counting the silence
    as stale inputs; ``"stop"``: the run ends (a normal end, after the current frame) when
    a peer's end-of-session frame arrives (seen as the model reads the interface: a
    receiving bridge reads every frame each period; on an interface the model never reads
    it is never seen).
``io.realtime``
    False with ``--no-realtime``: a model whose peers keep the wall clock refuses it.
``io.spawn(argv, name=..., summary_option="--summary")``
    starts a peer process (:class:`hil.peer.Peer`: its own process group, SIGTERM when
    this process dies, ended with the run) and waits for its ``READY`` line.  After the
    run (and the end-of-session frame) it gets ``grace_s`` to end by itself, then SIGTERM.
    With ``summary_option`` the peer is given a JSON file to write at its end; it is kept
    as ``OUT/<name>_summary.json`` and its ``"verdict"`` joins the run's verdict (a peer
    without one fails the check ``<name>``).
``def finish(run)``
    called after the run with a :class:`RunEnd` (the results, the output folder, the
    verdict so far): the model's own acceptance (``run.check(...)``), notes, plots
    (``run.wrote(path)``) and entries for ``summary.json`` (``run.summary``).

I/O overrides (``--io``, repeatable) change what the file opens without editing it
(``--io`` was ``--interface``, which still works with a note: across the ``cosim``
commands ``--interface`` means python-can's interface, as in ``cosim replay`` and
python-can's own tools, and ``--interface-type`` an FMU's):

``--io ROLE=VALUE``
    replaces the option ``interface`` of the role's backend when its kind takes one
    (the python-can interface of a ``"can"`` backend: ``--io can=udp_multicast``),
    otherwise the backend kind itself (``--io daq=daq-sim``).
``--io ROLE.backend=KIND``
    replaces the backend kind explicitly.
``--io ROLE.OPTION=VALUE``
    sets any option (``--io can.channel=239.74.163.2``).  Values are Python
    literals when they parse as one (``1``, ``0.5``, ``True``, ``None``, ``"12"`` for the
    text 12; ``true``/``false``/``none`` too), else text.

An override naming a role the file never opens is an error listing the roles it opened.

Other options: ``--duration``, ``--period``, ``--overrun {raise,skip,catch_up,degrade}``,
``--max-overruns``, ``--priority N`` (SCHED_FIFO), ``--cpus 0,1``, ``--gc
{normal,disable,freeze}``, ``--spin``, ``--timer-slack``, ``--no-realtime`` (the same loop
on a :class:`~hil.runner.VirtualClock`: as fast as possible and deterministic, for CI),
``--budget NAME=VALUE`` (repeatable: the run's :class:`~hil.verdict.Budget`, e.g.
``--budget overruns=0 --budget lateness_p99_us=100``; ``NAME=none``: not checked),
``--no-auto-setup`` (no automatic real-time set-up: ``realtime="off"``), ``--out DIR``
(default ``out/<diagram>``: ``results.csv`` streamed while running, ``telemetry.csv``
one row per frame streamed by a writer thread, ``summary.json`` with the verdict, the
telemetry summary and every backend's options and counters), ``--format
csv|hdf5|csv,hdf5``, ``--set block.param=value`` (initial parameter values),
``--traceback``.

Every run ends with its verdict (:mod:`hil.verdict`), printed in one line and written to
``summary.json``: the runner's, joined by the peers' and the ``finish`` checks when there
are any.  Exit status: 0 the run passed its verdict, 1 a check failed or the run
failed, 2 bad input (the model file, an option, an interface; nothing is run and no
output is written when the options are wrong), 130/143 stopped by SIGINT/SIGTERM.

SIGINT (Ctrl-C) and SIGTERM end the run at the end of the current frame: results,
telemetry and summary are written, backends closed, exit status 130 or 143.  A second
signal interrupts at once (results are still flushed).  Errors print one line (what,
where, what to do; tracebacks with ``--traceback``).

Limitations
-----------
* ``hil run`` runs one simulator in one thread (:mod:`hil.runner`); the backends'
  reader threads are checked every frame (their errors stop the run with the original
  exception).  A frame blocked in I/O delays the stop by a signal until it returns
  (send a second signal to interrupt it).
* ``log=`` and ``end_of_session=`` are for CAN interfaces (:class:`hil.can.CanBackend`);
  a peer that misses the end-of-session frame is ended by SIGTERM after ``grace_s``, and
  its verdict then counts its inputs' silence.  A peer outlives a killed run only where
  Linux's parent-death signal is missing (:mod:`hil.peer`).
* Signal handling needs the main thread; run from another thread, SIGINT/SIGTERM keep
  their default behaviour.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time
import traceback
from typing import Any

from cosim.errors import CosimError
from cosim.results_folder import add_force_option

from .cli_values import jsonable as _jsonable
from .cli_values import literal as _literal
from .cli_values import parse_overrides as _parse_overrides
from .interfaces import Interfaces
from .lifeline import StopOnSignals
from .model_file import HIL_KEYS, ModelError, UsageError
from .model_file import load_model as _build
from .run_end import RunEnd
from .run_end import end_verdict as _end_verdict
from .run_end import status as _status

__all__ = ["Interfaces", "RunEnd", "add_parser", "run"]

POLICIES = ("raise", "skip", "catch_up", "degrade")


# ------------------------------------------------------------------ values
class _OldSpelling(argparse.Action):
    """An option's old spelling: appends as the new one does and notes the new name once
    (on stderr, so the output stays the same)."""

    def __init__(self, option_strings: list, dest: str, new: str, **kw: Any) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kw)

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        items = list(getattr(namespace, self.dest, None) or [])
        items.append(values)
        setattr(namespace, self.dest, items)
        if not getattr(namespace, "_noted_" + self.dest, False):
            setattr(namespace, "_noted_" + self.dest, True)
            print(f"note: {option} is now {self.new} (one meaning per word across the cosim "
                  "commands: --interface is python-can's interface, --interface-type an "
                  "FMU's)", file=sys.stderr)


# ---------------------------------------------------------------- hil run
def _cpus(text: str) -> list[int]:
    try:
        return [int(c) for c in text.split(",") if c.strip()]
    except ValueError:
        raise CosimError(f"--cpus {text!r}: expected CPU numbers separated by commas, e.g. "
                         f"--cpus 0,1 (this machine has {os.cpu_count()})") from None


def _settings(args: argparse.Namespace, hil: dict, sim_defaults: dict, sim: Any) -> dict:
    """Runner settings: command line over ``HIL`` over defaults."""
    cfg = dict(hil)
    cli = {"period_s": args.period, "duration_s": args.duration, "overrun": args.overrun,
           "max_overruns": args.max_overruns, "priority": args.priority,
           "gc_mode": args.gc, "spin_s": args.spin, "timer_slack_ns": args.timer_slack,
           "cpus": _cpus(args.cpus) if args.cpus else None,
           "realtime": "off" if args.no_auto_setup else None}
    cfg.update({k: v for k, v in cli.items() if v is not None})
    budget = dict(cfg.get("budget") or {})
    budget.update(_parse_budget(args.budget))
    from .verdict import Budget
    try:
        cfg["budget"] = Budget(**budget)
    except TypeError as exc:
        from dataclasses import fields
        raise UsageError(f"--budget / HIL['budget']: {exc}; budget names: "
                         f"{', '.join(f.name for f in fields(Budget))}") from None
    if cfg.get("cpus") is not None:
        from .rtsetup import check_cpus
        try:
            cfg["cpus"] = check_cpus(cfg["cpus"])
        except CosimError as exc:
            raise UsageError(f"--cpus: {exc}") from None
    sim_dt = getattr(sim, "dt", None) if sim is not None else sim_defaults.get("dt")
    if "period_s" not in cfg:
        cfg["period_s"] = sim_dt if isinstance(sim_dt, int | float) and sim_dt > 0 else 1e-3
    if "duration_s" not in cfg:
        cfg["duration_s"] = sim_defaults.get("t_end", 10.0)
    cfg.setdefault("overrun", "skip")
    for k in ("period_s", "duration_s"):
        if not (isinstance(cfg[k], int | float) and cfg[k] > 0 and math.isfinite(cfg[k])):
            raise CosimError(f"{k.replace('_s', '')} must be a positive number of seconds, "
                             f"got {cfg[k]!r}")
    return cfg


def _parse_budget(items: list[str]) -> dict:
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise UsageError(f"--budget {item!r}: expected NAME=VALUE, e.g. --budget overruns=0 "
                             "or --budget lateness_p99_us=100 (NAME=none: not checked)")
        out[name.strip()] = _literal(value)
    return out


def _make_simulator(built: Any, sim_defaults: dict, period: float, writers: list) -> Any:
    from cosim.simulator import Simulator
    if isinstance(built, Simulator):
        if getattr(built, "_initialized", False):
            raise ModelError("build() returned a Simulator that has already run; return a "
                             "fresh one (or the Diagram)")
        built.observers.extend(writers)
        return built
    return Simulator(built, solver=sim_defaults.get("solver", "rk4"),
                     dt=sim_defaults.get("dt", period), rtol=sim_defaults.get("rtol", 1e-6),
                     atol=sim_defaults.get("atol", 1e-9), record=False, observers=writers)


def _writers(out: str, fmt: str, record: Any, every: int) -> list:
    from cosim.errors import OutputError
    from cosim.writers import CsvWriter, Hdf5Writer
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create output folder {out!r}: {exc.strerror}; choose "
                          "another --out folder or fix permissions") from None
    writers = []
    for f in fmt.split(","):
        f = f.strip().lower()
        if f == "csv":
            writers.append(CsvWriter(os.path.join(out, "results.csv"), record, every))
        elif f in ("hdf5", "h5"):
            writers.append(Hdf5Writer(os.path.join(out, "results.h5"), record, every))
        else:
            raise CosimError(f"--format: unknown format {f!r}; use csv, hdf5 or csv,hdf5")
    return writers


def _apply_sets(sim: Any, pairs: list[str]) -> dict:
    done = {}
    for pair in pairs:
        path, eq, text = pair.partition("=")
        path = path.strip()
        if not eq or "." not in path:
            raise CosimError(f"--set {pair!r}: expected BLOCK.PARAM=VALUE, e.g. --set c.value=2")
        value = _literal(text)
        try:
            sim.ctx.set_param(path, value)
        except CosimError as exc:
            raise CosimError(f"--set {pair}: {exc}") from exc
        except (TypeError, ValueError) as exc:
            raise CosimError(f"--set {pair}: invalid value {value!r} ({exc})") from exc
        done[path] = value
    return done


def cmd_hil_run(args: argparse.Namespace) -> int:
    from .runner import RealTimeRunner, VirtualClock
    io = Interfaces()
    sig = StopOnSignals()  # the first SIGINT/SIGTERM stops the runner after its frame
    runner = sim = None
    error: BaseException | None = None
    out = args.out
    verdict = None
    started = False  # errors before the run are bad input (exit 2)
    with sig:
        from .lifeline import tie_to_parent
        tie_to_parent()  # a run started by a HIL command ends with it (SIGTERM: in order)
        try:
            io.overrides = _parse_overrides(args.interface)
            io.realtime = not args.no_realtime
            built, hil, sim_defaults, finish = _build(args.file, args.function, io)
            io.check_overrides()
            from cosim.simulator import Simulator
            cfg = _settings(args, hil, sim_defaults, built if isinstance(built, Simulator)
                            else None)
            diagram = built.diagram if isinstance(built, Simulator) else built
            out = out or os.path.join("out", diagram.name)
            from cosim.csv_results import sidecar_path
            from cosim.results_folder import claim
            taken = claim(out, "cosim hil run", args.file,
                          ["results.csv", sidecar_path("results.csv").name, "results.h5",
                           "telemetry.csv", "summary.json"], force=args.force)
            writers = _writers(out, args.format, sim_defaults.get("record", "all"), args.every)
            sim = _make_simulator(built, sim_defaults, cfg["period_s"], writers)
            sets = _apply_sets(sim, args.set)
            logs = io.start_logs(out)
            kw = {k: cfg[k] for k in HIL_KEYS if k in cfg and k not in ("period_s",
                                                                          "duration_s")}
            t_last = sim.ctx.time + cfg["duration_s"] - 1e-9

            def on_frame(rt: Any, k: int) -> None:
                io.check()
                if sim.ctx.time >= t_last:  # the last frame: the session ends with it
                    io.end_session()

            runner = RealTimeRunner(sim, cfg["period_s"], **kw,
                                    clock=VirtualClock() if args.no_realtime else None,
                                    on_frame=on_frame if io.backends else None,
                                    watch=list(io.backends.values()) + logs,
                                    telemetry_csv=os.path.join(out, "telemetry.csv"))
            io.attach(runner.stop)
            started = True
            mode = "virtual clock (--no-realtime)" if args.no_realtime else "real time"
            print(f"model '{diagram.name}' ({args.file}): {len(diagram.leaf_blocks())} blocks, "
                  f"solver {sim.solver_name}; {mode}, period {cfg['period_s'] * 1e3:g} ms, "
                  f"duration {cfg['duration_s']:g} s, overrun {cfg['overrun']}"
                  + (f"; interfaces: {', '.join(io.roles)}" if io.roles else "")
                  + (f"; peers: {', '.join(io.peers)}" if io.peers else ""), flush=True)
            sig.runner = runner
            wall = time.perf_counter()
            res = None
            try:
                res = runner.run(cfg["duration_s"])
            except BaseException as exc:
                error = exc
                res = getattr(exc, "results", None)
            finally:
                sig.runner = None
                wall = time.perf_counter() - wall
            # the run's end: the peers hear it first, then they end, then the logs close
            io.end_session()
            parts = io.stop_peers(out)
            log_errors = io.stop_logs()
            tel = runner.telemetry
            verdict, end = _end_verdict(runner, parts, log_errors, io, finish, res, out,
                                        sim.ctx.time, cfg["duration_s"], error, args)
            written = [str(w.path) for w in writers] + [os.path.join(out, "telemetry.csv")]
            written += [log.path for log in io.logs.values()] + end.files
            summary = {"model": os.path.abspath(args.file), "diagram": diagram.name,
                       "mode": "virtual" if args.no_realtime else "realtime",
                       "settings": _jsonable({**cfg, "budget": cfg["budget"].__dict__}),
                       "set": _jsonable(sets),
                       "status": _status(error, sig.signum), "t_end_s": sim.ctx.time,
                       "wall_s": wall,
                       "verdict": _jsonable(verdict.as_dict()) if verdict else None,
                       "setup": _jsonable(runner.setup),
                       "telemetry": _jsonable(tel.as_dict()), "interfaces": io.describe(),
                       "results": {str(w.path): w.samples_written for w in writers}}
            if io.peers:
                summary["peers"] = _jsonable(io.describe_peers())
            if finish is not None:
                summary["finish"] = _jsonable({**end.summary, "files": end.files})
            path = os.path.join(out, "summary.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(summary, f, indent=2)
            print(tel.summary())
            if args.no_realtime:
                print(f"virtual clock: {sim.ctx.time:g} s simulated in {wall:.3f} s wall "
                      f"({sim.ctx.time / max(wall, 1e-9):.1f}x real time)")
            for role, b in io.backends.items():
                print(f"interface '{role}' ({b.where}): {b.counters or 'no traffic'}")
            for w in writers:
                print(f"results: {w.path} ({w.samples_written} samples)")
            print(f"telemetry: {os.path.join(out, 'telemetry.csv')}")
            for role, log in io.logs.items():
                st = log.stats()
                print(f"bus log of '{role}': {log.path} ({st['written']} frames, "
                      f"{st['dropped']} dropped)")
            for name, e in io.peers.items():
                print(f"peer '{name}': exit {e.exit}"
                      + (f", summary {e.report['file']}" if e.report else ""))
            for f in end.files:
                print(f"wrote: {f}")
            print(f"summary: {path}{taken.note()}")
            if verdict is not None:
                print(verdict.line(), flush=True)
            if error is not None:
                raise error
        except BaseException as exc:
            error = exc
        finally:
            io.close()
    if error is None:
        if sig.signum is not None:
            print(f"cosim hil run: stopped by {signal.Signals(sig.signum).name} at "
                  f"t = {sim.ctx.time:.6g} s", file=sys.stderr)
            return 128 + sig.signum
        return verdict.exit_code if verdict is not None else 0
    if isinstance(error, KeyboardInterrupt):
        signum = getattr(error, "signum", sig.signum or signal.SIGINT)
        print(f"cosim hil run: interrupted by {signal.Signals(signum).name}"
              + (f" at t = {sim.ctx.time:.6g} s" if sim is not None else ""), file=sys.stderr)
        return 128 + signum
    if isinstance(error, Exception):
        _report("cosim hil run", error, args.debug)
        return 1 if started else 2
    raise error


def _report(command: str, exc: BaseException, show_traceback: bool) -> None:
    if show_traceback:
        traceback.print_exception(exc)
    text = " ".join(str(exc).split()) or type(exc).__name__
    hint = ""
    if not isinstance(exc, CosimError):  # not one of ours: an unexpected failure
        text = f"{type(exc).__name__}: {text}"
        hint = "" if show_traceback else " (--traceback shows where)"
    print(f"{command}: error: {text}{hint}", file=sys.stderr)


# ------------------------------------------------------------------ parser
RUN_EPILOG = """\
model file convention:
  HIL = {"period_s": 1e-3, "duration_s": 10.0, "overrun": "skip"}   # optional
  SIMULATION = {"solver": "rk4", "dt": 1e-3}                        # optional
  def build(io):
      can = io.open("can", interface="virtual", channel="acc")
      ...
      return builder.build()          # or a fresh Simulator

I/O overrides (repeatable; --interface is the old spelling):
  --io can=udp_multicast        the backend's 'interface' option (or its kind)
  --io can.backend=KIND         the backend kind
  --io can.channel=239.74.163.2 any option (Python literal, else text)

what a run brings beside its model (optional, in the model file):
  io.open("can", ..., log="bus.asc")          the bus logged in the output folder
  io.open("can", ..., end_of_session="send")  tell the peers when the run ends ("stop":
                                              end the run when a peer's end arrives)
  io.spawn([...], name="ecu", summary_option="--summary")
                                              a peer process, ended with the run (and
                                              by the kernel if this one dies); its
                                              verdict joins the run's
  def finish(run): ...                        after the run: run.check(), run.note(),
                                              run.wrote(), run.summary

outputs: DIR/results.csv (streamed), DIR/telemetry.csv, DIR/summary.json, the bus logs,
DIR/<peer>_summary.json, what finish() wrote.
exit status: 0 the verdict passed, 1 a check failed or the run failed, 2 bad input
(nothing run), 130 SIGINT, 143 SIGTERM (results written)."""


def add_parser(sub: Any) -> None:
    """Add ``hil`` (with ``hil run``) to the ``cosim`` parser."""
    fmt = argparse.RawDescriptionHelpFormatter
    h = sub.add_parser("hil", help="hardware-in-the-loop: run a model file in real time")
    hsub = h.add_subparsers(dest="hil_command", required=True)
    r = hsub.add_parser("run", help="run FILE.py's model in real time with its hardware",
                        description="Run a model file in real time (hil.runner) with the "
                                    "I/O backends it opens.",
                        epilog=RUN_EPILOG, formatter_class=fmt)
    r.add_argument("file", help="model file defining build(io)")
    r.add_argument("--function", help="build function in the file (default: build)")
    r.add_argument("--duration", type=float, help="simulated (= wall) time [s]")
    r.add_argument("--period", type=float, help="frame period [s] (default: HIL "
                                                "period_s, else the solver dt, else 1 ms)")
    r.add_argument("--overrun", choices=POLICIES, help="overrun policy (default skip)")
    r.add_argument("--max-overruns", type=int, help="stop after this many overruns")
    r.add_argument("--priority", type=int, help="SCHED_FIFO priority 1-99 (needs "
                                                "CAP_SYS_NICE)")
    r.add_argument("--cpus", help="CPU affinity, e.g. 0,1")
    r.add_argument("--gc", choices=("normal", "disable", "freeze"), help="garbage "
                   "collector during the run (default normal)")
    r.add_argument("--spin", type=float, help="spin this long before each deadline [s]")
    r.add_argument("--timer-slack", type=int, help="timer slack [ns] (Linux)")
    r.add_argument("--no-realtime", action="store_true",
                   help="virtual clock: as fast as possible, deterministic (CI)")
    r.add_argument("--no-auto-setup", action="store_true",
                   help="no automatic real-time set-up (SCHED_FIFO, mlockall, pinning, gc "
                        "freeze where permitted)")
    r.add_argument("--budget", action="append", default=[], metavar="NAME=VALUE",
                   help="verdict budget (repeatable), e.g. overruns=0, lateness_p99_us=100, "
                        "stale_episodes=none")
    r.add_argument("--io", action="append", default=[], dest="interface",
                   metavar="ROLE[.OPTION]=VALUE", help="override an I/O backend the file "
                   "opens (repeatable; see below)")
    r.add_argument("--interface", action=_OldSpelling, dest="interface", new="--io",
                   help=argparse.SUPPRESS)
    r.add_argument("--set", action="append", default=[], metavar="BLOCK.PARAM=VALUE",
                   help="initial parameter value (repeatable)")
    r.add_argument("--out", help="output folder (default out/<diagram>)")
    add_force_option(r)
    r.add_argument("--format", default="csv", help="csv, hdf5 or csv,hdf5")
    r.add_argument("--every", type=int, default=1, help="record every n-th sample")
    r.add_argument("--traceback", "--debug", dest="debug", action="store_true",
                   help="show tracebacks")
    h.set_defaults(debug=False)


def run(args: argparse.Namespace) -> int:
    return cmd_hil_run(args)
