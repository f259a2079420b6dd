"""Banded linear algebra of the compiled path (``blocks.multibody.sparse``) against dense.

The orderings give a bandwidth independent of the chain's length; the banded Cholesky,
the mass-weighted projections and the index-3 step equal their dense (Python-path)
counterparts; the Lagrange, penalty and augmented-Lagrangian accelerations of both paths
solve the equations of motion to round-off (backward errors, :mod:`.eom_oracle`); the rank
measure sees redundant rows and singular configurations.
"""

import functools

import numpy as np
import pytest

from bench import multibody_models as mm
from bench.multibody import ladder
from bench.multibody_chain import four_bar_chain
from blocks.multibody import Formulation, Index3Stepper
from blocks.multibody import sparse as S

from . import eom_oracle as oracle


@pytest.mark.parametrize("N", [2, 10, 40])
def test_chain_bandwidth_does_not_grow_with_its_length(N):
    mech = four_bar_chain(N)
    mech.finalize()
    bd = mech._tables.band
    assert (bd.kd_v, bd.kd_r) == (5, 5)  # two planar bodies' worth of variables
    assert sorted(bd.vperm) == list(range(mech.nv))
    assert sorted(bd.rperm) == list(range(mech.m))


def test_band_cholesky_and_solve_equal_dense():
    rng = np.random.default_rng(1)
    n, kd = 30, 4
    A = np.zeros((n, n))
    for k in range(kd + 1):
        d = rng.normal(size=n - k)
        A += np.diag(d, -k) + (np.diag(d, k) if k else 0)
    A = A @ A.T  # banded (2 kd) and positive definite
    kd2 = 2 * kd
    ab = np.zeros((kd2 + 1, n))
    for k in range(kd2 + 1):
        ab[k, :n - k] = np.diagonal(A, -k)
    ok, rho = S.band_cholesky(ab, kd2)
    assert ok
    b = rng.normal(size=n)
    np.testing.assert_allclose(S.band_solve(ab, kd2, b), np.linalg.solve(A, b), rtol=1e-10)
    L = np.linalg.cholesky(A)
    assert rho == pytest.approx(np.min(np.diag(L) ** 2 / np.diag(A)), rel=1e-12)


def _python_twin(build):
    """The same mechanism with the compiled kernel and with the Python path."""
    a, b = build(), build()
    a.compiled, b.compiled = True, False
    a.assemble()
    b.assemble()
    assert a._tables is not None and b._tables is None
    return a, b


# The corpus: planar chains (short, long), a spatial ladder of spherical joints, the seed-003
# loop (masses 2 kg and 1e-6 kg, inertias 2 kg m^2 ... 1e-9 kg m^2: a mass matrix of condition
# 2e9 and a Schur complement J M^-1 J' of 1e10) at three crank angles and with a milder spread.
MECHANISMS = {"chain2": lambda: four_bar_chain(2), "chain10": lambda: four_bar_chain(10),
              "ladder": ladder, "seed003": mm.spatial_loop,
              "seed003-b1=2.5": lambda: mm.spatial_loop(b1=2.5),
              "seed003-b1=4": lambda: mm.spatial_loop(b1=4.0),
              "seed003-inertia1e-6": lambda: mm.spatial_loop(tiny_inertia=1e-6)}
FORMULATIONS = {"lagrange": Formulation("lagrange", alpha=5.0, beta=5.0),
                "lagrange-plain": Formulation("lagrange"),
                "penalty": Formulation("penalty", penalty=1e6),
                "al": Formulation("augmented_lagrangian", penalty=1e5)}
# a backward-stable solve leaves a backward error of a few eps: measured on this corpus at
# most 5.8 eps for the Python path (its LU, chain2; the same with the OpenBLAS kernels of
# five CPU types, OPENBLAS_CORETYPE) and 8.2 eps for the banded path (chain10, which its
# refinement test, sparse.REFINE_ETA, leaves unrefined); the banded Lagrange path without
# refinement leaves up to 6e6 eps on the seed-003 loops
ETA_MAX = 32 * oracle.EPS


def _fused_vd(mech, q, v, form):
    x, ok, _ = mech._tables.derivative(q, v, 0.0, mech.Minv, form.alpha, form.beta)
    assert ok
    return x[mech.nq:]


@functools.cache
def _twin_state(name: str, seed: int):
    a, b = _python_twin(MECHANISMS[name])
    rng = np.random.default_rng(seed)
    q = a.q_init
    v = a.project_velocities(q, a.v_init + 0.1 * rng.normal(size=a.nv), 0.0)
    return a, b, q, v, oracle.Equations.of(b, q, v)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("mech", list(MECHANISMS))
