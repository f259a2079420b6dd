r"""The residual rule: :class:`Residual` (its settings), :class:`RuleState` and the pure
step :func:`advance_rule`, shared by every feeding mode of :mod:`hil.shadow`.

Equations, per compared signal and machine sample :math:`t_k`
----------------------------------------------------------------
Residual (in the model output's unit; the measurement is converted with
:func:`cosim.units.conversion`), optional first-order low-pass (exact for a residual held
between samples; :math:`\tau = 0`: no filter), relative residual:

.. math::

    r_k &= y^{meas}_k - y^{model}(t_k), \qquad
    \bar r_k = \bar r_{k-1} + (1 - e^{-(t_k - t_{k-1})/\tau})(r_k - \bar r_{k-1}),
    \quad \bar r_0 = r_0 \\
    \rho_k &= |\bar r_k| \,/\, \max(|s_k|, s_{min})

with the scale :math:`s_k` a constant, a machine signal (the reel: the nip-load reference)
or by default the model output.  Threshold rule (absolute and/or relative; with both the
larger bound counts, so the absolute one is a floor where the scale is small):

.. math::

    e_k = \big(|\bar r_k| > a\big) \wedge \big(\rho_k > \rho_{max}\big), \qquad
    \text{flag}_k \iff e_j \ \forall j \text{ with } t_j \in [t_k - T_p, t_k]
    \text{ and } t_k - t_{on} \ge T_p

(:math:`t_{on}` the first sample of the current run of :math:`e`, the *onset*; a missing
bound is true).  CUSUM (optional; Page's two-sided test on the filtered residual, weighted
by the sample spacing so the threshold does not depend on the sample rate):

.. math::

    g^\pm_k = \max\big(0,\ g^\pm_{k-1} + (\pm\bar r_k - \nu)(t_k - t_{k-1})\big), \qquad
    \text{alarm} \iff \max(g^+_k, g^-_k) > h

(:math:`\nu` the drift in the signal's unit, :math:`h` in unit x s; its onset is the last
sample where the alarming sum was 0).  A fault *event* opens when the flag rises (onset,
detection time, the detector) and closes when it falls (``latch=True``: never), with the
peak residual in between.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from cosim.errors import ParameterError

__all__ = ["Residual", "RuleState", "advance_rule"]

_EPS = 0.5e-9                           # half a tick: time comparisons


@dataclass(frozen=True)
class Residual:
    """How one measured signal is compared with a model output (module docstring).

    Parameters
    ----------
    model : str
        Model output: an exported output name of the diagram or a port path
        (``'sub/block.port'``).
    abs_threshold : float, optional
        :math:`a` [model unit].
    rel_threshold : float, optional
        :math:`\\rho_{max}` (0.05 = the seed's 5 %).
    scale : float or str, optional
        :math:`s_k`: a constant, the name of a machine signal (input or measured), or
        ``None``: the model output.
    min_scale : float
        :math:`s_{min}` > 0, guards the division.
    persistence_s : float
        :math:`T_p` >= 0 (debounce).
    filter_tau_s : float
        :math:`\\tau` >= 0 of the residual's low-pass (0: none).
    cusum_drift, cusum_threshold : float, optional
        :math:`\\nu` [unit] and :math:`h` [unit s]; both or neither.
    latch : bool
        Keep the flag once raised.

    A rule without any threshold only records its residual (never flags).
    """

    model: str
    abs_threshold: float | None = None
    rel_threshold: float | None = None
    scale: float | str | None = None
    min_scale: float = 1e-12
    persistence_s: float = 0.0
    filter_tau_s: float = 0.0
    cusum_drift: float | None = None
    cusum_threshold: float | None = None
    latch: bool = False

    def __post_init__(self) -> None:
        own = f"Residual({self.model!r})"
        for name in ("abs_threshold", "rel_threshold", "cusum_drift", "cusum_threshold"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v)
                                      and v >= 0):
                raise ParameterError(f"{own}: {name} must be finite and >= 0, got {v!r}")
        for name in ("persistence_s", "filter_tau_s"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ParameterError(f"{own}: {name} must be finite and >= 0, got {v!r}")
        if not (self.min_scale > 0 and math.isfinite(self.min_scale)):
            raise ParameterError(f"{own}: min_scale must be finite and > 0")
        if (self.cusum_drift is None) != (self.cusum_threshold is None):
            raise ParameterError(f"{own}: give both cusum_drift and cusum_threshold, or neither")
        if isinstance(self.scale, (int, float)) and not (math.isfinite(self.scale)
                                                        and self.scale != 0):
            raise ParameterError(f"{own}: a constant scale must be finite and non-zero")

    @property
    def detects(self) -> bool:
        return (self.abs_threshold is not None or self.rel_threshold is not None
                or self.cusum_threshold is not None)


class RuleState(NamedTuple):
    """Per-signal detector state (a context's discrete state in :class:`ShadowMonitor`)."""

    t: float = math.nan             # time of the last sample
    rf: float = 0.0                 # filtered residual
    since: float = math.nan         # onset of the current exceedance run
    g_pos: float = 0.0
    g_neg: float = 0.0
    zero_pos: float = math.nan      # last time g+ was 0
    zero_neg: float = math.nan
    flag: bool = False
    onset: float = math.nan         # onset of the raised flag
    detector: str = ""


def advance_rule(rule: Residual, st: RuleState, t: float, r: float,
                 scale: float) -> tuple[RuleState, float]:
    """One sample of the rule (pure): ``(new state, rho)``; equations in the module doc."""
    first = math.isnan(st.t)
    dt = 0.0 if first else t - st.t
    if first or rule.filter_tau_s == 0.0:
        rf = r
    else:
        rf = st.rf + (1.0 - math.exp(-dt / rule.filter_tau_s)) * (r - st.rf)
    rho = abs(rf) / max(abs(scale), rule.min_scale)
    exceed = (rule.abs_threshold is not None or rule.rel_threshold is not None) \
        and (rule.abs_threshold is None or abs(rf) > rule.abs_threshold) \
        and (rule.rel_threshold is None or rho > rule.rel_threshold)
    since = (st.since if not math.isnan(st.since) else t) if exceed else math.nan
    thr_flag = exceed and t - since >= rule.persistence_s - _EPS
    g_pos, g_neg, z_pos, z_neg = st.g_pos, st.g_neg, st.zero_pos, st.zero_neg
    cus_flag = False
    if rule.cusum_threshold is not None:
        nu = rule.cusum_drift
        g_pos = max(0.0, g_pos + (rf - nu) * dt)
        g_neg = max(0.0, g_neg + (-rf - nu) * dt)
        if g_pos == 0.0 or first:
            z_pos = t
        if g_neg == 0.0 or first:
            z_neg = t
        cus_flag = max(g_pos, g_neg) > rule.cusum_threshold
    flag, onset, detector = st.flag, st.onset, st.detector
    if thr_flag or cus_flag:
        if not flag:
            if thr_flag and (not cus_flag or since <= (z_pos if g_pos >= g_neg else z_neg)):
                onset, detector = since, "threshold"
            else:
                onset, detector = (z_pos if g_pos >= g_neg else z_neg), "cusum"
        flag = True
    elif not rule.latch:
        flag, onset, detector = False, math.nan, ""
    return RuleState(t, rf, since, g_pos, g_neg, z_pos, z_neg, flag, onset, detector), rho

