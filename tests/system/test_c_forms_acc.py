"""The C forms of the ACC blocks (``ACCController``, ``LeadVehicle``, ``IDMVehicle``,
``Radar``, the example's ``PointMassCar``) against the Python loop, their oracle.

The class is each block over generated diagrams (seeded random parameters, inputs driven by
Sine/Step/Ramp sources of random amplitude) that reach its branches: the controller with and
without a target, following and cruising, braking with the hysteresis, both actuator limits,
the standstill hold and the restart, the jerk limits (ISO, a number, none), the enable
switch, the inner acceleration loop (gear shifts, anti-windup) and the torque converter's
lookups; the traffic with piecewise and sinusoidal profiles, lane changes (cut-in,
cut-out), IDM agents free and following, a radar evaluated with its inputs or sampled; the
car through its stiction band and clutch slip.  Then the three ACC examples' own diagrams
over their scenario time.  Compiled and Python runs must give identical times and every
recorded signal within 1e-12 of its range (``_compare`` of ``test_compiled_run``); the C run
must really be C (``diagnostics["compiled"] is True``).
"""

from __future__ import annotations

import importlib
import shutil

import numpy as np
import pytest

import blocks as bl
from blocks.controllers import ACCController, ACCSettings, DrivelineModel, EngineMap
from blocks.vehicle.scenarios import (
    IDMParameters,
    IDMVehicle,
    LeadVehicle,
    PiecewiseSpeed,
    Radar,
    SinusoidalSpeed,
)
from cosim import DiagramBuilder, Simulator
from examples.acc_plant import DT, RECORD, RECORD_EVERY, PointMassCar, demo_model
from tests.system.test_compiled_run import _compare

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

SOLVERS = ["rk4", "heun", "midpoint", "euler"]


def _both(make, t_end, record, **kw):
    """Python loop and C run of fresh diagrams; the C run must be C."""
    py_sim = Simulator(make(), compiled=False, record=record, **kw)
    py = py_sim.run(t_end)
    c_sim = Simulator(make(), compiled=True, record=record, **kw)
    c = c_sim.run(t_end)
    assert c.diagnostics["compiled"] is True
    assert py.diagnostics["compiled"] == "compiled=False"
    _compare(py, c)
    for h, i in py_sim.plan.dstate_index.items():  # the states the run leaves
        np.testing.assert_array_equal(np.asarray(c_sim.ctx.xd[i], dtype=float),
                                      np.asarray(py_sim.ctx.xd[i], dtype=float), h.name)
    return py, c


# ------------------------------------------------------------------ the engine and model
def _engine(rng) -> EngineMap:
    """A random engine map, strictly increasing in the throttle."""
    na, nw = int(rng.integers(3, 8)), int(rng.integers(2, 9))
    a = np.sort(rng.choice(np.linspace(0.0, 1.0, 41), na, replace=False))
    w = np.sort(rng.uniform(60.0, 700.0, nw))
    base = -rng.uniform(5.0, 40.0, nw)
    steps = rng.uniform(2.0, 80.0, (na - 1, nw))
    tq = np.vstack([base, base + np.cumsum(steps, axis=0)])
    return EngineMap(a, w, tq)


def _model(rng, converter: bool) -> DrivelineModel:
    extra = {}
    if converter:
        extra = dict(converter_speed_ratio=(0.0, 0.4, 0.8, 0.9, 1.0),
                     converter_torque_ratio=tuple(np.sort(rng.uniform(1.0, 2.4, 5))[::-1]),
                     converter_capacity=(*np.sort(rng.uniform(8.0, 20.0, 4)), np.inf),
                     idle_speed_rad_s=float(rng.uniform(50.0, 110.0)))
    return DrivelineModel(
        engine=_engine(rng), mass_kg=float(rng.uniform(800, 2500)),
        wheel_radius_m=float(rng.uniform(0.25, 0.4)), final_drive=float(rng.uniform(2.5, 4.5)),
        engine_inertia_kg_m2=float(rng.uniform(0, 0.3)),
        wheel_inertia_kg_m2=float(rng.uniform(0, 6)), efficiency=float(rng.uniform(0.8, 1.0)),
        torque_ratio=float(rng.uniform(1.0, 1.5)), drag_area_m2=float(rng.uniform(0, 1)),
        rolling_resistance=float(rng.uniform(0, 0.02)),
        max_brake_torque_nm=float(rng.uniform(1000, 8000)),
        drive_lag_s=float(rng.choice([0.0, rng.uniform(0.05, 0.4)])),
        brake_lag_s=float(rng.choice([0.0, rng.uniform(0.05, 0.3)])), **extra)


