"""The real-time runner's verdict, constant-memory telemetry, skipped frames without I/O,
alignment with the wall clock, the automatic real-time set-up (issue 22 items 1, 3, 4,
10 and "real-time set-up by default"); virtual clocks, so nothing depends on the machine."""

import os
import resource

import pytest

from blocks.continuous import Integrator
from blocks.math import Gain
from blocks.sources import Constant, Step
from cosim import Block, DiagramBuilder, Simulator
from cosim.errors import ParameterError
from hil.runner import RealTimeRunner, VirtualClock
from hil.telemetry import LogHistogram
from hil.verdict import Budget, Verdict

pytest.importorskip("can")
pytest.importorskip("cantools")

from hil.bridges import CanReceive, CanTransmit  # noqa: E402
from hil.can import ACC_DBC, CanBackend, CanDatabase  # noqa: E402

DB = CanDatabase(ACC_DBC)


def _sim(**kw):
    b = DiagramBuilder("ramp")
    c = b.add(Constant("c", 1.0))
    g = b.add(Gain("g", 2.0))
    i = b.add(Integrator("i", 0.0))
    b.connect(c.y, g.u)
    b.connect(g.y, i.u)
    kw.setdefault("record", ["i.y"])
    return Simulator(b.build(), solver="rk4", dt=1e-3, **kw)


def _slow(frames, cost=2_500_000):
    return VirtualClock(cost_ns=lambda k: cost if k in frames else 100_000)


# ------------------------------------------------------------------ verdict
def test_a_clean_run_passes_and_says_so():
    rt = RealTimeRunner(_sim(), 1e-3, clock=VirtualClock(wake_late_ns=20_000))
    res = rt.run(0.1)
    v = rt.verdict
    assert v.passed and v.exit_code == 0
    assert v.line().startswith("verdict PASS ramp: 11 checks within budget")
    d = res.diagnostics["verdict"]
    assert d["passed"] and d["failed"] == [] and d["status"] == "pass"
    lat = next(c for c in v.checks if c.name == "lateness_p99_us")
    assert lat.figure == pytest.approx(20.0) and lat.limit == pytest.approx(250.0)


def test_a_run_that_skipped_most_frames_fails():
    """Issue 22 item 1: 9970 of 10000 frames skipped ended as 'complete', exit 0."""
    rt = RealTimeRunner(_sim(), 1e-3, overrun="skip",
                        clock=VirtualClock(cost_ns=lambda k: 9_500_000))
    rt.run(1.0)
    v = rt.verdict
    assert rt.telemetry.skipped > 800
    assert not v.passed and v.exit_code == 1
    assert {"overruns", "skipped_frames"} <= set(c.name for c in v.failed)
    assert v.line().startswith("verdict FAIL ramp")
    assert "900 frames skipped of 1000 due (budget 1)" in v.line()


def test_failed_timing_says_which_cause_in_one_line_with_what_to_do():
    """Issue 23: an overloaded machine is said in one line, with what to do; a model too
    slow for its frame is told apart from a machine whose other work took the CPU."""
    rt = RealTimeRunner(_sim(), 1e-3, overrun="skip",
                        clock=VirtualClock(cost_ns=lambda k: 9_500_000))
    res = rt.run(0.2)
    v = rt.verdict
    assert v.overload.startswith("timing failed (overruns, skipped_frames): the frame's own "
                                 "work does not fit the frame (CPU time p99 9500 of 1000 us")
    assert "lengthen the frame (period_s=) or lighten the model" in v.overload
    assert "other work" not in v.overload
    assert v.line().startswith(f"verdict FAIL ramp: {v.overload}. ")
    assert res.diagnostics["verdict"]["overload"] == v.overload
    # the same overruns, but the frame's thread was off the CPU (preempted in the frame)
    rt = RealTimeRunner(_sim(), 1e-3, overrun="skip", budget=Budget(overruns=1),
                        clock=VirtualClock(cost_ns=lambda k: 2_500_000 if k in (10, 20)
                                           else 100_000,
                                           off_cpu_ns=lambda k: 2_400_000 if k in (10, 20)
                                           else 0))
    rt.run(0.1)
    v = rt.verdict
    assert v.overload.startswith("timing failed (overruns, skipped_frames): other work took "
                                 "the CPU while the frame's own work fits (CPU time p99 100 of "
                                 "1000 us, p50 100 us) (2 overruns in 2 stalls of the "
                                 "frame's thread off the CPU, the longest 2.4 ms at t = ")
    assert "load average" in v.overload and "quieter machine" in v.overload
    assert "frame's own work does not fit" not in v.overload
    ok = RealTimeRunner(_sim(), 1e-3, clock=VirtualClock(wake_late_ns=20_000))
    ok.run(0.05)
    assert ok.verdict.passed and ok.verdict.overload is None


