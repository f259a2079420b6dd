"""Hydraulic motor and variable-displacement pump: efficiencies and power balances."""

import math

import numpy as np
import pytest

from blocks.hydraulics import (
    FixedDisplacementPump,
    Fluid,
    HydraulicMotor,
    Orifice,
    Tank,
    VariableDisplacementPump,
    Volume,
)
from blocks.sources import Constant
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

D_REV = 50e-6                  # 50 cm^3/rev
D = D_REV / (2 * math.pi)      # m^3/rad
W_R = 1500 * 2 * math.pi / 60  # rated speed, rad/s
DP_R = 200e5                   # rated pressure difference
ETA_V, ETA_HM = 0.95, 0.92
P_T = 1e5


def motor(**kw):
    args = dict(displacement_m3_per_rev=D_REV, hydromechanical_efficiency=ETA_HM,
                volumetric_efficiency=ETA_V, rated_speed_rad_s=W_R, rated_pressure_pa=DP_R)
    return BlockHarness(HydraulicMotor("m", **(args | kw)))


def run(h, **inputs):
    h.set_inputs(**inputs)
    return h.output("q"), h.output("torque")


def test_motor_at_the_rated_point_has_the_catalogue_efficiencies():
    h = motor()
    q, tau = run(h, p_A=P_T + DP_R, p_B=P_T, speed=W_R)
    assert q == pytest.approx(D * W_R / ETA_V, rel=1e-13)       # eta_v = D w / q
    assert tau == pytest.approx(ETA_HM * D * DP_R, rel=1e-13)   # eta_hm = tau / (D dp)
    p_hyd, p_mech = q * DP_R, tau * W_R
    assert p_mech / p_hyd == pytest.approx(ETA_V * ETA_HM, rel=1e-13)
    # leakage from eta_v at the rated point: G = D w_r (1/eta_v - 1) / dp_r
    assert h.block.G == pytest.approx(D * W_R * (1 / ETA_V - 1) / DP_R, rel=1e-14)


def test_motor_leakage_grows_in_relative_terms_at_low_speed_and_creeps_at_stall():
    h = motor()
    q_half, _ = run(h, p_A=P_T + DP_R, p_B=P_T, speed=0.1 * W_R)
    assert D * 0.1 * W_R / q_half < ETA_V  # volumetric efficiency falls at low speed
    q0, tau0 = run(h, p_A=P_T + DP_R, p_B=P_T, speed=0.0)
    assert q0 == pytest.approx(h.block.G * DP_R, rel=1e-14)  # leakage only: the load creeps
    assert tau0 == pytest.approx(D * DP_R, rel=1e-14)          # no loss torque at stall


@pytest.mark.parametrize("speed", [-W_R, -3.0, -0.05, 0.0, 0.05, 3.0, W_R, 2 * W_R])
@pytest.mark.parametrize("dp", [-DP_R, -5e5, 0.0, 5e5, DP_R])
def test_motor_power_balance_in_all_four_quadrants(speed, dp):
    b_visc = 0.01
    h = motor(viscous_n_m_s_rad=b_visc)
    q, tau = run(h, p_A=P_T + max(dp, 0.0), p_B=P_T + max(-dp, 0.0), speed=speed)
    g = h.block.G
    p_hyd, p_mech = q * dp, tau * speed
    losses = (g * dp**2 + (1 - ETA_HM) * abs(D * dp) * math.tanh(speed / 0.1) * speed
              + b_visc * speed**2)
    scale = D * DP_R * W_R
    assert p_hyd - p_mech == pytest.approx(losses, abs=1e-12 * scale)
    assert losses >= 0.0  # the machine never creates power, whatever the quadrant


def pump(**kw):
    args = dict(displacement_m3_per_rev=D_REV, hydromechanical_efficiency=ETA_HM,
                volumetric_efficiency=ETA_V, rated_speed_rad_s=W_R, rated_pressure_pa=DP_R)
    return BlockHarness(VariableDisplacementPump("p", **(args | kw)))


def test_variable_pump_at_full_displacement_matches_the_fixed_pump_at_the_rated_point():
    var = pump()
    fixed = BlockHarness(FixedDisplacementPump("f", displacement_m3_per_rev=D_REV,
                                               volumetric_efficiency=ETA_V,
                                               hydromechanical_efficiency=ETA_HM))
    point = dict(speed=W_R, p_in=P_T, p_out=P_T + DP_R)
    fixed.set_inputs(**point)
    q, tau = run(var, displacement=1.0, **point)
    assert q == pytest.approx(fixed.output("q"), rel=1e-13)
    assert tau == pytest.approx(fixed.output("torque"), rel=1e-13)
    assert q == pytest.approx(ETA_V * D * W_R, rel=1e-13)
    assert tau == pytest.approx(D * DP_R / ETA_HM, rel=1e-13)
    assert (q * DP_R) / (tau * W_R) == pytest.approx(ETA_V * ETA_HM, rel=1e-13)


@pytest.mark.parametrize("eps", [1.0, 0.6, 0.2, 0.0])
@pytest.mark.parametrize("dp", [0.0, 50e5, DP_R])
def test_variable_pump_power_balance(eps, dp):
    b_visc = 0.02
    h = pump(viscous_n_m_s_rad=b_visc)
    q, tau = run(h, displacement=eps, speed=W_R, p_in=P_T, p_out=P_T + dp)
    g = h.block.G
    assert g == pytest.approx(D * W_R * (1 - ETA_V) / DP_R, rel=1e-14)
    assert q == pytest.approx(eps * D * W_R - g * dp, rel=1e-13, abs=1e-18)
    p_mech, p_hyd = tau * W_R, q * dp
    losses = g * dp**2 + (1 / ETA_HM - 1) * eps * D * dp * W_R + b_visc * W_R**2
    assert p_mech - p_hyd == pytest.approx(losses, rel=1e-12)


