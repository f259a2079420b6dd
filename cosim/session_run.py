"""A master's run through a session of its compiled loop (the FMUs' loop,
:mod:`fmus.compiled_master`, or the native one, :mod:`cosim.native_loop`)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .time import SECONDS_PER_TICK

__all__ = ["run"]


def run(session: Any, master: Any, k: int, end: int, times: list, rows: Any, chunk: int,
        slice_s: float) -> tuple:
    """Run the macro steps from ``master.t`` to ``end`` in ``session``; returns ``(k, array
    rows)``.

    ``rows`` (a list) gets each row appended only when the master streams to writers;
    otherwise the rows come back as one array (``None`` if no step).

    Each call into C runs as many steps as fit in ``slice_s`` of wall time (sized from the
    calls before), so Python gets control back that often: Ctrl-C stops the run within about
    that time.  Interrupted (``KeyboardInterrupt``), the run keeps every macro step completed
    in C: ``master.t``, the histories, the subsystems' bookkeeping and the rows (``rows``, the
    writers) are those of the last completed step, then the interrupt goes on.
    """
    streamed = bool(master.writers)
    session.chunk = 1024 if streamed else chunk
    session.slice_s = slice_s
    t_start, H = master.t, master.H
    kept = [0]  # rows handed to the record (streamed)
    wall0 = time.perf_counter()

    def each_call(out: np.ndarray, done: int) -> None:
        if streamed:
            _stream(master, out, t_start, kept, done, times, rows)
        master._bar.update(master.t)
    out, error = session.advance((end - t_start) // H, each_call)
    session.sync()
    done = len(out)
    master.record.mark_bulk(t_start, H, done, time.perf_counter() - wall0)
    if not streamed:
        times.append((t_start + H * np.arange(1, done + 1)) * SECONDS_PER_TICK)  # one block
    if error is not None:
        if not streamed:  # the rows up to the failed step stay readable
            rows.extend(out.tolist())
        raise error
    return k + done, (None if streamed else out)


def _stream(master: Any, out: np.ndarray, t_start: int, kept: list, done: int,
            times: list, rows: Any) -> None:
    """Hand rows ``kept[0]`` to ``done`` to the record, each with its own time (the writers
    read ``master.t``)."""
    t_end, H = master.t, master.H
    try:
        while kept[0] < done:
            j = kept[0]
            master.t = t_start + (j + 1) * H
            times.append(master.t * SECONDS_PER_TICK)
            rows.append(list(out[j]))
            kept[0] = j + 1
    finally:
        master.t = t_end
