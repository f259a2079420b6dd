"""The record of a shadow run: :class:`FaultEvent`, :class:`ShadowReport` and the per-sample
core shared by the recorded and streamed modes of :mod:`hil.shadow` (rules, events, the
residual file)."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from cosim.errors import PortError

from .errors import _did_you_mean
from .rules import _EPS, RuleState, advance_rule

if TYPE_CHECKING:
    from .model import ShadowModel

__all__ = ["FaultEvent", "ShadowReport"]


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
