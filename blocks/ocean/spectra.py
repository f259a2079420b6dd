r"""Wave spectra (DNV-RP-C205, Sec. 3.5.5) and spectral moments.

Pierson-Moskowitz (fully developed sea)

.. math::

    S_{PM}(\omega) = \frac{5}{16} H_s^2 \omega_p^4 \omega^{-5}
                     \exp\!\Big(-\frac{5}{4}\big(\omega/\omega_p\big)^{-4}\Big),
    \qquad \omega_p = 2\pi/T_p

JONSWAP (fetch-limited)

.. math::

    S_J(\omega) = A_\gamma S_{PM}(\omega)\,
                  \gamma^{\exp\left(-\frac{(\omega-\omega_p)^2}{2\sigma^2\omega_p^2}\right)},
    \qquad A_\gamma = 1 - 0.287\ln\gamma,
    \qquad \sigma = \begin{cases} \sigma_a = 0.07 & \omega \le \omega_p\\
                                  \sigma_b = 0.09 & \omega > \omega_p\end{cases}

with :math:`\gamma = 3.3` by default or, with ``gamma="dnv"``, DNV's rule (RP-C205 3.5.5.5)
:math:`\gamma = 5` for :math:`T_p/\sqrt{H_s} \le 3.6`,
:math:`\gamma = \exp(5.75 - 1.15\,T_p/\sqrt{H_s})` between 3.6 and 5, and 1 above 5
(``T_p`` in s, ``H_s`` in m).

Spectral moments :math:`m_n = \int_0^\infty \omega^n S(\omega)\,d\omega`; the significant
wave height is :math:`H_{m0} = 4\sqrt{m_0}`.  For PM :math:`m_0 = H_s^2/16` exactly; for
JONSWAP the :math:`A_\gamma` normalisation is approximate (:math:`4\sqrt{m_0}` = 6.00724 m
for :math:`H_s` = 6 m, :math:`T_p` = 10 s, :math:`\gamma` = 3.3).  All spectra are
one-sided, in :math:`\mathrm{m^2\,s/rad}`, of the angular frequency
:math:`\omega` [rad/s].

Limitations: unidirectional spectra only (no spreading function); moments of order
:math:`n \ge 4` diverge for the :math:`\omega^{-5}` tail and are refused.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate

from cosim.errors import ParameterError

__all__ = ["JONSWAP", "PiersonMoskowitz", "Spectrum", "dnv_gamma", "jonswap",
           "pierson_moskowitz", "spectral_moment"]


def _positive(kind: str, **values: float) -> None:
    for label, v in values.items():
        if not (np.isfinite(v) and v > 0):
            raise ParameterError(f"{kind}: {label} must be finite and > 0, got {v!r}")


def _omega(omega) -> np.ndarray:
    w = np.asarray(omega, dtype=float)
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ParameterError("spectrum: angular frequencies must be finite and >= 0 rad/s")
    return w


def pierson_moskowitz(omega, hs: float, tp: float) -> np.ndarray:
    """Pierson-Moskowitz spectrum :math:`S_{PM}(\\omega)` [m^2 s/rad] (module docstring)."""
    _positive("pierson_moskowitz", hs=hs, tp=tp)
    w = _omega(omega)
    wp = 2.0 * math.pi / tp
    out = np.zeros_like(w)
    pos = w > 0
    r = wp / w[pos]
    out[pos] = 5.0 / 16.0 * hs * hs * wp ** 4 * w[pos] ** -5 * np.exp(-1.25 * r ** 4)
    return out if out.ndim else float(out)


def dnv_gamma(hs: float, tp: float) -> float:
    """JONSWAP peak enhancement from DNV-RP-C205 3.5.5.5 (``tp`` [s], ``hs`` [m])."""
    _positive("dnv_gamma", hs=hs, tp=tp)
    r = tp / math.sqrt(hs)
    if r <= 3.6:
        return 5.0
    if r >= 5.0:
        return 1.0
    return math.exp(5.75 - 1.15 * r)


def jonswap(omega, hs: float, tp: float, gamma: float | str = 3.3, sigma_a: float = 0.07,
            sigma_b: float = 0.09) -> np.ndarray:
    """JONSWAP spectrum :math:`S_J(\\omega)` [m^2 s/rad]; ``gamma="dnv"`` for DNV's rule."""
    g = dnv_gamma(hs, tp) if isinstance(gamma, str) and gamma.lower() == "dnv" else gamma
    if isinstance(g, str) or not (np.isfinite(g) and g >= 1.0):
        raise ParameterError(f"jonswap: gamma must be a number >= 1 or 'dnv', got {gamma!r}")
    _positive("jonswap", sigma_a=sigma_a, sigma_b=sigma_b)
    w = _omega(omega)
    wp = 2.0 * math.pi / tp
    sigma = np.where(w <= wp, sigma_a, sigma_b)
    a_gamma = 1.0 - 0.287 * math.log(g)
    peak = g ** np.exp(-((w - wp) ** 2) / (2.0 * sigma ** 2 * wp ** 2))
    out = a_gamma * np.asarray(pierson_moskowitz(w, hs, tp)) * peak
    return out if out.ndim else float(out)


