"""Fixtures of the FMU tests: the test FMUs, built once per session (tests/fmu_builders.py)."""

import pytest

from tests.fmu_builders import session_fmus


@pytest.fixture(scope="session")
def fmu_files(tmp_path_factory):
    pytest.importorskip("fmpy")
    return session_fmus(tmp_path_factory)
