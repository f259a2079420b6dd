r"""Complete longitudinal vehicles: conventional (engine, converter, automatic) and electric.

Conventional (the structure of the ACC seed, Kim et al.: engine, torque converter,
automatic transmission, brake)::

    speeds:   vehicle.wheel_speed -> final_drive -> gearbox -> converter.turbine_speed
              engine.speed -> converter.pump_speed
    torques:  converter.pump_torque -> engine.load_torque
              converter.turbine_torque -> gearbox -> final_drive -> vehicle.drive_torque
    control:  throttle -> engine, tcu;  vehicle.v -> tcu -> gear -> gearbox
              brake request -> brake -> vehicle.brake_torque

Signal flow: speeds go from the vehicle's state up to the converter's turbine, torques
from the engine's state down to the wheels, so there is no algebraic loop; the only
sampled block is the TCU (40 ms).  States: engine speed, gearbox ratio (with a shift
time), brake torque (with a lag), vehicle position and speed.  With the default car all
of them are slow enough for the seed's AB3 at 8 ms (tested against RK45).  A gear change
is a jump of the right-hand side at a sample hit; the gear is an integer output that the
derivatives read, so the simulator restarts AB3's history there (``multistep_restart=
"modes"``, its default): measured on a drive cycle against RK45, 0.0033 m/s and 0.67 rad/s
of engine speed at most at 8 ms, shrinking like :math:`h^3` (without the restart the
steps after a shift extrapolated stale derivatives: 0.071 m/s and 19 rad/s, like
:math:`h^2`).

Electric: :func:`~.electric_drivetrain.ElectricDrivetrain` instead of engine,
converter and gearbox; the rotor inertia :math:`J_r i^2` is added to the vehicle's
equivalent mass.  Stiff (current loops): use ``rk45``.

Limitations: those of the blocks (see their modules): point-mass vehicle on rigid
tyres, quasi-static converter without lock-up, no shift dynamics, no regenerative
braking.
"""

from __future__ import annotations

from typing import Any

from cosim.diagram import Diagram, DiagramBuilder
from cosim.errors import ParameterError

from .electric_drivetrain import ElectricDrivetrain
from .longitudinal import Brake, LongitudinalVehicle
from .params import PASSENGER_CAR, PassengerCar
from .powertrain import Engine, TorqueConverter
from .transmission import AutomaticGearbox, FinalDrive, ShiftSchedule

__all__ = ["ConventionalVehicle", "ElectricVehicle"]


def _car(owner: str, car: Any) -> PassengerCar:
    c = PASSENGER_CAR if car is None else car
    if not isinstance(c, PassengerCar):
        raise ParameterError(f"{owner}: car must be a PassengerCar, got {type(c).__name__}")
    return c


def _add_body(b: DiagramBuilder, c: PassengerCar, brake_mode: str, grade_input: bool,
              vehicle_kw: dict, extra_inertia: float = 0.0) -> tuple:
    brk = b.add(Brake("brake", c.brake, mode=brake_mode))
    veh = b.add(LongitudinalVehicle("vehicle", c.body, grade_input=grade_input,
                                    extra_inertia_kgm2=extra_inertia, **vehicle_kw))
    b.connect(brk.torque, veh.brake_torque)
    b.export_input(brk.request, brk.request.name)
    if grade_input:
        b.export_input(veh.grade_in, "grade")
    for port in ("x", "v", "a", "wheel_speed"):
        b.export_output(veh.output(port), port)
    b.export_output(brk.torque, "brake_torque")
    return brk, veh


