"""What a ``cosim hil run`` brings beside its model (issue 30 item 4: ``cosim hil run
examples/acc_hil.py`` wrote no bus log, plot or acceptance, and its documented ECU process
outlived the plant): ``io.open(..., log=)``, ``io.open(..., end_of_session=)``,
``io.spawn(...)`` and ``finish(run)``, on python-can's virtual bus, mostly on the virtual
clock (``--no-realtime``)."""

import json
import sys
import textwrap
import threading
import time
import uuid

import pytest

from cosim.cli import main
from hil.can.log import read_log
from tests.timing_plugin import GENEROUS_S

can = pytest.importorskip("can")

#: ``cosim hil run`` with peer processes started, waited for and ended
pytestmark = pytest.mark.timing

MODEL = '''
import sys

from blocks.sources import Constant
from cosim import Block, DiagramBuilder

HIL = {"period_s": 0.01, "duration_s": 0.5, "overrun": "skip"}


class Tx(Block):
    """Sends its input every 10 ms and reads what arrived (as a receiving bridge does)."""

    def __init__(self, name, bus):
        super().__init__(name)
        self.u = self.declare_input("u")

        def send(ctx):
            import can
            bus.read_available()
            bus.write(can.Message(arbitration_id=0x100, is_extended_id=False,
                                  data=bytes([int(ctx.input(self.u)) % 256])))
        self.declare_periodic_update(0.01, send)


def build(io):
    bus = io.open("can", interface="virtual", channel=CHANNEL, **OPTIONS)
    for name, code in PEERS.items():
        io.spawn([sys.executable, "-c", code], name=name, summary_option="--summary")
    b = DiagramBuilder("peers")
    c = b.add(Constant("c", 7.0))
    tx = b.add(Tx("tx", bus))
    b.connect(c.y, tx.u)
    return b.build()
'''

#: A peer that writes a summary with a passing verdict when it is terminated.
GOOD_PEER = textwrap.dedent("""\
    import json, signal, sys, time
    path = sys.argv[sys.argv.index("--summary") + 1]
    def term(*_):
        check = {"name": "alive", "figure": 1, "limit": 1, "ok": True, "text": "alive"}
        with open(path, "w") as f:
            json.dump({"verdict": {"subject": "x", "checks": [check], "notes": []}}, f)
        sys.exit(0)
    signal.signal(signal.SIGTERM, term)
    print("READY", flush=True)
    while True:
        time.sleep(0.01)
""")
#: A peer that leaves nothing behind.
MUTE_PEER = "import time; print('READY', flush=True); time.sleep(600)"


def _model(tmp_path, options=None, peers=None, finish=""):
    channel = f"peers-{uuid.uuid4().hex[:10]}"
    p = tmp_path / "m.py"
    p.write_text(f"CHANNEL = {channel!r}\nOPTIONS = {options or {}!r}\n"
                 f"PEERS = {peers or {}!r}\n" + MODEL + textwrap.dedent(finish))
    return p, channel


def _summary(out):
    return json.loads((out / "summary.json").read_text())


def test_the_bus_log_is_written_in_the_output_folder(tmp_path, capsys):
    model, _ = _model(tmp_path, {"log": "bus.asc"})
    out = tmp_path / "o"
    assert main(["hil", "run", str(model), "--no-realtime", "--out", str(out)]) == 0
    frames = [m for _, m in read_log(out / "bus.asc")]
    assert len(frames) == 51 and {m.arbitration_id for m in frames} == {0x100}  # 0..0.5 s
    s = _summary(out)
    assert s["interfaces"]["can"]["log"]["written"] == 51
    assert f"bus log of 'can': {out / 'bus.asc'} (51 frames, 0 dropped)" in \
        capsys.readouterr().out
    # the format follows the suffix, also from the command line
    assert main(["hil", "run", str(model), "--no-realtime", "--out", str(out),
                 "--io", "can.log=bus.blf"]) == 0
    assert len(list(read_log(out / "bus.blf"))) == 51


