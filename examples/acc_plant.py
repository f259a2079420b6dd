r"""The closed ACC loop shared by the ``examples/acc_*.py`` scripts: a simple car, the
controller, a traffic scenario, and the seed's rates.

The car (:class:`PointMassCar`) is deliberately simple and self-contained (the full
powertrain of :mod:`blocks.vehicle` can replace it): a point mass on a flat road, one fixed
gear, an engine with a first-order torque lag behind the engine map, and a brake with a
first-order lag.

.. math::

    \dot x &= v, \qquad
    m_\mathrm{eff} \dot v = \frac{\eta N}{R} T_e - \tfrac12\rho C_d A v|v|
        - \Big(\frac{T_b}{R} + m g f_r\Big)\,\mathrm{sat}\Big(\frac{v}{v_s}\Big) \\
    \tau_e \dot T_e &= T_\mathrm{map}(\alpha, \omega_e) - T_e, \qquad
    \omega_e = \max(vN/R,\ \omega_\mathrm{idle}) \\
    \tau_b \dot T_b &= T_{b,\mathrm{cmd}} - T_b

Brake and rolling resistance act as friction regularised below :math:`v_s` =
``STICTION_M_S`` = 0.1 m/s, so the car stops and
stays at rest without a discontinuity; the slope (up to 32 1/s with the hold torque) keeps
AB3 at 8 ms stable (:math:`h\lambda` = 0.26 < 0.545).  Below the idle-equivalent speed
(5.9 m/s) the clutch slips and passes only positive engine torque (so no engine braking
pushes the car backwards at rest; no stall model).  A hybrid stopped mode with zero
crossings was tried first: cosim's fixed-step event locator brackets the crossing with the
RK4 starter while the step was taken with AB3, and failed ("f(a) and f(b) must have
different signs") when the two disagreed about the sign at the step end.

Rates (the seed's multi-rate split): car and traffic integrated with AB3 at 8 ms, the
controller sampled every 16 ms, the recorder ("display") every 40 ms (``record_every=5``).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from blocks.controllers import ACCController, ACCSettings, DrivelineModel, EngineMap
from blocks.sources import Constant
from cosim import Block, DiagramBuilder, Simulator
from cosim.codegen import CModel, c_float

#: Integrator step (seed: AB3 at h = 8 ms) [s].
DT = 0.008
#: Controller sample period [s] (an ECU rate; a multiple of DT).
CONTROL_PERIOD = 0.016
#: Recorder decimation: 5 x 8 ms = the seed's 40 ms display rate (25 frames/s).
RECORD_EVERY = 5
#: Speed below which brake and rolling friction are regularised (linear in v) [m/s].
STICTION_M_S = 0.1

IDLE_RAD_S = 80.0
GEAR_RATIO = 1.2
FINAL_DRIVE = 3.5


def demo_engine_map() -> EngineMap:
    """A 2-litre petrol engine: 220 N*m peak, closed-throttle friction 12 + 0.03 w N*m."""
    throttle = np.array([0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0])
    speed = np.linspace(IDLE_RAD_S, 650.0, 12)
    full = 140.0 + 80.0 * np.sin(np.pi * (speed - IDLE_RAD_S) / (650.0 - IDLE_RAD_S))
    friction = 12.0 + 0.03 * speed
    shape = (1.0 - np.exp(-4.0 * throttle)) / (1.0 - np.exp(-4.0))
    torque = -friction[None, :] + (full + friction)[None, :] * shape[:, None]
    return EngineMap(throttle, speed, torque)


def demo_model(engine: EngineMap | None = None) -> DrivelineModel:
    """The car's data (used by the plant and, as the nominal model, by the controller)."""
    return DrivelineModel(engine=engine or demo_engine_map(), mass_kg=1500.0,
                          wheel_radius_m=0.31, final_drive=FINAL_DRIVE,
                          engine_inertia_kg_m2=0.15, wheel_inertia_kg_m2=4.0, efficiency=0.92,
                          drag_area_m2=0.66, rolling_resistance=0.012,
                          max_brake_torque_nm=8000.0)


