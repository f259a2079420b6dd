"""The SSP data model: namespaces, errors and the (flattened) system read from an SSD.

:class:`SSPSystem` (with its :class:`SSPComponent`, :class:`SSPConnector`,
:class:`SSPConnection` and :class:`SSPSolver`) is what :func:`~fmus.ssp.read_ssp` returns and
:func:`~fmus.ssp.load_ssp` runs.  Nested systems are flattened when read: a component of
system ``sc`` inside the top-level system is called ``"sc/comp"``, a connector of a nested
system ``"sc/conn"`` (``/`` separates the levels, ``.`` a component from its variable).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cosim.errors import BuildError, UnitError
from cosim.units import conversion, parse_unit

from ..errors import FMUArchiveError, FMUError

NS = {"ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription",
      "ssc": "http://ssp-standard.org/SSP1/SystemStructureCommon",
      "ssv": "http://ssp-standard.org/SSP1/SystemStructureParameterValues",
      "ssm": "http://ssp-standard.org/SSP1/SystemStructureParameterMapping",
      "ssb": "http://ssp-standard.org/SSP1/SystemStructureSignalDictionary"}
COSIM_NS = "urn:cosim:ssp"
ANNOTATION_TYPE = "org.cosim.master"
#: OMSimulator's vendor annotation (``oms:SimulationInformation``) and its namespace
OMS_TYPE = "org.openmodelica"
OMS_NS = "https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd"
SSD_NAME = "SystemStructure.ssd"
FMU_TYPE = "application/x-fmu-sharedlibrary"
SSD_TYPE = "application/x-ssp-definition"
PSET_TYPE = "application/x-ssp-parameter-set"
PMAP_TYPE = "application/x-ssp-parameter-mapping"
BASE = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")
#: SSP 1.0 and 2.0 type elements (connectors ``ssc:``, values ``ssv:``) -> cosim kind
KIND_OF_TYPE = {"Real": "real", "Float64": "real", "Float32": "real",
                "Integer": "int", "Int8": "int", "UInt8": "int", "Int16": "int", "UInt16": "int",
                "Int32": "int", "UInt32": "int", "Int64": "int", "UInt64": "int",
                "Boolean": "bool", "String": "string", "Enumeration": "enum", "Binary": "binary"}
#: what the export writes for a cosim kind (SSP 1.0 names)
TYPE_OF_KIND = {"real": "Real", "int": "Integer", "bool": "Boolean", "string": "String"}
#: the ranges of the SSP integer types (the schema's xs:int, xs:long, ...)
INT_RANGE = {"Integer": (-2**31, 2**31 - 1), "Int32": (-2**31, 2**31 - 1),
             "Int8": (-2**7, 2**7 - 1), "UInt8": (0, 2**8 - 1), "Int16": (-2**15, 2**15 - 1),
             "UInt16": (0, 2**16 - 1), "UInt32": (0, 2**32 - 1), "Int64": (-2**63, 2**63 - 1),
             "UInt64": (0, 2**64 - 1)}


class SSPError(FMUError, BuildError):
    """An SSP file is malformed, inconsistent with its FMUs, or uses an unsupported feature."""


class SSPArchiveError(SSPError, FMUArchiveError):
    """The ``.ssp`` file is not a usable archive (not a ZIP, unsafe entries, too large)."""


def q(prefix: str, tag: str) -> str:
    """The Clark name ``{namespace}tag`` of ``prefix:tag``."""
    return f"{{{NS[prefix]}}}{tag}"


def dotted(end: tuple) -> str:
    """A connection end ``(component or None, connector)`` as ``"component.connector"``."""
    return ".".join(p for p in end if p)


@dataclass
class SSPConnector:
    """A connector of a component or of the system."""

    name: str
    kind: str                      # input, output, parameter, calculatedParameter, inout...
    type: str | None = None        # Real, Integer, Boolean, String, Enumeration... or None
    unit: str | None = None
    where: tuple | None = field(default=None, compare=False, repr=False)  # (file, line)


@dataclass
class SSPComponent:
    """An FMU component: its resource, connectors and the values bound to its variables.

    ``implementation`` is what the SSD asks for; ``unit`` names the Model Exchange unit
    (a group of ME components integrated together by one solver, see
    :attr:`SSPSystem.solvers`) the component runs in, ``None`` for Co-Simulation.
    """

    name: str
    source: str                    # the URI in the SSD, e.g. "resources/osc.fmu"
    connectors: list = field(default_factory=list)
    parameters: dict = field(default_factory=dict)   # {FMU variable name: value (FMU unit)}
    implementation: str = "any"
    unit: str | None = None
    path: Path | None = field(default=None, compare=False)   # the FMU file on disk
    fmu: Any = field(default=None, compare=False, repr=False)  # the loaded FMU
    # binding entries (values.Bound) in precedence order (later wins)
    bound: list = field(default_factory=list, compare=False, repr=False)
    element: Any = field(default=None, compare=False, repr=False)  # (file, line) in the SSD

    def connector(self, name: str) -> SSPConnector | None:
        return next((c for c in self.connectors if c.name == name), None)


@dataclass
class SSPConnection:
    """``start -> end``; an element of ``None`` is a connector of the system itself.

    ``transform`` is SSP's ``LinearTransformation`` ``(factor, offset)``: the end gets
    ``factor * source + offset`` with the source already converted to the end's unit
    (unless ``suppress_unit_conversion``).  Connections across nested systems are
    flattened into one transformation from the first source to the last end.
    """

    start: tuple                   # (component or None, connector)
    end: tuple
    transform: tuple | None = None
    suppress_unit_conversion: bool = False

    def __str__(self) -> str:
        return f"{dotted(self.start)} -> {dotted(self.end)}"


@dataclass
class SSPSolver:
    """How the Model Exchange components of one unit are integrated (cosim solver names).

    ``origin`` says where the settings come from (an annotation, or the default).
    """

    method: str = "bdf"
    dt: float | None = None
    rtol: float | None = None
    atol: float | None = None
    max_step: float | None = None
    origin: str = field(default="default", compare=False)

    def options(self) -> dict:
        """Keyword arguments of :class:`~cosim.subsystem.DiagramSubsystem`."""
        out: dict = {"solver": self.method}
        for k in ("dt", "rtol", "atol", "max_step"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        return out


@dataclass
class SSPSystem:
    """An SSP system as :func:`read_ssp` reads it (see :mod:`fmus.ssp`), flattened.

    ``inputs`` holds the values bound to system input connectors (nested ones as
    ``"sub/conn"``); ``parameters`` the values bound to system parameter connectors;
    ``units`` the ``<ssd:Units>`` definitions as cosim units; ``step_s`` the macro step
    of an annotation (cosim's or OMSimulator's ``FixedStepMaster``, None if absent);
    ``tolerance`` the FMUs' relative tolerance and ``step_control`` the settings of a
    variable-step master from OMSimulator's annotations; ``solvers`` the Model Exchange
    units; ``notes`` what was read past (unknown annotations and settings).
    """

    name: str
    components: dict = field(default_factory=dict)     # {name: SSPComponent}
    connections: list = field(default_factory=list)    # [SSPConnection]
    connectors: list = field(default_factory=list)     # system-level SSPConnectors
    inputs: dict = field(default_factory=dict)         # {system input connector: value}
    parameters: dict = field(default_factory=dict)     # {system parameter connector: value}
    start: float | None = None
    stop: float | None = None
    step_s: float | None = None
    tolerance: float | None = None
    step_control: dict | None = None
    solvers: dict = field(default_factory=dict)        # {ME unit: SSPSolver}
    units: dict = field(default_factory=dict)          # {name: cosim Unit}
    description: str = ""
    version: str = field(default="1.0", compare=False)
    notes: list = field(default_factory=list, compare=False)
    source: Path | None = field(default=None, compare=False)
    root: Path | None = field(default=None, compare=False)
    _archive: Any = field(default=None, compare=False, repr=False)
    _bound: list = field(default_factory=list, compare=False, repr=False)

    def connector(self, name: str) -> SSPConnector | None:
        return next((c for c in self.connectors if c.name == name), None)

    def end_unit(self, end: tuple) -> Any:
        """The cosim unit at a connection end (the FMU variable's, else the connector's)."""
        if end[0] is not None:
            comp = self.components[end[0]]
            if comp.fmu is not None:
                return comp.fmu.info.by_name[end[1]].unit
            c = comp.connector(end[1])
        else:
            c = self.connector(end[1])
        return unit_of(c.unit, self.units) if c is not None and c.unit else None

    def master_transform(self, conn: SSPConnection) -> tuple | None:
        """``conn``'s transformation as :class:`~cosim.master.MasterScheduler` takes it.

        The master applies ``(factor, offset)`` in the source's unit and converts to the
        end's unit afterwards; SSP converts first.
        """
        if conn.transform is None and not conn.suppress_unit_conversion:
            return None
        f, o = conn.transform or (1.0, 0.0)
        s0, b0 = conversion(self.end_unit(conn.start), self.end_unit(conn.end))
        total = (f, o) if conn.suppress_unit_conversion else (f * s0, f * b0 + o)
        out = (total[0] / s0, (total[1] - b0) / s0)
        return None if out == (1.0, 0.0) else out

    def master_connections(self) -> list:
        """Connections as :func:`export_ssp` takes them (FMU variable names, the master's
        ``(factor, offset)``); signal connections only."""
        out = []
        for c in self.connections:
            a, b = dotted(c.start), dotted(c.end)
            tr = self.master_transform(c)
            out.append((a, b, tr) if tr is not None else (a, b))
        return out

    def connector_units(self) -> dict:
        """``{system connector: (unit name, Unit)}`` of the connectors the export writes."""
        used = {c.start[1] for c in self.connections if c.start[0] is None} | {
            c.end[1] for c in self.connections if c.end[0] is None}
        out = {}
        for c in self.connectors:
            u = unit_of(c.unit, self.units) if c.unit else None
            if c.name in used and u is not None:
                out[c.name] = (c.unit, u)
        return out

    def structure(self) -> dict:
        """What makes the master: components (source, ME unit, bound values), the
        flattened connections, system inputs and their values, solvers, step and
        experiment (a system exported and read again has the same structure)."""
        return {"components": {n: (c.source, c.unit, c.parameters)
                               for n, c in self.components.items()},
                "connections": [(c.start, c.end, c.transform, c.suppress_unit_conversion)
                                for c in self.connections],
                "inputs": dict(self.inputs), "solvers": dict(self.solvers),
                "step_s": self.step_s, "tolerance": self.tolerance,
                "experiment": (self.start, self.stop)}


def unit_of(name: str | None, units: dict) -> Any:
    """The unit called ``name``: from ``<Units>``, else cosim's grammar, else None."""
    if not name:
        return None
    if name in units:
        return units[name]
    try:
        return parse_unit(name)
    except UnitError:
        return None
