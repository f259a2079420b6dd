"""Sending on python-can's ``virtual`` bus without ``deepcopy`` (``hil.can.backend``).

:class:`hil.can.CanBackend` writes a frame into the receiving queues of a plain
``VirtualBus`` itself (one ``can.Message`` per receiver, the data copied) instead of
python-can's ``VirtualBus.send``, which deep-copies the message per receiver.

Oracle: python-can's own ``VirtualBus.send`` on a second channel with the same buses.
A generated corpus (per seed: standard and extended ids, classic and FD lengths, remote
and error frames, the FD flags, bus options ``receive_own_messages`` and
``preserve_timestamps``, one to three receivers, plain python-can buses among them) is
sent both ways; every receiver gets the same frames in the same order with the same
fields (the timestamp: the frame's own when preserved, else the clock's, read once a
frame both ways: a counting clock stands in for ``time`` in both modules), and each copy
is its own object (changing one changes no other).  Where the
direct write would not be what ``send`` does (a bounded receive queue, a closed bus,
``send`` replaced on the instance, data that is no ``bytearray``), ``send`` runs.
"""

from __future__ import annotations

import itertools
import random
import time

import pytest

can = pytest.importorskip("can")

VMOD = pytest.importorskip("can.interfaces.virtual")  # its deepcopy is counted

from hil.can import CanBackend  # noqa: E402
from hil.can import backend as can_backend  # noqa: E402

_ids = itertools.count()
FIELDS = ("arbitration_id", "is_extended_id", "is_remote_frame", "is_error_frame", "channel",
          "dlc", "data", "is_fd", "is_rx", "bitrate_switch", "error_state_indicator")


def _frames(rng: random.Random, n: int) -> list:
    out = []
    for _ in range(n):
        ext = rng.random() < 0.4
        fd = rng.random() < 0.3
        kind = rng.random()
        length = rng.choice((0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64) if fd
                            else range(9))
        remote = not fd and kind < 0.1
        error = 0.1 <= kind < 0.15
        data = bytes(rng.randrange(256) for _ in range(length))
        out.append(can.Message(
            timestamp=rng.uniform(0, 1e4), arbitration_id=rng.randrange(1 << (29 if ext else 11)),
            is_extended_id=ext, is_remote_frame=remote, is_error_frame=error,
            dlc=rng.randrange(9) if remote else None, data=data, is_fd=fd,
            bitrate_switch=fd and rng.random() < 0.5,
            error_state_indicator=fd and rng.random() < 0.5))
    return out


def _run(frames, *, direct: bool, own: bool, preserve: bool, n_rx: int, n_plain: int):
    """The frames sent by a ``CanBackend`` (the direct write, or python-can's send when
    ``direct`` is False) and what each receiver got, with the clock around the sends."""
    ch = f"vsend-{next(_ids)}"
    tx = CanBackend("virtual", ch, timeout=0.0, receive_own_messages=own, fd=True,
                    preserve_timestamps=preserve)
    rxs = [CanBackend("virtual", ch, timeout=0.0, fd=True) for _ in range(n_rx)]
    plain = [can.Bus(interface="virtual", channel=ch) for _ in range(n_plain)]
    calls = {"send": 0, "deepcopy": 0}
    vmod = VMOD
    real_deepcopy = vmod.deepcopy
    real_time = vmod.time, can_backend.time
    clock = _Clock()

    def counted_deepcopy(x, memo=None):
        calls["deepcopy"] += 1
        return real_deepcopy(x, memo)
    vmod.deepcopy = counted_deepcopy
    vmod.time = can_backend.time = clock  # a send's stamp: the same clock both ways
    try:
        tx.open()
        for b in rxs:
            b.open()
        bus = tx.bus
        real_send = type(bus).send

        def counted(msg, timeout=None):
            calls["send"] += 1
            return real_send(bus, msg, timeout)
        if not direct:
            bus.send = counted
        for f in frames:
            tx.write(f, timeout=0.0)
        got = [[bus.queue.get_nowait() for _ in range(bus.queue.qsize())]
               for bus in [tx.bus] + [b.bus for b in rxs] + plain]
    finally:
        vmod.deepcopy = real_deepcopy
        vmod.time, can_backend.time = real_time
        for b in [tx, *rxs]:
            b.close()
        for p in plain:
            p.shutdown()
    return got, clock.n, calls


