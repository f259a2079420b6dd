"""Results as CSV that any tool opens: :class:`CsvWriter` and :func:`read_csv`.

The file is plain CSV, one header line then one row per sample::

    time [s],plant.x [m],ctrl.u [N]
    0.0,0.0,1.5
    0.001,1.2e-06,1.4987

so ``pandas.read_csv("results.csv")`` (or a spreadsheet) opens it as it is; vector ports
become columns ``path[0] [unit]``, ``path[1] [unit]``, ...  Floats are written with the
shortest text that reads back exactly; integer signals (an FMU's Int64 or UInt64
included) as exact integers.

Beside it, ``results.csv.json`` (the *sidecar*, :func:`sidecar_path`) holds what is not a
signal: the provenance (model, model hash, solver settings, package versions), the
columns that are integers, and the run's status: ``"running"`` while the writer works
(and after a kill), ``"complete"``, ``"incomplete: ..."`` (chunks dropped by a full writer
queue) or ``"error: ..."``.  It is replaced atomically (written beside, then renamed), so
it is always whole.

Files of the earlier format (provenance as ``# key: value`` lines before the header and
a ``# status:`` trailer) are still read by :func:`read_csv`.

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
from pathlib import Path
from typing import Any

import numpy as np

from .errors import OutputError
from .observers import Results
from .stream_writer import StreamWriter

__all__ = ["CsvWriter", "read_csv", "sidecar_path"]

FORMAT = "cosim results 2"
_COLUMN = re.compile(r"^(?P<path>[^\[\s]+?)(?:\[(?P<idx>\d+)\])?(?: \[(?P<unit>[^\]]*)\])?$")


def sidecar_path(path: Any) -> Path:
    """The metadata file of a results CSV: ``results.csv`` -> ``results.csv.json``."""
    path = Path(path)
    return path.with_name(path.name + ".json")


def _is_int(port: Any) -> bool:
    return np.dtype(getattr(port, "dtype", float)).kind in "iu"


def _write_json(path: Path, doc: dict) -> None:
    """Replace ``path`` atomically (a reader sees the old or the new file, whole)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, default=str)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class CsvWriter(StreamWriter):
    """Write ``time [s]`` and one ``path [unit]`` column per signal element (module
    docstring); the provenance and status go to the sidecar ``<file>.json``.  Read back
    with :func:`read_csv`, or with ``pandas.read_csv``."""

    def _open(self, prov: dict) -> None:
        self._ints = [_is_int(p) for p in self.ports]
        self._meta = {"format": FORMAT, "provenance": prov,
                      "integers": [p.path for p, i in zip(self.ports, self._ints) if i],
                      "status": "running"}
        header = ["time [s]"]
        for p in self.ports:
            unit = f" [{p.unit_text}]" if p.unit_text else ""
            idx = [f"[{i}]" for i in range(p.size)] if p.shape else [""]
            header.extend(f"{p.path}{i}{unit}" for i in idx)
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
        if not any(self._ints):
            table = np.hstack([times[:, None]] + [c.reshape(k, -1)
                                                  for c in self._columns(rows)])
            self._put("".join(",".join(map(repr, r)) + "\n" for r in table.tolist()))
            return
        cols = [[repr(t) for t in times.tolist()]]  # text per column, integers exact
        for j, (p, is_int) in enumerate(zip(self.ports, self._ints)):
            if is_int:
                vals = [np.ravel(np.asarray(r[j], dtype=object)) if p.shape else (r[j],)
                        for r in rows]
                cols.extend([str(int(v[e])) for v in vals] for e in range(p.size))
            else:
                c = np.asarray([r[j] for r in rows], dtype=float).reshape(k, -1)
                cols.extend([repr(x) for x in c[:, e].tolist()] for e in range(c.shape[1]))
        self._put("".join(",".join(r) + "\n" for r in zip(*cols)))

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
    (int64, or uint64 where a value needs it); the provenance is ``results.provenance``
    and the run's status (``"complete"``, ``"error: ..."``, ``"running"`` if the writer
    did not finish) ``results.diagnostics["status"]``.  A cell that is not a number is an
    :class:`~cosim.errors.OutputError` naming its line and column.
    """
    text = Path(path).read_text(encoding="utf-8")
    lines = text.split("\n")
    lines.pop()  # after the last newline: empty, or a torn line of a killed writer
    side = sidecar_path(path)
    if side.exists():
        doc = json.loads(side.read_text(encoding="utf-8"))
        meta = dict(doc.get("provenance") or {})
        if doc.get("integers"):
            meta["integers"] = doc["integers"]
        meta["status"] = doc.get("status", "running")
        offset = 0
    else:  # the earlier format: provenance and status in comment lines
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
    groups: dict[str, list[int]] = {}
    units: dict[str, str] = {}
    for j, name in enumerate(header[1:], start=1):
        m = _COLUMN.match(name)
        if m is None:
            raise OutputError(f"'{path}': cannot parse column name {name!r}")
        groups.setdefault(m["path"], []).append(j)
        units[m["path"]] = m["unit"] or ""
    signals = {}
    exact = set(meta.get("integers") or ())
    for p, cols in groups.items():
        vector = _COLUMN.match(header[cols[0]])["idx"] is not None
        if p in exact:  # integer signals, exactly (not through the float table)
            rows = [next(csv.reader([line])) for line in data]
            ints = [[int(r[c]) for c in cols] for r in rows]
            dt = np.uint64 if any(x > np.iinfo(np.int64).max for r in ints for x in r) \
                else np.int64
            arr = np.array(ints, dtype=dt).reshape(len(rows), len(cols))
            signals[p] = arr if vector else arr[:, 0]
            continue
        signals[p] = table[:, cols] if vector else table[:, cols[0]]
    status = meta.pop("status", "running")
    return Results(table[:, 0].copy(), signals, units, meta, {"status": status, "file": str(path)})
