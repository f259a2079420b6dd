"""Tests of the blocks appended to blocks.math: RateLimiter, Relay, Abs, MinMax."""

from __future__ import annotations

import math

import numpy as np
import pytest

from blocks import Abs, MinMax, RateLimiter, Relay, Sine, Step
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness


def drive(block, inputs, port="y") -> list:
    h = BlockHarness(block)
    out = []
    for u in inputs:
        h.set_input("u", u)
        out.append(h.output(port))
        h.update()
    return out


def test_rate_limiter_slopes_harness():
    # rising 2/s, falling 1/s at T = 0.1: at most +0.2 / -0.1 per hit
    rl = RateLimiter("rl", rising_per_s=2.0, falling_per_s=1.0, period_s=0.1, initial=0.5)
    got = drive(rl, [10.0, 10.0, 0.95, 0.95, -5.0, -5.0, 0.0])
    np.testing.assert_allclose(got, [0.7, 0.9, 0.95, 0.95, 0.85, 0.75, 0.65],
                               atol=1e-14)


def test_rate_limiter_in_simulation_tracks_slowly_then_exactly():
    b = DiagramBuilder("rl")
    st = b.add(Step("st", 0.05, 1.0))
    rl = b.add(RateLimiter("rl", rising_per_s=4.0, falling_per_s=8.0, period_s=0.01))
    b.connect(st.y, rl.u)
    res = Simulator(b.build(), dt=0.01).run(0.5)
    y = res["rl.y"]
    slopes = np.diff(y) / np.diff(res.time)
    assert np.max(slopes) == pytest.approx(4.0)
    assert np.all(slopes <= 4.0 + 1e-9)
    assert res.at("rl.y", 0.05) == pytest.approx(0.04)  # first hit after the step
    assert res.at("rl.y", 0.3) == 1.0  # reached after 25 hits, then follows exactly


def test_rate_limiter_infinite_rate_disables_a_direction():
    rl = RateLimiter("rl", rising_per_s=math.inf, falling_per_s=1.0, period_s=0.5)
    assert drive(rl, [3.0, -3.0]) == [3.0, 2.5]


def test_relay_hysteresis():
    r = Relay("r", on_threshold=1.0, off_threshold=-1.0, on_value=5.0, off_value=-5.0,
              period_s=0.01)
    us = [0.0, 0.9, 1.0, 0.0, -0.9, -1.0, 0.5, 2.0]
    assert drive(r, us) == [-5.0, -5.0, 5.0, 5.0, 5.0, -5.0, -5.0, 5.0]
    r2 = Relay("r2", 1.0, -1.0, period_s=0.01, initial_on=True)
    assert drive(r2, [0.0, -2.0, 0.0]) == [1.0, 0.0, 0.0]


def test_relay_in_simulation_switches_at_sampled_thresholds():
    b = DiagramBuilder("relay")
    s = b.add(Sine("s", frequency_hz=1.0))
    r = b.add(Relay("r", 0.5, -0.5, period_s=0.01))
    b.connect(s.y, r.u)
    res = Simulator(b.build(), dt=0.01).run(1.0)
    on = res["r.y"] == 1.0
    first_on = res.time[np.argmax(on)]
    assert first_on == pytest.approx(0.09)  # first hit with sin(2 pi t) >= 0.5
    first_off = res.time[np.argmax((res.time > first_on) & ~on)]
    assert first_off == pytest.approx(0.59)  # first hit with sin <= -0.5


def test_abs_and_minmax():
    assert BlockHarness(Abs("a")).set_input("u", -2.5).output("y") == 2.5
    av = BlockHarness(Abs("av", shape=3)).set_input("u", [-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(av.output("y"), [1.0, 0.0, 2.0])
    h = BlockHarness(MinMax("m", "min", 3)).set_inputs(u0=2.0, u1=-1.0, u2=0.5)
    assert h.output("y") == -1.0
    h = BlockHarness(MinMax("m", "max", 3)).set_inputs(u0=2.0, u1=-1.0, u2=0.5)
    assert h.output("y") == 2.0
    hv = BlockHarness(MinMax("mv", "max", 2, shape=2))
    hv.set_inputs(u0=[1.0, 5.0], u1=[3.0, -1.0])
    np.testing.assert_array_equal(hv.output("y"), [3.0, 5.0])
    assert BlockHarness(MinMax("one", "min", 1)).set_input("u0", 4.0).output("y") == 4.0


@pytest.mark.parametrize("make", [
    lambda: RateLimiter("bad", -1.0, 1.0, 0.1),
    lambda: RateLimiter("bad", 1.0, math.nan, 0.1),
    lambda: RateLimiter("bad", 1.0, 1.0, 0.0),
    lambda: Relay("bad", -1.0, 1.0, period_s=0.1),  # off above on
    lambda: Relay("bad", 1.0, -1.0, period_s=-0.1),
    lambda: MinMax("bad", "median"),
    lambda: MinMax("bad", "min", 0),
])
def test_bad_parameters_raise_parameter_error_naming_the_block(make):
    with pytest.raises(ParameterError, match="'bad'"):
        make()
