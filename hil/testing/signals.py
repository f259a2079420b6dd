"""Traces: sampled signals on one time base, with units, the data every test step reads.

A :class:`Trace` is a strictly increasing time vector ``t`` (seconds) and named signals,
each a 1-D float array of the same length, each with a unit (``""``: none declared) and
an optional comment.  It is built from a :class:`cosim.observers.Results` (an array
signal becomes one column per element, ``path[j]``, as :meth:`Results.to_pandas`), from a
dict of arrays, or sample by sample in a running frame loop (:class:`Recorder`).

Semantics (the checks, stimuli and captures all use them):

* **sample-based**: a signal is known at its samples only; nothing is interpolated;
* **hold last**: the value at a time ``t`` between samples is the last sample at or
  before ``t`` (zero-order hold): ``at(t) = x[i]`` with ``i`` the largest index with
  ``t[i] <= t``.  Before the first sample and after the last one a trace knows nothing:
  :meth:`Trace.at` raises there;
* times closer than :data:`TIME_EPS` (1 ns) count as equal (``0.1 * 3`` is sample
  ``0.3``), in :meth:`Trace.at`, :meth:`Trace.slice` and every check's window.

Limitations: one time base per trace (signals sampled at other instants must be resampled
by the caller first); values are float64 (integers above 2**53 lose digits; complex
signals are refused).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .errors import TraceError

#: times closer than this (seconds) count as the same instant
TIME_EPS = 1e-9


def fmt_time(t: float) -> str:
    """``12.34`` -> ``"12.340"``: at least three decimals, more when the time needs them
    (up to nine: nanoseconds)."""
    for d in range(3, 10):
        s = f"{t:.{d}f}"
        if abs(float(s) - t) <= 1e-12 * max(1.0, abs(t)):
            return s
    return f"{t:.9f}"


def fmt_value(x: float) -> str:
    return f"{x:.6g}"


class Trace:
    """Named signals on one strictly increasing time base ``t`` (s), with units.

    ``Trace(t, {"gap": gap, "v": v}, units={"gap": "m", "v": "m/s"})``.  ``trace["gap"]``
    is the array, ``trace.unit("gap")`` its unit, ``trace.at(2.0)`` the held values.
    """

    def __init__(self, t: Any, signals: Mapping[str, Any], units: Mapping[str, str] | None = None,
                 comments: Mapping[str, str] | None = None, meta: Mapping | None = None) -> None:
        t = np.asarray(t, dtype=float)
        if t.ndim != 1:
            raise TraceError(f"trace: the times must be a 1-D array, got shape {t.shape}")
        if not np.all(np.isfinite(t)):
            i = int(np.flatnonzero(~np.isfinite(t))[0])
            raise TraceError(f"trace: time sample {i} is {t[i]}: times must be finite")
        if len(t) > 1 and not np.all(np.diff(t) > 0):
            i = int(np.flatnonzero(np.diff(t) <= 0)[0])
            raise TraceError(f"trace: times must be strictly increasing; t[{i}] = {float(t[i])!r} "
                             f"and t[{i + 1}] = {float(t[i + 1])!r}")
        sigs = {}
        for name, v in signals.items():
            if not isinstance(name, str) or not name:
                raise TraceError(f"trace: signal names must be non-empty strings, got {name!r}")
            a = np.asarray(v)
            if a.dtype.kind == "c":
                raise TraceError(f"trace: signal {name!r} is complex; a trace holds real "
                                 f"signals: pass its real and imaginary parts as two")
            try:
                a = a.astype(float, copy=False)
            except (TypeError, ValueError):
                raise TraceError(f"trace: signal {name!r} is not numeric ({a.dtype}); a "
                                 f"trace holds numbers: leave it out (names=...)") from None
            if a.shape != t.shape:
                raise TraceError(f"trace: signal {name!r} has shape {a.shape}, the times "
                                 f"{t.shape}: one value per time sample")
            sigs[name] = a
        units = dict(units or {})
        for extra in (set(units) | set(comments or {})) - set(sigs):
            raise TraceError(f"trace: a unit or comment is given for {extra!r}, which is not "
                             f"a signal; signals: {', '.join(sigs) or 'none'}")
        self._init(t, sigs, {k: str(units.get(k) or "") for k in sigs},
                   dict(comments or {}), dict(meta or {}))

    def _init(self, t, sigs, units, comments, meta) -> None:
        self.t, self.signals, self.units, self.comments, self.meta = t, sigs, units, comments, meta

    @classmethod
    def _trusted(cls, t, sigs, units, comments=None, meta=None) -> Trace:
        """A trace from arrays already checked (slices of a checked trace, a recorder)."""
        tr = cls.__new__(cls)
        Trace._init(tr, t, sigs, dict(units), dict(comments or {}), dict(meta or {}))
        return tr

    @classmethod
    def from_results(cls, res: Any, names: Iterable[str] | None = None) -> Trace:
        """From a :class:`cosim.observers.Results` (``res.time``, ``res.signals``,
        ``res.units``): every recorded signal, or those in ``names``.  An array signal
        gives one column per element, named as :func:`cosim.observers.column_names`."""
        from cosim.observers import column_names
        time = getattr(res, "time", None)
        if time is None:
            time = getattr(res, "t", None)
        if time is None or not hasattr(res, "signals"):
            raise TraceError(f"Trace.from_results: {type(res).__name__} has no 'time' and "
                             f"'signals'; pass a cosim Results or build Trace(t, signals)")
        keys = list(res.signals) if names is None else list(names)
        sigs, units = {}, {}
        for k in keys:
            v = np.asarray(res[k])
            for j, col in enumerate(column_names(k, v.shape[1:])):
                sigs[col] = v.reshape(len(v), -1)[:, j] if v.ndim > 1 else v
                units[col] = (getattr(res, "units", {}) or {}).get(k) or ""
        return cls(time, sigs, units)

    # -- reading ---------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return list(self.signals)

    def unit(self, name: str) -> str:
        self[name]
        return self.units[name]

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self.signals[name]
        except KeyError:
            import difflib
            close = difflib.get_close_matches(name, list(self.signals), n=1)
            raise TraceError(f"trace: no signal {name!r}; signals: "
                             f"{', '.join(list(self.signals)[:20]) or 'none'}"
                             + (f". Did you mean {close[0]!r}?" if close else "")) from None

    def __contains__(self, name: str) -> bool:
        return name in self.signals

    def __len__(self) -> int:
        return len(self.t)

    @property
    def start(self) -> float:
        self._need_samples("start")
        return float(self.t[0])

    @property
    def end(self) -> float:
        self._need_samples("end")
        return float(self.t[-1])

    def _need_samples(self, what: str) -> None:
        if not len(self.t):
            raise TraceError(f"trace.{what}: the trace is empty (no samples)")

    def index_at(self, t: float) -> int:
        """The sample that holds at ``t``: the largest ``i`` with ``t[i] <= t`` (1 ns
        tolerance); raises before the first sample and after the last."""
        self._need_samples("at")
        t = float(t)
        if not np.isfinite(t):
            raise TraceError(f"trace.at: time {t} is not finite")
        if t < self.t[0] - TIME_EPS or t > self.t[-1] + TIME_EPS:
            raise TraceError(f"trace.at: t = {fmt_time(t)} s is outside the trace "
                             f"[{fmt_time(self.t[0])}, {fmt_time(self.t[-1])}] s; a trace "
                             f"knows nothing before its first or after its last sample")
        return max(int(np.searchsorted(self.t, t + TIME_EPS, side="right")) - 1, 0)

    def at(self, t: float, name: str | None = None) -> Any:
        """The held value of ``name`` at ``t`` (hold last sample), or all values as a
        dict when ``name`` is None."""
        i = self.index_at(t)
        if name is not None:
            return float(self[name][i])
        return {k: float(v[i]) for k, v in self.signals.items()}

    def span(self, t0: float | None = None, t1: float | None = None) -> tuple[int, int]:
        """``(i0, i1)``: the samples with ``t0 <= t[i] <= t1`` (1 ns tolerance) are
        ``i0 .. i1 - 1``; None is an open end."""
        i0 = 0 if t0 is None else int(np.searchsorted(self.t, t0 - TIME_EPS, side="left"))
        i1 = len(self.t) if t1 is None else int(np.searchsorted(self.t, t1 + TIME_EPS,
                                                                 side="right"))
        return i0, max(i0, i1)

    def rows(self, i0: int, i1: int, names: Iterable[str] | None = None) -> Trace:
        names = list(self.signals) if names is None else list(names)
        return Trace._trusted(self.t[i0:i1], {k: self[k][i0:i1] for k in names},
                              {k: self.units[k] for k in names},
                              {k: v for k, v in self.comments.items() if k in names}, self.meta)

    def slice(self, t0: float | None = None, t1: float | None = None) -> Trace:
        """The samples with ``t0 <= t <= t1`` (views, not copies)."""
        return self.rows(*self.span(t0, t1))

    def select(self, names: Iterable[str]) -> Trace:
        names = list(names)
        for k in names:
            self[k]
        return self.rows(0, len(self.t), names)

    def window(self, t: float, before: float, after: float,
               names: Iterable[str] | None = None) -> Window:
        """The samples in ``[t - before, t + after]`` as a :class:`Window`: a table with
        units whose text marks the sample holding at ``t``."""
        if before < 0 or after < 0:
            raise TraceError(f"trace.window: before and after must be >= 0, got {before}, "
                             f"{after}")
        part = self.rows(*self.span(t - before, t + after), names)
        return Window(part, mark=t)

    def to_pandas(self) -> Any:
        """A DataFrame indexed by ``t``; units in ``df.attrs["units"]``."""
        import pandas as pd
        df = pd.DataFrame(dict(self.signals), index=pd.Index(self.t, name="t"))
        df.attrs["units"] = {"t": "s", **self.units}
        return df

    def __repr__(self) -> str:
        span = (f"t = {fmt_time(self.t[0])} .. {fmt_time(self.t[-1])} s" if len(self.t)
                else "no samples")
        return f"<Trace {len(self.t)} samples, {span}, {len(self.signals)} signals>"


class Window(Trace):
    """A piece of a trace around an instant ``mark``, shown as a text table (``str()``)
    with units; the row holding at ``mark`` is marked ``>``."""

    def __init__(self, trace: Trace, mark: float) -> None:
        self._init(trace.t, trace.signals, trace.units, trace.comments, trace.meta)
        self.mark = float(mark)

    def to_text(self, max_rows: int = 40) -> str:
        head = ["t [s]"] + [f"{k} [{u}]" if (u := self.units[k]) else k for k in self.signals]
        hold = int(np.searchsorted(self.t, self.mark + TIME_EPS, side="right")) - 1
        rows = []
        for i in range(len(self.t)):
            rows.append([">" if i == hold else "", fmt_time(self.t[i])]
                        + [fmt_value(v[i]) for v in self.signals.values()])
        if len(rows) > max_rows:
            keep = max_rows // 2
            rows = rows[:keep] + [["", "..."] + ["" for _ in self.signals]] + rows[-keep:]
        widths = [max([len(h)] + [len(r[j + 1]) for r in rows]) for j, h in enumerate(head)]
        lines = ["  " + "  ".join(h.rjust(w) for h, w in zip(head, widths))]
        for r in rows:
            lines.append(f"{r[0]:<2}" + "  ".join(c.rjust(w) for c, w in zip(r[1:], widths)))
        if not rows:
            lines.append("  (no samples)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


class Recorder:
    """Builds a trace sample by sample in a frame loop: ``rec.append(t, {"gap": 21.0})``;
    ``rec.trace()`` is the trace so far (views of the recorder's arrays: copy it to keep
    it across later appends).  Times must increase strictly; every sample carries the
    same names (those of the first, or ``names``)."""

    def __init__(self, names: Iterable[str] | None = None,
                 units: Mapping[str, str] | None = None, capacity: int = 1024) -> None:
        self._names = None if names is None else list(names)
        self._units = dict(units or {})
        self._cap = max(int(capacity), 1)
        self._n = 0
        self._t = np.empty(self._cap)
        self._cols: dict[str, np.ndarray] = {}
        if self._names is not None:
            self._alloc()

    def _alloc(self) -> None:
        self._cols = {k: np.empty(self._cap) for k in self._names}

    def append(self, t: float, values: Mapping[str, float]) -> None:
        t = float(t)
        if self._names is None:
            self._names = list(values)
            self._alloc()
        if not np.isfinite(t) or (self._n and t <= self._t[self._n - 1]):
            raise TraceError(f"recorder: sample time {t!r} must be finite and after the "
                             f"last one ({self._t[self._n - 1] if self._n else None!r})")
        if self._n == self._cap:
            self._cap *= 2
            self._t = np.resize(self._t, self._cap)
            self._cols = {k: np.resize(v, self._cap) for k, v in self._cols.items()}
        for k in self._names:
            try:
                self._cols[k][self._n] = values[k]
            except KeyError:
                raise TraceError(f"recorder: the sample at t = {fmt_time(t)} s has no "
                                 f"{k!r}; every sample needs: {', '.join(self._names)}") from None
        self._t[self._n] = t
        self._n += 1

    def __len__(self) -> int:
        return self._n

    def trace(self) -> Trace:
        n = self._n
        names = self._names or []
        return Trace._trusted(self._t[:n], {k: self._cols[k][:n] for k in names},
                              {k: str(self._units.get(k) or "") for k in names})


def as_trace(x: Any) -> Trace:
    """A :class:`Trace` from a trace or a :class:`cosim.observers.Results`."""
    if isinstance(x, Trace):
        return x
    if hasattr(x, "signals") and (hasattr(x, "time") or hasattr(x, "t")):
        return Trace.from_results(x)
    raise TypeError(f"expected a Trace or cosim Results, got {type(x).__name__}; build one "
                    f"with Trace(t, {{name: array}}, units)")
