"""Parameter checks shared by the block libraries (messages name the owner and the value)."""

from __future__ import annotations

import math
from typing import Any

from cosim.errors import ParameterError

__all__ = ["check_number"]


def check_number(owner: str, label: str, value: Any, *, positive: bool = False,
                 nonnegative: bool = False) -> float:
    """``value`` as a finite float, or a :class:`~cosim.errors.ParameterError` saying
    ``"<owner>: <label> must be ..., got <value>"``; optionally > 0 or >= 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{owner}: {label} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise ParameterError(f"{owner}: {label} must be finite, got {value!r}")
    if positive and not v > 0:
        raise ParameterError(f"{owner}: {label} must be > 0, got {value!r}")
    if nonnegative and v < 0:
        raise ParameterError(f"{owner}: {label} must be >= 0, got {value!r}")
    return v
