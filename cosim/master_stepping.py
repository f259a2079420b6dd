"""A co-simulation master stepped by its caller, one macro step at a time.

:meth:`MasterScheduler.run` runs the whole loop itself.  Where something else owns the
loop -- the real-time runner (:mod:`hil.master_rt`), a notebook, a test that inspects the
subsystems between steps -- :class:`MasterStepper` gives the same macro steps one by one::

    st = master.stepper(record_every=10)     # initializes the master
    while st.time < 1.0 and st.step():       # one macro step; False once a subsystem ends
        print(st.time, st.outputs()["mech.s"])
    res = st.results()                       # the kept rows, as run() returns them

It composes the master's own pieces as ``run`` does (initialize; per macro step the
coupling's step, publication and settling, the per-step marks; termination at a
communication point), so the outputs equal ``run``'s bit for bit (tested).

Memory stays flat: the outputs are kept every ``record_every`` macro steps (``None``: not
at all) and the per-step marks only there, so the per-macro-step diagnostics of the
results are per kept interval.  The master's stream writers get every kept row;
:meth:`MasterStepper.close` closes them.

Limitations: a fixed macro step (a master with step control runs through ``run``);
no waveform-relaxation start for extrapolation orders 2-3 (the first macro steps use the
zero-order start, as with ``high_order_start=False``: a warning says so).

Compiled: where the master's compiled macro-step loop accepts it (``compiled=None`` or
``True``, :mod:`fmus.compiled_master`), the stepper runs each :meth:`~MasterStepper.step`
and :meth:`~MasterStepper.advance_to_ticks` in one call into C through a session
(:mod:`fmus.compiled_stepper`) that holds the master's state between calls: ``outputs()``
reads the newest row, and :meth:`~MasterStepper.results`, :meth:`~MasterStepper.close` and
:meth:`~MasterStepper.sync` write the state back into the master's Python objects (sync before
inspecting subsystems between steps).  A parameter change pending on a subsystem ends the
session: the rest runs in Python, and ``diagnostics["compiled"]`` says from when.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

from .errors import BuildError, CosimWarning, ParameterError
from .time import SECONDS_PER_TICK

__all__ = ["MasterStepper"]


class MasterStepper:
    """Macro steps of a :class:`~cosim.master.MasterScheduler` on demand (module docstring).

    Parameters
    ----------
    master : MasterScheduler
    record_every : int or None
        Keep the outputs every this many macro steps (``None``: keep none).
    t0_s : float
        Start time.
    who : str
        The name used in messages (the caller, e.g. ``"RealTimeMaster"``).
    """

    def __init__(self, master: Any, *, record_every: int | None = 1, t0_s: float = 0.0,
                 who: str = "MasterStepper") -> None:
        if getattr(master, "step_control", None) is not None:
            raise ParameterError(f"{who}: a master with step control chooses its own macro "
                                 "steps; run it with master.run(), or give a fixed macro step")
        if record_every is not None and (isinstance(record_every, bool)
                                         or int(record_every) < 1):
            raise ParameterError(f"{who}: record_every must be >= 1 or None, got "
                                 f"{record_every!r}")
        self.master = master
        self.who = who
        self.record_every = None if record_every is None else int(record_every)
        self.t0_s = float(t0_s)
        self.steps = 0
        self.started = False
        self._wall0 = 0.0
        self._c: Any = None  #: the compiled session (fmus.compiled_stepper), if any
        self._last: Any = None  #: the newest row the session gave (a list)

    @property
    def t(self) -> int:
        """The master's time [ticks]."""
        return self.master.t

    @property
    def time(self) -> float:
        """The master's time [s]."""
        return self.master.t * SECONDS_PER_TICK

    @property
    def terminated(self) -> dict | None:
        """Set once a subsystem ended the run (who, when, why)."""
        return self.master.terminated

    def outputs(self) -> dict[str, Any]:
        """The newest published outputs, ``{"subsystem.port": value}``."""
        if not self.started:
            self.start()
        if self._c is not None and self._c.open and self._last is not None:
            return {f"{s}.{o}": cast(v) for ((s, o), cast), v
                    in zip(self._casts, self._last)}
        return {f"{s}.{o}": h.v[-1] for (s, o), h in self.master.histories.items()}

    def start(self) -> None:
        """Initialize the master at ``t0_s`` and keep its first row (done by the first
        :meth:`step` if not called)."""
        m = self.master
        if getattr(m.coupling, "needs_rollback", False):
            m.check_rollback(f"coupling '{m.coupling.name}'")
        m.terminated = None
        p = max(getattr(m, "input_orders", {}).values(), default=0)
        if getattr(m, "high_order_start", False) and p >= 2:
            warnings.warn(f"{self.who}: extrapolation order >= 2 starts with a zero-order hold "
                          "when stepped one macro step at a time (no waveform-relaxation "
                          "start); the first macro steps have a larger coupling error",
                          CosimWarning, stacklevel=3)
        m.initialize(self.t0_s)
        m.record.start()
        self.steps = 0
        self._wall0 = time.perf_counter()
        m._check_terminated()
        self.started = True
        self._open_session()

    def _open_session(self) -> None:
        """The compiled session from here on, where the master's loop accepts it."""
        m = self.master
        loop = getattr(m, "_loop", None)  # None: compiled_reason says why
        why = m.compiled_reason if loop is None else loop.run_reason(m)
        if why and getattr(m, "compiled", None):
            raise BuildError(f"{self.who}: MasterScheduler(compiled=True), but the macro steps "
                             f"cannot run compiled: {why}; pass compiled=None to fall back to "
                             "the Python loop")
        if why:
            ran = ("stepped one macro step at a time by the caller (master.stepper()): the "
                   f"Python loop ({why})")
            m.loop_ran = ran if self._c is None else \
                f"the compiled loop until t = {m.t * SECONDS_PER_TICK:.9g} s, then {ran}"
            self._c = None
            return
        self._c = loop.session(m, self.steps)
        m.loop_ran = True
        #: the subsystems that take parameter changes between steps (FMUs): a change
        #: pending is applied by the Python loop
        self._param_subs = [s for s in m.subsystems if hasattr(s, "_pending_params")]
        self._casts = [(key, bool if h.exact and isinstance(h.last_value, bool) else
                        int if h.exact else float) for key, h in m.histories.items()]

    def _compiled(self) -> bool:
        """A compiled session to step with (a new one after a sync; none once a subsystem
        has a parameter change pending: it is applied by the Python loop)."""
        c = self._c
        if c is None:
            return False
        if any(s._pending_params for s in self._param_subs):
            c.sync()
            self._open_session()
            return False
        if not c.open:
            self._open_session()
        return self._c is not None

    def sync(self) -> None:
        """The compiled session's state written back into the master and its subsystems
        (nothing to do in the Python loop)."""
        if self._c is not None:
            self._c.sync()

    def _advance_compiled(self, n: int) -> bool:
        m, H, every = self.master, self.master.H, self.record_every
        t0 = m.t
        rows, error = self._c.advance(n)
        t_end = m.t
        rows = rows.tolist()  # (one conversion; the session may reuse its buffer next call)
        try:
            for j, row in enumerate(rows):
                self.steps += 1
                if every is not None and self.steps % every == 0:
                    m.t = t0 + (j + 1) * H
                    m.record.point(H * every, row)
        finally:
            m.t = t_end
        if rows:
            self._last = rows[-1]
        if error is not None:
            raise error
        if m._check_terminated():
            self._c.sync()
            return False
        return True

    def step(self) -> bool:
        """One macro step; ``False`` (and no step) once a subsystem has ended the run."""
        if not self.started:
            self.start()
        m = self.master
        if m.terminated is not None:
            return False
        if self._compiled():
            return self._advance_compiled(1)
        m._macro(self.steps, m.H)
        self.steps += 1
        every = self.record_every
        if every is not None and self.steps % every == 0:
            m.record.point(m.H * every)
        return not m._check_terminated()

    def advance_to_ticks(self, end: int) -> None:
        """Macro steps up to ``end`` [ticks] (a whole number of them from now)."""
        if not self.started:
            self.start()
        m = self.master
        if (end - m.t) % m.H:
            raise ParameterError(f"{self.who}: cannot advance from t = {m.t * 1e-9:g} s to "
                                 f"{end * 1e-9:g} s in macro steps of {m.H * 1e-9:g} s; "
                                 "give a whole number of macro steps")
        if m.terminated is None and self._compiled():
            self._advance_compiled((end - m.t) // m.H)
            return
        while m.t < end and self.step():
            pass

    def results(self) -> Any:
        """The kept rows as :class:`~cosim.results.Results` (diagnostics per kept interval)."""
        if not self.started:
            self.start()
        self.sync()
        return self.master.record.results(time.perf_counter() - self._wall0, self.steps)

    def close(self, error: BaseException | None = None) -> None:
        """Close the master's stream writers, with ``error`` as their status, and release
        its rollback slots (the FMU states they hold)."""
        self.sync()
        release = getattr(self.master, "release_slots", None)
        if release is not None:
            release()
        for w in getattr(self.master, "writers", ()):
            if getattr(w, "_state", None) == "open":
                w.on_finish(self.master, error)
