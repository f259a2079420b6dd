"""Parameter values: ``.ssv`` parameter sets, ``.ssm`` parameter mappings and bindings.

A ``ssd:ParameterBinding`` names a parameter set (``source="resources/x.ssv"`` or inline
``ssd:ParameterValues``) and optionally a ``ssd:ParameterMapping`` (``source=".ssm"`` or
inline).  Its entries become :class:`Bound` values in document order, their names
relative to the element that holds the binding:

* the binding's ``prefix`` is prepended to every parameter name first;
* a mapping entry whose ``source`` is a parameter's (prefixed) name applies that value to
  its ``target`` (several entries may share a source: one value, several targets), with
  the entry's transformation; a parameter no entry names keeps its own name (as
  OMSimulator does); an entry naming no parameter of the set does nothing (a note).

:func:`typed` turns a bound value into the FMU variable's type and unit: a ``Real`` in
another unit is converted (definitions from the set's or the SSD's ``Units``, else
cosim's unit grammar) unless the entry says ``suppressUnitConversion``, then the
transformation is applied (SSP: ``target = factor * source + offset`` with the source
already in the target's unit; ``Boolean``/``Integer``/``EnumerationMappingTransformation``
map the listed values and keep the others), an enumeration item name becomes the
item's value from the FMU's type, and the result is checked against the variable's
type and range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cosim.errors import ParameterError, UnitError
from cosim.units import conversion, from_fmi

from ..instance import check_value
from .model import BASE, INT_RANGE, KIND_OF_TYPE, NS, PMAP_TYPE, PSET_TYPE, SSD_NAME, q, unit_of

if TYPE_CHECKING:
    from .reading import _Reader

#: the value elements of ``ssv:Parameter`` (SSP 1.0 and 2.0)
VALUE_TYPES = tuple(KIND_OF_TYPE)


@dataclass
class Bound:
    """One value bound to a name (relative to the element holding the binding)."""

    name: str
    type: str                  # the SSP type element: Real, Float64, Integer, Enumeration...
    value: Any                 # float, int, bool, str (String; Enumeration item name)
    unit: tuple | None         # (unit name, cosim Unit or None) of a Real value
    el: Any                    # the ssv:Parameter element
    file: str                  # where it was read
    transform: tuple | None = None  # ("linear", f, o), ("bool"|"int"|"enum", {src: dst})
    suppress: bool = False     # suppressUnitConversion of the mapping entry
    entry: Any = None          # (ssm:MappingEntry element, file) that mapped it

    def where(self) -> str:
        """``file line N`` of the value (and of the mapping entry that mapped it)."""
        out = f"{self.file} line {self.el.sourceline}"
        if self.entry is not None:
            out += f" (mapped by {self.entry[1]} line {self.entry[0].sourceline})"
        return out


def units_of(reader: _Reader, parent: Any, file: str) -> dict:
    """``{name: cosim Unit}`` of the ``ssc:Unit`` children of ``parent``."""
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


def double(text: str | None) -> float:
    """An ``xs:double`` (``INF``, ``-INF`` and ``NaN`` included)."""
    s = (text or "").strip()
    special = {"INF": math.inf, "-INF": -math.inf, "NaN": math.nan}
    return special[s] if s in special else float(s)


def boolean(text: str | None) -> bool:
    """An ``xs:boolean``."""
    s = (text or "").strip()
    if s not in ("true", "false", "1", "0"):
        raise ValueError(f"{text!r} is not true/false/1/0")
    return s in ("true", "1")


def value_element(el: Any) -> tuple[str | None, Any]:
    """The type name and element of the first typed child (``ssv:`` or ``ssc:``)."""
    for child in el:
        if not isinstance(child.tag, str):
            continue
        ns, _, local = child.tag[1:].partition("}")
        if ns in (NS["ssv"], NS["ssc"]) and local in VALUE_TYPES:
            return local, child
    return None, None


def parse_value(typ: str, raw: str) -> Any:
    """The Python value of ``raw`` written as an SSP ``typ``."""
    kind = KIND_OF_TYPE[typ]
    if kind == "real":
        return double(raw)
    if kind == "int":
        value = int(raw.strip())
        lo, hi = INT_RANGE[typ]
        if not lo <= value <= hi:
            raise ValueError(f"outside the range of {typ} [{lo}, {hi}]")
        return value
    if kind == "bool":
        return boolean(raw)
    return raw


def parameter_set(reader: _Reader, pset: Any, file: str, ssd_units: dict) -> list:
    """The :class:`Bound` entries of an ``ssv:ParameterSet`` (names as written)."""
    from lxml import etree
    if pset.tag != q("ssv", "ParameterSet"):
        raise reader.fail(pset, f"expected an ssv:ParameterSet, found {etree.QName(pset).localname}"
                                f" in namespace {etree.QName(pset).namespace!r}", file=file)
    units = dict(ssd_units)
    u_el = pset.find("ssv:Units", NS)
    if u_el is not None:
        units.update(units_of(reader, u_el, file))
    out = []
    for p in pset.iterfind("ssv:Parameters/ssv:Parameter", NS):
        name = p.get("name")
        typ, v_el = value_element(p)
        if not name or typ is None:
            raise reader.fail(p, f"parameter {name!r} needs a name and a typed value "
                                 f"({', '.join(VALUE_TYPES)})", file=file)
        if typ == "Binary":
            raise reader.fail(p, f"parameter {name!r}: Binary values are not supported",
                              "set the value in the FMU", file=file)
        raw = v_el.get("value")
        if raw is None:
            raise reader.fail(v_el, f"parameter {name!r} has no value attribute (array "
                                    "values in Value elements are not supported)", file=file)
        try:
            value = parse_value(typ, raw)
        except ValueError as exc:
            raise reader.fail(v_el, f"parameter {name!r}: value {raw!r} is not a valid {typ} "
                                    f"({exc})", file=file) from None
        unit = (v_el.get("unit"), unit_of(v_el.get("unit"), units)) \
            if KIND_OF_TYPE[typ] == "real" and v_el.get("unit") else None
        out.append(Bound(name, typ, value, unit, p, file))
    return out


def transformation(reader: _Reader, parent: Any, label: str, file: str) -> tuple | None:
    """The ``ssc:`` transformation child of a connection or mapping entry, or None."""
    lt = parent.find("ssc:LinearTransformation", NS)
    if lt is not None:
        try:
            return ("linear", double(lt.get("factor", "1.0")), double(lt.get("offset", "0.0")))
        except ValueError as exc:
            raise reader.fail(lt, f"{label}: bad LinearTransformation ({exc})", file=file) \
                from None
    for tag, kind, parse in (("BooleanMappingTransformation", "bool", boolean),
                             ("IntegerMappingTransformation", "int", lambda s: int(s.strip())),
                             ("EnumerationMappingTransformation", "enum", str)):
        el = parent.find(f"ssc:{tag}", NS)
        if el is None:
            continue
        table = {}
        for e in el.iterfind("ssc:MapEntry", NS):
            try:
                table[parse(e.get("source"))] = parse(e.get("target"))
            except (TypeError, ValueError) as exc:
                raise reader.fail(e, f"{label}: bad {tag} MapEntry source={e.get('source')!r} "
                                     f"target={e.get('target')!r} ({exc})", file=file) from None
        if not table:
            raise reader.fail(el, f"{label}: {tag} has no MapEntry", file=file)
        return (kind, table)
    for local in ("LinearTransformation", "BooleanMappingTransformation"):
        if parent.find(f"ssd:{local}", NS) is not None or parent.find(f"ssm:{local}", NS) \
                is not None:
            raise reader.fail(parent, f"{label}: {local} is not in the ssc namespace; SSP puts "
                                      f"transformations in {NS['ssc']}", file=file)
    return None


def parameter_mapping(reader: _Reader, pmap: Any, file: str) -> list:
    """``[(source, target, transform, suppress, element)]`` of an ``ssm:ParameterMapping``."""
    from lxml import etree
    if pmap.tag != q("ssm", "ParameterMapping"):
        raise reader.fail(pmap, "expected an ssm:ParameterMapping, found "
                                f"{etree.QName(pmap).localname} in namespace "
                                f"{etree.QName(pmap).namespace!r}", file=file)
    out = []
    for e in pmap.iterfind("ssm:MappingEntry", NS):
        src, dst = e.get("source"), e.get("target")
        if src is None or not dst:
            raise reader.fail(e, f"a MappingEntry needs source and target attributes (got "
                                 f"source={src!r}, target={dst!r})", file=file)
        label = f"mapping entry {src!r} -> {dst!r}"
        try:
            suppress = boolean(e.get("suppressUnitConversion") or "false")
        except ValueError as exc:
            raise reader.fail(e, f"{label}: suppressUnitConversion {exc}", file=file) from None
        out.append((src, dst, transformation(reader, e, label, file), suppress, e))
    return out


def _mapping_of(reader: _Reader, b: Any, owner: str) -> tuple[list, str] | None:
    m = b.find("ssd:ParameterMapping", NS)
    if m is None:
        return None
    typ = m.get("type", PMAP_TYPE)
    if typ != PMAP_TYPE:
        raise reader.fail(m, f"{owner}: parameter mapping of type {typ!r} is not supported "
                             f"(only {PMAP_TYPE})")
    if m.get("sourceBase", "SSD") != "SSD":
        raise reader.fail(m, f"{owner}: parameter mapping with sourceBase="
                             f"{m.get('sourceBase')!r} is not supported",
                          "put the .ssm file into the SSP and reference it from the SSD")
    inline = m.find("ssm:ParameterMapping", NS)
    if m.get("source") and inline is not None:
        raise reader.fail(m, f"{owner}: a ParameterMapping has both a source and inline "
                             "content; SSP allows one of them")
    if m.get("source"):
        path, rel = reader.resource(m, m.get("source"), f"{owner}: parameter mapping source")
        return parameter_mapping(reader, reader.parse(path, rel), rel), rel
    if inline is None:
        raise reader.fail(m, f"{owner}: a ParameterMapping needs a source attribute or an "
                             "inline ssm:ParameterMapping")
    return parameter_mapping(reader, inline, reader.file), reader.file


def bindings(reader: _Reader, el: Any, owner: str, ssd_units: dict) -> list:
    """The :class:`Bound` values of an element's ``ParameterBindings``, in order."""
    out = []
    for b in el.iterfind("ssd:ParameterBindings/ssd:ParameterBinding", NS):
        typ = b.get("type", PSET_TYPE)
        if typ != PSET_TYPE:
            raise reader.fail(b, f"{owner}: parameter binding of type {typ!r} is not supported "
                                 f"(only {PSET_TYPE})")
        if b.get("sourceBase", "SSD") != "SSD":
            raise reader.fail(b, f"{owner}: parameter binding with sourceBase="
                                 f"{b.get('sourceBase')!r} (a file inside the component) is not "
                                 "supported", "put the .ssv file into the SSP and reference it "
                                 "from the SSD")
        prefix = b.get("prefix", "")
        source = b.get("source")
        inline = b.find("ssd:ParameterValues", NS)
        if source and inline is not None and len(inline):
            raise reader.fail(b, f"{owner}: a parameter binding has both a source and inline "
                                 "ParameterValues; SSP allows one of them")
        if source:
            path, rel = reader.resource(b, source, f"{owner}: parameter binding source")
            pset, file = reader.parse(path, rel), rel
        elif inline is not None and len(inline):
            pset, file = inline[0], reader.file
        else:
            continue
        values = parameter_set(reader, pset, file, ssd_units)
        for v in values:
            v.name = prefix + v.name
        mapping = _mapping_of(reader, b, owner)
        out.extend(apply_mapping(reader, values, mapping) if mapping else values)
    return out


