"""``cosim fmu info|validate|simulate|export`` on the test FMUs and an exported model."""

import json
import math
import pathlib
import shlex
import subprocess
import sys

import numpy as np
import pytest

from cosim.cli import main
from cosim.writers import read_csv
from tests.fmu_builders import rewrite_fmu

MODEL = '''
from blocks.continuous import Integrator
from blocks.math import Gain, Sum
from cosim import DiagramBuilder


def build():
    """x' = u - x / 0.2 exported as an FMU: y = x."""
    b = DiagramBuilder("lag")
    i = b.add(Integrator("i", 0.0))
    g = b.add(Gain("g", -5.0))
    s = b.add(Sum("s", "++"))
    b.connect(i.y, g.u)
    b.connect(g.y, s.ins[1])
    b.connect(s.y, i.u)
    b.export_input(s.ins[0], "u")
    b.export_output(i.y, "y")
    return b.build()
'''


def test_info_is_compact_with_the_units_the_fmu_writes(fmu_files, capsys):
    assert main(["fmu", "info", str(fmu_files["Oscillator"])]) == 0
    out = capsys.readouterr().out
    assert "model 'Oscillator', FMI 2.0, ModelExchange + CoSimulation" in out
    assert "experiment:   t = 0 .. 2 s, step 0.001 s" in out
    lines = out.splitlines()
    sections = [ln for ln in lines if not ln.startswith(" ")][1:]
    assert sections == ["inputs (1):", "outputs (6):", "parameters (5):",
                        "also settable with --set (initial exact/approx): x, v"]
    row = {ln.split()[0]: ln.split() for ln in lines if ln.startswith("    ")}
    assert row["k"][:4] == ["k", "Real", "N/m", "40"]
    assert row["c"][:3] == ["c", "Real", "N.s/m"]            # the FMU's unit names,
    assert row["x_mm"][:3] == ["x_mm", "Real", "millimetre"]  # not cosim's mapping
    assert row["m"][:5] == ["m", "Real", "kg", "1", "[1e-06,"]
    assert "der(x)" not in out and "canGetAndSetFMUstate" not in out  # --all only
    assert main(["fmu", "info", str(fmu_files["Oscillator"]), "--all"]) == 0
    full = capsys.readouterr().out
    assert "locals (2):" in full and "der(x) (der_x)" in full
    assert "ModelExchange (Oscillator): canGetAndSetFMUstate" in full


def test_validate_reports_valid_and_invalid(fmu_files, tmp_path, capsys):
    assert main(["fmu", "validate", str(fmu_files["Oscillator"]), "--instantiate"]) == 0
    out = capsys.readouterr().out
    assert "CoSimulation: instantiated and initialized" in out
    assert "0 errors, 0 warnings" in out and out.rstrip().endswith("valid")
    bad = rewrite_fmu(fmu_files["LoopA"], tmp_path / "LoopA.fmu", replace={
        "modelDescription.xml": ('causality="input"><Real start="0"/>',
                                 'causality="input"><Real start="7" max="1"/>')})
    # FMPy reads a start outside the bounds: a warning, a failure with --strict (issue 31)
    assert main(["fmu", "validate", str(bad)]) == 0
    assert "warning: variable 'u'" in capsys.readouterr().out
    assert main(["fmu", "validate", str(bad), "--strict"]) == 1
    out = capsys.readouterr().out
    assert "variable 'u'" in out and "min <= start <= max" in out and "INVALID" in out
    (tmp_path / "nobin").mkdir()
    nobin = rewrite_fmu(fmu_files["LoopA"], tmp_path / "nobin" / "LoopA.fmu",
                        drop=("binaries/",), add={"binaries/win64/LoopA.dll": b"MZ"})
    assert main(["fmu", "validate", str(nobin)]) == 1
    assert "has no binary for this platform" in capsys.readouterr().out


