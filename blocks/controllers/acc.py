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
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.codegen.model import CModel
from cosim.errors import ParameterError

from ..checks import check_number as _num
from ..discrete import check_period
from . import acc_c
from . import iso15622 as iso
from .acc_c import controller_c_model


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

    # C forms (blocks.controllers.acc_c): C expressions of the lookups above
    _c_arrays = acc_c.engine_c_arrays
    c_torque = acc_c.engine_c_torque
    c_throttle_for = acc_c.engine_c_throttle_for
    c_closed_throttle_torque = acc_c.engine_c_closed_throttle_torque

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

    # C forms (blocks.controllers.acc_c): C expressions of the methods above
    c_converter_ratio = acc_c.driveline_c_converter_ratio
    c_converter_wheel_force = acc_c.driveline_c_converter_wheel_force
    c_resistance = acc_c.driveline_c_resistance

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
        return controller_c_model(self, cg)

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
