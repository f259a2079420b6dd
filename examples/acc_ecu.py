"""The ACC controller as an ECU: its own process, speaking only CAN.

The diagram is the offline controller (:class:`blocks.controllers.ACCController`,
sampled every 16 ms) between two bridge blocks::

    CAN -RADAR, EGO-> rx (CanReceive) -> acc (ACCController) -> tx (CanTransmit) -ACC_CMD-> CAN
                     ok ----------------> acc.enable, ------------> tx.enable

It knows nothing of the vehicle: it reads the radar track (``RADAR``) and the ego state
(``EGO``) from the bus and sends ``ACC_CMD`` (throttle, brake torque), all defined in the
bundled DBC (:data:`hil.can.ACC_DBC`).  While its inputs are stale (the plant stopped,
the bus is off) it sends nothing: the plant then sees its commands go stale and falls
back to its safe state (``examples/acc_hil.py``).  The controller runs only while its
inputs are fresh (``acc.enable``): before the first frames, and after an outage, it starts
from a reset state instead of from a law evaluated on held values.

Run it under the real-time runner, against any python-can interface::

    python examples/acc_ecu.py --interface udp_multicast --channel 239.74.163.2
    python examples/acc_ecu.py --interface slcan --channel /dev/pts/5
    cosim hil run examples/acc_ecu.py --io can.channel=239.74.163.2  # by the CLI

``examples/acc_hil.py`` (the script, and ``cosim hil run examples/acc_hil.py``) starts it
as a peer process (:class:`hil.peer.Peer`: its own process group, SIGTERM when the plant's
process dies) and waits for its ``READY`` line.

The end: the ECU's run ends when the plant's end-of-session frame arrives
(:mod:`hil.can.session`), at the end of the frame that reads it, so the plant's end is not
counted as a stale episode of its inputs; SIGTERM (the plant's process died, or
``kill``) ends it the same way, and the summary is written either way (status
``"terminated"``).  Started by the plant, it also watches the plant's process itself
(:func:`hil.lifeline.tie_to_parent`: where the kernel's parent-death signal is lost, e.g. a
Python with file capabilities for SCHED_FIFO, it sends itself the SIGTERM).  Without either
it runs ``--duration`` (a day).

``--lockstep``: the ECU is paced by the plant instead of its own clock
(:mod:`hil.can.lockstep`): each frame starts when the plant's SYNC for it arrives, and
ends with an ACK after the command went out, so the loop over the bus is deterministic.

``--xcp``: the ECU is also an XCP-on-CAN slave (:mod:`hil.xcp`, ``--a2l`` writes its A2L):
the time gap calibratable, its internal signals measurable by DAQ at each frame.

Every run ends with its verdict (:mod:`hil.verdict`), written with ``--summary``.

Diagnostics (:mod:`hil.diag.acc`, ``docs/guides/hil-diagnostics.md``): monitors in the
diagram (block ``diag``) store DTCs for stale inputs, out-of-range values and a lost link
in a fault memory, served over UDS on ISO-TP (requests 0x7E0, responses 0x7E8) on the
same interface and channel by a thread; ``--no-diag`` leaves both out.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from typing import Any

from blocks.controllers import ACCController, ACCSettings
from cosim import DiagramBuilder, Simulator

try:  # imported as examples.acc_ecu (tests)
    from examples.acc_plant import CONTROL_PERIOD, demo_model
except ModuleNotFoundError:  # run as a script
    from acc_plant import CONTROL_PERIOD, demo_model

#: Inputs older than this are stale (3 ECU periods) [s].
STALE_AFTER_S = 3 * CONTROL_PERIOD
#: Defaults for ``cosim hil run examples/acc_ecu.py``.
HIL = {"period_s": CONTROL_PERIOD, "duration_s": 3600.0, "overrun": "skip"}
#: SCHED_FIFO priority of the example's real-time loops (ECU and plant) where permitted.
RT_PRIORITY = 20


def realtime_options(priority: int | None = RT_PRIORITY) -> dict:
    """Runner settings for a loop that must keep its deadlines on a busy machine: the
    collector frozen after set-up and off in the loop, 1 ns timer slack, and SCHED_FIFO at
    ``priority`` when :func:`hil.runner.fifo_permitted` (else best-effort pacing; ``None``:
    never), the process's other threads one level below (``helper_priority``: a thread
    that holds the GIL must not be preempted by the load while the frame waits for it).

    Without SCHED_FIFO two busy processes on a 2-core machine delay frames by up to
    100 ms (measured: lateness p99 14 ms, max 102 ms), longer than the command's
    staleness limit: the loop then goes to its safe state for nothing.
    """
    from hil.runner import fifo_permitted
    opts: dict = {"gc_mode": "freeze", "timer_slack_ns": 1}
    if priority is not None and fifo_permitted(priority):
        opts["priority"] = int(priority)
        if priority > 1:  # the bus log's writer, a software bus: they share the GIL
            opts["helper_priority"] = int(priority) - 1
    return opts


def ecu_diagram(can: Any, db: Any, settings: ACCSettings | None = None,
                period_s: float = CONTROL_PERIOD, diagnostics: bool = False):
    """rx -> ACC controller -> tx on the backend ``can`` (opened by the caller);
    ``diagnostics``: the fault memory's monitors as block ``diag`` (:mod:`hil.diag.acc`)."""
    from hil.bridges import CanReceive, CanTransmit
    b = DiagramBuilder("acc_ecu")
    rx = b.add(CanReceive("rx", can, db, ["RADAR", "EGO"], period_s,
                          stale_after_s=STALE_AFTER_S, on_stale="hold", on_error="hold"))
    acc = b.add(ACCController("acc", period_s, demo_model(), settings, enable_input=True))
    tx = b.add(CanTransmit("tx", can, db, "ACC_CMD", period_s, enable_input=True,
                           on_error="hold"))
    for sig in ("range", "range_rate", "target_valid", "speed", "set_speed", "gear_ratio"):
        b.connect(rx.output(sig), acc.input(sig))
    b.connect(acc.throttle, tx.throttle)
    b.connect(acc.brake_torque, tx.brake_torque)
    b.connect(rx.ok, tx.enable)
    b.connect(rx.ok, acc.enable)  # no law on held or initial values: start clean
    if diagnostics:
        from hil.diag.acc import add_monitor
        add_monitor(b, rx, acc, can, period_s)
    return b.build()


