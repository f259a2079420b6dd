"""Gantry crane (seed Paper V) against analytic references and an independent formulation.

Model: :mod:`blocks.cranes` (parameters justified in :mod:`blocks.cranes.parameters`),
example ``examples/gantry_crane.py``.  The references:

1. static equilibrium: rope tensions, trolley deflection and rope stretch in closed form;
2. small-amplitude frequencies: the sway of a translating pendulum on a free trolley (or
   gantry), the skew (quadrifilar torsion) mode, the vertical bounce modes of spreader,
   trolley and hoist drum (a 3x3 eigenproblem written here from the rope energy);
3. energy conservation without damping and drives (constant forces), and the convergence
   order of RK4 in the energy and in the state;
4. the same machine built with :mod:`blocks.multibody` (absolute coordinates, joints by
   Lagrange multipliers; :mod:`blocks.cranes.reference`);
5. the trolley drive: speed tracking against a linear model of drive + trolley +
   pendulum, and with the torque on the torque-speed curve against a nonlinear
   cart-pendulum.

The solver is the seed's RK4 with a 5 ms step unless a test varies the step.  Expected
frequencies are the analytic ones as RK4 reproduces them (:func:`rk4_frequency`: the
phase of RK4's amplification factor, 1e-10 to 6e-6 below the exact value here), so the
tolerances measure the model, not the integrator.
"""

import dataclasses
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import eigh
from scipy.optimize import least_squares

import examples.gantry_crane as gx
from blocks.cranes import (
    STATE_NAMES,
    STS_CRANE,
    ContainerLoad,
    GantryCrane,
    equilibrium,
    make_rhs,
    suspended_body,
    unpack,
)
from blocks.cranes.dynamics import rotation
from blocks.cranes.parameters import ROPE_SIGNS
from blocks.cranes.reference import crane_states, multibody_block
from cosim import DiagramBuilder, Simulator
from cosim.testing import BlockHarness

I = STATE_NAMES.index
DT = 0.005
G = STS_CRANE.gravity_m_s2


def undamped(p):
    return dataclasses.replace(p, rope_damping_time_s=0.0, trolley_vertical_damping_ns_m=0.0,
                               air_density_kg_m3=0.0)


def run_constant(p, x, forces, t_end, dt=DT):
    """The crane block alone with constant drive forces (bench.crane's diagram)."""
    from bench.crane import swing_block_diagram
    sim = Simulator(swing_block_diagram(p, x, forces), solver="rk4", dt=dt,
                    record=["crane.state"])
    res = sim.run(t_end)
    return res.time, res["crane.state"]


def rk4_frequency(w, h=DT):
    """The frequency at which RK4 with step h reproduces an oscillation of frequency w."""
    x = w * h
    return float(np.angle(1 + 1j * x - x * x / 2 - 1j * x ** 3 / 6 + x ** 4 / 24)) / h


def fitted_frequency(t, y, w0):
    """Least-squares fit of a + b cos(w t) + c sin(w t): w."""
    fit = least_squares(lambda q: q[0] + q[1] * np.cos(q[3] * t) + q[2] * np.sin(q[3] * t) - y,
                        [np.mean(y), y[0] - np.mean(y), 0.0, w0], xtol=1e-15, ftol=1e-15,
                        gtol=1e-15)
    return fit.x[3]


def rope_length(p, x):
    """Stretched length of the (vertical, parallel) ropes at a symmetric state."""
    return x[I("trolley_height")] - x[I("spreader_y")] - suspended_body(p).attachments[0][1]


