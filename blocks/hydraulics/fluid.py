"""Hydraulic fluid properties: density and effective bulk modulus models.

All pressures in this package are **absolute**, in Pa (the tank is at about
1e5 Pa, not 0).  The bulk modulus models are small callables ``beta(p)`` [Pa]
evaluated in the pressure equations of volumes and cylinder chambers; they hold
no state and are safe to share between blocks.

Models
------
:class:`ConstantBulkModulus`
    :math:`\\beta(p) = \\beta_0`.
:class:`PressureDependentBulkModulus`
    Cardona and Geradin (1990), used by the LIM hydraulic manipulator benchmark
    (``fgonzalezLIM/cosim-benchmarks``, ``doc/hydraulicManipulator.tex``):

    .. math:: \\beta(p) = \\frac{1 + a p + b p^2}{a + 2 b p}

    which is :math:`\\rho\\,dp/d\\rho` for the density law
    :math:`\\rho = \\rho_0 (1 + a p + b p^2)`.  LIM values: a = 6.53e-10 1/Pa,
    b = -1.19e-18 1/Pa^2, giving beta(3.1708 MPa) = 1.5525 GPa.
:class:`EntrainedAirBulkModulus`
    Liquid with an undissolved air fraction, the air compressed polytropically
    (Merritt 1967, *Hydraulic Control Systems*, sec. 2.4; Gholizadeh, Burton and
    Schoenau 2011, "Fluid bulk modulus: a literature survey", Int. J. Fluid Power
    12(3), eqs. for the "volume-weighted" mixture):

    .. math::

        V_\\ell(p) = V_{\\ell 0}\\, e^{-(p - p_0)/\\beta_\\ell}, \\qquad
        V_a(p) = V_{a0} (p_0 / p)^{1/n}, \\qquad
        \\frac{1}{\\beta_e} = -\\frac{1}{V}\\frac{dV}{dp}
            = \\frac{1 - \\varepsilon(p)}{\\beta_\\ell} + \\frac{\\varepsilon(p)}{n\\,p}

    with :math:`V = V_\\ell + V_a` and :math:`\\varepsilon = V_a / V` the air
    fraction at pressure p; :math:`\\varepsilon_0` is given at the reference
    pressure :math:`p_0`.  This is Merritt's series formula
    :math:`1/\\beta_e = 1/\\beta_\\ell + (V_g/V_t)/\\beta_g` with the gas bulk
    modulus :math:`\\beta_g = n p` and the gas fraction following the pressure.
    n = 1 is isothermal, n = 1.4 adiabatic air.  Air dissolution (Henry's law)
    is not modelled: the free air fraction is fixed by :math:`\\varepsilon_0`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

from cosim.errors import ParameterError


class BulkModulusModel(Protocol):
    """Anything with ``__call__(p) -> beta`` (both in Pa, p absolute)."""

    def __call__(self, p: float) -> float: ...


def _positive(owner: str, label: str, v: float) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ParameterError(f"{owner}: {label} must be a number, got {v!r}") from None
    if not (f > 0 and math.isfinite(f)):
        raise ParameterError(f"{owner}: {label} must be finite and > 0, got {v!r}")
    return f


@dataclass(frozen=True)
class ConstantBulkModulus:
    """:math:`\\beta(p) = \\beta_0` [Pa]."""

    beta_pa: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta_pa",
                           _positive("ConstantBulkModulus", "beta_pa", self.beta_pa))

    def __call__(self, p: float) -> float:
        return self.beta_pa


@dataclass(frozen=True)
class PressureDependentBulkModulus:
    """Cardona-Geradin pressure-dependent bulk modulus (LIM benchmark defaults).

    :math:`\\beta(p) = (1 + a p + b p^2) / (a + 2 b p)`.  Valid while the
    denominator stays positive, i.e. below :attr:`max_pressure_pa`
    (a / (2|b|) = 274 MPa for the LIM values); beyond it a ``ValueError`` is raised.
    """

    a_per_pa: float = 6.53e-10
    b_per_pa2: float = -1.19e-18

    def __post_init__(self) -> None:
        a = _positive("PressureDependentBulkModulus", "a_per_pa", self.a_per_pa)
        object.__setattr__(self, "a_per_pa", a)
        b = float(self.b_per_pa2)
        if not math.isfinite(b):
            raise ParameterError("PressureDependentBulkModulus: b_per_pa2 must be finite")
        object.__setattr__(self, "b_per_pa2", b)

    @property
    def max_pressure_pa(self) -> float:
        """Pressure where the density law stops increasing (inf if b >= 0)."""
        return math.inf if self.b_per_pa2 >= 0 else self.a_per_pa / (-2.0 * self.b_per_pa2)

    def __call__(self, p: float) -> float:
        a, b = self.a_per_pa, self.b_per_pa2
        den = a + 2.0 * b * p
        if den <= 0.0:
            raise ValueError(
                f"PressureDependentBulkModulus: p = {p:.6g} Pa is beyond the validity limit "
                f"{self.max_pressure_pa:.6g} Pa (a + 2 b p <= 0)")
        return (1.0 + a * p + b * p * p) / den


@dataclass(frozen=True)
class EntrainedAirBulkModulus:
    """Liquid plus a free air fraction compressed polytropically (see the module docstring).

    Parameters
    ----------
    liquid_beta_pa : float
        Bulk modulus of the air-free liquid, e.g. 1.6e9 Pa for mineral oil.
    air_fraction : float
        Volume fraction of free air at ``reference_pressure_pa``, in [0, 1).
    reference_pressure_pa : float
        Absolute pressure at which ``air_fraction`` is given (default 1 atm).
    polytropic_index : float
        n = 1 isothermal (slow processes), 1.4 adiabatic.
    """

    liquid_beta_pa: float
    air_fraction: float
    reference_pressure_pa: float = 101325.0
    polytropic_index: float = 1.0

    def __post_init__(self) -> None:
        own = "EntrainedAirBulkModulus"
        object.__setattr__(self, "liquid_beta_pa",
                           _positive(own, "liquid_beta_pa", self.liquid_beta_pa))
        object.__setattr__(self, "reference_pressure_pa",
                           _positive(own, "reference_pressure_pa", self.reference_pressure_pa))
        n = _positive(own, "polytropic_index", self.polytropic_index)
        if not 1.0 <= n <= 1.4:
            raise ParameterError(f"{own}: polytropic_index must lie in [1, 1.4] "
                                 f"(1 isothermal, 1.4 adiabatic air), got {n!r}")
        object.__setattr__(self, "polytropic_index", n)
        e = float(self.air_fraction)
        if not 0.0 <= e < 1.0:
            raise ParameterError(f"{own}: air_fraction must lie in [0, 1), got "
                                 f"{self.air_fraction!r}")
        object.__setattr__(self, "air_fraction", e)

    def air_fraction_at(self, p: float) -> float:
        """Free air volume fraction :math:`\\varepsilon(p)` at absolute pressure p > 0."""
        e0, p0, n, bl = (self.air_fraction, self.reference_pressure_pa,
                         self.polytropic_index, self.liquid_beta_pa)
        if e0 == 0.0:
            return 0.0
        va = e0 * (p0 / p) ** (1.0 / n)
        vl = (1.0 - e0) * math.exp(-(p - p0) / bl)
        return va / (va + vl)

    def __call__(self, p: float) -> float:
        if p <= 0.0:
            raise ValueError(f"EntrainedAirBulkModulus: needs an absolute pressure > 0, "
                             f"got p = {p:.6g} Pa")
        e = self.air_fraction_at(p)
        return 1.0 / ((1.0 - e) / self.liquid_beta_pa + e / (self.polytropic_index * p))


def as_bulk_modulus(value: float | BulkModulusModel, owner: str) -> BulkModulusModel:
    """A number becomes a :class:`ConstantBulkModulus`; a callable is kept."""
    if callable(value):
        return value
    return ConstantBulkModulus(_positive(owner, "bulk_modulus", value))


@dataclass(frozen=True)
class Fluid:
    """A hydraulic fluid: density, bulk modulus model, kinematic viscosity.

    Parameters
    ----------
    density_kg_m3 : float
        Density (taken constant in the orifice equations).
    bulk_modulus : float or callable
        Effective bulk modulus in Pa, or a model ``beta(p)`` (see the module docstring).
    kinematic_viscosity_m2_s : float
        Used only to choose laminar-turbulent transition pressures
        (:func:`blocks.hydraulics.orifice.transition_pressure`).  Default 46e-6
        (ISO VG 46 mineral oil at 40 degC).
    """

    density_kg_m3: float = 870.0
    bulk_modulus: float | BulkModulusModel = 1.5e9
    kinematic_viscosity_m2_s: float = 46e-6
    beta: BulkModulusModel = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "density_kg_m3",
                           _positive("Fluid", "density_kg_m3", self.density_kg_m3))
        object.__setattr__(self, "kinematic_viscosity_m2_s",
                           _positive("Fluid", "kinematic_viscosity_m2_s",
                                     self.kinematic_viscosity_m2_s))
        object.__setattr__(self, "beta", as_bulk_modulus(self.bulk_modulus, "Fluid"))


#: The LIM manipulator benchmark's oil: rho = 850 kg/m^3, Cardona-Geradin bulk modulus.
LIM_OIL = Fluid(density_kg_m3=850.0, bulk_modulus=PressureDependentBulkModulus())
#: A generic mineral oil (ISO VG 46, 40 degC), constant beta = 1.5 GPa.
MINERAL_OIL = Fluid()