def _exact_x(t, k=50.0, m=1.0, c=0.4, x0=0.1, F=1.0, t_step=0.5, F_step=2.0):
    """m x'' + c x' + k x = F (+ F_step after t_step), from x0 at rest (superposition)."""
    wd = math.sqrt(k / m - (c / (2 * m)) ** 2)
    z = c / (2 * m)

    def free(t, a):  # response to a force step from rest at x = 0
        return a / k * (1 - np.exp(-z * t) * (np.cos(wd * t) + z / wd * np.sin(wd * t)))

    hom = x0 * np.exp(-z * t) * (np.cos(wd * t) + z / wd * np.sin(wd * t))
    ts = np.clip(t - t_step, 0.0, None)
    return hom + free(t, F) + np.where(t >= t_step, free(ts, F_step), 0.0)


@pytest.mark.parametrize("itf", ["me", "cs"])
def test_simulate_sets_parameters_and_inputs_and_writes_csv(fmu_files, tmp_path, itf):
    out = tmp_path / itf
    assert main(["fmu", "simulate", str(fmu_files["Oscillator"]), "--interface-type", itf,
                 "--set", "k=50", "--set", "F=1", "--out", str(out), "-q",
                 "--rtol", "1e-10", "--atol", "1e-12"]) == 0
    res = read_csv(out / "results.csv")
    assert res.diagnostics["status"] == "complete"
    assert res.units["x"] == "m" and res.time[-1] == pytest.approx(2.0)
    err = np.max(np.abs(res["x"] - _exact_x(res.time)))
    assert err < 1e-6, err  # measured ME rk45 4.7e-15; CS (its own RK4 at 1 ms) 6.5e-14


def test_simulate_plays_inputs_from_csv(fmu_files, tmp_path):
    csv = tmp_path / "force.csv"
    csv.write_text("time,F\n0,1\n2,1\n")
    out = tmp_path / "o"
    assert main(["fmu", "simulate", str(fmu_files["Oscillator"]), "--input", str(csv),
                 "--set", "k=50", "--out", str(out), "-q", "--interface-type", "cs"]) == 0
    res = read_csv(out / "results.csv")
    assert np.max(np.abs(res["x"] - _exact_x(res.time))) < 1e-6


