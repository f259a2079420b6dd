r"""Traffic scenarios for adaptive cruise control: lead vehicles, IDM agents and a radar.

The seed's ACC paper (Kim et al., seed section 11) has a *scenario module* that generates
the motion of the preceding vehicles; this module is that scenario module:

* speed profiles of scripted lead vehicles (:class:`PiecewiseSpeed`,
  :class:`SinusoidalSpeed`, :func:`stop_and_go_profile`), each with the exact integral
  (the position) in closed form;
* :class:`LeadVehicle`: a vehicle driving a profile (no state);
* :class:`IDMVehicle`: a traffic agent driven by the Intelligent Driver Model (Treiber,
  Hennecke & Helbing 2000), free or following a leader;
* :class:`Radar`: range, range rate and a valid flag to the nearest vehicle ahead *in the
  ego lane*, within a maximum range; the target switches as vehicles enter and leave;
* :class:`TrafficScenario` describes the vehicles and wires them with a radar into a
  diagram; :func:`cut_in_scenario`, :func:`cut_out_scenario` and
  :func:`stop_and_go_scenario` are the seed's three scenarios.

Conventions: one-dimensional road, positions along it in metres.  A vehicle's ``x`` is its
front bumper, ``x_rear = x - length``.  The radar sits on the ego's front bumper, so the
range to a target is ``target.x_rear - ego.x`` (negative = collision).  The range rate is
``target.v - ego.v`` (positive: the gap opens).  Flags are floats 0.0/1.0 (unit ``"1"``)
so they travel over CAN or FMI like any signal.

IDM (``v`` own speed, ``s`` gap to the leader's rear, :math:`\Delta v = v - v_l`
the approach rate):

.. math::

    a = a_m \Big[1 - (v/v_0)^\delta - \big(s^*/s\big)^2\Big], \qquad
    s^* = s_0 + \max\Big(0,\ v T + \frac{v \Delta v}{2\sqrt{a_m b}}\Big), \qquad
    s_e(v) = \frac{s_0 + v T}{\sqrt{1 - (v/v_0)^\delta}}

with :math:`s_e` the equilibrium gap.  Defaults (Treiber 2000): :math:`v_0` = 120 km/h,
T = 1.6 s, :math:`s_0` = 2 m, :math:`a_m` = 0.73 m/s², b = 1.67 m/s², δ = 4.

Limitations
-----------
* Lane changes are instantaneous: a vehicle is in the ego lane or not (the radar sees a
  step in range, as in the seed's figures), there is no lateral motion or
  partial overlap, and the radar has no field of view, noise, latency or clutter (add a
  :class:`~cosim.Noise` manipulator or a sampled ``period_s`` for those).
* The lead profiles are kinematic (any acceleration is feasible); their kinks are not
  time events (they enter the loop only through the radar, read by a sampled controller).
* C forms (compiled run, FMU export; in :mod:`.scenarios_c`): :class:`LeadVehicle` has one with a
  :class:`PiecewiseSpeed` or :class:`SinusoidalSpeed` profile only (another
  :class:`SpeedProfile` subclass raises CodegenError: the run stays in Python);
  :class:`IDMVehicle` and :class:`Radar` always.
* IDM agents are not collision-free under arbitrary leaders: the gap is floored at 1 mm
  (the model is singular at s = 0), and speeds are kept non-negative (no reversing).
  An IDM agent keeps following its leader after leaving the ego lane.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.codegen.model import CModel
from cosim.errors import ParameterError

from ..checks import check_number
from ..discrete import check_period
from . import scenarios_c as _c

#: Default vehicle length [m].
CAR_LENGTH_M = 4.5


def _finite(kind: str, name: str, label: str, value: Any, positive: bool = False,
            nonnegative: bool = False) -> float:
    return check_number(f"{kind} '{name}'", label, value, positive=positive,
                        nonnegative=nonnegative)


# ------------------------------------------------------------------ speed profiles


class SpeedProfile:
    """A lead vehicle's speed :math:`v(t)`; ``distance(t)`` is :math:`\\int_0^t v` exactly."""

    def speed(self, t: float) -> float:
        raise NotImplementedError

    def accel(self, t: float) -> float:
        raise NotImplementedError

    def distance(self, t: float) -> float:
        return self._antiderivative(t) - self._antiderivative(0.0)

    def _antiderivative(self, t: float) -> float:
        raise NotImplementedError


