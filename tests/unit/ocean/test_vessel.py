"""Vessel6DOF: free decay against the linear closed form, invariants of the undamped body.

Vessel: :meth:`VesselData.box_barge` (100 m x 30 m x 5 m, KG 8 m): heave, roll and pitch
periods 6.344, 7.792 and 5.587 s from :math:`2\\pi\\sqrt{(M+A)_{ii}/C_{ii}}`.
"""

import math

import numpy as np
import pytest

from blocks.ocean.morison import rotation_rpy
from blocks.ocean.vessel import (
    Vessel6DOF,
    VesselData,
    coriolis,
    quat_from_rpy,
    quat_matrix,
    rpy_from_matrix,
)
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

BARGE = VesselData.box_barge()


def simulate(vessel, t_end, dt):
    """RK4 with step ``dt`` (rounded to 0.1 ms); the state x = (r, q, nu) at every step."""
    dt = round(dt, 4)
    b = DiagramBuilder("v")
    b.add(vessel)
    n = vessel.name
    sim = Simulator(b.build(), solver="rk4", dt=dt,
                    record=[f"{n}.position", f"{n}.quaternion", f"{n}.nu"])
    res = sim.run(round(t_end / dt) * dt)
    x = np.hstack([res[f"{n}.position"], res[f"{n}.quaternion"], res[f"{n}.nu"]])
    vessel.final_state = sim.ctx.state(vessel.x).copy()
    return res.time, x


def decay(t, x0, wn, zeta):
    wd = wn * math.sqrt(1 - zeta * zeta)
    return x0 * np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta * wn / wd * np.sin(wd * t))


def test_barge_data():
    d = BARGE
    assert d.mass == pytest.approx(1025 * 15000)
    assert d.gm_t == pytest.approx(2.5 + 15 - 8) and d.gm_l == pytest.approx(2.5 + 10000 / 60 - 8)
    T = d.natural_periods()
    assert T["heave"] == pytest.approx(2 * math.pi * math.sqrt(2 * d.mass / (1025 * 9.81 * 3000)))
    assert (T["heave"], T["roll"], T["pitch"]) == pytest.approx((6.344, 7.792, 5.587), abs=1e-3)
    dd = d.with_damping_ratios(0.1, 0.05, 0.08, horizontal=(1e5, 2e5, 3e8))
    assert dd.damping_ratios() == pytest.approx({"heave": 0.1, "roll": 0.05, "pitch": 0.08})
    assert np.diag(dd.damping)[[0, 1, 5]] == pytest.approx([1e5, 2e5, 3e8])


@pytest.mark.parametrize("dof,index,x0", [("heave", 2, 0.5), ("roll", 3, 0.02),
                                          ("pitch", 4, 0.01)])
def test_free_decay_matches_linear_closed_form(dof, index, x0):
    d = BARGE.with_damping_ratios(0.1, 0.05, 0.08)
    T, zeta = d.natural_periods()[dof], d.damping_ratios()[dof]
    pos, rpy = np.zeros(3), np.zeros(3)
    if index == 2:
        pos[2] = x0
    else:
        rpy[index - 3] = x0
    v = Vessel6DOF("v", d, position=pos, rpy=rpy, external=False, wave=False)
    t, x = simulate(v, 2.5 * T, T / 400)
    if index == 2:
        y = x[:, 2]
    else:
        y = np.array([rpy_from_matrix(quat_matrix(q))[index - 3] for q in x[:, 3:7]])
    ref = decay(t, x0, 2 * math.pi / T, zeta)
    # heave is exactly linear; roll and pitch carry sin*cos terms of relative size x0^2
    tol = 1e-8 if index == 2 else 2 * x0 ** 2
    err = np.max(np.abs(y - ref)) / x0
    print(dof, "max error / amplitude", err)
    assert err < tol
    # the damped period from upward zero crossings and the log decrement
    up = np.where((y[:-1] < 0) & (y[1:] >= 0))[0]
    tc = t[up] - y[up] * (t[up + 1] - t[up]) / (y[up + 1] - y[up])
    Td = T / math.sqrt(1 - zeta ** 2)
    print(dof, "damped period", np.diff(tc)[0], "closed form", Td)
    assert np.diff(tc)[0] == pytest.approx(Td, rel=1e-4)
    # the other five DOF stay at rest
    others = [i for i in range(6) if i != index]
    nu = x[:, 7:]
    assert np.max(np.abs(nu[:, others])) < 1e-12


