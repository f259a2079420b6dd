"""Every block refuses a bad constructor argument at construction, with a ParameterError
that names the block (its name and class), the parameter and the value.

The corpus (tests/unit/block_corpus.py) is generated from the constructors' signatures of
every public block in ``blocks`` and ``cosim``: a string where a number is wanted, NaN,
infinity, None, a non-integer count, a negative physical size, a wrong-shaped array.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cosim.errors import ParameterError
from tests.unit.block_corpus import BASELINES, NAME, bad_arguments, baseline, block_classes

CLASSES = block_classes()


def test_every_public_block_has_a_baseline():
    """A new block joins the corpus: give it a valid construction in BASELINES."""
    missing = sorted(set(CLASSES) - set(BASELINES))
    assert not missing, f"blocks without a baseline in block_corpus.BASELINES: {missing}"
    assert len(CLASSES) >= 100


def _names_the_value(message: str, value) -> bool:
    if isinstance(value, float) and math.isnan(value):
        return "nan" in message.lower()
    if isinstance(value, (np.ndarray, list)):
        return True   # arrays: the message may abbreviate them
    return repr(value) in message or str(value) in message


def check_refused(cls: type, base: dict, case) -> str | None:
    """None if ``cls`` refuses ``case`` as required, else what went wrong."""
    try:
        cls(NAME, **{**base, case.param: case.value})
    except ParameterError as exc:
        msg = str(exc)
        missing = [what for what, ok in (
            ("the block's name", NAME in msg), ("its class", cls.__name__ in msg),
            ("the parameter", case.param in msg),
            ("the value", _names_the_value(msg, case.value))) if not ok]
        return f"message lacks {', '.join(missing)}: {msg}" if missing else None
    except Exception as exc:  # noqa: BLE001 - the point is which type it is
        return f"{type(exc).__module__}.{type(exc).__name__}: {str(exc)[:160]}"
    return "accepted"


@pytest.mark.parametrize("qualname", sorted(BASELINES))
def test_bad_constructor_arguments_are_refused(qualname, tmp_path):
    cls = CLASSES[qualname]
    base = baseline(qualname, tmp_path)
    cls(NAME, **base)  # the baseline itself is valid
    failures = []
    for case in bad_arguments(cls, base):
        problem = check_refused(cls, base, case)
        if problem:
            failures.append(f"{case.label}: {problem}")
    assert not failures, f"{cls.__name__}: {len(failures)} bad arguments not refused " \
                         "as a ParameterError naming the block, parameter and value:\n  " \
                         + "\n  ".join(failures)
