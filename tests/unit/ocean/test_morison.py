"""Morison loads: per-length reference values, strip integration against closed forms.

Reference (anchors-domain.md 4.3, computed there): D = 6 m, H = 6 m, T = 10 s, deep water,
z = 0, rho = 1025, C_M = 2, C_D = 1: inertia amplitude 68.65 kN/m, drag amplitude
10.93 kN/m, KC = pi.
"""

import math

import numpy as np
import pytest

from blocks.ocean import (
    MorisonMember,
    MorisonMemberModel,
    RegularWave,
    keulegan_carpenter,
    morison_force,
    pile_inertia_base_shear,
)
from cosim.errors import ParameterError
from cosim.testing import BlockHarness


def test_per_length_reference_values():
    wv = RegularWave(6.0, 10.0, np.inf)
    a, w = wv.amplitude[0], wv.omega[0]
    # amplitudes from the kinematics: at x = 0 velocity peaks at t = 0, acceleration at T/4
    u = wv.kinematics([[0, 0, 0]], 0.0).velocity[0, 0]
    du = wv.kinematics([[0, 0, 0]], -2.5).acceleration[0, 0]
    assert u == pytest.approx(a * w) and du == pytest.approx(a * w * w)
    assert morison_force(0.0, du, 6.0, cd=1.0, ca=1.0) / 1e3 == pytest.approx(68.65, abs=5e-3)
    assert morison_force(u, 0.0, 6.0, cd=1.0, ca=1.0) / 1e3 == pytest.approx(10.93, abs=5e-3)
    assert keulegan_carpenter(u, 10.0, 6.0) == pytest.approx(math.pi, rel=1e-14)


def test_relative_motion_form():
    rho, D, cd, ca = 1025.0, 2.0, 0.8, 0.9
    A = math.pi * D * D / 4
    f = morison_force(1.5, 0.4, D, cd, ca, rho, xdot=0.5, xddot=-0.2)
    assert f == pytest.approx(rho * A * ((1 + ca) * 0.4 + ca * 0.2) + 0.5 * rho * cd * D * 1.0)
    # vector form: drag along the relative velocity with its Euclidean norm
    fv = morison_force([0.0, 3.0, 4.0], [0, 0, 0], D, cd, ca, rho)
    np.testing.assert_allclose(fv, 0.5 * rho * cd * D * 5.0 * np.array([0, 3.0, 4.0]))


@pytest.mark.parametrize("h", [30.0, 80.0])
def test_pile_inertia_base_shear_and_moment_match_the_closed_form(h):
    wv = RegularWave(6.0, 10.0, h)
    m = MorisonMemberModel(wv, 6.0, cd=1.0, ca=1.0, n_gauss=10, n_segments=2)
    # at eta = 0 (t = T/4, 3T/4) the surface is at the SWL and the drag is zero
    for t in (2.5, 7.5):
        F, M, wet = m.loads([0, 0, -h], [0, 0, 20.0], t, reference=[0, 0, -h])
        Fa, Ma = pile_inertia_base_shear(wv, 6.0, cm=2.0, t=t)
        assert wet == pytest.approx(h, rel=1e-12)
        assert F[0] == pytest.approx(Fa, rel=1e-12)
        assert M[1] == pytest.approx(Ma, rel=1e-12)
        assert abs(F[1]) + abs(F[2]) < 1e-6


def test_drag_base_shear_at_the_crest_to_the_swl():
    h, D, cd, rho = 40.0, 2.0, 1.2, 1025.0
    wv = RegularWave(4.0, 8.0, h)
    m = MorisonMemberModel(wv, D, cd=cd, ca=1.0, n_gauss=12, n_segments=4, wet_to="swl")
    F, _, _ = m.loads([0, 0, -h], [0, 0, 10.0], 0.0)
    a, w, k = wv.amplitude[0], wv.omega[0], wv.k[0]
    exact = 0.5 * rho * cd * D * (a * w) ** 2 / math.sinh(k * h) ** 2 * (
        math.sinh(2 * k * h) / (4 * k) + h / 2)
    assert F[0] == pytest.approx(exact, rel=1e-10)