def apply_mapping(reader: _Reader, values: list, mapping: tuple) -> list:
    """``values`` renamed and given transformations by the mapping entries."""
    entries, file = mapping
    by_source: dict[str, list] = {}
    for e in entries:
        by_source.setdefault(e[0], []).append(e)
    out = []
    for v in values:
        targets = by_source.get(v.name)
        if not targets:
            out.append(v)
            continue
        for _src, dst, tr, suppress, e in targets:
            out.append(Bound(dst, v.type, v.value, v.unit, v.el, v.file, tr, suppress, (e, file)))
    names = {v.name for v in values}
    unused = [e for e in entries if e[0] not in names]
    if unused:
        shown = ", ".join(repr(s) for s in dict.fromkeys(e[0] for e in unused[:8]))
        lines = ", ".join(str(e[4].sourceline) for e in unused[:8])
        more = ", ..." if len(unused) > 8 else ""
        what = "entry names" if len(unused) == 1 else "entries name"
        reader.note(f"{file}: {len(unused)} mapping {what} no parameter of the parameter set "
                    f"({shown}{more}; line {lines}{more}) and "
                    f"{'does' if len(unused) == 1 else 'do'} nothing")
    return out


def enum_items(fmu: Any, var: Any) -> dict:
    """``{item name: value}`` of an FMU Enumeration variable's declared type."""
    mv = next((m for m in fmu.info.md.modelVariables if m.name == var.name), None)
    dt = getattr(mv, "declaredType", None)
    return {it.name: int(it.value) for it in getattr(dt, "items", None) or []}


