r"""Pitch-plane half car on the multibody blocks: chassis, two wheels, suspensions, tyres.

A planar :class:`~blocks.multibody.Mechanism` (x forward, y up, gravity :math:`-g\,y`):

* ``chassis``: rigid body (sprung mass :math:`m_s`, pitch inertia :math:`I_y`) with its
  centre of mass at height :math:`h` in the design configuration;
* ``wheel_front``, ``wheel_rear``: unsprung masses at the wheel centres (height
  :math:`r_w`, :math:`l_f` ahead of / :math:`l_r` behind the centre of mass), each on a
  planar **prismatic joint** sliding along the chassis' vertical axis through the axle
  (the joint also ties the wheel body's rotation to the chassis: the wheels do not spin,
  and their small ``wheel_body_inertia_kgm2`` adds to the pitch inertia);
* suspensions: point-to-point **spring-dampers** (:math:`k, c` per axle) from a chassis
  mount ``spring_mount_height_m`` above the axle to the wheel centre, along the slide;
* tyres: vertical point-follower springs (``MarkerForce``) on the wheel centres,
  :math:`F_z = \max(0,\ k_t(r_0 - (y_w - z_{road}(x_w))) - c_t(\dot y_w - z'_{road}\dot x_w))`,
  lifting off at zero load;
* inputs ``front_force`` and ``rear_force``: forces (global x, y) at the contact points
  (a marker :math:`r_w` below each wheel centre): traction/braking forces from a
  longitudinal or tyre model.

``equilibrium=True`` (default) pre-loads springs and tyres so that the design
configuration is the static equilibrium on flat ground: suspension forces
:math:`F_{sf} = m_s g\,l_r/L`, :math:`F_{sr} = m_s g\,l_f/L`, tyre forces
:math:`F_s + m_u g`.  ``equilibrium=False`` makes the design configuration unloaded: the
car then sags to

.. math::

    \Delta_f = \frac{F_{sf}}{k_f} + \frac{F_{sf} + m_{uf} g}{k_{tf}}

at the front axle (rear alike), the check of the tests together with the natural
frequencies of the classical linear half car (bounce, pitch, two wheel hops) with
coordinates :math:`(z, \theta, z_f, z_r)`:

.. math::

    M = \mathrm{diag}(m_s,\ I_y + J_{wf} + J_{wr},\ m_{uf},\ m_{ur}), \qquad
    K = \begin{bmatrix} k_f + k_r & k_f l_f - k_r l_r & -k_f & -k_r \\
        \cdot & k_f l_f^2 + k_r l_r^2 & -k_f l_f & k_r l_r \\
        \cdot & \cdot & k_f + k_{tf} & 0 \\ \cdot & \cdot & 0 & k_r + k_{tr} \end{bmatrix}

The multibody model agrees with this classical model to first order only when the wheel
centres are at the height of the centre of mass (:math:`h = r_w`) in the loaded
configuration (tested: frequencies to 2e-11, sag to second order in the pitch angle).
Otherwise it contains what the classical model leaves out: pitching moves the wheels fore
and aft (coupling pitch with the free longitudinal motion) and tilts the pre-loaded
springs and the wheel weights (geometric stiffness).  With the default car
(:math:`h - r_w` = 0.24 m) this lowers the pitch frequency by 1.0 % and the bounce
frequency by 0.3 %, and the static pitch is 0.8 % larger (measured in the tests).

Limitations: planar (no roll, no lateral dynamics), straight-line slide suspensions (no
linkage kinematics, no anti-dive/anti-squat geometry), linear springs and dampers (no
bump stops), point-follower tyres (no tyre enveloping, no tyre longitudinal
compliance, no rolling resistance: longitudinal forces only through the inputs), the
contact markers pitch with the chassis (a horizontal offset :math:`r_w\theta`), no wheel
spin.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from blocks.multibody import Mechanism, MultibodyBlock
from blocks.multibody.formulations import KINDS
from cosim.errors import ParameterError
from cosim.params import one_of

from .params import PASSENGER_CAR, HalfCarData

__all__ = ["HalfCar", "half_car_mechanism", "half_car_linear_model"]


def _flat(x: float) -> float:
    return 0.0


def half_car_mechanism(params: HalfCarData | None = None, *, road: Callable | None = None,
                       speed_m_s: float = 0.0, equilibrium: bool = True,
                       name: str = "half_car") -> Mechanism:
    """The :class:`~blocks.multibody.Mechanism` of the module docstring.

    ``road(x)`` is the road height [m] at ``x`` (default flat); ``speed_m_s`` the initial
    forward speed of all bodies.
    """
    p = PASSENGER_CAR.half_car if params is None else params
    if not isinstance(p, HalfCarData):
        raise ParameterError(f"half_car_mechanism: params must be a HalfCarData, got "
                             f"{type(p).__name__}")
    road = _flat if road is None else road
    if not callable(road):
        raise ParameterError("half_car_mechanism: road must be a callable x -> height [m]")
    g = p.gravity_m_s2
    h, rw, sm = p.cg_height_m, p.wheel_radius_m, p.spring_mount_height_m
    fs = p.static_spring_forces_n()
    mech = Mechanism(name, dim=2, gravity=(0.0, -g))
    v0 = (float(speed_m_s), 0.0)
    ch = mech.add_body("chassis", p.sprung_mass_kg, p.pitch_inertia_kgm2, (0.0, h),
                       velocity=v0)
    axles = (("front", p.front_axle_m, p.front_unsprung_kg, p.front_spring_n_per_m,
              p.front_damper_ns_per_m, p.front_tyre_n_per_m, fs[0]),
             ("rear", -p.rear_axle_m, p.rear_unsprung_kg, p.rear_spring_n_per_m,
              p.rear_damper_ns_per_m, p.rear_tyre_n_per_m, fs[1]))
    for axle, x, mu, k, c, kt, f_s in axles:
        w = mech.add_body(f"wheel_{axle}", mu, p.wheel_body_inertia_kgm2, (x, rw), velocity=v0)
        ch.marker(f"{axle}_axle", (x, rw - h), math.pi / 2)
        ch.marker(f"{axle}_mount", (x, rw - h + sm))
        w.marker("axle", (0.0, 0.0), math.pi / 2)
        w.marker("contact", (0.0, -rw))
        mech.add_joint("prismatic", f"{axle}_slide", f"chassis.{axle}_axle", f"wheel_{axle}.axle")
        mech.add_spring_damper(f"{axle}_suspension", f"chassis.{axle}_mount", f"wheel_{axle}.cm",
                               stiffness=k, damping=c,
                               length0=sm + (f_s / k if equilibrium else 0.0))
        r0 = rw + ((f_s + mu * g) / kt if equilibrium else 0.0)
        mech.add_force(f"{axle}_tyre", f"wheel_{axle}.cm",
                       _tyre(kt, p.tyre_damping_ns_per_m, r0, road))
        mech.add_load(f"{axle}_force", f"wheel_{axle}.contact")
    return mech


def _tyre(kt: float, ct: float, r0: float, road: Callable) -> Callable:
    def force(P: np.ndarray, V: np.ndarray, t: float) -> np.ndarray:
        x = float(P[0])
        z = float(road(x))
        pen = r0 - (float(P[1]) - z)
        if pen <= 0.0:
            return np.zeros(2)
        fz = kt * pen
        if ct:
            dz = (float(road(x + 1e-4)) - float(road(x - 1e-4))) / 2e-4
            fz -= ct * (float(V[1]) - dz * float(V[0]))
        return np.array([0.0, max(fz, 0.0)])
    force.r0 = r0
    return force


def half_car_linear_model(params: HalfCarData | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(M, K)`` of the classical linear half car (module docstring), coordinates
    ``(z, theta, z_f, z_r)``; undamped natural frequencies
    ``sqrt(eig(K, M)) / (2 pi)``."""
    p = PASSENGER_CAR.half_car if params is None else params
    lf, lr = p.front_axle_m, p.rear_axle_m
    kf, kr = p.front_spring_n_per_m, p.rear_spring_n_per_m
    M = np.diag([p.sprung_mass_kg, p.pitch_inertia_kgm2 + 2 * p.wheel_body_inertia_kgm2,
                 p.front_unsprung_kg, p.rear_unsprung_kg])
    K = np.array([[kf + kr, kf * lf - kr * lr, -kf, -kr],
                  [kf * lf - kr * lr, kf * lf ** 2 + kr * lr ** 2, -kf * lf, kr * lr],
                  [-kf, -kf * lf, kf + p.front_tyre_n_per_m, 0.0],
                  [-kr, kr * lr, 0.0, kr + p.rear_tyre_n_per_m]])
    return M, K