class PointMassCar(Block):
    r"""Point-mass car with engine-torque and brake lags (module docstring).

    Ports
    -----
    in   throttle      [1]       0..1
    in   brake_torque  [N*m]     commanded, at the wheels
    out  x             [m]       front bumper; state only
    out  v             [m/s]     state only
    out  a             [m/s^2]   state only (the lags make it so)
    out  gear_ratio    [1]       the fixed transmission ratio
    out  engine_speed  [rad/s]   state only
    """

    def __init__(self, name: str, model: DrivelineModel, v0_m_s: float = 0.0,
                 x0_m: float = 0.0, gear_ratio: float = GEAR_RATIO,
                 engine_lag_s: float = 0.2, brake_lag_s: float = 0.1) -> None:
        super().__init__(name)
        self.m = model
        self.ig = float(gear_ratio)
        self.N = self.ig * model.final_drive
        self.m_eff = model.effective_mass(self.N)
        self.k_drive = model.efficiency * self.N / model.wheel_radius_m
        self.tau_e, self.tau_b = float(engine_lag_s), float(brake_lag_s)
        self.throttle = self.declare_input("throttle", unit="1")
        self.brake_torque = self.declare_input("brake_torque", unit="N*m")
        te0 = model.resistance(v0_m_s) / self.k_drive  # steady cruise at v0
        self.xs = self.declare_continuous_state("x", float(x0_m))
        self.vs = self.declare_continuous_state("v", float(v0_m_s))
        self.tes = self.declare_continuous_state("engine_torque", te0)
        self.tbs = self.declare_continuous_state("brake_torque_state", 0.0)
        self.x = self.declare_output("x", lambda ctx: ctx.state(self.xs), unit="m",
                                     depends_on=())
        self.v = self.declare_output("v", lambda ctx: ctx.state(self.vs), unit="m/s",
                                     depends_on=())
        self.a = self.declare_output("a", self._accel, unit="m/s^2", depends_on=())
        self.gear_ratio = self.declare_output("gear_ratio", lambda ctx: self.ig, unit="1",
                                              depends_on=())
        self.engine_speed = self.declare_output(
            "engine_speed", lambda ctx: self._omega(ctx.state(self.vs)), unit="rad/s",
            depends_on=())

    def _omega(self, v: float) -> float:
        return max(v * self.N / self.m.wheel_radius_m, IDLE_RAD_S)

    def _accel(self, ctx: Any) -> float:
        m = self.m
        v = ctx.state(self.vs)
        te = ctx.state(self.tes)
        if v * self.N / m.wheel_radius_m < IDLE_RAD_S and te < 0.0:
            te = 0.0  # the slipping clutch passes no engine braking
        friction = max(ctx.state(self.tbs), 0.0) / m.wheel_radius_m \
            + m.mass_kg * m.gravity_m_s2 * m.rolling_resistance
        sat = v / STICTION_M_S
        sat = sat if -1.0 < sat < 1.0 else math.copysign(1.0, sat)
        aero = 0.5 * m.air_density_kg_m3 * m.drag_area_m2 * v * abs(v)
        return (self.k_drive * te - aero - friction * sat) / self.m_eff

    def derivatives(self, ctx: Any) -> Any:
        v = ctx.state(self.vs)
        alpha = min(max(ctx.input(self.throttle), 0.0), 1.0)
        t_map = self.m.engine.torque(alpha, self._omega(v))
        return (v, self._accel(ctx), (t_map - ctx.state(self.tes)) / self.tau_e,
                (ctx.input(self.brake_torque) - ctx.state(self.tbs)) / self.tau_b)

    def c_model(self, cg: Any) -> CModel:
        """C form (how an example's own block opts in to the compiled run): mirrors
        :meth:`_accel`, :meth:`_omega` and :meth:`derivatives`, expression by expression;
        the engine map through :meth:`EngineMap.c_torque`."""
        m, f = self.m, c_float
        v, te, tb = cg.x(self.vs), cg.x(self.tes), cg.x(self.tbs)
        R, N = f(m.wheel_radius_m), f(self.N)
        omega = (f"double w = {v} * {N} / {R};\n"
                 f"w = ({f(IDLE_RAD_S)} > w) ? {f(IDLE_RAD_S)} : w;")
        accel = (f"double v = {v}, te = {te}, friction, sat, aero, acc;\n"
                 f"if (v * {N} / {R} < {f(IDLE_RAD_S)} && te < 0.0) te = 0.0;\n"
                 f"friction = ((0.0 > {tb}) ? 0.0 : {tb}) / {R} + {f(m.mass_kg)} * "
                 f"{f(m.gravity_m_s2)} * {f(m.rolling_resistance)};\n"
                 f"sat = v / {f(STICTION_M_S)};\n"
                 "sat = (-1.0 < sat && sat < 1.0) ? sat : copysign(1.0, sat);\n"
                 f"aero = 0.5 * {f(m.air_density_kg_m3)} * {f(m.drag_area_m2)} * v * fabs(v);\n"
                 f"acc = ({f(self.k_drive)} * te - aero - friction * sat) / {f(self.m_eff)};")
        thr = cg.u(self.throttle)
        der = (accel + "\n" + omega + "\n"
               f"double al = (0.0 > {thr}) ? 0.0 : {thr};\n"
               "al = (1.0 < al) ? 1.0 : al;\n"
               f"{cg.dx(self.xs)} = v;\n{cg.dx(self.vs)} = acc;\n"
               f"{cg.dx(self.tes)} = ({self.m.engine.c_torque(cg, 'al', 'w')} - {te}) / "
               f"{f(self.tau_e)};\n"
               f"{cg.dx(self.tbs)} = ({cg.u(self.brake_torque)} - {tb}) / {f(self.tau_b)};")
        return CModel(outputs={
            "x": f"{cg.y(self.x)} = {cg.x(self.xs)};",
            "v": f"{cg.y(self.v)} = {v};",
            "a": "{\n" + accel + f"\n{cg.y(self.a)} = acc;\n}}",
            "gear_ratio": f"{cg.y(self.gear_ratio)} = {f(self.ig)};",
            "engine_speed": "{\n" + omega + f"\n{cg.y(self.engine_speed)} = w;\n}}"},
            derivatives=der)


