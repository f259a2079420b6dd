"""Nip contact and winding law (seed Paper III eqs. 25-30): closed forms and the power-law fit."""

import math

import numpy as np
import pytest

from blocks.paper.nip import (
    NipContactLaw,
    diameter_rate,
    fit_power_law,
    hertz_half_width,
    hertz_penetration,
    roll_diameter,
    smoothstep,
)
from cosim.errors import ParameterError

D, D1, E, NU = 2.5, 1.5, 50e6, 0.3


def test_winding_law_is_the_area_balance_of_the_wound_web():
    d0, tau = 2.5, 80e-6
    for length in (0.0, 1.0, 1e3, 5e4):
        d = roll_diameter(length, d0, tau)
        assert 0.25 * math.pi * (d * d - d0 * d0) == pytest.approx(tau * length, rel=1e-12,
                                                                     abs=1e-15)
    # d' = 2 tau v / (pi d): central difference of d(l) along l = v t
    v, length, h = 25.0, 2e3, 1e-3
    fd = (roll_diameter(length + v * h, d0, tau) - roll_diameter(length - v * h, d0, tau)) / (2 * h)
    assert diameter_rate(roll_diameter(length, d0, tau), v, tau) == pytest.approx(fd, rel=1e-8)


def test_hertz_half_width_is_johnsons_line_contact_formula():
    # Johnson, Contact Mechanics, eq. 4.43: b = sqrt(4 P R / (pi E*)), 1/R = 1/R1 + 1/R2,
    # with a rigid drum E* = E / (1 - nu^2); P per unit length
    for q in (500.0, 4000.0, 2e4):
        r = 1.0 / (2.0 / D + 2.0 / D1)
        b = math.sqrt(4.0 * q * r / (math.pi * E / (1.0 - NU ** 2)))
        assert hertz_half_width(q, D, D1, E, NU) == pytest.approx(b, rel=1e-14)


def test_hertz_penetration_value_and_scaling():
    q = 4000.0
    a = math.sqrt(2.0 * q / (1 / D + 1 / D1) / (math.pi * E / (1 - NU ** 2)))
    expected = q * (1 - NU ** 2) / (math.pi * E) * (2.0 * math.log(2.0 * D / a) - 1.0)
    assert hertz_penetration(q, D, D1, E, NU) == pytest.approx(expected, rel=1e-14)
    assert expected == pytest.approx(2.8417e-4, rel=1e-4)          # 0.28 mm at 4000 N/m
    assert hertz_penetration(0.0, D, D1, E, NU) == 0.0
    assert hertz_penetration(-5.0, D, D1, E, NU) == 0.0
    # a depends on q/E only, so delta(k q; k E) = delta(q; E)
    assert hertz_penetration(2 * q, D, D1, 2 * E, NU) == pytest.approx(
        hertz_penetration(q, D, D1, E, NU), rel=1e-13)


def test_power_law_fit_reproduces_hertz_over_the_working_range():
    fit = fit_power_law(D, D1, E, NU, (1000.0, 8000.0))
    # Hertz is slightly stiffening in delta (e > 1): delta ~ q (A - ln q)
    assert 1.0 < fit.exponent < 1.2
    assert fit.max_rel_error < 3e-3
    law = NipContactLaw(fit.k_a, fit.exponent, 0.0, 1e-5)
    for q in np.geomspace(1000.0, 8000.0, 17):    # between the fit points too
        delta = hertz_penetration(q, D, D1, E, NU)
        assert law.line_load(delta, 0.0) == pytest.approx(q, rel=1.01 * fit.max_rel_error)
        assert law.penetration(q) == pytest.approx(delta, rel=3e-3)
    # outside the range the fit degrades: it is a fit, not Hertz
    far = hertz_penetration(1e5, D, D1, E, NU)
    assert abs(law.line_load(far, 0.0) / 1e5 - 1.0) > fit.max_rel_error


def test_fit_rejects_bad_input_naming_the_argument():
    with pytest.raises(ParameterError, match="e_pa"):
        fit_power_law(D, D1, -1.0, NU, (1e3, 8e3))
    with pytest.raises(ParameterError, match="nu"):
        fit_power_law(D, D1, E, 0.6, (1e3, 8e3))
    with pytest.raises(ParameterError, match="q_range_n_m"):
        fit_power_law(D, D1, E, NU, (8e3, 1e3))


def test_contact_law_regions_damping_blend_and_clamp():
    law = NipContactLaw(k_a=2.85e7, exponent=1.086, damping_n_s_m2=1.8e5, damping_depth_m=5e-5)
    assert law.line_load(0.0, 1.0) == 0.0 and law.line_load(-1e-4, -1.0) == 0.0
    d = 2e-4
    assert law.line_load(d, 0.0) == pytest.approx(2.85e7 * d ** 1.086, rel=1e-14)
    # full damping beyond delta_c, blended by S below, continuous at delta_c
    assert law.line_load(d, 1e-3) - law.line_load(d, 0.0) == pytest.approx(180.0, rel=1e-12)
    s = 0.3
    assert (law.line_load(s * 5e-5, 1e-3) - law.line_load(s * 5e-5, 0.0)
            == pytest.approx(180.0 * s * s * (3 - 2 * s), rel=1e-9))
    eps = 1e-12
    assert law.line_load(5e-5 - eps, 1e-3) == pytest.approx(law.line_load(5e-5 + eps, 1e-3),
                                                            rel=1e-7)
    # dissipative: resists penetration growth, and never pulls
    assert law.line_load(d, 1e-3) > law.line_load(d, 0.0) > law.line_load(d, -1e-3)
    assert law.line_load(d, -10.0) == 0.0
    # stiffness = dq/d delta of the spring part; penetration inverts it
    h = 1e-9
    fd = (law.line_load(d + h, 0.0) - law.line_load(d - h, 0.0)) / (2 * h)
    assert law.stiffness(d) == pytest.approx(fd, rel=1e-6)
    assert law.penetration(law.line_load(d, 0.0)) == pytest.approx(d, rel=1e-13)
    assert smoothstep(0.5) == 0.5 and smoothstep(-1.0) == 0.0 and smoothstep(2.0) == 1.0


def test_contact_law_rejects_bad_parameters_by_name():
    with pytest.raises(ParameterError, match="k_a"):
        NipContactLaw(0.0, 1.0, 0.0, 1e-5)
    with pytest.raises(ParameterError, match="damping_n_s_m2"):
        NipContactLaw(1e7, 1.0, -1.0, 1e-5)
    with pytest.raises(ParameterError, match="damping_depth_m"):
        NipContactLaw(1e7, 1.0, 0.0, math.nan)
