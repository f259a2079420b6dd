"""Checks of a read SSP against its FMUs' model descriptions.

Connectors must be variables of the FMU with the matching causality, type and unit,
connections join matching types and compatible units, bound values name variables that
may be set before initialization and are converted to their type and unit.  The rule
for settable variables and the unit lookup are shared with the export.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cosim.block import did_you_mean
from cosim.errors import ParameterError, UnitError
from cosim.units import Unit, conversion, parse_unit

from ..archive import ArchiveLimits
from ..errors import FMUError, FMUWarning
from ..importer import FMU
from ..instance import check_value
from .model import KIND_OF_TYPE, SSPConnection, SSPConnector, SSPError, SSPSystem

if TYPE_CHECKING:
    from .reading import _Reader


_CAUSALITY = {"input": ("input",), "output": ("output",),
              "parameter": ("parameter", "structuralParameter"),
              "calculatedParameter": ("calculatedParameter",)}


def settable(var: Any) -> bool:
    """SSP/FMI: values may be bound to non-constant variables with an exact/approx start."""
    if var.variability == "constant":
        return False
    return var.causality in ("parameter", "structuralParameter", "input") \
        or var.initial in ("exact", "approx")


def unit_of(name: str, units: dict) -> Unit | None:
    """The unit called ``name``: from ``<Units>``, else cosim's grammar, else None."""
    if name in units:
        return units[name]
    try:
        return parse_unit(name)
    except UnitError:
        return None


def check_against_fmus(reader: _Reader, system: SSPSystem, limits: ArchiveLimits) -> None:
    """Load each component's FMU (once per file) and check the system against them.

    Fills ``comp.fmu``, replaces ``comp.parameters`` and ``system.inputs`` by the bound
    values in the variables' types and units.
    """
    fmus: dict[Path, FMU] = {}
    for comp in system.components.values():
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
        if "CoSimulation" not in fmu.info.interfaces:
            raise SSPError(f"SSP '{reader.label}': {owner}: the FMU has no Co-Simulation "
                           "interface; SSP components run through Co-Simulation here")
        by_name = fmu.info.by_name
        for c in comp.connectors:
            var = by_name.get(c.name)
            if var is None:
                raise SSPError(f"SSP '{reader.label}': {owner}: connector {c.name!r} is not a "
                               f"variable of the FMU; "
                               + did_you_mean(c.name, [v.name for v in fmu.info.variables
                                                       if v.causality in ("input", "output",
                                                                          "parameter")]))
            if c.kind == "inout":
                raise SSPError(f"SSP '{reader.label}': {owner}: connector {c.name!r} is inout; "
                               "inout connectors are not supported")
            if var.causality not in _CAUSALITY[c.kind]:
                raise SSPError(f"SSP '{reader.label}': {owner}: connector {c.name!r} has kind "
                               f"{c.kind!r} but the FMU variable has causality {var.causality!r}")
            if var.shape:
                raise SSPError(f"SSP '{reader.label}': {owner}: connector {c.name!r} is an "
                               f"array variable {var.shape}; arrays are not supported in SSP 1.0")
            _check_type(reader, owner, c, var, system.units)
        # bound values: FMU variable, settable, converted to its type and unit
        done = {}
        for pname, _typ, value, unit, p, file in comp.bound:
            var = by_name.get(pname)
            if var is None:
                warnings.warn(f"SSP '{reader.label}': {file} line {p.sourceline}: {owner}: "
                              f"bound value {pname!r} matches no FMU variable and is ignored "
                              "(SSP rule); " + did_you_mean(pname, [
                                  v.name for v in fmu.info.variables if settable(v)]),
                              FMUWarning, stacklevel=3)
                continue
            if not settable(var):
                raise reader.fail(p, f"{owner}: a value is bound to {pname!r}, a "
                                     f"{var.variability} {var.causality} with initial="
                                     f"{var.initial!r}, which cannot be set before "
                                     "initialization", "remove the binding", file=file)
            done[pname] = _typed(reader, owner, var, value, unit, p, file)
        comp.parameters = done
    for conn in system.connections:
        _check_connection(reader, system, conn)
    for name, _typ, value, unit, p, file in system._bound:
        targets = [system.components[c.end[0]].fmu.info.by_name[c.end[1]]
                   for c in system.connections if c.start == (None, name)]
        if targets:
            system.inputs[name] = _typed(reader, f"system input '{name}'", targets[0], value,
                                         unit, p, file)


def _typed(reader: _Reader, owner: str, var: Any, value: Any, unit: tuple | None, p: Any,
           file: str) -> Any:
    """A bound value in the variable's type and unit (``unit``: (name, Unit or None))."""
    if unit is not None and var.kind == "real" and unit[0] != var.fmi_unit:
        if unit[1] is None:
            raise reader.fail(p, f"{owner}: unit {unit[0]!r} of the value for {var.name!r} is "
                                 "not defined in <Units> and is not a unit cosim knows",
                              "add a <ssc:Unit> definition with its BaseUnit", file=file)
        try:
            scale, bias = conversion(unit[1], var.unit)
        except UnitError as exc:
            raise reader.fail(p, f"{owner}: value for {var.name!r} in unit {unit[0]!r} "
                                 f"cannot be converted to the variable's unit {var.unit!r} "
                                 f"({exc})", file=file) from None
        value = scale * value + bias if (scale, bias) != (1.0, 0.0) else value
    try:
        return check_value(var, value, owner)
    except ParameterError as exc:
        raise reader.fail(p, str(exc), file=file) from None


def _check_type(reader: _Reader, owner: str, c: SSPConnector, var: Any, units: dict) -> None:
    if c.type is None:
        return
    ok = (KIND_OF_TYPE.get(c.type) == var.kind
          or (c.type == "Enumeration" and var.type == "Enumeration"))
    if not ok:
        raise SSPError(f"SSP '{reader.label}': {owner}: connector {c.name!r} is declared "
                       f"{c.type} but the FMU variable is {var.type}")
    if c.type == "Real" and c.unit and c.unit != var.fmi_unit and var.unit is not None:
        u = unit_of(c.unit, units)
        try:
            same = u is not None and conversion(u, var.unit) == (1.0, 0.0)
        except UnitError:
            same = False
        if not same:
            raise SSPError(f"SSP '{reader.label}': {owner}: connector {c.name!r} declares unit "
                           f"{c.unit!r} but the FMU variable has unit {var.fmi_unit!r}; "
                           "connectors with another unit than their variable are not "
                           "supported: declare the FMU's unit on the connector")


def _endpoint_var(system: SSPSystem, end: tuple) -> Any:
    return system.components[end[0]].fmu.info.by_name[end[1]] if end[0] else None


def _check_connection(reader: _Reader, system: SSPSystem, conn: SSPConnection) -> None:
    a, b = _endpoint_var(system, conn.start), _endpoint_var(system, conn.end)
    if a is not None and b is not None and a.kind != b.kind:
        raise SSPError(f"SSP '{reader.label}': connection {conn}: {a.type} output to {b.type} "
                       "input; the types must match")
    if conn.transform is not None and any(v is not None and v.kind != "real" for v in (a, b)):
        raise SSPError(f"SSP '{reader.label}': connection {conn}: a LinearTransformation is "
                       "only valid between Real connectors")
    if a is not None and b is not None:
        try:
            conversion(a.unit, b.unit)
        except UnitError as exc:
            raise SSPError(f"SSP '{reader.label}': connection {conn}: [{a.unit}] -> "
                           f"[{b.unit}]: {exc}; the master connects compatible units only "
                           "(suppressUnitConversion included)") from None

