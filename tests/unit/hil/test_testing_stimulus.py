"""Signal generators (hil.testing.stimulus) against their closed forms, started and
stopped by time, by the test and by triggers in a frame loop."""

import math

import numpy as np
import pytest

from hil.testing import (
    Player,
    Pulse,
    Ramp,
    Recorder,
    Replay,
    Sine,
    Square,
    Step,
    Table,
    Trace,
    TraceError,
    sig,
)

T = np.arange(0, 4 + 1 / 64, 1 / 64)  # exact binary times


def test_step_ramp_sine_closed_forms():
    s = Step(5.0, initial=1.0, start=1.0)
    assert list(s.values(T)) == [1.0 if t < 1 else 5.0 for t in T]
    r = Ramp(2.0, initial=1.0, start=0.5, limit=4.0)
    assert list(r.values(T)) == [1.0 if t < 0.5 else min(1 + 2 * (t - 0.5), 4.0) for t in T]
    r = Ramp(-1.0, limit=-1.5)
    assert list(r.values(T)) == [max(-t, -1.5) for t in T]
    w = Sine(2.0, 0.75, phase=0.3, offset=1.0, start=0.25)
    assert list(w.values(T)) == [1.0 if t < 0.25 else
                                 1.0 + 2.0 * math.sin(2 * math.pi * 0.75 * (t - 0.25) + 0.3)
                                 for t in T]


def test_square_and_pulse_switch_exactly_at_their_edges():
    q = Square(-1.0, 1.0, period=0.5, duty=0.25, start=1.0)
    want = [-1.0 if t < 1 else (1.0 if (t - 1) % 0.5 < 0.125 else -1.0) for t in T]
    assert list(q.values(T)) == want
    # edges given as sums of decimal fractions, 1e-16 off: still on the edge
    assert q.value(1.0 + 0.1 + 0.2 + 0.2) == 1.0 and q.value(1.125 - 1e-12) == -1.0
    p = Pulse(3.0, width=0.25, start=2.0)
    assert list(p.values(T)) == [3.0 if 2 <= t < 2.25 else 0.0 for t in T]


def test_table_linear_and_hold_and_replay():
    tab = Table([0.0, 1.0, 3.0], [0.0, 10.0, -10.0], start=0.5)
    assert tab.value(0.0) == 0.0 and tab.value(1.0) == 5.0 and tab.value(2.5) == 0.0
    assert tab.value(3.5) == -10.0 and tab.value(9.0) == -10.0
    hold = Table([0.0, 1.0, 3.0], [0.0, 10.0, -10.0], interp="hold")
    assert [hold.value(t) for t in (0.5, 1.0, 2.999, 3.0, 5)] == [0, 10, 10, -10, -10]
    tr = Trace([10.0, 10.5, 11.0], {"v": [1.0, 2.0, 4.0]}, {"v": "m/s"})
    rep = Replay(tr, "v", start=1.0)
    assert rep.unit == "m/s"
    assert [rep.value(t) for t in (0.0, 1.0, 1.25, 1.5, 1.99, 2.0, 7.0)] == \
        [1.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0]
    lin = Replay(tr, "v", interp="linear")
    assert lin.value(0.25) == 1.5 and lin.value(0.75) == 3.0


def test_stop_holds_or_returns_to_idle():
    r = Ramp(1.0, start=1.0, stop=2.0)
    assert [r.value(t) for t in (0.5, 1.5, 2.0, 3.0)] == [0.0, 0.5, 1.0, 1.0]
    r = Ramp(1.0, start=1.0, stop=2.0, after_stop="idle")
    assert [r.value(t) for t in (1.5, 1.75, 2.0, 3.0)] == [0.5, 0.75, 0.0, 0.0]


def test_a_triggered_generator_needs_its_trigger_time():
    s = Step(1.0, start=sig("v") > 3)
    with pytest.raises(TraceError, match="is a trigger"):
        s.value(1.0)
    assert s.value(2.0, start=1.5) == 1.0 and s.value(1.0, start=1.5) == 0.0
    with pytest.raises(TraceError, match="started by the test"):
        Step(1.0, start=None).value(1.0)


def test_player_in_a_frame_loop_with_triggers_and_test_steps():
    player = Player({"brake": Step(1.0, start=sig("v") >= 3.0, stop=sig("v") < 1.0),
                     "ref": Ramp(1.0, start=None, unit="m/s")}, units={"v": "m/s"})
    assert player.units == {"brake": "", "ref": "m/s"}
    rec = Recorder()
    v, out = 0.0, []
    for k in range(80):
        t = k * 0.125
        if k == 40:
            player.start("ref", t)
        rec.append(t, {"v": v})
        vals = player.update(t, rec.trace())
        out.append((t, vals["brake"], vals["ref"]))
        v += 0.5 if vals["brake"] == 0 and k < 20 else (-0.5 if vals["brake"] else 0.0)
    # v reaches 3.0 at k = 6: the brake starts at that frame and brakes v down below 1
    assert player.started("brake") == 0.75 and out[5][1] == 0.0 and out[6][1] == 1.0
    stop = player.stopped("brake")
    assert stop is not None and rec.trace().at(stop, "v") < 1.0
    assert rec.trace().at(stop - 0.125, "v") >= 1.0
    assert all(b == 1.0 for t, b, _ in out if 0.75 <= t < stop)
    assert all(b == 1.0 for t, b, _ in out if t >= stop)  # after_stop="hold": the step
    assert [r for t, _, r in out if t < 5.0] == [0.0] * 40
    assert [r for t, _, r in out if t >= 5.0] == [t - 5.0 for t, _, _ in out if t >= 5.0]


def test_player_reads_a_dict_of_values_and_refuses_time_going_back():
    player = Player({"p": Pulse(1.0, 0.5, start=sig("x") > 0)})
    assert player.update(0.0, {"x": 0.0}) == {"p": 0.0}
    assert player.update(0.1, {"x": 1.0}) == {"p": 1.0}
    assert player.update(0.7, {"x": 1.0}) == {"p": 0.0}
    with pytest.raises(TraceError, match="time went back"):
        player.update(0.5, {"x": 1.0})
    with pytest.raises(TraceError, match="needs the latest values"):
        Player({"p": Step(1.0, start=sig("x") > 0)}).update(0.0)
    with pytest.raises(TraceError, match="no generator 'q'"):
        player.start("q", 1.0)
