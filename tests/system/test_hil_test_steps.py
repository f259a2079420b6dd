"""The HIL test steps (hil.testing) on the time series they are made for: a cosim run's
Results (checked against the same checks on the closed-form solution), and a frame loop of
the real-time runner on a virtual clock, where a Player drives a live parameter from a
trigger and a Capture records around it."""

import numpy as np
import pytest

from bench.models import PID_A, PID_B, PID_C, PID_D, PLANT_A, PLANT_B, PLANT_C
from bench.models import reference_msd_pid as reference
from blocks.continuous import Integrator
from blocks.lti import StateSpace
from blocks.math import Gain, Sum
from blocks.sources import Constant, Step
from cosim import DiagramBuilder, Simulator
from cosim.time import TICKS_PER_SECOND
from hil.runner import RealTimeRunner, VirtualClock
from hil.testing import (
    Capture,
    Player,
    Recorder,
    Trace,
    always,
    eventually,
    responds,
    settles,
    sig,
)
from hil.testing import Step as StepStim


def _msd_pid():
    b = DiagramBuilder("msd_pid")
    r = b.add(Step("ref", 1.0))
    e = b.add(Sum("err", "+-"))
    pid = b.add(StateSpace("pid", PID_A, PID_B, PID_C, PID_D))
    plant = b.add(StateSpace("plant", PLANT_A, PLANT_B, PLANT_C, [[0.0]]))
    b.connect(r.y, e.ins[0])
    b.connect(plant.y, e.ins[1])
    b.connect(e.y, pid.u)
    b.connect(pid.y, plant.u)
    return b.build()


def test_checks_on_a_cosim_run_equal_the_checks_on_its_closed_form():
    res = Simulator(_msd_pid(), solver="rk4", dt=1e-3, record=["plant.y", "ref.y"]).run(6.0)
    full = Trace.from_results(res)
    sim = Trace(full.t[::10], {k: full[k][::10] for k in full.names})  # every 10 ms
    exact = Trace(sim.t, {"plant.y": reference(sim.t).ravel(),  # (expm per sample: slow)
                          "ref.y": np.where(sim.t >= 1.0, 1.0, 0.0)})
    assert np.max(np.abs(sim["plant.y"] - exact["plant.y"])) < 1e-7  # at the step
    for check in (
            lambda tr: settles(tr, "plant.y", to=1.0, tol=0.1, within=1.5, start=1.0),
            lambda tr: settles(tr, "plant.y", to=1.0, tol=0.05, within=1.5, start=1.0),
            lambda tr: eventually(tr, sig("plant.y") >= 0.9, within=1.0, start=1.0),
            lambda tr: always(tr, sig("plant.y") <= 1.05),
            lambda tr: responds(tr, "ref.y", "plant.y", latency=0.02, threshold=1e-3)):
        a, b = check(sim), check(exact)
        assert (a.passed, a.when) == (b.passed, b.when), (a.message, b.message)
        assert a.margin == pytest.approx(b.margin, abs=1e-7)
        for k in ("latencies", "settled_at", "last_exit", "worst_at", "closest_at"):
            assert a.details.get(k) == b.details.get(k), k
    r = settles(sim, "plant.y", to=1.0, tol=0.1, within=1.5, start=1.0)
    assert r.passed and r.when == pytest.approx(2.3) and r.details["last_exit"] < r.when
    r = settles(sim, "plant.y", to=1.0, tol=0.05, within=1.5, start=1.0)
    assert not r.passed and r.details["last_exit"] == pytest.approx(3.88)


def _ramp_sim():
    b = DiagramBuilder("ramp")
    c = b.add(Constant("c", 1.0))
    g = b.add(Gain("g", 2.0))
    i = b.add(Integrator("i", 0.0))
    b.connect(c.y, g.u)
    b.connect(g.y, i.u)
    return Simulator(b.build(), solver="rk4", dt=1e-3, record=["i.y"]), i


def test_a_player_and_a_capture_in_the_frame_loop_of_the_runner():
    sim, integ = _ramp_sim()
    player = Player({"c": StepStim(3.0, initial=1.0, start=sig("i.y") >= 0.05)})
    cap = Capture(["i.y", "c"], start=sig("c") > 2, pre=0.005, post=0.01,
                  units={"i.y": "m", "c": "m/s"})
    rec = Recorder(units={"i.y": "m", "c": "m/s"})
    sent = {}

    def on_frame(runner, k):
        t = runner.sim.ctx.ticks / TICKS_PER_SECOND
        y = float(runner.sim.ctx.output(integ.y))
        c = player.update(t, {"i.y": y})["c"]
        if c != sent.get("c"):
            runner.set_parameter("c.value", c)  # takes effect at the next frame
            sent["c"] = c
        rec.append(t, {"i.y": y, "c": c})
        cap.feed(t, {"i.y": y, "c": c})

    RealTimeRunner(sim, 1e-3, clock=VirtualClock(), on_frame=on_frame).run(0.05)
    run = rec.trace()
    # i.y = 2 t until 25 ms (i.y >= 0.05 there, within rounding), then slope 6 from the
    # frame after: the trigger's frame sets c, the next frame integrates it
    t_trig = player.started("c")
    assert t_trig == pytest.approx(0.025, abs=1.5e-3)
    k = int(np.flatnonzero(run.t == t_trig)[0])
    assert run["i.y"][k - 1] < 0.05 <= run["i.y"][k]
    assert run["c"][k - 1] == 1.0 and run["c"][k] == 3.0
    slope = np.diff(run["i.y"]) / np.diff(run.t)
    assert slope[k - 1] == pytest.approx(2.0) and slope[k] == pytest.approx(6.0)
    out = cap.trace()
    assert cap.trigger_time == t_trig and out.t[0] == pytest.approx(t_trig - 0.005)
    assert out.t[-1] == pytest.approx(t_trig + 0.01) and out.meta["complete"]
    assert out.unit("i.y") == "m" and not out.meta["pre_short"]
    r = responds(out, "c", "i.y", latency=0.001, threshold=2 * 1e-3 + 1e-9)
    assert r.passed and r.details["latencies"] == [(t_trig, pytest.approx(1e-3))]
