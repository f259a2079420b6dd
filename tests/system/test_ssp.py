"""SSP systems simulated: against the same system wired by hand, against fmpy's independent
``simulate_ssp``, against the analytic oscillator, and with Model Exchange components against
the same diagram run natively.

The system: LoopA (``lag``: x' = -x + u, y = x + ka u, C FMU) and Oscillator (``osc``:
m x'' = F + F_step [t >= t_step] - k x - c v, C FMU), both FMI 2 Co-Simulation with
their own RK4 sub-steps, coupled by the master.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("fmpy")

from cosim import MasterScheduler  # noqa: E402
from fmus import FMU  # noqa: E402
from fmus.ssp import export_master_ssp, export_ssp, load_ssp, read_ssp  # noqa: E402

H = 1e-3


def _pair(fmu_files):
    return {"lag": fmu_files["LoopA"], "osc": fmu_files["Oscillator"]}


def test_load_ssp_equals_the_system_wired_by_hand(fmu_files, tmp_path):
    """Bound parameters and start values, a linear transformation, the step from the
    annotation: the SSP run is the hand-wired run, bit for bit."""
    conns = [("lag.y", "osc.F"), ("osc.x", "lag.u", (3.0, -0.2))]
    params = {"osc": {"k": 100.0, "x": 0.05}, "lag": {"ka": 0.5}}
    p = export_ssp(tmp_path / "pair.ssp", _pair(fmu_files), conns, parameters=params,
                   stop=1.0, step_s=H)
    res = load_ssp(p, extrapolation=2).run()

    osc_fmu = FMU(fmu_files["Oscillator"])
    osc = osc_fmu.subsystem("osc", parameters={"k": 100.0})
    osc.params[osc_fmu.info.variable("x")] = 0.05  # the start value of the state
    lag = FMU(fmu_files["LoopA"]).subsystem("lag", parameters={"ka": 0.5})
    ref = MasterScheduler([lag, osc], conns, H, extrapolation=2).run(1.0)
    for k in ("osc.x", "osc.v", "lag.x", "lag.y"):
        np.testing.assert_array_equal(res[k], ref[k])  # measured: 0.0 difference
    assert res.time[-1] == 1.0 and len(res.time) == 1001
    # can fail: the parameters change the result (default k = 40, x0 = 0.1, ka = 2)
    plain = load_ssp(export_ssp(tmp_path / "plain.ssp", _pair(fmu_files), conns, stop=1.0,
                                step_s=H), extrapolation=2).run()
    assert np.max(np.abs(plain["osc.x"] - res["osc.x"])) > 1e-2
    assert plain["lag.y"][0] == pytest.approx(1 + 2.0 * (3 * 0.1 - 0.2))
    assert res["lag.y"][0] == pytest.approx(1 + 0.5 * (3 * 0.05 - 0.2))


def test_fmpy_simulate_ssp_gives_the_same_result(fmu_files, tmp_path):
    """fmpy's simulate_ssp as an independent master for the same file.

    What fmpy 0.3.32 supports, and how the case is chosen so both compute the same thing:
    FMI 1/2 CS only; Jacobi with zero-order hold (extrapolation=0 here); connector values
    start at 0.0 (so the coupled outputs start at 0: x(0) = 0 bound on both FMUs); it
    ignores the SSD's parameter bindings (they are passed as its ``parameter_set``) and
    linear transformations (none here); a feedthrough output is read after doStep with
    the old input (ours is made consistent at the communication point), so only outputs
    without feedthrough are coupled (lag.x, osc.x) and compared; its rows hold the values
    after the step at the step's start time.
    """
    from fmpy.ssp.simulation import simulate_ssp
    from fmpy.ssp.ssd import Parameter, ParameterSet
    params = {"osc": {"k": 100.0, "x": 0.0}, "lag": {"x": 0.0}}
    p = export_ssp(tmp_path / "pair.ssp", _pair(fmu_files),
                   [("lag.x", "osc.F"), ("osc.x", "lag.u")], parameters=params, stop=1.0,
                   step_s=H)
    s = read_ssp(p)
    pset = ParameterSet(parameters=[Parameter(name=f"{c}.{k}", type="Real", value=repr(v))
                                    for c, comp in s.components.items()
                                    for k, v in comp.parameters.items()])
    theirs = simulate_ssp(str(p), stop_time=1.0, step_size=H, parameter_set=pset)
    ours = load_ssp(p, extrapolation=0).run()
    n = len(ours.time) - 1
    assert len(theirs) >= n
    for k in ("osc.x", "osc.v", "lag.x"):
        np.testing.assert_array_equal(theirs[k][:n], ours[k][1:])  # measured: 0.0
    assert np.max(np.abs(ours["osc.x"])) > 0.03  # the step force at t = 0.5 s moved it


def test_bound_values_give_the_analytic_oscillator(fmu_files, tmp_path):
    """Oscillator alone, values from a .ssv file: k = 100, c = 0, x(0) = 0.2, F held at the
    bound system input F0 = 1.5, F_step = 2 at t = 0.5 s:
    x = F0/k + (x0 - F0/k) cos(w t) + [t >= 0.5] F_step/k (1 - cos(w (t - 0.5))), w = 10."""
    p = export_ssp(tmp_path / "osc.ssp", {"osc": fmu_files["Oscillator"]}, [("F0", "osc.F")],
                   parameters={"osc": {"k": 100.0, "c": 0.0, "x": 0.2}}, inputs={"F0": 1.5},
                   ssv_files=True, stop=1.0, step_s=H)
    res = load_ssp(p).run()
    t = res.time
    w, k, x0, f0 = 10.0, 100.0, 0.2, 1.5
    exact = f0 / k + (x0 - f0 / k) * np.cos(w * t) + np.where(
        t >= 0.5, 2.0 / k * (1 - np.cos(w * (t - 0.5))), 0.0)
    err = np.max(np.abs(res["osc.x"] - exact))
    assert err < 1e-12, err  # measured 1.2e-14 (the FMU's RK4, 10 sub-steps of 0.1 ms)
    assert np.max(np.abs(exact - (0.1 * np.cos(np.sqrt(40) * t)))) > 0.1  # defaults differ


def test_a_master_exported_and_loaded_again_runs_the_same(fmu_files, tmp_path):
    osc = FMU(fmu_files["Oscillator"]).subsystem("osc", parameters={"k": 70.0, "c": 1.0})
    lag = FMU(fmu_files["LoopA"]).subsystem("lag", parameters={"ka": 1.5})
    conns = [("lag.y", "osc.F", (0.5, 0.1)), ("osc.x_mm", "lag.u", (1e-3, 0.0))]
    ref = MasterScheduler([lag, osc], conns, 2e-3).run(0.6)
    p = export_master_ssp(tmp_path / "m.ssp", MasterScheduler([lag, osc], conns, 2e-3),
                          stop=0.6)
    res = load_ssp(p).run()
    for k in ("osc.x", "lag.y"):
        np.testing.assert_array_equal(res[k], ref[k])  # measured: 0.0 difference


def test_model_exchange_components_run_as_one_diagram(fmu_files, tmp_path):
    """Two ME components of one unit (their connection, with a linear transformation,
    inside the diagram: no co-simulation delay) give what the same diagram gives run
    natively by cosim's simulator, at every communication point."""
    from cosim import DiagramBuilder, FunctionBlock, Simulator
    from fmus import FMUBlock
    conns = [("lag.y", "osc.F"), ("osc.x", "lag.u", (3.0, -0.2))]
    p = export_ssp(tmp_path / "me.ssp", _pair(fmu_files), conns,
                   parameters={"osc": {"k": 100.0}, "lag": {"ka": 0.5}}, stop=1.0, step_s=H,
                   model_exchange={"lag": "plant", "osc": "plant"},
                   solvers={"plant": {"solver": "rk4", "dt": 1e-4}})
    res = load_ssp(p).run()
    b = DiagramBuilder("plant")
    lag = b.add(FMUBlock(FMU(fmu_files["LoopA"]), "lag", parameters={"ka": 0.5}))
    osc = b.add(FMUBlock(FMU(fmu_files["Oscillator"]), "osc", parameters={"k": 100.0}))
    tf = b.add(FunctionBlock("tf", lambda x: 3.0 * x - 0.2, [("u", "m")], [("y", "m")]))
    b.connect(lag.output("y"), osc.input("F"))
    b.connect(osc.output("x"), tf.input("u"))
    b.connect(tf.output("y"), lag.input("u"))
    native = Simulator(b.build(), solver="rk4", dt=1e-4).run(1.0)
    idx = np.searchsorted(native.time, res.time)
    assert np.allclose(native.time[idx], res.time, rtol=0, atol=1e-12)
    for k, ref in (("osc.x", "osc.x"), ("lag.y", "lag.y")):
        err = np.max(np.abs(res[k] - native[ref][idx]))
        assert err < 1e-12, (k, err)  # measured: 0.0
    # co-simulated (CS, one macro step of delay on each connection) it differs
    cs = load_ssp(export_ssp(tmp_path / "cs.ssp", _pair(fmu_files), conns,
                             parameters={"osc": {"k": 100.0}, "lag": {"ka": 0.5}}, stop=1.0,
                             step_s=H)).run()
    assert np.max(np.abs(cs["osc.x"] - res["osc.x"])) > 1e-8  # measured 2.5e-7


def test_a_model_exchange_oscillator_gives_the_analytic_solution(fmu_files, tmp_path):
    """The analytic case of test_bound_values_give_the_analytic_oscillator with the FMU run
    through Model Exchange (cosim's RK4, its time event at 0.5 s on the step grid)."""
    p = export_ssp(tmp_path / "osc.ssp", {"osc": fmu_files["Oscillator"]}, [("F0", "osc.F")],
                   parameters={"osc": {"k": 100.0, "c": 0.0, "x": 0.2}}, inputs={"F0": 1.5},
                   stop=1.0, step_s=H, model_exchange={"osc": "osc_me"},
                   solvers={"osc_me": {"solver": "rk4", "dt": 1e-4}})
    s = read_ssp(p)
    assert s.components["osc"].unit == "osc_me"
    res = load_ssp(s).run()
    t = res.time
    w, k, x0, f0 = 10.0, 100.0, 0.2, 1.5
    exact = f0 / k + (x0 - f0 / k) * np.cos(w * t) + np.where(
        t >= 0.5, 2.0 / k * (1 - np.cos(w * (t - 0.5))), 0.0)
    err = np.max(np.abs(res["osc.x"] - exact))
    assert err < 1e-10, err
