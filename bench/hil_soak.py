"""The real-time soak of ``python -m bench hil`` (case ``rt-soak-*``, issues 22 and 36):
the ACC plant at 1 kHz in real time against the ECU process over ``udp_multicast``, a CAN
flood from a third process, the resident memory sampled every 10 s (``bench/hil.py``'s
docstring has the case and its targets).

The flood's frames carry :data:`FLOOD_ID`, an id no rig uses
(:mod:`hil.testing.can_ids`: the DBC's 0x100, 0x101, 0x200, UDS 0x7E0/0x7E8, XCP
0x6F0/0x6F1, the session, handshake and lock-step ids 0x7F0-0x7F4): the ECU's bridges and
its UDS server and XCP slave filter it out (a flood on 0x7E0, the UDS request id, made
the ECU's UDS server log "Received invalid CAN frame" per frame).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from hil.testing.can_ids import FLOOD_ID

__all__ = ["rt_soak", "FLOOD_ID"]

FLOOD = r"""
import sys, time, can
from hil.lifeline import tie_to_parent
tie_to_parent()
b = can.Bus(interface="udp_multicast", channel=sys.argv[1], port=int(sys.argv[2]), hop_limit=0)
per_ms = int(sys.argv[3])
msg = can.Message(arbitration_id=int(sys.argv[4]), data=bytes(8), is_extended_id=False)
print("READY", flush=True)
t = time.monotonic()
while True:
    for _ in range(per_ms):
        b.send(msg)
    t += 1e-3
    d = t - time.monotonic()
    if d > 0:
        time.sleep(d)
