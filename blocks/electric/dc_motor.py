"""Permanent-magnet DC motor."""

from __future__ import annotations

import numpy as np

from cosim.block import Block
from cosim.linear import LinearModel
from cosim.params import NON_NEGATIVE, POSITIVE


class DCMotor(Block):
    """Permanent-magnet DC motor with viscous friction.

    .. math::

        L \\frac{di}{dt} = v - R i - k_e \\omega, \\qquad
        J \\frac{d\\omega}{dt} = k_t i - b \\omega - \\tau_L

    with :math:`k_e = k_t = k` (SI units).  States ``[i, omega]``.

    Ports
    -----
    in   voltage      scalar [V]
    in   load_torque  scalar [N*m]
    out  speed        scalar [rad/s]  state only
    out  current      scalar [A]     state only
    out  torque       scalar [N*m]   state only (electromagnetic torque k i)

    Parameters
    ----------
    resistance_ohm, inductance_h, torque_constant_nm_per_a, inertia_kgm2 : float
        :math:`R` [Ohm], :math:`L` [H], :math:`k` [N m/A = V s/rad], :math:`J` [kg m^2].
    friction_nms_per_rad : float
        :math:`b` [N m s/rad] (default 0).
    current0_a, speed0_rad_s : float
        Initial current [A] and speed [rad/s].
    """

    argument_checks = {"resistance_ohm": POSITIVE, "inductance_h": POSITIVE,
                       "torque_constant_nm_per_a": POSITIVE, "inertia_kgm2": POSITIVE,
                       "friction_nms_per_rad": NON_NEGATIVE}

    def __init__(self, name: str, *, resistance_ohm: float, inductance_h: float,
                 torque_constant_nm_per_a: float, inertia_kgm2: float,
                 friction_nms_per_rad: float = 0.0, current0_a: float = 0.0,
                 speed0_rad_s: float = 0.0) -> None:
        super().__init__(name)
        self.R, self.L, self.k = float(resistance_ohm), float(inductance_h), \
            float(torque_constant_nm_per_a)
        self.J, self.b = float(inertia_kgm2), float(friction_nms_per_rad)
        self.voltage = self.declare_input("voltage", unit="V")
        self.load_torque = self.declare_input("load_torque", unit="N*m")
        self.x = self.declare_continuous_state("current_speed", [current0_a, speed0_rad_s])
        self.speed = self.declare_output("speed", lambda ctx: float(ctx.state(self.x)[1]),
                                         unit="rad/s", depends_on=())
        self.current = self.declare_output("current", lambda ctx: float(ctx.state(self.x)[0]),
                                           unit="A", depends_on=())
        self.torque = self.declare_output(
            "torque", lambda ctx: self.k * float(ctx.state(self.x)[0]), unit="N*m",
            depends_on=())

    def matrices(self):
        R, L, k, J, b = self.R, self.L, self.k, self.J, self.b
        A = np.array([[-R / L, -k / L], [k / J, -b / J]])
        B = np.array([[1 / L, 0.0], [0.0, -1 / J]])
        C = np.array([[0.0, 1.0], [1.0, 0.0], [k, 0.0]])
        return A, B, C, np.zeros((3, 2))

    def derivatives(self, ctx):
        i, w = ctx.state(self.x)
        v, tl = ctx.input(self.voltage), ctx.input(self.load_torque)
        return np.array([(v - self.R * i - self.k * w) / self.L,
                         (self.k * i - self.b * w - tl) / self.J])

    def linear_model(self, ctx):
        A, B, C, D = self.matrices()
        return LinearModel(A, B, C, D, [self.voltage, self.load_torque],
                           [self.speed, self.current, self.torque], [self.x])
