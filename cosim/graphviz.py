"""Diagram views: any diagram (or co-simulation master) as Graphviz DOT, SVG or PNG.

:func:`to_dot` writes the DOT text by hand (no Python dependency); :func:`to_svg`
and :func:`write` run the Graphviz ``dot`` program for the pictures
(``apt-get install graphviz``).  From the command line::

    cosim info examples/dc_motor_speed_loop.py --svg motor.svg --dot motor.dot

What the picture shows:

* one node per leaf block: name and type on top, input ports on the left and
  output ports on the right, each a cell with its shape and unit
  (``u (3,) [m/s]``), and a footer with the rate (``continuous``,
  ``every 1 ms``, ``direct`` for blocks without state) and the state counts;
  edges attach to the ports (``"pi":"out_u":e -> "motor":"in_voltage":w``);
* node colour by rate: continuous, each sample period, direct; a legend;
* an edge whose connection converts units is labelled with it
  (``rpm→rad/s``; the factor is in the tooltip);
* algebraic loops: the edges along them are red and thick, their blocks
  outlined in red;
* fused linear groups (what :class:`~cosim.evaluator.Evaluator` fuses with the
  default parameters) as dashed clusters when all their blocks sit in one
  diagram, otherwise named in the members' footers;
* nested diagrams as clusters, their exported ports (and the root's) as
  plain-text nodes on the cluster's edge of the flow;
* a :class:`~cosim.master.MasterScheduler`: each subsystem a cluster (a
  :class:`~cosim.subsystem.DiagramSubsystem` with its diagram inside, any
  other subsystem one node with its ports) labelled with its communication
  step, and the master's connections between them.

Examples
--------
>>> from cosim.graphviz import to_dot, write          # doctest: +SKIP
>>> text = to_dot(diagram, rankdir="TB")              # doctest: +SKIP
>>> write(diagram, "loop.svg")                        # doctest: +SKIP
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

from .errors import CosimError, OutputError
from .time import format_time

CONTINUOUS = "#d6e6f7"
DIRECT = "#f4f4f4"
PERIODS = ("#fde0c2", "#d5f0cf", "#e5dbf5", "#fff2ad", "#f8d0dc", "#cdeeee", "#e9e1d2")
LOOP = "#d62728"
FUSED = "#1f77b4"
SUFFIXES = (".dot", ".svg", ".png")


def _html(text: Any) -> str:
    """Escape text for an HTML-like label."""
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def _q(text: Any) -> str:
    """A quoted DOT ID or string."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _Dot:
    """Collects the DOT statements of one picture."""

    def __init__(self, show_units: bool, show_rates: bool) -> None:
        self.show_units = show_units
        self.show_rates = show_rates
        self.lines: list = []  # statements, and edges as (a, b, attrs, key)
        self.periods: dict[int, str] = {}  # period (ticks) -> colour
        self.kinds: set[str] = set()  # "continuous", "direct", "loop", "fused"
        self.feeder: dict[Any, Any] = {}  # dst port -> src port, for every drawn edge
        self.red: set[tuple[int, int]] = set()  # (id(src), id(dst)) of edges in loops

    # ------------------------------------------------------------ labels
    def port_text(self, name: str, shape: tuple, dtype: Any, unit: str | None) -> str:
        text = _html(name)
        if shape:
            text += " " + _html(str(tuple(shape)))
        if dtype is not None and str(dtype) != "float64":
            text += " " + _html(str(dtype))
        if self.show_units and unit:
            text += " [" + _html(unit) + "]"
        return text

    def colour(self, key: Any) -> str:
        """Fill colour of a rate: ``"continuous"``, ``"direct"`` or a period in ticks."""
        if not self.show_rates:
            return "white"
        if key in ("continuous", "direct"):
            self.kinds.add(key)
            return CONTINUOUS if key == "continuous" else DIRECT
        if key not in self.periods:
            self.periods[key] = PERIODS[len(self.periods) % len(PERIODS)]
        return self.periods[key]

    def record(self, node_id: str, title: str, kind: str, ins: list, outs: list,
               footer: list[str], fill: str, outline: str = "#555555",
               tooltip: str = "") -> None:
        """A block node: ``ins``/``outs`` are ``(port_id, text)`` pairs."""
        cols = (1 if ins else 0) + (1 if outs else 0) or 1
        rows = [f'<TR><TD COLSPAN="{cols}"><B>{_html(title)}</B><BR/>'
                f'<FONT POINT-SIZE="9">{_html(kind)}</FONT></TD></TR>']
        for k in range(max(len(ins), len(outs))):
            cells = ""
            for side, ports, align in (("in", ins, "LEFT"), ("out", outs, "RIGHT")):
                if not ports:
                    continue
                if k < len(ports):
                    pid, text = ports[k]
                    cells += f'<TD PORT="{side}_{_html(pid)}" ALIGN="{align}">{text}</TD>'
                else:
                    cells += '<TD BORDER="0"></TD>'
            rows.append(f"<TR>{cells}</TR>")
        if footer:
            rows.append(f'<TR><TD COLSPAN="{cols}"><FONT POINT-SIZE="9">'
                        f'{_html(" · ".join(footer))}</FONT></TD></TR>')
        table = (f'<TABLE BORDER="1" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3" '
                 f'BGCOLOR="{fill}" COLOR="{outline}">' + "".join(rows) + "</TABLE>")
        tip = f", tooltip={_q(tooltip)}" if tooltip else ""
        self.lines.append(f"{_q(node_id)} [shape=none, margin=0{tip}, label=<{table}>];")

    def edge(self, src: Any, dst: Any, a: str, b: str, units: tuple, scale: float,
             bias: float) -> None:
        """An edge ``a -> b`` drawn for the port pair ``(src, dst)``; red if in a loop."""
        self.feeder[dst] = src
        attrs = []
        if self.show_units and (scale != 1.0 or bias != 0.0):
            off = f" {bias:+.6g}" if bias else ""
            factor = f"x{scale:.6g}{off}"
            us, ud = units[0] or "-", units[1] or "-"
            label = f"{us}→{ud}" if units[0] and units[1] and us != ud else factor
            attrs.append(f"label={_q(label)}")
            attrs.append(f"tooltip={_q(f'{us} → {ud}: {factor}')}")
        self.lines.append((a, b, attrs, (id(src), id(dst))))

    def mark_loop(self, dst: Any) -> None:
        """Mark the drawn path that feeds the leaf input ``dst`` as part of a loop."""
        while dst in self.feeder:
            src = self.feeder[dst]
            self.red.add((id(src), id(dst)))
            dst = src

    def finish(self) -> str:
        """The statements; edges are written last, once the loops are known."""
        out = []
        for line in self.lines:
            if isinstance(line, tuple):
                a, b, attrs, key = line
                if key in self.red:
                    attrs = [*attrs, f'color="{LOOP}"', "penwidth=2.2"]
                line = f"  {a} -> {b}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";"
            out.append(line)
        return "\n".join(out)


