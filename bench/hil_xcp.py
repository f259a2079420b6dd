"""XCP DAQ at 1 kHz: the ACC ECU's diagram at a 1 ms cycle under the real-time runner,
its XCP slave (:mod:`hil.xcp`) measured by pyxcp in a process of its own
(:mod:`bench.hil_xcp_master`: a calibration tool is another program) over python-can
``udp_multicast`` (hop limit 0: the host only).

The figures: samples due (the run's length x 1 kHz), events the slave saw (frames run),
DAQ samples sent and received by pyxcp, samples lost by the slave's timestamps (a gap
of n cycles between consecutive samples: n - 1 lost; a frame the runner skipped shows
as one), the received share of the due samples (the rate held), the runner's lateness
and the slave's cost per frame (sampling + sending the DTOs).  Part of
``python -m bench hil`` (:mod:`bench.hil`).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

PERIOD_S = 1e-3


def daq_rate(duration_s: float) -> dict:
    """One measurement (module docstring); the runner keeps the ECU example's real-time
    settings (SCHED_FIFO where permitted, the collector frozen, 1 ns timer slack) with
    ``overrun="skip"``: a late frame is a lost event, as on the ECU."""
    from cosim import Simulator
    from examples.acc_ecu import ecu_diagram, realtime_options
    from hil import RealTimeRunner
    from hil.can import ACC_DBC, CanBackend, CanDatabase
    from hil.xcp import XcpEcu, acc_memory_map
    from hil.xcp.master import lost_samples
    rnd = random.Random()
    group = f"239.{rnd.randint(1, 254)}.{rnd.randint(1, 254)}.{rnd.randint(1, 254)}"
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(root), *filter(None, [os.environ.get("PYTHONPATH")])]))
    with tempfile.TemporaryDirectory() as tmp, \
            CanBackend("virtual", f"bench-xcp-{os.getpid()}", timeout=0.0) as ec:
        sim = Simulator(ecu_diagram(ec, CanDatabase(ACC_DBC), period_s=PERIOD_S),
                        solver="rk4", record=False)
        sim.initialize()
        ecu = XcpEcu(acc_memory_map(sim), PERIOD_S, interface="udp_multicast",
                     channel=group)
        mm = ecu.memory
        addrs = ",".join(hex(mm.variable(n).address) for n in ("acc.a_prev", "rx.ok"))
        out = Path(tmp) / "master.json"
        master = subprocess.Popen([sys.executable, "-m", "bench.hil_xcp_master", group,
                                   addrs, str(out)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, cwd=root, env=env)
        try:
            if master.stdout.readline().strip() != "READY":
                raise RuntimeError("bench.hil_xcp_master did not set up its DAQ list "
                                   f"(exit {master.wait(30)})")
            rt = RealTimeRunner(sim, period_s=PERIOD_S, overrun="skip",
                                on_frame=ecu.on_frame, **realtime_options())
            ecu.use_runner(rt)
            rt.run(duration_s)
            sent = ecu.slave.daq.samples_sent
            master.communicate(f"STOP {sent}\n", timeout=60)
        finally:
            if master.poll() is None:
                master.kill()
            ecu.close()
        got = json.loads(out.read_text()) if out.exists() else {"received": 0,
                                                                  "slave_ns": []}
    tel = rt.telemetry.as_dict()
    due = round(duration_s / PERIOD_S)
    received = got["received"]
    stats = ecu.stats()
    return {"duration_s": duration_s, "due": due, "events": ecu.slave.daq.events,
            "samples_sent": sent, "received": received,
            "lost_by_timestamp": lost_samples(got["slave_ns"], PERIOD_S),
            "received_pct_of_due": 100.0 * received / due,
            "received_pct_of_sent": 100.0 * received / sent if sent else None,
            "skipped_frames": tel["skipped_frames"], "overruns": tel["overruns"],
            "lateness_us": tel["lateness_us"], "frame_cost_us": stats.get("frame_cost_us"),
            "setup": (rt.setup or {}).get("text"),
            "median_s": tel["lateness_us"]["p50"] / 1e6, "steps": due}


def targets(x: dict) -> list[dict]:
    """The issue-36 target: the DAQ at 1 kHz with no lost sample (>= 99.99 %)."""
    from .harness import make_target
    note = (f"due {x.get('due')}, sent {x.get('samples_sent')}, received "
            f"{x.get('received')}, skipped frames {x.get('skipped_frames')}, slave cost per "
            f"frame {x.get('frame_cost_us')} us; {x.get('setup')}")
    return [
        make_target("XCP DAQ at 1 kHz (pyxcp in its own process, udp_multicast): samples "
                    "received of due [%]", x.get("received_pct_of_due"), ">=", "99.99",
                    source="issue 36", note=note),
        make_target("XCP DAQ at 1 kHz: samples lost by the slave's timestamps",
                    x.get("lost_by_timestamp"), "<=", "0", source="issue 36"),
    ]


def case(duration_s: float, status: Any, failed: Any) -> tuple[Any, dict]:
    """``(case, extra)`` for :mod:`bench.hil` (its ``_status`` and ``_failed``)."""
    from .harness import make_case
    try:
        st = status(daq_rate(duration_s), f"{duration_s:g} s of 1 kHz DAQ, pyxcp in a process, "
                                                "udp_multicast")
    except Exception as exc:  # noqa: BLE001 - e.g. pyxcp not installed
        st = failed(exc)
    return make_case(f"xcp-daq-1kHz-{duration_s:g}s", st, {}), st.get("extra", {})
