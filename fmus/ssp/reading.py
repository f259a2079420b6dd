"""Reading an SSD (and the SSV/SSM files it references) into an :class:`~fmus.ssp.SSPSystem`.

The XML is parsed with a hardened parser (no DTD, no entities, no network).  The SSD is
read into a tree of systems (:class:`Node`) first; :mod:`~fmus.ssp.flatten` then
flattens it, :mod:`~fmus.ssp.checking` checks it against the FMUs.  Every unsupported
feature is refused with an :class:`~fmus.ssp.SSPError` naming the file, line and
element (see the limitations in :mod:`fmus.ssp`); what is read past is a note.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from ..archive import DEFAULT_LIMITS, ArchiveLimits
from .annotations import component_solver, cosim_settings, experiment_notes, system_settings
from .archive import extract_ssp
from .checking import check_components, check_system
from .flatten import assign_units, components, flatten, master_settings
from .model import (
    FMU_TYPE,
    KIND_OF_TYPE,
    NS,
    SSD_NAME,
    SSD_TYPE,
    SSPComponent,
    SSPConnector,
    SSPError,
    SSPSystem,
    q,
)
from .tree import Node, Raw
from .values import bindings, boolean, double, transformation, units_of, value_element

log = logging.getLogger("fmus.ssp")

#: connector kinds of SSP 1.0 and 2.0
KINDS = ("input", "output", "parameter", "calculatedParameter", "structuralParameter",
         "constant", "local", "inout", "unspecified")


class _Reader:
    """One SSP being read: labels for messages, the resolved resources and the notes."""

    def __init__(self, label: str, root: Path) -> None:
        self.label = label
        self.root = root
        self.file = SSD_NAME          # the SSD file being read (messages, inline content)
        self.base = PurePosixPath()   # its folder inside the SSP (relative URIs)
        self.notes: list[str] = []
        self.comp_info: dict = {}     # {flat component name: (Node, element, solver ref)}
        self.origins: dict = {}       # raw connections by index; then flattened ones' chains

    def fail(self, el: Any, what: str, hint: str = "", file: str | None = None) -> SSPError:
        line = f" line {el.sourceline}" if el is not None and el.sourceline else ""
        if hint:
            what = f"{what.rstrip('.')}; {hint}"
        return SSPError(f"SSP '{self.label}': {file or self.file}{line}: {what}")

    def note(self, text: str) -> None:
        self.notes.append(text)
        log.info("SSP '%s': %s", self.label, text)

    @contextlib.contextmanager
    def reading(self, rel: str) -> Any:
        """Read the SSD at ``rel`` (inside the SSP): messages and relative URIs follow it."""
        old = self.file, self.base
        self.file, self.base = rel, PurePosixPath(rel).parent
        try:
            yield
        finally:
            self.file, self.base = old

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
        """The file a relative URI names (inside the SSP, relative to the current SSD)."""
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
        pure = self.base / pure
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
        model description (default).  ``False`` reads the SSD only (bound values stay as
        written, units of connections from the connectors).

    Returns
    -------
    SSPSystem
        Flattened: nested systems' components are ``"system/component"``; what was read
        past is in ``notes``.
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
    reader.file = ssd_file.name
    doc = reader.parse(ssd_file, ssd_file.name)
    version = _check_root(reader, doc)
    units = {}
    u_el = doc.find("ssd:Units", NS)
    if u_el is not None:
        units = units_of(reader, u_el, reader.file)
    _enumerations(reader, doc)
    system = SSPSystem(name=doc.get("name") or "", units=units, source=path, root=root,
                       _archive=archive, version=version)
    exp = doc.find("ssd:DefaultExperiment", NS)
    if exp is not None:
        try:
            system.start = double(exp.get("startTime")) if exp.get("startTime") else None
            system.stop = double(exp.get("stopTime")) if exp.get("stopTime") else None
        except ValueError as exc:
            raise reader.fail(exp, f"DefaultExperiment: {exc}") from None
        experiment_notes(reader, exp)
    cosim = cosim_settings(reader, doc)
    sys_el = doc.find("ssd:System", NS)
    if sys_el is None:
        raise reader.fail(doc, "no <ssd:System> element")
    system.name = sys_el.get("name") or system.name
    system.description = sys_el.get("description") or ""
    top = read_system(reader, sys_el, (), units)
    if load_fmus:
        check_components(reader, components(top), limits)
    flatten(reader, top, system)
    assign_units(reader, top, system, cosim)
    master_settings(reader, top, system, cosim)
    if load_fmus:
        check_system(reader, system)
    system.notes = reader.notes
    return system


def _check_root(reader: _Reader, doc: Any) -> str:
    if doc.tag != q("ssd", "SystemStructureDescription"):
        raise reader.fail(doc, f"the root element is {doc.tag!r}, not ssd:"
                               f"SystemStructureDescription in namespace {NS['ssd']}")
    version = (doc.get("version") or "").strip()
    if version not in ("1.0", "2.0"):
        raise reader.fail(doc, f"SSP version {version!r} is not supported (1.0 and 2.0 are)")
    return version


def _enumerations(reader: _Reader, doc: Any) -> None:
    if doc.find("ssd:Enumerations", NS) is not None:
        reader.note(f"{reader.file} line {doc.find('ssd:Enumerations', NS).sourceline}: "
                    "Enumerations are not read; enumeration values are matched against the "
                    "FMUs' own enumeration types")


def _connectors(reader: _Reader, el: Any, owner: str) -> list:
    out, seen = [], set()
    for c in el.iterfind("ssd:Connectors/ssd:Connector", NS):
        name, kind = c.get("name"), c.get("kind")
        if not name or kind not in KINDS:
            raise reader.fail(c, f"{owner}: connector {name!r} needs a name and a kind of "
                                 f"{', '.join(KINDS)} (got {kind!r})")
        if name in seen:
            raise reader.fail(c, f"{owner}: connector {name!r} is declared twice")
        seen.add(name)
        if c.find("ssc:Dimension", NS) is not None:
            raise reader.fail(c, f"{owner}: connector {name!r} is an array (ssc:Dimension); "
                                 "array connectors are not supported")
        typ, t_el = value_element(c)
        if typ is not None and t_el.tag.startswith(f"{{{NS['ssv']}}}"):
            typ = None
        unit = t_el.get("unit") if typ is not None and KIND_OF_TYPE[typ] == "real" else None
        out.append(SSPConnector(name, kind, typ, unit, (reader.file, c.sourceline)))
    return out


def _check_name(reader: _Reader, el: Any, name: str, what: str, owner: str) -> None:
    if not name:
        raise reader.fail(el, f"{owner}: a {what} needs a name")
    if "." in name:
        raise reader.fail(el, f"{owner}: the {what} name {name!r} contains '.', which separates "
                              "an element from its variables in SSP names (and a subsystem "
                              "from its port in the co-simulation master)", f"rename the {what}")


def read_system(reader: _Reader, sys_el: Any, path: tuple, units: dict) -> Node:
    """A ``ssd:System`` and everything in it, as a :class:`Node` tree."""
    from lxml import etree
    node = Node(sys_el.get("name") or "", path, sys_el, reader.file, units=units)
    where = node.label()
    node.connectors = _connectors(reader, sys_el, where)
    node.settings = system_settings(reader, sys_el, where)
    for extra in ("SignalDictionaries",):
        el = sys_el.find(f"ssd:{extra}", NS)
        if el is not None:
            raise reader.fail(el, f"{where}: signal dictionaries are not supported",
                              "connect the components directly")
    for el in sys_el.iterfind("ssd:Elements/*", NS):
        tag = etree.QName(el).localname if isinstance(el.tag, str) else ""
        if not tag:
            continue
        name = el.get("name") or ""
        _check_name(reader, el, name, "system" if tag == "System" else "component", where)
        if name in node.elements:
            raise reader.fail(el, f"{where}: element name {name!r} is used twice")
        if tag == "System":
            node.elements[name] = read_system(reader, el, path + (name,), units)
        elif tag == "Component":
            node.elements[name] = _read_component(reader, el, node, name)
        else:
            raise reader.fail(el, f"{where}: element '{name}' ({tag}) is not supported; "
                                  "components (FMUs, SSDs) and systems are",
                              "connect the components directly" if "Signal" in tag else "")
    for c in sys_el.iterfind("ssd:Connections/ssd:Connection", NS):
        start = (c.get("startElement") or None, c.get("startConnector") or "")
        end = (c.get("endElement") or None, c.get("endConnector") or "")
        raw = Raw(start, end, None, False, c, reader.file, len(reader.origins))
        reader.origins[len(reader.origins)] = raw
        if not start[1] or not end[1]:
            raise reader.fail(c, f"connection {raw.label()}: startConnector and endConnector "
                                 "are required")
        for a in ("startIndices", "endIndices"):
            if c.get(a):
                raise reader.fail(c, f"connection {raw.label()}: {a} (array elements) are not "
                                     "supported")
        try:
            raw.suppress = boolean(c.get("suppressUnitConversion") or "false")
        except ValueError as exc:
            raise reader.fail(c, f"connection {raw.label()}: suppressUnitConversion {exc}") \
                from None
        raw.transform = transformation(reader, c, f"connection {raw.label()}", reader.file)
        if raw.transform is not None and raw.transform[0] != "linear":
            tag = {"bool": "Boolean", "int": "Integer", "enum": "Enumeration"}[raw.transform[0]]
            raise reader.fail(c, f"connection {raw.label()}: {tag}MappingTransformation is not "
                                 "supported on a signal connection (the master passes values "
                                 "through linear maps only)",
                              "map the values in the FMU, or use it in a parameter mapping")
        node.connections.append(raw)
    node.bound = bindings(reader, sys_el, where, units)
    return node


def _read_component(reader: _Reader, el: Any, node: Node, name: str) -> Any:
    owner = f"component '{'/'.join(node.path + (name,))}'"
    typ = el.get("type", FMU_TYPE)
    source = el.get("source")
    if typ == SSD_TYPE:
        if not source:
            raise reader.fail(el, f"{owner} has no source attribute")
        path, rel = reader.resource(el, source, f"{owner}: SSD resource")
        with reader.reading(rel):
            doc = reader.parse(path, rel)
            _check_root(reader, doc)
            units = dict(node.units)
            if doc.find("ssd:Units", NS) is not None:
                units.update(units_of(reader, doc.find("ssd:Units", NS), rel))
            sub = doc.find("ssd:System", NS)
            if sub is None:
                raise reader.fail(doc, "no <ssd:System> element")
            inner = read_system(reader, sub, node.path + (name,), units)
        inner.name = name
        # SSP: the component's bindings count as the referenced system's, after its own
        inner.bound.extend(bindings(reader, el, owner, node.units))
        if el.find("ssd:Connectors", NS) is not None:
            outer = {c.name for c in _connectors(reader, el, owner)}
            missing = outer - {c.name for c in inner.connectors}
            if missing:
                raise reader.fail(el, f"{owner}: connectors {', '.join(sorted(missing))} are "
                                      f"not connectors of the system in {rel}")
        return inner
    if typ != FMU_TYPE:
        raise reader.fail(el, f"{owner}: component type {typ!r} is not supported (FMUs, "
                              f"{FMU_TYPE}, and SSDs, {SSD_TYPE}, are)",
                          "an SSP inside the SSP must be unpacked and referenced as an SSD")
    impl = el.get("implementation", "any")
    if impl not in ("any", "CoSimulation", "ModelExchange"):
        raise reader.fail(el, f"{owner}: implementation={impl!r} is not supported (Scheduled "
                              "Execution is not)", "use CoSimulation or ModelExchange")
    if not source:
        raise reader.fail(el, f"{owner} has no source attribute")
    path, _rel = reader.resource(el, source, f"{owner}: FMU resource")
    flat = "/".join(node.path + (name,))
    if flat in reader.comp_info:
        first = reader.comp_info[flat][1]
        raise reader.fail(el, f"{owner}: the flattened name {flat!r} is also the name of the "
                              f"component at line {first.sourceline}", "rename one of them")
    comp = SSPComponent(name=flat, source=source, path=path, implementation=impl,
                        connectors=_connectors(reader, el, owner),
                        element=(reader.file, el.sourceline))
    comp.bound.extend(bindings(reader, el, owner, node.units))
    reader.comp_info[flat] = (node, el, component_solver(reader, el, owner))
    return comp
