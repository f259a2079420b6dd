"""The C forms of the crane blocks (GantryCrane, OperatorProgram) and of the electric library
(CraneDrive, Gearbox, Battery, PMSM, DQCurrentController, AveragedInverter, TorqueToCurrent)
against the Python loop, their oracle.

Each block runs over a generated corpus: seeded random parameters within their valid ranges,
inputs from Sine + Step + Ramp sources of random amplitude that reach the modes of the block
(torque-curve limits in all four quadrants and every curve interpolation, gearbox power-flow
reversals with and without smoothing, OCV tables beyond their ends, the voltage circle limit
with both anti-windups, current limits, operator program segments and arm commands, rope
and pendulum motion, the guide arms pushing on the target container), run with
``compiled=True`` and ``compiled=False`` under every fixed-step solver of the compiled run:
identical times, every recorded signal within 1e-12 of its range (``_compare``); the C side
must really run in C (``diagnostics["compiled"] is True``: without a C form,
``compiled=True`` raises).  Then the gantry crane example's own diagram over its full
scenario, and the crane's faults failing the C run as they fail the Python loop.
"""

from __future__ import annotations

import dataclasses
import math
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import blocks as bl
from blocks.cranes import (
    STS_CRANE,
    ContainerLoad,
    GantryCrane,
    OperatorProgram,
    TargetContainer,
    connect_drives,
    equilibrium,
    make_drives,
    trapezoid,
)
from blocks.electric import (
    PMSM,
    AveragedInverter,
    Battery,
    CraneDrive,
    DQCurrentController,
    Gearbox,
    PMSMParameters,
    TorqueToCurrent,
)
from cosim import DiagramBuilder, Simulator
from cosim.errors import StepError
from tests.corpus.compiled_oracle import run_both

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

SOLVERS = ["rk4", "heun", "midpoint", "euler"]


_both = run_both  # the diagram make() run in Python and in C, compared


def _signal(b, name, rng, amp, bias=0.0, t_end=1.0):
    """A Sine + Step + Ramp (random amplitudes, frequency, times) as one signal port."""
    s = b.add(bl.Sum(f"{name}_sum", "+++"))
    sine = b.add(bl.Sine(f"{name}_sine", amplitude=amp * rng.uniform(0.3, 1.0),
                         frequency_hz=rng.uniform(0.3, 3.0) / t_end,
                         phase_rad=rng.uniform(0, 2 * math.pi), bias=bias))
    step = b.add(bl.Step(f"{name}_step", time_s=round(rng.uniform(0.1, 0.9) * t_end, 4),
                         final=amp * rng.uniform(-1.0, 1.0)))
    ramp = b.add(bl.Ramp(f"{name}_ramp", slope=amp * rng.uniform(-1.0, 1.0) / t_end,
                         start_s=round(rng.uniform(0.0, 0.5) * t_end, 4)))
    for k, src in enumerate((sine, step, ramp)):
        b.connect(src.y, s.ins[k])
    return s.y


def _solver(seed):
    return SOLVERS[seed % len(SOLVERS)]


# ------------------------------------------------------------------ CraneDrive
def _curve(rng):
    n = int(rng.integers(2, 7))
    speeds = np.cumsum(rng.uniform(5.0, 40.0, n)) - rng.uniform(0.0, 5.0)
    speeds[0] = max(speeds[0], 0.0) if rng.random() < 0.5 else 0.0
    torques = rng.uniform(200.0, 3000.0, n)
    return speeds.tolist(), torques.tolist()


