r"""PID controllers: continuous (:class:`PID`) and sampled (:class:`DiscretePID`).

Both act on the control error ``e`` and produce the actuator command ``u``
(parallel form, filtered derivative, output saturation, anti-windup).  The
gains ``kp``, ``ki``, ``kd`` and the anti-windup ``tracking_gain`` are
parameters: they can be tuned per context (``ctx.set_param("pid.kp", 2.0)``).
Whether ``u`` reads ``e`` directly (the feedthrough) is fixed when the block is
built: a controller built with ``kp = kd = 0`` has none (it breaks algebraic
loops), and its ``kp``/``kd`` can then not be tuned away from zero.

Anti-windup, for :math:`v` the unsaturated and :math:`u = \mathrm{sat}(v)` the
saturated output:

* ``"back_calculation"``: the integrator is driven back by the saturation
  excess, :math:`\dot I = k_i e + K_t (u - v)`; ``tracking_gain`` :math:`K_t`
  [1/s] defaults to :math:`1/T_t` with :math:`T_t = \sqrt{T_i T_d} =
  \sqrt{k_d/k_i}` if there is a derivative term, else :math:`T_t = T_i =
  k_p/k_i` (computed from the gains given to the constructor);
* ``"clamping"`` (conditional integration): :math:`\dot I = 0` while the output
  is saturated and :math:`k_i e` pushes further into the saturation;
* ``None``: no anti-windup (the integrator winds up).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.linear import LinearModel
from cosim.params import NON_NEGATIVE, POSITIVE, UNBOUNDED

from ._units import refuse_renamed
from .discrete import check_limits, check_period

_ANTI_WINDUP = ("back_calculation", "clamping", None)


def _gain(kind: str, name: str, label: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{kind} '{name}': {label} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise ParameterError(f"{kind} '{name}': {label} must be finite, got {value!r}")
    return v


def _validator(kind: str, name: str, label: str, must_be_zero: str | None,
               nonnegative: bool = False):
    """Parameter validator: a finite number; zero if ``must_be_zero`` says why."""
    def check(value: Any) -> float:
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{label} must be finite")
        if nonnegative and v < 0.0:
            raise ValueError(f"{kind} '{name}': {label} must be >= 0")
        if must_be_zero and v != 0.0:
            raise ValueError(f"{kind} '{name}': {label} must stay 0: {must_be_zero}")
        return v
    return check


def _default_tracking(kind: str, name: str, kp: float, ki: float, kd: float,
                      tracking_gain: Any) -> float:
    if tracking_gain is not None:
        kt = _gain(kind, name, "tracking_gain", tracking_gain)
        if kt < 0:
            raise ParameterError(f"{kind} '{name}': tracking_gain must be >= 0, got {kt!r}")
        return kt
    if ki == 0.0:
        return 0.0  # no integrator, nothing to wind up
    if kd != 0.0:
        return math.sqrt(abs(ki / kd))
    if kp != 0.0:
        return abs(ki / kp)
    raise ParameterError(f"{kind} '{name}': back-calculation of a pure integral controller "
                         "(kp = kd = 0) needs an explicit tracking_gain [1/s]")


class _PIDBase(Block):
    """Shared set-up: gains as parameters, limits, anti-windup mode."""

    def _setup(self, kind: str, name: str, kp: Any, ki: Any, kd: Any, N: Any, lower: Any,
               upper: Any, anti_windup: Any, tracking_gain: Any, feedthrough_terms: tuple,
               kd_needs_filter: bool) -> None:
        kp, ki, kd = (_gain(kind, name, k, v) for k, v in (("kp", kp), ("ki", ki), ("kd", kd)))
        if anti_windup not in _ANTI_WINDUP:
            raise ParameterError(f"{kind} '{name}': anti_windup must be 'back_calculation', "
                                 f"'clamping' or None, got {anti_windup!r}")
        self.N = None if N is None else _gain(kind, name, "derivative_filter_rad_s", N)
        if self.N is not None and not self.N > 0:
            raise ParameterError(f"{kind} '{name}': derivative_filter_rad_s must be > 0, "
                                 f"got {N!r}")
        if kd_needs_filter and kd != 0.0 and self.N is None:
            raise ParameterError(f"{kind} '{name}': a pure derivative (kd = {kd:g}) is not "
                                 "realizable; give derivative_filter_rad_s (e.g. 5-10x the "
                                 "crossover frequency)")
        self.lo, self.hi = check_limits(kind, name, lower, upper)
        self.limited = math.isfinite(self.lo) or math.isfinite(self.hi)
        self.anti_windup = anti_windup if self.limited else None
        gains = {"kp": kp, "ki": ki, "kd": kd}
        self.feedthrough = any(gains[g] != 0.0 for g in feedthrough_terms)
        why = (f"the block was built without feedthrough ({' = '.join(feedthrough_terms)} = 0), "
               "so u must not depend on e directly; build it with a nonzero value to tune it")
        no_filter = "there is no derivative filter (derivative_filter_rad_s=None)"
        for g in ("kp", "ki", "kd"):
            reason = why if (g in feedthrough_terms and not self.feedthrough) else None
            if g == "kd" and kd_needs_filter and self.N is None:
                reason = no_filter
            setattr(self, g, self.declare_parameter(g, gains[g],
                                                    validate=_validator(kind, name, g, reason)))
        kt = 0.0
        if self.anti_windup == "back_calculation":
            kt = _default_tracking(kind, name, kp, ki, kd, tracking_gain)
        self.kt = self.declare_parameter("tracking_gain", kt, unit="1/s",
                                         validate=_validator(kind, name, "tracking_gain", None,
                                                             nonnegative=True))

    def _sat(self, v: float) -> float:
        return min(max(v, self.lo), self.hi)

    def _clamped(self, ki: float, e: float, v: float) -> bool:
        """Clamping condition: saturated and the integral action pushes further."""
        return (v > self.hi and ki * e > 0.0) or (v < self.lo and ki * e < 0.0)

    def _integrator_input(self, ctx: Any, e: float, v: float, u: float) -> float:
        """:math:`\\dot I` (the increment per second) with anti-windup."""
        ki = ctx.param(self.ki)
        if self.anti_windup == "back_calculation":
            return ki * e + ctx.param(self.kt) * (u - v)
        if self.anti_windup == "clamping" and self._clamped(ki, e, v):
            return 0.0
        return ki * e


class PID(_PIDBase):
    r"""Continuous PID controller with filtered derivative, saturation and anti-windup.

    .. math::

        v &= k_p e + I + k_d N (e - z), \qquad u = \mathrm{sat}(v)
             = \min(\max(v, \mathrm{lower}), \mathrm{upper}) \\
        \dot I &= k_i e \;(+\ \text{anti-windup term, see module docstring}),
                  \qquad \dot z = N (e - z)

    so without limits :math:`U(s) = \big(k_p + k_i/s + k_d N s/(s + N)\big) E(s)`.
    ``N`` = ``derivative_filter_rad_s`` is required when ``kd != 0``; without it
    there is no state :math:`z`.  Initial states: :math:`I(0)` = ``initial``,
    :math:`z(0) = 0`.

    Without ``lower``/``upper`` the block is linear time-invariant and
    :meth:`linear_model` lets the compiler fuse it with its linear neighbours;
    with limits it is nonlinear (``linear_model`` returns ``None``).  The
    saturation and clamping are not located as events: variable-step solvers
    resolve the kinks by step-size control.

    Ports
    -----
    in   e   scalar [input_unit], the control error
    out  u   scalar [unit]; feedthrough from e unless kp = kd = 0

    Parameters
    ----------
    kp, ki, kd : float
        :math:`k_p` [unit/input_unit], :math:`k_i` [per s], :math:`k_d` [times s].
    derivative_filter_rad_s : float, optional
        :math:`N` [rad/s]; required when ``kd != 0``.
    lower, upper : float, optional
        Output limits (``None``: unlimited).
    anti_windup : str or None
        ``"back_calculation"`` (default), ``"clamping"`` or ``None`` (module docstring).
    tracking_gain : float, optional
        :math:`K_t` [1/s] of back-calculation (default from the gains).
    input_unit, unit : str, optional
        Units of ``e`` and ``u``.
    initial : float
        :math:`I(0)`.
    """

    argument_checks = {"lower": UNBOUNDED, "upper": UNBOUNDED, "derivative_filter_rad_s": POSITIVE,
                       "tracking_gain": NON_NEGATIVE}

    def __init__(self, name: str, kp: float, ki: float = 0.0, kd: float = 0.0,
                 derivative_filter_rad_s: float | None = None, lower: float | None = None,
                 upper: float | None = None, anti_windup: str | None = "back_calculation",
                 tracking_gain: float | None = None, input_unit: str | None = None,
                 unit: str | None = None, initial: float = 0.0, **old: Any) -> None:
        refuse_renamed("PID", name, old)
        super().__init__(name)
        self._setup("PID", name, kp, ki, kd, derivative_filter_rad_s, lower, upper,
                    anti_windup, tracking_gain, ("kp", "kd"), kd_needs_filter=True)
        self.e = self.declare_input("e", unit=input_unit)
        self.i = self.declare_continuous_state("i", _gain("PID", name, "initial", initial))
        self.z = self.declare_continuous_state("z", 0.0) if self.N is not None else None
        self.u = self.declare_output("u", self._u, unit=unit,
                                     depends_on=("e",) if self.feedthrough else ())

    def _v(self, ctx: Any, e: float) -> float:
        v = ctx.param(self.kp) * e + ctx.state(self.i)
        if self.z is not None:
            v += ctx.param(self.kd) * self.N * (e - ctx.state(self.z))
        return v

    def _u(self, ctx: Any) -> float:
        v = self._v(ctx, ctx.input(self.e) if self.feedthrough else 0.0)
        return self._sat(v) if self.limited else v

    def derivatives(self, ctx: Any) -> Any:
        e = ctx.input(self.e)
        if self.limited:
            v = self._v(ctx, e)
            di = self._integrator_input(ctx, e, v, self._sat(v))
        else:
            di = ctx.param(self.ki) * e
        if self.z is None:
            return di
        return np.array([di, self.N * (e - ctx.state(self.z))])

    def linear_model(self, ctx: Any) -> LinearModel | None:
        """``x = [I, z]``: ``A = diag(0, -N)``, ``B = [ki, N]``, ``C = [1, -kd N]``,
        ``D = kp + kd N``; ``None`` when the output is limited (nonlinear)."""
        if self.limited:
            return None
        kp, ki, kd = (ctx.param(h) for h in (self.kp, self.ki, self.kd))
        if self.z is None:
            return LinearModel([[0.0]], [[ki]], [[1.0]], [[kp]], [self.e], [self.u], [self.i])
        N = self.N
        return LinearModel([[0.0, 0.0], [0.0, -N]], [[ki], [N]], [[1.0, -kd * N]],
                           [[kp + kd * N]], [self.e], [self.u], [self.i, self.z])


class DiscretePID(_PIDBase):
    r"""Sampled PID controller (period ``period_s`` = :math:`T`).

    At hit :math:`k`, with :math:`e_{-1} = 0` (signals zero before the first
    hit), :math:`u_k = \mathrm{sat}(v_k)`, :math:`v_k = k_p e_k + I_k + D_k` and

    ``method="forward"`` (forward Euler of the continuous :class:`PID`):

    .. math::

        I_{k+1} &= I_k + T\,\dot I_k, \qquad I_0 = \mathrm{initial} \\
        D_k &= k_d N (e_k - z_k), \qquad z_{k+1} = z_k + N T (e_k - z_k), \quad z_0 = 0

    ``method="tustin"`` (bilinear):

    .. math::

        I_k &= I_{k-1}^{+} + \tfrac{k_i T}{2}(e_k + e_{k-1}), \qquad
               I_{-1}^{+} = \mathrm{initial} \\
        D_k &= \frac{2 - N T}{2 + N T} D_{k-1} + \frac{2 k_d N}{2 + N T}(e_k - e_{k-1}),
               \qquad D_{-1} = 0

    where :math:`\dot I_k` is the integrator input with anti-windup (module
    docstring) and, for Tustin, the stored :math:`I_k^{+} = I_k + T K_t (u_k -
    v_k)` (back-calculation) or :math:`I_{k-1}^{+}` while clamped.  Without
    ``derivative_filter_rad_s`` the derivative is the backward difference
    :math:`D_k = k_d (e_k - e_{k-1})/T` for both methods.  The forward filter
    is stable only for :math:`N T < 2`.

    Ports
    -----
    in   e   scalar [input_unit], the control error
    out  u   scalar [unit]; sampled; feedthrough from e unless kp = kd = 0
             (and ki = 0 for Tustin)

    Parameters
    ----------
    period_s : float
        :math:`T` [s].
    kp, ki, kd : float
        :math:`k_p` [unit/input_unit], :math:`k_i` [per s], :math:`k_d` [times s].
    derivative_filter_rad_s : float, optional
        :math:`N` [rad/s] (``None``: the backward difference).
    lower, upper : float, optional
        Output limits (``None``: unlimited).
    anti_windup : str or None
        ``"back_calculation"`` (default), ``"clamping"`` or ``None`` (module docstring).
    tracking_gain : float, optional
        :math:`K_t` [1/s] of back-calculation (default from the gains).
    method : str
        ``"forward"`` (default) or ``"tustin"``.
    offset_s : float
        Time of the first hit [s], in ``[0, period_s)``.
    input_unit, unit : str, optional
        Units of ``e`` and ``u``.
    initial : float
        :math:`I_0` (forward) or :math:`I_{-1}^{+}` (Tustin).
    """

    argument_checks = {"lower": UNBOUNDED, "upper": UNBOUNDED, "derivative_filter_rad_s": POSITIVE,
                       "tracking_gain": NON_NEGATIVE, "period_s": POSITIVE,
                       "offset_s": NON_NEGATIVE}

    def __init__(self, name: str, period_s: float, kp: float, ki: float = 0.0, kd: float = 0.0,
                 derivative_filter_rad_s: float | None = None, lower: float | None = None,
                 upper: float | None = None, anti_windup: str | None = "back_calculation",
                 tracking_gain: float | None = None, method: str = "forward",
                 offset_s: float = 0.0, input_unit: str | None = None, unit: str | None = None,
                 initial: float = 0.0, **old: Any) -> None:
        refuse_renamed("DiscretePID", name, old)
        super().__init__(name)
        kind = "DiscretePID"
        self.T, self.offset_s = check_period(kind, name, period_s, offset_s)
        if method not in ("forward", "tustin"):
            raise ParameterError(f"{kind} '{name}': method must be 'forward' or 'tustin', "
                                 f"got {method!r}")
        self.method = method
        terms = ("kp", "kd") if method == "forward" else ("kp", "ki", "kd")
        self._setup(kind, name, kp, ki, kd, derivative_filter_rad_s, lower, upper, anti_windup,
                    tracking_gain, terms, kd_needs_filter=False)
        if method == "forward" and self.N is not None and self.N * self.T >= 2.0:
            raise ParameterError(f"{kind} '{name}': the forward-Euler derivative filter is "
                                 f"unstable for N*T >= 2 (N*T = {self.N * self.T:g}); use "
                                 "method='tustin' or a lower derivative_filter_rad_s")
        self.e = self.declare_input("e", unit=input_unit)
        self.i = self.declare_discrete_state("i", _gain(kind, name, "initial", initial))
        self.d = self.declare_discrete_state("d", 0.0)  # z_k (forward) or D_{k-1} (tustin)
        self.e_prev = self.declare_discrete_state("e_prev", 0.0)
        self.u = self.declare_output("u", self._u, unit=unit,
                                     depends_on=("e",) if self.feedthrough else ())
        self.declare_periodic_update(self.T, self._update, self.offset_s)

    def _u(self, ctx: Any) -> float:
        # without feedthrough u does not depend on e (kp = kd = 0, and ki = 0 for Tustin)
        return self._step(ctx, ctx.input(self.e) if self.feedthrough else 0.0)[0]

    def _update(self, ctx: Any) -> None:
        _, i_new, d_new = self._step(ctx, ctx.input(self.e))
        ctx.set_discrete(self.i, i_new)
        ctx.set_discrete(self.d, d_new)
        ctx.set_discrete(self.e_prev, ctx.input(self.e))

    def _step(self, ctx: Any, e: float) -> tuple[float, float, float]:
        """``(u_k, I stored, d stored)`` from the state and the error at the hit."""
        T, N = self.T, self.N
        kp, ki, kd = (ctx.param(h) for h in (self.kp, self.ki, self.kd))
        i_prev, d_prev, ep = (ctx.discrete(h) for h in (self.i, self.d, self.e_prev))
        forward = self.method == "forward"
        i_out = i_prev if forward else i_prev + 0.5 * ki * T * (e + ep)
        if N is None:
            dterm = kd * (e - ep) / T
            d_new = 0.0
        elif forward:
            dterm = kd * N * (e - d_prev)
            d_new = d_prev + N * T * (e - d_prev)
        else:
            dterm = ((2.0 - N * T) * d_prev + 2.0 * kd * N * (e - ep)) / (2.0 + N * T)
            d_new = dterm
        v = kp * e + i_out + dterm
        u = self._sat(v) if self.limited else v
        if forward:
            i_new = i_prev + T * self._integrator_input(ctx, e, v, u)
        elif self.anti_windup == "back_calculation":
            i_new = i_out + T * ctx.param(self.kt) * (u - v)
        elif self.anti_windup == "clamping" and self._clamped(ki, e, v):
            i_new = i_prev
        else:
            i_new = i_out
        return u, i_new, d_new
