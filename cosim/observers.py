"""Read hooks: observers, the in-memory recorder and the results object.

An :class:`Observer` is called after every major output evaluation (sample
hits, solver steps of fixed-step runs, output-grid points of variable-step
runs, events).  Observers only read; writing is for manipulators.

:class:`Recorder` keeps chosen signals in memory with decimation and makes a
:class:`Results` object: time, signals, units and provenance (model hash,
solver settings, package versions), exportable to pandas.
"""

from __future__ import annotations

import hashlib
import operator
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import PortError
from .ports import kept_dtype
from .versions import package_versions


class Observer:
    """Base class of read hooks; override what you need."""

    def required_ports(self) -> list:
        """Output ports this observer reads (they are always computed).

        Called after the optional ``bind(sim)`` hook, before the program is compiled.
        """
        return []

    def on_start(self, sim: Any) -> None:
        """Called once after initialization, before the first sample."""

    def on_sample(self, sim: Any) -> None:
        """Called after each major output evaluation (``sim.ctx`` is current).

        An observer may also define ``wants_sample() -> bool``: when every observer of a
        run does, the fixed-step loop evaluates the outputs only before the samples some
        observer reads (``on_sample`` is still called every step, with stale outputs on
        the others; :class:`Recorder` with ``record_every`` uses this).
        """

    def on_finish(self, sim: Any, error: BaseException | None = None) -> None:
        """Called at the end of the run, also when it fails (then with the error)."""


def resolve_ports(diagram: Any, ports: Any) -> list:
    """Ports given as handles or path strings; ``"all"`` = every leaf output."""
    from .ports import OutputPort
    if ports is None or ports == "all":
        out = []
        for b in diagram.leaf_blocks():
            out.extend(p for p in b.outputs.values() if p.size <= 16)
        for p in diagram.outputs.values():
            out.append(p)
        return out
    if isinstance(ports, (str, OutputPort)):
        ports = [ports]
    res = []
    for p in ports:
        if isinstance(p, str):
            p = diagram.find(p)
        if not isinstance(p, OutputPort):
            raise PortError(f"record: {getattr(p, 'path', p)!r} is not an output port")
        res.append(p)
    return res


class Decimator:
    """Keep one sample in ``every``: on the simulator's time grid when it has one (the
    points ``t0 + k * every * dt``, plus every sample off the ``dt`` grid, i.e. at
    events, so event samples never shift the grid), else by count."""

    def __init__(self, every: int) -> None:
        self.every = int(every)
        self.reset(None)

    def reset(self, sim: Any) -> None:
        self._n = 0
        dt = getattr(sim, "dt_ticks", None) if sim is not None else None
        self._ctx = sim.ctx if dt and self.every > 1 else None
        self._dt, self._grid = dt, (dt or 0) * self.every
        self._t0 = sim.ctx.ticks if self._ctx is not None else 0

    def wants(self) -> bool:
        if self._ctx is None:
            return self._n % self.every == 0
        k = self._ctx.ticks - self._t0
        return k % self._grid == 0 or k % self._dt != 0

    def keep(self) -> bool:
        """Whether this sample is kept (advances the count)."""
        w = self.wants()
        self._n += 1
        return w


