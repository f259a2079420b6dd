"""Results as CSV that any tool opens: :class:`CsvWriter`, :func:`write_csv`, :func:`read_csv`
and :func:`read_dataframe`.

The file is plain CSV, one header line of names then one row per sample::

    time,plant.x,ctrl.u,arm.q[0],arm.q[1]
    0.0,0.0,1.5,0.0,0.0
    0.001,1.2e-06,1.4987,1e-06,2e-06

so ``pandas.read_csv("results.csv")["plant.x"]`` (or a spreadsheet) works as it is.  The
first column is the time in seconds; every other column is named by its signal's path,
and an array signal gives one column per element, ``path[j]`` with ``j`` its flat
(C-order) index (:func:`~cosim.observers.column_names`: the names of
:meth:`Results.to_pandas <cosim.observers.Results.to_pandas>`).  Floats are written with
the shortest text that reads back exactly; integer signals (an FMU's Int64 or UInt64
included) as exact integers, Boolean signals as 0 and 1; an FMU's String signals as their
text (quoted by the csv module where they hold a comma, a quote or a newline) and its
Binary signals as hexadecimal digits (``00ff0a``, as a Binary start value is given).
``pandas.read_csv`` reads an empty String as NaN unless given ``keep_default_na=False``;
:func:`read_csv` gives it back as ``""``.

Beside it, ``results.csv.json`` (the *sidecar*, :func:`sidecar_path`) holds what is not a
signal value: the **units** of every column (``{"time": "s", "plant.x": "m", ...}``), the
provenance (model, model hash, solver settings, package versions), the columns that are
integers (and which of them are Booleans), the String and Binary columns, and the run's
status: ``"running"`` while
the writer works (and after a kill), ``"complete"``, ``"incomplete: ..."`` (chunks
dropped by a full writer queue) or ``"error: ..."``.  It is replaced atomically (written
beside, then renamed), so it is always whole.  :func:`read_dataframe` returns the table as
a DataFrame with the units in ``df.attrs["units"]``; :func:`read_csv` as
:class:`~cosim.observers.Results`.

Why the units are not in the CSV itself: the tools our users exchange results with write
one header line of plain variable names (FMPy's ``write_csv``, OpenModelica's and
Dymola's CSV results), and the standards for describing a CSV's columns (W3C CSV on the
Web, Frictionless Data's Table Schema) keep that description in a JSON file beside it.
A units row under the header would make ``pandas.read_csv`` read every column as text,
and a ``#`` comment line would need ``comment="#"`` (or break the header): either breaks
``pd.read_csv(path)["plant.x"]``.  Limitation: a CSV copied without its sidecar has lost
its units (and provenance); :func:`read_csv` then reads units ``""``.

Files of the earlier formats are still read by :func:`read_csv`: units in the header
(``time [s],plant.x [m]``, format 2) and provenance as ``# key: value`` lines before the
header with a ``# status:`` trailer (format 1).

After a kill the CSV holds the header and every chunk written (each chunk is one write
followed by ``flush`` and ``os.fsync``); :func:`read_csv` drops a torn last line, and a
cell that is not a number is reported with its row and column.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import OutputError
from .observers import TIME, Results, column_names
from .ports import BINARY, text_kind
from .stream_writer import StreamWriter

__all__ = ["CsvWriter", "read_csv", "read_dataframe", "sidecar_path", "write_csv"]

FORMAT = "cosim results 3"
#: A column: ``path``, ``path[j]``; files of format 2 add `` [unit]``.
_COLUMN = re.compile(r"^(?P<path>[^\[\s]+?)(?:\[(?P<idx>\d+)\])?(?: \[(?P<unit>[^\]]*)\])?$")


def sidecar_path(path: Any) -> Path:
    """The metadata file of a results CSV: ``results.csv`` -> ``results.csv.json``."""
    path = Path(path)
    return path.with_name(path.name + ".json")


def _is_int(port: Any) -> bool:
    """Integer and Boolean ports are written as exact integers (a Boolean as 0/1)."""
    return np.dtype(getattr(port, "dtype", float)).kind in "iub"


def _is_bool(port: Any) -> bool:
    return np.dtype(getattr(port, "dtype", float)).kind == "b"


def _cell(port: Any, kind: str, path: Any) -> Any:
    """How a String (the text itself) or Binary (hexadecimal digits, as a Binary start
    value is given) value becomes a cell; a value of the other kind is an OutputError."""
    want, hint = (str, "str") if kind == "String" else (bytes, "bytes")

    def cell(x: Any) -> str:
        x = x.item() if isinstance(x, np.generic) else x
        if isinstance(x, bytearray):
            x = bytes(x)
        if not isinstance(x, want):
            raise OutputError(f"CsvWriter '{path}': signal '{port.path}' is a {kind} signal "
                              f"but holds {x!r} ({type(x).__name__}, not {hint}); declare "
                              "its port with dtype cosim.ports.STRING or BINARY as it holds")
        return x if kind == "String" else x.hex()
    return cell


def _write_json(path: Path, doc: dict) -> None:
    """Replace ``path`` atomically (a reader sees the old or the new file, whole)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, default=str)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class CsvWriter(StreamWriter):
    """Write a ``time`` column and one column per signal element, named by the signal's
    path (module docstring), or by ``names[path]`` where given (``cosim fmu simulate``
    names an FMU's columns by its variables, as FMPy does); the units, the provenance and
    the status go to the sidecar ``<file>.json``.  Read back with :func:`read_dataframe` or
    :func:`read_csv`, or with ``pandas.read_csv``."""

    def __init__(self, path: Any, ports: Any = "all", every: int = 1, chunk: int = 1000,
                 *, queue_chunks: int = 64, names: dict[str, str] | None = None) -> None:
        super().__init__(path, ports, every, chunk, queue_chunks=queue_chunks)
        self.names = dict(names or {})

    def _open(self, prov: dict) -> None:
        self._ints = [_is_int(p) for p in self.ports]
        self._texts = [text_kind(getattr(p, "dtype", float)) for p in self.ports]
        header, units = [TIME], {TIME: "s"}
        for p in self.ports:
            path = self.names.get(p.path, p.path)
            if path == TIME:
                raise OutputError(f"CsvWriter '{self.path}': a signal named {TIME!r} would "
                                  "be read as the time column; rename its block or port")
            for name in column_names(path, tuple(p.shape)):
                header.append(name)
                units[name] = p.unit_text or ""
        named = [self.names.get(p.path, p.path) for p in self.ports]
        self._meta = {"format": FORMAT, "units": units, "provenance": prov,
                      "integers": [n for n, i in zip(named, self._ints) if i],
                      "booleans": [n for n, p in zip(named, self.ports) if _is_bool(p)],
                      "status": "running"}
        for kind, key in (("String", "strings"), ("Binary", "binaries")):
            cols = [n for n, k in zip(named, self._texts) if k == kind]
            if cols:
                self._meta[key] = cols
        _write_json(sidecar_path(self.path), self._meta)
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(header)
        self._fh = open(self.path, "w", encoding="utf-8", newline="")
        self._put(buf.getvalue())

    def _put(self, text: str) -> None:
        self._fh.write(text)
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def _write_chunk(self, times: np.ndarray, rows: list[tuple]) -> None:
        k = len(times)
        if not any(self._ints) and not any(self._texts):
            table = np.hstack([times[:, None]] + [c.reshape(k, -1)
                                                  for c in self._columns(rows)])
            self._put("".join(",".join(map(repr, r)) + "\n" for r in table.tolist()))
            return
        cols = [[repr(t) for t in times.tolist()]]  # text per column, integers exact
        for j, (p, is_int, text) in enumerate(zip(self.ports, self._ints, self._texts)):
            if is_int or text:
                vals = [np.ravel(np.asarray(r[j], dtype=object)) if p.shape else (r[j],)
                        for r in rows]
                cell = (lambda x: str(int(x))) if is_int else _cell(p, text, self.path)
                cols.extend([cell(v[e]) for v in vals] for e in range(p.size))
            else:
                c = np.asarray([r[j] for r in rows], dtype=float).reshape(k, -1)
                cols.extend([repr(x) for x in c[:, e].tolist()] for e in range(c.shape[1]))
        if not any(self._texts):
            self._put("".join(",".join(r) + "\n" for r in zip(*cols)))
            return
        buf = io.StringIO()  # text cells quoted where they hold a comma, quote or newline
        csv.writer(buf, lineterminator="\n").writerows(zip(*cols))
        self._put(buf.getvalue())

    def _close(self, status: str) -> None:
        try:
            self._fh.close()
        finally:
            self._meta["status"] = status
            _write_json(sidecar_path(self.path), self._meta)


