"""The co-simulation master: couples subsystems with their own solvers and steps.

A :class:`MasterScheduler` advances in macro steps ``H`` on the integer tick
grid.  At each step the coupling strategy (:mod:`cosim.coupling`) gives every
due subsystem its inputs as polynomials (:mod:`cosim.extrapolation`), steps
it, and publishes its outputs.  Connections are checked like diagram wires
(names with suggestions, shapes, units with conversion).

Example
-------
>>> master = MasterScheduler([plant, ctrl], [("plant.y", "ctrl.u"),     # doctest: +SKIP
...                                          ("ctrl.f", "plant.f")], step_s=1e-3,
...                          coupling=GaussSeidel(), extrapolation=1)
>>> res = master.run(10.0)                                               # doctest: +SKIP
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import bonds
from .block import did_you_mean
from .coupling import Coupling, Jacobi
from .errors import BuildError, ConnectError, PortError, UnitError
from .extrapolation import SignalHistory, evaluate
from .observers import Results, package_versions
from .step_control import run_controlled
from .time import TICKS_PER_SECOND, format_time, to_ticks
from .units import conversion

_NS = 1.0 / TICKS_PER_SECOND


class MasterScheduler:
    """Couple :class:`~cosim.subsystem.Subsystem` objects (see module docstring).

    Parameters
    ----------
    subsystems : list of Subsystem
    connections : list of ``("src.output", "dst.input")``
        or ``("src.output", "dst.input", (factor, offset))``: the input then
        receives ``factor * output + offset`` (in the output's unit, converted
        to the input's unit afterwards), as an SSP linear transformation.
    step_s : float
        Macro (communication) step ``H``.
    coupling : Coupling
        :class:`~cosim.coupling.Jacobi` (default) or :class:`~cosim.coupling.GaussSeidel`.
    extrapolation : int or dict
        Polynomial order 0-3 of every coupling input, or ``{"dst.input": order}``
        with a ``"*"`` default.
    step_control : StepController, optional
        Communication-step control (:mod:`cosim.step_control`); ``step_s`` is
        then the initial step.
    power_bonds : list of ``("A.effort", "B.flow")``, optional
        Power-bond couplings (force-velocity, torque-speed, pressure-flow):
        ``A.effort`` feeds an input of ``B`` and ``B.flow`` an input of ``A``.
        The master records the energy residual of each macro step (see
        :meth:`_energy_residual`) and the step controller can bound it.
    loop_solver : str
        How outputs with direct feedthrough are made consistent at a
        communication point when they form an algebraic loop across
        subsystems (:meth:`_solve_loop`): ``"newton"`` (default; interface
        Jacobian chained from the subsystems' ``output_jacobian()``),
        ``"broyden"`` (secant updates, no Jacobians needed, as Schiehlen &
        Scholz) or ``"fixed_point"`` (plain sweeps; diverges for loop gains
        of magnitude 1 or more).  Without such a loop one ordered sweep is exact.
    writers : list of StreamWriter, optional
        :class:`~cosim.writers.CsvWriter` / :class:`~cosim.writers.Hdf5Writer` given
        signal names (``"sub.output"``) or ``"all"``: every communication point is
        streamed to disk in chunks while the run goes, so a crash or a kill loses at
        most the last chunk (the file's status says how the run ended).
    high_order_start : bool
        For extrapolation orders 2-3, compute the first macro steps by waveform
        relaxation (:meth:`_startup`) so the global order is ``p + 1`` from the
        start; otherwise the first step's zero-order hold limits it to 2.
    """

    def __init__(self, subsystems: list, connections: list, step_s: float, *,
                 coupling: Coupling | None = None, extrapolation: Any = 1,
                 step_control: Any = None, power_bonds: list | None = None,
                 loop_solver: str = "newton", high_order_start: bool = True,
                 writers: Any = ()) -> None:
        if loop_solver not in ("newton", "broyden", "fixed_point"):
            raise BuildError(f"MasterScheduler: loop_solver must be 'newton', 'broyden' or "
                             f"'fixed_point', got {loop_solver!r}")
        self.loop_solver = loop_solver
        self.high_order_start = high_order_start
        self.writers = list(writers)
        self.startup_sweeps = 0
        self.subsystems = list(subsystems)
        self.by_name: dict[str, Any] = {}
        for s in self.subsystems:
            if s.name in self.by_name:
                raise BuildError(f"MasterScheduler: duplicate subsystem name {s.name!r}")
            self.by_name[s.name] = s
        self.H = to_ticks(step_s, "macro step")
        if self.H <= 0:
            raise BuildError(f"MasterScheduler: macro step must be positive, got {step_s!r}")
        self.coupling = coupling or Jacobi()
        self.sources: dict[tuple[str, str], tuple[tuple[str, str], float, float]] = {}
        for c in connections:
            if len(c) not in (2, 3):
                raise BuildError(f"MasterScheduler: connection {c!r} must be (src, dst) or "
                                 "(src, dst, (factor, offset))")
            self._connect(*c)
        missing = [f"'{s.name}.{i}'" for s in self.subsystems for i in s.input_names
                   if (s.name, i) not in self.sources]
        if missing:
            raise PortError(f"MasterScheduler: unconnected subsystem input(s) {', '.join(missing)}"
                            "; connect each one to an output of another subsystem")
        self.orders = self._orders(extrapolation)
        self.coupled_sources = sorted({src for src, _, _ in self.sources.values()})
        for s in self.subsystems:
            check = getattr(s, "check_step", None)
            if check is not None:
                check(s.rate * self.H)
        self.histories = {(s.name, o): SignalHistory(depth=5)
                          for s in self.subsystems for o in s.output_names}
        # per subsystem: (input, source history, order, scale, bias) and (output, history)
        self._feeds = {s.name: [(i, self.histories[self.sources[(s.name, i)][0]],
                                 self.orders[(s.name, i)], *self.sources[(s.name, i)][1:])
                                for i in s.input_names] for s in self.subsystems}
        self._outs = {s.name: [(o, self.histories[(s.name, o)]) for o in s.output_names]
                      for s in self.subsystems}
        self._single_rate = all(s.rate == 1 for s in self.subsystems)
        self._hist_list = list(self.histories.values())
        self._fed: dict[str, dict] = {}  # the input polynomials of the last step, per subsystem
        self.bonds = [bonds.resolve(self, e, f) for e, f in (power_bonds or [])]
        self.energy_total = 0.0
        self._last_energy = 0.0
        self.pending: dict[str, tuple[int, dict]] = {}
        self.wall = {s.name: 0.0 for s in self.subsystems}
        self.rollbacks = 0
        self.exchanges = 0  # macro steps done, including redone and Richardson's checks
        self.loop_solves = self.loop_evaluations = 0  # algebraic loops at communication points
        self.rejections = 0
        self._settle_once = False
        self.feedthrough_subs: list = []
        self.last_residual = 0.0
        self.iteration_total = 0
        self._marks: list[tuple] = []  # cumulative counters at each accepted macro step
        self.step_control = step_control
        self.step_sizes = []
        self.iterations: list[int] = []
        self.steps = {s.name: 0 for s in self.subsystems}
        self.t = 0

    # ----------------------------------------------------------- set-up
    def _split(self, ref: str, kind: str) -> tuple[str, str]:
        if not isinstance(ref, str) or "." not in ref:
            raise PortError(f"connection end {ref!r} must look like 'subsystem.{kind}'")
        sname, port = ref.split(".", 1)
        if sname not in self.by_name:
            raise PortError(f"subsystem {sname!r} not found; " + did_you_mean(sname, self.by_name))
        s = self.by_name[sname]
        names = s.output_names if kind == "output" else s.input_names
        if port not in names:
            raise PortError(f"{kind} {port!r} not found on subsystem '{sname}'; "
                            + did_you_mean(port, names))
        return sname, port

    def _connect(self, src: str, dst: str, transform: tuple | None = None) -> None:
        s = self._split(src, "output")
        d = self._split(dst, "input")
        if d in self.sources:
            raise PortError(f"input '{dst}' is already connected to "
                            f"'{'.'.join(self.sources[d][0])}'")
        ss, ds = self.by_name[s[0]], self.by_name[d[0]]
        if ss.shapes[s[1]] != ds.shapes[d[1]]:
            raise ConnectError(f"connection {src} {ss.shapes[s[1]]} -> {dst} "
                               f"{ds.shapes[d[1]]}: shape mismatch")
        try:
            scale, bias = conversion(ss.units[s[1]], ds.units[d[1]])
        except UnitError as exc:
            raise UnitError(f"connection {src} [{ss.units[s[1]]}] -> {dst} "
                            f"[{ds.units[d[1]]}]: {exc}") from None
        if transform is not None:
            factor, offset = (float(v) for v in transform)
            scale, bias = scale * factor, scale * offset + bias
        self.sources[d] = (s, scale, bias)

    def _energy_residual(self, t0: int, H: int) -> float:
        """Energy the coupling created over ``[t0, t0 + H]``, all bonds (:mod:`cosim.bonds`)."""
        return sum(b.residual(self._fed, t0, H * _NS) for b in self.bonds)

    def _orders(self, spec: Any) -> dict:
        default = spec.get("*", 1) if isinstance(spec, dict) else spec
        out = {}
        for key in self.sources:
            order = spec.get(".".join(key), default) if isinstance(spec, dict) else default
            if order not in (0, 1, 2, 3):
                raise BuildError(f"extrapolation order for '{'.'.join(key)}' must be 0-3, "
                                 f"got {order!r}")
            out[key] = order
        if isinstance(spec, dict):
            unknown = set(spec) - {"*"} - {".".join(k) for k in self.sources}
            if unknown:
                raise PortError(f"extrapolation given for unknown input(s) {sorted(unknown)}")
        return out

    # ------------------------------------------------ used by couplings
    def due(self, k: int) -> list:
        if self._single_rate:
            return self.subsystems
        return [s for s in self.subsystems if k % s.rate == 0]

    def input_polys(self, s: Any, t0: int, constant: bool = False) -> dict[str, Any]:
        """``s``'s inputs from ``t0`` on, as polynomials of the published histories.

        With ``constant`` the latest published values (a zero-order hold).
        """
        polys = {}
        for name, hist, order, scale, bias in self._feeds[s.name]:
            c = hist.constant() if constant else hist.polynomial(order, t0)
            if scale != 1.0 or bias != 0.0:
                if isinstance(c, tuple):
                    c = (c[0] * scale + bias,) + tuple(x * scale for x in c[1:])
                else:
                    c = c * scale
                    c[0] = c[0] + bias
            polys[name] = c
        return polys

    def feed_inputs(self, s: Any, t0: int) -> None:
        """Set ``s``'s inputs from ``t0`` on from the published histories.

        Extrapolation or interpolation follows from what has been published: a
        source already stepped to the end of this macro step is interpolated.
        """
        polys = self.input_polys(s, t0)
        self._fed[s.name] = polys
        s.set_inputs(t0 * _NS, polys)

    def step_subsystem(self, s: Any, t0: int, h: int) -> None:
        w = _time.perf_counter()
        s.do_step(t0, h)
        self.wall[s.name] += _time.perf_counter() - w
        self.steps[s.name] += 1

    def refresh_subsystem(self, s: Any) -> None:
        """Recompute ``s``'s outputs for new inputs (timed as the subsystem's work)."""
        w = _time.perf_counter()
        s.refresh_outputs()
        self.wall[s.name] += _time.perf_counter() - w

    def collect(self, s: Any, t_end: int) -> None:
        """Publish ``s``'s outputs now if its step ends within this macro step, else later."""
        outs = s.get_outputs()
        if t_end <= self.t + self.H:
            self._publish(s, t_end, outs)
        else:
            self.pending[s.name] = (t_end, outs)

    def _publish(self, s: Any, t_end: int, outs: dict) -> None:
        for o, hist in self._outs[s.name]:
            hist.push(t_end, outs[o])

    # ----------------------------------------------- interface vectors
    def pack_last(self) -> np.ndarray:
        """The latest published values of the coupled outputs as one vector."""
        return np.concatenate([self.histories[k].last for k in self.coupled_sources])

    def unpack(self, z: np.ndarray) -> list[np.ndarray]:
        out, i = [], 0
        for k in self.coupled_sources:
            n = self.histories[k].last.size
            out.append(z[i:i + n])
            i += n
        return out

    def interface_jacobian(self) -> np.ndarray:
        """``dy/dz`` of the coupled outputs ``z`` (as in :meth:`pack_last`) at the current point.

        Chained from each subsystem's ``output_jacobian()`` through the
        connections (with their unit scale factors); direct feedthrough only.
        """
        offsets, i = {}, 0
        for key in self.coupled_sources:
            size = self.histories[key].last.size
            offsets[key] = (i, size)
            i += size
        J = np.zeros((i, i))
        for s in self.subsystems:
            outs = [o for o in s.output_names if (s.name, o) in offsets]
            if not outs:
                continue
            jac = s.output_jacobian()
            if jac is None:
                raise BuildError(f"subsystem '{s.name}' gives no output Jacobian "
                                 "(output_jacobian() returned None); use jacobian='fd'")
            for o in outs:
                r0, rn = offsets[(s.name, o)]
                for name, *_rest in self._feeds[s.name]:
                    block = jac.get((o, name))
                    if block is None:
                        continue
                    src, scale, _ = self.sources[(s.name, name)]
                    c0, cn = offsets[src]
                    J[r0:r0 + rn, c0:c0 + cn] += np.asarray(block, float).reshape(rn, cn) * scale
        return J

    def predict(self, t0: int, H: int) -> np.ndarray:
        """Extrapolated coupled outputs at ``t0 + H`` (the predictor of iterative coupling)."""
        vals = []
        for k in self.coupled_sources:
            order = max(o for (dst, o) in self.orders.items()
                        if self.sources[dst][0] == k)
            vals.append(evaluate(self.histories[k].polynomial(order, t0), H * _NS))
        return np.concatenate(vals)

    # --------------------------------------------------------- rollback
    def check_rollback(self, why: str) -> None:
        """Refuse rollback-based methods when a subsystem cannot save its state."""
        from .errors import ContextError
        bad = [s.name for s in self.subsystems if not getattr(s, "can_save_state", False)]
        if bad:
            raise ContextError(f"{why} needs to redo macro steps, but subsystem(s) "
                               f"{', '.join(repr(b) for b in bad)} cannot save and restore "
                               "their state; use a non-iterative coupling without step "
                               "rejection, or give them save/restore")

    def save(self) -> dict:
        """Checkpoint of the whole co-simulation (subsystems, histories, time)."""
        return {"t": self.t, "subs": {s.name: s.save_state() for s in self.subsystems},
                "hist": {k: h.snapshot() for k, h in self.histories.items()},
                "pending": dict(self.pending), "energy": self.energy_total}

    def restore(self, snap: dict) -> None:
        """Roll back to a checkpoint made by :meth:`save`."""
        self.t = snap["t"]
        for s in self.subsystems:
            s.restore_state(snap["subs"][s.name])
        for k, h in self.histories.items():
            h.restore(snap["hist"][k])
        self.pending = dict(snap["pending"])
        self.energy_total = snap["energy"]
        self.rollbacks += 1

    # ---------------------------------------------------------- running
    def initialize(self, t0_s: float = 0.0, max_iter: int = 50, tol: float = 1e-12) -> None:
        """Initialize the subsystems and make the initial outputs consistent.

        Outputs with feedthrough depend on inputs at ``t0``: constant inputs are
        iterated to a fixed point (at most ``max_iter`` sweeps).
        """
        t0 = to_ticks(t0_s, "start time")
        self.t = t0
        for s in self.subsystems:
            s.initialize(t0)
            self._publish(s, t0, s.get_outputs())
        self.feedthrough_subs = self._feedthrough_order()
        sweeps = self._settle(t0, self.subsystems, max_iter, tol)
        self.init_sweeps = sweeps

    def _feedthrough_order(self) -> list:
        """Subsystems with feedthrough, in dependency order; sets ``_settle_once``.

        If no feedthrough output depends (through other subsystems' feedthrough)
        on itself, one sweep in this order settles the communication point
        exactly; otherwise sweeps are repeated until nothing changes.
        """
        ft = {s.name: s.feedthrough() for s in self.subsystems}
        # only outputs with feedthrough change when inputs change at a fixed state
        self._ft_outs = {s.name: [(o, h) for o, h in self._outs[s.name] if ft[s.name].get(o)]
                         for s in self.subsystems}
        subs = [s for s in self.subsystems if any(ft[s.name].get(o) for o in s.output_names)]
        names = {s.name for s in subs}
        deps: dict[str, set[str]] = {s.name: set() for s in subs}
        for s in subs:
            for inp in set().union(*ft[s.name].values()):
                (src, out), _, _ = self.sources[(s.name, inp)]
                if src in names and ft[src].get(out):
                    deps[s.name].add(src)
        order, done = [], set()
        while len(order) < len(subs):
            ready = [s for s in subs if s.name not in done and deps[s.name] <= done]
            if not ready:
                self._settle_once = False
                return subs
            for s in ready:
                order.append(s)
                done.add(s.name)
        self._settle_once = True
        return order

    def _settle(self, t: int, subs: list, max_iter: int = 50, tol: float = 1e-12,
                once: bool = False) -> int:
        """Make feedthrough outputs at ``t`` consistent with the published inputs at ``t``.

        Each subsystem in ``subs`` gets its inputs as constants (the published
        values at ``t``) and recomputes its outputs.  ``once``: one sweep in
        dependency order is exact (no loop).  Otherwise the loop solver
        (:meth:`_solve_loop`), or with ``"fixed_point"`` sweeps until nothing
        changes.
        """
        if not self.coupled_sources:
            return 0  # nothing is connected: nothing to make consistent
        if not once and self.loop_solver != "fixed_point":
            return self._solve_loop(t, subs, max_iter, tol)
        for sweep in range(1, max_iter + 1):
            change = 0.0
            scale = 0.0
            for s in subs:
                if not s.input_names:
                    continue
                s.set_inputs(t * _NS, self.input_polys(s, t, constant=True))
                self.refresh_subsystem(s)
                outs = s.get_outputs()
                ft_outs = self._ft_outs[s.name]
                if not once:
                    for o, hist in ft_outs:
                        new = np.asarray(outs[o], dtype=float).reshape(-1)
                        change = max(change, float(np.max(np.abs(new - hist.last))))
                        scale = max(scale, float(np.max(np.abs(new))))
                for o, hist in ft_outs:
                    hist.push(t, outs[o])
            if once or change <= tol * (1.0 + scale):
                return sweep
        raise BuildError(f"MasterScheduler: coupling outputs at t = {t * _NS:.9g} s did not "
                         f"become consistent in {max_iter} sweeps (last change {change:.3g}); "
                         "the subsystems' feedthrough forms an algebraic loop: use an "
                         "iterative coupling or break the loop")

    def _solve_loop(self, t: int, subs: list, max_iter: int, tol: float) -> int:
        """Solve ``z = Psi(z)`` for the coupled outputs at ``t``; returns the evaluations.

        ``Psi``: every subsystem in ``subs`` reads the published values ``z`` as
        constant inputs and recomputes its outputs (states fixed; Schiehlen &
        Scholz's output equations solved together).  Newton with the interface
        Jacobian :meth:`interface_jacobian` (exact for linear feedthrough: two
        evaluations) or Broyden's secant update from ``-I``.
        """
        z = self.pack_last()
        n = z.size
        newton = self.loop_solver == "newton"
        ft_keys = {(s.name, o) for s in subs for o, _ in self._ft_outs[s.name]}
        Jinv = -np.eye(n)
        dz = g_prev = None
        res = float("inf")
        for it in range(1, max_iter + 1):
            outs = []
            for s in subs:
                if s.input_names:
                    s.set_inputs(t * _NS, self.input_polys(s, t, constant=True))
                    self.refresh_subsystem(s)
                    outs.append((s, s.get_outputs()))
            for s, o in outs:
                for name, hist in self._ft_outs[s.name]:
                    hist.push(t, o[name])
            y = self.pack_last()
            g = y - z
            res = float(np.max(np.abs(g), initial=0.0))
            if res <= tol * (1.0 + float(np.max(np.abs(y), initial=0.0))):
                self.loop_evaluations += it
                self.loop_solves += 1
                return it
            if newton:
                dz = -np.linalg.solve(self.interface_jacobian() - np.eye(n), g)
            else:
                if dz is not None:
                    dg = g - g_prev
                    denom = float(dz @ Jinv @ dg)
                    if denom != 0.0:
                        Jinv = Jinv + np.outer(dz - Jinv @ dg, dz @ Jinv) / denom
                dz = -Jinv @ g
            g_prev = g
            z = z + dz
            for key, val in zip(self.coupled_sources, self.unpack(z)):
                if key in ft_keys:  # others (no feedthrough, or not stepped) keep theirs
                    self.histories[key].push(t, val if not self.histories[key].scalar
                                             else float(val[0]))
        raise BuildError(f"MasterScheduler: the algebraic loop of feedthrough outputs at t = "
                         f"{t * _NS:.9g} s did not converge in {max_iter} evaluations "
                         f"({self.loop_solver}, last residual {res:.3g}); check the loop "
                         "gain and the subsystems' output Jacobians, or break the loop with "
                         "a delay")

    def _macro(self, k: int, H: int) -> None:
        """One macro step of size ``H`` from ``self.t`` (coupling, publication, settling)."""
        self.exchanges += 1
        if self.pending:
            self._publish_pending()
        due = self.due(k)
        saved_H, self.H = self.H, H
        try:
            self.coupling.step(self, k, self.t, H)
        finally:
            self.H = saved_H
        self.t += H
        if self.pending:
            self._publish_pending()
        # feedthrough outputs at the new communication point see the inputs there
        if self._single_rate:
            settle = self.feedthrough_subs
        else:
            settle = [s for s in self.feedthrough_subs if s.rate == 1 and s in due]
        if settle:
            self._settle(self.t, settle, once=self._settle_once)
        if self.bonds:
            self._last_energy = self._energy_residual(self.t - H, H)
            self.energy_total += self._last_energy

    def _publish_pending(self) -> None:
        for name, (t_end, outs) in list(self.pending.items()):
            if t_end <= self.t:
                self._publish(self.by_name[name], t_end, outs)
                del self.pending[name]

    def run(self, t_end_s: float, t0_s: float = 0.0) -> Results:
        """Co-simulate from ``t0_s`` to ``t_end_s``; returns the published outputs.

        With ``writers``, every communication point also streams to disk; on failure
        the writers are closed with the error as their status.
        """
        if not self.writers:
            return self._run(t_end_s, t0_s)
        error = None
        try:
            return self._run(t_end_s, t0_s)
        except BaseException as exc:
            error = exc
            raise
        finally:
            for w in self.writers:
                if getattr(w, "_state", None) == "open":
                    w.on_finish(self, error)

    def _signals(self) -> list:
        return [_Signal(f"{sname}.{o}", self.by_name[sname].units[o] or "",
                        tuple(self.by_name[sname].shapes[o]))
                for sname, o in self.histories]

    def _rows(self) -> list:
        """The list the runs append communication points to (streamed with writers)."""
        if not self.writers:
            return []
        from .observers import package_versions
        prov = {"model": "+".join(s.name for s in self.subsystems),
                "master": {"H_s": self.H * _NS, "coupling": type(self.coupling).__name__,
                           "extrapolation": sorted({int(v) for v in self.orders.values()})},
                "versions": package_versions()}
        signals = self._signals()
        for w in self.writers:
            w.start_rows(signals, prov)
        return _StreamedRows(self)

    def _run(self, t_end_s: float, t0_s: float) -> Results:
        if getattr(self.coupling, "needs_rollback", False):
            self.check_rollback(f"coupling '{self.coupling.name}'")
        self.initialize(t0_s)
        end = to_ticks(t_end_s, "end time")
        self._mark(0)
        if self.step_control is not None:
            times = [self.t * _NS]
            rows = self._rows()
            rows.append(self._snapshot_outputs())
            wall0 = _time.perf_counter()
            k = run_controlled(self, end, times, rows)
            return self._results(times, rows, _time.perf_counter() - wall0, k)
        if (end - self.t) % (self.H * max(s.rate for s in self.subsystems)):
            raise BuildError(f"end time {t_end_s} s is not a whole number of macro steps "
                             f"H = {format_time(self.H)} (times the largest rate)")
        times = [self.t * _NS]
        rows = self._rows()
        rows.append(self._snapshot_outputs())
        wall0 = _time.perf_counter()
        k = 0
        H = self.H
        p = max(self.orders.values(), default=0)
        if self.high_order_start and p >= 2 and end - self.t >= p * H \
                and not getattr(self.coupling, "needs_rollback", False):
            k = self._startup(p, times, rows)
        while self.t < end:
            self._macro(k, H)
            self._mark(H)
            k += 1
            times.append(self.t * _NS)
            rows.append(self._snapshot_outputs())
        wall = _time.perf_counter() - wall0
        return self._results(times, rows, wall, k)

    def _startup(self, p: int, times: list, rows: list, max_sweeps: int = 30,
                 tol: float = 1e-12) -> int:
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
        if not self._single_rate or not all(getattr(s, "can_save_state", False)
                                            for s in self.subsystems):
            return 0
        from .errors import LoopConvergenceError
        H, t0 = self.H, self.t
        snap = self.save()
        keys = list(self.histories)
        prev = None
        change, scale = float("inf"), 0.0
        for sweep in range(1, max_sweeps + 1):
            self.startup_sweeps = sweep
            if prev is not None:
                self.restore(snap)
                for j, row in enumerate(prev, start=1):
                    for key, v in zip(keys, row):
                        self.histories[key].push(t0 + j * H, v if v.ndim else float(v))
            window = []
            self.exchanges += p
            for k in range(p):
                tk = t0 + k * H
                for s in self.subsystems:
                    polys = self.input_polys(s, tk)
                    self._fed[s.name] = polys
                    s.set_inputs(tk * _NS, polys)
                    self.step_subsystem(s, tk, H)
                for s in self.subsystems:
                    self._publish(s, tk + H, s.get_outputs())  # drops later samples
                if self.feedthrough_subs:
                    self._settle(tk + H, self.feedthrough_subs, once=self._settle_once)
                window.append([np.array(self.histories[key].v[-1], dtype=float) for key in keys])
                if prev is not None:  # later points: the previous sweep's values
                    for j in range(k + 2, p + 1):
                        for key, v in zip(keys, prev[j - 1]):
                            self.histories[key].push(t0 + j * H, v if v.ndim else float(v))
            if prev is not None:
                change = max(float(np.max(np.abs(a - b), initial=0.0))
                             for r1, r2 in zip(window, prev) for a, b in zip(r1, r2))
                scale = max(float(np.max(np.abs(a), initial=0.0)) for r in window for a in r)
            prev = window
            if change <= tol * (1.0 + scale):
                break
        else:
            raise LoopConvergenceError(
                f"high-order start: the first {p} macro steps (waveform relaxation) did not "
                f"converge in {max_sweeps} sweeps (last change {change:.3g}); reduce the macro "
                "step or pass high_order_start=False (zero-order-hold start, global order 2)")
        self.iteration_total += self.startup_sweeps
        for j in range(1, p + 1):  # the histories hold the last sweep's samples
            self.t = t0 + j * H
            times.append(self.t * _NS)
            rows.append([float(v) if v.ndim == 0 else v for v in prev[j - 1]])
            self._mark(H)
        return p

    def _mark(self, H: int) -> None:
        """Cumulative counters after the macro step that just ended at ``self.t``.

        Differences of consecutive marks are the per-macro-step diagnostics (a
        step's rejected attempts count towards the accepted one).
        """
        self._marks.append((self.t, H, _time.perf_counter(), self.iteration_total,
                            self.last_residual, self.rejections, self.energy_total,
                            *self.wall.values()))

    def _macro_diagnostics(self) -> dict[str, np.ndarray]:
        m = np.array(self._marks, dtype=float).reshape(-1, 7 + len(self.wall))
        d = np.diff(m, axis=0)
        iters = d[:, 3]
        out = {"t": m[1:, 0] * _NS, "H": m[1:, 1] * _NS, "wall_s": d[:, 2],
               "iterations": np.where(iters > 0, iters, 1.0).astype(int),
               "residual": m[1:, 4], "rejections": d[:, 5].astype(int)}
        if self.bonds:
            out["energy_residual"] = d[:, 6]
        for j, name in enumerate(self.wall):
            out[f"wall_s/{name}"] = d[:, 7 + j]
        return out

    def _snapshot_outputs(self) -> list:
        return [h.v[-1] for h in self._hist_list]  # values are never modified in place

    def _results(self, times: list, rows: list, wall: float, n_steps: int) -> Results:
        t = np.asarray(times)
        signals, units = {}, {}
        for j, (sname, o) in enumerate(self.histories):
            arr = np.array([r[j] for r in rows], dtype=float)
            shape = self.by_name[sname].shapes[o]
            signals[f"{sname}.{o}"] = arr if shape == () else arr.reshape((len(t),) + shape)
            units[f"{sname}.{o}"] = self.by_name[sname].units[o] or ""
        sub_wall = sum(self.wall.values())
        diag = {
            "macro_steps": n_steps, "communications": self.exchanges, "wall_s": wall,
            "subsystem_wall_s": dict(self.wall), "subsystem_steps": dict(self.steps),
            "master_overhead_us_per_subsystem_step":
                1e6 * (wall - sub_wall) / max(1, sum(self.steps.values())),
            "init_sweeps": self.init_sweeps,
            "startup_sweeps": self.startup_sweeps,
            "loop_solves": self.loop_solves,
            "loop_evaluations_per_solve": self.loop_evaluations / max(1, self.loop_solves),
            "rollbacks": self.rollbacks,
            "rejections": self.rejections,
            "step_sizes_s": list(self.step_sizes),
            "unrecoverable_steps": getattr(self, "unrecoverable", 0),
            "steps_over_tol_at_h_min": getattr(self, "over_tol_at_min", 0),
            "energy_residual_total": self.energy_total if self.bonds else None,
            "macro": self._macro_diagnostics(),
            "iterations_per_step_max": max(self.iterations, default=0),
            "iterations_per_step_mean": float(np.mean(self.iterations)) if self.iterations
            else 0.0,
        }
        prov = {"model": "+".join(self.by_name), "coupling": self.coupling.name,
                "macro_step_s": self.H * _NS, "extrapolation": {".".join(k): v for k, v in
                                                               self.orders.items()},
                "versions": package_versions()}
        return Results(t, signals, units, prov, diag)


@dataclass(frozen=True)
class _Signal:
    """A column of the master's rows, as the stream writers see a port."""

    path: str
    unit_text: str
    shape: tuple

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1


class _StreamedRows(list):
    """The rows of a run; each appended row also goes to the master's writers."""

    def __init__(self, master: Any) -> None:
        super().__init__()
        self.master = master

    def append(self, row: Any) -> None:
        super().append(row)
        t = self.master.t * _NS
        for w in self.master.writers:
            w.write_row(t, row)
