"""Reading and checking ``modelDescription.xml``; FMI units to cosim units.

:func:`read_description` parses the model description of an extracted FMU
(with fmpy's object model, after a hardened parse that refuses DTDs and
entities), checks it against the FMI XML schema and against the FMI rules the
import relies on (:mod:`fmus.description_rules`), and returns an
:class:`FMUInfo`: the metadata, the interfaces (``ModelExchange``,
``CoSimulation``, FMI 3 ``ScheduledExecution``) with their capabilities,
every variable as a :class:`Variable` (the typed records are in
:mod:`fmus.model_info`; port name, causality, variability,
type and kind, unit mapped to a cosim unit string, start, min, max, whether
it may be set before initialization, FMI 3 clock attributes and the clocks a
variable belongs to), the continuous states, the event indicators, and each
output's feedthrough.

Each broken rule is a :class:`Problem` naming the variable, its line and the
rule with the section of the FMU's own standard (FMI 2.0 or 3.0).  The default
``validate="warn"`` loads what FMPy's ``read_model_description(validate=True)``
reads: a rule FMPy reads past is a warning, and where the model description
leaves structure out the import derives it as the standard's defaults say
(outputs missing from ``ModelStructure`` depend on every input, as FMPy 0.3.32's
container writer leaves them out; a non-Real variable without a variability,
as pythonfmu writes them, is ``discrete``; broken bounds are not used; a start
that does not parse is not set).  What FMPy refuses (duplicate names, an input
without a start value, a non-Real variable declared ``continuous``...) raises
:class:`~fmus.errors.ModelDescriptionError`, whose hint says how to load it anyway
(``validate="none"``, FMPy's ``validate=False``); what fmpy cannot read, or the
import cannot run right (a missing or duplicated value reference, a reference
that points nowhere, a state derivative without its state), is refused whatever
``validate`` says.  ``validate="strict"`` refuses the warnings too.  One defect
is one problem: what only follows from it (the schema's message on the same
attribute, references to a variable whose value reference is missing) is not
listed again.

Units are mapped to cosim unit strings by :func:`fmus.fmi_units.map_unit`
(``units={"var": "..."}`` at import replaces a mapping).

Limitations: FMI 3 ``Binary``/``String`` arrays keep the first ``<Start>``
value only (fmpy reads one); terminals and icons, build descriptions and
layered standards' manifests are not read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from cosim.units import parse_unit

from .description_rules import Problem, check_rules, reference_problems
from .errors import ModelDescriptionError
from .fmi_units import map_unit
from .model_info import CAP_ALIASES as _CAP_ALIASES
from .model_info import INT_TYPES, REAL_TYPES, ClockInfo, FMUInfo, Variable

__all__ = ["ClockInfo", "FMUInfo", "Problem", "VALIDATE", "Variable", "map_unit",
           "port_name", "read_description"]

# -------------------------------------------------------------------- names
_BAD = re.compile(r"[^A-Za-z0-9_]+")


def port_name(name: str) -> str:
    """A cosim name (port, parameter, block or diagram) for any FMU variable or model
    name: letters transliterated to ASCII, every other run of characters one ``_``
    (``'body.pos[1]'`` -> ``'body_pos_1'``, ``'Van der Pol oscillator'`` ->
    ``'Van_der_Pol_oscillator'``, ``'Übung'`` -> ``'Ubung'``)."""
    import unicodedata
    m = re.fullmatch(r"der\((.*)\)", name)
    s = f"der_{m.group(1)}" if m else name
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode("ascii")
    s = _BAD.sub("_", s).strip("_")
    if not s or s[0].isdigit():
        s = "v_" + s
    return s


# ------------------------------------------------------------------ reading
def _convert(text: Any, typ: str, shape: tuple) -> Any:
    """An attribute's text as the variable's Python value (see :class:`Variable`)."""
    if text is None:
        return None
    if typ in REAL_TYPES:
        conv: Any = float
    elif typ in INT_TYPES:
        conv = int
    elif typ == "Boolean":
        def conv(s: str) -> bool:
            low = str(s).strip().lower()
            if low not in ("true", "false", "1", "0"):
                raise ValueError(f"{s!r} is not a Boolean (true, false, 1 or 0)")
            return low in ("true", "1")
    elif typ == "Binary":
        def conv(s: str) -> bytes:
            h = str(s).strip()
            h = h[2:] if h[:2].lower() == "0x" else h
            try:
                return bytes.fromhex(h)
            except ValueError:
                raise ValueError(f"{s!r} is not hexadecimal bytes") from None
    else:
        return text
    if shape and typ != "Binary":
        vals = [conv(s) for s in str(text).split()]
        dtype = {"Boolean": bool, "UInt64": np.uint64}.get(
            typ, float if typ in REAL_TYPES else np.int64)
        arr = np.array(vals, dtype=dtype)
        if arr.size == 1:
            arr = np.full(shape, arr[0])
        return arr.reshape(shape)
    if isinstance(text, str) and len(text.split()) > 1 and typ != "Binary":
        text = text.split()[0]
    return conv(text)


def _safe_parse(xml_path: Path, label: str) -> Any:
    from lxml import etree
    if not xml_path.is_file():
        raise ModelDescriptionError(f"FMU '{label}': modelDescription.xml is missing",
                                    [Problem("FMI 2.0/3.0 section 2.2", "file missing")])
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             huge_tree=False)
    try:
        tree = etree.parse(str(xml_path), parser)
    except etree.XMLSyntaxError as exc:
        raise ModelDescriptionError(
            f"FMU '{label}': modelDescription.xml is not well-formed XML ({exc})",
            [Problem("XML 1.0 well-formedness", str(exc))]) from None
    if tree.docinfo.internalDTD is not None or "<!ENTITY" in (tree.docinfo.doctype or ""):
        raise ModelDescriptionError(
            f"FMU '{label}': modelDescription.xml declares a DTD; FMI does not use one and "
            "entities are refused for safety",
            [Problem("FMI XML schema (no DTD)", "DTD/entity declarations")])
    return tree


def _variable_lines(tree: Any) -> list[tuple[int, str]]:
    mv = tree.getroot().find("ModelVariables")
    if mv is None:
        return []
    return [(el.sourceline or 0, el.get("name")) for el in mv if el.get("name")]


def _schema_problems(tree: Any, major: int) -> list[Problem]:
    import os

    import fmpy
    from lxml import etree
    base = os.path.join(os.path.dirname(fmpy.__file__), "schema")
    xsd = (os.path.join(base, "fmi2", "fmi2ModelDescription.xsd") if major == 2
           else os.path.join(base, "fmi3", "fmi3ModelDescription.xsd"))
    schema = etree.XMLSchema(file=xsd)
    if schema.validate(tree):
        return []
    lines = _variable_lines(tree)
    out = []
    for e in schema.error_log:
        var = None
        for ln, name in lines:
            if ln <= e.line:
                var = name
            else:
                break
        if lines and e.line > lines[-1][0] + 60:
            var = None
        out.append(Problem(f"FMI {major}.0 XML schema", e.message, var, e.line, "warning"))
    return out


def read_description(root: str | Path, label: str = "", validate: str = "warn",
                     units: dict | None = None, port_names: dict | None = None) -> FMUInfo:
    """Read and check the model description of the FMU extracted in ``root``.

    Parameters
    ----------
    root : path
        Directory of the extracted FMU.
    label : str
        The FMU's name for messages (default: the directory name).
    validate : ``"warn"`` | ``"strict"`` | ``"none"``
        ``"warn"`` (default) loads what FMPy's ``read_model_description(validate=True)``
        reads, with one warning per broken rule and the structure the import derives
        (:mod:`fmus.description_rules`); ``"strict"`` turns every warning into an error;
        ``"none"`` skips the rules (as FMPy's ``validate=False``): the problems stay in
        :attr:`FMUInfo.problems`, one warning says so.  What fmpy cannot read, or the
        import cannot run right (a state derivative without its state), is refused
        whatever ``validate`` says.
    units : dict, optional
        ``{variable name: cosim unit}`` replacing the mapped units.
    port_names : dict, optional
        ``{variable name: port name}`` replacing the generated port names.
    """
    if validate not in VALIDATE:
        raise ValueError(f"validate must be 'warn', 'strict' or 'none', got {validate!r}")
    root = Path(root)
    label = label or root.name
    tree = _safe_parse(root / "modelDescription.xml", label)
    version = tree.getroot().get("fmiVersion") or ""
    if not (version == "2.0" or version.startswith("3.")):
        raise ModelDescriptionError(
            f"FMU '{label}': fmiVersion {version!r} is not supported (FMI 2.0 and 3.0 are)",
            [Problem("fmiVersion", f"unsupported version {version!r}")])
    major = int(version[0])
    problems = _schema_problems(tree, major)
    refs = reference_problems(tree, major)
    if refs:  # fmpy cannot read past these (or reads them wrongly)
        raise ModelDescriptionError(_summary(label, refs), refs)
    from fmpy.model_description import ValidationError, read_model_description
    try:
        md = read_model_description(str(root), validate=False)
    except ValidationError as exc:
        probs = [Problem("FMI model structure", str(p), skippable=False)
                 for p in exc.problems]
        raise ModelDescriptionError(_summary(label, probs), probs) from None
    except Exception as exc:  # noqa: BLE001 - fmpy raises bare Exceptions
        var, line = None, None
        m = re.search(r'[Vv]ariable "([^"]+)"(?: \(line (\d+)\))?', str(exc))
        if m:
            var, line = m.group(1), int(m.group(2)) if m.group(2) else None
        probs = [Problem(_rule_of(str(exc), major), str(exc), var, line, skippable=False)] + [
            p for p in problems if p.severity == "error"]
        raise ModelDescriptionError(_summary(label, probs), probs) from None
    info = _build_info(md, root, label, units or {}, port_names or {}, problems)
    if major == 3:
        _read_clocks(info, tree)
    for el in tree.getroot():
        if el.tag in ("ModelExchange", "CoSimulation", "ScheduledExecution"):
            info.interfaces[el.tag] = _caps(el)
    if major == 3:  # attributes fmpy does not read
        flagged = {el.get("name") for el in tree.getroot().iterfind("ModelVariables/*")
                   if el.get("intermediateUpdate") in ("true", "1")}
        for v in info.variables:
            v.intermediate_update = v.name in flagged
    check_rules(info, md, _omitted_variability(tree))
    if validate == "none":
        refused = [p for p in info.problems if p.severity == "error" and not p.skippable]
    else:
        refused = [p for p in info.problems if p.severity == "error"
                   or (validate == "strict" and p.severity == "warning")]
    if refused:
        raise ModelDescriptionError(_summary(label, refused, validate), refused)
    if validate == "none":  # the rules were not checked: say so (FMUFile warns once)
        for p in info.problems:
            if p.severity == "error":
                p.severity = "skipped"
    return info


VALIDATE = ("warn", "strict", "none")


def _omitted_variability(tree: Any) -> frozenset:
    """Names of the variables whose element has no ``variability`` attribute."""
    return frozenset(el.get("name") for el in tree.getroot().iterfind("ModelVariables/*")
                     if isinstance(el.tag, str) and el.get("variability") is None)


def _rule_of(msg: str, major: int) -> str:
    if "combination" in msg:
        return ("FMI causality/variability/initial combinations "
                + ("(FMI 2.0 section 2.2.7)" if major == 2 else "(FMI 3.0 section 2.4.7.4)"))
    if "declaredType" in msg:
        return "declaredType must name a TypeDefinitions entry"
    return "FMI model description"


def _summary(label: str, problems: list, validate: str = "warn") -> str:
    """The refusal: every problem, then what to do (an option only where it loads it)."""
    head = (f"FMU '{label}': modelDescription.xml does not validate "
            f"({len(problems)} problem{'s' if len(problems) != 1 else ''}):")
    body = "\n".join(f"  - {p}" for p in problems[:20])
    more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
    if not all(p.skippable for p in problems):
        hint = ("fix the FMU (its exporting tool): the import cannot read or run it as it is, "
                "whatever validate says")
    elif all(p.severity == "warning" for p in problems):
        hint = ("fix the FMU (its exporting tool), or load it with validate='warn' (the "
                "default; --validate warn): the import works around these rules")
    else:
        hint = ("fix the FMU (its exporting tool), or load it anyway with validate='none' "
                "(cosim fmu simulate --validate none), as FMPy's validate=False: the rules "
                "are not checked and the results are yours to judge")
    return f"{head}\n{body}{more}\n  {hint}"


def _caps(element: Any) -> dict:
    """Capability flags of an interface element, read from the XML (fmpy drops some FMI 3
    ones, e.g. ``providesDirectionalDerivatives``); FMI 3 spellings also under the FMI 2
    names, so one lookup serves both."""
    out: dict = {}
    for k, raw in element.attrib.items():
        if raw in ("true", "false"):
            val: Any = raw == "true"
        else:
            try:
                val = int(raw)
            except ValueError:
                try:
                    val = float(raw)
                except ValueError:
                    val = raw
        out[k] = val
        if k in _CAP_ALIASES:
            out[_CAP_ALIASES[k]] = val
    if element.tag == "ModelExchange":
        if "completedIntegratorStepNotNeeded" in out:  # FMI 2
            out["needsCompletedIntegratorStep"] = not out["completedIntegratorStepNotNeeded"]
        out.setdefault("needsCompletedIntegratorStep",
                       element.getparent().get("fmiVersion", "2.0") == "2.0")
    return out


def _read_clocks(info: FMUInfo, tree: Any) -> None:
    """FMI 3 clock attributes and ``clocks`` references, read from the XML (fmpy reads
    only some of them)."""
    els = {el.get("name"): el for el in tree.getroot().iterfind("ModelVariables/*")
           if isinstance(el.tag, str)}
    by_vr = {v.vr: v for v in info.variables}

    def num(el: Any, a: str, conv: Any) -> Any:
        raw = el.get(a)
        try:
            return conv(raw) if raw is not None else None
        except ValueError:
            info.problems.append(Problem("attribute values must parse as the variable's type",
                                         f"{a}={raw!r} is not a number", el.get("name"),
                                         el.sourceline))
            return None

    for v in info.variables:
        el = els.get(v.name)
        if el is None:
            continue
        if v.kind == "clock":
            v.clock = ClockInfo(
                interval_variability=el.get("intervalVariability") or "",
                interval=num(el, "intervalDecimal", float), shift=num(el, "shiftDecimal", float),
                supports_fraction=el.get("supportsFraction") in ("true", "1"),
                resolution=num(el, "resolution", int),
                interval_counter=num(el, "intervalCounter", int),
                shift_counter=num(el, "shiftCounter", int), priority=num(el, "priority", int),
                can_be_deactivated=el.get("canBeDeactivated") in ("true", "1"))
        names = []
        for tok in (el.get("clocks") or "").split():
            c = by_vr.get(int(tok))  # existence checked by reference_problems
            if c is not None and c.kind != "clock":
                info.problems.append(Problem(  # FMPy reads past it
                    "clocks names Clock variables (FMI 3.0 section 2.4.7.5)",
                    f"clocks refers to {c.name!r}, a {c.type} variable", v.name, v.line,
                    "warning", derived=f"ignores the reference to {c.name!r}"))
            elif c is not None:
                names.append(c.name)
        v.clocks = tuple(names)


def _build_info(md: Any, root: Path, label: str, units: dict, port_names: dict,
                problems: list) -> FMUInfo:
    info = FMUInfo(path=Path(label), fmi_version=md.fmiVersion, model_name=md.modelName or "",
                   token=md.guid or "", description=md.description or "",
                   author=md.author or "", version=md.version or "",
                   copyright=md.copyright or "", license=md.license or "",
                   generation_tool=md.generationTool or "",
                   generation_date=md.generationDateAndTime or "", _md=md)
    info.problems = problems
    de = md.defaultExperiment
    if de is not None:
        info.default_experiment = {k: float(getattr(de, k)) for k in
                                   ("startTime", "stopTime", "tolerance", "stepSize")
                                   if getattr(de, k) is not None}
    unit_defs = {u.name: u for u in md.unitDefinitions}
    mapped: dict = {}
    seen_ports: dict[str, str] = {}
    conv_map: dict = {}
    for mv in md.modelVariables:
        if getattr(mv, "alias", None) is not None:
            continue  # FMI 3 aliases: same value reference as their original
        typ = mv.type
        dt = mv.declaredType
        fmi_unit = mv.unit or (dt.unit if dt is not None else None)
        shape = tuple(mv.shape or ())

        def attr(a: str, mv: Any = mv, dt: Any = dt) -> Any:
            val = getattr(mv, a, None)
            if val is None and dt is not None:
                val = getattr(dt, a, None)
            return val

        v = Variable(name=mv.name, vr=int(mv.valueReference), type=typ,
                     causality=mv.causality, variability=mv.variability, initial=mv.initial,
                     description=mv.description or "", shape=shape, line=mv.sourceline,
                     fmi_unit=fmi_unit, display_unit=mv.displayUnit,
                     intermediate_update=bool(getattr(mv, "intermediateUpdate", False)))
        for a, text in (("start", mv.start), ("min", attr("min")), ("max", attr("max")),
                        ("nominal", attr("nominal"))):
            if a != "start" and not (typ in REAL_TYPES or (typ in INT_TYPES
                                                           and a != "nominal")):
                continue
            try:
                setattr(v, a, _convert(text, typ, shape if a == "start" else ()))
            except (TypeError, ValueError, OverflowError) as exc:
                v.bad_start = v.bad_start or a == "start"
                # one problem per defect: the schema's message on it is dropped
                problems[:] = [p for p in problems if not (
                    p.variable == mv.name and f"attribute '{a}'" in p.message)]
                # FMPy reads past it (it parses values when it sets them)
                problems.append(Problem(
                    "attribute values must parse as the variable's type ("
                    + ("FMI 2.0 section 2.2.7)" if md.fmiVersion == "2.0"
                       else "FMI 3.0 section 2.4.7)"),
                    f"{a}={text!r} is not a {typ} value ({exc})", mv.name, mv.sourceline,
                    "warning", derived=f"ignores this {a} value" + (
                        " (the FMU's own start applies)" if a == "start" else "")))
        if fmi_unit is not None and typ in REAL_TYPES:
            if mv.name in units:
                v.unit = units[mv.name]
                parse_unit(v.unit)  # raises UnitError for a bad override
            else:
                if fmi_unit not in conv_map:
                    u = unit_defs.get(fmi_unit)
                    if u is None:
                        problems.append(Problem(
                            "units must be defined in UnitDefinitions (" + (
                                "FMI 2.0 section 2.2.2)" if md.fmiVersion == "2.0"
                                else "FMI 3.0 section 2.4.2)"),
                            f"unit {fmi_unit!r} is not defined in UnitDefinitions", mv.name,
                            mv.sourceline, "warning"))
                    conv_map[fmi_unit] = map_unit(fmi_unit, u.baseUnit if u else None)
                v.unit, note = conv_map[fmi_unit]
                if note and fmi_unit not in mapped:
                    info.notes.append(note)
                    mapped[fmi_unit] = note
        elif mv.name in units:
            v.unit = units[mv.name]
        v.port = port_names.get(mv.name) or port_name(mv.name)
        if v.causality in ("input", "output", "parameter", "structuralParameter"):
            other = seen_ports.get(v.port)
            if other is not None and other != mv.name:  # same name: a rule problem below
                from .errors import FMUConfigError
                raise FMUConfigError(
                    f"FMU '{label}': variables {other!r} and {mv.name!r} both map to the port "
                    f"name {v.port!r}; give port_names={{{mv.name!r}: '...'}}")
            seen_ports[v.port] = mv.name
        info.variables.append(v)
    by_vr_obj = {id(mv): v for mv, v in zip(
        [m for m in md.modelVariables if getattr(m, "alias", None) is None], info.variables)}
    for mv in md.modelVariables:
        d = mv.derivative if not isinstance(mv.derivative, str) else None
        if d is not None and id(mv) in by_vr_obj and id(d) in by_vr_obj:
            by_vr_obj[id(mv)].derivative_of = by_vr_obj[id(d)]
    for unk in md.derivatives:
        dv = by_vr_obj.get(id(unk.variable))
        if dv is None:
            continue
        info.derivatives.append(dv)
        if dv.derivative_of is not None:
            info.states.append(dv.derivative_of)
    info.n_event_indicators = int(md.numberOfEventIndicators or 0)
    inputs = {id(m) for m in md.modelVariables if m.causality == "input"}
    names = {id(m): m.name for m in md.modelVariables}
    for unk in md.outputs:
        if unk.variable is None:
            continue
        if unk.dependencies is None:
            info.feedthrough[unk.variable.name] = None  # all inputs (FMI default)
        else:
            info.feedthrough[unk.variable.name] = {names[id(d)] for d in unk.dependencies
                                                   if id(d) in inputs}
    info.initial_feedthrough = _initial_feedthrough(md, inputs, names)
    return info


def _initial_feedthrough(md: Any, inputs: set, names: dict) -> dict:
    """``{output: inputs it depends on in Initialization Mode, or None for all}``.

    From ``ModelStructure/InitialUnknowns`` (FMI 2.0 section 2.2.8) / ``InitialUnknown``
    (FMI 3.0 section 2.4.8): a listed output depends on the inputs its ``dependencies``
    name (all knowns when the attribute is absent); an output not listed with
    ``initial="exact"`` (explicit, or a constant's default) has its start value, which no
    input changes.  An output the list should hold but misses (``initial`` calculated or
    approx: pythonfmu leaves them out), and every output of an FMU that lists no initial
    unknowns at all, is taken to depend on every input (the master then orders or iterates
    with it rather than trusting a start value an input may change).
    """
    unknowns = [u for u in getattr(md, "initialUnknowns", None) or []
                if u.variable is not None]
    outs = [m for m in md.modelVariables if m.causality == "output"]
    if not unknowns:
        return {o.name: None for o in outs}
    deps: dict = {o.name: set() if _initial_exact(o) else None for o in outs}
    for unk in unknowns:
        name = unk.variable.name
        if name not in deps:
            continue
        deps[name] = None if unk.dependencies is None else {
            names[id(d)] for d in unk.dependencies if id(d) in inputs}
    return deps


def _initial_exact(mv: Any) -> bool:
    """An output's ``initial`` is ``"exact"`` (given, or the default of a constant output:
    FMI 2.0 section 2.2.7, FMI 3.0 section 2.4.7.4; other outputs default to calculated)."""
    initial = getattr(mv, "initial", None)
    return initial == "exact" or (initial is None and mv.variability == "constant")
