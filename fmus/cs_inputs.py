"""A Co-Simulation FMU's inputs from the master's polynomials.

The master hands a subsystem one polynomial per input over the communication step
(:meth:`cosim.subsystem.Subsystem.set_inputs`: a tuple of floats for a scalar Real, an
array ``(order + 1, size)`` otherwise, held values for every non-Real type);
:class:`~fmus.subsystem.FMUSubsystem` sets their values (:func:`group_values`, through
:func:`poly_at`) and, for FMI 2 FMUs that interpolate, their time derivatives
(:func:`poly_derivative`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .instance import as_bytes, as_text

__all__ = ["group_values", "poly_at", "poly_derivative"]


def poly_at(c: Any, tau: float) -> Any:
    """Value of a master polynomial (tuple of floats or array (order+1, size)) at tau."""
    if isinstance(c, tuple):
        if tau == 0.0 or len(c) == 1:
            return c[0]
        acc = c[-1]
        for k in range(len(c) - 2, -1, -1):
            acc = acc * tau + c[k]
        return acc
    c = np.asarray(c)
    if c.ndim == 1:
        c = c.reshape(-1, 1)
    if len(c) == 1:  # held (every non-Real array): kept in its dtype
        return c[0].copy()
    c = c.astype(float)
    acc = c[-1].copy()
    for row in c[-2::-1]:
        acc = acc * tau + row
    return acc


def poly_derivative(c: Any, tau: float, k: int) -> Any:
    """k-th time derivative of the polynomial at tau (a float for a scalar polynomial given
    as a tuple of floats, else an array)."""
    if type(c) is tuple and all(type(x) is float for x in c):  # the same operations in floats
        out = 0.0
        for j in range(k, len(c)):
            out = out + c[j] * (math.factorial(j) / math.factorial(j - k)) * tau ** (j - k)
        return out
    rows = [np.atleast_1d(np.asarray(r, dtype=float)) for r in (
        c if isinstance(c, tuple) else np.asarray(c, dtype=float).reshape(len(c), -1))]
    out = np.zeros_like(rows[0])
    for j in range(k, len(rows)):
        out = out + rows[j] * (math.factorial(j) / math.factorial(j - k)) * tau ** (j - k)
    return out


def group_values(vs: list, polys: dict, held: dict, optional: Any,
                 tau: float) -> list | None:
    """The flat driver values of the input variables ``vs`` at ``tau`` into the step:
    each one's polynomial (``polys`` by port), or its start value ``held`` when it is
    unconnected (``optional``); None when a connected input has no polynomial yet.
    Integers pass exactly (never through float64), Booleans above 0.5."""
    vals: list = []
    for v in vs:
        c = polys.get(v.port)
        if c is None:
            if v.port not in optional:
                return None
            x = held[v.port]  # unconnected: its start value
        else:
            x = poly_at(c, tau)
        kind = v.kind
        if v.shape:  # integer arrays exact (never through float64)
            arr = np.asarray(x).ravel()
            vals.extend(arr.astype(float).tolist() if kind == "real" else
                        [int(round(a)) if kind == "int" else bool(a) for a in arr])
        elif kind == "real":
            vals.append(float(x) if type(x) is not float else x)
        elif kind == "int":  # exact: an integer is never passed through float64
            x = x.item() if isinstance(x, np.generic) else x
            vals.append(x if type(x) is int else int(round(float(np.ravel(x)[0]))))
        elif kind == "string":
            vals.append(x if type(x) is str else as_text(x, v))
        elif kind == "binary":
            vals.append(x if type(x) is bytes else as_bytes(x, v))
        else:
            x = x.item() if isinstance(x, np.generic) else x
            vals.append(x if type(x) is bool else bool(float(np.ravel(x)[0]) > 0.5))
    return vals
