r"""ISO 15622 (adaptive cruise control) limits and a checker for recorded runs.

The standard is paywalled; the values are the secondary ones repeated across open-source
code and papers (research note anchors-domain §7, strength C: requirements, not
reference solutions):

* minimum steady-state time gap :math:`\tau \ge` 0.8 s, at least one selectable time gap
  in 1.5-2.2 s (this library accepts time gaps in [0.8, 2.2] s);
* maximum ACC acceleration 2.0 m/s²;
* maximum average deceleration over 2 s: 5 m/s² below 5 m/s, 3.5 m/s² above 20 m/s;
* maximum average jerk (rate of increase of the deceleration) over 1 s: 5 m/s³ below
  5 m/s, 2.5 m/s³ above 20 m/s.

Between 5 and 20 m/s the speed-dependent limits are interpolated linearly (an assumption
of this module, as in common implementations).  :func:`check_iso15622` evaluates a
recorded acceleration against them with the limit at the highest speed of each window
(the strictest).

.. math::

    \bar d(t) = -\frac{1}{2\,\mathrm{s}}\int_t^{t + 2\,\mathrm{s}} a\,d\tau, \qquad
    \bar j(t) = -\frac{a(t + 1\,\mathrm{s}) - a(t)}{1\,\mathrm{s}}
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_TIME_GAP_S = 0.8
MAX_TIME_GAP_S = 2.2
MAX_ACCEL_M_S2 = 2.0
LOW_SPEED_M_S = 5.0
HIGH_SPEED_M_S = 20.0
MAX_DECEL_LOW_M_S2, MAX_DECEL_HIGH_M_S2 = 5.0, 3.5
MAX_JERK_LOW_M_S3, MAX_JERK_HIGH_M_S3 = 5.0, 2.5


def _between(v, low: float, high: float):
    if isinstance(v, float):  # one speed (a controller hit): no NumPy call overhead
        w = (v - LOW_SPEED_M_S) / (HIGH_SPEED_M_S - LOW_SPEED_M_S)
        w = 0.0 if w < 0.0 else (1.0 if w > 1.0 else w)
        return low + (high - low) * w
    w = np.clip((np.asarray(v, dtype=float) - LOW_SPEED_M_S) / (HIGH_SPEED_M_S - LOW_SPEED_M_S),
                0.0, 1.0)
    out = low + (high - low) * w
    return float(out) if np.ndim(out) == 0 else out


def max_decel(speed_m_s):
    """Maximum average deceleration [m/s^2] over 2 s at ``speed_m_s``."""
    return _between(speed_m_s, MAX_DECEL_LOW_M_S2, MAX_DECEL_HIGH_M_S2)


def max_jerk(speed_m_s):
    """Maximum average jerk [m/s^3] over 1 s at ``speed_m_s``."""
    return _between(speed_m_s, MAX_JERK_LOW_M_S3, MAX_JERK_HIGH_M_S3)


@dataclass(frozen=True)
class ISOReport:
    """Worst figures of a run and the margin to the limits (ratio <= 1 passes)."""

    max_accel_m_s2: float
    max_avg_decel_2s_m_s2: float
    decel_ratio: float
    max_avg_jerk_1s_m_s3: float
    jerk_ratio: float
    jerk_at_s: float  # start of the 1 s window with the largest jerk ratio

    @property
    def ok(self) -> bool:
        return (self.max_accel_m_s2 <= MAX_ACCEL_M_S2 and self.decel_ratio <= 1.0
                and self.jerk_ratio <= 1.0)


def _window_max_speed(t: np.ndarray, v: np.ndarray, starts: np.ndarray, width: float):
    vmax = np.empty(starts.size)
    j0 = np.searchsorted(t, starts, side="left")
    j1 = np.searchsorted(t, starts + width, side="right")
    for k, (a, b) in enumerate(zip(j0, j1)):
        vmax[k] = v[a:max(b, a + 1)].max()
    return vmax


def check_iso15622(time_s, accel_m_s2, speed_m_s) -> ISOReport:
    """Check a recorded longitudinal acceleration against the ISO 15622 limits.

    ``time_s`` increasing (any spacing, >= 2 s long), ``accel_m_s2`` the vehicle's
    acceleration, ``speed_m_s`` its speed, all 1-D of the same length.
    """
    t = np.asarray(time_s, dtype=float)
    a = np.asarray(accel_m_s2, dtype=float)
    v = np.asarray(speed_m_s, dtype=float)
    if not (t.ndim == a.ndim == v.ndim == 1 and t.size == a.size == v.size):
        raise ValueError("check_iso15622: time, acceleration and speed must be 1-D arrays of "
                         "one length")
    if t.size < 2 or t[-1] - t[0] < 2.0:
        raise ValueError("check_iso15622: need at least 2 s of data")
    starts = t[t <= t[-1] - 2.0]
    cum = np.concatenate([[0.0], np.cumsum(0.5 * (a[1:] + a[:-1]) * np.diff(t))])
    avg = (np.interp(starts + 2.0, t, cum) - np.interp(starts, t, cum)) / 2.0
    decel = -avg
    d_ratio = decel / max_decel(_window_max_speed(t, v, starts, 2.0))
    starts1 = t[t <= t[-1] - 1.0]
    jerk = -(np.interp(starts1 + 1.0, t, a) - np.interp(starts1, t, a))
    j_ratio = jerk / max_jerk(_window_max_speed(t, v, starts1, 1.0))
    kj = int(np.argmax(j_ratio))
    return ISOReport(float(a.max()), float(decel.max()), float(d_ratio.max()),
                     float(jerk.max()), float(j_ratio[kj]), float(starts1[kj]))
