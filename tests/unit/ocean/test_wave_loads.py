"""Wave loads from RAOs and drift coefficients against closed forms (module docstring of
:mod:`blocks.ocean.wave_loads`)."""

import math

import numpy as np
import pytest
from scipy import integrate

from blocks.ocean import JONSWAP, IrregularSea, LinearWaves, RegularWave
from blocks.ocean.wave_loads import (
    DriftCoefficients,
    ForceRAO,
    WaveLoadModel,
    WaveLoads,
    analytic_signal,
    hilbert_envelope,
)
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

OMEGA = np.linspace(0.1, 3.0, 30)


def table_rao(heading=0.0):
    amp = np.column_stack([np.exp(-OMEGA) * (1 + j) * 1e6 for j in range(6)])
    ph = np.column_stack([0.3 * j - 0.5 * OMEGA for j in range(6)])
    return ForceRAO(OMEGA, amp, ph, heading=heading)


def table_drift(heading=0.0):
    c = np.column_stack([(j + 1) * 1e4 * OMEGA ** 2 / (1 + OMEGA ** 2) for j in range(6)])
    return DriftCoefficients(OMEGA, c, heading=heading)


@pytest.mark.parametrize("xr", [0.0, 17.0])
def test_regular_wave_force_amplitude_and_phase_equal_the_rao(xr):
    w0 = 0.85  # between table points: the interpolated amplitude and phase
    wave = RegularWave(3.0, 2 * math.pi / w0, heading=0.4, phase=0.7)
    rao = table_rao(heading=0.4)
    m = WaveLoadModel(wave, rao, reference=(xr, 2.0))
    X = rao(w0)[0]
    amp = np.array([np.interp(w0, OMEGA, rao.amplitude[:, j]) for j in range(6)])
    ph = np.array([np.interp(w0, OMEGA, rao.phase[:, j]) for j in range(6)])
    np.testing.assert_allclose(np.abs(X), amp, rtol=1e-14)
    eps = 0.7 + wave.k[0] * (xr * math.cos(0.4) + 2.0 * math.sin(0.4))
    T = 2 * math.pi / w0
    ts = np.linspace(0, T, 64, endpoint=False)
    F = np.array([m.first_order(t) for t in ts])
    for j in range(6):
        ref = 1.5 * amp[j] * np.cos(-w0 * ts + eps + ph[j])
        np.testing.assert_allclose(F[:, j], ref, rtol=0, atol=1e-9 * amp[j])
        # and recovered by a least-squares fit of the time series
        c = np.linalg.lstsq(np.column_stack([np.cos(w0 * ts), np.sin(w0 * ts)]), F[:, j],
                            rcond=None)[0]
        z = (c[0] + 1j * c[1]) / 1.5  # F = Re(z e^{-i w t}) -> |z| = amp, arg z = eps + ph
        assert abs(z) == pytest.approx(amp[j], rel=1e-12)
        assert math.remainder(np.angle(z) - eps - ph[j], 2 * math.pi) == pytest.approx(0,
                                                                                   abs=1e-12)
    # the elevation at the reference point is the library's
    eta, env = m.elevation_and_envelope(1.3)
    assert eta == pytest.approx(wave.elevation([xr, 2.0, 0.0], 1.3), abs=1e-12)
    assert env == pytest.approx(1.5, rel=1e-14)
    # regular wave: the drift is constant, c F2 a^2, for every method
    drift = table_drift(0.4)
    for method in ("seed", "newman", "mean"):
        md = WaveLoadModel(wave, drift=drift, drift_method=method, drift_factor=0.5)
        np.testing.assert_allclose(md.second_order(2.1), 0.5 * drift(w0)[0] * 1.5 ** 2,
                                   rtol=1e-13)


def test_envelope_of_a_two_component_sea_is_the_beat():
    a, w, phi = np.array([1.2, 0.7]), np.array([0.6, 0.68]), np.array([0.3, 2.1])
    sea = LinearWaves(w, a, phi)
    # 0.6 and 0.68 rad/s have 15 and 17 periods in 2 pi / 0.04 (two beat periods)
    t = np.linspace(0, 2 * 2 * math.pi / 0.04, 4000, endpoint=False)
    A2 = a[0] ** 2 + a[1] ** 2 + 2 * a[0] * a[1] * np.cos((w[0] - w[1]) * t - (phi[0] - phi[1]))
    Z = analytic_signal(sea, t)
    np.testing.assert_allclose(np.abs(Z) ** 2, A2, rtol=1e-13)
    np.testing.assert_allclose(Z.real, [sea.elevation([0, 0, 0], ti) for ti in t[:50]] +
                               list(Z.real[50:]), atol=1e-12)
    # the FFT Hilbert transform of the record gives the same envelope
    np.testing.assert_allclose(hilbert_envelope(Z.real), np.sqrt(A2), atol=1e-10)
    # the slow drift: seed (weighted constant coefficient x A^2) and Newman's closed forms
    drift = table_drift()
    F2 = drift(w)
    for method in ("seed", "newman"):
        m = WaveLoadModel(sea, drift=drift, drift_method=method)
        got = np.array([m.second_order(ti) for ti in t[::97]])
        tt = t[::97]
        if method == "seed":
            ref = np.outer(A2[::97], (F2[0] * a[0] ** 2 + F2[1] * a[1] ** 2) / (a @ a))
        else:
            ref = (F2[0] * a[0] ** 2 + F2[1] * a[1] ** 2
                   + np.outer(a[0] * a[1] * np.cos((w[0] - w[1]) * tt - (phi[0] - phi[1])),
                              F2[0] + F2[1]))
        np.testing.assert_allclose(got, ref, rtol=1e-12)


