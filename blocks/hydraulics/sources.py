"""Hydraulic sources: ideal pressure source, tank, fixed-displacement pump."""

from __future__ import annotations

import math
from typing import Any

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE

from . import _cforms
from .orifice import check_positive


def _pressure(owner: str, v: Any) -> float:
    f = float(v)
    if not (f > 0 and math.isfinite(f)):
        raise ValueError(f"{owner}: pressures are absolute and must be finite and > 0, "
                         f"got {v!r}")
    return f


class PressureSource(Block):
    """Ideal pressure source: a node held at a fixed absolute pressure.

    .. math:: p = p_s

    whatever flow the circuit draws (infinite capacity).  ``pressure_pa`` is a
    tunable parameter ``pressure`` (one per context, e.g. for sweeps); for a
    time-varying pressure, connect any signal source with unit Pa instead.

    Ports
    -----
    out  p   scalar [Pa]  absolute pressure; no inputs

    Parameters
    ----------
    pressure_pa : float
        :math:`p_s` [Pa], absolute: the initial value of the tunable parameter
        ``pressure``.
    """

    def __init__(self, name: str, pressure_pa: float) -> None:
        super().__init__(name)
        own = f"{type(self).__name__} '{name}'"
        try:
            p = _pressure(own, pressure_pa)
        except (TypeError, ValueError) as exc:
            raise ParameterError(str(exc)) from None
        self.pressure = self.declare_parameter("pressure", p, "Pa",
                                               validate=lambda v: _pressure(own, v))
        self.p = self.declare_output("p", lambda ctx: ctx.param(self.pressure), unit="Pa",
                                     depends_on=())

    def inline_output(self, port: Any, bind: Any, plan: Any) -> str | None:
        """The pressure output as ``ctx.params[i]`` in generated code (it is evaluated at
        every solver stage; :mod:`cosim.evaluator`)."""
        if port is not self.p:
            return None
        return f"ctx.params[{plan.param_index[self.pressure]}]"

    def c_model(self, cg: Any) -> CModel:
        """C form: the ``p`` output (the tunable ``pressure``); a :class:`Tank`'s volume
        rate mirrors its :meth:`derivatives`."""
        p = cg.param("pressure", float(cg.value(self.pressure)), unit="Pa")
        x_v = getattr(self, "x_v", None)
        der = "" if x_v is None else \
            f"{cg.dx(x_v)} = {_cforms.net_flow(cg, self.q_in, self.q_out)};"
        outputs = {"p": f"{cg.y(self.p)} = {p};"}
        if x_v is not None:
            outputs["volume"] = f"{cg.y(self.volume)} = {cg.x(x_v)};"
        return CModel(outputs=outputs, derivatives=der)


class Tank(PressureSource):
    """Reservoir at constant pressure that also counts the volume it exchanges.

    .. math:: p = p_{tank}, \\qquad \\dot V = \\sum_i q_{in,i} - \\sum_j q_{out,j}

    V starts at ``volume0_m3`` and may go negative (it is the net volume
    exchanged plus the initial content; the level does not change the pressure).
    It is a bookkeeping state for volume-balance checks; with no flows the tank
    is a plain :class:`PressureSource`.

    Ports
    -----
    in   q_in0 .. q_in{n-1}     scalar [m^3/s]  flows returned to the tank
    in   q_out0 .. q_out{m-1}   scalar [m^3/s]  flows drawn from the tank (pump suction)
    out  p                      scalar [Pa]    tank pressure; no inputs
    out  volume                 scalar [m^3]   only with flows; state only

    Parameters
    ----------
    pressure_pa : float
        :math:`p_{tank}` [Pa], absolute (default 1 bar): the tunable ``pressure``.
    inflows, outflows : int
        Number of flow inputs returned to (``q_in*``) and drawn from (``q_out*``) it.
    volume0_m3 : float
        Initial V [m^3].
    """

    argument_checks = {"volume0_m3": NON_NEGATIVE}

    def __init__(self, name: str, pressure_pa: float = 1e5, *, inflows: int = 0,
                 outflows: int = 0, volume0_m3: float = 0.0) -> None:
        super().__init__(name, pressure_pa)
        for label, n in (("inflows", inflows), ("outflows", outflows)):
            if not isinstance(n, int) or n < 0:
                raise ParameterError(f"Tank '{name}': {label} must be an int >= 0, got {n!r}")
        self.q_in = [self.declare_input(f"q_in{i}", unit="m^3/s") for i in range(inflows)]
        self.q_out = [self.declare_input(f"q_out{j}", unit="m^3/s") for j in range(outflows)]
        if inflows + outflows:
            self.x_v = self.declare_continuous_state("volume", float(volume0_m3))
            self.volume = self.declare_output("volume", lambda ctx: ctx.state(self.x_v),
                                              unit="m^3", depends_on=())
        else:
            self.x_v = self.volume = None

    def derivatives(self, ctx: Any) -> float:
        q = 0.0
        for port in self.q_in:
            q += ctx.input(port)
        for port in self.q_out:
            q -= ctx.input(port)
        return q


