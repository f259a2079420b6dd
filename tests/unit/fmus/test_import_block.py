"""fmus.fmu_block: a Model Exchange FMU as a block, tested without and with the scheduler."""

from __future__ import annotations

import numpy as np
import pytest

from blocks.sources import Constant
from cosim import DiagramBuilder, Simulator
from cosim.errors import ContextError, ParameterError
from cosim.testing import BlockHarness

pytest.importorskip("fmpy")

from fmus import FMU, FMUBlock, load_fmu  # noqa: E402


def _osc_diagram(block, force=0.0):
    b = DiagramBuilder("d")
    src = b.add(Constant("src", force, unit="N"))
    b.add(block)
    b.connect(src.y, block.input("F"))
    return b.build()


def test_ports_states_parameters_and_events_come_from_the_model_description(fmu_files):
    osc = load_fmu(fmu_files["Oscillator"], name="osc")
    assert isinstance(osc, FMUBlock)
    assert {n: p.unit_text for n, p in osc.inputs.items()} == {"F": "N"}
    outs = {n: (p.unit_text, p.dtype.kind, p.depends_on) for n, p in osc.outputs.items()}
    assert outs == {"x": ("m", "f", frozenset()), "v": ("m/s", "f", frozenset()),
                    "a": ("m/s2", "f", frozenset({"F"})), "x_mm": ("mm", "f", frozenset()),
                    "phase": (None, "i", frozenset()), "stepped": (None, "b", frozenset())}
    assert [h.name for h in osc.continuous_states] == ["x"] and osc.xh.size == 2
    assert list(osc.x0) == [0.1, 0.0]
    assert {n: p.default for n, p in osc.parameters.items()} == {
        "m": 1.0, "k": 40.0, "c": 0.4, "t_step": 0.5, "F_step": 2.0}
    assert osc.zero_crossings == []
    assert [e.name for e in osc.dynamic_time_events] == ["fmu_event"]
    assert osc.opaque_states[0].save is not None  # canGetAndSetFMUstate
    ball = load_fmu(fmu_files["BouncingBall"])
    assert ball.name == "BouncingBall"
    assert [z.name for z in ball.zero_crossings] == ["indicator_0"]
    assert "ModelExchange: Oscillator" in osc.describe_fmu()


def test_derivatives_and_outputs_without_the_scheduler(fmu_files):
    osc = load_fmu(fmu_files["Oscillator"], name="osc")
    h = BlockHarness(osc)
    h.set_input("F", 3.0)
    h.set_state("x", [0.2, -1.0])
    dx = h.derivatives()
    np.testing.assert_allclose(dx, [-1.0, 3.0 - 40 * 0.2 - 0.4 * -1.0], rtol=1e-15)
    assert h.output("a") == pytest.approx(dx[1], rel=1e-15)
    assert h.output("x_mm") == (200.0,)[0] and h.output("phase") == 0
    h.set_input("F", 0.0)  # a feedthrough output follows its input at the same state
    assert h.output("a") == pytest.approx(-8.0 + 0.4, rel=1e-15)


def test_context_parameters_reach_the_fmu_at_initialization(fmu_files):
    osc = load_fmu(fmu_files["Oscillator"], name="osc", parameters={"k": 10.0})
    h = BlockHarness(osc)
    h.set_state("x", [1.0, 0.0])
    assert h.derivatives()[1] == pytest.approx(-10.0)
    h2 = BlockHarness(load_fmu(fmu_files["Oscillator"], name="osc"))
    h2.ctx.set_param("osc.k", 25.0)
    h2.set_state("x", [1.0, 0.0])
    assert h2.derivatives()[1] == pytest.approx(-25.0)
    with pytest.raises(ParameterError, match="outside its range"):
        h2.ctx.set_param("osc.m", -1.0)


def test_values_are_pushed_only_when_they_change(fmu_files):
    log = []
    osc = load_fmu(fmu_files["Oscillator"], name="osc", call_log=log.append)
    h = BlockHarness(osc)
    h.set_input("F", 1.0)

    def everything():
        return [h.derivatives().tolist(), h.output("x"), h.output("a"), h.output("phase")]
    first = everything()
    log.clear()
    assert everything() == first
    assert log == []  # same point: answered from the last evaluations
    h.set_time(0.1)
    h.derivatives()
    calls = [line.split("(")[0] for line in log]
    assert calls == ["fmi2SetTime", "fmi2GetDerivatives", "fmi2GetReal"], calls


def test_jacobian_from_directional_derivatives_and_by_differences(fmu_files):
    osc = load_fmu(fmu_files["Oscillator"], name="osc")
    h = BlockHarness(osc)
    h.set_state("x", [0.3, 0.1])
    J = osc.jacobian(h.ctx)
    np.testing.assert_array_equal(J["A"], [[0, 1], [-40, -0.4]])
    np.testing.assert_array_equal(J["B"], [[0], [1]])
    assert J["outputs"] == ["x", "v", "a", "x_mm"]
    np.testing.assert_array_equal(J["C"], [[1, 0], [0, 1], [-40, -0.4], [1000, 0]])
    np.testing.assert_array_equal(J["D"], [[0], [0], [1], [0]])
    dec = load_fmu(fmu_files["Decay3"], name="dec")  # FMI 3, no directional derivatives
    hd = BlockHarness(dec)
    Jd = dec.jacobian(hd.ctx)
    np.testing.assert_allclose(Jd["A"], [[-2.0]], rtol=1e-8)
    np.testing.assert_allclose(Jd["B"], [[1.0]], rtol=1e-8)
    np.testing.assert_allclose(Jd["C"], [[1.0]], rtol=1e-8)


