"""Flatness-based control: flat-system descriptions, flat-output plans, exact tracking.

* :mod:`.system`: :class:`FlatSystem` (forward and reverse maps, python-control interop);
* :mod:`.plan`: polynomial, spline and python-control plans; :func:`check_plan`
  (singularities and bounds, before the run);
* :mod:`.tracking`: :class:`FlatTracker`, feedforward plus exact linearization by
  dynamic extension, gains as poles or kp/kv;
* models: :mod:`.expanding_wheel` (Agrawal, Yan & Franch), :mod:`.kincar`
  (kinematic car, python-control's lane change), :mod:`.flexible_joint` (Agrawal's
  flexible-joint robot), :mod:`.crane` (planar crane
  with a hoisted cable; rest-to-rest transfers for the gantry crane of
  :mod:`blocks.cranes`).
"""

from .crane import (
    PlanarCrane,
    TableReference,
    crane_references,
    plan_transfer,
    simulate_planar,
    sts_planar_crane,
    transfer_profile,
)
from .expanding_wheel import (
    SEED_BOUNDARY,
    SEED_GAINS,
    SEED_INITIAL,
    ExpandingWheelLaw,
    ExpandingWheelPlant,
    ExpandingWheelVehicle,
    flag_from_rates,
)
from .flexible_joint import DEFAULT_PARAMS as FLEXIBLE_JOINT_PARAMS
from .flexible_joint import (
    FlexibleJoint,
    FlexibleJointFlat,
    FlexibleJointLaw,
    ramp_reference,
)
from .kincar import (
    LANE_CHANGE,
    KinematicCar,
    KinematicCarFlat,
    KinematicCarLaw,
    lane_change_analytic,
)
from .plan import (
    ConstraintError,
    FlatsysPlan,
    Plan,
    PlanError,
    PlanReport,
    PolynomialPlan,
    SingularityError,
    SplinePlan,
    check_plan,
    plan_flatsys,
)
from .system import FlatSystem, as_flag
from .tracking import FlatTracker, LinearizingLaw, error_gains

__all__ = [
    "SEED_BOUNDARY", "SEED_GAINS", "SEED_INITIAL", "ConstraintError", "ExpandingWheelLaw",
    "ExpandingWheelPlant", "ExpandingWheelVehicle", "FlatSystem", "FlatTracker",
    "FlatsysPlan", "LinearizingLaw", "Plan", "PlanError", "PlanReport", "PolynomialPlan",
    "SingularityError", "SplinePlan", "as_flag", "check_plan", "error_gains",
    "flag_from_rates", "plan_flatsys", "PlanarCrane", "TableReference", "crane_references",
    "plan_transfer", "simulate_planar", "sts_planar_crane", "transfer_profile",
    "FLEXIBLE_JOINT_PARAMS", "FlexibleJoint", "FlexibleJointFlat", "FlexibleJointLaw",
    "ramp_reference", "LANE_CHANGE", "KinematicCar", "KinematicCarFlat", "KinematicCarLaw",
    "lane_change_analytic",
]
