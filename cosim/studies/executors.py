"""Where the runs of a study execute: in-process, local processes, or Dask.

All executors offer ``map_unordered(fn, tasks)`` (yield each result as its run finishes)
and ``close()``; they are context managers.

* :class:`SerialExecutor`: in this process, one after the other (debugging, tests);
* :class:`LocalExecutor`: a pool of local worker processes
  (``concurrent.futures.ProcessPoolExecutor``), the default, ``workers`` defaulting to
  the CPU count;
* :class:`DaskExecutor`: Dask distributed (the ``dist`` extra, imported lazily): a
  ``LocalCluster`` of ``workers`` single-threaded worker processes by default, or an
  existing scheduler given by ``address`` (``tcp://host:8786``) for a real cluster.
  The workers must be able to import the model (the same file path or module on every
  machine).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from ..errors import CosimError, MissingExtraError


class SerialExecutor:
    """Runs every task in this process, in order."""

    name = "serial"
    workers = 1

    def map_unordered(self, fn: Callable, tasks: Iterable[tuple]) -> Iterator[Any]:
        for t in tasks:
            yield fn(*t)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _die_with_parent() -> None:
    """Worker initializer (Linux): the worker gets SIGTERM when the sweep process dies,
    even by SIGKILL, so no worker outlives it."""
    import ctypes
    import signal
    import sys
    # a forked worker inherits the sweep's handlers (SIGTERM raising KeyboardInterrupt,
    # which the pool's worker loop would catch and live on): back to the defaults; Ctrl-C
    # reaches the whole process group, the sweep then ends the workers itself
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        PR_SET_PDEATHSIG = 1  # noqa: N806 - <linux/prctl.h>
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)


class LocalExecutor(SerialExecutor):
    """A pool of ``workers`` local processes (``start_method``: fork, spawn, forkserver).

    The workers end with the process that made them: when it is interrupted (Ctrl-C,
    SIGTERM under ``cosim sweep``) the pool is closed and running workers are
    terminated; when it is killed, Linux sends them SIGTERM (``PR_SET_PDEATHSIG``).
    """

    name = "local"

    def __init__(self, workers: int | None = None, start_method: str | None = None) -> None:
        self.workers = int(workers or os.cpu_count() or 1)
        if self.workers < 1:
            raise CosimError(f"LocalExecutor: workers must be >= 1, got {workers!r}")
        ctx = multiprocessing.get_context(start_method) if start_method else None
        self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx,
                                         initializer=_die_with_parent)

    def map_unordered(self, fn: Callable, tasks: Iterable[tuple]) -> Iterator[Any]:
        tasks = iter(tasks)
        pending = set()
        limit = 4 * self.workers                      # bounded queue: memory and cancel
        try:
            for t in tasks:
                pending.add(self._pool.submit(fn, *t))
                if len(pending) >= limit:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        yield f.result()
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    yield f.result()
        finally:
            for f in pending:
                f.cancel()

    def close(self, kill: bool = False) -> None:
        """Shut the pool down; ``kill``: terminate the running workers at once (an
        interruption) instead of waiting for their runs."""
        if kill:
            for proc in list(getattr(self._pool, "_processes", {}).values()):
                proc.terminate()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __exit__(self, exc_type, *exc):
        self.close(kill=exc_type is not None and issubclass(exc_type, BaseException)
                   and not issubclass(exc_type, Exception))


class DaskExecutor(SerialExecutor):
    """Dask distributed: a local cluster (``workers`` processes) or ``address``."""

    name = "dask"

    def __init__(self, address: str | None = None, workers: int | None = None,
                 threads_per_worker: int = 1) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:
            raise MissingExtraError("the Dask backend needs dask.distributed: "
                                    "pip install 'cosim[dist]'") from exc
        self.cluster = None
        if address is None:
            self.cluster = LocalCluster(n_workers=int(workers or os.cpu_count() or 1),
                                        threads_per_worker=threads_per_worker,
                                        processes=True, dashboard_address=None)
            self.client = Client(self.cluster)
        else:
            self.client = Client(address)
        self.workers = len(self.client.scheduler_info().get("workers", {})) or 1

    def map_unordered(self, fn: Callable, tasks: Iterable[tuple]) -> Iterator[Any]:
        from distributed import as_completed

        futures = [self.client.submit(fn, *t, pure=False) for t in tasks]
        try:
            for f in as_completed(futures):
                yield f.result()
        finally:
            for f in futures:
                f.cancel()

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_executor(backend: str = "local", workers: int | None = None,
                  address: str | None = None) -> SerialExecutor:
    """An executor by name: ``serial``, ``local`` or ``dask``."""
    if backend == "serial":
        return SerialExecutor()
    if backend == "local":
        return LocalExecutor(workers)
    if backend == "dask":
        return DaskExecutor(address, workers)
    raise CosimError(f"unknown study backend {backend!r}; use serial, local or dask")
