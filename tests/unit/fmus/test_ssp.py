"""SSP 1.0 import/export (fmus/ssp.py): the files, their structure, and bad input.

The exported files are checked by an independent reader, fmpy's ``read_ssd(validate=True)``
(the SSP 1.0 XML schemas that ship with fmpy); our reader must give back what was
written.  Simulations against hand-wired masters, fmpy's ``simulate_ssp`` and an
analytic solution are in tests/system/test_ssp.py.
"""

from __future__ import annotations

import re
import zipfile

import numpy as np
import pytest

pytest.importorskip("fmpy")

from fmus.errors import FMUError, FMUWarning  # noqa: E402
from fmus.ssp import (  # noqa: E402
    SSPArchiveError,
    SSPConnection,
    SSPError,
    export_master_ssp,
    export_ssp,
    export_system,
    load_ssp,
    read_ssp,
)
from tests.fmu_builders import rewrite_fmu  # noqa: E402

SSD = "SystemStructure.ssd"
CONNS = [("lag.y", "osc.F"), ("osc.x", "lag.u", (3.0, 0.5)), ("osc.v", "v_out")]
PARAMS = {"osc": {"k": 100.0, "c": 0.25}, "lag": {"ka": 0.5}}


@pytest.fixture(scope="module")
def pair(fmu_files, tmp_path_factory):
    """LoopA (lag) and Oscillator (osc): a transformed connection, a system output."""
    d = tmp_path_factory.mktemp("ssp")
    return export_ssp(d / "pair.ssp", {"lag": fmu_files["LoopA"], "osc": fmu_files["Oscillator"]},
                      CONNS, parameters=PARAMS, name="pair", stop=0.5, step_s=1e-3)


def _edit(src, dst, old, new, **kw):
    return rewrite_fmu(src, dst, replace={SSD: (old, new)}, **kw)


# ----------------------------------------------------------------- the files
@pytest.mark.parametrize("ssv_files", [False, True])
def test_the_export_is_valid_ssp_for_fmpys_reader(fmu_files, tmp_path, ssv_files):
    from fmpy.ssp.ssd import read_ssd
    p = export_ssp(tmp_path / "pair.ssp", {"lag": fmu_files["LoopA"],
                                           "osc": fmu_files["Oscillator"]},
                   CONNS, parameters=PARAMS, name="pair", stop=0.5, step_s=1e-3,
                   ssv_files=ssv_files)
    names = zipfile.ZipFile(p).namelist()
    assert sorted(names) == sorted([SSD, "resources/LoopA.fmu", "resources/Oscillator.fmu"]
                                   + (["resources/lag.ssv", "resources/osc.ssv"]
                                      if ssv_files else []))
    ssd = read_ssd(str(p), validate=True)  # schema check; .ssv files are validated too
    assert ssd.name == "pair" and ssd.version == "1.0"
    comps = {c.name: c for c in ssd.system.elements}
    assert {n: c.source for n, c in comps.items()} == {"lag": "resources/LoopA.fmu",
                                                       "osc": "resources/Oscillator.fmu"}
    kinds = {c.name: c.kind for c in comps["osc"].connectors}
    assert kinds == {"x": "output", "v": "output", "F": "input", "a": "output",
                     "x_mm": "output", "phase": "output", "stepped": "output"}
    assert [(c.startElement, c.startConnector, c.endElement, c.endConnector)
            for c in ssd.system.connections] == [("lag", "y", "osc", "F"),
                                                 ("osc", "x", "lag", "u"),
                                                 ("osc", "v", None, "v_out")]
    assert [(c.name, c.kind) for c in ssd.system.connectors] == [("v_out", "output")]
    bound = {(c, p.name): (p.type, float(p.value), p.unit) for c, comp in comps.items()
             for b in comp.parameterBindings for s in b.parameterValues for p in s.parameters}
    assert bound == {("osc", "k"): ("Real", 100.0, "N/m"), ("osc", "c"): ("Real", 0.25, "N.s/m"),
                     ("lag", "ka"): ("Real", 0.5, None)}
    units = {u.name: (u.kg, u.m, u.s, u.factor) for u in ssd.units}
    assert units["millimetre"] == (0, 1, 0, 0.001) and units["N"] == (1, 1, -2, 1.0)
    # fmpy 0.3.32 looks for ssd:LinearTransformation, the SSP 1.0 schema puts it in ssc:
    # our file has it where the schema says (read back below), fmpy misses it
    assert not hasattr(ssd.system.connections[1], "linearTransformation")
    text = zipfile.ZipFile(p).read(SSD).decode()
    assert '<ssc:LinearTransformation factor="3.0" offset="0.5"/>' in text


def test_read_gives_back_what_was_written_and_a_second_export_is_identical(pair, tmp_path):
    s = read_ssp(pair)
    assert s.name == "pair" and (s.start, s.stop, s.step_s) == (0.0, 0.5, 1e-3)
    assert list(s.components) == ["lag", "osc"]
    assert s.components["osc"].parameters == PARAMS["osc"]
    assert s.components["lag"].parameters == PARAMS["lag"]
    assert s.master_connections() == CONNS
    assert s.connections[1] == SSPConnection(("osc", "x"), ("lag", "u"), (3.0, 0.5))
    assert [(c.name, c.kind, c.type, c.unit) for c in s.connectors] == [
        ("v_out", "output", "Real", "m/s")]
    assert [(c.name, c.type, c.unit) for c in s.components["osc"].connectors][:3] == [
        ("x", "Real", "m"), ("v", "Real", "m/s"), ("F", "Real", "N")]
    assert s.units["N/m"].exponents == (1, 0, -2, 0, 0, 0, 0, 0)
    again = read_ssp(export_system(s, tmp_path / "again.ssp"))
    assert again == s  # structure (paths where it was extracted are not compared)
    d = tmp_path / "unzipped"
    zipfile.ZipFile(pair).extractall(d)
    assert read_ssp(d) == s and read_ssp(d / SSD) == s  # a directory, a bare .ssd


