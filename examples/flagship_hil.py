"""The flagship's real-time phase: the co-simulated plant (the master with its multi-rate
subsystems) in the real-time runner, the controller FMU on an ECU node, the two talking
only over a python-can ``virtual`` bus.

::

    one RealTimeRunner frame (2 ms or longer): per 1 ms macro step of the plant's master,
    the macro step, then the ECU task
    master: mech (RK4 2 ms, every 2nd step) + hyd (RK4 1 ms) + drive (RK4 1 ms, every 2nd
            step) + io
    io: --tx_pos (POS)--> bus --> rx_pos --> FMU (CS) --> tx_cmd (CMD) --> bus --> rx_cmd
    hyd.u <-- io.u <--------------------------------------------------------------+

The plant is the offline co-simulation of phase 1 (:func:`plant_master`: the same three
subsystems and couplings) in its real-time configuration, lighter so that its frame has
room to spare (issue 30): the hydraulics at RK4 1 ms instead of 0.5 ms (phase 1 runs
0.5 ms to show micro-stepping; measured, the co-simulation's distance to the monolithic
reference is the same, 7.27e-7 m against 7.26e-7 m on the quick manoeuvre) and the boom at
RK4 2 ms communicating every 2nd macro step (distance to the monolithic reference 5.1e-5 m
offline; its s and s' linearly extrapolated to the 1 ms bus samples), about 0.6 of the
cost of phase 1's plant; with the controller FMU replaced by an ``io`` subsystem holding
the two CAN bridges;
:class:`hil.master_rt.RealTimeMaster` lets the runner step the master, and
:class:`PlantAndEcu` runs the ECU's step after each macro step, as many of each per frame
as the frame has milliseconds.

The frame is chosen on the machine that runs it (issue 30: a frame must fit its work with
room to spare): a 0.6 s probe (:func:`probe_frame_work`: plant and ECU on a private bus,
paced in 2 ms frames under the real run's process set-up, with a bus log) measures the
frame thread's CPU time per frame, and :func:`choose_frame` takes the shortest of 2, 4, 10
and 20 ms whose work p99 is at most half the frame (:data:`WORK_SHARE`) and leaves at
least 5 ms free for the machine's own short stalls (:data:`STALL_ROOM_S`); the choice, its
figures and why the shorter frames were not taken are printed and kept (``"frame"``).
On the 2-vCPU VM that is 10 ms: the work is 0.5-0.6 ms per 2 ms, but a 2 or 4 ms frame
cannot leave 5 ms free.  The loop is closed at every 1 ms of model time whatever the frame
(the ECU steps after each macro step); a longer frame runs its milliseconds back to back
and then waits, so the results do not depend on it.  ``CMD`` carries an alive counter and
a CRC (end-to-end protection, :mod:`hil.can.e2e`, declared in the DBC), so a lost or
corrupted command is counted, not guessed.

python-can's ``virtual`` interface connects buses of one process only, so the ECU is a
second Simulator in this process, advanced right after each macro step of the plant
(:class:`PlantAndEcu`), with its own diagram, its own
:class:`hil.can.CanBackend` and no other link to the plant (two Python threads would
only take turns on the GIL: measured, that doubled the overruns).  Its application is
the same Co-Simulation FMU as offline (:class:`FmuController`, a sampled block stepping
it once per period); the set-point profile lives in the FMU and travels to the plant in
``CMD.s_ref``.  The DBC (:data:`DBC`) is written next to the results.

Lost frames are counted from both sides: every frame a node sent was either read by the
other node's receiving bridge or is still in its queue after the run (drained and
counted); ``lost = sent - read - left``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from blocks.math import Sum
from blocks.sources import Constant
from cosim import Block, DiagramBuilder, Simulator
from cosim.time import to_ticks

try:  # imported as examples.flagship_hil (tests)
    from examples.flagship_model import CTRL_PERIOD, S0, plant_builder
except ModuleNotFoundError:  # run from examples/
    from flagship_model import CTRL_PERIOD, S0, plant_builder

#: The flagship's CAN database: the plant's measurements and the controller's command.
DBC = """VERSION "cosim flagship 1.0"


