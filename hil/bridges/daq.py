"""DAQ bridge blocks: device channels as typed ports, sampled single-point.

:class:`DaqInput` reads input channels (``ai``, ``di``, ``counter``,
``frequency_in``) of a :class:`~hil.daq.DaqDevice` at each hit; :class:`DaqOutput`
writes output channels (``ao``, ``do``, ``pwm_out``) in its update.  The device is
given directly or through a backend that has one (``create_backend("daq-sim", ...)``
and the other DAQ backends expose ``.device``).  Units come from the channel specs.

Port names are the channel names with every character that is not a letter, digit or
``_`` replaced by ``_`` (``Dev1/ai0`` -> ``Dev1_ai0``), or as given in ``ports=``.

==========================  =======  ==============================================
port                        unit     value
==========================  =======  ==============================================
out <ai/frequency_in>       channel  the reading
out <di>                    1        1.0 / 0.0
out <counter>               1        edges since the last reset (float)
out ok                      1        1.0 when the last read succeeded (DaqInput)
in  <ao>                    channel  the value to write (range policy of the device)
in  <do>                    1        >= 0.5 writes True
in  <pwm>_duty, <pwm>_freq  1, Hz    a ``pwm_out`` channel's duty and frequency
==========================  =======  ==============================================

Errors follow ``on_error`` (:mod:`hil.bridges.base`); under ``"hold"`` a failed read
keeps the last values and sets ``ok`` to 0.

Limitations: software-timed single-point I/O at the bridge's rate (no buffered or
hardware-timed acquisition); a read of several channels is one device call, whose
channels are as simultaneous as the device makes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from cosim.errors import ParameterError

from ..daq.device import INPUT_KINDS, OUTPUT_KINDS
from ..errors import HILError
from .base import Bridge, BridgeError

__all__ = ["DaqInput", "DaqOutput"]


def _device(kind: str, name: str, backend: Any) -> Any:
    dev = getattr(backend, "device", backend)
    if not (hasattr(dev, "channels") and hasattr(dev, "channel")):
        raise ParameterError(f"{kind} '{name}': needs a DaqDevice or a backend with .device, "
                             f"got {type(backend).__name__}")
    return dev


def _port_name(channel: str, ports: Mapping[str, str]) -> str:
    return ports.get(channel) or re.sub(r"\W", "_", channel)


def _select(kind: str, name: str, dev: Any, channels: Iterable[str] | None,
            kinds: tuple) -> list:
    if channels is None:
        specs = [c for c in dev.channels if c.kind in kinds]
    else:
        specs = [dev.channel(c) for c in channels]  # unknown names list the channels
        wrong = [c for c in specs if c.kind not in kinds]
        if wrong:
            raise ParameterError(f"{kind} '{name}': channel {wrong[0].name!r} is "
                                 f"{wrong[0].kind}, not one of {', '.join(kinds)}")
    if not specs:
        raise ParameterError(f"{kind} '{name}': no {'/'.join(kinds)} channel on {dev!r}")
    return specs


class DaqInput(Bridge):
    """Read input channels at each hit (module docstring)."""

    kind = "DaqInput"
    receive_op = "read"

    def __init__(self, name: str, backend: Any, period_s: float,
                 channels: Iterable[str] | None = None, *, ports: Mapping[str, str] | None = None,
                 offset_s: float = 0.0, on_error: str = "raise") -> None:
        dev = _device(self.kind, name, backend)
        super().__init__(name, dev, period_s, offset_s=offset_s, on_error=on_error)
        self.specs = _select(self.kind, name, dev, channels, INPUT_KINDS)
        self.names = [c.name for c in self.specs]
        self.values = {c.name: 0.0 for c in self.specs}
        self.reads = 0
        self._good = 0.0
        ports = dict(ports or {})
        # the outputs, one group: the device is read once per hit (Bridge.receive), then
        # every port is a read of what was stored (_outputs)
        specs = [{"name": _port_name(c.name, ports),
                  "unit": "1" if c.kind in ("di", "counter") else c.unit,
                  "description": c.description} for c in self.specs]
        out = self.declare_received(specs + [{"name": "ok", "unit": "1"}])
        self.channel_ports = dict(zip(self.names, out[:-1], strict=True))
        self.ok = out[-1]
        self.declare_periodic_update(self.period_s, None, self.offset_s)

    def _fetch(self) -> dict:
        """One single-point read of the channels (a device is sampled, not a stream)."""
        return self.backend.read(self.names)

    def _store(self, got: dict | None, t: float) -> None:
        if got is None:  # the read failed (policy "hold"): last values, ok = 0
            self._good = 0.0
            return
        self.reads += 1
        self._good = 1.0
        for n, v in got.items():
            self.values[n] = float(v)

    def _outputs(self) -> tuple:
        return (*map(self.values.__getitem__, self.names), self._good)

    def stats(self) -> dict:
        return {**super().stats(), "reads": self.reads}


class DaqOutput(Bridge):
    """Write output channels in each update (module docstring)."""

    kind = "DaqOutput"

    def __init__(self, name: str, backend: Any, period_s: float,
                 channels: Iterable[str] | None = None, *, ports: Mapping[str, str] | None = None,
                 offset_s: float = 0.0, on_error: str = "raise") -> None:
        dev = _device(self.kind, name, backend)
        super().__init__(name, dev, period_s, offset_s=offset_s, on_error=on_error)
        self.specs = _select(self.kind, name, dev, channels, OUTPUT_KINDS)
        ports = dict(ports or {})
        self.inputs_of: dict[str, tuple] = {}
        for c in self.specs:
            p = _port_name(c.name, ports)
            if c.kind == "pwm_out":
                self.inputs_of[c.name] = (self.declare_input(f"{p}_duty", unit="1"),
                                          self.declare_input(f"{p}_freq", unit=c.unit or "Hz"))
            else:
                unit = "1" if c.kind == "do" else c.unit
                self.inputs_of[c.name] = (self.declare_input(p, unit=unit,
                                                             description=c.description),)
        self.writes = 0
        self._started = False
        self.declare_periodic_update(self.period_s, self._write, self.offset_s)

    def _write(self, ctx: Any) -> None:
        if not self._started:
            self._started = True
            self._require_open()
        values: dict[str, Any] = {}
        for c in self.specs:
            ins = [float(ctx.input(p)) for p in self.inputs_of[c.name]]
            if any(v != v for v in ins):
                raise BridgeError(f"{self.where}: input for channel {c.name!r} is NaN at "
                                  f"t = {ctx.time:.6g} s; not writing")
            if c.kind == "pwm_out":
                values[c.name] = (ins[0], ins[1])
            elif c.kind == "do":
                values[c.name] = ins[0] >= 0.5
            else:
                values[c.name] = ins[0]
        self._retry(ctx.time)
        try:
            self.backend.write(values)
        except HILError as exc:
            self._failed(exc, "write", ctx.time)
            return
        self._ok()
        self.writes += 1

    def stats(self) -> dict:
        return {**super().stats(), "writes": self.writes}
