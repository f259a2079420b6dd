"""The documentation: every ```python block of every page runs, and the site builds.

The blocks of one page run in order in one namespace (a later block may use the names
of an earlier one), in a fresh Python process whose working directory is an empty
temporary folder, as a reader who copies them into a new session would run them: an
import of a repository folder that is not an installed package (``examples``, ``bench``)
or a path relative to the repository root fails there.  A block preceded by the comment
``<!-- no-run: why -->`` is skipped (kept for blocks that need hardware or take long).  A
block preceded by ``<!-- requires: gcc fmpy -->`` needs those programs (on the PATH) or
modules (importable): without them the rest of the page is skipped, as the test suite
skips its own tests that need them.  A block preceded by ``<!-- file: NAME -->`` is a
file the page shows: it is written to ``NAME`` in that folder, not run.  ``mkdocs build
--strict`` must pass when MkDocs is installed (the ``docs`` extra).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
NO_RUN = "<!-- no-run"
REQUIRES = re.compile(r"<!-- requires:(.*?)-->")
FILE = re.compile(r"<!-- file:\s*(\S+)\s*-->")
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)

#: Runs the blocks of one page (JSON on stdin) in one namespace; a failure names the block.
RUNNER = """
import json, sys, traceback, warnings
from cosim.errors import CosimWarning
warnings.filterwarnings("error", category=CosimWarning, module="cosim")  # as pyproject's pytest
page, blocks = json.load(sys.stdin)
ns = {"__name__": "docs." + page}
for k, line, code, file in blocks:
    if file:
        with open(file, "w") as f:
            f.write(code)
        continue
    try:
        exec(compile(code, f"docs/{page}:{line}", "exec"), ns)
    except BaseException as exc:
        where = "".join(traceback.format_tb(exc.__traceback__)[1:])
        print(f"docs/{page}, python block {k} (line {line}) failed: "
              f"{type(exc).__name__}: {exc}\\n{where}", file=sys.stderr)
        sys.exit(1)
"""


def python_blocks(text: str) -> list[tuple[int, str, bool, list[str], str | None]]:
    """``(line, code, runs, requirements, file)`` of every ```python block of a page."""
    blocks = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip().splitlines()
        comment = before[-1].strip() if before else ""
        req = REQUIRES.fullmatch(comment)
        file = FILE.fullmatch(comment)
        blocks.append((text.count("\n", 0, m.start()) + 2, m.group(1),
                       not comment.startswith(NO_RUN), req.group(1).split() if req else [],
                       file.group(1) if file else None))
    return blocks


def missing(requirements: list[str]) -> list[str]:
    """The programs (not on the PATH) and modules (not importable) of a block."""
    return [r for r in requirements
            if shutil.which(r) is None and importlib.util.find_spec(r) is None]


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    absent = [p for p in PAGES if p not in nav]
    assert not absent, f"pages not in mkdocs.yml nav: {absent}"


def test_no_run_blocks_are_rare_and_explained():
    for page in PAGES:
        text = (DOCS / page).read_text()
        for m in re.finditer(r"<!-- no-run(.*?)-->", text, re.S):
            assert len(m.group(1).strip(" :")) > 10, f"{page}: a no-run comment without a why"


def run_page(page: str, blocks: list, folder: pathlib.Path) -> subprocess.CompletedProcess:
    """Run ``(k, line, code, file)`` blocks of ``page`` in a new Python in ``folder``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["MPLBACKEND"] = "Agg"
    return subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps([page, blocks]),
                          cwd=folder, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("page", PAGES)
def test_page_examples_run(page, tmp_path):
    blocks, skipped = [], None
    for k, (line, code, runs, requirements, file) in enumerate(
            python_blocks((DOCS / page).read_text()), start=1):
        if missing(requirements):
            skipped = (f"docs/{page}, python block {k} and after need "
                       f"{', '.join(missing(requirements))}")
            break
        if runs or file:
            blocks.append((k, line, code, file))
    if blocks:
        proc = run_page(page, blocks, tmp_path)
        assert proc.returncode == 0, proc.stderr[-6000:] or proc.stdout[-3000:]
    if skipped:
        pytest.skip(skipped)


def _not_installed() -> set[str]:
    """Top-level folders of the repository with Python code that the package does not
    install (``examples``, ``bench``, ``tests``, ...)."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = conf["tool"]["setuptools"]["packages"]["find"]["include"]
    return {p.name for p in ROOT.iterdir()
            if p.is_dir() and not p.name.startswith(".") and any(p.glob("*.py"))
            and not any(re.fullmatch(pat.replace("*", ".*"), p.name) for pat in include)}


def imported_modules(code: str) -> set[str]:
    """Top-level names of the modules a block of code imports."""
    out = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_no_block_imports_a_repository_folder():
    forbidden = _not_installed()
    assert {"examples", "bench"} <= forbidden
    bad = [f"docs/{page}:{line} imports {', '.join(sorted(imported_modules(code) & forbidden))}"
           for page in PAGES
           for line, code, *_ in python_blocks((DOCS / page).read_text())
           if imported_modules(code) & forbidden]
    assert not bad, ("docs python blocks must run from any folder; these import repository "
                     "folders that are not installed packages (move what they need into "
                     "an installed module, e.g. blocks.benchmarks, or inline it):\n"
                     + "\n".join(bad))


def test_a_page_runs_from_an_empty_folder(tmp_path):
    """The harness itself: a block importing ``bench`` or reading a repository path fails."""
    for code in ("import bench.lim", "open('examples/bouncing_ball.py').close()"):
        proc = run_page("probe.md", [(1, 3, code, None)], tmp_path)
        assert proc.returncode == 1 and "python block 1 (line 3) failed" in proc.stderr
    proc = run_page("probe.md", [(1, 3, "X = 1\n", "model.py"),
                                 (2, 9, "import model\nassert model.X == 1\n", None)], tmp_path)
    assert proc.returncode == 0, proc.stderr


def _mkdocs() -> list[str] | None:
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        return None
    return [sys.executable, "-m", "mkdocs"]


@pytest.mark.skipif(_mkdocs() is None, reason="mkdocs is not installed (the docs extra)")
def test_mkdocs_build_strict(tmp_path):
    out = tmp_path / "site"
    proc = subprocess.run([*_mkdocs(), "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    assert (out / "index.html").exists()
    for page in PAGES:
        html = out / (page[:-3] + "/index.html" if page != "index.md" else "index.html")
        assert html.exists(), f"{page} was not built"
    shutil.rmtree(out)
