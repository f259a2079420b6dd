"""Valves: 4/3 directional spool valve, relief valve, check valve.

Every metering edge uses the regularized turbulent law of
:mod:`blocks.hydraulics.orifice`, :math:`Q = K\\,a\\,s(\\Delta p)` with K the
coefficient of the fully open edge (from an area, or from catalogue nominal
flow), :math:`a \\in [0, 1]` the relative edge opening and s the signed square
root with a C^1 cubic below the transition pressure.

Pressure-controlled valves open with a C^1 smoothstep of the pressure drop
(:func:`smooth_opening`), so the flow is C^1 in the pressures everywhere except
where the optional laminar leakage is added (linear, smooth).
"""

from __future__ import annotations

from typing import Any

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE, POSITIVE

from . import _cforms
from .fluid import MINERAL_OIL, Fluid
from .orifice import DEFAULT_TRANSITION_PA, check_positive, flow_coefficient, regularized_sqrt


def smooth_opening(x: float) -> float:
    """C^1 ramp: 0 for x <= 0, :math:`3x^2 - 2x^3` on [0, 1], 1 for x >= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    return x * x * (3.0 - 2.0 * x)


def edge_opening(s: float, lap: float) -> float:
    """Relative opening of a spool edge at spool position s: clip((s - lap)/(1 - lap), 0, 1)."""
    a = (s - lap) / (1.0 - lap)
    return 0.0 if a <= 0.0 else (1.0 if a >= 1.0 else a)


def spool_parameters(owner: str, *, area_max_m2: float | None, cd: float, fluid: Fluid,
                     q_nominal_m3_s: float | None, dp_nominal_pa: float | None, lap: float,
                     transition_pressure_pa: float,
                     leakage_m3_s_pa: float) -> tuple[float, float, float, float]:
    """Validated (K, lap, dp_tr, G) of a 4/3 spool (see :class:`SpoolValve43`)."""
    k = flow_coefficient(owner, area_m2=area_max_m2, cd=cd, fluid=fluid,
                         q_nominal_m3_s=q_nominal_m3_s, dp_nominal_pa=dp_nominal_pa)
    if not -1.0 <= lap < 1.0:
        raise ParameterError(f"{owner}: lap must lie in [-1, 1) (fraction of the spool half "
                             f"stroke; 0 critical, > 0 overlapped, < 0 underlapped), "
                             f"got {lap!r}")
    check_positive(owner, transition_pressure_pa=transition_pressure_pa)
    if not leakage_m3_s_pa >= 0:
        raise ParameterError(f"{owner}: leakage_m3_s_pa must be >= 0, got {leakage_m3_s_pa!r}")
    return k, float(lap), float(transition_pressure_pa), float(leakage_m3_s_pa)


def spool_edge_flows(u: float, pP: float, pT: float, pA: float, pB: float, k: float,
                     lap: float, dp_tr: float,
                     g: float) -> tuple[float, float, float, float]:
    """(Q_PA, Q_AT, Q_PB, Q_BT) of a 4/3 spool at position u (see :class:`SpoolValve43`)."""
    u = min(max(u, -1.0), 1.0)
    a_pos, a_neg = edge_opening(u, lap), edge_opening(-u, lap)
    q_pa = k * a_pos * regularized_sqrt(pP - pA, dp_tr) + g * (pP - pA)
    q_at = k * a_neg * regularized_sqrt(pA - pT, dp_tr) + g * (pA - pT)
    q_pb = k * a_neg * regularized_sqrt(pP - pB, dp_tr) + g * (pP - pB)
    q_bt = k * a_pos * regularized_sqrt(pB - pT, dp_tr) + g * (pB - pT)
    return q_pa, q_at, q_pb, q_bt


def port_flows(edges: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    """(q_A, q_B, q_P, q_T) from the edge flows (Q_PA, Q_AT, Q_PB, Q_BT)."""
    q_pa, q_at, q_pb, q_bt = edges
    return q_pa - q_at, q_pb - q_bt, q_pa + q_pb, q_at + q_bt


class SpoolValve43(Block):
    """4/3 directional spool valve (P, T, A, B) with critical, over- or underlapped centre.

    The spool position u in [-1, 1] (clipped: the spool's end stops) opens
    P->A and B->T for u > 0, P->B and A->T for u < 0.  The lap, a fraction of
    the half stroke, sets the centre:

    * ``lap = 0``: critical centre (zero lap): every edge closed at u = 0;
    * ``lap > 0``: overlapped (closed centre with a dead band :math:`|u| \\le lap`);
    * ``lap < 0``: underlapped (open centre): at u = 0 every edge is open by
      :math:`-lap/(1 - lap)`; ``lap = -1`` is the LIM benchmark valve, whose
      edges are :math:`a_i = \\kappa`, :math:`a_o = 1 - \\kappa` with
      :math:`\\kappa = (1 + u)/2`.

    .. math::

        a(s) &= \\mathrm{clip}\\big((s - lap)/(1 - lap),\\ 0,\\ 1\\big) \\\\
        Q_{PA} &= K a(u)\\, s(p_P - p_A), \\quad Q_{AT} = K a(-u)\\, s(p_A - p_T) \\\\
        Q_{PB} &= K a(-u)\\, s(p_P - p_B), \\quad Q_{BT} = K a(u)\\, s(p_B - p_T) \\\\
        q_A &= Q_{PA} - Q_{AT}, \\quad q_B = Q_{PB} - Q_{BT}, \\quad
        q_P = Q_{PA} + Q_{PB}, \\quad q_T = Q_{AT} + Q_{BT}

    where s is the regularized signed square root and K the fully open edge's
    coefficient (:math:`C_d A_{max}\\sqrt{2/\\rho}` or :math:`Q_N/\\sqrt{\\Delta p_N}`).
    An optional laminar leakage :math:`G\\,\\Delta p` is added to each of the four
    edge flows (e.g. :math:`Q_{PA} \\mathrel{+}= G (p_P - p_A)`), whatever the spool position.

    Ports
    -----
    in   p_P   scalar [Pa]    supply pressure
    in   p_T   scalar [Pa]    tank pressure
    in   p_A   scalar [Pa]    line A pressure
    in   p_B   scalar [Pa]    line B pressure
    in   u     scalar [1]     spool position in [-1, 1]
    out  q_A   scalar [m^3/s]  flow out of the valve into line A
    out  q_B   scalar [m^3/s]  flow out of the valve into line B
    out  q_P   scalar [m^3/s]  flow drawn from the supply (into port P)
    out  q_T   scalar [m^3/s]  flow returned to tank (out of port T)

    All outputs feed through from every input.  Volume balance:
    :math:`q_P = q_A + q_B + q_T`.

    Parameters
    ----------
    area_max_m2, cd, fluid : float, float, Fluid
        Fully open edge area, discharge coefficient and fluid; or
    q_nominal_m3_s, dp_nominal_pa : float
        Catalogue nominal flow per edge at its nominal pressure drop.
    lap : float
        Lap in [-1, 1) (see above).
    transition_pressure_pa : float
        Laminar-turbulent transition of every edge (default 1e4 Pa).
    leakage_m3_s_pa : float
        Laminar leakage conductance G of each edge (default 0).
    """

    argument_checks = {"q_nominal_m3_s": POSITIVE, "dp_nominal_pa": POSITIVE,
                       "area_max_m2": POSITIVE, "cd": POSITIVE,
                       "leakage_m3_s_pa": NON_NEGATIVE, "transition_pressure_pa": POSITIVE}

    def __init__(self, name: str, *, area_max_m2: float | None = None, cd: float = 0.67,
                 fluid: Fluid = MINERAL_OIL, q_nominal_m3_s: float | None = None,
                 dp_nominal_pa: float | None = None, lap: float = 0.0,
                 transition_pressure_pa: float = DEFAULT_TRANSITION_PA,
                 leakage_m3_s_pa: float = 0.0) -> None:
        super().__init__(name)
        own = f"SpoolValve43 '{name}'"
        self.k, self.lap, self.dp_tr, self.g = spool_parameters(
            own, area_max_m2=area_max_m2, cd=cd, fluid=fluid, q_nominal_m3_s=q_nominal_m3_s,
            dp_nominal_pa=dp_nominal_pa, lap=lap, transition_pressure_pa=transition_pressure_pa,
            leakage_m3_s_pa=leakage_m3_s_pa)
        self.p_P = self.declare_input("p_P", unit="Pa")
        self.p_T = self.declare_input("p_T", unit="Pa")
        self.p_A = self.declare_input("p_A", unit="Pa")
        self.p_B = self.declare_input("p_B", unit="Pa")
        self.u = self.declare_input("u", unit="1")
        self.q_A, self.q_B, self.q_P, self.q_T = self.declare_outputs(
            [("q_A", "m^3/s"), ("q_B", "m^3/s"), ("q_P", "m^3/s"), ("q_T", "m^3/s")],
            self.flows)

    @property
    def centre(self) -> str:
        """'critical', 'overlapped' or 'underlapped'."""
        return "critical" if self.lap == 0 else ("overlapped" if self.lap > 0 else "underlapped")

    def edge_flows(self, u: float, pP: float, pT: float, pA: float,
                   pB: float) -> tuple[float, float, float, float]:
        """(Q_PA, Q_AT, Q_PB, Q_BT) for the given spool position and pressures."""
        return spool_edge_flows(u, pP, pT, pA, pB, self.k, self.lap, self.dp_tr, self.g)

    def flows(self, ctx: Any) -> tuple[float, float, float, float]:
        """(q_A, q_B, q_P, q_T) from the inputs in ``ctx``."""
        return port_flows(self.edge_flows(
            ctx.input(self.u), ctx.input(self.p_P), ctx.input(self.p_T),
            ctx.input(self.p_A), ctx.input(self.p_B)))

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :func:`spool_edge_flows` and :func:`port_flows` (each output
        computes the four edge flows)."""
        edges = _cforms.spool_edges(cg, cg.u(self.u), cg.u(self.p_P), cg.u(self.p_T),
                                    cg.u(self.p_A), cg.u(self.p_B), self.k, self.lap,
                                    self.dp_tr, self.g)
        return CModel(outputs={
            p.name: _cforms.block(edges + f"{cg.y(p)} = {_cforms.PORT_FLOWS[p.name]};")
            for p in (self.q_A, self.q_B, self.q_P, self.q_T)})


class ReliefValve(Block):
    """Pressure relief valve (direct acting, static characteristic).

    .. math::

        \\Delta p = p_{in} - p_{out}, \\qquad
        a = S\\!\\left(\\frac{\\Delta p - p_{crack}}{p_{full} - p_{crack}}\\right), \\qquad
        q = K a\\, s(\\Delta p) + G \\Delta p

    with S the C^1 smoothstep (:func:`smooth_opening`), s the regularized signed
    square root, K the fully open coefficient and G an optional leakage.  The
    opening follows the pressure instantly (no poppet dynamics).  The
    characteristic is set on the pressure *drop*, so connect p_out to the tank.

    Ports
    -----
    in   p_in    scalar [Pa]    protected (inlet) pressure
    in   p_out   scalar [Pa]    outlet pressure (tank)
    out  q       scalar [m^3/s]  flow from in to out; feedthrough from both inputs

    Parameters
    ----------
    cracking_pressure_pa : float
        Pressure drop where the valve starts to open.
    full_open_pressure_pa : float
        Pressure drop where it is fully open (> cracking; the difference is the override).
    area_max_m2, cd, fluid : float, float, Fluid
        Fully open area [m^2], discharge coefficient and fluid; or
    q_nominal_m3_s, dp_nominal_pa : float
        Catalogue flow [m^3/s] at its pressure drop [Pa] (see :class:`SpoolValve43`).
    transition_pressure_pa : float
        Laminar-turbulent transition [Pa] (default 1e4 Pa).
    leakage_m3_s_pa : float
        Laminar leakage conductance G [m^3/(s Pa)] (default 0).
    """

    kind = "ReliefValve"

    argument_checks = {"q_nominal_m3_s": POSITIVE, "dp_nominal_pa": POSITIVE,
                       "area_max_m2": POSITIVE, "cd": POSITIVE,
                       "leakage_m3_s_pa": NON_NEGATIVE, "transition_pressure_pa": POSITIVE}

    def __init__(self, name: str, *, cracking_pressure_pa: float, full_open_pressure_pa: float,
                 area_max_m2: float | None = None, cd: float = 0.67, fluid: Fluid = MINERAL_OIL,
                 q_nominal_m3_s: float | None = None, dp_nominal_pa: float | None = None,
                 transition_pressure_pa: float = DEFAULT_TRANSITION_PA,
                 leakage_m3_s_pa: float = 0.0) -> None:
        super().__init__(name)
        own = f"{self.kind} '{name}'"
        self.k = flow_coefficient(own, area_m2=area_max_m2, cd=cd, fluid=fluid,
                                  q_nominal_m3_s=q_nominal_m3_s, dp_nominal_pa=dp_nominal_pa)
        pc, pf = float(cracking_pressure_pa), float(full_open_pressure_pa)
        if not pc >= 0:
            raise ParameterError(f"{own}: cracking_pressure_pa must be >= 0 (a pressure drop), "
                                 f"got {cracking_pressure_pa!r}")
        if not pf > pc:
            raise ParameterError(f"{own}: full_open_pressure_pa ({pf:g}) must exceed "
                                 f"cracking_pressure_pa ({pc:g})")
        check_positive(own, transition_pressure_pa=transition_pressure_pa)
        if not leakage_m3_s_pa >= 0:
            raise ParameterError(f"{own}: leakage_m3_s_pa must be >= 0, got {leakage_m3_s_pa!r}")
        self.p_crack, self.p_full = pc, pf
        self.dp_tr, self.g = float(transition_pressure_pa), float(leakage_m3_s_pa)
        self.p_in = self.declare_input("p_in", unit="Pa")
        self.p_out = self.declare_input("p_out", unit="Pa")
        self.q = self.declare_output(
            "q", lambda ctx: self.flow(ctx.input(self.p_in) - ctx.input(self.p_out)),
            unit="m^3/s")

    def opening(self, dp: float) -> float:
        """Relative opening a(dp) in [0, 1]."""
        return smooth_opening((dp - self.p_crack) / (self.p_full - self.p_crack))

    def flow(self, dp: float) -> float:
        """Flow [m^3/s] at pressure drop ``dp`` [Pa]."""
        return self.k * self.opening(dp) * regularized_sqrt(dp, self.dp_tr) + self.g * dp

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`flow` (with :meth:`opening`) of ``p_in - p_out``."""
        _cforms.use(cg, "rsqrt", "smooth")
        f = c_float
        return CModel(outputs={"q": _cforms.block(
            f"double dp = {cg.u(self.p_in)} - {cg.u(self.p_out)};\n"
            f"double a = cosim_hyd_smooth((dp - {f(self.p_crack)}) / ({f(self.p_full)} - "
            f"{f(self.p_crack)}));\n"
            f"{cg.y(self.q)} = {f(self.k)} * a * cosim_hyd_rsqrt(dp, {f(self.dp_tr)}) + "
            f"{f(self.g)} * dp;")})


class CheckValve(ReliefValve):
    """Check (non-return) valve: opens for forward pressure drops above cracking.

    Same static law as :class:`ReliefValve` (C^1 smoothstep opening between
    ``cracking_pressure_pa`` and ``full_open_pressure_pa``, regularized turbulent
    flow, optional leakage G); reverse flow is the leakage only.

    .. math:: q = K\\, S\\!\\left(\\frac{\\Delta p - p_{crack}}{p_{full} - p_{crack}}\\right)
              s(\\Delta p) + G\\,\\Delta p

    Ports
    -----
    in   p_in    scalar [Pa]    inlet pressure
    in   p_out   scalar [Pa]    outlet pressure
    out  q       scalar [m^3/s]  flow from in to out; feedthrough from both inputs

    Parameters
    ----------
    cracking_pressure_pa, full_open_pressure_pa : float
        Pressure drops [Pa] where it starts to open and where it is fully open
        (defaults 0.5 and 2 bar).
    **kw
        The flow coefficient, transition pressure and leakage, as :class:`ReliefValve`.
    """

    kind = "CheckValve"

    def __init__(self, name: str, *, cracking_pressure_pa: float = 0.5e5,
                 full_open_pressure_pa: float = 2e5, **kw: Any) -> None:
        super().__init__(name, cracking_pressure_pa=cracking_pressure_pa,
                         full_open_pressure_pa=full_open_pressure_pa, **kw)
