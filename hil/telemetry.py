"""Telemetry of a real-time run in constant memory: streaming histograms, a ring of the
last frames, and a per-frame CSV written by a writer thread.

A run at 1 kHz makes 3.6 million frames an hour; a list per figure grows by ~140 bytes a
frame (0.5 GB an hour, issue 22 item 3).  :class:`Telemetry` keeps instead

* counts (frames, overruns, skipped and degraded frames),
* a log-linear histogram of lateness, of execution time and of the frame thread's CPU time
  (:class:`LogHistogram`: 64 sub-buckets per power of two, quantiles within 1.6 % of the
  value, exact min and max),
* the cause of each overrun (:meth:`Telemetry.record`): the frame's own work (its CPU time
  alone exceeded the frame) or a stall (the frame would have fit, but its thread was off the
  CPU: woken late, preempted, waiting for the GIL), and the longest stalls,
* the last ``ring`` frames in full (``t_sim``, ``lateness_ns``, ``exec_ns``, ``end_ns``,
  ``overrun``; oldest first) for the rolling real-time factor and for inspection,
* optionally every frame in a CSV file (:class:`TelemetryStream`): the frame appends a
  row to a batch and hands full batches to a bounded queue; a writer thread writes them.
  A batch that finds the queue full is dropped and counted (``rows_dropped``), never
  waited for (the standard library's ``QueueHandler``/``QueueListener`` pattern).

Limitations: quantiles come from the histogram (relative error below 1/64 of the value;
min and max are exact); the ring holds the last ``ring`` frames only, so
:meth:`Telemetry.write_csv` after a long run writes those (the stream has them all).
"""

from __future__ import annotations

import math
import os
import queue
import threading
from typing import Any

__all__ = ["LogHistogram", "Telemetry", "TelemetryStream", "recording_summary"]

_SUB = 64  # sub-buckets per power of two
_SHIFT = 6  # log2(_SUB)


class LogHistogram:
    """Counts of non-negative integers (ns) in log-linear buckets: exact below 64, then
    64 buckets per power of two (width at most 1/64 of the value); constant memory."""

    __slots__ = ("counts", "n", "min", "max", "total", "negative")

    def __init__(self) -> None:
        self.counts = [0] * (_SUB + 48 * _SUB)
        self.n = 0
        self.min = math.inf
        self.max = -math.inf
        self.total = 0
        self.negative = 0

    @staticmethod
    def index(v: int) -> int:
        if v < _SUB:
            return v if v > 0 else 0
        e = v.bit_length() - _SHIFT - 1
        return _SUB + e * _SUB + ((v >> e) - _SUB)

    @staticmethod
    def lower(i: int) -> tuple[int, int]:
        """``(lower bound, width)`` of bucket ``i``."""
        if i < _SUB:
            return i, 1
        e, r = divmod(i - _SUB, _SUB)
        return (_SUB + r) << e, 1 << e

    def add(self, v: int) -> None:
        v = int(v)
        if v < 0:
            self.negative += 1
        i = self.index(v)
        if i >= len(self.counts):
            i = len(self.counts) - 1
        self.counts[i] += 1
        self.n += 1
        self.total += v
        if v < self.min:
            self.min = v
        if v > self.max:
            self.max = v

    def quantile(self, q: float) -> float:
        """The ``q``-quantile (0..1): the middle of its bucket, within [min, max]."""
        if self.n == 0:
            return math.nan
        rank = q * (self.n - 1)
        seen = 0
        for i, c in enumerate(self.counts):
            if not c:
                continue
            seen += c
            if seen > rank:
                lo, w = self.lower(i)
                mid = lo + (w - 1) / 2.0
                return float(min(max(mid, self.min), self.max))
        return float(self.max)

    def count_below(self, edge: float) -> int:
        """Values below ``edge`` (exact when ``edge`` is a bucket bound)."""
        n = 0
        for i, c in enumerate(self.counts):
            if c:
                lo, w = self.lower(i)
                if lo + w <= edge:
                    n += c
                elif lo < edge:
                    n += round(c * (edge - lo) / w)
        return n

    def mean(self) -> float:
        return self.total / self.n if self.n else math.nan


