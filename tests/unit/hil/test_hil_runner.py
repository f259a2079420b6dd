"""The real-time runner: pacing logic on a virtual clock, overrun policies, live
parameter changes, telemetry; one short run on the real clock with gross bounds only
(the machines are shared: anchors-hil-fmi.md A4)."""

import os

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.math import Gain
from blocks.sources import Constant
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from hil.runner import DeadlineMissed, RealTimeRunner, VirtualClock

P = 1_000_000  # 1 ms in ns


def _sim(**kw):
    b = DiagramBuilder("ramp")
    c = b.add(Constant("c", 1.0))
    g = b.add(Gain("g", 2.0))
    i = b.add(Integrator("i", 0.0))
    b.connect(c.y, g.u)
    b.connect(g.y, i.u)
    return Simulator(b.build(), solver="rk4", dt=1e-3, record=["i.y"], **kw)


def test_frames_follow_absolute_deadlines():
    clock = VirtualClock(wake_late_ns=20_000, cost_ns=lambda k: 300_000)
    rt = RealTimeRunner(_sim(), 1e-3, clock=clock)
    res = rt.run(0.1)
    tel = rt.telemetry
    assert tel.frames == 100 and tel.overruns == 0 and tel.skipped == 0
    # lateness is the wake-up delay only: no drift from the 300 us of work per frame
    assert set(tel.lateness_ns) == {20_000} and set(tel.exec_ns) == {300_000}
    assert tel.t_sim[-1] == pytest.approx(0.1) and res["i.y"][-1] == pytest.approx(0.2)
    assert tel.real_time_factor() == pytest.approx(1.0, rel=1e-12)
    assert res.diagnostics["realtime"]["lateness_us"]["p99"] == pytest.approx(20.0)


def _slow(frames, cost=2_500_000):
    """Frames in ``frames`` take 2.5 ms (of a 1 ms period), the others 0.1 ms."""
    return VirtualClock(cost_ns=lambda k: cost if k in frames else 100_000)


def test_skip_drops_the_missed_frames_and_keeps_the_model_exact():
    rt = RealTimeRunner(_sim(), 1e-3, overrun="skip", clock=_slow({10}))
    res = rt.run(0.05)
    tel = rt.telemetry
    # frame 10 ends at 13.6 ms (deadline 11 ms): deadlines 12 and 13 ms are past: dropped
    assert tel.overruns == 1 and tel.skipped == 2
    assert tel.frames == 50 - 2
    assert res["i.y"][-1] == pytest.approx(0.1, rel=1e-12)  # every step still integrated
    assert 0.012 not in [round(t, 6) for t in tel.t_sim]


def test_catch_up_runs_missed_frames_back_to_back():
    rt = RealTimeRunner(_sim(), 1e-3, overrun="catch_up", clock=_slow({10}))
    rt.run(0.05)
    tel = rt.telemetry
    assert tel.skipped == 0 and tel.frames == 50
    # frame 10 ends at 13.5 ms: the frames due at 12 and 13 ms start at once (1.5 ms and
    # 0.6 ms late), the one due at 14 ms waits for its deadline again
    assert tel.lateness_ns[11:14] == [1_500_000, 600_000, 0]


def test_catch_up_is_bounded_then_skips():
    rt = RealTimeRunner(_sim(), 1e-3, overrun="catch_up", max_catch_up=1,
                        clock=_slow({10}, cost=5_500_000))
    rt.run(0.05)
    assert rt.telemetry.skipped == 4  # 5 deadlines missed, 1 caught up


def test_raise_stops_at_the_miss_with_results_and_telemetry():
    rt = RealTimeRunner(_sim(), 1e-3, overrun="raise", clock=_slow({5}))
    with pytest.raises(DeadlineMissed, match="frame at t = 0.006 s ended 1500 us after the "
                                             "next deadline") as exc:
        rt.run(0.05)
    assert exc.value.telemetry.frames == 6 and exc.value.results.time[-1] == pytest.approx(0.006)


