"""Values and input files of ``cosim fmu simulate``: ``--set NAME=VALUE`` typed by the
variable's declared type (:func:`typed_value`, :func:`settings`) and ``--input`` CSV files
played as FMPy plays them (:func:`_sources`: continuous Real inputs interpolated, the
others held, a repeated time a step).  See :mod:`fmus.cli` for the command.
"""

from __future__ import annotations

import sys
from typing import Any

from cosim.errors import CosimError

#: ranges of the FMI integer types (a --set value outside one is refused)
INT_RANGES = {"Int8": (-2 ** 7, 2 ** 7 - 1), "UInt8": (0, 2 ** 8 - 1),
              "Int16": (-2 ** 15, 2 ** 15 - 1), "UInt16": (0, 2 ** 16 - 1),
              "Int32": (-2 ** 31, 2 ** 31 - 1), "UInt32": (0, 2 ** 32 - 1),
              "Integer": (-2 ** 31, 2 ** 31 - 1), "Int64": (-2 ** 63, 2 ** 63 - 1),
              "UInt64": (0, 2 ** 64 - 1), "Enumeration": (-2 ** 63, 2 ** 63 - 1)}


def typed_value(var: Any, text: str, info: Any = None) -> Any:
    """``text`` as a value of ``var``'s declared type (see the module docstring); a
    :class:`~cosim.errors.ParameterError` says what was expected."""
    import numpy as np

    from cosim.errors import ParameterError
    kind, raw = var.kind, text.strip()

    def bad(what: str) -> ParameterError:
        article = "an" if var.type[0] in "AEIOU" else "a"
        return ParameterError(f"--set {var.name}={text}: {var.name!r} is {article} "
                              f"{var.type} variable; give {what}")

    def one(tok: str) -> Any:
        if kind == "real":
            try:
                return float(tok)
            except ValueError:
                raise bad("a number such as 1.5") from None
        if kind == "int":
            try:
                val = int(tok)
            except ValueError:
                val = _enum_value(var, tok, info)
                if val is None:
                    items = _enum_items(var, info)
                    raise bad("an integer" + (f" or one of {', '.join(items)}" if items
                                              else "")) from None
            lo, hi = INT_RANGES.get(var.type, (-2 ** 63, 2 ** 64 - 1))
            if not lo <= val <= hi:
                raise bad(f"an integer in [{lo}, {hi}]")
            return val
        if kind == "bool":
            low = tok.lower()
            if low not in ("true", "false", "1", "0"):
                raise bad("true, false, 1 or 0")
            return low in ("true", "1")
        raise bad("a value of a supported type")

    if kind == "string":
        return text
    if kind == "binary":
        h = raw[2:] if raw[:2].lower() == "0x" else raw
        try:
            return bytes.fromhex(h)
        except ValueError:
            raise bad("hexadecimal bytes such as 0x666f6f") from None
    if var.shape:
        toks = raw.strip("[]").replace(",", " ").split()
        vals = [one(t) for t in toks]
        if len(vals) not in (1, var.size):
            raise bad(f"{var.size} values (shape {var.shape})")
        return np.array(vals if len(vals) > 1 else vals * var.size).reshape(var.shape)
    return one(raw)


def _enum_items(var: Any, info: Any) -> list[str]:
    if var.type != "Enumeration" or info is None or info.md is None:
        return []
    mv = next((m for m in info.md.modelVariables if m.name == var.name), None)
    dt = getattr(mv, "declaredType", None)
    return [f"{it.name!r} ({it.value})" for it in (getattr(dt, "items", None) or [])]


def _enum_value(var: Any, tok: str, info: Any) -> int | None:
    for item in _enum_items(var, info):
        name, _, value = item.rpartition(" (")
        if name[1:-1] == tok:
            return int(value[:-1])
    return None


def settings(info: Any, pairs: list[str]) -> dict:
    """``--set`` pairs as ``{variable name: typed value}``; any variable FMI lets an
    importer set before initialization, else a clear error."""
    from cosim.errors import ParameterError
    out: dict = {}
    for pair in pairs:
        name, eq, text = pair.partition("=")
        if not eq or not name.strip():
            raise ParameterError(f"--set {pair!r}: expected NAME=VALUE")
        var = info.variable(name.strip())
        if not var.settable_before_init:
            what = ("a clock" if var.kind == "clock" else "a constant"
                    if var.variability == "constant" else
                    f"{'an' if var.causality[0] in 'aeiou' else 'a'} {var.causality} with "
                    f"initial={var.initial or 'calculated'!r} (computed by the FMU)")
            choices = ", ".join(v.name for v in info.settable)
            raise ParameterError(f"--set {name.strip()}: variable '{var.name}' is {what}; "
                                 "--set takes parameters, inputs and variables with "
                                 f"initial='exact' or 'approx': {choices or 'none'}")
        out[var.name] = typed_value(var, text, info)
    return out


