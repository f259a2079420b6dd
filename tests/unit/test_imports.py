"""Imports flow one way: blocks, fmus, hil -> cosim, never back."""

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


def test_the_circle_finder_finds_a_circle():
    from tests.unit.import_graph import circles
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
