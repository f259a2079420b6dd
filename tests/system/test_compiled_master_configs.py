"""Issue 34: the compiled macro-step loop in every configuration of FMUs it runs, against the
Python loop as the oracle.

Corpus: the LIM two-mass oscillator (``bench/lim.py``) as FMUs of several kinds (generated-C
FMI 2 with input derivatives, generated-C FMI 3 with intermediate update, FMI 2 + 3 mixed, the
hand-written C FMI 2 FMUs), at rates (1, 1), (1, 2), (3, 1) and
(2, 3), Jacobi and Gauss-Seidel, extrapolation orders 0-3; FMI 3 FMUs with events (early
return, Event Mode, time and state events).  Each compiled run must equal the Python loop's:
bit for bit where the operations are the same (orders 0-1), to 1e-12 relative where the
polynomial's coefficients come from divided differences (orders 2-3); the same number of steps
per subsystem, the same events, the same state of the master after the run.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bench.lim import CONNECTIONS, m1_diagram, m2_diagram
from cosim import DiagramBuilder, GaussSeidel, Jacobi, MasterScheduler
from cosim.errors import CosimWarning

pytest.importorskip("fmpy")

import fmus.driver_cs as driver_cs  # noqa: E402
import fmus.fmi3_update as fmi3_update  # noqa: E402
from fmus import load_fmu  # noqa: E402
from fmus.export import export_fmu  # noqa: E402
from tests.fmu_builders import build_c_fmu  # noqa: E402

H = 1e-3
T_END = 0.12  # a whole number of macro steps times every rate product below (6 H)


@pytest.fixture(scope="module")
def lim(tmp_path_factory):
    d = tmp_path_factory.mktemp("lim_corpus")
    out = {"c1": build_c_fmu("lim_m1", d), "c2": build_c_fmu("lim_m2", d)}
    for ver in ("2.0", "3.0"):
        for i, diagram in ((1, m1_diagram), (2, m2_diagram)):
            out[(ver, i)] = export_fmu(diagram(), d / f"m{i}_{ver}.fmu", ver, "cs",
                                       step=H / 10, model_name=f"m{i}")
    return out


#: (m1's FMU, m2's FMU) of each kind
KINDS = {"fmi2": (("2.0", 1), ("2.0", 2)), "fmi3": (("3.0", 1), ("3.0", 2)),
         "mixed": (("2.0", 1), ("3.0", 2)), "mixed_reversed": (("3.0", 1), ("2.0", 2)),
         "c_fmi2": ("c1", "c2")}
COUPLINGS = {"jacobi": Jacobi, "gauss_seidel": lambda: GaussSeidel(["m2", "m1"])}


def _subs(files, kind, rates):
    a, b = KINDS[kind]
    return [load_fmu(files[a], name="m1", rate=rates[0]),
            load_fmu(files[b], name="m2", rate=rates[1])]


def _run(subs, connections, coupling, order, compiled, t_end=T_END):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CosimWarning)  # orders lowered for held inputs
        master = MasterScheduler(subs, connections, H, coupling=coupling,
                                 extrapolation=order, compiled=compiled)
        res = master.run(t_end)
    return res, master


def _state(master):
    """What the master and its subsystems hold after a run (the Python loop's oracle)."""
    return {"t": master.t, "pending": {n: (t, dict(o)) for n, (t, o) in master.pending.items()},
            "steps": dict(master.counters.steps),
            "subs": {s.name: (s._t, s.steps, list(s.events), s.terminated)
                     for s in master.subsystems},
            # the samples any extrapolation reads (the C loop keeps 4, orders 0-3)
            "hist": {k: (list(h.t)[-4:], [float(v) for v in h.v][-4:])
                     for k, h in master.histories.items()}}


def _same_state(c, py, exact):
    if exact:
        assert c == py
        return
    # orders 2-3: the same instants, steps, events and pending times; values to round-off
    assert {k: v for k, v in c.items() if k not in ("hist", "pending")} == \
        {k: v for k, v in py.items() if k not in ("hist", "pending")}
    assert {n: t for n, (t, _) in c["pending"].items()} == \
        {n: t for n, (t, _) in py["pending"].items()}
    for n, (_, outs) in py["pending"].items():
        for o, v in outs.items():
            assert c["pending"][n][1][o] == pytest.approx(v, rel=1e-12, abs=1e-12)
    for k, (ts, vs) in py["hist"].items():
        assert c["hist"][k][0] == ts
        np.testing.assert_allclose(c["hist"][k][1], vs, rtol=1e-12, atol=1e-12)


def _compare(py, c, exact):
    np.testing.assert_array_equal(py.time, c.time)
    for k in py.signals:
        a, b = np.asarray(py[k], dtype=float), np.asarray(c[k], dtype=float)
        assert py[k].dtype == c[k].dtype, k
        diff = np.max(np.abs(a - b)) / (1.0 + np.max(np.abs(a)))
        assert diff == 0.0 if exact else diff < 1e-12, (k, diff)


@pytest.mark.parametrize("order", [0, 1, 2, 3])
@pytest.mark.parametrize("coupling", list(COUPLINGS))
@pytest.mark.parametrize("rates", [(1, 1), (1, 2), (3, 1), (2, 3)])
@pytest.mark.parametrize("kind", list(KINDS))
def test_compiled_loop_equals_the_python_loop_for_every_kind_rate_and_order(
        lim, kind, rates, coupling, order):
    files = lim
    runs = {}
    for compiled in (False, True):
        res, master = _run(_subs(files, kind, rates), CONNECTIONS, COUPLINGS[coupling](),
                           order, compiled)
        runs[compiled] = res, _state(master)
    (py, s_py), (c, s_c) = runs[False], runs[True]
    assert c.diagnostics["compiled"] is True, c.diagnostics["compiled"]
    _compare(py, c, exact=order <= 1)
    _same_state(s_c, s_py, exact=order <= 1)


def _lag_fmu(path, version):
    from blocks import FirstOrderLag
    b = DiagramBuilder("lag")
    lag = b.add(FirstOrderLag("lag", tau_s=0.05))
    b.export_input(lag.u, "u")
    b.export_output(lag.y, "y")
    return export_fmu(b.build(), path, version, "cs", step=H / 10, model_name="lag")


def _sine_fmu(path, version):
    from blocks.sources import Sine
    b = DiagramBuilder("src")
    s = b.add(Sine("s", 1.0, 3.0, unit="N"))
    b.export_output(s.y, "F")
    return export_fmu(b.build(), path, version, "cs", step=H / 10, model_name="src")


@pytest.mark.parametrize("features", [True, False])
@pytest.mark.parametrize("version", ["2.0", "3.0"])
def test_fmi3_events_early_return_and_event_mode_in_the_compiled_loop(fmu_files, tmp_path,
                                                                      features, version):
    """BouncingBall3 (state events) feeding a lag FMU, and a sine FMU feeding Oscillator3
    (intermediate update, a time event at 0.5 s): the steps that return early or need Event
    Mode are finished by the Python loop's own code from inside the C loop; the events, the
    results and the state equal the Python loop's."""
    lag, src = _lag_fmu(tmp_path / "lag.fmu", version), _sine_fmu(tmp_path / "src.fmu", version)
    for order in (0, 1):
        runs = {}
        for compiled in (False, True):
            ball = load_fmu(fmu_files["BouncingBall3"], name="ball", interface="cs",
                            early_return=features,
                            event_mode=features)
            osc = load_fmu(fmu_files["Oscillator3"], name="osc", interface="cs",
                           early_return=features,
                           event_mode=features)
            subs = [ball, load_fmu(lag, name="lag"), load_fmu(src, name="src"), osc]
            res, master = _run(subs, [("ball.h", "lag.u"), ("src.F", "osc.F")], Jacobi(),
                               order, compiled, t_end=1.2)
            runs[compiled] = res, _state(master), (list(ball.events), list(osc.events))
        (py, s_py, ev_py), (c, s_c, ev_c) = runs[False], runs[True]
        assert c.diagnostics["compiled"] is True
        _compare(py, c, exact=True)
        assert s_c == s_py and ev_c == ev_py
        if features:
            assert len(ev_c[0]) == 2 and ev_c[1] == [0.5]  # bounces at 0.45 s and 1.08 s
        else:
            assert ev_c == ([], [])


def test_fmi3_intermediate_update_runs_in_c_and_equals_the_python_callback(lim, monkeypatch):
    """The generated FMI 3 FMUs ask for their inputs at every Runge-Kutta stage: the callback
    is C (no call into Python), and it gives the values the Python callback gives."""
    calls = []
    original = driver_cs.CoSimulationDriver._intermediate_update

    def counting(self, *args):
        calls.append(1)
        return original(self, *args)
    monkeypatch.setattr(driver_cs.CoSimulationDriver, "_intermediate_update", counting)
    runs = {}
    for c_callback in (True, False):
        if not c_callback:  # as without a C compiler: the Python callback
            monkeypatch.setitem(fmi3_update._lib, fmi3_update.os.environ.get("CC"), "no cc")
        subs = _subs(lim, "fmi3", (1, 1))
        calls.clear()
        res, master = _run(subs, CONNECTIONS, Jacobi(), 1, compiled=False)
        assert all((s.inst.drv.update is not None) == c_callback for s in subs)
        runs[c_callback] = res, len(calls)
        if not c_callback:  # and the compiled loop says why it does not run
            _, m = _run(_subs(lim, "fmi3", (1, 1)), CONNECTIONS, Jacobi(), 1, compiled=None)
            assert "intermediate update runs in Python" in m.loop_ran
    (c_res, c_calls), (py_res, py_calls) = runs[True], runs[False]
    assert c_calls == 0 and py_calls > 4 * 10 * 120  # 4 stages x 10 RK steps x 120 steps
    _compare(py_res, c_res, exact=True)


def test_python_loop_sets_the_inputs_again_after_intermediate_updates(lim):
    """Found by the compiled loop as oracle: after a step whose intermediate updates moved an
    FMI 3 FMU's inputs along the polynomial, settling its feedthrough output with the newest
    published inputs must set them again, even when they equal what was set before the step
    (a slower source has published nothing new).  m2 at rate 2 feeds m1's feedthrough fc."""
    res, master = _run(_subs(lim, "fmi3", (1, 2)), CONNECTIONS, Jacobi(), 1, compiled=False)
    ref, _ = _run(_subs(lim, "fmi3", (1, 2)), CONNECTIONS, Jacobi(), 1, compiled=True)
    assert np.max(np.abs(res["m1.fc"] - ref["m1.fc"])) == 0.0  # it was 11.8 N


def test_an_error_in_the_python_side_of_an_fmi3_step_propagates_from_the_compiled_loop(
        fmu_files, tmp_path):
    """The exception raised while finishing a step (here at Oscillator3's time event at 0.5 s)
    crosses the C loop: the run raises it, with the results up to the step before."""
    src = _sine_fmu(tmp_path / "src.fmu", "3.0")
    osc = load_fmu(fmu_files["Oscillator3"], name="osc", interface="cs")
    original = osc.finish_step

    def failing(res, *args):
        if res[1]:  # an event
            raise RuntimeError("the event handler failed")
        return original(res, *args)
    osc.finish_step = failing
    master = MasterScheduler([load_fmu(src, name="src"), osc], [("src.F", "osc.F")], H,
                             compiled=True)
    with pytest.raises(RuntimeError, match="the event handler failed") as err:
        master.run(1.0)
    assert err.value.results.time[-1] == pytest.approx(0.499)
    assert master.t == 499_000_000


def _stepped(subs, compiled, every, plan, change=None):
    """A stepper over ``subs``: ``plan`` a list of ("step", n) / ("advance", n macro steps);
    ``change``: (after this many macro steps, subsystem, parameter, value)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CosimWarning)
        master = MasterScheduler(subs, CONNECTIONS, H, coupling=Jacobi(), extrapolation=1,
                                 compiled=compiled)
        st = master.stepper(record_every=every)
    seen = []
    for how, n in plan:
        if change and st.steps == change[0]:
            master.by_name[change[1]].set_parameter(change[2], change[3])
        if how == "step":
            for _ in range(n):
                st.step()
                seen.append(st.outputs())
        else:
            st.advance_to_ticks(st.t + n * master.H)
            seen.append(st.outputs())
    return st.results(), master, seen


PLAN = [("step", 5), ("advance", 12), ("step", 7), ("advance", 24)]


@pytest.mark.parametrize("every", [1, 3])
@pytest.mark.parametrize("kind, rates", [("fmi2", (1, 1)), ("fmi3", (1, 2)),
                                         ("mixed", (3, 1)), ("c_fmi2", (2, 3))])
def test_a_compiled_stepper_equals_the_python_stepper_and_run(lim, kind, rates, every):
    """The stepper (the real-time master's interface) runs each step() and advance_to_ticks()
    in one call into C: the same kept rows, outputs(), step counts and final state as the
    Python stepper, bit for bit, and the rows of run()."""
    runs = {c: _stepped(_subs(lim, kind, rates), c, every, PLAN) for c in (False, None)}
    (py, m_py, seen_py), (c, m_c, seen_c) = runs[False], runs[None]
    assert c.diagnostics["compiled"] is True and py.diagnostics["compiled"] is not True
    _compare(py, c, exact=True)
    assert seen_c == seen_py
    assert [{k: type(v) for k, v in o.items()} for o in seen_c] == \
        [{k: type(v) for k, v in o.items()} for o in seen_py]
    assert c.diagnostics["subsystem_steps"] == py.diagnostics["subsystem_steps"]
    _same_state(_state(m_c), _state(m_py), exact=True)
    ref, _ = _run(_subs(lim, kind, rates), CONNECTIONS, Jacobi(), 1, compiled=None,
                  t_end=48 * H)
    np.testing.assert_array_equal(c.time, ref.time[::every])
    for k in ref.signals:
        np.testing.assert_array_equal(c[k], ref[k][::every])


def test_a_parameter_change_hands_a_compiled_stepper_to_the_python_loop(lim, tmp_path):
    """A change pending on an FMU is applied by the Python loop: the stepper writes the C
    state back and goes on in Python from there, and says so; the same rows as a Python
    stepper making the same change."""
    from tests.fmu_builders import SOURCES
    xml = (SOURCES / "lim_m2.xml").read_text().replace(
        'name="c2" valueReference="7" causality="parameter" variability="fixed"',
        'name="c2" valueReference="7" causality="parameter" variability="tunable"')
    tunable = build_c_fmu("lim_m2", tmp_path, xml=xml, name="tunable_m2")
    files = {**lim, "tunable": tunable}
    KINDS["c_tunable"] = ("c1", "tunable")
    change = (17, "m2", "c2", 5.0)
    try:
        runs = {c: _stepped(_subs(files, "c_tunable", (1, 1)), c, 1, PLAN, change)
                for c in (False, None)}
        plain = _stepped(_subs(files, "c_tunable", (1, 1)), False, 1, PLAN)[0]
    finally:
        del KINDS["c_tunable"]
    (py, m_py, seen_py), (c, m_c, seen_c) = runs[False], runs[None]
    said = c.diagnostics["compiled"]
    assert said.startswith("the compiled loop until t = 0.017 s, then") and \
        "parameter changes pending" in said, said
    _compare(py, c, exact=True)
    assert seen_c == seen_py
    _same_state(_state(m_c), _state(m_py), exact=True)
    assert not np.array_equal(py["m2.x2"], plain["m2.x2"])  # the change acts


def test_a_compiled_stepper_ends_where_a_subsystem_terminates(lim, tmp_path):
    from tests.fmu_builders import SOURCES
    xml = (SOURCES / "lim_m2.xml").read_text().replace("LimM2", "LimM2Stop").replace(
        "0a002}", "0a003}")
    stop = build_c_fmu("lim_m2_stop", tmp_path, xml=xml)
    ends = {}
    for compiled in (False, None):
        subs = [load_fmu(lim["c1"], name="m1"), load_fmu(stop, name="m2")]
        master = MasterScheduler(subs, CONNECTIONS, H, extrapolation=1, compiled=compiled)
        st = master.stepper()
        n = 0
        while st.step():
            n += 1
        res = st.results()
        ends[compiled] = n, res.time[-1], master.terminated["by"], res["m2.x2"]
    # LimM2Stop discards the step from 0.25 s with fmi2Terminated: 250 steps go on, the
    # 251st ends the run at 0.251 s
    assert ends[None][:3] == ends[False][:3] == (250, 0.251, "m2")
    np.testing.assert_array_equal(ends[None][3], ends[False][3])


def test_an_early_return_inside_a_step_goes_on_with_the_inputs_of_that_time(fmu_files,
                                                                            tmp_path):
    """Oscillator3's time event moved inside a macro step (0.5005 s): the FMU returns early
    there, and the step goes on from that time with its intermediate inputs set to the
    polynomial's values there; the compiled loop (Horner, fmus.fmi3_update) equals the Python
    loop to round-off, with the same events."""
    src = _sine_fmu(tmp_path / "src.fmu", "3.0")
    runs = {}
    for compiled in (False, True):
        osc = load_fmu(fmu_files["Oscillator3"], name="osc", interface="cs",
                       parameters={"t_step": 0.5005})
        res, master = _run([load_fmu(src, name="src"), osc], [("src.F", "osc.F")], Jacobi(),
                           1, compiled, t_end=1.0)
        runs[compiled] = res, list(osc.events)
    (py, ev_py), (c, ev_c) = runs[False], runs[True]
    assert c.diagnostics["compiled"] is True
    assert ev_c == ev_py and len(ev_c) == 1 and ev_c[0] == pytest.approx(0.5005, abs=1e-12)
    _compare(py, c, exact=False)
