"""The one unit convention of the core blocks (blocks/_units.py): ``unit`` is the output's,
``input_unit`` the input's; related units inferred; old keyword names refused by name; a
port with a unit feeding a port without one is a warning."""

import numpy as np
import pytest

from blocks import (
    PID,
    DiscreteIntegrator,
    DiscretePID,
    FilteredDerivative,
    Gain,
    Integrator,
    Relay,
    StateSpace,
    Table1D,
    Table2D,
    TransferFunction,
)
from blocks.sources import Constant
from cosim import DiagramBuilder
from cosim.errors import CosimWarning, ParameterError, UnitError


def test_an_integrator_in_m_takes_m_per_s_and_refuses_a_force():
    i = Integrator("i", unit="m")
    assert i.u.unit_text == "m/s" and i.y.unit_text == "m"
    b = DiagramBuilder("d")
    b.add(i)
    f = b.add(Constant("f", 1.0, unit="N"))
    with pytest.raises(UnitError, match="unit mismatch: output 'f.y' \\[N\\] -> input 'i.u'"):
        b.connect(f.y, i.u)
    assert Integrator("i", input_unit="m/s2").y.unit_text == "m/s"
    assert DiscreteIntegrator("di", 0.01, unit="rad").u.unit_text == "rad/s"


def test_related_units_are_inferred_where_the_relation_is_known():
    d = FilteredDerivative("d", 100.0, input_unit="m")
    assert d.y.unit_text == "m/s"
    assert FilteredDerivative("d", 100.0, unit="rad/s").u.unit_text == "rad"
    g = Gain("g", 2.0, input_unit="N")  # a dimensionless gain keeps the unit
    assert g.y.unit_text == "N"
    assert Gain("g", 2.0, unit="V").u.unit_text == "V"
    k = Gain("k", 100.0, input_unit="m", unit="N")  # given both: a gain in N/m
    assert (k.u.unit_text, k.y.unit_text) == ("m", "N")


@pytest.mark.parametrize("make, old, new", [
    (lambda: Gain("g", 1.0, input_unit="m", output_unit="N"), "output_unit", "unit"),
    (lambda: PID("p", kp=1.0, unit_in="m", unit_out="N"), "unit_in", "input_unit"),
    (lambda: DiscretePID("p", 0.01, kp=1.0, unit_out="N"), "unit_out", "unit"),
    (lambda: StateSpace("s", [[-1.0]], [[1.0]], [[1.0]], output_unit="m"), "output_unit",
     "unit"),
    (lambda: TransferFunction("t", [1.0], [1.0, 1.0], output_unit="m"), "output_unit",
     "unit"),
    (lambda: Table1D("t", [0, 1], [0, 1], unit_in="s"), "unit_in", "input_unit"),
    (lambda: Table2D("t", [0, 1], [0, 1], np.zeros((2, 2)), unit_in0="s"), "unit_in0",
     "input_units"),
    (lambda: Relay("r", 1.0, -1.0, period_s=0.1, output_unit="V"), "output_unit", "unit"),
])
def test_the_old_keyword_names_are_refused_with_the_new_one(make, old, new):
    with pytest.raises(ParameterError, match=f"{old}= is now {new}=.*did you mean {new}="):
        make()


def test_an_unknown_keyword_is_still_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'gain_unit'"):
        Gain("g", 1.0, gain_unit="N/m")


def test_a_unit_feeding_a_port_without_one_is_a_warning():
    b = DiagramBuilder("d")
    c = b.add(Constant("c", 1.0, unit="m"))
    t = b.add(TransferFunction("tf", [1.0], [1.0, 1.0]))  # no units declared
    with pytest.warns(CosimWarning, match="output 'c.y' \\[m\\] feeds input 'tf.u', which "
                                          "declares no unit"):
        b.connect(c.y, t.u)
    b2 = DiagramBuilder("d2")
    c2 = b2.add(Constant("c", 1.0))
    t2 = b2.add(TransferFunction("tf", [1.0], [1.0, 1.0]))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b2.connect(c2.y, t2.u)  # no unit on either side: nothing to say


def test_a_port_index_past_the_end_is_a_clear_error():
    from blocks import Sum
    from cosim.errors import PortError
    s = Sum("s", "+-")
    with pytest.raises(PortError, match="block 's' \\(Sum\\) has 2 of these ports \\(u0, u1\\), "
                                        "so index 2 does not exist; give one sign per input "
                                        "\\(signs='\\+-\\+' for one more\\)"):
        s.ins[2]
    assert s.ins[-1] is s.ins[1]


def test_limits_and_gains_exported_as_tunable_are_context_parameters():
    """What the generated-C FMU exports as tunable parameters is a parameter in Python too
    (Saturation's limits were constants of its closure)."""
    from blocks import DeadZone, RateLimiter, Saturation, Switch
    from cosim import Simulator
    from cosim.testing import BlockHarness
    assert set(Saturation("s", -1.0, 1.0).parameters) == {"lower", "upper"}
    assert set(DeadZone("d", -1.0, 1.0).parameters) == {"lower", "upper"}
    assert set(Switch("w").parameters) == {"threshold"}
    assert set(Gain("g", 2.0).parameters) == {"k"}
    assert set(RateLimiter("r", 1.0, 2.0, 0.1).parameters) == {"rising_per_s",
                                                               "falling_per_s"}
    h = BlockHarness(Saturation("s", -1.0, 1.0))
    h.ctx.set_param("s.upper", 0.5)
    h.set_input("u", 3.0)
    assert h.output("y") == 0.5
    b = DiagramBuilder("d")
    c = b.add(Constant("c", 2.0))
    g = b.add(Gain("g", 3.0))
    b.connect(c.y, g.u)
    d = b.build()
    ctx = d.create_context()
    ctx.set_param("g.k", 5.0)  # the fused linear program follows the context
    assert Simulator(d, ctx, solver="euler", dt=0.1).run(0.1)["g.y"][-1] == 10.0
    h.ctx.set_param("s.lower", 0.8)
    with pytest.raises(Exception, match="lower 0.8 > upper 0.5"):
        h.output("y")
