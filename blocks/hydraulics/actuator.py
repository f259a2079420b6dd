"""Valve-controlled cylinder: a 4/3 spool valve, constant supply and tank, a cylinder, one block.

The same equations as the diagram ``PressureSource`` (supply) + ``PressureSource``
(tank) + :class:`~blocks.hydraulics.SpoolValve43` + :class:`~blocks.hydraulics.DoubleActingCylinder`
(the valve's and the cylinder's own functions are called), in one block: one
output function and one derivative per evaluation instead of six blocks' worth.
Use it where the actuator is the fast subsystem of a multi-rate co-simulation and
its evaluation cost decides the wall time (the LIM manipulator bench); use the
component blocks to build anything else (lines, accumulators, other valves).

.. math::

    (Q_{PA}, Q_{AT}, Q_{PB}, Q_{BT}) &= \\text{SpoolValve43}(u, p_P, p_T, p_A, p_B) \\\\
    \\dot p_1 &= \\frac{\\beta(p_1)}{V_1(x)} (q_1 - A_1 \\dot x), \\quad
    \\dot p_2 = \\frac{\\beta(p_2)}{V_2(x)} (q_2 + A_2 \\dot x) \\\\
    F &= \\text{DoubleActingCylinder.rod\\_force}(p_1, p_2, x, \\dot x)

with valve port A on chamber ``a_chamber`` (1: the piston side, the usual
connection; 2: the rod side, as in the LIM benchmark) and B on the other one:
:math:`q_A = Q_{PA} - Q_{AT}` flows into the A chamber.

Ports: :class:`ValveControlledCylinder`.

Limitations: supply and tank pressures are constant (no pump or line
dynamics); the low-pressure guard, the end stops, friction and efficiency are
the cylinder's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE, POSITIVE

from . import _cforms
from .cylinder import DoubleActingCylinder, chamber_outputs_c, declare_chambers
from .fast import BETA_CONSTANT, BETA_PRESSURE, HAVE_NUMBA, chamber_rates, direct_call
from .fluid import (
    MINERAL_OIL,
    ConstantBulkModulus,
    Fluid,
    PressureDependentBulkModulus,
)
from .orifice import DEFAULT_TRANSITION_PA
from .valves import port_flows, spool_edge_flows, spool_parameters


class ValveControlledCylinder(Block):
    """4/3 spool valve + double-acting cylinder + constant supply/tank (module docstring).

    Ports
    -----
    in   u      scalar [1]      spool position in [-1, 1]
    in   x      scalar [m]      piston position (0: fully retracted)
    in   v      scalar [m/s]    piston velocity
    out  force  scalar [N]      rod force, positive extending; reads x, v
    out  p_1    scalar [Pa]     chamber 1 (piston side) pressure; state only
    out  p_2    scalar [Pa]     chamber 2 (rod side) pressure; state only
    out  q_P    scalar [m^3/s]  flow drawn from the supply; reads u

    Parameters
    ----------
    supply_pressure_pa, tank_pressure_pa : float
        Constant absolute pressures at P and T.
    area_max_m2, cd, q_nominal_m3_s, dp_nominal_pa, lap, transition_pressure_pa,
    leakage_m3_s_pa
        The valve (as :class:`~blocks.hydraulics.SpoolValve43`).
    a_chamber : int
        Cylinder chamber on valve port A (1 or 2); B feeds the other one.
    fluid : Fluid
        Shared by the valve and the cylinder.
    compiled : bool, optional
        The chamber-pressure rates by the Numba kernel of :mod:`.fast` (default: when
        Numba is installed and the bulk modulus is constant or pressure-dependent;
        ``False`` forces the Python functions, ``True`` requires the kernel).
    **cylinder
        Keyword arguments of :class:`~blocks.hydraulics.DoubleActingCylinder`
        (areas, stroke, dead volumes, initial pressures, friction, ...).
    """

    argument_checks = {"q_nominal_m3_s": POSITIVE, "dp_nominal_pa": POSITIVE,
                       "area_max_m2": POSITIVE, "cd": POSITIVE,
                       "leakage_m3_s_pa": NON_NEGATIVE, "transition_pressure_pa": POSITIVE}

    def __init__(self, name: str, *, supply_pressure_pa: float, tank_pressure_pa: float,
                 area_max_m2: float | None = None, cd: float = 0.67,
                 q_nominal_m3_s: float | None = None, dp_nominal_pa: float | None = None,
                 lap: float = 0.0, transition_pressure_pa: float = DEFAULT_TRANSITION_PA,
                 leakage_m3_s_pa: float = 0.0, a_chamber: int = 1, fluid: Fluid = MINERAL_OIL,
                 compiled: bool | None = None, **cylinder: Any) -> None:
        super().__init__(name)
        own = f"ValveControlledCylinder '{name}'"
        if a_chamber not in (1, 2):
            raise ParameterError(f"{own}: a_chamber must be 1 (piston side) or 2 (rod side), "
                                 f"got {a_chamber!r}")
        if not (supply_pressure_pa > tank_pressure_pa > 0):
            raise ParameterError(f"{own}: need supply_pressure_pa > tank_pressure_pa > 0 "
                                 f"(absolute), got {supply_pressure_pa!r}, "
                                 f"{tank_pressure_pa!r}")
        self.pP, self.pT = float(supply_pressure_pa), float(tank_pressure_pa)
        self.k, self.lap, self.dp_tr, self.g = spool_parameters(
            own, area_max_m2=area_max_m2, cd=cd, fluid=fluid, q_nominal_m3_s=q_nominal_m3_s,
            dp_nominal_pa=dp_nominal_pa, lap=lap, transition_pressure_pa=transition_pressure_pa,
            leakage_m3_s_pa=leakage_m3_s_pa)
        self.a_on_1 = a_chamber == 1
        # the cylinder's equations and parameter checks (a template, never in a diagram)
        self.cyl = cyl = DoubleActingCylinder(f"{name}_cylinder", fluid=fluid, **cylinder)
        self.u = self.declare_input("u", unit="1")
        self.x = self.declare_input("x", unit="m")
        self.v = self.declare_input("v", unit="m/s")
        p10, p20 = float(cyl.x_p1.initial.ravel()[0]), float(cyl.x_p2.initial.ravel()[0])
        declare_chambers(self, own, p10, p20, cyl.guard.p_min, cyl.guard.band, cyl.rod_force)
        self._kernel_args = _kernel_args(self, cyl, fluid) if compiled is not False else None
        if compiled and self._kernel_args is None:
            raise ParameterError(f"{own}: compiled=True needs Numba and a constant or "
                                 "pressure-dependent bulk modulus; leave compiled unset")
        self._rates = None
        if self._kernel_args is not None:  # compile (or load from the cache) now, not in a run
            self._rates = direct_call(chamber_rates, 0.0, p10, p20, 0.5 * cyl.L, 0.0,
                                      self._kernel_args)
        self.q_P = self.declare_output("q_P", lambda ctx: self.flows(
            ctx.input(self.u), ctx.state(self.x_p1), ctx.state(self.x_p2))[2],
            unit="m^3/s", depends_on=(self.u,))

    def flows(self, u: float, p1: float, p2: float) -> tuple[float, float, float, float]:
        """``(q_1, q_2, q_P, q_T)``: valve flows into chambers 1 and 2, from P, to T."""
        pa, pb = (p1, p2) if self.a_on_1 else (p2, p1)
        qa, qb, qp, qt = port_flows(spool_edge_flows(u, self.pP, self.pT, pa, pb, self.k,
                                                     self.lap, self.dp_tr, self.g))
        return (qa, qb, qp, qt) if self.a_on_1 else (qb, qa, qp, qt)

    def derivatives(self, ctx: Any) -> Any:
        p1, p2 = ctx.state(self.x_p1), ctx.state(self.x_p2)
        u, x, v = ctx.input(self.u), ctx.input(self.x), ctx.input(self.v)
        args = self._kernel_args
        if args is not None:
            r1, r2, ok = self._rates(u, p1, p2, x, v, args)
            if ok:
                return r1, r2
        return self.rates_py(u, p1, p2, x, v, ctx.time)

    def rates_py(self, u: float, p1: float, p2: float, x: float, v: float,
                 t: float = 0.0) -> tuple[float, float]:
        """``(p_1', p_2')`` by the valve's and the cylinder's Python functions (the
        reference of the compiled kernel, and what reports errors)."""
        q1, q2, _, _ = self.flows(u, p1, p2)
        return self.cyl.pressure_rates(p1, p2, q1, q2, x, v, t, self)

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors the Python functions (:meth:`flows`, :meth:`rates_py` and the
        cylinder's ``rod_force``); where the Numba kernel of :mod:`.fast` runs the Python
        loop's derivatives, the two agree to rounding (1e-12), not bit for bit.  The
        low-pressure monitor's C condition is
        :meth:`~.volume.LowPressureGuard.c_monitors`."""
        p1, p2 = cg.x(self.x_p1), cg.x(self.x_p2)
        pa, pb = (p1, p2) if self.a_on_1 else (p2, p1)
        edges = _cforms.spool_edges(cg, cg.u(self.u), c_float(self.pP), c_float(self.pT), pa,
                                    pb, self.k, self.lap, self.dp_tr, self.g)
        qa, qb = _cforms.PORT_FLOWS["q_A"], _cforms.PORT_FLOWS["q_B"]
        q1, q2 = (qa, qb) if self.a_on_1 else (qb, qa)
        outputs = chamber_outputs_c(self, cg, self.cyl)
        outputs["q_P"] = _cforms.block(edges + f"{cg.y(self.q_P)} = {_cforms.PORT_FLOWS['q_P']};")
        der = edges + f"double q1 = {q1}, q2 = {q2};\n" + _cforms.chamber_rates(
            cg, self.cyl, self.guard, p1, p2, "q1", "q2", cg.u(self.x), cg.u(self.v),
            f"ValveControlledCylinder '{self.path}'")
        return CModel(outputs=outputs, derivatives=der + f"{cg.dx(self.x_p1)} = r1;\n"
                      f"{cg.dx(self.x_p2)} = r2;", monitors=self.guard.c_monitors(cg))


def _kernel_args(block: ValveControlledCylinder, cyl: DoubleActingCylinder,
                 fluid: Fluid) -> np.ndarray | None:
    """The compiled kernel's parameter array (:data:`.fast.PARAMETERS`), or None without
    Numba or for a bulk modulus the kernel does not implement."""
    if not HAVE_NUMBA:
        return None
    beta = fluid.beta
    if isinstance(beta, ConstantBulkModulus):
        kind, c0, c1 = BETA_CONSTANT, beta.beta_pa, 0.0
    elif isinstance(beta, PressureDependentBulkModulus):
        kind, c0, c1 = BETA_PRESSURE, beta.a_per_pa, beta.b_per_pa2
    else:
        return None
    g = cyl.guard
    return np.array([block.pP, block.pT, block.k, block.lap, block.dp_tr, block.g,
                     float(block.a_on_1), cyl.A1, cyl.A2, cyl.V10, cyl.V20, cyl.L, kind, c0, c1,
                     g.p_min, g.band], dtype=float)
