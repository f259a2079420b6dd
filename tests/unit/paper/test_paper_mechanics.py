"""Reel mechanics without the scheduler: mass matrix, nip forces, lever rule, friction, growth."""

import math

import numpy as np
import pytest

from blocks.hydraulics import CylinderFriction
from blocks.paper.nip import NipContactLaw
from blocks.paper.reel import RailFriction, ReelMechanics
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

LAW = NipContactLaw(k_a=2.85e7, exponent=1.086, damping_n_s_m2=1.8e5, damping_depth_m=5e-5)
GEOM = dict(web_width_m=6.0, bearing_span_m=7.2, drum_diameter_m=1.5, core_diameter_m=0.8,
            initial_diameter_m=2.5, web_thickness_m=80e-6, roll_density_kg_m3=750.0,
            spool_mass_kg=1e4, carriage_mass_kg=2000.0, sledge_mass_kg=1000.0, contact=LAW,
            carriage_friction=RailFriction(0.015, 0.013),
            sledge_friction=RailFriction(0.0045, 0.0045), centre_distance_at_zero_m=1.05)
G = 9.81


def harness(**kw):
    h = BlockHarness(ReelMechanics("mech", **{**GEOM, **kw}))
    h.set_inputs(force_A=0.0, force_B=0.0, web_speed=0.0)
    return h


def set_motion(h, gaps, vels):
    for i, s in enumerate("AB"):
        h.set_state(f"gap_{s}", gaps[i])
        h.set_state(f"v_{s}", vels[i])


def paper_mass(d):
    return 750.0 * 6.0 * math.pi / 4 * (d * d - 0.64)


def test_mass_matrix_gives_the_kinetic_energy_of_rod_and_carriages():
    m = ReelMechanics("m", **GEOM)
    d = 2.7
    mp = paper_mass(d)
    mr = 1e4 + mp
    j = 1e4 * (0.64 / 8 + 7.2 ** 2 / 12) + mp * ((d * d + 0.64) / 16 + 36.0 / 12)
    mm = m.mass_matrix(d, mp)
    rng = np.random.default_rng(3)
    for _ in range(5):
        va, vb = rng.normal(size=2)
        vc, psi_dot = 0.5 * (va + vb), (va - vb) / 7.2
        t = 0.5 * mr * vc ** 2 + 0.5 * j * psi_dot ** 2 + 0.5 * 3000.0 * (va ** 2 + vb ** 2)
        v = np.array([va, vb])
        assert 0.5 * v @ mm @ v == pytest.approx(t, rel=1e-13)


def test_uniform_penetration_gives_half_the_line_force_per_side_and_equilibrium():
    h = harness()
    delta = 2.8e-4
    set_motion(h, (-delta, -delta), (0.0, 0.0))
    q = LAW.line_load(delta, 0.0)
    for port in ("nip_A", "nip_B", "nip_mean"):
        assert h.output(port) == pytest.approx(q, rel=1e-13)
    assert h.output("nip_force") == pytest.approx(6.0 * q, rel=1e-13)
    # cylinder forces balancing the nip: no acceleration (v = 0: no friction, no growth)
    h.set_inputs(force_A=-3.0 * q, force_B=-3.0 * q)
    dx = h.derivatives()
    assert np.allclose(dx[:4], 0.0, atol=1e-12)


