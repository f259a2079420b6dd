"""Bad input: each case a clear message (what, where, what to do) and a clean recovery.

Corrupt archive, missing binary, invalid model description, an FMU that returns an
error status (C and Python FMUs), one that hangs (killed by the out-of-process
watchdog), one that crashes (SIGABRT, SIGSEGV in the child process), and mismatched
units at connect (diagram and master).
"""

from __future__ import annotations

import time

import pytest

from blocks.math import Gain
from blocks.sources import Constant
from cosim import DiagramBuilder, MasterScheduler
from cosim.errors import UnitError
from cosim.subsystem import DiagramSubsystem

pytest.importorskip("fmpy")

from fmus import FMU, load_fmu  # noqa: E402
from fmus.errors import (  # noqa: E402
    FMUArchiveError,
    FMUBinaryError,
    FMUCallError,
    FMUConfigError,
    FMUCrashError,
    FMUTimeoutError,
    ModelDescriptionError,
)
from tests.fmu_builders import rewrite_fmu  # noqa: E402


def _source(value=1.0, unit=None):
    b = DiagramBuilder("src")
    c = b.add(Constant("c", value, unit=unit))
    b.export_output(c.y, "u")
    return DiagramSubsystem(b.build(), solver="rk4", dt=1e-3)


def _run(sub, t_end=0.1, h=0.01):
    return MasterScheduler([_source(), sub], [("src.u", f"{sub.name}.u")], h).run(t_end)


# ------------------------------------------------------------------ build time
def test_a_corrupt_archive(tmp_path):
    p = tmp_path / "Broken.fmu"
    p.write_bytes(b"PK\x03\x04 garbage, not really a zip")
    with pytest.raises(FMUArchiveError, match="FMU '.*Broken.fmu': is not a ZIP archive"):
        load_fmu(p)


def test_a_missing_binary_for_this_platform_is_reported_at_load(fmu_files, tmp_path):
    p = rewrite_fmu(fmu_files["LoopA"], tmp_path / "LoopA.fmu", drop=("binaries/",),
                    add={"binaries/win64/LoopA.dll": b"MZ"})
    fmu = FMU(p)  # the description is fine (fmu_info works); the instance needs the binary
    assert fmu.info.model_name
    with pytest.raises(FMUBinaryError, match="FMU 'LoopA.fmu' has no binary for this "
                                             "platform .*binaries for: win64; it ships "
                                             "sources: compile them"):
        load_fmu(p)  # not only at the first step


def test_a_binary_that_does_not_load_is_reported_at_load(fmu_files, tmp_path):
    p = rewrite_fmu(fmu_files["LoopA"], tmp_path / "LoopA.fmu", drop=("binaries/",),
                    add={"binaries/linux64/LoopA.so": b"not an ELF file"})
    with pytest.raises(FMUBinaryError, match="FMU 'LoopA.fmu': cannot load its binary "
                                             "binaries/linux64/LoopA.so: it is not an ELF"):
        load_fmu(p, interface="cs")


def _patch_binary(src, dst, patch):
    import zipfile
    with zipfile.ZipFile(src) as z:
        name = next(n for n in z.namelist() if n.endswith(".so"))
        data = z.read(name)
    return rewrite_fmu(src, dst, drop=(name,), add={name: patch(data)})


def test_a_binary_for_another_architecture_is_reported_at_load(fmu_files, tmp_path):
    import platform

    def other_machine(data):  # e_machine, bytes 18-19 (little endian): 183 = aarch64
        return data[:18] + (62 if platform.machine() == "aarch64" else 183).to_bytes(
            2, "little") + data[20:]
    p = _patch_binary(fmu_files["Oscillator"], tmp_path / "Oscillator.fmu", other_machine)
    with pytest.raises(FMUBinaryError, match="cannot load its binary .*Oscillator.so: it is "
                                             "built for 64-bit ELF machine (183|62), this is "
                                             "64-bit"):
        load_fmu(p)


@pytest.mark.parametrize("model, function", [("Oscillator", "fmi2GetDerivatives"),
                                             ("Oscillator3", "fmi3GetClock")])
