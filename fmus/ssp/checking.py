"""Checks of a read SSP against its FMUs' model descriptions.

Connectors must be variables of the FMU with the matching causality, type and unit,
connections join matching types and compatible units, bound values name variables that
may be set before initialization and are converted to their type and unit
(:func:`~fmus.ssp.values.typed`).  The rule for settable variables is shared with the
export.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cosim.block import did_you_mean
from cosim.errors import UnitError
from cosim.units import conversion

from ..archive import ArchiveLimits
from ..errors import FMUError, FMUWarning
from ..importer import FMU
from .model import (
    KIND_OF_TYPE,
    SSPComponent,
    SSPConnection,
    SSPConnector,
    SSPError,
    SSPSystem,
    unit_of,
)
from .values import Bound, typed

if TYPE_CHECKING:
    from .reading import _Reader

__all__ = ["check_components", "check_system", "settable"]

_CAUSALITY = {"input": ("input",), "output": ("output",),
              "parameter": ("parameter", "structuralParameter"),
              "structuralParameter": ("structuralParameter", "parameter"),
              "calculatedParameter": ("calculatedParameter",),
              "constant": ("parameter", "calculatedParameter", "local", "output"),
              "local": ("local",)}


def settable(var: Any) -> bool:
    """SSP/FMI: values may be bound to non-constant variables with an exact/approx start."""
    if var.variability == "constant":
        return False
    return var.causality in ("parameter", "structuralParameter", "input") \
        or var.initial in ("exact", "approx")


def check_components(reader: _Reader, comps: list, limits: ArchiveLimits) -> None:
    """Load each component's FMU (once per file) and check its connectors against it."""
    fmus: dict[Path, FMU] = {}
    for comp in comps:
        key = Path(os.path.realpath(comp.path))
        if key not in fmus:
            try:
                fmus[key] = FMU(comp.path, limits=limits)
            except FMUError as exc:
                exc.add_note(f"(component '{comp.name}' of SSP '{reader.label}', resource "
                             f"{comp.source!r})")
                raise
        comp.fmu = fmu = fmus[key]
        owner = f"component '{comp.name}' ({comp.source})"
        by_name = fmu.info.by_name
        for c in comp.connectors:
            file, line = c.where or (reader.file, None)
            at = f"SSP '{reader.label}': {file}{f' line {line}' if line else ''}: {owner}"
            var = by_name.get(c.name)
            if var is None:
                raise SSPError(f"{at}: connector {c.name!r} is not a variable of the FMU; "
                               + did_you_mean(c.name, [v.name for v in fmu.info.variables
                                                       if v.causality in ("input", "output",
                                                                          "parameter")]))
            if c.kind in ("inout", "unspecified"):
                raise SSPError(f"{at}: connector {c.name!r} is {c.kind}; {c.kind} connectors "
                               "are not supported (declare it input or output)")
            if var.causality not in _CAUSALITY[c.kind]:
                raise SSPError(f"{at}: connector {c.name!r} has kind {c.kind!r} but the FMU "
                               f"variable has causality {var.causality!r}; declare the "
                               "variable's causality as the kind")
            if var.shape:
                raise SSPError(f"{at}: connector {c.name!r} is an array variable {var.shape}; "
                               "array connectors are not supported")
            _check_type(at, c, var, reader.comp_info[comp.name][0].units)


def check_system(reader: _Reader, system: SSPSystem) -> None:
    """Check the flattened connections and turn bound values into the FMUs' types."""
    for comp in system.components.values():
        comp.parameters = _bound_values(reader, comp)
    for conn in system.connections:
        _check_connection(reader, system, conn)
    targets: dict = {}
    for c in system.connections:
        if c.start[0] is None and c.end[0] is not None:
            targets.setdefault(c.start[1], []).append(
                system.components[c.end[0]].fmu.info.by_name[c.end[1]])
    for b in system._bound:
        system.inputs[b.name] = _connector_value(reader, system, b, targets.get(b.name, []))


