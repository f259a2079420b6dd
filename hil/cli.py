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
import ast
import importlib.util
import inspect
import json
import math
import os
import signal
import sys
import threading
import time
import traceback
from typing import Any

from cosim.errors import CosimError
from cosim.results_folder import add_force_option

from .errors import HILError

__all__ = ["Interfaces", "add_parser", "run"]

DEFAULT_FUNCTIONS = ("build", "diagram", "make_diagram")
HIL_KEYS = ("period_s", "duration_s", "overrun", "max_overruns", "max_catch_up",
            "degrade_after", "recover_after", "max_degrade", "spin_s", "priority", "cpus",
            "gc_mode", "timer_slack_ns", "realtime", "budget")
POLICIES = ("raise", "skip", "catch_up", "degrade")


class ModelError(CosimError):
    """The model file cannot be loaded or its build function failed."""


class UsageError(CosimError):
    """Bad input before the run: exit status 2."""


def _call_build(fn: Any, io: Any, path: str, name: str) -> Any:
    """Call the build function with the interfaces where it takes them (module docstring)."""
    params = list(inspect.signature(fn).parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.name == "io" for p in params):
        io_p = next(p for p in params if p.name == "io")
        return fn(io) if io_p.kind in positional and params[0] is io_p else fn(io=io)
    required = [p for p in params if p.default is p.empty and p.kind in positional]
    if not required:
        return fn()
    if len(required) == 1 and params[0] is required[0]:
        return fn(io)
    raise ModelError(f"{path}: {name}() has {len(required)} parameters without defaults "
                     f"({', '.join(p.name for p in required)}); a build function takes the "
                     "interfaces as 'io' (or nothing): def build(io): ...")


class _Interrupted(KeyboardInterrupt):
    """SIGINT/SIGTERM outside the frame loop (or a second one inside it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


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


def _literal(text: str) -> Any:
    """A Python literal if ``text`` is one (``true``/``false``/``none`` too), else the text."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def _parse_overrides(items: list[str]) -> dict[str, dict[str | None, Any]]:
    """``ROLE=VALUE`` -> ``{role: {None: value}}``; ``ROLE.OPTION=VALUE`` -> ``{role:
    {option: literal}}``."""
    out: dict[str, dict[str | None, Any]] = {}
    for item in items:
        key, eq, value = item.partition("=")
        role, dot, option = key.strip().partition(".")
        if not eq or not role or (dot and not option):
            raise CosimError(f"--io {item!r}: expected ROLE=VALUE (the backend's "
                             "interface, or its kind) or ROLE.OPTION=VALUE, e.g. "
                             "--io can=udp_multicast or --io can.channel=vcan0")
        opts = out.setdefault(role, {})
        if not dot:
            opts[None] = value.strip()
        elif option == "backend":
            opts["backend"] = value.strip()
        else:
            opts[option] = _literal(value)
    return out


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple | set | frozenset):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, bool | int | float | str):
        return v
    return repr(v)


# -------------------------------------------------------------- interfaces
SESSION_ROLES = ("send", "stop")


class _PeerEntry:
    """A spawned peer and what the run does with it at the end."""

    def __init__(self, peer: Any, summary: str | None, grace_s: float) -> None:
        self.peer = peer
        self.summary = summary
        self.grace_s = grace_s
        self.exit: int | None = None
        self.report: dict | None = None


