"""Differential tests: FMUs written by four other exporters (pythonfmu, pythonfmu3, FMPy's
container writer, fmu-manipulation-toolbox), run by the project through the import API and
the command line, against FMPy's ``simulate_fmu`` with the same settings on the same grid
(and the exact answer where there is one): :mod:`tests.corpus.cases`.

Cases that fail because of issue 31 items 1-3 are strict xfails naming the item: they turn
into failures (to be unmarked) when the fix lands.
"""

from __future__ import annotations

import pytest

from tests.corpus.cases import cases, run_case
from tests.corpus.exporters import EXPORTERS, exporter_versions

pytest.importorskip("fmpy")

CASES = cases()


def _params():
    for case in CASES:
        for via in ("api", "cli"):
            marks = ([pytest.mark.xfail(strict=True, reason=case.xfail[via])]
                     if via in case.xfail else [])
            yield pytest.param(case, via, id=f"{case.id}-{via}", marks=marks)


@pytest.mark.parametrize(("case", "via"), list(_params()))
def test_other_exporter_fmu(corpus, case, via, tmp_path):
    entry = corpus[case.fmu]
    if entry.skip:
        pytest.skip(entry.skip)
    out = run_case(case, entry.path, via, tmp_path)
    assert out.passed, f"{case.id} via {via} against {out.oracle}: {out.detail}"


def test_corpus_covers_the_brief(corpus):
    """Four exporters, FMI 2 and 3, CS and ME, containers, an FMU initialised from its
    input, every FMU of the corpus in at least one case."""
    assert len(EXPORTERS) >= 4
    assert exporter_versions() == EXPORTERS, "install the pinned exporters: pip install -e .[test]"
    used = {c.fmu for c in CASES}
    assert used == set(corpus), f"FMUs without a case: {sorted(set(corpus) - used)}"
    kinds = {(corpus[c.fmu].fmi, c.interface) for c in CASES}
    assert kinds == {(2, "CS"), (2, "ME"), (3, "CS"), (3, "ME")}, kinds
    assert {corpus[c.fmu].exporter for c in CASES} == set(EXPORTERS)
