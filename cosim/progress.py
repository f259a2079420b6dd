"""A one-line progress bar on stderr for long runs (shown after one second)."""

from __future__ import annotations

import sys
import time

from .time import SECONDS_PER_TICK as _NS


class ProgressBar:
    """``[#####     ]  42.0 %  t = 1.2 s  (35x real time)`` updated every 0.5 s."""

    def __init__(self, start_tick: int, end_tick: int, enabled: bool = True) -> None:
        self.start, self.end, self.enabled = start_tick, end_tick, enabled
        self.wall = time.perf_counter()
        self.next = self.wall + 1.0
        self.shown = False
        self.count = 0

    def tick(self, tick: int) -> None:
        self.count += 1
        if not self.enabled or self.count & 255:
            return
        now = time.perf_counter()
        if now < self.next:
            return
        self.next = now + 0.5
        span = max(1, self.end - self.start)
        frac = (tick - self.start) / span
        bar = "#" * int(30 * frac)
        rate = (tick - self.start) * _NS / max(now - self.wall, 1e-9)
        sys.stderr.write(f"\r  [{bar:<30}] {100 * frac:5.1f}%  t = {tick * _NS:.4g} s  "
                         f"({rate:.3g}x real time)")
        sys.stderr.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            self.shown = False