class PiecewiseSpeed(SpeedProfile):
    r"""Speed interpolated linearly through ``(times_s[i], speeds_m_s[i])``, held outside.

    .. math:: v(t) = v_i + \frac{t - t_i}{t_{i+1} - t_i}(v_{i+1} - v_i), \quad
              t_i \le t < t_{i+1}

    The acceleration is the slope of the segment (0 outside, the right-hand slope at a
    breakpoint); the distance is the exact piecewise-quadratic integral.
    """

    def __init__(self, times_s: Sequence[float], speeds_m_s: Sequence[float]) -> None:
        t = np.asarray(times_s, dtype=float)
        v = np.asarray(speeds_m_s, dtype=float)
        kind = "PiecewiseSpeed"
        if t.ndim != 1 or t.shape != v.shape or t.size < 1:
            raise ParameterError(f"{kind}: times_s and speeds_m_s must be 1-D of the same "
                                 f"length >= 1, got shapes {t.shape} and {v.shape}")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(v))):
            raise ParameterError(f"{kind}: times and speeds must be finite")
        if np.any(np.diff(t) <= 0):
            i = int(np.flatnonzero(np.diff(t) <= 0)[0])
            raise ParameterError(f"{kind}: times_s must be strictly increasing, but "
                                 f"times_s[{i}] = {float(t[i])!r} and times_s[{i + 1}] = "
                                 f"{float(t[i + 1])!r}")
        if np.any(v < 0):
            i = int(np.flatnonzero(v < 0)[0])
            raise ParameterError(f"{kind}: speeds must be >= 0 (no reversing), got "
                                 f"speeds_m_s[{i}] = {float(v[i])!r}")
        self.times, self.speeds = t, v
        self._t, self._v = t.tolist(), v.tolist()
        self._slope = (np.diff(v) / np.diff(t)).tolist() if t.size > 1 else []
        cum = np.concatenate([[0.0], np.cumsum(0.5 * (v[1:] + v[:-1]) * np.diff(t))])
        self._cum = cum.tolist()

    def _segment(self, t: float) -> int:
        """-1 before the first point, n-1 after the last, else the segment index."""
        return bisect_right(self._t, t) - 1

    def speed(self, t: float) -> float:
        i = self._segment(t)
        if i < 0:
            return self._v[0]
        if i >= len(self._t) - 1:
            return self._v[-1]
        return self._v[i] + self._slope[i] * (t - self._t[i])

    def accel(self, t: float) -> float:
        i = self._segment(t)
        return self._slope[i] if 0 <= i < len(self._t) - 1 else 0.0

    def _antiderivative(self, t: float) -> float:
        i = self._segment(t)
        if i < 0:
            return self._v[0] * (t - self._t[0])
        tau = t - self._t[i]
        if i >= len(self._t) - 1:
            return self._cum[-1] + self._v[-1] * tau
        return self._cum[i] + self._v[i] * tau + 0.5 * self._slope[i] * tau * tau

    def c_motion(self, cg: Any, t: str) -> tuple[str, str, str]:
        """C of ``(antiderivative, speed, accel)`` at the C expression ``t`` (bisection
        over constant breakpoints), as the methods above."""
        return _c.piecewise_c_motion(self, cg, t)


def constant_speed(speed_m_s: float) -> PiecewiseSpeed:
    """A constant speed (a one-point :class:`PiecewiseSpeed`)."""
    return PiecewiseSpeed([0.0], [speed_m_s])