def crane_drive_diagram(seed):
    """A CraneDrive on an inertia (speed = integral of force / mass), or on a speed source,
    with speed references that drive it into its torque curve in all four quadrants."""
    rng = np.random.default_rng(1000 + seed)
    speeds, torques = _curve(rng)
    interp = ("linear", "pchip", "spline")[seed % 3]
    geared = rng.random() < 0.75
    top = speeds[-1]
    b = DiagramBuilder(f"crane_drive_{seed}")
    d = b.add(CraneDrive(
        "drive", gain_nms_per_rad=rng.uniform(2.0, 60.0),
        time_constant_s=rng.uniform(0.005, 0.1), curve_speed_rad_s=speeds,
        curve_torque_nm=torques, interpolation=interp,
        travel_per_rad_m=rng.uniform(0.01, 0.3) if geared else None,
        efficiency=rng.uniform(0.7, 1.0), damping_ns_per_rad=rng.uniform(0.0, 5.0),
        motors=int(rng.integers(1, 5)), torque_ref0_nm=rng.uniform(-500.0, 500.0)))
    b.connect(_signal(b, "ref", rng, 1.3 * top), d.speed_ref)
    if geared and rng.random() < 0.7:  # closed loop through an inertia
        inv_m = b.add(bl.Gain("inv_m", 1.0 / rng.uniform(50.0, 500.0)))
        acc = b.add(bl.Sum("acc", "+-"))
        body = b.add(bl.Integrator("v", x0=rng.uniform(-0.5, 0.5) * top))
        load = b.add(bl.Gain("load", rng.uniform(0.0, 5.0)))
        b.connect(d.force, acc.ins[0])
        b.connect(body.y, load.u)
        b.connect(load.y, acc.ins[1])
        b.connect(acc.y, inv_m.u)
        b.connect(inv_m.y, body.u)
        b.connect(body.y, d.speed)
    else:
        b.connect(_signal(b, "speed", rng, 1.4 * top), d.speed)
    return b.build()


@pytest.mark.parametrize("seed", range(12))
def test_crane_drive_corpus(seed):
    _both(lambda: crane_drive_diagram(seed), 1.0, solver=_solver(seed), dt=1e-3)


def test_crane_drive_corpus_reaches_the_curve_in_both_directions():
    limited = set()
    for seed in range(12):
        r = Simulator(crane_drive_diagram(seed), compiled=False, solver=_solver(seed),
                      dt=1e-3).run(1.0)
        tq, lim = r["drive.torque"], r["drive.torque_limit"]
        on = np.abs(tq) >= lim
        if np.any(on & (tq > 0)) and np.any(on & (tq < 0)) and np.any(~on):
            limited.add(seed % 3)  # the interpolation of the seed
    assert limited == {0, 1, 2}


# ---------------------------------------------------------- OperatorProgram
def operator_diagram(seed):
    """An OperatorProgram of random trapezoids and ramps (corners on and off the step grid)
    and arm commands, its velocities integrated."""
    rng = np.random.default_rng(2000 + seed)
    grid = 0.001 if seed % 2 else 0.0007  # off the solver's grid: the time events stop there

    def moves():
        pts, t0 = [], round(rng.uniform(0.0, 0.3), 3)
        for _ in range(int(rng.integers(1, 3))):
            pts += trapezoid(t0, rng.uniform(-3.0, 3.0), rng.uniform(0.5, 3.0),
                             rng.uniform(1.0, 10.0), grid_s=grid)
            t0 = round(pts[-1][0] + rng.uniform(0.0, 0.3), 3)
        return pts

    def levels():
        ts = np.sort(rng.uniform(0.0, 2.0, int(rng.integers(0, 4))))
        return [(round(float(t), 4), float(rng.integers(0, 2))) for t in ts]

    kw = {"gantry": moves(), "trolley": moves(),
          "hoist": [(round(float(t), 4), float(v)) for t, v in
                    zip(np.sort(rng.uniform(0.0, 2.0, 4)), rng.uniform(-2.0, 2.0, 4),
                        strict=True)],
          "arms_12": levels(), "arms_34": levels(), "arm_5": levels(), "arm_6": levels()}
    b = DiagramBuilder(f"operator_{seed}")
    op = b.add(OperatorProgram("op", **kw))
    for ch in ("gantry", "trolley", "hoist"):
        integ = b.add(bl.Integrator(f"{ch}_pos"))
        b.connect(getattr(op, f"{ch}_velocity_ref"), integ.u)
    return b.build()


@pytest.mark.parametrize("seed", range(8))
def test_operator_program_corpus(seed):
    py, _ = _both(lambda: operator_diagram(seed), 2.5, solver=_solver(seed), dt=1e-3)
    assert np.ptp(py["op.trolley_velocity_ref"]) > 0.0


