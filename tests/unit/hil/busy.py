"""Background load for the real-time tests: two busy processes, as on a busy CI machine or
lab PC (issue 22: every real-time test runs against it and asserts what the runner
reports, not the machine's speed)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

#: Busy processes started by :func:`busy` (two: the cores of the CI machines).
N_BUSY = 2


@contextlib.contextmanager
def busy(n: int = N_BUSY) -> Iterator[list]:
    """``n`` processes spinning for the duration of the block, started and stopped (by
    their own ids) here."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(n)]
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
