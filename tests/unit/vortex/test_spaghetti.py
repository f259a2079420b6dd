"""Segmented beam of the (reverse) spaghetti problem: statics, vibration, vortex lift, energy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from blocks.vortex.spaghetti import (
    BeamGeometry,
    SegmentedBeam,
    SpaghettiBeam,
    beam_for,
    bound_vortex_circulation,
    divergence_speed,
    induced_conj_velocity,
    linear_eigenvalues,
    vortex_forces,
    wake_circulation,
)
from cosim.testing import BlockHarness

FREE = BeamGeometry(clearance_m=1.0, gap_length_m=0.0)  # no gap: a free chain


def clamped_cantilever(n: int, **kw) -> SegmentedBeam:
    """Steel beam, fully out of a 'gap' preloaded so that the inner part is clamped."""
    geo = BeamGeometry(clearance_m=-2e-5, friction_coefficient=0.0, contact_stiffness=1e10)
    return beam_for("steel", n_segments=n, fluid_density=0.0, geometry=geo, **kw)


def rk4(beam, x, v, dt, steps):
    for _ in range(steps):
        k1 = beam.rhs(x, v)
        k2 = beam.rhs(x + 0.5 * dt * k1, v)
        k3 = beam.rhs(x + 0.5 * dt * k2, v)
        k4 = beam.rhs(x + dt * k3, v)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x


def test_tip_load_statics_converge_to_euler_bernoulli():
    # free chain, node 0 and segment 1 held by a stiff spring law: solve K q = Q directly
    P, L = 1.0, 0.5
    errs = []
    for n in (4, 8, 16, 32):
        b = beam_for("steel", n_segments=n, fluid_density=0.0, geometry=FREE)
        EI = b.bending_rigidity
        # cantilever: y0 = 0, phi_1 = 0 at the clamp (first segment is the clamp's half)
        # hinge stiffness matrix on phi_2..phi_n with phi_1 fixed, tip load P
        K = b.k_phi * b.lap[1:, 1:]
        Q = b.generalized(np.array([n - 1]), np.array([b.dl]), np.zeros(1), np.array([P]),
                          np.zeros(n + 1))[2:]
        phi = np.linalg.solve(K, Q)
        tip = b.dl * np.sum(np.sin(phi))
        exact = P * L ** 3 / (3 * EI)
        errs.append(abs(tip / exact - 1))
    assert errs[-1] < 0.1
    assert all(e2 < e1 for e1, e2 in zip(errs, errs[1:]))  # converges as n_b grows


def test_first_frequency_converges_to_cantilever_mode():
    errs = []
    for n in (8, 16):
        b = clamped_cantilever(n)
        x = b.initial_state(b.length_m * (1 - 2.0 / n) + 1e-4)  # 2 segments in the clamp
        nx = x.size
        A = np.zeros((nx, nx))
        f0 = b.rhs(x, 0.0)
        for i in range(nx):
            xp = x.copy()
            xp[i] += 1e-8
            A[:, i] = (b.rhs(xp, 0.0) - f0) / 1e-8
        w = np.sort(np.abs(np.linalg.eigvals(A[1:, 1:]).imag))
        w1 = w[w > 1.0][0]
        lw = b.length_m * (1 - 2.0 / n) + 1e-4
        exact = b.first_mode_rad_s(lw)
        errs.append(abs(w1 / exact - 1))
    assert errs[-1] < 0.08
    assert errs[1] < errs[0]


def test_flat_plate_lift_is_thin_airfoil():
    c, alpha, V, rho = 0.1, math.radians(3.0), 3.0, 1000.0
    for n in (10, 50):
        zv = np.linspace(0.0, c, n + 1) * np.exp(-1j * alpha)  # leading edge at 0, nose up
        zc = 0.5 * (zv[1:] + zv[:-1])
        vel = complex(-V)  # plate moving in -X: relative flow +X, trailing end last
        g = bound_vortex_circulation(zv, zc, np.full(n, vel), kutta=-1)
        f = vortex_forces(zv, g, np.full(n + 1, vel), rho).sum()
        assert f.imag == pytest.approx(math.pi * rho * V ** 2 * c * math.sin(alpha), rel=1e-3)
        assert g.sum() < 0  # clockwise circulation gives upward lift in a +X flow
        assert abs(f.real) < 1e-9 * abs(f.imag) + 1e-9


def test_energy_conserved_without_damping():
    b = beam_for("steel", n_segments=8, fluid_density=0.0, hinge_damping_time_s=0.0,
                 geometry=FREE)
    x = b.initial_state(0.5, tip_impulse=0.05)
    x[2:10] = 0.02 * np.sin(np.arange(8))  # bent start
    e0 = b.energy(x)
    x1 = rk4(b, x, 0.0, 2e-5, 2000)
    assert b.energy(x1) == pytest.approx(e0, rel=1e-6)


def test_contact_force_of_beam_resting_on_gap_edge():
    # gravity on, strip 60 % out, the free end hanging: on average over the rocking motion
    # the gap walls and edges carry the whole weight (momentum balance in Y)
    b = beam_for("steel", n_segments=4, fluid_density=0.0, gravity=9.81,
                 hinge_damping_time_s=1e-3,
                 geometry=BeamGeometry(clearance_m=1e-3, friction_coefficient=0.0,
                                       contact_damping_ratio=1.0))
    x = rk4(b, b.initial_state(0.3), 0.0, 1e-4, 1500)
    fy, dt, steps = [], 1e-4, 1500
    vy0 = b.node_velocities(0.0, x[1:6], x[6:])[1]
    for _ in range(steps):
        fy.append(b.evaluate(x, 0.0)["contact"].imag)
        x = rk4(b, x, 0.0, dt, 1)
    vy1 = b.node_velocities(0.0, x[1:6], x[6:])[1]
    weight = b.m * b.n * 9.81
    # impulse balance: mean contact force = weight + momentum change / time
    dp = b.m * np.sum(0.5 * (vy1[1:] + vy1[:-1]) - 0.5 * (vy0[1:] + vy0[:-1]))
    assert np.mean(fy) == pytest.approx(weight + dp / (dt * steps), rel=0.03)
    assert np.mean(fy) == pytest.approx(weight, rel=0.2)


def test_block_ports_and_derivatives():
    blk = SpaghettiBeam("beam", beam_for("aluminium", n_segments=6), wetted_length_m=0.2,
                        tip_impulse=0.01)
    h = BlockHarness(blk).set_input("speed", 2.0)
    tip = h.output("tip")
    assert tip == pytest.approx([0.2, 0.0], abs=1e-12)
    assert h.output("wetted_length") == pytest.approx(0.2)
    assert h.output("nodes").shape == (7, 2)
    d = h.derivatives()
    assert d[0] == 2.0 and d.shape == (2 * 6 + 3,)
    assert np.all(np.isfinite(h.output("fluid_force")))


def test_divergence_speed_ordering_scales_with_sqrt_ei():
    v = {m: divergence_speed(beam_for(m, n_segments=8, fluid_density=1000.0), 0.45)
         for m in ("frp", "aluminium", "steel")}
    assert v["frp"] < v["aluminium"] < v["steel"]
    kappa = {m: 1000.0 * v[m] ** 2 * 0.45 ** 3 / beam_for(m).bending_rigidity for m in v}
    assert max(kappa.values()) / min(kappa.values()) < 1.05  # one kappa_c for all
    assert 1.0 < kappa["steel"] < 3.0  # inverted-flag order of magnitude
    assert divergence_speed(beam_for("steel", n_segments=8, fluid_density=0.0), 0.45) is None


def test_plate_sliding_along_its_chord_carries_no_circulation():
    # the no-penetration condition sees only the normal velocity: a drawn-out strip whose
    # material slides along a shape fixed in the fluid produces no lift, whatever its slope
    c, alpha, V, rho, n = 0.2, math.radians(5.0), 4.0, 1000.0, 40
    e = np.exp(1j * alpha)
    zv = np.linspace(0.0, c, n + 1) * e
    zc = 0.5 * (zv[1:] + zv[:-1])
    for kutta in (0, -1):
        g = bound_vortex_circulation(zv, zc, np.full(n, V * e), kutta=kutta)
        assert np.max(np.abs(g)) < 1e-12
    # the same plate translating along X (geometry moving through the fluid) is lifted
    g = bound_vortex_circulation(zv, zc, np.full(n, complex(V)), kutta=0)
    f = vortex_forces(zv, g, np.full(n + 1, complex(V)), rho).sum()
    assert abs(f) == pytest.approx(math.pi * rho * V ** 2 * c * math.sin(alpha), rel=0.05)


def test_kutta_end_sets_the_sign_of_the_fluid_damping():
    # frozen-length linearisation, steel in water, 8 segments
    def top(kutta, wet, v):
        lam = linear_eigenvalues(beam_for("steel", n_segments=8, kutta=kutta), wet, v)
        return lam[np.argmax(lam.real)]

    # trailing (wall-end) Kutta: damped first mode at low speed ...
    lam = top("trailing", 0.14, 0.5)
    assert lam.real < -20.0 and abs(lam.imag) > 200.0
    assert top("trailing", 0.26, 1.0).real < 0.0
    # ... and a real (divergent) eigenvalue once rho V^2 L^3 / EI is well above ~1.7
    for wet, v in ((0.26, 4.0), (0.45, 3.0)):
        lam = top("trailing", wet, v)
        assert lam.real > 5.0 and abs(lam.imag) < 1e-6
    # free-end Kutta: negative fluid damping already at 0.5 m/s (growing oscillation)
    lam = top("free_end", 0.14, 0.5)
    assert lam.real > 20.0 and abs(lam.imag) > 200.0


def test_added_mass_of_a_flat_plate_is_rho_pi_l2_over_4():
    # strip fully out, straight: heave added mass per unit span rho pi L^2 / 4, pitch about
    # mid-chord rho pi L^4 / 128; the point-vortex discretisation converges like 1/n
    rho, L = 1000.0, 0.5
    errs = []
    for n in (8, 16, 32):
        b = beam_for("steel", n_segments=n, fluid_density=rho, geometry=FREE, added_mass=True)
        x = b.initial_state(L)
        _, q, qd = b.split(x)
        Ma = b.added_mass_matrix(*b.nodes(x[0], q), q, qd)
        assert np.allclose(Ma, Ma.T) and np.linalg.eigvalsh(Ma).min() > -1e-9
        errs.append(Ma[0, 0] / (rho * math.pi * L ** 2 / 4) - 1)
        pitch = np.ones(n + 1)
        pitch[0] = -L / 2  # rotation about mid-chord at unit rate
        if n == 32:
            assert pitch @ Ma @ pitch == pytest.approx(rho * math.pi * L ** 4 / 128, rel=0.02)
    assert 0 < errs[-1] < 0.01 and errs[0] > errs[1] > errs[2]
    # no fluid, no added mass; and the option only enters the dynamics through the mass
    b = beam_for("steel", n_segments=8, fluid_density=0.0, geometry=FREE, added_mass=True)
    x = b.initial_state(L)
    assert not b.added_mass_matrix(*b.nodes(x[0], x[1:10]), x[1:10], x[10:]).any()



def test_contact_list_names_the_surfaces():
    # strip 0.3 m out and tilted down by 0.01 rad: it presses on the lower inlet corner and,
    # inside the gap, on the upper wall; a node put under the lower guide is a guide contact
    geo = BeamGeometry(clearance_m=1e-4, guide_angle_deg=15.0, guide_length_m=0.1)
    b = beam_for("frp", n_segments=10, fluid_density=0.0, geometry=geo)
    x = b.initial_state(0.3)
    x[2:12] = -0.01
    x[1] = 0.002 * 0.01 + 0.05e-3   # the root end at the upper wall
    surfaces = {c[0] for c in b.contact_list(x, -1.0)}
    assert {"inlet_lower", "gap_upper"} <= surfaces
    fsum = sum(c[3] for c in b.contact_list(x, -1.0))
    assert fsum > 0.0
    x[2:12] = 0.0
    x[6] = -0.6                     # segment 0..0.05 m out bent down through the lower guide
    hits = [c for c in b.contact_list(x, 0.0) if c[0].startswith("guide")]
    assert hits and all(c[3] > 0 for c in hits)


def _wagner(s: float) -> float:
    """Jones' approximation of Wagner's function (s in semi-chords)."""
    return 1.0 - 0.165 * math.exp(-0.0455 * s) - 0.335 * math.exp(-0.3 * s)


def test_impulsively_started_plate_with_wake_approaches_wagner():
    # plate at rest in a stream started at t = 0; a free vortex is shed from the trailing
    # edge every step (Kelvin), the wake is frozen in the fluid (convected at U)
    U, c, rho, nv, dt, alpha = 1.0, 1.0, 1.0, 40, 0.025, 0.02
    zv = np.linspace(0.0, c, nv + 1) * np.exp(-1j * alpha)
    zc = 0.5 * (zv[1:] + zv[:-1])
    zero_c, zero_v = np.zeros(nv, complex), np.zeros(nv + 1, complex)
    lqs = math.pi * rho * U ** 2 * c * alpha
    g_qs = bound_vortex_circulation(zv, zc, zero_c, U, -1)
    assert vortex_forces(zv, g_qs, zero_v, rho, U).sum().imag == pytest.approx(lqs, rel=0.01)
    zw, gw = np.zeros(0, complex), np.zeros(0)
    lift, impulse = [], []
    for _ in range(int(round(2.0 * c / U / dt)) + 1):          # to 4 semi-chords
        gb, gn = wake_circulation(zv, zc, zero_c, U, -1, zw, gw, zv[-1] + 0.25 * U * dt)
        zw, gw = np.append(zw, zv[-1] + 0.25 * U * dt), np.append(gw, gn)
        assert gb.sum() + gw.sum() == pytest.approx(0.0, abs=1e-12)   # Kelvin
        f = vortex_forces(zv, gb, zero_v, rho, U, w_ext=induced_conj_velocity(zv, zw, gw))
        lift.append(f.sum().imag / lqs)
        impulse.append(rho * ((gb * zv.real).sum() + (gw * zw.real).sum()))
        zw = zw + U * dt
    # the seed's Kutta-Joukowski force with the wake: Wagner-like growth, 0.71 at s = 4
    # (Wagner 0.76; it lags early because the per-vortex KJ force has no d[phi]/dt term)
    assert np.all(np.diff(lift) > 0) and lift[0] < 0.5
    assert lift[-1] == pytest.approx(_wagner(4.0), rel=0.10)
    # the circulation itself is Wagner's: the impulse force rho d/dt sum(Gamma x)
    lift_i = np.gradient(impulse, dt) / lqs
    assert lift_i[-2] == pytest.approx(_wagner(4.0 - 2 * U * dt / c), rel=0.03)


def test_wake_at_the_wall_end_cancels_the_circulation():
    # drawn out, the trailing edge is fixed at the wall: the shed wake stays there and merges
    # with the trailing vortex, so the total circulation is zero (no Kutta row)
    c, alpha, V, n = 0.2, math.radians(5.0), 4.0, 40
    zv = np.linspace(0.0, c, n + 1) * np.exp(1j * alpha)
    zc = 0.5 * (zv[1:] + zv[:-1])
    gb, gw = wake_circulation(zv, zc, np.full(n, complex(V)), 0.0, 0,
                              np.zeros(0, complex), np.zeros(0))
    assert gb[0] == 0.0 and abs(gw) > 0.0
    assert gb.sum() + gw == pytest.approx(0.0, abs=1e-12)
    # less circulatory lift: the frozen-length divergence speed rises by ~1.4
    for m in ("aluminium", "steel"):
        v0 = divergence_speed(beam_for(m, n_segments=8), 0.45)
        v1 = divergence_speed(beam_for(m, n_segments=8, wake=True), 0.45)
        assert 1.3 < v1 / v0 < 1.5


def test_drive_acceleration_swings_a_bar_on_a_rail():
    """One segment, its driven end on a frictionless rail (X prescribed, Y free), no fluid or
    gravity: Newton-Euler for the bar gives phi'' = 6 a sin(phi) / (L (1 + 3 sin^2 phi)) at
    rest, and the centre of mass keeps its Y (no Y force): y0'' = -(L/2) cos(phi) phi''."""
    L, a, phi = 0.5, 3.0, 0.3
    beam = SegmentedBeam(n_segments=1, length_m=L, fluid_density=0.0, geometry=FREE)
    x = np.array([0.1, 0.0, phi, 0.0, 0.0])        # fully out, at rest
    d = beam.rhs(x, 0.0, a)
    phi_dd = 6 * a * math.sin(phi) / (L * (1 + 3 * math.sin(phi) ** 2))
    assert d[4] == pytest.approx(phi_dd, rel=1e-12)
    assert d[3] == pytest.approx(-0.5 * L * math.cos(phi) * phi_dd, rel=1e-12)
    assert np.allclose(beam.rhs(x, 0.0)[3:], 0.0)  # without the acceleration: at rest


def test_block_with_drive_acceleration_input():
    beam = beam_for("steel", n_segments=4, fluid_density=0.0, geometry=FREE)
    x0 = np.array([0.1, 0.0, 0.2, 0.2, 0.2, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0])
    blk = SpaghettiBeam("beam", beam, drive_acceleration=True, initial_state=x0)
    h = BlockHarness(blk).set_input("speed", 1.0).set_input("acceleration", 2.0)
    d = h.derivatives()
    assert np.allclose(d, beam.rhs(x0, 1.0, 2.0))
    assert np.allclose(beam.rhs(x0, 1.0)[6:], 0.0)  # the tilted chain swings only when
    assert np.all(np.abs(d[7:]) > 0.0)             # the drive accelerates
