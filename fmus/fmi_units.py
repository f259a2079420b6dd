"""FMI units (a name and a ``<BaseUnit>``) to cosim unit strings.

An FMI unit is a name plus an optional ``<BaseUnit>`` (SI exponents, factor,
offset), which is exactly :class:`cosim.units.Unit`.  :func:`map_unit` keeps
the name when cosim parses it to the same unit (``"m/s"``, ``"rpm"``,
``"degC"``), and otherwise writes the base unit in cosim's grammar
(``"kg m^2 s^-2"``, or a prefixed symbol such as ``"mm"`` when the factor is
a prefix).  A name that parses to a different dimension than its base unit
follows the base unit (the numbers the FMU computes with), with a note; an
FMU that leaves ``rad`` out of its base unit keeps the name (``rad/s`` stays
``rad/s``).  A unit that cannot be expressed (an unknown name without a base
unit, or a factor that is no SI prefix such as ``ft``) leaves the port without
a unit, with a note (the import turns notes into warnings).

The symbol tables are cosim's own (``cosim.units``), so every string this module
writes parses back to the FMU's definition.
"""

from __future__ import annotations

import math
from typing import Any

from cosim.units import _NO_PREFIX, _PREFIXES, _UNITS, BASE_UNITS, Unit, from_fmi, parse_unit

__all__ = ["map_unit"]


def _symbol_for(target: Unit) -> str | None:
    """A cosim unit string for ``target`` (exponents, factor, offset), or None."""
    exps = target.exponents
    if target.offset:
        for sym in ("degC", "degF"):
            if _UNITS[sym] == target:
                return sym
        return None
    base = _dimension_text(exps)
    if target.factor == 1.0:
        return base
    # one named symbol (optionally prefixed) with the whole dimension and factor
    for sym, u in _UNITS.items():
        if u.exponents != exps or u.offset:
            continue
        if math.isclose(u.factor, target.factor, rel_tol=1e-12):
            return sym
        if sym in _NO_PREFIX:
            continue
        for p, f in _PREFIXES.items():
            if p in ("\u00b5", "\u03bc"):
                continue
            if math.isclose(f * u.factor, target.factor, rel_tol=1e-12):
                return p + sym
    # a prefixed base symbol times the rest of the dimension (e.g. "km h^-1" is not
    # reachable, but "mm s^-1" is)
    for i, b in enumerate(BASE_UNITS):
        e = exps[i]
        if e == 0 or b == "kg":
            continue
        for p, f in _PREFIXES.items():
            if p in ("\u00b5", "\u03bc"):
                continue
            if math.isclose(f ** e, target.factor, rel_tol=1e-12):
                head = p + b + (f"^{e}" if e != 1 else "")
                rest = list(exps)
                rest[i] = 0
                tail = _dimension_text(tuple(rest))
                return head if tail == "1" else f"{head} {tail}"
    return None


def _dimension_text(exps: tuple) -> str:
    parts = [b if e == 1 else f"{b}^{e}" for b, e in zip(BASE_UNITS, exps) if e]
    return " ".join(parts) or "1"


def map_unit(name: str | None, base: Any = None) -> tuple[str | None, str | None]:
    """``(cosim unit string or None, note or None)`` for an FMI unit.

    ``base`` is fmpy's ``BaseUnit`` (or None).  See the module docstring.
    """
    if not name:
        return None, None
    try:
        parsed = parse_unit(name)
    except Exception:  # noqa: BLE001 - any unknown symbol
        parsed = None
    if base is None:
        if parsed is not None:
            return name, None
        return None, (f"unit {name!r} is not known to cosim and the FMU gives no BaseUnit: "
                      "the port has no unit (connections are not unit-checked)")
    target = from_fmi(base.kg, base.m, base.s, base.A, base.K, base.mol, base.cd, base.rad,
                      float(base.factor), float(base.offset))
    if parsed is not None:
        if parsed == target:
            return name, None
        same_but_rad = (parsed.exponents[:7] == target.exponents[:7]
                        and target.exponents[7] == 0
                        and math.isclose(parsed.factor, target.factor, rel_tol=1e-12)
                        and parsed.offset == target.offset)
        if same_but_rad:
            return name, None
    text = _symbol_for(target)
    if text is None:
        return None, (f"unit {name!r} (factor {target.factor:g}, offset {target.offset:g}, "
                      f"dimension {target.dimension_string()}) cannot be written in cosim's "
                      "unit grammar: the port has no unit (connections are not unit-checked)")
    if parsed is not None:
        return text, (f"unit {name!r} means {parsed.dimension_string()} (factor "
                      f"{parsed.factor:g}) to cosim but the FMU defines it as "
                      f"{target.dimension_string()} (factor {target.factor:g}); the FMU's "
                      f"definition is used: {text!r}")
    return text, None
