"""Traffic scenarios: speed profiles, the IDM (reference values), lead vehicles, the radar."""

import math

import numpy as np
import pytest
from scipy.integrate import quad

from blocks.sources import Constant, Ramp
from blocks.vehicle.scenarios import (
    IDMParameters,
    IDMVehicle,
    LeadVehicle,
    PiecewiseSpeed,
    Radar,
    SinusoidalSpeed,
    TrafficScenario,
    TrafficVehicle,
    constant_speed,
    cut_in_scenario,
    cut_out_scenario,
    idm_acceleration,
    idm_desired_gap,
    idm_equilibrium_gap,
    stop_and_go_profile,
    stop_and_go_scenario,
)
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

IDM = IDMParameters()  # Treiber 2000: v0 = 120 km/h, T = 1.6 s, s0 = 2 m, a = 0.73, b = 1.67


# --------------------------------------------------------------------------- IDM


@pytest.mark.parametrize("v, ref", [(10.0, 18.0733), (20.0, 36.4434), (30.0, 85.2617)])
def test_idm_equilibrium_gap_reference_values(v, ref):
    assert idm_equilibrium_gap(v, IDM) == pytest.approx(ref, abs=1e-4)
    # at the equilibrium gap the IDM acceleration vanishes
    assert idm_acceleration(v, idm_equilibrium_gap(v, IDM), 0.0, IDM) == pytest.approx(
        0.0, abs=1e-12)


def test_idm_acceleration_reference_value():
    # a(v = 20, s = 30, dv = +5) = -4.463289 m/s^2 (anchors-domain section 7)
    assert idm_acceleration(20.0, 30.0, 5.0, IDM) == pytest.approx(-4.463289, abs=1e-4)
    s_star = 2.0 + 20.0 * 1.6 + 20.0 * 5.0 / (2.0 * math.sqrt(0.73 * 1.67))
    assert idm_desired_gap(20.0, 5.0, IDM) == pytest.approx(s_star, rel=1e-14)


def test_idm_free_road_and_guards():
    v0 = IDM.desired_speed_m_s
    assert idm_acceleration(0.0, math.inf, 0.0, IDM) == 0.73
    assert idm_acceleration(v0, math.inf, 0.0, IDM) == pytest.approx(0.0, abs=1e-15)
    assert idm_desired_gap(10.0, -100.0, IDM) == 2.0  # the max(0, ...) keeps s* >= s0
    with pytest.raises(ValueError, match="gap must be > 0"):
        idm_acceleration(10.0, 0.0, 0.0, IDM)
    with pytest.raises(ValueError, match="need 0 <= v < v0"):
        idm_equilibrium_gap(v0, IDM)
    with pytest.raises(ParameterError, match="time_gap_s must be > 0"):
        IDMParameters(time_gap_s=0.0)


def test_idm_block_derivatives_and_standstill():
    h = BlockHarness(IDMVehicle("car", IDM, x0_m=0.0, v0_m_s=20.0))
    h.set_inputs(leader_x_rear=30.0, leader_v=15.0)
    np.testing.assert_allclose(h.derivatives(), [20.0, idm_acceleration(20.0, 30.0, 5.0, IDM)],
                               rtol=1e-14)
    assert h.output("a") == pytest.approx(-4.463289, abs=1e-4)
    assert h.output("x_rear") == -4.5 and h.output("in_lane") == 1.0
    assert h.block.output("v").depends_on == frozenset()
    # at rest behind a stopped leader: no reversing
    h.set_state("v", 0.0)
    h.set_inputs(leader_x_rear=1.0, leader_v=0.0)
    np.testing.assert_array_equal(h.derivatives(), [0.0, 0.0])
    h.set_state("v", -0.01)  # a slight undershoot is pulled back
    assert h.derivatives()[1] == pytest.approx(0.2)
    free = BlockHarness(IDMVehicle("free", IDM, v0_m_s=10.0, leader=False))
    assert not free.block.inputs
    assert free.output("a") == pytest.approx(0.73 * (1 - (10 / IDM.desired_speed_m_s) ** 4))


