"""The native master loop stepped by its caller: :class:`NativeSession`.

:meth:`MasterScheduler.stepper() <cosim.master.MasterScheduler.stepper>` (and through it the
real-time master, :mod:`hil.master_rt`) and ``master.run`` run macro steps through a session
of the master's compiled loop; for a master of native subsystems that is this one
(:mod:`cosim.native_loop`).  It plans from the master's state (its histories, the outputs
waiting for their time, which subsystems hold their state in C), runs each :meth:`advance` in
calls into C and returns the rows; while it is open the histories and the waiting outputs are
the C's.  :meth:`sync` writes them back into the master and closes the session; the stepper
calls it for its results, when it closes, on an error and on termination.

Per call the session updates what the stepper's per-step marks read: ``master.t``, the
exchange counter and each subsystem's step count; the held subsystems' Simulator statistics
at :meth:`sync`.
"""

from __future__ import annotations

import ctypes
import time
from typing import Any

import numpy as np

from .native_plan import DEPTH, TERMS, build_plan, held_of
from .time import SECONDS_PER_TICK

__all__ = ["NativeSession"]

_NS = SECONDS_PER_TICK
_PYSTEP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
ST_HANDBACK, ST_PYTHON, ST_ENDED, ST_SETTLE = 1, 2, 3, 4  #: the C loop's statuses


