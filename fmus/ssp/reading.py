"""Reading an SSD and its SSV parameter sets into an :class:`~fmus.ssp.SSPSystem`.

The XML is parsed with a hardened parser (no DTD, no entities, no network); every
unsupported feature is refused with an :class:`~fmus.ssp.SSPError` naming the file,
line and element (see the limitations in :mod:`fmus.ssp`).
"""

from __future__ import annotations

import itertools
import math
import os
import warnings
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from cosim.block import did_you_mean
from cosim.errors import UnitError
from cosim.units import from_fmi

from ..archive import DEFAULT_LIMITS, ArchiveLimits
from ..errors import FMUWarning
from .archive import extract_ssp
from .checking import check_against_fmus, unit_of
from .model import (
    ANNOTATION_TYPE,
    BASE,
    COSIM_NS,
    FMU_TYPE,
    NS,
    PSET_TYPE,
    SSD_NAME,
    SSPComponent,
    SSPConnection,
    SSPConnector,
    SSPError,
    SSPSystem,
    dotted,
    q,
)

_TYPES = ("Real", "Integer", "Boolean", "String", "Enumeration", "Binary")


class _Reader:
    """One SSD being read: the file label for messages and the resolved resources."""

    def __init__(self, label: str, root: Path) -> None:
        self.label = label
        self.root = root

    def fail(self, el: Any, what: str, hint: str = "", file: str = SSD_NAME) -> SSPError:
        line = f" line {el.sourceline}" if el is not None and el.sourceline else ""
        if hint:
            what = f"{what.rstrip('.')}; {hint}"
        return SSPError(f"SSP '{self.label}': {file}{line}: {what}")

    def parse(self, path: Path, file: str) -> Any:
        from lxml import etree
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                                 huge_tree=False)
        try:
            tree = etree.parse(str(path), parser)
        except etree.XMLSyntaxError as exc:
            raise SSPError(f"SSP '{self.label}': {file} is not well-formed XML ({exc})") \
                from None
        except OSError as exc:
            raise SSPError(f"SSP '{self.label}': {file} cannot be read ({exc})") from None
        if tree.docinfo.internalDTD is not None or "<!ENTITY" in (tree.docinfo.doctype or ""):
            raise SSPError(f"SSP '{self.label}': {file} declares a DTD; SSP does not use one "
                           "and entities are refused for safety")
        return tree.getroot()

    def resource(self, el: Any, uri: str, what: str) -> tuple[Path, str]:
        """The file a relative URI in the SSD names (inside the SSP), and its relative path."""
        parts = urlsplit(uri)
        if parts.scheme and len(parts.scheme) > 1 or parts.netloc:
            raise self.fail(el, f"{what} {uri!r} is not a relative URI",
                            "sources must be files inside the SSP, e.g. 'resources/x.fmu'")
        if parts.fragment:
            raise self.fail(el, f"{what} {uri!r} selects a fragment (an SSD inside another "
                                "SSP): nested SSPs are not supported")
        rel = unquote(parts.path).replace("\\", "/")
        pure = PurePosixPath(rel)
        if pure.is_absolute() or ".." in pure.parts or (len(rel) > 1 and rel[1] == ":"):
            raise self.fail(el, f"{what} {uri!r} points outside the SSP",
                            "sources must be relative paths inside the SSP without '..'")
        path = self.root.joinpath(*pure.parts)
        real_root = os.path.realpath(self.root)
        if os.path.commonpath([real_root, os.path.realpath(path)]) != real_root:
            raise self.fail(el, f"{what} {uri!r} resolves outside the SSP")
        if not path.is_file():
            have = sorted(p.relative_to(self.root).as_posix()
                          for p in itertools.islice(self.root.rglob("*"), 500) if p.is_file())
            raise self.fail(el, f"{what} {uri!r} is missing from the SSP",
                            "add the file to the archive or fix the source; the SSP holds: "
                            + (", ".join(have[:12]) or "nothing"))
        return path, pure.as_posix()


