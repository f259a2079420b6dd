"""``cosim hil run`` and ``cosim replay``: model files in tmp_path, CAN on python-can's
virtual bus (a unique channel per test), in process through ``cosim.cli.main`` and in a
subprocess for the entry point and the signals."""

import json
import pathlib
import signal
import struct
import subprocess
import sys
import time
import uuid

import pytest

from cosim.cli import main
from cosim.writers import read_csv
from hil.backend import Backend
from hil.cli import Interfaces, _parse_overrides
from hil.errors import HILError
from hil.registry import register_backend
from tests.timing_plugin import GENEROUS_S, assert_honest, judge_figure

can = pytest.importorskip("can")

ROOT = pathlib.Path(__file__).resolve().parents[3]

MODEL = '''
import struct

from blocks.math import Gain, Sum
from blocks.sources import Constant, Sine
from cosim import Block, DiagramBuilder

HIL = {"period_s": 1e-3, "duration_s": 0.2, "overrun": "skip"}
SIMULATION = {"solver": "rk4"}


class CanTx(Block):
    """Sends its input as a little-endian double every ``period_s`` (a stand-in bridge)."""

    def __init__(self, name, backend, period_s):
        super().__init__(name)
        self.u = self.declare_input("u")

        def send(ctx):
            import can
            backend.write(can.Message(arbitration_id=0x100, is_extended_id=False,
                                      data=struct.pack("<d", ctx.input(self.u))))
        self.declare_periodic_update(period_s, send)


def build(io):
    bus = io.open("can", interface="virtual", channel=CHANNEL)
    b = DiagramBuilder("hilmodel")
    s = b.add(Sine("s", 1.0, 5.0))
    c = b.add(Constant("c", 1.0))
    add = b.add(Sum("add", "++"))
    g = b.add(Gain("g", 2.0))
    tx = b.add(CanTx("tx", bus, 0.01))
    b.connect(s.y, add.ins[0])
    b.connect(c.y, add.ins[1])
    b.connect(add.y, g.u)
    b.connect(g.y, tx.u)
    return b.build()
'''


def _channel():
    return f"hilcli-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def model(tmp_path):
    channel = _channel()
    p = tmp_path / "hil_model.py"
    p.write_text(f"CHANNEL = {channel!r}\n" + MODEL)
    return p, channel


def _summary(out):
    return json.loads((out / "summary.json").read_text())


def test_no_realtime_run_writes_results_telemetry_and_summary(model, tmp_path, capsys):
    path, channel = model
    out = tmp_path / "o"
    listener = can.Bus(interface="virtual", channel=channel)
    try:
        assert main(["hil", "run", str(path), "--no-realtime", "--out", str(out),
                     "--set", "c.value=3"]) == 0
        got = [listener.recv(1.0) for _ in range(21)]
    finally:
        listener.shutdown()
    res = read_csv(out / "results.csv")
    assert len(res.time) == 201 and res.time[-1] == pytest.approx(0.2)
    assert res["g.y"][0] == pytest.approx(6.0)  # --set: 2 * (sin(0) + 3)
    assert (out / "telemetry.csv").read_text().count("\n") == 201
    s = _summary(out)
    assert s["status"] == "complete" and s["mode"] == "virtual" and s["set"] == {"c.value": 3}
    assert s["telemetry"]["frames"] == 200
    assert s["interfaces"]["can"]["counters"]["frames_out"] == 21  # every 10 ms, 0..0.2 s
    assert struct.unpack("<d", got[0].data)[0] == pytest.approx(6.0)
    assert struct.unpack("<d", got[1].data)[0] == pytest.approx(2 * (3 + 0.30901699437), 1e-9)
    text = capsys.readouterr().out
    assert "200 frames of 1000 us" in text and "frames_out=21" in text


@pytest.mark.timing
def test_short_real_time_run(model, tmp_path):
    from tests.unit.hil.busy import busy
    path, _ = model
    out = tmp_path / "rt"
    with busy():
        rc = main(["hil", "run", str(path), "--out", str(out), "--duration", "0.2"])
    rows = (out / "telemetry.csv").read_text().splitlines()[1:]
    s = _summary(out)
    assert rc == s["verdict"]["exit_code"]  # a loaded machine may fail the lateness budget
    assert_honest(s["verdict"])  # and then says why, from the runner's figures
    tel = s["telemetry"]
    assert tel["frames"] + tel["skipped_frames"] == 200 and len(rows) == tel["frames"]
    assert s["mode"] == "realtime" and 0.15 < s["wall_s"]
    assert len(read_csv(out / "results.csv").time) == 201  # the model integrates every step
    # how many frames ran and how long the run took is the machine's
    judge_figure(150 <= tel["frames"], f"{tel['frames']} of 200 frames ran, at least 150")
    judge_figure(s["wall_s"] < 2.0, f"a 0.2 s run took {s['wall_s']:.2f} s, at most 2 s")


