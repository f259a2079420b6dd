"""Typed ports: name, shape, dtype and physical unit.

A port handle belongs to one block and is used by handle (``block.input("u")``
or the attribute the block stored), never by index.  Scalar ports (shape
``()``) carry Python floats; array ports carry NumPy arrays of their shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .units import Unit, parse_unit

if TYPE_CHECKING:  # pragma: no cover
    from .block import Block


#: The dtype of a text signal (an FMU's String: ``str`` values) and of a bytes signal (an
#: FMU's Binary: ``bytes`` values).  Both are NumPy's object dtype (they compare equal to
#: ``np.dtype(object)`` and connect to each other's ports as objects); the ``metadata`` says
#: which, so that results files write each in its own form (:func:`text_kind`).
STRING = np.dtype(object, metadata={"cosim": "String"})
BINARY = np.dtype(object, metadata={"cosim": "Binary"})


def text_kind(dtype: Any) -> str | None:
    """``"String"`` or ``"Binary"`` for an object dtype (:data:`STRING`, :data:`BINARY`; an
    undeclared object dtype is ``"String"``), ``None`` for numbers."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "OSU":
        return None
    if dtype.kind == "S":
        return "Binary"
    return (dtype.metadata or {}).get("cosim", "String")


def kept_dtype(dtype: Any) -> Any:
    """The dtype results keep a signal of ``dtype`` in (in memory and in the files): its
    own for Boolean and integer signals (exact), object for String and Binary ones
    (``str``, ``bytes``), float for the others."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "biu" else object if dtype.kind in "OSU" else float


def normalize_shape(shape: Any) -> tuple[int, ...]:
    """``()``/``None``/``1``-like scalars -> ``()``; ints -> ``(n,)``."""
    if shape is None:
        return ()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def format_shape(shape: tuple[int, ...]) -> str:
    return "scalar" if shape == () else str(shape)


@dataclass(eq=False)
class Port:
    """Common part of input and output ports."""

    block: Block
    name: str
    shape: tuple[int, ...] = ()
    dtype: np.dtype = field(default_factory=lambda: np.dtype(float))
    unit_text: str | None = None
    description: str = ""

    def __post_init__(self) -> None:
        self.shape = normalize_shape(self.shape)
        self.dtype = np.dtype(self.dtype)
        self.unit: Unit | None = parse_unit(self.unit_text)

    @property
    def path(self) -> str:
        """``'sub/block.port'``: the block path and the port name."""
        return f"{self.block.path}.{self.name}"

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    def unit_label(self) -> str:
        return self.unit_text if self.unit_text else "-"

    def describe(self) -> str:
        return f"'{self.path}' {format_shape(self.shape)} [{self.unit_label()}]"

    def __repr__(self) -> str:
        kind = type(self).__name__
        return f"<{kind} {self.path} {format_shape(self.shape)} [{self.unit_label()}]>"

    def zero(self) -> Any:
        """A zero value of this port's shape and dtype (``None`` for an object port, an
        FMU's String or Binary: it has no zero, and holds no value before it is computed)."""
        if self.dtype.kind == "O":
            return None if self.shape == () else np.full(self.shape, None, dtype=object)
        if self.shape == ():
            return self.dtype.type(0).item()
        return np.zeros(self.shape, dtype=self.dtype)


@dataclass(eq=False, repr=False)
class InputPort(Port):
    """An input of a block.

    ``default`` is the value the input holds when it is left unconnected (``None``: it
    must be connected, the usual case; :meth:`Block.declare_input`).
    """

    default: Any = None

    def zero(self) -> Any:
        """The value of an unconnected input (its default), else a zero of its type."""
        if self.default is None:
            return super().zero()
        if self.shape == ():
            return self.default
        return np.array(self.default, dtype=self.dtype).reshape(self.shape)


@dataclass(eq=False, repr=False)
class OutputPort(Port):
    """An output of a block, computed by ``calc(ctx)``.

    ``depends_on`` is the set of this block's inputs the output reads directly
    (its feedthrough); ``None`` means all of them.  Ordering and algebraic-loop
    detection rely on it: declare it as narrowly as the equations allow.
    """

    calc: Any = None
    depends_on: frozenset | None = None
    group: Any = None  # OutputGroup when computed together with sibling outputs

    def feedthrough_inputs(self) -> list[InputPort]:
        ins = list(self.block.inputs.values())
        if self.depends_on is None:
            return ins
        return [p for p in ins if p.name in self.depends_on]


@dataclass(eq=False)
class OutputGroup:
    """Outputs of one block computed together: ``calc(ctx)`` returns their values as a
    tuple, in the order of ``ports`` (see :meth:`cosim.Block.declare_outputs`)."""

    calc: Any
    ports: list = field(default_factory=list)


class PortList(list):
    """The numbered ports of a block (``Sum.ins``, ``Mux.ins``, ``Demux.outs``): a list
    whose out-of-range index is a :class:`~cosim.errors.PortError` saying how many ports
    there are and how to have more, not a bare ``IndexError``."""

    def __init__(self, ports: Any, block: Any, hint: str = "") -> None:
        super().__init__(ports)
        self._block, self._hint = block, hint

    def __getitem__(self, index: Any) -> Any:
        try:
            return super().__getitem__(index)
        except IndexError:
            from .errors import PortError
            names = ", ".join(p.name for p in self)
            raise PortError(f"block '{self._block.name}' ({type(self._block).__name__}) has "
                            f"{len(self)} of these ports ({names}), so index {index!r} does "
                            f"not exist" + (f"; {self._hint}" if self._hint else "")) from None