class SinusoidalSpeed(SpeedProfile):
    r"""Speed oscillating about a mean from ``start_s`` on (the mean before).

    .. math:: v(t) = \bar v + A \sin\big(\omega (t - t_0)\big), \quad t \ge t_0,
              \qquad \omega = 2\pi / P

    ``amplitude_m_s`` must not exceed ``mean_m_s`` (no reversing).
    """

    def __init__(self, mean_m_s: float, amplitude_m_s: float, period_s: float,
                 start_s: float = 0.0) -> None:
        k = "SinusoidalSpeed"
        self.mean = _finite(k, "profile", "mean_m_s", mean_m_s, nonnegative=True)
        self.amp = _finite(k, "profile", "amplitude_m_s", amplitude_m_s, nonnegative=True)
        period = _finite(k, "profile", "period_s", period_s, positive=True)
        self.t0 = _finite(k, "profile", "start_s", start_s)
        if self.amp > self.mean:
            raise ParameterError(f"{k}: amplitude_m_s = {self.amp:g} exceeds mean_m_s = "
                                 f"{self.mean:g}: the speed would become negative")
        self.w = 2.0 * math.pi / period

    def speed(self, t: float) -> float:
        return self.mean + (self.amp * math.sin(self.w * (t - self.t0)) if t >= self.t0 else 0.0)

    def accel(self, t: float) -> float:
        return self.amp * self.w * math.cos(self.w * (t - self.t0)) if t >= self.t0 else 0.0

    def _antiderivative(self, t: float) -> float:
        osc = (self.amp / self.w) * (1.0 - math.cos(self.w * (t - self.t0))) if t >= self.t0 \
            else 0.0
        return self.mean * t + osc

    def c_motion(self, cg: Any, t: str) -> tuple[str, str, str]:
        """C of ``(antiderivative, speed, accel)`` at the C expression ``t``."""
        return _c.sinusoidal_c_motion(self, t)


def stop_and_go_profile(cruise_m_s: float = 15.0, decel_m_s2: float = 1.5,
                        accel_m_s2: float = 1.0, cruise_s: float = 10.0, stop_s: float = 8.0,
                        cycles: int = 1) -> PiecewiseSpeed:
    """Cruise, brake to a standstill, stand, accelerate back, cruise; ``cycles`` times.

    Each cycle lasts ``cruise_s + v/decel + stop_s + v/accel`` and the profile ends with a
    last cruise of ``cruise_s`` (then holds the cruise speed).
    """
    k = "stop_and_go_profile"
    v = _finite(k, "profile", "cruise_m_s", cruise_m_s, positive=True)
    d = _finite(k, "profile", "decel_m_s2", decel_m_s2, positive=True)
    a = _finite(k, "profile", "accel_m_s2", accel_m_s2, positive=True)
    tc = _finite(k, "profile", "cruise_s", cruise_s, positive=True)
    ts = _finite(k, "profile", "stop_s", stop_s, positive=True)
    if int(cycles) < 1:
        raise ParameterError(f"{k}: cycles must be >= 1, got {cycles!r}")
    t, pts = 0.0, [(0.0, v)]
    for _ in range(int(cycles)):
        for dt, speed in ((tc, v), (v / d, 0.0), (ts, 0.0), (v / a, v)):
            t += dt
            pts.append((t, speed))
    pts.append((t + tc, v))
    return PiecewiseSpeed([p[0] for p in pts], [p[1] for p in pts])


# ------------------------------------------------------------------ lane membership


def _lane_flag(kind: str, name: str, in_lane: bool, changes: Sequence[float]):
    """``(calc(ctx) -> 0.0/1.0, sorted change times)``; each change toggles membership."""
    ts = [_finite(kind, name, "lane_changes_s", c, positive=True) for c in changes]
    if any(b <= a for a, b in zip(ts, ts[1:])):
        raise ParameterError(f"{kind} '{name}': lane_changes_s must be strictly increasing, "
                             f"got {list(changes)!r}")
    first = bool(in_lane)

    def calc(ctx: Any) -> float:  # branch at ctx.mode_time (see blocks.sources.Step)
        n = bisect_right(ts, ctx.mode_time + 1e-12)
        return 1.0 if first ^ (n % 2 == 1) else 0.0
    return calc, ts


