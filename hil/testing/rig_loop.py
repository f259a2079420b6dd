"""The loop behind a :class:`~hil.testing.rig.Rig`: the buses, the plant, the controller
and the runner that steps them, built from a :class:`~hil.testing.rigfile.RigSpec`.

``mode = "virtual"`` (:class:`VirtualLoop`): one process, no wall clock.  Every bus is a
python-can ``virtual`` channel of the rig's own (whatever interface the file names), the
plant runs under :class:`hil.runner.RealTimeRunner` on a :class:`hil.runner.VirtualClock`
and an in-process controller is stepped in lock-step from the plant's frames, as
``examples/acc_hil.offline_lockstep`` does: its hit at 0 first, then per plant frame the
plant, and on the controller's grid the controller (its command acts from the plant's next
frame).  Deterministic: two runs give the same samples.

``mode = "realtime"`` (:class:`RealtimeLoop`): the plant paced by the wall clock
(:class:`~hil.runner.MonotonicClock`), the controller a process (``[controller] kind =
"process"``: a :class:`hil.peer.Peer`, its own process group, ended with the rig) or a
real device on the bus (``kind = "device"``: nothing started).  ``channel = "auto"`` on
``udp_multicast`` is a multicast group of the rig's own.

Each bus of the plant is a :class:`hil.faults.FaultyBackend` on the plant's clock (the
rig's fault steps add and end its faults) around the wire, and a :class:`BusTap` on the
wire keeps every frame (raw, with the plant's time) and the last decoded value of every
DBC signal.

**Services of an in-process controller** (``[controller] services = ["module:function",
...]``, a virtual rig only): each is called once the controller's Simulator exists, as
``function(ecu)`` with an :class:`EcuView` (the diagram, the Simulator, the bus's
interface and channel, the period, the rig's work folder); what it returns may have
``before_frame()`` (called before each of the controller's hits), ``after_frame()``
(after it) and ``close()`` (with the rig).  That is how the virtual rig's ECU serves UDS
(a server thread on the rig's bus) and XCP (the slave: calibration writes applied before
a hit, the DAQ event after it), as the ECU process does on a real-time rig.

Each bus's DBC is checked against the CAN ids of the session frames and of the parts
configured (``[uds]``: 0x7E0/0x7E8, ``[xcp]``: 0x6F0/0x6F1; :mod:`hil.testing.can_ids`):
a collision is a :class:`~hil.testing.rigfile.RigFileError` naming both.

The rig's **work folder** (:attr:`_Loop.work_dir`, a temporary folder removed with the
rig) is ``{work_dir}`` in a process's command and in the ``[uds]``/``[xcp]`` args (e.g.
the A2L file the controller writes and the XCP client reads).

**Between two runs** a real-time rig holds its buses (:class:`BusHold`, ``[controller]
hold_bus = true`` by default): the plant does not run, but its frames go on, each id's
last data at its last interval, through the plant's faults at the paused instant (a
restbus that holds the last values, as a HIL rig's model keeps the bus alive while the
test steps), from the run's last frame to the next run's first.  So a controller
process, which runs on meanwhile, does not see its inputs go stale because the test
reads its fault memory or calibrates it; its commands meanwhile are read when the next
run starts.  A virtual rig needs none: its controller is stepped with the plant.  The
rig's real-time runs use ``gc_mode = "disable"`` unless ``[controller] runner`` says
otherwise (the default "freeze" collects at each run's start, holding the GIL, and so
the hold's thread, for ~0.1 s).

Limitations: between two ``run`` calls of a real-time rig the plant waits (its held
frames are its last values, not a model's); the tap on a ``udp_multicast`` wire turns its
receive fast path off; one DBC per bus; serial ports and DAQ channels are refused.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import time
from typing import Any

from cosim import Simulator
from cosim.time import TICKS_PER_SECOND

from ..can.codec import MessageCodec
from .rigfile import RigFileError, RigSpec

__all__ = ["BusTap", "RigIO", "EcuView", "VirtualLoop", "RealtimeLoop", "make_loop",
           "load_function", "fill"]


def fill(text: str, values: dict) -> str:
    """``{key}`` placeholders of ``values`` replaced in ``text`` (others left alone)."""
    for k, v in values.items():
        text = text.replace("{" + k + "}", v)
    return text


def load_function(spec: str, where: str) -> Any:
    """``"module:function"`` -> the function (an error names the rig file's key)."""
    mod, _, fn = spec.partition(":")
    try:
        m = importlib.import_module(mod)
    except ImportError as e:
        raise RigFileError(f"{where}: cannot import module {mod!r}: {e} (is the project's "
                           "root on the Python path?)") from None
    try:
        return getattr(m, fn)
    except AttributeError:
        raise RigFileError(f"{where}: module {mod!r} has no {fn!r}") from None


class BusTap:
    """Every frame on one wire (read or written), with the plant's time: the raw frames
    and the last decoded value of each DBC signal (NaN until its message was seen)."""

    def __init__(self, name: str, db: Any, clock: Any, channel: int = 0) -> None:
        self.name, self.db, self.clock, self.channel = name, db, clock, channel
        self.frames: list = []  # (t, id, data, extended, channel, is_rx)
        self.latest: dict[str, dict[str, float]] = {
            m: {s: math.nan for s in db.signals(m)} for m in db.message_names}
        self.decoded: dict[str, list] = {m: [] for m in db.message_names}  # (t, values)
        #: ids (``id(msg)``) of frames not to keep: a real-time rig's held frames
        self.ignore: set[int] = set()
        self._by_id = {(int(db.message(m).frame_id), bool(db.message(m).is_extended_frame)):
                       db.message(m) for m in db.message_names}
        self._decode = {m.name: MessageCodec(m).decode for m in self._by_id.values()}

    def _on(self, msg: Any, rx: bool) -> None:
        if getattr(msg, "is_error_frame", False) or id(msg) in self.ignore:
            return
        t = self.clock()
        data = bytes(msg.data)
        self.frames.append((t, int(msg.arbitration_id), data, bool(msg.is_extended_id),
                            self.channel, rx))
        m = self._by_id.get((int(msg.arbitration_id), bool(msg.is_extended_id)))
        if m is None or len(data) != m.length:
            return
        try:
            values = self._decode[m.name](data)  # decode_simple's values (hil.can.codec)
        except Exception:  # noqa: BLE001 - a frame that does not decode is kept raw only
            return
        self.latest[m.name].update({k: float(v) for k, v in values.items()})
        self.decoded[m.name].append((t, dict(values)))

    def rx(self, msg: Any) -> None:
        self._on(msg, True)

    def tx(self, msg: Any) -> None:
        self._on(msg, False)


class RigIO:
    """What the plant's and the controller's factories get: ``bus(name)`` (the backend,
    with fault injection on the plant's side), ``db(name)`` (its
    :class:`~hil.can.CanDatabase`), ``period_s``."""

    def __init__(self, buses: dict, dbs: dict, period_s: float) -> None:
        self._buses, self._dbs, self.period_s = buses, dbs, period_s

    def _get(self, table: dict, name: str | None, what: str) -> Any:
        if name is None and len(table) == 1:
            return next(iter(table.values()))
        try:
            return table[name]
        except KeyError:
            raise RigFileError(f"the rig has no bus {name!r}; buses: "
                               f"{', '.join(table) or 'none'} ([buses.<name>])") from None

    def bus(self, name: str | None = None) -> Any:
        return self._get(self._buses, name, "bus")

    def db(self, name: str | None = None) -> Any:
        return self._get(self._dbs, name, "DBC")


class EcuView:
    """What a service of an in-process controller gets (module docstring): ``diagram``,
    ``sim``, ``period_s``, ``interface`` and ``channel`` of the bus ``bus_name`` (the
    rig's own virtual channel), ``work_dir``."""

    def __init__(self, diagram: Any, sim: Any, period_s: float, interface: str,
                 channel: str, work_dir: str, bus_name: str) -> None:
        self.diagram, self.sim, self.period_s = diagram, sim, period_s
        self.interface, self.channel, self.work_dir = interface, channel, work_dir
        self.bus_name = bus_name


def _dbc(spec: RigSpec, text: str) -> Any:
    from ..can import ACC_DBC, CanDatabase
    if text == "acc":
        return CanDatabase(ACC_DBC)
    p = (spec.folder / text) if not os.path.isabs(text) else text
    if not os.path.isfile(p):
        raise RigFileError(f"rig file {spec.path}: DBC {text!r}: no such file ({p}); give a "
                           "path relative to the rig file, or \"acc\" for the bundled one")
    return CanDatabase(p)


def _random_group() -> str:
    """A multicast group of the rig's own (hop limit 0 in :class:`hil.can.CanBackend`)."""
    import random
    rnd = random.Random()
    return f"239.{rnd.randint(1, 254)}.{rnd.randint(1, 254)}.{rnd.randint(1, 254)}"


def _unique_channel(name: str) -> str:
    return f"rig-{name}-{os.getpid()}-{time.monotonic_ns()}"


def _is_output(diagram: Any, path: str) -> bool:
    """``"block.port"`` names an output port (else a parameter, or nothing: the rig says
    which when it resolves the map)."""
    owner, _, item = path.rpartition(".")
    try:
        return item in diagram.find(owner).outputs
    except Exception:  # noqa: BLE001 - an unknown block: reported by the rig
        return False


class _Loop:
    """What both loops share: the plant on faulty buses with taps, the runner."""

    virtual = True

    def __init__(self, spec: RigSpec, plant_args: dict | None = None,
                 on_frame: Any = None, record: list | None = None) -> None:
        refused = [f"[{k}]" for k in ("serial", "daq") if getattr(spec, k)]
        if refused:
            raise RigFileError(f"rig file {spec.path}: {', '.join(refused)}: serial ports and "
                               "DAQ channels in a rig are not supported yet (issue 36); "
                               "drive them with hil.bridges in the plant model")
        self.spec = spec
        self.on_frame = on_frame
        self.wires: dict = {}
        self.injectors: dict = {}
        self.buses: dict = {}
        self.dbs = {n: _dbc(spec, b.dbc) for n, b in spec.buses.items()}
        from .can_ids import IdCollision, check_ids
        parts = ["session"] + [p for p in ("uds", "xcp") if getattr(spec, p) is not None]
        for n, db in self.dbs.items():
            try:
                check_ids(db, parts, f"rig file {spec.path} [buses.{n}]")
            except IdCollision as e:
                raise RigFileError(str(e)) from None
        self.taps: dict[str, BusTap] = {}
        self.psim = self.esim = self.runner = None
        self.peer = None
        self.runs: list[dict] = []
        self._plant_args = {**spec.plant.get("args", {}), **(plant_args or {})}
        self._record = record or []
        self._work: Any = None
        self._resolved: dict[str, tuple[str, str]] = {}

    @property
    def work_dir(self) -> str:
        """A temporary folder of the rig's own (removed by :meth:`close`)."""
        if self._work is None:
            import tempfile
            self._work = tempfile.TemporaryDirectory(prefix=f"rig-{self.spec.name}-")
        return self._work.name

    def where(self, bus: str | None = None) -> tuple[str, str]:
        """The python-can ``(interface, channel)`` of a bus of the rig (the first if
        None), as its controller and a diagnostic or calibration client reach it."""
        names = list(self.spec.buses)
        name = bus or (names[0] if names else None)
        if name not in self.spec.buses:
            raise RigFileError(f"rig file {self.spec.path}: no bus {bus!r}; buses: "
                               f"{', '.join(names) or 'none'}")
        return self._resolved[name]

    def fills(self) -> dict:
        """The ``{...}`` placeholders of a command or of client args (module docstring)."""
        out = {"python": sys.executable, "rig_dir": str(self.spec.folder),
               "work_dir": self.work_dir}
        for n in self.spec.buses:
            iface, ch = self._resolved.get(n, (self.spec.buses[n].interface,
                                               self.spec.buses[n].channel))
            out[f"bus.{n}.channel"], out[f"bus.{n}.interface"] = str(ch), iface
        return out

    @property
    def time(self) -> float:
        return self.psim.ctx.ticks / TICKS_PER_SECOND

    def _open_buses(self) -> None:
        from ..can import CanBackend
        from ..faults import FaultyBackend
        for i, (n, b) in enumerate(self.spec.buses.items()):
            iface, ch = self._where(n, b)
            self._resolved[n] = (iface, str(ch))
            wire = CanBackend(iface, ch, name=f"plant-{n}", timeout=0.0,
                              **self._options(b)).open()
            tap = BusTap(n, self.dbs[n], lambda: self.time if self.psim else 0.0, i)
            wire.add_tap(rx=tap.rx, tx=tap.tx)
            self.wires[n], self.taps[n] = wire, tap
            self.buses[n] = FaultyBackend(wire, [], clock=lambda: self.time).open()
            # the test's own frames come from a node of their own (a node does not
            # receive what it sends itself)
            self.injectors[n] = CanBackend(iface, ch, name=f"rig-{n}", timeout=0.0,
                                           **self._options(b)).open()

    def _options(self, b: Any) -> dict:
        return {}

    def _build_plant(self) -> None:
        p = self.spec.plant
        where = f"rig file {self.spec.path} [plant] model"
        fn = load_function(p["model"], where)
        io = RigIO(self.buses, self.dbs, self.spec.period_s)
        diagram = fn(io, **self._plant_args)
        dt = p.get("dt") or self.spec.period_s
        record = [r for r in self._record if _is_output(diagram, r)]
        self.psim = Simulator(diagram, solver=p.get("solver", "ab3"), dt=dt,
                              record=record or False)
        self.plant = diagram

    def _runner(self, **kw: Any) -> None:
        from ..runner import RealTimeRunner
        from ..verdict import Budget
        budget = Budget(**self.spec.budgets) if self.spec.budgets else None
        self.runner = RealTimeRunner(self.psim, self.spec.period_s, on_frame=self._frame,
                                     budget=budget, writer_thread=False, **kw)

    def _frame(self, runner: Any, k: int) -> None:
        if self.on_frame is not None:
            self.on_frame(self.time)

    def run(self, seconds: float) -> None:
        """Run ``seconds`` more: the whole number of frames that covers them (at least
        one; 0.5 s of 8 ms frames is 63 frames, 0.504 s)."""
        from ..runner import DeadlineMissed
        n = max(1, math.ceil(seconds / self.spec.period_s - 1e-9))
        try:
            self.runner.run(n * self.spec.period_s)
        except DeadlineMissed:
            pass  # the verdict says so
        finally:
            tel = self.runner.telemetry
            v = self.runner.verdict
            self.runs.append({"t_end": self.time, "telemetry": tel.as_dict() if tel else None,
                              "summary": tel.summary() if tel else "",
                              "verdict": v.as_dict() if v is not None else None,
                              "verdict_line": v.line() if v is not None else ""})

    def stop(self, why: str) -> None:
        self.runner.stop(why)

    def close(self) -> None:
        for w in [*self.wires.values(), *self.injectors.values()]:
            try:
                w.close()
            except Exception:  # noqa: BLE001 - closing what is left
                pass
        if self._work is not None:
            self._work.cleanup()
            self._work = None


class VirtualLoop(_Loop):
    """Lock-step in one process on a virtual clock (module docstring)."""

    virtual = True

    def _where(self, name: str, b: Any) -> tuple[str, str]:
        self._channels = getattr(self, "_channels", {})
        ch = self._channels.setdefault(name, _unique_channel(name))
        return "virtual", ch

    def start(self) -> VirtualLoop:
        from ..can import CanBackend
        from ..runner import VirtualClock
        c = self.spec.controller
        if c["kind"] != "in-process":
            raise RigFileError(f"rig file {self.spec.path}: a virtual rig steps its "
                               f"controller in lock-step: [controller] kind = \"in-process\" "
                               f"with a model (got {c['kind']!r}; a process or a device needs "
                               "mode = \"realtime\")")
        self._open_buses()
        ecu_buses = {n: CanBackend("virtual", self._channels[n], name=f"ecu-{n}",
                                   timeout=0.0).open() for n in self.spec.buses}
        self.ecu_wires = ecu_buses
        fn = load_function(c["model"], f"rig file {self.spec.path} [controller] model")
        self.controller = fn(RigIO(ecu_buses, self.dbs, float(c["period_s"])),
                             **c.get("args", {}))
        ratio = float(c["period_s"]) / self.spec.period_s
        if abs(ratio - round(ratio)) > 1e-9 or round(ratio) < 1:
            raise RigFileError(f"rig file {self.spec.path}: [controller] period_s "
                               f"{c['period_s']} s is not a whole number of the plant's "
                               f"frame {self.spec.period_s} s")
        self._every = round(ratio)
        self.esim = Simulator(self.controller, solver="rk4", record=False)
        self._build_plant()
        self.esim.initialize()  # the controller's hit at 0 first (offline_lockstep)
        self.psim.initialize()
        self._start_services(c)
        self._runner(clock=VirtualClock(), overrun="raise")
        return self

    def _start_services(self, c: dict) -> None:
        """The controller's services (module docstring), after its hit at 0."""
        bus = next(iter(self.spec.buses), None)
        iface, ch = self._resolved[bus] if bus else ("virtual", _unique_channel("none"))
        view = EcuView(self.controller, self.esim, float(c["period_s"]), iface, ch,
                       self.work_dir, bus)
        self.services = []
        for k, name in enumerate(c.get("services", [])):
            fn = load_function(name, f"rig file {self.spec.path} [controller] services[{k}]")
            self.services.append(fn(view))
        self._before = [s.before_frame for s in self.services if hasattr(s, "before_frame")]
        self._after = [s.after_frame for s in self.services if hasattr(s, "after_frame")]

    def _frame(self, runner: Any, k: int) -> None:
        ticks = self.psim.ctx.ticks
        if round(ticks / TICKS_PER_SECOND / self.spec.period_s) % self._every == 0:
            for f in self._before:
                f()
            self.esim.advance_to_ticks(ticks)
            for f in self._after:
                f()
        super()._frame(runner, k)

    def close(self) -> None:
        for s in reversed(getattr(self, "services", [])):
            if hasattr(s, "close"):
                try:
                    s.close()
                except Exception:  # noqa: BLE001 - closing what is left
                    pass
        super().close()
        for w in getattr(self, "ecu_wires", {}).values():
            try:
                w.close()
            except Exception:  # noqa: BLE001
                pass


class BusHold:
    """A real-time rig's buses held between two runs (module docstring): a tap on each
    wire keeps the plant's last frame of every id it sends and its interval; :meth:`start`
    (in a run's last frame) sends each again at that interval, on the plant's side of the
    wire (through its faults, at the paused instant), from a thread of its own;
    :meth:`stop` (in the next run's first frame, after the plant's own frames went out)
    ends it.  Both in a frame, so the hold covers the runner's own start and end.  The
    held frames are copies the taps leave out (the plant's record is the plant's)."""

    def __init__(self, loop: Any) -> None:
        self.loop, self.sent = loop, 0
        self.last: dict[tuple[str, int, bool], list] = {}  # [t, msg, interval]
        self._stop: Any = None
        self._thread: Any = None
        self._own: set[int] = set()  # id() of the held copies
        for n, wire in loop.wires.items():
            wire.add_tap(tx=lambda msg, n=n: self._tx(n, msg))
            loop.taps[n].ignore = self._own

    def _tx(self, bus: str, msg: Any) -> None:
        if id(msg) in self._own or getattr(msg, "is_error_frame", False):
            return  # the hold's own frames
        t = self.loop.time
        key = (bus, int(msg.arbitration_id), bool(msg.is_extended_id))
        row = self.last.get(key)
        if row is None:
            self.last[key] = [t, msg, 0.0]
        else:
            if t > row[0]:
                row[2] = t - row[0]
            row[0], row[1] = t, msg

    @property
    def active(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        import copy
        import threading
        if self._thread is not None:
            return
        plan = [(bus, copy.copy(msg), iv) for (bus, _, _), (_, msg, iv) in self.last.items()
                if iv > 0]
        if not plan:
            return
        self._plan = plan  # the copies live while their ids are left out
        self._own.clear()
        self._own.update(id(m) for _, m, _ in plan)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._send, args=(plan, self._stop),
                                        name="rig-bus-hold", daemon=True)
        self._thread.start()

    def _send(self, plan: list, stop: Any) -> None:
        now = time.monotonic()
        due = [now + iv for _, _, iv in plan]
        while not stop.is_set():
            now = time.monotonic()
            for k, (bus, msg, iv) in enumerate(plan):
                if now >= due[k]:
                    due[k] += iv * max(1, math.ceil((now - due[k]) / iv))
                    fb = self.loop.buses[bus]
                    if fb._active("bus_off", "tx") is not None:
                        continue  # an injected bus-off: nothing goes out
                    try:
                        fb.write(msg, timeout=0.0)
                        self.sent += 1
                    except Exception:  # noqa: BLE001 - a full queue: the next interval
                        pass
            stop.wait(max(0.0, min(due) - time.monotonic()))

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(5.0)
            self._thread = None
        self._own.clear()  # (before the copies go: a freed object's id is reused)
        self._plan = []


class RealtimeLoop(_Loop):
    """The plant paced by the wall clock; the controller a process or a device."""

    virtual = False
    hold: BusHold | None = None

    def run(self, seconds: float) -> None:
        """A run (:meth:`_Loop.run`); the buses held from its last frame to the next
        run's first (:class:`BusHold`)."""
        n = max(1, math.ceil(seconds / self.spec.period_s - 1e-9))
        self._last_t = self.time + (n - 0.5) * self.spec.period_s
        try:
            super().run(seconds)
        finally:
            if self.hold is not None and not self.hold.active:
                self.hold.start()  # a run that ended early

    def _frame(self, runner: Any, k: int) -> None:
        h = self.hold
        if h is not None:
            if h.active:  # the run's first frame: the plant has sent again
                h.stop()
            elif self.time >= self._last_t:  # its last frame: hold from now on
                h.start()
        super()._frame(runner, k)

    def _where(self, name: str, b: Any) -> tuple[str, str]:
        ch = b.channel
        if ch == "auto":
            if b.interface == "udp_multicast":
                ch = _random_group()
            elif b.interface == "virtual":
                ch = _unique_channel(name)
            else:
                raise RigFileError(f"rig file {self.spec.path}: [buses.{name}] channel = "
                                   f"\"auto\" is only for udp_multicast and virtual; name the "
                                   f"channel of interface {b.interface!r}")
        b.resolved = ch
        return b.interface, ch

    def _options(self, b: Any) -> dict:
        return dict(b.options)

    def _command(self, argv: list[str]) -> list[str]:
        values = self.fills()
        return [fill(a, values) for a in argv]

    def start(self) -> RealtimeLoop:
        c = self.spec.controller
        if c["kind"] == "in-process":
            raise RigFileError(f"rig file {self.spec.path}: a real-time rig runs its "
                               "controller as a process or a device: [controller] kind = "
                               "\"process\" with a command (an in-process controller needs "
                               "mode = \"virtual\")")
        self._open_buses()
        if c["kind"] == "process":
            from ..peer import Peer
            env = dict(os.environ)
            paths = [str((self.spec.folder / p).resolve()) for p in c.get("pythonpath", [])]
            env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
            self.peer = Peer(self._command(c["command"]), name="controller", env=env,
                             ready=c.get("ready", "READY"))
            self.peer.wait_ready(float(c.get("ready_timeout_s", 60.0)))
        self._build_plant()
        if c.get("dbc_check", True):
            from ..can.handshake import check_peer
            for n in self.spec.buses:
                check_peer(self.wires[n], self.dbs[n], timeout=2.0)
        if c.get("hold_bus", True):
            self.hold = BusHold(self)
        # gc "disable" (not the default "freeze": its collection at every run's start
        # holds the GIL ~0.1 s, the held bus's thread with it)
        self._runner(overrun="skip", **{"gc_mode": "disable",
                                        **self.spec.controller.get("runner", {})})
        return self

    def close(self) -> None:
        from ..can.session import end_frame
        if self.hold is not None:
            self.hold.stop()
        for n, w in self.wires.items():
            try:
                w.write(end_frame(self.dbs[n]), timeout=0.0)
            except Exception:  # noqa: BLE001 - the controller is then ended by SIGTERM
                pass
        if self.peer is not None:
            self.peer.stop(5.0)
        super().close()


def make_loop(spec: RigSpec, **kw: Any) -> _Loop:
    return (VirtualLoop if spec.mode == "virtual" else RealtimeLoop)(spec, **kw)
