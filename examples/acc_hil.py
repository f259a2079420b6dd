"""ACC controller in the loop: the ECU in its own process, the car in the real-time runner.

::

    plant process (RealTimeRunner, 8 ms frames)             ECU process (16 ms frames)
    car + traffic + radar --tx_ego/tx_radar--> CAN --> rx --> ACCController --> tx
    car <------------- rx_cmd (ACC_CMD) <----------- CAN <-----------------------+

The plant is the offline cut-in loop of ``examples/acc_cut_in.py`` (the simple car of
``acc_plant.py``, AB3 at 8 ms, the seed's cut-in, here at 10 s of a 30 s run) with the
controller replaced by three CAN bridges; the controller runs in ``examples/acc_ecu.py``,
a separate operating-system process that speaks only CAN (``udp_multicast`` between the
processes, hop limit 0 so nothing leaves the host, or python-can's ``slcan`` on two ptys
joined by :class:`hil.can.slcan_hub.SlcanHub`).

Safe state: ``rx_cmd`` marks the command stale when no ``ACC_CMD`` arrived for
:data:`CMD_STALE_S` (3 ECU cycles); the car then gets a closed throttle and the brake
torque of :data:`SAFE_DECEL_M_S2` (a stand-in for "ACC off, driver warned": what a
vehicle does on an ACC failure is the vehicle maker's choice).  Faults (``--fault``):

``drop``     20 % of the received commands lost for 4 s (seeded)
``delay``    commands held back 40 ms for 4 s
``bus_off``  the plant's bus is off for 0.5 s (reads and writes fail; recovered after)
``kill``     the ECU process is killed (SIGKILL) at 8 s

Real-time set-up: both loops run under SCHED_FIFO (priority :data:`RT_PRIORITY`) where
the process may (root or CAP_SYS_NICE; else best-effort pacing, said on stderr by the
ECU), with the collector frozen and 1 ns timer slack (``--priority 0``: none).  Nothing
slow stays in the plant's frame: ``results.csv`` and ``bus.asc`` are written by writer
threads fed by bounded queues (the runner's ``recording`` and the log's ``dropped``
counts say whether anything was lost).

Run ``python examples/acc_hil.py`` (``--interface slcan``, ``--fault kill``, ``--out``):
it prints the real-time telemetry, the CAN counters and the cut-in acceptance, and writes
``results.csv`` (streamed while running), ``telemetry.csv``, ``bus.asc`` (every frame on
the plant's side of the wire), ``summary.json``, ``ecu_summary.json`` and ``acc_hil.png``
under ``--out`` (default ``out/acc_hil``).  Before the run the plant checks that the ECU
uses the same DBC (:mod:`hil.can.handshake`); a bus monitor (:mod:`hil.can.monitor`)
reports the bus load and each message's cycle time and jitter; the run ends with a verdict
(plant, ECU, acceptance) that is the exit status.

``cosim hil run examples/acc_hil.py`` runs the same pair through the command line
(:func:`build` and :func:`finish`: the ECU as a peer process, ``bus.asc``, the acceptance
and ``acc_hil.png``; default folder ``out/acc_hil_plant``, the diagram's name); the
script's faults, lock-step and SLCAN need the script.

The ECU never outlives the plant: it is a :class:`hil.peer.Peer` (its own process group,
SIGTERM from the kernel if the plant's process dies, and the ECU watches the plant's
process itself: :mod:`hil.lifeline`), and when the plant's run ends the plant sends the
end-of-session frame (:mod:`hil.can.session`), on which the ECU ends its own run before
its inputs can go stale on account of the end.  SIGTERM or SIGINT (Ctrl-C) end the plant's
run after its current frame (:class:`hil.lifeline.StopOnSignals`): the ECU is ended as
at a normal end and ``summary.json`` is written with ``"status": "terminated"`` (or
``"interrupted"``), the acceptance judged on what was run; exit status 143 (or 130).

The cut-in acceptance watches the :data:`ACCEPTANCE_WINDOW_S` after the cut-in (gap back
within 2 % in 10 s): a run shorter than :data:`MIN_JUDGED_T_END` (20 s) cannot show it, and
its verdict says "not judged" instead of failing the recovery check (issue 30: the help
said 15 s was enough and a 16 s run failed that check).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from blocks.controllers import ACCSettings, check_iso15622
from blocks.sources import Constant
from blocks.vehicle.scenarios import cut_in_scenario
from cosim import DiagramBuilder, Simulator
from cosim.plotting import save_figure
from cosim.writers import CsvWriter

try:  # imported as examples.acc_hil (tests)
    from examples.acc_cut_in import recovery_time
    from examples.acc_ecu import RT_PRIORITY, bus_options, realtime_options
    from examples.acc_plant import (
        CONTROL_PERIOD,
        DT,
        FINAL_DRIVE,
        GEAR_RATIO,
        IDLE_RAD_S,
        PointMassCar,
        build_loop,
        demo_model,
    )
except ModuleNotFoundError:  # run as a script
    from acc_cut_in import recovery_time
    from acc_ecu import RT_PRIORITY, bus_options, realtime_options
    from acc_plant import (
        CONTROL_PERIOD,
        DT,
        FINAL_DRIVE,
        GEAR_RATIO,
        IDLE_RAD_S,
        PointMassCar,
        build_loop,
        demo_model,
    )

HERE = Path(__file__).resolve().parent
SPEED = 25.0
CUT_IN_S = 10.0
CUT_IN_GAP = 25.0
T_END = 30.0
#: The plant's frame: one AB3 step.
PLANT_PERIOD = DT
#: A command older than this is stale: 3 ECU cycles of 16 ms, plus one plant frame.
CMD_STALE_S = 3 * CONTROL_PERIOD + DT
#: Deceleration of the safe state [m/s^2].
SAFE_DECEL_M_S2 = 2.0
FAULTS = ("none", "drop", "delay", "bus_off", "kill")
#: Lock-step HIL against :func:`offline_lockstep` (same code, same order: equal but for
#: the floating point of two processes, which is the same).
LOCKSTEP_TOL = 1e-9
#: The cut-in acceptance watches this long after the cut-in (recovery within 10 s) [s].
ACCEPTANCE_WINDOW_S = 10.0
#: The shortest run whose cut-in acceptance can be judged [s].
MIN_JUDGED_T_END = CUT_IN_S + ACCEPTANCE_WINDOW_S
#: How long the ECU gets to end by itself after the plant's end-of-session frame [s].
ECU_GRACE_S = 5.0
#: What the plant records (every 40 ms, as offline).
RECORD = ["car.x", "car.v", "car.a", "radar.range", "radar.range_rate", "radar.valid",
          "rx_cmd.throttle", "rx_cmd.brake_torque", "rx_cmd.ok"]
HIL = {"period_s": PLANT_PERIOD, "duration_s": T_END, "overrun": "skip"}
#: ``cosim hil run``: results.csv holds what the script records.
SIMULATION = {"record": RECORD}


def scenario(cut_in_s: float = CUT_IN_S, t_end: float = T_END,
             settings: ACCSettings | None = None):
    st = settings or ACCSettings()
    gap = st.standstill_gap_m + st.time_gap_s * SPEED
    return cut_in_scenario(gap, speed_m_s=SPEED, cut_in_s=cut_in_s, cut_in_gap_m=CUT_IN_GAP,
                           t_end_s=t_end)


def safe_brake_nm(model: Any = None) -> float:
    """Wheel brake torque that decelerates the car at :data:`SAFE_DECEL_M_S2`."""
    m = model or demo_model()
    return SAFE_DECEL_M_S2 * m.effective_mass(GEAR_RATIO * FINAL_DRIVE) * m.wheel_radius_m


def cruise_throttle(model: Any = None, v: float = SPEED) -> float:
    """Throttle of steady cruise at ``v`` (the command before the ECU's first frame)."""
    m = model or demo_model()
    n = GEAR_RATIO * FINAL_DRIVE
    te = m.resistance(v) / (m.efficiency * n / m.wheel_radius_m)
    return float(m.engine.throttle_for(te, max(v * n / m.wheel_radius_m, IDLE_RAD_S)))


def plant_diagram(can: Any, db: Any, scen: Any = None):
    """Car, traffic and radar; the controller is across the bus (module docstring)."""
    from hil.bridges import CanReceive, CanTransmit
    scen = scen or scenario()
    model = demo_model()
    b = DiagramBuilder("acc_hil_plant")
    car = b.add(PointMassCar("car", model, v0_m_s=scen.ego_v0_m_s, x0_m=scen.ego_x0_m))
    vset = b.add(Constant("set_speed", scen.set_speed_m_s, unit="m/s"))
    radar = scen.add_to(b, car.x, car.v)["radar"]
    ego = b.add(CanTransmit("tx_ego", can, db, "EGO", CONTROL_PERIOD, on_error="hold"))
    trk = b.add(CanTransmit("tx_radar", can, db, "RADAR", CONTROL_PERIOD, on_error="hold"))
    cmd = b.add(CanReceive("rx_cmd", can, db, "ACC_CMD", PLANT_PERIOD,
                           stale_after_s=CMD_STALE_S, on_stale="safe",
                           safe={"throttle": 0.0, "brake_torque": safe_brake_nm(model)},
                           initial={"throttle": cruise_throttle(model), "brake_torque": 0.0},
                           startup_s=0.5, on_error="hold"))
    b.connect(car.v, ego.speed)
    b.connect(vset.y, ego.set_speed)
    b.connect(car.gear_ratio, ego.gear_ratio)
    b.connect(car.engine_speed, ego.engine_speed)
    b.connect(radar.range, trk.range)
    b.connect(radar.range_rate, trk.range_rate)
    b.connect(radar.valid, trk.target_valid)
    b.connect(cmd.throttle, car.throttle)
    b.connect(cmd.brake_torque, car.brake_torque)
    return b.build()


def random_group() -> str:
    """A multicast group of its own for one run (two runs on a host do not meet)."""
    rnd = random.Random()
    return f"239.{rnd.randint(1, 254)}.{rnd.randint(1, 254)}.{rnd.randint(1, 254)}"


def ecu_command(interface: str, channel: str, priority: int | None = RT_PRIORITY,
                lockstep: bool = False, duration_s: float | None = None) -> list[str]:
    """The ECU process's command line (``examples/acc_ecu.py``)."""
    cmd = [sys.executable, str(HERE / "acc_ecu.py"), "--interface", interface,
           "--channel", channel, "--priority", str(priority or 0)]
    if duration_s is not None:
        cmd += ["--duration", repr(float(duration_s))]
    if lockstep:
        cmd.append("--lockstep")
    return cmd


def ecu_env() -> dict:
    """The ECU's environment: this checkout first on its path."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(HERE.parent), os.environ.get("PYTHONPATH", "")])}


def build(io: Any):
    """``cosim hil run examples/acc_hil.py``: the plant on the interface ``can``
    (``udp_multicast`` on a group of its own unless overridden), the ECU as a peer process
    on the same group, the bus logged to ``bus.asc``; :func:`finish` judges the cut-in."""
    from hil.can import ACC_DBC, CanDatabase
    from hil.can.handshake import check_peer
    from hil.errors import HILError
    if not getattr(io, "realtime", True):
        raise HILError("the ECU process keeps the wall clock: a plant on the virtual clock "
                         "(--no-realtime) would outrun it; run in real time (the offline "
                         "loop is examples/acc_cut_in.py)")
    can = io.open("can", interface="udp_multicast", channel=random_group(), log="bus.asc",
                  end_of_session="send")
    if getattr(can, "interface", None) != "udp_multicast":
        raise HILError(f"the ECU runs in its own process and meets the plant over "
                         f"udp_multicast; {can.where} cannot reach it (the SLCAN pair needs "
                         "the script: python examples/acc_hil.py --interface slcan)")
    io.spawn(ecu_command("udp_multicast", can.channel), name="acc_ecu",
             summary_option="--summary", env=ecu_env())
    db = CanDatabase(ACC_DBC)
    check_peer(can, db, timeout=2.0)
    return Simulator(plant_diagram(can, db), solver="ab3", dt=DT, record=RECORD,
                     record_every=5)


def finish(run: Any) -> None:
    """``cosim hil run``: the cut-in acceptance (or why it is not judged) and the plot."""
    res = run.results
    s, acc, why = cut_in_acceptance(res, run.time)
    if why:
        run.note(why)
    for k, ok in (acc or {}).items():
        run.check(f"acceptance: {k}", ok, f"cut-in acceptance {k}: {'ok' if ok else 'FAIL'}",
                  figure=ok, limit=True)
    run.summary["acceptance"] = acc
    run.summary["cut_in"] = {k: (v.__dict__ if hasattr(v, "__dict__") else v)
                             for k, v in (s or {}).items()}
    png = _plot(res, Path(run.out) / "acc_hil.png", CUT_IN_S)
    if png:
        run.wrote(png)


# ------------------------------------------------------------------ figures
def summary(res: Any, cut_in_s: float = CUT_IN_S, throttle: str = "rx_cmd.throttle",
            brake: str = "rx_cmd.brake_torque") -> dict:
    """Cut-in figures from the plant's own signals (the same for offline and HIL runs)."""
    t, r, v, a = res.time, res["radar.range"], res["car.v"], res["car.a"]
    pre = (t > cut_in_s - 5.0) & (t < cut_in_s)
    after = t >= cut_in_s
    gap0 = float(np.mean(r[pre]))
    thr, brk = res[throttle], res[brake]
    return {"gap_before_m": gap0, "min_gap_m": float(r[after].min()),
            "min_speed_m_s": float(v[after].min()),
            "recovery_2pct_s": recovery_time(t, r, gap0, cut_in_s, 0.02 * gap0),
            "accel_range": (float(a.min()), float(a.max())),
            "iso": check_iso15622(t, a, v),
            "overlap_samples": int(np.count_nonzero((thr > 1e-9) & (brk > 1e-9)))}


def cut_in_acceptance(res: Any, t_end: float, cut_in_s: float = CUT_IN_S,
                      throttle: str = "rx_cmd.throttle", brake: str = "rx_cmd.brake_torque"
                      ) -> tuple[dict | None, dict[str, bool] | None, str | None]:
    """``(figures, acceptance, None)`` of a run that covers the acceptance window, else
    ``(None, None, why it is not judged)``: the recovery criterion (gap back within 2 % in
    10 s, and staying there) needs the run to last :data:`ACCEPTANCE_WINDOW_S` past the
    cut-in; a shorter run would fail it for a recovery it never had the time to show."""
    if t_end < cut_in_s + ACCEPTANCE_WINDOW_S - 1e-9:
        return None, None, (f"cut-in acceptance not judged: the run ends at {t_end:g} s and "
                            f"the acceptance watches the {ACCEPTANCE_WINDOW_S:g} s after the "
                            f"cut-in at {cut_in_s:g} s (run {cut_in_s + ACCEPTANCE_WINDOW_S:g}"
                            " s or more)")
    s = summary(res, cut_in_s, throttle, brake)
    return s, acceptance(s), None


def acceptance(s: dict) -> dict[str, bool]:
    """The cut-in acceptance of ``tests/system/test_acc_scenarios.py`` (the seed's
    criteria): gap back within 2 % in 10 s, never closer than the cut-in gap less 1 m,
    'slows a little', acceleration within [-2.5, 1] m/s^2, ISO 15622, no pedal overlap."""
    lo, hi = s["accel_range"]
    return {"recovered_within_10s": s["recovery_2pct_s"] < 10.0,
            "min_gap_ok": s["min_gap_m"] >= CUT_IN_GAP - 1.0,
            "slows_a_little": s["min_speed_m_s"] > 20.0,
            "accel_within_limits": -2.5 <= lo and hi <= 1.0,
            "iso15622": bool(s["iso"].ok),
            "no_pedal_overlap": s["overlap_samples"] == 0}


def offline_lockstep(cut_in_s: float = CUT_IN_S, t_end: float = T_END) -> Any:
    """The lock-step loop offline: the plant's and the ECU's diagrams (the same code as in
    the loop) in one process, on a python-can ``virtual`` bus, stepped as lock-step steps
    them: the ECU's hit at 0 first, then per plant frame the plant, and at each ECU hit the
    ECU (its command acts from the plant's next frame on).  The reference of the lock-step
    HIL run, which must equal it (:data:`LOCKSTEP_TOL`)."""
    import time as _time

    from hil.can import ACC_DBC, CanBackend, CanDatabase
    try:
        from examples.acc_ecu import ecu_diagram
    except ModuleNotFoundError:
        from acc_ecu import ecu_diagram
    db = CanDatabase(ACC_DBC)
    ch = f"acc-lockstep-{os.getpid()}-{_time.monotonic_ns()}"
    with CanBackend("virtual", ch, timeout=0.0) as pc, CanBackend("virtual", ch,
                                                                  timeout=0.0) as ec:
        esim = Simulator(ecu_diagram(ec, db), solver="rk4", record=False)
        psim = Simulator(plant_diagram(pc, db, scenario(cut_in_s, t_end)), solver="ab3",
                         dt=DT, record=RECORD, record_every=5)
        esim.initialize()
        psim.initialize()
        k, per = 0, round(CONTROL_PERIOD / DT)
        n = round(t_end / DT)
        for k in range(1, n + 1):
            psim.advance_to(k * DT)
            if k % per == 0:
                esim.advance_to(k * DT)
        return psim.finish()


def offline(cut_in_s: float = CUT_IN_S, t_end: float = T_END) -> Any:
    """The same scenario with the controller in the diagram (no bus): the reference."""
    d = build_loop(scenario(cut_in_s, t_end))
    rec = ["car.x", "car.v", "car.a", "radar.range", "acc.throttle", "acc.brake_torque"]
    return Simulator(d, solver="ab3", dt=DT, record=rec, record_every=5).run(t_end)


# ------------------------------------------------------------------ the run
class EcuProcess:
    """``examples/acc_ecu.py`` as a peer process (:class:`hil.peer.Peer`: its own process
    group, SIGTERM when this process dies); :meth:`wait_ready` waits for its READY line.
    ``priority``: its SCHED_FIFO priority where permitted (``None``: none).
    ``duration_s``: the ECU's longest run (default its own, a day); :meth:`stop` ends it."""

    def __init__(self, interface: str, channel: str, summary: Path | None = None,
                 priority: int | None = None, lockstep: bool = False,
                 duration_s: float | None = None) -> None:
        from hil.peer import Peer
        cmd = ecu_command(interface, channel, priority, lockstep, duration_s)
        if summary is not None:
            cmd += ["--summary", str(summary)]
        self.peer = Peer(cmd, name="acc_ecu", env=ecu_env())
        self.proc = self.peer.proc

    def wait_ready(self, timeout: float = 60.0) -> None:
        self.peer.wait_ready(timeout)

    def kill(self) -> None:
        """SIGKILL, not waited for here (a plant frame must not block on it)."""
        self.peer.kill()

    def stop(self, grace_s: float = 0.0) -> int | None:
        """Wait ``grace_s`` for the ECU to end by itself (after the end-of-session frame),
        then SIGTERM (SIGKILL after 10 s); returns its exit status."""
        return self.peer.stop(grace_s)


def faults_for(kind: str, on_at: float = 12.0, length: float = 4.0) -> list:
    from hil.faults import Fault
    if kind == "drop":
        return [Fault("drop", on_at, on_at + length, direction="rx", probability=0.2)]
    if kind == "delay":
        return [Fault("delay", on_at, on_at + length, direction="rx", delay_s=0.04)]
    if kind == "bus_off":
        return [Fault("bus_off", on_at, on_at + 0.5)]
    return []


def run_hil(out: Path, *, interface: str = "udp_multicast", channel: str | None = None,
            fault: str = "none", cut_in_s: float = CUT_IN_S, t_end: float = T_END,
            kill_at: float = 8.0, plot: bool = True, runner_options: dict | None = None,
            priority: int | None = RT_PRIORITY, hub: Any = None,
            lockstep: bool = False, stop: Any = None) -> dict:
    """Start the ECU, run the plant in real time, stop the ECU; returns the summary
    (also written to ``out/summary.json``) with the run's verdict (plant, ECU, acceptance).
    ``stop``: a :class:`hil.lifeline.StopOnSignals` whose signal ends the run in order
    (the summary then says ``"status": "terminated"``, and judges what was run).

    Both loops run with :func:`~examples.acc_ecu.realtime_options` (SCHED_FIFO at
    ``priority`` where permitted, ``None``: never; the runner's automatic set-up adds the
    rest); ``runner_options`` override the plant's settings.  ``lockstep``: the plant's
    frames trigger the ECU (:mod:`hil.can.lockstep`); the result then equals
    :func:`offline_lockstep` (``"lockstep_vs_offline"`` in the summary)."""
    from hil import RealTimeRunner
    from hil.can import ACC_DBC, CanBackend, CanDatabase, MessageLog
    from hil.can.monitor import BusMonitor
    from hil.can.session import end_frame
    from hil.faults import FaultyBackend
    if fault not in FAULTS:
        raise ValueError(f"fault must be one of {', '.join(FAULTS)}, got {fault!r}")
    out.mkdir(parents=True, exist_ok=True)
    hub_owned = None
    if interface == "udp_multicast":
        ecu_ch = plant_ch = channel or random_group()
    elif interface == "slcan":
        if hub is None:
            from hil.can.slcan_hub import SlcanHub
            hub = hub_owned = SlcanHub(2).start()
        plant_ch, ecu_ch = hub.ports[0], hub.ports[1]
    else:
        raise ValueError(f"interface must be udp_multicast or slcan (two processes), got "
                         f"{interface!r}")
    db = CanDatabase(ACC_DBC)
    opts = {**realtime_options(priority), **(runner_options or {})}
    ecu = EcuProcess(interface, ecu_ch, out / "ecu_summary.json", priority, lockstep)
    wire = log = leader = monitor = None
    ended = []

    def end_session() -> None:
        """The end-of-session frame, once: in the last frame (not after the run's
        tidying up, which takes 0.1 s and more on a busy machine, longer than the ECU's
        staleness limit), or after a run that ended early."""
        if ended or wire is None:
            return
        ended.append(True)
        try:
            wire.write(end_frame(db), timeout=0.0)
        except Exception:  # noqa: BLE001 - the ECU is then stopped by SIGTERM
            pass

    try:
        ecu.wait_ready()
        wire = CanBackend(interface, plant_ch, name="plant", timeout=0.0,
                          **bus_options(interface, plant_ch)).open()
        # the ECU answers the DBC check with its database's fingerprint (a lock-step ECU
        # answers at its first frame, its receiver checks the request then)
        from hil.can.handshake import check_peer, dbc_frame
        if lockstep:
            wire.write(dbc_frame(db, request=True), timeout=0.0)
        else:
            check_peer(wire, db, timeout=2.0)
        log = MessageLog(out / "bus.asc")
        monitor = BusMonitor(db, cycle_s={m: CONTROL_PERIOD for m in ("RADAR", "EGO",
                                                                      "ACC_CMD")},
                             bitrate=500_000)
        wire.add_tap(rx=log, tx=log.sent)
        wire.add_tap(rx=monitor, tx=monitor.sent)
        sim_box: list = []  # fault windows on the simulation's clock (= wall, paced)
        node = wire
        if lockstep:
            from hil.can.lockstep import LockstepBus, LockstepLeader
            node = LockstepBus(wire).open()
            leader = LockstepLeader(node, CONTROL_PERIOD)
        can = (FaultyBackend(node, faults_for(fault), clock=lambda: sim_box[0].ctx.time)
               .open() if fault != "none" else node)
        diagram = plant_diagram(can, db, scenario(cut_in_s, t_end))
        writer = CsvWriter(out / "results.csv", RECORD, every=5, chunk=25)
        sim = Simulator(diagram, solver="ab3", dt=DT, record=RECORD, record_every=5,
                        observers=[writer])
        sim_box.append(sim)
        killed_at = None

        def on_frame(rt: Any, k: int) -> None:
            nonlocal killed_at
            if fault == "kill" and killed_at is None and sim.ctx.time >= kill_at:
                ecu.kill()
                killed_at = sim.ctx.time
            if sim.ctx.time >= t_end - 1e-9:  # the last frame: the session ends with it
                end_session()

        if leader is not None:
            leader.chain = on_frame
        # lock-step: every frame runs (a stall delays the run, never drops a SYNC)
        policy = {"overrun": "catch_up", "max_catch_up": None} if lockstep else \
            {"overrun": "skip"}
        rt = RealTimeRunner(sim, period_s=PLANT_PERIOD, on_frame=leader or on_frame,
                            watch=[log] + ([leader] if leader else []),
                            **{**policy, **opts})
        if stop is not None:
            stop.runner = rt  # a signal from now on ends the run at the end of its frame
        wall = time.perf_counter()
        res = rt.run(t_end)
        wall = time.perf_counter() - wall
        t_reached = sim.ctx.time
    finally:
        end_session()  # a run that ended early (else done in its last frame)
        # (no end-of-session frame went out, e.g. stopped before the run: SIGTERM at once)
        ecu_code = ecu.stop(ECU_GRACE_S if ended else 0.0)
        if log is not None:
            log.stop()
        if wire is not None:
            wire.close()
        if hub_owned is not None:
            hub_owned.stop()
    rt.telemetry.write_csv(out / "telemetry.csv")
    status = "complete" if stop is None else stop.status
    t_judged = t_end if status == "complete" else min(t_end, t_reached)
    s, acc, not_judged = cut_in_acceptance(res, t_judged, cut_in_s)
    ecu_summary = {}
    try:
        ecu_summary = json.loads((out / "ecu_summary.json").read_text())
    except (OSError, ValueError):
        pass
    from hil.verdict import Check, Verdict
    checks = [Check(f"acceptance: {k}", v, True, v, f"cut-in acceptance {k}: "
                    f"{'ok' if v else 'FAIL'}") for k, v in (acc or {}).items()]
    parts = [rt.verdict]
    ev = ecu_summary.get("verdict")
    if ev is not None:
        parts.append(Verdict.from_dict(ev, "ecu"))
    elif fault != "kill":
        checks.append(Check("ecu", None, "a verdict", False, "the ECU wrote no verdict "
                            f"(exit {ecu_code})"))
    lockstep_cmp = None
    if lockstep:
        ref = offline_lockstep(cut_in_s, t_judged)
        n = min(len(ref.time), len(res.time))
        err = max(float(np.max(np.abs(np.asarray(res[k][:n]) - np.asarray(ref[k][:n]))))
                  for k in ("car.x", "car.v", "rx_cmd.throttle", "rx_cmd.brake_torque"))
        lockstep_cmp = {"max_abs_error": err, "samples": n, "tol": LOCKSTEP_TOL,
                        "leader": leader.stats()}
        checks.append(Check("lockstep_vs_offline", err, LOCKSTEP_TOL, err <= LOCKSTEP_TOL
                            and n == len(ref.time),
                            f"lock-step HIL vs offline: max error {err:.3g} over {n} samples "
                            f"(tol {LOCKSTEP_TOL:g})"))
    verdict = Verdict.combine(f"acc_hil ({interface}, fault {fault})", parts, checks)
    if not_judged:
        verdict.notes.insert(0, not_judged)
    if status != "complete":
        verdict.notes.insert(0, f"{status} by {rt.telemetry.stopped_by} at t = "
                                f"{t_reached:.2f} s of {t_end:g} s")
    if fault != "none":
        verdict.notes.append(f"fault '{fault}' injected: stale episodes and link losses are "
                             "what it is meant to cause")
    blocks = diagram.blocks
    cmd_ok = res["rx_cmd.ok"]
    first = int(np.argmax(cmd_ok >= 0.5))  # before the ECU's first command: start-up
    lost = first + np.flatnonzero(cmd_ok[first:] < 0.5)
    result = {
        "status": status, "stopped_by": rt.telemetry.stopped_by or None,
        "t_reached": t_reached,
        "interface": interface, "fault": fault, "wall_s": wall, "t_end": t_end,
        "ecu_exit": ecu_code, "killed_at_s": killed_at,
        "telemetry": rt.telemetry.as_dict(), "runner_options": opts,
        "bridges": {n: blocks[n].stats() for n in ("rx_cmd", "tx_ego", "tx_radar")},
        "backend": wire.counters.as_dict(),
        "injected": getattr(can, "injected", {}),
        "bus_log_frames": log.count,
        "bus_log": log.stats(),
        "bus_monitor": monitor.report(),
        "command_stale_s": [float(res.time[lost[0]]), float(res.time[lost[-1]])]
        if lost.size else None,
        "summary": {k: (v.__dict__ if hasattr(v, "__dict__") else v)
                    for k, v in s.items()} if s else None,
        "acceptance": acc, "acceptance_not_judged": not_judged, "lockstep": lockstep_cmp,
        "verdict": verdict.as_dict(),
    }
    with open(out / "summary.json", "w") as f:
        json.dump(result, f, indent=1, default=str)
    if plot:
        _plot(res, out / "acc_hil.png", cut_in_s)
    result["results"] = res
    result["telemetry_obj"] = rt.telemetry
    result["verdict_obj"] = verdict
    result["bus_monitor_text"] = monitor.summary()
    return result


def _plot(res: Any, path: Path, cut_in_s: float) -> str | None:
    t = res.time

    def draw(fig, ax):
        ax[0].plot(t, res["radar.range"], label="gap")
        ax[0].axvline(cut_in_s, color="0.6", ls=":")
        ax[0].set_ylabel("gap [m]")
        ax[1].plot(t, res["car.v"], label="speed")
        ax[1].set_ylabel("speed [m/s]")
        ax[2].plot(t, res["rx_cmd.throttle"], label="throttle")
        ax[2].plot(t, res["rx_cmd.brake_torque"] / 1000.0, label="brake [kN m]")
        ax[2].plot(t, res["rx_cmd.ok"], label="command fresh", ls="--")
        ax[2].set_xlabel("time [s]")
        ax[2].legend(loc="best")
        fig.suptitle("ACC controller in the loop over CAN (ECU process, plant in real time)")

    return save_figure(str(path), draw, 3, 1, figsize=(8, 7), sharex=True)


def report(r: dict) -> None:
    tel = r["telemetry_obj"]
    print(f"ACC in the loop over {r['interface']} (fault: {r['fault']}): {r['t_end']:g} s "
          f"in {r['wall_s']:.2f} s wall")
    print("  " + tel.summary().replace("\n", "\n  "))
    o, bl = r["runner_options"], r["bus_log"]
    fifo = (f"SCHED_FIFO priority {o['priority']}" if "priority" in o
            else "no SCHED_FIFO (not permitted, or --priority 0)")
    print(f"  real-time set-up: {fifo}, gc {o.get('gc_mode', 'normal')}; bus log "
          f"{bl['written']} frames written on its "
          f"thread, {bl['dropped']} dropped (queue full)")
    b = r["bridges"]
    print(f"  CAN: ACC_CMD received {b['rx_cmd']['received']['ACC_CMD']}, stale episodes "
          f"{b['rx_cmd']['stale_events']['ACC_CMD']}; EGO sent {b['tx_ego']['sent']}, RADAR "
          f"sent {b['tx_radar']['sent']}; bus log {r['bus_log_frames']} frames")
    if r["injected"]:
        print(f"  injected: {r['injected']}")
    print(f"  bus monitor: {r['bus_monitor_text']}")
    if r["command_stale_s"]:
        a, z = r["command_stale_s"]
        print(f"  commands stale (safe state) between {a:.2f} s and {z:.2f} s")
    s = r["summary"]
    if s is None:
        print(f"  {r['acceptance_not_judged']}")
    else:
        print(f"  gap min {s['min_gap_m']:.2f} m, back within 2 % after "
              f"{s['recovery_2pct_s']:.2f} s; speed min {s['min_speed_m_s']:.2f} m/s; accel "
              f"[{s['accel_range'][0]:.2f}, {s['accel_range'][1]:.2f}] m/s^2")
        acc = r["acceptance"]
        print("  acceptance: " + ", ".join(f"{k} {'ok' if v else 'FAIL'}"
                                           for k, v in acc.items()))
    if r.get("lockstep"):
        ls = r["lockstep"]
        print(f"  lock-step: max error against offline {ls['max_abs_error']:.3g} over "
              f"{ls['samples']} samples; ACK wait max {ls['leader']['ack_wait_max_us']:.0f} "
              f"us, {ls['leader']['timeouts']} timeouts")
    print(r["verdict_obj"].line())


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--interface", default="udp_multicast", choices=["udp_multicast", "slcan"])
    ap.add_argument("--fault", default="none", choices=FAULTS)
    ap.add_argument("--t-end", type=float, default=T_END,
                    help=f"run length [s] (default {T_END:g}); the cut-in acceptance is "
                         f"judged on runs of {MIN_JUDGED_T_END:g} s or more (it watches the "
                         f"{ACCEPTANCE_WINDOW_S:g} s after the cut-in at {CUT_IN_S:g} s); a "
                         "shorter run checks the loop only and its verdict says so")
    ap.add_argument("--out", default="out/acc_hil", help="output folder (default "
                                                         "out/acc_hil)")
    ap.add_argument("--priority", type=int, default=RT_PRIORITY,
                    help="SCHED_FIFO priority 1-99 of both loops where permitted (root or "
                         f"CAP_SYS_NICE), 0: none (default {RT_PRIORITY})")
    ap.add_argument("--lockstep", action="store_true",
                    help="the plant's frames trigger the ECU: deterministic, compared with "
                         "the offline lock-step run")
    a = ap.parse_args(argv)
    if not 0 <= a.priority <= 99:
        ap.error(f"--priority {a.priority}: give 1..99 (SCHED_FIFO) or 0 (none)")
    if not (a.t_end > 0 and math.isfinite(a.t_end)):
        ap.error(f"--t-end {a.t_end:g}: give a run length in seconds > 0 (default {T_END:g}; "
                 f"the acceptance needs {MIN_JUDGED_T_END:g} or more)")
    from hil.lifeline import StopOnSignals, Terminated
    out = Path(a.out)
    with StopOnSignals() as stop:  # SIGTERM/SIGINT: the run ends in order, summary written
        try:
            r = run_hil(out, interface=a.interface, fault=a.fault, t_end=a.t_end,
                        priority=a.priority or None, lockstep=a.lockstep, stop=stop)
        except Terminated as exc:  # before the run started (or a second signal)
            return stopped_before_run(out, exc, a.interface, a.fault, a.t_end)
    r["exit_code"] = r["verdict_obj"].exit_code if stop.signum is None else 128 + stop.signum
    print(f"results, telemetry, bus log, summary and plot in {a.out}/")
    report(r)
    return r


def stopped_before_run(out: Path, exc: Any, interface: str, fault: str, t_end: float) -> dict:
    """The summary of a run stopped by a signal before its first frame (or by a second
    signal): its status, nothing judged; exit status 128 + the signal."""
    import signal

    from hil.lifeline import StopOnSignals
    status = StopOnSignals.STATUS.get(exc.signum, "stopped")
    r = {"status": status, "stopped_by": signal.Signals(exc.signum).name, "t_reached": None,
         "interface": interface, "fault": fault, "t_end": t_end, "verdict": None,
         "note": f"{status} by {signal.Signals(exc.signum).name} before the run ended in "
                 "order: nothing judged", "exit_code": 128 + exc.signum}
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "summary.json", "w") as f:
        json.dump(r, f, indent=1)
    print(f"acc_hil: {r['note']}; summary in {out}/", file=sys.stderr)
    return r


if __name__ == "__main__":
    sys.exit(main()["exit_code"])

