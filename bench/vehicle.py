"""Vehicle and ACC: the seed's scenarios on the one-gear plant and on the full car.

The seed (Kim et al., notes: ../shared/research/seed-000-part1.md section 11) runs 120 s
of its ACC vehicle with AB3 at 8 ms in 5.23 s CPU on a Pentium IV 1.6 GHz.  Here:

* ``ours``: the diagrams of ``examples/acc_plant.py`` (point-mass car with one gear) and
  ``examples/acc_full_vehicle.py`` (engine map, torque converter, 4-speed automatic with
  its TCU, brakes; the inner acceleration loop), with the traffic and radar of
  :mod:`blocks.vehicle.scenarios` and the ACC controller at 16 ms; AB3 at 8 ms, recorded
  every 40 ms, as the examples run them;
* ``straight-line``: the same equations with no engine at all: one Python loop per run
  that keeps the state in a NumPy vector, integrates it with the same AB3 (RK4 starts,
  the same restarts) and calls the same physics (the blocks' own helper methods and the
  controller's law through a minimal context).  It is the floor for a Python tool that
  keeps the models in Python; ``abs_err`` is its final-position difference to ours,
  which says it is the same model;
* ``seed``: the published 5.23 s for 120 s (another machine, 2002: for scale, not a
  measurement).

``flagship_frame_2ms``: the CPU work of one 2 ms real-time frame of the flagship's plant
and ECU (:mod:`bench.flagship_frame`), target p50 <= 300 us (issue 35), and the same probe
with everything in the Python loop (its ratio: the gain in the same machine state).

Targets: the 120 s cut-in on the full car in <= 0.05 s as the examples run it
(``compiled=None``: in C when every block has a C form; issue 35); the vehicle issue's
<= 0.5 s on the one-gear plant and <= 1.0 s on the full car (240x and 120x real time) for
the Python loop (peer ``ours-python-loop``, ``compiled=False``).
"""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

import numpy as np

from bench import flagship_frame as ff
from bench.harness import (
    STATUS_ERROR,
    STATUS_OK,
    Options,
    log,
    make_case,
    make_target,
    measure,
    not_timed,
)

NAME = "vehicle"
DESCRIPTION = "ACC scenarios of the seed on the one-gear plant and the full car"
PACKAGES: tuple = ()

T_CUT_IN = 120.0
DT = 0.008
SEED_S = 5.23


# ------------------------------------------------------------------------ ours
def _scenario(name: str, t_end: float | None = None):
    from examples import acc_cut_in, acc_cut_out, acc_stop_and_go
    sc = {"cut_in": acc_cut_in.scenario, "stop_and_go": acc_stop_and_go.scenario,
          "cut_out": acc_cut_out.scenario}[name]()
    return sc, (t_end or sc.t_end_s)


def ours_one_gear(name: str, t_end: float | None = None, compiled: bool | None = None):
    """The example's run (``compiled=None``: in C when every block has a C form and the run
    pays for it, else the Python loop; ``False``: the Python loop)."""
    from examples.acc_plant import build_loop, run

    def case():
        t0 = time.perf_counter()
        sc, te = _scenario(name, t_end)
        d = build_loop(sc)
        build = time.perf_counter() - t0
        res, wall = run(d, te, compiled=compiled)
        return build, wall, {"x_end": float(res["car.x"][-1]), "t_end": te,
                             "compiled": res.diagnostics["compiled"]}
    return case


def ours_full(name: str, t_end: float | None = None, compiled: bool | None = None):
    from examples.acc_full_vehicle import RECORD, build
    from examples.acc_plant import run

    def case():
        t0 = time.perf_counter()
        d, sc = build(name)
        build_s = time.perf_counter() - t0
        res, wall = run(d, t_end or sc.t_end_s, record=RECORD, compiled=compiled)
        return build_s, wall, {"x_end": float(res["car.x"][-1]),
                               "compiled": res.diagnostics["compiled"]}
    return case


# ------------------------------------------------------------- straight line
class _Ctx(SimpleNamespace):
    """What the controller's law reads: inputs, discrete states, its parameter, time."""

    def input(self, port):
        return self.u[port]

    def discrete(self, h):
        return self.xd[h]

    def param(self, h):
        return self.p[h]


class _AB3:
    """AB3 with RK4 starts, as cosim.solvers.AB3 (the starter reuses f_n)."""

    def __init__(self, f):
        self.f, self.hist = f, []

    def step(self, t, y, h):
        f = self.f
        fn = f(t, y)
        if len(self.hist) < 2:
            self.hist.append(fn)
            hh = 0.5 * h
            k2 = f(t + hh, y + hh * fn)
            k3 = f(t + hh, y + hh * k2)
            k4 = f(t + h, y + h * k3)
            return y + (h / 6.0) * (fn + 2.0 * (k2 + k3) + k4)
        f1, f2 = self.hist[-1], self.hist[-2]
        self.hist = [f1, fn]
        return y + (h / 12.0) * (23.0 * fn - 16.0 * f1 + 5.0 * f2)