NS_ :
\tCM_

BS_:

BU_: PLANT CTRL

BO_ 256 POS: 8 PLANT
 SG_ s : 0|16@1+ (1e-05,0) [0|0.65535] "m" CTRL
 SG_ sd : 16|16@1- (1e-05,0) [-0.32768|0.32767] "m/s" CTRL
 SG_ p_s : 32|16@1+ (1000,0) [0|65535000] "Pa" CTRL
 SG_ speed : 48|16@1+ (0.01,0) [0|655.35] "rad/s" CTRL

BO_ 128 CMD: 6 CTRL
 SG_ u : 0|16@1- (5e-05,0) [-1.6384|1.63835] "" PLANT
 SG_ s_ref : 16|16@1+ (1e-05,0) [0|0.65535] "m" PLANT
 SG_ CMD_Counter : 32|4@1+ (1,0) [0|15] "" PLANT
 SG_ CMD_CRC : 40|8@1+ (1,0) [0|255] "" PLANT

CM_ BO_ 256 "Actuator length, speed, supply pressure and pump speed from the plant, 1 ms.";
CM_ BO_ 128 "Spool command and position set-point from the controller, 1 ms; E2E protected.";
"""

#: Plant period (one RK4 step of 1 ms per frame) and the ECU's.
PLANT_PERIOD = 1e-3
PLANT_DT = 1e-3
#: The plant's macro step, the subsystems' steps (as offline, phase 1) and the drive's rate.
MACRO_STEP, HYD_DT, MECH_DT, DRIVE_DT, DRIVE_RATE = 1e-3, 1e-3, 2e-3, 1e-3, 2
MECH_RATE = 2
#: Plant couplings: phase 1's, the controller replaced by the io subsystem.
RT_CONNECTIONS = [("hyd.f_h", "mech.f_h"), ("mech.s", "hyd.s"), ("mech.sd", "hyd.sd"),
                  ("drive.speed", "hyd.speed"), ("hyd.torque", "drive.torque"),
                  ("mech.s", "io.s"), ("mech.sd", "io.sd"), ("hyd.p_s", "io.p_s"),
                  ("drive.speed", "io.speed"), ("io.u", "hyd.u")]
#: Continuous signals linearly extrapolated (the boom's s and s' to the bus too: the boom
#: steps every 2 ms, the bus samples every 1 ms); the sampled command, the pressure and the
#: pump speed held.
RT_EXTRAPOLATION = {"*": 1, "hyd.u": 0, "io.s": 1, "io.sd": 1, "io.p_s": 0, "io.speed": 0}
#: Keep the plant's outputs every 10 macro steps (10 ms).
RT_RECORD_EVERY = 10


class FmuController(Block):
    """A Co-Simulation FMU stepped once per period as a sampled block (an ECU task).

    At the hit t_k the FMU's inputs are set to the block's inputs and it steps to
    t_k + T; the outputs it then has are held from the next hit on (so the output at t_k
    is the FMU's output at t_k, computed from the inputs of t_{k-1}: the semantics of the
    offline co-simulation, where the master sets the inputs at t_{k-1} and reads the
    outputs at t_k).  The FMU instance is outside the context: snapshots are refused.

    Ports
    -----
    in   each FMU input (unit from the FMU)
    out  each FMU output (held between hits; no feedthrough)
    """

    def __init__(self, name: str, fmu: Any, period_s: float) -> None:
        super().__init__(name)
        from fmus import load_fmu
        self.sub = load_fmu(fmu, name=name, interface="cs")
        self.T = to_ticks(period_s, "FmuController period")
        self.sub.initialize(0)
        outs = self.sub.get_outputs()
        self.in_ports = {n: self.declare_input(n, unit=self.sub.units[n])
                         for n in self.sub.input_names}
        self.held = self.declare_discrete_state(
            "held", tuple(float(outs[n]) for n in self.sub.output_names))
        self.out_ports = {
            n: self.declare_output(n, lambda ctx, j=j: ctx.discrete(self.held)[j],
                                   unit=self.sub.units[n], depends_on=())
            for j, n in enumerate(self.sub.output_names)}
        self.declare_opaque_state("fmu")
        self.declare_periodic_update(period_s, self._step)
        self.steps = 0

    def _step(self, ctx: Any) -> None:
        sub = self.sub
        sub.set_inputs(ctx.time, {n: (float(ctx.input(p)),) for n, p in self.in_ports.items()})
        sub.do_step(ctx.ticks, self.T)
        outs = sub.get_outputs()
        ctx.set_discrete(self.held, tuple(float(outs[n]) for n in sub.output_names))
        self.steps += 1


def plant_diagram(can: Any, db: Any, eq: dict) -> Any:
    """The monolithic plant with the controller replaced by two CAN bridges (one diagram:
    for comparisons; the real-time phase runs :func:`plant_master`)."""
    from hil.bridges import CanReceive, CanTransmit
    b, p = plant_builder(eq, "flagship_plant")
    tx = b.add(CanTransmit("tx_pos", can, db, "POS", PLANT_PERIOD, on_error="hold"))
    rx = b.add(CanReceive("rx_cmd", can, db, "CMD", PLANT_PERIOD, stale_after_s=5e-3,
                          on_stale="hold", initial={"u": eq["u"], "s_ref": S0},
                          startup_s=0.2, on_error="hold"))
    b.connect(p["kin"].out_ports[0], tx.input("s"))
    b.connect(p["kin"].out_ports[1], tx.input("sd"))
    b.connect(p["supply"].p, tx.input("p_s"))
    b.connect(p["motor"].speed, tx.input("speed"))
    b.connect(rx.output("u"), p["valve"].u)
    return b.build()


def io_diagram(can: Any, db: Any, eq: dict) -> Any:
    """The plant's CAN node as a subsystem: measurements in, ``POS`` out; ``CMD`` in, the
    spool command out (with the set-point and the command's freshness)."""
    from hil.bridges import CanReceive, CanTransmit
    b = DiagramBuilder("io")
    tx = b.add(CanTransmit("tx_pos", can, db, "POS", PLANT_PERIOD, on_error="hold"))
    rx = b.add(CanReceive("rx_cmd", can, db, "CMD", PLANT_PERIOD, stale_after_s=5e-3,
                          on_stale="hold", initial={"u": eq["u"], "s_ref": S0},
                          startup_s=0.2, on_error="hold"))
    for sig in ("s", "sd", "p_s", "speed"):
        b.export_input(tx.input(sig), sig)
    b.export_output(rx.output("u"), "u")
    b.export_output(rx.output("s_ref"), "s_ref")
    b.export_output(rx.ok, "ok")
    return b.build()


class PlantAndEcu:
    """The plant's master and the ECU's simulator as the runner's one model: each macro
    step of the plant is followed by the ECU's step at the same instant (the loop is closed
    at every 1 ms, whatever the frame), the two linked only by the bus.

    The runner sees the master's time, the bridges of both nodes (verdict, skipped frames)
    and the master's writers; the ECU's task time per step is kept in a histogram.
    """

    def __init__(self, plant: Any, ecu: Any) -> None:
        from hil.telemetry import LogHistogram
        self.plant, self.ecu = plant, ecu
        self.ctx, self.dt_ticks, self.name = plant.ctx, plant.dt_ticks, "flagship plant+ECU"
        self.diagram = None
        self.observers = plant.observers
        self.io_blocks = plant.io_blocks + ecu.diagram.leaf_blocks()
        self._ecu_ns = LogHistogram()

    @property
    def _initialized(self) -> bool:
        return self.plant._initialized

    @property
    def terminated(self) -> Any:
        return self.plant.terminated or self.ecu.terminated

    def initialize(self) -> None:
        self.plant.initialize()

    def expect(self, end: int) -> None:
        """The runner's end, passed on: any C either side needs is built before the frames."""
        self.plant.expect(end)
        self.ecu.route.expect(end)

    def advance_to_ticks(self, end: int) -> None:
        H = self.dt_ticks
        while self.ctx.ticks < end and not self.terminated:
            self.plant.advance_to_ticks(self.ctx.ticks + H)
            w = time.perf_counter_ns()
            self.ecu.advance_to_ticks(self.ctx.ticks)
            self._ecu_ns.add(time.perf_counter_ns() - w)

    def finish(self, error: BaseException | None = None) -> Any:
        return self.plant.finish(error)

    def ecu_exec_us(self) -> dict:
        h = self._ecu_ns
        return {"p50": h.quantile(0.5) / 1e3, "p99": h.quantile(0.99) / 1e3,
                "max": h.max / 1e3}


def plant_master(can: Any, db: Any, eq: dict, compiled: bool | None = None) -> Any:
    """Phase 1's co-simulated plant (mech, hyd, drive at their own steps and rates) with
    the ``io`` subsystem in place of the controller FMU; ``compiled``: the subsystems' and
    the master's (``False``: all in the Python loop, the comparison of ``bench vehicle``)."""
    from cosim import DiagramSubsystem, Jacobi, MasterScheduler
    try:
        from examples import flagship_model as fm
    except ModuleNotFoundError:  # run from examples/
        import flagship_model as fm
    c = {"compiled": compiled}
    subs = [DiagramSubsystem(fm.mechanics_diagram(), solver="rk4", dt=MECH_DT, rate=MECH_RATE,
                             **c),
            DiagramSubsystem(fm.hydraulics_diagram(eq), solver="rk4", dt=HYD_DT, **c),
            DiagramSubsystem(fm.drive_diagram(eq), solver="rk4", dt=DRIVE_DT,
                             rate=DRIVE_RATE, **c),
            DiagramSubsystem(io_diagram(can, db, eq), solver="rk4", dt=PLANT_PERIOD, **c)]
    return MasterScheduler(subs, RT_CONNECTIONS, MACRO_STEP, coupling=Jacobi(),
                           extrapolation=RT_EXTRAPOLATION, **c)


def ecu_diagram(can: Any, db: Any, fmu: Any) -> Any:
    """The ECU: POS in, the controller FMU on the extension s - s0, CMD out."""
    from hil.bridges import CanReceive, CanTransmit
    b = DiagramBuilder("flagship_ecu")
    rx = b.add(CanReceive("rx_pos", can, db, "POS", CTRL_PERIOD, stale_after_s=5e-3,
                          on_stale="hold", initial={"s": S0}, startup_s=0.2,
                          on_error="hold"))
    home = b.add(Constant("home", S0, unit="m"))
    ext = b.add(Sum("extension", "+-", unit="m"))
    ctrl = b.add(FmuController("ctrl", fmu, CTRL_PERIOD))
    sref = b.add(Sum("s_ref", "++", unit="m"))
    tx = b.add(CanTransmit("tx_cmd", can, db, "CMD", CTRL_PERIOD, on_error="hold"))
    b.connect(rx.output("s"), ext.ins[0])
    b.connect(home.y, ext.ins[1])
    b.connect(ext.y, ctrl.in_ports["ds"])
    b.connect(ctrl.out_ports["ds_ref"], sref.ins[0])
    b.connect(home.y, sref.ins[1])
    b.connect(ctrl.out_ports["u"], tx.input("u"))
    b.connect(sref.y, tx.input("s_ref"))
    return b.build()


#: Frames the real-time phase may choose (:func:`choose_frame`), shortest first: whole
#: numbers of the 2 ms drive step.
FRAME_CHOICES = (2e-3, 4e-3, 10e-3, 20e-3)
#: The frame's own work (the frame thread's CPU time, p99) may take at most this share of
#: the frame: the rest is the room for a loaded machine's wake-up jitter and stalls.
WORK_SHARE = 0.5
#: ... and leave at least this much of the frame free: the short stalls of the machine
#: itself.  Measured on the quiet 2-vCPU VM with a C program at SCHED_FIFO 50 (mlockall,
#: pinned, nothing else running: the platform's floor, no Python): wake-ups 2-6 ms late
#: several times a minute (bursts: 5 above 2 ms in one second), and about once a minute
#: one of 25 ms; none of it shows as steal time.  A frame with 5 ms to spare runs through
#: the short ones without an overrun; a long one costs a few (the demo's budget).
STALL_ROOM_S = 5e-3
#: The probe's length (model time; the first 0.1 s, warming up, are not used).
PROBE_S = 0.6


def check_period(period_s: float) -> None:
    """Refuse a frame that is not a positive whole number of 2 ms (the drive's step)."""
    from cosim.errors import BuildError, ParameterError
    base = to_ticks(FRAME_CHOICES[0], "frame")
    try:
        ticks = to_ticks(period_s, "--period")
    except BuildError:  # not finite, not on the 1 ns grid
        ticks = -1
    if ticks <= 0 or ticks % base:
        raise ParameterError(f"flagship: the real-time frame --period {period_s:g} s must be a "
                             f"positive whole number of {FRAME_CHOICES[0] * 1e3:g} ms (the "
                             "drive's step), e.g. 0.002, 0.004 or 0.01")


class _Rig:
    """Plant (the master) and ECU on one virtual CAN channel, as the runner's model
    (:class:`PlantAndEcu`); ``log``: a bus log tapped on the plant's side."""

    def __init__(self, fmu: Any, eq: dict, db: Any, channel: str, log: Any = None,
                 compiled: bool | None = None) -> None:
        from hil.can import CanBackend
        from hil.master_rt import RealTimeMaster
        self.plant_can = CanBackend("virtual", channel, name="plant", timeout=0.0).open()
        self.ecu_can = CanBackend("virtual", channel, name="ecu", timeout=0.0).open()
        try:
            if log is not None:
                self.plant_can.add_tap(rx=log, tx=log.sent)
            self.master = plant_master(self.plant_can, db, eq, compiled)
            self.io = self.master.by_name["io"].diagram
            self.ecu = ecu_diagram(self.ecu_can, db, fmu)
            self.esim = Simulator(self.ecu, solver="rk4", dt=CTRL_PERIOD,
                                  record=["rx_pos.s", "ctrl.u", "s_ref.y"], record_every=10,
                                  compiled=compiled)
            self.esim.initialize()
            self.psim = PlantAndEcu(RealTimeMaster(self.master, record_every=RT_RECORD_EVERY),
                                    self.esim)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.plant_can.close()
        self.ecu_can.close()


def probe_frame_work(fmu: Any, eq: dict, db: Any, seconds: float = PROBE_S,
                     compiled: bool | None = None) -> np.ndarray:
    """The frame's own work measured on this machine: the frame thread's CPU time [ns] of
    each 2 ms frame of a short real-time run of plant and ECU on a private bus, with a bus
    log as in the real run (to a temporary file) and the real run's process set-up, frames
    paced as in the real run (so caches are as cold).  ``compiled``: the rig's
    (:func:`plant_master`; ``False`` for the Python loop's frame)."""
    import tempfile

    from hil import RealTimeRunner
    from hil.can import MessageLog
    from hil.verdict import Budget
    with tempfile.TemporaryDirectory(prefix="flagship-probe-") as tmp:
        log = MessageLog(Path(tmp) / "probe.asc")
        rig = None
        try:
            rig = _Rig(fmu, eq, db, f"flagship-probe-{time.monotonic_ns()}", log, compiled)
            rt = RealTimeRunner(rig.psim, period_s=FRAME_CHOICES[0], overrun="catch_up",
                                max_catch_up=None, budget=Budget.lenient(), watch=[log])
            rt.run(seconds)
            rig.esim.finish(None)
        finally:
            log.stop()
            if rig is not None:
                rig.close()
    cpu = np.asarray(rt.telemetry.cpu_ns, dtype=float)
    return cpu[int(round(0.1 / FRAME_CHOICES[0])):]


def choose_frame(work_ns: np.ndarray, choices: tuple = FRAME_CHOICES,
                 share: float = WORK_SHARE, room_s: float = STALL_ROOM_S,
                 base_s: float = FRAME_CHOICES[0]) -> dict:
    """The shortest frame in ``choices`` whose work fits with room to spare: p99 of the
    frame's CPU time at most ``share`` of the frame, and at least ``room_s`` of it free
    (the machine's short stalls, :data:`STALL_ROOM_S`).  ``work_ns`` are the probe's frames
    of ``base_s``; a frame of n of them works as long as n consecutive ones (a bound: the
    per-frame overhead is counted n times).  Returns the choice, its figures, and every
    candidate's (``"why"``: what a candidate that does not fit lacks)."""
    table = []
    for frame in choices:
        n = int(round(frame / base_s))
        m = len(work_ns) // n
        w = np.asarray(work_ns[:m * n], dtype=float).reshape(m, n).sum(axis=1)
        p50, p99 = (float(np.percentile(w, q)) / 1e3 for q in (50, 99))
        free_us = frame * 1e6 - p99
        why = []
        if p99 > share * frame * 1e6:
            why.append(f"work p99 above {100 * share:.0f} %")
        if free_us < room_s * 1e6:
            why.append(f"{free_us / 1e3:.1f} ms free, below {room_s * 1e3:g} ms")
        table.append({"period_s": frame, "p50_us": p50, "p99_us": p99,
                      "share_p99": p99 / (frame * 1e6), "free_ms": free_us / 1e3,
                      "fits": not why, "why": "; ".join(why), "frames_measured": m})
    pick = next((c for c in table if c["fits"]), table[-1])
    return {**pick, "share_goal": share, "room_s": room_s, "candidates": table}


def run_realtime(out: Path, fmu: Any, eq: dict, t_end: float, *,
                 channel: str | None = None, log_name: str = "bus.asc",
                 runner_options: dict | None = None, period_s: float | None = None,
                 budget: Any = None, hints: dict | None = None,
                 say: Any = None) -> dict:
    """Run plant (the master) and ECU in real time for ``t_end`` s; returns the figures
    (the plant's results under ``"results"``, the runner's verdict under ``"verdict"``).

    ``period_s``: the frame; ``None`` chooses it from a short probe of the frame's work on
    this machine (:func:`probe_frame_work`, :func:`choose_frame`), and ``"frame"`` in the
    figures says which and why.  ``say(text)`` gets that choice as one line."""
    from hil import RealTimeRunner
    from hil.can import CanDatabase, MessageLog
    out.mkdir(parents=True, exist_ok=True)
    dbc_path = out / "flagship.dbc"
    dbc_path.write_text(DBC)
    db = CanDatabase(dbc_path)
    work = probe_frame_work(fmu, eq, db)
    if period_s is None:
        frame = choose_frame(work)
        frame["chosen_by"] = "probe"
    else:
        check_period(period_s)
        frame = choose_frame(work, choices=(period_s,))
        frame["chosen_by"] = "--period"
    period = frame["period_s"]
    shorter = [c for c in frame["candidates"] if c["period_s"] < period]
    frame["text"] = (f"real-time frame {period * 1e3:g} ms ({frame['chosen_by']}): the "
                     f"frame's work measured p50 {frame['p50_us']:.0f} us, p99 "
                     f"{frame['p99_us']:.0f} us = {100 * frame['share_p99']:.0f} % of it, "
                     f"{frame['free_ms']:.1f} ms free (goal: at most "
                     f"{100 * WORK_SHARE:.0f} %, at least {STALL_ROOM_S * 1e3:g} ms free"
                     + (")" if frame["fits"] else f"; {frame['why']}: expect overruns, "
                        "lengthen --period or lighten the model)")
                     + "".join(f"; {c['period_s'] * 1e3:g} ms: {c['why']}" for c in shorter))
    if say is not None:
        say(frame["text"])
    channel = channel or f"flagship-{time.monotonic_ns()}"
    log = MessageLog(out / log_name)
    rig = None
    try:
        rig = _Rig(fmu, eq, db, channel, log)
        psim, esim, io, ecu = rig.psim, rig.esim, rig.io, rig.ecu
        # catch_up: frames missed under load run back to back, so the loop stays closed at
        # every 1 ms; beyond 100 missed frames they are skipped
        opts = {"overrun": "catch_up", "max_catch_up": 100, **(runner_options or {})}
        if budget is not None:
            opts["budget"] = budget
        prt = RealTimeRunner(psim, period_s=period, watch=[log], hints=hints, **opts)
        wall = time.perf_counter()
        pres = prt.run(t_end)
        wall = time.perf_counter() - wall
        eres = esim.finish(None)
        # frames still queued at the end of the run (sent after the receiver's last hit)
        left_at_plant = len(rig.plant_can.read_available())
        left_at_ecu = len(rig.ecu_can.read_available())
    finally:
        log.stop()
        if rig is not None:
            rig.close()
    ecu_us = psim.ecu_exec_us()
    tx_pos, rx_cmd = io.blocks["tx_pos"], io.blocks["rx_cmd"]
    tx_cmd, rx_pos = ecu.blocks["tx_cmd"], ecu.blocks["rx_pos"]
    pos_sent, cmd_sent = tx_pos.sent, tx_cmd.sent
    pos_read = rx_pos.stats()["received"]["POS"]
    cmd_read = rx_cmd.stats()["received"]["CMD"]
    frames = {
        "POS": {"sent": pos_sent, "read": pos_read, "left_in_queue": left_at_ecu,
                "lost": pos_sent - pos_read - left_at_ecu},
        "CMD": {"sent": cmd_sent, "read": cmd_read, "left_in_queue": left_at_plant,
                "lost": cmd_sent - cmd_read - left_at_plant},
    }
    return {
        "t_end_s": t_end, "wall_s": wall, "channel": channel,
        "telemetry": prt.telemetry.as_dict(), "telemetry_obj": prt.telemetry,
        "ecu_exec_us": ecu_us, "frame_period_s": period, "frame": frame,
        "frames": frames,
        "stale_events": {"CMD": rx_cmd.stats()["stale_events"]["CMD"],
                         "POS": rx_pos.stats()["stale_events"]["POS"]},
        "bridge_errors": {n: blk.stats()["errors"] for n, blk in
                          (("tx_pos", tx_pos), ("rx_cmd", rx_cmd), ("tx_cmd", tx_cmd),
                           ("rx_pos", rx_pos))},
        "fmu_steps": ecu.blocks["ctrl"].steps,
        "e2e_cmd": rx_cmd.stats()["e2e"].get("CMD"),
        "plant": {"master": f"Jacobi, H = {MACRO_STEP * 1e3:g} ms: mech RK4 "
                            f"{MECH_DT * 1e3:g} ms every {MECH_RATE}. step, hyd RK4 "
                            f"{HYD_DT * 1e3:g} ms, drive RK4 {DRIVE_DT * 1e3:g} ms every "
                            f"{DRIVE_RATE}. step, io (CAN bridges)",
                  "macro_steps": pres.diagnostics.get("macro_steps"),
                  "subsystem_steps": pres.diagnostics.get("subsystem_steps")},
        "verdict": prt.verdict, "setup": prt.setup,
        "bus_log": str(out / log_name), "bus_log_frames": log.count, "dbc": str(dbc_path),
        "results": pres, "ecu_results": eres,
    }


def tracking(t: np.ndarray, s: np.ndarray, s_ref: np.ndarray, skip_s: float = 0.0) -> dict:
    """Max and RMS of s - s_ref after ``skip_s``."""
    m = t >= skip_s
    e = np.asarray(s)[m] - np.asarray(s_ref)[m]
    return {"max_m": float(np.max(np.abs(e))), "rms_m": float(np.sqrt(np.mean(e * e)))}
