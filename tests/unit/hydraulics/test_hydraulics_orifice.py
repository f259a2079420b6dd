"""Orifice flow: turbulent law, C^1 laminar regularization, catalogue form."""

import math

import numpy as np
import pytest

from blocks.hydraulics import (
    Fluid,
    NominalFlowValve,
    Orifice,
    regularized_sqrt,
    regularized_sqrt_derivative,
    transition_pressure,
)
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

OIL = Fluid(density_kg_m3=870.0)
CD, AREA, DP_TR = 0.65, 2e-6, 2e4
K = CD * AREA * math.sqrt(2 / 870.0)


def q_of(dp, area=AREA):
    h = BlockHarness(Orifice("o", area_m2=area, cd=CD, fluid=OIL, transition_pressure_pa=DP_TR))
    h.set_inputs(p_a=1e5 + dp, p_b=1e5)
    return h.output("q")


@pytest.mark.parametrize("dp", [DP_TR, 3e4, 1e6, 2.5e7])
def test_turbulent_law_beyond_the_transition(dp):
    assert q_of(dp) == pytest.approx(CD * AREA * math.sqrt(2 * dp / 870.0), rel=1e-13)
    assert q_of(-dp) == pytest.approx(-q_of(dp), rel=1e-14)


def test_flow_and_its_derivative_are_continuous_at_the_transition():
    for edge in (DP_TR, -DP_TR):
        eps = 1e-9 * DP_TR
        inner, outer = edge * (1 - 1e-9), edge * (1 + 1e-9)
        assert regularized_sqrt(inner, DP_TR) == pytest.approx(
            regularized_sqrt(outer, DP_TR), rel=1e-8)
        # one-sided finite-difference slopes from each side agree with each other
        h = 1e-4 * DP_TR
        left = (regularized_sqrt(edge - eps, DP_TR) - regularized_sqrt(edge - eps - h, DP_TR)) / h
        right = (regularized_sqrt(edge + eps + h, DP_TR) - regularized_sqrt(edge + eps, DP_TR)) / h
        turbulent_slope = 0.5 / math.sqrt(DP_TR)
        assert left == pytest.approx(turbulent_slope, rel=2e-4)
        assert right == pytest.approx(turbulent_slope, rel=2e-4)
        assert regularized_sqrt_derivative(inner, DP_TR) == pytest.approx(turbulent_slope,
                                                                           rel=1e-8)
        assert regularized_sqrt_derivative(outer, DP_TR) == pytest.approx(turbulent_slope,
                                                                          rel=1e-8)


def test_slope_is_finite_at_zero_and_the_law_is_odd_and_monotone():
    h = 1e-3
    slope0 = (q_of(h) - q_of(-h)) / (2 * h)
    assert slope0 == pytest.approx(1.25 * K / math.sqrt(DP_TR), rel=1e-9)
    assert q_of(0.0) == 0.0
    dps = np.linspace(-3 * DP_TR, 3 * DP_TR, 2001)
    q = np.array([regularized_sqrt(d, DP_TR) for d in dps])
    assert np.all(np.diff(q) > 0)
    np.testing.assert_allclose(q, -q[::-1], rtol=0, atol=1e-12)
    # the analytic derivative matches finite differences everywhere
    d_fd = np.gradient(q, dps)
    d_an = np.array([regularized_sqrt_derivative(d, DP_TR) for d in dps])
    np.testing.assert_allclose(d_fd[1:-1], d_an[1:-1], rtol=2e-3)


def test_area_input_is_used_and_clipped_at_zero():
    o = Orifice("o", area_m2=None, cd=CD, fluid=OIL, transition_pressure_pa=DP_TR)
    h = BlockHarness(o)
    h.set_inputs(p_a=5e6, p_b=1e5, area=AREA)
    assert h.output("q") == pytest.approx(q_of(4.9e6), rel=1e-14)
    h.set_input("area", -1e-6)
    assert h.output("q") == 0.0


def test_catalogue_valve_reproduces_nominal_flow():
    qn, dpn = 40 / 60000, 35e5  # 40 l/min at 35 bar per edge
    h = BlockHarness(NominalFlowValve("v", q_nominal_m3_s=qn, dp_nominal_pa=dpn))
    h.set_inputs(p_a=1e5 + dpn, p_b=1e5, u=1.0)
    assert h.output("q") == pytest.approx(qn, rel=1e-14)
    h.set_inputs(p_a=1e5 + 4 * dpn, u=0.3)  # Q = Q_N u sqrt(dp/dp_N)
    assert h.output("q") == pytest.approx(qn * 0.3 * 2.0, rel=1e-14)
    h.set_input("u", 1.7)  # clipped to the spool's travel
    assert h.output("q") == pytest.approx(qn * 2.0, rel=1e-14)
    h.set_input("u", -0.5)
    assert h.output("q") == 0.0


def test_transition_pressure_is_where_the_reynolds_number_is_critical():
    fluid = Fluid(density_kg_m3=870.0, kinematic_viscosity_m2_s=46e-6)
    dp = transition_pressure(CD, AREA, fluid, re_crit=100.0)
    v = CD * math.sqrt(2 * dp / 870.0)  # Q / A
    re = v * math.sqrt(4 * AREA / math.pi) / 46e-6
    assert re == pytest.approx(100.0, rel=1e-12)


@pytest.mark.parametrize("kw, match", [
    (dict(area_m2=0.0), "area_m2 must be finite and > 0"),
    (dict(area_m2=1e-6, cd=-0.6), "cd must be finite and > 0"),
    (dict(area_m2=1e-6, transition_pressure_pa=0.0), "transition_pressure_pa must be"),
])
def test_bad_orifice_parameters(kw, match):
    with pytest.raises(ParameterError, match=match):
        Orifice("o", **kw)
    with pytest.raises(ParameterError, match="dp_nominal_pa must be finite"):
        NominalFlowValve("v", q_nominal_m3_s=1e-3, dp_nominal_pa=-1.0)
