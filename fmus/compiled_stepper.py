"""The compiled macro-step loop stepped by its caller: :class:`CompiledSession`.

:meth:`MasterScheduler.stepper() <cosim.master.MasterScheduler.stepper>` (and through it the
real-time master, :mod:`hil.master_rt`) runs macro steps on demand.  For a master the
compiled loop accepts (:mod:`fmus.compiled_master`), a session keeps the loop's plan (the
histories, the FMU function addresses) between calls and runs each :meth:`advance` in one
call into C, returning the rows; the C state is the master's state while the session is
open.  :meth:`sync` writes it back into the Python objects (the histories, the FMU
subsystems' bookkeeping, outputs waiting for their time) and closes the session; the
stepper calls it for its results, when it closes, on an error and on termination.

Per call the session updates what the stepper's per-step marks read: ``master.t``, the
exchange counter and each subsystem's step count.  Between calls the subsystems' other
Python state (their last outputs, the published histories) is the one of the session's
start: read the stepper's ``outputs()`` (the newest row), or ``sync()`` first.
"""

from __future__ import annotations

import ctypes
import time
from typing import Any

import numpy as np

from cosim.coupling import Iterative

from .compiled_iterative import count, free_states, iteration_plan, write_back

ST_HANDOVER = 10  #: the C loop handed a step over to the Python loop

__all__ = ["CompiledSession"]

_D = ctypes.POINTER(ctypes.c_double)


class CompiledSession:
    """The compiled loop's plan for ``master`` from its current time (macro step ``k``);
    ``loop`` the :class:`~fmus.compiled_master.CompiledLoop`, ``lib`` its C library."""

    chunk = 1024  #: at most this many macro steps per call into C (the run: 65,536)
    slice_s = 0.02  #: the wall time a call into C aims at (Ctrl-C is seen that often)

    def __init__(self, loop: Any, master: Any, k: int, lib: Any) -> None:
        self.loop, self.master, self.k = loop, master, k
        self.lib = lib  # the loaded loop (fmus.compiled_master._library)
        self.failed: list = []
        self.status, self.sub, self.where, self.progress = (ctypes.c_int() for _ in range(4))
        self._open()

    def _open(self) -> None:
        """The plan from the master's state now (again after a step the Python loop took)."""
        loop, master = self.loop, self.master
        self.plan, self.keep, self.keys = loop._plan(master)
        self.keep["finish"] = loop._finisher(master, self.failed)
        self.plan.finish = ctypes.cast(self.keep["finish"], ctypes.c_void_p)
        self.iter = self.ikeep = None
        if isinstance(master.coupling, Iterative):
            subs = [loop.driven(s) for s in master.subsystems]
            self.iter, self.ikeep = iteration_plan(master, subs, self.keys)
        self.open = True

    _one: Any = None  #: advance's buffer of one step and its pointer (a real-time frame's)

    def _call(self, c: int, rows: np.ndarray, at: Any = None) -> int:
        """One call into C: ``c`` macro steps from ``master.t`` into ``rows`` (``at``: its
        pointer, when kept)."""
        args = (self.master.t, self.master.H, self.k, c,
                rows.ctypes.data_as(_D) if at is None else at,
                ctypes.byref(self.status), ctypes.byref(self.sub), ctypes.byref(self.where),
                ctypes.byref(self.progress))
        if self.iter is None:
            return self.lib.cosim_master_run(ctypes.byref(self.plan), *args)
        return self.lib.cosim_master_run_iterative(ctypes.byref(self.plan),
                                                   ctypes.byref(self.iter), *args)

    def _python_step(self, out: np.ndarray, done: int) -> None:
        """The step C handed over (iterative coupling: a Jacobian to compute, no
        convergence), taken by the master's Python loop; its row into ``out[done]``."""
        m = self.master
        self.sync()
        m._macro(self.k, m.H)
        self.k += 1
        out[done] = [float(v) for v in m.outputs_now()]
        self._open()

    def advance(self, n: int, each_call: Any = None) -> tuple:
        """``n`` macro steps from ``master.t``: ``(rows at their ends, None)``.  A failed
        step ends the session (:meth:`sync`): ``(the rows before it, the exception to
        raise)``, ``master.t`` at the last completed step; a subsystem that terminated:
        ``(the rows up to that point, None)``.  ``each_call(rows, done)`` after each call
        into C (the master's run streams and shows progress there)."""
        m = self.master
        at = None
        if n == 1:  # (one step a call: a kept buffer, the row copied by the caller before
            one = self._one  # the next call; numpy's .ctypes builds objects each time)
            if one is None or one[0].shape[1] != len(self.keys):
                buf = np.empty((1, len(self.keys)))
                one = self._one = (buf, buf.ctypes.data_as(_D))
            out, at = one
        else:
            out = np.empty((n, len(self.keys)))
        done, c = 0, 16  # the first call's steps: its wall time sizes the next ones
        try:
            while done < n:
                c = min(c, n - done)
                self.progress.value = 0
                c0 = time.perf_counter()
                got = self._call(c, out[done:], at if done == 0 else None)
                spent = time.perf_counter() - c0
                done += got
                self._count(got)
                if self.status.value == ST_HANDOVER:
                    try:
                        self._python_step(out, done)
                    except Exception as exc:  # noqa: BLE001 - the caller keeps the rows first
                        return out[:done], exc
                    done += 1
                if each_call is not None:
                    each_call(out, done)
                if self.status.value and self.status.value != ST_HANDOVER:
                    self.sync()
                    if self.failed:
                        return out[:done], self.failed[0]
                    try:
                        self.loop._failure(m, self.status.value, self.sub.value,
                                           self.where.value)
                    except Exception as exc:  # noqa: BLE001 - the caller keeps the rows first
                        return out[:done], exc
                    return out[:done], None  # terminated: the run ends at this point
                # calls of about slice_s of wall time: Ctrl-C is seen that often
                c = self.chunk if spent <= 0 else \
                    max(1, min(self.chunk, int(self.slice_s * got / spent)))
        except KeyboardInterrupt as exc:  # between two calls: the completed steps stand
            self.sync()
            return out[:done], exc
        return out, None

    def _count(self, got: int) -> None:
        m = self.master
        m.t += got * m.H
        self.k += got
        m.counters.exchanges += got
        if self.iter is not None:
            count(m, self.ikeep, 0, got)
        steps = self.keep["sub_steps"]
        for i, native in enumerate(m.subsystems):
            n = int(steps[i])
            if n:
                s = self.loop.driven(native)
                s.steps += n
                m.counters.steps[native.name] += n
                if s._h_first is None:
                    s._h_first = s.rate * m.H
                steps[i] = 0

    def sync(self) -> None:
        """The C state written back into the master and its subsystems; the session ends
        (a later step needs a new session)."""
        if self.open:
            self.open = False
            self.loop._write_back(self.master, self.keep, self.keys)
            if self.iter is not None:
                write_back(self.master, self.iter, self.ikeep)
                free_states(self.ikeep)
