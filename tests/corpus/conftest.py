"""Fixtures of the corpus suite: the other exporters' FMUs, built once per test session."""

from __future__ import annotations

import pytest

from tests.corpus.exporters import build_corpus


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> dict:
    """``{fmu id: CorpusFMU}``: the corpus built in a session folder (the Reference FMUs its
    containers hold come from the conformance build cache, ``out/conformance``)."""
    from tests.conformance.build import build_all
    from tests.conformance.conftest import CACHE
    return build_corpus(tmp_path_factory.mktemp("corpus"), build_all(CACHE))
