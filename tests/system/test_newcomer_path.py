"""The README's newcomer path ("Your first hour"), walked as a newcomer walks it (issue 30).

Every ``sh`` line and every ``<!-- file: NAME -->`` block of the section runs in order, as
written, in one shell session, starting in an empty folder that stands for the clone: it
holds the repository's ``.venv`` and ``examples`` (links) and nothing else, so the
newcomer's own files are the ones the README shows.  ``make demo`` (the step before this
section) is walked by ``tests/system/test_flagship.py`` (the script the Makefile's ``demo``
recipe runs, checked here), ``make test`` is what CI runs.

Each step is checked against an independent figure: the model file's result against its
closed-form steady state and against the FMUs (FMPy underneath) and the co-simulation
master; the HIL pair's verdict is asserted honest (PASS, or FAIL on the loop's own timing
figures with the runner's diagnosis), not fast.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")
pytest.importorskip("can")

ROOT = Path(__file__).resolve().parents[2]
FILE = re.compile(r"<!-- file:\s*(\S+)\s*-->\s*\n```python\n(.*?)^```", re.M | re.S)
BLOCK = re.compile(r"(<!-- file:\s*(\S+)\s*-->\s*\n)?```(sh|python)\n(.*?)^```", re.M | re.S)
#: checks a real-time loop fails by its own timing on a busy machine (the runner's figures)
TIMING = ("overruns", "skipped_frames", "lateness_p99_us", "lateness_max_us",
          "stale_episodes")

pytestmark = [pytest.mark.slow, pytest.mark.timing]


def section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("## Your first hour")
    return text[start:text.index("\n## ", start + 3)]


def steps(text: str) -> list[tuple[str, str]]:
    """``("file", NAME, code)`` and ``("sh", line)`` in the order of the section."""
    out = []
    for m in BLOCK.finditer(text):
        name, kind, body = m.group(2), m.group(3), m.group(4)
        if kind == "python":
            assert name, f"a python block of the newcomer path is not a file: {body[:60]!r}"
            out.append(("file", name, body))
            continue
        for line in body.replace("\\\n", " ").splitlines():
            cmd = line.split("  #")[0].split(" # ")[0].strip()
            if cmd and not cmd.startswith("#"):
                out.append(("sh", cmd))
    return out


def script(walk: list) -> str:
    """One bash session: files written as shown, each command followed by its status."""
    lines = []
    for i, step in enumerate(walk):
        if step[0] == "file":
            lines.append(f"cat > {step[1]} <<'COSIM_EOF'\n{step[2]}COSIM_EOF")
        else:
            lines.append(f"echo '### step {i}'\n{step[1]}\necho \"### status {i} $?\"")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def walked(tmp_path_factory):
    if not (ROOT / ".venv" / "bin" / "activate").exists():
        pytest.skip("the repository's .venv is made by make; run the suite by make test")
    clone = tmp_path_factory.mktemp("clone")
    (clone / ".venv").symlink_to(ROOT / ".venv")
    (clone / "examples").symlink_to(ROOT / "examples")
    walk = steps(section())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"  # no venv yet: the walk activates it
    r = subprocess.run(["bash", "-c", script(walk)], cwd=clone, env=env, capture_output=True,
                       text=True, timeout=900)
    status = {int(k): int(v) for k, v in re.findall(r"^### status (\d+) (\d+)$", r.stdout,
                                                    re.M)}
    output = {int(k): v for k, v in re.findall(r"^### step (\d+)\n(.*?)(?=^### status)",
                                               r.stdout, re.M | re.S)}
    return {"walk": walk, "status": status, "output": output, "stderr": r.stderr,
            "work": clone / "mywork"}


def _step(w: dict, command: str) -> int:
    """The index of the walk's step that starts with ``command``."""
    return next(i for i, s in enumerate(w["walk"]) if s[0] == "sh" and s[1].startswith(command))


