"""Validation of ``blocks.multibody`` on closed loops, a free spatial body and 4 formulations.

Models and references: ``bench/multibody_models.py`` (parameters and sources there);
research notes ``/work/shared/research/seed-002-003-004.md`` §1.3 (Chiou's crank-slider
E1, the topology used here) and §2.2-2.3 (the seed-003 spatial loop: geometry, closed-form
position solution, and the reviewer's reference motion b1(t), turning points and period).

(a) seed-003 loop (spherical + 4 revolute joints, 1 DOF, only the coupler has mass):
    DOF and rank from ``assemble()``, closed-form positions satisfy the library's
    constraints, generalized mass M(b1 = 1) and force Q(b1 = 1) against §2.3, and free
    motion from b1 = 1 at rest with ``projection`` (2 s) and ``lagrange`` + Baumgarte
    (2 s each): closure |Phi|, the position relation cos b4 = C2 - C1 cos b1 (4.45),
    energy to 1e-6, b1(t) at the printed times and the turning points / period 0.790 s.
(b) torque-free asymmetric body: kinetic energy and the global angular momentum vector
    (1e-8 relative) and the body-frame angular velocity against Euler's equations solved
    by scipy.  Energy and |L| are blind to the sign of the gyroscopic term
    (w . (w x J w) = 0), the global vector A J w' is not: it checks the Euler-parameter
    kinematics and the gyroscopic term together.
(c) planar crank-slider and four-bar with every formulation: drift, energy, agreement of
    the crank angle over 2 s (and the crank-slider against an independent 1-DOF Lagrange
    solution).

Cost (2-core machine; the engine takes ~0.15 ms per derivative evaluation of the planar
models and ~0.8 ms for the 4-body spatial loop (~3 ms in an earlier library version),
RK4 = 4 evaluations per step, projection adds a Newton projection per step): the loop uses
dt = 2e-3 (the notes' RK4 reference agrees to all printed digits at 1e-3 and 5e-4; the
measured b1(t) here agrees with it to < 5e-6 rad), 2 s (2.5 periods) for projection and
for Baumgarte; the planar models 2 s at dt = 1e-3 per formulation.  Every simulation
runs once per module (cached).  Whole file: about 25 s (40 s with the older library).
"""

import math
from functools import cache

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from bench import multibody_models as mm
from blocks.multibody import Formulation

LOOP_DT = 2e-3
PLANAR_DT = 1e-3
PLANAR_T = 2.0


@cache
def _loop_run(formulation: str, t_end: float):
    kind, opts = mm.formulations(LOOP_DT)[formulation]
    return mm.simulate(mm.spatial_loop(), kind, t_end, LOOP_DT, **opts)


LOOP_RUNS = {"projection": 2.0, "lagrange (Baumgarte)": 2.0}


# --------------------------------------------------------------------------- (a) loop
def test_loop_dof_rank_and_assembly():
    mech = mm.spatial_loop()
    rep = mech.assemble(strict=True)  # the closed-form state must be consistent as given
    assert rep["dof"] == 1
    assert rep["constraints"] == 23 and rep["rank"] == 23 and rep["redundant"] == []
    assert rep["position_residual"] < 1e-12


@pytest.mark.parametrize("b1", sorted(mm.LOOP_ANGLES_REF))
def test_loop_closed_form_positions_satisfy_library_constraints(b1):
    pos = mm.loop_position(b1)
    np.testing.assert_allclose([pos["b2"], pos["b3"], pos["b4"]], mm.LOOP_ANGLES_REF[b1],
                               atol=1e-6)  # notes print 6 decimals
    np.testing.assert_allclose([pos["C1"], pos["C2"]], mm.LOOP_C1_C2_REF, atol=1e-7)
    mech = mm.spatial_loop(b1)
    mech.finalize()
    phi = mech.constraints(mech.q0, np.zeros(mech.nv), 0.0)[0]
    assert np.max(np.abs(phi)) < 1e-14
    assert mech.dof == 1