def test_idm_follower_settles_at_the_equilibrium_gap():
    b = DiagramBuilder("platoon")
    lead = b.add(LeadVehicle("lead", constant_speed(20.0), x0_m=100.0))
    car = b.add(IDMVehicle("car", IDM, x0_m=0.0, v0_m_s=15.0))
    b.connect(lead.x_rear, car.leader_x_rear)
    b.connect(lead.v, car.leader_v)
    res = Simulator(b.build(), solver="rk4", dt=0.05, record=["lead.x_rear", "car.x",
                                                             "car.v"]).run(400.0)
    gap = res["lead.x_rear"] - res["car.x"]
    assert gap[-1] == pytest.approx(idm_equilibrium_gap(20.0, IDM), abs=1e-4)  # 36.4434 m
    assert res["car.v"][-1] == pytest.approx(20.0, abs=1e-5)
    assert gap.min() > 30.0  # approached from 95.5 m without overshooting below 30 m


# ------------------------------------------------------------------ speed profiles


def test_piecewise_speed_and_its_exact_integral():
    p = PiecewiseSpeed([2.0, 5.0, 9.0, 12.0], [10.0, 16.0, 0.0, 4.0])
    assert p.speed(0.0) == 10.0 and p.speed(20.0) == 4.0
    assert p.speed(3.5) == pytest.approx(13.0) and p.accel(3.5) == pytest.approx(2.0)
    assert p.accel(7.0) == pytest.approx(-4.0) and p.accel(1.0) == 0.0 and p.accel(13.0) == 0.0
    assert p.distance(0.0) == 0.0
    for t in (1.0, 2.0, 4.2, 5.0, 8.9, 11.0, 15.0):
        assert p.distance(t) == pytest.approx(quad(p.speed, 0.0, t, points=[2, 5, 9, 12],
                                                   limit=200)[0], rel=1e-12, abs=1e-12)


def test_sinusoidal_speed_and_its_exact_integral():
    p = SinusoidalSpeed(20.0, 3.0, period_s=10.0, start_s=5.0)
    assert p.speed(4.0) == 20.0 and p.speed(7.5) == pytest.approx(23.0)
    assert p.accel(5.0) == pytest.approx(3.0 * 2 * math.pi / 10.0)
    for t in (3.0, 5.0, 6.3, 17.0):
        assert p.distance(t) == pytest.approx(quad(p.speed, 0.0, t, points=[5.0])[0],
                                              rel=1e-12)
    with pytest.raises(ParameterError, match="speed would become negative"):
        SinusoidalSpeed(2.0, 3.0, 10.0)


def test_stop_and_go_profile():
    p = stop_and_go_profile(cruise_m_s=15.0, decel_m_s2=1.5, accel_m_s2=1.0, cruise_s=10.0,
                            stop_s=8.0)
    np.testing.assert_allclose(p.times, [0, 10, 20, 28, 43, 53])
    np.testing.assert_allclose(p.speeds, [15, 15, 0, 0, 15, 15])
    assert p.distance(28.0) == pytest.approx(150.0 + 75.0)
    two = stop_and_go_profile(cycles=2)
    assert two.times.size == 10 and np.count_nonzero(two.speeds == 0) == 4


@pytest.mark.parametrize("times, speeds, msg", [
    ([0, 2, 1], [1, 1, 1], "strictly increasing, but times_s\\[1\\] = 2.0"),
    ([0, 1], [1, -1], "speeds must be >= 0"),
    ([0, 1], [1, 1, 1], "same length"),
])
def test_piecewise_speed_validation(times, speeds, msg):
    with pytest.raises(ParameterError, match=msg):
        PiecewiseSpeed(times, speeds)


