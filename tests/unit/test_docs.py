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
    for mod in core_blocks():  # the generated block reference: no raw LaTeX or RST left
        html = (out / "reference" / mod / "index.html").read_text()
        assert "<h2 id=" in html and "Ports" in html, mod
        assert not re.search(r":math:|``|\\(frac|dot|math|le)\b", html), mod
    pid = (out / "reference" / "pid" / "index.html").read_text()
    assert 'id="discretepid"' in pid and "tunable" in pid \
        and "I\u0307 = k\u1d62 e" in pid  # İ = kᵢ e
    assert not (out / "hooks").exists()  # the hook modules are not published
    shutil.rmtree(out)


# ------------------------------------------------------------------ block reference
def _hooks():
    """The docs hook modules (``docs/hooks``): block_reference, numpydoc_md, latex_text."""
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        import block_reference
        import latex_text
        import numpydoc_md
    finally:
        sys.path.remove(str(DOCS / "hooks"))
    return block_reference, numpydoc_md, latex_text


def core_blocks() -> dict[str, list[type]]:
    """Public Block subclasses of every module ``blocks/<name>.py`` (not subpackages),
    found here independently of the hook."""
    import pkgutil

    import blocks
    from cosim import Block
    out = {}
    for m in pkgutil.iter_modules(blocks.__path__):
        if m.ispkg or m.name.startswith("_"):
            continue
        mod = importlib.import_module(f"blocks.{m.name}")
        found = [c for n, c in vars(mod).items()
                 if isinstance(c, type) and issubclass(c, Block)
                 and c.__module__ == mod.__name__ and not n.startswith("_")]
        if found:
            out[m.name] = found
    return out


def test_core_library_modules_are_found():
    mods = core_blocks()
    assert {"sources", "math", "continuous", "discrete", "pid", "tables", "lti"} <= set(mods)
    assert {c.__name__ for c in mods["pid"]} == {"PID", "DiscretePID"}


def test_every_block_docstring_has_ports_with_units_an_equation_and_its_arguments():
    """What the reference needs from a docstring: a Ports table whose rows give units
    and name every port the class declares by name, an equation, and every constructor
    argument in its Parameters section."""
    import inspect
    br, nd, _ = _hooks()
    problems = []
    for mod, classes in core_blocks().items():
        for cls in classes:
            where = f"blocks.{mod}.{cls.__name__}"
            doc = nd.parse(cls.__doc__)
            try:
                rows = nd.ports(doc.sections.get("Ports", ""))
            except ValueError as exc:
                problems.append(f"{where}: Ports: {exc}")
                continue
            if not rows:
                problems.append(f"{where}: no Ports section")
            problems += [f"{where}: port {r.names!r} has no [unit]" for r in rows
                         if not re.search(r"\[[^\]]+\]", r.description)]
            listed = {n for r in rows for n in r.literal_names()}
            ranged = [r.names for r in rows if ".." in r.names]
            problems += [f"{where}: port {n!r} is declared but not in its Ports table"
                         for n in sorted(br.declared_port_names(cls) - listed)
                         if not any(n.rstrip("0123456789") == g.split()[0].rstrip("0123456789")
                                    for g in ranged)]
            if ":math:" not in (cls.__doc__ or "") and ".. math::" not in (cls.__doc__ or ""):
                problems.append(f"{where}: no equation (.. math:: or :math:)")
            documented = {n.lstrip("*") for n in nd.parameters(doc.sections.get("Parameters",
                                                                               ""))}
            # **old: the unit keywords used before, refused by name (blocks/_units.py)
            args = [n for n, p in inspect.signature(cls).parameters.items()
                    if n != "name" and p.kind is not p.VAR_KEYWORD]
            problems += [f"{where}: argument {a!r} not in its Parameters section"
                         for a in args if a not in documented]
    assert not problems, "\n".join(problems)


def test_reference_has_a_section_for_every_block_and_is_in_the_nav():
    br, _, _ = _hooks()
    pages = br.Reference().pages()
    nav = (ROOT / "mkdocs.yml").read_text()
    assert "reference/index.md" in pages and "reference/index.md" in nav
    for mod, classes in core_blocks().items():
        page = f"reference/{mod}.md"
        assert page in pages, f"blocks.{mod} has no reference page"
        assert page in nav, f"{page} is not in mkdocs.yml nav"
        for cls in classes:
            section = pages[page].split(f"\n## {cls.__name__}\n", 1)
            assert len(section) == 2, f"{cls.__name__} missing from {page}"
            body = section[1].split("\n## ", 1)[0]
            assert "**Ports**" in body and ("| in |" in body or "| out |" in body), cls
            assert f"[`{cls.__name__}`]({mod}.md#{cls.__name__.lower()})" in \
                pages["reference/index.md"]


