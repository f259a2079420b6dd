"""Results recording of the co-simulation master.

:class:`ResultsRecorder` is a mixin of :class:`~cosim.master.MasterScheduler`:
it snapshots the published outputs at each communication point (streamed to
the stream writers when given), marks the cumulative counters after each macro
step, and packs signals, per-macro-step diagnostics and provenance into a
:class:`~cosim.observers.Results`.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter as _perf
from typing import Any

import numpy as np

from .observers import Results
from .observers import package_versions as _package_versions
from .ports import kept_dtype
from .time import SECONDS_PER_TICK

_NS = SECONDS_PER_TICK
_VERSIONS: list = []


def package_versions() -> dict:
    """The provenance's package versions, read once per process (reading the installed
    metadata costs ~20 ms, more than a compiled run of 10 000 macro steps)."""
    if not _VERSIONS:
        _VERSIONS.append(_package_versions())
    return dict(_VERSIONS[0])


class ResultsRecorder:
    """Rows, per-macro-step marks and the final results (mixin of ``MasterScheduler``)."""

    def _dtype(self, sname: str, o: str) -> Any:
        """The declared dtype of output ``o`` of ``sname``; undeclared: text stays text
        (object), the rest float."""
        dtype = getattr(self.by_name[sname], "dtypes", {}).get(o)
        if dtype is None:
            last = self.histories[(sname, o)].v
            dtype = object if last and isinstance(last[-1], (str, bytes)) else float
        return np.dtype(dtype)

    def _signals(self) -> list:
        return [_Signal(f"{sname}.{o}", self.by_name[sname].units[o] or "",
                        tuple(self.by_name[sname].shapes[o]), self._dtype(sname, o))
                for sname, o in self.histories]

    def _rows(self) -> list:
        """The list the runs append communication points to (streamed with writers)."""
        if not self.writers:
            return []
        prov = {"model": "+".join(s.name for s in self.subsystems),
                "master": {"H_s": self.H * _NS, "coupling": type(self.coupling).__name__,
                           "extrapolation": sorted({int(v) for v in self.orders.values()})},
                "versions": package_versions()}
        signals = self._signals()
        for w in self.writers:
            w.start_rows(signals, prov)
        return _StreamedRows(self)

    def _mark(self, H: int) -> None:
        """Cumulative counters after the macro step that just ended at ``self.t``.

        Differences of consecutive marks are the per-macro-step diagnostics (a
        step's rejected attempts count towards the accepted one).
        """
        self._marks.append((self.t, H, _perf(), self.iteration_total,
                            self.last_residual, self.rejections, self.energy_total,
                            *self.wall.values()))
        self._bar.tick(self.t)

    def _mark_bulk(self, t_start: int, H: int, n: int, wall: float) -> None:
        """Marks of ``n`` macro steps of ``H`` from ``t_start`` run by a compiled loop
        (``wall`` spread evenly: the loop does not time single steps)."""
        if n:
            self._bulk.append((len(self._marks), t_start, H, n, wall))
            self._mark(H)  # the cumulative counters after the last of them

    def _macro_diagnostics(self) -> dict[str, np.ndarray]:
        m = np.array(self._marks, dtype=float).reshape(-1, 7 + len(self.wall))
        d = np.diff(m, axis=0)
        t, Hs, res = m[1:, 0], m[1:, 1], m[1:, 4]
        for pos, t_start, H, n, _wall in reversed(self._bulk):
            # the one difference row of a compiled run's n steps, spread over them
            i = pos - 1
            rows = np.repeat(d[i:i + 1] / n, n, axis=0)
            d = np.concatenate([d[:i], rows, d[i + 1:]])
            ts = t_start + H * np.arange(1, n + 1, dtype=float)
            t = np.concatenate([t[:i], ts, t[i + 1:]])
            Hs = np.concatenate([Hs[:i], np.full(n, float(H)), Hs[i + 1:]])
            res = np.concatenate([res[:i], np.full(n, res[i]), res[i + 1:]])
        iters = d[:, 3]
        out = {"t": t * _NS, "H": Hs * _NS, "wall_s": d[:, 2],
               "iterations": np.where(iters > 0, iters, 1.0).astype(int),
               "residual": res, "rejections": d[:, 5].astype(int)}
        if self.bonds:
            out["energy_residual"] = d[:, 6]
        for j, name in enumerate(self.wall):
            out[f"wall_s/{name}"] = d[:, 7 + j]
        return out

    def _snapshot_outputs(self) -> list:
        return [h.v[-1] for h in self._hist_list]  # values are never modified in place

    def _results(self, times: list, rows: list, wall: float, n_steps: int,
                 array: np.ndarray | None = None) -> Results:
        t = np.asarray(times)
        signals, units = {}, {}
        for j, (sname, o) in enumerate(self.histories):
            dtype = kept_dtype(self._dtype(sname, o))  # non-Real signals in their own type
            arr = np.array([r[j] for r in rows], dtype=dtype)
            if array is not None:  # rows of a compiled loop after the Python ones
                arr = np.concatenate([arr, array[:, j].astype(dtype)])
            shape = self.by_name[sname].shapes[o]
            signals[f"{sname}.{o}"] = arr if shape == () else arr.reshape((len(t),) + shape)
            units[f"{sname}.{o}"] = self.by_name[sname].units[o] or ""
        sub_wall = sum(self.wall.values())
        diag = {
            "macro_steps": n_steps, "communications": self.exchanges, "wall_s": wall,
            "subsystem_wall_s": dict(self.wall), "subsystem_steps": dict(self.steps),
            "master_overhead_us_per_subsystem_step":
                1e6 * (wall - sub_wall) / max(1, sum(self.steps.values())),
            "init_sweeps": self.init_sweeps,
            "startup_sweeps": self.startup_sweeps,
            "loop_solves": self.loop_solves,
            "loop_evaluations_per_solve": self.loop_evaluations / max(1, self.loop_solves),
            "rollbacks": self.rollbacks,
            "rejections": self.rejections,
            "step_sizes_s": list(self.step_sizes),
            "unrecoverable_steps": getattr(self, "unrecoverable", 0),
            "steps_over_tol_at_h_min": getattr(self, "over_tol_at_min", 0),
            "energy_residual_total": self.energy_total if self.bonds else None,
            "compiled": self.compiled_reason or True,
            "macro": self._macro_diagnostics(),
            "iterations_per_step_max": max(self.iterations, default=0),
            "iterations_per_step_mean": float(np.mean(self.iterations)) if self.iterations
            else 0.0,
        }
        if getattr(self, "terminated", None):
            diag["terminated"] = dict(self.terminated)
        prov = {"model": "+".join(self.by_name), "coupling": self.coupling.name,
                "macro_step_s": self.H * _NS, "extrapolation": {".".join(k): v for k, v in
                                                               self.orders.items()},
                "versions": package_versions()}
        return Results(t, signals, units, prov, diag)


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
