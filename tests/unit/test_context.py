"""Context: snapshot/restore (rollback), ownership, parameters."""

import pytest

from blocks.continuous import Integrator
from blocks.sources import Constant
from cosim import DiagramBuilder, Simulator
from cosim.errors import ContextError, ParameterError


def _diagram(name="d", rate=1.0):
    b = DiagramBuilder(name)
    c = b.add(Constant("c", rate))
    i = b.add(Integrator("i"))
    b.connect(c.y, i.u)
    return b.build(), c, i


def test_snapshot_restore_gives_identical_continuation():
    d, c, i = _diagram()
    ctx = d.create_context()
    sim = Simulator(d, ctx, solver="rk4", dt=0.01, record=["i.y"])
    sim.advance_to(0.5)
    snap = ctx.snapshot()
    sim.advance_to(1.0)
    y1 = ctx.state(i.x)
    ctx.restore(snap)
    assert ctx.state(i.x) == pytest.approx(0.5) and ctx.time == pytest.approx(0.5)
    sim.advance_to(1.0)
    assert ctx.state(i.x) == y1


def test_snapshot_is_independent():
    d, c, i = _diagram()
    ctx = d.create_context()
    snap = ctx.snapshot()
    ctx.set_state(i.x, 3.0)
    assert snap.state(i.x) == 0.0


def test_context_of_another_diagram_is_refused():
    d1, _, i1 = _diagram("one")
    d2, _, _ = _diagram("two")
    ctx2 = d2.create_context()
    with pytest.raises(ContextError, match="continuous state 'x' of block 'i' is not part of "
                                           "diagram 'two'"):
        ctx2.state(i1.x)
    with pytest.raises(ContextError, match="made by diagram 'two', not by 'one'"):
        Simulator(d1, ctx2)
    with pytest.raises(ContextError, match="snapshot belongs to diagram 'one'"):
        ctx2.restore(d1.create_context())


def test_parameter_sweep_is_many_contexts_over_one_diagram():
    d, c, i = _diagram()
    finals = []
    for rate in (1.0, 2.0, 3.0):
        ctx = d.create_context()
        ctx.set_param("c.value", rate)
        Simulator(d, ctx, solver="rk4", dt=0.1, record=False).run(1.0)
        finals.append(ctx.state(i.x))
    assert finals == pytest.approx([1.0, 2.0, 3.0])


def test_parameter_change_mid_run_takes_effect():
    d, c, i = _diagram()
    ctx = d.create_context()
    sim = Simulator(d, ctx, solver="rk4", dt=0.1, record=False)
    sim.advance_to(1.0)
    ctx.set_param(c.value, 5.0)
    sim.advance_to(2.0)
    assert ctx.state(i.x) == pytest.approx(6.0)


def test_bad_parameter_path_lists_choices():
    d, c, i = _diagram()
    ctx = d.create_context()
    with pytest.raises(Exception, match="parameter 'valu' not found on block 'c'; valid names: "
                                        "value"):
        ctx.set_param("c.valu", 1.0)
    c.value.validate = lambda v: (_ for _ in ()).throw(ValueError("no")) if v < 0 else None
    with pytest.raises(ParameterError, match="parameter 'c.value' = -1"):
        ctx.set_param("c.value", -1)


def test_restore_also_restores_the_mode_time():
    from blocks.sources import Step
    b = DiagramBuilder("m")
    st = b.add(Step("st", 0.5))
    i = b.add(Integrator("i"))
    b.connect(st.y, i.u)
    d = b.build()
    ctx = d.create_context()
    sim = Simulator(d, ctx, solver="rk4", dt=0.1, record=False)
    sim.initialize()
    snap = ctx.snapshot()
    sim.advance_to(1.0)
    ctx.restore(snap)
    assert st.y.calc(ctx) == 0.0


class _Device:
    def __init__(self):
        self.counter = 0


def test_opaque_state_is_saved_and_restored_through_hooks():
    from cosim import Block
    dev = _Device()
    blk = Block("dev")
    blk.declare_opaque_state("counter", save=lambda: dev.counter,
                             restore=lambda v: setattr(dev, "counter", v))
    b = DiagramBuilder("o")
    b.add(blk)
    ctx = b.build().create_context()
    dev.counter = 3
    snap = ctx.snapshot()
    dev.counter = 7
    ctx.restore(snap)
    assert dev.counter == 3


def test_block_that_cannot_save_its_state_refuses_rollback():
    from cosim import Block
    blk = Block("fmu")
    blk.declare_opaque_state("instance")
    b = DiagramBuilder("o")
    b.add(blk)
    ctx = b.build().create_context()
    with pytest.raises(ContextError, match="block 'fmu' keeps state 'instance' outside the "
                                           "context and cannot save it; rollback is refused"):
        ctx.snapshot()
