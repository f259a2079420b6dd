"""Results as HDF5: :class:`Hdf5Writer` and :func:`read_hdf5` (h5py: ``cosim[hdf5]``).

Guarantees and limitations
--------------------------
* HDF5 (h5py, ``pip install cosim[hdf5]``): the file is created with
  ``libver="latest"`` and switched to SWMR mode once its datasets exist, which
  keeps it valid when the writer dies.  A file whose writer was killed cannot be
  opened by a plain ``h5py.File(path)`` (HDF5 reports "file is already open for
  write"): open it with ``h5py.File(path, "r", swmr=True)`` (as
  :func:`read_hdf5` does) or clear the flag with ``h5clear -s path``.  Its
  ``status`` attribute then still says ``"running"``, since SWMR writers may not
  change attributes and the status is written after closing.  Such files need
  HDF5 >= 1.10 and a file system with POSIX write semantics (not NFS).
* A truncated file (copied while being written, a full disk) is an
  :class:`~cosim.errors.OutputError` saying so; it is never opened in SWMR mode, where
  HDF5 retries unreadable metadata for a very long time.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from .errors import MissingExtraError, OutputError
from .observers import Results
from .ports import text_kind
from .stream_writer import StreamWriter, _kept

__all__ = ["Hdf5Writer", "read_hdf5"]


def _h5py() -> Any:
    try:
        import h5py
    except ImportError as exc:
        raise MissingExtraError("HDF5 output needs the h5py package: pip install "
                                "'cosim[hdf5]' (or write CSV: CsvWriter, --format csv)"
                                ) from exc
    return h5py


class Hdf5Writer(StreamWriter):
    """Write an HDF5 file: ``/time`` and one dataset per signal under ``/signals``.

    Datasets follow the block path (``/signals/sub/blk.port``), are resizable
    and chunked, have shape ``(n_samples,) + port.shape`` and attributes ``unit``
    and ``path``.  Numbers keep their dtype (integers and Booleans exact); an FMU's
    String signals are variable-length UTF-8 strings and its Binary signals
    variable-length ``uint8`` arrays, with the attribute ``fmi_type`` (``"String"``,
    ``"Binary"``).  Root attributes: ``provenance`` (JSON), ``paths`` (JSON list
    of the recorded port paths, in order) and ``status``.  Read back with
    :func:`read_hdf5`; see the module notes on files whose writer was killed.
    """

    def __init__(self, path: Any, ports: Any = "all", every: int = 1, chunk: int = 1000,
                 *, queue_chunks: int = 64) -> None:
        super().__init__(path, ports, every, chunk, queue_chunks=queue_chunks)
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
            self._binary = []
            for p in self.ports:  # Boolean and integer signals in their own dtype (exact)
                kind = text_kind(getattr(p, "dtype", float))
                dtype = (_kept(p) if kind is None else self._h5.string_dtype()
                         if kind == "String" else self._h5.vlen_dtype(np.uint8))
                ds = f.create_dataset("signals/" + p.path, (0,) + p.shape, dtype,
                                      maxshape=(None,) + p.shape, chunks=(rows,) + p.shape)
                ds.attrs["unit"], ds.attrs["path"] = p.unit_text or "", p.path
                if kind is not None:
                    ds.attrs["fmi_type"] = kind
                self._ds.append(ds)
                self._binary.append(kind == "Binary")
            f.swmr_mode = True
            f.flush()
        except Exception:
            f.close()
            raise
        self._fd = os.open(self.path, os.O_RDONLY)

    def _write_chunk(self, times: np.ndarray, rows: list[tuple]) -> None:
        n0 = self._time.shape[0]
        n1 = n0 + len(times)
        for ds, col, binary in zip(self._ds, self._columns(rows), self._binary, strict=True):
            ds.resize((n1,) + ds.shape[1:])
            if binary:  # one value at a time (h5py cannot broadcast arrays of arrays)
                for i in np.ndindex(col.shape):
                    ds[(n0 + i[0],) + i[1:]] = np.frombuffer(bytes(col[i]), np.uint8)
            else:
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


def _values(ds: Any, n: int) -> np.ndarray:
    """The first ``n`` samples of a signal's dataset: String as ``str``, Binary as ``bytes``
    (object arrays), numbers in their own dtype."""
    kind = ds.attrs.get("fmi_type")
    if kind == "String":
        return np.asarray(ds.asstr()[:n], dtype=object)
    if kind == "Binary":
        raw = ds[:n]
        out = np.empty(raw.shape, dtype=object)
        for i in np.ndindex(raw.shape):
            out[i] = bytes(raw[i])
        return out
    return ds[:n]


def read_hdf5(path: Any) -> Results:
    """Read an :class:`Hdf5Writer` file (also one whose writer was killed) into Results.

    The status (``"complete"``, ``"error: ..."`` or ``"running"`` if the writer
    did not finish) is in ``results.diagnostics["status"]``.
    """
    h5py = _h5py()
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        text = str(exc)
        if "truncated file" in text:  # SWMR mode would retry its metadata for minutes
            raise OutputError(f"cannot read '{path}': the file is truncated ({text}); it was "
                              "cut short (copied while being written, or the disk was "
                              "full): write it again") from None
        if "already open for write" not in text and "consistency flags" not in text:
            raise OutputError(f"cannot read '{path}' as HDF5: {text}") from None
        # a killed SWMR writer leaves the file marked as open for writing
        f = h5py.File(path, "r", swmr=True)
    with f:
        paths = json.loads(f.attrs["paths"])
        dsets = [f["signals/" + p] for p in paths]
        n = min([f["time"].shape[0]] + [d.shape[0] for d in dsets])
        signals = {p: _values(d, n) for p, d in zip(paths, dsets, strict=True)}
        units = {p: str(d.attrs["unit"]) for p, d in zip(paths, dsets, strict=True)}
        return Results(f["time"][:n], signals, units, json.loads(f.attrs["provenance"]),
                       {"status": str(f.attrs["status"]), "file": str(path)})
