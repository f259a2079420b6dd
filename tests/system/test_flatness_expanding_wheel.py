"""examples/flatness_expanding_wheel.py end to end: the seed's numbers and the closed loop."""

import csv

import numpy as np
import pytest

import examples.flatness_expanding_wheel as ex


def test_example_reports_the_seed_values_and_exact_error_dynamics(tmp_path, capsys):
    out = ex.main(["--out", str(tmp_path), "--no-plot"])
    assert round(out["z3_10"], 5) == 0.17857 and round(out["dz3_10"], 4) == 0.0306
    assert out["D_min"] == pytest.approx(9.66e-4, abs=1e-6)
    assert round(out["theta1_10"], 3) == 2.930
    assert out["seed_gains_singular_at"] == pytest.approx(1.131, abs=1e-3)
    assert np.all(out["error_deviation"] < 1e-10)
    assert out["D_min_closed"] > 9e-4 and out["model_b_vs_a"] < 1e-9
    with open(out["csv"]) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4001 and abs(float(rows[-1]["e3"])) < 1e-6
    text = capsys.readouterr().out
    assert "z3(10) = 0.17857" in text and "singular set" in text
