"""The fixed-step advancer of :class:`~cosim.simulator.Simulator` (:mod:`cosim.advancer`):
steps of exactly ``dt`` on the integer grid between major points, runs of whole steps
with nothing due in between (:meth:`FixedStepAdvancer._fast_steps`: one fused propagation
where nothing observes the micro steps), partial steps only to reach breakpoints and
events, and zero crossings located inside a step by root finding on the solver's own step
(:meth:`FixedStepAdvancer._locate`).  Also the advancer of diagrams without continuous
states, whatever the solver: it only moves from one major point to the next.

The simulator's module docstring gives the semantics at a major point; the variable-step
advancer is :mod:`cosim.variable_step`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import StepError
from .event_location import first_root
from .time import SECONDS_PER_TICK, TICKS_PER_SECOND

_NS = SECONDS_PER_TICK
_NEVER = 1 << 62  #: no stop ahead


class FixedStepAdvancer:
    """Fixed-step advance (module docstring).

    ``host``: the Simulator (:class:`~cosim.advancer.SteppingHost`); ``dt_ticks``: the
    step (None: one step per ``advance``, ``dt="advance"``); ``n_continuous``: the number
    of continuous states (0: no integration)."""

    def __init__(self, host: Any, dt_ticks: int | None, n_continuous: int) -> None:
        self.host = host
        self.h = dt_ticks or 0
        self.nx = n_continuous

    def advance(self, end: int) -> None:
        host = self.host
        ctx = host.ctx
        stats = host.stats
        h, nx = self.h, self.nx
        crossings = host.events.crossings
        dynamic = host.events.has_dynamic
        program = host.program
        prop, solver = program.propagator, program.solver
        tick = ctx.ticks
        nxt = -1  # the next major point after tick (host.next_stop), kept while valid
        while tick < end:
            if dynamic or tick >= nxt:
                nxt = host.next_stop(tick)
                if nxt is None:
                    nxt = _NEVER
            if nx and h and not crossings and not dynamic and tick % h == 0:
                n_fast = (min(end, nxt) - tick) // h - 1  # last step: general path
                if n_fast > 0:
                    tick = self._fast_steps(tick, n_fast)
                    program = host.program
                    prop, solver = program.propagator, program.solver
                    continue
            # next stop: grid point, major point, end
            stop = (tick // h + 1) * h if h else end
            if nxt < stop:
                stop = nxt
            if stop > end:
                stop = end
            if nx:
                t = tick * _NS
                hh = (stop - tick) * _NS
                x = ctx.xc
                ctx.mode_time = t
                if prop is not None and stop - tick == h:
                    xn = prop.step(ctx, ctx.signals, t, x, hh)
                else:
                    xn = solver.advance(t, x, hh)
                    if h and stop - tick != h:
                        stats["partial_steps"] += 1
                if not math.isfinite(xn @ xn):  # (the common case without a call)
                    host.check_finite(xn, stop)
                ctx.xc = xn
                stats["steps"] += 1
                if crossings:
                    stop = self._locate(tick, x, stop)
            tick = stop
            host.major(tick)
            program = host.program
            prop, solver = program.propagator, program.solver

    def _fast_steps(self, tick: int, n: int) -> int:
        """``n`` whole steps with no sample hits, events or breakpoints in between."""
        host = self.host
        ctx = host.ctx
        h = self.h
        hs = h * _NS
        s = ctx.signals
        program = host.program
        prop = program.propagator
        advance = program.solver.advance
        isfinite = math.isfinite
        try:
            if prop is not None and not host.watches_steps():
                # nothing observes the micro steps: propagate, evaluate outputs once
                tick, xn, finite = prop.steps(ctx, s, tick, ctx.xc, h, n, _NS)
                if not finite:
                    host.check_finite(xn, tick)
                ctx.xc = xn
                ctx.ticks = tick
                ctx.time = ctx.mode_time = tick * _NS
                program.outputs(ctx, s)
                return tick
            for i in range(n):
                t = tick * _NS
                ctx.mode_time = t
                x = ctx.xc
                xn = prop.step(ctx, s, t, x, hs) if prop is not None else advance(t, x, hs)
                if not isfinite(xn @ xn):
                    host.check_finite(xn, tick + h)
                ctx.xc = xn
                tick += h
                ctx.ticks = tick
                ctx.time = ctx.mode_time = tick * _NS
                host.step_end(i == n - 1)
                if host.program is not program:  # a parameter change rebuilt it
                    program = host.program
                    prop, advance = program.propagator, program.solver.advance
        except StepError:
            raise
        except Exception as exc:
            if program.ev.locate(exc) is None:
                raise
            raise program.failure(exc, ctx) from exc
        finally:
            host.stats["steps"] += n
        return tick

    def _locate(self, t0: int, x0: np.ndarray, stop: int) -> int:
        """Locate the first zero crossing in ``(t0, stop]``; handle it; return the new stop."""
        host = self.host
        ctx = host.ctx
        program = host.program
        crossings = host.events.crossings
        ctx.ticks = stop
        ctx.time = stop * _NS
        ctx.mode_time = t0 * _NS
        program.evaluate(ctx)
        g_new = crossings.witnesses(ctx)
        crossed = crossings.crossed(g_new)
        if not crossed:
            return stop
        t0s = t0 * _NS
        x1 = ctx.xc.copy()
        solver = program.solver
        step = solver._starter if hasattr(solver, "_starter") else solver
        span = (stop - t0) * _NS
        linear = False

        def state_at(theta: float) -> np.ndarray:
            if theta <= 0:
                return x0
            if linear:
                return x0 + (theta / span) * (x1 - x0)
            return step._step_impl(t0s, x0, theta)

        def g_at(i: int, theta: float) -> float:
            ctx.xc = state_at(theta)
            ctx.time = t0s + theta
            program.evaluate(ctx)
            return crossings.witness(i, ctx)

        if step is not solver and any(
                (g_at(i, span) > 0.0) != (g_new[i] > 0.0) for i in crossed):
            # a multistep method (AB3) located with its one-step starter, whose step ends
            # on the other side of zero: bracket on the chord of the step actually taken
            linear = True
        best = None
        for i in crossed:
            th = first_root(lambda th, i=i: g_at(i, th), 0.0, span, crossings.previous[i],
                            g_new[i])
            th = 0.0 if th is None else th  # straight through from zero: at once
            if best is None or th < best[0]:
                best = (th, i)
        th, i = best
        t_ev = t0 + max(1, min(stop - t0, int(round(th * TICKS_PER_SECOND))))
        ctx.xc = state_at((t_ev - t0) * _NS)
        ctx.ticks = t_ev
        ctx.time = t_ev * _NS
        program.evaluate(ctx)
        host.events.handle(crossings[i])
        if t_ev < stop:
            host.stats["partial_steps"] += 1
        return t_ev
