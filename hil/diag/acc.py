r"""Diagnostics of the example ACC controller (``examples/acc_ecu.py``): monitors, DTCs, DIDs.

:class:`AccMonitor` is a block in the ECU's diagram, sampled with the controller; it reads
the receive bridge's signals and freshness, the controller's command and the CAN
backend's link state, and reports each monitor's result to a
:class:`~hil.diag.dtc.FaultMemory` once per period.  :func:`serve` answers UDS on ISO-TP
(:class:`~hil.diag.server.UdsServer`) from that memory and the monitor's live values.

DTCs (SAE J2012 number and failure type byte; "runs" is when a result is reported)

==========  ========  =====================================  ==================================
DTC         code      fails when                             runs
==========  ========  =====================================  ==================================
0xC00188    U0001-88  the CAN link is lost (the backend's    every period
                      state is not open: bus-off, reconnect)
0xC10087    U0100-87  EGO is stale (older than the ECU's     after RADAR and EGO were both fresh
                      staleness limit)                       once, while the link is up
0xC23587    U0235-87  RADAR is stale                         as U0100-87
0xC40129    U0401-29  EGO's speed outside :data:`SPEED_M_S`  while EGO is fresh
                      or not finite, gear ratio negative or
                      not finite
0xC43529    U0435-29  RADAR's range rate outside             while RADAR is fresh
                      :data:`RANGE_RATE_M_S`, or with a
                      target its range outside
                      :data:`RANGE_M`, or either not finite
0x057929    P0579-29  the set speed (EGO) outside            while EGO is fresh
                      :data:`SET_SPEED_M_S` (the ACC's
                      settings) or not finite
0x060664    P0606-64  the controller's command outside       while the controller runs (its
                      throttle [0, 1], brake torque          inputs fresh)
                      [0, 20000] N m (ACC_CMD's DBC range)
                      or not finite
==========  ========  =====================================  ==================================

The missing-message monitors do not run while the link is down (a bus-off would
otherwise also store both of them) nor before the inputs were first fresh (the ECU waits
for the plant).  A monitor records; it does not change the controller (a stale input
already stops the command: the receive bridge's ``ok``; an out-of-range value goes on to
the controller as received).

Data identifiers (ReadDataByIdentifier; big-endian unsigned, ``raw * scale`` is the value;
0xFFFF: not a number)

======  =====  ======  ================================================  =================
DID     bytes  scale   value                                             NRC 0x22 while
======  =====  ======  ================================================  =================
0xF195  16     -       software version (ASCII, :data:`SOFTWARE_VERSION`)
0xF186  1      -       active session (1 default, 3 extended)
0x0100  2      0.01    set speed [m/s]                                   EGO stale
0x0101  2      0.001   time gap [s] (the controller's parameter)
0x0102  2      0.01    ego speed [m/s]                                   EGO stale
0x0103  2      0.01    radar range [m]                                   RADAR stale
0x0104  2      0.001   throttle command [1]
0x0105  2      0.5     brake torque command [N m]
0x0106  1      -       bit 0 RADAR fresh, 1 EGO fresh, 2 controller
                       running, 3 link up
======  =====  ======  ================================================  =================

ReadDTCInformation 0x04 gives a DTC's snapshot (record 0x01, stored at the first failure
since the clear) as the DIDs :data:`SNAPSHOT_DIDS`: set speed, ego speed, range, throttle
and brake torque at that period.

:func:`client_config` gives udsoncan the codecs of these identifiers (physical values).

Limitations: the memory lives in the ECU process (one operation cycle per run, no
non-volatile storage); a monitor's result is its period's (no debouncing beyond the
staleness limit); the values are those the controller read, after the receive bridge's
DBC clamp (a raw value beyond the DBC's range arrives clamped to it).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from cosim import Block

from ..backend import BackendState
from .dtc import FaultMemory
from .uds import ConditionsNotCorrect, DataIdentifier, UdsHandler

__all__ = ["AccMonitor", "DTCS", "DIDS", "add_monitor", "serve", "client_config", "evaluate",
           "acc_dids", "snapshot_dids", "SNAPSHOT_DIDS", "BUS_OFF", "EGO_MISSING",
           "RADAR_MISSING", "EGO_INVALID",
           "RADAR_INVALID", "SET_SPEED_INVALID", "COMMAND_INVALID", "SOFTWARE_VERSION",
           "RANGE_M", "RANGE_RATE_M_S", "SPEED_M_S", "SET_SPEED_M_S", "THROTTLE",
           "BRAKE_TORQUE_NM"]

BUS_OFF = 0xC00188
EGO_MISSING = 0xC10087
RADAR_MISSING = 0xC23587
EGO_INVALID = 0xC40129
RADAR_INVALID = 0xC43529
SET_SPEED_INVALID = 0x057929
COMMAND_INVALID = 0x060664
#: the DTCs and what they mean (module docstring)
DTCS = {BUS_OFF: "CAN link lost (bus-off)", EGO_MISSING: "EGO message missing",
        RADAR_MISSING: "RADAR message missing", EGO_INVALID: "EGO data invalid",
        RADAR_INVALID: "RADAR data invalid", SET_SPEED_INVALID: "set speed out of range",
        COMMAND_INVALID: "command out of range"}

#: plausible ranges [lo, hi] of the monitored values
RANGE_M = (0.0, 250.0)
RANGE_RATE_M_S = (-100.0, 100.0)
SPEED_M_S = (0.0, 70.0)
SET_SPEED_M_S = (0.0, 50.0)
THROTTLE = (0.0, 1.0)
BRAKE_TORQUE_NM = (0.0, 20000.0)

SOFTWARE_VERSION = "COSIM-ACC 1.0.0"
#: DID -> (bytes, scale, live value's key, message whose staleness makes it unavailable)
DIDS = {0x0100: (2, 0.01, "set_speed", "EGO"), 0x0101: (2, 0.001, "time_gap", None),
        0x0102: (2, 0.01, "speed", "EGO"), 0x0103: (2, 0.01, "range", "RADAR"),
        0x0104: (2, 0.001, "throttle", None), 0x0105: (2, 0.5, "brake_torque", None)}
STATUS_DID, VERSION_DID = 0x0106, 0xF195
#: the DIDs of a snapshot (ReadDTCInformation 0x04, record 0x01: the first failure)
SNAPSHOT_DIDS = (0x0100, 0x0102, 0x0103, 0x0104, 0x0105)

#: the monitor's inputs (the receive bridge's ports, the controller's command)
INPUTS = {"range": "m", "range_rate": "m/s", "target_valid": "1", "speed": "m/s",
          "set_speed": "m/s", "gear_ratio": "1", "RADAR_ok": "1", "EGO_ok": "1", "ok": "1",
          "throttle": "1", "brake_torque": "N*m"}


def _out(v: float, rng: tuple[float, float]) -> bool:
    """Not finite or outside ``rng``."""
    return not (rng[0] <= v <= rng[1])  # NaN compares False


def evaluate(v: dict, link_up: bool, seen: bool) -> list[tuple[int, bool | None]]:
    """Each DTC's result for the values ``v`` (True failed, False passed, None: the
    monitor does not run now); the rules of the module docstring."""
    radar, ego = v["RADAR_ok"] >= 0.5, v["EGO_ok"] >= 0.5
    missing = seen and link_up
    radar_bad = None
    if radar:
        radar_bad = _out(v["range_rate"], RANGE_RATE_M_S) or (
            v["target_valid"] >= 0.5 and _out(v["range"], RANGE_M))
    ego_bad = None
    if ego:
        ego_bad = _out(v["speed"], SPEED_M_S) or not v["gear_ratio"] >= 0.0 \
            or math.isinf(v["gear_ratio"])
    cmd_bad = None
    if v["ok"] >= 0.5:
        cmd_bad = _out(v["throttle"], THROTTLE) or _out(v["brake_torque"], BRAKE_TORQUE_NM)
    return [(BUS_OFF, not link_up),
            (EGO_MISSING, (not ego) if missing else None),
            (RADAR_MISSING, (not radar) if missing else None),
            (EGO_INVALID, ego_bad), (RADAR_INVALID, radar_bad),
            (SET_SPEED_INVALID, _out(v["set_speed"], SET_SPEED_M_S) if ego else None),
            (COMMAND_INVALID, cmd_bad)]


class AccMonitor(Block):
    """The ACC ECU's monitors (module docstring), sampled every ``period_s``.

    Parameters
    ----------
    name : str
    period_s : float
        The controller's period.
    memory : FaultMemory, optional
        Default: one with :data:`DTCS`, its snapshot times in simulated time.
    link : backend, optional
        Its ``state`` is the link (:class:`hil.backend.BackendState`); None: always up.
    time_gap : cosim.block.Parameter, optional
        The controller's ``time_gap_s`` parameter (read for DID 0x0101).

    Ports: ``in`` one per name of :data:`INPUTS`; no outputs.
    """

    kind = "AccMonitor"

    def __init__(self, name: str, period_s: float, memory: FaultMemory | None = None, *,
                 link: Any = None, time_gap: Any = None) -> None:
        super().__init__(name)
        self.memory = memory if memory is not None else FaultMemory(DTCS, clock=self.now)
        if not isinstance(self.memory, FaultMemory):
            raise TypeError(f"AccMonitor '{name}': memory must be a FaultMemory, got "
                            f"{memory!r}")
        self.link = link
        self.time_gap = time_gap
        self.ports = {n: self.declare_input(n, unit=u) for n, u in INPUTS.items()}
        #: the last values read (one dict, replaced each period: the server reads it)
        self.live: dict = {**{n: math.nan for n in INPUTS}, "time_gap": math.nan,
                           "link_up": 0.0, "t": 0.0, "RADAR_ok": 0.0, "EGO_ok": 0.0,
                           "ok": 0.0}
        self.seen = False
        self.updates = 0
        self.cost_ns = {"total": 0, "max": 0}
        self.declare_periodic_update(float(period_s), self._update)

    def now(self) -> float:
        """The simulated time of the last period."""
        return self.live["t"]

    def _snapshot(self) -> dict:
        v = self.live
        return {k: v[k] for k in ("speed", "set_speed", "range", "range_rate", "throttle",
                                  "brake_torque", "RADAR_ok", "EGO_ok", "link_up")}

    def _update(self, ctx: Any) -> None:
        t0 = time.perf_counter_ns()
        read = ctx.input
        v = {n: float(read(p)) for n, p in self.ports.items()}
        link = self.link
        link_up = link is None or link.state is BackendState.OPEN
        v["link_up"] = float(link_up)
        v["t"] = ctx.time
        v["time_gap"] = float(ctx.param(self.time_gap)) if self.time_gap is not None \
            else math.nan
        self.live = v
        if v["RADAR_ok"] >= 0.5 and v["EGO_ok"] >= 0.5:
            self.seen = True
        report = self.memory.report
        for dtc, failed in evaluate(v, link_up, self.seen):
            if failed is not None:
                report(dtc, failed, self._snapshot)
        self.updates += 1
        dt = time.perf_counter_ns() - t0
        c = self.cost_ns
        c["total"] += dt
        if dt > c["max"]:
            c["max"] = dt

    def cost(self) -> dict:
        """The monitors' cost per period (what the diagnostics add to the frame) [us]."""
        n = max(self.updates, 1)
        return {"updates": self.updates, "mean_us": self.cost_ns["total"] / n / 1e3,
                "max_us": self.cost_ns["max"] / 1e3}


