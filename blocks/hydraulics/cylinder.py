"""Double-acting hydraulic cylinder: chamber pressures, force with friction, end stops."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.errors import ParameterError, StepError

from . import _cforms
from .fluid import MINERAL_OIL, Fluid
from .orifice import check_positive
from .valves import smooth_opening
from .volume import DEFAULT_MIN_PRESSURE_PA, LowPressureGuard, pressure_rate


def chamber_outputs_c(block: Block, cg: Any, cyl: DoubleActingCylinder) -> dict[str, str]:
    """C of the outputs :func:`declare_chambers` declares on ``block`` (``force`` by
    ``cyl``'s :meth:`~DoubleActingCylinder.rod_force`, ``p_1``, ``p_2``)."""
    p1, p2 = cg.x(block.x_p1), cg.x(block.x_p2)
    return {"force": _cforms.block(_cforms.rod_force(cg, cyl, p1, p2, cg.u(block.x),
                                                     cg.u(block.v), cg.y(block.force))),
            "p_1": f"{cg.y(block.p_1)} = {p1};", "p_2": f"{cg.y(block.p_2)} = {p2};"}


def declare_chambers(block: Block, owner: str, p1_0: float, p2_0: float, p_min: float,
                     band: float | None, rod_force: Any) -> None:
    """On ``block`` (with inputs ``x``, ``v``): the chamber pressure states ``x_p1``,
    ``x_p2``, their low-pressure ``guard`` and the outputs ``force`` (by
    ``rod_force(p1, p2, x, v)``), ``p_1``, ``p_2``."""
    block.x_p1 = block.declare_continuous_state("p_1", float(p1_0))
    block.x_p2 = block.declare_continuous_state("p_2", float(p2_0))
    block.guard = LowPressureGuard(
        block, owner, p_min, band,
        {"p_1": block.x_p1, "p_2": block.x_p2},
        {"p1_0_pa": float(p1_0), "p2_0_pa": float(p2_0)})
    block.force = block.declare_output(
        "force", lambda ctx: rod_force(ctx.state(block.x_p1), ctx.state(block.x_p2),
                                       ctx.input(block.x), ctx.input(block.v)),
        unit="N", depends_on=(block.x, block.v))
    block.p_1 = block.declare_output("p_1", lambda ctx: ctx.state(block.x_p1), unit="Pa",
                                     depends_on=())
    block.p_2 = block.declare_output("p_2", lambda ctx: ctx.state(block.x_p2), unit="Pa",
                                     depends_on=())


@dataclass(frozen=True)
class CylinderFriction:
    """Regularized Stribeck + Coulomb + viscous friction of the piston and rod seals.

    .. math:: F_f(v) = \\left[F_C + (F_S - F_C)\\, e^{-(v/v_S)^2}\\right]
              \\tanh(v / v_t) + \\sigma v

    (Armstrong-Helouvry; anchors sec. 2.1).  The tanh replaces sign(v): below
    :math:`v_t` the Coulomb part acts like a steep viscous damper, so there is no
    true stiction (a body under a small constant load creeps at
    :math:`v \\approx v_t\\,F/F_S`).  ``coulomb_n = static_n = 0`` leaves viscous
    friction only (the LIM benchmark: :math:`\\sigma = 10^5` N s/m).
    """

    coulomb_n: float = 0.0
    static_n: float | None = None
    stribeck_velocity_m_s: float = 0.01
    viscous_n_s_m: float = 0.0
    tanh_velocity_m_s: float = 1e-3

    def __post_init__(self) -> None:
        own = "CylinderFriction"
        fs = self.coulomb_n if self.static_n is None else self.static_n
        object.__setattr__(self, "static_n", float(fs))
        if not self.coulomb_n >= 0:
            raise ParameterError(f"{own}: coulomb_n must be >= 0, got {self.coulomb_n!r}")
        if not fs >= self.coulomb_n:
            raise ParameterError(f"{own}: static_n ({fs!r}) must be >= coulomb_n "
                                 f"({self.coulomb_n!r})")
        if not self.viscous_n_s_m >= 0:
            raise ParameterError(f"{own}: viscous_n_s_m must be >= 0, got {self.viscous_n_s_m!r}")
        check_positive(own, stribeck_velocity_m_s=self.stribeck_velocity_m_s,
                       tanh_velocity_m_s=self.tanh_velocity_m_s)

    def force(self, v: float) -> float:
        """Friction force [N] opposing the velocity v [m/s] (positive for v > 0)."""
        fc, fs = self.coulomb_n, self.static_n
        f = self.viscous_n_s_m * v
        if fs > 0.0:
            f += (fc + (fs - fc) * math.exp(-(v / self.stribeck_velocity_m_s) ** 2)) \
                * math.tanh(v / self.tanh_velocity_m_s)
        return f


class DoubleActingCylinder(Block):
    """Double-acting (differential or through-rod) cylinder with its two chamber pressures.

    Chamber 1 is the piston side (grows as the rod extends, x increases),
    chamber 2 the rod side.  x is the piston position in [0, stroke], v = dx/dt.

    .. math::

        V_1 &= V_{1,0} + A_1 x, \\qquad V_2 = V_{2,0} + A_2 (L - x) \\\\
        \\dot p_1 &= \\frac{\\beta_e(p_1)}{V_1}(q_1 - A_1 v), \\qquad
        \\dot p_2 = \\frac{\\beta_e(p_2)}{V_2}(q_2 + A_2 v) \\\\
        F_p &= p_1 A_1 - p_2 A_2 - p_{amb}(A_1 - A_2) \\\\
        F &= F_p - F_f(v) - (1 - \\eta)\\,|F_p| \\tanh(v/v_t) + F_{stop}(x, v)

    with :math:`F_f` from :class:`CylinderFriction`, :math:`\\eta` an optional
    efficiency-type seal loss (the seed's Paper III eq. 32 as reconstructed,
    default :math:`\\eta = 1`: none) and the end stops, stiff penalty
    spring-dampers beyond the stroke with penetration
    :math:`\\delta = -x` (x < 0) or :math:`x - L` (x > L):

    .. math::

        |F_{stop}| = \\max\\big(0,\\ k_s \\delta
                     + c_s\\,S(\\delta/\\delta_c)\\,\\dot\\delta\\big)

    pushing back into the stroke (never pulling), where the damping is blended
    in over the depth :math:`\\delta_c` by the C^1 smoothstep S (the seed's nip
    contact, Paper III eq. 30), so the force is continuous in x.  Size
    :math:`k_s` so the penetration stays far below the dead volumes' equivalent
    lengths (:math:`V_{i,0}/A_i`), and :math:`c_s` near :math:`2\\sqrt{k_s m}`.
    Pressures are absolute and handled below ``min_pressure_pa`` as in
    :mod:`blocks.hydraulics.volume` (softened, warned once).

    Ports
    -----
    in   q_1        scalar [m^3/s]  flow into chamber 1 (piston side)
    in   q_2        scalar [m^3/s]  flow into chamber 2 (rod side)
    in   x          scalar [m]    piston position (0 fully retracted)
    in   v          scalar [m/s]  piston velocity dx/dt
    out  force      scalar [N]    force on the rod, positive extending; reads x and v
    out  p_1        scalar [Pa]   chamber 1 pressure; state only
    out  p_2        scalar [Pa]   chamber 2 pressure; state only
    out  volume_1   scalar [m^3]  chamber 1 volume; reads x
    out  volume_2   scalar [m^3]  chamber 2 volume; reads x

    Parameters
    ----------
    area_1_m2, area_2_m2 : float
        Piston area and annulus area (equal for a through-rod cylinder).
    stroke_m : float
        Stroke L.
    dead_volume_1_m3, dead_volume_2_m3 : float
        Chamber volumes at the end of stroke (plus hoses, if lumped in); >= 0,
        but a zero dead volume makes the chamber infinitely stiff at its end.
    fluid : Fluid
    p1_0_pa, p2_0_pa : float
        Initial absolute chamber pressures.
    friction : CylinderFriction or None
    efficiency : float
        Efficiency-type seal loss :math:`\\eta \\in (0, 1]`.
    end_stop_stiffness_n_m, end_stop_damping_n_s_m, end_stop_damping_depth_m : float
        :math:`k_s`, :math:`c_s`, :math:`\\delta_c`.
    ambient_pressure_pa : float
        Pressure acting on the rod's outer end (default 0: the force is
        :math:`p_1 A_1 - p_2 A_2`; with :math:`A_1 = A_2` it cancels anyway).
    min_pressure_pa, cavitation_band_pa : float
        Low-pressure bound of the chambers and its softening band [Pa], as
        :class:`~blocks.hydraulics.volume.Volume`.
    """

    def __init__(self, name: str, *, area_1_m2: float, area_2_m2: float, stroke_m: float,
                 dead_volume_1_m3: float = 0.0, dead_volume_2_m3: float = 0.0,
                 fluid: Fluid = MINERAL_OIL, p1_0_pa: float = 1e5, p2_0_pa: float = 1e5,
                 friction: CylinderFriction | None = None, efficiency: float = 1.0,
                 end_stop_stiffness_n_m: float = 1e9, end_stop_damping_n_s_m: float = 1e6,
                 end_stop_damping_depth_m: float = 1e-4, ambient_pressure_pa: float = 0.0,
                 min_pressure_pa: float = DEFAULT_MIN_PRESSURE_PA,
                 cavitation_band_pa: float | None = None) -> None:
        super().__init__(name)
        own = f"DoubleActingCylinder '{name}'"
        check_positive(own, area_1_m2=area_1_m2, area_2_m2=area_2_m2, stroke_m=stroke_m,
                       end_stop_stiffness_n_m=end_stop_stiffness_n_m,
                       end_stop_damping_depth_m=end_stop_damping_depth_m)
        for label, v in (("dead_volume_1_m3", dead_volume_1_m3),
                         ("dead_volume_2_m3", dead_volume_2_m3),
                         ("end_stop_damping_n_s_m", end_stop_damping_n_s_m),
                         ("ambient_pressure_pa", ambient_pressure_pa)):
            if not (v >= 0 and math.isfinite(v)):
                raise ParameterError(f"{own}: {label} must be finite and >= 0, got {v!r}")
        if not 0.0 < efficiency <= 1.0:
            raise ParameterError(f"{own}: efficiency must lie in (0, 1], got {efficiency!r}")
        if friction is not None and not isinstance(friction, CylinderFriction):
            raise ParameterError(f"{own}: friction must be a CylinderFriction or None, got "
                                 f"{type(friction).__name__}")
        self.A1, self.A2, self.L = float(area_1_m2), float(area_2_m2), float(stroke_m)
        self.V10, self.V20 = float(dead_volume_1_m3), float(dead_volume_2_m3)
        self.fluid, self.beta = fluid, fluid.beta
        self.friction, self.eta = friction, float(efficiency)
        self.k_s, self.c_s = float(end_stop_stiffness_n_m), float(end_stop_damping_n_s_m)
        self.d_c, self.p_amb = float(end_stop_damping_depth_m), float(ambient_pressure_pa)
        self.v_t = friction.tanh_velocity_m_s if friction is not None else 1e-3

        self.q_1 = self.declare_input("q_1", unit="m^3/s")
        self.q_2 = self.declare_input("q_2", unit="m^3/s")
        self.x = self.declare_input("x", unit="m")
        self.v = self.declare_input("v", unit="m/s")
        declare_chambers(self, own, p1_0_pa, p2_0_pa, min_pressure_pa, cavitation_band_pa,
                         self.rod_force)
        self.volume_1, self.volume_2 = self.declare_outputs(
            [("volume_1", "m^3"), ("volume_2", "m^3")],
            lambda ctx: self.volumes(ctx.input(self.x)), depends_on=(self.x,))

    # ------------------------------------------------------------ equations
    def volumes(self, x: float) -> tuple[float, float]:
        """Chamber volumes (V1, V2) [m^3] at piston position x."""
        return self.V10 + self.A1 * x, self.V20 + self.A2 * (self.L - x)

    def end_stop_force(self, x: float, v: float) -> float:
        """Penalty force of the end stops [N], positive extending."""
        if x < 0.0:
            d, dd = -x, -v
            return max(0.0, self.k_s * d + self.c_s * smooth_opening(d / self.d_c) * dd)
        if x > self.L:
            d, dd = x - self.L, v
            return -max(0.0, self.k_s * d + self.c_s * smooth_opening(d / self.d_c) * dd)
        return 0.0

    def rod_force(self, p1: float, p2: float, x: float, v: float) -> float:
        """Force on the rod [N], positive extending (class docstring)."""
        fp = p1 * self.A1 - p2 * self.A2 - self.p_amb * (self.A1 - self.A2)
        f = fp
        if self.friction is not None:
            f -= self.friction.force(v)
        if self.eta < 1.0:
            f -= (1.0 - self.eta) * abs(fp) * math.tanh(v / self.v_t)
        return f + self.end_stop_force(x, v)

    def pressure_rates(self, p1: float, p2: float, q1: float, q2: float, x: float, v: float,
                       t: float, owner: Block | None = None) -> tuple[float, float]:
        """``(p_1', p_2')`` for inflows q1, q2 at piston position x and velocity v
        (``owner``: the block named in errors, default this cylinder)."""
        v1, v2 = self.volumes(x)
        if not (v1 > 0.0 and v2 > 0.0):
            owner = owner or self
            raise StepError(
                f"{type(owner).__name__} {owner.path!r}: chamber volume <= 0 "
                f"(V1 = {v1:.6g}, V2 = {v2:.6g} m^3) at x = {x:.6g} m, t = {t:.9g} s; give "
                "positive dead volumes or stiffer end stops")
        g = self.guard
        return (pressure_rate(p1, self.beta(p1), v1, q1 - self.A1 * v, g.p_min, g.band),
                pressure_rate(p2, self.beta(p2), v2, q2 + self.A2 * v, g.p_min, g.band))

    def derivatives(self, ctx: Any) -> tuple[float, float]:
        return self.pressure_rates(ctx.state(self.x_p1), ctx.state(self.x_p2),
                                   ctx.input(self.q_1), ctx.input(self.q_2),
                                   ctx.input(self.x), ctx.input(self.v), ctx.time)

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`rod_force` (friction, seal loss, end stops),
        :meth:`volumes` and :meth:`pressure_rates` (the chamber-volume check fails the call
        as the Python raises); the low-pressure monitor's C condition
        (:meth:`~.volume.LowPressureGuard.c_monitors`)."""
        f = c_float
        x = cg.u(self.x)
        outputs = chamber_outputs_c(self, cg, self)
        outputs["volume_1"] = f"{cg.y(self.volume_1)} = {f(self.V10)} + {f(self.A1)} * {x};"
        outputs["volume_2"] = (f"{cg.y(self.volume_2)} = {f(self.V20)} + {f(self.A2)} * "
                               f"({f(self.L)} - {x});")
        der = _cforms.chamber_rates(
            cg, self, self.guard, cg.x(self.x_p1), cg.x(self.x_p2), cg.u(self.q_1),
            cg.u(self.q_2), x, cg.u(self.v), f"DoubleActingCylinder '{self.path}'")
        return CModel(outputs=outputs, derivatives=der + f"{cg.dx(self.x_p1)} = r1;\n"
                      f"{cg.dx(self.x_p2)} = r2;", monitors=self.guard.c_monitors(cg))
