"""A co-simulation master stepped by the real-time runner: multi-rate subsystems and FMUs on
the wall clock.

:class:`RealTimeMaster` wraps a :class:`~cosim.master.MasterScheduler` so that
:class:`~hil.runner.RealTimeRunner` can drive it as it drives a
:class:`~cosim.simulator.Simulator`: the runner calls ``advance_to_ticks(t_k)`` once per
frame and the adapter runs the macro steps up to ``t_k`` through the master's public
stepping interface (:class:`cosim.master_stepping.MasterStepper`, ``master.stepper()``:
the same macro steps as ``master.run``; a master of FMUs runs each frame's macro steps in one
call into its compiled loop, :mod:`fmus.compiled_stepper`)::

    master = MasterScheduler([plant_mech, plant_hyd, io], connections, 1e-3)
    rt = RealTimeRunner(RealTimeMaster(master, record_every=10), period_s=1e-3)
    res = rt.run(10.0)

The frame period must be a whole number of macro steps ``H``.  Bridge blocks inside a
:class:`~cosim.subsystem.DiagramSubsystem` do their I/O in the frame that steps their
subsystem, and the runner's verdict sees them (:attr:`RealTimeMaster.io_blocks`); under
``overrun="skip"`` their I/O is suppressed in the skipped span as in a Simulator.  A
subsystem that ends the run (an FMU's terminateSimulation) ends the real-time loop.

Memory stays flat: the outputs are kept every ``record_every`` macro steps (``None``: not
at all; see :mod:`cosim.master_stepping`); the master's stream writers (``writers=`` of the
master) get every kept row and are moved to writer threads by the runner (they are its
``observers``).

Limitations: no step-size control and no iterative coupling that rolls back (a frame must
not redo I/O: bridges refuse rollback anyway); no waveform-relaxation start for
extrapolation orders 2-3 (``high_order_start``: the first macro steps use the zero-order
start, as with ``high_order_start=False``; a warning says so); live parameter changes
``"subsystem.block.param"`` reach :class:`~cosim.subsystem.DiagramSubsystem` contexts only.
"""

from __future__ import annotations

from typing import Any

from cosim.errors import ParameterError
from cosim.master_stepping import MasterStepper
from cosim.time import SECONDS_PER_TICK

__all__ = ["RealTimeMaster"]


class _Clock:
    """The adapter's ``ctx``: the master's time, and parameter changes by path."""

    def __init__(self, owner: RealTimeMaster) -> None:
        self._owner = owner

    @property
    def ticks(self) -> int:
        return self._owner.master.t

    @property
    def time(self) -> float:
        return self._owner.master.t * SECONDS_PER_TICK

    def _target(self, path: str) -> tuple[Any, str]:
        sub, _, rest = path.partition(".")
        m = self._owner.master
        s = m.by_name.get(sub)
        ctx = getattr(getattr(s, "sim", None), "ctx", None)
        if s is None or ctx is None or not rest:
            raise ParameterError(f"RealTimeMaster: cannot set {path!r}: give "
                                 f"'subsystem.block.param' of a DiagramSubsystem; "
                                 f"subsystems: {', '.join(m.by_name)}")
        return ctx, rest

    def set_param(self, path: str, value: Any) -> None:
        ctx, rest = self._target(path)
        ctx.set_param(rest, value)

    def check_param(self, path: str, value: Any) -> tuple[str, Any]:
        """``(path, value as it would be stored)``; a bad value raises now
        (:meth:`cosim.context.Context.check_param`)."""
        ctx, rest = self._target(path)
        return path, ctx.check_param(rest, value)[1]


class RealTimeMaster:
    """A :class:`~cosim.master.MasterScheduler` as the runner's simulator (module docstring).

    Parameters
    ----------
    master : MasterScheduler
    record_every : int or None
        Keep the outputs every this many macro steps (``None``: keep none).
    t0_s : float
        Start time.
    """

    def __init__(self, master: Any, *, record_every: int | None = 1, t0_s: float = 0.0) -> None:
        if getattr(master, "step_control", None) is not None:
            raise ParameterError("RealTimeMaster: a master with step control cannot run in "
                                 "real time (a frame has a fixed length); give a fixed macro "
                                 "step")
        if getattr(master.coupling, "needs_rollback", False):
            raise ParameterError(f"RealTimeMaster: coupling '{master.coupling.name}' redoes "
                                 "macro steps; a frame's I/O cannot be redone: use Jacobi or "
                                 "GaussSeidel")
        self.master = master
        self.stepper = MasterStepper(master, record_every=record_every, t0_s=t0_s,
                                     who="RealTimeMaster")
        self.record_every = self.stepper.record_every
        self.dt_ticks = master.H
        self.ctx = _Clock(self)
        self.diagram = None
        self.name = "master(" + "+".join(s.name for s in master.subsystems) + ")"

    # ------------------------------------------------------------ the runner's view
    @property
    def _initialized(self) -> bool:
        return self.stepper.started

    @property
    def observers(self) -> list:
        """The master's stream writers (the runner moves them to writer threads)."""
        return list(getattr(self.master, "writers", ()))

    @property
    def terminated(self) -> dict | None:
        return self.master.terminated

    @property
    def io_blocks(self) -> list:
        """Every leaf block of every diagram subsystem (the runner asks them for
        ``io_figures()`` and ``suppress_io()``), plus subsystems that have either."""
        out = []
        for s in self.master.subsystems:
            d = getattr(getattr(s, "sim", None), "diagram", None) or getattr(s, "diagram", None)
            if d is not None:
                out.extend(d.leaf_blocks())
            if hasattr(s, "io_figures") or hasattr(s, "suppress_io"):
                out.append(s)
        return out

    def initialize(self) -> None:
        self.stepper.start()

    def expect(self, end: int) -> None:
        """The runner will advance to tick ``end`` frame by frame: every subsystem that can
        (a :class:`~cosim.subsystem.DiagramSubsystem`) builds its C now, whatever the
        run's length, so that no compilation falls in the middle of the frames."""
        for s in self.master.subsystems:
            ahead = getattr(s, "expect", None)
            if ahead is not None:
                ahead(end)

    def advance_to_ticks(self, end: int) -> None:
        """Macro steps up to ``end`` (a whole number of them from the current time)."""
        self.stepper.advance_to_ticks(end)

    def finish(self, error: BaseException | None = None) -> Any:
        """The results (the kept rows); the master's writers are closed with ``error``."""
        res = self.stepper.results()
        self.stepper.close(error)
        return res