class FixedDisplacementPump(Block):
    """Fixed-displacement pump, an ideal flow source with constant efficiencies.

    .. math::

        D = D_{rev} / (2\\pi), \\qquad
        q = \\eta_v\\, D\\, \\omega, \\qquad
        \\tau = \\frac{D\\,(p_{out} - p_{in})}{\\eta_{hm}}

    The volumetric loss :math:`(1 - \\eta_v) D\\omega` is internal leakage back
    to the inlet, so the suction flow equals the delivered flow q.  The delivered
    flow does not depend on the pressure (a stiff ideal source: protect the
    circuit with a :class:`~blocks.hydraulics.valves.ReliefValve`).  Pump mode
    only: for :math:`\\omega < 0` or :math:`p_{out} < p_{in}` (motoring) the
    constant-efficiency formulas put the losses on the wrong side.

    Ports
    -----
    in   speed    scalar [rad/s]  shaft speed (connect rpm sources: converted on the wire)
    in   p_in     scalar [Pa]    inlet (suction) pressure
    in   p_out    scalar [Pa]    outlet (delivery) pressure
    out  q        scalar [m^3/s]  delivered flow (also the suction flow); reads speed
    out  torque   scalar [N*m]   shaft torque; reads p_in, p_out

    Parameters
    ----------
    displacement_m3_per_rev : float
        :math:`D_{rev}` [m^3/rev].
    volumetric_efficiency, hydromechanical_efficiency : float
        :math:`\\eta_v`, :math:`\\eta_{hm}` in (0, 1] (default 1).
    """

    def __init__(self, name: str, *, displacement_m3_per_rev: float,
                 volumetric_efficiency: float = 1.0,
                 hydromechanical_efficiency: float = 1.0) -> None:
        super().__init__(name)
        own = f"FixedDisplacementPump '{name}'"
        check_positive(own, displacement_m3_per_rev=displacement_m3_per_rev)
        for label, eta in (("volumetric_efficiency", volumetric_efficiency),
                           ("hydromechanical_efficiency", hydromechanical_efficiency)):
            if not 0.0 < eta <= 1.0:
                raise ParameterError(f"{own}: {label} must lie in (0, 1], got {eta!r}")
        self.D = float(displacement_m3_per_rev) / (2.0 * math.pi)
        self.eta_v, self.eta_hm = float(volumetric_efficiency), float(hydromechanical_efficiency)
        self.speed = self.declare_input("speed", unit="rad/s")
        self.p_in = self.declare_input("p_in", unit="Pa")
        self.p_out = self.declare_input("p_out", unit="Pa")
        k_q, k_t = self.eta_v * self.D, self.D / self.eta_hm
        self.q = self.declare_output("q", lambda ctx: k_q * ctx.input(self.speed),
                                     unit="m^3/s", depends_on=(self.speed,))
        self.torque = self.declare_output(
            "torque", lambda ctx: k_t * (ctx.input(self.p_out) - ctx.input(self.p_in)),
            unit="N*m", depends_on=(self.p_in, self.p_out))
        self.k_q, self.k_t = k_q, k_t

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors the ``q`` and ``torque`` outputs."""
        return CModel(outputs={
            "q": f"{cg.y(self.q)} = {c_float(self.k_q)} * {cg.u(self.speed)};",
            "torque": f"{cg.y(self.torque)} = {c_float(self.k_t)} * ({cg.u(self.p_out)} - "
                      f"{cg.u(self.p_in)});"})
