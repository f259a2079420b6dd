r"""Brush (Fiala) and linear tyre models.

Same axes, signs and protocol as :class:`~.magic_formula.MagicFormula` (ISO-W:
x forward, y left, z up; :math:`\kappa > 0` driving, :math:`\tan\alpha = V_y/|V_x|`;
forces on the tyre at the contact point).  The stiffnesses are given as positive
magnitudes; the lateral force opposes the slip: :math:`F_y = -C_\alpha\alpha` at small
slip.

Brush model, parabolic pressure (Fiala; Pacejka 2012, sec. 3.2).  With
:math:`M = \mu F_z`, the linear forces :math:`s_x = C_\kappa\kappa`,
:math:`s_y = C_\alpha\tan\alpha`, :math:`s = \sqrt{s_x^2 + s_y^2}` and
:math:`\lambda = s/(3M)` (:math:`= \theta\sigma` of the book):

.. math::

    |F| = M(3\lambda - 3\lambda^2 + \lambda^3)\ (\lambda < 1), \qquad |F| = M\ (\lambda \ge 1)

    F_x = s_x\,g, \quad F_y = -s_y\,g, \quad g = 1 - \lambda + \lambda^2/3\ (\lambda < 1),
    \ g = M/s\ (\lambda \ge 1)

    M_z = -t F_y, \quad t = \frac{a}{3}\frac{(1 - \lambda)^3}{1 - \lambda + \lambda^2/3}
    \ (\lambda < 1),\ 0 \text{ beyond}

so pure side slip gives :math:`F_y = -3\mu F_z\theta\sigma(1 - |\theta\sigma| +
(\theta\sigma)^2/3)`, :math:`\theta = C_\alpha/(3\mu F_z)`, :math:`\sigma = \tan\alpha`, full
sliding from :math:`\tan\alpha_{sl} = 3\mu F_z/C_\alpha`, and the pneumatic trail
:math:`a/3` at small slip (``a`` the half contact length).  The combined-slip form is
exact for an isotropic brush (:math:`C_\kappa = C_\alpha`) and a common approximation
otherwise; it keeps :math:`|F| \le \mu F_z` always.

Linear model: :math:`F_x = C_\kappa\kappa`, :math:`F_y = -C_\alpha\alpha`,
:math:`M_z = -t_p F_y`, optionally saturated on the friction circle
:math:`|F| \le \mu F_z` (the vector is scaled, its direction kept).

Both: rolling resistance :math:`M_y = -\mathrm{sgn}(V_x)\,w\,f_r F_z R` (``w`` the
low-speed weight of :mod:`.magic_formula`), :math:`M_x = 0`, camber ignored, zero
forces for :math:`F_z \le 0`, constant (load-independent) stiffnesses.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.errors import ParameterError

__all__ = ["BrushTyre", "LinearTyre", "low_speed_weight"]


def low_speed_weight(vx: Any, v_low: float) -> Any:
    """:math:`w = (1 - \\cos(\\pi|V_x|/V_{low}))/2` below ``v_low``, 1 above (C^1)."""
    if np.ndim(vx) == 0 and not isinstance(vx, np.ndarray):
        av = abs(float(vx))
        return 1.0 if av >= v_low else 0.5 * (1.0 - math.cos(math.pi * av / v_low))
    av = np.abs(np.asarray(vx, dtype=float))
    return np.where(av >= v_low, 1.0, 0.5 * (1.0 - np.cos(np.pi * np.minimum(av / v_low, 1.0))))


def _scalar(*args: Any) -> bool:
    return all(np.ndim(a) == 0 and not isinstance(a, np.ndarray) for a in args)


class _Common:
    """Radius, rolling resistance, relaxation lengths and low-speed threshold."""

    def _init_common(self, owner: str, radius_m: float | None, rolling_resistance: float,
                     relaxation_lengths_m: tuple | None, v_low_m_s: float) -> None:
        if radius_m is not None and not radius_m > 0:
            raise ParameterError(f"{owner}: radius_m must be > 0, got {radius_m!r}")
        if not rolling_resistance >= 0:
            raise ParameterError(f"{owner}: rolling_resistance must be >= 0, got "
                                 f"{rolling_resistance!r}")
        if rolling_resistance > 0 and radius_m is None:
            raise ParameterError(f"{owner}: rolling_resistance needs radius_m (My = -f_r Fz R)")
        if relaxation_lengths_m is not None:
            sk, sa = relaxation_lengths_m
            if not (sk > 0 and sa > 0):
                raise ParameterError(f"{owner}: relaxation_lengths_m must be > 0, got "
                                     f"{relaxation_lengths_m!r}")
            relaxation_lengths_m = (float(sk), float(sa))
        if not v_low_m_s > 0:
            raise ParameterError(f"{owner}: v_low_m_s must be > 0, got {v_low_m_s!r}")
        self.radius = None if radius_m is None else float(radius_m)
        self.f_r = float(rolling_resistance)
        self._sigma = relaxation_lengths_m
        self.v_low = float(v_low_m_s)

    def relaxation_lengths(self, fz: Any, gamma: Any = 0.0) -> tuple | None:
        """``(sigma_kappa, sigma_alpha)`` [m] as given (load-independent), or ``None``."""
        return self._sigma

    def rolling_radius(self, fz: Any, omega: Any = 0.0) -> float | None:
        """The radius given (load-independent), or ``None``."""
        return self.radius

    def _my(self, fz: Any, vx: Any) -> Any:
        if self.f_r == 0.0:
            return 0.0 * fz
        if vx is None:
            return -self.f_r * fz * self.radius
        s = np.sign(vx) if not _scalar(vx) else (1.0 if vx >= 0 else -1.0)
        return -s * low_speed_weight(vx, self.v_low) * self.f_r * fz * self.radius


class BrushTyre(_Common):
    """Brush tyre with parabolic pressure distribution (Fiala); see module docstring.

    Parameters
    ----------
    cornering_stiffness_n_per_rad : float
        :math:`C_\\alpha > 0`, slope of :math:`|F_y|` at zero slip angle.
    slip_stiffness_n : float
        :math:`C_\\kappa > 0`, slope of :math:`F_x` at zero slip ratio.
    mu : float
        Friction coefficient.
    contact_half_length_m : float
        ``a``; the pneumatic trail at small slip is ``a/3`` (0: no ``Mz``).
    radius_m, rolling_resistance, relaxation_lengths_m, v_low_m_s
        Rolling radius (for ``omega`` inputs and ``My``), :math:`f_r`,
        ``(sigma_kappa, sigma_alpha)`` for the transient block, low-speed threshold.
    """

    def __init__(self, *, cornering_stiffness_n_per_rad: float, slip_stiffness_n: float,
                 mu: float, contact_half_length_m: float = 0.0, radius_m: float | None = None,
                 rolling_resistance: float = 0.0, relaxation_lengths_m: tuple | None = None,
                 v_low_m_s: float = 1.0) -> None:
        owner = "BrushTyre"
        for label, v in (("cornering_stiffness_n_per_rad", cornering_stiffness_n_per_rad),
                         ("slip_stiffness_n", slip_stiffness_n), ("mu", mu)):
            if not v > 0:
                raise ParameterError(f"{owner}: {label} must be > 0, got {v!r}")
        if not contact_half_length_m >= 0:
            raise ParameterError(f"{owner}: contact_half_length_m must be >= 0")
        self.c_alpha, self.c_kappa = float(cornering_stiffness_n_per_rad), float(slip_stiffness_n)
        self.mu, self.a = float(mu), float(contact_half_length_m)
        self._init_common(owner, radius_m, rolling_resistance, relaxation_lengths_m, v_low_m_s)

    def __repr__(self) -> str:
        return (f"<BrushTyre C_alpha={self.c_alpha:g} N/rad C_kappa={self.c_kappa:g} N "
                f"mu={self.mu:g}>")

    def critical_slip_angle(self, fz: Any, mu_scale: float = 1.0) -> Any:
        """Slip angle [rad] from which the whole contact slides (pure side slip)."""
        return np.arctan(3.0 * self.mu * mu_scale * np.asarray(fz, dtype=float) / self.c_alpha)

    def critical_slip_ratio(self, fz: Any, mu_scale: float = 1.0) -> Any:
        """Slip ratio from which the whole contact slides (pure longitudinal slip)."""
        return 3.0 * self.mu * mu_scale * np.asarray(fz, dtype=float) / self.c_kappa

    def forces(self, kappa: Any, alpha: Any, gamma: Any, fz: Any, vx: Any = None,
               mu_scale: float = 1.0) -> tuple:
        """``(fx, fy, mx, my, mz)`` (the protocol of :class:`~.tyres.Tyre`)."""
        if _scalar(kappa, alpha, fz):
            fz = float(fz)
            m = self.mu * mu_scale * fz
            if m <= 0.0:
                return 0.0, 0.0, 0.0, 0.0, 0.0
            sx, sy = self.c_kappa * float(kappa), self.c_alpha * math.tan(float(alpha))
            s = math.hypot(sx, sy)
            lam = s / (3.0 * m)
            if lam < 1.0:
                g = 1.0 - lam + lam * lam / 3.0
                t = self.a / 3.0 * (1.0 - lam) ** 3 / g
            else:
                g, t = m / s, 0.0
            fx, fy = sx * g, -sy * g
            return fx, fy, 0.0, self._my(fz, vx), -t * fy
        kappa, alpha, fz = np.broadcast_arrays(*(np.asarray(v, dtype=float)
                                                 for v in (kappa, alpha, fz)))
        m = self.mu * mu_scale * np.maximum(fz, 0.0)
        sx, sy = self.c_kappa * kappa, self.c_alpha * np.tan(alpha)
        s = np.hypot(sx, sy)
        on = m > 0.0
        lam = np.where(on, s / (3.0 * np.where(on, m, 1.0)), np.inf)
        adh = lam < 1.0
        lam_a = np.where(adh, lam, 0.0)
        g_adh = 1.0 - lam_a + lam_a * lam_a / 3.0
        g = np.where(adh, g_adh, np.where(on, m / np.where(s > 0, s, 1.0), 0.0))
        t = np.where(adh, self.a / 3.0 * (1.0 - lam_a) ** 3 / g_adh, 0.0)
        fx, fy = sx * g, -sy * g
        return fx, fy, 0.0 * fx, self._my(np.maximum(fz, 0.0), vx) + 0.0 * fx, -t * fy


class LinearTyre(_Common):
    """Linear tyre, optionally saturated on the friction circle; see module docstring.

    Parameters
    ----------
    cornering_stiffness_n_per_rad, slip_stiffness_n : float
        :math:`C_\\alpha, C_\\kappa > 0`.
    mu : float, optional
        Friction coefficient of the saturation :math:`|F| \\le \\mu F_z`; ``None``: no limit.
    pneumatic_trail_m : float
        :math:`t_p`, ``Mz = -t_p Fy``.
    radius_m, rolling_resistance, relaxation_lengths_m, v_low_m_s
        As for :class:`BrushTyre`.
    """

    def __init__(self, *, cornering_stiffness_n_per_rad: float, slip_stiffness_n: float,
                 mu: float | None = None, pneumatic_trail_m: float = 0.0,
                 radius_m: float | None = None, rolling_resistance: float = 0.0,
                 relaxation_lengths_m: tuple | None = None, v_low_m_s: float = 1.0) -> None:
        owner = "LinearTyre"
        for label, v in (("cornering_stiffness_n_per_rad", cornering_stiffness_n_per_rad),
                         ("slip_stiffness_n", slip_stiffness_n)):
            if not v > 0:
                raise ParameterError(f"{owner}: {label} must be > 0, got {v!r}")
        if mu is not None and not mu > 0:
            raise ParameterError(f"{owner}: mu must be > 0 or None, got {mu!r}")
        self.c_alpha, self.c_kappa = float(cornering_stiffness_n_per_rad), float(slip_stiffness_n)
        self.mu = None if mu is None else float(mu)
        self.trail = float(pneumatic_trail_m)
        self._init_common(owner, radius_m, rolling_resistance, relaxation_lengths_m, v_low_m_s)

    def __repr__(self) -> str:
        return (f"<LinearTyre C_alpha={self.c_alpha:g} N/rad C_kappa={self.c_kappa:g} N "
                f"mu={self.mu}>")

    def forces(self, kappa: Any, alpha: Any, gamma: Any, fz: Any, vx: Any = None,
               mu_scale: float = 1.0) -> tuple:
        """``(fx, fy, mx, my, mz)`` (the protocol of :class:`~.tyres.Tyre`)."""
        if _scalar(kappa, alpha, fz):
            fz = float(fz)
            if fz <= 0.0:
                return 0.0, 0.0, 0.0, 0.0, 0.0
            fx, fy = self.c_kappa * float(kappa), -self.c_alpha * float(alpha)
            if self.mu is not None:
                m, f = self.mu * mu_scale * fz, math.hypot(fx, fy)
                if f > m:
                    fx, fy = fx * m / f, fy * m / f
            return fx, fy, 0.0, self._my(fz, vx), -self.trail * fy
        kappa, alpha, fz = np.broadcast_arrays(*(np.asarray(v, dtype=float)
                                                 for v in (kappa, alpha, fz)))
        on = fz > 0.0
        fx = np.where(on, self.c_kappa * kappa, 0.0)
        fy = np.where(on, -self.c_alpha * alpha, 0.0)
        if self.mu is not None:
            m, f = self.mu * mu_scale * np.maximum(fz, 0.0), np.hypot(fx, fy)
            k = np.where(f > m, m / np.where(f > 0, f, 1.0), 1.0)
            fx, fy = fx * k, fy * k
        return fx, fy, 0.0 * fx, self._my(np.maximum(fz, 0.0), vx) + 0.0 * fx, -self.trail * fy
