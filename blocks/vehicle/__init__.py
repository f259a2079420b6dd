"""Vehicle library: tyres, longitudinal and lateral vehicle dynamics, powertrains.

Tyres (issue 7, first part):

* :mod:`.tir`: reader of ``.tir`` tyre property files (sections, units, version,
  unknown keys reported, missing coefficients named);
* :mod:`.magic_formula`: Pacejka Magic Formula 5.2 / 6.1 / 6.2 (pure and combined slip,
  aligning, overturning and rolling resistance moments, relaxation lengths), vectorised;
* :mod:`.brush`: brush (Fiala) and linear tyre models;
* :mod:`.tyres`: the :class:`Tyre` block (wheel-centre kinematics and normal load in,
  forces and moments out; steady or with relaxation lengths).

``SAMPLE_TIR`` is the bundled MF 5.2 (PAC2002) 185/80 R14 coefficient set.

Vehicle dynamics (issue 7, part "Vehicle"):

* :mod:`.params`: frozen parameter dataclasses and :data:`PASSENGER_CAR`, the default
  (representative, chosen) 1500 kg car with a 2-litre engine map;
* :mod:`.longitudinal`: :class:`LongitudinalVehicle` (mass, drag, rolling resistance,
  grade; chatter-free standstill) and :class:`Brake` (torque, pedal or pressure request);
* :mod:`.powertrain`: :class:`Engine` (map torque(throttle, speed), inertia, idle
  governor, fuel cut-off), :class:`EngineMap` (with its inverse), :class:`TorqueConverter`;
* :mod:`.transmission`: :class:`ShiftSchedule` (TCU with hysteresis),
  :class:`AutomaticGearbox`, :class:`FinalDrive`;
* :mod:`.electric_drivetrain`: :func:`ElectricDrivetrain` on :mod:`blocks.electric`;
* :mod:`.vehicles`: complete :func:`ConventionalVehicle` and :func:`ElectricVehicle`
  diagrams (throttle and brake in; x, v, a, engine speed, gear out);
* :mod:`.single_track`: linear :class:`SingleTrack` model, :func:`SingleTrackWithTyres`
  with :class:`Tyre` blocks, :func:`steady_state_cornering`;
* :mod:`.half_car`: :class:`HalfCar`, a pitch-plane half car on :mod:`blocks.multibody`.

Traffic (issue 7, part "Scenarios"): :mod:`.scenarios`: speed profiles, scripted
:class:`LeadVehicle`, the Intelligent Driver Model (:class:`IDMVehicle`), the
:class:`Radar`, and the seed's cut-in, cut-out and stop-and-go scenarios.  The ACC
controller that reads the radar is in :mod:`blocks.controllers.acc`.
"""

from .brush import BrushTyre, LinearTyre, low_speed_weight
from .electric_drivetrain import AcceleratorMap, ElectricDrivetrain
from .half_car import HalfCar, half_car_linear_model, half_car_mechanism
from .longitudinal import Brake, LongitudinalVehicle, standstill_friction
from .magic_formula import SAMPLE_TIR, MagicFormula, MFResult, magic_formula
from .params import (
    PASSENGER_CAR,
    TRACTION_PMSM,
    BodyData,
    BrakeData,
    ElectricDriveData,
    EngineData,
    HalfCarData,
    LateralData,
    PassengerCar,
    TorqueConverterData,
    TransmissionData,
    representative_engine_map,
)
from .powertrain import Engine, EngineMap, TorqueConverter
from .scenarios import (
    IDMParameters,
    IDMVehicle,
    LeadVehicle,
    PiecewiseSpeed,
    Radar,
    SinusoidalSpeed,
    TrafficScenario,
    TrafficVehicle,
    constant_speed,
    cut_in_scenario,
    cut_out_scenario,
    idm_acceleration,
    idm_equilibrium_gap,
    stop_and_go_profile,
    stop_and_go_scenario,
)
from .single_track import SingleTrack, SingleTrackWithTyres, steady_state_cornering
from .tir import KNOWN_KEYS, TirError, TirFile, TirWarning, parse_tir, read_tir
from .transmission import AutomaticGearbox, FinalDrive, ShiftSchedule, efficiency_factor
from .tyres import Tyre, regularized_speed
from .vehicles import ConventionalVehicle, ElectricVehicle

__all__ = [
    "KNOWN_KEYS", "PASSENGER_CAR", "SAMPLE_TIR", "TRACTION_PMSM", "AcceleratorMap",
    "AutomaticGearbox", "BodyData", "Brake", "BrakeData", "BrushTyre", "ConventionalVehicle",
    "ElectricDriveData", "ElectricDrivetrain", "ElectricVehicle", "Engine", "EngineData",
    "EngineMap", "FinalDrive", "HalfCar", "HalfCarData", "LateralData", "LinearTyre",
    "LongitudinalVehicle", "MFResult", "MagicFormula", "PassengerCar", "ShiftSchedule",
    "SingleTrack", "SingleTrackWithTyres", "TirError", "TirFile", "TirWarning",
    "TorqueConverter", "TorqueConverterData", "TransmissionData", "Tyre",
    "efficiency_factor", "half_car_linear_model", "half_car_mechanism", "low_speed_weight",
    "magic_formula", "parse_tir", "read_tir", "regularized_speed",
    "representative_engine_map", "standstill_friction", "steady_state_cornering",
    # scenarios
    "IDMParameters", "IDMVehicle", "LeadVehicle", "PiecewiseSpeed", "Radar", "SinusoidalSpeed",
    "TrafficScenario", "TrafficVehicle", "constant_speed", "cut_in_scenario",
    "cut_out_scenario", "idm_acceleration", "idm_equilibrium_gap", "stop_and_go_profile",
    "stop_and_go_scenario",
]
