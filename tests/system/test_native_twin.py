"""Issue 34: native subsystems in the compiled master loop (their C twins,
:mod:`fmus.native_twin`), against the Python loop as the oracle.

Corpus: native diagrams beside an FMU (the LIM mass m2, generated-C FMI 2 and FMI 3):
the linear M1 with its coupling spring (one fused linear group), and a controller with a
sampled PID (hits inside a macro step, and every second macro step: held outputs are state),
a lag, a gain and a saturation; solvers rk4, heun, midpoint and euler; Jacobi and
Gauss-Seidel; extrapolation orders 0, 1 and 3; rates (1, 1), (2, 1) and (1, 2).  Each compiled
run must equal the Python loop's to 1e-12 relative to each signal's largest magnitude (the
twin's C sums in another order than NumPy's matrix products and evaluates the input polynomial
as a Taylor series: :mod:`fmus.native_twin`), with the same steps per subsystem and the native
subsystem's state after the run (states, discrete states, time) equal to the same tolerance.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest

from bench.lim import CONNECTIONS, m1_diagram, m2_diagram
from blocks import FirstOrderLag
from blocks.math import Gain, Saturation, Sum
from blocks.pid import DiscretePID
from cosim import DiagramBuilder, GaussSeidel, Jacobi, MasterScheduler
from cosim.errors import BuildError, CosimWarning
from cosim.subsystem import DiagramSubsystem

pytest.importorskip("fmpy")

from fmus import load_fmu  # noqa: E402
from fmus.export import export_fmu  # noqa: E402

H = 1e-3
T_END = 0.12
RTOL = 1e-12


def _controller(period):
    """A sampled-PID force controller with the LIM M1's ports (x2, v2 -> fc)."""
    b = DiagramBuilder("m1")
    kx = b.add(Gain("kx", -40.0, input_unit="m", unit="N"))
    lag = b.add(FirstOrderLag("lag", tau_s=0.02, unit="N"))
    pid = b.add(DiscretePID("pid", period, kp=-30.0, ki=-5.0, kd=-0.05, input_unit="m/s",
                            unit="N"))
    f = b.add(Sum("f", "++", unit="N"))
    sat = b.add(Saturation("sat", -60.0, 60.0, unit="N"))
    b.connect(kx.y, lag.u)
    b.connect(lag.y, f.ins[0])
    b.connect(pid.u, f.ins[1])
    b.connect(f.y, sat.u)
    b.export_input(kx.u, "x2")
    b.export_input(pid.e, "v2")
    b.export_output(sat.y, "fc")
    b.export_output(lag.y, "lag")
    return b.build()


NATIVE = {"lim_m1": m1_diagram, "pid_in_step": lambda: _controller(H / 2),
          "pid_every_2H": lambda: _controller(2 * H)}
COUPLINGS = {"jacobi": Jacobi, "gauss_seidel": lambda: GaussSeidel(["m2", "m1"])}


@pytest.fixture(scope="module")
def m2_fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("twin_corpus")
    return {ver: export_fmu(m2_diagram(), d / f"m2_{ver}.fmu", ver, "cs", step=H / 10,
                            model_name="m2") for ver in ("2.0", "3.0")}


def _master(files, native, solver, rates, coupling, order, compiled, ver="2.0"):
    subs = [DiagramSubsystem(NATIVE[native](), solver=solver, dt=H / 10, rate=rates[0],
                             name="m1"),
            load_fmu(files[ver], name="m2", rate=rates[1])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CosimWarning)
        return MasterScheduler(subs, CONNECTIONS, H, coupling=COUPLINGS[coupling](),
                               extrapolation=order, compiled=compiled)


def _close(a, b, what):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape, what
    scale = max(1e-300, float(np.max(np.abs(b))) if b.size else 1.0)
    err = float(np.max(np.abs(a - b))) / scale if b.size else 0.0
    assert err <= RTOL, f"{what}: relative difference {err:.3g} > {RTOL:g}"
    return err


def _native_state(master):
    s = master.by_name["m1"]
    ctx = s.ctx
    plan = s.diagram.compile()
    wplan = s.wrapper.compile()
    xd = [np.asarray(ctx.xd[wplan.dstate_index[h]], float) for h in plan.discrete_states]
    return ctx.ticks, ctx.xc.copy(), xd


def _compare(py, cc):
    """The compiled master's run against the Python one's: results, counters, state."""
    res_p, res_c = py.results, cc.results
    assert res_c.diagnostics["compiled"] is True, res_c.diagnostics["compiled"]
    np.testing.assert_array_equal(res_c.time, res_p.time)
    worst = 0.0
    for key in res_p.signals:
        worst = max(worst, _close(res_c[key], res_p[key], key))
    assert cc.master.t == py.master.t
    assert dict(cc.master.counters.steps) == dict(py.master.counters.steps)
    tp, xp, xdp = _native_state(py.master)
    tc, xc, xdc = _native_state(cc.master)
    assert tc == tp
    _close(xc, xp, "m1 continuous state")
    for a, b in zip(xdc, xdp):
        _close(a, b, "m1 discrete state")
    return worst