@pytest.mark.parametrize("form", list(FORMULATIONS))
def test_banded_and_python_accelerations_solve_the_equations_of_motion(mech, form, seed):
    """Both paths solve the formulation's equations, written with the Python path's M, J,
    Q, gamma, Phi, to a backward error of a few eps (:mod:`.eom_oracle`); the Lagrange
    solutions agree within eps times the KKT system's condition number (mass-weighted).

    Comparing the two solutions entry by entry to 1e-9 of the largest (as before) passed or
    failed with the OpenBLAS kernel the CPU selects: on the seed-003 loop the banded Schur
    complement left 3e-7 rad/s^2 on its 1e-9 kg m^2 links and 1e-8 m/s^2 on its 2 kg
    coupler (constraint rows 6e6 eps off the equations; dense LU: a few eps), which its
    refinement step (``sparse.schur_refinement``) now removes."""
    a, b, q, v, eq = _twin_state(mech, seed)
    f = FORMULATIONS[form]
    paths = {"banded": lambda g: a.accelerations(q, v, 0.0, g),
             "Python": lambda g: b.accelerations(q, v, 0.0, g)}
    if f.kind == "lagrange":  # the block's fused kernel (v̇ only; λ from the banded solve)
        paths["fused"] = lambda g: (_fused_vd(a, q, v, g), a.accelerations(q, v, 0.0, g)[1])
    for name, solve in paths.items():
        etas = oracle.backward_errors(solve, eq, f)
        assert max(etas) <= ETA_MAX, (f"{name} path: backward error "
                                      f"{max(etas) / oracle.EPS:.3g} eps > 32 eps")
    if f.kind == "lagrange":
        fr = oracle.EnergyFrame(eq.M, eq.J)
        xa, xb = ([*fr.y(vd), *fr.mu(lam)] for vd, lam in
                  (p.accelerations(q, v, 0.0, f) for p in (a, b)))
        xa, xb = np.array(xa), np.array(xb)
        bound = ETA_MAX * oracle.condition(oracle.kkt(fr)) * np.max(np.abs(xb))
        assert np.max(np.abs(xa - xb)) <= bound


@pytest.mark.parametrize("mech", list(MECHANISMS))
@pytest.mark.parametrize("form", list(FORMULATIONS))
def test_the_oracle_rejects_a_wrong_banded_solution(mech, form):
    """The banded solution with a random error of relative size 1e-10 in v̇ (mass-weighted),
    or in λ (1e-6 for the penalty forms, whose λ carries eps a |J| |v̇|), fails the check."""
    a, _, q, v, eq = _twin_state(mech, 0)
    f = FORMULATIONS[form]
    fr = oracle.EnergyFrame(eq.M, eq.J)
    rng = np.random.default_rng(7)

    def wrong(dy, dmu):
        def solve(g):
            vd, lam = a.accelerations(q, v, 0.0, g)
            y, mu = fr.y(vd), fr.mu(lam)
            e, u = rng.normal(size=y.size), rng.normal(size=mu.size)
            y = y + dy * np.max(np.abs(y)) * e / np.max(np.abs(e))
            mu = mu + dmu * np.max(np.abs(mu)) * u / np.max(np.abs(u))
            return fr.vd(y), fr.lam(mu)
        return solve

    assert max(oracle.backward_errors(wrong(0.0, 0.0), eq, f)) <= ETA_MAX
    dmu = 1e-10 if f.kind == "lagrange" else 1e-6
    for dy, dm in ((1e-10, 0.0), (0.0, dmu)):
        assert max(oracle.backward_errors(wrong(dy, dm), eq, f)) > ETA_MAX, (dy, dm)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("mech", list(MECHANISMS))
def test_banded_velocity_projection_meets_the_constraints(mech, seed):
    """The compiled velocity projection leaves ``J v + Phi_t`` at a backward error of a few
    eps (mass-weighted rows, :mod:`.eom_oracle`); before its refinement step, 1e-9 m/s of
    0.24 (1e7 eps) on the seed-003 loops.  (The Python path's least-squares projection
    still leaves 1e-8 there.)"""
    a, b, q, _, eq = _twin_state(mech, seed)
    rng = np.random.default_rng(seed)
    v = a.project_velocities(q, a.v_init + 0.1 * rng.normal(size=a.nv), 0.0)
    _, J, phit, _ = b.constraints(q, v, 0.0)
    fr = oracle.EnergyFrame(eq.M, J)
    r, ch = fr.R * (J @ v + phit), fr.R * phit
    eta = np.max(np.abs(r)) / (np.max(np.abs(fr.B).sum(axis=1)) * np.max(np.abs(fr.y(v)))
                               + np.max(np.abs(ch)))
    assert eta <= ETA_MAX, f"{eta / oracle.EPS:.3g} eps"


@pytest.mark.parametrize("build", [lambda: four_bar_chain(10), ladder],
                         ids=["chain10", "ladder"])
