"""The flatness examples run end to end: examples/flatness_kincar.py (python-control's
kincar-flatsys lane change) and examples/flatness_flexible_joint.py (Agrawal, seed §2).

Each ``main`` returns its key figures; the tolerances here are the examples' claims (the
unit tests in tests/unit/controllers/test_flatness_*.py check the same at finer grain).
"""

import csv
import math
import os

import numpy as np
import pytest

import examples.flatness_flexible_joint as fjx
import examples.flatness_kincar as kcx

TABLE = {1.0: (-1.585938, 0.105080, 10.055464, 0.041469),
         2.0: (0.0, 0.185348, 10.174263, 0.0),
         3.0: (1.585938, 0.105080, 10.055464, -0.041469)}


def read_csv(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], np.array(rows[1:], dtype=float)


def test_kincar_example(tmp_path, capsys):
    s = kcx.main(["--out", str(tmp_path), "--no-plot"])
    out = capsys.readouterr().out
    assert "lane change" in out and "closed loop" in out
    assert s["plan_vs_closed_form_max_dev"] < 1e-9
    for t, row in TABLE.items():
        np.testing.assert_allclose(s["table"][t], row, atol=1e-6)
    assert s["min_speed_m_s"] == pytest.approx(10.0)
    assert s["open_loop_max_dev"] < 1e-8                        # measured 1.0e-11
    np.testing.assert_allclose(s["open_loop_final_state"], [40.0, 2.0, 0.0], atol=1e-8)
    np.testing.assert_allclose(s["closed_loop_initial_error_m"], [0.0, -0.5], atol=1e-12)
    assert max(map(abs, s["closed_loop_final_error_m"])) < 1e-3
    assert s["closed_loop_error_vs_solution_max"] < 1e-7       # measured 1.6e-10
    pc = s["python_control"]
    if pc is not None:
        assert pc["plan_flag_max_dev"] < 1e-9
        assert pc["plan_state_max_dev"] < 1e-9 and pc["plan_input_max_dev"] < 1e-9
        # python-control's own open loop (inputs interpolated on 500 points, solve_ivp
        # default tolerances): measured 2.2e-3 m
        assert pc["pc_open_loop_max_dev_m"] < 1e-2
    header, data = read_csv(s["csv"])
    assert header[:3] == ["t", "x_ref", "y_ref"] and "delta_ff" in header
    assert data[-1, 0] == pytest.approx(kcx.T_END)
    assert os.path.getsize(s["csv"]) > 1000


def test_flexible_joint_example(tmp_path, capsys):
    s = fjx.main(["--out", str(tmp_path), "--no-plot"])
    assert "Flexible-joint" in capsys.readouterr().out
    assert s["reverse_map_vs_closed_form_max"] < 1e-12
    assert s["open_loop_max_dev_rad"] < 1e-8                    # measured 1.1e-12
    assert s["tracking_initial_error_rad"] == pytest.approx(-0.2)
    assert s["tracking_error_vs_solution_max"] < 1e-8          # measured 2.1e-10
    assert abs(s["tracking_final_error_rad"]) < 1e-6
    assert s["swing_max_error_rad"] < 1e-8                     # measured 2.1e-11
    assert s["swing_final_angle_rad"] == pytest.approx(math.pi / 2, abs=1e-8)
    assert s["swing_final_torque_nm"] == pytest.approx(s["holding_torque_nm"], abs=1e-6)
    # the spring twists by the static MgL/k at the end of the swing
    assert s["swing_planned_max_twist_rad"] == pytest.approx(0.04905, rel=1e-3)
    for path in s["csv"]:
        header, data = read_csv(path)
        assert header[0] == "t" and data.shape[0] > 100
