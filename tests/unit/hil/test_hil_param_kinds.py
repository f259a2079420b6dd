"""A real-time master's parameter changes are checked when they are made (not at the
frame that applies them): ``ctx.check_param`` of the adapter refuses a bad value now."""

import pytest

from cosim.errors import ParameterError
from hil.master_rt import RealTimeMaster
from tests.unit.split_oscillator import split_oscillator


def test_a_real_time_master_refuses_a_bad_value_when_it_is_given():
    rt = RealTimeMaster(split_oscillator(), record_every=None)
    with pytest.raises(ParameterError, match=r"Gain parameter 'a_d/g.k' = 'x': expected a "
                                             "number"):
        rt.ctx.check_param("a.a_d/g.k", "x")
    with pytest.raises(ParameterError, match=r"'a_d/g.k' = \[1, 2\]"):
        rt.ctx.set_param("a.a_d/g.k", [1, 2])
    assert rt.ctx.check_param("a.a_d/g.k", -3.0) == ("a.a_d/g.k", -3.0)
    sub = rt.master.by_name["a"]
    assert sub.ctx.param(sub.diagram.find("g").k) == -1.0   # checked, not stored
    with pytest.raises(ParameterError, match="give 'subsystem.block.param'"):
        rt.ctx.check_param("nope.g.k", 1.0)


def test_the_runner_refuses_a_bad_live_change_when_it_is_given():
    """RealTimeRunner.set_parameter checks in the caller's thread (a UI, a network
    handler) instead of failing the run at the next frame; a good one still applies."""
    from hil.runner import RealTimeRunner, VirtualClock
    runner = RealTimeRunner(RealTimeMaster(split_oscillator(), record_every=None), 1e-3,
                            clock=VirtualClock())
    with pytest.raises(ParameterError, match=r"'a_d/g.k' = '300': expected a number"):
        runner.set_parameter("a.a_d/g.k", "300")
    with pytest.raises(ParameterError, match="give 'subsystem.block.param'"):
        runner.set_parameter("nope.g.k", 1.0)
    assert runner._changes.empty()
    runner.set_parameter("a.a_d/g.k", -2.0)
    runner.run(0.002)
    sub = runner.sim.master.by_name["a"]
    assert sub.ctx.param(sub.diagram.find("g").k) == -2.0
