"""Fluid properties: bulk modulus models against their defining relations."""

import math

import pytest

from blocks.hydraulics import (
    LIM_OIL,
    ConstantBulkModulus,
    EntrainedAirBulkModulus,
    Fluid,
    PressureDependentBulkModulus,
)
from cosim.errors import ParameterError


def test_constant_bulk_modulus_and_number_shortcut():
    assert ConstantBulkModulus(1.4e9)(123.0) == 1.4e9
    assert Fluid(bulk_modulus=1.2e9).beta(5e6) == 1.2e9


def test_lim_bulk_modulus_value_from_the_benchmark():
    # anchors-domain 2.1: beta(3.1708 MPa) = 1.5525 GPa (Cardona-Geradin, LIM a and b)
    assert LIM_OIL.beta(3.1708e6) == pytest.approx(1.5525e9, rel=5e-5)
    assert LIM_OIL.density_kg_m3 == 850.0


def test_pressure_dependent_bulk_modulus_is_rho_dp_drho_of_its_density_law():
    m = PressureDependentBulkModulus()
    a, b = m.a_per_pa, m.b_per_pa2

    def rho(p):  # density law rho0 (1 + a p + b p^2), rho0 = 1
        return 1.0 + a * p + b * p * p
    for p in (1e5, 5e6, 3e7):
        h = 1e4  # central differences are exact for the quadratic law
        drho_dp = (rho(p + h) - rho(p - h)) / (2 * h)
        assert m(p) == pytest.approx(rho(p) / drho_dp, rel=1e-7)


def test_pressure_dependent_bulk_modulus_refuses_beyond_validity():
    m = PressureDependentBulkModulus()
    assert m.max_pressure_pa == pytest.approx(6.53e-10 / (2 * 1.19e-18))
    with pytest.raises(ValueError, match="validity limit"):
        m(3e8)


@pytest.mark.parametrize("n", [1.0, 1.4])
def test_entrained_air_is_minus_v_dp_dv_of_the_mixture_volume(n):
    bl, e0, p0 = 1.6e9, 0.02, 1e5
    m = EntrainedAirBulkModulus(bl, e0, p0, n)

    def volume(p):  # liquid exponential law + polytropic air, total 1 at p0
        return (1 - e0) * math.exp(-(p - p0) / bl) + e0 * (p0 / p) ** (1 / n)
    for p in (1e5, 1e6, 1e7, 2e7):
        h = p * 1e-6
        dv_dp = (volume(p + h) - volume(p - h)) / (2 * h)
        assert m(p) == pytest.approx(-volume(p) / dv_dp, rel=1e-6)


def test_entrained_air_limits():
    bl = 1.6e9
    # no air: the liquid modulus
    assert EntrainedAirBulkModulus(bl, 0.0)(5e6) == bl
    # at the reference pressure: the series (Merritt) formula with the given fraction
    m = EntrainedAirBulkModulus(bl, 0.01, 1e5, 1.0)
    assert m(1e5) == pytest.approx(1 / (0.99 / bl + 0.01 / 1e5), rel=1e-12)
    # air is compressed away at high pressure: the mixture stiffens towards the liquid
    assert m(1e5) < m(1e6) < m(1e7) < bl
    assert m(4e7) == pytest.approx(bl, rel=0.02)
    with pytest.raises(ValueError, match="absolute pressure > 0"):
        m(0.0)


@pytest.mark.parametrize("make, match", [
    (lambda: Fluid(density_kg_m3=-1.0), "density_kg_m3 must be finite and > 0"),
    (lambda: Fluid(bulk_modulus=0.0), "bulk_modulus must be finite and > 0"),
    (lambda: ConstantBulkModulus(float("nan")), "beta_pa must be finite"),
    (lambda: EntrainedAirBulkModulus(1.6e9, 1.0), r"air_fraction must lie in \[0, 1\)"),
    (lambda: EntrainedAirBulkModulus(1.6e9, 0.01, polytropic_index=2.0), "polytropic_index"),
    (lambda: PressureDependentBulkModulus(a_per_pa=0.0), "a_per_pa must be finite and > 0"),
])
def test_bad_fluid_parameters_are_refused(make, match):
    with pytest.raises(ParameterError, match=match):
        make()
