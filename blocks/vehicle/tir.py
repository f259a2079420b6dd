"""Reader of ``.tir`` tyre property files (MF-Tyre / MSC Adams PAC2002 format).

A ``.tir`` file is a list of sections ``[NAME]`` holding ``KEY = value`` lines:

* values are numbers (``1.5``, ``-2.8568e-005``, Fortran ``1.0D-3``) or strings in
  single or double quotes (``'PAC2002'``); an unquoted word is kept as a string;
* ``$`` and ``!`` start a comment, on a line of their own or after a value (a quoted
  string may contain them);
* a section may hold a table instead (``[SHAPE]``: a ``{radial width}`` header and
  rows of numbers), kept in :attr:`TirFile.tables`;
* keys are case-insensitive (stored upper case) and unique across the file, so
  coefficients are looked up by key alone (``tir["PCX1"]``).

Checks
------
* Every key is compared with the known MF 5.2 / 6.1 / 6.2 and PAC2002 keys of its
  section (:data:`KNOWN_KEYS`).  Unknown keys and sections are reported in one
  :class:`TirWarning` listing each with its line number (a typo such as ``PKY11``
  is never silently ignored); ``strict=True`` makes this a :class:`TirError`.
* ``[UNITS]`` must be SI (meter, newton, radian, kg, second, pascal): other units
  raise :class:`TirError` (the reader does not convert coefficients).
* :meth:`TirFile.require` raises one :class:`TirError` naming every missing key and
  the section it belongs in.

Model version
-------------
:attr:`TirFile.version` is ``"5.2"``, ``"6.1"`` or ``"6.2"``, from ``FITTYP`` in
``[MODEL]`` following MFeval (M. Furlan's evaluator, validated against TNO
MF-Tyre): ``FITTYP = 6`` or ``21`` is MF 5.2, ``61`` MF 6.1, ``62`` MF 6.2.  MSC Adams
PAC2002 files carry no ``FITTYP``; ``PROPERTY_FILE_FORMAT = 'PAC2002'`` means MF 5.2.
Any other ``FITTYP`` (older MF 5.0/5.1, MF-Swift) raises :class:`TirError`.
``FILE_VERSION`` of ``[MDI_HEADER]`` is kept in :attr:`TirFile.file_version`.
"""

from __future__ import annotations

import copy
import pathlib
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

from cosim.errors import CosimWarning, ParameterError

__all__ = ["KNOWN_KEYS", "TirError", "TirFile", "TirWarning", "parse_tir", "read_tir"]


class TirError(ParameterError):
    """A ``.tir`` file cannot be used: syntax, units, version, or missing coefficients."""


class TirWarning(CosimWarning):
    """A ``.tir`` file holds keys or sections the reader does not know (ignored)."""


def _seq(prefix: str, n: int, start: int = 1, skip: tuple = ()) -> list[str]:
    return [f"{prefix}{i}" for i in range(start, n + 1) if i not in skip]