def _raw(value: float, size: int, scale: float) -> bytes:
    top = (1 << (8 * size)) - 1
    if not math.isfinite(value):
        return top.to_bytes(size, "big")
    return min(max(round(value / scale), 0), top - 1).to_bytes(size, "big")


def acc_dids(monitor: AccMonitor) -> list[DataIdentifier]:
    """The data identifiers of the module docstring, read from ``monitor.live``."""
    def reader(key: str, size: int, scale: float, message: str | None) -> Callable:
        def read() -> bytes:
            v = monitor.live
            if message is not None and not v[f"{message}_ok"] >= 0.5:
                raise ConditionsNotCorrect(f"{message} is stale")
            return _raw(v[key], size, scale)
        return read

    def status() -> bytes:
        v = monitor.live
        bits = [v["RADAR_ok"] >= 0.5, v["EGO_ok"] >= 0.5, v["ok"] >= 0.5, v["link_up"] >= 0.5]
        return bytes([sum(1 << i for i, b in enumerate(bits) if b)])

    version = SOFTWARE_VERSION.encode("ascii").ljust(16)
    out = [DataIdentifier(VERSION_DID, 16, lambda: version, "software version"),
           DataIdentifier(STATUS_DID, 1, status, "status")]
    out += [DataIdentifier(d, size, reader(key, size, scale, msg), key)
            for d, (size, scale, key, msg) in DIDS.items()]
    return out


