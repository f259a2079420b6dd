"""Hydraulic lumped-fluid blocks (signal-flow: pressures and flows are separate ports).

Conventions: SI units on every port ("Pa" absolute, "m^3/s", "m", "m/s", "N");
a node of the circuit is a :class:`Volume` (or a cylinder chamber) whose state is
its pressure; orifices and valves compute flows from the pressures at their two
ends (feedthrough); flows are summed, with their signs, by the volumes.

Modules: :mod:`.fluid` (density, bulk modulus models), :mod:`.volume`,
:mod:`.orifice`, :mod:`.valves`, :mod:`.cylinder`, :mod:`.sources`.
"""

from .cylinder import CylinderFriction, DoubleActingCylinder
from .fluid import (
    LIM_OIL,
    MINERAL_OIL,
    ConstantBulkModulus,
    EntrainedAirBulkModulus,
    Fluid,
    PressureDependentBulkModulus,
)
from .orifice import (
    NominalFlowValve,
    Orifice,
    regularized_sqrt,
    regularized_sqrt_derivative,
    transition_pressure,
)
from .sources import FixedDisplacementPump, PressureSource, Tank
from .valves import CheckValve, ReliefValve, SpoolValve43
from .volume import Volume

__all__ = [
    "LIM_OIL", "MINERAL_OIL", "CheckValve", "ConstantBulkModulus", "CylinderFriction",
    "DoubleActingCylinder", "EntrainedAirBulkModulus", "FixedDisplacementPump", "Fluid",
    "NominalFlowValve", "Orifice", "PressureDependentBulkModulus", "PressureSource",
    "ReliefValve", "SpoolValve43", "Tank", "Volume", "regularized_sqrt",
    "regularized_sqrt_derivative", "transition_pressure",
]