"""


def _rss_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        return int(next(ln.split()[1] for ln in f if ln.startswith("VmRSS:")))


def rt_soak(duration_s: float, flood_per_s: int = 5000, out: str | None = None,
            bus_log: bool = False) -> dict:
    """The ACC plant at 1 kHz in real time against the ECU process, a CAN flood from a
    third process, resident memory sampled every 10 s (module docstring).  ``bus_log``:
    the demo's taps on the plant's bus as well (``examples/acc_hil.py``: the bus log
    ``bus.asc`` on its writer thread and the bus monitor; issue 36).  ``acc_cmd_age_ms``:
    how long each ``ACC_CMD`` waited between its arrival (the kernel's receive time) and
    its read by the bridge."""
    import random
    import tempfile
    import threading

    from cosim import Simulator
    from cosim.writers import CsvWriter
    from examples.acc_hil import ECU_GRACE_S, RECORD, EcuProcess, plant_diagram, scenario
    from hil import RealTimeRunner
    from hil.can import ACC_DBC, CanBackend, CanDatabase
    from hil.can.backend import multicast_port
    from hil.can.session import end_frame
    rnd = random.Random()
    group = f"239.{rnd.randint(1, 254)}.{rnd.randint(1, 254)}.{rnd.randint(1, 254)}"
    out = out or tempfile.mkdtemp(prefix="cosim-soak-")
    os.makedirs(out, exist_ok=True)
    ecu_summary = os.path.join(out, "ecu.json")
    # the ECU must outlive the plant's run (it is stopped after it): an ECU that ends on
    # its own duration first left the plant's last 0.1 s without commands, a stale episode
    ecu = EcuProcess("udp_multicast", group, summary=ecu_summary,
                     duration_s=duration_s + 600.0)
    from hil.lifeline import spawn
    flood = spawn([sys.executable, "-c", FLOOD, group, str(multicast_port(group)),
                   str(max(1, flood_per_s // 1000)), str(FLOOD_ID)], stdout=subprocess.PIPE,
                  text=True)
    rss: list[tuple[float, int]] = []
    stop = threading.Event()

    def sample() -> None:
        t0 = time.monotonic()
        while not stop.wait(10.0):
            rss.append((time.monotonic() - t0, _rss_kb()))

    try:
        ecu.wait_ready()
        if flood.stdout.readline().strip() != "READY":
            raise RuntimeError("the flood process did not start")
        with CanBackend("udp_multicast", group, timeout=0.0) as can:
            db = CanDatabase(ACC_DBC)
            log = _demo_taps(can, db, out) if bus_log else None
            age = _age_probe(can)
            d = plant_diagram(can, db, scenario(t_end=duration_s + 1.0))
            writer = CsvWriter(os.path.join(out, "results.csv"), RECORD, every=1000)
            sim = Simulator(d, solver="ab3", dt=1e-3, record=False, observers=[writer])
            ended: list = []

            def end_session(*_: Any) -> None:
                """The end-of-session frame in the run's last frame (hil.can.session):
                the ECU ends its run on it, before the plant's silence can count as a
                stale episode (a signal after the run raced the ECU's staleness limit:
                "EGO silent ... to the end" under load)."""
                if not ended and (not _ or sim.ctx.time >= duration_s - 1e-9):
                    ended.append(True)
                    try:
                        can.write(end_frame(db), timeout=0.0)
                    except Exception:  # noqa: BLE001 - the ECU is then stopped by SIGTERM
                        pass

            rt = RealTimeRunner(sim, period_s=1e-3, overrun="skip", on_frame=end_session,
                                telemetry_csv=os.path.join(out, "telemetry.csv"),
                                telemetry_ring=10_000, watch=[can] + ([log] if log else []))
            rss.append((0.0, _rss_kb()))
            th = threading.Thread(target=sample, daemon=True, name="rss sampler")
            th.start()
            try:
                rt.run(duration_s)
            finally:
                end_session()  # a run that ended early (else done in its last frame)
                ecu.stop(ECU_GRACE_S)  # it ends by itself on the frame; else SIGTERM
                if log is not None:
                    log.stop()
            stop.set()
            rss.append((duration_s, _rss_kb()))
            tel = rt.telemetry.as_dict()
            rx = d.blocks["rx_cmd"].stats()
            filtered = can.filtered
    finally:
        stop.set()
        flood.kill()
        flood.wait()
        ecu.stop()
    ecu_s = _read_summary(ecu_summary)
    ecu_fig = _ecu_figures(ecu_s)
    loop = _loop_verdict(rt.verdict, ecu_s)
    base = [kb for t, kb in rss if t >= min(60.0, duration_s / 2)] or [rss[-1][1]]
    growth_mb = (max(base) - base[0]) / 1024
    return {"duration_s": duration_s, "flood_per_s": flood_per_s, "frames": tel["frames"],
            "skipped_frames": tel["skipped_frames"], "overruns": tel["overruns"],
            "lateness_us": tel["lateness_us"], "verdict": loop.as_dict(),
            "verdict_line": loop.line(), "plant_verdict_line": rt.verdict.line(),
            "setup": rt.setup["text"],
            "acc_cmd_received": rx["received"]["ACC_CMD"], "other_frames_filtered": filtered,
            "acc_cmd_age_ms": {k: age.quantile(q) / 1e6 for k, q in
                               (("p50", 0.5), ("p99", 0.99), ("max", 1.0))},
            "bus_log": log.stats() if log is not None else None,
            "rss_kb": rss, "rss_growth_after_1min_mb": growth_mb, "out": out, "ecu": ecu_fig,
            "median_s": tel["lateness_us"]["p50"] / 1e6, "steps": tel["frames"]}


def _demo_taps(can: Any, db: Any, out: str) -> Any:
    """The taps of ``examples/acc_hil.py`` on ``can``: the bus log and the bus monitor;
    returns the log (the runner watches it)."""
    from examples.acc_plant import CONTROL_PERIOD
    from hil.can import MessageLog
    from hil.can.monitor import BusMonitor
    log = MessageLog(os.path.join(out, "bus.asc"))
    monitor = BusMonitor(db, cycle_s={m: CONTROL_PERIOD for m in ("RADAR", "EGO", "ACC_CMD")},
                         bitrate=500_000)
    can.add_tap(rx=log, tx=log.sent)
    can.add_tap(rx=monitor, tx=monitor.sent)
    return log


def _age_probe(can: Any) -> Any:
    """The age of every frame the bridges take from ``can`` (its receive time to the read),
    in a constant-memory histogram [ns]; the receive path is not changed (no tap)."""
    from hil.telemetry import LogHistogram
    age = LogHistogram()
    read = can.receive_batch

    def receive_batch(*args: Any, **kw: Any) -> list:
        frames = read(*args, **kw)
        now = time.time()
        for f in frames:
            age.add(max(0, int((now - f.timestamp) * 1e9)))
        return frames
    can.receive_batch = receive_batch
    return age


def _read_summary(path: str) -> dict:
    """The ECU process's ``--summary`` JSON, or ``{"error": ...}`` when it wrote none."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as exc:
        return {"error": f"no ECU summary: {exc}"}


def _loop_verdict(plant: Any, ecu: dict) -> Any:
    """The loop's verdict: the plant's and the ECU process's checks together (as
    ``examples/acc_hil.py`` gives them); an ECU that wrote none fails it."""
    from hil.verdict import Check, Verdict
    ev = ecu.get("verdict")
    if ev is None:
        why = ecu.get("error") or "the ECU's summary has no verdict"
        return Verdict.combine("acc soak (plant + ECU)", [plant],
                               [Check("ecu", None, "a verdict", False,
                                      f"the ECU process wrote no verdict ({why})")])
    return Verdict.combine("acc soak (plant + ECU)", [plant, Verdict.from_dict(ev, "acc_ecu")])


def _ecu_figures(s: dict) -> dict:
    """The ECU process's own telemetry and verdict (its ``--summary``): where a stale
    episode on the plant's side came from (the ECU's frames late or skipped, or not)."""
    if "error" in s:
        return {"error": s["error"]}
    tel = s.get("telemetry") or {}
    v = s.get("verdict") or {}
    return {"frames": tel.get("frames"), "overruns": tel.get("overruns"),
            "skipped_frames": tel.get("skipped_frames"), "lateness_us": tel.get("lateness_us"),
            "verdict_line": v.get("line"), "sent": (s.get("tx") or {}).get("sent"),
            "stopped_by": tel.get("stopped_by")}
