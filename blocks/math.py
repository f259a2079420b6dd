"""Math primitives: gain, sum, product, saturation, dead zone, rate limiter,
switch, unit conversion, mux and demux, absolute value, min/max and relay.

Gain, Sum, UnitConversion, Mux and Demux are linear and take part in the
fusion of linear blocks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.linear import LinearModel
from cosim.params import COUNT, NON_NEGATIVE, POSITIVE, UNBOUNDED, VALUES, Number
from cosim.ports import PortList, normalize_shape
from cosim.units import conversion

from ._units import refuse_renamed, same
from .discrete import check_period


class Gain(Block):
    """Gain: :math:`y = K u` (scalar, element-wise vector or matrix ``K``).

    Ports
    -----
    in   u   scalar, (n,) for a vector gain, (n,) for a matrix gain (n = K columns)
             [input_unit, else unit]
    out  y   scalar, (n,), or (m,) for a matrix gain (m = K rows) [unit, else
             input_unit]; feedthrough from u

    Parameters
    ----------
    k : float or array_like
        :math:`K`: a scalar, a vector (element-wise) or a matrix.
    input_unit, unit : str, optional
        Units of ``u`` and ``y``; given one, the other is the same (a dimensionless
        :math:`K`).
    shape : tuple
        Shape of ``u`` and ``y`` for a scalar ``k`` (default scalar).
    """

    argument_checks = {"k": VALUES}

    def __init__(self, name: str, k: Any, input_unit: str | None = None,
                 unit: str | None = None, shape: Any = (), **old: Any) -> None:
        refuse_renamed("Gain", name, old)
        output_unit, input_unit = same(unit, input_unit)
        super().__init__(name)
        K = np.asarray(k, dtype=float)
        self.K = K  # the default of the context parameter ``k``
        if K.ndim == 2:
            in_shape, out_shape = (K.shape[1],), (K.shape[0],)
        elif K.ndim == 1:
            in_shape = out_shape = K.shape
        else:
            in_shape = out_shape = normalize_shape(shape)

        def as_k(v: Any) -> Any:
            a = np.asarray(v, dtype=float)
            if a.shape != K.shape:
                raise ValueError(f"k must have shape {K.shape}, got {a.shape}")
            return float(a) if a.ndim == 0 else a
        gain_unit = None if not (input_unit and output_unit) or input_unit == output_unit \
            else f"({output_unit})/({input_unit})"
        self.k = kh = self.declare_parameter("k", as_k(K), gain_unit, validate=as_k)
        self.u = self.declare_input("u", shape=in_shape, unit=input_unit)
        if K.ndim == 0:
            def calc(ctx):
                return ctx.param(kh) * ctx.input(self.u)
        elif K.ndim == 1:
            def calc(ctx):
                return ctx.param(kh) * ctx.input(self.u)
        else:
            def calc(ctx):
                return ctx.param(kh) @ ctx.input(self.u)
        self.y = self.declare_output("y", calc, shape=out_shape,
                                     unit=output_unit if output_unit else input_unit)

    def linear_model(self, ctx):
        n_in = self.u.size
        K = np.asarray(ctx.param(self.k), dtype=float)
        if K.ndim == 2:
            D = K
        elif K.ndim == 1:
            D = np.diag(K)
        else:
            D = float(K) * np.eye(n_in)
        return LinearModel(np.zeros((0, 0)), np.zeros((0, n_in)), np.zeros((D.shape[0], 0)),
                           D, [self.u], [self.y], [])


class Sum(Block):
    """Signed sum of inputs: :math:`y = \\sum_i s_i u_i` with signs from ``signs``.

    ``signs="+-"`` gives inputs ``u0``, ``u1`` and ``y = u0 - u1``.

    Ports
    -----
    in   u0 .. u(n-1)   shape ``shape`` [unit], one per sign
    out  y              shape ``shape`` [unit]; feedthrough from all inputs

    Parameters
    ----------
    signs : str
        One ``+`` or ``-`` per input: :math:`s_i = \\pm 1`.
    shape : tuple
        Shape of the inputs and of ``y`` (default scalar).
    unit : str, optional
        Unit of every input and of ``y``.
    """

    def __init__(self, name: str, signs: str = "++", shape: Any = (),
                 unit: str | None = None) -> None:
        super().__init__(name)
        if not signs or set(signs) - {"+", "-"}:
            raise ParameterError(f"Sum '{name}': signs must be a string of '+' and '-', "
                                 f"got {signs!r}")
        self.signs = [1.0 if c == "+" else -1.0 for c in signs]
        self.ins = PortList([self.declare_input(f"u{i}", shape=shape, unit=unit)
                             for i in range(len(signs))], self,
                            f"give one sign per input (signs={signs + '+'!r} for one more)")
        ins, sg = self.ins, self.signs
        if len(ins) == 2 and sg == [1.0, -1.0]:
            a, b = ins

            def calc(ctx):
                return ctx.input(a) - ctx.input(b)
        elif len(ins) == 2 and sg == [1.0, 1.0]:
            a, b = ins

            def calc(ctx):
                return ctx.input(a) + ctx.input(b)
        else:
            def calc(ctx):
                acc = 0.0
                for p, s in zip(ins, sg, strict=True):
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

    .. math:: y = \\prod_i u_i^{s_i}, \\qquad s_i = +1 \\text{ for * and } -1 \\text{ for /}

    (element-wise for array inputs).

    Ports
    -----
    in   u0 .. u(n-1)   shape ``shape`` [no unit], one per character of ``ops``
    out  y              shape ``shape`` [no unit]; feedthrough from all inputs

    Parameters
    ----------
    ops : str
        One ``*`` (multiply) or ``/`` (divide) per input.
    shape : tuple
        Shape of the inputs and of ``y`` (default scalar).
    """

    def __init__(self, name: str, ops: str = "**", shape: Any = ()) -> None:
        super().__init__(name)
        if not ops or set(ops) - {"*", "/"}:
            raise ParameterError(f"Product '{name}': ops must be '*' and '/' characters")
        self.ops = ops
        self.ins = PortList([self.declare_input(f"u{i}", shape=shape) for i in range(len(ops))],
                            self, f"give one operator per input (ops={ops + '*'!r} for one more)")

        def calc(ctx):
            acc = 1.0
            for p, o in zip(self.ins, self.ops, strict=True):
                v = ctx.input(p)
                acc = acc * v if o == "*" else acc / v
            return acc
        self.y = self.declare_output("y", calc, shape=shape)


