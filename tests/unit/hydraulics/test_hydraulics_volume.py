"""Lumped volume: pressure build-up, closed-form discharge and compression, low-pressure bound."""

import math
import warnings

import numpy as np
import pytest

from blocks.hydraulics import Fluid, Orifice, PressureSource, Volume
from blocks.sources import Constant
from cosim import CosimWarning, DiagramBuilder, Simulator
from cosim.errors import ParameterError, StepError
from cosim.testing import BlockHarness

OIL = Fluid(density_kg_m3=870.0, bulk_modulus=1.5e9)


def test_derivative_is_beta_over_v_times_net_flow():
    h = BlockHarness(Volume("v", volume_m3=2e-3, fluid=OIL, inflows=2, outflows=1, p0_pa=5e6))
    h.set_inputs(q_in0=3e-4, q_in1=1e-4, q_out0=1.5e-4)
    assert h.derivatives()[0] == pytest.approx(1.5e9 / 2e-3 * 2.5e-4, rel=1e-14)
    assert h.output("p") == 5e6


def test_variable_volume_subtracts_the_volume_rate():
    v = Volume("v", volume_m3=1e-3, fluid=OIL, inflows=1, outflows=0, volume_rate_input=True,
               p0_pa=2e6)
    h = BlockHarness(v)
    h.set_inputs(q_in0=1e-4, dvdt=4e-4)
    dp, dv = h.derivatives()
    assert dp == pytest.approx(1.5e9 / 1e-3 * (1e-4 - 4e-4), rel=1e-14)
    assert dv == 4e-4
    assert h.output("volume") == 1e-3


def _discharge_diagram(p0, area, v0=1e-3, pt=1e5):
    b = DiagramBuilder("discharge")
    vol = b.add(Volume("vol", volume_m3=v0, fluid=OIL, inflows=0, outflows=1, p0_pa=p0))
    tank = b.add(PressureSource("tank", pt))
    o = b.add(Orifice("o", area_m2=area, cd=0.67, fluid=OIL, transition_pressure_pa=1e4))
    b.connect(vol.p, o.p_a)
    b.connect(tank.p, o.p_b)
    b.connect(o.q, vol.q_out[0])
    return b.build()


def test_discharge_through_an_orifice_follows_the_closed_form():
    # p' = -(beta/V) K sqrt(p - pT)  =>  sqrt(p - pT) = sqrt(p0 - pT) - beta K t / (2 V)
    p0, pt, v0, area = 10e6, 1e5, 1e-3, 1.3e-6
    k = 0.67 * area * math.sqrt(2 / 870.0)
    t_empty = 2 * v0 * math.sqrt(p0 - pt) / (1.5e9 * k)
    t_end = round(0.8 * t_empty, 3)  # stays above the transition pressure
    times = np.arange(0, 81) * 1e-3
    assert times[-1] == pytest.approx(t_end)
    res = Simulator(_discharge_diagram(p0, area, v0, pt), solver="radau", rtol=1e-10,
                    atol=1e-4, dt=1e-3, max_step=1.0, record=["vol.p", "o.q"]).run(t_end)
    for t in times:
        exact = pt + (math.sqrt(p0 - pt) - 1.5e9 * k * t / (2 * v0)) ** 2
        assert res.at("vol.p", t) == pytest.approx(exact, rel=1e-7)
    assert res.at("vol.p", times[-1]) - pt > 1e4


def test_compression_by_a_volume_rate_follows_the_closed_form():
    # no flows, V = V0 + r t, constant beta: p = p0 - beta ln(V / V0)
    b = DiagramBuilder("compress")
    r = -2e-4
    rate = b.add(Constant("rate", r, unit="m^3/s"))
    vol = b.add(Volume("vol", volume_m3=1e-3, fluid=OIL, inflows=0, outflows=0,
                       volume_rate_input=True, p0_pa=1e6))
    b.connect(rate.y, vol.dvdt)
    res = Simulator(b.build(), solver="bdf", rtol=1e-10, atol=1e-6, dt=0.5,
                    max_step=1.0).run(2.0)
    for t in (0.5, 1.0, 2.0):
        v = 1e-3 + r * t
        assert res.at("vol.volume", t) == pytest.approx(v, rel=1e-9)
        assert res.at("vol.p", t) == pytest.approx(1e6 - 1.5e9 * math.log(v / 1e-3), rel=1e-7)


