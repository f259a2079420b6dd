"""Brush (Fiala) and linear tyre models: closed-form checks (anchors-domain.md 3.1)."""

import math

import numpy as np
import pytest

from blocks.vehicle import BrushTyre, LinearTyre
from cosim.errors import ParameterError

# the anchor case: C_alpha = 60 kN/rad, mu = 1, Fz = 4 kN
BRUSH = BrushTyre(cornering_stiffness_n_per_rad=60e3, slip_stiffness_n=80e3, mu=1.0,
                  contact_half_length_m=0.09)
FZ = 4000.0


def test_anchor_values_of_the_parabolic_brush():
    # anchors-domain.md 3.1 [computed there]: Fy(1 deg) = 958.559 N, Fy(4 deg) = 2899.644 N,
    # full sliding from 11.3099 deg; ISO sign: the force opposes the slip
    fy1 = BRUSH.forces(0.0, math.radians(1.0), 0.0, FZ)[1]
    fy4 = BRUSH.forces(0.0, math.radians(4.0), 0.0, FZ)[1]
    assert fy1 == pytest.approx(-958.559, abs=5e-4)
    assert fy4 == pytest.approx(-2899.644, abs=5e-4)
    assert math.degrees(BRUSH.critical_slip_angle(FZ)) == pytest.approx(11.3099, abs=5e-5)


def test_closed_form_lateral_force_and_full_sliding():
    theta = 60e3 / (3 * 1.0 * FZ)
    a_sl = math.atan(1 / theta)
    alpha = np.radians(np.linspace(-30, 30, 241))
    fx, fy, mx, my, mz = BRUSH.forces(0.0, alpha, 0.0, FZ)
    sig = np.tan(alpha)
    ts = theta * sig
    ref = np.where(np.abs(alpha) < a_sl,
                   3 * FZ * ts * (1 - np.abs(ts) + ts ** 2 / 3), FZ * np.sign(alpha))
    np.testing.assert_allclose(fy, -ref, rtol=1e-13, atol=1e-9)
    sliding = np.abs(alpha) >= a_sl
    assert sliding.sum() > 100
    np.testing.assert_allclose(np.abs(fy[sliding]), FZ, rtol=1e-15)  # mu Fz beyond a_sl
    np.testing.assert_array_equal(fx, 0.0)


def test_cornering_and_slip_stiffness_at_small_slip():
    # F = C s (1 - |theta s| + ...) has a kink in its curvature at 0: the central
    # difference is off by theta h (5e-9 relative here), so h is small
    h = 1e-9
    ky = (BRUSH.forces(0.0, h, 0.0, FZ)[1] - BRUSH.forces(0.0, -h, 0.0, FZ)[1]) / (2 * h)
    kx = (BRUSH.forces(h, 0.0, 0.0, FZ)[0] - BRUSH.forces(-h, 0.0, 0.0, FZ)[0]) / (2 * h)
    assert ky == pytest.approx(-60e3, rel=1e-7)
    assert kx == pytest.approx(80e3, rel=1e-7)


def test_longitudinal_full_sliding_beyond_the_critical_slip():
    k_sl = BRUSH.critical_slip_ratio(FZ)  # 3 mu Fz / C_kappa = 0.15
    assert k_sl == pytest.approx(0.15, rel=1e-15)
    kap = np.linspace(-1, 1, 201)
    fx = BRUSH.forces(kap, 0.0, 0.0, FZ)[0]
    lam = 80e3 * np.abs(kap) / (3 * FZ)
    ref = np.where(lam < 1, FZ * (3 * lam - 3 * lam ** 2 + lam ** 3), FZ) * np.sign(kap)
    np.testing.assert_allclose(fx, ref, rtol=1e-13, atol=1e-9)
    np.testing.assert_allclose(np.abs(fx[np.abs(kap) >= k_sl]), FZ, rtol=1e-15)


def test_combined_slip_stays_in_the_friction_circle():
    kap = np.linspace(-0.5, 0.5, 101)[None, :]
    alp = np.radians(np.linspace(-20, 20, 81))[:, None]
    fx, fy, *_ = BRUSH.forces(kap, alp, 0.0, FZ)
    f = np.hypot(fx, fy)
    assert f.max() <= FZ * (1 + 1e-15)  # measured 4000.000000000001 (rounding)
    assert f.max() == pytest.approx(FZ, rel=1e-15)  # reached in full sliding
    # Fx shrinks as the slip angle grows (kappa fixed), Fy as kappa grows
    assert np.all(np.diff(np.abs(fx[40:, 60]), axis=0) <= 0)  # kappa = 0.1, alpha 0..20 deg
    assert np.all(np.diff(np.abs(fy[50, 50:])) <= 0)  # alpha = 2.5 deg, kappa 0..0.5
    # isotropic brush: the force is parallel to the slip vector (C_kappa = C_alpha)
    iso = BrushTyre(cornering_stiffness_n_per_rad=60e3, slip_stiffness_n=60e3, mu=0.9)
    fx, fy, *_ = iso.forces(0.05, math.atan(0.03), 0.0, FZ)
    assert fx / -fy == pytest.approx(0.05 / 0.03, rel=1e-14)


