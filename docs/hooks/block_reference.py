"""MkDocs hook: the block reference, generated at build time from the core block library.

For every module of the core library (``blocks/*.py`` that defines blocks: sources,
math, continuous, discrete, pid, tables, lti, sinks) a page ``reference/<module>.md``,
and an overview ``reference/index.md``, built from the code on every ``mkdocs build``
(``File.generated``), so the reference cannot drift from it.  For each public block
class: its constructor signature (:mod:`inspect`), its docstring (numpydoc, converted
by :mod:`numpydoc_md`: equations as text, roles as links), its Ports table, and its
parameters: which constructor arguments are **tunable** context parameters (found by
reading the class source with :mod:`ast`: the names given to ``declare_parameter``,
literally or through a ``for`` loop over literal names) and which are **fixed** at
construction.  ``tests/unit/test_docs.py`` checks that every public block has a Ports
section and a section here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
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
UNRESOLVED = "?"


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


def _strings(node: ast.AST, parents: dict) -> list[str]:
    """Literal text of ``node``, or the literal values a loop gives its variable."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        p = parents.get(node)
        while p is not None:
            loops = []
            if isinstance(p, ast.For):
                loops = [(p.target, p.iter)]
            elif isinstance(p, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                loops = [(g.target, g.iter) for g in p.generators]
            for target, it in loops:
                if (isinstance(target, ast.Name) and target.id == node.id
                        and isinstance(it, (ast.Tuple, ast.List))
                        and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                for e in it.elts)):
                    return [e.value for e in it.elts]
            p = parents.get(p)
    return [UNRESOLVED]


def _calls(cls: type, method: str) -> list[tuple[ast.Call, dict, str]]:
    """Calls ``self.<method>(...)`` in the source of ``cls`` and of its bases from the
    block library."""
    out = []
    for klass in cls.__mro__:
        if not klass.__module__.startswith("blocks."):
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        parents = _parents(tree)
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and n.func.attr == method]
        out += [(n, parents, klass.__name__)
                for n in sorted(calls, key=lambda n: (n.lineno, n.col_offset))]
    return out


def _arg(call: ast.Call, index: int, keyword: str) -> ast.AST | None:
    if len(call.args) > index:
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def tunable_parameters(cls: type) -> list[Tunable]:
    """The parameters ``cls`` declares (``declare_parameter``), read from its source."""
    found: dict[str, Tunable] = {}
    for call, parents, owner in _calls(cls, "declare_parameter"):
        name_node, unit_node = _arg(call, 0, "name"), _arg(call, 2, "unit")
        unit = None
        if isinstance(unit_node, ast.Constant) and isinstance(unit_node.value, str):
            unit = unit_node.value
        elif isinstance(unit_node, ast.Name):
            unit = f"from argument {unit_node.id}"
        for name in _strings(name_node, parents) if name_node is not None else [UNRESOLVED]:
            found.setdefault(name, Tunable(name, unit, owner))
    return list(found.values())


def declared_port_names(cls: type) -> set[str]:
    """Port names ``cls`` declares literally (``declare_input("u", ...)``), for checks."""
    names = set()
    for method in ("declare_input", "declare_output"):
        for call, parents, _ in _calls(cls, method):
            node = _arg(call, 0, "name")
            if node is not None:
                names |= {n for n in _strings(node, parents) if n != UNRESOLVED}
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
            parts.append(f"{p.name}={p.default!r}")
    return f"{obj.__name__}({', '.join(parts)})"


