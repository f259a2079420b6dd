"""DAQ devices: the channel abstraction and a deterministic simulated device.

* :mod:`hil.daq.device`: :class:`ChannelSpec` (name, kind, range, unit,
  resolution) and the abstract :class:`DaqDevice` (lifecycle, name/kind/range
  checks, single-point ``read(names)`` / ``write(values)``, counter ``reset``).
* :mod:`hil.daq.simulated`: :class:`SimulatedDaq`, quantization, seeded noise,
  saturation, AO->AI / DO->DI wiring, edge counters, PWM and frequency
  measurement on a simulated clock.
* :mod:`hil.daq.backend`: :class:`SimulatedDaqBackend`, the ``"daq-sim"``
  registry entry (a :class:`~hil.backend.Backend` adapter).
* :mod:`hil.daq.link`: :class:`NetworkDaq`, the disconnect/reconnect policy of
  networked devices, :class:`LinkCounters`, :class:`DeviceIOError`.
* :mod:`hil.daq.modbus`: :class:`ModbusDaq` over Modbus TCP (pymodbus), ``"modbus"``.
* :mod:`hil.daq.opcua`: :class:`OpcUaDaq` over OPC UA (asyncua), ``"opcua"``.
* :mod:`hil.daq.nidaqmx`: :class:`NiDaqmxDevice` on NI-DAQmx, ``"nidaqmx"``.
* :mod:`hil.daq.adapter`: :class:`DeviceBackend`, the Backend adapter of a device.

The device modules import their driver only in ``open()``; the names
``ModbusDaq``, ``ModbusPoint``, ``OpcUaDaq``, ``OpcUaPoint`` and
``NiDaqmxDevice`` are loaded from here on first use, so ``import hil.daq``
imports none of pymodbus, asyncua or nidaqmx.

Not built yet: SCPI and other vendor (uldaq, LJM) devices.
"""

import importlib
from typing import Any

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
from .link import DeviceIOError, LinkCounters, NetworkDaq
from .simulated import SimulatedDaq

_LAZY = {
    "ModbusDaq": "modbus", "ModbusPoint": "modbus", "ModbusError": "modbus",
    "OpcUaDaq": "opcua", "OpcUaPoint": "opcua", "OpcUaError": "opcua",
    "NiDaqmxDevice": "nidaqmx",
}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'hil.daq' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value
    return value


__all__ = ["CHANNEL_KINDS", "INPUT_KINDS", "OUTPUT_KINDS", "ChannelKindError",
           "ChannelRangeError", "ChannelSpec", "DaqCounters", "DaqDevice", "DaqError",
           "DeviceIOError", "LinkCounters", "ModbusDaq", "ModbusError", "ModbusPoint",
           "NetworkDaq", "NiDaqmxDevice", "OpcUaDaq", "OpcUaError", "OpcUaPoint",
           "SimulatedDaq", "UnknownChannel"]
