"""MkDocs hook: the block reference, generated at build time from the block library.

For every module of the core library (``blocks/*.py`` that defines blocks: sources,
math, continuous, discrete, pid, tables, lti, sinks) a page ``reference/<module>.md``;
for every domain library (a subpackage ``blocks/<package>/``: electric, hydraulics,
multibody, vehicle, ...) a page ``reference/<package>.md`` with, per module that defines
blocks, its docstring (the model's equations often live there) and its blocks; and an
overview ``reference/index.md``.  They are built from the code on every ``mkdocs build``
(``File.generated``), so the reference cannot drift from it.  For each public block
class: its constructor signature (:mod:`inspect`), its docstring (numpydoc, converted
by :mod:`numpydoc_md`: equations as text, roles as links), its Ports table (direction,
name, shape, unit, what the output reads), and its parameters: which constructor
arguments are **tunable** context parameters (found by reading the class source with
:mod:`ast`: the names given to ``declare_parameter`` or an alias of it, literally, as
f-strings, through ``for`` loops over literal names or module constants, with their
units) and which are **fixed** at construction.
``tests/unit/test_docs.py`` (core) and ``tests/unit/test_block_reference.py`` (every
public block of ``blocks/``) check that every block has a Ports section and a section
here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import pkgutil
import re
import sys
import textwrap
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpydoc_md as nd

FOLDER = "reference"
#: Page order (modules found later go after these, alphabetically) and nav titles.
ORDER = {"sources": "Sources", "math": "Math", "continuous": "Continuous",
         "discrete": "Discrete", "pid": "PID controllers", "tables": "Lookup tables and data",
         "lti": "Linear systems", "sinks": "Sinks"}
#: Domain libraries (subpackages of ``blocks``): page order and titles (others follow,
#: alphabetically), and the narrative page of each (``docs/libraries/``).
PACKAGES = {"electric": "Electric drives", "hydraulics": "Hydraulics",
            "multibody": "Multibody", "vehicle": "Vehicles", "controllers": "Controllers",
            "ocean": "Ocean", "vortex": "Vortex flow", "cranes": "Cranes",
            "paper": "Paper machine", "benchmarks": "Benchmarks"}
LIBRARY_PAGES = {"electric": "electric.md", "hydraulics": "hydraulics.md",
                 "multibody": "multibody.md", "vehicle": "vehicle.md",
                 "controllers": "controllers.md", "ocean": "fluids.md", "vortex": "fluids.md"}
UNRESOLVED = "?"
#: A Ports row's text: shape, ``[unit]`` (one level of brackets inside allowed), the rest.
_SHAPE_UNIT = re.compile(r"^(?P<shape>[^\[;]*?)\s*\[(?P<unit>(?:[^\[\]]|\[[^\]]*\])*)\]"
                         r"\s*(?:[;,]|:(?=\s))?\s*(?P<rest>.*)$", re.S)


@dataclass
class Tunable:
    """A parameter a block declares: its name, its unit (a literal, ``"from argument
    NAME"`` or ``None``) and the class whose source declares it."""

    name: str
    unit: str | None
    owner: str


def _block_base() -> type:
    from cosim.block import Block
    return Block


def core_modules() -> list[str]:
    """The modules ``blocks.<name>`` (not subpackages) that define public blocks."""
    import blocks
    found = [m.name for m in pkgutil.iter_modules(blocks.__path__)
             if not m.ispkg and not m.name.startswith("_")
             and block_classes(importlib.import_module(f"blocks.{m.name}"))]
    return sorted(found, key=lambda n: (list(ORDER).index(n) if n in ORDER else len(ORDER), n))


def domain_packages() -> list[str]:
    """The subpackages ``blocks.<name>`` whose public modules define public blocks."""
    import blocks
    found = [m.name for m in pkgutil.iter_modules(blocks.__path__)
             if m.ispkg and not m.name.startswith("_") and package_modules(m.name)]
    order = list(PACKAGES)
    return sorted(found, key=lambda n: (order.index(n) if n in order else len(order), n))


def package_modules(package: str) -> list[ModuleType]:
    """The public modules of ``blocks.<package>`` (at any depth, the package itself
    included) that define public blocks, by module path."""
    pkg = importlib.import_module(f"blocks.{package}")
    names = [pkg.__name__] + [m.name for m in pkgutil.walk_packages(pkg.__path__,
                                                                     pkg.__name__ + ".")]
    mods = [importlib.import_module(n) for n in names
            if not any(part.startswith("_") for part in n.split("."))]
    return sorted((m for m in mods if block_classes(m)), key=lambda m: m.__name__)


def block_classes(module: ModuleType) -> list[type]:
    """Public Block subclasses defined in ``module``, in source order."""
    base = _block_base()
    found = [c for n, c in vars(module).items()
             if inspect.isclass(c) and issubclass(c, base) and c.__module__ == module.__name__
             and not n.startswith("_")]
    return sorted(found, key=lambda c: inspect.getsourcelines(c)[1])


def functions(module: ModuleType) -> list[Any]:
    """Public functions of ``module`` that the package ``blocks`` exports."""
    import blocks
    return [f for n, f in vars(module).items()
            if inspect.isfunction(f) and f.__module__ == module.__name__
            and n in getattr(blocks, "__all__", ())]


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _strings(node: ast.AST, parents: dict, module: ModuleType | None = None) -> list[str]:
    """The texts ``node`` can have: a literal; an f-string of such parts (every
    combination); a loop variable over literal values, tuples of them or a module
    constant (``for rail in RAILS``, ``for kind, x in (("static", a), ...)``); a name
    assigned one of these earlier in the function.  ``[UNRESOLVED]`` otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append([str(part.value)])
            elif isinstance(part, ast.FormattedValue) and part.format_spec is None:
                vals = _strings(part.value, parents, module)
                if UNRESOLVED in vals:
                    return [UNRESOLVED]
                parts.append(vals)
            else:
                return [UNRESOLVED]
        return ["".join(combo) for combo in itertools.product(*parts)]
    if isinstance(node, ast.Name):
        p = parents.get(node)
        func = None
        while p is not None:
            loops = []
            if isinstance(p, ast.For):
                loops = [(p.target, p.iter)]
            elif isinstance(p, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                loops = [(g.target, g.iter) for g in p.generators]
            for target, it in loops:
                vals = _loop_values(target, it, node.id, module)
                if vals is not None:
                    return vals
            if func is None and isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
                func = p
            p = parents.get(p)
        if func is not None:
            assigns = [a for a in ast.walk(func) if isinstance(a, ast.Assign)
                       and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)
                       and a.targets[0].id == node.id and a.lineno <= node.lineno]
            if assigns:
                return _strings(max(assigns, key=lambda a: a.lineno).value, parents, module)
    return [UNRESOLVED]


def _loop_values(target: ast.AST, it: ast.AST, name: str,
                 module: ModuleType | None) -> list[str] | None:
    """The values ``name`` takes in ``for target in it`` (None: not bound here, or not
    literal)."""
    if isinstance(target, ast.Name):
        if target.id != name:
            return None
        index = None
    elif isinstance(target, ast.Tuple):
        ids = [e.id if isinstance(e, ast.Name) else None for e in target.elts]
        if name not in ids:
            return None
        index = ids.index(name)
    else:
        return None
    items = _literal_sequence(it, module)
    if items is None:
        return None
    values = [v if index is None else (v[index] if isinstance(v, tuple) and len(v) > index
                                       else None) for v in items]
    return values if values and all(isinstance(v, str) for v in values) else None


def _literal_sequence(node: ast.AST, module: ModuleType | None) -> list | None:
    """A tuple or list written out (its constants, tuples of constants as tuples, other
    elements as None), or a module constant that is a tuple or list."""
    if isinstance(node, (ast.Tuple, ast.List)):
        def value(e: ast.AST) -> Any:
            if isinstance(e, ast.Constant):
                return e.value
            if isinstance(e, ast.Tuple):
                return tuple(value(x) for x in e.elts)
            return None
        return [value(e) for e in node.elts]
    if isinstance(node, ast.Name) and module is not None:
        v = getattr(module, node.id, None)
        if isinstance(v, (tuple, list)):
            return list(v)
    return None


def _calls(cls: type, method: str) -> list[tuple[ast.Call, dict, str, ModuleType]]:
    """Calls ``self.<method>(...)`` (or through an alias, ``p = self.<method>``) in the
    source of ``cls`` and of its bases from the block library."""
    out = []
    for klass in cls.__mro__:
        if not klass.__module__.startswith("blocks."):
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        parents = _parents(tree)
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and n.func.attr == method]
        for a in ast.walk(tree):  # p = self.<method>; p(...) in the same function
            if (isinstance(a, ast.Assign) and len(a.targets) == 1
                    and isinstance(a.targets[0], ast.Name)
                    and isinstance(a.value, ast.Attribute) and a.value.attr == method):
                scope = parents.get(a)
                while scope is not None and not isinstance(scope, ast.FunctionDef):
                    scope = parents.get(scope)
                calls += [n for n in ast.walk(scope or tree) if isinstance(n, ast.Call)
                          and isinstance(n.func, ast.Name) and n.func.id == a.targets[0].id
                          and n.lineno >= a.lineno]
        module = sys.modules.get(klass.__module__)
        out += [(n, parents, klass.__name__, module)
                for n in sorted(calls, key=lambda n: (n.lineno, n.col_offset))]
    return out


def _arg(call: ast.Call, index: int, keyword: str) -> ast.AST | None:
    if len(call.args) > index:
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def tunable_parameters(cls: type) -> list[Tunable]:
    """The parameters ``cls`` declares (``declare_parameter``), read from its source."""
    found: dict[str, Tunable] = {}
    for call, parents, owner, module in _calls(cls, "declare_parameter"):
        name_node, unit_node = _arg(call, 0, "name"), _arg(call, 2, "unit")
        unit = None
        if isinstance(unit_node, ast.Constant) and isinstance(unit_node.value, str):
            unit = unit_node.value
        elif isinstance(unit_node, ast.Name):
            unit = f"from argument {unit_node.id}"
        names = _strings(name_node, parents, module) if name_node is not None else [UNRESOLVED]
        for name in names:
            found.setdefault(name, Tunable(name, unit, owner))
    return list(found.values())


def declared_port_names(cls: type) -> set[str]:
    """Port names ``cls`` declares literally (``declare_input("u", ...)``), for checks."""
    names = set()
    for method in ("declare_input", "declare_output"):
        for call, parents, _, module in _calls(cls, method):
            node = _arg(call, 0, "name")
            if node is not None:
                names |= {n for n in _strings(node, parents, module) if n != UNRESOLVED}
    return names


def signature(obj: Any) -> str:
    """``Name(a, b=1.0, *, c=None)`` without annotations."""
    sig = inspect.signature(obj)
    parts, star = [], False
    for p in sig.parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{p.name}")
            star = True
        elif p.kind is p.VAR_KEYWORD:
            parts.append(f"**{p.name}")
        elif p.default is p.empty:
            parts.append(p.name)
        else:
            parts.append(f"{p.name}={default_text(p.default, obj)}")
    return f"{obj.__name__}({', '.join(parts)})"


def default_text(value: Any, owner: Any) -> str:
    """A default as the reader would write it: its name where the owner's module or
    package defines it (``STS_CRANE``, ``MINERAL_OIL``), its repr if short, else
    ``Type(...)``."""
    module = sys.modules.get(getattr(owner, "__module__", ""), None)
    if not isinstance(value, (int, float, str, bytes, bool, type(None), tuple)):
        scopes = [module] if module else []
        if module is not None and "." in module.__name__:
            scopes.append(sys.modules.get(module.__name__.rsplit(".", 1)[0]))
        for scope in scopes:
            for name, obj in vars(scope or object()).items():
                if obj is value and name.isupper():
                    return name
    text = repr(value)
    if len(text) <= 60:
        return text
    return f"{type(value).__name__}(...)"


class Reference:
    """The generated pages: ``pages()`` maps ``reference/<page>.md`` to Markdown."""

    def __init__(self) -> None:
        self.modules = {name: importlib.import_module(f"blocks.{name}")
                        for name in core_modules()}
        self.packages = {name: package_modules(name) for name in domain_packages()}
        self.where: dict[str, str] = {}  # documented name -> page
        for name, mod in self.modules.items():
            for obj in [*block_classes(mod), *functions(mod)]:
                self.where.setdefault(obj.__name__, name)
        for name, mods in self.packages.items():
            for mod in mods:
                for cls in block_classes(mod):
                    self.where.setdefault(cls.__name__, name)

    def link_from(self, page: str):
        def link(name: str) -> str | None:
            target = self.where.get(name)
            if target is None:
                return None
            anchor = "#" + name.lower()
            return anchor if target == page else f"{target}.md{anchor}"
        return link

    # ------------------------------------------------------------------ pages
    def pages(self) -> dict[str, str]:
        out = {f"{FOLDER}/index.md": self.index()}
        for name in self.modules:
            out[f"{FOLDER}/{name}.md"] = self.page(name)
        for name in self.packages:
            out[f"{FOLDER}/{name}.md"] = self.package_page(name)
        return out

    def index(self) -> str:
        lines = [
            "# Block reference", "",
            "Every block of the core library (`blocks.sources`, `blocks.math`, ...) and of "
            "the domain libraries (`blocks.electric`, `blocks.hydraulics`, ...), generated "
            "from the code at each `mkdocs build`: constructor signatures, docstrings with "
            "their equations, Ports tables and parameters. Import the core blocks from "
            "their module or from `blocks` (`from blocks import PID, Table1D`), the domain "
            "blocks from their package (`from blocks.electric import DCMotor`).", "",
            "- **Ports**: `in`/`out`, the port name (the handle is the attribute of the "
            "same name, or `block.input(\"u\")`), its shape and its unit: a unit "
            "argument name (`unit`, `input_unit`) means the unit given to the "
            "constructor; *no unit*: the port declares none (a vector of mixed units "
            "lists them, `[m, m, rad]`). *reads* (feedthrough) says which inputs an "
            "output reads at the same instant (what algebraic-loop detection sees); "
            "*state only* outputs read none.",
            "- **Tunable** parameters are context parameters (declared with "
            "`declare_parameter`): set per context without rebuilding, "
            "`ctx.set_param(\"pid.kp\", 2.0)`, swept by `cosim sweep --param pid.kp=...`, "
            "exported as tunable FMU parameters (see "
            "[Contexts and parameters](../concepts/contexts-and-parameters.md)). The "
            "constructor argument of the same name gives the initial value.",
            "- **Fixed** arguments are read once by the constructor (they may size ports "
            "or states): another value needs another block, i.e. a rebuild (`cosim sweep "
            "--param NAME=...` on an argument of the diagram function). Their units are "
            "in their names (`resistance_ohm`, `stroke_m`) or descriptions.", "",
        ]
        link = self.link_from("index")
        for name, mod in self.modules.items():
            lines += [f"## [{ORDER.get(name, name)}]({name}.md): `blocks.{name}`", "",
                      "| Block | What it does | Tunable parameters |", "|---|---|---|"]
            for cls in block_classes(mod):
                lines.append(self._index_row(cls, name, link))
            for f in functions(mod):
                lines.append(f"| [`{f.__name__}()`]({name}.md#{f.__name__.lower()}) | "
                             f"{nd.cell(_summary(f), link)} | (a function) |")
            lines.append("")
        for name, mods in self.packages.items():
            lines += [f"## [{PACKAGES.get(name, name)}]({name}.md): `blocks.{name}`", "",
                      "| Block | What it does | Tunable parameters |", "|---|---|---|"]
            for mod in mods:
                for cls in block_classes(mod):
                    lines.append(self._index_row(cls, name, link))
            lines.append("")
        return "\n".join(lines)

    def _index_row(self, cls: type, page: str, link) -> str:
        tun = ", ".join(f"`{t.name}`" for t in tunable_parameters(cls)) or "none"
        return (f"| [`{cls.__name__}`]({page}.md#{cls.__name__.lower()}) | "
                f"{nd.cell(_summary(cls), link)} | {tun} |")

    def page(self, name: str) -> str:
        mod = self.modules[name]
        link = self.link_from(name)
        doc = nd.parse(mod.__doc__)
        lines = [f"# {ORDER.get(name, name)}: `blocks.{name}`", "",
                 nd.markdown(doc.body, link), "",
                 "| Block | What it does |", "|---|---|"]
        for obj in [*block_classes(mod), *functions(mod)]:
            lines.append(f"| [`{obj.__name__}`](#{obj.__name__.lower()}) | "
                         f"{nd.cell(_summary(obj), link)} |")
        lines.append("")
        for cls in block_classes(mod):
            lines += self.block(cls, link)
        for f in functions(mod):
            lines += self.function(f, link)
        return "\n".join(lines)

    def package_page(self, name: str) -> str:
        """A domain library: its package docstring, a table of its blocks, then per module
        its docstring and its blocks."""
        link = self.link_from(name)
        pkg = importlib.import_module(f"blocks.{name}")
        lines = [f"# {PACKAGES.get(name, name)}: `blocks.{name}`", "",
                 nd.markdown(nd.parse(pkg.__doc__).body, link), ""]
        if name in LIBRARY_PAGES:
            lines += [f"Overview, examples and verification: [{PACKAGES.get(name, name)} "
                      f"library](../libraries/{LIBRARY_PAGES[name]}). Import the blocks "
                      f"from the package: `from blocks.{name} import ...`.", ""]
        lines += ["| Block | Module | What it does |", "|---|---|---|"]
        for mod in self.packages[name]:
            for cls in block_classes(mod):
                lines.append(f"| [`{cls.__name__}`](#{cls.__name__.lower()}) | "
                             f"`{mod.__name__}` | {nd.cell(_summary(cls), link)} |")
        lines.append("")
        for mod in self.packages[name]:
            lines += [f"## `{mod.__name__}`", ""]
            if mod.__name__ != pkg.__name__:
                doc = nd.parse(mod.__doc__)
                lines += [nd.markdown(doc.body, link), ""]
                for title, text in doc.sections.items():
                    lines += [f"**{nd.cell(title, link)}**", "", nd.markdown(text, link), ""]
            for cls in block_classes(mod):
                lines += self.block(cls, link, level=3)
        return "\n".join(lines)

    def block(self, cls: type, link, level: int = 2) -> list[str]:
        doc = nd.parse(cls.__doc__)
        lines = [f"{'#' * level} {cls.__name__}", "", "```python", signature(cls), "```", ""]
        base = cls.__mro__[1]
        if base.__name__ in self.where:
            url = link(base.__name__)
            lines += [f"Based on [`{base.__name__}`]({url}).", ""]
        lines += [nd.markdown(doc.body, link), ""]
        rows, notes = nd.split_ports(doc.sections.get("Ports", ""))
        lines += ["**Ports**", "", "| | Port | Shape | Unit | Reads, description |",
                  "|---|---|---|---|---|"]
        for row in rows:
            shape, unit, rest = split_shape_unit(row.description)
            lines.append(f"| {row.direction} | `{row.names}` | {nd.cell(shape, link)} | "
                         f"{_unit_cell(unit)} | {nd.cell(rest, link)} |")
        lines.append("")
        if notes.strip():
            lines += [nd.markdown(notes, link), ""]
        lines += self.parameter_table(cls, doc, link)
        for title, text in doc.sections.items():
            if title not in ("Ports", "Parameters"):
                lines += [f"**{nd.cell(title, link)}**", "", nd.markdown(text, link), ""]
        return lines

    def parameter_table(self, cls: type, doc: nd.Docstring, link) -> list[str]:
        documented = nd.parameters(doc.sections.get("Parameters", ""))
        tunables = {t.name: t for t in tunable_parameters(cls)}
        rows = []
        for p in list(inspect.signature(cls).parameters.values()):
            if p.name == "name":
                continue
            default = ("required" if p.default is p.empty
                       else f"`{default_text(p.default, cls)}`")
            t = tunables.pop(p.name, None)
            kind = f"tunable{_unit(t)}" if t else "fixed"
            label = p.name
            if p.kind is p.VAR_KEYWORD:
                default, kind, label = "", "passed on", f"**{p.name}"
            kind_doc, desc = documented.get(p.name, documented.get(f"**{p.name}", ("", "")))
            text = (f"*{nd.cell(kind_doc)}*: " if kind_doc else "") + nd.cell(desc, link)
            rows.append(f"| `{label}` | {default} | {kind} | {text} |")
        for t in tunables.values():  # declared under a name that is no argument
            rows.append(f"| `{t.name}` | (computed) | tunable{_unit(t)} | |")
        if not rows:
            return []
        return ["**Parameters** (besides `name`, the block's name in its diagram)", "",
                "| Argument | Default | Kind | Description |", "|---|---|---|---|",
                *rows, ""]

    def function(self, f: Any, link) -> list[str]:
        doc = nd.parse(f.__doc__)
        lines = [f"## {f.__name__}", "", "```python", signature(f), "```", "",
                 nd.markdown(doc.body, link), ""]
        for title, text in doc.sections.items():
            lines += [f"**{nd.cell(title, link)}**", "", nd.markdown(text, link), ""]
        return lines


def split_shape_unit(text: str) -> tuple[str, str | None, str]:
    """``(shape, unit, rest)`` of a Ports row's text ``"scalar [m/s]; reads u"``; a row
    without a ``[unit]`` gives ``("", None, text)``."""
    m = _SHAPE_UNIT.match(text)
    if m is None:
        return "", None, text
    return m["shape"].strip(), m["unit"].strip(), m["rest"].strip()


def _unit_cell(unit: str | None) -> str:
    if unit is None:
        return ""
    if unit in ("no unit", "1"):
        return unit
    return f"`{unit}`"


def _unit(t: Tunable) -> str:
    if t.unit is None:
        return ""
    if t.unit.startswith("from argument "):
        return f" [`{t.unit.removeprefix('from argument ')}`]"
    return f" [`{t.unit}`]"


def _summary(obj: Any) -> str:
    """The first sentence of the docstring body (its first paragraph, up to a period)."""
    body = nd.parse(obj.__doc__).body.split("\n\n")[0]
    text = " ".join(body.split())
    ends = [m.end() for m in re.finditer(r"(?<!\be\.g)(?<!\bi\.e)\.(?= )", text)]
    return text[:ends[0]] if ends else text


# ------------------------------------------------------------------ MkDocs hooks
def on_files(files: Any, config: Any) -> Any:
    """Add the generated reference pages to the site."""
    from mkdocs.structure.files import File
    for path, text in Reference().pages().items():
        files.append(File.generated(config, path, content=text))
    return files
