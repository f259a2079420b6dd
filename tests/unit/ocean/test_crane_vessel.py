"""CraneVessel: energy, linearised natural frequencies, static mooring equilibrium."""

from __future__ import annotations

import math

import numpy as np
import pytest

from blocks.ocean.crane_vessel import (
    CraneVessel,
    froude_krylov_surge_force_per_amplitude,
    linearized_frequencies,
    mooring_equilibrium,
)
from cosim import DiagramBuilder, ParameterError, Simulator
from cosim.testing import BlockHarness

BASE = dict(mass_kg=600e3, added_mass_kg=30e3, c1_n_per_m=33.4e3, c2_n_per_m2=0.0,
            c3_n_per_m3=45.5e3, rope_length_m=25.0, load_mass_kg=40e3)


def run(block, t_end, dt=0.02):
    b = DiagramBuilder("d")
    b.add(block)
    sim = Simulator(b.build(), solver="rk4", dt=dt, record=False)
    sim.advance_to(t_end)
    return sim


@pytest.mark.parametrize("c2", [0.0, 2.9e3])
def test_energy_is_conserved_without_damping_and_forcing(c2):
    v = CraneVessel("v", **{**BASE, "c2_n_per_m2": c2}, x0_m=1.5, phi0_rad=0.6,
                    phi_dot0_rad_s=-0.2)
    b = DiagramBuilder("d")
    b.add(v)
    sim = Simulator(b.build(), solver="rk4", dt=0.02, record=False)
    sim.advance_to(0.0)
    e0 = v.energy(sim.ctx)
    sim.advance_to(200.0)
    assert abs(v.energy(sim.ctx) - e0) < 1e-7 * e0
    assert abs(sim.ctx.xc[2]) > 1e-3  # it did move


def test_small_oscillation_frequencies_match_the_linearised_two_dof_model():
    h = BlockHarness(CraneVessel("v", **BASE))
    x0 = np.zeros(4)
    J = np.empty((4, 4))
    for j in range(4):
        e = np.zeros(4)
        e[j] = 1e-6
        h.ctx.xc = x0 + e
        fp = h.derivatives()
        h.ctx.xc = x0 - e
        J[:, j] = (fp - h.derivatives()) / 2e-6
    w_num = np.sort(np.abs(np.linalg.eigvals(J).imag))[::2]
    M_t = BASE["mass_kg"] + BASE["added_mass_kg"] + BASE["load_mass_kg"]
    m, l_, k, g = BASE["load_mass_kg"], BASE["rope_length_m"], BASE["c1_n_per_m"], 9.81
    # (k - w^2 M_t)(g - w^2 l) = w^4 m l  ->  a w^4 + b w^2 + c = 0
    a, b_, c = M_t * l_ - m * l_, -(k * l_ + M_t * g), k * g
    w2 = np.sort(np.roots([a, b_, c]).real)
    np.testing.assert_allclose(w_num, np.sqrt(w2), rtol=1e-7)
    np.testing.assert_allclose(
        linearized_frequencies(M_t - m, k, m, l_), np.sqrt(w2), rtol=1e-12)
    # and a free small oscillation in surge shows the lower frequency
    sim = run(CraneVessel("v", **BASE, x0_m=1e-3, phi0_rad=1e-5), 0.0)
    T = 2 * math.pi / math.sqrt(w2[0])
    xs, ts = [], np.linspace(0, 3 * T, 3001)
    for t in ts:
        sim.advance_to(round(t, 6))
        xs.append(sim.ctx.xc[0])
    xs = np.array(xs)
    up = np.flatnonzero((xs[:-1] < 0) & (xs[1:] >= 0))
    # the two modes beat, but the lower one dominates the surge for this start
    measured = np.mean(np.diff(ts[up]))
    assert measured == pytest.approx(T, rel=0.02)


def test_static_mooring_equilibrium_under_a_constant_force():
    F = 80e3
    params = {**BASE, "c2_n_per_m2": 2.9e3, "damping_n_s_per_m": 3e5,
              "load_damping_n_s_per_m": 2e4}
    x_eq = mooring_equilibrium(F, 33.4e3, 2.9e3, 45.5e3)
    assert 33.4e3 * x_eq + 2.9e3 * x_eq ** 2 + 45.5e3 * x_eq ** 3 == pytest.approx(F)
    v = CraneVessel("v", **params, external_force=True)
    h = BlockHarness(v)
    h.set_input("wave_force", F)
    h.ctx.xc = np.array([x_eq, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(h.derivatives(), 0.0, atol=1e-9)
    assert h.output("rope_force") == pytest.approx(40e3 * 9.81)
    assert h.output("mooring_force") == pytest.approx(F)
    np.testing.assert_allclose(h.output("load_position"), [x_eq, -25.0])
    # and a damped run settles there
    v = CraneVessel("v", **params, external_force=True)
    b = DiagramBuilder("d")
    b.add(v)
    b.export_input(v.f_ext, "f")
    d = b.build()
    ctx = d.create_context()
    ctx.fix_input(d.input("f"), F)
    sim = Simulator(d, ctx, solver="rk4", dt=0.05, record=False)
    sim.advance_to(600.0)
    np.testing.assert_allclose(sim.ctx.xc, [x_eq, 0, 0, 0], atol=1e-5)


def test_asymmetric_mooring_and_validation():
    # c2 > 0 stiffens +x: the same force magnitude moves the vessel less to +x
    xp = mooring_equilibrium(50e3, 33.4e3, 2.9e3, 45.5e3)
    xm = mooring_equilibrium(-50e3, 33.4e3, 2.9e3, 45.5e3)
    assert 0 < xp < -xm
    with pytest.raises(ParameterError, match="rope_length_m"):
        CraneVessel("v", **{**BASE, "rope_length_m": 0.0})
    # Froude-Krylov coefficient: long-wave limit rho g B T k L = rho V (omega^2) per amplitude
    f = froude_krylov_surge_force_per_amplitude(10.0, 5.0, 1.0, 0.05)
    assert f == pytest.approx(1025 * 9.81 * 5 * 1.0 * (0.05 ** 2 / 9.81) * 10, rel=1e-3)