def test_banded_projections_equal_the_python_path(build):
    a, b = _python_twin(build)
    rng = np.random.default_rng(2)
    q = a.q_init.copy()
    for body in a.moving:  # disturb the positions (planar: x, y, theta; spatial: r)
        q[body.iq:body.iq + 3] += 1e-3 * rng.normal(size=3)
    qa, ia = a.project_positions(q, 0.0)
    qb, ib = b.project_positions(q, 0.0)
    assert ia == ib
    np.testing.assert_allclose(qa, qb, atol=1e-12)
    v = rng.normal(size=a.nv)
    np.testing.assert_allclose(a.project_velocities(qa, v, 0.0),
                               b.project_velocities(qb, v, 0.0), atol=1e-11)


def test_rank_measure_counts_redundant_rows_and_sees_singular_configurations():
    from blocks.multibody import Mechanism
    for compiled in (True, False):
        m = Mechanism("m", dim=2, compiled=compiled)
        bob = m.add_particle("bob", 1.0, (0.0, 1.0))
        m.add_joint("distance", "a", "ground.O", bob.marker("cm"), length=1.0)
        m.add_joint("distance", "b", m.ground.marker("B", (0.0, 2.0)), bob.marker("cm"),
                    length=1.0)  # the same line: dependent at this position
        m.finalize()
        rho, dep, _ = m.rank_measure(m.q0, 0.0)
        assert dep == 1
        q = m.q0 + np.array([1e-3, 0.0])  # 1 mm aside: the rods 2 mrad from collinear
        rho, dep, _ = m.rank_measure(q, 0.0)
        assert dep == 0 and rho == pytest.approx(np.sin(2e-3) ** 2, rel=1e-5)


def test_index3_compiled_step_equals_the_dense_step_on_a_spatial_loop():
    mech = mm.spatial_loop()
    comp = Index3Stepper("c", mech, 1e-3, compiled=True)
    dense = Index3Stepper("d", mech, 1e-3, compiled=False)
    assert comp.solver.compiled and not dense.solver.compiled
    q, v = mech.q_init.copy(), mech.v_init.copy()
    a, lam = comp.initial_accelerations(q, v)
    sc, sd = (q, v, a, lam), (q, v, a, lam)
    for n in range(50):
        sc = comp.step(*sc, n * 1e-3)[:4]
        sd = dense.step(*sd, n * 1e-3)[:4]
    # both converge Newton to 1e-10 x L (the compiled Newton matrix uses the symmetric
    # part of the gyroscopic damping: a different iteration, the same solution)
    np.testing.assert_allclose(sc[0], sd[0], atol=1e-9)
    np.testing.assert_allclose(sc[1], sd[1], atol=1e-7)


@pytest.mark.parametrize("compiled", [True, False])
def test_augmented_lagrangian_multipliers_are_the_constraint_forces(compiled):
    """λ of the augmented Lagrangian accumulates over its iterations (before: only the last
    increment, about 0, was returned, so its reaction outputs read zero)."""
    mech = ladder()
    mech.compiled = compiled
    mech.assemble()
    q, v = mech.q_init, mech.v_init
    vd_l, lam_l = mech.accelerations(q, v, 0.0, Formulation("lagrange"))
    form = Formulation("augmented_lagrangian", penalty=1e5, omega=0.0, mu=0.0, iterations=10)
    vd_a, lam_a = mech.accelerations(q, v, 0.0, form)
    np.testing.assert_allclose(lam_a, lam_l, atol=1e-8 * np.max(np.abs(lam_l)))
    Q = mech.forces(q, v, 0.0)
    _, J, _, _ = mech.constraints(q, v, 0.0)
    np.testing.assert_allclose(mech.M @ vd_a, Q - J.T @ lam_a, atol=1e-9 * np.max(np.abs(Q)))


def test_partitioning_keeps_a_well_conditioned_partition_and_equals_a_dense_correction():
    """The sparse-LU correction (partition kept while its pivots stay within 1e-3) gives
    the state the dense one (partition chosen afresh, least squares) gives."""
    mech = four_bar_chain(10)
    mech.assemble()
    rng = np.random.default_rng(3)
    q = mech.q_init + 1e-6 * rng.normal(size=mech.nq)
    v = mech.v_init + 1e-3 * rng.normal(size=mech.nv)
    q1, v1, dep = mech.correct_partitioned(q, v, 0.0, with_partition=True)
    q2, v2, dep2 = mech.correct_partitioned(q, v, 0.0, dep=dep, with_partition=True)
    np.testing.assert_array_equal(dep, dep2)
    np.testing.assert_allclose(q1, q2, atol=1e-13)
    # dense reference: Newton with least squares on the same partition
    qd = q.copy()
    for _ in range(30):
        phi, J, _, _ = mech.constraints(qd, np.zeros(mech.nv), 0.0)
        if np.max(np.abs(phi)) <= 1e-12:
            break
        step = np.zeros(mech.nv)
        step[dep] = -np.linalg.lstsq(J[:, dep], phi, rcond=None)[0]
        qd = mech.displace(qd, step)
    np.testing.assert_allclose(q1, qd, atol=1e-11)
    _, J, phit, _ = mech.constraints(q1, v1, 0.0)
    assert np.max(np.abs(J @ v1 + phit)) < 1e-12
