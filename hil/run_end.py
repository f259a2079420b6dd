"""The end of a ``cosim hil run``: what ``finish(run)`` gets (:class:`RunEnd`) and the
run's verdict, joined by the peers', the bus logs' and ``finish``'s checks."""

from __future__ import annotations

import argparse
import os
import signal
import traceback
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .interfaces import Interfaces

__all__ = ["RunEnd", "end_verdict", "status"]


class RunEnd:
    """What a model file's ``finish(run)`` gets after the run (module docstring).

    Attributes
    ----------
    out : str
        The output folder.
    results : Results
        What the simulator recorded in memory (a returned Simulator's recorder; no
        signals for a returned Diagram, whose results go only to the files).
    time : float
        Simulated time reached [s]; ``duration_s`` the run's planned duration.
    stopped_by : str or None
        Why the run ended before its duration (a signal, a peer's end), else None.
    verdict : Verdict
        The runner's verdict, joined by the peers'.
    io : Interfaces
        The interfaces and peers (still open: the backends close after ``finish``).
    summary : dict
        Entries for ``summary.json`` (kept under ``"finish"``).
    """

    def __init__(self, out: str, results: Any, time_s: float, duration_s: float,
                 stopped_by: str | None, verdict: Any, io: Interfaces) -> None:
        self.out, self.results, self.io = out, results, io
        self.time, self.duration_s, self.stopped_by = time_s, duration_s, stopped_by
        self.verdict = verdict
        self.summary: dict = {}
        self.checks: list = []
        self.notes: list[str] = []
        self.files: list[str] = []

    def check(self, name: str, ok: bool, text: str, figure: Any = None,
              limit: Any = None) -> None:
        """Add a check to the run's verdict."""
        from .verdict import Check
        self.checks.append(Check(name, figure, limit, bool(ok), text))

    def note(self, text: str) -> None:
        """Add a note to the run's verdict (what was not judged, and why)."""
        self.notes.append(text)

    def wrote(self, path: str | os.PathLike[str]) -> None:
        """Say that ``finish`` wrote this file (printed and listed in summary.json)."""
        self.files.append(str(path))


def end_verdict(runner: Any, parts: list, log_errors: list[str], io: Interfaces,
                finish: Any, res: Any, out: str, t: float, duration_s: float,
                error: BaseException | None, args: argparse.Namespace) -> tuple[Any, RunEnd]:
    """The run's verdict: the runner's, joined by the peers' (checks named ``peer:
    check``), the bus logs' errors and the model's ``finish`` checks; ``finish``'s notes
    first (the one-line verdict shows the first two)."""
    from .verdict import Check, Verdict
    base = runner.verdict
    verdict = base
    if parts:
        verdict = Verdict.combine(f"{base.subject} with {', '.join(io.peers)}", [base, *parts])
        verdict.io = getattr(base, "io", None)
    tel = runner.telemetry
    end = RunEnd(out, res, t, duration_s, tel.stopped_by if tel else None, verdict, io)
    verdict.checks += [Check("bus_log", e, "written", False, e) for e in log_errors]
    if finish is None:
        return verdict, end
    if error is not None:
        end.note(f"finish() not called: the run failed ({type(error).__name__})")
    else:
        try:
            finish(end)
        except Exception as exc:  # noqa: BLE001 - a failed check, the rest is written
            if args.debug:
                traceback.print_exception(exc)
            end.check("finish", False, f"finish() failed: {type(exc).__name__}: {exc} "
                      "(--traceback shows where)", figure=f"{type(exc).__name__}: {exc}",
                      limit="no error")
    verdict.checks += end.checks
    verdict.notes[:0] = end.notes
    return verdict, end


def status(error: BaseException | None, signum: int | None) -> str:
    if isinstance(error, KeyboardInterrupt):
        return f"interrupted by {error}"
    if error is not None:
        return f"error: {type(error).__name__}: {error}"
    if signum is not None:
        return f"stopped by {signal.Signals(signum).name}"
    return "complete"