def test_overrun_causes_come_from_the_frames_cpu_time(tmp_path):
    """Issue 30: 'the frame's own work exceeds the frame' told apart from 'other work took
    the CPU' (a wake-up stall, a preemption in the frame), and frames late only by the
    backlog of a late frame before them inherit its cause."""
    # a 15 ms stall before frame 50 of 2 ms frames (cheap work): one stall episode, every
    # overrun of its catch-up chain put down to it
    rt = RealTimeRunner(_sim(), 2e-3, overrun="catch_up", max_catch_up=None,
                        clock=VirtualClock(cost_ns=lambda k: 800_000,
                                           stall_ns=lambda k: 15_000_000 if k == 50 else 0))
    rt.run(0.4)
    tel = rt.telemetry
    assert tel.overruns >= 7 and tel.overruns_stall == tel.overruns and tel.overruns_work == 0
    assert tel.stalls == 1 and tel.stall_at[0] == (pytest.approx(0.102), 15_000_000)
    d = tel.as_dict()
    assert d["overrun_causes"] == {"work": 0, "stall": tel.overruns}
    assert d["cpu_us"]["p99"] == pytest.approx(800, rel=0.02)
    assert "the longest 15.0 ms at t = 0.102 s" in rt.verdict.overload
    assert set(tel.overrun_cause) == {"", "stall"}
    # one frame whose own work takes 7 ms: its chain is the work's, no stall; the work
    # fits otherwise, so it is a spike, not a model too slow for its frame
    rt = RealTimeRunner(_sim(), 2e-3, overrun="catch_up", max_catch_up=None,
                        clock=VirtualClock(cost_ns=lambda k: 7_000_000 if k == 50
                                           else 800_000))
    rt.run(0.4)
    tel = rt.telemetry
    assert tel.overruns >= 3 and tel.overruns_work == tel.overruns and tel.stalls == 0
    assert tel.work_spikes == 1 and tel.spike_at == [(pytest.approx(0.102), 7_000_000)]
    assert rt.verdict.overload.split(": ", 1)[1].startswith(
        f"{tel.overruns} overruns by frames whose own work spiked above the frame, the "
        "largest 7000 us at t = 0.102 s while it fits otherwise (CPU time p99 800 of 2000 us")
    assert "does not fit" not in rt.verdict.overload
    # work that fills 95 % of the frame overruns on the ordinary wake-up jitter: that is
    # the work's, not a stall, and it does not fit (no quieter machine helps)
    rt = RealTimeRunner(_sim(), 2e-3, overrun="skip",
                        clock=VirtualClock(wake_late_ns=150_000, cost_ns=lambda k: 1_900_000))
    rt.run(0.1)
    assert rt.telemetry.overruns > 0 and rt.telemetry.overruns_stall == 0
    assert rt.telemetry.work_spikes == 0
    assert rt.verdict.overload.split(": ", 1)[1].startswith(
        "the frame's own work does not fit the frame (CPU time p99 1900 of 2000 us")
    # both causes: both said, the larger first
    rt = RealTimeRunner(_sim(), 2e-3, overrun="catch_up", max_catch_up=None,
                        clock=VirtualClock(cost_ns=lambda k: 2_500_000 if k in (10, 90)
                                           else 800_000,
                                           stall_ns=lambda k: 30_000_000 if k == 50 else 0))
    rt.run(0.4)
    tel, line = rt.telemetry, rt.verdict.overload
    assert tel.overruns_work >= 2 and tel.overruns_stall > tel.overruns_work
    assert line.index("other work took the CPU") < line.index("; and 2 overruns by frames whose")
    # the per-frame CSV carries the CPU time and the cause
    tel.write_csv(tmp_path / "telemetry.csv")
    rows = (tmp_path / "telemetry.csv").read_text().splitlines()
    assert rows[0] == "t_sim_s,lateness_us,exec_us,cpu_us,overrun,cause"
    assert any(r.endswith(",1,stall") for r in rows) and any(r.endswith(",1,work")
                                                            for r in rows)


