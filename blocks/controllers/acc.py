r"""Adaptive cruise control: the seed's sliding-mode spacing law as a sampled ECU block.

:class:`ACCController` is the control module of Kim et al. (seed section 11, after Won et
al. 2001).  It exchanges only what a real ACC ECU does - radar range, range rate and
target flag, own speed, the driver's set speed and the current gear ratio in; throttle and
brake-torque requests out - so it can run in another process over CAN (HIL) or be
exported as an FMU.  The vehicle knowledge it needs for the torque inversion (engine map,
driveline, resistances) is given as plain numbers and arrays (:class:`EngineMap`,
:class:`DrivelineModel`); it imports no vehicle module.

At each hit :math:`k` (period T), with :math:`v` the own speed, :math:`r, \dot r` the radar
range and range rate and :math:`v_\mathrm{set}` the set speed:

.. math::

    d_\mathrm{des} &= d_0 + t_h v, \qquad s = d_\mathrm{des} - r
        \qquad \text{(headway policy, seed Eq. 3, plus a standstill gap } d_0) \\
    a_f &= \big(\dot r - \lambda\,\mathrm{sat}(s/\Phi)\big)/t_h
        \qquad \text{(sliding surface with boundary layer, Eq. 4)} \\
    a_c &= k_c (v_\mathrm{set} - v) \qquad \text{(cruise)} \\
    a &= \min(a_c, a_f) \text{ with a valid target, else } a_c, \qquad
        a \leftarrow \mathrm{clip}(a, a_\min, a_\max) = [-2.5, 1]\ \mathrm{m/s^2} \\
    a_k &= \mathrm{clip}\big(a,\ a_{k-1} - j(v) T,\ a_{k-1} + j(v) T\big)
        \qquad \text{(ISO 15622 jerk limit, optional)}

The desired engine torque inverts the longitudinal model (seed Eq. 5 with
:math:`N = i_g i_f` the overall ratio, so the seed's :math:`H_r r_\mathrm{drive}
r_\mathrm{gear} = R/N`):

.. math::

    m_\mathrm{eff} &= m + (J_w + J_e N^2)/R^2, \qquad
    F_\mathrm{des} = m_\mathrm{eff} a_k + \tfrac12 \rho C_d A v^2 + m g f_r \\
    T_\mathrm{des} &= \frac{F_\mathrm{des} R}{\eta\, r_{tq} N}, \qquad
    F_0 = \frac{\eta\, r_{tq} N}{R} T_e(\alpha_0, \omega_e), \qquad \omega_e = v N / R

Throttle/brake switching (seed: brake when the desired torque is below the closed-throttle
engine torque), with a hysteresis band :math:`\pm m_\mathrm{eff}\Delta a`: braking starts
when :math:`F_\mathrm{des} < F_0 - m_\mathrm{eff}\Delta a` and ends when
:math:`F_\mathrm{des} > F_0 + m_\mathrm{eff}\Delta a`.  Throttle mode:
:math:`\alpha = T_e^{-1}(\omega_e, T_\mathrm{des})` (inverse engine map, Eq. 6), no brake.
Brake mode: closed throttle, :math:`T_b = \mathrm{clip}\big((F_0 - F_\mathrm{des}) R,\ 0,\
T_{b,\max}\big)` (Eq. 7, at the wheels).

Inner acceleration loop (``ACCController(accel_input=True)``, as production ACC): the
jerk-limited request :math:`a_k` is tracked against the measured acceleration
:math:`a_m` by a PI loop, and the result goes through the inversion above:

.. math::

    e_k &= a_k - a_m, \qquad
    I_k = \mathrm{clip}\big(I_{k-1} + k_i T e_k,\ \pm I_\max\big), \qquad
    u_k = a_k + k_p e_k + I_k + \tau\,(a_k - a_{k-1})/T

with :math:`F_\mathrm{des} = m_\mathrm{eff} u_k + \ldots` instead of :math:`m_\mathrm{eff}
a_k`; :math:`\tau` the model's ``drive_lag_s`` or ``brake_lag_s`` (the feed-forward leads
the request by the actuator's lag).  Anti-windup: the integral is held while the
actuator is at its limit in the error's direction (full throttle, full brake) and while
the gear ratio moves (a shift: :math:`|i_g - i_{g,k-1}| > r_s T i_g`), and forgotten at
rest.  With the model's converter curves and a measured engine speed the inversion uses
the converter's torque ratio :math:`r_{tq}(\nu)`, :math:`\nu = vN/(R\omega_e)`, the brake
balances the force the converter transmits now (:meth:`DrivelineModel.converter_wheel_force`:
the idle creep at low speed), and below the idle speed the closed-throttle force
:math:`F_0` is that creep.

Standstill hold (stop-and-go): below :math:`v_\mathrm{ss}` the controller enters a hold
when the law brakes, or when it is within :math:`d_0 + w` of a stopped target; it then
stops at ``stop_decel_m_s2`` and, once at rest (:math:`v < 0.1 v_\mathrm{ss}`), holds the
brake at :math:`T_\mathrm{hold}`.  It drives off when the law accelerates and the target
is both faster than ``restart_speed_m_s`` and beyond :math:`d_0 + w` (or gone).

Deviations from the seed (which gives the structure but no numbers)
--------------------------------------------------------------------
* a standstill gap :math:`d_0` (default 5 m) in the spacing policy: the seed's
  :math:`x_{r,\mathrm{des}} = v_f t_h` asks for a zero gap at rest, so stop-and-go would end
  in contact; ``standstill_gap_m=0`` gives the seed's policy;
* a cruise law and the smooth ``min`` selection between cruise and following (the seed has
  no set-speed mode); the switch needs no hysteresis because the ``min`` is continuous
  while the target stays the same;
* an optional jerk limit (ISO 15622); ``jerk_limit=None`` is the seed's law;
* the switching hysteresis, the standstill hold and every number (gains, limits, band) are
  not in the seed and are chosen here (see :class:`ACCSettings`); the limits
  [-2.5, +1] m/s^2 are the seed's.

Limitations
-----------
* The engine speed is :math:`vN/R` (locked converter or clutch, clipped to the map) unless
  an ``engine_speed`` input is requested; the converter torque ratio is a constant
  parameter; there is no gear-shift logic (the gear ratio is an input).
* Without ``accel_input`` the inversion uses the nominal model open loop: no grade (no
  inclinometer), no integral action, so a model mismatch leaves an offset (a car 20 %
  heavier with 20-25 % more drag and rolling resistance than the model follows 0.18 m
  behind the policy at 25 m/s; the cut-in still recovers in 9.2 s).
* The inner loop takes the measured acceleration as given (an ideal accelerometer: no
  noise, no grade component, no filter); during a gear shift its integral is held and
  the engine's inertia torque shows as an acceleration error for about the shift time
  (up to 0.4 m/s^2 on the full car, ``examples/acc_full_vehicle.py``); the drive's lag
  ``drive_lag_s`` is one number for every gear and speed.
* Outputs are computed at the hits from the inputs of the same instant (feedthrough, held
  between hits); a CAN link adds its own delay.
* The spacing law has no distance-dependent approach: a target that appears far ahead
  (e.g. at 150 m, closing at 9 m/s) is braked for at once, down to the closing speed
  :math:`\lambda`; with the ISO jerk limit that run reaches 99 % of the jerk limit
  (``examples/acc_cut_out.py``, far variant) and the seed's law without it exceeds it
  (109 %).
* The C form (:meth:`ACCController.c_model`, for the compiled run and the FMU export) mirrors
  the Python step; where Python raises on a NaN speed or throttle in the engine-map lookups
  (IndexError), the C gives NaN.
* No driver override, no automatic-restart time-out (ISO 22179 full-speed range), no
  target plausibility checks and no filtering of the radar signals (the hysteresis and the
  two release conditions of the hold are the only defences against noise).
"""

