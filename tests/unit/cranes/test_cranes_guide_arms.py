"""Guide arms (flippers): contact geometry, PD and stop-bar torques, forces on the spreader."""

import dataclasses
import math

import numpy as np
import pytest

from blocks.cranes import (
    ARM_GROUPS,
    STATE_NAMES,
    STS_CRANE,
    TargetContainer,
    arm_references,
    contact_angle,
    equilibrium,
    make_rhs,
    suspended_body,
)
from blocks.cranes.guide_arms import make_arm_dynamics

I = STATE_NAMES.index
A = STS_CRANE.arms
R0 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
UP, DN = math.pi / 2, -math.pi / 2


def test_contact_angle_edge_tip_and_none():
    a, rho = contact_angle(0.3, -0.4, 1.2)  # edge within reach
    assert (a, rho) == (pytest.approx(math.atan2(-0.4, 0.3)), pytest.approx(0.5))
    # the arm at alpha passes through the edge
    assert rho * math.cos(a) == pytest.approx(0.3) and rho * math.sin(a) == pytest.approx(-0.4)
    a, rho = contact_angle(1.0, -0.9, 1.2)  # edge out of reach: the tip lands on the top
    assert rho == 1.2 and 1.2 * math.sin(a) == pytest.approx(-0.9)
    assert 1.2 * math.cos(a) < 1.0  # ... inside the container's face
    assert contact_angle(-0.05, -0.5, 1.2) is None  # hinge outside the face
    assert contact_angle(0.2, 0.1, 1.2) is None  # top above the hinge
    assert contact_angle(0.2, -1.3, 1.2) is None  # top out of reach


def test_groups_and_references():
    assert [g for g, _ in ARM_GROUPS] == ["arms_12", "arms_34", "arm_5", "arm_6"]
    assert sorted(i for _, idx in ARM_GROUPS for i in idx) == list(range(6))
    assert arm_references(A, 1.0, 0.0, 0.0, 1.0) == (DN, DN, UP, UP, UP, DN)
    assert arm_references(A, 0.0, 0.0, 0.0, 0.0) == (UP,) * 6  # "all up"


def test_pd_saturation_and_stop_bars():
    arms = make_arm_dynamics(A, suspended_body(STS_CRANE), None)
    J, K, C = A.inertia_kgm2, A.gain_nm_per_rad, A.damping_nms_per_rad
    th, om = [UP] * 6, [0.0] * 6
    dom, *f = arms(th, om, [UP] * 6, (0, 0, 0), R0, None)
    assert dom == [0.0] * 6 and f == [0.0] * 6
    # commanded down from up: the torque saturates
    dom, *_ = arms(th, om, [DN] * 6, (0, 0, 0), R0, None)
    assert dom == [pytest.approx(-A.torque_max_nm / J)] * 6
    # swinging down at 1 rad/s: the saturated torque minus the damping (the flow losses)
    dom, *_ = arms(th, [-1.0] * 6, [DN] * 6, (0, 0, 0), R0, None)
    assert dom[0] == pytest.approx((-A.torque_max_nm + C * 1.0) / J)
    # small error: linear PD
    dom, *_ = arms([0.0] * 6, [0.1] * 6, [0.01] * 6, (0, 0, 0), R0, None)
    assert dom[0] == pytest.approx((K * 0.01 - C * 0.1) / J)
    # 0.01 rad past the upper stop bar, at rest: the bar pushes back with k_s * 0.01
    dom, *_ = arms([UP + 0.01] * 6, om, [UP] * 6, (0, 0, 0), R0, None)
    assert dom[0] == pytest.approx((-K * 0.01 - A.stop_stiffness_nm_per_rad * 0.01) / J)
    # past the lower bar and moving away from it (damping would pull): no adhesion
    dom, *_ = arms([DN - 0.001] * 6, [1.0] * 6, [DN] * 6, (0, 0, 0), R0, None)
    assert dom[0] == pytest.approx((K * 0.001 - C * 1.0) / J)


@pytest.mark.parametrize("arm, axis, sign", [(0, 0, 1.0), (2, 0, -1.0), (4, 2, 1.0),
                                             (5, 2, -1.0)])
def test_contact_pushes_the_spreader_back_over_the_container(arm, axis, sign):
    body = suspended_body(STS_CRANE)
    h = body.hinges[arm]
    top = 10.0
    # spreader level, hinge 0.6 m above the top and 0.2 m inboard of the face
    c_n, c_y = 0.2, -0.6
    r = np.array([0.0, top - c_y - h[1], 0.0])
    face = h[axis] + sign * c_n  # the face 0.2 m outboard of the hinge (body = global)
    center = [0.0, 0.0]
    half = (2.438 / 2, 12.192 / 2)[axis // 2]
    center[axis // 2] = face - sign * half
    t = TargetContainer(center[0], center[1], top)
    arms = make_arm_dynamics(A, body, t)
    th = [UP] * 6
    th[arm] = DN
    out = {}
    dom, fx, fy, fz, mx, my, mz = arms(th, [0.0] * 6, [UP] * 6, tuple(r), R0, out)
    alpha = math.atan2(c_y, c_n)
    rho = math.hypot(c_n, c_y)
    Tc = A.contact_stiffness_nm_per_rad * (alpha - DN)
    assert out["arm_contact_torque"][arm] == pytest.approx(Tc)
    assert [i for i, v in enumerate(out["arm_contact_torque"]) if v] == [arm]
    # force normal to the (vertical) arm: horizontal, outward along the arm's axis
    F = np.array([fx, fy, fz])
    expect = np.zeros(3)
    expect[axis] = sign * Tc / rho
    assert np.allclose(F, expect, atol=1e-9)
    # its moment about the centre of mass, applied rho below the hinge
    point = h + np.array([0.0, -rho, 0.0])
    assert np.allclose([mx, my, mz], np.cross(point, F), atol=1e-9)
    # the arm feels the contact torque (upwards) on top of its PD torque
    pd = A.gain_nm_per_rad * (UP - DN)
    assert dom[arm] * A.inertia_kgm2 == pytest.approx(min(pd, A.torque_max_nm) + Tc)


def test_fast_path_is_exact():
    """Arms at rest on their references: the shortcut gives the full evaluation's result."""
    t = TargetContainer(0.0, 0.0, 5.0)
    p = dataclasses.replace(STS_CRANE, target=t)
    rhs = make_rhs(p)
    x = equilibrium(STS_CRANE, 0.0, 0.0, 20.0)  # 16 m above the target: out of the arms' reach
    assert x[I("spreader_y")] - 5.0 > make_arm_dynamics(
        p.arms, suspended_body(p), t).reach
    x[4:7] += (0.01, 0.0, 0.02)
    x[15:18] = (0.1, -0.05, 0.02)
    x[I("arm1_angle"):I("arm6_angle") + 1] = DN
    fast = rhs(x.tolist(), 0.0, 0.0, 1e5, 1.0, 1.0, 1.0, 1.0)
    full = rhs(x.tolist(), 0.0, 0.0, 1e5, 1.0, 1.0, 1.0, 1.0, {})
    assert fast == full