def spectral_moment(spectrum, n: int = 0, omega_p: float | None = None) -> float:
    """:math:`m_n = \\int_0^\\infty \\omega^n S(\\omega) d\\omega` by adaptive quadrature.

    ``spectrum`` is a callable of :math:`\\omega`; ``omega_p`` (its peak) splits the
    integration range (recommended: the JONSWAP peak is narrow).
    """
    if n >= 4:
        raise ParameterError(f"spectral_moment: m_{n} diverges for an omega^-5 tail; "
                             "use n <= 3 or truncate the spectrum yourself")

    def f(w: float) -> float:
        return w ** n * float(spectrum(w))

    wp = omega_p if omega_p is not None else 1.0
    edges = [0.0, 0.5 * wp, 0.9 * wp, wp, 1.1 * wp, 2.0 * wp, 6.0 * wp]
    total = sum(integrate.quad(f, a, b, epsabs=0.0, epsrel=1e-12, limit=200)[0]
                for a, b in zip(edges[:-1], edges[1:]))
    total += integrate.quad(f, edges[-1], np.inf, epsabs=0.0, epsrel=1e-12, limit=200)[0]
    return float(total)


class Spectrum:
    """Base of the parametric spectra: ``S(omega)``, ``moment(n)``, ``hm0``, ``omega_p``."""

    hs: float
    tp: float

    @property
    def omega_p(self) -> float:
        """Peak angular frequency :math:`2\\pi/T_p` [rad/s]."""
        return 2.0 * math.pi / self.tp

    def __call__(self, omega) -> np.ndarray:
        raise NotImplementedError

    def moment(self, n: int = 0) -> float:
        """Spectral moment :math:`m_n` (quadrature)."""
        return spectral_moment(self, n, self.omega_p)

    @property
    def hm0(self) -> float:
        """:math:`H_{m0} = 4\\sqrt{m_0}` [m]."""
        return 4.0 * math.sqrt(self.moment(0))

    def tz(self) -> float:
        """Mean zero-upcrossing period :math:`2\\pi\\sqrt{m_0/m_2}` [s]."""
        return 2.0 * math.pi * math.sqrt(self.moment(0) / self.moment(2))


class PiersonMoskowitz(Spectrum):
    """Pierson-Moskowitz spectrum with significant height ``hs`` [m] and peak period ``tp`` [s]."""

    def __init__(self, hs: float, tp: float) -> None:
        _positive("PiersonMoskowitz", hs=hs, tp=tp)
        self.hs, self.tp = float(hs), float(tp)

    def __call__(self, omega) -> np.ndarray:
        return pierson_moskowitz(omega, self.hs, self.tp)

    def __repr__(self) -> str:
        return f"PiersonMoskowitz(hs={self.hs:g}, tp={self.tp:g})"


class JONSWAP(Spectrum):
    """JONSWAP spectrum; ``gamma`` a number (default 3.3) or ``"dnv"`` (DNV's Tp/sqrt(Hs) rule)."""

    def __init__(self, hs: float, tp: float, gamma: float | str = 3.3, sigma_a: float = 0.07,
                 sigma_b: float = 0.09) -> None:
        _positive("JONSWAP", hs=hs, tp=tp)
        self.hs, self.tp = float(hs), float(tp)
        self.gamma = dnv_gamma(hs, tp) if isinstance(gamma, str) and gamma.lower() == "dnv" \
            else gamma
        self.sigma_a, self.sigma_b = sigma_a, sigma_b
        jonswap(self.omega_p, hs, tp, self.gamma, sigma_a, sigma_b)  # validates gamma, sigma

    def __call__(self, omega) -> np.ndarray:
        return jonswap(omega, self.hs, self.tp, self.gamma, self.sigma_a, self.sigma_b)

    def __repr__(self) -> str:
        return f"JONSWAP(hs={self.hs:g}, tp={self.tp:g}, gamma={self.gamma:g})"
