"""Serial bridge blocks: the fields of a fixed binary layout as typed ports.

:class:`SerialReceive` reads records of a :class:`~hil.serial.Layout` from a
:class:`~hil.serial.SerialBackend` (the backend's own layout, or bytes unpacked here)
and shows the newest record's fields on output ports; :class:`SerialTransmit` packs its
inputs into a record and writes it every period.  Timing, error policy and staleness
are those of the CAN bridges (:mod:`hil.bridges.base`, :mod:`hil.bridges.can`), with
one key: ``"record"``.

Ports of :class:`SerialReceive`

=============  =======  ====================================================
out <field>    layout   the field's physical value from the newest record
out ok         1        1.0 while records are fresh
=============  =======  ====================================================

Ports of :class:`SerialTransmit`: ``in <field>`` for every named field (unit from the
layout); a value outside the field's raw range raises (the layout refuses it) unless
``clip=True``, which clips it and counts it in ``clipped``.

Limitations: one record type per direction (a device that multiplexes several record
types on one link needs a backend with a multiplexing layout); only numeric and bool
fields become ports (``Ns`` byte fields are skipped and sent as zeros).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cosim.errors import ParameterError

from ..errors import HILError
from ..serial.framing import Layout
from .base import Bridge, BridgeError, Freshness

__all__ = ["SerialReceive", "SerialTransmit"]

KEY = "record"


def _numeric_fields(layout: Layout) -> list:
    return [f for f in layout.fields if f.name is not None and not f.fmt.endswith("s")]


def _layout(kind: str, name: str, backend: Any, layout: Layout | None) -> Layout:
    lay = layout if layout is not None else getattr(backend, "layout", None)
    if not isinstance(lay, Layout):
        raise ParameterError(f"{kind} '{name}': give a Layout (layout=...) or a backend with "
                             f"one; got {lay!r}")
    return lay


class SerialReceive(Bridge):
    """Newest record's fields on output ports (module docstring).

    Parameters
    ----------
    backend : hil.serial.SerialBackend
    period_s : float
    layout : Layout, optional
        Default: ``backend.layout``.
    stale_after_s : float
        Default 3 periods.
    on_stale, safe, initial, startup_s, on_error
        As :class:`hil.bridges.can.CanReceive`.
    """

    kind = "SerialReceive"

    def __init__(self, name: str, backend: Any, period_s: float, *,
                 layout: Layout | None = None, stale_after_s: float | None = None,
                 on_stale: str = "hold", safe: Mapping[str, float] | None = None,
                 initial: Mapping[str, float] | None = None, startup_s: float = 0.0,
                 offset_s: float = 0.0, on_error: str = "raise") -> None:
        super().__init__(name, backend, period_s, offset_s=offset_s, on_error=on_error)
        self.layout = _layout(self.kind, name, backend, layout)
        self.fields = _numeric_fields(self.layout)
        names = [f.name for f in self.fields]
        for label, values in (("safe", safe or {}), ("initial", initial or {})):
            bad = [k for k in values if k not in names]
            if bad:
                raise ParameterError(f"SerialReceive '{name}': {label} names unknown field "
                                     f"{bad[0]!r}; fields: {', '.join(names)}")
        if on_stale == "safe" and set(safe or {}) != set(names):
            raise ParameterError(f"SerialReceive '{name}': on_stale='safe' needs a safe value "
                                 f"for every field: {', '.join(names)}")
        self.safe = dict(safe or {})
        self.initial = {n: float((initial or {}).get(n, 0.0)) for n in names}
        lim = 3.0 * self.period_s if stale_after_s is None else stale_after_s
        self.fresh = Freshness(self, [KEY], {KEY: lim}, on_stale, startup_s)
        self.values = dict(self.initial)
        self.bad_records = 0
        # the outputs, one group: the link is read once per hit (Bridge.receive), then
        # every port is a read of what was stored (_outputs)
        self._names = names
        ports = self.declare_received(
            [{"name": f.name, "unit": f.unit or None, "description": f.doc} for f in self.fields]
            + [{"name": "ok", "unit": "1"}])
        self.field_ports = dict(zip(names, ports[:-1], strict=True))
        self.ok = ports[-1]
        self.declare_periodic_update(self.period_s, None, self.offset_s)

    def _store(self, records: list | None, t: float) -> None:
        """The newest record's fields into :attr:`values`; update the staleness."""
        for r in records or ():
            if not isinstance(r, Mapping):
                try:
                    r = self.layout.unpack(r)
                except HILError:
                    self.bad_records += 1
                    continue
            self.values.update({k: float(r[k]) for k in self.values if k in r})
            self.fresh.received(KEY, t)
        self.fresh.update(t)

    def _outputs(self) -> tuple:
        return (*map(self._value, self._names), self.fresh.all_fresh())

    def _value(self, n: str) -> float:
        return self.fresh.value(KEY, self.values[n], self.safe.get(n), self.initial[n])

    def stats(self) -> dict:
        return {**super().stats(), "received": self.fresh.count[KEY],
                "stale_events": self.fresh.stale_events[KEY], "bad_records": self.bad_records}


