"""A co-simulation subsystem's macro steps in C without handing its state over each time.

A :class:`~cosim.subsystem.DiagramSubsystem` whose Simulator runs in C
(:class:`~cosim.compiled_run.CompiledRun`) pays, at every macro step, for copying its whole
context into the C state and back (time, states, every signal: about 25 us of Python for the
flagship's hydraulics, whose C step takes 3 us).  Between two macro steps of a master nothing
reads that context but the subsystem itself: the master sets the inputs (the coupling
inputs' polynomials), steps, and reads the outputs.  :class:`HeldStep` keeps the state in C
across such steps (``CompiledRun.advance(hold=True)``): :meth:`HeldStep.set_input` writes a
polynomial into the C state (and the context), :meth:`HeldStep.step` runs the same C run to
the step's end (:func:`cosim.simulator.advance_held`),
:meth:`HeldStep.outputs` reads the exported outputs from the C signals.

A feedthrough output the master refreshes between steps (new inputs at the same time:
``Simulator.evaluate_outputs``) is evaluated in C too (:meth:`HeldStep.refresh`).

The subsystem guards its context: every other use of it (its ``ctx`` and ``sim``, a
rollback, an output refresh during initialization, a Jacobian, a non-scalar input) first
hands the state back (:meth:`HeldStep.release`), and the next step goes the whole way again
(the route's decision, the copy in and out), after which the state may be held again.  So a
held step computes what the whole way computes: the C state it starts from is the one a copy
of the context would give (the context was copied from it, and only the polynomials,
written both sides, changed), and the same C runs.  Bit for bit, except a refresh of outputs
that a fused linear group computes: the whole way evaluates them in Python (NumPy's sums),
the held step in C (its own order), equal to about 1e-13 as everywhere between the two loops
(tested against the whole way and the Python loop on generated masters,
``tests/system/test_held_step.py``).

Used when the run is a fixed-step C run without an AB3 history or zero crossings (their
state is handed over with the context: those runs go the whole way), every exported input
a scalar Real one (the only kind with a C form) and every exported output a scalar float.
"""

from __future__ import annotations

from typing import Any

from .errors import ContextError
from .simulator import advance_held

__all__ = ["HeldStep"]


class HeldStep:
    """The held C state of ``sub`` (a :class:`~cosim.subsystem.DiagramSubsystem`) on its
    Simulator's C run ``run`` (module docstring)."""

    def __init__(self, sub: Any, run: Any) -> None:
        self.sub, self.run = sub, run
        prog = run.program
        plan = sub.wrapper.compile()
        self._s = run.views[2]
        self._xd = run.c_xd  # (ctypes: an element written costs less than through NumPy)
        #: input name -> (offset of its polynomial ``t0, n, c0..`` in the C xd, its index in
        #: ctx.xd, the number of coefficients the C holds, the packer: ``DiscreteState.c_codec``)
        self._inputs = {n: (prog.dstate_layout[d.poly][0], plan.dstate_index[d.poly],
                            prog.dstate_layout[d.poly][1] - 2, d.poly.c_codec[1])
                        for n, d in sub._drivers.items()}
        self._out = [(n, prog.slot_offset[k]) for n, k in sub._out_slots]

    @staticmethod
    def applies(sub: Any) -> bool:
        """Whether ``sub``'s last advance ran in a C run whose state may be held."""
        sim = sub._sim
        route = sim.route
        run = route.run
        ctx = sub._ctx
        if run is None or route.reason or not run.whole or run.ticks != ctx.ticks \
                or not sim.fixed or run.ab3 or run.zc is not None or sim.terminated is not None:
            return False
        if any(not d.scalar or d.exact for d in sub._drivers.values()):
            return False
        sig = ctx.signals
        return all(type(sig[k]) is float for _, k in sub._out_slots)

    def set_inputs(self, t0: float, polys: dict) -> bool:
        """Scalar inputs' polynomials ``{name: coefficients}``, in the C state (as the
        coupling input's ``c_codec`` lays them out: ``t0, n, c0, ...``, zeros after) and the
        context alike; False at the first that is not a tuple (those before it are set both
        sides: the caller hands the state back and sets them all the whole way)."""
        xd, ctx_xd, where = self._xd, self.sub._ctx.xd, self._inputs
        for name, c in polys.items():
            if type(c) is not tuple:
                return False
            off, i, terms, pack = where[name]
            n = len(c)
            if n > terms:
                pack((t0, c))  # (its error: too many terms)
            xd[off] = t0
            xd[off + 1] = n
            for j in range(n):
                xd[off + 2 + j] = c[j]
            for j in range(n, terms):
                xd[off + 2 + j] = 0.0
            ctx_xd[i] = (t0, c)
        return True

    def step(self, t0: int, end: int) -> None:
        """The macro step from ``t0`` to ``end`` in C."""
        run = self.run
        if run.ticks != t0:
            raise ContextError(f"subsystem '{self.sub.name}' is at t = {run.ticks * 1e-9:.9g}"
                               f" s, asked to step from {t0 * 1e-9:.9g} s")
        advance_held(self.sub._sim, end)

    def outputs(self) -> dict:
        """The exported outputs from the C signals (as the context would hold them)."""
        s = self._s
        return {n: float(s[off]) for n, off in self._out}

    def refresh(self) -> bool:
        """The outputs for new inputs at the current time, in C (``Simulator.evaluate_outputs``:
        the same operations; a fused linear group sums in C's order, 1e-13); False when the
        C failed (the caller hands the state back and lets the Python loop raise)."""
        return self.run.evaluate_outputs()

    def release(self) -> None:
        """Hand the state back to the context (when held)."""
        self.run.sync()
