"""Hydraulic motor (fixed displacement) and the displacement-machine equations it shares with pumps.

A displacement machine of displacement D [m^3/rad] = :math:`D_{rev}/2\\pi`
between ports a and b, shaft speed :math:`\\omega`, pressure difference
:math:`\\Delta p = p_a - p_b` (Merritt 1967 sec. 6.2; Ivantysyn and Ivantysynova,
*Hydrostatic Pumps and Motors*, ch. 4, the simplest loss model):

.. math::

    q_{ab} &= D\\,\\omega + G\\,\\Delta p \\\\
    \\tau &= D\\,\\Delta p - c\\,|D\\,\\Delta p|\\tanh(\\omega/\\omega_t) - B\\,\\omega

q is the flow through the machine from a to b (:math:`G \\Delta p` the laminar
internal leakage, a to b), :math:`\\tau` the torque the fluid exerts on the
shaft (positive driving it in the direction of :math:`\\omega`).  The loss torque
is proportional to the pressure load and opposes rotation (an efficiency-type
friction, like the cylinder's seal loss; the tanh regularizes sign(omega)
below :math:`\\omega_t`), plus an optional viscous term :math:`B\\omega`.

Volumetric and hydro-mechanical efficiencies
--------------------------------------------
A motor (a = high-pressure inlet) in its design quadrant
(:math:`\\omega > 0,\\ \\Delta p > 0`, :math:`\\omega \\gg \\omega_t`) with
:math:`c = 1 - \\eta_{hm}` and B = 0:

.. math:: \\tau = \\eta_{hm} D \\Delta p, \\qquad
          \\eta_v = \\frac{D\\omega}{D\\omega + G\\Delta p}, \\qquad
          \\frac{\\tau\\omega}{q\\,\\Delta p} = \\eta_v\\,\\eta_{hm}

so :math:`G = D\\omega_r (1/\\eta_v - 1)/\\Delta p_r` reproduces a catalogue
volumetric efficiency at its rated speed and pressure; away from that point
:math:`\\eta_v` changes as laminar leakage does (it falls at low speed: a
motor holding a load creeps at :math:`G\\Delta p / D`).  A pump uses the same
equations with a = inlet, b = outlet and :math:`c = 1/\\eta_{hm} - 1`,
:math:`G = D\\omega_r (1 - \\eta_v)/\\Delta p_r` (see :mod:`.pump`).

Not modelled: external (case drain) leakage, pressure- and speed-dependent
efficiency maps, breakaway (starting) torque (at :math:`\\omega = 0` the loss
torque is 0), flow ripple, inertia of the rotating group (put it in the
mechanical load).
"""

from __future__ import annotations

import math
from typing import Any

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE, POSITIVE

from .orifice import check_positive


def machine_flow(d: float, speed: float, dp: float, g: float) -> float:
    """:math:`q_{ab} = D\\omega + G\\Delta p` [m^3/s] (module docstring)."""
    return d * speed + g * dp


def machine_torque(d: float, speed: float, dp: float, loss: float, speed_t: float,
                   viscous: float) -> float:
    """:math:`\\tau = D\\Delta p - c|D\\Delta p|\\tanh(\\omega/\\omega_t) - B\\omega` [N*m]."""
    t = d * dp
    return t - loss * abs(t) * math.tanh(speed / speed_t) - viscous * speed


def efficiency(owner: str, label: str, eta: Any) -> float:
    try:
        ok = 0.0 < float(eta) <= 1.0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ParameterError(f"{owner}: {label} must lie in (0, 1], got {eta!r}")
    return float(eta)


