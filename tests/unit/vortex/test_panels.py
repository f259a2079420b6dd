"""Panel bodies: no penetration, Kelvin, cylinder surface speed 2U sinθ, plate C_L = 2π α."""

import math

import numpy as np
import pytest

from blocks.vortex import PanelBody, rigid_motion
from cosim.errors import ParameterError


def test_cylinder_surface_speed_converges_to_2U_sin():
    errs = []
    for n in (16, 32, 64, 128):
        b = PanelBody.circle(0.5, n)
        sol = b.solve(b.at_rest(), (1.0, 0.0))
        th = np.arctan2(sol.bound_xy[:, 1], sol.bound_xy[:, 0])
        # potential flow: slip along the counter-clockwise tangent = -2 U sin(theta)
        errs.append(np.abs(b.slip_speed(sol) + 2.0 * np.sin(th)).max())
        assert abs(sol.bound_gamma.sum()) < 1e-13 and abs(sol.leak) < 1e-14
    # measured 2.0e-2, 5.7e-3, 1.5e-3, 3.9e-4: second order
    assert errs[-1] < 5e-4
    assert all(r > 3.5 for r in np.array(errs[:-1]) / errs[1:])


def test_no_penetration_to_round_off_with_free_vortices_and_motion():
    b = PanelBody.circle(0.5, 40, separation_deg=80)
    m = rigid_motion(b, (0.1, -0.2), 0.3, (0.2, 0.4), 0.7)
    rng = np.random.default_rng(0)
    fx = rng.uniform(1.0, 3.0, (30, 2))
    fg = rng.normal(size=30)
    sol = b.solve(m, (1.0, 0.1), fx, fg, 0.05, gamma_target=-fg.sum(), core_radius=0.05)
    res = b.normal_velocity_residual(sol, m, (1.0, 0.1), fx, fg, 0.05, core_radius=0.05)
    np.testing.assert_allclose(res, sol.leak, atol=1e-13)    # uniform leak only
    assert abs(sol.leak) < 1e-13                              # regular polygon: zero
    # Kelvin: bound + nascent + free = 0; Kutta: zero bound vortex at the shedding nodes
    total = sol.bound_gamma.sum() + sol.nascent_gamma.sum() + fg.sum()
    assert abs(total) < 1e-12
    np.testing.assert_allclose(sol.bound_gamma[list(b.shedding)], 0.0, atol=1e-15)


@pytest.mark.parametrize("n", [1, 4, 16])
@pytest.mark.parametrize("alpha_deg", [2.0, 5.0])
def test_steady_flat_plate_lift(n, alpha_deg):
    a = math.radians(alpha_deg)
    p = PanelBody.plate(1.0, n, a, shed=False)
    sol = p.solve(p.at_rest(), (1.0, 0.0), kelvin=False)
    cl = -2.0 * sol.bound_gamma.sum()   # L = rho U (-Gamma), C_L = L / (rho U^2 c / 2)
    assert cl == pytest.approx(2 * math.pi * math.sin(a), rel=1e-12)
    assert cl == pytest.approx(2 * math.pi * a, rel=2e-3)   # thin-airfoil 2 pi alpha
    res = p.normal_velocity_residual(sol, p.at_rest(), (1.0, 0.0))
    assert np.abs(res).max() < 1e-14


def test_inside_and_rigid_motion():
    b = PanelBody.circle(1.0, 32)
    m = rigid_motion(b, (2.0, 0.0), 0.5, (1.0, 0.0), 2.0)
    assert b.inside([[2.0, 0.1], [0.0, 0.0], [2.9, 0.0]], m.nodes).tolist() == [
        True, False, True]
    np.testing.assert_allclose(b.centroid_velocity(m), [1.0, 0.0], atol=1e-12)
    r = m.nodes - [2.0, 0.0]
    np.testing.assert_allclose(m.velocities, [1.0, 0.0] + 2.0 * np.column_stack(
        [-r[:, 1], r[:, 0]]), atol=1e-12)


def test_bad_inputs():
    sq = [[0, 0], [1, 0], [1, 1], [0, 1]]
    with pytest.raises(ParameterError, match="PanelBody 'sq': the polygon is not closed"):
        PanelBody(sq, name="sq")
    with pytest.raises(ParameterError, match="clockwise"):
        PanelBody([[0, 1], [1, 1], [1, 0], [0, 0], [0, 1]])
    with pytest.raises(ParameterError, match="at least 1 panel"):
        PanelBody([[0, 0]], kind="open")
    with pytest.raises(ParameterError, match="at least 3 panels"):
        PanelBody([[0, 0], [1, 0], [0, 0]])
    with pytest.raises(ParameterError, match="NaN"):
        PanelBody([[0, 0], [np.nan, 0]], kind="open")
    with pytest.raises(ParameterError, match="zero length"):
        PanelBody([[0, 0], [0, 0], [1, 0]], kind="open")
    with pytest.raises(ParameterError, match="sheds from its last node"):
        PanelBody([[0, 0], [1, 0], [2, 0]], kind="open", shedding=[0])
    with pytest.raises(ParameterError, match="n_panels"):
        PanelBody.circle(1.0, 0)
    b = PanelBody.circle(1.0, 8)
    with pytest.raises(ParameterError, match="NaN"):
        b.solve(rigid_motion(b, (0, 0), 0.0), (np.nan, 0.0))