from __future__ import annotations

import math
import zlib
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.errors import ParameterError

from ..checks import check_number as _num
from ..discrete import check_period
from . import iso15622 as iso

#: C of the scalar lookups (:meth:`EngineMap._interp`, ``bisect_right``,
#: :meth:`EngineMap.torque`, :meth:`EngineMap.throttle_for`), shared by the C forms.
_C_LOOKUPS = r"""/* blocks.controllers.acc: bisect_right(xl, x) - 1 */
static int cosim_acc_bisect(const double *xl, int n, double x) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (x < xl[mid]) hi = mid; else lo = mid + 1;
    }
    return lo - 1;
}

/* EngineMap._interp: np.interp for one point (ends held) */
static double cosim_acc_interp(double x, const double *xp, const double *fp, int n) {
    int i;
    if (x <= xp[0]) return fp[0];
    if (x >= xp[n - 1]) return fp[n - 1];
    i = cosim_acc_bisect(xp, n, x);
    if (i >= n - 1) return NAN;
    return fp[i] + (x - xp[i]) * (fp[i + 1] - fp[i]) / (xp[i + 1] - xp[i]);
}

/* EngineMap.torque: bilinear in (throttle, speed), inputs clipped to the grid;
 * tq[i * nw + j] is the torque at throttle a[i] and speed w[j] */
static double cosim_acc_torque(double th, double sp, const double *a, int na,
                               const double *w, const double *dw, int nw,
                               const double *tq) {
    int i, j;
    double fa, fw, lo, hi;
    if (th <= a[0]) { i = 0; fa = 0.0; }
    else if (th >= a[na - 1]) { i = na - 2; fa = 1.0; }
    else {
        i = cosim_acc_bisect(a, na, th);
        if (i > na - 2) return NAN;  /* NaN throttle (Python: IndexError) */
        fa = (th - a[i]) / (a[i + 1] - a[i]);
    }
    if (sp <= w[0]) { j = 0; fw = 0.0; }
    else if (sp >= w[nw - 1]) { j = nw - 2; fw = 1.0; }
    else {
        j = cosim_acc_bisect(w, nw, sp);
        if (j > nw - 2) return NAN;  /* NaN speed (Python: IndexError) */
        fw = (sp - w[j]) / dw[j];
    }
    lo = tq[i * nw + j] + fw * (tq[i * nw + j + 1] - tq[i * nw + j]);
    hi = tq[(i + 1) * nw + j] + fw * (tq[(i + 1) * nw + j + 1] - tq[(i + 1) * nw + j]);
    return lo + fa * (hi - lo);
}

/* EngineMap.throttle_for: the inverse map at one speed (EngineMap._column) */
static double cosim_acc_throttle_for(double t, double sp, const double *a, int na,
                                     const double *w, const double *dw, int nw,
                                     const double *tq) {
    double col[na];
    int i, j;
    if (sp <= w[0]) { for (i = 0; i < na; i++) col[i] = tq[i * nw]; }
    else if (sp >= w[nw - 1]) { for (i = 0; i < na; i++) col[i] = tq[i * nw + nw - 1]; }
    else {
        double f;
        j = cosim_acc_bisect(w, nw, sp);
        if (j > nw - 2) return NAN;  /* NaN speed (Python: IndexError) */
        f = (sp - w[j]) / dw[j];
        for (i = 0; i < na; i++)
            col[i] = tq[i * nw + j] + f * (tq[i * nw + j + 1] - tq[i * nw + j]);
    }
    return cosim_acc_interp(t, col, a, na);
}"""


#: C of :meth:`DrivelineModel.converter_wheel_force` (``k`` = efficiency * ratio / R).
_C_CONVERTER = r"""/* blocks.controllers.acc: DrivelineModel.converter_wheel_force */
static double cosim_acc_converter_force(double pump, double turbine, double k,
                                        const double *sr, const double *tr, const double *c,
                                        int n) {
    double w_p = (0.0 > pump) ? 0.0 : pump;
    if (turbine <= w_p) {
        double nu;
        if (w_p == 0.0) return 0.0;
        nu = ((0.0 > turbine) ? 0.0 : turbine) / w_p;
        return k * cosim_acc_interp(nu, sr, tr, n) * cosim_acc_interp(nu, sr, c, n)
            * w_p * w_p;
    }
    return -k * cosim_acc_interp(w_p / turbine, sr, c, n) * pow(turbine, 2.0);
}"""


def _c_lookups(cg: Any) -> None:
    cg.helper("cosim_acc_lookups", _C_LOOKUPS)