class Recorder(Observer):
    """Record output ports in memory, every ``every``-th sample.

    Parameters
    ----------
    ports : list of ports or paths, or ``"all"``
    every : int
        Decimation: keep one sample in ``every`` (:class:`Decimator`: on the time
        grid, with event samples kept).
    """

    def __init__(self, ports: Any = "all", every: int = 1) -> None:
        if int(every) < 1:
            raise ValueError(f"Recorder: every must be >= 1, got {every!r}")
        self.spec = ports
        self.every = int(every)
        self.ports: list = []
        self.times: list[float] = []
        self.rows: list[tuple] = []
        self._dec = Decimator(self.every)

    def required_ports(self) -> list:
        return self.ports

    def bind(self, sim: Any) -> None:
        """Resolve the ports against the simulator's diagram (called before compiling)."""
        self.ports = resolve_ports(sim.diagram, self.spec)
        slots = [sim.plan.output_slot[p] for p in self.ports]
        self._has_arrays = any(p.shape != () for p in self.ports)
        if len(slots) == 1:
            k = slots[0]
            self._get = lambda s: (s[k],)
        elif slots:
            self._get = operator.itemgetter(*slots)
        else:
            self._get = lambda s: ()

    def on_start(self, sim: Any) -> None:
        self.times, self.rows = [], []
        self._dec.reset(sim)

    def wants_sample(self) -> bool:
        """Whether the next :meth:`on_sample` records (the others only count): the
        simulator evaluates the outputs for it only then."""
        return self._dec.wants()

    def on_sample(self, sim: Any) -> None:
        if not self._dec.keep():
            return
        self.times.append(sim.ctx.time)
        row = self._get(sim.ctx.signals)
        if self._has_arrays:
            row = tuple(v.copy() if isinstance(v, np.ndarray) else v for v in row)
        self.rows.append(row)

    def extend(self, times: np.ndarray, rows: np.ndarray, widths: list[int]) -> None:
        """Samples a compiled run kept (:mod:`cosim.compiled_run`: its decimation is this
        recorder's): ``times`` and ``rows`` (one float column per element of each port, the
        ports' ``widths``), kept as one block."""
        self.times.append(np.array(times, dtype=float))
        self.rows.append(_RowBlock(np.array(rows, dtype=float), widths))

    def results(self, sim: Any) -> Results:
        units = {p.path: p.unit_text or "" for p in self.ports}
        if not any(isinstance(r, _RowBlock) for r in self.rows):
            return Results(np.asarray(self.times, dtype=float),
                           self._columns(self.rows), units, provenance(sim))
        times, parts = [], []  # the samples in order: Python ones grouped, then blocks
        python: list = []
        for tt, r in zip(self.times, self.rows):
            if isinstance(r, _RowBlock):
                if python:
                    times.append(np.asarray([x for x, _ in python], dtype=float))
                    parts.append(self._columns([row for _, row in python]))
                    python = []
                times.append(tt)
                parts.append(r.columns(self.ports))
            else:
                python.append((tt, r))
        if python:
            times.append(np.asarray([x for x, _ in python], dtype=float))
            parts.append(self._columns([row for _, row in python]))
        signals = {p.path: np.concatenate([part[p.path] for part in parts])
                   for p in self.ports}
        return Results(np.concatenate(times), signals, units, provenance(sim))

    def _columns(self, rows: list) -> dict:
        """The signals of Python samples (tuples, one value per port)."""
        signals = {}
        for j, p in enumerate(self.ports):
            col = [r[j] for r in rows]
            dtype = kept_dtype(p.dtype)  # exact integers and Booleans, str/bytes objects
            signals[p.path] = np.asarray(col, dtype=dtype) if p.shape == () else \
                np.stack(col) if col else np.zeros((0,) + p.shape)
        return signals


class _RowBlock:
    """Rows a compiled run recorded: one float column per element of each port."""

    __slots__ = ("rows", "widths")

    def __init__(self, rows: np.ndarray, widths: list[int]) -> None:
        self.rows, self.widths = rows, widths

    def columns(self, ports: list) -> dict:
        out, a = {}, 0
        for p, w in zip(ports, self.widths):
            block = self.rows[:, a:a + w]
            a += w
            out[p.path] = block.reshape((len(block),) + tuple(p.shape)).astype(
                kept_dtype(p.dtype))
        return out


#: The name of the time column (and of a DataFrame's index): its unit is ``s``.
TIME = "time"


def column_names(path: str, shape: tuple) -> list[str]:
    """The table columns of a signal: ``[path]`` for a scalar, ``path[j]`` for each
    element of an array (``j`` its flat, C-order index): the names of
    :meth:`Results.to_pandas` and of the CSV header (:mod:`cosim.csv_results`)."""
    if not shape:
        return [path]
    return [f"{path}[{j}]" for j in range(int(np.prod(shape)))]