def coupled_added_mass(d):
    """A symmetric, non-diagonal M_A (surge-pitch, sway-roll, sway-yaw, heave-pitch)."""
    A = d.added_mass.copy()
    m = d.mass
    A[0, 4] = A[4, 0] = 0.1 * m * 5.0
    A[1, 3] = A[3, 1] = -0.2 * m * 2.0
    A[1, 5] = A[5, 1] = 0.05 * m * 10.0
    A[2, 4] = A[4, 2] = 0.3 * m * 4.0
    return A


def test_undamped_energy_is_conserved_with_restoring_and_coupled_added_mass():
    import dataclasses
    d = dataclasses.replace(BARGE, added_mass=coupled_added_mass(BARGE))
    v = Vessel6DOF("v", d, position=(1.0, -2.0, 0.3), rpy=(0.05, -0.02, 0.7),
                   nu=(0.5, -0.3, 0.2, 0.01, -0.02, 0.03), external=False, wave=False)
    t, x = simulate(v, 20.0, 0.01)
    E = np.array([v.energy(xi) for xi in x])
    assert np.max(np.abs(E - E[0])) / E[0] < 1e-8
    # quaternion norm held at 1
    assert abs(np.linalg.norm(v.final_state[3:7]) - 1) < 1e-9
    # with restoring only vertical forces and horizontal-axis couples act: horizontal
    # impulse and vertical angular impulse are conserved
    P0, H0 = v.impulse(x[0])
    for xi in x[::100]:
        P, H = v.impulse(xi)
        assert np.allclose(P[:2], P0[:2], rtol=0, atol=1e-8 * np.abs(P0).max())
        assert H[2] == pytest.approx(H0[2], rel=1e-8)


def test_kirchhoff_impulse_is_conserved_without_forces():
    import dataclasses
    d = dataclasses.replace(BARGE, added_mass=coupled_added_mass(BARGE), volume=0.0,
                            waterplane_area=0.0)
    kw = dict(position=(3.0, 1.0, -2.0), rpy=(0.4, -0.3, 1.0),
              nu=(1.0, -0.5, 0.3, 0.05, -0.08, 0.1), external=False, wave=False)
    v = Vessel6DOF("v", d, **kw)
    t, x = simulate(v, 30.0, 0.02)
    P0, H0 = v.impulse(x[0])
    E0 = v.energy(x[0])
    drift_p = max(np.abs(v.impulse(xi)[0] - P0).max() for xi in x) / np.abs(P0).max()
    drift_h = max(np.abs(v.impulse(xi)[1] - H0).max() for xi in x) / np.abs(H0).max()
    assert drift_p < 1e-9 and drift_h < 1e-9
    assert abs(v.energy(x[-1]) - E0) / E0 < 1e-9
    # the motion is genuinely coupled (the body tumbles, the body velocities change)
    assert np.abs(x[-1, 7:] - x[0, 7:]).max() > 0.05
    # without C_A the energy is still conserved but the impulse is not
    w = Vessel6DOF("w", d, coriolis_added_mass=False, **kw)
    t, y = simulate(w, 30.0, 0.02)
    assert abs(w.energy(y[-1]) - E0) / E0 < 1e-9
    assert np.abs(w.impulse(y[-1])[0] - P0).max() / np.abs(P0).max() > 1e-2


