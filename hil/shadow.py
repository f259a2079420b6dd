r"""Shadow-model mode: a model beside the machine, driven by the machine's control signals.

The seed (research/seed-001.md sec. 1.10, 1.11 item 10): "control signals of existing reel
are utilized as input for the simulation model.  In this way, residuals of measured and
simulated state variables can be formed while the values of residual can be used to detect
abnormalities."  The machine is outside (a recording or a live stream); the model is a cosim
diagram whose exported inputs receive the machine's control signals (zero-order hold) and
whose outputs are compared with the machine's measurements.

>>> shadow = ShadowModel(model, inputs={"u": "u"},                    # doctest: +SKIP
...                      outputs={"y_meas": Residual("y", abs_threshold=0.05,
...                                                  persistence_s=0.02)},
...                      solver="rk4", dt=1e-3)
>>> report = shadow.replay("machine.csv", out="residuals.csv")       # doctest: +SKIP
>>> live = shadow.stream(out="live.csv")                             # doctest: +SKIP
>>> live.step(t, {"u": 1.0}, {"y_meas": 0.3})   # every frame        # doctest: +SKIP
>>> print(live.finish().summary())                                   # doctest: +SKIP

Equations, per compared signal and machine sample :math:`t_k`
----------------------------------------------------------------
Residual (in the model output's unit; the measurement is converted with
:func:`cosim.units.conversion`), optional first-order low-pass (exact for a residual held
between samples; :math:`\tau = 0`: no filter), relative residual:

.. math::

    r_k &= y^{meas}_k - y^{model}(t_k), \qquad
    \bar r_k = \bar r_{k-1} + (1 - e^{-(t_k - t_{k-1})/\tau})(r_k - \bar r_{k-1}),
    \quad \bar r_0 = r_0 \\
    \rho_k &= |\bar r_k| \,/\, \max(|s_k|, s_{min})

with the scale :math:`s_k` a constant, a machine signal (the reel: the nip-load reference)
or by default the model output.  Threshold rule (absolute and/or relative; with both the
larger bound counts, so the absolute one is a floor where the scale is small):

.. math::

    e_k = \big(|\bar r_k| > a\big) \wedge \big(\rho_k > \rho_{max}\big), \qquad
    \text{flag}_k \iff e_j \ \forall j \text{ with } t_j \in [t_k - T_p, t_k]
    \text{ and } t_k - t_{on} \ge T_p

(:math:`t_{on}` the first sample of the current run of :math:`e`, the *onset*; a missing
bound is true).  CUSUM (optional; Page's two-sided test on the filtered residual, weighted
by the sample spacing so the threshold does not depend on the sample rate):

.. math::

    g^\pm_k = \max\big(0,\ g^\pm_{k-1} + (\pm\bar r_k - \nu)(t_k - t_{k-1})\big), \qquad
    \text{alarm} \iff \max(g^+_k, g^-_k) > h

(:math:`\nu` the drift in the signal's unit, :math:`h` in unit x s; its onset is the last
sample where the alarming sum was 0).  A fault *event* opens when the flag rises (onset,
detection time, the detector) and closes when it falls (``latch=True``: never), with the
peak residual in between.

Feeding modes
-------------
* **recorded** (:meth:`ShadowModel.replay`): a :class:`Recording` (arrays, a cosim CSV or
  HDF5 results file, :class:`~cosim.observers.Results` or a pandas DataFrame) drives the
  model in one offline run, as fast as possible: each model input is a :class:`HeldSignal`
  (zero-order hold of the recorded samples, switching at the start of an integration
  interval; the instants where a value changes are breakpoints, so a variable-step solver
  restarts only there), and the residual is formed at every recording time in the range.
  The simulator must reach the recording times: those off its ``dt`` grid are made
  breakpoints too.
* **streamed** (:meth:`ShadowModel.stream`): :meth:`ShadowStream.step` ``(t, inputs,
  measured)`` per frame, from a live loop (the real-time runner's ``on_frame``, a CAN or DAQ
  callback): it advances the model from the previous frame to ``t`` with the previous
  inputs held, then forms the residuals at ``t`` with the new inputs.  On the same data and
  a fixed-step solver it gives the recorded mode's residuals (tested to 1e-12); a
  variable-step solver is restarted every frame.
* **in a diagram** (:class:`ShadowMonitor`): a sampled block with typed input ports for
  measured and simulated signals, for a diagram that holds the model and the bridge blocks
  of the machine's I/O, paced by :class:`~hil.runner.RealTimeRunner`.  Same rule
  (:func:`advance_rule`), state in the context (rollback works); its outputs at a sample hit
  already include that sample (no one-sample delay).  Fault events are not listed by the
  block: record its ``flag_*`` outputs.

Block :class:`ShadowMonitor`, ports (one group per rule, ``<s>`` the rule's name)
-----------------------------------------------------------------------------------------
==========  ============  ===========  ====================================================
direction   name          unit         meaning
==========  ============  ===========  ====================================================
in          meas_<s>      rule unit    machine measurement
in          model_<s>     rule unit    model output
in          scale_<s>     rule unit    scale s_k (only if the rule's scale is a signal)
out         residual_<s>  rule unit    filtered residual r̄_k; reads its inputs
out         relative_<s>  1            rho_k; reads its inputs
out         flag_<s>      1            0/1 fault flag; reads its inputs
out         any_fault     1            1 if any flag is set; reads every input
==========  ============  ===========  ====================================================

Errors: an unknown signal or port name lists the valid ones (:class:`~cosim.errors.PortError`);
incompatible units are refused (:class:`~cosim.errors.UnitError`); a non-finite machine value,
unsorted times or a recording that does not cover the requested range raise
:class:`ShadowDataError` with the signal and time.

Limitations
-----------
* No online parameter estimation: the seed's second idea ("using parameter estimation, the
  simulation model can be updated so that the simulation model functions like an existing
  system") is not built; the model runs with fixed parameters and its own initial state
  (``setup(ctx)`` sets it).  A model that drifts from a healthy machine gives residuals.
* Scalar signals only; zero-order hold only (no interpolation of the control signals).
  Every change of a recorded control signal is a breakpoint: a signal that changes at
  every sample restarts a variable-step solver at every sample (prefer a fixed-step one).
* Measurement delays and clock offsets between machine and model are not estimated: the
  recording's time stamps are taken as the model's time (rounded to 1 ns).
* The report keeps every sample in memory too (for its arrays); a very long live run
  should be cut into sessions.
* Events of a non-latched rule that chatters at the threshold are reported one by one (no
  release hysteresis).
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from cosim.block import Block
from cosim.diagram import Diagram, DiagramBuilder
from cosim.errors import ParameterError, PortError, UnitError
from cosim.manipulators import Manipulator
from cosim.observers import Observer, Results, provenance
from cosim.ports import OutputPort
from cosim.simulator import Simulator
from cosim.units import compatible, conversion

from .errors import HILError

__all__ = ["FaultEvent", "HeldSignal", "Recording", "Residual", "ShadowDataError",
           "ShadowModel", "ShadowMonitor", "ShadowReport", "ShadowStream", "advance_rule"]

_NS = 1.0 / 1_000_000_000
_EPS = 0.5e-9                           # half a tick: time comparisons
_COLUMN = re.compile(r"^(?P<name>.+?)(?: \[(?P<unit>[^\]]*)\])?$")


class ShadowDataError(HILError, ValueError):
    """The machine data cannot drive the shadow: non-finite values, unsorted times, or a
    recording that does not cover the requested range."""


def _did_you_mean(name: str, options: Any) -> str:
    import difflib
    opts = list(options)
    close = difflib.get_close_matches(name, opts, n=1)
    return (f"available: {', '.join(opts[:30]) or '(none)'}"
            + (f"{' ...' if len(opts) > 30 else ''}. Did you mean {close[0]!r}?" if close
               else ""))


# ------------------------------------------------------------------ the residual rule
@dataclass(frozen=True)
class Residual:
    """How one measured signal is compared with a model output (module docstring).

    Parameters
    ----------
    model : str
        Model output: an exported output name of the diagram or a port path
        (``'sub/block.port'``).
    abs_threshold : float, optional
        :math:`a` [model unit].
    rel_threshold : float, optional
        :math:`\\rho_{max}` (0.05 = the seed's 5 %).
    scale : float or str, optional
        :math:`s_k`: a constant, the name of a machine signal (input or measured), or
        ``None``: the model output.
    min_scale : float
        :math:`s_{min}` > 0, guards the division.
    persistence_s : float
        :math:`T_p` >= 0 (debounce).
    filter_tau_s : float
        :math:`\\tau` >= 0 of the residual's low-pass (0: none).
    cusum_drift, cusum_threshold : float, optional
        :math:`\\nu` [unit] and :math:`h` [unit s]; both or neither.
    latch : bool
        Keep the flag once raised.

    A rule without any threshold only records its residual (never flags).
    """

    model: str
    abs_threshold: float | None = None
    rel_threshold: float | None = None
    scale: float | str | None = None
    min_scale: float = 1e-12
    persistence_s: float = 0.0
    filter_tau_s: float = 0.0
    cusum_drift: float | None = None
    cusum_threshold: float | None = None
    latch: bool = False

    def __post_init__(self) -> None:
        own = f"Residual({self.model!r})"
        for name in ("abs_threshold", "rel_threshold", "cusum_drift", "cusum_threshold"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v)
                                      and v >= 0):
                raise ParameterError(f"{own}: {name} must be finite and >= 0, got {v!r}")
        for name in ("persistence_s", "filter_tau_s"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ParameterError(f"{own}: {name} must be finite and >= 0, got {v!r}")
        if not (self.min_scale > 0 and math.isfinite(self.min_scale)):
            raise ParameterError(f"{own}: min_scale must be finite and > 0")
        if (self.cusum_drift is None) != (self.cusum_threshold is None):
            raise ParameterError(f"{own}: give both cusum_drift and cusum_threshold, or neither")
        if isinstance(self.scale, (int, float)) and not (math.isfinite(self.scale)
                                                        and self.scale != 0):
            raise ParameterError(f"{own}: a constant scale must be finite and non-zero")

    @property
    def detects(self) -> bool:
        return (self.abs_threshold is not None or self.rel_threshold is not None
                or self.cusum_threshold is not None)


class RuleState(NamedTuple):
    """Per-signal detector state (a context's discrete state in :class:`ShadowMonitor`)."""

    t: float = math.nan             # time of the last sample
    rf: float = 0.0                 # filtered residual
    since: float = math.nan         # onset of the current exceedance run
    g_pos: float = 0.0
    g_neg: float = 0.0
    zero_pos: float = math.nan      # last time g+ was 0
    zero_neg: float = math.nan
    flag: bool = False
    onset: float = math.nan         # onset of the raised flag
    detector: str = ""


def advance_rule(rule: Residual, st: RuleState, t: float, r: float,
                 scale: float) -> tuple[RuleState, float]:
    """One sample of the rule (pure): ``(new state, rho)``; equations in the module doc."""
    first = math.isnan(st.t)
    dt = 0.0 if first else t - st.t
    if first or rule.filter_tau_s == 0.0:
        rf = r
    else:
        rf = st.rf + (1.0 - math.exp(-dt / rule.filter_tau_s)) * (r - st.rf)
    rho = abs(rf) / max(abs(scale), rule.min_scale)
    exceed = (rule.abs_threshold is not None or rule.rel_threshold is not None) \
        and (rule.abs_threshold is None or abs(rf) > rule.abs_threshold) \
        and (rule.rel_threshold is None or rho > rule.rel_threshold)
    since = (st.since if not math.isnan(st.since) else t) if exceed else math.nan
    thr_flag = exceed and t - since >= rule.persistence_s - _EPS
    g_pos, g_neg, z_pos, z_neg = st.g_pos, st.g_neg, st.zero_pos, st.zero_neg
    cus_flag = False
    if rule.cusum_threshold is not None:
        nu = rule.cusum_drift
        g_pos = max(0.0, g_pos + (rf - nu) * dt)
        g_neg = max(0.0, g_neg + (-rf - nu) * dt)
        if g_pos == 0.0 or first:
            z_pos = t
        if g_neg == 0.0 or first:
            z_neg = t
        cus_flag = max(g_pos, g_neg) > rule.cusum_threshold
    flag, onset, detector = st.flag, st.onset, st.detector
    if thr_flag or cus_flag:
        if not flag:
            if thr_flag and (not cus_flag or since <= (z_pos if g_pos >= g_neg else z_neg)):
                onset, detector = since, "threshold"
            else:
                onset, detector = (z_pos if g_pos >= g_neg else z_neg), "cusum"
        flag = True
    elif not rule.latch:
        flag, onset, detector = False, math.nan, ""
    return RuleState(t, rf, since, g_pos, g_neg, z_pos, z_neg, flag, onset, detector), rho


# -------------------------------------------------------------------- the recording
class Recording:
    """Machine data: sample times [s] (strictly increasing) and named scalar signals.

    Build it with :meth:`load` from a cosim CSV/HDF5 results file, a
    :class:`~cosim.observers.Results`, a pandas DataFrame (index or column ``time [s]`` /
    ``time``; columns ``name [unit]``) or ``(t, {name: array}, {name: unit})``.
    """

    def __init__(self, t: Any, signals: dict, units: dict | None = None,
                 source: str = "arrays") -> None:
        self.t = np.asarray(t, dtype=float).reshape(-1)
        self.signals = {k: np.asarray(v, dtype=float) for k, v in signals.items()}
        self.units = {k: (units or {}).get(k) or "" for k in self.signals}
        self.source = source
        for k, v in self.signals.items():
            if v.shape != self.t.shape:
                raise ShadowDataError(f"recording {source}: signal {k!r} has shape {v.shape}, "
                                      f"the time vector {self.t.shape} (scalar signals only)")
        bad = np.flatnonzero(~np.isfinite(self.t))
        if bad.size:
            raise ShadowDataError(f"recording {source}: time sample {bad[0]} is {self.t[bad[0]]}")
        back = np.flatnonzero(np.diff(self.t) <= 0)
        if back.size:
            i = int(back[0])
            raise ShadowDataError(f"recording {source}: times not strictly increasing at sample "
                                  f"{i + 1} (t = {self.t[i]!r} s, then {self.t[i + 1]!r} s); "
                                  "sort the data or drop duplicate samples")

    @classmethod
    def load(cls, data: Any) -> Recording:
        """A Recording from a file path, Results, DataFrame, Recording or (t, signals[, units])."""
        if isinstance(data, Recording):
            return data
        if isinstance(data, (str, Path)):
            from cosim.writers import read_csv, read_hdf5
            p = Path(data)
            res = read_hdf5(p) if p.suffix in (".h5", ".hdf5") else read_csv(p)
            return cls(res.time, res.signals, res.units, source=f"'{p}'")
        if isinstance(data, Results):
            return cls(data.time, data.signals, data.units, source="results")
        if isinstance(data, tuple) and len(data) in (2, 3):
            return cls(*data)
        if hasattr(data, "columns") and hasattr(data, "index"):
            return cls._from_frame(data)
        raise ShadowDataError(f"cannot read a recording from {type(data).__name__}; give a "
                              "CSV/HDF5 path, Results, a pandas DataFrame or (t, signals)")

    @classmethod
    def _from_frame(cls, df: Any) -> Recording:
        cols = [str(c) for c in df.columns]
        tcol = next((c for c in df.columns if str(c) in ("time [s]", "time", "t")), None)
        if tcol is not None:
            t = df[tcol].to_numpy(dtype=float)
        else:
            t = np.asarray(df.index, dtype=float)
        signals, units = {}, {}
        for c, name in zip(df.columns, cols):
            if c is tcol:
                continue
            m = _COLUMN.match(name)
            signals[m["name"]] = df[c].to_numpy(dtype=float)
            units[m["name"]] = m["unit"] or ""
        return cls(t, signals, units, source="DataFrame")

    def column(self, name: str, role: str) -> np.ndarray:
        try:
            return self.signals[name]
        except KeyError:
            raise PortError(f"recording {self.source}: no {role} signal {name!r}; "
                            + _did_you_mean(name, self.signals)) from None


# --------------------------------------------------------------- the held input block
class HeldSignal(Block):
    """A model input fed from machine samples, held constant between them (ZOH).

    .. math:: y(t) = u_k, \\qquad t_k \\le t_{mode} < t_{k+1}

    The samples ``(ticks, values)`` are the discrete state ``table`` (set per run);
    :math:`t_{mode}` is the start of the current integration interval, so a step that ends
    at a sample instant still sees the previous value.  Before the first sample: the first.

    Ports
    -----
    out  y   scalar [unit]; no inputs
    """

    def __init__(self, name: str, unit: str | None = None) -> None:
        super().__init__(name)
        self.table = self.declare_discrete_state("table", (np.zeros(1), np.zeros(1)))
        self.y = self.declare_output("y", self._calc, unit=unit, depends_on=())

    def _calc(self, ctx: Any) -> float:
        times, values = ctx.discrete(self.table)
        i = int(np.searchsorted(times, ctx.mode_time + _EPS, "right")) - 1
        return float(values[i if i > 0 else 0])


class _Breakpoints(Manipulator):
    """Make the integrator stop at the given ticks (input changes, off-grid samples)."""

    def __init__(self, ticks: Any) -> None:
        self._bp = frozenset(int(k) for k in ticks)

    def breakpoints(self) -> frozenset:
        return self._bp

    def at_time(self, sim: Any, ticks: int) -> None:
        pass


# ------------------------------------------------------------------- report, events
@dataclass
class FaultEvent:
    """One raised flag: signal, onset, detection, end (nan while open), peak residual."""

    signal: str
    detector: str
    onset_s: float
    detection_s: float
    end_s: float = math.nan
    peak_residual: float = 0.0
    peak_time_s: float = math.nan

    @property
    def delay_s(self) -> float:
        return self.detection_s - self.onset_s


@dataclass
class ShadowReport:
    """Per-sample residual record, fault events and a summary of one shadow run."""

    time: np.ndarray
    signals: dict[str, dict[str, np.ndarray]]   # rule name -> quantity -> array
    units: dict[str, str]
    events: list[FaultEvent]
    file: str | None = None
    status: str = "complete"
    diagnostics: dict = field(default_factory=dict)

    def __getitem__(self, key: str) -> np.ndarray:
        """``report['nip_A.residual']``: one column of the record."""
        name, _, what = key.rpartition(".")
        try:
            return self.signals[name][what]
        except KeyError:
            keys = [f"{n}.{q}" for n, d in self.signals.items() for q in d]
            raise PortError(f"shadow report: no column {key!r}; "
                            + _did_you_mean(key, keys)) from None

    def detection(self, signal: str) -> float:
        """Detection time of the first event on ``signal`` (nan if none)."""
        for e in self.events:
            if e.signal == signal:
                return e.detection_s
        if signal not in self.signals:
            raise PortError(f"shadow report: no signal {signal!r}; "
                            + _did_you_mean(signal, self.signals))
        return math.nan

    def first_event(self) -> FaultEvent | None:
        return min(self.events, key=lambda e: e.detection_s, default=None)

    def summary(self) -> str:
        n = self.time.size
        span = f"{self.time[0]:.6g}..{self.time[-1]:.6g} s" if n else "no samples"
        lines = [f"shadow run: {n} samples, {span}, {len(self.events)} fault event(s)"
                 + (f", status {self.status}" if self.status != "complete" else "")]
        for name, d in self.signals.items():
            u = f" {self.units[name]}" if self.units[name] else ""
            r = d["residual"]
            lines.append(f"  {name}: max |r| {np.max(np.abs(r)) if n else math.nan:.4g}{u}, "
                         f"rms {math.sqrt(np.mean(r * r)) if n else math.nan:.4g}{u}")
            for e in (e for e in self.events if e.signal == name):
                end = "open" if math.isnan(e.end_s) else f"ended {e.end_s:.6g} s"
                lines.append(f"    fault ({e.detector}): onset {e.onset_s:.6g} s, detected "
                             f"{e.detection_s:.6g} s, peak {e.peak_residual:.4g}{u} at "
                             f"{e.peak_time_s:.6g} s, {end}")
        return "\n".join(lines)


class _Column(NamedTuple):
    path: str
    unit_text: str
    shape: tuple = ()
    size: int = 1


_QUANTITIES = ("measured", "model", "residual", "relative", "cusum", "flag")


class _Tracker:
    """Shared per-sample core of the recorded and streamed modes: rules, events, record."""

    def __init__(self, shadow: ShadowModel, out: Any, prov: dict) -> None:
        self.shadow = shadow
        self.names = list(shadow.rules)
        self.state = {n: RuleState() for n in self.names}
        self.times: list[float] = []
        self.rows: dict[str, list[tuple]] = {n: [] for n in self.names}
        self.events: list[FaultEvent] = []
        self.open: dict[str, FaultEvent] = {}
        self.writer = None
        self.file = None
        if out is not None:
            from cosim.writers import CsvWriter, Hdf5Writer
            p = Path(out)
            cls = Hdf5Writer if p.suffix in (".h5", ".hdf5") else CsvWriter
            cols = []
            for n in self.names:
                u = shadow.units[n]
                cols += [_Column(f"{n}.{q}", "1" if q in ("relative", "flag") else
                                 (f"{u}*s" if u and q == "cusum" else u)) for q in _QUANTITIES]
            self.writer = cls(p)
            self.writer.start_rows(cols, prov)
            self.file = str(p)

    def sample(self, t: float, meas: dict, model: dict, scale: dict) -> dict:
        row: list[float] = []
        flags = {}
        self.times.append(t)
        for n in self.names:
            ym, yh = meas[n], model[n]
            was = self.state[n].flag
            st, rho = advance_rule(self.shadow.rules[n], self.state[n], t, ym - yh, scale[n])
            self.state[n] = st
            vals = (ym, yh, st.rf, rho, max(st.g_pos, st.g_neg), 1.0 if st.flag else 0.0)
            self.rows[n].append(vals)
            row.extend(vals)
            flags[n] = st.flag
            ev = self.open.get(n)
            if st.flag and not was:
                ev = FaultEvent(n, st.detector, st.onset, t)
                i = bisect.bisect_left(self.times, st.onset - _EPS)
                for j in range(i, len(self.times)):  # the peak since the onset
                    r = self.rows[n][j][2]
                    if j == i or abs(r) > abs(ev.peak_residual):
                        ev.peak_residual, ev.peak_time_s = r, self.times[j]
                self.events.append(ev)
                self.open[n] = ev
            elif ev is not None and not st.flag:
                ev.end_s = t
                del self.open[n]
            elif ev is not None and abs(st.rf) > abs(ev.peak_residual):
                ev.peak_residual, ev.peak_time_s = st.rf, t
        if self.writer is not None:
            self.writer.write_row(t, row)
        return flags

    def finish(self, error: BaseException | None, diagnostics: dict) -> ShadowReport:
        if self.writer is not None:
            self.writer.on_finish(None, error)
        t = np.asarray(self.times, dtype=float)
        sig = {}
        for n in self.names:
            a = np.asarray(self.rows[n], dtype=float).reshape(-1, len(_QUANTITIES))
            sig[n] = {q: a[:, j] for j, q in enumerate(_QUANTITIES)}
        status = "complete" if error is None else f"error: {type(error).__name__}: {error}"
        return ShadowReport(t, sig, dict(self.shadow.units), self.events, self.file, status,
                            diagnostics)


# --------------------------------------------------------------------- the shadow model
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
        self.model = diagram
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
        """Run the model over a machine recording as fast as possible (module docstring).

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


# ---------------------------------------------------------------------- block form
class ShadowMonitor(Block):
    """Residual rules as a sampled block (ports: the module docstring's table).

    Parameters
    ----------
    name : str
    rules : dict
        Signal name -> :class:`Residual` (``model`` is informative here: the block reads
        the model value from its port ``model_<name>``).
    period_s : float
        Sample period of the rule.
    units : dict, optional
        Signal name -> unit of its ports.
    """

    def __init__(self, name: str, rules: dict, period_s: float,
                 units: dict | None = None) -> None:
        super().__init__(name)
        if not rules:
            raise ParameterError(f"ShadowMonitor '{name}': give at least one rule")
        self.rules = dict(rules)
        self.ports: dict[str, tuple] = {}
        self.states = {}
        units = units or {}
        for n, rule in self.rules.items():
            if not isinstance(rule, Residual):
                raise ParameterError(f"ShadowMonitor '{name}': rule {n!r} must be a Residual")
            if rule.scale is not None and not isinstance(rule.scale, (int, float, str)):
                raise ParameterError(f"ShadowMonitor '{name}': bad scale for {n!r}")
            u = units.get(n)
            meas = self.declare_input(f"meas_{n}", unit=u)
            model = self.declare_input(f"model_{n}", unit=u)
            scale = self.declare_input(f"scale_{n}", unit=u) \
                if isinstance(rule.scale, str) else None
            self.ports[n] = (meas, model, scale)
            self.states[n] = self.declare_discrete_state(f"rule_{n}", RuleState())
            deps = tuple(p for p in (meas, model, scale) if p is not None)
            self.declare_outputs(
                [(f"residual_{n}", u), (f"relative_{n}", "1"), (f"flag_{n}", "1")],
                lambda ctx, n=n: self._outputs(ctx, n), depends_on=deps)
        self.any_fault = self.declare_output(
            "any_fault", lambda ctx: float(any(self._step(ctx, n)[0].flag for n in self.rules)),
            unit="1")
        self.declare_periodic_update(period_s, self._update)

    def _step(self, ctx: Any, n: str) -> tuple[RuleState, float]:
        rule = self.rules[n]
        meas, model, scale = self.ports[n]
        ym, yh = ctx.input(meas), ctx.input(model)
        s = ctx.input(scale) if scale is not None else (
            yh if rule.scale is None else float(rule.scale))
        return advance_rule(rule, ctx.discrete(self.states[n]), ctx.time, ym - yh, s)

    def _outputs(self, ctx: Any, n: str) -> tuple[float, float, float]:
        st, rho = self._step(ctx, n)
        return st.rf, rho, 1.0 if st.flag else 0.0

    def _update(self, ctx: Any) -> None:
        for n in self.rules:
            ctx.set_discrete(self.states[n], self._step(ctx, n)[0])