def _finite(name: str, v: Any) -> float:
    x = float(v)
    if x != x:
        raise ValueError(f"block '{name}': NaN is not a limit or threshold")
    return x


def _limits(kind: str, name: str, lower: Any, upper: Any) -> tuple[float, float]:
    """``lower`` and ``upper`` checked (``lower <= upper`` is checked again at every use,
    since a context may change one of them)."""
    try:
        lo, hi = _finite(name, lower), _finite(name, upper)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{kind} '{name}': {exc}") from None
    if not lo <= hi:
        raise ParameterError(f"{kind} '{name}': lower {lower} > upper {upper}")
    return lo, hi


def _ordered(block: Block, lo: float, hi: float) -> tuple[float, float]:
    if lo > hi:
        raise ValueError(f"{type(block).__name__} '{block.path}': lower {lo} > upper {hi} "
                         "(set in the context); give lower <= upper")
    return lo, hi


class Saturation(Block):
    """Saturation: :math:`y = \\min(\\max(u, lo), hi)` (element-wise).

    Ports
    -----
    in   u   shape ``shape`` [unit]
    out  y   shape ``shape`` [unit]; feedthrough from u

    Parameters
    ----------
    lower, upper : float
        :math:`lo \\le hi`, in the unit of ``u``; context parameters (tunable per context,
        as in the exported FMU).
    unit : str, optional
        Unit of ``u`` and ``y``.
    shape : tuple
        Shape of ``u`` and ``y`` (default scalar).
    """

    argument_checks = {"lower": UNBOUNDED, "upper": UNBOUNDED}

    def __init__(self, name: str, lower: float, upper: float, unit: str | None = None,
                 shape: Any = ()) -> None:
        super().__init__(name)
        lo, hi = _limits("Saturation", name, lower, upper)
        self.lower = self.declare_parameter("lower", lo, unit,
                                            validate=lambda v: _finite(name, v))
        self.upper = self.declare_parameter("upper", hi, unit,
                                            validate=lambda v: _finite(name, v))
        self.u = self.declare_input("u", shape=shape, unit=unit)
        lo_h, hi_h = self.lower, self.upper
        if shape == ():
            def calc(ctx):
                lo, hi = _ordered(self, ctx.param(lo_h), ctx.param(hi_h))
                return min(max(ctx.input(self.u), lo), hi)
        else:
            def calc(ctx):
                lo, hi = _ordered(self, ctx.param(lo_h), ctx.param(hi_h))
                return np.clip(ctx.input(self.u), lo, hi)
        self.y = self.declare_output("y", calc, shape=shape, unit=unit)


