"""The rig a HIL test drives: signals by name, runs, stimuli, captures, faults, checks.

``rig = Rig(load_rig("rigs/virtual.toml")).start()`` (the pytest fixture ``rig`` does this,
:mod:`hil.pytest_plugin`), then, with the names of the rig file's ``[signals]`` map:

=================================  ==========================================================
step                               semantics
=================================  ==========================================================
``rig.read(name)``                 the value now: a plant output or parameter, the last value
                                   of a DBC signal seen on the bus (NaN before its first
                                   frame), an in-process controller's output
``rig.write(name, value)``         a plant parameter: from the next frame on; a DBC signal:
                                   one frame sent now on the bus by a node of the rig's own
                                   (the plant receives it; the other signals of the
                                   message as last seen, else the DBC's initial values;
                                   encoded without the range check, so an out-of-range
                                   value reaches the bus as its raw bits); an output port:
                                   refused
``rig.run(s)``                     ``s`` seconds more: the whole number of plant frames that
                                   covers them
``rig.run_until(cond, timeout)``   frames until ``cond`` holds on a frame's sample (returns
                                   its time) or ``timeout`` s passed (raises
                                   :class:`RigTimeout`)
``rig.stimulus(name, gen)``        a :mod:`~hil.testing.stimulus` generator written to
                                   ``name`` every frame (its start and stop: a time, a
                                   trigger on mapped names, or None: now / ``stop``)
``rig.capture(names, **kw)``       a :class:`~hil.testing.capture.Capture` fed every frame
                                   (``start``/``stop`` triggers on mapped names)
``rig.fault(kind, ...)``           a fault on a bus from now (``with``: until the block
                                   ends; ``duration``: for that long; ``.stop()``)
``rig.trace(names)``               every frame so far as a :class:`Trace` with units
``rig.eventually(...)`` etc.       :mod:`hil.testing.checks` on :meth:`trace`; a failure
                                   raises :class:`~hil.testing.errors.CheckFailed` with the
                                   signals around the failing instant
``rig.write_mf4(path)``            the run as MDF 4: mapped signals with units, the
                                   DBC-decoded messages, the captures, the raw frames
=================================  ==========================================================

Every frame the rig samples every readable mapped signal, after the plant's frame (and,
on a virtual rig, the controller's hit), so ``trace()`` has one sample per plant frame.
Each step is logged (:attr:`Rig.steps`: time and text) and each check kept
(:attr:`Rig.checks`) for the report.

Fault kinds: ``drop``, ``delay`` (``delay_s``), ``corrupt`` (``mask``) and ``bus_off`` of
:mod:`hil.faults`; ``stale``: the frames of ``messages`` lost (probability 1), so their
receiver sees them go stale; ``unplug``: every frame lost in both directions without an
error (a cable pulled: silence, not bus-off).  Faults act at the plant's side of the wire.

``rig.uds`` and ``rig.xcp`` are the clients named by the rig file's ``[uds]`` and
``[xcp]`` sections (``client = "module:function"``, called once as ``function(rig,
**args)`` when a test first uses it, string args with ``{work_dir}`` etc. filled in,
closed with the rig); without the section they raise :class:`RigNotConfigured`
(``rig.has("xcp")`` asks; a test skips on it).  The shipped ones are
:func:`hil.testing.clients.uds_client` (udsoncan: ``read_dtcs()``, ``clear_dtcs()``,
``read_did()``, ``.client``) and :func:`hil.testing.clients.xcp_client` (pyxcp with the
A2L's names: ``read(name)``, ``write(name, value)``, ``with daq([...]) as rec``).

Limitations: one sample per plant frame (a signal faster than the frame is seen at the
frame's instants); ``ecu:`` signals only on a virtual rig (a process's variables are
measured over XCP: ``rig.xcp``); a parameter written by a stimulus takes effect one
frame later; CAN writes are one frame each (a periodic override is a stimulus); a
real-time rig's controller process runs on between two ``run`` calls (its inputs go
stale 48 ms after a run ends: read its fault memory right after a run).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..errors import HILError
from . import checks as _checks
from .capture import Capture
from .conditions import Cond, as_cond
from .signals import Recorder, Trace, fmt_time
from .stimulus import Generator, Player

__all__ = ["Rig", "RigError", "RigTimeout", "RigNotConfigured", "FaultStep", "RIG_FAULTS"]

RIG_FAULTS = ("drop", "delay", "corrupt", "bus_off", "stale", "unplug")


class RigError(HILError, ValueError):
    """A step a rig cannot do (an unknown name, a write to an output, ...)."""


class RigTimeout(RigError, TimeoutError):
    """``run_until``: the condition did not hold within the timeout."""


class RigNotConfigured(RigError, LookupError):
    """A part of the rig (UDS, XCP) that its rig file does not configure."""


class _Source:
    """How one mapped name is read and written (unit ``"1"``: shown as none)."""

    def __init__(self, name: str, unit: str, read: Any, write: Any, text: str) -> None:
        self.name, self.read, self.write, self.text = name, read, write, text
        self.unit = "" if unit == "1" else unit


class FaultStep:
    """A fault on a bus from :meth:`start` to :meth:`stop` (a context manager too)."""

    def __init__(self, rig: Rig, kind: str, bus: str, faults: list, text: str) -> None:
        self.rig, self.kind, self.bus, self._faults, self.text = rig, kind, bus, faults, text
        self.started: float | None = None
        self.stopped: float | None = None

    def start(self, at: float | None = None) -> FaultStep:
        import dataclasses
        t0 = self.rig.time if at is None else float(at)
        self.started = t0
        fb = self.rig._loop.buses[self.bus]
        self._faults = [dataclasses.replace(f, start_s=t0, end_s=f.end_s if math.isinf(
            f.end_s) else t0 + f.end_s) for f in self._faults]
        fb.faults.extend(self._faults)
        end = self._faults[0].end_s
        self.rig._log(f"fault {self.text} on {self.bus} from t = {fmt_time(t0)} s"
                      + ("" if math.isinf(end) else f" to {fmt_time(end)} s"))
        return self

    def stop(self) -> FaultStep:
        import dataclasses
        if self.started is None or self.stopped is not None:
            return self
        t = self.rig.time
        fb = self.rig._loop.buses[self.bus]
        for f in self._faults:
            i = fb.faults.index(f)
            fb.faults[i] = dataclasses.replace(f, end_s=max(min(f.end_s, t), f.start_s + 1e-9))
        self.stopped = t
        self.rig._log(f"fault {self.kind} on {self.bus} ended at t = {fmt_time(t)} s")
        return self

    @property
    def injected(self) -> dict:
        return dict(self.rig._loop.buses[self.bus].injected)

    def __enter__(self) -> FaultStep:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _RigChecks:
    """The temporal checks on the rig's trace (:mod:`hil.testing.checks`), kept for the
    report and raising :class:`CheckFailed` when they fail (``expect=False``: return the
    result instead)."""

    def _check(self, fn: Any, args: tuple, kw: dict, expect: bool) -> Any:
        res = fn(self.trace(), *args, **kw)
        self.checks.append(res)
        self._log(f"check {'PASS' if res.passed else 'FAIL'}: {res.message}")
        return res.expect() if expect else res

    def eventually(self, cond: Any, *, within: float, start: float | None = None,
                   expect: bool = True) -> Any:
        return self._check(_checks.eventually, (cond,), dict(within=within, start=start),
                           expect)

    def always(self, cond: Any, *, during: float | None = None, start: float | None = None,
               expect: bool = True) -> Any:
        return self._check(_checks.always, (cond,), dict(during=during, start=start), expect)

    def settles(self, signal: Any, *, to: float, tol: float, within: float,
                start: float | None = None, expect: bool = True) -> Any:
        return self._check(_checks.settles, (signal,), dict(to=to, tol=tol, within=within,
                                                            start=start), expect)

    def responds(self, stimulus: Any, signal: Any, *, latency: float, expect: bool = True,
                 **kw: Any) -> Any:
        return self._check(_checks.responds, (stimulus, signal), dict(latency=latency, **kw),
                           expect)


class _RigResults:
    """What a rig's run leaves: the trace, the frames, the decoded messages, the MF4 file,
    the runner's telemetry and the plant's counters."""

    def trace(self, names: Iterable[str] | None = None) -> Trace:
        """Every frame so far (the mapped signals, with units)."""
        tr = self._rec.trace()
        return tr if names is None else tr.select(names)

    def frames(self, bus: str | None = None) -> list:
        """The raw frames on the wire(s): ``(t, id, data, extended, channel, is_rx)``."""
        taps = self._loop.taps
        out = [f for n, tap in taps.items() if bus in (None, n) for f in tap.frames]
        return sorted(out, key=lambda f: f[0])

    def decoded(self) -> dict[str, Trace]:
        """Per bus message seen: its DBC-decoded signals at its frames' times."""
        out = {}
        for bus, tap in self._loop.taps.items():
            for m, rows in tap.decoded.items():
                if not rows:
                    continue
                t = np.array([r[0] for r in rows])
                keep = np.concatenate([np.diff(t) > 0, [True]])  # one frame per instant
                sigs = {s: np.array([r[1][s] for r in rows], float)[keep] for s in rows[0][1]}
                units = {s: (i.unit or i.dbc_unit or "") for s, i in tap.db.signals(m).items()}
                out[f"{bus}.{m}"] = Trace(t[keep], sigs, units)
        return out

    def write_mf4(self, path: Any) -> Any:
        """The run as MDF 4 (:func:`hil.testing.mdf.write_mdf`): ``run`` (the mapped
        signals), one group per decoded message (``can.ACC_CMD``), each triggered
        capture (``capture0``, ...), the raw frames."""
        from .mdf import write_mdf
        traces = {"run": self.trace(), **self.decoded()}
        for k, cap in enumerate(self._captures):
            if cap.triggered:
                traces[f"capture{k}"] = cap.trace(partial=True)
        frames = [f[:5] for f in self.frames()]
        write_mdf(path, traces, frames=frames, comment=f"rig {self.spec.name}")
        self._log(f"measurement written: {path}")
        return path

    @property
    def runs(self) -> list[dict]:
        """Per ``run`` call: the runner's telemetry and verdict."""
        return self._loop.runs

    def stats(self, block: str) -> dict:
        """A plant block's ``stats()`` (a bridge's counters)."""
        return self._loop.plant.find(block).stats()


