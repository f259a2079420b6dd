"""The HIL exception family.

Every error raised by a hardware backend, a framing layer or a device emulator
is a :class:`HILError` (itself a :class:`cosim.errors.CosimError`), so a runner
can tell HIL failures from build and step failures with one ``except``.  Where
a standard exception type describes the failure too, the class also derives
from it (``BackendTimeout`` is a ``TimeoutError``, ``Disconnected`` a
``ConnectionError``, ``FrameError`` a ``ValueError``), so generic code keeps
working.

Messages say what went wrong, where (backend kind, name and port) and what to
do, for example::

    serial '/dev/ttyUSB0': read failed: [Errno 5] Input/output error; the device
    or port went away: check the cable, the power and the port name

======================  =====================================================
class                   raised when
======================  =====================================================
``HILError``            base class of the family
``BackendError``        a backend cannot be opened, is used in the wrong state,
                        or its driver failed in an unexpected way
``BackendNotFound``     ``create_backend('name')`` with an unknown name
``DriverMissing``       the backend's driver package is not installed
``Disconnected``        the device or port went away (and was not, or could not
                        be, reconnected)
``BackendTimeout``      ``expect()`` got nothing in time, a write could not be
                        completed in time
``FrameError``          a received frame is malformed (bad COBS code, bad SLIP
                        escape, wrong length, overlong frame)
``CRCError``            a received frame fails its checksum
``LayoutError``         a fixed binary layout is ill-declared or a value does
                        not fit its field
======================  =====================================================
"""

from __future__ import annotations

import importlib
from typing import Any

from cosim.errors import CosimError


class HILError(CosimError):
    """Base class of every hardware-in-the-loop error."""


class BackendError(HILError):
    """A backend failed: cannot open, wrong state, or an unexpected driver error."""


class BackendNotFound(BackendError, KeyError):
    """No backend is registered under the requested name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class DriverMissing(BackendError, ImportError):
    """The backend needs a driver package that is not installed."""


class Disconnected(BackendError, ConnectionError):
    """The device or port went away."""


class BackendTimeout(HILError, TimeoutError):
    """Nothing arrived, or a write did not complete, within the timeout."""


class FrameError(HILError, ValueError):
    """A received frame is malformed."""


class CRCError(FrameError):
    """A received frame fails its checksum.

    Attributes
    ----------
    expected : int
        The checksum computed over the received payload.
    received : int
        The checksum carried by the frame.
    """

    def __init__(self, message: str, *, expected: int | None = None,
                 received: int | None = None) -> None:
        super().__init__(message)
        self.expected = expected
        self.received = received


class LayoutError(HILError, ValueError):
    """A fixed binary layout is ill-declared, or a value does not fit its field."""


def require(module: str, *, who: str, package: str, extra: str | None = None) -> Any:
    """``import module``, lazily (importing :mod:`hil` imports no driver), or
    :class:`DriverMissing` naming who needs it and the pip commands: the project's
    ``extra`` (``hil``, ``hil-test``) or, for a core dependency (``extra`` None: python-can,
    cantools, pyserial), cosim itself; or the ``package`` alone."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        with_cosim = "cosim" if extra is None else f"'cosim[{extra}]'"
        raise DriverMissing(f"{who}: {package} is not installed (import {module} failed: "
                            f"{exc}); install it with: pip install {with_cosim} (or pip "
                            f"install {package})") from exc