def _units(reader: _Reader, parent: Any, file: str) -> dict:
    out = {}
    for u in parent.iterfind("ssc:Unit", NS):
        name = u.get("name")
        bu = u.find("ssc:BaseUnit", NS)
        if not name or bu is None:
            raise reader.fail(u, "a Unit needs a name and a BaseUnit", file=file)
        try:
            out[name] = from_fmi(**{k: int(bu.get(k, 0)) for k in BASE},
                                 factor=float(bu.get("factor", 1.0)),
                                 offset=float(bu.get("offset", 0.0)), name=name)
        except (ValueError, UnitError) as exc:
            raise reader.fail(u, f"unit {name!r} has a bad BaseUnit ({exc})", file=file) \
                from None
    return out


def _double(text: str | None) -> float:
    """An ``xs:double`` (``INF``, ``-INF`` and ``NaN`` included)."""
    s = (text or "").strip()
    special = {"INF": math.inf, "-INF": -math.inf, "NaN": math.nan}
    return special[s] if s in special else float(s)


def _type_of(el: Any) -> tuple[str | None, Any]:
    for t in _TYPES:
        for prefix in ("ssc", "ssv"):
            child = el.find(f"{prefix}:{t}", NS)
            if child is not None:
                return t, child
    return None, None


def _connectors(reader: _Reader, el: Any, owner: str) -> list:
    out, seen = [], set()
    for c in el.iterfind("ssd:Connectors/ssd:Connector", NS):
        name, kind = c.get("name"), c.get("kind")
        if not name or kind not in ("input", "output", "parameter", "calculatedParameter",
                                    "inout"):
            raise reader.fail(c, f"{owner}: connector {name!r} needs a name and a kind of "
                                 f"input, output, parameter, calculatedParameter or inout "
                                 f"(got {kind!r})")
        if name in seen:
            raise reader.fail(c, f"{owner}: connector {name!r} is declared twice")
        seen.add(name)
        typ, t_el = _type_of(c)
        out.append(SSPConnector(name, kind, typ, t_el.get("unit") if t_el is not None else None))
    return out


def _parameter_set(reader: _Reader, pset: Any, file: str, ssd_units: dict) -> list:
    """``[(name, type, value, unit, element)]`` of an ``ssv:ParameterSet``."""
    from lxml import etree
    if pset.tag != q("ssv", "ParameterSet"):
        raise reader.fail(pset, f"expected an ssv:ParameterSet, found {etree.QName(pset).localname}"
                                f" in namespace {etree.QName(pset).namespace!r}", file=file)
    units = dict(ssd_units)
    u_el = pset.find("ssv:Units", NS)
    if u_el is not None:
        units.update(_units(reader, u_el, file))
    out = []
    for p in pset.iterfind("ssv:Parameters/ssv:Parameter", NS):
        name = p.get("name")
        typ, v_el = _type_of(p)
        if not name or typ is None:
            raise reader.fail(p, f"parameter {name!r} needs a name and a typed value", file=file)
        if typ in ("Enumeration", "Binary"):
            raise reader.fail(p, f"parameter {name!r}: {typ} values are not supported",
                              "give the value as an Integer (enumeration) or set it in the FMU",
                              file=file)
        raw = v_el.get("value")
        if raw is None:
            raise reader.fail(v_el, f"parameter {name!r} has no value attribute", file=file)
        try:
            if typ == "Real":
                value: Any = _double(raw)
            elif typ == "Integer":
                value = int(raw.strip())
            elif typ == "Boolean":
                if raw.strip() not in ("true", "false", "1", "0"):
                    raise ValueError("not true/false/1/0")
                value = raw.strip() in ("true", "1")
            else:
                value = raw
        except ValueError as exc:
            raise reader.fail(v_el, f"parameter {name!r}: value {raw!r} is not a valid {typ} "
                                    f"({exc})", file=file) from None
        unit = (v_el.get("unit"), unit_of(v_el.get("unit"), units)) \
            if typ == "Real" and v_el.get("unit") else None
        out.append((name, typ, value, unit, p))
    return out


