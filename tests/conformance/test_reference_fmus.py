"""The Modelica Reference FMUs (the FMI project's own conformance set, built from source
for FMI 2.0 and 3.0) through every interface they offer, by the import API and by the
command line, against upstream's results and exact or independent references
(:mod:`tests.conformance.cases`)."""

from __future__ import annotations

import pytest

from tests.conformance.cases import cases, compare, run_api, run_cli

pytest.importorskip("fmpy")

CASES = cases()


@pytest.mark.parametrize("via", ["api", "cli"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_reference_fmu(reference_fmus, case, via, tmp_path):
    path = reference_fmus[(case.version, case.model)]
    res = run_api(case, path) if via == "api" else run_cli(case, path, tmp_path)
    err, names = compare(case, res, path)
    assert names, f"{case.id}: no output of the reference was recorded ({list(res.signals)})"
    assert err <= case.tol, f"{case.id} via {via}: error {err:.3g} > {case.tol:g} ({names})"
    if case.id == "Roberts-fmi3-cs" and via == "api":  # declares event mode, refuses it
        assert any("refused event mode" in w for w in res.diagnostics["warnings"])
    if case.model == "Stair":  # terminateSimulation at counter 10 (t = 9 s) ends the run
        counter = next(v for k, v in res.signals.items() if k.rsplit(".", 1)[-1] == "counter")
        assert res.time[-1] == pytest.approx(9.0) and max(counter) == 10
        if via == "api":
            term = res.diagnostics["terminated"]
            assert term["t"] == pytest.approx(9.0) and "terminateSimulation" in term["reason"]