def leakage_coefficient(owner: str, *, d: float, leakage_m3_s_pa: float | None,
                        volumetric_efficiency: float | None, rated_speed_rad_s: float | None,
                        rated_pressure_pa: float | None, pump: bool) -> float:
    """G [m^3/s/Pa] from a given leakage, or from a volumetric efficiency at a rated point.

    Motor: :math:`G = D\\omega_r(1/\\eta_v - 1)/\\Delta p_r`; pump:
    :math:`G = D\\omega_r(1 - \\eta_v)/\\Delta p_r` (module docstring).  Neither given: 0.
    """
    by_eta = volumetric_efficiency is not None
    by_rated = rated_speed_rad_s is not None or rated_pressure_pa is not None
    if leakage_m3_s_pa is not None:
        if by_eta or by_rated:
            raise ParameterError(f"{owner}: give either leakage_m3_s_pa or "
                                 "volumetric_efficiency (with rated_speed_rad_s and "
                                 "rated_pressure_pa), not both")
        g = float(leakage_m3_s_pa)
        if not (g >= 0 and math.isfinite(g)):
            raise ParameterError(f"{owner}: leakage_m3_s_pa must be finite and >= 0, got "
                                 f"{leakage_m3_s_pa!r}")
        return g
    if not by_eta:
        if by_rated:
            raise ParameterError(f"{owner}: rated_speed_rad_s and rated_pressure_pa only "
                                 "serve volumetric_efficiency, which is missing")
        return 0.0
    eta = efficiency(owner, "volumetric_efficiency", volumetric_efficiency)
    if rated_speed_rad_s is None or rated_pressure_pa is None:
        raise ParameterError(f"{owner}: volumetric_efficiency needs the rated point where it "
                             "holds: rated_speed_rad_s and rated_pressure_pa (pressure "
                             "difference)")
    check_positive(owner, rated_speed_rad_s=rated_speed_rad_s,
                   rated_pressure_pa=rated_pressure_pa)
    ratio = (1.0 - eta) if pump else (1.0 / eta - 1.0)
    return d * float(rated_speed_rad_s) * ratio / float(rated_pressure_pa)


def machine_parameters(owner: str, *, displacement_m3_per_rev: float,
                       hydromechanical_efficiency: float, viscous_n_m_s_rad: float,
                       speed_threshold_rad_s: float) -> tuple[float, float, float, float]:
    """Validated (D [m^3/rad], eta_hm, B, omega_t)."""
    check_positive(owner, displacement_m3_per_rev=displacement_m3_per_rev,
                   speed_threshold_rad_s=speed_threshold_rad_s)
    eta = efficiency(owner, "hydromechanical_efficiency", hydromechanical_efficiency)
    if not (viscous_n_m_s_rad >= 0 and math.isfinite(viscous_n_m_s_rad)):
        raise ParameterError(f"{owner}: viscous_n_m_s_rad must be finite and >= 0, got "
                             f"{viscous_n_m_s_rad!r}")
    return (float(displacement_m3_per_rev) / (2.0 * math.pi), eta, float(viscous_n_m_s_rad),
            float(speed_threshold_rad_s))