#: The ECU's default bus: a multicast group on this host (hop limit 0).
DEFAULT_GROUP = "239.74.163.2"


def build(io: Any):
    """``cosim hil run`` entry: the ECU on the interface ``can`` (``udp_multicast`` on
    :data:`DEFAULT_GROUP` unless overridden); the run ends when the plant's end-of-session
    frame arrives."""
    from hil.can import ACC_DBC, CanDatabase
    can = io.open("can", interface="udp_multicast", channel=DEFAULT_GROUP,
                  end_of_session="stop")
    return Simulator(ecu_diagram(can, CanDatabase(ACC_DBC)), solver="rk4", dt=None,
                     record=["acc.throttle", "acc.brake_torque", "acc.accel_request",
                             "rx.ok"])


def bus_options(interface: str, channel: str) -> dict:
    """python-can options per interface (``udp_multicast``: :class:`hil.can.CanBackend`
    isolates each group itself: its own port, ``IP_MULTICAST_ALL=0``, hop limit 0)."""
    if interface == "slcan":
        return {"bitrate": 500000, "sleep_after_open": 0.05}
    return {}


def main(argv: list[str] | None = None) -> int:
    ended: list[str] = []  # SIGTERM before the runner exists: the run ends at once
    box: dict = {}

    def on_term(signum: int, frame: Any) -> None:
        end("SIGTERM")

    def end(why: str) -> None:
        ended.append(why)
        if "rt" in box:
            box["rt"].stop(why)
        if box.get("clock") is not None:
            box["clock"].cancel.set()

    signal.signal(signal.SIGTERM, on_term)
    from hil.lifeline import tie_to_parent
    # started by the plant (hil.peer): SIGTERM when it ends, even where the kernel's
    # parent-death signal does not reach this process (issue 36)
    parent = tie_to_parent()
    from hil import RealTimeRunner
    from hil.can import ACC_DBC, CanBackend, CanDatabase
    from hil.can.session import EndWatch
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--interface", default="udp_multicast")
    ap.add_argument("--channel", default=DEFAULT_GROUP)
    ap.add_argument("--duration", type=float, default=86400.0,
                    help="longest run [s] (default a day: the plant's end-of-session frame, "
                         "or SIGTERM, ends it; an ECU that ends first leaves the plant's last "
                         "frames without commands)")
    ap.add_argument("--summary", help="write the ECU's telemetry and counters (JSON) here")
    ap.add_argument("--priority", type=int, default=RT_PRIORITY,
                    help="SCHED_FIFO priority 1-99 where permitted (root or CAP_SYS_NICE), "
                         f"0: none (default {RT_PRIORITY})")
    ap.add_argument("--lockstep", action="store_true",
                    help="paced by the plant's SYNC messages (hil.can.lockstep)")
    ap.add_argument("--no-diag", action="store_true",
                    help="no fault memory and no UDS server (hil.diag.acc)")
    ap.add_argument("--xcp", action="store_true", help="serve XCP on CAN (hil.xcp: "
                    "calibration, DAQ at each frame) on the same interface and channel")
    ap.add_argument("--a2l", help="with --xcp: write the slave's A2L file here")
    a = ap.parse_args(argv)
    if not 0 <= a.priority <= 99:
        ap.error(f"--priority {a.priority}: give 1..99 (SCHED_FIFO) or 0 (none)")
    opts = realtime_options(a.priority or None)
    if a.priority and "priority" not in opts:
        print(f"acc_ecu: SCHED_FIFO priority {a.priority} not permitted (needs root or "
              "CAP_SYS_NICE): best-effort pacing, deadlines may slip on a busy machine",
              file=sys.stderr, flush=True)

    wire = CanBackend(a.interface, a.channel, name="ecu", timeout=0.0,
                      **bus_options(a.interface, a.channel)).open()
    watch = EndWatch(end)
    wire.add_tap(rx=watch)  # the plant's end-of-session frame ends the run
    can, clock, follower = wire, None, None
    if a.lockstep:
        from hil.can.lockstep import LockstepBus, LockstepFollower, SyncClock
        can = LockstepBus(wire).open()
        clock = SyncClock(can)
        follower = LockstepFollower(can, clock)
    diagram = ecu_diagram(can, CanDatabase(ACC_DBC), diagnostics=not a.no_diag)
    if not a.no_diag and a.interface != "slcan":  # a serial port has one user
        from hil.diag.acc import serve  # UDS on ISO-TP, in a thread (hil.diag.server)
        box["uds"] = serve(diagram.blocks["diag"], a.interface, a.channel)
    sim = Simulator(diagram, solver="rk4", record=False)
    # the ECU runs until the plant stops it: its end is a SIGTERM, not its duration
    # lock-step: every frame the plant asks for runs (hil.can.lockstep)
    policy = {"overrun": "catch_up", "max_catch_up": None} if a.lockstep else \
        {"overrun": "skip"}
    xcp = None
    if a.xcp:  # docs/guides/hil-xcp.md: commands on a thread, DAQ after each frame
        from hil.xcp import acc_ecu_xcp
        xcp = acc_ecu_xcp(sim, CONTROL_PERIOD, interface=a.interface, channel=a.channel,
                          a2l=a.a2l)
    rt = RealTimeRunner(sim, period_s=CONTROL_PERIOD, clock=clock,
                        on_frame=xcp.chain(follower) if xcp else follower,
                        **{**policy, **opts})
    if xcp:
        xcp.use_runner(rt)
    box.update(rt=rt, clock=clock)
    if ended:
        end(ended[0])
    sim.initialize()  # the hit at t = 0, before the plant can send anything (deterministic)
    print("READY", flush=True)
    code = 0
    try:
        rt.run(a.duration)
    except KeyboardInterrupt:
        code = 130
    except Exception as exc:  # noqa: BLE001 - written to the summary, exit status 1
        print(f"acc_ecu: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        code = 1
    finally:
        if "uds" in box:
            box["uds"].close()
        wire.close()
        if xcp:
            xcp.close()
        if a.summary:
            rx, tx = diagram.blocks["rx"], diagram.blocks["tx"]
            v = rt.verdict
            tel = rt.telemetry
            out = {"telemetry": tel.as_dict() if tel else None,
                   "status": "terminated" if "SIGTERM" in ended else "complete",
                   "stopped_by": tel.stopped_by if tel else None,
                   "parent_gone": parent.orphaned if parent is not None else None,
                   "end_of_session_seen": watch.seen is not None,
                   "rx": rx.stats(), "tx": tx.stats(), "exit": code, "pid": os.getpid(),
                   "runner_options": opts, "setup": rt.setup,
                   "verdict": v.as_dict() if v is not None else None,
                   "lockstep_frames": follower.frames if follower else None,
                   "diag": None if a.no_diag else {
                       "memory": diagram.blocks["diag"].memory.as_dict(),
                       "cost": diagram.blocks["diag"].cost(),
                       "uds": box["uds"].stats() if "uds" in box else None},
                   "xcp": xcp.stats() if xcp else None}
            with open(a.summary, "w") as f:
                json.dump(out, f, indent=1, default=str)
    if code == 0 and rt.verdict is not None:
        code = rt.verdict.exit_code
    return code


if __name__ == "__main__":
    sys.exit(main())
