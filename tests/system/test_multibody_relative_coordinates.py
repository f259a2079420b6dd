"""Seed 004 (Kim, Song, Huh 2004): the SLA quarter car three ways must agree.

Model, parameters (ours: the seed gives none) and equations: ``bench/quarter_car_relative.py``;
notes ``/work/shared/research/seed-002-003-004.md`` §3.

(i) absolute coordinates (``Mechanism`` + ``MultibodyBlock``, lagrange + Baumgarte
alpha = beta = 10 /s), (ii) relative coordinates with the multipliers eliminated (LME,
(20)-(24)), (iii) relative coordinates with an independent coordinate and Newton for the
dependent ones ((25)-(31)).

Agreement, and why these tolerances:

* Accelerations at the same (consistent) state: the three are exact reformulations of
  the same constrained equations, so they differ only by round-off of linear solves
  with condition numbers ~1e5-1e6: 1e-9 relative (measured ~1e-14).
* Trajectories (RK4, same step, same start, 1 s over a 5 cm bump): the methods integrate
  the same ODE in different coordinates, so they differ by the difference of their RK4
  truncation errors, O(dt^4).  The test requires (a) the disagreement at dt = 1e-3 to be
  below each run's own truncation error, estimated by step halving (Richardson:
  |y(2 dt) - y(dt)| * 16/15; measured ~8e-8 while the methods disagree by ~1.5e-9), and
  (b) the disagreement to fall by > 10 when the step halves (measured 16.7: fourth
  order; a modelling difference would not shrink).  Baumgarte's constraint residual
  (~1e-9 m, measured in (ii)) is also below that bound.
"""

from functools import cache

import numpy as np
import pytest

from bench import quarter_car_relative as qr
from blocks.multibody import Formulation


@cache
def _eq():
    return qr.equilibrium_parameters()


@cache
def _run(method: str, dt: float):
    return qr.simulate(method, qr.T_END, dt)


METHODS = ("absolute", "lme", "independent")


def _random_states(n=6, seed=1):
    """Consistent states from (iii): theta near design, random chassis pose and rates."""
    rng = np.random.default_rng(seed)
    m = qr.RelativeModel(_eq())
    ic = qr.IndependentCoordinates(m)
    for _ in range(n):
        th = m.z_design[2] + rng.uniform(-0.15, 0.15)
        thd = rng.normal(scale=3.0)
        z, Y, _, _ = ic.state(th, thd)
        r0 = qr.CHASSIS_CM + rng.normal(scale=0.02, size=2)
        yield (float(rng.uniform(0, 0.3)), r0, float(rng.normal(scale=0.05)),
               rng.normal(scale=[0.5, 0.5, 1.0]), th, thd, z, Y)


def test_model_is_assembled_and_static_at_design():
    mech = qr.absolute_mechanism(_eq())
    rep = mech.assemble(strict=True)
    assert rep["dof"] == 4 and rep["rank"] == 8 and rep["redundant"] == []
    vd, _ = mech.accelerations(mech.q_init, mech.v_init, 0.0, Formulation("lagrange"))
    assert np.max(np.abs(vd)) < 1e-9  # the equilibrium was computed with (iii)
    m = qr.RelativeModel(_eq())
    Y0d, Yd, _ = qr.lme_accelerations(m, 0.0, qr.CHASSIS_CM, 0.0, np.zeros(3), m.z_design,
                                      np.zeros(9))
    assert max(np.max(np.abs(Y0d)), np.max(np.abs(Yd))) < 1e-9
    phi, _, _ = m.constraints(m.z_design, np.zeros(9))
    assert np.max(np.abs(phi)) < 1e-15


