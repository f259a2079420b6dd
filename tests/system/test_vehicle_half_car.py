"""Pitch-plane half car on the multibody blocks against the classical linear half car.

Independent reference: the 4-DOF model (bounce, pitch, two wheel hops) of
``half_car_linear_model`` with its M and K written from the textbook, and the static
sag Delta = F_s/k + (F_s + m_u g)/k_t per axle.  The multibody model agrees with them to
first order when the wheel centres are at the height of the centre of mass (h = r_w),
so the exact checks use that geometry; with the default h = 0.55 m the pitch mode is
1.0 % lower (measured), from couplings the classical model leaves out (module docstring).
"""

import dataclasses

import numpy as np
import pytest
from scipy.linalg import eigh

from blocks.multibody.analysis import linearize
from blocks.sources import Constant
from blocks.vehicle import PASSENGER_CAR, HalfCar, half_car_linear_model, half_car_mechanism
from cosim import DiagramBuilder, Simulator

DEFAULT = PASSENGER_CAR.half_car
LEVEL = dataclasses.replace(DEFAULT, cg_height_m=DEFAULT.wheel_radius_m)  # h = r_w
UNDAMPED = dataclasses.replace(LEVEL, front_damper_ns_per_m=0.0, rear_damper_ns_per_m=0.0)


def classical_frequencies(p):
    M, K = half_car_linear_model(p)
    return np.sqrt(eigh(K, M, eigvals_only=True)) / (2 * np.pi)


def mechanism_frequencies(p):
    ev = linearize(half_car_mechanism(p))["eigenvalues"]
    return np.sort(np.abs(ev.imag[ev.imag > 1e-3])) / (2 * np.pi)


def diagram(block, force=(0.0, 0.0)):
    b = DiagramBuilder("road")
    hc = b.add(block)
    f = b.add(Constant("force", np.array(force, float), unit="N"))
    b.connect(f.y, hc.input("front_force"))
    b.connect(f.y, hc.input("rear_force"))
    return b.build(), hc


def test_classical_frequencies_of_the_default_car():
    # bounce/pitch 1.21 and 1.35 Hz, wheel hops 11.8 and 11.9 Hz (a typical car)
    np.testing.assert_allclose(classical_frequencies(UNDAMPED), [1.20901, 1.35388, 11.81101,
                                                                 11.94450], atol=1e-5)


def test_linearized_mechanism_has_the_classical_frequencies():
    f = mechanism_frequencies(UNDAMPED)
    # measured relative difference 2e-11 (central differences in linearize)
    np.testing.assert_allclose(f, classical_frequencies(UNDAMPED), rtol=1e-9)


def test_default_geometry_shifts_the_pitch_mode_by_one_percent():
    d = dataclasses.replace(DEFAULT, front_damper_ns_per_m=0.0, rear_damper_ns_per_m=0.0)
    rel = mechanism_frequencies(d) / classical_frequencies(d) - 1
    # measured: -0.285 %, -0.999 %, -1.7e-6, -1.2e-6 (bounce, pitch, hops)
    np.testing.assert_allclose(rel, [-2.85e-3, -1.00e-2, 0.0, 0.0], atol=2e-4)


def test_free_vibration_frequencies_fitted_from_a_simulation():
    """Undamped free response from an initial velocity, RK4 at 2 ms; a least-squares
    one-step map of the recorded states gives the modes (no use of the model matrices)."""
    d, hc = diagram(HalfCar("hc", UNDAMPED))
    sim = Simulator(d, solver="rk4", dt=0.002)
    mech = hc.mech
    x = np.array(sim.ctx.state(hc.x))
    ic, i_f, i_r = (mech.body(n).iv for n in ("chassis", "wheel_front", "wheel_rear"))
    v = np.zeros(mech.nv)
    v[[ic + 1, ic + 2, i_f + 2, i_r + 2, i_f + 1, i_r + 1]] = [0.1, 0.05, 0.05, 0.05, -0.2, 0.3]
    x[mech.nq:] = v  # consistent: with h = r_w pitching does not move the wheels fore-aft
    sim.ctx.set_state(hc.x, x)
    res = sim.run(3.0)
    q, w = res["hc.q"], res["hc.v"]
    X = np.array([q[:, 1], q[:, 2], q[:, 4], q[:, 7], w[:, 1], w[:, 2], w[:, 4], w[:, 7],
                  np.ones(len(q))])
    Phi = np.linalg.lstsq(X[:, :-1].T, X[:, 1:].T, rcond=None)[0].T
    s = np.log(np.linalg.eigvals(Phi).astype(complex)) / 0.002
    f = np.sort(np.abs(s[s.imag > 1e-6])) / (2 * np.pi)
    # measured relative differences: 7e-6, 1.1e-5, -1.0e-5, -1.0e-5 (amplitude effects)
    np.testing.assert_allclose(f, classical_frequencies(UNDAMPED), rtol=1e-4)
    assert abs(q[-1, 0]) < 1e-5  # no longitudinal drift (measured 3.7e-6 m)
    assert np.max(np.abs(q[:, 5] - q[:, 2])) < 1e-12  # wheels pitch with the chassis


