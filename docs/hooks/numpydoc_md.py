r"""numpydoc docstrings (reStructuredText) as Markdown for MkDocs.

:func:`parse` splits a docstring into its body and its sections (``Ports``,
``Parameters``, ``Notes``, ...); :func:`ports` and :func:`parameters` read the two
tables a block docstring has; :func:`markdown` and :func:`cell` convert the text:
``.. math::`` blocks become fenced text blocks and ``:math:`...``` inline code, both as
Unicode text (:mod:`latex_text`); ````code````, roles (``:class:`~a.B```, linked when the
caller knows the target), literal blocks (``::``), doctest blocks, simple tables and
``.. note::``-like directives get their Markdown forms.

The Ports table of a block docstring, one row per port (or group of ports): direction,
names, then after two spaces or more the shape, the ``[unit]`` and a description;
continuation lines indented; after a blank line, notes about the ports as a whole::

    Ports
    -----
    in   u              scalar [unit]
    out  y0 .. y(n-1)   scalars [unit]; feedthrough
                        from u

    Every output is sampled.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass

from latex_text import display, inline

__all__ = ["Docstring", "Port", "cell", "markdown", "parameters", "parse", "ports",
           "ports_notes", "split_ports"]

Link = Callable[[str], str | None]

_SECTION_RULE = re.compile(r"^(-{3,}|={3,})$")
_PORT_ROW = re.compile(r"^(in|out)\s+(.+?)(?:\s{2,}(.*))?$")
_INLINE = re.compile(r"``(.+?)``|:(\w+(?::\w+)?):`(.+?)`|(?<![`\w])`([^`]+)`(?!`)", re.S)


@dataclass
class Docstring:
    """A docstring's text before its first section, and its sections by title."""

    body: str
    sections: dict[str, str]


@dataclass
class Port:
    """One row of a Ports table: ``direction`` is ``in`` or ``out``; ``names`` as written
    (``"u0 .. u(n-1)"``)."""

    direction: str
    names: str
    description: str

    def literal_names(self) -> list[str]:
        """The port names the row lists by name (a range such as ``u0 .. u(n-1)`` gives
        none)."""
        if ".." in self.names:
            return []
        return [n.strip(" `") for n in self.names.split(",") if n.strip()]


def parse(doc: str | None) -> Docstring:
    """Split a (raw) docstring at its numpydoc section headers."""
    lines = inspect.cleandoc(doc or "").splitlines()
    body: list[str] = []
    sections: dict[str, list[str]] = {}
    current = body
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if (line.strip() and not line.startswith(" ") and _SECTION_RULE.match(nxt)
                and len(nxt) >= len(line.strip()) - 1):
            current = sections.setdefault(line.strip(), [])
            i += 2
            continue
        current.append(line)
        i += 1
    return Docstring("\n".join(body).strip("\n"),
                     {k: inspect.cleandoc("\n".join(v)) for k, v in sections.items()})


def ports(section: str) -> list[Port]:
    """The rows of a Ports section (:func:`split_ports`)."""
    return split_ports(section)[0]


def ports_notes(section: str) -> str:
    """The text after the rows of a Ports section (:func:`split_ports`)."""
    return split_ports(section)[1]


def split_ports(section: str) -> tuple[list[Port], str]:
    """``(rows, notes)`` of a Ports section: rows, each with its indented continuation
    lines, then, after a blank line, optional notes (paragraphs about the ports as a
    whole: "every output reads every input").  A line in the table that is neither a
    row nor a continuation, a section that starts with notes, or a row after the notes
    raises ``ValueError``."""
    rows: list[Port] = []
    lines = section.splitlines()
    for k, line in enumerate(lines):
        if not line.strip():
            continue
        m = _PORT_ROW.match(line)
        if m and not line.startswith(" "):
            rows.append(Port(m.group(1), m.group(2).strip(), (m.group(3) or "").strip()))
        elif line.startswith(" ") and rows:
            rows[-1].description = f"{rows[-1].description} {line.strip()}".strip()
        elif rows and not lines[k - 1].strip():
            notes = "\n".join(lines[k:])
            late = [ln for ln in lines[k:] if _PORT_ROW.match(ln) and ln.split()[1:2]
                    and re.match(r"\s{2,}", ln[len(ln.split()[0]):])]
            if late:
                raise ValueError(f"a Ports row after the notes: {late[0]!r}")
            return rows, notes
        else:
            raise ValueError(f"not a Ports row ('in|out  NAME  description'): {line!r}")
    return rows, ""


def parameters(section: str) -> dict[str, tuple[str, str]]:
    """``{name: (type, description)}`` of a numpydoc Parameters section (``a, b : float``
    documents both)."""
    out: dict[str, tuple[str, str]] = {}
    names: list[str] = []
    kind, desc = "", []
    for line in [*section.splitlines(), "END"]:
        if line and not line.startswith(" "):
            for n in names:
                out[n] = (kind, " ".join(desc))
            head, _, kind = line.partition(" : ")
            names = [n.strip() for n in head.split(",") if n.strip()]
            kind, desc = kind.strip(), []
        elif line.strip():
            desc.append(line.strip())
    return out


