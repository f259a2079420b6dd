r"""Lateral single-track ("bicycle") model: linear, or with tyre blocks.

Axes: vehicle x forward, y left, z up (ISO 8855); yaw rate :math:`r` and steer angle
:math:`\delta` (front wheels) positive to the left.  The longitudinal speed :math:`u`
is an input (constant-speed handling model); states :math:`v_y, r` and the pose
:math:`\psi, X, Y`.

Linear model (:class:`SingleTrack`), cornering stiffnesses :math:`C_f, C_r` per axle:

.. math::

    \alpha_f = \delta - \frac{v_y + l_f r}{u}, \qquad \alpha_r = -\frac{v_y - l_r r}{u},
    \qquad F_{yf} = C_f\alpha_f, \quad F_{yr} = C_r\alpha_r

    m(\dot v_y + u\,r) = F_{yf} + F_{yr}, \qquad I_z\dot r = l_f F_{yf} - l_r F_{yr}

    \dot\psi = r, \qquad \dot X = u\cos\psi - v_y\sin\psi, \qquad
    \dot Y = u\sin\psi + v_y\cos\psi

(small angles: no :math:`\cos\delta`).  Steady-state cornering (Gillespie 1992, ch. 6;
Rajamani 2012, ch. 3):

.. math::

    \frac{r}{\delta} = \frac{u}{L + K_{us}u^2}, \qquad
    K_{us} = \frac{m}{L}\left(\frac{l_r}{C_f} - \frac{l_f}{C_r}\right), \qquad
    a_y = u\,r, \qquad \beta = \frac{v_y}{u} = \frac{l_r}{R} - \frac{m\,l_f\,u^2}{L\,C_r R}

with :math:`R = u/r`: :math:`\delta = L/R + K_{us}a_y` in rad with :math:`a_y` in m/s^2.
:math:`K_{us} > 0` understeer (the yaw gain peaks at the characteristic speed
:math:`v_{ch} = \sqrt{L/K_{us}}` with :math:`r/\delta = v_{ch}/(2L)`), :math:`< 0`
oversteer (unstable above :math:`\sqrt{-L/K_{us}}`).  Sign convention note: with
:math:`F_y = C\alpha` and :math:`\alpha` defined as above, :math:`C > 0`; ISO tyre
models write :math:`F_y = -C\alpha_{ISO}` with :math:`\tan\alpha_{ISO} = V_y/|V_x|`, the
same force since :math:`\alpha_{ISO} = -\alpha` at small angles.

With tyre blocks (:func:`SingleTrackWithTyres`), :class:`SingleTrack` takes the lateral
force of one tyre per axle (``tyre_inputs=True``, wheel axes, ISO sign) and outputs the
wheel-centre velocities in wheel axes, exactly (not small-angle):

.. math::

    V_{xf} = u\cos\delta + (v_y + l_f r)\sin\delta, \quad
    V_{yf} = -u\sin\delta + (v_y + l_f r)\cos\delta, \quad V_{xr} = u, \quad
    V_{yr} = v_y - l_r r

    m(\dot v_y + u\,r) = n F_{yf}\cos\delta + n F_{yr}, \qquad
    I_z\dot r = l_f\,n F_{yf}\cos\delta - l_r\,n F_{yr}

(:math:`n` tyres per axle, all with the same slip).  The tyres get the static axle load
(:math:`m g\,l_r/L` front) shared by the :math:`n` tyres, zero camber and zero
longitudinal slip.

Limitations: constant speed (no longitudinal dynamics or drive forces; :math:`F_x`
and its :math:`\sin\delta` component are not modelled), no load transfer (static
axle loads, no roll, no pitch), axle-lumped tyres, no steering compliance, no aligning
moment on the body.  Below ``v_min_m_s`` (1 m/s) the slip denominators use ``v_min``:
the model is not meant for standstill.
"""

from __future__ import annotations

import math
from typing import Any

from blocks.sources import Constant
from cosim.block import Block
from cosim.diagram import Diagram, DiagramBuilder
from cosim.errors import ParameterError
from cosim.params import COUNT, POSITIVE, Array

