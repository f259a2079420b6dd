"""hil.shadow: the shadow model over a recording and a stream, the residual rules, the
block form and the error paths, on a first-order plant whose "machine" twin gets a fault
at a known time."""

import math

import numpy as np
import pytest

from blocks.lti import FirstOrderLag
from blocks.math import Gain, Sum
from blocks.sources import Constant, Step
from cosim import DiagramBuilder, Simulator
from cosim.errors import PortError, UnitError
from cosim.manipulators import Offset, Scale
from cosim.writers import CsvWriter, read_csv
from hil.shadow import (
    Recording,
    Residual,
    RuleState,
    ShadowDataError,
    ShadowModel,
    ShadowMonitor,
    advance_rule,
)

DT = 1e-3
T_FAULT = 2.0
T_END = 3.0
TAU, K = 0.2, 2.0
PERSIST = 0.02


def lag(name="model", unit="V"):
    """The model: y = K/(tau s + 1) u, exported input 'u', output 'y'."""
    b = DiagramBuilder(name)
    g = b.add(FirstOrderLag("lag", tau_s=TAU, gain=K, unit=unit))
    b.export_input(g.u, "u")
    b.export_output(g.y, "y")
    return b.build()


def machine():
    """The machine: steps of the command u (on the sample grid), an actuator, the plant."""
    b = DiagramBuilder("machine")
    s1 = b.add(Step("s1", 0.5, 1.0, unit="V"))
    s2 = b.add(Step("s2", 1.2, -0.5, unit="V"))
    u = b.add(Sum("u", "++", unit="V"))
    act = b.add(Gain("actuator", 1.0, "V", "V"))
    p = b.add(lag("plant"))
    b.connect(s1.y, u.ins[0])
    b.connect(s2.y, u.ins[1])
    b.connect(u.y, act.u)
    b.connect(act.y, p.input("u"))
    return b.build()


def record(path, manipulators=()):
    w = CsvWriter(path, ["u.y", "plant.y"])
    Simulator(machine(), solver="rk4", dt=DT, record=False, observers=[w],
              manipulators=list(manipulators)).run(T_END)
    return path


@pytest.fixture(scope="module")
def recs(tmp_path_factory):
    d = tmp_path_factory.mktemp("shadow")
    return {"none": record(d / "none.csv"),
            "offset": record(d / "offset.csv", [Offset("plant/lag.y", 0.1, start_s=T_FAULT)]),
            "gain": record(d / "gain.csv", [Scale("actuator.y", 0.8, start_s=T_FAULT)]),
            "drift": record(d / "drift.csv", [Offset("plant/lag.y", 0.02, start_s=T_FAULT)]),
            "dir": d}


def shadow(rule=None, **kw):
    rule = rule or Residual("y", abs_threshold=0.05, persistence_s=PERSIST)
    opts = dict(solver="rk4", dt=DT)
    opts.update(kw)
    return ShadowModel(lag(), {"u.y": "u"}, {"plant.y": rule}, **opts)


# ------------------------------------------------------------------ recorded mode
def test_without_fault_the_residual_is_round_off_and_nothing_is_flagged(recs):
    rep = shadow().replay(recs["none"])
    assert rep.time.size == round(T_END / DT) + 1
    assert np.max(np.abs(rep["plant.y.residual"])) < 1e-12
    assert np.max(np.abs(rep["plant.y.model"])) > 0.9          # the model did move
    assert rep.events == [] and not rep["plant.y.flag"].any()


def test_a_variable_step_shadow_matches_to_its_tolerance(recs):
    rep = shadow(solver="rk45", dt=DT, rtol=1e-8, atol=1e-10).replay(recs["none"])
    err = np.max(np.abs(rep["plant.y.residual"]))
    assert 0 < err < 1e-6