def _role(role: str, target: str, link: Link | None) -> str:
    text = target
    m = re.fullmatch(r"(.*?)\s*<(.+)>", target, re.S)
    if m:
        text, target = m.group(1), m.group(2)
    elif target.startswith("~"):
        target = target[1:]
        text = target.rsplit(".", 1)[-1]
    target = target.lstrip("~.")
    if role in ("func", "meth") and not text.endswith(")"):
        text += "()"
    url = link(target.rsplit(".", 1)[-1]) if link else None
    return f"[`{text}`]({url})" if url else f"`{text}`"


def _inline(text: str, link: Link | None, in_cell: bool = False) -> str:
    """Inline markup of one paragraph: code spans and roles; plain text escaped."""
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(_plain(text[pos:m.start()], in_cell))
        code, role, target, interpreted = m.groups()
        if code is not None:
            out.append(_code(code))
        elif role == "math":
            out.append(_code(inline(target)))
        elif role is not None:
            out.append(_role(role.split(":")[-1], " ".join(target.split()), link))
        else:
            out.append(_code(interpreted))
        pos = m.end()
    out.append(_plain(text[pos:], in_cell))
    return "".join(out)


def _code(text: str) -> str:
    text = " ".join(text.split())
    ticks = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _plain(text: str, in_cell: bool) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    return text.replace("|", "\\|") if in_cell else text


def cell(text: str, link: Link | None = None) -> str:
    """Text for one Markdown table cell (one line, pipes escaped)."""
    return _inline(" ".join(text.split()), link, in_cell=True)


def _block(lines: list[str], start: int) -> tuple[list[str], int]:
    """The indented block after line ``start`` (blank lines inside kept), dedented."""
    base = len(lines[start]) - len(lines[start].lstrip())
    j, block = start + 1, []
    while j < len(lines) and (not lines[j].strip()
                              or len(lines[j]) - len(lines[j].lstrip()) > base):
        block.append(lines[j])
        j += 1
    while block and not block[-1].strip():
        block.pop()
        j -= 1
    text = inspect.cleandoc("\n".join(block)) if block else ""
    return (text.splitlines() if text else []), j


def markdown(text: str, link: Link | None = None) -> str:
    """reStructuredText (numpydoc body or section) as Markdown."""
    lines = text.splitlines()
    out: list[str] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            out.append(_inline("\n".join(para), link))
            para.clear()

    def blank() -> None:
        if out and out[-1] != "":
            out.append("")

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        directive = re.match(r"\s*\.\. (\w[\w-]*)::\s*(.*)$", line)
        if directive:
            flush()
            blank()
            body, i = _block(lines, i)
            name, arg = directive.group(1), directive.group(2).strip()
            if name == "math":
                out += ["```text", *display("\n".join([arg, *body])), "```", ""]
            elif name in ("note", "warning", "seealso", "tip", "important", "caution"):
                content = markdown("\n".join([arg, *body]).strip(), link)
                kind = {"seealso": "note", "caution": "warning"}.get(name, name)
                out += [f"!!! {kind}", *("    " + c if c else "" for c in
                                         content.splitlines()), ""]
            else:  # an unknown directive: kept as text
                out += ["```text", f".. {name}:: {arg}".rstrip(), *body, "```", ""]
            continue
        if re.fullmatch(r"=+( +=+)+", stripped):  # a simple table, shown as it is
            flush()
            blank()
            j, rules = i, 0
            while j < len(lines) and rules < 3 and lines[j].strip():
                rules += bool(re.fullmatch(r"=+( +=+)+", lines[j].strip()))
                j += 1
            out += ["```text", *(ln.rstrip() for ln in lines[i:j]), "```", ""]
            i = j
            continue
        if stripped.startswith(">>>"):  # a doctest block
            flush()
            blank()
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            out += ["```python", *(ln.strip() for ln in lines[i:j]), "```", ""]
            i = j
            continue
        if not stripped:
            flush()
            blank()
            i += 1
            continue
        if re.match(r"[*+-] ", stripped) and para and not re.match(r"[*+-] ", para[0]):
            flush()  # Markdown needs a blank line before a list
            blank()
        if stripped.endswith("::"):  # a paragraph introducing a literal block
            keep = stripped[:-2].rstrip()
            para.append(line[:len(line) - len(line.lstrip())] + keep + (":" if keep else ""))
            flush()
            blank()
            body, i = _block(lines, i)
            out += ["```text", *body, "```", ""]
            continue
        para.append(line)
        i += 1
    flush()
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out)
