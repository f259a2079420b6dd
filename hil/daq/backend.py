"""A :class:`~hil.backend.Backend` around a :class:`SimulatedDaq`, registered as ``"daq-sim"``.

The registry creates :class:`~hil.backend.Backend` subclasses only, and a DAQ
device is not frame-oriented, so this small adapter maps the frame API onto the
device: ``write(frame)`` writes ``{name: value}`` to output channels (checked
before any I/O, so a bad value raises and faults nothing) and ``read()``
returns a snapshot ``{name: value}`` of every input channel.  The device
itself is :attr:`SimulatedDaqBackend.device`, for ``read(names)``, ``reset``,
``advance`` and the rest::

    b = create_backend("daq-sim", channels=[...], wiring={"ao0": "ai0"})
    with b:
        b.write({"ao0": 1.0})
        b.read()["ai0"]
"""

from __future__ import annotations

from .adapter import DeviceBackend
from .simulated import SimulatedDaq

__all__ = ["SimulatedDaqBackend"]


class SimulatedDaqBackend(DeviceBackend):
    """Backend adapter of :class:`SimulatedDaq`; keyword arguments other than
    the :class:`~hil.backend.Backend` ones (``name``, ``timeout``, ...) go to
    :class:`SimulatedDaq`."""

    kind = "daq-sim"
    device_class = SimulatedDaq

    @property
    def channel(self) -> str:
        return "sim"