def test_snapshot_and_restore_roll_the_fmu_back(fmu_files):
    osc = load_fmu(fmu_files["Oscillator"], name="osc")
    d = _osc_diagram(osc, 1.0)
    sim = Simulator(d, solver="rk4", dt=1e-3, record=["osc.phase"])
    sim.advance_to(0.4)
    snap = sim.ctx.snapshot()
    sim.advance_to(0.8)  # through the time event at 0.5 (phase 0 -> 1)
    x_a = sim.ctx.xc.copy()
    assert sim.ctx.output(osc.output("phase")) == 1
    sim.ctx.restore(snap)
    sim.advance_to(0.8)
    np.testing.assert_array_equal(sim.ctx.xc, x_a)
    assert [e for e in osc.events] == [(0.5, "time")]


def test_an_fmu_without_state_saving_refuses_a_snapshot(fmu_files):
    faulty = load_fmu(fmu_files["Faulty"], name="f", interface="me")
    h = BlockHarness(faulty)
    h.derivatives()
    with pytest.raises(ContextError, match="block 'f' keeps state 'fmu' outside the context "
                                           "and cannot save it"):
        h.ctx.snapshot()


def test_new_contexts_reuse_the_instance_with_reset(fmu_files):
    osc = load_fmu(fmu_files["Oscillator"], name="osc")
    d = _osc_diagram(osc, 0.5)
    runs = [Simulator(d, solver="rk4", dt=1e-3).run(1.0)["osc.x"] for _ in range(3)]
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(runs[0], runs[2])
    assert osc.inst.generation == 1  # one instantiation, reset between runs
    ctx = d.create_context()
    ctx.set_state(osc.xh, [0.0, 1.0])  # the context's own initial state is used
    r = Simulator(d, ctx, solver="rk4", dt=1e-3).run(0.01)
    assert r["osc.x"][0] == 0.0 and r["osc.v"][0] == 1.0


def test_two_instances_of_one_fmu_are_independent(fmu_files):
    fmu = FMU(fmu_files["Oscillator"])
    b = DiagramBuilder("two")
    src = b.add(Constant("src", 0.0, unit="N"))
    stiff, soft = b.add(fmu.block("stiff", parameters={"k": 400.0})), b.add(fmu.block("soft"))
    b.connect(src.y, stiff.input("F"))
    b.connect(src.y, soft.input("F"))
    res = Simulator(b.build(), solver="rk4", dt=1e-3).run(0.4)
    w_stiff = np.sqrt(400 - 0.04)  # damped frequencies: x ~ 0.1 cos(w t) early on
    w_soft = np.sqrt(40 - 0.04)
    t = res.time
    assert np.max(np.abs(res["stiff.x"] - 0.1 * np.exp(-0.2 * t) * (
        np.cos(w_stiff * t) + 0.2 / w_stiff * np.sin(w_stiff * t)))) < 1e-9
    assert np.max(np.abs(res["soft.x"] - 0.1 * np.exp(-0.2 * t) * (
        np.cos(w_soft * t) + 0.2 / w_soft * np.sin(w_soft * t)))) < 1e-9


def test_a_tunable_parameter_changed_during_a_run_reaches_the_fmu(fmu_files):
    osc = load_fmu(fmu_files["Oscillator"], name="osc")
    sim = Simulator(_osc_diagram(osc), solver="rk4", dt=1e-3, record=False)
    sim.advance_to(0.2)
    sim.ctx.set_param("osc.k", 100.0)
    sim.advance_to(0.3)
    # seen by the monitor after the next accepted step, handled at that step's end
    assert [(round(t, 9), k) for t, k in osc.events] == [(0.201, "step")]
    x, v = sim.ctx.xc
    assert osc.derivatives(sim.ctx)[1] == pytest.approx(-100.0 * x - 0.4 * v, rel=1e-12)


def test_terminate_request_and_error_status_from_an_me_fmu(fmu_files):
    from cosim.errors import StepError
    from fmus.errors import FMUCallError
    faulty = load_fmu(fmu_files["Faulty"], name="f", interface="me")
    b = DiagramBuilder("d")
    src = b.add(Constant("src", 1000.0))
    b.add(faulty)
    b.connect(src.y, faulty.input("u"))
    with pytest.raises(FMUCallError, match="u = 1000 exceeds u_max = 100") as exc:
        Simulator(b.build(), solver="rk4", dt=1e-3).run(0.01)
    assert isinstance(exc.value, StepError)


