"""The crane's state derivative (blocks.cranes.dynamics) without the scheduler.

Rope forces and moments are checked against finite differences of an independently
written rope potential; kinematics against blocks.multibody.geometry.
"""

import dataclasses
import math

import numpy as np
import pytest

from blocks.cranes import (
    STATE_NAMES,
    STS_CRANE,
    ContainerLoad,
    TargetContainer,
    equilibrium,
    make_rhs,
    make_state,
    suspended_body,
)
from blocks.cranes.dynamics import CraneFault, rotation
from blocks.cranes.parameters import ROPE_SIGNS
from blocks.multibody.geometry import quat_matrix, quat_rate

I = STATE_NAMES.index
RNG = np.random.default_rng(7)
# no damping, no drag: the rope forces are the gradient of the rope energy
STILL = dataclasses.replace(STS_CRANE, rope_damping_time_s=0.0, air_density_kg_m3=0.0,
                            container=ContainerLoad(com_offset_m=(0.2, 0.1, -1.5)),
                            sheave_half_spacing_m=(1.3, 3.1))


def rope_energy(p, x):
    """Sum of EA (L - l0)^2 / (2 l0) over the taut ropes, written independently."""
    b = suspended_body(p)
    A = quat_matrix(x[7:11])
    r = x[4:7]
    l0 = x[I("hoist_length")]
    trolley = np.array([x[I("trolley_position")], x[I("trolley_height")],
                        x[I("gantry_position")]])
    V = 0.0
    for (sx, sz), att in zip(ROPE_SIGNS, b.attachments):
        sheave = trolley + np.array([sx * p.sheave_half_spacing_m[0], 0.0,
                                     sz * p.sheave_half_spacing_m[1]])
        e = np.linalg.norm(sheave - (r + A @ att)) - l0
        if e > 0:
            V += p.rope_axial_stiffness_n * e * e / (2 * l0)
    return V


def perturbed_state(p):
    x = equilibrium(p, 1.0, 4.0, 18.0)
    x[4:7] += (0.3, -0.01, -0.2)
    q = np.array([1.0, 0.003, -0.005, 0.002])
    x[7:11] = q / np.linalg.norm(q)
    return x


def quat_times_small(q, phi):
    """q rotated by the body-frame rotation vector phi (exact)."""
    a = np.linalg.norm(phi)
    d = np.concatenate([[math.cos(a / 2)], math.sin(a / 2) * phi / a])
    e0, e = q[0], q[1:]
    return np.concatenate([[e0 * d[0] - e @ d[1:]], e0 * d[1:] + d[0] * e + np.cross(e, d[1:])])


def test_rotation_matches_multibody_geometry_also_unnormalized():
    for _ in range(20):
        q = RNG.normal(size=4) * RNG.uniform(0.5, 2.0)
        assert np.allclose(np.array(rotation(*q)).reshape(3, 3), quat_matrix(q), atol=1e-14)


def test_quaternion_rate_and_norm_stabilization():
    p = STS_CRANE
    rhs = make_rhs(p)
    x = make_state(p, hoist_length_m=20.0)
    q = RNG.normal(size=4)
    q /= np.linalg.norm(q)
    w = np.array([0.3, -0.2, 0.5])
    x[7:11], x[18:21] = q, w
    d = rhs(x.tolist(), 0, 0, 0, 0, 0, 0, 0)
    assert np.allclose(d[7:11], quat_rate(q, w), atol=1e-15)
    # |e| > 1: the stabilization pulls the norm back at rate lambda
    x[7:11] = 1.01 * q
    x[18:21] = 0.0
    d = np.array(rhs(x.tolist(), 0, 0, 0, 0, 0, 0, 0))
    n2_rate = 2 * x[7:11] @ d[7:11]
    lam = p.quaternion_stabilization_per_s
    assert n2_rate == pytest.approx(-lam * (1.01 ** 2 - 1) * 1.01 ** 2, rel=1e-12)


