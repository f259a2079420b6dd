"""Flattening the tree of systems into the master's components and connections.

* Names: a component ``c`` of system ``sc`` (in the top-level system) becomes
  ``"sc/c"``; a connector ``k`` of ``sc`` becomes the system connector ``"sc/k"``.
* Connections: SSP's ``start``/``end`` do not say which way data flows, the connector
  kinds do (component to component: output to input; system to its element: the
  kinds match).  Every component input is traced back through the system connectors
  to its source: a component output (a master connection), a system input that nothing
  feeds from outside (a system input of the flattened system, constant), or nothing
  (the input keeps its start value).  The linear transformations and unit conversions
  along the way compose into one transformation (a connector without a unit passes
  values through).  Every system output fed from inside shows its source.
* Parameter connectors: a component parameter connected (through system parameter
  connectors) to a system parameter connector that has a bound value gets that value
  (converted and transformed along the way); the connection wins over a value bound to
  the parameter itself.  A ``calculatedParameter`` source (computed by an FMU at
  initialization) is refused.
* Bindings: names are resolved as SSP says (hierarchical names relative to the system
  holding the binding); a higher level wins over a lower one, a later binding over an
  earlier one at the same level.
* Model Exchange units: see :func:`assign_units`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cosim.block import did_you_mean
from cosim.errors import UnitError
from cosim.units import conversion

from ..errors import FMUWarning
from .model import SSPComponent, SSPConnection, SSPConnector, SSPSolver, SSPSystem, unit_of
from .tree import Node, Raw
from .values import Bound

if TYPE_CHECKING:
    from .reading import _Reader

_SIGNAL = ("input", "output")
_PARAM = ("parameter", "structuralParameter", "calculatedParameter", "constant")
#: what a connector kind does, seen from outside its element (component or subsystem)
_OUTER_SOURCE = ("output", "calculatedParameter", "constant")
_OUTER_SINK = ("input", "parameter", "structuralParameter")


@dataclass
class _Edge:
    src: tuple        # endpoint ("c", component, connector) or ("s", path, connector)
    dst: tuple
    raw: Raw


def _flat_end(ep: tuple) -> tuple:
    return (ep[1], ep[2]) if ep[0] == "c" else (None, "/".join(ep[1] + (ep[2],)))


def flat_name(ep: tuple) -> str:
    return ".".join(p for p in _flat_end(ep) if p)


class _Flattener:
    def __init__(self, reader: _Reader, top: Node, system: SSPSystem) -> None:
        self.reader, self.top, self.system = reader, top, system
        self.nodes = {n.path: n for n in top.walk()}
        self.comps = {c.name: c for c in components(top)}
        self.feeds: dict[tuple, _Edge] = {}
        self.kinds: dict[tuple, str] = {}
        self.values: dict[tuple, Bound] = {}   # system connector endpoint -> bound value

    # ------------------------------------------------------------ endpoints
    def decl(self, ep: tuple) -> SSPConnector:
        owner = self.comps[ep[1]] if ep[0] == "c" else self.nodes[ep[1]]
        return owner.connector(ep[2])

    def unit(self, ep: tuple) -> Any:
        if ep[0] == "c":
            comp = self.comps[ep[1]]
            if comp.fmu is not None:
                return comp.fmu.info.by_name[ep[2]].unit
            c, units = comp.connector(ep[2]), self.top.units
        else:
            node = self.nodes[ep[1]]
            c, units = node.connector(ep[2]), node.units
        return unit_of(c.unit, units) if c is not None and c.unit else None

    def _end(self, node: Node, raw: Raw, end: tuple) -> tuple:
        """``(endpoint, kind, is_source)`` of one end of ``raw`` in ``node``."""
        r = self.reader
        elem, conn = end
        if elem is None:
            decl, ep, owner = node.connector(conn), ("s", node.path, conn), node
            where = node.label()
        else:
            e = node.elements.get(elem)
            if e is None:
                raise r.fail(raw.el, f"connection {raw.label()}: unknown component {elem!r}; "
                             + did_you_mean(elem, list(node.elements)), file=raw.file)
            owner = e
            if isinstance(e, Node):
                decl, ep, where = e.connector(conn), ("s", e.path, conn), e.label()
            else:
                decl, ep, where = e.connector(conn), ("c", e.name, conn), f"component '{elem}'"
        if decl is None:
            raise r.fail(raw.el, f"connection {raw.label()}: {where} has no connector {conn!r}; "
                         + did_you_mean(conn, [k.name for k in owner.connectors]),
                         "declare it in the element's <ssd:Connectors>", file=raw.file)
        kind = decl.kind
        if kind not in _SIGNAL + _PARAM:
            raise r.fail(raw.el, f"connection {raw.label()}: {kind} connectors are not "
                                 "supported in connections", file=raw.file)
        outer = elem is not None
        source = kind in _OUTER_SOURCE if outer else kind not in _OUTER_SOURCE
        return ep, kind, source

    def edges(self) -> None:
        r = self.reader
        for node in self.nodes.values():
            for raw in node.connections:
                a, ka, sa = self._end(node, raw, raw.start)
                b, kb, sb = self._end(node, raw, raw.end)
                if (ka in _SIGNAL) != (kb in _SIGNAL):
                    raise r.fail(raw.el, f"connection {raw.label()}: joins a {ka} and a {kb} "
                                         "connector; signals connect to signals, parameters to "
                                         "parameters", file=raw.file)
                if sa == sb:
                    both = "sources (outputs, or system inputs seen from inside)" if sa else \
                        "sinks (inputs, or system outputs seen from inside)"
                    raise r.fail(raw.el, f"connection {raw.label()}: both ends are {both} "
                                         f"({ka} and {kb}); SSP takes the direction of data from "
                                         "the kinds: one end must give the value, the other take "
                                         "it", file=raw.file)
                if a[0] == "s" and b[0] == "s" and a[1] == b[1] == node.path:
                    raise r.fail(raw.el, f"connection {raw.label()}: a system connector wired "
                                         "straight to another of the same system is not "
                                         "supported", "connect the source of the input to the "
                                         "output's destination instead", file=raw.file)
                src, dst = (a, b) if sa else (b, a)
                self.kinds[a], self.kinds[b] = ka, kb
                prev = self.feeds.get(dst)
                if prev is not None:
                    raise r.fail(raw.el, f"connector {flat_name(dst)} is the end of two "
                                         f"connections ({prev.raw.label()}, {prev.raw.file} line "
                                         f"{prev.raw.el.sourceline}, and {raw.label()}); an input "
                                         "takes one source", file=raw.file)
                if raw.transform is not None and any(
                        self.decl(ep).type not in (None, "Real", "Float64", "Float32")
                        for ep in (src, dst)):
                    raise r.fail(raw.el, f"connection {raw.label()}: a LinearTransformation is "
                                         "only valid between Real connectors", file=raw.file)
                self.feeds[dst] = _Edge(src, dst, raw)

    def chain(self, ep: tuple) -> list:
        """The edges from the ultimate source of ``ep`` to ``ep``, source first."""
        out, seen = [], {ep}
        while ep in self.feeds:
            e = self.feeds[ep]
            out.insert(0, e)
            ep = e.src
            if ep in seen:
                raise self.reader.fail(e.raw.el, f"connection {e.raw.label()} closes a loop of "
                                                 "system connectors", file=e.raw.file)
            seen.add(ep)
        return out

    def compose(self, chain: list) -> tuple:
        """``(a, b)``: the end gets ``a * source + b`` (in the end's unit)."""
        u = self.unit(chain[0].src)
        a, b = 1.0, 0.0
        for e in chain:
            ue = self.unit(e.dst)
            if ue is not None:
                if not e.raw.suppress and u is not None:
                    try:
                        s, c = conversion(u, ue)
                    except UnitError as exc:
                        raise self.reader.fail(e.raw.el, f"connection {e.raw.label()}: [{u}] -> "
                                                         f"[{ue}]: {exc}", file=e.raw.file) \
                            from None
                    a, b = s * a, s * b + c
                u = ue
            if e.raw.transform is not None:
                f, o = e.raw.transform[1:]
                a, b = f * a, f * b + o
        return a, b

    def relative(self, chain: list, src_unit: Any, dst_unit: Any) -> tuple:
        """The chain as SSP's ``(transform, suppressUnitConversion)`` between its ends."""
        if len(chain) == 1:
            raw = chain[0].raw
            return (raw.transform[1:] if raw.transform else None), raw.suppress
        a, b = self.compose(chain)
        try:
            s0, b0 = conversion(src_unit, dst_unit)
        except UnitError:
            return ((a, b) if (a, b) != (1.0, 0.0) else None), True
        f = a / s0
        o = b - f * b0
        return ((f, o) if (f, o) != (1.0, 0.0) else None), False

    # -------------------------------------------------------------- bindings
    def resolve(self, node: Node, name: str) -> tuple | None:
        if node.connector(name) is not None:
            return ("s", node.path, name)
        best = max((e for e in node.elements if name.startswith(e + ".")), key=len,
                   default=None)
        if best is None:
            return None
        el, rest = node.elements[best], name[len(best) + 1:]
        if isinstance(el, Node):
            return self.resolve(el, rest)
        return ("c", el.name, rest)

    def bindings(self) -> None:
        ignored = []
        for node in self.top.walk():  # children first: a higher level wins
            for b in node.bound:
                target = self.resolve(node, b.name)
                if target is None:
                    ignored.append((node, b))
                elif target[0] == "s":
                    self.values[target] = b
                else:
                    comp = self.comps[target[1]]
                    comp.bound.append(Bound(target[2], b.type, b.value, b.unit, b.el, b.file,
                                            b.transform, b.suppress, b.entry))
        if ignored:
            names = ", ".join(f"{b.name} ({b.file} line {b.el.sourceline})"
                              for _, b in ignored[:10])
            warnings.warn(f"SSP '{self.reader.label}': parameter binding names {names}"
                          f"{' ...' if len(ignored) > 10 else ''} match no component variable "
                          "or system connector and are ignored (SSP rule)", FMUWarning,
                          stacklevel=5)

    # ----------------------------------------------------------------- build
    def build(self) -> None:
        sysm, r = self.system, self.reader
        self.edges()
        self.bindings()
        sysm.components = dict(self.comps)
        flat_conns: list = []
        used: dict[tuple, SSPConnector] = {}

        def add_connector(ep: tuple) -> str:
            name = _flat_end(ep)[1]
            if ep not in used:
                d = self.decl(ep)
                used[ep] = SSPConnector(name, d.kind, d.type, d.unit)
            return name

        for c in self.top.connectors:  # the top-level connectors stay, used or not
            add_connector(("s", (), c.name))
        for comp in self.comps.values():
            for c in comp.connectors:
                ep = ("c", comp.name, c.name)
                ch = self.chain(ep)
                if not ch:
                    continue
                src = ch[0].src
                if c.kind in _PARAM:
                    self.propagate(comp, c, ep, ch)
                    continue
                if src[0] == "s" and self.kinds.get(src, self.decl(src).kind) != "input":
                    r.note(f"{ch[0].raw.file} line {ch[0].raw.el.sourceline}: input "
                           f"{flat_name(ep)} is fed by {flat_name(src)}, which nothing feeds; "
                           "it keeps its start value")
                    continue
                start = _flat_end(src)
                if src[0] == "s":
                    add_connector(src)
                tr, sup = self.relative(ch, self.unit(src), self.unit(ep))
                flat_conns.append((SSPConnection(start, _flat_end(ep), tr, sup), ch))
        for node in self.nodes.values():  # system outputs show their sources
            for c in node.connectors:
                ep = ("s", node.path, c.name)
                if c.kind != "output":
                    continue
                ch = self.chain(ep) if ep in self.feeds else []
                if not ch or ch[0].src[0] != "c":
                    if ch:
                        r.note(f"{ch[0].raw.file} line {ch[0].raw.el.sourceline}: system "
                               f"output {flat_name(ep)} shows the system connector "
                               f"{flat_name(ch[0].src)}, not a component output: not recorded")
                    continue
                add_connector(ep)
                tr, sup = self.relative(ch, self.unit(ch[0].src), self.unit(ep))
                flat_conns.append((SSPConnection(_flat_end(ch[0].src), _flat_end(ep), tr, sup),
                                   ch))
        flat_conns.sort(key=lambda cc: cc[1][-1].raw.index)  # the order of the file
        sysm.connections = [c for c, _ in flat_conns]
        r.origins = {(c.start, c.end): ch for c, ch in flat_conns}
        for node in self.nodes.values():  # parameter connectors of nested systems
            for c in node.connectors:
                ep = ("s", node.path, c.name)
                if c.kind in ("parameter", "structuralParameter") and ep in self.values:
                    add_connector(ep)
        sysm.connectors = list(used.values())
        for ep, b in self.values.items():
            name = _flat_end(ep)[1]
            kind = self.decl(ep).kind
            entry = Bound(name, b.type, b.value, b.unit, b.el, b.file, b.transform, b.suppress,
                          b.entry)
            if kind == "input" and ep in used:
                sysm._bound.append(entry)
                sysm.inputs[name] = b.value
            elif kind == "input":
                r.note(f"{b.file} line {b.el.sourceline}: the value bound to the system input "
                       f"{name} has no effect: " + ("a connection feeds it" if ep in self.feeds
                                                    else "it feeds nothing"))
            elif kind in ("parameter", "structuralParameter"):
                sysm.parameters[name] = self.connector_value(ep, b)
            else:
                r.note(f"{b.file} line {b.el.sourceline}: a value is bound to the {kind} "
                       f"connector {name}; it has no effect")
        for comp in self.comps.values():  # raw values; checked against the FMUs later
            comp.parameters = {e.name: e.value for e in comp.bound}

    def connector_value(self, ep: tuple, b: Bound) -> Any:
        """A value bound to a system connector, in the connector's own unit."""
        from .values import KIND_OF_TYPE
        decl = self.decl(ep)
        v = b.value
        if KIND_OF_TYPE[b.type] != "real":
            if b.transform is not None and b.transform[0] != "linear":
                v = b.transform[1].get(v, v)
            return v
        node = self.nodes[ep[1]]
        u = unit_of(decl.unit, node.units) if decl.unit else None
        if u is not None and b.unit is not None and b.unit[1] is not None and not b.suppress:
            try:
                s, c = conversion(b.unit[1], u)
            except UnitError as exc:
                raise self.reader.fail(b.el, f"value for system connector {flat_name(ep)} in "
                                             f"unit {b.unit[0]!r} cannot be converted to the "
                                             f"connector's unit {decl.unit!r} ({exc})",
                                       file=b.file) from None
            v = s * v + c
        if b.transform is not None:
            v = b.transform[1] * v + b.transform[2]
        return v

    def propagate(self, comp: SSPComponent, c: SSPConnector, ep: tuple, chain: list) -> None:
        """A component parameter connected to a parameter source gets the source's value."""
        src = chain[0].src
        raw = chain[0].raw
        if self.kinds.get(src, self.decl(src).kind) in ("calculatedParameter", "constant") \
                or src[0] == "c":
            raise self.reader.fail(raw.el, f"parameter {flat_name(ep)} is connected to the "
                                           f"{self.decl(src).kind} {flat_name(src)}: values "
                                           "computed by an FMU at initialization are not "
                                           "propagated", "bind the value with a "
                                           "ParameterBinding instead", file=raw.file)
        b = self.values.get(src)
        if b is None:
            return  # an unbound parameter connector: the parameter keeps its own value
        from .values import KIND_OF_TYPE
        v = self.connector_value(src, b)
        decl = self.decl(src)
        su = self.unit(src)
        real = KIND_OF_TYPE[b.type] == "real"
        unit = (decl.unit, su) if real and su is not None else (
            b.unit if real and b.transform is None else None)
        tr, sup = self.relative(chain, su, self.unit(ep))
        last = chain[-1].raw
        comp.bound.append(Bound(c.name, b.type, v, unit, b.el, b.file,
                                ("linear",) + tuple(tr) if tr else None, sup,
                                (last.el, last.file)))


def flatten(reader: _Reader, top: Node, system: SSPSystem) -> None:
    """Fill ``system`` from the tree ``top`` (see the module docstring)."""
    _Flattener(reader, top, system).build()


def components(top: Node) -> list:
    """Every FMU component of the tree, in the order of the file."""
    out = []
    for e in top.elements.values():
        out.extend(components(e) if isinstance(e, Node) else [e])
    return out


def assign_units(reader: _Reader, top: Node, system: SSPSystem, cosim: dict) -> None:
    """Decide which components run through Model Exchange and group them into units.

    A component runs through Model Exchange when it says
    ``implementation="ModelExchange"``, when it says ``"any"`` and sits in a system with
    an OMSimulator Model Exchange solver (or refers to one by name), or when its FMU has
    no Co-Simulation interface.  The ME components of one system (or of one named
    OMSimulator solver) form one unit: one block diagram integrated by one solver.
    cosim's own annotation (written by :func:`~fmus.ssp.export_ssp`) names the units and
    their solvers directly.
    """
    named: dict = {}
    for node in top.walk():
        named.update(node.settings.get("named", {}))
    by_cosim = {c: u for u, (_, comps) in cosim.get("units", {}).items() for c in comps}
    for comp in system.components.values():
        node, el, ref = reader.comp_info[comp.name]
        where = f"component '{comp.name}' ({comp.source})"
        ifaces = comp.fmu.info.interfaces if comp.fmu is not None else None
        has_cs = ifaces is None or "CoSimulation" in ifaces
        has_me = ifaces is None or "ModelExchange" in ifaces
        ref_solver = named.get(ref) if ref else None
        if ref and ref not in named:
            raise reader.fail(el, f"{where}: refers to OMSimulator solver {ref!r}, which no "
                                  "system defines; " + did_you_mean(ref, named))
        sc = isinstance(ref_solver, SSPSolver) or node.settings.get("solver") is not None
        impl = comp.implementation
        if comp.name in by_cosim:
            me = True
        elif impl == "ModelExchange":
            me = True
        elif impl == "CoSimulation":
            me = False
            if sc:
                reader.note(f"{reader.file} line {el.sourceline}: {where} asks for "
                            "CoSimulation inside a Model Exchange solver's system: it runs "
                            "through Co-Simulation")
        else:
            me = (sc and has_me) or not has_cs
        if me and not has_me:
            why = "implementation='ModelExchange'" if impl != "any" else \
                "its system integrates Model Exchange FMUs"
            raise reader.fail(el, f"{where}: the FMU has no Model Exchange interface, but "
                                  f"{why}",
                              "use implementation='CoSimulation' or an FMU with ModelExchange")
        if not me and not has_cs:
            raise reader.fail(el, f"{where}: implementation='CoSimulation' but the FMU has no "
                                  "Co-Simulation interface", "use implementation="
                                  "'ModelExchange' or 'any'")
        if not me:
            continue
        if comp.name in by_cosim:
            unit = by_cosim[comp.name]
            solver = cosim["units"][unit][0]
        elif isinstance(ref_solver, SSPSolver):
            unit, solver = ref, ref_solver
        else:
            unit = "/".join(node.path) or f"{system.name or 'system'}_me"
            solver = node.settings.get("solver")
            if solver is None:
                solver = SSPSolver("bdf", origin="default")
        if unit in system.components:
            raise reader.fail(el, f"{where}: Model Exchange unit name {unit!r} is also a "
                                  "component's name", "rename the component or the solver")
        comp.unit = unit
        prev = system.solvers.setdefault(unit, solver)
        if prev != solver:
            raise reader.fail(el, f"{where}: unit {unit!r} has two solver settings")
    defaults = [u for u, s in system.solvers.items() if s.origin == "default"]
    if defaults:
        reader.note(f"Model Exchange unit(s) {', '.join(defaults)}: no solver annotation; "
                    "cosim's variable-step 'bdf' is used (load_ssp(solvers=...) chooses "
                    "another)")


def master_settings(reader: _Reader, top: Node, system: SSPSystem, cosim: dict) -> None:
    """The macro step, the FMUs' tolerance and step control from the annotations."""
    m = top.settings.get("master")
    named = [s for n in top.walk() for s in n.settings.get("named", {}).values()
             if isinstance(s, dict)]
    if m is None and named:
        m = min(named, key=lambda d: d.get("step_s") or float("inf"))
    for node in top.walk():
        nm = node.settings.get("master")
        if node is not top and nm is not None and (m is None or nm.get("step_s") !=
                                                  m.get("step_s")):
            reader.note(f"{node.file} line {nm['line']}: {node.label()}: its own master step "
                        "is not used; one master steps every co-simulated component")
    if m is not None:
        system.tolerance = m.get("tolerance")
        if "step_control" in m:
            system.step_control = m["step_control"]
            system.step_s = m["step_control"].get("h0")
        else:
            system.step_s = m.get("step_s")
    if cosim.get("step_s") is not None:
        system.step_s = cosim["step_s"]
        system.step_control = None
    if cosim.get("tolerance") is not None:
        system.tolerance = cosim["tolerance"]
