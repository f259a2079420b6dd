r"""CAN bridge blocks: DBC signals as typed ports, received and sent at a sample rate.

:class:`CanReceive` turns the signals of one or more DBC messages into output ports
(unit from the DBC, through :class:`hil.can.CanDatabase`) and reports staleness;
:class:`CanTransmit` turns input ports into one DBC message sent every period (the
cyclic schedule is the block's sample rate, i.e. the simulator's clock and, under the
real-time runner, the wall clock: not python-can's ``send_periodic``).

Staleness (receiver): a message is *fresh* while its age, in simulated time since the
hit at which it was read, is at most ``stale_after_s`` (default: 3 cycle times from the
DBC's ``GenMsgCycleTime``, else 3 bridge periods).  A signal of a stale message takes,
per ``on_stale``:

``"hold"``   its last received value (the default);
``"safe"``   the value in ``safe`` (a fallback such as a closed throttle);
``"raise"``  the run stops with :class:`~hil.can.StaleSignal` naming block and signal.

Before a message was ever received its signals hold ``initial`` (default: the DBC
initial value, else 0 clipped into the signal's range); for ``startup_s`` after the
start this is not stale, afterwards a never-received message is stale like any other.

Ports of :class:`CanReceive` (one per signal, in DBC order)

==============  ======  =====================================================
port            unit    value
==============  ======  =====================================================
out <signal>    DBC     the physical value (per the staleness policy)
out <MSG>_ok    1       1.0 while message ``MSG`` is fresh, else 0.0
out ok          1       1.0 while every message is fresh
==============  ======  =====================================================

Ports of :class:`CanTransmit`

==============  ======  =====================================================
in <signal>     DBC     each signal of the message (clipped into the DBC range
                        before encoding; counted in ``clipped``)
in enable       1       only with ``enable_input=True``: send while >= 0.5
==============  ======  =====================================================

Limitations
-----------
* Ages are in simulated time at the receiving hit, not the driver's timestamps: under
  the real-time runner they equal wall time to within the frame lateness.
* A frame id that is not in the database is counted (``unknown``) and ignored.
* Multiplexed signals and signals whose names clash across the chosen messages are
  not supported (name the messages separately in two bridges).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cosim.errors import ParameterError

from ..can.cyclic import _initial
from ..can.dbc import CanDatabase
from ..errors import HILError
from .base import Bridge, BridgeError, Freshness

__all__ = ["CanReceive", "CanTransmit"]


def _cycle_s(db: CanDatabase, message: str) -> float | None:
    ct = getattr(db.message(message), "cycle_time", None)
    return None if not ct else float(ct) / 1000.0


def _unit(info: Any) -> str | None:
    return info.unit


def _physical_range(info: Any) -> tuple[float, float]:
    """The DBC's [min, max] intersected with what the signal's bits can carry."""
    n = int(info.length)
    raw = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if info.is_signed else (0, (1 << n) - 1)
    a, b = (r * info.scale + info.offset for r in raw)
    lo, hi = min(a, b), max(a, b)
    if info.minimum is not None:
        lo = max(lo, float(info.minimum))
    if info.maximum is not None:
        hi = min(hi, float(info.maximum))
    return lo, hi


class CanReceive(Bridge):
    """Receive DBC messages; one output port per signal (module docstring).

    Parameters
    ----------
    backend : hil.can.CanBackend (or any Backend returning ``can.Message``)
    db : hil.can.CanDatabase
    messages : str or list of str
        Message names whose signals become outputs.
    period_s : float
        How often the bus is read (the outputs are held in between).
    stale_after_s : float or dict, optional
        Per message (dict) or for all; default 3 cycle times (DBC) or 3 periods.
    on_stale : {"hold", "safe", "raise"}
    safe, initial : dict, optional
        ``{signal: value}``; ``safe`` is required for every signal under ``"safe"``.
    startup_s : float
        Grace time after the start during which a never-received message is not stale.
    """

    kind = "CanReceive"

    def __init__(self, name: str, backend: Any, db: CanDatabase, messages: str | Iterable[str],
                 period_s: float, *, stale_after_s: float | Mapping[str, float] | None = None,
                 on_stale: str = "hold", safe: Mapping[str, float] | None = None,
                 initial: Mapping[str, float] | None = None, startup_s: float = 0.0,
                 offset_s: float = 0.0, on_error: str = "raise",
                 recover_every_s: float = 0.1) -> None:
        super().__init__(name, backend, period_s, offset_s=offset_s, on_error=on_error,
                         recover_every_s=recover_every_s)
        self.db = db
        self.messages = [messages] if isinstance(messages, str) else list(messages)
        if not self.messages:
            raise ParameterError(f"CanReceive '{name}': give at least one message; the "
                                 f"database has {', '.join(db.message_names)}")
        self._ids: dict[tuple[int, bool], str] = {}
        self._cm: dict[str, Any] = {}  # cantools messages
        self.infos: dict[str, Any] = {}  # signal -> SignalInfo
        for m in self.messages:
            msg = db.message(m)  # unknown names list the choices
            self._ids[(int(msg.frame_id), bool(msg.is_extended_frame))] = m
            self._cm[m] = msg
            for s, info in db.signals(m).items():
                if s in self.infos:
                    raise ParameterError(
                        f"CanReceive '{name}': signal {s!r} is in {self.infos[s].message} "
                        f"and {m}; use one bridge per message for clashing names")
                self.infos[s] = info
        safe = dict(safe or {})
        initial = dict(initial or {})
        for label, values in (("safe", safe), ("initial", initial)):
            unknown = [k for k in values if k not in self.infos]
            if unknown:
                raise ParameterError(f"CanReceive '{name}': {label} names unknown signal "
                                     f"{unknown[0]!r}; signals: {', '.join(self.infos)}")
        if on_stale == "safe":
            missing = [s for s in self.infos if s not in safe]
            if missing:
                raise ParameterError(f"CanReceive '{name}': on_stale='safe' needs a safe value "
                                     f"for every signal; missing {', '.join(missing)}")
        self.safe = safe
        self.initial = {s: float(initial.get(s, _initial(i))) for s, i in self.infos.items()}
        self.fresh = Freshness(self, self.messages, self._limits(stale_after_s), on_stale,
                               startup_s)
        # mutable I/O state (outside the context: the opaque "device" state)
        self.values = dict(self.initial)
        self.unknown = 0
        self.signal_ports = {}
        for s, info in self.infos.items():
            self.signal_ports[s] = self.declare_output(
                s, lambda ctx, s=s: self._poll(ctx) or self._value(s), unit=_unit(info),
                depends_on=(), description=f"{info.message}.{s}")
        self.ok_ports = {m: self.declare_output(f"{m}_ok", lambda ctx, m=m: self._poll(ctx)
                                                or float(self.fresh.fresh[m]), unit="1",
                                                depends_on=())
                         for m in self.messages}
        self.ok = self.declare_output("ok", lambda ctx: self._poll(ctx)
                                      or self.fresh.all_fresh(), unit="1",
                                      depends_on=())
        # sampled: outputs held between hits; the read happens at evaluation
        self.declare_periodic_update(self.period_s, None, self.offset_s)

    def _limits(self, stale_after_s: Any) -> dict[str, float]:
        out = {}
        for m in self.messages:
            if isinstance(stale_after_s, Mapping):
                lim = stale_after_s.get(m)
            else:
                lim = stale_after_s
            if lim is None:
                cyc = _cycle_s(self.db, m)
                lim = 3.0 * (cyc if cyc is not None else self.period_s)
            out[m] = lim
        if isinstance(stale_after_s, Mapping):
            unknown = [k for k in stale_after_s if k not in self.messages]
            if unknown:
                raise ParameterError(f"CanReceive '{self.name}': stale_after_s names "
                                     f"{unknown[0]!r}, not one of {', '.join(self.messages)}")
        return out

    # ------------------------------------------------------------------ I/O
    def _poll(self, ctx: Any) -> None:
        """Read the bus once per tick (returns None so ``_poll(ctx) or value`` works)."""
        frames = self._receive(ctx)
        if frames is None:
            return None
        t = ctx.time
        for f in frames:
            if getattr(f, "is_error_frame", False):
                continue
            m = self._ids.get((f.arbitration_id, bool(f.is_extended_id)))
            if m is None:
                self.unknown += 1
                continue
            try:
                values = self._cm[m].decode(bytes(f.data), decode_choices=False, scaling=True)
            except Exception as exc:  # noqa: BLE001 - a malformed frame (cantools' error)
                self._failed(BridgeError(f"cannot decode {m} (id 0x{f.arbitration_id:X}, "
                                         f"{len(f.data)} bytes): {exc}"), f"decode {m}", t)
                continue
            self.values.update(values)
            self.fresh.received(m, t)
        self.fresh.update(t)
        return None

    def _value(self, s: str) -> float:
        return self.fresh.value(self.infos[s].message, self.values[s], self.safe.get(s),
                                self.initial[s])

    def stats(self) -> dict:
        return {**super().stats(), "received": dict(self.fresh.count),
                "unknown": self.unknown, "stale_events": dict(self.fresh.stale_events)}


class CanTransmit(Bridge):
    """Send one DBC message every period from input ports (module docstring).

    Parameters
    ----------
    backend : hil.can.CanBackend
    db : hil.can.CanDatabase
    message : str
    period_s : float, optional
        Default: the DBC's ``GenMsgCycleTime``.
    enable_input : bool
        Declare an ``enable`` input; nothing is sent while it is below 0.5.
    """

    kind = "CanTransmit"

    def __init__(self, name: str, backend: Any, db: CanDatabase, message: str,
                 period_s: float | None = None, *, enable_input: bool = False,
                 offset_s: float = 0.0, on_error: str = "raise",
                 recover_every_s: float = 0.1) -> None:
        if period_s is None:
            period_s = _cycle_s(db, message)
            if period_s is None:
                raise ParameterError(f"CanTransmit '{name}': {message} has no cycle time in "
                                     f"the DBC (GenMsgCycleTime); give period_s")
        super().__init__(name, backend, period_s, offset_s=offset_s, on_error=on_error,
                         recover_every_s=recover_every_s)
        self.db = db
        self.message = message
        self.infos = db.signals(message)  # unknown message lists the choices
        self.signal_ports = {s: self.declare_input(s, unit=_unit(i), description=f"{message}.{s}")
                             for s, i in self.infos.items()}
        self.enable = self.declare_input("enable", unit="1") if enable_input else None
        self._range = {s: _physical_range(i) for s, i in self.infos.items()}
        # encoding fast path: values are clipped into the range that fits the bits here,
        # so cantools' strict checks (which double the encode time) are not needed
        self._cmsg = db.message(message)
        self._fields = {"arbitration_id": int(self._cmsg.frame_id),
                        "is_extended_id": bool(self._cmsg.is_extended_frame),
                        "is_fd": bool(self._cmsg.is_fd)}
        self._Message = None
        self.sent = 0
        self.suppressed = 0  # hits with enable < 0.5
        self.clipped = {s: 0 for s in self.infos}
        self._started = False
        self.declare_periodic_update(self.period_s, self._send, self.offset_s)

    def _send(self, ctx: Any) -> None:
        if not self._started:
            self._started = True
            self._require_open()
        if self.enable is not None and not ctx.input(self.enable) >= 0.5:
            self.suppressed += 1
            return
        values = {}
        for s, port in self.signal_ports.items():
            v = float(ctx.input(port))
            if v != v:
                raise BridgeError(f"{self.where}: input {s!r} is NaN at t = {ctx.time:.6g} s; "
                                  f"not sending {self.message} (check the block feeding it)")
            lo, hi = self._range[s]
            if v < lo or v > hi:
                self.clipped[s] += 1
                v = min(max(v, lo), hi)
            values[s] = v
        if self._down:
            self._retry(ctx.time)
        try:
            if self._Message is None:
                from ..can.backend import import_can
                self._Message = import_can().Message
            data = self._cmsg.encode(values, scaling=True, strict=False)
            self.backend.write(self._Message(data=data, **self._fields), timeout=0.0)
        except HILError as exc:
            self._failed(exc, f"send {self.message}", ctx.time)
            return
        self._ok()
        self.sent += 1

    def stats(self) -> dict:
        return {**super().stats(), "sent": self.sent, "suppressed": self.suppressed,
                "clipped": {k: v for k, v in self.clipped.items() if v}}
