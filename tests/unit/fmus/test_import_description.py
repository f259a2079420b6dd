"""fmus.description and fmus.fmi_units: reading and checking model descriptions; FMI units
to cosim units."""

from __future__ import annotations

import warnings

import pytest

from cosim.errors import UnitError
from cosim.units import conversion, parse_unit
from fmus.description import port_name, read_description
from fmus.errors import FMUConfigError, FMUWarning, ModelDescriptionError
from fmus.fmi_units import map_unit

pytest.importorskip("fmpy")

HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<fmiModelDescription fmiVersion="2.0" '
        'modelName="M" guid="{1}" numberOfEventIndicators="0">\n'
        '<CoSimulation modelIdentifier="M"/>\n')


def _md(tmp_path, variables, structure=None, units="", head=HEAD):
    if structure is None:
        outs = [i + 1 for i, v in enumerate(variables) if 'causality="output"' in v]
        structure = "<Outputs>" + "".join(f'<Unknown index="{i}"/>' for i in outs) + \
            "</Outputs>" if outs else ""
    xml = (head + (f"<UnitDefinitions>{units}</UnitDefinitions>\n" if units else "")
           + "<ModelVariables>\n" + "\n".join(variables) + "\n</ModelVariables>\n"
           + f"<ModelStructure>{structure}</ModelStructure>\n</fmiModelDescription>\n")
    (tmp_path / "modelDescription.xml").write_text(xml)
    return tmp_path


def _var(name, vr, causality="local", extra="", real='start="0"', variability=""):
    var = f' variability="{variability}"' if variability else ""
    return (f'<ScalarVariable name="{name}" valueReference="{vr}" causality="{causality}"'
            f'{var} {extra}><Real {real}/></ScalarVariable>')


# ------------------------------------------------------------------------- units
@pytest.mark.parametrize("name, base, expected", [
    ("m/s", dict(m=1, s=-1), "m/s"),
    ("rpm", dict(rad=1, s=-1, factor=0.10471975511965977), "rpm"),
    ("degC", dict(K=1, offset=273.15), "degC"),
    ("rad/s", dict(s=-1), "rad/s"),                      # rad left out of the BaseUnit
    ("millimetre", dict(m=1, factor=0.001), "mm"),        # a name cosim does not know
    ("Newton", dict(kg=1, m=1, s=-2), "kg m s^-2"),
    ("mm/s", dict(m=1, s=-1, factor=0.001), "mm/s"),
    ("kNm", dict(kg=1, m=2, s=-2, factor=1000.0), "kJ"),
    ("bar", dict(kg=1, m=-1, s=-2, factor=1e5), "bar"),
    ("m/s2", None, "m/s2"),                               # parsed, no BaseUnit
])
def test_fmi_units_map_to_cosim_units(name, base, expected):
    from fmpy.model_description import BaseUnit
    text, note = map_unit(name, BaseUnit(**base) if base else None)
    assert text == expected and note is None
    if base:
        # the mapped unit converts exactly like the FMU's definition
        b = BaseUnit(**base)
        assert parse_unit(text).factor == pytest.approx(b.factor, rel=1e-12)


def test_units_that_cannot_be_mapped_leave_the_port_without_a_unit_and_say_why():
    from fmpy.model_description import BaseUnit
    text, note = map_unit("ft", BaseUnit(m=1, factor=0.3048))
    assert text is None and "cannot be written in cosim's unit grammar" in note
    text, note = map_unit("furlong", None)
    assert text is None and "not known to cosim and the FMU gives no BaseUnit" in note
    text, note = map_unit("N", BaseUnit(m=1))  # name and definition disagree
    assert text == "m" and "the FMU's definition is used" in note


def test_port_names():
    assert port_name("body.pos[1]") == "body_pos_1"
    assert port_name("der(x)") == "der_x"
    assert port_name("2nd") == "v_2nd"
    assert port_name("a b/c") == "a_b_c"


