"""The serial and DAQ I/O paths end to end: bridge blocks in a diagram paced by the
real-time runner, a device on the far side of a pty (serial) or of a loopback socket
(Modbus TCP, OPC UA), and the link pulled in the middle of the run.

Each test measures, in simulated time (which the runner keeps aligned with the wall
clock): the outage detection delay (link lost -> ``ok`` 0), the recovery delay (device
back -> ``ok`` 1) and that the values before and after the outage are what the device
computes from what the diagram sent, to the resolution of the data format and within a
few periods of transport delay.  Timing assertions have generous margins (a loaded
2-core VM): the exact figures go to the log (``-o log_cli=true`` shows them).  Every test
runs against two busy processes (started and stopped by the test: :mod:`tests.unit.hil.busy`)
and asserts what the runner reports (its counts and verdict), not the wall time.

The devices and their clients are fixtures (one pair per transport); the diagrams, the
real-time run and the checks shared by the transports are the helpers below.
"""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest

from blocks.sources import Sine
from cosim import DiagramBuilder, Simulator
from cosim.writers import CsvWriter, read_csv
from hil.bridges import DaqInput, DaqOutput, SerialReceive, SerialTransmit
from hil.daq import ChannelSpec
from hil.daq.modbus import ModbusDaq, ModbusPoint
from hil.daq.opcua import OpcUaDaq
from hil.runner import RealTimeRunner, fifo_permitted
from hil.serial import Field, Layout, SerialBackend
from hil.serial.emulator import DeviceEmulator
from tests.unit.hil.busy import busy

pytestmark = [pytest.mark.slow, pytest.mark.timing]  # real-time runs against busy processes

log = logging.getLogger("test_hil_io_paths")


@pytest.fixture(autouse=True)
def loaded_machine():
    """Two busy processes during every test of this module."""
    with busy() as procs:
        yield procs


# ------------------------------------------------------------------ helpers
class Schedule:
    """Actions at simulated times, run from the runner's ``on_frame``: each in its own
    thread (a server restart takes seconds; the frame must not wait for it), or in the
    frame (``inline=True``).  ``started[name]`` is the simulated time at which an action
    was launched, ``done[name]`` the first frame end at which it had finished."""

    def __init__(self, actions: list[tuple[float, str, object, bool]],
                 stop_when=None) -> None:
        self.actions = sorted(actions, key=lambda a: a[0])
        self.stop_when = stop_when  # stop_when(t) -> True ends the run after this frame
        self.started: dict[str, float] = {}
        self.done: dict[str, float] = {}
        self._finished: dict[str, threading.Event] = {}
        self._threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []

    def _run(self, name: str, fn) -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(exc)
        finally:
            self._finished[name].set()

    def __call__(self, runner: RealTimeRunner, k: int) -> None:
        t = runner.telemetry.t_sim[-1]
        for t_at, name, fn, inline in self.actions:
            if name in self.started or t < t_at - 1e-9:
                continue
            # one action per frame, in order: a later one waits until the earlier is done
            earlier = [a[1] for a in self.actions if a[0] < t_at]
            if any(e not in self.done for e in earlier):
                break
            self.started[name] = t
            self._finished[name] = threading.Event()
            if inline:
                self._run(name, fn)
            else:
                th = threading.Thread(target=self._run, args=(name, fn), daemon=True)
                self._threads.append(th)
                th.start()
            break
        for name, ev in self._finished.items():
            if name not in self.done and ev.is_set():
                self.done[name] = t
        if self.stop_when is not None and self.stop_when(t):
            runner.stop("seen enough")

    def join(self, timeout: float = 10.0) -> None:
        for th in self._threads:
            th.join(timeout)


class Copier:
    """The far side's "device" of the DAQ tests: ``step()`` every ``period_s`` in a
    thread until stopped; errors while the server is down are expected and ignored."""

    def __init__(self, step, period_s: float) -> None:
        self.step, self.period_s = step, period_s
        self.stop_ev = threading.Event()
        self.copies = self.failures = 0
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stop_ev.wait(self.period_s):
            try:
                self.step()
                self.copies += 1
            except Exception:  # noqa: BLE001 - the server is restarting
                self.failures += 1

    def __enter__(self) -> Copier:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_ev.set()
        self.thread.join(5.0)


