"""Schwab & Meijaard swivel-wheel shimmy with the multibody engine against the analytic cubic.

Model (bench/multibody_refs.py, seed-000-part2 §10): one rigid body (mass m,
inertia m r^2 about G, r^2 = 0.21 l^2) with the hinge B driven along x at
speed v (slide driver), a lateral spring k at B, and the wheel centre A = B -
l e(phi) rolling without side slip (knife edge); G = B - (l - a) e(phi), a = |AG|.
Linearized about the steady motion, the engine's eigenvalues must be the
roots of  lambda^3 + (1 + mu) w lambda^2 + wn^2 lambda + w wn^2, stable exactly
for 0.3 < a/l < 0.7.
"""

import numpy as np
import pytest

from bench.multibody_refs import shimmy_cubic, shimmy_parameters
from blocks.multibody import Mechanism, driver
from blocks.multibody.analysis import linearize


def swivel(a_over_l, p=None):
    p = p or shimmy_parameters()
    a = a_over_l * p.l
    b = p.l - a
    m = Mechanism("shimmy", dim=2)
    body = m.add_body("caster", p.m, p.m * p.r2, (-b, 0.0), 0.0, velocity=(p.v, 0.0))
    body.marker("B", (b, 0.0))
    body.marker("A", (-a, 0.0))
    m.add_joint("slide_driver", "tow", "ground.O", "caster.B",
                fn=driver(lambda t: p.v * t, lambda t: p.v, lambda t: 0.0))
    m.add_joint("knife_edge", "wheel", "ground.O", "caster.A")
    m.add_force("strut", "caster.B", lambda P, V, t: (0.0, -p.k * P[1]))
    return m


def _eigs(a_over_l):
    m = swivel(a_over_l)
    lin = linearize(m, v0=[shimmy_parameters().v, 0.0, 0.0])
    ev = lin["eigenvalues"]
    assert lin["Nq"].shape[1] == 2 and lin["N"].shape[1] == 1  # (u, phi) and one speed
    return ev[np.lexsort((ev.real, ev.imag))]


@pytest.mark.parametrize("a_over_l", [0.1, 0.3, 0.5, 0.7, 0.9])
def test_linearized_eigenvalues_are_the_roots_of_the_cubic(a_over_l):
    np.testing.assert_allclose(_eigs(a_over_l), shimmy_cubic(a_over_l).roots, atol=1e-6)


def test_stable_exactly_between_three_and_seven_tenths():
    def growth(x):
        return float(np.max(_eigs(x).real))
    assert growth(0.29) > 1e-4 and growth(0.31) < -1e-4
    assert growth(0.69) < -1e-4 and growth(0.71) > 1e-4
