"""The import graph of the project's modules, read from their source (``ast``), and its
circles.

Every import counts, module-level or inside a function (a lazy import is still a
dependency of the layering); imports under ``if TYPE_CHECKING:`` do not.  A package's
``__init__`` importing its own submodules is the package's face, not a dependency: edges
*into* a package ``__init__`` from its own submodules are kept (a submodule that imports its
package's face depends on everything the face exports), edges from an ``__init__`` to its
own submodules are not.

Imports through a package's face are followed to the module that defines the name: ``from
fmus import load_fmu`` depends on ``fmus`` and on ``fmus.importer``, whether the face
imports the name itself (``from .importer import load_fmu``) or lazily through a
module-level ``__getattr__`` and a table of names (``{"load_fmu": ("importer",
"load_fmu")}`` or ``{"Simulator": "simulator"}``: :func:`face_names`).
"""

from __future__ import annotations

import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("cosim", "blocks", "fmus", "hil")


def modules() -> dict[str, pathlib.Path]:
    out = {}
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*.py"):
            parts = p.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = p
    return out


def _type_checking(node: ast.AST) -> bool:
    t = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        isinstance(t, ast.Name) and t.id == "TYPE_CHECKING"
        or isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    stack = [tree]
    while stack:
        node = stack.pop()
        if _type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _known(name: str, mods: dict) -> str | None:
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def face_names(package: str, path: pathlib.Path, mods: dict) -> dict[str, str]:
    """``{name: defining module}`` of a package's face (its ``__init__``): its own
    ``from .sub import name`` imports and the string tables of a lazy ``__getattr__``
    (module-level dicts whose values name a submodule, ``"sub"`` or ``("sub", attr)``)."""
    out: dict[str, str] = {}
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            mod = (".".join([package] + ([node.module] if node.module else []))
                   if node.level == 1 else node.module or "")
            if mod.startswith(package + ".") and mod in mods:
                for a in node.names:
                    out[a.asname or a.name] = mod
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Dict):
            for k, v in zip(value.keys, value.values, strict=True):
                if isinstance(v, ast.Tuple) and v.elts:
                    v = v.elts[0]
                if (isinstance(k, ast.Constant) and isinstance(k.value, str)
                        and isinstance(v, ast.Constant) and isinstance(v.value, str)
                        and f"{package}.{v.value}" in mods):
                    out.setdefault(k.value, f"{package}.{v.value}")
    return out


def _through_faces(mod: str, name: str, faces: dict) -> list[str]:
    """The modules that define ``name`` imported from ``mod`` (faces followed, nested)."""
    out = []
    while mod in faces and name in faces[mod]:
        mod = faces[mod][name]
        out.append(mod)
    return out


def graph() -> dict[str, set[str]]:
    """``{module: modules it imports}`` among the project's modules."""
    mods = modules()
    faces = {m: face_names(m, p, mods) for m, p in mods.items() if p.name == "__init__.py"}
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        is_pkg = path.name == "__init__.py"
        for node in _imports(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = m.split(".") if is_pkg else m.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in mods]
                targets = subs if len(subs) == len(node.names) else subs + [mod]
                for a in node.names:  # through the face to the defining module
                    targets += _through_faces(mod, a.name, faces)
            for t in targets:
                k = _known(t, mods)
                if k is None or k == m:
                    continue
                if is_pkg and k.startswith(m + "."):
                    continue  # a package's face importing its own submodules
                edges[m].add(k)
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    out: list = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def path_between(edges: dict, a: str, b: str) -> list[str]:
    """A shortest import path from ``a`` to ``b`` (for error messages)."""
    prev = {a: None}
    queue = [a]
    while queue:
        v = queue.pop(0)
        if v == b:
            break
        for w in sorted(edges[v]):
            if w not in prev:
                prev[w] = v
                queue.append(w)
    out, v = [], b
    while v is not None:
        out.append(v)
        v = prev.get(v)
    return out[::-1]
