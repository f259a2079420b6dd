"""Cyclic transmission scheduled by the caller, and reception with staleness.

:class:`CyclicSender` does not use python-can's ``send_periodic`` (a thread
that sends a backlog in a burst after a stall): the HIL runner calls
:meth:`CyclicSender.due` / :meth:`CyclicSender.send` (or :meth:`poll`) every
tick with its own clock, and periods that were missed are *skipped*, counted in
:attr:`CyclicSender.skipped`, never sent late in a burst.

:class:`SignalCache` keeps the last decoded value of every signal, fed by
received messages (``backend.start_reader(on_frame=cache.feed)``); ``get``
raises :class:`StaleSignal` (a :class:`~hil.errors.BackendTimeout`) naming
the signal and its age once nothing fresh arrived for ``stale_after_s``.

Limitations
-----------
* Ages use the cache's clock (``time.monotonic`` by default) at the moment
  :meth:`SignalCache.feed` runs, not the driver's receive timestamp (python-can's
  ``virtual`` stamps ``time.time()``, other interfaces their own clock).
* One staleness limit per cache (per message with ``stale_after_s={...}``).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..backend import Backend
from ..errors import BackendTimeout
from .dbc import CanDatabase, UnknownName

__all__ = ["CyclicSender", "SignalCache", "StaleSignal"]


class StaleSignal(BackendTimeout):
    """A signal was never received, or not within its staleness limit."""

    def __init__(self, message: str, *, signal: str = "", age: float = math.inf) -> None:
        super().__init__(message)
        self.signal = signal
        self.age = age


def _initial(info: Any) -> float:
    if info.initial is not None:
        return float(info.initial)
    lo = -math.inf if info.minimum is None else info.minimum
    hi = math.inf if info.maximum is None else info.maximum
    return float(min(max(0.0, lo), hi))


class CyclicSender:
    """Send one DBC message every ``period_s`` on the caller's clock.

    ``send(t_s, signals)`` merges ``signals`` into the last values sent (they
    start at the DBC initial value, or 0 clipped into the signal's range), so a
    caller may update only what changed.
    """

    def __init__(self, backend: Backend, db: CanDatabase, message: str, period_s: float,
                 *, phase_s: float = 0.0) -> None:
        if not period_s > 0:
            raise ValueError(f"CyclicSender({message!r}): period_s must be > 0, got {period_s}")
        self.backend = backend
        self.db = db
        self.message = message
        self.period_s = float(period_s)
        self.values: dict[str, float] = {n: _initial(i) for n, i in db.signals(message).items()}
        self._next: float | None = None
        self._phase = float(phase_s)
        self.sent = 0
        self.skipped = 0  # periods missed because the caller came late
        self.last_sent_t: float | None = None

    def due(self, t_s: float) -> bool:
        """True when a frame is due at time ``t_s`` (the first call is due at ``phase_s``)."""
        nxt = self._phase if self._next is None else self._next
        return t_s >= nxt - 1e-9 * max(1.0, abs(nxt))

    def send(self, t_s: float, signals: Mapping[str, float] | None = None) -> Any:
        """Encode the merged values, write the frame, schedule the next one; returns
        the ``can.Message``.  Raises before any I/O for an unknown signal."""
        if signals:
            unknown = [k for k in signals if k not in self.values]
            if unknown:
                raise UnknownName(f"CyclicSender({self.message}): no signal {unknown[0]!r}; "
                                  f"choices: {', '.join(self.values)}")
            merged = {**self.values, **signals}
        else:
            merged = dict(self.values)
        msg = self.db.encode(self.message, merged)
        self.backend.write(msg)
        self.values = merged
        self.sent += 1
        self.last_sent_t = t_s
        base = self._phase if self._next is None else self._next
        n = max(1, math.floor((t_s - base) / self.period_s + 1e-9) + 1)
        self.skipped += n - 1
        self._next = base + n * self.period_s
        return msg

    def poll(self, t_s: float, signals: Mapping[str, float] | None = None) -> bool:
        """``send`` if due; True when a frame went out."""
        if self.due(t_s):
            self.send(t_s, signals)
            return True
        return False


class SignalCache:
    """Last value, and its age, of every signal received (thread-safe).

    Parameters
    ----------
    db : CanDatabase
    stale_after_s : float or dict
        Age after which a value is stale; a dict maps message names to limits
        (messages not listed use ``default_stale_after_s``).
    clock : callable
        Monotonic seconds (injectable for tests).
    """

    def __init__(self, db: CanDatabase, stale_after_s: float | Mapping[str, float],
                 *, default_stale_after_s: float = math.inf,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.db = db
        if isinstance(stale_after_s, Mapping):
            for m in stale_after_s:
                db.message(m)  # unknown message names fail here
            self._limits = dict(stale_after_s)
            self._default = default_stale_after_s
        else:
            self._limits = {}
            self._default = float(stale_after_s)
        self.clock = clock
        self._lock = threading.Lock()
        self._values: dict[str, tuple[float, float, str]] = {}  # qualified -> (v, t, msg)
        self._plain: dict[str, str] = {}  # signal -> qualified name (unique names only)
        self.received = 0
        self.unknown = 0  # frames whose id is not in the database (ignored)

    def limit(self, message: str) -> float:
        return self._limits.get(message, self._default)

    def feed(self, msg: Any) -> None:
        """Decode a received ``can.Message`` and store its signals (frames not in
        the database and error frames are counted and ignored)."""
        if getattr(msg, "is_error_frame", False):
            return
        try:
            name, values = self.db.decode_named(msg)
        except UnknownName:
            with self._lock:
                self.unknown += 1
            return
        now = self.clock()
        with self._lock:
            self.received += 1
            for sig, v in values.items():
                self._values[f"{name}.{sig}"] = (v, now, name)

    __call__ = feed

    def _lookup(self, name: str) -> tuple[str, tuple[float, float, str] | None]:
        info = self.db.signal(name)  # unknown names raise UnknownName with the choices
        q = f"{info.message}.{info.name}"
        return q, self._values.get(q)

    def age(self, name: str) -> float:
        """Seconds since ``name`` was last received (``inf`` if never)."""
        with self._lock:
            _, entry = self._lookup(name)
        return math.inf if entry is None else self.clock() - entry[1]

    def is_stale(self, name: str) -> bool:
        q, entry = self._lookup(name)
        return entry is None or self.clock() - entry[1] > self.limit(entry[2])

    def get(self, name: str, *, allow_stale: bool = False) -> float:
        """The last value of ``name`` (``"signal"`` or ``"MESSAGE.signal"``).

        Raises :class:`StaleSignal` when it was never received, or is older than
        the limit (unless ``allow_stale``; a never-received signal always raises).
        """
        with self._lock:
            q, entry = self._lookup(name)
        if entry is None:
            raise StaleSignal(f"CAN signal {q}: never received (is the sender running, the "
                              f"frame id right, the reader started?)", signal=q)
        value, t, message = entry
        age = self.clock() - t
        lim = self.limit(message)
        if age > lim and not allow_stale:
            raise StaleSignal(f"CAN signal {q}: stale, last received {age * 1e3:.1f} ms ago "
                              f"(limit {lim * 1e3:.1f} ms); the sender stopped or the bus "
                              f"is down", signal=q, age=age)
        return value

    def snapshot(self) -> dict[str, tuple[float, float, bool]]:
        """``{"MESSAGE.signal": (value, age_s, stale)}`` of everything received."""
        now = self.clock()
        with self._lock:
            items = list(self._values.items())
        return {q: (v, now - t, now - t > self.limit(m)) for q, (v, t, m) in items}
