"""What the README and the docs say about dependencies agrees with ``pyproject.toml``.

``pyproject.toml`` is the one truth: ``[project] dependencies`` (the core, installed with
the package) and ``[project.optional-dependencies]`` (the extras).  Every page
(``README.md``, ``docs/**/*.md``) is read for the statements that can contradict it:

* an extra named (`` `hil` extra``, ``cosim[hil]``, ``pip install -e '.[plot,data]'``,
  `` `plot` (matplotlib)`` in a list of extras) must exist and install something (an
  empty extra is kept only so that old install lines still work; telling a reader to
  install it tells them something false);
* a package said to be in an extra (``fmpy (the `fmi` extra)``, ``pythonfmu in
  `fmi-export```, `` `hdf5` (h5py)``) must be in that extra, one said to be in the core
  (``pyserial (in the core)``) in the core;
* a list of the core (``core: numpy and scipy``) names only core packages, and one that
  says it is complete (``... only``) names all of them.

Package names are matched as whole words, case-insensitively, by their distribution names
(``pyserial``, ``python-can``, ``Numba``); python-control only as "python-control" (its
distribution name ``control`` is a common word), and import names that differ (``can``,
``serial``) not at all.
"""

from __future__ import annotations

import pathlib
import re
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = ["README.md", *sorted(p.relative_to(ROOT).as_posix()
                              for p in (ROOT / "docs").rglob("*.md"))]


