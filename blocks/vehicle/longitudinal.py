r"""Longitudinal vehicle (point mass on a grade) and friction brakes.

Equation of motion, with the wheels' spin inertia as equivalent mass
:math:`m_{eq} = m + J_w/r^2`:

.. math::

    m_{eq}\,\dot v = \underbrace{\frac{T_d}{r} - \tfrac12\rho C_d A\,v|v| - m g\sin\theta}_{F_a}
        \; - \; F_f, \qquad \dot x = v

:math:`T_d` the drive torque at the wheels, :math:`\theta` the grade (uphill > 0).  The
*friction-like* resistances, rolling resistance and brakes, have the Coulomb magnitude

.. math:: R = f_r\, m g \cos\theta + T_b / r \;\ge 0

and act against the motion; at standstill they hold the car up to :math:`R`.

Standstill without chattering (the method)
------------------------------------------
A plain :math:`F_f = R\,\mathrm{sgn}(v)` chatters around :math:`v = 0` in a fixed-step
integration, and a smooth sign (:math:`\tanh(v/v_\varepsilon)`) either creeps on a grade
or is stiff (its slope :math:`R/(m v_\varepsilon)` would need tiny steps).  Here the
friction force is the *bounded constraint force* of a velocity constraint "v -> 0",
as LCP-based rigid-body solvers treat friction, with velocity-level Baumgarte
stabilisation of time constant :math:`\tau`:

.. math::

    F_f = \mathrm{clip}\!\left(F_a + m_{eq}\frac{v}{\tau},\ -R,\ R\right)

* While the clip is active (:math:`|F_a + m_{eq}v/\tau| \ge R`, i.e. whenever
  :math:`|v| \gtrsim \tau (R + |F_a|)/m_{eq}`) it is exactly Coulomb's
  :math:`R\,\mathrm{sgn}`: the moving car, and the coast-down, follow the textbook
  equation.
* Inside, :math:`\dot v = -v/\tau`: the car comes to rest exponentially, and at
  :math:`v = 0` with :math:`|F_a| \le R` it stays at rest *exactly* (the friction force
  equals :math:`F_a`, :math:`\dot v = 0`), on a grade as well.  Breakaway happens as soon
  as :math:`|F_a| > R` (e.g. a drive torque, or a grade steeper than the brakes hold).
* :math:`F_f` is continuous in :math:`v` (piecewise linear), so there is nothing to
  chatter, and the stiffness is :math:`1/\tau` only: choose :math:`\tau \ge h/0.55` for
  AB3 (15 ms at the seed's 8 ms), :math:`\tau \ge h/2.8` for RK4.  Default 50 ms.

Consequence (documented, tested): the last :math:`v_c = \tau (R + |F_a|)/m_{eq}` of speed
(5.7 mm/s in a coast-down, 0.34 m/s in a stop at 0.7 g) decays exponentially with time
constant :math:`\tau` instead of linearly, and the car travels :math:`v_c\tau/2` further
than with the ideal Coulomb force (0.14 mm in the coast-down, 8.5 mm in the 0.7 g stop);
above :math:`v_c` the motion is the Coulomb model's exactly.

Limitations: a point mass (no load transfer, no pitch), rigid tyres (no longitudinal
slip, no friction limit: a brake or drive torque beyond :math:`\mu m g r` is not
limited), no head wind, constant rolling coefficient (no speed dependence), the
driveline inertia behind the torque converter is not added to :math:`m_{eq}` (put it in
``wheel_inertia_kgm2`` if wanted; it is gear-dependent).
"""

from __future__ import annotations

import math
from typing import Any

from cosim.block import Block
from cosim.codegen.model import CContext, CModel, c_float
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE, POSITIVE

from . import _cforms
from .params import PASSENGER_CAR, BodyData, BrakeData

__all__ = ["Brake", "LongitudinalVehicle", "standstill_friction"]


def standstill_friction(f_a: float, v: float, r: float, m_tau: float) -> float:
    """:math:`\\mathrm{clip}(F_a + m_{eq} v/\\tau, -R, R)` (module docstring); ``m_tau`` is
    :math:`m_{eq}/\\tau`."""
    f = f_a + m_tau * v
    return r if f > r else (-r if f < -r else f)