class Interfaces:
    """The hardware a model file opens, by role: ``io.open("can", interface="virtual",
    channel="acc")``, and the peer processes it starts (module docstring).

    Parameters
    ----------
    overrides : dict
        ``{role: {option: value}}`` from ``--io``; the key ``None`` holds a bare
        ``ROLE=VALUE`` (the ``interface`` option, or the kind), ``"backend"`` the kind.
    """

    def __init__(self, overrides: dict[str, dict[str | None, Any]] | None = None) -> None:
        self.overrides = overrides or {}
        self.backends: dict[str, Any] = {}
        self.kinds: dict[str, str] = {}
        self.options: dict[str, dict[str, Any]] = {}
        self.log_files: dict[str, str] = {}      # role -> file (in the output folder)
        self.logs: dict[str, Any] = {}           # role -> MessageLog, once started
        self.session: dict[str, str] = {}        # role -> "send" | "stop"
        self.peers: dict[str, _PeerEntry] = {}
        self._tmp: str | None = None             # the peers' summaries until the end
        self._stop_run: Any = None               # the runner's stop(), once it exists
        self._stop_pending: str | None = None
        self._ended: set[str] = set()            # roles whose end-of-session frame went out
        #: False on the virtual clock (``--no-realtime``): a model whose peers keep the
        #: wall clock can refuse it
        self.realtime = True

    @property
    def roles(self) -> list[str]:
        return list(self.backends)

    def __getitem__(self, role: str) -> Any:
        try:
            return self.backends[role]
        except KeyError:
            raise HILError(f"no interface {role!r} is open; open: "
                           f"{', '.join(self.backends) or '(none)'}") from None

    def open(self, role: str, **defaults: Any) -> Any:
        """Create (kind ``defaults.pop("backend", role)``), configure (defaults, then the
        command-line overrides), open and remember the backend of ``role``; ``log=FILE``
        and ``end_of_session=`` (module docstring) are options of the run, not of the
        backend."""
        from .registry import backend_class, create_backend
        if not isinstance(role, str) or not role or "." in role or "=" in role:
            raise HILError(f"io.open({role!r}): a role is a non-empty name without '.' or '='")
        if role in self.backends:
            raise HILError(f"io.open({role!r}): interface {role!r} is already open; give "
                           "each interface its own role")
        opts = dict(defaults)
        kind = opts.pop("backend", role)
        ov = dict(self.overrides.get(role, {}))
        kind = ov.pop("backend", kind)
        try:
            if None in ov:
                value = ov.pop(None)
                if "interface" in inspect.signature(backend_class(kind)).parameters:
                    opts["interface"] = value
                else:
                    kind = value
            opts.update(ov)
            log = opts.pop("log", None)
            session = opts.pop("end_of_session", None)
            self._check_run_options(role, log, session)
            params = inspect.signature(backend_class(kind)).parameters
            if "name" in params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
                opts.setdefault("name", role)
            backend = create_backend(kind, **opts)
        except HILError as exc:
            raise type(exc)(f"interface {role!r}: {exc}") from exc
        try:
            backend.open()
        except Exception as exc:
            backend.close()
            text = str(exc) if isinstance(exc, HILError) else \
                f"cannot open {backend.where}: {type(exc).__name__}: {exc}"
            raise HILError(f"interface {role!r}: {text}") from exc
        if (log or session) and not _is_can(backend):
            backend.close()
            raise HILError(f"interface {role!r}: log= and end_of_session= are for CAN "
                           f"interfaces; {backend.where} is a {kind!r} backend")
        self.backends[role] = backend
        self.kinds[role] = kind
        self.options[role] = opts
        if log:
            self.log_files[role] = str(log)
        if session:
            self.session[role] = session
            if session == "stop":
                from .can.session import EndWatch
                backend.add_tap(rx=EndWatch(self.stop_run))
        return backend

    @staticmethod
    def _check_run_options(role: str, log: Any, session: Any) -> None:
        if log is not None and not (isinstance(log, str | os.PathLike) and str(log)):
            raise HILError(f"log={log!r}: give a file name, e.g. log='bus.asc' (the format "
                           "follows the suffix: .asc, .blf, .csv, .log, .trc)")
        if session is not None and session not in SESSION_ROLES:
            raise HILError(f"end_of_session={session!r}: use 'send' (send the end-of-session "
                           "frame when the run ends) or 'stop' (end the run when a peer's "
                           "arrives)")

    def check_overrides(self) -> None:
        """Refuse overrides of roles the model never opened."""
        unknown = [r for r in self.overrides if r not in self.backends]
        if unknown:
            raise HILError(f"--io {unknown[0]}: the model opens no interface "
                           f"{unknown[0]!r}; it opened: {', '.join(self.backends) or '(none)'}")

    def check(self, *_: Any) -> None:
        """Re-raise the first error of a backend's reader thread (every frame)."""
        for b in self.backends.values():
            b.check()

    # ------------------------------------------------------------ the run's end
    def stop_run(self, reason: str) -> None:
        """End the run after the current frame (a peer's end-of-session frame); before
        the run exists, it ends the run before its first frame."""
        if self._stop_run is not None:
            self._stop_run(reason)
        else:
            self._stop_pending = reason

    def attach(self, stop: Any) -> None:
        """The runner's ``stop`` (called once the runner exists)."""
        self._stop_run = stop
        if self._stop_pending is not None:
            stop(self._stop_pending)

    def start_logs(self, out: str) -> list:
        """Open the bus logs asked for with ``log=`` in ``out``; returns them (the runner
        watches them: their dropped messages count in the verdict)."""
        from .can import MessageLog
        for role, name in self.log_files.items():
            path = name if os.path.isabs(name) else os.path.join(out, name)
            log = MessageLog(path)
            self.backends[role].add_tap(rx=log, tx=log.sent)
            self.logs[role] = log
        return list(self.logs.values())

    def end_session(self) -> None:
        """Send the end-of-session frame on the interfaces opened with
        ``end_of_session="send"``, once: in the run's last frame (the tidying up after the
        loop takes 0.1 s and more on a busy machine, longer than a peer's staleness limit),
        or after a run that ended early.  Never raises: a bus that is gone is reported."""
        from .can.session import end_frame
        for role in self.session:
            if self.session[role] != "send" or role in self._ended:
                continue
            self._ended.add(role)
            try:
                self.backends[role].write(end_frame(), timeout=0.0)
            except Exception as exc:  # noqa: BLE001 - the peers are stopped anyway
                print(f"cosim hil: interface {role!r}: cannot send the end-of-session frame "
                      f"({type(exc).__name__}: {exc}); its peers are stopped by SIGTERM",
                      file=sys.stderr)

    def stop_logs(self) -> list[str]:
        """Close the bus logs; returns the errors (a log that could not be written)."""
        errors = []
        for role, log in self.logs.items():
            try:
                log.stop()
            except Exception as exc:  # noqa: BLE001 - reported in the verdict
                errors.append(f"bus log of {role!r}: {exc}")
        return errors

    # ------------------------------------------------------------------ peers
    def spawn(self, argv: list[str], *, name: str, ready: str | None = "READY",
              summary_option: str | None = None, timeout_s: float = 60.0,
              grace_s: float = 5.0, env: dict | None = None) -> Any:
        """Start a peer process for the run and wait for its ready line (module
        docstring); returns the :class:`hil.peer.Peer`."""
        import tempfile

        from .peer import Peer
        if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
            raise HILError(f"io.spawn(name={name!r}): a peer's name is letters, digits, '-' "
                           "and '_' (it names its summary file)")
        if name in self.peers:
            raise HILError(f"io.spawn(name={name!r}): a peer of that name runs already")
        argv = [str(a) for a in argv]
        summary = None
        if summary_option:
            self._tmp = self._tmp or tempfile.mkdtemp(prefix="cosim-hil-peers-")
            summary = os.path.join(self._tmp, f"{name}_summary.json")
            argv += [summary_option, summary]
        peer = Peer(argv, name=name, ready=ready, env=env)
        self.peers[name] = _PeerEntry(peer, summary, grace_s)
        peer.wait_ready(timeout_s)
        return peer

    def stop_peers(self, out: str | None) -> list[Any]:
        """End every peer (after ``grace_s`` to end by itself, SIGTERM, then SIGKILL),
        keep its summary as ``out/<name>_summary.json``; returns the peers' verdicts (a
        failed check for a peer that wrote none)."""
        import shutil

        from .verdict import Check, Verdict
        parts = []
        for name, e in self.peers.items():
            if e.exit is None:
                e.exit = e.peer.stop(e.grace_s)
            if e.summary is None:
                continue
            report, why = None, None
            try:
                with open(e.summary, encoding="utf-8") as f:
                    report = json.load(f)
            except (OSError, ValueError) as exc:
                why = f"no summary ({type(exc).__name__})"
            if report is not None and out is not None:
                dest = os.path.join(out, f"{name}_summary.json")
                shutil.copyfile(e.summary, dest)
                e.report = {"file": dest}
            ev = (report or {}).get("verdict")
            if ev is not None:
                parts.append(Verdict.from_dict(ev, name))
                continue
            why = why or "its summary has no verdict"
            tail = " ".join(e.peer.output_tail().split())[-300:]
            v = Verdict(name)
            v.checks.append(Check("verdict", e.exit, "a verdict", False,
                                  f"peer '{name}' gave no verdict: {why} (exit {e.exit})"
                                  + (f"; it printed: {tail}" if tail else "")))
            parts.append(v)
        return parts

    def close(self) -> None:
        """End the peers (SIGTERM), close the bus logs and every backend (in reverse
        order; never raises)."""
        for name, e in self.peers.items():
            if e.exit is None:
                try:
                    e.exit = e.peer.stop(0.0)
                except Exception as exc:  # noqa: BLE001 - end the others
                    print(f"cosim hil: stopping peer {name!r} failed: {exc}", file=sys.stderr)
        for err in self.stop_logs():
            print(f"cosim hil: {err}", file=sys.stderr)
        for role in reversed(list(self.backends)):
            try:
                self.backends[role].close()
            except Exception as exc:  # noqa: BLE001 - close the others
                print(f"cosim hil: closing interface {role!r} failed: {exc}", file=sys.stderr)
        if self._tmp is not None:
            import shutil
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def describe(self) -> dict[str, dict]:
        """``{role: {kind, where, state, options, counters[, log, end_of_session]}}`` for
        summary.json."""
        out = {}
        for r, b in self.backends.items():
            d = {"kind": self.kinds[r], "where": b.where, "state": b.state.value,
                 "options": _jsonable(self.options[r]), "counters": b.counters.as_dict()}
            if r in self.logs:
                d["log"] = _jsonable(self.logs[r].stats())
            if r in self.session:
                d["end_of_session"] = self.session[r]
            out[r] = d
        return out

    def describe_peers(self) -> dict[str, dict]:
        return {n: {"argv": e.peer.argv, "pid": e.peer.pid, "exit": e.exit,
                    **(e.report or {})} for n, e in self.peers.items()}