def test_one_resource_for_two_components_of_the_same_fmu(fmu_files, tmp_path):
    p = export_ssp(tmp_path / "two.ssp", {"a": fmu_files["Oscillator"],
                                          "b": fmu_files["Oscillator"]},
                   parameters={"b": {"k": 400.0}}, stop=0.5, step_s=1e-3)
    assert [n for n in zipfile.ZipFile(p).namelist() if n.endswith(".fmu")] == [
        "resources/Oscillator.fmu"]
    res = load_ssp(p).run()  # two C instances in one process, both F unconnected (start 0)
    for name, k in (("a", 40.0), ("b", 400.0)):
        # x(0) = 0.1, v(0) = 0, c = 0.4: the first minimum is at pi / w_d exactly
        t_min = res.time[np.argmin(res[f"{name}.x"])]
        assert abs(t_min - np.pi / np.sqrt(k - 0.04)) < 1e-3, (name, t_min)


def test_the_linear_transformation_and_the_bound_values_reach_the_master(pair):
    m = load_ssp(pair)
    assert m.sources[("lag", "u")] == (("osc", "x"), 3.0, 0.5)
    assert m.sources[("osc", "F")] == (("lag", "y"), 1.0, 0.0)
    res = m.run(0.01)
    # y(0) = x_lag(0) + ka * (3 x_osc(0) + 0.5) = 1 + 0.5 * (0.3 + 0.5)
    assert res["lag.y"][0] == pytest.approx(1.4, rel=1e-15)
    assert np.array_equal(res["pair.v_out"], res["osc.v"])  # the system output


def test_suppress_unit_conversion_replaces_the_conversion(fmu_files, tmp_path):
    """osc.x_mm [millimetre] -> lag.u [m] (LoopA rewritten with a unit): converted, the
    input gets x / 1000; with suppressUnitConversion the raw number (times the factor)."""
    lag_m = rewrite_fmu(fmu_files["LoopA"], tmp_path / "LoopA.fmu", replace={
        "modelDescription.xml": (
            '<ScalarVariable name="u" valueReference="2" causality="input"><Real start="0"/>',
            '<ScalarVariable name="u" valueReference="2" causality="input">'
            '<Real unit="m" start="0"/>')})
    lag_m = rewrite_fmu(lag_m, tmp_path / "LoopA_m.fmu", replace={"modelDescription.xml": (
        "<ModelVariables>", '<UnitDefinitions><Unit name="m"><BaseUnit m="1"/></Unit>'
                            "</UnitDefinitions><ModelVariables>")})
    base = export_ssp(tmp_path / "mm.ssp", {"lag": lag_m, "osc": fmu_files["Oscillator"]},
                      [("osc.x_mm", "lag.u", (2.0, 0.0)), ("lag.y", "osc.F")], step_s=1e-3)
    old = '<ssd:Connection startConnector="x_mm" endConnector="u" startElement="osc" '
    sup = _edit(base, tmp_path / "sup.ssp", old, old + 'suppressUnitConversion="true" ')
    y0 = {}
    for label, p in (("converted", base), ("suppressed", sup)):
        y0[label] = load_ssp(p).run(1e-3)["lag.y"][0]
    assert y0["converted"] == pytest.approx(1 + 2 * (2 * 0.1))    # u = 2 * 100 mm in m
    assert y0["suppressed"] == pytest.approx(1 + 2 * (2 * 100.0))  # u = 2 * 100


def test_export_from_a_master_recovers_transformations_and_values(fmu_files, tmp_path):
    from cosim import MasterScheduler
    from fmus import FMU
    osc = FMU(fmu_files["Oscillator"]).subsystem("osc", parameters={"k": 90.0})
    lag = FMU(fmu_files["LoopA"]).subsystem("lag")
    m = MasterScheduler([lag, osc], [("lag.y", "osc.F", (2.0, -1.0)), ("osc.x_mm", "lag.u")],
                        2e-3)
    s = read_ssp(export_master_ssp(tmp_path / "m.ssp", m, name="m", stop=1.0))
    assert s.master_connections() == [("lag.y", "osc.F", (2.0, -1.0)), ("osc.x_mm", "lag.u")]
    assert s.components["osc"].parameters == {"k": 90.0} and s.step_s == 0.002
    assert (s.start, s.stop) == (0.0, 1.0)


def test_a_system_binding_wins_and_values_are_converted_to_the_fmu_unit(pair, tmp_path):
    """SSP: a system-level binding (name after the prefix) wins over the component's; a
    value in another unit is converted; an unmatched name is ignored with a warning."""
    binding = ('<ssd:ParameterBindings><ssd:ParameterBinding prefix="osc."><ssd:ParameterValues>'
               '<ssv:ParameterSet version="1.0" name="top"><ssv:Parameters>'
               '<ssv:Parameter name="k"><ssv:Real value="0.25" unit="N/mm"/></ssv:Parameter>'
               '<ssv:Parameter name="nothing"><ssv:Real value="1"/></ssv:Parameter>'
               "</ssv:Parameters><ssv:Units><ssc:Unit name=\"N/mm\">"
               '<ssc:BaseUnit kg="1" s="-2" factor="1000"/></ssc:Unit></ssv:Units>'
               "</ssv:ParameterSet></ssd:ParameterValues></ssd:ParameterBinding>"
               "</ssd:ParameterBindings><ssd:Elements>")
    p = _edit(pair, tmp_path / "top.ssp", "<ssd:Elements>", binding)
    with pytest.warns(FMUWarning, match="component 'osc' .*: bound value 'nothing' matches no "
                                        "FMU variable and is ignored"):
        s = read_ssp(p)
    assert s.components["osc"].parameters == {"k": 250.0, "c": 0.25}  # 0.25 N/mm -> N/m


