"""``cosim fmu info|validate|simulate|export`` on the test FMUs and an exported model."""

import math
import pathlib

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


def test_info_prints_metadata_and_ports(fmu_files, capsys):
    assert main(["fmu", "info", str(fmu_files["Oscillator"])]) == 0
    out = capsys.readouterr().out
    assert "model 'Oscillator', FMI 2.0" in out
    assert "default experiment: startTime=0.0, stopTime=2.0, stepSize=0.001" in out
    assert "parameter  k                  Real     N/m    40" in out


def test_validate_reports_valid_and_invalid(fmu_files, tmp_path, capsys):
    assert main(["fmu", "validate", str(fmu_files["Oscillator"]), "--instantiate"]) == 0
    out = capsys.readouterr().out
    assert "CoSimulation: instantiated and initialized" in out
    assert "0 errors, 0 warnings" in out and out.rstrip().endswith("valid")
    bad = rewrite_fmu(fmu_files["LoopA"], tmp_path / "LoopA.fmu", replace={
        "modelDescription.xml": ('causality="input"><Real start="0"/>',
                                 'causality="input"><Real start="7" max="1"/>')})
    assert main(["fmu", "validate", str(bad)]) == 1
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
    assert main(["fmu", "simulate", str(fmu_files["Oscillator"]), "--interface", itf,
                 "--set", "k=50", "--set", "F=1", "--out", str(out), "-q",
                 "--rtol", "1e-10", "--atol", "1e-12"]) == 0
    res = read_csv(out / "results.csv")
    assert res.diagnostics["status"] == "complete"
    assert res.units["fmu.x"] == "m" and res.time[-1] == pytest.approx(2.0)
    err = np.max(np.abs(res["fmu.x"] - _exact_x(res.time)))
    assert err < 1e-6, err  # measured ME rk45 4.7e-15; CS (its own RK4 at 1 ms) 6.5e-14


def test_simulate_plays_inputs_from_csv(fmu_files, tmp_path):
    csv = tmp_path / "force.csv"
    csv.write_text("time,F\n0,1\n2,1\n")
    out = tmp_path / "o"
    assert main(["fmu", "simulate", str(fmu_files["Oscillator"]), "--input", str(csv),
                 "--set", "k=50", "--out", str(out), "-q", "--interface", "cs"]) == 0
    res = read_csv(out / "results.csv")
    assert np.max(np.abs(res["fmu.x"] - _exact_x(res.time))) < 1e-6


def test_simulate_errors_are_clear(fmu_files, tmp_path, capsys):
    p = str(fmu_files["Oscillator"])
    assert main(["fmu", "simulate", p, "--set", "x=3", "--out", str(tmp_path)]) == 2
    assert "variable 'x' is output, not a parameter or input" in capsys.readouterr().err
    assert main(["fmu", "simulate", p, "--set", "kk=3", "--out", str(tmp_path)]) == 2
    assert "has no variable 'kk'" in capsys.readouterr().err
    # past the bouncing ball's accumulation point t* = 0.4515 (1 + 2 0.7 / 0.3) = 2.5586 s
    out = tmp_path / "ball"
    assert main(["fmu", "simulate", str(fmu_files["BouncingBall"]), "--t-end", "3",
                 "--out", str(out), "-q"]) == 2
    assert "Zeno behaviour" in capsys.readouterr().err
    res = read_csv(out / "results.csv")  # what ran before is on disk
    assert res.diagnostics["status"].startswith("error: ZenoError")
    assert res.time[-1] == pytest.approx(math.sqrt(2 / 9.81) * (1 + 2 * 0.7 / 0.3), abs=1e-4)


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
    err = np.max(np.abs(res["fmu.y"] - 0.2 * (1 - np.exp(-5 * res.time))))
    assert err < 1e-9, err  # RK4 at 1 ms: measured 3.8e-13
    capsys.readouterr()
    assert main(["fmu", "export", str(model), str(tmp_path / "x.fmu"), "--via", "python"]) == 2
    assert "needs an importable 'package.module:function'" in capsys.readouterr().err