# ------------------------------------------------------------------ diagrams
def _rate(block: Any) -> tuple[Any, list[str], list[str]]:
    """(colour key, rate parts, state parts) of a leaf block's footer."""
    rate, states = [], []
    if block.continuous_states:
        key: Any = "continuous"
        n = sum(h.size for h in block.continuous_states)
        rate.append("continuous")
        states.append(f"{n} state{'s' * (n != 1)}")
    elif block.periodic_updates:
        key = block.periodic_updates[0].period
    else:
        key = "direct"
        if not (block.discrete_states or block.opaque_states):
            rate.append("direct")
    for u in block.periodic_updates:
        off = f" +{format_time(u.offset)}" if u.offset else ""
        rate.append(f"every {format_time(u.period)}{off}")
    if block.discrete_states:
        states.append(f"{len(block.discrete_states)} discrete")
    if block.opaque_states:
        states.append(f"{len(block.opaque_states)} opaque")
    if block.zero_crossings:
        n = len(block.zero_crossings)
        states.append(f"{n} event{'s' * (n != 1)}")
    return key, rate, states


def _fused_groups(diagram: Any, plan: Any) -> list[list]:
    from .evaluator import Evaluator
    try:
        return [list(g.blocks) for g in Evaluator(plan, diagram.create_context()).groups]
    except Exception:  # noqa: BLE001 - a picture never fails because fusion cannot be made
        return []


def _loops(plan: Any) -> tuple[set, list]:
    """Blocks in algebraic loops and the leaf inputs read along them."""
    blocks, inputs = set(), []
    for comp in plan.loops:
        slots = {s for n in comp for s in n.slots}
        for n in comp:
            if n.block is None:
                continue
            blocks.add(n.block)
            for op in n.ports:
                for ip in op.feedthrough_inputs():
                    if plan.input_slot[ip] in slots:
                        inputs.append(ip)
    return blocks, inputs