# --------------------------------------------------------------- reading, info
def test_info_of_a_model_description(tmp_path):
    units = ('<Unit name="N"><BaseUnit kg="1" m="1" s="-2"/></Unit>'
             '<Unit name="millimetre"><BaseUnit m="1" factor="0.001"/></Unit>')
    root = _md(tmp_path, [
        _var("f.in", 0, "input", real='unit="N" start="1" min="-5" max="5"'),
        _var("y", 1, "output", real='unit="millimetre"'),
        _var("k", 2, "parameter", real='start="3"', variability="tunable"),
    ], structure='<Outputs><Unknown index="2" dependencies="1"/></Outputs>', units=units)
    info = read_description(root, "m.fmu")
    v = info.variable("f.in")
    assert (v.port, v.unit, v.start, v.min, v.max) == ("f_in", "N", 1.0, -5.0, 5.0)
    assert info.variable("y").unit == "mm" and info.variable("y").fmi_unit == "millimetre"
    assert info.feedthrough == {"y": {"f.in"}}
    text = str(info)
    assert "FMU m.fmu: model 'M', FMI 2.0" in text
    assert "input      f_in  f.in" in text and "tunable" in text
    # units as the FMU writes them (its own names), not cosim's mapping ("mm")
    assert "Real  millimetre" in text and " mm " not in text
    with pytest.raises(FMUConfigError, match="has no variable 'kk'.*Did you mean 'k'"):
        info.variable("kk")


def test_overrides_of_units_and_port_names(tmp_path):
    root = _md(tmp_path, [_var("u", 0, "input", real='unit="strange" start="0"'),
                          _var("y.z", 1, "output")])
    info = read_description(root, units={"u": "m/s"}, port_names={"y.z": "yz"})
    assert info.variable("u").unit == "m/s" and info.variable("y.z").port == "yz"
    with pytest.raises(UnitError):
        read_description(root, units={"u": "furlongs"})


def test_port_name_collisions_are_reported(tmp_path):
    root = _md(tmp_path, [_var("a.b", 0, "input"), _var("a_b", 1, "input")])
    with pytest.raises(FMUConfigError, match="both map to the port name 'a_b'; give "
                                             "port_names="):
        read_description(root)


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize("variables, variable, rule, validate", [
    ([_var("u", 0, "input", real="")], "u", "inputs must have a start value", "warn"),
    # FMPy reads broken bounds: a warning (issue 31 item 3), an error when strict
    ([_var("p", 0, "parameter", real='start="5" min="0" max="1"', variability="fixed")], "p",
     "min <= start <= max", "strict"),
    ([_var("p", 0, "parameter", real='start="0.5" min="1" max="0"',
          variability="fixed")], "p", "min <= max", "strict"),
    ([_var("a", 0, "input"), _var("a", 1, "input")], "a", "variable names must be unique",
     "warn"),
    ([_var("x", 0, "output", variability="fixed")], "x",
     "FMI causality/variability/initial combinations", "warn"),
])
def test_a_model_description_that_does_not_validate_names_variable_and_rule(
        tmp_path, variables, variable, rule, validate):
    root = _md(tmp_path, variables)
    with pytest.raises(ModelDescriptionError) as exc:
        read_description(root, "bad.fmu", validate=validate)
    msg = str(exc.value)
    assert "FMU 'bad.fmu': modelDescription.xml does not validate" in msg
    assert f"variable '{variable}'" in msg and rule in msg, msg
    assert any(p.variable == variable for p in exc.value.problems)


def test_outputs_missing_from_the_model_structure(tmp_path):
    """FMPy reads it (its container writer leaves ModelStructure empty): the output
    depends on every input, with a warning; strict refuses it (issue 31 item 3)."""
    root = _md(tmp_path, [_var("y", 0, "output")], structure="")
    info = read_description(root)
    assert info.feedthrough == {"y": None}
    (p,) = [p for p in info.problems if p.severity == "warning"]
    assert p.variable == "y" and "missing from ModelStructure/Outputs" in p.message
    with pytest.raises(ModelDescriptionError, match="variable 'y'.*missing from "
                                                    "ModelStructure/Outputs"):
        read_description(root, validate="strict")


def test_schema_violations_are_warnings_or_errors_when_strict(tmp_path):
    bad = ('<ScalarVariable name="u" valueReference="0" causality="input" bogus="1">'
           '<Real start="0"/></ScalarVariable>')
    root = _md(tmp_path, [bad])
    info = read_description(root)
    probs = [p for p in info.problems if p.severity == "warning"]
    assert probs and probs[0].variable == "u" and "bogus" in probs[0].message
    assert "XML schema" in probs[0].rule
    with pytest.raises(ModelDescriptionError, match="variable 'u' \\(line \\d+\\): .*bogus"):
        read_description(root, validate="strict")