# ----------------------------------------------------------------- GantryCrane
def crane_diagram(seed, diagnostics=False):
    """The crane with its three drives and an operator over random parameters (rope, mass,
    container load, wind, arms, target offset) starting low over the target container with
    the arms going down: sway, rope dynamics, the arms' stops and their contact."""
    rng = np.random.default_rng(3000 + seed)
    loaded = seed % 3 == 2
    off = rng.choice([-1.0, 1.0], 2) * rng.uniform(0.2, 0.45, 2)  # arms of one side touch
    target = TargetContainer(center_x_m=35.0 + off[0], center_z_m=6.0 + off[1],
                             top_m=12.0 - (2.6 if loaded else 0.0))
    arms = dataclasses.replace(STS_CRANE.arms, gain_nm_per_rad=rng.uniform(1e4, 3e4),
                               torque_max_nm=rng.uniform(2000.0, 4000.0),
                               contact_stiffness_nm_per_rad=rng.uniform(5e4, 2e5))
    params = dataclasses.replace(
        STS_CRANE, target=target, arms=arms,
        rope_axial_stiffness_n=rng.uniform(2e7, 5e7),
        rope_damping_time_s=rng.uniform(0.001, 0.005),
        spreader_mass_kg=rng.uniform(8e3, 12e3),
        container=ContainerLoad(mass_kg=rng.uniform(10e3, 35e3),
                                com_offset_m=(rng.uniform(-0.2, 0.2), 0.0,
                                              rng.uniform(-1.0, 1.0))) if loaded else None,
        wind_velocity_m_s=(rng.uniform(-8.0, 8.0), 0.0, rng.uniform(-8.0, 8.0)),
        quaternion_stabilization_per_s=rng.uniform(5.0, 20.0))
    rope = rng.uniform(27.2, 27.7) if loaded else rng.uniform(27.9, 28.3)
    hold: dict = {}
    x0 = equilibrium(params, 6.0, 35.0, rope, report=hold)
    b = DiagramBuilder(f"crane_{seed}")
    crane = b.add(GantryCrane("crane", params, initial_state=x0, diagnostics=diagnostics))
    drives = make_drives(params, hold)
    for d in drives.values():
        b.add(d)
    connect_drives(b, crane, drives)
    t_arms = round(rng.uniform(0.0, 0.5), 3)
    program = {"trolley": trapezoid(0.0, rng.uniform(-0.6, 0.6), 0.5, 0.5),
               "gantry": trapezoid(0.0, rng.uniform(-0.4, 0.4), 0.3, 0.3),
               "hoist": trapezoid(round(rng.uniform(1.0, 2.0), 3), -rng.uniform(0.0, 0.3),
                                  0.3, 0.5),
               "arms_12": [(t_arms, 1.0)], "arms_34": [(t_arms, 1.0)],
               "arm_5": [(t_arms + 0.5, 1.0)], "arm_6": [(t_arms + 0.5, 1.0)]}
    if seed % 4 == 3:  # one group goes back up: the upper stop bar
        program["arms_34"] = [(t_arms, 1.0), (t_arms + 2.0, 0.0)]
    op = b.add(OperatorProgram("operator", **program))
    for name in ("gantry_velocity_ref", "trolley_velocity_ref", "hoist_velocity_ref",
                 "arms_12", "arms_34", "arm_5", "arm_6"):
        b.connect(getattr(op, name), getattr(crane, name))
    return b.build()


CRANE_RECORD = ["crane.state", "crane.spreader_x", "crane.hoist_speed_ref",
                "crane.trolley_motor_speed", "trolley_drive.torque", "hoist_drive.force",
                "gantry_drive.torque_limit", "operator.arms_12"]


@pytest.mark.parametrize("seed", range(8))
def test_gantry_crane_corpus(seed):
    diag = seed % 2 == 1
    record = CRANE_RECORD + (["crane.rope_tension", "crane.arm_contact_torque"] if diag else [])
    py, _ = _both(lambda: crane_diagram(seed, diagnostics=diag), 6.0, solver=_solver(seed),
                  dt=0.005, record=record)
    x = py["crane.state"]
    assert np.ptp(x[:, 4]) > 1e-3  # the spreader sways
    assert np.min(x[:, 21:27]) < 0.0  # the arms went down
    if diag and seed % 3 != 2:  # unloaded (a carried container keeps the arms off it)
        assert np.max(py["crane.arm_contact_torque"]) > 0.0  # and touched the target