def test_rope_forces_are_the_gradient_of_the_rope_energy():
    p = STILL
    rhs = make_rhs(p)
    body = suspended_body(p)
    x = perturbed_state(p)
    out = {}
    d = np.array(rhs(x.tolist(), 0, 0, 0, 0, 0, 0, 0, out))
    assert min(out["rope_tension"]) > 0  # all ropes taut
    h = 1e-6

    def dV(fn):
        return (rope_energy(p, fn(h)) - rope_energy(p, fn(-h))) / (2 * h)

    def shifted(k, dh):
        y = x.copy()
        y[k] += dh
        return y
    # translation of the spreader: F = -grad V
    for j in range(3):
        g = dV(lambda dh, j=j: shifted(4 + j, dh))
        assert out["spreader_force"][j] == pytest.approx(-g, rel=1e-6, abs=1e-3)
    # rotation about the body axes: body moment = -dV/dphi; here omega = 0 so J w' = tau
    tau = body.inertia @ d[18:21]
    for j in range(3):
        def rot(dh, j=j):
            y = x.copy()
            phi = np.zeros(3)
            phi[j] = dh
            y[7:11] = quat_times_small(x[7:11], phi)
            return y
        assert tau[j] == pytest.approx(-dV(rot), rel=1e-6, abs=1e-3)
    # the trolley (x_t, y_t) and the gantry (z_g) take the reaction
    for j, name in enumerate(("trolley_position", "trolley_height", "gantry_position")):
        k = I(name)
        g = dV(lambda dh, k=k: shifted(k, dh))
        assert out["trolley_force"][j] == pytest.approx(-g, rel=1e-6, abs=1e-3)
    # the hoist's load is -dV/dl0 (T plus the strain term T eps / 2)
    g = dV(lambda dh: shifted(I("hoist_length"), dh))
    assert out["hoist_load"] == pytest.approx(-g, rel=1e-7)
    assert out["hoist_load"] > sum(out["rope_tension"])


def test_axis_equations_with_drive_forces():
    p = STILL
    rhs = make_rhs(p)
    x = perturbed_state(p)
    out = {}
    d0 = rhs(x.tolist(), 0, 0, 0, 0, 0, 0, 0, out)
    d1 = rhs(x.tolist(), 1e4, 2e3, 5e5, 0, 0, 0, 0)
    m_zg = p.gantry_mass_kg + p.trolley_mass_kg + p.gantry_drive.equivalent_mass_kg
    m_xt = p.trolley_mass_kg + p.trolley_drive.equivalent_mass_kg
    assert d1[I("gantry_velocity")] - d0[I("gantry_velocity")] == pytest.approx(1e4 / m_zg)
    assert d1[I("trolley_velocity")] - d0[I("trolley_velocity")] == pytest.approx(2e3 / m_xt)
    assert d1[I("hoist_velocity")] - d0[I("hoist_velocity")] == pytest.approx(
        5e5 / p.hoist_drive.equivalent_mass_kg)
    assert d0[I("hoist_velocity")] == pytest.approx(-out["hoist_load"]
                                                    / p.hoist_drive.equivalent_mass_kg)
    # trolley vertical: gravity, girder spring and the ropes' pull
    yt = x[I("trolley_height")]
    expect = -p.gravity_m_s2 + (-p.trolley_vertical_stiffness_n_m
                                * (yt - p.trolley_rest_height_m) + out["trolley_force"][1]) \
        / p.trolley_mass_kg
    assert d0[I("trolley_vertical_velocity")] == pytest.approx(expect, rel=1e-12)
    # kinematics: position rates are the velocities, l0' = -v_h
    x[I("hoist_velocity")] = 0.7
    d = rhs(x.tolist(), 0, 0, 0, 0, 0, 0, 0)
    assert d[I("hoist_length")] == -0.7