def test_malformed_xml_and_dtds_are_refused(tmp_path):
    (tmp_path / "modelDescription.xml").write_text("<fmiModelDescription fmiVersion='2.0'>")
    with pytest.raises(ModelDescriptionError, match="not well-formed XML"):
        read_description(tmp_path)
    (tmp_path / "modelDescription.xml").write_text(
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "boom">]>'
        '<fmiModelDescription fmiVersion="2.0">&e;</fmiModelDescription>')
    with pytest.raises(ModelDescriptionError, match="declares a DTD"):
        read_description(tmp_path)
    (tmp_path / "modelDescription.xml").write_text(
        '<fmiModelDescription fmiVersion="1.0"/>')
    with pytest.raises(ModelDescriptionError, match="fmiVersion '1.0' is not supported"):
        read_description(tmp_path)


def test_pythonfmu_model_descriptions_load_with_an_info_note(fmu_files):
    """pythonfmu leaves outputs out of InitialUnknowns: listed, not warned about."""
    from fmus import FMU
    with warnings.catch_warnings():
        warnings.simplefilter("error", FMUWarning)
        fmu = FMU(fmu_files["LimMass2"])
    notes = [p for p in fmu.info.problems if p.severity == "info"]
    assert {p.variable for p in notes} == {"x2", "v2"}
    assert fmu.info.feedthrough == {"x2": None, "v2": None}  # no dependencies: all inputs


@pytest.mark.parametrize("listed", ["w", "w y"])
def test_initial_dependencies_of_outputs_initial_unknowns_miss(tmp_path, listed):
    """Initialization order (issue 31 item 1) against a lenient structure (item 3): an output
    InitialUnknowns should list but misses (initial calculated, pythonfmu) depends on every
    input at initialization, one with initial="exact" on none; a listed one on its
    dependencies.  Before: a missed calculated output was taken to hold its start value."""
    outs = {"y": "", "z": 'initial="exact"', "w": ""}
    variables = [_var("u", 0, "input")] + [
        _var(n, i + 1, "output", extra=e, variability="continuous" if n != "z" else "discrete")
        for i, (n, e) in enumerate(outs.items())]
    index = {"u": 1, "y": 2, "z": 3, "w": 4}
    structure = ("<Outputs>" + "".join(f'<Unknown index="{index[n]}" dependencies=""/>'
                                       for n in outs) + "</Outputs><InitialUnknowns>"
                 + "".join(f'<Unknown index="{index[n]}" dependencies="1"/>'
                           for n in listed.split()) + "</InitialUnknowns>")
    info = read_description(_md(tmp_path, variables, structure=structure))
    assert info.initial_feedthrough == {"y": {"u"} if "y" in listed else None, "z": set(),
                                        "w": {"u"}}
    assert info.feedthrough == {"y": set(), "z": set(), "w": set()}


def test_unit_notes_become_warnings(fmu_files, tmp_path):
    from tests.fmu_builders import SOURCES, build_c_fmu
    xml = (SOURCES / "loop_a.xml").read_text().replace(
        '<ScalarVariable name="y" valueReference="3" causality="output"><Real/>',
        '<ScalarVariable name="y" valueReference="3" causality="output"><Real unit="ft"/>'
    ).replace("<ModelVariables>", '<UnitDefinitions><Unit name="ft"><BaseUnit m="1" '
              'factor="0.3048"/></Unit></UnitDefinitions>\n  <ModelVariables>')
    path = build_c_fmu("loop_a", tmp_path, xml=xml, binary=False)
    from fmus import FMU
    with pytest.warns(FMUWarning, match="unit 'ft' .* cannot be written in cosim's unit "
                                        "grammar"):
        fmu = FMU(path)
    assert fmu.info.variable("y").unit is None
    assert conversion("m", None) == (1.0, 0.0)


# ----------------------------------------------- model descriptions as tools write them
HEAD3 = ('<?xml version="1.0" encoding="UTF-8"?>\n<fmiModelDescription fmiVersion="3.0" '
         'modelName="M" instantiationToken="{1}">\n<CoSimulation modelIdentifier="M"/>\n')