#: Known keys per section (MF 5.2, MF 6.1/6.2, PAC2002).  Keys read by the models and
#: keys accepted but not used (vertical dynamics, belt, contact, turn slip) alike.
KNOWN_KEYS: dict[str, set[str]] = {
    "MDI_HEADER": {"FILE_TYPE", "FILE_VERSION", "FILE_FORMAT"},
    "UNITS": {"LENGTH", "FORCE", "ANGLE", "MASS", "TIME", "PRESSURE"},
    "MODEL": {"PROPERTY_FILE_FORMAT", "FITTYP", "TYRESIDE", "LONGVL", "VXLOW", "USE_MODE",
              "ROAD_INCREMENT", "ROAD_DIRECTION", "MFSAFE1", "MFSAFE2", "MFSAFE3", "TYPE",
              "HMAX_LOCAL", "TIME_SWITCH_INTEG", "USER_SUB_ID", "N_TIRE_STATES",
              "BELT_DYNAMICS", "CONTACT_MODEL", "FUNCTION_NAME", "N_PARAMETERS",
              "SWITCH_INTEG", "TIRE_SIDE"},
    "DIMENSION": {"UNLOADED_RADIUS", "WIDTH", "ASPECT_RATIO", "RIM_RADIUS", "RIM_WIDTH",
                  "BOTTOMING_RADIUS"},
    "OPERATING_CONDITIONS": {"INFLPRES", "NOMPRES"},
    "TIRE_CONDITIONS": {"IP", "IP_NOM"},
    "INERTIA": {"MASS", "IXX", "IYY", "BELT_MASS", "BELT_IXX", "BELT_IYY", "GRAVITY"},
    "VERTICAL": {"FNOMIN", "VERTICAL_STIFFNESS", "VERTICAL_DAMPING", "MC_CONTOUR_A",
                 "MC_CONTOUR_B", "BREFF", "DREFF", "FREFF", "Q_RE0", "Q_V1", "Q_V2", "Q_FZ1",
                 "Q_FZ2", "Q_FZ3", "Q_FCX", "Q_FCY", "Q_FCY2", "Q_CAM", "Q_CAM1", "Q_CAM2",
                 "Q_CAM3", "Q_FYS1", "Q_FYS2", "Q_FYS3", "PFZ1", "BOTTOM_OFFST",
                 "BOTTOM_STIFF", "DYNAMIC_STIFFNESS", "DYNAMIC_DAMPING"},
    "STRUCTURAL": {"LONGITUDINAL_STIFFNESS", "LATERAL_STIFFNESS", "YAW_STIFFNESS",
                   "FREQ_LONG", "FREQ_LAT", "FREQ_YAW", "FREQ_WINDUP", "DAMP_LONG",
                   "DAMP_LAT", "DAMP_YAW", "DAMP_WINDUP", "DAMP_RESIDUAL", "DAMP_VLOW",
                   "Q_BVX", "Q_BVT", "PCFX1", "PCFX2", "PCFX3", "PCFY1", "PCFY2", "PCFY3",
                   "PCMZ1"},
    "CONTACT_PATCH": {"Q_RA1", "Q_RA2", "Q_RB1", "Q_RB2", "Q_A1", "Q_A2", "ELLIPS_SHIFT",
                      "ELLIPS_LENGTH", "ELLIPS_HEIGHT", "ELLIPS_ORDER", "ELLIPS_MAX_STEP",
                      "ELLIPS_NWIDTH", "ELLIPS_NLENGTH", "ENV_C1", "ENV_C2"},
    "INFLATION_PRESSURE_RANGE": {"PRESMIN", "PRESMAX"},
    "VERTICAL_FORCE_RANGE": {"FZMIN", "FZMAX"},
    "LONG_SLIP_RANGE": {"KPUMIN", "KPUMAX"},
    "SLIP_ANGLE_RANGE": {"ALPMIN", "ALPMAX"},
    "INCLINATION_ANGLE_RANGE": {"CAMMIN", "CAMMAX"},
    "SCALING_COEFFICIENTS": {
        "LFZO", "LCX", "LMUX", "LEX", "LKX", "LHX", "LVX", "LGAX", "LCY", "LMUY", "LEY",
        "LKY", "LKYC", "LKZC", "LHY", "LVY", "LGAY", "LTR", "LRES", "LGAZ", "LXAL", "LYKA",
        "LVYKA", "LS", "LSGKP", "LSGAL", "LGYR", "LMX", "LVMX", "LMY", "LMP", "LCZ", "LIP",
        "LMUV", "LKG", "LKYG"},
    "LONGITUDINAL_COEFFICIENTS": {
        "PCX1", *_seq("PDX", 3), *_seq("PEX", 4), *_seq("PKX", 3), *_seq("PHX", 2),
        *_seq("PVX", 2), *_seq("PPX", 4), *_seq("RBX", 3), "RCX1", *_seq("REX", 2), "RHX1",
        *_seq("PTX", 4)},
    "OVERTURNING_COEFFICIENTS": {*_seq("QSX", 14), "PPMX1", "QPX1"},
    "LATERAL_COEFFICIENTS": {
        "PCY1", *_seq("PDY", 3), *_seq("PEY", 5), *_seq("PKY", 7), *_seq("PHY", 3),
        *_seq("PVY", 4), *_seq("PPY", 5), *_seq("RBY", 4), "RCY1", *_seq("REY", 2),
        *_seq("RHY", 2), *_seq("RVY", 6), *_seq("PTY", 3)},
    "ROLLING_COEFFICIENTS": set(_seq("QSY", 8)),
    "ALIGNING_COEFFICIENTS": {
        *_seq("QBZ", 10, skip=(7, 8)), "QCZ1", *_seq("QDZ", 11, skip=(5,)), *_seq("QEZ", 5),
        *_seq("QHZ", 4), *_seq("PPZ", 2), *_seq("SSZ", 4), "QTZ1", "MBELT"},
    "TURNSLIP_COEFFICIENTS": {
        *_seq("PDXP", 3), "PKYP1", *_seq("PDYP", 4), *_seq("PHYP", 4), *_seq("PECP", 2),
        "QDTP1", *_seq("QCRP", 2), "QBRP1", *_seq("QDRP", 2)},
    "SHAPE": set(),  # a table
}