def test_loop_generalized_mass_and_force_at_b1_1():
    """M(1) = 7.8576e-3 kg m^2 and Q(1) = 0.82526 N m (notes §2.3).

    M from the kinetic energy of a consistent velocity (any velocity projected onto
    J v = 0 lies in the 1-D null space): M = 2 T / b1'^2.  Q = M b1'' at rest.
    Tolerance 2e-5 relative: both references have 5 significant digits (half a unit:
    6.4e-6 and 6.1e-6 relative); the 1e-6 kg / 1e-9 kg m^2 stand-ins for the massless
    links change M by ~1e-7.
    """
    mech = mm.spatial_loop()
    mech.assemble()
    q = mech.q_init
    v0 = np.random.default_rng(3).normal(size=mech.nv)
    v = mech.project_velocities(q, v0, 0.0)
    b1d = mm.loop_b1_rate(mech, q, v)[0]
    M = 2 * mm.kinetic_energy(mech, q, v)[0] / b1d ** 2
    vd, _ = mech.accelerations(q, np.zeros(mech.nv), 0.0, Formulation("lagrange"))
    b1dd = mm.loop_b1_rate(mech, q, vd)[0]  # same projection of the angular acceleration
    M_ref, Q_ref = mm.LOOP_M_Q_REF
    assert abs(M / M_ref - 1) < 2e-5, M
    assert abs(M * b1dd / Q_ref - 1) < 2e-5, M * b1dd


@pytest.mark.parametrize("formulation", list(LOOP_RUNS))
def test_loop_closure_and_energy(formulation):
    run = _loop_run(formulation, LOOP_RUNS[formulation])
    mech, q, v = run["mech"], run["q"], run["v"]
    # |Phi| (positions: m; axis rows: direction cosines), measured 1e-10 / 2e-9
    assert np.max(mm.constraint_residual(mech, run["t"], q)) < 1e-8
    # the loop's own position relation (4.45): cos b4 = C2 - C1 cos b1
    b1, b4 = mm.loop_b1(mech, q), mm.loop_b4(mech, q)
    C1, C2 = mm.LOOP_C1_C2_REF
    p = mm.loop_position(0.0)
    assert np.max(np.abs(np.cos(b4) - (p["C2"] - p["C1"] * np.cos(b1)))) < 1e-7
    assert abs(p["C1"] - C1) < 1e-7 and abs(p["C2"] - C2) < 1e-7
    # no damping: E conserved to 1e-6 of the largest kinetic energy (notes: 1.5e-6 J)
    assert mm.energy_error(mech, q, v) < 1e-6
    assert np.max(mm.kinetic_energy(mech, q, v)) > 0.1  # it really moves (about 0.3 J)


def _turning_points(t, b1, b1d):
    """(t, b1) where b1' changes sign: linear interpolation of b1', parabola for b1."""
    out = []
    for k in np.nonzero(np.sign(b1d[1:]) != np.sign(b1d[:-1]))[0]:
        if b1d[k] == 0 and k == 0:
            continue  # released at rest
        tz = t[k] - b1d[k] * (t[k + 1] - t[k]) / (b1d[k + 1] - b1d[k])
        j = k if abs(b1d[k]) < abs(b1d[k + 1]) else k + 1
        j = min(max(j, 1), len(t) - 2)
        c = np.polyfit(t[j - 1:j + 2] - t[j], b1[j - 1:j + 2], 2)
        out.append((tz, float(np.polyval(c, tz - t[j]))))
    return out