def test_unconnected_and_system_inputs_hold_their_values(fmu_files, tmp_path):
    p = export_ssp(tmp_path / "in.ssp", {"osc": fmu_files["Oscillator"],
                                         "lag": fmu_files["LoopA"]},
                   [("F_in", "osc.F")], inputs={"F_in": 3.0})
    from fmpy.ssp.ssd import read_ssd
    sys_ = read_ssd(str(p), validate=True).system
    assert [(c.name, c.kind) for c in sys_.connectors] == [("F_in", "input")]
    assert [(q.name, q.value) for q in sys_.parameterBindings[0].parameterValues[0].parameters
            ] == [("F_in", "3.0")]
    s = read_ssp(p)
    assert s.inputs == {"F_in": 3.0} and s.step_s is None
    m = load_ssp(p)
    assert m.H == 1_000_000  # no annotation: Oscillator's DefaultExperiment stepSize, 1 ms
    res = m.run(0.01)
    assert np.all(res["System.F_in"] == 3.0)
    assert np.all(res["System.lag.u"] == 0.0)  # unconnected: the FMU's start value
    m = load_ssp(p, inputs={"F_in": -1.0})
    res = m.run(0.01)
    assert np.all(res["System.F_in"] == -1.0)
    assert res["osc.a"][0] == pytest.approx((-1.0 - 40.0 * 0.1) / 1.0)  # a = (F - k x) / m
    # the master exported: the input it holds, not the file's
    assert read_ssp(export_master_ssp(tmp_path / "held.ssp", m)).inputs == {"F_in": -1.0}


# ------------------------------------------------------------------ bad input
def test_malformed_xml(pair, tmp_path):
    p = _edit(pair, tmp_path / "bad.ssp", "</ssd:Connections>", "</ssd:Connection>")
    with pytest.raises(SSPError, match="SystemStructure.ssd is not well-formed XML"):
        read_ssp(p)


def test_not_an_archive_and_no_ssd(pair, tmp_path):
    bad = tmp_path / "junk.ssp"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(SSPArchiveError, match="is not a ZIP archive"):
        read_ssp(bad)
    p = rewrite_fmu(pair, tmp_path / "nossd.ssp", drop=(SSD,))
    with pytest.raises(SSPArchiveError, match="no SystemStructure.ssd at its root"):
        read_ssp(p)


def test_size_limits_apply_while_extracting(pair):
    from fmus import ArchiveLimits
    with pytest.raises(SSPArchiveError, match="expands to more than 20000 bytes"):
        read_ssp(pair, limits=ArchiveLimits(max_total_bytes=20_000))


def test_path_traversal_in_the_archive_is_refused(pair, tmp_path):
    d = tmp_path / "deep" / "er"
    d.mkdir(parents=True)
    p = rewrite_fmu(pair, d / "evil.ssp", add={"../../evil.txt": b"gotcha"})
    with pytest.raises(SSPArchiveError, match=r"'\.\./\.\./evil.txt' contains '\.\.' \(path "
                                              "traversal"):
        read_ssp(p)
    assert not (tmp_path / "evil.txt").exists()
    with pytest.raises(FMUError):  # also an FMUError and a BuildError
        read_ssp(p)


def test_a_source_outside_the_ssp_is_refused(pair, tmp_path):
    p = _edit(pair, tmp_path / "out.ssp", 'source="resources/LoopA.fmu"',
              'source="../LoopA.fmu"')
    with pytest.raises(SSPError, match="component 'lag': FMU resource '../LoopA.fmu' points "
                                       "outside the SSP"):
        read_ssp(p)


def test_a_missing_fmu_resource(pair, tmp_path):
    p = rewrite_fmu(pair, tmp_path / "nofmu.ssp", drop=("resources/Oscillator.fmu",))
    with pytest.raises(SSPError, match=r"line \d+: component 'osc': FMU resource "
                                       "'resources/Oscillator.fmu' is missing from the SSP; "
                                       ".*holds: SystemStructure.ssd, resources/LoopA.fmu"):
        read_ssp(p)


def test_a_connection_to_an_unknown_component(pair, tmp_path):
    p = _edit(pair, tmp_path / "u.ssp", 'startElement="lag" endElement="osc"',
              'startElement="lagg" endElement="osc"')
    with pytest.raises(SSPError, match=r"line \d+: connection lagg.y -> osc.F: unknown component "
                                       "'lagg'; valid names: lag, osc. Did you mean 'lag'"):
        read_ssp(p)


def test_a_connection_to_an_undeclared_connector(pair, tmp_path):
    p = _edit(pair, tmp_path / "c.ssp", 'endConnector="F" startElement="lag"',
              'endConnector="Fo" startElement="lag"')
    with pytest.raises(SSPError, match="connection lag.y -> osc.Fo: component 'osc' has no "
                                       r"connector 'Fo'; valid names: x, v, F, .*Did you mean "
                                       r"'F'\?; declare it in the element's <ssd:Connectors>"):
        read_ssp(p)


