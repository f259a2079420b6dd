"""The children of a HIL command end with it (issue 36 item 2: after SIGTERM or SIGKILL of
``examples/acc_hil.py`` its ECU could stay alive, at SCHED_FIFO 20 for a day).

The class: every way a HIL command starts a child (:class:`hil.peer.Peer`, the ECU of
``examples/acc_ecu.py`` as a peer, a peer behind a wrapper (a shell) so that the kernel's
parent-death signal reaches the wrapper and not the child, :func:`hil.lifeline.spawn` of a
command that does not watch its parent (the benchmark's load and flood processes,
``bench.hil.busy_load``), a process pool's worker with :func:`hil.lifeline.die_with_parent`
(``examples/reverse_spaghetti.py``), and a child whose death signal the kernel cleared at
``exec`` (a Python with file capabilities, as a rig grants SCHED_FIFO without root)), times
the two ways the command dies (SIGTERM at its default disposition, SIGKILL).

Each case starts the child from a small "run" process (so that the run can be killed),
which prints the child's pid; the child must be gone within a bounded time (polled), and a
child that handles SIGTERM must have ended through its handler (it writes what it writes at
its end, as the ECU writes its summary).  The parent side (:class:`StopOnSignals`) is tested
in this process.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from hil import lifeline
from hil.lifeline import PARENT_ENV, StopOnSignals, Terminated, tie_to_parent
from tests.timing_plugin import GENEROUS_S
from tests.timing_plugin import process_gone as _gone

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="Linux processes (/proc, the parent-death signal)")

#: A child that watches its parent: its pid in argv[1], then a loop until SIGTERM, which
#: it answers by writing ``done`` to argv[2] (as the ECU writes its summary).
TIED = textwrap.dedent("""\
    import os, signal, sys, time
    def term(signum, frame):
        with open(sys.argv[2], "w") as f:
            f.write("done")
        sys.exit(0)
    signal.signal(signal.SIGTERM, term)
    from hil.lifeline import tie_to_parent
    tie_to_parent(poll_s=0.05)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    print("READY", flush=True)
    while True:
        time.sleep(0.01)
""")

#: A child that does not watch its parent (the death signal alone ends it).
PLAIN = textwrap.dedent("""\
    import os, sys, time
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    print("READY", flush=True)
    while True:
        time.sleep(0.01)
""")

#: The run: starts the child the way named in argv[1], prints "started", waits to be
#: killed.  argv[2], argv[3]: the child's pid file and flag file.
RUN = textwrap.dedent("""\
    import os, subprocess, sys, time
    how, pidfile, flag = sys.argv[1], sys.argv[2], sys.argv[3]
    tied, plain = sys.argv[4], sys.argv[5]
    py = sys.executable
    if how == "peer":
        from hil.peer import Peer
        keep = Peer([py, "-c", tied, pidfile, flag], name="child").wait_ready(60)
    elif how == "peer-behind-shell":  # the death signal reaches the shell, not the child
        from hil.peer import Peer
        cmd = '"$0" -c "$1" "$2" "$3"; exit $?'  # (not exec'd: the shell stays between)
        keep = Peer(["/bin/sh", "-c", cmd, py, tied, pidfile, flag], name="child",
                    ready=None)
    elif how == "spawn":
        from hil.lifeline import spawn
        keep = spawn([py, "-c", plain, pidfile], stdout=subprocess.DEVNULL)
    elif how == "bench-load":
        from bench.hil import busy_load
        cm = busy_load(1)
        procs = cm.__enter__()
        with open(pidfile, "w") as f:
            f.write(str(procs[0].pid))
    elif how == "pool":
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from hil.lifeline import die_with_parent
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=die_with_parent)
        task = f"import sys\\nsys.argv = ['plain', {pidfile!r}]\\n" + plain
        fut = pool.submit(exec, task, {"__name__": "plain"})
    elif how == "capabilities":  # the child's Python has file capabilities (setcap)
        from hil.peer import Peer
        keep = Peer([os.environ["CAP_PYTHON"], "-c", tied, pidfile, flag], name="child")
        keep.wait_ready(60)
    end = time.monotonic() + 120  # (a child that never starts fails the test, no hang)
    while not os.path.exists(pidfile):
        if time.monotonic() > end:
            sys.exit("the child did not start")
        time.sleep(0.01)
    print("started", flush=True)
    time.sleep(600)
