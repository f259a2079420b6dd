"""Stream recorded signals to disk in chunks: CSV and HDF5 writers.

A :class:`StreamWriter` is an observer that buffers ``chunk`` samples in memory
and then appends them to its file.  It writes to the final path directly (no
temporary file renamed at the end): partial results are the point.  When a
run fails, :meth:`Simulator.run` finishes the observers with the error, which
writes the buffered rest and records the error.

Two ways to write
-----------------
*Inline* (the default, and what an offline :meth:`Simulator.run` uses): a full
chunk is formatted, written and fsynced in the call that completed it.  Simple
and deterministic (the file has grown when ``on_sample`` returns), but the
simulation waits for the disk: a flush with ``os.fsync`` took 6.7 ms median and
387 ms at worst on a busy machine (issue 22).

*On a writer thread* (:meth:`StreamWriter.use_writer_thread`; the real-time
runner :class:`hil.runner.RealTimeRunner` switches its simulator's writers to
this mode for the run): the caller only hands the full chunk's lists to a
bounded queue (a few microseconds, no lock taken, never waits); a writer
thread does the formatting, the write and the fsync.  This is the
``logging.handlers.QueueHandler`` / ``QueueListener`` pattern of the standard
library.  A chunk that finds ``queue_chunks`` chunks already waiting is
**dropped and counted** (``stats()["chunks_dropped"]``): the file then lacks
those samples and its status says so (``"incomplete: ..."`` instead of
``"complete"``).  The default depth, 64 chunks, holds about a minute at the
default chunk of 1000 samples at 1 kHz, so under normal load nothing is lost
and the count is the alarm.  An error in the writer thread is kept and raised
(:class:`~cosim.errors.OutputError` with the original message and the file
name) by the next ``on_sample`` call, or by ``on_finish``; the writer writes
nothing more after it.  ``on_finish`` hands over the last partial chunk, waits
until the thread has written everything and closes the file.

Guarantees and limitations
--------------------------
* A Python exception in the run loses nothing: ``on_finish`` writes (inline) or
  drains (thread) every buffered sample.  A kill (SIGKILL, power loss) loses
  the samples not yet fsynced: inline, at most the last, partial chunk
  (``chunk - 1`` samples); with the writer thread, that partial chunk plus the
  chunks queued but not yet written (at most ``queue_chunks``, usually none or
  one: ``stats()["max_queued"]`` says how deep the queue got).
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
* The writer thread is a daemon thread of the same process: it shares the GIL
  with the simulation (formatting a chunk holds it; writing and fsync release
  it) and it inherits the scheduling policy of the thread that starts it (under
  the real-time runner with ``priority=``, SCHED_FIFO, so that a busy machine
  cannot preempt it while it holds the GIL the frame waits for).  A process that
  exits without ``on_finish`` loses what was queued, as with a kill.
"""

from __future__ import annotations

import csv
import io
import json
import operator
import os
import queue
import re
import threading
import time
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


_STOP = object()  # ends a writer thread


