"""Context hot paths (issue 30): the float form of the state vector; snapshots that share
immutable values."""

from __future__ import annotations

import numpy as np

from cosim import Block, DiagramBuilder


class Two(Block):
    """Two scalar states, a vector state and a discrete state holding a tuple.

    Ports
    -----
    out  y  scalar (state only)
    """

    def __init__(self, name, init):
        super().__init__(name)
        self.a = self.declare_continuous_state("a", 1.0)
        self.b = self.declare_continuous_state("b", 2.0)
        self.v = self.declare_continuous_state("v", [3.0, 4.0])
        self.d = self.declare_discrete_state("d", init)
        self.y = self.declare_output("y", lambda ctx: ctx.state(self.a), depends_on=())

    def derivatives(self, ctx):
        return np.zeros(4)


def _ctx(init=(0.0, (1.0, 2.0))):
    b = DiagramBuilder("ctx")
    blk = b.add(Two("t", init))
    return b.build().create_context(), blk


def test_float_form_is_read_by_state_and_built_once_for_xc():
    ctx, blk = _ctx()
    ctx.set_floats([5.0, 6.0, 7.0, 8.0])
    assert ctx.state(blk.a) == 5.0 and ctx.state(blk.b) == 6.0
    assert ctx._xc is None  # scalar reads need no array
    x = ctx.xc
    assert x.dtype == float and np.array_equal(x, [5.0, 6.0, 7.0, 8.0])
    assert ctx.xc is x
    assert np.array_equal(ctx.state(blk.v), [7.0, 8.0])
    ctx.set_floats([1.0, 2.0, 3.0, 4.0])
    ctx.set_state(blk.v, [9.0, 9.5])  # on the float form: the array is made, then written
    assert np.array_equal(ctx.xc, [1.0, 2.0, 9.0, 9.5])
    assert ctx.state(blk.a) == 1.0


def test_snapshot_shares_tuples_of_numbers_and_copies_arrays_in_tuples():
    ctx, blk = _ctx()
    snap = ctx.snapshot()
    i = ctx.plan.dstate_index[blk.d]
    assert snap.xd[i] is ctx.xd[i]  # immutable: shared, not deep-copied
    ctx2, blk2 = _ctx((0.0, np.array([[1.0, 2.0]])))
    snap2 = ctx2.snapshot()
    j = ctx2.plan.dstate_index[blk2.d]
    assert snap2.xd[j] is not ctx2.xd[j]
    ctx2.xd[j][1][0, 0] = 99.0  # in place: the snapshot keeps its own copy
    ctx2.restore(snap2)
    assert ctx2.xd[j][1][0, 0] == 1.0
    ctx3, blk3 = _ctx((0.0, [1.0, 2.0]))  # a list inside: mutable, copied
    snap3 = ctx3.snapshot()
    k = ctx3.plan.dstate_index[blk3.d]
    ctx3.xd[k][1].append(3.0)
    ctx3.restore(snap3)
    assert ctx3.xd[k][1] == [1.0, 2.0]


def test_snapshot_of_tuples_of_numbers_calls_no_deepcopy(monkeypatch):
    """A coupling input's polynomial ``(t0, (c0, c1))`` is saved at every controlled macro
    step: sharing it skips ``copy.deepcopy`` (~5 us each)."""
    import cosim.context as cc
    ctx, blk = _ctx((0.25, (1.0, 2.0, -3.0)))
    monkeypatch.setattr(cc.copy, "deepcopy", lambda v: (_ for _ in ()).throw(
        AssertionError(f"deepcopy of {v!r}")))
    snap = ctx.snapshot()
    ctx.restore(snap)
    assert ctx.xd[ctx.plan.dstate_index[blk.d]] == (0.25, (1.0, 2.0, -3.0))