#: Accepted spellings of the SI units in ``[UNITS]``.
_SI_UNITS = {
    "LENGTH": {"meter", "metre", "m", "meters", "metres"},
    "FORCE": {"newton", "n", "newtons"},
    "ANGLE": {"radian", "radians", "rad"},
    "MASS": {"kg", "kilogram", "kilograms"},
    "TIME": {"second", "seconds", "s", "sec"},
    "PRESSURE": {"pascal", "pa", "pascals"},
}

_FITTYP_VERSION = {6: "5.2", 21: "5.2", 61: "6.1", 62: "6.2"}
_SECTION = re.compile(r"^\[\s*([A-Za-z0-9_]+)\s*\]\s*(?:[$!].*)?$")
_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eEdD][+-]?\d+)?$")


def _number(text: str) -> float | None:
    if _NUMBER.match(text):
        return float(text.replace("D", "E").replace("d", "e"))
    return None


@dataclass
class TirFile:
    """The contents of a ``.tir`` file (see module docstring).

    Attributes
    ----------
    name : str
        File path, or the name given to :func:`parse_tir`; used in every message.
    values : dict
        ``KEY -> float or str`` over all sections.
    sections : dict
        ``SECTION -> {KEY: value}``.
    lines : dict
        ``KEY -> line number`` (1-based).
    tables : dict
        ``SECTION -> list of rows`` for table sections such as ``[SHAPE]``.
    unknown : list
        ``(section, key, line)`` of the keys not in :data:`KNOWN_KEYS` (``key`` is
        ``None`` for an unknown section).
    version : str
        ``"5.2"``, ``"6.1"`` or ``"6.2"``.
    fittyp : int or None
    file_version : float or None
    """

    name: str
    values: dict[str, Any] = field(default_factory=dict)
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    tables: dict[str, list[list[float]]] = field(default_factory=dict)
    unknown: list[tuple[str, str | None, int]] = field(default_factory=list)
    version: str = ""
    fittyp: int | None = None
    file_version: float | None = None

    # ------------------------------------------------------------ lookups
    def __contains__(self, key: str) -> bool:
        return key.upper() in self.values

    def section_of(self, key: str) -> str:
        """The section where ``key`` belongs (from :data:`KNOWN_KEYS`), or ``'?'``."""
        key = key.upper()
        for sec, keys in KNOWN_KEYS.items():
            if key in keys:
                return sec
        return "?"

    def __getitem__(self, key: str) -> Any:
        try:
            return self.values[key.upper()]
        except KeyError:
            raise TirError(f"{self.name}: coefficient {key.upper()} not found (it belongs "
                           f"in [{self.section_of(key)}])") from None

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key.upper(), default)

    def number(self, key: str, default: float | None = None) -> float:
        """Numeric value of ``key`` (``default`` if absent); a string value is an error."""
        key = key.upper()
        if key not in self.values:
            if default is None:
                return self[key]  # raises, naming the section
            return float(default)
        v = self.values[key]
        if isinstance(v, str):
            raise TirError(f"{self.name}:{self.lines.get(key, '?')}: {key} = {v!r} is not a "
                           "number")
        return float(v)

    def require(self, *keys: str) -> None:
        """Raise one :class:`TirError` naming every key of ``keys`` that is missing."""
        missing = [k.upper() for k in keys if k.upper() not in self.values]
        if missing:
            listing = ", ".join(f"{k} ([{self.section_of(k)}])" for k in missing)
            raise TirError(f"{self.name}: missing required coefficient(s) for the MF "
                           f"{self.version} tyre model: {listing}")

    def replace(self, **values: Any) -> TirFile:
        """A copy with some values changed or added (keys upper-cased), e.g. to zero the
        shift coefficients in a test or to tune a coefficient."""
        new = copy.deepcopy(self)
        for k, v in values.items():
            k = k.upper()
            new.values[k] = v
            sec = new.section_of(k)
            new.sections.setdefault(sec, {})[k] = v
        return new


def read_tir(path: str | pathlib.Path, *, strict: bool = False) -> TirFile:
    """Read a ``.tir`` file (see module docstring); ``strict`` makes unknown keys an error."""
    p = pathlib.Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise TirError(f"cannot read tyre property file '{p}': {exc.strerror}") from None
    return parse_tir(text, name=str(p), strict=strict)