def test_generalized_nip_forces_are_the_resultant_and_moment_of_the_line_loads():
    h = harness()
    gaps = (-3.2e-4, -2.1e-4)          # side A pressed harder: the spool is tilted
    set_motion(h, gaps, (0.0, 0.0))
    mech = h.block
    d = h.output("diameter")
    acc = h.derivatives()[2:4]
    qa, qb = mech.mass_matrix(d, paper_mass(d)) @ acc   # = Q (no other forces)
    n = mech.n
    z = -3.0 + (np.arange(n) + 0.5) * 6.0 / n
    f = mech.element_loads(gaps, (0.0, 0.0), 0.0) * 6.0 / n
    assert qa + qb == pytest.approx(f.sum(), rel=1e-12)
    assert (qb - qa) * 7.2 / 2 == pytest.approx(f @ z, rel=1e-10)   # moment about the centre
    assert h.output("nip_force") == pytest.approx(f.sum(), rel=1e-13)
    # end loads: the law at the penetration of the contact-line ends (linear in z)
    pen = lambda zz: -((0.5 - zz / 7.2) * gaps[0] + (0.5 + zz / 7.2) * gaps[1])  # noqa: E731
    assert h.output("nip_A") == pytest.approx(LAW.line_load(pen(-3.0), 0.0), rel=1e-13)
    assert h.output("nip_B") == pytest.approx(LAW.line_load(pen(3.0), 0.0), rel=1e-13)
    assert h.output("nip_A") > h.output("nip_mean") > h.output("nip_B")


def test_discretized_line_force_converges_to_the_exact_integral_at_second_order():
    # penetration linear in z: the exact force is the integral of k (a + b z)^e
    gaps = (-3.2e-4, -2.1e-4)
    pa = -((0.5 + 3.0 / 7.2) * gaps[0] + (0.5 - 3.0 / 7.2) * gaps[1])
    pb = -((0.5 - 3.0 / 7.2) * gaps[0] + (0.5 + 3.0 / 7.2) * gaps[1])
    e = LAW.exponent
    exact = LAW.k_a * 6.0 * (pa ** (e + 1) - pb ** (e + 1)) / ((e + 1) * (pa - pb))
    errs = []
    for n in (6, 12, 24):
        h = harness(n_contact_elements=n)
        set_motion(h, gaps, (0.0, 0.0))
        errs.append(abs(h.output("nip_force") / exact - 1.0))
    assert errs[1] < 2e-5
    assert errs[0] / errs[1] == pytest.approx(4.0, rel=0.05)
    assert errs[1] / errs[2] == pytest.approx(4.0, rel=0.05)


def test_rail_friction_is_the_cylinder_friction_law_times_the_normal_load():
    fr = RailFriction(0.015, 0.013, stribeck_velocity_m_s=1e-4, tanh_velocity_m_s=2e-5,
                      viscous_n_s_m=50.0)
    ref = CylinderFriction(coulomb_n=0.013, static_n=0.015, stribeck_velocity_m_s=1e-4,
                           tanh_velocity_m_s=2e-5)
    for v in (-1e-3, -3e-5, 0.0, 1e-5, 2.5e-4, 0.01):
        assert fr.force(v, 2e4) == pytest.approx(2e4 * ref.force(v) + 50.0 * v, rel=1e-13,
                                                 abs=1e-12)
    assert fr.force(1e-3, 1e3, mu_static=0.06, mu_dynamic=0.058) == pytest.approx(
        1e3 * (0.058 + 0.002 * math.exp(-100.0)) * math.tanh(50.0) + 0.05, rel=1e-13)


def test_friction_outputs_use_carriage_and_sledge_normal_loads_and_tunable_coefficients():
    h = harness()
    v = 2.5e-4
    set_motion(h, (-2.8e-4, -2.8e-4), (v, -v))
    mr = 1e4 + paper_mass(2.5)
    s = math.exp(-(v / 1e-4) ** 2)
    th = math.tanh(v / 2e-5)
    fa = (2000 * G * (0.013 + 0.002 * s) + (1000 + mr / 2) * G * 0.0045) * th
    assert h.output("friction_A") == pytest.approx(fa, rel=1e-12)
    assert h.output("friction_B") == pytest.approx(-fa, rel=1e-12)
    h.ctx.set_param(h.block.parameter("mu_dynamic_carriage_A"), 0.058)
    h.ctx.set_param(h.block.parameter("mu_static_carriage_A"), 0.06)
    fa2 = (2000 * G * (0.058 + 0.002 * s) + (1000 + mr / 2) * G * 0.0045) * th
    assert h.output("friction_A") == pytest.approx(fa2, rel=1e-12)
    assert h.output("friction_B") == pytest.approx(-fa, rel=1e-12)   # side B unchanged


