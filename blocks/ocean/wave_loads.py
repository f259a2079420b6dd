r"""Wave loads on a vessel from force RAOs (first order) and drift coefficients (second order).

After the seed (Kreuzer & Ellermann, seed-000 §13.2), for a sea of components
:math:`a_n = \sqrt{2 S(\omega_n)\Delta\omega_n}` with phases :math:`\varepsilon_n` at the
reference point (an :class:`~blocks.ocean.waves.IrregularSea` or
:class:`~blocks.ocean.waves.RegularWave`; the phase of the library's component,
:math:`k(x\cos\beta + y\sin\beta) - \omega t + \varphi`, evaluated at the reference point's
horizontal position, gives
:math:`\varepsilon_n = \varphi_n + k_n(x_r\cos\beta_n + y_r\sin\beta_n)`):

.. math::

    \zeta(t) &= \sum_n a_n\cos(-\omega_n t + \varepsilon_n) = \mathrm{Re}\,Z(t), \qquad
    Z(t) = \sum_n a_n e^{i(-\omega_n t + \varepsilon_n)} \\
    F_i^{(1)}(t) &= \sum_n |X_i(\omega_n)|\,a_n
                    \cos\big(-\omega_n t + \varepsilon_n + \arg X_i(\omega_n)\big)
                  = \mathrm{Re}\sum_n X_i(\omega_n)\,a_n e^{i(-\omega_n t + \varepsilon_n)} \\
    F_i^{(2)}(t) &= c\,\frac{\int F_i^{(2)}(\omega) S(\omega)\,d\omega}{\int S(\omega)\,d\omega}
                   \,A^2(t), \qquad A(t) = |Z(t)|

with :math:`X_i` the complex force RAO of DOF :math:`i` (force or moment per metre of wave
amplitude, :class:`ForceRAO`; its phase is the lead of the force over the wave elevation at
the reference point) and :math:`F_i^{(2)}(\omega)` the mean drift coefficient (mean force in
a regular wave per amplitude squared, :class:`DriftCoefficients`).

The envelope.  :math:`A(t)` is the modulus of the analytic signal of :math:`\zeta`, i.e. the
envelope by the Hilbert transform (:math:`\mathcal H[\cos(\omega t - \varepsilon)] =
\sin(\omega t - \varepsilon)` for :math:`\omega > 0`).  Since the sea is a finite sum of
components, the analytic signal is evaluated exactly from them (no time series, no FFT, no
end effects); :func:`hilbert_envelope` gives the same from a sampled record by
``scipy.signal.hilbert`` (equal to it for a record holding whole periods of every
component).  For two components, :math:`A^2 = a_1^2 + a_2^2 + 2a_1a_2\cos((\omega_1 -
\omega_2)t - (\varepsilon_1 - \varepsilon_2))`: the beat.

The factor :math:`c` (the seed's OCR is doubtful; ``drift_factor``, default 1).  In a regular
wave of amplitude :math:`a` the envelope is constant, :math:`A = a`, and the formula must give
the regular-wave mean drift :math:`F^{(2)}(\omega)a^2`: so :math:`c = 1` with
:math:`F^{(2)}` defined per amplitude squared (the usual normalisation, e.g. WAMIT's mean
drift over :math:`\rho g L a^2`), and then the mean in an irregular sea,
:math:`c\,\overline{A^2}\,\bar F^{(2)} = 2\int F^{(2)} S\,d\omega`, is the standard spectral
mean drift (Newman 1974; Faltinsen 1990, eq. 5.35).  :math:`c = 1/2` corresponds to
coefficients normalised per variance :math:`a^2/2` of the regular wave (twice the former).

Methods for the slow drift (``drift_method``):

* ``"seed"`` (default): the formula above, with the spectral weighting done over the
  discrete components, :math:`\sum_n F^{(2)}(\omega_n)a_n^2/\sum_n a_n^2` (equal to the
  integral ratio for the equal-frequency discretisation, and what makes the time mean exact);
* ``"newman"``: Newman's approximation of the difference-frequency QTF,
  :math:`T_{nm} = (F^{(2)}(\omega_n) + F^{(2)}(\omega_m))/2`, whose double sum
  :math:`c\sum_n\sum_m a_na_mT_{nm}\cos((\omega_n - \omega_m)t - (\varepsilon_n -
  \varepsilon_m))` factorises exactly into
  :math:`c\,\mathrm{Re}\big[Z_F(t)\,\overline{Z(t)}\big]`,
  :math:`Z_F = \sum_n F^{(2)}(\omega_n)a_ne^{i(-\omega_nt+\varepsilon_n)}` (O(N) per
  evaluation).  It keeps the frequency dependence of the coefficients inside the
  wave groups; it equals ``"seed"`` for constant coefficients; same mean;
* ``"mean"``: the constant mean drift :math:`c\sum_n F^{(2)}(\omega_n)a_n^2` only.

Frames: the loads are in the axes in which the RAOs are given (the vessel's body axes at its
mean position; for :class:`~blocks.ocean.vessel.Vessel6DOF` connect them to ``wave_force``
and ``wave_moment``, with the RAOs referred to its CG).  Limitations: long-crested sea with
one heading, the one the RAO tables are for (the vessel's yaw and horizontal excursion do not
change the phases: linear theory at the mean position); no sum-frequency (springing) loads;
the RAOs are interpolated linearly in amplitude and unwrapped phase; the compiled run's C
form (:mod:`blocks.ocean.wave_loads_c`) equals the Python loop to 1e-12 of the range, not
bit for bit (NumPy's complex BLAS sums round in an order of their own).

Representative data for a box barge (no radiation-diffraction code in the library; give real
tables to :class:`ForceRAO` and :class:`DriftCoefficients` for real vessels):
:meth:`ForceRAO.froude_krylov_box` integrates the incident-wave pressure over the box hull
(Froude-Krylov force only: no diffraction, a long-wave approximation), and
:meth:`DriftCoefficients.box_reflection` is Maruo's mean drift
:math:`\tfrac12\rho g a^2 R^2` per unit of projected width with Wiegel's power-transmission
estimate :math:`R^2 = 1 - e^{-2kT}` (deep water: the wave energy below the draught passes).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.codegen.model import CContext, CModel
from cosim.errors import ParameterError
from cosim.params import Array, refuse

from .wave_loads_c import wave_loads_c
from .waves import RHO_SEAWATER, G, LinearWaves, wave_number

__all__ = ["DriftCoefficients", "ForceRAO", "WaveLoadModel", "WaveLoads", "analytic_signal",
           "hilbert_envelope"]

_EXTRAPOLATE = ("error", "zero", "hold")


def _table(omega, values, who: str, what: str) -> tuple[np.ndarray, np.ndarray]:
    w = np.asarray(omega, dtype=float).reshape(-1)
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        v = v[:, None]
    if w.size < 2 or np.any(np.diff(w) <= 0) or np.any(w < 0):
        raise ParameterError(f"{who}: omega must be increasing, >= 0, at least 2 values")
    if v.shape[0] != w.size or not np.all(np.isfinite(v)):
        raise ParameterError(f"{who}: {what} must have one finite row per omega "
                             f"({w.size}), got shape {v.shape}")
    if v.shape[1] != 6:
        raise ParameterError(f"{who}: {what} needs 6 columns (surge, sway, heave, roll, "
                             f"pitch, yaw), got {v.shape[1]}")
    return w, v


class _Interp:
    """Linear interpolation of a table over omega with an extrapolation policy."""

    def __init__(self, omega: np.ndarray, extrapolate: str, who: str) -> None:
        if extrapolate not in _EXTRAPOLATE:
            raise ParameterError(f"{who}: extrapolate must be one of {_EXTRAPOLATE}, got "
                                 f"{extrapolate!r}")
        self.omega, self.extrapolate, self.who = omega, extrapolate, who

    def columns(self, w: np.ndarray, table: np.ndarray) -> np.ndarray:
        w = np.atleast_1d(np.asarray(w, dtype=float))
        lo, hi = self.omega[0], self.omega[-1]
        out = ~((w >= lo) & (w <= hi))
        if self.extrapolate == "error" and np.any(out):
            raise ParameterError(
                f"{self.who}: the table covers {lo:g}..{hi:g} rad/s but frequencies "
                f"{w[out].min():g}..{w[out].max():g} rad/s are asked for; extend the table or "
                "pass extrapolate='zero' or 'hold'")
        r = np.column_stack([np.interp(w, self.omega, table[:, j]) for j in range(6)])
        if self.extrapolate == "zero":
            r[out] = 0.0
        return r


class ForceRAO:
    """First-order force RAOs: amplitude [N/m, N m/m] and phase [rad] per DOF against omega.

    ``F_i(t) = |X_i| a cos(-omega t + eps + phase_i)`` in a regular wave
    ``zeta = a cos(-omega t + eps)`` at the reference point (module docstring).  Amplitude
    and unwrapped phase are interpolated linearly.  ``heading`` [rad] is the wave direction
    the table is for (checked against the sea's).
    """

    def __init__(self, omega, amplitude, phase, heading: float | None = None,
                 extrapolate: str = "error") -> None:
        self.omega, self.amplitude = _table(omega, amplitude, "ForceRAO", "amplitude")
        _, ph = _table(omega, phase, "ForceRAO", "phase")
        if np.any(self.amplitude < 0):
            raise ParameterError("ForceRAO: amplitudes must be >= 0")
        self.phase = np.unwrap(ph, axis=0)
        self.heading = heading
        self._interp = _Interp(self.omega, extrapolate, "ForceRAO")

    @classmethod
    def from_complex(cls, omega, X, heading: float | None = None,
                     extrapolate: str = "error") -> ForceRAO:
        X = np.asarray(X, dtype=complex)
        return cls(omega, np.abs(X), np.angle(X), heading, extrapolate)

    def __call__(self, omega) -> np.ndarray:
        """Complex RAOs (M, 6) at ``omega`` (M,)."""
        amp = self._interp.columns(omega, self.amplitude)
        ph = self._interp.columns(omega, self.phase)
        return amp * np.exp(1j * ph)

    @classmethod
    def froude_krylov_box(cls, length: float, beam: float, draught: float, omega,
                          heading: float = 0.0, reference: Any = (0.0, 0.0, 0.0),
                          depth: float = np.inf, rho: float = RHO_SEAWATER, g: float = G,
                          n_per_wavelength: int = 24, **kw: Any) -> ForceRAO:
        """Froude-Krylov force RAOs of a box (midship at the origin, waterline z = 0),
        moments about ``reference`` (body coordinates: the CG), by Gauss quadrature of
        :math:`-\\int p\\,\\mathbf n\\,dS` over bottom, sides and ends, :math:`p = \\rho g
        \\frac{\\cosh k(z+h)}{\\cosh kh}\\, a\\cos(k(x\\cos\\beta + y\\sin\\beta) - \\omega t)`;
        phases relative to the wave elevation at x = y = 0."""
        L, B, T = float(length), float(beam), float(draught)
        w = np.asarray(omega, dtype=float).reshape(-1)
        k = np.atleast_1d(wave_number(w, depth, g))
        ref = np.asarray(reference, dtype=float).reshape(3)
        cb, sb = math.cos(heading), math.sin(heading)
        kmax = float(k.max())

        def gauss(a, b, size):
            n = max(8, int(math.ceil(n_per_wavelength * kmax * size / (2 * math.pi))) + 4)
            x, wt = np.polynomial.legendre.leggauss(n)
            return 0.5 * (b - a) * x + 0.5 * (a + b), 0.5 * (b - a) * wt

        xs, wx = gauss(-L / 2, L / 2, L)
        ys, wy = gauss(-B / 2, B / 2, B)
        zs, wz = gauss(-T, 0.0, T)
        faces = []  # (points (P,3), weights (P,), normal (3,))
        X, Y = np.meshgrid(xs, ys, indexing="ij")
        faces.append((np.column_stack([X.ravel(), Y.ravel(), np.full(X.size, -T)]),
                      np.outer(wx, wy).ravel(), np.array([0.0, 0.0, -1.0])))
        X, Z = np.meshgrid(xs, zs, indexing="ij")
        for sgn in (-1.0, 1.0):
            faces.append((np.column_stack([X.ravel(), np.full(X.size, sgn * B / 2), Z.ravel()]),
                          np.outer(wx, wz).ravel(), np.array([0.0, sgn, 0.0])))
        Y, Z = np.meshgrid(ys, zs, indexing="ij")
        for sgn in (-1.0, 1.0):
            faces.append((np.column_stack([np.full(Y.size, sgn * L / 2), Y.ravel(), Z.ravel()]),
                          np.outer(wy, wz).ravel(), np.array([sgn, 0.0, 0.0])))
        Xc = np.zeros((w.size, 6), dtype=complex)
        e2h = 0.0 if math.isinf(depth) else np.exp(-2 * k * depth)
        for pts, wts, n in faces:
            z = pts[:, 2]
            ez = np.exp(np.multiply.outer(k, z))
            em = 0.0 if math.isinf(depth) else np.exp(-np.multiply.outer(k, z + 2 * depth))
            ratio = (ez + em) / (1.0 + (e2h if np.ndim(e2h) == 0 else e2h[:, None]))
            p = rho * g * ratio * np.exp(1j * np.multiply.outer(k, pts[:, 0] * cb
                                                                + pts[:, 1] * sb))
            pw = p * wts  # (W, P)
            f = -np.multiply.outer(pw.sum(axis=1), n)  # (W, 3)
            arm = np.cross(pts - ref, n)  # (P, 3)
            Xc[:, :3] += f
            Xc[:, 3:] += -pw @ arm
        return cls.from_complex(w, Xc, heading, **kw)


class DriftCoefficients:
    """Mean drift coefficients :math:`F_i^{(2)}(\\omega)` [N/m^2, N m/m^2]: mean load in a
    regular wave per amplitude squared, 6 DOF, interpolated linearly."""

    def __init__(self, omega, coefficients, heading: float | None = None,
                 extrapolate: str = "error") -> None:
        self.omega, self.coefficients = _table(omega, coefficients, "DriftCoefficients",
                                               "coefficients")
        self.heading = heading
        self._interp = _Interp(self.omega, extrapolate, "DriftCoefficients")

    def __call__(self, omega) -> np.ndarray:
        return self._interp.columns(omega, self.coefficients)

    @classmethod
    def box_reflection(cls, length: float, beam: float, draught: float, omega,
                       heading: float = 0.0, rho: float = RHO_SEAWATER, g: float = G,
                       **kw: Any) -> DriftCoefficients:
        """Representative drift of a box: :math:`\\tfrac12\\rho g R^2 W` along the wave
        direction, :math:`W = B|\\cos\\beta| + L|\\sin\\beta|`, :math:`R^2 = 1 - e^{-2kT}`
        (deep water; module docstring).  No yaw drift moment."""
        w = np.asarray(omega, dtype=float).reshape(-1)
        k = w * w / g
        W = beam * abs(math.cos(heading)) + length * abs(math.sin(heading))
        f = 0.5 * rho * g * W * (1.0 - np.exp(-2 * k * draught))
        c = np.zeros((w.size, 6))
        c[:, 0], c[:, 1] = f * math.cos(heading), f * math.sin(heading)
        return cls(w, c, heading, **kw)


def _phases(sea: LinearWaves, reference) -> np.ndarray:
    xr, yr = float(reference[0]), float(reference[1])
    return sea.phase + sea.k * (xr * np.cos(sea.heading) + yr * np.sin(sea.heading))


def analytic_signal(sea: LinearWaves, t, reference=(0.0, 0.0)) -> np.ndarray:
    """:math:`Z(t) = \\sum_n a_n e^{i(-\\omega_n t + \\varepsilon_n)}` at the horizontal
    ``reference`` point: :math:`\\zeta = \\mathrm{Re}\\,Z`, envelope :math:`|Z|`."""
    eps = _phases(sea, reference)
    t = np.asarray(t, dtype=float)
    return np.exp(1j * (np.multiply.outer(t, -sea.omega) + eps)) @ sea.amplitude


def hilbert_envelope(eta) -> np.ndarray:
    """Envelope of a sampled record by ``scipy.signal.hilbert`` (FFT based: exact for a record
    of whole periods, with end effects otherwise)."""
    from scipy.signal import hilbert
    return np.abs(hilbert(np.asarray(eta, dtype=float)))


class WaveLoadModel:
    """The first- and second-order wave loads of a sea on a vessel (module docstring).

    Parameters
    ----------
    sea : LinearWaves
        Regular wave or irregular sea (one heading).
    rao : ForceRAO or None
    drift : DriftCoefficients or None
    drift_method : {"seed", "newman", "mean"}
    drift_factor : float
        The seed's factor :math:`c` (module docstring; default 1).
    reference : (2,) or (3,)
        Horizontal position [m] of the RAOs' reference point (the vessel's mean position).
    """

    def __init__(self, sea: LinearWaves, rao: ForceRAO | None = None,
                 drift: DriftCoefficients | None = None, drift_method: str = "seed",
                 drift_factor: float = 1.0, reference: Any = (0.0, 0.0)) -> None:
        if not isinstance(sea, LinearWaves):
            raise ParameterError(f"WaveLoadModel: sea must be a RegularWave, IrregularSea or "
                                 f"LinearWaves, got {type(sea).__name__}")
        if drift_method not in ("seed", "newman", "mean"):
            raise ParameterError(f"WaveLoadModel: drift_method must be 'seed', 'newman' or "
                                 f"'mean', got {drift_method!r}")
        if np.ptp(sea.heading) > 1e-12:
            raise ParameterError("WaveLoadModel: the sea has several headings; the RAO tables "
                                 "are for one (long-crested sea only)")
        for tab, what in ((rao, "rao"), (drift, "drift")):
            hd = getattr(tab, "heading", None)
            if hd is not None and abs(math.remainder(hd - sea.heading[0], 2 * math.pi)) > 1e-9:
                raise ParameterError(f"WaveLoadModel: the {what} table is for heading "
                                     f"{hd:g} rad, the sea has {sea.heading[0]:g} rad")
        self.sea, self.rao, self.drift = sea, rao, drift
        self.drift_method, self.c = drift_method, float(drift_factor)
        self.eps = _phases(sea, reference)
        a = sea.amplitude
        self.aX = (a[:, None] * rao(sea.omega)) if rao is not None else None  # (N, 6)
        if drift is not None:
            F2 = drift(sea.omega)  # (N, 6)
            self.aF2 = a[:, None] * F2
            self.mean = self.c * (a * a) @ F2
            self.weighted = (a * a) @ F2 / max(float(a @ a), 1e-300)  # sum F2 a^2 / sum a^2
        else:
            self.aF2 = None
            self.mean = np.zeros(6)
            self.weighted = np.zeros(6)

    def _e(self, t: float) -> np.ndarray:
        return np.exp(1j * (self.eps - self.sea.omega * t))

    def elevation_and_envelope(self, t: float) -> tuple[float, float]:
        z = self._e(t) @ self.sea.amplitude
        return float(z.real), float(abs(z))

    def first_order(self, t: float) -> np.ndarray:
        """:math:`F^{(1)}(t)` (6,)."""
        if self.aX is None:
            return np.zeros(6)
        return (self._e(t) @ self.aX).real

    def second_order(self, t: float) -> np.ndarray:
        """:math:`F^{(2)}(t)` (6,) by ``drift_method``."""
        e = self._e(t)
        return self._second(e, e @ self.sea.amplitude)

    def _second(self, e: np.ndarray, z: complex) -> np.ndarray:
        if self.aF2 is None:
            return np.zeros(6)
        if self.drift_method == "mean":
            return self.mean.copy()
        if self.drift_method == "seed":
            return self.c * self.weighted * abs(z) ** 2
        return self.c * ((e @ self.aF2) * np.conj(z)).real

    def loads(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
        """``(first (6,), second (6,), total (6,), eta, envelope)`` at ``t``."""
        e = self._e(t)
        z = e @ self.sea.amplitude
        f1 = (e @ self.aX).real if self.aX is not None else np.zeros(6)
        f2 = self._second(e, z)
        return f1, f2, f1 + f2, float(z.real), float(abs(z))


class WaveLoads(Block):
    """Source block: first-order and slow-drift wave loads on a vessel (module docstring).

    Ports
    -----
    out  force         (3,) [N]    surge, sway, heave load (first + second order)
    out  moment        (3,) [N*m]  roll, pitch, yaw moment about the reference
    out  first_order   (6,) [N, N, N, N*m, N*m, N*m]  :math:`F^{(1)}`
    out  second_order  (6,) [N, N, N, N*m, N*m, N*m]  :math:`F^{(2)}`
    out  eta           scalar [m]   wave elevation at the reference point
    out  envelope      scalar [m]   its envelope A(t)

    All outputs depend on time only (no inputs): in the RAOs' axes (the vessel's body axes
    at its mean position).

    Parameters
    ----------
    sea : LinearWaves
        Regular wave or irregular sea (one heading).
    rao : ForceRAO or None
        First-order force RAOs (None: no first-order load).
    drift : DriftCoefficients or None
        Mean drift coefficients (None: no second-order load).
    drift_method : {"seed", "newman", "mean"}
        The slow-drift approximation (module docstring).
    drift_factor : float
        The seed's factor :math:`c` (module docstring; default 1).
    reference : (2,) or (3,)
        Horizontal position [m] of the RAOs' reference point (the vessel's mean position).
    first_order, second_order : bool
        Include the first-order / second-order loads (default both).
    """

    argument_checks = {"reference": Array(ndim=1)}

    def __init__(self, name: str, sea: LinearWaves, rao: ForceRAO | None = None,
                 drift: DriftCoefficients | None = None, *, drift_method: str = "seed",
                 drift_factor: float = 1.0, reference: Any = (0.0, 0.0),
                 first_order: bool = True, second_order: bool = True) -> None:
        super().__init__(name)
        if np.size(reference) not in (2, 3):
            raise refuse(self, "reference", reference, "a horizontal position (x, y) [m], or "
                         "(x, y, z)")
        try:
            self.model = WaveLoadModel(sea, rao if first_order else None,
                                       drift if second_order else None, drift_method,
                                       drift_factor, reference)
        except ParameterError as exc:
            raise ParameterError(f"WaveLoads '{name}': {exc}") from None
        self.force, self.moment, self.first, self.second, self.eta, self.envelope = \
            self.declare_outputs([dict(name="force", shape=(3,), unit="N"),
                                  dict(name="moment", shape=(3,), unit="N*m"),
                                  dict(name="first_order", shape=(6,)),
                                  dict(name="second_order", shape=(6,)),
                                  dict(name="eta", unit="m"),
                                  dict(name="envelope", unit="m")], self._calc, depends_on=())

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`WaveLoadModel.loads` over the components (:mod:`blocks.ocean.
        wave_loads_c`: NumPy's complex BLAS sums round differently, so equal to the Python
        loop to 1e-12 of the range, not bit for bit)."""
        return wave_loads_c(self, cg)

    def _calc(self, ctx: Any) -> tuple:
        f1, f2, f, eta, env = self.model.loads(ctx.time)
        return f[:3], f[3:], f1, f2, eta, env
