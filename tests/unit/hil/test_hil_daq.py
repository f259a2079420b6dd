"""hil.daq: ChannelSpec, the DaqDevice checks and the deterministic SimulatedDaq."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

import hil.daq.simulated
from cosim.errors import UnitError
from hil.daq import (
    ChannelKindError,
    ChannelRangeError,
    ChannelSpec,
    DaqError,
    SimulatedDaq,
    UnknownChannel,
)
from hil.errors import BackendError

LSB16 = 20 / 65535


def ch(name, kind, rng=None, unit=None, bits=None):
    return ChannelSpec(name, kind, rng, unit, bits)


def make(**kw):
    channels = [
        ch("ao0", "ao", (-10, 10), "V", 16),
        ch("ao1", "ao", (-10, 10), "V", 16),
        ch("ai0", "ai", (-10, 10), "V", 16),
        ch("ai1", "ai", (-5, 5), "V", 16),
        ch("do0", "do"),
        ch("di0", "di"),
        ch("ctr0", "counter"),
        ch("ctr1", "counter", bits=4),
        ch("pwm0", "pwm_out", (0, 10_000), "Hz"),
        ch("fin0", "frequency_in", (0, 5_000), "Hz"),
    ]
    kw.setdefault("wiring", {"ao0": "ai0", "ao1": "ai1", "do0": ["di0", "ctr1"],
                             "pwm0": ["ctr0", "fin0"]})
    return SimulatedDaq(channels, **kw).open()


# ----------------------------------------------------------------- quantization
def test_16bit_codes_exact():
    s = ch("ao0", "ao", (-10, 10), "V", 16)
    assert s.lsb == pytest.approx(LSB16, rel=1e-15)
    # (1 + 10) / 20 * 65535 = 36044.25 -> 36044
    assert s.to_code(1.0) == 36044
    assert s.from_code(36044) == pytest.approx(-10 + 36044 * LSB16, abs=1e-12)
    assert s.from_code(36044) == pytest.approx(0.9999237048905165, abs=1e-12)
    assert abs(s.quantize(1.0) - 1.0) <= LSB16 / 2
    assert s.to_code(-10) == 0 and s.to_code(10) == 65535
    assert s.from_code(0) == -10 and s.from_code(65535) == pytest.approx(10, abs=1e-12)
    assert s.to_code(0.0) == 32768  # 32767.5 rounds half up
    assert s.to_code(123.0) == 65535  # clipped first
    with pytest.raises(ValueError, match="outside 0..65535"):
        s.from_code(65536)


def test_quantization_error_at_most_half_lsb():
    s = ch("ao0", "ao", (-10, 10), "V", 16)
    v = np.linspace(-10, 10, 2001)
    err = np.array([s.quantize(x) for x in v]) - v
    assert np.max(np.abs(err)) <= LSB16 / 2 + 1e-12


def test_loopback_ao_ai_within_one_lsb():
    daq = make()
    for v in (-10.0, -3.3, 0.0, 1.0, 2.5, 7.777, 10.0):
        daq.write({"ao0": v})
        assert daq.read(["ao0"])["ao0"] == pytest.approx(v, abs=LSB16 / 2 + 1e-12)
        assert abs(daq.read(["ai0"])["ai0"] - v) <= LSB16
    daq.write({"ao0": 1.0})
    assert daq.read("ai0") == {"ai0": pytest.approx(0.9999237048905165, abs=1e-12)}


def test_read_all_inputs_in_declaration_order():
    daq = make()
    assert list(daq.read()) == ["ai0", "ai1", "di0", "ctr0", "ctr1", "fin0"]
    assert list(daq.read(["fin0", "ai0"])) == ["fin0", "ai0"]


# ------------------------------------------------------------------------ noise
def test_noise_statistics_and_reproducibility():
    std = 0.05
    a = make(noise={"ai0": std}, seed=42)
    a.write({"ao0": 1.0})
    xs = np.array([a.read(["ai0"])["ai0"] for _ in range(10_000)])
    assert abs(xs.std(ddof=1) / std - 1) < 0.03
    assert abs(xs.mean() - 1.0) < 4 * std / math.sqrt(len(xs))
    # quantized: every sample is on the ADC grid
    codes = (xs + 10) / LSB16
    assert np.max(np.abs(codes - np.round(codes))) < 1e-6
    b = make(noise={"ai0": std}, seed=42)
    b.write({"ao0": 1.0})
    ys = np.array([b.read(["ai0"])["ai0"] for _ in range(10_000)])
    assert np.array_equal(xs, ys)
    c = make(noise={"ai0": std}, seed=43)
    c.write({"ao0": 1.0})
    assert not np.array_equal(xs[:100], [c.read(["ai0"])["ai0"] for _ in range(100)])


def test_noise_stream_independent_of_other_reads():
    a = make(noise={"ai0": 0.1, "ai1": 0.1}, seed=1)
    b = make(noise={"ai0": 0.1, "ai1": 0.1}, seed=1)
    xa = [a.read(["ai0"])["ai0"] for _ in range(50)]
    xb = []
    for _ in range(50):
        b.read(["ai1"])
        xb.append(b.read(["ai0"])["ai0"])
    assert xa == xb


# ------------------------------------------------------------------- saturation
def test_saturation_at_range_ends_is_counted():
    daq = make()
    daq.write({"ao1": 7.0})  # ai1 is +-5 V
    assert daq.read(["ai1"])["ai1"] == pytest.approx(5.0, abs=1e-12)
    daq.write({"ao1": -9.0})
    assert daq.read(["ai1"])["ai1"] == -5.0
    assert daq.counters.saturations == 2 and daq.counters.saturated == {"ai1": 2}
    daq.write({"ao1": 4.0})
    daq.read(["ai1"])
    assert daq.counters.saturations == 2


def test_noise_near_full_scale_saturates_some_samples():
    daq = make(noise={"ai0": 0.1}, seed=3)
    daq.write({"ao0": 10.0})
    xs = np.array([daq.read(["ai0"])["ai0"] for _ in range(2000)])
    top = np.sum(np.isclose(xs, 10.0, atol=LSB16 / 4))
    assert xs.max() == pytest.approx(10.0, abs=1e-12)
    # above 10 V: saturated; within half an LSB below: the top code without saturating
    sat = daq.counters.saturated["ai0"]
    assert 900 < sat <= top < sat + 10 and 900 < top < 1100  # about half


# -------------------------------------------------------------- digital, edges
def test_do_to_di_and_edge_counting_with_wrap():
    daq = make()
    assert daq.read(["di0", "ctr1"]) == {"di0": False, "ctr1": 0}
    daq.write({"do0": True})
    assert daq.read(["di0"])["di0"] is True
    daq.write({"do0": True})  # no new edge
    daq.write({"do0": 0})
    assert daq.read(["di0", "ctr1"]) == {"di0": False, "ctr1": 1}
    for _ in range(4):
        daq.write({"do0": 1})
        daq.write({"do0": 0})
    assert daq.read(["ctr1"])["ctr1"] == 5
    daq.reset("ctr1")
    assert daq.read(["ctr1"])["ctr1"] == 0
    for _ in range(17):
        daq.write({"do0": 1})
        daq.write({"do0": 0})
    assert daq.read(["ctr1"])["ctr1"] == 17 % 16  # 4-bit counter wraps


def test_set_input_for_unwired_inputs():
    daq = SimulatedDaq([ch("ai0", "ai", (0, 5), "V", 12), ch("di0", "di")]).open()
    assert daq.read() == {"ai0": 0.0, "di0": False}
    daq.set_input("ai0", 2.5)
    daq.set_input("di0", True)
    r = daq.read()
    assert abs(r["ai0"] - 2.5) <= 5 / 4095 / 2 and r["di0"] is True
    wired = make()
    with pytest.raises(ValueError, match="wired from ao0"):
        wired.set_input("ai0", 1.0)


# ------------------------------------------------------------------------- PWM
def test_pwm_edges_counted_over_time():
    daq = make()
    assert daq.read(["ctr0", "fin0"]) == {"ctr0": 0, "fin0": 0.0}
    daq.write({"pwm0": (0.5, 1000.0)})  # rising edges at 0, 1 ms, 2 ms, ...
    assert daq.read(["ctr0"])["ctr0"] == 1
    daq.advance(0.0105)
    assert daq.read(["ctr0"])["ctr0"] == 11  # edges at 0..10 ms
    daq.write({"pwm0": (0.25, 2000.0)})  # takes effect at the period end, 11 ms
    daq.advance(0.0095)  # t = 20 ms: new edges at 11 + 0.5 k ms, k = 0..18
    assert daq.read(["ctr0"])["ctr0"] == 11 + 19
    daq.reset("ctr0")
    assert daq.read(["ctr0"])["ctr0"] == 0
    daq.advance(0.1)
    assert daq.read(["ctr0"])["ctr0"] == 200
    daq.write({"pwm0": (0.0, 2000.0)})  # duty 0: no more edges
    daq.advance(1.0)
    assert daq.read(["ctr0", "fin0"]) == {"ctr0": 200, "fin0": 0.0}
    assert daq.read(["pwm0"])["pwm0"] == (0.0, 2000.0)


def test_pwm_long_run_count_exact():
    daq = make()
    daq.write({"pwm0": (0.5, 1234.0)})
    for _ in range(1000):
        daq.advance(0.001)
    # edges at k / 1234 s for k = 0 .. floor(1.0 * 1234)
    assert daq.read(["ctr0"])["ctr0"] == 1235


def test_frequency_measured_with_timebase():
    daq = make()  # 100 MHz timebase
    daq.write({"pwm0": (0.5, 1000.0)})
    assert daq.read(["fin0"])["fin0"] == 1000.0
    coarse = make(timebase_hz=1e6)
    coarse.write({"pwm0": (0.5, 3000.0)})
    f = coarse.read(["fin0"])["fin0"]
    assert f == 1e6 / 333 and f == pytest.approx(3003.003003, abs=1e-6)
    coarse.write({"pwm0": (0.5, 8000.0)})  # above fin0's 5 kHz range: saturates
    assert coarse.read(["fin0"])["fin0"] == 5000.0
    assert coarse.counters.saturated == {"fin0": 1}


def test_pwm_duty_resolution_and_external_clock():
    t = [0.0]
    daq = SimulatedDaq([ch("pwm0", "pwm_out", (0, 1e4), "Hz", 8), ch("ctr0", "counter")],
                       wiring={"pwm0": "ctr0"}, clock=lambda: t[0]).open()
    daq.write({"pwm0": (0.3, 100.0)})
    assert daq.read(["pwm0"])["pwm0"] == (77 / 255, 100.0)  # 76.5 rounds half up
    t[0] = 0.5
    assert daq.read(["ctr0"])["ctr0"] == 51
    with pytest.raises(RuntimeError, match="manual clock"):
        daq.advance(1.0)

    class NsClock:
        ns = 0

        def now_ns(self):
            return self.ns

    clk = NsClock()
    d2 = SimulatedDaq([ch("pwm0", "pwm_out", (0, 1e4), "Hz"), ch("ctr0", "counter")],
                      wiring={"pwm0": "ctr0"}, clock=clk).open()
    d2.write({"pwm0": (0.5, 10.0)})
    clk.ns = 1_000_000_000
    assert d2.read(["ctr0"])["ctr0"] == 11


# ----------------------------------------------------------------------- errors
def test_unknown_channel_lists_choices():
    daq = make()
    with pytest.raises(UnknownChannel) as e:
        daq.read(["ai9"])
    msg = str(e.value)
    assert "unknown channel 'ai9'; channels: ao0 (ao [-10, 10] V 16 bit), " in msg
    assert "fin0 (frequency_in [0, 5000] Hz)" in msg and "did you mean" in msg
    assert isinstance(e.value, KeyError) and isinstance(e.value, DaqError)
    with pytest.raises(UnknownChannel, match="'ao7'"):
        daq.write({"ao7": 1.0})


def test_writing_an_input_is_an_error():
    daq = make()
    with pytest.raises(ChannelKindError, match=r"'ai0' is an input \(ai\) and cannot be "
                                               r"written; output channels: ao0, ao1, do0, pwm0"):
        daq.write({"ai0": 1.0})
    with pytest.raises(ChannelKindError, match="takes a bool"):
        daq.write({"do0": 2})
    with pytest.raises(ChannelKindError, match="takes a number"):
        daq.write({"ao0": "1"})
    with pytest.raises(ChannelKindError, match=r"takes \(duty, frequency\)"):
        daq.write({"pwm0": 0.5})
    with pytest.raises(ChannelKindError, match="not a counter"):
        daq.reset("ai0")


def test_out_of_range_raise_or_clip():
    daq = make()
    daq.write({"ao0": 2.0})
    with pytest.raises(ChannelRangeError, match=r"ao0: value 10.5 V outside the range "
                                                r"\[-10, 10\] V.*out_of_range='clip'"):
        daq.write({"ao1": 1.0, "ao0": 10.5})
    # nothing applied when one value is bad
    assert daq.read(["ao0", "ao1"]) == {"ao0": pytest.approx(2.0, abs=LSB16),
                                        "ao1": pytest.approx(0.0, abs=LSB16)}
    with pytest.raises(ChannelRangeError, match="duty 1.5 outside"):
        daq.write({"pwm0": (1.5, 100.0)})
    with pytest.raises(ChannelRangeError, match="frequency 20000 Hz outside"):
        daq.write({"pwm0": (0.5, 2e4)})
    with pytest.raises(ChannelRangeError, match="not finite"):
        daq.write({"ao0": math.nan})
    clip = make(out_of_range="clip")
    clip.write({"ao0": 10.5, "pwm0": (1.5, 2e4)})
    assert clip.read(["ao0", "ai0"]) == {"ao0": pytest.approx(10.0, abs=1e-12),
                                         "ai0": pytest.approx(10.0, abs=1e-12)}
    assert clip.read(["pwm0"])["pwm0"] == (1.0, 10_000.0)
    assert clip.counters.clipped == 3


def test_closed_device_and_context_manager():
    daq = SimulatedDaq([ch("ai0", "ai", (0, 1))])
    with pytest.raises(BackendError, match=r"read\(\) on a closed device"):
        daq.read()
    with daq as d:
        assert d.is_open and d.read() == {"ai0": 0.0}
    assert not daq.is_open


@pytest.mark.parametrize("args, exc, match", [
    (("x", "analog"), ValueError, "unknown kind 'analog'"),
    (("x", "ai"), ValueError, r"needs range=\(lo, hi\)"),
    (("x", "ai", (1, 1)), ValueError, "lo < hi"),
    (("x", "di", (0, 1)), ValueError, "has no range"),
    (("x", "ai", (0, 1), "Vlt"), UnitError, "Vlt"),
    (("x", "frequency_in", (0, 1), "V"), ValueError, "not a frequency"),
    (("x", "ao", (0, 1), "V", 0), ValueError, "resolution_bits"),
    (("x", "do", None, None, 1), ValueError, "no resolution_bits"),
])
def test_bad_channel_specs(args, exc, match):
    with pytest.raises(exc, match=match):
        ChannelSpec(*args)


def test_bad_device_configuration():
    specs = [ch("ao0", "ao", (0, 1)), ch("ai0", "ai", (0, 1)), ch("ai1", "ai", (0, 1)),
             ch("do0", "do")]
    with pytest.raises(ValueError, match="declared twice"):
        SimulatedDaq(specs + [ch("ai0", "ai", (0, 2))])
    with pytest.raises(ValueError, match=r"cannot wire ai0 \(ai\) -> ao0 \(ao\)"):
        SimulatedDaq(specs, wiring={"ai0": "ao0"})
    with pytest.raises(ValueError, match="a do can drive di or counter"):
        SimulatedDaq(specs, wiring={"do0": "ai0"})
    with pytest.raises(ValueError, match="wired from both"):
        SimulatedDaq(specs + [ch("ao1", "ao", (0, 1))], wiring={"ao0": "ai0", "ao1": "ai0"})
    with pytest.raises(ValueError, match="only ai channels are noisy"):
        SimulatedDaq(specs, noise={"ao0": 0.1})
    with pytest.raises(ValueError, match="out_of_range"):
        SimulatedDaq(specs, out_of_range="wrap")
    with pytest.raises(UnknownChannel, match="channels: ao0"):
        SimulatedDaq(specs, wiring={"ao0": "ai5"})


def test_channels_from_mappings_and_power_cycle():
    daq = SimulatedDaq([{"name": "ao0", "kind": "ao", "range": [-1, 1], "unit": "V"},
                        {"name": "ai0", "kind": "ai", "range": [-1, 1], "unit": "V"}],
                       wiring={"ao0": "ai0"}).open()
    assert daq.channel("ao0").range == (-1.0, 1.0) and daq.channel("ao0").lsb is None
    daq.write({"ao0": 0.123456789})
    assert daq.read(["ai0"])["ai0"] == 0.123456789  # ideal converter
    daq.power_cycle()
    assert daq.read(["ai0"])["ai0"] == 0.0


def test_module_doctest():
    assert doctest.testmod(hil.daq.simulated).failed == 0
