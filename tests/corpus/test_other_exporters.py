"""Differential tests: FMUs written by five other exporters (pythonfmu, pythonfmu3, unifmu,
FMPy's container writer, fmu-manipulation-toolbox), run by the project through the import API and
the command line, against FMPy's ``simulate_fmu`` with the same settings on the same grid
(and the exact answer where there is one): :mod:`tests.corpus.cases`.

Cases that fail because of issue 31 item 2 (non-Real types, open) are strict xfails naming the
item and its symptom: they turn into failures (to be unmarked) when the fix lands.
"""

from __future__ import annotations

import re

import pytest

from tests.corpus.cases import cases, run_case
from tests.corpus.exporters import EXPORTERS, exporter_versions

pytest.importorskip("fmpy")

CASES = cases()


class KnownIssue(Exception):
    """The case failed with the symptom of the issue 31 item its xfail names."""


def _params():
    for case in CASES:
        for via in ("api", "cli"):
            marks = ([pytest.mark.xfail(strict=True, raises=KnownIssue, reason=case.xfail[via])]
                     if via in case.xfail else [])
            yield pytest.param(case, via, id=f"{case.id}-{via}", marks=marks)


@pytest.mark.parametrize(("case", "via"), list(_params()))
def test_other_exporter_fmu(corpus, case, via, tmp_path):
    entry = corpus[case.fmu]
    if entry.skip:
        pytest.skip(entry.skip)
    assert not entry.error, entry.error
    out = run_case(case, entry.path, via, tmp_path)
    if via in case.xfail and not out.passed:
        # an expected failure only with its item's symptom: any other is a real failure
        assert re.search(case.symptom, out.detail, re.M), (
            f"{case.id} via {via} fails, but not as {case.xfail[via]!r} "
            f"(symptom {case.symptom!r}): {out.detail}")
        raise KnownIssue(f"{case.xfail[via]}: {out.detail}")
    assert out.passed, f"{case.id} via {via} against {out.oracle}: {out.detail}"


def test_corpus_covers_the_brief(corpus):
    """At least four exporters, FMI 2 and 3, CS and ME, containers, an FMU initialised from its
    input, every FMU of the corpus in at least one case."""
    assert len(EXPORTERS) >= 4
    assert exporter_versions() == EXPORTERS, "install the pinned exporters: pip install -e .[test]"
    used = {c.fmu for c in CASES}
    assert used == set(corpus), f"FMUs without a case: {sorted(set(corpus) - used)}"
    kinds = {(corpus[c.fmu].fmi, c.interface) for c in CASES}
    assert kinds == {(2, "CS"), (2, "ME"), (3, "CS"), (3, "ME")}, kinds
    assert {corpus[c.fmu].exporter for c in CASES} == set(EXPORTERS)


def test_docs_table_is_current():
    """The corpus table of docs/libraries/fmi.md equals the one generated from the cases."""
    import re
    from pathlib import Path

    from tests.corpus.cases import markdown_table
    from tests.corpus.exporters import CATALOGUE
    doc = (Path(__file__).resolve().parents[2] / "docs" / "libraries" / "fmi.md").read_text()
    m = re.search(r"<!-- corpus-table:begin -->\n(.*?)\n<!-- corpus-table:end -->", doc, re.S)
    assert m, "docs/libraries/fmi.md has no corpus-table markers"
    assert m.group(1) == markdown_table(CATALOGUE), (
        "the corpus table in docs/libraries/fmi.md is stale: replace it with the output of "
        "python -c 'from tests.corpus.cases import markdown_table; from tests.corpus.exporters "
        "import CATALOGUE; print(markdown_table(CATALOGUE))'")


def test_bench_target_counts_every_case():
    """``python -m bench fmi``'s other_exporters targets: met only when every case agrees
    and four exporters built FMUs; not measured when the corpus did not run."""
    from bench.fmi import other_exporter_targets
    rows = [{"case": "a-cs", "via": "api", "agrees": True},
            {"case": "a-cs", "via": "cli", "agrees": False}]
    four = ["FMPy", "fmu-manipulation-toolbox", "pythonfmu", "pythonfmu3"]
    agree, exporters = other_exporter_targets({"agree": 1, "total": 2, "exporters": four,
                                               "cases": rows})
    assert agree["met"] is False and "a-cs (cli)" in agree["note"]
    assert exporters["met"] is True and exporters["value"] == 4
    agree, exporters = other_exporter_targets({"agree": 2, "total": 2, "exporters": four[:3],
                                               "cases": [dict(r, agrees=True) for r in rows]})
    assert agree["met"] is True and exporters["met"] is False
    assert all(t["met"] is None for t in other_exporter_targets(None))


def test_oracle_checks_fmpy_against_the_exact_answer(corpus):
    """FMPy disagreeing with the exact answer fails loudly (the defect must be named); a
    case naming an FMPy defect is checked against the exact answer without FMPy."""
    import dataclasses

    import numpy as np

    from tests.corpus.cases import oracle
    case = next(c for c in CASES if c.id == "pf3-readme-cs")
    wrong = dataclasses.replace(case, exact=lambda t: {"intOut": [2] * len(t),
                                                       "realOut": np.full(len(t), 3.0)})
    with pytest.raises(AssertionError, match="FMPy disagrees with the exact answer"):
        oracle(wrong, corpus[case.fmu].path)
    named = dataclasses.replace(wrong, fmpy_defect="a defect named here")
    ref, what, _ = oracle(named, None)  # no FMU: FMPy is not run
    assert ref["intOut"] == [2] * len(case.grid()) and "a defect named here" in what
