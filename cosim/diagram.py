"""Diagrams: ``DiagramBuilder`` adds and connects blocks; ``build()`` freezes.

A :class:`Diagram` is itself a :class:`~cosim.block.Block` whose ports are the
exported ports of its children, so diagrams nest.  ``build()`` validates once:
unknown ports (listing valid names), shape, dtype and unit mismatches (units
with a different scale are converted on the connection), inputs connected
twice or not at all, duplicate names, and algebraic loops (reported as a port
path; rejected with ``loops="error"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .block import Block, check_name, did_you_mean
from .errors import BuildError, ConnectError, NotADiagramError, PortError, UnitError
from .ports import InputPort, OutputPort
from .units import conversion


@dataclass(frozen=True)
class Connection:
    """A wire ``src -> dst`` with the unit conversion ``dst = scale*src + bias``."""

    src: OutputPort
    dst: InputPort
    scale: float = 1.0
    bias: float = 0.0


def check_compatible(src: OutputPort, dst: InputPort) -> tuple[float, float]:
    """Shape, dtype and unit checks for a connection; returns the unit conversion."""
    if src.shape != dst.shape:
        raise ConnectError(
            f"connect(): shape mismatch: output {src.describe()} -> input {dst.describe()}; "
            "insert a Mux/Demux or fix one declaration")
    # integers of any width and signedness connect (signals are Python ints: exact; an
    # FMU checks its own range); otherwise NumPy's same-kind rule
    ints = src.dtype.kind in "iub" and dst.dtype.kind in "iu"
    if not ints and not np.can_cast(src.dtype, dst.dtype, "same_kind"):
        raise ConnectError(
            f"connect(): dtype mismatch: output '{src.path}' ({src.dtype}) -> input "
            f"'{dst.path}' ({dst.dtype}); insert a conversion block or fix one declaration")
    try:
        return conversion(src.unit, dst.unit)
    except UnitError as exc:
        raise UnitError(
            f"connect(): unit mismatch: output '{src.path}' [{src.unit_label()}] -> input "
            f"'{dst.path}' [{dst.unit_label()}] ({exc}); insert a UnitConversion block or "
            "fix one declaration") from None


class DiagramBuilder:
    """Collects blocks and connections, then :meth:`build` makes a frozen Diagram.

    Examples
    --------
    >>> b = DiagramBuilder("loop")
    >>> src = b.add(Constant("src", 1.0))              # doctest: +SKIP
    >>> gain = b.add(Gain("gain", 2.0))                 # doctest: +SKIP
    >>> b.connect(src.output("y"), "gain.u")            # doctest: +SKIP
    >>> diagram = b.build()                             # doctest: +SKIP
    """

    def __init__(self, name: str = "diagram") -> None:
        self.name = check_name(name, "diagram")
        self._blocks: dict[str, Block] = {}
        self._connections: list[Connection] = []
        self._fed: dict[InputPort, Connection] = {}
        self._exported_inputs: dict[str, tuple[list[InputPort], dict]] = {}
        self._exported_outputs: dict[str, tuple[OutputPort, dict]] = {}
        self._built = False

    # --------------------------------------------------------------- add
    def add(self, block: Block) -> Any:
        """Add a block (or a built diagram) and return it."""
        self._check_open()
        if not isinstance(block, Block):
            raise BuildError(f"add(): expected a Block, got {type(block).__name__}")
        if block.name in self._blocks:
            raise BuildError(f"add(): duplicate block name {block.name!r} in diagram "
                             f"'{self.name}'; give each block a unique name")
        if getattr(block, "_builder", None) is not None or block.parent is not None:
            raise BuildError(f"add(): block '{block.name}' already belongs to another diagram; "
                             "create a new block instance")
        block._builder = self
        self._blocks[block.name] = block
        return block

    def block(self, name: str) -> Block:
        try:
            return self._blocks[name]
        except KeyError:
            raise PortError(f"block {name!r} not found in diagram '{self.name}'; "
                            + did_you_mean(name, self._blocks)) from None

    # ----------------------------------------------------------- connect
    def _resolve(self, ref: Any, kind: str) -> Any:
        if isinstance(ref, str):
            if "." not in ref:
                raise PortError(f"connect(): {ref!r} is not a port reference; write "
                                f"'block.port' (blocks: {', '.join(self._blocks) or 'none'})")
            bname, pname = ref.rsplit(".", 1)
            blk = self.block(bname)
            return blk.output(pname) if kind == "output" else blk.input(pname)
        want = OutputPort if kind == "output" else InputPort
        if not isinstance(ref, want):
            other = "an input" if isinstance(ref, InputPort) else type(ref).__name__
            raise PortError(f"connect(): expected an {kind} port as "
                            f"{'source' if kind == 'output' else 'destination'}, got {other} "
                            f"{getattr(ref, 'path', ref)!r}")
        if self._blocks.get(ref.block.name) is not ref.block:
            raise PortError(f"connect(): port '{ref.path}' belongs to block "
                            f"'{ref.block.name}', which was not added to diagram "
                            f"'{self.name}'; call add() first")
        return ref

    def connect(self, src: Any, dst: Any) -> Connection:
        """Connect an output to an input, by handle or by ``'block.port'`` name."""
        self._check_open()
        s = self._resolve(src, "output")
        d = self._resolve(dst, "input")
        if d in self._fed:
            raise PortError(f"connect(): input '{d.path}' is already connected to "
                            f"'{self._fed[d].src.path}'; an input takes one source")
        for lst, _ in self._exported_inputs.values():
            if d in lst:
                raise PortError(f"connect(): input '{d.path}' is exported; it cannot also "
                                "be connected")
        scale, bias = check_compatible(s, d)
        if s.unit is not None and d.unit is None and not s.unit.is_dimensionless:
            import warnings

            from .errors import CosimWarning
            warnings.warn(f"connect(): output '{s.path}' [{s.unit_text}] feeds input "
                          f"'{d.path}', which declares no unit, so a wrong connection there "
                          "goes unnoticed; declare the input's unit (input_unit=... on the "
                          "core blocks)", CosimWarning, stacklevel=2)
        c = Connection(s, d, scale, bias)
        self._connections.append(c)
        self._fed[d] = c
        return c

    # ------------------------------------------------------------ export
    def export_input(self, ports: Any, name: str | None = None) -> str:
        """Expose one or several child inputs as one input of the diagram."""
        self._check_open()
        plist = [self._resolve(p, "input") for p in (ports if isinstance(ports, list)
                                                   else [ports])]
        name = check_name(name or plist[0].name, "port")
        if name in self._exported_inputs or name in self._exported_outputs:
            raise PortError(f"export_input(): port name {name!r} already used on diagram "
                            f"'{self.name}'")
        first = plist[0]
        for p in plist:
            if p in self._fed:
                raise PortError(f"export_input(): input '{p.path}' is already connected")
            if p.shape != first.shape or (p.unit is not None and first.unit is not None
                                          and p.unit.exponents != first.unit.exponents):
                raise ConnectError(f"export_input(): inputs {first.describe()} and "
                                   f"{p.describe()} cannot share one exported input")
        self._exported_inputs[name] = (plist, dict(shape=first.shape, dtype=first.dtype,
                                                   unit=first.unit_text))
        return name

    def export_output(self, port: Any, name: str | None = None) -> str:
        """Expose a child output as an output of the diagram."""
        self._check_open()
        p = self._resolve(port, "output")
        name = check_name(name or p.name, "port")
        if name in self._exported_inputs or name in self._exported_outputs:
            raise PortError(f"export_output(): port name {name!r} already used on diagram "
                            f"'{self.name}'")
        self._exported_outputs[name] = (p, dict(shape=p.shape, dtype=p.dtype, unit=p.unit_text))
        return name

    # ------------------------------------------------------------- build
    def build(self, loops: str = "solve") -> Diagram:
        """Validate everything once and return the frozen :class:`Diagram`.

        Parameters
        ----------
        loops : {"solve", "error"}
            Algebraic loops are solved at run time (Newton with a fixed-point
            fallback) or rejected here.
        """
        self._check_open()
        if loops not in ("solve", "error"):
            raise BuildError(f"build(): loops must be 'solve' or 'error', got {loops!r}")
        exported = {p for lst, _ in self._exported_inputs.values() for p in lst}
        missing = [p for b in self._blocks.values() for p in b.inputs.values()
                   if p not in self._fed and p not in exported and p.default is None]
        if missing:
            lines = "\n  ".join(p.describe() for p in missing)
            raise PortError(
                f"build(): diagram '{self.name}' has {len(missing)} unconnected input(s):\n  "
                f"{lines}\nconnect each one, export it with export_input(), or feed it a "
                "Constant")
        for b in self._blocks.values():
            if b.continuous_states and type(b).derivatives is Block.derivatives:
                raise BuildError(f"build(): block '{b.name}' declares continuous states but "
                                 "does not implement derivatives(ctx)")
        parents = {name: b.parent for name, b in self._blocks.items()}
        d = Diagram(self, loops)
        self._built = True
        try:
            d.compile()  # validates the flattened graph (algebraic loops) once
        except BaseException:
            # a failed build leaves the builder open (fix the cause, build again)
            self._built = False
            for name, b in self._blocks.items():
                b.parent = parents[name]
            raise
        return d

    def __getattr__(self, attr: str) -> Any:
        """A Diagram's attribute asked of the builder says to build first."""
        if not attr.startswith("_") and hasattr(Diagram, attr):
            raise AttributeError(f"'DiagramBuilder' object has no attribute {attr!r}: "
                                 f"{attr!r} belongs to the built Diagram; call build() first "
                                 f"(diagram = builder.build())")
        raise AttributeError(f"'DiagramBuilder' object has no attribute {attr!r}")

    def _check_open(self) -> None:
        if self._built:
            raise BuildError(f"diagram '{self.name}' is already built; the Diagram is frozen "
                             "(make a new DiagramBuilder to change the structure)")


