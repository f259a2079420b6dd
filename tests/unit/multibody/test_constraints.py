"""Constraint primitives and joints against finite differences at random states.

For every joint kind (planar and spatial): ``J = dPhi/dv`` against central
differences of ``Phi`` along ``q(eps) = displace(q, eps e_k)``, and
``gamma = -(Phi'')|_{v̇=0}`` against the second difference of ``Phi`` along
the exact constant-``v`` motion (integrated finely); Korkealaakso's check.
"""

import numpy as np
import pytest

from blocks.multibody import Mechanism, driver

RNG = np.random.default_rng(7)


def _planar(kind, **kw):
    m = Mechanism("p", dim=2)
    a = m.add_body("a", 2.0, 0.3, (0.2, -0.1), 0.4)
    b = m.add_body("b", 1.5, 0.2, (1.1, 0.3), -0.7)
    mi = a.marker("j", (0.5, 0.1), 0.3)
    mj = b.marker("j", (-0.4, 0.2), -0.2)
    m.add_joint(kind, "j", mi, mj, **kw)
    return m


def _spatial(kind, **kw):
    m = Mechanism("s", dim=3)
    a = m.add_body("a", 2.0, (0.3, 0.4, 0.5), (0.2, -0.1, 0.3), ((1, 2, 3), 0.4))
    b = m.add_body("b", 1.5, (0.2, 0.3, 0.25), (1.1, 0.3, -0.2), ((-1, 0.5, 2), 1.1))
    mi = a.marker("j", (0.5, 0.1, -0.2), ((0, 1, 1), 0.3))
    mj = b.marker("j", (-0.4, 0.2, 0.1), ((1, 0, 1), -0.5))
    m.add_joint(kind, "j", mi, mj, **kw)
    return m


def _drive():
    return driver(lambda t: 0.3 * np.sin(2 * t), lambda t: 0.6 * np.cos(2 * t),
                  lambda t: -1.2 * np.sin(2 * t))


CASES = [
    ("planar", "revolute", {}), ("planar", "prismatic", {}), ("planar", "fixed", {}),
    ("planar", "distance", {"length": 1.0}), ("planar", "angle_driver", {"fn": _drive()}),
    ("planar", "slide_driver", {"fn": _drive()}), ("planar", "distance_driver", {"fn": _drive()}),
    ("spatial", "spherical", {}), ("spatial", "universal", {}), ("spatial", "revolute", {}),
    ("spatial", "cylindrical", {}), ("spatial", "prismatic", {}), ("spatial", "planar", {}),
    ("spatial", "fixed", {}), ("spatial", "distance", {"length": 1.0}),
    ("spatial", "slide_driver", {"fn": _drive()}),
    ("planar", "path_driver", {"fn": lambda t: (np.array([0.5 + 0.1 * t * t, 0.2 * t]),
                                               np.array([0.2 * t, 0.2]), np.array([0.2, 0.0]))}),
    ("spatial", "path_driver", {"fn": lambda t: (np.array([0.5, 0.1 * t * t, 0.2 * t]),
                                                np.array([0.0, 0.2 * t, 0.2]),
                                                np.array([0.0, 0.2, 0.0]))}),
]


def _state(m):
    m.finalize()
    q = m.q0.copy()
    v = RNG.normal(size=m.nv)
    return q, v


@pytest.mark.parametrize("dim, kind, kw", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_jacobian_and_gamma_match_finite_differences(dim, kind, kw):
    m = (_planar if dim == "planar" else _spatial)(kind, **kw)
    q, v = _state(m)
    t = 0.37
    phi, J, phit, gamma = m.constraints(q, v, t)
    assert J.shape == (m.m, m.nv) and m.m == m.joints["j"].rows
    h = 1e-6
    Jfd = np.empty_like(J)
    for k in range(m.nv):
        e = np.zeros(m.nv)
        e[k] = h
        Jfd[:, k] = (m.constraints(m.displace(q, e), v, t)[0]
                     - m.constraints(m.displace(q, -e), v, t)[0]) / (2 * h)
    np.testing.assert_allclose(J, Jfd, atol=1e-7)
    phit_fd = (m.constraints(q, v, t + h)[0] - m.constraints(q, v, t - h)[0]) / (2 * h)
    np.testing.assert_allclose(phit, phit_fd, atol=1e-7)

    # Phi along the motion with constant v: q' = T(q) v, integrated by RK4 substeps
    def along(tau, n=200):
        qq, dt = q.copy(), tau / n
        for _ in range(n):
            k1 = m.qdot(qq, v)
            k2 = m.qdot(qq + 0.5 * dt * k1, v)
            k3 = m.qdot(qq + 0.5 * dt * k2, v)
            k4 = m.qdot(qq + dt * k3, v)
            qq = qq + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return m.constraints(qq, v, t + tau)[0]
    hh = 1e-3
    phidd = (along(hh) - 2 * phi + along(-hh)) / hh ** 2
    np.testing.assert_allclose(gamma, -phidd, atol=2e-5 * (1 + np.max(np.abs(gamma))))


@pytest.mark.parametrize("dim, kind, kw", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_compiled_kernel_equals_the_python_evaluation(dim, kind, kw):
    from blocks.multibody import fast
    if not fast.HAVE_NUMBA:
        pytest.skip("numba not installed")
    m = (_planar if dim == "planar" else _spatial)(kind, **kw)
    q, v = _state(m)
    q = q + RNG.normal(size=q.size) * 0.1
    for a, b in zip(m.constraints(q, v, 0.37), m.constraints_py(q, v, 0.37)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    assert m._tables is not None