def test_interface_overrides_take_effect(model, tmp_path):
    path, _ = model
    other = _channel()
    listener = can.Bus(interface="virtual", channel=other)
    try:
        assert main(["hil", "run", str(path), "--no-realtime", "--out", str(tmp_path / "o"),
                     "--duration", "0.05", "--io", f"can.channel={other}",
                     "--io", "can.bitrate=500000"]) == 0
        assert listener.recv(1.0).arbitration_id == 0x100  # the frames went to `other`
    finally:
        listener.shutdown()
    opts = _summary(tmp_path / "o")["interfaces"]["can"]["options"]
    assert opts == {"interface": "virtual", "channel": other, "bitrate": 500000, "name": "can"}


def test_bare_override_replaces_the_python_can_interface(model, tmp_path, capsys):
    path, _ = model
    rc = main(["hil", "run", str(path), "--no-realtime", "--out", str(tmp_path / "o"),
               "--duration", "0.01", "--io", "can=udp_multicast",
               "--io", "can.channel=239.255.74.163"])
    if rc != 0:  # a machine without a multicast route
        pytest.skip(f"udp_multicast unavailable: {capsys.readouterr().err}")
    can_ = _summary(tmp_path / "o")["interfaces"]["can"]
    assert can_["options"]["interface"] == "udp_multicast"
    assert can_["where"].startswith("can udp_multicast:'239.255.74.163'")


class _Dummy(Backend):
    kind = "cli-dummy-a"

    def __init__(self, port="p0", *, name=None, timeout=1.0):
        super().__init__(name=name, timeout=timeout)
        self.port = port

    @property
    def channel(self):
        return self.port

    def _open(self):
        pass

    def _close(self):
        pass

    def _read_internal(self, timeout):
        return None

    def _write(self, frame, timeout):
        pass


class _DummyB(_Dummy):
    kind = "cli-dummy-b"


def test_bare_override_replaces_the_kind_without_an_interface_option():
    register_backend("cli-dummy-a", _Dummy, replace=True)
    register_backend("cli-dummy-b", _DummyB, replace=True)
    io = Interfaces(_parse_overrides(["dev=cli-dummy-b", "dev.port=7"]))
    try:
        b = io.open("dev", backend="cli-dummy-a", port="p1")
        assert type(b) is _DummyB and b.port == 7 and b.name == "dev" and b.is_open
        io.check_overrides()
        with pytest.raises(HILError, match="already open"):
            io.open("dev", backend="cli-dummy-a")
    finally:
        io.close()
    assert not b.is_open
    io = Interfaces(_parse_overrides(["dev.backend=cli-dummy-a", "imu.port=1"]))
    io.open("dev", backend="cli-dummy-b")
    with pytest.raises(HILError, match="opens no interface 'imu'; it opened: dev"):
        io.check_overrides()
    io.close()


