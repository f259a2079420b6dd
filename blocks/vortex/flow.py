r"""Time stepping of the 2-D discrete vortex method (DVM) around one panel body.

One step :meth:`DiscreteVortexFlow.step` from :math:`t_n` to :math:`t_{n+1} = t_n + \Delta t`
with the body's node positions and velocities at :math:`t_n` (:class:`BodyMotion`):

1. free vortices that have entered the (closed) body are deleted, their circulation
   going to the bound vortices through Kelvin's condition (vorticity absorbed at the
   wall); those more than ``remove_distance`` downstream of the body move to a
   *reservoir* that keeps their circulation and impulse, convected by the free stream;
2. the panel system (:meth:`PanelBody.solve`) gives the bound circulations and the
   nascent vortices at the shedding nodes (``shedding_model="kutta"``: strengths from
   the Kutta-type condition, for sharp edges; ``"flux"``, for fixed separation points
   on smooth bodies: a first solve gives the slip speed :math:`u_s` at the node and the
   nascent vortex gets the shear layer's vorticity flux
   :math:`\Gamma = \kappa\,\tfrac12 u_s |u_s| \Delta t`, :math:`\kappa` =
   ``flux_factor``, before the final solve), with Kelvin's condition
   :math:`\sum\Gamma_\text{bound} + \sum\Gamma_\text{nascent} = \Gamma_0 -
   \sum\Gamma_\text{free} - \Gamma_\text{reservoir}` (total circulation conserved);
3. the force and moment per unit span from the vortex impulse (below);
4. free and nascent vortices move with the free stream plus the velocity induced by
   all vortices (bound ones included): second-order Adams–Bashforth
   :math:`x_{n+1} = x_n + \Delta t\,(\tfrac32 u_n - \tfrac12 u_{n-1})`, forward Euler for
   a vortex's first step (``scheme="euler"`` everywhere on request); the nascent
   vortices then join the free ones;
5. viscosity (optional, :math:`\nu` = ``nu``): ``"random_walk"`` (Chorin: each vortex
   moves by a Gaussian step of variance :math:`2\nu\Delta t` per axis) or
   ``"core_spreading"`` (:math:`\delta^2 \mathrel{+}= 4\nu\Delta t`, exact for the
   Lamb–Oseen core model).

Force and moment (Wu 1981; Saffman, *Vortex Dynamics*, §3.2), :math:`\rho` the fluid
density, sums over every vortex (bound, nascent, free, and the reservoir), the body's
centroid velocity :math:`\mathbf V_c` and enclosed area :math:`A` (zero for an open body):

.. math::

    \mathbf F = -\frac{d\mathbf P}{dt} + \rho A \frac{d\mathbf V_c}{dt}, \qquad
    \mathbf P = \rho \sum_k \Gamma_k\,(y_k, -x_k), \qquad
    M = -\frac{dL}{dt}, \qquad L = -\frac{\rho}{2}\sum_k \Gamma_k\,|\mathbf x_k|^2

(:math:`M` about the world origin).  The derivatives are backward differences over one
step, so the values reported at step :math:`n` belong to :math:`t_n - \Delta t/2`
(first order in time); the first step carries the impulse of the start (the added-mass
spike of an impulsive start).  With no free stream circulation at infinity
(:math:`\sum\Gamma = 0`), :math:`\mathbf P` does not depend on the origin, and in steady
flow it reduces to Kutta–Joukowski :math:`F_y = \rho U \Gamma_\text{bound}`.  This is the
Blasius/Kutta–Joukowski force of Kobayashi et al. (seed §12, Eq. 21) summed over the
bound and the wake vortices, without their separate drag term (Eq. 23): here the wake
carries the drag.

Regime: inviscid vortices with smooth cores (and an optional random walk) represent
high-Reynolds-number separated flow (subcritical cylinder, Re about 1e3-2e5, Strouhal
number 0.2-0.21).  Separation on smooth bodies is imposed at fixed nodes (the caller
chooses them).  Measured on a cylinder (64 panels, ``dt`` = 0.05 D/U, flux model with
:math:`\kappa = 1`): St = 0.20 with separation at 70 deg from the front stagnation
point, 0.22 at 75 deg, 0.24-0.25 at 80-95 deg; the Kutta-type condition at 85 deg gives
St 0.13-0.14 and C_D 3.4 (too much shed circulation).  The separation angle is a model
parameter, not a prediction (laminar separation is at about 80 deg).
Limitations: one body; no vortex merging (removal only); first-order force
differences; the near-wall flow is resolved only to the panel length (the core radius
defaults to the mean panel length).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cosim.errors import ParameterError

from .kernels import check_model, induced_velocity, self_induced
from .panels import BodyMotion, PanelBody, PanelSolution


@dataclass
class FlowState:
    """Everything that changes during a run (copy it to checkpoint: :meth:`copy`)."""

    step: int = 0
    xy: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))      #: free vortices [m]
    gamma: np.ndarray = field(default_factory=lambda: np.zeros(0))        #: [m²/s]
    core: np.ndarray = field(default_factory=lambda: np.zeros(0))         #: core radii [m]
    vel_prev: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))  #: u_{n-1}
    has_prev: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    reservoir_gamma: float = 0.0           #: circulation removed downstream [m²/s]
    reservoir_moment: np.ndarray = field(default_factory=lambda: np.zeros(2))  #: sum G x
    reservoir_sq: float = 0.0              #: sum G |x|^2 of the reservoir
    impulse: np.ndarray | None = None      #: P at the last step (per unit density)
    angular: float | None = None           #: L at the last step (per unit density)
    centroid_velocity: np.ndarray | None = None
    force: np.ndarray = field(default_factory=lambda: np.zeros(2))  #: [N/m]
    moment: float = 0.0                    #: [N m/m]
    solution: PanelSolution | None = None  #: the last panel solution
    removed_inside: int = 0
    removed_downstream: int = 0
    rng: Any = None

    def copy(self) -> FlowState:
        return copy.deepcopy(self)

    @property
    def n_free(self) -> int:
        return int(self.gamma.size)

    def total_circulation(self) -> float:
        """Free + bound + reservoir circulation (the nascent vortices are free by now)."""
        bound = 0.0 if self.solution is None else float(self.solution.bound_gamma.sum())
        return float(self.gamma.sum()) + bound + self.reservoir_gamma


class DiscreteVortexFlow:
    """2-D DVM around one :class:`PanelBody` in a uniform free stream (module docstring).

    Parameters
    ----------
    body : PanelBody
    dt : float
        Time step [s].
    u_inf : (2,) array_like
        Free-stream velocity [m/s].
    rho : float
        Fluid density [kg/m³] (forces per unit span).
    core_radius : float, optional
        Core radius of free vortices [m]; default the mean panel length.
    core_model : str
        ``"krasny"`` (default), ``"lamb_oseen"``, ``"rankine"`` or ``"point"``.
    shed_distance : float, optional
        Node-to-nascent-vortex distance [m]; default ``0.3 |u_inf| dt`` for an open body
        (Katz & Plotkin's 0.2-0.3 of the step's travel), half the mean panel length for a
        closed one.
    nu : float
        Kinematic viscosity [m²/s] for ``diffusion``.
    diffusion : {None, "random_walk", "core_spreading"}
    remove_distance : float, optional
        Vortices farther downstream than this from the body's node centroid go to the
        reservoir [m]; default 20 body sizes.
    scheme : {"ab2", "euler"}
    backend : {"auto", "numpy", "numba"}
        Kernel implementation (:mod:`blocks.vortex.kernels`).
    seed : int
        Seed of the random walk.
    """

    def __init__(self, body: PanelBody, dt: float, u_inf: Any = (1.0, 0.0), rho: float = 1.0,
                 core_radius: float | None = None, core_model: str = "krasny",
                 shed_distance: float | None = None, nu: float = 0.0,
                 diffusion: str | None = None, remove_distance: float | None = None,
                 scheme: str = "ab2", backend: str = "auto", seed: int = 0,
                 shedding_model: str = "kutta", flux_factor: float = 0.6,
                 name: str = "vortex_flow") -> None:
        who = f"DiscreteVortexFlow '{name}'"
        self.name = name
        if not isinstance(body, PanelBody):
            raise ParameterError(f"{who}: body must be a PanelBody, got {type(body).__name__}")
        self.body = body
        self.dt = _positive(who, "dt", dt)
        u = np.asarray(u_inf, dtype=float)
        if u.shape != (2,) or not np.all(np.isfinite(u)):
            raise ParameterError(f"{who}: u_inf must be 2 finite numbers [m/s], got {u_inf!r}")
        self.u_inf = u
        self.rho = _positive(who, "rho", rho)
        mean_len = float(body.panel_lengths.mean())
        self.core_radius = mean_len if core_radius is None else _nonneg(who, "core_radius",
                                                                          core_radius)
        check_model(core_model, who)
        self.core_model = core_model
        if shed_distance is None:
            speed = float(np.hypot(*u))
            shed_distance = (0.3 * speed * self.dt if body.kind == "open" and speed > 0
                             else 0.5 * mean_len)
        self.shed_distance = _positive(who, "shed_distance", shed_distance)
        self.nu = _nonneg(who, "nu", nu)
        if diffusion not in (None, "random_walk", "core_spreading"):
            raise ParameterError(f"{who}: diffusion must be None, 'random_walk' or "
                                 f"'core_spreading', got {diffusion!r}")
        if diffusion is not None and self.nu == 0.0:
            raise ParameterError(f"{who}: diffusion={diffusion!r} needs nu > 0")
        self.diffusion = diffusion
        self.remove_distance = (20.0 * body.size if remove_distance is None
                                else _positive(who, "remove_distance", remove_distance))
        if scheme not in ("ab2", "euler"):
            raise ParameterError(f"{who}: scheme must be 'ab2' or 'euler', got {scheme!r}")
        self.scheme = scheme
        self.backend = backend
        self.seed = int(seed)
        if shedding_model not in ("kutta", "flux"):
            raise ParameterError(f"{who}: shedding_model must be 'kutta' or 'flux', got "
                                 f"{shedding_model!r}")
        if shedding_model == "flux" and body.kind != "closed":
            raise ParameterError(f"{who}: shedding_model='flux' needs a closed body (an open "
                                 "body sheds by its implicit Kutta condition)")
        self.shedding_model = shedding_model
        self.flux_factor = _positive(who, "flux_factor", flux_factor)

    # ----------------------------------------------------------------- state
    def initial_state(self) -> FlowState:
        """No free vortices, body circulation zero, fluid at rest relative to the stream."""
        return FlowState(rng=np.random.default_rng(self.seed))

    # ------------------------------------------------------------------ step
    def step(self, state: FlowState, motion: BodyMotion | None = None) -> FlowState:
        """Advance ``state`` (modified in place and returned) by one step with the body at
        ``motion`` (default: at rest where it was defined)."""
        body, dt, rho = self.body, self.dt, self.rho
        motion = body.at_rest() if motion is None else body.check_motion(motion)
        s = state
        U = self.u_inf
        # 1. removal: inside the body, and far downstream to the reservoir
        if s.n_free:
            keep = ~body.inside(s.xy, motion.nodes)
            s.removed_inside += int((~keep).sum())
            c = motion.nodes.mean(axis=0)
            speed = float(np.hypot(*U))
            if speed > 0:
                far = ((s.xy - c) @ (U / speed)) > self.remove_distance
                far &= keep
                if far.any():
                    g, p = s.gamma[far], s.xy[far]
                    s.reservoir_gamma += float(g.sum())
                    s.reservoir_moment = s.reservoir_moment + (g[:, None] * p).sum(axis=0)
                    s.reservoir_sq += float((g * (p * p).sum(axis=1)).sum())
                    s.removed_downstream += int(far.sum())
                    keep &= ~far
            if not keep.all():
                s.xy, s.gamma, s.core = s.xy[keep], s.gamma[keep], s.core[keep]
                s.vel_prev, s.has_prev = s.vel_prev[keep], s.has_prev[keep]
        # 2. panel solve with Kelvin's condition (initial total circulation zero)
        target = -float(s.gamma.sum()) - s.reservoir_gamma
        args = (motion, U, s.xy, s.gamma, s.core, target, self.shed_distance,
                self.core_radius, self.core_model, self.backend)
        if self.shedding_model == "flux" and body.shedding:
            sol0 = body.solve(*args, nascent_gamma=np.zeros(len(body.shedding)))
            us = body.slip_speed(sol0)[list(body.shedding)]
            sol = body.solve(*args, nascent_gamma=self.flux_factor * 0.5 * us * np.abs(us)
                             * dt)
        else:
            sol = body.solve(*args)
        s.solution = sol
        # 3. force and moment from the impulse
        allg = np.concatenate([sol.bound_gamma, sol.nascent_gamma, s.gamma])
        allx = np.concatenate([sol.bound_xy, sol.nascent_xy, s.xy])
        P = np.array([np.dot(allg, allx[:, 1]), -np.dot(allg, allx[:, 0])])
        P += np.array([s.reservoir_moment[1], -s.reservoir_moment[0]])
        L = -0.5 * (float(np.dot(allg, (allx * allx).sum(axis=1))) + s.reservoir_sq)
        vc = body.centroid_velocity(motion)
        p_prev = np.zeros(2) if s.impulse is None else s.impulse
        l_prev = 0.0 if s.angular is None else s.angular
        vc_prev = vc if s.centroid_velocity is None else s.centroid_velocity
        s.force = rho * (-(P - p_prev) / dt + body.area * (vc - vc_prev) / dt)
        s.moment = -rho * (L - l_prev) / dt
        # 4. convection (nascent vortices become free); reservoir moves with the stream
        xy = np.concatenate([s.xy, sol.nascent_xy])
        g = np.concatenate([s.gamma, sol.nascent_gamma])
        core = np.concatenate([s.core, np.full(sol.nascent_gamma.size, self.core_radius)])
        has_prev = np.concatenate([s.has_prev, np.zeros(sol.nascent_gamma.size, bool)])
        vprev = np.concatenate([s.vel_prev, np.zeros((sol.nascent_gamma.size, 2))])
        u = self.velocities(xy, g, core, sol)
        if self.scheme == "ab2":
            incr = np.where(has_prev[:, None], 1.5 * u - 0.5 * vprev, u)
        else:
            incr = u
        xy = xy + dt * incr
        # reservoir: sum G x moves at U; sum G |x|^2 grows by 2 U . sum G x dt (+ |U|^2 G dt^2)
        s.reservoir_sq += (2.0 * float(U @ s.reservoir_moment) * dt
                           + float(U @ U) * s.reservoir_gamma * dt * dt)
        s.reservoir_moment = s.reservoir_moment + s.reservoir_gamma * U * dt
        # 5. viscosity
        if self.diffusion == "random_walk":
            xy = xy + s.rng.normal(0.0, np.sqrt(2.0 * self.nu * dt), size=xy.shape)
        elif self.diffusion == "core_spreading":
            core = np.sqrt(core * core + 4.0 * self.nu * dt)
        s.xy, s.gamma, s.core, s.vel_prev = xy, g, core, u
        s.has_prev = np.ones(g.size, dtype=bool)
        # impulse of what was just summed, but with the reservoir's stream convection
        # accounted in the next difference (its P changes only through it)
        s.impulse, s.angular, s.centroid_velocity = P, L, vc
        s.step += 1
        return s

    def velocities(self, xy: np.ndarray, gamma: np.ndarray, core: np.ndarray,
                   sol: PanelSolution) -> np.ndarray:
        """Velocity of vortices at ``xy``: free stream + mutual + bound (core-regularised)."""
        u = np.empty_like(xy)
        u[:] = self.u_inf
        if gamma.size:
            u += self_induced(xy, gamma, core, self.core_model, self.backend)
            u += induced_velocity(xy, sol.bound_xy, sol.bound_gamma, self.core_radius,
                                  self.core_model, self.backend)
        return u

    def velocity_field(self, points: Any, state: FlowState) -> np.ndarray:
        """Fluid velocity at ``points`` ``(M, 2)`` for ``state`` (after a step: free
        vortices at :math:`t_{n+1}`, bound ones from the last solve)."""
        pts = np.asarray(points, dtype=float).reshape(-1, 2)
        u = np.empty_like(pts)
        u[:] = self.u_inf
        if state.n_free:
            u += induced_velocity(pts, state.xy, state.gamma, state.core, self.core_model,
                                  self.backend)
        if state.solution is not None:
            u += induced_velocity(pts, state.solution.bound_xy, state.solution.bound_gamma,
                                  self.core_radius, self.core_model, self.backend)
        return u

    def run(self, n_steps: int, motion: Any = None, state: FlowState | None = None,
            every: int = 1) -> dict:
        """Run ``n_steps`` from ``state`` (default initial); ``motion(t) -> BodyMotion`` or
        ``None`` (body at rest).  Returns ``{"t", "force", "moment", "n_vortices",
        "bound_circulation", "total_circulation", "state"}`` (arrays over steps; ``t`` the
        time of each step's solve, the forces belong to ``t - dt/2``)."""
        s = self.initial_state() if state is None else state
        ts, fs, ms, ns, gb, gt = [], [], [], [], [], []
        for k in range(int(n_steps)):
            t = s.step * self.dt
            self.step(s, None if motion is None else motion(t))
            if k % every == 0:
                ts.append(t)
                fs.append(s.force.copy())
                ms.append(s.moment)
                ns.append(s.n_free)
                gb.append(float(s.solution.bound_gamma.sum()))
                gt.append(s.total_circulation())
        return {"t": np.array(ts), "force": np.array(fs).reshape(-1, 2),
                "moment": np.array(ms), "n_vortices": np.array(ns),
                "bound_circulation": np.array(gb), "total_circulation": np.array(gt),
                "state": s}


def _positive(who: str, name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{who}: {name} must be a number, got {value!r}") from None
    if not (np.isfinite(v) and v > 0):
        raise ParameterError(f"{who}: {name} must be finite and > 0, got {value!r}")
    return v


def _nonneg(who: str, name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{who}: {name} must be a number, got {value!r}") from None
    if not (np.isfinite(v) and v >= 0):
        raise ParameterError(f"{who}: {name} must be finite and >= 0, got {value!r}")
    return v


def strouhal(t: np.ndarray, signal: np.ndarray, length: float, speed: float,
             t_start: float = 0.0) -> tuple[float, int]:
    """Strouhal number :math:`f L / U` of ``signal`` from its mean-crossing frequency after
    ``t_start``: ``(St, number of full periods used)``; ``(nan, 0)`` with fewer than 2.

    Upward crossings of the mean, linearly interpolated; ``f`` = (crossings - 1) / (time
    between the first and the last)."""
    t = np.asarray(t, float)
    y = np.asarray(signal, float)
    sel = t >= t_start
    t, y = t[sel], y[sel] - np.mean(y[sel])
    idx = np.nonzero((y[:-1] < 0.0) & (y[1:] >= 0.0))[0]
    if idx.size < 3:
        return float("nan"), 0
    tc = t[idx] - y[idx] * (t[idx + 1] - t[idx]) / (y[idx + 1] - y[idx])
    periods = idx.size - 1
    f = periods / (tc[-1] - tc[0])
    return float(f * length / speed), int(periods)