def test_gantry_crane_example_full_scenario():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    try:
        import gantry_crane as ex
    finally:
        sys.path.pop(0)
    py, c = _both(ex.build, ex.T_END, solver="rk4", dt=ex.DT, record=ex.RECORD)
    s = ex.summary(c)
    assert s["arms_that_touched"]  # the scenario's contact phase was run in C
    for k in py.signals:
        np.testing.assert_array_equal(py[k], c[k])  # bit for bit


def test_flatness_crane_example_trapezoid_case():
    """examples/flatness_crane.py's diagram (a loaded spreader, an empty OperatorProgram for
    the arms, a trapezoid program for trolley and hoist) over its move."""
    import examples.flatness_crane as ex
    hoist = ex.trapezoid_same_time(ex.T0, ex.L0_START - ex.L0_END, ex.DURATION, ex.HOIST_ACCEL)
    trolley = ex.trapezoid_same_time(ex.T0, ex.XF - ex.X0, ex.DURATION, 0.5)

    def make():
        return ex._diagram(ex.PARAMS, OperatorProgram("reference", trolley=trolley,
                                                      hoist=hoist), ex.L0_START)

    _both(make, 30.0, solver="rk4", dt=ex.DT,
          record=["crane.spreader_x", "crane.trolley_position", "crane.hoist_length",
                  "crane.state"])


def test_electric_drives_example_pmsm_torque_step():
    """examples/electric_drives.py's PMSM torque step (PMSMDrive on GEM_PMSM), its first
    10 ms at the example's 1 us."""
    import examples.electric_drives as ex

    def make():
        b = DiagramBuilder("pmsm")
        drive = b.add(bl.electric.PMSMDrive("drive", bl.electric.GEM_PMSM,
                                            bandwidth_rad_s=ex.BANDWIDTH))
        tr = b.add(bl.Step("tr", ex.PMSM_T_STEP, ex.PMSM_TORQUE, unit="N*m"))
        w = b.add(bl.Constant("w", ex.PMSM_SPEED, unit="rad/s"))
        udc = b.add(bl.Constant("udc", ex.U_DC, unit="V"))
        b.connect(tr.y, drive.input("torque_ref"))
        b.connect(w.y, drive.input("speed"))
        b.connect(udc.y, drive.input("u_dc"))
        return b.build()

    _both(make, 0.01, solver="rk4", dt=1e-6)


def test_gantry_crane_fault_fails_the_compiled_run_too():
    def make():
        hold: dict = {}
        x0 = equilibrium(STS_CRANE, 0.0, 0.0, 2.0, report=hold)
        b = DiagramBuilder("two_blocked")
        crane = b.add(GantryCrane("crane", STS_CRANE, initial_state=x0))
        drives = make_drives(STS_CRANE, hold)
        for d in drives.values():
            b.add(d)
        connect_drives(b, crane, drives)
        op = b.add(OperatorProgram("operator", hoist=[(0.0, 0.0), (0.5, 1.5)]))
        for name in ("gantry_velocity_ref", "trolley_velocity_ref", "hoist_velocity_ref"):
            b.connect(getattr(op, name), getattr(crane, name))
        for name in ("arms_12", "arms_34", "arm_5", "arm_6"):
            b.connect(getattr(op, name), getattr(crane, name))
        return b.build()

    with pytest.raises(StepError, match="two-blocked"):
        Simulator(make(), compiled=False, solver="rk4", dt=0.005).run(5.0)
    with pytest.raises(StepError, match="two-blocked"):
        Simulator(make(), compiled=True, solver="rk4", dt=0.005).run(5.0)


