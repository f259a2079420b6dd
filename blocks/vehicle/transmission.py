r"""Automatic transmission: shift schedule (the TCU), gear set, final drive.

:class:`ShiftSchedule` is a sampled controller (period ``shift_period_s``, 40 ms by default:
a multiple of the seed's 8 ms step).  At each sample, with :math:`v` the vehicle speed,
:math:`\alpha` the throttle and :math:`g` the current gear,

.. math::

    g \leftarrow g + 1 \text{ if } v > v_{up,g}(\alpha), \qquad
    g \leftarrow g - 1 \text{ if } v < v_{down,g}(\alpha)

(one gear per sample, thresholds interpolated linearly over the throttle breakpoints
and held outside), and no shift within ``min_shift_interval_s`` of the previous one.
Every downshift line lies below its upshift line: after an upshift at :math:`v_{up,g}` the
speed must fall by the hysteresis :math:`v_{up,g} - v_{down,g+1}` before the gear comes
back, so the gear does not hunt.  The gear output is the discrete state: a decision at a
sample shows at the next one (a one-period TCU delay).  Throttle-dependent lines give
kick-down: flooring the throttle raises the downshift speeds.

:class:`AutomaticGearbox`, signal-flow causality as :class:`blocks.electric.Gearbox`:

.. math::

    \omega_{in} = i\,\omega_{out}, \qquad T_{out} = i\,T_{in}\,f(P_{in}),\qquad
    P_{in} = T_{in}\,\omega_{in}

with the efficiency factor :math:`f` of :class:`blocks.electric.Gearbox` (:math:`\eta`
motoring, :math:`1/\eta` back-driven, blended linearly over ``smoothing_power_w`` around
zero power).  With a shift time :math:`T_s > 0` the ratio is a state that follows the
selected gear's ratio as a first-order lag, :math:`\dot i = (i_g - i)\,3/T_s` (95 % in
:math:`T_s`); the converter's slip absorbs the speed change, so the shift is smooth and
continuous for the integrator.  :math:`T_s = 0`: the ratio jumps.

:class:`FinalDrive` is :class:`blocks.electric.Gearbox` with the car's final-drive ratio.

Limitations: no clutch-to-clutch shift dynamics (no torque phase/inertia phase, no
overlap), no neutral, park or reverse, no lock-up scheduling, gear-independent
efficiency, no engine-speed protection other than the shift lines (a downshift that
would over-rev the engine is not refused; the engine's fuel cut-off limits it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from blocks.electric.gearbox import Gearbox
from cosim.block import Block
from cosim.codegen.model import CContext, CModel, c_float
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE, refuse

from . import _cforms
from .params import _KMH, PASSENGER_CAR, TransmissionData

__all__ = ["AutomaticGearbox", "FinalDrive", "ShiftSchedule", "efficiency_factor"]


def efficiency_factor(p_in: float, eta: float, p_s: float) -> float:
    """:math:`f(P_{in})` of :class:`blocks.electric.Gearbox` (``p_s`` its smoothing power)."""
    if p_s == 0.0:
        return eta if p_in >= 0.0 else 1.0 / eta
    s = min(abs(p_in) / p_s, 1.0)
    return 1.0 - (1.0 - eta) * s if p_in >= 0.0 else 1.0 + (1.0 / eta - 1.0) * s


def _data(owner: str, params: Any) -> TransmissionData:
    p = PASSENGER_CAR.transmission if params is None else params
    if not isinstance(p, TransmissionData):
        raise ParameterError(f"{owner}: params must be a TransmissionData, got "
                             f"{type(p).__name__}")
    return p


class ShiftSchedule(Block):
    r"""Shift schedule with hysteresis (module docstring): speed and throttle in, gear out.

    Ports
    -----
    in   speed     scalar [m/s]  vehicle speed
    in   throttle  scalar [1]  0..1
    out  gear      scalar [1]  selected gear 1..n (dtype int); state only, sampled

    Parameters
    ----------
    name : str
    params : TransmissionData
        Lines, ``shift_period_s`` and ``min_shift_interval_s``; default: the car's.
    initial_gear : int
    """

    def __init__(self, name: str, params: TransmissionData | None = None, *,
                 initial_gear: int = 1) -> None:
        super().__init__(name)
        own = f"ShiftSchedule '{name}'"
        p = self.params = _data(own, params)
        self.n = p.n_gears
        if isinstance(initial_gear, bool) or not isinstance(initial_gear, (int, np.integer)) \
                or not 1 <= initial_gear <= self.n:
            raise ParameterError(f"{own}: initial_gear must be an int in 1..{self.n}, got "
                                 f"{initial_gear!r}")
        self._thr = list(p.shift_throttle)
        self._up = [[v * _KMH for v in row] for row in np.reshape(p.upshift_kmh,
                                                                   (self.n - 1, -1))]
        self._down = [[v * _KMH for v in row] for row in np.reshape(p.downshift_kmh,
                                                                     (self.n - 1, -1))]
        self.min_interval = p.min_shift_interval_s
        self.speed = self.declare_input("speed", unit="m/s")
        self.throttle = self.declare_input("throttle", unit="1")
        self.g = self.declare_discrete_state("gear", int(initial_gear))
        self.last = self.declare_discrete_state("last_shift_time", -math.inf)
        self.gear = self.declare_output("gear", lambda ctx: ctx.discrete(self.g), dtype=int,
                                        unit="1", depends_on=())
        self.declare_periodic_update(p.shift_period_s, self._update)

    def _line(self, rows: list, g: int, throttle: float) -> float:
        return float(np.interp(throttle, self._thr, rows[g]))

    def upshift_speed(self, gear: int, throttle: float) -> float:
        """Speed [m/s] above which ``gear`` shifts up (``inf`` in top gear)."""
        return math.inf if gear >= self.n else self._line(self._up, gear - 1, throttle)

    def downshift_speed(self, gear: int, throttle: float) -> float:
        """Speed [m/s] below which ``gear`` shifts down (``-inf`` in first gear)."""
        return -math.inf if gear <= 1 else self._line(self._down, gear - 2, throttle)

    def decide(self, gear: int, speed: float, throttle: float) -> int:
        """The gear after one sample (ignoring the minimum interval)."""
        a = min(max(throttle, 0.0), 1.0)
        if speed > self.upshift_speed(gear, a):
            return gear + 1
        if speed < self.downshift_speed(gear, a):
            return gear - 1
        return gear

    def _update(self, ctx: Any) -> None:
        if ctx.time - ctx.discrete(self.last) < self.min_interval - 1e-12:
            return
        g = ctx.discrete(self.g)
        new = self.decide(g, ctx.input(self.speed), ctx.input(self.throttle))
        if new != g:
            ctx.set_discrete(self.g, new)
            ctx.set_discrete(self.last, ctx.time)

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`_update` and :meth:`decide` (the lines by ``numpy.interp``); the
        gear and the last shift's time are the discrete states (doubles)."""
        _cforms.use(cg, "interp")
        m = len(self._thr)
        thr = cg.const(self._thr)
        up = cg.const([v for row in self._up for v in row]) if self.n > 1 else None
        dn = cg.const([v for row in self._down for v in row]) if self.n > 1 else None
        g, last = cg.xd(self.g), cg.xd(self.last)
        upd = (f"double tn = {cg.t};\n"
               f"if (!(tn - {last} < {c_float(self.min_interval)} - 1e-12)) {{\n"
               f"    double g = {g}, sp = {cg.u(self.speed)}, thr = {cg.u(self.throttle)};\n"
               "    double a, nw = g;\n    "
               + _cforms.clip("thr", "0.0", "1.0", "a").replace("\n", "\n    ") + "\n")
        if self.n > 1:
            upd += (f"    if (g < {self.n} && sp > cosim_veh_interp(a, {thr.ptr}, "
                    f"{up.base} + {up.offset} + ((int)g - 1) * {m}, {m})) nw = g + 1;\n"
                    f"    else if (g > 1 && sp < cosim_veh_interp(a, {thr.ptr}, "
                    f"{dn.base} + {dn.offset} + ((int)g - 2) * {m}, {m})) nw = g - 1;\n")
        upd += (f"    if (nw != g) {{\n        {g} = nw;\n        {last} = tn;\n    }}\n"
                "    (void)a;\n}")
        return CModel(outputs={"gear": f"{cg.y(self.gear)} = {g};"}, update=upd)


