"""Issue 31 item 5: ``cosim fmu simulate`` gives the FMU the default experiment's tolerance
(as FMPy's ``simulate_fmu``), or ``--tolerance``, for FMI 2 and 3, CS and ME.

The tolerance the FMU gets is read where it is handed over: the driver's
``enter_initialization`` (``fmi2SetupExperiment`` / ``fmi3EnterInitializationMode``).
"""

import pytest

from cosim.cli import main
from fmus.driver import Driver
from tests.fmu_builders import rewrite_fmu

MD = "modelDescription.xml"


@pytest.fixture(scope="module")
def with_tolerance(fmu_files, tmp_path_factory):
    """The test Oscillator (FMI 2 and 3, ME and CS) with a default experiment tolerance
    of 1e-4."""
    d = tmp_path_factory.mktemp("tolerance")
    fmi2 = rewrite_fmu(fmu_files["Oscillator"], d / "Oscillator.fmu", replace={MD: (
        '<DefaultExperiment startTime="0" stopTime="2" stepSize="0.001"/>',
        '<DefaultExperiment startTime="0" stopTime="2" stepSize="0.001" tolerance="1e-4"/>')})
    fmi3 = rewrite_fmu(fmu_files["Oscillator3"], d / "Oscillator3.fmu", replace={MD: (
        "<ModelVariables>",
        '<DefaultExperiment startTime="0" stopTime="2" stepSize="0.001" tolerance="1e-4"/>\n'
        "  <ModelVariables>")})
    return {2: fmi2, 3: fmi3, "none": fmu_files["Oscillator"]}


@pytest.fixture
def handed(monkeypatch):
    """The tolerances handed to FMUs (one per initialization)."""
    got: list = []
    real = Driver.enter_initialization

    def spy(self, t0, tolerance=None, stop=None):
        got.append(tolerance)
        return real(self, t0, tolerance, stop)

    monkeypatch.setattr(Driver, "enter_initialization", spy)
    return got


def _run(fmu, itf, tmp_path, *extra):
    argv = ["fmu", "simulate", str(fmu), "--interface-type", itf, "--t-end", "0.05", "-q",
            "--out", str(tmp_path / "out"), *extra]
    assert main(argv) == 0


@pytest.mark.parametrize("fmi", [2, 3])
@pytest.mark.parametrize("itf", ["cs", "me"])
def test_the_default_experiment_tolerance_reaches_the_fmu(with_tolerance, handed, tmp_path,
                                                         fmi, itf):
    _run(with_tolerance[fmi], itf, tmp_path)
    assert handed and set(handed) == {1e-4}, handed


@pytest.mark.parametrize("fmi", [2, 3])
@pytest.mark.parametrize("itf", ["cs", "me"])
def test_tolerance_option_replaces_it(with_tolerance, handed, tmp_path, fmi, itf):
    _run(with_tolerance[fmi], itf, tmp_path, "--tolerance", "1e-7")
    assert handed and set(handed) == {1e-7}, handed


def test_fmpys_relative_tolerance_is_the_fmus_tolerance_too(with_tolerance, handed, tmp_path):
    """FMPy's --relative-tolerance sets CVode's and the co-simulation FMU's tolerance."""
    _run(with_tolerance[2], "cs", tmp_path, "--relative-tolerance", "1e-8")
    assert set(handed) == {1e-8}


def test_without_a_default_tolerance_none_is_defined(with_tolerance, handed, tmp_path):
    _run(with_tolerance["none"], "cs", tmp_path)
    assert handed and set(handed) == {None}


@pytest.mark.parametrize("value", ["0", "1.5", "-1e-3"])
def test_a_tolerance_out_of_range_is_an_error(with_tolerance, tmp_path, capsys, value):
    assert main(["fmu", "simulate", str(with_tolerance[2]), "-q", "--out",
                 str(tmp_path / "o"), f"--tolerance={value}"]) == 2
    assert "relative tolerance is between 0 and 1" in capsys.readouterr().err
