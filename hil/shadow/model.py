"""The shadow model: :class:`ShadowModel` (a diagram wrapped with held inputs, run over a
recording by :meth:`~ShadowModel.replay`) and :class:`ShadowStream` (the live session of
:meth:`~ShadowModel.stream`); the feeding modes are described in :mod:`hil.shadow`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.diagram import Diagram, DiagramBuilder, require_diagram
from cosim.errors import ParameterError, PortError, UnitError
from cosim.observers import Observer, provenance
from cosim.ports import OutputPort
from cosim.simulator import Simulator
from cosim.units import compatible, conversion

from .errors import ShadowDataError, _did_you_mean
from .recording import HeldSignal, Recording, _Breakpoints
from .report import ShadowReport, _Tracker
from .rules import _EPS, Residual

__all__ = ["ShadowModel", "ShadowStream"]

_NS = 1.0 / 1_000_000_000


class ShadowModel:
    """A cosim diagram run beside a machine; residuals of its outputs flag faults.

    Parameters
    ----------
    diagram : Diagram
        The model.  Every exported input is driven by a machine signal (``inputs``) or a
        constant (``fixed_inputs``).
    inputs : dict
        Machine control signal name -> model exported input name.
    outputs : dict
        Machine measured signal name -> :class:`Residual` (or a model output name: record
        the residual only).  The rule's name in reports is the machine signal's.
    units : dict, optional
        Units of machine signals (for streams; a recording's own units are used otherwise,
        these override them).  Unspecified units are accepted (as by ``connect``).
    fixed_inputs : dict, optional
        Model input name -> constant value.
    setup : callable, optional
        ``setup(ctx)`` on each fresh context (initial states, parameters).
    **sim_options
        :class:`~cosim.simulator.Simulator` settings (``solver``, ``dt``, ``rtol``, ...).

    It takes the diagram, not a Simulator: it wraps the diagram (one :class:`HeldSignal`
    per exported input, the diagram ``<name>_shadow``) and makes a fresh simulator and
    context per replay or stream, so one ShadowModel serves many recordings.
    """

    def __init__(self, diagram: Diagram, inputs: dict, outputs: dict, *,
                 units: dict | None = None, fixed_inputs: dict | None = None,
                 setup: Any = None, **sim_options: Any) -> None:
        self.model = diagram = require_diagram(diagram, "ShadowModel()")
        self.inputs = dict(inputs)
        self.rules = {k: (v if isinstance(v, Residual) else Residual(str(v)))
                      for k, v in outputs.items()}
        self.machine_units = dict(units or {})
        self.fixed_inputs = dict(fixed_inputs or {})
        self.setup = setup
        self.sim_options = dict(sim_options)
        self.sim_options.pop("record", None)
        if not self.rules:
            raise ParameterError("ShadowModel: give at least one measured signal in outputs")
        avail = list(diagram.inputs)
        for name in list(self.inputs.values()) + list(self.fixed_inputs):
            if name not in diagram.inputs:
                raise PortError(f"ShadowModel: model '{diagram.name}' has no exported input "
                                f"{name!r}; exported inputs: " + _did_you_mean(name, avail))
        driven = list(self.inputs.values()) + list(self.fixed_inputs)
        dup = {n for n in driven if driven.count(n) > 1}
        if dup:
            raise ParameterError(f"ShadowModel: model input(s) {sorted(dup)} driven twice")
        missing = [n for n in avail if n not in driven]
        if missing:
            raise PortError(f"ShadowModel: model inputs {missing} are not driven; map a "
                            "machine signal to each in inputs= or give fixed_inputs=")
        b = DiagramBuilder(f"{diagram.name}_shadow")
        b.add(diagram)
        self.hold: dict[str, HeldSignal] = {}
        for name, port in diagram.inputs.items():
            if port.shape != ():
                raise ParameterError(f"ShadowModel: model input {name!r} has shape "
                                     f"{port.shape}; only scalar signals are supported")
            h = b.add(HeldSignal(f"hold_{name}", port.unit_text or None))
            b.connect(h.y, port)
            self.hold[name] = h
        self.wrapper = b.build()
        self.out_port: dict[str, OutputPort] = {}
        self.units: dict[str, str] = {}
        for mname, rule in self.rules.items():
            port = self._model_output(rule.model)
            if port.shape != ():
                raise ParameterError(f"ShadowModel: model output {rule.model!r} has shape "
                                     f"{port.shape}; only scalar signals are supported")
            self.out_port[mname] = port
            self.units[mname] = port.unit_text or ""
            if isinstance(rule.scale, str) and rule.scale not in self.inputs \
                    and rule.scale not in self.rules:
                raise PortError(f"ShadowModel: scale {rule.scale!r} of {mname!r} is not a "
                                "machine signal; " + _did_you_mean(
                                    rule.scale, list(self.inputs) + list(self.rules)))

    def _model_output(self, name: str) -> OutputPort:
        d = self.model
        if name in d.outputs:
            return d.outputs[name]
        try:
            port = d.find(name) if ("." in name or "/" in name) else None
        except PortError as exc:
            raise PortError(f"ShadowModel: no model output {name!r} ({exc}); exported "
                            "outputs: " + ", ".join(d.outputs)) from None
        if not isinstance(port, OutputPort):
            raise PortError(f"ShadowModel: model '{d.name}' has no output {name!r}; exported "
                            "outputs: " + _did_you_mean(name, d.outputs)
                            + " (or give a port path 'block.port')")
        return port

    # ------------------------------------------------------------- units
    def _conversions(self, units: dict) -> tuple[dict, dict, dict]:
        """(input, measured, scale) ``(scale, bias)`` from machine to model units."""
        def conv(src: str, dst: str, a: str, b: str) -> tuple[float, float]:
            if not compatible(src or None, dst or None):
                raise UnitError(f"ShadowModel: unit mismatch: {a} [{src}] -> {b} [{dst}]; "
                                "fix the machine signal's unit or the model's declaration")
            return conversion(src or None, dst or None)
        mu = {**units, **self.machine_units}
        cin = {m: conv(mu.get(m, ""), self.model.inputs[p].unit_text or "",
                       f"machine signal {m!r}", f"model input {p!r}")
               for m, p in self.inputs.items()}
        cmeas = {m: conv(mu.get(m, ""), self.units[m], f"machine signal {m!r}",
                         f"model output {self.rules[m].model!r}")
                 for m in self.rules}
        cscale = {m: conv(mu.get(r.scale, ""), self.units[m], f"scale {r.scale!r}",
                          f"residual {m!r}")
                  for m, r in self.rules.items() if isinstance(r.scale, str)}
        return cin, cmeas, cscale

    def _new_sim(self, t0_ticks: int, manipulators: Any, observer: Observer) -> Simulator:
        ctx = self.wrapper.create_context()
        ctx.ticks, ctx.time, ctx.mode_time = t0_ticks, t0_ticks * _NS, t0_ticks * _NS
        for name, v in self.fixed_inputs.items():
            ctx.set_discrete(self.hold[name].table, (np.zeros(1), np.array([float(v)])))
        if self.setup is not None:
            self.setup(ctx)
        return Simulator(self.wrapper, ctx, record=False, observers=[observer],
                         manipulators=manipulators, **self.sim_options)

    def _scales(self, machine: dict, model: dict, cscale: dict) -> dict:
        out = {}
        for m, r in self.rules.items():
            if r.scale is None:
                out[m] = model[m]
            elif isinstance(r.scale, str):
                a, b = cscale[m]
                out[m] = a * machine[r.scale] + b
            else:
                out[m] = float(r.scale)
        return out

    # ------------------------------------------------------------ recorded
    def replay(self, recording: Any, *, t_start: float | None = None,
               t_end: float | None = None, out: Any = None) -> ShadowReport:
        """Run the model over a machine recording as fast as possible (:mod:`hil.shadow`).

        ``recording``: anything :meth:`Recording.load` reads; ``t_start``/``t_end``: the
        range (default: the whole recording; the model starts at ``t_start``); ``out``: a
        ``.csv`` (or ``.h5``) file for the residual record, written in chunks.
        """
        rec = Recording.load(recording)
        if rec.t.size == 0:
            raise ShadowDataError(f"recording {rec.source} has no samples")
        t0 = rec.t[0] if t_start is None else float(t_start)
        t1 = rec.t[-1] if t_end is None else float(t_end)
        if not t0 < t1:
            raise ShadowDataError(f"replay: empty range t_start = {t0} s, t_end = {t1} s")
        if t0 < rec.t[0] - _EPS or t1 > rec.t[-1] + _EPS:
            raise ShadowDataError(
                f"recording {rec.source} covers {rec.t[0]:.9g}..{rec.t[-1]:.9g} s, the "
                f"requested range is {t0:.9g}..{t1:.9g} s; shorten the range or record longer")
        cols_in = {m: rec.column(m, "input") for m in self.inputs}
        cols_meas = {m: rec.column(m, "measured") for m in self.rules}
        cin, cmeas, cscale = self._conversions(rec.units)
        i0 = max(int(np.searchsorted(rec.t, t0 + _EPS, "right")) - 1, 0)   # held at t0
        i1 = int(np.searchsorted(rec.t, t1 + _EPS, "right"))
        extra = {r.scale for r in self.rules.values() if isinstance(r.scale, str)}
        for name, col in list(cols_in.items()) + list(cols_meas.items()) + \
                [(s, rec.signals[s]) for s in extra if s not in cols_in and s not in cols_meas]:
            bad = np.flatnonzero(~np.isfinite(col[i0:i1]))
            if bad.size:
                k = i0 + int(bad[0])
                raise ShadowDataError(f"recording {rec.source}: signal {name!r} is "
                                      f"{col[k]} at t = {rec.t[k]:.9g} s (sample {k}, "
                                      f"{bad.size} non-finite in the range); repair or cut "
                                      "the recording")
        ticks = np.rint(rec.t[i0:i1] * 1e9).astype(np.int64)
        tick0, tick1 = int(round(t0 * 1e9)), int(round(t1 * 1e9))
        table_s = np.maximum(ticks, tick0) * _NS     # the sample held at t0 starts there
        bps: set[int] = set()
        for m in self.inputs:
            a, b = cin[m]
            change = np.flatnonzero(np.diff(a * cols_in[m][i0:i1] + b) != 0.0) + 1
            bps.update(int(k) for k in ticks[change])
        keep = (ticks >= tick0) & (ticks <= tick1)       # residuals at these samples
        sim_dt = self.sim_options.get("dt")
        dt_ticks = int(round(sim_dt * 1e9)) if isinstance(sim_dt, (int, float)) else 0
        bps.update(int(k) for k in ticks[keep] if not dt_ticks or k % dt_ticks)
        bps = {k for k in bps if tick0 < k <= tick1}
        machine = {m: cols_in[m][i0:i1][keep] for m in self.inputs}
        machine.update({m: cols_meas[m][i0:i1][keep] for m in self.rules})
        machine.update({s: rec.signals[s][i0:i1][keep] for s in extra if s not in machine})
        sample_ticks = ticks[keep]
        obs = _ReplayObserver(self, sample_ticks, machine, cmeas, cscale)
        sim = self._new_sim(tick0, [_Breakpoints(bps)], obs)
        for m, p in self.inputs.items():
            a, b = cin[m]
            sim.ctx.set_discrete(self.hold[p].table, (table_s, a * cols_in[m][i0:i1] + b))
        prov = {**provenance(sim), "recording": rec.source, "mode": "recorded"}
        obs.tracker = tracker = _Tracker(self, out, prov)
        try:
            sim.run(tick1 * _NS)
        except BaseException as exc:
            report = tracker.finish(exc, sim.diagnostics())
            if isinstance(exc, Exception):
                exc.report = report      # the residuals up to the failure
            raise
        report = tracker.finish(None, sim.diagnostics())
        if obs.next < len(sample_ticks):
            raise ShadowDataError(f"replay: the simulator never stopped at t = "
                                  f"{sample_ticks[obs.next] * _NS:.9g} s (a recording time); "
                                  "choose dt dividing the sample times")
        return report

    # ------------------------------------------------------------ streamed
    def stream(self, *, out: Any = None) -> ShadowStream:
        """A live session: call :meth:`ShadowStream.step` every frame, then ``finish()``."""
        return ShadowStream(self, out)


class _ReplayObserver(Observer):
    """Forms the residuals at the recording's times during a replay."""

    def __init__(self, shadow: ShadowModel, ticks: np.ndarray, machine: dict, cmeas: dict,
                 cscale: dict) -> None:
        self.shadow, self.ticks, self.machine = shadow, ticks, machine
        self.cmeas, self.cscale = cmeas, cscale
        self.next = 0
        self.tracker: _Tracker | None = None

    def required_ports(self) -> list:
        return list(self.shadow.out_port.values())

    def bind(self, sim: Any) -> None:
        self.slots = {m: sim.plan.output_slot[p] for m, p in self.shadow.out_port.items()}
        self.ctx = sim.ctx
        while self.next < len(self.ticks) and self.ticks[self.next] < sim.ctx.ticks:
            self.next += 1

    def wants_sample(self) -> bool:
        return self.next < len(self.ticks) and self.ctx.ticks == self.ticks[self.next]

    def on_sample(self, sim: Any) -> None:
        ctx = sim.ctx
        k = self.next
        if k >= len(self.ticks) or ctx.ticks != self.ticks[k]:
            return
        self.next += 1
        s = ctx.signals
        model = {m: float(s[i]) for m, i in self.slots.items()}
        mach = {n: float(v[k]) for n, v in self.machine.items()}
        meas = {m: a * mach[m] + b for m, (a, b) in self.cmeas.items()}
        scale = self.shadow._scales(mach, model, self.cscale)
        self.tracker.sample(ctx.time, meas, model, scale)


