"""Controllers that run as separate, sampled blocks (ECU-like: signals in, requests out).

* :mod:`.acc`: adaptive cruise control, the seed's sliding-mode spacing law with torque
  inversion and throttle/brake switching (:class:`ACCController`);
* :mod:`.iso15622`: the ISO 15622 ACC limits and a checker for recorded runs.
"""

from .acc import ACCController, ACCSettings, DrivelineModel, EngineMap, check_time_gap
from .iso15622 import ISOReport, check_iso15622, max_decel, max_jerk

__all__ = [
    "ACCController", "ACCSettings", "DrivelineModel", "EngineMap", "ISOReport",
    "check_iso15622", "check_time_gap", "max_decel", "max_jerk",
]
