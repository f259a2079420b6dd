"""The block reference covers every public block of ``blocks/`` (issue 30, item 6).

The class: every public :class:`~cosim.block.Block` subclass defined in a public module of
``blocks`` (the core modules ``blocks/*.py`` and every domain package at any depth,
exported or not), found here independently of the docs hook.  Each must have

* a section in the generated reference (``docs/hooks/block_reference.py``), on a page
  that is in the site's nav and linked from the overview, with a Ports table;
* a docstring the reference can show: a Ports section whose every row gives a shape and
  a ``[unit]``, lists every port the class declares by name, an equation (in the class
  docstring or in its module's, which the page shows above it), every constructor
  argument in its Parameters section;
* for the domain blocks (the core's are checked in ``test_docs.py``): ports that agree
  with what the block declares when built (``block_examples.EXAMPLES``: one or more
  configurations each) in direction, unit and, where the table gives a number, shape; and
  no documented port that no configuration declares.

Units in a Ports row: ``[m/s]`` (as declared), ``[no unit]`` (declares none),
``[m, m, rad]`` (declares none, one unit per element), ``[N or N*m]`` (depends on the
configuration), or a constructor argument's name (``[unit]``, ``[command_unit]``: the
unit given).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))
from block_examples import EXAMPLES  # noqa: E402


def _hooks():
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        import block_reference
        import numpydoc_md
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    return block_reference, numpydoc_md


def public_blocks() -> dict[type, str]:
    """``{class: module name}`` of every public Block subclass of ``blocks``."""
    import blocks
    from cosim import Block
    out = {}
    for m in pkgutil.walk_packages(blocks.__path__, "blocks."):
        if any(part.startswith("_") for part in m.name.split(".")):
            continue
        mod = importlib.import_module(m.name)
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and issubclass(obj, Block) and not name.startswith("_")
                    and obj.__module__ == mod.__name__):
                out[obj] = mod.__name__
    return out


def domain_blocks() -> dict[type, str]:
    return {c: m for c, m in public_blocks().items() if m.count(".") >= 2
            or importlib.import_module(m).__spec__.submodule_search_locations}


def page_of(module: str) -> str:
    return f"reference/{module.split('.')[1]}.md"


def test_the_class_is_every_block_the_packages_export():
    """Every Block a subpackage exports (``__all__``) is among the public blocks."""
    import blocks
    from cosim import Block
    found = set(public_blocks())
    for m in pkgutil.iter_modules(blocks.__path__):
        if not m.ispkg:
            continue
        pkg = importlib.import_module(f"blocks.{m.name}")
        for name in getattr(pkg, "__all__", []):
            obj = getattr(pkg, name)
            if inspect.isclass(obj) and issubclass(obj, Block):
                assert obj in found, f"blocks.{m.name}.{name}"
    assert len(domain_blocks()) >= 60  # electric, hydraulics, vehicle, ocean, ...


def test_every_public_block_has_a_reference_section_with_a_ports_table():
    br, _ = _hooks()
    pages = br.Reference().pages()
    nav = (ROOT / "mkdocs.yml").read_text()
    problems = []
    for cls, module in public_blocks().items():
        page = page_of(module)
        where = f"{module}.{cls.__name__}"
        if page not in pages:
            problems.append(f"{where}: no page {page}")
            continue
        if page not in nav:
            problems.append(f"{where}: {page} is not in mkdocs.yml's nav")
        m = re.search(rf"^#{{2,3}} {cls.__name__}\n(.*?)(?=^#{{1,3}} |\Z)", pages[page],
                      re.M | re.S)
        if m is None:
            problems.append(f"{where}: no section in {page}")
            continue
        body = m.group(1)
        if "**Ports**" not in body or not re.search(r"^\| (in|out) \| `", body, re.M):
            problems.append(f"{where}: no Ports table in its section of {page}")
        if f"[`{cls.__name__}`]({page.split('/')[1]}#{cls.__name__.lower()})" not in \
                pages["reference/index.md"]:
            problems.append(f"{where}: not linked from reference/index.md")
    assert not problems, "\n".join(problems)


def test_every_domain_block_docstring_has_ports_with_units_an_equation_and_its_arguments():
    br, nd = _hooks()
    problems = []
    for cls, module in domain_blocks().items():
        where = f"{module}.{cls.__name__}"
        doc = nd.parse(cls.__doc__)
        try:
            rows = nd.ports(doc.sections.get("Ports", ""))
        except ValueError as exc:
            problems.append(f"{where}: Ports: {exc}")
            continue
        if not rows:
            problems.append(f"{where}: no Ports section")
        for r in rows:
            shape, unit, _ = br.split_shape_unit(r.description)
            if unit is None or not shape:
                problems.append(f"{where}: port {r.names!r} needs 'SHAPE [UNIT]' "
                                f"(got {r.description[:40]!r})")
        listed = {n for r in rows for n in r.literal_names()}
        patterns = [_pattern(r.names) for r in rows]
        problems += [f"{where}: port {n!r} is declared but not in its Ports table"
                     for n in sorted(br.declared_port_names(cls) - listed)
                     if not any(p.fullmatch(n) for p in patterns)]
        text = (cls.__doc__ or "") + (sys.modules[cls.__module__].__doc__ or "")
        if ":math:" not in text and ".. math::" not in text:
            problems.append(f"{where}: no equation in its or its module's docstring")
        documented = {n.lstrip("*") for n in nd.parameters(doc.sections.get("Parameters",
                                                                           ""))}
        args = [n for n, p in inspect.signature(cls).parameters.items() if n != "name"]
        problems += [f"{where}: argument {a!r} not in its Parameters section"
                     for a in args if a not in documented]
    assert not problems, "\n".join(problems)


def _pattern(names: str) -> re.Pattern:
    """A Ports row's names as a pattern: ``q_in0 .. q_in{n-1}``, ``target{i}_range``,
    ``<body>_<marker>_pos``, ``a, b``."""
    alternatives = []
    for part in names.split(".." if ".." in names else ","):
        part = part.strip(" `")
        if ".." in names:
            part = re.sub(r"[({][^)}]*[)}]$|\d+$", "", part)
            alternatives.append(re.escape(part) + r"\d+")
            continue
        rx = re.escape(part)
        rx = re.sub(r"\\\{[^}]*\\\}|\\\{[^}]*\}", r"\\d+", rx)
        rx = re.sub(r"<[^>]*>", r".+", rx)
        alternatives.append(rx)
    return re.compile("|".join(alternatives))


def _same_unit(documented: str, port) -> bool:
    """Whether a Ports row's unit text describes what the port declares."""
    from cosim.units import compatible, conversion
    declared = port.unit_text
    for alt in documented.split(" or "):
        alt = alt.strip()
        if alt == "no unit" or "," in alt:
            if declared is None and ("," not in alt or len(alt.split(",")) == port.size):
                return True
            continue
        if declared is not None and compatible(alt, declared) and \
                conversion(alt, declared) == (1.0, 0.0):
            return True
    return False


