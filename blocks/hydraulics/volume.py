"""Lumped hydraulic volume: pressure build-up, with a documented low-pressure bound.

Pressure build-up (Merritt 1967 sec. 2.5; the seed, thesis sec. 3.1.1; LIM benchmark):

.. math:: \\dot p = \\frac{\\beta_e(p)}{V}\\left(\\sum Q_{in} - \\sum Q_{out} - \\dot V\\right)

Low pressure (cavitation)
-------------------------
A lumped liquid volume cannot represent cavitation: with a constant bulk
modulus the equation above drives the pressure through zero to any negative
value.  These blocks do not clip silently.  Instead:

* below ``min_pressure_pa`` (default 1 kPa absolute, of the order of oil vapour
  and air-release pressures at the low end), while the net inflow is negative,
  the pressure rate is multiplied by a C^1 factor that falls from 1 at
  :math:`p_{min}` to 0 at :math:`p_{min} - \\Delta p_{cav}`
  (``cavitation_band_pa``, default :math:`p_{min}/2`):

  .. math:: \\dot p = \\frac{\\beta_e}{V}\\, q_{net}\\, S\\!\\left(
            \\frac{p - p_{min} + \\Delta p_{cav}}{\\Delta p_{cav}}\\right)
            \\quad (q_{net} < 0,\\ p < p_{min}),
            \\qquad S(s) = 3s^2 - 2s^3 \\text{ on } [0, 1]

  so the pressure stays above :math:`p_{min} - \\Delta p_{cav} > 0`; the liquid
  volume drawn out meanwhile is not accounted for (it would be vapour/air): the
  volume balance is **not conserved** while the bound is active.
* a monitor (:meth:`cosim.Block.declare_monitor`, checked after every accepted
  step) emits one :class:`cosim.CosimWarning` per context naming the block and
  the end of the step in which :math:`p < p_{min}` was first seen, so every run
  that reaches the bound says so (a dip that starts and ends inside one solver
  step is not seen).  Results after that instant are
  outside the model's validity; use a gas-release model if they matter.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from cosim.block import Block, ContinuousState
from cosim.codegen.model import CModel, CodegenError, c_float
from cosim.errors import CosimWarning, ParameterError, StepError

from . import _cforms
from .fluid import MINERAL_OIL, Fluid

DEFAULT_MIN_PRESSURE_PA = 1e3


def pressure_rate(p: float, beta: float, volume: float, net_flow: float,
                  p_min: float, band: float) -> float:
    """:math:`\\beta/V\\; q_{net}`, softened below ``p_min`` while draining (module docstring)."""
    rate = beta / volume * net_flow
    if rate < 0.0 and p < p_min:
        s = (p - p_min + band) / band
        if s <= 0.0:
            return 0.0
        rate *= s * s * (3.0 - 2.0 * s)
    return rate


class LowPressureGuard:
    """Validates the bound and declares, on ``block``, the warn-once monitor of the pressures.

    ``pressures`` maps a label ('p' or 'p_1', ...) to a scalar continuous state (read
    with ``ctx.state``: the monitor runs at every solver step, a lambda per pressure
    costs a call), a ``(state, index)`` pair (an element of a vector state), or a function
    ``ctx -> p`` (no C form: :meth:`c_monitors` refuses it).
    """

    def __init__(self, block: Block, owner: str, min_pressure_pa: float,
                 cavitation_band_pa: float | None, pressures: dict[str, Any],
                 initial: dict[str, float]) -> None:
        p_min = float(min_pressure_pa)
        band = 0.5 * p_min if cavitation_band_pa is None else float(cavitation_band_pa)
        if not (p_min > 0 and math.isfinite(p_min)):
            raise ParameterError(f"{owner}: min_pressure_pa must be > 0 (absolute), got "
                                 f"{min_pressure_pa!r}")
        if not 0.0 < band < p_min:
            raise ParameterError(f"{owner}: cavitation_band_pa must lie in (0, min_pressure_pa"
                                 f" = {p_min:g}) so the floor stays above 0 Pa, got {band!r}")
        for label, p0 in initial.items():
            if not p0 >= p_min:
                raise ParameterError(f"{owner}: initial pressure {label} = {p0!r} Pa is below "
                                     f"min_pressure_pa = {p_min:g} Pa (pressures are absolute)")
        self.p_min, self.band = p_min, band
        self.warned = block.declare_discrete_state("low_pressure_warned", False)
        self.pressures = dict(pressures)
        checks = [(label, (lambda ctx, h=h[0], j=h[1]: float(ctx.state(h)[j]))
                   if isinstance(h, tuple) else h) for label, h in pressures.items()]
        if all(isinstance(h, ContinuousState) for _, h in checks):
            def monitor(ctx: Any) -> None:
                state = ctx.state
                for label, h in checks:
                    if state(h) < p_min:
                        self._warn(block, label, ctx)
                        return
        else:
            getters = [(label, (lambda ctx, h=h: ctx.state(h))
                        if isinstance(h, ContinuousState) else h) for label, h in checks]

            def monitor(ctx: Any) -> None:
                for label, get in getters:
                    if get(ctx) < p_min:
                        self._warn(block, label, ctx)
                        return
        block.declare_monitor(monitor, name="low_pressure")

    def c_monitors(self, cg: Any) -> dict:
        """``CModel(monitors=...)`` of the block (:class:`cosim.codegen.CMonitor`): the
        monitor does something only while it has not warned and a pressure is below
        ``min_pressure_pa``, so the compiled Simulator returns to Python only there."""
        from cosim.codegen import CMonitor
        below = []
        for label, h in self.pressures.items():
            if isinstance(h, ContinuousState):
                below.append(f"{cg.x(h)} < {c_float(self.p_min)}")
            elif isinstance(h, tuple):
                below.append(f"{cg.x(h[0], h[1])} < {c_float(self.p_min)}")
            else:
                raise CodegenError(f"block '{cg.block.path}': the low-pressure monitor reads "
                                   f"pressure {label} through a Python function, which has "
                                   "no C form; give it as a state or (state, index)")
        return {"low_pressure": CMonitor(f"{cg.xd(self.warned)} == 0.0 && ("
                                         + " || ".join(below) + ")")}

    def _warn(self, block: Block, label: str, ctx: Any) -> None:
        if ctx.discrete(self.warned):
            return
        ctx.set_discrete(self.warned, True)
        warnings.warn(
            f"'{block.path}': pressure {label} fell to min_pressure_pa = {self.p_min:g} Pa by "
            f"t = {ctx.time:.9g} s (cavitation): the lumped liquid model is not valid here; the "
            f"pressure is held above {self.p_min - self.band:g} Pa and the volume drawn out is "
            "not conserved. Raise the supply/tank pressure or check the circuit. "
            "(Warned once per run.)", CosimWarning, stacklevel=2)


class Volume(Block):
    """Lumped hydraulic volume (a node of the circuit) with pressure as state.

    .. math::

        \\dot p = \\frac{\\beta_e(p)}{V}\\Big(\\sum_i q_{in,i} - \\sum_j q_{out,j}
                  - \\dot V\\Big), \\qquad \\dot V = \\texttt{dvdt}
                  \\ (\\text{only with } volume\\_rate\\_input)

    softened below ``min_pressure_pa`` with a warning (module docstring).

    Ports
    -----
    in   q_in0 .. q_in{n-1}     scalar [m^3/s]  flows into the volume (``inflows`` of them)
    in   q_out0 .. q_out{m-1}   scalar [m^3/s]  flows out of the volume (``outflows``)
    in   dvdt                   scalar [m^3/s]  only with ``volume_rate_input=True``
    out  p                      scalar [Pa]   absolute pressure; state only
    out  volume                 scalar [m^3]  only with ``volume_rate_input=True``; state only

    Parameters
    ----------
    volume_m3 : float
        Volume (initial volume if ``volume_rate_input``).  Must stay > 0; a
        variable volume reaching 0 stops the run with a :class:`cosim.errors.StepError`.
    fluid : Fluid
        Gives :math:`\\beta_e(p)`.
    inflows, outflows : int
        Number of flow inputs into (``q_in*``) and out of (``q_out*``) the volume.
    volume_rate_input : bool
        A variable volume: the ``dvdt`` input integrates into the ``volume`` output.
    p0_pa : float
        Initial absolute pressure (default 1e5 Pa).
    min_pressure_pa, cavitation_band_pa : float
        Low-pressure bound and its softening band (module docstring).
    """

    def __init__(self, name: str, *, volume_m3: float, fluid: Fluid = MINERAL_OIL,
                 inflows: int = 1, outflows: int = 1, p0_pa: float = 1e5,
                 volume_rate_input: bool = False,
                 min_pressure_pa: float = DEFAULT_MIN_PRESSURE_PA,
                 cavitation_band_pa: float | None = None) -> None:
        super().__init__(name)
        own = f"Volume '{name}'"
        if not (volume_m3 > 0 and math.isfinite(volume_m3)):
            raise ParameterError(f"{own}: volume_m3 must be finite and > 0, got {volume_m3!r}")
        for label, n in (("inflows", inflows), ("outflows", outflows)):
            if not isinstance(n, int) or n < 0:
                raise ParameterError(f"{own}: {label} must be an int >= 0, got {n!r}")
        if inflows + outflows == 0 and not volume_rate_input:
            raise ParameterError(f"{own}: a volume needs at least one flow or the volume rate")
        self.fluid, self.beta = fluid, fluid.beta
        self.V0 = float(volume_m3)
        self.q_in = [self.declare_input(f"q_in{i}", unit="m^3/s") for i in range(inflows)]
        self.q_out = [self.declare_input(f"q_out{j}", unit="m^3/s") for j in range(outflows)]
        self.x_p = self.declare_continuous_state("p", float(p0_pa))
        self.guard = LowPressureGuard(self, own, min_pressure_pa, cavitation_band_pa,
                                      {"p": self.x_p}, {"p0_pa": float(p0_pa)})
        self.p = self.declare_output("p", lambda ctx: ctx.state(self.x_p), unit="Pa",
                                     depends_on=())
        if volume_rate_input:
            self.dvdt = self.declare_input("dvdt", unit="m^3/s")
            self.x_v = self.declare_continuous_state("volume", self.V0)
            self.volume = self.declare_output("volume", lambda ctx: ctx.state(self.x_v),
                                              unit="m^3", depends_on=())
        else:
            self.dvdt = self.x_v = self.volume = None

    def net_flow(self, ctx: Any) -> float:
        """:math:`\\sum q_{in} - \\sum q_{out}` (without the volume rate)."""
        q = 0.0
        for port in self.q_in:
            q += ctx.input(port)
        for port in self.q_out:
            q -= ctx.input(port)
        return q

    def derivatives(self, ctx: Any) -> Any:
        p = ctx.state(self.x_p)
        q = self.net_flow(ctx)
        g = self.guard
        if self.x_v is None:
            return pressure_rate(p, self.beta(p), self.V0, q, g.p_min, g.band)
        v = ctx.state(self.x_v)
        if not v > 0.0:
            raise StepError(f"Volume '{self.path}': the volume fell to {v:.6g} m^3 <= 0 at "
                            f"t = {ctx.time:.9g} s; check the sign of dvdt or the initial "
                            "volume_m3")
        dv = ctx.input(self.dvdt)
        return np.array([pressure_rate(p, self.beta(p), v, q - dv, g.p_min, g.band), dv])

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`derivatives` (``pressure_rate`` and the bulk modulus as C;
        the volume check fails the call as the Python raises); the low-pressure monitor's C
        condition (:meth:`LowPressureGuard.c_monitors`)."""
        _cforms.use(cg, "prate")
        g, f = self.guard, c_float
        pm, bd = f(g.p_min), f(g.band)
        q = _cforms.net_flow(cg, self.q_in, self.q_out)
        code = f"double p = {cg.x(self.x_p)}, q = {q}, b;\n" + \
            _cforms.beta(cg, self.beta, "p", "b") + "\n"
        outputs = {"p": f"{cg.y(self.p)} = {cg.x(self.x_p)};"}
        if self.x_v is None:
            code += f"{cg.dx(self.x_p)} = cosim_hyd_prate(p, b, {f(self.V0)}, q, {pm}, {bd});"
        else:
            v = cg.x(self.x_v)
            msg = (f"Volume '{self.path}': the volume fell to <= 0 m^3; check the sign of "
                   "dvdt or the initial volume_m3")
            code = (f"if (!({v} > 0.0)) {cg.fail(msg)}\n" + code
                    + f"double dv = {cg.u(self.dvdt)};\n"
                    f"{cg.dx(self.x_p)} = cosim_hyd_prate(p, b, {v}, q - dv, {pm}, {bd});\n"
                    f"{cg.dx(self.x_v)} = dv;")
            outputs["volume"] = f"{cg.y(self.volume)} = {v};"
        return CModel(outputs=outputs, derivatives=code, monitors=self.guard.c_monitors(cg))
