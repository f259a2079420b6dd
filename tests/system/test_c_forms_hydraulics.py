"""C forms of the hydraulics library (:mod:`blocks.hydraulics`) against the Python loop.

Each block runs over a generated corpus (seeded random parameters within their valid
ranges, inputs from Sine + Step + Ramp sources of random amplitude reaching the branches:
flow reversal and the laminar cubic, valves open and closed, relief and check valves
cracking, spool laps and end stops, the low-pressure softening, accumulator precharge, the
three bulk modulus models) with ``compiled=True`` and ``compiled=False``; the recorded
signals must agree to 1e-12 of their range (``_compare`` of test_compiled_run).  Then a
circuit (pump, relief valve, 4/3 valve, cylinder with a load mass and spring, lines,
accumulator) for 5 s with rk4.

The volume-like blocks (Volume, GasAccumulator, HydraulicLine, DoubleActingCylinder,
ValveControlledCylinder) declare a low-pressure monitor (a Python warning) with a C
condition: the compiled runs return to Python where it warns (its warnings against the Python
loop's: tests/system/test_compiled_monitors.py).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import blocks as bl
import blocks.hydraulics as hy
from cosim import DiagramBuilder, Simulator
from tests.system.test_compiled_run import _compare

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

#: the run length the drives are shaped for (set by _run_both)
T_END = [1.0]

FLUIDS = [
    hy.MINERAL_OIL,
    hy.LIM_OIL,
    hy.Fluid(density_kg_m3=860.0, bulk_modulus=hy.EntrainedAirBulkModulus(
        liquid_beta_pa=1.6e9, air_fraction=0.01, polytropic_index=1.2)),
]


def _drive(b, rng, name, unit, base, amp, t_end=None):
    """Sine + Step + Ramp around ``base`` with amplitudes of the order of ``amp`` (over a
    run of ``t_end``, default :data:`T_END`)."""
    t_end = T_END[0] if t_end is None else t_end
    s = b.add(bl.Sine(f"{name}_sin", amplitude=amp * rng.uniform(0.5, 1.5),
                      frequency_hz=rng.uniform(0.5, 3.0) / t_end, phase_rad=rng.uniform(0, 6.28),
                      bias=base, unit=unit))
    st = b.add(bl.Step(f"{name}_step", time_s=round(rng.uniform(0.1, 0.9) * t_end, 6),
                       final=amp * rng.uniform(-1.0, 1.0), unit=unit))
    r = b.add(bl.Ramp(f"{name}_ramp", slope=amp * rng.uniform(-1.0, 1.0) / t_end,
                      start_s=round(rng.uniform(0.0, 0.5) * t_end, 6), unit=unit))
    add = b.add(bl.Sum(f"{name}_sum", "+++", unit=unit))
    for k, src in enumerate((s, st, r)):
        b.connect(src.y, add.ins[k])
    return add.y


def _run_both(make, t_end=1.0, dt=1e-4, solver="rk4"):
    T_END[0] = t_end
    py = Simulator(make(), compiled=False, solver=solver, dt=dt).run(t_end)
    c = Simulator(make(), compiled=True, solver=solver, dt=dt).run(t_end)
    assert c.diagnostics["compiled"] is True
    _compare(py, c)
    return py, c


def _pressures(b, rng, name, p_lo=2e5, p_hi=100e5):
    return _drive(b, rng, name, "Pa", rng.uniform(p_lo, p_hi), rng.uniform(0.2, 1.0)
                  * (p_hi - p_lo))


# ------------------------------------------------------------------ feedthrough blocks
def _orifices(seed):
    rng = np.random.default_rng(seed)
    b = DiagramBuilder(f"orifices{seed}")
    dp_tr = 10 ** rng.uniform(3, 5)
    p_a = _pressures(b, rng, "pa")
    p_b = _pressures(b, rng, "pb")
    # small differences too: the laminar cubic around dp = 0
    p_c = _drive(b, rng, "pc", "Pa", 50e5, 3 * dp_tr)
    fixed = b.add(hy.Orifice("fixed", area_m2=rng.uniform(1e-6, 1e-4), cd=rng.uniform(0.6, 0.8),
                             fluid=FLUIDS[seed % 3], transition_pressure_pa=dp_tr))
    var = b.add(hy.Orifice("var", area_m2=None, transition_pressure_pa=dp_tr))
    nom = b.add(hy.NominalFlowValve("nom", q_nominal_m3_s=rng.uniform(1e-4, 1e-3),
                                    dp_nominal_pa=35e5, transition_pressure_pa=dp_tr))
    b.connect(p_a, fixed.p_a)
    b.connect(p_b, fixed.p_b)
    b.connect(p_c, var.p_a)
    c50 = b.add(bl.Constant("c50", 50e5, unit="Pa"))
    b.connect(c50.y, var.p_b)
    b.connect(_drive(b, rng, "area", "m^2", 1e-6, 3e-6), var.area)
    b.connect(p_b, nom.p_a)
    b.connect(p_a, nom.p_b)
    b.connect(_drive(b, rng, "u", "1", 0.5, 1.0), nom.u)
    return b.build()


def _valves(seed):
    rng = np.random.default_rng(seed)
    b = DiagramBuilder(f"valves{seed}")
    kw = ({"area_max_m2": rng.uniform(1e-6, 1e-4), "fluid": FLUIDS[seed % 3]} if seed % 2
          else {"q_nominal_m3_s": rng.uniform(1e-4, 1e-3), "dp_nominal_pa": 35e5})
    lap = [-1.0, 0.0, rng.uniform(-0.9, 0.6)][seed % 3]
    spool = b.add(hy.SpoolValve43("spool", lap=lap, leakage_m3_s_pa=rng.choice([0.0, 1e-12]),
                                  transition_pressure_pa=10 ** rng.uniform(3, 5), **kw))
    for name in ("p_P", "p_T", "p_A", "p_B"):
        b.connect(_pressures(b, rng, name), spool.input(name))
    b.connect(_drive(b, rng, "u", "1", 0.0, 1.5), spool.u)
    pc = rng.uniform(5e5, 50e5)
    relief = b.add(hy.ReliefValve("relief", cracking_pressure_pa=pc,
                                  full_open_pressure_pa=pc * rng.uniform(1.05, 1.5),
                                  leakage_m3_s_pa=rng.choice([0.0, 1e-12]), **kw))
    check = b.add(hy.CheckValve("check", **kw))
    b.connect(_drive(b, rng, "rin", "Pa", pc, 1.2 * pc), relief.p_in)
    tank = b.add(hy.Tank("tank", 1e5))
    b.connect(tank.p, relief.p_out)
    b.connect(_drive(b, rng, "cin", "Pa", 2e5, 4e5), check.p_in)
    b.connect(tank.p, check.p_out)
    return b.build()


def _machines(seed):
    rng = np.random.default_rng(seed)
    b = DiagramBuilder(f"machines{seed}")
    disp = rng.uniform(5e-6, 5e-5)
    loss = ({"leakage_m3_s_pa": rng.uniform(0, 1e-12)} if seed % 2 else
            {"volumetric_efficiency": rng.uniform(0.85, 1.0), "rated_speed_rad_s": 150.0,
             "rated_pressure_pa": 200e5})
    motor = b.add(hy.HydraulicMotor("motor", displacement_m3_per_rev=disp,
                                    hydromechanical_efficiency=rng.uniform(0.8, 1.0),
                                    viscous_n_m_s_rad=rng.uniform(0, 1e-3), **loss))
    pump = b.add(hy.VariableDisplacementPump(
        "vpump", displacement_m3_per_rev=disp, min_fraction=[0.0, -1.0][seed % 2],
        hydromechanical_efficiency=rng.uniform(0.8, 1.0), **loss))
    fpump = b.add(hy.FixedDisplacementPump("fpump", displacement_m3_per_rev=disp,
                                           volumetric_efficiency=rng.uniform(0.8, 1.0),
                                           hydromechanical_efficiency=rng.uniform(0.8, 1.0)))
    w = _drive(b, rng, "w", "rad/s", 0.0, 2.0)  # speed reversal through the tanh
    pa, pb = _pressures(b, rng, "pa"), _pressures(b, rng, "pb")
    for blk in (pump, fpump):
        b.connect(w, blk.speed)
        b.connect(pa, blk.p_in)
        b.connect(pb, blk.p_out)
    b.connect(w, motor.speed)
    b.connect(pa, motor.p_A)
    b.connect(pb, motor.p_B)
    b.connect(_drive(b, rng, "eps", "1", 0.0, 1.5), pump.displacement)
    src = b.add(hy.PressureSource("src", rng.uniform(1e5, 1e7)))
    b.connect(src.p, b.add(bl.Gain("g", 1.0, input_unit="Pa", unit="Pa")).u)
    return b.build()


@pytest.mark.parametrize("seed", range(6))
def test_orifices_compiled_equal_the_python_loop(seed):
    _run_both(lambda: _orifices(seed), dt=1e-3)


@pytest.mark.parametrize("seed", range(6))
def test_valves_compiled_equal_the_python_loop(seed):
    _run_both(lambda: _valves(seed), dt=1e-3)


@pytest.mark.parametrize("seed", range(4))
def test_machines_and_sources_compiled_equal_the_python_loop(seed):
    _run_both(lambda: _machines(seed), dt=1e-3)


# ------------------------------------------------------------------ blocks with states
def _volumes(seed):
    rng = np.random.default_rng(seed)
    fluid = FLUIDS[seed % 3]
    b = DiagramBuilder(f"volumes{seed}")
    v0 = rng.uniform(0.5e-3, 2e-3)
    # net flows of +-1e-6 m^3/s move the pressure by ~1 MPa/s: into the low-pressure band
    vol = b.add(hy.Volume("vol", volume_m3=v0, fluid=fluid, inflows=2, outflows=1,
                          p0_pa=rng.uniform(1e5, 5e5)))
    for k, port in enumerate((*vol.q_in, *vol.q_out)):
        b.connect(_drive(b, rng, f"q{k}", "m^3/s", 0.0, 1e-6), port)
    var = b.add(hy.Volume("var", volume_m3=v0, fluid=fluid, inflows=1, outflows=0,
                          volume_rate_input=True, p0_pa=rng.uniform(1e5, 5e5)))
    b.connect(_drive(b, rng, "qv", "m^3/s", 0.0, 1e-6), var.q_in[0])
    b.connect(_drive(b, rng, "dv", "m^3/s", 0.0, 1e-4), var.dvdt)
    acc = b.add(hy.GasAccumulator("acc", gas_volume_m3=rng.uniform(0.5e-3, 2e-3),
                                  precharge_pressure_pa=rng.uniform(5e5, 20e5),
                                  polytropic_index=rng.uniform(1.0, 1.4), fluid=fluid,
                                  inflows=1, outflows=1, p0_pa=rng.uniform(2e5, 30e5)))
    b.connect(_drive(b, rng, "qa", "m^3/s", 0.0, 2e-4), acc.q_in[0])
    b.connect(_drive(b, rng, "qb", "m^3/s", 0.0, 1e-4), acc.q_out[0])
    # a node drained at ~2 MPa/s: into the low-pressure softening and its floor
    drain = b.add(hy.Volume("drain", volume_m3=1e-3, fluid=fluid, inflows=0, outflows=1))
    q_drain = 2e6 * 1e-3 / fluid.beta(1e5) * rng.uniform(0.5, 1.5) * (20.0 if seed % 3 == 2
                                                                      else 1.0)  # air
    b.connect(b.add(bl.Constant("q_drain", q_drain, unit="m^3/s")).y, drain.q_out[0])
    tank = b.add(hy.Tank("tank", 1e5, inflows=1, outflows=1, volume0_m3=1e-2))
    b.connect(_drive(b, rng, "qt", "m^3/s", 0.0, 1e-4), tank.q_in[0])
    b.connect(_drive(b, rng, "qu", "m^3/s", 0.0, 1e-4), tank.q_out[0])
    return b.build()


def _lines(seed):
    rng = np.random.default_rng(seed)
    fluid = FLUIDS[seed % 3]
    b = DiagramBuilder(f"lines{seed}")
    # segments >= 2: with one segment the "T" and "mixed" lines' p_nodes has shape (1,),
    # which cosim.codegen.state.StateMap.push cannot copy (float() of a 1-element array)
    kw = dict(length_m=rng.uniform(0.5, 3.0), diameter_m=rng.uniform(6e-3, 16e-3), fluid=fluid,
              segments=int(rng.integers(2, 4)), p0_pa=rng.uniform(10e5, 50e5),
              wall_bulk_modulus_pa=[None, 5e8][seed % 2])
    pi = b.add(hy.HydraulicLine("pi", section="pi", **kw))
    b.connect(_drive(b, rng, "qa", "m^3/s", 0.0, 2e-4), pi.input("q_a"))
    b.connect(_drive(b, rng, "qb", "m^3/s", 0.0, 2e-4), pi.input("q_b"))
    t = b.add(hy.HydraulicLine("t", section="T", **kw))
    b.connect(_pressures(b, rng, "pa", 10e5, 50e5), t.input("p_a"))
    b.connect(_pressures(b, rng, "pb", 10e5, 50e5), t.input("p_b"))
    m = b.add(hy.HydraulicLine("m", section="mixed", **kw))
    b.connect(_pressures(b, rng, "pm", 10e5, 50e5), m.input("p_a"))
    b.connect(_drive(b, rng, "qm", "m^3/s", 0.0, 2e-4), m.input("q_b"))
    return b.build()


def _cylinders(seed):
    rng = np.random.default_rng(seed)
    fluid = FLUIDS[seed % 3]
    b = DiagramBuilder(f"cylinders{seed}")
    stroke = rng.uniform(0.2, 1.0)
    a1 = rng.uniform(1e-3, 5e-3)
    fric = [None, hy.CylinderFriction(viscous_n_s_m=1e4),
            hy.CylinderFriction(coulomb_n=200.0, static_n=300.0, viscous_n_s_m=1e3)][seed % 3]
    cyl_kw = dict(area_1_m2=a1, area_2_m2=a1 * rng.uniform(0.4, 1.0), stroke_m=stroke,
                  dead_volume_1_m3=1e-4, dead_volume_2_m3=1e-4, fluid=fluid, friction=fric,
                  efficiency=[1.0, 0.9][seed % 2], p1_0_pa=rng.uniform(5e5, 50e5),
                  p2_0_pa=rng.uniform(5e5, 50e5), end_stop_stiffness_n_m=1e7,
                  end_stop_damping_n_s_m=1e4, ambient_pressure_pa=[0.0, 1e5][seed % 2])
    cyl = b.add(hy.DoubleActingCylinder("cyl", **cyl_kw))
    # x up to 1 cm beyond both ends (the end stops; the dead volumes stay > 0), v reversing
    sat = b.add(bl.Saturation("x_sat", -0.01, stroke + 0.01, unit="m"))
    b.connect(_drive(b, rng, "x", "m", 0.5 * stroke, 0.6 * stroke), sat.u)
    x = sat.y
    v = _drive(b, rng, "v", "m/s", 0.0, 0.05)
    b.connect(x, cyl.x)
    b.connect(_drive(b, rng, "vc", "m/s", 0.0, 2e-3), cyl.v)
    b.connect(_drive(b, rng, "q1", "m^3/s", 0.0, 2e-6), cyl.q_1)
    b.connect(_drive(b, rng, "q2", "m^3/s", 0.0, 2e-6), cyl.q_2)
    vcc = b.add(hy.ValveControlledCylinder(
        "vcc", supply_pressure_pa=rng.uniform(50e5, 150e5), tank_pressure_pa=1e5,
        area_max_m2=rng.uniform(5e-6, 2e-5), lap=[-1.0, 0.0, 0.1][seed % 3],
        a_chamber=[1, 2][seed % 2], leakage_m3_s_pa=[0.0, 1e-12][seed % 2], **cyl_kw))
    b.connect(_drive(b, rng, "u", "1", 0.0, 1.5), vcc.u)
    b.connect(x, vcc.x)
    b.connect(v, vcc.v)
    servo = b.add(hy.ServoValve("servo", natural_frequency_hz=rng.uniform(20, 80),
                                damping=rng.uniform(0.4, 1.2), area_max_m2=1e-5,
                                lap=rng.uniform(-0.5, 0.3), rated_command=10.0))
    b.connect(_drive(b, rng, "cmd", None, 0.0, 15.0), servo.command)
    for name in ("p_P", "p_T", "p_A", "p_B"):
        b.connect(_pressures(b, rng, name), servo.input(name))
    return b.build()


@pytest.mark.parametrize("seed", range(6))
def test_volumes_and_accumulators_compiled_equal_the_python_loop(seed):
    py, _ = _run_both(lambda: _volumes(seed), dt=1e-4)
    assert np.min(py["drain.p"]) < 1e3  # the low-pressure softening was reached


@pytest.mark.parametrize("seed", range(6))
def test_lines_compiled_equal_the_python_loop(seed):
    _run_both(lambda: _lines(seed), dt=2e-6, t_end=0.05)


@pytest.mark.parametrize("seed", range(6))
def test_cylinders_and_servo_valves_compiled_equal_the_python_loop(seed):
    _run_both(lambda: _cylinders(seed), dt=2e-6, t_end=0.1)


# ------------------------------------------------------------------ a circuit
def _circuit():
    """Pump into a supply node with an accumulator (behind an orifice) and a relief
    valve, a line to a 4/3 valve, a cylinder pushing a mass on a spring."""
    b = DiagramBuilder("circuit")
    tank = b.add(hy.Tank("tank", 1e5))
    speed = b.add(bl.Constant("speed", 150.0, unit="rad/s"))
    pump = b.add(hy.FixedDisplacementPump("pump", displacement_m3_per_rev=16e-6,
                                          volumetric_efficiency=0.95))
    supply = b.add(hy.Volume("supply", volume_m3=1e-3, inflows=1, outflows=3, p0_pa=50e5))
    acc_port = b.add(hy.Orifice("acc_port", area_m2=1e-5))
    acc = b.add(hy.GasAccumulator("acc", gas_volume_m3=0.1e-3, precharge_pressure_pa=60e5,
                                  p0_pa=60e5))
    relief = b.add(hy.ReliefValve("relief", cracking_pressure_pa=70e5,
                                  full_open_pressure_pa=80e5, area_max_m2=2e-5))
    line = b.add(hy.HydraulicLine("line", length_m=2.0, diameter_m=12e-3, section="mixed",
                                  segments=2, p0_pa=50e5, wall_bulk_modulus_pa=8e8))
    valve = b.add(hy.SpoolValve43("valve", area_max_m2=2e-5, lap=0.05, leakage_m3_s_pa=1e-13))
    cyl = b.add(hy.DoubleActingCylinder(
        "cyl", area_1_m2=2e-3, area_2_m2=1.2e-3, stroke_m=0.3, dead_volume_1_m3=1e-4,
        dead_volume_2_m3=1e-4, p1_0_pa=30e5, p2_0_pa=50e5,
        friction=hy.CylinderFriction(coulomb_n=100.0, static_n=150.0, viscous_n_s_m=2e3)))
    u_sin = b.add(bl.Sine("u_sin", amplitude=1.0, frequency_hz=0.4, unit="1"))
    u_step = b.add(bl.Step("u_step", time_s=2.5, final=0.3, unit="1"))
    u = b.add(bl.Sum("u", "++", unit="1"))
    spring = b.add(bl.Gain("spring", 2e4, input_unit="m", unit="N"))
    net = b.add(bl.Sum("net", "+-", unit="N"))
    accel = b.add(bl.Gain("accel", 1.0 / 200.0, input_unit="N", unit="m/s^2"))
    vel = b.add(bl.Integrator("vel", unit="m/s", input_unit="m/s^2"))
    pos = b.add(bl.Integrator("pos", x0=0.15, unit="m", input_unit="m/s"))
    b.connect(speed.y, pump.speed)
    b.connect(tank.p, pump.p_in)
    b.connect(supply.p, pump.p_out)
    b.connect(pump.q, supply.q_in[0])
    b.connect(line.output("q_a"), supply.q_out[0])
    b.connect(relief.q, supply.q_out[1])
    b.connect(supply.p, relief.p_in)
    b.connect(tank.p, relief.p_out)
    b.connect(supply.p, acc_port.p_a)  # the accumulator: a node behind an orifice
    b.connect(acc.p, acc_port.p_b)
    b.connect(acc_port.q, acc.q_in[0])
    b.connect(acc_port.q, supply.q_out[2])
    b.connect(supply.p, line.input("p_a"))
    b.connect(valve.q_P, line.input("q_b"))
    b.connect(line.output("p_b"), valve.p_P)
    b.connect(tank.p, valve.p_T)
    b.connect(cyl.p_1, valve.p_A)
    b.connect(cyl.p_2, valve.p_B)
    b.connect(valve.q_A, cyl.q_1)
    b.connect(valve.q_B, cyl.q_2)
    b.connect(u_sin.y, u.ins[0])
    b.connect(u_step.y, u.ins[1])
    b.connect(u.y, valve.u)
    b.connect(cyl.force, net.ins[0])
    b.connect(pos.y, spring.u)
    b.connect(spring.y, net.ins[1])
    b.connect(net.y, accel.u)
    b.connect(accel.y, vel.u)
    b.connect(vel.y, pos.u)
    b.connect(pos.y, cyl.x)
    b.connect(vel.y, cyl.v)
    return b.build()


def test_a_circuit_compiled_equals_the_python_loop():
    py, c = _run_both(_circuit, t_end=5.0, dt=2e-5)
    assert np.max(py["relief.q"]) > 0.0  # the relief valve cracked
    assert np.ptp(py["pos.y"]) > 0.05  # the cylinder moved both ways
    assert np.ptp(py["acc.fluid_volume"]) > 0.0  # the accumulator took and gave fluid