# --------------------------------------------------------------------- ACCController
ACC_OUT = ["throttle", "brake_torque", "accel_request", "engine_torque_request", "mode",
           "braking"]


def acc_diagram(seed: int):
    """A random controller driven by random sources (module docstring)."""
    rng = np.random.default_rng(seed)
    u = lambda lo, hi: float(rng.uniform(lo, hi))  # noqa: E731
    jerk = ["iso", None, u(0.5, 2.5)][seed % 3]
    st = ACCSettings(time_gap_s=u(0.8, 2.2), standstill_gap_m=u(0, 8),
                     reaching_speed_m_s=u(1, 5), boundary_layer_m=u(1, 8),
                     min_accel_m_s2=-u(1, 3.5), max_accel_m_s2=u(0.3, 2),
                     cruise_gain_1_s=u(0.1, 1), jerk_limit=jerk, hysteresis_m_s2=u(0, 0.3),
                     standstill_speed_m_s=u(0.3, 2), standstill_window_m=u(0, 3),
                     stop_decel_m_s2=u(0.3, 1.5), restart_speed_m_s=u(0.2, 1.5),
                     standstill_brake_torque_nm=u(500, 3000), accel_kp=u(0, 2),
                     accel_ki_1_s=u(0, 8), accel_integral_limit_m_s2=u(0.2, 2),
                     shift_ratio_rate_1_s=u(0.01, 0.2))
    es, en, ai = (bool(rng.integers(2)) for _ in range(3))
    model = _model(rng, converter=bool(rng.integers(2)))
    period = float(rng.choice([0.01, 0.016, 0.02]))
    b = DiagramBuilder(f"acc{seed}")
    acc = b.add(ACCController("acc", period, model, st, engine_speed_input=es,
                              enable_input=en, accel_input=ai,
                              offset_s=float(rng.choice([0.0, 0.002]))))

    def sine(name, unit, amp, bias, f_lo=0.05, f_hi=0.5):
        return b.add(bl.Sine(name, amp, u(f_lo, f_hi), u(0, 6.3), bias, unit=unit)).y

    b.connect(sine("range", "m", u(5, 80), u(0, 60)), acc.range)
    b.connect(sine("range_rate", "m/s", u(0, 8), u(-4, 4)), acc.range_rate)
    b.connect(sine("valid", "1", 1.0, u(0.2, 0.9), 0.1, 0.4), acc.target_valid)
    # speeds near the standstill (hold, restart) to highway speeds; negative too
    b.connect(sine("speed", "m/s", u(0.5, 15), u(-0.5, 15), 0.05, 0.3), acc.speed)
    b.connect(sine("set_speed", "m/s", u(0, 10), u(0, 30)), acc.set_speed)
    if seed % 2:  # a shift (and a neutral when the step goes to 0)
        gear = b.add(bl.Step("gear", round(u(0.5, 5.5), 3), float(rng.choice([0.0, 0.8, 1.5])),
                             u(1, 3.5), unit="1")).y
    else:
        gear = sine("gear", "1", u(0, 1.5), u(0.5, 3))
    b.connect(gear, acc.gear_ratio)
    if es:
        b.connect(sine("engine_speed", "rad/s", u(0, 300), u(0, 400)), acc.engine_speed)
    if en:
        b.connect(sine("enable", "1", 1.0, u(0.3, 1.0), 0.1, 0.5), acc.enable)
    if ai:
        b.connect(sine("accel", "m/s^2", u(0, 3), u(-1, 1), 0.2, 2.0), acc.accel)
    return b.build()


def acc_record(seed: int) -> list[str]:
    return [f"acc.{n}" for n in ACC_OUT] + (["acc.accel_command"] if acc_diagram(seed).find(
        "acc").accel is not None else [])


@pytest.mark.parametrize("seed", range(24))
def test_acc_controller_c_form_equals_the_python_loop(seed):
    _both(lambda: acc_diagram(seed), 8.0, acc_record(seed), solver=SOLVERS[seed % 4],
          dt=0.002)