def test_a_connector_that_is_not_a_variable_of_the_fmu(pair, tmp_path):
    p = _edit(pair, tmp_path / "v.ssp", '<ssd:Connector name="F" kind="input">',
              '<ssd:Connector name="Fo" kind="input">')
    p = _edit(p, tmp_path / "v2.ssp", 'endConnector="F"', 'endConnector="Fo"')
    with pytest.raises(SSPError, match=r"SystemStructure.ssd line \d+: component 'osc' "
                                       r"\(resources/Oscillator.fmu\): "
                                       "connector 'Fo' is not a variable of the FMU; "
                                       "valid names: .*Did you mean 'F'"):
        read_ssp(p)


def test_a_connector_of_the_wrong_kind_type_or_unit(pair, tmp_path):
    cases = [('<ssd:Connector name="a" kind="output">', '<ssd:Connector name="a" kind="input">',
              r"line \d+: .*connector 'a' has kind 'input' but the FMU variable has causality "
              "'output'; declare the variable's causality"),
             ('<ssd:Connector name="F" kind="input">\n            <ssc:Real unit="N"/>',
              '<ssd:Connector name="F" kind="input">\n            <ssc:Integer/>',
              "connector 'F' is declared Integer but the FMU variable is Real"),
             ('<ssc:Real unit="N"/>', '<ssc:Real unit="m"/>',
              "connector 'F' declares unit 'm' but the FMU variable has unit 'N'")]
    for k, (old, new, msg) in enumerate(cases):
        p = _edit(pair, tmp_path / f"k{k}.ssp", old, new)
        with pytest.raises(SSPError, match=msg):
            read_ssp(p)


def test_the_direction_of_a_connection_comes_from_the_connector_kinds(pair, tmp_path):
    """SSP: "start" and "end" do not say which way data flows; the kinds do (easySSP writes
    connections from an input to an output).  Two inputs joined is an error."""
    p = _edit(pair, tmp_path / "b.ssp",
              'startConnector="y" endConnector="F" startElement="lag" endElement="osc"',
              'startConnector="F" endConnector="y" startElement="osc" endElement="lag"')
    assert read_ssp(p).master_connections() == CONNS
    p = _edit(pair, tmp_path / "i.ssp",
              'startConnector="y" endConnector="F" startElement="lag" endElement="osc"',
              'startConnector="u" endConnector="F" startElement="lag" endElement="osc"')
    with pytest.raises(SSPError, match=r"line \d+: connection lag.u -> osc.F: both ends are sinks "
                                       r"\(inputs, or system outputs seen from inside\) \(input "
                                       "and input\\); SSP takes the direction"):
        read_ssp(p)


def test_bound_values_that_cannot_be_set(pair, tmp_path):
    p = _edit(pair, tmp_path / "a.ssp", '<ssv:Parameter name="c">', '<ssv:Parameter name="a">')
    with pytest.raises(SSPError, match="component 'osc' .*: a value is bound to 'a', a "
                                       "continuous output with initial='calculated', which "
                                       "cannot be set before initialization"):
        read_ssp(p)
    p = _edit(pair, tmp_path / "m.ssp", '<ssv:Real value="100.0" unit="N/m"/>',
              '<ssv:Real value="1e3" unit="N/m"/></ssv:Parameter><ssv:Parameter name="m">'
              '<ssv:Real value="-1"/>')
    with pytest.raises(SSPError, match="value -1.0 for FMU variable 'm' is outside its range"):
        read_ssp(p)
    p = _edit(pair, tmp_path / "x.ssp", 'value="100.0"', 'value="stiff"')
    with pytest.raises(SSPError, match="parameter 'k': value 'stiff' is not a valid Real"):
        read_ssp(p)


@pytest.mark.parametrize("old, new, msg", [
    ('implementation="CoSimulation"', 'implementation="ScheduledExecution"',
     r"line \d+: component 'lag': implementation='ScheduledExecution' is not supported"),
    ('type="application/x-fmu-sharedlibrary" source="resources/LoopA.fmu"',
     'type="application/x-ssp-package" source="resources/LoopA.fmu"',
     "component type 'application/x-ssp-package' is not supported"),
    ("</ssd:Connections>", '</ssd:Connections><ssd:SignalDictionaries><ssd:SignalDictionary '
                           'name="d" source="d.ssb"/></ssd:SignalDictionaries>',
     "signal dictionaries are not supported"),
    ('<ssc:LinearTransformation factor="3.0" offset="0.5"/>',
     '<ssc:BooleanMappingTransformation><ssc:MapEntry source="true" target="false"/>'
     "</ssc:BooleanMappingTransformation>",
     "connection osc.x -> lag.u: BooleanMappingTransformation is not supported on a signal "
     "connection"),
    ("<ssd:ParameterBinding>", '<ssd:ParameterBinding source="k.ssv" sourceBase="component">',
     r"line \d+: component 'lag': parameter binding with sourceBase='component' .* is not "
     "supported; put the .ssv file into the SSP"),
    ('<ssv:Real value="100.0" unit="N/m"/>', '<ssv:Binary value="00ff"/>',
     r"line \d+: parameter 'k': Binary values are not supported"),
    ('<ssd:Connector name="F" kind="input">', '<ssd:Connector name="F" kind="input">'
                                              '<ssc:Real/><ssc:Dimension size="3"/>',
     "connector 'F' is an array .* array connectors are not supported"),
    ('endConnector="F" startElement="lag"', 'endConnector="F" startIndices="1" '
                                            'startElement="lag"',
     "startIndices .* are not supported"),
    ('version="1.0" name="pair"', 'version="1.1" name="pair"',
     "SSP version '1.1' is not supported"),
])
def test_unsupported_features_are_refused_by_name(pair, tmp_path, old, new, msg):
    p = _edit(pair, tmp_path / "f.ssp", old, new)
    with pytest.raises(SSPError, match=msg):
        read_ssp(p)


