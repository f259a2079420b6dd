"""Sources: constant, step, ramp, sine, pulse, table lookups and recorded data.

Discontinuous sources declare their switching instants as time events so the
integrators stop exactly there (no step straddles a jump).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.params import NON_NEGATIVE, POSITIVE, UNBOUNDED, Number, refuse
from cosim.ports import text_kind


class Constant(Block):
    """Constant output :math:`y = c`; :math:`c` is the parameter ``value`` (tunable per
    context: ``ctx.set_param("<name>.value", c)``).

    ``dtype`` (default float) may be an integer type (``int``, ``np.int64``,
    ``np.uint64``, ...) or ``bool``: the output then carries exact Python ints/bools (an
    Int64 or UInt64 FMU input gets its value exactly, never through float64); with
    :data:`cosim.ports.STRING` or :data:`~cosim.ports.BINARY` a scalar ``str`` or
    ``bytes`` (an FMU's String or Binary input).

    Ports
    -----
    out  y   shape of ``value``, type ``dtype`` [unit]; no inputs

    Parameters
    ----------
    value : float, int, bool, array_like, str or bytes
        The output; a new value set on a context is checked against the shape and dtype.
    unit : str, optional
        Unit of ``y``.
    dtype : type
        ``float`` (default), an integer type, ``bool``, ``cosim.ports.STRING`` or
        ``BINARY``.
    """

    def __init__(self, name: str, value: Any = 0.0, unit: str | None = None,
                 dtype: Any = float) -> None:
        super().__init__(name)
        shape = np.shape(value)
        dt = np.dtype(dtype)
        if dt.kind not in "fiubO":
            raise refuse(self, "dtype", dtype, "a float, integer or bool type, or "
                         "cosim.ports.STRING / BINARY")
        text = text_kind(dt)
        if text is not None:
            self._text_constant(name, value, unit, dt, text)
            return

        def scalar(v: Any) -> Any:
            if dt.kind == "f":
                return float(v)
            if dt.kind == "b":
                return bool(v)
            if isinstance(v, float) and not v.is_integer() or isinstance(v, (complex, str)):
                raise ValueError(f"{v!r} is not an integer")
            v = int(v)
            info = np.iinfo(dt)
            if not info.min <= v <= info.max:
                raise ValueError(f"{v} is outside the range of {dt} [{info.min}, {info.max}]")
            return v

        def as_value(v: Any) -> Any:
            # array ports carry NumPy arrays of the declared shape, scalars Python numbers
            if isinstance(v, str) or v is None:
                raise ValueError(f"{v!r} is not a number")
            if not shape:
                out = scalar(v)
            else:
                out = np.array(v, dtype=dt)
                if out.shape != shape:
                    raise ValueError(f"expected shape {shape}, got {out.shape}")
            if dt.kind == "f" and not np.all(np.isfinite(out)):
                raise ValueError(f"{v!r} is not finite")
            return out
        try:
            default = as_value(value)
        except (TypeError, ValueError) as exc:
            kind = {"f": "finite numbers", "b": "Booleans"}.get(dt.kind, f"integers of {dt}")
            raise refuse(self, "value", value, f"{kind} ({exc})") from None
        self.value = self.declare_parameter("value", default, unit, validate=as_value)
        self.y = self.declare_output("y", lambda ctx: ctx.param(self.value), shape=shape,
                                     dtype=dt, unit=unit, depends_on=())

    def _text_constant(self, name: str, value: Any, unit: str | None, dt: Any,
                       text: str) -> None:
        """A String (``str``) or Binary (``bytes``) constant: a scalar of that type."""
        want = bytes if text == "Binary" else str

        def as_value(v: Any) -> Any:
            v = bytes(v) if isinstance(v, bytearray) else v
            if not isinstance(v, want):
                raise ValueError(f"{v!r} is not {want.__name__} (dtype {text})")
            return v
        try:
            default = as_value(value)
        except ValueError as exc:
            raise refuse(self, "value", value, f"a {want.__name__} ({exc})") from None
        self.value = self.declare_parameter("value", default, unit, validate=as_value)
        self.y = self.declare_output("y", lambda ctx: ctx.param(self.value), dtype=dt,
                                     unit=unit, depends_on=())


class Step(Block):
    """Step from ``initial`` to ``final`` at ``time_s``.

    .. math:: y(t) = y_0 \\; (t < t_s), \\qquad y_1 \\; (t \\ge t_s)

    The step is a time event: the integrators stop exactly at :math:`t_s`.

    Ports
    -----
    out  y   scalar [unit]; time only

    Parameters
    ----------
    time_s : float
        Step instant :math:`t_s` [s].
    final : float
        Value :math:`y_1` from ``time_s`` on.
    initial : float
        Value :math:`y_0` before ``time_s``.
    unit : str, optional
        Unit of ``y``.
    """

    def __init__(self, name: str, time_s: float = 0.0, final: float = 1.0,
                 initial: float = 0.0, unit: str | None = None) -> None:
        super().__init__(name)
        self.t_s, self.y0, self.y1 = float(time_s), float(initial), float(final)
        if self.t_s > 0:
            self.declare_time_event(self.t_s)
        t_s, y0, y1 = self.t_s, self.y0, self.y1
        # ctx.mode_time: the start of the integration interval while integrating, so a
        # step ending exactly at t_s sees the left limit (the jump is a time event)
        self.y = self.declare_output(
            "y", lambda ctx: y1 if ctx.mode_time >= t_s - 1e-12 else y0, unit=unit,
            depends_on=())


class Ramp(Block):
    """Ramp of ``slope`` starting at ``start_s`` from ``initial``.

    .. math:: y = y_0 + s \\max(0, t - t_0)

    Ports
    -----
    out  y   scalar [unit]; time only

    Parameters
    ----------
    slope : float
        :math:`s` [unit/s].
    start_s : float
        Start :math:`t_0` [s] (a time event).
    initial : float
        :math:`y_0`, the value up to ``start_s``.
    unit : str, optional
        Unit of ``y``.
    """

    def __init__(self, name: str, slope: float = 1.0, start_s: float = 0.0,
                 initial: float = 0.0, unit: str | None = None) -> None:
        super().__init__(name)
        t0 = float(start_s)
        #: the start time [s]: a constant of the block (its time event is declared here)
        self.start_s = t0
        self.slope = kh = self.declare_parameter("slope", float(slope), _per_second(unit),
                                                 validate=float)
        self.initial = yh = self.declare_parameter("initial", float(initial), unit,
                                                   validate=float)
        if t0 > 0:
            self.declare_time_event(t0)
        self.y = self.declare_output(
            "y", lambda ctx: ctx.param(yh) + ctx.param(kh) * max(0.0, ctx.time - t0),
            unit=unit, depends_on=())

    def inline_output(self, port: Any, bind: Any, plan: Any) -> str:
        """The output in the generated code, the same operations as its ``calc``."""
        k, y0 = (f"ctx.params[{plan.param_index[h]}]" for h in (self.slope, self.initial))
        return f"({y0} + {k} * {bind(max)}(0.0, ctx.time - {self.start_s!r}))"


_TWO_PI = 2 * np.pi  #: the angular frequency is 2 pi f, computed as (2 pi) f


def _non_negative(v: Any) -> float:
    v = float(v)
    if not v >= 0.0:
        raise ValueError(f"{v!r} is negative")
    return v


def _per_second(unit: str | None) -> str | None:
    """The unit of a rate of ``unit`` (a slope)."""
    if unit is None:
        return None
    return "1/s" if unit in ("", "1") else f"({unit})/s"


class Sine(Block):
    """Sine wave.

    .. math:: y = A \\sin(2 \\pi f t + \\varphi) + b

    Ports
    -----
    out  y   scalar [unit]; time only

    Parameters
    ----------
    amplitude : float
        :math:`A` [unit].
    frequency_hz : float
        :math:`f` [Hz].
    phase_rad : float
        :math:`\\varphi` [rad].
    bias : float
        :math:`b` [unit].
    unit : str, optional
        Unit of ``y``.
    """

    argument_checks = {"frequency_hz": NON_NEGATIVE}

    def __init__(self, name: str, amplitude: float = 1.0, frequency_hz: float = 1.0,
                 phase_rad: float = 0.0, bias: float = 0.0, unit: str | None = None) -> None:
        super().__init__(name)
        self.amplitude = ah = self.declare_parameter("amplitude", float(amplitude), unit,
                                                     validate=float)
        self.frequency_hz = fh = self.declare_parameter("frequency_hz", float(frequency_hz),
                                                        "Hz", validate=_non_negative)
        self.phase_rad = ph = self.declare_parameter("phase_rad", float(phase_rad), "rad",
                                                     validate=float)
        self.bias = bh = self.declare_parameter("bias", float(bias), unit, validate=float)
        sin = math.sin
        self.y = self.declare_output(
            "y", lambda ctx: ctx.param(ah) * sin(_TWO_PI * ctx.param(fh) * ctx.time
                                                 + ctx.param(ph)) + ctx.param(bh),
            unit=unit, depends_on=())

    def inline_output(self, port: Any, bind: Any, plan: Any) -> str:
        """The output in the generated code, the same operations as its ``calc``."""
        a, f, ph, b = (f"ctx.params[{plan.param_index[h]}]"
                       for h in (self.amplitude, self.frequency_hz, self.phase_rad, self.bias))
        return (f"({a} * {bind(math.sin)}({_TWO_PI!r} * {f} * ctx.time + {ph}) + {b})")


class Pulse(Block):
    """Periodic rectangular pulse: ``amplitude`` for ``duty * period_s`` of each period.

    .. math:: y = A \\; (t \\ge d,\\ t < t_\\mathrm{stop},\\
              (t - d) \\bmod T < \\mathrm{duty}\\, T), \\qquad 0 \\; \\text{otherwise}

    The edges are time events (the integrators stop exactly there) up to
    ``stop_s``, where the pulse train ends, or for the first 1000 periods when
    ``stop_s`` is not given (later edges would be straddled by solver steps).

    Ports
    -----
    out  y   scalar [unit]; time only

    Parameters
    ----------
    period_s : float
        :math:`T` [s], > 0.
    duty : float
        Fraction of the period at ``amplitude``, in (0, 1).
    amplitude : float
        :math:`A` [unit].
    delay_s : float
        :math:`d`, the first rising edge [s].
    stop_s : float, optional
        :math:`t_\\mathrm{stop}`, the end of the pulse train [s] (default: none).
    unit : str, optional
        Unit of ``y``.
    """

    argument_checks = {"period_s": POSITIVE, "delay_s": NON_NEGATIVE, "stop_s": UNBOUNDED,
                       "duty": Number(0.0, 1.0, low_open=True, high_open=True)}

    def __init__(self, name: str, period_s: float, duty: float = 0.5, amplitude: float = 1.0,
                 delay_s: float = 0.0, stop_s: float | None = None,
                 unit: str | None = None) -> None:
        super().__init__(name)
        T, w, A, d = float(period_s), float(duty) * float(period_s), float(amplitude), \
            float(delay_s)
        stop = float(stop_s) if stop_s is not None else np.inf
        horizon = stop if stop_s is not None else d + 1000 * T
        edges = []
        k = 0
        while d + k * T <= horizon and d + k * T < stop and k < 100000:
            edges.extend([d + k * T, min(d + k * T + w, stop)])
            k += 1
        if stop_s is not None:
            edges.append(stop)
        self.declare_time_event(sorted({e for e in edges if e > 0}))

        def calc(ctx):  # branch chosen at ctx.mode_time (see Step)
            t = ctx.mode_time - d
            if t < -1e-12 or ctx.mode_time >= stop - 1e-12:
                return 0.0
            phase = t - T * np.floor((t + 1e-12) / T)
            return A if phase < w - 1e-12 else 0.0
        self.y = self.declare_output("y", calc, unit=unit, depends_on=())


class ClosedFormSource(Block):
    """Any closed-form signal of time: :math:`y = f(t)`.

    Ports
    -----
    out  y   shape ``shape`` [unit]; time only

    Parameters
    ----------
    fn : callable
        :math:`f`: the time [s] to the value (a float, or an array of ``shape``).
    shape : tuple
        Shape of ``y`` (default scalar).
    unit : str, optional
        Unit of ``y``.
    """

    #: the C form (:mod:`cosim.codegen.pyfunc`) translates ``fn`` as a FunctionBlock's of
    #: the time alone; where it does not, the block is called back from the C
    needs_time = True

    def __init__(self, name: str, fn: Any, shape: Any = (), unit: str | None = None) -> None:
        super().__init__(name)
        self.fn = fn
        self.y = self.declare_output("y", lambda ctx: fn(ctx.time), shape=shape, unit=unit,
                                     depends_on=())
        self.in_ports: list = []
        self.out_ports = [self.y]


class TimeSource(Block):
    """The simulation time: :math:`y = t`.

    Ports
    -----
    out  t   scalar [s]; time only
    """

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.t = self.declare_output("t", lambda ctx: ctx.time, unit="s", depends_on=())
