"""The variable-step advancer of :class:`~cosim.simulator.Simulator`
(:mod:`cosim.advancer`): the continuous part integrated with SciPy's solvers.

The solver (``scipy.integrate.RK45``, ``DOP853``, ``Radau``, ``BDF``, ...) is
driven step by step from one stop (sample hit, breakpoint, end) to the next and
restarted there with the last step size.  Output-grid points and zero
crossings use the solver's dense output; event instants are found with Brent's
method and rounded to the 1 ns tick.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import SolverError
from .event_location import first_root
from .time import SECONDS_PER_TICK, TICKS_PER_SECOND

_NS = SECONDS_PER_TICK


class VariableStepAdvancer:
    """Variable-step advance (module docstring).

    ``host``: the Simulator (:class:`~cosim.advancer.SteppingHost`); ``solver_class``: a
    :class:`~cosim.solvers.VariableStepSolver`; ``out_grid``: the output grid [ticks]
    (None: every accepted step is an output point); ``rtol``, ``atol``, ``max_step``
    [s]: the solver's settings (``max_step`` default: the output grid)."""

    def __init__(self, host: Any, solver_class: type, out_grid: int | None, rtol: float,
                 atol: float, max_step: float | None) -> None:
        self.host = host
        self.solver_class = solver_class
        self.name = solver_class.name
        self.out_grid = out_grid
        self.rtol, self.atol, self.max_step = rtol, atol, max_step
        #: the next output-grid tick (set at the first advance)
        self.next_out: int | None = None
        #: None, or a function giving the right-hand side at each start of the integrator
        #: (the compiled Simulator's C, :mod:`cosim.compiled_rhs`), else the program's
        self.rhs_source: Any = None

    def advance(self, end: int) -> None:
        """Integrate to ``end``, stopping at every hit and breakpoint."""
        host = self.host
        ctx = host.ctx
        cls = self.solver_class.scipy_class()
        out_grid = self.out_grid
        first_step = None
        if out_grid and self.next_out is None:
            self.next_out = (ctx.ticks // out_grid + 1) * out_grid
        while ctx.ticks < end:
            tick = ctx.ticks
            stop = end
            nxt = host.next_stop(tick)
            if nxt is not None and nxt < stop:
                stop = nxt
            kw = {"rtol": self.rtol, "atol": self.atol}
            max_step = self.max_step or (out_grid * _NS if out_grid else None)
            if max_step:
                kw["max_step"] = max_step
            if first_step:
                kw["first_step"] = min(first_step, stop * _NS - tick * _NS)
            x0 = ctx.xc.copy()
            ctx.mode_time = tick * _NS
            try:
                rhs = host.program.rhs if self.rhs_source is None else self.rhs_source()
                sol = cls(rhs, tick * _NS, x0, stop * _NS, **kw)
            except ValueError as exc:
                raise SolverError(f"{self.name}: {exc}") from exc
            event_stop = None
            while sol.status == "running":
                t_prev = sol.t
                msg = sol.step()
                if sol.status == "failed":
                    hint = ("the solution may be blowing up, or jumps at an instant no "
                            "block declared as a time event or zero crossing")
                    if not self.solver_class.stiff:
                        hint = "the system may be stiff (try 'radau' or 'bdf'), or " + hint
                    raise SolverError(f"solver {self.name} failed at t = {sol.t:.9g} s: "
                                      f"{msg} {hint}")
                host.stats["steps"] += 1
                host.check_finite(sol.y, int(round(sol.t * TICKS_PER_SECOND)))
                host.check_monitors(np.asarray(sol.y), sol.t)
                dense = sol.dense_output() if (out_grid or host.events.crossings) else None
                # zero crossings on this step
                if host.events.crossings:
                    ev = self._locate(dense, t_prev, sol.t)
                    if ev is not None:
                        event_stop = ev
                        break
                # output grid points inside (t_prev, t]: only where the dense output is an
                # interpolant (a grid tick that rounds past t waits for the next step)
                if out_grid:
                    t_last = int(np.floor(sol.t * TICKS_PER_SECOND + 1e-6))
                    while self.next_out <= t_last and self.next_out < stop:
                        tg = self.next_out
                        self.next_out += out_grid
                        host.sample(tg, np.asarray(dense(min(tg * _NS, sol.t))))
                elif sol.status == "running":
                    # no output grid: record every accepted step
                    host.sample(int(round(sol.t * TICKS_PER_SECOND)), np.asarray(sol.y).copy(),
                                sol.t)
                first_step = sol.step_size or first_step
                if host.events.has_dynamic and sol.status == "running":
                    # an event asked for by now (a step event seen by a monitor): stop here,
                    # handle it as a major time point and restart the solver after it
                    k = host.events.due_tick()
                    tk = int(round(sol.t * TICKS_PER_SECOND))
                    if k is not None and k <= tk:
                        ctx.xc = np.asarray(sol.y).copy()
                        host.major(tk)
                        event_stop = tk
                        break
            host.stats["rhs_evals"] += sol.nfev
            if event_stop is not None:
                continue  # restart from the event with a fresh solver
            ctx.xc = np.asarray(sol.y).copy()
            host.major(stop)
            while out_grid and self.next_out <= stop:
                self.next_out += out_grid

    def _locate(self, dense: Any, t_prev: float, t_new: float) -> int | None:
        """Find the first zero crossing in ``(t_prev, t_new]`` on the dense output;
        handle it."""
        host = self.host
        ctx = host.ctx
        program = host.program
        crossings = host.events.crossings

        def g_at(i: int, t: float) -> float:
            ctx.xc = np.asarray(dense(t))
            ctx.time = t
            program.evaluate(ctx)
            return crossings.witness(i, ctx)

        ctx.xc = np.asarray(dense(t_new))
        ctx.time = t_new
        program.evaluate(ctx)
        g_new = crossings.witnesses(ctx)
        crossed = crossings.crossed(g_new)
        if not crossed:
            crossings.set_previous(g_new)
            return None
        best = None
        for i in crossed:
            g_a = g_at(i, t_prev)
            if g_a != 0.0 and np.sign(g_a) == np.sign(g_new[i]):
                continue  # the sign change happened at t_prev itself, not inside this step
            # g_a == 0: the step starts on the surface (a handler put it there, or the
            # interpolant lost a tiny offset such as DBL_MIN): find where it left it
            te = first_root(lambda t, i=i: g_at(i, t), t_prev, t_new, g_a, g_new[i])
            te = t_prev if te is None else te  # straight through from zero: at once
            if best is None or te < best[0]:
                best = (te, i)
        if best is None:
            crossings.set_previous(g_new)
            return None
        te, i = best
        t_ev = max(ctx.ticks + 1, int(round(te * TICKS_PER_SECOND)))
        # output-grid points before the event come from this step's interpolant, before the
        # handler changes anything (and so in time order)
        if self.out_grid:
            while self.next_out < t_ev:
                tg = self.next_out
                self.next_out += self.out_grid
                host.sample(tg, np.asarray(dense(tg * _NS)))
        # the state at the event tick from the interpolant, never extrapolated past the step
        # (a step shorter than the 1 ns tick puts the event up to 1 ns late, not the state)
        ctx.xc = np.asarray(dense(min(t_ev * _NS, t_new))).copy()
        ctx.ticks, ctx.time = t_ev, t_ev * _NS
        program.evaluate(ctx)
        host.events.handle(crossings[i])
        host.events.after(t_ev)
        if self.out_grid and self.next_out == t_ev:  # that grid point is this sample
            self.next_out += self.out_grid
        return t_ev
