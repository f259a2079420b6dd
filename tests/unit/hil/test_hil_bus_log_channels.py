"""Every frame of a bus log carries one sensible channel, received and sent alike (issue 30
item 9: the demo's ``bus.asc`` showed received frames on channel 445520752547 and sent ones
on 1: python-can's writers turn the digits at the end of a received frame's bus channel,
``flagship-445520752546``, into a channel number, and write a sent frame, which has none,
on their default channel).

The class: every log format python-can writes (``.asc``, ``.blf``, ``.csv``, ``.log``,
``.trc``, ``.db``, compressed ``.gz``) times every kind of channel a frame can come with
(a virtual bus's name with digits, a multicast group, an interface name, a number, none),
received and sent; then the same through real buses (python-can ``virtual``, and
``udp_multicast`` where the host has a multicast route) with the log as the backends' tap.
"""

import time
import uuid

import pytest

can = pytest.importorskip("can")

from hil.can import CanBackend, MessageLog, read_log  # noqa: E402
from tests.can_env import multicast_ok  # noqa: E402
from tests.timing_plugin import GENEROUS_S  # noqa: E402

#: What python-can's reader gives back for a frame written on the log's channel 0 (the
#: default): ASC and BLF store 1 and read 0, TRC stores 1 and reads 1, canutils writes can0,
#: CSV and SQLite store no channel.
READ_BACK = {".asc": 0, ".blf": 0, ".trc": 1, ".log": "can0", ".csv": None, ".db": None,
             ".asc.gz": 0, ".log.gz": "can0"}
#: Formats that keep the direction (rx/tx) of a frame.
DIRECTION = (".asc", ".blf", ".trc", ".log", ".asc.gz", ".log.gz")
#: Channels frames come with: a virtual bus named with digits at its end (the flagship's),
#: a multicast group, an interface name, python-can's 0-based numbers, none at all.
CHANNELS = ["flagship-445520752546", "239.74.163.2", "vcan0", "can1", 0, 3, None]


def _frames(n, t0=1000.0):
    for k in range(n):
        yield can.Message(timestamp=t0 + 1e-3 * k, arbitration_id=0x100 + k % 3,
                          is_extended_id=False, data=bytes([k % 256, 1, 2, 3]))


def _read(path):
    return [m for _, m in read_log(path)]


@pytest.mark.parametrize("suffix", list(READ_BACK))
@pytest.mark.parametrize("channel", CHANNELS, ids=repr)
def test_received_and_sent_frames_share_one_channel_in_every_format(tmp_path, suffix,
                                                                    channel):
    path = tmp_path / f"bus{suffix}"
    with MessageLog(path) as log:
        for k, msg in enumerate(_frames(40)):
            msg.channel = channel
            if k % 2:
                msg.is_rx = True
                log(msg)         # a received frame: the bus's channel
            else:
                msg.channel = None if k % 4 else channel
                log.sent(msg)    # a sent frame: often no channel at all
    back = _read(path)
    assert len(back) == 40
    assert {m.channel for m in back} == {READ_BACK[suffix]}, suffix
    if suffix in DIRECTION:
        assert [m.is_rx for m in back] == [bool(k % 2) for k in range(40)]


def test_the_logs_channel_is_an_option_and_checked(tmp_path):
    with MessageLog(tmp_path / "b.asc", channel=2) as log:
        for msg in _frames(4):
            msg.channel = "acc-77"
            log(msg)
        log.sent(can.Message(timestamp=1000.1, arbitration_id=0x200, data=bytes(4),
                             is_extended_id=False))
    assert {m.channel for m in _read(tmp_path / "b.asc")} == {2}
    text = (tmp_path / "b.asc").read_text().splitlines()
    rows = [r.split() for r in text if " Rx " in r or " Tx " in r]
    assert rows and {r[1] for r in rows} == {"3"}  # ASC counts channels from 1
    for bad in (-1, 1.5, "1", True):
        with pytest.raises(ValueError, match="channel"):
            MessageLog(tmp_path / "x.asc", channel=bad)


def test_the_caller_s_frame_is_not_changed(tmp_path):
    """The log is a tap: the frame it gets is the one the bridges decode."""
    msg = next(_frames(1))
    msg.channel = "flagship-12"
    with MessageLog(tmp_path / "c.asc") as log:
        log(msg)
    assert msg.channel == "flagship-12"


def _buses():
    yield "virtual", f"flagship-{time.monotonic_ns()}"  # not timing: a unique name
    if multicast_ok():
        rnd = uuid.uuid4().int
        yield "udp_multicast", f"239.{rnd % 253 + 1}.{rnd // 253 % 253 + 1}.{rnd // 7 % 250 + 2}"


@pytest.mark.timing
@pytest.mark.parametrize("suffix", [".asc", ".blf", ".trc", ".log"])
@pytest.mark.parametrize("interface,channel", list(_buses()),  # ids without the random part:
                         ids=lambda x: "group" if x.startswith("239.") else x.split("-")[0])
def test_a_bus_logged_through_its_taps_has_one_channel(tmp_path, suffix, interface, channel):
    """As the demo and acc_hil log: the plant's backend's taps (received frames carry the
    bus's channel, sent ones none)."""
    path = tmp_path / f"bus{suffix}"
    log = MessageLog(path)
    with CanBackend(interface, channel, name="plant", timeout=0.5) as plant, \
            CanBackend(interface, channel, name="ecu", timeout=0.0) as ecu:
        plant.add_tap(rx=log, tx=log.sent)
        got = 0
        for k in range(10):
            plant.write(can.Message(arbitration_id=0x100, data=bytes([k, 0, 0, 0]),
                                    is_extended_id=False))
            ecu.write(can.Message(arbitration_id=0x200, data=bytes([k, 1, 1, 1]),
                                  is_extended_id=False))
            got += plant.read(GENEROUS_S) is not None
    log.stop()
    back = _read(path)
    assert got == 10 and len(back) == 20
    assert {m.channel for m in back} == {READ_BACK[suffix]}
    assert sum(m.is_rx for m in back) == 10


class _FailingWriter:
    """A ``can.Logger`` whose writes fail (a full disk, a format that refuses a frame)."""

    def __init__(self, inner):
        self.inner = inner

    def on_message_received(self, msg):
        raise OSError(28, "No space left on device")

    def stop(self):
        self.inner.stop()


@pytest.mark.timing
def test_a_write_that_fails_in_the_last_flush_is_raised_by_stop_not_a_hang(tmp_path):
    """Found with this file's corpus before the channel fix: python-can's BLF writer cannot
    pack channel 445520752547, the frames were still held in the 2 s reorder window, the
    error came in stop()'s flush, and the writer thread went back to wait for a message
    that never came: stop() hung for ever."""
    from cosim.errors import OutputError
    log = MessageLog(tmp_path / "f.asc")  # held 2 s: written only by stop()'s flush
    log._writer = _FailingWriter(log._writer)
    for msg in _frames(3):
        log(msg)
    done = []

    def stop():
        try:
            log.stop()
        except OutputError as exc:
            done.append(exc)

    import threading
    t = threading.Thread(target=stop, daemon=True)
    t.start()
    t.join(GENEROUS_S)
    assert not t.is_alive(), "MessageLog.stop() hangs after a failed final flush"
    assert done and "No space left on device" in str(done[0])