def lags(got: np.ndarray, sent: np.ndarray, tol: float, max_lag: int) -> np.ndarray:
    """Per sample ``k``: the smallest ``d`` in ``1..max_lag`` with
    ``|got[k] - sent[k - d]| <= tol``, or 0 when no such ``d`` exists."""
    out = np.zeros(len(got), dtype=int)
    for d in range(max_lag, 0, -1):
        hit = np.zeros(len(got), dtype=bool)
        hit[d:] = np.abs(got[d:] - sent[:-d]) <= tol
        out[hit] = d
    return out


def first_at_or_after(t: np.ndarray, cond: np.ndarray, t0: float) -> float:
    """The first time ``>= t0`` where ``cond`` holds (inf when never)."""
    idx = np.flatnonzero((t >= t0 - 1e-9) & cond)
    return float(t[idx[0]]) if idx.size else np.inf


def check_tracking(t, got, expected, window, tol, what):
    """Every sample in ``window`` is what the device computed from a command sent 1-10
    periods earlier; most (90 %) within 1-3 periods (the transport delay)."""
    m = (t >= window[0] - 1e-9) & (t <= window[1] + 1e-9)
    assert m.sum() >= 10, f"{what}: window {window} holds only {m.sum()} samples"
    d = lags(got, expected, tol, 10)[m]
    bad = np.flatnonzero(d == 0)
    assert bad.size == 0, (f"{what}: {bad.size} of {m.sum()} samples match nothing the device "
                           f"computed in the previous 10 periods, first at t = "
                           f"{t[m][bad[0]]:.3f} s: {got[m][bad[0]]!r}")
    assert np.mean((d >= 1) & (d <= 3)) >= 0.9, (
        f"{what}: transport delay over 3 periods too often: {np.bincount(d)}")
    return d


def check_csv(path, res, n_rows):
    """The streamed file has every row the run produced, and says the run completed."""
    disk = read_csv(path)
    assert disk.diagnostics["status"] == "complete"
    assert len(disk.time) == n_rows == len(res.time)
    np.testing.assert_allclose(disk.time, res.time, atol=1e-12)
    for name in res.signals:
        np.testing.assert_array_equal(disk[name], res[name])


def check_outage(t, ok, t_down, t_restore, t_up, *, detect_within, recover_within, what):
    """``ok``: 1 before ``t_down`` (the device went away), 0 from ``t_down +
    detect_within`` until ``t_restore`` (by then the device cannot answer yet: a server may
    answer before its start call has returned), 1 again within ``recover_within`` after
    ``t_up`` (it was back) and (mostly) so to the end.  Returns the measured detection and
    recovery delays and the time ``ok`` came back."""
    before = (t >= 0.2) & (t <= t_down)
    assert np.mean(ok[before] == 1.0) >= 0.95, f"{what}: ok before the outage: {ok[before]}"
    t_lost = first_at_or_after(t, ok == 0.0, t_down)
    detect = t_lost - t_down
    assert detect <= detect_within, f"{what}: outage seen {detect:.3f} s after it began"
    during = (t >= t_down + detect_within) & (t < t_restore - 1e-9)
    assert during.sum() >= 3 and np.all(ok[during] == 0.0), (
        f"{what}: ok during the outage ({t_down:.2f}..{t_restore:.2f} s): {ok[during]}")
    t_back = first_at_or_after(t, ok == 1.0, t_restore)
    recover = t_back - t_up
    assert recover <= recover_within, (
        f"{what}: ok back {recover:.3f} s after the device came back (limit "
        f"{recover_within} s)")
    after = t >= t_back + 0.1
    assert after.sum() >= 5 and np.mean(ok[after] == 1.0) >= 0.95, (
        f"{what}: ok after the recovery: {ok[after]}")
    return detect, recover, t_back


def check_tracking_before_and_after(t, got, expected, tol, t_down, after, what):
    """:func:`check_tracking` from 0.1 s to the outage and in the window ``after``."""
    d_before = check_tracking(t, got, expected, (0.1, t_down), tol, f"{what} before")
    d_after = check_tracking(t, got, expected, after, tol, f"{what} after")
    return d_before, d_after