# ------------------------------------------------------------ 1. static equilibrium
def test_static_equilibrium_closed_form():
    p = dataclasses.replace(STS_CRANE, container=ContainerLoad())
    b = suspended_body(p)
    m, l0 = 40e3, 17.0
    T = m * G / 4  # equal per rope (symmetric spreader, parallel ropes)
    yt = p.trolley_rest_height_m - (p.trolley_mass_kg + m) * G / p.trolley_vertical_stiffness_n_m
    L = l0 * (1 + T / p.rope_axial_stiffness_n)  # T = (EA / l0)(L - l0)
    rep = {}
    x = equilibrium(p, 3.0, 12.0, l0, report=rep)
    assert x[I("trolley_height")] == pytest.approx(yt, abs=1e-10)
    assert x[I("spreader_y")] == pytest.approx(yt - L - b.attachments[0][1], abs=1e-10)
    assert (x[I("spreader_x")], x[I("spreader_z")]) == (pytest.approx(12.0, abs=1e-12),
                                                          pytest.approx(3.0, abs=1e-12))
    assert np.allclose(x[7:11], [1, 0, 0, 0], atol=1e-12)
    assert np.allclose(rep["rope_tension"], T, rtol=1e-11)
    assert sum(rep["rope_tension"]) == pytest.approx(m * G, rel=1e-11)
    # the drum holds the tensions plus the strain term T eps / 2 per rope
    eps = T / p.rope_axial_stiffness_n
    assert rep["hoist_force"] == pytest.approx(4 * T * (1 + eps / 2), rel=1e-11)
    # the analytic state, built here, is at rest under those forces
    h = BlockHarness(GantryCrane("crane", p, initial_state=x))
    h.set_input("hoist_force", 4 * T * (1 + eps / 2))
    assert np.max(np.abs(h.derivatives())) < 1e-9


def test_damped_bounce_settles_to_the_weight_on_four_equal_ropes():
    p = dataclasses.replace(STS_CRANE, container=ContainerLoad())
    rep = {}
    x = equilibrium(p, 0.0, 0.0, 12.0, report=rep)
    x[I("spreader_y")] += 0.03  # 3 cm up: the ropes lose 70 % of their stretch
    t, st = run_constant(p, x, {"gantry": 0.0, "trolley": 0.0, "hoist": rep["hoist_force"]},
                         25.0)
    crane = GantryCrane("post", p, initial_state=st[0])
    first = crane.forces(st[0])["rope_tension"]
    last = crane.forces(st[-1])["rope_tension"]
    assert max(first) < 0.4 * 40e3 * G / 4
    # 25 s later (rope damping ~2 % and the girder's 5 %: the deviation shrinks ~10x per
    # 7 s) the ropes carry the weight again, equally
    assert sum(last) == pytest.approx(40e3 * G, rel=5e-4)
    assert max(last) - min(last) < 1e-9 * max(last)
    # the ropes' stretch rate has died out from 0.05 m/s (spreader and free drum may still
    # creep together: the drum's zero-stiffness mode)
    stretch_rate = st[-1, I("trolley_vertical_velocity")] - st[-1, I("spreader_vy")] \
        + st[-1, I("hoist_velocity")]
    assert abs(stretch_rate) < 1e-4


# ------------------------------------------------------------ 2. frequencies
def sway_reference(p, x, arm, M):
    """Translating pendulum on a free carriage of mass M: w^2 = g/L_e (1 + m/M), with the
    spreader's quasi-static tilt: the rope attachments are h above the centre of mass, so
    the horizontal rope force tilts the body against the rope stiffness (4 k a^2 + m g h
    (1 + h/L)) and lengthens the pendulum by m g h^2 / K_phi."""
    b = suspended_body(p)
    m, L = b.mass, rope_length(p, x)
    k = p.rope_axial_stiffness_n / x[I("hoist_length")]
    h = b.attachments[0][1]
    K_phi = 4 * k * arm ** 2 + m * G * h * (1 + h / L)
    return math.sqrt(G / (L + m * G * h * h / K_phi) * (1 + m / M))


@pytest.mark.parametrize("axis", ["x", "z"])
def test_sway_frequency(axis):
    p = undamped(STS_CRANE)
    rep = {}
    x = equilibrium(p, 0.0, 0.0, 20.0, report=rep)
    if axis == "x":  # trolley free along X (no trolley drive force)
        x[I("spreader_x")] += 0.01
        M = p.trolley_mass_kg + p.trolley_drive.equivalent_mass_kg
        arm = p.attachment_half_spacing_m[0]
    else:  # gantry free along Z
        x[I("spreader_z")] += 0.01
        M = p.gantry_mass_kg + p.trolley_mass_kg + p.gantry_drive.equivalent_mass_kg
        arm = p.attachment_half_spacing_m[1]
    w = rk4_frequency(sway_reference(p, x, arm, M))
    t, st = run_constant(p, x, {"gantry": 0.0, "trolley": 0.0, "hoist": rep["hoist_force"]},
                         40.0)
    carriage = "trolley_position" if axis == "x" else "gantry_position"
    y = st[:, I(f"spreader_{axis}")] - st[:, I(carriage)]
    assert fitted_frequency(t, y, w) == pytest.approx(w, rel=2e-6)
    # without the tilt correction the reference would be off by ~9e-5 (x): it matters
    L = rope_length(p, x)
    assert abs(math.sqrt(G / L * (1 + suspended_body(p).mass / M)) / w - 1) > (
        5e-5 if axis == "x" else 1e-5)


