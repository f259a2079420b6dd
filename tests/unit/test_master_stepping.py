"""MasterStepper: the master's macro steps one at a time give run()'s outputs bit for bit."""

import numpy as np
import pytest

from cosim import Iterative
from cosim.errors import ParameterError
from tests.unit.split_oscillator import split_oscillator


def _master(coupling=None, rate_b=2, extrapolation=1):
    return split_oscillator(coupling, rate_b, extrapolation, high_order_start=False)


@pytest.mark.parametrize("coupling, rate_b", [(None, 2), (Iterative("fixed_point"), 1)])
def test_stepping_equals_run_bit_for_bit(coupling, rate_b):
    offline = _master(coupling, rate_b).run(0.2)
    st = _master(coupling, rate_b).stepper()
    while st.time < 0.2 - 1e-12:
        assert st.step()
    assert st.outputs()["a.x"] == offline["a.x"][-1]
    res = st.results()
    np.testing.assert_array_equal(res.time, offline.time)
    np.testing.assert_array_equal(res["a.x"], offline["a.x"])
    np.testing.assert_array_equal(res["b.y"], offline["b.y"])
    assert res.diagnostics["subsystem_steps"] == offline.diagnostics["subsystem_steps"]


def test_record_every_keeps_every_nth_row_and_advance_to_ticks():
    m = _master()
    st = m.stepper(record_every=10)
    st.advance_to_ticks(100_000_000)
    res = st.results()
    assert st.steps == 100 and len(res.time) == 11 and res.time[-1] == pytest.approx(0.1)
    assert res["a.x"][-1] == _master().run(0.1)["a.x"][-1]
    with pytest.raises(ParameterError, match="whole number of macro steps"):
        st.advance_to_ticks(st.t + 1_500_000)


def test_refusals_name_the_option():
    with pytest.raises(ParameterError, match="record_every"):
        _master().stepper(record_every=0)
    from cosim import StepController
    m = _master(extrapolation=1)
    m.step_control = StepController(rtol=1e-6)
    with pytest.raises(ParameterError, match="step control"):
        m.stepper()