class Diagram(Block):
    """A frozen diagram of blocks; itself a block with the exported ports."""

    is_diagram = True

    def __init__(self, builder: DiagramBuilder, loops: str) -> None:
        super().__init__(builder.name)
        self.loops = loops
        self.blocks: dict[str, Block] = dict(builder._blocks)
        self.connections: tuple[Connection, ...] = tuple(builder._connections)
        self.input_map: dict[InputPort, list[InputPort]] = {}
        self.output_map: dict[OutputPort, OutputPort] = {}
        for name, (plist, kw) in builder._exported_inputs.items():
            self.input_map[self.declare_input(name, **kw)] = plist
        for name, (src, kw) in builder._exported_outputs.items():
            port = self.declare_output(name, calc=None, **kw)
            self.output_map[port] = src
        for b in self.blocks.values():
            b.parent = self
            b._builder = None
        self._plan = None

    def leaf_blocks(self) -> list[Block]:
        """All leaf blocks of the hierarchy, depth first in insertion order."""
        out = []
        for b in self.blocks.values():
            out.extend(b.leaf_blocks() if isinstance(b, Diagram) else [b])
        return out

    def compile(self) -> Any:
        """The flat execution plan (cached)."""
        if self._plan is None:
            from .compiler import compile_diagram
            self._plan = compile_diagram(self)
        return self._plan

    def create_context(self) -> Any:
        """A fresh context with initial states and default parameters."""
        from .context import Context
        return Context(self.compile())

    def find(self, path: str) -> Any:
        """Look up a block (``'sub/blk'``) or port (``'sub/blk.port'``) by path."""
        bpath, _, port = path.partition(".")
        node: Block = self
        for part in bpath.split("/"):
            if not isinstance(node, Diagram):
                raise PortError(f"'{node.path}' is not a diagram; cannot look up {part!r}")
            try:
                node = node.blocks[part]
            except KeyError:
                raise PortError(f"block {part!r} not found in '{node.name}' while resolving "
                                f"{path!r}; " + did_you_mean(part, node.blocks)) from None
        if not port:
            return node
        if port in node.outputs:
            return node.outputs[port]
        if port in node.inputs:
            return node.inputs[port]
        raise PortError(f"port {port!r} not found on block '{node.path}'; "
                        + did_you_mean(port, list(node.inputs) + list(node.outputs)))

    def describe(self) -> str:
        """Blocks, ports with units and rates, and the connections, as text."""
        lines = [f"diagram '{self.name}': {len(self.leaf_blocks())} leaf blocks"]
        for b in self.leaf_blocks():
            rates = ", ".join(f"{u.period / 1e9:g} s" for u in b.periodic_updates)
            kind = f"sampled at {rates}" if rates else (
                "continuous" if b.continuous_states else "direct")
            lines.append(f"  {b.path} ({type(b).__name__}, {kind})")
            lines.extend("    " + s for s in b.describe_ports())
        return "\n".join(lines)


def require_diagram(obj: Any, who: str, also: str = "") -> Diagram:
    """``obj`` if it is a built :class:`Diagram`; else :class:`NotADiagramError` saying what
    ``who`` got (a :class:`DiagramBuilder`: "call build() first").  ``also``: other things
    ``who`` takes, for the message ("or a MasterScheduler")."""
    if isinstance(obj, Diagram):
        return obj
    takes = f"a built Diagram{' ' + also if also else ''}"
    if isinstance(obj, DiagramBuilder):
        raise NotADiagramError(f"{who} takes {takes}, got the DiagramBuilder '{obj.name}': "
                               "call build() first (diagram = builder.build())")
    if isinstance(obj, Block):
        raise NotADiagramError(f"{who} takes {takes}, got the block {obj!r}: add it to a "
                               "DiagramBuilder, export its ports and build() the diagram")
    text = repr(obj)
    text = text if len(text) <= 60 else text[:57] + "..."
    raise NotADiagramError(f"{who} takes {takes}, got {type(obj).__name__} {text}")