TIME3 = '<Float64 name="time" valueReference="0" causality="independent"/>'


def _md3(tmp_path, variables, structure="", head=HEAD3):
    xml = (head + "<ModelVariables>\n" + "\n".join([TIME3] + variables)
           + f"\n</ModelVariables>\n<ModelStructure>{structure}</ModelStructure>\n"
           "</fmiModelDescription>\n")
    (tmp_path / "modelDescription.xml").write_text(xml)
    return tmp_path


def _line_of(root, text):
    lines = (root / "modelDescription.xml").read_text().splitlines()
    return next(i + 1 for i, ln in enumerate(lines) if text in ln)


@pytest.mark.parametrize("fmi", [2, 3])
def test_a_missing_value_reference_names_the_variable_and_its_line(tmp_path, fmi):
    if fmi == 2:
        root = _md(tmp_path, [_var("k", 0, "parameter", variability="fixed"),
                              _var("y", 1, "output").replace(' valueReference="1"', "")])
    else:
        root = _md3(tmp_path, ['<Float64 name="k" valueReference="1" causality="parameter" '
                               'variability="fixed" start="1"/>',
                               '<Float64 name="y" causality="output"/>'])
    with pytest.raises(ModelDescriptionError) as exc:
        read_description(root, "m.fmu")
    (p,) = exc.value.problems  # one problem: nothing that follows from it
    assert (p.variable, p.line) == ("y", _line_of(root, 'name="y"'))
    assert f"variable 'y' (line {p.line}): no valueReference attribute" in str(exc.value)


def test_fmi3_duplicate_value_references_say_which_variables_share_which(tmp_path):
    root = _md3(tmp_path, [
        '<Float64 name="x" valueReference="1" causality="output"/>',
        '<Float64 name="k" valueReference="2" causality="parameter" variability="fixed" '
        'start="1"/>',
        '<Float64 name="k2" valueReference="1" causality="parameter" variability="fixed" '
        'start="2"/>'], structure='<Output valueReference="1"/>')
    with pytest.raises(ModelDescriptionError) as exc:
        read_description(root)
    # one problem: not also "output missing from ModelStructure" (fmpy resolved vr 1 to k2)
    (p,) = exc.value.problems
    lx, lk2 = _line_of(root, 'name="x"'), _line_of(root, 'name="k2"')
    assert p.message == (f"valueReference 1 is shared by 'x' (line {lx}) and 'k2' "
                         f"(line {lk2})")


def test_a_model_structure_reference_that_points_nowhere_is_named(tmp_path):
    root = _md3(tmp_path, ['<Float64 name="x" valueReference="1" causality="output"/>'],
                structure='<Output valueReference="1" dependencies="7"/>')
    with pytest.raises(ModelDescriptionError, match=r"\(line \d+\): ModelStructure <Output> "
                                                    "dependencies refers to valueReference "
                                                    "'7', which no variable has"):
        read_description(root)
    root = _md(tmp_path, [_var("y", 0, "output")],
               structure='<Outputs><Unknown index="2"/></Outputs>')
    with pytest.raises(ModelDescriptionError, match="ModelStructure/Outputs <Unknown> refers "
                                                    "to index '2', which no variable has"):
        read_description(root)


@pytest.mark.parametrize("fmi", [2, 3])
def test_an_unparsable_start_value_is_one_error(tmp_path, fmi):
    if fmi == 2:
        root = _md(tmp_path, [_var("k", 0, "parameter", real='start="abc"',
                                   variability="fixed")])
    else:
        root = _md3(tmp_path, ['<Float64 name="k" valueReference="1" causality="parameter" '
                               'variability="fixed" start="abc"/>'])
    # FMPy reads it (it parses a start when it sets it): warn loads without that start
    (p,) = [p for p in read_description(root).problems if p.severity == "warning"]
    assert p.variable == "k" and p.message.startswith("start='abc' is not a ")
    with pytest.raises(ModelDescriptionError) as exc:
        read_description(root, validate="strict")
    (p,) = exc.value.problems  # strict: not also the schema's word on it
    assert p.variable == "k" and p.message.startswith("start='abc' is not a ")