def test_surface_cut_and_inclined_member():
    wv = RegularWave(6.0, 10.0, 50.0)
    m = MorisonMemberModel(wv, 1.0, cd=1.0, ca=1.0)
    _, _, wet_crest = m.loads([0, 0, -20.0], [0, 0, 10.0], 0.0)
    _, _, wet_trough = m.loads([0, 0, -20.0], [0, 0, 10.0], 5.0)
    assert wet_crest == pytest.approx(23.0, rel=1e-9) and wet_trough == pytest.approx(17.0)
    # an inclined member: the loads are normal to the axis
    F, _, wet = m.loads([0, 0, -20.0], [10.0, 0, 5.0], 1.0)
    e = np.array([10.0, 0, 25.0]) / math.hypot(10, 25)
    assert F @ e == pytest.approx(0.0, abs=1e-6 * np.linalg.norm(F))
    assert 0 < wet < math.hypot(10, 25)
    dry = m.loads([0, 0, 5.0], [0, 0, 10.0], 5.0)
    assert dry[2] == 0.0 and not dry[0].any()


def test_member_moving_with_the_water_has_no_drag_and_added_mass_reaction():
    wv = RegularWave(0.0, 10.0, 50.0)   # still water
    m = MorisonMemberModel(wv, 2.0, cd=1.0, ca=1.0)
    F, _, _ = m.loads([0, 0, -10.0], [0, 0, 0.0], 0.0, v1=[1, 0, 0], v2=[1, 0, 0],
                      a1=[0.5, 0, 0], a2=[0.5, 0, 0])
    ma = 1025 * math.pi * 4 / 4 * 1.0 * 10.0
    drag = 0.5 * 1025 * 1.0 * 2.0 * 1.0 * 10.0
    assert F[0] == pytest.approx(-ma * 0.5 - drag, rel=1e-12)
    M = m.added_mass_matrix([0, 0, -10.0], [0, 0, 0.0], reference=[0, 0, 0.0])
    assert M[0, 0] == pytest.approx(ma, rel=1e-12) and M[2, 2] == 0.0
    assert M[4, 4] == pytest.approx(1025 * math.pi * 1000 / 3, rel=1e-12)  # int z^2 dz ma/L


def test_block_fixed_and_rigid_body():
    wv = RegularWave(6.0, 10.0, 30.0)
    h = BlockHarness(MorisonMember("pile", wv, [0, 0, -30.0], [0, 0, 20.0], 6.0)).set_time(2.5)
    assert h.output("force")[0] == pytest.approx(pile_inertia_base_shear(wv, 6.0, 2.0, 2.5)[0],
                                                 rel=1e-12)
    blk = MorisonMember("m", wv, [0, 0, -20.0], [0, 0, 5.0], 2.0, motion="rigid_body")
    h = BlockHarness(blk).set_time(1.0)
    h.set_inputs(position=[3.0, 0, 0], rotation=[0, 0, 0.4], velocity=[0.2, 0, 0],
                 angular_velocity=[0, 0, 0.0])
    F, M, _ = MorisonMemberModel(wv, 2.0).loads([3.0, 0, -20.0], [3.0, 0, 5.0], 1.0,
                                                v1=[0.2, 0, 0], v2=[0.2, 0, 0],
                                                reference=[3.0, 0, 0])
    np.testing.assert_allclose(h.output("force"), F, rtol=1e-12)
    np.testing.assert_allclose(h.output("moment"), M, rtol=1e-12)
    assert "acceleration" not in blk.inputs
    assert "acceleration" in MorisonMember("m2", wv, [0, 0, -1], [0, 0, 1], 1.0,
                                           motion="rigid_body",
                                           include_added_mass=True).inputs


def test_bad_input():
    wv = RegularWave(1.0, 5.0)
    with pytest.raises(ParameterError, match="diameter must be > 0"):
        morison_force(1.0, 0.0, -1.0, 1.0)
    with pytest.raises(ParameterError, match="MorisonMember 'm': diameter = 0.0: expected .* > 0"):
        MorisonMember("m", wv, [0, 0, -1], [0, 0, 1], 0.0)
    with pytest.raises(ParameterError, match="coincide"):
        MorisonMember("m", wv, [0, 0, -1], [0, 0, -1], 1.0)
    with pytest.raises(ParameterError, match="motion must be"):
        MorisonMember("m", wv, [0, 0, -1], [0, 0, 1], 1.0, motion="free")