""")


def _env(**extra: str) -> dict:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, **extra}


def _start_run(tmp_path: Path, how: str, env: dict | None = None, user: list | None = None,
               python: str = sys.executable):
    pidfile, flag = tmp_path / "child.pid", tmp_path / "flag"
    run = subprocess.Popen([*(user or []), python, "-c", RUN, how, str(pidfile),
                            str(flag), TIED, PLAIN], stdout=subprocess.PIPE, text=True,
                           env=env or _env(), cwd=tmp_path)
    try:
        # a pool's worker prints READY on the run's output too, and print writes the text
        # and its newline in two writes: the run's line may come between them
        # ("READYstarted\n", then "\n"); only the run's word counts
        line = run.stdout.readline()
        while line and not line.replace("READY", "").strip():
            line = run.stdout.readline()
        assert line.replace("READY", "").strip() == "started", \
            f"the run did not start its child ({how}): {line!r}"
        return run, int(pidfile.read_text()), flag
    except BaseException:
        run.kill()  # (its children end with it, or are the failure this reports)
        run.wait()
        raise


def _kill_and_check(run, pid: int, flag: Path, sig: int, handles_term: bool) -> None:
    try:
        assert not _gone(pid, 0.2), "the child ended before its run"
        run.send_signal(sig)
        run.wait(GENEROUS_S)
        assert _gone(pid), f"the child outlived its run ({signal.Signals(sig).name})"
        if handles_term:  # its SIGTERM handler ran: an orderly end (the ECU's summary)
            assert flag.read_text() == "done"
    finally:
        if not _gone(pid, 0):
            os.kill(pid, signal.SIGKILL)
        if run.poll() is None:
            run.kill()


@pytest.mark.timing  # processes started, killed and waited for
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
@pytest.mark.parametrize("how, handles_term", [("peer", True), ("peer-behind-shell", True),
                                               ("spawn", False), ("bench-load", False),
                                               ("pool", False)])
def test_a_child_ends_with_its_command(tmp_path, how, handles_term, sig):
    run, pid, flag = _start_run(tmp_path, how)
    _kill_and_check(run, pid, flag, sig, handles_term)


#: a Python of this version that an unprivileged user may run (this one may live in a
#: folder only root may enter)
SYSTEM_PYTHON = f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}"


def _capability_python(folder: Path) -> str | None:
    """A copy of the system's Python with ``cap_sys_nice+ep`` (how a rig grants SCHED_FIFO
    without root), runnable by ``nobody``; None where that cannot be made here."""
    setcap = shutil.which("setcap")
    if (os.geteuid() != 0 or setcap is None or shutil.which("setpriv") is None
            or not os.path.exists(SYSTEM_PYTHON)):
        return None
    copy = folder / "pycap"
    shutil.copy2(SYSTEM_PYTHON, copy)
    if subprocess.run([setcap, "cap_sys_nice+ep", str(copy)],
                      capture_output=True).returncode != 0:
        return None
    os.chmod(copy, 0o755)
    return str(copy)


@pytest.mark.timing  # processes started, killed and waited for
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_a_child_whose_death_signal_the_kernel_cleared_still_ends(sig):
    """Linux clears the parent-death signal when an unprivileged process execs a binary
    with file capabilities: the launcher's request is lost, the child's own watch is
    not."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="cosim-lifeline-") as folder:
        os.chmod(folder, 0o777)  # (the run is nobody's)
        _capability_case(Path(folder), sig)


