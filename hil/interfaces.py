"""The hardware a ``cosim hil run`` model file opens: :class:`Interfaces` (``io``).

What ``io.open``, ``io.spawn``, ``log=`` and ``end_of_session=`` do is told in the
module docstring of :mod:`hil.cli`; this module holds the object that does it, with
the backends it opened, their bus logs and the peer processes, closed at the end.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from typing import Any

from .cli_values import jsonable
from .errors import HILError

__all__ = ["Interfaces"]


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
                 "options": jsonable(self.options[r]), "counters": b.counters.as_dict()}
            if r in self.logs:
                d["log"] = jsonable(self.logs[r].stats())
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
