"""What the import knows of an FMU: the typed records :func:`fmus.description.read_description`
returns.

:class:`FMUInfo` (metadata, interfaces with their capability flags, variables, states,
event indicators, feedthrough, the problems found; ``str(info)`` prints it with a ports
table), its :class:`Variable` records (port name, causality, variability, FMI type and
kind, cosim unit, start/min/max, clock membership) and an FMI 3 clock's
:class:`ClockInfo`.  Reading and checking the XML is :mod:`fmus.description`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .description_rules import fmt

__all__ = ["CAP_ALIASES", "INT_TYPES", "REAL_TYPES", "ClockInfo", "FMUInfo", "Variable"]

#: FMI 3 spellings of capability flags and the FMI 2 names they are also stored under
CAP_ALIASES = {"canGetAndSetFMUState": "canGetAndSetFMUstate",
               "canSerializeFMUState": "canSerializeFMUstate",
               "providesDirectionalDerivatives": "providesDirectionalDerivative"}

REAL_TYPES = frozenset({"Real", "Float64", "Float32"})
INT_TYPES = frozenset({"Integer", "Enumeration", "Int8", "UInt8", "Int16", "UInt16", "Int32",
                       "UInt32", "Int64", "UInt64"})


@dataclass(frozen=True)
class ClockInfo:
    """The attributes of an FMI 3 ``Clock`` variable (FMI 3.0 section 2.4.7.5).

    ``interval_variability`` is ``"constant"``, ``"fixed"``, ``"tunable"``,
    ``"changing"``, ``"countdown"`` or ``"triggered"``; ``interval``/``shift`` are
    ``intervalDecimal``/``shiftDecimal`` [s], ``interval_counter``/``shift_counter``
    with ``resolution`` the exact (integer) form when ``supports_fraction``.
    """

    interval_variability: str
    interval: float | None = None
    shift: float | None = None
    supports_fraction: bool = False
    resolution: int | None = None
    interval_counter: int | None = None
    shift_counter: int | None = None
    priority: int | None = None
    can_be_deactivated: bool = False

    @property
    def periodic(self) -> bool:
        """Whether the importer knows its ticks in advance (a time-based clock)."""
        return self.interval_variability in ("constant", "fixed", "tunable")


@dataclass(eq=False)
class Variable:
    """One FMU variable as the import sees it.

    Start values are typed by the variable: ``float`` (Real/Float), Python ``int``
    (every integer type, exact for Int64/UInt64; arrays ``int64``, ``uint64`` for
    UInt64), ``bool``, ``str``, ``bytes`` (Binary, given in hex in the XML); clocks have
    none.  ``clocks`` names the clocks a clocked variable belongs to; ``clock`` holds
    a Clock variable's own attributes.
    """

    name: str
    vr: int
    type: str
    causality: str
    variability: str
    initial: str | None = None
    start: Any = None
    min: float | None = None
    max: float | None = None
    nominal: float | None = None
    unit: str | None = None          # cosim unit string (None: unspecified)
    fmi_unit: str | None = None      # the FMU's own unit name
    display_unit: str | None = None
    description: str = ""
    shape: tuple = ()
    port: str = ""                   # the cosim port/parameter name
    derivative_of: Variable | None = None
    intermediate_update: bool = False
    line: int | None = None
    clocks: tuple = ()               # names of the clocks this variable is clocked by
    clock: ClockInfo | None = None   # kind "clock": its attributes
    bad_start: bool = False          # a start attribute that did not parse (reported)

    @property
    def kind(self) -> str:
        """``"real"``, ``"int"``, ``"bool"``, ``"string"``, ``"binary"``, ``"clock"`` or
        ``"other"``."""
        if self.type in REAL_TYPES:
            return "real"
        if self.type in INT_TYPES:
            return "int"
        return _KINDS.get(self.type, "other")

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    @property
    def dtype(self) -> type:
        return {"real": float, "int": int, "bool": bool}.get(self.kind, object)

    @property
    def settable_before_init(self) -> bool:
        """Whether FMI allows setting it before initialization ends (FMI 2.0 section
        4.2.4/3.2.3, FMI 3.0 section 2.3.3): not a constant, clock or the independent
        variable, and a parameter, an input or ``initial="exact"``/``"approx"``.

        A ``structuralParameter`` is set in Configuration Mode (see :attr:`structural`).
        """
        if self.variability == "constant" or self.kind == "clock" \
                or self.causality == "independent":
            return False
        return (self.causality in ("parameter", "structuralParameter", "input")
                or self.initial in ("exact", "approx"))

    @property
    def structural(self) -> bool:
        """An FMI 3 structural parameter (set only in Configuration Mode)."""
        return self.causality == "structuralParameter"


_KINDS = {"Boolean": "bool", "String": "string", "Binary": "binary", "Clock": "clock"}


@dataclass
class FMUInfo:
    """Everything the import needs from (and shows of) an FMU's model description.

    ``str(info)`` prints the metadata and a ports table.  :attr:`md` is fmpy's
    ``ModelDescription``: kept from the read, or (a record from the FMU cache,
    :mod:`fmus.fmu_cache`) read from the extracted FMU in ``md_root`` when first asked for.
    """

    path: Path
    fmi_version: str
    model_name: str
    token: str
    description: str = ""
    author: str = ""
    version: str = ""
    copyright: str = ""
    license: str = ""
    generation_tool: str = ""
    generation_date: str = ""
    interfaces: dict = field(default_factory=dict)   # "ModelExchange"/"CoSimulation" -> caps
    default_experiment: dict = field(default_factory=dict)
    variables: list = field(default_factory=list)
    states: list = field(default_factory=list)        # state Variables, in FMU order
    derivatives: list = field(default_factory=list)   # their derivative Variables
    n_event_indicators: int = 0
    feedthrough: dict = field(default_factory=dict)   # output name -> set of inputs | None
    #: output name -> inputs it depends on in Initialization Mode (None: all)
    initial_feedthrough: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)         # unit mapping notes
    _md: Any = field(default=None, repr=False)         # fmpy's ModelDescription (``md``)
    md_root: str | None = field(default=None, repr=False)  # where to read it from if None

    @property
    def md(self) -> Any:
        """fmpy's ``ModelDescription`` of the FMU (class docstring)."""
        if self._md is None and self.md_root is not None:
            from fmpy.model_description import read_model_description
            self._md = read_model_description(self.md_root, validate=False)
        return self._md

    # ------------------------------------------------------------ lookups
    @property
    def fmi_major(self) -> int:
        return int(self.fmi_version.split(".")[0])

    @property
    def by_name(self) -> dict:
        return {v.name: v for v in self.variables}

    def variable(self, name: str) -> Variable:
        """The variable called ``name`` (FMU name or port name); the error lists choices."""
        for v in self.variables:
            if v.name == name or v.port == name:
                return v
        from cosim.block import did_you_mean

        from .errors import FMUConfigError
        raise FMUConfigError(f"FMU '{self.path.name}' has no variable {name!r}; "
                             + did_you_mean(name, [v.name for v in self.variables]))

    def _with(self, causality: str) -> list:
        return [v for v in self.variables if v.causality == causality]

    @property
    def inputs(self) -> list:
        return self._with("input")

    @property
    def outputs(self) -> list:
        return self._with("output")

    @property
    def clocks(self) -> list:
        """The FMI 3 Clock variables."""
        return [v for v in self.variables if v.kind == "clock"]

    def clocked_by(self, clock: str) -> list:
        """The variables clocked by the clock called ``clock`` (their ``clocks`` name it)."""
        name = self.variable(clock).name
        return [v for v in self.variables if name in v.clocks]

    @property
    def settable(self) -> list:
        """The variables that may be set before initialization (``--set``, ``start=``)."""
        return [v for v in self.variables if v.settable_before_init]

    @property
    def parameters(self) -> list:
        """Parameters the user can set (``parameter``; FMI 3 ``structuralParameter`` too)."""
        return [v for v in self.variables if v.causality in ("parameter", "structuralParameter")]

    def capability(self, interface: str, name: str, default: Any = False) -> Any:
        return self.interfaces.get(interface, {}).get(name, default)

    # ----------------------------------------------------------- display
    def __str__(self) -> str:
        lines = [f"FMU {self.path.name}: model '{self.model_name}', FMI {self.fmi_version}"]
        for label, val in (("description", self.description), ("author", self.author),
                           ("version", self.version), ("generated by", self.generation_tool),
                           ("generated on", self.generation_date),
                           ("copyright", self.copyright), ("license", self.license)):
            if val:
                lines.append(f"  {label + ':':<14}{val}")
        for itf, caps in self.interfaces.items():
            caps = {k: v for k, v in caps.items()
                    if not (k in CAP_ALIASES.values() and any(
                        a in caps for a, b in CAP_ALIASES.items() if b == k))}
            on = [k for k, v in caps.items() if v is True]
            extra = [f"{k}={v}" for k, v in caps.items()
                     if v not in (True, False, None, 0) and k != "modelIdentifier"]
            lines.append(f"  {itf}: {caps.get('modelIdentifier')}; "
                         + (", ".join(on + extra) or "no optional capabilities"))
        if self.default_experiment:
            lines.append("  default experiment: " + ", ".join(
                f"{k}={v}" for k, v in self.default_experiment.items()))
        lines.append(f"  {len(self.states)} continuous states, {self.n_event_indicators} event "
                     "indicators")
        rows = [("causality", "port", "FMU name", "type", "unit", "start", "min", "max",
                 "variability", "description")]
        for v in self.variables:
            if v.causality not in ("input", "output", "parameter", "structuralParameter"):
                continue
            rows.append((v.causality, v.port, v.name if v.name != v.port else "",
                         v.type + (str(list(v.shape)) if v.shape else ""),
                         v.fmi_unit or v.unit or "-",  # as the FMU writes it
                         fmt(v.start), fmt(v.min), fmt(v.max), v.variability,
                         v.description[:40]))
        widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            lines.append("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
        for p in self.problems:
            lines.append(f"  {p.severity}: {p}")
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)
