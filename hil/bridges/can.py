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

Receive-side checks (each counted in ``stats()`` and, as bad frames, in the verdict):

* a frame whose length differs from the DBC's message length is rejected (``wrong_dlc``);
* a value outside the DBC's [min, max] (a raw 0x3FF gives throttle 1.023 against a max of
  1.0) is counted in ``out_of_range`` and, per ``on_range``, clamped into the range
  (``"clamp"``, the default), the frame rejected (``"reject"``) or kept (``"accept"``);
* a peer's DBC check (:mod:`hil.can.handshake`) with another database's fingerprint
  stops the run with :class:`~hil.can.handshake.DbcMismatch`; a request is answered;
* end-to-end protection (:mod:`hil.can.e2e`: alive counter and CRC, declared in the DBC by
  signal names or given as ``e2e=``): a bad CRC or a repeated counter rejects the frame,
  a counter jump counts the frames lost;
* ``max_age_s``: a frame older than this when it is read (now minus the driver's receive
  timestamp: a backlog in a socket, a pty or a reader queue) is rejected (``too_old``),
  so staleness is measured by the message's age, not only by silence.

:class:`CanTransmit` fills the alive counter and the CRC of a protected message itself.

Limitations
-----------
* Ages are in simulated time at the receiving hit, not the driver's timestamps: under
  the real-time runner they equal wall time to within the frame lateness.