def test_pneumatic_trail_and_aligning_moment():
    a = 0.09
    fx, fy, _, _, mz = BRUSH.forces(0.0, 1e-6, 0.0, FZ)
    assert -mz / fy == pytest.approx(a / 3, rel=1e-5)  # trail a/3 at small slip
    # book: Mz = -mu Fz a ts (1 - 3|ts| + 3 ts^2 - |ts|^3) (ISO sign: opposite to Fy)
    for deg in (2.0, 6.0):
        ts = 60e3 * math.tan(math.radians(deg)) / (3 * FZ)
        mz = BRUSH.forces(0.0, math.radians(deg), 0.0, FZ)[4]
        assert mz == pytest.approx(FZ * a * ts * (1 - 3 * ts + 3 * ts ** 2 - ts ** 3),
                                   rel=1e-13)
    assert BRUSH.forces(0.0, math.radians(15.0), 0.0, FZ)[4] == 0.0


def test_zero_slip_zero_load_and_scalar_equals_array():
    assert BRUSH.forces(0.0, 0.0, 0.0, FZ) == (0.0, -0.0, 0.0, 0.0, 0.0)
    assert BRUSH.forces(0.1, 0.1, 0.0, 0.0) == (0.0, 0.0, 0.0, 0.0, 0.0)
    arr = BRUSH.forces(np.array([0.0, 0.02, -0.3]), np.array([0.0, 0.05, 0.2]), 0.0,
                       np.array([FZ, -10.0, 3000.0]))
    assert np.all(np.isfinite(arr))
    for i, (k, a, fz) in enumerate(((0.0, 0.0, FZ), (0.02, 0.05, -10.0), (-0.3, 0.2, 3e3))):
        s = BRUSH.forces(k, a, 0.0, fz)
        np.testing.assert_allclose([v[i] for v in arr], s, rtol=1e-14, atol=1e-12)


def test_linear_model_and_its_saturation():
    lin = LinearTyre(cornering_stiffness_n_per_rad=60e3, slip_stiffness_n=80e3,
                     pneumatic_trail_m=0.03)
    fx, fy, mx, my, mz = lin.forces(0.01, 0.02, 0.0, FZ)
    assert (fx, fy, mz) == (pytest.approx(800.0), pytest.approx(-1200.0), pytest.approx(36.0))
    assert lin.forces(0.0, 0.0, 0.0, FZ)[:2] == (0.0, -0.0)
    assert lin.forces(0.2, 0.2, 0.0, FZ)[1] == pytest.approx(-12e3)  # no limit without mu
    sat = LinearTyre(cornering_stiffness_n_per_rad=60e3, slip_stiffness_n=80e3, mu=0.8)
    fx, fy, *_ = sat.forces(0.2, 0.2, 0.0, FZ)  # linear: (16000, -12000) N
    assert math.hypot(fx, fy) == pytest.approx(0.8 * FZ, rel=1e-14)
    assert fx / fy == pytest.approx(16000 / -12000, rel=1e-14)  # direction kept
    assert sat.forces(0.01, 0.02, 0.0, FZ)[:2] == (pytest.approx(800.0), pytest.approx(-1200.0))
    arr = sat.forces(np.array([0.2, 0.01]), np.array([0.2, 0.02]), 0.0, FZ)
    np.testing.assert_allclose(np.hypot(arr[0], arr[1]), [3200.0, math.hypot(800, 1200)])
    assert sat.forces(0.2, 0.2, 0.0, 0.0)[:2] == (0.0, 0.0)


def test_rolling_resistance_and_parameter_errors():
    m = LinearTyre(cornering_stiffness_n_per_rad=6e4, slip_stiffness_n=8e4, radius_m=0.3,
                   rolling_resistance=0.012)
    assert m.forces(0.0, 0.0, 0.0, FZ, vx=20.0)[3] == pytest.approx(-0.012 * FZ * 0.3)
    assert m.forces(0.0, 0.0, 0.0, FZ, vx=-20.0)[3] == pytest.approx(0.012 * FZ * 0.3)
    assert m.forces(0.0, 0.0, 0.0, FZ, vx=0.0)[3] == 0.0
    with pytest.raises(ParameterError, match="rolling_resistance needs radius_m"):
        LinearTyre(cornering_stiffness_n_per_rad=6e4, slip_stiffness_n=8e4,
                   rolling_resistance=0.01)
    with pytest.raises(ParameterError, match="BrushTyre: mu must be > 0"):
        BrushTyre(cornering_stiffness_n_per_rad=6e4, slip_stiffness_n=8e4, mu=0.0)
