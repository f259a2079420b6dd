"""The fixed-step loop of :class:`~cosim.simulator.Simulator` (a mixin): steps of exactly
``dt`` on the integer grid between major points, runs of whole steps with nothing due in
between (:meth:`FixedStepping._fast_steps`: one fused propagation where nothing observes
the micro steps), partial steps only to reach breakpoints and events, and zero crossings
located inside a step by root finding on the solver's own step (``_fixed_events``).

The simulator's module docstring gives the semantics at a major point; the variable-step
loop is :mod:`cosim.variable_step`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import StepError
from .event_location import first_root
from .time import SECONDS_PER_TICK, TICKS_PER_SECOND

_NS = SECONDS_PER_TICK


class FixedStepping:
    """Fixed-step advance (mixin of ``Simulator``; it provides the context, the compiled
    program, the solver and the major-point handling)."""

    ctx: Any

    def _advance_fixed(self, end: int) -> None:
        ctx = self.ctx
        h = self.dt_ticks or 0
        bps = self._breakpoints
        hits = self._groups
        nx = self.plan.n_continuous
        prop = self._propagator
        solver = self._fixed_solver
        tick = ctx.ticks
        bp_i = 0
        while bp_i < len(bps) and bps[bp_i] <= tick:
            bp_i += 1
        while tick < end:
            if nx and h and not self._zero_crossings and not self._dyn_events \
                    and tick % h == 0:
                seg_end = min(end, bps[bp_i]) if bp_i < len(bps) else end
                for g in hits:
                    seg_end = min(seg_end, g.next_hit(tick))
                n_fast = (seg_end - tick) // h - 1  # last step: general path
                if n_fast > 0:
                    tick = self._fast_steps(tick, n_fast)
                    prop = self._propagator
                    solver = self._fixed_solver
                    continue
            # next stop: grid point, sample hit (no continuous part), breakpoint, end
            if nx and h:
                stop = (tick // h + 1) * h
            else:
                stop = end
                for g in hits:
                    stop = min(stop, g.next_hit(tick))
                if h:
                    stop = min(stop, (tick // h + 1) * h)
            if bp_i < len(bps) and bps[bp_i] < stop:
                stop = bps[bp_i]
            if self._dyn_next is not None and self._dyn_next < stop:
                stop = max(self._dyn_next, tick + 1)
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
                        self.stats["partial_steps"] += 1
                if not math.isfinite(xn @ xn):  # (the common case without a call)
                    self._check_finite(xn, stop)
                ctx.xc = xn
                self.stats["steps"] += 1
                if self._zero_crossings:
                    stop = self._fixed_events(tick, x, stop)
                    prop = self._propagator
            while bp_i < len(bps) and bps[bp_i] <= stop:
                bp_i += 1
            tick = stop
            self._major(tick)
            if self._dirty:
                prop = self._propagator
            if self.progress:
                self._bar.tick(tick)

    def _fast_steps(self, tick: int, n: int) -> int:
        """``n`` whole steps with no sample hits, events or breakpoints in between."""
        ctx = self.ctx
        h = self.dt_ticks
        hs = h * _NS
        s = ctx.signals
        prop = self._propagator
        advance = self._fixed_solver.advance
        ev = self._eval_cont
        samplers = [o.on_sample for o in self.observers]
        # observers that say when they read (a decimating recorder): evaluate only then
        wants = [getattr(o, "wants_sample", None) for o in self.observers]
        lazy = bool(samplers) and all(w is not None for w in wants)
        if self.progress:
            samplers.append(lambda sim: self._bar.tick(sim.ctx.ticks))
        isfinite = math.isfinite
        monitors = self._monitors
        try:
            if prop is not None and not samplers and not monitors:
                # nothing observes the micro steps: propagate, evaluate outputs once
                tick, xn, finite = prop.steps(ctx, s, tick, ctx.xc, h, n, _NS)
                if not finite:
                    self._check_finite(xn, tick)
                ctx.xc = xn
                ctx.ticks = tick
                ctx.time = ctx.mode_time = tick * _NS
                ev(ctx, s)
                return tick
            for _ in range(n):
                t = tick * _NS
                ctx.mode_time = t
                x = ctx.xc
                xn = prop.step(ctx, s, t, x, hs) if prop is not None else advance(t, x, hs)
                if not isfinite(xn @ xn):
                    self._check_finite(xn, tick + h)
                ctx.xc = xn
                tick += h
                ctx.ticks = tick
                ctx.time = ctx.mode_time = tick * _NS
                for m in monitors:
                    m(ctx)
                if samplers:  # else the next step's first stage evaluates the outputs
                    if not lazy or any(w() for w in wants):
                        ev(ctx, s)
                    for sample in samplers:
                        sample(self)
                if self._dirty:
                    self._dirty = False
                    self.stats["rebuilds"] += 1
                    self._build_program()
                    prop, advance = self._propagator, self._fixed_solver.advance
                    ev = self._eval_cont
            if not samplers or lazy:
                ev(ctx, s)  # the outputs at the last step
        except StepError:
            raise
        except Exception as exc:
            where = self.ev.locate(exc)
            if where is None:
                raise
            raise StepError(f"evaluating {where} failed at t = {ctx.time:.9g} s: "
                            f"{type(exc).__name__}: {exc}") from exc
        finally:
            self.stats["steps"] += n
        return tick

    def _fixed_events(self, t0: int, x0: np.ndarray, stop: int) -> int:
        """Locate the first zero crossing in ``(t0, stop]``; handle it; return the new stop."""
        ctx = self.ctx
        ctx.ticks = stop
        ctx.time = stop * _NS
        ctx.mode_time = t0 * _NS
        self._call_eval(self._eval_cont)
        g_new = [float(z.witness(ctx)) for z in self._zero_crossings]
        crossed = self._crossings(self._g_prev, g_new)
        if not crossed:
            return stop
        t0s = t0 * _NS
        x1 = ctx.xc.copy()
        solver = self._fixed_solver
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
            self._call_eval(self._eval_cont)
            return float(self._zero_crossings[i].witness(ctx))

        if step is not solver and any(
                (g_at(i, span) > 0.0) != (g_new[i] > 0.0) for i in crossed):
            # a multistep method (AB3) located with its one-step starter, whose step ends
            # on the other side of zero: bracket on the chord of the step actually taken
            linear = True
        best = None
        for i in crossed:
            th = first_root(lambda th, i=i: g_at(i, th), 0.0, span, self._g_prev[i], g_new[i])
            th = 0.0 if th is None else th  # straight through from zero: at once
            if best is None or th < best[0]:
                best = (th, i)
        th, i = best
        t_ev = t0 + max(1, min(stop - t0, int(round(th * TICKS_PER_SECOND))))
        ctx.xc = state_at((t_ev - t0) * _NS)
        ctx.ticks = t_ev
        ctx.time = t_ev * _NS
        self._call_eval(self._eval_cont)
        self._handle_event(self._zero_crossings[i])
        if t_ev < stop:
            self.stats["partial_steps"] += 1
        return t_ev