class DeadZone(Block):
    """Dead zone: zero inside ``[lower, upper]``, shifted identity outside.

    .. math:: y = u - hi \\;(u > hi), \\quad 0 \\;(lo \\le u \\le hi), \\quad u - lo \\;(u < lo)

    Ports
    -----
    in   u   scalar [unit]
    out  y   scalar [unit]; feedthrough from u

    Parameters
    ----------
    lower, upper : float
        :math:`lo \\le hi`, in the unit of ``u``; context parameters (tunable per context,
        as in the exported FMU).
    unit : str, optional
        Unit of ``u`` and ``y``.
    """

    argument_checks = {"lower": UNBOUNDED, "upper": UNBOUNDED}

    def __init__(self, name: str, lower: float, upper: float, unit: str | None = None) -> None:
        super().__init__(name)
        lo, hi = _limits("DeadZone", name, lower, upper)
        self.lower = self.declare_parameter("lower", lo, unit,
                                            validate=lambda v: _finite(name, v))
        self.upper = self.declare_parameter("upper", hi, unit,
                                            validate=lambda v: _finite(name, v))
        self.u = self.declare_input("u", unit=unit)
        lo_h, hi_h = self.lower, self.upper

        def calc(ctx):
            lo, hi = _ordered(self, ctx.param(lo_h), ctx.param(hi_h))
            u = ctx.input(self.u)
            return u - hi if u > hi else (u - lo if u < lo else 0.0)
        self.y = self.declare_output("y", calc, unit=unit)


class Switch(Block):
    """Switch: ``y = u_true if control >= threshold else u_false``.

    .. math:: y = u_\\mathrm{true} \\;(c \\ge \\theta), \\qquad u_\\mathrm{false} \\;(c < \\theta)

    Ports
    -----
    in   u_true    scalar [unit]
    in   control   scalar [no unit], :math:`c`
    in   u_false   scalar [unit]
    out  y         scalar [unit]; feedthrough from all inputs

    Parameters
    ----------
    threshold : float
        :math:`\\theta`; a context parameter (tunable per context, as in the exported FMU).
    unit : str, optional
        Unit of ``u_true``, ``u_false`` and ``y``.
    """

    argument_checks = {"threshold": UNBOUNDED}

    def __init__(self, name: str, threshold: float = 0.5, unit: str | None = None) -> None:
        super().__init__(name)
        self.threshold = th = self.declare_parameter("threshold", _finite(name, threshold),
                                                     validate=lambda v: _finite(name, v))
        self.u_true = self.declare_input("u_true", unit=unit)
        self.control = self.declare_input("control")
        self.u_false = self.declare_input("u_false", unit=unit)
        self.y = self.declare_output(
            "y", lambda ctx: ctx.input(self.u_true) if ctx.input(self.control) >= ctx.param(th)
            else ctx.input(self.u_false), unit=unit)