class Reference:
    """The generated pages: ``pages()`` maps ``reference/<page>.md`` to Markdown."""

    def __init__(self) -> None:
        self.modules = {name: importlib.import_module(f"blocks.{name}")
                        for name in core_modules()}
        self.where: dict[str, str] = {}  # documented name -> module
        for name, mod in self.modules.items():
            for obj in [*block_classes(mod), *functions(mod)]:
                self.where[obj.__name__] = name

    def link_from(self, page: str):
        def link(name: str) -> str | None:
            mod = self.where.get(name)
            if mod is None:
                return None
            anchor = "#" + name.lower()
            return anchor if mod == page else f"{mod}.md{anchor}"
        return link

    # ------------------------------------------------------------------ pages
    def pages(self) -> dict[str, str]:
        out = {f"{FOLDER}/index.md": self.index()}
        for name in self.modules:
            out[f"{FOLDER}/{name}.md"] = self.page(name)
        return out

    def index(self) -> str:
        lines = [
            "# Block reference", "",
            "Every block of the core library (`blocks.sources`, `blocks.math`, ...), "
            "generated from the code at each `mkdocs build`: constructor signatures, "
            "docstrings with their equations, Ports tables and parameters. Import them "
            "from their module or from `blocks` (`from blocks import PID, Table1D`).", "",
            "- **Ports**: `in`/`out`, the port name (the handle is the attribute of the "
            "same name, or `block.input(\"u\")`), its shape and its `[unit]`: a unit "
            "argument name (`[unit]`, `[unit_in]`) means the unit given to the "
            "constructor. *Feedthrough* says which inputs an output reads at the same "
            "instant (what algebraic-loop detection sees); *state only* outputs have none.",
            "- **Tunable** parameters are context parameters (declared with "
            "`declare_parameter`): set per context without rebuilding, "
            "`ctx.set_param(\"pid.kp\", 2.0)`, swept by `cosim sweep --param pid.kp=...`, "
            "exported as tunable FMU parameters (see "
            "[Contexts and parameters](../concepts/contexts-and-parameters.md)). The "
            "constructor argument of the same name gives the initial value.",
            "- **Fixed** arguments are read once by the constructor (they may size ports "
            "or states): another value needs another block, i.e. a rebuild (`cosim sweep "
            "--param NAME=...` on an argument of the diagram function).", "",
        ]
        for name, mod in self.modules.items():
            link = self.link_from("index")
            lines += [f"## [{ORDER.get(name, name)}]({name}.md): `blocks.{name}`", "",
                      "| Block | What it does | Tunable parameters |", "|---|---|---|"]
            for cls in block_classes(mod):
                tun = ", ".join(f"`{t.name}`" for t in tunable_parameters(cls)) or "none"
                lines.append(f"| [`{cls.__name__}`]({name}.md#{cls.__name__.lower()}) | "
                             f"{nd.cell(_summary(cls), link)} | {tun} |")
            for f in functions(mod):
                lines.append(f"| [`{f.__name__}()`]({name}.md#{f.__name__.lower()}) | "
                             f"{nd.cell(_summary(f), link)} | (a function) |")
            lines.append("")
        return "\n".join(lines)

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

    def block(self, cls: type, link) -> list[str]:
        doc = nd.parse(cls.__doc__)
        lines = [f"## {cls.__name__}", "", "```python", signature(cls), "```", ""]
        base = cls.__mro__[1]
        if base.__name__ in self.where:
            url = link(base.__name__)
            lines += [f"Based on [`{base.__name__}`]({url}).", ""]
        lines += [nd.markdown(doc.body, link), ""]
        lines += ["**Ports**", "", "| | Port | Shape, unit, dependencies |", "|---|---|---|"]
        for row in nd.ports(doc.sections.get("Ports", "")):
            lines.append(f"| {row.direction} | `{row.names}` | "
                         f"{nd.cell(row.description, link)} |")
        lines += [""] + self.parameter_table(cls, doc, link)
        for title, text in doc.sections.items():
            if title not in ("Ports", "Parameters"):
                lines += [f"**{title}**", "", nd.markdown(text, link), ""]
        return lines

    def parameter_table(self, cls: type, doc: nd.Docstring, link) -> list[str]:
        documented = nd.parameters(doc.sections.get("Parameters", ""))
        tunables = {t.name: t for t in tunable_parameters(cls)}
        rows = []
        for p in list(inspect.signature(cls).parameters.values()):
            if p.name == "name":
                continue
            default = "required" if p.default is p.empty else f"`{p.default!r}`"
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
            lines += [f"**{title}**", "", nd.markdown(text, link), ""]
        return lines


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
