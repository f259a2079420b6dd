"""Context: snapshot/restore (rollback), ownership, parameters and their kinds."""

import math
import re

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.sources import Constant
from cosim import Block, DiagramBuilder, Simulator
from cosim.errors import ContextError, ParameterError
from cosim.params import show


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


# ------------------------------------------------------------- parameter kinds
class _Params(Block):
    """One parameter of each kind a context holds, declared by its default."""

    def __init__(self, name, defaults):
        super().__init__(name)
        self.handles = {k: self.declare_parameter(k, d, unit) for k, (d, unit) in
                        defaults.items()}
        self.declare_output("y", lambda ctx: 0.0, depends_on=())


class _Thing:
    pass


#: kind: (default, unit, values accepted -> stored, values refused, what the message says)
KINDS = {
    "real": (350.0, "kg", [(300, 300), (2.5, 2.5), (np.float32(1.5), 1.5),
                           (np.array(4.0), 4.0), (math.inf, math.inf)],
             ["300", "x", [1.0, 2.0], np.array([1.0]), None, math.nan, True, 1 + 2j],
             "a number"),
    "int default": (3, None, [(4, 4), (np.int64(2), 2), (2.5, 2.5)],
                    ["3", None, True, [1, 2], math.nan], "a number"),
    "boolean": (True, None, [(False, False), (np.bool_(True), True)],
                [1, 0.0, "yes", None], "True or False"),
    "string": ("a", None, [("b", "b")], [3, None, b"a"], "a string"),
    "vector": (np.array([1.0, 2.0]), "N/m", [([3, 4], [3.0, 4.0]), ((5.0, 6.0), [5.0, 6.0])],
               [1.0, [1, 2, 3], [[1, 2]], "x", ["1", "2"], [1.0, math.nan], None],
               r"an array of shape \(2,\)"),
    "matrix": (np.eye(2), None, [([[1, 2], [3, 4]], [[1.0, 2.0], [3.0, 4.0]])],
               [[1, 2, 3, 4], np.eye(3), "x"], r"an array of shape \(2, 2\)"),
    "integer array": (np.array([1, 2]), None, [([3, 4], [3, 4])], [[1.5, 2], [1, 2, 3]],
                      r"an array of shape \(2,\) of whole numbers"),
    "pair": ((0.0, 1.0), "m", [((2.0, 3.0), (2.0, 3.0))], [(1, 2, 3), "ab", (1.0, None)],
             r"an array of shape \(2,\) of numbers"),
    "bytes": (b"ab", None, [(b"x", b"x"), (bytearray(b"y"), bytearray(b"y"))], ["ab", 3],
              "an instance of bytes"),
    "object": (_Thing(), None, [], [3, "x", None], "an instance of _Thing"),
}


def _kinds_context():
    b = DiagramBuilder("k")
    blk = b.add(_Params("p", {k.replace(" ", "_"): (d, u) for k, (d, u, *_) in KINDS.items()}))
    return b.build().create_context(), blk


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_parameter_kind_takes_its_values_and_refuses_others_when_set(kind):
    default, unit, good, bad, expected = KINDS[kind]
    ctx, blk = _kinds_context()
    name = kind.replace(" ", "_")
    h = blk.handles[name]
    for value, stored in good:
        ctx.set_param(f"p.{name}", value)
        got = ctx.param(h)
        assert np.array_equal(np.asarray(got), np.asarray(stored)), (value, got)
        if isinstance(default, np.ndarray):
            assert isinstance(got, np.ndarray) and got.dtype == default.dtype
    before = ctx.param(h)
    for value in bad:
        for target in (f"p.{name}", h):     # by path and by handle
            with pytest.raises(ParameterError) as info:
                ctx.set_param(target, value)
            msg = str(info.value)
            assert f"_Params parameter 'p.{name}' = " in msg, msg
            assert re.search(f"expected {expected}", msg), msg
            assert f"= {show(value)}" in msg and (f"[{unit}]" in msg if unit else True), msg
            assert ("nan" in msg) if isinstance(value, float) and value != value else True
        assert ctx.param(h) is before, "a refused value must leave the parameter unchanged"


def test_a_string_for_a_float_parameter_is_refused_when_set_not_later_in_numpy():
    """The issue's case: set_param("car.ms_kg", "300") was accepted and failed in numpy."""
    class Car(Block):
        def __init__(self, name):
            super().__init__(name)
            self.ms = self.declare_parameter("ms_kg", 350.0, "kg")
            self.declare_output("f", lambda ctx: 9.81 * ctx.param(self.ms), unit="N",
                                depends_on=())
    b = DiagramBuilder("qc")
    b.add(Car("car"))
    ctx = b.build().create_context()
    with pytest.raises(ParameterError, match=r"Car parameter 'car.ms_kg' = '300' \[kg\]: "
                                             r"expected a number .*default 350.0"):
        ctx.set_param("car.ms_kg", "300")
    with pytest.raises(ParameterError, match=r"'car.ms_kg' = \[300.0, 1.0\] \[kg\]"):
        ctx.set_param("car.ms_kg", [300.0, 1.0])


def test_check_param_refuses_now_and_stores_nothing():
    ctx, blk = _kinds_context()
    h, v = ctx.check_param("p.vector", [7, 8])
    assert h is blk.handles["vector"] and v.tolist() == [7.0, 8.0]
    assert ctx.param(h).tolist() == [1.0, 2.0]
    with pytest.raises(ParameterError, match="'p.vector'"):
        ctx.check_param("p.vector", [1, 2, 3])


def test_a_block_validator_still_runs_after_the_kind_check():
    d, c, i = _diagram()
    ctx = d.create_context()
    c.value.validate = lambda v: (_ for _ in ()).throw(ValueError("must be >= 0")) \
        if v < 0 else None
    with pytest.raises(ParameterError, match=r"Constant parameter 'c.value' = -1.0: must be"):
        ctx.set_param("c.value", -1.0)
    with pytest.raises(ParameterError, match="expected a number"):
        ctx.set_param("c.value", "1")


def test_a_subsystem_context_of_a_master_refuses_a_bad_value():
    from tests.unit.split_oscillator import split_oscillator
    master = split_oscillator()
    sub = master.by_name["a"]
    with pytest.raises(ParameterError, match=r"Gain parameter 'a_d/g.k' = 'x'"):
        sub.ctx.set_param("a_d/g.k", "x")
    sub.ctx.set_param("a_d/g.k", -2.0)


def test_a_study_run_with_a_bad_parameter_value_fails_naming_it():
    import os

    from cosim.studies.model import ModelSpec
    from cosim.studies.runner import RunSettings, run_one
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    spec = ModelSpec(os.path.join(root, "examples", "pid_sweep.py"))
    rec = run_one(spec, RunSettings(t_end=0.01, dt=1e-3), 0, "r0", {"pid.kp": "100"})
    assert rec["status"] == "failed"
    assert rec["error"].startswith("ParameterError: PID parameter 'pid.kp' = '100'"), \
        rec["error"]
    ok = run_one(spec, RunSettings(t_end=0.01, dt=1e-3), 1, "r1", {"pid.kp": 100.0})
    assert ok["status"] == "ok", ok["error"]