def _radar(traffic, t, x, v, length=4.5, max_range=150.0):
    best, bv = math.inf, 0.0
    for x0, speed, lane in traffic:
        if not lane(t):
            continue
        r = x0 - length + speed * t - x
        if -length < r < best:
            best, bv = r, speed
    if best > max_range:
        return max_range, 0.0, 0.0
    return best, bv - v, 1.0


def _cut_in_traffic(sc):
    lead, cut = sc.vehicles
    t_in = cut.lane_changes_s[0]
    return [(lead.x0_m, lead.profile.speed(0.0), lambda t: True),
            (cut.x0_m, cut.profile.speed(0.0), lambda t: t >= t_in - 1e-12)]


def straight_one_gear(t_end: float = T_CUT_IN):
    """The one-gear cut-in loop in one Python function (module docstring)."""
    from blocks.controllers import ACCController
    from examples.acc_plant import (
        CONTROL_PERIOD,
        IDLE_RAD_S,
        STICTION_M_S,
        PointMassCar,
        demo_model,
    )

    def case():
        t0 = time.perf_counter()
        sc, _ = _scenario("cut_in")
        md = demo_model()
        car = PointMassCar("car", md, v0_m_s=sc.ego_v0_m_s, x0_m=sc.ego_x0_m)
        acc = ACCController("acc", CONTROL_PERIOD, md)
        traffic = _cut_in_traffic(sc)
        build = time.perf_counter() - t0
        w0 = time.perf_counter()
        m, N, R = md, car.N, md.wheel_radius_m
        k_drive, m_eff, tau_e, tau_b = car.k_drive, car.m_eff, car.tau_e, car.tau_b
        rho_cda = 0.5 * m.air_density_kg_m3 * m.drag_area_m2
        mgf = m.mass_kg * m.gravity_m_s2 * m.rolling_resistance
        torque = m.engine.torque
        held = [0.0, 0.0]  # throttle, brake torque

        def accel(v, te, tb):
            if v * N / R < IDLE_RAD_S and te < 0.0:
                te = 0.0
            sat = v / STICTION_M_S
            sat = sat if -1.0 < sat < 1.0 else math.copysign(1.0, sat)
            return (k_drive * te - rho_cda * v * abs(v) - (max(tb, 0.0) / R + mgf) * sat) \
                / m_eff

        def f(t, y):
            x, v, te, tb = y.tolist()
            alpha = min(max(held[0], 0.0), 1.0)
            t_map = torque(alpha, max(v * N / R, IDLE_RAD_S))
            return np.array((v, accel(v, te, tb), (t_map - te) / tau_e,
                             (held[1] - tb) / tau_b))

        p = acc.inputs
        ctx = _Ctx(u={p["set_speed"]: sc.set_speed_m_s, p["gear_ratio"]: car.ig},
                   xd={h: 0.0 for h in acc.discrete_states}, p={acc.time_gap: 1.5})
        y = np.array([sc.ego_x0_m, sc.ego_v0_m_s, m.resistance(sc.ego_v0_m_s) / k_drive, 0.0])
        solver = _AB3(f)
        n = int(round(t_end / DT))
        every = int(round(CONTROL_PERIOD / DT))
        t_break = int(round(sc.vehicles[1].lane_changes_s[0] / DT))
        for k in range(n):
            t = k * DT
            if k == t_break:
                solver.hist = []  # a time event: the simulator restarts AB3 there
            if k % every == 0:
                x, v = float(y[0]), float(y[1])
                rng, rr, valid = _radar(traffic, t, x, v)
                u = ctx.u
                u[p["range"]], u[p["range_rate"]], u[p["target_valid"]] = rng, rr, valid
                u[p["speed"]] = v
                out = acc._step(ctx)
                held[0], held[1] = out[0], out[1]
                for h, val in zip(acc.discrete_states, out[6:9]):
                    ctx.xd[h] = val
            y = solver.step(t, y, DT)
        return build, time.perf_counter() - w0, {"x_end": float(y[0])}
    return case