def test_budget_is_the_users():
    rt = RealTimeRunner(_sim(), 1e-3, overrun="skip", clock=_slow({10, 20}),
                        budget=Budget(overruns=2, skipped_frames=0.1))
    rt.run(0.1)
    assert rt.telemetry.overruns == 2 and rt.verdict.passed
    rt = RealTimeRunner(_sim(), 1e-3, overrun="skip", clock=_slow({10, 20}),
                        budget=Budget(overruns=1))
    rt.run(0.1)
    assert [c.name for c in rt.verdict.failed] == ["overruns", "skipped_frames"]
    lenient = RealTimeRunner(_sim(), 1e-3, overrun="skip", clock=_slow({10, 20}),
                             budget=Budget.lenient())
    lenient.run(0.1)
    assert lenient.verdict.passed and "not checked" in lenient.verdict.checks[0].text


def test_bad_budgets_are_refused():
    with pytest.raises(ParameterError, match="a float is a fraction of the frames due"):
        Budget(overruns=1.5)
    with pytest.raises(ParameterError, match="stale_episodes must be a count"):
        Budget(stale_episodes=-1)
    with pytest.raises(ParameterError, match="budget must be a hil.verdict.Budget"):
        RealTimeRunner(_sim(), 1e-3, budget={"overruns": 0})


def _gated_link(tag, enable):
    """A 10 ms ACC_CMD sender gated by ``enable(bld)`` (a block output: send while >= 0.5)
    and its receiver (stale after 30 ms), run 0.2 s on a virtual clock: the verdict."""
    ch = f"verdict-{tag}-{os.getpid()}"
    with CanBackend("virtual", ch, timeout=0.0) as a, CanBackend("virtual", ch,
                                                                 timeout=0.0) as b:
        bld = DiagramBuilder(tag)
        thr = bld.add(Constant("thr", 0.5))
        tx = bld.add(CanTransmit("tx", a, DB, "ACC_CMD", 0.01, enable_input=True))
        bld.add(CanReceive("rx", b, DB, "ACC_CMD", 0.01, stale_after_s=0.03))
        bld.connect(enable(bld), tx.enable)
        bld.connect(thr.y, tx.throttle)
        bld.connect(thr.y, tx.brake_torque)
        rt = RealTimeRunner(Simulator(bld.build(), solver="rk4", dt=0.01, record=False), 0.01,
                            clock=VirtualClock())
        rt.run(0.2)
    return rt.verdict


def test_a_silent_sender_is_a_stale_episode_and_fails_the_run():
    """Issue 22 item 1: a run whose controller died mid-run exited 0 as complete."""
    v = _gated_link("stale", lambda bld: bld.add(Step("on", time_s=0.05, initial=1.0,
                                                      final=0.0)).y)  # the sender dies
    assert [c.name for c in v.failed] == ["stale_episodes"]
    assert v.io["stale_episodes"] == 1 and "rx" in v.io["by"]


def test_the_verdict_says_when_each_stale_episode_was():
    """A sender silent after its frame of 0.04 s until 0.12 s (the receiver reads each
    frame at its next hit: last read at 0.05 s, next at 0.13 s): the check names the
    message, the time and the length of the gap (the soak's verdict said only "4")."""
    from blocks.math import Sum

    def off_and_back(bld):
        off = bld.add(Step("off", time_s=0.05, initial=1.0, final=0.0))
        back = bld.add(Step("back", time_s=0.12, initial=0.0, final=1.0))
        on = bld.add(Sum("on", "++"))
        bld.connect(off.y, on.ins[0])
        bld.connect(back.y, on.ins[1])
        return on.y

    v = _gated_link("gap", off_and_back)
    assert v.io["stale_at"] == [(pytest.approx(0.05), "ACC_CMD", pytest.approx(0.13))]
    (check,) = v.failed
    assert "1 stale episodes (budget 0): ACC_CMD silent from t = 0.05 s for 80 ms" in check.text


def test_a_message_never_received_is_a_stale_episode():
    """A controller that never started is not a passing run either."""
    ch = f"verdict-never-{os.getpid()}"
    with CanBackend("virtual", ch, timeout=0.0) as b:
        bld = DiagramBuilder("never")
        bld.add(CanReceive("rx", b, DB, "ACC_CMD", 0.01, startup_s=0.05))
        sim = Simulator(bld.build(), solver="rk4", dt=0.01, record=False)
        rt = RealTimeRunner(sim, 0.01, clock=VirtualClock())
        rt.run(0.03)  # within the start-up grace: not (yet) stale
        assert rt.verdict.passed
        rt.run(0.1)
    assert [c.name for c in rt.verdict.failed] == ["stale_episodes"]