def test_max_overruns_budget():
    rt = RealTimeRunner(_sim(), 1e-3, overrun="skip", max_overruns=2,
                        clock=_slow({3, 6, 9, 12}))
    with pytest.raises(DeadlineMissed, match="3 overruns, more than max_overruns = 2"):
        rt.run(0.05)


def test_degrade_doubles_the_period_and_recovers():
    slow = set(range(10, 16))
    rt = RealTimeRunner(_sim(), 1e-3, overrun="degrade", degrade_after=3, recover_after=5,
                        clock=VirtualClock(cost_ns=lambda k: 1_500_000 if k in slow else 0))
    res = rt.run(0.06)
    tel = rt.telemetry
    steps = np.diff(np.round(np.asarray(tel.t_sim) * 1e3).astype(int))
    assert 2 in steps and steps[-1] == 1  # degraded to 2 ms frames, then back to 1 ms
    assert tel.degraded > 0
    assert res["i.y"][-1] == pytest.approx(0.12, rel=1e-12)


def test_live_parameter_change_takes_effect_at_the_next_frame():
    sim = _sim()

    def at_frame(runner, k):
        if k == 9:  # after the frame ending at 10 ms
            runner.set_parameter("c.value", 2.0)

    RealTimeRunner(sim, 1e-3, clock=VirtualClock(), on_frame=at_frame).run(0.02)
    res = sim.finish()
    # 2 * 1 * 0.010 + 2 * 2 * 0.010
    assert res["i.y"][-1] == pytest.approx(0.06, rel=1e-12)


def test_bad_settings_are_refused():
    with pytest.raises(ParameterError, match="overrun must be one of"):
        RealTimeRunner(_sim(), 1e-3, overrun="wait")
    with pytest.raises(ParameterError, match="not a whole number of the simulator's step"):
        RealTimeRunner(_sim(), 1.5e-3)


@pytest.mark.timing
def test_on_the_real_clock_with_process_settings(tmp_path):
    """200 frames of 2 ms on the monotonic clock against two busy processes; what the
    runner reports is asserted (counts, the verdict's consistency and honesty), not the
    machine."""
    from tests.timing_plugin import assert_honest
    from tests.unit.hil.busy import busy
    kw = {"gc_mode": "freeze", "timer_slack_ns": 1}
    if os.geteuid() == 0:
        kw["priority"] = 10
    with busy():
        rt = RealTimeRunner(_sim(), 2e-3, overrun="skip", spin_s=1e-4, **kw)
        res = rt.run(0.4)
    tel = rt.telemetry
    d = res.diagnostics["realtime"]
    assert tel.frames + tel.skipped == 200
    v = res.diagnostics["verdict"]
    checks = {c["name"]: c for c in v["checks"]}
    assert checks["overruns"]["figure"] == tel.overruns == d["overruns"]
    assert checks["skipped_frames"]["figure"] == tel.skipped
    assert checks["lateness_p99_us"]["figure"] == pytest.approx(d["lateness_us"]["p99"],
                                                                abs=1e-3)
    assert v["passed"] == all(c["ok"] for c in v["checks"])
    assert_honest(v)  # PASS, or FAIL on timing with the runner's diagnosis of the cause
    assert res["i.y"][-1] == pytest.approx(0.8, rel=1e-12)
    assert "lateness p50" in tel.summary()
    tel.write_csv(tmp_path / "rt.csv")
    assert (tmp_path / "rt.csv").read_text().count("\n") == tel.frames + 1
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # restored


def test_skipping_near_the_end_counts_only_frames_that_existed():
    """The last frame overruns by 5 periods: only the 2 frames left are skipped (a
    real-clock run under load once counted 196 frames + 6 skipped of 200)."""
    rt = RealTimeRunner(_sim(), 1e-3, overrun="skip", clock=_slow({7}, cost=5_500_000))
    res = rt.run(0.01)
    tel = rt.telemetry
    assert tel.frames + tel.skipped == 10 and tel.skipped == 2
    assert res["i.y"][-1] == pytest.approx(0.02, rel=1e-12)


