"""The cosim console command: run and info on a model file."""

import os
import pathlib
import shlex
import subprocess
import sys

import pytest

from cosim.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = '''
from blocks.continuous import Integrator
from blocks.sources import Constant
from cosim import DiagramBuilder

SIMULATION = dict(t_end=0.5, solver="rk4", dt=0.01)


def build():
    b = DiagramBuilder("ramp")
    c = b.add(Constant("c", 2.0, unit="m/s"))
    i = b.add(Integrator("i", unit="m", input_unit="m/s"))
    b.connect(c.y, i.u)
    return b.build()
'''


@pytest.fixture
def model(tmp_path):
    p = tmp_path / "ramp_model.py"
    p.write_text(MODEL)
    return p


def test_run_writes_results_and_prints_summary(model, tmp_path, capsys):
    out = tmp_path / "res"
    assert main(["run", str(model), "--out", str(out), "--format", "csv,hdf5", "-q"]) == 0
    text = capsys.readouterr().out
    assert "model 'ramp': 2 blocks, solver rk4, dt 0.01 s, t_end 0.5 s" in text
    csv = (out / "results.csv").read_text()
    assert csv.splitlines()[0] == "time,c.y,i.y"  # signal names; units in the sidecar
    from cosim.writers import read_dataframe
    assert read_dataframe(out / "results.csv").attrs["units"]["i.y"] == "m"
    last = csv.strip().splitlines()[-2 if csv.strip().endswith("complete") else -1]
    assert float(last.split(",")[0]) == pytest.approx(0.5)
    assert (out / "results.h5").exists()


def test_flags_override_file_defaults(model, tmp_path, capsys):
    main(["run", str(model), "--out", str(tmp_path / "o"), "--t-end", "1", "--solver",
          "heun", "--dt", "0.1"])
    text = capsys.readouterr().out
    assert "solver heun, dt 0.1 s, t_end 1 s" in text
    assert "final  2" in text  # integral of 2 m/s over 1 s


def test_info_lists_ports_units_order(model, capsys):
    assert main(["info", str(model)]) == 0
    text = capsys.readouterr().out
    assert "in   u" in text and "[m/s]" in text and "execution order" in text
    assert "fused linear group 0" in text


