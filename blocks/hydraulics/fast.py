"""Compiled chamber-pressure rates of :class:`~blocks.hydraulics.ValveControlledCylinder`.

The same equations as :func:`~blocks.hydraulics.valves.spool_edge_flows`,
:meth:`~blocks.hydraulics.DoubleActingCylinder.pressure_rates` and the constant and
pressure-dependent bulk moduli (:func:`~blocks.hydraulics.orifice.regularized_sqrt`,
:func:`~blocks.hydraulics.valves.edge_opening` and
:func:`~blocks.hydraulics.volume.pressure_rate` compiled as they are), in one Numba
kernel with scalar arguments (one call per derivative instead of a dozen Python
calls).  Used when Numba is installed
(``pip install 'cosim[fast]'``) and the fluid's bulk modulus is one of those two;
otherwise, and to report errors (a chamber volume <= 0, a pressure beyond the bulk
modulus law), the block uses the Python functions.  The tests check that both agree to
rounding (the compiled code may fuse multiply-adds).
"""

from __future__ import annotations

try:  # optional
    import numba
    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised where numba is absent
    numba = None
    HAVE_NUMBA = False

from .orifice import regularized_sqrt  # noqa: E402
from .valves import edge_opening  # noqa: E402
from .volume import pressure_rate  # noqa: E402

#: bulk modulus kinds of the kernel
BETA_CONSTANT, BETA_PRESSURE = 0, 1
#: order of :func:`chamber_rates`' parameter array
PARAMETERS = ("pP", "pT", "k", "lap", "dp_tr", "g", "a_on_1", "A1", "A2", "V10", "V20",
              "stroke", "beta_kind", "c0", "c1", "p_min", "band")


def _njit(f):
    return numba.njit(cache=True)(f) if HAVE_NUMBA else f


def direct_call(kernel, *example):
    """``kernel``'s compiled function for the argument types of ``example`` (called once
    here: compiled, or loaded from the cache), called without Numba's dispatcher, which
    resolves the type of every argument on every call (~0.2 us of a ~0.45 us call of
    :func:`chamber_rates` with six arguments, four times per RK4 step).  Arguments are
    converted to the compiled signature's types (an int to a float, exactly);
    ``kernel`` itself without Numba or where the compiled function cannot be had."""
    kernel(*example)
    if not HAVE_NUMBA:
        return kernel
    try:
        return kernel.get_overload(tuple(kernel.typeof_pyval(a) for a in example))
    except Exception:  # noqa: BLE001 - a Numba without these: the dispatcher is correct
        return kernel


# the library's own scalar functions, compiled (one definition of each equation)
_rsqrt = _njit(regularized_sqrt)
_edge = _njit(edge_opening)
_rate = _njit(pressure_rate)


@_njit
def _beta(kind, c0, c1, p):
    if kind == BETA_CONSTANT:
        return c0
    den = c0 + 2.0 * c1 * p
    if den <= 0.0:
        return -1.0  # beyond the law: the caller reports it through the Python path
    return (1.0 + c0 * p + c1 * p * p) / den


@_njit
def chamber_rates(u, p1, p2, x, v, prm):
    """``(p_1', p_2', ok)``; ``ok`` is False where the Python path must raise.

    ``prm`` (float64 array, :data:`PARAMETERS` order): pP, pT, k, lap, dp_tr, g, a_on_1
    (1.0 or 0.0), A1, A2, V10, V20, stroke, beta_kind, c0, c1, p_min, band.
    """
    pP, pT, k, lap, dp_tr, g = prm[0], prm[1], prm[2], prm[3], prm[4], prm[5]
    a_on_1 = prm[6] != 0.0
    A1, A2, V10, V20, stroke = prm[7], prm[8], prm[9], prm[10], prm[11]
    beta_kind, c0, c1, p_min, band = int(prm[12]), prm[13], prm[14], prm[15], prm[16]
    u = min(max(u, -1.0), 1.0)
    a_pos = _edge(u, lap)
    a_neg = _edge(-u, lap)
    if a_on_1:
        pA, pB = p1, p2
    else:
        pA, pB = p2, p1
    q_pa = k * a_pos * _rsqrt(pP - pA, dp_tr) + g * (pP - pA)
    q_at = k * a_neg * _rsqrt(pA - pT, dp_tr) + g * (pA - pT)
    q_pb = k * a_neg * _rsqrt(pP - pB, dp_tr) + g * (pP - pB)
    q_bt = k * a_pos * _rsqrt(pB - pT, dp_tr) + g * (pB - pT)
    qa = q_pa - q_at
    qb = q_pb - q_bt
    if a_on_1:
        q1, q2 = qa, qb
    else:
        q1, q2 = qb, qa
    v1 = V10 + A1 * x
    v2 = V20 + A2 * (stroke - x)
    if not (v1 > 0.0 and v2 > 0.0):
        return 0.0, 0.0, False
    b1 = _beta(beta_kind, c0, c1, p1)
    b2 = _beta(beta_kind, c0, c1, p2)
    if b1 <= 0.0 or b2 <= 0.0:
        return 0.0, 0.0, False
    return (_rate(p1, b1, v1, q1 - A1 * v, p_min, band),
            _rate(p2, b2, v2, q2 + A2 * v, p_min, band), True)