class UnitConversion(Block):
    """Explicit unit conversion, as ``UnitConversion("c", "rpm", "rad/s")``.

    .. math:: y = s u + b

    with scale :math:`s` and offset :math:`b` from :func:`cosim.units.conversion`.

    Ports
    -----
    in   u   shape ``shape`` [from_unit]
    out  y   shape ``shape`` [to_unit]; feedthrough from u

    Parameters
    ----------
    from_unit, to_unit : str
        Compatible units (the same dimension).
    shape : tuple
        Shape of ``u`` and ``y`` (default scalar).
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

    .. math:: y = (u_0, u_1, \\dots, u_{n-1})

    Ports
    -----
    in   u0 .. u(n-1)   scalars [unit]
    out  y              (n,) [unit]; feedthrough from all inputs

    Parameters
    ----------
    n : int
        Number of inputs.
    unit : str, optional
        Unit of every input and of ``y``.
    """

    argument_checks = {"n": COUNT}

    def __init__(self, name: str, n: int, unit: str | None = None) -> None:
        super().__init__(name)
        self.ins = PortList([self.declare_input(f"u{i}", unit=unit) for i in range(int(n))],
                            self, "give n for more inputs")
        self.y = self.declare_output(
            "y", lambda ctx: np.array([ctx.input(p) for p in self.ins]), shape=(int(n),),
            unit=unit)

    def linear_model(self, ctx):
        n = len(self.ins)
        return LinearModel(np.zeros((0, 0)), np.zeros((0, n)), np.zeros((n, 0)), np.eye(n),
                           list(self.ins), [self.y], [])


class Demux(Block):
    """Split a vector ``u`` of shape (n,) into scalars ``y0..y(n-1)``.

    .. math:: y_i = u_i, \\qquad i = 0, \\dots, n-1

    Ports
    -----
    in   u              (n,) [unit]
    out  y0 .. y(n-1)   scalars [unit]; feedthrough from u

    Parameters
    ----------
    n : int
        Length of ``u``: the number of outputs.
    unit : str, optional
        Unit of ``u`` and of every output.
    """

    argument_checks = {"n": COUNT}

    def __init__(self, name: str, n: int, unit: str | None = None) -> None:
        super().__init__(name)
        self.u = self.declare_input("u", shape=(int(n),), unit=unit)
        self.outs = PortList([self.declare_output(f"y{i}", (lambda i: lambda ctx:
                                                   float(ctx.input(self.u)[i]))(i), unit=unit)  # noqa: B023
                              for i in range(int(n))], self, "give n for more outputs")

    def linear_model(self, ctx):
        n = len(self.outs)
        return LinearModel(np.zeros((0, 0)), np.zeros((0, n)), np.zeros((n, 0)), np.eye(n),
                           [self.u], list(self.outs), [])


# ------------------------------------------------------------ sampled nonlinear


