"""Issue 31 item 3: the import loads what FMPy loads, over a generated corpus of model
descriptions with each rule of :mod:`fmus.description_rules` (and each reading rule of
:mod:`fmus.description`) broken or left out one at a time, FMI 2 and FMI 3.

The oracle is FMPy 0.3.32's ``read_model_description``:

* what it reads with ``validate=True`` (what ``fmpy.simulate_fmu`` does by default), the
  default ``validate="warn"`` loads, with a warning for each rule FMPy does not check
  itself: never silently;
* what it reads with ``validate=False``, ``validate="none"`` loads;
* a refusal's hint is one that applies: it names ``validate='none'`` exactly when that
  loads the FMU;
* ``validate="strict"`` refuses every broken rule;
* every rule cites the section of the FMU's own standard (FMI 2.0 or FMI 3.0).

Where the import refuses what FMPy reads, :data:`DEVIATIONS` says why (FMPy reads it
wrongly without a word, or the import could not run it right).
"""

from __future__ import annotations

import pytest

from fmus.description import read_description
from fmus.errors import ModelDescriptionError

fmpy_md = pytest.importorskip("fmpy.model_description")

FMI2 = """<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="M" guid="{1}" numberOfEventIndicators="0">
  <ModelExchange modelIdentifier="M"/>
  <CoSimulation modelIdentifier="M"/>
  <UnitDefinitions><Unit name="m"><BaseUnit m="1"/></Unit></UnitDefinitions>
  <TypeDefinitions>
    <SimpleType name="Mode"><Enumeration><Item name="a" value="1"/><Item name="b" value="2"/>
    </Enumeration></SimpleType>
  </TypeDefinitions>
  <ModelVariables>
    <ScalarVariable name="time" valueReference="0" causality="independent" variability="continuous"><Real/></ScalarVariable>
    <ScalarVariable name="x" valueReference="1" causality="local" variability="continuous" initial="exact"><Real start="1" unit="m"/></ScalarVariable>
    <ScalarVariable name="der(x)" valueReference="2" causality="local" variability="continuous"><Real derivative="2"/></ScalarVariable>
    <ScalarVariable name="u" valueReference="3" causality="input" variability="continuous"><Real start="0"/></ScalarVariable>
    <ScalarVariable name="mode" valueReference="4" causality="input" variability="discrete"><Enumeration declaredType="Mode" start="1"/></ScalarVariable>
    <ScalarVariable name="k" valueReference="5" causality="parameter" variability="fixed"><Real start="2" min="0" max="10"/></ScalarVariable>
    <ScalarVariable name="y" valueReference="6" causality="output" variability="continuous"><Real/></ScalarVariable>
    <ScalarVariable name="n" valueReference="7" causality="output" variability="discrete"><Integer/></ScalarVariable>
    <ScalarVariable name="flag" valueReference="8" causality="output" variability="discrete"><Boolean/></ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs><Unknown index="7" dependencies="2 4"/><Unknown index="8" dependencies="5"/><Unknown index="9" dependencies=""/></Outputs>
    <Derivatives><Unknown index="3" dependencies="2 4"/></Derivatives>
    <InitialUnknowns><Unknown index="3"/><Unknown index="7"/><Unknown index="8"/><Unknown index="9"/></InitialUnknowns>
  </ModelStructure>
</fmiModelDescription>
"""  # noqa: E501

