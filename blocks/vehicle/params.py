r"""Vehicle parameter sets, and the default passenger car.

Every block of the vehicle package takes one of these frozen dataclasses (SI units, the
unit in each field name where it is not obvious); :data:`PASSENGER_CAR` bundles one of
each.  Validation happens in ``__post_init__`` and names the class and the field.

The default car: **representative, chosen** values for a 1500 kg compact/mid-size
passenger car with a 2-litre naturally aspirated gasoline engine and a 4-speed automatic
transmission with torque converter.  The ACC seed (Kim et al., seed §11) gives none of
these numbers (no engine map, torque-converter map, gear ratios, resistances or brake
gain), so they are not a published vehicle: they are magnitudes typical of that class,
chosen to be mutually consistent (e.g. the stall speed of the converter, about 1780 rpm,
lies where a 2-litre engine's full-load torque meets the converter's capacity).

Engine map (representative of a 2-litre NA gasoline engine, about 200 N m at 4000 rpm and
110 kW at 6000 rpm; not measured data):

.. math::

    T(\alpha, n) = T_0(n) + (T_{wot}(n) - T_0(n))\,
        \frac{1 - e^{-k(n)\alpha}}{1 - e^{-k(n)}}, \qquad k(n) = 1 + 5\,\frac{1000}{n},

with :math:`T_{wot}` the full-load curve below, :math:`T_0(n) = -V_d/(4\pi)\,(1.2 +
0.15 n_k + 0.05 n_k^2)\,\mathrm{bar}` the closed-throttle (motoring) torque,
:math:`n_k = n/1000` rpm and :math:`V_d` = 2 l (a friction-plus-pumping mean effective
pressure of the quadratic form of Heywood 1988, ch. 13, with chosen coefficients), and
:math:`k(n)` making small throttle openings give most of the torque at low speed (the
throttle's air flow saturates there).  The formula only fills the table; the engine uses
the table (bilinear), which is monotone in throttle, so it can be inverted
(:meth:`~blocks.vehicle.powertrain.EngineMap.throttle_for_torque`).

Torque converter: torque ratio 2.0 at stall, coupling point at speed ratio 0.87, capacity
factor 135 rpm/sqrt(N m) at stall rising to infinity at speed ratio 1 (shape typical of
published passenger-car converter curves, e.g. Hrovat & Tobler 1985; values chosen).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from blocks.electric.pmsm import PMSMParameters
from cosim.errors import ParameterError

__all__ = ["PASSENGER_CAR", "BodyData", "BrakeData", "ElectricDriveData", "EngineData",
           "HalfCarData", "LateralData", "PassengerCar", "TorqueConverterData",
           "TRACTION_PMSM", "TransmissionData", "representative_engine_map"]

G = 9.81


def _check_positive(obj: Any, *names: str) -> None:
    for n in names:
        v = getattr(obj, n)
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ParameterError(f"{type(obj).__name__}: {n} must be finite and > 0, got {v!r}")


def _check_nonnegative(obj: Any, *names: str) -> None:
    for n in names:
        v = getattr(obj, n)
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
            raise ParameterError(f"{type(obj).__name__}: {n} must be finite and >= 0, "
                                 f"got {v!r}")


def _check_fraction(obj: Any, *names: str) -> None:
    for n in names:
        v = getattr(obj, n)
        if not (isinstance(v, (int, float)) and 0 < v <= 1):
            raise ParameterError(f"{type(obj).__name__}: {n} must be in (0, 1], got {v!r}")


def _increasing(obj: Any, name: str, min_points: int = 2) -> tuple:
    a = np.asarray(getattr(obj, name), dtype=float)
    if a.ndim != 1 or a.size < min_points or not np.all(np.isfinite(a)) \
            or np.any(np.diff(a) <= 0):
        raise ParameterError(f"{type(obj).__name__}: {name} must be 1-D, finite, strictly "
                             f"increasing with >= {min_points} points, got {getattr(obj, name)!r}")
    return tuple(a.tolist())


# --------------------------------------------------------------------- body
@dataclass(frozen=True)
class BodyData:
    """Longitudinal vehicle data (:class:`~blocks.vehicle.longitudinal.LongitudinalVehicle`).

    ``wheel_inertia_kgm2`` is the spin inertia of all wheels together (plus whatever
    driveline inertia is rigidly tied to them); it enters as the equivalent mass
    :math:`J/r^2`.
    """

    mass_kg: float = 1500.0
    drag_coefficient: float = 0.30
    frontal_area_m2: float = 2.2
    air_density_kg_m3: float = 1.2
    rolling_resistance: float = 0.012
    wheel_radius_m: float = 0.31
    wheel_inertia_kgm2: float = 3.6
    gravity_m_s2: float = G

    def __post_init__(self) -> None:
        _check_positive(self, "mass_kg", "wheel_radius_m", "gravity_m_s2")
        _check_nonnegative(self, "drag_coefficient", "frontal_area_m2", "air_density_kg_m3",
                           "rolling_resistance", "wheel_inertia_kgm2")

    @property
    def equivalent_mass_kg(self) -> float:
        """:math:`m + J_w / r^2`."""
        return self.mass_kg + self.wheel_inertia_kgm2 / self.wheel_radius_m ** 2

    @property
    def drag_constant(self) -> float:
        r""":math:`\tfrac12\rho C_d A` [N s^2/m^2]."""
        return 0.5 * self.air_density_kg_m3 * self.drag_coefficient * self.frontal_area_m2


# ------------------------------------------------------------------- engine
_WOT_RPM = (600.0, 1000.0, 1500.0, 2000.0, 2500.0, 3000.0, 3500.0, 4000.0, 4500.0, 5000.0,
            5500.0, 6000.0, 6500.0, 7000.0)
_WOT_NM = (95.0, 140.0, 165.0, 180.0, 189.0, 194.0, 198.0, 200.0, 198.0, 193.0, 185.0, 175.0,
           158.0, 130.0)
_THROTTLE = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def representative_engine_map(displacement_l: float = 2.0) -> tuple[tuple, tuple, tuple]:
    """``(throttle, speed_rpm, torque_nm)`` of the representative map (module docstring).

    ``torque_nm[i][j]`` is the torque at ``throttle[i]`` and ``speed_rpm[j]``.
    """
    n = np.asarray(_WOT_RPM)
    nk = n / 1000.0
    t0 = -displacement_l * 1e-3 / (4 * math.pi) * 1e5 * (1.2 + 0.15 * nk + 0.05 * nk ** 2)
    k = 1.0 + 5.0 * 1000.0 / n
    a = np.asarray(_THROTTLE)[:, None]
    g = (1.0 - np.exp(-k * a)) / (1.0 - np.exp(-k))
    z = t0 + (np.asarray(_WOT_NM) - t0) * g
    return _THROTTLE, _WOT_RPM, tuple(tuple(round(float(v), 3) for v in row) for row in z)


_MAP = representative_engine_map()


@dataclass(frozen=True)
class EngineData:
    """Engine map and crank data (:class:`~blocks.vehicle.powertrain.Engine`).

    ``torque_nm[i][j]``: torque at ``throttle[i]`` and ``speed_rpm[j]``, non-decreasing in
    throttle.  Idle governor: a proportional throttle ``idle_gain_per_rad_s *
    (omega_idle - omega)``; fuel cut: the throttle is ramped to 0 between
    ``cutoff_rpm - cutoff_ramp_rpm`` and ``cutoff_rpm``.
    """

    throttle: tuple = _MAP[0]
    speed_rpm: tuple = _MAP[1]
    torque_nm: tuple = _MAP[2]
    inertia_kgm2: float = 0.20
    idle_rpm: float = 800.0
    idle_gain_per_rad_s: float = 0.005
    cutoff_rpm: float = 6500.0
    cutoff_ramp_rpm: float = 200.0

    def __post_init__(self) -> None:
        thr = _increasing(self, "throttle")
        spd = _increasing(self, "speed_rpm")
        z = np.asarray(self.torque_nm, dtype=float)
        if z.shape != (len(thr), len(spd)) or not np.all(np.isfinite(z)):
            raise ParameterError(f"EngineData: torque_nm must be finite with shape (len("
                                 f"throttle), len(speed_rpm)) = {(len(thr), len(spd))}, got "
                                 f"{z.shape}")
        if np.any(np.diff(z, axis=0) < 0):
            i, j = np.argwhere(np.diff(z, axis=0) < 0)[0]
            raise ParameterError(f"EngineData: torque_nm must not decrease with throttle, "
                                 f"but at {spd[j]} rpm it falls from throttle {thr[i]} to "
                                 f"{thr[i + 1]}")
        _check_positive(self, "inertia_kgm2", "idle_rpm", "cutoff_rpm", "cutoff_ramp_rpm")
        _check_nonnegative(self, "idle_gain_per_rad_s")
        if self.cutoff_rpm - self.cutoff_ramp_rpm <= self.idle_rpm:
            raise ParameterError("EngineData: the fuel cut-off ramp must start above idle_rpm")


@dataclass(frozen=True)
class TorqueConverterData:
    """Torque-converter maps (:class:`~blocks.vehicle.powertrain.TorqueConverter`).

    ``capacity_rpm_per_sqrt_nm`` is :math:`K` of :math:`T_p = (n_p/K)^2` (``n_p`` in rpm);
    the last entry may be ``inf`` (no torque at speed ratio 1).
    """

    speed_ratio: tuple = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.87, 0.92, 0.96, 1.0)
    torque_ratio: tuple = (2.0, 1.87, 1.74, 1.61, 1.49, 1.38, 1.27, 1.17, 1.07, 1.0, 1.0, 1.0,
                           1.0)
    capacity_rpm_per_sqrt_nm: tuple = (135.0, 135.0, 136.0, 137.0, 139.0, 142.0, 147.0, 155.0,
                                       170.0, 195.0, 240.0, 350.0, math.inf)

    def __post_init__(self) -> None:
        sr = _increasing(self, "speed_ratio")
        if sr[0] != 0.0 or sr[-1] != 1.0:
            raise ParameterError("TorqueConverterData: speed_ratio must run from 0 to 1")
        tr = np.asarray(self.torque_ratio, dtype=float)
        k = np.asarray(self.capacity_rpm_per_sqrt_nm, dtype=float)
        if tr.shape != (len(sr),) or k.shape != (len(sr),):
            raise ParameterError("TorqueConverterData: torque_ratio and capacity_rpm_per_"
                                 "sqrt_nm need one value per speed_ratio")
        if not (np.all(np.isfinite(tr)) and np.all(tr > 0)):
            raise ParameterError("TorqueConverterData: torque_ratio must be finite and > 0")
        if not (np.all(k > 0) and np.all(np.isfinite(k[:-1])) and not np.isnan(k[-1])):
            raise ParameterError("TorqueConverterData: capacity factors must be > 0 (finite "
                                 "except possibly the last, at speed ratio 1)")


# ------------------------------------------------------------- transmission
_KMH = 1.0 / 3.6


@dataclass(frozen=True)
class TransmissionData:
    """Automatic gearbox, shift schedule and final drive.

    ``upshift_kmh[g]`` (``g = 0..n-2``) is the vehicle speed [km/h] above which gear
    ``g+1`` shifts up to ``g+2``, one value per ``shift_throttle`` breakpoint;
    ``downshift_kmh[g]`` the speed below which gear ``g+2`` shifts down to ``g+1``.  Each
    downshift line must lie below its upshift line (the hysteresis).  Efficiencies are of
    the power entering the gear set (as :class:`blocks.electric.Gearbox`).
    """

    gear_ratios: tuple = (2.80, 1.54, 1.00, 0.70)
    efficiency: float = 0.96
    shift_time_s: float = 0.3
    final_drive_ratio: float = 3.70
    final_drive_efficiency: float = 0.98
    shift_throttle: tuple = (0.0, 0.25, 0.5, 0.75, 1.0)
    upshift_kmh: tuple = ((12.0, 18.0, 30.0, 42.0, 58.0),
                          (25.0, 35.0, 55.0, 80.0, 105.0),
                          (45.0, 55.0, 80.0, 115.0, 150.0))
    downshift_kmh: tuple = ((7.0, 10.0, 18.0, 28.0, 40.0),
                            (18.0, 25.0, 40.0, 60.0, 85.0),
                            (35.0, 42.0, 60.0, 90.0, 120.0))
    shift_period_s: float = 0.04
    min_shift_interval_s: float = 1.0

    def __post_init__(self) -> None:
        r = np.asarray(self.gear_ratios, dtype=float)
        if r.ndim != 1 or r.size < 1 or not np.all(np.isfinite(r)) or np.any(r <= 0):
            raise ParameterError("TransmissionData: gear_ratios must be finite and > 0")
        if np.any(np.diff(r) >= 0):
            raise ParameterError("TransmissionData: gear_ratios must decrease from first to "
                                 f"top gear, got {self.gear_ratios!r}")
        _check_fraction(self, "efficiency", "final_drive_efficiency")
        _check_positive(self, "final_drive_ratio", "shift_period_s")
        _check_nonnegative(self, "shift_time_s", "min_shift_interval_s")
        thr = _increasing(self, "shift_throttle", 1 if len(self.shift_throttle) == 1 else 2)
        want = (r.size - 1, len(thr))
        up = np.asarray(self.upshift_kmh, dtype=float).reshape(-1, len(thr)) \
            if r.size > 1 else np.zeros((0, len(thr)))
        dn = np.asarray(self.downshift_kmh, dtype=float).reshape(-1, len(thr)) \
            if r.size > 1 else np.zeros((0, len(thr)))
        if up.shape != want or dn.shape != want:
            raise ParameterError(f"TransmissionData: upshift_kmh and downshift_kmh need shape "
                                 f"(gears - 1, len(shift_throttle)) = {want}")
        if np.any(dn >= up):
            g, j = np.argwhere(dn >= up)[0]
            raise ParameterError(
                f"TransmissionData: the downshift {g + 2}->{g + 1} at throttle {thr[j]} "
                f"({dn[g, j]} km/h) must lie below the upshift {g + 1}->{g + 2} "
                f"({up[g, j]} km/h): no hysteresis")
        if r.size > 2 and (np.any(np.diff(up, axis=0) <= 0) or np.any(np.diff(dn, axis=0) <= 0)):
            raise ParameterError("TransmissionData: shift speeds must increase with the gear")

    @property
    def n_gears(self) -> int:
        return len(self.gear_ratios)


# ------------------------------------------------------------------- brakes
@dataclass(frozen=True)
class BrakeData:
    """Friction brakes (:class:`~blocks.vehicle.longitudinal.Brake`): total torque at the
    wheels for full pedal, torque per line pressure, actuator lag (0: none)."""

    max_torque_nm: float = 6000.0
    torque_per_pressure_nm_per_pa: float = 6.0e-4
    time_constant_s: float = 0.1

    def __post_init__(self) -> None:
        _check_positive(self, "max_torque_nm", "torque_per_pressure_nm_per_pa")
        _check_nonnegative(self, "time_constant_s")


# ----------------------------------------------------------- electric drive
#: Representative (chosen) traction PMSM for a 400 V compact EV: surface magnets
#: (L_d = L_q), 4 pole pairs, psi_p = 40 mWb (torque constant 0.24 N m/A), R_s = 10 mOhm,
#: 0.1 mH.  With i_d = 0 and 400 V it gives 150 N m up to 767 rad/s and its no-load
#: speed is 1444 rad/s (no field weakening in :mod:`blocks.electric.pmsm`).
TRACTION_PMSM = PMSMParameters(resistance_ohm=0.01, d_inductance_h=1e-4, q_inductance_h=1e-4,
                               pole_pairs=4, flux_linkage_wb=0.04)


@dataclass(frozen=True)
class ElectricDriveData:
    r"""Electric drivetrain (:func:`~blocks.vehicle.electric_drivetrain.ElectricDrivetrain`).

    Torque envelope at motor speed :math:`\omega`: ``min(max_torque_nm, max_power_w /
    omega)``, falling linearly to 0 over the last 5 % below ``max_speed_rad_s``.  With the
    default motor (:data:`TRACTION_PMSM`) and 400 V the envelope lies inside the voltage
    limit up to 1160 rad/s; above, the voltage limit (no field weakening) bounds
    the torque below the envelope.
    """

    motor: PMSMParameters = TRACTION_PMSM
    max_torque_nm: float = 150.0
    max_power_w: float = 80e3
    max_speed_rad_s: float = 1400.0
    reduction_ratio: float = 9.0
    reduction_efficiency: float = 0.97
    rotor_inertia_kgm2: float = 0.05
    dc_voltage_v: float = 400.0
    current_bandwidth_rad_s: float = 1000.0

    def __post_init__(self) -> None:
        if not isinstance(self.motor, PMSMParameters):
            raise ParameterError(f"ElectricDriveData: motor must be a PMSMParameters, got "
                                 f"{type(self.motor).__name__}")
        _check_positive(self, "max_torque_nm", "max_power_w", "max_speed_rad_s",
                        "reduction_ratio", "dc_voltage_v", "current_bandwidth_rad_s")
        _check_fraction(self, "reduction_efficiency")
        _check_nonnegative(self, "rotor_inertia_kgm2")

    def torque_envelope(self, speed: float) -> float:
        """Largest motor torque [N m] at motor speed [rad/s] (symmetric in speed)."""
        w = abs(speed)
        t = self.max_torque_nm if w * self.max_torque_nm <= self.max_power_w \
            else self.max_power_w / w
        w0 = 0.95 * self.max_speed_rad_s
        if w > w0:
            t *= max(0.0, (self.max_speed_rad_s - w) / (self.max_speed_rad_s - w0))
        return t


# ------------------------------------------------------------------ lateral
@dataclass(frozen=True)
class LateralData:
    """Single-track data (:class:`~blocks.vehicle.single_track.SingleTrack`): axle
    distances from the centre of mass, yaw inertia, cornering stiffness per axle."""

    mass_kg: float = 1500.0
    front_axle_m: float = 1.1
    rear_axle_m: float = 1.6
    yaw_inertia_kgm2: float = 2400.0
    front_cornering_stiffness_n_per_rad: float = 100e3
    rear_cornering_stiffness_n_per_rad: float = 120e3
    gravity_m_s2: float = G

    def __post_init__(self) -> None:
        _check_positive(self, "mass_kg", "front_axle_m", "rear_axle_m", "yaw_inertia_kgm2",
                        "front_cornering_stiffness_n_per_rad",
                        "rear_cornering_stiffness_n_per_rad", "gravity_m_s2")

    @property
    def wheelbase_m(self) -> float:
        return self.front_axle_m + self.rear_axle_m

    @property
    def understeer_gradient(self) -> float:
        r""":math:`K_{us} = \frac{m}{L}\left(\frac{l_r}{C_f} - \frac{l_f}{C_r}\right)`
        [rad/(m/s^2)]; > 0 understeer."""
        return self.mass_kg / self.wheelbase_m * (
            self.rear_axle_m / self.front_cornering_stiffness_n_per_rad
            - self.front_axle_m / self.rear_cornering_stiffness_n_per_rad)

    @property
    def characteristic_speed_m_s(self) -> float:
        r""":math:`v_{ch} = \sqrt{L/K_{us}}` (understeer only; ``inf`` otherwise)."""
        k = self.understeer_gradient
        return math.sqrt(self.wheelbase_m / k) if k > 0 else math.inf

    def static_axle_loads_n(self) -> tuple[float, float]:
        """``(front, rear)`` static axle loads."""
        w = self.mass_kg * self.gravity_m_s2 / self.wheelbase_m
        return w * self.rear_axle_m, w * self.front_axle_m


# ----------------------------------------------------------------- half car
@dataclass(frozen=True)
class HalfCarData:
    """Pitch-plane half car (:func:`~blocks.vehicle.half_car.HalfCar`), per axle values.

    Heights are of the equilibrium configuration above flat ground: centre of mass
    ``cg_height_m``, wheel centres ``wheel_radius_m``.
    """

    sprung_mass_kg: float = 1340.0
    pitch_inertia_kgm2: float = 2100.0
    front_axle_m: float = 1.1
    rear_axle_m: float = 1.6
    cg_height_m: float = 0.55
    front_unsprung_kg: float = 80.0
    rear_unsprung_kg: float = 80.0
    wheel_body_inertia_kgm2: float = 0.01
    front_spring_n_per_m: float = 50e3
    rear_spring_n_per_m: float = 40e3
    front_damper_ns_per_m: float = 3800.0
    rear_damper_ns_per_m: float = 2800.0
    front_tyre_n_per_m: float = 400e3
    rear_tyre_n_per_m: float = 400e3
    tyre_damping_ns_per_m: float = 0.0
    wheel_radius_m: float = 0.31
    spring_mount_height_m: float = 0.3
    gravity_m_s2: float = G

    def __post_init__(self) -> None:
        _check_positive(self, "sprung_mass_kg", "pitch_inertia_kgm2", "front_axle_m",
                        "rear_axle_m", "cg_height_m", "front_unsprung_kg", "rear_unsprung_kg",
                        "wheel_body_inertia_kgm2", "front_spring_n_per_m",
                        "rear_spring_n_per_m", "front_tyre_n_per_m", "rear_tyre_n_per_m",
                        "wheel_radius_m", "spring_mount_height_m", "gravity_m_s2")
        _check_nonnegative(self, "front_damper_ns_per_m", "rear_damper_ns_per_m",
                           "tyre_damping_ns_per_m")

    @property
    def wheelbase_m(self) -> float:
        return self.front_axle_m + self.rear_axle_m

    def static_spring_forces_n(self) -> tuple[float, float]:
        """``(front, rear)`` static suspension forces (sprung weight split by the lever)."""
        w = self.sprung_mass_kg * self.gravity_m_s2 / self.wheelbase_m
        return w * self.rear_axle_m, w * self.front_axle_m


# ----------------------------------------------------------------- the car
@dataclass(frozen=True)
class PassengerCar:
    """One of each data set; defaults: the representative car of the module docstring."""

    body: BodyData = field(default_factory=BodyData)
    engine: EngineData = field(default_factory=EngineData)
    torque_converter: TorqueConverterData = field(default_factory=TorqueConverterData)
    transmission: TransmissionData = field(default_factory=TransmissionData)
    brake: BrakeData = field(default_factory=BrakeData)
    electric: ElectricDriveData = field(default_factory=ElectricDriveData)
    lateral: LateralData = field(default_factory=LateralData)
    half_car: HalfCarData = field(default_factory=HalfCarData)

    def __post_init__(self) -> None:
        types = {"body": BodyData, "engine": EngineData,
                 "torque_converter": TorqueConverterData, "transmission": TransmissionData,
                 "brake": BrakeData, "electric": ElectricDriveData, "lateral": LateralData,
                 "half_car": HalfCarData}
        for f in fields(self):
            if not isinstance(getattr(self, f.name), types[f.name]):
                raise ParameterError(f"PassengerCar: {f.name} must be a "
                                     f"{types[f.name].__name__}, got "
                                     f"{type(getattr(self, f.name)).__name__}")


#: The default car (module docstring): representative values, chosen.
PASSENGER_CAR = PassengerCar()

KMH = _KMH
