"""The HIL receive path goes one way (issue 33 item 3).

* A receiving bridge reads its backend once per sample hit, through
  :meth:`hil.backend.Backend.receive_batch`, whatever the number of its outputs that are
  read and the number of times the engine evaluates them; its outputs are one declared
  group that reads what was stored (a counting backend, for CAN, serial and DAQ bridges).
* ``receive_batch(limit, accept)`` filters in the base class: for every backend kind
  that carries frame ids (python-can ``virtual`` on its fast path and through ``recv``,
  ``udp_multicast`` on its fast path and through ``recv``, ``slcan`` on a pty hub, a
  generic backend, the fault-injection and lock-step wrappers) it returns exactly the
  accepted frames in order and counts the others in ``filtered``; a backend whose frames
  carry no id (serial, DAQ) refuses ``accept`` with an error naming it.

Oracle: the frames sent (a generated corpus of ids, standard and extended, per seed),
filtered in Python.
"""

from __future__ import annotations

import itertools
import queue
import random

import pytest

can = pytest.importorskip("can")
pytest.importorskip("cantools")

from blocks.math import Gain  # noqa: E402
from cosim import DiagramBuilder, Simulator  # noqa: E402
from hil.backend import Backend  # noqa: E402
from hil.bridges import CanReceive, DaqInput, SerialReceive  # noqa: E402
from hil.can import ACC_DBC, CanBackend, CanDatabase  # noqa: E402
from hil.errors import BackendError  # noqa: E402
from tests.can_env import multicast_ok  # noqa: E402
from tests.timing_plugin import GENEROUS_S, wait_for  # noqa: E402

DB = CanDatabase(ACC_DBC)
_ids = itertools.count()


class CountingBackend(Backend):
    """Frames put in ``inbox``; counts the batch reads and the frame reads."""

    kind = "counting"

    def __init__(self, **kw):
        super().__init__(timeout=0.0, **kw)
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.batches = 0
        self.reads = 0

    @property
    def channel(self):
        return "count0"

    def _open(self):
        pass

    def _close(self):
        pass

    def _read_batch(self, out, limit, accept):
        self.batches += 1
        return super()._read_batch(out, limit, accept)

    def _read_internal(self, timeout):
        self.reads += 1
        try:
            return self.inbox.get_nowait()
        except queue.Empty:
            return None

    def _write(self, frame, timeout):
        self.inbox.put(frame)


def _msg(i: int, ext: bool = False, data: bytes = b"\x01") -> can.Message:
    return can.Message(arbitration_id=i, is_extended_id=ext, data=data)


def _consume_all(block, ports):
    """A diagram in which every port of ``block`` feeds a gain (all are read)."""
    b = DiagramBuilder("rx_once")
    b.add(block)
    for k, p in enumerate(ports):
        g = b.add(Gain(f"g{k}", 1.0, input_unit=p.unit_text or None))
        b.connect(p, g.u)
    return b.build()


@pytest.mark.parametrize("solver, period_s", [("rk4", 1e-3), ("euler", 2e-3)])
def test_a_can_receiver_reads_its_backend_once_per_hit(solver, period_s):
    be = CountingBackend().open()
    rx = CanReceive("rx", be, DB, ["ACC_CMD"], period_s)
    d = _consume_all(rx, [*rx.signal_ports.values(), *rx.ok_ports.values(), rx.ok])
    cmd = DB.encode("ACC_CMD", {"throttle": 0.25, "brake_torque": 10.0})
    for _ in range(3):
        be.write(cmd)
    be.write(_msg(0x7E0))  # not decoded by this bridge: dropped by the backend's filter
    sim = Simulator(d, solver=solver, dt=1e-3, record=["rx.throttle", "rx.ok"])
    res = sim.run(0.02)
    hits = round(0.02 / period_s) + 1  # t = 0 .. 0.02 inclusive
    assert be.batches == hits  # one receive_batch per hit, whatever the outputs read
    assert be.filtered == 1 and rx.stats()["unknown"] == 0
    assert rx.stats()["received"]["ACC_CMD"] == 3
    assert res["rx.throttle"][0] == pytest.approx(0.25, abs=1e-3)
    # evaluating every port again at the same tick reads nothing more: pure reads
    before = be.batches
    assert [p.calc(sim.ctx) for p in rx.signal_ports.values()] == \
        pytest.approx([0.25, 10.0], abs=1e-3)
    assert rx.ok.calc(sim.ctx) in (0.0, 1.0) and be.batches == before
    # the outputs are one group: the engine calls its calc once for all of them
    groups = {id(p.group) for p in (*rx.signal_ports.values(), *rx.ok_ports.values(), rx.ok)}
    assert len(groups) == 1
    be.close()