def ConventionalVehicle(name: str, car: PassengerCar | None = None, *,  # noqa: N802
                        brake_mode: str = "torque", grade_input: bool = False,
                        initial_gear: int = 1, engine_speed0_rad_s: float | None = None,
                        **vehicle_kw: Any) -> Diagram:
    r"""The conventional car of the module docstring, as a frozen diagram.

    Ports
    -----
    in   throttle        scalar [1]    0..1 (engine and TCU)
    in   torque_request  scalar [N*m]  brake request (``brake_mode="torque"``; ``pedal``
                                        [1] for "pedal", ``pressure`` [Pa] for "pressure")
    in   grade           scalar [rad]  only with ``grade_input=True``
    out  x, v, a         scalar  m, m/s, m/s^2  vehicle position, speed, acceleration
    out  wheel_speed     scalar [rad/s]
    out  engine_speed    scalar [rad/s]
    out  engine_torque   scalar [N*m]  map torque
    out  gear            scalar [1]    selected gear (int)
    out  gear_ratio      scalar [1]    effective gearbox ratio :math:`i_g` (engine side /
                                        output shaft, follows the gear with the shift lag)
    out  speed_ratio     scalar [1]    converter speed ratio
    out  drive_torque    scalar [N*m]  total drive torque at the wheels
    out  brake_torque    scalar [N*m]

    Blocks: ``engine``, ``converter``, ``tcu``, ``gearbox``, ``final_drive``, ``brake``,
    ``vehicle``; recorded paths are ``"<name>/vehicle.v"`` etc.  ``vehicle_kw`` go to
    :class:`~.longitudinal.LongitudinalVehicle` (``v0_m_s``, ``x0_m``, ``grade_rad``,
    ``standstill_time_constant_s``).
    """

    c = _car(f"ConventionalVehicle '{name}'", car)
    b = DiagramBuilder(name)
    eng = b.add(Engine("engine", c.engine, speed0_rad_s=engine_speed0_rad_s))
    tc = b.add(TorqueConverter("converter", c.torque_converter))
    tcu = b.add(ShiftSchedule("tcu", c.transmission, initial_gear=initial_gear))
    gb = b.add(AutomaticGearbox("gearbox", c.transmission, initial_gear=initial_gear))
    fd = b.add(FinalDrive("final_drive", c.transmission))
    _, veh = _add_body(b, c, brake_mode, grade_input, vehicle_kw)
    b.connect(eng.speed, tc.pump_speed)
    b.connect(tc.pump_torque, eng.load_torque)
    b.connect(gb.speed_in, tc.turbine_speed)
    b.connect(tc.turbine_torque, gb.torque_in)
    b.connect(fd.speed_in, gb.speed_out)
    b.connect(gb.torque_out, fd.torque_in)
    b.connect(veh.wheel_speed, fd.speed_out)
    b.connect(fd.torque_out, veh.drive_torque)
    b.connect(veh.v, tcu.speed)
    b.connect(tcu.gear, gb.gear)
    b.export_input([eng.throttle, tcu.throttle], "throttle")
    b.export_output(eng.speed, "engine_speed")
    b.export_output(eng.torque, "engine_torque")
    b.export_output(tcu.gear, "gear")
    b.export_output(gb.ratio, "gear_ratio")
    b.export_output(tc.speed_ratio, "speed_ratio")
    b.export_output(fd.torque_out, "drive_torque")
    return b.build(loops="error")


def ElectricVehicle(name: str, car: PassengerCar | None = None, *,  # noqa: N802
                    brake_mode: str = "torque", grade_input: bool = False,
                    **vehicle_kw: Any) -> Diagram:
    r"""The electric car of the module docstring, as a frozen diagram.

    Ports
    -----
    in   throttle        scalar [1]    accelerator pedal 0..1
    in   torque_request  scalar [N*m]  brake request (or ``pedal`` / ``pressure``)
    in   grade           scalar [rad]  only with ``grade_input=True``
    out  x, v, a, wheel_speed, brake_torque   as :func:`ConventionalVehicle`
    out  motor_speed     scalar [rad/s]
    out  motor_torque    scalar [N*m]
    out  drive_torque    scalar [N*m]  total drive torque at the wheels
    out  i_dc            scalar [A]

    Blocks: ``drivetrain`` (:func:`~.electric_drivetrain.ElectricDrivetrain`), ``brake``,
    ``vehicle``.
    """

    c = _car(f"ElectricVehicle '{name}'", car)
    e = c.electric
    b = DiagramBuilder(name)
    dt = b.add(ElectricDrivetrain("drivetrain", e))
    _, veh = _add_body(b, c, brake_mode, grade_input, vehicle_kw,
                       extra_inertia=e.rotor_inertia_kgm2 * e.reduction_ratio ** 2)
    b.connect(veh.wheel_speed, dt.input("wheel_speed"))
    b.connect(dt.output("wheel_torque"), veh.drive_torque)
    b.export_input(dt.input("throttle"), "throttle")
    for port in ("motor_speed", "motor_torque", "i_dc"):
        b.export_output(dt.output(port), port)
    b.export_output(dt.output("wheel_torque"), "drive_torque")
    return b.build(loops="error")
