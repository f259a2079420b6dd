"""Start-up and algebraic-loop settling of the co-simulation master.

:class:`Settler`, held by :class:`~cosim.master.MasterScheduler` as ``master.settler``,
initializes the subsystems, orders the subsystems with direct feedthrough, makes
feedthrough outputs consistent at a communication point (ordered sweeps, or the
algebraic loop solved by Newton, Broyden or fixed-point iteration), and computes the
first macro steps of a high-order start by waveform relaxation.  It uses the master
through the services the couplings use (``MasterScheduler``'s section "used by
couplings" and the interface vectors: :data:`SERVICES`, checked by
``tests/unit/test_master_record.py``), and keeps its own state: the feedthrough order
(:attr:`Settler.subs`, :attr:`Settler.once`, :attr:`Settler.ft_outs`) and its counters.

Non-Real coupled outputs (Boolean, Integer of any width, Enumeration, String,
Binary) are never iterated numerically: each evaluation propagates their new
values as they are, and a point is consistent when, besides the Real residual,
none of them changed in the last evaluation (a discrete loop that never settles,
a Boolean inverter fed back, is the same error as a diverging Real loop).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import BuildError
from .time import SECONDS_PER_TICK, to_ticks

_NS = SECONDS_PER_TICK
_DISCRETE = ("; a non-Real (Boolean, Integer, Enumeration, String, Binary) output changed in "
             "the last evaluation: a discrete loop that does not settle")


#: What the settler uses of its master: the coupling services.
SERVICES = ("subsystems", "sources", "coupled_sources", "histories", "input_polys",
            "feed_inputs", "refresh_subsystem", "step_subsystem", "publish", "interface",
            "loop_solver", "save", "restore", "t", "H", "single_rate", "counters", "record")


class Settler:
    """Initialization and consistent feedthrough outputs of ``master`` (module docstring).

    Attributes
    ----------
    subs : list
        The subsystems with feedthrough, in dependency order (:meth:`order`).
    once : bool
        One sweep in that order settles a communication point exactly (no loop).
    ft_outs : dict
        Per subsystem name, its ``(output, history)`` pairs with feedthrough.
    init_sweeps, startup_sweeps, loop_solves, loop_evaluations : int
        Sweeps that made the initial values consistent, sweeps of the high-order start,
        algebraic loops solved at communication points and their evaluations.
    """

    def __init__(self, master: Any) -> None:
        self.master = master
        self.subs: list = []
        self.once = False
        self.ft_outs: dict[str, list] = {}
        self.init_sweeps = 0
        self.startup_sweeps = 0
        self.loop_solves = 0
        self.loop_evaluations = 0

    def initialize(self, t0_s: float = 0.0, max_iter: int = 50, tol: float = 1e-12) -> None:
        """Initialize the subsystems with their inputs at ``t0``; make the outputs consistent.

        The initial values of connected subsystems are a fixed point of the connections
        at ``t0``.  Every subsystem is initialized (an FMU enters Initialization Mode),
        then each one's inputs are set to the published values at ``t0`` and its initial
        outputs read again (``set_inputs`` + ``refresh_outputs``; an FMU still in
        Initialization Mode, as FMPy sets inputs there):

        * **ordered** when no initial output depends on itself through the connections:
          one sweep in the order of the subsystems' initial dependencies
          (``initial_feedthrough()``: an FMU's ``InitialUnknowns``, FMI 2.0 section 2.2.8,
          FMI 3.0 section 2.4.8), exact; each subsystem ends its initialization
          (``finish_initialization``: an FMU leaves Initialization Mode) right after its
          inputs are set, so the ones downstream get the outputs it has after that (also
          from FMUs that compute their initial values only in ``exitInitializationMode``);
        * **iterated** otherwise (an algebraic loop at initialization): sweeps until
          nothing changes with ``loop_solver="fixed_point"``, else Broyden's secant method
          (the output Jacobians describe the step-mode outputs, not the initialization
          equations, so Newton is not used here); at most ``max_iter`` evaluations; then
          every subsystem ends its initialization.

        Subsystems whose outputs depend on no input at initialization come last (their
        inputs are then final).  Then the feedthrough outputs are made consistent as at
        every communication point.
        """
        m = self.master
        t0 = to_ticks(t0_s, "start time")
        m.t = t0
        for s in m.subsystems:
            s.initialize(t0)
            m.publish(s, t0, s.get_outputs())
        init_subs = self.order(initial=True)
        rest = [s for s in m.subsystems if s not in init_subs]
        self.init_sweeps = 1 if init_subs and m.coupled_sources else 0
        if not self.once:
            solver = "fixed_point" if m.loop_solver == "fixed_point" else "broyden"
            counts = self.loop_solves, self.loop_evaluations  # those count comm. points
            self.init_sweeps = self.settle(t0, init_subs, max_iter, tol, solver=solver)
            self.loop_solves, self.loop_evaluations = counts
        for s in init_subs + rest:
            self._end_initialization(s, t0)
        self.subs = self.order()
        self.settle(t0, m.subsystems, max_iter, tol)

    def _end_initialization(self, s: Any, t0: int) -> None:
        """Give ``s`` its inputs at ``t0``, end its initialization, publish its outputs."""
        m = self.master
        if s.input_names:
            s.set_inputs(t0 * _NS, m.input_polys(s, t0, constant=True))
            m.refresh_subsystem(s)
        finish = getattr(s, "finish_initialization", None)
        if finish is not None:
            finish()
        m.publish(s, t0, s.get_outputs())

    def settle_point(self, t: int, subs: list | None = None) -> None:
        """The feedthrough outputs at the communication point ``t`` made consistent:
        those of ``subs`` (default all of :attr:`subs`), in their order."""
        subs = self.subs if subs is None else subs
        if subs:
            self.settle(t, subs, once=self.once)

    def order(self, initial: bool = False) -> list:
        """Subsystems with feedthrough, in dependency order; sets :attr:`once` and
        :attr:`ft_outs`.

        If no feedthrough output depends (through other subsystems' feedthrough)
        on itself, one sweep in this order settles the communication point
        exactly; otherwise sweeps are repeated until nothing changes.  ``initial``:
        the dependencies at initialization (``initial_feedthrough()``).
        """
        def deps_of(s):
            fn = getattr(s, "initial_feedthrough", None) if initial else None
            return (fn or s.feedthrough)()

        m = self.master
        # feedthrough from connected inputs only (an unconnected optional input is constant)
        ft = {s.name: {o: {i for i in ins if (s.name, i) in m.sources}
                       for o, ins in deps_of(s).items()} for s in m.subsystems}
        # only outputs with feedthrough change when inputs change at a fixed state
        self.ft_outs = {s.name: [(o, m.histories[(s.name, o)]) for o in s.output_names
                                 if ft[s.name].get(o)] for s in m.subsystems}
        subs = [s for s in m.subsystems if any(ft[s.name].get(o) for o in s.output_names)]
        names = {s.name for s in subs}
        deps: dict[str, set[str]] = {s.name: set() for s in subs}
        for s in subs:
            for inp in set().union(*ft[s.name].values()):
                (src, out), _, _ = m.sources[(s.name, inp)]
                if src in names and ft[src].get(out):
                    deps[s.name].add(src)
        order, done = [], set()
        while len(order) < len(subs):
            ready = [s for s in subs if s.name not in done and deps[s.name] <= done]
            if not ready:
                self.once = False
                return subs
            for s in ready:
                order.append(s)
                done.add(s.name)
        self.once = True
        return order

    def settle(self, t: int, subs: list, max_iter: int = 50, tol: float = 1e-12,
                once: bool = False, solver: str | None = None) -> int:
        """Make feedthrough outputs at ``t`` consistent with the published inputs at ``t``.

        Each subsystem in ``subs`` gets its inputs as constants (the published
        values at ``t``) and recomputes its outputs.  ``once``: one sweep in
        dependency order is exact (no loop).  Otherwise the loop solver
        (:meth:`solve_loop`), or with ``"fixed_point"`` sweeps until nothing
        changes.  ``solver``: instead of ``loop_solver``.
        """
        m = self.master
        if not m.coupled_sources:
            return 0  # nothing is connected: nothing to make consistent
        solver = solver or m.loop_solver
        if not once and solver != "fixed_point":
            return self.solve_loop(t, subs, max_iter, tol, solver)
        for sweep in range(1, max_iter + 1):
            change = 0.0
            scale = 0.0
            for s in subs:
                if not s.input_names:
                    continue
                s.set_inputs(t * _NS, m.input_polys(s, t, constant=True))
                m.refresh_subsystem(s)
                outs = s.get_outputs()
                ft_outs = self.ft_outs[s.name]
                if not once:
                    for o, hist in ft_outs:
                        if hist.exact:  # held values: changed or not
                            if not hist.holds(outs[o]):
                                change = float("inf")
                            continue
                        new = np.asarray(outs[o], dtype=float).reshape(-1)
                        change = max(change, float(np.max(np.abs(new - hist.last))))
                        scale = max(scale, float(np.max(np.abs(new))))
                for o, hist in ft_outs:
                    hist.push(t, outs[o])
            if once or change <= tol * (1.0 + scale):
                return sweep
        raise BuildError(f"MasterScheduler: coupling outputs at t = {t * _NS:.9g} s did not "
                         f"become consistent in {max_iter} sweeps (last change {change:.3g}"
                         f"{_DISCRETE if change == float('inf') else ''}); "
                         "the subsystems' feedthrough forms an algebraic loop: use an "
                         "iterative coupling or break the loop")

    def solve_loop(self, t: int, subs: list, max_iter: int, tol: float,
                    solver: str | None = None) -> int:
        """Solve ``z = Psi(z)`` for the coupled outputs at ``t``; returns the evaluations.

        ``Psi``: every subsystem in ``subs`` reads the published values ``z`` as
        constant inputs and recomputes its outputs (states fixed; Schiehlen &
        Scholz's output equations solved together).  Newton with the interface
        Jacobian :meth:`interface_jacobian` (exact for linear feedthrough: two
        evaluations) or Broyden's secant update from ``-I``.  ``z`` holds the Real
        outputs only; the non-Real ones are propagated by the evaluations (module
        docstring) and must come back unchanged: each evaluation publishes them
        subsystem by subsystem (a Gauss-Seidel sweep, which settles a discrete loop
        that a simultaneous update would flip back and forth), the Real outputs
        after all subsystems (``Psi`` of the previous ``z``).
        """
        m = self.master
        z = m.interface.pack_last()
        held = m.interface.exact_last()
        n = z.size
        solver = solver or m.loop_solver
        newton = solver == "newton"
        ft_keys = {(s.name, o) for s in subs for o, _ in self.ft_outs[s.name]}
        Jinv = -np.eye(n)
        dz = g_prev = None
        res = float("inf")
        for it in range(1, max_iter + 1):
            outs = []
            for s in subs:
                if s.input_names:
                    s.set_inputs(t * _NS, m.input_polys(s, t, constant=True))
                    m.refresh_subsystem(s)
                    o = s.get_outputs()
                    outs.append((s, o))
                    for name, hist in self.ft_outs[s.name]:
                        if hist.exact:  # non-Real: propagated at once (Gauss-Seidel)
                            hist.push(t, o[name])
            for s, o in outs:
                for name, hist in self.ft_outs[s.name]:
                    if not hist.exact:
                        hist.push(t, o[name])
            y = m.interface.pack_last()
            g = y - z
            res = float(np.max(np.abs(g), initial=0.0))
            held, same = m.interface.exact_last(), held
            if held != same:
                res = float("inf")  # a non-Real output changed: evaluate again
            elif res <= tol * (1.0 + float(np.max(np.abs(y), initial=0.0))):
                self.loop_evaluations += it
                self.loop_solves += 1
                return it
            if not n:
                continue  # only non-Real outputs: propagate them
            if newton:
                dz = -np.linalg.solve(m.interface.jacobian() - np.eye(n), g)
            else:
                if dz is not None:
                    dg = g - g_prev
                    denom = float(dz @ Jinv @ dg)
                    if denom != 0.0:
                        Jinv = Jinv + np.outer(dz - Jinv @ dg, dz @ Jinv) / denom
                dz = -Jinv @ g
            g_prev = g
            z = z + dz
            for key, val in zip(m.interface.real_sources, m.interface.unpack(z)):
                if key in ft_keys:  # others (no feedthrough, or not stepped) keep theirs
                    m.histories[key].push(t, val if not m.histories[key].scalar
                                          else float(val[0]))
        raise BuildError(f"MasterScheduler: the algebraic loop of feedthrough outputs at t = "
                         f"{t * _NS:.9g} s did not converge in {max_iter} evaluations "
                         f"({solver}, last residual {res:.3g}"
                         f"{_DISCRETE if res == float('inf') else ''}); check the loop "
                         "gain and the subsystems' output Jacobians, or break the loop with "
                         "a delay")

    def startup(self, p: int, max_sweeps: int = 30, tol: float = 1e-12) -> int:
        """First ``p`` macro steps by waveform relaxation; returns ``p``.

        A history of one sample allows only a zero-order hold, whose error on the
        first step (O(H^2) in the states) would cap the global order of any
        extrapolation at 2.  Instead the window ``[t0, t0 + p H]`` is iterated:
        each sweep rolls back to ``t0`` and steps the ``p`` macro steps with every
        input interpolated (order ``p``) through the previous sweep's outputs at
        the window's communication points, until they stop changing.  Then the
        history holds ``p + 1`` consistent samples.  Skipped (zero-order-hold
        start) when a subsystem cannot save its state or runs at a rate above 1.
        """
        m = self.master
        if not m.single_rate or not all(getattr(s, "can_save_state", False)
                                        for s in m.subsystems):
            return 0
        from .errors import LoopConvergenceError
        H, t0 = m.H, m.t
        snap = m.save()
        keys = list(m.histories)
        exact = [m.histories[key].exact for key in keys]
        prev = None
        change, scale = float("inf"), 0.0
        for sweep in range(1, max_sweeps + 1):
            self.startup_sweeps = sweep
            if prev is not None:
                m.restore(snap)
                for j, row in enumerate(prev, start=1):
                    for key, v in zip(keys, row):
                        m.histories[key].push(t0 + j * H, v)
            window = []
            m.counters.exchanges += p
            for k in range(p):
                tk = t0 + k * H
                for s in m.subsystems:
                    m.feed_inputs(s, tk, correct=False)
                    m.step_subsystem(s, tk, H)
                for s in m.subsystems:
                    m.publish(s, tk + H, s.get_outputs())  # drops later samples
                if any(getattr(s, "terminated", None) for s in m.subsystems):
                    # a subsystem ends the run inside the window: no high-order start; the
                    # ordinary steps take the run to that communication point
                    m.restore(snap)
                    return 0
                self.settle_point(tk + H)
                window.append([_sample(m.histories[key]) for key in keys])
                if prev is not None:  # later points: the previous sweep's values
                    for j in range(k + 2, p + 1):
                        for key, v in zip(keys, prev[j - 1]):
                            m.histories[key].push(t0 + j * H, v)
            if prev is not None:
                change, scale = _window_gap(window, prev, exact)
            prev = window
            if change <= tol * (1.0 + scale):
                break
        else:
            raise LoopConvergenceError(
                f"high-order start: the first {p} macro steps (waveform relaxation) did not "
                f"converge in {max_sweeps} sweeps (last change {change:.3g}); reduce the macro "
                "step or pass high_order_start=False (zero-order-hold start, global order 2)")
        m.counters.iteration_total += self.startup_sweeps
        for j in range(1, p + 1):  # the histories hold the last sweep's samples
            m.t = t0 + j * H
            m.record.point(H, list(prev[j - 1]))
        return p


def _sample(hist) -> object:
    """The newest sample of a history as stored (scalars as they are, vectors copied)."""
    v = hist.v[-1]
    return v if hist.scalar else v.copy()


def _window_gap(window: list, prev: list, exact: list) -> tuple[float, float]:
    """``(change, scale)`` between two sweeps of the start window; a changed non-Real
    sample is an infinite change (those are compared, never subtracted)."""
    change = scale = 0.0
    for r1, r2 in zip(window, prev):
        for a, b, ex in zip(r1, r2, exact):
            if ex:
                if not np.array_equal(a, b):
                    change = float("inf")
                continue
            change = max(change, float(np.max(np.abs(np.subtract(a, b)), initial=0.0)))
            scale = max(scale, float(np.max(np.abs(a), initial=0.0)))
    return change, scale