def _bindings(reader: _Reader, el: Any, owner: str, ssd_units: dict) -> list:
    """The ``(name, type, value, unit, element, file)`` of an element's bindings, in order."""
    out = []
    for b in el.iterfind("ssd:ParameterBindings/ssd:ParameterBinding", NS):
        typ = b.get("type", PSET_TYPE)
        if typ != PSET_TYPE:
            raise reader.fail(b, f"{owner}: parameter binding of type {typ!r} is not supported "
                                 f"(only {PSET_TYPE})")
        if b.find("ssd:ParameterMapping", NS) is not None:
            raise reader.fail(b, f"{owner}: parameter mappings (ParameterMapping/.ssm) are not "
                                 "supported", "apply the mapping to the parameter names and "
                                 "values in the parameter set")
        if b.get("sourceBase", "SSD") != "SSD":
            raise reader.fail(b, f"{owner}: parameter binding with sourceBase="
                                 f"{b.get('sourceBase')!r} is not supported",
                              "put the .ssv file into the SSP and reference it from the SSD")
        prefix = b.get("prefix", "")
        source = b.get("source")
        inline = b.find("ssd:ParameterValues", NS)
        if source and inline is not None:
            raise reader.fail(b, f"{owner}: a parameter binding has both a source and inline "
                                 "ParameterValues; SSP allows one of them")
        if source:
            path, rel = reader.resource(b, source, f"{owner}: parameter binding source")
            pset, file = reader.parse(path, rel), rel
        elif inline is not None and len(inline):
            pset, file = inline[0], SSD_NAME
        else:
            continue
        for name, ptyp, value, unit, p in _parameter_set(reader, pset, file, ssd_units):
            out.append((prefix + name, ptyp, value, unit, p, file))
    return out


def _transform(reader: _Reader, c: Any, label: str) -> tuple | None:
    lt = c.find("ssc:LinearTransformation", NS)
    for other in ("BooleanMappingTransformation", "IntegerMappingTransformation",
                  "EnumerationMappingTransformation"):
        if c.find(f"ssc:{other}", NS) is not None:
            raise reader.fail(c, f"connection {label}: {other} is not supported")
    if lt is None:
        if c.find("ssd:LinearTransformation", NS) is not None:
            raise reader.fail(c, f"connection {label}: LinearTransformation is in the ssd "
                                 "namespace; SSP 1.0 puts it in the ssc namespace "
                                 f"({NS['ssc']})")
        return None
    try:
        return (_double(lt.get("factor", "1.0")), _double(lt.get("offset", "0.0")))
    except ValueError as exc:
        raise reader.fail(lt, f"connection {label}: bad LinearTransformation ({exc})") from None


