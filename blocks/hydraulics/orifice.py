"""Turbulent orifice flow with a laminar regularization, and the catalogue (semi-empirical) form.

Flow law
--------
Sharp-edged orifice, turbulent (Merritt 1967, sec. 3.2):

.. math:: Q = C_d A \\sqrt{2 |\\Delta p| / \\rho}\\; \\mathrm{sign}(\\Delta p)
          = K\\, \\mathrm{sign}(\\Delta p) \\sqrt{|\\Delta p|},
          \\qquad K = C_d A \\sqrt{2/\\rho}

Its slope :math:`dQ/d\\Delta p = K / (2\\sqrt{|\\Delta p|})` is infinite at
:math:`\\Delta p = 0`, which stalls Newton iterations of stiff solvers.  Below a
transition pressure :math:`\\Delta p_{tr}` the square root is replaced by the odd
cubic that matches value and slope at :math:`|\\Delta p| = \\Delta p_{tr}`
(:func:`regularized_sqrt`), with :math:`r = \\Delta p / \\Delta p_{tr}`:

.. math:: \\sqrt{\\Delta p_{tr}}\\; \\left(\\tfrac{5}{4} r - \\tfrac{1}{4} r^3\\right),
          \\qquad |r| < 1

so Q is C^1 (value and first derivative continuous), monotone, exactly turbulent
for :math:`|\\Delta p| \\ge \\Delta p_{tr}`, and the slope at zero is finite:
:math:`dQ/d\\Delta p(0) = 5K / (4\\sqrt{\\Delta p_{tr}})`, 2.5 times the
turbulent slope at the transition point.  The near-linear part mimics the
laminar regime; :func:`transition_pressure` picks :math:`\\Delta p_{tr}` from a
critical Reynolds number.  (The anchors list a linear segment, which is only
C^0, and the smooth form :math:`\\Delta p / (\\Delta p^2 + \\Delta p_{tr}^2)^{1/4}`,
which never equals the turbulent law exactly; Ellman and Piche (1999) give
another C^1 two-regime formula.)

Semi-empirical valve (Handroos and Vilenius 1991, as cited by the seed, thesis
sec. 3.1.1): the coefficient comes from the catalogue nominal flow
:math:`Q_N` at the nominal pressure drop :math:`\\Delta p_N` per metering edge:

.. math:: Q = Q_N\\, u \\sqrt{\\Delta p / \\Delta p_N}
          = C_v\\, u\\, \\mathrm{sign}(\\Delta p)\\sqrt{|\\Delta p|},
          \\qquad C_v = Q_N / \\sqrt{\\Delta p_N}

with the same regularization.  Catalogues often quote :math:`Q_N` at 35 bar per
edge (70 bar over P-A-B-T); pass the per-edge value.
"""

from __future__ import annotations

import math
from typing import Any

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.errors import ParameterError

from . import _cforms
from .fluid import MINERAL_OIL, Fluid

#: Default transition pressure [Pa] (0.1 bar): well below working pressure drops.
DEFAULT_TRANSITION_PA = 1e4


def regularized_sqrt(dp: float, dp_tr: float) -> float:
    """Signed square root :math:`\\mathrm{sign}(\\Delta p)\\sqrt{|\\Delta p|}`.

    Replaced by the C^1 odd cubic for :math:`|\\Delta p| < \\Delta p_{tr}` (module docstring).
    """
    if dp >= dp_tr:
        return math.sqrt(dp)
    if dp <= -dp_tr:
        return -math.sqrt(-dp)
    r = dp / dp_tr
    return math.sqrt(dp_tr) * r * (1.25 - 0.25 * r * r)


def regularized_sqrt_derivative(dp: float, dp_tr: float) -> float:
    """Derivative of :func:`regularized_sqrt` with respect to ``dp`` (finite everywhere)."""
    a = abs(dp)
    if a >= dp_tr:
        return 0.5 / math.sqrt(a)
    r = dp / dp_tr
    return (1.25 - 0.75 * r * r) / math.sqrt(dp_tr)


def orifice_coefficient(cd: float, area_m2: float, density_kg_m3: float) -> float:
    """:math:`K = C_d A \\sqrt{2/\\rho}` in m^3/s/Pa^0.5."""
    return cd * area_m2 * math.sqrt(2.0 / density_kg_m3)


def nominal_coefficient(q_nominal_m3_s: float, dp_nominal_pa: float) -> float:
    """:math:`C_v = Q_N / \\sqrt{\\Delta p_N}` in m^3/s/Pa^0.5."""
    return q_nominal_m3_s / math.sqrt(dp_nominal_pa)


