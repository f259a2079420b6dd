"""The co-simulation master in the real-time runner (issue 22, "the master in real time"):
the same macro steps as offline, multi-rate, bridges seen by the verdict, termination."""

import numpy as np
import pytest

from cosim.errors import ParameterError
from hil.master_rt import RealTimeMaster
from hil.runner import RealTimeRunner, VirtualClock
from tests.unit.split_oscillator import split_oscillator


def _master(rate_b=2, stop_at=None):
    return split_oscillator(rate_b=rate_b, stop_at=stop_at)


def _offline(compiled):
    m = _master()
    for s in m.subsystems:
        s.sim.route.compiled = compiled
    return m.run(0.2), m


def test_the_master_in_real_time_gives_the_offline_result():
    """Bit for bit against the offline run on the same engine.  A real-time run builds its
    subsystems' C before the first frame however short it is (its frames' work is what it
    is judged on), where a 0.2 s offline run stays in the Python loop (compiling would not
    pay): against that default run the results agree to 1e-12, the C forms' standard (both
    step these linear subsystems with the exact propagator, NumPy and the C summing its
    products in other orders: cosim.codegen.propagate_c)."""
    rt = RealTimeRunner(RealTimeMaster(_master(), record_every=1), 2e-3, clock=VirtualClock())
    res = rt.run(0.2)
    assert [s.sim.route.ran for s in rt.sim.master.subsystems] == [{True}, {True}]
    same, _ = _offline(True)
    np.testing.assert_array_equal(res.time, same.time)
    np.testing.assert_array_equal(res["a.x"], same["a.x"])  # bit for bit
    np.testing.assert_array_equal(res["b.y"], same["b.y"])
    default, m = _offline(None)
    assert all(True not in s.sim.route.ran for s in m.subsystems)  # the Python loop
    np.testing.assert_array_equal(res.time, default.time)
    for k in ("a.x", "b.y"):
        np.testing.assert_allclose(res[k], default[k], rtol=0,
                                   atol=1e-12 * np.max(np.abs(default[k])))
    assert res.diagnostics["subsystem_steps"] == {"a": 200, "b": 100}  # b at rate 2
    assert rt.telemetry.frames == 100 and rt.verdict.passed


def test_outputs_are_kept_every_n_steps_only():
    rt = RealTimeRunner(RealTimeMaster(_master(), record_every=10), 1e-3,
                        clock=VirtualClock())
    res = rt.run(0.1)
    assert len(res.time) == 11 and res.time[-1] == pytest.approx(0.1)
    assert rt.sim.master.record.n_marks == 11  # marks only where rows are kept


def test_frames_must_be_whole_macro_steps_and_no_rollback():
    from cosim.coupling import GaussSeidel
    with pytest.raises(ParameterError, match="not a whole number of the simulator's step"):
        RealTimeRunner(RealTimeMaster(_master()), 1.5e-3, clock=VirtualClock())
    m = _master()
    m.coupling = type("Iter", (GaussSeidel,), {"needs_rollback": True, "name": "iterative"})()
    with pytest.raises(ParameterError, match="redoes macro steps"):
        RealTimeMaster(m)


def test_a_subsystem_that_terminates_ends_the_real_time_run():
    rt = RealTimeRunner(RealTimeMaster(_master(stop_at=0.05)), 1e-3, clock=VirtualClock())
    res = rt.run(1.0)
    assert rt.telemetry.frames == 50 and rt.telemetry.stopped_by == "terminated by the model"
    assert res.diagnostics["terminated"]["by"] == "a" and rt.verdict.passed
    assert "the model ended the run at t = 0.05 s" in rt.verdict.line()
