"""Compile a frozen diagram into a flat :class:`Plan`.

The plan is structural (it does not depend on parameter values):

* the leaf blocks of the hierarchy and, for every leaf input, its source (a
  leaf output or an exported root input) with the unit conversion composed
  along the way;
* one *slot* per signal in a flat list (the context's ``signals``);
* *nodes*: one per leaf output (one per :class:`FunctionBlock`), one per unit
  conversion; their dependency graph from the declared feedthrough
  (``depends_on``); the evaluation order, with algebraic loops as components;
* the continuous state layout (blocks that may be fused into one linear
  update are laid out contiguously), discrete states and parameters;
* the rate groups of sampled blocks (period, offset) on the integer tick grid.

The numeric program (fused linear matrices, generated evaluation code) is made
from a plan and a context by :mod:`cosim.evaluator`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .block import Block
from .errors import AlgebraicLoopError, ConnectError, PortError
from .function_block import FunctionBlock
from .graph import find_cycle, is_loop, order_with_loops
from .ports import InputPort, OutputPort
from .time import base_tick, format_time
from .units import conversion


@dataclass(eq=False)
class Node:
    """One evaluation unit: computes ``slots`` from the slots in ``reads``."""

    kind: str  # "calc" (block output or output group), "func" (FunctionBlock),
    #            "conv" (unit conversion)
    block: Block | None
    ports: list[OutputPort]
    slots: list[int]
    reads: list[int] = field(default_factory=list)  # slots read (feedthrough only)
    scale: float = 1.0
    bias: float = 0.0
    index: int = -1

    @property
    def label(self) -> str:
        if self.kind == "conv":
            src = self.ports[0]
            bias = f" {self.bias:+g}" if self.bias else ""
            return f"unit conversion of {src.path} [{src.unit_label()}]: x{self.scale:.6g}{bias}"
        return ", ".join(p.path for p in self.ports)


@dataclass(eq=False)
class RateGroup:
    """Sampled blocks sharing one (period, offset)."""

    period: int
    offset: int
    blocks: list[Block]

    def due(self, tick: int) -> bool:
        """A sample hit at ``tick``: ``tick = offset + k period``, ``k >= 0``."""
        return tick >= self.offset and (tick - self.offset) % self.period == 0

    def next_hit(self, tick: int) -> int:
        """The first sample hit strictly after ``tick`` (``offset`` before the first)."""
        k = (tick - self.offset) // self.period + 1
        return self.offset + max(k, 0) * self.period

    def __str__(self) -> str:
        off = f" offset {format_time(self.offset)}" if self.offset else ""
        return f"every {format_time(self.period)}{off}"


class Plan:
    """The flat, structural execution plan of a diagram (see module docstring)."""

    def __init__(self, diagram: Any) -> None:
        self.diagram = diagram
        self.blocks: list[Block] = diagram.leaf_blocks()
        self.slot_ports: list[Any] = []  # port (or InputPort for root inputs) per slot
        self.output_slot: dict[OutputPort, int] = {}
        self.input_slot: dict[InputPort, int] = {}
        self.root_input_slot: dict[InputPort, int] = {}
        self.feed: dict[InputPort, tuple[Any, float, float]] = {}
        self.nodes: list[Node] = []
        self.producer: dict[int, Node] = {}
        self.order: list[list[Node]] = []  # components; len > 1 or self-dependent = loop
        self.loops: list[list[Node]] = []
        self.continuous_states: list = []
        self.cstate_index: dict = {}
        self.discrete_states: list = []
        self.dstate_index: dict = {}
        self.parameters: list = []
        self.param_index: dict = {}
        self.opaque_states: list = []
        self.rate_groups: list[RateGroup] = []
        self.linear_candidates: list[Block] = []
        self.n_continuous = 0

    # ---------------------------------------------------------- helpers
    def _new_slot(self, port: Any) -> int:
        self.slot_ports.append(port)
        return len(self.slot_ports) - 1

    def initial_continuous_state(self) -> np.ndarray:
        x = np.zeros(self.n_continuous)
        for h in self.continuous_states:
            a, b, _ = self.cstate_index[h]
            x[a:b] = h.initial
        return x

    def resolve_root_input(self, port: Any) -> InputPort:
        if isinstance(port, str):
            port = self.diagram.input(port)
        if port not in self.root_input_slot:
            raise PortError(f"'{getattr(port, 'path', port)}' is not an exported input of "
                            f"diagram '{self.diagram.name}'; exported inputs: "
                            f"{', '.join(self.diagram.inputs) or '(none)'}")
        return port

    def check_value(self, port: Any, value: Any) -> None:
        if np.shape(value) != port.shape:
            raise ConnectError(f"fix_input(): value of shape {np.shape(value)} for input "
                               f"{port.describe()}")

    def find_parameter(self, path: str) -> Any:
        bpath, _, pname = path.rpartition(".")
        if not bpath:
            raise PortError(f"parameter path {path!r} must look like 'block.parameter'")
        return self.diagram.find(bpath).parameter(pname)

    def parameters_changed(self, ctx: Any, handle: Any) -> None:
        """Hook: evaluators holding fused matrices listen to this."""
        for cb in list(getattr(ctx, "_param_listeners", ())):
            cb(handle)

    # ------------------------------------------------------- describing
    def describe(self) -> str:
        """Execution order, rate groups and loops, as printed by ``cosim info``."""
        lines = [f"execution order of '{self.diagram.name}' "
                 f"({len(self.blocks)} blocks, {len(self.nodes)} nodes, "
                 f"{self.n_continuous} continuous states):"]
        k = 0
        for comp in self.order:
            if len(comp) > 1 or comp in self.loops:
                lines.append(f"  {k:3d}. algebraic loop: " + " | ".join(n.label for n in comp))
            else:
                n = comp[0]
                rate = ""
                if n.block is not None and n.block.is_sampled:
                    rate = "  (sampled: " + ", ".join(
                        str(g) for g in self.rate_groups if n.block in g.blocks) + ")"
                lines.append(f"  {k:3d}. {n.label}{rate}")
            k += 1
        if self.rate_groups:
            lines.append("rate groups:")
            for g in self.rate_groups:
                lines.append(f"  {g}: " + ", ".join(b.path for b in g.blocks))
        lines.append(f"algebraic loops: {len(self.loops)}")
        return "\n".join(lines)


# ------------------------------------------------------------------ flatten
def _flatten(diagram: Any, plan: Plan) -> None:
    """Resolve every leaf input to its leaf source through the hierarchy."""

    def leaf_source(port: OutputPort) -> OutputPort:
        while port.block.is_diagram:
            port = port.block.output_map[port]
        return port

    def leaf_targets(port: InputPort, scale: float, bias: float):
        if not port.block.is_diagram:
            yield port, scale, bias
            return
        for inner in port.block.input_map[port]:
            s2, b2 = conversion(port.unit, inner.unit)
            yield from leaf_targets(inner, s2 * scale, s2 * bias + b2)

    def walk(d: Any) -> None:
        for c in d.connections:
            src = leaf_source(c.src)
            for dst, s, b in leaf_targets(c.dst, c.scale, c.bias):
                plan.feed[dst] = (src, s, b)
        for b in d.blocks.values():
            if b.is_diagram:
                walk(b)

    walk(diagram)
    for rin, inner_list in diagram.input_map.items():
        for inner in inner_list:
            s2, b2 = conversion(rin.unit, inner.unit)
            for dst, s, b in leaf_targets(inner, s2, b2):
                plan.feed[dst] = (rin, s, b)


def _is_linear_candidate(b: Block) -> bool:
    return (type(b).linear_model is not Block.linear_model and not b.periodic_updates
            and not b.zero_crossings and not b.time_events and not b.dynamic_time_events)


def compile_diagram(diagram: Any) -> Plan:
    """Build the :class:`Plan` of a diagram; raises on ill-formed graphs."""
    plan = Plan(diagram)
    _flatten(diagram, plan)

    # slots: root inputs, then leaf outputs
    for rin in diagram.inputs.values():
        plan.root_input_slot[rin] = plan._new_slot(rin)
    for b in plan.blocks:
        if isinstance(b, FunctionBlock):
            ports = list(b.outputs.values())
            node = Node("func", b, ports, [plan._new_slot(p) for p in ports])
            for p, s in zip(ports, node.slots):
                plan.output_slot[p] = s
            plan.nodes.append(node)
        else:
            done: set = set()
            for p in b.outputs.values():
                if p.group is not None:  # declare_outputs: one node for the whole group
                    if id(p.group) in done:
                        continue
                    done.add(id(p.group))
                    ports = list(p.group.ports)
                else:
                    ports = [p]
                node = Node("calc", b, ports, [plan._new_slot(q) for q in ports])
                for q, s in zip(ports, node.slots):
                    plan.output_slot[q] = s
                plan.nodes.append(node)
    # exported outputs, of the root and of every nested diagram (so "sub.out" can be
    # recorded): the slot of the leaf output they re-export
    stack = [diagram]
    while stack:
        d = stack.pop()
        for rout, src in d.output_map.items():
            leaf = src
            while leaf.block.is_diagram:
                leaf = leaf.block.output_map[leaf]
            plan.output_slot[rout] = plan.output_slot[leaf]
        stack.extend(b for b in d.blocks.values() if b.is_diagram)

    # input slots, with one conversion node per distinct (source, scale, bias)
    conv_nodes: dict[tuple, Node] = {}
    for b in plan.blocks:
        for p in b.inputs.values():
            if p not in plan.feed:  # unconnected, with a default: a slot holding it
                plan.input_slot[p] = plan._new_slot(p)
                continue
            src, s, bias = plan.feed[p]
            base = plan.root_input_slot[src] if src in plan.root_input_slot else \
                plan.output_slot[src]
            if s == 1.0 and bias == 0.0:
                plan.input_slot[p] = base
                continue
            key = (base, s, bias)
            if key not in conv_nodes:
                node = Node("conv", None, [src], [plan._new_slot(p)], [base], s, bias)
                conv_nodes[key] = node
                plan.nodes.append(node)
            plan.input_slot[p] = conv_nodes[key].slots[0]

    for i, n in enumerate(plan.nodes):
        n.index = i
        for s in n.slots:
            plan.producer[s] = n
    for n in plan.nodes:
        if n.kind == "conv":
            continue
        reads = []
        for op in n.ports:
            for ip in op.feedthrough_inputs():
                s = plan.input_slot[ip]
                if s not in reads:
                    reads.append(s)
        n.reads = reads

    # order and loops
    deps = [[plan.producer[s].index for s in n.reads if s in plan.producer] for n in plan.nodes]
    for comp in order_with_loops(deps):
        nodes = [plan.nodes[i] for i in comp]
        plan.order.append(nodes)
        if is_loop(comp, deps):
            plan.loops.append(nodes)
    if plan.loops and diagram.loops == "error":
        raise AlgebraicLoopError(
            "build(): algebraic loop: " + describe_loop(plan, plan.loops[0], deps)
            + ". If a dependency is spurious, narrow depends_on= on the output; otherwise "
            "break the loop with a delay or state, or build with loops='solve'")

    # states and parameters; linear-fusion candidates laid out contiguously
    plan.linear_candidates = [b for b in plan.blocks if _is_linear_candidate(b)]
    lin = set(plan.linear_candidates)
    ordered = [b for b in plan.blocks if b in lin] + [b for b in plan.blocks if b not in lin]
    k = 0
    for b in ordered:
        for h in b.continuous_states:
            plan.continuous_states.append(h)
            plan.cstate_index[h] = (k, k + h.size, h.scalar)
            k += h.size
    plan.n_continuous = k
    for b in plan.blocks:
        for h in b.discrete_states:
            plan.dstate_index[h] = len(plan.discrete_states)
            plan.discrete_states.append(h)
        for h in b.parameters.values():
            plan.param_index[h] = len(plan.parameters)
            plan.parameters.append(h)
        plan.opaque_states.extend(b.opaque_states)

    groups: dict[tuple[int, int], RateGroup] = {}
    for b in plan.blocks:
        for u in b.periodic_updates:
            g = groups.setdefault((u.period, u.offset), RateGroup(u.period, u.offset, []))
            if b not in g.blocks:
                g.blocks.append(b)
    plan.rate_groups = sorted(groups.values(), key=lambda g: (g.period, g.offset))
    plan.base_tick = base_tick([g.period for g in plan.rate_groups]
                               + [g.offset for g in plan.rate_groups if g.offset])
    return plan


def describe_loop(plan: Plan, comp: list[Node], deps: list[list[int]]) -> str:
    """A loop as a port path: ``a.y -> b.u (feedthrough) -> b.y -> a.u (feedthrough)``."""
    cycle = find_cycle([n.index for n in comp], deps)
    # cycle[i] reads cycle[i+1]; data flows the other way
    flow = list(reversed(cycle))
    parts = []
    for i, ni in enumerate(flow):
        node = plan.nodes[ni]
        nxt = plan.nodes[flow[(i + 1) % len(flow)]]
        out = node.ports[0]
        parts.append(out.path if node.kind != "conv" else node.label)
        # which input of the next node reads one of this node's slots
        for op in nxt.ports:
            if nxt.kind == "conv":
                break
            for ip in op.feedthrough_inputs():
                if plan.input_slot[ip] in node.slots:
                    parts.append(f"{ip.path} (feedthrough)")
                    break
            else:
                continue
            break
    return " -> ".join(parts) + " -> " + parts[0]