def _bound_values(reader: _Reader, comp: SSPComponent) -> dict:
    """``{variable: value}`` of the bindings (later wins), typed; unmatched names warn."""
    fmu = comp.fmu
    by_name = fmu.info.by_name
    owner = f"component '{comp.name}' ({comp.source})"
    done: dict = {}
    for b in comp.bound:
        var = by_name.get(b.name)
        if var is None:
            warnings.warn(f"SSP '{reader.label}': {b.where()}: {owner}: bound value {b.name!r} "
                          "matches no FMU variable and is ignored (SSP rule); "
                          + did_you_mean(b.name, [v.name for v in fmu.info.variables
                                                  if settable(v)]), FMUWarning, stacklevel=4)
            continue
        if not settable(var):
            el, file = b.entry if b.entry is not None else (b.el, b.file)
            raise reader.fail(el, f"{owner}: a value is bound to {b.name!r}, a "
                                  f"{var.variability} {var.causality} with initial="
                                  f"{var.initial!r}, which cannot be set before "
                                  "initialization", "remove the binding", file=file)
        done.pop(b.name, None)  # a later binding wins (and comes last)
        done[b.name] = typed(reader, owner, var, b, fmu)
    return done


def _connector_value(reader: _Reader, system: SSPSystem, b: Bound, targets: list) -> Any:
    """A system input's bound value: in the connector's unit, else the first target's."""
    decl = system.connector(b.name)
    owner = f"system input '{b.name}'"
    kind = KIND_OF_TYPE[b.type]
    if decl is not None and decl.unit and kind == "real":
        from types import SimpleNamespace
        u = unit_of(decl.unit, system.units)
        var = SimpleNamespace(name=b.name, kind="real", type="Real", unit=u,
                              fmi_unit=decl.unit, min=None, max=None, shape=())
        return typed(reader, owner, var, b)
    if targets:
        return typed(reader, owner, targets[0], b,
                     next((c.fmu for c in system.components.values()
                           if targets[0] in c.fmu.info.variables), None))
    return b.value


def _check_type(at: str, c: SSPConnector, var: Any, units: dict) -> None:
    if c.type is None:
        return
    kind = KIND_OF_TYPE.get(c.type)
    ok = kind == var.kind or (kind == "enum" and var.type == "Enumeration") \
        or (kind == "int" and var.type == "Enumeration")
    if not ok:
        raise SSPError(f"{at}: connector {c.name!r} is declared {c.type} but the FMU variable "
                       f"is {var.type}; declare the variable's type")
    if kind == "real" and c.unit and c.unit != var.fmi_unit and var.unit is not None:
        u = unit_of(c.unit, units)
        try:
            same = u is not None and conversion(u, var.unit) == (1.0, 0.0)
        except UnitError:
            same = False
        if not same:
            raise SSPError(f"{at}: connector {c.name!r} declares unit "
                           f"{c.unit!r} but the FMU variable has unit {var.fmi_unit!r}; "
                           "connectors with another unit than their variable are not "
                           "supported: declare the FMU's unit on the connector")


def _endpoint_var(system: SSPSystem, end: tuple) -> Any:
    return system.components[end[0]].fmu.info.by_name[end[1]] if end[0] else None


def _check_connection(reader: _Reader, system: SSPSystem, conn: SSPConnection) -> None:
    chain = getattr(reader, "origins", {}).get((conn.start, conn.end))
    raw = chain[-1].raw if chain else None

    def fail(what: str) -> SSPError:
        if raw is None:
            return SSPError(f"SSP '{reader.label}': connection {conn}: {what}")
        via = f" (flattened {conn})" if len(chain) > 1 else ""
        return reader.fail(raw.el, f"connection {raw.label()}{via}: {what}", file=raw.file)

    a, b = _endpoint_var(system, conn.start), _endpoint_var(system, conn.end)
    if a is not None and b is not None and a.kind != b.kind:
        raise fail(f"{a.type} output to {b.type} input; the types must match")
    if conn.transform is not None and any(v is not None and v.kind != "real" for v in (a, b)):
        raise fail("a LinearTransformation is only valid between Real connectors")
    if a is not None and b is not None:
        try:
            conversion(a.unit, b.unit)
        except UnitError as exc:
            raise fail(f"[{a.unit}] -> [{b.unit}]: {exc}; the master connects compatible "
                       "units only (suppressUnitConversion included)") from None
    for v, end in ((a, conn.start), (b, conn.end)):
        if v is None:
            continue
        if v.kind not in ("real", "int", "bool"):
            raise fail(f"{'.'.join(end)} is a {v.type} variable; the master exchanges Real, "
                       "Integer and Boolean values only")
