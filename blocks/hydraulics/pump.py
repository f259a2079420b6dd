"""Variable-displacement pump (displacement fraction input).

The fixed-displacement pump with constant efficiencies is
:class:`~blocks.hydraulics.sources.FixedDisplacementPump`.  This block is the
displacement machine of :mod:`.motor` (same equations, :func:`~.motor.machine_flow`
and :func:`~.motor.machine_torque`) run as a pump, a = inlet, b = outlet, with
the displacement scaled by the fraction :math:`\\varepsilon`
(swash-plate or cam-ring setting):

.. math::

    D(\\varepsilon) &= \\varepsilon\\, D_{max}, \\qquad
    \\varepsilon = \\mathrm{clip}(\\varepsilon_{in},\\ \\varepsilon_{min},\\ 1),
    \\qquad \\Delta p = p_{out} - p_{in} \\\\
    q &= D(\\varepsilon)\\,\\omega - G\\,\\Delta p \\\\
    \\tau &= D(\\varepsilon)\\,\\Delta p
             + (1/\\eta_{hm} - 1)\\,|D(\\varepsilon)\\,\\Delta p|\\tanh(\\omega/\\omega_t)
             + B\\,\\omega

In the design quadrant (:math:`\\omega \\gg \\omega_t`, :math:`\\varepsilon\\Delta p > 0`)
:math:`\\tau = D\\Delta p/\\eta_{hm} + B\\omega`, and with
:math:`G = D_{max}\\omega_r(1 - \\eta_v)/\\Delta p_r` the delivered flow at full
displacement and the rated point is :math:`\\eta_v D_{max}\\omega_r`: the same
numbers as ``FixedDisplacementPump`` there.  Unlike that block's constant
:math:`\\eta_v`, the leakage depends on the pressure and not on the setting, so
at zero displacement the pump delivers :math:`-G\\Delta p` (it leaks back)
and the volumetric efficiency falls at small settings, as real pumps do.

Power balance (exact for :math:`\\tanh(\\omega/\\omega_t) = 1`):

.. math:: \\tau\\omega - q\\,\\Delta p = G\\,\\Delta p^2
          + (1/\\eta_{hm} - 1)\\,D(\\varepsilon)\\,\\Delta p\\,\\omega + B\\omega^2

Not modelled: the displacement actuator's dynamics (drive :math:`\\varepsilon`
through a lag, e.g. :class:`blocks.lti.FirstOrderLag`) and pressure or flow
compensators (a controller acting on :math:`\\varepsilon`).
"""

from __future__ import annotations

from typing import Any

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.params import NON_NEGATIVE, POSITIVE, Number

from . import _cforms
from .motor import (
    leakage_coefficient,
    machine_flow,
    machine_parameters,
    machine_torque,
    torque_c,
)