def test_fmi3_components(fmu_files, tmp_path):
    from fmpy.ssp.ssd import read_ssd
    p = export_ssp(tmp_path / "fmi3.ssp", {"osc": fmu_files["Oscillator3"],
                                           "lag": fmu_files["LoopA"]},
                   [("lag.y", "osc.F"), ("osc.x", "lag.u")], parameters={"osc": {"k": 90.0}},
                   step_s=1e-3)
    read_ssd(str(p), validate=True)
    s = read_ssp(p)
    assert [(c.name, c.type, c.unit) for c in s.components["osc"].connectors][:3] == [
        ("x", "Real", "m"), ("v", "Real", "m/s"), ("F", "Real", "N")]  # from Float64
    res = load_ssp(s).run(0.01)
    assert res["osc.a"][0] == pytest.approx((1.0 + 2 * 0.1) - 90.0 * 0.1)  # a = y - k x


def test_export_errors_name_the_component_and_port(fmu_files, tmp_path):
    comps = {"lag": fmu_files["LoopA"], "osc": fmu_files["Oscillator"]}
    with pytest.raises(SSPError, match=r"export_ssp\('e.ssp'\): connection lag.y -> osc.Fx: "
                                       "component 'osc' has no input 'Fx'.*Did you mean 'F'"):
        export_ssp(tmp_path / "e.ssp", comps, [("lag.y", "osc.Fx")])
    with pytest.raises(SSPError, match="unknown component 'os'.*Did you mean 'osc'"):
        export_ssp(tmp_path / "e.ssp", comps, [("lag.y", "os.F")])
    with pytest.raises(SSPError, match="component 'osc' has no output 'F'"):
        export_ssp(tmp_path / "e.ssp", comps, [("osc.F", "lag.u")])
    with pytest.raises(SSPError, match="'a' is a continuous output with initial='calculated'; it "
                                       "cannot be set"):
        export_ssp(tmp_path / "e.ssp", comps, parameters={"osc": {"a": 1.0}})
    with pytest.raises(SSPError, match="linear transformation needs Real"):
        export_ssp(tmp_path / "e.ssp", comps, [("osc.phase", "p", (2.0, 0.0))])


# ------------------------------------------------------- as other tools write it
SSM = ('<ssm:ParameterMapping xmlns:ssm="http://ssp-standard.org/SSP1/SystemStructureParameter'
       'Mapping" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" version="1.0">'
       '<ssm:MappingEntry source="osc.stiffness" target="osc.k">'
       '<ssc:LinearTransformation factor="1" offset="5"/></ssm:MappingEntry>'
       '<ssm:MappingEntry source="osc.damping" target="osc.c" suppressUnitConversion="true">'
       '<ssc:LinearTransformation factor="2"/></ssm:MappingEntry>'
       '<ssm:MappingEntry source="osc.stiffness" target="lag.ka">'
       '<ssc:LinearTransformation factor="0.01"/></ssm:MappingEntry>'
       '<ssm:MappingEntry source="osc.nothing" target="osc.m"/>'
       "</ssm:ParameterMapping>")
SSV = ('<ssv:ParameterSet xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameter'
       'Values" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" version="1.0" '
       'name="top"><ssv:Parameters>'
       '<ssv:Parameter name="stiffness"><ssv:Real value="0.2" unit="N/mm"/></ssv:Parameter>'
       '<ssv:Parameter name="damping"><ssv:Real value="0.5" unit="kN.s/m"/></ssv:Parameter>'
       '<ssv:Parameter name="t_step"><ssv:Real value="0.25"/></ssv:Parameter>'
       '</ssv:Parameters><ssv:Units>'
       '<ssc:Unit name="N/mm"><ssc:BaseUnit kg="1" s="-2" factor="1000"/></ssc:Unit>'
       '<ssc:Unit name="kN.s/m"><ssc:BaseUnit kg="1" s="-1" factor="1000"/></ssc:Unit>'
       "</ssv:Units></ssv:ParameterSet>")


@pytest.mark.parametrize("inline", [False, True])
def test_a_parameter_mapping_renames_and_transforms_values(pair, tmp_path, inline):
    """An .ssv bound at the system level with prefix "osc." and an .ssm (file or inline):
    values converted to the target's unit first, then transformed (SSP); suppressed
    conversion; one source, two targets; an unmapped name kept; an entry with no source."""
    mapping = (f"<ssd:ParameterMapping>{SSM}</ssd:ParameterMapping>" if inline
               else '<ssd:ParameterMapping source="resources/top.ssm"/>')
    binding = ('<ssd:ParameterBindings><ssd:ParameterBinding prefix="osc." '
               f'source="resources/top.ssv">{mapping}</ssd:ParameterBinding>'
               "</ssd:ParameterBindings><ssd:Elements>")
    p = rewrite_fmu(pair, tmp_path / "m.ssp", replace={SSD: ("<ssd:Elements>", binding)},
                    add={"resources/top.ssv": SSV.encode(), "resources/top.ssm": SSM.encode()})
    s = read_ssp(p)
    assert s.components["osc"].parameters == {
        "k": 205.0,          # 0.2 N/mm = 200 N/m, + 5
        "c": 1.0,            # 2 * 0.5, no conversion from kN.s/m
        "t_step": 0.25}      # osc.t_step: no entry names it, it keeps its name
    assert s.components["lag"].parameters == {"ka": 0.002}  # 0.01 * 0.2: ka has no unit
    where = "SystemStructure.ssd" if inline else "resources/top.ssm"
    assert re.search(f"{where}: 1 mapping entry names no parameter of the parameter set "
                     r"\('osc.nothing'; line \d+\) and does nothing", "\n".join(s.notes))
    res = load_ssp(s).run(0.001)
    assert res["osc.a"][0] == pytest.approx((1 + 0.002 * (3 * 0.1 + 0.5)) - 205.0 * 0.1)


