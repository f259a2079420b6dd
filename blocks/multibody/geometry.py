"""Rotations: planar angles and Euler parameters (unit quaternions).

Euler parameters ``p = (e0, e1, e2, e3)`` with ``|p| = 1`` give the rotation
matrix (body to global)

.. math:: A(p) = (2 e_0^2 - 1) I + 2 (e e^T + e_0 \\tilde e)

and the kinematics with the body-frame angular velocity ``w'``:

.. math:: \\dot p = \\tfrac12 L(p)^T w', \\qquad L(p) = [-e,\\; -\\tilde e + e_0 I]

(Nikravesh, Computer-Aided Analysis of Mechanical Systems, ch. 6).

The functions here, and the kinematics, constraint primitives and force elements built on
them, also accept complex arguments and keep the imaginary parts (no ``abs``, norms or
``float()`` on such data): :func:`blocks.multibody.analysis.linearize` differentiates them by
complex step, ``f'(x) = Im f(x + i h) / h``.
"""

from __future__ import annotations

import math

import numpy as np


def scalar(x):
    """A NumPy scalar as a Python float (cheaper arithmetic), or unchanged if complex
    (complex-step differentiation: module docstring)."""
    return x if isinstance(x, complex) else float(x)


def cross(a, b) -> np.ndarray:
    """``a x b`` for 3-vectors (much cheaper than ``np.cross`` on single vectors)."""
    a0, a1, a2 = a
    b0, b1, b2 = b
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def tilde(a) -> np.ndarray:
    """The skew matrix with ``tilde(a) @ b = a x b``."""
    x, y, z = a
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def rot2(theta: float) -> np.ndarray:
    """Planar rotation matrix."""
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, -s], [s, c]])


ROT90 = np.array([[0.0, -1.0], [1.0, 0.0]])  # d rot2 / d theta = rot2 @ ROT90


def quat_matrix(p) -> np.ndarray:
    """``A(p)`` for Euler parameters (normalized first: ``p / sqrt(p . p)``)."""
    if getattr(p, "dtype", None) is not None and p.dtype.kind == "c":
        e0, e1, e2, e3 = p / np.sqrt(p @ p)  # complex step: analytic normalization
    else:
        e0, e1, e2, e3 = np.asarray(p, float) / math.sqrt(float(np.dot(p, p)))
    return np.array([
        [2 * (e0 * e0 + e1 * e1) - 1, 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)],
        [2 * (e1 * e2 + e0 * e3), 2 * (e0 * e0 + e2 * e2) - 1, 2 * (e2 * e3 - e0 * e1)],
        [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), 2 * (e0 * e0 + e3 * e3) - 1]])


def quat_rate(p, w_body) -> np.ndarray:
    """``p' = 1/2 L(p)^T w'``."""
    e0, e1, e2, e3 = p
    wx, wy, wz = w_body
    return 0.5 * np.array([-e1 * wx - e2 * wy - e3 * wz,
                           e0 * wx - e3 * wy + e2 * wz,
                           e3 * wx + e0 * wy - e1 * wz,
                           -e2 * wx + e1 * wy + e0 * wz])


def quat_from_matrix(A) -> np.ndarray:
    """Euler parameters of a rotation matrix (Shepperd's method), ``e0 >= 0``."""
    A = np.asarray(A, float)
    tr = np.trace(A)
    cands = [tr, A[0, 0], A[1, 1], A[2, 2]]
    k = int(np.argmax(cands))
    if k == 0:
        e0 = 0.5 * math.sqrt(1 + tr)
        p = [e0, (A[2, 1] - A[1, 2]) / (4 * e0), (A[0, 2] - A[2, 0]) / (4 * e0),
             (A[1, 0] - A[0, 1]) / (4 * e0)]
    elif k == 1:
        e1 = 0.5 * math.sqrt(1 + 2 * A[0, 0] - tr)
        p = [(A[2, 1] - A[1, 2]) / (4 * e1), e1, (A[1, 0] + A[0, 1]) / (4 * e1),
             (A[0, 2] + A[2, 0]) / (4 * e1)]
    elif k == 2:
        e2 = 0.5 * math.sqrt(1 + 2 * A[1, 1] - tr)
        p = [(A[0, 2] - A[2, 0]) / (4 * e2), (A[1, 0] + A[0, 1]) / (4 * e2), e2,
             (A[2, 1] + A[1, 2]) / (4 * e2)]
    else:
        e3 = 0.5 * math.sqrt(1 + 2 * A[2, 2] - tr)
        p = [(A[1, 0] - A[0, 1]) / (4 * e3), (A[0, 2] + A[2, 0]) / (4 * e3),
             (A[2, 1] + A[1, 2]) / (4 * e3), e3]
    p = np.array(p)
    return -p if p[0] < 0 else p


def quat_axis_angle(axis, angle: float) -> np.ndarray:
    """Euler parameters of a rotation by ``angle`` about ``axis``."""
    a = np.asarray(axis, float)
    a = a / np.linalg.norm(a)
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * a])
