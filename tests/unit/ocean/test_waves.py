"""Airy waves: dispersion table, kinematics against the closed forms, stretching, block.

Dispersion reference (anchors-domain.md 4.1, reproduced there with g = 9.81):
T=10 s, h=320 m: k=0.04024304, lambda=156.1310, c=15.61310; T=10 s, h=20 m: k=0.05182568,
lambda=121.2369, c=12.12369; T=6 s, deep: k=0.11178621, lambda=56.2072, c=9.36786.
"""

import math

import numpy as np
import pytest

from blocks.ocean import (
    IrregularSea,
    PiersonMoskowitz,
    RegularWave,
    WaveField,
    celerity,
    wave_number,
    wavelength,
)
from cosim.errors import ParameterError
from cosim.testing import BlockHarness


@pytest.mark.parametrize("T, h, k, lam, c", [
    (10, 320, 0.04024304, 156.1310, 15.61310),
    (10, 20, 0.05182568, 121.2369, 12.12369),
    (6, np.inf, 0.11178621, 56.2072, 9.36786),
])
def test_dispersion_table(T, h, k, lam, c):
    assert wave_number(2 * math.pi / T, h) == pytest.approx(k, abs=5e-9)
    assert wavelength(T, h) == pytest.approx(lam, abs=5e-5)
    assert celerity(T, h) == pytest.approx(c, abs=5e-6)


def test_dispersion_is_solved_to_machine_precision_over_a_wide_range():
    w = np.logspace(-4, 1.5, 300)
    for h in (0.5, 20.0, 320.0, 5000.0):
        k = wave_number(w, h)
        np.testing.assert_allclose(9.81 * k * np.tanh(k * h), w * w, rtol=1e-13)
    # shallow and deep limits
    assert wave_number(1e-4, 20.0) == pytest.approx(1e-4 / math.sqrt(9.81 * 20.0), rel=1e-8)
    assert wave_number(3.0, 320.0) == pytest.approx(9.0 / 9.81, rel=1e-14)
    assert wave_number(0.0, 20.0) == 0.0