def test_growth_kinematics_and_variable_mass_momentum():
    h = harness()
    vw, length = 25.0, 3000.0
    h.set_input("web_speed", vw)
    h.set_state("wound_length", length)
    gaps, vels = (-2.8e-4, -2.9e-4), (3e-4, 2e-4)
    set_motion(h, gaps, vels)
    d = math.sqrt(2.5 ** 2 + 4 * 80e-6 * length / math.pi)
    dd = 2 * 80e-6 * vw / (math.pi * d)
    assert h.output("diameter") == pytest.approx(d, rel=1e-14)
    assert h.output("roll_mass") == pytest.approx(1e4 + paper_mass(d), rel=1e-13)
    xz = 0.5 * (d + 1.5) - 1.05
    assert h.output("x_A") == pytest.approx(gaps[0] + xz, rel=1e-14)
    dx = h.derivatives()
    assert dx[0] == pytest.approx(vels[0] - dd / 2, rel=1e-13)
    assert dx[1] == pytest.approx(vels[1] - dd / 2, rel=1e-13)
    assert dx[4] == vw
    # M a = Q - dM/dt v, dM/dt from a finite difference of M along the wound length
    mech = h.block
    hl = 1e-2
    m_of = lambda ll: mech.mass_matrix(*mech.roll(ll))  # noqa: E731
    mdot = (m_of(length + hl) - m_of(length - hl)) / (2 * hl) * vw
    mm = m_of(length)
    q_nip = np.array([np.sum(mech.element_loads(gaps, vels, dd) * mech.alpha),
                      np.sum(mech.element_loads(gaps, vels, dd) * mech.beta)]) * 6.0 / mech.n
    friction = np.array([h.output("friction_A"), h.output("friction_B")])
    expected = np.linalg.solve(mm, q_nip - friction - mdot @ np.array(vels))
    assert dx[2:4] == pytest.approx(expected, rel=1e-7)


def test_mechanics_rejects_bad_parameters_by_name():
    with pytest.raises(ParameterError, match="bearing_span_m"):
        ReelMechanics("m", **{**GEOM, "bearing_span_m": 5.0})
    with pytest.raises(ParameterError, match="carriage_mass_kg"):
        ReelMechanics("m", **{**GEOM, "carriage_mass_kg": -1.0})
    with pytest.raises(ParameterError, match="initial_diameter_m"):
        ReelMechanics("m", **{**GEOM, "initial_diameter_m": 0.5})
    with pytest.raises(ParameterError, match="n_contact_elements"):
        ReelMechanics("m", **{**GEOM, "n_contact_elements": 1})
    with pytest.raises(ParameterError, match="contact"):
        ReelMechanics("m", **{**GEOM, "contact": None})
    with pytest.raises(ParameterError, match="x0_m and v0_m_s need two values"):
        ReelMechanics("m", **GEOM, x0_m=1.0)
    with pytest.raises(ParameterError, match="mu_static"):
        RailFriction(-0.1, 0.01)
    # default start: the roll touches the drum without load
    h = BlockHarness(ReelMechanics("m", **GEOM))
    h.set_inputs(force_A=0.0, force_B=0.0, web_speed=0.0)
    assert h.output("nip_force") == 0.0
    assert h.output("x_A") == pytest.approx(0.5 * (2.5 + 1.5) - 1.05, rel=1e-15)
    h = harness()
    with pytest.raises(ParameterError, match="mech.mu_dynamic_carriage_A"):
        h.ctx.set_param(h.block.parameter("mu_dynamic_carriage_A"), -0.01)