def test_lead_vehicle_outputs_and_lane_changes():
    prof = PiecewiseSpeed([0.0, 10.0], [20.0, 10.0])
    blk = LeadVehicle("v1", prof, x0_m=50.0, length_m=4.0, in_lane=False,
                      lane_changes_s=(50.0, 60.0))
    assert [ev.times for ev in blk.time_events] == [[50_000_000_000, 60_000_000_000]]
    h = BlockHarness(blk)
    h.set_time(5.0)
    assert h.output("x") == pytest.approx(50.0 + 20.0 * 5.0 - 0.5 * 5.0 ** 2)
    assert h.output("x_rear") == pytest.approx(h.output("x") - 4.0)
    assert (h.output("v"), h.output("a")) == (pytest.approx(15.0), pytest.approx(-1.0))
    for t, flag in ((0.0, 0.0), (49.9, 0.0), (50.0, 1.0), (59.9, 1.0), (60.0, 0.0)):
        h.set_time(t)
        assert h.output("in_lane") == flag, t
    with pytest.raises(ParameterError, match="lane_changes_s must be strictly increasing"):
        LeadVehicle("v", prof, lane_changes_s=(5.0, 5.0))


# --------------------------------------------------------------------------- radar


def radar_harness(n=3, **kw):
    h = BlockHarness(Radar("radar", n, **kw))
    h.set_inputs(ego_x=100.0, ego_v=20.0)
    return h


def set_target(h, i, x_rear, v, lane=1.0):
    h.set_inputs(**{f"target{i}_x_rear": x_rear, f"target{i}_v": v, f"target{i}_in_lane": lane})


def radar_out(h):
    return tuple(h.output(k) for k in ("range", "range_rate", "valid", "target"))


def test_radar_picks_the_nearest_in_lane_target_ahead():
    h = radar_harness()
    set_target(h, 0, 180.0, 25.0)
    set_target(h, 1, 140.0, 22.0, lane=0.0)  # closer but in the next lane
    set_target(h, 2, 90.0, 30.0)  # behind the ego
    assert radar_out(h) == (80.0, 5.0, 1.0, 0.0)
    set_target(h, 1, 140.0, 22.0, lane=1.0)  # cut-in: the target switches to the closer car
    assert radar_out(h) == (40.0, 2.0, 1.0, 1.0)
    set_target(h, 1, 140.0, 22.0, lane=0.0)  # cut-out: back to the farther car
    set_target(h, 0, 260.0, 25.0)  # ... now beyond 150 m: no target
    assert radar_out(h) == (150.0, 0.0, 0.0, -1.0)


def test_radar_reports_a_collision_as_a_negative_range():
    h = radar_harness(n=1)
    set_target(h, 0, 98.0, 15.0)  # rear 2 m behind the ego's front: overlapping
    assert radar_out(h) == (-2.0, -5.0, 1.0, 0.0)
    set_target(h, 0, 94.0, 15.0)  # rear behind the ego's rear (4.5 m): not ahead
    assert radar_out(h)[2] == 0.0


def test_radar_ports_sampling_and_validation():
    r = Radar("radar", 2, max_range_m=200.0, period_s=0.048)
    assert list(r.inputs) == ["ego_x", "ego_v", "target0_x_rear", "target0_v",
                              "target0_in_lane", "target1_x_rear", "target1_v",
                              "target1_in_lane"]
    assert r.is_sampled and r.output("range").unit_label() == "m"
    assert not Radar("radar", 1).is_sampled
    with pytest.raises(ParameterError, match="Radar 'r': n_targets must be an integer >= 1"):
        Radar("r", 0)
    with pytest.raises(ParameterError, match="max_range_m must be > 0"):
        Radar("r", 1, max_range_m=-5.0)


# ------------------------------------------------------------------------ scenarios


