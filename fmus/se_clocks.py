r"""When the input clocks of a Scheduled Execution FMU tick, on cosim's 1 ns grid.

One :class:`ClockTimer` per input clock of an FMI 3 Scheduled Execution FMU (used by
:class:`~fmus.scheduled.FMUScheduledBlock`), by its ``intervalVariability`` (FMI 3.0
section 2.2.9.3):

* periodic (``constant``, ``fixed``, ``tunable``): ticks at

  .. math:: t_k = t_\mathrm{start} + T_\mathrm{shift} + k\,T_\mathrm{interval},
            \qquad k = 0, 1, 2, \dots

  computed exactly with fractions (``intervalDecimal="0.001"`` is 1/1000 s, an
  ``intervalCounter``/``resolution`` pair is used as given), never by adding intervals
  in floating point; a tunable clock whose interval changes restarts from the time of
  the change, as the standard defines;
* ``changing``: the next tick is ``t_i + interval`` with the interval the FMU gives
  after each tick (and at initialization, from :math:`t_\mathrm{start}`);
* ``countdown``: the FMU announces ``t_event + interval`` through its clockUpdate
  callback (or at initialization); unscheduled after it ticked until announced again;
* ``triggered``: no timing of its own (the block ticks it from an input port).

Each tick is handled on the first 1 ns tick at or after its exact time, and the FMU is
told the exact time (``activation_time``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .errors import FMUConfigError

__all__ = ["ClockTimer", "exact", "grid_tick"]

TICKS_PER_SECOND = 10**9

#: fmi3IntervalQualifier values
NOT_YET_KNOWN, UNCHANGED, CHANGED = 0, 1, 2


def exact(x: float | int | Fraction) -> Fraction:
    """``x`` [s] as an exact fraction: a decimal as written (``0.001`` -> 1/1000)."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    return Fraction(repr(float(x)))


def grid_tick(t: float | Fraction) -> int:
    """The first 1 ns tick at or after ``t`` [s] (a float within 1e-3 ns of a tick is
    that tick, as the simulator rounds event times)."""
    if isinstance(t, Fraction):
        return math.ceil(t * TICKS_PER_SECOND)
    return math.ceil(t * TICKS_PER_SECOND - 1e-3)


@dataclass
class ClockTimer:
    """The schedule of one input clock (see the module docstring).

    ``kind`` is ``"periodic"``, ``"changing"``, ``"countdown"`` or ``"triggered"``;
    periodic timers hold ``origin`` (time of tick ``k = 0``), ``interval`` and ``k`` (the
    next tick's index); aperiodic ones ``next_time`` [s] (``None``: not scheduled).
    ``last`` is the time of the last activation (activation times strictly increase).
    """

    name: str
    vr: int
    variability: str
    priority: float
    order: int
    kind: str
    origin: Fraction | None = None
    interval: Fraction | None = None
    k: int = 0
    next_time: float | None = None
    last: float | None = None

    @classmethod
    def for_clock(cls, var: Any, order: int) -> ClockTimer:
        """A timer for the input Clock variable ``var`` (a :class:`~fmus.description.
        Variable` with ``clock`` set); periodic timers are placed by :meth:`start`."""
        c = var.clock
        iv = c.interval_variability
        kind = "periodic" if c.periodic else iv
        prio = math.inf if c.priority is None else float(c.priority)
        return cls(var.name, var.vr, iv, prio, order, kind)

    # ------------------------------------------------------------ set-up
    def start(self, t0: float, interval: Any = None, shift: Any = 0) -> None:
        """Place a periodic timer at the start time ``t0``: first tick at
        ``t0 + shift``, then every ``interval`` (exact fractions, see :func:`exact`)."""
        iv = exact(interval)
        if iv <= 0:
            raise ValueError(f"the interval of clock '{self.name}' must be > 0, got "
                             f"{float(iv)!r} s")
        sh = exact(shift or 0)
        if sh < 0:
            raise ValueError(f"the shift of clock '{self.name}' must be >= 0, got "
                             f"{float(sh)!r} s")
        self.origin, self.interval, self.k = exact(t0) + sh, iv, 0

    def retune(self, t_now: float | Fraction, interval: float) -> None:
        """A tunable clock's new interval, counted from ``t_now`` (FMI 3.0: the interval
        after a change is relative to the time of the change)."""
        iv = exact(interval)
        if iv <= 0:
            raise ValueError(f"the new interval of clock '{self.name}' must be > 0, got "
                             f"{interval!r} s")
        self.origin, self.interval, self.k = exact(t_now) + iv, iv, 0

    def schedule(self, t_ref: float, interval: float) -> None:
        """An aperiodic tick at ``t_ref + interval`` (``interval >= 0``)."""
        if not interval >= 0:
            raise ValueError(f"clock '{self.name}': the FMU gave the interval {interval!r} "
                             "s (must be >= 0)")
        self.next_time = t_ref + interval

    # ------------------------------------------------------------ queries
    def activation_time(self) -> float | None:
        """The exact time [s] of the next tick (``None``: none scheduled)."""
        if self.kind == "periodic":
            return float(self.origin + self.k * self.interval)
        return self.next_time

    def next_tick(self) -> int | None:
        """The grid tick of the next tick (``None``: none scheduled)."""
        if self.kind == "periodic":
            return grid_tick(self.origin + self.k * self.interval)
        if self.next_time is None:
            return None
        return grid_tick(self.next_time)

    # ------------------------------------------------------------ updates
    def fired(self, t: float) -> None:
        """The clock's partition ran at ``t``: move to the next tick (periodic), or
        unschedule (aperiodic: the FMU gives the next one)."""
        self.last = t
        if self.kind == "periodic":
            self.k += 1
        else:
            self.next_time = None


