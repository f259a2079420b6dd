"""XCP DAQ at 1 kHz: the ACC ECU's diagram at a 1 ms cycle under the real-time runner,
its XCP slave (:mod:`hil.xcp`) measured by pyxcp over a python-can ``virtual`` bus in the
same process (the runner's frame in the main thread, the slave's command thread and
pyxcp's listener beside it).

The figures: samples due (the run's length x 1 kHz), events the slave saw (frames run),
DAQ samples sent and received by pyxcp, samples lost by the slave's timestamps (a gap
of n cycles between consecutive samples: n - 1 lost; a frame the runner skipped shows
as one), the received share of the due samples (the rate held), the runner's lateness
and the slave's cost per frame (sampling + sending the DTOs).  Part of
``python -m bench hil`` (:mod:`bench.hil`).
"""

from __future__ import annotations

import os
import time
from typing import Any

PERIOD_S = 1e-3


def daq_rate(duration_s: float) -> dict:
    """One measurement (module docstring); the runner keeps the ECU example's real-time
    settings (SCHED_FIFO where permitted, the collector frozen, 1 ns timer slack) with
    ``overrun="skip"``: a late frame is a lost event, as on the ECU."""
    import can

    from cosim import Simulator
    from examples.acc_ecu import ecu_diagram, realtime_options
    from hil import RealTimeRunner
    from hil.can import ACC_DBC, CanBackend, CanDatabase
    from hil.xcp import XcpEcu, acc_memory_map
    from hil.xcp.master import daq_collector, daq_list, lost_samples, open_master
    ch = f"bench-xcp-{os.getpid()}-{time.monotonic_ns()}"
    with CanBackend("virtual", ch, timeout=0.0) as ec:
        sim = Simulator(ecu_diagram(ec, CanDatabase(ACC_DBC), period_s=PERIOD_S),
                        solver="rk4", record=False)
        sim.initialize()
        bus = can.Bus(interface="virtual", channel=ch)
        ecu = XcpEcu(acc_memory_map(sim), PERIOD_S, bus=bus)
        mm = ecu.memory
        pol = daq_collector([daq_list("fast", [
            ("acc.a_prev", mm.variable("acc.a_prev").address),
            ("rx.ok", mm.variable("rx.ok").address)])])
        try:
            with open_master("virtual", ch, policy=pol) as x:
                x.connect()
                pol.setup()
                pol.start()
                opts = realtime_options()
                rt = RealTimeRunner(sim, period_s=PERIOD_S, overrun="skip",
                                    on_frame=ecu.on_frame, **opts)
                ecu.use_runner(rt)
                rt.run(duration_s)
                sent = ecu.slave.daq.samples_sent
                end = time.monotonic() + 5.0
                while len(pol.rows) < sent and time.monotonic() < end:
                    time.sleep(0.01)
                pol.stop()
                x.disconnect()
        finally:
            ecu.close()
            bus.shutdown()
    tel = rt.telemetry.as_dict()
    due = round(duration_s / PERIOD_S)
    ts = [r[2] for r in pol.rows]
    received = len(pol.rows)
    stats = ecu.stats()
    return {"duration_s": duration_s, "due": due, "events": ecu.slave.daq.events,
            "samples_sent": sent, "received": received,
            "lost_by_timestamp": lost_samples(ts, PERIOD_S),
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
        make_target("XCP DAQ at 1 kHz (pyxcp over python-can virtual): samples received of "
                    "due [%]", x.get("received_pct_of_due"), ">=", "99.99",
                    source="issue 36", note=note),
        make_target("XCP DAQ at 1 kHz: samples lost by the slave's timestamps",
                    x.get("lost_by_timestamp"), "<=", "0", source="issue 36"),
    ]


def case(duration_s: float, status: Any, failed: Any) -> tuple[Any, dict]:
    """``(case, extra)`` for :mod:`bench.hil` (its ``_status`` and ``_failed``)."""
    from .harness import make_case
    try:
        st = status(daq_rate(duration_s), f"{duration_s:g} s of 1 kHz DAQ, pyxcp, virtual bus")
    except Exception as exc:  # noqa: BLE001 - e.g. pyxcp not installed
        st = failed(exc)
    return make_case(f"xcp-daq-1kHz-{duration_s:g}s", st, {}), st.get("extra", {})