def typed(reader: _Reader, owner: str, var: Any, b: Bound, fmu: Any = None) -> Any:
    """The bound value ``b`` in ``var``'s type and unit, transformed (module docstring)."""
    value = b.value
    kind = KIND_OF_TYPE[b.type]
    where = b.where()

    def fail(what: str, hint: str = "") -> Exception:
        el, file = b.entry if b.entry is not None else (b.el, b.file)
        return reader.fail(el, f"{owner}: {what} (value at {where})", hint, file=file)

    if kind == "enum" and var.type != "Enumeration":
        raise fail(f"an Enumeration value {value!r} is bound to {var.name!r}, a {var.type}")
    if kind == "real" and var.kind == "real" and b.unit is not None and not b.suppress \
            and b.unit[0] != var.fmi_unit:
        if b.unit[1] is None:
            raise fail(f"unit {b.unit[0]!r} of the value for {var.name!r} is not defined in "
                       "<Units> and is not a unit cosim knows",
                       "add a <ssc:Unit> definition with its BaseUnit")
        try:
            scale, bias = conversion(b.unit[1], var.unit)
        except UnitError as exc:
            raise fail(f"value for {var.name!r} in unit {b.unit[0]!r} cannot be converted to "
                       f"the variable's unit {var.unit!r} ({exc})") from None
        value = scale * value + bias if (scale, bias) != (1.0, 0.0) else value
    if b.transform is not None:
        tk = b.transform[0]
        if tk == "linear":
            if var.kind != "real" or kind != "real":
                raise fail(f"a LinearTransformation maps {var.name!r}, a {var.type} given a "
                           f"{b.type}; it is valid for Real values only")
            value = b.transform[1] * value + b.transform[2]
        else:
            ok = {"bool": kind == "bool", "int": kind in ("int", "enum") and isinstance(value, int),
                  "enum": kind == "enum"}[tk]
            if not ok:
                tag = {"bool": "Boolean", "int": "Integer", "enum": "Enumeration"}[tk]
                raise fail(f"a {tag}MappingTransformation cannot map the {b.type} value "
                           f"{value!r}")
            value = b.transform[1].get(value, value)
    if kind == "enum":
        items = enum_items(fmu, var) if fmu is not None else {}
        if value not in items:
            raise fail(f"{value!r} is not an item of the enumeration of {var.name!r}",
                       "items: " + (", ".join(repr(k) for k in items) or "(none known)"))
        value = items[value]
    try:
        return check_value(var, value, owner)
    except ParameterError as exc:
        el, file = b.entry if b.entry is not None else (b.el, b.file)
        raise reader.fail(el, f"{exc} (value at {where})", file=file) from None


__all__ = ["Bound", "SSD_NAME", "apply_mapping", "bindings", "double", "enum_items",
           "parameter_mapping", "parameter_set", "transformation", "typed", "unit_of",
           "units_of"]
