"""Spectra: DNV-RP-C205 3.5.5 values and the significant height from m0.

References (anchors-domain.md 4.2, reproduced there): Hs = 6 m, Tp = 10 s:
4 sqrt(m0) = 6.00000 m (PM, exact) and 6.00724 m (JONSWAP, gamma 3.3);
S_PM(wp) = 5.12985 m^2 s, S_J(wp) = 11.12785 m^2 s.
"""

import math

import numpy as np
import pytest

from blocks.ocean import JONSWAP, IrregularSea, PiersonMoskowitz, dnv_gamma, jonswap
from cosim.errors import ParameterError


def test_pm_and_jonswap_reference_values():
    pm, js = PiersonMoskowitz(6.0, 10.0), JONSWAP(6.0, 10.0)
    assert pm.hm0 == pytest.approx(6.00000, abs=5e-6)
    assert pm.moment(0) == pytest.approx(36.0 / 16.0, rel=1e-10)  # PM: m0 = Hs^2/16 exactly
    assert js.hm0 == pytest.approx(6.00724, abs=5e-6)
    assert pm(pm.omega_p) == pytest.approx(5.12985, abs=5e-6)
    assert js(js.omega_p) == pytest.approx(11.12785, abs=5e-6)


def test_jonswap_with_gamma_one_is_pm_and_sigma_switches_at_the_peak():
    w = np.linspace(0.1, 3.0, 50)
    np.testing.assert_allclose(jonswap(w, 6, 10, gamma=1.0), PiersonMoskowitz(6, 10)(w),
                               rtol=1e-14)
    wp = 2 * math.pi / 10
    # same distance from the peak: the wider sigma_b side is enhanced more
    lo, hi = jonswap(wp * 0.95, 6, 10) / PiersonMoskowitz(6, 10)(wp * 0.95), \
        jonswap(wp * 1.05, 6, 10) / PiersonMoskowitz(6, 10)(wp * 1.05)
    assert hi > lo


def test_dnv_gamma_rule():
    assert dnv_gamma(6.0, 8.0) == 5.0          # Tp/sqrt(Hs) = 3.27 <= 3.6
    assert dnv_gamma(4.0, 12.0) == 1.0         # 6.0 >= 5
    assert dnv_gamma(6.0, 10.0) == pytest.approx(math.exp(5.75 - 1.15 * 10 / math.sqrt(6)))
    assert JONSWAP(6.0, 10.0, gamma="dnv").gamma == pytest.approx(2.8724, abs=1e-4)


@pytest.mark.parametrize("method", ["equal_frequency", "equal_energy"])
def test_irregular_sea_sample_variance_converges_to_m0(method):
    spec = JONSWAP(6.0, 10.0)
    m0 = spec.moment(0)
    errs = []
    for n in (25, 400):
        sea = IrregularSea.from_spectrum(spec, n, method=method, seed=3,
                                         omega_min=0.05, omega_max=6.0)
        errs.append(abs(sea.variance - m0) / m0)   # sum a^2/2 vs m0
    assert errs[1] < 5e-3 and errs[1] <= errs[0] + 1e-12
    # sample variance of realisations (in space along a 100 km line at t = 0, over 6 seeds):
    # converges to m0
    x = np.column_stack([np.linspace(0.0, 1e5, 10001), np.zeros(10001)])
    var = [np.var(IrregularSea.from_spectrum(spec, 400, method=method, seed=s, omega_min=0.05,
                                             omega_max=6.0).elevation(x, 0.0))
           for s in range(6)]
    assert np.mean(var) == pytest.approx(m0, rel=0.02)
    if method == "equal_frequency":
        # over (nearly) one repeat period 2 pi / d_omega in time the sample variance is
        # sum a^2/2 up to the non-integer offset omega_min/d_omega
        sea = IrregularSea.from_spectrum(spec, 400, method=method, seed=3, omega_min=0.05,
                                         omega_max=6.0)
        t = np.arange(0.0, 2 * math.pi / ((6.0 - 0.05) / 400), 0.25)
        eta = np.array([sea.elevation([0.0, 0.0], ti) for ti in t])
        assert np.var(eta) == pytest.approx(sea.variance, rel=5e-3)


def test_phases_are_seeded():
    spec = PiersonMoskowitz(3.0, 8.0)
    a = IrregularSea.from_spectrum(spec, 50, seed=7)
    b = IrregularSea.from_spectrum(spec, 50, seed=np.random.default_rng(7))
    c = IrregularSea.from_spectrum(spec, 50, seed=8)
    np.testing.assert_array_equal(a.phase, b.phase)
    assert not np.allclose(a.phase, c.phase)


def test_bad_input():
    with pytest.raises(ParameterError, match="tp must be"):
        PiersonMoskowitz(6.0, -1.0)
    with pytest.raises(ParameterError, match="gamma must be"):
        JONSWAP(6.0, 10.0, gamma=0.5)
    with pytest.raises(ParameterError, match="diverges"):
        PiersonMoskowitz(6, 10).moment(4)
    with pytest.raises(ParameterError, match="method must be"):
        IrregularSea.from_spectrum(PiersonMoskowitz(6, 10), 10, method="fft")