FMI3 = """<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="M" instantiationToken="{1}">
  <ModelExchange modelIdentifier="M"/>
  <CoSimulation modelIdentifier="M"/>
  <UnitDefinitions><Unit name="m"><BaseUnit m="1"/></Unit></UnitDefinitions>
  <TypeDefinitions>
    <EnumerationType name="Mode"><Item name="a" value="1"/><Item name="b" value="2"/></EnumerationType>
  </TypeDefinitions>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <Float64 name="x" valueReference="1" causality="local" variability="continuous" initial="exact" start="1" unit="m"/>
    <Float64 name="der(x)" valueReference="2" causality="local" variability="continuous" derivative="1"/>
    <Float64 name="u" valueReference="3" causality="input" variability="continuous" start="0"/>
    <Enumeration name="mode" valueReference="4" declaredType="Mode" causality="input" variability="discrete" start="1"/>
    <Float64 name="k" valueReference="5" causality="parameter" variability="fixed" start="2" min="0" max="10"/>
    <Float64 name="y" valueReference="6" causality="output" variability="continuous"/>
    <Int32 name="n" valueReference="7" causality="output" variability="discrete"/>
    <Boolean name="flag" valueReference="8" causality="output" variability="discrete"/>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="6" dependencies="1 3"/>
    <Output valueReference="7" dependencies="4"/>
    <Output valueReference="8" dependencies=""/>
    <ContinuousStateDerivative valueReference="2" dependencies="1 3"/>
    <InitialUnknown valueReference="2"/>
    <InitialUnknown valueReference="6"/>
    <InitialUnknown valueReference="7"/>
    <InitialUnknown valueReference="8"/>
  </ModelStructure>
</fmiModelDescription>
"""  # noqa: E501


