"""Reel assembly: parameters, reference shaping, steady state, diagram structure."""

import math
from dataclasses import replace

import pytest

from blocks.paper.system import NipForceReference, ReelParameters, reel_diagram, steady_state
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

P = ReelParameters()
G = 9.81


def valve_flows(s, p1, p2, p):
    """Critically lapped 4/3 valve, turbulent edges + laminar leakage (written here again)."""
    k = p.valve_q_nominal_m3_s / math.sqrt(p.valve_dp_nominal_pa)
    g, ps, pt = p.valve_leakage_m3_s_pa, p.supply_pa, p.tank_pa
    root = lambda dp: math.copysign(math.sqrt(abs(dp)), dp)  # noqa: E731
    opn, neg = max(s, 0.0), max(-s, 0.0)
    q_a = k * opn * root(ps - p1) + g * (ps - p1) - k * neg * root(p1 - pt) - g * (p1 - pt)
    q_b = k * neg * root(ps - p2) + g * (ps - p2) - k * opn * root(p2 - pt) - g * (p2 - pt)
    return q_a, q_b


def test_parameters_derived_values():
    assert P.area_piston_m2 == pytest.approx(math.pi * 0.04 ** 2, rel=1e-15)
    assert P.area_annulus_m2 == pytest.approx(math.pi * (0.04 ** 2 - 0.0225 ** 2), rel=1e-14)
    assert P.roll_mass(2.5) == pytest.approx(1e4 + 750 * 6 * math.pi / 4 * (6.25 - 0.64))
    assert 20e3 < P.roll_mass(2.5) < 120e3                 # the seed's parent-reel range
    law = P.contact_law()
    k = 6.0 * law.stiffness(law.penetration(4000.0))
    m = 2 * 3000.0 + P.roll_mass(2.5)
    assert law.damping_n_s_m2 * 6.0 == pytest.approx(2 * 0.3 * math.sqrt(k * m), rel=1e-12)
    ff = G * (0.013 * 2000 + 0.0045 * (1000 + 0.5 * 3e4))
    assert P.friction_feedforward(3e4) == pytest.approx(ff, rel=1e-14)
    assert P.force_reference(4000.0, 3e4) == pytest.approx(12000.0 - ff, rel=1e-14)


def test_parameters_reject_bad_values_by_name():
    with pytest.raises(ParameterError, match="supply_pa"):
        replace(P, supply_pa=-1.0)
    with pytest.raises(ParameterError, match="rod_diameter_m"):
        replace(P, rod_diameter_m=0.09)
    with pytest.raises(ParameterError, match="web_speed_m_s"):
        replace(P, web_speed_m_s=math.nan)


def test_force_reference_block():
    h = BlockHarness(NipForceReference("ref", P))
    h.set_inputs(nip_ref=4000.0, roll_mass=3e4)
    assert h.output("force_ref_A") == h.output("force_ref_B") == P.force_reference(4000.0, 3e4)


def test_steady_state_satisfies_the_flow_and_force_balances():
    st = steady_state(P)
    d0 = P.initial_diameter_m
    vg = 80e-6 * 25.0 / (math.pi * d0)
    assert st.velocity_m_s == pytest.approx(vg, rel=1e-14)
    q_a, q_b = valve_flows(st.spool, st.p_piston_pa, st.p_annulus_pa, P)
    assert q_a == pytest.approx(P.area_piston_m2 * vg, rel=1e-6)
    assert q_b == pytest.approx(-P.area_annulus_m2 * vg, rel=1e-6)
    seal = P.cylinder_friction.force(vg)
    rod = st.p_piston_pa * P.area_piston_m2 - st.p_annulus_pa * P.area_annulus_m2 - seal
    assert rod == pytest.approx(-st.force_ref_n, rel=1e-9)
    assert st.command_v == pytest.approx(10.0 * st.spool, rel=1e-15)
    assert st.spool < 0.0            # port A (piston side) drains: the cylinder pulls
    # nip: the pull plus the rail friction, spread over the web
    assert st.nip_mean_n_m == pytest.approx(2 * (st.force_ref_n + st.friction_n) / 6.0,
                                            rel=1e-14)
    law = P.contact_law()
    x0 = 0.5 * (d0 + 1.5) - 1.05
    assert law.line_load(x0 - st.position_m, 0.0) == pytest.approx(st.nip_mean_n_m, rel=1e-12)


def test_reel_diagram_ports_and_fault_paths():
    d = reel_diagram("plant", P, leak_onset_s=5.0)
    assert set(d.inputs) == {"nip_ref", "web_speed"}
    for name in ("nip_A", "nip_B", "nip_mean", "force_A", "p1_B", "command_A", "spool_B", "x_A"):
        assert name in d.outputs
    assert "leak_ramp" in d.blocks and "leak" in d.blocks
    shadow = reel_diagram("shadow", P)
    assert "leak" not in shadow.blocks
    with pytest.raises(ParameterError, match="steady_state"):
        steady_state(replace(P, supply_pa=3e6))     # 12 kN cannot be pulled at 30 bar
