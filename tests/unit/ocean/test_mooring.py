"""Catenary mooring: MoorPy's test cases, OC3-Hywind, regimes, systems, polynomial mooring.

References (anchors-domain.md 4.4):
* MoorPy tests/test_catenary.py, (x, z, L, EA, w, CB) -> (fAH, fAV, fBH, fBV, LBot):
  (400, 200, 500, 7.51e12, 800, 5) -> (0, 0, -96643.43501616362, -237751.75997440016,
  202.81030003199982); (89.9, 59.2, 130, 7.51e8, 881.05, -372.7) -> (31373.229006023103,
  -26650.341270116318, -31373.229006023103, -87886.15872988368, 0).
* OC3-Hywind line (Jonkman 2010): depth 320 m, fairlead 70 m below SWL at radius 5.2 m,
  anchor radius 853.87 m, L 902.2 m, w 698.094 N/m, EA 384.243e6 N -> HF 736.94 kN,
  VF 535.73 kN, |T| 911.09 kN, seabed contact 134.79 m (MoorPy, computed there).
Seed (seed-000-part1.md 13.3, Kreuzer & Ellermann): c1 = 33.4 kN/m, c2 = 2.9 kN/m^2,
c3 = 45.5 kN/m^3.
"""

import math

import numpy as np
import pytest

from blocks.ocean import (
    CatenaryError,
    CatenaryMooring,
    MooringLine,
    MooringSystem,
    PolynomialMooring,
    catenary,
    moorpy_catenary,
    polynomial_mooring_force,
)
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

OC3 = dict(length=902.2, ea=384.243e6, w=698.094)


@pytest.mark.parametrize("args, expected", [
    ((400, 200, 500, 7.51e12, 800, 5),
     (0, 0, -96643.43501616362, -237751.75997440016, 202.81030003199982)),
    ((89.9, 59.2, 130, 7.51e8, 881.05, -372.7),
     (31373.229006023103, -26650.341270116318, -31373.229006023103, -87886.15872988368, 0)),
])
def test_moorpy_cases(args, expected):
    got = moorpy_catenary(*args)
    assert got == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_oc3_hywind_undisplaced_line():
    s = catenary(853.87 - 5.2, 320.0 - 70.0, **OC3)
    assert s.regime == "seabed contact"
    assert s.h_fairlead / 1e3 == pytest.approx(736.94, abs=5e-3)
    assert s.v_fairlead / 1e3 == pytest.approx(535.73, abs=5e-3)
    assert s.tension_fairlead / 1e3 == pytest.approx(911.09, abs=5e-3)
    assert s.seabed_length == pytest.approx(134.79, abs=5e-3)
    assert s.iterations <= 10


def _span(sol, L, EA, w, cb):
    """Recompute (X, Z) from the solution with the closed-form profile equations."""
    H, V = sol.h_fairlead, sol.v_fairlead
    if sol.regime == "suspended":
        X = H / w * (math.asinh(V / H) - math.asinh((V - w * L) / H)) + H * L / EA
        Z = H / w * (math.hypot(1, V / H) - math.hypot(1, (V - w * L) / H)) \
            + (V * L - 0.5 * w * L * L) / EA
        return X, Z
    LB = L - V / w
    xb = LB - H / (cb * w) if cb > 0 else 0.0
    X = LB + H / w * math.asinh(V / H) + H * L / EA - 0.5 * cb * w / EA * (LB ** 2 -
                                                                           xb * max(xb, 0))
    Z = H / w * (math.hypot(1, V / H) - 1) + V * V / (2 * EA * w)
    return X, Z


@pytest.mark.parametrize("xf, zf, cb", [(848.67, 250.0, 0.0), (848.67, 250.0, 1.0),
                                        (880.0, 250.0, 0.5), (700.0, 250.0, 0.0),
                                        (870.0, 300.0, 0.0), (780.0, 250.0, 0.3)])
def test_solutions_satisfy_the_equations_and_stiffness_is_the_jacobian(xf, zf, cb):
    L, EA, w = OC3["length"], OC3["ea"], OC3["w"]
    s = catenary(xf, zf, L, EA, w, cb)
    X, Z = _span(s, L, EA, w, cb)
    assert X == pytest.approx(xf, abs=1e-7) and Z == pytest.approx(zf, abs=1e-7)
    d = 1e-3
    for j, (dx, dz) in enumerate(((d, 0), (0, d))):
        p = catenary(xf + dx, zf + dz, L, EA, w, cb)
        m = catenary(xf - dx, zf - dz, L, EA, w, cb)
        fd = [(p.h_fairlead - m.h_fairlead) / (2 * d), (p.v_fairlead - m.v_fairlead) / (2 * d)]
        np.testing.assert_allclose(s.stiffness[:, j], fd, rtol=1e-4, atol=1e-3)
    # friction: anchor tension H_F - C_B w L_B, never negative; balance along the seabed
    if s.seabed_length > 0:
        assert s.h_anchor == pytest.approx(max(s.h_fairlead - cb * w * s.seabed_length, 0))