def _same_shape(documented: str, port) -> bool:
    text = documented.split(" or ")[0].strip()
    if text in ("scalar", "scalars"):
        return port.shape == ()
    m = re.fullmatch(r"\((\d+),?\s*(\d+)?\)", text)
    if m is None:  # symbolic ((n,), (P,3)) or prose: not compared
        return True
    return port.shape == tuple(int(g) for g in m.groups() if g)


def test_every_domain_block_has_an_example():
    missing = sorted(c.__name__ for c in domain_blocks() if c.__name__ not in EXAMPLES)
    assert not missing, f"add them to tests/unit/block_examples.py: {missing}"
    unknown = sorted(set(EXAMPLES) - {c.__name__ for c in domain_blocks()})
    assert not unknown, unknown


@pytest.mark.parametrize("cls", sorted(domain_blocks(), key=lambda c: c.__name__),
                         ids=lambda c: c.__name__)
def test_documented_ports_are_the_ports_the_built_block_declares(cls):
    br, nd = _hooks()
    rows = nd.ports(nd.parse(cls.__doc__).sections.get("Ports", ""))
    built = EXAMPLES[cls.__name__]()
    assert all(type(b) is cls for b in built), cls
    problems, used = [], set()
    for b in built:
        declared = [("in", p) for p in b.inputs.values()] + \
            [("out", p) for p in b.outputs.values()]
        for direction, port in declared:
            row = next((r for r in rows if r.direction == direction
                        and (port.name in r.literal_names()
                             or _pattern(r.names).fullmatch(port.name))), None)
            if row is None:
                problems.append(f"{direction} {port.name!r} {port.shape} "
                                f"[{port.unit_text}] is not in the Ports table")
                continue
            used.add(id(row))
            shape, unit, _ = br.split_shape_unit(row.description)
            args = inspect.signature(cls).parameters
            if unit is not None and unit not in args and not _same_unit(unit, port):
                problems.append(f"{direction} {port.name!r}: documented [{unit}], declared "
                                f"[{port.unit_text or 'no unit'}]")
            if shape and not _same_shape(shape, port):
                problems.append(f"{direction} {port.name!r}: documented {shape}, declared "
                                f"shape {port.shape}")
    problems += [f"{r.direction} {r.names!r} is documented but no example declares it "
                 "(add a configuration to block_examples.py, or fix the table)"
                 for r in rows if id(r) not in used]
    assert not problems, f"{cls.__module__}.{cls.__name__}:\n" + "\n".join(problems)


def test_the_generated_pages_have_no_raw_rst_or_latex_left():
    """Roles, double backticks and LaTeX commands are converted (outside code blocks)."""
    br, _ = _hooks()
    problems = []
    for page, text in br.Reference().pages().items():
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        prose = re.sub(r"`[^`\n]+`", "", prose)  # inline code may show anything
        for m in re.finditer(r":(math|class|func|mod|meth|data|attr):|``|\\[a-z]+\b", prose):
            problems.append(f"{page}: {prose[max(0, m.start() - 50):m.end() + 30]!r}")
    assert not problems, "\n".join(problems[:30])


@pytest.mark.parametrize("cls", sorted(domain_blocks(), key=lambda c: c.__name__),
                         ids=lambda c: c.__name__)
def test_reference_tunable_parameters_are_those_the_built_block_declares(cls):
    """The parameters the reference reads from the source (names and units) are those the
    built block declares: a tunable parameter shown as fixed is a wrong reference."""
    br, _ = _hooks()
    found = {t.name: t.unit for t in br.tunable_parameters(cls)}
    declared = {}
    for b in EXAMPLES[cls.__name__]():
        declared.update({name: p.unit for name, p in b.parameters.items()})
    assert set(found) == set(declared), (sorted(found), sorted(declared))
    for name, unit in found.items():
        if unit is None or not unit.startswith("from argument"):
            assert unit == declared[name], (name, unit, declared[name])
