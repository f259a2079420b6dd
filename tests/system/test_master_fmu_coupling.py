"""Issue 21: couplings with FMU and native subsystems, iterative coupling that reaches
FMUs, full order from the start, Newton's kept Jacobian, the compiled FMU loop.

Model: the LIM two-mass oscillator, f-s coupling (bench/lim.py), case 1, against the
exact solution.  FMU subsystems: ``tests/fmu_sources/lim_m1.h``/``lim_m2.h`` (C, FMI 2
CS, RK4 at H/10 inside, ``canInterpolateInputs``: the master's polynomial reaches them
through input derivatives) and the native diagrams exported as generated-C FMUs
(``export_fmu``, issue 31: FMI 2 with ``canInterpolateInputs``, FMI 3 with intermediate
update at each Runge-Kutta stage; ``interpolate_inputs=False``: inputs held over a step).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from bench.lim import CONNECTIONS, exact, m1_diagram, m2_diagram
from cosim import DiagramBuilder, GaussSeidel, Iterative, Jacobi, MasterScheduler
from cosim.errors import BuildError, CosimWarning, RateError
from cosim.subsystem import DiagramSubsystem

pytest.importorskip("fmpy")

from fmus import load_fmu  # noqa: E402
from fmus.export import export_fmu  # noqa: E402
from tests.fmu_builders import SOURCES, build_c_fmu  # noqa: E402

H = 1e-3


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("lim_fmus")
    out = {"c1": build_c_fmu("lim_m1", d), "c2": build_c_fmu("lim_m2", d)}
    xml = (SOURCES / "lim_m2.xml").read_text().replace("LimM2", "LimM2Stop").replace(
        "0a002}", "0a003}")
    out["stop"] = build_c_fmu("lim_m2_stop", d, xml=xml)
    for h in (2e-3, 1e-3):
        for kind, ver, interp in (("generated", "2.0", None), ("generated3", "3.0", None),
                                  ("generated_held", "2.0", False)):
            for i, diagram in ((1, m1_diagram), (2, m2_diagram)):
                out[(kind, i, h)] = export_fmu(diagram(), d / f"{kind}_m{i}_{h:g}.fmu", ver,
                                               "cs", step=h / 10, model_name=f"m{i}",
                                               interpolate_inputs=interp)
    return out


def _subs(kind, files, h):
    if kind == "native":
        return [DiagramSubsystem(m1_diagram(), solver="rk4", dt=h / 10),
                DiagramSubsystem(m2_diagram(), solver="rk4", dt=h / 10)]
    if kind == "native_held":
        return [DiagramSubsystem(m1_diagram(), solver="rk4", dt=h / 10, hold_inputs=True),
                DiagramSubsystem(m2_diagram(), solver="rk4", dt=h / 10, hold_inputs=True)]
    if kind == "fmu":  # C FMUs that interpolate their inputs
        return [load_fmu(files["c1"], name="m1"), load_fmu(files["c2"], name="m2")]
    return [load_fmu(files[(kind, 1, h)], name="m1"), load_fmu(files[(kind, 2, h)], name="m2")]


def _run(kind, files, coupling, order, h=H, t_end=1.0, **kw):
    master = MasterScheduler(_subs(kind, files, h), CONNECTIONS, h, coupling=coupling,
                             extrapolation=order, **kw)
    res = master.run(t_end)
    ref = exact(res.time)
    err = max(np.max(np.abs(res["m1.x1"] - ref[:, 0])),
              np.max(np.abs(res["m2.x2"] - ref[:, 1])))
    return err, res, master


COUPLINGS = {"jacobi": Jacobi, "gauss_seidel": lambda: GaussSeidel(["m2", "m1"]),
             "newton": lambda: Iterative("newton")}


@pytest.mark.parametrize("order", [0, 1, 2, 3])
@pytest.mark.parametrize("coupling", list(COUPLINGS))
@pytest.mark.parametrize("kind", ["native", "fmu", "generated", "generated3"])
def test_global_order_is_p_plus_1_for_every_coupling_native_and_fmu(files, kind, coupling,
                                                                    order):
    """Observed order log2(e(2H) / e(H)) within 0.1 of p + 1 (iterative order 3: was 3).

    ``generated``/``generated3``: the project's own exported FMUs (FMI 2 / FMI 3), which
    held their inputs before issue 31 (observed order 1 for every p)."""
    errs = [_run(kind, files, COUPLINGS[coupling](), order, h)[0] for h in (2e-3, 1e-3)]
    observed = math.log2(errs[0] / errs[1])
    print(f"\n{kind} {coupling} order {order}: errors {errs[0]:.3e} {errs[1]:.3e}, "
          f"observed order {observed:.3f}")
    assert abs(observed - (order + 1)) < 0.1, (errs, observed)


def _lag():
    from blocks import FirstOrderLag
    b = DiagramBuilder("lag")
    lag = b.add(FirstOrderLag("lag", tau_s=0.1))
    b.export_input(lag.u, "u")
    b.export_output(lag.y, "y")
    return b.build()


def _settling_source(kind):
    """Inputs that stop changing: a step, a ramp clipped to a constant."""
    from blocks import Saturation
    from blocks.sources import Ramp, Step
    b = DiagramBuilder("src")
    if kind == "step":
        y = b.add(Step("step", time_s=0.1, final=1.0)).y
    else:
        ramp, sat = b.add(Ramp("r", 5.0)), b.add(Saturation("sat", 0.0, 1.0))
        b.connect(ramp.y, sat.u)
        y = sat.y
    b.export_output(y, "y")
    return b.build()


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("coupling", ["jacobi", "gauss_seidel"])
@pytest.mark.parametrize("source", ["step", "clipped_ramp"])
def test_interpolating_fmi2_fmu_follows_inputs_that_stop_changing(tmp_path, source, coupling,
                                                                  order):
    """The exported FMI 2 FMU with input derivatives equals the native subsystem also when its
    input stops changing: the FMU holds u at the polynomial's end-of-step value, so the master
    sets the (unchanged) input again after a step with derivatives.  Before: the FMU kept the
    extrapolated value (y -> 2 for a unit step, order 1; the fmi.md example 98 % off)."""
    path = export_fmu(_lag(), tmp_path / "lag.fmu", "2.0", "cs", step=1e-3)
    out = []
    for sub in (load_fmu(path, "lag"), DiagramSubsystem(_lag(), solver="rk4", dt=1e-3)):
        src = DiagramSubsystem(_settling_source(source), solver="rk4", dt=1e-3)
        c = Jacobi() if coupling == "jacobi" else GaussSeidel(["lag", "src"])
        master = MasterScheduler([src, sub], [("src.y", "lag.u")], 1e-2, coupling=c,
                                 extrapolation=order)
        out.append(master.run(0.5)["lag.y"])
    assert np.max(np.abs(out[0] - out[1])) < 1e-12


def test_iterative_coupling_of_fmus_equals_native_and_differs_from_jacobi(files):
    """Interpolating FMUs get the iterate through input derivatives; FMUs that hold their
    inputs get the end-of-step iterate (before: the start value, i.e. the Jacobi
    zero-order-hold result to the last bit, at six sweeps per step)."""
    e_nat, nat, _ = _run("native", files, Iterative("newton"), 2)
    e_fmu, fmu, _ = _run("fmu", files, Iterative("newton"), 2)
    diff = np.max(np.abs(nat["m2.x2"] - fmu["m2.x2"]))
    print(f"\ninterpolating FMUs vs native, Newton, order 2: max |dx2| {diff:.2e}, "
          f"errors {e_nat:.3e} / {e_fmu:.3e}")
    assert diff < 1e-9  # measured 4e-11
    with pytest.warns(CosimWarning, match=r"'m2.fc' \(1 -> 0\)"):
        e_held, held, _ = _run("generated_held", files, Iterative("newton"), 1)
    with pytest.warns(CosimWarning):
        e_ref, ref, _ = _run("native_held", files, Iterative("newton"), 1)
    _, jac, _ = _run("generated_held", files, Jacobi(), 0)
    same = max(np.max(np.abs(held[k] - ref[k])) for k in ("m1.fc", "m2.x2", "m2.v2"))
    apart = np.max(np.abs(held["m2.x2"] - jac["m2.x2"]))
    print(f"held-input FMUs vs native held: {same:.2e}; vs Jacobi ZOH: {apart:.2e}; "
          f"errors iterative {e_held:.3e}, sweeps {held.diagnostics['iterations_per_step_mean']}")
    assert same < 1e-8  # measured 6.3e-10 (m1.fc ~ 1e3 N)
    assert apart > 1e-3  # a different (implicit) coupling, not the Jacobi result
    assert held.diagnostics["macro"]["residual"].max() < 1e-6


def test_newton_keeps_its_jacobian_across_steps():
    def run(**kw):
        coupling = Iterative("newton", **kw)
        err, res, master = _run("native", None, coupling, 3, t_end=0.2)
        return err, res, coupling
    err, res, c = run()
    assert c.jacobians == 1  # linear coupling: the first one stays exact
    assert c.jacobian_steps == 3  # one extra step per (subsystem, source read): m1 x2, v2; m2 fc
    assert res.diagnostics["iterations_per_step_mean"] <= 2.01  # predictor + one correction
    err_fresh, res_fresh, c2 = run(reuse_jacobian=False)
    # every step after the high-order start (3 steps by waveform relaxation) makes its own
    assert c2.jacobians == 200 - 3 and err_fresh == pytest.approx(err, rel=1e-6)


def test_newton_gives_unread_inputs_no_jacobian_column():
    """m1 exports an input 'spare' that only a Terminator reads, fed by m2.x2 too."""
    from blocks import Terminator
    from blocks.math import Gain

    def m2_plus():
        b = DiagramBuilder("m2")
        inner = b.add(m2_diagram())
        g = b.add(Gain("copy", 1.0, input_unit="m"))
        b.export_input(inner.input("fc"), "fc")
        b.connect(inner.output("x2"), g.u)
        b.export_output(inner.output("x2"), "x2")
        b.export_output(inner.output("v2"), "v2")
        b.export_output(g.y, "xc")
        return b.build()

    def m1_plus():
        b = DiagramBuilder("m1")
        inner = b.add(m1_diagram())
        t = b.add(Terminator("unused", unit="m"))
        for p in ("x2", "v2"):
            b.export_input(inner.input(p), p)
        b.export_input(t.u, "spare")
        for p in ("fc", "x1", "v1"):
            b.export_output(inner.output(p), p)
        return b.build()
    subs = [DiagramSubsystem(m1_plus(), solver="rk4", dt=1e-4),
            DiagramSubsystem(m2_plus(), solver="rk4", dt=1e-4)]
    assert subs[0].unread_inputs() == {"spare"}
    coupling = Iterative("newton")
    MasterScheduler(subs, CONNECTIONS + [("m2.xc", "m1.spare")], H, coupling=coupling,
                    extrapolation=1).run(0.01)
    assert coupling.jacobian_steps == 3  # not 4: m2.xc feeds only the unread input


def test_construction_checks_are_build_errors_in_user_words():
    subs = [DiagramSubsystem(m1_diagram(), dt=1e-4), DiagramSubsystem(m2_diagram(), dt=1e-4)]
    with pytest.raises(BuildError, match=r"GaussSeidel order \['m2', 'm3'\] names subsystem\(s\) "
                                         r"'m3' that the master does not have; its subsystems "
                                         r"are m1, m2"):
        MasterScheduler(subs, CONNECTIONS, H, coupling=GaussSeidel(["m2", "m3"]))
    with pytest.raises(BuildError, match=r"does not name subsystem\(s\) 'm1'"):
        MasterScheduler(subs, CONNECTIONS, H, coupling=GaussSeidel(["m2"]))
    slow = [DiagramSubsystem(m1_diagram(), dt=1e-4),
            DiagramSubsystem(m2_diagram(), dt=1e-4, rate=2)]
    with pytest.raises(RateError, match=r"iterative coupling .* every subsystem must step at "
                                        r"the macro step: 'm2' \(rate 2\)"):
        MasterScheduler(slow, CONNECTIONS, H, coupling=Iterative())


def test_high_order_start_that_cannot_run_warns_at_construction():
    slow = [DiagramSubsystem(m1_diagram(), dt=1e-4),
            DiagramSubsystem(m2_diagram(), dt=1e-4, rate=2)]
    with pytest.warns(CosimWarning, match="high_order_start cannot run .*rate above 1.*"
                                          "extrapolation order 3 gives global order 2, not 4"):
        MasterScheduler(slow, CONNECTIONS, H, extrapolation=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MasterScheduler(slow, CONNECTIONS, H, extrapolation=3, high_order_start=False)
        MasterScheduler(slow, CONNECTIONS, H, extrapolation=1)


def test_explicit_order_a_held_subsystem_cannot_follow_warns_the_default_does_not():
    held = [DiagramSubsystem(m1_diagram(), dt=1e-4, hold_inputs=True),
            DiagramSubsystem(m2_diagram(), dt=1e-4)]
    with pytest.warns(CosimWarning, match=r"'m1.x2' \(2 -> 0\), 'm1.v2' \(2 -> 0\)"):
        m = MasterScheduler(held, CONNECTIONS, H, extrapolation=2)
    assert m.input_orders[("m1", "x2")] == 0 and m.input_orders[("m2", "fc")] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MasterScheduler(held, CONNECTIONS, H)  # default order 1: lowered where needed


@pytest.mark.parametrize("coupling", ["jacobi", "gauss_seidel"])
@pytest.mark.parametrize("kind", ["fmu", "generated", "generated_held"])
def test_compiled_loop_equals_the_python_loop(files, kind, coupling):
    for order in (0, 1, 2, 3):
        runs = {}
        for compiled in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", CosimWarning)
                _, runs[compiled], _ = _run(kind, files, COUPLINGS[coupling](), order,
                                            compiled=compiled)
        py, c = runs[False], runs[True]
        assert c.diagnostics["compiled"] is True
        assert "compiled=False" in py.diagnostics["compiled"]
        np.testing.assert_array_equal(py.time, c.time)
        for k in py.signals:
            scale = 1.0 + np.max(np.abs(py[k]))
            diff = np.max(np.abs(py[k] - c[k])) / scale
            if kind == "generated_held" or order <= 1:
                assert diff == 0.0, (k, order, diff)  # same values, same calls: bit for bit
            else:
                assert diff < 1e-12, (k, order, diff)  # divided differences: round-off
        assert len(c.diagnostics["macro"]["t"]) == len(c.time) - 1
        np.testing.assert_allclose(c.diagnostics["macro"]["t"], c.time[1:])


def test_compiled_loop_refuses_what_it_cannot_run(files):
    with pytest.raises(BuildError, match=r"compiled=True.*coupling 'iterative/anderson'"):
        MasterScheduler(_subs("fmu", files, H), CONNECTIONS, H, coupling=Iterative("anderson"),
                        compiled=True)
    # native subsystems alone: the native loop (cosim.native_loop), Jacobi and Gauss-Seidel
    MasterScheduler(_subs("native", files, H), CONNECTIONS, H, compiled=True)
    with pytest.raises(BuildError, match=r"compiled=True.*the native loop runs Jacobi"):
        MasterScheduler(_subs("native", files, H), CONNECTIONS, H, compiled=True,
                        coupling=Iterative("fixed_point"))
    res = _run("fmu", files, Iterative("anderson"), 1, t_end=0.01)[1]
    assert "iterative" in res.diagnostics["compiled"]


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("coupling", ["jacobi", "newton"])
def test_terminate_simulation_ends_every_path_after_that_point(files, compiled, coupling):
    """LimM2Stop discards the step from t = 0.25 s with fmi2Terminated."""
    if compiled and coupling == "newton":
        pytest.skip("iterative coupling runs the Python loop")
    subs = [load_fmu(files["c1"], name="m1"), load_fmu(files["stop"], name="m2")]
    master = MasterScheduler(subs, CONNECTIONS, H, coupling=COUPLINGS[coupling](),
                             extrapolation=1, compiled=compiled)
    res = master.run(1.0)
    assert res.diagnostics["compiled"] is True if compiled else True
    term = res.diagnostics["terminated"]
    assert term["by"] == "m2" and "terminateSimulation" in term["reason"]
    assert res.time[-1] == pytest.approx(0.251) and len(res.time) == 252
    assert master.terminated == term


def test_newton_uses_a_jacobian_the_subsystem_gives():
    """A subsystem's step_jacobian() replaces its finite-difference steps (here a rough
    one, zero: Newton's Broyden updates still converge to the same interface values)."""
    class Given(DiagramSubsystem):
        calls = 0

        def step_jacobian(self):
            Given.calls += 1
            return {("x2", "fc"): np.zeros((1, 1)), ("v2", "fc"): np.zeros((1, 1))}

    subs = [DiagramSubsystem(m1_diagram(), solver="rk4", dt=1e-4),
            Given(m2_diagram(), solver="rk4", dt=1e-4)]
    coupling = Iterative("newton")
    res = MasterScheduler(subs, CONNECTIONS, H, coupling=coupling, extrapolation=1).run(0.05)
    _, ref, _ = _run("native", None, Iterative("newton"), 1, t_end=0.05)
    assert Given.calls >= 1
    assert coupling.jacobian_steps == 2 * coupling.jacobians  # only m1's sources x2, v2
    assert np.max(np.abs(res["m2.x2"] - ref["m2.x2"])) < 1e-9