@pytest.mark.parametrize("method", ["seed", "newman"])
def test_mean_drift_is_the_spectral_formula(method):
    spec = JONSWAP(4.0, 9.0)
    wmin, wmax = 0.3, 2.5
    sea = IrregularSea.from_spectrum(spec, 120, omega_min=wmin, omega_max=wmax, seed=5)
    drift = table_drift()
    m = WaveLoadModel(sea, drift=drift, drift_method=method)
    # the equal-frequency sea repeats after 2 pi / dw; uniform samples over that period
    # average every difference-frequency cosine to zero exactly
    dw = (wmax - wmin) / 120
    t = np.linspace(0, 2 * math.pi / dw, 512, endpoint=False)
    mean = np.mean([m.second_order(ti) for ti in t], axis=0)
    F2 = drift(sea.omega)
    np.testing.assert_allclose(mean, (sea.amplitude ** 2) @ F2, rtol=1e-12)
    np.testing.assert_allclose(m.mean, mean, rtol=1e-12)
    # = 2 * int F2 S dw (the standard mean drift) up to the midpoint rule's error
    x = np.linspace(wmin, wmax, 200001)
    S, F2x = spec(x), drift(x)
    for j in (0, 3):
        ref = 2 * integrate.trapezoid(F2x[:, j] * S, x)
        assert mean[j] == pytest.approx(ref, rel=2e-4)
    # and seed's weighting is the spectral ratio int F2 S / int S
    ratio = integrate.trapezoid(F2x[:, 0] * S, x) / integrate.trapezoid(S, x)
    assert m.weighted[0] == pytest.approx(ratio, rel=2e-4)


def test_froude_krylov_box_heave_against_closed_form():
    L, B, T, beta = 100.0, 30.0, 5.0, 0.6
    w = np.array([0.2, 0.5, 0.8, 1.2, 2.0])
    rao = ForceRAO.froude_krylov_box(L, B, T, w, heading=beta, reference=(0, 0, 3.0))
    k = w * w / 9.81
    X3 = 1025 * 9.81 * L * B * np.exp(-k * T) * np.sinc(k * L * math.cos(beta) / 2 / math.pi) \
        * np.sinc(k * B * math.sin(beta) / 2 / math.pi)
    X = rao(w)
    np.testing.assert_allclose(X[:, 2].real, X3, rtol=1e-9, atol=1e-9 * np.abs(X3).max())
    # long waves: heave force -> rho g A_wp per metre (the hydrostatic stiffness)
    lw = ForceRAO.froude_krylov_box(L, B, T, [1e-3, 2e-3], heading=beta)
    assert abs(lw(1e-3)[0, 2]) == pytest.approx(1025 * 9.81 * L * B, rel=1e-5)
    # head seas: symmetric hull, no sway, roll or yaw
    hs = ForceRAO.froude_krylov_box(L, B, T, w, heading=math.pi)
    assert np.abs(hs(w)[:, [1, 3, 5]]).max() < 1e-6 * np.abs(hs(w)).max()


def test_drift_box_reflection_and_errors():
    d = DriftCoefficients.box_reflection(100, 30, 5, [0.2, 1.0, 3.0], heading=math.pi / 2)
    c = d([3.0])[0]
    assert c[1] == pytest.approx(0.5 * 1025 * 9.81 * 100 * (1 - math.exp(-2 * 9 / 9.81 * 5)))
    assert abs(c[0]) < 1e-9 * c[1]
    with pytest.raises(ParameterError, match="extend the table"):
        d([5.0])
    with pytest.raises(ParameterError, match="heading"):
        WaveLoadModel(RegularWave(1, 8, heading=0.0), rao=table_rao(heading=1.0))
    with pytest.raises(ParameterError, match="6 columns"):
        ForceRAO([0, 1], np.ones((2, 3)), np.zeros((2, 3)))
    hold = DriftCoefficients([1, 2], np.ones((2, 6)), extrapolate="hold")
    zero = DriftCoefficients([1, 2], np.ones((2, 6)), extrapolate="zero")
    assert hold(3.0)[0, 0] == 1.0 and zero(3.0)[0, 0] == 0.0


def test_block_outputs_sum_of_orders():
    sea = IrregularSea.from_spectrum(JONSWAP(2.0, 8.0), 40, omega_min=0.4, omega_max=2.5, seed=2,
                                     heading=0.0)
    blk = WaveLoads("wl", sea, table_rao(), table_drift(), drift_method="newman")
    h = BlockHarness(blk).set_time(12.5)
    m = blk.model
    f1, f2 = m.first_order(12.5), m.second_order(12.5)
    np.testing.assert_allclose(h.output("force"), (f1 + f2)[:3])
    np.testing.assert_allclose(h.output("moment"), (f1 + f2)[3:])
    assert h.output("eta") == pytest.approx(sea.elevation([0, 0, 0], 12.5), abs=1e-12)
    off = WaveLoads("w2", sea, table_rao(), table_drift(), second_order=False)
    np.testing.assert_allclose(BlockHarness(off).set_time(12.5).output("second_order"), 0)