def check_daq_link_lost_and_regained(lc, inp, out):
    """The DAQ link saw the outage, and the bridges' error counts are its lost reads and
    writes.  Returns the bridges' stats."""
    assert lc.disconnects >= 1 and lc.reconnects >= 1 and lc.lost_reads >= 1
    st_in, st_out = inp.stats(), out.stats()
    assert st_in["errors"] >= 1 and st_out["errors"] >= 1
    assert st_in["errors"] == lc.lost_reads and st_out["errors"] == lc.lost_writes
    return st_in, st_out


def sine_loop_sim(tmp_path, name, period, sine, send, into, receive, record):
    """The diagram ``name``: ``sine.y -> send.<into>``, and ``receive`` (fed by the device);
    rk4 at ``period``, recording ``s.y`` and ``record``, streamed to ``<name>.csv``.
    Returns the simulator and the CSV path."""
    b = DiagramBuilder(f"{name}_path")
    s = b.add(sine)
    b.add(send)
    b.add(receive)
    b.connect(s.y, getattr(send, into))
    ports = ["s.y", *record]
    csv_path = tmp_path / f"{name}.csv"
    sim = Simulator(b.build(), solver="rk4", dt=period, record=ports,
                    observers=[CsvWriter(csv_path, ports, every=1, chunk=10)])
    return sim, csv_path


def daq_loop_sim(tmp_path, name, daq, period, frequency_hz):
    """Sine (5 V) -> DaqOutput ``out`` (channel ``valve``); DaqInput ``inp`` (channel
    ``pos``) records ``inp.pos`` and ``inp.ok``.  Returns the simulator, the CSV path and
    the two bridges."""
    out = DaqOutput("out", daq, period, channels=["valve"], on_error="hold")
    inp = DaqInput("inp", daq, period, channels=["pos"], on_error="hold")
    sim, csv_path = sine_loop_sim(
        tmp_path, name, period, Sine("s", amplitude=5.0, frequency_hz=frequency_hz, unit="V"),
        out, "valve", inp, ["inp.pos", "inp.ok"])
    return sim, csv_path, out, inp


#: SCHED_FIFO priority of the loop where the process may use it (root or CAP_SYS_NICE)
RT_PRIORITY = 20


def realtime_options() -> dict:
    """The runner's real-time set-up: SCHED_FIFO where permitted for the frame and, one
    level below, for the process's other threads (the device emulator, the servers: they
    share the GIL with the frame), the collector frozen, 1 ns timer slack.

    Measured with two busy processes on the 2-core machine, serial test: without it
    frames are up to 25 ms late at a 10 ms period (11-27 of 300 skipped per run); with
    SCHED_FIFO on the frame only, still 6-25 ms when the emulator's threads, preempted by
    the load while holding the GIL, make the frame wait, and once the emulator stalled for
    130 ms (the receiver went stale before the unplug: a failed run); with the helpers at
    SCHED_FIFO too, frames ran 1.2 ms at most."""
    opts = {"gc_mode": "freeze", "timer_slack_ns": 1}
    if fifo_permitted(RT_PRIORITY):
        opts.update(priority=RT_PRIORITY, helper_priority=RT_PRIORITY - 1)
    return opts


def run_rt(sim, period, duration, schedule):
    rt = RealTimeRunner(sim, period, overrun="skip", on_frame=schedule, **realtime_options())
    try:
        res = rt.run(duration)
    finally:
        schedule.join()  # a server (re)start still running must end before the clean-up
    assert not schedule.errors, schedule.errors
    tel = rt.telemetry
    log.warning("run: %s; %s; %s", realtime_options(), tel.summary(),
                rt.verdict.line())  # also when a check fails
    # the run completed in real time: every frame ran or was skipped, up to the end (or
    # to the frame where the schedule stopped it)
    t_end = res.time[-1]
    if tel.stopped_by:
        assert tel.stopped_by == "seen enough" and t_end < duration
    else:
        assert t_end == pytest.approx(duration)
    assert tel.frames + tel.skipped == round(t_end / period) == len(res.time) - 1
    # the verdict counts the outage the test causes (a link loss, a stale episode), and
    # the recording lost nothing
    assert rt.verdict.io["link_losses"] + rt.verdict.io["stale_episodes"] >= 1
    assert rt.verdict.io["recording_dropped"] == 0
    # the results file was written by a writer thread, outside the frame, and lost nothing
    rec = tel.as_dict()["recording"]
    assert rec["threaded"] == 1 and rec["chunks_dropped"] == 0 and not rec["errors"]
    return res, rt


