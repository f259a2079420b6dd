"""The flagship's real-time phase: the plant in the real-time runner, the controller FMU
on an ECU node, the two talking only over a python-can ``virtual`` bus.

::

    one RealTimeRunner frame (1 ms): plant first (RK4 1 ms), then the ECU task
    boom + hydraulics + drive --tx_pos (POS)--> bus --> rx_pos --> FMU (CS) --+
    valve.u <---------------- rx_cmd (CMD) <-- bus <-- tx_cmd <---------------+

python-can's ``virtual`` interface connects buses of one process only, so the ECU is a
second Simulator in this process, advanced in each real-time frame right after the plant
(the runner's ``on_frame`` hook), with its own diagram, its own
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

BO_ 128 CMD: 4 CTRL
 SG_ u : 0|16@1- (5e-05,0) [-1.6384|1.63835] "" PLANT
 SG_ s_ref : 16|16@1+ (1e-05,0) [0|0.65535] "m" PLANT

CM_ BO_ 256 "Actuator length, speed, supply pressure and pump speed from the plant, 1 ms.";
CM_ BO_ 128 "Spool command and position set-point from the controller, 1 ms.";
"""

#: Plant period (one RK4 step of 1 ms per frame) and the ECU's.
PLANT_PERIOD = 1e-3
PLANT_DT = 1e-3
#: What the real-time plant records (every 10 ms).
RT_RECORD = ["actuator.s", "actuator.sd", "supply.p", "motor.speed", "motor.current",
             "rx_cmd.u", "rx_cmd.s_ref", "rx_cmd.ok"]


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
    """The monolithic plant with the controller replaced by two CAN bridges."""
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


def run_realtime(out: Path, fmu: Any, eq: dict, t_end: float, *,
                 channel: str | None = None, log_name: str = "bus.asc",
                 runner_options: dict | None = None) -> dict:
    """Run plant and ECU in real time for ``t_end`` s; returns the figures (and the
    plant's results under ``"results"``)."""
    from hil import RealTimeRunner
    from hil.can import CanBackend, CanDatabase, MessageLog
    out.mkdir(parents=True, exist_ok=True)
    dbc_path = out / "flagship.dbc"
    dbc_path.write_text(DBC)
    db = CanDatabase(dbc_path)
    channel = channel or f"flagship-{time.monotonic_ns()}"
    plant_can = CanBackend("virtual", channel, name="plant", timeout=0.0).open()
    ecu_can = CanBackend("virtual", channel, name="ecu", timeout=0.0).open()
    log = MessageLog(out / log_name)
    plant_can.add_tap(rx=log, tx=log.sent)
    try:
        plant = plant_diagram(plant_can, db, eq)
        ecu = ecu_diagram(ecu_can, db, fmu)
        psim = Simulator(plant, solver="rk4", dt=PLANT_DT, record=RT_RECORD, record_every=10)
        esim = Simulator(ecu, solver="rk4", dt=CTRL_PERIOD,
                         record=["rx_pos.s", "ctrl.u", "s_ref.y"], record_every=10)
        esim.initialize()
        ecu_exec: list[int] = []

        def ecu_frame(rt: Any, k: int) -> None:
            """The ECU's task, in the same frame after the plant: it reads the bus, steps
            the FMU and sends its command (nothing else links it to the plant)."""
            w = time.perf_counter_ns()
            esim.advance_to_ticks(psim.ctx.ticks)
            ecu_exec.append(time.perf_counter_ns() - w)

        # catch_up: frames missed under load run back to back (each with the ECU's task),
        # so the loop stays closed at every 1 ms; beyond 250 missed frames they are skipped
        opts = {"overrun": "catch_up", "max_catch_up": 250, **(runner_options or {})}
        prt = RealTimeRunner(psim, period_s=PLANT_PERIOD, on_frame=ecu_frame, **opts)
        wall = time.perf_counter()
        pres = prt.run(t_end)
        wall = time.perf_counter() - wall
        eres = esim.finish(None)
        # frames still queued at the end of the run (sent after the receiver's last hit)
        left_at_plant = len(plant_can.read_available())
        left_at_ecu = len(ecu_can.read_available())
    finally:
        log.stop()
        plant_can.close()
        ecu_can.close()
    ecu_us = np.array(ecu_exec, dtype=float) / 1e3
    tx_pos, rx_cmd = plant.blocks["tx_pos"], plant.blocks["rx_cmd"]
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
        "ecu_exec_us": {"p50": float(np.percentile(ecu_us, 50)),
                        "p99": float(np.percentile(ecu_us, 99)), "max": float(ecu_us.max())},
        "frames": frames,
        "stale_events": {"CMD": rx_cmd.stats()["stale_events"]["CMD"],
                         "POS": rx_pos.stats()["stale_events"]["POS"]},
        "bridge_errors": {n: blk.stats()["errors"] for n, blk in
                          (("tx_pos", tx_pos), ("rx_cmd", rx_cmd), ("tx_cmd", tx_cmd),
                           ("rx_pos", rx_pos))},
        "fmu_steps": ecu.blocks["ctrl"].steps,
        "bus_log": str(out / log_name), "bus_log_frames": log.count, "dbc": str(dbc_path),
        "results": pres, "ecu_results": eres,
    }


def tracking(t: np.ndarray, s: np.ndarray, s_ref: np.ndarray, skip_s: float = 0.0) -> dict:
    """Max and RMS of s - s_ref after ``skip_s``."""
    m = t >= skip_s
    e = np.asarray(s)[m] - np.asarray(s_ref)[m]
    return {"max_m": float(np.max(np.abs(e))), "rms_m": float(np.sqrt(np.mean(e * e)))}
