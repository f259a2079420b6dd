"""The shadow package's data error and the "did you mean" helper of its messages."""

from __future__ import annotations

from typing import Any

from ..errors import HILError

__all__ = ["ShadowDataError"]


class ShadowDataError(HILError, ValueError):
    """The machine data cannot drive the shadow: non-finite values, unsorted times, or a
    recording that does not cover the requested range."""


def _did_you_mean(name: str, options: Any) -> str:
    import difflib
    opts = list(options)
    close = difflib.get_close_matches(name, opts, n=1)
    return (f"available: {', '.join(opts[:30]) or '(none)'}"
            + (f"{' ...' if len(opts) > 30 else ''}. Did you mean {close[0]!r}?" if close
               else ""))