# each case: (id, {2: [(old, new), ...] or None, 3: [...] or None}); None: not in that version
CASES = [
    ("valid", {2: [], 3: []}),
    # ---- variables (FMI 2.0 section 2.2.7, FMI 3.0 section 2.4.7)
    ("duplicate name", {2: [('name="flag"', 'name="n"')], 3: [('name="flag"', 'name="n"')]}),
    ("input without start", {2: [('<Real start="0"/>', "<Real/>")],
                             3: [('causality="input" variability="continuous" start="0"',
                                  'causality="input" variability="continuous"')]}),
    ("initial exact without start", {
        2: [('initial="exact"><Real start="1" unit="m"/>', 'initial="exact"><Real unit="m"/>')],
        3: [('initial="exact" start="1"', 'initial="exact"')]}),
    ("independent with start", {2: [('variability="continuous"><Real/></ScalarVariable>\n'
                                     '    <ScalarVariable name="x"',
                                     'variability="continuous"><Real start="0"/></ScalarVariable>'
                                     '\n    <ScalarVariable name="x"')],
                                3: [('causality="independent" variability="continuous"/>',
                                     'causality="independent" variability="continuous" '
                                     'start="0"/>')]}),
    ("min greater than max", {2: [('min="0" max="10"', 'min="10" max="0"')],
                              3: [('min="0" max="10"', 'min="10" max="0"')]}),
    ("start outside bounds", {2: [('start="2" min="0" max="10"', 'start="20" min="0" max="10"')],
                              3: [('start="2" min="0" max="10"', 'start="20" min="0" max="10"')]}),
    # pythonfmu's README FMUs: Integer/Boolean/String variables without a variability
    ("non-real variability omitted", {
        2: [('causality="output" variability="discrete"><Integer/>',
             'causality="output"><Integer/>'),
            ('causality="output" variability="discrete"><Boolean/>',
             'causality="output"><Boolean/>')],
        3: [('causality="output" variability="discrete"/>\n    <Boolean',
             'causality="output"/>\n    <Boolean')]}),
    ("enumeration input declared continuous", {
        2: [('causality="input" variability="discrete"><Enumeration',
             'causality="input" variability="continuous"><Enumeration')],
        3: [('causality="input" variability="discrete" start="1"',
             'causality="input" variability="continuous" start="1"')]}),
    ("integer output declared continuous", {
        2: [('variability="discrete"><Integer/>', 'variability="continuous"><Integer/>')],
        3: [('<Int32 name="n" valueReference="7" causality="output" variability="discrete"',
             '<Int32 name="n" valueReference="7" causality="output" variability="continuous"')]}),
    ("two independent variables", {
        2: [('<ScalarVariable name="k" valueReference="5" causality="parameter" '
             'variability="fixed"><Real start="2" min="0" max="10"/>',
             '<ScalarVariable name="k" valueReference="5" causality="independent" '
             'variability="continuous"><Real/>')],
        3: [('<Float64 name="k" valueReference="5" causality="parameter" variability="fixed" '
             'start="2" min="0" max="10"/>',
             '<Float64 name="k" valueReference="5" causality="independent" '
             'variability="continuous"/>')]}),
    ("no independent variable", {
        2: [('causality="independent" variability="continuous"><Real/>',
             'causality="local" variability="continuous" initial="calculated"><Real/>')],
        3: [('causality="independent" variability="continuous"/>',
             'causality="local" variability="continuous" initial="calculated"/>')]}),
    ("illegal causality/variability combination", {
        2: [('name="y" valueReference="6" causality="output" variability="continuous"',
             'name="y" valueReference="6" causality="output" variability="fixed"')],
        3: [('name="y" valueReference="6" causality="output" variability="continuous"',
             'name="y" valueReference="6" causality="output" variability="fixed"')]}),
    ("undefined declared type", {2: [('declaredType="Mode"', 'declaredType="Nope"')],
                                 3: [('declaredType="Mode"', 'declaredType="Nope"')]}),
    ("undefined unit", {2: [('unit="m"/>', 'unit="furlong"/>')],
                        3: [('start="1" unit="m"/>', 'start="1" unit="furlong"/>')]}),
    ("unparsable parameter start", {2: [('<Real start="2"', '<Real start="two"')],
                                    3: [('variability="fixed" start="2"',
                                         'variability="fixed" start="two"')]}),
    ("unparsable input start", {2: [('<Real start="0"/>', '<Real start="zero"/>')],
                                3: [('variability="continuous" start="0"',
                                     'variability="continuous" start="zero"')]}),
    ("schema: unknown attribute", {2: [('name="u" valueReference="3"',
                                        'name="u" valueReference="3" bogus="1"')],
                                   3: [('name="u" valueReference="3"',
                                        'name="u" valueReference="3" bogus="1"')]}),
    # ---- interfaces
    ("no interface", {2: [('<ModelExchange modelIdentifier="M"/>\n  <CoSimulation '
                           'modelIdentifier="M"/>', "")],
                      3: [('<ModelExchange modelIdentifier="M"/>\n  <CoSimulation '
                           'modelIdentifier="M"/>', "")]}),
    ("modelIdentifier not a C identifier", {
        2: [('<CoSimulation modelIdentifier="M"/>', '<CoSimulation modelIdentifier="M-1"/>')],
        3: [('<CoSimulation modelIdentifier="M"/>', '<CoSimulation modelIdentifier="M-1"/>')]}),
    # ---- model structure (FMI 2.0 section 2.2.8, FMI 3.0 section 2.4.8)
    ("an output missing from the model structure", {
        2: [('<Unknown index="9" dependencies=""/>', "")],
        3: [('<Output valueReference="8" dependencies=""/>', "")]}),
    # FMPy 0.3.32's container writer: <ModelStructure/>
    ("empty model structure", {2: [(FMI2[FMI2.index("<ModelStructure>"):
                                         FMI2.index("</ModelStructure>") + 17],
                                    "<ModelStructure/>")],
                               3: [(FMI3[FMI3.index("<ModelStructure>"):
                                         FMI3.index("</ModelStructure>") + 17],
                                    "<ModelStructure/>")]}),
    ("a non-output listed as output", {
        2: [('<Outputs><Unknown index="7"', '<Outputs><Unknown index="6"/><Unknown index="7"')],
        3: [('<Output valueReference="6"', '<Output valueReference="5"/>\n    '
             '<Output valueReference="6"')]}),
    ("initial unknowns incomplete", {2: [('<Unknown index="7"/><Unknown', "<Unknown")],
                                     3: [('<InitialUnknown valueReference="6"/>', "")]}),
    ("state derivative without derivative attribute", {
        2: [('<Real derivative="2"/>', "<Real/>")],
        3: [(' derivative="1"/>', "/>")]}),
    ("state derivative of an integer", {
        2: [('<Real derivative="2"/>', '<Real derivative="8"/>')],
        3: [(' derivative="1"/>', ' derivative="7"/>')]}),
    # ---- references (fmpy needs them to read)
    ("missing valueReference", {2: [('name="u" valueReference="3" ', 'name="u" ')],
                                3: [('name="u" valueReference="3" ', 'name="u" ')]}),
    ("valueReference not an unsigned integer", {
        2: [('name="u" valueReference="3"', 'name="u" valueReference="-3"')],
        3: [('name="u" valueReference="3"', 'name="u" valueReference="three"')]}),
    ("duplicate valueReference", {2: None,
                                  3: [('name="flag" valueReference="8"',
                                       'name="flag" valueReference="7"'),
                                      ('<Output valueReference="8" dependencies=""/>', ""),
                                      ('<InitialUnknown valueReference="8"/>', "")]}),
    ("dangling dependency", {2: [('dependencies="2 4"/><Unknown index="8"',
                                  'dependencies="2 40"/><Unknown index="8"')],
                             3: [('dependencies="1 3"/>\n    <Output',
                                  'dependencies="1 30"/>\n    <Output')]}),
    ("dangling derivative", {2: [('<Real derivative="2"/>', '<Real derivative="99"/>')],
                             3: [(' derivative="1"/>', ' derivative="99"/>')]}),
    ("clocks names a non-clock", {2: None,
                                  3: [('<Int32 name="n" valueReference="7"',
                                       '<Int32 name="n" valueReference="7" clocks="3"')]}),
    ("variable without a name", {2: [('<ScalarVariable name="k" ', "<ScalarVariable ")],
                                 3: [('<Float64 name="k" ', "<Float64 ")]}),
]