def test_stop_ends_the_run_after_the_current_frame():
    def at_frame(runner, k):
        if k == 9:
            runner.stop("SIGINT")

    sim = _sim()
    rt = RealTimeRunner(sim, 1e-3, clock=VirtualClock(), on_frame=at_frame)
    res = rt.run(1.0)
    assert rt.telemetry.frames == 10 and rt.telemetry.stopped_by == "SIGINT"
    assert res["i.y"][-1] == pytest.approx(0.02, rel=1e-12)  # a normal end at t = 10 ms
    rt.stop()  # before a run: it ends before its first frame, then the flag is cleared
    rt.run(0.005)
    assert rt.telemetry.frames == 0 and rt.telemetry.stopped_by == "stop()"
    rt.on_frame = None
    rt.run(0.005)
    assert rt.telemetry.frames == 5 and rt.telemetry.stopped_by == ""


# ------------------------------------------------------------------ recording
def test_the_runner_moves_the_writers_to_writer_threads(tmp_path):
    from cosim.writers import CsvWriter, read_csv
    w = CsvWriter(tmp_path / "r.csv", ["i.y"], chunk=10)
    rt = RealTimeRunner(_sim(observers=[w]), 1e-3, clock=VirtualClock())
    res = rt.run(0.1)
    assert w.stats()["mode"] == "thread" and not w._thread.thread.is_alive()
    got = read_csv(w.path)
    np.testing.assert_array_equal(got["i.y"], res["i.y"])
    assert got.diagnostics["status"] == "complete"
    rec = res.diagnostics["realtime"]["recording"]
    assert rec["threaded"] == 1 and rec["chunks_written"] == 11 and rec["chunks_dropped"] == 0
    assert rec["writers"][0]["path"] == str(w.path)
    assert "recording on writer threads: 11 chunks written, 0 dropped" in rt.telemetry.summary()
    # inline on request: the frame that fills a chunk writes it
    w2 = CsvWriter(tmp_path / "r2.csv", ["i.y"], chunk=10)
    rt2 = RealTimeRunner(_sim(observers=[w2]), 1e-3, clock=VirtualClock(), writer_thread=False)
    rt2.run(0.1)
    assert w2.stats()["mode"] == "inline" and "recording in the frame" in rt2.telemetry.summary()


class _Stuck:
    """A CsvWriter whose thread blocks on its first chunk until ``gate`` is set."""

    def __new__(cls, path, **kw):
        import threading

        from cosim.writers import CsvWriter

        class Stuck(CsvWriter):
            gate = threading.Event()

            def _write_chunk(self, times, rows):
                self.gate.wait()
                super()._write_chunk(times, rows)

        return Stuck(path, ["i.y"], **kw)


def test_a_full_writer_queue_is_counted_and_never_waited_on(tmp_path):
    """The disk stalls for the whole run (the gate opens at the last frame, so a frame
    that waited for the queue would hang the run): 2 chunks wait, the other full chunks
    are dropped, counted and reported; finish then drains the queue."""
    w = _Stuck(tmp_path / "r.csv", chunk=10, queue_chunks=2)

    def open_gate(runner, k):
        if k == 99:
            w.gate.set()

    rt = RealTimeRunner(_sim(observers=[w]), 1e-3, clock=VirtualClock(), on_frame=open_gate)
    rt.run(0.1)
    tel = rt.telemetry
    assert tel.frames == 100 and tel.overruns == 0
    rec = tel.as_dict()["recording"]
    assert rec["max_queued"] == 2 and rec["chunks_dropped"] == 8
    assert rec["samples_dropped"] == 80 and rec["chunks_written"] == 3  # 2 + the last sample
    assert "8 dropped (queue full), queue max 2 of 2" in tel.summary()