def test_out_of_process_me_block_gives_the_same_results(fmu_files):
    res = []
    for oop in (False, True):
        ball = load_fmu(fmu_files["BouncingBall"], name="ball", out_of_process=oop)
        b = DiagramBuilder("drop")
        b.add(ball)
        res.append((Simulator(b.build(), solver="rk4", dt=1e-3).run(0.6)["ball.h"],
                    list(ball.events)))
        ball.free()
    np.testing.assert_array_equal(res[0][0], res[1][0])
    assert res[0][1] == res[1][1] and len(res[0][1]) == 1


def test_contexts_used_alternately(fmu_files):
    """The instance follows the active context: swapped with get/set FMU state where the
    FMU can, refused with a clear error where it cannot."""
    osc = load_fmu(fmu_files["Oscillator"], name="osc")
    d = _osc_diagram(osc, 1.0)
    a, b = (Simulator(d, solver="rk4", dt=1e-3, record=["osc.phase"]) for _ in range(2))
    a.advance_to(0.3)
    b.advance_to(0.6)   # b passes the time event, a has not
    a.advance_to(0.6)
    b.advance_to(0.7)
    ref = Simulator(d, solver="rk4", dt=1e-3, record=False)
    ref.advance_to(0.6)
    np.testing.assert_array_equal(a.ctx.xc, ref.ctx.xc)
    assert a.ctx.output(osc.output("phase")) == 1
    faulty = load_fmu(fmu_files["Faulty"], name="f", interface="me")
    fd = DiagramBuilder("fd")
    c = fd.add(Constant("c", 1.0))
    fd.add(faulty)
    fd.connect(c.y, faulty.input("u"))
    fdd = fd.build()
    s1, s2 = (Simulator(fdd, solver="rk4", dt=1e-3) for _ in range(2))
    s1.advance_to(0.01)
    s2.advance_to(0.01)
    with pytest.raises(ContextError, match="left mid-run for another one, and FMU "
                                           "'Faulty.fmu' cannot save its state"):
        s1.advance_to(0.02)


# ------------------------------------------------- initialization and start values
def _init_sets(log: list, vr: int) -> list:
    """Values given to value reference ``vr`` between enter and exit initialization."""
    out, inside = [], False
    for line in log:
        if "EnterInitializationMode" in line:
            inside = True
        elif "ExitInitializationMode" in line:
            inside = False
        elif inside and "SetReal" in line and f"vr=[{vr}]" in line:
            out.append(float(line.split("value=[")[1].split("]")[0]))
    return out


def test_initialization_gets_the_connected_inputs_values_not_zeros(fmu_files):
    """F = 2.5 x fed back: the FMU is evaluated before the gain (x needs no input), so it
    first initializes with F unknown, then again (an initial check) with F = 2.5 x0."""
    from blocks.math import Gain
    log: list = []
    osc = load_fmu(fmu_files["Oscillator"], name="osc", call_log=log.append)
    b = DiagramBuilder("loop")
    b.add(osc)
    g = b.add(Gain("g", 2.5, input_unit="m", unit="N"))
    b.connect(osc.output("x"), g.u)
    b.connect(g.y, osc.input("F"))
    res = Simulator(b.build(), solver="rk4", dt=1e-3, record=["osc.a"]).run(0.01)
    assert _init_sets(log, 4)[-1] == 0.25  # F = 2.5 * x0 (x0 = 0.1) at initialization
    # a = (F - k x - c v) / m at t = 0 with that force
    assert res["osc.a"][0] == pytest.approx(0.25 - 40 * 0.1)


def test_an_unconnected_input_takes_its_start_value_or_the_start_option(fmu_files):
    osc = load_fmu(fmu_files["Oscillator"], name="osc")
    b = DiagramBuilder("free")
    b.add(osc)
    res = Simulator(b.build(), solver="rk4", dt=1e-3, record=["osc.a"]).run(0.01)
    assert res["osc.a"][0] == pytest.approx(-4.0)  # F = 0 (its start value)
    osc = load_fmu(fmu_files["Oscillator"], name="osc", start={"F": 1.5, "x": 0.2, "k": 10.0})
    b = DiagramBuilder("free")
    b.add(osc)
    res = Simulator(b.build(), solver="rk4", dt=1e-3, record=["osc.a", "osc.x"]).run(0.01)
    assert res["osc.x"][0] == 0.2 and res["osc.a"][0] == pytest.approx(1.5 - 10.0 * 0.2)


def test_start_refuses_what_fmi_does_not_let_an_importer_set(fmu_files):
    from fmus.errors import FMUConfigError
    with pytest.raises(FMUConfigError, match="no variable 'xx'.*Did you mean"):
        load_fmu(fmu_files["Oscillator"], name="osc", start={"xx": 1.0})
    with pytest.raises(FMUConfigError, match="'a' is an output with initial='calculated'"):
        load_fmu(fmu_files["Oscillator"], name="osc", start={"a": 1.0})
    with pytest.raises(FMUConfigError, match="given different values"):
        load_fmu(fmu_files["Oscillator"], name="osc", parameters={"k": 1.0}, start={"k": 2.0})
    with pytest.raises(ParameterError, match="outside its range"):
        load_fmu(fmu_files["Oscillator"], name="osc", start={"m": 0.0})
