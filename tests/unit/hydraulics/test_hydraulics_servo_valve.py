"""Servo valve: Bode identification, spool step response, flows shared with SpoolValve43."""

import math

import numpy as np
import pytest

from blocks.hydraulics import (
    Fluid,
    ServoValve,
    SpoolValve43,
    bode_minus_90_estimate,
    identify_from_bode,
)
from blocks.sources import Constant, Step
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

OIL = Fluid(density_kg_m3=870.0)
FN, ZETA = 85.0, 0.55
FREQS = np.geomspace(3.0, 250.0, 25)


def bode(freqs, fn, zeta):
    """Independent reference: G(j w) evaluated with complex arithmetic."""
    s, wn = 2j * np.pi * np.asarray(freqs), 2 * np.pi * fn
    g = wn**2 / (s**2 + 2 * zeta * wn * s + wn**2)
    return 20 * np.log10(np.abs(g)), np.degrees(np.angle(g))


def test_fit_recovers_exact_parameters_from_exact_data():
    gain, phase = bode(FREQS, FN, ZETA)
    fit = identify_from_bode(FREQS, gain, phase)
    assert fit.natural_frequency_hz == pytest.approx(FN, rel=1e-9)
    assert fit.damping == pytest.approx(ZETA, rel=1e-9)
    assert fit.natural_frequency_rad_s == pytest.approx(2 * math.pi * FN, rel=1e-9)
    assert fit.rms_gain_db < 1e-9 and fit.rms_phase_deg < 1e-9


def test_minus_90_degree_rule_of_the_seed():
    # at w_n the phase is -90 deg and |G| = 1/(2 zeta); on a dense grid the interpolated
    # reading is close, on the 25-point catalogue grid it is only approximate
    dense = np.geomspace(40.0, 160.0, 2001)
    fn, zeta = bode_minus_90_estimate(dense, *bode(dense, FN, ZETA))
    assert fn == pytest.approx(FN, rel=1e-5)
    assert zeta == pytest.approx(ZETA, rel=1e-4)
    fn, zeta = bode_minus_90_estimate(FREQS, *bode(FREQS, FN, ZETA))
    assert fn == pytest.approx(FN, rel=0.02) and zeta == pytest.approx(ZETA, rel=0.05)


def test_fit_with_noise_recovers_the_parameters_better_than_the_minus_90_rule():
    # noise 0.1 dB and 1 deg (reading a printed diagram); over 200 seeds the fitted
    # f_n scatters by 0.25 % (1 sigma) and zeta by 0.6 %: the bounds below are 5-6 sigma
    gain, phase = bode(FREQS, FN, ZETA)
    err_fit, err_90 = [], []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        g = gain + rng.normal(0.0, 0.1, FREQS.size)
        p = phase + rng.normal(0.0, 1.0, FREQS.size)
        fit = identify_from_bode(FREQS, g, p)
        assert fit.natural_frequency_hz == pytest.approx(FN, rel=0.015)
        assert fit.damping == pytest.approx(ZETA, rel=0.035)
        assert 0.05 < fit.rms_gain_db < 0.2 and 0.5 < fit.rms_phase_deg < 1.6  # ~ the noise
        err_fit.append((fit.natural_frequency_hz / FN - 1, fit.damping / ZETA - 1))
        fn90, z90 = bode_minus_90_estimate(FREQS, g, p)
        err_90.append((fn90 / FN - 1, z90 / ZETA - 1))
    rms_fit = np.sqrt(np.mean(np.square(err_fit), axis=0))
    rms_90 = np.sqrt(np.mean(np.square(err_90), axis=0))
    assert np.all(rms_fit < rms_90)


def test_fit_without_a_minus_90_crossing_starts_from_a_grid():
    f = np.geomspace(2.0, 60.0, 15)  # phase stays above -90 deg
    gain, phase = bode(f, FN, 0.8)
    assert bode_minus_90_estimate(f, gain, phase) is None
    fit = identify_from_bode(f, gain, phase)
    assert fit.natural_frequency_hz == pytest.approx(FN, rel=1e-7)
    assert fit.damping == pytest.approx(0.8, rel=1e-7)


@pytest.mark.parametrize("args, match", [
    (([1, 2], [0, 0], [0, -1]), "at least 3 points"),
    (([1, 2, 3], [0, 0], [0, -1, -2]), "same length"),
    (([0, 2, 3], [0, 0, 0], [0, -1, -2]), "freqs_hz must be finite and > 0"),
    (([1, 2, 3], [0, 0, 0], [0, 90, 180]), "phase lag as a negative angle"),
])
def test_bad_bode_data(args, match):
    with pytest.raises(ParameterError, match=match):
        identify_from_bode(*args)


def _step_diagram(zeta, final_a, t_step=0.01):
    b = DiagramBuilder("servo_step")
    cmd = b.add(Step("cmd", time_s=t_step, final=final_a, unit="A"))  # converted to mA
    valve = b.add(ServoValve("sv", natural_frequency_hz=FN, damping=zeta, rated_command=10.0,
                             command_unit="mA", area_max_m2=2e-5, cd=0.67, fluid=OIL))
    for port, p in (("p_P", 200e5), ("p_T", 1e5), ("p_A", 80e5), ("p_B", 60e5)):
        c = b.add(Constant(f"c_{port}", p, unit="Pa"))
        b.connect(c.y, valve.inputs[port])
    b.connect(cmd.y, valve.command)
    return b.build()