def test_special_regimes():
    L, EA, w = 100.0, 1e9, 500.0
    s = catenary(30.0, 40.0, L, EA, w)                       # L >= XF + hanging: slack "L"
    assert s.regime == "slack L" and s.h_fairlead == 0.0
    assert s.v_fairlead == pytest.approx(w * 40.0, rel=1e-5)  # stretched by its weight
    assert s.seabed_length == pytest.approx(60.0, rel=1e-5)
    s = catenary(20.0, 40.0, L, EA, w, anchor_height=10.0)  # slack "U" between raised ends
    assert s.regime == "slack U" and s.v_anchor == pytest.approx(-w * 10.0, rel=1e-5)
    s = catenary(101.0, 0.0, L, EA, w)                        # on the seabed, taut
    assert s.regime == "on seabed" and s.h_fairlead == pytest.approx(0.01 * EA)
    s = catenary(0.0, 50.0, L, EA, w, anchor_height=100.0)    # vertical, slack
    assert s.regime == "vertical slack"
    assert s.v_fairlead - s.v_anchor == pytest.approx(w * L, rel=1e-12)
    s = catenary(0.0, 100.05, L, EA, w, anchor_height=10.0)   # vertical, taut
    assert s.regime == "vertical taut"
    assert s.v_fairlead - s.v_anchor == pytest.approx(w * L, rel=1e-12)
    # fairlead below the anchor: solved reversed, weight shared by both ends
    s = catenary(60.0, -20.0, L, EA, w, anchor_height=50.0)
    assert s.v_fairlead - s.v_anchor == pytest.approx(w * L, rel=1e-9)
    # taut, fully suspended line continuous across the touchdown
    a = catenary(848.67, 250.0, 890.0, 1e9, w)
    assert a.regime == "suspended" and a.v_anchor > 0


def test_errors_name_the_line_and_say_what_to_do():
    with pytest.raises(CatenaryError, match=r"catenary 'fwd' is too short to reach the anchor"
                                            r".*lengthen the line"):
        catenary(1100.0, 250.0, **OC3, name="fwd")
    with pytest.raises(ParameterError, match="w must be finite and > 0.*buoyant"):
        catenary(100.0, 50.0, 200.0, 1e9, -10.0)
    with pytest.raises(ParameterError, match="xf must be >= 0"):
        catenary(-1.0, 50.0, 200.0, 1e9, 10.0)
    with pytest.raises(CatenaryError, match="below the seabed"):
        catenary(100.0, -50.0, 200.0, 1e9, 10.0)
    with pytest.raises(CatenaryError, match="U-shaped contact is not supported"):
        catenary(150.0, 0.0, 165.0, 1e9, 10.0, anchor_height=10.0)


def test_oc3_system_balance_and_stiffness():
    ms = MooringSystem.symmetric(3, 320.0, 853.87, 5.2, -70.0, heading0=math.pi, **OC3)
    F, M, sols = ms.solve()
    assert np.allclose(F[:2], 0, atol=1e-6) and np.allclose(M, 0, atol=1e-4)
    assert -F[2] == pytest.approx(3 * sols[0].v_fairlead)
    K = ms.stiffness()
    assert K[0, 0] == pytest.approx(K[1, 1], rel=1e-4)   # three-fold symmetry (FD error)
    np.testing.assert_allclose(K, K.T, atol=1e-4 * np.abs(K).max())
    # surge: the restoring force is minus K11 times a small offset
    fx, fy, mz = ms.forces(x=0.05)
    assert fx == pytest.approx(-K[0, 0] * 0.05, rel=1e-3)
    # yaw: restoring moment
    assert ms.forces(heading=0.01)[2] < 0
    with pytest.raises(ParameterError, match="below the seabed"):
        MooringSystem([MooringLine((0, 0, -400.0), (0, 0, 0), 10, 1, 1)], 320.0)


def test_catenary_mooring_block():
    ms = MooringSystem.symmetric(3, 320.0, 853.87, 5.2, -70.0, **OC3)
    h = BlockHarness(CatenaryMooring("moor", ms))
    h.set_inputs(position=[2.0, -1.0, 0.0], heading=0.02)
    F, M, sols = MooringSystem.symmetric(3, 320.0, 853.87, 5.2, -70.0, **OC3).solve(
        [2.0, -1.0, 0.0], [0, 0, 0.02])
    np.testing.assert_allclose(h.output("force"), F, rtol=1e-9)
    np.testing.assert_allclose(h.output("moment"), M, rtol=1e-6, atol=1e-3)
    np.testing.assert_allclose(h.output("tensions"), [s.tension_fairlead for s in sols])


def test_polynomial_mooring_as_the_seed_writes_it():
    c1, c2, c3 = 33.4e3, 2.9e3, 45.5e3
    assert polynomial_mooring_force(2.0, c1, c2, c3) == pytest.approx(
        -(c1 * 2 + c2 * 4 + c3 * 8))
    assert polynomial_mooring_force(-2.0, c1, c2, c3) == pytest.approx(
        -(-c1 * 2 + c2 * 4 - c3 * 8))
    assert polynomial_mooring_force(-2.0, c1, c2, c3, even_term="signed") == pytest.approx(
        -polynomial_mooring_force(2.0, c1, c2, c3, even_term="signed"))
    h = BlockHarness(PolynomialMooring("pm", c1, c2, c3))
    h.set_input("x", 0.5)
    assert h.output("force") == pytest.approx(-(c1 * 0.5 + c2 * 0.25 + c3 * 0.125))
    with pytest.raises(ParameterError, match="even_term"):
        PolynomialMooring("pm", c1, even_term="cubic")
