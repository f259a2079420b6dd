"""Battery: terminal voltage under load, coulomb counting, OCV(SoC) table."""

import numpy as np
import pytest

from blocks.electric import Battery
from blocks.sources import Constant, Step
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

SOC = [0.0, 0.1, 0.9, 1.0]
OCV = [300.0, 340.0, 380.0, 400.0]


def test_terminal_voltage_under_load():
    h = BlockHarness(Battery("b", open_circuit_voltage_v=48.0, internal_resistance_ohm=0.05))
    assert h.block.continuous_states == []
    for i in (0.0, 100.0, -40.0):  # open circuit, discharge, charge
        h.set_input("current", i)
        assert h.output("voltage") == pytest.approx(48.0 - 0.05 * i, rel=1e-15)
        assert h.output("power") == pytest.approx((48.0 - 0.05 * i) * i, rel=1e-15)
        assert h.output("open_circuit_voltage") == 48.0
    # maximum power transfer at i = u_oc / (2 R): half the voltage
    h.set_input("current", 48.0 / 0.1)
    assert h.output("voltage") == pytest.approx(24.0)


def test_constant_current_discharge_follows_the_ocv_table():
    """2 Ah discharged at 72 A: SoC falls by 0.01 per second; u = OCV(SoC) - R i."""
    cap, i, r = 2.0, 72.0, 0.2
    b = DiagramBuilder("d")
    batt = b.add(Battery("batt", internal_resistance_ohm=r, capacity_ah=cap, soc0=0.95,
                         ocv_soc=SOC, ocv_v=OCV))
    load = b.add(Step("load", 1.0, i, unit="A"))
    b.connect(load.y, batt.current)
    res = Simulator(b.build(), solver="rk4", dt=1e-2,
                    record=["batt.soc", "batt.voltage", "batt.open_circuit_voltage"]).run(50.0)
    assert res.at("batt.voltage", 0.5) == pytest.approx(np.interp(0.95, SOC, OCV))  # no load
    for t in (1.0, 5.0, 20.0, 50.0):
        soc = 0.95 - i * (t - 1.0) / (3600.0 * cap)
        assert res.at("batt.soc", t) == pytest.approx(soc, rel=1e-12)
        assert res.at("batt.voltage", t) == pytest.approx(np.interp(soc, SOC, OCV) - r * i,
                                                          rel=1e-12)
    assert res["batt.soc"][-1] == pytest.approx(0.95 - 0.49, rel=1e-12)


def test_ocv_table_clips_outside_and_soc_is_unbounded():
    h = BlockHarness(Battery("b", internal_resistance_ohm=0.0, capacity_ah=1.0, soc0=-0.2,
                             ocv_soc=SOC, ocv_v=OCV))
    assert h.output("open_circuit_voltage") == 300.0
    assert h.block.ocv(1.5) == 400.0
    h.set_input("current", 3600.0)
    assert h.derivatives()[0] == pytest.approx(-1.0)  # 1 Ah drawn at 3600 A: SoC -1 per second


def test_capacity_without_table_counts_charge():
    b = DiagramBuilder("d")
    batt = b.add(Battery("batt", open_circuit_voltage_v=12.0, internal_resistance_ohm=0.01,
                         capacity_ah=10.0, soc0=0.5))
    b.add(Constant("i", -36.0, unit="A"))  # charging
    b.connect("i.y", batt.current)
    res = Simulator(b.build(), solver="rk4", dt=1.0, record=["batt.soc", "batt.voltage"]).run(
        100.0)
    assert res["batt.soc"][-1] == pytest.approx(0.5 + 36.0 * 100.0 / 36000.0, rel=1e-12)
    assert res["batt.voltage"][-1] == pytest.approx(12.0 + 0.01 * 36.0)


def test_invalid_parameters():
    with pytest.raises(ParameterError, match="either open_circuit_voltage_v or the table"):
        Battery("b", internal_resistance_ohm=0.1)
    with pytest.raises(ParameterError, match="either open_circuit_voltage_v or the table"):
        Battery("b", internal_resistance_ohm=0.1, open_circuit_voltage_v=1.0, ocv_soc=SOC,
                ocv_v=OCV, capacity_ah=1.0)
    with pytest.raises(ParameterError, match="needs capacity_ah"):
        Battery("b", internal_resistance_ohm=0.1, ocv_soc=SOC, ocv_v=OCV)
    with pytest.raises(ParameterError, match="strictly increasing"):
        Battery("b", internal_resistance_ohm=0.1, ocv_soc=[0, 0.5, 0.5, 1], ocv_v=OCV,
                capacity_ah=1.0)
    with pytest.raises(ParameterError, match="internal_resistance_ohm = -1.0: expected"):
        Battery("b", internal_resistance_ohm=-1.0, open_circuit_voltage_v=1.0)