@pytest.mark.parametrize("ssm, ssv_value, msg", [
    ('<ssc:BooleanMappingTransformation><ssc:MapEntry source="maybe" target="true"/>'
     "</ssc:BooleanMappingTransformation>", '<ssv:Boolean value="true"/>',
     r"resources/b.ssm line 1: mapping entry 'osc.b' -> 'osc.k': bad "
     r"BooleanMappingTransformation MapEntry source='maybe'"),
    ('<ssc:LinearTransformation factor="2"/>', '<ssv:Integer value="3"/>',
     r"resources/b.ssm line 1: component 'osc' .*: a LinearTransformation maps 'k', a Real "
     r"given a Integer; it is valid for Real values only \(value at resources/b.ssv line 1 "
     r"\(mapped by resources/b.ssm line 1\)\)"),
    ('<ssc:IntegerMappingTransformation><ssc:MapEntry source="3" target="4"/>'
     "</ssc:IntegerMappingTransformation>", '<ssv:Real value="3.0"/>',
     r"resources/b.ssm line 1: component 'osc' .*: a IntegerMappingTransformation cannot map "
     r"the Real value 3.0"),
    ('<ssc:EnumerationMappingTransformation><ssc:MapEntry source="a" target="b"/>'
     "</ssc:EnumerationMappingTransformation>", '<ssv:Enumeration value="a"/>',
     r"component 'osc' .*: an Enumeration value 'a' is bound to 'k', a Real"),
])
def test_mapping_errors_name_the_file_and_line(pair, tmp_path, ssm, ssv_value, msg):
    pmap = ('<ssm:ParameterMapping xmlns:ssm="http://ssp-standard.org/SSP1/SystemStructure'
            'ParameterMapping" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" '
            f'version="1.0"><ssm:MappingEntry source="osc.b" target="osc.k">{ssm}'
            "</ssm:MappingEntry></ssm:ParameterMapping>")
    pset = ('<ssv:ParameterSet xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameter'
            'Values" version="1.0" name="b"><ssv:Parameters><ssv:Parameter name="b">'
            f"{ssv_value}</ssv:Parameter></ssv:Parameters></ssv:ParameterSet>")
    binding = ('<ssd:ParameterBindings><ssd:ParameterBinding prefix="osc." '
               'source="resources/b.ssv"><ssd:ParameterMapping source="resources/b.ssm"/>'
               "</ssd:ParameterBinding></ssd:ParameterBindings><ssd:Elements>")
    p = rewrite_fmu(pair, tmp_path / "e.ssp", replace={SSD: ("<ssd:Elements>", binding)},
                    add={"resources/b.ssv": pset.encode(), "resources/b.ssm": pmap.encode()})
    with pytest.raises(SSPError, match=msg):
        read_ssp(p)


def test_linear_transformations_convert_units_first(fmu_files, tmp_path):
    """SSP: target = factor * (source in the target's unit) + offset.  osc.x_mm [millimetre]
    -> lag.u [m] with (2, 0.5): u = 2 * 0.1 m + 0.5 (the old reading gave (2 * 100 mm + 0.5)
    in m = 0.2005).  The master's convention (factor and offset in the source's unit) is
    converted on export, so a master exported and loaded again gives the same input."""
    lag_m = rewrite_fmu(fmu_files["LoopA"], tmp_path / "LoopA.fmu", replace={
        "modelDescription.xml": (
            '<ScalarVariable name="u" valueReference="2" causality="input"><Real start="0"/>',
            '<ScalarVariable name="u" valueReference="2" causality="input">'
            '<Real unit="m" start="0"/>')})
    lag_m = rewrite_fmu(lag_m, tmp_path / "LoopA_m.fmu", replace={"modelDescription.xml": (
        "<ModelVariables>", '<UnitDefinitions><Unit name="m"><BaseUnit m="1"/></Unit>'
                            "</UnitDefinitions><ModelVariables>")})
    comps = {"lag": lag_m, "osc": fmu_files["Oscillator"]}
    base = export_ssp(tmp_path / "a.ssp", comps, [("osc.x_mm", "lag.u"), ("lag.y", "osc.F")],
                      step_s=1e-3)
    p = _edit(base, tmp_path / "b.ssp", 'startElement="osc" endElement="lag"/>',
              'startElement="osc" endElement="lag"><ssc:LinearTransformation factor="2" '
              'offset="0.5"/></ssd:Connection>')
    assert load_ssp(p).run(1e-3)["lag.y"][0] == pytest.approx(1 + 2 * (2 * 0.1 + 0.5))
    from cosim import MasterScheduler
    from fmus import FMU
    m = MasterScheduler([FMU(lag_m).subsystem("lag"), FMU(fmu_files["Oscillator"]).subsystem(
        "osc")], [("osc.x_mm", "lag.u", (2.0, 0.5)), ("lag.y", "osc.F")], 1e-3)
    out = export_master_ssp(tmp_path / "m.ssp", m)
    assert 'offset="0.0005"' in zipfile.ZipFile(out).read(SSD).decode()
    y0 = 1 + 2 * (2 * 100.0 + 0.5) * 1e-3   # the master: (2 x_mm + 0.5) mm, in m
    assert m.run(1e-3)["lag.y"][0] == pytest.approx(y0)
    assert load_ssp(out).run(1e-3)["lag.y"][0] == pytest.approx(y0)