def transition_pressure(cd: float, area_m2: float, fluid: Fluid, re_crit: float = 100.0) -> float:
    """Pressure drop at which the orifice Reynolds number reaches ``re_crit``.

    With the mean jet velocity :math:`v = Q/A = C_d\\sqrt{2\\Delta p/\\rho}` and the
    hydraulic diameter :math:`D_h = \\sqrt{4A/\\pi}` (round hole),
    :math:`Re = v D_h/\\nu` gives

    .. math:: \\Delta p_{tr} = \\frac{\\rho}{2}\\left(\\frac{Re_{cr}\\,\\nu}{C_d D_h}\\right)^2

    Critical Reynolds numbers of sharp orifices are small (about 10 to a few
    hundred; Merritt 1967 sec. 3.2); the default 100 is a middle value.
    """
    for label, v in (("cd", cd), ("area_m2", area_m2), ("re_crit", re_crit)):
        if not v > 0:
            raise ParameterError(f"transition_pressure: {label} must be > 0, got {v!r}")
    dh = math.sqrt(4.0 * area_m2 / math.pi)
    return 0.5 * fluid.density_kg_m3 * (re_crit * fluid.kinematic_viscosity_m2_s / (cd * dh)) ** 2


def check_positive(owner: str, **values: float) -> None:
    for label, v in values.items():
        try:
            ok = float(v) > 0 and math.isfinite(float(v))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ParameterError(f"{owner}: {label} must be finite and > 0, got {v!r}")


def flow_coefficient(owner: str, *, area_m2: float | None, cd: float, fluid: Fluid,
                     q_nominal_m3_s: float | None, dp_nominal_pa: float | None,
                     area_name: str = "area_max_m2") -> float:
    """The coefficient K of a fully open edge, from an area or from catalogue data.

    Give either ``area_m2`` (with ``cd`` and ``fluid``) or both ``q_nominal_m3_s``
    and ``dp_nominal_pa``, not both groups; ``area_name`` is the caller's name of
    the area argument, for the error messages.
    """
    by_area = area_m2 is not None
    by_cat = q_nominal_m3_s is not None or dp_nominal_pa is not None
    if by_area == by_cat:
        raise ParameterError(
            f"{owner}: give either {area_name} (with cd and fluid) or q_nominal_m3_s and "
            "dp_nominal_pa (catalogue data), exactly one of the two")
    if by_area:
        check_positive(owner, **{area_name: area_m2}, cd=cd)
        return orifice_coefficient(float(cd), float(area_m2), fluid.density_kg_m3)
    if q_nominal_m3_s is None or dp_nominal_pa is None:
        raise ParameterError(f"{owner}: catalogue data needs both q_nominal_m3_s and "
                             "dp_nominal_pa")
    check_positive(owner, q_nominal_m3_s=q_nominal_m3_s, dp_nominal_pa=dp_nominal_pa)
    return nominal_coefficient(float(q_nominal_m3_s), float(dp_nominal_pa))


