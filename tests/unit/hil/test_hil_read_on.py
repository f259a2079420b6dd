"""A read that yields nothing for one frame does not end the read while frames wait (issue 36
item 1: with the bus log's tap on ``udp_multicast``, a batch stopped at the node's own echo
and the frames behind it waited a frame or more in the socket).

The class: a driver consumes something that is no frame for its caller (the node's own
echo, a dropped error frame, a frame python-can's software filter rejects, an SLCAN ack, a
bad serial frame, a frame a fault drops, a lock-step SYNC) and reported "nothing" for it;
``receive_batch`` (``read_available``) and ``read(0)`` took that as "nothing more".

Corpus, for every backend with a virtual twin here: python-can ``virtual`` (its queue read
directly, through ``recv``, with ``can_filters``), ``udp_multicast`` (its socket read
directly, through ``recv``), ``slcan`` on a pty hub, serial (``loop://`` and a pty), the
fault-injection and lock-step wrappers; generated sequences (seeded: 1, 7 and 40 data frames)
with such items interleaved; with and without ``receive_own_messages`` where the interface
has it, with and without ``accept=``, always with an rx tap (the bus log's place).

Oracle: the sequence filtered in Python.  Once everything has arrived (synchronous for
``virtual`` and ``loop://``; else a witness: another node on the same group that has the
last frame, or the pty's byte count), one ``receive_batch`` returns every expected frame,
batches of ``limit`` return ``limit`` each until the last, ``read(0)`` returns them one by
one and then ``None``, and the tap saw every frame read.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

can = pytest.importorskip("can")

from hil.backend import MAX_BATCH  # noqa: E402
from hil.can import CanBackend  # noqa: E402
from tests.can_env import multicast_ok  # noqa: E402
from tests.timing_plugin import GENEROUS_S, wait_for  # noqa: E402

_ids = itertools.count()
#: ids of data frames from the other node; the last one is the end frame
DATA_IDS = [0x100, 0x123, 0x1F0, 0x200, 0x3A5]
#: ids of the node's own transmissions (an echo filter drops exactly these)
OWN_IDS = [0x600, 0x601]
#: ids a software filter (``can_filters``) or an injected drop fault rejects
REJECTED_IDS = [0x7A0, 0x7A1]
SIZES = (1, 7, 40)


def _msg(i: int, data: bytes, **kw: Any) -> Any:
    return can.Message(arbitration_id=i, is_extended_id=False, data=data, **kw)


def _key(f: Any) -> Any:
    return bytes(f) if isinstance(f, bytes | bytearray) else (f.arbitration_id,
                                                             bytes(f.data))


@dataclass
class Rig:
    """A receiving node ``rx`` and how to put each kind of item on its way to it."""

    rx: Any
    #: kind -> send(n): an item of that kind numbered n; returns the frame ``rx`` must read
    #: (None: an item that yields nothing)
    senders: dict[str, Callable[[int], Any]]
    #: block until every item sent so far has arrived at ``rx`` (its bytes, its datagrams)
    settle: Callable[[], None] = lambda: None
    #: ids ``accept=`` can select (None: frames without ids)
    ids: list | None = field(default_factory=lambda: list(DATA_IDS + OWN_IDS))
    #: the other node (CAN rigs)
    tx: Any = None


def _sequence(seed: int, n_data: int, kinds: list[str]) -> list[str]:
    """``n_data`` data items with items of ``kinds`` (those that yield nothing, or the
    node's own frames) interleaved: before the first, between, and several in a row."""
    rng = random.Random(seed)
    seq: list[str] = []
    for _ in range(n_data):
        seq += [rng.choice(kinds) for _ in range(rng.choice([0, 0, 1, 3]))] if kinds else []
        seq.append("data")
    if kinds:
        seq.insert(0, kinds[0])  # at least one, first
    return seq


def _send_all(rig: Rig, seq: list[str], data_end: bool = True) -> list:
    """Send the sequence, the last data item last; the frames ``rx`` must read, in order."""
    expected = []
    for n, kind in enumerate(seq):
        f = rig.senders[kind](n)
        if f is not None:
            expected.append(f)
    if data_end:
        expected.append(rig.senders["end"](len(seq)))
    rig.settle()
    return expected


def _check(rig: Rig, seed: int, n_data: int, kinds: list[str], use_accept: bool) -> None:
    rx = rig.rx
    tapped: list = []
    rx.add_tap(rx=lambda f: tapped.append(_key(f)))
    rng = random.Random(seed)
    accept = None
    if use_accept and rig.ids is not None:
        accept = {(i, False) for i in rng.sample(rig.ids, len(rig.ids) // 2)} | {
            (DATA_IDS[-1], False)}

    def wanted(frames: list) -> list:
        keys = [_key(f) for f in frames]
        if accept is None:
            return keys
        return [k for k, f in zip(keys, frames) if (f.arbitration_id, False) in accept]

    # 1. one batch takes everything that has arrived
    expected = _send_all(rig, _sequence(seed, n_data, kinds))
    got = [_key(f) for f in rx.receive_batch(MAX_BATCH, accept)]
    assert got == wanted(expected), f"one batch after everything arrived on {rx.where}"
    assert tapped == [_key(f) for f in expected], "the tap sees every frame read"
    assert rx.receive_batch(MAX_BATCH, accept) == []
    # 2. batches of `limit`: full ones until the last
    limit = rng.choice([1, 2, 3])
    expected = _send_all(rig, _sequence(seed + 1, n_data, kinds))
    sizes, got = [], []
    while True:
        batch = rx.receive_batch(limit)
        if not batch:
            break
        sizes.append(len(batch))
        got += [_key(f) for f in batch]
    assert got == [_key(f) for f in expected]
    assert sizes[:-1] == [limit] * (len(sizes) - 1) and 0 < sizes[-1] <= limit, sizes
    # 3. read(0): every frame, one by one, then None
    expected = _send_all(rig, _sequence(seed + 2, n_data, kinds))
    got = []
    while (f := rx.read(0.0)) is not None:
        got.append(_key(f))
    assert got == [_key(f) for f in expected], f"read(0) on {rx.where}"


# ------------------------------------------------------------------ rigs
@contextlib.contextmanager
def _virtual_rig(path: str, own: bool) -> Iterator[Rig]:
    ch = f"readon-{next(_ids)}"
    opts: dict = {"receive_own_messages": own}
    if path == "filtered":  # python-can's software filter: the rejected ids never arrive
        opts["can_filters"] = [{"can_id": i, "can_mask": 0x7FF, "extended": False}
                               for i in DATA_IDS + OWN_IDS]
    with CanBackend("virtual", ch, timeout=0.0) as tx, \
            CanBackend("virtual", ch, timeout=0.0, **opts) as rx:
        if path == "recv":
            rx._vq = None  # python-can's recv instead of the queue read
        yield Rig(rx, _can_senders(tx, rx, own, error_frames=True,
                                   rejected=path == "filtered"), tx=tx)


def _can_senders(tx: Any, rx: Any, own: bool, *, error_frames: bool = False,
                 rejected: bool = False) -> dict:
    """Data from ``tx``; ``own``: a frame ``rx`` sends itself (it reads it back only with
    ``receive_own_messages``); an error frame; a frame of a rejected id."""
    def data(n: int) -> Any:
        f = _msg(DATA_IDS[n % (len(DATA_IDS) - 1)], n.to_bytes(2, "little"))
        tx.write(f)
        return f

    def mine(n: int) -> Any:
        f = _msg(OWN_IDS[n % 2], n.to_bytes(2, "little") + b"own")
        rx.write(f)
        return f if own else None

    def end(n: int) -> Any:
        f = _msg(DATA_IDS[-1], b"end" + n.to_bytes(2, "little"))
        tx.write(f)
        return f

    def error(n: int) -> None:
        tx.write(can.Message(arbitration_id=0, is_error_frame=True, data=b""))

    def reject(n: int) -> None:
        tx.write(_msg(REJECTED_IDS[n % 2], b"no"))

    out = {"data": data, "own": mine, "end": end}
    if error_frames:
        out["error"] = error
    if rejected:
        out["rejected"] = reject
    return out


@contextlib.contextmanager
def _udp_rig(path: str, filtered: bool) -> Iterator[Rig]:
    pytest.importorskip("msgpack")
    rnd = random.Random()
    group = f"239.{rnd.randint(1, 254)}.{rnd.randint(1, 254)}.{rnd.randint(1, 254)}"
    opts: dict = {}
    if filtered:
        opts["can_filters"] = [{"can_id": i, "can_mask": 0x7FF, "extended": False}
                               for i in DATA_IDS + OWN_IDS]
    with CanBackend("udp_multicast", group, timeout=0.0) as tx, \
            CanBackend("udp_multicast", group, timeout=0.0, **opts) as rx, \
            CanBackend("udp_multicast", group, timeout=0.0) as witness:
        if path == "recv":
            rx._sock = None  # python-can's recv instead of the socket read
        senders = _can_senders(tx, rx, own=False, rejected=filtered)
        last: list = []
        send_end = senders["end"]

        def end(n: int) -> Any:
            last.append(_key(f := send_end(n)))
            return f

        def settle() -> None:
            # the kernel delivers a datagram to every socket of the group at once: when the
            # witness has the last frame, so has rx
            wait_for(lambda: last[-1] in [_key(f) for f in witness.receive_batch()],
                     "the last frame at the witness")
        senders["end"] = end
        yield Rig(rx, senders, settle)


@contextlib.contextmanager
def _slcan_rig(filtered: bool) -> Iterator[Rig]:
    pytest.importorskip("serial")
    from hil.can.slcan_frame import Frame
    from hil.can.slcan_hub import SlcanHub
    opts: dict = {"bitrate": 500000, "sleep_after_open": 0, "timeout": 0.0}
    rx_opts = dict(opts)
    if filtered:
        rx_opts["can_filters"] = [{"can_id": i, "can_mask": 0x7FF, "extended": False}
                                  for i in DATA_IDS + OWN_IDS]
    with SlcanHub(2) as hub, CanBackend("slcan", hub.ports[0], **opts) as tx, \
            CanBackend("slcan", hub.ports[1], **rx_opts) as rx:
        assert hub.wait_open(0, GENEROUS_S) and hub.wait_open(1, GENEROUS_S)
        assert hub.wait_idle(GENEROUS_S)
        senders = _can_senders(tx, rx, own=False, rejected=filtered)
        port = rx._serial
        owed = [0]  # bytes on their way to rx: a frame's line, an ack of rx's own frame

        def counted(kind: str) -> Callable[[int], Any]:
            send = senders[kind]

            def go(n: int) -> Any:
                f = send(n)
                if kind == "own":
                    owed[0] += 2  # "z\r"
                else:
                    sent = f if f is not None else None
                    if sent is None:  # a rejected frame: its line arrives all the same
                        sent = _msg(REJECTED_IDS[n % 2], b"no")
                    owed[0] += len(Frame("t", sent.arbitration_id, len(sent.data),
                                         bytes(sent.data)).line) + 1
                return f
            return go

        def settle() -> None:
            assert hub.wait_idle(GENEROUS_S)
            wait_for(lambda: port.in_waiting >= owed[0], f"{owed[0]} bytes at the pty")
            owed[0] = 0
        while rx.receive_batch():  # the answers to the open commands
            pass
        yield Rig(rx, {k: counted(k) for k in senders}, settle)


@contextlib.contextmanager
def _serial_rig(where: str) -> Iterator[Rig]:
    pytest.importorskip("serial")
    from hil.serial import SerialBackend
    master = None
    if where == "pty":
        import tty
        master, slave = os.openpty()
        tty.setraw(master)
        port = os.ttyname(slave)
    else:
        port = "loop://"
    rx = SerialBackend(port, framing="cobs", crc="crc16-ccitt-false", timeout=0.0,
                       reconnect=False).open()
    owed = [0]

    def put(wire: bytes) -> None:
        owed[0] += len(wire)
        if master is None:
            rx.serial.write(wire)
        else:
            os.write(master, wire)

    def data(n: int) -> bytes:
        payload = b"p%d" % n + bytes(n % 7)
        put(rx.encode(payload))
        return payload

    def bad(n: int) -> None:
        wire = bytearray(rx.encode(b"bad%d" % n))
        wire[2] ^= 0x5A  # a corrupted byte: a CRC (or framing) error, dropped
        put(bytes(wire))

    def end(n: int) -> bytes:
        put(rx.encode(b"end"))
        return b"end"

    def settle() -> None:
        wait_for(lambda: rx.serial.in_waiting >= owed[0], f"{owed[0]} bytes at {port}")
        owed[0] = 0
    try:
        yield Rig(rx, {"data": data, "bad": bad, "end": end}, settle, ids=None)
    finally:
        rx.close()
        if master is not None:
            os.close(master)
            os.close(slave)


# ------------------------------------------------------------------ tests
CASES = [(seed, n) for seed, n in zip(range(3), SIZES)]


@pytest.mark.parametrize("seed, n_data", CASES)
@pytest.mark.parametrize("use_accept", [False, True])
@pytest.mark.parametrize("own", [False, True])
@pytest.mark.parametrize("path", ["fast", "recv", "filtered"])
def test_virtual_bus_reads_on(path, own, use_accept, seed, n_data):
    kinds = ["own", "error"] + (["rejected"] if path == "filtered" else [])
    with _virtual_rig(path, own) as rig:
        _check(rig, seed, n_data, kinds, use_accept)
        # (an error frame carries no id a filter accepts: python-can's filter rejects it)
        assert rig.rx.error_frames > 0 or path == "filtered"


@pytest.mark.timing  # waits for the datagrams (wait_for)
@pytest.mark.skipif(not multicast_ok(), reason="no IPv4 multicast route here")
@pytest.mark.parametrize("seed, n_data", CASES)
@pytest.mark.parametrize("use_accept", [False, True])
@pytest.mark.parametrize("path, filtered", [("fast", False), ("recv", False),
                                            ("fast", True), ("recv", True)])
def test_udp_multicast_reads_on_past_own_echoes(path, filtered, use_accept, seed, n_data):
    """The issue's case: the node's own echoes interleaved, a tap on, ``accept=`` (the
    bridges' ids) or not (python-can's ``receive_own_messages=True`` is not implemented
    for ``udp_multicast``: the backend drops the echoes itself)."""
    kinds = ["own"] + (["rejected"] if filtered else [])
    with _udp_rig(path, filtered) as rig:
        _check(rig, seed, n_data, kinds, use_accept)
        assert rig.rx.own_echoes > 0


@pytest.mark.timing  # waits for the pty (wait_for)
@pytest.mark.parametrize("seed, n_data", CASES)
@pytest.mark.parametrize("use_accept", [False, True])
@pytest.mark.parametrize("filtered", [False, True])
def test_slcan_reads_on_past_acks_and_filtered_frames(filtered, use_accept, seed, n_data):
    kinds = ["own"] + (["rejected"] if filtered else [])
    with _slcan_rig(filtered) as rig:
        _check(rig, seed, n_data, kinds, use_accept)


@pytest.mark.timing  # waits for the pty (wait_for)
@pytest.mark.parametrize("seed, n_data", CASES)
@pytest.mark.parametrize("where", ["loop", "pty"])
def test_serial_reads_on_past_bad_frames(where, seed, n_data):
    with _serial_rig(where) as rig:
        _check(rig, seed, n_data, ["bad"], use_accept=False)
        assert rig.rx.counters.crc_errors + rig.rx.counters.frame_errors > 0


@pytest.mark.parametrize("seed, n_data", CASES)
@pytest.mark.parametrize("use_accept", [False, True])
def test_fault_and_lockstep_wrappers_read_on(use_accept, seed, n_data):
    from hil.can.lockstep import LockstepBus
    from hil.faults import Fault, FaultyBackend
    with _virtual_rig("fast", own=False) as rig:
        faulty = FaultyBackend(rig.rx, [Fault("drop", 0.0, 1e9, direction="rx",
                                              ids=REJECTED_IDS)]).open()
        senders = dict(rig.senders)
        tx = rig.tx
        senders["dropped"] = lambda n: tx.write(_msg(REJECTED_IDS[n % 2], b"x"))
        _check(Rig(faulty, senders), seed, n_data, ["dropped", "error"], use_accept)
        assert faulty.injected
    with _virtual_rig("fast", own=False) as rig:
        lock = LockstepBus(rig.rx).open()
        tx = rig.tx
        senders = dict(rig.senders)
        senders["sync"] = lambda n: tx.write(_msg(lock.sync_id, n.to_bytes(8, "little")))
        _check(Rig(lock, senders), seed, n_data, ["sync", "error"], use_accept)
        assert len(lock.syncs) > 0

