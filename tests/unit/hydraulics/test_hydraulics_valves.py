"""Valves: 4/3 spool flow maps for the three centre types, relief and check valves."""

import math

import numpy as np
import pytest

from blocks.hydraulics import CheckValve, Fluid, ReliefValve, SpoolValve43, regularized_sqrt
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

OIL = Fluid(density_kg_m3=870.0)
A_MAX, CD = 4e-5, 0.67
K = CD * A_MAX * math.sqrt(2 / 870.0)
PP, PT = 200e5, 1e5


def spool(lap, **kw):
    h = BlockHarness(SpoolValve43("v", area_max_m2=A_MAX, cd=CD, fluid=OIL, lap=lap, **kw))
    h.set_inputs(p_P=PP, p_T=PT)
    return h


def flows(h, u, pa, pb):
    h.set_inputs(u=u, p_A=pa, p_B=pb)
    return tuple(h.output(n) for n in ("q_A", "q_B", "q_P", "q_T"))


def expected(u, pa, pb, lap):
    """The flow map written out independently: edge openings times the turbulent law."""
    def a(s):
        return min(max((s - lap) / (1 - lap), 0.0), 1.0)
    u = min(max(u, -1.0), 1.0)
    q_pa = K * a(u) * math.sqrt(PP - pa)
    q_at = K * a(-u) * math.sqrt(pa - PT)
    q_pb = K * a(-u) * math.sqrt(PP - pb)
    q_bt = K * a(u) * math.sqrt(pb - PT)
    return q_pa - q_at, q_pb - q_bt, q_pa + q_pb, q_at + q_bt


GRID_U = [-1.3, -1.0, -0.6, -0.2, -0.05, 0.0, 0.05, 0.2, 0.6, 1.0, 1.2]
LOADS = [(120e5, 60e5), (60e5, 150e5), (100.5e5, 100.5e5)]


@pytest.mark.parametrize("lap, centre", [(0.0, "critical"), (0.1, "overlapped"),
                                         (-0.1, "underlapped")])
def test_flow_map_matches_the_edge_equations(lap, centre):
    h = spool(lap)
    assert h.block.centre == centre
    for u in GRID_U:
        for pa, pb in LOADS:
            got = flows(h, u, pa, pb)
            np.testing.assert_allclose(got, expected(u, pa, pb, lap), rtol=1e-13, atol=1e-18)
            q_a, q_b, q_p, q_t = got
            assert q_p == pytest.approx(q_a + q_b + q_t, rel=1e-12, abs=1e-18)


def test_centre_behaviour_at_null():
    pa = pb = 0.5 * (PP + PT)
    # critical centre: closed at u = 0, flow gain starts at once
    q = flows(spool(0.0), 0.0, 120e5, 60e5)
    assert q == (0.0, 0.0, 0.0, 0.0)
    assert flows(spool(0.0), 0.01, pa, pb)[0] == pytest.approx(
        K * 0.01 * math.sqrt(PP - pa), rel=1e-12)
    # overlapped: a dead band |u| <= lap with no flow at all
    for u in (-0.1, -0.05, 0.0, 0.07, 0.1):
        assert flows(spool(0.1), u, 120e5, 60e5) == (0.0, 0.0, 0.0, 0.0)
    # underlapped: open centre; at u = 0 with symmetric loads no net flow to A or B but a
    # leakage P -> T through all four edges, each open by -lap/(1 - lap)
    q_a, q_b, q_p, q_t = flows(spool(-0.1), 0.0, pa, pb)
    assert q_a == pytest.approx(0.0, abs=1e-18)
    assert q_b == pytest.approx(0.0, abs=1e-18)
    leak = 2 * K * (0.1 / 1.1) * math.sqrt(PP - pa)
    assert q_p == pytest.approx(leak, rel=1e-12)
    assert q_t == pytest.approx(leak, rel=1e-12)


def test_lim_valve_is_the_fully_underlapped_spool():
    # LIM: a_i = A kappa (P->1 and 2->T), a_o = A (1 - kappa), u = 2 kappa - 1, lap = -1
    h = spool(-1.0)
    kappa, p1, p2 = 0.3, 80e5, 90e5
    q_a, q_b, _, _ = flows(h, 2 * kappa - 1, p1, p2)
    assert q_a == pytest.approx(K * kappa * math.sqrt(PP - p1)
                                - K * (1 - kappa) * math.sqrt(p1 - PT), rel=1e-12)
    assert q_b == pytest.approx(K * (1 - kappa) * math.sqrt(PP - p2)
                                - K * kappa * math.sqrt(p2 - PT), rel=1e-12)