#: Constructor arguments that build each block (to compare the parameters the reference
#: finds in the source with those a built block declares); a new block needs a line here.
BUILD_ARGS = {
    "Constant": (2.0,), "Step": (), "Ramp": (), "Sine": (), "Pulse": (0.1,),
    "ClosedFormSource": (lambda t: t,), "TimeSource": (),
    "Gain": (2.0,), "Sum": (), "Product": (), "Saturation": (-1.0, 1.0),
    "DeadZone": (-1.0, 1.0), "Switch": (), "UnitConversion": ("rpm", "rad/s"), "Mux": (2,),
    "Demux": (2,), "RateLimiter": (1.0, 1.0, 0.1), "Relay": (1.0, 0.0, 1.0, 0.0, 0.1),
    "Abs": (), "MinMax": (),
    "Integrator": (), "FilteredDerivative": (10.0,),
    "ZeroOrderHold": (0.1,), "RateTransition": (0.1,), "UnitDelay": (0.1,),
    "DiscreteIntegrator": (0.1,), "DiscreteStateSpace": ([[0.5]], [[1.0]], [[1.0]], [[0.0]], 0.1),
    "DiscreteTransferFunction": ([1.0], [1.0, -0.5], 0.1),
    "PID": (1.0, 1.0, 0.1, 100.0), "DiscretePID": (0.01, 1.0, 1.0, 0.1),
    "Table1D": ([0.0, 1.0], [0.0, 2.0]), "Table2D": ([0.0, 1.0], [0.0, 1.0], [[0, 1], [1, 2]]),
    "FromArrays": ([0.0, 1.0], [0.0, 1.0]), "FromFile": (None,),
    "StateSpace": ([[-1.0]], [[1.0]], [[1.0]]), "TransferFunction": ([1.0], [1.0, 1.0]),
    "FirstOrderLag": (0.5,), "Terminator": (),
}


def test_reference_tunable_parameters_are_those_the_blocks_declare(tmp_path):
    br, _, _ = _hooks()
    csv = tmp_path / "data.csv"
    csv.write_text("time,v\n0,0\n1,1\n")
    for classes in core_blocks().values():
        for cls in classes:
            assert cls.__name__ in BUILD_ARGS, f"add constructor arguments of {cls.__name__}"
            args = [csv if a is None else a for a in BUILD_ARGS[cls.__name__]]
            if cls.__name__ == "Relay":
                block = cls("b", *args[:4], period_s=args[4])
            else:
                block = cls("b", *args)
            found = {t.name for t in br.tunable_parameters(cls)}
            assert found == set(block.parameters), (cls.__name__, found, set(block.parameters))


def test_tunable_parameters_read_from_literals_and_loops():
    br, _, _ = _hooks()
    from blocks.pid import PID
    from blocks.sources import Constant, Step
    assert [(t.name, t.unit) for t in br.tunable_parameters(PID)] == [
        ("kp", None), ("ki", None), ("kd", None), ("tracking_gain", "1/s")]
    assert [(t.name, t.unit) for t in br.tunable_parameters(Constant)] == [
        ("value", "from argument unit")]
    assert br.tunable_parameters(Step) == []


def test_latex_as_text():
    _, _, lt = _hooks()
    assert lt.inline(r"\dot x = A x + B u") == "x\u0307 = A x + B u"
    assert lt.inline(r"x_{k+1} = \frac{T}{2}(u_k + u_{k-1})") == "xₖ₊₁ = T/2 (uₖ + uₖ₋₁)"
    assert lt.inline(r"t_\mathrm{off} \le \tau, \; e^{A T}") == "t_off ≤ τ, e^(A T)"
    assert lt.inline(r"\sqrt{k_d/k_i}") == "√(k_d/kᵢ)"
    assert lt.inline(r"s = \begin{cases} 1 & u > 0 \\ 0 & \text{otherwise} \end{cases}") \
        == "s = { 1 if u > 0; 0 otherwise }"
    assert lt.display(r"a &= b + c \\ dd &= e") == [" a = b + c", "dd = e"]


def test_numpydoc_as_markdown():
    _, nd, _ = _hooks()
    doc = nd.parse('''Summary with :math:`y = K u`.

    .. math:: \\dot x = u

    See :class:`~blocks.pid.PID` and ``code``.

    Ports
    -----
    in   u   scalar [m]
    out  y   scalar [m/s];
             feedthrough from u
    ''')
    md = nd.markdown(doc.body, link=lambda name: "pid.md#pid" if name == "PID" else None)
    assert md.splitlines() == ["Summary with `y = K u`.", "", "```text", "x\u0307 = u", "```",
                               "", "See [`PID`](pid.md#pid) and `code`."]
    rows = nd.ports(doc.sections["Ports"])
    assert [(r.direction, r.names, r.description) for r in rows] == [
        ("in", "u", "scalar [m]"), ("out", "y", "scalar [m/s]; feedthrough from u")]
    assert nd.cell("a | b :math:`|u|`") == "a \\| b `|u|`"
    with pytest.raises(ValueError, match="not a Ports row"):
        nd.ports("inputs: u")
