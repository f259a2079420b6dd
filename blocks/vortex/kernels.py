r"""Induced velocity of 2-D vortex elements (Biot–Savart with a regularised core).

A vortex of circulation :math:`\Gamma_j` (counter-clockwise positive) at
:math:`\mathbf x_j` induces at :math:`\mathbf x` the velocity

.. math::

    \mathbf u(\mathbf x) = \frac{\Gamma_j}{2\pi}\, f(r^2)\,
        \big(-(y - y_j),\; x - x_j\big), \qquad r^2 = |\mathbf x - \mathbf x_j|^2,

with the core function :math:`f` of the chosen model (core radius :math:`\delta`):

==============  ==========================================  ======================================
model           :math:`f(r^2)`                              remark
==============  ==========================================  ======================================
``"point"``     :math:`1/r^2` (0 at :math:`r = 0`)          singular point vortex
``"krasny"``    :math:`1/(r^2 + \delta^2)`                  Krasny's blob (default: no ``exp``)
``"lamb_oseen"`` :math:`(1 - e^{-r^2/\delta^2})/r^2`        Gaussian core, :math:`\delta^2 = 4\nu t`
``"rankine"``   :math:`1/\max(r^2, \delta^2)`               solid-body core
==============  ==========================================  ======================================

The default is Krasny's blob: smooth, as accurate as the others for well separated
vortices (all agree with the point vortex to :math:`O(\delta^2/r^2)`), and the cheapest
(no exponential: the 2000-vortex step is about twice as fast as with Lamb–Oseen).
Lamb–Oseen reproduces the exact diffusing vortex :math:`v_\theta = \Gamma/(2\pi r)
(1 - e^{-r^2/(4\nu t)})` and goes with core spreading (:mod:`blocks.vortex.flow`).

Self-induction (:func:`self_induced`) uses the pair core :math:`\delta_{ij}^2 =
(\delta_i^2 + \delta_j^2)/2`, so that the interaction is antisymmetric and the linear
impulse :math:`\sum \Gamma_k (y_k, -x_k)` of free vortices is conserved to round-off
(equal cores give :math:`\delta_{ij} = \delta`).  :func:`induced_velocity` (sources on
other points) uses each source's own core.

Speed: the NumPy path works on blocks of targets (bounded memory); the Numba path
(``pip install 'cosim[fast]'``, compiled on first use, not at import) visits each pair
once.  ``backend="auto"`` takes Numba when importable.  Both give the same values to
rounding (tests).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.errors import ParameterError

MODELS = ("point", "krasny", "lamb_oseen", "rankine")
_CODE = {m: i for i, m in enumerate(MODELS)}
BACKENDS = ("auto", "numpy", "numba")
_TWO_PI = 2.0 * math.pi
_BLOCK = 256  # targets per NumPy block: (256 x N) temporaries

_numba_funcs: dict | None = None
_numba_error: str | None = None


def check_model(model: str, who: str = "vortex kernel") -> int:
    """Code of a core model; :class:`ParameterError` listing the valid ones otherwise."""
    if model not in _CODE:
        raise ParameterError(f"{who}: unknown core model {model!r}; valid: {', '.join(MODELS)}")
    return _CODE[model]


def numba_available() -> bool:
    """True if the compiled kernels can be used (Numba importable and compiling)."""
    return _load_numba() is not None


def _load_numba() -> dict | None:
    """Compile the Numba kernels on first call; ``None`` if Numba is missing."""
    global _numba_funcs, _numba_error
    if _numba_funcs is not None or _numba_error is not None:
        return _numba_funcs
    try:
        import numba
    except ImportError as exc:
        _numba_error = str(exc)
        return None
    njit = numba.njit(cache=True, fastmath=False)

    @njit
    def core_f(r2, d2, code):
        if code == 0:
            return 1.0 / r2 if r2 > 0.0 else 0.0
        if code == 1:
            return 1.0 / (r2 + d2)
        if code == 2:
            if r2 <= 0.0:
                return 1.0 / d2 if d2 > 0.0 else 0.0
            if d2 <= 0.0:
                return 1.0 / r2
            q = r2 / d2
            if q < 1e-6:  # 1 - exp(-q) ~ q (1 - q/2)
                return (1.0 - 0.5 * q) / d2
            return -math.expm1(-q) / r2
        m = max(r2, d2)
        return 1.0 / m if m > 0.0 else 0.0

    @njit
    def self_kernel(x, y, g, d2, code, u, v):
        n = x.shape[0]
        for i in range(n):
            u[i] = 0.0
            v[i] = 0.0
        for i in range(n):
            xi, yi, gi, di = x[i], y[i], g[i], d2[i]
            ui = 0.0
            vi = 0.0
            for j in range(i + 1, n):
                dx = xi - x[j]
                dy = yi - y[j]
                f = core_f(dx * dx + dy * dy, 0.5 * (di + d2[j]), code)
                gj = g[j] * f
                ui -= gj * dy
                vi += gj * dx
                gf = gi * f
                u[j] += gf * dy
                v[j] -= gf * dx
            u[i] += ui
            v[i] += vi
        for i in range(n):
            u[i] /= 2.0 * math.pi
            v[i] /= 2.0 * math.pi

    @njit
    def cross_kernel(tx, ty, sx, sy, g, d2, code, u, v):
        m = tx.shape[0]
        n = sx.shape[0]
        for i in range(m):
            ui = 0.0
            vi = 0.0
            for j in range(n):
                dx = tx[i] - sx[j]
                dy = ty[i] - sy[j]
                f = g[j] * core_f(dx * dx + dy * dy, d2[j], code)
                ui -= f * dy
                vi += f * dx
            u[i] = ui / (2.0 * math.pi)
            v[i] = vi / (2.0 * math.pi)

    _numba_funcs = {"self": self_kernel, "cross": cross_kernel}
    return _numba_funcs


def _use_numba(backend: str) -> bool:
    if backend not in BACKENDS:
        raise ParameterError(f"vortex kernel: unknown backend {backend!r}; valid: "
                             f"{', '.join(BACKENDS)}")
    if backend == "numpy":
        return False
    funcs = _load_numba()
    if funcs is None and backend == "numba":
        raise ParameterError(f"vortex kernel: backend 'numba' asked but Numba is not "
                             f"importable ({_numba_error}); install 'cosim[fast]' or use "
                             "backend='numpy'")
    return funcs is not None


def _core_sq(core: Any, n: int, who: str) -> np.ndarray:
    d = np.broadcast_to(np.asarray(core, dtype=float), (n,))
    if d.size and not np.all(np.isfinite(d)):
        raise ParameterError(f"{who}: core radius must be finite, got NaN/inf")
    if d.size and np.any(d < 0.0):
        raise ParameterError(f"{who}: core radius must be >= 0, got {float(d.min())!r}")
    return np.ascontiguousarray(d * d)


def _points(a: Any, who: str, what: str) -> np.ndarray:
    p = np.asarray(a, dtype=float)
    if p.ndim != 2 or p.shape[1] != 2:
        raise ParameterError(f"{who}: {what} must have shape (N, 2), got {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ParameterError(f"{who}: {what} contain NaN or inf")
    return p


def _f_numpy(r2: np.ndarray, d2: np.ndarray, code: int) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        if code == 0:
            f = np.where(r2 > 0.0, 1.0 / r2, 0.0)
        elif code == 1:
            f = 1.0 / (r2 + d2)
            f[~np.isfinite(f)] = 0.0  # r = delta = 0
        elif code == 2:
            q = r2 / d2
            small = q < 1e-6
            f = np.where(small, (1.0 - 0.5 * q) / d2, -np.expm1(-q) / r2)
            f = np.where(d2 <= 0.0, np.where(r2 > 0.0, 1.0 / r2, 0.0), f)
            f = np.where((r2 <= 0.0) & (d2 > 0.0), 1.0 / d2, f)
            f[~np.isfinite(f)] = 0.0
        else:
            m = np.maximum(r2, d2)
            f = np.where(m > 0.0, 1.0 / m, 0.0)
    return f


def induced_velocity(targets: Any, sources: Any, gamma: Any, core: Any = 0.0,
                     model: str = "krasny", backend: str = "auto") -> np.ndarray:
    """Velocity ``(M, 2)`` induced at ``targets`` ``(M, 2)`` by vortices at ``sources``
    ``(N, 2)`` of circulation ``gamma`` ``(N,)`` [m²/s], core radius ``core`` (scalar or
    ``(N,)``, each source's own) [m].  A target on a source gets nothing from it."""
    who = "induced_velocity"
    t = _points(targets, who, "targets")
    s = _points(sources, who, "sources")
    g = np.asarray(gamma, dtype=float).reshape(-1)
    if g.shape[0] != s.shape[0]:
        raise ParameterError(f"{who}: {s.shape[0]} sources but {g.shape[0]} circulations")
    if not np.all(np.isfinite(g)):
        raise ParameterError(f"{who}: circulation contains NaN or inf")
    code = check_model(model, who)
    d2 = _core_sq(core, s.shape[0], who)
    out = np.zeros((t.shape[0], 2))
    if t.shape[0] == 0 or s.shape[0] == 0:
        return out
    if _use_numba(backend):
        u = np.empty(t.shape[0])
        v = np.empty(t.shape[0])
        _numba_funcs["cross"](np.ascontiguousarray(t[:, 0]), np.ascontiguousarray(t[:, 1]),
                              np.ascontiguousarray(s[:, 0]), np.ascontiguousarray(s[:, 1]),
                              np.ascontiguousarray(g), d2, code, u, v)
        out[:, 0], out[:, 1] = u, v
        return out
    for a in range(0, t.shape[0], _BLOCK):
        tb = t[a:a + _BLOCK]
        dx = tb[:, 0:1] - s[None, :, 0]
        dy = tb[:, 1:2] - s[None, :, 1]
        gf = g[None, :] * _f_numpy(dx * dx + dy * dy, d2[None, :], code)
        out[a:a + _BLOCK, 0] = -(gf * dy).sum(axis=1)
        out[a:a + _BLOCK, 1] = (gf * dx).sum(axis=1)
    out /= _TWO_PI
    return out


def self_induced(positions: Any, gamma: Any, core: Any = 0.0, model: str = "krasny",
                 backend: str = "auto") -> np.ndarray:
    """Velocity ``(N, 2)`` of each of ``N`` vortices induced by all the others (pair core
    :math:`\\delta_{ij}^2 = (\\delta_i^2 + \\delta_j^2)/2`, see the module docstring)."""
    who = "self_induced"
    p = _points(positions, who, "positions")
    n = p.shape[0]
    g = np.asarray(gamma, dtype=float).reshape(-1)
    if g.shape[0] != n:
        raise ParameterError(f"{who}: {n} vortices but {g.shape[0]} circulations")
    if not np.all(np.isfinite(g)):
        raise ParameterError(f"{who}: circulation contains NaN or inf")
    code = check_model(model, who)
    d2 = _core_sq(core, n, who)
    out = np.zeros((n, 2))
    if n < 2:
        return out
    if _use_numba(backend):
        u = np.empty(n)
        v = np.empty(n)
        _numba_funcs["self"](np.ascontiguousarray(p[:, 0]), np.ascontiguousarray(p[:, 1]),
                             np.ascontiguousarray(g), d2, code, u, v)
        out[:, 0], out[:, 1] = u, v
        return out
    for a in range(0, n, _BLOCK):
        pb = p[a:a + _BLOCK]
        dx = pb[:, 0:1] - p[None, :, 0]
        dy = pb[:, 1:2] - p[None, :, 1]
        r2 = dx * dx + dy * dy
        f = _f_numpy(r2, 0.5 * (d2[a:a + _BLOCK, None] + d2[None, :]), code)
        rows = np.arange(pb.shape[0])
        f[rows, a + rows] = 0.0  # no self-interaction
        gf = g[None, :] * f
        out[a:a + _BLOCK, 0] = -(gf * dy).sum(axis=1)
        out[a:a + _BLOCK, 1] = (gf * dx).sum(axis=1)
    out /= _TWO_PI
    return out


def naive_self_induced(positions: Any, gamma: Any, core: float = 0.0) -> np.ndarray:
    """Krasny-blob self-induction as a plain Python double loop (the benchmark's
    reference for small ``N``; same result as :func:`self_induced`)."""
    p = [tuple(map(float, q)) for q in np.asarray(positions, dtype=float)]
    g = [float(x) for x in np.asarray(gamma, dtype=float).reshape(-1)]
    d2 = float(core) ** 2
    out = []
    for i, (xi, yi) in enumerate(p):
        u = v = 0.0
        for j, (xj, yj) in enumerate(p):
            if i != j:
                dx, dy = xi - xj, yi - yj
                f = g[j] / (dx * dx + dy * dy + d2)
                u -= f * dy
                v += f * dx
        out.append((u / _TWO_PI, v / _TWO_PI))
    return np.array(out).reshape(-1, 2)