# ------------------------------------------------------------------ reading
def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _legacy_meta(lines: list[str]) -> tuple[dict, list[str]]:
    """``# key: value`` lines of the earlier format, and the other lines."""
    meta, rest = {}, []
    for line in lines:
        if line.startswith("#"):
            key, sep, value = line[1:].strip().partition(": ")
            if sep:
                meta[key] = _decode(value)
        else:
            rest.append(line)
    return meta, rest


def _bad_cell(path: Any, header: list[str], data: list[str], first_line: int) -> OutputError:
    """The first cell that is not a number, by row and column."""
    for k, line in enumerate(data):
        cells = line.split(",")
        if len(cells) != len(header):
            return OutputError(f"'{path}', line {first_line + k}: {len(cells)} cells, the "
                               f"header has {len(header)} columns")
        for name, cell in zip(header, cells):
            try:
                float(cell)
            except ValueError:
                return OutputError(f"'{path}', line {first_line + k} (sample {k + 1}), "
                                   f"column {name!r}: {cell!r} is not a number")
    return OutputError(f"'{path}': the table cannot be read as numbers")


def read_csv(path: Any) -> Results:
    """Read a :class:`CsvWriter` file (also one whose writer was killed) into Results.

    Vector signals come back with shape ``(n_samples, n)``, integer signals exactly
    (int64, or uint64 where a value needs it), Boolean signals as bool; the units (from
    the sidecar) are ``results.units``, the provenance ``results.provenance`` and the run's status
    (``"complete"``, ``"error: ..."``, ``"running"`` if the writer did not finish)
    ``results.diagnostics["status"]``.  A cell that is not a number is an
    :class:`~cosim.errors.OutputError` naming its line and column.  A CSV without a
    sidecar (another tool's, or one copied alone) is read too: its first column is the
    time, its units ``""`` (unless the header has them, ``name [unit]``).
    """
    text = Path(path).read_text(encoding="utf-8")
    side = sidecar_path(path)
    column_units: dict[str, str] = {}
    if side.exists():
        doc = json.loads(side.read_text(encoding="utf-8"))
        meta = dict(doc.get("provenance") or {})
        if doc.get("integers"):
            meta["integers"] = doc["integers"]
        if doc.get("booleans"):
            meta["booleans"] = doc["booleans"]
        meta["status"] = doc.get("status", "running")
        column_units = doc.get("units") or {}
        texts = {**{c: "String" for c in doc.get("strings") or ()},
                 **{c: "Binary" for c in doc.get("binaries") or ()}}
        if texts:  # read again as it was written: a String may hold "\r"
            with open(path, encoding="utf-8", newline="") as fh:
                return _read_with_text(path, fh.read(), meta, column_units, texts)
        offset = 0
    lines = text.split("\n")
    lines.pop()  # after the last newline: empty, or a torn line of a killed writer
    if not side.exists():  # the earlier format: provenance and status in comment lines
        n_comments = sum(1 for ln in lines if ln.startswith("#"))
        meta, lines = _legacy_meta(lines)
        offset = n_comments
    if not lines:
        raise OutputError(f"'{path}' is not a cosim CSV file: no header line")
    header = next(csv.reader([lines[0]]))
    data = [ln for ln in lines[1:] if ln]
    try:
        table = np.loadtxt(io.StringIO("\n".join(data)), delimiter=",", ndmin=2) if data \
            else np.zeros((0, len(header)))
    except ValueError:
        raise _bad_cell(path, header, data, first_line=offset + 2) from None
    if table.shape[1] != len(header):
        raise _bad_cell(path, header, data, first_line=offset + 2)
    groups, units = _signal_columns(path, header, column_units)
    signals = {}
    exact = set(meta.get("integers") or ())
    booleans = set(meta.get("booleans") or ())
    for p, cols in groups.items():
        vector = _COLUMN.match(header[cols[0]])["idx"] is not None
        if p in exact:  # integer signals, exactly (not through the float table)
            rows = [next(csv.reader([line])) for line in data]
            ints = [[int(r[c]) for c in cols] for r in rows]
            dt = np.uint64 if any(x > np.iinfo(np.int64).max for r in ints for x in r) \
                else np.int64
            arr = np.array(ints, dtype=bool if p in booleans else dt).reshape(len(rows),
                                                                               len(cols))
            signals[p] = arr if vector else arr[:, 0]
            continue
        signals[p] = table[:, cols] if vector else table[:, cols[0]]
    status = meta.pop("status", "running")
    return Results(table[:, 0].copy(), signals, units, meta, {"status": status, "file": str(path)})


