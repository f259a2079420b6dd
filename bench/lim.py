"""The LIM 2-DOF linear oscillator benchmark: :mod:`blocks.benchmarks.lim`, re-exported.

The model moved into the installed package so that the docs can import it from any
folder; ``from bench.lim import ...`` keeps working for the benches and tests.
"""

from __future__ import annotations

from blocks.benchmarks.lim import (
    CASES,
    CONNECTIONS,
    EXACT_CASE1,
    FF_CONNECTIONS,
    K1,
    K2,
    KC,
    M1,
    M2,
    POWER_CONNECTIONS,
    SS_CONNECTIONS,
    V0,
    SpringMass,
    energy,
    energy_power,
    exact,
    m1_diagram,
    m1_power_diagram,
    m2_diagram,
    mass_diagram,
)

__all__ = [
    "CASES", "CONNECTIONS", "EXACT_CASE1", "FF_CONNECTIONS", "K1", "K2", "KC", "M1", "M2",
    "POWER_CONNECTIONS", "SS_CONNECTIONS", "V0", "SpringMass", "energy", "energy_power",
    "exact", "m1_diagram", "m1_power_diagram", "m2_diagram", "mass_diagram",
]
