"""Gantry (ship-to-shore container) crane of the seed's training simulator (Paper V).

Modules: :mod:`.gantry` (the block: gantry, flexible trolley, hoist, spreader on four
unilateral ropes, in the seed's minimal coordinates with a Newton-Euler spreader),
:mod:`.dynamics` (its state derivative in plain floats), :mod:`.states` (state
naming, the static equilibrium),
:mod:`.guide_arms` (the spreader's six guide arms: PD control, stop bars, contact with
the container below), :mod:`.drives` (the three 4-motor drives as
:class:`~blocks.electric.CraneDrive` blocks), :mod:`.operator` (scripted operator
references), :mod:`.parameters` (a ship-to-shore crane with the justification of every
number).  Example: ``examples/gantry_crane.py``; benchmark: ``bench/crane.py``.
"""

from .drives import connect_drives, make_drive, make_drives
from .dynamics import N_STATES, STATE_NAMES, CraneFault, make_rhs
from .gantry import GantryCrane
from .guide_arms import ARM_GROUPS, arm_references, contact_angle
from .operator import OperatorProgram, trapezoid
from .parameters import (
    GANTRY_DRIVE,
    HOIST_DRIVE,
    STS_CRANE,
    TROLLEY_DRIVE,
    ContainerLoad,
    DriveParameters,
    GantryCraneParameters,
    GuideArmParameters,
    TargetContainer,
    suspended_body,
)
from .states import equilibrium, make_state, unpack

__all__ = [
    "ARM_GROUPS", "GANTRY_DRIVE", "HOIST_DRIVE",
    "N_STATES", "STATE_NAMES", "STS_CRANE", "TROLLEY_DRIVE", "ContainerLoad", "CraneFault",
    "DriveParameters", "GantryCrane", "GantryCraneParameters", "GuideArmParameters",
    "OperatorProgram", "TargetContainer", "arm_references", "connect_drives", "contact_angle",
    "equilibrium", "make_drive", "make_drives", "make_rhs", "make_state", "suspended_body",
    "trapezoid", "unpack",
]
