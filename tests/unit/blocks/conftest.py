"""Shared checks of the block tests.

* ``linear_check(block_or_harness)``: the block's :class:`~cosim.linear.LinearModel` (used by
  the fusion of linear blocks) reproduces the block's own ``calc``/``derivatives``
  (the generic path) at random inputs and states, covers every port and state,
  and its ``D`` matrix agrees with the declared feedthrough (``depends_on``).
* ``fused_vs_generic(make, t_end, ...)``: the same diagram simulated with
  ``fuse_linear=True`` and ``False`` gives the same recorded signals.
"""

from __future__ import annotations

import numpy as np
import pytest

from cosim import Simulator
from cosim.testing import BlockHarness


def _random_value(rng: np.random.Generator, shape: tuple) -> object:
    return rng.normal(size=shape) * 3.0 if shape else float(rng.normal() * 3.0)


def assert_linear_model_matches(block, trials: int = 6, seed: int = 1) -> object:
    """``block``: a block, or the BlockHarness already holding it."""
    h = block if isinstance(block, BlockHarness) else BlockHarness(block)
    block = h.block
    lm = block.linear_model(h.ctx)
    assert lm is not None, f"{block!r} has no linear model"
    # fusion computes exactly the ports and states the model lists
    assert set(lm.inputs) == set(block.inputs.values())
    assert set(lm.outputs) == set(block.outputs.values())
    assert set(lm.states) == set(block.continuous_states)
    # a non-zero D entry is a direct feedthrough that depends_on must declare
    col = 0
    cols = {}
    for p in lm.inputs:
        cols[p] = slice(col, col + p.size)
        col += p.size
    row = 0
    for out in lm.outputs:
        rows = slice(row, row + out.size)
        row += out.size
        for p in lm.inputs:
            if np.any(lm.D[rows, cols[p]]):
                assert p in out.feedthrough_inputs(), (
                    f"{out.path} is fed through from {p.path} (D != 0) but does not "
                    "declare it in depends_on")
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        u = []
        for p in lm.inputs:
            v = _random_value(rng, p.shape)
            h.set_input(p.name, v)
            u.append(np.ravel(v))
        x = []
        for s in lm.states:
            v = rng.normal(size=s.size) * 3.0
            h.ctx.set_state(s, v)
            x.append(v)
        u = np.concatenate(u) if u else np.zeros(0)
        x = np.concatenate(x) if x else np.zeros(0)
        y_generic = np.concatenate([np.ravel(h.output(p.name)) for p in lm.outputs])
        np.testing.assert_allclose(y_generic, lm.C @ x + lm.D @ u, rtol=1e-13, atol=1e-13)
        for p in lm.outputs:
            got = h.output(p.name)
            assert np.shape(got) == p.shape
            if p.shape == ():
                assert isinstance(got, float)
        if lm.states:
            np.testing.assert_allclose(h.derivatives(), lm.A @ x + lm.B @ u,
                                       rtol=1e-13, atol=1e-13)
    return lm


@pytest.fixture
def linear_check():
    return assert_linear_model_matches


def run_fused_and_generic(make, t_end: float, *, rtol: float = 1e-12, atol: float = 1e-12,
                          **sim_kw):
    """Build ``make()`` twice, run fused and unfused, compare every recorded signal."""
    sims, results = {}, {}
    for fuse in (True, False):
        sim = Simulator(make(), fuse_linear=fuse, **sim_kw)
        results[fuse] = sim.run(t_end)
        sims[fuse] = sim
    assert sims[True].ev.groups, "nothing was fused: the comparison would be vacuous"
    assert not sims[False].ev.groups
    a, b = results[True], results[False]
    np.testing.assert_array_equal(a.time, b.time)
    assert set(a.signals) == set(b.signals)
    for k in a.signals:
        np.testing.assert_allclose(a[k], b[k], rtol=rtol, atol=atol, err_msg=k)
    return results[True], results[False], sims[True]


@pytest.fixture
def fused_vs_generic():
    return run_fused_and_generic