def test_skew_frequency():
    """Rotation about the vertical on 4 parallel ropes at radius r (quadrifilar
    pendulum): w^2 = m g r^2 / (J_y L)."""
    p = undamped(STS_CRANE)
    b = suspended_body(p)
    rep = {}
    x = equilibrium(p, 0.0, 0.0, 20.0, report=rep)
    a = 0.002  # small: at 0.01 rad the amplitude-dependent shift is already 7e-6
    x[I("e0")], x[I("e2")] = math.cos(a / 2), math.sin(a / 2)
    r2 = sum(s * s for s in p.attachment_half_spacing_m)
    w = rk4_frequency(math.sqrt(b.mass * G * r2 / (b.inertia[1, 1] * rope_length(p, x))))
    t, st = run_constant(p, x, {"gantry": 0.0, "trolley": 0.0, "hoist": rep["hoist_force"]},
                         30.0)
    assert fitted_frequency(t, st[:, I("e2")], w) == pytest.approx(w, rel=2e-6)


def bounce_modes(p, x):
    """Vertical modes of (spreader y, trolley y, rope length l0) from the rope energy
    V = 4 EA e^2 / (2 l0), e = y_t - y_c - h - l0, the girder spring and the masses
    (spreader, trolley, drum's equivalent mass); one zero mode (the free drum)."""
    b = suspended_body(p)
    l0 = x[I("hoist_length")]
    e = rope_length(p, x) - l0
    K = 4 * p.rope_axial_stiffness_n / l0
    c = K * (1 + e / l0)
    Kmat = np.array([[K, -K, c], [-K, K + p.trolley_vertical_stiffness_n_m, -c],
                     [c, -c, K * (1 + e / l0) ** 2]])
    Mmat = np.diag([b.mass, p.trolley_mass_kg, p.hoist_drive.equivalent_mass_kg])
    w2, V = eigh(Kmat, Mmat)
    return np.sqrt(np.maximum(w2, 0.0)), V


@pytest.mark.parametrize("loaded", [False, True])
@pytest.mark.parametrize("mode", [1, 2])
def test_bounce_frequencies(loaded, mode):
    p = undamped(dataclasses.replace(STS_CRANE, container=ContainerLoad() if loaded else None))
    rep = {}
    x = equilibrium(p, 0.0, 0.0, 20.0, report=rep)
    w_all, V = bounce_modes(p, x)
    assert w_all[0] < 1e-6 * w_all[1]
    v = V[:, mode] / np.max(np.abs(V[:, mode])) * 1e-4  # the pure mode, 0.1 mm
    x[I("spreader_y")] += v[0]
    x[I("trolley_height")] += v[1]
    x[I("hoist_length")] += v[2]
    w = rk4_frequency(w_all[mode])
    t, st = run_constant(p, x, {"gantry": 0.0, "trolley": 0.0, "hoist": rep["hoist_force"]},
                         4.0)
    for k, name in enumerate(("spreader_y", "trolley_height")):
        if abs(v[k]) > 1e-6:
            assert fitted_frequency(t, st[:, I(name)], w) == pytest.approx(w, rel=2e-6)


# ------------------------------------------------------------ 3. energy
def energy(p, st, forces):
    """Kinetic + potential energy, minus the work of the constant drive forces."""
    b = suspended_body(p)
    s = unpack(st)
    m_zg = p.gantry_mass_kg + p.trolley_mass_kg + p.gantry_drive.equivalent_mass_kg
    m_xt = p.trolley_mass_kg + p.trolley_drive.equivalent_mass_kg
    w = np.stack([s["omega_x"], s["omega_y"], s["omega_z"]], axis=1)
    E = 0.5 * (m_zg * s["gantry_velocity"] ** 2 + m_xt * s["trolley_velocity"] ** 2
               + p.trolley_mass_kg * s["trolley_vertical_velocity"] ** 2
               + p.hoist_drive.equivalent_mass_kg * s["hoist_velocity"] ** 2
               + b.mass * (s["spreader_vx"] ** 2 + s["spreader_vy"] ** 2
                           + s["spreader_vz"] ** 2)
               + np.einsum("ni,ij,nj->n", w, b.inertia, w))
    E += G * (b.mass * s["spreader_y"] + p.trolley_mass_kg * s["trolley_height"])
    E += 0.5 * p.trolley_vertical_stiffness_n_m * (s["trolley_height"]
                                                   - p.trolley_rest_height_m) ** 2
    E += -forces["gantry"] * s["gantry_position"] - forces["trolley"] * s["trolley_position"] \
        + forces["hoist"] * s["hoist_length"]
    ss = p.sheave_half_spacing_m
    for n, row in enumerate(st):
        A = np.array(rotation(*row[7:11])).reshape(3, 3)
        l0 = row[I("hoist_length")]
        for (sx, sz), att in zip(ROPE_SIGNS, b.attachments):
            sheave = np.array([row[I("trolley_position")] + sx * ss[0],
                               row[I("trolley_height")], row[I("gantry_position")] + sz * ss[1]])
            e = np.linalg.norm(sheave - row[4:7] - A @ att) - l0
            if e > 0:
                E[n] += p.rope_axial_stiffness_n * e * e / (2 * l0)
    return E


