r"""The crane's three drives (gantry, trolley, hoist) as :class:`~blocks.electric.CraneDrive`
blocks built from :class:`~blocks.cranes.parameters.DriveParameters`.

Each drive is the seed's (Paper V eqs. 21-23): ``motors`` (4) mechanically synchronised
motors, a first-order P speed controller and a torque-speed curve,

.. math::

    \tau_m \dot T_{ref} = K_m(\omega_{ref} - \omega_m) - T_{ref}, \quad
    T_m = \mathrm{sign}(T_{ref})\min(|T_{ref}|, T_{max}(|\omega_m|)), \quad
    F = n\,(T_m \eta / i_{tot} - c_m \omega_m).

They stay separate blocks connected through ports (``speed`` from the crane's
``<axis>_motor_speed``, ``speed_ref`` from its ``<axis>_speed_ref``, ``force`` to its
``<axis>_force``), so one can be swapped for another drive model.  Evaluating them inside
the crane block was measured at only ~10 % faster (the diagram runs 25-40x real time at
the seed's 5 ms RK4 step either way, ``bench/crane.py``), not worth a second code path.
"""

from __future__ import annotations

from blocks.electric import CraneDrive

from .parameters import STS_CRANE, DriveParameters, GantryCraneParameters

AXES = ("gantry", "trolley", "hoist")


def make_drive(name: str, d: DriveParameters, hold_force_n: float = 0.0) -> CraneDrive:
    """A :class:`CraneDrive` for one axis; ``hold_force_n``: the axis force at rest at the
    start (the controller's initial :math:`T_{ref} = F i_{tot} / (n \\eta)`)."""
    t0 = hold_force_n * d.travel_per_rad_m / (d.motors * d.efficiency)
    return CraneDrive(name, gain_nms_per_rad=d.gain_nms_per_rad,
                      time_constant_s=d.time_constant_s,
                      curve_speed_rad_s=list(d.curve_speed_rad_s),
                      curve_torque_nm=list(d.curve_torque_nm),
                      travel_per_rad_m=d.travel_per_rad_m, efficiency=d.efficiency,
                      damping_ns_per_rad=d.damping_ns_per_rad, motors=d.motors,
                      torque_ref0_nm=t0)


def make_drives(params: GantryCraneParameters = STS_CRANE,
                hold: dict | None = None) -> dict[str, CraneDrive]:
    """``{"gantry": ..., "trolley": ..., "hoist": ...}`` drives named ``<axis>_drive``.

    ``hold``: the ``report`` of :func:`~blocks.cranes.gantry.equilibrium` (holding forces),
    so the controllers start at the static load (the hoist holds the spreader).
    """
    hold = hold or {}
    return {axis: make_drive(f"{axis}_drive", getattr(params, f"{axis}_drive"),
                             float(hold.get(f"{axis}_force", 0.0))) for axis in AXES}


def connect_drives(builder, crane, drives: dict) -> None:
    """Wire the drives to the crane: speed, speed reference and force of each axis."""
    for axis in AXES:
        d = drives[axis]
        builder.connect(getattr(crane, f"{axis}_motor_speed"), d.speed)
        builder.connect(getattr(crane, f"{axis}_speed_ref"), d.speed_ref)
        builder.connect(d.force, getattr(crane, f"{axis}_force"))
