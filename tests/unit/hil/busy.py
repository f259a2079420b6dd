"""Background load for the real-time tests: two busy processes, as on a busy CI machine or
lab PC (issue 22: every real-time test runs against it and asserts what the runner
reports, not the machine's speed)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

#: Busy processes started by :func:`busy` (two: the cores of the CI machines).
N_BUSY = 2

#: A busy process that ends with the test process (Linux parent-death signal, and a check
#: of the parent's id where there is none): a test run killed inside ``busy()`` (SIGKILL,
#: a CI timeout) must not leave spinning orphans behind (measured: two orphans of a killed
#: run kept this 2-core machine at a load of 2 for an hour and a half).
SPIN = """
import ctypes, os, signal, sys
parent = int(sys.argv[1])
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
except (OSError, AttributeError):
    pass
while os.getppid() == parent:  # also when the parent died before prctl
    for _ in range(1_000_000):
        pass
"""


@contextlib.contextmanager
def busy(n: int = N_BUSY) -> Iterator[list]:
    """``n`` processes spinning for the duration of the block, started and stopped (by
    their own ids) here."""
    procs = [subprocess.Popen([sys.executable, "-c", SPIN, str(os.getpid())])
             for _ in range(n)]
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