# ------------------------------------------------------------------ serial
# the actuator's records: a command, and its position sensor (numbered); pos = gain * cmd
ACTUATOR_GAIN, ACTUATOR_LSB = 0.5, 1e-3
CMD_LAYOUT = Layout([Field("cmd", "h", scale=ACTUATOR_LSB, unit="m")], name="cmd")
MEAS_LAYOUT = Layout([Field("seq", "H"), Field("pos", "h", scale=ACTUATOR_LSB, unit="m")],
                     name="meas")


@pytest.fixture
def pty_actuator():
    """The actuator, emulated on the far side of a pty (COBS, CRC-16, 115200 Bd)."""
    pytest.importorskip("serial")
    seq = [0]

    def actuator(payload: bytes) -> bytes:
        """Answers each command with its position sensor: pos = gain * cmd, numbered."""
        cmd = CMD_LAYOUT.unpack(payload)["cmd"]
        seq[0] += 1
        return MEAS_LAYOUT.pack(seq=seq[0] & 0xFFFF, pos=ACTUATOR_GAIN * cmd)

    emu = DeviceEmulator(actuator, framing="cobs", crc="crc16-ccitt-false", baudrate=115200,
                         name="actuator").start()
    yield emu
    emu.stop()  # idempotent: a test that got to its checks has stopped it already


@pytest.fixture
def actuator_backend(pty_actuator):
    """The host's side of the pty, reconnecting after an unplug."""
    backend = SerialBackend(pty_actuator.port, 115200, "cobs", "crc16-ccitt-false", name="act",
                            reconnect=True, backoff=(0.01, 0.2)).open()
    yield backend
    backend.close()  # idempotent


def test_serial_actuator_on_a_pty_survives_unplug_and_plug(tmp_path, pty_actuator,
                                                           actuator_backend):
    """Sine -> SerialTransmit ~ pty ~ emulated actuator ~ pty -> SerialReceive, at 10 ms
    in real time, the adapter pulled at 1.0 s and put back at 1.5 s."""
    period, duration, gain, lsb = 0.01, 3.0, ACTUATOR_GAIN, ACTUATOR_LSB
    emu, backend = pty_actuator, actuator_backend
    tx = SerialTransmit("tx", backend, period, layout=CMD_LAYOUT, on_error="hold")
    rx = SerialReceive("rx", backend, period, layout=MEAS_LAYOUT, stale_after_s=0.03,
                       on_stale="hold", on_error="hold")
    sim, csv_path = sine_loop_sim(
        tmp_path, "serial", period, Sine("s", amplitude=2.0, frequency_hz=0.5, unit="m"),
        tx, "cmd", rx, ["rx.pos", "rx.seq", "rx.ok"])
    sched = Schedule([(1.0, "unplug", emu.unplug, True), (1.5, "plug", emu.plug, True)])
    res, rt = run_rt(sim, period, duration, sched)
    counters = backend.counters
    backend.close()
    emu.stop()  # before the check: a callback failing while the device winds down counts
    emu.check()  # the device callback never failed

    t, ok = res.time, res["rx.ok"]
    t_down, t_up = sched.done["unplug"], sched.done["plug"]
    detect, recover, t_back = check_outage(t, ok, t_down, t_up, t_up, detect_within=0.2,
                                           recover_within=0.5, what="serial")
    # what the device computes from each command the diagram sent (both quantized by the
    # layout), matched with the transport delay
    cmd = np.round(res["s.y"] / lsb) * lsb
    expected = np.round(gain * cmd / lsb) * lsb
    tol = 1.5 * lsb
    d_before, d_after = check_tracking_before_and_after(
        t, res["rx.pos"], expected, tol, t_down, (t_back + 0.05, duration), "serial")
    # the sensor's sequence counter: no record reordered, and it went on after the replug
    sq = res["rx.seq"][t >= 0.1]
    assert np.all(np.diff(sq) >= 0) and sq[-1] > res["rx.seq"][np.searchsorted(t, t_down)]
    assert counters.disconnects >= 1 and counters.reconnects >= 1
    st_tx, st_rx = tx.stats(), rx.stats()
    assert st_tx["errors"] >= 1 and st_rx["stale_events"] >= 1
    # about one record per frame outside the outage (lost: the outage and some margin)
    assert st_rx["received"] >= 0.7 * (duration - (t_back - t_down)) / period
    check_csv(csv_path, res, round(duration / period) + 1)
    log.warning("serial: outage seen after %.3f s, recovered %.3f s after plug; delays "
                "before %s after %s; backend %s; tx %s; rx %s; %s", detect, recover,
                np.bincount(d_before), np.bincount(d_after), counters, st_tx, st_rx,
                rt.telemetry.summary())


