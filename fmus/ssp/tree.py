"""The SSD as read, before flattening: a tree of systems (:class:`Node`) holding their
connections as written (:class:`Raw`).

:mod:`~fmus.ssp.reading` builds the tree; :mod:`~fmus.ssp.flatten` makes the flat
:class:`~fmus.ssp.model.SSPSystem` of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import SSPConnector

__all__ = ["Node", "Raw"]


@dataclass
class Raw:
    """A connection as written: ``(element or None, connector)`` ends, in file order."""

    start: tuple
    end: tuple
    transform: tuple | None
    suppress: bool
    el: Any
    file: str
    index: int = 0                 # reading order (the flattened connections keep it)

    def label(self) -> str:
        return f"{'.'.join(p for p in self.start if p)} -> {'.'.join(p for p in self.end if p)}"


@dataclass
class Node:
    """A system of the SSD: connectors, elements (systems and components), connections."""

    name: str
    path: tuple                    # element names from the top-level system (top: ())
    el: Any
    file: str
    connectors: list = field(default_factory=list)
    elements: dict = field(default_factory=dict)     # {local name: Node | SSPComponent}
    connections: list = field(default_factory=list)  # [Raw]
    bound: list = field(default_factory=list)        # [values.Bound], in precedence order
    settings: dict = field(default_factory=dict)     # annotations.system_settings
    units: dict = field(default_factory=dict)

    def connector(self, name: str) -> SSPConnector | None:
        return next((c for c in self.connectors if c.name == name), None)

    def label(self) -> str:
        return f"system '{'/'.join(self.path) or self.name}'"

    def walk(self) -> Any:
        """This system and every system below it, children first."""
        for e in self.elements.values():
            if isinstance(e, Node):
                yield from e.walk()
        yield self
