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

from typing import Any

from ..backend import Backend
from .simulated import SimulatedDaq

__all__ = ["SimulatedDaqBackend"]


class SimulatedDaqBackend(Backend):
    """Backend adapter of :class:`SimulatedDaq`; keyword arguments other than
    the :class:`~hil.backend.Backend` ones (``name``, ``timeout``, ...) go to
    :class:`SimulatedDaq`."""

    kind = "daq-sim"

    def __init__(self, channels: Any, *, name: str | None = None,
                 timeout: float | None = 1.0, **device_config: Any) -> None:
        super().__init__(name=name, timeout=timeout)
        self.device = SimulatedDaq(channels, name=name, **device_config)

    @property
    def channel(self) -> str:
        return "sim"

    def _open(self) -> None:
        self.device.open()

    def _close(self) -> None:
        self.device.close()

    def _read_internal(self, timeout: float | None) -> dict[str, Any]:
        return self.device.read()

    def _encode_frame(self, frame: Any) -> dict[str, Any]:
        return self.device.validate(frame)

    def _write(self, frame: dict[str, Any], timeout: float | None) -> None:
        self.device.write(frame)