def test_yaw_does_not_change_the_restoring():
    v = Vessel6DOF("v", BARGE, external=False, wave=False)
    for roll, pitch in ((0.05, 0.0), (0.0, -0.04), (0.1, 0.07)):
        loads = [v.hydrostatic_load(0.3, quat_matrix(quat_from_rpy((roll, pitch, yaw))))
                 for yaw in (0.0, 0.8, -2.5, math.pi)]
        for ld in loads[1:]:
            np.testing.assert_allclose(ld, loads[0], rtol=0, atol=1e-9 * np.abs(loads[0]).max())
        E = [v.energy(v.initial_state((0, 0, 0.3), (roll, pitch, yaw))) for yaw in (0, 1, 2)]
        assert E == pytest.approx([E[0]] * 3, rel=1e-13)
    # small angles: the linear coefficients
    c33, c44, c55 = BARGE.restoring()
    tau = v.hydrostatic_load(0.1, quat_matrix(quat_from_rpy((1e-6, 0, 0))))
    assert tau[3] == pytest.approx(-c44 * 1e-6, rel=1e-9) and tau[2] == pytest.approx(-c33 * 0.1)
    tau = v.hydrostatic_load(0.0, quat_matrix(quat_from_rpy((0, 1e-6, 0))))
    assert tau[4] == pytest.approx(-c55 * 1e-6, rel=1e-9)
    # a yawed decay has the same roll history as an unyawed one
    d = BARGE.with_damping_ratios(0.1, 0.05, 0.08)
    runs = []
    for yaw in (0.0, 1.2):
        w = Vessel6DOF("w", d, rpy=(0.03, 0.01, yaw), external=False, wave=False)
        t, x = simulate(w, 8.0, 0.02)
        runs.append(np.array([rpy_from_matrix(quat_matrix(q)) for q in x[:, 3:7]]))
    np.testing.assert_allclose(runs[1][:, :2], runs[0][:, :2], atol=1e-12)
    np.testing.assert_allclose(runs[1][:, 2] - runs[0][:, 2], 1.2, atol=1e-12)


def test_rotations_and_coriolis_helpers():
    rpy = np.array([0.3, -0.4, 2.0])
    np.testing.assert_allclose(quat_matrix(quat_from_rpy(rpy)), rotation_rpy(rpy), atol=1e-15)
    np.testing.assert_allclose(rpy_from_matrix(rotation_rpy(rpy)), rpy, atol=1e-14)
    # C(nu) nu does no work
    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 6))
    M = A @ A.T + 6 * np.eye(6)
    for _ in range(5):
        nu = rng.normal(size=6)
        assert abs(nu @ coriolis(M, nu)) < 1e-12 * np.linalg.norm(nu) ** 2 * np.abs(M).max()


def test_hull_point_kinematics_and_load_point_moment():
    tip = np.array([-30.0, 12.0, 37.0])
    v = Vessel6DOF("v", BARGE, points={"tip": tip}, load_points={"hook": tip},
                   external=True, wave=True)
    h = BlockHarness(v)
    x = v.initial_state((1.0, 2.0, 0.2), (0.02, -0.01, 0.5), (0.3, -0.2, 0.1, 0.01, 0.02, -0.03))
    h.set_state("x", x)
    F = np.array([1e5, -2e5, -1e6])
    h.set_input("hook_force", F).set_input("force", [0, 0, 3e5]).set_input("wave_moment",
                                                                            [1e6, 0, 0])
    xd = h.derivatives()
    # velocity and acceleration by differentiating the position along the motion
    eps = 1e-6

    def at(dt):
        h.set_state("x", x + dt * xd)
        return h.output("tip_pos"), h.output("tip_vel")
    (pp, vp), (pm, vm) = at(eps), at(-eps)
    h.set_state("x", x)
    np.testing.assert_allclose((pp - pm) / (2 * eps), h.output("tip_vel"), rtol=1e-7, atol=1e-9)
    # the acceleration: the velocity's derivative along the trajectory (with nu_dot held)
    np.testing.assert_allclose((vp - vm) / (2 * eps), h.output("tip_acc"), rtol=1e-6,
                               atol=1e-8)
    # the load at a hull point: a body force and the moment s x F
    R = quat_matrix(x[3:7])
    tau = v.applied_load(h.ctx, R)
    fb = R.T @ F
    np.testing.assert_allclose(tau[:3], fb + R.T @ [0, 0, 3e5])
    np.testing.assert_allclose(tau[3:], np.cross(tip, fb) + [1e6, 0, 0])
    assert h.output("rotation") == pytest.approx([0.02, -0.01, 0.5])
    np.testing.assert_allclose(h.output("velocity"), R @ x[7:10])


def test_parameter_errors():
    with pytest.raises(ParameterError, match="symmetric"):
        VesselData(mass=1.0, inertia=(1, 1, 1), added_mass=np.triu(np.ones((6, 6))))
    with pytest.raises(ParameterError, match="mass must be > 0"):
        VesselData(mass=0.0, inertia=(1, 1, 1))
    with pytest.raises(ParameterError, match="body coordinates"):
        Vessel6DOF("v", BARGE, points={"tip": (1, 2)})