class Orifice(Block):
    """Fixed (or signal-driven) turbulent orifice with laminar regularization.

    .. math:: Q = C_d A \\sqrt{2/\\rho}\\; s(p_a - p_b), \\qquad
              s = \\text{regularized } \\mathrm{sign}(\\Delta p)\\sqrt{|\\Delta p|}

    (see the module docstring; exact turbulent law for
    :math:`|\\Delta p| \\ge \\Delta p_{tr}`, C^1 cubic below).

    Ports
    -----
    in   p_a    scalar [Pa]    upstream pressure (absolute)
    in   p_b    scalar [Pa]    downstream pressure (absolute)
    in   area   scalar [m^2]   only with ``area_m2=None``: the opening area (clipped at 0)
    out  q      scalar [m^3/s]  flow from a to b; feedthrough from every input

    Parameters
    ----------
    area_m2 : float or None
        Fixed area; ``None`` declares the ``area`` input.
    cd : float
        Discharge coefficient (0.6-0.7 for sharp edges; LIM uses 0.67).
    fluid : Fluid
        Density for the flow law.
    transition_pressure_pa : float
        :math:`\\Delta p_{tr}` (default 1e4 Pa; see :func:`transition_pressure`).
    """

    def __init__(self, name: str, *, area_m2: float | None, cd: float = 0.67,
                 fluid: Fluid = MINERAL_OIL,
                 transition_pressure_pa: float = DEFAULT_TRANSITION_PA) -> None:
        super().__init__(name)
        own = f"Orifice '{name}'"
        check_positive(own, cd=cd, transition_pressure_pa=transition_pressure_pa)
        self.cd, self.fluid, self.dp_tr = float(cd), fluid, float(transition_pressure_pa)
        self.p_a = self.declare_input("p_a", unit="Pa")
        self.p_b = self.declare_input("p_b", unit="Pa")
        c = self.cd * math.sqrt(2.0 / fluid.density_kg_m3)
        self.c, dp_tr = c, self.dp_tr
        if area_m2 is None:
            self.area = self.declare_input("area", unit="m^2")

            def calc(ctx):
                a = max(ctx.input(self.area), 0.0)
                return c * a * regularized_sqrt(ctx.input(self.p_a) - ctx.input(self.p_b), dp_tr)
        else:
            check_positive(own, area_m2=area_m2)
            self.area = None
            k = c * float(area_m2)
            self.k = k

            def calc(ctx):
                return k * regularized_sqrt(ctx.input(self.p_a) - ctx.input(self.p_b), dp_tr)
        self.q = self.declare_output("q", calc, unit="m^3/s")

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors the ``q`` output (``regularized_sqrt`` as a C helper)."""
        _cforms.use(cg, "rsqrt")
        rs = f"cosim_hyd_rsqrt({cg.u(self.p_a)} - {cg.u(self.p_b)}, {c_float(self.dp_tr)})"
        if self.area is None:
            return CModel(outputs={"q": f"{cg.y(self.q)} = {c_float(self.k)} * {rs};"})
        a = cg.u(self.area)
        return CModel(outputs={"q": _cforms.block(
            f"double a = (0.0 > {a}) ? 0.0 : {a};\n"
            f"{cg.y(self.q)} = {c_float(self.c)} * a * {rs};")})


class NominalFlowValve(Block):
    """Semi-empirical valve edge from catalogue data (Handroos and Vilenius 1991).

    .. math:: Q = \\frac{Q_N}{\\sqrt{\\Delta p_N}}\\; \\mathrm{clip}(u, 0, 1)\\; s(p_a - p_b)

    with :math:`s` the regularized signed square root (module docstring), so that
    :math:`Q = Q_N u \\sqrt{\\Delta p/\\Delta p_N}` for :math:`\\Delta p \\ge \\Delta p_{tr}`.
    The opening is clipped to [0, 1] (the spool's travel); feed u through a
    spool-dynamics block (e.g. a second-order :class:`blocks.lti.TransferFunction`)
    upstream if the valve's bandwidth matters.

    Ports
    -----
    in   p_a    scalar [Pa]    upstream pressure
    in   p_b    scalar [Pa]    downstream pressure
    in   u      scalar [1]     relative opening in [0, 1]
    out  q      scalar [m^3/s]  flow from a to b; feedthrough from every input

    Parameters
    ----------
    q_nominal_m3_s, dp_nominal_pa : float
        :math:`Q_N` [m^3/s] at the pressure drop :math:`\\Delta p_N` [Pa], fully open.
    transition_pressure_pa : float
        :math:`\\Delta p_{tr}` [Pa] (default 1e4 Pa).
    """

    def __init__(self, name: str, *, q_nominal_m3_s: float, dp_nominal_pa: float,
                 transition_pressure_pa: float = DEFAULT_TRANSITION_PA) -> None:
        super().__init__(name)
        own = f"NominalFlowValve '{name}'"
        check_positive(own, q_nominal_m3_s=q_nominal_m3_s, dp_nominal_pa=dp_nominal_pa,
                       transition_pressure_pa=transition_pressure_pa)
        self.cv = nominal_coefficient(float(q_nominal_m3_s), float(dp_nominal_pa))
        self.dp_tr = float(transition_pressure_pa)
        self.p_a = self.declare_input("p_a", unit="Pa")
        self.p_b = self.declare_input("p_b", unit="Pa")
        self.u = self.declare_input("u", unit="1")
        cv, dp_tr = self.cv, self.dp_tr

        def calc(ctx):
            u = min(max(ctx.input(self.u), 0.0), 1.0)
            return cv * u * regularized_sqrt(ctx.input(self.p_a) - ctx.input(self.p_b), dp_tr)
        self.q = self.declare_output("q", calc, unit="m^3/s")

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors the ``q`` output (``regularized_sqrt`` as a C helper)."""
        _cforms.use(cg, "rsqrt")
        rs = f"cosim_hyd_rsqrt({cg.u(self.p_a)} - {cg.u(self.p_b)}, {c_float(self.dp_tr)})"
        return CModel(outputs={"q": _cforms.block(
            "double u;\n" + _cforms.clip(cg.u(self.u), "0.0", "1.0", "u") + "\n"
            f"{cg.y(self.q)} = {c_float(self.cv)} * u * {rs};")})
