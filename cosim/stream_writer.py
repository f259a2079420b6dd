"""The base of the chunked results writers: buffering, decimation, the writer thread.

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
* The formats and what a file holds after a kill are in :mod:`cosim.csv_results`
  (CSV) and :mod:`cosim.hdf5_results` (HDF5); :mod:`cosim.writers` gathers them.
* A writer records one run: after ``on_finish`` it refuses further samples.
* The writer thread is a daemon thread of the same process: it shares the GIL
  with the simulation (formatting a chunk holds it; writing and fsync release
  it) and it inherits the scheduling policy of the thread that starts it (under
  the real-time runner with ``priority=``, SCHED_FIFO, so that a busy machine
  cannot preempt it while it holds the GIL the frame waits for).  A process that
  exits without ``on_finish`` loses what was queued, as with a kill.
"""

from __future__ import annotations

import operator
import os
import queue
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from .errors import OutputError
from .observers import Decimator, Observer, provenance, resolve_ports
from .ports import kept_dtype

__all__ = ["StreamWriter"]

_FIX = "choose another --out folder or fix permissions"


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
        What to record (as for :class:`~cosim.observers.Recorder`).  Boolean and
        integer signals are written exactly, String and Binary signals (an FMU's: dtype
        :data:`~cosim.ports.STRING` / :data:`~cosim.ports.BINARY`) as text and bytes,
        each file in its own form (:mod:`cosim.csv_results`, :mod:`cosim.hdf5_results`).
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
        self._write_ns = _Cost()   # formatting + write + fsync per chunk
        self._caller_ns = _Cost()  # what the caller spent per full chunk

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
        w, c = self._write_ns, self._caller_ns
        th = self._thread
        return {"path": str(self.path), "mode": "thread" if th is not None else "inline",
                "chunks_written": self.chunks_written, "samples_written": self.samples_written,
                "chunks_queued": self.chunks_queued, "chunks_dropped": self.chunks_dropped,
                "samples_dropped": self.samples_dropped, "queue_chunks": self.queue_chunks,
                "max_queued": self.max_queued, "pending": self.pending,
                "write_ms": {"mean": w.mean() / 1e6, "max": w.max / 1e6},
                "caller_us": {"mean": c.mean() / 1e3, "max": c.max / 1e3},
                "error": None if th is None or th.error is None
                else f"{type(th.error).__name__}: {th.error}"}

    def _written(self, n: int, ns: int) -> None:
        self.chunks_written += 1
        self.samples_written += n
        self._write_ns.add(ns)

    def _not_open(self) -> OutputError:
        th = self._thread
        if self._state == "failed" and th is not None and th.error is not None:
            th.reported = True
            err = _thread_failed(self.path, th.error)
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
            row = tuple(np.array(s[k], dtype=_kept(p)) if vec else s[k]
                        for k, vec, p in zip(self._slots, self._vector, self.ports,
                                             strict=True))
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
        self._caller_ns.add(time.perf_counter_ns() - t0)

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
            raise _thread_failed(self.path, th.error) from th.error

    def _final_status(self, error: BaseException | None) -> str:
        th = self._thread
        if error is None and th is not None and th.error is not None:
            error = _thread_failed(self.path, th.error)
        status = _status(error)
        if self.chunks_dropped:
            lost = (f"{self.samples_dropped} samples in {self.chunks_dropped} chunks dropped "
                    f"from t = {self._first_drop_s:.6g} s: the writer queue "
                    f"({self.queue_chunks} chunks) was full")
            status = f"incomplete: {lost}" if error is None else f"{status}; {lost}"
        return status

    def _columns(self, rows: list[tuple]) -> list[np.ndarray]:
        """One array of shape ``(len(rows),) + port.shape`` per port: float, or the port's
        own dtype for Boolean and integer ports (exact: an Int64/UInt64 is not rounded),
        object (``str``, ``bytes``) for String and Binary ports."""
        return [np.asarray([r[j] for r in rows], dtype=_kept(p)).reshape(
            (len(rows),) + p.shape) for j, p in enumerate(self.ports)]

    def _open(self, prov: dict) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _write_chunk(self, times: np.ndarray, rows: list[tuple]) -> None:  # pragma: no cover
        raise NotImplementedError

    def _close(self, status: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


# --------------------------------------------------------------------- CSV


def _kept(port: Any) -> Any:
    """The dtype a writer keeps ``port``'s values in (:func:`~cosim.ports.kept_dtype`)."""
    return kept_dtype(getattr(port, "dtype", float))


class _Cost:
    """Count, sum and maximum of a cost in nanoseconds."""

    __slots__ = ("n", "sum", "max")

    def __init__(self) -> None:
        self.n = self.sum = self.max = 0

    def add(self, ns: int) -> None:
        self.n += 1
        self.sum += ns
        if ns > self.max:
            self.max = ns

    def mean(self) -> float:
        return self.sum / self.n if self.n else 0.0


def _thread_failed(path: Any, exc: BaseException) -> OutputError:
    """The error of a writer whose thread failed to write ``path``."""
    return OutputError(f"cannot write results to '{path}' (in its writer thread): "
                       f"{type(exc).__name__}: {exc}; {_FIX}")