@pytest.mark.parametrize("options,text", [
    ({"end_of_session": "maybe"}, "end_of_session='maybe': use 'send'"),
    ({"log": ""}, "log='': give a file name"),
])
def test_bad_run_options_are_bad_input(tmp_path, capsys, options, text):
    model, _ = _model(tmp_path, options)
    out = tmp_path / "o"
    assert main(["hil", "run", str(model), "--no-realtime", "--out", str(out)]) == 2
    assert text in capsys.readouterr().err and not out.exists()


def test_log_and_end_of_session_are_for_can(tmp_path, capsys):
    p = tmp_path / "daq.py"
    p.write_text(textwrap.dedent('''
        from blocks.sources import Constant
        from cosim import DiagramBuilder
        def build(io):
            io.open("link", backend="serial", port="loop://", log="x.asc")
            b = DiagramBuilder("d")
            b.add(Constant("c", 1.0))
            return b.build()
    '''))
    assert main(["hil", "run", str(p), "--no-realtime", "--out", str(tmp_path / "o")]) == 2
    assert "log= and end_of_session= are for CAN interfaces" in capsys.readouterr().err


def test_end_of_session_send_tells_the_peers(tmp_path):
    model, channel = _model(tmp_path, {"end_of_session": "send"})
    listener = can.Bus(interface="virtual", channel=channel)
    try:
        assert main(["hil", "run", str(model), "--no-realtime",
                     "--out", str(tmp_path / "o")]) == 0
        got = []
        while (m := listener.recv(0.2)) is not None:
            got.append(m)
    finally:
        listener.shutdown()
    assert [m.arbitration_id for m in got].count(0x100) == 51
    assert got[-1].arbitration_id == 0x7F4 and bytes(got[-1].data[4:]) == b"END\0"


def test_end_of_session_stop_ends_the_run_normally(tmp_path):
    """A peer's end-of-session frame ends a real-time run after the current frame: a normal
    end (exit 0, 'complete'), the verdict says why it ended early."""
    from hil.can.session import end_frame
    model, channel = _model(tmp_path, {"end_of_session": "stop"})
    peer = can.Bus(interface="virtual", channel=channel)
    out = tmp_path / "o"
    heard = []

    def plant_peer():  # ends the session once the run is under way (20 frames heard)
        end = time.monotonic() + 60
        while len(heard) < 20 and time.monotonic() < end:
            if (m := peer.recv(0.1)) is not None:
                heard.append(m)
        peer.send(end_frame())

    thread = threading.Thread(target=plant_peer, daemon=True)
    thread.start()
    try:
        t0 = time.monotonic()
        code = main(["hil", "run", str(model), "--duration", "30", "--out", str(out),
                     "--budget", "overruns=none", "--budget", "skipped_frames=none",
                     "--budget", "lateness_p99_us=none"])
        wall = time.monotonic() - t0
        thread.join(GENEROUS_S)
    finally:
        peer.shutdown()
    s = _summary(out)
    assert len(heard) == 20
    assert code == 0 and s["status"] == "complete" and wall < 29
    assert 0.19 <= s["t_end_s"] < 29
    assert "ended the session" in s["telemetry"]["stopped_by"]
    assert s["interfaces"]["can"]["end_of_session"] == "stop"


def test_a_peer_s_verdict_joins_the_run_s_and_its_summary_is_kept(tmp_path, capsys):
    model, _ = _model(tmp_path, peers={"ecu": GOOD_PEER})
    out = tmp_path / "o"
    assert main(["hil", "run", str(model), "--no-realtime", "--out", str(out)]) == 0
    s = _summary(out)
    names = [c["name"] for c in s["verdict"]["checks"]]
    assert "ecu: alive" in names and "peers: overruns" in names
    assert s["verdict"]["subject"] == "peers with ecu"
    assert s["peers"]["ecu"]["exit"] == 0  # SIGTERM after the grace: it wrote and exited
    assert json.loads((out / "ecu_summary.json").read_text())["verdict"]["checks"]
    assert "peer 'ecu': exit 0" in capsys.readouterr().out