# -------------------------------------------------------------------- Gearbox
def gearbox_diagram(seed):
    rng = np.random.default_rng(4000 + seed)
    b = DiagramBuilder(f"gearbox_{seed}")
    g = b.add(Gearbox("gb", ratio=rng.choice([-1.0, 1.0]) * rng.uniform(0.2, 15.0),
                      efficiency=rng.uniform(0.4, 1.0),
                      smoothing_power_w=0.0 if seed % 2 else rng.uniform(1.0, 500.0)))
    b.connect(_signal(b, "torque", rng, rng.uniform(5.0, 100.0)), g.torque_in)
    b.connect(_signal(b, "speed", rng, rng.uniform(1.0, 20.0)), g.speed_out)
    acc = b.add(bl.Integrator("work"))  # the loss integrated: a continuous state too
    b.connect(g.power_loss, acc.u)
    return b.build()


@pytest.mark.parametrize("seed", range(8))
def test_gearbox_corpus(seed):
    py, _ = _both(lambda: gearbox_diagram(seed), 1.0, solver=_solver(seed), dt=1e-3)
    assert np.all(py["gb.power_loss"] >= -1e-9 * np.max(np.abs(py["gb.power_loss"])))


# -------------------------------------------------------------------- Battery
def battery_diagram(seed):
    rng = np.random.default_rng(5000 + seed)
    b = DiagramBuilder(f"battery_{seed}")
    kind = seed % 3
    cap = rng.uniform(0.001, 0.01)  # small: the SoC crosses the table in a second
    if kind == 0:
        bat = Battery("bat", internal_resistance_ohm=rng.uniform(0.0, 0.5),
                      open_circuit_voltage_v=rng.uniform(12.0, 400.0))
    elif kind == 1:
        bat = Battery("bat", internal_resistance_ohm=rng.uniform(0.0, 0.5),
                      open_circuit_voltage_v=rng.uniform(12.0, 400.0), capacity_ah=cap,
                      soc0=rng.uniform(0.2, 1.0))
    else:
        n = int(rng.integers(2, 8))
        soc = np.sort(rng.uniform(0.05, 0.95, n))
        bat = Battery("bat", internal_resistance_ohm=rng.uniform(0.0, 0.5), capacity_ah=cap,
                      soc0=rng.uniform(0.5, 1.1), ocv_soc=soc.tolist(),
                      ocv_v=np.sort(rng.uniform(300.0, 400.0, n)).tolist())
    b.add(bat)
    b.connect(_signal(b, "i", rng, rng.uniform(10.0, 60.0), bias=rng.uniform(0.0, 40.0)),
              bat.current)
    return b.build()


@pytest.mark.parametrize("seed", range(9))
def test_battery_corpus(seed):
    _both(lambda: battery_diagram(seed), 1.0, solver=_solver(seed), dt=1e-3)


# ----------------------------------------------------------------------- PMSM
def _pmsm_params(rng):
    ld = rng.uniform(1e-4, 2e-3)
    return PMSMParameters(resistance_ohm=rng.uniform(0.005, 0.1), d_inductance_h=ld,
                          q_inductance_h=ld * rng.uniform(1.0, 3.0),
                          pole_pairs=int(rng.integers(1, 6)),
                          flux_linkage_wb=rng.uniform(0.02, 0.15))