class _WriterThread:
    """The writer thread of one :class:`StreamWriter`: it takes chunks from a
    ``queue.SimpleQueue`` (whose ``put`` never blocks nor waits for a lock held by
    this thread) and formats, writes and fsyncs them; errors are kept, not raised."""

    def __init__(self, writer: StreamWriter) -> None:
        self.writer = writer
        self.q: queue.SimpleQueue = queue.SimpleQueue()
        self.done = 0  # chunks taken and finished (written or not, after an error)
        self.error: BaseException | None = None
        self.reported = False
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name=f"cosim writer {writer.path.name}")
        self.thread.start()

    def _run(self) -> None:
        w = self.writer
        while True:
            item = self.q.get()
            if item is _STOP:
                return
            times, rows = item
            if self.error is None:
                t0 = time.perf_counter_ns()
                try:
                    w._write_chunk(np.asarray(times, dtype=float), rows)
                except Exception as exc:  # noqa: BLE001 - raised in the caller's thread
                    self.error = exc
                    w._state = "failed"  # the next on_sample raises it
                else:
                    w._written(len(rows), time.perf_counter_ns() - t0)
            self.done += 1

    def stop(self) -> None:
        """Let the thread write everything queued, then end it (waits)."""
        if self.thread.is_alive():
            self.q.put(_STOP)
            self.thread.join()


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
        Samples buffered in memory before they are appended to the file (or handed to
        the writer thread).
    queue_chunks : int
        Depth of the writer thread's queue, in chunks (used after
        :meth:`use_writer_thread`): a chunk that finds this many chunks queued or
        being written is dropped and counted (module notes).

    Notes
    -----
    Subclasses implement ``_open(prov)``, ``_write_chunk(times, rows)`` and
    ``_close(status)``; ``rows`` holds one tuple of port values per sample.  With a
    writer thread, ``_write_chunk`` runs on that thread, ``_open`` and ``_close`` in
    the caller's.
    """

    def __init__(self, path: Any, ports: Any = "all", every: int = 1, chunk: int = 1000,
                 *, queue_chunks: int = 64) -> None:
        for name, v in (("every", every), ("chunk", chunk), ("queue_chunks", queue_chunks)):
            if int(v) < 1:
                raise ValueError(f"{type(self).__name__}: {name} must be >= 1, got {v!r}")
        self.path = Path(path)
        self.spec, self.every, self.chunk = ports, int(every), int(chunk)
        self.queue_chunks = int(queue_chunks)
        self.ports: list = []
        self._slots: list[int] = []
        self._state = "new"  # new -> open -> closed (-> failed: the writer thread's error)
        self._times: list[float] = []
        self._rows: list[tuple] = []
        self._dec = Decimator(self.every)
        self._thread: _WriterThread | None = None
        self._reset_counts()

    def _reset_counts(self) -> None:
        self.chunks_written = self.samples_written = 0
        self.chunks_queued = self.chunks_dropped = self.samples_dropped = 0
        self.max_queued = 0
        self._first_drop_s: float | None = None
        self._write_ns = [0, 0]   # sum, max: formatting + write + fsync per chunk
        self._caller_ns = [0, 0, 0]  # count, sum, max: what the caller spent per chunk

    # ------------------------------------------------------------ writer thread
    def use_writer_thread(self, queue_chunks: int | None = None) -> None:
        """From now on hand full chunks to a writer thread (module notes), which is
        started here and ended by :meth:`on_finish`.

        The real-time runner calls this for its run; call it yourself to keep the disk
        out of an offline loop too (the file then grows a little after ``on_sample``).

        Raises
        ------
        OutputError
            If the writer is closed (a writer records one run).
        """
        if queue_chunks is not None:
            if int(queue_chunks) < 1:
                raise ValueError(f"{type(self).__name__}: queue_chunks must be >= 1, got "
                                 f"{queue_chunks!r}")
            self.queue_chunks = int(queue_chunks)
        if self._state in ("closed", "failed"):
            raise OutputError(f"{type(self).__name__} '{self.path}' is {self._state}: it "
                              "cannot switch to a writer thread; a writer records one run: "
                              "make a new one")
        if self._thread is None:
            self._thread = _WriterThread(self)

    @property
    def threaded(self) -> bool:
        """True when full chunks go to a writer thread."""
        return self._thread is not None

    @property
    def pending(self) -> int:
        """Chunks handed to the writer thread and not yet finished (0 inline)."""
        th = self._thread
        return 0 if th is None else self.chunks_queued - th.done

    def stats(self) -> dict:
        """Counts and costs of this writer (streaming: nothing grows with the run).

        ``write_ms``: formatting, write and fsync per chunk, wherever they run;
        ``caller_us``: what the caller (``on_sample``: the real-time frame) spent per
        full chunk (the whole write inline, the hand-over with a writer thread);
        ``chunks_dropped``/``samples_dropped``: chunks that found the queue full.
        """
        n_w, (w_sum, w_max) = self.chunks_written, self._write_ns
        n_c, c_sum, c_max = self._caller_ns
        th = self._thread
        return {"path": str(self.path), "mode": "thread" if th is not None else "inline",
                "chunks_written": self.chunks_written, "samples_written": self.samples_written,
                "chunks_queued": self.chunks_queued, "chunks_dropped": self.chunks_dropped,
                "samples_dropped": self.samples_dropped, "queue_chunks": self.queue_chunks,
                "max_queued": self.max_queued, "pending": self.pending,
                "write_ms": {"mean": w_sum / n_w / 1e6 if n_w else 0.0, "max": w_max / 1e6},
                "caller_us": {"mean": c_sum / n_c / 1e3 if n_c else 0.0, "max": c_max / 1e3},
                "error": None if th is None or th.error is None
                else f"{type(th.error).__name__}: {th.error}"}

    def _written(self, n: int, ns: int) -> None:
        self.chunks_written += 1
        self.samples_written += n
        w = self._write_ns
        w[0] += ns
        if ns > w[1]:
            w[1] = ns

    def _caller(self, ns: int) -> None:
        c = self._caller_ns
        c[0] += 1
        c[1] += ns
        if ns > c[2]:
            c[2] = ns

    def _thread_failed(self, exc: BaseException) -> OutputError:
        return OutputError(f"cannot write results to '{self.path}' (in its writer thread): "
                           f"{type(exc).__name__}: {exc}; {_FIX}")

    def _not_open(self) -> OutputError:
        th = self._thread
        if self._state == "failed" and th is not None and th.error is not None:
            th.reported = True
            err = self._thread_failed(th.error)
            err.__cause__ = th.error
            return err
        return OutputError(f"{type(self).__name__} '{self.path}' is not open "
                           f"({self._state}); a writer records one run: make a new one")

    # ------------------------------------------------------------ simulator protocol
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
        self._reset_counts()
        if self._thread is not None:
            self._thread.done = 0
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
        if self._state != "open":  # before decimation: a writer thread's error surfaces at once
            raise self._not_open()
        if not self._dec.keep():
            return
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
        """Append the buffered samples to the file now (inline), or hand them to the
        writer thread (which writes them soon: :meth:`on_finish` waits for it)."""
        if not self._rows or self._state != "open":
            return
        t0 = time.perf_counter_ns()
        if self._thread is not None:
            self._hand_over(False)
        else:
            try:
                self._write_chunk(np.asarray(self._times, dtype=float), self._rows)
            except OSError as exc:
                raise self._fail(exc) from exc
            self._written(len(self._rows), time.perf_counter_ns() - t0)
            self._times, self._rows = [], []
        self._caller(time.perf_counter_ns() - t0)

    def _hand_over(self, force: bool) -> None:
        """The buffered samples to the writer thread's queue, or dropped and counted if
        it is full (``force``: queued whatever its depth, at the end of the run)."""
        th = self._thread
        times, rows = self._times, self._rows
        self._times, self._rows = [], []
        depth = self.chunks_queued - th.done
        if depth >= self.queue_chunks and not force:
            self.chunks_dropped += 1
            self.samples_dropped += len(rows)
            if self._first_drop_s is None:
                self._first_drop_s = times[0]
            return
        th.q.put((times, rows))
        self.chunks_queued += 1
        if depth + 1 > self.max_queued and not force:
            self.max_queued = depth + 1

    def on_finish(self, sim: Any, error: BaseException | None = None) -> None:
        """Write (or hand over) the last samples, wait for the writer thread to write
        everything, close the file with the run's status.  Raises the writer thread's
        error if no ``on_sample`` has raised it yet."""
        th = self._thread
        if self._state not in ("open", "failed"):
            if th is not None:
                th.stop()
            return
        try:
            if th is None:
                self.flush()
            elif self._rows and th.error is None:
                self._hand_over(True)
        finally:
            try:
                if th is not None:
                    th.stop()
            finally:
                self._state = "closed"
                self._close(self._final_status(error))
        if th is not None and th.error is not None and not th.reported:
            th.reported = True
            raise self._thread_failed(th.error) from th.error

    def _final_status(self, error: BaseException | None) -> str:
        th = self._thread
        if error is None and th is not None and th.error is not None:
            error = self._thread_failed(th.error)
        status = _status(error)
        if self.chunks_dropped:
            lost = (f"{self.samples_dropped} samples in {self.chunks_dropped} chunks dropped "
                    f"from t = {self._first_drop_s:.6g} s: the writer queue "
                    f"({self.queue_chunks} chunks) was full")
            status = f"incomplete: {lost}" if error is None else f"{status}; {lost}"
        return status

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


def _is_int(port: Any) -> bool:
    return np.dtype(getattr(port, "dtype", float)).kind in "iu"


class CsvWriter(StreamWriter):
    """Write ``time [s]`` and one ``path [unit]`` column per signal element.

    Provenance is written first as ``# key: value`` comment lines (values that
    are not plain text as JSON), then the header line, then the rows with the
    shortest exactly round-tripping float text; integer signals (an FMU's Int64 or
    UInt64 included) are written as exact integers and named in an ``# integers:``
    line, so :func:`read_csv` gives them back exactly.  Vector ports become columns
    ``path[0] [unit]``, ``path[1] [unit]``, ... .  Read back with :func:`read_csv`.
    """

    def _open(self, prov: dict) -> None:
        self._ints = [_is_int(p) for p in self.ports]
        if any(self._ints):
            prov = {**prov, "integers": [p.path for p, i in zip(self.ports, self._ints) if i]}
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
