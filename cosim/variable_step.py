"""Variable-step integration of a diagram's continuous part with SciPy solvers.

The solver (``scipy.integrate.RK45``, ``DOP853``, ``Radau``, ``BDF``, ...) is
driven step by step from one stop (sample hit, breakpoint, end) to the next and
restarted there with the last step size.  Output-grid points and zero
crossings use the solver's dense output; event instants are found with Brent's
method and rounded to the 1 ns tick.  Functions here take the
:class:`~cosim.simulator.Simulator` as ``self`` (they are its variable-step
half, kept in a module of their own).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import SolverError
from .event_location import first_root
from .time import SECONDS_PER_TICK, TICKS_PER_SECOND

_NS = SECONDS_PER_TICK


def advance_variable(self: Any, end: int) -> None:
    """Integrate with a SciPy solver to ``end``, stopping at every hit and breakpoint."""
    ctx = self.ctx
    cls = self.solver_class.scipy_class()
    out_grid = self.dt_ticks
    first_step = None
    if out_grid and not hasattr(self, "_next_out"):
        self._next_out = (ctx.ticks // out_grid + 1) * out_grid
    while ctx.ticks < end:
        tick = ctx.ticks
        stop = end
        for g in self._groups:
            stop = min(stop, g.next_hit(tick))
        for bp in self._breakpoints:
            if bp > tick:
                stop = min(stop, bp)
                break
        if self._dyn_next is not None:
            stop = min(stop, max(self._dyn_next, tick + 1))
        kw = {"rtol": self.rtol, "atol": self.atol}
        max_step = self.max_step or (out_grid * _NS if out_grid else None)
        if max_step:
            kw["max_step"] = max_step
        if first_step:
            kw["first_step"] = min(first_step, stop * _NS - tick * _NS)
        x0 = ctx.xc.copy()
        ctx.mode_time = tick * _NS
        try:
            sol = cls(self._rhs, tick * _NS, x0, stop * _NS, **kw)
        except ValueError as exc:
            raise SolverError(f"{self.solver_name}: {exc}") from exc
        event_stop = None
        while sol.status == "running":
            t_prev = sol.t
            msg = sol.step()
            if sol.status == "failed":
                hint = ("the solution may be blowing up, or jumps at an instant no block "
                        "declared as a time event or zero crossing")
                if not self.solver_class.stiff:
                    hint = "the system may be stiff (try 'radau' or 'bdf'), or " + hint
                raise SolverError(f"solver {self.solver_name} failed at t = {sol.t:.9g} s: "
                                  f"{msg} {hint}")
            self.stats["steps"] += 1
            self._check_finite(sol.y, int(round(sol.t * TICKS_PER_SECOND)))
            if self._monitors:
                x_keep, t_keep = ctx.xc, ctx.time
                ctx.xc, ctx.time = np.asarray(sol.y), sol.t
                for m in self._monitors:
                    m(ctx)
                ctx.xc, ctx.time = x_keep, t_keep
            dense = sol.dense_output() if (out_grid or self._zero_crossings) else None
            # zero crossings on this step
            if self._zero_crossings:
                ev = locate_event(self, dense, t_prev, sol.t)
                if ev is not None:
                    event_stop = ev
                    break
            # output grid points inside (t_prev, t]: only where the dense output is an
            # interpolant (a grid tick that rounds past t waits for the next step)
            if out_grid:
                t_last = int(np.floor(sol.t * TICKS_PER_SECOND + 1e-6))
                while self._next_out <= t_last and self._next_out < stop:
                    tg = self._next_out
                    self._next_out += out_grid
                    ctx.xc = np.asarray(dense(min(tg * _NS, sol.t)))
                    ctx.ticks, ctx.time = tg, tg * _NS
                    self._call_eval(self._eval_cont)
                    for o in self.observers:
                        o.on_sample(self)
            elif sol.status == "running":
                # no output grid: record every accepted step
                ctx.xc = np.asarray(sol.y).copy()
                tk = int(round(sol.t * TICKS_PER_SECOND))
                ctx.ticks, ctx.time = tk, sol.t
                self._call_eval(self._eval_cont)
                for o in self.observers:
                    o.on_sample(self)
            first_step = sol.step_size or first_step
            if self._dyn_events and sol.status == "running":
                # an event asked for by now (a step event seen by a monitor): stop here,
                # handle it as a major time point and restart the solver after it
                k = self._next_dynamic_tick()
                tk = int(round(sol.t * TICKS_PER_SECOND))
                if k is not None and k <= tk:
                    ctx.xc = np.asarray(sol.y).copy()
                    self._major(tk)
                    event_stop = tk
                    break
        self.stats["rhs_evals"] += sol.nfev
        if event_stop is not None:
            continue  # restart from the event with a fresh solver
        ctx.xc = np.asarray(sol.y).copy()
        self._major(stop)
        while out_grid and self._next_out <= stop:
            self._next_out += out_grid
        if self.progress:
            self._bar.tick(stop)


def locate_event(self: Any, dense: Any, t_prev: float, t_new: float) -> int | None:
    """Find the first zero crossing in ``(t_prev, t_new]`` on the dense output; handle it."""
    ctx = self.ctx

    def g_at(i: int, t: float) -> float:
        ctx.xc = np.asarray(dense(t))
        ctx.time = t
        self._call_eval(self._eval_cont)
        return float(self._zero_crossings[i].witness(ctx))

    ctx.xc = np.asarray(dense(t_new))
    ctx.time = t_new
    self._call_eval(self._eval_cont)
    g_new = [float(z.witness(ctx)) for z in self._zero_crossings]
    crossed = self._crossings(self._g_prev, g_new)
    if not crossed:
        self._set_g_prev(g_new)
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
        self._set_g_prev(g_new)
        return None
    te, i = best
    t_ev = max(self.ctx.ticks + 1, int(round(te * TICKS_PER_SECOND)))
    # output-grid points before the event come from this step's interpolant, before the
    # handler changes anything (and so in time order)
    if self.dt_ticks:
        while self._next_out < t_ev:
            tg = self._next_out
            self._next_out += self.dt_ticks
            ctx.xc = np.asarray(dense(tg * _NS))
            ctx.ticks, ctx.time = tg, tg * _NS
            self._call_eval(self._eval_cont)
            for o in self.observers:
                o.on_sample(self)
    # the state at the event tick from the interpolant, never extrapolated past the step
    # (a step shorter than the 1 ns tick puts the event up to 1 ns late, not the state)
    ctx.xc = np.asarray(dense(min(t_ev * _NS, t_new))).copy()
    ctx.ticks, ctx.time = t_ev, t_ev * _NS
    self._call_eval(self._eval_cont)
    self._handle_event(self._zero_crossings[i])
    self._call_eval(self._eval_cont)
    if self._dyn_events:  # time events the handler asked for at this instant
        self._dynamic_events_now(t_ev, self._eval_cont)
        self._dyn_next = self._next_dynamic_tick()
    self._set_g_prev([float(z.witness(ctx)) for z in self._zero_crossings])
    for o in self.observers:
        o.on_sample(self)
    self._check_pending_term()
    if self.dt_ticks and self._next_out == t_ev:  # that grid point is this sample
        self._next_out += self.dt_ticks
    return t_ev
