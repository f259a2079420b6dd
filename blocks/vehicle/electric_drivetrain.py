r"""Electric drivetrain: accelerator map, field-oriented PMSM drive, reduction gear.

Built from the electric-drive blocks: :func:`blocks.electric.PMSMDrive` (torque reference
to currents with :math:`i_d^* = 0`, PI current control with decoupling, averaged inverter,
dq machine) and :class:`blocks.electric.Gearbox` (ratio and power-flow efficiency)::

    throttle -> [pedal: AcceleratorMap] -T*-> [drive: PMSMDrive] -T-> [reduction: Gearbox]
                     ^ motor speed                ^ speed, u_dc          |-> wheel_torque
                     +------------- reduction.speed_in <---- wheel_speed +

.. math::

    T^* = \mathrm{clip}(\alpha, 0, 1)\; T_{env}(\omega_m), \qquad
    T_{env} = \min(T_{max}, P_{max}/|\omega_m|)\ (\text{to 0 near } \omega_{max}), \qquad
    \omega_m = i\,\omega_w

and the wheel torque :math:`T_w = i\,T\,f(P)` of the gearbox.  The motor has no inertia
of its own here (``PMSM`` without ``inertia_kgm2``): its rotor spins with the wheels, so
:math:`J_r i^2` belongs to the vehicle's equivalent mass (:func:`ElectricVehicle` adds it).
In steady state the PI current loops make the motor torque equal to :math:`T^*` (as long
as the voltage is not limited), so the steady speed solves
:math:`T^*(i v/r)\, i\,\eta / r = \tfrac12\rho C_d A v^2 + f_r m g` (tested).

Limitations: the current loops (bandwidth ``current_bandwidth_rad_s``, 1000 rad/s by
default) make the model stiff for a fixed step: AB3 needs :math:`h\,\omega_c < 0.55`
(0.5 ms), so use ``rk45`` (or ``radau``) for it, not the seed's 8 ms; no regenerative
braking from the pedal (negative torque only when the throttle map gives it: never), no
field weakening (above 1160 rad/s the voltage limit, not the envelope, bounds the
torque), an ideal DC link of constant voltage (the DC current is an output; a
:class:`blocks.electric.Battery` on it would close an algebraic loop through
:math:`u_{dc}`), no inverter or copper losses in the efficiency (the gearbox's only).
"""

from __future__ import annotations

from typing import Any

from blocks.electric import Gearbox, PMSMDrive
from blocks.sources import Constant
from cosim.block import Block
from cosim.codegen.model import CContext, CModel, c_float
from cosim.diagram import Diagram, DiagramBuilder
from cosim.errors import ParameterError

from . import _cforms
from .params import PASSENGER_CAR, ElectricDriveData

__all__ = ["AcceleratorMap", "ElectricDrivetrain"]


def _data(owner: str, params: Any) -> ElectricDriveData:
    p = PASSENGER_CAR.electric if params is None else params
    if not isinstance(p, ElectricDriveData):
        raise ParameterError(f"{owner}: params must be an ElectricDriveData, got "
                             f"{type(p).__name__}")
    return p