class SerialTransmit(Bridge):
    """Pack the inputs into a record and write it every period (module docstring)."""

    kind = "SerialTransmit"

    def __init__(self, name: str, backend: Any, period_s: float, *,
                 layout: Layout | None = None, clip: bool = False, offset_s: float = 0.0,
                 on_error: str = "raise") -> None:
        super().__init__(name, backend, period_s, offset_s=offset_s, on_error=on_error)
        own = getattr(backend, "layout", None)
        self.layout = _layout(self.kind, name, backend, layout)
        if own is not None and own is not self.layout:
            raise ParameterError(f"SerialTransmit '{name}': the backend has its own layout "
                                 f"{own.name or own!r}; give the backend no layout (the bridge "
                                 f"packs) or use the same one")
        self._packs = own is None
        self.fields = _numeric_fields(self.layout)
        self.clip = bool(clip)
        self._blank = {f.name: b"" for f in self.layout.fields
                       if f.name is not None and f.fmt.endswith("s")}
        self.clipped = {f.name: 0 for f in self.fields}
        self.sent = 0
        self.field_ports = {f.name: self.declare_input(f.name, unit=f.unit or None,
                                                       description=f.doc)
                            for f in self.fields}
        self._started = False
        self.declare_periodic_update(self.period_s, self._send, self.offset_s)

    def _value(self, f: Any, v: float, t: float) -> float:
        if v != v:
            raise BridgeError(f"{self.where}: input {f.name!r} is NaN at t = {t:.6g} s; not "
                              f"sending (check the block feeding it)")
        if not self.clip or f.fmt.endswith(("e", "f", "d", "?")):
            return v
        lo, hi = f.raw_range()
        plo, phi = sorted((lo * f.scale + f.offset, hi * f.scale + f.offset))
        if v < plo or v > phi:
            self.clipped[f.name] += 1
            return min(max(v, plo), phi)
        return v

    def _send(self, ctx: Any) -> None:
        if not self._started:
            self._started = True
            self._require_open()
        t = ctx.time
        values = {f.name: self._value(f, float(ctx.input(self.field_ports[f.name])), t)
                  for f in self.fields}
        values.update(self._blank)
        self._retry(ctx.time)
        try:
            frame = self.layout.pack(values) if self._packs else values
            if getattr(getattr(self.backend, "state", None), "value", "open") == "reconnecting":
                # link down: one reconnect attempt when the backoff allows, never a wait
                # of the backend's timeout inside the frame (as CanTransmit writes)
                self.backend.write(frame, timeout=0.0)
            else:  # bounded: half a period at most (a stalled reader is a link fault)
                self.backend.write(frame, timeout=min(0.5 * self.period_s,
                                                      getattr(self.backend, "write_timeout",
                                                              1.0) or 1.0))
        except HILError as exc:
            self._failed(exc, "send", t)
            return
        self._ok()
        self.sent += 1

    def stats(self) -> dict:
        return {**super().stats(), "sent": self.sent,
                "clipped": {k: v for k, v in self.clipped.items() if v}}
