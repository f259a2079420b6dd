r"""Index-3 augmented Lagrangian with projections (ALI3-P) as a block: ``Index3Stepper``.

A block that advances a :class:`~.mechanism.Mechanism` with its own fixed step ``h``:
the trapezoidal rule on the index-3 equations of motion, Newton on the dynamic
equilibrium at ``t_{n+1}``, mass-orthogonal projections of the velocities and
accelerations (equations: :mod:`.ali3p`).  It is the library's formulation for
mechanisms that pass *singular positions* (the Jacobian loses rank for an instant,
e.g. the IFToMM A02 chain of four-bars when all bars lie on the ground line): the
augmented Lagrangian keeps every matrix positive definite there, and the penalty
continuation and stagnation-tolerant projections of :mod:`.ali3p` keep it converging.
Its state is discrete (``q, v, v̇, λ*``) and advanced by a periodic update every ``h``;
run it with a fixed-step simulator whose ``dt`` divides ``h`` (normally ``dt = h``).

Example (the A02 chain, ``bench/multibody_chain.py``)::

    from blocks.multibody import Index3Stepper
    blk = Index3Stepper("chain", mech, 1e-3, markers=["crank0.Q"])
    b = DiagramBuilder("a02"); b.add(blk)
    res = Simulator(b.build(), solver="rk4", dt=1e-3).run(20.0)

Loads
-----
The load inputs are read at ``t_n``; the trapezoidal rule needs them at ``t_{n+1}``:
``load_extrapolation="linear"`` (default) uses ``2 F_n - F_{n-1}`` (second order for
smooth loads; a step in a load is overshot by its size for one step),
``"hold"`` uses ``F_n`` (first order for varying loads).  The start-up accelerations
``v̇_0, λ*_0`` are computed at the first update, with the loads at ``t_0`` (before, a
constant drive torque given as a load was missing from them, and the start-up error made
the method first order).

Monitors
--------
* *branch*: the kinetic energy a velocity projection removes in one step
  (``½ δv' M δv``), over ``max(T, 1e-3 T_peak)``, above ``branch_tol`` stops the run:
  the solution left the motion it was on (typically a singular position crossed with too
  large a step).  Regular steps remove ``O(h^4)`` of it (measured 1e-9 on the A02 chain
  at 1 ms); the running maximum is the ``projection_loss`` output.
* *Newton*: no convergence in ``max_iter`` iterations stops the run with the residual,
  the worst row, the tolerance in metres and the penalty reached.

Ports: :class:`Index3Stepper`.

State (discrete): ``q, v, vdot, lam`` (``λ*``), ``iterations``, ``started``,
``loads_prev``, ``kinetic_peak``, ``projection_loss``.  Initial state: the assembled
configuration (``Mechanism.assemble``).

Measured (``tests/system/test_multibody_index3.py``, ``test_multibody_chain.py``): second
order in ``h``; the A02 chain (N = 2 and 40) follows the exact parallelogram-branch
solution through every singular position at steps whose grids fall at any phase of the
singular instants.  Limitations: the velocity projection removes kinetic energy slowly
(``O(h^3)`` per unit time); ``force_jacobians="fd"`` uses the dense path (cost ``nv^3``
per iteration); contact elements that need the impact speed use their fallback (no
zero-crossing events in a discrete block).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim import Block
from cosim.errors import BuildError, StepError
from cosim.params import COUNT, NON_NEGATIVE, POSITIVE, Number, one_of, refuse

from .ali3p import ALI3P
from .block import declare_load_inputs, declare_marker_outputs, reaction_rows
from .bodies import Kin
from .finite import check_state
from .formulations import Formulation

JACOBIANS = ("neglect", "fd")
EXTRAPOLATIONS = ("linear", "hold")


class Index3Stepper(Block):
    r"""ALI3-P integration of a mechanism as a sampled block (see module docstring).

    .. math::

        M \dot v + J^T (\alpha c + \lambda^*) = Q(q, v, t), \qquad
        \lambda^*_{i+1} = \lambda^*_i + \alpha c_{i+1}, \qquad
        \Delta = h v_n + \tfrac{h^2}{4} (\dot v_n + \dot v_{n+1})

    (the trapezoidal rule on the displacement :math:`\Delta` of the step, Newton on the
    dynamic equilibrium at :math:`t_{n+1}`, then projections: :mod:`.ali3p`).

    Ports
    -----
    in   <load>               (dim,) [N or N*m]  a force at a marker, or a torque, per
                                                 ``Mechanism.add_load``
    out  q                    (nq,) [no unit]    generalized coordinates; sampled, state only
    out  v                    (nv,) [no unit]    velocity variables; sampled, state only
    out  <body>_<marker>_pos  (dim,) [m]         marker origin, global; sampled, state only
    out  <body>_<marker>_vel  (dim,) [m/s]       its velocity; sampled, state only
    out  <joint>_reaction     (rows,) [no unit]  ``-λ*`` of the joint's rows (what it
                                                 applies to body j); sampled
    out  iterations           scalar [no unit]   Newton iterations of the step that produced
                                                 the state (int)
    out  projection_loss      scalar [no unit]   largest fraction of kinetic energy one
                                                 velocity projection removed so far (the
                                                 branch monitor's figure)

    Parameters
    ----------
    mechanism : Mechanism
    step_s : float
        Integration step ``h`` [s] (the block's period).
    markers, reactions : as for :class:`~.block.MultibodyBlock`.
    penalty : float
        ``β / max(diag M)`` with ``β = h²/4 α``: dimensionless, independent of ``h``.
    tol : float
        Newton tolerance relative to the mechanism's length scale.
    max_iter : int
        Newton iteration limit per step.
    ptol, max_projection : relative projection tolerance and pass limit.
    penalty_max : float
        Upper limit of the penalty continuation (:mod:`.ali3p`).
    force_jacobians : ``"neglect"`` or ``"fd"`` (:mod:`.ali3p`).
    projections : False skips the projections (plain index-3 trapezoidal scheme; for
        comparison: it diverged on the four-bar after ~1.7 s at h = 2-4 ms).
    load_extrapolation : ``"linear"`` or ``"hold"`` (module docstring).
    branch_tol : float
        Branch monitor threshold (module docstring); ``None`` disables it.
    compiled : None (compiled kernels when available), True or False.
    strict : refuse inconsistent initial conditions instead of correcting them.
    """

    argument_checks = {"step_s": POSITIVE, "penalty": POSITIVE, "tol": POSITIVE, "max_iter": COUNT,
                       "ptol": POSITIVE, "max_projection": NON_NEGATIVE,
                       "penalty_max": Number(low=0.0, low_open=True, infinite=True),
                       "branch_tol": Number(low=0.0, infinite=True),
                       "force_jacobians": one_of(*JACOBIANS),
                       "load_extrapolation": one_of(*EXTRAPOLATIONS)}

    def __init__(self, name: str, mechanism: Any, step_s: float, *, markers: tuple = (),
                 reactions: tuple = (), penalty: float = 1e4, tol: float = 1e-10,
                 max_iter: int = 30, ptol: float = 1e-12, max_projection: int = 10,
                 penalty_max: float = 1e8, force_jacobians: str = "neglect",
                 projections: bool = True, load_extrapolation: str = "linear",
                 branch_tol: float | None = 1e-4, compiled: bool | None = None,
                 strict: bool = False) -> None:
        super().__init__(name)
        if not penalty_max >= penalty:
            raise refuse(self, "penalty_max", penalty_max,
                         f"a number >= penalty = {penalty!r} (dimensionless: the constraint "
                         "term of the Newton matrix over max diag M; 1e2 to 1e6 work)")
        mech = mechanism
        mech.finalize()
        self.mech, self.h = mech, float(step_s)
        try:
            self.solver = ALI3P(mech, self.h, penalty=penalty, tol=tol, max_iter=max_iter,
                                ptol=ptol, max_projection=max_projection,
                                penalty_max=penalty_max, force_jacobians=force_jacobians,
                                projections=projections, compiled=compiled, name=name)
        except StepError as exc:
            raise BuildError(str(exc)) from None
        self.extrapolate = load_extrapolation == "linear"
        self.branch_tol = branch_tol
        self.assembly = mech.assemble(strict=strict)
        q0, v0 = mech.q_init.copy(), mech.v_init.copy()
        a0, lam0 = self._initial_accelerations(q0, v0, 0.0, None)
        self.q = self.declare_discrete_state("q", q0)
        self.v = self.declare_discrete_state("v", v0)
        self.vdot = self.declare_discrete_state("vdot", a0)
        self.lam = self.declare_discrete_state("lam", lam0)
        self.iters = self.declare_discrete_state("iterations", 0)
        self.started = self.declare_discrete_state("started", 0)
        self._loads = declare_load_inputs(self, mech)
        self._load_sizes = [int(np.prod(p.shape)) for _, p in self._loads]
        self.loads_prev = self.declare_discrete_state("loads_prev",
                                                      np.zeros(sum(self._load_sizes)))
        self.kpeak = self.declare_discrete_state("kinetic_peak", 0.0)
        self.ploss = self.declare_discrete_state("projection_loss", 0.0)
        self.declare_output("q", lambda ctx: np.array(ctx.discrete(self.q)), shape=(mech.nq,),
                            depends_on=())
        self.declare_output("v", lambda ctx: np.array(ctx.discrete(self.v)), shape=(mech.nv,),
                            depends_on=())
        self.declare_output("iterations", lambda ctx: ctx.discrete(self.iters), dtype=int,
                            depends_on=())
        self.declare_output("projection_loss", lambda ctx: float(ctx.discrete(self.ploss)),
                            depends_on=())
        declare_marker_outputs(self, mech, markers, self._marker_out)
        for jname, rows in reaction_rows(self, mech, reactions):
            self.declare_output(f"{jname}_reaction",
                                lambda ctx, r=rows: -np.array(ctx.discrete(self.lam)[r]),
                                shape=(rows.stop - rows.start,), depends_on=())
        self.declare_periodic_update(self.h, self._update)
        if self.solver.compiled:  # compile (or load from the cache) at build time
            try:
                self.solver.step(q0, v0, a0, lam0, 0.0, None)
            except StepError:  # only the compilation matters here; the run reports it
                pass

    # ------------------------------------------------------------ set-up
    def _initial_accelerations(self, q: np.ndarray, v: np.ndarray, t: float,
                               loads: dict | None) -> tuple:
        mech = self.mech
        try:
            return mech.accelerations(q, v, t, Formulation("lagrange"), loads)
        except StepError:  # redundant constraints or a singular start: augmented Lagrangian
            form = Formulation("augmented_lagrangian", penalty=1e7, omega=0.0, mu=0.0,
                               iterations=30)
            return mech.accelerations(q, v, t, form, loads)

    def _marker_out(self, m: Any):
        def calc(ctx):
            k = Kin(m.body, ctx.discrete(self.q), ctx.discrete(self.v))
            p, _, pd, _ = k.point(m.s, with_jac=False)
            return p.copy(), pd.copy()
        return calc

    # ------------------------------------------------------------ stepping
    def _load_vector(self, loads: dict) -> np.ndarray:
        if not self._loads:
            return np.zeros(0)
        return np.concatenate([np.ravel(loads[n]) for n, _ in self._loads]).astype(float)

    def _load_dict(self, vec: np.ndarray) -> dict:
        out, k = {}, 0
        for (n, p), size in zip(self._loads, self._load_sizes):
            out[n] = vec[k:k + size].reshape(p.shape) if p.shape else float(vec[k])
            k += size
        return out

    def _update(self, ctx: Any) -> None:
        loads = {n: ctx.input(p) for n, p in self._loads}
        q, v = ctx.discrete(self.q), ctx.discrete(self.v)
        a, lam = ctx.discrete(self.vdot), ctx.discrete(self.lam)
        now = self._load_vector(loads)
        if not np.isfinite(now).all():
            bad = next(n for n, _ in self._loads if not np.isfinite(loads[n]).all())
            raise StepError(f"block '{self.path}' at t = {ctx.time:.9g} s: load input "
                            f"'{bad}' is {loads[bad]}, not finite; check what feeds it")
        if not ctx.discrete(self.started):  # start-up with the loads at t_0
            a, lam = self._initial_accelerations(q, v, ctx.time, loads or None)
            prev = now
            ctx.set_discrete(self.started, 1)
        else:
            prev = np.asarray(ctx.discrete(self.loads_prev), float)
        nxt = 2.0 * now - prev if self.extrapolate else now
        q1, v1, a1, lam1, info = self.solver.step(q, v, a, lam, ctx.time,
                                                  self._load_dict(nxt) if loads else None)
        check_state(self.mech, q1, v1, ctx.time + self.h, f"block '{self.path}' "
                    "(Index3Stepper)", last=(q, v, ctx.time))
        self._check_branch(ctx, info)
        ctx.set_discrete(self.q, q1)
        ctx.set_discrete(self.v, v1)
        ctx.set_discrete(self.vdot, a1)
        ctx.set_discrete(self.lam, lam1)
        ctx.set_discrete(self.iters, info["iterations"])
        ctx.set_discrete(self.loads_prev, now)

    def _check_branch(self, ctx: Any, info: dict) -> None:
        kin = info["kinetic"]
        peak = max(float(ctx.discrete(self.kpeak)), kin)
        ctx.set_discrete(self.kpeak, peak)
        if peak <= 0.0:
            return
        frac = info["energy_removed"] / max(kin, 1e-3 * peak)
        if frac > ctx.discrete(self.ploss):
            ctx.set_discrete(self.ploss, frac)
        if self.branch_tol is not None and frac > self.branch_tol:
            raise StepError(
                f"block '{self.path}' at t = {ctx.time + self.h:.9g} s: the velocity "
                f"projection removed {frac:.3g} of the kinetic energy in one step (branch_tol "
                f"= {self.branch_tol:g}): the solution left the motion it was on, typically a "
                "singular position crossed with too large a step; reduce step_s")

    def step(self, q: np.ndarray, v: np.ndarray, a: np.ndarray, lam: np.ndarray, t: float,
             loads: dict | None = None) -> tuple:
        """One ALI3-P step from ``t`` outside a diagram: ``(q, v, v̇, λ*, info)`` at
        ``t + h`` (``loads``: the load inputs at ``t + h``; ``info``: :meth:`.ALI3P.step`)."""
        return self.solver.step(q, v, a, lam, t, loads)

    def initial_accelerations(self, q: np.ndarray, v: np.ndarray, t: float = 0.0,
                              loads: dict | None = None) -> tuple:
        """``(v̇_0, λ*_0)`` at a consistent ``(q, v, t)`` with the given loads."""
        return self._initial_accelerations(q, v, t, loads)