@pytest.mark.parametrize("zeta", [0.3, 0.7])
def test_spool_step_response_matches_the_second_order_closed_form(zeta):
    t_step, u = 0.01, 0.8  # 8 mA of a 10 mA valve
    res = Simulator(_step_diagram(zeta, 8e-3, t_step), solver="radau", rtol=1e-10,
                    atol=1e-12, dt=2e-4, max_step=1e-3, record=["sv.spool", "sv.q_A"]).run(0.06)
    wn = 2 * math.pi * FN
    wd = wn * math.sqrt(1 - zeta**2)
    for t in np.arange(0.0, 0.06, 2e-4):
        tau = t - t_step
        exact = 0.0 if tau < 0 else u * (1 - math.exp(-zeta * wn * tau) * (
            math.cos(wd * tau) + zeta / math.sqrt(1 - zeta**2) * math.sin(wd * tau)))
        assert res.at("sv.spool", t) == pytest.approx(exact, abs=1e-7)
    # peak overshoot of the closed form
    peak = res["sv.spool"].max()
    assert peak == pytest.approx(u * (1 + math.exp(-zeta * math.pi / math.sqrt(1 - zeta**2))),
                                 rel=1e-3)


def test_flows_are_the_spool_valve_map_at_the_spool_position():
    sv = ServoValve("sv", natural_frequency_hz=FN, damping=ZETA, area_max_m2=2e-5, cd=0.67,
                    fluid=OIL, lap=-0.05, leakage_m3_s_pa=1e-13)
    ref = BlockHarness(SpoolValve43("ref", area_max_m2=2e-5, cd=0.67, fluid=OIL, lap=-0.05,
                                    leakage_m3_s_pa=1e-13))
    h = BlockHarness(sv)
    names = ("q_A", "q_B", "q_P", "q_T")
    for x in (-1.2, -0.4, 0.0, 0.03, 0.5, 1.0, 1.3):
        h.set_state("spool", [x, 0.0])
        for pa, pb in ((80e5, 60e5), (150e5, 20e5)):
            h.set_inputs(p_P=200e5, p_T=1e5, p_A=pa, p_B=pb, command=0.3)
            ref.set_inputs(p_P=200e5, p_T=1e5, p_A=pa, p_B=pb, u=x)
            assert [h.output(n) for n in names] == [ref.output(n) for n in names]
    # the flows feed through from the pressures only, not from the command
    for n in names:
        assert sv.output(n).depends_on == frozenset({"p_P", "p_T", "p_A", "p_B"})
    assert sv.output("spool").depends_on == frozenset()


def test_command_is_saturated_at_the_rated_value():
    h = BlockHarness(ServoValve("sv", natural_frequency_hz=FN, damping=ZETA, rated_command=10.0,
                                command_unit="V", area_max_m2=2e-5))
    h.set_state("spool", [0.2, 0.5])
    wn = 2 * math.pi * FN
    for cmd, u in ((25.0, 1.0), (-25.0, -1.0), (5.0, 0.5)):
        h.set_input("command", cmd)
        np.testing.assert_allclose(h.derivatives(),
                                   [0.5, wn**2 * (u - 0.2) - 2 * ZETA * wn * 0.5], rtol=1e-14)


def test_from_bode_builds_the_fitted_valve():
    gain, phase = bode(FREQS, FN, ZETA)
    sv = ServoValve.from_bode("sv", FREQS, gain, phase, q_nominal_m3_s=1e-3, dp_nominal_pa=35e5)
    assert sv.wn == pytest.approx(2 * math.pi * FN, rel=1e-9)
    assert sv.zeta == pytest.approx(ZETA, rel=1e-9)


@pytest.mark.parametrize("kw, match", [
    (dict(natural_frequency_hz=0.0, damping=0.5, area_max_m2=1e-5), "natural_frequency_hz"),
    (dict(natural_frequency_hz=50.0, damping=-0.1, area_max_m2=1e-5), "damping"),
    (dict(natural_frequency_hz=50.0, damping=0.5, area_max_m2=1e-5, rated_command=0.0),
     "rated_command"),
    (dict(natural_frequency_hz=50.0, damping=0.5, area_max_m2=1e-5, command_unit="mAmp"),
     "command_unit 'mAmp'"),
    (dict(natural_frequency_hz=50.0, damping=0.5, area_max_m2=1e-5, spool0=1.5), "spool0"),
    (dict(natural_frequency_hz=50.0, damping=0.5), "give either area_max_m2"),
    (dict(natural_frequency_hz=50.0, damping=0.5, area_max_m2=1e-5, lap=1.0), "lap must lie"),
])
def test_bad_servo_valve_parameters(kw, match):
    with pytest.raises(ParameterError, match=match):
        ServoValve("sv", **kw)