def test_the_path_is_what_the_readme_says():
    walk = steps(section())
    cmds = [s[1] for s in walk if s[0] == "sh"]
    files = [s[1] for s in walk if s[0] == "file"]
    assert cmds[0].startswith("source .venv/bin/activate")
    assert files == ["spring.py", "table.py", "use_fmu.py"]
    # the four stages of the issue: own diagram, FMU export and import, the HIL pair
    for what in ("cosim run spring.py", "cosim fmu export spring.py spring.fmu",
                 "--via python", "python use_fmu.py", "cosim hil run ../examples/acc_hil.py"):
        assert any(what in c for c in cmds), what
    # make demo, the step before, is the flagship script test_flagship.py walks
    recipe = (ROOT / "Makefile").read_text().split("\ndemo:")[1].split("\n")[1].strip()
    assert recipe == "$(BIN)/python examples/flagship.py --out out/demo"


def test_every_command_but_the_real_time_one_succeeds(walked):
    hil = _step(walked, "cosim hil run")
    for i, step in enumerate(walked["walk"]):
        if step[0] == "sh" and i != hil:
            assert walked["status"].get(i) == 0, (step[1], walked["output"].get(i),
                                                  walked["stderr"][-3000:])


def test_the_model_file_runs_to_its_steady_state(walked):
    from cosim.writers import read_dataframe
    df = read_dataframe(walked["work"] / "out/spring/results.csv")
    assert df.index[-1] == pytest.approx(2.0) and df.attrs["units"]["x.y"] == "m"
    # m x'' = F - c x' - k x: after the step x -> F / k = 0.25 m (zeta = 0.16: decaying)
    x = df["x.y"].to_numpy()
    assert x.max() == pytest.approx(0.4012, abs=5e-4)  # overshoot 1 + exp(-pi z/sqrt(1-z2))
    assert abs(x[-1] - 0.25) < 0.03
    assert (walked["work"] / "out/spring/plot.png").stat().st_size > 0
    out = walked["output"][_step(walked, "python table.py")].split()
    assert float(out[0]) == pytest.approx(x[-1], rel=1e-12) and out[1] == "m"
    assert "spring.x" in walked["output"][_step(walked, "cosim info spring.py")] or \
        "diagram 'spring'" in walked["output"][_step(walked, "cosim info spring.py")]


def test_the_fmus_run_what_cosim_run_ran(walked):
    from cosim.writers import read_dataframe
    work = walked["work"]
    ref = read_dataframe(work / "out/spring/results.csv")["x.y"].to_numpy()
    assert "valid" in walked["output"][_step(walked, "cosim fmu validate")]
    sim = read_dataframe(work / "out/spring_fmu/results.csv")
    assert sim.index[-1] == pytest.approx(2.0)  # the model file's t_end, not 1 s
    assert sim["x"].iloc[-1] == pytest.approx(ref[-1], rel=1e-12)  # named as in FMPy
    value, unit = walked["output"][_step(walked, "python use_fmu.py")].split()
    assert float(value) == pytest.approx(ref[-1], rel=1e-12) and unit == "m"


def test_the_hil_pair_ends_with_an_honest_verdict(walked):
    work = walked["work"]
    i = _step(walked, "cosim hil run")
    s = json.loads((work / "out/acc/summary.json").read_text())
    v = s["verdict"]
    assert walked["status"][i] == v["exit_code"], walked["output"][i][-2000:]
    assert v["line"] in walked["output"][i]
    assert (work / "out/acc/bus.asc").stat().st_size > 0
    assert s["peers"], "the ECU ran as a peer process"
    if not v["passed"]:  # on a busy machine: the loop's own timing, said with its cause
        assert all(c.split(": ")[-1] in TIMING for c in v["failed"]), v["failed"]
        assert v["overload"] and v["overload"].startswith("timing failed ("), v["line"]
    replay = walked["output"][_step(walked, "cosim replay")]
    assert walked["status"][_step(walked, "cosim replay")] == 0
    assert len(replay.strip().splitlines()) == 5


def test_nothing_was_left_running(walked):
    """The ECU of the HIL pair ended with its plant (no orphan process)."""
    r = subprocess.run(["pgrep", "-f", "acc_ecu.py"], capture_output=True, text=True)
    mine = [p for p in r.stdout.split() if p and Path(f"/proc/{p}/cwd").exists()
            and str(walked["work"]) in os.path.realpath(f"/proc/{p}/cwd")]
    assert not mine, f"ECU processes left running: {mine}"


if __name__ == "__main__":  # pragma: no cover - print the walk's script
    print(script(steps(section())), file=sys.stdout)
