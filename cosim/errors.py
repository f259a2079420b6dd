"""Exception taxonomy, one family per lifecycle phase.

Build phase (``DiagramBuilder``/``build()``/compile) raises :class:`BuildError`
subclasses; running raises :class:`StepError` subclasses; misuse of a context
raises :class:`ContextError`.  Non-fatal problems are :class:`CosimWarning`
warnings.  Every message says what went wrong, where (block path and port) and
what to do about it.
"""

from __future__ import annotations


class CosimError(Exception):
    """Base class of every error raised by cosim."""


# ----------------------------------------------------------------- build phase
class BuildError(CosimError):
    """A diagram or block declaration is invalid."""


class PortError(BuildError, KeyError):
    """Unknown, duplicate or unconnected port."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ConnectError(BuildError):
    """Shape or dtype mismatch on a connection."""


class UnitError(BuildError, ValueError):
    """Unit string cannot be parsed, or two units are incompatible."""


class RateError(BuildError):
    """A period or offset is off the tick grid or otherwise invalid."""


class AlgebraicLoopError(BuildError):
    """An algebraic loop was found where loops are rejected, or is ill-posed."""


class ParameterError(BuildError, ValueError):
    """A block parameter has an invalid value."""


class NotADiagramError(BuildError, TypeError):
    """An entry point that takes a built Diagram got something else (a DiagramBuilder:
    call ``build()`` first)."""


class ContextError(CosimError):
    """A context was used with a diagram or block it does not belong to."""


# ------------------------------------------------------------------ run phase
class StepError(CosimError):
    """Simulation could not advance."""


class SolverError(StepError):
    """The integrator failed (step size underflow, Newton failure, ...)."""


class ZenoError(StepError):
    """Events accumulate: many state events within a vanishing time span."""


class NonFiniteError(StepError):
    """A state or signal became NaN or infinite."""


class LoopConvergenceError(StepError):
    """An algebraic loop did not converge."""


class SimulationTerminated(CosimError):
    """Not a failure: a block (an FMU's ``terminateSimulation``) ends the run here.

    Raised by an event handler; the simulator completes the current instant (outputs
    evaluated, observers sampled), stops, and reports ``reason`` and ``source`` in
    ``results.diagnostics["terminated"]``.
    """

    def __init__(self, reason: str, source: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.source = source


class OutputError(CosimError, OSError):
    """Results cannot be written where asked."""


class MissingExtraError(CosimError, ImportError):
    """An optional package is not installed; the message names the extra that brings it
    (``pip install 'cosim[hdf5]'``).  Raised before the work that needs it starts."""


# ------------------------------------------------------------------- warnings
class CosimWarning(UserWarning):
    """Non-fatal problem worth the user's attention."""
