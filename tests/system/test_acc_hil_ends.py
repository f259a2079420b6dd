"""``examples/acc_hil.py`` ends with its ECU process, and a run stopped by SIGTERM writes its
summary (issue 36 item 2: after SIGTERM or SIGKILL of the demo its ECU could stay alive,
and a SIGTERM'd run wrote no summary).

The demo runs as a user runs it (``python examples/acc_hil.py``, here without SCHED_FIFO:
``--priority 0``) and is signalled while it starts its ECU and while its plant runs.  The
ECU must be gone within a bounded time (polled); after SIGTERM the demo exits with 143 and
its ``summary.json`` says ``"status": "terminated"``; the ECU writes its own summary either
way (its SIGTERM handler ran)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("can")
pytest.importorskip("cantools")

from tests.can_env import multicast_ok  # noqa: E402
from tests.timing_plugin import GENEROUS_S, wait_for  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.timing,  # processes started, signalled and waited for
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc"),
              pytest.mark.skipif(not multicast_ok(), reason="no IPv4 multicast route here")]


def _ecu_of(pid: int) -> int | None:
    """The pid of the ECU process started by the demo ``pid``, or None yet."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    if b"acc_ecu.py" in f.read():
                        return int(d)
        except (OSError, ValueError, IndexError):
            continue
    return None


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _start(out: Path, when: str) -> tuple[subprocess.Popen, int]:
    """The demo, and its ECU's pid once it exists (``when="running"``: once the plant has
    streamed results)."""
    with open(out.parent / "demo.err", "w") as err:
        demo = subprocess.Popen([sys.executable, str(ROOT / "examples/acc_hil.py"),
                                 "--priority", "0", "--out", str(out)],
                                stdout=subprocess.DEVNULL, stderr=err, cwd=out.parent)
    try:
        ecu = wait_for(lambda: _ecu_of(demo.pid) or demo.poll() is not None,
                       "the demo's ECU process")
        assert demo.poll() is None, (out.parent / "demo.err").read_text()
        if when == "running":
            csv = out / "results.csv"
            wait_for(lambda: csv.exists() and csv.read_text().count("\n") > 3,
                     "the plant's first results")
        return demo, ecu
    except BaseException:
        demo.kill()
        raise


def _end(demo: subprocess.Popen, ecu: int | None) -> None:
    if demo.poll() is None:
        demo.kill()
    if ecu is not None and not _gone(ecu):
        os.kill(ecu, signal.SIGKILL)


@pytest.mark.parametrize("when", ["starting", "running"])
def test_a_terminated_demo_writes_its_summary_and_ends_its_ecu(tmp_path, when):
    out = tmp_path / "out"
    demo, ecu = _start(out, when)
    try:
        demo.send_signal(signal.SIGTERM)
        assert demo.wait(GENEROUS_S * 2) == 128 + signal.SIGTERM, \
            (tmp_path / "demo.err").read_text()[-2000:]
        wait_for(lambda: _gone(ecu), "the ECU's end after the demo's")
        s = json.loads((out / "summary.json").read_text())
        assert s["status"] == "terminated" and s["stopped_by"] == "SIGTERM"
        if when == "running":  # the run ended in order: judged on what it ran
            assert 0 < s["t_reached"] < s["t_end"] and s["verdict"]["notes"][0].startswith(
                "terminated by SIGTERM at t = ")
            assert json.loads((out / "ecu_summary.json").read_text())["verdict"]
    finally:
        _end(demo, ecu)


def test_a_killed_demo_takes_its_ecu_along(tmp_path):
    out = tmp_path / "out"
    demo, ecu = _start(out, "running")
    try:
        demo.send_signal(signal.SIGKILL)
        demo.wait(GENEROUS_S)
        wait_for(lambda: _gone(ecu), "the ECU's end after the demo was killed")
        e = json.loads((out / "ecu_summary.json").read_text())  # its SIGTERM handler ran
        assert e["status"] == "terminated"
    finally:
        _end(demo, ecu)
