"""SSP files as other tools write them, read, run and written back.

The fixtures in ``ssp_fixtures/`` are written for these tests in the style of files from
OMSimulator's test suite (each says which upstream file it follows): OMSimulator 2's nested
systems with ``oms:SimulationInformation`` solvers and an ``.ssm`` parameter mapping
(``oms_nested_me``), an SSP 2.0 file in easySSP's style with connections written against the
data flow and a nested Model Exchange system without annotations (``easyssp_nested``), and
OMSimulator 3's named solvers with Boolean, Integer and Enumeration mappings on the
Modelica Reference FMUs (``oms3_reference``).  Each is checked against what the standard and
OMSimulator say it means, against the same system wired by hand, and through a round trip:
export -> schema-valid files -> read -> the same master -> the same results.
"""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

pytest.importorskip("fmpy")
pytest.importorskip("lxml")

from cosim import DiagramBuilder, MasterScheduler  # noqa: E402
from cosim.subsystem import DiagramSubsystem  # noqa: E402
from fmus import FMU, FMUBlock  # noqa: E402
from fmus.ssp import SSPError, export_master_ssp, export_ssp, load_ssp, read_ssp  # noqa: E402
from tests.conformance.ssp_check import pack, schema_errors  # noqa: E402
from tests.fmu_builders import session_fmus  # noqa: E402


@pytest.fixture(scope="session")
def fmu_files(tmp_path_factory):
    return session_fmus(tmp_path_factory)


@pytest.fixture(scope="module")
def oms_nested(fmu_files, tmp_path_factory):
    d = tmp_path_factory.mktemp("oms_nested")
    return pack("oms_nested_me", d / "oms_nested_me.ssp",
                {"Oscillator.fmu": fmu_files["Oscillator"], "LoopA.fmu": fmu_files["LoopA"]})


@pytest.fixture(scope="module")
def easyssp(fmu_files, tmp_path_factory):
    d = tmp_path_factory.mktemp("easyssp")
    return pack("easyssp_nested", d / "easyssp_nested.ssp",
                {"Oscillator.fmu": fmu_files["Oscillator"], "LoopA.fmu": fmu_files["LoopA"]})


@pytest.fixture(scope="module")
def oms3(reference_fmus, tmp_path_factory):
    d = tmp_path_factory.mktemp("oms3")
    return pack("oms3_reference", d / "oms3_reference.ssp",
                {f"{m}.fmu": reference_fmus[(2, m)] for m in ("Dahlquist", "Feedthrough",
                                                               "VanDerPol")})


def _me_unit(fmu, name, parameters, states, solver):
    """One FMU as an ME block in its own diagram subsystem, every port exported."""
    b = DiagramBuilder(name)
    blk = b.add(FMUBlock(fmu, name, parameters=parameters))
    for v in blk.in_vars:
        b.export_input(blk.input(v.port), v.port)
    for v in blk.out_vars:
        b.export_output(blk.output(v.port), v.port)
    sub = DiagramSubsystem(b.build(), **solver)
    x = list(blk.x0)
    for var, value in states.items():
        x[fmu.info.states.index(fmu.info.by_name[var])] = value
    sub.ctx.set_state(blk.xh, x)
    return sub


# ------------------------------------------------------------- OMSimulator 2
def test_omsimulator_nested_system_reads_as_the_standard_and_omsimulator_mean(oms_nested):
    s = read_ssp(oms_nested)
    assert list(s.components) == ["plant/osc", "ctrl"]
    osc, ctrl = s.components["plant/osc"], s.components["ctrl"]
    # the .ssm: 0.1 N/mm converted to the connector's N/m, then + 10; the system parameter
    # connector k_plant -> plant.k -> osc.k wins over plant's own binding osc.k = 1; the
    # top-level plant.osc.c wins over plant's osc.c = 0.5; one source, two targets
    assert osc.parameters == {"x": pytest.approx(0.02), "c": 0.125, "k": 110.0}
    assert ctrl.parameters == {"x": -20.0, "ka": 0.25}
    assert s.parameters == {"k_plant": 110.0}
    # the strongly coupled subsystem: its ME component in one unit with euler at 0.1 ms
    assert (osc.unit, ctrl.unit) == ("plant", None)
    assert (s.solvers["plant"].method, s.solvers["plant"].dt) == ("euler", 1e-4)
    assert (s.step_s, s.tolerance, s.start, s.stop) == (1e-3, 1e-4, 0.0, 1.0)
    assert [str(c) for c in s.connections] == [
        "ctrl.y -> plant/osc.F", "plant/osc.x -> plant/x", "plant/osc.x -> ctrl.u",
        "ctrl.y -> force", "plant/osc.x -> position"]
    assert s.connections[2].transform == (-2.0, 0.0)
    notes = "\n".join(s.notes)
    assert "line 148: DefaultExperiment: OMSimulator's resultFile, loggingInterval" in notes
    assert "resources/co_sim.ssm: 2 mapping entries name no parameter" in notes