class LeadVehicle(Block):
    r"""A scripted vehicle driving a :class:`SpeedProfile` (no state).

    .. math:: x(t) = x_0 + \int_0^t v(\tau)\,d\tau, \qquad x_\mathrm{rear} = x - L

    ``in_lane`` says whether it is in the ego lane; each time in ``lane_changes_s``
    toggles it (the switching instants are time events).

    Ports
    -----
    out  x        scalar [m]      front bumper; no inputs
    out  x_rear   scalar [m]      rear bumper, x - length
    out  v        scalar [m/s]
    out  a        scalar [m/s^2]
    out  in_lane  scalar [1]      1.0 in the ego lane, else 0.0

    Parameters
    ----------
    profile : SpeedProfile
        The speed over time (:class:`PiecewiseSpeed`, :class:`SinusoidalSpeed`, ...).
    x0_m : float
        :math:`x_0` [m], the front bumper at t = 0.
    length_m : float
        :math:`L` [m].
    in_lane : bool
        In the ego lane at t = 0.
    lane_changes_s : sequence of float
        Times [s] at which it changes lane (toggles ``in_lane``).
    """

    def __init__(self, name: str, profile: SpeedProfile, x0_m: float = 0.0,
                 length_m: float = CAR_LENGTH_M, in_lane: bool = True,
                 lane_changes_s: Sequence[float] = ()) -> None:
        super().__init__(name)
        kind = "LeadVehicle"
        if not isinstance(profile, SpeedProfile):
            raise ParameterError(f"{kind} '{name}': profile must be a SpeedProfile "
                                 f"(PiecewiseSpeed, SinusoidalSpeed, ...), got {profile!r}")
        self.profile = profile
        x0 = self.x0 = _finite(kind, name, "x0_m", x0_m)
        length = self.length = _finite(kind, name, "length_m", length_m, positive=True)
        lane, changes = _lane_flag(kind, name, in_lane, lane_changes_s)
        self._lane = (bool(in_lane), changes)
        if changes:
            self.declare_time_event(changes)
        p = profile
        start = p._antiderivative(0.0)
        anti, speed, accel = p._antiderivative, p.speed, p.accel

        def motion(ctx: Any) -> tuple[float, float, float, float]:
            # one call for the four outputs (the evaluator calls a group once)
            t = ctx.time
            x = x0 + (anti(t) - start)
            return x, x - length, speed(t), accel(t)
        self.x, self.x_rear, self.v, self.a = self.declare_outputs(
            [("x", "m"), ("x_rear", "m"), ("v", "m/s"), ("a", "m/s^2")], motion,
            depends_on=())
        self.in_lane = self.declare_output("in_lane", lane, unit="1", depends_on=())

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors ``motion`` (the profile's ``c_motion``: :class:`PiecewiseSpeed`,
        :class:`SinusoidalSpeed`) and the lane flag; another :class:`SpeedProfile` has
        none (CodegenError)."""
        return _c.lead_vehicle_c_model(self, cg)


# ---------------------------------------------------------------------------- IDM


@dataclass(frozen=True)
class IDMParameters:
    """Intelligent Driver Model parameters (defaults: Treiber, Hennecke & Helbing 2000)."""

    desired_speed_m_s: float = 120.0 / 3.6
    time_gap_s: float = 1.6
    min_gap_m: float = 2.0
    max_accel_m_s2: float = 0.73
    comfort_decel_m_s2: float = 1.67
    delta: float = 4.0

    def __post_init__(self) -> None:
        for f in ("desired_speed_m_s", "time_gap_s", "max_accel_m_s2", "comfort_decel_m_s2",
                  "delta"):
            _finite("IDMParameters", "idm", f, getattr(self, f), positive=True)
        _finite("IDMParameters", "idm", "min_gap_m", self.min_gap_m, nonnegative=True)


def idm_desired_gap(v: float, dv: float, p: IDMParameters) -> float:
    """:math:`s^*(v, \\Delta v)` [m], ``dv = v - v_leader`` (positive when closing in)."""
    inner = v * p.time_gap_s + v * dv / (2.0 * math.sqrt(p.max_accel_m_s2
                                                         * p.comfort_decel_m_s2))
    return p.min_gap_m + max(0.0, inner)


def idm_acceleration(v: float, s: float, dv: float, p: IDMParameters) -> float:
    """IDM acceleration [m/s^2] at speed ``v``, gap ``s`` > 0 and approach rate ``dv``;
    ``s = inf`` for the free road."""
    free = 1.0 - (v / p.desired_speed_m_s) ** p.delta
    if math.isinf(s):
        return p.max_accel_m_s2 * free
    if not s > 0:
        raise ValueError(f"idm_acceleration: the gap must be > 0, got {s!r}")
    return p.max_accel_m_s2 * (free - (idm_desired_gap(v, dv, p) / s) ** 2)


def idm_equilibrium_gap(v: float, p: IDMParameters) -> float:
    """Equilibrium gap :math:`s_e(v)` [m] for ``0 <= v < v0``."""
    if not 0 <= v < p.desired_speed_m_s:
        raise ValueError(f"idm_equilibrium_gap: need 0 <= v < v0 = {p.desired_speed_m_s:g} "
                         f"m/s, got v = {v!r}")
    return (p.min_gap_m + v * p.time_gap_s) / math.sqrt(1.0 - (v / p.desired_speed_m_s)
                                                        ** p.delta)


class IDMVehicle(Block):
    r"""A traffic agent driven by the Intelligent Driver Model (module docstring).

    .. math:: \dot x = \max(v, 0), \qquad \dot v = a_\mathrm{IDM}(v,\ s,\ v - v_l),
              \qquad s = x_{l,\mathrm{rear}} - x

    With ``leader=False`` it drives on a free road (:math:`s = \infty`, no inputs).  At a
    standstill braking is cut (:math:`\dot v = -v/\tau` with :math:`\tau` = 50 ms pulls a
    slightly negative speed back to 0): no reversing.

    Ports
    -----
    in   leader_x_rear  scalar [m]      the leader's rear bumper (only with ``leader=True``)
    in   leader_v       scalar [m/s]    the leader's speed (only with ``leader=True``)
    out  x              scalar [m]      front bumper; state only
    out  x_rear         scalar [m]      x - length; state only
    out  v              scalar [m/s]    state only
    out  a              scalar [m/s^2]  the IDM acceleration; reads the leader inputs
    out  in_lane        scalar [1]      as for :class:`LeadVehicle`

    Parameters
    ----------
    params : IDMParameters, optional
        Desired speed, time gap, minimum gap, accelerations, exponent (default: Treiber,
        Hennecke & Helbing 2000).
    x0_m, v0_m_s : float
        Initial front-bumper position [m] and speed [m/s] (>= 0).
    length_m : float
        Vehicle length [m].
    leader : bool
        Follow a leader (the ``leader_*`` inputs), else drive on a free road.
    in_lane, lane_changes_s : bool, sequence of float
        As for :class:`LeadVehicle`.
    """

    def __init__(self, name: str, params: IDMParameters | None = None, x0_m: float = 0.0,
                 v0_m_s: float = 0.0, length_m: float = CAR_LENGTH_M, leader: bool = True,
                 in_lane: bool = True, lane_changes_s: Sequence[float] = ()) -> None:
        super().__init__(name)
        kind = "IDMVehicle"
        self.p = params if params is not None else IDMParameters()
        if not isinstance(self.p, IDMParameters):
            raise ParameterError(f"{kind} '{name}': params must be IDMParameters, got "
                                 f"{params!r}")
        x0 = _finite(kind, name, "x0_m", x0_m)
        v0 = _finite(kind, name, "v0_m_s", v0_m_s, nonnegative=True)
        self.length = length = _finite(kind, name, "length_m", length_m, positive=True)
        self.has_leader = bool(leader)
        if self.has_leader:
            self.leader_x_rear = self.declare_input("leader_x_rear", unit="m")
            self.leader_v = self.declare_input("leader_v", unit="m/s")
        self.xs = self.declare_continuous_state("x", x0)
        self.vs = self.declare_continuous_state("v", v0)
        lane, changes = _lane_flag(kind, name, in_lane, lane_changes_s)
        self._lane = (bool(in_lane), changes)
        if changes:
            self.declare_time_event(changes)
        self.x = self.declare_output("x", lambda ctx: ctx.state(self.xs), unit="m",
                                     depends_on=())
        self.x_rear = self.declare_output("x_rear", lambda ctx: ctx.state(self.xs) - length,
                                          unit="m", depends_on=())
        self.v = self.declare_output("v", lambda ctx: ctx.state(self.vs), unit="m/s",
                                     depends_on=())
        self.a = self.declare_output("a", self._accel, unit="m/s^2")
        self.in_lane = self.declare_output("in_lane", lane, unit="1", depends_on=())

    def _accel(self, ctx: Any) -> float:
        v = ctx.state(self.vs)
        vp = max(v, 0.0)
        if self.has_leader:
            s = max(ctx.input(self.leader_x_rear) - ctx.state(self.xs), 1e-3)
            a = idm_acceleration(vp, s, vp - ctx.input(self.leader_v), self.p)
        else:
            a = idm_acceleration(vp, math.inf, 0.0, self.p)
        if v <= 0.0 and a < 0.0:
            return -v / 0.05
        return a

    def derivatives(self, ctx: Any) -> Any:
        return (max(ctx.state(self.vs), 0.0), self._accel(ctx))

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`_accel` and :meth:`derivatives` (with
        :func:`idm_acceleration`: ``pow`` for ``**``; a NaN gap makes the step fail where
        Python raises ValueError)."""
        return _c.idm_vehicle_c_model(self, cg)