class ShadowStream:
    """A streamed shadow session (:meth:`ShadowModel.stream`); not thread-safe: call
    :meth:`step` from the loop that owns it."""

    def __init__(self, shadow: ShadowModel, out: Any) -> None:
        self.shadow = shadow
        self.out = out
        self.cin, self.cmeas, self.cscale = shadow._conversions({})
        self.sim: Simulator | None = None
        self.tracker: _Tracker | None = None
        self._u: dict[str, float] = {}
        self._t_prev = None

    def _check(self, t: float, values: dict, names: Any, role: str) -> dict:
        out = {}
        for n in names:
            if n not in values:
                raise PortError(f"shadow stream: {role} signal {n!r} missing at t = {t:.9g} s; "
                                f"given: {', '.join(values) or '(none)'}")
            v = float(values[n])
            if not math.isfinite(v):
                raise ShadowDataError(f"shadow stream: {role} signal {n!r} is {v} at "
                                      f"t = {t:.9g} s")
            out[n] = v
        unknown = [n for n in values if n not in names]
        if unknown:
            raise PortError(f"shadow stream: unknown {role} signal(s) {unknown}; "
                            + _did_you_mean(unknown[0], names))
        return out

    def step(self, t: float, inputs: dict, measured: dict) -> dict:
        """Frame at time ``t`` [s]: advance the model to ``t`` (previous inputs held), form
        the residuals with ``inputs`` and ``measured`` (dicts by machine signal name);
        returns ``{signal: flag}``."""
        sh = self.shadow
        t = float(t)
        u = self._check(t, inputs, list(sh.inputs), "input")
        y = self._check(t, measured, list(sh.rules), "measured")
        tick = int(round(t * 1e9))
        if self._t_prev is not None and tick <= self._t_prev:
            raise ShadowDataError(f"shadow stream: time {t!r} s is not after the previous "
                                  f"frame {self._t_prev * _NS!r} s")
        obs = None
        if self.sim is None:
            obs = _StreamObserver(sh)
            self.sim = sh._new_sim(tick, [], obs)
            prov = {**provenance(self.sim), "mode": "streamed"}
            self.tracker = _Tracker(sh, self.out, prov)
        for m, p in sh.inputs.items():
            a, b = self.cin[m]
            new = a * u[m] + b
            old = self._u.get(m, new)
            prev = self._t_prev if self._t_prev is not None else tick
            self.sim.ctx.set_discrete(sh.hold[p].table, (np.array([prev * _NS, tick * _NS]),
                                                         np.array([old, new])))
            self._u[m] = new
        try:
            if obs is not None:
                self.sim.initialize()
            else:
                self.sim.advance_to_ticks(tick)
        except BaseException as exc:
            self.finish(exc)
            raise
        self._t_prev = tick
        model = self.sim.observers[0].values
        mach = {**u, **y}
        meas = {m: a * y[m] + b for m, (a, b) in self.cmeas.items()}
        return self.tracker.sample(tick * _NS, meas, model,
                                   sh._scales(mach, model, self.cscale))

    def finish(self, error: BaseException | None = None) -> ShadowReport:
        """Close the record (the file gets its status) and return the report."""
        if self.tracker is None:
            raise ShadowDataError("shadow stream: finish() before any step()")
        if getattr(self, "_report", None) is None:
            self.sim.finish(error)
            self._report = self.tracker.finish(error, self.sim.diagnostics())
        return self._report


class _StreamObserver(Observer):
    def __init__(self, shadow: ShadowModel) -> None:
        self.shadow = shadow
        self.values: dict[str, float] = {}

    def required_ports(self) -> list:
        return list(self.shadow.out_port.values())

    def bind(self, sim: Any) -> None:
        self.slots = {m: sim.plan.output_slot[p] for m, p in self.shadow.out_port.items()}

    def on_sample(self, sim: Any) -> None:
        s = sim.ctx.signals
        self.values = {m: float(s[i]) for m, i in self.slots.items()}