def build_loop(scenario: Any, settings: ACCSettings | None = None,
               control_period_s: float = CONTROL_PERIOD, radar_period_s: float | None = None,
               plant_model: DrivelineModel | None = None,
               controller_model: DrivelineModel | None = None):
    """Car + ACC controller + the scenario's traffic and radar; returns the diagram."""
    plant_model = plant_model or demo_model()
    b = DiagramBuilder(f"acc_{scenario.name}")
    car = b.add(PointMassCar("car", plant_model, v0_m_s=scenario.ego_v0_m_s,
                             x0_m=scenario.ego_x0_m))
    acc = b.add(ACCController("acc", control_period_s, controller_model or plant_model,
                              settings))
    vset = b.add(Constant("set_speed", scenario.set_speed_m_s, unit="m/s"))
    radar = scenario.add_to(b, car.x, car.v, radar_period_s=radar_period_s)["radar"]
    b.connect(radar.range, acc.range)
    b.connect(radar.range_rate, acc.range_rate)
    b.connect(radar.valid, acc.target_valid)
    b.connect(car.v, acc.speed)
    b.connect(vset.y, acc.set_speed)
    b.connect(car.gear_ratio, acc.gear_ratio)
    b.connect(acc.throttle, car.throttle)
    b.connect(acc.brake_torque, car.brake_torque)
    return b.build()


#: What :func:`run` records (every 40 ms), besides every traffic vehicle's speed.
RECORD = ["car.x", "car.v", "car.a", "radar.range", "radar.range_rate", "radar.valid",
          "radar.target", "acc.throttle", "acc.brake_torque", "acc.accel_request", "acc.mode",
          "acc.braking", "acc.engine_torque_request"]


def simulation(t_end: float) -> dict:
    """Simulator settings of the examples (also ``SIMULATION`` for ``cosim run``)."""
    return dict(t_end=t_end, solver="ab3", dt=DT, record_every=RECORD_EVERY)


def run(diagram: Any, t_end: float, record: Any = None, **sim_kw: Any):
    """AB3 at 8 ms, recorded every 40 ms (``sim_kw``: more Simulator options, e.g.
    ``compiled``); returns ``(results, wall_s)``."""
    extra = [f"{n}.v" for n, blk in diagram.blocks.items()
             if n not in ("car", "acc", "radar", "set_speed") and "v" in blk.outputs]
    sim = Simulator(diagram, solver="ab3", dt=DT, record=record or RECORD + extra,
                    record_every=RECORD_EVERY, **sim_kw)
    w = time.perf_counter()
    res = sim.run(t_end)
    return res, time.perf_counter() - w


def pedal_figures(res) -> dict:
    """Throttle/brake overlap and switching counts of a run."""
    thr, brk = res["acc.throttle"], res["acc.brake_torque"]
    mode = res["acc.braking"]
    return {"overlap_samples": int(np.count_nonzero((thr > 1e-9) & (brk > 1e-9))),
            "brake_mode_switches": int(np.count_nonzero(np.diff(mode) != 0)),
            "follow_mode_switches": int(np.count_nonzero(np.diff(res["acc.mode"]) != 0))}
