"""The context a compiled advance leaves behind is the Python loop's: values of their own.

After each C run the context is filled from the C state (``cosim.codegen.state.StateMap``).
An array signal or an array discrete state taken from the context then must not change
when the C runs again: it used to be a view of the C state's memory (``np.asarray`` of a
slice), so a value kept by the caller (a master's coupling history, a snapshot for a
rollback, a user's variable) changed under it at the next advance.

Oracle: the values kept after one advance against copies taken at the same moment, and
the whole run against the Python loop (to 1e-12), advanced in the same short steps
(the real-time frames' pattern, where the hand-over runs at every step).
"""

from __future__ import annotations

import numpy as np

import blocks as bl
from blocks.discrete import UnitDelay
from cosim import DiagramBuilder, Simulator


def _diagram():
    b = DiagramBuilder("handover")
    s = b.add(bl.Sine("s", 1.0, 2.0))
    mux = b.add(bl.Mux("mux", 3))
    for k in range(3):
        b.connect(s.y, mux.inputs[f"u{k}"])
    g = b.add(bl.Gain("g", np.array([1.0, -2.0, 0.5]), shape=(3,)))
    b.connect(mux.y, g.u)
    i = b.add(bl.Integrator("i", np.zeros(3), shape=(3,)))
    b.connect(g.y, i.u)
    d = b.add(UnitDelay("d", 2e-3, np.zeros(3)))
    b.connect(g.y, d.u)
    one = b.add(bl.Integrator("one", 0.0))
    b.connect(s.y, one.u)
    return b.build(), g, d


def _run(compiled: bool, steps: int = 40):
    diagram, g, d = _diagram()
    sim = Simulator(diagram, solver="rk4", dt=1e-3, compiled=compiled)
    sim.initialize()
    slot = sim.plan.output_slot[g.y]
    (handle,) = [h for h in sim.plan.discrete_states if h.block is d]
    kept, copies, trace = [], [], []
    for k in range(1, steps + 1):
        sim.advance_to(k * 1e-3)
        ctx = sim.ctx
        sig, xd = ctx.signals[slot], ctx.xd[sim.plan.dstate_index[handle]]
        kept.append((sig, xd, ctx.xc))
        copies.append((np.array(sig), np.array(xd), np.array(ctx.xc)))
        trace.append(np.concatenate([np.ravel(sig), np.ravel(xd), np.ravel(ctx.xc)]))
    return sim, kept, copies, np.array(trace)


def test_values_taken_from_the_context_keep_their_values_after_the_next_c_run():
    sim, kept, copies, _ = _run(True)
    assert sim.route.ran == {True}, sim.route.ran
    for k, (values, wanted) in enumerate(zip(kept, copies, strict=True)):
        for name, v, w in zip(("signal g.y", "state of d", "continuous states"), values,
                              wanted, strict=True):
            assert np.array_equal(v, w), f"{name} taken after advance {k + 1} changed later"


def test_short_advances_in_c_equal_the_python_loop():
    """To 1e-12 of each column's range, the compiled runs' standard
    (tests/system/test_compiled_run.py ``_compare``; the sine's C and Python differ in the
    last bits, 3.5e-18 here)."""
    _, _, _, c = _run(True)
    _, _, _, py = _run(False)
    scale = np.maximum(np.max(np.abs(py), axis=0), 1e-300)
    assert np.all(np.abs(c - py) <= 1e-12 * scale)
