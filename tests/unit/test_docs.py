"""The documentation: every ```python block of every page runs, and the site builds.

The blocks of one page run in order in one namespace (a later block may use the names
of an earlier one), with the repository root as the working directory.  A block preceded
by the comment ``<!-- no-run: why -->`` is skipped (kept for blocks that need hardware or
take long).  A block preceded by ``<!-- requires: gcc fmpy -->`` needs those programs (on
the PATH) or modules (importable): without them the rest of the page is skipped, as the
test suite skips its own tests that need them.  ``mkdocs build --strict`` must pass when
MkDocs is installed (the ``docs`` extra).
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys
import traceback

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
NO_RUN = "<!-- no-run"
REQUIRES = re.compile(r"<!-- requires:(.*?)-->")
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


def python_blocks(text: str) -> list[tuple[int, str, bool, list[str]]]:
    """``(line, code, runs, requirements)`` of every ```python block of a page."""
    blocks = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip().splitlines()
        comment = before[-1].strip() if before else ""
        req = REQUIRES.fullmatch(comment)
        blocks.append((text.count("\n", 0, m.start()) + 2, m.group(1),
                       not comment.startswith(NO_RUN), req.group(1).split() if req else []))
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


@pytest.mark.parametrize("page", PAGES)
def test_page_examples_run(page, monkeypatch):
    text = (DOCS / page).read_text()
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    ns: dict = {"__name__": f"docs.{page}"}
    for k, (line, code, runs, requirements) in enumerate(python_blocks(text), start=1):
        if not runs:
            continue
        if missing(requirements):
            pytest.skip(f"docs/{page}, python block {k} and after need "
                        f"{', '.join(missing(requirements))}")
        try:
            exec(compile(code, f"docs/{page}:{line}", "exec"), ns)
        except Exception as exc:  # noqa: BLE001 - report the page and the block
            where = "".join(traceback.format_tb(exc.__traceback__)[1:])
            pytest.fail(f"docs/{page}, python block {k} (line {line}) failed: "
                        f"{type(exc).__name__}: {exc}\n{where}")


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