def pmsm_diagram(seed):
    """TorqueToCurrent -> DQCurrentController -> AveragedInverter -> PMSM (with or without its
    rotor inertia, the controller with a mismatched model sometimes), a DC link from a
    battery or a source, torque and speed profiles that reach the current limit and the
    voltage circle (field weakening is not modelled: the voltage limit is)."""
    rng = np.random.default_rng(6000 + seed)
    mp = _pmsm_params(rng)
    cp = mp if rng.random() < 0.6 else _pmsm_params(rng)
    wc = rng.uniform(300.0, 3000.0)
    inertia = seed % 2 == 0
    aw = ("back_calculation", "clamping")[(seed // 2) % 2]
    b = DiagramBuilder(f"pmsm_{seed}")
    i_max = rng.uniform(50.0, 300.0) if rng.random() < 0.7 else None
    ref = b.add(TorqueToCurrent("ref", mp, current_limit_a=i_max))
    tracking = None if rng.random() < 0.5 else rng.uniform(0.0, 2.0 * wc)
    cc = b.add(DQCurrentController("cc", cp, bandwidth_rad_s=wc, anti_windup=aw,
                                   decoupling=rng.random() < 0.8, tracking_gain=tracking))
    inv = b.add(AveragedInverter("inv", time_constant_s=0.0 if seed % 3 == 0
                                 else rng.uniform(1e-4, 3e-4)))
    motor = b.add(PMSM("motor", mp, inertia_kgm2=rng.uniform(0.005, 0.05) if inertia
                       else None, friction_nms_per_rad=rng.uniform(0.0, 0.01) if inertia
                       else 0.0))
    kt = 1.5 * mp.pole_pairs * mp.flux_linkage_wb
    b.connect(_signal(b, "tq", rng, kt * rng.uniform(50.0, 400.0), t_end=0.1),
              ref.torque_ref)
    b.connect(ref.i_d_ref, cc.i_d_ref)
    b.connect(ref.i_q_ref, cc.i_q_ref)
    b.connect(cc.u_d_ref, inv.u_d_ref)
    b.connect(cc.u_q_ref, inv.u_q_ref)
    b.connect(inv.u_d, motor.u_d)
    b.connect(inv.u_q, motor.u_q)
    for dst in (cc.i_d, inv.i_d):
        b.connect(motor.i_d, dst)
    for dst in (cc.i_q, inv.i_q):
        b.connect(motor.i_q, dst)
    # DC link: a battery fed by the inverter's current through a filter (the link capacitor;
    # without it the link is an algebraic loop, which generated C does not solve), or a
    # source dipping below zero
    if seed % 4 < 2:
        bat = b.add(Battery("bat", internal_resistance_ohm=rng.uniform(0.01, 0.5),
                            open_circuit_voltage_v=rng.uniform(48.0, 400.0)))
        cap = b.add(bl.FirstOrderLag("cap", tau_s=rng.uniform(2e-4, 1e-3)))
        b.connect(inv.i_dc, cap.u)
        b.connect(cap.y, bat.current)
        u_dc = bat.voltage
    else:
        u_dc = _signal(b, "udc", rng, rng.uniform(20.0, 200.0), t_end=0.1,
                       bias=rng.uniform(30.0, 300.0) if seed % 4 == 2 else 10.0)
    link = b.add(bl.Gain("u_dc", 1.0))  # the DC link voltage, recorded as 'u_dc.y'
    b.connect(u_dc, link.u)
    b.connect(link.y, cc.u_dc)
    b.connect(link.y, inv.u_dc)
    if inertia:
        b.connect(motor.speed, cc.speed)
        b.connect(_signal(b, "load", rng, kt * rng.uniform(10.0, 100.0), t_end=0.1),
                  motor.load_torque)
    else:  # up to speeds where the back-EMF reaches the voltage limit
        w_top = 300.0 / (mp.pole_pairs * mp.flux_linkage_wb)
        sp = _signal(b, "speed", rng, w_top, t_end=0.1)
        b.connect(sp, cc.speed)
        b.connect(sp, motor.speed_in)
    return b.build()


def _pmsm_modes(res):
    """Which limits a PMSM run reached: the voltage circle (the controller's output on
    ``max(u_dc, 0) / sqrt 3``), the current limit (``i_q*`` held at its clip)."""
    u = np.hypot(res["cc.u_d_ref"], res["cc.u_q_ref"])
    udc = np.maximum(res["u_dc.y"], 0.0) / math.sqrt(3.0)
    on_circle = np.abs(u - udc) <= 1e-9 * np.maximum(udc, 1.0)
    iq = np.abs(res["ref.i_q_ref"])
    clipped = np.sum(iq == iq.max()) > 10
    return bool(np.any(on_circle & (udc > 0))), bool(clipped)


@pytest.mark.parametrize("seed", range(12))
def test_pmsm_drive_corpus(seed):
    py, _ = _both(lambda: pmsm_diagram(seed), 0.1, solver=_solver(seed), dt=5e-5)
    voltage_limited, current_limited = _pmsm_modes(py)
    assert voltage_limited or current_limited
