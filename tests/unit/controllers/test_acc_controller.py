"""ACCController without the scheduler: the seed's law, the inversion, switching, limits.

Hand-computed expectations use the same formulas as the module docstring; the model is a
small linear engine map so the inverse can be checked by hand too.
"""

import dataclasses
import math

import numpy as np
import pytest

from blocks.controllers import ACCController, ACCSettings, DrivelineModel, EngineMap
from blocks.controllers.acc import check_time_gap
from blocks.sources import Constant, Sine
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

T = 0.016
# a linear map: T = -20 + 200 alpha N*m at every speed (closed-throttle torque -20 N*m)
ENGINE = EngineMap([0.0, 0.5, 1.0], [50.0, 300.0, 600.0],
                   [[-20.0, -20.0, -20.0], [80.0, 80.0, 80.0], [180.0, 180.0, 180.0]])
MODEL = DrivelineModel(engine=ENGINE, mass_kg=1500.0, wheel_radius_m=0.3, final_drive=4.0,
                       engine_inertia_kg_m2=0.2, wheel_inertia_kg_m2=3.0, efficiency=0.9,
                       drag_area_m2=0.6, rolling_resistance=0.01, max_brake_torque_nm=5000.0)
SEED_LAW = ACCSettings(jerk_limit=None)  # the seed's law: no jerk limit


def harness(settings=SEED_LAW, **inputs):
    h = BlockHarness(ACCController("acc", T, MODEL, settings))
    base = dict(range=50.0, range_rate=0.0, target_valid=1.0, speed=20.0, set_speed=30.0,
                gear_ratio=1.0)
    base.update(inputs)
    h.set_inputs(**base)
    return h


def out(h):
    return {k: h.output(k) for k in ("throttle", "brake_torque", "accel_request",
                                     "engine_torque_request", "mode", "braking")}


def wheel_force(a, v, ratio=4.0):
    m_eff = 1500.0 + (3.0 + 0.2 * ratio ** 2) / 0.09
    return m_eff * a + 0.5 * 1.2 * 0.6 * v * v + 1500.0 * 9.81 * 0.01, m_eff


# ------------------------------------------------------------------ ports, checks