def test_a_serial_receiver_reads_its_backend_once_per_hit():
    from hil.serial.framing import Field, Layout
    lay = Layout([Field("a", "h", unit="m"), Field("b", "h", unit="V")])
    be = CountingBackend().open()
    be.frame_key = None  # records carry no id (as SerialBackend)
    rx = SerialReceive("rx", be, 1e-3, layout=lay)
    d = _consume_all(rx, [*rx.field_ports.values(), rx.ok])
    be.write(lay.pack({"a": 3, "b": 4}))
    sim = Simulator(d, solver="rk4", dt=1e-3, record=["rx.a"])
    res = sim.run(0.01)
    assert be.batches == 11 and res["rx.a"][0] == 3.0
    assert rx.stats()["received"] == 1


def test_a_daq_input_reads_its_device_once_per_hit():
    from hil.daq import ChannelSpec
    from hil.registry import create_backend
    be = create_backend("daq-sim", channels=[
        ChannelSpec("ai0", "ai", (-10, 10), "V", 12), ChannelSpec("ai1", "ai", (-10, 10), "V"),
        ChannelSpec("di0", "di")]).open()
    reads = []
    dev_read = be.device.read
    be.device.read = lambda names=None: reads.append(names) or dev_read(names)
    rx = DaqInput("daq", be, 1e-3)
    d = _consume_all(rx, [*rx.channel_ports.values(), rx.ok])
    Simulator(d, solver="rk4", dt=1e-3).run(0.01)
    assert len(reads) == 11 and rx.stats()["reads"] == 11
    # a DAQ backend's batch is one snapshot (a device is sampled, not a stream)
    assert len(be.receive_batch()) == 1
    with pytest.raises(BackendError, match="carry none"):
        be.receive_batch(accept={(1, False)})
    be.close()