def test_sensor_offset_flag_rises_persistence_after_the_fault(recs, tmp_path):
    out = tmp_path / "res.csv"
    rep = shadow().replay(recs["offset"], out=out)
    t, flag = rep.time, rep["plant.y.flag"]
    assert not flag[t < T_FAULT].any()
    assert np.max(np.abs(rep["plant.y.residual"][t < T_FAULT])) < 1e-12
    (ev,) = rep.events
    assert ev.signal == "plant.y" and ev.detector == "threshold"
    assert abs(ev.onset_s - T_FAULT) <= DT + 1e-12
    assert T_FAULT + PERSIST - 1e-9 <= ev.detection_s <= T_FAULT + PERSIST + DT + 1e-9
    assert ev.peak_residual == pytest.approx(0.1, abs=1e-9)
    assert math.isnan(ev.end_s)                                 # still open at the end
    assert t[np.argmax(flag)] == pytest.approx(ev.detection_s)
    # the residual record on disk: the same columns, complete
    disk = read_csv(out)
    assert disk.diagnostics["status"] == "complete"
    assert disk.units["plant.y.residual"] == "V"
    np.testing.assert_array_equal(disk["plant.y.residual"], rep["plant.y.residual"])
    np.testing.assert_array_equal(disk["plant.y.flag"], flag)
    assert "fault (threshold): onset 2 s" in rep.summary()


def test_actuator_gain_fault_detected_by_the_relative_rule_at_the_analytic_time(recs):
    rule = Residual("y", rel_threshold=0.05, persistence_s=PERSIST)   # scale: model output
    rep = shadow(rule).replay(recs["gain"])
    # after the fault y_model = 1 (u = 0.5, K = 2), y_machine -> 0.8: r = -0.2 (1 - e^{-s/tau})
    s_cross = TAU * math.log(1 / (1 - 0.05 / 0.2))
    onset = T_FAULT + math.ceil(s_cross / DT) * DT
    (ev,) = rep.events
    assert ev.onset_s == pytest.approx(onset, abs=DT + 1e-9)
    assert ev.detection_s == pytest.approx(onset + PERSIST, abs=DT + 1e-9)
    assert ev.peak_residual < -0.19
    assert not rep["plant.y.flag"][rep.time < T_FAULT].any()


def test_cusum_finds_a_small_offset_the_threshold_does_not(recs):
    rule = Residual("y", abs_threshold=0.05, persistence_s=PERSIST, cusum_drift=0.01,
                    cusum_threshold=0.005)
    rep = shadow(rule).replay(recs["drift"])
    (ev,) = rep.events
    assert ev.detector == "cusum"
    # g grows at (0.02 - 0.01) V per s from the fault: crosses 0.005 V s after 0.5 s
    assert ev.detection_s == pytest.approx(T_FAULT + 0.5, abs=2 * DT)
    assert abs(ev.onset_s - T_FAULT) <= DT + 1e-9
    plain = shadow().replay(recs["drift"])
    assert plain.events == []


def test_dataframe_results_and_arrays_give_the_same_residuals(recs):
    res = read_csv(recs["gain"])
    a = shadow().replay(recs["gain"])
    for src in (res, res.to_pandas(), (res.time, res.signals, res.units)):
        b = shadow().replay(src)
        np.testing.assert_array_equal(a["plant.y.residual"], b["plant.y.residual"])


def test_a_sub_range_starts_the_model_at_t_start(recs):
    rep = shadow().replay(recs["none"], t_start=0.0, t_end=1.0)
    assert rep.time[0] == 0.0 and rep.time[-1] == pytest.approx(1.0)


def test_compatible_units_are_converted(recs):
    res = read_csv(recs["offset"])
    mv = Recording(res.time, {"u.y": res["u.y"] * 1e3, "plant.y": res["plant.y"] * 1e3},
                   {"u.y": "mV", "plant.y": "mV"})
    a, b = shadow().replay(recs["offset"]), shadow().replay(mv)
    np.testing.assert_allclose(b["plant.y.residual"], a["plant.y.residual"], atol=1e-12)
    assert b.events[0].detection_s == a.events[0].detection_s


# ------------------------------------------------------------------ streamed mode
def test_streamed_steps_give_the_recorded_residuals(recs, tmp_path):
    rec = Recording.load(recs["offset"])
    rule = Residual("y", abs_threshold=0.05, persistence_s=PERSIST, filter_tau_s=0.01,
                    cusum_drift=0.01, cusum_threshold=0.5)
    sh = shadow(rule)
    offline = sh.replay(rec)
    live = sh.stream(out=tmp_path / "live.csv")
    flags = [live.step(t, {"u.y": u}, {"plant.y": y})["plant.y"]
             for t, u, y in zip(rec.t, rec.signals["u.y"], rec.signals["plant.y"])]
    online = live.finish()
    for q in ("model", "residual", "relative", "cusum", "flag"):
        np.testing.assert_allclose(online[f"plant.y.{q}"], offline[f"plant.y.{q}"],
                                   rtol=0, atol=1e-12)
    assert np.array_equal(np.array(flags, float), offline["plant.y.flag"])
    assert [(e.onset_s, e.detection_s) for e in online.events] == \
        [(e.onset_s, e.detection_s) for e in offline.events]
    assert read_csv(tmp_path / "live.csv").diagnostics["status"] == "complete"