@dataclass
class Results:
    """Time histories of recorded signals with their units and provenance."""

    time: np.ndarray
    signals: dict[str, np.ndarray]
    units: dict[str, str]
    provenance: dict = field(default_factory=dict)
    diagnostics: dict = field(default_factory=dict)

    def __getitem__(self, path: str) -> np.ndarray:
        try:
            return self.signals[path]
        except KeyError:
            import difflib
            close = difflib.get_close_matches(path, list(self.signals), n=3)
            raise PortError(f"signal {path!r} was not recorded; recorded: "
                            f"{', '.join(list(self.signals)[:20])}"
                            + (f". Did you mean {close[0]!r}?" if close else "")) from None

    def __contains__(self, path: str) -> bool:
        return path in self.signals

    def at(self, path: str, t: float) -> Any:
        """Value of a signal at the recorded time closest to ``t``."""
        i = int(np.argmin(np.abs(self.time - t)))
        return self[path][i]

    def to_pandas(self) -> Any:
        """A :class:`pandas.DataFrame` indexed by ``time``, one column per signal named by
        its path (``df["car.zs"]``).

        An array signal gives one column per element, :func:`column_names`: ``path[j]``
        with ``j`` the flat (C-order) index (``"x[0]"``, ``"x[1]"``; a (2, 3) signal
        ``"R[0]"`` .. ``"R[5]"``).  The units are in ``df.attrs["units"]``, one entry per
        column and one for the index: ``{"time": "s", "car.zs": "m", "x[0]": "m", ...}``
        (``""``: no unit declared); ``df.attrs["provenance"]`` is :attr:`provenance` and,
        for results read from a file, ``df.attrs["status"]`` the run's status.  pandas
        keeps ``attrs`` through selections and copies; a CSV written with
        ``df.to_csv`` does not (write results with :class:`~cosim.csv_results.CsvWriter`).
        """
        import pandas as pd
        cols, units = {}, {TIME: "s"}
        for k, v in self.signals.items():
            names = column_names(k, v.shape[1:])
            flat = v.reshape(len(v), -1) if v.ndim > 1 else v[:, None]
            for j, name in enumerate(names):
                cols[name] = flat[:, j]
                units[name] = self.units.get(k) or ""
        df = pd.DataFrame(cols, index=pd.Index(self.time, name=TIME))
        df.attrs["units"] = units
        df.attrs["provenance"] = self.provenance
        if "status" in self.diagnostics:
            df.attrs["status"] = self.diagnostics["status"]
        return df

    def plot(self, signals: list[str] | None = None, title: str | None = None) -> Any:
        """A matplotlib Figure, one panel per physical dimension (signals whose units
        differ only by scale, rpm and rad/s, share one, converted to its unit); every
        axis labelled with its unit.  In a notebook it shows inline."""
        from .plotting import figure
        return figure(self, signals, title)

    def __repr__(self) -> str:
        span = (f"t = {self.time[0]:g} .. {self.time[-1]:g} s" if len(self.time)
                else "no samples")
        return f"<Results {len(self.time)} samples, {span}, {len(self.signals)} signals>"


_HASHES: Any = weakref.WeakKeyDictionary()  # a built diagram does not change: hashed once
_DTYPE_TEXT: dict = {}


def model_hash(diagram: Any) -> str:
    """A hash of the diagram structure: blocks, types, ports, units, connections (once per
    built diagram: every run's provenance has it)."""
    try:
        return _HASHES[diagram]
    except (KeyError, TypeError):
        pass
    digest = _model_hash(diagram)
    try:
        _HASHES[diagram] = digest
    except TypeError:  # not weakly referable: not kept
        pass
    return digest


def _model_hash(diagram: Any) -> str:
    h = hashlib.sha256()
    for b in diagram.leaf_blocks():
        h.update(f"{b.path}:{type(b).__module__}.{type(b).__qualname__}".encode())
        for p in list(b.inputs.values()) + list(b.outputs.values()):
            dt = _DTYPE_TEXT.get(p.dtype)
            if dt is None:  # (str() of a NumPy dtype costs microseconds: once per dtype)
                dt = _DTYPE_TEXT.setdefault(p.dtype, str(p.dtype))
            h.update(f"{p.name}{p.shape}{dt}{p.unit_text}".encode())
        for prm in b.parameters.values():
            h.update(f"{prm.name}={prm.default!r}".encode())
    plan = diagram.compile()
    for dst, (src, s, bias) in sorted(plan.feed.items(), key=lambda kv: kv[0].path):
        h.update(f"{src.path}->{dst.path}*{s}+{bias}".encode())
    return h.hexdigest()[:16]


def provenance(sim: Any) -> dict:
    return {
        "model": sim.diagram.name,
        "model_hash": model_hash(sim.diagram),
        "solver": sim.solver_settings(),
        "versions": package_versions(),
    }
