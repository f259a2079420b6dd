"""The link policy of networked DAQ devices (Modbus TCP, OPC UA): disconnects,
reconnects on the next call, and what was lost meanwhile.

:class:`NetworkDaq` is a :class:`~hil.daq.device.DaqDevice` whose channels sit
behind a connection that can go away mid-run (a PLC reboots, a server is
restarted, a cable is pulled).  A subclass implements the connection and the
I/O; the base decides what a lost link means:

==============================  ==============================================
subclass implements             contract
==============================  ==============================================
``_connect()``                  open the connection; raise on failure (bounded
                                by the subclass's connect timeout)
``_disconnect(lost)``           drop it; must not raise (``lost``: the peer is
                                already gone, do not say goodbye)
``_is_link_error(exc)``         True when ``exc`` means the connection is gone
``_read_io(specs)``             ``{name: value}`` over the open connection
``_write_io(values)``           apply ``{name: value}``
==============================  ==============================================

Policy (``reconnect=True``, the default):

* The first :meth:`~hil.daq.device.DaqDevice.open` does not retry: a server
  that is not there at start is a :class:`~hil.errors.BackendError` at once.
* A link error during ``read``/``write`` closes the connection, counts a
  disconnect and a lost read (or write) in :attr:`NetworkDaq.link_counters`,
  and raises :class:`~hil.errors.Disconnected`.  Nothing is retried within the
  call: a real-time loop gets its answer within one I/O timeout.
* Every later call first tries to reconnect, at most one connect attempt per
  call and no more often than the backoff allows (the delay doubles from
  ``backoff[0]`` up to ``backoff[1]`` after each failed attempt).  A call that
  finds the link down and cannot bring it back raises
  :class:`~hil.errors.Disconnected` (counted as lost) straight away; a call
  whose reconnect succeeds does its I/O and returns normally.
* With ``reconnect_timeout`` set, a link down for longer than that gives up:
  every call raises :class:`~hil.errors.Disconnected` until ``close()`` and
  ``open()``.  With ``reconnect=False`` the first loss gives up.

Limitations
-----------
* ``read``/``write`` are serialized by a lock; they may be called from more
  than one thread but do not run in parallel.
* Reconnects happen only inside ``read``/``write``/``reset`` calls; there is
  no watchdog thread.
"""

from __future__ import annotations

import abc
import logging
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import BackendError, Disconnected
from .device import ChannelSpec, DaqDevice, DaqError

__all__ = ["LinkCounters", "NetworkDaq", "DeviceIOError"]

log = logging.getLogger("hil.daq")


class DeviceIOError(DaqError):
    """The device answered, but refused a request (a Modbus exception response,
    a bad OPC UA status code).  The link stays up.

    Attributes
    ----------
    channels : tuple of str
        The channels the failed request was for.
    code : int or None
        The protocol's error code (Modbus exception code, OPC UA status code).
    """

    def __init__(self, message: str, *, channels: Sequence[str] = (),
                 code: int | None = None) -> None:
        super().__init__(message)
        self.channels = tuple(channels)
        self.code = code


