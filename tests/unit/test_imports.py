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
