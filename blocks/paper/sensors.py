"""Force sensor with an injectable, reproducible band-limited noise fault.

The seed's third fault (Paper IV sec. 4.3): "a random noise signal is added to the force
sensor in the cylinder of carriage A".  The seed gives no spectrum or level.

Noise process
-------------
A sum of N cosines with seeded random frequencies and phases (Rice 1944; Shinozuka's
spectral representation):

.. math:: n(t) = \\sqrt{2/N}\\,\\sum_{k=1}^{N} \\cos(2\\pi f_k t + \\varphi_k), \\qquad
          f_k = (k - 1 + u_k)\\,f_c / N, \\quad u_k, \\varphi_k/2\\pi \\sim U(0, 1)

so n is zero-mean with unit variance (time average over a long window), band-limited to
(0, f_c] with a flat spectrum, close to Gaussian for large N, and a smooth deterministic
function of time: the same seed gives the same signal whatever the solver, its step sizes or
the number of stage evaluations (noise drawn per evaluation would be white, different per RK
stage and solver-dependent), and a variable-step or implicit solver sees a smooth right-hand
side.  The jittered frequencies make it aperiodic.  It holds no state, so contexts, snapshots
and rollbacks need nothing.

Limitations: a finite window's sample standard deviation differs from the nominal one by
a few per cent (it converges as the window grows); the amplitude distribution is Gaussian
only in the limit of large N (N = 64 by default).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE, POSITIVE


class BandLimitedNoise:
    """Unit-variance band-limited noise n(t) (module docstring); call ``noise(t)``.

    Parameters
    ----------
    bandwidth_hz : float
        :math:`f_c`.
    seed : int
        Seed of ``numpy.random.default_rng`` for the frequencies and phases.
    n_components : int
        N (>= 8).
    """

    def __init__(self, bandwidth_hz: float, seed: int = 0, n_components: int = 64) -> None:
        own = "BandLimitedNoise"
        if not (isinstance(bandwidth_hz, (int, float)) and math.isfinite(bandwidth_hz)
                and bandwidth_hz > 0):
            raise ParameterError(f"{own}: bandwidth_hz must be finite and > 0, got "
                                 f"{bandwidth_hz!r}")
        if not isinstance(n_components, int) or n_components < 8:
            raise ParameterError(f"{own}: n_components must be an int >= 8, got "
                                 f"{n_components!r}")
        if not isinstance(seed, (int, np.integer)):
            raise ParameterError(f"{own}: seed must be an int, got {seed!r}")
        rng = np.random.default_rng(int(seed))
        n = n_components
        u = rng.random(n)
        self.bandwidth_hz, self.seed, self.n = float(bandwidth_hz), int(seed), n
        self.freqs_hz = (np.arange(n) + u) * self.bandwidth_hz / n
        self.omega = 2.0 * math.pi * self.freqs_hz
        self.phase = 2.0 * math.pi * rng.random(n)
        self.amp = math.sqrt(2.0 / n)

    def __call__(self, t: Any) -> Any:
        """n(t) for a float t (returns a float) or an array of times."""
        if np.ndim(t) == 0:
            return self.amp * float(np.sum(np.cos(self.omega * float(t) + self.phase)))
        tt = np.asarray(t, dtype=float)
        return self.amp * np.cos(np.multiply.outer(tt, self.omega) + self.phase).sum(axis=-1)


class ForceSensor(Block):
    """Force transducer: gain, optional bias and band-limited noise (fault injection).

    .. math:: y(t) = k\\,F(t) + b + \\sigma\\, n(t)

    with n the unit-variance noise of :class:`BandLimitedNoise`.  The bias b and the noise
    level :math:`\\sigma` are tunable parameters (``bias``, ``noise_std``, default 0): set
    them in a context, or at a fault time with a :class:`cosim.manipulators.Scenario`, to
    inject the fault; the noise signal itself is fixed by the seed.  Ideal transducer
    otherwise (no lag, no quantization).

    Ports
    -----
    in   force      scalar [N]  true force
    out  measured   scalar [N]  sensor signal; reads force

    Parameters
    ----------
    gain : float
        k (e.g. -1 to read a pulling rod force as a positive pressing force).
    noise_bandwidth_hz, seed, n_components : see :class:`BandLimitedNoise`.
    noise_std_n, bias_n : float
        Initial values of the parameters ``noise_std`` (>= 0) and ``bias``.
    """

    argument_checks = {"noise_bandwidth_hz": POSITIVE, "noise_std_n": NON_NEGATIVE}

    def __init__(self, name: str, *, gain: float = 1.0, noise_bandwidth_hz: float = 20.0,
                 seed: int = 0, n_components: int = 64, noise_std_n: float = 0.0,
                 bias_n: float = 0.0) -> None:
        super().__init__(name)
        own = f"ForceSensor '{name}'"
        try:
            k = float(gain)
        except (TypeError, ValueError):
            raise ParameterError(f"{own}: gain must be a number, got {gain!r}") from None
        if not (math.isfinite(k) and k != 0.0):
            raise ParameterError(f"{own}: gain must be finite and nonzero, got {gain!r}")
        try:
            self.noise = BandLimitedNoise(noise_bandwidth_hz, seed, n_components)
        except ParameterError as exc:
            raise ParameterError(f"{own}: {exc}") from None
        self.k = k

        def std_ok(v: Any) -> float:
            f = float(v)
            if not (math.isfinite(f) and f >= 0.0):
                raise ValueError(f"{own}: noise_std must be finite and >= 0 [N]")
            return f

        def bias_ok(v: Any) -> float:
            f = float(v)
            if not math.isfinite(f):
                raise ValueError(f"{own}: bias must be finite [N]")
            return f

        self.noise_std = self.declare_parameter("noise_std", noise_std_n, "N",
                                                validate=std_ok)
        self.bias = self.declare_parameter("bias", bias_n, "N", validate=bias_ok)
        self.force = self.declare_input("force", unit="N")
        self.measured = self.declare_output("measured", self._measured, unit="N")

    def _measured(self, ctx: Any) -> float:
        y = self.k * ctx.input(self.force) + ctx.param(self.bias)
        s = ctx.param(self.noise_std)
        if s:
            y += s * self.noise(ctx.time)
        return y

    def c_model(self, cg: Any) -> Any:
        """The C form (:func:`blocks.paper._cforms.force_sensor`)."""
        from ._cforms import force_sensor
        return force_sensor(self, cg)

