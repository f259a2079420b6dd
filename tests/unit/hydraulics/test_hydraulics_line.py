"""Hydraulic line: lumped parameters, resonances of the lumped chain, step response."""

import math

import numpy as np
import pytest

from blocks.hydraulics import Fluid, HydraulicLine, lumped_natural_frequencies_hz
from blocks.sources import Constant, Step
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

RHO, BETA, NU = 870.0, 1.5e9, 46e-6
OIL = Fluid(density_kg_m3=RHO, bulk_modulus=BETA, kinematic_viscosity_m2_s=NU)
LENGTH, D = 5.0, 0.01
AREA = math.pi * D**2 / 4
L_TOT = RHO * LENGTH / AREA                       # Pa s^2/m^3
R_TOT = 128 * RHO * NU * LENGTH / (math.pi * D**4)  # Pa s/m^3
C_TOT = AREA * LENGTH / BETA                      # m^3/Pa
C_WAVE = math.sqrt(BETA / RHO)
SIGMA = R_TOT / (2 * L_TOT)                       # = 16 nu / d^2
P0 = 50e5


def test_lumped_parameters_and_wave_speed():
    line = HydraulicLine("l", length_m=LENGTH, diameter_m=D, fluid=OIL)
    par = line.parameters_at(P0)
    assert par.inertance == pytest.approx(L_TOT, rel=1e-14)
    assert par.resistance == pytest.approx(R_TOT, rel=1e-14)
    assert par.capacitance == pytest.approx(C_TOT, rel=1e-14)
    assert par.wave_speed_m_s == pytest.approx(LENGTH / math.sqrt(L_TOT * C_TOT), rel=1e-14)
    assert par.quarter_wave_frequency_hz == pytest.approx(C_WAVE / (4 * LENGTH), rel=1e-14)
    assert SIGMA == pytest.approx(16 * NU / D**2, rel=1e-14)
    # a hose wall in series softens the line: c = sqrt(beta_e / rho)
    hose = HydraulicLine("h", length_m=LENGTH, diameter_m=D, fluid=OIL,
                         wall_bulk_modulus_pa=0.5e9)
    assert hose.beta_e(P0) == pytest.approx(1 / (1 / BETA + 1 / 0.5e9), rel=1e-14)


def jacobian(line, inputs):
    """Finite-difference Jacobian of the block's derivatives (exact: the model is linear)."""
    h = BlockHarness(line)
    h.set_inputs(**inputs)
    sizes = [s.size for s in line.continuous_states]
    x0 = np.concatenate([np.full(sizes[0], P0), np.full(sizes[1], 1e-5)])
    scale = np.concatenate([np.full(sizes[0], 1e3), np.full(sizes[1], 1e-7)])

    def f(x):
        h.set_state("p", x[:sizes[0]])
        h.set_state("q", x[sizes[0]:])
        return h.derivatives()
    cols = [(f(x0 + scale[i] * e) - f(x0 - scale[i] * e)) / (2 * scale[i])
            for i, e in enumerate(np.eye(x0.size))]
    return np.array(cols).T


def oscillatory_eigenvalues(jac):
    ev = np.linalg.eigvals(jac)
    ev = ev[ev.imag > 1e-6]
    return ev[np.argsort(ev.imag)]


def expected_eigenvalues(section, n):
    k = np.arange(1, n + 1)
    arg = k * np.pi / (2 * n) if section in ("pi", "T") else (2 * k - 1) * np.pi / (4 * n)
    w = 2 * n * C_WAVE / LENGTH * np.sin(arg)  # = 2/sqrt(L_s C_s) sin(...)
    return -SIGMA + 1j * np.sqrt(w**2 - SIGMA**2)  # increasing in k


@pytest.mark.parametrize("section, inputs", [
    ("pi", dict(q_a=0.0, q_b=0.0)),          # both ends blocked
    ("T", dict(p_a=P0, p_b=P0)),             # both end pressures held
    ("mixed", dict(p_a=P0, q_b=0.0)),        # fed at a, closed at b: the quarter-wave case
])
@pytest.mark.parametrize("n", [1, 2, 5])
def test_resonances_match_the_lumped_closed_form(section, inputs, n):
    line = HydraulicLine("l", length_m=LENGTH, diameter_m=D, fluid=OIL, section=section,
                         segments=n, p0_pa=P0)
    got = oscillatory_eigenvalues(jacobian(line, inputs))
    np.testing.assert_allclose(got, expected_eigenvalues(section, n), rtol=1e-7)
    f_undamped = np.abs(got) / (2 * math.pi)  # |s| = omega_k
    np.testing.assert_allclose(np.sort(f_undamped),
                               lumped_natural_frequencies_hz(line.parameters_at(P0), section,
                                                             n), rtol=1e-7)


