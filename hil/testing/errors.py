"""The errors of the test-step library.

=======================  ==============================================================
class                    raised when
=======================  ==============================================================
``TraceError``           a trace is ill-formed (times not increasing, a signal of the
                         wrong length, an unknown name) or a time asked of it lies
                         outside it
``WindowError``          a check's window is not covered by the trace and the samples
                         present do not decide the verdict, or holds no sample
``CheckFailed``          ``CheckResult.expect()`` / :func:`~hil.testing.checks.check` on
                         a failed check (an ``AssertionError``: pytest shows it as a
                         test failure, with the signals around the failing instant)
``NotTriggered``         a capture's result is asked but its start trigger never held
``CaptureIncomplete``    a capture's stop trigger or post-trigger time was not reached
                         when its result was asked (``partial=True`` accepts it)
=======================  ==============================================================
"""

from __future__ import annotations

from ..errors import HILError


class TraceError(HILError, ValueError):
    """A trace is ill-formed, or a name or time asked of it is not in it."""


class WindowError(TraceError):
    """A check's window is not covered by the trace (and the samples present do not
    decide the verdict), or it holds no sample."""


class CheckFailed(AssertionError):
    """A temporal check failed; the message says when, by how much, and shows the
    signals the check read around that instant.  ``result`` is the
    :class:`~hil.testing.checks.CheckResult`."""

    def __init__(self, message: str, result=None) -> None:
        super().__init__(message)
        self.result = result


class NotTriggered(HILError, LookupError):
    """A capture's start trigger never held: it has no result (not an empty one)."""


class CaptureIncomplete(HILError):
    """A capture's stop trigger or post-trigger time was not reached."""