@pytest.mark.parametrize("formulation", list(LOOP_RUNS))
def test_loop_motion_matches_reference(formulation):
    """b1(t), turning points and period against notes §2.3 and an energy quadrature.

    b1(t): tolerance one unit in the last printed digit of each reference value (the
    reference's own rounding is half of that).  Turning points (notes): b1 = 2 pi - 1 at
    0.395 s and back to 1.0 at 0.790 s, the period, by the mirror symmetry x -> -x.  The
    notes print 0.395 to 3 decimals (+-5e-4) and 0.790 as twice that, so the period's
    printed uncertainty is +-1e-3 s.  The unrounded period, 0.789401 s, comes from
    ``mm.loop_period_reference()`` (energy quadrature on the closed-form kinematics, no
    library code); the simulated turning times must match it to 2e-5 s (zero crossing of
    b1' interpolated linearly between 2 ms samples: error ~ dt^2 |b1 jerk| / (8 |b1''|),
    a few 1e-6 s with |b1''| ~ 100 rad/s^2).
    """
    run = _loop_run(formulation, LOOP_RUNS[formulation])
    mech, t, q, v = run["mech"], run["t"], run["q"], run["v"]
    b1 = mm.loop_b1(mech, q)
    for tr, ref in mm.LOOP_B1_REF.items():
        k = int(np.argmin(np.abs(t - tr)))
        assert abs(t[k] - tr) < 1e-9
        ulp = 10.0 ** -(len(repr(ref).split(".")[1]))  # 4.0342 -> 1e-4, 4.64089 -> 1e-5
        assert abs(b1[k] - ref) <= ulp, (tr, b1[k], ref)
    b1_cont = np.unwrap(b1)  # the crank swings through pi and never turns over
    assert np.all((b1_cont > 0.99) & (b1_cont < 2 * math.pi - 0.99))
    tp = _turning_points(t, b1, mm.loop_b1_rate(mech, q, v))
    assert len(tp) == 5, tp  # 0.395, 0.790, 1.184, 1.579, 1.974 s in 2 s
    (t1, _), (t2, _) = tp[:2]
    (t1_ref, x1_ref), (_, x2_ref) = mm.LOOP_TURNING_REF
    assert abs(t1 - t1_ref) <= 5e-4, t1
    assert abs(t2 - mm.LOOP_PERIOD_REF) <= 1e-3, t2
    period = _period_reference()
    for k, (tk, _) in enumerate(tp):
        assert abs(tk - (k + 1) * period / 2) < 2e-5, (k, tk, period)
    # mirror symmetry: b1 = 2 pi - b1(0), then back to b1(0) (energy conserved to 1e-6)
    for k, (_, xk) in enumerate(tp):
        assert abs(xk - (x1_ref if k % 2 == 0 else x2_ref)) < 1e-5, (k, xk)


@cache
def _period_reference():
    return mm.loop_period_reference(1.0)


def test_loop_period_reference_is_consistent_with_notes():
    """The quadrature reproduces the notes' M(1), Q(1) and turning time 0.395 s."""
    M_ref, Q_ref = mm.LOOP_M_Q_REF
    M, _ = mm.loop_mass_and_potential(1.0)
    h = 1e-6
    Q = -(mm.loop_mass_and_potential(1 + h)[1] - mm.loop_mass_and_potential(1 - h)[1]) / (2 * h)
    assert abs(M / M_ref - 1) < 1e-5 and abs(Q / Q_ref - 1) < 1e-5
    assert abs(_period_reference() / 2 - mm.LOOP_TURNING_REF[0][0]) <= 5e-4


# --------------------------------------------------------------------------- (b) free body
@cache
def _free_run():
    return mm.simulate(mm.free_body(), "lagrange", 5.0, 1e-3)


def test_free_body_invariants():
    run = _free_run()
    mech, t, q, v = run["mech"], run["t"], run["q"], run["v"]
    K = mm.kinetic_energy(mech, q, v)
    L = mm.angular_momentum(mech, q, v)
    assert np.max(np.abs(K / K[0] - 1)) < 1e-8
    assert np.max(np.linalg.norm(L - L[0], axis=1)) / np.linalg.norm(L[0]) < 1e-8
    # c.m. in uniform motion, Euler parameters stay unit
    # add_body takes the angular velocity in global components, the state holds w'
    A0 = mm._quat_matrix(q[0, 3:7])
    np.testing.assert_allclose(A0 @ v[0, 3:6], mm.FREE_BODY["w"], atol=1e-14)
    r0, v0 = mech.q_init[:3], mech.v_init[:3]
    np.testing.assert_allclose(q[:, :3], r0 + np.outer(t, v0), atol=1e-12)
    assert np.max(np.abs(np.linalg.norm(q[:, 3:7], axis=1) - 1)) < 1e-10
    # the body tumbles: w' is far from constant (else the checks above are trivial)
    w = v[:, 3:6]
    assert np.max(np.linalg.norm(w - w[0], axis=1)) > 0.3 * np.linalg.norm(w[0])


def test_free_body_matches_euler_equations():
    run = _free_run()
    mech, t, v = run["mech"], run["t"], run["v"]
    J = mech.bodies["body"].inertia

    def euler(_t, w):
        return np.linalg.solve(J, -np.cross(w, J @ w))

    sol = solve_ivp(euler, (0, t[-1]), v[0, 3:6], method="DOP853", t_eval=t, rtol=1e-12,
                    atol=1e-12)
    assert np.max(np.abs(sol.y.T - v[:, 3:6])) < 1e-8


