"""``docs/architecture.md`` is drawn from the code: its floors are the import test's, every
module whose docstring holds an implementers' checklist has its row, and every module it
names exists."""

import ast
import pathlib
import re

from tests.unit.test_imports import FLOORS

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "architecture.md").read_text()


def test_the_floors_are_the_import_tests():
    line = next(x for x in PAGE.splitlines() if x.startswith("Floors:"))
    assert re.findall(r"`(\w+)`", line) == list(FLOORS)


def _contract_modules() -> set[str]:
    """Modules of the four packages whose module or class docstrings hold a checklist
    (the contracts of an extension kind)."""
    out = set()
    for pkg in FLOORS:
        for path in (ROOT / pkg).rglob("*.py"):
            tree = ast.parse(path.read_text())
            docs = [ast.get_docstring(tree) or ""] + [
                ast.get_docstring(n) or "" for n in ast.walk(tree)
                if isinstance(n, ast.ClassDef)]
            if any(re.search(r"implementers' checklist|^checklist", d, re.I | re.M)
                   for d in docs):
                out.add(path.relative_to(ROOT).as_posix())
    return out


def test_every_contract_in_the_code_has_its_row():
    rows = set(re.findall(r"^\| [^|]+ \| `([\w/.]+\.py)` \|", PAGE, re.M))
    found = _contract_modules()
    assert {"cosim/block.py", "cosim/solvers.py", "cosim/advancer.py"} <= found
    assert found <= rows, f"contracts missing from docs/architecture.md: {found - rows}"


def test_every_module_the_page_names_exists():
    names = set(re.findall(r"`((?:cosim|blocks|fmus|hil|tests)/[\w/.]+\.py)`", PAGE))
    assert names
    missing = [n for n in names if not (ROOT / n).exists()]
    assert not missing, missing
