"""The GantryCrane block: ports, outputs, derivatives, equilibrium, errors (no scheduler
except where the run-time errors need one)."""

import dataclasses

import numpy as np
import pytest

from blocks.cranes import (
    N_STATES,
    STATE_NAMES,
    STS_CRANE,
    ContainerLoad,
    GantryCrane,
    equilibrium,
    make_drives,
    make_rhs,
    make_state,
    suspended_body,
    unpack,
)
from blocks.sources import ClosedFormSource, Constant
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError, StepError
from cosim.testing import BlockHarness

I = STATE_NAMES.index
LOADED = dataclasses.replace(STS_CRANE, container=ContainerLoad())


def harness(p=LOADED, **kw):
    x = equilibrium(p, 2.0, 5.0, 18.0)
    x[I("gantry_velocity")], x[I("trolley_velocity")], x[I("hoist_velocity")] = 0.3, -1.2, 0.4
    return BlockHarness(GantryCrane("crane", p, initial_state=x, **kw)), x


def test_ports_and_units():
    c = GantryCrane("crane")
    assert {n: p.unit_text for n, p in c.inputs.items()} == {
        "gantry_force": "N", "trolley_force": "N", "hoist_force": "N",
        "gantry_velocity_ref": "m/s", "trolley_velocity_ref": "m/s",
        "hoist_velocity_ref": "m/s", "arms_12": "1", "arms_34": "1", "arm_5": "1",
        "arm_6": "1"}
    assert c.output("hoist_motor_speed").unit_text == "rad/s"
    assert c.output("state").shape == (N_STATES,)
    # only the speed references read inputs (the velocity references): no algebraic loop
    # through the drives, whose force reads the motor speed
    feed = {n for n, p in c.outputs.items() if p.depends_on}
    assert feed == {"gantry_speed_ref", "trolley_speed_ref", "hoist_speed_ref"}
    assert c.output("hoist_speed_ref").depends_on == {"hoist_velocity_ref",
                                                     "gantry_velocity_ref",
                                                     "trolley_velocity_ref"}
    assert "rope_tension" not in c.outputs


def test_outputs_are_the_state_scaled_by_the_transmissions():
    h, x = harness()
    p = LOADED
    assert h.output("gantry_motor_speed") == pytest.approx(0.3 / p.gantry_drive.travel_per_rad_m)
    assert h.output("trolley_motor_speed") == pytest.approx(
        -1.2 / p.trolley_drive.travel_per_rad_m)
    assert h.output("hoist_motor_speed") == pytest.approx(0.4 / p.hoist_drive.travel_per_rad_m)
    for name in ("gantry_position", "trolley_position", "trolley_height", "hoist_length",
                 "gantry_velocity", "trolley_velocity", "hoist_velocity"):
        assert h.output(name) == x[I(name)]
    assert (h.output("spreader_x"), h.output("spreader_y"), h.output("spreader_z")) == \
        tuple(x[4:7])
    assert np.array_equal(h.output("state"), x)
    h.set_inputs(gantry_velocity_ref=0.75, trolley_velocity_ref=-3.0, hoist_velocity_ref=1.0)
    assert h.output("gantry_speed_ref") == pytest.approx(0.75 / p.gantry_drive.travel_per_rad_m)
    assert h.output("trolley_speed_ref") == pytest.approx(
        -3.0 / p.trolley_drive.travel_per_rad_m)
    assert h.output("hoist_speed_ref") == pytest.approx(1.0 / p.hoist_drive.travel_per_rad_m)


def test_derivatives_are_the_core_with_the_inputs():
    h, x = harness()
    h.set_inputs(gantry_force=1e4, trolley_force=-2e3, hoist_force=4e5, arms_12=1.0,
                 arm_6=1.0)
    d = h.derivatives()
    expect = make_rhs(LOADED)(x.tolist(), 1e4, -2e3, 4e5, 1.0, 0.0, 0.0, 1.0)
    assert np.array_equal(d, expect)
    # arms 1, 2 and 6 commanded down: they start moving down, 3-5 stay
    dom = d[I("arm1_rate"):]
    assert dom[0] < 0 and dom[1] < 0 and dom[5] < 0 and list(dom[2:5]) == [0.0] * 3


def test_diagnostics_and_hold_forces_at_equilibrium():
    rep = {}
    x = equilibrium(LOADED, 0.0, 0.0, 20.0, report=rep)
    h = BlockHarness(GantryCrane("crane", LOADED, initial_state=x, diagnostics=True))
    T = h.output("rope_tension")
    assert T.shape == (4,) and np.allclose(T, 40e3 * 9.81 / 4, rtol=1e-12)
    assert np.array_equal(h.output("arm_contact_torque"), np.zeros(6))
    hold = h.block.hold_forces(x)
    assert hold["hoist_force"] == pytest.approx(rep["hoist_force"], rel=1e-12)
    assert abs(hold["gantry_force"]) < 1e-6 and abs(hold["trolley_force"]) < 1e-6
    # held with those forces, nothing accelerates
    h.set_inputs(hoist_force=hold["hoist_force"])
    assert np.max(np.abs(h.derivatives())) < 1e-9
    # drives built from the report start at the holding torque
    d = make_drives(LOADED, rep)["hoist"]
    hd = LOADED.hoist_drive
    assert d.x.initial[0] * hd.motors * hd.efficiency / hd.travel_per_rad_m == \
        pytest.approx(rep["hoist_force"])


