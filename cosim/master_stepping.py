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
zero-order start, as with ``high_order_start=False``: a warning says so); the compiled
macro-step loop is not used (one macro step at a time from Python).
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
        return {f"{s}.{o}": h.v[-1] for (s, o), h in self.master.histories.items()}

    def start(self) -> None:
        """Initialize the master at ``t0_s`` and keep its first row (done by the first
        :meth:`step` if not called)."""
        m = self.master
        if m.compiled:
            raise BuildError(f"{self.who}: MasterScheduler(compiled=True), but a stepper runs "
                             "one macro step at a time in the Python loop; use master.run() "
                             "for the compiled loop, or compiled=None")
        m.loop_ran = ("stepped one macro step at a time by the caller (master.stepper()): the "
                      "Python loop")
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

    def step(self) -> bool:
        """One macro step; ``False`` (and no step) once a subsystem has ended the run."""
        if not self.started:
            self.start()
        m = self.master
        if m.terminated is not None:
            return False
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
        while m.t < end and self.step():
            pass

    def results(self) -> Any:
        """The kept rows as :class:`~cosim.results.Results` (diagnostics per kept interval)."""
        if not self.started:
            self.start()
        return self.master.record.results(time.perf_counter() - self._wall0, self.steps)

    def close(self, error: BaseException | None = None) -> None:
        """Close the master's stream writers, with ``error`` as their status, and release
        its rollback slots (the FMU states they hold)."""
        release = getattr(self.master, "release_slots", None)
        if release is not None:
            release()
        for w in getattr(self.master, "writers", ()):
            if getattr(w, "_state", None) == "open":
                w.on_finish(self.master, error)
