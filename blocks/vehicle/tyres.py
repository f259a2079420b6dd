r"""The tyre block: wheel-centre kinematics and normal load in, contact forces out.

One block for every tyre model with the protocol ``forces(kappa, alpha, gamma, fz, vx,
mu_scale) -> (fx, fy, mx, my, mz)``, ``relaxation_lengths(fz, gamma)``,
``rolling_radius(fz, omega)`` and ``v_low``: :class:`~.magic_formula.MagicFormula`,
:class:`~.brush.BrushTyre` (Fiala), :class:`~.brush.LinearTyre`.

Slips (ISO-W axes of the wheel: x forward in the wheel plane, y left, z up):

.. math::

    \kappa = \frac{\Omega R_e - V_x}{V}, \qquad \tan\alpha = \frac{V_y}{V}, \qquad
    V = |V_x|\ (|V_x| \ge v_{low}), \quad V = \frac{V_x^2 + v_{low}^2}{2 v_{low}}\ (\text{below})

The regularised :math:`V` (C^1, at least :math:`v_{low}/2`) keeps the slips finite at
standstill; there the slip equations act as a stiff damper, so use the transient form
for manoeuvres that stop.  :math:`R_e` is the model's effective rolling radius.

Transient (``relaxation=True``): first-order relaxation lengths (Pacejka 2012, ch. 7,
the single-contact-point model); states :math:`u_\kappa = \kappa'` and
:math:`u_\alpha = \tan\alpha'`,

.. math::

    \sigma_\kappa \dot u_\kappa = \Omega R_e - V_x - |V_x| u_\kappa, \qquad
    \sigma_\alpha \dot u_\alpha = V_y - |V_x| u_\alpha

i.e. :math:`d\kappa'/dt = (|V_x|/\sigma_\kappa)(\kappa - \kappa')` and the same for
:math:`\tan\alpha'`: in travelled distance :math:`s` a step in slip is followed as
:math:`1 - e^{-s/\sigma}`.  Written with the slip velocities, the equations hold at
standstill with no division by :math:`V_x`: the tyre then behaves as a spring of
stiffness :math:`K/\sigma` (no artificial low-speed damping is added).  The forces are
the model's at :math:`(\kappa', \alpha')`, so they do not depend on ``vy`` or ``omega``
directly (no algebraic loop through the tyre).  :math:`\sigma` comes from
``relaxation_lengths_m`` or the model (load-dependent for the Magic Formula), floored at
``sigma_min_m``.

The force and moment vectors have the multibody load-port types, in the wheel's W axes
at the contact point: rotate them to global axes (and move the moment to the wheel
centre with the loaded radius) before applying them to a mechanism.

Limitations: single-point first-order relaxation only (no carcass/belt dynamics, no
gyroscopic or turn-slip terms, no MF-Tyre low-speed damping ``PTX4``/``PTY3``); the
relaxation lengths are evaluated at the current load (no state of their own); the
effective rolling radius is the model's (MF: ``BREFF``/``DREFF``/``FREFF``), the loaded
radius and vertical tyre stiffness are left to the vehicle model that computes ``fz``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.params import POSITIVE, Array

__all__ = ["Tyre", "regularized_speed"]


def regularized_speed(vx: float, v_low: float) -> float:
    """:math:`|V_x|` above ``v_low``, :math:`(V_x^2 + v_{low}^2)/(2v_{low})` below (C^1)."""
    av = abs(vx)
    return av if av >= v_low else (vx * vx + v_low * v_low) / (2.0 * v_low)


def _positive(v: Any) -> None:
    if not float(v) > 0:
        raise ValueError("must be > 0")


class Tyre(Block):
    r"""A tyre: wheel-centre kinematics and normal load in, contact forces and moments out.

    Slips :math:`\kappa = (\Omega R_e - V_x)/V`, :math:`\tan\alpha = V_y/V` with the
    regularised speed :math:`V` (module docstring); ``relaxation=True`` integrates
    :math:`\sigma_\kappa\dot\kappa' = \Omega R_e - V_x - |V_x|\kappa'` and
    :math:`\sigma_\alpha\dot u = V_y - |V_x| u`, :math:`u = \tan\alpha'` (state ``slip``).
    Forces: ``model.forces(kappa, alpha, camber, fz, vx, road_friction)``.

    Ports
    -----
    in   vx          scalar [m/s]  wheel-centre velocity along the wheel x axis
    in   vy          scalar [m/s]  wheel-centre velocity along the wheel y axis (left)
    in   omega       scalar [rad/s]  wheel spin, positive rolling forward (not with
                                    ``slip_input=True``)
    in   slip_ratio  scalar [1]    the slip ratio, with ``slip_input=True`` (instead of
                                    ``omega``)
    in   camber      scalar [rad]  inclination angle
    in   fz          scalar [N]    normal load (<= 0: wheel off the ground, zero forces)
    out  fx, fy      scalar [N]    contact forces on the tyre, W axes
    out  mx, my, mz  scalar [N*m]  overturning, rolling resistance, aligning moments
    out  force       (3,) [N]    ``[fx, fy, max(fz, 0)]``: the whole contact force
    out  moment      (3,) [N*m]  ``[mx, my, mz]``
    out  kappa       scalar [1]    slip ratio used (transient: :math:`\kappa'`)
    out  alpha       scalar [rad]  slip angle used (transient: :math:`\alpha'`)

    Feedthrough: steady, every output reads every input; transient, ``kappa``/``alpha``
    are state outputs and the forces read ``vx``, ``camber`` and ``fz`` only.  Context
    parameter ``road_friction`` (default 1) scales the friction (``LMUX``/``LMUY``, or
    ``mu``).

    Parameters
    ----------
    name : str
    model : MagicFormula, BrushTyre or LinearTyre
    relaxation : bool
        Transient slips with relaxation lengths (two continuous states).
    slip_input : bool
        Take the slip ratio as input ``slip_ratio`` instead of the wheel spin ``omega``.
    relaxation_lengths_m : (float, float), optional
        ``(sigma_kappa, sigma_alpha)``, overriding the model's.
    sigma_min_m : float
        Floor of the relaxation lengths (they vanish with the load).
    v_low_m_s : float, optional
        Slip regularisation speed; default the model's (``VXLOW``, or 1 m/s).
    initial_slip : (float, float)
        Initial ``(kappa', alpha')`` of the transient states.
    road_friction : float
        Default of the ``road_friction`` parameter.
    """

    argument_checks = {"initial_slip": Array(shape=(2,)), "relaxation_lengths_m": Array(shape=(2,)),
                       "sigma_min_m": POSITIVE, "v_low_m_s": POSITIVE, "road_friction": POSITIVE}

    def __init__(self, name: str, model: Any, *, relaxation: bool = False,
                 slip_input: bool = False, relaxation_lengths_m: tuple | None = None,
                 sigma_min_m: float = 0.02, v_low_m_s: float | None = None,
                 initial_slip: tuple = (0.0, 0.0), road_friction: float = 1.0) -> None:
        super().__init__(name)
        owner = f"Tyre '{name}'"
        for attr in ("forces", "relaxation_lengths", "rolling_radius", "v_low"):
            if not hasattr(model, attr):
                raise ParameterError(f"{owner}: the model {model!r} lacks '{attr}'; use "
                                     "MagicFormula, BrushTyre, LinearTyre or the same protocol")
        self.model = model
        self.relaxation, self.slip_input = bool(relaxation), bool(slip_input)
        self.v_low = float(model.v_low if v_low_m_s is None else v_low_m_s)
        if not self.v_low > 0:
            raise ParameterError(f"{owner}: v_low_m_s must be > 0, got {v_low_m_s!r}")
        if not sigma_min_m > 0:
            raise ParameterError(f"{owner}: sigma_min_m must be > 0, got {sigma_min_m!r}")
        self.sigma_min = float(sigma_min_m)
        if relaxation_lengths_m is not None:
            sk, sa = (float(v) for v in relaxation_lengths_m)
            if not (sk > 0 and sa > 0):
                raise ParameterError(f"{owner}: relaxation_lengths_m must be > 0, got "
                                     f"{relaxation_lengths_m!r}")
            self._fixed_sigma: tuple | None = (sk, sa)
        else:
            self._fixed_sigma = None
            if relaxation and model.relaxation_lengths(3000.0, 0.0) is None:
                raise ParameterError(
                    f"{owner}: relaxation=True needs relaxation lengths, and the model "
                    f"{model!r} gives none (MF: PTX*/PTY* or LONGITUDINAL_/LATERAL_STIFFNESS "
                    "in the .tir file); pass relaxation_lengths_m=(sigma_kappa, sigma_alpha)")
        if not slip_input and model.rolling_radius(3000.0, 0.0) is None:
            raise ParameterError(f"{owner}: the wheel spin input needs a rolling radius and "
                                 f"the model {model!r} has none: give radius_m to the model, "
                                 "or use slip_input=True")

        self.vx = self.declare_input("vx", unit="m/s", description="wheel-centre velocity, x")
        self.vy = self.declare_input("vy", unit="m/s", description="wheel-centre velocity, y")
        if slip_input:
            self.spin = self.declare_input("slip_ratio", unit="1")
        else:
            self.spin = self.declare_input("omega", unit="rad/s", description="wheel spin")
        self.camber = self.declare_input("camber", unit="rad")
        self.fz = self.declare_input("fz", unit="N", description="normal load")
        self.mu = self.declare_parameter("road_friction", float(road_friction), unit="1",
                                         validate=_positive)
        force_specs = [("fx", "N"), ("fy", "N"), ("mx", "N*m"), ("my", "N*m"), ("mz", "N*m"),
                       {"name": "force", "shape": (3,), "unit": "N"},
                       {"name": "moment", "shape": (3,), "unit": "N*m"}]
        slip_specs = [("kappa", "1"), ("alpha", "rad")]
        if relaxation:
            k0, a0 = (float(v) for v in initial_slip)
            self.slip = self.declare_continuous_state("slip", [k0, math.tan(a0)])
            self.declare_outputs(force_specs, self._forces_transient,
                                 depends_on=(self.vx, self.camber, self.fz))
            self.declare_outputs(slip_specs, self._slips_transient, depends_on=())
        else:
            self.slip = None
            self.declare_outputs(force_specs + slip_specs, self._steady)

    # ------------------------------------------------------------- helpers
    def steady_slips(self, vx: float, vy: float, spin: float, fz: float) -> tuple:
        """``(kappa, alpha)`` from the kinematics (``spin``: omega, or the slip ratio)."""
        v = regularized_speed(vx, self.v_low)
        if self.slip_input:
            kappa = spin
        else:
            kappa = (spin * self.model.rolling_radius(fz, spin) - vx) / v
        return kappa, math.atan(vy / v)

    def relaxation_lengths(self, fz: float, gamma: float) -> tuple:
        """``(sigma_kappa, sigma_alpha)`` [m] used at load ``fz`` (floored)."""
        s = self._fixed_sigma or self.model.relaxation_lengths(fz, gamma)
        return max(float(s[0]), self.sigma_min), max(float(s[1]), self.sigma_min)

    def _out(self, kappa: float, alpha: float, ctx: Any) -> tuple:
        fz = ctx.input(self.fz)
        vx = ctx.input(self.vx)
        fx, fy, mx, my, mz = self.model.forces(kappa, alpha, ctx.input(self.camber), fz, vx,
                                               ctx.param(self.mu))
        fx, fy, mx, my, mz = float(fx), float(fy), float(mx), float(my), float(mz)
        return (fx, fy, mx, my, mz, np.array([fx, fy, max(fz, 0.0)]), np.array([mx, my, mz]))

    # --------------------------------------------------------------- calcs
    def _steady(self, ctx: Any) -> tuple:
        kappa, alpha = self.steady_slips(ctx.input(self.vx), ctx.input(self.vy),
                                         ctx.input(self.spin), ctx.input(self.fz))
        return self._out(kappa, alpha, ctx) + (kappa, alpha)

    def _slips_transient(self, ctx: Any) -> tuple:
        uk, ua = ctx.state(self.slip)
        return float(uk), math.atan(ua)

    def _forces_transient(self, ctx: Any) -> tuple:
        uk, ua = ctx.state(self.slip)
        return self._out(float(uk), math.atan(ua), ctx)

    def derivatives(self, ctx: Any) -> np.ndarray:
        uk, ua = ctx.state(self.slip)
        vx, vy = ctx.input(self.vx), ctx.input(self.vy)
        fz, spin = ctx.input(self.fz), ctx.input(self.spin)
        sk, sa = self.relaxation_lengths(fz, ctx.input(self.camber))
        avx = abs(vx)
        if self.slip_input:
            duk = avx * (spin - uk) / sk
        else:
            duk = (spin * self.model.rolling_radius(fz, spin) - vx - avx * uk) / sk
        return np.array([duk, (vy - avx * ua) / sa])