def test_stream_refuses_nan_unknown_names_and_time_going_back():
    live = shadow().stream()
    live.step(0.0, {"u.y": 0.0}, {"plant.y": 0.0})
    with pytest.raises(ShadowDataError, match=r"'plant.y' is nan at t = 0.001 s"):
        live.step(0.001, {"u.y": 0.0}, {"plant.y": float("nan")})
    with pytest.raises(PortError, match="unknown input signal.*'u'.*available: u.y"):
        live.step(0.002, {"u.y": 0.0, "u": 1.0}, {"plant.y": 0.0})
    with pytest.raises(PortError, match="measured signal 'plant.y' missing"):
        live.step(0.002, {"u.y": 0.0}, {})
    live.step(0.002, {"u.y": 0.0}, {"plant.y": 0.0})
    with pytest.raises(ShadowDataError, match="not after the previous frame"):
        live.step(0.002, {"u.y": 0.0}, {"plant.y": 0.0})


# ------------------------------------------------------------------ error paths
def test_unknown_names_list_the_available_ones(recs):
    with pytest.raises(PortError, match=r"no input signal 'u'; available: u.y, plant.y"):
        ShadowModel(lag(), {"u": "u"}, {"plant.y": "y"}).replay(recs["none"])
    with pytest.raises(PortError, match=r"no measured signal 'plant.z'.*Did you mean 'plant.y'"):
        ShadowModel(lag(), {"u.y": "u"}, {"plant.z": "y"}, solver="rk4",
                    dt=DT).replay(recs["none"])
    with pytest.raises(PortError, match=r"no exported input 'v'.*available: u"):
        ShadowModel(lag(), {"u.y": "v"}, {"plant.y": "y"})
    with pytest.raises(PortError, match=r"no output 'yy'.*available: y"):
        ShadowModel(lag(), {"u.y": "u"}, {"plant.y": "yy"})
    with pytest.raises(PortError, match=r"inputs \['u'\] are not driven"):
        ShadowModel(lag(), {}, {"plant.y": "y"})
    with pytest.raises(PortError, match=r"scale 'q' of 'plant.y' is not a machine signal"):
        ShadowModel(lag(), {"u.y": "u"}, {"plant.y": Residual("y", rel_threshold=0.1,
                                                             scale="q")})


def test_mismatched_units_are_refused(recs):
    res = read_csv(recs["none"])
    wrong = Recording(res.time, res.signals, {"u.y": "V", "plant.y": "m"})
    with pytest.raises(UnitError, match=r"'plant.y' \[m\].*\[V\]"):
        shadow().replay(wrong)
    with pytest.raises(UnitError, match=r"'u.y' \[A\] -> model input 'u'"):
        ShadowModel(lag(), {"u.y": "u"}, {"plant.y": "y"}, units={"u.y": "A"}).stream()


def test_nan_in_the_recording_is_reported_with_signal_and_time(recs):
    res = read_csv(recs["none"])
    y = res["plant.y"].copy()
    y[1500] = np.nan
    bad = Recording(res.time, {"u.y": res["u.y"], "plant.y": y}, res.units)
    with pytest.raises(ShadowDataError, match=r"'plant.y' is nan at t = 1.5 s"):
        shadow().replay(bad)
    shadow().replay(bad, t_end=1.2)                     # outside the range: fine


def test_a_recording_that_does_not_cover_the_range_is_refused(recs):
    with pytest.raises(ShadowDataError, match=r"covers 0..3 s, the requested range is 0..4 s"):
        shadow().replay(recs["none"], t_end=4.0)
    with pytest.raises(ShadowDataError, match="covers"):
        shadow().replay(recs["none"], t_start=-1.0)