class VariableDisplacementPump(Block):
    """Variable-displacement pump: displacement fraction input, leakage, hydro-mechanical loss.

    .. math::

        q = \\varepsilon D_{max}\\omega - G (p_{out} - p_{in}), \\qquad
        \\tau = \\varepsilon D_{max}\\Delta p
              + (\\tfrac{1}{\\eta_{hm}} - 1)|\\varepsilon D_{max}\\Delta p|
                \\tanh(\\omega/\\omega_t) + B\\omega

    (module docstring; :math:`\\varepsilon` clipped to [``min_fraction``, 1]).

    Ports
    -----
    in   speed          scalar [rad/s]  shaft speed
    in   p_in           scalar [Pa]    inlet (suction) pressure
    in   p_out          scalar [Pa]    outlet (delivery) pressure
    in   displacement   scalar [1]     displacement fraction epsilon
    out  q              scalar [m^3/s]  delivered flow (also the suction flow); every input
    out  torque         scalar [N*m]   shaft torque required to drive the pump; every input

    Parameters
    ----------
    displacement_m3_per_rev : float
        Maximum displacement :math:`D_{max}` per revolution.
    min_fraction : float
        Lower limit of :math:`\\varepsilon`: 0 (default) for a one-directional
        pump, -1 for an over-centre pump (flow reverses).
    hydromechanical_efficiency : float
        :math:`\\eta_{hm}` in (0, 1].
    leakage_m3_s_pa : float
        Internal leakage conductance G; or
    volumetric_efficiency, rated_speed_rad_s, rated_pressure_pa : float
        :math:`\\eta_v` at full displacement and a rated speed and pressure difference.
    viscous_n_m_s_rad, speed_threshold_rad_s : float
        B and :math:`\\omega_t` (as :class:`~blocks.hydraulics.motor.HydraulicMotor`).
    """

    argument_checks = {"displacement_m3_per_rev": POSITIVE, "rated_speed_rad_s": POSITIVE,
                       "rated_pressure_pa": POSITIVE, "leakage_m3_s_pa": NON_NEGATIVE,
                       "viscous_n_m_s_rad": NON_NEGATIVE, "speed_threshold_rad_s": POSITIVE,
                       "min_fraction": Number(low=-1.0, high=1.0, high_open=True)}

    def __init__(self, name: str, *, displacement_m3_per_rev: float, min_fraction: float = 0.0,
                 hydromechanical_efficiency: float = 1.0, leakage_m3_s_pa: float | None = None,
                 volumetric_efficiency: float | None = None,
                 rated_speed_rad_s: float | None = None, rated_pressure_pa: float | None = None,
                 viscous_n_m_s_rad: float = 0.0, speed_threshold_rad_s: float = 0.1) -> None:
        super().__init__(name)
        own = f"VariableDisplacementPump '{name}'"
        self.D, self.eta_hm, self.B, self.w_t = machine_parameters(
            own, displacement_m3_per_rev=displacement_m3_per_rev,
            hydromechanical_efficiency=hydromechanical_efficiency,
            viscous_n_m_s_rad=viscous_n_m_s_rad, speed_threshold_rad_s=speed_threshold_rad_s)
        self.eps_min = float(min_fraction)
        self.G = leakage_coefficient(own, d=self.D, leakage_m3_s_pa=leakage_m3_s_pa,
                                     volumetric_efficiency=volumetric_efficiency,
                                     rated_speed_rad_s=rated_speed_rad_s,
                                     rated_pressure_pa=rated_pressure_pa, pump=True)
        self.speed = self.declare_input("speed", unit="rad/s")
        self.p_in = self.declare_input("p_in", unit="Pa")
        self.p_out = self.declare_input("p_out", unit="Pa")
        self.displacement = self.declare_input("displacement", unit="1")
        self.q = self.declare_output("q", self._flow, unit="m^3/s")
        self.torque = self.declare_output("torque", self._torque, unit="N*m")

    def fraction(self, ctx: Any) -> float:
        """:math:`\\varepsilon` clipped to [min_fraction, 1]."""
        return min(max(ctx.input(self.displacement), self.eps_min), 1.0)

    def _flow(self, ctx: Any) -> float:
        # the machine from inlet (a) to outlet (b): dp_ab = p_in - p_out
        return machine_flow(self.fraction(ctx) * self.D, ctx.input(self.speed),
                            ctx.input(self.p_in) - ctx.input(self.p_out), self.G)

    def _torque(self, ctx: Any) -> float:
        # required torque = minus the torque the fluid exerts on the shaft
        return -machine_torque(self.fraction(ctx) * self.D, ctx.input(self.speed),
                               ctx.input(self.p_in) - ctx.input(self.p_out),
                               1.0 / self.eta_hm - 1.0, self.w_t, self.B)

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`fraction`, ``_flow`` and ``_torque``."""
        f = c_float
        w, dp = cg.u(self.speed), f"({cg.u(self.p_in)} - {cg.u(self.p_out)})"
        frac = ("double e, d;\n" + _cforms.clip(cg.u(self.displacement), f(self.eps_min),
                                               "1.0", "e") + f"\nd = e * {f(self.D)};\n")
        return CModel(outputs={
            "q": _cforms.block(frac + f"{cg.y(self.q)} = d * {w} + {f(self.G)} * {dp};"),
            "torque": _cforms.block(frac + torque_c(cg.y(self.torque), "d", w, dp,
                                                    1.0 / self.eta_hm - 1.0, self.w_t,
                                                    self.B, sign="-"))})
