"""Hardware-in-the-loop: the real-time runner, I/O backends and their virtual twins.

Built so far (issue 8, first foundations):

* :mod:`hil.backend`: the abstract :class:`Backend` (python-can style template
  methods: ``read``/``write`` do timeouts, logging, error translation and
  reconnects; subclasses implement ``_open``/``_close``/``_read_internal``/
  ``_write``), :class:`BackendState`, :class:`Counters`, and the
  :class:`ErrorSink` through which background threads hand their exceptions to
  ``check()``.
* :mod:`hil.registry`: :func:`create_backend` by name, lazily, plus the
  entry-point group ``cosim.hil_backends``.
* :mod:`hil.errors`: the :class:`HILError` family.
* :mod:`hil.serial`: framing (COBS, SLIP, lines, fixed layouts), CRCs, the
  pyserial backend and a pty device emulator with a baud-rate model.
* :mod:`hil.can`: python-can backend, DBC signals through cantools, cyclic sending,
  staleness, logging and replay.
* :mod:`hil.daq`: the DAQ device abstraction (:class:`~hil.daq.ChannelSpec`,
  :class:`~hil.daq.DaqDevice`) and a deterministic simulated device (``"daq-sim"``).
* :mod:`hil.runner`: :class:`RealTimeRunner` (absolute deadlines, sleep/spin pacing,
  overrun policies, SCHED_FIFO/affinity/gc/timer slack, per-frame telemetry, live
  parameter changes) and the clocks.

Importing :mod:`hil` imports no driver: pyserial (and later python-can) are
imported when a backend is opened.  They come with the ``hil`` extra:
``pip install 'cosim[hil]'``.

Not built yet: Modbus/OPC UA/NI-DAQmx devices, bridges to diagram ports, shadow-model
mode, the ``cosim hil`` commands.
"""

from .backend import Backend, BackendState, Counters, ErrorSink, WorkerThread
from .errors import (
    BackendError,
    BackendNotFound,
    BackendTimeout,
    CRCError,
    Disconnected,
    DriverMissing,
    FrameError,
    HILError,
    LayoutError,
)
from .registry import available_backends, backend_class, create_backend, register_backend
from .runner import DeadlineMissed, MonotonicClock, RealTimeRunner, Telemetry, VirtualClock

__all__ = [
    "Backend", "BackendState", "Counters", "ErrorSink", "WorkerThread",
    "HILError", "BackendError", "BackendNotFound", "BackendTimeout", "CRCError",
    "Disconnected", "DriverMissing", "FrameError", "LayoutError",
    "available_backends", "backend_class", "create_backend", "register_backend",
    "DeadlineMissed", "MonotonicClock", "RealTimeRunner", "Telemetry", "VirtualClock",
]
