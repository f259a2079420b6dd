"""Crane parameters: validation names the block and the parameter; the suspended body."""

import dataclasses

import numpy as np
import pytest

from blocks.cranes import (
    STS_CRANE,
    ContainerLoad,
    GantryCrane,
    GuideArmParameters,
    TargetContainer,
    suspended_body,
)
from blocks.cranes.parameters import BASE_SPEED_RAD_S, box_inertia
from cosim.errors import ParameterError


@pytest.mark.parametrize("change, names", [
    ({"spreader_mass_kg": -10.0}, "spreader_mass_kg"),
    ({"gantry_mass_kg": 0.0}, "gantry_mass_kg"),
    ({"trolley_mass_kg": float("nan")}, "trolley_mass_kg"),
    ({"rope_axial_stiffness_n": -1.0}, "rope_axial_stiffness_n"),
    ({"min_rope_length_m": 0.0}, "min_rope_length_m"),
    ({"rope_damping_time_s": -0.1}, "rope_damping_time_s"),
    ({"sheave_half_spacing_m": (1.0, 0.0)}, "sheave_half_spacing_m"),
    ({"spreader_size_m": (2.4, 1.0)}, "spreader_size_m"),
    ({"wind_velocity_m_s": (1.0, "x", 0.0)}, "wind_velocity_m_s"),
    ({"container": ContainerLoad(mass_kg=-5.0)}, "container.mass_kg"),
    ({"container": ContainerLoad(com_offset_m=(0.0, 0.0, 7.0))}, "container.com_offset_m"),
    ({"target": TargetContainer(0.0, 0.0, -1.0)}, "target.top_m"),
    ({"arms": GuideArmParameters(length_m=0.0)}, "arms.length_m"),
    ({"arms": GuideArmParameters(up_angle_rad=-2.0)}, "arms.down_angle_rad"),
    ({"hoist_drive": dataclasses.replace(STS_CRANE.hoist_drive, efficiency=1.5)},
     "hoist_drive.efficiency"),
    ({"gantry_drive": dataclasses.replace(STS_CRANE.gantry_drive, motors=0)},
     "gantry_drive.motors"),
    ({"trolley_drive": dataclasses.replace(STS_CRANE.trolley_drive, travel_per_rad_m=0.0)},
     "trolley_drive.travel_per_rad_m"),
])
def test_bad_parameters_name_block_and_parameter(change, names):
    p = dataclasses.replace(STS_CRANE, **change)
    with pytest.raises(ParameterError) as exc:
        GantryCrane("crane", p)
    msg = str(exc.value)
    assert "GantryCrane 'crane'" in msg
    assert f"'{names}'" in msg


def test_hoist_without_inertia_is_refused():
    p = dataclasses.replace(STS_CRANE, hoist_drive=dataclasses.replace(
        STS_CRANE.hoist_drive, motor_inertia_kgm2=0.0, extra_mass_kg=0.0))
    with pytest.raises(ParameterError, match="GantryCrane 'c'.*hoist drive train has no mass"):
        GantryCrane("c", p)


def test_defaults_are_the_documented_sts_crane():
    p = STS_CRANE
    # rated speeds at 1500 rpm: gantry 0.75, trolley 3, hoist 1 m/s
    assert p.gantry_drive.travel_per_rad_m * BASE_SPEED_RAD_S == pytest.approx(0.75)
    assert p.trolley_drive.travel_per_rad_m * BASE_SPEED_RAD_S == pytest.approx(3.0)
    assert p.hoist_drive.travel_per_rad_m * BASE_SPEED_RAD_S == pytest.approx(1.0)
    assert all(getattr(p, f"{a}_drive").motors == 4 for a in ("gantry", "trolley", "hoist"))
    # the hoist lifts 40 t (spreader + container) at standstill with its 4 motors
    assert p.hoist_drive.max_force_n > (10e3 + 30e3) * 9.81 * 1.2
    # constant power above base speed: T w constant along the curve
    w = np.array(p.hoist_drive.curve_speed_rad_s[1:])
    t = np.array(p.hoist_drive.curve_torque_nm[1:])
    assert np.allclose(t * w, t[0] * w[0])
    # equivalent mass of the hoist drive train: 4 J_m / i^2 + drum
    i = p.hoist_drive.travel_per_rad_m
    assert p.hoist_drive.equivalent_mass_kg == pytest.approx(4 * 1.5 / i ** 2 + 2000.0)


def test_suspended_body_empty_spreader():
    b = suspended_body(STS_CRANE)
    assert b.mass == 10e3
    assert np.allclose(b.com_in_spreader, 0.0)
    assert np.allclose(b.inertia, box_inertia(10e3, (2.438, 1.0, 12.192)))
    # ropes at the top face, +-1.0 (x) and +-2.5 (z)
    assert np.allclose(b.attachments, [[1, 0.5, 2.5], [1, 0.5, -2.5], [-1, 0.5, 2.5],
                                       [-1, 0.5, -2.5]])
    assert b.bottom_center == (0.0, -0.5, 0.0)


def test_suspended_body_with_container_parallel_axis_by_hand():
    c = ContainerLoad(mass_kg=30e3, size_m=(2.438, 2.591, 12.192))
    b = suspended_body(dataclasses.replace(STS_CRANE, container=c))
    ms, mc = 10e3, 30e3
    yc = -(0.5 + 2.591 / 2)  # container centre below the spreader centre
    ycom = mc * yc / (ms + mc)
    assert b.mass == 40e3
    assert np.allclose(b.com_in_spreader, [0.0, ycom, 0.0])
    ds, dc = -ycom, yc - ycom
    Js, Jc = box_inertia(ms, (2.438, 1.0, 12.192)), box_inertia(mc, c.size_m)
    # about x and z: the vertical offsets add m d^2; about y nothing
    expect = np.diag([Js[0, 0] + Jc[0, 0] + ms * ds ** 2 + mc * dc ** 2,
                      Js[1, 1] + Jc[1, 1],
                      Js[2, 2] + Jc[2, 2] + ms * ds ** 2 + mc * dc ** 2])
    assert np.allclose(b.inertia, expect, rtol=1e-12)
    assert b.bottom_center[1] == pytest.approx(-0.5 - 2.591 - ycom)
    assert np.allclose(b.attachments[:, 1], 0.5 - ycom)


def test_eccentric_container_gives_products_of_inertia():
    c = ContainerLoad(com_offset_m=(0.3, 0.0, 2.0))
    b = suspended_body(dataclasses.replace(STS_CRANE, container=c))
    assert b.com_in_spreader[2] == pytest.approx(30e3 * 2.0 / 40e3)
    assert abs(b.inertia[1, 2]) > 0 and abs(b.inertia[0, 1]) > 0
    assert np.allclose(b.inertia, b.inertia.T)
    assert np.all(np.linalg.eigvalsh(b.inertia) > 0)