def read_ssp(path: str | os.PathLike, *, limits: ArchiveLimits | None = None,
             load_fmus: bool = True) -> SSPSystem:
    """Read and check an SSP: an ``.ssp`` archive, a directory or a ``SystemStructure.ssd``.

    Parameters
    ----------
    path : path-like
    limits : ArchiveLimits, optional
        Extraction limits for the ``.ssp`` (and its FMUs).
    load_fmus : bool
        Load every FMU and check connectors, connections and bound values against its
        model description (default).  ``False`` reads the SSD only.
    """
    path = Path(path)
    limits = limits or DEFAULT_LIMITS
    archive = None
    if path.is_dir():
        root = path
        if not (root / SSD_NAME).is_file():
            raise SSPError(f"SSP '{path}': directory has no {SSD_NAME}; give the .ssp "
                           "file or the directory it was extracted to")
        ssd_file = root / SSD_NAME
    elif not path.exists():
        raise SSPError(f"SSP '{path}': no such file")
    elif path.suffix.lower() == ".ssd":
        root, ssd_file = path.parent, path
    else:
        archive = extract_ssp(path, limits)
        root, ssd_file = archive.root, archive.root / SSD_NAME
    reader = _Reader(path.name, root)
    doc = reader.parse(ssd_file, ssd_file.name)
    if doc.tag != q("ssd", "SystemStructureDescription"):
        raise reader.fail(doc, f"the root element is {doc.tag!r}, not ssd:"
                               f"SystemStructureDescription in namespace {NS['ssd']}")
    version = doc.get("version") or ""
    if not version.startswith("1."):
        raise reader.fail(doc, f"SSP version {version!r} is not supported (1.0 is)")
    units = {}
    u_el = doc.find("ssd:Units", NS)
    if u_el is not None:
        units = _units(reader, u_el, SSD_NAME)
    system = SSPSystem(name=doc.get("name") or "", units=units, source=path, root=root,
                       _archive=archive)
    exp = doc.find("ssd:DefaultExperiment", NS)
    if exp is not None:
        try:
            system.start = _double(exp.get("startTime")) if exp.get("startTime") else None
            system.stop = _double(exp.get("stopTime")) if exp.get("stopTime") else None
        except ValueError as exc:
            raise reader.fail(exp, f"DefaultExperiment: {exc}") from None
    for ann in doc.iterfind("ssd:Annotations/ssc:Annotation", NS):
        m = ann.find(f"{{{COSIM_NS}}}Master")
        if ann.get("type") == ANNOTATION_TYPE and m is not None and m.get("stepSize"):
            try:
                system.step_s = _double(m.get("stepSize"))
            except ValueError:
                raise reader.fail(m, f"bad stepSize {m.get('stepSize')!r}") from None
    sys_el = doc.find("ssd:System", NS)
    if sys_el is None:
        raise reader.fail(doc, "no <ssd:System> element")
    system.name = sys_el.get("name") or system.name
    system.description = sys_el.get("description") or ""
    _read_system(reader, sys_el, system)
    if load_fmus:
        check_against_fmus(reader, system, limits)
    return system