def test_unsorted_times_are_refused():
    with pytest.raises(ShadowDataError, match="not strictly increasing at sample 2"):
        Recording([0.0, 0.1, 0.1], {"a": [1, 2, 3]})


# ------------------------------------------------------------------ the rule itself
def test_rule_filter_persistence_and_latch():
    rule = Residual("y", abs_threshold=0.5, persistence_s=0.2, filter_tau_s=0.1)
    st, t = RuleState(), 0.0
    st, _ = advance_rule(rule, st, 0.0, 0.0, 1.0)
    st, _ = advance_rule(rule, st, 0.1, 1.0, 1.0)       # held-step filter: 1 - e^-1
    assert st.rf == pytest.approx(1 - math.exp(-1))
    assert st.since == 0.1 and not st.flag
    for t in (0.2, 0.3):
        st, _ = advance_rule(rule, st, t, 1.0, 1.0)
    assert st.flag and st.onset == 0.1
    st, _ = advance_rule(rule, st, 10.0, 0.0, 1.0)
    assert not st.flag                                  # not latched: cleared
    latched = Residual("y", abs_threshold=0.5, latch=True)
    s2, _ = advance_rule(latched, RuleState(), 0.0, 1.0, 1.0)
    s2, _ = advance_rule(latched, s2, 1.0, 0.0, 1.0)
    assert s2.flag


def test_rule_parameters_are_validated():
    with pytest.raises(ValueError, match="persistence_s must be finite"):
        Residual("y", persistence_s=-1)
    with pytest.raises(ValueError, match="both cusum_drift and cusum_threshold"):
        Residual("y", cusum_drift=0.1)


# ------------------------------------------------------------------ block form
def test_monitor_block_in_one_diagram_flags_after_persistence():
    b = DiagramBuilder("hil")
    u = b.add(Constant("u", 0.5, unit="V"))
    plant = b.add(lag("plant"))          # stands for a bridge block's measurement
    model = b.add(lag("model"))
    mon = b.add(ShadowMonitor("mon", {"y": Residual("y", abs_threshold=0.05,
                                                    persistence_s=PERSIST)},
                              period_s=DT, units={"y": "V"}))
    b.connect(u.y, plant.input("u"))
    b.connect(u.y, model.input("u"))
    b.connect(plant.output("y"), mon.input("meas_y"))
    b.connect(model.output("y"), mon.input("model_y"))
    res = Simulator(b.build(), solver="rk4", dt=DT,
                    manipulators=[Offset("plant/lag.y", 0.1, start_s=T_FAULT)],
                    record=["mon.flag_y", "mon.residual_y", "mon.any_fault"]).run(T_END)
    t, flag = res.time, res["mon.flag_y"]
    assert not flag[t < T_FAULT + PERSIST - 1e-9].any()
    assert t[np.argmax(flag > 0)] == pytest.approx(T_FAULT + PERSIST, abs=1e-9)
    assert np.max(np.abs(res["mon.residual_y"][t < T_FAULT])) < 1e-12
    assert res["mon.any_fault"][-1] == 1.0


def test_stream_driven_from_the_real_time_runners_frames():
    """The live form: a machine paced by RealTimeRunner (virtual clock), the shadow stepped
    from ``on_frame`` with the machine's signals of that frame."""
    from hil.runner import RealTimeRunner, VirtualClock
    d = machine()
    sim = Simulator(d, solver="rk4", dt=DT, record=["u.y", "plant.y"],
                    manipulators=[Offset("plant/lag.y", 0.1, start_s=T_FAULT)])
    u, y = d.find("u.y"), d.find("plant.y")
    live = shadow().stream()

    def on_frame(runner, k):
        ctx = runner.sim.ctx
        live.step(ctx.time, {"u.y": ctx.output(u)}, {"plant.y": ctx.output(y)})

    RealTimeRunner(sim, 2 * DT, clock=VirtualClock(), on_frame=on_frame).run(T_END)
    rep = live.finish()
    assert np.max(np.abs(rep["plant.y.residual"][rep.time < T_FAULT])) < 1e-12
    (ev,) = rep.events
    assert T_FAULT <= ev.onset_s <= T_FAULT + 2 * DT + 1e-9
    assert ev.detection_s == pytest.approx(ev.onset_s + PERSIST, abs=1e-9)