from .params import PASSENGER_CAR, LateralData
from .tyres import Tyre

__all__ = ["SingleTrack", "SingleTrackWithTyres", "steady_state_cornering"]


def steady_state_cornering(params: LateralData, speed_m_s: float,
                           steer_rad: float) -> dict[str, float]:
    """The closed-form steady state of the linear model (module docstring).

    Returns ``yaw_rate`` [rad/s], ``ay`` [m/s^2], ``beta`` [rad], ``vy`` [m/s],
    ``radius`` [m] (``inf`` for zero steer).
    """
    p, u = params, float(speed_m_s)
    L = p.wheelbase_m
    r = u / (L + p.understeer_gradient * u * u) * steer_rad
    ay = u * r
    beta = (p.rear_axle_m * r / u
            - p.mass_kg * p.front_axle_m * u * r / (L * p.rear_cornering_stiffness_n_per_rad))
    return {"yaw_rate": r, "ay": ay, "beta": beta, "vy": beta * u,
            "radius": u / r if r else math.inf}


class SingleTrack(Block):
    r"""Single-track vehicle (module docstring): steer and speed in, yaw motion out.

    Ports
    -----
    in   steer        scalar [rad]  front wheel steer angle (left > 0)
    in   vx           scalar [m/s]  longitudinal speed :math:`u`
    in   fy_front     scalar [N]    (``tyre_inputs``) lateral force of one front tyre
    in   fy_rear      scalar [N]    (``tyre_inputs``) lateral force of one rear tyre
    out  vy           scalar [m/s]  lateral velocity of the centre of mass; state only
    out  yaw_rate     scalar [rad/s]  state only
    out  psi          scalar [rad]  heading; state only
    out  position     (2,) [m]    :math:`(X, Y)`; state only
    out  beta         scalar [rad]  side-slip angle :math:`\arctan(v_y/u)`; reads vx
    out  ay           scalar [m/s^2]  lateral acceleration :math:`\dot v_y + u r`; reads all
    out  alpha_front, alpha_rear  scalar [rad]  (linear) slip angles; read steer, vx
    out  fy_front_axle, fy_rear_axle  scalar [N]  axle lateral forces (body frame for the
                                     rear, wheel frame for the front); read all inputs
    out  vx_front, vy_front  scalar [m/s]  (``tyre_inputs``) front wheel-centre velocity,
                                     wheel axes; read steer, vx
    out  vx_rear, vy_rear    scalar [m/s]  (``tyre_inputs``) rear; read vx

    Parameters
    ----------
    name : str
    params : LateralData
        Default: the passenger car's.
    tyre_inputs : bool
        Take tyre forces as inputs (nonlinear, with :class:`~.tyres.Tyre` blocks).
    tyres_per_axle : int
        :math:`n` (``tyre_inputs`` only).
    v_min_m_s : float
        Low-speed floor of the slip denominators.
    vy0_m_s, yaw_rate0_rad_s, psi0_rad, position0_m : initial states.
    """

    argument_checks = {"position0_m": Array(shape=(2,)), "v_min_m_s": POSITIVE,
                       "tyres_per_axle": COUNT}

    def __init__(self, name: str, params: LateralData | None = None, *,
                 tyre_inputs: bool = False, tyres_per_axle: int = 2, v_min_m_s: float = 1.0,
                 vy0_m_s: float = 0.0, yaw_rate0_rad_s: float = 0.0, psi0_rad: float = 0.0,
                 position0_m: tuple = (0.0, 0.0)) -> None:
        super().__init__(name)
        own = f"SingleTrack '{name}'"
        p = PASSENGER_CAR.lateral if params is None else params
        if not isinstance(p, LateralData):
            raise ParameterError(f"{own}: params must be a LateralData, got {type(p).__name__}")
        if not v_min_m_s > 0:
            raise ParameterError(f"{own}: v_min_m_s must be > 0, got {v_min_m_s!r}")
        if isinstance(tyres_per_axle, bool) or not isinstance(tyres_per_axle, int) \
                or tyres_per_axle < 1:
            raise ParameterError(f"{own}: tyres_per_axle must be an int >= 1")
        self.params, self.tyre_inputs, self.n = p, bool(tyre_inputs), tyres_per_axle
        self.m, self.Iz = p.mass_kg, p.yaw_inertia_kgm2
        self.lf, self.lr = p.front_axle_m, p.rear_axle_m
        self.Cf = p.front_cornering_stiffness_n_per_rad
        self.Cr = p.rear_cornering_stiffness_n_per_rad
        self.v_min = float(v_min_m_s)
        self.steer = self.declare_input("steer", unit="rad")
        self.vx = self.declare_input("vx", unit="m/s")
        if self.tyre_inputs:
            self.fy_front_in = self.declare_input("fy_front", unit="N")
            self.fy_rear_in = self.declare_input("fy_rear", unit="N")
        x0, y0 = (float(v) for v in position0_m)
        self.x = self.declare_continuous_state(
            "vy_r_psi_x_y", [float(vy0_m_s), float(yaw_rate0_rad_s), float(psi0_rad), x0, y0])
        st = self.x
        self.vy = self.declare_output("vy", lambda ctx: float(ctx.state(st)[0]), unit="m/s",
                                      depends_on=())
        self.yaw_rate = self.declare_output("yaw_rate", lambda ctx: float(ctx.state(st)[1]),
                                            unit="rad/s", depends_on=())
        self.psi = self.declare_output("psi", lambda ctx: float(ctx.state(st)[2]), unit="rad",
                                       depends_on=())
        self.position = self.declare_output("position", lambda ctx: ctx.state(st)[3:5].copy(),
                                            shape=(2,), unit="m", depends_on=())
        self.beta = self.declare_output(
            "beta", lambda ctx: math.atan2(float(ctx.state(st)[0]), self._u(ctx)), unit="rad",
            depends_on=(self.vx,))
        self.ay = self.declare_output("ay", self._ay, unit="m/s^2")
        self.fy_front_axle, self.fy_rear_axle = self.declare_outputs(
            [("fy_front_axle", "N"), ("fy_rear_axle", "N")], self._axle_forces)
        if self.tyre_inputs:
            self.vx_front, self.vy_front = self.declare_outputs(
                [("vx_front", "m/s"), ("vy_front", "m/s")], self._front_velocity,
                depends_on=(self.steer, self.vx))
            self.vx_rear, self.vy_rear = self.declare_outputs(
                [("vx_rear", "m/s"), ("vy_rear", "m/s")],
                lambda ctx: (ctx.input(self.vx),
                             float(ctx.state(st)[0] - self.lr * ctx.state(st)[1])),
                depends_on=(self.vx,))
        else:
            self.alpha_front, self.alpha_rear = self.declare_outputs(
                [("alpha_front", "rad"), ("alpha_rear", "rad")],
                lambda ctx: self.slip_angles(ctx.input(self.steer), ctx.input(self.vx),
                                             *ctx.state(st)[:2]),
                depends_on=(self.steer, self.vx))

    # ------------------------------------------------------------ physics
    def _u(self, ctx: Any) -> float:
        return ctx.input(self.vx)

    def slip_angles(self, steer: float, vx: float, vy: float, r: float) -> tuple[float, float]:
        """Linear-model slip angles :math:`(\\alpha_f, \\alpha_r)`."""
        u = vx if vx >= self.v_min else self.v_min
        return steer - (vy + self.lf * r) / u, -(vy - self.lr * r) / u

    def _front_velocity(self, ctx: Any) -> tuple[float, float]:
        vy, r = ctx.state(self.x)[:2]
        d, u = ctx.input(self.steer), ctx.input(self.vx)
        c, s = math.cos(d), math.sin(d)
        w = float(vy + self.lf * r)
        return u * c + w * s, -u * s + w * c

    def _axle_forces(self, ctx: Any) -> tuple[float, float]:
        """``(F_yf, F_yr)``: front in wheel axes, rear in body axes (sum over the axle)."""
        if self.tyre_inputs:
            return self.n * ctx.input(self.fy_front_in), self.n * ctx.input(self.fy_rear_in)
        vy, r = ctx.state(self.x)[:2]
        af, ar = self.slip_angles(ctx.input(self.steer), ctx.input(self.vx), vy, r)
        return self.Cf * af, self.Cr * ar

    def _body_forces(self, ctx: Any) -> tuple[float, float]:
        """Lateral force and yaw moment on the body."""
        ff, fr = self._axle_forces(ctx)
        if self.tyre_inputs:
            ff *= math.cos(ctx.input(self.steer))
        return ff + fr, self.lf * ff - self.lr * fr

    def _ay(self, ctx: Any) -> float:
        return self._body_forces(ctx)[0] / self.m

    def derivatives(self, ctx: Any) -> list[float]:
        vy, r, psi = (float(v) for v in ctx.state(self.x)[:3])
        u = ctx.input(self.vx)
        fy, mz = self._body_forces(ctx)
        c, s = math.cos(psi), math.sin(psi)
        return [fy / self.m - u * r, mz / self.Iz, r, u * c - vy * s, u * s + vy * c]


