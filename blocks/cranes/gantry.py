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
* Compiled runs (``Simulator(compiled=True)``, :meth:`GantryCrane.c_model`): the rhs is
  generated as one C function with the parameters as constants, equal to the Python loop
  bit for bit (the example's 60 s, tests/system/test_c_forms_cranes_electric.py); a fault
  stops the C run with the same cause but without the values in the message; C checks
  each derivative for finiteness where Python checks their ``math.fsum`` (which raises
  ``OverflowError`` if finite derivatives overflow their sum).
* The P speed controllers of the drives (seed eq. 23) droop under load: a hoist holding
  40 t with zero reference sinks at ~2 cm/s (K = 200 N m s/rad); real hoists add a brake
  and integral action.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
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
from .parameters import ROPE_SIGNS, STS_CRANE, GantryCraneParameters, suspended_body, validate
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

    # ------------------------------------------------------------------ C form
    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`derivatives` (the rhs of :func:`~blocks.cranes.dynamics.
        make_rhs` as one static C function), the outputs and :meth:`forces` for the
        diagnostics; a :class:`CraneFault` or a non-finite derivative fails the run."""
        name, code = _crane_c_function(self.params)
        cg.helper(name, code)
        x0 = cg.x(self.x, 0)
        xs = [cg.x(self.x, i) for i in range(N_STATES)]
        ins = ", ".join(cg.u(p) for p in self._inputs)
        faults = (f"block '{self.path}': hoist two-blocked: unstretched rope length below "
                  f"min_rope_length_m = {self.params.min_rope_length_m:g} m (stop hoisting "
                  "earlier)",
                  f"block '{self.path}': the spreader hit the ground (landing is not modelled; "
                  "stop lowering above it)",
                  f"block '{self.path}': the spreader landed on the target container "
                  "(stacking contact is not modelled; stop lowering above it)")

        def call(inputs: str, d: str, tens: str, ctq: str) -> str:
            return (f"int rc = {name}(&{x0}, {inputs}, {d}, {tens}, {ctq});\n"
                    + "\n".join(f"if (rc == {k + 1}) {cg.fail(m)}"
                                for k, m in enumerate(faults)))

        dx0 = cg.dx(self.x, 0)
        der = (call(ins, f"&{dx0}", "NULL", "NULL") + "\n{\n    int i;\n"
               f"    for (i = 0; i < {N_STATES}; i++) if (!isfinite((&{dx0})[i])) {{\n        "
               + cg.fail(f"block '{self.path}': a derivative is not finite; check the inputs "
                         "(drive forces), the step and the parameters")
               + "\n        break;\n    }\n}")
        ig, it, ih = (c_float(v) for v in self._inv_i)
        out = {"gantry_motor_speed": f"{cg.y(self.gantry_motor_speed)} = {xs[VG]} * {ig};",
               "trolley_motor_speed": f"{cg.y(self.trolley_motor_speed)} = {xs[VT]} * {it};",
               "hoist_motor_speed": f"{cg.y(self.hoist_motor_speed)} = {xs[VH]} * {ih};"}
        for port, k in ((self.gantry_position, ZG), (self.trolley_position, XT),
                        (self.trolley_height, YT), (self.hoist_length, L0),
                        (self.gantry_velocity, VG), (self.trolley_velocity, VT),
                        (self.hoist_velocity, VH), (self.spreader_x, RX),
                        (self.spreader_y, RY), (self.spreader_z, RZ)):
            out[port.name] = f"{cg.y(port)} = {xs[k]};"
        out["state"] = "\n".join(f"{cg.y(self.state, i)} = {xs[i]};" for i in range(N_STATES))
        for port, ref, inv in zip((self.gantry_speed_ref, self.trolley_speed_ref,
                                   self.hoist_speed_ref), self._refs, (ig, it, ih), strict=True):
            out[port.name] = f"{cg.y(port)} = {cg.u(ref)} * {inv};"
        if hasattr(self, "rope_tension"):
            # forces(): the rhs at the state with zero inputs, collecting its out
            head = ("double d[" + str(N_STATES) + "], tens[4], ctq[6];\n"
                    + call("0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0", "d", "tens", "ctq") + "\n")
            out["rope_tension"] = "{\n" + head + "\n".join(
                f"{cg.y(self.rope_tension, i)} = tens[{i}];" for i in range(4)) + "\n}"
            out["arm_contact_torque"] = "{\n" + head + "\n".join(
                f"{cg.y(self.arm_contact_torque, i)} = ctq[{i}];" for i in range(6)) + "\n}"
        return CModel(outputs=out, derivatives=der)

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


# ------------------------------------------------------------------ C form
def _crane_c_function(p: GantryCraneParameters) -> tuple[str, str]:
    """``(name, code)``: a static C function mirroring :func:`~blocks.cranes.dynamics.make_rhs`
    (and the guide arms of :func:`~blocks.cranes.guide_arms.make_arm_dynamics`) expression by
    expression, with the parameters as constants.

    ``int f(const double *x, fg, ft, fh, c12, c34, c5, c6, double *d, double *tens,
    double *ctq)`` writes the 33 derivatives to ``d``; ``tens`` (4) and ``ctq`` (6), when not
    NULL, receive the rope tensions and arm contact torques (the rhs's ``out``: the arms' fast
    path is then skipped, as there).  Returns 0, or the :class:`CraneFault` met: 1 hoist
    two-blocked, 2 ground, 3 landed on the target.
    """
    f = c_float
    body = suspended_body(p)
    g = p.gravity_m_s2
    J = [float(v) for v in body.inertia.ravel()]
    Ji = [float(v) for v in np.linalg.inv(body.inertia).ravel()]
    m_t = p.trolley_mass_kg
    m_zg = p.gantry_mass_kg + m_t + p.gantry_drive.equivalent_mass_kg
    m_xt = m_t + p.trolley_drive.equivalent_mass_kg
    m_h = p.hoist_drive.equivalent_mass_kg
    ssx, ssz = p.sheave_half_spacing_m
    ropes = [(float(pa[0]), float(pa[1]), float(pa[2]), sx * ssx, sz * ssz)
             for pa, (sx, sz) in zip(body.attachments, ROPE_SIGNS, strict=True)]
    qd = 0.5 * p.air_density_kg_m3 * p.drag_coefficient
    ax_, ay_, az_ = (qd * a for a in body.areas)
    uwx, uwy, uwz = (float(u) for u in p.wind_velocity_m_s)
    bcx, bcy, bcz = body.bottom_center
    bhx, bhz = body.bottom_half
    tg = p.target
    a = p.arms
    up, dn = a.up_angle_rad, a.down_angle_rad
    la = a.length_m
    hinges = [tuple(map(float, h)) for h in body.hinges]
    reach = max(math.sqrt(h[0] ** 2 + h[1] ** 2 + h[2] ** 2) for h in hinges) + la
    c: list[str] = [
        "double zg = x[0], xt = x[1], yt = x[2], l0 = x[3], rx = x[4], ry = x[5], rz = x[6];",
        "double e0 = x[7], e1 = x[8], e2 = x[9], e3 = x[10];",
        "double vg = x[11], vt = x[12], wt = x[13], vh = x[14], vx = x[15], vy = x[16];",
        "double vz = x[17], wx = x[18], wy = x[19], wz = x[20];",
        "const double *th = x + 21, *om = x + 27;",
        "double n2, s, R00, R01, R02, R10, R11, R12, R20, R21, R22, y_low, gx, gy, gz, k, c;",
        "double Fx = 0.0, Fy = 0.0, Fz = 0.0, Mx = 0.0, My = 0.0, Mz = 0.0, hoist = 0.0;",
        "double d_vg, d_vt, d_wt, d_vh, tx, ty, tz, hx, hy, hz, q, refs[6], dom[6];",
        "int i, fast;",
        f"if (l0 < {f(p.min_rope_length_m)}) return 1;",
        "n2 = e0 * e0 + e1 * e1 + e2 * e2 + e3 * e3;",
        "s = 2.0 / n2;",
        "R00 = 1.0 - s * (e2 * e2 + e3 * e3);",
        "R01 = s * (e1 * e2 - e0 * e3);",
        "R02 = s * (e1 * e3 + e0 * e2);",
        "R10 = s * (e1 * e2 + e0 * e3);",
        "R11 = 1.0 - s * (e1 * e1 + e3 * e3);",
        "R12 = s * (e2 * e3 - e0 * e1);",
        "R20 = s * (e1 * e3 - e0 * e2);",
        "R21 = s * (e2 * e3 + e0 * e1);",
        "R22 = 1.0 - s * (e1 * e1 + e2 * e2);",
        f"y_low = ry + R10 * {f(bcx)} + R11 * {f(bcy)} + R12 * {f(bcz)} - fabs(R10) * "
        f"{f(bhx)} - fabs(R12) * {f(bhz)};",
        f"if (y_low < {f(p.ground_level_m)}) return 2;",
    ]
    if tg is not None:
        t_hx, t_hz = tg.width_m / 2 + bhx, tg.length_m / 2 + bhz
        c.append(f"if (y_low < {f(tg.top_m)} && fabs(rx - {f(tg.center_x_m)}) < {f(t_hx)} "
                 f"&& fabs(rz - {f(tg.center_z_m)}) < {f(t_hz)}) return 3;")
    c += ["gx = R00 * wx + R01 * wy + R02 * wz;",
          "gy = R10 * wx + R11 * wy + R12 * wz;",
          "gz = R20 * wx + R21 * wy + R22 * wz;",
          f"k = {f(p.rope_axial_stiffness_n)} / l0;",
          f"c = {f(p.rope_damping_time_s)} * k;",
          "if (tens) for (i = 0; i < 4; i++) tens[i] = 0.0;"]
    for i, (px, py, pz, sx, sz) in enumerate(ropes):
        c.append(f"""{{  /* rope {i} */
    double ax = R00 * {f(px)} + R01 * {f(py)} + R02 * {f(pz)};
    double ay = R10 * {f(px)} + R11 * {f(py)} + R12 * {f(pz)};
    double az = R20 * {f(px)} + R21 * {f(py)} + R22 * {f(pz)};
    double dx = xt + {f(sx)} - rx - ax;
    double dy = yt - ry - ay;
    double dz = zg + {f(sz)} - rz - az;
    double L = sqrt(dx * dx + dy * dy + dz * dz);
    double e = L - l0;
    if (e > 0.0) {{
        double ld = (dx * (vt - vx - gy * az + gz * ay) + dy * (wt - vy - gz * ax + gx * az)
                     + dz * (vg - vz - gx * ay + gy * ax)) / L;
        double T = k * e + c * ld;
        if (T > 0.0) {{
            double f = T / L;
            double fx = f * dx, fy = f * dy, fz = f * dz;
            Fx += fx;
            Fy += fy;
            Fz += fz;
            Mx += ay * fz - az * fy;
            My += az * fx - ax * fz;
            Mz += ax * fy - ay * fx;
            hoist += T + 0.5 * k * e * e / l0;
            if (tens) tens[{i}] = T;
        }}
    }}
}}""")
    c += [f"d_vg = (fg - Fz) / {f(m_zg)};",
          f"d_vt = (ft - Fx) / {f(m_xt)};",
          f"d_wt = -{f(g)} - ({f(p.trolley_vertical_stiffness_n_m)} * (yt - "
          f"{f(p.trolley_rest_height_m)}) + {f(p.trolley_vertical_damping_ns_m)} * wt + Fy) / "
          f"{f(m_t)};",
          f"d_vh = (fh - hoist) / {f(m_h)};",
          f"refs[0] = refs[1] = c12 > 0.5 ? {f(dn)} : {f(up)};",
          f"refs[2] = refs[3] = c34 > 0.5 ? {f(dn)} : {f(up)};",
          f"refs[4] = c5 > 0.5 ? {f(dn)} : {f(up)};",
          f"refs[5] = c6 > 0.5 ? {f(dn)} : {f(up)};",
          "fast = !tens;",
          "for (i = 0; i < 6; i++) if (!(th[i] == refs[i] && om[i] == 0.0)) fast = 0;"]
    if tg is not None:
        c.append(f"if (!(ry - {f(tg.top_m)} >= {f(reach)})) fast = 0;")
    c += ["if (fast) {",
          "    for (i = 0; i < 6; i++) dom[i] = 0.0;",
          "} else {",
          _indent(_arms_c(a, body, tg, hinges, reach)),
          "}"]
    if qd > 0.0:
        c += [f"{{\n    double ux = {f(uwx)} - vx, uy = {f(uwy)} - vy, uz = {f(uwz)} - vz;",
              "    double sp = sqrt(ux * ux + uy * uy + uz * uz);",
              f"    Fx += {f(ax_)} * ux * sp;",
              f"    Fy += {f(ay_)} * uy * sp;",
              f"    Fz += {f(az_)} * uz * sp;\n}}"]
    c += ["tx = R00 * Mx + R10 * My + R20 * Mz;",
          "ty = R01 * Mx + R11 * My + R21 * Mz;",
          "tz = R02 * Mx + R12 * My + R22 * Mz;",
          f"hx = {f(J[0])} * wx + {f(J[1])} * wy + {f(J[2])} * wz;",
          f"hy = {f(J[3])} * wx + {f(J[4])} * wy + {f(J[5])} * wz;",
          f"hz = {f(J[6])} * wx + {f(J[7])} * wy + {f(J[8])} * wz;",
          "tx -= wy * hz - wz * hy;",
          "ty -= wz * hx - wx * hz;",
          "tz -= wx * hy - wy * hx;",
          f"q = {f(0.5 * p.quaternion_stabilization_per_s)} * (n2 - 1.0);",
          "d[0] = vg; d[1] = vt; d[2] = wt; d[3] = -vh; d[4] = vx; d[5] = vy; d[6] = vz;",
          "d[7] = 0.5 * (-e1 * wx - e2 * wy - e3 * wz) - q * e0;",
          "d[8] = 0.5 * (e0 * wx - e3 * wy + e2 * wz) - q * e1;",
          "d[9] = 0.5 * (e3 * wx + e0 * wy - e1 * wz) - q * e2;",
          "d[10] = 0.5 * (-e2 * wx + e1 * wy + e0 * wz) - q * e3;",
          "d[11] = d_vg; d[12] = d_vt; d[13] = d_wt; d[14] = d_vh;",
          f"d[15] = Fx * {f(1.0 / body.mass)};",
          f"d[16] = Fy * {f(1.0 / body.mass)} - {f(g)};",
          f"d[17] = Fz * {f(1.0 / body.mass)};"]
    for r in range(3):
        c.append(f"d[{18 + r}] = {f(Ji[3 * r])} * tx + {f(Ji[3 * r + 1])} * ty + "
                 f"{f(Ji[3 * r + 2])} * tz;")
    c += ["for (i = 0; i < 6; i++) {", "    d[21 + i] = om[i];", "    d[27 + i] = dom[i];",
          "}", "return 0;"]
    sig = ("(const double *x, double fg, double ft, double fh, double c12, double c34, "
           "double c5, double c6, double *d, double *tens, double *ctq)")
    text = "{\n" + _indent("\n".join(c)) + "\n}"
    name = "cosim_gantry_crane_" + hashlib.sha1(text.encode()).hexdigest()[:16]
    return name, f"/* blocks.cranes GantryCrane: make_rhs */\nstatic int {name}{sig}\n{text}"


def _arms_c(a: Any, body: Any, tg: Any, hinges: list, reach: float) -> str:
    """The C of ``make_arm_dynamics``'s ``arms`` (accumulated into Fx.., Mx.. as the rhs
    does with its result)."""
    f = c_float
    up, dn, tm = a.up_angle_rad, a.down_angle_rad, a.torque_max_nm
    ks, cs = a.stop_stiffness_nm_per_rad, a.stop_damping_nms_per_rad
    kc, cc = a.contact_stiffness_nm_per_rad, a.contact_damping_nms_per_rad
    la, inv_j = a.length_m, 1.0 / a.inertia_kgm2
    c = ["double aFx = 0.0, aFy = 0.0, aFz = 0.0, aMx = 0.0, aMy = 0.0, aMz = 0.0;",
         "for (i = 0; i < 6; i++) {",
         "    double t = th[i], w = om[i], s;",
         f"    double T = {f(a.gain_nm_per_rad)} * (refs[i] - t);",
         f"    if (T > {f(tm)}) T = {f(tm)};",
         f"    else if (T < {f(-tm)}) T = {f(-tm)};",
         f"    T -= {f(a.damping_nms_per_rad)} * w;",
         f"    if (t > {f(up)}) {{",
         f"        s = {f(ks)} * (t - {f(up)}) + {f(cs)} * w;",
         "        if (s > 0.0) T -= s;",
         f"    }} else if (t < {f(dn)}) {{",
         f"        s = {f(ks)} * ({f(dn)} - t) - {f(cs)} * w;",
         "        if (s > 0.0) T += s;",
         "    }",
         f"    dom[i] = T * {f(inv_j)};",
         "}"]
    if tg is not None:
        tx, tz, top = tg.center_x_m, tg.center_z_m, tg.top_m
        half = {0: tg.width_m / 2, 2: tg.length_m / 2}
        c += ["if (ctq) for (i = 0; i < 6; i++) ctq[i] = 0.0;",
              f"if (ry - {f(top)} < {f(reach)}) {{"]
        for i, (h, o) in enumerate(zip(hinges, body.outward, strict=True)):
            k = 0 if abs(o[0]) >= abs(o[2]) else 2
            sg = 1.0 if o[k] > 0 else -1.0
            hn, hl = half[k], half[2 - k]
            hx, hy, hz = h
            if k == 0:
                cn = f"c_n = {f(hn)} + {f(sg)} * ({f(tx)} - rx - px);\n            " \
                     f"lat = rz + pz - {f(tz)};"
                qa, qo = "px", "pz"
                acc = ("aFx += fa;\naFy += fy;\naMx -= qo * fy;\naMy += qo * fa;\n"
                       "aMz += qa * fy - qy * fa;")
            else:
                cn = f"c_n = {f(hn)} + {f(sg)} * ({f(tz)} - rz - pz);\n            " \
                     f"lat = rx + px - {f(tx)};"
                qa, qo = "pz", "px"
                acc = ("aFz += fa;\naFy += fy;\naMx += qy * fa - qa * fy;\naMy -= qo * fa;\n"
                       "aMz += qo * fy;")
            c.append(f"""    {{  /* arm {i + 1} */
        double px = R00 * {f(hx)} + R01 * {f(hy)} + R02 * {f(hz)};
        double py = R10 * {f(hx)} + R11 * {f(hy)} + R12 * {f(hz)};
        double pz = R20 * {f(hx)} + R21 * {f(hy)} + R22 * {f(hz)};
        double c_y = {f(top)} - ry - py, c_n, lat;
        if (!(c_y >= 0.0 || c_y <= {f(-la)})) {{
            {cn}
            if (!(c_n <= 0.0 || lat > {f(hl)} || lat < {f(-hl)})) {{
                double r2 = c_n * c_n + c_y * c_y, rho, alpha, t = th[{i}];
                if (r2 <= {f(la)} * {f(la)}) {{
                    rho = sqrt(r2);
                    alpha = atan2(c_y, c_n);
                }} else {{
                    rho = {f(la)};
                    alpha = asin(c_y / {f(la)});
                }}
                if (!(t >= alpha)) {{
                    double Tc = {f(kc)} * (alpha - t) - {f(cc)} * om[{i}];
                    if (!(Tc <= 0.0)) {{
                        double f = Tc / rho, st = sin(t), ct = cos(t);
                        double fa = -st * {f(sg)} * f, fy = ct * f;
                        double qa = {qa} + {f(sg)} * rho * ct, qy = py + rho * st;
                        double qo = {qo};
                        dom[{i}] += Tc * {f(inv_j)};
                        if (ctq) ctq[{i}] = Tc;
{_indent(acc, 24)}
                    }}
                }}
            }}
        }}
    }}""")
        c.append("}")
    else:
        c.append("if (ctq) for (i = 0; i < 6; i++) ctq[i] = 0.0;")
    c.append("Fx += aFx;\nFy += aFy;\nFz += aFz;\nMx += aMx;\nMy += aMy;\nMz += aMz;")
    return "\n".join(c)


def _indent(code: str, n: int = 4) -> str:
    return "\n".join((" " * n + ln) if ln else ln for ln in code.split("\n"))