def snapshot_dids(snapshot: dict) -> list[tuple[int, bytes]]:
    """A stored snapshot as the data identifiers :data:`SNAPSHOT_DIDS` (as 0x22 reads
    them; NaN where the snapshot lacks a value)."""
    out = []
    for d in SNAPSHOT_DIDS:
        size, scale, key, _ = DIDS[d]
        out.append((d, _raw(float(snapshot.get(key, math.nan)), size, scale)))
    return out


def add_monitor(builder: Any, rx: Any, acc: Any, link: Any, period_s: float,
                memory: FaultMemory | None = None, name: str = "diag") -> AccMonitor:
    """Add an :class:`AccMonitor` to the ECU's diagram ``builder``, fed by the receive
    bridge ``rx`` and the controller ``acc``; ``link``: the CAN backend."""
    mon = builder.add(AccMonitor(name, period_s, memory, link=link,
                                 time_gap=getattr(acc, "time_gap", None)))
    for n in INPUTS:
        src = acc.output(n) if n in ("throttle", "brake_torque") else rx.output(n)
        builder.connect(src, mon.input(n))
    return mon


def serve(monitor: AccMonitor, interface: str, channel: str, **options: Any) -> Any:
    """A started :class:`~hil.diag.server.UdsServer` on the monitor's memory and DIDs
    (``options``: the server's ``request_id``, ``response_id``, ``bus_options``)."""
    from .server import UdsServer
    handler = UdsHandler(monitor.memory, acc_dids(monitor), snapshot_dids=snapshot_dids)
    return UdsServer(handler, interface, channel, **options).start()


def client_config() -> dict:
    """udsoncan client settings with the codecs of the DIDs (physical values: floats,
    the version a str, the session and status ints; NaN for 0xFFFF)."""
    from .client import import_udsoncan
    udsoncan = import_udsoncan()

    class Scaled(udsoncan.DidCodec):
        def __init__(self, size: int, scale: float) -> None:
            self.size, self.scale = size, scale

        def encode(self, value: Any) -> bytes:
            return _raw(float(value), self.size, self.scale)

        def decode(self, data: bytes) -> float:
            raw = int.from_bytes(data, "big")
            return math.nan if raw == (1 << (8 * self.size)) - 1 else raw * self.scale

        def __len__(self) -> int:
            return self.size

    dids: dict[int, Any] = {d: Scaled(size, scale) for d, (size, scale, _, _) in DIDS.items()}
    dids[VERSION_DID] = udsoncan.AsciiCodec(16)
    dids[STATUS_DID] = "B"
    dids[0xF186] = "B"
    return {"data_identifiers": dids}
