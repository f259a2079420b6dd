"""Gas-charged (bladder, piston or diaphragm) accumulator with a polytropic gas.

Gas law (ideal gas, polytropic; e.g. Merritt 1967; HYDAC and Parker accumulator
sizing guides):

.. math:: p\\, V_g^{\\,n} = p_0 V_0^{\\,n}

with :math:`p_0` the precharge pressure (absolute) and :math:`V_0` the gas
volume at precharge (the accumulator's size).  While :math:`p > p_0` the stored
fluid volume is

.. math:: V_f(p) = V_0 \\left[1 - (p_0 / p)^{1/n}\\right], \\qquad
          \\frac{dV_f}{dp} = \\frac{V_0}{n\\,p} \\left(\\frac{p_0}{p}\\right)^{1/n}

n = 1 for slow (isothermal) processes, n = 1.4 for fast (adiabatic) ones.

Below precharge (empty accumulator)
-----------------------------------
For :math:`p \\le p_0` the bladder rests on the poppet (the piston on its end
stop): no fluid is stored and the gas no longer sets the pressure.  The node
then keeps only the compliance of the liquid in the accumulator's port and its
connection, the dead volume :math:`V_d` (required > 0):

.. math::

    \\dot p = \\frac{\\sum q_{in} - \\sum q_{out}}{C(p)}, \\qquad
    C(p) = \\frac{V_d}{\\beta_e(p)} + \\begin{cases}
        \\dfrac{V_0}{n\\,p}\\left(\\dfrac{p_0}{p}\\right)^{1/n} & p > p_0 \\\\
        0 & p \\le p_0 \\end{cases}

The pressure is continuous through :math:`p_0` (it is the state); the
compliance jumps there, from :math:`V_d/\\beta` to
:math:`V_d/\\beta + V_0/(n p_0)`, so :math:`\\dot p` drops by that ratio as the
accumulator starts to fill.  This is a kink in p(t), not a jump: the
variable-step solvers' error control handles it (the charging test meets the
closed form to 1e-8 with ``radau``).  No zero-crossing event is declared at
:math:`p_0`: with the stiff empty phase (:math:`\\dot p = q\\beta/V_d`, about
1e10 Pa/s for 1e-4 m^3/s into 1e-5 m^3) the 1 ns event time quantum alone is
worth several Pa, and restarting the solver on the kink was measured to be
less accurate than stepping over it.  The stored fluid volume :math:`V_f(p)`
is continuous and 0 below
:math:`p_0`.  An empty accumulator drained further behaves as a small liquid
volume; below ``min_pressure_pa`` it is softened and warned about exactly as a
:class:`~blocks.hydraulics.volume.Volume`.

Not modelled: real-gas behaviour (nitrogen deviates from :math:`pV = mRT` by
several percent above about 200 bar), heat transfer between the isothermal and
adiabatic limits (a thermal time constant), and the inertia of the fluid in the
port (add a :class:`~blocks.hydraulics.line.HydraulicLine` for that).
"""

from __future__ import annotations

import math
from typing import Any

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.errors import ParameterError

from . import _cforms
from .fluid import MINERAL_OIL, Fluid
from .volume import DEFAULT_MIN_PRESSURE_PA, LowPressureGuard, pressure_rate


