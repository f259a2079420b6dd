"""The pyxcp side of :mod:`bench.hil_xcp`, as its own process (a calibration tool is one).

``python -m bench.hil_xcp_master GROUP ADDRESS[,ADDRESS...] OUT.json``: connects over
python-can ``udp_multicast`` on ``GROUP``, sets up one DAQ list of float32 at the given
addresses with timestamps, starts it, prints ``READY``; then reads ``STOP N`` on stdin
(``N`` samples were sent), waits until N samples were decoded (at most 30 s), stops the
DAQ, disconnects and writes ``{"received": ..., "slave_ns": [...]}`` to ``OUT.json``.
"""

from __future__ import annotations

import json
import sys
import time


def main(argv: list[str]) -> int:
    from hil.xcp.master import daq_collector, daq_list, open_master
    group, addrs, out = argv[0], [int(a, 0) for a in argv[1].split(",")], argv[2]
    pol = daq_collector([daq_list("bench", [(f"v{i}", a) for i, a in enumerate(addrs)])])
    with open_master("udp_multicast", group, policy=pol, timeout_s=10.0) as x:
        x.connect()
        pol.setup()
        pol.start()
        print("READY", flush=True)
        line = sys.stdin.readline().split()
        sent = int(line[1]) if len(line) == 2 and line[0] == "STOP" else 0
        end = time.monotonic() + 30.0
        while len(pol.rows) < sent and time.monotonic() < end:
            time.sleep(0.01)
        pol.stop()
        x.disconnect()
    with open(out, "w") as f:
        json.dump({"received": len(pol.rows), "slave_ns": [r[2] for r in pol.rows]}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
