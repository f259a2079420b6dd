"""Continuous primitives: integrator (with limits and reset) and filtered derivative."""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim.block import Block
from cosim.linear import LinearModel
from cosim.params import POSITIVE, VALUES

from ._units import derivative, integral


class Integrator(Block):
    """Integrator.

    .. math:: \\dot x = u, \\qquad y = x, \\qquad x(0) = x_0

    Ports
    -----
    in   u   shape of ``x0`` (or ``shape``) [input_unit]
    out  y   same shape [unit]; state only

    Parameters
    ----------
    x0 : float or array
        Initial value :math:`x_0`; an array sets the shape.
    shape : tuple
        Shape of ``u`` and ``y`` for a scalar ``x0`` (default scalar).
    unit : str, optional
        Unit of ``y`` (and of the state).
    input_unit : str, optional
        Unit of ``u``; given one of the two, the other follows (``m`` from ``m/s``).
    """

    argument_checks = {"x0": VALUES}

    def __init__(self, name: str, x0: Any = 0.0, shape: Any = (), unit: str | None = None,
                 input_unit: str | None = None) -> None:
        super().__init__(name)
        unit, input_unit = integral(unit, input_unit)
        shape = np.shape(x0) if np.ndim(x0) else shape
        x0 = np.broadcast_to(np.asarray(x0, float), shape) if shape else float(x0)
        self.u = self.declare_input("u", shape=shape, unit=input_unit)
        self.x = self.declare_continuous_state("x", x0)
        self.y = self.declare_output("y", self._y, shape=shape, unit=unit, depends_on=())
        self._shape = self.y.shape  # the state vector is flat; ports may be (m, n)

    def _y(self, ctx):
        v = ctx.state(self.x)
        return v if self.x.scalar else v.reshape(self._shape).copy()

    def derivatives(self, ctx):
        u = ctx.input(self.u)
        return u if self.x.scalar else np.ravel(u)

    def linear_model(self, ctx):
        n = self.x.size
        return LinearModel(np.zeros((n, n)), np.eye(n), np.eye(n), np.zeros((n, n)),
                           [self.u], [self.y], [self.x])


class FilteredDerivative(Block):
    """Derivative with a first-order filter ``s / (s/N + 1)``.

    .. math:: \\dot z = N (u - z), \\qquad y = N (u - z), \\qquad z(0) = 0

    Ports
    -----
    in   u   scalar [input_unit]
    out  y   scalar [unit]; feedthrough from u

    Parameters
    ----------
    bandwidth_rad_s : float
        :math:`N` [rad/s], > 0: the filter's corner frequency.
    unit : str, optional
        Unit of ``y``: the unit of ``u`` per second.
    input_unit : str, optional
        Unit of ``u``; given one of the two, the other follows (``m/s`` from ``m``).
    """

    argument_checks = {"bandwidth_rad_s": POSITIVE}

    def __init__(self, name: str, bandwidth_rad_s: float, unit: str | None = None,
                 input_unit: str | None = None) -> None:
        super().__init__(name)
        unit, input_unit = derivative(unit, input_unit)
        self.N = float(bandwidth_rad_s)
        self.u = self.declare_input("u", unit=input_unit)
        self.z = self.declare_continuous_state("z", 0.0)
        self.y = self.declare_output("y", self._y, unit=unit, depends_on=("u",))

    def _y(self, ctx):
        return self.N * (ctx.input(self.u) - ctx.state(self.z))

    def derivatives(self, ctx):
        return self.N * (ctx.input(self.u) - ctx.state(self.z))

    def linear_model(self, ctx):
        N = self.N
        return LinearModel([[-N]], [[N]], [[-N]], [[N]], [self.u], [self.y], [self.z])
