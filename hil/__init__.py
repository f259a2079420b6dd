"""Hardware-in-the-loop: the real-time runner, I/O backends, bridge blocks, their virtual twins.

=========================  ==========================================================
module                     contents
=========================  ==========================================================
:mod:`hil.runner`          :class:`RealTimeRunner` (absolute deadlines, sleep/spin
                           pacing, overrun policies, live parameter changes, stop)
:mod:`hil.verdict`         :class:`Budget`, :class:`Verdict`: every run's pass/fail
:mod:`hil.telemetry`       constant-memory telemetry (histograms, ring, CSV stream)
:mod:`hil.rtsetup`         SCHED_FIFO, mlockall, pinning, gc, timer slack (auto)
:mod:`hil.master_rt`       a co-simulation master stepped by the runner
:mod:`hil.backend`         the abstract :class:`Backend` (python-can style template
                           methods, ``receive_batch`` with filtering, taps)
:mod:`hil.link`            a backend's link state, faults and reconnects
:mod:`hil.counters`        a backend's :class:`Counters`
:mod:`hil.threads`         :class:`ErrorSink` for background errors, worker and
                           reader threads, a stop flag a signal handler may set
:mod:`hil.lifeline`        child processes that end with the command that started
                           them; SIGTERM/SIGINT stop a run in order
:mod:`hil.registry`        :func:`create_backend` by name, lazily, plus the
                           entry-point group ``cosim.hil_backends``
:mod:`hil.errors`          the :class:`HILError` family
:mod:`hil.can`             python-can backend, DBC signals (cantools), cyclic sending,
                           staleness, logging and replay, an SLCAN pty hub
:mod:`hil.serial`          framing (COBS, SLIP, lines, layouts), CRCs, the pyserial
                           backend, a pty device emulator with a baud-rate model
:mod:`hil.daq`             the DAQ device abstraction, a deterministic simulated
                           device, Modbus TCP, OPC UA and NI-DAQmx devices
:mod:`hil.bridges`         CAN, serial and DAQ bridge blocks: typed ports, injected
                           backend, staleness and error policies
:mod:`hil.faults`          :class:`~hil.faults.FaultyBackend`: dropped and delayed
                           frames, bus-off
:mod:`hil.shadow`          shadow-model mode: residuals and fault flags of a model
                           run beside a machine (recorded or streamed)
:mod:`hil.cli`             ``cosim hil run FILE.py`` (with :mod:`hil.interfaces`,
                           the ``io`` of a model file; :mod:`hil.model_file`,
                           :mod:`hil.run_end`, :mod:`hil.cli_values`)
:mod:`hil.replay_cli`      ``cosim replay LOG``
:mod:`hil.diag`            diagnostics: a fault memory (DTCs, ISO 14229 status
                           bits) served over UDS on ISO-TP (can-isotp), read with
                           udsoncan; the example ACC controller's monitors
:mod:`hil.testing`         test steps for HIL test cases: traces, conditions with
                           margins, temporal checks (``eventually``, ``always``,
                           ``settles``, ``responds``), stimuli, triggered capture,
                           MDF 4 files
:mod:`hil.xcp`             XCP on CAN: a calibration and measurement slave of a
                           running controller (memory map, DAQ lists at its cycle),
                           the A2L file, pyxcp as the master
=========================  ==========================================================

Importing :mod:`hil` imports no driver: pyserial, python-can, cantools, pymodbus,
asyncua and nidaqmx are imported when a backend is opened.  They come with the
``hil`` extra (``pip install 'cosim[hil]'``; NI-DAQmx: ``cosim[nidaq]`` plus NI's
driver).
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
from .verdict import Budget, Verdict

__all__ = [
    "Backend", "BackendState", "Counters", "ErrorSink", "WorkerThread",
    "HILError", "BackendError", "BackendNotFound", "BackendTimeout", "CRCError",
    "Disconnected", "DriverMissing", "FrameError", "LayoutError",
    "available_backends", "backend_class", "create_backend", "register_backend",
    "DeadlineMissed", "MonotonicClock", "RealTimeRunner", "Telemetry", "VirtualClock",
    "Budget", "Verdict",
]
