"""``hil.peer.Peer``: a peer process never outlives the run that started it (issue 30 item 4:
the documented ECU process ran on after its plant ended, for a day by default).

Each case starts the peer from a small "run" process (so that the run can be killed, as a
user's plant can be), which prints the peer's pid: a SIGKILLed run takes its peer with it
(the kernel's parent-death signal), a peer that handles SIGTERM still writes what it
writes at its end, Ctrl-C on the run's process group does not reach the peer (the run ends
it in order), stop() ends the peer's own children (its process group), a chatty peer
never blocks on a full pipe, and a peer that does not start says why."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from hil.peer import Peer, PeerError
from tests.timing_plugin import GENEROUS_S, wait_for
from tests.timing_plugin import process_gone as _gone

#: processes started, signalled and waited for
pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="the parent-death signal is Linux's"),
              pytest.mark.timing]

#: A peer: READY, then a loop until SIGTERM, which it answers by writing ``done`` to the
#: file in argv[1] (as acc_ecu writes its summary) and exiting 0.
PEER = textwrap.dedent("""\
    import signal, sys, time
    path = sys.argv[1]
    def term(signum, frame):
        with open(path, "w") as f:
            f.write("done")
        sys.exit(0)
    signal.signal(signal.SIGTERM, term)
    print("READY", flush=True)
    while True:
        time.sleep(0.01)
""")

#: The run: starts the peer, prints its pid, then waits to be killed.
RUN = textwrap.dedent("""\
    import sys, time
    from hil.peer import Peer
    p = Peer([sys.executable, "-c", sys.argv[1], sys.argv[2]], name="ecu").wait_ready(60)
    print(p.pid, flush=True)
    time.sleep(600)
""")


def _run(tmp_path):
    flag = tmp_path / "flag"
    # SIGINT at its default disposition, as in a terminal (a suite started in the
    # background, nohup or CI, ignores SIGINT and its children inherit that)
    run = subprocess.Popen([sys.executable, "-c", RUN, PEER, str(flag)],
                           stdout=subprocess.PIPE, text=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    line = run.stdout.readline()
    assert line.strip().isdigit(), line
    return run, int(line), flag


def test_a_killed_run_takes_its_peer_along_and_the_peer_still_writes(tmp_path):
    run, pid, flag = _run(tmp_path)
    try:
        assert not _gone(pid, 0.3)
        run.send_signal(signal.SIGKILL)
        run.wait(GENEROUS_S)
        assert _gone(pid), "the peer outlived its run"
        assert flag.read_text() == "done"  # its SIGTERM handler ran: the summary is written
    finally:
        if not _gone(pid, 0):
            os.kill(pid, signal.SIGKILL)


def test_ctrl_c_on_the_run_s_group_does_not_reach_the_peer(tmp_path):
    run, pid, flag = _run(tmp_path)
    try:
        assert os.getpgid(pid) != os.getpgid(run.pid)  # its own process group
        os.kill(run.pid, signal.SIGINT)  # what the terminal does to the run's group
        run.wait(GENEROUS_S)
        # the run died of it; the peer got the parent-death signal, not the SIGINT
        assert _gone(pid) and flag.read_text() == "done"
    finally:
        if not _gone(pid, 0):
            os.kill(pid, signal.SIGKILL)


class _LateReader(Peer):
    """A peer whose output is read late, as on a busy machine (the reader thread was not
    scheduled before the peer ended)."""

    def _drain(self, stream, kind):
        time.sleep(0.5)
        super()._drain(stream, kind)


def test_a_peer_that_printed_ready_and_ended_before_its_output_was_read_started():
    """Found under load: the peer printed READY and ended; wait_ready saw it ended before
    its reader had taken the line and said "did not start: it exited with status 0"."""
    p = _LateReader([sys.executable, "-c", "print('READY', flush=True)"], name="late")
    assert p.wait_ready(30) is p and p.stop() == 0
    failed = _LateReader([sys.executable, "-c", "import sys; sys.exit('no bus')"], name="x")
    with pytest.raises(PeerError, match=r"exited with status 1(.|\n)*no bus"):
        failed.wait_ready(30)


def test_stop_waits_for_a_peer_that_ends_by_itself_then_terminates_its_group(tmp_path):
    quick = Peer([sys.executable, "-c", "print('READY', flush=True)"], name="quick")
    assert quick.wait_ready(30).stop(grace_s=10.0) == 0
    # a peer with a child of its own: SIGTERM goes to the group, the child ends too
    code = ("import subprocess, sys, time; c = subprocess.Popen([sys.executable, '-c', "
            "'import time; time.sleep(600)']); print(c.pid, flush=True); "
            "print('READY', flush=True); time.sleep(600)")
    p = Peer([sys.executable, "-c", code], name="parent").wait_ready(30)
    wait_for(lambda: p._stdout, "the peer's child's pid")
    child = int(p._stdout[0])
    t0 = time.monotonic()
    assert p.stop(grace_s=0.2) == -signal.SIGTERM
    assert time.monotonic() - t0 < 5 and _gone(child)


def test_a_chatty_peer_never_blocks_and_its_output_is_kept(tmp_path, capfd):
    code = ("import sys; [sys.stderr.write('x' * 200 + '\\n') for _ in range(2000)]; "
            "print('READY', flush=True); sys.stderr.write('last words\\n')")
    p = Peer([sys.executable, "-c", code], name="chatty")
    p.wait_ready(30)
    assert p.stop(grace_s=20.0) == 0
    assert p.output_tail().endswith("last words")
    assert "[chatty] last words" in capfd.readouterr().err


def test_a_peer_that_does_not_start_says_why(tmp_path):
    p = Peer([sys.executable, "-c", "import sys; sys.exit('no bus here')"], name="ecu")
    with pytest.raises(PeerError, match=r"peer 'ecu' did not start: it exited with status 1"
                                        r"(.|\n)*no bus here"):
        p.wait_ready(30)
    silent = Peer([sys.executable, "-c", "import time; time.sleep(600)"], name="mute")
    with pytest.raises(PeerError, match="printed no 'READY' line within 0.5 s"):
        silent.wait_ready(0.5)
    assert not silent.running
    with pytest.raises(PeerError, match="cannot start"):
        Peer([str(tmp_path / "missing"), "x"], name="gone").wait_ready(30)
