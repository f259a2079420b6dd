"""A :class:`~hil.backend.Backend` around any :class:`~hil.daq.device.DaqDevice`.

The registry creates :class:`~hil.backend.Backend` subclasses only, and a DAQ
device is not frame-oriented, so :class:`DeviceBackend` maps the frame API onto
the device, as :class:`~hil.daq.backend.SimulatedDaqBackend` does for the
simulated one: ``write(frame)`` writes ``{name: value}`` to output channels
(checked before any I/O, so a bad value raises and faults nothing) and
``read()`` returns a snapshot ``{name: value}`` of every input channel (and
``receive_batch()`` one snapshot: a device is sampled, not a stream).  The
device itself is :attr:`DeviceBackend.device`.  A subclass only names its
device class::

    class ModbusDaqBackend(DeviceBackend):
        kind = "modbus"
        device_class = ModbusDaq

Backend keyword arguments (``name``, ``timeout``, ``reconnect``,
``reconnect_timeout``, ``backoff``) configure the adapter; every other keyword
goes to the device.  A networked device reconnects by itself on the next call
(:mod:`hil.daq.link`); with ``reconnect=True`` the adapter's own reconnect
machinery (:class:`~hil.backend.Backend`) closes and reopens the device instead,
so ``read()`` returns ``None`` while the link is down instead of raising.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..backend import Backend
from .device import DaqDevice

__all__ = ["DeviceBackend"]

_BACKEND_KW = ("reconnect", "reconnect_timeout", "backoff")


class DeviceBackend(Backend):
    """Backend adapter of a :class:`~hil.daq.device.DaqDevice` (see the module docstring)."""

    kind: ClassVar[str] = "daq"
    device_class: ClassVar[type[DaqDevice]]
    frame_key = None  # a snapshot carries no id

    def __init__(self, channels: Any, *, name: str | None = None,
                 timeout: float | None = 1.0, **config: Any) -> None:
        backend_kw = {k: config.pop(k) for k in _BACKEND_KW if k in config}
        super().__init__(name=name, timeout=timeout, **backend_kw)
        if backend_kw.get("reconnect"):
            config["reconnect"] = False  # one reconnect policy at a time: the Backend's
        self.device = self.device_class(channels, name=name, **config)

    @property
    def channel(self) -> str:
        return str(getattr(self.device, "address", self.device.where))

    def _open(self) -> None:
        self.device.close()  # a reconnect attempt after a lost link starts clean
        self.device.open()

    def _close(self) -> None:
        self.device.close()

    def _read_internal(self, timeout: float | None) -> dict[str, Any]:
        return self.device.read()

    def _read_batch(self, out: list, limit: int, accept: Any) -> int:
        """One snapshot: a device is sampled, not a stream (every ``_read_internal``
        returns one, so the default would read the device ``limit`` times)."""
        if limit > 0:
            out.append(self.device.read())
        return 0

    def _encode_frame(self, frame: Any) -> dict[str, Any]:
        return self.device.validate(frame)

    def _write(self, frame: dict[str, Any], timeout: float | None) -> None:
        self.device.write(frame)