# ------------------------------------------------------------------ DAQ devices
def valve_and_pos() -> list[ChannelSpec]:
    """The channels of both DAQ devices: the output ``valve``, the input ``pos``."""
    return [ChannelSpec("valve", "ao", (-10, 10), "V"), ChannelSpec("pos", "ai", (-10, 10), "V")]


# ------------------------------------------------------------------ Modbus TCP
MODBUS_LSB = 1e-3  # both registers are int16 in steps of 1 mV


@pytest.fixture
def modbus_server():
    """A Modbus TCP server on a loopback port, restartable on it."""
    pytest.importorskip("pymodbus")
    from tests.unit.hil.test_hil_daq_modbus import Server

    server = Server()
    server.start()
    yield server
    server.close()


@pytest.fixture
def modbus_daq(modbus_server):
    """The client: ``valve`` in holding register 0, ``pos`` in input register 0."""
    daq = ModbusDaq(valve_and_pos(),
                    points={"valve": ModbusPoint(0, dtype="int16", scale=MODBUS_LSB),
                            "pos": ModbusPoint(0, dtype="int16", scale=MODBUS_LSB)},
                    port=modbus_server.port, timeout=0.5, backoff=(0.02, 0.5),
                    name="plc").open()
    yield daq
    daq.close()


def test_modbus_device_survives_a_server_restart(tmp_path, modbus_server, modbus_daq):
    """Sine -> DaqOutput (holding register) ~ Modbus TCP server, whose device copies
    holding 0 to input 0 every 5 ms ~ DaqInput (input register), at 20 ms in real time;
    the server stopped at 1.5 s and restarted on its port at 2.2 s."""
    period, duration, lsb = 0.02, 4.0, MODBUS_LSB
    server, daq = modbus_server, modbus_daq
    sim, csv_path, out, inp = daq_loop_sim(tmp_path, "modbus", daq, period, frequency_hz=0.5)
    sched = Schedule([(1.5, "stop", server.stop, False),
                      (2.2, "start", server.start, False)])
    with Copier(lambda: server.set("input", 0, server.get("holding", 0)), 0.005) as cp:
        res, rt = run_rt(sim, period, duration, sched)
    lc = daq.link_counters

    t, ok = res.time, res["inp.ok"]
    # the outage begins when the stop was launched (reads may fail before it completes)
    t_down, t_restore, t_up = sched.started["stop"], sched.started["start"], sched.done["start"]
    detect, recover, t_back = check_outage(t, ok, t_down, t_restore, t_up, detect_within=0.3,
                                           recover_within=1.0, what="modbus")
    expected = np.round(res["s.y"] / lsb) * lsb
    tol = 1.5 * lsb
    # after the restart the datastore starts at zero: allow a settling period
    d_before, d_after = check_tracking_before_and_after(
        t, res["inp.pos"], expected, tol, t_down, (t_back + 0.2, duration), "modbus")
    st_in, st_out = check_daq_link_lost_and_regained(lc, inp, out)
    assert st_in["reads"] + st_in["errors"] >= 0.9 * duration / period - rt.telemetry.skipped
    assert cp.copies > 100
    check_csv(csv_path, res, round(duration / period) + 1)
    log.warning("modbus: outage seen after %.3f s, recovered %.3f s after restart; delays "
                "before %s after %s; link %s; in %s; out %s; %s", detect, recover,
                np.bincount(d_before), np.bincount(d_after), lc, st_in, st_out,
                rt.telemetry.summary())