FEED3 = [
    '<Int64 name="i64" valueReference="1" causality="input" start="-9223372036854775807"/>',
    '<UInt64 name="u64" valueReference="2" causality="input" start="18446744073709551615"/>',
    '<Binary name="bin" valueReference="3" causality="input"><Start value="666f6f"/></Binary>',
    '<String name="s" valueReference="4" causality="parameter" variability="fixed">'
    '<Start value="Set me!"/></String>',
    '<Float64 name="x0" valueReference="5" causality="output" initial="exact" start="2"/>',
    '<Float64 name="c" valueReference="6" causality="output" variability="constant" '
    'start="1"/>',
    '<Float64 name="y" valueReference="7" causality="output"/>',
]


def test_fmi3_types_and_what_may_be_set_before_initialization(tmp_path):
    root = _md3(tmp_path, FEED3, structure="".join(
        f'<Output valueReference="{vr}"/>' for vr in (5, 6, 7)))
    info = read_description(root)
    i64, u64, b, s = (info.variable(n) for n in ("i64", "u64", "bin", "s"))
    assert (i64.start, type(i64.start)) == (-9223372036854775807, int)
    assert (u64.start, type(u64.start)) == (18446744073709551615, int)  # exact, no float
    assert (b.kind, b.start) == ("binary", b"foo")
    assert (s.kind, s.start) == ("string", "Set me!")
    settable = {v.name for v in info.variables if v.settable_before_init}
    assert settable == {"i64", "u64", "bin", "s", "x0"}  # not time, the constant, y
    assert [v.name for v in info.settable] == ["i64", "u64", "bin", "s", "x0"]


CLOCKS_MD = '''<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="Clocks" instantiationToken="{C}">
 <ScheduledExecution modelIdentifier="Clocks" canGetAndSetFMUState="true"/>
 <ModelVariables>
  <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
  <Clock name="c1" valueReference="1" causality="input" intervalVariability="constant"
         intervalDecimal="0.5" shiftDecimal="0.1" priority="0"/>
  <Clock name="c2" valueReference="2" causality="input" intervalVariability="triggered"
         priority="1"/>
  <Clock name="c3" valueReference="3" causality="input" intervalVariability="countdown"
         priority="2" clocks="1"/>
  <Int32 name="ticks" valueReference="4" causality="output" clocks="1 2"/>
  <Int32 name="u" valueReference="5" causality="input" start="0"/>
 </ModelVariables>
 <ModelStructure>
  <Output valueReference="4" dependencies="1 2"/>
 </ModelStructure>
</fmiModelDescription>
'''


def test_a_scheduled_execution_fmu_with_clocks_reads_without_false_problems(tmp_path):
    (tmp_path / "modelDescription.xml").write_text(CLOCKS_MD)
    info = read_description(tmp_path, "clocks.fmu")
    assert info.problems == []  # no "input has no start value", no "neither interface"
    assert info.interfaces == {"ScheduledExecution": {
        "modelIdentifier": "Clocks", "canGetAndSetFMUState": True,
        "canGetAndSetFMUstate": True}}
    c1, c2, c3 = info.clocks
    assert [c.kind for c in info.clocks] == ["clock"] * 3
    assert (c1.clock.interval_variability, c1.clock.interval, c1.clock.shift,
            c1.clock.priority, c1.clock.periodic) == ("constant", 0.5, 0.1, 0, True)
    assert (c2.clock.interval_variability, c2.clock.periodic) == ("triggered", False)
    assert c3.clocks == ("c1",) and info.variable("ticks").clocks == ("c1", "c2")
    assert [v.name for v in info.clocked_by("c2")] == ["ticks"]
    assert not any(c.settable_before_init for c in info.clocks)
    assert info.variable("u").settable_before_init


def test_clocks_must_name_clock_variables(tmp_path):
    (tmp_path / "modelDescription.xml").write_text(CLOCKS_MD.replace('clocks="1 2"',
                                                                     'clocks="1 5"'))
    # FMPy reads it: the reference is ignored with a warning, strict refuses it
    info = read_description(tmp_path)
    assert info.variable("ticks").clocks == ("c1",)
    with pytest.raises(ModelDescriptionError, match="variable 'ticks'.*clocks refers to 'u', "
                                                    "a Int32 variable"):
        read_description(tmp_path, validate="strict")
