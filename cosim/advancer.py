"""How a :class:`~cosim.simulator.Simulator` moves time: its *advancer*, held by the
Simulator as Drake's simulator holds an integrator.

The Simulator owns the semantics of a major point (time events, outputs, observers,
discrete updates: ``Simulator.major``) and of an event (``RunEvents.handle``); the
advancer owns the stepping between major points: where the next stop is on its grid, the
continuous integration, the location of zero crossings inside a step, and its own
stepping state (the output grid of a variable-step run).  Two advancers:

* :class:`~cosim.fixed_step.FixedStepAdvancer`: fixed-step solvers (``cosim.solvers``),
  and diagrams without continuous states whatever the solver;
* :class:`~cosim.variable_step.VariableStepAdvancer`: SciPy's variable-step methods.

(The compiled loop of issue 35 is to be a third.)

The contract
------------
An advancer is made with its host and its settings and implements :class:`Advancer`.
It may use only the :class:`SteppingHost` interface of its host, listed below (tested:
``tests/unit/test_advancer.py`` reads the advancer modules for any other host name).

Checklist for a new advancer:

1. Implement ``advance(end)``: from ``host.ctx.ticks`` to ``end`` (integer ticks), calling
   ``host.major(tick)`` at every stop that :meth:`SteppingHost.next_stop` names and at
   ``end``, never past a stop.
2. Integrate with ``host.program.rhs`` (or ``host.program.solver``); read
   ``host.program`` again after every call into the host (a parameter change rebuilds it).
3. Check every new state with ``host.check_finite`` (a NaN stops the run naming the state).
4. With ``host.events.crossings``: compare the witnesses at the step end with
   ``crossings.previous`` (``crossings.crossed``), locate the first crossing inside the
   step to the tick, set the state there and call ``host.events.handle(z)`` (a
   variable-step advancer then ``host.events.after(tick)``); with
   ``host.events.has_dynamic``, ask ``host.events.due_tick()`` after every step.
5. Count ``host.stats["steps"]`` (and ``"partial_steps"``, ``"rhs_evals"`` where they
   apply).
6. Pick it in ``Simulator.__init__`` (``_make_advancer``).
"""

from __future__ import annotations

from typing import Any, Protocol


class SteppingHost(Protocol):
    """What an advancer may use of its Simulator."""

    #: the context: time (``ticks``), continuous state ``xc``, signals
    ctx: Any
    #: counters: ``steps``, ``partial_steps``, ``events``, ``rhs_evals`` ...
    stats: dict
    #: the current compiled program (:class:`cosim.program.Program`)
    program: Any
    #: the run's events (:class:`cosim.run_events.RunEvents`): ``crossings`` (the zero
    #: crossings), ``handle(z)`` (a located crossing at the current tick), ``after(tick)``
    #: (the point right after it, variable step), ``has_dynamic`` (blocks declare dynamic
    #: time events: their next time known only as the run goes, no run of whole steps
    #: may skip a point) and ``due_tick()`` (the next one's tick, asked afresh)
    events: Any
    #: ``check_finite(x, tick)``: stop the run if the state ``x`` at ``tick`` is not
    #: finite (:class:`cosim.finite_check.FiniteCheck`)
    check_finite: Any

    def next_stop(self, tick: int) -> int | None:
        """The first tick after ``tick`` that must be a major point (a sample hit, a time
        event or breakpoint, a dynamic time event), or None."""

    def major(self, tick: int) -> None:
        """The major point at ``tick`` (the state already there)."""

    def step_end(self, last: bool) -> None:
        """A step end between major points (fixed-step runs of whole steps): monitors,
        observers, progress; ``last``: the outputs are left evaluated."""

    def watches_steps(self) -> bool:
        """Whether anything looks at step ends between major points (:meth:`step_end`)."""

    def sample(self, tick: int, x: Any) -> None:
        """An output point between major points (variable step): the state ``x`` at
        ``tick``, outputs evaluated, observers sampled."""

    def check_monitors(self, x: Any, t: float) -> None:
        """The monitors at a solver step ``(x, t)`` (the context left as it was)."""



class Advancer(Protocol):
    """The stepping strategy of a Simulator (module docstring)."""

    def advance(self, end: int) -> None:
        """Advance from the context's time to ``end`` [ticks]."""