# (case, fmi version, mode) where the import refuses what FMPy reads, and why
DEVIATIONS = {
    ("state derivative without derivative attribute", "warn"):
        "the state of a listed derivative is unknown: the import's state vector would not "
        "match the FMU's (FMPy counts states by derivatives and never names them)",
    ("state derivative of an integer", "warn"):
        "a state that is no Real/Float cannot be integrated by the import",
    ("state derivative without derivative attribute", "none"): "as for warn",
    ("state derivative of an integer", "none"): "as for warn",
    ("duplicate valueReference", "none"):
        "FMPy keeps the last variable of a shared value reference and resolves the model "
        "structure to it: it reads the FMU wrongly without a word",
    ("valueReference not an unsigned integer", "none"):
        "a negative value reference is no fmi2ValueReference (unsigned int): FMPy reads it "
        "and hands the FMU -3 as 4294967293 (FMPy's validate=True refuses it by the schema)",
    ("variable without a name", "warn"):
        "FMPy skips a variable without a name, so the indices of the FMI 2 model structure "
        "shift and name the wrong variables (no valueReference can be checked either)",
    ("variable without a name", "none"): "as for warn",
}


def _write(tmp_path, fmi, edits):
    text = FMI2 if fmi == 2 else FMI3
    for old, new in edits:
        assert old in text, (old, fmi)
        text = text.replace(old, new, 1)
    d = tmp_path / f"md{fmi}"
    d.mkdir(exist_ok=True)
    (d / "modelDescription.xml").write_text(text)
    return d


def _fmpy_reads(root, validate):
    try:
        fmpy_md.read_model_description(str(root), validate=validate)
        return True
    except Exception:  # noqa: BLE001 - fmpy raises bare Exceptions
        return False


def _ours(root, validate):
    """``(info or None, error or None)``; anything but a ModelDescriptionError fails."""
    try:
        return read_description(root, "m.fmu", validate=validate), None
    except ModelDescriptionError as exc:
        return None, exc


PARAMS = [pytest.param(name, fmi, edits[fmi], id=f"{name}-fmi{fmi}")
          for name, edits in CASES for fmi in (2, 3) if edits[fmi] is not None]