class GasAccumulator(Block):
    """Gas-charged accumulator: a circuit node whose compliance is the polytropic gas.

    .. math::

        \\dot p = \\frac{\\sum q_{in} - \\sum q_{out}}{C(p)}, \\qquad
        C(p) = \\frac{V_d}{\\beta_e(p)}
             + [p > p_0]\\, \\frac{V_0}{n p}\\Big(\\frac{p_0}{p}\\Big)^{1/n}, \\qquad
        V_f = [p > p_0]\\, V_0\\Big(1 - (p_0/p)^{1/n}\\Big)

    (module docstring: :math:`p V_g^n = p_0 V_0^n` above precharge, an empty
    accumulator below it).

    Ports
    -----
    in   q_in0 .. q_in{n-1}     scalar [m^3/s]  flows into the accumulator (``inflows``)
    in   q_out0 .. q_out{m-1}   scalar [m^3/s]  flows out of it (``outflows``)
    out  p                      scalar [Pa]   absolute pressure; state only
    out  fluid_volume           scalar [m^3]  stored fluid V_f(p) (gas side); state only
    out  gas_volume             scalar [m^3]  V_0 - V_f; state only

    Parameters
    ----------
    gas_volume_m3 : float
        :math:`V_0`, the gas volume at precharge (nominal size).
    precharge_pressure_pa : float
        :math:`p_0`, absolute (a gauge precharge of 90 bar is 91.0e5 Pa).
    polytropic_index : float
        n in [1, 1.4]: 1 isothermal, 1.4 adiabatic.
    dead_volume_m3 : float
        :math:`V_d` > 0, the liquid in the port and connection (default 1e-5 m^3);
        it sets the stiffness of the empty accumulator.
    fluid : Fluid
        Gives :math:`\\beta_e(p)` of the dead volume.
    inflows, outflows : int
        Number of flow inputs into (``q_in*``) and out of (``q_out*``) the accumulator.
    p0_pa : float
        Initial absolute pressure (default: the precharge, i.e. just empty).
    min_pressure_pa, cavitation_band_pa : float
        As :class:`~blocks.hydraulics.volume.Volume`.
    """

    def __init__(self, name: str, *, gas_volume_m3: float, precharge_pressure_pa: float,
                 polytropic_index: float = 1.0, dead_volume_m3: float = 1e-5,
                 fluid: Fluid = MINERAL_OIL, inflows: int = 1, outflows: int = 0,
                 p0_pa: float | None = None,
                 min_pressure_pa: float = DEFAULT_MIN_PRESSURE_PA,
                 cavitation_band_pa: float | None = None) -> None:
        super().__init__(name)
        own = f"GasAccumulator '{name}'"
        for label, v in (("gas_volume_m3", gas_volume_m3),
                         ("precharge_pressure_pa", precharge_pressure_pa),
                         ("dead_volume_m3", dead_volume_m3)):
            try:
                ok = float(v) > 0 and math.isfinite(float(v))
            except (TypeError, ValueError):
                ok = False
            if not ok:
                hint = (" (absolute pressure)" if label == "precharge_pressure_pa" else
                        " (the liquid in the port sets the empty accumulator's stiffness)"
                        if label == "dead_volume_m3" else "")
                raise ParameterError(f"{own}: {label} must be finite and > 0{hint}, got {v!r}")
        n = float(polytropic_index)
        if not 1.0 <= n <= 1.4:
            raise ParameterError(f"{own}: polytropic_index must lie in [1, 1.4] (1 isothermal, "
                                 f"1.4 adiabatic), got {polytropic_index!r}")
        for label, k in (("inflows", inflows), ("outflows", outflows)):
            if not isinstance(k, int) or k < 0:
                raise ParameterError(f"{own}: {label} must be an int >= 0, got {k!r}")
        if inflows + outflows == 0:
            raise ParameterError(f"{own}: an accumulator needs at least one flow port")
        self.V0, self.p_pre, self.n = float(gas_volume_m3), float(precharge_pressure_pa), n
        self.Vd, self.fluid, self.beta = float(dead_volume_m3), fluid, fluid.beta
        p_init = self.p_pre if p0_pa is None else float(p0_pa)
        self.q_in = [self.declare_input(f"q_in{i}", unit="m^3/s") for i in range(inflows)]
        self.q_out = [self.declare_input(f"q_out{j}", unit="m^3/s") for j in range(outflows)]
        self.x_p = self.declare_continuous_state("p", p_init)
        self.guard = LowPressureGuard(self, own, min_pressure_pa, cavitation_band_pa,
                                      {"p": self.x_p}, {"p0_pa": p_init})
        self.p = self.declare_output("p", lambda ctx: ctx.state(self.x_p), unit="Pa",
                                     depends_on=())
        self.fluid_volume = self.declare_output(
            "fluid_volume", lambda ctx: self.stored_volume(ctx.state(self.x_p)), unit="m^3",
            depends_on=())
        self.gas_volume = self.declare_output(
            "gas_volume", lambda ctx: self.V0 - self.stored_volume(ctx.state(self.x_p)),
            unit="m^3", depends_on=())

    def stored_volume(self, p: float) -> float:
        """:math:`V_f(p)` [m^3]: 0 at and below precharge."""
        if p <= self.p_pre:
            return 0.0
        return self.V0 * (1.0 - (self.p_pre / p) ** (1.0 / self.n))

    def compliance(self, p: float) -> float:
        """:math:`C(p) = dV/dp` [m^3/Pa] of the node (dead volume plus gas)."""
        c = self.Vd / self.beta(p)
        if p > self.p_pre:
            c += self.V0 / (self.n * p) * (self.p_pre / p) ** (1.0 / self.n)
        return c

    def derivatives(self, ctx: Any) -> float:
        p = ctx.state(self.x_p)
        q = 0.0
        for port in self.q_in:
            q += ctx.input(port)
        for port in self.q_out:
            q -= ctx.input(port)
        g = self.guard
        # pressure_rate(p, beta, V, q) = beta/V q: pass beta = 1/C and V = 1
        return pressure_rate(p, 1.0 / self.compliance(p), 1.0, q, g.p_min, g.band)

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`stored_volume`, :meth:`compliance` and
        :meth:`derivatives`; the low-pressure monitor's C condition
        (:meth:`LowPressureGuard.c_monitors`)."""
        _cforms.use(cg, "prate")
        f, g = c_float, self.guard
        p = cg.x(self.x_p)
        pre, v0, ex = f(self.p_pre), f(self.V0), f"1.0 / {f(self.n)}"
        stored = f"double vf = ({p} <= {pre}) ? 0.0 : {v0} * (1.0 - pow({pre} / {p}, {ex}));\n"
        der = (f"double p = {p}, b, c;\n" + _cforms.beta(cg, self.beta, "p", "b") + "\n"
               f"c = {f(self.Vd)} / b;\n"
               f"if (p > {pre}) c += {v0} / ({f(self.n)} * p) * pow({pre} / p, {ex});\n"
               f"{cg.dx(self.x_p)} = cosim_hyd_prate(p, 1.0 / c, 1.0, "
               f"{_cforms.net_flow(cg, self.q_in, self.q_out)}, {f(g.p_min)}, {f(g.band)});")
        return CModel(outputs={
            "p": f"{cg.y(self.p)} = {p};",
            "fluid_volume": _cforms.block(stored + f"{cg.y(self.fluid_volume)} = vf;"),
            "gas_volume": _cforms.block(stored + f"{cg.y(self.gas_volume)} = {v0} - vf;")},
            derivatives=der, monitors=self.guard.c_monitors(cg))
