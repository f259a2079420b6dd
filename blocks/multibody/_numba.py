"""Optional Numba: ``njit`` (cached) when it is installed, the plain function otherwise."""

from __future__ import annotations

try:  # optional
    import numba
    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised where numba is absent
    numba = None
    HAVE_NUMBA = False


def _njit(f):
    return numba.njit(cache=True)(f) if HAVE_NUMBA else f


def _inline(f):
    """A small helper compiled into its callers (no call or reference-count overhead)."""
    return numba.njit(cache=True, inline="always")(f) if HAVE_NUMBA else f