# ------------------------------------------------------------------ OPC UA
@pytest.fixture
def opcua_server():
    """An OPC UA server on a loopback URL, restartable on it."""
    pytest.importorskip("asyncua")
    from tests.unit.hil.test_hil_daq_opcua import UaServer

    server = UaServer()
    server.start()
    yield server
    server.close()


@pytest.fixture
def opcua_daq(opcua_server):
    """The client: ``valve`` on the Float node AO0, ``pos`` on the Double node AI0."""
    daq = OpcUaDaq(valve_and_pos(), url=opcua_server.url,
                   nodes={"valve": "ns=2;s=DAQ.AO0", "pos": "ns=2;s=DAQ.AI0"},
                   timeout=0.5, connect_timeout=2.0, backoff=(0.05, 0.5),
                   name="scada").open()
    yield daq
    daq.close()


def test_opcua_device_survives_a_server_restart(tmp_path, opcua_server, opcua_daq):
    """Sine -> DaqOutput (Float node AO0) ~ OPC UA server, whose device copies AO0 to the
    Double node AI0 every 10 ms ~ DaqInput (AI0), at 50 ms in real time; the server is
    stopped at 0.6 s and started again on its URL at once (asyncua takes 1 s to stop and
    1.3-2.5 s to start); the run ends 0.8 s after the client reconnected (7 s at most)."""
    period, duration = 0.05, 7.0  # at most: the run stops 0.8 s after the reconnect
    server, daq = opcua_server, opcua_daq
    sim, csv_path, out, inp = daq_loop_sim(tmp_path, "opcua", daq, period, frequency_hz=0.4)
    reconnected: list[float] = []

    def seen_enough(t: float) -> bool:
        if not reconnected and daq.link_counters.reconnects:
            reconnected.append(t)
        return bool(reconnected) and t >= reconnected[0] + 0.8

    # the start follows at the first frame after the stop has returned
    sched = Schedule([(0.6, "stop", server.stop, False), (0.61, "start", server.start, False)],
                     stop_when=seen_enough)
    with Copier(lambda: server.set("AI0", server.get("AO0")[0]), 0.01) as cp:
        res, rt = run_rt(sim, period, duration, sched)
    lc = daq.link_counters

    t, ok = res.time, res["inp.ok"]
    t_down, t_restore, t_up = sched.started["stop"], sched.started["start"], sched.done["start"]
    assert t_up - t_down >= 0.5  # a real outage: asyncua takes a while to come back
    # asyncua's start spends over a second building its address space before it binds
    # the port: the link is surely down until 0.5 s after the start was launched
    detect, recover, t_back = check_outage(t, ok, t_down, t_restore + 0.5, t_up,
                                           detect_within=0.3, recover_within=1.0,
                                           what="opcua")
    # AO0 is a Float node: the value goes through float32 on its way to AI0
    expected = res["s.y"].astype(np.float32).astype(float)
    tol = 1e-5
    d_before, d_after = check_tracking_before_and_after(
        t, res["inp.pos"], expected, tol, t_down, (t_back + 0.25, t[-1]), "opcua")
    st_in, st_out = check_daq_link_lost_and_regained(lc, inp, out)
    assert cp.copies > 50
    check_csv(csv_path, res, round(t[-1] / period) + 1)
    log.warning("opcua: restart took %.2f s; outage seen after %.3f s, recovered %.3f s after "
                "the server was back; delays before %s after %s; link %s; in %s; out %s; %s",
                t_up - t_down, detect, recover, np.bincount(d_before), np.bincount(d_after),
                lc, st_in, st_out, rt.telemetry.summary())