def test_a_binary_that_lacks_an_fmi_function_is_reported_at_load(fmu_files, tmp_path, model,
                                                                 function):
    # rename the exported symbol in the dynamic string table (same length)
    renamed = function[:-1] + ("X" if function[-1] != "X" else "Y")
    p = _patch_binary(fmu_files[model], tmp_path / f"{model}.fmu", lambda d: d.replace(
        function.encode() + b"\0", renamed.encode() + b"\0"))
    with pytest.raises(FMUBinaryError, match=f"does not export {function} \\(FMI "
                                             f"{model[-1] if model[-1] == '3' else 2} "
                                             "ModelExchange\\); every FMI function must be "
                                             "exported"):
        load_fmu(p)


@pytest.mark.parametrize("model, itf", [("Oscillator", "me"), ("Oscillator", "cs"),
                                        ("Oscillator3", "me"), ("Oscillator3", "cs")])
def test_a_wrong_instantiation_token_is_reported_at_load(fmu_files, tmp_path, model, itf):
    good = "{2f1c6a52-4a8e-4d1b-9a7e-0c05c1a7ed01}"
    p = rewrite_fmu(fmu_files[model], tmp_path / f"{model}.fmu", replace={
        "modelDescription.xml": (good, good.replace("ed01", "ed02"))})
    with pytest.raises(FMUBinaryError, match="(wrong guid|wrong instantiation token).*checked "
                                             "at load: one trial instantiation"):
        load_fmu(p, interface=itf)
    load_fmu(p, interface=itf, check=False)  # opting out defers it to the first run
    # a block or subsystem made directly checks it too
    from fmus import FMUBlock, FMUSubsystem
    cls = FMUBlock if itf == "me" else FMUSubsystem
    with pytest.raises(FMUBinaryError, match="(wrong guid|wrong instantiation token)"):
        cls(FMU(p), "direct")


def test_a_wrong_token_is_checked_in_the_child_process_out_of_process(fmu_files, tmp_path,
                                                                      monkeypatch):
    good = "{2f1c6a52-4a8e-4d1b-9a7e-0c05c1a7ed01}"
    p = rewrite_fmu(fmu_files["Oscillator"], tmp_path / "Oscillator.fmu", replace={
        "modelDescription.xml": (good, good.replace("ed01", "ed02"))})
    import fmus.driver

    def no_driver_here(*a, **k):
        raise AssertionError("instantiated in the host process")
    monkeypatch.setattr(fmus.driver, "Driver", no_driver_here)
    with pytest.raises(FMUBinaryError, match="wrong guid.*checked at load"):
        load_fmu(p, interface="cs", out_of_process=True)


def test_the_token_found_in_the_binary_needs_no_instantiation_at_load(fmu_files,
                                                                      monkeypatch):
    import fmus.driver

    def no_driver(*a, **k):
        raise AssertionError("instantiated at load")
    fmu = FMU(fmu_files["Oscillator"])
    assert fmu.check_binary("ModelExchange").has_token
    monkeypatch.setattr(fmus.driver, "Driver", no_driver)
    fmu.block("osc")  # no instantiation: the token is in the binary
    assert not FMU(fmu_files["LimMass2"]).check_binary("CoSimulation").has_token  # pythonfmu


def test_an_interface_the_fmu_does_not_have(fmu_files):
    with pytest.raises(FMUConfigError, match="does not implement ModelExchange \\(it has: "
                                             "CoSimulation\\)"):
        load_fmu(fmu_files["LimMass2"], interface="me")


def test_an_invalid_model_description_names_variable_and_rule(fmu_files, tmp_path):
    p = rewrite_fmu(fmu_files["LoopA"], tmp_path / "LoopA.fmu", replace={
        "modelDescription.xml": ('causality="input"><Real start="0"/>',
                                 'causality="input"><Real start="7" max="1"/>')})
    with pytest.raises(ModelDescriptionError, match=r"variable 'u' \(line \d+\): start = 7 "
                                                    r"outside \[-inf, 1.0\] \[rule: min <= "
                                                    r"start <= max"):
        load_fmu(p, validate="strict")  # FMPy reads it: the default warns (issue 31)