def straight_full(t_end: float = T_CUT_IN):
    """The full car's cut-in loop in one Python function: the blocks' physics methods
    called directly (module docstring)."""
    from blocks.controllers import ACCController
    from blocks.vehicle import (
        PASSENGER_CAR,
        AutomaticGearbox,
        Brake,
        Engine,
        FinalDrive,
        LongitudinalVehicle,
        ShiftSchedule,
        TorqueConverter,
    )
    from examples.acc_full_vehicle import SETTINGS, controller_model
    from examples.acc_plant import CONTROL_PERIOD

    def case():
        t0 = time.perf_counter()
        sc, _ = _scenario("cut_in")
        c = PASSENGER_CAR
        tr = c.transmission
        w0 = sc.ego_v0_m_s * tr.gear_ratios[3] * tr.final_drive_ratio \
            / c.body.wheel_radius_m / 0.96
        eng, conv = Engine("engine", c.engine, speed0_rad_s=w0), TorqueConverter("tc")
        tcu, gb = ShiftSchedule("tcu", tr, initial_gear=4), AutomaticGearbox("gb", tr,
                                                                           initial_gear=4)
        fd, brk = FinalDrive("fd", tr), Brake("brake", c.brake)
        veh = LongitudinalVehicle("vehicle", c.body, v0_m_s=sc.ego_v0_m_s, x0_m=sc.ego_x0_m)
        acc = ACCController("acc", CONTROL_PERIOD, controller_model(), SETTINGS,
                            engine_speed_input=True, accel_input=True)
        traffic = _cut_in_traffic(sc)
        build = time.perf_counter() - t0
        wall0 = time.perf_counter()
        R, J = veh.r, eng.J
        held = [0.0, 0.0, 4]  # throttle, brake request, gear

        def chain(y):
            w, ratio, tb, x, v = y.tolist()
            wheel = v / R
            w_out = fd.ratio * wheel
            tp, tt, _ = conv.torques(w, ratio * w_out)
            drive = fd.output_torque(gb.output_torque(ratio, tt, w_out), wheel)
            f_a, _, f_f = veh.forces(v, drive, tb, 0.0)
            return w, ratio, tb, v, tp, (f_a - f_f) / veh.m_eq

        def f(t, y):
            w, ratio, tb, v, tp, a = chain(y)
            te = eng.map.torque(eng.effective_throttle(held[0], w), w)
            dw = (te - tp) / J
            return np.array((0.0 if (w <= 0.0 and dw < 0.0) else dw,
                             (gb.gear_ratio(held[2]) - ratio) * gb.rate,
                             (brk.commanded(held[1]) - tb) / brk.tau, v, a))

        p = acc.inputs
        ctx = _Ctx(u={p["set_speed"]: sc.set_speed_m_s}, xd={h: 0.0 for h in
                                                              acc.discrete_states},
                   p={acc.time_gap: SETTINGS.time_gap_s})
        ctx.xd[acc.ratio_prev] = math.nan
        g_state, last_shift = 4, -math.inf
        y = np.array([w0, tr.gear_ratios[3], 0.0, sc.ego_x0_m, sc.ego_v0_m_s])
        solver = _AB3(f)
        n = int(round(t_end / DT))
        acc_every = int(round(CONTROL_PERIOD / DT))
        tcu_every = int(round(tr.shift_period_s / DT))
        t_break = int(round(sc.vehicles[1].lane_changes_s[0] / DT))
        for k in range(n):
            t = k * DT
            if k == t_break:
                solver.hist = []
            if k % acc_every == 0:
                w, ratio, _, v, _, a = chain(y)
                rng, rr, valid = _radar(traffic, t, float(y[3]), v)
                u = ctx.u
                u[p["range"]], u[p["range_rate"]], u[p["target_valid"]] = rng, rr, valid
                u[p["speed"]], u[p["gear_ratio"]] = v, ratio
                u[p["engine_speed"]], u[p["accel"]] = w, a
                ctx.time = t
                out = acc._step(ctx)
                held[0], held[1] = out[0], out[1]
                for h, val in zip(acc.discrete_states, out[7:12]):
                    ctx.xd[h] = val
            if k % tcu_every == 0:
                if held[2] != g_state:  # the held gear changes: a mode, AB3 restarts
                    held[2] = g_state
                    solver.hist = []
                if t - last_shift >= tr.min_shift_interval_s - 1e-12:
                    new = tcu.decide(g_state, float(y[4]), held[0])
                    if new != g_state:
                        g_state, last_shift = new, t
            y = solver.step(t, y, DT)
        return build, time.perf_counter() - wall0, {"x_end": float(y[3])}
    return case


# ------------------------------------------------------------------------ suite
def _seed(t_end: float) -> dict:
    return {"status": "estimated", "median_s": SEED_S * t_end / T_CUT_IN, "min_s": None,
            "samples": [], "basis": "published (seed: Pentium IV 1.6 GHz, 2002; scaled to "
            "the horizon)", "us_per_block_step": None, "abs_err": None, "note": ""}


