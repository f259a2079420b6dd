"""An XCP slave attached to a running controller: memory map, slave, bus, A2L, frame hook.

:class:`XcpEcu` ties the pieces to a :class:`~cosim.simulator.Simulator`:

* **commands** are served by the port's thread (:mod:`hil.xcp.can_port`);
* **calibration writes** go to the real-time runner's
  :meth:`~hil.runner.RealTimeRunner.set_parameter` once :meth:`XcpEcu.use_runner` was
  called (the value takes effect at the start of the next frame), else to a queue that
  :meth:`XcpEcu.before_frame` applies (a run stepped by hand, lock-step tests);
* **the DAQ event** is :meth:`XcpEcu.after_frame`: at the end of each controller frame
  (the runner's ``on_frame``, :meth:`XcpEcu.on_frame`) the measurements are sampled
  and the running lists' DTOs sent, with the frame's simulated time as timestamp.  Its
  cost is in the frame (measured by :attr:`XcpEcu.frame_cost_ns`: the sampling of the
  map plus one ``bus.send`` per DTO, about 10-30 us for one list on a ``virtual`` bus).

:func:`acc_ecu_xcp` is the example ACC ECU's map: its time gap calibratable, its
internal signals measurable.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .a2l import write_a2l
from .can_port import CMD_ID, RES_ID, XcpCanPort, open_bus
from .memory import MemoryMap
from .slave import XcpSlave


class XcpEcu:
    """An XCP-on-CAN slave for ``sim`` (module docstring).

    ``memory``: the map; ``event_period_s``: the controller's cycle (the event channel);
    ``bus``: an open python-can bus, or ``interface`` and ``channel`` (and
    ``bus_options``, python-can's keywords; ``udp_multicast``: hop limit 0 unless given)
    to open one.
    ``a2l``: write the A2L file there (its stem is the name GET_ID(1) answers).
    """

    def __init__(self, memory: MemoryMap, event_period_s: float, *, bus: Any = None,
                 interface: str | None = None, channel: str | None = None,
                 cmd_id: int = CMD_ID, res_id: int = RES_ID, a2l: Any = None,
                 event_name: str = "controller", bus_options: dict | None = None) -> None:
        self.memory = memory
        self.period = float(event_period_s)
        self.slave = XcpSlave(memory, self.period, event_name)
        own = bus is None
        if own:
            if interface is None or channel is None:
                raise ValueError("XcpEcu: give an open python-can bus, or interface= and "
                                 "channel= to open one")
            opts = dict(bus_options or {})
            if interface == "udp_multicast":  # as hil.can: nothing leaves the host
                opts.setdefault("hop_limit", 0)
            bus = open_bus(interface, channel, **opts)
        self.port = XcpCanPort(self.slave, bus, cmd_id=cmd_id, res_id=res_id, own_bus=own)
        self.a2l_path = None
        if a2l is not None:  # GET_ID(1) answers the file's name
            memory.a2l_name = Path(a2l).stem.encode("ascii")
            self.a2l_path = write_a2l(Path(a2l), memory, self.period, cmd_id=cmd_id,
                                      res_id=res_id, event_name=event_name)
        self.frames = 0
        self.frame_cost_ns: list[int] = []  # the last frames' XCP cost (bounded)
        self._runner = None

    def use_runner(self, runner: Any) -> None:
        """Calibration writes through ``runner.set_parameter`` (next frame)."""
        self._runner = runner
        self.memory.apply = runner.set_parameter

    def before_frame(self) -> None:
        """Apply the writes queued since the last frame (without a runner)."""
        if self._runner is None:
            self.memory.apply_pending()

    def after_frame(self, t_s: float | None = None) -> int:
        """The DAQ event at the end of a frame: sample, send the DTOs; their count."""
        t0 = time.perf_counter_ns()
        self.memory.refresh()
        n = self.port.send_event(self.memory.sim.ctx.time if t_s is None else t_s)
        self.frames += 1
        cost = self.frame_cost_ns
        cost.append(time.perf_counter_ns() - t0)
        if len(cost) > 100_000:
            del cost[:50_000]
        return n

    def on_frame(self, runner: Any, k: int) -> None:
        """The runner's ``on_frame`` hook."""
        self.after_frame()

    def chain(self, other: Any) -> Any:
        """An ``on_frame`` that calls ``other`` (e.g. the lock-step follower) and then
        this slave's event; ``other`` None: :meth:`on_frame` itself."""
        if other is None:
            return self.on_frame

        class _Both:
            needs_every_frame = getattr(other, "needs_every_frame", False)

            def __call__(_, runner: Any, k: int) -> None:  # noqa: N805
                other(runner, k)
                self.after_frame()
        return _Both()

    def stats(self) -> dict:
        import statistics
        c = self.frame_cost_ns
        out = dict(self.slave.stats(), frames=self.frames,
                   send_errors=self.port.send_errors,
                   port_error=repr(self.port.error) if self.port.error else None)
        if c:
            s = sorted(c)
            out["frame_cost_us"] = {"median": statistics.median(s) / 1e3,
                                    "p99": s[int(0.99 * (len(s) - 1))] / 1e3,
                                    "max": s[-1] / 1e3}
        return out

    def close(self) -> None:
        self.port.close()


def acc_ecu_xcp(sim: Any, period_s: float, *, bus: Any = None,
                interface: str | None = None, channel: str | None = None,
                a2l: Any = None, **kw: Any) -> XcpEcu:
    """The example ACC ECU's slave (``examples/acc_ecu.py``): :func:`acc_memory_map`."""
    name = Path(a2l).stem if a2l is not None else "acc_ecu"
    return XcpEcu(acc_memory_map(sim, name), period_s, bus=bus, interface=interface,
                  channel=channel, a2l=a2l, **kw)


def acc_memory_map(sim: Any, a2l_name: str = "acc_ecu") -> MemoryMap:
    """The ACC ECU's map: ``acc.time_gap_s`` calibratable within ISO 15622's [0.8, 2.2] s
    (the controller's own check also applies); measured: the jerk-limited acceleration
    request ``acc.a_prev`` (the state the law keeps: the ``accel_request`` of the last
    hit), the brake and hold modes, the commands sent and the inputs received."""
    from blocks.controllers import iso15622 as iso
    params = [{"path": "acc.time_gap_s", "unit": "s", "lo": iso.MIN_TIME_GAP_S,
               "hi": iso.MAX_TIME_GAP_S, "description": "time gap of the spacing policy"}]
    meas = [
        {"path": "acc.a_prev", "unit": "m/s^2",
         "description": "acceleration request a_k after limits (state)"},
        {"path": "acc.braking", "unit": "1", "description": "brake mode (state)"},
        {"path": "acc.hold", "unit": "1", "description": "standstill hold (state)"},
        {"path": "acc.throttle", "unit": "1", "description": "throttle request"},
        {"path": "acc.brake_torque", "unit": "N*m", "description": "brake torque request"},
        {"path": "rx.range", "unit": "m", "description": "radar range received"},
        {"path": "rx.range_rate", "unit": "m/s", "description": "radar range rate received"},
        {"path": "rx.speed", "unit": "m/s", "description": "own speed received"},
        {"path": "rx.ok", "unit": "1", "description": "inputs fresh"},
    ]
    return MemoryMap(sim, params, meas, identity="cosim ACC ECU (examples/acc_ecu.py)",
                     a2l_name=a2l_name)
