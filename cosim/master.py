"""The co-simulation master: couples subsystems with their own solvers and steps.

A :class:`MasterScheduler` advances in macro steps ``H`` on the integer tick
grid.  At each step the coupling strategy (:mod:`cosim.coupling`) gives every
due subsystem its inputs as polynomials (:mod:`cosim.extrapolation`), steps
it, and publishes its outputs.  Connections are checked like diagram wires
(names with suggestions, shapes, units with conversion).

The master's concepts live in three modules: this one holds the set-up,
the services the couplings call, rollback and the macro-step loop;
:mod:`cosim.master_settle` the initialization and the consistent feedthrough
outputs at communication points (algebraic loops, high-order start); and
:mod:`cosim.master_results` the recording of rows, per-step diagnostics and
the :class:`~cosim.observers.Results` (:class:`~cosim.master_results.MasterRecord`, held
as ``master.record``, reading the master through its recording interface:
:meth:`MasterScheduler.counters`, :meth:`~MasterScheduler.signal_specs`, ...), and
the settling in :class:`~cosim.master_settle.Settler` (held as ``master.settler``, using
the coupling services).

Example
-------
>>> master = MasterScheduler([plant, ctrl], [("plant.y", "ctrl.u"),     # doctest: +SKIP
...                                          ("ctrl.f", "plant.f")], step_s=1e-3,
...                          coupling=GaussSeidel(), extrapolation=1)
>>> res = master.run(10.0)                                               # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from time import perf_counter as _perf
from typing import Any

import numpy as np

from . import bonds
from .block import did_you_mean
from .coupling import Coupling, Jacobi
from .errors import (
    BuildError,
    ConnectError,
    CosimWarning,
    NotADiagramError,
    PortError,
    UnitError,
)
from .extrapolation import SignalHistory, evaluate
from .master_results import MasterRecord, package_versions
from .master_settle import Settler
from .observers import Results
from .progress import ProgressBar
from .step_control import run_controlled
from .subsystem import max_input_order
from .time import SECONDS_PER_TICK, format_time, to_ticks
from .units import conversion

_NS = SECONDS_PER_TICK


def _check_subsystem(s: Any) -> None:
    """Refuse what is not a subsystem, saying how to make one of it.

    An object may say itself how to make a subsystem of it: a ``subsystem_hint()``
    method returning that sentence (an FMU imported as a block names the interface to
    load instead, :meth:`fmus.fmu_block.FMUBlock.subsystem_hint`).
    """
    import os

    from .block import Block
    from .diagram import DiagramBuilder
    hint = getattr(s, "subsystem_hint", None)
    if callable(hint) and not hasattr(s, "input_names"):
        raise NotADiagramError(f"MasterScheduler: got {s!r} as a subsystem: {hint()}")
    if isinstance(s, (str, os.PathLike)):
        raise NotADiagramError(f"MasterScheduler: got the path {os.fspath(s)!r} (a "
                               f"{type(s).__name__}) as a subsystem: load it first, for an FMU "
                               "fmus.load_fmu(path, interface='CoSimulation')")
    if isinstance(s, DiagramBuilder):
        raise NotADiagramError(f"MasterScheduler: got the DiagramBuilder '{s.name}' as a "
                               "subsystem: call build() first and wrap the diagram, "
                               "DiagramSubsystem(builder.build(), ...)")
    if isinstance(s, Block):
        what = "diagram" if s.is_diagram else "block"
        raise NotADiagramError(f"MasterScheduler: got the {what} {s!r} as a subsystem: "
                               f"wrap it, DiagramSubsystem({what}, solver=..., dt=...)")
    if not all(hasattr(s, a) for a in ("name", "input_names", "output_names")):
        raise NotADiagramError(f"MasterScheduler: subsystems must be Subsystem objects "
                               f"(DiagramSubsystem, FMUSubsystem), got {type(s).__name__}")


def _declared_exact(sub: Any, port: str) -> bool | None:
    """Whether ``sub`` declares ``port`` non-Real (None: no dtype declared)."""
    dtype = getattr(sub, "dtypes", {}).get(port)
    return None if dtype is None else np.dtype(dtype).kind not in "fc"


def _non_real(sub: Any, port: str) -> bool:
    """Whether ``sub`` declares ``port`` non-Real (Boolean, integer, string, bytes)."""
    dtype = getattr(sub, "dtypes", {}).get(port)
    return dtype is not None and np.dtype(dtype).kind not in "fc"


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
    extrapolation : int or dict, optional
        Polynomial order 0-3 of every coupling input, or ``{"dst.input": order}``
        with a ``"*"`` default (not given: 1).  A subsystem follows at most the
        degree its ``max_input_order`` says (a Co-Simulation FMU that cannot
        interpolate inputs holds them: 0); its inputs get the polynomial of that
        lower order (degree 0 is the newest sample: the value at the start of
        the step when extrapolating, at its end when interpolating, as iterative
        coupling and Gauss-Seidel's later subsystems do).  An order given here
        that a subsystem cannot follow is lowered with a :class:`CosimWarning`.
        Non-Real signals (Boolean, Integer of any width, Enumeration, String,
        Binary) are never extrapolated nor interpolated: every coupling holds
        them at the newest value, whatever the order (no warning).
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
    energy_correction : bool
        With ``power_bonds``: give each bond's effort input an offset over the next
        step that returns the energy the coupling created in the step before
        (:meth:`cosim.bonds.PowerBond.correction`); the energy residual is still
        recorded as created, so ``energy_residual_total`` stays the uncorrected sum.
    compiled : bool, optional
        Run the macro steps in compiled code where every subsystem offers the same
        ``compiled_loop`` (FMUs: :mod:`fmus.compiled_master`) and it accepts the
        master (explicit coupling, rate 1, no step control or bonds).  ``None``
        (default): where possible, the reason otherwise in
        ``diagnostics["compiled"]``; ``True``: a reason is a :class:`BuildError`;
        ``False``: always the Python loop.  Results equal to round-off.
    progress : bool
        A progress bar on stderr (:mod:`cosim.progress`: a terminal only, runs over ~1 s).
    high_order_start : bool
        For extrapolation orders 2-3 (every coupling, iterative included),
        compute the first macro steps by waveform relaxation (``Settler.startup``)
        so the global order is ``p + 1`` from the start; otherwise the first
        step's zero-order hold (iterative coupling: linear interpolation) limits
        it to 2 (iterative: 3).  Where it cannot run (a subsystem without
        save/restore, or at a rate above 1) the master warns at construction;
        ``False`` accepts the hold start without a word.  With step control it
        does not apply: the controller sizes the first steps, whose short
        history allows only lower orders (down to ``h_min_s``, accepted there).
    """

    def __init__(self, subsystems: list, connections: list, step_s: float, *,
                 coupling: Coupling | None = None, extrapolation: Any = None,
                 step_control: Any = None, power_bonds: list | None = None,
                 loop_solver: str = "newton", high_order_start: bool = True,
                 writers: Any = (), compiled: bool | None = None,
                 energy_correction: bool = False, progress: bool = False) -> None:
        if loop_solver not in ("newton", "broyden", "fixed_point"):
            raise BuildError(f"MasterScheduler: loop_solver must be 'newton', 'broyden' or "
                             f"'fixed_point', got {loop_solver!r}")
        self.loop_solver = loop_solver
        self.high_order_start = high_order_start
        self.writers = list(writers)
        self.progress = progress
        self._bar = ProgressBar(0, 0, False)
        self.subsystems = list(subsystems)
        for s in self.subsystems:
            _check_subsystem(s)
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
                   if (s.name, i) not in self.sources
                   and i not in getattr(s, "optional_inputs", ())]
        if missing:
            raise PortError(f"MasterScheduler: unconnected subsystem input(s) {', '.join(missing)}"
                            "; connect each one to an output of another subsystem")
        self.orders = self._orders(1 if extrapolation is None else extrapolation)
        #: the order each input gets: ``orders`` lowered to what its subsystem follows
        self.input_orders = self._input_orders(warn=extrapolation is not None)
        self.coupled_sources = sorted({src for src, _, _ in self.sources.values()})
        self._real_keys: list | None = None  # real_sources, once every output is published
        for s in self.subsystems:
            check = getattr(s, "check_step", None)
            if check is not None:
                check(s.rate * self.H)
        self.coupling.check(self)
        self.compiled = compiled
        # a non-Real output (its declared dtype) is held and never iterated numerically
        self.histories = {(s.name, o): SignalHistory(depth=5, exact=_declared_exact(s, o))
                          for s in self.subsystems for o in s.output_names}
        # per subsystem: (input, source history, order, scale, bias) and (output, history)
        self._feeds = {s.name: [(i, self.histories[self.sources[(s.name, i)][0]],
                                 self.input_orders[(s.name, i)], *self.sources[(s.name, i)][1:])
                                for i in s.input_names if (s.name, i) in self.sources]
                       for s in self.subsystems}
        self._outs = {s.name: [(o, self.histories[(s.name, o)]) for o in s.output_names]
                      for s in self.subsystems}
        #: every subsystem steps at the macro step
        self.single_rate = all(s.rate == 1 for s in self.subsystems)
        self._hist_list = list(self.histories.values())
        self._fed: dict[str, dict] = {}  # the input polynomials of the last step, per subsystem
        self.bonds = [bonds.resolve(self, e, f) for e, f in (power_bonds or [])]
        if energy_correction and not self.bonds:
            raise BuildError("MasterScheduler: energy_correction=True needs power_bonds=[...] "
                             "(the effort/flow pairs whose energy to correct)")
        self.energy_correction = bool(energy_correction)
        self.energy_total = 0.0
        self._last_energy = 0.0
        self.pending: dict[str, tuple[int, dict]] = {}
        self.wall = {s.name: 0.0 for s in self.subsystems}
        self.rollbacks = 0
        self.exchanges = 0  # macro steps done, including redone and Richardson's checks
        self.rejections = 0
        #: initialization and consistent feedthrough outputs (cosim.master_settle)
        self.settler = Settler(self)
        self.last_residual = 0.0
        self.iteration_total = 0
        self.step_control = step_control
        self._check_high_order_start()
        self.step_sizes = []
        self.iterations: list[int] = []
        self.steps = {s.name: 0 for s in self.subsystems}
        self.t = 0
        #: ``{"t", "by", "reason"}`` when a subsystem ended the run, else None
        self.terminated: dict | None = None
        #: the run's rows, marks and results (:class:`~cosim.master_results.MasterRecord`)
        self.record = MasterRecord(self)
        self._predict_orders: list | None = None
        self._loop, self.compiled_reason = self._compiled_loop(compiled)

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
        declared = [getattr(sub, "dtypes", {}).get(port) for sub, port in ((ss, s[1]),
                                                                          (ds, d[1]))]
        kinds = [np.dtype(x).kind for x in declared if x is not None]
        if len(kinds) == 2 and (kinds[0] in "OSU") != (kinds[1] in "OSU"):  # text vs numbers
            what = ["String/Binary" if k in "OSU" else "numeric" for k in kinds]
            raise ConnectError(f"connection {src} ({what[0]}) -> {dst} ({what[1]}): a "
                               "String or Binary signal connects only to a String or Binary "
                               "input; connect ports of the same kind")
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

    def _input_orders(self, warn: bool) -> dict:
        """``orders`` lowered to each subsystem's ``max_input_order`` (see ``extrapolation``)."""
        out, lowered = {}, []
        for (sname, inp), order in self.orders.items():
            limit = max_input_order(self.by_name[sname], inp)
            out[(sname, inp)] = min(order, limit)
            src, out_port = self.sources[(sname, inp)][0]
            if _non_real(self.by_name[sname], inp) or _non_real(self.by_name[src], out_port):
                continue  # never extrapolated (held whatever the order): nothing to say
            if limit < order:
                lowered.append(f"'{sname}.{inp}' ({order} -> {limit})")
        if lowered and warn:
            warnings.warn(
                f"MasterScheduler: extrapolation order lowered for input(s) {', '.join(lowered)}"
                ": those subsystems follow no higher polynomial degree within a step (a "
                "Co-Simulation FMU without canInterpolateInputs or intermediate update holds "
                "its inputs); they get the newest value (start of the step when "
                "extrapolating, end of the step when interpolating).  Give these inputs that "
                "order in extrapolation={...} to silence this", CosimWarning, stacklevel=3)
        return out

    def _compiled_loop(self, want: bool | None) -> tuple:
        """``(loop, '')`` when the macro steps can run compiled, else ``(None, why not)``."""
        if want is False:
            return None, "not asked for (compiled=False)"
        loops = {id(getattr(s, "compiled_loop", None)): getattr(s, "compiled_loop", None)
                 for s in self.subsystems}
        loop = next(iter(loops.values())) if len(loops) == 1 else None
        if loop is None:
            why = "not every subsystem offers the same compiled loop (e.g. all FMUs)"
        else:
            why = loop.reason(self)
        if why and want:
            raise BuildError(f"MasterScheduler(compiled=True): the macro steps cannot run "
                             f"compiled: {why}; pass compiled=None to fall back to the "
                             "Python loop")
        return (None, why) if why else (loop, "")

    def _check_high_order_start(self) -> None:
        """Warn at construction when ``high_order_start`` is asked for but cannot run."""
        p = max(self.input_orders.values(), default=0)
        if not self.high_order_start or p < 2:
            return
        if self.step_control is not None:
            return  # the controller sizes the first steps itself (docstring)
        why = self._startup_obstacle()
        if why:
            capped = 3 if getattr(self.coupling, "needs_rollback", False) else 2
            if capped >= p + 1:
                return
            warnings.warn(
                f"MasterScheduler: high_order_start cannot run ({why}): the first macro step "
                f"uses a lower-order input, so extrapolation order {p} gives global order "
                f"{capped}, not {p + 1}; give the subsystems save/restore and rate 1, or pass "
                "high_order_start=False to accept it", CosimWarning, stacklevel=3)

    def _startup_obstacle(self) -> str:
        """Why the high-order start cannot run ('' when it can)."""
        slow = [s.name for s in self.subsystems if s.rate != 1]
        if slow:
            return f"subsystem(s) {', '.join(slow)} at a rate above 1"
        bad = [s.name for s in self.subsystems if not getattr(s, "can_save_state", False)]
        if bad:
            return f"subsystem(s) {', '.join(bad)} cannot save and restore their state"
        return ""

    def initialize(self, t0_s: float = 0.0, max_iter: int = 50, tol: float = 1e-12) -> None:
        """Initialize the subsystems at ``t0_s`` with consistent outputs
        (:meth:`Settler.initialize <cosim.master_settle.Settler.initialize>`)."""
        self.settler.initialize(t0_s, max_iter, tol)

    @property
    def feedthrough_subs(self) -> list:
        """The subsystems with feedthrough, in dependency order (``settler.subs``)."""
        return self.settler.subs

    @property
    def init_sweeps(self) -> int:
        """Sweeps or loop evaluations that made the initial values consistent."""
        return self.settler.init_sweeps

    @property
    def startup_sweeps(self) -> int:
        """Sweeps of the high-order start (waveform relaxation)."""
        return self.settler.startup_sweeps

    # ------------------------------------------------ used by couplings
    def count_exchanges(self, n: int) -> None:
        """``n`` more macro steps done (redone ones and checks included)."""
        self.exchanges += n

    def count_iterations(self, n: int) -> None:
        """``n`` more coupling iterations (sweeps, evaluations) in the run's total."""
        self.iteration_total += n

    def due(self, k: int) -> list:
        if self.single_rate:
            return self.subsystems
        return [s for s in self.subsystems if k % s.rate == 0]

    def input_polys(self, s: Any, t0: int, constant: bool = False) -> dict[str, Any]:
        """``s``'s inputs from ``t0`` on, as polynomials of the published histories.

        With ``constant`` the latest published values (a zero-order hold).
        """
        polys = {}
        for name, hist, order, scale, bias in self._feeds[s.name]:
            if (constant or order == 0) and hist.scalar:  # the common held input: no call
                v = hist.v[-1]
                polys[name] = (v * scale + bias,) if (scale != 1.0 or bias != 0.0) else (v,)
                continue
            c = hist.constant() if constant else hist.polynomial(order, t0)
            if scale != 1.0 or bias != 0.0:
                if isinstance(c, tuple):
                    c = (c[0] * scale + bias,) + tuple(x * scale for x in c[1:])
                else:
                    c = c * scale
                    c[0] = c[0] + bias
            polys[name] = c
        return polys

    def feed_inputs(self, s: Any, t0: int, correct: bool = True) -> None:
        """Set ``s``'s inputs from ``t0`` on from the published histories.

        Extrapolation or interpolation follows from what has been published: a
        source already stepped to the end of this macro step is interpolated.
        ``correct``: with the energy correction (``energy_correction=True``).
        """
        polys = self.input_polys(s, t0)
        if correct and self.energy_correction:
            self._correct_energy(s, t0, polys)
        self._fed[s.name] = polys
        s.set_inputs(t0 * _NS, polys)

    def _correct_energy(self, s: Any, t0: int, polys: dict) -> None:
        """Add each bond's energy-returning offset to ``s``'s effort inputs (in place)."""
        for b in self.bonds:
            sub, inp = b.effort_input
            if sub != s.name or inp not in polys:
                continue
            order = self.input_orders[b.flow_input]
            delta = b.correction(order, t0, self.H * _NS, self._last_energy) * b.effort_scale
            c = polys[inp]
            e0 = abs(float(np.ravel(c[0])[0]))
            delta = max(-0.01 * e0, min(0.01 * e0, delta))  # a small nudge, never a kick
            if delta:
                if isinstance(c, tuple):
                    polys[inp] = (c[0] + delta,) + c[1:]
                else:
                    c = c.copy()
                    c[0] = c[0] + delta
                    polys[inp] = c

    def step_subsystem(self, s: Any, t0: int, h: int) -> None:
        w = _perf()
        s.do_step(t0, h)
        self.wall[s.name] += _perf() - w
        self.steps[s.name] += 1

    def refresh_subsystem(self, s: Any) -> None:
        """Recompute ``s``'s outputs for new inputs (timed as the subsystem's work)."""
        w = _perf()
        s.refresh_outputs()
        self.wall[s.name] += _perf() - w

    def collect(self, s: Any, t_end: int) -> None:
        """Publish ``s``'s outputs now if its step ends within this macro step, else later."""
        outs = s.get_outputs()
        if t_end <= self.t + self.H:
            for o, hist in self._outs[s.name]:
                v = outs[o]
                ts = hist.t
                if hist.scalar and type(v) is float and ts and ts[-1] < t_end:
                    ts.append(t_end)  # SignalHistory.push's common case, inline
                    hist.v.append(v)
                else:
                    hist.push(t_end, v)
        else:
            self.pending[s.name] = (t_end, outs)

    def publish(self, s: Any, t_end: int, outs: dict) -> None:
        """Publish ``s``'s outputs ``outs`` at ``t_end`` (pushed onto their histories)."""
        for o, hist in self._outs[s.name]:
            hist.push(t_end, outs[o])

    # ----------------------------------------------- interface vectors
    @property
    def real_sources(self) -> list:
        """The coupled outputs the master iterates numerically: the Real ones.

        Non-Real outputs (Boolean, Integer, Enumeration, String, Binary: a history
        that is ``exact``) are held and propagated, never in ``z`` (:meth:`pack_last`).
        Known once every output has been published (:meth:`initialize`).
        """
        keys = self._real_keys
        if keys is None:
            hist = self.histories
            keys = [k for k in self.coupled_sources if not hist[k].exact]
            if all(hist[k].t for k in self.coupled_sources):
                self._real_keys = keys
        return keys

    def pack_last(self) -> np.ndarray:
        """The latest published values of the Real coupled outputs as one vector."""
        keys = self.real_sources
        if not keys:
            return np.zeros(0)
        return np.concatenate([self.histories[k].last for k in keys])

    def exact_last(self) -> list:
        """The latest published values of the non-Real coupled outputs (compared by ``==``)."""
        hists = [self.histories[k] for k in self.coupled_sources]
        return [h.last_value if h.scalar else h.last.tolist() for h in hists if h.exact]

    def unpack(self, z: np.ndarray) -> list[np.ndarray]:
        """``z`` (as :meth:`pack_last`) cut into the values of :attr:`real_sources`."""
        out, i = [], 0
        for k in self.real_sources:
            n = self.histories[k].last.size
            out.append(z[i:i + n])
            i += n
        return out

    def interface_jacobian(self) -> np.ndarray:
        """``dy/dz`` of the Real coupled outputs ``z`` (as in :meth:`pack_last`) here.

        Chained from each subsystem's ``output_jacobian()`` through the
        connections (with their unit scale factors); direct feedthrough only.
        """
        offsets, i = {}, 0
        for key in self.real_sources:
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
                    if src not in offsets:  # a non-Real source: held, not in z
                        continue
                    c0, cn = offsets[src]
                    J[r0:r0 + rn, c0:c0 + cn] += np.asarray(block, float).reshape(rn, cn) * scale
        return J

    def predict(self, t0: int, H: int) -> np.ndarray:
        """Extrapolated coupled outputs at ``t0 + H`` (the predictor of iterative coupling)."""
        orders = self._predict_orders
        if orders is None:  # the highest order any consumer of each source asks for
            orders = self._predict_orders = [
                max(o for (dst, o) in self.orders.items() if self.sources[dst][0] == k)
                for k in self.real_sources]
        tau = H * _NS
        vals = []
        for k, order in zip(self.real_sources, orders):
            c = self.histories[k].polynomial(order, t0)
            if isinstance(c, tuple):  # scalar: Horner in plain floats
                acc = c[-1]
                for x in c[-2::-1]:
                    acc = acc * tau + x
                vals.append(float(acc))
            else:
                vals.extend(evaluate(c, tau).tolist())
        return np.array(vals)

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
        if self.single_rate:
            self.settler.settle_point(self.t)
        else:
            self.settler.settle_point(self.t, [s for s in self.settler.subs
                                               if s.rate == 1 and s in due])
        if self.bonds:
            self._last_energy = self._energy_residual(self.t - H, H)
            self.energy_total += self._last_energy

    def _publish_pending(self) -> None:
        for name, (t_end, outs) in list(self.pending.items()):
            if t_end <= self.t:
                self.publish(self.by_name[name], t_end, outs)
                del self.pending[name]

    def run(self, t_end_s: float, t0_s: float = 0.0) -> Results:
        """Co-simulate from ``t0_s`` to ``t_end_s``; returns the published outputs.

        With ``writers``, every communication point also streams to disk; on failure
        the writers are closed with the error as their status.
        """
        error = None
        try:
            return self._run(t_end_s, t0_s)
        except BaseException as exc:
            error = exc
            raise
        finally:
            self._bar.done()
            for w in self.writers:
                if getattr(w, "_state", None) == "open":
                    w.on_finish(self, error)

    def _run(self, t_end_s: float, t0_s: float) -> Results:
        self.terminated = None
        if getattr(self.coupling, "needs_rollback", False):
            self.check_rollback(f"coupling '{self.coupling.name}'")
        self.initialize(t0_s)
        end = to_ticks(t_end_s, "end time")
        self._bar = ProgressBar(self.t, end, self.progress)
        record = self.record
        if self.step_control is None and \
                (end - self.t) % (self.H * max(s.rate for s in self.subsystems)):
            raise BuildError(f"end time {t_end_s} s is not a whole number of macro steps "
                             f"H = {format_time(self.H)} (times the largest rate)")
        record.start()
        wall0 = _perf()
        if self.step_control is not None:
            k = run_controlled(self, end)
            return record.results(_perf() - wall0, k)
        k = 0
        H = self.H
        p = max(self.input_orders.values(), default=0)
        self._check_terminated()  # already at initialization
        if self.high_order_start and p >= 2 and end - self.t >= p * H \
                and not self._startup_obstacle() and self.terminated is None:
            k = self.settler.startup(p)
            self._check_terminated()
        array = None
        if self._loop is not None and self.t < end and self.terminated is None:
            why = self._loop.run_reason(self)
            if why and self.compiled:
                raise BuildError(f"MasterScheduler(compiled=True): the macro steps cannot run "
                                 f"compiled: {why}; pass compiled=None to fall back to the "
                                 "Python loop")
            self.compiled_reason = why
            if not why:
                k, array = self._loop.run(self, k, end, record.times, record.rows)
                self._check_terminated()
        while self.t < end and self.terminated is None:
            self._macro(k, H)
            record.point(H)
            k += 1
            if self._check_terminated():
                break
        return record.results(_perf() - wall0, k, array)

    # --------------------------------------- the recording interface (MasterRecord)
    def counter_names(self) -> list[str]:
        """The cumulative counters a mark keeps (:meth:`counters`), in order."""
        return (["iteration_total", "last_residual", "rejections"]
                + (["energy_total"] if self.bonds else [])
                + [f"wall/{name}" for name in self.wall])

    def counters(self) -> tuple:
        """The values of :meth:`counter_names` now."""
        fixed = (self.iteration_total, self.last_residual, self.rejections)
        energy = (self.energy_total,) if self.bonds else ()
        return fixed + energy + tuple(self.wall.values())

    def outputs_now(self) -> list:
        """The newest published output of every signal (a row of the results)."""
        return [h.v[-1] for h in self._hist_list]  # values are never modified in place

    def signal_specs(self) -> list[tuple]:
        """``(path, unit, shape, dtype)`` of every signal, in row order: the declared
        dtype, or for an undeclared one text as text (object) and the rest float."""
        out = []
        for sname, o in self.histories:
            s = self.by_name[sname]
            dtype = getattr(s, "dtypes", {}).get(o)
            if dtype is None:
                last = self.histories[(sname, o)].v
                dtype = object if last and isinstance(last[-1], (str, bytes)) else float
            out.append((f"{sname}.{o}", s.units[o] or "", tuple(s.shapes[o]), np.dtype(dtype)))
        return out

    def provenance(self, stream: bool = False) -> dict:
        """The results' provenance (``stream``: the stream writers' header form)."""
        if stream:
            return {"model": "+".join(s.name for s in self.subsystems),
                    "master": {"H_s": self.H * _NS, "coupling": type(self.coupling).__name__,
                               "extrapolation": sorted({int(v) for v in self.orders.values()})},
                    "versions": package_versions()}
        return {"model": "+".join(self.by_name), "coupling": self.coupling.name,
                "macro_step_s": self.H * _NS,
                "extrapolation": {".".join(k): v for k, v in self.orders.items()},
                "versions": package_versions()}

    def run_diagnostics(self, wall: float, n_steps: int) -> dict:
        """The run's diagnostics (``n_steps`` macro steps in ``wall`` seconds)."""
        sub_wall = sum(self.wall.values())
        diag = {
            "macro_steps": n_steps, "communications": self.exchanges, "wall_s": wall,
            "subsystem_wall_s": dict(self.wall), "subsystem_steps": dict(self.steps),
            "master_overhead_us_per_subsystem_step":
                1e6 * (wall - sub_wall) / max(1, sum(self.steps.values())),
            "init_sweeps": self.settler.init_sweeps,
            "startup_sweeps": self.settler.startup_sweeps,
            "loop_solves": self.settler.loop_solves,
            "loop_evaluations_per_solve":
                self.settler.loop_evaluations / max(1, self.settler.loop_solves),
            "rollbacks": self.rollbacks,
            "rejections": self.rejections,
            "step_sizes_s": list(self.step_sizes),
            "unrecoverable_steps": getattr(self, "unrecoverable", 0),
            "steps_over_tol_at_h_min": getattr(self, "over_tol_at_min", 0),
            "energy_residual_total": self.energy_total if self.bonds else None,
            "compiled": self.compiled_reason or True,
            "iterations_per_step_max": max(self.iterations, default=0),
            "iterations_per_step_mean": float(np.mean(self.iterations)) if self.iterations
            else 0.0,
        }
        if getattr(self, "terminated", None):
            diag["terminated"] = dict(self.terminated)
        return diag

    def tick_progress(self) -> None:
        self._bar.tick(self.t)

    def stepper(self, *, record_every: int | None = 1, t0_s: float = 0.0) -> Any:
        """The master stepped by the caller, one macro step at a time
        (:class:`~cosim.master_stepping.MasterStepper`: ``step()``, ``advance_to_ticks()``,
        ``results()``); the same outputs as :meth:`run`."""
        from .master_stepping import MasterStepper
        return MasterStepper(self, record_every=record_every, t0_s=t0_s)

    def _check_terminated(self) -> bool:
        """A subsystem ended the run (an FMU's terminateSimulation): not an error; the run
        stops after this communication point (``results.diagnostics["terminated"]``)."""
        for s in self.subsystems:
            term = getattr(s, "terminated", None)
            if term:
                self.terminated = {"t": term.get("t", self.t * _NS), "by": s.name,
                                   "reason": term.get("reason", "")}
                return True
        return False