def test_catalogue_parametrization_and_leakage():
    qn, dpn = 30 / 60000, 35e5
    h = BlockHarness(SpoolValve43("v", q_nominal_m3_s=qn, dp_nominal_pa=dpn,
                                  leakage_m3_s_pa=1e-12))
    h.set_inputs(p_P=PT + dpn + 50e5, p_T=PT, p_A=PT + 50e5, p_B=PT + dpn, u=1.0)
    # P->A sees dp_N: the nominal flow plus leakage; A->T closed but leaks
    q_a = h.output("q_A")
    assert q_a == pytest.approx(qn + 1e-12 * dpn - 1e-12 * 50e5, rel=1e-12)


def test_relief_valve_characteristic():
    pc, pf = 100e5, 110e5
    rv = ReliefValve("rv", cracking_pressure_pa=pc, full_open_pressure_pa=pf,
                     area_max_m2=A_MAX, cd=CD, fluid=OIL)
    h = BlockHarness(rv)
    h.set_input("p_out", PT)

    def q(dp):
        h.set_input("p_in", PT + dp)
        return h.output("q")
    assert q(0.5 * pc) == 0.0 and q(pc) == 0.0 and q(-5e5) == 0.0
    assert q(pf) == pytest.approx(K * math.sqrt(pf), rel=1e-13)
    assert q(1.5 * pf) == pytest.approx(K * math.sqrt(1.5 * pf), rel=1e-13)
    x = 0.25
    assert q(pc + x * (pf - pc)) == pytest.approx(
        K * x * x * (3 - 2 * x) * math.sqrt(pc + x * (pf - pc)), rel=1e-13)
    # C^1 opening: one-sided slopes agree at cracking and at full opening
    for p_edge in (pc, pf):
        d = 1.0
        left = (q(p_edge) - q(p_edge - d)) / d
        right = (q(p_edge + d) - q(p_edge)) / d
        scale = K * math.sqrt(pf) / (pf - pc)  # typical slope of the opening ramp
        assert abs(left - right) < 1e-5 * scale
    dps = np.linspace(0, 2 * pf, 501)
    assert np.all(np.diff([q(d) for d in dps]) >= 0)


def test_check_valve_blocks_reverse_flow_except_leakage():
    cv = CheckValve("cv", cracking_pressure_pa=0.5e5, full_open_pressure_pa=2e5,
                    area_max_m2=A_MAX, cd=CD, fluid=OIL, leakage_m3_s_pa=1e-13)
    h = BlockHarness(cv)
    h.set_inputs(p_in=1e5, p_out=50e5)
    assert h.output("q") == pytest.approx(-1e-13 * 49e5, rel=1e-12)
    h.set_inputs(p_in=50e5, p_out=1e5)
    assert h.output("q") == pytest.approx(K * math.sqrt(49e5) + 1e-13 * 49e5, rel=1e-12)
    h.set_inputs(p_in=1.3e5, p_out=1e5)  # below cracking: leakage only
    assert h.output("q") == pytest.approx(1e-13 * 0.3e5, rel=1e-12)
    assert cv.flow(1.25e5) == pytest.approx(
        K * 0.5 * regularized_sqrt(1.25e5, cv.dp_tr) + 1e-13 * 1.25e5, rel=1e-12)


@pytest.mark.parametrize("make, match", [
    (lambda: SpoolValve43("v"), "give either area_max_m2"),
    (lambda: SpoolValve43("v", area_max_m2=1e-5, q_nominal_m3_s=1e-3, dp_nominal_pa=35e5),
     "exactly one of the two"),
    (lambda: SpoolValve43("v", q_nominal_m3_s=1e-3), "needs both q_nominal_m3_s"),
    (lambda: SpoolValve43("v", area_max_m2=1e-5, lap=1.0), r"lap must lie in \[-1, 1\)"),
    (lambda: ReliefValve("r", cracking_pressure_pa=100e5, full_open_pressure_pa=90e5,
                         area_max_m2=1e-5), "must exceed cracking_pressure_pa"),
    (lambda: CheckValve("c", area_max_m2=1e-5, leakage_m3_s_pa=-1.0), "leakage_m3_s_pa"),
])
def test_bad_valve_parameters(make, match):
    with pytest.raises(ParameterError, match=match):
        make()