def test_acc_corpus_reaches_the_branches(monkeypatch):
    """The corpus is the class: every branch of the controller is taken somewhere."""
    seen: dict[str, bool] = {}
    hold = ACCController._hold

    def spy(self, ctx, v, a):
        h = hold(self, ctx, v, a)
        seen["hold"] = seen.get("hold", False) or h
        seen["restart"] = seen.get("restart", False) or (
            ctx.discrete(self.hold_state) >= 0.5 and not h)
        return h
    monkeypatch.setattr(ACCController, "_hold", spy)
    for seed in range(24):
        d = acc_diagram(seed)
        acc = d.find("acc")
        res = Simulator(d, compiled=False, solver="euler", dt=0.002,
                        record=acc_record(seed)).run(8.0)
        thr, tb = res["acc.throttle"], res["acc.brake_torque"]
        seen["follow"] = seen.get("follow", False) or bool(np.any(res["acc.mode"] == 1.0))
        seen["cruise"] = seen.get("cruise", False) or bool(np.any(res["acc.mode"] == 0.0))
        seen["brake switch"] = seen.get("brake switch", False) or bool(
            np.any(np.diff(res["acc.braking"]) != 0))
        seen["full throttle"] = seen.get("full throttle", False) or bool(
            np.any(thr == acc.model.engine.throttle[-1]))
        seen["full brake"] = seen.get("full brake", False) or bool(
            np.any(tb == acc.model.max_brake_torque_nm))
        seen["converter"] = seen.get("converter", False) or (
            acc.model._capacity is not None and acc.engine_speed is not None)
        if acc.enable is not None:
            seen["disabled"] = seen.get("disabled", False) or bool(np.any(
                (thr == acc.model.engine.throttle[0]) & (res["acc.accel_request"] == 0.0)
                & (tb == 0.0)))
        if acc.accel is not None:
            seen["inner loop"] = True
    assert all(seen.values()) and len(seen) == 10, seen


# ------------------------------------------------------------------------ traffic
def traffic_diagram(seed: int):
    """Scripted and IDM vehicles changing lanes in front of a moving ego, and a radar."""
    rng = np.random.default_rng(1000 + seed)
    u = lambda lo, hi: float(rng.uniform(lo, hi))  # noqa: E731
    b = DiagramBuilder(f"traffic{seed}")
    veh = []
    n = int(rng.integers(1, 4))
    for i in range(n):
        lanes = tuple(np.round(np.sort(rng.choice(np.arange(0.5, 9.5, 0.25),
                                                  int(rng.integers(0, 3)), replace=False)), 3))
        kw = dict(x0_m=u(5, 120), in_lane=bool(rng.integers(2)), lane_changes_s=lanes)
        if i and rng.integers(2):  # an IDM agent behind the previous vehicle, or free
            p = IDMParameters(desired_speed_m_s=u(10, 35), time_gap_s=u(0.8, 2),
                              min_gap_m=u(0, 3), max_accel_m_s2=u(0.3, 2),
                              comfort_decel_m_s2=u(1, 3), delta=float(rng.choice([4, 2.5])))
            lead = bool(rng.integers(2))
            kw["x0_m"] = u(0, 20)
            blk = b.add(IDMVehicle(f"v{i}", p, v0_m_s=u(0, 20), leader=lead, **kw))
            if lead:
                b.connect(veh[-1].x_rear, blk.leader_x_rear)
                b.connect(veh[-1].v, blk.leader_v)
        else:
            if rng.integers(2):
                k = int(rng.integers(1, 6))
                prof = PiecewiseSpeed(np.cumsum(rng.uniform(0.3, 3, k)) - u(0, 1),
                                      rng.choice([0.0, u(0, 5), u(5, 30)], k))
            else:
                prof = SinusoidalSpeed(u(5, 20), u(0, 5), u(1, 8), u(-1, 4))
            blk = b.add(LeadVehicle(f"v{i}", prof, length_m=u(3, 6), **kw))
        veh.append(blk)
    period = [None, 0.01, 0.02][seed % 3]
    radar = b.add(Radar("radar", n, u(30, 150), u(3, 6), period_s=period))
    ego_x = b.add(bl.Ramp("ego_x", u(0, 20), 0.0, u(-10, 30), unit="m"))
    ego_v = b.add(bl.Sine("ego_v", u(0, 5), 0.2, 0.0, u(0, 20), unit="m/s"))
    b.connect(ego_x.y, radar.ego_x)
    b.connect(ego_v.y, radar.ego_v)
    for (xr, v, lane), blk in zip(radar.targets, veh):
        b.connect(blk.x_rear, xr)
        b.connect(blk.v, v)
        b.connect(blk.in_lane, lane)
    return b.build()


def traffic_record(seed: int) -> list[str]:
    d = traffic_diagram(seed)
    return [f"{n}.{p}" for n, blk in d.blocks.items() if n not in ("ego_x", "ego_v")
            for p in blk.outputs]


