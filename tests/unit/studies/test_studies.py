"""cosim.studies: designs, runs, failures, the journal, resume, the CLI."""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from cosim.errors import CosimError
from cosim.studies import (
    Choice,
    LogUniform,
    Normal,
    SerialExecutor,
    Study,
    StudyProgress,
    Uniform,
    grid,
    latin_hypercube,
    random_samples,
    run_id,
    sobol,
)
from cosim.studies.cli import _values, build_design

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
MODEL = os.path.join(ROOT, "examples", "pid_sweep.py")
SIM = dict(t_end=1.0, solver="rk4", dt=1e-3, record=["plant.y", "pid.u", "err.y"])


def test_grid_is_the_full_factorial_last_name_fastest():
    g = grid(a=[1, 2], b=np.array([0.5, 1.0, 1.5]))
    assert len(g) == 6 and g[0] == {"a": 1, "b": 0.5} and g[1] == {"a": 1, "b": 1.0}
    assert type(g[1]["b"]) is float                       # numpy scalars made plain
    with pytest.raises(CosimError, match="no values"):
        grid(a=[])


def test_random_designs_are_seeded_and_in_bounds():
    a = random_samples(50, 7, k=Uniform(1, 2), c=LogUniform(1e-3, 1), n=Normal(0, 1),
                       mode=Choice(("x", "y")))
    b = random_samples(50, 7, k=Uniform(1, 2), c=LogUniform(1e-3, 1), n=Normal(0, 1),
                       mode=Choice(("x", "y")))
    assert a == b and a != random_samples(50, 8, k=Uniform(1, 2), c=LogUniform(1e-3, 1),
                                          n=Normal(0, 1), mode=Choice(("x", "y")))
    assert all(1 <= p["k"] <= 2 and 1e-3 <= p["c"] <= 1 and p["mode"] in "xy" for p in a)
    lhs = latin_hypercube(10, 1, k=(0, 10), m=(1, 2))
    # a Latin hypercube puts exactly one point in each of the 10 strata of each axis
    assert sorted(int(p["k"]) for p in lhs) == list(range(10))
    assert len(sobol(8, 1, k=(0, 1))) == 8
    with pytest.raises(CosimError, match="low < high"):
        latin_hypercube(4, 0, k=(1, 1))


def test_run_ids_are_stable_and_order_independent():
    assert run_id({"a": 1, "b": 2.0}) == run_id({"b": 2.0, "a": 1})
    assert run_id({"a": 1}) != run_id({"a": 2})
    assert run_id({"a": np.float64(0.5)}) == run_id({"a": 0.5})


def test_serial_study_computes_metrics_and_records_failures(tmp_path):
    design = grid(**{"pid.kp": [50.0, 100.0], "pid.kd": [5.0]}) + [{"pid.nope": 1.0}]
    df = Study(MODEL, design, metrics="metrics", **SIM).run(str(tmp_path), SerialExecutor(),
                                                           progress=False)
    assert len(df) == 3
    ok = df[df.status == "ok"]
    assert len(ok) == 2 and np.all(ok.iae > 0) and np.all(ok.peak_u > 0)
    bad = df[df.status == "failed"].iloc[0]
    assert bad.error.startswith("PortError: parameter 'nope' not found on block 'pid'")
    # more proportional gain: faster, more overshoot
    a, b = ok.sort_values("pid.kp").itertuples()
    assert b.overshoot_pct > a.overshoot_pct
    assert os.path.exists(tmp_path / "results.parquet")
    lines = (tmp_path / "journal.jsonl").read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["params"]


def test_build_arguments_rebuild_and_default_metrics(tmp_path):
    design = grid(m=[1.0, 4.0], **{"pid.kp": [100.0]})
    df = Study(MODEL, design, **SIM).run(str(tmp_path), SerialExecutor(), progress=False)
    assert list(df.status) == ["ok", "ok"]
    y = df["final:plant.y"].to_numpy()
    assert y[0] != y[1]                                  # the heavier mass is slower


def test_resume_runs_only_the_missing_points(tmp_path):
    design = grid(**{"pid.kp": [40.0, 80.0, 120.0], "pid.kd": [2.0, 6.0]})
    study = Study(MODEL, design, metrics="metrics", **SIM)
    first = study.run(str(tmp_path), SerialExecutor(), progress=False, max_runs=2)
    assert len(first) == 2
    before = {r.run_id: r.wall_s for r in first.itertuples()}
    full = study.run(str(tmp_path), SerialExecutor(), progress=False)
    assert len(full) == 6
    lines = (tmp_path / "journal.jsonl").read_text().splitlines()
    assert len(lines) == 6                                 # nothing recomputed
    for r in full.itertuples():
        if r.run_id in before:
            assert r.wall_s == before[r.run_id]
    with pytest.raises(CosimError, match="different study"):
        Study(MODEL, design, metrics=None, **SIM).run(str(tmp_path), SerialExecutor(),
                                                      progress=False)


def test_a_journal_line_cut_by_a_kill_is_redone(tmp_path):
    design = grid(**{"pid.kp": [40.0, 80.0]})
    study = Study(MODEL, design, **SIM)
    study.run(str(tmp_path), SerialExecutor(), progress=False)
    j = tmp_path / "journal.jsonl"
    lines = j.read_text().splitlines()
    j.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])      # torn last line
    df = study.run(str(tmp_path), SerialExecutor(), progress=False)
    assert len(df) == 2 and set(df.status) == {"ok"}