def test_a_peer_without_a_verdict_fails_the_run(tmp_path, capsys):
    model, _ = _model(tmp_path, peers={"mute": MUTE_PEER})
    out = tmp_path / "o"
    assert main(["hil", "run", str(model), "--no-realtime", "--out", str(out)]) == 1
    v = _summary(out)["verdict"]
    assert v["failed"] == ["mute: verdict"]
    assert "peer 'mute' gave no verdict: no summary (FileNotFoundError) (exit -15)" in v["line"]


def test_a_peer_that_does_not_start_is_one_clear_line(tmp_path, capsys):
    model, _ = _model(tmp_path, peers={"bad": "import sys; sys.exit('no bus')"})
    assert main(["hil", "run", str(model), "--no-realtime", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "peer 'bad' did not start: it exited with status 1" in err and "no bus" in err


FINISH = '''
def finish(run):
    run.note("figure not judged: the run is short")
    run.check("samples", len(run.results.time) > 10**6, "want a million samples",
              figure=len(run.results.time), limit=10**6)
    path = run.out + "/extra.txt"
    with open(path, "w") as f:
        f.write(str(run.time))
    run.wrote(path)
    run.summary["answer"] = 42
'''


def test_finish_adds_checks_notes_files_and_summary_entries(tmp_path, capsys):
    model, _ = _model(tmp_path, finish=FINISH)
    out = tmp_path / "o"
    assert main(["hil", "run", str(model), "--no-realtime", "--out", str(out)]) == 1
    s = _summary(out)
    v = s["verdict"]
    assert v["failed"] == ["samples"] and "figure not judged" in v["notes"][0]
    assert s["finish"] == {"answer": 42, "files": [str(out / "extra.txt")]}
    assert (out / "extra.txt").read_text() == "0.5"
    text = capsys.readouterr().out
    assert f"wrote: {out / 'extra.txt'}" in text and "figure not judged" in text


def test_a_failing_finish_is_a_failed_check_and_the_rest_is_written(tmp_path, capsys):
    model, _ = _model(tmp_path, finish="def finish(run):\n    raise KeyError('car.v')\n")
    out = tmp_path / "o"
    assert main(["hil", "run", str(model), "--no-realtime", "--out", str(out)]) == 1
    v = _summary(out)["verdict"]
    assert v["failed"] == ["finish"] and "finish() failed: KeyError: 'car.v'" in v["line"]
    model, _ = _model(tmp_path, finish="def finish():\n    pass\n")
    assert main(["hil", "run", str(model), "--no-realtime", "--out", str(out)]) == 2
    assert "finish() takes the run's end as its one parameter" in capsys.readouterr().err


def test_no_peer_outlives_a_failed_build(tmp_path, capsys):
    """A build that fails after starting a peer: the peer is ended with the run."""
    import os
    model, _ = _model(tmp_path, peers={"ecu": GOOD_PEER})
    model.write_text(model.read_text().replace("    b = DiagramBuilder(\"peers\")",
                                               "    raise RuntimeError('late failure')"))
    before = {p for p in os.listdir("/proc") if p.isdigit()} if sys.platform == "linux" \
        else set()
    assert main(["hil", "run", str(model), "--no-realtime", "--out", str(tmp_path / "o")]) == 2
    assert "late failure" in capsys.readouterr().err
    if sys.platform == "linux":
        time.sleep(0.2)
        for pid in {p for p in os.listdir("/proc") if p.isdigit()} - before:
            try:
                cmd = open(f"/proc/{pid}/cmdline", "rb").read()
            except OSError:
                continue
            # this run's peer (its summary goes to this test's folder), not another test
            # run's on this machine
            assert not (b"--summary" in cmd and str(tmp_path).encode() in cmd), \
                "a peer outlived the failed build"
