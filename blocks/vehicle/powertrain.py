r"""Combustion-engine powertrain: engine map with crank inertia, and the torque converter.

Engine (:class:`Engine`), state :math:`\omega_e`:

.. math::

    J_e\,\dot\omega_e = T_e(\alpha_{eff}, \omega_e) - T_{load}, \qquad
    \alpha_{eff} = c(\omega_e)\,\max\!\big(\alpha,\ \mathrm{clip}(k_i(\omega_{idle} -
    \omega_e), 0, 1)\big)

with :math:`T_e` the map (:class:`EngineMap`, bilinear in a :class:`blocks.tables.Table2D`
over throttle and speed, end values held outside), a proportional idle governor of gain
:math:`k_i` and the fuel cut-off :math:`c(\omega)` falling linearly from 1 to 0 over
``cutoff_ramp_rpm`` below ``cutoff_rpm``.  :math:`J_e` includes the converter's pump.
The governor is proportional, so idle droops below :math:`\omega_{idle}` under load (about
110 rpm with the default gain at the converter's stall load: 690 rpm); its loop gain
:math:`k_i\,\partial T/\partial\alpha / J_e` (about 15 1/s near idle) must stay below
:math:`0.55/h` for AB3.

Torque converter (:class:`TorqueConverter`), the standard quasi-static formulation
(Kotwicki 1982; Hrovat & Tobler 1985), speed ratio :math:`\nu = \omega_t/\omega_p`:

.. math::

    T_p = \left(\frac{\omega_p}{K(\nu)}\right)^2, \qquad T_t = TR(\nu)\,T_p
    \qquad (0 \le \nu \le 1)

:math:`K` the capacity factor and :math:`TR` the torque ratio (tables over
:math:`\nu`).  :math:`1/K^2` is interpolated linearly, so :math:`K = \infty` at
:math:`\nu = 1` (no torque transmitted there) is allowed.  Overrun
(:math:`\omega_t > \omega_p`, coasting: the wheels drive the engine) is treated as the
converter driven backwards as a fluid coupling, :math:`T_t = T_p =
-(\omega_t/K(\omega_p/\omega_t))^2` (torque ratio 1); a common simplification, since
the reverse maps of real converters are rarely published.  Both torques are continuous
at :math:`\nu = 1` (zero there).  A negative turbine speed (rolling back in a forward
gear) is read as :math:`\nu = 0` (stall).  The pump speed is taken as
:math:`\ge 0`.

Limitations: no lock-up clutch (the converter always slips: about 4 % at cruise), no
fluid inertia or transient (quasi-static maps), the overrun simplification above; the
engine has no stall or start (the map is clipped below its lowest speed, and the speed
is kept >= 0), no fuel or emissions, no turbocharger lag, no torque delay of the intake.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import Any

import numpy as np

from blocks.tables import Table1D, Table2D
from cosim.block import Block
from cosim.codegen.model import CContext, CModel, c_float
from cosim.errors import ParameterError

from . import _cforms
from .params import PASSENGER_CAR, EngineData, TorqueConverterData

__all__ = ["Engine", "EngineMap", "TorqueConverter"]

RPM = math.pi / 30.0  # rad/s per rpm
NU_MAX = 10.0  # the speed_ratio output is capped here (overrun with the engine stopped)


class EngineMap:
    """Engine torque :math:`T(\\alpha, \\omega)` from :class:`EngineData`, and its inverse.

    Bilinear in throttle and speed (a :class:`blocks.tables.Table2D` used as a lookup),
    the end values held outside the table.
    """

    def __init__(self, data: EngineData | None = None) -> None:
        d = PASSENGER_CAR.engine if data is None else data
        if not isinstance(d, EngineData):
            raise ParameterError(f"EngineMap: data must be an EngineData, got "
                                 f"{type(d).__name__}")
        self.data = d
        self.speeds = np.asarray(d.speed_rpm, dtype=float) * RPM
        self.throttles = np.asarray(d.throttle, dtype=float)
        self.table = Table2D("engine_map", d.throttle, self.speeds, d.torque_nm,
                             extrapolation="clip", input_units=("1", "rad/s"),
                             unit="N*m")
        self._thr = list(d.throttle)

    def torque(self, throttle: float, speed: float) -> float:
        """Map torque [N m] at ``throttle`` [0..1] and engine speed [rad/s]."""
        return self.table.lookup(throttle, speed)

    def full_load(self, speed: float) -> float:
        return self.table.lookup(self._thr[-1], speed)

    def closed_throttle(self, speed: float) -> float:
        """Torque at zero throttle (the engine brake, negative)."""
        return self.table.lookup(self._thr[0], speed)

    def throttle_for_torque(self, torque: float, speed: float) -> float:
        """The smallest throttle giving ``torque`` at ``speed`` (clipped to the map's range).

        The inverse map of the ACC seed (Kim et al. eq. 6).  Exact for the bilinear map: at
        fixed speed the torque is piecewise linear and non-decreasing in throttle.
        """
        col = [self.table.lookup(a, speed) for a in self._thr]
        if torque <= col[0]:
            return self._thr[0]
        if torque > col[-1]:
            return self._thr[-1]
        j = bisect_left(col, torque)  # col[j - 1] < torque <= col[j]
        lo, hi = col[j - 1], col[j]
        return self._thr[j - 1] + (torque - lo) / (hi - lo) * (self._thr[j] - self._thr[j - 1])


class Engine(Block):
    r"""Engine: throttle and load torque in, speed and torque out (module docstring).

    Ports
    -----
    in   throttle     scalar [1]    driver/controller throttle, 0..1 (clipped)
    in   load_torque  scalar [N*m]  torque taken off the crank (converter pump)
    out  speed        scalar [rad/s]  :math:`\omega_e`; state only
    out  torque       scalar [N*m]  map torque :math:`T_e` at the effective throttle;
                                     reads throttle
    out  throttle_effective  scalar [1]  :math:`\alpha_{eff}`; reads throttle

    Parameters
    ----------
    name : str
    params : EngineData
        Default: the passenger car's.
    speed0_rad_s : float, optional
        Initial speed (default: idle).
    """

    def __init__(self, name: str, params: EngineData | None = None, *,
                 speed0_rad_s: float | None = None) -> None:
        super().__init__(name)
        self.map = EngineMap(params)
        d = self.params = self.map.data
        self.J = d.inertia_kgm2
        self.w_idle = d.idle_rpm * RPM
        self.k_idle = d.idle_gain_per_rad_s
        self.w_cut = d.cutoff_rpm * RPM
        self.w_ramp = d.cutoff_ramp_rpm * RPM
        w0 = self.w_idle if speed0_rad_s is None else float(speed0_rad_s)
        if not (w0 >= 0 and math.isfinite(w0)):
            raise ParameterError(f"Engine '{name}': speed0_rad_s must be finite and >= 0, "
                                 f"got {speed0_rad_s!r}")
        self.throttle = self.declare_input("throttle", unit="1")
        self.load_torque = self.declare_input("load_torque", unit="N*m")
        self.w = self.declare_continuous_state("speed", w0)
        self.speed = self.declare_output("speed", lambda ctx: ctx.state(self.w), unit="rad/s",
                                         depends_on=())
        self.torque, self.throttle_effective = self.declare_outputs(
            [("torque", "N*m"), ("throttle_effective", "1")], self._torque,
            depends_on=(self.throttle,))

    def effective_throttle(self, throttle: float, speed: float) -> float:
        """:math:`\\alpha_{eff}`: idle governor and fuel cut-off applied."""
        a = min(max(throttle, 0.0), 1.0)
        a = max(a, min(max(self.k_idle * (self.w_idle - speed), 0.0), 1.0))
        cut = min(max((self.w_cut - speed) / self.w_ramp, 0.0), 1.0)
        return a * cut

    def _torque(self, ctx: Any) -> tuple[float, float]:
        w = ctx.state(self.w)
        a = self.effective_throttle(ctx.input(self.throttle), w)
        return self.map.torque(a, w), a

    def derivatives(self, ctx: Any) -> float:
        w = ctx.state(self.w)
        t = self.map.torque(self.effective_throttle(ctx.input(self.throttle), w), w)
        dw = (t - ctx.input(self.load_torque)) / self.J
        return 0.0 if (w <= 0.0 and dw < 0.0) else dw

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`effective_throttle`, the map's clipped bilinear lookup
        (``blocks.tables._bilinear_clip``) and :meth:`derivatives`; the map and the data
        are constants of the C."""
        _cforms.use(cg, "bilinear")
        tab = self.map.table
        X, Y, Z = cg.const(tab.x), cg.const(tab.y), cg.const(tab.z)
        w = cg.x(self.w)
        torque = (
            f"double w = {w}, thr = {cg.u(self.throttle)}, a, g, cut, T;\n"
            + _cforms.clip("thr", "0.0", "1.0", "a") + "\n"
            + f"g = {c_float(self.k_idle)} * ({c_float(self.w_idle)} - w);\n"
            + _cforms.clip("g", "0.0", "1.0", "g") + "\n"
            + "a = (g > a) ? g : a;\n"
            + f"cut = ({c_float(self.w_cut)} - w) / {c_float(self.w_ramp)};\n"
            + _cforms.clip("cut", "0.0", "1.0", "cut") + "\n"
            + "a = a * cut;\n"
            + f"T = cosim_veh_bilinear({X.ptr}, {tab.x.size}, {Y.ptr}, {tab.y.size}, "
            f"{Z.ptr}, a, w);\n")
        return CModel(
            outputs=_cforms.scoped({"speed": f"{cg.y(self.speed)} = {w};",
                     "torque": torque + f"{cg.y(self.torque)} = T;",
                     "throttle_effective": torque + f"{cg.y(self.throttle_effective)} = a;"}),
            derivatives=torque + f"double dw = (T - {cg.u(self.load_torque)}) / "
            f"{c_float(self.J)};\n{cg.dx(self.w)} = (w <= 0.0 && dw < 0.0) ? 0.0 : dw;")


class TorqueConverter(Block):
    r"""Torque converter: pump and turbine speeds in, their torques out (module docstring).

    Ports
    -----
    in   pump_speed     scalar [rad/s]  :math:`\omega_p` (the engine)
    in   turbine_speed  scalar [rad/s]  :math:`\omega_t` (the gearbox input)
    out  pump_torque    scalar [N*m]  load on the engine :math:`T_p`; reads both
    out  turbine_torque  scalar [N*m]  torque driving the gearbox :math:`T_t`; reads both
    out  speed_ratio    scalar [1]    :math:`\nu` (overrun: > 1, capped at 10); reads both

    Parameters
    ----------
    name : str
    params : TorqueConverterData
        Default: the passenger car's.
    """

    def __init__(self, name: str, params: TorqueConverterData | None = None) -> None:
        super().__init__(name)
        d = PASSENGER_CAR.torque_converter if params is None else params
        if not isinstance(d, TorqueConverterData):
            raise ParameterError(f"TorqueConverter '{name}': params must be a "
                                 f"TorqueConverterData, got {type(d).__name__}")
        self.params = d
        k_si = np.asarray(d.capacity_rpm_per_sqrt_nm, dtype=float) * RPM
        with np.errstate(divide="ignore"):
            c = np.where(np.isinf(k_si), 0.0, 1.0 / k_si ** 2)
        self.coefficient = Table1D("capacity", d.speed_ratio, c)  # 1/K^2 [N m s^2/rad^2]
        self.ratio = Table1D("torque_ratio", d.speed_ratio, d.torque_ratio)
        self.pump_speed = self.declare_input("pump_speed", unit="rad/s")
        self.turbine_speed = self.declare_input("turbine_speed", unit="rad/s")
        self.pump_torque, self.turbine_torque, self.speed_ratio = self.declare_outputs(
            [("pump_torque", "N*m"), ("turbine_torque", "N*m"), ("speed_ratio", "1")],
            lambda ctx: self.torques(ctx.input(self.pump_speed), ctx.input(self.turbine_speed)))

    def capacity_factor(self, nu: float) -> float:
        """:math:`K(\\nu)` [rad/s/sqrt(N m)] as interpolated (via :math:`1/K^2`)."""
        c = self.coefficient.lookup(nu)
        return math.inf if c <= 0 else 1.0 / math.sqrt(c)

    def torques(self, w_p: float, w_t: float) -> tuple[float, float, float]:
        """``(T_p, T_t, nu)`` for pump and turbine speeds."""
        w_p = max(w_p, 0.0)
        if w_t <= w_p:
            if w_p == 0.0:
                return 0.0, 0.0, 0.0
            nu = max(w_t, 0.0) / w_p
            t_p = self.coefficient.lookup(nu) * w_p * w_p
            return t_p, self.ratio.lookup(nu) * t_p, nu
        # overrun: the turbine drives the pump, fluid-coupling mode
        t = -self.coefficient.lookup(w_p / w_t) * w_t * w_t
        return t, t, min(w_t / w_p, NU_MAX) if w_p > 0 else NU_MAX

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`torques` with the clipped linear tables
        (``blocks.tables._linear_clip_1d``) as constants."""
        _cforms.use(cg, "lin1d")
        n = self.coefficient.x.size
        X = cg.const(self.coefficient.x)
        C, R = cg.const(self.coefficient.y), cg.const(self.ratio.y)
        nu_max = c_float(NU_MAX)
        calc = (
            f"double wp = {cg.u(self.pump_speed)}, wt = {cg.u(self.turbine_speed)}, "
            "tp, tt, nu;\n"
            "wp = (0.0 > wp) ? 0.0 : wp;\n"
            "if (wt <= wp) {\n"
            "    if (wp == 0.0) {\n        tp = 0.0; tt = 0.0; nu = 0.0;\n    } else {\n"
            "        nu = ((0.0 > wt) ? 0.0 : wt) / wp;\n"
            f"        tp = cosim_veh_lin1d({X.ptr}, {C.ptr}, {n}, nu) * wp * wp;\n"
            f"        tt = cosim_veh_lin1d({X.ptr}, {R.ptr}, {n}, nu) * tp;\n    }}\n"
            "} else {\n"
            f"    tp = -cosim_veh_lin1d({X.ptr}, {C.ptr}, {n}, wp / wt) * wt * wt;\n"
            "    tt = tp;\n"
            f"    if (wp > 0) {{\n        nu = wt / wp;\n        nu = ({nu_max} < nu) ? "
            f"{nu_max} : nu;\n    }} else {{\n        nu = {nu_max};\n    }}\n"
            "}\n(void)tp; (void)tt; (void)nu;\n")
        return CModel(outputs=_cforms.scoped({
            "pump_torque": calc + f"{cg.y(self.pump_torque)} = tp;",
            "turbine_torque": calc + f"{cg.y(self.turbine_torque)} = tt;",
            "speed_ratio": calc + f"{cg.y(self.speed_ratio)} = nu;"}))
