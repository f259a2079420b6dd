r"""Gantry crane mechanics (seed Paper V, §2.8): gantry, flexible trolley, hoist, spreader on ropes.

The joints are removed by the choice of coordinates, as in the seed: the gantry moves
along the pier rails (:math:`Z_g`), the trolley along the gantry rails (:math:`X_t`) and
vertically (:math:`Y_t`, the gantry's structural flexibility), the spreader (with or
without its container, one rigid body) is free in space.  Instead of the seed's Euler
parameter mass matrix with Lagrange multiplier and Baumgarte terms, the spreader is a
Newton-Euler body (position, unit quaternion, body-frame angular velocity), which the seed
notes call equivalent; there is then no constraint to solve.  The hoist adds one
coordinate, the unstretched rope length :math:`l_0` wound by the drum.

State (33, :data:`STATE_NAMES`): ``z_g, x_t, y_t, l0, r (3), e (4), v_g, v_t, w_t, v_h,
v (3), omega (3), theta (6), theta' (6)`` with :math:`\dot l_0 = -v_h` (hoisting positive).

Equations (global X along the gantry rails, Y up, Z along the pier rails;
:math:`A(e)` the rotation matrix of :math:`e/|e|`):

.. math::

    (m_g + m_t + m_{eq,g})\,\dot v_g &= F_g - \textstyle\sum_i f_{i,Z} \\
    (m_t + m_{eq,t})\,\dot v_t &= F_t - \textstyle\sum_i f_{i,X} \\
    m_t \dot w_t &= -m_t g - k_y (y_t - y_{rest}) - c_y w_t - \textstyle\sum_i f_{i,Y} \\
    m_{eq,h}\,\dot v_h &= F_h - \textstyle\sum_i \big(T_i + \tfrac12 k\,(L_i - l_0)^2/l_0\big) \\
    m \dot v &= \textstyle\sum_i f_i + m g + F_{arms} + F_{wind} \\
    J \dot\omega &= A^T \textstyle\sum_i (A p_i) \times f_i + A^T M_{arms} - \omega\times J\omega \\
    \dot e &= \tfrac12 L(e)^T \omega - \tfrac{\lambda}{2}\,(|e|^2 - 1)\, e

Rope :math:`i` runs from the spreader point :math:`C_i = r + A p_i` to the trolley sheave
:math:`S_i = (x_t + s_{x,i}, y_t, z_g + s_{z,i})`, length :math:`L_i = |S_i - C_i|`,
direction :math:`u_i`; it is a unilateral spring-damper (the brief's rope):

.. math::

    T_i = k\,(L_i - l_0) + c\,\dot L_i \ \text{ if } L_i > l_0 \text{ and that is } > 0,
    \text{ else } 0, \qquad k = EA/l_0, \quad c = \tau_r k, \qquad f_i = T_i u_i

on the spreader (and :math:`-f_i` on the trolley).  The hoist's load is the derivative of
the rope energy :math:`EA (L - l_0)^2 / (2 l_0)` with respect to :math:`l_0` (so the model
conserves energy exactly without damping; the extra :math:`T\varepsilon/2` is the
strain, ~0.1-0.3 %) plus the damping tension.  The drives (seed eqs. 21-23,
:mod:`blocks.cranes.drives`) give :math:`F_g, F_t, F_h` from the motor speeds
:math:`\omega_m = v / i_{tot}`; the drive trains' inertias are in the
:math:`m_{eq}` (:class:`~blocks.cranes.parameters.DriveParameters`).  Guide arms:
:mod:`blocks.cranes.guide_arms`.  Wind: :math:`F_{wind,k} = \tfrac12\rho C_d A_k
(u_k - v_k)|u - v|` on the spreader (and container), at its centre of mass.

Quaternion norm: the rotation matrix is computed from :math:`e/|e|` (so the dynamics are
those of a unit quaternion whatever the norm), and the norm is held at 1 by the term
:math:`-\tfrac{\lambda}{2}(|e|^2-1)e` (the continuous analogue of the seed's Baumgarte
stabilisation of :math:`\theta^T\theta - 1 = 0`; :math:`\lambda` =
``quaternion_stabilization_per_s``), not by a projection: no discrete event, no effect on
the fixed-step fast path.  Measured: :math:`||e|-1| < 10^{-10}` over the example's 60 s
(6e-11).

Drives: separate :class:`~blocks.electric.CraneDrive` blocks (:mod:`blocks.cranes.drives`)
give the forces through ports and read the motor speeds and speed references this block
puts out (:func:`blocks.cranes.drives.connect_drives`); one can be replaced by another
drive model (a PMSM drive) without touching the crane.  Evaluating the three drives inside
this block was tried and measured: 10 % faster (the drive blocks' four outputs each are all
computed at every RK4 stage), not worth a second code path.

Ports: :class:`GantryCrane`.

Forces of a recorded run are cheaper recomputed afterwards from the ``state`` output:
:meth:`GantryCrane.forces`.

Errors (:class:`~cosim.errors.StepError` naming the block, the time and the cause): the
spreader (or its container) below the ground level or inside the target container (landing
and stacking contact are not modelled), the hoist two-blocked (:math:`l_0` below
``min_rope_length_m``), a non-finite state; bad parameters raise
:class:`~cosim.errors.ParameterError` naming the parameter.

Verification (``tests/system/test_gantry_crane.py``, RK4 at 5 ms; figures measured)
-------------------------------------------------------------------------------------
* static equilibrium against the closed form (tensions :math:`mg/4`, girder deflection,
  rope stretch): exact to round-off (positions 0, tensions 1e-14 relative, accelerations
  1e-13 m/s^2 at the closed-form state; tolerances 1e-10 m, 1e-11, 1e-9 m/s^2); a damped
  bounce from 3 cm settles back to the weight on four equal ropes;
* sway on a free trolley / gantry, :math:`\omega^2 = g/L_e\,(1 + m/M)` with the
  spreader's quasi-static tilt in :math:`L_e`: 3e-7 relative; skew (quadrifilar)
  :math:`\omega^2 = m g r^2/(J_y L)`: 3e-7; the two vertical bounce modes of spreader,
  trolley and drum (3x3 eigenproblem of the rope energy), empty and loaded: 6e-7 (the
  tolerance is 2e-6);
* energy without damping and drives: 6e-7 of the motion's energy lost in 10 s, converging
  at order 5.0 (RK4 on oscillations), the state at order 4.0;
* the same machine in :mod:`blocks.multibody` absolute coordinates with joints
  (:mod:`blocks.cranes.reference`): trajectories equal to 2e-11 m over 3 s;
* trolley drive: speed within 1e-6 m/s of a linear drive + trolley + pendulum model for a
  0.2 m/s step; on the torque curve, within 1.3e-4 m/s of a nonlinear cart-pendulum for
  a 3 m/s step (0.2 rad swing).

Limitations
-----------
* Ropes are massless straight spring-dampers from a sheave point on the trolley to a point
  on the spreader; reeving, sheave friction and rope bending are not modelled; all four
  ropes are wound by one drum (one :math:`l_0`), equal rope lengths (no trim/list
  adjustment).  The hoist machinery rides on the trolley: trolley travel and its vertical
  motion do not pay out rope.
* The trolley does not rotate and the gantry does not skew (rail reactions absorb the rope
  moments); structural flexibility is the one vertical spring-damper of the seed (constant,
  not depending on the trolley position); no gantry or trolley rolling resistance beyond the
  drives' damping; no wind on the gantry or the trolley.
* The wind drag uses global-axis projected areas (no dependence on the spreader's
  orientation) and acts at the centre of mass (no aerodynamic moment).
* Landing on the ground or stacking on the target container is detected and refused, not
  modelled (nor are the seed's collision planes); the static equilibrium
  (:func:`equilibrium`) needs no contact.
* A rope going slack and taut again is a kink in its force: RK4 loses its order across it
  (results stay stable; keep the step or expect first-order errors there).
* Guide arms: see :mod:`blocks.cranes.guide_arms`.
* Explicit step: the stiffest mechanical mode is the empty spreader bouncing on 1.2 m of
  rope, :math:`|\lambda| = 142` 1/s (34 1/s on 30 m), the hoist speed loop ~110 1/s, the arm
  stops and contacts 45 1/s, so RK4 at 5 ms has :math:`h|\lambda| \le 0.7` (stable up to
  2.8); stiffer ropes or contacts need a smaller step.
* The P speed controllers of the drives (seed eq. 23) droop under load: a hoist holding
  40 t with zero reference sinks at ~2 cm/s (K = 200 N m s/rad); real hoists add a brake
  and integral action.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError, StepError

from .dynamics import (
    E0,
    L0,
    N_STATES,
    RX,
    RY,
    RZ,
    STATE_NAMES,
    VG,
    VH,
    VT,
    XT,
    YT,
    ZG,
    CraneFault,
    make_rhs,
)
from .parameters import STS_CRANE, GantryCraneParameters, validate
from .states import equilibrium, make_state, unpack

__all__ = ["GantryCrane", "equilibrium", "make_state", "unpack"]


class GantryCrane(Block):
    r"""The gantry crane mechanics as one block; equations in the module docstring.

    Ports
    -----
    in   gantry_force          scalar [N]      drive force :math:`F_g` (a drive's ``force``)
    in   trolley_force         scalar [N]      drive force :math:`F_t`
    in   hoist_force           scalar [N]      drive force :math:`F_h`
    in   gantry_velocity_ref   scalar [m/s]    operator's velocity reference, turned into
                                           ``gantry_speed_ref``
    in   trolley_velocity_ref  scalar [m/s]    the same for the trolley
    in   hoist_velocity_ref    scalar [m/s]    the same for the hoist (hoisting positive)
    in   arms_12, arms_34, arm_5, arm_6  scalar [1]  guide-arm commands per group, > 0.5 =
                                           down
    out  gantry_motor_speed    scalar [rad/s]  :math:`v_g/i_g` (the drive's ``speed``); state
                                           only
    out  trolley_motor_speed   scalar [rad/s]  :math:`v_t/i_t`; state only
    out  hoist_motor_speed     scalar [rad/s]  :math:`v_h/i_h`; state only
    out  gantry_position       scalar [m]      :math:`Z_g`; state only
    out  trolley_position      scalar [m]      :math:`X_t`; state only
    out  trolley_height        scalar [m]      :math:`Y_t` (sheave level); state only
    out  hoist_length          scalar [m]      unstretched rope length :math:`l_0`; state only
    out  gantry_velocity, trolley_velocity, hoist_velocity  scalar [m/s]  travel velocities;
                                           state only
    out  spreader_x, spreader_y, spreader_z  scalar [m]  centre of mass of spreader (+
                                           container); state only
    out  state                 (33,) [no unit]  the whole state (:func:`unpack` names it);
                                           state only
    out  gantry_speed_ref      scalar [rad/s]  motor speed reference: velocity reference /
                                           :math:`i_{tot}` (the drive's ``speed_ref``);
                                           reads the velocity references
    out  trolley_speed_ref     scalar [rad/s]  the same for the trolley
    out  hoist_speed_ref       scalar [rad/s]  the same for the hoist
    out  rope_tension          (4,) [N]        with ``diagnostics=True`` only (each
                                           evaluation then computes the forces twice)
    out  arm_contact_torque    (6,) [N*m]      with ``diagnostics=True`` only

    Parameters
    ----------
    name : str
    params : GantryCraneParameters
        Default :data:`~blocks.cranes.parameters.STS_CRANE`.
    initial_state : array_like (33,), optional
        :data:`STATE_NAMES`.  Default: :func:`equilibrium` with the gantry and the trolley
        at 0, 20 m of rope and the arms up.
    diagnostics : bool
        Add the ``rope_tension`` and ``arm_contact_torque`` outputs.
    """

    def __init__(self, name: str, params: GantryCraneParameters = STS_CRANE, *,
                 initial_state: Any = None, diagnostics: bool = False) -> None:
        super().__init__(name)
        own = f"GantryCrane '{name}'"
        validate(params, own)
        self.params = params
        try:
            self._rhs = make_rhs(params)
        except ParameterError as exc:
            raise ParameterError(str(exc).replace("GantryCrane", own, 1)) from None
        self.x = self.declare_continuous_state("x", self._initial(initial_state, own))
        self.gantry_force = self.declare_input("gantry_force", unit="N")
        self.trolley_force = self.declare_input("trolley_force", unit="N")
        self.hoist_force = self.declare_input("hoist_force", unit="N")
        self.gantry_velocity_ref = self.declare_input("gantry_velocity_ref", unit="m/s")
        self.trolley_velocity_ref = self.declare_input("trolley_velocity_ref", unit="m/s")
        self.hoist_velocity_ref = self.declare_input("hoist_velocity_ref", unit="m/s")
        self.arms_12 = self.declare_input("arms_12", unit="1")
        self.arms_34 = self.declare_input("arms_34", unit="1")
        self.arm_5 = self.declare_input("arm_5", unit="1")
        self.arm_6 = self.declare_input("arm_6", unit="1")
        self._inputs = (self.gantry_force, self.trolley_force, self.hoist_force, self.arms_12,
                        self.arms_34, self.arm_5, self.arm_6)
        self._refs = (self.gantry_velocity_ref, self.trolley_velocity_ref,
                      self.hoist_velocity_ref)
        self._inv_i = tuple(1.0 / getattr(params, f"{a}_drive").travel_per_rad_m
                            for a in ("gantry", "trolley", "hoist"))
        # two groups: what the drives read at every solver stage, and what observers read
        # (the engine computes the latter only where something reads it)
        (self.gantry_motor_speed, self.trolley_motor_speed, self.hoist_motor_speed) = \
            self.declare_outputs([("gantry_motor_speed", "rad/s"),
                                  ("trolley_motor_speed", "rad/s"),
                                  ("hoist_motor_speed", "rad/s")], self._motor_speeds,
                                 depends_on=())
        specs = [("gantry_position", "m"), ("trolley_position", "m"), ("trolley_height", "m"),
                 ("hoist_length", "m"), ("gantry_velocity", "m/s"), ("trolley_velocity", "m/s"),
                 ("hoist_velocity", "m/s"), ("spreader_x", "m"), ("spreader_y", "m"),
                 ("spreader_z", "m"), {"name": "state", "shape": (N_STATES,)}]
        (self.gantry_position, self.trolley_position, self.trolley_height, self.hoist_length,
         self.gantry_velocity, self.trolley_velocity, self.hoist_velocity, self.spreader_x,
         self.spreader_y, self.spreader_z, self.state) = \
            self.declare_outputs(specs, self._state_outputs, depends_on=())
        (self.gantry_speed_ref, self.trolley_speed_ref, self.hoist_speed_ref) = \
            self.declare_outputs([("gantry_speed_ref", "rad/s"), ("trolley_speed_ref", "rad/s"),
                                  ("hoist_speed_ref", "rad/s")], self._speed_refs,
                                 depends_on=self._refs)
        if diagnostics:
            self.rope_tension, self.arm_contact_torque = self.declare_outputs(
                [{"name": "rope_tension", "shape": (4,), "unit": "N"},
                 {"name": "arm_contact_torque", "shape": (6,), "unit": "N*m"}],
                self._diagnostics, depends_on=())

    def _initial(self, initial_state: Any, own: str) -> np.ndarray:
        p = self.params
        if initial_state is None:
            initial_state = equilibrium(p, 0.0, 0.0, 20.0)
        x0 = np.array(initial_state, dtype=float).reshape(-1)
        if x0.shape != (N_STATES,):
            raise ParameterError(f"{own}: initial_state must have {N_STATES} values "
                                 f"({', '.join(STATE_NAMES[:4])}, ...), got {x0.size}")
        bad = np.flatnonzero(~np.isfinite(x0))
        if bad.size:
            raise ParameterError(f"{own}: initial_state '{STATE_NAMES[bad[0]]}' is "
                                 f"{x0[bad[0]]}")
        if x0[L0] < p.min_rope_length_m:
            raise ParameterError(f"{own}: initial_state 'hoist_length' = {float(x0[L0])!r} m "
                                 f"is below min_rope_length_m = {p.min_rope_length_m!r} m")
        norm = float(np.linalg.norm(x0[E0:E0 + 4]))
        if not norm > 0:
            raise ParameterError(f"{own}: initial_state quaternion e0..e3 is zero")
        x0[E0:E0 + 4] /= norm
        try:
            out = self._rhs(x0.tolist(), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        except CraneFault as exc:
            raise ParameterError(f"{own}: initial_state: {exc}") from None
        if not all(math.isfinite(v) for v in out):
            raise ParameterError(f"{own}: initial_state gives non-finite derivatives")
        return x0

    # --------------------------------------------------------------- outputs
    def _motor_speeds(self, ctx: Any) -> tuple:
        x = ctx.state(self.x)
        ig, it, ih = self._inv_i
        return float(x[VG]) * ig, float(x[VT]) * it, float(x[VH]) * ih

    def _state_outputs(self, ctx: Any) -> tuple:
        xa = ctx.state(self.x)
        x = xa.tolist()
        return (x[ZG], x[XT], x[YT], x[L0], x[VG], x[VT], x[VH], x[RX], x[RY], x[RZ],
                xa.copy())

    def _speed_refs(self, ctx: Any) -> tuple:
        ig, it, ih = self._inv_i
        r = self._refs
        return (ctx.input(r[0]) * ig, ctx.input(r[1]) * it, ctx.input(r[2]) * ih)

    def forces(self, state: Any) -> dict:
        """At ``state`` (a row of the ``state`` output): the rope tensions ``rope_tension``
        (4), the hoist's rope load ``hoist_load``, the arm contact torques
        ``arm_contact_torque`` (6), the force on the spreader ``spreader_force`` (all but
        gravity) and the ropes' pull on the trolley ``trolley_force`` (global, 3 each).
        Drive forces and arm commands do not change them."""
        out: dict = {}
        self._rhs([float(v) for v in state], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, out)
        return out

    def hold_forces(self, state: Any) -> dict:
        """Drive forces that hold the axes at ``state`` at rest (``gantry_force``,
        ``trolley_force``, ``hoist_force``) [N]."""
        f = self.forces(state)
        fx, _, fz = f["trolley_force"]
        return {"gantry_force": -fz, "trolley_force": -fx, "hoist_force": f["hoist_load"]}

    def _diagnostics(self, ctx: Any) -> tuple:
        out = self.forces(ctx.state(self.x).tolist())
        return np.array(out["rope_tension"]), np.array(out["arm_contact_torque"])

    # ----------------------------------------------------------- derivatives
    def derivatives(self, ctx: Any) -> list:
        x = ctx.state(self.x).tolist()
        inp = ctx.input
        fg, ft, fh, c12, c34, c5, c6 = self._inputs
        try:
            dx = self._rhs(x, inp(fg), inp(ft), inp(fh), inp(c12), inp(c34), inp(c5), inp(c6))
        except CraneFault as exc:
            raise StepError(f"block '{self.path}' at t = {ctx.time:.6g} s: {exc}") from None
        if not math.isfinite(math.fsum(dx)):
            raise StepError(self._non_finite(x, dx, ctx.time))
        return dx

    def _non_finite(self, x: list, dx: list, t: float) -> str:
        bad = [STATE_NAMES[i] for i, v in enumerate(x) if not math.isfinite(v)]
        if bad:
            return (f"block '{self.path}' at t = {t:.6g} s: state '{bad[0]}' is not finite "
                    f"({', '.join(bad[:5])}); the step before produced it: reduce the step "
                    "or check the parameters (rope and contact stiffnesses set the stable "
                    "step of an explicit solver)")
        badd = [STATE_NAMES[i] for i, v in enumerate(dx) if not math.isfinite(v)]
        return (f"block '{self.path}' at t = {t:.6g} s: the derivative of '{badd[0]}' is not "
                "finite; check the inputs (drive forces) and parameters")