def test_scenario_validation_names_the_vehicle():
    prof = constant_speed(10.0)
    with pytest.raises(ParameterError, match="duplicate vehicle names \\['a'\\]"):
        TrafficScenario("s", (TrafficVehicle("a", 10.0, prof), TrafficVehicle("a", 20.0, prof)),
                        10.0, 20.0, 10.0)
    with pytest.raises(ParameterError, match="'b' follows 'c', which does not exist; valid "
                                             "leaders: \\['a'\\]"):
        TrafficScenario("s", (TrafficVehicle("a", 50.0, prof),
                              TrafficVehicle("b", 10.0, idm=IDM, leader="c")), 10.0, 20.0, 10.0)
    with pytest.raises(ParameterError, match="follows 'a', which is not defined before it"):
        TrafficScenario("s", (TrafficVehicle("b", 10.0, idm=IDM, leader="a"),
                              TrafficVehicle("a", 50.0, prof)), 10.0, 20.0, 10.0)
    with pytest.raises(ParameterError, match="exactly one of profile"):
        TrafficVehicle("a", 0.0).make_block()
    with pytest.raises(ParameterError, match="cut_in_gap_m must lie in"):
        cut_in_scenario(30.0, cut_in_gap_m=28.0)


def run_with_constant_ego(scenario, t_end, ego_v):
    """The traffic and radar with an ego at constant speed from x = 0."""
    b = DiagramBuilder("traffic")
    x = b.add(Ramp("ego_x", slope=ego_v, unit="m"))
    v = b.add(Constant("ego_v", ego_v, unit="m/s"))
    scenario.add_to(b, x.y, v.y)
    rec = ["radar.range", "radar.range_rate", "radar.valid", "radar.target"]
    return Simulator(b.build(), solver="rk4", dt=0.1, record=rec).run(t_end)


def test_cut_in_switches_the_target_at_50_s():
    sc = cut_in_scenario(42.5, speed_m_s=25.0)
    res = run_with_constant_ego(sc, 52.0, ego_v=24.0)  # ranges grow at 1 m/s
    t, target, r = res.time, res["radar.target"], res["radar.range"]
    before = t < 50.0 - 1e-9
    assert np.all(target[before] == 0.0) and np.all(target[~before] == 1.0)
    # at the cut-in the range drops from the lead (42.5 + t) to the cut-in car (25 + t)
    np.testing.assert_allclose(r[before], 42.5 + t[before], rtol=1e-12)
    np.testing.assert_allclose(r[~before], 25.0 + t[~before], rtol=1e-12)
    np.testing.assert_allclose(res["radar.range_rate"], 1.0, rtol=1e-12)


def test_cut_out_targets_the_far_car_or_none():
    sc = cut_out_scenario(35.0, speed_m_s=20.0, cut_out_s=30.0)
    res = run_with_constant_ego(sc, 31.0, ego_v=20.0)
    t = res.time
    assert np.all(res["radar.target"][t < 30.0 - 1e-9] == 1.0)  # the near car (IDM)
    assert res["radar.target"][-1] == 0.0  # the far car
    # the IDM car starts at its equilibrium gap behind the far car and keeps it
    far_range = 35.0 + 4.5 + idm_equilibrium_gap(20.0, IDM)
    assert res["radar.range"][-1] == pytest.approx(far_range, abs=1e-6)
    assert res["radar.range"][0] == pytest.approx(35.0, abs=1e-9)
    gone = cut_out_scenario(35.0, far_gap_m=170.0, near_idm=False)
    res = run_with_constant_ego(gone, 31.0, ego_v=20.0)
    assert res["radar.valid"][-1] == 0.0 and res["radar.range"][-1] == 150.0


def test_stop_and_go_scenario_is_an_idm_car_behind_a_scripted_one():
    sc = stop_and_go_scenario(27.5)
    head, lead = sc.vehicles
    assert head.profile is not None and lead.idm is not None and lead.leader == "head"
    assert sc.t_end_s == pytest.approx(63.0) and sc.events[0][0] == 10.0
    assert head.x0_m - 4.5 - lead.x0_m == pytest.approx(idm_equilibrium_gap(15.0, IDM))
