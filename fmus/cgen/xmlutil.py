"""Shared pieces of the FMI 2 and FMI 3 model descriptions: units, numbers, XML text."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import numpy as np

from cosim.units import BASE_UNITS, parse_unit

from .model import FMUExportError


def num(v: float) -> str:
    """A number as XML text (shortest round trip; ``INF``/``-INF``/``NaN`` as xs:double)."""
    v = float(v)
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "INF" if v > 0 else "-INF"
    r = repr(v)
    return r[:-2] if r.endswith(".0") else r


def unit_definitions(root: ET.Element, units: list[str]) -> None:
    """``<UnitDefinitions>`` with one ``<Unit>``/``<BaseUnit>`` per unit text (FMI
    BaseUnit model of :mod:`cosim.units`)."""
    if not units:
        return
    ud = ET.SubElement(root, "UnitDefinitions")
    for text in units:
        try:
            u = parse_unit(text)
        except Exception as exc:  # a unit the parser refuses: say which
            raise FMUExportError(f"export_fmu(): unit {text!r} cannot be mapped to an FMI "
                                 f"BaseUnit: {exc}") from None
        el = ET.SubElement(ud, "Unit", name=text)
        fmi = u.to_fmi()  # kg m s A K mol cd rad factor offset
        attrs = {k: str(fmi[k]) for k in BASE_UNITS if fmi[k]}
        if fmi["factor"] != 1.0:
            attrs["factor"] = num(fmi["factor"])
        if fmi["offset"] != 0.0:
            attrs["offset"] = num(fmi["offset"])
        ET.SubElement(el, "BaseUnit", attrs)


def used_units(variables: list) -> list[str]:
    """The distinct unit texts of the variables, in order of appearance."""
    seen: list[str] = []
    for v in variables:
        if v.unit and v.unit.strip() and v.unit not in seen:
            seen.append(v.unit)
    return seen


def to_text(root: ET.Element) -> str:
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") \
        + "\n"


def default_experiment(root: ET.Element, experiment: dict[str, Any]) -> None:
    attrs = {k: num(v) for k, v in experiment.items() if v is not None}
    if attrs:
        ET.SubElement(root, "DefaultExperiment", attrs)
