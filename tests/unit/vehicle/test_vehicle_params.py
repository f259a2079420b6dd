"""Vehicle parameter sets, the electric accelerator map, half-car and composite ports."""

import math

import numpy as np
import pytest

from blocks.electric import GEM_PMSM
from blocks.vehicle import (
    PASSENGER_CAR,
    AcceleratorMap,
    BodyData,
    ElectricDriveData,
    ElectricDrivetrain,
    HalfCar,
    HalfCarData,
    PassengerCar,
    representative_engine_map,
)
from cosim.errors import ParameterError
from cosim.testing import BlockHarness


def test_default_car_figures():
    c = PASSENGER_CAR
    assert c.body.equivalent_mass_kg == pytest.approx(1500 + 3.6 / 0.31 ** 2, rel=1e-15)
    assert c.body.drag_constant == pytest.approx(0.396, rel=1e-12)  # N s^2/m^2
    assert c.half_car.sprung_mass_kg + c.half_car.front_unsprung_kg \
        + c.half_car.rear_unsprung_kg == c.body.mass_kg
    assert c.lateral.static_axle_loads_n()[0] == pytest.approx(1500 * 9.81 * 1.6 / 2.7)
    assert c.transmission.n_gears == 4


def test_engine_map_formula_at_a_grid_point():
    thr, rpm, z = representative_engine_map()
    i, j = thr.index(0.3), rpm.index(2000.0)
    t0 = -2e-3 / (4 * math.pi) * 1e5 * (1.2 + 0.15 * 2 + 0.05 * 4)
    k = 1 + 5 * 1000 / 2000
    g = (1 - math.exp(-k * 0.3)) / (1 - math.exp(-k))
    assert z[i][j] == pytest.approx(t0 + (180.0 - t0) * g, abs=5e-4)  # rounded to 1e-3
    assert all(z[-1][jj] == w for jj, w in enumerate((95.0, 140.0, 165.0, 180.0, 189.0,
                                                        194.0, 198.0, 200.0, 198.0, 193.0,
                                                        185.0, 175.0, 158.0, 130.0)))


@pytest.mark.parametrize("cls,kw,match", [
    (BodyData, {"wheel_radius_m": 0.0}, "BodyData: wheel_radius_m must be finite and > 0"),
    (BodyData, {"rolling_resistance": -0.01}, "rolling_resistance must be finite and >= 0"),
    (HalfCarData, {"front_spring_n_per_m": math.nan}, "front_spring_n_per_m"),
    (ElectricDriveData, {"reduction_efficiency": 1.2}, "reduction_efficiency must be in"),
    (ElectricDriveData, {"motor": "GEM"}, "motor must be a PMSMParameters"),
    (PassengerCar, {"body": HalfCarData()}, "PassengerCar: body must be a BodyData"),
])
def test_parameter_errors_name_class_and_field(cls, kw, match):
    with pytest.raises(ParameterError, match=match):
        cls(**kw)


def test_electric_torque_envelope_and_accelerator_map():
    e = PASSENGER_CAR.electric
    assert e.torque_envelope(0.0) == 150.0
    assert e.torque_envelope(-300.0) == 150.0  # symmetric
    assert e.torque_envelope(1000.0) == pytest.approx(80.0, rel=1e-15)  # 80 kW / 1000 rad/s
    assert e.torque_envelope(0.975 * 1400.0) == pytest.approx(0.5 * 80e3 / 1365.0, rel=1e-12)
    assert e.torque_envelope(1500.0) == 0.0
    h = BlockHarness(AcceleratorMap("pedal"))
    h.set_inputs(throttle=0.4, motor_speed=1000.0)
    assert h.output("torque_ref") == pytest.approx(32.0, rel=1e-15)
    h.set_inputs(throttle=1.7)
    assert h.output("torque_ref") == pytest.approx(80.0, rel=1e-15)
    h.set_inputs(throttle=-0.2)
    assert h.output("torque_ref") == 0.0
    other = ElectricDriveData(motor=GEM_PMSM)
    assert other.motor is GEM_PMSM


def test_electric_drivetrain_ports():
    dt = ElectricDrivetrain("dt")
    assert set(dt.inputs) == {"throttle", "wheel_speed"}
    assert {n: p.unit_label() for n, p in dt.outputs.items()} == {
        "wheel_torque": "N*m", "motor_speed": "rad/s", "motor_torque": "N*m",
        "torque_ref": "N*m", "i_dc": "A"}
    assert set(dt.blocks) == {"pedal", "drive", "u_dc", "reduction"}


def test_half_car_block_outputs_at_equilibrium():
    hc = HalfCar("hc")
    assert set(hc.inputs) == {"front_force", "rear_force"}
    assert hc.input("front_force").shape == (2,)
    h = BlockHarness(hc)
    assert h.output("heave") == 0.0 and h.output("pitch") == 0.0
    fs = PASSENGER_CAR.half_car.static_spring_forces_n()
    g = 9.81
    np.testing.assert_allclose(h.output("tyre_loads"), [fs[0] + 80 * g, fs[1] + 80 * g],
                               rtol=1e-12)
    # the design configuration is the static equilibrium: no acceleration
    np.testing.assert_allclose(h.derivatives()[hc.mech.nq:], 0.0, atol=1e-9)
    with pytest.raises(ParameterError, match="road must be a callable"):
        HalfCar("hc", road=0.0)