class EngineMap:
    r"""Engine torque :math:`T_e(\alpha, \omega)` on a grid and its inverse in the throttle.

    ``torque_nm[i, j]`` is the torque at ``throttle[i]`` (0..1) and ``speed_rad_s[j]``;
    it must increase strictly with the throttle at every speed, so the inverse exists.
    Bilinear interpolation, inputs clipped to the grid.
    """

    def __init__(self, throttle: Any, speed_rad_s: Any, torque_nm: Any) -> None:
        k = "EngineMap"
        a = np.asarray(throttle, dtype=float)
        w = np.asarray(speed_rad_s, dtype=float)
        t = np.asarray(torque_nm, dtype=float)
        if a.ndim != 1 or w.ndim != 1 or a.size < 2 or w.size < 2:
            raise ParameterError(f"{k}: throttle and speed_rad_s must be 1-D with >= 2 points, "
                                 f"got shapes {a.shape} and {w.shape}")
        if t.shape != (a.size, w.size):
            raise ParameterError(f"{k}: torque_nm must have shape (len(throttle), "
                                 f"len(speed_rad_s)) = {(a.size, w.size)}, got {t.shape}")
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(w)) and np.all(np.isfinite(t))):
            raise ParameterError(f"{k}: the map has non-finite entries")
        for label, x in (("throttle", a), ("speed_rad_s", w)):
            if np.any(np.diff(x) <= 0):
                raise ParameterError(f"{k}: {label} must be strictly increasing, got {x}")
        if a[0] < 0 or a[-1] > 1:
            raise ParameterError(f"{k}: throttle must lie in [0, 1], got {a[0]:g}..{a[-1]:g}")
        bad = np.argwhere(np.diff(t, axis=0) <= 0)
        if bad.size:
            i, j = bad[0]
            raise ParameterError(f"{k}: torque must increase strictly with the throttle (the "
                                 f"inverse map needs it), but at speed {w[j]:g} rad/s "
                                 f"T({a[i]:g}) = {t[i, j]:g} >= T({a[i + 1]:g}) = "
                                 f"{t[i + 1, j]:g} N*m")
        self.throttle, self.speed_rad_s, self.torque_nm = a, w, t
        # plain lists: a controller hit does a few scalar lookups, where NumPy's per-call
        # overhead (np.interp on 9 points: ~3 us) exceeds the arithmetic
        self._w = w.tolist()
        self._dw = np.diff(w).tolist()
        self._a = a.tolist()
        self._cols = [t[:, j].tolist() for j in range(w.size)]
        self._closed = t[0].tolist()

    def _column(self, speed: float) -> list:
        """The torque over the throttle breakpoints at ``speed`` (clipped to the grid)."""
        wl = self._w
        if speed <= wl[0]:
            return self._cols[0]
        if speed >= wl[-1]:
            return self._cols[-1]
        j = bisect_right(wl, speed) - 1
        f = (speed - wl[j]) / self._dw[j]
        return [c0 + f * (c1 - c0) for c0, c1 in zip(self._cols[j], self._cols[j + 1])]

    @staticmethod
    def _interp(x: float, xp: list, fp: list) -> float:
        """``np.interp`` for one point on lists (ends held)."""
        if x <= xp[0]:
            return fp[0]
        if x >= xp[-1]:
            return fp[-1]
        i = bisect_right(xp, x) - 1
        if i >= len(xp) - 1:  # NaN
            return math.nan
        return fp[i] + (x - xp[i]) * (fp[i + 1] - fp[i]) / (xp[i + 1] - xp[i])

    def torque(self, throttle: float, speed_rad_s: float) -> float:
        """:math:`T_e(\\alpha, \\omega)` [N*m] (bilinear, inputs clipped to the grid)."""
        al, wl = self._a, self._w
        if throttle <= al[0]:
            i, fa = 0, 0.0
        elif throttle >= al[-1]:
            i, fa = len(al) - 2, 1.0
        else:
            i = bisect_right(al, throttle) - 1
            fa = (throttle - al[i]) / (al[i + 1] - al[i])
        if speed_rad_s <= wl[0]:
            j, fw = 0, 0.0
        elif speed_rad_s >= wl[-1]:
            j, fw = len(wl) - 2, 1.0
        else:
            j = bisect_right(wl, speed_rad_s) - 1
            fw = (speed_rad_s - wl[j]) / self._dw[j]
        c0, c1 = self._cols[j], self._cols[j + 1]
        lo = c0[i] + fw * (c1[i] - c0[i])
        hi = c0[i + 1] + fw * (c1[i + 1] - c0[i + 1])
        return lo + fa * (hi - lo)

    def throttle_for(self, torque_nm: float, speed_rad_s: float) -> float:
        """:math:`T_e^{-1}(\\omega, T)`: the throttle giving ``torque_nm``, clipped to the map."""
        return self._interp(torque_nm, self._column(speed_rad_s), self._a)

    def closed_throttle_torque(self, speed_rad_s: float) -> float:
        """Torque at the smallest throttle (engine braking when negative) [N*m]."""
        return self._interp(speed_rad_s, self._w, self._closed)

    # ------------------------------------------------------------- C forms
    def _c_arrays(self, cg: Any) -> str:
        """The C arguments ``a, na, w, dw, nw, tq`` of the lookups (constants)."""
        _c_lookups(cg)
        a, w = cg.const(self.throttle), cg.const(self.speed_rad_s)
        dw, tq = cg.const(np.asarray(self._dw)), cg.const(self.torque_nm)
        return (f"{a.ptr}, {self.throttle.size}, {w.ptr}, {dw.ptr}, {self.speed_rad_s.size}, "
                f"{tq.ptr}")

    def c_torque(self, cg: Any, throttle: str, speed: str) -> str:
        """C expression of :meth:`torque` (``cosim_acc_torque``; a NaN input gives NaN
        where Python raises)."""
        return f"cosim_acc_torque({throttle}, {speed}, {self._c_arrays(cg)})"

    def c_throttle_for(self, cg: Any, torque: str, speed: str) -> str:
        """C expression of :meth:`throttle_for` (``cosim_acc_throttle_for``)."""
        return f"cosim_acc_throttle_for({torque}, {speed}, {self._c_arrays(cg)})"

    def c_closed_throttle_torque(self, cg: Any, speed: str) -> str:
        """C expression of :meth:`closed_throttle_torque` (``cosim_acc_interp``)."""
        _c_lookups(cg)
        w, c = cg.const(self.speed_rad_s), cg.const(np.asarray(self._closed))
        return f"cosim_acc_interp({speed}, {w.ptr}, {c.ptr}, {self.speed_rad_s.size})"