# ----------------------------------------------------------------------- inputs
def _input_file(path: str, info: Any) -> tuple[str, dict]:
    """``(time column, {input variable name: column})`` of an FMPy-style input file."""
    header = _table(path)[0]
    time_col = "time" if "time" in header else header[0]
    cols: dict = {}
    for c in header:
        if c == time_col:
            continue
        var = next((v for v in info.variables if c in (v.name, v.port)), None)
        if var is None or var.causality != "input":
            what = "matches no variable" if var is None else f"names a {var.causality}"
            print(f"note: --input column {c!r} {what}; ignored (the file feeds inputs)",
                  file=sys.stderr)
            continue
        if var.kind not in ("real", "int", "bool", "clock", "string", "binary") or var.shape:
            raise CosimError(f"--input column {c!r}: input '{var.name}' is a "
                             f"{var.type}{list(var.shape) if var.shape else ''} variable; "
                             "files feed scalar inputs (use --set)")
        cols[var.name] = c
    return time_col, cols


def _sources(info: Any, csv_path: str | None) -> list:
    """``[(input variable, source block)]`` for the inputs the file feeds (the others are
    left unconnected: they keep their start or ``--set`` value).  Real inputs play the
    column (linearly for continuous ones); Integer, Enumeration, Boolean, String and
    Binary inputs hold each value, read exactly (a String cell as it is, quoted as CSV
    quotes a comma; a Binary cell as hex digits; an Int64/UInt64 column never passes
    through float64; a Boolean cell is ``true``/``false`` or a number, as FMPy reads it); a
    column named after a triggered input clock of a Scheduled Execution FMU feeds its tick input.
    Each column is read on its own, so a Boolean column of ``true``/``false`` may stand
    beside numeric ones."""
    if not csv_path:
        return []
    import numpy as np

    from blocks.tables import FromArrays

    from .instance import port_dtype
    time_col, cols = _input_file(csv_path, info)
    out = []
    for v in info.inputs:
        if v.name not in cols:
            continue
        name = f"in_{v.port}"
        # a String cell is taken as it is (spaces kept), the others stripped
        t, raw = _exact_column(csv_path, time_col, cols[v.name], strip=v.kind != "string")
        if v.kind == "real":
            continuous = v.variability == "continuous"
            try:
                vals = [float(x) for x in raw]
            except ValueError as exc:
                raise CosimError(f"--input column {cols[v.name]!r} (input '{v.name}', "
                                 f"{v.type}): {exc}") from None
            out.append((v, FromArrays(name, t, vals, unit=v.unit,
                                      interpolation="linear" if continuous else "previous")))
            continue
        dt = np.dtype(port_dtype(v)) if v.kind != "clock" else np.dtype(float)
        try:
            vals = [_exact_value(x, v) for x in raw]
            src = FromArrays(name, t, vals, interpolation="previous", dtype=dt)
        except (ValueError, CosimError) as exc:
            raise CosimError(f"--input column {cols[v.name]!r} (input '{v.name}', {v.type}): "
                             f"{exc}") from None
        out.append((v, src))
    return out


def _table(path: str) -> tuple[list, list]:
    """``(header, rows)`` of an input file as text (``#`` starts a comment line); a clear
    error for a missing file, an empty one or a ragged row."""
    import csv
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = [(k, r) for k, r in enumerate(csv.reader(f), start=1)
                    if r and not r[0].lstrip().startswith("#")]
    except OSError as exc:
        raise CosimError(f"--input: cannot read '{path}': {exc.strerror}") from None
    if not rows:
        raise CosimError(f"--input: '{path}' is empty (expected a header line)")
    if len(rows) < 2:
        raise CosimError(f"--input: '{path}' has a header but no data rows")
    header = [h.strip() for h in rows[0][1]]
    for line, r in rows[1:]:
        if len(r) != len(header):
            raise CosimError(f"--input: '{path}', line {line}: {len(r)} cells, the header "
                             f"has {len(header)} columns")
    return header, rows[1:]


def _exact_column(path: str, time_col: str, col: str,
                  strip: bool = True) -> tuple[list, list]:
    """The time column (floats) and ``col`` as the text of each row."""
    header, rows = _table(path)
    i, j = header.index(time_col), header.index(col)
    times = []
    for line, r in rows:
        try:
            times.append(float(r[i]))
        except ValueError:
            raise CosimError(f"--input: '{path}', line {line}: time {r[i]!r} is not a "
                             "number") from None
    return times, [r[j].strip() if strip else r[j] for _, r in rows]


def _exact_value(text: str, var: Any) -> Any:
    """An Integer/Boolean/clock/String/Binary cell of an input file, exactly (a String
    as it is, a Binary as hexadecimal digits, ``0x`` optional, as ``--set`` takes it)."""
    if var.kind == "string":
        return text
    if var.kind == "binary":
        h = text[2:] if text[:2].lower() == "0x" else text
        try:
            return bytes.fromhex(h)
        except ValueError:
            raise ValueError(f"{text!r} is not hexadecimal bytes such as 0x666f6f") from None
    low = text.lower()
    if var.kind == "bool":
        if low in ("true", "false"):
            return low == "true"
        return bool(float(text))
    if var.kind == "clock":  # a tick input: 0/1 or a counter
        return float(1.0 if low == "true" else 0.0 if low == "false" else text)
    try:
        return int(text)
    except ValueError:
        x = float(text)
        if not x.is_integer():
            raise ValueError(f"{text!r} is not an integer") from None
        return int(x)


def _add_sources(b: Any, pairs: list, block: Any) -> None:
    for v, src in pairs:
        b.add(src)
        b.connect(src.y, block.input(v.port))
