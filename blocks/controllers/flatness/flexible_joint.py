r"""Flexible-joint robot (Agrawal's slides, seed §2): one link driven through a torsional
spring, flat output the link angle, static exact linearization.

Model (link inertia :math:`I`, rotor inertia :math:`J`, link mass :math:`M` at distance
:math:`L`, gravity :math:`g`, joint stiffness :math:`k`, motor torque :math:`u`):

.. math::

    I\ddot q_1 + MgL\sin q_1 + k(q_1 - q_2) = 0, \qquad J\ddot q_2 - k(q_1 - q_2) = u

States :math:`(q_1, \dot q_1, q_2, \dot q_2)`; flat output :math:`y = q_1`, ``flaglen``
(5,) (:math:`q_1, \dots, q_1^{(4)}`).  Inverse map:

.. math::

    q_2 = q_1 + \frac{I}{k}\ddot q_1 + \frac{MgL}{k}\sin q_1, \qquad
    u = J\ddot q_2 - k(q_1 - q_2) = J\ddot q_2 + I\ddot q_1 + MgL\sin q_1

with :math:`\dot q_2, \ddot q_2` the derivatives of the first expression (they need
:math:`q_1^{(3)}, q_1^{(4)}`).  Nowhere singular (:math:`k > 0`).

Tracking (:class:`FlexibleJointLaw`): :math:`y^{(4)} = a(x) + b\,u` with
:math:`b = k/(IJ)` and

.. math::

    a(x) = -\frac{MgL(\ddot q_1\cos q_1 - \dot q_1^2\sin q_1) + k\ddot q_1}{I}
           + \frac{k^2 (q_1 - q_2)}{IJ}, \qquad
    \ddot q_1 = -\frac{MgL\sin q_1 + k(q_1 - q_2)}{I}

so :math:`u = (v - a)/b` gives :math:`y^{(4)} = v`: relative degree 4, no dynamic
extension; :class:`~.tracking.FlatTracker` with four poles.

The seed gives no parameter values; :data:`DEFAULT_PARAMS` (:math:`I = 1`,
:math:`J = 0.5` kg m², :math:`M = 1` kg, :math:`g = 9.81` m/s², :math:`L = 0.5` m,
:math:`k = 100` N m/rad) are ours.  For :math:`q_1 = t` (:func:`ramp_reference`):
:math:`q_2 = t + (MgL/k)\sin t`, :math:`u = MgL\sin t - (J MgL/k)\sin t`.

Ports: :class:`FlexibleJoint`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.params import Array

from .system import FlatSystem
from .tracking import LinearizingLaw

#: Our parameter values (the seed gives none): inertias [kg m^2], mass [kg], gravity
#: [m/s^2], distance of the link's mass from the joint [m], joint stiffness [N m/rad].
DEFAULT_PARAMS = {"I": 1.0, "J": 0.5, "M": 1.0, "g": 9.81, "L": 0.5, "k": 100.0}


def _params(who: str, overrides: dict) -> dict:
    unknown = set(overrides) - set(DEFAULT_PARAMS)
    if unknown:
        raise ParameterError(f"{who}: unknown parameters {sorted(unknown)}; known "
                             f"{sorted(DEFAULT_PARAMS)}")
    p = {**DEFAULT_PARAMS, **overrides}
    for name, value in p.items():
        try:
            p[name] = float(value)
        except (TypeError, ValueError):
            p[name] = float("nan")
        positive = name != "g"
        if not math.isfinite(p[name]) or (p[name] <= 0 if positive else p[name] < 0):
            raise ParameterError(f"{who}: parameter {name} must be a finite "
                                 f"{'positive' if positive else 'non-negative'} number, "
                                 f"got {value!r}")
    return p


class FlexibleJointFlat(FlatSystem):
    """The flexible-joint robot as a flat system; keyword parameters ``I, J, M, g, L, k``
    (defaults :data:`DEFAULT_PARAMS`)."""

    states = ("q1", "q1_dot", "q2", "q2_dot")
    inputs = ("u",)
    outputs = ("q1",)
    flaglen = (5,)

    def __init__(self, **params: float) -> None:
        self.p = _params(type(self).__name__, params)
        P = self.p
        self.I, self.J, self.k = P["I"], P["J"], P["k"]
        self.mgl = P["M"] * P["g"] * P["L"]

    def q1_ddot(self, x) -> float:
        """:math:`\\ddot q_1` from the state (the link equation)."""
        return -(self.mgl * math.sin(x[0]) + self.k * (x[0] - x[2])) / self.I

    def drift(self, x) -> float:
        """:math:`a(x)` of :math:`q_1^{(4)} = a(x) + b u` (module docstring)."""
        q1, w1, q2 = float(x[0]), float(x[1]), float(x[2])
        dd1 = self.q1_ddot(x)
        return (-(self.mgl * (dd1 * math.cos(q1) - w1 * w1 * math.sin(q1)) + self.k * dd1)
                / self.I + self.k * self.k * (q1 - q2) / (self.I * self.J))

    @property
    def gain(self) -> float:
        """:math:`b = k/(IJ)` of :math:`q_1^{(4)} = a(x) + b u`."""
        return self.k / (self.I * self.J)

    def rhs(self, x, u):
        q1, w1, q2, w2 = (float(v) for v in x)
        u0 = float(np.asarray(u, float).reshape(-1)[0])
        return np.array([w1, self.q1_ddot(x), w2, (u0 + self.k * (q1 - q2)) / self.J])

    def output_derivatives(self, x) -> np.ndarray:
        """:math:`(q_1, \\dot q_1, \\ddot q_1, q_1^{(3)})` from the state."""
        q1, w1, q2, w2 = (float(v) for v in x)
        d3 = -(self.mgl * math.cos(q1) * w1 + self.k * (w1 - w2)) / self.I
        return np.array([q1, w1, self.q1_ddot(x), d3])

    def forward(self, x, u):
        u0 = float(np.asarray(u, float).reshape(-1)[0])
        return [np.append(self.output_derivatives(x), self.drift(x) + self.gain * u0)]

    def reverse(self, zflag):
        y = as_row(zflag[0], 5)
        q1, d1, d2, d3, d4 = y
        s, c = math.sin(q1), math.cos(q1)
        a, m = self.I / self.k, self.mgl / self.k
        q2 = q1 + a * d2 + m * s
        w2 = d1 + a * d3 + m * c * d1
        dd2 = d2 + a * d4 + m * (c * d2 - s * d1 * d1)
        u = self.J * dd2 - self.k * (q1 - q2)
        return np.array([q1, d1, q2, w2]), np.array([u])


def as_row(values: Any, n: int) -> np.ndarray:
    """``values`` as a float array of length ``n`` (zero-padded)."""
    v = np.atleast_1d(np.asarray(values, float))
    return np.concatenate([v, np.zeros(n - v.size)]) if v.size < n else v[:n]


def ramp_reference(t: Any, **params: float) -> dict:
    """Closed form for :math:`q_1 = t`: ``q1, q1_dot, q2, q2_dot, u`` at times ``t``."""
    P = _params("ramp_reference", params)
    t = np.asarray(t, float)
    mgl = P["M"] * P["g"] * P["L"]
    return {"q1": t, "q1_dot": np.ones_like(t), "q2": t + mgl / P["k"] * np.sin(t),
            "q2_dot": 1.0 + mgl / P["k"] * np.cos(t),
            "u": mgl * np.sin(t) - P["J"] * mgl / P["k"] * np.sin(t)}


class FlexibleJointLaw(LinearizingLaw):
    """Static exact linearization :math:`u = (v - a(x))/b` (module docstring)."""

    states = FlexibleJointFlat.states
    inputs = FlexibleJointFlat.inputs
    relative_degree = (4,)
    n_extension = 0

    def __init__(self, **params: float) -> None:
        self.system = FlexibleJointFlat(**params)

    def measured_flag(self, x, zeta):
        return self.system.output_derivatives(x)[None, :]

    def linearizing_input(self, x, zeta, v):
        s = self.system
        return np.array([(float(v[0]) - s.drift(x)) / s.gain]), np.zeros(0)


class FlexibleJoint(Block):
    r"""The flexible-joint robot (equations: module docstring), state from ``x0``.

    .. math:: I\ddot q_1 + MgL\sin q_1 + k(q_1 - q_2) = 0, \qquad J\ddot q_2 - k(q_1 - q_2) = u

    Ports
    -----
    in   u   (1,) [no unit]              motor torque [N m] (shape and unit as FlatTracker's
                                        ``u``)
    out  x   (4,) [rad, rad/s, rad, rad/s]  :math:`(q_1, \dot q_1, q_2, \dot q_2)`; state only
    out  q1  scalar [rad]                link angle (the flat output); state only

    Parameters
    ----------
    x0 : array_like (4,)
        Initial :math:`(q_1, \dot q_1, q_2, \dot q_2)` [rad, rad/s, rad, rad/s].
    **params : float
        ``I`` [kg m^2], ``J`` [kg m^2], ``M`` [kg], ``g`` [m/s^2], ``L`` [m], ``k``
        [N m/rad]; defaults :data:`DEFAULT_PARAMS`.
    """

    argument_checks = {"x0": Array()}

    def __init__(self, name: str, x0: Any = (0.0, 0.0, 0.0, 0.0), **params: float) -> None:
        super().__init__(name)
        self.system = FlexibleJointFlat(**params)
        x0 = np.asarray(x0, float).reshape(-1)
        if x0.size != 4 or not np.all(np.isfinite(x0)):
            raise ParameterError(f"FlexibleJoint '{name}': x0 = (q1, q1_dot, q2, q2_dot), four "
                                 f"finite values, got {x0}")
        self.u = self.declare_input("u", shape=(1,))
        self.q = self.declare_continuous_state("q", x0)
        self.x = self.declare_output("x", lambda c: np.asarray(c.state(self.q)).copy(),
                                     shape=(4,), depends_on=())
        self.q1 = self.declare_output("q1", lambda c: float(c.state(self.q)[0]), unit="rad",
                                      depends_on=())

    def derivatives(self, ctx):
        return self.system.rhs(ctx.state(self.q), ctx.input(self.u))
