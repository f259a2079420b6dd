"""The right-hand side of a variable-step run in C, called from SciPy's integrators.

A variable-step :class:`~cosim.simulator.Simulator` (``rk45``, ``rk23``, ``dop853``,
``radau``, ``bdf``, ``lsoda``) is integrated by SciPy's solvers (:mod:`cosim.variable_step`),
which call the diagram's right-hand side at every stage (and, for the implicit ones, for every
column of a finite-difference Jacobian).  With ``compiled=True`` that right-hand side is the
compiled Simulator's C (:class:`CompiledRhs`, function
``cosim_sim_rhs`` of ``codegen/templates/driver.c``): the time and states set, the outputs the
derivatives read evaluated in the Python loop's order, the derivatives.  Which part is C: the
right-hand side only; the integrators, their step control and dense output, the output points,
zero crossings and major points stay in Python (SciPy's Python code; writing the methods
themselves in C is not built).  ``diagnostics["compiled"]`` says so.

Opt-in: ``compiled=None`` keeps the Python right-hand side and says why.  Measured
(``python -m bench.compiled_findings``: a sine through 10 or 100 ``FunctionBlock`` s into an
integrator, 1 s, output grid 1 ms, best of 3, 2026-11-30): ``rk45`` 1.02x and 1.30x,
``bdf`` 0.99x and 1.05x, ``radau`` 1.00x and 1.14x, ``lsoda`` 0.95x and 1.36x: SciPy's own
Python work per step, not the right-hand side, is most of a variable-step run's time; a real
gain needs the integrators in C.  So the default does not change the results of variable-step
runs (the C's round-off differs where NumPy sums, see below) for a gain that small.

Equality: the derivatives are the Python loop's bit for bit (the same statements in the same
order), except fused linear groups, whose sums NumPy adds in another order (1e-16 relative
each): then the step sizes follow and results agree to about 1e-12, not bit for bit.

Hand-over: the Python context is the truth.  At each start of the integrator (every stop:
sample hit, breakpoint, event, end) the context is copied into the C state
(:meth:`~cosim.codegen.state.StateMap.push`: held outputs, discrete states, the mode time);
a call sets the context's time and states as the Python right-hand side does, but the signals
of the last call stay in C (nothing in the variable-step loop reads them before it evaluates
the outputs itself), so a diagram with monitors (which read them at each step) keeps the
Python right-hand side (:func:`cosim.compiled_run.compiled_reason`).  A C call that fails
(a block's error) is repeated by the Python right-hand side, which raises its own error.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

_VP = ctypes.c_void_p


class CompiledRhs:
    """The C right-hand side of the compiled Simulator ``run``
    (:class:`~cosim.compiled_run.CompiledRun`) of a variable-step Simulator."""

    def __init__(self, run: Any) -> None:
        self.run = run
        fn = run.lib.cosim_sim_rhs
        fn.restype = ctypes.c_int
        fn.argtypes = [_VP, ctypes.c_double, _VP, _VP]
        self._fn = fn

    def bind(self) -> Any:
        """The context into the C state; ``rhs(t, x)`` for the integrator from there."""
        run = self.run
        sim = run.sim
        ctx = sim.ctx
        run.state_map.push(ctx, run.state, run.views)
        fn, m, lib = self._fn, run.model, run.lib
        n = sim.plan.n_continuous
        python = sim.program.rhs
        empty, asarray = np.empty, np.ascontiguousarray

        def rhs(t: float, xs: Any) -> np.ndarray:
            x = asarray(xs, dtype=float)
            dx = empty(n)
            ctx.time = t  # (as the Python right-hand side leaves the context)
            ctx.xc = xs
            if fn(m, t, x.ctypes.data, dx.ctypes.data):
                lib.cosim_sim_clear_error(m)
                return python(t, xs)  # the Python loop's own error (module docstring)
            return dx

        return rhs


def advance_variable(run: Any, end: int) -> None:
    """Advance ``run``'s variable-step Simulator to tick ``end``: its advancer with the C
    right-hand side (bound anew at each start of the integrator)."""
    rhs = getattr(run, "rhs", None)
    if rhs is None:
        rhs = run.rhs = CompiledRhs(run)
    adv = run.sim.advancer
    adv.rhs_source = rhs.bind
    try:
        adv.advance(end)
    finally:
        adv.rhs_source = None