def static_sag(p):
    g = p.gravity_m_s2
    fs = p.static_spring_forces_n()
    df = fs[0] / p.front_spring_n_per_m + (fs[0] + p.front_unsprung_kg * g) / p.front_tyre_n_per_m
    dr = fs[1] / p.rear_spring_n_per_m + (fs[1] + p.rear_unsprung_kg * g) / p.rear_tyre_n_per_m
    return df, dr, fs[0] + p.front_unsprung_kg * g, fs[1] + p.rear_unsprung_kg * g


def loaded_level(p):
    """``p`` with the centre of mass as high as the wheel centres once loaded (the
    unloaded design is higher by the sag minus the mean tyre deflection)."""
    df, dr, tf, tr = static_sag(p)
    L = p.wheelbase_m
    sag = (p.rear_axle_m * df + p.front_axle_m * dr) / L
    tyre = (p.rear_axle_m * tf / p.front_tyre_n_per_m + p.front_axle_m * tr
            / p.rear_tyre_n_per_m) / L
    return dataclasses.replace(p, cg_height_m=p.wheel_radius_m + sag - tyre)


@pytest.mark.parametrize("level", [True, False], ids=["level_when_loaded", "default"])
def test_static_sag_from_the_unloaded_design(level):
    params = loaded_level(DEFAULT) if level else DEFAULT
    d, hc = diagram(HalfCar("hc", params, equilibrium=False))
    res = Simulator(d, solver="ab3", dt=0.004).run(10.0)  # settled to 2e-5 N
    df, dr, tf, tr = static_sag(params)
    L = params.wheelbase_m
    heave_exact = -(params.rear_axle_m * df + params.front_axle_m * dr) / L
    pitch_exact = (dr - df) / L  # nose down: negative
    assert (df, dr) == pytest.approx((0.177234, 0.149239), abs=1e-6)  # m at the axles
    heave, pitch = res["hc.heave"][-1], res["hc.pitch"][-1]
    loads = res["hc.tyre_loads"][-1]
    print(f"\nsag: heave {heave:.7f} m (exact {heave_exact:.7f}), pitch {pitch:.6e} rad "
          f"(exact {pitch_exact:.6e}), tyre loads {loads} N (exact {tf:.3f}, {tr:.3f})")
    assert np.sum(loads) == pytest.approx(tf + tr, rel=1e-8)  # settled
    # the heave is second order in the pitch (0.01 rad): measured -4.8e-5 (level), +4.3e-5
    assert heave == pytest.approx(heave_exact, rel=2e-4)
    if level:
        # measured: pitch 6.6e-5, loads 5e-8 relative
        assert pitch == pytest.approx(pitch_exact, rel=2e-4)
        np.testing.assert_allclose(loads, [tf, tr], rtol=1e-6)
    else:
        # the centre of mass 0.24 m above the wheel centres moves forward as the car
        # pitches nose down: 0.8 % more pitch, 4.7 N moved to the front (measured)
        assert pitch / pitch_exact - 1 == pytest.approx(0.0084, abs=5e-4)
        assert loads[0] - tf == pytest.approx(4.7, abs=0.1)


def test_a_bump_reaches_the_rear_wheel_a_wheelbase_later():
    v0, x_bump = 10.0, 4.0

    def road(x):  # 5 cm cosine bump, 0.6 m long
        s = (x - x_bump) / 0.6
        return 0.025 * (1 - np.cos(2 * np.pi * s)) if 0.0 <= s <= 1.0 else 0.0

    d, hc = diagram(HalfCar("hc", road=road, speed_m_s=v0))
    res = Simulator(d, solver="rk4", dt=0.001).run(1.2)
    t = res.time
    rw = DEFAULT.wheel_radius_m
    front = res["hc.wheel_front_cm_pos"][:, 1] - rw
    rear = res["hc.wheel_rear_cm_pos"][:, 1] - rw
    t_f = t[np.flatnonzero(front > 0.005)[0]]  # the wheel centre 5 mm up
    t_r = t[np.flatnonzero(rear > 0.005)[0]]
    assert t_f == pytest.approx((x_bump - DEFAULT.front_axle_m) / v0 + 0.019, abs=2e-3)
    # measured lag 0.270 s (0.269 s at a 1 mm threshold); L / v0 = 0.270 s
    assert t_r - t_f == pytest.approx(DEFAULT.wheelbase_m / v0, abs=2e-3)
    # before its bump the rear wheel only feels the chassis pitch: measured 0.19 mm
    before = t < (x_bump + DEFAULT.rear_axle_m) / v0
    assert np.max(np.abs(rear[before])) < 5e-4
    # no horizontal force: the momentum is kept (the chassis alone trades some with the
    # wheels as it pitches: measured 4e-4 m/s)
    m = [DEFAULT.sprung_mass_kg, DEFAULT.front_unsprung_kg, DEFAULT.rear_unsprung_kg]
    vx = res["hc.v"][:, [0, 3, 6]]
    assert np.max(np.abs(vx @ m / sum(m) - v0)) < 1e-9
    assert np.max(front) > 0.02  # the wheel rides over the 5 cm bump