def _capability_case(tmp_path: Path, sig: int) -> None:
    py = _capability_python(tmp_path)
    if py is None:
        pytest.skip("needs root, setcap and setpriv to make a Python with file capabilities "
                    "run by an unprivileged user")
    site = sysconfig.get_paths()["purelib"]
    env = _env(CAP_PYTHON=py)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), site])
    user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = subprocess.run([*user, py, "-c", "import hil.peer"], env=env,
                           capture_output=True, text=True, cwd=tmp_path)
    if probe.returncode != 0:
        pytest.skip(f"the checkout is not importable by an unprivileged user with "
                    f"{SYSTEM_PYTHON}: {probe.stderr[-300:]}")
    run, pid, flag = _start_run(tmp_path, "capabilities", env=env, user=user,
                                python=SYSTEM_PYTHON)
    with open(f"/proc/{pid}/status") as f:  # the kernel did clear it: the case is real
        assert any(ln.split()[1] != "0000000000000000" for ln in f
                   if ln.startswith("CapPrm:"))
    _kill_and_check(run, pid, flag, sig, handles_term=True)


# ------------------------------------------------------------------ child side, no processes
def test_tie_to_parent_needs_a_named_parent_and_takes_the_name_away(monkeypatch):
    monkeypatch.delenv(PARENT_ENV, raising=False)
    assert tie_to_parent() is None  # started by hand: not tied to its shell
    env = lifeline.child_env({})
    pid, _, start = env[PARENT_ENV].partition(":")
    assert int(pid) == os.getpid() and (start.isdigit() or start == "")
    assert lifeline.launch_argv(["/bin/true", "x"])[-2:] == ["/bin/true", "x"]


# ------------------------------------------------------------------ the command's side
class _Runner:
    def __init__(self):
        self.stopped = []

    def stop(self, reason):
        self.stopped.append(reason)


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, "terminated"),
                                         (signal.SIGINT, "interrupted")])
def test_a_stop_signal_ends_the_run_in_order_and_a_second_one_at_once(sig, status):
    before = signal.getsignal(sig)
    with StopOnSignals() as stop:
        assert stop.status == "complete"
        stop.runner = _Runner()
        os.kill(os.getpid(), sig)  # (the handler runs in this thread, at once)
        assert stop.runner.stopped == [signal.Signals(sig).name]
        assert stop.status == status and stop.signum == sig
        with pytest.raises(Terminated) as err:
            os.kill(os.getpid(), sig)
        assert err.value.signum == sig
    assert signal.getsignal(sig) is before  # restored
    with StopOnSignals() as stop, pytest.raises(Terminated, match="SIGTERM"):
        os.kill(os.getpid(), signal.SIGTERM)  # no runner yet: the set-up is interrupted
    assert stop.status == "terminated"


#: The main thread stops a runner over and over (as the ECU does when the plant's
#: end-of-session frame arrives) while SIGTERMs arrive whose handler stops it too.
STOP_RACE = textwrap.dedent("""\
    import os, signal, sys, threading, time
    from blocks.sources import Constant
    from cosim import DiagramBuilder, Simulator
    from hil import RealTimeRunner
    b = DiagramBuilder("idle")
    b.add(Constant("c", 1.0))
    rt = RealTimeRunner(Simulator(b.build(), solver="euler", dt=1e-3), period_s=1e-3)
    seen = []
    signal.signal(signal.SIGTERM, lambda s, f: (rt.stop("SIGTERM"), seen.append(s)))
    sent = threading.Event()
    def send():
        for _ in range(int(sys.argv[1])):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.0005)
        sent.set()
    threading.Thread(target=send, daemon=True).start()
    while not sent.is_set():
        rt.stop("end of session")
    print("ended", "handled" if seen else "none handled")
""")


@pytest.mark.timing  # a process that must end within a bounded time
def test_a_signal_handler_stops_a_runner_whatever_the_main_thread_is_doing():
    """A handler that stopped the runner while the main thread was inside the runner's own
    stop (a ``threading.Event``, whose lock the handler then waited for) hung the process
    for ever: the ECU got its parent-death SIGTERM and stayed alive (found by
    tests/system/test_acc_hil_ends.py: an orphaned ECU, every thread waiting on a lock)."""
    n = 300
    try:
        r = subprocess.run([sys.executable, "-c", STOP_RACE, str(n)], capture_output=True,
                           text=True, env=_env(), timeout=GENEROUS_S * 2)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the process hung: a SIGTERM handler waited for a lock its own thread "
                    f"held (not done within {GENEROUS_S * 2:g} s)")
    assert r.returncode == 0 and r.stdout.split() == ["ended", "handled"], r.stderr[-2000:]