def test_override_of_an_unknown_role_lists_the_opened_ones(model, tmp_path, capsys):
    path, _ = model
    rc = main(["hil", "run", str(path), "--no-realtime", "--out", str(tmp_path / "o"),
               "--io", "radar=udp_multicast"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "--io radar: the model opens no interface 'radar'; it opened: can" in err
    assert "Traceback" not in err


def test_the_old_spelling_of_io_still_works_with_a_note(model, tmp_path, capsys):
    """Issue 30 item 8: --interface meant three things across the commands; the I/O
    override is --io now, the old spelling still works and says the new one (once)."""
    path, _ = model
    rc = main(["hil", "run", str(path), "--no-realtime", "--out", str(tmp_path / "o"),
               "--interface", "radar=udp_multicast", "--interface", "can.bitrate=1"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("note: --interface is now --io") == 1
    assert "--io radar: the model opens no interface 'radar'" in err


def test_failing_build_is_one_clear_line(tmp_path, capsys):
    p = tmp_path / "broken.py"
    p.write_text("def build(io):\n    io.open('can', interface='virtual', channel='x1')\n"
                 "    raise ValueError('no plant here')\n")
    assert main(["hil", "run", str(p), "--no-realtime", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0]
    assert f"{p}:3: build() failed: ValueError: no plant here" in err[0]
    assert main(["hil", "run", str(p), "--no-realtime", "--traceback"]) == 2
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.timing
def test_bad_set_and_bad_interface_syntax(model, tmp_path, capsys):
    path, _ = model
    o = ["--no-realtime", "--out", str(tmp_path / "o")]
    assert main(["hil", "run", str(path), *o, "--set", "c.valu=2"]) == 2
    assert "--set c.valu=2: parameter 'valu' not found on block 'c'" in capsys.readouterr().err
    assert main(["hil", "run", str(path), *o, "--io", "can"]) == 2
    assert "expected ROLE=VALUE" in capsys.readouterr().err


@pytest.mark.timing
def test_the_verdict_is_printed_written_and_the_exit_status(model, tmp_path, capsys):
    """Issue 22 item 1: every run ends with a verdict; a failed check is exit status 1."""
    path, _ = model
    out = tmp_path / "v"
    assert main(["hil", "run", str(path), "--no-realtime", "--out", str(out)]) == 0
    s = _summary(out)
    assert s["verdict"]["passed"] and s["verdict"]["failed"] == []
    # summary.json has the I/O figures the verdict checked (issue 22 item 1)
    io = s["verdict"]["io"]
    assert io["link_losses"] == io["frames_lost"] == io["stale_episodes"] == 0
    assert "verdict PASS hilmodel: 11 checks within budget" in capsys.readouterr().out
    # on the wall clock every frame wakes a little late: a budget of 0 us fails
    assert main(["hil", "run", str(path), "--out", str(out), "--duration", "0.05",
                 "--budget", "lateness_p99_us=0", "--budget", "overruns=none",
                 "--budget", "skipped_frames=none"]) == 1
    s = _summary(out)
    assert s["verdict"]["failed"] == ["lateness_p99_us"] and s["status"] == "complete"
    line = capsys.readouterr().out
    # the diagnosis leads with the cause with the most overruns (under load: stalls or
    # work spikes), and names other work
    assert "verdict FAIL hilmodel: timing failed (lateness_p99_us): " in line
    assert "other work took the CPU" in line
    assert "1 of 11 checks failed: lateness p99" in line
    assert main(["hil", "run", str(path), "--no-realtime", "--out", str(out),
                 "--budget", "overrun=1"]) == 2
    assert "budget names: overruns, skipped_frames" in capsys.readouterr().err


@pytest.mark.timing
def test_a_cpu_that_does_not_exist_is_bad_input_and_writes_nothing(model, tmp_path, capsys):
    """Issue 22 item 10: --cpus 7 gave 'OSError: [Errno 22]' and still wrote output."""
    import os
    path, _ = model
    out = tmp_path / "never"
    assert main(["hil", "run", str(path), "--cpus", "999", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    avail = ", ".join(map(str, sorted(os.sched_getaffinity(0))))
    assert f"--cpus: real-time runner: CPU 999 is not available to this process (cpus=[999]); " \
           f"available: {avail}" in err
    assert not out.exists()


def test_the_interfaces_go_only_where_the_build_function_takes_them(tmp_path):
    """Issue 22 item 10: the I/O object was passed as a model file's first parameter."""
    p = tmp_path / "noio.py"
    p.write_text("from blocks.sources import Constant\nfrom cosim import DiagramBuilder\n"
                 "SEEN = []\n"
                 "def build(gain=2.0):\n    SEEN.append(gain)\n    b = DiagramBuilder('noio')\n"
                 "    b.add(Constant('c', gain))\n    return b.build()\n")
    out = tmp_path / "o"
    assert main(["hil", "run", str(p), "--no-realtime", "--duration", "0.01",
                 "--out", str(out)]) == 0
    mod = sys.modules["cosim_hil_model_noio"]
    assert mod.SEEN == [2.0]
    p.write_text("def build(a, b):\n    pass\n")
    assert main(["hil", "run", str(p), "--no-realtime", "--out", str(out)]) == 2


def test_subprocess_entry_point(model, tmp_path):
    path, _ = model
    out = tmp_path / "sub"
    r = subprocess.run([sys.executable, "-m", "cosim", "hil", "run", str(path),
                        "--no-realtime", "--duration", "0.1", "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert len(read_csv(out / "results.csv").time) == 101 and "real time: 100 frames" in r.stdout


@pytest.mark.timing
@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_ends_a_real_time_run_cleanly(model, tmp_path, sig, code):
    path, _ = model
    out = tmp_path / "sig"
    proc = subprocess.Popen([sys.executable, "-m", "cosim", "hil", "run", str(path),
                             "--duration", "30", "--out", str(out)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()  # printed just before the frame loop starts
        assert first.startswith("model 'hilmodel'"), proc.stderr.read()
        time.sleep(0.5)
        t0 = time.monotonic()
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=GENEROUS_S)
        ended_s = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, stderr
    assert f"stopped by {sig.name}" in stderr and "Traceback" not in stderr
    res = read_csv(out / "results.csv")
    assert 0.2 < res.time[-1] < 10
    s = _summary(out)
    assert s["status"] == f"stopped by {sig.name}"
    assert s["telemetry"]["stopped_by"] == sig.name
    assert s["interfaces"]["can"]["counters"]["frames_out"] > 10
    assert (out / "telemetry.csv").read_text().count("\n") == s["telemetry"]["frames"] + 1
    judge_figure(ended_s < 5, f"the run ended {ended_s:.1f} s after {sig.name}, at most 5 s")


# ------------------------------------------------------------------ replay
def _record_log(path, frames):
    """Send ``frames`` on a virtual bus and log what a second bus receives."""
    from hil.can.log import MessageLog
    ch = _channel()
    tx, rx = can.Bus(interface="virtual", channel=ch), can.Bus(interface="virtual", channel=ch)
    try:
        with MessageLog(path) as log:
            for m in frames:
                tx.send(m)
                log(rx.recv(1.0))
                time.sleep(0.002)
    finally:
        tx.shutdown()
        rx.shutdown()


@pytest.mark.timing
def test_replay_fast_sends_every_frame_in_order(tmp_path, capsys):
    frames = [can.Message(arbitration_id=0x100 + i, data=bytes([i, i + 1, 0xAB]),
                          is_extended_id=i % 3 == 0) for i in range(20)]
    log = tmp_path / "trace.asc"
    _record_log(log, frames)
    ch = _channel()
    listener = can.Bus(interface="virtual", channel=ch)
    try:
        assert main(["replay", str(log), "--interface", "virtual", "--channel", ch,
                     "--fast", "--loop", "2"]) == 0
        got = [listener.recv(1.0) for _ in range(40)]
        assert listener.recv(0.05) is None
    finally:
        listener.shutdown()
    for g, m in zip(got, frames * 2, strict=True):
        assert (g.arbitration_id, g.is_extended_id, bytes(g.data)) == \
            (m.arbitration_id, m.is_extended_id, bytes(m.data))
    out = capsys.readouterr().out
    assert f"replay: 40 frames sent on can virtual:'{ch}'" in out and "2 loops" in out


@pytest.mark.timing
def test_replay_keeps_the_timing(tmp_path, capsys):
    log = tmp_path / "trace.asc"
    _record_log(log, [can.Message(arbitration_id=1, data=[i]) for i in range(10)])
    t0 = time.perf_counter()
    assert main(["replay", str(log), "--channel", _channel(), "--speed", "0.5"]) == 0
    wall = time.perf_counter() - t0
    assert wall > 2 * 9 * 0.002 * 0.9  # the log spans >= 18 ms; at half speed >= 36 ms
    assert "timing error mean" in capsys.readouterr().out


@pytest.mark.timing
def test_replay_print_decodes_with_the_acc_dbc(tmp_path, capsys):
    from hil.can.dbc import ACC_DBC, CanDatabase
    db = CanDatabase(ACC_DBC)
    log = tmp_path / "acc.asc"
    _record_log(log, [db.encode("ACC_CMD", {"throttle": 0.25, "brake_torque": 100.0}),
                      can.Message(arbitration_id=0x7FF, data=[1, 2], is_extended_id=False)])
    assert main(["replay", str(log), "--print", "--dbc", "acc", "--allow-unknown-ids"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[1:] == ["ACC_CMD", "throttle=0.25", "brake_torque=100", "N*m"]
    assert lines[1].split()[1:] == ["0x7FF", "[2]", "01", "02"]
    assert lines[2].startswith("replay: 2 frames decoded (not sent)")


def test_replay_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "x.txt"
    bad.write_text("hello")
    assert main(["replay", str(bad)]) == 2  # bad input: nothing sent
    err = capsys.readouterr().err
    assert "cannot read" in err and "python-can reads .asc" in err and "Traceback" not in err
    assert main(["replay", str(tmp_path / "missing.asc")]) == 2
    assert "not found" in capsys.readouterr().err