class RateLimiter(Block):
    r"""Slew-rate limiter, sampled every ``period_s`` = :math:`T`.

    .. math::

        y_k = y_{k-1} + \mathrm{clip}\big(u_k - y_{k-1},\; -r_f T,\; r_r T\big),
        \qquad y_{-1} = \mathrm{initial}

    with :math:`r_r` = ``rising_per_s`` and :math:`r_f` = ``falling_per_s``
    (both magnitudes, >= 0; ``math.inf`` disables a direction).

    Why sampled: a continuous rate limiter needs a state whose derivative
    switches between :math:`r_r`, :math:`-r_f` and "follow the input", a
    discontinuous right-hand side that a solver can only resolve with events or
    a stiff high-gain tracking loop.  The sampled form is exact, explicit and
    the one found in controller code; choose ``period_s`` as the controller or
    solver step.

    Ports
    -----
    in   u   scalar [unit]
    out  y   scalar [unit]; sampled, feedthrough from u

    Parameters
    ----------
    rising_per_s, falling_per_s : float
        :math:`r_r`, :math:`r_f` [unit/s], >= 0.
    period_s : float
        :math:`T` [s].
    initial : float
        :math:`y_{-1}` [unit].
    offset_s : float
        Time of the first hit [s], in ``[0, period_s)``.
    unit : str, optional
        Unit of ``u`` and ``y``.
    """

    argument_checks = {"rising_per_s": Number(low=0.0, infinite=True),
                       "falling_per_s": Number(low=0.0, infinite=True), "period_s": POSITIVE,
                       "offset_s": NON_NEGATIVE}

    def __init__(self, name: str, rising_per_s: float, falling_per_s: float, period_s: float,
                 initial: float = 0.0, offset_s: float = 0.0, unit: str | None = None) -> None:
        super().__init__(name)
        self.T, self.offset_s = check_period("RateLimiter", name, period_s, offset_s)
        rates = []
        for label, r in (("rising_per_s", rising_per_s), ("falling_per_s", falling_per_s)):
            try:
                ok = float(r) >= 0  # False for NaN
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ParameterError(f"RateLimiter '{name}': {label} must be a rate >= 0 (a "
                                     f"magnitude, math.inf for no limit), got {r!r}")
            rates.append(float(r))
        self.rising, self.falling = rates  # the defaults of the context parameters
        rate_unit = f"({unit})/s" if unit else None

        def as_rate(v: Any) -> float:
            x = float(v)
            if not x >= 0:
                raise ValueError("a rate limit must be >= 0 (math.inf: no limit)")
            return x
        self.rising_per_s = self.declare_parameter("rising_per_s", rates[0], rate_unit,
                                                   validate=as_rate)
        self.falling_per_s = self.declare_parameter("falling_per_s", rates[1], rate_unit,
                                                    validate=as_rate)
        self.u = self.declare_input("u", unit=unit)
        self.x = self.declare_discrete_state("y_prev", float(initial))
        self.y = self.declare_output("y", self._y, unit=unit, depends_on=("u",))
        self.declare_periodic_update(self.T, self._update, self.offset_s)

    def _y(self, ctx: Any) -> float:
        prev = ctx.discrete(self.x)
        up, down = ctx.param(self.rising_per_s) * self.T, ctx.param(self.falling_per_s) * self.T
        return prev + min(max(ctx.input(self.u) - prev, -down), up)

    def _update(self, ctx: Any) -> None:
        ctx.set_discrete(self.x, self._y(ctx))


class Relay(Block):
    r"""Relay with hysteresis, sampled every ``period_s``.

    .. math::

        s_k = \begin{cases} \text{on} & u_k \ge u_\mathrm{on} \\
                            \text{off} & u_k \le u_\mathrm{off} \\
                            s_{k-1} & \text{otherwise} \end{cases}
        \qquad y_k = \text{on\_value if } s_k \text{ else off\_value}

    (cases checked in this order), with ``off_threshold`` <= ``on_threshold``
    and :math:`s_{-1}` = ``initial_on``.  The switching state needs memory,
    hence a discrete state and a sample period (a continuous relay would need
    state events).

    Ports
    -----
    in   u   scalar [input_unit]
    out  y   scalar [unit]; sampled, feedthrough from u

    Parameters
    ----------
    on_threshold, off_threshold : float
        :math:`u_\mathrm{on} \ge u_\mathrm{off}` [input_unit].
    on_value, off_value : float
        The output in each state [unit].
    period_s : float
        Sample period [s] (keyword-only).
    initial_on : bool
        :math:`s_{-1}`.
    offset_s : float
        Time of the first hit [s], in ``[0, period_s)``.
    input_unit, unit : str, optional
        Units of ``u`` and ``y``.
    """

    argument_checks = {"period_s": POSITIVE, "offset_s": NON_NEGATIVE}

    def __init__(self, name: str, on_threshold: float, off_threshold: float,
                 on_value: float = 1.0, off_value: float = 0.0, *, period_s: float,
                 initial_on: bool = False, offset_s: float = 0.0,
                 input_unit: str | None = None, unit: str | None = None,
                 **old: Any) -> None:
        super().__init__(name)
        refuse_renamed("Relay", name, old)
        self.T, self.offset_s = check_period("Relay", name, period_s, offset_s)
        self.on_th, self.off_th = float(on_threshold), float(off_threshold)
        if not self.off_th <= self.on_th:
            raise ParameterError(f"Relay '{name}': off_threshold {off_threshold!r} must not "
                                 f"exceed on_threshold {on_threshold!r}")
        self.on_value, self.off_value = float(on_value), float(off_value)
        self.u = self.declare_input("u", unit=input_unit)
        self.on = self.declare_discrete_state("on", bool(initial_on))
        self.y = self.declare_output("y", self._y, unit=unit, depends_on=("u",))
        self.declare_periodic_update(self.T, self._update, self.offset_s)

    def _state(self, ctx: Any) -> bool:
        u = ctx.input(self.u)
        if u >= self.on_th:
            return True
        if u <= self.off_th:
            return False
        return ctx.discrete(self.on)

    def _y(self, ctx: Any) -> float:
        return self.on_value if self._state(ctx) else self.off_value

    def _update(self, ctx: Any) -> None:
        ctx.set_discrete(self.on, self._state(ctx))