def energy_case():
    p = undamped(dataclasses.replace(STS_CRANE, container=ContainerLoad(
        com_offset_m=(0.1, 0.0, 0.6))))
    rep = {}
    x0 = equilibrium(p, 3.0, 5.0, 15.0, report=rep)
    x = x0.copy()
    x[4:7] += (0.3, 0.0, -0.2)
    q = np.array([1.0, 0.002, 0.003, -0.002])
    x[7:11] = q / np.linalg.norm(q)
    x[18:21] = (0.01, -0.02, 0.005)
    x[11:15] = (-0.2, 0.5, 0.01, 0.05)
    forces = {"gantry": 0.0, "trolley": 0.0, "hoist": rep["hoist_force"]}
    return p, x0, x, forces


def test_energy_is_conserved_and_rk4_converges():
    p, x0, x, forces = energy_case()
    E_motion = float(energy(p, x[None], forces)[0] - energy(p, x0[None], forces)[0])
    drift, ends = [], []
    crane = GantryCrane("post", p, initial_state=x)
    for dt in (DT, DT / 2, DT / 4):
        t, st = run_constant(p, x, forces, 10.0, dt)
        every = int(round(0.1 / dt))
        # all ropes stay taut (at a slack transition the rope energy is only C1 and the
        # convergence order drops)
        assert min(min(crane.forces(r)["rope_tension"]) for r in st[::every]) > 4e4
        E = energy(p, st[::every], forces)
        drift.append(float(np.max(np.abs(E - E[0]))))
        ends.append(st[-1])
    # the seed's step loses 6e-7 of the motion's energy (19 kJ) in 10 s
    assert drift[0] < 3e-6 * E_motion
    assert E_motion > 1e3  # a real motion: trolley 0.5 m/s, 0.36 m swing, rotation
    # RK4: energy error O(h^5) for oscillations (|R(i w h)|^2 = 1 - (w h)^6 / 72), at least 4
    orders = [math.log2(drift[0] / drift[1]), math.log2(drift[1] / drift[2])]
    assert all(3.9 < o < 5.6 for o in orders), orders
    # the state converges at order 4 (Richardson with h, h/2, h/4)
    d1, d2 = np.max(np.abs(ends[0] - ends[1])), np.max(np.abs(ends[1] - ends[2]))
    assert 3.8 < math.log2(d1 / d2) < 4.3


# ------------------------------------------------------------ 4. multibody formulation
def test_same_trajectory_as_the_multibody_formulation():
    """Eccentric 30 t container, wind, all damping, constant drive forces, the spreader
    swinging and rotating while the trolley, gantry and hoist move: the block's minimal
    coordinates against absolute coordinates with joints (Lagrange multipliers, Baumgarte)
    and the library's rigid-body and point-Jacobian machinery."""
    from bench.crane import swing_setup
    p, x, forces = swing_setup()
    t, st = run_constant(p, x, forces, 3.0)
    b = DiagramBuilder("mb")
    b.add(multibody_block("mb", p, x, forces))
    res = Simulator(b.build(), solver="rk4", dt=DT, record=["mb.q"]).run(3.0)
    s = crane_states(res["mb.q"], x[I("hoist_length")])
    assert np.ptp(st[:, 4]) > 0.3 and np.ptp(st[:, I("hoist_length")]) > 0.1  # it moves
    assert np.max(np.abs(s["spreader"] - st[:, 4:7])) < 1e-9
    q = s["quaternion"] * np.sign(np.sum(s["quaternion"] * st[:, 7:11], axis=1))[:, None]
    assert np.max(np.abs(q - st[:, 7:11])) < 1e-10
    for name in ("gantry_position", "trolley_position", "trolley_height", "hoist_length"):
        assert np.max(np.abs(s[name] - st[:, I(name)])) < 1e-9, name


