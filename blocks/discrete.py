r"""Discrete-time blocks: hold, delay, rate transition, integrator, state space in z.

Every block here is *sampled* (see :mod:`cosim.simulator`): at its hits
:math:`t_k = t_\mathrm{off} + k T` its outputs are computed from its discrete
state and the inputs of that instant and then **held** until the next hit;
the discrete update :math:`x_{k+1} = f(x_k, u_k)` runs after all the outputs
of the instant, with the same inputs.  A sampled block reads its inputs at its
own hit: no delay is added unless the block is a delay (:class:`UnitDelay`).

Signals are taken as zero before the first hit (the convention of discrete
transfer functions started from rest).  Before the first hit of a block with
``offset_s > 0`` its output is computed once at the start time from its initial
state (e.g. a ``UnitDelay`` holds ``initial``).

:func:`c2d` discretizes continuous state-space matrices (zero-order hold or
Tustin) for :class:`DiscreteStateSpace`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE, POSITIVE, UNBOUNDED, VALUES, refuse
from cosim.ports import normalize_shape

from ._units import integral, refuse_renamed
from .lti import check_matrices, tf_to_ss

# ------------------------------------------------------------------ helpers


def check_period(kind: str, name: str, period_s: Any, offset_s: Any = 0.0) -> tuple[float, float]:
    """Validated ``(period_s, offset_s)`` as floats; errors name the block."""
    try:
        T = float(period_s)
        off = float(offset_s)
    except (TypeError, ValueError):
        raise ParameterError(f"{kind} '{name}': period_s and offset_s must be numbers of "
                             f"seconds, got period_s={period_s!r}, offset_s={offset_s!r}") from None
    if not (math.isfinite(T) and T > 0):
        raise ParameterError(f"{kind} '{name}': period_s must be a positive number of seconds, "
                             f"got {period_s!r}")
    if not (math.isfinite(off) and 0 <= off < T):
        raise ParameterError(f"{kind} '{name}': offset_s must lie in [0, period_s = {T:g} s), "
                             f"got {offset_s!r}")
    return T, off


def check_limits(kind: str, name: str, lower: Any, upper: Any) -> tuple[float, float]:
    """``(lo, hi)`` with ``None`` as an infinite bound; requires ``lo <= hi``."""
    lo = -math.inf if lower is None else float(lower)
    hi = math.inf if upper is None else float(upper)
    if math.isnan(lo) or math.isnan(hi) or not lo <= hi:
        raise ParameterError(f"{kind} '{name}': lower limit {lower!r} must not exceed upper "
                             f"limit {upper!r}")
    return lo, hi


def _value(v: Any, shape: tuple) -> Any:
    """A float for scalar ports, else a fresh float array of ``shape``."""
    if shape == ():
        return float(v)
    return np.array(np.broadcast_to(np.asarray(v, dtype=float), shape))


def _shape_of(kind: str, name: str, initial: Any, shape: Any) -> tuple:
    shape = normalize_shape(shape)
    if np.ndim(initial) == 0:
        return shape
    ishape = np.shape(initial)
    if shape not in ((), ishape):
        raise ParameterError(f"{kind} '{name}': initial has shape {ishape} but shape={shape}")
    return ishape


# -------------------------------------------------------------- hold/delay


class ZeroOrderHold(Block):
    r"""Zero-order hold: samples its input at each hit and holds it.

    .. math:: y(t) = u(t_k), \qquad t_k \le t < t_{k+1}, \quad t_k = t_\mathrm{off} + k T

    Ports
    -----
    in   u   shape ``shape`` [unit]
    out  y   shape ``shape`` [unit]; sampled, feedthrough from u at the hits

    Parameters
    ----------
    period_s : float
        Sample period T [s].
    offset_s : float
        Time of the first hit [s], in ``[0, period_s)``.
    shape : tuple
        Shape of ``u`` and ``y`` (default scalar).
    unit : str, optional
        Unit of ``u`` and ``y``.
    """

    argument_checks = {"period_s": POSITIVE, "offset_s": NON_NEGATIVE}

    def __init__(self, name: str, period_s: float, offset_s: float = 0.0, shape: Any = (),
                 unit: str | None = None) -> None:
        super().__init__(name)
        kind = type(self).__name__
        self.period_s, self.offset_s = check_period(kind, name, period_s, offset_s)
        shape = normalize_shape(shape)
        self.u = self.declare_input("u", shape=shape, unit=unit)
        # arrays are copied: the held value must not follow later changes of the input array
        calc = self._y_scalar if shape == () else self._y_array
        self.y = self.declare_output("y", calc, shape=shape, unit=unit, depends_on=("u",))
        self.declare_periodic_update(self.period_s, None, self.offset_s)

    def _y_scalar(self, ctx: Any) -> float:
        return ctx.input(self.u)

    def _y_array(self, ctx: Any) -> np.ndarray:
        return np.array(ctx.input(self.u), dtype=float)


class RateTransition(ZeroOrderHold):
    r"""Rate transition between blocks of different rates: a zero-order hold at the
    *output* rate ``period_s``.

    .. math::

        y(t) = u(t_k), \qquad t_k \le t < t_{k+1}, \quad t_k = t_\mathrm{off} + k T_\mathrm{out}

    With held-output semantics a transition needs no buffering:

    * slow -> fast: the slow block's output is already held between its hits,
      so a fast reader sees a piecewise-constant signal; a ``RateTransition`` is
      only documentation there (with ``period_s`` = the fast period it
      re-samples the held value and changes nothing);
    * fast -> slow: the slow reader must see the fast signal sampled at the
      slow hits: ``RateTransition(period_s=T_slow)`` does exactly that (the
      value of the fast signal at the slow hit, no averaging, no extra delay).

    Periods should be integer multiples of each other so the hits coincide.

    Ports
    -----
    in   u   shape ``shape`` [unit]
    out  y   shape ``shape`` [unit]; sampled at ``period_s``, feedthrough from u

    Parameters
    ----------
    period_s : float
        The output rate :math:`T_\mathrm{out}` [s].
    offset_s, shape, unit
        As :class:`ZeroOrderHold`.
    """


class UnitDelay(Block):
    r"""Unit delay: the output at a hit is the input at the previous hit.

    .. math:: y_k = x_k, \qquad x_{k+1} = u_k, \qquad x_0 = \mathrm{initial}

    The output depends on the state only, so a unit delay breaks algebraic
    loops.

    Ports
    -----
    in   u   shape of ``initial`` (or ``shape``) [unit]
    out  y   same shape [unit]; sampled, state only (no feedthrough)

    Parameters
    ----------
    period_s : float
        Sample period [s].
    initial : float or array_like
        :math:`x_0`, the output until the first update; an array sets the shape.
    offset_s : float
        Time of the first hit [s], in ``[0, period_s)``.
    shape : tuple
        Shape for a scalar ``initial`` (default scalar).
    unit : str, optional
        Unit of ``u`` and ``y``.
    """

    argument_checks = {"period_s": POSITIVE, "offset_s": NON_NEGATIVE, "initial": VALUES}

    def __init__(self, name: str, period_s: float, initial: Any = 0.0, offset_s: float = 0.0,
                 shape: Any = (), unit: str | None = None) -> None:
        super().__init__(name)
        self.period_s, self.offset_s = check_period("UnitDelay", name, period_s, offset_s)
        shape = _shape_of("UnitDelay", name, initial, shape)
        self.shape = shape
        self.u = self.declare_input("u", shape=shape, unit=unit)
        self.x = self.declare_discrete_state("x", _value(initial, shape))
        self.y = self.declare_output("y", lambda ctx: ctx.discrete(self.x), shape=shape,
                                     unit=unit, depends_on=())
        self.declare_periodic_update(self.period_s, self._update, self.offset_s)

    def _update(self, ctx: Any) -> None:
        ctx.set_discrete(self.x, _value(ctx.input(self.u), self.shape))


# --------------------------------------------------------------- integrator

_METHODS = ("forward", "backward", "trapezoidal")


class DiscreteIntegrator(Block):
    r"""Discrete-time integrator (accumulator) with a saturated state.

    With :math:`K` = ``gain``, :math:`T` = ``period_s``, :math:`y_{-1}` =
    ``initial``, :math:`u_{-1} = 0` and :math:`\mathrm{sat}` the clipping to
    ``[lower, upper]``:

    .. math::

        \text{forward:}     \quad & y_k = x_k,\quad x_{k+1} = \mathrm{sat}(x_k + K T u_k),
                                    \quad x_0 = \mathrm{initial} \\
        \text{backward:}    \quad & y_k = \mathrm{sat}(y_{k-1} + K T u_k) \\
        \text{trapezoidal:} \quad & y_k = \mathrm{sat}\big(y_{k-1}
                                    + \tfrac{K T}{2} (u_k + u_{k-1})\big)

    These are the transfer functions :math:`K T/(z-1)`, :math:`K T z/(z-1)` and
    :math:`\tfrac{K T}{2}(z+1)/(z-1)` started from ``initial`` with the input
    zero before the first hit.  The forward method has no feedthrough (it
    breaks algebraic loops); the others do.  The saturated value is the state,
    so the integrator never winds up past its limits.

    Ports
    -----
    in   u   shape ``shape`` [input_unit]
    out  y   shape ``shape`` [unit]; sampled; feedthrough unless ``method="forward"``

    Parameters
    ----------
    period_s : float
        :math:`T` [s].
    gain : float
        :math:`K`.
    method : str
        ``"forward"`` (default), ``"backward"`` or ``"trapezoidal"``.
    initial : float or array_like
        :math:`y_{-1}` (an array sets the shape); within the limits.
    lower, upper : float, optional
        Limits of the state (``None``: unlimited).
    offset_s : float
        Time of the first hit [s], in ``[0, period_s)``.
    shape : tuple
        Shape for a scalar ``initial`` (default scalar).
    unit, input_unit : str, optional
        Units of ``y`` and ``u``; given one of the two, the other follows (``m`` from
        ``m/s``: a dimensionless gain).
    """

    argument_checks = {"period_s": POSITIVE, "offset_s": NON_NEGATIVE, "initial": VALUES,
                       "lower": UNBOUNDED, "upper": UNBOUNDED}

    def __init__(self, name: str, period_s: float, gain: float = 1.0, method: str = "forward",
                 initial: Any = 0.0, lower: float | None = None, upper: float | None = None,
                 offset_s: float = 0.0, shape: Any = (), unit: str | None = None,
                 input_unit: str | None = None) -> None:
        super().__init__(name)
        kind = "DiscreteIntegrator"
        unit, input_unit = integral(unit, input_unit)
        self.period_s, self.offset_s = check_period(kind, name, period_s, offset_s)
        if method not in _METHODS:
            raise ParameterError(f"{kind} '{name}': method must be one of "
                                 f"{', '.join(map(repr, _METHODS))}, got {method!r}")
        self.method = method
        self.lo, self.hi = check_limits(kind, name, lower, upper)
        try:
            self.gain = float(gain)
        except (TypeError, ValueError):
            raise ParameterError(f"{kind} '{name}': gain must be a number, got {gain!r}") from None
        shape = _shape_of(kind, name, initial, shape)
        self.shape = shape
        x0 = _value(initial, shape)
        if np.any(np.asarray(x0) < self.lo) or np.any(np.asarray(x0) > self.hi):
            raise ParameterError(f"{kind} '{name}': initial {initial!r} lies outside the limits "
                                 f"[{self.lo:g}, {self.hi:g}]")
        self.limited = math.isfinite(self.lo) or math.isfinite(self.hi)
        self.kt = self.gain * self.period_s
        self.u = self.declare_input("u", shape=shape, unit=input_unit)
        self.x = self.declare_discrete_state("x", x0)
        if method == "trapezoidal":
            self.u_prev = self.declare_discrete_state("u_prev", _value(0.0, shape))
        deps = () if method == "forward" else ("u",)
        calc = (lambda ctx: ctx.discrete(self.x)) if method == "forward" else self._y
        self.y = self.declare_output("y", calc, shape=shape, unit=unit, depends_on=deps)
        self.declare_periodic_update(self.period_s, self._update, self.offset_s)

    def _sat(self, v: Any) -> Any:
        if not self.limited:
            return v
        if self.shape == ():
            return min(max(v, self.lo), self.hi)
        return np.clip(v, self.lo, self.hi)

    def _y(self, ctx: Any) -> Any:
        x, u = ctx.discrete(self.x), ctx.input(self.u)
        if self.method == "backward":
            return self._sat(x + self.kt * u)
        return self._sat(x + 0.5 * self.kt * (u + ctx.discrete(self.u_prev)))

    def _update(self, ctx: Any) -> None:
        u = ctx.input(self.u)
        if self.method == "forward":
            ctx.set_discrete(self.x, self._sat(ctx.discrete(self.x) + self.kt * u))
            return
        ctx.set_discrete(self.x, self._y(ctx))
        if self.method == "trapezoidal":
            ctx.set_discrete(self.u_prev, _value(u, self.shape))


# -------------------------------------------------------------- state space


def _ss_matrices(kind: str, name: str, A: Any, B: Any, C: Any, D: Any):
    """Checked float matrices ``A (n,n), B (n,m), C (p,n), D (p,m)``; a matrix that is not
    finite numbers or does not fit the others is refused by name."""
    owner = f"{kind} '{name}'"
    check_matrices(owner, A=A, B=B, C=C, D=D)
    A_in, B_in, C_in, D_in = A, B, C, D
    A = np.asarray(A, dtype=float)
    A = np.atleast_2d(A) if A.size else np.zeros((0, 0))
    n = A.shape[0]
    if A.ndim != 2 or A.shape != (n, n):
        raise refuse(owner, "A", A_in, "a square matrix (n, n)")
    if n == 0:
        D = np.atleast_2d(np.asarray(0.0 if D is None else D, dtype=float))
        return A, np.zeros((0, D.shape[1])), np.zeros((D.shape[0], 0)), D
    try:
        B = np.asarray(B, dtype=float)
        B = B.reshape(n, -1) if B.ndim < 2 else B
    except ValueError:
        B = None
    if B is None or B.ndim != 2 or B.shape[0] != n:
        raise refuse(owner, "B", B_in, f"a matrix of {n} rows, one per state (A is {n} x {n})")
    try:
        C = np.asarray(C, dtype=float)
        C = C.reshape(-1, n) if C.ndim < 2 else C
    except ValueError:
        C = None
    if C is None or C.ndim != 2 or C.shape[1] != n:
        raise refuse(owner, "C", C_in, f"a matrix of {n} columns, one per state (A is {n} x "
                     f"{n})")
    expected = (C.shape[0], B.shape[1])
    try:
        D = np.zeros(expected) if D is None else np.asarray(D, dtype=float)
        D = D.reshape(expected) if D.ndim < 2 else D
    except ValueError:
        D = None
    if D is None or D.shape != expected:
        raise refuse(owner, "D", D_in, f"shape {expected}: rows of C by columns of B")
    return A, B, C, D


def _period_from_dt(kind: str, name: str, dt: Any, period_s: Any) -> Any:
    """The sample period from a python-control ``dt`` and/or ``period_s``."""
    if dt is True or dt is None:  # discrete with unspecified sampling time
        if period_s is None:
            raise ParameterError(f"{kind} '{name}': the system's sampling time is unspecified "
                                 f"(dt={dt!r}); give period_s")
        return period_s
    if dt == 0:
        raise ParameterError(f"{kind} '{name}': the system is continuous (dt=0); discretize it "
                             "first (c2d) or use StateSpace")
    if period_s is not None and abs(float(period_s) - float(dt)) > 1e-12 * float(dt):
        raise ParameterError(f"{kind} '{name}': period_s={period_s!r} disagrees with the "
                             f"system's dt={dt!r}")
    return float(dt)


def _is_control_ss(obj: Any) -> bool:
    return all(hasattr(obj, k) for k in ("A", "B", "C", "D", "dt"))


def _is_control_tf(obj: Any) -> bool:
    return hasattr(obj, "num") and hasattr(obj, "den") and hasattr(obj, "dt")


class DiscreteStateSpace(Block):
    r"""Discrete-time linear state-space system sampled every ``period_s``.

    .. math:: x_{k+1} = A x_k + B u_k, \qquad y_k = C x_k + D u_k

    ``A`` may be a python-control discrete ``StateSpace`` or ``TransferFunction``
    (then ``B, C, D`` are omitted and its ``dt`` is the period).

    Ports
    -----
    in   u   (m,), or scalar when m = 1 and ``scalar=True`` [input_unit]
    out  y   (p,), or scalar when p = 1 and ``scalar=True`` [unit];
             sampled; depends on u only if D != 0

    Parameters
    ----------
    A, B, C, D : array_like
        The matrices, (n, n), (n, m), (p, n), (p, m) (``D`` default zero); or a
        python-control discrete system as ``A``.
    period_s : float
        Sample period [s] (given by the python-control system's ``dt``).
    x0 : array_like, optional
        :math:`x_0` (default zero).
    offset_s : float
        Time of the first hit [s], in ``[0, period_s)``.
    scalar : bool
        Scalar ports for a single input or output (default).
    input_unit, unit : str, optional
        Units of ``u`` and ``y``.
    """

    argument_checks = {"period_s": POSITIVE, "offset_s": NON_NEGATIVE}

    def __init__(self, name: str, A: Any, B: Any = None, C: Any = None, D: Any = None,
                 period_s: float | None = None, x0: Any = None, *, offset_s: float = 0.0,
                 scalar: bool = True, input_unit: str | None = None,
                 unit: str | None = None, **old: Any) -> None:
        super().__init__(name)
        kind = type(self).__name__
        refuse_renamed(kind, name, old)
        output_unit = unit
        if B is None and (_is_control_ss(A) or _is_control_tf(A)):
            sys = A
            period_s = _period_from_dt(kind, name, sys.dt, period_s)
            if not _is_control_ss(sys):
                import control
                sys = control.ss(sys)
            A, B, C, D = sys.A, sys.B, sys.C, sys.D
        elif period_s is None:
            raise ParameterError(f"{kind} '{name}': give period_s (the sample period in s)")
        A, B, C, D = _ss_matrices(kind, name, A, B, C, D)
        self.period_s, self.offset_s = check_period(kind, name, period_s, offset_s)
        self.A, self.B, self.C, self.D = A, B, C, D
        n, m, p = A.shape[0], B.shape[1], C.shape[0]
        self.n, self.m, self.p = n, m, p
        check_matrices(f"{kind} '{name}'", x0=x0)
        x0_in = x0
        x0 = np.zeros(n) if x0 is None else np.asarray(x0, dtype=float).reshape(-1)
        if x0.shape != (n,):
            raise refuse(self, "x0", x0_in, f"{n} values, one per state")
        self._in_scalar = scalar and m == 1
        self._out_scalar = scalar and p == 1
        self.u = self.declare_input("u", shape=() if self._in_scalar else (m,), unit=input_unit)
        self.x = self.declare_discrete_state("x", x0)
        self._has_d = bool(np.any(D))
        self.y = self.declare_output("y", self._y, shape=() if self._out_scalar else (p,),
                                     unit=output_unit, depends_on=("u",) if self._has_d else ())
        self.declare_periodic_update(self.period_s, self._update, self.offset_s)

    def _u(self, ctx: Any) -> np.ndarray:
        return np.atleast_1d(np.asarray(ctx.input(self.u), dtype=float))

    def _y(self, ctx: Any) -> Any:
        y = self.C @ ctx.discrete(self.x)
        if self._has_d:
            y = y + self.D @ self._u(ctx)
        return float(y[0]) if self._out_scalar else y

    def _update(self, ctx: Any) -> None:
        ctx.set_discrete(self.x, self.A @ ctx.discrete(self.x) + self.B @ self._u(ctx))


class DiscreteTransferFunction(DiscreteStateSpace):
    r"""Discrete SISO transfer function in :math:`z` (coefficients, highest power first).

    .. math:: Y(z) = \frac{b_0 z^n + \dots + b_n}{a_0 z^n + \dots + a_n} U(z)

    Realised in controllable canonical form and started from rest.  ``num`` may
    be a python-control discrete ``TransferFunction`` (then ``den`` is omitted
    and its ``dt`` is the period).

    Ports
    -----
    in   u   scalar [input_unit]
    out  y   scalar [unit]; sampled; feedthrough only if biproper

    Parameters
    ----------
    num, den : array_like
        Coefficients :math:`b_i` and :math:`a_i`, highest power of :math:`z` first (or a
        python-control discrete ``TransferFunction`` as ``num``).
    period_s : float
        Sample period [s].
    offset_s : float
        Time of the first hit [s], in ``[0, period_s)``.
    input_unit, unit : str, optional
        Units of ``u`` and ``y``.
    """

    argument_checks = {"period_s": POSITIVE, "offset_s": NON_NEGATIVE}

    def __init__(self, name: str, num: Any, den: Any = None, period_s: float | None = None, *,
                 offset_s: float = 0.0, input_unit: str | None = None,
                 unit: str | None = None, **old: Any) -> None:
        kind = "DiscreteTransferFunction"
        refuse_renamed(kind, name, old)
        check_matrices(f"{kind} '{name}'", num=num, den=den)
        if den is None and _is_control_tf(num):
            sys = num
            if sys.ninputs != 1 or sys.noutputs != 1:
                raise ParameterError(f"{kind} '{name}': only SISO transfer functions; use "
                                     "DiscreteStateSpace for MIMO systems")
            period_s = _period_from_dt(kind, name, sys.dt, period_s)
            num, den = sys.num[0][0], sys.den[0][0]
        elif den is None:
            raise ParameterError(f"{kind} '{name}': give num and den (or a python-control "
                                 "TransferFunction as num)")
        try:
            A, B, C, D = tf_to_ss(num, den)
        except ParameterError as exc:
            raise ParameterError(f"{kind} '{name}': {exc}") from None
        if period_s is None:
            raise ParameterError(f"{kind} '{name}': give period_s (the sample period in s)")
        super().__init__(name, A, B, C, D, period_s=period_s, offset_s=offset_s,
                         input_unit=input_unit, unit=unit)


# ---------------------------------------------------------------------- c2d

_C2D = {"zoh": "zoh", "tustin": "bilinear"}


def c2d(A: Any, B: Any, C: Any, D: Any, period_s: float, method: str = "zoh"):
    r"""Discretize :math:`\dot x = A x + B u,\ y = C x + D u` with sample period ``period_s``.

    ``method="zoh"`` (exact for inputs held between samples):

    .. math:: A_d = e^{A T}, \qquad B_d = \int_0^T e^{A s}\,ds\; B, \qquad C_d = C, \; D_d = D

    ``method="tustin"`` (bilinear, :math:`s = \frac{2}{T}\frac{z-1}{z+1}`).

    Returns ``(Ad, Bd, Cd, Dd)`` (uses :func:`scipy.signal.cont2discrete`).
    """
    if method not in _C2D:
        raise ParameterError(f"c2d: method must be 'zoh' or 'tustin', got {method!r}")
    T = float(period_s)
    if not (math.isfinite(T) and T > 0):
        raise ParameterError(f"c2d: period_s must be positive, got {period_s!r}")
    A, B, C, D = _ss_matrices("c2d", "matrices", A, B, C, D)
    from scipy.signal import cont2discrete
    Ad, Bd, Cd, Dd, _ = cont2discrete((A, B, C, D), T, method=_C2D[method])
    return Ad, Bd, Cd, Dd
