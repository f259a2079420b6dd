"""Electric drive blocks.

Modules: :mod:`.dc_motor` (permanent-magnet DC motor), :mod:`.pmsm` (PMSM in
the dq frame, field-oriented current control, averaged inverter, the
:class:`PMSMDrive` diagram), :mod:`.crane_drive` (the seed's torque-limited
crane drive), :mod:`.gearbox` (ratio and power-flow-dependent efficiency),
:mod:`.battery` (DC source with internal resistance and state of charge).
"""

from .battery import Battery
from .crane_drive import CraneDrive, TorqueSpeedCurve
from .dc_motor import DCMotor
from .gearbox import Gearbox
from .pmsm import (
    GEM_PMSM,
    PMSM,
    AveragedInverter,
    DQCurrentController,
    PMSMDrive,
    PMSMParameters,
    TorqueToCurrent,
    circle_limit,
)

__all__ = [
    "GEM_PMSM", "PMSM", "AveragedInverter", "Battery", "CraneDrive", "DCMotor",
    "DQCurrentController", "Gearbox", "PMSMDrive", "PMSMParameters", "TorqueSpeedCurve",
    "TorqueToCurrent", "circle_limit",
]
