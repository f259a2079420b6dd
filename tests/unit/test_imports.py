"""Imports flow one way, down the floors: cosim (the ground) <- blocks <- fmus <- hil.

A package imports only the packages beneath it (:data:`FLOORS`), so no two packages
reach each other; imports through a package's face (``from fmus import load_fmu``, eager
or lazy through ``__getattr__``) count as imports of the module that defines the name
(``tests/unit/import_graph.py``)."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_cosim_never_imports_the_outer_packages():
    bad = []
    for path in (ROOT / "cosim").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for n in names:
                if n.split(".")[0] in {"blocks", "fmus", "hil", "bench", "examples"}:
                    bad.append(f"{path.name}: {n}")
    assert not bad, bad


def test_no_import_circles_among_the_project_modules():
    """Each module depends only on what lies beneath it: no two modules of cosim, blocks,
    fmus or hil reach each other through imports (lazy imports inside functions count;
    ``if TYPE_CHECKING:`` ones do not)."""
    from tests.unit.import_graph import circles, graph, path_between
    edges = graph()
    found = circles(edges)
    msg = []
    for comp in found:
        a, b = comp[0], comp[1]
        msg.append(" -> ".join(path_between(edges, a, b)) + " -> ... -> "
                   + " -> ".join(path_between(edges, b, a)[1:]))
    assert not found, "import circles:\n  " + "\n  ".join(msg)


#: The floors, ground first: a package may import the packages before it, never after.
FLOORS = ("cosim", "blocks", "fmus", "hil")


def _package_links() -> dict[tuple[str, str], list[tuple[str, str]]]:
    """``{(package, package it imports): [(module, module), ...]}``, top-level packages."""
    from tests.unit.import_graph import PACKAGES, graph
    assert set(PACKAGES) == set(FLOORS)
    links: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for a, targets in graph().items():
        for b in targets:
            pa, pb = a.split(".")[0], b.split(".")[0]
            if pa != pb:
                links.setdefault((pa, pb), []).append((a, b))
    return links


def test_packages_import_only_the_floors_beneath():
    """``blocks`` lies below ``fmus``: a block's C form is registered by the code generator
    (``cosim/codegen/blocks.py``), not imported by the block (``blocks/sinks.py`` imported
    ``fmus.cgen.model`` for the Terminator's)."""
    up = {k: v for k, v in _package_links().items()
          if FLOORS.index(k[1]) > FLOORS.index(k[0])}
    assert not up, "imports up the floors: " + "; ".join(
        f"{a} -> {b}" for links in up.values() for a, b in links)


def test_no_two_packages_import_each_other():
    links = _package_links()
    both = sorted({tuple(sorted(k)) for k in links if (k[1], k[0]) in links})
    assert not both, "two-way package links: " + "; ".join(
        f"{a} <-> {b}: {links[(a, b)][0]} and {links[(b, a)][0]}" for a, b in both)


def test_imports_through_a_face_reach_the_defining_module(tmp_path):
    """A name imported from a package's face counts as an import of the module that
    defines it: eager (``from .sub import name``), lazy tables (``"sub"`` or
    ``("sub", attr)``), and faces nested in faces."""
    from tests.unit.import_graph import _through_faces, face_names
    init = tmp_path / "__init__.py"
    init.write_text("from .eager import A\n"
                    "_LAZY = {'B': 'lazy', 'C': ('lazy', 'C'), 'D': 'sub', 'E': 'nowhere'}\n"
                    "def __getattr__(name): ...\n")
    mods = {m: init for m in ("pkg", "pkg.eager", "pkg.lazy", "pkg.sub")}
    faces = {"pkg": face_names("pkg", init, mods), "pkg.sub": {"D": "pkg.sub.deep"}}
    assert faces["pkg"] == {"A": "pkg.eager", "B": "pkg.lazy", "C": "pkg.lazy",
                            "D": "pkg.sub"}
    assert _through_faces("pkg", "D", faces) == ["pkg.sub", "pkg.sub.deep"]
    assert _through_faces("pkg", "E", faces) == []


def test_the_real_faces_are_followed():
    """``fmus`` and ``cosim`` export lazily; the graph follows both."""
    from tests.unit.import_graph import face_names, graph, modules
    mods = modules()
    assert face_names("fmus", mods["fmus"], mods)["load_fmu"] == "fmus.importer"
    assert face_names("cosim", mods["cosim"], mods)["Simulator"] == "cosim.simulator"
    edges = graph()
    # fmus/pyslave.py: ``from cosim import Simulator`` (inside a function)
    assert {"cosim", "cosim.simulator"} <= edges["fmus.pyslave"]


def test_the_circle_finder_finds_a_circle():
    from tests.unit.import_graph import circles
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