def _with_err(m: dict, ours: dict) -> dict:
    xo = (ours.get("extra") or {}).get("x_end")
    xs = (m.get("extra") or {}).get("x_end")
    if xo is not None and xs is not None:
        m["abs_err"] = abs(xo - xs)
        m["accuracy_metric"] = "final position vs ours [m]"
    return m


def run(options: Options) -> dict:
    kw = dict(repeats=options.repeats, budget_s=options.budget_s)
    steps = int(round(T_CUT_IN / DT))
    cases, targets = [], []
    log("[vehicle] cut-in 120 s, one-gear plant", options)
    ours = measure(ours_one_gear("cut_in", T_CUT_IN), steps=steps, blocks=6, **kw)
    ref = _with_err(measure(straight_one_gear(), steps=steps, blocks=6, **kw), ours)
    py1 = _with_err(measure(ours_one_gear("cut_in", T_CUT_IN, False), steps=steps, blocks=6,
                            **kw), ours)
    cases.append(make_case("cut_in_120s_one_gear", ours,
                           {"straight-line": ref, PY_LOOP: py1, "seed": _seed(T_CUT_IN)}))
    log("[vehicle] cut-in 120 s, full car", options)
    full = measure(ours_full("cut_in", T_CUT_IN), steps=steps, blocks=12, **kw)
    ref = _with_err(measure(straight_full(), steps=steps, blocks=12, **kw), full)
    pyf = _with_err(measure(ours_full("cut_in", T_CUT_IN, False), steps=steps, blocks=12,
                            **kw), full)
    cases.append(make_case("cut_in_120s_full_car", full,
                           {"straight-line": ref, PY_LOOP: pyf, "seed": _seed(T_CUT_IN)}))
    for name in ("stop_and_go", "cut_out"):
        log(f"[vehicle] {name}", options)
        m = measure(ours_one_gear(name), steps=None, blocks=None, **kw)
        te = (m.get("extra") or {}).get("t_end", T_CUT_IN)
        cases.append(make_case(f"{name}_{te:g}s_one_gear", m, {"seed": _seed(te)}))
        if name == "stop_and_go":
            mf = measure(ours_full(name), steps=None, blocks=None, **kw)
            cases.append(make_case(f"{name}_{te:g}s_full_car", mf, {"seed": _seed(te)}))
    log("[vehicle] the flagship's real-time frame (plant and ECU)", options)
    fw = _flagship_frame(2.0 if options.quick else 10.0)
    fpy = _flagship_frame(2.0 if options.quick else 10.0, compiled=False)
    cases.append(make_case("flagship_frame_2ms", fw, {PY_LOOP: fpy}))
    targets.append(make_target("flagship real-time frame: plant + ECU work per 2 ms frame, p50 "
                               "[us]", (fw.get("extra") or {}).get("p50_us"), "<=",
                               f"{ff.GOAL_P50_US:g}", source="issue 35",
                               note=ff.note(fw.get("extra") or {})))
    targets.append(make_target("cut-in 120 s, full car: wall [s] (compiled=None)",
                               full.get("median_s"), "<=", "0.05",
                               source="issue 35: the full car in C",
                               note=_ran(full)))
    targets.append(make_target("cut-in 120 s, one-gear plant, Python loop: wall [s]",
                               py1.get("median_s"), "<=", "0.5",
                               source="vehicle issue: at least 240x real time"))
    targets.append(make_target("cut-in 120 s, full car, Python loop: wall [s]",
                               pyf.get("median_s"), "<=", "1.0", source="vehicle issue"))
    return {"cases": cases, "targets": targets}


def _flagship_frame(seconds: float, compiled: bool | None = None) -> dict:
    """The flagship's frame work (:mod:`bench.flagship_frame`) as a measurement entry;
    ``compiled=False``: the rig all in the Python loop."""
    try:
        m = ff.frame_work(seconds, compiled)
    except Exception as exc:  # noqa: BLE001 - reported as the case's failure
        return {**not_timed(STATUS_ERROR, f"{type(exc).__name__}: {exc}"), "extra": {}}
    return {"status": STATUS_OK, "median_s": m["median_s"], "min_s": None, "samples": [],
            "basis": "measured", "steps": m["frames"], "blocks": None,
            "us_per_block_step": None, "abs_err": None, "extra": m, "note": ff.note(m)}


#: our examples' run with ``compiled=False`` (the Python loop), beside ours (``None``)
PY_LOOP = "ours-python-loop"


def _ran(m: dict) -> str:
    ran = (m.get("extra") or {}).get("compiled")
    if ran is True:
        return "ran in C"
    if isinstance(ran, str) and ran.startswith("partly"):  # timed Python steps, then C
        return f"ran in C after the Python loop's first steps ({ran})"
    return f"ran in Python: {ran}" if ran else ""