# --------------------------------------------------------------------------- (c) planar
PLANAR = {"slider-crank": mm.slider_crank, "four-bar": mm.four_bar}
FORMS = list(mm.formulations(PLANAR_DT))
CRANK_LENGTH = {"slider-crank": mm.SLIDER_CRANK["r"], "four-bar": mm.FOUR_BAR["a1"]}
# Expected levels (a priori): the three exact-constraint formulations integrate the same
# index-1 ODE on Phi = 0 and keep |Phi| at the 1e-9 level (Baumgarte / augmented
# Lagrangian with a 0.1 s error time constant, projection to 1e-12 after every step).
# The penalty formulation is a compliant constraint: J v' + b = lambda / a with
# a = 1e7 max(diag M), so Phi ~ lambda / (a omega^2) ~ 36-47 N / (1e7-2e7 kg * 100 /s^2)
# ~ 2e-8-5e-8 m with the reaction forces of these runs.
DRIFT_TOL = {"lagrange (Baumgarte)": 1e-8, "augmented_lagrangian": 1e-8,
             "projection": 1e-9, "partitioning": 1e-9, "penalty": 1e-7}
# Energy: RK4 truncation at dt = 1e-3 is < 1e-8 of the kinetic energy; the penalty's
# damped compliant constraint stores/dissipates ~ lambda Phi ~ 1e-6 J (2-5 J moving).
ENERGY_TOL = {"lagrange (Baumgarte)": 1e-6, "augmented_lagrangian": 1e-6,
              "projection": 1e-6, "partitioning": 1e-6, "penalty": 1e-5}


@cache
def _planar_run(mech_name: str, formulation: str):
    kind, opts = mm.formulations(PLANAR_DT)[formulation]
    return mm.simulate(PLANAR[mech_name](), kind, PLANAR_T, PLANAR_DT, **opts)


@pytest.mark.parametrize("mech_name", list(PLANAR))
def test_planar_dof(mech_name):
    rep = PLANAR[mech_name]().assemble(strict=True)
    assert rep["dof"] == 1 and rep["redundant"] == []


@pytest.mark.parametrize("formulation", FORMS)
@pytest.mark.parametrize("mech_name", list(PLANAR))
def test_planar_drift_and_energy(mech_name, formulation):
    run = _planar_run(mech_name, formulation)
    mech, q, v = run["mech"], run["q"], run["v"]
    assert np.max(mm.constraint_residual(mech, run["t"], q)) < DRIFT_TOL[formulation]
    assert mm.energy_error(mech, q, v) < ENERGY_TOL[formulation]
    assert q[-1, 2] - q[0, 2] > 4 * math.pi  # the crank turned over (>= 2 revolutions)


@pytest.mark.parametrize("mech_name", list(PLANAR))
def test_planar_formulations_agree(mech_name):
    """Crank angle over 2 s, every formulation against ``projection``.

    Exact-constraint formulations: 1e-6 rad (of 17-26 rad travelled; they differ only
    by the ~1e-9 constraint residual over a 0.1 m crank and by RK4 truncation, ~1e-7).
    Penalty: the residual constraint acceleration lambda / a acts like a generalized
    acceleration error of at most max|lambda| / (a r_crank); integrated twice over T it
    gives 0.5 max|lambda| / (a r) T^2 (lambda from the Lagrange run's multipliers).
    """
    ref_run = _planar_run(mech_name, "projection")
    theta_ref = ref_run["q"][:, 2]
    lag = _planar_run(mech_name, "lagrange (Baumgarte)")
    mech = lag["mech"]
    form = Formulation("lagrange")
    lam = max(np.max(np.abs(mech.accelerations(qk, vk, tk, form)[1]))
              for tk, qk, vk in zip(lag["t"][::20], lag["q"][::20], lag["v"][::20]))
    a = 1e7 * np.max(np.diag(mech.M))
    penalty_tol = 0.5 * lam / (a * CRANK_LENGTH[mech_name]) * PLANAR_T ** 2
    for f in FORMS:
        run = _planar_run(mech_name, f)
        np.testing.assert_array_equal(run["t"], ref_run["t"])
        err = np.max(np.abs(run["q"][:, 2] - theta_ref))
        tol = penalty_tol if f == "penalty" else 1e-6
        assert err < tol, (f, err, tol)


def test_slider_crank_matches_minimal_coordinate_solution():
    """Against the 1-DOF Lagrange equation with closed-form kinematics (no library code)."""
    for f in ("projection", "lagrange (Baumgarte)"):
        run = _planar_run("slider-crank", f)
        ref = mm.slider_crank_reference(run["t"])
        assert np.max(np.abs(run["q"][:, 2] - ref)) < 1e-6, f
