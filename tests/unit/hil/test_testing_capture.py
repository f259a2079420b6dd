"""Triggered capture (hil.testing.capture): fed sample by sample and run on a whole trace,
against a loop over the samples written here; the first-sample trigger, no trigger, and a
pre-trigger time longer than the history."""

import numpy as np
import pytest

from hil.testing import Capture, CaptureIncomplete, NotTriggered, Trace, TraceError, sig

EPS = 1e-9


def oracle(t, x, start_thr, stop_thr, pre, post, k):
    """(indices kept, complete) by the semantics of the module docstring, as a loop."""
    trig = next((i for i in range(len(t)) if x[i] > start_thr), None)
    if trig is None:
        return None, False
    if stop_thr is None:
        end = None if post is None else t[trig] + post
    else:
        stop = next((j for j in range(trig + 1, len(t)) if x[j] < stop_thr), None)
        end = None if stop is None else t[stop] + (post or 0.0)
    kept = []
    for i in range(len(t)):
        if t[i] < t[trig] - pre - EPS or (end is not None and t[i] > end + EPS):
            continue
        if (i - trig) % k == 0:
            kept.append(i)
    complete = end is not None and any(t[i] >= end - EPS for i in range(len(t)))
    return kept, complete


@pytest.mark.parametrize("seed", range(120))
def test_capture_matches_a_loop_fed_or_run(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    t = np.round(np.cumsum(rng.uniform(0.001, 0.02, n)), 6)
    x = np.cumsum(rng.normal(0, 1, n))
    y = rng.normal(0, 1, n)
    start_thr = float(rng.choice(x)) - (0.0 if rng.random() < 0.5 else 1e-3)
    if rng.random() < 0.1:
        start_thr = float(x.max()) + 1  # never triggers
    stop_thr = None if rng.random() < 0.4 else float(rng.choice(x))
    pre = float(rng.choice([0.0, 0.01, 0.05, 10.0]))
    post = None if rng.random() < 0.2 else float(rng.choice([0.0, 0.02, 0.1, 1.0]))
    k = int(rng.choice([1, 1, 2, 3, 7]))
    kept, complete = oracle(t, x, start_thr, stop_thr, pre, post, k)

    def make():
        return Capture(["x", "y"], start=sig("x") > start_thr,
                       stop=None if stop_thr is None else sig("x") < stop_thr,
                       pre=pre, post=post, decimate=k, units={"x": "m"})

    fed = make()
    for i in range(n):
        fed.feed(t[i], {"x": x[i], "y": y[i], "other": 0.0})
    tr = Trace(t, {"x": x, "y": y}, {"x": "m", "y": "V"})
    if kept is None:
        with pytest.raises(NotTriggered, match="never triggered"):
            fed.trace()
        with pytest.raises(NotTriggered):
            make().run(tr)
        return
    ran = make().run(tr)
    assert fed.complete == complete
    got = fed.trace(partial=True)
    for cap in (got, ran):
        assert list(cap.t) == list(t[kept]) and list(cap["y"]) == list(y[kept])
        assert cap.unit("x") == "m" and cap.meta["complete"] == complete
        trig = next(i for i in range(n) if x[i] > start_thr)
        assert cap.meta["trigger_time"] == t[trig]
        assert cap.meta["pre_short"] == (t[0] > t[trig] - pre + EPS)
    assert ran.unit("y") == "V"  # units from the trace where the capture has none
    if not complete and (post is not None or stop_thr is not None):
        with pytest.raises(CaptureIncomplete, match="partial=True"):
            fed.trace()


def test_a_trigger_in_the_first_sample_and_a_pre_trigger_longer_than_the_history():
    t = np.arange(50) * 0.1
    tr = Trace(t, {"x": t.copy()})
    cap = Capture(start=sig("x") >= 0, pre=1.0, post=0.5)
    out = cap.run(tr)
    assert cap.trigger_time == 0.0 and out.t[0] == 0.0 and len(out) == 6
    assert out.meta["pre_short"] and out.meta["pre_available"] == 0.0
    cap = Capture(start=sig("x") > 2.0, pre=5.0, post=0.0)
    out = cap.run(tr)
    assert out.t[0] == 0.0 and out.t[-1] == t[21] and out.meta["pre_short"]
    assert out.meta["pre_available"] == t[21]
    cap = Capture(start=sig("x") > 2.0, pre=0.5, post=0.0)  # history long enough
    out = cap.run(tr)
    assert list(out.t) == list(t[16:22]) and not out.meta["pre_short"]


def test_no_trigger_says_so_and_is_not_an_empty_success():
    cap = Capture(["x"], start=sig("x") > 100)
    with pytest.raises(NotTriggered, match="no sample was fed"):
        cap.trace()
    for i in range(5):
        cap.feed(i * 0.5, {"x": float(i)})
    with pytest.raises(NotTriggered, match=r"x > 100 never held \(5 samples fed, "
                                           r"t = 0.000 .. 2.000 s\)"):
        cap.trace()


def test_a_time_trigger_stop_and_decimation_in_a_frame_loop():
    cap = Capture(["v"], start=1.0, stop=sig("v") > 2.5, post=0.25, decimate=2, pre=0.5)
    done_at = None
    for k in range(100):
        t = k * 0.125
        if cap.feed(t, {"v": t}):
            done_at = t
            break
    out = cap.trace()
    # trigger at 1.0; stop at v > 2.5 -> t = 2.625; end 2.875; every 2nd sample from 1.0
    assert cap.trigger_time == 1.0 and cap.stop_time == 2.625 and cap.end == 2.875
    assert list(out.t) == [0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75]
    assert done_at == 2.875 and cap.done
    assert cap.feed(3.0, {"v": 3.0}) and len(cap.trace()) == 10


def test_bad_input_is_refused():
    with pytest.raises(TraceError, match="decimate"):
        Capture(decimate=0)
    with pytest.raises(TraceError, match="durations"):
        Capture(pre=-1)
    cap = Capture(["x"])
    cap.feed(0.0, {"x": 1.0})
    with pytest.raises(TraceError, match="must increase"):
        cap.feed(0.0, {"x": 1.0})
    with pytest.raises(TraceError, match="has no 'x'"):
        cap.feed(1.0, {"y": 1.0})
