r"""Parameters of the gantry crane (seed Paper V): a ship-to-shore container crane.

The seed gives no numerical values ("unknown parameters were set with the expertise of the
operators"), so :data:`STS_CRANE` is a plausible Panamax ship-to-shore (STS) crane with the
hoist machinery on the trolley, chosen from published orders of magnitude (below).
Coordinates as in the seed: global X along the gantry rails (trolley travel, positive
seaward), Y up, Z along the pier rails (gantry travel); gravity :math:`-g\,e_Y`.  The
spreader's long axis is Z (containers are stowed fore-and-aft, the quay is parallel to the
ship).

Parameter table (:data:`STS_CRANE`)
-----------------------------------
=================================  ===========  =============================================
quantity                           value        justification
=================================  ===========  =============================================
gantry mass (without trolley)      500 t        Panamax STS cranes weigh 600-900 t in all;
                                                the travelling part without the trolley
trolley mass                       35 t         machinery-on-trolley (hoist drums and motors
                                                ride on it): 30-60 t; rope trolleys 20-30 t
trolley vertical stiffness k_y     1.2e7 N/m    girder/boom vertical flexibility: 6 cm static
                                                deflection under trolley + 40 t, first
                                                vertical mode of the loaded boom ~2 Hz
trolley vertical damping c_y       6.5e4 N s/m  5 % of critical for the trolley alone
trolley rest height (sheaves)      42 m         lift height above the quay 35-45 m
spreader                           10 t, 2.438 telescopic 20/40 ft spreader 9-11 t, set to
                                   x 1.0 x      40 ft; box inertia about its centre
                                   12.192 m
container (optional)               30 t gross,  ISO 1AA 40 ft, max gross 30.48 t; uniform box
                                   2.438 x      (centre of mass at the geometric centre
                                   2.591 x      unless an offset is given)
                                   12.192 m
ropes                              4, EA =      28 mm 6-strand wire rope: metallic area
                                   3.5e7 N      0.58 pi d^2/4 = 3.6e-4 m^2, rope modulus
                                   each         ~100 GPa; stiffness k = EA / l0
rope damping                       c = 0.003 s  material damping of a few % of critical in
                                   x k          the bounce modes (0.003 s gives 1.6-5 %)
sheave / attachment half spacing   1.0 x 2.5 m  headblock 2 m x 5 m; the 4 ropes vertical
                                                (parallel) as default
two-block limit                    1.0 m        minimum unstretched rope length (the
                                                hoist's upper limit switch)
gantry drive                       4 x 55 kW    0.75 m/s (45 m/min) at 1500 rpm: i = 4.77e-3
                                                m/rad; 525 N m (150 %) to base speed, then
                                                constant power; rotor + brake 0.4 kg m^2
trolley drive                      4 x 45 kW    3 m/s (180 m/min) at 1500 rpm: i = 1.91e-2
                                                m/rad; 570 N m (200 %), rotor 0.3 kg m^2
hoist drive                        4 x 132 kW   1 m/s loaded at 1500 rpm, 2 m/s empty in
                                                field weakening (3000 rpm): i = 6.37e-3
                                                m/rad; 1500 N m (180 %), rotor + brake
                                                1.5 kg m^2, drum 2 t equivalent mass
speed controllers                  K_m, tau_m   P speed loops (seed eq. 23): gantry K = 18,
                                                trolley 15 N m s/rad, closed-loop time
                                                constants ~0.2-0.3 s, tau_m = 20 ms; hoist K =
                                                200 (it holds the load: droop 2.2 cm/s at 40
                                                t, 5.5 mm/s empty), a ~10 ms loop with tau_m
                                                = 10 ms (0.46 of critical damping)
guide arms (flippers)              6, 1.2 m,    flipper arms of ~150 kg, hydraulic rotary
                                   60 kg m^2    actuators, 3 kN m; a stiff PD (K = 2e4 N
                                                m/rad, 0.8 of critical damping) that
                                                saturates beyond 0.15 rad, so the arm presses
                                                nearly with its full torque like a pressure-
                                                controlled actuator; up-down in ~2 s
wind drag                          C_d = 1.2    bluff box; rho = 1.225 kg/m^3; no wind by
                                                default (still-air drag only)
=================================  ===========  =============================================

Every number can be changed with :func:`dataclasses.replace`; the block validates them
(:func:`validate`) and names the bad one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from cosim.errors import ParameterError

#: 1500 rpm, the base speed of a 4-pole motor on a 50 Hz grid [rad/s].
BASE_SPEED_RAD_S = 1500.0 * 2.0 * math.pi / 60.0


@dataclass(frozen=True)
class DriveParameters:
    """One crane drive: ``motors`` synchronised motors behind a P speed controller (seed eqs.
    21-23, :class:`~blocks.electric.CraneDrive`) and the transmission to the axis.

    ``travel_per_rad_m`` is :math:`i_{tot}` (travel of the axis per motor radian, wheel or
    drum radius included); ``motor_inertia_kgm2`` (rotor, brake disc, coupling, per motor)
    and ``extra_mass_kg`` (drum or wheel inertia over radius squared) give the mass the
    drive train adds to its axis, :math:`n J_m / i_{tot}^2 + m_x`.
    """

    travel_per_rad_m: float
    curve_speed_rad_s: tuple
    curve_torque_nm: tuple
    gain_nms_per_rad: float
    time_constant_s: float
    motor_inertia_kgm2: float
    motors: int = 4
    efficiency: float = 0.9
    damping_ns_per_rad: float = 0.0
    extra_mass_kg: float = 0.0

    @property
    def equivalent_mass_kg(self) -> float:
        """Mass of the drive train reflected to the axis [kg]."""
        return self.motors * self.motor_inertia_kgm2 / self.travel_per_rad_m ** 2 \
            + self.extra_mass_kg

    @property
    def max_force_n(self) -> float:
        """Largest axis force of all motors at standstill, :math:`n \\eta T_{max}(0)/i`."""
        return self.motors * self.efficiency * float(self.curve_torque_nm[0]) \
            / self.travel_per_rad_m


@dataclass(frozen=True)
class ContainerLoad:
    """A container locked to the spreader (twistlocks), hanging below it.

    ``size_m`` = (width along X, height, length along Z); ``com_offset_m`` is the centre of
    mass relative to the container's geometric centre (eccentric cargo), body axes.
    """

    mass_kg: float = 30.0e3
    size_m: tuple = (2.438, 2.591, 12.192)
    com_offset_m: tuple = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class TargetContainer:
    """The container below the spreader (on the quay, a chassis or a ship's stack) that the
    guide arms land on: axis-aligned box, top face at ``top_m``."""

    center_x_m: float
    center_z_m: float
    top_m: float
    width_m: float = 2.438
    length_m: float = 12.192


@dataclass(frozen=True)
class GuideArmParameters:
    r"""The spreader's 6 guide arms (flippers), seed Paper V.

    Arm angle :math:`\theta` from the outward horizontal, +pi/2 up (against the upper stop
    bar), -pi/2 down (hanging outside the container faces).  Arms 1-4 sit on the long
    sides (1, 2 at +X, 3, 4 at -X, ``corner_inset_m`` from the ends) and guide in X; arms 5
    and 6 on the ends (+Z, -Z) and guide in Z; their hinges are at the spreader's bottom,
    ``hinge_gap_m`` outside its outline.
    """

    length_m: float = 1.2
    inertia_kgm2: float = 60.0
    gain_nm_per_rad: float = 20000.0
    damping_nms_per_rad: float = 1750.0
    torque_max_nm: float = 3000.0
    up_angle_rad: float = math.pi / 2
    down_angle_rad: float = -math.pi / 2
    stop_stiffness_nm_per_rad: float = 1.0e5
    stop_damping_nms_per_rad: float = 2500.0
    contact_stiffness_nm_per_rad: float = 1.0e5
    contact_damping_nms_per_rad: float = 2000.0
    hinge_gap_m: float = 0.1
    corner_inset_m: float = 1.0


@dataclass(frozen=True)
class GantryCraneParameters:
    """All parameters of :class:`~blocks.cranes.gantry.GantryCrane` (see module docstring)."""

    gravity_m_s2: float = 9.81
    gantry_mass_kg: float = 500.0e3
    trolley_mass_kg: float = 35.0e3
    trolley_vertical_stiffness_n_m: float = 1.2e7
    trolley_vertical_damping_ns_m: float = 6.5e4
    trolley_rest_height_m: float = 42.0
    sheave_half_spacing_m: tuple = (1.0, 2.5)
    spreader_mass_kg: float = 10.0e3
    spreader_size_m: tuple = (2.438, 1.0, 12.192)
    attachment_half_spacing_m: tuple = (1.0, 2.5)
    rope_axial_stiffness_n: float = 3.5e7
    rope_damping_time_s: float = 0.003
    min_rope_length_m: float = 1.0
    container: ContainerLoad | None = None
    target: TargetContainer | None = None
    ground_level_m: float = 0.0
    air_density_kg_m3: float = 1.225
    drag_coefficient: float = 1.2
    wind_velocity_m_s: tuple = (0.0, 0.0, 0.0)
    quaternion_stabilization_per_s: float = 10.0
    gantry_drive: DriveParameters = field(default_factory=lambda: GANTRY_DRIVE)
    trolley_drive: DriveParameters = field(default_factory=lambda: TROLLEY_DRIVE)
    hoist_drive: DriveParameters = field(default_factory=lambda: HOIST_DRIVE)
    arms: GuideArmParameters = field(default_factory=GuideArmParameters)


def _curve(rated_torque_nm: float, overload: float, top_speed_rad_s: float) -> tuple:
    """Constant torque ``overload * rated`` to base speed, then constant power."""
    t0 = overload * rated_torque_nm
    speeds = np.linspace(BASE_SPEED_RAD_S, top_speed_rad_s, 5)
    return ((0.0, *map(float, speeds)),
            (t0, *(float(t0 * BASE_SPEED_RAD_S / w) for w in speeds)))


_GW, _GT = _curve(350.0, 1.5, 1.25 * BASE_SPEED_RAD_S)
_TW, _TT = _curve(286.0, 2.0, 1.25 * BASE_SPEED_RAD_S)
_HW, _HT = _curve(833.0, 1.8, 2.1 * BASE_SPEED_RAD_S)

#: 4 x 55 kW, 0.75 m/s at 1500 rpm.
GANTRY_DRIVE = DriveParameters(travel_per_rad_m=0.75 / BASE_SPEED_RAD_S, curve_speed_rad_s=_GW,
                               curve_torque_nm=_GT, gain_nms_per_rad=18.0,
                               time_constant_s=0.02, motor_inertia_kgm2=0.4)
#: 4 x 45 kW, 3 m/s at 1500 rpm.
TROLLEY_DRIVE = DriveParameters(travel_per_rad_m=3.0 / BASE_SPEED_RAD_S, curve_speed_rad_s=_TW,
                                curve_torque_nm=_TT, gain_nms_per_rad=15.0,
                                time_constant_s=0.02, motor_inertia_kgm2=0.3)
#: 4 x 132 kW, 1 m/s loaded at 1500 rpm, 2 m/s empty (field weakening).
HOIST_DRIVE = DriveParameters(travel_per_rad_m=1.0 / BASE_SPEED_RAD_S, curve_speed_rad_s=_HW,
                              curve_torque_nm=_HT, gain_nms_per_rad=200.0,
                              time_constant_s=0.01, motor_inertia_kgm2=1.5,
                              extra_mass_kg=2000.0)

#: The default crane (empty spreader, no target container).
STS_CRANE = GantryCraneParameters()


# ------------------------------------------------------------------ validation
def _positive(owner: str, name: str, value: Any, unit: str, allow_zero: bool = False) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and \
        math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        raise ParameterError(f"{owner}: parameter '{name}' must be a finite number "
                             f"{'>= 0' if allow_zero else '> 0'}, got {value!r} {unit}".rstrip())


def _vector(owner: str, name: str, value: Any, n: int, positive: bool = False) -> tuple:
    try:
        v = tuple(float(a) for a in value)
    except (TypeError, ValueError):
        raise ParameterError(f"{owner}: parameter '{name}' must be {n} numbers, got "
                             f"{value!r}") from None
    if len(v) != n or not all(math.isfinite(a) for a in v) or (positive and min(v) <= 0):
        raise ParameterError(f"{owner}: parameter '{name}' must be {n} finite numbers"
                             f"{' > 0' if positive else ''}, got {value!r}")
    return v


def validate(p: GantryCraneParameters, owner: str = "GantryCrane") -> None:
    """Raise :class:`~cosim.errors.ParameterError` naming ``owner`` and the bad parameter."""
    if not isinstance(p, GantryCraneParameters):
        raise ParameterError(f"{owner}: params must be a GantryCraneParameters, got "
                             f"{type(p).__name__}")
    for name, unit in (("gravity_m_s2", "m/s^2"), ("gantry_mass_kg", "kg"),
                       ("trolley_mass_kg", "kg"), ("trolley_vertical_stiffness_n_m", "N/m"),
                       ("spreader_mass_kg", "kg"), ("rope_axial_stiffness_n", "N"),
                       ("min_rope_length_m", "m")):
        _positive(owner, name, getattr(p, name), unit)
    for name, unit in (("trolley_vertical_damping_ns_m", "N*s/m"),
                       ("rope_damping_time_s", "s"), ("air_density_kg_m3", "kg/m^3"),
                       ("drag_coefficient", ""), ("quaternion_stabilization_per_s", "1/s")):
        _positive(owner, name, getattr(p, name), unit, allow_zero=True)
    for name in ("trolley_rest_height_m", "ground_level_m"):
        v = getattr(p, name)
        if not (isinstance(v, (int, float)) and math.isfinite(v)):
            raise ParameterError(f"{owner}: parameter '{name}' must be a finite number, "
                                 f"got {v!r}")
    _vector(owner, "sheave_half_spacing_m", p.sheave_half_spacing_m, 2, positive=True)
    _vector(owner, "attachment_half_spacing_m", p.attachment_half_spacing_m, 2, positive=True)
    _vector(owner, "spreader_size_m", p.spreader_size_m, 3, positive=True)
    _vector(owner, "wind_velocity_m_s", p.wind_velocity_m_s, 3)
    if p.container is not None:
        c = p.container
        if not isinstance(c, ContainerLoad):
            raise ParameterError(f"{owner}: parameter 'container' must be a ContainerLoad or "
                                 f"None, got {type(c).__name__}")
        _positive(owner, "container.mass_kg", c.mass_kg, "kg")
        _vector(owner, "container.size_m", c.size_m, 3, positive=True)
        off = _vector(owner, "container.com_offset_m", c.com_offset_m, 3)
        if any(abs(o) > s / 2 for o, s in zip(off, c.size_m)):
            raise ParameterError(f"{owner}: parameter 'container.com_offset_m' {off} puts the "
                                 f"centre of mass outside the container {tuple(c.size_m)}")
    if p.target is not None:
        t = p.target
        if not isinstance(t, TargetContainer):
            raise ParameterError(f"{owner}: parameter 'target' must be a TargetContainer or "
                                 f"None, got {type(t).__name__}")
        for name in ("center_x_m", "center_z_m", "top_m"):
            v = getattr(t, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v)):
                raise ParameterError(f"{owner}: parameter 'target.{name}' must be a finite "
                                     f"number, got {v!r}")
        _positive(owner, "target.width_m", t.width_m, "m")
        _positive(owner, "target.length_m", t.length_m, "m")
        if t.top_m <= p.ground_level_m:
            raise ParameterError(f"{owner}: parameter 'target.top_m' = {t.top_m!r} m must be "
                                 f"above the ground level {p.ground_level_m!r} m")
    for axis in ("gantry", "trolley", "hoist"):
        _validate_drive(owner, f"{axis}_drive", getattr(p, f"{axis}_drive"))
    _validate_arms(owner, p.arms)


def _validate_drive(owner: str, name: str, d: Any) -> None:
    if not isinstance(d, DriveParameters):
        raise ParameterError(f"{owner}: parameter '{name}' must be a DriveParameters, got "
                             f"{type(d).__name__}")
    for f in ("travel_per_rad_m", "gain_nms_per_rad", "time_constant_s"):
        _positive(owner, f"{name}.{f}", getattr(d, f), "")
    for f in ("motor_inertia_kgm2", "damping_ns_per_rad", "extra_mass_kg"):
        _positive(owner, f"{name}.{f}", getattr(d, f), "", allow_zero=True)
    if not 0 < d.efficiency <= 1:
        raise ParameterError(f"{owner}: parameter '{name}.efficiency' must be in (0, 1], got "
                             f"{d.efficiency!r}")
    if isinstance(d.motors, bool) or not isinstance(d.motors, int) or d.motors < 1:
        raise ParameterError(f"{owner}: parameter '{name}.motors' must be an int >= 1, got "
                             f"{d.motors!r}")


def _validate_arms(owner: str, a: Any) -> None:
    if not isinstance(a, GuideArmParameters):
        raise ParameterError(f"{owner}: parameter 'arms' must be a GuideArmParameters, got "
                             f"{type(a).__name__}")
    for f in fields(a):
        v = getattr(a, f.name)
        if f.name.endswith("_rad"):
            if not (isinstance(v, (int, float)) and math.isfinite(v)):
                raise ParameterError(f"{owner}: parameter 'arms.{f.name}' must be finite, "
                                     f"got {v!r}")
            continue
        zero_ok = "damping" in f.name or f.name == "hinge_gap_m" or f.name == "corner_inset_m"
        _positive(owner, f"arms.{f.name}", v, "", allow_zero=zero_ok)
    if not a.down_angle_rad < a.up_angle_rad:
        raise ParameterError(f"{owner}: parameters 'arms.down_angle_rad' "
                             f"({a.down_angle_rad!r}) must be below 'arms.up_angle_rad' "
                             f"({a.up_angle_rad!r})")


# --------------------------------------------------------- derived rigid body
def box_inertia(mass: float, size: Any) -> np.ndarray:
    """Inertia of a uniform box about its centre, ``size`` = (x, y, z) edge lengths."""
    a, b, c = size
    return mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def _shift(mass: float, d: np.ndarray) -> np.ndarray:
    """Parallel-axis term ``m (|d|^2 I - d d^T)``."""
    return mass * (float(d @ d) * np.eye(3) - np.outer(d, d))


@dataclass(frozen=True)
class SuspendedBody:
    """The spreader with its container as one rigid body, in the body frame whose origin is
    the composite centre of mass (axes parallel to the spreader's).

    ``com_in_spreader`` is that origin relative to the spreader's geometric centre;
    ``attachments`` the rope attachment points (4 x 3), ``hinges`` and ``outward`` the arm
    hinge points and outward axes (6 x 3), ``bottom_center`` the centre of the lowest face
    and ``bottom_half`` its half extents (x, z), ``areas`` the projected areas normal to
    X, Y, Z for the wind drag.
    """

    mass: float
    inertia: np.ndarray
    com_in_spreader: np.ndarray
    attachments: np.ndarray
    hinges: np.ndarray
    outward: np.ndarray
    bottom_center: tuple
    bottom_half: tuple
    areas: tuple


#: Rope order: (+x, +z), (+x, -z), (-x, +z), (-x, -z) half spacings.
ROPE_SIGNS = ((1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0))


def suspended_body(p: GantryCraneParameters) -> SuspendedBody:
    """Mass, centre of mass, inertia and body points of spreader + container."""
    ws, hs, ls = p.spreader_size_m
    ms = p.spreader_mass_kg
    m = ms
    J_s = box_inertia(ms, p.spreader_size_m)
    com = np.zeros(3)
    bottom_y = -hs / 2
    bx, bz = ws / 2, ls / 2
    ax_, ay_, az_ = hs * ls, ws * ls, ws * hs
    J = J_s
    if p.container is not None:
        c = p.container
        wc, hc, lc = c.size_m
        cc = np.array([0.0, -hs / 2 - hc / 2, 0.0]) + np.asarray(c.com_offset_m, float)
        m = ms + c.mass_kg
        com = c.mass_kg * cc / m
        J = J_s + _shift(ms, -com) + box_inertia(c.mass_kg, c.size_m) + _shift(c.mass_kg,
                                                                               cc - com)
        bottom_y = -hs / 2 - hc
        bx, bz = max(bx, wc / 2), max(bz, lc / 2)
        ax_, ay_, az_ = ax_ + hc * lc, max(ay_, wc * lc), az_ + wc * hc
    a = p.arms
    sx, sz = p.attachment_half_spacing_m
    att = np.array([[s1 * sx, hs / 2, s2 * sz] for s1, s2 in ROPE_SIGNS]) - com
    xh, zh, yh = ws / 2 + a.hinge_gap_m, ls / 2 - a.corner_inset_m, -hs / 2
    hinges = np.array([[xh, yh, zh], [xh, yh, -zh], [-xh, yh, zh], [-xh, yh, -zh],
                       [0.0, yh, ls / 2 + a.hinge_gap_m], [0.0, yh, -ls / 2 - a.hinge_gap_m]])
    outward = np.array([[1.0, 0, 0], [1.0, 0, 0], [-1.0, 0, 0], [-1.0, 0, 0], [0, 0, 1.0],
                        [0, 0, -1.0]])
    bottom = (-float(com[0]), float(bottom_y - com[1]), -float(com[2]))
    return SuspendedBody(m, J, com, att, hinges - com, outward, bottom, (bx, bz),
                         (ax_, ay_, az_))
