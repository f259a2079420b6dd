"""examples/lim_study.py --quick: the LIM error-versus-macro-step study as a resumable sweep."""

import math

import examples.lim_study as ex


def test_lim_study_table_and_resume(tmp_path):
    out = ex.main(["--quick", "--out", str(tmp_path), "--workers", "2"])
    df = out["data"]
    assert out["runs"] == 16 and out["failed"] == 0
    e = {(r.split, r.coupling, int(r.order), r.H): r.s1_error for r in df.itertuples()}
    # linear extrapolation: the coupling error grows with H (order ~2 between 2 and 5 ms)
    for split in ("fs", "ps"):
        for coupling in ("jacobi", "gs_hyd"):
            a, b = abs(e[(split, coupling, 1, 2e-3)]), abs(e[(split, coupling, 1, 5e-3)])
            assert math.isfinite(a) and 4.0 < b / a < 12.0, (split, coupling, a, b)
    text = (tmp_path / "error_table.md").read_text()
    assert "| fs jacobi order 1 |" in text and "published" in text
    # started again: every run is in the journal, nothing is recomputed
    again = ex.main(["--quick", "--out", str(tmp_path), "--backend", "serial", "--no-plot"])
    assert again["runs"] == 16
    lines = (tmp_path / "study" / "journal.jsonl").read_text().splitlines()
    assert len(lines) == 16