# -------------------------------------------------------------------------- radar


class Radar(Block):
    r"""Forward radar: range, range rate and valid flag to the nearest vehicle ahead in the
    ego lane within ``max_range_m``.

    For targets :math:`i` with ``in_lane`` = 1 and :math:`x_{r,i} > x_e - L_e` (rear ahead
    of the ego's rear, so a collision shows as a negative range instead of a lost target):

    .. math:: i^* = \arg\min_i (x_{r,i} - x_e), \quad r = x_{r,i^*} - x_e \le r_\max,
              \qquad \dot r = v_{i^*} - v_e

    Without such a target: ``range`` = ``max_range_m``, ``range_rate`` = 0, ``valid`` = 0,
    ``target`` = -1.  The target switches instantly (cut-in: to a closer vehicle; cut-out:
    to the next one or none).  With ``period_s`` the radar is sampled (outputs held
    between its cycles), else it is evaluated with its inputs.

    Ports
    -----
    in   ego_x              scalar [m]     the ego's front bumper (the radar position)
    in   ego_v              scalar [m/s]
    in   target{i}_x_rear   scalar [m]     rear bumper of target i = 0 .. n-1
    in   target{i}_v        scalar [m/s]   speed of target i
    in   target{i}_in_lane  scalar [1]     1.0 when target i is in the ego lane
    out  range              scalar [m]     reads every input (sampled with ``period_s``)
    out  range_rate         scalar [m/s]   reads every input
    out  valid              scalar [1]     1.0 with a target, else 0.0; reads every input
    out  target             scalar [1]     index of the target, -1.0 without; reads every input

    Parameters
    ----------
    n_targets : int
        Number of vehicles the radar sees (>= 1): the inputs ``target0_*`` ..
    max_range_m : float
        :math:`r_\max` [m]: farther targets are not seen.
    ego_length_m : float
        :math:`L_e` [m], the ego's length.
    period_s : float, optional
        Sample period [s] of the radar (default: evaluated with its inputs).
    offset_s : float
        Offset [s] of its sample instants.
    """

    def __init__(self, name: str, n_targets: int, max_range_m: float = 150.0,
                 ego_length_m: float = CAR_LENGTH_M, period_s: float | None = None,
                 offset_s: float = 0.0) -> None:
        super().__init__(name)
        kind = "Radar"
        if not isinstance(n_targets, (int, np.integer)) or n_targets < 1:
            raise ParameterError(f"{kind} '{name}': n_targets must be an integer >= 1, got "
                                 f"{n_targets!r}")
        self.n = int(n_targets)
        self.max_range = _finite(kind, name, "max_range_m", max_range_m, positive=True)
        self.ego_length = _finite(kind, name, "ego_length_m", ego_length_m, positive=True)
        self.ego_x = self.declare_input("ego_x", unit="m")
        self.ego_v = self.declare_input("ego_v", unit="m/s")
        self.targets = [(self.declare_input(f"target{i}_x_rear", unit="m"),
                         self.declare_input(f"target{i}_v", unit="m/s"),
                         self.declare_input(f"target{i}_in_lane", unit="1"))
                        for i in range(self.n)]
        self.range, self.range_rate, self.valid, self.target = self.declare_outputs(
            [("range", "m"), ("range_rate", "m/s"), ("valid", "1"), ("target", "1")],
            self._measure)
        if period_s is not None:
            self.period_s, self.offset_s = check_period(kind, name, period_s, offset_s)
            self.declare_periodic_update(self.period_s, None, self.offset_s)

    def _measure(self, ctx: Any) -> tuple[float, float, float, float]:
        xe = ctx.input(self.ego_x)
        behind = -self.ego_length
        best, best_i = math.inf, -1
        for i, (xr, _, lane) in enumerate(self.targets):
            if ctx.input(lane) < 0.5:
                continue
            r = ctx.input(xr) - xe
            if behind < r < best:
                best, best_i = r, i
        if best_i < 0 or best > self.max_range:
            return self.max_range, 0.0, 0.0, -1.0
        return best, ctx.input(self.targets[best_i][1]) - ctx.input(self.ego_v), 1.0, \
            float(best_i)

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`_measure` (the targets unrolled in order); sampled with
        ``period_s`` like the Python block (the outputs held between its hits)."""
        return _c.radar_c_model(self, cg)


# ---------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class TrafficVehicle:
    """One vehicle of a :class:`TrafficScenario`: scripted (``profile``) or an IDM agent
    (``idm``, following ``leader`` by name, or free with ``leader=None``)."""

    name: str
    x0_m: float
    profile: SpeedProfile | None = None
    idm: IDMParameters | None = None
    leader: str | None = None
    v0_m_s: float = 0.0
    length_m: float = CAR_LENGTH_M
    in_lane: bool = True
    lane_changes_s: tuple[float, ...] = ()

    def make_block(self) -> Block:
        if (self.profile is None) == (self.idm is None):
            raise ParameterError(f"TrafficVehicle '{self.name}': give exactly one of profile "
                                 "(a scripted vehicle) or idm (an IDM agent)")
        if self.profile is not None:
            if self.leader is not None:
                raise ParameterError(f"TrafficVehicle '{self.name}': a scripted vehicle has "
                                     f"no leader (got leader={self.leader!r})")
            return LeadVehicle(self.name, self.profile, self.x0_m, self.length_m,
                               self.in_lane, self.lane_changes_s)
        return IDMVehicle(self.name, self.idm, self.x0_m, self.v0_m_s, self.length_m,
                          leader=self.leader is not None, in_lane=self.in_lane,
                          lane_changes_s=self.lane_changes_s)


@dataclass(frozen=True)
class TrafficScenario:
    """Vehicles around the ego, the ego's initial state and the driver's set speed.

    :meth:`add_to` adds the vehicles and a :class:`Radar` to a diagram builder and wires
    them (IDM agents to their leaders, every vehicle to the radar); the caller connects the
    ego's position and speed.  ``events`` is a readable timeline for summaries.
    """

    name: str
    vehicles: tuple[TrafficVehicle, ...]
    ego_v0_m_s: float
    set_speed_m_s: float
    t_end_s: float
    ego_x0_m: float = 0.0
    events: tuple[tuple[float, str], ...] = field(default=())

    def __post_init__(self) -> None:
        names = [v.name for v in self.vehicles]
        if not names:
            raise ParameterError(f"TrafficScenario '{self.name}': no vehicles")
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ParameterError(f"TrafficScenario '{self.name}': duplicate vehicle names "
                                 f"{sorted(dup)}")
        seen: set[str] = set()
        for v in self.vehicles:
            if v.leader is not None and v.leader not in seen:
                where = "is not defined before it" if v.leader in names else "does not exist"
                raise ParameterError(f"TrafficScenario '{self.name}': vehicle '{v.name}' "
                                     f"follows '{v.leader}', which {where}; valid leaders: "
                                     f"{sorted(seen) or '(none)'}")
            seen.add(v.name)

    def add_to(self, builder: Any, ego_x: Any, ego_v: Any, *, max_range_m: float = 150.0,
               radar_period_s: float | None = None, radar_name: str = "radar",
               ego_length_m: float = CAR_LENGTH_M) -> dict[str, Block]:
        """Add vehicles and radar to ``builder``; connect ``ego_x``/``ego_v`` (output
        ports) to the radar.  Returns the blocks by name (the radar as ``radar_name``)."""
        blocks: dict[str, Block] = {}
        for spec in self.vehicles:
            blk = builder.add(spec.make_block())
            if spec.leader is not None:
                lead = blocks[spec.leader]
                builder.connect(lead.x_rear, blk.leader_x_rear)
                builder.connect(lead.v, blk.leader_v)
            blocks[spec.name] = blk
        radar = builder.add(Radar(radar_name, len(self.vehicles), max_range_m, ego_length_m,
                                  period_s=radar_period_s))
        builder.connect(ego_x, radar.ego_x)
        builder.connect(ego_v, radar.ego_v)
        for (xr, v, lane), blk in zip(radar.targets, blocks.values()):
            builder.connect(blk.x_rear, xr)
            builder.connect(blk.v, v)
            builder.connect(blk.in_lane, lane)
        blocks[radar_name] = radar
        return blocks


def cut_in_scenario(initial_gap_m: float, speed_m_s: float = 25.0, cut_in_s: float = 50.0,
                    cut_in_gap_m: float = 25.0, set_speed_m_s: float = 30.0,
                    t_end_s: float = 80.0) -> TrafficScenario:
    """Seed Fig. 8: the ego follows ``lead`` at ``speed_m_s`` and ``initial_gap_m``; at
    ``cut_in_s`` a car at the same speed (``cut_in``, until then in the next lane) enters
    the gap with its rear ``cut_in_gap_m`` ahead of the ego."""
    if not 0 < cut_in_gap_m < initial_gap_m - CAR_LENGTH_M:
        raise ParameterError(f"cut_in_scenario: cut_in_gap_m must lie in (0, initial_gap_m "
                             f"- {CAR_LENGTH_M:g}) so the car fits in the gap, got "
                             f"{cut_in_gap_m!r} with initial_gap_m = {initial_gap_m!r}")
    prof = constant_speed(speed_m_s)
    lead = TrafficVehicle("lead", initial_gap_m + CAR_LENGTH_M, profile=prof)
    # positioned so that at cut_in_s its rear is cut_in_gap_m ahead of the (steady) ego
    cut = TrafficVehicle("cut_in", cut_in_gap_m + CAR_LENGTH_M, profile=prof, in_lane=False,
                         lane_changes_s=(cut_in_s,))
    return TrafficScenario("cut_in", (lead, cut), speed_m_s, set_speed_m_s, t_end_s,
                           events=((cut_in_s, f"car cuts in {cut_in_gap_m:g} m ahead"),))


def cut_out_scenario(initial_gap_m: float, speed_m_s: float = 20.0, cut_out_s: float = 30.0,
                     far_gap_m: float | None = None, idm: IDMParameters | None = None,
                     near_idm: bool = True, set_speed_m_s: float = 30.0,
                     t_end_s: float = 90.0) -> TrafficScenario:
    """Seed Fig. 7: V1 (``far``, constant ``speed_m_s``) leads V2 (``near``); the ego
    follows V2 at ``initial_gap_m``.  At ``cut_out_s`` V2 leaves the lane and the radar
    target becomes V1, or none if V1 is beyond the radar's range.

    V2 is an IDM agent following V1 (``near_idm=True``; it starts at ``far_gap_m``, by
    default its equilibrium gap, so it keeps the speed only at that gap) or a scripted car
    at constant speed (``near_idm=False``, any ``far_gap_m``).
    """
    p = idm if idm is not None else IDMParameters()
    gap = idm_equilibrium_gap(speed_m_s, p) if far_gap_m is None else float(far_gap_m)
    near_x = initial_gap_m + CAR_LENGTH_M
    far = TrafficVehicle("far", near_x + gap + CAR_LENGTH_M, profile=constant_speed(speed_m_s))
    if near_idm:
        near = TrafficVehicle("near", near_x, idm=p, leader="far", v0_m_s=speed_m_s,
                              lane_changes_s=(cut_out_s,))
    else:
        near = TrafficVehicle("near", near_x, profile=constant_speed(speed_m_s),
                              lane_changes_s=(cut_out_s,))
    return TrafficScenario("cut_out", (far, near), speed_m_s, set_speed_m_s, t_end_s,
                           events=((cut_out_s, "near car leaves the lane"),))


def stop_and_go_scenario(initial_gap_m: float, cruise_m_s: float = 15.0,
                         idm: IDMParameters | None = None, set_speed_m_s: float = 25.0,
                         profile: PiecewiseSpeed | None = None) -> TrafficScenario:
    """Seed Fig. 6: a scripted ``head`` car stops completely and restarts
    (:func:`stop_and_go_profile`); an IDM agent (``lead``) follows it at its equilibrium gap
    and is the ego's target (the head car is hidden behind it)."""
    p = idm if idm is not None else IDMParameters()
    prof = profile if profile is not None else stop_and_go_profile(cruise_m_s)
    lead_x = initial_gap_m + CAR_LENGTH_M
    head_x = lead_x + idm_equilibrium_gap(cruise_m_s, p) + CAR_LENGTH_M
    head = TrafficVehicle("head", head_x, profile=prof)
    lead = TrafficVehicle("lead", lead_x, idm=p, leader="head", v0_m_s=cruise_m_s)
    t = prof.times
    t_end = float(t[-1]) + 10.0 if t.size > 1 else 60.0
    stops = [float(a) for a, va, vb in zip(t[:-1], prof.speeds[:-1], prof.speeds[1:])
             if va > 0 and vb == 0]
    return TrafficScenario("stop_and_go", (head, lead), cruise_m_s, set_speed_m_s, t_end,
                           events=tuple((s, "head car brakes to a stop") for s in stops))
