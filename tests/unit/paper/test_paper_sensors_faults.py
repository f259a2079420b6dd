"""Force sensor noise (seeded, band-limited, smooth in time) and fault injection blocks."""

import math

import numpy as np
import pytest

from blocks.paper.faults import FaultCase, FaultRamp
from blocks.paper.sensors import BandLimitedNoise, ForceSensor
from cosim.errors import ParameterError
from cosim.manipulators import Scenario
from cosim.testing import BlockHarness


def test_noise_is_reproducible_zero_mean_unit_variance_and_seed_dependent():
    t = np.arange(0.0, 2000.0, 0.02)
    n = BandLimitedNoise(5.0, seed=7)
    x = n(t)
    assert np.array_equal(x, BandLimitedNoise(5.0, seed=7)(t))
    assert n(t[617]) == pytest.approx(x[617], rel=1e-12)   # scalar and array paths agree
    assert abs(np.mean(x)) < 0.02
    assert np.std(x) == pytest.approx(1.0, abs=0.03)
    y = BandLimitedNoise(5.0, seed=8)(t)
    assert abs(np.corrcoef(x, y)[0, 1]) < 0.02


def test_noise_is_band_limited():
    dt, n_s = 0.02, 2 ** 17
    t = np.arange(n_s) * dt
    x = BandLimitedNoise(5.0, seed=3)(t) * np.hanning(n_s)
    p = np.abs(np.fft.rfft(x)) ** 2
    f = np.fft.rfftfreq(n_s, dt)
    assert p[f > 5.5].sum() / p.sum() < 1e-6
    assert p[(f > 0.5) & (f < 2.5)].sum() / p[(f > 2.5) & (f < 4.5)].sum() == pytest.approx(
        1.0, rel=0.25)   # flat spectrum in the band


def test_force_sensor_gain_bias_and_noise_switched_by_parameter():
    h = BlockHarness(ForceSensor("s", gain=-1.0, noise_bandwidth_hz=5.0, seed=11))
    h.set_input("force", -11000.0)
    h.set_time(3.7)
    assert h.output("measured") == 11000.0
    h.ctx.set_param(h.block.parameter("bias"), 25.0)
    h.ctx.set_param(h.block.parameter("noise_std"), 300.0)
    n = BandLimitedNoise(5.0, seed=11)
    assert h.output("measured") == pytest.approx(11025.0 + 300.0 * n(3.7), rel=1e-14)
    with pytest.raises(ParameterError, match="noise_std"):
        h.ctx.set_param(h.block.parameter("noise_std"), -1.0)


def test_sensor_and_noise_reject_bad_arguments_by_name():
    with pytest.raises(ParameterError, match="gain"):
        ForceSensor("s", gain=0.0)
    with pytest.raises(ParameterError, match="ForceSensor 's'.*bandwidth_hz"):
        ForceSensor("s", noise_bandwidth_hz=-5.0)
    with pytest.raises(ParameterError, match="n_components"):
        BandLimitedNoise(5.0, n_components=4)
    with pytest.raises(ParameterError, match="noise_std"):
        ForceSensor("s", noise_std_n=-3.0)


def test_fault_ramp_profile_and_time_events():
    ramp = FaultRamp("r", onset_s=10.0, ramp_s=5.0, magnitude=2.7e-6, unit="m^2")
    h = BlockHarness(ramp)
    for t, y in ((0.0, 0.0), (10.0, 0.0), (12.5, 1.35e-6), (15.0, 2.7e-6), (30.0, 2.7e-6)):
        h.set_time(t)
        assert h.output("y") == pytest.approx(y, rel=1e-14, abs=0.0)
    assert ramp.time_events[0].times == [10_000_000_000, 15_000_000_000]
    with pytest.raises(ParameterError, match="ramp_s"):
        FaultRamp("r", onset_s=1.0, ramp_s=0.0)


def test_fault_cases_validate_and_apply():
    with pytest.raises(ParameterError, match="kind"):
        FaultCase("broken_spool")
    with pytest.raises(ParameterError, match="leak_area_m2"):
        FaultCase("valve_leak", "leak")
    with pytest.raises(ParameterError, match="noise_std_n"):
        FaultCase("sensor_noise", "n", noise_std_n=-1.0)
    from blocks.paper.system import ReelParameters, reel_diagram
    from blocks.sources import Constant
    from cosim import DiagramBuilder
    p = ReelParameters()
    b = DiagramBuilder("root")
    ref = b.add(Constant("ref", 4000.0, unit="N/m"))
    web = b.add(Constant("web", 25.0, unit="m/s"))
    plant = b.add(reel_diagram("plant", p, leak_onset_s=1.0))
    b.connect(ref.y, plant.input("nip_ref"))
    b.connect(web.y, plant.input("web_speed"))
    d = b.build()
    ctx = d.create_context()
    assert FaultCase("valve_leak", "l", leak_area_m2=2e-6).apply(d, ctx, 1.0) == []
    assert ctx.param(d.find("plant/leak_ramp").parameter("magnitude")) == 2e-6
    man = FaultCase("rail_friction", "f", mu_static=0.06, mu_dynamic=0.058).apply(d, ctx, 1.0)
    assert len(man) == 1 and isinstance(man[0], Scenario)
    assert man[0].breakpoints() == [1_000_000_000]

    class FakeSim:
        pass
    sim = FakeSim()
    sim.ctx = ctx
    man[0].at_time(sim, 1_000_000_000)
    mech = d.find("plant/mech")
    assert ctx.param(mech.parameter("mu_static_carriage_A")) == 0.06
    assert ctx.param(mech.parameter("mu_dynamic_carriage_A")) == 0.058
    assert ctx.param(mech.parameter("mu_dynamic_carriage_B")) == 0.013
    assert math.isclose(ctx.param(d.find("plant/sensor_A").parameter("noise_std")), 0.0)
    # a plant built without the leak path cannot take the leak fault
    b = DiagramBuilder("root2")
    ref = b.add(Constant("ref", 4000.0, unit="N/m"))
    web = b.add(Constant("web", 25.0, unit="m/s"))
    plant = b.add(reel_diagram("plant", p))
    b.connect(ref.y, plant.input("nip_ref"))
    b.connect(web.y, plant.input("web_speed"))
    d2 = b.build()
    with pytest.raises(ParameterError, match="no leak path.*leak_onset_s"):
        FaultCase("valve_leak", "l", leak_area_m2=2e-6).apply(d2, d2.create_context(), 1.0)
