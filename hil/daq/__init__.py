"""DAQ devices: the channel abstraction and a deterministic simulated device.

* :mod:`hil.daq.device`: :class:`ChannelSpec` (name, kind, range, unit,
  resolution) and the abstract :class:`DaqDevice` (lifecycle, name/kind/range
  checks, single-point ``read(names)`` / ``write(values)``, counter ``reset``).
* :mod:`hil.daq.simulated`: :class:`SimulatedDaq`, quantization, seeded noise,
  saturation, AO->AI / DO->DI wiring, edge counters, PWM and frequency
  measurement on a simulated clock.
* :mod:`hil.daq.backend`: :class:`SimulatedDaqBackend`, the ``"daq-sim"``
  registry entry (a :class:`~hil.backend.Backend` adapter).

Not built yet: Modbus, OPC UA, SCPI and vendor (NI-DAQmx, uldaq, LJM) devices.
"""

from .device import (
    CHANNEL_KINDS,
    INPUT_KINDS,
    OUTPUT_KINDS,
    ChannelKindError,
    ChannelRangeError,
    ChannelSpec,
    DaqCounters,
    DaqDevice,
    DaqError,
    UnknownChannel,
)
from .simulated import SimulatedDaq

__all__ = ["CHANNEL_KINDS", "INPUT_KINDS", "OUTPUT_KINDS", "ChannelKindError",
           "ChannelRangeError", "ChannelSpec", "DaqCounters", "DaqDevice", "DaqError",
           "SimulatedDaq", "UnknownChannel"]