@pytest.mark.parametrize("case, fmi, edits", PARAMS)
def test_the_import_loads_what_fmpy_loads(tmp_path, case, fmi, edits):
    root = _write(tmp_path, fmi, edits)
    fmpy_true, fmpy_false = _fmpy_reads(root, True), _fmpy_reads(root, False)
    assert fmpy_false or not fmpy_true
    warn, warn_err = _ours(root, "warn")
    none, none_err = _ours(root, "none")
    strict, strict_err = _ours(root, "strict")
    for mode, fmpy_ok, ok, err in (("warn", fmpy_true, warn, warn_err),
                                   ("none", fmpy_false, none, none_err)):
        if fmpy_ok and ok is None:
            assert (case, mode) in DEVIATIONS, (
                f"FMPy reads it (validate={mode == 'warn'}), validate={mode!r} refuses it:"
                f"\n{err}")
    # never silently: what FMPy's validation refuses loads with a warning (or a skip note)
    if warn is not None and not fmpy_true:
        assert any(p.severity == "warning" for p in warn.problems), warn.problems
    if none is not None and not fmpy_true:
        assert any(p.severity in ("warning", "skipped") for p in none.problems)
    # a refusal's hint applies
    if warn_err is not None:
        says_none = "validate='none'" in str(warn_err)
        assert says_none == (none is not None), str(warn_err)
        if none is None:
            assert "whatever validate says" in str(warn_err)
    # strict refuses every warning; warn and strict agree on a clean description
    if warn is not None:
        broken = [p for p in warn.problems if p.severity == "warning"]
        assert (strict is None) == bool(broken)
        if strict_err is not None:
            assert "validate='warn'" in str(strict_err)
    # the section cited is the FMU's own standard's
    problems = (warn or none).problems if (warn or none) else (warn_err or none_err).problems
    other = "FMI 3.0" if fmi == 2 else "FMI 2.0"
    for p in problems:
        assert other not in p.rule, f"FMI {fmi} FMU, rule cites {other}: {p}"
    if case == "valid":
        assert warn is not None and not [p for p in warn.problems if p.severity != "info"]


@pytest.mark.parametrize("fmi", [2, 3])
def test_derived_structure(tmp_path, fmi):
    """What the import takes where the model description leaves it out."""
    empty = dict(CASES)["empty model structure"][fmi]
    omitted = dict(CASES)["non-real variability omitted"][fmi]
    info, _ = _ours(_write(tmp_path, fmi, omitted + []), "warn")
    n = info.variable("n")
    assert n.variability == "discrete"
    info, _ = _ours(_write(tmp_path, fmi, empty), "warn")
    assert info.feedthrough == {"y": None, "n": None, "flag": None}  # every input
    (p,) = {p.rule: p for p in info.problems if p.severity == "warning"}.values()
    sec = "FMI 2.0 section 2.2.8" if fmi == 2 else "FMI 3.0 section 2.4.8"
    assert p.rule == f"ModelStructure must list every output ({sec})", p.rule
    listed = dict(CASES)["a non-output listed as output"][fmi]
    info, _ = _ours(_write(tmp_path, fmi, listed), "warn")
    assert set(info.feedthrough) == {"y", "n", "flag"}


@pytest.mark.parametrize("fmi", [2, 3])
def test_fmpys_own_container_writer_is_read(tmp_path, fmi):
    """FMPy's ``write_model_description`` (what its container writer calls) with outputs
    but no model structure: read with a warning, every output depending on every input."""
    md = fmpy_md.ModelDescription()
    md.fmiVersion = f"{fmi}.0"
    md.modelName = "Container"
    md.guid = md.instantiationToken = "{1}"
    md.coSimulation = fmpy_md.CoSimulation(modelIdentifier="container_fmu")
    kw = dict(type="Real" if fmi == 2 else "Float64")
    md.modelVariables = [
        fmpy_md.ModelVariable(name="u", valueReference=0, causality="input",
                              variability="continuous", start="1", **kw),
        fmpy_md.ModelVariable(name="y", valueReference=1, causality="output",
                              variability="continuous", **kw)]
    d = tmp_path / "c"
    d.mkdir()
    fmpy_md.write_model_description(md, d / "modelDescription.xml")
    assert "<Output" not in (d / "modelDescription.xml").read_text()
    info = read_description(d, "Container.fmu")
    assert info.feedthrough == {"y": None}
    assert any("ModelStructure must list every output" in p.rule and p.severity == "warning"
               for p in info.problems)