def _signal_columns(path: Any, header: list[str], column_units: dict) -> tuple[dict, dict]:
    """``({signal path: [column indices]}, {signal path: unit})`` of a header."""
    groups: dict[str, list[int]] = {}
    units: dict[str, str] = {}
    for j, name in enumerate(header[1:], start=1):
        m = _COLUMN.match(name)
        if m is None:
            raise OutputError(f"'{path}': cannot parse column name {name!r}")
        groups.setdefault(m["path"], []).append(j)
        units.setdefault(m["path"], column_units.get(name, m["unit"] or ""))
    return groups, units


def _read_with_text(path: Any, text: str, meta: dict, column_units: dict,
                    texts: dict) -> Results:
    """:func:`read_csv` of a file with String or Binary columns (``texts``: column ->
    kind): every cell through the csv module (a quoted String may hold commas, quotes and
    newlines); a last record cut short by a kill is dropped."""
    records = list(csv.reader(io.StringIO(text)))
    if not records:
        raise OutputError(f"'{path}' is not a cosim CSV file: no header line")
    header, data = records[0], records[1:]
    if data and (not text.endswith("\n") or len(data[-1]) != len(header)):
        data.pop()  # torn by a kill
    exact = set(meta.get("integers") or ())
    booleans = set(meta.get("booleans") or ())
    groups, units = _signal_columns(path, header, column_units)
    for k, r in enumerate(data):
        if len(r) != len(header):
            raise OutputError(f"'{path}', record {k + 2}: {len(r)} cells, the header has "
                              f"{len(header)} columns")

    def column(p: str, cols: list[int]) -> np.ndarray:
        kind = texts.get(p)
        try:
            if kind == "String":
                vals = [[r[c] for c in cols] for r in data]
            elif kind == "Binary":
                vals = [[bytes.fromhex(r[c]) for c in cols] for r in data]
            elif p in exact:
                vals = [[int(r[c]) for c in cols] for r in data]
            else:
                vals = [[float(r[c]) for c in cols] for r in data]
        except ValueError as exc:
            raise OutputError(f"'{path}', column {p!r}: a cell cannot be read as "
                              f"{kind or ('an integer' if p in exact else 'a number')}: "
                              f"{exc}") from None
        if kind:
            arr = np.empty((len(data), len(cols)), dtype=object)
            for i, row in enumerate(vals):
                arr[i, :] = row
        elif p in exact:
            big = any(x > np.iinfo(np.int64).max for r in vals for x in r)
            arr = np.array(vals, dtype=bool if p in booleans else np.uint64 if big
                           else np.int64).reshape(len(data), len(cols))
        else:
            arr = np.array(vals, dtype=float).reshape(len(data), len(cols))
        return arr if _COLUMN.match(header[cols[0]])["idx"] is not None else arr[:, 0]

    signals = {p: column(p, cols) for p, cols in groups.items()}
    try:
        time = np.array([float(r[0]) for r in data], dtype=float)
    except ValueError as exc:
        raise OutputError(f"'{path}', column 'time': {exc}") from None
    status = meta.pop("status", "running")
    return Results(time, signals, units, meta, {"status": status, "file": str(path)})


