"""The tests that depend on timing (the ``timing`` marker, issue 30): how their real-time
verdicts are judged, and how many were not judged.

A test may assert that a real-time run's verdict is *honest* (:func:`assert_honest`):
PASS, or FAIL on timing checks alone with the runner's own diagnosis of the cause
(``Verdict.overload``, :func:`hil.verdict.overload`).  How fast a machine is belongs in the
benchmarks, not in pass/fail.  A test whose subject needs a quiet machine hands its verdict
(a loop that keeps up) to :func:`judge_timing`, or its figure (a latency, a duration's
upper bound) to :func:`judge_figure`: it passes, fails, or is skipped as ``overloaded: not
judged: <why>`` when the run failed on timing only and the runner's diagnosis puts it down
to other work, or the figure missed its bound while the machine was busy; the terminal
summary counts those (:func:`pytest_terminal_summary`).  A wait whose length is not the
subject waits on its condition with a generous deadline (:func:`wait_for`,
:data:`GENEROUS_S`).

Loaded by ``tests/conftest.py`` (``pytest_plugins``).

Limitations: the cause is read from the diagnosis's words (:data:`OTHER_WORK`,
:data:`OWN_WORK`, :data:`SPIKES`; ``tests/unit/test_timing_marks.py`` checks that
:func:`hil.verdict.overload` still says them); the machine's CPU pressure during a test is
read from Linux's ``/proc/pressure/cpu`` (elsewhere: the load average per CPU).
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Sequence
from typing import Any

import pytest

#: the reason of every skip by :func:`judge_timing`
NOT_JUDGED = "overloaded: not judged"
#: the diagnosis's words for each cause (hil/verdict.py ``overload``)
OTHER_WORK = "other work took the CPU"
OWN_WORK = "the frame's own work does not fit the frame"
SPIKES = "whose own work spiked"
#: the deadline of a wait whose length is not the test's subject: generous, since a wait on
#: a condition ends as soon as it holds (a busy machine only makes it longer)
GENEROUS_S = 30.0
#: the share of a test's wall time in which runnable tasks waited for a CPU, above which the
#: machine counts as busy during that test (work spikes are then put down to it)
BUSY_PRESSURE = 0.10

_started: dict[str, tuple[float, float | None]] = {}  # test id -> (wall s, pressure s)
_current: list[str] = []


def _cpu_pressure_s() -> float | None:
    """Seconds in which some runnable task waited for a CPU since boot (``None``: unknown)."""
    try:
        with open("/proc/pressure/cpu", encoding="ascii") as f:
            some = f.readline().split()
    except OSError:
        return None
    total = [x for x in some if x.startswith("total=")]
    return int(total[0][6:]) / 1e6 if total else None


def machine_busy() -> tuple[bool, str]:
    """Whether the machine was busy during the running test, and the figure that says so
    (CPU pressure since the test started, else the load average per CPU)."""
    start = _started.get(_current[-1]) if _current else None
    now = _cpu_pressure_s()
    if start is not None and start[1] is not None and now is not None:
        wall = max(time.monotonic() - start[0], 1e-3)
        share = (now - start[1]) / wall
        return share >= BUSY_PRESSURE, (f"CPU pressure {100 * share:.0f} % of the test's "
                                        f"{wall:.1f} s (/proc/pressure/cpu)")
    load = os.getloadavg()[0]
    cpus = os.cpu_count() or 1
    return load >= cpus, f"load average {load:.1f} on {cpus} CPUs"


def _as_dict(verdict: Any) -> dict:
    return verdict.as_dict() if hasattr(verdict, "as_dict") else dict(verdict)


def _timing_checks() -> tuple:
    from hil.verdict import TIMING_CHECKS
    return TIMING_CHECKS


def assert_honest(verdict: Any, what: str = "the run", *, parts: Sequence = (),
                  consequences: Sequence[str] = ()) -> dict:
    """Assert that a real-time verdict (a :class:`~hil.verdict.Verdict` or its
    ``as_dict()``, also a combined one whose checks are named ``part: check``) is honest:
    PASS, or FAIL whose failed checks are timing checks and whose one line leads with the
    runner's diagnosis of the cause.  Returns the verdict as a dict, with ``"overload"``
    the diagnosis.

    ``parts``: the verdicts of other processes combined into it (their summaries), whose
    diagnosis counts when the combined verdict has none of its own.  ``consequences``:
    patterns (:mod:`fnmatch`) of the checks that a loop's overload makes fail in turn (a
    stale input, a control acceptance); they may fail only beside a failed timing check."""
    d = _as_dict(verdict)
    if d["passed"]:
        assert not d["failed"] and d["exit_code"] == 0, d
        return d
    timing_checks = _timing_checks()
    timing = [n for n in d["failed"] if n.split(": ")[-1] in timing_checks]
    other = [n for n in d["failed"] if n not in timing and not (timing and any(
        fnmatch.fnmatchcase(n, p) for p in consequences))]
    assert not other, f"{what} failed on checks other than timing {other}: {d['line']}"
    whys = [d.get("overload")] + [_as_dict(p).get("overload") for p in parts]
    why = next((w for w in whys if w), None)
    assert why and why.startswith("timing failed ("), (
        f"{what} failed on timing without the runner's diagnosis of the cause: {d['line']}")
    assert any(c in why for c in (OTHER_WORK, OWN_WORK, SPIKES)), (
        f"{what}: the diagnosis names no cause: {why}")
    assert d["exit_code"] == 1 and (why in d["line"] or not d.get("overload")), d["line"]
    return {**d, "overload": why}


def judge_timing(verdict: Any, what: str = "the run", *, parts: Sequence = (),
                 consequences: Sequence[str] = ()) -> dict:
    """The verdict of a run whose subject needs a quiet machine: returns it (as a dict) when
    it passed; skips the test as ``overloaded: not judged: <diagnosis>`` when it failed on
    timing checks (and their ``consequences``, :func:`assert_honest`) and the runner puts
    that down to other work (stalls, load, steal) or to work spikes on a machine that was
    busy during the test; fails the test otherwise (another check failed, no diagnosis,
    or the frame's own work does not fit its frame: the model's, which no quieter machine
    helps)."""
    d = assert_honest(verdict, what, parts=parts, consequences=consequences)
    if d["passed"]:
        return d
    why = d["overload"]
    if OWN_WORK in why:
        pytest.fail(f"{what}: the frame's own work does not fit its frame (the model's, not "
                    f"the machine's load): {d['line']}")
    if OTHER_WORK in why:
        also = [n for n in d["failed"] if n.split(": ")[-1] not in _timing_checks()]
        pytest.skip(f"{NOT_JUDGED}: {why}" + (f" (and in turn: {', '.join(also)})"
                                              if also else ""))
    busy, figure = machine_busy()
    if busy:
        pytest.skip(f"{NOT_JUDGED}: {why} (the machine was busy: {figure})")
    pytest.fail(f"{what}: work spikes on a quiet machine ({figure}): {d['line']}")


def judge_figure(ok: bool, what: str, *, other_work: str | None = None) -> None:
    """A speed figure a test states (a latency, a duration's upper bound; ``what`` says
    the figure and its bound): nothing when ``ok``; skipped as ``overloaded: not judged``
    when it is not and the machine was busy during the test (:func:`machine_busy`);
    failed on a quiet machine.  ``other_work``: the run's own figures that put a miss down
    to other work (a real-time loop's stalls), which then decide instead of the machine's
    CPU pressure (``""``: there are none: the miss fails)."""
    if ok:
        return
    if other_work is not None:
        if other_work:
            pytest.skip(f"{NOT_JUDGED}: {what} ({other_work})")
        pytest.fail(f"{what}, and the run's figures show no other work that explains it")
    busy, figure = machine_busy()
    if busy:
        pytest.skip(f"{NOT_JUDGED}: {what} (the machine was busy: {figure})")
    pytest.fail(f"{what}, on a quiet machine ({figure})")


def wait_for(condition: Any, what: str, timeout: float = GENEROUS_S, poll: float = 0.002):
    """Wait until ``condition()`` is true and return its value; after ``timeout`` seconds
    fail saying ``what`` did not happen (instead of a fixed sleep that a busy machine
    outlasts)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(poll)


def process_gone(pid: int, timeout: float = GENEROUS_S) -> bool:
    """True once process ``pid`` has ended (a zombie left to a parent that does not reap
    counts), polled up to ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while True:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(0.02)


# ------------------------------------------------------------------ hooks
def pytest_runtest_setup(item: pytest.Item) -> None:
    _current[:] = [item.nodeid]
    _started[item.nodeid] = (time.monotonic(), _cpu_pressure_s())


def pytest_runtest_teardown(item: pytest.Item) -> None:
    _started.pop(item.nodeid, None)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """How many timing tests ran, and which were not judged (overloaded)."""
    tr = terminalreporter
    not_judged = []
    for rep in tr.stats.get("skipped", []):
        lr = rep.longrepr
        reason = lr[2] if isinstance(lr, tuple) and len(lr) == 3 else str(lr)
        if NOT_JUDGED in reason:
            not_judged.append((rep.nodeid, reason.removeprefix("Skipped: ")))
    ran = len({rep.nodeid for key in ("passed", "failed", "skipped", "error")
               for rep in tr.stats.get(key, []) if "timing" in getattr(rep, "keywords", {})})
    if not (ran or not_judged):
        return
    tr.write_sep("-", "timing tests (marker 'timing')")
    tr.write_line(f"{ran} timing tests ran, {len(not_judged)} of them {NOT_JUDGED}")
    for nodeid, reason in not_judged:
        tr.write_line(f"  {nodeid}: {reason[:300]}")
