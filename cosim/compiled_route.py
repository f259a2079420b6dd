"""Whether each advance of a Simulator runs in C: ``Simulator(..., compiled=None|True|False)``.

:class:`CompiledRoute` decides per advance (the option, the reasons of
:func:`~cosim.compiled_run.compiled_reason`, the blocks without a C form, the work done so far
against :attr:`CompiledRoute.threshold`), builds the :class:`~cosim.compiled_run.CompiledRun`
and says what ran (``diagnostics["compiled"]``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .compiled_run import CompiledRun, FailedInC, compiled_reason, same_params
from .errors import BuildError

__all__ = ["CompiledRoute"]


def _cold(sim: Any) -> str:
    """Why a block's C form would first wait for a long one-time compilation of its own
    (``c_form_cold()``: e.g. Numba kernels not yet in the cache); '' when none would.  A
    ``compiled=None`` run does not pay that in the middle of its work (``True`` does)."""
    for b in sim.plan.blocks:
        cold = getattr(b, "c_form_cold", None)
        why = cold() if cold is not None else ""
        if why:
            return f"block '{b.path}': {why}"
    return ""


#: ``compiled=None``'s reason while the run's work is below the threshold (one object, so
#: that the advances of a long real-time run add one reason, not one per count)
_SHORT = "a short run so far"


class CompiledRoute:
    """Whether each ``advance_to`` of the Simulator ``sim`` runs in C, per its ``compiled``
    option, and what ran (:attr:`ran`).

    * ``None``: in C when it can and it pays: once the run's work (the block-steps of the
      advances since ``initialize``, this one included) reaches :attr:`threshold`, about
      what generating and compiling costs in Python-loop time (the library is cached: a
      later run of the same diagram and parameters pays only the generation).  Decided on
      the work, never on the clock, so a run gives the same results on a busy machine.
      Real-time frames move to C once their work adds up; a runner that announces its end
      with :meth:`expect` gets C before its first frame, whatever the run's length (its
      frames' work is what counts); a caller that steps to a known end in short advances
      (a co-simulation master's run) announces it with :meth:`plan_to`, and the work is
      then weighed up to that end at each advance, as one advance to it would be.
      Otherwise, and when it cannot,
      the Python loop, the reason in ``diagnostics["compiled"]``;
    * ``True``: in C from the start (built at ``initialize``), or a
      :class:`~cosim.errors.BuildError` naming why not;
    * ``False``: the Python loop.

    A C run that fails (a non-finite state, a block's error) goes back to the start of its
    slice and the Python loop takes over from there: the failure is then the Python loop's
    own error, message and partial results (``diagnostics["compiled"]`` says so).  A study
    that varies parameters compiles each variant (the values are constants of the C).
    """

    #: block-steps of Python-loop work from which ``compiled=None`` compiles: about the
    #: break-even of one run (the Python loop costs 0.5-3 us per block-step; generating
    #: and compiling a diagram's C 0.1-1 s, growing with the diagram as the loop does)
    threshold = 100_000

    def __init__(self, sim: Any, compiled: bool | None) -> None:
        if compiled not in (None, True, False):
            from .errors import ParameterError
            raise ParameterError(f"Simulator(compiled=...) must be None, True or False, got "
                                 f"{compiled!r}")
        self.sim, self.compiled = sim, compiled
        self.run: CompiledRun | None = None
        self.reason = ""  #: why the last advance ran in Python ('' if it ran in C)
        self._key: Any = None  # what the reason was computed for
        self._cold: str | None = None  # a C form's long one-time compilation (_cold)
        self._why = ""
        self._failed = ""  # a build that failed, kept until the parameters change
        self._failed_params: Any = None
        self.ran: set = set()  #: True and/or the reasons, since the last initialize
        #: the AB3 history is forgotten at the first stop of the next C run (:meth:`choose`)
        self.drop_history = False
        self._work = 0  # block-steps since the last initialize (this run's work so far)
        self._run_end: int | None = None  # the end announced by plan_to

    def restart(self) -> None:
        """A new run (``Simulator.initialize``)."""
        self.ran = set()
        self._key = None
        self._work = 0

    def plan_to(self, end: int | None) -> None:
        """The caller will advance to tick ``end`` in short advances (a master's run;
        ``None``: no end known): ``compiled=None`` weighs the work from each advance's start
        up to ``end``, as a single advance to ``end`` would, and builds nothing now."""
        self._run_end = end

    def prepare(self) -> None:
        """``compiled=True``: build now (``Simulator.initialize``: set-up time, not the
        run's), or raise if the run cannot be compiled."""
        if self.compiled is True:
            self.choose(None, count=False)

    def expect(self, end: int) -> None:
        """The caller will advance to tick ``end`` in many short steps (a real-time runner's
        frames): with ``compiled=None``, build the C now, before the first frame, whenever
        the diagram can run in C, however short the run.  A real-time run is judged on
        each frame's work, not on its total: the build falls before the clock starts (and
        the library is cached for the next run), the frames then cost what C costs."""
        if self.compiled is None and self.run is None:
            self.choose(None, count=False, force=True)

    def advance(self, end: int, bar: Any, hold: bool = False) -> None:
        """Advance the Simulator to tick ``end``, in C or in the Python loop (class
        docstring); a C run that fails hands over to the Python loop at its slice's start.

        ``hold``: :func:`~cosim.simulator.advance_held`'s
        step, on the C run an earlier advance chose (no decision again), its state held in
        C (:meth:`CompiledRun.advance <cosim.compiled_run.CompiledRun.advance>`)."""
        sim = self.sim
        c = self.run if hold else self.choose(end)
        if c is None:
            sim.advancer.advance(end)
            return
        if not sim.fixed and sim.plan.n_continuous:  # SciPy calls the C (compiled_rhs)
            from .compiled_rhs import advance_variable
            advance_variable(c, end)
            return
        try:
            c.advance(end, bar, hold)
        except FailedInC as exc:
            self.ran.add(f"the C run failed ({exc}); the Python loop took over")
            sim.advancer.advance(end)

    def choose(self, end: int | None, count: bool = True,
               force: bool = False) -> CompiledRun | None:
        """The C run for the advance to tick ``end``, or None (the reason in
        :attr:`reason`); ``count``: it runs (:attr:`ran`); ``force``: build if it can,
        whatever the work."""
        sim = self.sim
        if self.compiled is False:
            return self._python("compiled=False", count)
        key = (len(sim.observers), len(sim.manipulators), sim.recorder)
        if key != self._key:
            self._key, self._why = key, compiled_reason(sim)
            self._cold = None
        why = self._why or self._missing() or (self._worth() if self.compiled is None else "")
        if not why and self.compiled is None and self.run is None:
            if self._cold is None:  # (once per diagram set-up: not at every advance)
                self._cold = _cold(sim)
            why = self._cold
        if not why and self.compiled is None and self.run is None and end is not None \
                and not force:
            work = self._estimate(end)
            run_end = self._run_end
            whole = self._estimate(run_end) if run_end is not None and run_end > end else work
            if self._work + whole < self.threshold:
                self._work += work
                why = _SHORT  # one reason however many advances (the count: diagnostic)
        if not why:
            if sim._dirty:  # a parameter changed: the Python program follows it too
                old = sim.program.solver
                sim._dirty = False
                sim.stats["rebuilds"] += 1
                sim._build_program()
                if old is not None and hasattr(old, "history"):
                    # the Python loop steps once with the old solver's history and rebuilds
                    # at the first stop: the C does the same (CompiledRun._push_history)
                    sim.program.solver.restore(*old.history())
                    self.drop_history = True
            why = self._build()
            if why and self.drop_history:  # the Python loop goes on with the new solver
                self.drop_history = False
                sim.reset_solver_history()
        if why:
            if self.compiled:
                raise BuildError(f"Simulator(compiled=True): the run cannot be compiled: {why}"
                                 "; pass compiled=None to fall back to the Python loop")
            return self._python(why, count)
        self.reason = ""
        if count:
            self.ran.add(True if sim.fixed or not sim.plan.n_continuous else
                         f"the right-hand side in C, variable-step '{sim.solver_name}' in "
                         "Python (SciPy's integrator, output points, events, major points)")
        return self.run

    def _missing(self) -> str:
        """The blocks without a C form that cannot be called back in Python either
        (:mod:`cosim.codegen.pycall`), named (known without generating anything; kept for
        the diagram)."""
        if not hasattr(self, "_missing_why"):
            from .codegen import why_no_c_form
            from .codegen.pycall import callback_reason
            # (one that can be called back in Python from the C is no reason)
            missing = [(b, f"{why}; not called back in Python: {cb}" if why !=
                        "no C description" else f"not called back in Python: {cb}")
                       for b in self.sim.plan.blocks
                       if (why := why_no_c_form(b)) and (cb := callback_reason(b))]
            self._missing_why = _without_c_form(*zip(*missing)) if missing else ""
        return self._missing_why

    #: ``compiled=None`` compiles a diagram with blocks called back in Python only when it
    #: has at least this many blocks in C per block called back: a block called back costs
    #: what it costs in the Python loop plus the call from C, so the C pays only for the
    #: work it takes over (the flagship's CAN nodes, 2 of 6 and 3 of 6 blocks called back,
    #: were slower compiled than in the Python loop in one measurement, not a bench case)
    callback_share = 4

    def _worth(self) -> str:
        """Why compiling would not pay for a diagram of mostly blocks called back ('' when
        it would; kept for the diagram)."""
        if not hasattr(self, "_worth_why"):
            from .codegen import why_no_c_form
            from .codegen.pycall import callback_reason
            blocks = self.sim.plan.blocks
            back = [(b, why) for b in blocks
                    if (why := why_no_c_form(b)) and not callback_reason(b)]
            in_c = len(blocks) - len(back)
            self._worth_why = "" if not back or in_c >= self.callback_share * len(back) \
                else (f"{len(back)} of its {len(blocks)} blocks would be called back in Python "
                      f"from the C ({_without_c_form(*zip(*back))}): the C pays from "
                      f"{self.callback_share} blocks in C per block called back; "
                      "compiled=True compiles it")
        return self._worth_why

    def _estimate(self, end: int) -> int:
        """Block-steps of the advance to ``end``: its steps on the grid (or its sample hits)
        times the blocks."""
        sim = self.sim
        span = max(0, end - sim.ctx.ticks)
        step = sim.grid.ticks or min((g.period for g in sim.plan.rate_groups
                                      if getattr(g, "period", 0)), default=0)
        steps = span // step + 1 if step else 1
        return int(steps) * max(1, len(sim.plan.blocks))

    def _python(self, why: str, count: bool) -> None:
        self.reason = why
        if count:
            self.ran.add(why)
        return None

    def _build(self) -> str:
        """The C run, made or kept ('' when there is one; else why not)."""
        from .codegen.model import CodegenError
        sim = self.sim
        if self.run is not None and not self.run.stale():
            return ""
        if self._failed and self._failed_params is not None and \
                same_params(self._failed_params, sim.ctx.params):
            return self._failed
        self.run = None
        try:
            self.run = CompiledRun(sim)
            return ""
        except CodegenError as exc:
            why = _without_c_form(exc.blocks, getattr(exc, "reasons", ())) if exc.blocks else \
                str(exc).removeprefix("export_fmu(): ")
        except BuildError as exc:  # the machine's: no compiler, a failing one, no cache
            why = str(exc)
            if self.compiled is None:
                import warnings

                from .errors import CosimWarning
                warnings.warn(f"Simulator: {why}\nThe run goes on in the Python loop (pass "
                              "compiled=False to choose it without this warning)",
                              CosimWarning, stacklevel=5)
        self._failed = why
        self._failed_params = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v
                               for v in sim.ctx.params]
        return why

    def diagnostic(self) -> Any:
        """``diagnostics["compiled"]``: True when every advance since the last initialize ran
        in C, else why the Python loop ran (``"partly: ..."`` when both did)."""
        def told(r: str) -> str:  # the short run's reason with the work it had counted
            return (f"a short run so far ({self._work} block-steps, compiling pays from "
                    f"{self.threshold}; compiled=True compiles at once)") if r is _SHORT else r
        reasons = sorted(told(r) for r in self.ran if r is not True)
        if not reasons:
            return True if self.ran or not self.reason else told(self.reason)
        return ("partly: " if True in self.ran else "") + "; ".join(reasons)


def _without_c_form(blocks: Any, reasons: Any = ()) -> str:
    """The blocks without a C form, named, with the reason where a block's class may have
    one (a FunctionBlock's function that does not translate)."""
    blocks, reasons = list(blocks), list(reasons) or [""] * len(blocks)
    named = [f"'{b.path}' ({type(b).__name__})" + (f": {why}" if why and why !=
                                                    "no C description" else "")
             for b, why in zip(blocks[:8], reasons[:8])]
    sep = "; " if any(why and why != "no C description" for why in reasons) else ", "
    return (f"{len(blocks)} block(s) without a C form: " + sep.join(named)
            + (f" and {len(blocks) - 8} more" if len(blocks) > 8 else ""))