class HydraulicMotor(Block):
    """Fixed-displacement hydraulic motor with leakage and hydro-mechanical losses.

    .. math::

        D = D_{rev}/2\\pi, \\qquad \\Delta p = p_A - p_B \\\\
        q = D\\omega + G\\Delta p, \\qquad
        \\tau = D\\Delta p - (1 - \\eta_{hm})\\,|D\\Delta p|\\tanh(\\omega/\\omega_t) - B\\omega

    (module docstring: :math:`\\tau = \\eta_{hm} D\\Delta p` and
    :math:`\\tau\\omega = \\eta_v\\eta_{hm}\\,q\\Delta p` when motoring; valid in all four
    quadrants, the loss torque always opposing rotation).  Flow enters at A and
    leaves at B (internal leakage only, so both flows are q).

    Ports
    -----
    in   p_A      scalar [Pa]    port A pressure (inlet when motoring forward)
    in   p_B      scalar [Pa]    port B pressure
    in   speed    scalar [rad/s]  shaft speed (rpm sources are converted on the wire)
    out  q        scalar [m^3/s]  flow through the motor from A to B; reads every input
    out  torque   scalar [N*m]   torque on the shaft, positive driving it; reads every input

    Parameters
    ----------
    displacement_m3_per_rev : float
        Geometric displacement per revolution.
    hydromechanical_efficiency : float
        :math:`\\eta_{hm}` in (0, 1].
    leakage_m3_s_pa : float
        Internal leakage conductance G; or
    volumetric_efficiency, rated_speed_rad_s, rated_pressure_pa : float
        :math:`\\eta_v` at a rated speed and pressure difference (gives G).
    viscous_n_m_s_rad : float
        Viscous friction B [N*m*s/rad] (default 0).
    speed_threshold_rad_s : float
        :math:`\\omega_t` of the tanh (default 0.1 rad/s, about 1 rpm).
    """

    argument_checks = {"displacement_m3_per_rev": POSITIVE, "rated_speed_rad_s": POSITIVE,
                       "rated_pressure_pa": POSITIVE, "leakage_m3_s_pa": NON_NEGATIVE,
                       "viscous_n_m_s_rad": NON_NEGATIVE, "speed_threshold_rad_s": POSITIVE}

    def __init__(self, name: str, *, displacement_m3_per_rev: float,
                 hydromechanical_efficiency: float = 1.0, leakage_m3_s_pa: float | None = None,
                 volumetric_efficiency: float | None = None,
                 rated_speed_rad_s: float | None = None, rated_pressure_pa: float | None = None,
                 viscous_n_m_s_rad: float = 0.0, speed_threshold_rad_s: float = 0.1) -> None:
        super().__init__(name)
        own = f"HydraulicMotor '{name}'"
        self.D, self.eta_hm, self.B, self.w_t = machine_parameters(
            own, displacement_m3_per_rev=displacement_m3_per_rev,
            hydromechanical_efficiency=hydromechanical_efficiency,
            viscous_n_m_s_rad=viscous_n_m_s_rad, speed_threshold_rad_s=speed_threshold_rad_s)
        self.G = leakage_coefficient(own, d=self.D, leakage_m3_s_pa=leakage_m3_s_pa,
                                     volumetric_efficiency=volumetric_efficiency,
                                     rated_speed_rad_s=rated_speed_rad_s,
                                     rated_pressure_pa=rated_pressure_pa, pump=False)
        self.p_A = self.declare_input("p_A", unit="Pa")
        self.p_B = self.declare_input("p_B", unit="Pa")
        self.speed = self.declare_input("speed", unit="rad/s")
        self.q = self.declare_output(
            "q", lambda ctx: machine_flow(self.D, ctx.input(self.speed), self._dp(ctx), self.G),
            unit="m^3/s")
        self.torque = self.declare_output(
            "torque", lambda ctx: machine_torque(self.D, ctx.input(self.speed), self._dp(ctx),
                                                 1.0 - self.eta_hm, self.w_t, self.B),
            unit="N*m")

    def _dp(self, ctx: Any) -> float:
        return ctx.input(self.p_A) - ctx.input(self.p_B)

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :func:`machine_flow` and :func:`machine_torque`."""
        f = c_float
        w, dp = cg.u(self.speed), f"({cg.u(self.p_A)} - {cg.u(self.p_B)})"
        return CModel(outputs={
            "q": f"{cg.y(self.q)} = {f(self.D)} * {w} + {f(self.G)} * {dp};",
            "torque": torque_c(cg.y(self.torque), f(self.D), w, dp, 1.0 - self.eta_hm,
                               self.w_t, self.B)})


def torque_c(out: str, d: str, speed: str, dp: str, loss: float, speed_t: float,
             viscous: float, sign: str = "") -> str:
    """C of ``out = sign machine_torque(d, speed, dp, ...)`` (``d``, ``speed``, ``dp`` C
    expressions)."""
    f = c_float
    return ("{\n"
            f"    double t_ = {d} * {dp};\n"
            f"    {out} = {sign}(t_ - {f(loss)} * fabs(t_) * tanh({speed} / {f(speed_t)}) - "
            f"{f(viscous)} * {speed});\n}}")