def test_the_controller_imports_no_vehicle_module():
    """It must run alone (another process over CAN, an exported FMU): numbers in, no plant."""
    import ast
    import pathlib

    import blocks.controllers as pkg
    for path in pathlib.Path(pkg.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = ["." * node.level + (node.module or "")]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            # from the rest of blocks only the discrete-time and parameter-check helpers
            allowed = ("..discrete", "..checks")
            for n in names:
                assert "vehicle" not in n and (not n.startswith("..") or n in allowed), \
                    f"{path.name} imports {n}"


def test_ports_units_and_sampling():
    blk = ACCController("acc", T, MODEL)
    assert list(blk.inputs) == ["range", "range_rate", "target_valid", "speed", "set_speed",
                                "gear_ratio"]
    assert list(blk.outputs) == ["throttle", "brake_torque", "accel_request",
                                 "engine_torque_request", "mode", "braking"]
    units = {p.name: p.unit_label() for p in [*blk.inputs.values(), *blk.outputs.values()]}
    assert units["range"] == "m" and units["range_rate"] == "m/s"
    assert units["brake_torque"] == "N*m" and units["accel_request"] == "m/s^2"
    assert units["throttle"] == "1" and units["target_valid"] == "1"
    assert blk.is_sampled and blk.periodic_updates[0].period == 16_000_000
    assert blk.output("throttle").depends_on is None  # reads every input at its hits
    with_w = ACCController("acc", T, MODEL, engine_speed_input=True)
    assert with_w.input("engine_speed").unit_label() == "rad/s"


@pytest.mark.parametrize("gap", [0.7, 2.3])
def test_time_gap_outside_iso15622_is_rejected(gap):
    with pytest.raises(ParameterError, match=r"time gap .* outside the ISO 15622 range "
                                             r"\[0.8, 2.2\] s"):
        ACCSettings(time_gap_s=gap)
    assert ACCSettings(time_gap_s=gap, iso15622=False).time_gap_s == gap
    assert check_time_gap(gap, strict=False) == gap


@pytest.mark.parametrize("kw, msg", [
    (dict(max_accel_m_s2=2.5), "max_accel_m_s2 = 2.5 exceeds the ISO 15622 limit 2"),
    (dict(min_accel_m_s2=-4.0), "min_accel_m_s2 = -4 exceeds the ISO 15622 deceleration"),
    (dict(jerk_limit=3.0), "jerk_limit = 3 m/s\\^3 exceeds the ISO 15622 limit 2.5"),
    (dict(reaching_speed_m_s=0.0), "reaching_speed_m_s must be > 0"),
    (dict(boundary_layer_m=-1.0), "boundary_layer_m must be > 0"),
    (dict(min_accel_m_s2=0.5), "need min_accel_m_s2 < 0 < max_accel_m_s2"),
    (dict(hysteresis_m_s2=-0.1), "hysteresis_m_s2 must be >= 0"),
    (dict(jerk_limit="fast"), "jerk_limit must be a number"),
])
def test_settings_validation_names_the_setting(kw, msg):
    with pytest.raises(ParameterError, match=msg):
        ACCSettings(**kw)


def test_time_gap_is_a_validated_tunable_parameter():
    h = harness(range=30.0)
    before = h.output("accel_request")
    h.ctx.set_param(h.block.time_gap, 1.0)
    assert h.output("accel_request") > before  # a shorter desired gap: less braking
    with pytest.raises(ParameterError, match="acc.time_gap_s.*outside the ISO 15622 range"):
        h.ctx.set_param(h.block.time_gap, 0.5)


def test_model_and_map_validation():
    with pytest.raises(ParameterError, match="torque must increase strictly with the throttle"
                                             ".* at speed 300 rad/s"):
        EngineMap([0, 1], [100, 300], [[0, 10], [50, 5]])
    with pytest.raises(ParameterError, match=r"torque_nm must have shape .* = \(2, 3\)"):
        EngineMap([0, 1], [100, 200, 300], [[0, 1], [2, 3]])
    with pytest.raises(ParameterError, match="throttle must lie in \\[0, 1\\]"):
        EngineMap([0, 2], [100, 200], [[0, 1], [2, 3]])
    with pytest.raises(ParameterError, match="efficiency must lie in \\(0, 1\\]"):
        dataclasses.replace(MODEL, efficiency=1.2)
    with pytest.raises(ParameterError, match="mass_kg must be > 0"):
        dataclasses.replace(MODEL, mass_kg=0.0)
    with pytest.raises(ParameterError, match="ACCController 'acc': period_s must be a positive"):
        ACCController("acc", 0.0, MODEL)
    with pytest.raises(ParameterError, match="model must be a DrivelineModel"):
        ACCController("acc", T, {"mass_kg": 1500})


def test_engine_map_inverse_round_trips():
    speeds = np.linspace(0.0, 700.0, 15)
    for w in speeds:
        for alpha in (0.0, 0.1, 0.37, 0.5, 0.9, 1.0):
            assert ENGINE.throttle_for(ENGINE.torque(alpha, w), w) == pytest.approx(alpha,
                                                                                    abs=1e-12)
    assert ENGINE.throttle_for(1e4, 300.0) == 1.0 and ENGINE.throttle_for(-1e4, 300.0) == 0.0
    assert ENGINE.closed_throttle_torque(250.0) == -20.0


# ---------------------------------------------------------------------- the law


def test_spacing_law_in_the_boundary_layer():
    # v = 20, t_h = 1.5, d0 = 5: d_des = 35; range 33 -> s = 2, sat(s/Phi) = 0.5
    h = harness(range=33.0, range_rate=-1.0)
    a = (-1.0 - 3.0 * 0.5) / 1.5
    o = out(h)
    assert o["accel_request"] == pytest.approx(a, rel=1e-14)
    assert o["mode"] == 1.0


def test_spacing_law_saturates_outside_the_layer_and_is_clipped():
    h = harness(range=80.0, range_rate=0.3)  # far: s = -45 -> sat = -1
    assert h.output("accel_request") == pytest.approx((0.3 + 3.0) / 1.5 if (0.3 + 3.0) / 1.5
                                                      < 1.0 else 1.0)
    assert h.output("accel_request") == 1.0  # 2.2 clipped to +1 (the seed's limit)
    h.set_input("range", 10.0)  # s = 25 -> sat = +1: (0.3 - 3)/1.5 = -1.8
    assert h.output("accel_request") == pytest.approx(-1.8, rel=1e-14)
    h.set_input("range_rate", -5.0)  # (-5 - 3)/1.5 = -5.33 -> clipped to -2.5
    assert h.output("accel_request") == -2.5


def test_cruise_without_target_and_min_selection():
    h = harness(target_valid=0.0, range=1.0, speed=28.0)  # range ignored without a target
    assert h.output("accel_request") == pytest.approx(0.4 * 2.0, rel=1e-14)
    assert h.output("mode") == 0.0
    # a target that allows more than cruise: the cruise law is chosen (min)
    h.set_inputs(target_valid=1.0, range=120.0, range_rate=5.0)
    assert h.output("mode") == 0.0 and h.output("accel_request") == pytest.approx(0.8)
    # at the set speed, the target beyond the desired 50 m: cruise (a_f = +2 > a_c = 0)
    h.set_inputs(speed=30.0, set_speed=30.0, range=60.0, range_rate=0.0)
    assert h.output("mode") == 0.0 and h.output("accel_request") == 0.0
    # closer than desired: following (s = 5 m, a_f = -2)
    h.set_inputs(range=45.0)
    assert h.output("mode") == 1.0 and h.output("accel_request") == pytest.approx(-2.0)


@pytest.mark.parametrize("v, jerk", [(25.0, 2.5), (3.0, 5.0), (12.5, 3.75)])
def test_iso_jerk_limit_per_sample(v, jerk):
    h = harness(ACCSettings(), range=1.0, range_rate=-10.0, speed=v, set_speed=v)
    assert h.output("accel_request") == pytest.approx(-jerk * T, rel=1e-12)
    h.set_state("a_prev", -1.0)
    assert h.output("accel_request") == pytest.approx(-1.0 - jerk * T, rel=1e-12)


# --------------------------------------------------------------- inversion, switching


def test_throttle_inverts_the_engine_map_for_the_desired_force():
    h = harness(range=33.0, range_rate=1.5)  # a = (1.5 - 1.5)/1.5 = 0
    o = out(h)
    assert o["accel_request"] == pytest.approx(0.0, abs=1e-15)
    f, _ = wheel_force(0.0, 20.0)
    t_des = f * 0.3 / (0.9 * 4.0)
    assert o["engine_torque_request"] == pytest.approx(t_des, rel=1e-14)
    assert ENGINE.torque(o["throttle"], 20.0 * 4.0 / 0.3) == pytest.approx(t_des, rel=1e-12)
    assert o["brake_torque"] == 0.0 and o["braking"] == 0.0


def test_brake_torque_is_the_force_below_engine_braking():
    h = harness(range=10.0, range_rate=0.3)  # a = -1.8
    o = out(h)
    f, _ = wheel_force(-1.8, 20.0)
    f0 = 0.9 * 4.0 / 0.3 * (-20.0)
    assert o["braking"] == 1.0 and o["throttle"] == 0.0
    assert o["brake_torque"] == pytest.approx((f0 - f) * 0.3, rel=1e-12)


def _cruise_accel_for(x_band, v=20.0, hyst=0.1):
    """The cruise-mode acceleration that puts F_des at F0 + x_band * band."""
    f0 = 0.9 * 4.0 / 0.3 * (-20.0)
    f_res, m_eff = wheel_force(0.0, v)
    return (f0 + x_band * m_eff * hyst - f_res) / m_eff


@pytest.mark.parametrize("x, start, expect", [
    (-0.5, 0.0, 0.0),  # inside the band from throttle: stays in throttle mode
    (-0.5, 1.0, 1.0),  # inside the band from brake: stays braking (coasting, no torque)
    (+0.5, 1.0, 1.0),
    (+1.5, 1.0, 0.0),  # above the band: leaves braking
    (-1.5, 0.0, 1.0),  # below the band: starts braking
])
def test_throttle_brake_hysteresis(x, start, expect):
    a = _cruise_accel_for(x)
    h = harness(target_valid=0.0, speed=20.0, set_speed=20.0 + a / 0.4)
    h.set_state("braking", start)
    o = out(h)
    assert o["accel_request"] == pytest.approx(a, rel=1e-9)
    assert o["braking"] == expect
    if expect:
        assert o["throttle"] == 0.0
    else:
        assert o["brake_torque"] == 0.0
    if expect and x > 0.0:
        assert o["brake_torque"] == 0.0  # above F0 in the band: coasting on the engine brake
    if expect and x < 0.0:  # below F0: the brake adds the difference, (F0 - F_des) R
        assert o["brake_torque"] == pytest.approx(-x * 0.1 * wheel_force(0, 0)[1] * 0.3,
                                                  rel=1e-9)


def test_never_throttle_and_brake_together():
    rng = np.random.default_rng(7)
    h = harness(ACCSettings())
    n_brake = n_throttle = 0
    for _ in range(3000):
        h.set_inputs(range=rng.uniform(-2, 160), range_rate=rng.uniform(-15, 10),
                     target_valid=float(rng.random() < 0.8), speed=rng.uniform(0, 40),
                     set_speed=rng.uniform(0, 40), gear_ratio=rng.choice([0.0, 0.8, 1.5, 3.5]))
        for k in ("a_prev", "braking", "hold"):
            h.set_state(k, rng.uniform(-2.5, 1.0) if k == "a_prev" else float(rng.random() < .5))
        o = out(h)
        assert not (o["throttle"] > 0.0 and o["brake_torque"] > 0.0), o
        assert 0.0 <= o["throttle"] <= 1.0 and 0.0 <= o["brake_torque"] <= 5000.0
        assert -2.5 <= o["accel_request"] <= 1.0
        n_brake += o["brake_torque"] > 0
        n_throttle += o["throttle"] > 0
    assert n_brake > 300 and n_throttle > 300  # both branches exercised


def test_neutral_gear_brakes_only():
    h = harness(gear_ratio=0.0, range=10.0, range_rate=0.3)
    o = out(h)
    f, _ = wheel_force(-1.8, 20.0, ratio=0.0)
    assert o["throttle"] == 0.0 and o["brake_torque"] == pytest.approx(-f * 0.3, rel=1e-12)
    h.set_inputs(range=60.0)
    assert h.output("throttle") == 0.0 and h.output("brake_torque") == 0.0


def test_engine_speed_input_is_used_for_the_map():
    speeds = [100.0, 400.0]
    torque = [[-10.0, -40.0], [200.0, 150.0]]
    eng = EngineMap([0.0, 1.0], speeds, torque)
    model = dataclasses.replace(MODEL, engine=eng)
    h = BlockHarness(ACCController("acc", T, model, SEED_LAW, engine_speed_input=True))
    h.set_inputs(range=33.0, range_rate=1.5, target_valid=1.0, speed=20.0, set_speed=30.0,
                 gear_ratio=1.0, engine_speed=100.0)
    t_des = h.output("engine_torque_request")
    assert eng.torque(h.output("throttle"), 100.0) == pytest.approx(t_des, rel=1e-12)
    h.set_input("engine_speed", 400.0)
    assert eng.torque(h.output("throttle"), 400.0) == pytest.approx(t_des, rel=1e-12)


# --------------------------------------------------------------- standstill hold


def test_standstill_hold_and_release():
    st = ACCSettings()
    h = harness(st, speed=0.0, range=5.5, range_rate=0.0, set_speed=25.0)
    o = out(h)  # at rest behind a stopped target within d0 + window: hold
    assert o["brake_torque"] == st.standstill_brake_torque_nm and o["throttle"] == 0.0
    assert o["accel_request"] == 0.0
    h.update()
    assert h.state("hold") == 1.0
    h.set_inputs(range_rate=1.0)  # the target moves, but is still within the window
    assert h.output("brake_torque") == st.standstill_brake_torque_nm
    h.set_inputs(range=6.5, range_rate=0.3)  # out of the window, but slower than 0.5 m/s
    assert h.output("brake_torque") == st.standstill_brake_torque_nm
    h.set_inputs(range_rate=1.0)  # out of the window and driving off: release
    assert h.output("brake_torque") == 0.0 and h.output("throttle") > 0.0


def test_hold_stops_at_the_comfort_deceleration_before_rest():
    st = ACCSettings(jerk_limit=None)
    h = harness(st, speed=0.3, range=5.4, range_rate=-0.3)
    assert h.output("accel_request") == -st.stop_decel_m_s2
    assert h.output("brake_torque") < st.standstill_brake_torque_nm


# ------------------------------------------------------------------ in a diagram


def test_outputs_are_held_between_16_ms_hits():
    b = DiagramBuilder("d")
    acc = b.add(ACCController("acc", T, MODEL))
    srcs = dict(range=Constant("range", 34.0, unit="m"),
                range_rate=Sine("range_rate", amplitude=1.0, frequency_hz=0.5, unit="m/s"),
                target_valid=Constant("valid", 1.0, unit="1"),
                speed=Constant("speed", 20.0, unit="m/s"),
                set_speed=Constant("set_speed", 30.0, unit="m/s"),
                gear_ratio=Constant("gear", 1.0, unit="1"))
    for port, src in srcs.items():
        b.connect(b.add(src).output("y"), acc.input(port))
    res = Simulator(b.build(), solver="ab3", dt=0.008, record=["acc.throttle",
                                                                "acc.accel_request"]).run(1.0)
    t, a = res.time, res["acc.accel_request"]
    changes = t[1:][np.diff(a) != 0]
    assert changes.size == 62  # every hit in (0, 1] s
    ticks = np.round(changes * 1e9).astype(np.int64)
    assert np.all(ticks % 16_000_000 == 0)  # changes only at the controller's hits
    assert math.isclose(t[1] - t[0], 0.008)


def test_disabled_controller_requests_nothing_and_starts_clean():
    """enable < 0.5 (inputs not valid yet, an ECU over CAN): no law on held zeros."""
    st = ACCSettings()
    h = BlockHarness(ACCController("acc", T, MODEL, st, enable_input=True))
    assert h.block.enable.unit_text == "1"
    # what a bus bridge shows before its first frames: zeros (at rest, no set speed)
    h.set_inputs(range=0.0, range_rate=0.0, target_valid=0.0, speed=0.0, set_speed=0.0,
                 gear_ratio=1.0, enable=0.0)
    o = out(h)
    assert o["throttle"] == 0.0 and o["brake_torque"] == 0.0 and o["braking"] == 0.0
    for _ in range(5):
        h.update()
    assert h.state("hold") == 0.0 and h.state("a_prev") == 0.0
    # enabled on valid cruise data: the law runs from the reset state (no standstill hold
    # left over from the zeros, which an always-on controller would have entered)
    h.set_inputs(range=60.0, target_valid=1.0, speed=25.0, set_speed=25.0, enable=1.0)
    assert h.output("brake_torque") == 0.0 and h.output("throttle") > 0.0
    always_on = harness(st, range=0.0, target_valid=0.0, speed=0.0, set_speed=0.0)
    always_on.update()
    assert always_on.state("hold") == 1.0


# ------------------------------------------------------ inner acceleration loop

INNER = ACCSettings(jerk_limit=None, accel_kp=0.5, accel_ki_1_s=2.0,
                    accel_integral_limit_m_s2=0.3)


def inner_harness(settings=INNER, model=MODEL, **inputs):
    h = BlockHarness(ACCController("acc", T, model, settings, accel_input=True))
    base = dict(range=33.0, range_rate=1.5, target_valid=1.0, speed=20.0, set_speed=30.0,
                gear_ratio=1.0, accel=0.0)  # the law asks a = 0
    base.update(inputs)
    h.set_inputs(**base)
    return h


def test_inner_loop_ports_and_the_interface_without_it_unchanged():
    plain = ACCController("acc", T, MODEL)
    assert "accel" not in plain.inputs and "accel_command" not in plain.outputs
    assert [h.name for h in plain.discrete_states] == ["a_prev", "braking", "hold"]
    blk = ACCController("acc", T, MODEL, accel_input=True)
    assert blk.accel.unit_text == "m/s^2" and blk.accel_command.unit_text == "m/s^2"
    assert [h.name for h in blk.discrete_states][-2:] == ["accel_integral", "ratio_prev"]


def test_pi_feedback_on_the_measured_acceleration():
    h = inner_harness(accel=-0.2)  # the car decelerates while the request is 0
    e = 0.2
    i_new = INNER.accel_ki_1_s * T * e
    assert h.output("accel_request") == pytest.approx(0.0, abs=1e-15)
    assert h.output("accel_command") == pytest.approx(INNER.accel_kp * e + i_new, rel=1e-12)
    f, _ = wheel_force(INNER.accel_kp * e + i_new, 20.0)
    assert h.output("engine_torque_request") == pytest.approx(f * 0.3 / (0.9 * 4.0),
                                                              rel=1e-12)
    h.update()
    assert h.state("accel_integral") == pytest.approx(i_new, rel=1e-12)
    for _ in range(100):  # a constant error: the integral stops at its limit
        h.update()
    assert h.state("accel_integral") == pytest.approx(INNER.accel_integral_limit_m_s2)


def test_the_integral_is_held_during_a_shift_and_reset_at_rest():
    h = inner_harness(accel=-0.2)
    h.update()
    i1 = h.state("accel_integral")
    h.set_input("gear_ratio", 1.3)  # the ratio moves: a shift
    h.update()
    assert h.state("accel_integral") == i1
    h.update()  # the ratio is steady again: integrating
    assert h.state("accel_integral") > i1
    h.set_inputs(speed=0.0, range=5.5, range_rate=0.0)  # at rest behind a stopped car
    h.update()
    assert h.state("accel_integral") == 0.0


def test_anti_windup_at_full_throttle():
    # far below the set speed, no target: cruise at +1 m/s^2 that a weak car cannot give
    h = inner_harness(target_valid=0.0, speed=5.0, set_speed=30.0, accel=0.0)
    assert h.output("throttle") == 1.0  # saturated
    h.update()
    assert h.state("accel_integral") == 0.0  # no integration into the limit


def test_converter_ratio_and_creep_in_the_model():
    conv = dict(converter_speed_ratio=(0.0, 0.5, 1.0), converter_torque_ratio=(2.0, 1.5, 1.0),
                converter_capacity=(15.0, 16.0, math.inf), idle_speed_rad_s=70.0)
    md = dataclasses.replace(MODEL, **conv)
    assert md.converter_ratio(0.25) == pytest.approx(1.75)
    assert md.converter_ratio(2.0) == 1.0 and MODEL.converter_ratio(0.3) == 1.0
    # T_p = (w_p / K)^2 with 1/K^2 interpolated; wheel force = eta N TR T_p / R
    w_p, w_t, n = 100.0, 25.0, 4.0  # speed ratio 0.25
    c = 0.5 * (1 / 15.0 ** 2 + 1 / 16.0 ** 2)
    assert md.converter_wheel_force(w_p, w_t, n) == pytest.approx(
        0.9 * n * 1.75 * c * w_p ** 2 / 0.3, rel=1e-12)
    assert md.converter_wheel_force(50.0, 100.0, n) < 0.0  # overrun: the engine brakes
    assert MODEL.converter_wheel_force(100.0, 50.0, n) is None
    # with a measured engine speed the inversion divides by the converter's ratio
    h = BlockHarness(ACCController("acc", T, md, SEED_LAW, engine_speed_input=True))
    h.set_inputs(range=8.0, range_rate=0.0, target_valid=1.0, speed=2.0, set_speed=30.0,
                 gear_ratio=1.0, engine_speed=2.0 * 4.0 / 0.3 / 0.25)  # a = 0, nu = 0.25
    f, _ = wheel_force(0.0, 2.0)
    assert h.output("engine_torque_request") == pytest.approx(
        f * 0.3 / (0.9 * 1.75 * 4.0), rel=1e-12)
    with pytest.raises(ParameterError, match="converter_speed_ratio"):
        dataclasses.replace(MODEL, converter_speed_ratio=(0.0, 1.0),
                            converter_torque_ratio=(2.0,))
    with pytest.raises(ParameterError, match="converter_capacity"):
        dataclasses.replace(MODEL, **{**conv, "converter_capacity": (1.0, -1.0, 2.0)})


def test_the_update_reuses_the_hits_outputs_only_for_the_same_inputs():
    h = inner_harness(accel=-0.2)
    ctx = h.ctx
    blk = h.block
    blk.output("accel_request").calc(ctx)  # remembered
    h.set_input("accel", 0.5)  # changed before the update: the memo must not be used
    h.update()
    assert h.state("accel_integral") == pytest.approx(INNER.accel_ki_1_s * T * -0.5,
                                                      rel=1e-12)
