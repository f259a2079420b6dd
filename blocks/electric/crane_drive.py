r"""The seed's crane drive: a torque-limited motor behind a first-order P speed controller.

From the gantry-crane training simulator (seed Paper V, eqs. 21-23; the thesis
environment's "motors in which the maximum torque is limited by spline-curves"
are the same structure):

.. math::

    \tau_m \dot T_{ref} &= K_m (\omega_{ref} - \omega_m) - T_{ref} \\
    T_m &= \mathrm{sign}(T_{ref})\,\min\big(|T_{ref}|,\ T_{max}(|\omega_m|)\big) \\
    F_m &= n\left(\frac{T_m}{i_{tot}}\,\eta_m - c_m\,\omega_m\right)

The seed prints :math:`T_m = \min(T_m(\omega_m), T_{ref})`; as the seed notes
say, the minimum must act on magnitudes with the sign of the reference (for
braking), which is the form above: the curve bounds the torque in all four
quadrants, symmetrically in speed.  :math:`i_{tot}` is the transmission from
motor rotation to travel, including the wheel or drum radius, in metres of
travel per radian (:math:`v = i_{tot}\,\omega_m`), so that :math:`F_m` is a
force; :math:`n` motors are mechanically synchronised (4 per crane drive in the
seed) and share the load equally.  As printed in the seed, :math:`\eta_m`
multiplies in both power-flow directions and :math:`c_m` damps the motor speed;
:class:`~blocks.electric.gearbox.Gearbox` has the direction-aware efficiency.

The seed gives no numerical values (no curve, no :math:`K_m`, :math:`\tau_m`).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.errors import ParameterError
from cosim.params import COUNT, EFFICIENCY, NON_NEGATIVE, POSITIVE, Array, refuse

_INTERP = ("linear", "pchip", "spline")

#: C of ``bisect.bisect_right`` on a double array (a C helper of the C forms)
BISECT_RIGHT_C = r"""/* bisect.bisect_right(a[0:n], v) */
static int cosim_bisect_right(const double *a, int n, double v) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v < a[mid]) hi = mid; else lo = mid + 1;
    }
    return lo;
}"""


class TorqueSpeedCurve:
    r"""Maximum torque :math:`T_{max}(|\omega|)` through points, for :class:`CraneDrive`.

    ``"linear"`` interpolates linearly, ``"pchip"`` with the monotone cubic
    Hermite spline (no overshoot between points: the usual choice for a
    "spline curve" that must stay a limit), ``"spline"`` with a not-a-knot
    cubic spline (:class:`scipy.interpolate.CubicSpline`; may overshoot).
    Outside the breakpoints the end values are held; the result is never
    negative.  In C (:meth:`c_code`) the splines are evaluated as SciPy's ``PPoly``
    evaluates them (bit for bit with SciPy 1.17; a SciPy that changed its evaluation order
    would differ in the last bits).
    """

    def __init__(self, speed_rad_s: Any, torque_nm: Any, interpolation: str = "linear",
                 owner: str = "TorqueSpeedCurve") -> None:
        if interpolation not in _INTERP:
            raise ParameterError(f"{owner}: interpolation must be one of "
                                 f"{', '.join(map(repr, _INTERP))}, got {interpolation!r}")
        try:
            x = np.asarray(speed_rad_s, dtype=float)
            y = np.asarray(torque_nm, dtype=float)
        except (TypeError, ValueError):
            raise ParameterError(f"{owner}: the curve must be numbers") from None
        if x.ndim != 1 or x.shape != y.shape or x.size < 2:
            raise ParameterError(f"{owner}: curve speeds and torques must be 1-D of the same "
                                 f"length >= 2, got shapes {x.shape} and {y.shape}")
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
            raise ParameterError(f"{owner}: the curve has non-finite values")
        if x[0] < 0 or np.any(np.diff(x) <= 0):
            raise ParameterError(f"{owner}: curve speeds must be >= 0 and strictly increasing "
                                 "(the curve is applied to |speed|)")
        if np.any(y < 0):
            raise ParameterError(f"{owner}: curve torques are magnitudes and must be >= 0")
        self.x, self.y, self.interpolation = x, y, interpolation
        self._xl, self._yl = x.tolist(), y.tolist()
        self._spline = None
        if interpolation != "linear":
            from scipy.interpolate import CubicSpline, PchipInterpolator
            self._spline = (PchipInterpolator(x, y) if interpolation == "pchip"
                            else CubicSpline(x, y))

    def __call__(self, speed: float) -> float:
        w = min(max(abs(speed), self._xl[0]), self._xl[-1])
        if self._spline is not None:
            return max(float(self._spline(w)), 0.0)
        xl, yl = self._xl, self._yl
        i = min(bisect_right(xl, w) - 1, len(xl) - 2)
        return yl[i] + (w - xl[i]) / (xl[i + 1] - xl[i]) * (yl[i + 1] - yl[i])

    def c_code(self, cg: Any, speed: str, out: str) -> str:
        """C statements setting ``out`` to the curve at the C expression ``speed``; mirrors
        :meth:`__call__` (the splines as SciPy's ``PPoly`` evaluates them: interval of
        ``bisect_right``, then ``c3 + c2 s + c1 s^2 + c0 s^3`` added left to right)."""
        cg.helper("cosim_bisect_right", BISECT_RIGHT_C)
        n = len(self._xl)
        X = cg.const(self.x)
        code = [f"const double *X = {X.ptr};", "int i;",
                f"double w = fabs({speed}), r;",
                "w = (X[0] > w) ? X[0] : w;", f"w = (X[{n - 1}] < w) ? X[{n - 1}] : w;",
                f"i = cosim_bisect_right(X, {n}, w) - 1;",
                f"if ({n - 2} < i) i = {n - 2};"]
        if self._spline is None:
            Y = cg.const(self.y)
            code += [f"const double *Y = {Y.ptr};",
                     "r = Y[i] + (w - X[i]) / (X[i + 1] - X[i]) * (Y[i + 1] - Y[i]);"]
        else:
            c = np.asarray(self._spline.c, dtype=float)  # (order, intervals), highest first
            k = c.shape[0]
            C = cg.const(c.T.copy())  # row i: the coefficients of interval i
            code += [f"const double *c = {C.ptr} + {k} * i;",
                     "double ds = w - X[i], z = 1.0;", "r = 0.0;"]
            for kp in range(k):
                code.append(f"r = r + c[{k - kp - 1}] * z;")
                if kp < k - 1:
                    code.append("z *= ds;")
            code.append("r = (0.0 > r) ? 0.0 : r;")
        return "{\n    " + "\n    ".join(code) + f"\n    {out} = r;\n}}"


class CraneDrive(Block):
    r"""Crane drive motor (seed Paper V): torque-speed limit and first-order speed controller.

    Equations in the module docstring.  The controller state :math:`T_{ref}`
    is not clamped by the curve (a first-order lag cannot wind up: it stays
    within :math:`K_m` times the largest speed error).  Unsaturated, with a
    rotor inertia :math:`J` (and no damping) the speed loop is
    :math:`\omega/\omega_{ref} = K_m / (J\tau_m s^2 + J s + K_m)`, a time
    constant of about :math:`J/K_m` for :math:`\tau_m \ll J/K_m`.

    Ports
    -----
    in   speed_ref     scalar [rad/s]  motor speed reference :math:`\omega_{ref}`
    in   speed         scalar [rad/s]  motor speed :math:`\omega_m`
    out  torque        scalar [N*m]  limited motor torque :math:`T_m`; reads speed
    out  torque_ref    scalar [N*m]  controller output :math:`T_{ref}`; state only
    out  torque_limit  scalar [N*m]  :math:`T_{max}(|\omega_m|)`; reads speed
    out  force         scalar [N]    :math:`F_m` (only with ``travel_per_rad_m``); reads speed

    Parameters
    ----------
    gain_nms_per_rad : float
        :math:`K_m` [N m s/rad].
    time_constant_s : float
        :math:`\tau_m` [s].
    curve_speed_rad_s, curve_torque_nm : array_like
        The torque-speed curve (magnitudes), see :class:`TorqueSpeedCurve`.
    interpolation : {"linear", "pchip", "spline"}
    travel_per_rad_m : float, optional
        :math:`i_{tot}` [m/rad]; enables the ``force`` output.
    efficiency : float
        :math:`\eta_m` in (0, 1].
    damping_ns_per_rad : float
        :math:`c_m` [N s/rad].
    motors : int
        :math:`n`, synchronised motors driving the same axis.
    torque_ref0_nm : float
        Initial :math:`T_{ref}`.
    """

    argument_checks = {"gain_nms_per_rad": POSITIVE, "time_constant_s": POSITIVE,
                       "efficiency": EFFICIENCY, "damping_ns_per_rad": NON_NEGATIVE,
                       "motors": COUNT, "travel_per_rad_m": POSITIVE,
                       "curve_speed_rad_s": Array(ndim=1), "curve_torque_nm": Array(ndim=1)}

    def __init__(self, name: str, *, gain_nms_per_rad: float, time_constant_s: float,
                 curve_speed_rad_s: Any, curve_torque_nm: Any, interpolation: str = "linear",
                 travel_per_rad_m: float | None = None, efficiency: float = 1.0,
                 damping_ns_per_rad: float = 0.0, motors: int = 1,
                 torque_ref0_nm: float = 0.0) -> None:
        super().__init__(name)
        own = f"CraneDrive '{name}'"
        self.K = float(gain_nms_per_rad)
        self.tau = float(time_constant_s)
        n_speeds = np.size(curve_speed_rad_s)
        if np.shape(curve_torque_nm) != (n_speeds,):
            raise refuse(self, "curve_torque_nm", curve_torque_nm,
                         f"{n_speeds} torques, one per speed of curve_speed_rad_s")
        self.curve = TorqueSpeedCurve(curve_speed_rad_s, curve_torque_nm, interpolation, own)
        self.eta, self.c, self.n = float(efficiency), float(damping_ns_per_rad), motors
        self.speed_ref = self.declare_input("speed_ref", unit="rad/s")
        self.speed = self.declare_input("speed", unit="rad/s")
        self.x = self.declare_continuous_state("torque_ref", float(torque_ref0_nm))
        self.torque = self.declare_output("torque", self._torque, unit="N*m",
                                          depends_on=(self.speed,))
        self.torque_ref = self.declare_output("torque_ref", lambda ctx: ctx.state(self.x),
                                              unit="N*m", depends_on=())
        self.torque_limit = self.declare_output(
            "torque_limit", lambda ctx: self.curve(ctx.input(self.speed)), unit="N*m",
            depends_on=(self.speed,))
        self.i_tot = None
        if travel_per_rad_m is not None:
            self.i_tot = float(travel_per_rad_m)
            self.force = self.declare_output("force", self._force, unit="N",
                                             depends_on=(self.speed,))

    def limited_torque(self, torque_ref: float, speed: float) -> float:
        """:math:`T_m` for a controller output and a motor speed."""
        t_max = self.curve(speed)
        return min(max(torque_ref, -t_max), t_max)

    def _torque(self, ctx: Any) -> float:
        return self.limited_torque(ctx.state(self.x), ctx.input(self.speed))

    def _force(self, ctx: Any) -> float:
        w = ctx.input(self.speed)
        t = self.limited_torque(ctx.state(self.x), w)
        return self.n * (t / self.i_tot * self.eta - self.c * w)

    def derivatives(self, ctx: Any) -> float:
        e = ctx.input(self.speed_ref) - ctx.input(self.speed)
        return (self.K * e - ctx.state(self.x)) / self.tau

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`limited_torque`, :meth:`_force` and :meth:`derivatives`
        (the curve through :meth:`TorqueSpeedCurve.c_code`)."""
        w, xr, f = cg.u(self.speed), cg.x(self.x), c_float

        def limited(out: str) -> str:
            return ("double tm, v;\n" + self.curve.c_code(cg, w, "tm") + "\n"
                    f"v = (-tm > {xr}) ? -tm : {xr};\n{out} = (tm < v) ? tm : v;")

        out = {"torque": "{\n" + limited(cg.y(self.torque)) + "\n}",
               "torque_ref": f"{cg.y(self.torque_ref)} = {xr};",
               "torque_limit": self.curve.c_code(cg, w, cg.y(self.torque_limit))}
        if self.i_tot is not None:
            out["force"] = ("{\ndouble tl;\n" + limited("tl") + f"\n{cg.y(self.force)} = "
                            f"{f(self.n)} * (tl / {f(self.i_tot)} * {f(self.eta)} - "
                            f"{f(self.c)} * {w});\n}}")
        der = (f"{cg.dx(self.x)} = ({f(self.K)} * ({cg.u(self.speed_ref)} - {w}) - {xr}) / "
               f"{f(self.tau)};")
        return CModel(outputs=out, derivatives=der)