def _dist(requirement: str) -> str:
    """``"dask[distributed]>=2024.1"`` -> ``"dask"`` (normalised, PEP 503)."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement).group(0)
    return re.sub(r"[-_.]+", "-", name).lower()


def project() -> tuple[set[str], dict[str, set[str]]]:
    """``(core distributions, {extra: distributions})`` from ``pyproject.toml``."""
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {_dist(r) for r in doc["dependencies"]}
    extras = {k: {_dist(r) for r in v} for k, v in doc["optional-dependencies"].items()}
    return core, extras


#: How prose names a distribution, where that is not (only) its own name: python-control's
#: distribution is ``control``, a common word, so only "python-control" counts.
SPELLINGS = {"control": ["python-control"], "pyyaml": ["pyyaml", "PyYAML"]}


def packages_named(text: str, known: set[str]) -> set[str]:
    """The known distributions ``text`` names, as whole words."""
    found = set()
    for dist in known:
        for spelling in SPELLINGS.get(dist, [dist]):
            if re.search(rf"(?<![\w./-]){re.escape(spelling)}(?![\w-])", text, re.I):
                found.add(dist)
    return found


_EXTRA_WORD = r"`([\w-]+)`"
_NAMED = [re.compile(_EXTRA_WORD + r" extras?\b"),            # the `hil` extra
          re.compile(r"cosim\[([\w,-]+)\]"),                   # cosim[hil]
          re.compile(r"(?<![\w/])\.\[([\w,-]+)\]")]           # pip install -e '.[plot,data]'
#: "PACKAGES (the `x` extra", "PACKAGES in the `x` extra", "in `x`", "PACKAGES (in the
#: core)", "in the core": the packages named since the previous such phrase (or the last
#: bracket, period or semicolon) are in extra x, or in the core.
_BEFORE = re.compile(r"(?P<pkgs>[^.;()]*?)(?:\(\s*(?:in\s+)?(?:the\s+)?|\bin\s+(?:the\s+)?)"
                     r"(?:`(?P<x>[\w-]+)`|(?P<core>core)\b)")
#: "`x` (PACKAGES)": a list of extras with their packages.
_AFTER = re.compile(r"`(?P<x>[\w-]+)`\s*\((?P<pkgs>[^()]*)\)")
#: "core: PACKAGES" (to the end of the clause).
_CORE = re.compile(r"\bcore\b\s*(?:dependencies\s*)?:\s*(?P<pkgs>[^.;()\n]*)", re.I)


def problems_of(page: str, text: str, core: set[str], extras: dict[str, set[str]]) -> list:
    """Every statement of ``text`` that contradicts ``pyproject.toml``."""
    known = core | set().union(*extras.values())
    out = []

    def where(pos: int) -> str:
        return f"{page}:{text.count(chr(10), 0, pos) + 1}"

    for rx in _NAMED:
        for m in rx.finditer(text):
            for x in m.group(1).split(","):
                if x not in extras:
                    out.append(f"{where(m.start())}: extra {x!r} is not in pyproject.toml "
                               f"(extras: {', '.join(sorted(k for k in extras if extras[k]))})")
                elif not extras[x]:
                    out.append(f"{where(m.start())}: extra {x!r} installs nothing (kept for "
                               "old install lines: its packages are core now)")
    for m in _BEFORE.finditer(text):
        if m["core"]:
            for p in sorted(packages_named(m["pkgs"], known) - core):
                out.append(f"{where(m.start('pkgs'))}: {p} is said to be in the core; "
                           f"pyproject has it in {_extras_of(p, extras) or 'nothing'}")
            continue
        x = m["x"]
        if x not in extras:
            continue  # "in `fmus/`": not an extra (a misspelt extra is caught above)
        for p in sorted(packages_named(m["pkgs"], known) - extras[x]):
            out.append(f"{where(m.start('pkgs'))}: {p} is said to be in the {x!r} extra; "
                       + ("it is core" if p in core else
                          f"pyproject has it in {_extras_of(p, extras) or 'nothing'}"))
    for m in _AFTER.finditer(text):
        x = m["x"]
        if x not in extras:
            continue
        for p in sorted(packages_named(m["pkgs"], known) - extras[x]):
            out.append(f"{where(m.start())}: `{x}` ({m['pkgs'].strip()}): {p} is "
                       + ("core" if p in core else
                          f"in {_extras_of(p, extras) or 'no extra'}") + " in pyproject.toml")
    for m in _CORE.finditer(text):
        named = packages_named(m["pkgs"], known)
        for p in sorted(named - core):
            out.append(f"{where(m.start())}: {p} is listed as core; pyproject has it in "
                       f"{_extras_of(p, extras) or 'nothing'}")
        if re.search(r"\bonly\b", m["pkgs"]) and named != core:
            out.append(f"{where(m.start())}: 'core: {m['pkgs'].strip()}' says that is all; "
                       f"the core is {', '.join(sorted(core))}")
    return out


def _extras_of(dist: str, extras: dict[str, set[str]]) -> str:
    return ", ".join(f"'{k}'" for k, v in sorted(extras.items())
                     if dist in v and k not in ("all", "test"))


@pytest.mark.parametrize("page", PAGES)
def test_page_agrees_with_pyproject_dependencies(page):
    core, extras = project()
    problems = problems_of(page, (ROOT / page).read_text(encoding="utf-8"), core, extras)
    assert not problems, "\n".join(problems)


def test_the_checker_finds_each_kind_of_contradiction():
    core = {"numpy", "scipy", "fmpy", "matplotlib", "pyserial", "python-can"}
    extras = {"fmi": set(), "fmi-export": {"pythonfmu"}, "hdf5": {"h5py"},
              "fast": {"numba"}, "hil": {"pymodbus"}, "plot": set()}
    bad = {
        "pip install -e '.[plot,hdf5]'": "extra 'plot' installs nothing",
        "install `cosim[gui]`": "extra 'gui' is not in pyproject.toml",
        "fmpy (the `fmi` extra) is lazy": "fmpy is said to be in the 'fmi' extra; it is core",
        "pyserial, python-can and pymodbus (the `hil` extra)":
            "pyserial is said to be in the 'hil' extra",
        "FMUs (fmpy in the `fmi-export` extra)": "fmpy is said to be in the 'fmi-export'",
        "The extras: `hdf5` (h5py, matplotlib)": "matplotlib is core in pyproject.toml",
        "pip install x  # core: numpy and scipy only": "says that is all",
        "core: numpy, h5py": "h5py is listed as core",
        "numpy and h5py (in the core)": "h5py is said to be in the core",
        "(matplotlib, the `plot` extra.)": "extra 'plot' installs nothing",
    }
    for text, expected in bad.items():
        found = problems_of("p", text, core, extras)
        assert any(expected in p for p in found), (text, found)
    good = ["with Numba (the `fast` extra; the Python path is kept)",
            "pythonfmu in `fmi-export`, imported lazily", "`hdf5` (h5py), `fast` (Numba)",
            "core: numpy, scipy, fmpy", "the files in `fmus/` (fmpy reads them)",
            "pip install -e '.[hdf5,fast]'", "NI-DAQmx (`cosim[hil]` + a driver)",
            "(fmpy in the core, pythonfmu in `fmi-export`)",
            "pyserial and python-can (in the core), pymodbus (the `hil` extra)"]
    for text in good:
        assert problems_of("p", text, core, extras) == [], text
