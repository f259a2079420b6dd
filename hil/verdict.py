"""The verdict of a real-time run: what was checked, against which budget, the figure, pass
or fail (DESIGN.md, "A result says whether it can be trusted").

A HIL run whose loop fell apart must not end as "complete" with exit code 0.  Every run of
:class:`~hil.runner.RealTimeRunner` ends with a :class:`Verdict` built from its telemetry and
from the I/O it did (bridge blocks, backends, bus logs: everything with an
``io_figures()`` method), checked against a :class:`Budget`:

====================  ==========================================  =====================
check                 figure                                      default budget
====================  ==========================================  =====================
``overruns``          frames that ended after the next deadline   1e-3 of the frames
``skipped_frames``    frames dropped by the overrun policy        1e-3 of the frames
``lateness_p99_us``   99th percentile of the wake-up lateness     25 % of the period
``lateness_max_us``   the largest lateness                        reported, not checked
``stale_episodes``    receivers whose input went stale            0
``frames_lost``       gaps of E2E alive counters, reader queues   0
                      that overflowed
``link_losses``       disconnects, bus-off, held I/O errors       0
``bad_frames``        CRC or counter errors, wrong DLC, values    0
                      outside the DBC range
``recording_dropped`` chunks of results or telemetry rows         0
                      dropped because a writer queue was full
``lockstep_timeouts`` lock-step frames whose reply did not come   0
``run``               the run ended by an error                   none allowed
====================  ==========================================  =====================

Why these defaults: a loop that misses one frame in a thousand still gives a result a test
can use, and whatever a miss breaks downstream (a command going stale) is checked on its
own.  The worst case is not checked by default because on a shared machine it is the
hypervisor's, not the model's: measured with SCHED_FIFO at 1 kHz on these 2-vCPU VMs, a
wake-up 9-20 ms late a few times a minute, whatever the process did.  On a dedicated
target set ``lateness_max_us`` (and ``overruns=0``, as Simulink Real-Time's default stop on
the first overrun).

A budget entry is a count (``int``), a fraction of the frames due (a ``float`` below 1, for
``overruns`` and ``skipped_frames``), a number of microseconds (lateness), or ``None``:
not checked (reported all the same).  The verdict prints in one line
(:meth:`Verdict.line`), goes into ``summary.json`` (:meth:`Verdict.as_dict`) and maps to
the exit code (:attr:`Verdict.exit_code`: 0 pass, 1 a check failed).  A run that the model
itself ended (an FMU's terminateSimulation) or that ``stop()`` ended early passes if its
checks pass; the verdict says how it ended.

Limitations: lateness percentiles come from a log-linear histogram (within 1.6 %); frames
lost are counted only where something can see them (E2E alive counters, queue overflows,
a sender and a receiver in the same process): a frame lost on a wire without an alive
counter is seen only as staleness.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from cosim.errors import ParameterError

__all__ = ["Budget", "Check", "Verdict", "io_figures", "IO_KEYS"]

#: The counters that I/O objects report through ``io_figures()``.
IO_KEYS = ("stale_episodes", "frames_lost", "link_losses", "bad_frames",
           "recording_dropped", "lockstep_timeouts")


@dataclass(frozen=True)
class Budget:
    """What a real-time run may show and still pass (module docstring).

    Parameters
    ----------
    overruns, skipped_frames : int or float or None
        A count, or a fraction of the frames due (a float in [0, 1)).
    lateness_p99_us, lateness_max_us : float or None
        Microseconds; default 25 % of the period, and the maximum not checked (``-1``:
        one period).
    stale_episodes, frames_lost, link_losses, bad_frames, recording_dropped,
    lockstep_timeouts : int or None
    """

    overruns: int | float | None = 1e-3
    skipped_frames: int | float | None = 1e-3
    lateness_p99_us: float | None = -1.0  # -1: the default, from the period
    lateness_max_us: float | None = None
    stale_episodes: int | None = 0
    frames_lost: int | None = 0
    link_losses: int | None = 0
    bad_frames: int | None = 0
    recording_dropped: int | None = 0
    lockstep_timeouts: int | None = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise ParameterError(f"Budget: {f.name} must be a number or None (not "
                                     f"checked), got {v!r}")
            if f.name.startswith("lateness"):
                if v < 0 and v != -1.0:
                    raise ParameterError(f"Budget: {f.name} must be >= 0 microseconds, got {v!r}")
            elif isinstance(v, float) and f.name in ("overruns", "skipped_frames"):
                if not 0.0 <= v < 1.0:
                    raise ParameterError(
                        f"Budget: {f.name}={v!r}: a float is a fraction of the frames due and "
                        "must be in [0, 1); give an int for a count")
            elif not isinstance(v, int) or v < 0:
                raise ParameterError(f"Budget: {f.name} must be a count >= 0 (int) or None, "
                                     f"got {v!r}")

    @classmethod
    def from_items(cls, items: list[str], base: dict | None = None,
                   where: str = "--budget") -> Budget:
        """A budget from ``NAME=VALUE`` strings (a command line's repeated ``--budget``)
        over ``base``; ``VALUE`` is a number or ``none`` (not checked).  Bad items raise a
        :class:`~cosim.errors.ParameterError` naming the item and the valid names."""
        names = [f.name for f in fields(cls)]
        out = dict(base or {})
        for item in items:
            name, eq, value = (x.strip() for x in item.partition("="))
            if not eq or not name or not value:
                raise ParameterError(f"{where} {item!r}: expected NAME=VALUE, e.g. {where} "
                                     "overruns=8 or lateness_p99_us=500 (VALUE none: not "
                                     "checked)")
            if name not in names:
                raise ParameterError(f"{where} {item!r}: unknown budget {name!r}; budgets: "
                                     f"{', '.join(names)}")
            if value.lower() in ("none", "null"):
                out[name] = None
                continue
            try:
                num = float(value)
            except ValueError:
                raise ParameterError(f"{where} {item!r}: {value!r} is not a number or "
                                     "none") from None
            out[name] = int(num) if num.is_integer() and "." not in value and "e" not in \
                value.lower() else num
        return cls(**out)

    @classmethod
    def lenient(cls) -> Budget:
        """Nothing checked but errors: for exploratory runs (the figures are reported)."""
        return cls(**{f.name: None for f in fields(cls)})

    def limit(self, name: str, frames_due: int, period_us: float) -> float | None:
        """The budget of ``name`` as a number (fractions and defaults resolved)."""
        v = getattr(self, name)
        if v is None:
            return None
        if name == "lateness_p99_us" and v == -1.0:
            return 0.25 * period_us
        if name == "lateness_max_us" and v == -1.0:
            return period_us
        if isinstance(v, float) and name in ("overruns", "skipped_frames"):
            return math.floor(v * frames_due)
        return float(v)


@dataclass
class Check:
    """One checked figure."""

    name: str
    figure: Any
    limit: Any
    ok: bool
    text: str

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Verdict:
    """Pass or fail, with every check (module docstring)."""

    subject: str
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: one line when timing checks failed: why (a model too slow for its frame, or a
    #: machine whose other work took the CPU) and what to do (:func:`overload`)
    overload: str | None = None

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def add(self, name: str, figure: Any, limit: Any, ok: bool, text: str) -> Check:
        c = Check(name, figure, limit, bool(ok), text)
        self.checks.append(c)
        return c

    def line(self) -> str:
        """One line: ``verdict PASS|FAIL <subject>: ...`` (a failed run: the overload
        diagnosis, then the failed checks)."""
        if self.passed:
            body = "; ".join(c.text for c in self.checks[:4])
            more = f" (+{len(self.checks) - 4} more checks)" if len(self.checks) > 4 else ""
            head = f"verdict PASS {self.subject}: {len(self.checks)} checks within budget"
            return f"{head}: {body}{more}" + "".join(f"; {n}" for n in self.notes[:2])
        bad = "; ".join(c.text for c in self.failed)
        why = f"{self.overload}. " if self.overload else ""
        return (f"verdict FAIL {self.subject}: {why}{len(self.failed)} of {len(self.checks)} "
                f"checks failed: {bad}" + "".join(f"; {n}" for n in self.notes[:2]))

    def as_dict(self) -> dict:
        d = {"subject": self.subject, "passed": self.passed,
             "status": "pass" if self.passed else "fail", "exit_code": self.exit_code,
             "line": self.line(), "checks": [c.as_dict() for c in self.checks],
             "failed": [c.name for c in self.failed], "notes": list(self.notes),
             "overload": self.overload}
        io = getattr(self, "io", None)
        if io is not None:  # the I/O figures and who reported them (bridges, backends)
            d["io"] = io
        return d

    def write(self, path: Any) -> None:
        """Write :meth:`as_dict` as JSON to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(_jsonable(self.as_dict()), f, indent=1)

    @classmethod
    def from_dict(cls, d: dict, subject: str | None = None) -> Verdict:
        """The verdict :meth:`as_dict` wrote (another process's ``summary.json``), under
        ``subject`` (default: its own)."""
        return cls(subject or d["subject"], [Check(**c) for c in d["checks"]],
                   list(d["notes"]), d.get("overload"))

    @classmethod
    def combine(cls, subject: str, parts: list[Verdict], checks: list[Check] = ()) -> Verdict:
        """One verdict of several (a plant and its ECU, a demo's phases): every check,
        named ``part: check``."""
        v = cls(subject)
        for p in parts:
            for c in p.checks:
                v.checks.append(Check(f"{p.subject}: {c.name}", c.figure, c.limit, c.ok,
                                      f"{p.subject}: {c.text}"))
            v.notes.extend(f"{p.subject}: {n}" for n in p.notes)
            if p.overload and v.overload is None:
                v.overload = p.overload
        v.checks.extend(checks)
        return v


def io_figures(objects: list) -> dict:
    """The sum of ``io_figures()`` of ``objects`` (bridges, backends, bus logs), with
    ``"by"``: each object's own figures by its name (for the summary)."""
    total = dict.fromkeys(IO_KEYS, 0)
    by: dict[str, dict] = {}
    stale_at = []
    for o in objects:
        fig = o.io_figures()
        for k in IO_KEYS:
            total[k] += int(fig.get(k, 0))
        name = getattr(o, "path", None) or getattr(o, "where", None) or type(o).__name__
        by[str(name)] = {k: v for k, v in fig.items() if v}
        stale_at += [(t, key, end) for key, t, end in fig.get("stale_at", ())]
    total["by"] = {k: v for k, v in by.items() if v}
    if stale_at:
        total["stale_at"] = sorted(stale_at)
    return total


def _episodes(stale_at: list, most: int = 3) -> str:
    """``: ACC_CMD silent from t = 113.55 s for 62 ms, ...`` (the first ``most`` stale
    episodes, in model time: from the last frame received to the next)."""
    parts = []
    for t, key, end in stale_at[:most]:
        span = "to the end" if end is None else f"for {1e3 * (end - t):.0f} ms"
        parts.append(f"{key} silent from t = {t:.6g} s {span}")
    more = f" (+{len(stale_at) - most} more)" if len(stale_at) > most else ""
    return ": " + ", ".join(parts) + more


def _fmt(x: float) -> str:
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def runner_verdict(subject: str, tel: Any, budget: Budget, io: dict, *,
                   error: BaseException | None, terminated: dict | None,
                   setup: dict | None, frames_due: int, hints: dict | None = None) -> Verdict:
    """The verdict of one run of the runner (used by :class:`~hil.runner.RealTimeRunner`)."""
    v = Verdict(subject)
    period_us = tel.period_ns / 1e3
    p = tel.percentiles_us()

    def count(name: str, figure: int, what: str) -> None:
        lim = budget.limit(name, frames_due, period_us)
        ok = lim is None or figure <= lim
        budget_text = "not checked" if lim is None else f"budget {lim:g}"
        v.add(name, figure, lim, ok, f"{figure} {what} ({budget_text})")

    count("overruns", tel.overruns, f"overruns of {tel.frames} frames")
    count("skipped_frames", tel.skipped, f"frames skipped of {frames_due} due")
    for name, key, what in (("lateness_p99_us", "p99", "lateness p99"),
                            ("lateness_max_us", "max", "lateness max")):
        fig = p[key]
        lim = budget.limit(name, frames_due, period_us)
        if fig != fig:  # no frame ran
            v.add(name, None, lim, error is None, f"{what}: no frame ran")
            continue
        ok = lim is None or fig <= lim
        budget_text = "not checked" if lim is None else f"budget {_fmt(lim)} us"
        v.add(name, round(fig, 3), lim, ok, f"{what} {_fmt(fig)} us ({budget_text})")
    texts = {"stale_episodes": "stale episodes", "frames_lost": "frames lost",
             "link_losses": "link losses", "bad_frames": "bad frames",
             "recording_dropped": "recording chunks/rows dropped",
             "lockstep_timeouts": "lock-step timeouts"}
    for k in IO_KEYS:
        count(k, int(io.get(k, 0)), texts[k])
        if k == "stale_episodes" and io.get("stale_at"):
            c = v.checks[-1]
            c.text += _episodes(io["stale_at"])
    if error is not None:
        v.add("run", f"{type(error).__name__}: {error}", "no error", False,
              f"ended by {type(error).__name__}: {' '.join(str(error).split())[:300]}")
    else:
        v.add("run", tel.stopped_by or "complete", "no error", True,
              "ended " + (f"early: {tel.stopped_by}" if tel.stopped_by else "at its end time"))
    if terminated:
        v.notes.append(f"the model ended the run at t = {terminated.get('t', 0.0):.6g} s "
                       f"({terminated.get('by', '?')}: {terminated.get('reason', '')})")
    if setup is not None:
        v.notes.append(setup.get("text", ""))
    steal = getattr(tel, "steal", None)
    if steal and steal.get("ms", 0) > 0:
        v.notes.append(f"the hypervisor took {steal['ms']:.0f} ms of CPU time from this VM "
                       f"during the run ({100 * steal['fraction']:.2g} % of the CPUs' time, "
                       "/proc/stat steal): frames due meanwhile could not run")
    stalls = getattr(tel, "stall_at", [])
    if stalls:
        t, off = stalls[0]
        n = tel.stalls
        v.notes.append(f"{n} stall{'s' if n != 1 else ''} of the frame's thread off the CPU "
                       f"(the longest {off / 1e6:.1f} ms at t = {t:.6g} s): "
                       f"{tel.overruns_stall} overruns")
    spikes = getattr(tel, "spike_at", [])
    if spikes:
        t, cpu = spikes[0]
        v.notes.append(f"{tel.work_spikes} frame{'s' if tel.work_spikes != 1 else ''} whose "
                       f"own work exceeded the period (the largest {cpu / 1e3:.0f} us at "
                       f"t = {t:.6g} s)")
    timing = [c.name for c in v.failed if c.name in TIMING_CHECKS]
    if timing:
        v.overload = overload(tel, setup, steal, timing, hints)
    return v


#: the checks an overloaded machine (or a model too slow for its frame) fails
TIMING_CHECKS = ("overruns", "skipped_frames", "lateness_p99_us", "lateness_max_us")


def overload(tel: Any, setup: dict | None, steal: dict | None, failed: list[str],
             hints: dict | None = None) -> str:
    """One line for failed timing checks: which cause it is, from the runner's own figures
    (:class:`~hil.telemetry.Telemetry`: each overrun's cause from the frame thread's CPU
    time), and what to do.

    * **The frame's own work does not fit the frame**: overruns by the frame's own work
      while its CPU time p99 exceeds :data:`WORK_FITS` of the period (the work regularly
      leaves no room for ordinary wake-up jitter): lengthen the frame or lighten the model;
      no quieter machine helps.
    * **Work spikes**: overruns by single frames whose CPU time exceeded the period while
      the work's p99 fits (page faults, interrupts served on the frame's CPU, caches
      cooled by other work): a longer frame absorbs them, or a budget allows for them.
    * **Other work took the CPU**: overruns in stalls (the frame would have fit, but its
      thread was off the CPU: other processes (load average), the hypervisor (steal), a
      thread of this process holding the GIL), and lateness without overruns; the real-time
      set-up that was not applied is named (SCHED_FIFO needs root or CAP_SYS_NICE).

    Every cause that happened is said, the one with the most overruns first.  ``hints``
    names how the program that ran the runner sets the period and the budget
    (``{"period": "--period S", "budget": "--budget NAME=VALUE"}``; default: the API's
    ``period_s=`` and ``budget=``).
    """
    import os
    hints = {"period": "period_s=", "budget": "budget=", **(hints or {})}
    period_us = tel.period_ns / 1e3
    work = int(getattr(tel, "overruns_work", tel.overruns))
    stall = int(getattr(tel, "overruns_stall", 0))
    h = tel.cpu if getattr(tel, "cpu", None) is not None and tel.cpu.n else tel.execution
    what_work = "CPU time" if h is not tel.execution else "execution time"
    p50 = h.quantile(0.5) / 1e3 if h.n else float("nan")
    p99 = h.quantile(0.99) / 1e3 if h.n else float("nan")
    share = f"{what_work} p99 {p99:.0f} of {period_us:.0f} us, p50 {p50:.0f} us"
    parts = []
    if work and not p99 <= WORK_FITS * period_us:
        parts.append((work, f"the frame's own work does not fit the frame ({share}; {work} "
                            f"of {tel.overruns} overruns by the frame's own work): lengthen "
                            f"the frame ({hints['period']}) or lighten the model (a faster "
                            "solver step, fewer blocks per frame)"))
    elif work:
        spikes = getattr(tel, "spike_at", [])
        big = (f", the largest {spikes[0][1] / 1e3:.0f} us at t = {spikes[0][0]:.6g} s"
               if spikes else "")
        parts.append((work, f"{work} overruns by frames whose own work spiked above the "
                            f"frame{big} while it fits otherwise ({share}): page faults, "
                            "interrupts or cooled caches; a longer frame absorbs them "
                            f"({hints['period']}), or allow for them ({hints['budget']})"))
    if stall or not work:
        try:
            load = os.getloadavg()[0]
        except OSError:  # pragma: no cover - not on Linux
            load = float("nan")
        why = [f"load average {load:.1f} on {os.cpu_count() or 1} CPUs"]
        why.append(f"the hypervisor took {steal['ms']:.0f} ms" if steal and
                   steal.get("ms", 0) > 0 else "no steal time")
        stalls = getattr(tel, "stall_at", [])
        if stalls:
            t, off = stalls[0]
            n = getattr(tel, "stalls", len(stalls))
            why.insert(0, f"{stall} overruns in {n} stall{'s' if n != 1 else ''} of the "
                          f"frame's thread off the CPU, the longest {off / 1e6:.1f} ms at "
                          f"t = {t:.6g} s")
        refused = list((setup or {}).get("refused", ()))
        fifo = "priority" in (setup or {}).get("applied", {})
        todo = ("run it again on a quieter machine (stop other work), or allow for it: a "
                f"longer frame ({hints['period']}) or a larger budget ({hints['budget']})")
        if not fifo:
            todo = ("run as root or with CAP_SYS_NICE so the frame runs SCHED_FIFO above "
                    "other work, or " + todo)
        elif refused:
            todo += f" (not applied: {'; '.join(refused)[:120]})"
        parts.append((stall, f"other work took the CPU while the frame's own work fits "
                             f"({share}) ({'; '.join(why)}); {todo}"))
    parts.sort(key=lambda x: -x[0])
    return f"timing failed ({', '.join(failed)}): " + "; and ".join(p for _, p in parts)


#: The frame's own work fits its frame when its CPU time p99 is at most this share of the
#: period (the rest is the ordinary wake-up jitter's); above it, an overrun by the work is
#: the model's, not a spike's.
WORK_FITS = 0.75


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple | set):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if hasattr(v, "item"):
        return v.item()
    return repr(v)
