"""Temporal checks on a trace that report *when* and *by how much*.

Every check reads the samples of a trace (nothing is interpolated; times within 1 ns are
equal, :data:`~hil.testing.signals.TIME_EPS`) in a window ``[t0, t1]`` (``t0 = start``,
default the trace's first sample) and returns a :class:`CheckResult`:

* ``eventually(tr, cond, within=W)``: ``cond`` holds at some sample in ``[t0, t0 + W]``.
  Passes at the first such sample (``when``, ``margin`` there).  Fails with the largest
  margin reached (how close it came, ``details["closest_at"]``) and ``when`` = the end of
  the window.
* ``always(tr, cond, during=D)``: ``cond`` holds at every sample of ``[t0, t0 + D]``
  (``D=None``: to the end).  Fails at the first sample where it does not, with the margin
  there; a pass reports the smallest margin and where.
* ``settles(tr, x, to=r, tol=e, within=W)``: every sample from ``t0 + W`` to the trace's
  end has ``|x - r| <= e``.  Reports the settling instant ``when`` (the first sample of the
  final run inside the band: the sample after the last exit, ``details["last_exit"]``;
  ``t0`` if never outside) and the worst deviation after ``t0 + W`` (``margin = e -
  worst``).  A failure's ``when`` is the time of that worst deviation.
* ``responds(tr, u, y, latency=L)``: at each edge of ``u`` (sample ``k`` with
  ``|u[k] - u[k-1]| > edge``; a condition's edges are its switches) ``y`` leaves
  ``y[k-1] ± threshold`` (strictly) at a sample ``m >= k`` with ``t[m] - t[k] <= L``.
  Reports every latency (``details["latencies"]``: ``(edge time, latency or None)``) and
  the worst (``margin = L - worst``).  Edges are taken in the window ``[t0, t0 + during]``,
  their responses searched from the edge to the trace's end, across later edges.

Never a silent pass: an empty trace or a window with no sample raises
:class:`~hil.testing.errors.WindowError`, as does a window that reaches beyond the trace
when the samples present do not decide the verdict (an ``eventually`` that has not held
yet, an ``always`` not failed yet, an edge whose deadline lies past the end); a NaN in a
signal the check reads, at a sample the check needs, fails it ("NaN at t = ... in gap");
``responds`` without any edge fails.  ``result.expect()`` / :func:`check` raise
:class:`~hil.testing.errors.CheckFailed` (an ``AssertionError``) with the message and the
signals read around the deciding instant (:attr:`CheckResult.window`).

Limitations: ``eventually`` stops reading at the first sample that holds (a NaN after it
does not fail it); ``responds`` compares to the value just before each edge, so a signal
still moving from an earlier edge may count as a response; checks run after the fact, on
a recorded trace (a frame loop evaluates them on its capture).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .conditions import Cond, Evaluation, Expr, as_cond, sig
from .errors import CheckFailed, WindowError
from .signals import TIME_EPS, Trace, Window, as_trace, fmt_time, fmt_value

#: samples shown on each side of the deciding instant in a result's window
CONTEXT = 5


@dataclass
class CheckResult:
    """A check's verdict: ``passed``; ``when`` (s) and ``margin`` (in ``unit``; None:
    unknown) at the deciding instant; ``message``; ``window``: the signals read around
    that instant (a table with units); ``details`` per check."""

    passed: bool
    name: str
    when: float | None
    margin: float | None
    unit: str
    message: str
    window: Window | None = None
    details: dict = field(default_factory=dict)

    def report(self) -> str:
        text = f"{'PASS' if self.passed else 'FAIL'} {self.message}"
        if self.window is not None:
            text += "\n" + self.window.to_text()
        return text

    def expect(self) -> CheckResult:
        """The result if it passed; else raise :class:`CheckFailed` with the report."""
        if not self.passed:
            raise CheckFailed(self.report(), self)
        return self

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"<CheckResult {'PASS' if self.passed else 'FAIL'}: {self.message}>"


def check(result: CheckResult) -> CheckResult:
    """Raise :class:`CheckFailed` if ``result`` failed (pytest shows the report)."""
    return result.expect()


def _length(value: Any, what: str) -> float | None:
    if value is None:
        return None
    v = float(value)
    if not np.isfinite(v) or v < 0:
        raise WindowError(f"{what} must be a finite duration >= 0 s, got {value!r}")
    return v


def _span(tr: Trace, start, length, name: str):
    """``(i0, i1, t0, t1, covered)`` of the window ``[start, start + length]``."""
    if not len(tr):
        raise WindowError(f"{name}: the trace is empty: nothing to check")
    t0 = tr.start if start is None else float(start)
    if not np.isfinite(t0):
        raise WindowError(f"{name}: start must be a finite time in s, got {start!r}")
    t1 = tr.end if length is None else t0 + length
    i0, i1 = tr.span(t0, t1)
    if i1 <= i0:
        raise WindowError(f"{name}: no sample in the window [{fmt_time(t0)}, {fmt_time(t1)}] "
                          f"s; the trace spans [{fmt_time(tr.start)}, {fmt_time(tr.end)}] s")
    covered = t0 >= tr.t[0] - TIME_EPS and t1 <= tr.t[-1] + TIME_EPS
    return i0, i1, t0, t1, covered


def _outside(name: str, tr: Trace, t0: float, t1: float, why: str) -> WindowError:
    return WindowError(f"{name}: the window [{fmt_time(t0)}, {fmt_time(t1)}] s is not covered "
                       f"by the trace [{fmt_time(tr.start)}, {fmt_time(tr.end)}] s and {why}: "
                       f"record longer or shorten the window")


def _context(tr: Trace, i: int, names) -> Window:
    lo, hi = max(i - CONTEXT, 0), min(i + CONTEXT, len(tr) - 1)
    names = tr.names if names is None else [k for k in tr.names if k in names]
    return tr.window(tr.t[i], tr.t[i] - tr.t[lo], tr.t[hi] - tr.t[i], names)


def _nan_names(tr: Trace, i: int, names) -> str:
    names = tr.names if names is None else sorted(names)
    bad = [k for k in names if k in tr and np.isnan(tr[k][i])]
    return ", ".join(bad) or "the condition"


def _margin_text(ev: Evaluation, i: int, value: float) -> str:
    if ev.margin is None:
        return "(margin unknown: a plain callable condition)"
    return _q(abs(value), ev.unit(i))


def _q(value: float, unit: str) -> str:
    """``1.7 m``; ``1.7`` without a unit."""
    return f"{fmt_value(value)} {unit}".rstrip()


def _result(passed, name, tr, i, margin, unit, message, reads, **details) -> CheckResult:
    m = None if margin is None else float(margin)
    return CheckResult(passed, name, float(tr.t[i]), m, unit, f"{name}: {message}",
                       _context(tr, i, reads), details)


def eventually(trace: Any, cond: Any, *, within: float, start: float | None = None
               ) -> CheckResult:
    """``cond`` holds at some sample of ``[start, start + within]``; see the module."""
    tr, c = as_trace(trace), as_cond(cond)
    i0, i1, t0, t1, covered = _span(tr, start, _length(within, "eventually: within"),
                                    "eventually")
    ev = c.evaluate(tr.rows(i0, i1))
    name = f"eventually {ev.text} within {fmt_value(t1 - t0)} s"
    hits = np.flatnonzero(ev.ok | ev.nan)
    if len(hits):
        k = int(hits[0])
        i, t = i0 + k, float(tr.t[i0 + k])
        if ev.nan[k]:
            return _result(False, name, tr, i, np.nan, ev.unit(k),
                           f"NaN at t = {fmt_time(t)} s in {_nan_names(tr, i, c.reads())}",
                           c.reads())
        m = None if ev.margin is None else ev.margin[k]
        mt = "" if m is None else f", margin {_q(m, ev.unit(k))}"
        return _result(True, name, tr, i, m, ev.unit(k),
                       f"held at t = {fmt_time(t)} s ({fmt_value(t - t0)} s after "
                       f"t = {fmt_time(t0)} s){mt}", c.reads())
    if not covered:
        raise _outside(name, tr, t0, t1, "the condition has not held in the samples present")
    if ev.margin is None:
        k = len(ev.ok) - 1
        how = "(margin unknown: a plain callable condition)"
        m = None
    else:
        k = int(np.argmax(ev.margin))
        m = float(ev.margin[k])
        how = (f"closest at t = {fmt_time(tr.t[i0 + k])} s: {ev.deciding(k)} short by "
               f"{_margin_text(ev, k, m)}")
    res = _result(False, name, tr, i0 + k, m, ev.unit(k),
                  f"never held in [{fmt_time(t0)}, {fmt_time(t1)}] s (the window ends at "
                  f"t = {fmt_time(t1)} s); {how}", c.reads(),
                  closest_at=float(tr.t[i0 + k]))
    res.when = t1
    return res


def always(trace: Any, cond: Any, *, during: float | None = None,
           start: float | None = None) -> CheckResult:
    """``cond`` holds at every sample of ``[start, start + during]`` (None: to the end)."""
    tr, c = as_trace(trace), as_cond(cond)
    i0, i1, t0, t1, covered = _span(tr, start, _length(during, "always: during"), "always")
    ev = c.evaluate(tr.rows(i0, i1))
    name = f"always {ev.text} during [{fmt_time(t0)}, {fmt_time(t1)}] s"
    bad = np.flatnonzero(~ev.ok)
    if len(bad):
        k = int(bad[0])
        i, t = i0 + k, float(tr.t[i0 + k])
        if ev.nan[k]:
            return _result(False, name, tr, i, np.nan, ev.unit(k),
                           f"NaN at t = {fmt_time(t)} s in {_nan_names(tr, i, c.reads())}",
                           c.reads())
        m = None if ev.margin is None else ev.margin[k]
        by = "" if m is None else " by"
        return _result(False, name, tr, i, m, ev.unit(k),
                       f"{ev.deciding(k)} failed at t = {fmt_time(t)} s{by} "
                       f"{_margin_text(ev, k, 0.0 if m is None else m)}", c.reads())
    if not covered:
        raise _outside(name, tr, t0, t1, "the condition held in every sample present")
    if ev.margin is None:
        return _result(True, name, tr, i0, None, "",
                       f"held at all {i1 - i0} samples (margin unknown: a plain callable "
                       f"condition)", c.reads())
    k = int(np.argmin(ev.margin))
    return _result(True, name, tr, i0 + k, ev.margin[k], ev.unit(k),
                   f"held at all {i1 - i0} samples; smallest margin "
                   f"{_q(ev.margin[k], ev.unit(k))} at t = {fmt_time(tr.t[i0 + k])} s "
                   f"({ev.deciding(k)})", c.reads())


def _expr(x: Any) -> Expr:
    if isinstance(x, str):
        return sig(x)
    if isinstance(x, Expr):
        return x
    raise TypeError(f"a signal: its name or an expression (sig('x') - sig('y')), got "
                    f"{type(x).__name__} {x!r}")


def settles(trace: Any, signal: Any, *, to: float, tol: float, within: float,
            start: float | None = None) -> CheckResult:
    """``|signal - to| <= tol`` at every sample from ``start + within`` to the end."""
    tr, x = as_trace(trace), _expr(signal)
    tol = _length(tol, "settles: tol")
    i0, n, t0, _, _ = _span(tr, start, None, "settles")
    tw = t0 + _length(within, "settles: within")
    u = x.values(tr)[1]
    name = f"settles {x} to {fmt_value(to)} ± {fmt_value(tol)} {u}".rstrip() + \
        f" within {fmt_value(tw - t0)} s"
    if tw > tr.end + TIME_EPS or t0 < tr.start - TIME_EPS:
        raise _outside(name, tr, t0, tw, "a settling check reads every sample from its "
                       "start to the trace's end")
    v = np.asarray(x.values(tr.rows(i0, n))[0], float)
    nan = np.flatnonzero(np.isnan(v))
    if len(nan):
        i = i0 + int(nan[0])
        return _result(False, name, tr, i, np.nan, u, f"NaN at t = {fmt_time(tr.t[i])} s in "
                       f"{_nan_names(tr, i, x.reads())}", x.reads())
    dev = np.abs(v - float(to))
    out = np.flatnonzero(dev > tol)
    j0 = tr.span(tw, None)[0] - i0
    w = j0 + int(np.argmax(dev[j0:]))
    worst = float(dev[w])
    if len(out) and out[-1] == len(v) - 1:
        settled, exit_t = None, float(tr.t[i0 + out[-1]])
    elif len(out):
        settled, exit_t = float(tr.t[i0 + out[-1] + 1]), float(tr.t[i0 + out[-1]])
    else:
        settled, exit_t = float(tr.t[i0]), None
    details = dict(settled_at=settled, last_exit=exit_t, worst=worst,
                   worst_at=float(tr.t[i0 + w]))
    if worst <= tol:
        res = _result(True, name, tr, i0 + w, tol - worst, u,
                      f"inside the band from t = {fmt_time(settled)} s "
                      f"({fmt_value(settled - t0)} s after t = {fmt_time(t0)} s); worst "
                      f"deviation after t = {fmt_time(tw)} s: {_q(worst, u)} at "
                      f"t = {fmt_time(tr.t[i0 + w])} s", x.reads(), **details)
        res.when = settled
        return res
    last = ("still outside the band at the trace's end" if settled is None else
            f"last left the band at t = {fmt_time(exit_t)} s")
    return _result(False, name, tr, i0 + w, tol - worst, u,
                   f"outside the band after t = {fmt_time(tw)} s: deviation "
                   f"{_q(worst, u)} at t = {fmt_time(tr.t[i0 + w])} s, over the "
                   f"tolerance by {_q(worst - tol, u)}; {last}", x.reads(), **details)


def _stimulus(u: Any, tr: Trace) -> tuple[np.ndarray, str, set | None]:
    if isinstance(u, Cond):
        ev = u.evaluate(tr)
        v = ev.ok.astype(float)
        v[ev.nan] = np.nan
        return v, ev.text, u.reads()
    x = _expr(u)
    return np.broadcast_to(np.asarray(x.values(tr)[0], float), tr.t.shape), str(x), x.reads()


def _first_move(y: np.ndarray, g: int, thr: float) -> int | None:
    """The first ``m >= g`` with ``|y[m] - y[g-1]| > thr`` (None: none), searched in
    chunks of doubling length (a response is usually near its edge)."""
    ref, a, size = y[g - 1], g, 64
    while a < len(y):
        hit = np.flatnonzero(np.abs(y[a:a + size] - ref) > thr)
        if len(hit):
            return a + int(hit[0])
        a, size = a + size, size * 2
    return None


def responds(trace: Any, stimulus: Any, signal: Any, *, latency: float,
             threshold: float = 0.0, edge: float = 0.0, start: float | None = None,
             during: float | None = None) -> CheckResult:
    """At each edge of ``stimulus`` (a change by more than ``edge``; a condition: each
    switch) ``signal`` changes by more than ``threshold`` within ``latency`` s."""
    tr, y = as_trace(trace), _expr(signal)
    lat = _length(latency, "responds: latency")
    thr, edg = _length(threshold, "responds: threshold"), _length(edge, "responds: edge")
    i0, i1, t0, t1, covered = _span(tr, start, _length(during, "responds: during"),
                                    "responds")
    part = tr.rows(i0, i1)
    s, stext, sreads = _stimulus(stimulus, part)
    yv, yu = y.values(tr)
    yv = np.broadcast_to(np.asarray(yv, float), tr.t.shape)
    reads = None if sreads is None else sreads | y.reads()
    name = f"responds {y} to {stext} within {fmt_value(lat)} s"

    def nan_fail(i):
        return _result(False, name, tr, i, np.nan, "s", f"NaN at t = {fmt_time(tr.t[i])} s "
                       f"in {_nan_names(tr, i, reads)}", reads)

    if np.isnan(s).any():
        return nan_fail(i0 + int(np.flatnonzero(np.isnan(s))[0]))
    edges = i0 + np.flatnonzero(np.abs(np.diff(s)) > edg) + 1
    if not len(edges):
        return _result(False, name, tr, i0, None, "s", f"{stext} never changed (by more than "
                       f"{fmt_value(edg)}) in [{fmt_time(t0)}, {fmt_time(t1)}] s: nothing "
                       f"to respond to", reads, latencies=[])
    tt = tr.t
    lats = []
    for g in edges:
        m = _first_move(yv, g, thr)
        got = None if m is None else float(tt[m] - tt[g])
        late = got is None or got > lat + TIME_EPS
        # the samples read: to the response, or to the deadline when it came late
        stop = tr.span(None, tt[g] + lat)[1] - 1 if late else m
        if np.isnan(yv[g - 1:stop + 1]).any():
            return nan_fail(g - 1 + int(np.flatnonzero(np.isnan(yv[g - 1:stop + 1]))[0]))
        if late and tt[g] + lat > tt[-1] + TIME_EPS:
            raise _outside(name, tr, t0, float(tt[g] + lat),
                           f"the edge at t = {fmt_time(tt[g])} s has no response yet")
        lats.append((float(tt[g]), got))
    worst_k = max(range(len(lats)), key=lambda j: np.inf if lats[j][1] is None
                  else lats[j][1])
    te, wl = lats[worst_k]
    i = int(edges[worst_k])
    listing = ", ".join(f"{fmt_time(a)}: " + ("none" if b is None else fmt_value(b))
                        for a, b in lats[:10]) + (" ..." if len(lats) > 10 else "")
    if wl is not None and wl <= lat + TIME_EPS:
        return _result(True, name, tr, i, lat - wl, "s",
                       f"{len(lats)} edge(s), worst latency {fmt_value(wl)} s at the edge at "
                       f"t = {fmt_time(te)} s (edge: latency s) {listing}", reads,
                       latencies=lats, worst=wl)
    first = next(j for j, (_, b) in enumerate(lats) if b is None or b > lat + TIME_EPS)
    what = ("no response by the end of the trace" if wl is None else
            f"latency {fmt_value(wl)} s, over the limit by {fmt_value(wl - lat)} s")
    return _result(False, name, tr, i, None if wl is None else lat - wl, "s",
                   f"{what} at the edge at t = {fmt_time(te)} s (first late edge "
                   f"t = {fmt_time(lats[first][0])} s; threshold {fmt_value(thr)}"
                   f"{' ' + yu if yu else ''}); (edge: latency s) {listing}", reads,
                   latencies=lats, worst=wl)