# ------------------------------------------------------------ filtering, every kind
def _corpus(seed: int, n: int = 40) -> tuple[list, set]:
    """Frames with standard and extended ids (some ids in both forms) and an accept set;
    the last frame is an accepted one."""
    rng = random.Random(seed)
    frames = []
    for _ in range(n):
        ext = rng.random() < 0.3
        i = rng.choice([0x100, 0x101, 0x1F0, 0x200, 0x7E0]) + (0x18DA0000 if ext and
                                                                rng.random() < .5 else 0)
        frames.append(_msg(i, ext, bytes(rng.randrange(256) for _ in range(rng.randrange(9)))))
    keys = sorted({(f.arbitration_id, f.is_extended_id) for f in frames})
    accept = set(rng.sample(keys, max(1, len(keys) // 2)))
    last = min(accept)  # an accepted frame last: when it is in, every frame was read
    frames.append(_msg(last[0], last[1], b"end"))
    return frames, accept


def _key(f) -> tuple:
    return (f.arbitration_id, bool(f.is_extended_id), bytes(f.data))


def _check_filtered(tx_write, rx, frames, accept, limit, settle=lambda: None):
    """Send ``frames``, then read batches until the last accepted frame is in: the
    accepted ones in order, the others counted in ``filtered``."""
    want = [_key(f) for f in frames if (f.arbitration_id, f.is_extended_id) in accept]
    for f in frames:
        tx_write(f)
    settle()
    got: list = []

    def done():
        batch = rx.receive_batch(limit, accept)
        assert len(batch) <= limit
        got.extend(_key(f) for f in batch)
        return len(got) >= len(want)
    wait_for(done, f"{len(want)} accepted frames on {rx.where}")
    assert got == want
    assert rx.filtered == len(frames) - len(want)
    assert rx.receive_batch(limit, accept) == []


@pytest.mark.timing  # waits for frames (wait_for)
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("path", ["fast", "recv"])
def test_virtual_bus_filters_in_the_base(seed, path):
    ch = f"rxb-{next(_ids)}"
    with CanBackend("virtual", ch, timeout=0.0) as tx, \
            CanBackend("virtual", ch, timeout=0.0) as rx:
        if path == "recv":
            rx._vq = None  # python-can's recv instead of the queue read
        frames, accept = _corpus(seed)
        _check_filtered(tx.write, rx, frames, accept, limit=[1, 7, 10_000][seed])
        assert rx.counters.frames_in == len(frames)  # read (and tapped), then filtered


@pytest.mark.timing  # waits for frames (wait_for)
@pytest.mark.parametrize("seed", range(2))
def test_generic_and_wrapping_backends_filter_in_the_base(seed):
    from hil.can.lockstep import LockstepBus
    from hil.faults import FaultyBackend
    frames, accept = _corpus(10 + seed)
    be = CountingBackend().open()
    _check_filtered(be.write, be, frames, accept, limit=5)
    inner = CountingBackend().open()
    with FaultyBackend(inner) as fb:
        _check_filtered(inner.inbox.put, fb, frames, accept, limit=3)
    inner = CountingBackend().open()
    with LockstepBus(inner) as lb:
        _check_filtered(inner.inbox.put, lb, frames, accept, limit=10_000)


@pytest.mark.timing
@pytest.mark.skipif(not multicast_ok(), reason="no IPv4 multicast route here")
@pytest.mark.parametrize("tapped", [False, True])
def test_udp_multicast_filters_in_the_base(tapped):
    pytest.importorskip("msgpack")
    group = f"239.{(next(_ids) * 7) % 200 + 20}.{random.Random().randrange(1, 250)}.33"
    with CanBackend("udp_multicast", group, timeout=0.0) as rx, \
            CanBackend("udp_multicast", group, timeout=0.0) as tx:
        seen = []
        if tapped:  # a tap turns the undecoded drop off (issue 36): the base filters
            rx.add_tap(rx=seen.append)
        frames, accept = _corpus(20)
        _check_filtered(tx.write, rx, frames, accept, limit=4)
        assert len(seen) == (len(frames) if tapped else 0)


@pytest.mark.timing
def test_slcan_filters_in_the_base():
    pytest.importorskip("serial")
    from hil.can.slcan_hub import SlcanHub
    frames, accept = _corpus(30, n=20)
    frames = [f for f in frames if not f.is_extended_id or f.arbitration_id < 0x1FFFFFFF]
    with SlcanHub(2) as hub:
        kw = {"bitrate": 500000, "sleep_after_open": 0, "timeout": 0.0}
        with CanBackend("slcan", hub.ports[0], **kw) as tx, \
                CanBackend("slcan", hub.ports[1], **kw) as rx:
            assert hub.wait_open(0, GENEROUS_S) and hub.wait_open(1, GENEROUS_S)
            _check_filtered(tx.write, rx, frames, accept, limit=6,
                            settle=lambda: hub.wait_idle(GENEROUS_S))


@pytest.mark.timing  # waits for frames (wait_for)
def test_backends_without_ids_refuse_accept_and_read_as_before():
    from hil.serial import EmulatedSerialBackend
    with EmulatedSerialBackend(timeout=0.0) as be:
        with pytest.raises(BackendError, match=r"serial-emulator .*carry none; filter them"):
            be.receive_batch(accept={(0x100, False)})
        be.write(b"hello")  # the echo device sends it back

        def back():
            return be.receive_batch() == [b"hello"]
        wait_for(back, "the echo")


def test_a_receiver_refuses_a_backend_it_cannot_read_at_construction():
    from cosim.errors import ParameterError
    from hil.serial import EmulatedSerialBackend

    class ReadOnly:  # duck-typed: read/write/is_open, but no receive_batch
        is_open = True
        where = "read-only"

        def read(self, timeout=0.0):
            return None

        def write(self, frame, timeout=0.0):
            pass
    with pytest.raises(ParameterError, match=r"receiver's backend must be a hil Backend"):
        CanReceive("rx", ReadOnly(), DB, "ACC_CMD", 1e-3)
    with pytest.raises(ParameterError, match=r"carry no id to select them by"):
        CanReceive("rx", EmulatedSerialBackend(), DB, "ACC_CMD", 1e-3)