def test_omsimulator_nested_system_runs_as_the_system_wired_by_hand(oms_nested, fmu_files):
    res = load_ssp(oms_nested).run()
    osc_fmu, lag_fmu = FMU(fmu_files["Oscillator"]), FMU(fmu_files["LoopA"])
    plant = _me_unit(osc_fmu, "plant", {"k": 110.0, "c": 0.125}, {"x": 0.02},
                     dict(solver="euler", dt=1e-4))
    ctrl = lag_fmu.subsystem("ctrl", parameters={"ka": 0.25}, tolerance=1e-4)
    ctrl.params[lag_fmu.info.by_name["x"]] = -20.0
    ref = MasterScheduler([ctrl, plant], [("ctrl.y", "plant.F"),
                                          ("plant.x", "ctrl.u", (-2.0, 0.0))], 1e-3).run(1.0)
    np.testing.assert_array_equal(res["plant/osc.x"], ref["plant.x"])  # measured: 0.0
    np.testing.assert_array_equal(res["ctrl.y"], ref["ctrl.y"])
    np.testing.assert_array_equal(res["co_sim.position"], ref["plant.x"])  # system outputs
    np.testing.assert_array_equal(res["co_sim.force"], ref["ctrl.y"])
    assert res.time[-1] == 1.0 and len(res.time) == 1001
    assert abs(res["plant/osc.x"][0] - 0.02) < 1e-15  # the mapped start value, in metres


# -------------------------------------------------------------------- easySSP
def test_easyssp_style_ssp2_file_flattens_its_nested_model_exchange_system(easyssp):
    s = read_ssp(easyssp)
    assert s.version == "2.0"
    assert {n: (c.unit, c.parameters) for n, c in s.components.items()} == {
        "SuT/osc": ("SuT", {"k": 50.0, "m": 2.0, "F_step": 0.0}),   # 0.05 N/mm -> N/m
        "SuT/lag": ("SuT", {"ka": 0.5}), "stimulus": (None, {"x": 3.0})}
    # written input -> output; the kinds give the flow
    assert [str(c) for c in s.connections] == [
        "stimulus.y -> SuT/osc.F", "SuT/osc.x -> SuT/lag.u", "SuT/osc.x -> SuT/x",
        "SuT/lag.y -> SuT/y_out", "SuT/osc.x -> position", "SuT/lag.y -> y"]
    assert s.solvers["SuT"].origin == "default" and s.solvers["SuT"].method == "bdf"
    assert "no solver annotation; cosim's variable-step 'bdf' is used" in "\n".join(s.notes)
    with pytest.raises(SSPError, match="no macro step: the SSP has no step annotation .*give "
                                       "step_s="):
        load_ssp(s)


def test_easyssp_style_model_exchange_unit_runs_as_the_diagram_built_by_hand(easyssp, fmu_files):
    res = load_ssp(easyssp, step_s=0.01).run()
    osc_fmu, lag_fmu = FMU(fmu_files["Oscillator"]), FMU(fmu_files["LoopA"])
    b = DiagramBuilder("SuT")
    osc = b.add(FMUBlock(osc_fmu, "SuT__osc", parameters={"k": 50.0, "m": 2.0, "F_step": 0.0}))
    lag = b.add(FMUBlock(lag_fmu, "SuT__lag", parameters={"ka": 0.5}))
    b.connect(osc.output("x"), lag.input("u"))  # inside the unit: no co-simulation delay
    b.export_input(osc.input("F"), "F")
    b.export_output(osc.output("x"), "x")
    b.export_output(lag.output("y"), "y")
    sut = DiagramSubsystem(b.build(), solver="bdf")
    stim = lag_fmu.subsystem("stimulus")
    stim.params[lag_fmu.info.by_name["x"]] = 3.0
    ref = MasterScheduler([stim, sut], [("stimulus.y", "SuT.F")], 0.01).run(2.0)
    np.testing.assert_array_equal(res["SuT/osc.x"], ref["SuT.x"])  # measured: 0.0
    np.testing.assert_array_equal(res["SuT/lag.y"], ref["SuT.y"])
    # the top-level output in mm (its connector's unit) shows x in m, converted
    np.testing.assert_array_equal(res["Stimulated-Oscillator.position"], 1000.0 * ref["SuT.x"])
    assert res.units["Stimulated-Oscillator.position"] == "mm"
    assert np.max(np.abs(ref["SuT.x"] - ref["SuT.x"][0])) > 1e-3  # the stimulus moves it