@pytest.mark.parametrize("seed", range(24))
def test_traffic_and_radar_c_forms_equal_the_python_loop(seed):
    _both(lambda: traffic_diagram(seed), 10.0, traffic_record(seed),
          solver=SOLVERS[seed % 4], dt=[0.01, 0.005, 0.002][seed % 3],
          record_every=1 + seed % 2)


def test_traffic_corpus_reaches_the_branches():
    """Targets appear, switch and disappear; IDM agents brake to a stop."""
    seen = {"none": False, "switch": False, "idm follows": False, "idm stops": False}
    for seed in range(24):
        d = traffic_diagram(seed)
        res = Simulator(d, solver="rk4", dt=0.01, record=traffic_record(seed)).run(10.0)
        tg = res["radar.target"]
        seen["none"] |= bool(np.any(tg == -1.0)) and bool(np.any(tg >= 0))
        seen["switch"] |= len(set(tg[tg >= 0].tolist())) > 1
        for n, blk in d.blocks.items():
            if isinstance(blk, IDMVehicle) and blk.has_leader:
                seen["idm follows"] = True
                seen["idm stops"] |= bool(np.any(res[f"{n}.v"] <= 1e-3))
    assert all(seen.values()), seen


# ---------------------------------------------------------------------- the car
def car_diagram(seed: int):
    rng = np.random.default_rng(2000 + seed)
    u = lambda lo, hi: float(rng.uniform(lo, hi))  # noqa: E731
    model = _model(rng, converter=False) if seed % 2 else demo_model()
    b = DiagramBuilder(f"car{seed}")
    car = b.add(PointMassCar("car", model, v0_m_s=float(rng.choice([0.0, u(0, 3), u(5, 30)])),
                             x0_m=u(-5, 5), gear_ratio=u(0.7, 3.5), engine_lag_s=u(0.05, 0.4),
                             brake_lag_s=u(0.05, 0.3)))
    thr = b.add(bl.Sine("thr", u(0.2, 1.2), u(0.05, 0.4), u(0, 6.3), u(-0.3, 0.8), unit="1"))
    brk = b.add(bl.Sine("brk", u(0, 6000), u(0.05, 0.3), u(0, 6.3), u(-2000, 2000),
                        unit="N*m"))
    b.connect(thr.y, car.throttle)
    b.connect(brk.y, car.brake_torque)
    return b.build()


@pytest.mark.parametrize("seed", range(12))
def test_point_mass_car_c_form_equals_the_python_loop(seed):
    py, _ = _both(lambda: car_diagram(seed), 20.0,
                  [f"car.{p}" for p in ("x", "v", "a", "gear_ratio", "engine_speed")],
                  solver=SOLVERS[seed % 4], dt=DT, record_every=1 + seed % 3)
    assert np.all(np.isfinite(py["car.v"]))


def test_car_corpus_reaches_stiction_and_clutch_slip():
    seen = {"stiction": False, "slip": False, "idle": False}
    for seed in range(12):
        d = car_diagram(seed)
        car = d.find("car")
        res = Simulator(d, solver="rk4", dt=DT, record=["car.v", "car.engine_speed"]).run(20.0)
        v = res["car.v"]
        seen["stiction"] |= bool(np.any(np.abs(v) < 0.1))
        seen["idle"] |= bool(np.any(res["car.engine_speed"] == 80.0))
        seen["slip"] |= bool(np.any(v * car.N / car.m.wheel_radius_m < 80.0))
    assert all(seen.values()), seen


# -------------------------------------------------------------------- the examples
@pytest.mark.parametrize("name", ["acc_cut_in", "acc_cut_out", "acc_stop_and_go"])
def test_acc_examples_run_compiled_equal_the_python_loop(name):
    """The examples' own diagrams over their scenario time, with rk4 at their 8 ms (their
    own AB3 runs compiled too: tests/system/test_compiled_ab3.py)."""
    mod = importlib.import_module(f"examples.{name}")
    d = mod.build()
    extra = [f"{n}.v" for n, blk in d.blocks.items()
             if n not in ("car", "acc", "radar", "set_speed") and "v" in blk.outputs]
    py, c = _both(mod.build, mod.T_END, RECORD + extra, solver="rk4", dt=DT,
                  record_every=RECORD_EVERY)
    assert c.time[-1] == pytest.approx(mod.T_END)
    assert np.any(py["acc.mode"] == 1.0) and np.any(py["acc.braking"] == 1.0)