# -------------------------------------------------------------------- run time
def test_a_python_fmu_that_raises_reports_the_python_error(fmu_files):
    s = load_fmu(fmu_files["Misbehave"], name="p", parameters={"mode": 1})
    with pytest.raises(FMUCallError, match="fmi2DoStep returned fatal at t = 0.05 s \\(no log "
                                           "message; instantiate with logging_on=True"):
        _run(s)
    s = load_fmu(fmu_files["Misbehave"], name="p", parameters={"mode": 1}, logging_on=True)
    with pytest.raises(FMUCallError, match="fmi2DoStep returned fatal at t = 0.05 s; the FMU "
                                           "logged:(.|\\n)*cannot go on at t = 0.05"):
        _run(s)
    s.set_parameter("mode", 0)
    assert _run(s)["p.y"][-1] == 1.0  # recovered


@pytest.mark.timing
@pytest.mark.parametrize("mode, error, match", [
    (2, FMUTimeoutError, "did not return within 0.5 s \\(out-of-process watchdog\\); the "
                         "FMU's process \\(pid \\d+\\) was killed"),
    (3, FMUCrashError, "died during doStep .*\\(signal SIGABRT\\); the host is unaffected"),
    (4, FMUCrashError, "died during doStep .*\\(signal SIGSEGV\\)"),
])
def test_hangs_and_crashes_out_of_process_leave_the_host_running(fmu_files, mode, error,
                                                                 match):
    s = load_fmu(fmu_files["Faulty"], name="f", interface="cs", parameters={"mode": mode},
                 out_of_process=True, timeout_s=0.5)
    t0 = time.perf_counter()
    with pytest.raises(error, match=match) as exc:
        _run(s)
    assert "at t = 0.05 s" in str(exc.value) or error is FMUCrashError
    assert time.perf_counter() - t0 < 10
    s.set_parameter("mode", 0)  # the next run gets a fresh child process
    assert _run(s)["f.y"][-1] == pytest.approx(0.1)


@pytest.mark.timing
def test_a_python_fmu_that_hangs_is_killed_by_the_watchdog(fmu_files):
    s = load_fmu(fmu_files["Misbehave"], name="p", parameters={"mode": 2},
                 out_of_process=True, timeout_s=0.5)
    with pytest.raises(FMUTimeoutError, match="instance 'p': doStep .* at t = 0.05 s did not "
                                              "return within 0.5 s"):
        _run(s)


# ---------------------------------------------------------------------- units
def test_mismatched_units_at_connect_in_a_diagram(fmu_files):
    osc = load_fmu(fmu_files["Oscillator"], name="osc")
    bad = DiagramBuilder("bad")
    bad.add(osc)
    g = bad.add(Gain("g", 2.0, input_unit="N", unit="N"))
    with pytest.raises(UnitError, match="unit mismatch: output 'osc.x' \\[m\\] -> input "
                                        "'g.u' \\[N\\]"):
        bad.connect(osc.output("x"), g.u)
    osc = load_fmu(fmu_files["Oscillator"], name="osc")
    b = DiagramBuilder("d")
    b.add(osc)
    mm = b.add(Gain("mm", 1.0, input_unit="m", unit="m"))
    b.connect(osc.output("x_mm"), mm.u)  # mm -> m converts
    c = b.add(Constant("c", 0.0, unit="N"))
    b.connect(c.y, osc.input("F"))
    from cosim import Simulator
    res = Simulator(b.build(), solver="rk4", dt=1e-3).run(0.01)
    assert res["mm.y"][0] == pytest.approx(0.1, rel=1e-15)


def test_mismatched_units_at_connect_in_the_master(fmu_files):
    s = load_fmu(fmu_files["LimMass2v3"], name="m2")
    with pytest.raises(UnitError, match="connection src.u \\[m\\] -> m2.fc \\[N\\]"):
        MasterScheduler([_source(unit="m"), s], [("src.u", "m2.fc")], 1e-3)