@dataclass(frozen=True, eq=False)
class DrivelineModel:
    """The controller's nominal vehicle model for the torque inversion (all SI).

    ``wheel_inertia_kg_m2`` is the sum over the wheels, ``drag_area_m2`` is
    :math:`C_d A`, ``max_brake_torque_nm`` the total at the wheels.  Optional:
    ``converter_speed_ratio``/``converter_torque_ratio``, the torque converter's
    multiplication :math:`r_{tq}(\\nu)` over the speed ratio (used with a measured engine
    speed; else the constant ``torque_ratio``), ``converter_capacity`` its capacity factor
    :math:`K(\\nu)` [rad/s per sqrt(N*m)] (the brake then balances the force the
    converter transmits at the measured speeds, e.g. the idle creep), ``idle_speed_rad_s``
    (below it a closed throttle leaves the converter's creep), and
    ``drive_lag_s``/``brake_lag_s``, the time constants of the wheel torque's response to
    a throttle or brake request (the feed-forward leads the request by them).
    """

    engine: EngineMap
    mass_kg: float
    wheel_radius_m: float
    final_drive: float
    engine_inertia_kg_m2: float = 0.0
    wheel_inertia_kg_m2: float = 0.0
    efficiency: float = 1.0
    torque_ratio: float = 1.0
    drag_area_m2: float = 0.0
    air_density_kg_m3: float = 1.2
    rolling_resistance: float = 0.0
    gravity_m_s2: float = 9.81
    max_brake_torque_nm: float = 6000.0
    converter_speed_ratio: tuple = ()
    converter_torque_ratio: tuple = ()
    converter_capacity: tuple = ()
    idle_speed_rad_s: float = 0.0
    drive_lag_s: float = 0.0
    brake_lag_s: float = 0.0

    def __post_init__(self) -> None:
        k = "DrivelineModel"
        if not isinstance(self.engine, EngineMap):
            raise ParameterError(f"{k}: engine must be an EngineMap, got {self.engine!r}")
        sr = np.asarray(self.converter_speed_ratio, dtype=float).ravel()
        tr = np.asarray(self.converter_torque_ratio, dtype=float).ravel()
        if sr.size or tr.size:
            if sr.size < 2 or sr.shape != tr.shape or not np.all(np.isfinite(sr)) \
                    or not np.all(np.isfinite(tr)) or np.any(np.diff(sr) <= 0) \
                    or np.any(tr <= 0):
                raise ParameterError(f"{k}: converter_speed_ratio and converter_torque_ratio "
                                     "must be two curves of one length >= 2, the speed ratio "
                                     "strictly increasing, the torque ratio > 0; got "
                                     f"{self.converter_speed_ratio!r} and "
                                     f"{self.converter_torque_ratio!r}")
        object.__setattr__(self, "_converter", (sr.tolist(), tr.tolist()) if sr.size else None)
        cap = np.asarray(self.converter_capacity, dtype=float).ravel()
        if cap.size and (cap.shape != sr.shape or np.any(np.isnan(cap)) or np.any(cap <= 0)):
            raise ParameterError(f"{k}: converter_capacity must be a curve K > 0 [rad/s per "
                                 "sqrt(N*m)] over converter_speed_ratio (inf allowed at the "
                                 f"coupling point), got {self.converter_capacity!r}")
        with np.errstate(divide="ignore"):
            c = np.where(np.isinf(cap), 0.0, 1.0 / cap ** 2) if cap.size else cap
        object.__setattr__(self, "_capacity", (sr.tolist(), c.tolist()) if cap.size else None)
        for f in ("drive_lag_s", "brake_lag_s", "idle_speed_rad_s"):
            _num(k, f, getattr(self, f), nonnegative=True)
        for f in ("mass_kg", "wheel_radius_m", "final_drive", "torque_ratio", "gravity_m_s2",
                  "max_brake_torque_nm"):
            _num(k, f, getattr(self, f), positive=True)
        for f in ("engine_inertia_kg_m2", "wheel_inertia_kg_m2", "drag_area_m2",
                  "air_density_kg_m3", "rolling_resistance"):
            _num(k, f, getattr(self, f), nonnegative=True)
        if not 0 < _num(k, "efficiency", self.efficiency) <= 1:
            raise ParameterError(f"{k}: efficiency must lie in (0, 1], got {self.efficiency!r}")

    def effective_mass(self, ratio: float) -> float:
        """:math:`m + (J_w + J_e N^2)/R^2` [kg] at overall ratio ``ratio`` = N."""
        r = self.wheel_radius_m
        return self.mass_kg + (self.wheel_inertia_kg_m2
                               + self.engine_inertia_kg_m2 * ratio * ratio) / (r * r)

    def converter_ratio(self, speed_ratio: float) -> float:
        """Torque ratio of the converter at ``speed_ratio`` = turbine/pump speed (the curve
        clipped at its ends), or the constant ``torque_ratio`` without a curve."""
        if self._converter is None:
            return self.torque_ratio
        return EngineMap._interp(speed_ratio, *self._converter)

    def converter_wheel_force(self, pump_speed: float, turbine_speed: float,
                              ratio: float) -> float | None:
        r"""The wheel force the converter transmits now [N] (``None`` without a capacity
        curve): :math:`F = \eta N\, r_{tq}(\nu) (\omega_p/K(\nu))^2 / R`, the converter
        driven backwards as a fluid coupling in overrun (as the plant's
        :class:`~blocks.vehicle.TorqueConverter`).  With the throttle closed this is the
        idle creep (or the engine brake) that the brakes must balance."""
        if self._capacity is None:
            return None
        sr, c = self._capacity
        k = self.efficiency * ratio / self.wheel_radius_m
        w_p = max(pump_speed, 0.0)
        if turbine_speed <= w_p:
            if w_p == 0.0:
                return 0.0
            nu = max(turbine_speed, 0.0) / w_p
            return k * self.converter_ratio(nu) * EngineMap._interp(nu, sr, c) * w_p * w_p
        return -k * EngineMap._interp(w_p / turbine_speed, sr, c) * turbine_speed ** 2

    def resistance(self, speed: float) -> float:
        """Aerodynamic drag plus rolling resistance [N] at ``speed`` >= 0."""
        return (0.5 * self.air_density_kg_m3 * self.drag_area_m2 * speed * speed
                + self.mass_kg * self.gravity_m_s2 * self.rolling_resistance)

    # ------------------------------------------------------------- C forms
    def c_converter_ratio(self, cg: Any, speed_ratio: str) -> str:
        """C expression of :meth:`converter_ratio`."""
        if self._converter is None:
            return c_float(self.torque_ratio)
        _c_lookups(cg)
        sr, tr = (cg.const(np.asarray(v)) for v in self._converter)
        return f"cosim_acc_interp({speed_ratio}, {sr.ptr}, {tr.ptr}, {sr.size})"

    def c_converter_wheel_force(self, cg: Any, pump: str, turbine: str, ratio: str) -> str:
        """C expression of :meth:`converter_wheel_force` (only with a capacity curve)."""
        _c_lookups(cg)
        cg.helper("cosim_acc_converter_force", _C_CONVERTER)
        sr, tr = (cg.const(np.asarray(v)) for v in self._converter)
        c = cg.const(np.asarray(self._capacity[1]))
        k = f"{c_float(self.efficiency)} * {ratio} / {c_float(self.wheel_radius_m)}"
        return (f"cosim_acc_converter_force({pump}, {turbine}, {k}, {sr.ptr}, {tr.ptr}, "
                f"{c.ptr}, {sr.size})")

    def c_resistance(self, speed: str) -> str:
        """C expression of :meth:`resistance`."""
        f = c_float
        return (f"{f(0.5)} * {f(self.air_density_kg_m3)} * {f(self.drag_area_m2)} * {speed} "
                f"* {speed} + {f(self.mass_kg)} * {f(self.gravity_m_s2)} * "
                f"{f(self.rolling_resistance)}")