def test_an_error_fails_the_verdict_and_is_raised_with_it():
    class Boom(Block):
        def __init__(self):
            super().__init__("boom")
            self.declare_periodic_update(1e-3, self._u)

        def _u(self, ctx):
            if ctx.time >= 0.005:
                raise RuntimeError("sensor on fire")

    b = DiagramBuilder("boom")
    b.add(Boom())
    rt = RealTimeRunner(Simulator(b.build(), solver="rk4", dt=1e-3, record=False), 1e-3,
                        clock=VirtualClock())
    with pytest.raises(Exception, match="sensor on fire") as info:
        rt.run(0.1)
    assert info.value.verdict is rt.verdict and not rt.verdict.passed
    assert rt.verdict.failed[-1].name == "run"


def test_the_model_ends_the_run_and_the_verdict_says_so():
    from cosim.errors import SimulationTerminated

    class Done(Block):
        def __init__(self):
            super().__init__("done")
            self.declare_dynamic_time_event(lambda ctx: 0.02, self._end)

        def _end(self, ctx):
            raise SimulationTerminated("task complete")

    b = DiagramBuilder("ends")
    b.add(Done())
    c = b.add(Constant("c", 1.0))
    i = b.add(Integrator("i", 0.0))
    b.connect(c.y, i.u)
    rt = RealTimeRunner(Simulator(b.build(), solver="rk4", dt=1e-3, record=["i.y"]), 1e-3,
                        clock=VirtualClock())
    res = rt.run(1.0)
    assert rt.telemetry.frames == 20 and rt.telemetry.stopped_by == "terminated by the model"
    assert res.diagnostics["terminated"]["reason"] == "task complete"
    assert rt.verdict.passed and "the model ended the run at t = 0.02 s" in rt.verdict.line()


def test_combined_verdicts():
    a, b = Verdict("plant"), Verdict("ecu")
    a.add("x", 1, 2, True, "x ok")
    b.add("y", 3, 2, False, "y too big")
    v = Verdict.combine("demo", [a, b])
    assert not v.passed and [c.name for c in v.failed] == ["ecu: y"]
    assert v.line() == "verdict FAIL demo: 1 of 2 checks failed: ecu: y too big"


# ------------------------------------------------------------------ telemetry
def test_histogram_quantiles_are_within_their_bucket():
    h = LogHistogram()
    for v in range(1, 100_001):
        h.add(v * 10)
    for q in (0.5, 0.99, 0.999):
        assert h.quantile(q) == pytest.approx(q * 1e6, rel=1 / 64)
    assert h.max == 1_000_000 and h.min == 10


def test_telemetry_memory_stays_flat():
    """Issue 22 item 3: per-frame lists grew ~140 B a frame; now a ring and histograms."""
    rt = RealTimeRunner(_sim(record=False), 1e-3, clock=VirtualClock(), telemetry_ring=1000)
    rt.run(5.0)  # warm-up: every allocation pattern seen once
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rt.run(60.0)  # 60 000 frames: the lists would hold 8.4 MB
    tel = rt.telemetry
    grew_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0
    assert tel.frames == 60_000 and len(tel.lateness_ns) == 1000 and len(tel.t_sim) == 1000
    assert tel.t_sim[-1] == pytest.approx(65.0) and grew_kb < 2000
    assert tel.real_time_factor() == pytest.approx(1.0)


def test_telemetry_is_streamed_to_csv_from_a_writer_thread(tmp_path):
    path = tmp_path / "tel.csv"
    rt = RealTimeRunner(_sim(record=False), 1e-3, clock=VirtualClock(), telemetry_ring=100,
                        telemetry_csv=path)
    rt.run(2.0)
    lines = path.read_text().splitlines()
    assert len(lines) == 2001 and lines[0] == "t_sim_s,lateness_us,exec_us,cpu_us,overrun,cause"
    assert rt.telemetry.as_dict()["telemetry_csv"]["rows_dropped"] == 0


# ------------------------------------------------------------------ skip
def test_skipped_frames_send_nothing():
    """Issue 22 item 4: the skipped span was integrated with its I/O: a burst of frames."""
    ch = f"skip-io-{os.getpid()}"
    with CanBackend("virtual", ch, timeout=0.0) as a, CanBackend("virtual", ch,
                                                                 timeout=0.0) as wire:
        bld = DiagramBuilder("skipio")
        thr = bld.add(Constant("thr", 0.5))
        tx = bld.add(CanTransmit("tx", a, DB, "ACC_CMD", 1e-3))
        bld.connect(thr.y, tx.throttle)
        bld.connect(thr.y, tx.brake_torque)
        rt = RealTimeRunner(Simulator(bld.build(), solver="rk4", dt=1e-3, record=False), 1e-3,
                            overrun="skip", clock=_slow({10}, cost=5_500_000))
        rt.run(0.05)
        on_wire = len(wire.read_available())
    tel = rt.telemetry
    assert tel.skipped == 5 and tel.frames == 45
    assert tx.skipped == 5 and tx.sent == on_wire == 46  # the hit at t = 0 and one per frame


