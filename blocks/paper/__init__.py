"""Paper-machine reel (the seed's Papers III and IV; research/seed-001.md sec. 2.5-2.9, 1.10).

A growing paper roll pressed against the reel drum by two hydraulic cylinders under PI
nip-load (force) control through servo valves, the seed's fault cases, and fault detection
by a nominal shadow model with the seed's 5 % nip-load criterion.

Modules: :mod:`.nip` (winding law, Hertz line contact, the seed's explicit nip law),
:mod:`.reel` (mechanics: carriages, rigid spool, rail friction, distributed nip),
:mod:`.sensors` (force sensor with seeded band-limited noise), :mod:`.faults` (fault ramp,
the three fault cases), :mod:`.system` (parameters with sources, one reel as a sub-diagram,
steady state), :mod:`.fault_detection` (nip-load residual monitor).
Example: ``examples/paper_reel.py``.
"""

from .fault_detection import NipLoadMonitor, detect_persistent, in_time_order
from .faults import FaultCase, FaultRamp
from .nip import (
    NipContactLaw,
    PowerLawFit,
    diameter_rate,
    fit_power_law,
    hertz_half_width,
    hertz_penetration,
    roll_diameter,
)
from .reel import RailFriction, ReelMechanics
from .sensors import BandLimitedNoise, ForceSensor
from .system import NipForceReference, ReelParameters, SteadyState, reel_diagram, steady_state

__all__ = [
    "BandLimitedNoise", "FaultCase", "FaultRamp", "ForceSensor", "NipContactLaw",
    "NipForceReference", "NipLoadMonitor", "PowerLawFit", "RailFriction", "ReelMechanics",
    "ReelParameters", "SteadyState", "detect_persistent", "diameter_rate", "fit_power_law",
    "hertz_half_width", "hertz_penetration", "in_time_order", "reel_diagram", "roll_diameter",
    "steady_state",
]
