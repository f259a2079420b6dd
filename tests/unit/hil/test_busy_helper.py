"""The busy-load helper of the real-time tests leaves nothing behind when the test run is
killed inside it (issue 30: two orphans of a killed run spun for an hour and a half)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

RUN = """
import sys, time
sys.path.insert(0, sys.argv[1])
from tests.unit.hil.busy import busy
with busy() as procs:
    print(" ".join(str(p.pid) for p in procs), flush=True)
    time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.timing
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl: Linux")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_the_busy_processes_end_with_a_killed_test_run(sig):
    p = subprocess.Popen([sys.executable, "-c", RUN, str(ROOT)], stdout=subprocess.PIPE,
                         text=True)
    pids = [int(x) for x in p.stdout.readline().split()]
    assert len(pids) == 2 and all(_alive(q) for q in pids)
    os.kill(p.pid, sig)
    p.wait(timeout=30)
    deadline = time.monotonic() + 30
    while any(_alive(q) for q in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [q for q in pids if _alive(q)]
    for q in left:
        os.kill(q, signal.SIGKILL)
    assert not left, f"busy processes left spinning after {sig.name} of the test run: {left}"