def test_regular_wave_kinematics_match_closed_forms():
    H, T, h = 4.0, 9.0, 40.0
    wv = RegularWave(H, T, h, heading=0.3, phase=0.2)
    a, w, k = H / 2, 2 * math.pi / T, wv.k[0]
    rng = np.random.default_rng(0)
    pts = np.column_stack([rng.uniform(-50, 50, 20), rng.uniform(-50, 50, 20),
                           rng.uniform(-h, -1.0, 20)])
    t = 3.7
    kin = wv.kinematics(pts, t)
    th = k * (pts[:, 0] * math.cos(0.3) + pts[:, 1] * math.sin(0.3)) - w * t + 0.2
    z = pts[:, 2]
    ch = np.cosh(k * (z + h)) / math.sinh(k * h)
    sh = np.sinh(k * (z + h)) / math.sinh(k * h)
    np.testing.assert_allclose(kin.velocity[:, 0], a * w * ch * np.cos(th) * math.cos(0.3),
                               atol=1e-12)
    np.testing.assert_allclose(kin.velocity[:, 2], a * w * sh * np.sin(th), atol=1e-12)
    np.testing.assert_allclose(kin.acceleration[:, 1], a * w * w * ch * np.sin(th)
                               * math.sin(0.3), atol=1e-12)
    np.testing.assert_allclose(kin.acceleration[:, 2], -a * w * w * sh * np.cos(th), atol=1e-12)
    np.testing.assert_allclose(kin.pressure, 1025 * 9.81 * a * np.cosh(k * (z + h))
                               / math.cosh(k * h) * np.cos(th), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(kin.eta, a * np.cos(th), atol=1e-14)
    # acceleration is the time derivative of the velocity
    d = 1e-5
    dv = (wv.kinematics(pts, t + d).velocity - wv.kinematics(pts, t - d).velocity) / (2 * d)
    np.testing.assert_allclose(dv, kin.acceleration, atol=1e-8)
    # the vertical velocity at the seabed vanishes
    assert wv.kinematics([[0, 0, -h]], 1.0).velocity[0, 2] == pytest.approx(0.0, abs=1e-15)


def test_deep_water_is_exponential_and_large_kh_stays_finite():
    wv = RegularWave(2.0, 5.0, np.inf)
    k, w = wv.k[0], wv.omega[0]
    kin = wv.kinematics([[0, 0, -10.0]], 0.0)
    assert kin.velocity[0, 0] == pytest.approx(w * math.exp(-10 * k), rel=1e-14)
    deep = RegularWave(2.0, 2.0, 5000.0)  # kh ~ 5000: cosh overflows if evaluated naively
    kin = deep.kinematics([[0, 0, -1.0]], 0.0)
    assert np.all(np.isfinite(kin.velocity))
    assert kin.velocity[0, 0] == pytest.approx(deep.omega[0] * math.exp(-deep.k[0]),
                                               rel=1e-12)


def test_above_the_surface_and_stretching():
    wv = RegularWave(6.0, 10.0, 50.0)          # crest at x = 0, t = 0: eta = 3 m
    k = wv.kinematics([[0, 0, 2.0], [0, 0, 4.0]], 0.0)
    assert list(k.wet) == [True, False]
    assert k.velocity[1].tolist() == [0.0, 0.0, 0.0] and k.pressure[1] == 0.0
    extrap = k.velocity[0, 0]
    wh = RegularWave(6.0, 10.0, 50.0, stretching="wheeler").kinematics([[0, 0, 3.0]], 0.0)
    swl = wv.kinematics([[0, 0, 0.0]], 0.0)
    # Wheeler maps the crest to the SWL: the same velocity as the linear one at z = 0
    assert wh.velocity[0, 0] == pytest.approx(swl.velocity[0, 0], rel=1e-12)
    vert = RegularWave(6.0, 10.0, 50.0, stretching="vertical").kinematics([[0, 0, 2.0]], 0.0)
    assert vert.velocity[0, 0] == pytest.approx(swl.velocity[0, 0], rel=1e-12)
    assert extrap > swl.velocity[0, 0]


def test_irregular_sea_is_the_sum_of_its_components():
    sea = IrregularSea.from_spectrum(PiersonMoskowitz(4.0, 9.0), 30, depth=100.0, seed=2)
    pts = np.array([[5.0, -3.0, -12.0], [40.0, 2.0, -1.0]])
    total = sea.kinematics(pts, 11.0).velocity
    parts = sum(RegularWave(2 * a, 2 * math.pi / w, 100.0, phase=p).kinematics(pts, 11.0)
                .velocity for a, w, p in zip(sea.amplitude, sea.omega, sea.phase))
    np.testing.assert_allclose(total, parts, atol=1e-12)


def test_wave_field_block_fixed_and_input_points():
    wv = RegularWave(2.0, 8.0, 30.0)
    pts = [[0, 0, -5.0], [10, 0, -5.0]]
    h = BlockHarness(WaveField("wf", wv, points=pts)).set_time(1.3)
    np.testing.assert_allclose(h.output("velocity"), wv.kinematics(pts, 1.3).velocity)
    h2 = BlockHarness(WaveField("wf", wv, n_points=2)).set_time(1.3)
    h2.set_input("points", pts)
    np.testing.assert_allclose(h2.output("eta"), wv.kinematics(pts, 1.3).eta)
    assert WaveField("w", wv, n_points=2).output("velocity").unit_text == "m/s"


def test_bad_input():
    with pytest.raises(ParameterError, match="depth must be > 0"):
        RegularWave(1.0, 5.0, -10.0)
    with pytest.raises(ParameterError, match="period must be > 0"):
        RegularWave(1.0, 0.0)
    with pytest.raises(ParameterError, match="below the seabed"):
        RegularWave(1.0, 5.0, 10.0).kinematics([[0, 0, -11.0]], 0.0)
    with pytest.raises(ParameterError, match="stretching must be one of"):
        RegularWave(1.0, 5.0, stretching="chakrabarti")
    with pytest.raises(ParameterError, match="either fixed points"):
        WaveField("wf", RegularWave(1.0, 5.0))