#: The per-frame CSV's columns (:class:`TelemetryStream`, :meth:`Telemetry.write_csv`):
#: simulated time, wake-up lateness, execution (wall) time, the frame thread's CPU time in
#: the frame (empty when not measured), overrun (1) and its cause (``work``/``stall``).
CSV_HEADER = "t_sim_s,lateness_us,exec_us,cpu_us,overrun,cause\n"


def _row(t: float, lat: int, ex: int, over: Any, cpu: int) -> str:
    cause = over if isinstance(over, str) else ("work" if over else "")
    return (f"{t!r},{lat / 1e3!r},{ex / 1e3!r},{'' if cpu < 0 else repr(cpu / 1e3)},"
            f"{int(bool(over))},{cause}\n")


class TelemetryStream:
    """Every frame's row (:data:`CSV_HEADER`) to a CSV file from a writer thread (module
    docstring).

    Parameters
    ----------
    path : str or path-like
    batch : int
        Rows handed over at once.
    queue_batches : int
        Batches queued and not yet written, at most; a batch that finds the queue full is
        dropped and counted.
    """

    def __init__(self, path: Any, *, batch: int = 512, queue_batches: int = 256) -> None:
        self.path = os.fspath(path)
        self.batch = int(batch)
        self.queue_batches = int(queue_batches)
        self.rows_written = self.rows_dropped = 0
        self.max_queued = 0
        self.error: BaseException | None = None
        self._rows: list = []
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._queued = 0
        self._lock = threading.Lock()
        self._f = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self._f.write(CSV_HEADER)
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"cosim telemetry {os.path.basename(self.path)}")
        self._thread.start()

    def add(self, t: float, lat: int, ex: int, over: bool, cpu: int = -1) -> None:
        rows = self._rows
        rows.append((t, lat, ex, over, cpu))
        if len(rows) >= self.batch:
            self._hand_over()

    def _hand_over(self) -> None:
        rows, self._rows = self._rows, []
        if not rows:
            return
        with self._lock:
            if self._queued >= self.queue_batches:
                self.rows_dropped += len(rows)
                return
            self._queued += 1
            self.max_queued = max(self.max_queued, self._queued)
        self._q.put(rows)

    def _run(self) -> None:
        f = self._f
        while True:
            rows = self._q.get()
            if rows is None:
                return
            try:
                if self.error is None:
                    f.write("".join(_row(*r) for r in rows))
                    self.rows_written += len(rows)
            except Exception as exc:  # noqa: BLE001 - reported by close() and stats()
                self.error = exc
            finally:
                with self._lock:
                    self._queued -= 1

    def close(self) -> None:
        """Hand over the last rows, wait for the thread, close the file."""
        if self._thread is None:
            return
        self._hand_over()
        self._q.put(None)
        self._thread.join()
        self._thread = None
        self._f.close()

    def stats(self) -> dict:
        return {"path": self.path, "rows_written": self.rows_written,
                "rows_dropped": self.rows_dropped, "max_queued_batches": self.max_queued,
                "error": None if self.error is None
                else f"{type(self.error).__name__}: {self.error}"}