def _is_can(backend: Any) -> bool:
    from .can.backend import CanBackend
    return isinstance(backend, CanBackend)


# --------------------------------------------------------------- model file
def _frame_in(exc: BaseException, path: str) -> str:
    """``path:line`` of the deepest traceback frame in the model file, else ``path``."""
    target = os.path.abspath(path)
    where = path
    for fs in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(fs.filename) == target:
            where = f"{path}:{fs.lineno}"
    return where


def _import_file(path: str) -> Any:
    if not os.path.isfile(path):
        raise ModelError(f"model file {path!r} not found; give the path of a .py file that "
                         "defines build(io)")
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(f"cosim_hil_model_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    folder = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:
        sys.modules.pop(spec.name, None)
        raise ModelError(f"{_frame_in(exc, path)}: importing the model file failed: "
                         f"{type(exc).__name__}: {exc}; fix the file") from exc
    except BaseException:
        sys.modules.pop(spec.name, None)
        raise
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    return mod


def _build(path: str, function: str | None,
           io: Interfaces) -> tuple[Any, dict, dict, Any]:
    """Import the model file and call its build function: (Diagram or Simulator, HIL,
    SIMULATION, its ``finish`` function or None)."""
    mod = _import_file(path)
    funcs = {k: v for k, v in vars(mod).items()
             if inspect.isfunction(v) and v.__module__ == mod.__name__}
    if function is None:
        function = next((f for f in DEFAULT_FUNCTIONS if f in funcs), None)
    if function not in funcs:
        raise ModelError(f"{path}: no function {function or ' or '.join(DEFAULT_FUNCTIONS)!r}; "
                         f"functions in the file: {', '.join(funcs) or '(none)'}; define "
                         "build(io) or pass --function")
    hil = getattr(mod, "HIL", {})
    sim_defaults = getattr(mod, "SIMULATION", {})
    for name, d in (("HIL", hil), ("SIMULATION", sim_defaults)):
        if not isinstance(d, dict):
            raise ModelError(f"{path}: {name} must be a dict, not {type(d).__name__}")
    bad = [k for k in hil if k not in HIL_KEYS]
    if bad:
        raise ModelError(f"{path}: HIL has unknown key {bad[0]!r}; valid keys: "
                         f"{', '.join(HIL_KEYS)}")
    finish = funcs.get("finish")
    if finish is not None and len([p for p in inspect.signature(finish).parameters.values()
                                   if p.default is p.empty]) != 1:
        raise ModelError(f"{path}: finish() takes the run's end as its one parameter: "
                         "def finish(run): ...")
    fn = funcs[function]
    try:
        built = _call_build(fn, io, path, function)
    except ModelError:
        raise
    except CosimError as exc:
        raise ModelError(f"{_frame_in(exc, path)}: {function}(): {exc}") from exc
    except Exception as exc:
        raise ModelError(f"{_frame_in(exc, path)}: {function}() failed: {type(exc).__name__}: "
                         f"{exc}; fix the model file (--traceback shows the traceback)") from exc
    from cosim.diagram import Diagram
    from cosim.simulator import Simulator
    if not isinstance(built, Diagram | Simulator):
        raise ModelError(f"{path}: {function}() returned {type(built).__name__}, not a Diagram "
                         "or a Simulator (return builder.build())")
    return built, dict(hil), dict(sim_defaults), finish


class RunEnd:
    """What a model file's ``finish(run)`` gets after the run (module docstring).

    Attributes
    ----------
    out : str
        The output folder.
    results : Results
        What the simulator recorded in memory (a returned Simulator's recorder; no
        signals for a returned Diagram, whose results go only to the files).
    time : float
        Simulated time reached [s]; ``duration_s`` the run's planned duration.
    stopped_by : str or None
        Why the run ended before its duration (a signal, a peer's end), else None.
    verdict : Verdict
        The runner's verdict, joined by the peers'.
    io : Interfaces
        The interfaces and peers (still open: the backends close after ``finish``).
    summary : dict
        Entries for ``summary.json`` (kept under ``"finish"``).
    """

    def __init__(self, out: str, results: Any, time_s: float, duration_s: float,
                 stopped_by: str | None, verdict: Any, io: Interfaces) -> None:
        self.out, self.results, self.io = out, results, io
        self.time, self.duration_s, self.stopped_by = time_s, duration_s, stopped_by
        self.verdict = verdict
        self.summary: dict = {}
        self.checks: list = []
        self.notes: list[str] = []
        self.files: list[str] = []

    def check(self, name: str, ok: bool, text: str, figure: Any = None,
              limit: Any = None) -> None:
        """Add a check to the run's verdict."""
        from .verdict import Check
        self.checks.append(Check(name, figure, limit, bool(ok), text))

    def note(self, text: str) -> None:
        """Add a note to the run's verdict (what was not judged, and why)."""
        self.notes.append(text)

    def wrote(self, path: str | os.PathLike[str]) -> None:
        """Say that ``finish`` wrote this file (printed and listed in summary.json)."""
        self.files.append(str(path))


# ---------------------------------------------------------------- signals
class _Signals:
    """SIGINT/SIGTERM: the first one during the frame loop stops the runner after the
    current frame; otherwise (or a second one) :class:`_Interrupted` is raised."""

    def __init__(self) -> None:
        self.runner: Any = None
        self.signum: int | None = None
        self._old: dict[int, Any] = {}

    def _handler(self, signum: int, frame: Any) -> None:
        first = self.signum is None
        if first:
            self.signum = signum
        if first and self.runner is not None:
            self.runner.stop(signal.Signals(signum).name)
            return
        raise _Interrupted(signum)

    def __enter__(self) -> _Signals:
        if threading.current_thread() is threading.main_thread():
            for s in (signal.SIGINT, signal.SIGTERM):
                self._old[s] = signal.signal(s, self._handler)
        return self

    def __exit__(self, *exc: Any) -> None:
        for s, old in self._old.items():
            signal.signal(s, old)
        self._old.clear()


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
    sig = _Signals()
    runner = sim = None
    error: BaseException | None = None
    out = args.out
    verdict = None
    started = False  # errors before the run are bad input (exit 2)
    with sig:
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


def _end_verdict(runner: Any, parts: list, log_errors: list[str], io: Interfaces,
                 finish: Any, res: Any, out: str, t: float, duration_s: float,
                 error: BaseException | None, args: argparse.Namespace) -> tuple[Any, RunEnd]:
    """The run's verdict: the runner's, joined by the peers' (checks named ``peer:
    check``), the bus logs' errors and the model's ``finish`` checks; ``finish``'s notes
    first (the one-line verdict shows the first two)."""
    from .verdict import Check, Verdict
    base = runner.verdict
    verdict = base
    if parts:
        verdict = Verdict.combine(f"{base.subject} with {', '.join(io.peers)}", [base, *parts])
        verdict.io = getattr(base, "io", None)
    tel = runner.telemetry
    end = RunEnd(out, res, t, duration_s, tel.stopped_by if tel else None, verdict, io)
    verdict.checks += [Check("bus_log", e, "written", False, e) for e in log_errors]
    if finish is None:
        return verdict, end
    if error is not None:
        end.note(f"finish() not called: the run failed ({type(error).__name__})")
    else:
        try:
            finish(end)
        except Exception as exc:  # noqa: BLE001 - a failed check, the rest is written
            if args.debug:
                traceback.print_exception(exc)
            end.check("finish", False, f"finish() failed: {type(exc).__name__}: {exc} "
                      "(--traceback shows where)", figure=f"{type(exc).__name__}: {exc}",
                      limit="no error")
    verdict.checks += end.checks
    verdict.notes[:0] = end.notes
    return verdict, end


def _status(error: BaseException | None, signum: int | None) -> str:
    if isinstance(error, KeyboardInterrupt):
        return f"interrupted by {error}"
    if error is not None:
        return f"error: {type(error).__name__}: {error}"
    if signum is not None:
        return f"stopped by {signal.Signals(signum).name}"
    return "complete"


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
