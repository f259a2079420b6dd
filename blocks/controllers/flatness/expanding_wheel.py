r"""Vehicle with expanding wheels (Agrawal, Yan & Franch; seed 000 §1): kinematic model,
flat outputs, and the prolonged feedback-linearizing tracking law.

Planar model: rear and front wheels of radii :math:`r_1, r_2` (centre height = radius),
spoke angles :math:`\theta_1, \theta_2`, joined by a rod of length :math:`l` at angle
:math:`\alpha` with :math:`\sin\alpha = (r_1 - r_2)/l`.  Inputs
:math:`u = (\dot r_1, \dot r_2, \dot\theta_1)`.  Model (A), seed eq. (13):

.. math::

    \dot r_1 = u_1, \quad \dot r_2 = u_2, \quad \dot\theta_1 = u_3, \quad
    \dot\theta_2 = \frac{\tan\alpha}{r_2}(u_2 - u_1) + \frac{r_1}{r_2} u_3 \qquad (12)

Model (B), eq. (14), carries :math:`\alpha` as a state with
:math:`\dot\alpha = (u_1 - u_2)/(l\cos\alpha)` (11) instead of the constraint (9).

Flat outputs (24)-(33): :math:`z_1 = r_1`, :math:`z_2 = r_2`,
:math:`z_3 = (r_1/r_2)\theta_1 - \theta_2`, with

.. math::

    \dot z_3 &= \frac{\tan\alpha}{r_2}(\dot r_1 - \dot r_2)
               + \Big(\frac{\dot r_1}{r_2} - \frac{r_1 \dot r_2}{r_2^2}\Big)\theta_1 \qquad (28)\\
    \theta_1 &= \Theta(z, \dot z) = \frac{z_2\,(z_2 \dot z_3 - \tan\alpha\,(\dot z_1 - \dot z_2))}
                {z_2 \dot z_1 - z_1 \dot z_2}, \quad
    \tan\alpha = \frac{z_1 - z_2}{\sqrt{l^2 - (z_1 - z_2)^2}} \qquad (30)\\
    \theta_2 &= (z_1/z_2)\,\theta_1 - z_3 \qquad (31)

The inverse map is singular where :math:`D = z_2\dot z_1 - z_1\dot z_2 = 0`
(:meth:`ExpandingWheelVehicle.singularity`), and where :math:`z_2 = 0` or
:math:`|z_1 - z_2| \ge l`.

Tracking (34)-(44): prolong :math:`\zeta_1 = u_1, \zeta_2 = u_2` (controller states,
:math:`\dot\zeta_{1,2} = v_{1,2}`), then :math:`\ddot z_{1,2} = v_{1,2}` and
:math:`u_3 = \gamma_1 v_1 + \gamma_2 v_2 + \gamma_3 v_3 + \gamma_4` gives
:math:`\ddot z_3 = v_3` with :math:`\gamma_1 = \partial\Theta/\partial\dot z_1 =
-z_2(\tan\alpha + \Theta)/D`, :math:`\gamma_2 = (z_2\tan\alpha + z_1\Theta)/D`,
:math:`\gamma_3 = z_2^2/D`, :math:`\gamma_4 = \sum_i (\partial\Theta/\partial z_i)\dot z_i`
(:class:`ExpandingWheelLaw`, used by :class:`~.tracking.FlatTracker`).

The seed's boundary data (:data:`SEED_BOUNDARY`) and the inconsistency to know about:
at :math:`t = 10` s the data give :math:`\dot\theta_1 = \dot\theta_2 = 0` with
:math:`\dot r_1 \ne \dot r_2` and :math:`r_1 \ne r_2`, which violates (12) unless
:math:`\tan\alpha = 0`.  The printed :math:`\dot z_3(10) = 0.0306` is the derivative
(27) of the definition of :math:`z_3` on those rates (:func:`flag_from_rates`), not (28);
mapping the flat boundary values back through (30) gives :math:`\theta_1(10) = 3 -
1.4\tan\alpha(10)`, not 3 (2.930 for :math:`l = 1` m).  The seed does not give
:math:`l`; :data:`DEFAULT_ROD_LENGTH_M` = 1 m is our choice.  The dynamic (Lagrangian)
model, eqs. (15)-(20), is not reproducible (masses and inertias not in the seed) and not
implemented.

Ports: :class:`ExpandingWheelPlant`.
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

DEFAULT_ROD_LENGTH_M = 1.0

#: The seed's boundary conditions (§1.2, "Trajectory generation"): T = 10 s, states
#: (r1, r2, theta1, theta2) and their rates at both ends.
SEED_BOUNDARY = {
    "T": 10.0,
    "x0": (0.3, 0.3, 0.0, 0.0), "xdot0": (0.02, 0.01, 0.0, 0.0),
    "xf": (0.4, 0.35, 3.0, 3.25), "xdotf": (0.015, 0.01, 0.0, 0.0),
}
#: The seed's gains (kp, kv per flat output) and initial conditions off the reference.
SEED_GAINS = {"kp": (10.0, 10.0, 100.0), "kv": (1.414, 1.414, 50.0)}
SEED_INITIAL = {"x0": (0.29, 0.305, 0.0, 0.0), "zeta0": (0.02, 0.01)}


def _check_rod(name: str, rod_length_m: Any) -> float:
    try:
        l_ = float(rod_length_m)
    except (TypeError, ValueError):
        l_ = float("nan")
    if not (math.isfinite(l_) and l_ > 0):
        raise ParameterError(f"{name}: rod_length_m must be a positive number, "
                             f"got {rod_length_m!r}")
    return l_


def tan_alpha(r1: float, r2: float, l_: float) -> float:
    """:math:`\\tan\\alpha` from :math:`\\sin\\alpha = (r_1 - r_2)/l` (9)."""
    d = r1 - r2
    return d / math.sqrt(l_ * l_ - d * d)


def flag_from_rates(x: Any, xdot: Any) -> np.ndarray:
    """Flat outputs and first derivatives from states and *all four* rates, eq. (27).

    Returns ``(3, 2)``: rows :math:`z_i, \\dot z_i`.  This is what the seed evaluates on
    its boundary data (rates that need not satisfy (12)).
    """
    r1, r2, t1, t2 = (float(v) for v in x)
    dr1, dr2, dt1, dt2 = (float(v) for v in xdot)
    z3 = r1 / r2 * t1 - t2
    dz3 = r1 / r2 * dt1 - dt2 + dr1 / r2 * t1 - r1 * dr2 / r2 ** 2 * t1
    return np.array([[r1, dr1], [r2, dr2], [z3, dz3]])


class ExpandingWheelVehicle(FlatSystem):
    """Kinematic model (A) as a flat system; ``rod_length_m`` is the rod length l.

    ``forward`` fills the second derivatives of the flag assuming :math:`\\dot u_1 =
    \\dot u_2 = 0` (they are not functions of state and input), as python-control's
    examples do.
    """

    states = ("r1", "r2", "theta1", "theta2")
    inputs = ("r1_dot", "r2_dot", "theta1_dot")
    outputs = ("z1", "z2", "z3")
    flaglen = (3, 3, 3)

    def __init__(self, rod_length_m: float = DEFAULT_ROD_LENGTH_M) -> None:
        self.l = _check_rod("ExpandingWheelVehicle", rod_length_m)

    def rhs(self, x, u):
        r1, r2, _, _ = x
        T = tan_alpha(r1, r2, self.l)
        return np.array([u[0], u[1], u[2], T / r2 * (u[1] - u[0]) + r1 / r2 * u[2]])

    def theta(self, z: np.ndarray, dz: np.ndarray) -> float:
        """:math:`\\Theta(z, \\dot z)`, eq. (30)."""
        T = tan_alpha(z[0], z[1], self.l)
        D = z[1] * dz[0] - z[0] * dz[1]
        return z[1] * (z[1] * dz[2] - T * (dz[0] - dz[1])) / D

    def gammas(self, z: np.ndarray, dz: np.ndarray) -> tuple[float, float, float, float]:
        """:math:`\\gamma_{1..4}`: :math:`\\dot\\Theta = \\gamma_1 \\ddot z_1 + \\gamma_2
        \\ddot z_2 + \\gamma_3 \\ddot z_3 + \\gamma_4`."""
        z1, z2 = z[0], z[1]
        d1, d2, d3 = dz
        l2 = self.l * self.l
        T = tan_alpha(z1, z2, self.l)
        T1 = l2 / (l2 - (z1 - z2) ** 2) ** 1.5          # dT/dz1 = -dT/dz2
        D = z2 * d1 - z1 * d2
        N = z2 * d3 - T * (d1 - d2)
        th = z2 * N / D
        g1 = -z2 * (T + th) / D
        g2 = (z2 * T + z1 * th) / D
        g3 = z2 * z2 / D
        dth_dz1 = -z2 * T1 * (d1 - d2) / D + th * d2 / D
        dth_dz2 = N / D + z2 * (d3 + T1 * (d1 - d2)) / D - th * d1 / D
        return g1, g2, g3, dth_dz1 * d1 + dth_dz2 * d2

    def forward(self, x, u):
        r1, r2, t1, _ = (float(v) for v in x)
        u1, u2, u3 = (float(v) for v in u)
        T = tan_alpha(r1, r2, self.l)
        z3 = r1 / r2 * t1 - x[3]
        dz3 = T / r2 * (u1 - u2) + (u1 / r2 - r1 * u2 / r2 ** 2) * t1          # (28)
        g1, g2, g3, g4 = self.gammas(np.array([r1, r2, z3]), np.array([u1, u2, dz3]))
        return [np.array([r1, u1, 0.0]), np.array([r2, u2, 0.0]),
                np.array([z3, dz3, (u3 - g4) / g3])]

    def reverse(self, zflag):
        z = np.array([f[0] for f in zflag], float)
        dz = np.array([f[1] for f in zflag], float)
        ddz = np.array([f[2] if len(f) > 2 else 0.0 for f in zflag], float)
        th1 = self.theta(z, dz)
        g1, g2, g3, g4 = self.gammas(z, dz)
        x = np.array([z[0], z[1], th1, z[0] / z[1] * th1 - z[2]])
        u = np.array([dz[0], dz[1], g1 * ddz[0] + g2 * ddz[1] + g3 * ddz[2] + g4])
        return x, u

    def singularity(self, zflag):
        """:math:`D = z_2\\dot z_1 - z_1\\dot z_2` (zero: the inverse map is singular)."""
        return float(zflag[1][0] * zflag[0][1] - zflag[0][0] * zflag[1][1])


class ExpandingWheelLaw(LinearizingLaw):
    """Seed eqs. (34)-(44): prolonged feedback linearization, :math:`\\zeta = (u_1, u_2)`."""

    states = ExpandingWheelVehicle.states
    inputs = ExpandingWheelVehicle.inputs
    relative_degree = (2, 2, 2)
    n_extension = 2

    def __init__(self, rod_length_m: float = DEFAULT_ROD_LENGTH_M) -> None:
        self.system = ExpandingWheelVehicle(rod_length_m)

    def extension_initial(self, x, zflag):
        return np.array([zflag[0][1], zflag[1][1]])

    def measured_flag(self, x, zeta):
        r1, r2, t1, t2 = x
        T = tan_alpha(r1, r2, self.system.l)
        z3 = r1 / r2 * t1 - t2
        dz3 = T / r2 * (zeta[0] - zeta[1]) + (zeta[0] / r2 - r1 * zeta[1] / r2 ** 2) * t1
        return np.array([[r1, zeta[0]], [r2, zeta[1]], [z3, dz3]])

    def linearizing_input(self, x, zeta, v):
        zm = self.measured_flag(x, zeta)
        g1, g2, g3, g4 = self.system.gammas(zm[:, 0], zm[:, 1])
        u3 = g1 * v[0] + g2 * v[1] + g3 * v[2] + g4
        return np.array([zeta[0], zeta[1], u3]), np.array([v[0], v[1]])

    def singularity(self, x, zeta):
        """:math:`D = r_2\\zeta_1 - r_1\\zeta_2` (:math:`\\gamma_{1..4} \\sim 1/D`)."""
        return float(x[1] * zeta[0] - x[0] * zeta[1])


class ExpandingWheelPlant(Block):
    r"""Kinematic model (A) or (B) of the expanding-wheel vehicle (equations (12), (11):
    module docstring).

    Ports
    -----
    in   u      (3,) [m/s, m/s, rad/s]   :math:`(\dot r_1, \dot r_2, \dot\theta_1)`
    out  x      (4,) [m, m, rad, rad]    :math:`(r_1, r_2, \theta_1, \theta_2)`; state only
    out  alpha  scalar [rad]             rod angle :math:`\alpha` (a state in model B);
                                         state only

    Parameters
    ----------
    x0 : array_like (4,)
        Initial :math:`(r_1, r_2, \theta_1, \theta_2)` [m, m, rad, rad], radii positive,
        :math:`|r_1 - r_2| < l`.
    rod_length_m : float
        :math:`l` (default :data:`DEFAULT_ROD_LENGTH_M`, 1 m: our choice, not the seed's).
    model : {"A", "B"}
        "A": eq. (13), :math:`\alpha` from the constraint; "B": eq. (14),
        :math:`\alpha` a state.
    """

    argument_checks = {"x0": Array(), "rod_length_m": POSITIVE}

    def __init__(self, name: str, x0: Any, rod_length_m: float = DEFAULT_ROD_LENGTH_M,
                 model: str = "A") -> None:
        super().__init__(name)
        self.l = _check_rod(f"ExpandingWheelPlant '{name}'", rod_length_m)
        if model not in ("A", "B"):
            raise ParameterError(f"ExpandingWheelPlant '{name}': model must be 'A' (eq. 13) "
                                 f"or 'B' (eq. 14), got {model!r}")
        self.model = model
        x0 = np.asarray(x0, float).reshape(-1)
        if x0.size != 4 or not np.all(np.isfinite(x0)) or x0[1] <= 0 or x0[0] <= 0:
            raise ParameterError(f"ExpandingWheelPlant '{name}': x0 = (r1, r2, theta1, "
                                 f"theta2) with positive radii, got {x0}")
        if abs(x0[0] - x0[1]) >= self.l:
            raise ParameterError(f"ExpandingWheelPlant '{name}': |r1 - r2| must be below the "
                                 f"rod length {self.l} m, got {x0[:2]}")
        init = x0 if model == "A" else np.append(x0, math.asin((x0[0] - x0[1]) / self.l))
        self.u = self.declare_input("u", shape=(3,))
        self.q = self.declare_continuous_state("q", init)
        self.x = self.declare_output("x", lambda c: np.asarray(c.state(self.q))[:4],
                                     shape=(4,), depends_on=())
        self.alpha = self.declare_output("alpha", self._alpha, unit="rad", depends_on=())

    def _alpha(self, ctx):
        q = ctx.state(self.q)
        return float(q[4]) if self.model == "B" else math.asin((q[0] - q[1]) / self.l)

    def derivatives(self, ctx):
        q = ctx.state(self.q)
        u = np.asarray(ctx.input(self.u), float)
        r1, r2 = q[0], q[1]
        if r2 <= 0 or abs(r1 - r2) >= self.l:
            raise StepError(f"ExpandingWheelPlant '{self.name}' at t = {ctx.time:.6g} s: "
                            f"radii r1 = {r1:.6g}, r2 = {r2:.6g} m leave the model's domain "
                            f"(r2 > 0, |r1 - r2| < l = {self.l} m)")
        if self.model == "A":
            T = tan_alpha(r1, r2, self.l)
            return np.array([u[0], u[1], u[2], T / r2 * (u[1] - u[0]) + r1 / r2 * u[2]])
        a = q[4]
        T = math.tan(a)
        return np.array([u[0], u[1], u[2], T / r2 * (u[1] - u[0]) + r1 / r2 * u[2],
                         (u[0] - u[1]) / (self.l * math.cos(a))])