class LongitudinalVehicle(Block):
    r"""Point-mass vehicle on a grade: drive and brake torques in, motion out.

    Equations and the standstill method in the module docstring.

    Ports
    -----
    in   drive_torque     scalar [N*m]   total drive torque at the wheels (> 0 forward)
    in   brake_torque     scalar [N*m]   total brake torque magnitude (negative read as 0)
    in   grade            scalar [rad]   road grade, uphill > 0 (only ``grade_input=True``;
                                          else the parameter ``grade``)
    out  x                scalar [m]     position; state only
    out  v                scalar [m/s]   speed; state only
    out  wheel_speed      scalar [rad/s]  :math:`v/r`; state only
    out  drag_force       scalar [N]     :math:`\tfrac12\rho C_d A v|v|`; state only
    out  a                scalar [m/s^2]  acceleration :math:`\dot v`; reads every input
    out  friction_force   scalar [N]     :math:`F_f` (rolling resistance + brakes, signed
                                          along +x); reads every input

    Parameters
    ----------
    name : str
    params : BodyData
        Default: the passenger car's.
    grade_input : bool
        Take the grade as an input (else the context parameter ``grade`` [rad]).
    grade_rad : float
        Default of the ``grade`` parameter.
    x0_m, v0_m_s : float
        Initial position and speed.
    standstill_time_constant_s : float
        :math:`\tau` of the standstill method (> 0).
    extra_inertia_kgm2 : float
        Further spin inertia at the wheels (e.g. an electric motor's :math:`J i^2`).
    """

    argument_checks = {"standstill_time_constant_s": POSITIVE,
                       "extra_inertia_kgm2": NON_NEGATIVE}

    def __init__(self, name: str, params: BodyData | None = None, *, grade_input: bool = False,
                 grade_rad: float = 0.0, x0_m: float = 0.0, v0_m_s: float = 0.0,
                 standstill_time_constant_s: float = 0.05,
                 extra_inertia_kgm2: float = 0.0) -> None:
        super().__init__(name)
        own = f"LongitudinalVehicle '{name}'"
        p = PASSENGER_CAR.body if params is None else params
        if not isinstance(p, BodyData):
            raise ParameterError(f"{own}: params must be a BodyData, got {type(p).__name__}")
        self.params = p
        self.m, self.g, self.r = p.mass_kg, p.gravity_m_s2, p.wheel_radius_m
        self.m_eq = p.equivalent_mass_kg + extra_inertia_kgm2 / self.r ** 2
        self.k_drag = p.drag_constant
        self.f_r = p.rolling_resistance
        self.tau = float(standstill_time_constant_s)
        self.m_tau = self.m_eq / self.tau
        self.drive_torque = self.declare_input("drive_torque", unit="N*m")
        self.brake_torque = self.declare_input("brake_torque", unit="N*m")
        if grade_input:
            self.grade_in = self.declare_input("grade", unit="rad")
            self.grade = None
        else:
            self.grade_in = None
            self.grade = self.declare_parameter("grade", float(grade_rad), unit="rad",
                                                validate=_grade)
        self.xv = self.declare_continuous_state("x_v", [float(x0_m), float(v0_m_s)])
        self.x = self.declare_output("x", lambda ctx: float(ctx.state(self.xv)[0]), unit="m",
                                     depends_on=())
        self.v = self.declare_output("v", lambda ctx: float(ctx.state(self.xv)[1]), unit="m/s",
                                     depends_on=())
        self.wheel_speed = self.declare_output(
            "wheel_speed", lambda ctx: float(ctx.state(self.xv)[1]) / self.r, unit="rad/s",
            depends_on=())
        self.drag_force = self.declare_output(
            "drag_force", lambda ctx: self.drag(float(ctx.state(self.xv)[1])), unit="N",
            depends_on=())
        self.a, self.friction_force = self.declare_outputs(
            [("a", "m/s^2"), ("friction_force", "N")], self._accel)

    # ------------------------------------------------------------ physics
    def drag(self, v: float) -> float:
        """Aerodynamic drag :math:`\\tfrac12\\rho C_d A v|v|` [N]."""
        return self.k_drag * v * abs(v)

    def forces(self, v: float, drive_torque: float, brake_torque: float,
               grade: float) -> tuple[float, float, float]:
        """``(F_a, R, F_f)`` [N] at speed ``v`` (module docstring)."""
        mg = self.m * self.g
        f_a = drive_torque / self.r - self.drag(v) - mg * math.sin(grade)
        res = self.f_r * mg * math.cos(grade) + max(brake_torque, 0.0) / self.r
        return f_a, res, standstill_friction(f_a, v, res, self.m_tau)

    def _grade(self, ctx: Any) -> float:
        return ctx.input(self.grade_in) if self.grade is None else ctx.param(self.grade)

    def _accel(self, ctx: Any) -> tuple[float, float]:
        v = float(ctx.state(self.xv)[1])
        f_a, _, f_f = self.forces(v, ctx.input(self.drive_torque),
                                  ctx.input(self.brake_torque), self._grade(ctx))
        return (f_a - f_f) / self.m_eq, f_f

    def derivatives(self, ctx: Any) -> list[float]:
        v = float(ctx.state(self.xv)[1])
        f_a, _, f_f = self.forces(v, ctx.input(self.drive_torque),
                                  ctx.input(self.brake_torque), self._grade(ctx))
        return [v, (f_a - f_f) / self.m_eq]

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`drag`, :meth:`forces` (libm ``sin``/``cos`` of the grade, as
        ``math``'s) and :meth:`derivatives`; the grade parameter is tunable."""
        v = cg.x(self.xv, 1)
        k = c_float(self.k_drag)
        grade = cg.u(self.grade_in) if self.grade is None else cg.param(
            "grade", float(cg.value(self.grade)), unit="rad")
        mg = c_float(self.m * self.g)
        forces = (
            f"double v = {v}, fa, res, f, ff;\n"
            f"fa = {cg.u(self.drive_torque)} / {c_float(self.r)} - ({k} * v * fabs(v)) - "
            f"{mg} * sin({grade});\n"
            f"{{\n    double tb = {cg.u(self.brake_torque)};\n"
            f"    res = {c_float(self.f_r)} * {mg} * cos({grade}) + "
            f"((0.0 > tb) ? 0.0 : tb) / {c_float(self.r)};\n}}\n"
            f"f = fa + {c_float(self.m_tau)} * v;\n"
            "ff = (f > res) ? res : ((f < -res) ? -res : f);\n")
        acc = f"(fa - ff) / {c_float(self.m_eq)}"
        return CModel(
            outputs=_cforms.scoped({"x": f"{cg.y(self.x)} = {cg.x(self.xv, 0)};",
                     "v": f"{cg.y(self.v)} = {v};",
                     "wheel_speed": f"{cg.y(self.wheel_speed)} = {v} / {c_float(self.r)};",
                     "drag_force": f"{cg.y(self.drag_force)} = {k} * {v} * fabs({v});",
                     "a": forces + f"{cg.y(self.a)} = {acc};",
                     "friction_force": forces + f"{cg.y(self.friction_force)} = ff;"}),
            derivatives=forces + f"{cg.dx(self.xv, 0)} = v;\n{cg.dx(self.xv, 1)} = {acc};")


def _grade(v: Any) -> None:
    if not abs(float(v)) < math.pi / 2:
        raise ValueError("the grade is an angle in rad with |grade| < pi/2")


_MODES = {"torque": ("torque_request", "N*m"), "pedal": ("pedal", "1"),
          "pressure": ("pressure", "Pa")}


class Brake(Block):
    r"""Friction brakes: a request in, the total brake torque magnitude at the wheels out.

    .. math::

        T^* = \begin{cases} T_{req} & \text{mode "torque"} \\
                            p_{pedal}\,T_{max} & \text{mode "pedal" } (0..1) \\
                            k_p\,p & \text{mode "pressure"} \end{cases},
        \qquad \bar T = \mathrm{clip}(T^*, 0, T_{max})

        \tau_b \dot T_b = \bar T - T_b \quad (\tau_b > 0), \qquad T_b = \bar T
        \quad (\tau_b = 0)

    The output is a magnitude; :class:`LongitudinalVehicle` applies it against the motion
    and holds the car at rest with it.  The seed's controller makes the pedal linear in
    the desired brake torque (its gain is not given): mode ``"pedal"`` with
    :math:`T_{max}` is that linear map.

    Ports
    -----
    in   torque_request  scalar [N*m]  mode "torque"
    in   pedal           scalar [1]   mode "pedal", 0..1 (clipped)
    in   pressure        scalar [Pa]  mode "pressure" (line pressure)
    out  torque          scalar [N*m]  :math:`T_b \ge 0`; state only with a lag, else reads
                                       the request

    Limitations: no wheel lock or ABS (no tyre friction limit here), no fade, one torque
    for all wheels together (no front/rear split), a first-order actuator.

    Parameters
    ----------
    params : BrakeData, optional
        :math:`T_{max}`, :math:`k_p`, :math:`\tau_b` (default: the passenger car's).
    mode : {"torque", "pedal", "pressure"}
        What the input is (see above).
    """

    def __init__(self, name: str, params: BrakeData | None = None, *,
                 mode: str = "torque") -> None:
        super().__init__(name)
        own = f"Brake '{name}'"
        p = PASSENGER_CAR.brake if params is None else params
        if not isinstance(p, BrakeData):
            raise ParameterError(f"{own}: params must be a BrakeData, got {type(p).__name__}")
        if mode not in _MODES:
            raise ParameterError(f"{own}: mode must be one of {', '.join(map(repr, _MODES))}, "
                                 f"got {mode!r}")
        self.params, self.mode = p, mode
        self.t_max, self.k_p, self.tau = (p.max_torque_nm, p.torque_per_pressure_nm_per_pa,
                                          p.time_constant_s)
        port, unit = _MODES[mode]
        self.request = self.declare_input(port, unit=unit)
        if self.tau > 0:
            self.tb = self.declare_continuous_state("torque", 0.0)
            self.torque = self.declare_output("torque", lambda ctx: ctx.state(self.tb),
                                              unit="N*m", depends_on=())
        else:
            self.tb = None
            self.torque = self.declare_output(
                "torque", lambda ctx: self.commanded(ctx.input(self.request)), unit="N*m",
                depends_on=(self.request,))

    def commanded(self, request: float) -> float:
        """:math:`\\bar T` for a request in this block's mode."""
        if self.mode == "pedal":
            t = min(max(request, 0.0), 1.0) * self.t_max
        elif self.mode == "pressure":
            t = self.k_p * request
        else:
            t = request
        return min(max(t, 0.0), self.t_max)

    def derivatives(self, ctx: Any) -> float:
        return (self.commanded(ctx.input(self.request)) - ctx.state(self.tb)) / self.tau

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`commanded` and :meth:`derivatives` (limits and lag as constants)."""
        t_max = c_float(self.t_max)
        cmd = f"double req = {cg.u(self.request)}, t, tc;\n"
        if self.mode == "pedal":
            cmd += _cforms.clip("req", "0.0", "1.0", "t") + f"\nt = t * {t_max};\n"
        elif self.mode == "pressure":
            cmd += f"t = {c_float(self.k_p)} * req;\n"
        else:
            cmd += "t = req;\n"
        cmd += _cforms.clip("t", "0.0", t_max, "tc") + "\n"
        if self.tb is None:
            return CModel(outputs=_cforms.scoped({"torque": cmd + f"{cg.y(self.torque)} = tc;"}))
        return CModel(outputs={"torque": f"{cg.y(self.torque)} = {cg.x(self.tb)};"},
                      derivatives=cmd + f"{cg.dx(self.tb)} = (tc - {cg.x(self.tb)}) / "
                      f"{c_float(self.tau)};")
