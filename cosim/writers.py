"""Stream recorded signals to disk in chunks: CSV and HDF5 writers.

A :class:`StreamWriter` is an observer that buffers ``chunk`` samples in memory
and then appends them to its file, so a crash or a kill loses at most the
samples of the last, unwritten chunk.  It writes to the final path directly
(no temporary file renamed at the end): partial results are the point.  When a
run fails, :meth:`Simulator.run` finishes the observers with the error, which
writes the buffered rest and records the error.

Guarantees and limitations
--------------------------
* CSV: every chunk is one write followed by ``flush`` and ``os.fsync``; after
  a kill the file holds the header and every written chunk.  :func:`read_csv`
  ignores a torn last line.  A ``# status:`` trailer is appended at the end.
* HDF5 (h5py, ``pip install cosim[hdf5]``): the file is created with
  ``libver="latest"`` and switched to SWMR mode once its datasets exist, which
  keeps it valid when the writer dies.  A file whose writer was killed cannot be
  opened by a plain ``h5py.File(path)`` (HDF5 reports "file is already open for
  write"): open it with ``h5py.File(path, "r", swmr=True)`` (as
  :func:`read_hdf5` does) or clear the flag with ``h5clear -s path``.  Its
  ``status`` attribute then still says ``"running"``, since SWMR writers may not
  change attributes and the status is written after closing.  Such files need
  HDF5 >= 1.10 and a file system with POSIX write semantics (not NFS).
* A writer records one run: after ``on_finish`` it refuses further samples.
"""

from __future__ import annotations

import csv
import io
import json
import operator
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from .errors import OutputError
from .observers import Decimator, Observer, Results, provenance, resolve_ports

__all__ = ["CsvWriter", "Hdf5Writer", "StreamWriter", "read_csv", "read_hdf5"]

_FIX = "choose another --out folder or fix permissions"
_COLUMN = re.compile(r"^(?P<path>[^\[\s]+?)(?:\[(?P<idx>\d+)\])?(?: \[(?P<unit>[^\]]*)\])?$")


def _status(error: BaseException | None) -> str:
    return "complete" if error is None else f"error: {type(error).__name__}: {error}"


