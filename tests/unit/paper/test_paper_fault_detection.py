"""Nip-load monitor: residuals, the 5 % rule with persistence (online events and offline)."""

import math

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.paper.fault_detection import NipLoadMonitor, detect_persistent, in_time_order
from blocks.sources import ClosedFormSource, Constant
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

Q = 4000.0
W_SHORT, W_LONG = 0.02, 0.1          # Gaussian bump widths [s]
C_SHORT, C_LONG = 1.0, 2.0           # bump centres [s]
HALF = math.sqrt(math.log(0.08 / 0.05))   # |t - c| / w where 0.08 exp(-s^2) = 0.05


def bump(t, c, w):
    return 0.08 * math.exp(-((t - c) / w) ** 2)


def test_outputs_residuals_and_relative_with_reference_guard():
    h = BlockHarness(NipLoadMonitor("m", min_reference_n_m=10.0))
    h.set_inputs(plant_A=4100.0, shadow_A=4000.0, plant_B=3700.0, shadow_B=4000.0,
                 reference=4000.0)
    assert h.output("residual_A") == 100.0 and h.output("residual_B") == -300.0
    assert h.output("relative") == pytest.approx(300.0 / 4000.0, rel=1e-15)
    assert h.output("alarm") == 0.0 and math.isnan(h.output("detection_time"))
    h.set_input("reference", 0.0)
    assert h.output("relative") == pytest.approx(30.0, rel=1e-15)   # |r| / q_min


def run_monitor(persistence_s=0.05):
    b = DiagramBuilder("mon")
    pa = b.add(ClosedFormSource("pa", lambda t: Q * (1 + bump(t, C_SHORT, W_SHORT)),
                                unit="N/m"))
    pb = b.add(ClosedFormSource("pb", lambda t: Q * (1 - bump(t, C_LONG, W_LONG)), unit="N/m"))
    sh = b.add(Constant("sh", Q, unit="N/m"))
    clock = b.add(Integrator("clock", unit="s"))      # a continuous state to integrate
    one = b.add(Constant("one", 1.0, unit="1"))
    mon = b.add(NipLoadMonitor("mon", persistence_s=persistence_s))
    b.connect(one.y, clock.input("u"))
    b.connect(pa.y, mon.input("plant_A"))
    b.connect(pb.y, mon.input("plant_B"))
    for port in ("shadow_A", "shadow_B", "reference"):
        b.connect(sh.y, mon.input(port))
    sim = Simulator(b.build(), solver="rk45", dt=1e-3, max_step=0.01,
                    record=["mon.relative", "mon.alarm", "mon.detection_time"])
    return sim.run(3.0)


def test_short_exceedance_is_ignored_and_a_persistent_one_is_located_exactly():
    res = run_monitor()
    keep = in_time_order(res.time)
    t, rho, alarm = res.time[keep], res["mon.relative"][keep], res["mon.alarm"][keep]
    # the short bump (27 ms above 5 %) is there but raises nothing
    short = (t > 0.9) & (t < 1.1)
    assert rho[short].max() == pytest.approx(0.08, rel=1e-3)
    t_fire = C_LONG - HALF * W_LONG + 0.05
    assert alarm[t < t_fire].max() == 0.0
    assert alarm[t >= t_fire].min() == 1.0
    assert res["mon.detection_time"][-1] == pytest.approx(t_fire, abs=1e-6)
    # the offline rule on the 1 ms record agrees
    assert detect_persistent(t, rho, 0.05, 0.05) == pytest.approx(t_fire, abs=2e-4)


def test_persistence_longer_than_the_exceedance_never_fires():
    res = run_monitor(persistence_s=0.2)     # the long bump is above for 137 ms
    assert res["mon.alarm"][-1] == 0.0 and math.isnan(res["mon.detection_time"][-1])
    assert math.isnan(detect_persistent(res.time, res["mon.relative"], 0.05, 0.2))


def test_in_time_order_drops_late_samples():
    t = np.array([0.0, 0.1, 0.25, 0.2, 0.3, 0.4])
    assert in_time_order(t).tolist() == [True, True, True, False, True, True]


def test_offline_rule_edge_cases():
    t = np.linspace(0.0, 1.0, 1001)
    assert detect_persistent(t, np.full_like(t, 0.06), 0.05, 0.1) == pytest.approx(0.1)
    assert math.isnan(detect_persistent(t, np.full_like(t, 0.04), 0.05, 0.1))
    # above only for the last 50 ms: the record ends before the persistence is reached
    rho = np.where(t > 0.95, 0.06, 0.0)
    assert math.isnan(detect_persistent(t, rho, 0.05, 0.1))
    with pytest.raises(ParameterError, match="equal length"):
        detect_persistent(t, rho[:-1])


def test_monitor_rejects_bad_parameters_by_name():
    with pytest.raises(ParameterError, match="threshold"):
        NipLoadMonitor("m", threshold=0.0)
    with pytest.raises(ParameterError, match="persistence_s"):
        NipLoadMonitor("m", persistence_s=-1.0)
