"""fmus.subsystem: a Co-Simulation FMU under the subsystem protocol, stepped by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from cosim.errors import ParameterError, StepError

pytest.importorskip("fmpy")

from fmus import FMU, FMUSubsystem, load_fmu  # noqa: E402
from fmus.errors import FMUCallError, FMUConfigError  # noqa: E402

MS = 1_000_000  # ticks


def _exact_osc(t, F, x0=(0.1, 0.0), m=1.0, k=40.0, c=0.4):
    Ab = np.zeros((3, 3))
    Ab[:2, :2] = [[0, 1], [-k / m, -c / m]]
    Ab[1, 2] = 1.0 / m
    return (expm(Ab * t) @ np.array([*x0, F]))[:2]


def _steps(s, n, F=1.0, h=MS, t0=0):
    t = t0
    for _ in range(n):
        s.set_inputs(t * 1e-9, {"F": (F,)})
        s.do_step(t, h)
        t += h
    return t


def test_ports_units_and_feedthrough(fmu_files):
    s = load_fmu(fmu_files["Oscillator"], name="osc", interface="CoSimulation")
    assert isinstance(s, FMUSubsystem)
    assert s.input_names == ["F"]
    assert s.output_names == ["x", "v", "a", "x_mm", "phase", "stepped"]
    assert s.units == {"F": "N", "x": "m", "v": "m/s", "a": "m/s2", "x_mm": "mm",
                       "phase": None, "stepped": None}
    assert s.shapes["x"] == () and s.can_save_state
    assert s.feedthrough() == {"x": set(), "v": set(), "a": {"F"}, "x_mm": set(),
                               "phase": set(), "stepped": set()}
    lag = load_fmu(fmu_files["LimMass2"], name="m2", feedthrough={"x2": []})
    assert lag.feedthrough() == {"x2": set(), "v2": {"fc"}}  # no dependencies: all inputs
    with pytest.raises(FMUConfigError, match="feedthrough names 'fc', which is not an output"):
        load_fmu(fmu_files["LimMass2"], feedthrough={"fc": []})


def test_stepping_by_hand_follows_the_exact_solution(fmu_files):
    s = load_fmu(fmu_files["Oscillator"], name="osc", interface="cs",
                 parameters={"t_step": 10.0})
    s.initialize(0)
    assert s.get_outputs()["x"] == 0.1
    _steps(s, 300, F=1.0)
    out = s.get_outputs()
    x, v = _exact_osc(0.3, 1.0)
    # RK4, 0.1 ms sub-steps: measured 6e-17 and 1.9e-15
    assert abs(out["x"] - x) < 1e-10 and abs(out["v"] - v) < 1e-9
    assert out["a"] == pytest.approx(1.0 - 40 * out["x"] - 0.4 * out["v"], rel=1e-12)
    assert out["x_mm"] == pytest.approx(1000 * out["x"]) and out["phase"] == 0
    assert isinstance(out["phase"], int) and isinstance(out["stepped"], bool)


def test_save_and_restore_replay_bit_identically(fmu_files):
    s = load_fmu(fmu_files["Oscillator"], interface="cs")
    s.initialize(0)
    t = _steps(s, 450)
    token = s.save_state()
    _steps(s, 100, F=2.0, t0=t)  # crosses the time event at 0.5 s
    a = dict(s.get_outputs())
    assert a["phase"] == 1
    s.restore_state(token)
    assert s.get_outputs()["phase"] == 0
    _steps(s, 100, F=-1.0, t0=t)  # a different input after the rollback
    b = dict(s.get_outputs())
    s.restore_state(token)
    _steps(s, 100, F=2.0, t0=t)
    assert s.get_outputs() == a and b != a
    del token  # the FMU state is freed with its token


def test_instances_are_reused_with_reset_and_two_instances_are_independent(fmu_files):
    fmu = FMU(fmu_files["Oscillator"])
    s1 = fmu.subsystem("s1")
    s2 = fmu.subsystem("s2", parameters={"k": 400.0})
    runs = []
    for _ in range(2):
        s1.initialize(0)
        s2.initialize(0)
        _steps(s1, 50)
        _steps(s2, 50)
        runs.append((s1.get_outputs()["x"], s2.get_outputs()["x"]))
    assert runs[0] == runs[1] and runs[0][0] != runs[0][1]
    assert s1.inst.generation == 1 and s2.inst.generation == 1  # reset, not re-instantiated
    x_soft = _exact_osc(0.05, 1.0)[0]
    x_stiff = _exact_osc(0.05, 1.0, k=400.0)[0]
    assert abs(runs[0][0] - x_soft) < 1e-10 and abs(runs[0][1] - x_stiff) < 1e-8


def test_output_jacobian_from_directional_derivatives_and_by_differences(fmu_files):
    s = load_fmu(fmu_files["LoopA"], name="A", interface="cs")
    s.initialize(0)
    s.set_inputs(0.0, {"u": (0.5,)})
    s.refresh_outputs()
    assert s.get_outputs()["y"] == 1.0 + 2.0 * 0.5
    exact = s.output_jacobian()
    assert exact == {("y", "u"): np.array([[2.0]])}
    s.caps = dict(s.caps, providesDirectionalDerivative=False)
    fd = s.output_jacobian()
    assert fd[("y", "u")][0, 0] == pytest.approx(2.0, rel=1e-7)
    assert s.get_outputs()["y"] == 2.0  # the input is put back


def test_inputs_are_interpolated_where_the_fmu_can(fmu_files):
    """A ramp F = 2 t given as a polynomial: with input derivatives the FMU integrates the
    ramp, without them it holds F over each step."""
    def run(order):
        log = []
        s = load_fmu(fmu_files["Oscillator"], interface="cs", input_derivative_order=order,
                     parameters={"t_step": 10.0}, call_log=log.append)
        s.initialize(0)
        t = 0
        for _ in range(100):
            s.set_inputs(t * 1e-9, {"F": (2e-9 * t, 2.0)})
            s.do_step(t, 10 * MS)
            t += 10 * MS
        calls = {line.split("(")[0] for line in log}
        return s.get_outputs()["x"], "fmi2SetRealInputDerivatives" in calls
    from scipy.integrate import solve_ivp
    ref = solve_ivp(lambda t, y: [y[1], 2 * t - 40 * y[0] - 0.4 * y[1]], (0, 1), [0.1, 0],
                    rtol=1e-12, atol=1e-14).y[0, -1]
    x1, used1 = run(3)
    x0, used0 = run(0)
    assert used1 and not used0
    assert abs(x1 - ref) < 1e-9 < abs(x0 - ref)  # measured 1.7e-12 and 4.5e-5


def test_call_log_to_a_file(fmu_files, tmp_path):
    path = tmp_path / "calls.log"
    s = load_fmu(fmu_files["LoopA"], interface="cs", call_log=path)
    s.initialize(0)
    _steps_u(s)
    text = path.read_text()
    assert "fmi2Instantiate(" in text and "fmi2DoStep(" in text and "-> OK" in text


def _steps_u(s):
    s.set_inputs(0.0, {"u": (1.0,)})
    s.do_step(0, MS)


def test_parameters_are_checked_and_tunable_ones_apply_between_steps(fmu_files):
    with pytest.raises(FMUConfigError, match="has no variable 'kk'.*Did you mean 'k'"):
        load_fmu(fmu_files["Oscillator"], interface="cs", parameters={"kk": 1.0})
    with pytest.raises(FMUConfigError, match="variable 'x' is a output"):
        load_fmu(fmu_files["Oscillator"], interface="cs", parameters={"x": 1.0})
    with pytest.raises(ParameterError, match="outside its range"):
        load_fmu(fmu_files["Oscillator"], interface="cs", parameters={"m": 0.0})
    with pytest.raises(ParameterError, match="not an integer"):
        load_fmu(fmu_files["Faulty"], interface="cs", parameters={"mode": 1.5})
    log = []
    s = load_fmu(fmu_files["Oscillator"], interface="cs", call_log=log.append,
                 parameters={"t_step": 10.0})
    s.initialize(0)
    t = _steps(s, 10, F=0.0)
    log.clear()
    s.set_parameter("k", 0.0)  # tunable: set before the next step
    s.set_parameter("c", 0.0)
    x, v = s.get_outputs()["x"], s.get_outputs()["v"]
    _steps(s, 10, F=0.0, t0=t)
    assert any(line.startswith("fmi2SetReal(") and "[6]" in line for line in log)
    assert s.get_outputs()["x"] == pytest.approx(x + 0.01 * v, rel=1e-12)  # free motion


def test_an_fmu_that_cannot_vary_its_step_refuses_another_step_size(fmu_files, tmp_path):
    from tests.fmu_builders import rewrite_fmu
    path = rewrite_fmu(fmu_files["LoopA"], tmp_path / "Fixed.fmu", replace={
        "modelDescription.xml": ('canHandleVariableCommunicationStepSize="true"',
                                 'canHandleVariableCommunicationStepSize="false"')})
    s = load_fmu(path, interface="cs")
    s.initialize(0)
    _steps_u(s)
    s.set_inputs(1e-3, {"u": (1.0,)})
    with pytest.raises(StepError, match="cannot handle a variable communication step "
                                        r"\(canHandleVariableCommunicationStepSize=false\): it "
                                        "started with 1 ms, asked for 2 ms"):
        s.do_step(MS, 2 * MS)


def test_an_error_status_is_reported_and_the_next_run_starts_clean(fmu_files):
    s = load_fmu(fmu_files["Faulty"], name="f", interface="cs", parameters={"mode": 1})
    s.initialize(0)
    t = 0
    with pytest.raises(FMUCallError) as exc:
        for _ in range(10):
            s.set_inputs(t * 1e-9, {"u": (1.0,)})
            s.do_step(t, 10 * MS)
            t += 10 * MS
    msg = str(exc.value)
    assert "FMU 'Faulty.fmu' instance 'f': fmi2DoStep returned error at t = 0.05 s" in msg
    assert "fault injected at t = 0.05 s (mode 1)" in msg and exc.value.status == "error"
    s.set_parameter("mode", 0)
    s.initialize(0)  # a fresh instance: the failed one is freed
    assert s.inst.generation == 2
    for k in range(10):
        s.set_inputs(k * 0.01, {"u": (1.0,)})
        s.do_step(k * 10 * MS, 10 * MS)
    assert s.get_outputs()["y"] == pytest.approx(0.1)


def test_an_fmu_instantiable_once_per_process_gets_a_private_copy(fmu_files, tmp_path):
    from tests.fmu_builders import rewrite_fmu
    path = rewrite_fmu(fmu_files["LoopA"], tmp_path / "Once.fmu", replace={
        "modelDescription.xml": ('<CoSimulation modelIdentifier="LoopA"',
                                 '<CoSimulation modelIdentifier="LoopA" '
                                 'canBeInstantiatedOnlyOncePerProcess="true"')})
    fmu = FMU(path)
    a, b = fmu.subsystem("a"), fmu.subsystem("b", parameters={"ka": 5.0})
    a.initialize(0)
    b.initialize(0)
    assert a.inst.drv.spec.root == str(fmu.root)
    assert b.inst.drv.spec.root != str(fmu.root)  # its own copy of the library
    for s in (a, b):
        s.set_inputs(0.0, {"u": (1.0,)})
        s.refresh_outputs()
    assert a.get_outputs()["y"] == 3.0 and b.get_outputs()["y"] == 6.0


def test_out_of_process_cs_subsystem_matches_in_process(fmu_files):
    log = []
    runs = []
    for oop in (False, True):
        s = load_fmu(fmu_files["Oscillator"], name="osc", interface="cs", out_of_process=oop,
                     call_log=log.append if oop else None)
        s.initialize(0)
        _steps(s, 50)
        token = s.save_state()
        _steps(s, 20, F=3.0, t0=50 * MS)
        s.restore_state(token)
        _steps(s, 20, F=3.0, t0=50 * MS)
        runs.append(dict(s.get_outputs()))
        s.free()
    assert runs[0] == runs[1]
    assert any(line.startswith("fmi2DoStep(") for line in log)  # logged in the child


def test_an_unconnected_input_keeps_its_start_value_in_a_master(fmu_files):
    """F left unconnected: 0 (its start value), or the start= value; x0 from start=."""
    from cosim import MasterScheduler
    s = load_fmu(fmu_files["Oscillator"], name="osc", interface="cs")
    assert s.optional_inputs == {"F"}
    res = MasterScheduler([s], [], 1e-3).run(0.2)
    np.testing.assert_allclose(res["osc.x"][-1], _exact_osc(0.2, 0.0)[0], atol=1e-9)
    s = load_fmu(fmu_files["Oscillator"], name="osc", interface="cs",
                 start={"F": 1.0, "x": 0.3})
    res = MasterScheduler([s], [], 1e-3).run(0.2)
    np.testing.assert_allclose(res["osc.x"][-1], _exact_osc(0.2, 1.0, x0=(0.3, 0.0))[0],
                               atol=1e-9)