@pytest.mark.timing
def test_killing_the_sweep_command_and_starting_it_again(tmp_path):
    out = tmp_path / "study"
    cmd = [sys.executable, "-m", "cosim", "sweep", MODEL, "--param", "pid.kp=20:200:6",
           "--param", "pid.kd=1:20:5", "--backend", "local", "--workers", "2",
           "--out", str(out), "--t-end", "3", "--quiet"]
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    j = out / "journal.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if j.exists() and len(j.read_text().splitlines()) >= 5:
            break
        time.sleep(0.05)
    p.kill()
    p.wait()
    killed = {json.loads(x)["run_id"]: json.loads(x)["wall_s"]
              for x in j.read_text().splitlines() if x.endswith("}")}
    assert 5 <= len(killed) < 30
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    recs = [json.loads(x) for x in j.read_text().splitlines()]
    ids = [x["run_id"] for x in recs]
    assert len(ids) == len(set(ids)) == 30                # only the missing runs were run
    assert all(x["wall_s"] == killed[x["run_id"]] for x in recs if x["run_id"] in killed)
    assert "30 of 30 runs" in r.stdout


def test_cli_parameter_syntax():
    assert _values("pid.kp=1,2,4") == ("pid.kp", [1.0, 2.0, 4.0])
    name, v = _values("m=1:3:3")
    assert name == "m" and np.allclose(v, [1, 2, 3])
    assert np.allclose(_values("k=1:100:3:log")[1], [1, 10, 100])
    assert _values("mode=fast,slow")[1] == ["fast", "slow"]
    with pytest.raises(CosimError, match="NAME=1,2,3"):
        _values("kp")

    class A:
        param = ["a=0:1"]
        design, n, seed = "lhs", 5, 3

    assert len(build_design(A)) == 5
    A.design = "grid"
    with pytest.raises(CosimError, match="range"):
        build_design(A)


def test_progress_line():
    import io

    s = io.StringIO()
    bar = StudyProgress(10, 3, stream=s)
    bar.update({"status": "ok"})
    bar.update({"status": "failed"})
    assert "runs 5/10: 1 ok, 1 failed (3 from before), 5 to go" in bar.line()


def _workers(journal):
    return {int(json.loads(x)["worker"].rsplit(":", 1)[1])
            for x in journal.read_text().splitlines() if x.endswith("}")}


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


@pytest.mark.timing
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT", "SIGKILL"])
def test_killing_the_sweep_ends_its_workers(tmp_path, sig):
    """A test that killed `cosim sweep` left two workers alive; SIGTERM/SIGINT now close the
    pool (exit 130, one line), and even SIGKILL ends them (the workers' parent-death
    signal)."""
    import signal
    out = tmp_path / "study"
    # 400 runs (about 8 s of work on two workers): the sweep is still running when signalled
    cmd = [sys.executable, "-m", "cosim", "sweep", MODEL, "--param", "pid.kp=20:200:400",
           "--backend", "local", "--workers", "2", "--out", str(out), "--t-end", "3",
           "--quiet"]
    # SIGINT as a terminal's Ctrl-C delivers it: a test suite started in the background
    # (`make test &`) ignores SIGINT, its children inherit that and Python keeps ignoring
    # it (the sweep then ran to the end and exited 0: the test failed, not the sweep)
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    j = out / "journal.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (j.exists() and len(_workers(j)) >= 2):
        time.sleep(0.05)
    workers = _workers(j)
    assert len(workers) == 2 and all(_alive(w) for w in workers)
    p.send_signal(getattr(signal, sig))
    _, err = p.communicate(timeout=60)
    if sig != "SIGKILL":
        assert p.returncode == 130 and err.strip().splitlines()[-1] == "cosim: interrupted"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers)


def test_a_sweep_with_failed_runs_exits_non_zero(tmp_path):
    """kd = -1e6 makes the loop diverge (a NonFiniteError in that run): the run is recorded
    as failed and the command says FAIL and exits 1."""
    out = tmp_path / "study"
    r = subprocess.run([sys.executable, "-m", "cosim", "sweep", MODEL, "--param",
                        "pid.kp=50,-1e9", "--backend", "serial", "--out", str(out),
                        "--t-end", "1", "--quiet"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL: 1 of 2 runs failed" in r.stdout


@pytest.mark.parametrize("args, reason", [
    (["--param", "k=abc,1"], "'abc' is not a number (the other values are)"),
    (["--param", "k=0:10:5:log"], "a log range needs LO > 0 and HI > 0"),
    (["--param", "k=0:10:x"], "N must be a whole number, got 'x'"),
    (["--param", "k=0:10:0"], "N must be at least 1, got 0"),
    (["--param", "k=0:10", "--design", "lhs", "--n", "-5"], "--n must be at least 1, got -5"),
    (["--param", "k=1,2", "--n", "5"], "--n applies to random, lhs and sobol designs"),
])
def test_bad_sweep_specs_get_one_line_reasons(args, reason, capsys):
    from cosim.cli import main
    assert main(["sweep", MODEL, *args, "--backend", "serial"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cosim: error: ") and reason in err[0]
