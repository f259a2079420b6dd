"""Roll winding law and the nip line contact between the paper roll and the reel drum.

Everything here follows the seed (Korkealaakso 2009, Papers III eqs. 25-30 and IV eqs. 6-11;
research/seed-001.md sec. 2.5 and 2.9); the seed gives the formulas but no numbers.

Winding law (area balance of the wound web, seed eq. 25)
--------------------------------------------------------

.. math:: d(\\ell) = \\sqrt{d_0^2 + \\frac{4\\tau}{\\pi}\\,\\ell}, \\qquad
          \\ell(t) = \\int_0^t v\\,dt, \\qquad
          \\dot d = \\frac{2 \\tau v}{\\pi d}

with :math:`\\tau` the average thickness of one wound layer (web thickness including the
air between layers), :math:`d_0` the diameter at :math:`\\ell = 0` and v the web speed.
The wound mass grows as :math:`\\dot m = \\rho_r W \\tau v` (:math:`\\rho_r` the wound
roll's density, W the roll width).

Hertz line contact (elastic roll on a rigid drum, seed eqs. 26-29)
------------------------------------------------------------------
For a line load q [N/m] (the *nip load*; the seed's :math:`F_c`, which must be a force per
unit length for the formulas to be dimensionally consistent):

.. math::

    \\delta(q) = q\\,\\frac{1 - \\nu^2}{\\pi E}\\Big[2 \\ln\\frac{2 d}{a} - 1\\Big], \\qquad
    a = \\sqrt{\\frac{2 d^* q}{\\pi E^*}}, \\qquad
    d^* = \\Big(\\frac{1}{d} + \\frac{1}{d_1}\\Big)^{-1}, \\qquad E^* = \\frac{E}{1 - \\nu^2}

(a the semi-contact width, d and :math:`d_1` the roll and drum diameters).  The relation is
implicit in q; the seed replaces it by an explicit power law fitted to it.

Real-time contact law (seed eq. 30, damping sign corrected)
-----------------------------------------------------------

.. math::

    q(\\delta, \\dot\\delta) = \\max\\Big(0,\\ k_a \\delta^e
        + c_{max}\\, S\\big(\\delta / \\delta_{c}\\big)\\, \\dot\\delta\\Big)
        \\quad (\\delta > 0), \\qquad q = 0 \\quad (\\delta \\le 0)

with :math:`\\delta = x_0 - x` the penetration (:math:`x_0 = (d + d_1)/2`, x the centre
distance) and :math:`S(s) = 3s^2 - 2s^3` on [0, 1] (1 beyond) the seed's cubic blend
:math:`\\Delta^2(3 - 2\\Delta)`.  The seed prints :math:`+c\\,\\dot x`; with x the centre
distance that damping would feed energy in, so the dissipative form
:math:`+c\\,\\dot\\delta = -c\\,\\dot x` (plus the rheonomic :math:`\\dot x_0`) is used.
The ``max(0, .)`` (a contact never pulls) is our addition; the seed has none.
:func:`fit_power_law` gives :math:`k_a` and e by least squares on
:math:`\\ln q = \\ln k_a + e \\ln\\delta` over a load range.

Limitations: the fit is made once, at one roll diameter (the Hertz penetration changes with d by
about 0.5 % per 10 cm of diameter at 4000 N/m, E = 50 MPa); paper-roll E and nu are not in the
seed (chosen values are in :mod:`blocks.paper.system`); no nip-induced in-roll stresses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cosim.errors import ParameterError


def _positive(owner: str, **values: float) -> None:
    for label, v in values.items():
        try:
            ok = float(v) > 0 and math.isfinite(float(v))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ParameterError(f"{owner}: {label} must be finite and > 0, got {v!r}")


# ------------------------------------------------------------------ winding
def roll_diameter(wound_length_m: float, d0_m: float, thickness_m: float) -> float:
    """Roll diameter [m] after winding ``wound_length_m`` of web (seed eq. 25)."""
    return math.sqrt(d0_m * d0_m + 4.0 * thickness_m * wound_length_m / math.pi)


def diameter_rate(diameter_m: float, web_speed_m_s: float, thickness_m: float) -> float:
    """:math:`\\dot d = 2 \\tau v / (\\pi d)` [m/s]."""
    return 2.0 * thickness_m * web_speed_m_s / (math.pi * diameter_m)


# ------------------------------------------------------------------- Hertz
def hertz_half_width(q_n_m: float, d_m: float, d1_m: float, e_pa: float, nu: float) -> float:
    """Semi-contact width a [m] of the line contact at line load q [N/m] (seed eq. 27)."""
    d_star = 1.0 / (1.0 / d_m + 1.0 / d1_m)
    e_star = e_pa / (1.0 - nu * nu)
    return math.sqrt(2.0 * d_star * q_n_m / (math.pi * e_star))


def hertz_penetration(q_n_m: float, d_m: float, d1_m: float, e_pa: float, nu: float) -> float:
    """Penetration :math:`\\delta` [m] at line load q [N/m] (seed eq. 26); 0 for q <= 0."""
    if q_n_m <= 0.0:
        return 0.0
    a = hertz_half_width(q_n_m, d_m, d1_m, e_pa, nu)
    return q_n_m * (1.0 - nu * nu) / (math.pi * e_pa) * (2.0 * math.log(2.0 * d_m / a) - 1.0)


@dataclass(frozen=True)
class PowerLawFit:
    """:math:`q = k_a \\delta^e` fitted to the Hertz curve (:func:`fit_power_law`).

    ``max_rel_error`` is the largest relative error of the fitted q against the Hertz q
    at the fit points.
    """

    k_a: float
    exponent: float
    max_rel_error: float
    q_range_n_m: tuple[float, float]


def fit_power_law(d_m: float, d1_m: float, e_pa: float, nu: float,
                  q_range_n_m: tuple[float, float], n_points: int = 41) -> PowerLawFit:
    """Least-squares fit of :math:`\\ln q = \\ln k_a + e\\ln\\delta` to the Hertz relation.

    The points are geometrically spaced loads in ``q_range_n_m``; :math:`\\delta` comes
    from :func:`hertz_penetration` (explicit in q, so no root finding is needed).
    """
    own = "fit_power_law"
    _positive(own, d_m=d_m, d1_m=d1_m, e_pa=e_pa)
    if not 0.0 <= nu < 0.5:
        raise ParameterError(f"{own}: nu must lie in [0, 0.5), got {nu!r}")
    q_lo, q_hi = (float(v) for v in q_range_n_m)
    if not 0.0 < q_lo < q_hi:
        raise ParameterError(f"{own}: q_range_n_m must be (low, high) with 0 < low < high, "
                             f"got {q_range_n_m!r}")
    q = np.geomspace(q_lo, q_hi, int(n_points))
    delta = np.array([hertz_penetration(v, d_m, d1_m, e_pa, nu) for v in q])
    if np.any(delta <= 0.0):
        raise ParameterError(f"{own}: the Hertz penetration is not positive over the range "
                             f"{q_range_n_m!r} N/m (the contact is too narrow: 2d/a < e^0.5)")
    e, ln_k = np.polyfit(np.log(delta), np.log(q), 1)
    k_a = math.exp(ln_k)
    err = float(np.max(np.abs(k_a * delta ** e / q - 1.0)))
    return PowerLawFit(k_a, float(e), err, (q_lo, q_hi))


# ------------------------------------------------------------ contact law
def smoothstep(s: float) -> float:
    """:math:`S(s) = 3s^2 - 2s^3` on [0, 1], 0 below, 1 above (the seed's damping blend)."""
    if s <= 0.0:
        return 0.0
    if s >= 1.0:
        return 1.0
    return s * s * (3.0 - 2.0 * s)


@dataclass(frozen=True)
class NipContactLaw:
    """The seed's explicit nip law :math:`q(\\delta, \\dot\\delta)` (module docstring).

    Parameters
    ----------
    k_a : float
        Stiffness coefficient [N/m per m^e] (line load at unit penetration).
    exponent : float
        e (> 0).
    damping_n_s_m2 : float
        :math:`c_{max}` [N s/m^2] (line load per penetration rate), >= 0.
    damping_depth_m : float
        :math:`\\delta_c`: penetration at which the full damping applies (> 0).
    """

    k_a: float
    exponent: float
    damping_n_s_m2: float
    damping_depth_m: float

    def __post_init__(self) -> None:
        own = "NipContactLaw"
        _positive(own, k_a=self.k_a, exponent=self.exponent,
                  damping_depth_m=self.damping_depth_m)
        if not (self.damping_n_s_m2 >= 0 and math.isfinite(self.damping_n_s_m2)):
            raise ParameterError(f"{own}: damping_n_s_m2 must be finite and >= 0, got "
                                 f"{self.damping_n_s_m2!r}")

    def line_load(self, delta: float, delta_rate: float) -> float:
        """Nip line load q [N/m] at penetration delta [m] and its rate [m/s]."""
        if delta <= 0.0:
            return 0.0
        q = self.k_a * delta ** self.exponent
        if self.damping_n_s_m2:
            q += self.damping_n_s_m2 * smoothstep(delta / self.damping_depth_m) * delta_rate
        return q if q > 0.0 else 0.0

    def penetration(self, q_n_m: float) -> float:
        """Static penetration [m] at line load q (inverse of the spring part)."""
        if q_n_m <= 0.0:
            return 0.0
        return (q_n_m / self.k_a) ** (1.0 / self.exponent)

    def stiffness(self, delta: float) -> float:
        """:math:`dq/d\\delta = e\\,k_a\\,\\delta^{e-1}` [N/m^2] (spring part)."""
        if delta <= 0.0:
            return 0.0
        return self.exponent * self.k_a * delta ** (self.exponent - 1.0)