@dataclass(frozen=True)
class ACCSettings:
    """Control-law settings (the seed gives none of these numbers; chosen here).

    ``jerk_limit``: ``"iso"`` (speed-dependent ISO 15622 limit), a number [m/s^3], or
    ``None`` (no limit: the seed's law).  ``accel_kp``, ``accel_ki_1_s``,
    ``accel_integral_limit_m_s2`` and ``shift_ratio_rate_1_s`` tune the inner
    acceleration loop (only with ``ACCController(accel_input=True)``).
    ``iso15622=True`` rejects settings outside the
    standard's limits (time gap 0.8-2.2 s, acceleration <= 2 m/s^2, deceleration <= 3.5
    m/s^2, a numeric jerk limit <= 2.5 m/s^3).
    """

    time_gap_s: float = 1.5
    standstill_gap_m: float = 5.0
    reaching_speed_m_s: float = 3.0  # lambda: the closing/opening speed when saturated
    boundary_layer_m: float = 4.0    # Phi
    min_accel_m_s2: float = -2.5
    max_accel_m_s2: float = 1.0
    cruise_gain_1_s: float = 0.4
    jerk_limit: str | float | None = "iso"
    hysteresis_m_s2: float = 0.1
    standstill_speed_m_s: float = 0.5
    standstill_window_m: float = 1.0
    stop_decel_m_s2: float = 0.8
    restart_speed_m_s: float = 0.5
    standstill_brake_torque_nm: float = 1500.0
    iso15622: bool = True
    accel_kp: float = 1.0
    accel_ki_1_s: float = 5.0
    accel_integral_limit_m_s2: float = 1.5
    shift_ratio_rate_1_s: float = 0.05

    def __post_init__(self) -> None:
        k = "ACCSettings"
        _num(k, "time_gap_s", self.time_gap_s, positive=True)
        check_time_gap(self.time_gap_s, self.iso15622)
        _num(k, "standstill_gap_m", self.standstill_gap_m, nonnegative=True)
        for f in ("reaching_speed_m_s", "boundary_layer_m", "cruise_gain_1_s",
                  "standstill_speed_m_s", "restart_speed_m_s", "stop_decel_m_s2"):
            _num(k, f, getattr(self, f), positive=True)
        for f in ("hysteresis_m_s2", "standstill_brake_torque_nm", "standstill_window_m",
                  "accel_kp", "accel_ki_1_s", "accel_integral_limit_m_s2",
                  "shift_ratio_rate_1_s"):
            _num(k, f, getattr(self, f), nonnegative=True)
        lo = _num(k, "min_accel_m_s2", self.min_accel_m_s2)
        hi = _num(k, "max_accel_m_s2", self.max_accel_m_s2)
        if not lo < 0 < hi:
            raise ParameterError(f"{k}: need min_accel_m_s2 < 0 < max_accel_m_s2, got "
                                 f"[{lo:g}, {hi:g}]")
        j = self.jerk_limit
        if j is not None and j != "iso":
            j = _num(k, "jerk_limit", j, positive=True)
        if self.iso15622:
            if hi > iso.MAX_ACCEL_M_S2:
                raise ParameterError(f"{k}: max_accel_m_s2 = {hi:g} exceeds the ISO 15622 "
                                     f"limit {iso.MAX_ACCEL_M_S2:g} m/s^2 (or set "
                                     "iso15622=False)")
            if -lo > iso.MAX_DECEL_HIGH_M_S2:
                raise ParameterError(f"{k}: min_accel_m_s2 = {lo:g} exceeds the ISO 15622 "
                                     f"deceleration limit {iso.MAX_DECEL_HIGH_M_S2:g} m/s^2 "
                                     "(above 20 m/s; or set iso15622=False)")
            if isinstance(j, float) and j > iso.MAX_JERK_HIGH_M_S3:
                raise ParameterError(f"{k}: jerk_limit = {j:g} m/s^3 exceeds the ISO 15622 "
                                     f"limit {iso.MAX_JERK_HIGH_M_S3:g} m/s^3 above 20 m/s; "
                                     "use jerk_limit='iso' (speed-dependent) or set "
                                     "iso15622=False")


def check_time_gap(value: Any, strict: bool = True) -> float:
    """A time gap [s]; ``strict``: within ISO 15622's [0.8, 2.2] s, else only > 0."""
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ParameterError(f"time gap must be a positive number of seconds, got {value!r}")
    if strict and not iso.MIN_TIME_GAP_S <= v <= iso.MAX_TIME_GAP_S:
        raise ParameterError(f"time gap {v:g} s is outside the ISO 15622 range "
                             f"[{iso.MIN_TIME_GAP_S:g}, {iso.MAX_TIME_GAP_S:g}] s (or set "
                             "iso15622=False)")
    return v


