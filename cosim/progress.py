"""A progress bar on stderr for long runs (tqdm): shown after one second, on a terminal only.

Off a terminal (a pipe, a log file, CI) nothing is drawn, so logs stay clean; ``tqdm``
decides that (``disable=None``).  The simulation calls :meth:`ProgressBar.tick` at every
major step; only every 256th call looks at the clock, so the bar costs nothing measurable.
"""

from __future__ import annotations

import sys
from typing import Any

from .time import SECONDS_PER_TICK as _NS


class ProgressBar:
    """``42%|####      | 1.2/3 s [00:02<00:03, 0.5 s/s]`` (simulated seconds)."""

    def __init__(self, start_tick: int, end_tick: int, enabled: bool = True,
                 delay: float = 1.0, stream: Any = None) -> None:
        self.start, self.end, self.enabled = start_tick, end_tick, enabled
        self.count = 0
        self._bar: Any = None
        self._done_ticks = start_tick
        if enabled and end_tick > start_tick:
            from tqdm import tqdm
            self._bar = tqdm(total=round((end_tick - start_tick) * _NS, 9), unit="s",
                             unit_scale=False, delay=delay, mininterval=0.5, leave=False,
                             disable=None, file=stream or sys.stderr, dynamic_ncols=True,
                             bar_format="  {l_bar}{bar}| t = {n:.4g} of {total:.4g} s "
                                        "[{elapsed}<{remaining}, {rate_fmt}]")

    def tick(self, tick: int) -> None:
        self.count += 1
        if self._bar is None or self.count & 255:
            return
        self._bar.update(round((tick - self._done_ticks) * _NS, 9))
        self._done_ticks = tick

    def update(self, tick: int) -> None:
        """Move the bar to ``tick`` now (a compiled loop, between its chunks of steps)."""
        if self._bar is not None:
            self._bar.update(round((tick - self._done_ticks) * _NS, 9))
            self._done_ticks = tick

    def done(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
