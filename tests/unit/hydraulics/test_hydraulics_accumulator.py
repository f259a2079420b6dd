"""Gas accumulator: charging from a flow source against the closed-form p-V curve."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from blocks.hydraulics import Fluid, GasAccumulator
from blocks.sources import Constant
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

BETA = 1.5e9
OIL = Fluid(density_kg_m3=870.0, bulk_modulus=BETA)
V0, P_PRE, V_D, Q = 1e-3, 50e5, 1e-5, 1e-4
P_START = 20e5  # below precharge: the accumulator starts empty


def charging(n):
    b = DiagramBuilder("charge")
    src = b.add(Constant("q", Q, unit="m^3/s"))
    acc = b.add(GasAccumulator("acc", gas_volume_m3=V0, precharge_pressure_pa=P_PRE,
                               polytropic_index=n, dead_volume_m3=V_D, fluid=OIL,
                               p0_pa=P_START))
    b.connect(src.y, acc.q_in[0])
    return b.build()


def exact_pressure(t, n):
    """Empty: p rises at Q beta / V_d until p_0; then Q (t - t1) = V_f(p) + V_d (p - p_0)/beta."""
    t1 = V_D * (P_PRE - P_START) / (BETA * Q)
    if t <= t1:
        return P_START + BETA * Q * t / V_D
    stored = Q * (t - t1)

    def residual(p):
        return V0 * (1 - (P_PRE / p) ** (1 / n)) + V_D * (p - P_PRE) / BETA - stored
    return brentq(residual, P_PRE, 1e10, xtol=1e-6, rtol=1e-15)


@pytest.mark.parametrize("n", [1.0, 1.4])
def test_charging_follows_the_closed_form_pressure_volume_curve(n):
    t_end = 6.0  # stores 0.6 l of the 1 l accumulator
    res = Simulator(charging(n), solver="radau", rtol=1e-11, atol=1e-3, dt=0.05,
                    max_step=0.05).run(t_end)
    t1 = V_D * (P_PRE - P_START) / (BETA * Q)  # 0.2 ms: the empty phase
    for t in np.arange(0.05, t_end + 1e-9, 0.25):
        assert res.at("acc.p", t) == pytest.approx(exact_pressure(t, n), rel=1e-8)
    # the empty phase and the kink at precharge, on a fine output grid
    fine = Simulator(charging(n), solver="radau", rtol=1e-11, atol=1e-3, dt=2e-5,
                     max_step=1e-3).run(1e-3)
    for t in np.arange(0.0, 1e-3 + 1e-12, 2e-5):
        assert fine.at("acc.p", t) == pytest.approx(exact_pressure(t, n), rel=1e-8)
    for t in np.arange(0.25, t_end + 1e-9, 0.25):
        p = res.at("acc.p", t)
        vg = res.at("acc.gas_volume", t)
        assert p * vg**n == pytest.approx(P_PRE * V0**n, rel=1e-12)  # the gas law itself
        # the volume balance: what entered is in the gas side plus the compressed dead volume
        assert res.at("acc.fluid_volume", t) + V_D * (p - P_PRE) / BETA == pytest.approx(
            Q * (t - t1), rel=1e-8)


def test_adiabatic_charging_ends_at_a_higher_pressure_than_isothermal():
    # same stored volume 0.6 l: p = p0 (V0 / V_g)^n; 125 bar isothermal, 180 bar adiabatic
    ends = {}
    for n in (1.0, 1.4):
        res = Simulator(charging(n), solver="radau", rtol=1e-10, atol=1e-3, dt=0.1,
                        max_step=0.05).run(6.0)
        ends[n] = res["acc.p"][-1]
    assert ends[1.0] == pytest.approx(P_PRE / 0.4, rel=2e-3)  # dead volume: -0.1 %
    assert ends[1.4] == pytest.approx(P_PRE * 2.5**1.4, rel=2e-3)
    assert ends[1.4] / ends[1.0] == pytest.approx(2.5**0.4, rel=2e-3)


def test_compliance_jumps_at_precharge_while_the_pressure_and_volume_stay_continuous():
    acc = GasAccumulator("acc", gas_volume_m3=V0, precharge_pressure_pa=P_PRE,
                         polytropic_index=1.4, dead_volume_m3=V_D, fluid=OIL)
    h = BlockHarness(acc)
    h.set_input("q_in0", Q)
    assert h.output("p") == P_PRE and h.output("fluid_volume") == 0.0  # default p0: precharge
    h.set_state("p", P_PRE * (1 - 1e-12))
    assert h.derivatives()[0] == pytest.approx(Q * BETA / V_D, rel=1e-12)
    h.set_state("p", P_PRE * (1 + 1e-12))
    assert h.derivatives()[0] == pytest.approx(Q / (V_D / BETA + V0 / (1.4 * P_PRE)), rel=1e-9)
    assert h.output("fluid_volume") == pytest.approx(0.0, abs=1e-15)


def test_discharging_an_empty_accumulator_is_a_small_liquid_volume():
    acc = GasAccumulator("acc", gas_volume_m3=V0, precharge_pressure_pa=P_PRE, inflows=0,
                         outflows=1, dead_volume_m3=V_D, fluid=OIL, p0_pa=30e5)
    h = BlockHarness(acc)
    h.set_input("q_out0", 1e-5)
    assert h.derivatives()[0] == pytest.approx(-1e-5 * BETA / V_D, rel=1e-12)
    assert h.output("fluid_volume") == 0.0 and h.output("gas_volume") == V0


@pytest.mark.parametrize("kw, match", [
    (dict(gas_volume_m3=0.0), "gas_volume_m3 must be finite and > 0"),
    (dict(precharge_pressure_pa=-1.0), r"precharge_pressure_pa .*absolute"),
    (dict(dead_volume_m3=0.0), "dead_volume_m3 must be finite and > 0"),
    (dict(polytropic_index=1.6), r"polytropic_index must lie in \[1, 1.4\]"),
    (dict(inflows=0, outflows=0), "at least one flow port"),
    (dict(p0_pa=100.0), "initial pressure p0_pa = 100.0 Pa is below"),
])
def test_bad_accumulator_parameters(kw, match):
    args = dict(gas_volume_m3=V0, precharge_pressure_pa=P_PRE) | kw
    with pytest.raises(ParameterError, match=match):
        GasAccumulator("acc", **args)


def test_isothermal_and_adiabatic_compliance_at_precharge():
    # C = V0 / (n p0) just above precharge: the adiabatic gas is 1.4 times stiffer
    cs = []
    for n in (1.0, 1.4):
        acc = GasAccumulator("acc", gas_volume_m3=V0, precharge_pressure_pa=P_PRE,
                             polytropic_index=n, dead_volume_m3=V_D, fluid=OIL)
        cs.append(acc.compliance(P_PRE * (1 + 1e-14)) - V_D / BETA)
    assert cs[0] == pytest.approx(V0 / P_PRE, rel=1e-12)
    assert cs[0] / cs[1] == pytest.approx(1.4, rel=1e-12)
    assert math.isclose(acc.compliance(P_PRE), V_D / BETA)
