"""Traces (hil.testing.signals) and conditions with margins (hil.testing.conditions)."""

import numpy as np
import pytest

from cosim.observers import Results
from hil.testing import Recorder, Trace, TraceError, as_cond, sig


def _tr():
    return Trace([0.0, 0.1, 0.2, 0.3], {"a": [1.0, 2.0, 3.0, 4.0], "b": [0.0, 0.0, 5.0, 5.0]},
                 {"a": "m", "b": "V"})


def test_at_holds_the_last_sample_and_refuses_outside_the_trace():
    tr = _tr()
    assert tr.at(0.0, "a") == 1.0 and tr.at(0.15, "a") == 2.0 and tr.at(0.3, "a") == 4.0
    assert tr.at(0.1 * 3, "b") == 5.0  # 0.30000000000000004: within 1 ns of 0.3
    assert tr.at(0.2 - 1e-10) == {"a": 3.0, "b": 5.0}  # within 1 ns: the sample at 0.2
    assert tr.at(0.2 - 1e-8, "a") == 2.0
    for t in (-0.01, 0.31, np.nan):
        with pytest.raises(TraceError):
            tr.at(t)
    with pytest.raises(TraceError, match="empty"):
        Trace([], {}).at(0.0)


def test_slice_and_window_as_a_table_with_units():
    tr = _tr()
    part = tr.slice(0.1, 0.2)
    assert list(part.t) == [0.1, 0.2] and list(part["a"]) == [2.0, 3.0]
    assert part.unit("a") == "m"
    w = tr.window(0.25, 0.1, 0.05)
    assert list(w.t) == [0.2, 0.3] and w.mark == 0.25
    text = str(w).splitlines()
    assert text[0].split() == ["t", "[s]", "a", "[m]", "b", "[V]"]
    assert text[1].startswith(">") and "0.200" in text[1] and text[2].startswith("  0.300")
    assert tr.select(["b"]).names == ["b"]
    assert list(tr.slice(0.1 * 3).t) == [0.3]  # 0.30000000000000004: 1 ns tolerance
    assert list(tr.slice(0.0, 0.1 + 0.2 - 0.3 + 0.1).t) == [0.0, 0.1]


def test_bad_traces_are_refused_with_what_and_where():
    with pytest.raises(TraceError, match=r"strictly increasing; t\[0\] = 0.0 and t\[1\] = 0.0"):
        Trace([0.0, 0.0], {"a": [1, 2]})
    with pytest.raises(TraceError, match="shape"):
        Trace([0.0, 1.0], {"a": [1, 2, 3]})
    with pytest.raises(TraceError, match="not a signal"):
        Trace([0.0], {"a": [1]}, {"b": "m"})
    with pytest.raises(TraceError, match="'s' is not numeric"):
        Trace([0.0], {"s": np.array(["on"])})
    with pytest.raises(TraceError, match="complex"):
        Trace([0.0], {"a": [1j]})
    with pytest.raises(TraceError, match="Did you mean 'gap'"):
        Trace([0.0], {"gap": [1]})["gpa"]


def test_from_results_flattens_arrays_and_keeps_units():
    res = Results(np.array([0.0, 1.0]), {"p": np.array([[1.0, 2.0], [3.0, 4.0]]),
                                         "ok": np.array([True, False])}, {"p": "m"})
    tr = Trace.from_results(res)
    assert tr.names == ["p[0]", "p[1]", "ok"] and list(tr["p[1]"]) == [2.0, 4.0]
    assert tr.unit("p[0]") == "m" and tr.unit("ok") == "" and list(tr["ok"]) == [1.0, 0.0]


def test_recorder_builds_a_trace_frame_by_frame():
    rec = Recorder(units={"x": "m"}, capacity=2)
    for i in range(5):
        rec.append(i * 0.5, {"x": float(i), "y": -i})
    tr = rec.trace()
    assert list(tr.t) == [0, 0.5, 1, 1.5, 2] and list(tr["y"]) == [0, -1, -2, -3, -4]
    assert tr.unit("x") == "m" and tr.unit("y") == ""
    with pytest.raises(TraceError, match="after the last one"):
        rec.append(2.0, {"x": 1, "y": 1})
    with pytest.raises(TraceError, match="has no 'y'"):
        rec.append(3.0, {"x": 1})


def test_margins_are_distances_to_switching_in_the_signal_unit():
    tr = _tr()
    for cond, ok, margin in [
        (sig("a") > 2, [0, 0, 1, 1], [-1, 0, 1, 2]),
        (sig("a") >= 2, [0, 1, 1, 1], [-1, 0, 1, 2]),
        (sig("a") < 2, [1, 0, 0, 0], [1, 0, -1, -2]),
        (sig("a") <= 2, [1, 1, 0, 0], [1, 0, -1, -2]),
        (2 < sig("a"), [0, 0, 1, 1], [-1, 0, 1, 2]),
        (abs(sig("a") - 2.5) < 1, [0, 1, 1, 0], [-0.5, 0.5, 0.5, -0.5]),
        (sig("a") * 2 + 1 > 6, [0, 0, 1, 1], [-3, -1, 1, 3]),
        (-sig("a") >= -3, [1, 1, 1, 0], [2, 1, 0, -1]),
        ((sig("a") > 2) & (sig("a") < 4), [0, 0, 1, 0], [-1, 0, 1, 0]),
        ((sig("a") < 2) | (sig("a") > 3), [1, 0, 0, 1], [1, 0, 0, 1]),
        (~(sig("a") > 2), [1, 1, 0, 0], [1, 0, -1, -2]),
    ]:
        ev = cond.evaluate(tr)
        assert list(ev.ok) == [bool(v) for v in ok], cond
        assert list(ev.margin) == margin, cond


def test_a_nan_sample_holds_under_no_negation_and_units_are_checked():
    tr = Trace([0.0, 1.0], {"a": [np.nan, 1.0], "b": [1.0, 1.0]}, {"a": "m", "b": "s"})
    for cond in (sig("a") > 0, ~(sig("a") > 0), (sig("a") > 0) | (sig("b") > 0)):
        ev = cond.evaluate(tr)
        assert list(ev.ok) == [False, True] or list(ev.ok) == [False, False]
        assert ev.nan[0] and np.isnan(ev.margin[0])
    with pytest.raises(TraceError, match="units differ"):
        (sig("a") + sig("b") > 0).evaluate(tr)
    ev = ((sig("a") > 5) & (sig("b") > 0)).evaluate(tr)
    assert ev.deciding(1) == "a > 5 m" and ev.unit(1) == "m"


def test_conditions_refuse_python_truth_and_equality():
    with pytest.raises(TypeError, match="&, |, ~"):
        bool(sig("a") > 1 and sig("b") > 1)
    with pytest.raises(TypeError, match="no truth value"):
        0 < sig("x") < 5  # noqa: B015 (a chained comparison asks for truth)
    with pytest.raises(TypeError, match="== is not a condition"):
        as_cond(sig("a") == 3)
    with pytest.raises(TypeError, match="expression"):
        as_cond(sig("a") + 1)
