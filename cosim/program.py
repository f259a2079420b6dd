"""The compiled program of a simulation run: what the :class:`~cosim.simulator.Simulator`
and its advancer (:mod:`cosim.advancer`) call to evaluate a diagram, for one set of
structural parameters.

The Simulator builds a new :class:`Program` when a parameter that the generated code
holds as a constant changes (``Simulator._build_program``); an advancer reads
``host.program`` again after every major point and every point it lets the host observe
(:class:`~cosim.advancer.SteppingHost`), never keeps one across them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import SimulationTerminated, StepError


@dataclass(frozen=True, eq=False)
class Program:
    """One compiled evaluation of the diagram.

    Attributes
    ----------
    ev : Evaluator
        The generated evaluation code (its ``locate`` names the block of a failure).
    outputs : callable
        ``outputs(ctx, signals)``: the outputs of continuous and direct blocks (sampled
        blocks keep their held values).
    rhs : callable
        ``rhs(t, x) -> dx/dt``: the derivatives, for the solvers.
    propagator : object or None
        The fused propagation of linear parts by the fixed-step method's own tableau
        (``Evaluator.make_propagator``), or None.
    solver : FixedStepSolver or None
        The fixed-step solver on ``rhs`` (None for variable-step runs).
    """

    ev: Any
    outputs: Callable
    rhs: Callable
    propagator: Any = None
    solver: Any = None

    def evaluate(self, ctx: Any, fn: Callable | None = None) -> None:
        """``fn`` (default :attr:`outputs`) on ``ctx``; a failure of the generated code
        becomes a :class:`StepError` naming the block."""
        try:
            (fn or self.outputs)(ctx, ctx.signals)
        except (StepError, SimulationTerminated):
            raise
        except Exception as exc:
            raise self.failure(exc, ctx) from exc

    def failure(self, exc: Exception, ctx: Any) -> StepError:
        """The :class:`StepError` for ``exc`` raised by the generated code at ``ctx``."""
        where = self.ev.locate(exc) or "generated evaluation code"
        return StepError(f"evaluating {where} failed at t = {ctx.time:.9g} s: "
                         f"{type(exc).__name__}: {exc}")