def test_accelerations_agree_at_random_consistent_states():
    m = qr.RelativeModel(_eq())
    ic = qr.IndependentCoordinates(m)
    mech = qr.absolute_mechanism(_eq())
    mech.finalize()
    form = Formulation("lagrange")
    for t, r0, th0, Y0, th, thd, z, Y in _random_states():
        Y0d_ic, thdd = ic.accelerations(t, r0, th0, Y0, th, thd)
        Y0d_l, Yd_l, _ = qr.lme_accelerations(m, t, r0, th0, Y0, z, Y)
        q, v = m.absolute(r0, th0, Y0, z, Y)
        qa, va = np.concatenate([r0, [th0], q]), np.concatenate([Y0, v])
        assert np.max(np.abs(mech.constraints(qa, va, t)[0])) < 1e-13
        vd, _ = mech.accelerations(qa, va, t, form)
        scale = np.max(np.abs(Y0d_ic)) + abs(thdd)
        assert np.max(np.abs(Y0d_l - Y0d_ic)) < 1e-9 * scale
        assert abs(Yd_l[2] - thdd) < 1e-9 * scale
        assert np.max(np.abs(vd[:3] - Y0d_ic)) < 1e-9 * scale
        # the LCA's absolute angular acceleration: w_0' + w_lca0'
        assert abs(vd[5] - (Y0d_ic[2] + thdd)) < 1e-9 * scale


def test_lme_condensation_equals_the_full_saddle_point_system():
    """(22)-(24) with the errata (S = Phi_z M_GG^-1 Phi_z^T, minus in (21)) against (20)."""
    m = qr.RelativeModel(_eq())
    for t, r0, th0, Y0, _, _, z, Y in _random_states(3, seed=5):
        MEE, MEG, MGG, gE, gG = m.seed_matrices(t, r0, th0, Y0, z, Y)
        _, Pz, gam = m.constraints(z, Y)
        K = np.block([[MEE, MEG, np.zeros((3, 8))], [MEG.T, MGG, Pz.T],
                      [np.zeros((8, 3)), Pz, np.zeros((8, 8))]])
        x = np.linalg.solve(K, np.concatenate([gE, gG, gam]))
        Y0d, Yd, lam = qr.lme_accelerations(m, t, r0, th0, Y0, z, Y)
        np.testing.assert_allclose(np.concatenate([Y0d, Yd]), x[:12], rtol=0,
                                   atol=1e-9 * np.max(np.abs(x[:12])))
        np.testing.assert_allclose(lam, x[12:], rtol=0, atol=1e-9 * np.max(np.abs(x[12:])))


def test_motion_is_nontrivial_and_tyre_stays_in_contact():
    run = _run("independent", 1e-3)
    y = run["y"]
    assert np.max(y[:, 10]) - y[0, 10] > 0.04        # wheel centre lifts > 4 cm on the bump
    assert np.max(np.abs(y[:, 2])) > 0.01             # chassis rolls > 0.01 rad
    assert np.max(y[:, 1]) - y[0, 1] > 0.005          # chassis heaves
    eq = _eq()
    m = qr.RelativeModel(eq)
    absolute = _run("absolute", 1e-3)
    for tk, qk, vk in zip(absolute["t"], absolute["y"], absolute["v"]):
        As = qr.rot(qk[11]) @ m.s_contact
        P = qk[9:11] + As
        V = vk[9:11] + vk[11] * (qr.E90 @ As)
        assert qr.tyre_force(P, V, tk, eq)[1] > 0.0  # no lift-off: the linear tyre is valid


@pytest.mark.parametrize("method", ("absolute", "lme"))
def test_trajectories_agree_within_truncation_error(method):
    ref_h, ref_2h = _run("independent", 1e-3)["y"], _run("independent", 2e-3)["y"]
    y_h, y_2h = _run(method, 1e-3)["y"], _run(method, 2e-3)["y"]
    assert ref_h.shape == y_h.shape
    own_error = 16 / 15 * min(np.max(np.abs(y_2h - y_h[::2])),
                              np.max(np.abs(ref_2h - ref_h[::2])))
    diff_h = np.max(np.abs(y_h - ref_h))
    diff_2h = np.max(np.abs(y_2h - ref_2h))
    assert diff_h < own_error, (diff_h, own_error)       # measured 1.5e-9 vs 8e-8
    assert diff_2h / diff_h > 10.0, (diff_2h, diff_h)    # fourth order: 16.7 measured
    assert diff_h < 1e-8


def test_lme_constraint_residual_is_small():
    run = _run("lme", 1e-3)
    assert np.max(run["constraint"]) < 1e-8   # Baumgarte alpha = beta = 10 /s: ~8e-10 m


def test_independent_coordinates_need_few_newton_iterations():
    run = _run("independent", 1e-3)
    assert run["newton_per_eval"] < 3.0  # warm-started from the previous solution (~1.5)
