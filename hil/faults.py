"""Fault injection on any backend: dropped and delayed frames, bus-off, a dead link.

:class:`FaultyBackend` wraps a :class:`~hil.backend.Backend` and, while a
:class:`Fault` is active, changes what passes through it.  It is itself a backend, so
bridges, loggers and the runner use it unchanged: the faults are injected *at the
plant's side of the wire*, exactly where a real fault would show up.

==============  ===========================================================
kind            effect while active (``direction``: ``"rx"``, ``"tx"``, ``"both"``)
==============  ===========================================================
``"drop"``      each frame is lost with ``probability`` (seeded: repeatable)
``"delay"``     frames are held back ``delay_s`` and then delivered in order
``"bus_off"``   reads and writes fail with :class:`~hil.errors.Disconnected`
                ("bus-off"); ``recover()`` fails until the fault ends, then
                brings the link back (frames sent meanwhile are lost)
``"corrupt"``   each frame's payload XORed with ``mask`` from its first byte
                (with ``probability``; a copy: the sender's frame is kept),
                what a receiver's range, DLC and end-to-end checks must catch
==============  ===========================================================

A fault is active for ``start_s <= t < end_s`` on the injector's clock: seconds since
:meth:`FaultyBackend.open` on the monotonic clock by default (under the real-time
runner, simulated time equals it to within the frame lateness), or any callable given
as ``clock`` (a simulation's time, for deterministic offline tests).  ``ids`` limits a
fault to frames whose ``arbitration_id`` is listed (CAN).

Counters: :attr:`FaultyBackend.injected` counts, per kind and direction, the frames
dropped and delayed and the operations failed by bus-off.

Limitations: faults act on whole frames (no bit errors inside a frame: a CRC error is
the serial emulator's job); delayed frames are released when the wrapper is read or
written, so their delivery time is quantized to the caller's polling.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .backend import Backend, BackendState
from .errors import Disconnected

__all__ = ["Fault", "FaultyBackend", "FAULT_KINDS"]

FAULT_KINDS = ("drop", "delay", "bus_off", "corrupt")
DIRECTIONS = ("rx", "tx", "both")


@dataclass(frozen=True)
class Fault:
    """One injected fault (module docstring)."""

    kind: str
    start_s: float = 0.0
    end_s: float = math.inf
    direction: str = "both"
    probability: float = 1.0
    delay_s: float = 0.0
    ids: frozenset | None = field(default=None)
    mask: bytes = b"\xff"

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"Fault: kind must be one of {', '.join(FAULT_KINDS)}, got "
                             f"{self.kind!r}")
        if self.direction not in DIRECTIONS:
            raise ValueError(f"Fault({self.kind}): direction must be one of "
                             f"{', '.join(DIRECTIONS)}, got {self.direction!r}")
        if not self.start_s < self.end_s:
            raise ValueError(f"Fault({self.kind}): start_s ({self.start_s}) must be before "
                             f"end_s ({self.end_s})")
        if not 0.0 <= self.probability <= 1.0:
            raise ValueError(f"Fault({self.kind}): probability must be in [0, 1], got "
                             f"{self.probability}")
        if self.kind == "delay" and not self.delay_s > 0.0:
            raise ValueError(f"Fault(delay): delay_s must be > 0, got {self.delay_s}")
        if self.kind == "corrupt" and not (isinstance(self.mask, bytes) and any(self.mask)):
            raise ValueError(f"Fault(corrupt): mask must be non-zero bytes (XORed onto the "
                             f"payload), got {self.mask!r}")
        if self.ids is not None:
            object.__setattr__(self, "ids", frozenset(int(i) for i in self.ids))

    def active(self, t: float, direction: str, frame: Any = None) -> bool:
        if not (self.start_s <= t < self.end_s):
            return False
        if self.direction != "both" and self.direction != direction:
            return False
        if self.ids is not None and frame is not None:
            return getattr(frame, "arbitration_id", None) in self.ids
        return True


class FaultyBackend(Backend):
    """Wrap ``inner`` and inject ``faults`` (module docstring).

    Parameters
    ----------
    inner : Backend
        The real transport (opened and closed with the wrapper).
    faults : iterable of Fault
    clock : callable, optional
        Seconds for the fault windows; default: monotonic seconds since ``open()``.
    seed : int
        Seed of the drop decisions.
    """

    kind = "faulty"

    def __init__(self, inner: Backend, faults: Iterable[Fault] = (), *,
                 clock: Callable[[], float] | None = None, seed: int = 0,
                 name: str | None = None, timeout: float | None = None) -> None:
        super().__init__(name=name or getattr(inner, "name", None),
                         timeout=inner.timeout if timeout is None else timeout)
        self.inner = inner
        self.frame_key = inner.frame_key  # frames are the inner backend's
        self.faults = list(faults)
        for f in self.faults:
            if not isinstance(f, Fault):
                raise TypeError(f"FaultyBackend: faults must be Fault objects, got {f!r}")
        self._clock = clock
        self._t0 = 0.0
        self._rng = random.Random(seed)
        self._seq = itertools.count()
        self._rx_late: list = []  # heap of (due, seq, frame)
        self._tx_late: list = []
        self.injected: dict[str, int] = {}

    # ------------------------------------------------------------ plumbing
    @property
    def channel(self) -> str:
        return self.inner.channel

    @property
    def where(self) -> str:
        return f"{self.inner.where} [fault injection]"

    def now(self) -> float:
        return self._clock() if self._clock is not None else time.monotonic() - self._t0

    def _count_fault(self, key: str) -> None:
        self.injected[key] = self.injected.get(key, 0) + 1

    def _active(self, kind: str, direction: str, frame: Any = None) -> Fault | None:
        t = self.now()
        for f in self.faults:
            if f.kind == kind and f.active(t, direction, frame):
                return f
        return None

    def _bus_off(self, direction: str, op: str) -> None:
        if self._active("bus_off", direction) is not None:
            self._count_fault(f"bus_off_{direction}")
            raise Disconnected(f"{self.where}: {op} failed: bus-off (injected fault at "
                               f"t = {self.now():.3f} s); call recover() when the bus is back")

    def _open(self) -> None:
        if not self.inner.is_open:
            self.inner.open()
        self._t0 = time.monotonic()

    def _close(self) -> None:
        self.inner.close()

    def recover(self) -> None:
        """Bring the link back after an injected (or real) bus-off."""
        if self._active("bus_off", "both") or self._active("bus_off", "tx") \
                or self._active("bus_off", "rx"):
            raise Disconnected(f"{self.where}: recover failed: the bus is still off "
                               f"(injected until its end time)")
        inner_recover = getattr(self.inner, "recover", None)
        if inner_recover is not None and self.inner.state is not BackendState.OPEN:
            inner_recover()
        self.link.opened()
        self.counters.add("reconnects")

    # ------------------------------------------------------------ frames
    def _drop(self, direction: str, frame: Any) -> bool:
        f = self._active("drop", direction, frame)
        if f is not None and (f.probability >= 1.0 or self._rng.random() < f.probability):
            self._count_fault(f"drop_{direction}")
            return True
        return False

    def _delay(self, direction: str, frame: Any, heap: list) -> bool:
        f = self._active("delay", direction, frame)
        if f is None:
            return False
        self._count_fault(f"delay_{direction}")
        heapq.heappush(heap, (self.now() + f.delay_s, next(self._seq), frame))
        return True

    def _corrupt(self, direction: str, frame: Any) -> Any:
        f = self._active("corrupt", direction, frame)
        data = getattr(frame, "data", None)
        if f is None or data is None or not (f.probability >= 1.0
                                             or self._rng.random() < f.probability):
            return frame
        import copy
        out = copy.copy(frame)
        out.data = bytearray(b ^ m for b, m in zip(bytes(data), f.mask)) + \
            bytearray(bytes(data)[len(f.mask):])
        self._count_fault(f"corrupt_{direction}")
        return out

    def _flush_tx(self) -> None:
        now = self.now()
        while self._tx_late and self._tx_late[0][0] <= now:
            _, _, frame = heapq.heappop(self._tx_late)
            self.inner.write(frame, timeout=0.0)

    def _read_internal(self, timeout: float | None) -> Any | None:
        self._bus_off("rx", "read")
        self._flush_tx()
        if self._rx_late and self._rx_late[0][0] <= self.now():
            return heapq.heappop(self._rx_late)[2]
        deadline = None if timeout is None else time.perf_counter() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.perf_counter())
            frame = self.inner.read(left)
            if frame is None:
                return None
            if self._drop("rx", frame) or self._delay("rx", frame, self._rx_late):
                continue  # the next frame (a poll once the time is up)
            return self._corrupt("rx", frame)

    def _write(self, frame: Any, timeout: float | None) -> None:
        self._bus_off("tx", "write")
        self._flush_tx()
        if self._drop("tx", frame) or self._delay("tx", frame, self._tx_late):
            return
        self.inner.write(self._corrupt("tx", frame), timeout=timeout)

    def pending(self) -> int:
        """Frames held back by delay faults (both directions)."""
        return len(self._rx_late) + len(self._tx_late)