def test_a_component_without_co_simulation_runs_through_model_exchange(pair, fmu_files,
                                                                      tmp_path):
    """implementation="any" and an FMU with Model Exchange only: an ME unit of its own."""
    me_only = rewrite_fmu(fmu_files["LoopA"], tmp_path / "LoopA.fmu", replace={
        "modelDescription.xml": ('<CoSimulation modelIdentifier="LoopA" '
                                 'canHandleVariableCommunicationStepSize="true"\n    '
                                 'canInterpolateInputs="true" canGetAndSetFMUstate="true" '
                                 'canSerializeFMUstate="true"\n    '
                                 'providesDirectionalDerivative="true"/>', "")})
    with zipfile.ZipFile(me_only) as zf:
        data = zf.read("modelDescription.xml").decode()
    assert "CoSimulation" not in data
    p = rewrite_fmu(pair, tmp_path / "any.ssp", drop=("resources/LoopA.fmu",),
                    replace={SSD: ('source="resources/LoopA.fmu" implementation="CoSimulation"',
                                   'source="resources/LoopA.fmu" implementation="any"')},
                    add={"resources/LoopA.fmu": me_only.read_bytes()})
    s = read_ssp(p)
    assert (s.components["lag"].unit, s.components["osc"].unit) == ("pair_me", None)
    assert s.solvers["pair_me"].method == "bdf"
    assert "Model Exchange unit(s) pair_me: no solver annotation" in "\n".join(s.notes)
    m = load_ssp(s)
    assert m.ports[("lag", "y")] == "pair_me.lag__y"
    res = m.run(0.01)
    # y(0) = x(0) + ka * (3 x_osc(0) + 0.5), as through Co-Simulation
    assert res["lag.y"][0] == pytest.approx(1.4, rel=1e-12)
    assert np.array_equal(res["lag.y"], res["pair_me.lag__y"])
    bad = _edit(p, tmp_path / "cs.ssp", 'implementation="any"', 'implementation="CoSimulation"')
    with pytest.raises(SSPError, match=r"line \d+: component 'lag' \(resources/LoopA.fmu\): "
                                       "implementation='CoSimulation' but the FMU has no "
                                       "Co-Simulation interface"):
        read_ssp(bad)


@pytest.mark.parametrize("case", ["inline", "ssv_files", "inputs", "model_exchange", "fmi3"])
def test_every_exported_file_is_valid_against_the_ssp_schemas(fmu_files, tmp_path, case):
    from tests.conformance.ssp_check import schema_errors
    comps = {"lag": fmu_files["LoopA"],
             "osc": fmu_files["Oscillator3" if case == "fmi3" else "Oscillator"]}
    kw = dict(parameters=PARAMS, name="pair", stop=0.5, step_s=1e-3)
    conns = CONNS
    if case == "ssv_files":
        kw["ssv_files"] = True
    elif case == "inputs":
        conns, kw["inputs"] = [("F_in", "osc.F"), ("osc.x", "lag.u")], {"F_in": 2.0}
    elif case == "model_exchange":
        kw.update(model_exchange={"lag": "plant", "osc": "plant"},
                  solvers={"plant": {"solver": "rk4", "dt": 1e-4}}, tolerance=1e-6)
    p = export_ssp(tmp_path / f"{case}.ssp", comps, conns, **kw)
    errors = schema_errors(p)
    assert "SystemStructure.ssd" in errors
    assert all(not e for e in errors.values()), errors
    s = read_ssp(p)
    assert read_ssp(export_system(s, tmp_path / "again.ssp")) == s


def test_the_schema_check_rejects_an_invalid_file(pair, tmp_path):
    from tests.conformance.ssp_check import schema_errors
    p = _edit(pair, tmp_path / "bad.ssp", 'kind="input"', 'kind="sideways"')
    errors = schema_errors(p)["SystemStructure.ssd"]
    assert errors and "'sideways' is not an element of the set" in errors[0]


