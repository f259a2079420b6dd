"""A study: one model, a design of parameter points, an executor, a dataset on disk.

>>> study = Study("examples/msd_pid.py", grid(**{"pid.kp": [1, 2, 4]}), t_end=5.0,
...               solver="rk4", dt=1e-3, metrics="metrics")          # doctest: +SKIP
>>> df = study.run("out/kp_sweep", LocalExecutor(2))                  # doctest: +SKIP

:meth:`Study.run` skips the points already in the folder's journal (an interrupted study
resumes where it stopped: only the missing runs are computed), sends the rest to the
executor, appends each finished run to the journal as it arrives, shows a progress line
(done, failed, remaining, rate, time left) and returns the table of all runs.  A failed
run is recorded with its error and the study goes on; ``retry_failed=True`` runs the
failed points again.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from ..errors import CosimError
from .design import run_id
from .executors import LocalExecutor, SerialExecutor
from .model import ModelSpec
from .runner import RunSettings, run_one
from .store import ResultStore


class StudyProgress:
    """``runs 37/200: 35 ok, 2 failed, 163 to go, 4.1 runs/s, ~40 s left`` on stderr."""

    def __init__(self, total: int, skipped: int, enabled: bool = True,
                 stream: Any = None) -> None:
        self.total, self.skipped, self.enabled = total, skipped, enabled
        self.stream = stream or sys.stderr
        self.ok = self.failed = 0
        self.t0 = time.perf_counter()
        self._last = 0.0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, record: dict) -> None:
        if record["status"] == "ok":
            self.ok += 1
        else:
            self.failed += 1
        now = time.perf_counter()
        if self.enabled and (now - self._last > (0.2 if self.tty else 5.0)
                             or self.ok + self.failed + self.skipped == self.total):
            self._last = now
            self._print(now)

    def line(self, now: float | None = None) -> str:
        now = time.perf_counter() if now is None else now
        done = self.ok + self.failed
        left = self.total - self.skipped - done
        rate = done / max(now - self.t0, 1e-9)
        eta = f", ~{left / rate:.0f} s left" if rate > 0 and left else ""
        return (f"runs {done + self.skipped}/{self.total}: {self.ok} ok, {self.failed} failed"
                f" ({self.skipped} from before), {left} to go, {rate:.2f} runs/s{eta}")

    def _print(self, now: float) -> None:
        end = "\r" if self.tty else "\n"
        self._shown = (self.ok, self.failed)
        print(self.line(now), end=end, file=self.stream, flush=True)

    def close(self) -> None:
        if self.enabled and (self.tty or getattr(self, "_shown", None) != (self.ok,
                                                                            self.failed)):
            print(self.line(), file=self.stream, flush=True)


class Study:
    """Parameter study of a model (see the module docstring).

    ``model``: a model file path or module with a diagram function (``function``, default
    ``build``); ``design``: a list of parameter points (:mod:`.design`); names with a dot
    are context parameters, others keyword arguments of the diagram function.
    ``metrics``: the name of a function ``metrics(results, point) -> dict`` in the model
    (default: the final value of every recorded scalar signal).  ``call``: instead of a
    diagram, the name of a function of the model called as ``call(**point) -> dict`` (a
    co-simulation master run, a script).
    """

    def __init__(self, model: str, design: list[dict], t_end: float | None = None,
                 solver: str = "rk4", dt: float | None = None, rtol: float = 1e-6,
                 atol: float = 1e-9, record: Any = "all", metrics: str | None = None,
                 function: str | None = None, call: str | None = None) -> None:
        if not design:
            raise CosimError("Study: the design has no points")
        self.spec = ModelSpec(str(model), function)
        self.design = [dict(p) for p in design]
        self.ids = [run_id(p) for p in self.design]
        if len(set(self.ids)) != len(self.ids):
            raise CosimError("Study: the design repeats a parameter point; each point is "
                             "run once (its run id is the hash of its values)")
        if call is None and t_end is None:
            raise CosimError("Study: give t_end (simulate the model's diagram) or call (the "
                             "name of a function of the model run with each point)")
        rec = record if isinstance(record, str) else tuple(record)
        self.settings = RunSettings(None if t_end is None else float(t_end), solver, dt, rtol,
                                    atol, rec, metrics, call)

    def manifest(self) -> dict:
        return {"settings": {"model": self.spec.source, "function": self.spec.function,
                             **self.settings.as_dict()},
                "design": self.design}

    def run(self, out: str, executor: SerialExecutor | None = None, progress: bool = True,
            retry_failed: bool = False, max_runs: int | None = None,
            flush_every: int = 20) -> Any:
        """Run the missing points into the folder ``out``; returns the pandas table of
        this design's runs (the folder's table holds every run it has seen).

        ``max_runs`` stops after that many new runs (a partial study, as if killed).
        """
        store = ResultStore(out, flush_every)
        store.check_manifest(self.manifest())
        done = store.done(retry_failed)
        todo = [(self.spec, self.settings, i, rid, p)
                for i, (rid, p) in enumerate(zip(self.ids, self.design)) if rid not in done]
        if max_runs is not None:
            todo = todo[:int(max_runs)]
        bar = StudyProgress(len(self.design), sum(rid in done for rid in self.ids), progress)
        own = executor is None
        executor = executor or LocalExecutor()
        try:
            for record in executor.map_unordered(run_one, todo):
                store.add(record)
                bar.update(record)
        finally:
            if own:
                executor.close()
            store.write_table()
            bar.close()
        df = store.dataframe()
        return df[df.run_id.isin(set(self.ids))].reset_index(drop=True)
