"""Helpers of the SSP tests: the vendored SSP schemas and the fixtures in other tools' style.

* :func:`schema_errors` validates every ``.ssd``, ``.ssv`` and ``.ssm`` of an ``.ssp`` (or a
  directory) with lxml against the SSP schemas vendored in ``ssp_schemas/`` (through
  ``ssp_all.xsd``, so that an inline ``ssv:ParameterSet`` or ``ssm:ParameterMapping``, which
  the SSD schema admits laxly, is checked against its own schema too).
* :func:`pack` makes an ``.ssp`` from a fixture folder of ``ssp_fixtures/`` and FMUs built at
  test time.
"""

from __future__ import annotations

import zipfile
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCHEMAS = HERE / "ssp_schemas"
FIXTURES = HERE / "ssp_fixtures"


@cache
def _schema():
    from lxml import etree
    return etree.XMLSchema(etree.parse(str(SCHEMAS / "ssp_all.xsd")))


def _files(path: Path) -> dict[str, bytes]:
    if path.is_dir():
        return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*"))
                if p.is_file()}
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def schema_errors(path: str | Path) -> dict[str, list[str]]:
    """``{file: [schema errors]}`` of every SSD/SSV/SSM in the SSP (empty lists: valid)."""
    from lxml import etree
    schema = _schema()
    out = {}
    for name, data in _files(Path(path)).items():
        if not name.endswith((".ssd", ".ssv", ".ssm")):
            continue
        ok = schema.validate(etree.fromstring(data))
        out[name] = [] if ok else [f"line {e.line}: {e.message}" for e in schema.error_log]
    return out


def pack(fixture: str, dest: str | Path, fmus: dict[str, Path]) -> Path:
    """``dest`` (an .ssp) holding ``ssp_fixtures/<fixture>`` and ``{resource name: FMU}``."""
    dest = Path(dest)
    src = FIXTURES / fixture
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(src.rglob("*")):
            if p.is_file():
                zf.write(p, p.relative_to(src).as_posix())
        for name, fmu in fmus.items():
            zf.write(fmu, f"resources/{name}")
    return dest