class ACCController(Block):
    r"""Sampled ACC controller (module docstring: law, inversion, switching, limits).

    Parameters
    ----------
    period_s : float
        Sample period T [s] (10-40 ms are typical; on a fixed-step run a multiple of dt).
    model : DrivelineModel
        Nominal vehicle for the torque inversion.
    settings : ACCSettings
        Time gap and the additions to the seed's law (default ``ACCSettings()``).
    offset_s : float
        Offset [s] of the sample instants (the first at ``offset_s``).
    engine_speed_input : bool
        Read the engine speed from an ``engine_speed`` input instead of :math:`vN/R`.
    enable_input : bool
        Declare an ``enable`` input (the ACC main switch, or "inputs valid" from a bus
        bridge): below 0.5 the controller requests nothing (closed throttle, no brake)
        and its states are reset, so it starts from a clean state when enabled.
    accel_input : bool
        Declare an ``accel`` input (the measured acceleration) and run the inner
        acceleration loop (module docstring); adds the ``accel_command`` output and the
        states ``accel_integral`` and ``ratio_prev``.  Off by default: the interface and
        the law are then as before.

    The time gap is the parameter ``time_gap_s`` (driver-selectable:
    ``ctx.set_param("acc.time_gap_s", 1.8)``, validated like the settings).

    Ports
    -----
    in   range            scalar [m]      radar range to the target
    in   range_rate       scalar [m/s]    target speed minus own speed
    in   target_valid     scalar [1]      1.0 with a target (else range is ignored)
    in   speed            scalar [m/s]    own speed
    in   set_speed        scalar [m/s]    driver's set speed
    in   gear_ratio       scalar [1]      current transmission ratio i_g (engine/output speed)
    in   engine_speed     scalar [rad/s]  only with ``engine_speed_input=True``
    in   enable           scalar [1]      only with ``enable_input=True``: active at >= 0.5
    in   accel            scalar [m/s^2]  only with ``accel_input=True``: measured acceleration
    out  throttle         scalar [1]      throttle request 0..1; sampled, feedthrough
    out  brake_torque     scalar [N*m]    brake torque request at the wheels, >= 0
    out  accel_request    scalar [m/s^2]  a_k, after limits
    out  engine_torque_request  scalar [N*m]  T_des
    out  mode             scalar [1]      1.0 following (spacing law chosen), 0.0 cruise
    out  braking          scalar [1]      1.0 in brake mode
    out  accel_command    scalar [m/s^2]  only with ``accel_input=True``: u_k, what is inverted
    """

    def __init__(self, name: str, period_s: float, model: DrivelineModel,
                 settings: ACCSettings | None = None, *, offset_s: float = 0.0,
                 engine_speed_input: bool = False, enable_input: bool = False,
                 accel_input: bool = False) -> None:
        super().__init__(name)
        kind = f"ACCController '{name}'"
        self.T, self.offset_s = check_period("ACCController", name, period_s, offset_s)
        if not isinstance(model, DrivelineModel):
            raise ParameterError(f"{kind}: model must be a DrivelineModel, got {model!r}")
        st = settings if settings is not None else ACCSettings()
        if not isinstance(st, ACCSettings):
            raise ParameterError(f"{kind}: settings must be ACCSettings, got {settings!r}")
        self.model, self.settings = model, st
        strict = st.iso15622

        def valid_gap(v: Any) -> float:
            try:
                return check_time_gap(v, strict)
            except ParameterError as exc:
                raise ValueError(str(exc)) from None
        self.time_gap = self.declare_parameter("time_gap_s", float(st.time_gap_s), unit="s",
                                               validate=valid_gap)
        self.range = self.declare_input("range", unit="m")
        self.range_rate = self.declare_input("range_rate", unit="m/s")
        self.target_valid = self.declare_input("target_valid", unit="1")
        self.speed = self.declare_input("speed", unit="m/s")
        self.set_speed = self.declare_input("set_speed", unit="m/s")
        self.gear_ratio = self.declare_input("gear_ratio", unit="1")
        self.engine_speed = (self.declare_input("engine_speed", unit="rad/s")
                             if engine_speed_input else None)
        self.enable = self.declare_input("enable", unit="1") if enable_input else None
        self.accel = self.declare_input("accel", unit="m/s^2") if accel_input else None
        self.a_prev = self.declare_discrete_state("a_prev", 0.0)
        self.brake_mode = self.declare_discrete_state("braking", 0.0)
        self.hold_state = self.declare_discrete_state("hold", 0.0)
        specs = [("throttle", "1"), ("brake_torque", "N*m"), ("accel_request", "m/s^2"),
                 ("engine_torque_request", "N*m"), ("mode", "1"), ("braking", "1")]
        if accel_input:
            self.integral = self.declare_discrete_state("accel_integral", 0.0)
            self.ratio_prev = self.declare_discrete_state("ratio_prev", math.nan)
            specs.append(("accel_command", "m/s^2"))
            n_out = 7
        else:
            self.integral = self.ratio_prev = None
            n_out = 6
        ports = self.declare_outputs(specs, lambda ctx: self._outputs(ctx)[:n_out])
        (self.throttle, self.brake_torque, self.accel_request, self.engine_torque_request,
         self.mode, self.braking) = ports[:6]
        self.accel_command = ports[6] if accel_input else None
        self._n_out = n_out
        self._inputs = [p for p in self.inputs.values()]
        self._memo: tuple = (None, None)
        self.declare_periodic_update(self.T, self._update, self.offset_s)
        self._v_stopped = 0.1 * st.standstill_speed_m_s  # "at rest" for the wheel-speed signal
        if st.jerk_limit is None:
            self._jerk = None
        elif st.jerk_limit == "iso":
            self._jerk = iso.max_jerk
        else:
            j = float(st.jerk_limit)
            self._jerk = lambda v: j

    # ------------------------------------------------------------- the law
    def desired_acceleration(self, ctx: Any) -> tuple[float, float]:
        """``(a, mode)`` before the jerk limit: the spacing/cruise law, clipped."""
        st = self.settings
        th = ctx.param(self.time_gap)
        v = max(ctx.input(self.speed), 0.0)
        a = st.cruise_gain_1_s * (max(ctx.input(self.set_speed), 0.0) - v)
        mode = 0.0
        if ctx.input(self.target_valid) >= 0.5:
            s = st.standstill_gap_m + th * v - ctx.input(self.range)
            x = s / st.boundary_layer_m
            sat = x if -1.0 <= x <= 1.0 else math.copysign(1.0, x)
            a_f = (ctx.input(self.range_rate) - st.reaching_speed_m_s * sat) / th
            if a_f < a:
                a, mode = a_f, 1.0
        return min(max(a, st.min_accel_m_s2), st.max_accel_m_s2), mode

    def _hold(self, ctx: Any, v: float, a: float) -> bool:
        """Standstill hold: entered below ``standstill_speed_m_s`` with a braking request,
        or behind a stopped target within the window (``range < d0 + window``); released
        when the law asks to move and the target (if any) drives off: faster than
        ``restart_speed_m_s`` *and* out of the window (two conditions, so radar noise on
        either alone does not release it)."""
        st = self.settings
        valid = ctx.input(self.target_valid) >= 0.5
        v_target = v + ctx.input(self.range_rate) if valid else math.inf
        near = valid and ctx.input(self.range) < st.standstill_gap_m + st.standstill_window_m
        if ctx.discrete(self.hold_state) >= 0.5:
            return a <= 0.0 or near or v_target < st.restart_speed_m_s
        if v >= st.standstill_speed_m_s:
            return False
        return a <= 0.0 or (near and v_target < st.standstill_speed_m_s)

    def _step(self, ctx: Any) -> tuple:
        """Outputs and the new states at a hit: ``(throttle, brake_torque, accel_request,
        engine_torque_request, mode, braking[, accel_command], a_k, braking, hold[,
        integral, ratio])`` (the bracketed entries with ``accel_input``)."""
        st, md = self.settings, self.model
        inner = self.accel is not None
        if self.enable is not None and not ctx.input(self.enable) >= 0.5:
            # off: closed throttle, no brake, states reset
            off = (float(md.engine.throttle[0]), 0.0, 0.0, 0.0, 0.0, 0.0)
            if inner:
                return off + (0.0, 0.0, 0.0, 0.0, 0.0, math.nan)
            return off + (0.0, 0.0, 0.0)
        v = max(ctx.input(self.speed), 0.0)
        a, mode = self.desired_acceleration(ctx)
        hold = self._hold(ctx, v, a)
        stopped = hold and v < self._v_stopped
        if hold:  # stop at a comfortable deceleration; at rest request nothing
            a = 0.0 if stopped else min(a, -st.stop_decel_m_s2)
        a_prev = ctx.discrete(self.a_prev)
        if self._jerk is not None:
            da = self._jerk(v) * self.T
            a = min(max(a, a_prev - da), a_prev + da)
        i_g = max(ctx.input(self.gear_ratio), 0.0)
        ratio = i_g * md.final_drive
        m_eff = md.effective_mass(ratio)
        r = md.wheel_radius_m
        if self.engine_speed is not None:
            w_e = ctx.input(self.engine_speed)
        else:
            w_e = v * ratio / r
        was = ctx.discrete(self.brake_mode) >= 0.5
        # the inner loop: feedback on the measured acceleration (PI, conditional
        # integration), then the feed-forward leads the request by the actuator's lag
        u = a
        if inner:
            integral = ctx.discrete(self.integral)
            r_prev = ctx.discrete(self.ratio_prev)
            moving = v >= self._v_stopped
            if moving:
                e = a - ctx.input(self.accel)
                shifting = (r_prev == r_prev and abs(i_g - r_prev)
                            > st.shift_ratio_rate_1_s * self.T * max(i_g, r_prev))
                lim = st.accel_integral_limit_m_s2
                new_i = integral if shifting else \
                    min(max(integral + st.accel_ki_1_s * self.T * e, -lim), lim)
                u = a + st.accel_kp * e + new_i
            else:  # at rest: the loop is open, its integral forgotten
                e, new_i = 0.0, 0.0
        lag = md.brake_lag_s if was else md.drive_lag_s
        if lag:
            u += lag * (a - a_prev) / self.T
        f_des = m_eff * u + md.resistance(v)
        eng = md.engine
        r_tq = md.torque_ratio
        if md._converter is not None and self.engine_speed is not None and w_e > 0.0:
            r_tq = md.converter_ratio(v * ratio / r / w_e)
        gain = md.efficiency * r_tq * ratio / r  # wheel force per engine torque
        if gain > 0.0:
            t_des = f_des / gain
            f0 = gain * eng.closed_throttle_torque(w_e)
            w_t = v * ratio / r
            if md.idle_speed_rad_s > w_t and md._capacity is not None:
                # below idle the closed throttle leaves the converter's creep, not a brake
                f0 = max(f0, md.converter_wheel_force(md.idle_speed_rad_s, w_t, ratio))
        else:  # neutral: no drive, brake only
            t_des, f0 = 0.0, 0.0
        band = m_eff * st.hysteresis_m_s2
        braking = f_des < f0 + band if was else f_des < f0 - band
        alpha0 = eng._a[0]
        saturated = False
        if braking or hold or gain <= 0.0:
            throttle = alpha0
            f_now = None
            if self.engine_speed is not None and gain > 0.0:
                f_now = md.converter_wheel_force(w_e, v * ratio / r, ratio)
            tb = ((f0 if f_now is None else f_now) - f_des) * r
            if tb >= md.max_brake_torque_nm:
                tb, saturated = md.max_brake_torque_nm, True
            elif tb < 0.0:
                tb = 0.0
            if hold:  # ramp to the hold torque as the car slows: the model knows no
                # converter creep, which a closed throttle leaves at idle
                ramp = 1.0 if stopped else 1.0 - v / st.standstill_speed_m_s
                tb = max(tb, ramp * min(st.standstill_brake_torque_nm, md.max_brake_torque_nm))
            braking = braking or hold or tb > 0.0
        else:
            throttle, tb = eng.throttle_for(t_des, w_e), 0.0
            saturated = throttle >= eng._a[-1]
        b = 1.0 if braking else 0.0
        out = (throttle, tb, a, t_des, mode, b)
        if not inner:
            return out + (a, b, 1.0 if hold else 0.0)
        if saturated and (e > 0.0) == (tb == 0.0):
            new_i = integral if moving else 0.0  # anti-windup: no integration into a limit
        return out + (u, a, b, 1.0 if hold else 0.0, new_i, i_g)

    # ------------------------------------------------------------- C form
    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`_step` (with :meth:`desired_acceleration`, :meth:`_hold`
        and the model's lookups) as one static C function per block, called by each output
        at a hit and by the update; ``time_gap_s`` is a tunable parameter."""
        st, md, eng = self.settings, self.model, self.model.engine
        f = c_float
        inner = self.accel is not None
        es = self.engine_speed is not None
        names = ["range", "range_rate", "target_valid", "speed", "set_speed", "gear_ratio"]
        names += [n for n, h in (("engine_speed", self.engine_speed), ("enable", self.enable),
                                 ("accel", self.accel)) if h is not None]
        u = {n: f"u[{k}]" for k, n in enumerate(names)}
        states = [self.a_prev, self.brake_mode, self.hold_state]
        if inner:
            states += [self.integral, self.ratio_prev]
        n_all = self._n_out + len(states)
        fn = ("cosim_acc_step_" + "".join(c if c.isalnum() else "_" for c in self.path)
              + f"_{zlib.crc32(self.path.encode()):08x}")
        r = f(md.wheel_radius_m)
        L = []
        if self.enable is not None:
            off = [f(float(eng.throttle[0]))] + ["0.0"] * (n_all - 1)
            if inner:
                off[-1] = "NAN"
            L.append(f"if (!({u['enable']} >= 0.5)) {{")
            L += [f"    o[{k}] = {v};" for k, v in enumerate(off)]
            L.append("    return;\n}")
        # desired_acceleration
        L += [f"double v = (0.0 > {u['speed']}) ? 0.0 : {u['speed']};",
              f"double vs = (0.0 > {u['set_speed']}) ? 0.0 : {u['set_speed']};",
              f"double a = {f(st.cruise_gain_1_s)} * (vs - v), mode = 0.0, m;",
              f"int valid = {u['target_valid']} >= 0.5, hold, stopped, braking, "
              "saturated = 0;",
              "double a_prev = xd[0], i_g, ratio, m_eff, w_e, u_cmd, lag, f_des, r_tq, gain;",
              "double t_des, f0, band, throttle, tb, b;",
              "if (valid) {",
              f"    double sg = {f(st.standstill_gap_m)} + th * v - {u['range']};",
              f"    double x = sg / {f(st.boundary_layer_m)};",
              "    double sat = (-1.0 <= x && x <= 1.0) ? x : copysign(1.0, x);",
              f"    double a_f = ({u['range_rate']} - {f(st.reaching_speed_m_s)} * sat) / th;",
              "    if (a_f < a) { a = a_f; mode = 1.0; }",
              "}",
              f"m = ({f(st.min_accel_m_s2)} > a) ? {f(st.min_accel_m_s2)} : a;",
              f"a = ({f(st.max_accel_m_s2)} < m) ? {f(st.max_accel_m_s2)} : m;"]
        # _hold
        vss = f(st.standstill_speed_m_s)
        L += ["{",
              f"    double v_target = valid ? v + {u['range_rate']} : HUGE_VAL;",
              f"    int near = valid && {u['range']} < {f(st.standstill_gap_m)} + "
              f"{f(st.standstill_window_m)};",
              "    if (xd[2] >= 0.5)",
              f"        hold = a <= 0.0 || near || v_target < {f(st.restart_speed_m_s)};",
              f"    else if (v >= {vss})",
              "        hold = 0;",
              "    else",
              f"        hold = a <= 0.0 || (near && v_target < {vss});",
              "}",
              f"stopped = hold && v < {f(self._v_stopped)};",
              "if (hold) {",
              f"    double c = -{f(st.stop_decel_m_s2)};",
              "    a = stopped ? 0.0 : ((c < a) ? c : a);",
              "}"]
        # jerk limit
        if self._jerk is not None:
            if st.jerk_limit == "iso":
                lo, hi = iso.MAX_JERK_LOW_M_S3, iso.MAX_JERK_HIGH_M_S3
                L += ["{",
                      f"    double w = (v - {f(iso.LOW_SPEED_M_S)}) / "
                      f"{f(iso.HIGH_SPEED_M_S - iso.LOW_SPEED_M_S)};",
                      "    w = (w < 0.0) ? 0.0 : ((w > 1.0) ? 1.0 : w);",
                      f"    double da = ({f(lo)} + {f(hi - lo)} * w) * {f(self.T)};"]
            else:
                L += ["{", f"    double da = {f(float(st.jerk_limit))} * {f(self.T)};"]
            L += ["    double lo = a_prev - da, hi = a_prev + da;",
                  "    m = (lo > a) ? lo : a;",
                  "    a = (hi < m) ? hi : m;",
                  "}"]
        L += [f"i_g = (0.0 > {u['gear_ratio']}) ? 0.0 : {u['gear_ratio']};",
              f"ratio = i_g * {f(md.final_drive)};",
              f"m_eff = {f(md.mass_kg)} + ({f(md.wheel_inertia_kg_m2)} + "
              f"{f(md.engine_inertia_kg_m2)} * ratio * ratio) / ({r} * {r});",
              f"w_e = {u['engine_speed']};" if es else f"w_e = v * ratio / {r};",
              "u_cmd = a;"]
        if inner:
            T = f(self.T)
            lim = f(st.accel_integral_limit_m_s2)
            L += ["double integral = xd[3], r_prev = xd[4], e, new_i;",
                  f"int moving = v >= {f(self._v_stopped)};",
                  "if (moving) {",
                  "    int shifting;",
                  f"    e = a - {u['accel']};",
                  "    shifting = r_prev == r_prev && fabs(i_g - r_prev) > "
                  f"{f(st.shift_ratio_rate_1_s)} * {T} * ((r_prev > i_g) ? r_prev : i_g);",
                  "    if (shifting) new_i = integral;",
                  "    else {",
                  f"        double q = integral + {f(st.accel_ki_1_s)} * {T} * e;",
                  f"        q = (-{lim} > q) ? -{lim} : q;",
                  f"        new_i = ({lim} < q) ? {lim} : q;",
                  "    }",
                  f"    u_cmd = a + {f(st.accel_kp)} * e + new_i;",
                  "} else { e = 0.0; new_i = 0.0; }"]
        L += [f"lag = (xd[1] >= 0.5) ? {f(md.brake_lag_s)} : {f(md.drive_lag_s)};",
              f"if (lag != 0.0) u_cmd = u_cmd + lag * (a - a_prev) / {f(self.T)};",
              f"f_des = m_eff * u_cmd + ({md.c_resistance('v')});",
              f"r_tq = {f(md.torque_ratio)};"]
        if md._converter is not None and es:
            L.append(f"if (w_e > 0.0) r_tq = "
                     f"{md.c_converter_ratio(cg, f'v * ratio / {r} / w_e')};")
        L += [f"gain = {f(md.efficiency)} * r_tq * ratio / {r};",
              "if (gain > 0.0) {",
              "    t_des = f_des / gain;",
              f"    f0 = gain * {eng.c_closed_throttle_torque(cg, 'w_e')};"]
        if md._capacity is not None:
            idle = f(md.idle_speed_rad_s)
            L += ["    {",
                  f"        double w_t = v * ratio / {r};",
                  f"        if ({idle} > w_t) {{",
                  "            double fc = "
                  f"{md.c_converter_wheel_force(cg, idle, 'w_t', 'ratio')};",
                  "            f0 = (fc > f0) ? fc : f0;",
                  "        }",
                  "    }"]
        L += ["} else { t_des = 0.0; f0 = 0.0; }",
              f"band = m_eff * {f(st.hysteresis_m_s2)};",
              "braking = (xd[1] >= 0.5) ? (f_des < f0 + band) : (f_des < f0 - band);",
              "if (braking || hold || gain <= 0.0) {",
              "    double f_now = f0;",
              f"    throttle = {f(eng._a[0])};"]
        if es and md._capacity is not None:
            L.append("    if (gain > 0.0) f_now = "
                     f"{md.c_converter_wheel_force(cg, 'w_e', f'v * ratio / {r}', 'ratio')};")
        maxb = f(md.max_brake_torque_nm)
        hold_tq = min(st.standstill_brake_torque_nm, md.max_brake_torque_nm)
        L += [f"    tb = (f_now - f_des) * {r};",
              f"    if (tb >= {maxb}) {{ tb = {maxb}; saturated = 1; }}",
              "    else if (tb < 0.0) tb = 0.0;",
              "    if (hold) {",
              f"        double ramp = stopped ? 1.0 : 1.0 - v / {vss};",
              f"        double q = ramp * {f(hold_tq)};",
              "        tb = (q > tb) ? q : tb;",
              "    }",
              "    braking = braking || hold || tb > 0.0;",
              "} else {",
              f"    throttle = {eng.c_throttle_for(cg, 't_des', 'w_e')};",
              "    tb = 0.0;",
              f"    saturated = throttle >= {f(eng._a[-1])};",
              "}",
              "b = braking ? 1.0 : 0.0;",
              "o[0] = throttle; o[1] = tb; o[2] = a; o[3] = t_des; o[4] = mode; o[5] = b;"]
        if inner:
            L += ["if (saturated && ((e > 0.0) == (tb == 0.0)))",
                  "    new_i = moving ? integral : 0.0;",
                  "o[6] = u_cmd; o[7] = a; o[8] = b; o[9] = hold ? 1.0 : 0.0; "
                  "o[10] = new_i; o[11] = i_g;"]
        else:
            L += ["(void)saturated;", "o[6] = a; o[7] = b; o[8] = hold ? 1.0 : 0.0;"]
        cg.helper(fn, f"/* blocks.controllers.acc.ACCController._step of '{self.path}' */\n"
                      f"static void {fn}(const double *u, const double *xd, double th, "
                      "double *o) {\n    " + "\n".join(L).replace("\n", "\n    ") + "\n}")
        th = cg.param("time_gap_s", float(cg.value(self.time_gap)), unit="s")
        ins = ", ".join(cg.u(self.input(n)) for n in names)
        xds = ", ".join(cg.xd(h) for h in states)
        call = (f"double acc_u[{len(names)}] = {{{ins}}};\n"
                f"double acc_xd[{len(states)}] = {{{xds}}}, acc_o[{n_all}];\n"
                f"{fn}(acc_u, acc_xd, {th}, acc_o);\n")
        ports = [self.throttle, self.brake_torque, self.accel_request,
                 self.engine_torque_request, self.mode, self.braking]
        if inner:
            ports.append(self.accel_command)
        outputs = {p.name: "{\n    " + call.replace("\n", "\n    ")
                   + f"{cg.y(p)} = acc_o[{k}];\n}}" for k, p in enumerate(ports)}
        update = call + "\n".join(f"{cg.xd(h)} = acc_o[{self._n_out + k}];"
                                  for k, h in enumerate(states))
        return CModel(outputs=outputs, update=update)

    def _memo_key(self, ctx: Any) -> tuple:
        inp = ctx.input
        return (id(ctx), ctx.time, ctx.param(self.time_gap),
                *[inp(p) for p in self._inputs],
                *[ctx.discrete(h) for h in self.discrete_states])

    def _outputs(self, ctx: Any) -> tuple:
        """:meth:`_step`, remembered for the update of the same hit (a pure function of
        the inputs, states, parameter and time: the key holds them all)."""
        key = self._memo_key(ctx)
        out = self._step(ctx)
        self._memo = (key, out)
        return out

    def _update(self, ctx: Any) -> None:
        key, out = self._memo
        if key is None or key != self._memo_key(ctx):
            out = self._step(ctx)
        k = self._n_out
        ctx.set_discrete(self.a_prev, out[k])
        ctx.set_discrete(self.brake_mode, out[k + 1])
        ctx.set_discrete(self.hold_state, out[k + 2])
        if self.integral is not None:
            ctx.set_discrete(self.integral, out[k + 3])
            ctx.set_discrete(self.ratio_prev, out[k + 4])