# ------------------------------------------------------------ 5. drive
def hoist_compensation(p, rep):
    """Hoist speed reference that cancels the P controller's droop (no sinking load)."""
    hd = p.hoist_drive
    torque = rep["hoist_force"] * hd.travel_per_rad_m / (hd.motors * hd.efficiency)
    return torque / hd.gain_nms_per_rad * hd.travel_per_rad_m


def test_trolley_speed_follows_its_reference_with_the_drive_lag():
    """Small reference step (0.2 m/s, torque well below the curve): the recorded trolley
    speed against the linear model tau T' = K (w_ref - w) - T, F = n eta T / i, trolley +
    pendulum (the tilt-corrected length of the sway test)."""
    p = dataclasses.replace(STS_CRANE, air_density_kg_m3=0.0)
    rep = {}
    x = equilibrium(p, 0.0, 0.0, 20.0, report=rep)
    prog = {"trolley": [(1.0, 0.0), (1.005, 0.2)], "hoist": [(0.0, hoist_compensation(p, rep))]}
    res, _ = gx.run(12.0, params=p, program=prog,
                    record=["crane.state", "trolley_drive.torque",
                            "trolley_drive.torque_limit"])
    st, t = res["crane.state"], res.time
    d, b = p.trolley_drive, suspended_body(p)
    m, M, i, n = b.mass, p.trolley_mass_kg + d.equivalent_mass_kg, d.travel_per_rad_m, d.motors
    w = sway_reference(p, x, p.attachment_half_spacing_m[0], M)
    k_sway = m * w * w / (1 + m / M)  # m g / L_e

    def f(tt, y):
        xt, vt, xs, vs, T = y
        F = n * T * d.efficiency / i
        ref = float(np.interp(tt, [1.0, 1.005], [0.0, 0.2]))
        return [vt, (F + k_sway * (xs - xt)) / M, vs, -k_sway * (xs - xt) / m,
                (d.gain_nms_per_rad * (ref - vt) / i - T) / d.time_constant_s]
    sol = solve_ivp(f, (0.0, t[-1]), [0.0] * 5, t_eval=t, rtol=1e-11, atol=1e-12,
                    max_step=0.002)
    vt = st[:, I("trolley_velocity")]
    assert np.max(np.abs(vt - sol.y[1])) < 5e-6
    assert vt.max() > 0.2  # the sway makes it overshoot
    assert np.all(np.abs(res["trolley_drive.torque"]) < 0.5 * res["trolley_drive.torque_limit"])


def test_trolley_drive_on_its_torque_curve():
    """3 m/s asked at once: the torque sits on T_max(w) (np.interp of the curve) while the
    controller asks for more, and the speed follows a nonlinear cart-pendulum (point mass
    on a rigid rope of the stretched length) driven by the same limited drive."""
    p = dataclasses.replace(STS_CRANE, air_density_kg_m3=0.0)
    rep = {}
    x = equilibrium(p, 0.0, 0.0, 20.0, report=rep)
    prog = {"trolley": [(1.0, 0.0), (1.005, 3.0)], "hoist": [(0.0, hoist_compensation(p, rep))]}
    res, _ = gx.run(15.0, params=p, program=prog,
                    record=["crane.state", "trolley_drive.torque", "trolley_drive.torque_ref",
                            "trolley_drive.torque_limit"])
    st, t = res["crane.state"], res.time
    d = p.trolley_drive
    i, n, K, tau = d.travel_per_rad_m, d.motors, d.gain_nms_per_rad, d.time_constant_s
    speed = st[:, I("trolley_velocity")] / i
    curve = np.interp(np.abs(speed), d.curve_speed_rad_s, d.curve_torque_nm)
    T, Tref = res["trolley_drive.torque"], res["trolley_drive.torque_ref"]
    sat = np.abs(Tref) > curve
    assert sat.sum() > 100
    assert np.allclose(T[sat], np.sign(Tref[sat]) * curve[sat], rtol=1e-12)
    assert np.all(np.abs(T) <= curve * (1 + 1e-12))
    m = suspended_body(p).mass
    M = p.trolley_mass_kg + d.equivalent_mass_kg
    L = rope_length(p, x)

    def f(tt, y):
        xt, vt, ph, om, Tr = y
        w = vt / i
        lim = np.interp(abs(w), d.curve_speed_rad_s, d.curve_torque_nm)
        F = n * min(max(Tr, -lim), lim) * d.efficiency / i
        s, c = math.sin(ph), math.cos(ph)
        acc = np.linalg.solve([[M + m, m * L * c], [c, L]], [F + m * L * om * om * s, -G * s])
        ref = float(np.interp(tt, [1.0, 1.005], [0.0, 3.0]))
        return [vt, acc[0], om, acc[1], (K * (ref - vt) / i - Tr) / tau]
    sol = solve_ivp(f, (0.0, t[-1]), [0.0] * 5, t_eval=t, rtol=1e-10, atol=1e-10,
                    max_step=0.002)
    assert np.abs(sol.y[2]).max() > 0.15  # a large swing: 0.2 rad
    assert np.max(np.abs(st[:, I("trolley_velocity")] - sol.y[1])) < 5e-4