def test_a_writer_thread_error_stops_the_run_naming_the_file(tmp_path):
    from cosim.errors import OutputError
    from cosim.writers import CsvWriter

    class Full(CsvWriter):
        def _write_chunk(self, times, rows):
            raise OSError(28, "No space left on device")

    w = Full(tmp_path / "r.csv", ["i.y"], chunk=10)

    def wait_for_the_thread(runner, k):
        if k == 20:
            # it failed on the first chunk and waits for more; the loop below waits for it
            w._thread.thread.join(0.2)  # not timing: a pause, not a deadline
            while w.stats()["error"] is None:
                pass

    rt = RealTimeRunner(_sim(observers=[w]), 1e-3, clock=VirtualClock(),
                        on_frame=wait_for_the_thread)
    with pytest.raises(OutputError, match="No space left on device") as info:
        rt.run(1.0)
    assert str(w.path) in str(info.value)
    tel = info.value.telemetry
    assert tel.frames == 21 and "OutputError" in tel.stopped_by  # raised in frame 21
    assert tel.as_dict()["recording"]["errors"] == [
        "OSError: [Errno 28] No space left on device"]


def test_writer_thread_without_observers_warns():
    import types

    from cosim.errors import CosimWarning
    with pytest.warns(CosimWarning, match="writer_thread=True cannot take effect"):
        RealTimeRunner(types.SimpleNamespace(ctx=None, advance_to_ticks=None), 1e-3)


@pytest.mark.skipif(os.geteuid() != 0, reason="SCHED_FIFO needs root or CAP_SYS_NICE")
def test_writer_threads_share_the_frames_scheduling(tmp_path):
    from cosim.writers import CsvWriter
    w = CsvWriter(tmp_path / "r.csv", ["i.y"], chunk=10)
    seen = []

    def policy(runner, k):
        if k == 0:
            seen.append(os.sched_getscheduler(w._thread.thread.native_id))

    rt = RealTimeRunner(_sim(observers=[w]), 1e-3, priority=5, clock=VirtualClock(),
                        on_frame=policy)
    rt.run(0.01)
    assert seen == [os.SCHED_FIFO] and os.sched_getscheduler(0) == os.SCHED_OTHER


def test_helper_priority_needs_a_frame_priority_above_it():
    with pytest.raises(ParameterError, match="helper_priority=5 needs a SCHED_FIFO"):
        RealTimeRunner(_sim(), 1e-3, helper_priority=5)
    with pytest.raises(ParameterError, match="must be 1..priority-1"):
        RealTimeRunner(_sim(), 1e-3, priority=5, helper_priority=5)


@pytest.mark.skipif(os.geteuid() != 0, reason="SCHED_FIFO needs root or CAP_SYS_NICE")
def test_helper_threads_run_below_the_frame_for_the_run_only():
    """A helper (an emulator, a reader) that holds the GIL must not be preempted by the
    machine's load: SCHED_FIFO at helper_priority during the run, restored after."""
    import threading
    stop = threading.Event()
    helper = threading.Thread(target=stop.wait, name="emulator", daemon=True)
    helper.start()
    seen = []

    def policy(runner, k):
        if k == 0:
            seen.append((os.sched_getscheduler(helper.native_id),
                         os.sched_getparam(helper.native_id).sched_priority,
                         os.sched_getparam(0).sched_priority))

    rt = RealTimeRunner(_sim(), 1e-3, priority=10, helper_priority=9, clock=VirtualClock(),
                        on_frame=policy)
    try:
        rt.run(0.005)
        assert seen == [(os.SCHED_FIFO, 9, 10)] and "emulator" in rt.settings.helpers
        assert os.sched_getscheduler(helper.native_id) == os.SCHED_OTHER
    finally:
        stop.set()