def SingleTrackWithTyres(name: str, front_model: Any, rear_model: Any,  # noqa: N802
                         params: LateralData | None = None, *, relaxation: bool = False,
                         tyres_per_axle: int = 2, **single_track_kw: Any) -> Diagram:
    r"""Single-track model with one :class:`~.tyres.Tyre` block per axle (nonlinear).

    ::

        steer, vx -> [body: SingleTrack(tyre_inputs)] -vx_front, vy_front-> [tyre_front] -fy->
                        ^                           -vx_rear, vy_rear-->   [tyre_rear]  -fy->
                        +------------------------------------------------------------+

    Each tyre gets its share of the static axle load, zero camber and zero slip ratio
    (``slip_input=True``).  With ``relaxation=True`` the tyres use their relaxation
    lengths (the model's, e.g. MF ``PTY*``, or ``relaxation_lengths_m`` of a
    Brush/Linear tyre).

    Ports
    -----
    in   steer, vx     scalar  rad, m/s
    out  yaw_rate, vy, beta, ay, psi, position   as :class:`SingleTrack`
    out  fy_front_axle, fy_rear_axle  scalar [N]
    out  alpha_front, alpha_rear  scalar [rad]  the tyres' slip angles (ISO sign:
                                  :math:`\alpha_{ISO} = -\alpha`)

    Parameters
    ----------
    name : str
    front_model, rear_model : MagicFormula, BrushTyre or LinearTyre
    params : LateralData
    relaxation : bool
    tyres_per_axle : int
    single_track_kw
        Further :class:`SingleTrack` arguments (initial states, ``v_min_m_s``).
    """

    p = PASSENGER_CAR.lateral if params is None else params
    b = DiagramBuilder(name)
    body = b.add(SingleTrack("body", p, tyre_inputs=True, tyres_per_axle=tyres_per_axle,
                             **single_track_kw))
    loads = p.static_axle_loads_n()
    zero_rad = b.add(Constant("zero_camber", 0.0, unit="rad"))
    zero_slip = b.add(Constant("zero_slip", 0.0, unit="1"))
    for axle, model, load in (("front", front_model, loads[0]), ("rear", rear_model, loads[1])):
        t = b.add(Tyre(f"tyre_{axle}", model, relaxation=relaxation, slip_input=True))
        fz = b.add(Constant(f"fz_{axle}", load / tyres_per_axle, unit="N"))
        b.connect(body.output(f"vx_{axle}"), t.vx)
        b.connect(body.output(f"vy_{axle}"), t.vy)
        b.connect(zero_slip.y, t.spin)
        b.connect(zero_rad.y, t.camber)
        b.connect(fz.y, t.fz)
        b.connect(t.output("fy"), body.input(f"fy_{axle}"))
        b.export_output(t.output("alpha"), f"alpha_{axle}")
    b.export_input(body.steer, "steer")
    b.export_input(body.vx, "vx")
    for port in ("yaw_rate", "vy", "beta", "ay", "psi", "position", "fy_front_axle",
                 "fy_rear_axle"):
        b.export_output(body.output(port), port)
    return b.build(loops="error")