def test_step_control_takes_its_own_start_without_a_warning():
    """With step control the controller sizes the first steps (short history, lower order,
    down to h_min_s if needed): the high-order start does not apply, as documented."""
    from cosim import StepController
    subs = [DiagramSubsystem(m1_diagram(), dt=1e-4), DiagramSubsystem(m2_diagram(), dt=1e-4)]
    ctl = StepController(h_min_s=2e-4, grid_s=1e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = MasterScheduler(subs, CONNECTIONS, H, extrapolation=2, step_control=ctl).run(0.01)
    assert res.diagnostics["startup_sweeps"] == 0 and res.diagnostics["step_sizes_s"]


@pytest.mark.parametrize("compiled", [False, True])
def test_the_master_draws_a_progress_bar_on_a_terminal(files, compiled, monkeypatch):
    import io

    import cosim.master
    from cosim.progress import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    seen = []

    def bar(start, end, enabled):
        seen.append(Terminal())
        return ProgressBar(start, end, enabled, delay=0.0, stream=seen[-1])

    monkeypatch.setattr(cosim.master, "ProgressBar", bar)
    for progress in (True, False):
        _, res, _ = _run("fmu", files, Jacobi(), 0, compiled=compiled, progress=progress)
        assert (res.diagnostics["compiled"] is True) is compiled
        text = seen[-1].getvalue()
        assert ("of 1 s" in text) is progress, text


@pytest.mark.parametrize("kind", ["native", "native_held", "fmu", "generated", "generated3",
                                  "generated_held"])
def test_newton_keeps_its_jacobian_on_a_linear_coupling_for_every_kind(files, kind):
    """The LIM pair is linear: its interface Jacobian is the same at every macro step, so
    Newton computes it once and converges in two sweeps per step, whatever the subsystems
    (natively, and FMUs that hold or interpolate their inputs, FMI 2 and 3).  FMUs that
    interpolate report their outputs at the step end with the inputs of the step start:
    the Jacobian's sensitivities must settle them at the end, as the sweep does (it took a
    Jacobian at 981 of 1000 steps and 4.0 sweeps per step before)."""
    coupling = Iterative("newton")
    err, res, master = _run(kind, files, coupling, 1, t_end=0.3)
    sweeps = np.mean(master.counters.iterations)
    assert coupling.jacobians <= 2 and sweeps <= 2.05, (coupling.jacobians, sweeps)
    # the same converged coupling as with a fresh Jacobian at every step
    fresh = Iterative("newton", reuse_jacobian=False)
    err_fresh, _, _ = _run(kind, files, fresh, 1, t_end=0.3)
    assert fresh.jacobians >= 299
    assert err == pytest.approx(err_fresh, rel=1e-6)


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("kind", ["native", "native_held", "fmu", "generated", "generated3",
                                  "generated_held"])
def test_newtons_assembled_jacobian_is_the_sweeps_jacobian(files, kind, order):
    """The oracle: the interface Jacobian Newton assembles from single-subsystem steps and
    feedthrough Jacobians equals the Jacobian of the whole sweep (every subsystem stepped,
    the point settled) by finite differences, at a later step of the run, for every kind
    of subsystem and extrapolation order.  (With FMUs that report their outputs at the
    step end with the inputs of the step start, the assembled one lacked the feedthrough
    of the end inputs: entries of 100 and 1e6 where the sweep's are 1.7e-3.)"""
    coupling = Iterative("newton", reuse_jacobian=False)
    master = MasterScheduler(_subs(kind, files, H), CONNECTIONS, H, coupling=coupling,
                             extrapolation=order, high_order_start=False)
    got: list = []
    assembled = coupling._jacobian

    def spy(m, snap, t0, h, z):
        J = assembled(m, snap, t0, h, z)
        if t0 == 5 * m.H and not got:
            y0 = np.array(coupling._sweep(m, snap, t0, h, z, False))  # a list of floats
            Js = np.zeros_like(J)
            for j in range(z.size):
                e = 1e-6 * max(1.0, abs(z[j]))
                zp = z.copy()
                zp[j] += e
                Js[:, j] = (np.array(coupling._sweep(m, snap, t0, h, zp, False)) - y0) / e
            got.append((J, Js))
        return J
    coupling._jacobian = spy
    master.run(8 * H)
    (J, Js), = got
    scale = np.maximum(np.abs(Js), 1e-6)
    assert np.max(np.abs(J - Js) / scale) < 1e-2, (J, Js)