class StreamWriter(Observer):
    """Base of the chunked file writers.

    Parameters
    ----------
    path : str or path-like
        Output file; its folder is created if needed.
    ports : list of ports or paths, or ``"all"``
        What to record (as for :class:`~cosim.observers.Recorder`).
    every : int
        Decimation: keep one sample in ``every``.
    chunk : int
        Samples buffered in memory before they are appended to the file.

    Notes
    -----
    Subclasses implement ``_open(prov)``, ``_write_chunk(times, rows)`` and
    ``_close(status)``; ``rows`` holds one tuple of port values per sample.
    """

    def __init__(self, path: Any, ports: Any = "all", every: int = 1, chunk: int = 1000) -> None:
        for name, v in (("every", every), ("chunk", chunk)):
            if int(v) < 1:
                raise ValueError(f"{type(self).__name__}: {name} must be >= 1, got {v!r}")
        self.path = Path(path)
        self.spec, self.every, self.chunk = ports, int(every), int(chunk)
        self.ports: list = []
        self._slots: list[int] = []
        self._state = "new"  # new -> open -> closed
        self._times: list[float] = []
        self._rows: list[tuple] = []
        self._dec = Decimator(self.every)
        self.chunks_written = self.samples_written = 0

    def required_ports(self) -> list:
        return self.ports

    def bind(self, sim: Any) -> None:
        """Resolve the ports on ``sim.diagram`` and find their signal slots."""
        self.ports = resolve_ports(sim.diagram, self.spec)
        self._slots = [sim.plan.output_slot[p] for p in self.ports]
        self._vector = [p.shape != () for p in self.ports]
        self._any_vector = any(self._vector)
        k = self._slots
        self._get = (operator.itemgetter(*k) if len(k) > 1 else
                     (lambda s, i=k[0]: (s[i],)) if k else (lambda s: ()))

    def _fail(self, exc: OSError) -> OutputError:
        return OutputError(f"cannot write results to '{self.path}': {type(exc).__name__}: "
                           f"{exc}; {_FIX}")

    def on_start(self, sim: Any) -> None:
        if not self._slots and self.ports == []:
            self.bind(sim)
        self._begin(provenance(sim))
        self._dec.reset(sim)

    # ------------------------------------------------ master (row) protocol
    def start_rows(self, signals: list, prov: dict) -> None:
        """Open for a co-simulation master: ``signals`` are the row's columns (objects
        with ``path``, ``unit_text``, ``shape``, ``size``), then :meth:`write_row` per
        communication point and :meth:`on_finish` at the end."""
        paths = [sg.path for sg in signals]
        if self.spec == "all":
            keep = list(range(len(signals)))
        else:
            wanted = [self.spec] if isinstance(self.spec, str) else list(self.spec)
            missing = [w for w in wanted if w not in paths]
            if missing:
                import difflib
                close = difflib.get_close_matches(missing[0], paths, n=1)
                raise OutputError(f"{type(self).__name__} '{self.path}': no signal "
                                  f"{missing[0]!r} in the co-simulation; signals: "
                                  f"{', '.join(paths[:20])}"
                                  + (f". Did you mean {close[0]!r}?" if close else ""))
            keep = [paths.index(w) for w in wanted]
        self.ports = [signals[j] for j in keep]
        self._slots = keep
        self._vector = [sg.shape != () for sg in self.ports]
        self._any_vector = any(self._vector)
        self._get = (operator.itemgetter(*keep) if len(keep) > 1 else
                     (lambda r, i=keep[0]: (r[i],)) if keep else (lambda r: ()))
        self._begin(prov)

    def write_row(self, t: float, row: list) -> None:
        """One communication point of a master (after :meth:`start_rows`)."""
        self._append(t, row)

    def _begin(self, prov: dict) -> None:
        self._times, self._rows = [], []
        self._dec.reset(None)
        self.chunks_written = self.samples_written = 0
        folder = self.path.parent
        try:
            if folder.exists() and not folder.is_dir():
                raise NotADirectoryError(20, "not a directory", str(folder))
            folder.mkdir(parents=True, exist_ok=True)
            if not os.access(folder, os.W_OK):
                raise PermissionError(13, "folder is not writable", str(folder))
            self._open(prov)
        except OSError as exc:
            raise self._fail(exc) from exc
        self._state = "open"

    def on_sample(self, sim: Any) -> None:
        self._append(sim.ctx.time, sim.ctx.signals)

    def _append(self, t: float, s: Any) -> None:
        if not self._dec.keep():
            return
        if self._state != "open":
            raise OutputError(f"{type(self).__name__} '{self.path}' is not open "
                              f"({self._state}); a writer records one run: make a new one")
        if self._any_vector:
            row = tuple(np.array(s[k], dtype=float) if vec else s[k]
                        for k, vec in zip(self._slots, self._vector, strict=True))
        else:
            row = self._get(s)
        self._times.append(t)
        self._rows.append(row)
        if len(self._rows) >= self.chunk:
            self.flush()

    def flush(self) -> None:
        """Append the buffered samples to the file now."""
        if not self._rows or self._state != "open":
            return
        try:
            self._write_chunk(np.asarray(self._times, dtype=float), self._rows)
        except OSError as exc:
            raise self._fail(exc) from exc
        self.chunks_written += 1
        self.samples_written += len(self._rows)
        self._times, self._rows = [], []

    def on_finish(self, sim: Any, error: BaseException | None = None) -> None:
        if self._state != "open":
            return
        try:
            self.flush()
        finally:
            self._state = "closed"
            self._close(_status(error))

    def _columns(self, rows: list[tuple]) -> list[np.ndarray]:
        """One float array of shape ``(len(rows),) + port.shape`` per port."""
        return [np.asarray([r[j] for r in rows], dtype=float).reshape((len(rows),) + p.shape)
                for j, p in enumerate(self.ports)]

    def _open(self, prov: dict) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _write_chunk(self, times: np.ndarray, rows: list[tuple]) -> None:  # pragma: no cover
        raise NotImplementedError

    def _close(self, status: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


# --------------------------------------------------------------------- CSV
def _encode(v: Any) -> str:
    if isinstance(v, str) and "\n" not in v and v == v.strip():
        try:
            json.loads(v)
        except ValueError:
            return v  # plain text that cannot be mistaken for JSON
    return json.dumps(v, default=str)


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


class CsvWriter(StreamWriter):
    """Write ``time [s]`` and one ``path [unit]`` column per signal element.

    Provenance is written first as ``# key: value`` comment lines (values that
    are not plain text as JSON), then the header line, then the rows with the
    shortest exactly round-tripping float text.  Vector ports become columns
    ``path[0] [unit]``, ``path[1] [unit]``, ... .  Read back with :func:`read_csv`.
    """

    def _open(self, prov: dict) -> None:
        header = ["time [s]"]
        for p in self.ports:
            unit = f" [{p.unit_text}]" if p.unit_text else ""
            idx = [f"[{i}]" for i in range(p.size)] if p.shape else [""]
            header.extend(f"{p.path}{i}{unit}" for i in idx)
        buf = io.StringIO()
        buf.write("# cosim results\n")
        for k, v in prov.items():
            buf.write(f"# {k}: {_encode(v)}\n")
        csv.writer(buf, lineterminator="\n").writerow(header)
        self._fh = open(self.path, "w", encoding="utf-8", newline="")
        self._put(buf.getvalue())

    def _put(self, text: str) -> None:
        self._fh.write(text)
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def _write_chunk(self, times: np.ndarray, rows: list[tuple]) -> None:
        k = len(times)
        table = np.hstack([times[:, None]] + [c.reshape(k, -1) for c in self._columns(rows)])
        self._put("".join(",".join(map(repr, r)) + "\n" for r in table.tolist()))

    def _close(self, status: str) -> None:
        try:
            self._put(f"# status: {_encode(status)}\n")
        finally:
            self._fh.close()


def read_csv(path: Any) -> Results:
    """Read a :class:`CsvWriter` file (also one whose writer was killed) into Results.

    Vector signals come back with shape ``(n_samples, n)``; the file's status
    (``"complete"``, ``"error: ..."`` or ``"running"`` if the writer did not
    finish) is in ``results.diagnostics["status"]``.
    """
    text = Path(path).read_text(encoding="utf-8")
    lines = text.split("\n")
    lines.pop()  # after the last newline: empty, or a torn line of a killed writer
    meta, header, data = {}, None, []
    for line in lines:
        if line.startswith("#"):
            key, sep, value = line[1:].strip().partition(": ")
            if sep:
                meta[key] = _decode(value)
        elif header is None:
            header = next(csv.reader([line]))
        elif line:
            data.append(line)
    if header is None:
        raise OutputError(f"'{path}' is not a cosim CSV file: no header line")
    table = np.loadtxt(io.StringIO("\n".join(data)), delimiter=",", ndmin=2) if data \
        else np.zeros((0, len(header)))
    groups: dict[str, list[int]] = {}
    units: dict[str, str] = {}
    for j, name in enumerate(header[1:], start=1):
        m = _COLUMN.match(name)
        if m is None:
            raise OutputError(f"'{path}': cannot parse column name {name!r}")
        groups.setdefault(m["path"], []).append(j)
        units[m["path"]] = m["unit"] or ""
    signals = {}
    for p, cols in groups.items():
        vector = _COLUMN.match(header[cols[0]])["idx"] is not None
        signals[p] = table[:, cols] if vector else table[:, cols[0]]
    status = meta.pop("status", "running")
    return Results(table[:, 0].copy(), signals, units, meta, {"status": status, "file": str(path)})


# -------------------------------------------------------------------- HDF5
def _h5py() -> Any:
    try:
        import h5py
    except ImportError as exc:
        raise ImportError("HDF5 output needs the h5py package: pip install cosim[hdf5] "
                          "(or write CSV with CsvWriter)") from exc
    return h5py


class Hdf5Writer(StreamWriter):
    """Write an HDF5 file: ``/time`` and one dataset per signal under ``/signals``.

    Datasets follow the block path (``/signals/sub/blk.port``), are resizable
    and chunked, have shape ``(n_samples,) + port.shape`` and attributes ``unit``
    and ``path``.  Root attributes: ``provenance`` (JSON), ``paths`` (JSON list
    of the recorded port paths, in order) and ``status``.  Read back with
    :func:`read_hdf5`; see the module notes on files whose writer was killed.
    """

    def __init__(self, path: Any, ports: Any = "all", every: int = 1, chunk: int = 1000) -> None:
        super().__init__(path, ports, every, chunk)
        self._h5 = _h5py()

    def _open(self, prov: dict) -> None:
        f = self._file = self._h5.File(self.path, "w", libver="latest")
        try:
            f.attrs["provenance"] = json.dumps(prov, default=str)
            f.attrs["paths"] = json.dumps([p.path for p in self.ports])
            f.attrs["status"] = "running"
            rows = min(max(self.chunk, 64), 1 << 16)
            self._time = f.create_dataset("time", (0,), "f8", maxshape=(None,), chunks=(rows,))
            self._time.attrs["unit"] = "s"
            self._ds = []
            for p in self.ports:
                ds = f.create_dataset("signals/" + p.path, (0,) + p.shape, "f8",
                                      maxshape=(None,) + p.shape, chunks=(rows,) + p.shape)
                ds.attrs["unit"], ds.attrs["path"] = p.unit_text or "", p.path
                self._ds.append(ds)
            f.swmr_mode = True
            f.flush()
        except Exception:
            f.close()
            raise
        self._fd = os.open(self.path, os.O_RDONLY)

    def _write_chunk(self, times: np.ndarray, rows: list[tuple]) -> None:
        n0 = self._time.shape[0]
        n1 = n0 + len(times)
        for ds, col in zip(self._ds, self._columns(rows), strict=True):
            ds.resize((n1,) + ds.shape[1:])
            ds[n0:n1] = col
        self._time.resize((n1,))  # time last: a reader never sees times without values
        self._time[n0:n1] = times
        self._file.flush()
        os.fsync(self._fd)

    def _close(self, status: str) -> None:
        try:
            self._file.close()
        finally:
            os.close(self._fd)
        with self._h5.File(self.path, "r+") as f:  # SWMR writers cannot change attributes
            f.attrs["status"] = status


def read_hdf5(path: Any) -> Results:
    """Read an :class:`Hdf5Writer` file (also one whose writer was killed) into Results.

    The status (``"complete"``, ``"error: ..."`` or ``"running"`` if the writer
    did not finish) is in ``results.diagnostics["status"]``.
    """
    h5py = _h5py()
    try:
        f = h5py.File(path, "r")
    except OSError:  # a killed SWMR writer leaves the file marked as open
        f = h5py.File(path, "r", swmr=True)
    with f:
        paths = json.loads(f.attrs["paths"])
        dsets = [f["signals/" + p] for p in paths]
        n = min([f["time"].shape[0]] + [d.shape[0] for d in dsets])
        signals = {p: d[:n] for p, d in zip(paths, dsets, strict=True)}
        units = {p: str(d.attrs["unit"]) for p, d in zip(paths, dsets, strict=True)}
        return Results(f["time"][:n], signals, units, json.loads(f.attrs["provenance"]),
                       {"status": str(f.attrs["status"]), "file": str(path)})
