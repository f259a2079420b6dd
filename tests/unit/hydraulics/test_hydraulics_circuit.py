"""A small circuit: pump -> line volume (relief valve and orifice to tank) -> tank.

Checks the analytic steady state, the pump torque and the volume balance, run
through DiagramBuilder and Simulator with a stiff solver.
"""

import math

import pytest
from scipy.optimize import brentq

from blocks.hydraulics import (
    FixedDisplacementPump,
    Fluid,
    Orifice,
    ReliefValve,
    Tank,
    Volume,
)
from blocks.sources import Constant
from cosim import DiagramBuilder, Simulator

OIL = Fluid(density_kg_m3=870.0, bulk_modulus=1.5e9)
D_REV, ETA_V, ETA_HM, SPEED_RPM = 1e-5, 0.95, 0.9, 1432.0
P_TANK, P_CRACK, P_FULL = 1e5, 100e5, 110e5
A_RELIEF, A_ORIFICE, CD, V_LINE = 5e-6, 1e-6, 0.67, 1e-3


def build():
    b = DiagramBuilder("pump_circuit")
    speed = b.add(Constant("speed", SPEED_RPM, unit="rpm"))  # converted to rad/s on the wire
    tank = b.add(Tank("tank", P_TANK, inflows=2, outflows=1))
    pump = b.add(FixedDisplacementPump("pump", displacement_m3_per_rev=D_REV,
                                       volumetric_efficiency=ETA_V,
                                       hydromechanical_efficiency=ETA_HM))
    line = b.add(Volume("line", volume_m3=V_LINE, fluid=OIL, inflows=1, outflows=2,
                        p0_pa=P_TANK))
    relief = b.add(ReliefValve("relief", cracking_pressure_pa=P_CRACK,
                               full_open_pressure_pa=P_FULL, area_max_m2=A_RELIEF, cd=CD,
                               fluid=OIL))
    orifice = b.add(Orifice("orifice", area_m2=A_ORIFICE, cd=CD, fluid=OIL))
    b.connect(speed.y, pump.speed)
    b.connect(tank.p, pump.p_in)
    b.connect(line.p, pump.p_out)
    b.connect(pump.q, "line.q_in0")
    b.connect(pump.q, "tank.q_out0")
    for i, element in enumerate((relief, orifice)):
        b.connect(line.p, element.inputs["p_in" if element is relief else "p_a"])
        b.connect(tank.p, element.inputs["p_out" if element is relief else "p_b"])
        b.connect(element.outputs["q"], f"line.q_out{i}")
        b.connect(element.outputs["q"], f"tank.q_in{i}")
    return b.build()


def analytic_steady_state():
    """Solve Q_pump = Q_relief(p) + Q_orifice(p) with the textbook formulas."""
    q_pump = ETA_V * D_REV / (2 * math.pi) * SPEED_RPM * 2 * math.pi / 60
    k_r = CD * A_RELIEF * math.sqrt(2 / 870.0)
    k_o = CD * A_ORIFICE * math.sqrt(2 / 870.0)

    def residual(p):
        dp = p - P_TANK
        x = min(max((dp - P_CRACK) / (P_FULL - P_CRACK), 0.0), 1.0)
        return k_r * x * x * (3 - 2 * x) * math.sqrt(dp) + k_o * math.sqrt(dp) - q_pump
    return brentq(residual, P_TANK + 1e5, P_TANK + 2 * P_FULL, xtol=1e-9), q_pump


def test_circuit_reaches_the_analytic_steady_state():
    p_ss, q_pump = analytic_steady_state()
    assert P_TANK + P_CRACK < p_ss < P_TANK + P_FULL  # the relief valve is partly open
    res = Simulator(build(), solver="radau", rtol=1e-9, atol=1e-9, dt=0.01,
                    max_step=1.0).run(0.5)
    assert res["pump.q"][-1] == pytest.approx(q_pump, rel=1e-12)
    assert res["line.p"][-1] == pytest.approx(p_ss, rel=1e-7)
    assert res["relief.q"][-1] + res["orifice.q"][-1] == pytest.approx(q_pump, rel=1e-6)
    d_rad = D_REV / (2 * math.pi)
    assert res["pump.torque"][-1] == pytest.approx(d_rad * (p_ss - P_TANK) / ETA_HM, rel=1e-7)
    # volume balance: what left the tank is in the line, compressed (constant beta)
    for i in range(len(res.time)):
        stored = V_LINE * (res["line.p"][i] - P_TANK) / 1.5e9
        assert res["tank.volume"][i] + stored == pytest.approx(0.0, abs=1e-12)


def test_pressure_rises_at_the_pump_flow_rate_before_anything_opens():
    # until the orifice drains noticeably, p' ~ beta Q_pump / V; at 1 ms the orifice takes
    # little, so p(1 ms) lies between the no-drain ramp and the ramp minus the orifice flow
    _, q_pump = analytic_steady_state()
    res = Simulator(build(), solver="radau", rtol=1e-9, atol=1e-9, dt=1e-3,
                    max_step=1.0).run(0.002)
    p1 = res.at("line.p", 1e-3)
    ramp = P_TANK + 1.5e9 / V_LINE * q_pump * 1e-3
    k_o = CD * A_ORIFICE * math.sqrt(2 / 870.0)
    assert ramp - 1.5e9 / V_LINE * k_o * math.sqrt(ramp - P_TANK) * 1e-3 < p1 < ramp