class _Clock:
    """``time`` for the modules that stamp a send: ``time()`` counts 1.0, 2.0, ... (the
    rest is the real module's)."""

    def __init__(self) -> None:
        self.n = 0

    def time(self) -> float:
        self.n += 1
        return float(self.n)

    def __getattr__(self, name):
        return getattr(time, name)


def _fields(m) -> tuple:
    return tuple(getattr(m, f) for f in FIELDS)


@pytest.mark.parametrize("seed", range(6))
def test_the_direct_write_delivers_what_python_can_send_delivers(seed):
    rng = random.Random(seed)
    frames = _frames(rng, 80)
    for own, preserve in itertools.product((False, True), repeat=2):
        n_rx, n_plain = rng.randrange(1, 4), rng.randrange(0, 2)
        fast, stamps, calls = _run(frames, direct=True, own=own, preserve=preserve,
                                   n_rx=n_rx, n_plain=n_plain)
        assert calls == {"send": 0, "deepcopy": 0}  # python-can's send did not run
        ref, ref_stamps, ref_calls = _run(frames, direct=False, own=own, preserve=preserve,
                                          n_rx=n_rx, n_plain=n_plain)
        assert stamps == ref_stamps  # the clock read as often (once a frame, unless kept)
        assert ref_calls["send"] == len(frames) and ref_calls["deepcopy"] >= len(frames)
        where = f"seed {seed}, receive_own_messages={own}, preserve_timestamps={preserve}"
        assert [len(q) for q in fast] == [len(q) for q in ref], where
        for qi, (a, b) in enumerate(zip(fast, ref, strict=True)):
            for k, (m, r) in enumerate(zip(a, b, strict=True)):
                assert type(m) is type(r) is can.Message
                fm, fr = _fields(m), _fields(r)
                # the channel name: each run has its own channel, by construction
                assert fm[:4] + fm[5:] == fr[:4] + fr[5:], f"{where}: queue {qi} frame {k}"
                assert m.channel.startswith("vsend-") and r.channel.startswith("vsend-")
                assert m.timestamp == r.timestamp, where
                if preserve:
                    assert m.timestamp == frames[k].timestamp
        # a copy per receiver: its data is its own
        copies = [q[0] for q in fast if q]
        assert len({id(c) for c in copies}) == len(copies)
        assert len({id(c.data) for c in copies}) == len(copies)
        assert all(c.data is not frames[0].data for c in copies)


def test_python_can_send_runs_where_the_direct_write_would_differ():
    msg = can.Message(arbitration_id=0x123, data=b"\x01\x02", is_extended_id=False)
    ch = f"vsend-{next(_ids)}"
    # a bounded receive queue: put may wait or fail, so python-can's send decides
    tx = CanBackend("virtual", ch, timeout=0.0)
    rx = can.Bus(interface="virtual", channel=ch, rx_queue_size=1)
    try:
        tx.open()
        assert not can_backend._send_virtual(tx.bus, msg, can.Message)
        tx.write(msg, timeout=0.0)
        with pytest.raises(Exception, match="recipients|Could not send"):
            tx.write(msg, timeout=0.0)  # the queue of one is full: send's error
        assert rx.recv(0).data == msg.data
    finally:
        tx.close()
        rx.shutdown()
    ch = f"vsend-{next(_ids)}"
    tx = CanBackend("virtual", ch, timeout=0.0)
    rx = can.Bus(interface="virtual", channel=ch)
    try:
        tx.open()
        odd = can.Message(arbitration_id=0x123, is_extended_id=False)
        odd.data = b"\x09"  # bytes, not a bytearray: deepcopy keeps it, send decides
        assert not can_backend._send_virtual(tx.bus, odd, can.Message)
        tx.bus.send = lambda m, timeout=None: sent.append(m)  # replaced on the instance
        sent: list = []
        assert not can_backend._send_virtual(tx.bus, msg, can.Message)
        tx.write(msg, timeout=0.0)
        assert sent == [msg]
        del tx.bus.send
        tx.bus.shutdown()  # closed: send raises its own error
        assert not can_backend._send_virtual(tx.bus, msg, can.Message)
    finally:
        rx.shutdown()