class _DiagramView:
    """Draws one frozen diagram (root or a subsystem's) into a :class:`_Dot`."""

    def __init__(self, dot: _Dot, diagram: Any, prefix: str = "") -> None:
        from .diagram import Diagram
        self.Diagram = Diagram
        self.dot = dot
        self.root = diagram
        self.prefix = prefix
        self.plan = diagram.compile()
        self.loop_blocks, self.loop_inputs = _loops(self.plan)
        self.groups = _fused_groups(diagram, self.plan)
        self.group_of = {b: gi for gi, g in enumerate(self.groups) for b in g}

    # node ids and edge ends
    def rel(self, block: Any) -> str:
        """Path of ``block`` below the drawn diagram (``''`` for the diagram itself)."""
        parts = []
        while block is not self.root:
            parts.append(block.name)
            block = block.parent
        return "/".join(reversed(parts))

    def node_id(self, block: Any) -> str:
        return self.prefix + self.rel(block)

    def export_id(self, port: Any, side: str) -> str:
        return f"{self.prefix}{self.rel(port.block)}@{side}@{port.name}"

    def end(self, port: Any, side: str) -> str:
        """The DOT end of an edge at ``port`` (``side`` "in" or "out")."""
        if isinstance(port.block, self.Diagram):
            return _q(self.export_id(port, side))
        compass = "w" if side == "in" else "e"
        return f"{_q(self.node_id(port.block))}:{_q(f'{side}_{port.name}')}:{compass}"

    def draw(self, indent: str = "  ") -> None:
        self.body(self.root, indent)
        self.edges(self.root)
        for ip in self.loop_inputs:
            self.dot.mark_loop(ip)

    def exported(self, port: Any, side: str, indent: str) -> None:
        text = self.dot.port_text(port.name, port.shape, port.dtype, port.unit_text)
        arrow = "▶ " if side == "in" else ""
        tail = " ▶" if side == "out" else ""
        self.dot.lines.append(f"{indent}{_q(self.export_id(port, side))} [shape=plaintext, "
                              f"label=<{arrow}{text}{tail}>];")

    def body(self, d: Any, indent: str) -> None:
        lines = self.dot.lines
        for p in d.inputs.values():
            self.exported(p, "in", indent)
        clustered = {gi for gi, g in enumerate(self.groups)
                     if len(g) > 1 and all(b.parent is d for b in g)}
        for gi in sorted(clustered):
            g = self.groups[gi]
            n = sum(h.size for b in g for h in b.continuous_states)
            lines.append(f"{indent}subgraph {_q(f'cluster_{self.node_id(d)}#fused{gi}')} {{")
            lines.append(f'{indent}  label={_q(f"fused linear group {gi} ({n} states)")}; '
                         f'style="dashed,rounded"; color="{FUSED}"; fontcolor="{FUSED}"; '
                         "fontsize=10;")
            for b in g:
                self.leaf(b, indent + "  ", fused_note=False)
            lines.append(f"{indent}}}")
            self.dot.kinds.add("fused")
        for b in d.blocks.values():
            if isinstance(b, self.Diagram):
                lines.append(f"{indent}subgraph {_q(f'cluster_{self.node_id(b)}')} {{")
                lines.append(f"{indent}  label=<<B>{_html(b.name)}</B> "
                             f'<FONT POINT-SIZE="9">(diagram)</FONT>>; style=rounded; '
                             'color="#888888";')
                self.body(b, indent + "  ")
                lines.append(f"{indent}}}")
            elif self.group_of.get(b) not in clustered:
                gi = self.group_of.get(b)
                self.leaf(b, indent, fused_note=gi is not None and len(self.groups[gi]) > 1)
        for p in d.outputs.values():
            self.exported(p, "out", indent)

    def leaf(self, b: Any, indent: str, fused_note: bool) -> None:
        key, rate, footer = _rate(b)
        if self.dot.show_rates:
            footer = rate + footer
        if fused_note:
            footer.append(f"fused group {self.group_of[b]}")
        ins = [(p.name, self.dot.port_text(p.name, p.shape, p.dtype, p.unit_text))
               for p in b.inputs.values()]
        outs = [(p.name, self.dot.port_text(p.name, p.shape, p.dtype, p.unit_text))
                for p in b.outputs.values()]
        loop = b in self.loop_blocks
        if loop:
            self.dot.kinds.add("loop")
        n = len(self.dot.lines)
        self.dot.record(self.node_id(b), b.name, type(b).__name__, ins, outs, footer,
                        self.dot.colour(key), LOOP if loop else "#555555", tooltip=b.path)
        self.dot.lines[n] = indent + self.dot.lines[n]

    def edges(self, d: Any) -> None:
        from .units import conversion
        for c in d.connections:
            self.dot.edge(c.src, c.dst, self.end(c.src, "out"), self.end(c.dst, "in"),
                          (c.src.unit_text, c.dst.unit_text), c.scale, c.bias)
        for x, inner in d.input_map.items():
            for p in inner:
                s, b = conversion(x.unit, p.unit)
                self.dot.edge(x, p, _q(self.export_id(x, "in")), self.end(p, "in"),
                              (x.unit_text, p.unit_text), s, b)
        for o, src in d.output_map.items():
            self.dot.edge(src, o, self.end(src, "out"), _q(self.export_id(o, "out")),
                          (src.unit_text, o.unit_text), 1.0, 0.0)
        for b in d.blocks.values():
            if isinstance(b, self.Diagram):
                self.edges(b)