@dataclass
class LinkCounters:
    """What happened to a device's connection since it was created."""

    disconnects: int = 0  # links lost during I/O
    reconnects: int = 0  # successful reconnects
    reconnect_attempts: int = 0
    lost_reads: int = 0  # read() calls that raised Disconnected
    lost_writes: int = 0  # write() / reset() calls that raised Disconnected
    device_errors: int = 0  # refused requests (DeviceIOError); the link stayed up

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class NetworkDaq(DaqDevice):
    """A DAQ device behind a connection that may drop (see the module docstring).

    Parameters
    ----------
    channels, name, out_of_range
        See :class:`~hil.daq.device.DaqDevice`.
    reconnect : bool
        Reconnect on the next call after a lost link (default) or give up.
    reconnect_timeout : float or None
        Give up when the link has been down this long (seconds); ``None``:
        keep trying.
    backoff : (float, float)
        First and largest delay between reconnect attempts, in seconds.
    """

    def __init__(self, channels: Iterable[ChannelSpec | Mapping[str, Any]], *,
                 name: str | None = None, out_of_range: str = "raise",
                 reconnect: bool = True, reconnect_timeout: float | None = None,
                 backoff: tuple[float, float] = (0.05, 1.0)) -> None:
        super().__init__(channels, name=name, out_of_range=out_of_range)
        if not (0 < backoff[0] <= backoff[1]):
            raise ValueError(f"{type(self).__name__}: backoff must be (first > 0, largest >= "
                             f"first), got {backoff}")
        if reconnect_timeout is not None and reconnect_timeout < 0:
            raise ValueError(f"{type(self).__name__}: reconnect_timeout must be >= 0 or None, "
                             f"got {reconnect_timeout}")
        self.reconnect = reconnect
        self.reconnect_timeout = reconnect_timeout
        self.backoff = (float(backoff[0]), float(backoff[1]))
        self.link_counters = LinkCounters()
        self._io_lock = threading.RLock()
        self._link_up = False
        self._gave_up = False
        self._down_since = 0.0
        self._next_attempt = 0.0
        self._attempts = 0
        self.last_error: BaseException | None = None
        self._counter_base: dict[str, int] = {}

    # ------------------------------------------------------------ subclass API
    @property
    @abc.abstractmethod
    def address(self) -> str:
        """Host:port or URL, for messages."""

    @abc.abstractmethod
    def _connect(self) -> None: ...

    @abc.abstractmethod
    def _disconnect(self, lost: bool) -> None: ...

    @abc.abstractmethod
    def _is_link_error(self, exc: BaseException) -> bool: ...

    @abc.abstractmethod
    def _read_io(self, specs: Sequence[ChannelSpec]) -> dict[str, Any]: ...

    @abc.abstractmethod
    def _write_io(self, values: dict[str, Any]) -> None: ...

    def _connect_hint(self) -> str:
        return "check the host, the port and that the server runs"

    # ------------------------------------------------------------- properties
    @property
    def where(self) -> str:
        named = f" {self.name!r}" if self.name else ""
        return f"{self.kind}{named} {self.address}"

    @property
    def link_up(self) -> bool:
        """True while the connection is believed to be up."""
        return self._link_up

    # --------------------------------------------------------------- lifecycle
    def _open(self) -> None:
        try:
            self._connect()
        except BackendError:
            self._safe_disconnect(lost=True)
            raise
        except Exception as exc:
            self._safe_disconnect(lost=True)
            raise BackendError(f"{self.where}: cannot connect: {type(exc).__name__}: {exc}; "
                               f"{self._connect_hint()}") from exc
        self._link_up = True
        self._gave_up = False
        self._attempts = 0
        self.last_error = None

    def _close(self) -> None:
        with self._io_lock:
            self._safe_disconnect(lost=not self._link_up)
            self._link_up = False

    def _safe_disconnect(self, lost: bool) -> None:
        try:
            self._disconnect(lost)
        except Exception as exc:  # noqa: BLE001 - closing a dead link may fail
            log.debug("%s: disconnect: %r ignored", self.where, exc)

    # ---------------------------------------------------------------------- I/O
    def _read(self, specs: Sequence[ChannelSpec]) -> dict[str, Any]:
        with self._io_lock:
            return self._guarded("read", self._read_io, specs)

    def _write(self, values: dict[str, Any]) -> None:
        with self._io_lock:
            self._guarded("write", self._write_io, values)

    def _reset(self, specs: Sequence[ChannelSpec]) -> None:
        """Software reset: remember the raw counts now; reads subtract them."""
        with self._io_lock:
            raw = self._guarded("reset", self._read_raw_counts, specs)
            self._counter_base.update(raw)

    def _read_raw_counts(self, specs: Sequence[ChannelSpec]) -> dict[str, int]:
        saved = {s.name: self._counter_base.pop(s.name, None) for s in specs}
        try:
            return {k: int(v) for k, v in self._read_io(specs).items()}
        finally:
            for k, v in saved.items():
                if v is not None:
                    self._counter_base[k] = v

    def _count_value(self, spec: ChannelSpec, raw: int) -> int:
        """A counter reading: raw count minus the reset baseline, wrapped."""
        bits = spec.resolution_bits or 32
        return (int(raw) - self._counter_base.get(spec.name, 0)) % (1 << bits)

    def _saturate(self, spec: ChannelSpec, v: float) -> float:
        """Clip an ai/frequency_in reading to its range, counting the clip."""
        lo, hi = spec.range
        if v < lo or v > hi:
            self.counters.saturations += 1
            self.counters.saturated[spec.name] = self.counters.saturated.get(spec.name, 0) + 1
            return min(max(v, lo), hi)
        return v

    def _guarded(self, op: str, fn: Any, arg: Any) -> Any:
        self._ensure_link(op)
        try:
            return fn(arg)
        except DeviceIOError:
            self.link_counters.device_errors += 1
            raise
        except Exception as exc:
            if not self._is_link_error(exc):
                raise
            self._lost(exc, op)

    def _lost_field(self, op: str) -> str:
        return "lost_reads" if op == "read" else "lost_writes"

    def _lost(self, exc: BaseException, op: str) -> None:
        lc = self.link_counters
        lc.disconnects += 1
        setattr(lc, self._lost_field(op), getattr(lc, self._lost_field(op)) + 1)
        self._link_up = False
        self.last_error = exc
        now = time.monotonic()
        self._down_since = now
        self._next_attempt = now  # the next call tries at once
        self._attempts = 0
        self._safe_disconnect(lost=True)
        if self.reconnect:
            todo = "the next call reconnects (a restarted server is picked up automatically)"
        else:
            self._gave_up = True
            todo = "reconnect=False: close() and open() the device to reconnect"
        log.warning("%s: link lost during %s: %s", self.where, op, exc)
        raise Disconnected(f"{self.where}: link lost during {op}(): {type(exc).__name__}: "
                           f"{exc}; {todo}; check the server, the network and the cable") \
            from exc

    def _ensure_link(self, op: str) -> None:
        if self._link_up:
            return
        lc = self.link_counters
        now = time.monotonic()
        down = now - self._down_since
        if (not self._gave_up and self.reconnect_timeout is not None
                and down > self.reconnect_timeout):
            self._gave_up = True
            log.error("%s: link down for %.2f s, giving up", self.where, down)
        if self._gave_up:
            setattr(lc, self._lost_field(op), getattr(lc, self._lost_field(op)) + 1)
            raise Disconnected(f"{self.where}: {op}(): the link is down (for {down:.2f} s, "
                               f"{self._attempts} reconnect attempts, last error: "
                               f"{self.last_error}) and reconnecting has stopped; close() and "
                               f"open() the device once the server is back")
        if now < self._next_attempt:
            setattr(lc, self._lost_field(op), getattr(lc, self._lost_field(op)) + 1)
            raise Disconnected(f"{self.where}: {op}(): the link is down (for {down:.2f} s, last "
                               f"error: {self.last_error}); next reconnect attempt in "
                               f"{self._next_attempt - now:.3f} s")
        self._attempts += 1
        lc.reconnect_attempts += 1
        try:
            self._connect()
        except Exception as exc:  # noqa: BLE001 - any failure means: still down
            self._safe_disconnect(lost=True)
            self.last_error = exc
            delay = min(self.backoff[1], self.backoff[0] * 2 ** (self._attempts - 1))
            self._next_attempt = time.monotonic() + delay
            setattr(lc, self._lost_field(op), getattr(lc, self._lost_field(op)) + 1)
            raise Disconnected(f"{self.where}: {op}(): the link is down (for {down:.2f} s); "
                               f"reconnect attempt {self._attempts} failed: "
                               f"{type(exc).__name__}: {exc}; next attempt in {delay:.3f} s "
                               f"or later; {self._connect_hint()}") from exc
        self._link_up = True
        lc.reconnects += 1
        log.warning("%s: reconnected after %d attempt(s), link was down %.3f s", self.where,
                    self._attempts, time.monotonic() - self._down_since)
        self._attempts = 0
