"""Signal generators played frame by frame (ASAM XIL's signal generator).

Each generator is a pure function of time :meth:`Generator.value` ``(t)`` once its start
(and stop) time is known.  With ``tau = t - start``:

===========================================  ==============================================
generator                                    value for ``start <= t < stop``
===========================================  ==============================================
``Step(final, initial=0)``                   ``final``
``Ramp(slope, initial=0, limit=None)``       ``initial + slope * tau``, clipped at ``limit``
``Sine(amplitude, frequency, phase=0,        ``offset + amplitude * sin(2 pi frequency tau
offset=0)``                                  + phase)``
``Square(low, high, period, duty=0.5)``      ``high`` while ``tau mod period < duty *
                                             period``, else ``low``
``Pulse(high, width, low=0)``                ``high`` while ``tau < width``, else ``low``
``Table(times, values, interp="linear")``    piecewise linear in ``tau`` through the points
                                             (``"hold"``: the last point at or before
                                             ``tau``); the first value before the first
                                             point, the last one after the last
``Replay(trace, name, interp="hold")``       a trace's signal replayed from its first
                                             sample at ``tau = 0`` (a :class:`Table`;
                                             ``"hold"``: between samples the last sample
                                             holds, as everywhere in this package)
===========================================  ==============================================

Before ``start`` a generator gives its ``idle`` value (``initial``, ``offset``, ``low``,
the table's first value); from ``stop`` on (``t >= stop``) it holds the value it had at
``stop`` (``after_stop="hold"``) or goes back to idle (``"idle"``).  Times within 1 ns
are equal (``tau mod period`` and ``tau < width`` included).

``start``/``stop`` are a time (s), a condition (``sig("v") > 20``: a trigger) or None (the
test starts/stops it: :meth:`Player.start`).  A :class:`Player` plays several generators in
a frame loop: ``player.update(t, latest)`` evaluates each pending trigger on the latest
sample (a trace's last sample, or a dict of current values), starts (stops) the generator
at ``t`` when it holds, and returns ``{name: value(t)}``.

Limitations: a trigger is evaluated on one sample (no edge or duration conditions); the
value at the trigger frame already uses the started generator (tau = 0), so a trigger seen
in the frame's inputs acts in the same frame; generators are scalar.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .conditions import Cond, as_cond
from .errors import TraceError
from .signals import TIME_EPS, Trace, fmt_time


def _time_or_trigger(x: Any, what: str) -> float | Cond | None:
    if x is None or isinstance(x, Cond):
        return x
    if callable(x):
        return as_cond(x)
    v = float(x)
    if not math.isfinite(v):
        raise TraceError(f"stimulus: {what} must be a finite time, a condition or None, "
                         f"got {x!r}")
    return v


class Generator:
    """A signal generator: :meth:`shape` of the time since its start, ``idle`` before."""

    idle = 0.0

    def __init__(self, *, start: Any = 0.0, stop: Any = None, after_stop: str = "hold",
                 unit: str = "") -> None:
        if after_stop not in ("hold", "idle"):
            raise TraceError(f"stimulus: after_stop is 'hold' or 'idle', got {after_stop!r}")
        self.start = _time_or_trigger(start, "start")
        self.stop = _time_or_trigger(stop, "stop")
        self.after_stop, self.unit = after_stop, unit

    def shape(self, tau: float) -> float:
        raise NotImplementedError

    def value(self, t: float, start: float | None = None, stop: float | None = None) -> float:
        """The value at ``t`` (pure); ``start``/``stop`` override the generator's own (a
        trigger's or the test's times; ``math.inf``: not yet)."""
        s = self.start if start is None else start
        e = self.stop if stop is None else stop
        for x, what in ((s, "start"), (e, "stop")):
            if isinstance(x, Cond):
                raise TraceError(f"stimulus {self}: its {what} is a trigger ({x}); pass the "
                                 f"trigger's time ({what}=...) or play it with a Player")
        if s is None:
            raise TraceError(f"stimulus {self}: started by the test; pass start=... or play "
                             f"it with a Player")
        if t < s - TIME_EPS:
            return float(self.idle)
        if e is not None and t >= e - TIME_EPS:
            if self.after_stop == "idle":
                return float(self.idle)
            return float(self.shape(max(e - s, 0.0)))
        return float(self.shape(max(t - s, 0.0)))

    def values(self, t: Sequence[float], start: float | None = None,
               stop: float | None = None) -> np.ndarray:
        """:meth:`value` at each time of ``t``."""
        return np.array([self.value(x, start, stop) for x in np.asarray(t, float)])

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Step(Generator):
    def __init__(self, final: float, initial: float = 0.0, **kw: Any) -> None:
        super().__init__(**kw)
        self.final, self.idle = float(final), float(initial)

    def shape(self, tau):
        return self.final

    def __repr__(self):
        return f"Step({self.idle:g} -> {self.final:g})"


class Ramp(Generator):
    def __init__(self, slope: float, initial: float = 0.0, limit: float | None = None,
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.slope, self.idle, self.limit = float(slope), float(initial), limit

    def shape(self, tau):
        x = self.idle + self.slope * tau
        if self.limit is not None:
            x = min(x, self.limit) if self.slope >= 0 else max(x, self.limit)
        return x

    def __repr__(self):
        return f"Ramp({self.slope:g}/s from {self.idle:g})"


class Sine(Generator):
    def __init__(self, amplitude: float, frequency: float, phase: float = 0.0,
                 offset: float = 0.0, **kw: Any) -> None:
        super().__init__(**kw)
        self.amplitude, self.frequency = float(amplitude), float(frequency)
        self.phase, self.idle = float(phase), float(offset)

    def shape(self, tau):
        return self.idle + self.amplitude * math.sin(2 * math.pi * self.frequency * tau
                                                     + self.phase)

    def __repr__(self):
        return f"Sine({self.amplitude:g} at {self.frequency:g} Hz)"


class Square(Generator):
    def __init__(self, low: float, high: float, period: float, duty: float = 0.5,
                 **kw: Any) -> None:
        super().__init__(**kw)
        if not period > 0 or not 0 <= duty <= 1:
            raise TraceError(f"Square: period > 0 and 0 <= duty <= 1, got {period}, {duty}")
        self.idle, self.high, self.period, self.duty = float(low), float(high), \
            float(period), float(duty)

    def shape(self, tau):
        n = math.floor((tau + TIME_EPS) / self.period)
        phase = tau - n * self.period
        return self.high if phase < self.duty * self.period - TIME_EPS else self.idle

    def __repr__(self):
        return f"Square({self.idle:g}/{self.high:g}, {self.period:g} s)"


class Pulse(Generator):
    def __init__(self, high: float, width: float, low: float = 0.0, **kw: Any) -> None:
        super().__init__(**kw)
        self.high, self.width, self.idle = float(high), float(width), float(low)

    def shape(self, tau):
        return self.high if tau < self.width - TIME_EPS else self.idle

    def __repr__(self):
        return f"Pulse({self.high:g} for {self.width:g} s)"


class Table(Generator):
    def __init__(self, times: Sequence[float], values: Sequence[float],
                 interp: str = "linear", **kw: Any) -> None:
        super().__init__(**kw)
        ts, vs = np.asarray(times, float), np.asarray(values, float)
        if ts.ndim != 1 or ts.shape != vs.shape or not len(ts):
            raise TraceError(f"Table: times and values are two 1-D sequences of one length "
                             f"(at least one point), got {ts.shape} and {vs.shape}")
        if len(ts) > 1 and not np.all(np.diff(ts) > 0):
            raise TraceError("Table: the times must increase strictly")
        if interp not in ("linear", "hold"):
            raise TraceError(f"Table: interp is 'linear' or 'hold', got {interp!r}")
        self.times, self.points, self.interp, self.idle = ts, vs, interp, float(vs[0])

    def shape(self, tau):
        if self.interp == "linear":
            return float(np.interp(tau, self.times, self.points))
        i = int(np.searchsorted(self.times, tau + TIME_EPS, side="right")) - 1
        return float(self.points[max(i, 0)])

    def __repr__(self):
        return f"Table({len(self.times)} points, {self.interp})"


class Replay(Table):
    """A trace's signal replayed: sample ``i`` at ``tau = t[i] - t[0]``."""

    def __init__(self, trace: Trace, name: str, interp: str = "hold", **kw: Any) -> None:
        kw.setdefault("unit", trace.unit(name))
        if not len(trace):
            raise TraceError(f"Replay: the trace of {name!r} is empty")
        super().__init__(trace.t - trace.t[0], trace[name], interp, **kw)
        self.name = name

    def __repr__(self):
        return f"Replay({self.name!r}, {len(self.times)} samples, {self.interp})"