# -------------------------------------------------------------- OMSimulator 3
def test_omsimulator3_solvers_and_value_mappings_on_the_reference_fmus(oms3, reference_fmus):
    s = read_ssp(oms3)
    assert {n: (c.unit, c.parameters) for n, c in s.components.items()} == {
        "decay": ("solver1", {"k": 2.0}),   # 2 * 1.5 - 1
        "feed": (None, {"Boolean_input": True, "Int32_input": 7, "Enumeration_input": 2}),
        "vdp": (None, {"mu": 0.5})}
    assert (s.step_s, s.tolerance) == (0.01, 1e-6)  # oms_ma's fixedStepSize and tolerance
    assert (s.solvers["solver1"].method, s.solvers["solver1"].rtol) == ("bdf", 1e-8)
    res = load_ssp(oms3).run()
    t = res.time
    assert t[-1] == 2.0
    err = np.max(np.abs(res["decay.x"] - np.exp(-2.0 * t)))
    assert err < 2e-6, err  # measured 6.2e-7 (cvode's rtol 1e-8 -> bdf)
    loose = load_ssp(oms3, solvers={"solver1": {"rtol": 1e-3, "atol": 1e-3}}).run()
    assert np.max(np.abs(loose["decay.x"] - np.exp(-2.0 * t))) > 10 * err  # rtol took effect
    # the Feedthrough FMU shows its mapped start values and passes the ME unit's output
    assert set(np.asarray(res["feed.Boolean_output"]).tolist()) == {True}
    assert set(np.asarray(res["feed.Int32_output"]).tolist()) == {7}
    assert set(np.asarray(res["feed.Enumeration_output"]).tolist()) == {2}  # "Option 2"
    np.testing.assert_array_equal(res["feed.Float64_continuous_output"], res["decay.x"])
    vdp = FMU(reference_fmus[(2, "VanDerPol")]).subsystem("vdp", parameters={"mu": 0.5},
                                                          tolerance=1e-6)
    ref = MasterScheduler([vdp], [], 0.01).run(2.0)
    np.testing.assert_array_equal(res["vdp.x0"], ref["vdp.x0"])


def test_an_enumeration_item_the_fmu_does_not_have(oms3, tmp_path):
    from tests.fmu_builders import rewrite_fmu
    p = rewrite_fmu(oms3, tmp_path / "bad.ssp", replace={"resources/values.ssm": (
        'target="Option 2"', 'target="Option 3"')})
    with pytest.raises(SSPError, match=r"resources/values.ssm line \d+: component 'feed' .*: "
                                       r"'Option 3' is not an item of the enumeration of "
                                       r"'Enumeration_input' \(value at resources/values.ssv line "
                                       r"\d+ \(mapped by resources/values.ssm line \d+\)\); "
                                       "items: 'Option 1', 'Option 2'"):
        read_ssp(p)


# ----------------------------------------------------------------- round trips
@pytest.mark.parametrize("case", ["oms_nested", "easyssp", "oms3"])
def test_other_tools_files_round_trip_through_the_export(case, request, tmp_path):
    """export -> every file valid against the SSP schemas -> read -> the same master ->
    the same results, bit for bit."""
    src = request.getfixturevalue(case)
    kw = {"step_s": 0.01} if case == "easyssp" else {}
    master = load_ssp(src, **kw)
    first = master.run()
    out = export_master_ssp(tmp_path / f"{case}.ssp", master)
    assert schema_errors(out) == {"SystemStructure.ssd": []}
    again = read_ssp(out)
    assert again.structure() == {**read_ssp(src).structure(), **kw}
    second = load_ssp(again).run()
    assert sorted(second.signals) == sorted(first.signals)
    for k in first.signals:
        np.testing.assert_array_equal(second[k], first[k], err_msg=k)


def test_the_fixtures_are_valid_ssp(oms_nested, easyssp, oms3):
    """The fixtures themselves satisfy the schemas (and the check can fail)."""
    for p in (oms_nested, easyssp, oms3):
        assert all(not errs for errs in schema_errors(p).values()), schema_errors(p)
    with zipfile.ZipFile(oms3) as zf:
        text = zf.read("resources/values.ssm").decode()
    bad = oms3.with_name("bad_schema.ssp")
    from tests.fmu_builders import rewrite_fmu
    rewrite_fmu(oms3, bad, replace={"resources/values.ssm": (
        '<ssc:MapEntry source="3" target="7" />', '<ssc:MapEntry source="3" target="seven" />')})
    assert "seven" not in text
    errs = schema_errors(bad)["resources/values.ssm"]
    assert errs and "'seven' is not a valid value" in errs[0]


# ---------------------------------------------------------- what the schemas rejected
def test_64_bit_integer_values_are_written_as_the_schema_allows(reference_fmus, tmp_path):
    """The export wrote every integer as ssv:Integer (an xs:int): an FMI 3 Int64 value
    beyond 32 bits made the file invalid.  Such values are now Int64/UInt64 (SSP 2.0)."""
    big = {"Int64_input": 2**40, "UInt64_input": 2**63, "Int32_input": -7}
    for ssv_files in (False, True):
        p = export_ssp(tmp_path / f"ft{ssv_files}.ssp",
                       {"ft": reference_fmus[(3, "Feedthrough")]}, parameters={"ft": big},
                       stop=1.0, step_s=0.1, ssv_files=ssv_files)
        errors = schema_errors(p)
        assert all(not e for e in errors.values()), errors
        text = zipfile.ZipFile(p).read("resources/ft.ssv" if ssv_files
                                       else "SystemStructure.ssd").decode()
        assert '<ssv:UInt64 value="9223372036854775808"/>' in text
        assert '<ssv:Integer value="-7"/>' in text
        assert read_ssp(p).components["ft"].parameters == big