class AutomaticGearbox(Block):
    r"""Gear set of an automatic transmission (module docstring).

    Ports
    -----
    in   torque_in   scalar [N*m]  turbine torque
    in   speed_out   scalar [rad/s]  output shaft speed (final-drive input)
    in   gear        scalar [1]    selected gear 1..n (integer-valued float, or int)
    out  torque_out  scalar [N*m]  :math:`i T_{in} f`; reads torque_in, speed_out (and gear
                                    without a shift time)
    out  speed_in    scalar [rad/s]  :math:`i\,\omega_{out}`; reads speed_out (and gear
                                    without a shift time)
    out  ratio       scalar [1]    the effective ratio :math:`i`; state only with a shift
                                    time, else reads gear

    Parameters
    ----------
    name : str
    params : TransmissionData
        ``gear_ratios``, ``efficiency``, ``shift_time_s``; default: the car's.
    smoothing_power_w : float
        :math:`P_s` of the efficiency blend (0: sharp switch).
    initial_gear : int
        Gear whose ratio initialises the ratio state.

    Compiled (:meth:`c_model`): a gear input out of range fails the step as in Python
    (a ``StepError``), its message without the offending value.
    """

    argument_checks = {"smoothing_power_w": NON_NEGATIVE}

    def __init__(self, name: str, params: TransmissionData | None = None, *,
                 smoothing_power_w: float = 100.0, initial_gear: int = 1) -> None:
        super().__init__(name)
        own = f"AutomaticGearbox '{name}'"
        p = self.params = _data(own, params)
        if not 1 <= initial_gear <= p.n_gears:
            raise refuse(self, "initial_gear", initial_gear, f"a gear in 1..{p.n_gears}")
        self.ratios = [float(r) for r in p.gear_ratios]
        self.eta, self.p_s = p.efficiency, float(smoothing_power_w)
        self.torque_in = self.declare_input("torque_in", unit="N*m")
        self.speed_out = self.declare_input("speed_out", unit="rad/s")
        self.gear = self.declare_input("gear", unit="1")  # integer-valued; int outputs connect
        self.rate = 3.0 / p.shift_time_s if p.shift_time_s > 0 else None
        if self.rate is not None:
            self.r = self.declare_continuous_state("ratio", self.ratios[initial_gear - 1])
            deps_t: tuple = (self.torque_in, self.speed_out)
            deps_w: tuple = (self.speed_out,)
            deps_r: tuple = ()
        else:
            self.r = None
            deps_t = (self.torque_in, self.speed_out, self.gear)
            deps_w = (self.speed_out, self.gear)
            deps_r = (self.gear,)
        self.torque_out = self.declare_output("torque_out", self._torque, unit="N*m",
                                              depends_on=deps_t)
        self.speed_in = self.declare_output(
            "speed_in", lambda ctx: self._ratio(ctx) * ctx.input(self.speed_out), unit="rad/s",
            depends_on=deps_w)
        self.ratio = self.declare_output("ratio", self._ratio, unit="1", depends_on=deps_r)

    def gear_ratio(self, gear: Any) -> float:
        """The ratio of ``gear``; an error naming the block and port when out of range."""
        g = int(gear)
        if g != gear or not 1 <= g <= len(self.ratios):
            raise ValueError(f"AutomaticGearbox '{self.path}': input 'gear' = {gear!r} is not a "
                             f"gear 1..{len(self.ratios)}")
        return self.ratios[g - 1]

    def _ratio(self, ctx: Any) -> float:
        if self.r is not None:
            return ctx.state(self.r)
        return self.gear_ratio(ctx.input(self.gear))

    def output_torque(self, ratio: float, torque_in: float, speed_out: float) -> float:
        p_in = torque_in * ratio * speed_out
        return ratio * torque_in * efficiency_factor(p_in, self.eta, self.p_s)

    def _torque(self, ctx: Any) -> float:
        return self.output_torque(self._ratio(ctx), ctx.input(self.torque_in),
                                  ctx.input(self.speed_out))

    def derivatives(self, ctx: Any) -> float:
        return (self.gear_ratio(ctx.input(self.gear)) - ctx.state(self.r)) * self.rate

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`gear_ratio` (a gear out of range fails the step),
        :meth:`output_torque` and :meth:`derivatives`."""
        n = len(self.ratios)
        R = cg.const(self.ratios)
        gear = (f"double gr;\n{{\n    double g = {cg.u(self.gear)};\n"
                f"    if (!(g >= 1.0 && g <= {n}.0 && g == floor(g))) {{\n        "
                + cg.fail(f"AutomaticGearbox '{self.path}': input 'gear' is not a gear "
                          f"1..{n}")
                + f"\n        gr = NAN;\n    }} else {{\n        gr = {R.base}[{R.offset} + "
                "(int)g - 1];\n    }\n}\n")
        ratio = (f"double r = {cg.x(self.r)};\n" if self.r is not None
                 else gear + "double r = gr;\n")
        wo = cg.u(self.speed_out)
        torque = (ratio + f"double ti = {cg.u(self.torque_in)}, p = ti * r * {wo}, f;\n"
                  + _cforms.efficiency_factor("p", self.eta, self.p_s, "f")
                  + f"\n{cg.y(self.torque_out)} = r * ti * f;")
        cm = CModel(outputs=_cforms.scoped({"torque_out": torque,
                             "speed_in": ratio + f"{cg.y(self.speed_in)} = r * {wo};",
                             "ratio": ratio + f"{cg.y(self.ratio)} = r;"}))
        if self.r is not None:
            cm.derivatives = gear + (f"{cg.dx(self.r)} = (gr - {cg.x(self.r)}) * "
                                     f"{c_float(self.rate)};")
        return cm


class FinalDrive(Gearbox):
    r""":class:`blocks.electric.Gearbox` with the final-drive data of a
    :class:`TransmissionData` (ratio :math:`i_{fd}`, efficiency; equations: the gearbox's).

    .. math:: \omega_{in} = i_{fd}\,\omega_{out}

    Ports
    -----
    in   torque_in   scalar [N*m]    torque from the gearbox output shaft
    in   speed_out   scalar [rad/s]  wheel speed
    out  torque_out  scalar [N*m]    torque at the wheels; reads torque_in, speed_out
    out  speed_in    scalar [rad/s]  :math:`i_{fd}\,\omega_{out}`; reads speed_out
    out  power_loss  scalar [W]      reads both

    Parameters
    ----------
    params : TransmissionData, optional
        Its ``final_drive_ratio`` and ``final_drive_efficiency`` (default: the passenger
        car's).
    smoothing_power_w : float
        :math:`P_s` [W] of the efficiency switch (as :class:`blocks.electric.Gearbox`).
    """

    def __init__(self, name: str, params: TransmissionData | None = None, *,
                 smoothing_power_w: float = 100.0) -> None:
        p = _data(f"FinalDrive '{name}'", params)
        super().__init__(name, ratio=p.final_drive_ratio, efficiency=p.final_drive_efficiency,
                         smoothing_power_w=smoothing_power_w)
        self.params = p

    def c_model(self, cg: CContext) -> CModel:
        """C of :class:`blocks.electric.Gearbox`'s ``output_torque``, ``speed_in`` and
        ``_loss`` (ratio, efficiency and smoothing power as constants)."""
        r, wo = c_float(self.ratio), cg.u(self.speed_out)
        calc = (f"double ti = {cg.u(self.torque_in)}, w = {wo}, p = ti * {r} * w, f, T;\n"
                + _cforms.efficiency_factor("p", self.eta, self.p_s, "f")
                + f"\nT = {r} * ti * f;\n")
        return CModel(outputs=_cforms.scoped({
            "torque_out": calc + f"{cg.y(self.torque_out)} = T;",
            "speed_in": f"{cg.y(self.speed_in)} = {r} * {wo};",
            "power_loss": calc + f"{cg.y(self.power_loss)} = p - T * w;"}))