def check_no_clocks(fmu: Any, interface: str) -> None:
    """Refuse an FMI 3 Model Exchange or Co-Simulation FMU that declares input or output
    clocks, with one message naming them.

    cosim runs clocks only through Scheduled Execution (:class:`FMUScheduledBlock`); in
    ME and CS the importer would have to activate input clocks in Event Mode
    (``fmi3SetClock``) and read output clocks (``fmi3GetClock``), which
    :class:`~fmus.fmu_block.FMUBlock` and :class:`~fmus.subsystem.FMUSubsystem` do not:
    the clocked partitions would never run (silently wrong results).  Local clocks
    (internal to the FMU) do not need the importer and pass.
    """
    info = fmu.info
    if interface not in info.interfaces:
        return  # FMU.interface() says what the FMU has
    clocks = [v for v in info.clocks if v.causality in ("input", "output")]
    if not clocks:
        return
    listed = "; ".join(
        f"{v.name!r} ({v.causality}, {v.clock.interval_variability if v.clock else '?'})"
        for v in clocks[:8]) + ("; ..." if len(clocks) > 8 else "")
    clocked = [v.name for v in info.variables if v.kind != "clock"
               and any(c in {k.name for k in clocks} for c in v.clocks)]
    what = {"ModelExchange": "Model Exchange", "CoSimulation": "Co-Simulation"}.get(
        interface, interface)
    hint = ("load it with interface='ScheduledExecution' (load_fmu(path, interface='se')), "
            "which it also offers" if "ScheduledExecution" in info.interfaces else
            "ask for a build of the model without clocks, or with a Scheduled Execution "
            "interface")
    raise FMUConfigError(
        f"FMU '{fmu.path.name}' declares {len(clocks)} FMI 3 clock"
        f"{'s' if len(clocks) != 1 else ''} ({listed})"
        + (f" clocking {len(clocked)} variable{'s' if len(clocked) != 1 else ''} "
           f"({', '.join(clocked[:6])}{', ...' if len(clocked) > 6 else ''})" if clocked else "")
        + f": cosim imports clocks only through Scheduled Execution; as {what} its clocked "
        "partitions would never run (input clocks activated in Event Mode with fmi3SetClock "
        f"and output clocks read with fmi3GetClock are not implemented); {hint}")
