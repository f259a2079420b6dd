"""examples/ocean_moored_cylinder.py: runs, writes CSV, and the free surge decay has the
natural period sqrt((m + m_a)/K11) of the mooring stiffness and the Morison added mass."""

import math
import os

import numpy as np
import pytest

import examples.ocean_moored_cylinder as ex
from blocks.ocean import IrregularSea, MooringSystem


def test_main_runs_fast_and_writes_csv(tmp_path):
    s = ex.main(["--out", str(tmp_path), "--t-end", "120"])
    assert os.path.getsize(s["csv"]) > 1000
    assert s["k11_n_per_m"] == pytest.approx(41181, rel=1e-3)
    assert s["added_mass_kg"] == pytest.approx(s["mass_kg"], rel=1e-12)   # Ca = 1
    assert s["sea_hm0_m"] == pytest.approx(6.0, rel=0.01)
    assert 0.05 < s["surge_std_m"] < 5.0 and np.isfinite(s["surge_max_abs_m"])
    assert s["tension_min_n"] > 0
    assert s["real_time_factor"] > 5


def test_free_surge_decay_has_the_mooring_natural_period():
    calm = IrregularSea([0.5], [0.0], depth=ex.DEPTH)     # zero-amplitude sea: still water
    res, _ = ex.run(sea=calm, x0=2.0, t_end=400.0, dt=0.5)
    t, x = res.time, res["body.x"]
    up = np.where((x[:-1] < 0) & (x[1:] >= 0))[0]
    tc = t[up] - x[up] * (t[up + 1] - t[up]) / (x[up + 1] - x[up])
    period = np.mean(np.diff(tc))
    m, ma = ex.masses(calm)
    k11 = MooringSystem.symmetric(heading0=math.pi, **ex.LINES).stiffness()[0, 0]
    # light quadratic drag damping and the mooring nonlinearity: within 2 %
    assert period == pytest.approx(2 * math.pi * math.sqrt((m + ma) / k11), rel=0.02)
    assert 0 < np.max(np.abs(x[t > 250])) < 2.0                 # decays
