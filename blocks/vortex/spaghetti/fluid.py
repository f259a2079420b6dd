r"""The seed's bound-vortex fluid force on the strip (eqs. 14-22), vectorised.

Bound vortices ``zv`` along the wetted part (complex positions), collocation points ``zc``
at the midpoints, no penetration with the body's own velocity, a Kutta (or Kelvin) row
closing the system; Kutta-Joukowski force per vortex.  The equations, sign conventions and
the findings behind the choices are in :mod:`blocks.vortex.spaghetti`.
"""

from __future__ import annotations

import math

import numpy as np

_TWO_PI = 2.0 * math.pi


def chord_normals(zv: np.ndarray) -> np.ndarray:
    """Unit normals :math:`-i(z_{k+1} - z_k)/|\\cdot|` of the chords between vortices."""
    dz = np.diff(zv)
    return -1j * dz / np.abs(dz)


def normal_influence(zc: np.ndarray, zv: np.ndarray, nrm: np.ndarray) -> np.ndarray:
    """Normal velocity at each collocation point per unit circulation of each vortex."""
    return np.real(-1j * nrm[:, None] / (_TWO_PI * (zc[:, None] - zv[None, :])))


# --------------------------------------------------------------------------- vortex solve
def bound_vortex_circulation(zv: np.ndarray, zc: np.ndarray, vel_c: np.ndarray,
                             u_inf: complex = 0.0, kutta: int = -1) -> np.ndarray:
    r"""Circulations of the bound vortices ``zv`` (``n+1``, complex) with Γ = 0 at ``zv[kutta]``.

    ``zc`` (``n``) are the collocation points, ``vel_c`` the body velocity there (complex
    ``vx + i vy``), ``u_inf`` the free stream (complex).  Normal of chord k:
    :math:`-i(z_{k+1} - z_k)/|\cdot|`; no penetration at each collocation point; Kutta
    condition :math:`\Gamma = 0` at vortex ``kutta`` (0 or -1: the trailing end).  Returns Γ
    (counter-clockwise positive).
    """
    nrm = chord_normals(zv)
    n = zv.size
    a = np.empty((n, n))
    a[:-1] = normal_influence(zc, zv, nrm)
    a[-1] = 0.0
    a[-1, kutta] = 1.0
    b = np.empty(n)
    b[:-1] = np.real((np.conj(vel_c) - np.conj(u_inf)) * nrm)
    b[-1] = 0.0
    return np.linalg.solve(a, b)


def induced_conj_velocity(z: np.ndarray, zw: np.ndarray, gw: np.ndarray) -> np.ndarray:
    """Conjugate velocity u - iv at ``z`` induced by point vortices ``gw`` at ``zw``."""
    if zw.size == 0:
        return np.zeros(z.shape, complex)
    return (-1j / _TWO_PI) * ((1.0 / (z[:, None] - zw[None, :])) @ gw)


def wake_circulation(zv: np.ndarray, zc: np.ndarray, vel_c: np.ndarray, u_inf: complex,
                     kutta: int, zw: np.ndarray, gw: np.ndarray,
                     z_new: complex | None = None) -> tuple[np.ndarray, float]:
    r"""Bound circulations with a wake: (Γ_bound, Γ_new).

    Old free vortices ``gw`` at ``zw`` add their induced normal velocity to the collocation
    rows of :func:`bound_vortex_circulation`; a new free vortex at ``z_new`` (unknown) closes
    Kelvin's theorem :math:`\sum\Gamma_b + \Gamma_{new} + \sum\Gamma_w = 0` with the
    Kutta condition Γ = 0 at ``zv[kutta]``.  ``z_new=None``: the new vortex sits *at* the
    trailing vortex (the merged limit: no Kutta row, Kelvin row only; Γ_b[kutta] is then the
    free vorticity shed there, returned as Γ_new with Γ_b[kutta] set to 0)."""
    nrm = chord_normals(zv)
    n = zv.size
    extra = 0 if z_new is None else 1
    a = np.zeros((n + extra, n + extra))
    b = np.zeros(n + extra)
    a[:n - 1, :n] = normal_influence(zc, zv, nrm)
    b[:n - 1] = np.real((np.conj(vel_c) - np.conj(u_inf)
                         - induced_conj_velocity(zc, zw, gw)) * nrm)
    a[-1, :] = 1.0                                      # Kelvin
    b[-1] = -float(np.sum(gw))
    if z_new is not None:
        a[:n - 1, n] = normal_influence(zc, np.array([z_new]), nrm)[:, 0]
        a[n - 1, kutta % n] = 1.0                       # Kutta
    g = np.linalg.solve(a, b)
    if z_new is None:
        gb = g.copy()
        g_new = float(gb[kutta])
        gb[kutta] = 0.0
        return gb, g_new
    return g[:n], float(g[n])


def vortex_forces(zv: np.ndarray, gamma: np.ndarray, vel_v: np.ndarray, rho: float,
                  u_inf: complex = 0.0, mutual: bool = True,
                  w_ext: np.ndarray | None = None) -> np.ndarray:
    r"""Kutta–Joukowski force on each bound vortex, complex :math:`F_X + iF_Y` per unit span.

    :math:`F_X - iF_Y = i\rho\Gamma_j W_j` with :math:`W_j` the conjugate relative velocity
    (free stream + the other vortices when ``mutual`` + ``w_ext`` (e.g. the wake's induced
    conjugate velocity at ``zv``) − body velocity ``vel_v``).
    """
    w = np.conj(u_inf) - np.conj(vel_v)
    if w_ext is not None:
        w = w + w_ext
    if mutual and zv.size > 1:
        d = zv[:, None] - zv[None, :]
        np.fill_diagonal(d, 1.0)
        k = -1j / (_TWO_PI * d)
        np.fill_diagonal(k, 0.0)
        w = w + k @ gamma
    return np.conj(1j * rho * gamma * w)
