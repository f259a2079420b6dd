"""Linear stability of the drawn-out strip at a frozen wetted length: the quasi-static
divergence speed and the eigenvalues (:mod:`blocks.vortex.spaghetti`)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .beam import SegmentedBeam


def divergence_speed(beam: SegmentedBeam, wetted_length_m: float) -> float | None:
    r"""Quasi-static divergence speed [m/s] of the drawn-out beam at a given wetted length.

    With the beam straight and at rest (:math:`\dot q = 0`) the fluid load is quadratic in
    the drive speed, so the linearised stiffness is :math:`K(V) = K_s - V^2 K_f`
    (finite differences of :meth:`SegmentedBeam.evaluate`); divergence at the smallest real
    positive :math:`V^2` with :math:`K(V)` singular.  The gap is preloaded by 20 µm for the
    linearisation so that it acts as a clamp (at zero preload the one-sided contacts are at
    their kink).  ``None`` without fluid.
    """
    geo = replace(beam.geometry, clearance_m=-2e-5, friction_coefficient=0.0)
    b = replace(beam, geometry=geo)
    if b.fluid_density == 0.0:
        return None
    x = b.initial_state(wetted_length_m)

    def stiffness(v: float) -> np.ndarray:
        n, h = b.n, 1e-7
        f0 = b.evaluate(x, v)["Q"]
        K = np.empty((n + 1, n + 1))
        for i in range(n + 1):
            xp = x.copy()
            xp[1 + i] += h
            K[:, i] = -(b.evaluate(xp, v)["Q"] - f0) / h
        return K

    ks = stiffness(1e-9)
    kf = ks - stiffness(1.0)
    lam = np.linalg.eigvals(np.linalg.solve(ks, kf))
    real = lam[(np.abs(lam.imag) <= 1e-9 * np.abs(lam).max()) & (lam.real > 0)].real
    return float(1.0 / math.sqrt(real.max())) if real.size else None


def linear_eigenvalues(beam: SegmentedBeam, wetted_length_m: float,
                       speed: float) -> np.ndarray:
    r"""Eigenvalues [1/s] of the beam linearised about the straight state, frozen length.

    The drive speed ``speed`` moves the material (it enters the fluid boundary condition and
    the Kutta–Joukowski force) but :math:`X_0` is held, i.e. the wetted length and the
    clamped material are frozen (Lagrangian coordinates; the gap is preloaded by 20 µm as in
    :func:`divergence_speed`).  A real positive eigenvalue is the frozen-length divergence,
    a complex pair with positive real part flutter.  Jacobian of :meth:`SegmentedBeam.rhs` by
    forward differences.
    """
    geo = replace(beam.geometry, clearance_m=-2e-5, friction_coefficient=0.0)
    b = replace(beam, geometry=geo)
    x = b.initial_state(wetted_length_m)
    f0 = b.rhs(x, speed)
    n, h = x.size, 1e-7
    A = np.empty((n - 1, n - 1))
    for i in range(1, n):
        xp = x.copy()
        xp[i] += h
        A[:, i - 1] = (b.rhs(xp, speed)[1:] - f0[1:]) / h
    return np.linalg.eigvals(A)