def _read_system(reader: _Reader, sys_el: Any, system: SSPSystem) -> None:
    from lxml import etree
    sname = f"system '{system.name}'"
    system.connectors = _connectors(reader, sys_el, sname)
    for c in system.connectors:
        if c.kind not in ("input", "output"):
            raise reader.fail(sys_el, f"{sname}: connector {c.name!r} of kind {c.kind!r} is not "
                                      "supported (system connectors must be inputs or outputs)")
    if sys_el.find("ssd:SignalDictionaries", NS) is not None:
        raise reader.fail(sys_el.find("ssd:SignalDictionaries", NS),
                          f"{sname}: signal dictionaries are not supported",
                          "connect the components directly")
    for el in sys_el.iterfind("ssd:Elements/*", NS):
        tag = etree.QName(el).localname
        name = el.get("name") or ""
        if tag == "System":
            raise reader.fail(el, f"{sname}: nested system '{name}' is not supported",
                              "flatten it into the top-level system")
        if tag != "Component":
            raise reader.fail(el, f"{sname}: element '{name}' ({tag}) is not supported; only "
                                  "FMU components are")
        _read_component(reader, el, system)
    names = list(system.components)
    for c in sys_el.iterfind("ssd:Connections/ssd:Connection", NS):
        start = (c.get("startElement") or None, c.get("startConnector") or "")
        end = (c.get("endElement") or None, c.get("endConnector") or "")
        label = f"{dotted(start)} -> {dotted(end)}"
        for elem, conn in (start, end):
            if not conn:
                raise reader.fail(c, f"connection {label}: startConnector and endConnector are "
                                     "required")
            if elem is not None and elem not in names:
                raise reader.fail(c, f"connection {label}: unknown component {elem!r}; "
                                  + did_you_mean(elem, names))
            owner = system.components[elem] if elem is not None else system
            decl = owner.connector(conn)
            if decl is None:
                where = f"component '{elem}'" if elem else sname
                raise reader.fail(c, f"connection {label}: {where} has no connector {conn!r}; "
                                  + did_you_mean(conn, [k.name for k in owner.connectors]),
                                  "declare it in the element's <ssd:Connectors>")
        sk = (system.components[start[0]] if start[0] else system).connector(start[1]).kind
        ek = (system.components[end[0]] if end[0] else system).connector(end[1]).kind
        # data flows from a component output or a system input to a component input or
        # a system output
        ok_start = (sk == "output") if start[0] else (sk == "input")
        ok_end = (ek == "input") if end[0] else (ek == "output")
        if not (ok_start and ok_end):
            if "parameter" in (sk, ek) or "calculatedParameter" in (sk, ek):
                raise reader.fail(c, f"connection {label}: connections of parameter connectors "
                                     "(parameter propagation) are not supported",
                                  "bind the value with a ParameterBinding")
            if "inout" in (sk, ek):
                raise reader.fail(c, f"connection {label}: inout connectors are not supported")
            raise reader.fail(c, f"connection {label}: data must flow from "
                                 f"{'an output' if start[0] else 'a system input'} to "
                                 f"{'an input' if end[0] else 'a system output'}, but the start "
                                 f"is a{'n' if sk[0] in 'aeiou' else ''} {sk} and the end a"
                                 f"{'n' if ek[0] in 'aeiou' else ''} {ek}",
                              "swap startElement/startConnector and endElement/endConnector"
                              if ok_start is False and ok_end is False else "")
        if start[0] is None and end[0] is None:
            raise reader.fail(c, f"connection {label}: a system input wired straight to a system "
                                 "output is not supported")
        suppress = (c.get("suppressUnitConversion") or "false").strip() in ("true", "1")
        system.connections.append(SSPConnection(start, end, _transform(reader, c, label),
                                                suppress))
    ends: dict = {}
    for conn in system.connections:
        if conn.end in ends:
            raise SSPError(f"SSP '{reader.label}': connector "
                           f"{dotted(conn.end)} is the end of two connections "
                           f"({ends[conn.end]} and {conn}); an input takes one source")
        ends[conn.end] = conn
    # system-level bindings win over component-level ones (SSP precedence)
    ignored = []
    for name, _typ, value, unit, p, file in _bindings(reader, sys_el, sname, system.units):
        decl = system.connector(name)
        if decl is not None and decl.kind == "input":
            system._bound.append((name, _typ, value, unit, p, file))
            continue
        comp = max((n for n in system.components if name.startswith(n + ".")), key=len,
                   default=None)
        if comp is None:
            ignored.append(name)
            continue
        system.components[comp].bound.append((name[len(comp) + 1:], _typ, value, unit, p, file))
    for comp in system.components.values():  # raw values; checked against the FMUs later
        comp.parameters = {e[0]: e[2] for e in comp.bound}
    system.inputs = {e[0]: e[2] for e in system._bound}
    if ignored:
        warnings.warn(f"SSP '{reader.label}': {sname}: parameter binding names "
                      f"{', '.join(ignored[:10])} match no component variable or system input "
                      "and are ignored (SSP rule)", FMUWarning, stacklevel=3)


def _read_component(reader: _Reader, el: Any, system: SSPSystem) -> None:
    name = el.get("name") or ""
    owner = f"component '{name}'"
    if not name:
        raise reader.fail(el, "a Component needs a name")
    if name in system.components:
        raise reader.fail(el, f"{owner} is declared twice")
    if "." in name:
        raise reader.fail(el, f"{owner}: the name contains '.', which the co-simulation master "
                              "uses to separate subsystem and port", "rename the component")
    typ = el.get("type", FMU_TYPE)
    if typ != FMU_TYPE:
        raise reader.fail(el, f"{owner}: component type {typ!r} is not supported (only FMUs, "
                              f"{FMU_TYPE}); nested SSPs/SSDs must be flattened first")
    impl = el.get("implementation", "any")
    if impl == "ModelExchange":
        raise reader.fail(el, f"{owner}: implementation='ModelExchange' is not supported; SSP "
                              "components run through Co-Simulation",
                          "use implementation='CoSimulation' or 'any' with an FMU that has CS, "
                          "or import the FMU with load_fmu into a diagram")
    source = el.get("source")
    if not source:
        raise reader.fail(el, f"{owner} has no source attribute")
    path, _rel = reader.resource(el, source, f"{owner}: FMU resource")
    comp = SSPComponent(name=name, source=source, path=path, implementation=impl,
                        connectors=_connectors(reader, el, owner))
    comp.bound.extend(_bindings(reader, el, owner, system.units))
    system.components[name] = comp

