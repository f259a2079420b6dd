"""Fixtures of the conformance suite: the Reference FMUs built once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.build import MODELS, BuildUnavailable, build

#: built FMUs are kept here between sessions (``out/`` is not versioned); the folder names
#: the upstream commit so that a new vendored version builds afresh
CACHE = Path(__file__).resolve().parents[2] / "out" / "conformance" / "reference-fmus-1258711"


@pytest.fixture(scope="session")
def reference_fmus() -> dict:
    """``{(fmi_version, model): path of the .fmu}`` for FMI 2 and 3 (skips without cmake)."""
    out = {}
    for version in MODELS:
        try:
            built = build(version, CACHE / f"fmi{version}")
        except BuildUnavailable as exc:
            pytest.skip(f"the Reference FMUs cannot be built here: {exc}")
        out.update({(version, m): p for m, p in built.items()})
    return out