class Telemetry:
    """A real-time run's figures in constant memory (module docstring; times in ns).

    Parameters
    ----------
    period_ns : int
    ring : int
        Frames kept in full (the last ones).

    Notes
    -----
    The cause of an overrun (:meth:`record`), from the runner's own figures of that frame:
    lateness :math:`L` (woke after the deadline), execution :math:`E` (wall time of the
    frame) and the frame thread's CPU time :math:`C` in it; the time the frame was due but
    its thread was not running is :math:`O = L + (E - C)`.

    * ``work``: :math:`C > P` (the frame's own work alone exceeds the frame), or the frame
      needed no real stall to overrun (:math:`O \\le P/4`: its work leaves no room for the
      ordinary wake-up jitter);
    * ``stall``: :math:`C \\le P` and :math:`O > P/4`: with the CPU when due, the frame
      would have fit; another thread or process, the kernel or the hypervisor had it;
    * a frame that overran because the frame before it did (it woke late by the backlog,
      catch-up) inherits that frame's cause, unless its own work exceeds the frame.

    A stall episode is counted once, at its first frame, with its length :math:`O`.
    Where the kernel counts stolen time as the thread's CPU time, a hypervisor stall inside
    a frame reads as work; the run's steal time (``steal``) is reported beside it.
    """

    #: the longest stalls kept (``stall_at``)
    STALLS_KEPT = 5

    def __init__(self, period_ns: int, ring: int = 10_000) -> None:
        self.period_ns = int(period_ns)
        self.ring = max(2, int(ring))
        self.lateness = LogHistogram()
        self.execution = LogHistogram()
        #: the frame thread's CPU time per frame (frames that measured it)
        self.cpu = LogHistogram()
        self.frames = 0
        self.overruns = 0
        #: overruns by cause: the frame's own work, or a stall (class notes)
        self.overruns_work = 0
        self.overruns_stall = 0
        #: stall episodes: count, and the longest ``(t_sim, off-CPU ns)`` (longest first)
        self.stalls = 0
        self.stall_at: list[tuple[float, int]] = []
        #: the frames whose own work (CPU time) exceeded their period: the largest
        #: ``(t_sim, CPU ns)`` (largest first)
        self.work_spikes = 0
        self.spike_at: list[tuple[float, int]] = []
        self.skipped = 0  # frames dropped (skip / catch_up / degrade)
        self.degraded = 0  # frames run at a degraded period
        self.wall_s = 0.0
        self.stopped_by = ""
        #: the stream writers' ``stats()`` at the end of the run (:func:`recording_summary`)
        self.writers: list = []
        self.stream: TelemetryStream | None = None
        #: CPU time the hypervisor took from this VM during the run (``/proc/stat`` steal)
        self.steal: dict | None = None
        self._t = [0.0] * self.ring
        self._lat = [0] * self.ring
        self._ex = [0] * self.ring
        self._cpu = [-1] * self.ring
        self._end = [0] * self.ring
        self._ov: list = [""] * self.ring
        self._first: tuple[float, int] | None = None  # (t_sim, end) of frame 0
        self._last_cause = ""  # the cause of the previous frame's overrun ("" if none)

    # ---------------------------------------------------------------- record
    def record(self, t_sim: float, lateness: int, execution: int, end: int,
               over: bool, cpu: int = -1, period: int | None = None) -> None:
        """One frame (called by the runner in the frame: a few list stores and compares).

        ``cpu``: the frame thread's CPU time in the frame (-1: not measured; an overrun is
        then put down to the work); ``period``: the frame's period when not ``period_ns``
        (a degraded frame)."""
        i = self.frames % self.ring
        cause = ""
        if over:
            self.overruns += 1
            p = self.period_ns if period is None else period
            if cpu < 0 or cpu > p:
                cause = "work"
                if cpu > p:
                    self.work_spikes += 1
                    _keep(self.spike_at, (t_sim, int(cpu)), self.STALLS_KEPT)
            elif self._last_cause:
                cause = self._last_cause  # woke late by the backlog of the frame before
            else:
                off = lateness + execution - cpu
                if 4 * off > p:
                    cause = "stall"
                    self._stall(t_sim, off)
                else:
                    cause = "work"
            if cause == "work":
                self.overruns_work += 1
            else:
                self.overruns_stall += 1
        self._last_cause = cause
        self._t[i], self._lat[i], self._ex[i], self._end[i], self._ov[i], self._cpu[i] = \
            t_sim, lateness, execution, end, cause, cpu
        if self.frames == 0:
            self._first = (t_sim, end)
        self.frames += 1
        self.lateness.add(lateness)
        self.execution.add(execution)
        if cpu >= 0:
            self.cpu.add(cpu)
        if self.stream is not None:
            self.stream.add(t_sim, lateness, execution, cause, cpu)

    def _stall(self, t_sim: float, off: int) -> None:
        self.stalls += 1
        _keep(self.stall_at, (t_sim, int(off)), self.STALLS_KEPT)

    def _ring(self, data: list) -> list:
        n = self.frames
        if n <= self.ring:
            return data[:n]
        i = n % self.ring
        return data[i:] + data[:i]

    @property
    def t_sim(self) -> list:
        """Simulated time [s] of the frames in the ring (oldest first)."""
        return self._ring(self._t)

    @property
    def lateness_ns(self) -> list:
        return self._ring(self._lat)

    @property
    def exec_ns(self) -> list:
        return self._ring(self._ex)

    @property
    def end_ns(self) -> list:
        return self._ring(self._end)

    @property
    def overrun(self) -> list:
        return [bool(c) for c in self._ring(self._ov)]

    @property
    def overrun_cause(self) -> list:
        """``"work"``, ``"stall"`` or ``""`` (no overrun) per frame in the ring."""
        return self._ring(self._ov)

    @property
    def cpu_ns(self) -> list:
        """The frame thread's CPU time per frame in the ring (-1: not measured)."""
        return self._ring(self._cpu)

    # --------------------------------------------------------------- figures
    def percentiles_us(self) -> dict:
        h = self.lateness
        return {"p50": h.quantile(0.5) / 1e3, "p99": h.quantile(0.99) / 1e3,
                "p99.9": h.quantile(0.999) / 1e3,
                "max": h.max / 1e3 if h.n else math.nan}

    def histogram(self, edges_us: tuple = (10, 50, 100, 250, 500, 1000, 5000)) -> dict:
        """Lateness counts per bin ``"<10us"``, ``"10-50us"``, ..., ``">=5000us"``."""
        below = [self.lateness.count_below(e * 1000) for e in edges_us]
        counts = [below[0]] + [b - a for a, b in zip(below, below[1:])] \
            + [self.lateness.n - below[-1]]
        labels = [f"<{edges_us[0]}us"] + [f"{a}-{b}us" for a, b in zip(edges_us, edges_us[1:])] \
            + [f">={edges_us[-1]}us"]
        return dict(zip(labels, (int(c) for c in counts)))

    def real_time_factor(self, window: int | None = None) -> float:
        """Simulated time over wall time between frame ends, over the whole run or the
        last ``window`` frames (within the ring): 1.0 when the run kept up."""
        if self.frames < 2:
            return math.nan
        last_i = (self.frames - 1) % self.ring
        if window is None:
            t0, e0 = self._first
        else:
            k = min(window, self.frames - 1, self.ring - 1)
            j = (self.frames - 1 - k) % self.ring
            t0, e0 = self._t[j], self._end[j]
        wall = (self._end[last_i] - e0) * 1e-9
        return (self._t[last_i] - t0) / wall if wall > 0 else math.nan

    def as_dict(self) -> dict:
        d = {"period_us": self.period_ns / 1e3, "frames": self.frames,
             "lateness_us": self.percentiles_us(), "histogram": self.histogram(),
             "exec_us": _quantiles_us(self.execution),
             "cpu_us": _quantiles_us(self.cpu),
             "overruns": self.overruns,
             "overrun_causes": {"work": self.overruns_work, "stall": self.overruns_stall},
             "stalls": {"episodes": self.stalls,
                        "longest": [{"t_sim_s": t, "off_cpu_us": o / 1e3}
                                    for t, o in self.stall_at]},
             "work_spikes": {"frames": self.work_spikes,
                             "largest": [{"t_sim_s": t, "cpu_us": c / 1e3}
                                         for t, c in self.spike_at]},
             "skipped_frames": self.skipped,
             "degraded_frames": self.degraded, "real_time_factor": self.real_time_factor(),
             "wall_s": self.wall_s, "stopped_by": self.stopped_by,
             "recording": recording_summary(self.writers)}
        if self.stream is not None:
            d["telemetry_csv"] = self.stream.stats()
        if self.steal is not None:
            d["steal"] = dict(self.steal)
        return d

    def summary(self) -> str:
        d = self.as_dict()
        p = d["lateness_us"]
        return (f"real time: {d['frames']} frames of {d['period_us']:g} us; lateness p50 "
                f"{p['p50']:.1f} us, p99 {p['p99']:.1f} us, p99.9 {p['p99.9']:.1f} us, max "
                f"{p['max']:.1f} us; execution p50 {d['exec_us']['p50']:.1f} us, p99 "
                f"{d['exec_us']['p99']:.1f} us, max {d['exec_us']['max']:.1f} us"
                + (f" (CPU p50 {d['cpu_us']['p50']:.1f} us, p99 {d['cpu_us']['p99']:.1f} us)"
                   if self.cpu.n else "")
                + f"; {d['overruns']} overruns"
                + (f" ({self.overruns_work} by the frame's work, {self.overruns_stall} in "
                   f"{self.stalls} stall{'s' if self.stalls != 1 else ''})"
                   if self.overruns else "")
                + f", "
                f"{d['skipped_frames']} frames skipped, {d['degraded_frames']} degraded; "
                f"real-time factor {d['real_time_factor']:.3f}"
                + _recording_text(d["recording"])
                + (f"; stopped: {d['stopped_by']}" if d["stopped_by"] else ""))

    def write_csv(self, path: Any) -> None:
        """One row per frame in the ring (:data:`CSV_HEADER`; all frames when the run had
        at most ``ring``; a :class:`TelemetryStream` has all)."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(CSV_HEADER)
            for row in zip(self.t_sim, self.lateness_ns, self.exec_ns, self.overrun_cause,
                           self.cpu_ns):
                f.write(_row(*row))


def _keep(kept: list, item: tuple, most: int) -> None:
    """Keep the ``most`` items of largest ``item[1]`` in ``kept`` (largest first)."""
    if len(kept) < most or item[1] > kept[-1][1]:
        kept.append(item)
        kept.sort(key=lambda x: -x[1])
        del kept[most:]


def _quantiles_us(h: LogHistogram) -> dict:
    return {"p50": h.quantile(0.5) / 1e3, "p99": h.quantile(0.99) / 1e3,
            "max": h.max / 1e3 if h.n else math.nan}


def recording_summary(writers: list) -> dict:
    """The writers' counts summed: chunks written and dropped (queue full), the deepest
    queue, the most the frame spent handing over or writing one chunk, and each
    writer's own ``stats()`` under ``"writers"``."""
    if not writers:
        return {"writers": []}
    return {"chunks_written": sum(w["chunks_written"] for w in writers),
            "samples_written": sum(w["samples_written"] for w in writers),
            "chunks_dropped": sum(w["chunks_dropped"] for w in writers),
            "samples_dropped": sum(w["samples_dropped"] for w in writers),
            "max_queued": max(w["max_queued"] for w in writers),
            "queue_chunks": min(w["queue_chunks"] for w in writers),
            "in_frame_us_max": max(w["caller_us"]["max"] for w in writers),
            "write_ms_max": max(w["write_ms"]["max"] for w in writers),
            "threaded": sum(w["mode"] == "thread" for w in writers),
            "errors": [w["error"] for w in writers if w["error"]],
            "writers": writers}


def _recording_text(r: dict) -> str:
    if not r["writers"]:
        return ""
    n, th = len(r["writers"]), r["threaded"]
    how = ("on writer threads" if th == n else "in the frame" if th == 0
           else f"{th} of {n} writers on threads")
    return (f"; recording {how}: {r['chunks_written']} chunks written, "
            f"{r['chunks_dropped']} dropped (queue full), queue max {r['max_queued']} of "
            f"{r['queue_chunks']}, per chunk {r['in_frame_us_max']:.0f} us max in the frame, "
            f"write max {r['write_ms_max']:.1f} ms")