class AcceleratorMap(Block):
    r"""Accelerator pedal to motor torque reference, :math:`T^* = \alpha\,T_{env}(\omega_m)`.

    Ports
    -----
    in   throttle     scalar [1]    pedal 0..1 (clipped)
    in   motor_speed  scalar [rad/s]
    out  torque_ref   scalar [N*m]  reads both

    Parameters
    ----------
    params : ElectricDriveData, optional
        Its torque envelope :math:`T_{env}(\omega_m)` (default: the electric car's drive).
    """

    def __init__(self, name: str, params: ElectricDriveData | None = None) -> None:
        super().__init__(name)
        self.params = _data(f"AcceleratorMap '{name}'", params)
        self.throttle = self.declare_input("throttle", unit="1")
        self.motor_speed = self.declare_input("motor_speed", unit="rad/s")
        self.torque_ref = self.declare_output(
            "torque_ref", lambda ctx: self.torque(ctx.input(self.throttle),
                                                  ctx.input(self.motor_speed)), unit="N*m")

    def torque(self, throttle: float, speed: float) -> float:
        return min(max(throttle, 0.0), 1.0) * self.params.torque_envelope(speed)

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`torque` with :meth:`ElectricDriveData.torque_envelope` (the
        envelope's data as constants)."""
        p = self.params
        t_max, p_max = c_float(p.max_torque_nm), c_float(p.max_power_w)
        w0 = 0.95 * p.max_speed_rad_s
        code = (f"double w = fabs({cg.u(self.motor_speed)}), thr = {cg.u(self.throttle)}, "
                "t, a;\n"
                f"t = (w * {t_max} <= {p_max}) ? {t_max} : {p_max} / w;\n"
                f"if (w > {c_float(w0)}) {{\n"
                f"    double q = ({c_float(p.max_speed_rad_s)} - w) / "
                f"{c_float(p.max_speed_rad_s - w0)};\n"
                "    t = t * ((q > 0.0) ? q : 0.0);\n}\n"
                + _cforms.clip("thr", "0.0", "1.0", "a")
                + f"\n{cg.y(self.torque_ref)} = a * t;")
        return CModel(outputs=_cforms.scoped({"torque_ref": code}))


def ElectricDrivetrain(name: str, params: ElectricDriveData | None = None, *,  # noqa: N802
                       smoothing_power_w: float = 100.0) -> Diagram:
    r"""The electric drivetrain of the module docstring, as a frozen diagram.

    Ports
    -----
    in   throttle      scalar [1]    accelerator pedal 0..1
    in   wheel_speed   scalar [rad/s]  from the vehicle
    out  wheel_torque  scalar [N*m]  total drive torque at the wheels
    out  motor_speed   scalar [rad/s]  :math:`i\,\omega_w`
    out  motor_torque  scalar [N*m]  electromagnetic torque; state only
    out  torque_ref    scalar [N*m]  :math:`T^*`
    out  i_dc          scalar [A]    DC-link current (lossless inverter)

    Blocks: ``pedal``, ``drive`` (the :func:`blocks.electric.PMSMDrive` diagram),
    ``u_dc`` (a Constant), ``reduction``.

    Parameters
    ----------
    name : str
    params : ElectricDriveData
        Default: the passenger car's.
    smoothing_power_w : float
        Efficiency blend of the reduction gear (:class:`blocks.electric.Gearbox`).
    """

    p = _data(f"ElectricDrivetrain '{name}'", params)
    kt = 1.5 * p.motor.pole_pairs * p.motor.flux_linkage_wb
    b = DiagramBuilder(name)
    pedal = b.add(AcceleratorMap("pedal", p))
    drive = b.add(PMSMDrive("drive", p.motor, bandwidth_rad_s=p.current_bandwidth_rad_s,
                            current_limit_a=1.05 * p.max_torque_nm / kt))
    u_dc = b.add(Constant("u_dc", p.dc_voltage_v, unit="V"))
    red = b.add(Gearbox("reduction", ratio=p.reduction_ratio, efficiency=p.reduction_efficiency,
                        smoothing_power_w=smoothing_power_w))
    b.connect(u_dc.y, drive.input("u_dc"))
    b.connect(pedal.torque_ref, drive.input("torque_ref"))
    b.connect(drive.output("torque"), red.torque_in)
    b.connect(red.speed_in, drive.input("speed"))
    b.connect(red.speed_in, pedal.motor_speed)
    b.export_input(pedal.throttle, "throttle")
    b.export_input(red.speed_out, "wheel_speed")
    b.export_output(red.torque_out, "wheel_torque")
    b.export_output(red.speed_in, "motor_speed")
    b.export_output(drive.output("torque"), "motor_torque")
    b.export_output(pedal.torque_ref, "torque_ref")
    b.export_output(drive.output("i_dc"), "i_dc")
    return b.build(loops="error")
