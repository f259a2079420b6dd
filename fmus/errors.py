"""The FMU exception family (one family per lifecycle phase, see ``cosim.errors``).

Build-time problems (a corrupt archive, a model description that does not
validate, no binary for this platform) are :class:`cosim.errors.BuildError`
subclasses; run-time problems (an FMU call that returns an error status, a
watchdog that had to kill a hung FMU, a crashed FMU process) are
:class:`cosim.errors.StepError` subclasses.  All of them are also
:class:`FMUError`, so ``except FMUError`` catches everything an FMU can do.
Messages say what went wrong, where (the FMU file, the instance, the FMI
function, the variable) and what to do.
"""

from __future__ import annotations

from cosim.errors import BuildError, CosimWarning, StepError


class FMUError(Exception):
    """Base class of every FMU import error (mixed into the build/step families)."""


class FMUArchiveError(FMUError, BuildError):
    """The file is not a usable FMU archive (not a ZIP, unsafe paths, too large)."""


class ModelDescriptionError(FMUError, BuildError):
    """``modelDescription.xml`` is missing, malformed or breaks an FMI rule.

    ``problems`` lists every :class:`~fmus.description.Problem` found (variable,
    rule, message).
    """

    def __init__(self, message: str, problems: list | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [])


class FMUBinaryError(FMUError, BuildError):
    """The FMU has no binary for this platform, or the binary does not load."""


class FMUConfigError(FMUError, BuildError):
    """An import option names an unknown variable or gives an unusable value."""


class FMUCallError(FMUError, StepError):
    """An FMI function returned ``Error``/``Fatal`` (or ``Discard`` where not allowed).

    Attributes: ``function`` (FMI name), ``status`` (``"error"``, ``"fatal"``,
    ...), ``time`` (simulation time of the call, if known), ``log`` (the FMU's
    last log messages).
    """

    def __init__(self, message: str, function: str = "", status: str = "",
                 time: float | None = None, log: list | None = None) -> None:
        super().__init__(message)
        self.function = function
        self.status = status
        self.time = time
        self.log = list(log or [])


class FMUDiscardError(FMUCallError):
    """A step was discarded by the FMU (``fmi2Discard``); ``last_time`` is how far it got."""

    last_time: float | None = None


class FMUTimeoutError(FMUCallError):
    """An out-of-process FMU did not answer within its watchdog time and was killed."""


class FMUCrashError(FMUCallError):
    """The process running an out-of-process FMU died (segfault, abort, exit)."""


class FMUTerminated(FMUError, StepError):
    """The FMU asked to terminate the simulation (``terminateSimulation``)."""


class FMICallException(Exception):  # noqa: N818 - fmpy's name, which the drivers match
    """An FMI call returned a status above warning (``function``, ``status``), before a
    driver names the FMU (:class:`FMUCallError`); fmpy raises its own of this name."""

    def __init__(self, function: str, status: int) -> None:
        label = ("ok", "warning", "discard", "error", "fatal", "pending")[status] \
            if 0 <= status < 6 else "illegal return code"
        super().__init__(f"{function} failed with status {status} ({label}).")
        self.function = function
        self.status = status


class FMUWarning(CosimWarning):
    """A non-fatal FMU problem: a model description rule broken in a way the import
    can work around, a unit that cannot be mapped, a status ``Warning``."""
