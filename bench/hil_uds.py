"""UDS request round trip on the virtual rig (a case of ``python -m bench hil``, issue 36).

The ACC ECU's diagram (``examples/acc_ecu.py`` with its monitors) on a python-can
``virtual`` bus, fed one second of RADAR and EGO frames on the simulated clock, serves UDS
on ISO-TP (:func:`hil.diag.acc.serve`, its own thread); a udsoncan client on can-isotp
(:func:`hil.diag.client.open_client`) times each request from the call to the decoded
response: ReadDataByIdentifier of one DID (single frames both ways) and
ReadDTCInformation 0x0A (a multi-frame response with flow control).
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

__all__ = ["uds_round_trip"]


def _ecu(channel: str) -> tuple[Any, Any, Any]:
    """The ECU's diagram on ``channel``, one second of inputs run; its backends."""
    import can

    from cosim import Simulator
    from examples.acc_ecu import CONTROL_PERIOD, ecu_diagram
    from hil.can import ACC_DBC, CanBackend, CanDatabase
    db = CanDatabase(ACC_DBC)
    plant = CanBackend("virtual", channel, timeout=0.0).open()
    ecu = CanBackend("virtual", channel, timeout=0.0).open()
    diagram = ecu_diagram(ecu, db, diagnostics=True)
    sim = Simulator(diagram, solver="rk4", record=False)
    sim.initialize()
    values = {"range": 40.0, "range_rate": 0.0, "target_valid": 1, "speed": 25.0,
              "set_speed": 30.0, "gear_ratio": 3.0, "engine_speed": 300.0}
    frames = []
    for name in ("RADAR", "EGO"):
        m = db.message(name)
        frames.append(can.Message(arbitration_id=m.frame_id, is_extended_id=False,
                                  data=m.encode({s.name: values[s.name] for s in m.signals},
                                                strict=False)))
    for k in range(1, round(1.0 / CONTROL_PERIOD) + 1):
        for f in frames:
            plant.write(f, timeout=0.0)
        sim.advance_to(k * CONTROL_PERIOD)
        while plant.read(0.0) is not None:
            pass
    return diagram, plant, ecu


def uds_round_trip(n: int = 300) -> dict:
    """Round-trip figures [ms] of ``n`` requests per service (module docstring)."""
    from hil.diag.acc import client_config, serve
    from hil.diag.client import open_client
    channel = f"bench-uds-{os.getpid()}"
    diagram, plant, ecu = _ecu(channel)
    server = serve(diagram.blocks["diag"], "virtual", channel)
    out: dict = {"requests": n}
    try:
        with open_client("virtual", channel, config=client_config(), timeout_s=60.0) as c:
            for name, call in (("read_did", lambda: c.read_data_by_identifier([0x0100])),
                               ("read_dtc_0a", c.get_supported_dtc)):
                call()  # the first request warms up both sides
                ts = np.empty(n)
                for i in range(n):
                    t0 = time.perf_counter()
                    call()
                    ts[i] = time.perf_counter() - t0
                ms = ts * 1e3
                out[name] = {"p50_ms": float(np.percentile(ms, 50)),
                             "p99_ms": float(np.percentile(ms, 99)), "max_ms": float(ms.max())}
        out["server"] = server.stats()
        out["monitor_cost"] = diagram.blocks["diag"].cost()
    finally:
        server.close()
        ecu.close()
        plant.close()
    out["median_s"] = out["read_did"]["p50_ms"] / 1e3
    out["p99_ms"] = max(out["read_did"]["p99_ms"], out["read_dtc_0a"]["p99_ms"])
    return out
