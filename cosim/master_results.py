"""Results recording of the co-simulation master: :class:`MasterRecord`, an observer of
the master's communication points held by :class:`~cosim.master.MasterScheduler` as
``master.record``.

It keeps the times and rows of the published outputs at each communication point
(streamed to the stream writers when given), marks the master's cumulative counters after
each macro step, and packs signals, per-macro-step diagnostics and provenance into a
:class:`~cosim.observers.Results`.  What it reads of the master is its recording
interface: ``t``, ``writers``, ``bonds``, ``signal_specs()``, ``outputs_now()``,
``counters`` (:class:`~cosim.master_counters.MasterCounters`), ``run_diagnostics()``,
``provenance()`` and ``tick_progress()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from time import perf_counter as _perf
from typing import Any

import numpy as np

from .observers import Results
from .ports import kept_dtype
from .time import SECONDS_PER_TICK
from .versions import package_versions as _package_versions

_NS = SECONDS_PER_TICK
_VERSIONS: list = []


def package_versions() -> dict:
    """The provenance's package versions, read once per process (:mod:`cosim.versions`)."""
    if not _VERSIONS:
        _VERSIONS.append(_package_versions())
    return dict(_VERSIONS[0])


#: the columns of a mark: t, H, wall clock, then ``MasterCounters.values()``
_MARK_FIXED = 3


