"""A real-time runner over a co-simulation master passes its end on to the subsystems
(``RealTimeMaster.expect``): a native subsystem that can run in C builds it before the
first frame, however short the run, so no compilation falls in the middle of the frames
and every frame costs what C costs."""

from __future__ import annotations

import numpy as np

import blocks as bl
from cosim import DiagramBuilder, DiagramSubsystem, Jacobi, MasterScheduler
from cosim.compiled_route import CompiledRoute


def _plant():
    b = DiagramBuilder("plant")
    s = b.add(bl.Sine("s", 1.0, 2.0))
    g = b.add(bl.Gain("g", 3.0))
    i = b.add(bl.Integrator("i"))
    b.connect(s.y, g.u)
    b.connect(g.y, i.u)
    b.export_output(i.y, "x")
    return b.build()


def _run(frames: int, announce: bool):
    from hil.master_rt import RealTimeMaster
    from hil.runner import RealTimeRunner, VirtualClock
    sub = DiagramSubsystem(_plant(), solver="rk4", dt=1e-3)
    rtm = RealTimeMaster(MasterScheduler([sub], [], 1e-3, coupling=Jacobi()))
    if not announce:
        rtm.expect = None  # a model that passes nothing on: the runner has nothing to call
    res = RealTimeRunner(rtm, 1e-3, clock=VirtualClock()).run(frames * 1e-3)
    return sub, res


def test_the_subsystems_c_is_built_before_the_first_frame():
    sub0 = DiagramSubsystem(_plant(), solver="rk4", dt=1e-3)
    frames = CompiledRoute.threshold // len(sub0.sim.plan.blocks) + 50
    sub, res = _run(frames, announce=True)
    assert sub.sim.route.ran == {True}, sub.sim.route.ran  # every frame in C
    # without the announcement the frames move to C only when their work adds up (mid-run)
    late, res_late = _run(frames, announce=False)
    assert True in late.sim.route.ran and len(late.sim.route.ran) == 2, late.sim.route.ran
    assert late.sim.route.diagnostic().startswith("partly: a short run so far (")
    # the same values either way, and the C's against the Python loop's
    ref = DiagramSubsystem(_plant(), solver="rk4", dt=1e-3, compiled=False)
    t = np.asarray(res.time)
    assert np.array_equal(t, np.asarray(res_late.time))
    np.testing.assert_allclose(res["plant.x"], res_late["plant.x"], rtol=0, atol=1e-12)
    m = MasterScheduler([ref], [], 1e-3, coupling=Jacobi()).run(frames * 1e-3)
    np.testing.assert_allclose(res["plant.x"], m["plant.x"], rtol=0, atol=1e-12)


def test_a_short_real_time_run_is_built_before_its_first_frame_too():
    """A real-time run is judged on its frames' work, not on its total: however short,
    the announcement builds the C before the first frame (an offline run of the same
    length stays in the Python loop: compiling would not pay)."""
    sub, res = _run(50, announce=True)
    assert sub.sim.route.ran == {True}, sub.sim.route.ran
    late, res_late = _run(50, announce=False)
    assert True not in late.sim.route.ran and late.sim.route.run is None
    assert late.sim.route.diagnostic().startswith("a short run so far ("), \
        late.sim.route.diagnostic()
    np.testing.assert_allclose(res["plant.x"], res_late["plant.x"], rtol=0, atol=1e-12)
