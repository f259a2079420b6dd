r"""Massless gearbox with a constant ratio and a power-flow-dependent efficiency.

Signal-flow causality as between a motor and a load: the motor's torque comes
in, the load's speed comes in, the gearbox returns the load torque and the
motor speed.  With the ratio :math:`i = \omega_{in}/\omega_{out}` and
:math:`P_{in} = T_{in}\,\omega_{in}` the power entering at the input shaft:

.. math::

    \omega_{in} &= i\,\omega_{out} \\
    T_{out} &= i\,T_{in}\,f(P_{in}), \qquad
    f = \begin{cases} \eta & P_{in} \ge 0 \text{ (motoring: power flows in to out)} \\
                      1/\eta & P_{in} < 0 \text{ (back-driven: power flows out to in)}
        \end{cases}

so the power reaching the output is :math:`P_{out} = T_{out}\,\omega_{out} =
f\,P_{in}`: :math:`\eta P_{in}` when motoring and :math:`P_{in}/\eta` (more
in magnitude than arrives at the input) when back-driven.  Zero power (standstill)
counts as motoring.  Either way the
loss :math:`P_{in} - P_{out}` is :math:`\ge 0`: :math:`(1-\eta)P_{in}` motoring,
:math:`(1/\eta - 1)|P_{in}|` back-driven.  Both are the same statement, "the
losses are :math:`1-\eta` of the power entering the gearbox, on whichever
side it enters", up to which side's power :math:`\eta` is referred to.

With the sharp switch the torque jumps by a factor :math:`\eta^2` when the
power changes sign (at standstill or on a torque reversal), which a solver
sees as chattering when the drive hovers at zero speed.
``smoothing_power_w`` :math:`P_s > 0` replaces the switch by a continuous
factor that keeps the loss non-negative everywhere:

.. math::

    f = \begin{cases}
        1 - (1 - \eta)\,\min(P_{in}/P_s, 1) & P_{in} \ge 0 \\
        1 + (1/\eta - 1)\,\min(|P_{in}|/P_s, 1) & P_{in} < 0
        \end{cases}

(no losses at zero power; full losses beyond :math:`|P_{in}| \ge P_s`).  The
model has no static friction: a self-locking (:math:`\eta < 0.5`) worm gear
is not locked, and there is no stuck mode as in Modelica's ``LossyGear``.
"""

from __future__ import annotations

import math
from typing import Any

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.errors import ParameterError
from cosim.params import EFFICIENCY, NON_NEGATIVE


class Gearbox(Block):
    r"""Gearbox: ratio :math:`i = \omega_{in}/\omega_{out}`, efficiency :math:`\eta` by power flow.

    Equations in the module docstring.

    Ports
    -----
    in   torque_in   scalar [N*m]  torque applied to the input shaft (by the motor)
    in   speed_out   scalar [rad/s]  output shaft speed (of the load)
    out  torque_out  scalar [N*m]  torque the output shaft applies to the load;
                                    reads torque_in, speed_out
    out  speed_in    scalar [rad/s]  input shaft speed :math:`i\,\omega_{out}`; reads speed_out
    out  power_loss  scalar [W]    :math:`P_{in} - P_{out} \ge 0`; reads both

    Parameters
    ----------
    ratio : float
        :math:`i`, non-zero (negative reverses the direction of rotation).
    efficiency : float
        :math:`\eta` in (0, 1].
    smoothing_power_w : float
        :math:`P_s \ge 0` (0: sharp switch).
    """

    argument_checks = {"efficiency": EFFICIENCY, "smoothing_power_w": NON_NEGATIVE}

    def __init__(self, name: str, *, ratio: float, efficiency: float = 1.0,
                 smoothing_power_w: float = 0.0) -> None:
        super().__init__(name)
        own = f"Gearbox '{name}'"
        self.ratio = float(ratio)
        if self.ratio == 0 or not math.isfinite(self.ratio):
            raise ParameterError(f"{own}: ratio must be finite and non-zero, got {ratio!r}")
        self.eta, self.p_s = float(efficiency), float(smoothing_power_w)
        self.torque_in = self.declare_input("torque_in", unit="N*m")
        self.speed_out = self.declare_input("speed_out", unit="rad/s")
        self.torque_out = self.declare_output(
            "torque_out", lambda ctx: self.output_torque(ctx.input(self.torque_in),
                                                         ctx.input(self.speed_out)),
            unit="N*m")
        self.speed_in = self.declare_output(
            "speed_in", lambda ctx: self.ratio * ctx.input(self.speed_out), unit="rad/s",
            depends_on=(self.speed_out,))
        self.power_loss = self.declare_output("power_loss", self._loss, unit="W")

    def factor(self, p_in: float) -> float:
        """The efficiency factor :math:`f(P_{in})` of :math:`T_{out} = i T_{in} f`."""
        eta, p_s = self.eta, self.p_s
        if p_s == 0.0:
            return eta if p_in >= 0.0 else 1.0 / eta
        s = min(abs(p_in) / p_s, 1.0)
        return 1.0 - (1.0 - eta) * s if p_in >= 0.0 else 1.0 + (1.0 / eta - 1.0) * s

    def output_torque(self, torque_in: float, speed_out: float) -> float:
        p_in = torque_in * self.ratio * speed_out
        return self.ratio * torque_in * self.factor(p_in)

    def _loss(self, ctx: Any) -> float:
        t, w = ctx.input(self.torque_in), ctx.input(self.speed_out)
        p_in = t * self.ratio * w
        return p_in - self.output_torque(t, w) * w

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`output_torque` (with :meth:`factor`), the ``speed_in``
        output and :meth:`_loss`."""
        f = c_float
        i, eta, p_s = f(self.ratio), f(self.eta), f(self.p_s)
        t, w = cg.u(self.torque_in), cg.u(self.speed_out)
        if self.p_s == 0.0:
            fac = f"double fac = (p_in >= 0.0) ? {eta} : 1.0 / {eta};\n"
        else:
            fac = (f"double sm = fabs(p_in) / {p_s}, fac;\n"
                   "sm = (1.0 < sm) ? 1.0 : sm;\n"
                   f"fac = (p_in >= 0.0) ? 1.0 - (1.0 - {eta}) * sm : "
                   f"1.0 + (1.0 / {eta} - 1.0) * sm;\n")
        calc = (f"double tq = {t}, wo = {w};\ndouble p_in = tq * {i} * wo;\n" + fac
                + f"double tout = {i} * tq * fac;\n")
        return CModel(outputs={
            "torque_out": f"{{\n{calc}{cg.y(self.torque_out)} = tout;\n}}",
            "speed_in": f"{cg.y(self.speed_in)} = {i} * {w};",
            "power_loss": f"{{\n{calc}{cg.y(self.power_loss)} = p_in - tout * wo;\n}}"})
