"""The SSP data model: namespaces, errors and the system read from an SSD.

:class:`SSPSystem` (with its :class:`SSPComponent`, :class:`SSPConnector` and
:class:`SSPConnection`) is what :func:`~fmus.ssp.read_ssp` returns and
:func:`~fmus.ssp.load_ssp` runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cosim.errors import BuildError

from ..errors import FMUArchiveError, FMUError

NS = {"ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription",
      "ssc": "http://ssp-standard.org/SSP1/SystemStructureCommon",
      "ssv": "http://ssp-standard.org/SSP1/SystemStructureParameterValues",
      "ssm": "http://ssp-standard.org/SSP1/SystemStructureParameterMapping",
      "ssb": "http://ssp-standard.org/SSP1/SystemStructureSignalDictionary"}
COSIM_NS = "urn:cosim:ssp"
ANNOTATION_TYPE = "org.cosim.master"
SSD_NAME = "SystemStructure.ssd"
FMU_TYPE = "application/x-fmu-sharedlibrary"
PSET_TYPE = "application/x-ssp-parameter-set"
BASE = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")
KIND_OF_TYPE = {"Real": "real", "Integer": "int", "Boolean": "bool", "String": "string"}
TYPE_OF_KIND = {v: k for k, v in KIND_OF_TYPE.items()}


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
    kind: str                      # input, output, parameter, calculatedParameter, inout
    type: str | None = None        # Real, Integer, Boolean, String, Enumeration or None
    unit: str | None = None


@dataclass
class SSPComponent:
    """An FMU component: its resource, connectors and the values bound to its variables."""

    name: str
    source: str                    # the URI in the SSD, e.g. "resources/osc.fmu"
    connectors: list = field(default_factory=list)
    parameters: dict = field(default_factory=dict)   # {FMU variable name: value (FMU unit)}
    implementation: str = "any"
    path: Path | None = field(default=None, compare=False)   # the FMU file on disk
    fmu: Any = field(default=None, compare=False, repr=False)  # the loaded FMU
    # binding entries (name, type, value, unit, element, file) in precedence order
    bound: list = field(default_factory=list, compare=False, repr=False)

    def connector(self, name: str) -> SSPConnector | None:
        return next((c for c in self.connectors if c.name == name), None)


@dataclass
class SSPConnection:
    """``start -> end``; an element of ``None`` is a connector of the system itself."""

    start: tuple                   # (component or None, connector)
    end: tuple
    transform: tuple | None = None  # (factor, offset) of a LinearTransformation
    suppress_unit_conversion: bool = False

    def __str__(self) -> str:
        return f"{dotted(self.start)} -> {dotted(self.end)}"


@dataclass
class SSPSystem:
    """A flat SSP system as :func:`read_ssp` reads it (see :mod:`fmus.ssp`).

    ``inputs`` holds the values bound to system input connectors; ``units`` the
    ``<ssd:Units>`` definitions as cosim units; ``step_s`` the macro step of the cosim
    annotation (None if absent).
    """

    name: str
    components: dict = field(default_factory=dict)     # {name: SSPComponent}
    connections: list = field(default_factory=list)    # [SSPConnection]
    connectors: list = field(default_factory=list)     # system-level SSPConnectors
    inputs: dict = field(default_factory=dict)         # {system input connector: value}
    start: float | None = None
    stop: float | None = None
    step_s: float | None = None
    units: dict = field(default_factory=dict)          # {name: cosim Unit}
    description: str = ""
    source: Path | None = field(default=None, compare=False)
    root: Path | None = field(default=None, compare=False)
    _archive: Any = field(default=None, compare=False, repr=False)
    _bound: list = field(default_factory=list, compare=False, repr=False)

    def connector(self, name: str) -> SSPConnector | None:
        return next((c for c in self.connectors if c.name == name), None)

    def master_connections(self) -> list:
        """Connections as :func:`export_ssp` takes them (FMU variable names)."""
        out = []
        for c in self.connections:
            a, b = dotted(c.start), dotted(c.end)
            out.append((a, b, c.transform) if c.transform is not None else (a, b))
        return out

    def export(self, dest: str | os.PathLike, **kw: Any) -> Path:
        """Write this system as an ``.ssp`` (:func:`export_ssp`)."""
        opts = dict(parameters={n: dict(c.parameters) for n, c in self.components.items()},
                    name=self.name, start=self.start if self.start is not None else 0.0,
                    stop=self.stop, step_s=self.step_s, inputs=dict(self.inputs))
        opts.update(kw)
        suppressed = [str(c) for c in self.connections if c.suppress_unit_conversion]
        if suppressed:
            raise SSPError(f"SSP system '{self.name}': export_ssp cannot write "
                           f"suppressUnitConversion (connections {', '.join(suppressed)})")
        from .writing import export_ssp
        return export_ssp(dest, {n: c.fmu or c.path for n, c in self.components.items()},
                          self.master_connections(), **opts)

