"""examples/electric_drives.py: the CTMS DC motor and the PMSM torque step, as printed."""

import pytest

import examples.electric_drives as ed


def test_ctms_dc_motor_matches_the_closed_form_and_the_published_poles():
    d = ed.dc_motor_step()
    rise, settle = ed.dc_motor_exact_times()
    assert d["poles"] == pytest.approx([-9.9975, -2.0025], abs=5e-5)
    assert d["final"] == pytest.approx(d["final_exact"], rel=1e-6)
    assert d["overshoot"] <= 1e-9
    assert d["rise_s"] == pytest.approx(rise, abs=1e-5)
    assert d["settling_s"] == pytest.approx(settle, abs=1e-5)
    # the published times are python-control's on its 251-point grid (0.0138 s apart)
    assert abs(rise - 1.131) < 0.0138 and abs(settle - 2.070) < 0.0138


def test_pmsm_torque_step_follows_the_designed_current_loop_and_the_dq_steady_state():
    p = ed.pmsm_torque_step()
    assert p["iq_final"] == pytest.approx(p["iq_ref"], rel=1e-9)
    assert abs(p["id_final"]) < 1e-6
    assert p["torque_final"] == pytest.approx(ed.PMSM_TORQUE, rel=1e-9)
    # pole-zero cancellation and decoupling: i_q = i_q* (1 - exp(-w_c t)) exactly,
    # up to the RK4 error at 1 us (w_c h = 2e-3)
    assert p["iq_max_dev_from_first_order"] < 1e-6 * p["iq_ref"]
    assert p["u_final"] == pytest.approx(p["u_steady_state"], rel=1e-9)
