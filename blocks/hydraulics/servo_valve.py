"""Servo valve: a 4/3 spool whose position follows the command through 2nd-order dynamics.

Spool dynamics (the seed, Paper III eq. 34 / Paper IV eq. 14):

.. math:: \\frac{X(s)}{U(s)} = G(s) = \\frac{\\omega_n^2}{s^2 + 2\\zeta\\omega_n s + \\omega_n^2},
          \\qquad u = \\mathrm{clip}(i / i_{rated},\\ -1,\\ 1)

with i the command (a current or a voltage, in the unit of the port) and x the
relative spool position; the flows are those of :class:`~blocks.hydraulics.valves.SpoolValve43`
at spool position x (the same function, :func:`~blocks.hydraulics.valves.spool_edge_flows`).

Identification from the catalogue Bode diagram
----------------------------------------------
Manufacturers publish the valve's frequency response (amplitude ratio in dB and
phase lag in degrees versus frequency, for one command amplitude, e.g. +-25 %).
The seed (Paper IV, after Virvalo) reads :math:`\\omega_n` at the -90 degree phase
point and the damping from the amplitude ratio there:

.. math:: \\omega_n = \\omega_{-90}, \\qquad \\zeta = \\frac{1}{2\\,|G(j\\omega_{-90})|}

(:func:`bode_minus_90_estimate`).  :func:`identify_from_bode` uses that as the
starting point of a least-squares fit over all the points
(``scipy.optimize.least_squares``), minimising the complex logarithmic error

.. math:: \\sum_k \\Big(\\ln|G(j\\omega_k)| - \\ln|G_k|\\Big)^2
          + \\Big(\\arg G(j\\omega_k) - \\varphi_k\\Big)^2

(dB converted to nepers, degrees to radians, so gain and phase errors weigh alike).
A second-order model fits a real valve only up to about its -90 degree frequency;
higher-order lags and the amplitude dependence of catalogue curves (a smaller
command amplitude gives a faster valve) are outside the model: fit the curve of
the amplitude you operate at, and limit ``freqs_hz`` to the band you need.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from cosim.block import Block
from cosim.codegen.model import CModel, c_float
from cosim.errors import ParameterError, UnitError
from cosim.params import NON_NEGATIVE, POSITIVE
from cosim.units import parse_unit

from . import _cforms
from .fluid import MINERAL_OIL, Fluid
from .orifice import DEFAULT_TRANSITION_PA, check_positive
from .valves import port_flows, spool_edge_flows, spool_parameters


def bode_second_order(freqs_hz: Any, natural_frequency_hz: float,
                      damping: float) -> tuple[np.ndarray, np.ndarray]:
    """(gain_db, phase_deg) of :math:`G(s)` at ``freqs_hz``; the phase lies in (-180, 0]."""
    r = np.asarray(freqs_hz, dtype=float) / natural_frequency_hz
    re, im = 1.0 - r * r, 2.0 * damping * r
    gain_db = -10.0 * np.log10(re * re + im * im)
    phase_deg = -np.degrees(np.arctan2(im, re))
    return gain_db, phase_deg


def _bode_arrays(freqs_hz: Any, gain_db: Any,
                 phase_deg: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    f, g, ph = (np.asarray(a, dtype=float).reshape(-1) for a in (freqs_hz, gain_db, phase_deg))
    if not f.size == g.size == ph.size:
        raise ParameterError(f"identify_from_bode: freqs_hz, gain_db and phase_deg need the "
                             f"same length, got {f.size}, {g.size}, {ph.size}")
    if f.size < 3:
        raise ParameterError(f"identify_from_bode: need at least 3 points, got {f.size}")
    if not (np.all(np.isfinite(f)) and np.all(f > 0)):
        raise ParameterError("identify_from_bode: freqs_hz must be finite and > 0")
    if not (np.all(np.isfinite(g)) and np.all(np.isfinite(ph))):
        raise ParameterError("identify_from_bode: gain_db and phase_deg must be finite")
    if np.any(ph >= 90.0) or np.any(ph <= -360.0):
        raise ParameterError("identify_from_bode: phase_deg is the phase lag as a negative "
                             "angle (-90 at the natural frequency); values must lie in "
                             "(-360, 90) degrees")
    order = np.argsort(f)
    return f[order], g[order], ph[order]


def bode_minus_90_estimate(freqs_hz: Any, gain_db: Any,
                           phase_deg: Any) -> tuple[float, float] | None:
    """The seed's graphical identification: (f_n [Hz], zeta) at the -90 degree phase point.

    The crossing is interpolated linearly in log frequency (phase and gain);
    ``None`` if the phase data do not cross -90 degrees.
    """
    f, g, ph = _bode_arrays(freqs_hz, gain_db, phase_deg)
    for k in range(f.size - 1):
        if ph[k] >= -90.0 >= ph[k + 1] and ph[k] != ph[k + 1]:
            w = (ph[k] + 90.0) / (ph[k] - ph[k + 1])
            lf = (1 - w) * math.log(f[k]) + w * math.log(f[k + 1])
            g90 = (1 - w) * g[k] + w * g[k + 1]
            return math.exp(lf), float(1.0 / (2.0 * 10.0 ** (g90 / 20.0)))
    return None


@dataclass(frozen=True)
class BodeFit:
    """Result of :func:`identify_from_bode`."""

    natural_frequency_hz: float
    damping: float
    rms_gain_db: float
    rms_phase_deg: float
    initial_guess: tuple[float, float]

    @property
    def natural_frequency_rad_s(self) -> float:
        return 2.0 * math.pi * self.natural_frequency_hz


def identify_from_bode(freqs_hz: Any, gain_db: Any, phase_deg: Any) -> BodeFit:
    """Fit :math:`\\omega_n` and :math:`\\zeta` of :math:`G(s)` to catalogue Bode data.

    Parameters
    ----------
    freqs_hz : array
        Frequencies [Hz] (any order, > 0).
    gain_db : array
        Amplitude ratio [dB], 0 dB at low frequency (the model's static gain is 1).
    phase_deg : array
        Phase [deg], lag negative (-90 at the natural frequency).

    Returns a :class:`BodeFit` (least squares on the complex log error, module
    docstring; the fit is over log(f_n) and log(zeta), so both stay positive).
    The start is :func:`bode_minus_90_estimate` when the phase crosses -90 degrees,
    else the best point of a coarse grid.
    """
    f, g, ph = _bode_arrays(freqs_hz, gain_db, phase_deg)
    nep, rad = g * math.log(10.0) / 20.0, np.radians(ph)

    def residuals(z: np.ndarray) -> np.ndarray:
        gm, pm = bode_second_order(f, math.exp(z[0]), math.exp(z[1]))
        return np.concatenate([gm * math.log(10.0) / 20.0 - nep, np.radians(pm) - rad])

    guess = bode_minus_90_estimate(f, g, ph)
    if guess is None or not (guess[1] > 0 and math.isfinite(guess[1])):
        grid = [(fn, z) for fn in np.geomspace(f[0] / 10, f[-1] * 10, 41)
                for z in np.geomspace(0.05, 3.0, 25)]
        guess = min(grid, key=lambda c: float(np.sum(residuals(np.log(c)) ** 2)))
        guess = (float(guess[0]), float(guess[1]))
    sol = least_squares(residuals, np.log(guess), method="lm", xtol=1e-14, ftol=1e-14,
                        gtol=1e-14)
    fn, zeta = math.exp(sol.x[0]), math.exp(sol.x[1])
    gm, pm = bode_second_order(f, fn, zeta)
    return BodeFit(fn, zeta, float(np.sqrt(np.mean((gm - g) ** 2))),
                   float(np.sqrt(np.mean((pm - ph) ** 2))), guess)


class ServoValve(Block):
    """Servo (proportional) valve: 4/3 spool flows with 2nd-order spool dynamics.

    .. math::

        u &= \\mathrm{clip}(i / i_{rated},\\ -1,\\ 1) \\\\
        \\ddot x &= \\omega_n^2 (u - x) - 2 \\zeta \\omega_n \\dot x \\\\
        (q_A, q_B, q_P, q_T) &= \\text{SpoolValve43 flows at spool position } x

    (module docstring; the 4/3 flow map, its lap, leakage and laminar
    regularization are exactly those of :class:`~blocks.hydraulics.valves.SpoolValve43`,
    which clips x to [-1, 1]: the spool's end stops act on the flows, while the
    spool state itself follows the linear model, which can overshoot 1 for
    :math:`\\zeta < 1`).  Because x is a state, the flows do not feed through
    from the command, only from the pressures: the valve breaks algebraic loops
    through a pressure or force controller.

    Ports
    -----
    in   p_P        scalar [Pa]            supply pressure
    in   p_T        scalar [Pa]            tank pressure
    in   p_A        scalar [Pa]            line A pressure
    in   p_B        scalar [Pa]            line B pressure
    in   command    scalar [command_unit]  current or voltage (rated value: full opening)
    out  q_A        scalar [m^3/s]         flow into line A; reads the four pressures
    out  q_B        scalar [m^3/s]         flow into line B; reads the four pressures
    out  q_P        scalar [m^3/s]         flow drawn from the supply; reads the pressures
    out  q_T        scalar [m^3/s]         flow returned to tank; reads the pressures
    out  spool      scalar [1]             spool position x (unclipped); state only

    Parameters
    ----------
    natural_frequency_hz, damping : float
        :math:`f_n = \\omega_n / 2\\pi` and :math:`\\zeta` (see :func:`identify_from_bode`).
    rated_command : float
        Command giving full opening (e.g. 10e-3 with ``command_unit="A"``, or 10 with "V").
    command_unit : str
        Unit of the command port (default "1": a relative command); sources in
        other compatible units are converted on the wire.
    area_max_m2, cd, fluid : float, float, Fluid
        Fully open edge area [m^2], discharge coefficient and fluid; or
    q_nominal_m3_s, dp_nominal_pa : float
        The rated flow per edge [m^3/s] at rated command and its pressure drop [Pa]
        (catalogues quote it at 35 bar per edge, 70 bar valve drop).
    lap, transition_pressure_pa, leakage_m3_s_pa : float
        As :class:`~blocks.hydraulics.valves.SpoolValve43`.
    spool0 : float
        Initial spool position (velocity 0).
    """

    argument_checks = {"q_nominal_m3_s": POSITIVE, "dp_nominal_pa": POSITIVE,
                       "area_max_m2": POSITIVE, "cd": POSITIVE,
                       "leakage_m3_s_pa": NON_NEGATIVE, "transition_pressure_pa": POSITIVE}

    def __init__(self, name: str, *, natural_frequency_hz: float, damping: float,
                 rated_command: float = 1.0, command_unit: str = "1",
                 area_max_m2: float | None = None, cd: float = 0.67, fluid: Fluid = MINERAL_OIL,
                 q_nominal_m3_s: float | None = None, dp_nominal_pa: float | None = None,
                 lap: float = 0.0, transition_pressure_pa: float = DEFAULT_TRANSITION_PA,
                 leakage_m3_s_pa: float = 0.0, spool0: float = 0.0) -> None:
        super().__init__(name)
        own = f"ServoValve '{name}'"
        check_positive(own, natural_frequency_hz=natural_frequency_hz, damping=damping,
                       rated_command=rated_command)
        try:
            parse_unit(command_unit)
        except UnitError as exc:
            raise ParameterError(f"{own}: command_unit {command_unit!r}: {exc}") from None
        if not (math.isfinite(spool0) and abs(spool0) <= 1.0):
            raise ParameterError(f"{own}: spool0 must lie in [-1, 1], got {spool0!r}")
        self.k, self.lap, self.dp_tr, self.g = spool_parameters(
            own, area_max_m2=area_max_m2, cd=cd, fluid=fluid, q_nominal_m3_s=q_nominal_m3_s,
            dp_nominal_pa=dp_nominal_pa, lap=lap, transition_pressure_pa=transition_pressure_pa,
            leakage_m3_s_pa=leakage_m3_s_pa)
        self.wn = 2.0 * math.pi * float(natural_frequency_hz)
        self.zeta, self.i_rated = float(damping), float(rated_command)
        self.p_P = self.declare_input("p_P", unit="Pa")
        self.p_T = self.declare_input("p_T", unit="Pa")
        self.p_A = self.declare_input("p_A", unit="Pa")
        self.p_B = self.declare_input("p_B", unit="Pa")
        self.command = self.declare_input("command", unit=command_unit)
        self.x_s = self.declare_continuous_state("spool", np.array([float(spool0), 0.0]))
        deps = (self.p_P, self.p_T, self.p_A, self.p_B)
        self.q_A, self.q_B, self.q_P, self.q_T = self.declare_outputs(
            [("q_A", "m^3/s"), ("q_B", "m^3/s"), ("q_P", "m^3/s"), ("q_T", "m^3/s")],
            self.flows, depends_on=deps)
        self.spool = self.declare_output("spool", lambda ctx: float(ctx.state(self.x_s)[0]),
                                         unit="1", depends_on=())

    @classmethod
    def from_bode(cls, name: str, freqs_hz: Any, gain_db: Any, phase_deg: Any,
                  **kw: Any) -> ServoValve:
        """A servo valve whose f_n and zeta are fitted to catalogue Bode data."""
        fit = identify_from_bode(freqs_hz, gain_db, phase_deg)
        return cls(name, natural_frequency_hz=fit.natural_frequency_hz, damping=fit.damping,
                   **kw)

    def spool_command(self, ctx: Any) -> float:
        """u = clip(command / rated_command, -1, 1)."""
        return min(max(ctx.input(self.command) / self.i_rated, -1.0), 1.0)

    def flows(self, ctx: Any) -> tuple[float, float, float, float]:
        """(q_A, q_B, q_P, q_T) at the current spool position."""
        x = float(ctx.state(self.x_s)[0])
        return port_flows(spool_edge_flows(
            x, ctx.input(self.p_P), ctx.input(self.p_T), ctx.input(self.p_A),
            ctx.input(self.p_B), self.k, self.lap, self.dp_tr, self.g))

    def derivatives(self, ctx: Any) -> np.ndarray:
        x, v = ctx.state(self.x_s)
        wn = self.wn
        return np.array([v, wn * wn * (self.spool_command(ctx) - x) - 2.0 * self.zeta * wn * v])

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`flows` (the 4/3 edge flows at the spool state) and
        :meth:`derivatives` (with :meth:`spool_command`)."""
        f = c_float
        x, v = cg.x(self.x_s, 0), cg.x(self.x_s, 1)
        edges = _cforms.spool_edges(cg, x, cg.u(self.p_P), cg.u(self.p_T), cg.u(self.p_A),
                                    cg.u(self.p_B), self.k, self.lap, self.dp_tr, self.g)
        outputs = {p.name: _cforms.block(edges + f"{cg.y(p)} = {_cforms.PORT_FLOWS[p.name]};")
                   for p in (self.q_A, self.q_B, self.q_P, self.q_T)}
        outputs["spool"] = f"{cg.y(self.spool)} = {x};"
        wn = f(self.wn)
        der = ("double u, xs = " + x + ", vs = " + v + ";\n"
               + _cforms.clip(f"{cg.u(self.command)} / {f(self.i_rated)}", "(-1.0)", "1.0", "u")
               + f"\n{cg.dx(self.x_s, 0)} = vs;\n"
               f"{cg.dx(self.x_s, 1)} = {wn} * {wn} * (u - xs) - 2.0 * {f(self.zeta)} * {wn} "
               "* vs;")
        return CModel(outputs=outputs, derivatives=der)