def read_dataframe(path: Any) -> Any:
    """A results file as a :class:`pandas.DataFrame`: :func:`read_csv` (or, for ``.h5``
    and ``.hdf5``, :func:`~cosim.hdf5_results.read_hdf5`), then
    :meth:`~cosim.observers.Results.to_pandas`: indexed by ``time``, one column per signal
    (element), the units in ``df.attrs["units"]``, the provenance in
    ``df.attrs["provenance"]`` and the run's status in ``df.attrs["status"]``."""
    if Path(path).suffix.lower() in (".h5", ".hdf5"):
        from .hdf5_results import read_hdf5
        return read_hdf5(path).to_pandas()
    return read_csv(path).to_pandas()


@dataclass(frozen=True)
class _Column:
    """A signal of a :class:`~cosim.observers.Results`, as the writers see a port."""

    path: str
    unit_text: str
    shape: tuple
    dtype: Any

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1


def write_csv(path: Any, results: Results) -> Path:
    """Write ``results`` (time, signals, units, provenance) as a :class:`CsvWriter` file
    with its sidecar, status ``"complete"``; returns the path.  For results made in
    memory (a recorder's, a post-processed table); a run streams with :class:`CsvWriter`.
    """
    n = len(results.time)
    signals = []
    for k, v in results.signals.items():
        v = np.asarray(v)
        if v.shape[:1] != (n,):
            raise OutputError(f"write_csv '{path}': signal {k!r} has {v.shape[:1] or 'no'} "
                              f"samples, the time has {n}")
        dtype = v.dtype
        if dtype.kind == "O" and v.size and all(isinstance(x, (bytes, bytearray))
                                                for x in v.ravel()):
            dtype = BINARY  # in-memory results keep values, not the port's dtype
        signals.append(_Column(k, results.units.get(k) or "", v.shape[1:], dtype))
    w = CsvWriter(path, chunk=max(n, 1))
    w.start_rows(signals, results.provenance)
    columns = [np.asarray(v) for v in results.signals.values()]
    for i, t in enumerate(np.asarray(results.time, dtype=float).tolist()):
        w.write_row(t, [c[i] for c in columns])
    w.on_finish(None)
    return w.path
