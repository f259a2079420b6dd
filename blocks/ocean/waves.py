r"""Linear (Airy) waves: dispersion, regular waves and irregular seas from a spectrum.

Coordinates: global :math:`x, y` horizontal, :math:`z` up from the still water level (SWL),
seabed at :math:`z = -h` (``depth=np.inf``: deep water).  A component of amplitude
:math:`a`, angular frequency :math:`\omega`, wave number :math:`k`, heading :math:`\beta`
(direction of propagation, from the :math:`x` axis) and phase :math:`\varphi` has the phase
:math:`\theta = k(x\cos\beta + y\sin\beta) - \omega t + \varphi` and

.. math::

    \eta &= a\cos\theta, \qquad
    u_h = a\omega\frac{\cosh k(z+h)}{\sinh kh}\cos\theta, \qquad
    w = a\omega\frac{\sinh k(z+h)}{\sinh kh}\sin\theta \\
    \dot u_h &= a\omega^2\frac{\cosh k(z+h)}{\sinh kh}\sin\theta, \qquad
    \dot w = -a\omega^2\frac{\sinh k(z+h)}{\sinh kh}\cos\theta, \qquad
    p_d = \rho g a\frac{\cosh k(z+h)}{\cosh kh}\cos\theta

(:math:`u_h` along :math:`(\cos\beta, \sin\beta)`; accelerations are the local
:math:`\partial/\partial t`, the convective term is second order).  An irregular sea is the
sum of such components.  The depth ratios are evaluated in exponential form, stable for
any :math:`kh` and exact in deep water (:math:`e^{kz}`).

Dispersion :math:`\omega^2 = g k\tanh kh` is solved for :math:`x = kh` by Newton's method
from Eckart's guess :math:`x_0 = y/\sqrt{\tanh y}`, :math:`y = \omega^2 h/g` (within 5 %
everywhere), vectorised over :math:`\omega`; converged to machine precision in 3-5
iterations.  Deep water: :math:`k = \omega^2/g`.

Above the still water level (``stretching``):

* ``"extrapolate"`` (default): the linear formulas are evaluated as they are up to the
  instantaneous surface :math:`\eta` (so at a crest the kinematics are extrapolated above
  SWL), and kinematics and pressure are zero above it (points in air);
* ``"wheeler"``: Wheeler stretching, the formulas are evaluated at
  :math:`z' = h(z-\eta)/(h+\eta)` (deep water :math:`z' = z - \eta`) for
  :math:`z \le \eta`, zero above;
* ``"vertical"``: constant (vertical) stretching, :math:`z' = \min(z, 0)` for
  :math:`z \le \eta`, zero above.

Limitations: linear (first-order) theory only, no second-order or stream-function waves;
no current; the free-surface cut is pointwise (no smoothing), so kinematics jump where
:math:`\eta` crosses a point; equal-frequency discretisation repeats after
:math:`2\pi/\Delta\omega` unless ``jitter=True``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.params import COUNT, Array

__all__ = ["G", "RHO_SEAWATER", "IrregularSea", "LinearWaves", "RegularWave",
           "WaveField", "WaveKinematics", "celerity", "wave_number", "wavelength"]

#: Gravity used by default [m/s^2] (the anchors' dispersion table uses 9.81).
G = 9.81
#: Sea-water density used by default [kg/m^3].
RHO_SEAWATER = 1025.0
_STRETCHING = ("extrapolate", "wheeler", "vertical")


def _check_depth(depth: float, who: str) -> float:
    h = float(depth)
    if not h > 0 or math.isnan(h):
        raise ParameterError(f"{who}: depth must be > 0 m (np.inf for deep water), got {depth!r}")
    return h


def wave_number(omega, depth: float = np.inf, g: float = G) -> np.ndarray:
    """Wave number :math:`k` [rad/m] from :math:`\\omega^2 = g k \\tanh kh` (vectorised)."""
    h = _check_depth(depth, "wave_number")
    w = np.asarray(omega, dtype=float)
    if np.any(~np.isfinite(w)) or np.any(w < 0):
        raise ParameterError("wave_number: omega must be finite and >= 0 rad/s")
    if not g > 0:
        raise ParameterError(f"wave_number: g must be > 0, got {g!r}")
    k_deep = w * w / g
    if math.isinf(h):
        return k_deep if k_deep.ndim else float(k_deep)
    y = k_deep * h
    x = np.where(y > 0, y / np.sqrt(np.tanh(np.maximum(y, 1e-300))), 0.0)
    for _ in range(50):
        t = np.tanh(x)
        f = x * t - y
        df = t + x * (1.0 - t * t)
        dx = np.where(df > 0, f / np.where(df > 0, df, 1.0), 0.0)
        x = x - dx
        if np.all(np.abs(dx) <= 1e-15 * np.maximum(x, 1e-300)):
            break
    k = x / h
    return k if k.ndim else float(k)


def wavelength(period, depth: float = np.inf, g: float = G):
    """Wavelength :math:`\\lambda = 2\\pi/k` [m] of a wave of period ``period`` [s]."""
    T = np.asarray(period, dtype=float)
    if np.any(~(T > 0)):
        raise ParameterError(f"wavelength: period must be > 0 s, got {period!r}")
    return 2.0 * np.pi / wave_number(2.0 * np.pi / T, depth, g)


def celerity(period, depth: float = np.inf, g: float = G):
    """Phase speed :math:`c = \\lambda/T` [m/s]."""
    return wavelength(period, depth, g) / np.asarray(period, dtype=float)


@dataclass(frozen=True)
class WaveKinematics:
    """Wave kinematics at P points: ``eta`` (P,) m, ``velocity`` (P,3) m/s,
    ``acceleration`` (P,3) m/s^2, ``pressure`` (P,) Pa (dynamic), ``wet`` (P,) bool."""

    eta: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    pressure: np.ndarray
    wet: np.ndarray


class LinearWaves:
    """A sum of linear wave components (the common base of regular and irregular seas).

    Parameters
    ----------
    omega, amplitude, phase : array_like (N,)
        Angular frequencies [rad/s] (> 0), amplitudes [m] (>= 0), phases [rad].
    heading : float or array_like (N,)
        Direction of propagation [rad] from the x axis.
    depth : float
        Water depth [m]; ``np.inf`` for deep water.
    stretching : {"extrapolate", "wheeler", "vertical"}
        Kinematics above the SWL (module docstring).
    rho, g : float
        Water density [kg/m^3] and gravity [m/s^2].
    """

    def __init__(self, omega, amplitude, phase=0.0, heading=0.0, depth: float = np.inf,
                 stretching: str = "extrapolate", rho: float = RHO_SEAWATER,
                 g: float = G) -> None:
        kind = type(self).__name__
        self.depth = _check_depth(depth, kind)
        w = np.atleast_1d(np.asarray(omega, dtype=float))
        if w.ndim != 1 or w.size == 0 or np.any(~(w > 0)) or np.any(~np.isfinite(w)):
            raise ParameterError(f"{kind}: omega must be a non-empty 1-D array of finite "
                                 "angular frequencies > 0 rad/s")
        n = w.size
        a = np.broadcast_to(np.asarray(amplitude, dtype=float), (n,)).copy()
        if np.any(~(a >= 0)) or np.any(~np.isfinite(a)):
            raise ParameterError(f"{kind}: amplitudes must be finite and >= 0 m")
        if stretching not in _STRETCHING:
            raise ParameterError(f"{kind}: stretching must be one of {_STRETCHING}, "
                                 f"got {stretching!r}")
        if not (rho > 0 and g > 0):
            raise ParameterError(f"{kind}: rho and g must be > 0")
        self.omega, self.amplitude = w, a
        self.phase = np.broadcast_to(np.asarray(phase, dtype=float), (n,)).copy()
        self.heading = np.broadcast_to(np.asarray(heading, dtype=float), (n,)).copy()
        self.stretching, self.rho, self.g = stretching, float(rho), float(g)
        self.k = np.atleast_1d(wave_number(w, self.depth, g))
        self._cb, self._sb = np.cos(self.heading), np.sin(self.heading)
        if math.isinf(self.depth):
            self._e2h = np.zeros(n)
        else:
            self._e2h = np.exp(-2.0 * self.k * self.depth)

    @property
    def n_components(self) -> int:
        return int(self.omega.size)

    @property
    def variance(self) -> float:
        """:math:`\\sum a_n^2/2`: the variance of :math:`\\eta` of this realisation [m^2]."""
        return float(0.5 * np.sum(self.amplitude ** 2))

    def _theta(self, x, y, t: float) -> np.ndarray:
        return (np.multiply.outer(x, self.k * self._cb) + np.multiply.outer(y, self.k * self._sb)
                - self.omega * t + self.phase)

    def elevation(self, points, t: float) -> np.ndarray:
        """Surface elevation :math:`\\eta` [m] at the horizontal positions of ``points``
        ((P,2) or (P,3), or one point) at time ``t`` [s]."""
        p = np.asarray(points, dtype=float)
        single = p.ndim == 1
        p = np.atleast_2d(p)
        eta = np.cos(self._theta(p[:, 0], p[:, 1], t)) @ self.amplitude
        return float(eta[0]) if single else eta

    def _ratios(self, zs: np.ndarray):
        """cosh k(z+h)/sinh kh, sinh k(z+h)/sinh kh, cosh k(z+h)/cosh kh; zs (P,) -> (P,N)."""
        k, e2h = self.k, self._e2h
        ez = np.exp(np.minimum(np.multiply.outer(zs, k), 700.0))
        # exp(-k(z+2h)) = e^{-kz} e^{-2kh}; written with e2h so deep water gives 0 exactly
        em = np.exp(-np.multiply.outer(zs, k)) * e2h if np.any(e2h > 0) else 0.0 * ez
        ch_sh = (ez + em) / (1.0 - e2h)
        sh_sh = (ez - em) / (1.0 - e2h)
        ch_ch = (ez + em) / (1.0 + e2h)
        return ch_sh, sh_sh, ch_ch

    def kinematics(self, points, t: float) -> WaveKinematics:
        """Kinematics at ``points`` (P,3) [m] at time ``t`` [s] (vectorised over points and
        components); a single point (3,) gives arrays of length 1."""
        p = np.atleast_2d(np.asarray(points, dtype=float))
        if p.ndim != 2 or p.shape[1] != 3:
            raise ParameterError(f"{type(self).__name__}.kinematics: points must have shape "
                                 f"(P, 3) [m], got {np.shape(points)}")
        th = self._theta(p[:, 0], p[:, 1], t)
        c, s = np.cos(th), np.sin(th)
        a = self.amplitude
        eta = c @ a
        z = p[:, 2]
        wet = z <= eta
        h = self.depth
        if np.any(z < -h * (1 + 1e-12)):
            raise ParameterError(f"{type(self).__name__}.kinematics: a point lies below the "
                                 f"seabed z = {-h:g} m (lowest z = {z.min():g} m)")
        if self.stretching == "wheeler":
            zs = z - eta if math.isinf(h) else h * (z - eta) / (h + eta)
        elif self.stretching == "vertical":
            zs = np.minimum(z, 0.0)
        else:
            zs = z
        zs = np.where(wet, zs, 0.0)
        ch_sh, sh_sh, ch_ch = self._ratios(zs)
        aw, aw2 = a * self.omega, a * self.omega ** 2
        uh = (ch_sh * c) @ (aw * self._cb), (ch_sh * c) @ (aw * self._sb)
        w = (sh_sh * s) @ aw
        duh = (ch_sh * s) @ (aw2 * self._cb), (ch_sh * s) @ (aw2 * self._sb)
        dw = -(sh_sh * c) @ aw2
        pd = self.rho * self.g * ((ch_ch * c) @ a)
        vel = np.stack([uh[0], uh[1], w], axis=1) * wet[:, None]
        acc = np.stack([duh[0], duh[1], dw], axis=1) * wet[:, None]
        return WaveKinematics(eta, vel, acc, pd * wet, wet)


class RegularWave(LinearWaves):
    """A regular Airy wave of height ``height`` [m] (crest to trough) and period ``period`` [s].

    ``phase`` [rad]: :math:`\\eta = (H/2)\\cos(k x\\cos\\beta + k y\\sin\\beta - \\omega t +
    \\varphi)`.  See :class:`LinearWaves` for the other parameters.
    """

    def __init__(self, height: float, period: float, depth: float = np.inf,
                 heading: float = 0.0, phase: float = 0.0, stretching: str = "extrapolate",
                 rho: float = RHO_SEAWATER, g: float = G) -> None:
        if not (np.isfinite(height) and height >= 0):
            raise ParameterError(f"RegularWave: height must be >= 0 m, got {height!r}")
        if not (np.isfinite(period) and period > 0):
            raise ParameterError(f"RegularWave: period must be > 0 s, got {period!r}")
        super().__init__(2.0 * math.pi / period, 0.5 * height, phase, heading, depth,
                         stretching, rho, g)
        self.height, self.period = float(height), float(period)

    @property
    def wavelength(self) -> float:
        return float(2.0 * math.pi / self.k[0])

    @property
    def celerity(self) -> float:
        return self.wavelength / self.period


class IrregularSea(LinearWaves):
    """An irregular (long-crested) sea: components with random phases from a spectrum.

    Build it with :meth:`from_spectrum`; the constructor takes explicit components (see
    :class:`LinearWaves`).
    """

    @classmethod
    def from_spectrum(cls, spectrum, n_components: int = 200, omega_min: float | None = None,
                      omega_max: float | None = None, method: str = "equal_frequency",
                      seed: int | np.random.Generator | None = 0, jitter: bool = False,
                      heading: float = 0.0, depth: float = np.inf,
                      stretching: str = "extrapolate", rho: float = RHO_SEAWATER,
                      g: float = G) -> IrregularSea:
        """Discretise ``spectrum`` (a callable :math:`S(\\omega)` [m^2 s/rad]) into
        ``n_components`` components with phases uniform in :math:`[0, 2\\pi)` drawn from
        ``numpy.random.default_rng(seed)`` (or the Generator given).

        ``method="equal_frequency"``: bins of width :math:`\\Delta\\omega` on
        ``[omega_min, omega_max]``, :math:`\\omega_n` at the bin centres (or uniformly
        random within the bin with ``jitter=True``, which removes the repeat period
        :math:`2\\pi/\\Delta\\omega`), :math:`a_n = \\sqrt{2 S(\\omega_n)\\Delta\\omega}`.

        ``method="equal_energy"``: bins of equal area :math:`m_0/N` of the spectrum on the
        range, :math:`\\omega_n` where the cumulative area reaches :math:`(n-1/2)/N`,
        :math:`a_n = \\sqrt{2 m_0/N}` (no repeat period).

        Default range: :math:`[0.2\\,\\omega_p, 4\\,\\omega_p]` when the spectrum has an
        ``omega_p`` attribute (holds > 99.5 % of :math:`m_0` for PM and JONSWAP).
        """
        if not (isinstance(n_components, int | np.integer) and n_components >= 1):
            raise ParameterError(f"IrregularSea: n_components must be an integer >= 1, "
                                 f"got {n_components!r}")
        wp = getattr(spectrum, "omega_p", None)
        if omega_min is None or omega_max is None:
            if wp is None:
                raise ParameterError("IrregularSea.from_spectrum: give omega_min and "
                                     "omega_max (the spectrum has no omega_p)")
            omega_min = 0.2 * wp if omega_min is None else omega_min
            omega_max = 4.0 * wp if omega_max is None else omega_max
        if not (0 < omega_min < omega_max < np.inf):
            raise ParameterError(f"IrregularSea: need 0 < omega_min < omega_max, got "
                                 f"{omega_min!r}, {omega_max!r}")
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        n = int(n_components)
        if method == "equal_frequency":
            dw = (omega_max - omega_min) / n
            offs = rng.uniform(0.0, 1.0, n) if jitter else np.full(n, 0.5)
            w = omega_min + (np.arange(n) + offs) * dw
            a = np.sqrt(2.0 * np.asarray(spectrum(w), dtype=float) * dw)
        elif method == "equal_energy":
            grid = np.linspace(omega_min, omega_max, 20001)
            s = np.asarray(spectrum(grid), dtype=float)
            cum = np.concatenate([[0.0], np.cumsum(0.5 * (s[1:] + s[:-1]) * np.diff(grid))])
            m0 = cum[-1]
            w = np.interp((np.arange(n) + 0.5) / n * m0, cum, grid)
            a = np.full(n, math.sqrt(2.0 * m0 / n))
        else:
            raise ParameterError(f"IrregularSea: method must be 'equal_frequency' or "
                                 f"'equal_energy', got {method!r}")
        phase = rng.uniform(0.0, 2.0 * math.pi, n)
        sea = cls(w, a, phase, heading, depth, stretching, rho, g)
        sea.spectrum, sea.method = spectrum, method
        return sea


class WaveField(Block):
    """Source block: wave elevation and kinematics of a :class:`LinearWaves` sea at points.

    With ``points`` (P,3) [m] the points are fixed and the block has no input; with
    ``n_points`` they come in on the ``points`` input.  Equations: module docstring.

    Ports
    -----
    in   points        (P,3) [m]     only with ``n_points`` (moving points)
    out  eta           (P,) [m]     surface elevation above the points
    out  velocity      (P,3) [m/s]   fluid velocity (zero above the surface)
    out  acceleration  (P,3) [m/s^2]  local fluid acceleration
    out  pressure      (P,) [Pa]    dynamic pressure

    Outputs depend on time (and on ``points`` when it is an input).

    Parameters
    ----------
    wave : LinearWaves
        The sea (:class:`RegularWave` or :class:`IrregularSea`).
    points : array_like (P, 3), optional
        Fixed points [m] (global, z up from the still water level).
    n_points : int, optional
        Number of moving points: the ``points`` input instead (give one of the two).
    """

    argument_checks = {"points": Array(), "n_points": COUNT}

    def __init__(self, name: str, wave: LinearWaves, points=None,
                 n_points: int | None = None) -> None:
        super().__init__(name)
        if not isinstance(wave, LinearWaves):
            raise ParameterError(f"WaveField '{name}': wave must be a RegularWave, an "
                                 f"IrregularSea or LinearWaves, got {type(wave).__name__}")
        if (points is None) == (n_points is None):
            raise ParameterError(f"WaveField '{name}': give either fixed points (P,3) [m] or "
                                 "n_points (the points then come in on the 'points' input)")
        self.wave = wave
        if points is not None:
            pts = np.atleast_2d(np.asarray(points, dtype=float))
            if pts.ndim != 2 or pts.shape[1] != 3:
                raise ParameterError(f"WaveField '{name}': points must have shape (P, 3) [m], "
                                     f"got {np.shape(points)}")
            self._points, self.points_in, P = pts, None, pts.shape[0]
            deps: tuple = ()
        else:
            P = int(n_points)
            if P < 1:
                raise ParameterError(f"WaveField '{name}': n_points must be >= 1")
            self._points = None
            self.points_in = self.declare_input("points", shape=(P, 3), unit="m")
            deps = ("points",)
        self.eta, self.velocity, self.acceleration, self.pressure = self.declare_outputs(
            [dict(name="eta", shape=(P,), unit="m"),
             dict(name="velocity", shape=(P, 3), unit="m/s"),
             dict(name="acceleration", shape=(P, 3), unit="m/s^2"),
             dict(name="pressure", shape=(P,), unit="Pa")], self._calc, depends_on=deps)

    def _calc(self, ctx):
        pts = self._points if self.points_in is None else ctx.input(self.points_in)
        k = self.wave.kinematics(pts, ctx.time)
        return k.eta, k.velocity, k.acceleration, k.pressure