def _split_value(raw: str) -> tuple[Any, bool]:
    """``(value, ok)`` from the text after ``=``: a quoted string, a number, or a word."""
    raw = raw.strip()
    if raw[:1] in ("'", '"'):
        end = raw.find(raw[0], 1)
        if end < 0:
            return raw, False
        return raw[1:end], True
    token = re.split(r"[$!\s]", raw, maxsplit=1)[0]
    if not token:
        return "", False
    num = _number(token)
    return (num if num is not None else token), True


def parse_tir(text: str, *, name: str = "<tir>", strict: bool = False) -> TirFile:
    """Parse the text of a ``.tir`` file (see module docstring)."""
    tir = TirFile(name=name)
    section: str | None = None
    errors: list[str] = []
    duplicates: list[str] = []
    for n, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s or s[0] in "$!":
            continue
        m = _SECTION.match(s)
        if m:
            section = m.group(1).upper()
            tir.sections.setdefault(section, {})
            if section not in KNOWN_KEYS:
                tir.unknown.append((section, None, n))
            continue
        m = _KEY.match(s)
        if m:
            key = m.group(1).upper()
            value, ok = _split_value(m.group(2))
            if not ok:
                errors.append(f"line {n}: {key}: no value or an unterminated quote: {s!r}")
                continue
            if section is None:
                errors.append(f"line {n}: {key} appears before any [SECTION]")
                continue
            if key in tir.values:
                duplicates.append(f"{key} (lines {tir.lines[key]} and {n})")
            tir.values[key] = value
            tir.lines[key] = n
            tir.sections[section][key] = value
            if key not in KNOWN_KEYS.get(section, ()):
                tir.unknown.append((section, key, n))
            continue
        if section is not None and s.startswith("{"):
            tir.tables.setdefault(section, [])
            continue
        row = [_number(t) for t in s.split()]
        if section is not None and row and all(v is not None for v in row):
            tir.tables.setdefault(section, []).append([float(v) for v in row])
            continue
        errors.append(f"line {n}: expected '[SECTION]', 'KEY = value' or a table row, "
                      f"got {s!r}")
    if errors:
        raise TirError(f"{name}: cannot parse: " + "; ".join(errors))
    if duplicates:
        warnings.warn(TirWarning(f"{name}: key(s) given twice, the last value is used: "
                                 + ", ".join(duplicates)), stacklevel=2)
    _check_units(tir)
    _identify(tir)
    if tir.unknown:
        items = ", ".join(f"[{sec}] (line {n})" if key is None else f"{key} (line {n}, [{sec}])"
                          for sec, key, n in tir.unknown)
        msg = (f"{name}: {len(tir.unknown)} unknown key(s)/section(s) not used by the tyre "
               f"models: {items}")
        if strict:
            raise TirError(msg + " (strict mode)")
        warnings.warn(TirWarning(msg + "; check for typos, or pass strict=True to make "
                                 "this an error"), stacklevel=2)
    return tir


def _check_units(tir: TirFile) -> None:
    bad = []
    for key, value in tir.sections.get("UNITS", {}).items():
        accepted = _SI_UNITS.get(key)
        if accepted is not None and str(value).strip().lower() not in accepted:
            bad.append(f"{key} = {value!r} (line {tir.lines[key]})")
    if bad:
        raise TirError(f"{tir.name}: only SI tyre property files are supported (meter, "
                       f"newton, radian, kg, second, pascal); [UNITS] has " + ", ".join(bad)
                       + ": convert the file")


def _identify(tir: TirFile) -> None:
    fv = tir.get("FILE_VERSION")
    tir.file_version = fv if isinstance(fv, float) else None
    fittyp = tir.get("FITTYP")
    fmt = str(tir.get("PROPERTY_FILE_FORMAT", "")).upper()
    if fittyp is not None:
        if isinstance(fittyp, str) or float(fittyp) != int(fittyp) \
                or int(fittyp) not in _FITTYP_VERSION:
            raise TirError(f"{tir.name}:{tir.lines['FITTYP']}: FITTYP = {fittyp!r} is not "
                           "supported; known: 6 or 21 (MF 5.2), 61 (MF 6.1), 62 (MF 6.2)")
        tir.fittyp = int(fittyp)
        tir.version = _FITTYP_VERSION[tir.fittyp]
    elif fmt == "PAC2002":
        tir.version = "5.2"
    else:
        where = f"PROPERTY_FILE_FORMAT = {fmt!r}" if fmt else "no PROPERTY_FILE_FORMAT"
        raise TirError(f"{tir.name}: cannot tell the Magic Formula version: no FITTYP in "
                       f"[MODEL] and {where}; add FITTYP = 6 or 21 (MF 5.2), 61 (MF 6.1) or "
                       "62 (MF 6.2)")
