"""ISO 15622 limits and the checker of recorded runs, on synthetic signals."""

import numpy as np
import pytest

from blocks.controllers import check_iso15622, max_decel, max_jerk


@pytest.mark.parametrize("v, d, j", [(0.0, 5.0, 5.0), (5.0, 5.0, 5.0), (12.5, 4.25, 3.75),
                                     (20.0, 3.5, 2.5), (35.0, 3.5, 2.5)])
def test_speed_dependent_limits(v, d, j):
    assert max_decel(v) == pytest.approx(d, rel=1e-14)
    assert max_jerk(v) == pytest.approx(j, rel=1e-14)
    np.testing.assert_allclose(max_jerk(np.array([v, v])), [j, j], rtol=1e-14)


def test_constant_deceleration_is_measured_over_2_s_windows():
    t = np.arange(0.0, 10.0 + 1e-9, 0.04)
    a = np.where((t >= 3.0) & (t < 6.0), -3.0, 0.0)
    v = np.full_like(t, 25.0)
    r = check_iso15622(t, a, v)
    assert r.max_avg_decel_2s_m_s2 == pytest.approx(3.0, abs=1e-9)
    assert r.decel_ratio == pytest.approx(3.0 / 3.5, abs=1e-9)
    assert r.ok is False  # the step from 0 to -3 m/s^2 is an infinite jerk (3 m/s^3 over 1 s)
    assert r.max_avg_jerk_1s_m_s3 == pytest.approx(3.0, abs=1e-9)
    assert r.jerk_ratio == pytest.approx(3.0 / 2.5, abs=1e-9)


def test_a_slow_onset_passes_and_the_low_speed_limits_are_wider():
    t = np.arange(0.0, 10.0 + 1e-9, 0.01)
    a = -np.clip(2.0 * (t - 2.0), 0.0, 3.0)  # 2 m/s^3 up to 3 m/s^2
    r = check_iso15622(t, a, np.full_like(t, 25.0))
    assert r.max_avg_jerk_1s_m_s3 == pytest.approx(2.0, abs=1e-9) and r.ok
    steep = -np.clip(4.0 * (t - 2.0), 0.0, 4.0)  # 4 m/s^3 to 4 m/s^2: fails at 25 m/s ...
    assert not check_iso15622(t, steep, np.full_like(t, 25.0)).ok
    low = check_iso15622(t, steep, np.full_like(t, 4.0))  # ... passes below 5 m/s
    assert low.ok and low.jerk_ratio == pytest.approx(4.0 / 5.0, abs=1e-9)
    assert low.decel_ratio == pytest.approx(4.0 / 5.0, abs=1e-9)


def test_acceleration_limit_and_input_checks():
    t = np.linspace(0.0, 5.0, 501)
    assert not check_iso15622(t, np.full_like(t, 2.1), np.full_like(t, 10.0)).ok
    assert check_iso15622(t, np.full_like(t, 1.9), np.full_like(t, 10.0)).ok
    with pytest.raises(ValueError, match="at least 2 s"):
        check_iso15622(t[:100], t[:100], t[:100])
    with pytest.raises(ValueError, match="one length"):
        check_iso15622(t, t[:-1], t)