class _Run:
    def __init__(self, master, t_end=T_END):
        self.master = master
        self.results = master.run(t_end)


@pytest.mark.parametrize("rates", [(1, 1), (2, 1), (1, 2)], ids=lambda r: f"r{r[0]}{r[1]}")
@pytest.mark.parametrize("order", [0, 1, 3])
@pytest.mark.parametrize("coupling", list(COUPLINGS))
@pytest.mark.parametrize("native", list(NATIVE))
def test_native_subsystem_runs_compiled_equal_to_the_python_loop(m2_fmus, native, coupling,
                                                                  order, rates):
    args = (m2_fmus, native, "rk4", rates, coupling, order)
    _compare(_Run(_master(*args, compiled=False)), _Run(_master(*args, compiled=True)))


@pytest.mark.parametrize("solver", ["heun", "midpoint", "euler"])
@pytest.mark.parametrize("native", ["lim_m1", "pid_in_step"])
def test_every_fixed_step_solver_of_the_twin(m2_fmus, native, solver):
    args = (m2_fmus, native, solver, (1, 1), "jacobi", 1)
    _compare(_Run(_master(*args, compiled=False)), _Run(_master(*args, compiled=True)))


def test_native_subsystem_beside_an_fmi3_fmu(m2_fmus):
    args = (m2_fmus, "pid_in_step", "rk4", (1, 1), "jacobi", 1)
    py = _Run(_master(*args, compiled=False, ver="3.0"))
    cc = _Run(_master(*args, compiled=True, ver="3.0"))
    _compare(py, cc)


def test_a_second_run_starts_from_the_state_the_first_left(m2_fmus):
    """``run`` twice (the second initializes again at t = 0 from the states the first left,
    handed back from C): the same in both loops."""
    args = (m2_fmus, "pid_in_step", "rk4", (1, 1), "jacobi", 1)
    out = []
    for compiled in (False, True):
        m = _master(*args, compiled=compiled)
        m.run(T_END / 2)
        run = _Run.__new__(_Run)
        run.master, run.results = m, m.run(T_END)
        out.append(run)
    _compare(*out)


