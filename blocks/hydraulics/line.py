"""Hydraulic line (pipe or hose) as a chain of lumped sections: inertance, resistance, capacitance.

Per unit of a line of length l, inner diameter d, area :math:`A = \\pi d^2/4`
(Merritt 1967 ch. 4; Watton, *Fundamentals of Fluid Power Control*, ch. 7):

.. math::

    L = \\frac{\\rho\\, l}{A} \\;[\\mathrm{Pa\\,s^2/m^3}], \\qquad
    R = \\frac{128\\, \\mu\\, l}{\\pi d^4} = \\frac{128\\, \\rho \\nu\\, l}{\\pi d^4}
        \\;[\\mathrm{Pa\\,s/m^3}], \\qquad
    C = \\frac{A\\, l}{\\beta_e} \\;[\\mathrm{m^3/Pa}]

(fluid inertia, laminar Hagen-Poiseuille resistance, compressibility), with
:math:`1/\\beta_e = 1/\\beta(p) + 1/\\beta_{wall}` when a hose wall modulus is
given.  The line is cut into n equal segments (:math:`L_s = L/n`, :math:`R_s = R/n`,
:math:`C_s = C/n`) and lumped as a chain of nodes (pressure states,
:math:`\\dot p_j = \\beta_e(p_j)/V_j\\,(q_{in} - q_{out})`) and links (flow states,
:math:`L_k \\dot q_k = p_{up} - p_{down} - R_k q_k`):

======== ================================= ================================ =====================
section  nodes (volumes)                   links (inertance, resistance)    inputs at end a / b
======== ================================= ================================ =====================
"pi"     n+1: V/2n, V/n, ..., V/n, V/2n    n: L_s, R_s                      flow / flow
"T"      n: V/n each                       n+1: L_s/2, L_s, ..., L_s/2      pressure / pressure
"mixed"  n: V/n, ..., V/n, V/2n            n: L_s, R_s                      pressure / flow
======== ================================= ================================ =====================

"pi" ends on capacitances (the line gives the end pressures, like a
:class:`~blocks.hydraulics.volume.Volume`); "T" ends on inertances (it takes
the end pressures and gives the end flows, like an orifice); "mixed" is the
pi chain whose end-a capacitance is absorbed by a stiff upstream pressure (a
pump or supply node), the natural model of a line fed at a and closed by a
valve at b.

Resonances and the distributed line
-----------------------------------
With uniform segments every link has :math:`R_k/L_k = R/L = 32\\nu/d^2 = 2\\sigma`,
so the damping is proportional and the modes of the lumped chain are exactly
:math:`s = -\\sigma \\pm j\\sqrt{\\omega_k^2 - \\sigma^2}` with (the discrete
wave equation; c = :math:`\\sqrt{\\beta_e/\\rho} = l/\\sqrt{LC}`):

* "pi" with both ends blocked, or "T" with both end pressures held:
  :math:`\\omega_k = \\frac{2n c}{l}\\sin\\frac{k\\pi}{2n}`, k = 1..n, which tends
  to the distributed half-wave modes :math:`\\omega_k = k\\pi c/l`
  (:math:`f_1 = c/2l`); one section (n = 1) gives :math:`\\omega = 2/\\sqrt{LC}`,
  :math:`2/\\pi` = 64 % of the distributed value.
* "mixed" with p_a held and end b blocked:
  :math:`\\omega_k = \\frac{2n c}{l}\\sin\\frac{(2k-1)\\pi}{4n}`, tending to the
  quarter-wave modes :math:`(2k-1)\\pi c/(2l)` (:math:`f_1 = c/4l`); one section
  gives :math:`\\omega = \\sqrt{2/(LC)}`, 90 % of the quarter-wave frequency, 4
  sections 99.4 %.

The first-mode error is about :math:`x^2/6` with :math:`x = \\pi/2n` ("pi"/"T") or
:math:`\\pi/4n` ("mixed"): choose n so the highest frequency that matters in the
circuit is well below the n-th lumped mode.
(:func:`lumped_natural_frequencies_hz` evaluates these formulas.)

Limitations: the resistance is the steady laminar one, valid for
:math:`Re = 4|q|/(\\pi d \\nu) < 2300`; turbulent flow and frequency-dependent
(unsteady) friction (Zielke 1968) add damping that this model underestimates,
so resonance peaks are too sharp; minor losses (bends, fittings) are not
included; the wall compliance, if given, is a constant modulus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.errors import ParameterError

from . import _cforms
from .fluid import MINERAL_OIL, Fluid
from .orifice import check_positive
from .volume import DEFAULT_MIN_PRESSURE_PA, LowPressureGuard, pressure_rate

SECTIONS = ("pi", "T", "mixed")


@dataclass(frozen=True)
class LineParameters:
    """Lumped parameters of a whole line (module docstring) at a bulk modulus ``beta_pa``."""

    length_m: float
    diameter_m: float
    density_kg_m3: float
    kinematic_viscosity_m2_s: float
    beta_pa: float

    @property
    def area_m2(self) -> float:
        return math.pi * self.diameter_m**2 / 4.0

    @property
    def volume_m3(self) -> float:
        return self.area_m2 * self.length_m

    @property
    def inertance(self) -> float:
        """:math:`L = \\rho l / A` [Pa s^2/m^3]."""
        return self.density_kg_m3 * self.length_m / self.area_m2

    @property
    def resistance(self) -> float:
        """:math:`R = 128 \\rho \\nu l / (\\pi d^4)` [Pa s/m^3] (laminar)."""
        return (128.0 * self.density_kg_m3 * self.kinematic_viscosity_m2_s * self.length_m
                / (math.pi * self.diameter_m**4))

    @property
    def capacitance(self) -> float:
        """:math:`C = A l / \\beta_e` [m^3/Pa]."""
        return self.volume_m3 / self.beta_pa

    @property
    def wave_speed_m_s(self) -> float:
        """:math:`c = \\sqrt{\\beta_e/\\rho}`."""
        return math.sqrt(self.beta_pa / self.density_kg_m3)

    @property
    def quarter_wave_frequency_hz(self) -> float:
        """:math:`c / 4l`: first mode of the distributed line, one end held, one closed."""
        return self.wave_speed_m_s / (4.0 * self.length_m)

    @property
    def half_wave_frequency_hz(self) -> float:
        """:math:`c / 2l`: first mode, both ends closed (or both held)."""
        return self.wave_speed_m_s / (2.0 * self.length_m)


def lumped_natural_frequencies_hz(params: LineParameters, section: str,
                                  segments: int) -> np.ndarray:
    """Undamped natural frequencies [Hz] of the lumped chain (module docstring).

    "pi": both ends blocked; "T": both end pressures held; "mixed": p_a held, b blocked.
    """
    if section not in SECTIONS:
        raise ParameterError(f"section must be one of {SECTIONS}, got {section!r}")
    n = int(segments)
    k = np.arange(1, n + 1)
    arg = k * np.pi / (2 * n) if section in ("pi", "T") else (2 * k - 1) * np.pi / (4 * n)
    return n * params.wave_speed_m_s / (math.pi * params.length_m) * np.sin(arg)


class HydraulicLine(Block):
    """Pipe or hose as n lumped segments with fluid inertia, laminar resistance and compliance.

    .. math::

        \\dot p_j = \\frac{\\beta_e(p_j)}{V_j}\\,(q_{j,in} - q_{j,out}), \\qquad
        L_k \\dot q_k = p_{k,up} - p_{k,down} - R_k q_k

    with the node volumes and link inertances of the chosen ``section`` (module
    docstring table), :math:`L = \\rho l/A`, :math:`R = 128\\rho\\nu l/(\\pi d^4)`,
    :math:`V = A l`.  Flows are positive from end a to end b.  Node pressures
    below ``min_pressure_pa`` are softened and warned about as in
    :class:`~blocks.hydraulics.volume.Volume`.

    Ports
    -----
    in   q_a       scalar [m^3/s]  "pi": flow into the line at end a
    in   p_a       scalar [Pa]    "T", "mixed": pressure upstream of end a
    in   q_b       scalar [m^3/s]  "pi", "mixed": flow out of the line at end b
    in   p_b       scalar [Pa]    "T": pressure downstream of end b
    out  p_a       scalar [Pa]    "pi": pressure at end a; state only
    out  q_a       scalar [m^3/s]  "T", "mixed": flow into the line at end a; state only
    out  p_b       scalar [Pa]    "pi", "mixed": pressure at end b; state only
    out  q_b       scalar [m^3/s]  "T": flow out of the line at end b; state only
    out  p_nodes   (nodes,) [Pa]    all node pressures, a to b; state only

    (``p_a`` is an input or an output depending on the section, never both; same
    for the other end ports.)

    Parameters
    ----------
    length_m, diameter_m : float
        Length and inner diameter.
    fluid : Fluid
        Density, viscosity and :math:`\\beta(p)`.
    section : str
        "pi", "T" or "mixed" (module docstring).
    segments : int
        Number of segments n >= 1.
    wall_bulk_modulus_pa : float or None
        Hose wall compliance as a bulk modulus (in series with the fluid's);
        ``None`` for a rigid pipe.
    p0_pa : float
        Initial pressure of every node (flows start at 0).
    min_pressure_pa, cavitation_band_pa : float
        As :class:`~blocks.hydraulics.volume.Volume`.
    """

    def __init__(self, name: str, *, length_m: float, diameter_m: float,
                 fluid: Fluid = MINERAL_OIL, section: str = "pi", segments: int = 1,
                 wall_bulk_modulus_pa: float | None = None, p0_pa: float = 1e5,
                 min_pressure_pa: float = DEFAULT_MIN_PRESSURE_PA,
                 cavitation_band_pa: float | None = None) -> None:
        super().__init__(name)
        own = f"HydraulicLine '{name}'"
        check_positive(own, length_m=length_m, diameter_m=diameter_m)
        if section not in SECTIONS:
            raise ParameterError(f"{own}: section must be one of {SECTIONS} (pi: flows in at "
                                 f"both ends; T: pressures in; mixed: pressure in at a, flow "
                                 f"in at b), got {section!r}")
        if not isinstance(segments, int) or isinstance(segments, bool) or segments < 1:
            raise ParameterError(f"{own}: segments must be an int >= 1, got {segments!r}")
        if wall_bulk_modulus_pa is not None:
            check_positive(own, wall_bulk_modulus_pa=wall_bulk_modulus_pa)
        self.length, self.diameter = float(length_m), float(diameter_m)
        self.fluid, self.section, self.n = fluid, section, segments
        self.beta_wall = None if wall_bulk_modulus_pa is None else float(wall_bulk_modulus_pa)
        n = segments
        area = math.pi * self.diameter**2 / 4.0
        vol, ls = area * self.length, fluid.density_kg_m3 * self.length / area / n
        rs = 128.0 * fluid.density_kg_m3 * fluid.kinematic_viscosity_m2_s * self.length \
            / (math.pi * self.diameter**4) / n
        if section == "pi":
            nodes = np.full(n + 1, vol / n)
            nodes[0] = nodes[-1] = vol / (2 * n)
            links = np.ones(n)
        elif section == "T":
            nodes = np.full(n, vol / n)
            links = np.ones(n + 1)
            links[0] = links[-1] = 0.5
        else:
            nodes = np.full(n, vol / n)
            nodes[-1] = vol / (2 * n)
            links = np.ones(n)
        self.node_volumes = nodes
        self.link_inertance, self.link_resistance = ls * links, rs * links
        self.flow_in_a, self.flow_in_b = section == "pi", section in ("pi", "mixed")

        p0 = float(p0_pa)
        if self.flow_in_a:
            self.q_a_in = self.declare_input("q_a", unit="m^3/s")
        else:
            self.p_a_in = self.declare_input("p_a", unit="Pa")
        if self.flow_in_b:
            self.q_b_in = self.declare_input("q_b", unit="m^3/s")
        else:
            self.p_b_in = self.declare_input("p_b", unit="Pa")
        self.x_p = self.declare_continuous_state("p", np.full(nodes.size, p0))
        self.x_q = self.declare_continuous_state("q", np.zeros(links.size))
        self.guard = LowPressureGuard(
            self, own, min_pressure_pa, cavitation_band_pa,
            {f"p_{j}": (self.x_p, j) for j in range(nodes.size)}, {"p0_pa": p0})
        if self.flow_in_a:
            self.p_a = self.declare_output("p_a", lambda ctx: float(ctx.state(self.x_p)[0]),
                                           unit="Pa", depends_on=())
        else:
            self.q_a = self.declare_output("q_a", lambda ctx: float(ctx.state(self.x_q)[0]),
                                           unit="m^3/s", depends_on=())
        if self.flow_in_b:
            self.p_b = self.declare_output("p_b", lambda ctx: float(ctx.state(self.x_p)[-1]),
                                           unit="Pa", depends_on=())
        else:
            self.q_b = self.declare_output("q_b", lambda ctx: float(ctx.state(self.x_q)[-1]),
                                           unit="m^3/s", depends_on=())
        self.p_nodes = self.declare_output(
            "p_nodes", lambda ctx: np.array(ctx.state(self.x_p), dtype=float),
            shape=(nodes.size,), unit="Pa", depends_on=())

    def parameters_at(self, p: float) -> LineParameters:
        """:class:`LineParameters` of the whole line at pressure p (for :math:`\\beta_e`)."""
        return LineParameters(self.length, self.diameter, self.fluid.density_kg_m3,
                              self.fluid.kinematic_viscosity_m2_s, self.beta_e(p))

    def beta_e(self, p: float) -> float:
        """Effective bulk modulus of fluid and wall in series [Pa]."""
        b = self.fluid.beta(p)
        return b if self.beta_wall is None else 1.0 / (1.0 / b + 1.0 / self.beta_wall)

    def derivatives(self, ctx: Any) -> np.ndarray:
        p = np.asarray(ctx.state(self.x_p), dtype=float)
        q = np.asarray(ctx.state(self.x_q), dtype=float)
        f = q
        if self.flow_in_a:
            f = np.concatenate(([ctx.input(self.q_a_in)], f))
        if self.flow_in_b:
            f = np.concatenate((f, [ctx.input(self.q_b_in)]))
        pe = p
        if not self.flow_in_a:
            pe = np.concatenate(([ctx.input(self.p_a_in)], pe))
        if not self.flow_in_b:
            pe = np.concatenate((pe, [ctx.input(self.p_b_in)]))
        g = self.guard
        dp = np.array([pressure_rate(pj, self.beta_e(pj), vj, fin - fout, g.p_min, g.band)
                       for pj, vj, fin, fout in zip(p, self.node_volumes, f[:-1], f[1:],
                                                    strict=True)])
        dq = (pe[:-1] - pe[1:] - self.link_resistance * q) / self.link_inertance
        return np.concatenate((dp, dq))

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`derivatives` node by node and link by link (the same
        elementwise operations as the NumPy expressions) and the outputs; the low-pressure
        monitor's C condition (:meth:`~.volume.LowPressureGuard.c_monitors`)."""
        _cforms.use(cg, "prate")
        f, g = c_float, self.guard
        n_p, n_q = self.node_volumes.size, self.link_inertance.size
        p = [cg.x(self.x_p, j) for j in range(n_p)]
        q = [cg.x(self.x_q, k) for k in range(n_q)]
        fl = ([cg.u(self.q_a_in)] if self.flow_in_a else []) + q + \
            ([cg.u(self.q_b_in)] if self.flow_in_b else [])
        pe = ([] if self.flow_in_a else [cg.u(self.p_a_in)]) + p + \
            ([] if self.flow_in_b else [cg.u(self.p_b_in)])
        code = ["double pj, b;"]
        for j in range(n_p):
            code.append(f"pj = {p[j]};")
            code.append(_cforms.beta(cg, self.fluid.beta, "pj", "b"))
            if self.beta_wall is not None:
                code.append(f"b = 1.0 / (1.0 / b + 1.0 / {f(self.beta_wall)});")
            code.append(f"{cg.dx(self.x_p, j)} = cosim_hyd_prate(pj, b, "
                        f"{f(self.node_volumes[j])}, {fl[j]} - {fl[j + 1]}, {f(g.p_min)}, "
                        f"{f(g.band)});")
        for k in range(n_q):
            code.append(f"{cg.dx(self.x_q, k)} = ({pe[k]} - {pe[k + 1]} - "
                        f"{f(self.link_resistance[k])} * {q[k]}) / "
                        f"{f(self.link_inertance[k])};")
        outputs = {"p_nodes": "\n".join(f"{cg.y(self.p_nodes, j)} = {p[j]};"
                                        for j in range(n_p))}
        if self.flow_in_a:
            outputs["p_a"] = f"{cg.y(self.p_a)} = {p[0]};"
        else:
            outputs["q_a"] = f"{cg.y(self.q_a)} = {q[0]};"
        if self.flow_in_b:
            outputs["p_b"] = f"{cg.y(self.p_b)} = {p[-1]};"
        else:
            outputs["q_b"] = f"{cg.y(self.q_b)} = {q[-1]};"
        return CModel(outputs=outputs, derivatives="\n".join(code),
                      monitors=self.guard.c_monitors(cg))