# ------------------------------------------------------------------ masters
def _master(dot: _Dot, master: Any) -> None:
    from .subsystem import DiagramSubsystem
    ends: dict[tuple[str, str], tuple[str, Any]] = {}
    for s in master.subsystems:
        step = s.rate * master.H
        label = f"{s.name} ({type(s).__name__}, step {format_time(step)}"
        if isinstance(s, DiagramSubsystem):
            dt = f" dt {format_time(s.dt_ticks)}" if s.dt_ticks else ""
            label += f", {s.solver_name}{dt}"
        label += ")"
        dot.lines.append(f"  subgraph {_q(f'cluster_{s.name}')} {{")
        dot.lines.append(f'    label={_q(label)}; style=rounded; color="#444444"; '
                         'bgcolor="#fbfbfb";')
        if isinstance(s, DiagramSubsystem):
            view = _DiagramView(dot, s.diagram, prefix=f"{s.name}::")
            view.draw(indent="    ")
            for p in s.diagram.inputs.values():
                ends[(s.name, p.name)] = (_q(view.export_id(p, "in")), p)
            for p in s.diagram.outputs.values():
                ends[(s.name, p.name)] = (_q(view.export_id(p, "out")), p)
        else:
            def cell(n: str, s: Any = s) -> str:
                return dot.port_text(n, s.shapes.get(n, ()), None, s.units.get(n))
            n = len(dot.lines)
            dot.record(f"{s.name}::", s.name, type(s).__name__,
                       [(n_, cell(n_)) for n_ in s.input_names],
                       [(n_, cell(n_)) for n_ in s.output_names],
                       [f"step {format_time(step)}"] if dot.show_rates else [], "#ffffff")
            dot.lines[n] = "    " + dot.lines[n]
            for side, names in (("in", s.input_names), ("out", s.output_names)):
                compass = "w" if side == "in" else "e"
                for n_ in names:
                    ends[(s.name, n_)] = (f"{_q(s.name + '::')}:{_q(f'{side}_{n_}')}:"
                                          f"{compass}", (s.name, n_))
        dot.lines.append("  }")
    for d, (src, scale, bias) in master.sources.items():
        (a, pa), (b, pb) = ends[src], ends[d]
        units = (master.by_name[src[0]].units.get(src[1]), master.by_name[d[0]].units.get(d[1]))
        dot.edge(pa, pb, a, b, units, scale, bias)


# ------------------------------------------------------------------- public
def _legend(dot: _Dot) -> list[str]:
    rows = []
    if "continuous" in dot.kinds:
        rows.append((CONTINUOUS, "continuous"))
    for period, colour in sorted(dot.periods.items()):
        rows.append((colour, f"every {format_time(period)}"))
    if "direct" in dot.kinds:
        rows.append((DIRECT, "direct (no state)"))
    cells = [f'<TR><TD BGCOLOR="{c}" WIDTH="18"></TD><TD ALIGN="LEFT">{_html(t)}</TD></TR>'
             for c, t in rows]
    if "loop" in dot.kinds:
        cells.append(f'<TR><TD><FONT COLOR="{LOOP}">━━</FONT></TD>'
                     '<TD ALIGN="LEFT">algebraic loop</TD></TR>')
    if "fused" in dot.kinds:
        cells.append(f'<TR><TD><FONT COLOR="{FUSED}">╌╌</FONT></TD>'
                     '<TD ALIGN="LEFT">fused linear group</TD></TR>')
    if not cells:
        return []
    table = ('<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="2">'
             '<TR><TD COLSPAN="2"><B>legend</B></TD></TR>' + "".join(cells) + "</TABLE>")
    return ['  subgraph cluster_legend {', '    style="rounded"; color="#bbbbbb"; label="";',
            f'    "@legend" [shape=none, margin=0, fontsize=10, label=<{table}>];', "  }"]


