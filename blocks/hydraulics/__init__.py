"""Hydraulic lumped-fluid blocks (signal-flow: pressures and flows are separate ports).

Conventions: SI units on every port ("Pa" absolute, "m^3/s", "m", "m/s", "N");
a node of the circuit is a :class:`Volume` (or a cylinder chamber) whose state is
its pressure; orifices and valves compute flows from the pressures at their two
ends (feedthrough); flows are summed, with their signs, by the volumes.

Modules: :mod:`.fluid` (density, bulk modulus models), :mod:`.volume`,
:mod:`.orifice`, :mod:`.valves`, :mod:`.cylinder`, :mod:`.sources`,
:mod:`.servo_valve` (2nd-order spool dynamics, Bode identification),
:mod:`.accumulator` (gas-charged), :mod:`.line` (lumped pipe/hose sections),
:mod:`.motor` (hydraulic motor, displacement-machine equations), :mod:`.pump`
(variable-displacement pump), :mod:`.actuator` (valve + cylinder in one block, for
speed).
"""

from .accumulator import GasAccumulator
from .actuator import ValveControlledCylinder
from .cylinder import CylinderFriction, DoubleActingCylinder
from .fluid import (
    LIM_OIL,
    MINERAL_OIL,
    ConstantBulkModulus,
    EntrainedAirBulkModulus,
    Fluid,
    PressureDependentBulkModulus,
)
from .line import HydraulicLine, LineParameters, lumped_natural_frequencies_hz
from .motor import HydraulicMotor
from .orifice import (
    NominalFlowValve,
    Orifice,
    regularized_sqrt,
    regularized_sqrt_derivative,
    transition_pressure,
)
from .pump import VariableDisplacementPump
from .servo_valve import (
    BodeFit,
    ServoValve,
    bode_minus_90_estimate,
    bode_second_order,
    identify_from_bode,
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
    "BodeFit", "ServoValve", "bode_minus_90_estimate", "bode_second_order", "identify_from_bode",
    "GasAccumulator", "HydraulicLine", "LineParameters", "lumped_natural_frequencies_hz",
    "HydraulicMotor", "VariableDisplacementPump", "ValveControlledCylinder",
]
