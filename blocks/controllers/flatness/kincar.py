r"""Kinematic car (bicycle model, rear-axle reference point): flat system, plant block and
the prolonged exact-linearizing law.

Model (python-control, ``examples/kincar-flatsys.py``; wheelbase :math:`b`, rear-axle
position :math:`(x, y)`, heading :math:`\theta`, inputs speed :math:`v` and steering
angle :math:`\delta`):

.. math::

    \dot x = v\cos\theta, \qquad \dot y = v\sin\theta, \qquad
    \dot\theta = \frac{v}{b}\tan\delta

Flat outputs :math:`(x, y)`, ``flaglen`` (3, 3).  Inverse map:

.. math::

    \theta = \operatorname{atan2}(\dot y, \dot x), \qquad
    v = \dot x\cos\theta + \dot y\sin\theta = \sqrt{\dot x^2 + \dot y^2}, \qquad
    \delta = \operatorname{atan2}\big(\ddot y\cos\theta - \ddot x\sin\theta,\; v^2/b\big)

singular where the speed :math:`\sqrt{\dot x^2 + \dot y^2}` vanishes (the heading is
undefined; :meth:`KinematicCarFlat.singularity`).  :meth:`KinematicCarFlat.forward`
fills the second derivatives with :math:`\dot v = 0` (as python-control's example).

Tracking (:class:`KinematicCarLaw`): prolong the speed, :math:`\zeta = v`,
:math:`\dot\zeta = a` (one controller state); then

.. math::

    \begin{pmatrix}\ddot x \\ \ddot y\end{pmatrix} =
    \begin{pmatrix}\cos\theta & -\zeta\sin\theta \\ \sin\theta & \zeta\cos\theta\end{pmatrix}
    \begin{pmatrix} a \\ \zeta\tan\delta / b\end{pmatrix}

(determinant :math:`\zeta`), so :math:`a = v_1\cos\theta + v_2\sin\theta`,
:math:`\tan\delta = b(-v_1\sin\theta + v_2\cos\theta)/\zeta^2` give
:math:`(\ddot x, \ddot y) = (v_1, v_2)`: relative degree (2, 2), singular at
:math:`\zeta = 0` (a :class:`~cosim.errors.StepError` names the time and speed).

The lane change of the reference (:data:`LANE_CHANGE`): :math:`x_0 = (0, -2, 0)`,
:math:`u_0 = (10, 0)`, :math:`x_f = (40, 2, 0)`, :math:`u_f = (10, 0)`, :math:`T = 4` s,
``PolyFamily(6)``; the boundary data fix :math:`x(t) = 10t` and
:math:`y(t) = -2 + 4(10\tau^3 - 15\tau^4 + 6\tau^5)`, :math:`\tau = t/4`
(:func:`lane_change_analytic`).

Ports: :class:`KinematicCar`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError, StepError
from cosim.params import POSITIVE, Array

from .system import FlatSystem
from .tracking import LinearizingLaw

DEFAULT_WHEELBASE_M = 3.0

#: python-control's lane change (``examples/kincar-flatsys.py``, approach 1).
LANE_CHANGE = {"x0": (0.0, -2.0, 0.0), "u0": (10.0, 0.0),
               "xf": (40.0, 2.0, 0.0), "uf": (10.0, 0.0), "T": 4.0}


def _check_wheelbase(who: str, b: Any) -> float:
    try:
        b_ = float(b)
    except (TypeError, ValueError):
        b_ = float("nan")
    if not (math.isfinite(b_) and b_ > 0):
        raise ParameterError(f"{who}: the wheelbase b must be a positive number [m], got {b!r}")
    return b_


def lane_change_analytic(t: Any, b: float = DEFAULT_WHEELBASE_M) -> dict:
    r"""Closed form of the lane change (:data:`LANE_CHANGE`) at times ``t`` [s].

    :math:`x = 10t`, :math:`y = -2 + 4(10\tau^3 - 15\tau^4 + 6\tau^5)`, then
    :math:`\theta = \arctan(\dot y/10)`, :math:`v = \sqrt{100 + \dot y^2}`,
    :math:`\delta = \arctan(10\,b\,\ddot y / v^3)`.  Returns arrays ``x, y, theta, v,
    delta, ydot, yddot``.
    """
    t = np.asarray(t, dtype=float)
    tau = t / 4.0
    y = -2.0 + 4.0 * (10 * tau ** 3 - 15 * tau ** 4 + 6 * tau ** 5)
    yd = 30 * tau ** 2 - 60 * tau ** 3 + 30 * tau ** 4
    ydd = (60 * tau - 180 * tau ** 2 + 120 * tau ** 3) / 4.0
    v = np.sqrt(100.0 + yd ** 2)
    return {"x": 10.0 * t, "y": y, "theta": np.arctan(yd / 10.0), "v": v,
            "delta": np.arctan(10.0 * b * ydd / v ** 3), "ydot": yd, "yddot": ydd}


class KinematicCarFlat(FlatSystem):
    """The kinematic car as a flat system; ``b`` is the wheelbase [m]."""

    states = ("x", "y", "theta")
    inputs = ("v", "delta")
    outputs = ("x", "y")
    flaglen = (3, 3)

    def __init__(self, b: float = DEFAULT_WHEELBASE_M) -> None:
        self.b = _check_wheelbase("KinematicCarFlat", b)

    def rhs(self, x, u):
        v, delta = float(u[0]), float(u[1])
        th = float(x[2])
        return np.array([v * math.cos(th), v * math.sin(th), v / self.b * math.tan(delta)])

    def forward(self, x, u):
        th = float(x[2])
        v, delta = float(u[0]), float(u[1])
        thdot = v / self.b * math.tan(delta)
        c, s = math.cos(th), math.sin(th)
        return [np.array([float(x[0]), v * c, -v * thdot * s]),
                np.array([float(x[1]), v * s, v * thdot * c])]

    def reverse(self, zflag):
        xd, yd = float(zflag[0][1]), float(zflag[1][1])
        xdd = float(zflag[0][2]) if len(zflag[0]) > 2 else 0.0
        ydd = float(zflag[1][2]) if len(zflag[1]) > 2 else 0.0
        th = math.atan2(yd, xd)
        c, s = math.cos(th), math.sin(th)
        v = xd * c + yd * s
        delta = math.atan2(ydd * c - xdd * s, v * v / self.b)
        return (np.array([float(zflag[0][0]), float(zflag[1][0]), th]),
                np.array([v, delta]))

    def singularity(self, zflag):
        """The speed :math:`\\sqrt{\\dot x^2 + \\dot y^2}` (zero: heading undefined).

        Never negative, so :func:`~.plan.check_plan` finds a stop only where it falls to
        ``singular_tol`` on its grid: give a positive minimum speed there.
        """
        return float(math.hypot(float(zflag[0][1]), float(zflag[1][1])))


class KinematicCarLaw(LinearizingLaw):
    """Exact linearization with the speed prolonged, :math:`\\zeta = v` (module docstring).

    ``min_speed`` [m/s]: below this :math:`|\\zeta|` the law raises
    :class:`~cosim.errors.StepError` (the decoupling matrix is singular at :math:`\\zeta = 0`).
    The initial :math:`\\zeta` (:meth:`extension_initial`) is the planned velocity projected
    on the car's initial heading.
    """

    states = KinematicCarFlat.states
    inputs = KinematicCarFlat.inputs
    relative_degree = (2, 2)
    n_extension = 1

    def __init__(self, b: float = DEFAULT_WHEELBASE_M, min_speed: float = 1e-6) -> None:
        self.system = KinematicCarFlat(b)
        self.min_speed = float(min_speed)

    def extension_initial(self, x, zflag):
        th = float(x[2])
        return np.array([float(zflag[0][1]) * math.cos(th) + float(zflag[1][1]) * math.sin(th)])

    def measured_flag(self, x, zeta):
        th, v = float(x[2]), float(zeta[0])
        return np.array([[float(x[0]), v * math.cos(th)], [float(x[1]), v * math.sin(th)]])

    def linearizing_input(self, x, zeta, v):
        th, z = float(x[2]), float(zeta[0])
        if not abs(z) > self.min_speed:
            raise StepError(
                f"KinematicCarLaw: the speed state zeta = {z:.3g} m/s is (nearly) zero: the "
                "linearizing law is singular at standstill (the heading cannot be steered); "
                "plan a trajectory that keeps moving, or start the tracker with a speed")
        c, s = math.cos(th), math.sin(th)
        a = c * v[0] + s * v[1]
        tan_delta = self.system.b * (-s * v[0] + c * v[1]) / (z * z)
        return np.array([z, math.atan(tan_delta)]), np.array([a])


class KinematicCar(Block):
    """The kinematic car (equations: module docstring), state :math:`(x, y, \\theta)`.

    Ports
    -----
    in   u  (2,) [m/s, rad]     :math:`(v, \\delta)`: speed and steering angle
    out  x  (3,) [m, m, rad]    :math:`(x, y, \\theta)`; state only

    Parameters
    ----------
    x0 : array_like (3,)
        Initial :math:`(x, y, \\theta)` [m, m, rad].
    b : float
        Wheelbase [m] (default :data:`DEFAULT_WHEELBASE_M`).
    """

    argument_checks = {"x0": Array(), "b": POSITIVE.means("the wheelbase [m]")}

    def __init__(self, name: str, x0: Any = (0.0, 0.0, 0.0),
                 b: float = DEFAULT_WHEELBASE_M) -> None:
        super().__init__(name)
        self.system = KinematicCarFlat(_check_wheelbase(f"KinematicCar '{name}'", b))
        x0 = np.asarray(x0, float).reshape(-1)
        if x0.size != 3 or not np.all(np.isfinite(x0)):
            raise ParameterError(f"KinematicCar '{name}': x0 = (x, y, theta), three finite "
                                 f"values, got {x0}")
        self.u = self.declare_input("u", shape=(2,))
        self.q = self.declare_continuous_state("q", x0)
        self.x = self.declare_output("x", lambda c: np.asarray(c.state(self.q)).copy(),
                                     shape=(3,), depends_on=())

    def derivatives(self, ctx):
        u = np.asarray(ctx.input(self.u), float)
        if abs(math.cos(u[1])) < 1e-12:
            raise StepError(f"KinematicCar '{self.name}' at t = {ctx.time:.6g} s: steering "
                            f"angle {u[1]:.6g} rad is +-pi/2 (tan undefined)")
        return self.system.rhs(ctx.state(self.q), u)