# ------------------------------------------------------------------- algebraic


class Abs(Block):
    r"""Absolute value: :math:`y = |u|` (element-wise).

    Ports
    -----
    in   u   shape ``shape`` [unit]
    out  y   shape ``shape`` [unit]; feedthrough from u

    Parameters
    ----------
    shape : tuple
        Shape of ``u`` and ``y`` (default scalar).
    unit : str, optional
        Unit of ``u`` and ``y``.
    """

    def __init__(self, name: str, shape: Any = (), unit: str | None = None) -> None:
        super().__init__(name)
        shape = normalize_shape(shape)
        self.u = self.declare_input("u", shape=shape, unit=unit)
        self.y = self.declare_output("y", self._y, shape=shape, unit=unit)

    def _y(self, ctx: Any) -> Any:
        return abs(ctx.input(self.u))


class MinMax(Block):
    r"""Minimum or maximum of ``n`` inputs (element-wise):
    :math:`y = \min_i u_i` or :math:`y = \max_i u_i`.

    Ports
    -----
    in   u0 .. u(n-1)   shape ``shape`` [unit]
    out  y              shape ``shape`` [unit]; feedthrough from all inputs

    Parameters
    ----------
    function : str
        ``"min"`` or ``"max"``.
    n : int
        Number of inputs, >= 1.
    shape : tuple
        Shape of the inputs and of ``y`` (default scalar).
    unit : str, optional
        Unit of every input and of ``y``.
    """

    argument_checks = {"n": COUNT}

    def __init__(self, name: str, function: str = "max", n: int = 2, shape: Any = (),
                 unit: str | None = None) -> None:
        super().__init__(name)
        if function not in ("min", "max"):
            raise ParameterError(f"MinMax '{name}': function must be 'min' or 'max', "
                                 f"got {function!r}")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ParameterError(f"MinMax '{name}': n must be an integer >= 1, got {n!r}")
        self.function = function
        shape = normalize_shape(shape)
        self.ins = PortList([self.declare_input(f"u{i}", shape=shape, unit=unit)
                             for i in range(int(n))], self, "give n for more inputs")
        self._scalar = shape == ()
        self._op = (min if function == "min" else max) if self._scalar else \
            (np.minimum if function == "min" else np.maximum).reduce
        self.y = self.declare_output("y", self._y, shape=shape, unit=unit)

    def _y(self, ctx: Any) -> Any:
        xs = [ctx.input(p) for p in self.ins]
        if self._scalar:
            return xs[0] if len(xs) == 1 else self._op(xs)
        return self._op(xs)  # a new array, also for n = 1
