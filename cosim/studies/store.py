"""The study's dataset on disk: a journal written as runs finish, and a table.

Folder layout (``out``):

* ``study.json``: the study's settings and design (checked on resume: a folder holds one
  study);
* ``journal.jsonl``: one JSON line per finished run (``run_id``, status ``ok`` or
  ``failed``, the parameters, the metrics or the error, wall time, worker), appended and
  flushed to disk (``fsync``) as each run finishes: a crash or kill loses at most the runs
  in flight.  It is the record an interrupted study resumes from;
* ``results.parquet`` (pandas + pyarrow; ``results.csv`` without pyarrow): the table of
  all finished runs keyed by the parameters, rewritten atomically (temporary file and
  rename) every ``flush_every`` runs and at the end.  Its columns are the parameter and
  metric names; their units are in ``df.attrs["units"]`` (:meth:`ResultStore.dataframe`),
  which Parquet keeps (``pandas.read_parquet`` gives them back) and which the CSV table
  has in its sidecar ``results.csv.json`` (``{"units": {...}}``, as the results CSV of
  :mod:`cosim.csv_results`).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np

from ..errors import CosimError, OutputError


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)          # JSON has no nan/inf; stored as "nan", "inf"
    return v


def _unjson(v: Any) -> Any:
    if v in ("nan", "inf", "-inf"):
        return float(v)
    return v


#: Columns of the table that are not parameters or metrics; a metric of one of these names
#: (or of a parameter's) is stored as ``metric:<name>``.
RESERVED = ("run_id", "index", "status", "error", "wall_s", "worker")


class ResultStore:
    """Journal plus table of a study in the folder ``path`` (see the module docstring)."""

    def __init__(self, path: str, flush_every: int = 20) -> None:
        self.path = path
        self.flush_every = max(1, int(flush_every))
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"study: cannot create the output folder {path!r}: "
                              f"{exc.strerror}; choose another folder") from None
        self.journal_path = os.path.join(path, "journal.jsonl")
        self.manifest_path = os.path.join(path, "study.json")
        self.records: dict[str, dict] = {}
        self._since_flush = 0
        self._read_journal()

    # -- manifest -----------------------------------------------------------------------
    def check_manifest(self, manifest: dict) -> None:
        """Write the manifest, or check that the folder holds the same study."""
        if os.path.exists(self.manifest_path):
            with open(self.manifest_path) as f:
                old = json.load(f)
            if old.get("settings") != manifest.get("settings"):
                raise CosimError(
                    f"study folder {self.path!r} holds a different study (settings "
                    f"{old.get('settings')} vs {manifest.get('settings')}); use another "
                    "--out folder or delete it to start over")
        tmp = self.manifest_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(manifest, f, indent=1, default=_jsonable)
        os.replace(tmp, self.manifest_path)

    # -- journal ------------------------------------------------------------------------
    def _read_journal(self) -> None:
        if not os.path.exists(self.journal_path):
            return
        with open(self.journal_path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue        # a line cut by a kill: that run is redone
                self.records[rec["run_id"]] = rec

    def done(self, retry_failed: bool = False) -> set[str]:
        """Run ids already in the journal (without the failed ones if retrying them)."""
        return {k for k, r in self.records.items()
                if not (retry_failed and r["status"] != "ok")}

    def add(self, record: dict) -> None:
        """Append one finished run to the journal (flushed and synced to disk)."""
        rec = {k: _jsonable(v) for k, v in record.items()}
        rec["params"] = {k: _jsonable(v) for k, v in record["params"].items()}
        rec["metrics"] = {k: _jsonable(v) for k, v in (record.get("metrics") or {}).items()}
        line = json.dumps(rec, separators=(",", ":"))
        with open(self.journal_path, "a") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.records[rec["run_id"]] = rec
        self._since_flush += 1
        if self._since_flush >= self.flush_every:
            self.write_table()

    # -- table --------------------------------------------------------------------------
    def dataframe(self) -> Any:
        """All finished runs as a pandas DataFrame: ``run_id``, parameters, metrics,
        ``status``, ``error``, ``wall_s``, ``worker``; sorted by run order.

        ``df.attrs["units"]``: the unit of every parameter and metric column (``""`` where
        cosim knows none: arguments of the diagram function, your metrics function's
        values; see :func:`~cosim.studies.runner.run_one`) and of ``wall_s``."""
        import pandas as pd

        rows, units = [], {}
        for rec in sorted(self.records.values(), key=lambda r: r.get("index", 0)):
            known = rec.get("units") or {}
            row = {"run_id": rec["run_id"], "index": rec.get("index")}
            for k, v in rec["params"].items():
                row[k] = _unjson(v)
                units[k] = units.get(k) or known.get(k, "")
            names = {k: f"metric:{k}" if k in RESERVED or k in row else k
                     for k in rec["metrics"]}
            for k, v in rec["metrics"].items():
                row[names[k]] = _unjson(v)
                units[names[k]] = units.get(names[k]) or known.get(k, "")
            row.update(status=rec["status"], error=rec.get("error"),
                       wall_s=rec.get("wall_s"), worker=rec.get("worker"))
            rows.append(row)
        df = pd.DataFrame(rows)
        df.attrs["units"] = {**units, "wall_s": "s"}
        return df

    def write_table(self) -> str:
        """Rewrite the table (atomic); returns its path."""
        self._since_flush = 0
        df = self.dataframe()
        try:
            import pyarrow  # noqa: F401
            path = os.path.join(self.path, "results.parquet")
            tmp = path + ".tmp"
            df.to_parquet(tmp, index=False)
        except ImportError:
            path = os.path.join(self.path, "results.csv")
            tmp = path + ".tmp"
            df.to_csv(tmp, index=False)
            side = path + ".json"
            with open(side + ".tmp", "w", encoding="utf-8") as f:
                json.dump({"format": "cosim study table 1", "units": df.attrs["units"]}, f,
                          indent=1)
            os.replace(side + ".tmp", side)
        os.replace(tmp, path)
        return path