class NativeSession:
    """The native loop's plan for ``master`` from its current time (macro step ``k``)."""

    chunk = 1024  #: at most this many macro steps per call into C
    slice_s = 0.02  #: the wall time a call into C aims at (Ctrl-C is seen that often)

    def __init__(self, loop: Any, master: Any, k: int, lib: Any) -> None:
        self.loop, self.master, self.k, self.lib = loop, master, k, lib
        self.failed: list = []
        self.status, self.sub = ctypes.c_int(), ctypes.c_int()
        self._run = lib.cosim_native_run
        self._pystep = _PYSTEP(self._step_python)  # (kept: C holds its address)
        self.plan: Any = None
        self._one = np.empty((1, len(master.histories)))  # (advance's rows of one step)
        self._one_at = self._one.ctypes.data  # (numpy's .ctypes costs a microsecond a call)
        self._names = [s.name for s in master.subsystems]
        self._planned: list = []  # each subsystem's HeldStep (or None) the plan was made with
        self._seen: list | None = None  # each subsystem's _held when last looked at
        self._held_names: list = []  # the subsystems the last plan steps in C
        #: macro steps run in C, and handed to the Python loop (nothing held in C, a C step
        #: that did not complete)
        self.steps_c = self.steps_python = 0
        self.open = True

    # ------------------------------------------------------------ the plan
    def _changed(self) -> list | None:
        """Each subsystem's HeldStep for the loop (:func:`~cosim.native_plan.held_of`) when
        one was held or handed back since the plan was made, else None (cheap: a held state
        handed back or held anew changes the subsystem's ``_held``)."""
        now = [s._held for s in self.master.subsystems]
        if now == self._seen:
            return None
        self._seen = now
        helds = [held_of(s) for s in self.master.subsystems]
        return None if helds == self._planned else helds

    def _replan(self, helds: list) -> None:
        """Write the open plan back, then plan again from the master's state."""
        self._write_back()
        self._planned = helds
        if all(h is None for h in helds):
            self.plan = None  # nothing in C (yet): the Python loop steps
            return
        for h in helds:
            if h is not None:
                h.sub._initializing = False
        self.plan, self.keep, self.keys, self.ports = build_plan(self.master, helds,
                                                                 self._pystep)
        k = self.keep
        self._py_in, self._py_out = k["py_in"], k["py_out"]
        self._held_names = [h.sub.name for h in helds if h is not None]
        self._args = (ctypes.byref(self.plan), ctypes.byref(self.status), ctypes.byref(self.sub))
        self._settled = [s for s in self.master.settler.subs if s.rate == 1]

    def _close_plan(self) -> None:
        """Write the plan back and drop it (planned again at the next step: the histories or
        the states may have changed in Python)."""
        self._write_back()
        self.plan = None
        self._planned, self._seen = [], None

    def _write_back(self) -> None:
        """The plan's histories, waiting outputs and counts into the master and its
        subsystems (the plan stays usable: nothing in it changes)."""
        self._count_steps()
        if self.plan is None:
            return
        m, keep = self.master, self.keep
        ht, hv, hn = keep["hist_t"], keep["hist_v"], keep["hist_n"]
        for j, key in enumerate(self.keys):
            n = int(hn[j])
            a = DEPTH * j
            m.histories[key].restore((ht[a:a + n].tolist(), hv[a:a + n].tolist()))
        m.pending.clear()
        for i, s in enumerate(m.subsystems):
            if keep["pend"][i]:
                pv = keep["pend_v"]
                m.pending[s.name] = (int(keep["pend_t"][i]),
                                     {o: float(pv[j]) for o, j in self.ports[i][1]})
        acc = keep["acc"]
        for i, s in enumerate(m.subsystems):
            h = self._planned[i]
            if h is not None and acc[8 * i + 1]:
                h.run.counted(acc[8 * i:8 * i + 8])
                h.run.whole = True
                s._sim._observation = None
        acc[:] = 0

    # ------------------------------------------------------------ stepping
    def _step_python(self, i: int, t0: int, h: int) -> int:
        """The C loop's callback: subsystem ``i``'s step from ``t0`` over ``h`` ticks in
        Python (``h`` 0: its outputs evaluated again at ``t0``, the master's settling), the
        inputs' polynomials from ``py_in``, the outputs into ``py_out``; 1 when it ended the
        run, -1 with the exception kept."""
        try:
            s = self.master.subsystems[i]
            ins, outs = self.ports[i]
            d = self._py_in.tolist()  # (one conversion, then list slices)
            polys = {}
            for name, j in ins:
                a = j * (TERMS + 1)
                polys[name] = tuple(d[a + 1:a + 1 + int(d[a])])
            s.set_inputs(t0 * _NS, polys)
            if h:
                s.do_step(t0, h)
            else:
                s.refresh_outputs()
            got = s.get_outputs()
            out = self._py_out
            for o, j in outs:
                out[j] = float(got[o])
            return 1 if h and s.terminated else 0
        except BaseException as exc:  # noqa: BLE001 - never raise through C
            self.failed.append(exc)
            return -1

    def _settle_python(self, q: int) -> None:
        """The macro step whose settling the C handed over at the ``q``-th settled
        subsystem (its C evaluation failed, or a Python one raised): the step's end, and the
        settling from there in the Python loop (or the exception)."""
        m = self.master
        self._count_steps()
        self._close_plan()
        m.t += m.H
        self.k += 1
        self.steps_c += 1
        m.counters.exchanges += 1
        if self.failed:
            raise self.failed.pop()
        m.settler.settle_point(m.t, self._settled[q:])

    def _python_step(self, out: np.ndarray, done: int) -> None:
        """The macro step ``k`` taken by the master's Python loop; its row into
        ``out[done]``."""
        m = self.master
        self._close_plan()
        m._macro(self.k, m.H)
        self.k += 1
        self.steps_python += 1
        out[done] = [float(v) for v in m.outputs_now()]

    def advance(self, n: int, each_call: Any = None) -> tuple:
        """``n`` macro steps from ``master.t``: ``(rows at their ends, None)``.  A failed
        step: ``(the rows before it, the exception to raise)``, ``master.t`` at the last
        completed step; a subsystem that ended the run: ``(the rows up to that point,
        None)``.  ``each_call(rows, done)`` after each call into C or step in Python, and
        before returning."""
        m = self.master
        if n == 1:  # (one step a call, a real-time frame's: a kept buffer, the row copied
            out, at = self._one, self._one_at  # by the caller before the next call)
        else:
            out = np.empty((n, len(m.histories)))
            at = out.ctypes.data
        done, c = 0, 16  # the first call's steps: its wall time sizes the next ones
        error, stop = None, False
        try:
            while done < n and not stop:
                helds = self._changed()
                if helds is not None:
                    self._replan(helds)
                if self.plan is None:  # nothing held in C: the Python loop's step
                    try:
                        self._python_step(out, done)
                    except Exception as exc:  # noqa: BLE001 - the caller keeps the rows first
                        error = exc
                        break
                    done += 1
                    stop = m._check_terminated()
                else:
                    c = min(c, n - done)
                    c0 = time.perf_counter()
                    plan, status, sub = self._args
                    got = self._run(plan, m.t, m.H, self.k, c, at + done * out.strides[0],
                                    status, sub)
                    spent = time.perf_counter() - c0
                    self._count(got)
                    done += got
                    if self.status.value:
                        error, stop = self._status(out, done)
                        if error is not None:
                            break
                        if self.status.value in (ST_HANDBACK, ST_SETTLE):
                            done += 1
                    c = self.chunk if spent <= 0 else \
                        max(1, min(self.chunk, int(self.slice_s * max(got, 1) / spent)))
                if each_call is not None:
                    each_call(out, done)
        except KeyboardInterrupt as exc:  # between two calls: the completed steps stand
            self._write_back()
            error = exc
        if error is None and not stop:
            return out, None
        if each_call is not None:
            each_call(out, done)
        return out[:done], error

    def _status(self, out: np.ndarray, done: int) -> tuple:
        """After a call into C: ``(the exception to raise or None, whether the run ends)``;
        a step handed over is taken by the Python loop (its row into ``out[done]``)."""
        st, m = self.status.value, self.master
        if st == ST_PYTHON:
            self._write_back()
            return self.failed.pop(), True
        if st == ST_ENDED:
            self._write_back()
            return None, True
        if st in (ST_HANDBACK, ST_SETTLE):
            try:
                if st == ST_HANDBACK:
                    self._python_step(out, done)
                else:
                    self._settle_python(self.sub.value)
                    out[done] = [float(v) for v in m.outputs_now()]
            except Exception as exc:  # noqa: BLE001 - the caller keeps the rows first
                return exc, True
            return None, m._check_terminated()
        return None, False

    def _count(self, got: int) -> None:
        m = self.master
        m.t += got * m.H
        self.k += got
        self.steps_c += got
        m.counters.exchanges += got
        m.counters.flush = self._count_steps  # (the subsystems' counts: when read)

    def _count_steps(self) -> None:
        """The C's per-subsystem step counts and wall times since the last time into the
        master's counters (their ``flush``: added when read, not after every call)."""
        c = self.master.counters
        if c.flush == self._count_steps:
            c.flush = None
        if self.plan is None:
            return
        steps, wall = self.keep["sub_steps"], self.keep["wall_ns"]
        c_steps, c_wall = c._steps, c._wall  # (not the properties: they would flush)
        for name, n, w in zip(self._names, steps.tolist(), wall.tolist()):
            if n:
                c_steps[name] += n
            if w:
                c_wall[name] += w * 1e-9
        steps[:] = 0
        wall[:] = 0

    def sync(self) -> None:
        """The C state written back into the master (the session ends)."""
        if self.open:
            self.open = False
            self._close_plan()
            self.master.loop_ran = self.ran()

    def ran(self) -> Any:
        """What ran the session's macro steps: True when all ran in C, else a sentence."""
        if not self.steps_python:
            return True
        return (f"the native loop: {self.steps_c} macro step(s) in C (held in C: "
                f"{', '.join(self._held_names) or 'none'}), {self.steps_python} in the Python "
                "loop (no subsystem's state held in C yet, or a C step that did not complete)")