def test_simulate_errors_are_clear(fmu_files, tmp_path, capsys):
    p = str(fmu_files["Oscillator"])
    assert main(["fmu", "simulate", p, "--set", "a=3", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cosim fmu simulate: error: --set a: variable 'a' is an output "
                          "with initial='calculated' (computed by the FMU); --set takes "
                          "parameters, inputs and variables with initial='exact' or "
                          "'approx': x, v, F, m, k, c, t_step, F_step")
    assert main(["fmu", "simulate", p, "--set", "kk=3", "--out", str(tmp_path)]) == 2
    assert "has no variable 'kk'" in capsys.readouterr().err
    assert main(["fmu", "simulate", p, "--set", "k=stiff", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == ("cosim fmu simulate: error: --set k=stiff: 'k' is a "
                                       "Real variable; give a number such as 1.5\n")
    # past the bouncing ball's accumulation point t* = 0.4515 (1 + 2 0.7 / 0.3) = 2.5586 s
    out = tmp_path / "ball"
    assert main(["fmu", "simulate", str(fmu_files["BouncingBall"]), "--t-end", "3",
                 "--solver", "rk45", "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert "Zeno behaviour" in err and "Traceback" not in err
    assert err.startswith("cosim fmu simulate: error: ")
    res = read_csv(out / "results.csv")  # what ran before is on disk
    assert res.diagnostics["status"].startswith("error: ZenoError")
    assert res.time[-1] == pytest.approx(math.sqrt(2 / 9.81) * (1 + 2 * 0.7 / 0.3), abs=1e-4)


@pytest.mark.parametrize("itf", ["me", "cs"])
def test_set_takes_any_variable_settable_before_initialization(fmu_files, tmp_path, itf):
    """x is an output with initial="exact": FMI lets the importer set it (the initial
    position); it used to be refused as "not a parameter or input"."""
    out = tmp_path / itf
    assert main(["fmu", "simulate", str(fmu_files["Oscillator"]), "--interface-type", itf,
                 "--set", "k=50", "--set", "F=1", "--set", "x=0.25", "--out", str(out),
                 "-q", "--rtol", "1e-10", "--atol", "1e-12"]) == 0
    res = read_csv(out / "results.csv")
    assert res["x"][0] == 0.25
    assert np.max(np.abs(res["x"] - _exact_x(res.time, x0=0.25))) < 1e-6


@pytest.mark.parametrize("itf", ["me", "cs"])
def test_an_input_file_with_a_repeated_time_is_a_step(fmu_files, tmp_path, itf):
    """FMPy's input files: a time given twice changes the value at that instant.  The
    FMU's own force step is switched off (F_step=0) and the file steps F from 1 to 3 at
    0.5 s: the same motion as the FMU's own step (F = 1, F_step = 2 at t_step = 0.5)."""
    csv = tmp_path / "force.csv"
    csv.write_text("time,F\n0,1\n0.5,1\n0.5,3\n2,3\n")
    out = tmp_path / itf
    assert main(["fmu", "simulate", str(fmu_files["Oscillator"]), "--interface-type", itf,
                 "--input", str(csv), "--set", "k=50", "--set", "F_step=0", "--out",
                 str(out), "-q", "--rtol", "1e-10", "--atol", "1e-12"]) == 0
    res = read_csv(out / "results.csv")
    # measured ME 1.6e-12; CS 1.1e-13 (the step lands on a communication point)
    assert np.max(np.abs(res["x"] - _exact_x(res.time))) < 1e-9


def test_plot_writes_a_png_of_the_outputs_beside_the_results(fmu_files, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "o"
    assert main(["fmu", "simulate", str(fmu_files["Oscillator"]), "--out", str(out), "-q",
                 "--plot", "--t-end", "0.5"]) == 0
    png = out / "plot.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert f"plot: {png}" in capsys.readouterr().out


def test_any_model_name_makes_a_diagram_name(fmu_files, tmp_path, monkeypatch, capsys):
    """"Van der Pol oscillator" crashed the diagram name; the output folder is derived
    from it too (no spaces, no path separators)."""
    from fmus import load_fmu
    p = rewrite_fmu(fmu_files["Oscillator"], tmp_path / "Osc.fmu", replace={
        "modelDescription.xml": ('modelName="Oscillator"', 'modelName="Mass-spring ../ '
                                                          'damper (Übung 2)"')})
    assert load_fmu(p).name == "Mass_spring_damper_Ubung_2"
    monkeypatch.chdir(tmp_path)
    for itf in ("me", "cs"):
        assert main(["fmu", "simulate", str(p), "--interface-type", itf, "-q", "--t-end",
                     "0.1"]) == 0
        assert (tmp_path / "out" / "Mass_spring_damper_Ubung_2" / "results.csv").is_file()
    assert "Traceback" not in capsys.readouterr().err


def test_validate_instantiate_reports_every_failure_as_a_problem(fmu_files, tmp_path,
                                                                 capsys):
    good = "{2f1c6a52-4a8e-4d1b-9a7e-0c05c1a7ed01}"
    bad = rewrite_fmu(fmu_files["Oscillator"], tmp_path / "Oscillator.fmu", replace={
        "modelDescription.xml": (good, good.replace("ed01", "ed02"))})
    assert main(["fmu", "validate", str(bad), "--instantiate"]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    errors = [ln for ln in out.out.splitlines() if ln.startswith("  error: ")]
    assert len(errors) == 2 and all("wrong guid" in ln for ln in errors)
    assert out.out.rstrip().endswith("2 errors, 0 warnings, 0 notes: INVALID")
    assert main(["fmu", "validate", str(tmp_path / "missing.fmu")]) == 2
    assert capsys.readouterr().err.startswith("cosim fmu validate: error: FMU ")


def test_export_a_model_file_then_validate_and_simulate(tmp_path, capsys, fmu_files):
    model = tmp_path / "lag_model.py"
    model.write_text(MODEL)
    fmu = tmp_path / "lag.fmu"
    assert main(["fmu", "export", str(model), str(fmu), "--step", "1e-3"]) == 0
    assert pathlib.Path(fmu).is_file()
    assert main(["fmu", "validate", str(fmu), "--instantiate", "--strict"]) == 0
    out = tmp_path / "run"
    assert main(["fmu", "simulate", str(fmu), "--set", "u=1", "--t-end", "1", "--step",
                 "0.01", "--out", str(out), "-q"]) == 0
    res = read_csv(out / "results.csv")
    err = np.max(np.abs(res["y"] - 0.2 * (1 - np.exp(-5 * res.time))))
    assert err < 1e-9, err  # RK4 at 1 ms: measured 3.8e-13
    # the same model file through pythonfmu (out of process: pythonfmu 0.7 allows one
    # instance per process, and this is the test runner's): the same numbers
    py = tmp_path / "lag_py.fmu"
    assert main(["fmu", "export", str(model), str(py), "--via", "python", "--step",
                 "1e-3"]) == 0
    assert main(["fmu", "simulate", str(py), "--set", "u=1", "--t-end", "1", "--step",
                 "0.01", "--out", str(tmp_path / "py"), "-q", "--out-of-process"]) == 0
    np.testing.assert_allclose(read_csv(tmp_path / "py" / "results.csv")["y"],
                               res["y"], rtol=1e-12, atol=1e-15)
    capsys.readouterr()
    for wrong in (["--via", "python", "--interface-type", "me"],
                  ["--via", "python", "--integrator", "heun"], ["--solver", "rk45"]):
        assert main(["fmu", "export", str(model), str(tmp_path / "x.fmu"), *wrong]) == 2
        assert "not for --via python" in capsys.readouterr().err or wrong[0] == "--solver"


@pytest.mark.parametrize("typ, text, value", [
    ("Float64", "1", 1.0), ("Real", "2.5e-3", 0.0025), ("Float32", "-0", -0.0),
    ("Int64", "-9223372036854775808", -2 ** 63), ("UInt64", "18446744073709551615",
                                                    2 ** 64 - 1),
    ("Int8", "-128", -128), ("Integer", "7", 7), ("Boolean", "TRUE", True),
    ("Boolean", "0", False), ("String", "Set me!", "Set me!"),
    ("String", " padded ", " padded "), ("Binary", "0x666f6f", b"foo"),
    ("Binary", "666F6F", b"foo"),
])
def test_set_values_are_typed_by_the_declared_type(typ, text, value):
    from fmus.cli_values import typed_value
    from fmus.description import Variable
    got = typed_value(Variable("v", 1, typ, "parameter", "fixed"), text)
    assert got == value and type(got) is type(value)  # Int64/UInt64 exact Python ints


@pytest.mark.parametrize("typ, text, expected", [
    ("Int8", "128", "Int8 variable; give an integer in [-128, 127]"),
    ("UInt64", "-1", "give an integer in [0, 18446744073709551615]"),
    ("Int32", "1.5", "give an integer"), ("Boolean", "yes", "give true, false, 1 or 0"),
    ("Binary", "0xZZ", "give hexadecimal bytes"), ("Float64", "", "give a number"),
])
def test_set_values_of_the_wrong_type_say_what_is_expected(typ, text, expected):
    from cosim.errors import ParameterError
    from fmus.cli_values import typed_value
    from fmus.description import Variable
    with pytest.raises(ParameterError, match=f"^--set v={text}: 'v' is an? .*"
                                             f"{expected.replace('[', '.').replace(']', '.')}"):
        typed_value(Variable("v", 1, typ, "parameter", "fixed"), text)


# ------------------------------------------------------------- results folders
OSCILLATOR = '''
from blocks.continuous import Integrator
from blocks.math import Gain
from cosim import DiagramBuilder

SIMULATION = {"t_end": 0.2, "dt": 1e-3}


def build():
    b = DiagramBuilder("osc")
    x = b.add(Integrator("x", 1.0))
    v = b.add(Integrator("v", 0.0))
    k = b.add(Gain("k", -40.0))
    b.connect(x.y, k.u)
    b.connect(k.y, v.u)
    b.connect(v.y, x.u)
    b.export_output(x.y, "x")
    return b.build()
'''

#: every command that writes a results folder, as (argv without --out, files it writes)
WRITERS = {
    "run": (lambda m, f: ["run", m, "-q", "--plot"],
            {"results.csv", "results.csv.json", "plot.png"}),
    "run-hdf5": (lambda m, f: ["run", m, "-q", "--format", "hdf5"], {"results.h5"}),
    "fmu simulate": (lambda m, f: ["fmu", "simulate", f, "-q"],
                     {"results.csv", "results.csv.json"}),
    "sweep": (lambda m, f: ["sweep", m, "--param", "k.k=-40,-20", "--backend", "serial",
                            "-q"], {"study.json", "journal.jsonl", "results.parquet"}),
    "hil run": (lambda m, f: ["hil", "run", m, "--no-realtime", "--duration", "0.05"],
                {"results.csv", "results.csv.json", "telemetry.csv", "summary.json"}),
}


@pytest.fixture(scope="module")
def osc_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("osc")
    (d / "osc.py").write_text(OSCILLATOR)
    assert main(["fmu", "export", str(d / "osc.py"), str(d / "osc.fmu")]) == 0
    return str(d / "osc.py"), str(d / "osc.fmu")


def _files(folder: pathlib.Path) -> dict:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.name != "cosim_run.json"}


@pytest.mark.parametrize("second", list(WRITERS))
@pytest.mark.parametrize("first", list(WRITERS))
def test_a_results_folder_is_never_taken_from_another_run(first, second, osc_files, tmp_path,
                                                          capsys):
    """Issue 30: `cosim fmu simulate qc_c.fmu` replaced the results of `cosim run
    qc_linear.py` in out/qc_linear.  Every pair of commands: the second refuses the first's
    folder (nothing touched) unless --force, which removes the first's files; the same
    command again replaces (or, the sweep, resumes) its own results without --force."""
    pytest.importorskip("pyarrow")
    pytest.importorskip("h5py")
    model, fmu = osc_files
    out = tmp_path / "out"

    def cmd(name: str, *extra: str) -> list[str]:
        return WRITERS[name][0](model, fmu) + ["--out", str(out), *extra]

    assert main(cmd(first)) == 0
    capsys.readouterr()
    before = _files(out)
    assert WRITERS[first][1] <= set(before)
    same = first.split("-")[0] == second.split("-")[0]  # run and run-hdf5: same command
    if same:
        assert main(cmd(second)) == 0
        text = capsys.readouterr().out
        if first != "sweep":  # the sweep resumes; the others replace their own
            assert "(replacing the results of its previous run)" in text
            assert set(_files(out)) == WRITERS[second][1]
        return
    assert main(cmd(second)) == 2
    err = capsys.readouterr().err
    what = "cosim " + first.split("-")[0]
    assert f"holds the results of `{what} " in err and "--force" in err, err
    assert _files(out) == before  # nothing was written
    assert main(cmd(second, "--force")) == 0
    text = capsys.readouterr().out
    assert str(out) in text  # where the results went
    assert set(_files(out)) == WRITERS[second][1]
    assert json.loads((out / "cosim_run.json").read_text())["command"] == \
        "cosim " + second.split("-")[0]


@pytest.mark.parametrize("command", ["run", "fmu simulate", "sweep", "hil run"])
def test_a_folder_of_unknown_results_is_refused(command, osc_files, tmp_path, capsys):
    """A folder written before claims existed (a results.csv, no cosim_run.json)."""
    model, fmu = osc_files
    out = tmp_path / "old"
    out.mkdir()
    (out / "results.csv").write_text("time,x\n0,1\n")
    argv = WRITERS[command][0](model, fmu) + ["--out", str(out)]
    assert main(argv) == 2
    assert "already holds results.csv of a run that did not record its command" in \
        capsys.readouterr().err
    assert (out / "results.csv").read_text() == "time,x\n0,1\n"
    assert main(argv + ["--force"]) == 0


# ------------------------------------------------------------ FMPy users' habits
@pytest.mark.parametrize("itf", ["me", "cs"])
def test_fmpy_spellings_give_the_same_run(fmu_files, tmp_path, itf, capsys):
    """Issue 30: --stop-time, --start-time, --start-values NAME VALUE (repeatable, several
    pairs at once), --output-interval, --output-file, --input-file, --relative-tolerance
    and --interface-type, as fmpy's command line takes them (fmpy/cli.py)."""
    csv = tmp_path / "force.csv"
    csv.write_text("time,F\n0,0.5\n1,1.5\n")
    ours = ["fmu", "simulate", str(fmu_files["Oscillator"]), "--interface-type", itf,
            "--t-start", "0.1", "--t-end", "1.5", "--set", "k=50", "--set", "c=0.2",
            "--input", str(csv), "--rtol", "1e-9", "--out", str(tmp_path / "ours"), "-q",
            "--dt" if itf == "me" else "--step", "0.01"]
    theirs = ["fmu", "simulate", str(fmu_files["Oscillator"]), "--interface-type", itf,
              "--start-time", "0.1", "--stop-time", "1.5", "--start-values", "k", "50",
              "--start-values", "c", "0.2", "--input-file", str(csv),
              "--relative-tolerance", "1e-9", "--output-file",
              str(tmp_path / "theirs" / "r.csv"), "-q", "--output-interval", "0.01",
              "--plot"]
    assert main(ours) == 0 and main(theirs) == 0
    text = capsys.readouterr().out
    assert f"results: {tmp_path / 'theirs' / 'r.csv'}" in text
    assert (tmp_path / "theirs" / "r.png").is_file()
    a, b = read_csv(tmp_path / "ours" / "results.csv"), read_csv(tmp_path / "theirs" / "r.csv")
    assert a.time[0] == pytest.approx(0.1) and a.time[-1] == pytest.approx(1.5)
    np.testing.assert_array_equal(a.time, b.time)
    np.testing.assert_array_equal(a["x"], b["x"])
    assert main(["fmu", "simulate", str(fmu_files["Oscillator"]), "--interface-type", itf,
                 "--start-values", "k", "50", "c", "0.2", "-q", "--out",
                 str(tmp_path / "pairs")]) == 0  # FMPy's form: several pairs at once


@pytest.mark.parametrize("argv, message", [
    (["--start-values", "k", "50", "c"], "NAME VALUE pairs"),
    (["--output-interval", "0.01", "--dt", "0.02"], "disagree"),
    (["--output-interval", "0"], "must be positive"),
    (["--output-file", "r.csv", "--out", "o"], "not both"),
    (["--output-file", "r.txt"], "name a .csv file"),
    (["--timeout", "5"], "add --out-of-process"),
    (["--interface", "cs", "--interface-type", "me"], "disagree"),
])
def test_options_that_cannot_take_effect_are_errors(fmu_files, tmp_path, monkeypatch,
                                                    capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(["fmu", "simulate", str(fmu_files["Oscillator"]), "-q", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("cosim fmu simulate: error:"), err


def test_the_old_interface_spellings_still_work_with_a_note(fmu_files, tmp_path, capsys):
    """--interface names a CAN/I/O interface in cosim hil and cosim replay; for the FMI
    interface type cosim fmu says --interface-type (FMPy's spelling) everywhere."""
    osc = str(fmu_files["Oscillator"])
    for flag in ("--interface", "--interface-type"):
        assert main(["fmu", "simulate", osc, flag, "cs", "-q", "--out",
                     str(tmp_path / flag.strip("-"))]) == 0
    err = capsys.readouterr().err
    assert err.count("note: --interface is deprecated here, use --interface-type") == 1
    np.testing.assert_array_equal(read_csv(tmp_path / "interface" / "results.csv")["x"],
                                  read_csv(tmp_path / "interface-type" / "results.csv")["x"])
    model = tmp_path / "lag.py"
    model.write_text(MODEL)
    assert main(["fmu", "export", str(model), str(tmp_path / "lag.fmu"), "--kind", "both",
                 "--step", "1e-3"]) == 0
    assert "note: --kind is deprecated here, use --interface-type" in capsys.readouterr().err
    assert main(["fmu", "info", str(tmp_path / "lag.fmu")]) == 0
    assert "ModelExchange + CoSimulation" in capsys.readouterr().out


TABLES = '''
import numpy as np
from blocks.sources import Sine
from blocks.tables import Table1D, Table2D
from cosim import DiagramBuilder

N, M, K = {n}, 7, 3


def build():
    b = DiagramBuilder("tables")
    s = b.add(Sine("s", 1.0, 1.0))
    x = np.linspace(-1, 1, N)
    t = b.add(Table1D("t", x, x ** 2, unit="m"))
    v = b.add(Table1D("v", x, np.outer(x, np.arange(1, K + 1)), unit="N"))
    z = b.add(Table2D("z", x, np.linspace(-1, 1, M), np.ones((N, M))))
    for port in (t.u, v.u, z.u0, z.u1):
        b.connect(s.y, port)
    b.export_output(t.y_port, "y")
    b.export_output(v.y_port, "w")
    b.export_output(z.y_port, "zz")
    return b.build()
'''


@pytest.fixture(scope="module")
def table_fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("tables")
    out = {}
    for n in (3, 40, 400):
        (d / f"tables{n}.py").write_text(TABLES.format(n=n))
        for fmi in ("2", "3"):
            out[n, fmi] = d / f"tables{n}_{fmi}.fmu"
            assert main(["fmu", "export", str(d / f"tables{n}.py"), str(out[n, fmi]),
                         "--fmi", fmi]) == 0
    return out


@pytest.mark.parametrize("fmi", ["2", "3"])
def test_info_folds_arrays_and_tables_to_one_line_each(table_fmus, fmi, capsys):
    """Issue 30: an FMU with large table parameters printed 1,640 lines.  Tables of 3, 40
    and 400 points, a 2-column table, a 2-D table and a vector output: one line each
    whatever their size (FMI 2 spells them as scalar variables), every element with --all."""
    lines = {}
    for n in (3, 40, 400):
        capsys.readouterr()
        assert main(["fmu", "info", str(table_fmus[n, fmi])]) == 0
        text = capsys.readouterr().out
        lines[n] = text.splitlines()
        rows = {ln.split()[0]: ln for ln in lines[n] if ln.startswith("    ")}
        if fmi == "2":
            assert f"t.values[1..{n}]" in rows and f"v.values[1..{n},1..3]" in rows
            assert f"z.values[1..{n},1..7]" in rows and "w[1..3]" in rows
            assert f"({n} variables) table values y of 't'" in rows[f"t.values[1..{n}]"]
            assert f"({3 * n} variables)" in rows[f"v.values[1..{n},1..3]"]
            assert text.rstrip().endswith("--all lists each)")
        else:  # FMI 3 arrays are one variable each
            assert "Float64[" + str(n) + "]" in rows["t.values"]
            assert f"Float64[{n},7]" in rows["z.values"]
        assert main(["fmu", "info", str(table_fmus[n, fmi]), "--all"]) == 0
        full = capsys.readouterr().out.splitlines()
        if fmi == "2":
            assert len(full) > 11 * n  # each of the 11 n table values on its line
    assert len(lines[3]) == len(lines[40]) == len(lines[400]) < 20


def test_a_closed_pipe_ends_fmu_info_quietly(table_fmus, tmp_path):
    """`cosim fmu info ... | head`: no BrokenPipeError report (the guard is in cosim.cli)."""
    from tests.unit.test_cli import assert_quiet_end, closed_pipe
    assert_quiet_end(closed_pipe(["fmu", "info", str(table_fmus[400, "2"]), "--all"],
                                 tmp_path))
    r = subprocess.run(f"{shlex.quote(sys.executable)} -m cosim fmu info "
                       f"{table_fmus[400, '2']} --all | head -n 3; exit ${{PIPESTATUS[0]}}",
                       shell=True, executable="/bin/bash", capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    assert len(r.stdout.splitlines()) == 3
    assert_quiet_end(r)


UNIT_NOTE = '''
from blocks.math import Gain
from blocks.sources import Constant
from cosim import DiagramBuilder

SIMULATION = {"t_end": 1.0, "dt": 1e-3}


def build():
    b = DiagramBuilder("uw")
    c = b.add(Constant("c", 2.0, unit="m/s"))
    g = b.add(Gain("g", 2.0))
    b.connect(c.y, g.u)  # a unit into an input without one: a note
    b.export_output(g.y, "y")
    return b.build()
'''


@pytest.mark.parametrize("via", ["c", "python"])
def test_export_prints_each_note_once(tmp_path, monkeypatch, capsys, via):
    """Issue 30: the unit note came twice (the export and the FMU builder each build the
    model)."""
    if via == "python":
        pytest.importorskip("pythonfmu")
    (tmp_path / "uw_model.py").write_text(UNIT_NOTE)
    monkeypatch.syspath_prepend(str(tmp_path))
    for model in ("uw_model:build", str(tmp_path / "uw_model.py")):
        assert main(["fmu", "export", model, str(tmp_path / "uw.fmu"), "--via", via]) == 0
        err = capsys.readouterr().err
        assert err.count("note: connect(): output 'c.y' [m/s] feeds input 'g.u'") == 1, err
