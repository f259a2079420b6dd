"""A bus monitor: bus load, and per message the count, cycle time and jitter against the
DBC's cycle times (``GenMsgCycleTime``) or given ones.

:class:`BusMonitor` is a backend tap (``backend.add_tap(rx=mon, tx=mon.sent)``): each call
costs a dict look-up and a few arithmetic operations in the caller's thread (the frame),
and memory stays constant (streaming mean and variance, min and max per message).  Times
are the messages' timestamps (the driver's receive time, the time of sending).

Bus load is the frames' bits on the wire (stuff bits and CRC included, counted by
:func:`hil.can.slcan_frame.frame_bits` on the first frame of each id and length and reused
for the next ones: the count costs ~50 us, too much for every frame in the frame) over the
observed time, divided by the bitrate.  :meth:`BusMonitor.report` gives, per message:
count, expected cycle, mean, standard deviation, min and max of the intervals, the jitter
(largest deviation from the expected cycle) and how many intervals were outside
``tolerance`` of it.

Limitations: stuff bits vary with the payload by a few bits per frame: the load is exact
for the first frame of each id and length and approximate (within ~5 %) for the others; a
message seen by both taps (a node that receives its own frames) counts
twice; the load is that of the frames this node sees; intervals of a message sent at
irregular times (on change) are reported but have no expected cycle.
"""

from __future__ import annotations

import math
from typing import Any

from .slcan_frame import Frame, frame_bits

__all__ = ["BusMonitor"]


class _Stats:
    __slots__ = ("n", "last", "first", "mean", "m2", "min", "max", "dev_max", "late")

    def __init__(self) -> None:
        self.n = 0
        self.first = self.last = None
        self.mean = self.m2 = 0.0
        self.min, self.max = math.inf, -math.inf
        self.dev_max = 0.0
        self.late = 0


class BusMonitor:
    """Per-message cycle times and jitter, and the bus load (module docstring).

    Parameters
    ----------
    db : hil.can.CanDatabase, optional
        Names and expected cycle times (``GenMsgCycleTime``).
    bitrate : int
        Nominal bitrate for the load.
    cycle_s : dict, optional
        ``{message name or id: cycle [s]}``, over the DBC's.
    tolerance : float
        An interval outside ``(1 +- tolerance) * cycle`` is counted (default 0.5).
    """

    def __init__(self, db: Any = None, *, bitrate: int = 500_000,
                 cycle_s: dict | None = None, tolerance: float = 0.5) -> None:
        self.db = db
        self.bitrate = int(bitrate)
        self.tolerance = float(tolerance)
        self.names: dict[int, str] = {}
        self.cycles: dict[int, float] = {}
        if db is not None:
            for m in db.db.messages:
                self.names[int(m.frame_id)] = m.name
                if getattr(m, "cycle_time", None):
                    self.cycles[int(m.frame_id)] = m.cycle_time / 1000.0
        by_name = {v: k for k, v in self.names.items()}
        for key, c in (cycle_s or {}).items():
            self.cycles[by_name.get(key, key) if isinstance(key, str) else int(key)] = float(c)
        self.stats: dict[int, _Stats] = {}
        self.bits = 0
        self.frames = 0
        self.t_first: float | None = None
        self.t_last: float | None = None
        self._bits_cache: dict[tuple, int] = {}

    def __call__(self, msg: Any) -> None:
        """A frame seen (received or sent)."""
        t = float(msg.timestamp or 0.0)
        aid = int(msg.arbitration_id)
        st = self.stats.get(aid)
        if st is None:
            st = self.stats[aid] = _Stats()
        if st.last is not None:
            d = t - st.last
            st.n += 1
            delta = d - st.mean
            st.mean += delta / st.n
            st.m2 += delta * (d - st.mean)
            st.min = min(st.min, d)
            st.max = max(st.max, d)
            c = self.cycles.get(aid)
            if c is not None:
                dev = abs(d - c)
                st.dev_max = max(st.dev_max, dev)
                if dev > self.tolerance * c:
                    st.late += 1
        else:
            st.first = t
        st.last = t
        self.frames += 1
        self.bits += self._bits(msg)
        if self.t_first is None or t < self.t_first:
            self.t_first = t
        if self.t_last is None or t > self.t_last:
            self.t_last = t

    def sent(self, msg: Any) -> None:
        """A frame sent by this node (a timestamp of now when it has none)."""
        if not msg.timestamp:
            import copy
            import time
            msg = copy.copy(msg)
            msg.timestamp = time.time()
        self(msg)

    def _bits(self, msg: Any) -> int:
        key = (msg.arbitration_id, bool(msg.is_extended_id), bool(msg.is_remote_frame),
               len(msg.data), bool(getattr(msg, "is_fd", False)))
        n = self._bits_cache.get(key)
        if n is None:
            if len(self._bits_cache) > 4096:
                self._bits_cache.clear()
            data = bytes(msg.data)
            fd = key[4]
            kind = ("D" if key[1] else "d") if fd else \
                (("R" if key[1] else "r") if key[2] else ("T" if key[1] else "t"))
            dlc = msg.dlc if not fd else _fd_dlc(len(data))
            nominal, data_bits = frame_bits(Frame(kind, key[0], dlc, b"" if key[2] else data))
            n = self._bits_cache[key] = nominal + data_bits
        return n

    def bus_load(self) -> float:
        """Bits seen over the observed time, as a fraction of the bitrate."""
        if self.t_first is None or self.t_last is None or self.t_last <= self.t_first:
            return math.nan
        return self.bits / ((self.t_last - self.t_first) * self.bitrate)

    def report(self) -> dict:
        """``{"bus_load", "frames", "messages": {name: figures}}`` (module docstring)."""
        msgs = {}
        for aid, st in sorted(self.stats.items()):
            c = self.cycles.get(aid)
            sd = math.sqrt(st.m2 / (st.n - 1)) if st.n > 1 else math.nan
            msgs[self.names.get(aid, f"0x{aid:X}")] = {
                "id": aid, "count": st.n + 1, "cycle_ms": None if c is None else c * 1e3,
                "mean_ms": st.mean * 1e3 if st.n else math.nan,
                "std_ms": sd * 1e3, "min_ms": st.min * 1e3 if st.n else math.nan,
                "max_ms": st.max * 1e3 if st.n else math.nan,
                "jitter_ms": st.dev_max * 1e3 if c is not None else None,
                "off_cycle": st.late if c is not None else None}
        return {"bus_load": self.bus_load(), "frames": self.frames, "bitrate": self.bitrate,
                "messages": msgs}

    def summary(self) -> str:
        r = self.report()
        parts = [f"bus load {100 * r['bus_load']:.1f} % of {self.bitrate / 1e3:g} kbit/s, "
                 f"{r['frames']} frames"]
        for name, m in r["messages"].items():
            if m["cycle_ms"] is not None:
                parts.append(f"{name} {m['mean_ms']:.2f} ms (cycle {m['cycle_ms']:g}, jitter "
                             f"{m['jitter_ms']:.2f} ms, {m['off_cycle']} off-cycle)")
            else:
                parts.append(f"{name} {m['count']} frames, mean {m['mean_ms']:.2f} ms")
        return "; ".join(parts)


def _fd_dlc(n: int) -> int:
    sizes = (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64)
    return next(i for i, s in enumerate(sizes) if s >= n)