class MasterRecord:
    """The rows, per-macro-step marks and results of one run of ``master`` (module
    docstring).  :meth:`start` at the first communication point, :meth:`point` after
    every accepted macro step that is kept (:meth:`mark` for one that is not),
    :meth:`mark_bulk` after a compiled loop's steps, :meth:`results` at the end."""

    def __init__(self, master: Any) -> None:
        self.master = master
        self.times: list = []
        self.rows: Any = []
        self._marks: list[tuple] = []
        self._bulk: list = []

    def start(self) -> None:
        """The first communication point (the master initialized at its start time)."""
        m = self.master
        self._marks, self._bulk = [], []
        self.mark(0)
        self.times = [m.t * _NS]
        self.rows = self._new_rows()
        self.rows.append(m.outputs_now())

    def point(self, H: int, row: list | None = None) -> None:
        """The macro step of ``H`` that ended at ``master.t``, kept: marked, its time and
        its row (the published outputs, or ``row``) appended."""
        self.mark(H)
        self.times.append(self.master.t * _NS)
        self.rows.append(self.master.outputs_now() if row is None else row)

    def mark(self, H: int) -> None:
        """Cumulative counters after the macro step of ``H`` that just ended at
        ``master.t``.  Differences of consecutive marks are the per-macro-step
        diagnostics (a step's rejected attempts count towards the accepted one)."""
        m = self.master
        self._marks.append((m.t, H, _perf(), *m.counters.values(bool(m.bonds))))
        m.tick_progress()

    def mark_bulk(self, t_start: int, H: int, n: int, wall: float) -> None:
        """Marks of ``n`` macro steps of ``H`` from ``t_start`` run by a compiled loop
        (``wall`` spread evenly: the loop does not time single steps)."""
        if n:
            self._bulk.append((len(self._marks), t_start, H, n, wall))
            self.mark(H)  # the cumulative counters after the last of them

    @property
    def n_marks(self) -> int:
        return len(self._marks)

    @property
    def n_times(self) -> int:
        """The communication points kept so far (a compiled loop's block counts each)."""
        return sum(len(x) if isinstance(x, np.ndarray) else 1 for x in self.times)

    def time_array(self) -> np.ndarray:
        """The kept times [s] as one array: ``times`` holds floats (the Python loop's points)
        and arrays (a compiled loop's blocks, appended whole rather than as floats)."""
        if not any(isinstance(x, np.ndarray) for x in self.times):
            return np.asarray(self.times, dtype=float)
        parts = [np.asarray(list(g), dtype=float) if not block else np.concatenate(list(g))
                 for block, g in groupby(self.times, key=lambda x: isinstance(x, np.ndarray))]
        return np.concatenate(parts)

    def _new_rows(self) -> list:
        """The list the run appends communication points to (streamed with writers)."""
        m = self.master
        if not m.writers:
            return []
        prov = m.provenance(stream=True)
        signals = [_Signal(*spec) for spec in m.signal_specs()]
        for w in m.writers:
            w.start_rows(signals, prov)
        return _StreamedRows(m)

    def macro_diagnostics(self) -> dict[str, np.ndarray]:
        """Per accepted macro step: ``t``, ``H``, ``wall_s``, ``iterations``,
        ``residual``, ``rejections`` (and ``energy_residual``, ``wall_s/<subsystem>``)."""
        m = self.master
        names = m.counters.names(bool(m.bonds))
        width = _MARK_FIXED + len(names)
        marks = np.array(self._marks, dtype=float).reshape(-1, width)
        d = np.diff(marks, axis=0)
        col = {n: _MARK_FIXED + j for j, n in enumerate(names)}
        t, Hs = marks[1:, 0], marks[1:, 1]
        res = marks[1:, col["last_residual"]]
        bulk = [(pos - 1, t_start, H, n) for pos, t_start, H, n, _wall in self._bulk]

        def spread(v: np.ndarray, each=None) -> np.ndarray:
            """``v`` (one entry per mark difference) with each compiled run's one entry
            made its ``n`` steps' entries: ``each(i, ...)`` or the entry / n (a counter's
            difference spread evenly)."""
            if not bulk:
                return v
            parts, at = [], 0
            for i, t_start, H, n in bulk:
                parts.append(v[at:i])
                parts.append(each(i, t_start, H, n) if each else np.full(n, v[i] / n))
                at = i + 1
            parts.append(v[at:])
            parts = [x for x in parts if len(x)]
            return parts[0] if len(parts) == 1 else np.concatenate(parts)
        t = spread(t, lambda i, t0, H, n: t0 + H * np.arange(1, n + 1, dtype=float))
        Hs = spread(Hs, lambda i, t0, H, n: np.full(n, float(H)))
        res = spread(res, lambda i, t0, H, n: np.full(n, res[i]))
        wanted = [2, col["iteration_total"], col["rejections"]] + \
            [j for name, j in col.items() if name == "energy_total" or name.startswith("wall/")]
        d = {j: spread(d[:, j]) for j in wanted}
        iters = d[col["iteration_total"]]
        out = {"t": t * _NS, "H": Hs * _NS, "wall_s": d[2],
               "iterations": np.where(iters > 0, iters, 1.0).astype(int),
               "residual": res, "rejections": d[col["rejections"]].astype(int)}
        if "energy_total" in col:
            out["energy_residual"] = d[col["energy_total"]]
        for name, j in col.items():
            if name.startswith("wall/"):
                out[f"wall_s/{name[5:]}"] = d[j]
        return out

    def results(self, wall: float, n_steps: int, array: np.ndarray | None = None) -> Results:
        """The run's :class:`Results`: the kept rows (then ``array``, the rows of a
        compiled loop), the master's diagnostics with the per-macro-step ones
        (``macro``), the provenance."""
        m = self.master
        t = self.time_array()
        signals, units = {}, {}
        for j, (path, unit, shape, dtype) in enumerate(m.signal_specs()):
            dtype = kept_dtype(dtype)  # non-Real signals in their own type
            arr = np.array([r[j] for r in self.rows], dtype=dtype)
            if array is not None:  # rows of a compiled loop after the Python ones
                arr = np.concatenate([arr, array[:, j].astype(dtype)])
            signals[path] = arr if shape == () else arr.reshape((len(t),) + shape)
            units[path] = unit
        diag = m.run_diagnostics(wall, n_steps)
        diag["macro"] = self.macro_diagnostics()
        return Results(t, signals, units, m.provenance(), diag)


@dataclass(frozen=True)
class _Signal:
    """A column of the master's rows, as the stream writers see a port."""

    path: str
    unit_text: str
    shape: tuple
    dtype: Any = np.dtype(float)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1


class _StreamedRows(list):
    """The rows of a run; each appended row also goes to the master's writers."""

    def __init__(self, master: Any) -> None:
        super().__init__()
        self.master = master

    def append(self, row: Any) -> None:
        super().append(row)
        t = self.master.t * _NS
        for w in self.master.writers:
            w.write_row(t, row)