class Rig(_RigChecks, _RigResults):
    """A rig built from a :class:`~hil.testing.rigfile.RigSpec` (module docstring).
    ``plant_args`` override the rig file's ``[plant] args`` (a test's scenario)."""

    def __init__(self, spec: Any, plant_args: Mapping | None = None) -> None:
        from .rig_loop import make_loop
        self.spec = spec
        self.steps: list[tuple[float, str]] = []
        self.checks: list = []
        self._player = Player({})
        self._player_names: list[str] = []
        self._last_written: dict[str, float] = {}
        self._captures: list[Capture] = []
        self._until: Cond | None = None
        self._until_at: float | None = None
        record = sorted({f"{r.owner}.{r.item}" for r in spec.signals.values()
                         if r.source == "plant"})
        self._loop = make_loop(spec, plant_args=plant_args, on_frame=self._on_frame,
                               record=record)
        self._rec: Recorder | None = None
        self._sources: dict[str, _Source] = {}
        self._started = False
        self._running = False
        self._parts: dict[str, Any] = {}

    # ---------------------------------------------------------------- set-up
    def start(self) -> Rig:
        """Open the buses, build the plant and the controller, sample t = 0."""
        try:
            self._loop.start()
            self._sources = {n: self._resolve(r) for n, r in self.spec.signals.items()}
        except BaseException:
            self._loop.close()
            raise
        self._readable = [n for n, s in self._sources.items() if s.read is not None]
        self._rec = Recorder(self._readable, {n: self._sources[n].unit for n in self._readable})
        self._started = True
        self._log(f"rig {self.spec.name} ({self.spec.mode}) started")
        self._on_frame(self.time)
        return self

    def close(self) -> None:
        try:
            for c in self._parts.values():
                if hasattr(c, "close"):
                    c.close()
        finally:
            self._parts.clear()
            self._loop.close()

    def __enter__(self) -> Rig:
        return self.start() if not self._started else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _resolve(self, r: Any) -> _Source:
        loop = self._loop
        if r.source in loop.spec.buses:
            return self._resolve_bus(r)
        if r.source == "ecu" and not loop.virtual:
            raise RigError(f"signal {r.name} = {r.address!r}: the controller runs in its own "
                           "process on a real-time rig; measure its variables over XCP "
                           "(rig.xcp.read, rig.xcp.daq) or map a bus signal instead")
        if r.source in ("serial", "daq"):
            raise RigError(f"signal {r.name} = {r.address!r}: {r.source} signals are not "
                           "supported yet in a rig")
        sim = loop.psim if r.source == "plant" else loop.esim
        diagram = loop.plant if r.source == "plant" else loop.controller
        try:
            blk = diagram.find(r.owner)
        except Exception:
            raise RigError(f"signal {r.name} = {r.address!r}: no block {r.owner!r} in the "
                           f"{r.source} ({', '.join(diagram.blocks)})") from None
        if r.item in blk.outputs:
            port = blk.outputs[r.item]
            ctx = sim.ctx
            return _Source(r.name, port.unit_text or "", lambda: float(ctx.output(port)),
                           None, r.address)
        try:
            par = blk.parameter(r.item)
        except Exception:
            raise RigError(f"signal {r.name} = {r.address!r}: block {r.owner!r} has no output "
                           f"or parameter {r.item!r}; outputs: {', '.join(blk.outputs)}"
                           ) from None
        path = f"{r.owner}.{r.item}"

        def write(v: float) -> None:
            if self._running:
                loop.runner.set_parameter(path, float(v))
            else:
                sim.ctx.set_param(path, float(v))
        return _Source(r.name, getattr(par, "unit", None) or "",
                       lambda: float(sim.ctx.param(par)), write, r.address)

    def _resolve_bus(self, r: Any) -> _Source:
        tap, db = self._loop.taps[r.source], self._loop.dbs[r.source]
        from ..can.dbc import UnknownName
        try:
            info = db.signals(r.owner)[r.item] if r.owner in db.message_names else \
                db.message(r.owner)
        except (KeyError, UnknownName):
            raise RigError(f"signal {r.name} = {r.address!r}: the DBC of bus {r.source} has "
                           f"no signal {r.item!r} in {r.owner} "
                           f"({', '.join(db.signals(r.owner))})") from None
        latest = tap.latest[r.owner]
        wire = self._loop.injectors[r.source]
        msg = db.message(r.owner)

        def write(v: float) -> None:
            from ..can.backend import import_can
            from ..can.cyclic import _initial
            vals = {s: (latest[s] if not math.isnan(latest[s]) else _initial(i))
                    for s, i in db.signals(r.owner).items()}
            vals[r.item] = float(v)
            data = msg.encode(vals, scaling=True, strict=False)
            wire.write(import_can().Message(arbitration_id=msg.frame_id, data=data,
                                            is_extended_id=bool(msg.is_extended_frame)),
                       timeout=0.0)
        return _Source(r.name, info.unit or info.dbc_unit or "", lambda: latest[r.item],
                       write, r.address)

    # ------------------------------------------------------------- access
    @property
    def time(self) -> float:
        """The plant's time (s)."""
        return self._loop.time

    @property
    def names(self) -> list[str]:
        return list(self.spec.signals)

    def _source(self, name: str) -> _Source:
        try:
            return self._sources[name]
        except KeyError:
            import difflib
            close = difflib.get_close_matches(name, list(self._sources), n=1)
            raise RigError(f"rig {self.spec.name}: no signal {name!r} in the rig file's "
                           f"[signals]; names: {', '.join(self._sources)}"
                           + (f"; did you mean {close[0]!r}?" if close else "")) from None

    def read(self, name: str) -> float:
        return float(self._source(name).read())

    def write(self, name: str, value: float) -> None:
        s = self._source(name)
        if s.write is None:
            raise RigError(f"{name} ({s.text}) is an output: it cannot be written; map a "
                           "parameter or a bus signal to write it")
        s.write(value)
        self._log(f"write {name} = {value:g}{' ' + s.unit if s.unit else ''}")

    def where(self, bus: str | None = None) -> tuple[str, str]:
        """The python-can ``(interface, channel)`` of a bus of the rig (the first if
        None): where a client of the controller's reaches it."""
        return self._loop.where(bus)

    def has(self, part: str) -> bool:
        """True if the rig file configures ``part`` ("uds", "xcp")."""
        return getattr(self.spec, part, None) is not None

    def _part(self, part: str, what: str) -> Any:
        """The client of ``[uds]`` / ``[xcp]``: ``client = "module:function"`` called once
        as ``function(rig, **args)``; closed with the rig if it has ``close()``."""
        if part in self._parts:
            return self._parts[part]
        cfg = getattr(self.spec, part, None)
        if cfg is None:
            raise RigNotConfigured(f"rig {self.spec.name}: no {what} configured: the rig file "
                                   f"has no [{part}] section (client = \"module:function\", "
                                   "called with the rig)")
        from .rig_loop import fill, load_function
        fn = load_function(cfg["client"], f"rig file {self.spec.path} [{part}] client")
        values = self._loop.fills()
        args = {k: fill(v, values) if isinstance(v, str) else v
                for k, v in cfg.get("args", {}).items()}
        self._parts[part] = fn(self, **args)
        self._log(f"{part} client {cfg['client']} connected")
        return self._parts[part]

    @property
    def uds(self) -> Any:
        """The diagnostics client of the rig file's ``[uds]`` (:meth:`_part`)."""
        return self._part("uds", "UDS diagnostics")

    @property
    def xcp(self) -> Any:
        """The calibration and measurement client of the rig file's ``[xcp]``."""
        return self._part("xcp", "XCP")

    # ---------------------------------------------------------------- runs
    def _on_frame(self, t: float) -> None:
        values = {n: self._sources[n].read() for n in self._readable}
        self._rec.append(t, values)
        for c in self._captures:
            if not c.done:
                c.feed(t, values)
        if self._player_names:
            for n, v in self._player.update(t, values).items():
                if self._last_written.get(n) != v and not math.isnan(v):
                    self._sources[n].write(v)
                    self._last_written[n] = v
        if self._until is not None and self._until_at is None:
            one = Trace._trusted(np.array([t]), {k: np.array([v]) for k, v in values.items()},
                                 {k: self._sources[k].unit for k in values})
            if bool(self._until.evaluate(one).ok[0]):
                self._until_at = t
                self._loop.stop("run_until: the condition held")

    def run(self, seconds: float) -> Rig:
        if not (math.isfinite(seconds) and seconds > 0):
            raise RigError(f"run: give a duration in seconds > 0, got {seconds!r}")
        t0 = self.time
        self._running = True
        try:
            self._loop.run(seconds)
        finally:
            self._running = False
        self._log(f"run {fmt_time(t0)} -> {fmt_time(self.time)} s")
        return self

    def run_until(self, cond: Any, timeout: float) -> float:
        """Run until ``cond`` holds on a frame's sample; its time, or :class:`RigTimeout`."""
        self._until, self._until_at = as_cond(cond), None
        t0 = self.time
        try:
            self.run(timeout)
        finally:
            self._until, at = None, self._until_at
        if at is None:
            raise RigTimeout(f"run_until: {cond} did not hold within {timeout:g} s (from "
                             f"t = {fmt_time(t0)} s to {fmt_time(self.time)} s)")
        self._log(f"run_until {cond}: held at t = {fmt_time(at)} s")
        return at

    def stimulus(self, name: str, generator: Generator) -> Rig:
        """Play ``generator`` into ``name`` every frame from now (or its start)."""
        s = self._source(name)
        if s.write is None:
            raise RigError(f"stimulus {name}: {s.text} is an output; it cannot be driven")
        gens = {**self._player.generators, name: generator}
        old = self._player
        self._player = Player(gens)
        for k in old.generators:
            if k != name and old.started(k) is not None:
                self._player.start(k, old.started(k))
                if old.stopped(k) is not None:
                    self._player.stop(k, old.stopped(k))
        if generator.start is None:
            self._player.start(name, self.time)
        self._player_names = list(gens)
        self._log(f"stimulus {name}: {generator!r}")
        return self

    def stop_stimulus(self, name: str) -> None:
        self._player.stop(name, self.time)
        self._log(f"stimulus {name} stopped")

    def capture(self, names: Iterable[str] | None = None, **kw: Any) -> Capture:
        """A :class:`Capture` of mapped ``names`` (default all) fed from the next frame."""
        names = list(names) if names is not None else list(self._readable)
        for n in names:
            self._source(n)
        cap = Capture(names, units={n: self._sources[n].unit for n in self._readable}, **kw)
        self._captures.append(cap)
        self._log(f"capture {', '.join(names)}")
        return cap

    def fault(self, kind: str, *, bus: str | None = None, messages: Iterable[str] = (),
              direction: str = "both", duration: float | None = None, **kw: Any) -> FaultStep:
        """A fault from now on ``bus`` (module docstring); ``messages``: only these."""
        from ..faults import Fault
        if kind not in RIG_FAULTS:
            raise RigError(f"fault: kind must be one of {', '.join(RIG_FAULTS)}, got {kind!r}")
        buses = list(self._loop.buses)
        bus = bus or (buses[0] if len(buses) == 1 else None)
        if bus not in self._loop.buses:
            raise RigError(f"fault {kind}: give bus= one of {', '.join(buses) or 'none'}")
        db = self._loop.dbs[bus]
        ids = frozenset(db.frame_id(m) for m in messages) if messages else None
        if kind == "stale" and ids is None:
            raise RigError("fault stale: name the messages that go stale (messages=[...])")
        end = math.inf if duration is None else float(duration)
        base = dict(start_s=0.0, end_s=end, direction=direction, ids=ids)
        if kind in ("stale", "unplug"):
            f = Fault("drop", probability=1.0, **base)
        else:
            f = Fault(kind, **base, **kw)
        what = kind + (f" {', '.join(messages)}" if messages else "") + \
            "".join(f" {k}={v}" for k, v in kw.items())
        return FaultStep(self, kind, bus, [f], what).start()

    def _log(self, text: str) -> None:
        self.steps.append((self.time if self._loop.psim is not None else 0.0, text))
