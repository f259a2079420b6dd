"""Write hooks: overrides, fault injection and scripted scenarios."""

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.math import Gain
from blocks.sources import Constant, Sine
from cosim import (
    DiagramBuilder,
    Noise,
    Offset,
    Override,
    Scale,
    Scenario,
    Simulator,
    StuckAt,
)


def _sensor_chain():
    """sine 'sensor' -> gain -> integrator; overrides act on the sensor output."""
    b = DiagramBuilder("chain")
    s = b.add(Sine("sensor", 1.0, 1.0))
    g = b.add(Gain("g", 2.0))
    i = b.add(Integrator("i"))
    b.connect(s.y, g.u)
    b.connect(g.y, i.u)
    return b.build()


def _run(*manips, t_end=1.0):
    return Simulator(_sensor_chain(), solver="rk4", dt=1e-3, record=["sensor.y", "g.y", "i.y"],
                     manipulators=list(manips)).run(t_end)


def test_stuck_at_freezes_the_signal_downstream_sees_it():
    res = _run(StuckAt("sensor.y", 0.25, start_s=0.5, stop_s=0.75))
    t = res.time
    win = (t >= 0.5) & (t < 0.75)
    assert np.all(res["sensor.y"][win] == 0.25)
    np.testing.assert_allclose(res["g.y"][win], 0.5)
    np.testing.assert_allclose(res["sensor.y"][t < 0.5], np.sin(2 * np.pi * t[t < 0.5]),
                               atol=1e-12)
    # integral: sin part outside the window + 0.25 * 2 * 0.25 inside
    w = 2 * np.pi
    exact = 2 * ((1 - np.cos(w * 0.5)) / w + 0.25 * 0.25 + (np.cos(w * 0.75) - np.cos(w)) / w)
    assert res["i.y"][-1] == pytest.approx(exact, abs=1e-10)


def test_offset_and_scale_faults():
    res = _run(Offset("sensor.y", 0.1, start_s=0.2))
    t = res.time
    np.testing.assert_allclose(res["sensor.y"][t >= 0.2], np.sin(2 * np.pi * t[t >= 0.2]) + 0.1,
                               atol=1e-12)
    res = _run(Scale("sensor.y", 0.5))
    np.testing.assert_allclose(res["g.y"], np.sin(2 * np.pi * res.time), atol=1e-12)


def test_noise_is_seeded_and_reproducible():
    a = _run(Noise("sensor.y", 0.01, seed=3), t_end=0.1)
    b = _run(Noise("sensor.y", 0.01, seed=3), t_end=0.1)
    c = _run(Noise("sensor.y", 0.01, seed=4), t_end=0.1)
    np.testing.assert_array_equal(a["sensor.y"], b["sensor.y"])
    assert not np.array_equal(a["sensor.y"], c["sensor.y"])
    dev = a["sensor.y"] - np.sin(2 * np.pi * a.time)
    assert 0.005 < np.std(dev) < 0.02


def test_override_with_function_and_stacking():
    res = _run(Override("sensor.y", lambda t, v: 2 * v), Offset("sensor.y", 1.0))
    np.testing.assert_allclose(res["sensor.y"], 2 * np.sin(2 * np.pi * res.time) + 1.0,
                               atol=1e-12)


def test_override_of_a_fused_linear_output():
    res = _run(StuckAt("g.y", 3.0))
    assert res["i.y"][-1] == pytest.approx(3.0, abs=1e-12)


def test_scenario_changes_parameters_and_states_at_exact_times():
    b = DiagramBuilder("sc")
    c = b.add(Constant("c", 1.0))
    i = b.add(Integrator("i"))
    b.connect(c.y, i.u)
    d = b.build()
    ctx = d.create_context()
    sc = Scenario([(0.3333, lambda sim: sim.ctx.set_param("c.value", 2.0)),
                   (0.5, lambda sim: sim.ctx.set_state(i.x, 0.0))])
    res = Simulator(d, ctx, solver="rk4", dt=0.01, record=["i.y"], manipulators=[sc]).run(1.0)
    # 0.5 s after the reset at rate 2
    assert res["i.y"][-1] == pytest.approx(1.0, abs=1e-12)
    assert res.at("i.y", 0.49) == pytest.approx(0.3333 + 2 * (0.49 - 0.3333), abs=1e-12)