def test_variable_pump_efficiency_falls_at_small_settings():
    h = pump()
    point = dict(speed=W_R, p_in=P_T, p_out=P_T + DP_R)
    eff = []
    for eps in (1.0, 0.5, 0.2, 0.1):
        q, tau = run(h, displacement=eps, **point)
        eff.append(q * DP_R / (tau * W_R))
    assert eff[0] == pytest.approx(ETA_V * ETA_HM, rel=1e-13)
    assert np.all(np.diff(eff) < 0)
    # at eps = 0.05 the leakage (5 % of full flow) eats the whole displacement flow
    q, _ = run(h, displacement=1 - ETA_V, **point)
    assert q == pytest.approx(0.0, abs=1e-12 * D * W_R)


def test_displacement_fraction_is_clipped_and_over_centre_reverses_the_flow():
    h = pump(leakage_m3_s_pa=0.0, volumetric_efficiency=None, rated_speed_rad_s=None,
             rated_pressure_pa=None)
    point = dict(speed=W_R, p_in=P_T, p_out=P_T)
    assert run(h, displacement=1.7, **point)[0] == pytest.approx(D * W_R, rel=1e-14)
    assert run(h, displacement=-0.5, **point)[0] == 0.0
    oc = pump(min_fraction=-1.0)
    q, _ = run(oc, displacement=-0.5, **point)
    assert q == pytest.approx(-0.5 * D * W_R, rel=1e-14)


def test_pump_into_an_orifice_reaches_the_closed_form_pressure():
    # steady state: eps D w - G dp = K sqrt(dp)  =>  sqrt(dp) = (-K + sqrt(K^2 + 4 G eps D w))/2G
    oil = Fluid(density_kg_m3=870.0, bulk_modulus=1.5e9)
    eps, area = 0.4, 2e-6
    b = DiagramBuilder("pump_orifice")
    speed = b.add(Constant("speed", 1500.0, unit="rpm"))
    disp = b.add(Constant("eps", eps))
    tank = b.add(Tank("tank", P_T))
    p = b.add(VariableDisplacementPump("pump", displacement_m3_per_rev=D_REV,
                                       hydromechanical_efficiency=ETA_HM,
                                       volumetric_efficiency=ETA_V, rated_speed_rad_s=W_R,
                                       rated_pressure_pa=DP_R))
    line = b.add(Volume("line", volume_m3=1e-3, fluid=oil, p0_pa=P_T))
    o = b.add(Orifice("o", area_m2=area, cd=0.67, fluid=oil))
    b.connect(speed.y, p.speed)
    b.connect(disp.y, p.displacement)
    b.connect(tank.p, p.p_in)
    b.connect(line.p, p.p_out)
    b.connect(p.q, "line.q_in0")
    b.connect(line.p, o.p_a)
    b.connect(tank.p, o.p_b)
    b.connect(o.q, "line.q_out0")
    # time constant C / (dq/dp) ~ 0.08 s: 3 s is about 37 of them
    res = Simulator(b.build(), solver="radau", rtol=1e-10, atol=1e-6, dt=0.05,
                    max_step=1.0).run(3.0)
    k = 0.67 * area * math.sqrt(2 / 870.0)
    g = D * W_R * (1 - ETA_V) / DP_R
    x = (-k + math.sqrt(k * k + 4 * g * eps * D * W_R)) / (2 * g)
    assert res["line.p"][-1] == pytest.approx(P_T + x * x, rel=1e-7)
    assert res["pump.torque"][-1] == pytest.approx(eps * D * x * x / ETA_HM, rel=1e-7)


@pytest.mark.parametrize("make, match", [
    (lambda: HydraulicMotor("m", displacement_m3_per_rev=0.0), "displacement_m3_per_rev"),
    (lambda: HydraulicMotor("m", displacement_m3_per_rev=1e-5, hydromechanical_efficiency=1.2),
     r"hydromechanical_efficiency must lie in \(0, 1\]"),
    (lambda: HydraulicMotor("m", displacement_m3_per_rev=1e-5, volumetric_efficiency=0.9),
     "needs the rated point"),
    (lambda: HydraulicMotor("m", displacement_m3_per_rev=1e-5, volumetric_efficiency=0.0,
                            rated_speed_rad_s=100.0, rated_pressure_pa=1e7),
     "volumetric_efficiency must lie in"),
    (lambda: HydraulicMotor("m", displacement_m3_per_rev=1e-5, leakage_m3_s_pa=1e-12,
                            volumetric_efficiency=0.9), "not both"),
    (lambda: HydraulicMotor("m", displacement_m3_per_rev=1e-5, rated_speed_rad_s=100.0),
     "which is missing"),
    (lambda: HydraulicMotor("m", displacement_m3_per_rev=1e-5, leakage_m3_s_pa=-1.0),
     "leakage_m3_s_pa = -1.0: expected a finite number >= 0"),
    (lambda: HydraulicMotor("m", displacement_m3_per_rev=1e-5, viscous_n_m_s_rad=-1.0),
     "viscous_n_m_s_rad"),
    (lambda: VariableDisplacementPump("p", displacement_m3_per_rev=1e-5, min_fraction=1.0),
     r"min_fraction = 1.0: expected a finite number in \[-1, 1\)"),
    (lambda: VariableDisplacementPump("p", displacement_m3_per_rev=1e-5,
                                      speed_threshold_rad_s=0.0), "speed_threshold_rad_s"),
])
def test_bad_motor_and_pump_parameters(make, match):
    with pytest.raises(ParameterError, match=match):
        make()