def to_dot(diagram: Any, *, show_units: bool = True, show_rates: bool = True,
           rankdir: str = "LR", title: str | None = None) -> str:
    """The DOT text of a diagram or a :class:`~cosim.master.MasterScheduler`.

    Parameters
    ----------
    diagram : Diagram or MasterScheduler
    show_units : bool
        Units in the port cells and unit-conversion labels on the edges.
    show_rates : bool
        Rates in the footers, colours by rate and the legend.
    rankdir : {"LR", "TB", "RL", "BT"}
        Direction of the signal flow.
    title : str, optional
        Graph label (default: the diagram's name).
    """
    from .diagram import require_diagram
    from .master import MasterScheduler
    if rankdir not in ("LR", "TB", "RL", "BT"):
        raise CosimError(f"to_dot(): rankdir must be LR, TB, RL or BT, got {rankdir!r}")
    dot = _Dot(show_units, show_rates)
    if isinstance(diagram, MasterScheduler):
        name = title or f"co-simulation, macro step {format_time(diagram.H)}"
        _master(dot, diagram)
    else:
        require_diagram(diagram, "to_dot()", also="or a MasterScheduler")
        name = title or diagram.name
        _DiagramView(dot, diagram).draw()
    head = [f"digraph {_q(name)} {{",
            f"  graph [rankdir={rankdir}, label=<<B>{_html(name)}</B>>, labelloc=t, "
            'fontname="Helvetica", fontsize=14, nodesep=0.3, ranksep=0.6];',
            '  node [fontname="Helvetica", fontsize=11];',
            '  edge [fontname="Helvetica", fontsize=9, color="#333333"];']
    legend = _legend(dot) if (show_rates or dot.kinds & {"loop", "fused"}) else []
    return "\n".join(head) + "\n" + dot.finish() + "\n" + "\n".join(legend + ["}"]) + "\n"


def _run_dot(text: str, fmt: str) -> bytes:
    exe = shutil.which("dot")
    if exe is None:
        raise CosimError("the Graphviz program 'dot' was not found on PATH; install "
                         "Graphviz: apt-get install graphviz (or brew install graphviz), "
                         "or write .dot and render it elsewhere")
    try:
        r = subprocess.run([exe, f"-T{fmt}"], input=text.encode(), capture_output=True,
                           timeout=120)
    except subprocess.TimeoutExpired:
        raise CosimError("Graphviz 'dot' did not finish in 120 s; write .dot and render "
                         "it with another layout (e.g. sfdp)") from None
    if r.returncode != 0:
        raise CosimError(f"Graphviz 'dot -T{fmt}' failed: {r.stderr.decode(errors='replace')}")
    return r.stdout


def _save(path: str | os.PathLike, data: bytes) -> None:
    try:
        with open(path, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        raise OutputError(f"cannot write {os.fspath(path)!r}: {exc.strerror}") from None


def to_svg(diagram: Any, path: str | os.PathLike | None = None, **kw: Any) -> str:
    """The SVG text of :func:`to_dot` (``kw``), rendered by ``dot``; written to ``path``."""
    data = _run_dot(to_dot(diagram, **kw), "svg")
    if path is not None:
        _save(path, data)
    return data.decode()


def write(diagram: Any, path: str | os.PathLike, **kw: Any) -> str:
    """Write ``.dot``, ``.svg`` or ``.png`` by the suffix of ``path``; returns the path."""
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in SUFFIXES:
        raise CosimError(f"write(): unknown diagram file type {suffix or '(none)'!r} for "
                         f"{os.fspath(path)!r}; use {', '.join(SUFFIXES)}")
    text = to_dot(diagram, **kw)
    _save(path, text.encode() if suffix == ".dot" else _run_dot(text, suffix[1:]))
    return os.fspath(path)
