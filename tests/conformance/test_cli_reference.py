"""``cosim fmu`` on the Modelica Reference FMUs, as an FMPy user would call it.

Every model of both FMI versions through ``info``, ``validate --instantiate`` and
``simulate`` (each interface) with the defaults: exit status 0, or 2 with one clear
``error:`` line where cosim cannot run the case (an interface the FMU does not offer;
Roberts' default Co-Simulation experiment), never a traceback.  Also the typed ``--set``
of the Feedthrough model's String, Binary, Int64/UInt64 and Enumeration variables, and
``load_fmu`` without a name for every model name ("van der Pol oscillator").
"""

from __future__ import annotations

import contextlib

import pytest

from cosim.cli import main
from cosim.writers import read_csv
from tests.conformance.build import MODELS

CASES = [(v, m) for v, models in MODELS.items() for m in models]

#: the cases cosim refuses with exit status 2, and the words of the one error line
REFUSED = {
    # Clocks offers Scheduled Execution only (it runs with --interface auto or se)
    (3, "Clocks", "me"): "does not implement ModelExchange (it has: ScheduledExecution); "
                         "use interface='ScheduledExecution'",
    (3, "Clocks", "cs"): "does not implement CoSimulation (it has: ScheduledExecution); "
                         "use interface='ScheduledExecution'",
    # Roberts' default experiment: stopTime 1e8 at a fixed internal step of 1e-3 s (1e11
    # steps) in Co-Simulation (Model Exchange runs it, from its startTime 1e-5, in 1.6 s)
    (3, "Roberts", "cs"): "steps internally at 0.001 s: 1e+11 steps to its stopTime 1e+08 "
                          "s; give a shorter --t-end",
}


def _fmu(reference_fmus, version, model):
    return str(reference_fmus[(version, model)])


@pytest.mark.parametrize("version, model", CASES)
@pytest.mark.parametrize("itf", ["me", "cs"])
def test_simulate_every_model_with_the_defaults(reference_fmus, tmp_path, capsys, version,
                                                model, itf):
    out = tmp_path / "out"
    rc = main(["fmu", "simulate", _fmu(reference_fmus, version, model), "--interface-type", itf,
               "--out", str(out), "-q"])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.out + cap.err
    refused = REFUSED.get((version, model, itf))
    if refused:
        assert rc == 2
        errors = [ln for ln in cap.err.splitlines() if "error:" in ln]
        assert len(errors) == 1 and errors[0].startswith("cosim fmu simulate: error: ")
        assert refused in errors[0]
        return
    assert rc == 0, cap.err
    res = read_csv(out / "results.csv")
    assert res.diagnostics["status"] == "complete" and len(res.time) > 2


@pytest.mark.parametrize("args", [
    ["--interface-type", "me", "--t-start", "0", "--t-end", "100", "--solver", "radau",
     "--rtol", "1e-6", "--atol", "1e-10"],
    ["--interface-type", "cs", "--t-end", "1"],
])
def test_roberts_runs_with_the_options_its_refusal_names(reference_fmus, tmp_path, args):
    out = tmp_path / "out"
    assert main(["fmu", "simulate", _fmu(reference_fmus, 3, "Roberts"), "--out", str(out),
                 "-q", *args]) == 0
    res = read_csv(out / "results.csv")
    # Robertson's chemistry conserves mass: x1 + x2 + x3 = 1
    total = res["y1"] + res["y2"] + res["y3"]
    assert abs(total - 1.0).max() < 1e-3


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("itf", ["me", "cs"])
def test_feedthrough_takes_typed_start_values_of_every_type(reference_fmus, tmp_path,
                                                            capsys, version, itf):
    sets = ["String_input=Set me too!", "Int32_input=-7", "Boolean_input=true",
            "Float64_continuous_input=1", "Enumeration_input=Option 2"]
    if version == 3:
        sets += ["Int64_input=-9223372036854775807", "UInt64_input=18446744073709551615",
                 "Binary_input=0x0102ff", "Int8_input=-128"]
    out = tmp_path / "out"
    argv = ["fmu", "simulate", _fmu(reference_fmus, version, "Feedthrough"), "--interface-type",
            itf, "--out", str(out), "--t-end", "0.1"]
    for s in sets:
        argv += ["--set", s]
    assert main(argv) == 0, capsys.readouterr().err
    summary = capsys.readouterr().out
    res = read_csv(out / "results.csv")
    assert res["Float64_continuous_output"][-1] == 1.0
    assert res["Int32_output"][-1] == -7 and res["Boolean_output"][-1]
    assert res["Enumeration_output"][-1] == 2
    if version == 3:  # the summary prints integers exactly
        assert "Int64_output                 final -9223372036854775807" in summary
        assert "UInt64_output                final 18446744073709551615" in summary
        assert "Int8_output                  final -128" in summary


@pytest.mark.parametrize("version, model", CASES)
def test_info_and_validate_every_model(reference_fmus, capsys, version, model):
    path = _fmu(reference_fmus, version, model)
    assert main(["fmu", "info", path]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"FMU {model}.fmu: model '") and ")/(" not in out
    if model == "BouncingBall":  # units as the FMU writes them
        assert [ln.split()[:3] for ln in out.splitlines() if ln.startswith("    g ")] == [
            ["g", "Real" if version == 2 else "Float64", "m/s2"]]
    assert main(["fmu", "validate", path, "--instantiate"]) == 0
    cap = capsys.readouterr()
    assert cap.out.rstrip().endswith(": valid") and "Traceback" not in cap.out + cap.err


@pytest.mark.parametrize("version, model", CASES)
def test_load_fmu_without_a_name_for_every_model_name(reference_fmus, version, model):
    from cosim.block import check_name
    from fmus import FMU, load_fmu
    from fmus.errors import FMUWarning
    path = reference_fmus[(version, model)]
    with pytest.warns(FMUWarning) if model == "Roberts" else contextlib.nullcontext():
        fmu = FMU(path)
    obj = load_fmu(fmu)
    assert check_name(obj.name, "block") == obj.name
    if model == "VanDerPol":
        assert obj.name == ("Van_der_Pol_oscillator" if version == 2
                            else "van_der_Pol_oscillator")