# ------------------------------------------------------------ the example
def test_example_manoeuvre():
    from cosim import Diagram
    assert isinstance(gx.build(), Diagram)  # for cosim run, with gx.SIMULATION
    res, wall = gx.run()
    s = gx.summary(res)
    assert s["t_end"] == pytest.approx(gx.T_END)
    assert s["trolley_position"] == pytest.approx(35.0, abs=0.2)  # P speed loops drift
    assert s["gantry_position"] == pytest.approx(6.0, abs=0.01)
    assert s["quaternion_norm_error"] < 1e-9
    # the arms caught the spreader over the container and hold it within their channel
    assert s["arms_that_touched"] == [1, 2, 3, 4]
    lo, hi = s["offset_from_target_last_5s_m"]
    assert -0.15 < lo < hi < 0.15
    assert 0.2 < s["spreader_bottom_above_target_m"] < 0.6
    assert s["min_rope_tension_n"] > 0  # never slack
    assert s["static_rope_tension_n"] == pytest.approx(10e3 * G / 4, rel=1e-9)
    # the torque never left the curve
    assert np.all(np.abs(res["trolley_drive.torque"])
                  <= res["trolley_drive.torque_limit"] * (1 + 1e-12))


def test_same_derivative_as_the_multibody_formulation_at_random_states():
    """Accelerations of the two formulations at states off any trajectory (rotated,
    moving, some ropes slack)."""
    from bench.crane import swing_setup
    from blocks.cranes.reference import mechanism
    from blocks.multibody import Formulation
    p, x0, forces = swing_setup()
    rng = np.random.default_rng(3)
    rhs = make_rhs(p)
    slack = []
    for _ in range(6):
        x = x0.copy()
        x[4:7] += rng.normal(scale=0.2, size=3)
        q = x[7:11] + rng.normal(scale=0.05, size=4)
        x[7:11] = q / np.linalg.norm(q)
        x[11:21] += rng.normal(scale=0.2, size=10)
        out = {}
        d = rhs(x.tolist(), forces["gantry"], forces["trolley"], forces["hoist"], 0, 0, 0, 0,
                out)
        slack.append(out["rope_tension"].count(0.0))
        mech = mechanism(p, x, forces)
        mech.finalize()
        rep = mech.assemble()
        assert not rep.get("corrected")
        vd, _ = mech.accelerations(mech.q_init, mech.v_init, 0.0, Formulation("lagrange"))
        # body order: gantry, trolley, spreader, drum (6 velocity variables each)
        assert vd[2] == pytest.approx(d[I("gantry_velocity")], rel=1e-9, abs=1e-12)
        assert vd[6] == pytest.approx(d[I("trolley_velocity")], rel=1e-9, abs=1e-12)
        assert vd[7] == pytest.approx(d[I("trolley_vertical_velocity")], rel=1e-9, abs=1e-12)
        assert np.allclose(vd[12:15], d[15:18], rtol=1e-9, atol=1e-12)
        assert np.allclose(vd[15:18], d[18:21], rtol=1e-9, atol=1e-12)
        assert vd[18] == pytest.approx(d[I("hoist_velocity")], rel=1e-9, abs=1e-12)
    assert min(slack) == 0 and max(slack) > 0  # taut and partly slack states were tried