def test_skipping_keeps_time_aligned_with_the_wall_clock():
    """The skipped span costs time to integrate (here 0.1 ms per ms): the deadlines that
    pass meanwhile are dropped too, so the next frame is on time (one overrun only; before,
    the frame after the skip started 1.9 ms late and overran again)."""
    clock = VirtualClock(cost_ns=lambda k: 20_000_000 if k == 10 else 0)
    sim = _sim(record=False)
    adv = sim.advance_to_ticks

    def costly(end):
        before = sim.ctx.ticks
        adv(end)
        clock.t += (end - before) // 10

    sim.advance_to_ticks = costly
    rt = RealTimeRunner(sim, 1e-3, overrun="skip", clock=clock)
    rt.run(0.2)
    tel = rt.telemetry
    assert tel.overruns == 1 and tel.frames + tel.skipped == 200
    # the wall clock at the end is the simulated time (plus the last frame's cost)
    assert abs(clock.t * 1e-9 - 0.2) <= 1e-4 + 1e-12
    assert tel.t_sim[10:12] == pytest.approx([0.011, 0.034]) and max(tel.lateness_ns) == 0


# ------------------------------------------------------------------ set-up
def test_cpus_are_checked_before_the_run():
    """Issue 22 item 10: --cpus 7 gave 'OSError: [Errno 22]' without naming the CPU."""
    avail = sorted(os.sched_getaffinity(0))
    with pytest.raises(ParameterError, match=f"CPU 999 is not available to this process.*"
                                             f"available: {', '.join(map(str, avail))}"):
        RealTimeRunner(_sim(), 1e-3, cpus=[999])


def test_auto_setup_on_a_virtual_clock_applies_nothing():
    rt = RealTimeRunner(_sim(), 1e-3, clock=VirtualClock())
    rt.run(0.01)
    assert rt.realtime == "off" and rt.setup["applied"] == {}


@pytest.mark.timing
@pytest.mark.skipif(not hasattr(os, "sched_setscheduler"), reason="Linux scheduling")
def test_auto_setup_applies_what_is_permitted_and_says_what_not():
    from hil.rtsetup import AUTO_PRIORITY, fifo_permitted
    seen = []

    def look(runner, k):
        if k == 0:
            seen.append((os.sched_getscheduler(0), sorted(os.sched_getaffinity(0))))

    from tests.unit.hil.busy import busy
    with busy():
        rt = RealTimeRunner(_sim(), 2e-3, on_frame=look)
        rt.run(0.02)
    s = rt.setup
    assert s["applied"]["gc"] == "freeze" and s["applied"]["timer_slack_ns"] == 1
    if fifo_permitted(AUTO_PRIORITY):
        assert s["applied"]["priority"] == AUTO_PRIORITY and s["applied"]["mlock_kb"] > 0
        assert seen[0][0] == os.SCHED_FIFO
        if "cpus" in s["applied"]:  # pinned to a CPU no other auto-pinned run claimed
            assert len(seen[0][1]) == 1 and s["applied"]["cpus"] == seen[0][1]
        else:  # every CPU claimed by other real-time runs, or only one CPU
            assert "CPU pinning" in s["text"] or len(os.sched_getaffinity(0)) == 1
        assert f"SCHED_FIFO {AUTO_PRIORITY}" in rt.verdict.line()
    else:
        assert "SCHED_FIFO not permitted" in s["text"] and "not permitted" in rt.verdict.line()
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # restored
    with open("/proc/self/status") as f:
        assert next(ln for ln in f if ln.startswith("VmLck:")).split()[1] == "0"


def test_a_verdict_read_back_keeps_its_diagnosis(tmp_path):
    """Issue 30: Verdict.from_dict (a peer's summary.json) dropped the overload line, so a
    combined verdict failing only on the ECU's timing had no diagnosis."""
    rt = RealTimeRunner(_sim(), 1e-3, overrun="skip",
                        clock=VirtualClock(cost_ns=lambda k: 9_500_000))
    rt.run(0.05)
    rt.verdict.write(tmp_path / "v.json")
    import json
    back = Verdict.from_dict(json.loads((tmp_path / "v.json").read_text()), "ecu")
    assert back.overload == rt.verdict.overload and back.overload
    both = Verdict.combine("loop", [Verdict("plant"), back])
    assert both.overload == rt.verdict.overload and both.line().startswith(
        f"verdict FAIL loop: {back.overload}. ")