def test_slack_ropes_pull_nothing_and_never_push():
    p = STILL
    rhs = make_rhs(p)
    x = equilibrium(p, 0.0, 0.0, 15.0)
    y = x.copy()
    y[I("spreader_y")] += 0.2  # the ropes are 0.2 m shorter than slack-free: all slack
    out = {}
    d = rhs(y.tolist(), 0, 0, 0, 0, 0, 0, 0, out)
    assert out["rope_tension"] == [0.0] * 4 and out["hoist_load"] == 0.0
    assert d[I("spreader_vy")] == -p.gravity_m_s2
    assert d[I("spreader_vx")] == 0.0 and d[I("omega_x")] == 0.0
    # taut (empty spreader: 10.5 mm stretch on 15 m) but flying up at 5 m/s:
    # k e + c L' = k (0.0105 - 0.003 * 5) < 0 -> no force
    pd = dataclasses.replace(STS_CRANE, air_density_kg_m3=0.0)
    rhs = make_rhs(pd)
    x = equilibrium(pd, 0.0, 0.0, 15.0)
    y = x.copy()
    y[I("spreader_vy")] = 5.0
    assert rhs(y.tolist(), 0, 0, 0, 0, 0, 0, 0, out)[I("spreader_vy")] == -p.gravity_m_s2
    assert out["rope_tension"] == [0.0] * 4
    # slower (3 m/s): tension k (e - 0.009) left
    y[I("spreader_vy")] = 3.0
    rhs(y.tolist(), 0, 0, 0, 0, 0, 0, 0, out)
    k = pd.rope_axial_stiffness_n / 15.0
    static = 10e3 * 9.81 / 4
    assert out["rope_tension"][0] == pytest.approx(static - 0.003 * k * 3.0, rel=1e-9)


def test_damping_tension_is_tau_k_times_stretch_rate():
    p = dataclasses.replace(STS_CRANE, air_density_kg_m3=0.0)
    rhs = make_rhs(p)
    x = equilibrium(p, 0.0, 0.0, 20.0)
    x[I("spreader_vy")] = -0.01  # ropes lengthen at 0.01 m/s
    out = {}
    rhs(x.tolist(), 0, 0, 0, 0, 0, 0, 0, out)
    k = p.rope_axial_stiffness_n / 20.0
    assert out["rope_tension"][0] - 10e3 * 9.81 / 4 == pytest.approx(
        p.rope_damping_time_s * k * 0.01, rel=1e-6)


def test_wind_drag_on_the_spreader():
    p = dataclasses.replace(STS_CRANE, wind_velocity_m_s=(10.0, 0.0, 0.0))
    rhs = make_rhs(p)
    b = suspended_body(p)
    x = equilibrium(dataclasses.replace(p, wind_velocity_m_s=(0, 0, 0)), 0.0, 0.0, 20.0)
    d = rhs(x.tolist(), 0, 0, 0, 0, 0, 0, 0)
    drag = 0.5 * 1.225 * 1.2 * b.areas[0] * 100.0
    assert d[I("spreader_vx")] == pytest.approx(drag / b.mass, rel=1e-12)


@pytest.mark.parametrize("change, where, match", [
    ("hoist_length", 0.5, "two-blocked"),
    ("spreader_y", -21.0, "hit the ground"),
])
def test_faults(change, where, match):
    p = STS_CRANE
    rhs = make_rhs(p)
    x = equilibrium(p, 0.0, 0.0, 20.0)
    x[I(change)] += where if change != "hoist_length" else where - x[I(change)]
    with pytest.raises(CraneFault, match=match):
        rhs(x.tolist(), 0, 0, 0, 0, 0, 0, 0)


def test_landing_on_the_target_is_refused_beside_it_allowed():
    t = TargetContainer(center_x_m=0.0, center_z_m=0.0, top_m=20.0)
    p = dataclasses.replace(STS_CRANE, target=t)
    rhs = make_rhs(p)
    x = equilibrium(STS_CRANE, 0.0, 0.0, 20.0)  # bottom at ~20.95 m
    x[I("spreader_y")] = 20.3  # bottom 0.2 m below the container's top
    with pytest.raises(CraneFault, match="landed on the target container"):
        rhs(x.tolist(), 0, 0, 0, 0, 0, 0, 0)
    x[I("spreader_x")] = 3.0  # beside it (2.438 wide): only the arms could touch it
    rhs(x.tolist(), 0, 0, 0, 0, 0, 0, 0)