def test_an_ssd_referenced_by_a_component_is_a_nested_system(pair, tmp_path):
    """type="application/x-ssp-definition": the referenced SSD's system takes the
    component's place; its relative URIs are relative to it; the component's bindings come
    after the system's own (SSP), and a higher level wins."""
    text = zipfile.ZipFile(pair).read(SSD).decode()
    start = text.index('<ssd:Component name="osc"')
    end = text.index("</ssd:Component>", start) + len("</ssd:Component>")
    osc = text[start:end].replace('source="resources/Oscillator.fmu"', 'source="Oscillator.fmu"')
    sub = ('<ssd:SystemStructureDescription xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructure'
           'Description" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" '
           'xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" version="1.0" '
           'name="plant"><ssd:System name="plant"><ssd:Connectors>'
           '<ssd:Connector name="F" kind="input"><ssc:Real unit="N"/></ssd:Connector>'
           '<ssd:Connector name="x" kind="output"><ssc:Real unit="m"/></ssd:Connector>'
           f"</ssd:Connectors><ssd:Elements>{osc}</ssd:Elements><ssd:Connections>"
           '<ssd:Connection startConnector="F" endElement="osc" endConnector="F"/>'
           '<ssd:Connection startElement="osc" startConnector="x" endConnector="x"/>'
           "</ssd:Connections></ssd:System></ssd:SystemStructureDescription>")
    comp = ('<ssd:Component name="plant" type="application/x-ssp-definition" '
            'source="resources/plant.ssd"><ssd:ParameterBindings><ssd:ParameterBinding>'
            '<ssd:ParameterValues><ssv:ParameterSet version="1.0" name="p"><ssv:Parameters>'
            '<ssv:Parameter name="osc.k"><ssv:Real value="50"/></ssv:Parameter>'
            "</ssv:Parameters></ssv:ParameterSet></ssd:ParameterValues></ssd:ParameterBinding>"
            "</ssd:ParameterBindings></ssd:Component>")
    new = text[:start] + comp + text[end:]
    new = new.replace('endConnector="F" startElement="lag" endElement="osc"',
                      'endConnector="F" startElement="lag" endElement="plant"')
    new = new.replace('startConnector="x" endConnector="u" startElement="osc"',
                      'startConnector="x" endConnector="u" startElement="plant"')
    new = new.replace('<ssd:Connection startConnector="v" endConnector="v_out" '
                      'startElement="osc"/>', "")
    new = new.replace('<ssd:Connectors>\n      <ssd:Connector name="v_out" kind="output">\n'
                      '        <ssc:Real unit="m/s"/>\n      </ssd:Connector>\n    '
                      "</ssd:Connectors>", "")
    p = rewrite_fmu(pair, tmp_path / "ref.ssp", drop=("resources/Oscillator.fmu",),
                    replace={SSD: (text, new)},
                    add={"resources/plant.ssd": sub.encode(),
                         "resources/Oscillator.fmu": zipfile.ZipFile(pair).read(
                             "resources/Oscillator.fmu")})
    s = read_ssp(p)
    assert list(s.components) == ["lag", "plant/osc"]
    assert s.components["plant/osc"].parameters == {"k": 50.0, "c": 0.25}
    assert s.master_connections() == [("lag.y", "plant/osc.F"), ("plant/osc.x", "plant/x"),
                                      ("plant/osc.x", "lag.u", (3.0, 0.5))]
    res = load_ssp(s).run(0.01)
    assert res["plant/osc.a"][0] == pytest.approx((1.0 + 0.5 * (0.3 + 0.5)) - 50.0 * 0.1)


def test_parameter_connectors_give_their_value_to_connected_parameters(pair, tmp_path):
    """A system parameter connector with a bound value, connected to a component
    parameter, sets it (converted, transformed), over the component's own binding; an
    unbound one leaves it alone; a calculatedParameter source is refused."""
    text = zipfile.ZipFile(pair).read(SSD).decode()
    new = text.replace('<ssd:Connector name="v_out" kind="output">',
                       '<ssd:Connector name="stiffness" kind="parameter"><ssc:Real unit="N/mm"/>'
                       '</ssd:Connector><ssd:Connector name="damping" kind="parameter">'
                       '<ssc:Real/></ssd:Connector><ssd:Connector name="v_out" kind="output">')
    new = new.replace("<ssd:Elements>",
                      '<ssd:ParameterBindings><ssd:ParameterBinding><ssd:ParameterValues>'
                      '<ssv:ParameterSet version="1.0" name="top"><ssv:Parameters>'
                      '<ssv:Parameter name="stiffness"><ssv:Real value="300" unit="N/m"/>'
                      "</ssv:Parameter></ssv:Parameters></ssv:ParameterSet>"
                      "</ssd:ParameterValues></ssd:ParameterBinding></ssd:ParameterBindings>"
                      "<ssd:Elements>", 1)
    new = new.replace('<ssd:Connector name="F" kind="input">',
                      '<ssd:Connector name="k" kind="parameter"><ssc:Real unit="N/m"/>'
                      '</ssd:Connector><ssd:Connector name="c" kind="parameter"><ssc:Real '
                      'unit="N.s/m"/></ssd:Connector><ssd:Connector name="F" kind="input">')
    new = new.replace("</ssd:Connections>",
                      '<ssd:Connection startConnector="stiffness" endElement="osc" '
                      'endConnector="k"><ssc:LinearTransformation factor="2" offset="1"/>'
                      '</ssd:Connection><ssd:Connection startConnector="damping" '
                      'endElement="osc" endConnector="c"/></ssd:Connections>')
    p = rewrite_fmu(pair, tmp_path / "par.ssp", replace={SSD: (text, new)})
    s = read_ssp(p)
    # 300 N/m = 0.3 N/mm (the connector's unit), converted to k's N/m, then 2 x + 1
    assert s.parameters == {"stiffness": pytest.approx(0.3)}
    assert s.components["osc"].parameters == {"k": pytest.approx(601.0), "c": 0.25}
    calc = new.replace('<ssd:Connector name="x" kind="output">',
                       '<ssd:Connector name="x" kind="calculatedParameter">', 1)
    calc = calc.replace('<ssd:Connection startConnector="damping" endElement="osc" '
                        'endConnector="c"/>', '<ssd:Connection startElement="lag" '
                        'startConnector="x" endElement="osc" endConnector="c"/>')
    calc = calc.replace('<ssd:Connection startConnector="x" endConnector="u" '
                        'startElement="osc" endElement="lag">', '<ssd:Connection '
                        'startConnector="v" endConnector="u" startElement="osc" '
                        'endElement="lag">')
    p = rewrite_fmu(pair, tmp_path / "calc.ssp", replace={SSD: (text, calc)})
    with pytest.raises(SSPError, match=r"line \d+: parameter osc.c is connected to the "
                                       "calculatedParameter lag.x: values computed by an FMU "
                                       "at initialization are not propagated; bind the value"):
        read_ssp(p, load_fmus=False)