def test_one_section_against_the_textbook_formulas_and_the_distributed_line():
    par = HydraulicLine("l", length_m=LENGTH, diameter_m=D, fluid=OIL).parameters_at(P0)
    # single pi-section, blocked ends: C/2 - L - C/2  =>  w = 2/sqrt(LC) = (2/pi) pi c/l
    (f_pi,) = lumped_natural_frequencies_hz(par, "pi", 1)
    assert 2 * math.pi * f_pi == pytest.approx(2 / math.sqrt(L_TOT * C_TOT), rel=1e-14)
    assert f_pi / par.half_wave_frequency_hz == pytest.approx(2 / math.pi, rel=1e-14)
    # mixed, fed at a and closed at b: L - C/2  =>  w = sqrt(2/(LC)), 90 % of c/(4l)
    (f_mix,) = lumped_natural_frequencies_hz(par, "mixed", 1)
    assert 2 * math.pi * f_mix == pytest.approx(math.sqrt(2 / (L_TOT * C_TOT)), rel=1e-14)
    assert f_mix / par.quarter_wave_frequency_hz == pytest.approx(
        2 * math.sqrt(2) / math.pi, rel=1e-14)
    # refining the chain converges to the distributed quarter-wave frequency, as 1 - x^2/6
    for n in (4, 16, 64):
        f1 = lumped_natural_frequencies_hz(par, "mixed", n)[0]
        x = math.pi / (4 * n)
        assert f1 / par.quarter_wave_frequency_hz == pytest.approx(1 - x**2 / 6, abs=x**4 / 100)


def test_mixed_line_step_response_matches_the_second_order_closed_form():
    # one section, fed by a pressure step at a, closed at b:
    #   L q' = p_a - p_b - R q,  (C/2) p_b' = q
    #   p_b = P0 + dP [1 - e^(-s t)(cos wd t + s/wd sin wd t)], s = R/2L, wd^2 = 2/(LC) - s^2
    dp, t_step = 10e5, 0.002
    b = DiagramBuilder("line_step")
    src = b.add(Step("src", time_s=t_step, initial=P0, final=P0 + dp, unit="Pa"))
    closed = b.add(Constant("closed", 0.0, unit="m^3/s"))
    line = b.add(HydraulicLine("line", length_m=LENGTH, diameter_m=D, fluid=OIL,
                               section="mixed", p0_pa=P0))
    b.connect(src.y, line.p_a_in)
    b.connect(closed.y, line.q_b_in)
    res = Simulator(b.build(), solver="radau", rtol=1e-10, atol=1e-6, dt=2e-4,
                    max_step=1e-4, record=["line.p_b", "line.q_a"]).run(0.1)
    wd = math.sqrt(2 / (L_TOT * C_TOT) - SIGMA**2)
    for t in np.arange(0.0, 0.1, 2e-4):
        tau = t - t_step
        exact = P0 if tau < 0 else P0 + dp * (1 - math.exp(-SIGMA * tau) * (
            math.cos(wd * tau) + SIGMA / wd * math.sin(wd * tau)))
        assert res.at("line.p_b", t) == pytest.approx(exact, abs=1e-6 * dp)
    # and the inflow is C/2 dp_b/dt of the closed form
    tau = 0.01 - t_step
    q_exact = C_TOT / 2 * dp * math.exp(-SIGMA * tau) * (SIGMA**2 / wd + wd) * math.sin(wd * tau)
    assert res.at("line.q_a", 0.01) == pytest.approx(q_exact, rel=1e-5)


def test_ports_depend_on_the_section():
    pi = HydraulicLine("a", length_m=1.0, diameter_m=0.01, section="pi", segments=3)
    assert set(pi.inputs) == {"q_a", "q_b"}
    assert set(pi.outputs) == {"p_a", "p_b", "p_nodes"}
    assert pi.output("p_nodes").shape == (4,)
    t = HydraulicLine("b", length_m=1.0, diameter_m=0.01, section="T", segments=3)
    assert set(t.inputs) == {"p_a", "p_b"} and set(t.outputs) == {"q_a", "q_b", "p_nodes"}
    m = HydraulicLine("c", length_m=1.0, diameter_m=0.01, section="mixed", segments=3)
    assert set(m.inputs) == {"p_a", "q_b"} and set(m.outputs) == {"q_a", "p_b", "p_nodes"}
    for blk in (pi, t, m):
        assert all(p.depends_on == frozenset() for p in blk.outputs.values())


def test_volume_balance_of_a_pi_line():
    # flows in and out change the stored mass only: sum(V_j p_j') = beta (q_a - q_b)
    line = HydraulicLine("l", length_m=LENGTH, diameter_m=D, fluid=OIL, segments=4, p0_pa=P0)
    h = BlockHarness(line)
    h.set_inputs(q_a=3e-4, q_b=1e-4)
    h.set_state("p", P0 + np.array([1e5, -2e5, 3e5, 0.0, 5e4]))
    h.set_state("q", np.array([1e-4, 2e-4, -1e-4, 5e-5]))
    dp = h.derivatives()[:5]
    assert np.dot(line.node_volumes, dp) == pytest.approx(BETA * 2e-4, rel=1e-12)
    assert line.node_volumes.sum() == pytest.approx(AREA * LENGTH, rel=1e-14)


@pytest.mark.parametrize("kw, match", [
    (dict(length_m=0.0, diameter_m=0.01), "length_m must be finite and > 0"),
    (dict(length_m=1.0, diameter_m=-0.01), "diameter_m must be finite and > 0"),
    (dict(length_m=1.0, diameter_m=0.01, section="Pi"), "section must be one of"),
    (dict(length_m=1.0, diameter_m=0.01, segments=0), "segments must be an int >= 1"),
    (dict(length_m=1.0, diameter_m=0.01, segments=2.0), "segments = 2.0: expected an integer"),
    (dict(length_m=1.0, diameter_m=0.01, wall_bulk_modulus_pa=0.0), "wall_bulk_modulus_pa"),
    (dict(length_m=1.0, diameter_m=0.01, p0_pa=10.0), "initial pressure p0_pa = 10.0 Pa"),
])
def test_bad_line_parameters(kw, match):
    with pytest.raises(ParameterError, match=match):
        HydraulicLine("l", **kw)
