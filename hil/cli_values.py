"""Values of ``cosim hil run``'s options: Python literals, ``--io`` overrides, JSON."""

from __future__ import annotations

import ast
import math
from typing import Any

from cosim.errors import CosimError

__all__ = ["literal", "parse_overrides", "jsonable"]


def literal(text: str) -> Any:
    """A Python literal if ``text`` is one (``true``/``false``/``none`` too), else the text."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def parse_overrides(items: list[str]) -> dict[str, dict[str | None, Any]]:
    """``ROLE=VALUE`` -> ``{role: {None: value}}``; ``ROLE.OPTION=VALUE`` -> ``{role:
    {option: literal}}``."""
    out: dict[str, dict[str | None, Any]] = {}
    for item in items:
        key, eq, value = item.partition("=")
        role, dot, option = key.strip().partition(".")
        if not eq or not role or (dot and not option):
            raise CosimError(f"--io {item!r}: expected ROLE=VALUE (the backend's "
                             "interface, or its kind) or ROLE.OPTION=VALUE, e.g. "
                             "--io can=udp_multicast or --io can.channel=vcan0")
        opts = out.setdefault(role, {})
        if not dot:
            opts[None] = value.strip()
        elif option == "backend":
            opts["backend"] = value.strip()
        else:
            opts[option] = literal(value)
    return out


def jsonable(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple | set | frozenset):
        return [jsonable(x) for x in v]
    if v is None or isinstance(v, bool | int | float | str):
        return v
    return repr(v)