def test_default_initial_state_is_the_documented_equilibrium():
    c = GantryCrane("crane")
    x = c.x.initial
    assert x[I("hoist_length")] == 20.0 and x[I("trolley_position")] == 0.0
    assert np.allclose(x, equilibrium(STS_CRANE, 0.0, 0.0, 20.0))


@pytest.mark.parametrize("edit, match", [
    (lambda x: x[:10], "initial_state must have 33 values"),
    (lambda x: np.where(np.arange(33) == I("spreader_vy"), np.nan, x), "'spreader_vy' is nan"),
    (lambda x: np.where(np.arange(33) == I("hoist_length"), 0.2, x),
     "'hoist_length' = 0.2 m is below min_rope_length_m"),
    (lambda x: np.where((np.arange(33) >= 7) & (np.arange(33) < 11), 0.0, x),
     "quaternion e0..e3 is zero"),
    (lambda x: np.where(np.arange(33) == I("spreader_y"), -3.0, x), "hit the ground"),
])
def test_bad_initial_state(edit, match):
    x = equilibrium(STS_CRANE, 0.0, 0.0, 20.0)
    with pytest.raises(ParameterError, match=match) as exc:
        GantryCrane("crane", initial_state=edit(x))
    assert str(exc.value).startswith("GantryCrane 'crane': initial_state")


def test_equilibrium_refuses_an_impossible_rope_length():
    with pytest.raises(ParameterError, match="equilibrium: .*hit the ground"):
        equilibrium(STS_CRANE, 0.0, 0.0, 45.0)


def test_unpack_and_make_state():
    x = make_state(STS_CRANE, trolley_position_m=3.0, hoist_length_m=12.0, arms_down=True,
                   velocities={"trolley_velocity": 1.5})
    s = unpack(x)
    assert s["trolley_position"] == 3.0 and s["trolley_velocity"] == 1.5
    assert s["arm3_angle"] == STS_CRANE.arms.down_angle_rad
    # ropes vertical and unstretched below the sheaves
    b = suspended_body(STS_CRANE)
    assert s["spreader_y"] + b.attachments[0][1] == pytest.approx(STS_CRANE.trolley_rest_height_m
                                                                  - 12.0)
    with pytest.raises(ParameterError, match="unpack: a crane state has 33 values"):
        unpack(np.zeros(5))
    with pytest.raises(ParameterError, match="unknown state 'trolley_speed'"):
        make_state(STS_CRANE, velocities={"trolley_speed": 1.0})


def _constant_diagram(x, hoist_force, gantry_force=0.0, p=STS_CRANE):
    b = DiagramBuilder("d")
    c = b.add(GantryCrane("crane", p, initial_state=x))
    for name, v, unit in (("gantry_force", gantry_force, "N"), ("trolley_force", 0.0, "N"),
                          ("hoist_force", hoist_force, "N"),
                          ("gantry_velocity_ref", 0.0, "m/s"),
                          ("trolley_velocity_ref", 0.0, "m/s"),
                          ("hoist_velocity_ref", 0.0, "m/s"), ("arms_12", 0.0, "1"),
                          ("arms_34", 0.0, "1"), ("arm_5", 0.0, "1"), ("arm_6", 0.0, "1")):
        # a NaN input comes from a source that computes it (a Constant refuses NaN)
        k = b.add(Constant(f"k_{name}", v, unit=unit) if v == v else
                  ClosedFormSource(f"k_{name}", lambda t, v=v: v, unit=unit))
        b.connect(k.y, getattr(c, name))
    return b.build()


@pytest.mark.parametrize("hoist_force, gantry_force, match", [
    (3e5, 0.0, r"block 'crane' at t = [0-9.]+ s: hoist two-blocked"),
    (0.0, 0.0, r"block 'crane' at t = [0-9.]+ s: the spreader hit the ground"),
    (1e5, float("nan"), r"block 'crane' at t = 0 s: the derivative of 'gantry_velocity' "
                        "is not finite"),
])
def test_run_time_errors_name_the_block_and_the_time(hoist_force, gantry_force, match):
    x = equilibrium(STS_CRANE, 0.0, 0.0, 3.0 if hoist_force > 2e5 else 35.0)
    sim = Simulator(_constant_diagram(x, hoist_force, gantry_force), solver="rk4", dt=0.005,
                    record=False)
    with pytest.raises(StepError, match=match):
        sim.run(60.0)
