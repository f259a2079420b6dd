r"""Battery: a DC source with internal resistance, optionally with charge and an OCV(SoC) curve.

.. math::

    u = u_{oc}(\mathrm{SoC}) - R_i\, i, \qquad
    \frac{d\,\mathrm{SoC}}{dt} = -\frac{i}{3600\, Q_{Ah}}

with :math:`i > 0` discharging.  Without ``capacity_ah`` the open-circuit
voltage is constant and there is no state (an ideal source behind a resistor).
With a capacity the state of charge is integrated (coulomb counting, no
coulombic efficiency, no self-discharge); with an ``ocv_soc``/``ocv_v`` table
the open-circuit voltage follows it linearly, holding the end values outside
the table.  The state of charge is not bounded: it goes below 0 or above 1 if
the load asks for it (watch the ``soc`` output; no cut-off is modelled), and
there is no RC (diffusion) branch and no temperature dependence.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE, POSITIVE, Array

from .crane_drive import BISECT_RIGHT_C


class Battery(Block):
    r"""DC source with internal resistance; optional capacity and OCV(SoC) table.

    Equations in the module docstring.

    Ports
    -----
    in   current               scalar [A]  load current, > 0 discharging
    out  voltage               scalar [V]  terminal voltage; reads current
    out  open_circuit_voltage  scalar [V]  state only
    out  power                 scalar [W]  delivered power :math:`u\,i`; reads current
    out  soc                   scalar [1]  state of charge (only with ``capacity_ah``); state only

    Parameters
    ----------
    internal_resistance_ohm : float
        :math:`R_i \ge 0`.
    open_circuit_voltage_v : float, optional
        Constant :math:`u_{oc}` (give this or the table).
    capacity_ah : float, optional
        :math:`Q_{Ah}` [A h]; needed for the table.
    soc0 : float
        Initial state of charge (with a capacity).
    ocv_soc, ocv_v : array_like, optional
        The open-circuit voltage table (SoC strictly increasing).
    """

    argument_checks = {"internal_resistance_ohm": NON_NEGATIVE, "capacity_ah": POSITIVE,
                       "ocv_soc": Array(ndim=1), "ocv_v": Array(ndim=1)}

    def __init__(self, name: str, *, internal_resistance_ohm: float,
                 open_circuit_voltage_v: float | None = None, capacity_ah: float | None = None,
                 soc0: float = 1.0, ocv_soc: Any = None, ocv_v: Any = None) -> None:
        super().__init__(name)
        own = f"Battery '{name}'"
        self.R = float(internal_resistance_ohm)
        if not (self.R >= 0 and math.isfinite(self.R)):
            raise ParameterError(f"{own}: internal_resistance_ohm must be finite and >= 0, "
                                 f"got {internal_resistance_ohm!r}")
        table = ocv_soc is not None or ocv_v is not None
        if table == (open_circuit_voltage_v is not None):
            raise ParameterError(f"{own}: give either open_circuit_voltage_v or the table "
                                 "ocv_soc/ocv_v, not both and not neither")
        if table:
            if ocv_soc is None or ocv_v is None:
                raise ParameterError(f"{own}: the OCV table needs both ocv_soc and ocv_v")
            if capacity_ah is None:
                raise ParameterError(f"{own}: an OCV(SoC) table needs capacity_ah (the state "
                                     "of charge is integrated from the current)")
            x = np.asarray(ocv_soc, dtype=float)
            y = np.asarray(ocv_v, dtype=float)
            if x.ndim != 1 or x.shape != y.shape or x.size < 2:
                raise ParameterError(f"{own}: ocv_soc and ocv_v must be 1-D of the same length "
                                     f">= 2, got shapes {x.shape} and {y.shape}")
            if np.any(np.diff(x) <= 0) or not np.all(np.isfinite(x)) \
                    or not np.all(np.isfinite(y)):
                raise ParameterError(f"{own}: ocv_soc must be finite and strictly increasing, "
                                     "ocv_v finite")
            self._xl, self._yl = x.tolist(), y.tolist()
            self.u_oc = None
        else:
            self.u_oc = float(open_circuit_voltage_v)
            if not math.isfinite(self.u_oc):
                raise ParameterError(f"{own}: open_circuit_voltage_v must be finite")
        self.current = self.declare_input("current", unit="A")
        self.x_soc = None
        if capacity_ah is not None:
            self.capacity_as = float(capacity_ah) * 3600.0
            if not (self.capacity_as > 0 and math.isfinite(self.capacity_as)):
                raise ParameterError(f"{own}: capacity_ah must be finite and > 0, got "
                                     f"{capacity_ah!r}")
            self.x_soc = self.declare_continuous_state("soc", float(soc0))
            self.soc = self.declare_output("soc", lambda ctx: ctx.state(self.x_soc), unit="1",
                                           depends_on=())
        self.open_circuit_voltage = self.declare_output(
            "open_circuit_voltage", self._ocv, unit="V", depends_on=())
        self.voltage = self.declare_output(
            "voltage", lambda ctx: self._ocv(ctx) - self.R * ctx.input(self.current), unit="V")
        self.power = self.declare_output("power", self._power, unit="W")

    def ocv(self, soc: float) -> float:
        """The open-circuit voltage at ``soc`` (constant without a table)."""
        if self.u_oc is not None:
            return self.u_oc
        xl, yl = self._xl, self._yl
        s = min(max(soc, xl[0]), xl[-1])
        i = min(bisect_right(xl, s) - 1, len(xl) - 2)
        return yl[i] + (s - xl[i]) / (xl[i + 1] - xl[i]) * (yl[i + 1] - yl[i])

    def _ocv(self, ctx: Any) -> float:
        return self.ocv(ctx.state(self.x_soc) if self.x_soc is not None else 0.0)

    def _power(self, ctx: Any) -> float:
        i = ctx.input(self.current)
        return (self._ocv(ctx) - self.R * i) * i

    def derivatives(self, ctx: Any) -> float:
        return -ctx.input(self.current) / self.capacity_as

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`ocv`, the outputs and :meth:`derivatives`."""
        f = c_float
        if self.u_oc is not None:
            ocv = f"double ocv = {f(self.u_oc)};\n"
        else:
            cg.helper("cosim_bisect_right", BISECT_RIGHT_C)
            n = len(self._xl)
            X, Y = cg.const(np.array(self._xl)), cg.const(np.array(self._yl))
            ocv = (f"const double *X = {X.ptr}, *Y = {Y.ptr};\n"
                   f"double soc = {cg.x(self.x_soc)}, ocv;\nint i;\n"
                   "soc = (X[0] > soc) ? X[0] : soc;\n"
                   f"soc = (X[{n - 1}] < soc) ? X[{n - 1}] : soc;\n"
                   f"i = cosim_bisect_right(X, {n}, soc) - 1;\n"
                   f"if ({n - 2} < i) i = {n - 2};\n"
                   "ocv = Y[i] + (soc - X[i]) / (X[i + 1] - X[i]) * (Y[i + 1] - Y[i]);\n")
        i, R = cg.u(self.current), f(self.R)
        out = {"open_circuit_voltage": f"{{\n{ocv}{cg.y(self.open_circuit_voltage)} = ocv;\n}}",
               "voltage": f"{{\n{ocv}{cg.y(self.voltage)} = ocv - {R} * {i};\n}}",
               "power": f"{{\n{ocv}{cg.y(self.power)} = (ocv - {R} * {i}) * {i};\n}}"}
        der = ""
        if self.x_soc is not None:
            out["soc"] = f"{cg.y(self.soc)} = {cg.x(self.x_soc)};"
            der = f"{cg.dx(self.x_soc)} = -{i} / {f(self.capacity_as)};"
        return CModel(outputs=out, derivatives=der)
