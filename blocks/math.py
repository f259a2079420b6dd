"""Math primitives: gain, sum, product, saturation, dead zone, rate limiter,
switch, unit conversion, mux and demux.

Gain, Sum, UnitConversion, Mux and Demux are linear and take part in the
fusion of linear blocks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.linear import LinearModel
from cosim.ports import normalize_shape
from cosim.units import conversion


class Gain(Block):
    """Gain: :math:`y = K u` (scalar or matrix ``K``).

    Ports
    -----
    in   u   scalar, or (n,) for a matrix gain (n = K columns)
    out  y   scalar, or (m,) (m = K rows); feedthrough from u
    """

    def __init__(self, name: str, k: Any, input_unit: str | None = None,
                 output_unit: str | None = None, shape: Any = ()) -> None:
        super().__init__(name)
        K = np.asarray(k, dtype=float)
        self.K = K
        if K.ndim == 2:
            in_shape, out_shape = (K.shape[1],), (K.shape[0],)
        elif K.ndim == 1:
            in_shape = out_shape = K.shape
        else:
            in_shape = out_shape = normalize_shape(shape)
        self.u = self.declare_input("u", shape=in_shape, unit=input_unit)
        if K.ndim == 0:
            kk = float(K)
            calc = (lambda ctx: kk * ctx.input(self.u))
        elif K.ndim == 1:
            calc = (lambda ctx: self.K * ctx.input(self.u))
        else:
            calc = (lambda ctx: self.K @ ctx.input(self.u))
        self.y = self.declare_output("y", calc, shape=out_shape,
                                     unit=output_unit if output_unit else input_unit)

    def linear_model(self, ctx):
        n_in = self.u.size
        if self.K.ndim == 2:
            D = self.K
        elif self.K.ndim == 1:
            D = np.diag(self.K)
        else:
            D = float(self.K) * np.eye(n_in)
        return LinearModel(np.zeros((0, 0)), np.zeros((0, n_in)), np.zeros((D.shape[0], 0)),
                           D, [self.u], [self.y], [])


class Sum(Block):
    """Signed sum of inputs: :math:`y = \\sum_i s_i u_i` with signs from ``signs``.

    ``signs="+-"`` gives inputs ``u0``, ``u1`` and ``y = u0 - u1``.

    Ports
    -----
    in   u0 .. u(n-1)   shape as given, all in ``unit``
    out  y              feedthrough from all inputs
    """

    def __init__(self, name: str, signs: str = "++", shape: Any = (),
                 unit: str | None = None) -> None:
        super().__init__(name)
        if not signs or set(signs) - {"+", "-"}:
            raise ParameterError(f"Sum '{name}': signs must be a string of '+' and '-', "
                                 f"got {signs!r}")
        self.signs = [1.0 if c == "+" else -1.0 for c in signs]
        self.ins = [self.declare_input(f"u{i}", shape=shape, unit=unit)
                    for i in range(len(signs))]
        ins, sg = self.ins, self.signs
        if len(ins) == 2 and sg == [1.0, -1.0]:
            a, b = ins
            calc = (lambda ctx: ctx.input(a) - ctx.input(b))
        elif len(ins) == 2 and sg == [1.0, 1.0]:
            a, b = ins
            calc = (lambda ctx: ctx.input(a) + ctx.input(b))
        else:
            def calc(ctx):
                acc = 0.0
                for p, s in zip(ins, sg):
                    acc = acc + s * ctx.input(p)
                return acc
        self.y = self.declare_output("y", calc, shape=shape, unit=unit)

    def linear_model(self, ctx):
        n = self.ins[0].size
        D = np.hstack([s * np.eye(n) for s in self.signs])
        return LinearModel(np.zeros((0, 0)), np.zeros((0, D.shape[1])), np.zeros((n, 0)), D,
                           list(self.ins), [self.y], [])


class Product(Block):
    """Product (or quotient) of inputs: ``ops="**/"`` gives ``y = u0*u1/u2``.

    Ports
    -----
    in   u0 .. u(n-1)
    out  y   feedthrough
    """

    def __init__(self, name: str, ops: str = "**", shape: Any = ()) -> None:
        super().__init__(name)
        if not ops or set(ops) - {"*", "/"}:
            raise ParameterError(f"Product '{name}': ops must be '*' and '/' characters")
        self.ops = ops
        self.ins = [self.declare_input(f"u{i}", shape=shape) for i in range(len(ops))]

        def calc(ctx):
            acc = 1.0
            for p, o in zip(self.ins, self.ops):
                v = ctx.input(p)
                acc = acc * v if o == "*" else acc / v
            return acc
        self.y = self.declare_output("y", calc, shape=shape)


class Saturation(Block):
    """Saturation: :math:`y = \\min(\\max(u, lo), hi)`.

    Ports
    -----
    in   u
    out  y   feedthrough
    """

    def __init__(self, name: str, lower: float, upper: float, unit: str | None = None,
                 shape: Any = ()) -> None:
        super().__init__(name)
        if not lower <= upper:
            raise ParameterError(f"Saturation '{name}': lower {lower} > upper {upper}")
        lo, hi = float(lower), float(upper)
        self.u = self.declare_input("u", shape=shape, unit=unit)
        if shape == ():
            calc = (lambda ctx: min(max(ctx.input(self.u), lo), hi))
        else:
            calc = (lambda ctx: np.clip(ctx.input(self.u), lo, hi))
        self.y = self.declare_output("y", calc, shape=shape, unit=unit)


class DeadZone(Block):
    """Dead zone: zero inside ``[lower, upper]``, shifted identity outside.

    .. math:: y = u - hi \\;(u > hi), \\quad 0 \\;(lo \\le u \\le hi), \\quad u - lo \\;(u < lo)

    Ports
    -----
    in   u
    out  y   feedthrough
    """

    def __init__(self, name: str, lower: float, upper: float, unit: str | None = None) -> None:
        super().__init__(name)
        if not lower <= upper:
            raise ParameterError(f"DeadZone '{name}': lower {lower} > upper {upper}")
        lo, hi = float(lower), float(upper)
        self.u = self.declare_input("u", unit=unit)

        def calc(ctx):
            u = ctx.input(self.u)
            return u - hi if u > hi else (u - lo if u < lo else 0.0)
        self.y = self.declare_output("y", calc, unit=unit)


class Switch(Block):
    """Switch: ``y = u_true if control >= threshold else u_false``.

    Ports
    -----
    in   u_true, control, u_false
    out  y   feedthrough
    """

    def __init__(self, name: str, threshold: float = 0.5, unit: str | None = None) -> None:
        super().__init__(name)
        th = float(threshold)
        self.u_true = self.declare_input("u_true", unit=unit)
        self.control = self.declare_input("control")
        self.u_false = self.declare_input("u_false", unit=unit)
        self.y = self.declare_output(
            "y", lambda ctx: ctx.input(self.u_true) if ctx.input(self.control) >= th
            else ctx.input(self.u_false), unit=unit)


class UnitConversion(Block):
    """Explicit unit conversion, e.g. ``UnitConversion("c", "rpm", "rad/s")``.

    .. math:: y = s u + b   (from :func:`cosim.units.conversion`)

    Ports
    -----
    in   u   [from_unit]
    out  y   [to_unit], feedthrough
    """

    def __init__(self, name: str, from_unit: str, to_unit: str, shape: Any = ()) -> None:
        super().__init__(name)
        s, b = conversion(from_unit, to_unit)
        self.scale, self.bias = s, b
        self.u = self.declare_input("u", shape=shape, unit=from_unit)
        self.y = self.declare_output("y", lambda ctx: s * ctx.input(self.u) + b, shape=shape,
                                     unit=to_unit)

    def linear_model(self, ctx):
        if self.bias:
            return None
        n = self.u.size
        return LinearModel(np.zeros((0, 0)), np.zeros((0, n)), np.zeros((n, 0)),
                           self.scale * np.eye(n), [self.u], [self.y], [])


class Mux(Block):
    """Stack scalar inputs ``u0..u(n-1)`` into a vector ``y`` of shape (n,).

    Ports
    -----
    in   u0 .. u(n-1)   scalars
    out  y              (n,), feedthrough
    """

    def __init__(self, name: str, n: int, unit: str | None = None) -> None:
        super().__init__(name)
        self.ins = [self.declare_input(f"u{i}", unit=unit) for i in range(int(n))]
        self.y = self.declare_output(
            "y", lambda ctx: np.array([ctx.input(p) for p in self.ins]), shape=(int(n),),
            unit=unit)

    def linear_model(self, ctx):
        n = len(self.ins)
        return LinearModel(np.zeros((0, 0)), np.zeros((0, n)), np.zeros((n, 0)), np.eye(n),
                           list(self.ins), [self.y], [])


class Demux(Block):
    """Split a vector ``u`` of shape (n,) into scalars ``y0..y(n-1)``.

    Ports
    -----
    in   u              (n,)
    out  y0 .. y(n-1)   scalars, feedthrough
    """

    def __init__(self, name: str, n: int, unit: str | None = None) -> None:
        super().__init__(name)
        self.u = self.declare_input("u", shape=(int(n),), unit=unit)
        self.outs = [self.declare_output(f"y{i}", (lambda i: lambda ctx:
                                                   float(ctx.input(self.u)[i]))(i), unit=unit)
                     for i in range(int(n))]

    def linear_model(self, ctx):
        n = len(self.outs)
        return LinearModel(np.zeros((0, 0)), np.zeros((0, n)), np.zeros((n, 0)), np.eye(n),
                           [self.u], list(self.outs), [])
