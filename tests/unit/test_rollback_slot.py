"""Issue 34: checkpoints saved into the one before (the master's per-step rollback slot)
without FMUs: ``Context.snapshot(into=...)``, an opaque state's ``save_into`` hook,
``MasterScheduler.save(slot=...)``, and the plain-float residual of iterative coupling.
The FMU side (a state handle reused per instance) is tests/system/test_master_rollback_slot.py.
"""

import math

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.sources import Constant
from cosim import Block, DiagramBuilder, Iterative, Simulator
from cosim.coupling import _max_abs
from cosim.errors import BuildError
from tests.unit.split_oscillator import split_oscillator


class Device(Block):
    """State outside the context (a device): ``level`` grows by one per output call."""

    def __init__(self, name="dev", into=True):
        super().__init__(name)
        self.level = 0
        self.calls = []
        self.state = self.declare_opaque_state(
            "level", self._save, self._restore, self._save_into if into else None)
        self.y = self.declare_output("y", self._calc, depends_on=())

    def _calc(self, ctx):
        self.level += 1
        return float(self.level)

    def _save(self):
        self.calls.append("save")
        return [self.level]

    def _save_into(self, token):
        self.calls.append("save_into")
        token[0] = self.level
        return token

    def _restore(self, token):
        self.level = token[0]


def _diagram(name="d", device=None):
    b = DiagramBuilder(name)
    c = b.add(Constant("c", 1.0))
    i = b.add(Integrator("i"))
    b.connect(c.y, i.u)
    if device is not None:
        b.add(device)
    return b.build(), i


def test_a_snapshot_saved_into_another_is_that_one_and_equals_a_new_one():
    d, i = _diagram()
    ctx = d.create_context()
    sim = Simulator(d, ctx, solver="rk4", dt=0.01)
    sim.advance_to(0.3)
    slot = ctx.snapshot()
    sim.advance_to(0.5)
    again = ctx.snapshot(into=slot)
    fresh = ctx.snapshot()
    assert again is slot
    assert again.time == fresh.time == ctx.time and again.ticks == fresh.ticks
    np.testing.assert_array_equal(again.xc, fresh.xc)
    assert again.xd == fresh.xd and again.signals == fresh.signals
    assert again.xc is not ctx.xc and again.signals is not ctx.signals  # independent
    ctx.set_state(i.x, 3.0)
    assert again.state(i.x) == fresh.state(i.x) == pytest.approx(0.5)
    ctx.restore(fresh)
    sim.advance_to(1.0)
    y1 = ctx.state(i.x)
    ctx.restore(again)
    sim.advance_to(1.0)
    assert ctx.state(i.x) == y1


def test_a_snapshot_of_another_diagram_is_not_reused():
    d1, _ = _diagram("one")
    d2, _ = _diagram("two")
    other = d2.create_context().snapshot()
    ctx = d1.create_context()
    snap = ctx.snapshot(into=other)
    assert snap is not other and snap.diagram is d1 and other.diagram is d2


@pytest.mark.parametrize("into", [True, False])
def test_an_opaque_state_saves_into_the_token_the_slot_holds(into):
    dev = Device(into=into)
    d, _ = _diagram(device=dev)
    ctx = d.create_context()
    sim = Simulator(d, ctx, solver="rk4", dt=0.01)
    sim.advance_to(0.1)
    slot = ctx.snapshot()
    token = slot._opaque[dev.state]
    sim.advance_to(0.2)
    level = dev.level
    ctx.snapshot(into=slot)
    assert dev.calls == ["save", "save_into" if into else "save"]
    assert (slot._opaque[dev.state] is token) == into
    assert slot._opaque[dev.state] == [level]
    dev.level = -1
    ctx.restore(slot)
    assert dev.level == level


def test_save_into_without_save_and_restore_is_refused():
    class Half(Block):
        def __init__(self):
            super().__init__("half")
            self.declare_opaque_state("s", save_into=lambda token: token)

    with pytest.raises(BuildError, match="save_into but no save and restore"):
        Half()


def test_the_master_reuses_a_slot_and_never_the_callers_checkpoints():
    m = split_oscillator(Iterative("fixed_point"), rate_b=1)
    st = m.stepper()
    st.step()
    slot = m.save(slot="mine")
    mine = m.save()
    st.step()
    assert m.save(slot="mine") is slot and slot["t"] == m.t
    assert m.save() is not mine and mine["t"] == m.t - m.H  # the caller's: untouched
    st.close()  # the slots go with the stepper
    assert m.save(slot="mine") is not slot


@pytest.mark.parametrize("seed", range(5))
def test_the_plain_float_residual_is_numpys(seed):
    rng = np.random.default_rng(seed)
    cases = [np.zeros(0), np.array([-0.0]), np.array([math.inf, 1.0]),
             np.array([1.0, math.nan, 2.0]), np.array([math.nan]),
             rng.standard_normal(3), rng.standard_normal(40) * 1e-12]
    for v in cases:
        ref = float(np.max(np.abs(v), initial=0.0))
        got = _max_abs(v)
        assert type(got) is float
        assert (math.isnan(got) and math.isnan(ref)) or \
            (got == ref and math.copysign(1, got) == math.copysign(1, ref)), (v, got, ref)