def test_unwritable_output_folder_is_a_clear_error(model, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["run", str(model), "--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert "cosim: error: cannot create output folder" in err and "--out" in err


def test_missing_function_lists_functions(tmp_path, capsys):
    p = tmp_path / "m.py"
    p.write_text("def helper():\n    return 1\n")
    assert main(["info", str(p)]) == 2
    assert "functions in the file: helper" in capsys.readouterr().err


def test_model_file_with_a_dataclass_loads(tmp_path, capsys):
    """dataclasses look their module up in sys.modules while the class is built."""
    p = tmp_path / "dc_model.py"
    p.write_text("from __future__ import annotations\nfrom dataclasses import dataclass\n"
                 + MODEL.replace("def build():", "@dataclass\nclass Params:\n    rate: float "
                                 "= 2.0\n\n\ndef build():"))
    assert main(["info", str(p)]) == 0
    assert "ramp" in capsys.readouterr().out


def test_python_dash_m_entry_point(model, tmp_path):
    r = subprocess.run([sys.executable, "-m", "cosim", "info", str(model)],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0 and "execution order" in r.stdout


def test_example_demo_runs(tmp_path):
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import dc_motor_speed_loop as demo
        s = demo.main(["--out", str(tmp_path / "demo"), "--no-plot"])
    finally:
        sys.path.pop(0)
    # the PI settles: final speed within 0.1 % of 3000 rpm, no overshoot beyond 1 %
    assert abs(s["steady_state_error_rad_s"]) < 0.001 * s["target_rad_s"]
    assert s["overshoot_pct"] < 1.0
    assert (tmp_path / "demo" / "results.csv").exists()


def test_bouncing_ball_example_matches_analytic_impacts():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import bouncing_ball as bb
        got = bb.main()
    finally:
        sys.path.pop(0)
    ref = bb.analytic_impacts(n=4)
    assert len(got) == 4
    assert max(abs(a - b) for a, b in zip(got, ref)) < 1e-8


def test_info_on_a_diagram_function_that_needs_arguments(tmp_path, capsys):
    from cosim.cli import main

    f = tmp_path / "needs_args.py"
    f.write_text("def build(port):\n    raise AssertionError('not called')\n")
    assert main(["info", str(f)]) != 0
    assert "build() needs arguments (port)" in capsys.readouterr().err


def test_version_and_help_for_every_option(capsys):
    from cosim.cli import _parser
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("cosim ")
    import argparse
    missing = []

    def walk(parser, path):  # every subcommand, the plugins' (fmu, hil, replay) included
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}")
            elif action.dest != "help" and not action.help:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")

    walk(_parser(), "cosim")
    assert not missing, f"options without help: {missing}"


@pytest.mark.parametrize("text, line", [
    ("def build(:\n    pass\n", "line 1: syntax error: invalid syntax"),
    ("import no_such_module_xyz\n", "importing the model file failed (line 1): "
     "ModuleNotFoundError"),
    ("from cosim import DiagramBuilder\n\ndef build():\n    x = 1 / 0\n",
     "build() failed (line 4): ZeroDivisionError: division by zero"),
])
def test_a_model_file_that_fails_gives_one_clean_line(tmp_path, capsys, text, line):
    p = tmp_path / "m.py"
    p.write_text(text)
    assert main(["run", str(p), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"cosim: error: {p}") and line in err[0]


# ----------------------------------------------------------- help and closed pipes
#: what `cosim --help` must not load: the numerical stack, fmpy and the outer packages
HEAVY = ("numpy", "scipy", "fmpy", "pandas", "matplotlib", "can", "cantools", "fmus", "hil",
         "blocks")


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["run", "--help"],
                                  ["info", "--help"]])
def test_help_loads_no_numerical_stack_and_no_other_package(argv):
    """Issue 30: `cosim --help` took 3 s importing numpy, scipy and every plugin's
    package; the commands are listed from their entry points without importing them."""
    code = ("import sys\nfrom cosim.cli import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules}), file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    loaded = set(eval(r.stderr.strip().splitlines()[-1]))
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    if argv == ["--help"]:  # every command listed, the plugins' with their own help
        for line in ("run                 simulate a model file",
                     "sweep               run a parameter study of a model file",
                     "fmu                 inspect, validate, simulate and export FMUs",
                     "replay              replay a CAN log onto a bus"):
            assert line in r.stdout, r.stdout


def test_a_command_loads_only_its_own_package():
    code = ("import sys\nfrom cosim.cli import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules}), file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", code, "fmu", "--help"], capture_output=True,
                       text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0 and "info,validate,simulate,export" in r.stdout
    loaded = set(eval(r.stderr.strip().splitlines()[-1]))
    assert "fmus" in loaded and not loaded & {"hil", "fmpy", "numpy"}, loaded


def closed_pipe(argv: list[str], cwd) -> subprocess.CompletedProcess:
    """``cosim ARGV`` with standard output a pipe whose reader is already gone (as in
    ``cosim ... | head`` once head has what it wants)."""
    r, w = os.pipe()
    os.close(r)
    try:
        return subprocess.run([sys.executable, "-m", "cosim", *argv], stdout=w,
                              stderr=subprocess.PIPE, text=True, cwd=cwd, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.close(w)


def can_log(path, n: int) -> str:
    import can
    w = can.ASCWriter(str(path))
    for i in range(n):
        w.on_message_received(can.Message(timestamp=i * 1e-3, arbitration_id=0x100 + i % 5,
                                          data=bytes([i % 256] * 8), is_extended_id=False))
    w.stop()
    return str(path)


def assert_quiet_end(r: subprocess.CompletedProcess) -> None:
    """Ended as a process that SIGPIPE ends: status 141, nothing on stderr."""
    assert r.returncode == 141 and r.stderr == "", (r.returncode, r.stderr)


@pytest.mark.parametrize("command", ["info", "replay", "run"])
def test_a_closed_pipe_ends_the_command_quietly(command, model, tmp_path):
    """Issue 30: `cosim replay ... | head` printed a BrokenPipeError asking to report it;
    one guard in cosim.cli.main covers every command."""
    argv = {"info": ["info", str(model)],
            "replay": ["replay", can_log(tmp_path / "bus.asc", 50), "--print"],
            "run": ["run", str(model), "--out", str(tmp_path / "o")]}[command]
    assert_quiet_end(closed_pipe(argv, tmp_path))


def test_head_of_a_long_replay(tmp_path):
    """A real shell pipeline: head leaves after two lines of 3000."""
    log = can_log(tmp_path / "bus.asc", 3000)
    r = subprocess.run(f"{shlex.quote(sys.executable)} -m cosim replay {log} --print "
                       "| head -n 2; exit ${PIPESTATUS[0]}", shell=True, executable="/bin/bash",
                       capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert len(r.stdout.splitlines()) == 2 and "0x100" in r.stdout
    assert_quiet_end(r)


def test_a_model_file_imports_its_own_modules_when_build_runs(tmp_path, monkeypatch, capsys):
    """Issue 30: a sibling module imported inside build() was not found (the model's
    folder left sys.path once the file was imported), unless the current folder happened
    to be the model's."""
    d = tmp_path / "model"
    d.mkdir()
    (d / "lazy_params.py").write_text("RATE = 3.0\n")
    (d / "lazy_model.py").write_text(MODEL.replace(
        "def build():\n", "def build():\n    from lazy_params import RATE\n").replace(
        'Constant("c", 2.0', 'Constant("c", RATE'))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(d / "lazy_model.py"), "--out", str(tmp_path / "o")]) == 0
    assert "final  1.5 m" in capsys.readouterr().out  # 3 m/s for 0.5 s