def test_the_stepper_runs_the_twin(m2_fmus):
    args = (m2_fmus, "pid_every_2H", "rk4", (1, 1), "jacobi", 1)
    py = _Run(_master(*args, compiled=False))
    m = _master(*args, compiled=None)
    st = m.stepper()
    n = round(T_END / H)
    for _ in range(n // 2):
        st.step()
    mid = st.outputs()
    st.advance_to_ticks(round(T_END * 1e9))
    cc = _Run.__new__(_Run)
    cc.master, cc.results = m, st.results()
    assert mid["m1.fc"] == pytest.approx(py.results["m1.fc"][n // 2], rel=RTOL, abs=1e-12)
    _compare(py, cc)


def test_changed_parameters_make_a_new_twin(m2_fmus):
    """A parameter set between two runs: the second run's twin is generated with it."""
    args = (m2_fmus, "pid_in_step", "rk4", (1, 1), "jacobi", 1)
    out = []
    for compiled in (False, True):
        m = _master(*args, compiled=compiled)
        m.run(T_END / 2)
        s = m.by_name["m1"]
        kx = next(b for b in s.diagram.leaf_blocks() if b.name == "kx")
        s.ctx.set_param(kx.k, -80.0)
        run = _Run.__new__(_Run)
        run.master, run.results = m, m.run(T_END)
        out.append(run)
    _compare(*out)


def test_a_python_only_block_keeps_the_python_loop_and_says_which(m2_fmus):
    from cosim.function_block import FunctionBlock

    def python_m1():
        b = DiagramBuilder("m1")
        # (sum: not translated into C, so the law stays Python)
        fn = b.add(FunctionBlock("law", lambda x2, v2: sum((-40.0 * x2, -3.0 * v2)),
                                 inputs={"x2": "m", "v2": "m/s"}, outputs={"y": "N"}))
        b.export_input(fn.inputs["x2"], "x2")
        b.export_input(fn.inputs["v2"], "v2")
        b.export_output(fn.outputs["y"], "fc")
        return b.build()
    NATIVE["python_law"] = python_m1
    try:
        m = _master(m2_fmus, "python_law", "rk4", (1, 1), "jacobi", 1, compiled=None)
        why = m.compiled_reason
        assert "law" in why and "FunctionBlock" in why, why
        res = m.run(T_END)
        assert res.diagnostics["compiled"] == why
        with pytest.raises(BuildError, match="law"):
            _master(m2_fmus, "python_law", "rk4", (1, 1), "jacobi", 1, compiled=True)
    finally:
        del NATIVE["python_law"]


def test_a_translated_function_block_runs_in_the_twin(m2_fmus):
    """A FunctionBlock whose function translates into C (cosim.codegen.pyfunc) joins the
    twin: the compiled master equals the Python one."""
    from cosim.function_block import FunctionBlock

    def law(x2, v2):
        f = -40.0 * x2 - 3.0 * v2
        return max(-60.0, min(60.0, f)) if abs(x2) < 2.0 else math.copysign(60.0, -x2)

    def translated_m1():
        b = DiagramBuilder("m1")
        fn = b.add(FunctionBlock("law", law, inputs={"x2": "m", "v2": "m/s"},
                                 outputs={"y": "N"}))
        b.export_input(fn.inputs["x2"], "x2")
        b.export_input(fn.inputs["v2"], "v2")
        b.export_output(fn.outputs["y"], "fc")
        return b.build()
    NATIVE["translated_law"] = translated_m1
    try:
        args = (m2_fmus, "translated_law", "rk4", (1, 1), "jacobi", 1)
        _compare(_Run(_master(*args, compiled=False)), _Run(_master(*args, compiled=True)))
    finally:
        del NATIVE["translated_law"]


def test_a_variable_step_native_subsystem_says_why(m2_fmus):
    subs = [DiagramSubsystem(m1_diagram(), solver="rk45", name="m1"),
            load_fmu(m2_fmus["2.0"], name="m2")]
    m = MasterScheduler(subs, CONNECTIONS, H, compiled=None)
    assert "rk45" in m.compiled_reason, m.compiled_reason


@pytest.mark.parametrize("native", ["pid_every_2H", "pid_in_step", "lim_m1"])
def test_push_and_pull_hand_over_every_piece_of_state(m2_fmus, native):
    """A subsystem stepped in Python (sampled outputs held between hits), pushed into a twin:
    both take the same next steps with the same inputs; pulled back, the subsystem goes on
    as the twin went."""
    from fmus.native_twin import NativeTwin
    m = _master(m2_fmus, native, "rk4", (1, 1), "jacobi", 1, compiled=False)
    m.run(0.011)  # ends between two hits of the 2 ms PID
    sub = m.by_name["m1"]
    from fmus.importer import FMU
    twin = NativeTwin(sub, FMU)
    twin.push()
    f = twin.fmu
    fmu, outs = f.inst.drv.fmu, {v.port: v for v in f.out_vars}
    t = sub.ctx.ticks
    for name, value in sub.get_outputs().items():  # a PID output held since its last hit
        assert fmu.getReal([outs[name].vr])[0] == float(value), name
    for k in range(5):
        u = {"x2": 0.01 * (k + 1), "v2": -0.2 * k}
        sub.set_inputs(t * 1e-9, {n: (v,) for n, v in u.items()})
        fmu.setReal([f._in_by_port[n].vr for n in u], list(u.values()))
        sub.do_step(t, 1_000_000)
        fmu.doStep(t * 1e-9, 1e-3, True)
        t += 1_000_000
        for name, value in sub.get_outputs().items():
            got = fmu.getReal([outs[name].vr])[0]
            assert got == pytest.approx(float(value), rel=RTOL, abs=1e-12), (k, name)
    before = sub.ctx.xc.copy()
    twin.pull()
    assert sub.ctx.ticks == t
    assert not np.array_equal(before, sub.ctx.xc) or native != "lim_m1"


# ------------------------------------------------------------------ fail safe
@pytest.fixture
def fresh_cache(private_cache):
    """An empty cache of our own; the master loop's library already loaded."""
    return private_cache


def _new_native(m2_fmus, compiled, gain):
    """A native controller whose C source no cache holds yet (its gain is new)."""
    d = _controller(2 * H)
    sub = DiagramSubsystem(d, solver="rk4", dt=H / 10, name="m1")
    kx = next(b for b in d.leaf_blocks() if b.name == "kx")
    sub.ctx.set_param(kx.k, gain)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = MasterScheduler([sub, load_fmu(m2_fmus["2.0"], name="m2")], CONNECTIONS, H,
                            extrapolation=1, compiled=compiled)
    return m, [str(w.message) for w in caught if issubclass(w.category, CosimWarning)]


@pytest.mark.parametrize("cc, said", [("/bin/false", "exit status 1"),
                                      ("no-such-compiler-cc", "not found")])
def test_a_twin_without_a_compiler_falls_back_with_one_warning(m2_fmus, fresh_cache,
                                                               monkeypatch, cc, said):
    import fmus.compiled_master as cm
    lib = cm._library()  # the loop itself is loaded: only the twin needs the compiler
    monkeypatch.setenv("CC", cc)
    import cosim.codegen.cache as cosim_cache
    monkeypatch.setitem(cosim_cache._loaded, ("cosim-master", cc), lib)
    m, warned = _new_native(m2_fmus, None, -41.5)
    assert len(warned) == 1 and "C twin" in warned[0] and said in warned[0], warned
    res = m.run(T_END)
    assert said in res.diagnostics["compiled"]
    ref, _ = _new_native(m2_fmus, False, -41.5)
    np.testing.assert_array_equal(res["m1.fc"], ref.run(T_END)["m1.fc"])
    with pytest.raises(BuildError, match=said):
        _new_native(m2_fmus, True, -41.5)


def test_a_cached_twin_needs_no_compiler_and_may_be_read_only(m2_fmus, fresh_cache,
                                                             monkeypatch):
    import shutil
    monkeypatch.delenv("CC", raising=False)
    m, _ = _new_native(m2_fmus, True, -42.5)  # built into the fresh cache
    ref = m.run(T_END)
    (twin,) = fresh_cache.glob("cosim-twin-*")
    stamp = sorted(str(p.relative_to(fresh_cache)) for p in fresh_cache.rglob("*"))
    monkeypatch.setenv("PATH", "/nonexistent")  # no gcc to be found
    assert shutil.which("gcc") is None
    os.chmod(fresh_cache, 0o555)
    try:
        m, warned = _new_native(m2_fmus, True, -42.5)
        assert warned == []
        res = m.run(T_END)
        assert res.diagnostics["compiled"] is True
        np.testing.assert_array_equal(res["m1.fc"], ref["m1.fc"])
    finally:
        os.chmod(fresh_cache, 0o755)
    assert sorted(str(p.relative_to(fresh_cache)) for p in fresh_cache.rglob("*")) == stamp


def test_a_twin_others_can_write_is_not_loaded(m2_fmus, fresh_cache, monkeypatch):
    m, _ = _new_native(m2_fmus, True, -43.5)
    (twin,) = fresh_cache.glob("cosim-twin-*")
    os.chmod(twin, 0o777)  # as if another user had planted it
    m, warned = _new_native(m2_fmus, None, -43.5)
    assert "writable by other users" in m.compiled_reason and str(twin) in m.compiled_reason
    assert len(warned) == 1


# ------------------------------------------------- a generated corpus of native diagrams
def _lag_bank():
    """The FMU partner of the generated corpus: three first-order lags (no feedthrough)."""
    b = DiagramBuilder("bank")
    for j in range(3):
        lag = b.add(FirstOrderLag(f"lag{j}", tau_s=0.01 * (j + 1), y0=0.1 * (j - 1)))
        b.export_input(lag.u, f"u{j}")
        b.export_output(lag.y, f"y{j}")
    return b.build()


@pytest.fixture(scope="module")
def bank_fmu(tmp_path_factory):
    return export_fmu(_lag_bank(), tmp_path_factory.mktemp("bank") / "bank.fmu", "2.0", "cs",
                      step=H / 10, model_name="bank")


@pytest.mark.parametrize("seed", range(24))
def test_generated_native_diagrams_run_compiled_equal_to_the_python_loop(bank_fmu, seed):
    """Random diagrams of core blocks (linear and nonlinear, fused linear groups, feedthrough,
    :func:`tests.unit.fmus.test_cgen_interfaces.random_diagram`) as the native subsystem,
    coupled both ways with an FMU; solver, extrapolation order and coupling vary with the
    seed.  (This corpus found the propagator's stale stage inputs in the Python loop:
    ``tests/unit/test_propagator_stage_inputs.py``.)"""
    from tests.unit.fmus.test_cgen_interfaces import random_diagram
    rng = np.random.default_rng(1000 + seed)
    solver = ["rk4", "heun", "midpoint", "euler"][seed % 4]
    order = int(rng.integers(0, 4))
    coupling = ["jacobi", "gauss_seidel"][seed % 2]
    out = {}
    for compiled in (False, True):
        d, _ = random_diagram(seed)
        native = DiagramSubsystem(d, solver=solver, dt=H / 10, name="m1")
        bank = load_fmu(bank_fmu, name="m2")
        conns = [(f"m2.y{j % 3}", f"m1.{name}") for j, name in enumerate(native.input_names)]
        conns += [(f"m1.{name}", f"m2.u{j}") for j, name in
                  enumerate((native.output_names * 3)[:3])]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CosimWarning)
            m = MasterScheduler([native, bank], conns, H, extrapolation=order,
                                coupling=COUPLINGS[coupling](), compiled=compiled)
        run = _Run.__new__(_Run)
        run.master, run.results = m, m.run(T_END)
        out[compiled] = run
    _compare(out[False], out[True])