* A frame id that is not in the chosen messages is ignored: the backend drops it
  (:meth:`hil.backend.Backend.receive_batch` with the ids of these messages, counted in
  the backend's ``filtered``; on ``udp_multicast`` before decoding), so ``unknown`` in
  ``stats()`` stays 0 unless a backend's filter lets another id through.
* Multiplexed signals and signals whose names clash across the chosen messages are
  not supported (name the messages separately in two bridges).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from cosim.errors import ParameterError

from ..can.codec import MessageCodec
from ..can.cyclic import _initial
from ..can.dbc import CanDatabase
from ..errors import HILError
from .base import Bridge, BridgeError, Freshness

__all__ = ["CanReceive", "CanTransmit", "RANGE_POLICIES"]

RANGE_POLICIES = ("clamp", "reject", "accept")


def _e2e_profiles(db: CanDatabase, messages: list[str], e2e: Any, owner: str) -> dict:
    """``{message: bound E2EProfile}`` from ``e2e`` (``"dbc"``: by signal names; a dict
    of profiles; ``None``: none)."""
    from ..can.e2e import E2EProfile, bind, profile_from_dbc
    if e2e is None:
        return {}
    if e2e == "dbc":
        out = {m: profile_from_dbc(db.message(m)) for m in messages}
        return {m: p for m, p in out.items() if p is not None}
    if not isinstance(e2e, Mapping):
        raise ParameterError(f"{owner}: e2e must be 'dbc', None or {{message: E2EProfile}}, "
                             f"got {e2e!r}")
    out = {}
    for m, p in e2e.items():
        if m not in messages:
            raise ParameterError(f"{owner}: e2e names {m!r}, not one of {', '.join(messages)}")
        if not isinstance(p, E2EProfile):
            raise ParameterError(f"{owner}: e2e[{m!r}] must be an E2EProfile, got {p!r}")
        out[m] = bind(p, db.message(m))
    return out


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
    on_range : {"clamp", "reject", "accept"}
        A decoded value outside the DBC's [min, max] (module docstring).
    e2e : "dbc", dict or None
        End-to-end protection per message (:mod:`hil.can.e2e`; default: as the DBC
        declares it).
    max_age_s : float, optional
        Reject frames older than this when read (module docstring).
    """

    kind = "CanReceive"

    def __init__(self, name: str, backend: Any, db: CanDatabase, messages: str | Iterable[str],
                 period_s: float, *, stale_after_s: float | Mapping[str, float] | None = None,
                 on_stale: str = "hold", safe: Mapping[str, float] | None = None,
                 initial: Mapping[str, float] | None = None, startup_s: float = 0.0,
                 offset_s: float = 0.0, on_error: str = "raise",
                 recover_every_s: float = 0.1, on_range: str = "clamp", e2e: Any = "dbc",
                 max_age_s: float | None = None) -> None:
        super().__init__(name, backend, period_s, offset_s=offset_s, on_error=on_error,
                         recover_every_s=recover_every_s)
        if on_range not in RANGE_POLICIES:
            raise ParameterError(f"CanReceive '{name}': on_range must be one of "
                                 f"{', '.join(RANGE_POLICIES)}, got {on_range!r}")
        if max_age_s is not None and not (isinstance(max_age_s, int | float) and max_age_s > 0):
            raise ParameterError(f"CanReceive '{name}': max_age_s must be a positive number "
                                 f"of seconds or None, got {max_age_s!r}")
        self.on_range = on_range
        self.max_age_s = None if max_age_s is None else float(max_age_s)
        self.db = db
        self.messages = [messages] if isinstance(messages, str) else list(messages)
        if not self.messages:
            raise ParameterError(f"CanReceive '{name}': give at least one message; the "
                                 f"database has {', '.join(db.message_names)}")
        self._ids: dict[tuple[int, bool], str] = {}
        self._cm: dict[str, Any] = {}  # cantools messages
        self._decode: dict[str, Any] = {}  # their decode_simple (hil.can.codec)
        self.infos: dict[str, Any] = {}  # signal -> SignalInfo
        for m in self.messages:
            msg = db.message(m)  # unknown names list the choices
            self._ids[(int(msg.frame_id), bool(msg.is_extended_frame))] = m
            self._cm[m] = msg
            self._decode[m] = MessageCodec(msg).decode
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
        from ..can.handshake import DBC_ANSWER_ID, DBC_ID
        self._dbc_ids = (DBC_ID, DBC_ANSWER_ID)
        self._accept = set(self._ids) | {(i, False) for i in self._dbc_ids}  # others dropped
        self.e2e = _e2e_profiles(db, self.messages, e2e, f"CanReceive '{name}'")
        from ..can.e2e import E2EState
        self._e2e_state = {m: E2EState(p) for m, p in self.e2e.items()}
        self._len = {m: int(self._cm[m].length) for m in self.messages}
        # [min, max] per signal from the DBC (None: unbounded)
        self._limits_dbc = {s: (i.minimum, i.maximum) for s, i in self.infos.items()
                            if i.minimum is not None or i.maximum is not None}
        inf = float("inf")
        self._bounds = [(s, -inf if lo is None else float(lo), inf if hi is None else float(hi))
                        for s, (lo, hi) in self._limits_dbc.items()]
        self.wrong_dlc = 0
        self.too_old = 0
        self.dbc_checks = 0  # peers' DBC checks answered (hil.can.handshake)
        self.out_of_range = {s: 0 for s in self._limits_dbc}
        self.initial = {s: float(initial.get(s, _initial(i))) for s, i in self.infos.items()}
        self.fresh = Freshness(self, self.messages, self._limits(stale_after_s), on_stale,
                               startup_s)
        # mutable I/O state (outside the context: the opaque "device" state)
        self.values = dict(self.initial)
        self.unknown = 0
        # the outputs, one group: the bus is read once per hit (Bridge.receive), then
        # every port is a read of what was stored (_outputs)
        self._names = list(self.infos)
        specs = [{"name": s, "unit": _unit(i), "description": f"{i.message}.{s}"}
                 for s, i in self.infos.items()]
        specs += [{"name": f"{m}_ok", "unit": "1"} for m in self.messages]
        specs.append({"name": "ok", "unit": "1"})
        ports = self.declare_received(specs)
        n = len(self._names)
        self.signal_ports = dict(zip(self._names, ports[:n], strict=True))
        self.ok_ports = dict(zip(self.messages, ports[n:-1], strict=True))
        self.ok = ports[-1]
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
    def _store(self, frames: list | None, t: float) -> None:
        """Decode the frames of this hit into :attr:`values`, with the receive-side
        checks (module docstring), and update the staleness."""
        now = time.time() if self.max_age_s is not None and frames else 0.0
        for f in frames or ():
            if getattr(f, "is_error_frame", False):
                continue
            m = self._ids.get((f.arbitration_id, bool(f.is_extended_id)))
            if m is None:
                if f.arbitration_id in self._dbc_ids and not f.is_extended_id:
                    self._dbc_check(f)
                    continue
                self.unknown += 1
                continue
            data = bytes(f.data)
            if len(data) != self._len[m]:
                self.wrong_dlc += 1
                continue
            if self.max_age_s is not None and f.timestamp and now - f.timestamp > self.max_age_s:
                self.too_old += 1
                continue
            try:  # cantools' decode_simple, bit for bit (hil.can.codec)
                values = self._decode[m](data)
            except Exception as exc:  # noqa: BLE001 - a malformed frame (cantools' error)
                self._failed(BridgeError(f"cannot decode {m} (id 0x{f.arbitration_id:X}, "
                                         f"{len(f.data)} bytes): {exc}"), f"decode {m}", t)
                continue
            st = self._e2e_state.get(m)
            if st is not None and not st.check(data, values[st.p.counter_signal]):
                continue
            if self._bounds and not self._in_range(values):
                continue
            self.values.update(values)
            self.fresh.received(m, t)
        self.fresh.update(t)

    def _outputs(self) -> tuple:
        """The ports' values (signals under the staleness policy, ``<MSG>_ok``, ``ok``)."""
        fresh = self.fresh
        flags = fresh.fresh
        if fresh.on_stale == "hold":  # Freshness.value's first case, for every signal
            signals = tuple(map(self.values.__getitem__, self._names))
        else:
            signals = tuple(map(self._value, self._names))
        return (signals + tuple(map(float, map(flags.__getitem__, self.messages)))
                + (float(all(flags.values())),))

    def _dbc_check(self, f: Any) -> None:
        """A peer's DBC check (:mod:`hil.can.handshake`): compare, answer a request."""
        from ..can.handshake import DbcMismatch, dbc_frame, mismatch_text, parse_dbc_frame
        if len(f.data) < 8:
            return
        fp, _, request = parse_dbc_frame(f)
        if fp != self.db.fingerprint:
            raise DbcMismatch(mismatch_text(self.db, fp, self.where))
        self.dbc_checks += 1
        if request:
            try:
                self.backend.write(dbc_frame(self.db, request=False), timeout=0.0)
            except HILError as exc:
                self._failed(exc, "answer the DBC check", 0.0)

    def _in_range(self, values: dict) -> bool:
        """Count values outside the DBC range; clamp them, or False to reject the frame."""
        ok = True
        for s, lo, hi in self._bounds:
            v = values.get(s)
            if v is None or lo <= v <= hi:
                continue
            self.out_of_range[s] += 1
            if self.on_range == "reject":
                ok = False
            elif self.on_range == "clamp":
                values[s] = min(max(v, lo), hi)
        return ok

    def io_figures(self) -> dict:
        fig = super().io_figures()
        e2e = [st.stats() for st in self._e2e_state.values()]
        fig["frames_lost"] = sum(x["lost"] for x in e2e)
        fig["bad_frames"] = (self.wrong_dlc + self.too_old + sum(self.out_of_range.values())
                             + sum(x["crc_errors"] + x["repeated"] for x in e2e))
        return fig

    def _value(self, s: str) -> float:
        return self.fresh.value(self.infos[s].message, self.values[s], self.safe.get(s),
                                self.initial[s])

    def stats(self) -> dict:
        return {**super().stats(), "received": dict(self.fresh.count),
                "unknown": self.unknown, "stale_events": dict(self.fresh.stale_events),
                "wrong_dlc": self.wrong_dlc, "too_old": self.too_old,
                "out_of_range": {k: v for k, v in self.out_of_range.items() if v},
                "e2e": {m: st.stats() for m, st in self._e2e_state.items()}}


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
    e2e : "dbc", E2EProfile or None
        End-to-end protection of the message (default: as the DBC declares it); its
        counter and CRC signals are filled in here, not ports.
    """

    kind = "CanTransmit"

    def __init__(self, name: str, backend: Any, db: CanDatabase, message: str,
                 period_s: float | None = None, *, enable_input: bool = False,
                 offset_s: float = 0.0, on_error: str = "raise",
                 recover_every_s: float = 0.1, e2e: Any = "dbc") -> None:
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
        from ..can.e2e import E2EProfile
        prof = _e2e_profiles(db, [message], {message: e2e} if isinstance(e2e, E2EProfile)
                             else e2e, f"CanTransmit '{name}'")
        self.e2e = prof.get(message)
        self._counter = 0
        hidden = () if self.e2e is None else (self.e2e.crc_signal, self.e2e.counter_signal)
        self.signal_ports = {s: self.declare_input(s, unit=_unit(i), description=f"{message}.{s}")
                             for s, i in self.infos.items() if s not in hidden}
        self.enable = self.declare_input("enable", unit="1") if enable_input else None
        self._range = {s: _physical_range(i) for s, i in self.infos.items()}
        # encoding fast path: values are clipped into the range that fits the bits here,
        # so cantools' strict checks (which double the encode time) are not needed
        self._cmsg = db.message(message)
        self._encode = MessageCodec(self._cmsg).encode  # cantools' encode, bit for bit
        self._fields = {"arbitration_id": int(self._cmsg.frame_id),
                        "is_extended_id": bool(self._cmsg.is_extended_frame),
                        "is_fd": bool(self._cmsg.is_fd)}
        self._Message = None
        self.sent = 0
        self.suppressed = 0  # hits with enable < 0.5
        self.skipped = 0  # hits in frames the runner skipped (nothing sent)
        self.clipped = {s: 0 for s in self.signal_ports}
        #: (signal, port, lo, hi) per input, in port order: what each send reads
        self._signals = [(s, p, *self._range[s]) for s, p in self.signal_ports.items()]
        self._started = False
        self.declare_periodic_update(self.period_s, self._send, self.offset_s)

    def _send(self, ctx: Any) -> None:
        if self._suppressed:
            self.skipped += 1
            return
        if not self._started:
            self._started = True
            self._require_open()
        if self.enable is not None and not ctx.input(self.enable) >= 0.5:
            self.suppressed += 1
            return
        values = {}
        read = ctx.input
        for s, port, lo, hi in self._signals:
            v = float(read(port))
            if v != v:
                raise BridgeError(f"{self.where}: input {s!r} is NaN at t = {ctx.time:.6g} s; "
                                  f"not sending {self.message} (check the block feeding it)")
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
            e2e = self.e2e
            if e2e is not None:
                values[e2e.counter_signal] = self._counter
                values[e2e.crc_signal] = 0
            data = self._encode(values)
            if e2e is not None:
                data = bytearray(data)
                data[e2e.crc_byte] = e2e.crc(data)
            self.backend.write(self._Message(data=data, **self._fields), timeout=0.0)
        except HILError as exc:
            self._failed(exc, f"send {self.message}", ctx.time)
            return
        if self._down:
            self._ok()
        self.sent += 1
        if self.e2e is not None:
            self._counter = (self._counter + 1) & 0xF

    def stats(self) -> dict:
        return {**super().stats(), "sent": self.sent, "suppressed": self.suppressed,
                "skipped": self.skipped,
                "clipped": {k: v for k, v in self.clipped.items() if v}}