class HalfCar(MultibodyBlock):
    r"""The half car of the module docstring as a block.

    Ports
    -----
    in   front_force, rear_force  (2,) [N]    forces at the contact points, global
    out  q, v                      (9,) [no unit]  ``[x, y, theta]`` of chassis, front
                                                wheel, rear wheel [m, m, rad]; their
                                                velocities; state only
    out  <body>_cm_pos             (2,) [m]     centre of mass of ``chassis``,
                                                ``wheel_front``, ``wheel_rear``; state only
    out  <body>_cm_vel             (2,) [m/s]   their velocities; state only
    out  heave         scalar [m]    chassis centre-of-mass height minus its design
                                      height; state only
    out  pitch         scalar [rad]  chassis angle (nose up > 0); state only
    out  x             scalar [m]    chassis centre-of-mass x; state only
    out  speed         scalar [m/s]  chassis x velocity; state only
    out  tyre_loads    (2,) [N]    front and rear tyre normal forces; state only

    Parameters
    ----------
    name : str
    params : HalfCarData
        Default: the passenger car's.
    road : callable, optional
        Road height ``road(x)`` [m].
    speed_m_s : float
        Initial forward speed.
    equilibrium : bool
        Design configuration = static equilibrium (see module docstring).
    formulation : str
        Of :class:`~blocks.multibody.MultibodyBlock`; default ``"lagrange"`` with
        Baumgarte constants ``alpha = beta = 10`` 1/s.
    **formulation_options
        Passed to :class:`~blocks.multibody.MultibodyBlock` (``alpha``, ``beta``, ...).
    """

    argument_checks = {"formulation": one_of(*KINDS)}

    def __init__(self, name: str, params: HalfCarData | None = None, *,
                 road: Callable | None = None, speed_m_s: float = 0.0,
                 equilibrium: bool = True, formulation: str = "lagrange",
                 **formulation_options: Any) -> None:
        mech = half_car_mechanism(params, road=road, speed_m_s=speed_m_s,
                                  equilibrium=equilibrium, name=name)
        if formulation == "lagrange":
            formulation_options.setdefault("alpha", 10.0)
            formulation_options.setdefault("beta", 10.0)
        super().__init__(name, mech, formulation,
                         markers=("chassis.cm", "wheel_front.cm", "wheel_rear.cm"),
                         **formulation_options)
        self.params = PASSENGER_CAR.half_car if params is None else params
        self.h0 = self.params.cg_height_m
        ic = mech.body("chassis").iq
        ivc = mech.body("chassis").iv
        nq = mech.nq
        self._tyres = [(mech.elements[f"{a}_tyre"], mech.body(f"wheel_{a}").iq,
                        mech.body(f"wheel_{a}").iv) for a in ("front", "rear")]
        self.heave = self.declare_output(
            "heave", lambda ctx: float(ctx.state(self.x)[ic + 1]) - self.h0, unit="m",
            depends_on=())
        self.pitch = self.declare_output("pitch", lambda ctx: float(ctx.state(self.x)[ic + 2]),
                                         unit="rad", depends_on=())
        self.x_out = self.declare_output("x", lambda ctx: float(ctx.state(self.x)[ic]),
                                         unit="m", depends_on=())
        self.speed = self.declare_output(
            "speed", lambda ctx: float(ctx.state(self.x)[nq + ivc]), unit="m/s", depends_on=())
        self.tyre_loads = self.declare_output("tyre_loads", self._tyre_loads, shape=(2,),
                                              unit="N", depends_on=())

    def _tyre_loads(self, ctx: Any) -> np.ndarray:
        xs = ctx.state(self.x)
        nq = self.mech.nq
        out = np.empty(2)
        for k, (e, iq, iv) in enumerate(self._tyres):
            P = np.asarray(xs[iq:iq + 2])
            V = np.asarray(xs[nq + iv:nq + iv + 2])
            out[k] = e.fn(P, V, ctx.time)[1]
        return out
