"""The mechanism as a block: loads in, kinematics and reactions out (the force-primitive ports).

Ports: :class:`MultibodyBlock`.

State: ``x = [q, v]`` with ``q' = T(q) v`` and ``v̇`` from the formulation
(:mod:`.formulations`); the layout of ``q`` and ``v`` per body is
``Mechanism.layout()``.  Initial state: the mechanism's assembled (consistent)
configuration, see ``Mechanism.assemble``; its report is ``block.assembly``.

Monitors (after every accepted solver step; a failure stops the run with a
:class:`~cosim.errors.StepError` saying what and what to do):

* *singular positions*: the rank measure ``rho`` of the constraint Jacobian
  (``Mechanism.rank_measure``: the squared sine of the smallest angle between a row and
  the others, the angular columns divided by a body length, so that ``rho`` is the same
  in any units: the same mechanism in m, mm and km reads the same,
  ``tests/system/test_multibody_scale.py``) below ``singular_tol``, or more dependent
  rows than at assembly.  None of
  these formulations passes a singular position reliably (measured on the IFToMM A02
  chain of four-bars: the result depends on where the time grid falls relative to the
  singular instant, ``tests/system/test_multibody_chain.py``), so the run stops there
  instead of continuing on a possibly wrong branch; ``Index3Stepper`` passes them.
  ``singular=True`` says at build time that the mechanism passes singular positions:
  refused here, with that advice.
* *drift*: ``max |Phi_r| / scale_r`` (``Mechanism.row_scale``: a length error over the
  mechanism's length scale, or an angle) above ``drift_tol``: the solution left its
  constraint manifold.

C form (``Simulator(compiled=True)``): :mod:`.cform`, the block's compiled kernels called
from C (bit for bit the Python loop's); the monitors above are Python callbacks and keep a
diagram in the Python loop (``singular_tol=0, drift_tol=None`` turn them off), and
:mod:`.cform` names what else has no C form.

Limitation: the rank measure is computed at the accepted states only; a variable-step
solver that steps over a singular position without landing near it is caught by the
drift monitor or not at all (the fixed-step grid of RK4 at 1 ms lands within
``singular_tol`` of every singular passage of the A02 chain, whose cranks turn at up to
5 rad/s: ``tests/system/test_multibody_chain.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim import Block
from cosim.block import did_you_mean
from cosim.errors import BuildError, StepError
from cosim.params import NON_NEGATIVE, POSITIVE, Number

from .bodies import Kin, planar_point
from .finite import check_singular
from .formulations import Formulation


def declare_load_inputs(block: Block, mech: Any) -> list:
    """One input per ``Mechanism.add_load``: ``[(name, port)]``."""
    dim, out = mech.dim, []
    for lname in mech.load_names:
        kind, _ = mech.loads[lname]
        shape = (dim,) if kind == "force" else (() if dim == 2 else (3,))
        out.append((lname, block.declare_input(lname, shape=shape,
                                               unit="N" if kind == "force" else "N*m")))
    return out


def declare_marker_outputs(block: Block, mech: Any, markers: Any, marker_out: Any) -> None:
    """``<body>_<marker>_pos`` and ``_vel`` outputs, computed together by the calc
    ``marker_out(m)`` (returns ``(position, velocity)``)."""
    for ref in markers:
        m = mech._m(ref)
        base = f"{m.body.name}_{m.name}"
        block.declare_outputs([{"name": f"{base}_pos", "shape": (mech.dim,), "unit": "m"},
                               {"name": f"{base}_vel", "shape": (mech.dim,), "unit": "m/s"}],
                              marker_out(m), depends_on=())


def reaction_rows(block: Block, mech: Any, reactions: Any) -> list:
    """``[(joint, rows)]`` for the reaction outputs, or an error naming the unknown joint."""
    out = []
    for jname in reactions:
        if jname not in mech.joints:
            raise BuildError(f"block '{block.name}': joint '{jname}' not found; "
                             + did_you_mean(jname, mech.joints))
        out.append((jname, mech.joint_rows[jname]))
    return out


class MultibodyBlock(Block):
    r"""A :class:`~blocks.multibody.mechanism.Mechanism` as a block (see module docstring).

    .. math::

        \dot q = T(q)\,v, \qquad M(q)\,\dot v + \Phi_q^T \lambda = Q(q, v, t),
        \qquad \Phi(q, t) = 0

    with the constraints enforced by the chosen ``formulation``
    (:mod:`~blocks.multibody.formulations`).

    Ports
    -----
    in   <load>                (dim,) [N or N*m]  a force at a marker, or a torque
                                                  (planar: scalar, spatial: (3,)), one per
                                                  ``Mechanism.add_load``
    out  q                     (nq,) [no unit]    generalized coordinates; state only
    out  v                     (nv,) [no unit]    velocity variables; state only
    out  <body>_<marker>_pos   (dim,) [m]         marker origin, global; state only
    out  <body>_<marker>_vel   (dim,) [m/s]       its velocity; state only
    out  <joint>_reaction      (rows,) [no unit]  what the joint applies to body j, per
                                                  constraint row: ``-λ`` (a point
                                                  constraint: the force in N, global; an
                                                  angle driver: the torque in N m; other
                                                  rows in the units of their equation);
                                                  reads the loads

    Parameters
    ----------
    mechanism : Mechanism
    formulation : str or Formulation
        ``lagrange`` (with ``alpha``/``beta`` Baumgarte), ``penalty``,
        ``augmented_lagrangian``, ``projection`` or ``partitioning``.
    markers : list of ``"body.marker"``
        Markers whose position and velocity become outputs.
    reactions : list of joint names
        Joints whose constraint forces become outputs.
    project_every_s : float
        Period of the position/velocity correction (``projection`` and
        ``partitioning``; give the solver step).
    strict : bool
        Refuse inconsistent initial conditions instead of correcting them.
    breakpoints_s : list of float, optional
        Times where driving functions or forces are not smooth (gait phase
        switches, impacts): the integrator stops exactly there.
    singular : bool
        The mechanism passes singular positions: refused (see module docstring).
    singular_tol : float
        Rank measure below which the run stops (0 disables the check).
    drift_tol : float or None
        Constraint drift (relative) above which the run stops (None disables it).
    **formulation_options
        Options of the formulation (``alpha``, ``beta`` of ``"lagrange"``, the penalty
        of ``"penalty"``, ...: :mod:`~blocks.multibody.formulations`).
    """

    argument_checks = {"project_every_s": POSITIVE, "singular_tol": NON_NEGATIVE,
                       "drift_tol": Number(low=0.0, infinite=True)}

    def __init__(self, name: str, mechanism: Any, formulation: Any = "lagrange", *,
                 markers: tuple = (), reactions: tuple = (), project_every_s: float | None = None,
                 strict: bool = False, breakpoints_s: Any = None, singular: bool = False,
                 singular_tol: float = 1e-3, drift_tol: float | None = 1e-3,
                 **formulation_options: Any) -> None:
        super().__init__(name)
        mech = mechanism
        mech.finalize()
        self.mech = mech
        self.form = formulation if isinstance(formulation, Formulation) else \
            Formulation(formulation, **formulation_options)
        if singular:
            raise BuildError(
                f"block '{name}': mechanism '{mech.name}' passes singular positions "
                f"(singular=True), and the {self.form.kind} formulation of MultibodyBlock "
                "cannot pass them reliably (its result depends on where the time steps fall "
                "relative to the singular instant: measured on the IFToMM A02 chain); "
                "simulate it with blocks.multibody.Index3Stepper (index-3 augmented "
                "Lagrangian with projections)")
        self.singular_tol, self.drift_tol = float(singular_tol), drift_tol
        self.assembly = mech.assemble(strict=strict)
        self.x = self.declare_continuous_state("x", np.concatenate([mech.q_init, mech.v_init]))
        self._loads = declare_load_inputs(self, mech)
        nq = mech.nq
        self.q = self.declare_output("q", lambda ctx: np.array(ctx.state(self.x)[:nq]),
                                     shape=(nq,), depends_on=())
        self.v = self.declare_output("v", lambda ctx: np.array(ctx.state(self.x)[nq:]),
                                     shape=(mech.nv,), depends_on=())
        declare_marker_outputs(self, mech, markers, self._marker_out)
        self._markers = [mech._m(ref) for ref in markers]  # (the C form's outputs)
        self._reactions = reaction_rows(self, mech, reactions)
        for jname, rows in self._reactions:
            self.declare_output(f"{jname}_reaction", self._reaction_out(rows),
                                shape=(rows.stop - rows.start,))
        if self.form.kind in ("projection", "partitioning"):
            if not project_every_s:
                raise BuildError(f"block '{name}': the {self.form.kind} formulation needs "
                                 "project_every_s (the solver step)")
            self.declare_periodic_update(project_every_s, self._project)
        if self.form.kind == "partitioning":  # kept while well conditioned (a state)
            _, J0, _, _ = mech.constraints(mech.q_init, mech.v_init, 0.0)
            self._part = self.declare_discrete_state(
                "partition", mech.partition(J0[mech.holonomic]).astype(float))
        # contacts that need the approach speed: recorded when the contact starts
        self._impact = {}
        for e in mech.elements.values():
            if getattr(e, "needs_impact_speed", False):
                h = self.declare_discrete_state(f"impact_{e.name}", 0.0)
                self._impact[e.name] = h
                self.declare_zero_crossing(self._witness(e), self._on_contact(e, h),
                                           direction=1, name=f"contact_{e.name}")
        if breakpoints_s is not None and len(breakpoints_s):
            self.declare_time_event(sorted(set(float(b) for b in breakpoints_s)))
        # one compiled call per derivative (loads and force elements evaluated in Python
        # and passed in as generalized forces)
        self._fused = (mech._tables is not None and not mech.rows.reduced
                       and self.form.kind in ("lagrange", "projection", "partitioning")
                       and mech.m > 0)
        self._external = bool(mech.elements or self._loads)
        lag = self.form.kind == "lagrange"
        self._alpha = self.form.alpha if lag else 0.0
        self._beta = self.form.beta if lag else 0.0
        self._redundant = len(self.assembly["redundant"]) + len(self.assembly["dropped"])
        if mech.m and (self.singular_tol > 0 or drift_tol is not None):
            self.declare_monitor(self._check_constraints, name="constraints")
        if self._fused:  # compile (or load from the cache) at build time, not in the run
            mech._tables.derivative(mech.q_init, mech.v_init, 0.0, mech.Minv, self._alpha,
                                    self._beta)

    def _split(self, ctx: Any) -> tuple[np.ndarray, np.ndarray]:
        x = ctx.state(self.x)
        return x[:self.mech.nq], x[self.mech.nq:]

    def _loads_of(self, ctx: Any) -> dict:
        return {n: ctx.input(p) for n, p in self._loads}

    def _memory(self, ctx: Any) -> dict | None:
        return {n: ctx.discrete(h) for n, h in self._impact.items()} if self._impact else None

    def _witness(self, element: Any):
        def witness(ctx):
            q, v = self._split(ctx)
            return element.penetration(self.mech.kins(q, v))[0]
        return witness

    def _on_contact(self, element: Any, handle: Any):
        def handler(ctx):
            q, v = self._split(ctx)
            ctx.set_discrete(handle, abs(element.penetration(self.mech.kins(q, v))[1]))
        return handler

    def _marker_out(self, m: Any):
        if m.body.kind == "planar":  # in floats (bodies.planar_point)
            b, nq = m.body, self.mech.nq
            iq, iv = b.iq, nq + b.iv
            s0, s1 = m.s.tolist()

            def planar(ctx):
                x = ctx.state(self.x)
                px, py, vx, vy = planar_point(s0, s1, *x[iq:iq + 3].tolist(),
                                              *x[iv:iv + 3].tolist())
                return np.array((px, py)), np.array((vx, vy))
            return planar

        def calc(ctx):
            q, v = self._split(ctx)
            p, _, pd, _ = Kin(m.body, q, v).point(m.s, with_jac=False)
            return p.copy(), pd.copy()
        return calc

    def _reaction_out(self, rows: slice):
        def calc(ctx):
            q, v = self._split(ctx)
            _, lam = self.mech.accelerations(q, v, ctx.time, self.form, self._loads_of(ctx),
                                             self._memory(ctx))
            return -lam[rows]
        return calc

    def derivatives(self, ctx: Any) -> np.ndarray:
        q, v = self._split(ctx)
        if self._fused:
            qe = self.mech.external_forces(q, v, ctx.time, self._loads_of(ctx),
                                           self._memory(ctx)) if self._external else None
            x, ok, _ = self.mech._tables.derivative(q, v, ctx.time, self.mech.Minv,
                                                 self._alpha, self._beta, qe)
            if ok:
                return x  # else: the general path below reports the singular configuration
        vd, _ = self.mech.accelerations(q, v, ctx.time, self.form, self._loads_of(ctx),
                                        self._memory(ctx), reactions=False)
        return np.concatenate([self.mech.qdot(q, v), vd])

    def c_model(self, cg: Any) -> Any:
        """The C form (compiled Simulator): the block's compiled kernels called from C
        (:mod:`.cform`), or a CodegenError naming why not."""
        from .cform import c_model
        return c_model(self, cg)

    def c_form_cold(self) -> str:
        """Why the C form would first wait for a long one-time compilation ('' when it
        would not): ``compiled=None`` keeps the Python loop then (:func:`.cfuncs.cold`)."""
        from .cfuncs import cold
        return cold()

    def state_label(self, handle: Any, i: int) -> str:
        """The name of entry ``i`` of the continuous state (the Simulator names a
        non-finite entry with it): the body and its coordinate."""
        return self.mech.coordinate_name(i)

    def _check_constraints(self, ctx: Any) -> None:
        """The singular-position and drift monitors (module docstring)."""
        mech = self.mech
        q, _ = self._split(ctx)
        if mech._tables is not None:
            rho, dep, drift, worst = mech._tables.monitor(q, ctx.time, mech.holonomic,
                                                         mech.row_scale)
        else:
            rho, dep, phi = mech.rank_measure(q, ctx.time)
            rel = np.where(mech.holonomic, np.abs(phi) / mech.row_scale, 0.0)
            worst = int(np.argmax(rel))
            drift = float(rel[worst])
        if self.singular_tol > 0 and (dep > self._redundant or rho < self.singular_tol):
            check_singular(mech, q, ctx.time, self.singular_tol,
                           f"block '{self.path}' ({self.form.kind})")
        if self.drift_tol is not None and drift > self.drift_tol:
            raise StepError(
                f"mechanism '{mech.name}' at t = {ctx.time:.9g} s: the solution left its "
                f"constraint manifold (relative violation {drift:.3g} > drift_tol = "
                f"{self.drift_tol:g} in '{mech.row_labels[worst]}'); use constraint "
                "stabilization (lagrange with alpha/beta, projection, partitioning), a "
                "smaller step, or Index3Stepper")

    def _project(self, ctx: Any) -> None:
        q, v = self._split(ctx)
        if self.form.kind == "partitioning":
            q, v, dep = self.mech.correct_partitioned(
                q.copy(), v.copy(), ctx.time, dep=np.asarray(ctx.discrete(self._part), int),
                with_partition=True)
            ctx.set_discrete(self._part, np.asarray(dep, float))
        else:
            q = self.mech.project_positions(q.copy(), ctx.time)[0]
            v = self.mech.project_velocities(q, v.copy(), ctx.time)
        ctx.set_state(self.x, np.concatenate([q, v]))