class Player:
    """Plays named generators in a frame loop; the test or triggers start and stop them.

    ``values = player.update(t, latest)`` each frame; ``latest`` is the trace so far (its
    last sample is read) or a dict of the current values, needed when a trigger is
    pending.  :meth:`start`/:meth:`stop` start/stop a generator at a time (the test's
    step)."""

    def __init__(self, generators: Mapping[str, Generator],
                 units: Mapping[str, str] | None = None) -> None:
        self.generators = dict(generators)
        for k, g in self.generators.items():
            if not isinstance(g, Generator):
                raise TraceError(f"Player: {k!r} is a {type(g).__name__}, not a generator")
        self._units = dict(units or {})
        self._start = {k: g.start if isinstance(g.start, float) else None
                       for k, g in self.generators.items()}
        self._stop = {k: g.stop if isinstance(g.stop, float) else None
                      for k, g in self.generators.items()}
        self._last_t = -math.inf

    @property
    def units(self) -> dict[str, str]:
        return {k: g.unit for k, g in self.generators.items()}

    def _gen(self, name: str) -> Generator:
        try:
            return self.generators[name]
        except KeyError:
            raise TraceError(f"Player: no generator {name!r}; generators: "
                             f"{', '.join(self.generators)}") from None

    def start(self, name: str, t: float) -> None:
        """Start ``name`` at ``t`` (again, if it ran: a restart)."""
        self._gen(name)
        self._start[name], self._stop[name] = float(t), None

    def stop(self, name: str, t: float) -> None:
        if self._start[name] is None:
            raise TraceError(f"Player: {name!r} was not started; it cannot stop")
        self._stop[name] = float(t)

    def started(self, name: str) -> float | None:
        """The time ``name`` started (None: not yet)."""
        self._gen(name)
        return self._start[name]

    def stopped(self, name: str) -> float | None:
        self._gen(name)
        return self._stop[name]

    def _sample(self, t: float, latest: Any) -> Trace:
        if isinstance(latest, Trace):
            if not len(latest):
                raise TraceError("Player.update: the trace is empty; a trigger needs a sample")
            return latest.rows(len(latest) - 1, len(latest))
        if isinstance(latest, Mapping):
            return Trace._trusted(np.array([t]), {k: np.array([float(v)]) for k, v in
                                                  latest.items()},
                                  {k: self._units.get(k, "") for k in latest})
        raise TraceError(f"Player.update at t = {fmt_time(t)} s: a trigger is pending and "
                         f"needs the latest values (a Trace or a dict), got "
                         f"{type(latest).__name__}")

    def update(self, t: float, latest: Any = None) -> dict[str, float]:
        """The generators' values at ``t``, after the pending triggers saw ``latest``."""
        t = float(t)
        if t < self._last_t:
            raise TraceError(f"Player.update: time went back ({fmt_time(t)} s after "
                             f"{fmt_time(self._last_t)} s)")
        self._last_t, sample, out = t, None, {}
        for k, g in self.generators.items():
            for which, table in (("start", self._start), ("stop", self._stop)):
                cond = getattr(g, which)
                pending = table[k] is None and isinstance(cond, Cond) and (
                    which == "start" or (self._start[k] is not None and t > self._start[k]))
                if pending:
                    sample = self._sample(t, latest) if sample is None else sample
                    if bool(cond.evaluate(sample).ok[0]):
                        table[k] = t
            s, e = self._start[k], self._stop[k]
            out[k] = g.value(t, math.inf if s is None else s, math.inf if e is None else e)
        return out
