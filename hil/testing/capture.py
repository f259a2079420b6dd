"""Capture with start and stop triggers, pre-trigger history and decimation (ASAM XIL's
capture), fed sample by sample in a frame loop or run over a whole trace.

``Capture(names, start=sig("v") > 20, stop=sig("brake") > 0, pre=1.0, post=2.0,
decimate=10)``, then ``cap.feed(t, values)`` each frame (or ``cap.run(trace)``), then
``cap.trace()``.  Per sample, in order:

* **start trigger**: the first sample where ``start`` holds (a condition, evaluated on that
  sample's values: every value fed, captured or not); a number ``T`` is the first sample
  with ``t >= T``; None: the first sample.  Its time is ``trigger_time``.
* **pre-trigger history**: until the trigger, the last ``pre`` seconds of samples are kept
  in a ring buffer; the capture begins with those at ``t >= trigger_time - pre``.  If the
  feed began later than that, the capture has less history than asked:
  ``meta["pre_short"]`` is True and ``meta["pre_available"]`` says how much there is (not
  an error).
* **stop**: after the trigger sample (never at it), the first sample where ``stop`` holds
  is ``stop_time``; the capture goes on ``post`` seconds more (``post=None``: 0).  Without
  a ``stop``, it ends ``post`` seconds after the trigger (``post=None``: never; it takes
  every sample fed).  The last sample kept is the last with ``t <= end``; the capture is
  ``complete`` once a sample reaches ``end``.
* **decimation**: of the samples in the capture, those whose index counted from the
  trigger sample is a multiple of ``decimate`` (the trigger sample is always kept, the
  stop sample only if it falls on the grid).

``trace()`` is the result, a :class:`~hil.testing.signals.Trace` with units and
``meta`` (``trigger_time``, ``stop_time``, ``end``, ``pre_available``: from the first
sample kept to the trigger, ``pre_short``: the feed began after ``trigger_time - pre``,
``complete``, ``decimate``); it raises :class:`~hil.testing.errors.NotTriggered` if the
start trigger never held (not an empty success) and
:class:`~hil.testing.errors.CaptureIncomplete` if the end was not reached
(``partial=True`` returns what there is).

A NaN in a trigger's signals does not trigger.  Limitations: one capture per object
(make a new one to capture again); the ring keeps every sample of the last ``pre``
seconds (memory ``rate * pre`` samples); ``run`` feeds the trace sample by sample (the same
semantics; a Python loop, about a microsecond per sample plus the trigger evaluation).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .conditions import Cond, as_cond
from .errors import CaptureIncomplete, NotTriggered, TraceError
from .signals import TIME_EPS, Recorder, Trace, fmt_time


def _trigger(x: Any, what: str) -> Cond | float | None:
    if x is None or isinstance(x, Cond):
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        if not math.isfinite(x):
            raise TraceError(f"capture: {what} time must be finite, got {x!r}")
        return float(x)
    return as_cond(x)


class Capture:
    """A triggered capture; see the module docstring."""

    def __init__(self, names: Iterable[str] | None = None, *, start: Any = None,
                 stop: Any = None, pre: float = 0.0, post: float | None = None,
                 decimate: int = 1, units: Mapping[str, str] | None = None) -> None:
        self.names = None if names is None else list(names)
        self.start, self.stop = _trigger(start, "start"), _trigger(stop, "stop")
        if not (math.isfinite(pre) and pre >= 0) or (post is not None and not (
                math.isfinite(post) and post >= 0)):
            raise TraceError(f"capture: pre and post are durations >= 0 s, got {pre!r}, "
                             f"{post!r}")
        if int(decimate) != decimate or decimate < 1:
            raise TraceError(f"capture: decimate is an integer >= 1, got {decimate!r}")
        self.pre, self.post, self.decimate = float(pre), post, int(decimate)
        self.units = dict(units or {})
        self._ring: deque = deque()
        self._rec: Recorder | None = None
        self.trigger_time: float | None = None
        self.stop_time: float | None = None
        self.end: float | None = None
        self.complete = False
        self._first_t: float | None = None
        self._last_t: float | None = None
        self._n_seen = 0
        self._rel = 0  # index of the next sample counted from the trigger sample
        self._pre_kept: list = []

    @property
    def triggered(self) -> bool:
        return self.trigger_time is not None

    @property
    def done(self) -> bool:
        """The capture has reached its end: later samples are ignored."""
        return self.complete

    def _holds(self, trig: Any, t: float, values: Mapping) -> bool:
        if isinstance(trig, float):
            return t >= trig - TIME_EPS
        one = Trace._trusted(np.array([t]), {k: np.array([float(v)]) for k, v in
                                             values.items()},
                             {k: self.units.get(k, "") for k in values})
        return bool(trig.evaluate(one).ok[0])

    def feed(self, t: float, values: Mapping[str, float]) -> bool:
        """One sample (``values``: every signal captured and every signal a trigger
        reads); returns :attr:`done`."""
        if self.complete:
            return True
        return self._step(float(t), values, None, None)

    def _step(self, t: float, values: Mapping, start_ok: bool | None,
              stop_ok: bool | None) -> bool:
        if self._last_t is not None and not t > self._last_t:
            raise TraceError(f"capture: sample times must increase; {fmt_time(t)} s after "
                             f"{fmt_time(self._last_t)} s")
        if self.names is None:
            self.names = list(values)
        row = self._row(t, values)
        self._last_t = t
        self._first_t = t if self._first_t is None else self._first_t
        self._n_seen += 1
        if self.trigger_time is None:
            ok = start_ok if start_ok is not None else (
                True if self.start is None else self._holds(self.start, t, values))
            if not ok:
                self._ring.append((t, row))
                while self._ring and self._ring[0][0] < t - self.pre - TIME_EPS:
                    self._ring.popleft()
                return False
            self._begin(t)
            self._keep(t, row)
            return self._reached(t)
        if t > self.end + TIME_EPS if self.end is not None else False:
            self.complete = True
            return True
        if self.stop is not None and self.stop_time is None:
            ok = stop_ok if stop_ok is not None else self._holds(self.stop, t, values)
            if ok:
                self.stop_time = t
                self.end = t + (self.post or 0.0)
        self._keep(t, row)
        return self._reached(t)

    def _row(self, t: float, values: Mapping) -> dict:
        try:
            return {k: float(values[k]) for k in self.names}
        except KeyError as e:
            raise TraceError(f"capture: the sample at t = {fmt_time(t)} s has no "
                             f"{e.args[0]!r}; captured: {', '.join(self.names)}") from None

    def _begin(self, t: float) -> None:
        self.trigger_time = t
        if self.stop is None and self.post is not None:
            self.end = t + self.post
        self._rec = Recorder(self.names, {k: self.units.get(k, "") for k in self.names})
        kept = [(tt, r) for tt, r in self._ring if tt >= t - self.pre - TIME_EPS]
        n = len(kept)
        self._pre_kept = [s for j, s in enumerate(kept) if (j - n) % self.decimate == 0]
        self._pre_from = kept[0][0] if kept else t
        self._ring.clear()

    def _keep(self, t: float, row: dict) -> None:
        if self._rel % self.decimate == 0:
            self._rec.append(t, row)
        self._rel += 1

    def _reached(self, t: float) -> bool:
        if self.end is not None and t >= self.end - TIME_EPS:
            self.complete = True
        return self.complete

    def run(self, trace: Trace) -> Trace:
        """Feed a whole trace (the triggers evaluated on it at once) and return
        :meth:`trace` (``partial=True``: a trace ends where it ends)."""
        names = trace.names
        start = self.start.evaluate(trace).ok if isinstance(self.start, Cond) else None
        stop = self.stop.evaluate(trace).ok if isinstance(self.stop, Cond) else None
        cols = [trace[k] for k in names]
        self.units = {**{k: trace.units[k] for k in names}, **self.units}
        for i, t in enumerate(trace.t):
            if self.complete:
                break
            values = {k: c[i] for k, c in zip(names, cols)}
            self._step(float(t), values, None if start is None else bool(start[i]),
                       None if stop is None else bool(stop[i]))
        return self.trace(partial=True)

    def trace(self, partial: bool = False) -> Trace:
        """The captured samples; raises if never triggered, or if incomplete unless
        ``partial``."""
        if self.trigger_time is None:
            what = ("no sample was fed" if not self._n_seen else
                    f"{self._n_seen} samples fed, t = {fmt_time(self._first_t)} .. "
                    f"{fmt_time(self._last_t)} s")
            raise NotTriggered(f"capture never triggered: the start trigger "
                               f"{self._text(self.start)} never held ({what})")
        if not partial and not self.complete and (self.end is not None or self.stop is not None):
            raise CaptureIncomplete(
                f"capture incomplete: triggered at t = {fmt_time(self.trigger_time)} s, "
                + (f"stop trigger {self._text(self.stop)} not reached" if self.end is None
                   else f"end t = {fmt_time(self.end)} s not reached")
                + f"; last sample t = {fmt_time(self._last_t)} s (trace(partial=True) takes "
                  f"what there is)")
        post = self._rec.trace()
        t = np.concatenate([[s[0] for s in self._pre_kept], post.t])
        sigs = {k: np.concatenate([[s[1][k] for s in self._pre_kept], post[k]])
                for k in self.names}
        meta = dict(trigger_time=self.trigger_time, stop_time=self.stop_time, end=self.end,
                    pre=self.pre, pre_available=self.trigger_time - self._pre_from,
                    pre_short=self._first_t > self.trigger_time - self.pre + TIME_EPS,
                    complete=self.complete, decimate=self.decimate)
        return Trace(t, sigs, {k: self.units.get(k, "") for k in self.names}, meta=meta)

    @staticmethod
    def _text(trig: Any) -> str:
        return f"t >= {fmt_time(trig)} s" if isinstance(trig, float) else str(trig)