def _draining(p0=2e5, q=1e-4):
    b = DiagramBuilder("drain")
    draw = b.add(Constant("draw", q, unit="m^3/s"))
    vol = b.add(Volume("vol", volume_m3=1e-3, fluid=OIL, inflows=0, outflows=1, p0_pa=p0,
                       min_pressure_pa=1e3))
    b.connect(draw.y, vol.q_out[0])
    return b.build()


def test_cavitation_is_warned_once_and_the_pressure_stays_above_the_floor():
    # a constant draw of 1e-4 m^3/s from 1 l at 2 bar reaches 1 kPa after 1.3 ms
    t_hit = 1e-3 * (2e5 - 1e3) / 1.5e9 / 1e-4
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = Simulator(_draining(), solver="radau", rtol=1e-8, atol=1e-3).run(0.05)
    mine = [w for w in caught if issubclass(w.category, CosimWarning)]
    assert len(mine) == 1, [str(w.message) for w in mine]
    msg = str(mine[0].message)
    assert "'vol': pressure p fell to min_pressure_pa = 1000 Pa" in msg
    t_msg = float(msg.split("by t = ")[1].split(" s")[0])
    assert t_msg >= t_hit  # the end of the accepted step in which p < p_min was first seen
    p = res["vol.p"]
    assert p.min() >= 1e3 - 500.0  # the documented floor p_min - band
    assert p[-1] < 1e3  # the bound is active, not hidden: the pressure sits in the band


def test_cavitation_warning_names_the_first_fixed_step_below_the_bound():
    t_hit = 1e-3 * (2e5 - 1e3) / 1.5e9 / 1e-4   # 1.3267 ms
    dt = 1e-4
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Simulator(_draining(), solver="rk4", dt=dt, record=False).run(0.01)
    mine = [str(w.message) for w in caught if issubclass(w.category, CosimWarning)]
    assert len(mine) == 1, mine
    t_msg = float(mine[0].split("by t = ")[1].split(" s")[0])
    assert t_msg == pytest.approx(math.ceil(t_hit / dt) * dt, abs=1e-12)


def test_volume_reaching_zero_stops_the_run_with_a_clear_error():
    b = DiagramBuilder("crush")
    rate = b.add(Constant("rate", -1e-3, unit="m^3/s"))
    vol = b.add(Volume("vol", volume_m3=1e-4, fluid=Fluid(bulk_modulus=1e6), inflows=0,
                       outflows=1, volume_rate_input=True, p0_pa=1e6))
    feed = b.add(Constant("feed", -1e-3, unit="m^3/s"))  # negative outflow: keeps p up
    b.connect(rate.y, vol.dvdt)
    b.connect(feed.y, vol.q_out[0])
    with pytest.raises(StepError, match="Volume 'vol': the volume fell to"):
        Simulator(b.build(), solver="rk4", dt=1e-4).run(0.2)


@pytest.mark.parametrize("kw, match", [
    (dict(volume_m3=0.0), "volume_m3 must be finite and > 0"),
    (dict(volume_m3=1e-3, inflows=-1), "inflows must be an int >= 0"),
    (dict(volume_m3=1e-3, inflows=0, outflows=0), "at least one flow"),
    (dict(volume_m3=1e-3, p0_pa=500.0), "initial pressure p0_pa = 500.0 Pa is below"),
    (dict(volume_m3=1e-3, min_pressure_pa=0.0), "min_pressure_pa must be > 0"),
    (dict(volume_m3=1e-3, cavitation_band_pa=2e3), "cavitation_band_pa must lie in"),
])
def test_bad_volume_parameters(kw, match):
    with pytest.raises(ParameterError, match=match):
        Volume("v", **kw)
