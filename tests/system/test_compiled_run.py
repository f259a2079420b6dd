"""The compiled Simulator (``Simulator(compiled=None|True|False)``, :mod:`cosim.compiled_run`)
against the Python loop, its oracle.

The class is "any diagram of core blocks": a generated corpus (:mod:`tests.corpus.core_diagrams`:
sources with off-grid breakpoints, math, nonlinear blocks, tables, continuous blocks, PID,
discrete blocks at several rates and offsets, feedback loops) run both ways with every
fixed-step solver and with decimation; the recorded times must be identical and every value
within 1e-12 of the signal's range (fused linear groups: the C and NumPy sum in other orders,
stage by stage or the exact propagator's products).  Then the hand-over (the context after C
equals the Python loop's, interleaved advances, many short advances as real-time frames),
what stays in Python and why, the compiler and cache fail-safes, parameters, failures and
Ctrl-C.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
import warnings

import numpy as np
import pytest

import blocks as bl
from cosim import DiagramBuilder, FunctionBlock, Simulator
from cosim.errors import BuildError, CosimWarning, StepError
from tests.corpus.core_diagrams import core_diagram

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

SOLVERS = ["rk4", "heun", "midpoint", "euler"]


def _compare(py, c, tol=1e-12):
    assert np.array_equal(py.time, c.time)
    assert set(py.signals) == set(c.signals)
    for k, a in py.signals.items():
        a, b = np.asarray(a, dtype=float), np.asarray(c[k], dtype=float)
        assert a.shape == b.shape, k
        assert c[k].dtype == py[k].dtype, k
        scale = max(float(np.max(np.abs(a))) if a.size else 0.0, 1e-300)
        assert np.max(np.abs(a - b), initial=0.0) <= tol * scale, k


def _both(make, t_end, **kw):
    py = Simulator(make(), compiled=False, **kw).run(t_end)
    sim = Simulator(make(), compiled=True, **kw)
    c = sim.run(t_end)
    return py, c, sim


@pytest.mark.parametrize("seed", range(48))
def test_generated_core_diagrams_compiled_equal_the_python_loop(seed):
    solver = SOLVERS[seed % 4]
    dt = [1e-3, 1e-3, 5e-4][seed % 3]
    every = [1, 3, 1, 4][seed % 4]
    py, c, sim = _both(lambda: core_diagram(seed), 0.5, solver=solver, dt=dt,
                       record_every=every)
    assert c.diagnostics["compiled"] is True
    assert py.diagnostics["compiled"] == "compiled=False"
    _compare(py, c)
    for key in ("steps", "partial_steps"):
        assert c.diagnostics[key] == py.diagnostics[key], key
    # what ran: the exact linear map where the Python loop steps by it (whole steps; the
    # partial ones by stages, counted alike: cosim.codegen.propagate_c), else the stages
    assert c.diagnostics["propagator"] is py.diagnostics["propagator"]
    assert c.diagnostics["propagator"] is sim.route.run.propagates
    if py.diagnostics["propagator"]:
        assert c.diagnostics["rhs_evals"] == py.diagnostics["rhs_evals"]
    else:
        stages = {"rk4": 4, "heun": 2, "midpoint": 2, "euler": 1}[solver]
        assert c.diagnostics["rhs_evals"] >= stages * c.diagnostics["steps"]
    # the context is left as the Python loop leaves it (states to 1e-12 of the state
    # vector's scale: a fused group's small state carries the others' rounding)
    ref = Simulator(core_diagram(seed), compiled=False, solver=solver, dt=dt)
    ref.run(0.5)
    assert sim.ctx.ticks == ref.ctx.ticks and sim.ctx.time == ref.ctx.time
    scale = 1e-12 * max(1.0, float(np.max(np.abs(ref.ctx.xc), initial=0.0)))
    np.testing.assert_allclose(sim.ctx.xc, ref.ctx.xc, rtol=0, atol=scale)
    for h, i in ref.plan.dstate_index.items():
        a = np.asarray(ref.ctx.xd[i], dtype=float)
        np.testing.assert_allclose(np.asarray(sim.ctx.xd[i], dtype=float), a, rtol=0,
                                   atol=1e-12 * max(1.0, float(np.max(np.abs(a)))),
                                   err_msg=str(h))
    for k in ref.plan.output_slot.values():
        a, b = ref.ctx.signals[k], sim.ctx.signals[k]
        if a is not None:
            assert type(a) is type(b)
            np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12)


def _msd_pid():
    from bench.ours_core import _msd_pid_diagram
    return _msd_pid_diagram()[0]


def test_msd_pid_runs_in_c_and_equals_the_python_loop():
    from bench import models as m
    py, c, _ = _both(_msd_pid, m.T_END_A, solver="rk4", dt=m.DT)
    assert len(py.time) == 10001
    assert c.diagnostics["compiled"] is True
    _compare(py, c, 1e-13)


def test_compiled_none_compiles_when_the_run_s_work_pays_for_it():
    """``compiled=None``: a short run stays in the Python loop (compiling would cost more than
    it saves), saying so; a long one runs in C; many short advances (real-time frames) move
    to C once their work adds up.  Decided on the work, not the clock: the same on a busy
    machine."""
    from cosim.compiled_route import CompiledRoute
    blocks = len(_msd_pid().compile().blocks)
    short = Simulator(_msd_pid(), dt=1e-3).run(0.5)
    assert short.diagnostics["compiled"].startswith("a short run so far")
    steps = CompiledRoute.threshold // blocks + 1
    long = Simulator(_msd_pid(), dt=1e-3).run(steps * 1e-3)
    assert long.diagnostics["compiled"] is True
    sim = Simulator(_msd_pid(), dt=1e-3)
    sim.initialize()
    frames = 0
    while sim.route.run is None:
        frames += 1
        sim.advance_to(frames * 1e-2)
    assert frames == -(-CompiledRoute.threshold // (11 * blocks))  # 11 grid points a frame
    sim.advance_to((frames + 1) * 1e-2)
    res = sim.finish()
    assert res.diagnostics["compiled"].startswith("partly: a short run so far")
    ref = Simulator(_msd_pid(), dt=1e-3, compiled=False)
    for k in range(1, frames + 2):
        ref.advance_to(k * 1e-2)
    _compare(ref.finish(), res, 1e-13)


@pytest.mark.parametrize("seed", [1, 4, 7, 10, 13, 16])
def test_interleaved_c_and_python_advances_equal_the_python_loop(seed):
    """C, then the Python loop, then C again, in one run (the stops at an off-grid time
    too): each side goes on from the state the other left (time, continuous and discrete
    states, held outputs, the decimation), as the Python loop making the same advances."""
    kw = dict(solver=SOLVERS[seed % 4], dt=1e-3, record_every=[1, 3][seed % 2])
    runs = []
    for compiled in (False, True):
        sim = Simulator(core_diagram(seed), compiled=compiled, **kw)
        sim.advance_to(0.1234)
        if compiled:
            sim.route.compiled = False
        sim.advance_to(0.3)
        sim.route.compiled = compiled
        sim.advance_to(0.5)
        runs.append(sim.finish())
    assert runs[1].diagnostics["compiled"] == "partly: compiled=False"
    _compare(*runs)


def test_many_short_advances_as_real_time_frames_equal_one_run():
    """One advance per 1 ms frame (what RealTimeRunner does): the same results as one run."""
    seed = 5
    ref = Simulator(core_diagram(seed), compiled=False, solver="rk4", dt=1e-3).run(0.2)
    sim = Simulator(core_diagram(seed), solver="rk4", dt=1e-3, compiled=True)
    sim.initialize()
    for k in range(1, 201):
        sim.advance_to(k * 1e-3)
    res = sim.finish()
    assert res.diagnostics["compiled"] is True
    _compare(ref, res)


def test_a_real_time_runner_builds_the_c_before_its_first_frame():
    """RealTimeRunner announces its end (``route.expect``): a run whose frames add up to the
    threshold is built before the clock starts, and every frame runs in C."""
    from cosim.compiled_route import CompiledRoute
    from hil.runner import RealTimeRunner, VirtualClock
    sim = Simulator(core_diagram(5), solver="rk4", dt=1e-3)
    blocks = len(sim.plan.blocks)
    t_end = (CompiledRoute.threshold // blocks + 10) * 1e-3
    runner = RealTimeRunner(sim, 1e-3, clock=VirtualClock())
    res = runner.run(t_end)
    assert res.diagnostics["compiled"] is True
    ref = Simulator(core_diagram(5), solver="rk4", dt=1e-3, compiled=False)
    for k in range(1, int(round(t_end * 1e3)) + 1):
        ref.advance_to(k * 1e-3)
    _compare(ref.finish(), res)


def test_recorded_arrays_integers_and_booleans_keep_their_type():
    """Arrays (a one-element one too), integers and Booleans recorded and handed over."""
    def make():
        b = DiagramBuilder("types")
        s = b.add(bl.Sine("s", 1.0, 2.0))
        g = b.add(bl.Gain("g", np.array([1.0, -2.0, 0.5]), shape=(3,)))
        i = b.add(bl.Integrator("i", np.zeros(3), shape=(3,)))
        mux = b.add(bl.Mux("mux", 3))
        for k in range(3):
            b.connect(s.y, mux.inputs[f"u{k}"])
        b.connect(mux.y, g.u)
        b.connect(g.y, i.u)
        b.add(bl.Constant("n", 3, dtype=int))
        one = b.add(bl.Gain("one", np.array([2.0]), shape=(1,)))  # a one-element array
        b.add(bl.Mux("m1", 1))
        b.connect(s.y, "m1.u0")
        b.connect("m1.y", one.u)
        r = b.add(bl.Relay("r", 0.5, -0.5, period_s=0.01))
        b.connect(s.y, r.u)
        return b.build()
    py, c, _ = _both(make, 0.3, solver="rk4", dt=1e-3)
    assert c.diagnostics["compiled"] is True
    _compare(py, c)
    assert c["i.y"].shape == (len(c.time), 3)


# ----------------------------------------------------------------- what stays in Python
def _with_function_block():
    b = DiagramBuilder("fn")
    s = b.add(bl.Sine("s", 1.0, 1.0))
    f = b.add(FunctionBlock("f", lambda u: 2.0 * u * len(str(u))))  # len: not translated
    b.connect(s.y, f.inputs["u"])
    return b.build()


def test_a_block_without_a_c_form_is_named_and_called_back_only_where_it_pays():
    """A block without a C form is called back in Python from the C
    (tests/system/test_compiled_callbacks.py); with ``compiled=None`` only where the C takes
    over enough other work, which one sine does not: the reason names the block and why it
    has no C form."""
    res = Simulator(_with_function_block(), dt=1e-3).run(0.01)
    why = res.diagnostics["compiled"]
    assert why.startswith("1 of its 2 blocks would be called back in Python from the C (1 "
                          "block(s) without a C form: 'f' (FunctionBlock): calls 'len' (line"), why
    c = Simulator(_with_function_block(), dt=1e-3, compiled=True).run(0.01)
    assert c.diagnostics["compiled"] is True
    assert c.diagnostics["called_back"] == ["'f' (FunctionBlock)"]
    assert np.array_equal(c["f.y"], res["f.y"])


@pytest.mark.parametrize("make,kw,why", [
    (_msd_pid, dict(solver="rk4", dt="advance"), "dt='advance'"),
])
def test_what_the_c_cannot_run_is_named(make, kw, why):
    res = Simulator(make(), **kw).run(0.05)
    assert why in res.diagnostics["compiled"]
    with pytest.raises(BuildError, match="compiled=True"):
        Simulator(make(), compiled=True, **kw).initialize()


def test_a_variable_step_run_says_its_right_hand_side_ran_in_c():
    """Not the whole loop: the diagnostic names what ran in C (cosim.compiled_rhs)."""
    res = Simulator(_msd_pid(), solver="rk45", dt=1e-3, compiled=True).run(0.05)
    assert res.diagnostics["compiled"] == ("the right-hand side in C, variable-step 'rk45' in "
                                           "Python (SciPy's integrator, output points, "
                                           "events, major points)")


def test_observers_keep_the_python_loop(tmp_path):
    from cosim.csv_results import CsvWriter
    res = Simulator(_msd_pid(), dt=1e-3, observers=[CsvWriter(tmp_path / "r.csv")]).run(0.01)
    assert "observers other than the recorder (CsvWriter)" in res.diagnostics["compiled"]
    res = Simulator(_msd_pid(), dt=1e-3, progress=True, compiled=True).run(0.01)
    assert res.diagnostics["compiled"] is True  # the progress bar runs between C slices


def test_a_bad_compiled_option_is_an_error():
    from cosim.errors import ParameterError
    with pytest.raises(ParameterError, match="compiled"):
        Simulator(_msd_pid(), dt=1e-3, compiled="yes")


# ------------------------------------------------------------------ compiler and cache
def test_a_failing_compiler_falls_back_with_one_warning_or_raises(private_cache, monkeypatch):
    monkeypatch.setenv("CC", "/bin/false")
    with pytest.warns(CosimWarning, match="C compiler failed") as got:
        res = Simulator(_msd_pid(), dt=1e-3).run(300.0)  # long enough to compile
    assert len([w for w in got if "C compiler" in str(w.message)]) == 1
    assert "the C compiler failed" in res.diagnostics["compiled"]
    with pytest.raises(BuildError, match="C compiler failed"):
        Simulator(_msd_pid(), dt=1e-3, compiled=True).initialize()
    monkeypatch.setenv("CC", "no-such-compiler-xyz")
    with pytest.warns(CosimWarning, match="not found"):
        Simulator(_msd_pid(), dt=1e-3).run(300.0)


def test_a_cached_library_needs_no_compiler_and_may_be_read_only(private_cache, monkeypatch,
                                                                 tmp_path):
    Simulator(_msd_pid(), dt=1e-3, compiled=True).run(0.01)  # built into the cache
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no compiler on PATH
    os.chmod(private_cache, 0o555)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", CosimWarning)
            res = Simulator(_msd_pid(), dt=1e-3, compiled=True).run(0.01)
        assert res.diagnostics["compiled"] is True
    finally:
        os.chmod(private_cache, 0o755)


# ------------------------------------------------------------ parameters and failures
def test_a_changed_parameter_gives_new_c_between_advances():
    """The parameter's value is a constant in the C: a change makes new C at the next
    advance, as it rebuilds the Python program at the next major point."""
    def make():
        b = DiagramBuilder("p")
        s = b.add(bl.Step("s", 0.0, 1.0))
        g = b.add(bl.Gain("g", 1.0))
        lag = b.add(bl.FirstOrderLag("lag", 0.05))
        b.connect(s.y, g.u)
        b.connect(g.y, lag.u)
        return b.build()
    out = []
    for compiled in (False, True):
        sim = Simulator(make(), dt=1e-3, compiled=compiled, fuse_linear=False)
        sim.advance_to(0.2)
        sim.ctx.set_param("g.k", 3.0)
        sim.advance_to(0.4)
        out.append(sim.finish())
    assert out[1].diagnostics["compiled"] is True
    _compare(out[0], out[1])
    assert out[1]["lag.y"][-1] > 2.9  # the new gain after 0.2 s


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
def test_a_state_that_is_not_finite_fails_as_in_the_python_loop():
    def make():
        b = DiagramBuilder("boom")
        s = b.add(bl.Step("s", 0.0, 1.0))
        ss = b.add(bl.StateSpace("ss", [[2000.0]], [[1.0]], [[1.0]], [[0.0]]))
        b.connect(s.y, ss.u)
        return b.build()
    errs = []
    for compiled in (False, True):
        with pytest.raises(StepError) as ei:
            # (unfused: the Python loop steps the stages too, not the exact propagator,
            # whose products overflow a few steps earlier)
            Simulator(make(), dt=1e-3, compiled=compiled, fuse_linear=False).run(2.0)
        errs.append(ei.value)
    assert type(errs[0]) is type(errs[1])
    assert str(errs[0]) == str(errs[1])  # the Python loop's own, after C handed over
    assert "the C run failed (continuous state 'ss.x[1]' became inf" in \
        errs[1].results.diagnostics["compiled"]
    _compare(errs[0].results, errs[1].results)


def _lag_chain(n: int):
    """A sine through ``n`` first-order lags (``lag0`` .. ``lag{n-1}``)."""
    b = DiagramBuilder("chain")
    prev = b.add(bl.Sine("s", 1.0, 1.0)).y
    for i in range(n):
        lag = b.add(bl.FirstOrderLag(f"lag{i}", 0.01 + 0.001 * i))
        b.connect(prev, lag.u)
        prev = lag.y
    return b.build()


def test_ctrl_c_while_a_slice_s_rows_are_kept_leaves_rows_and_state_together(monkeypatch):
    """Ctrl-C arriving in the Python between two C calls, inside the recorder's extend after
    its times and before its rows (the worst place): the slice is undone, rows and context
    end at its start, and equal the Python loop's."""
    from cosim.observers import Recorder

    real = Recorder.extend
    calls = []

    def extend(self, times, rows, widths):
        calls.append(len(times))
        if len(calls) == 3:
            self.times.append(np.array(times, dtype=float))
            raise KeyboardInterrupt
        real(self, times, rows, widths)
    monkeypatch.setattr(Recorder, "extend", extend)
    sim = Simulator(_lag_chain(20), dt=1e-4, record=["lag19.y"], compiled=True)
    sim.initialize()
    with pytest.raises(KeyboardInterrupt) as ei:
        sim.run(100.0)
    res = ei.value.results
    assert len(calls) == 3 and len(res.time) == 1 + calls[0] + calls[1]
    assert res.time[-1] == sim.ctx.time
    ref = Simulator(_lag_chain(20), dt=1e-4, record=["lag19.y"], compiled=False).run(
        round(res.time[-1], 4))
    _compare(ref, res)


@pytest.mark.timing
def test_ctrl_c_stops_the_c_run_within_a_tenth_of_a_second_keeping_the_rows():
    sim = Simulator(_lag_chain(200), dt=1e-4, record=["lag199.y"], compiled=True)
    sim.initialize()
    fired = []

    def interrupt():
        fired.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)
    timer = threading.Timer(0.4, interrupt)
    timer.start()
    with pytest.raises(KeyboardInterrupt) as ei:
        sim.run(1e4)  # minutes of work
    caught = time.perf_counter()
    timer.join()
    assert caught - fired[0] <= 0.1
    res = ei.value.results
    assert len(res.time) > 10 and res.time[-1] == pytest.approx(sim.ctx.time, abs=0)
    ref = Simulator(_lag_chain(200), dt=1e-4, record=["lag199.y"], compiled=False).run(
        round(res.time[-1], 4))
    _compare(ref, res)
