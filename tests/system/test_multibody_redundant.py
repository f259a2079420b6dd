"""Redundant constraints in every formulation (issue 32 item 2).

The case: a planar parallelogram with a third parallel crank (Grübler's count 0; it moves
with one degree of freedom), swinging about its hanging position.  Before: four of the
ten formulations refused it at build ("remove them", which the API did not allow), the
staggered integrator returned NaN or a raw LinAlgError, and ``pcst``'s error did not
shrink with the step.  Now the index-1 solves use independent rows chosen by a
rank-revealing QR and report minimum-norm reactions (:mod:`blocks.multibody.redundancy`),
a row can be dropped by name, and ``pcst`` scales its regularization with the step.

Oracle: the crank angle in its one minimal coordinate (SciPy at rtol 1e-12, written in
the test without the library: :func:`minimal`).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from blocks.multibody import Index3Stepper, Mechanism, MultibodyBlock
from blocks.multibody.redundancy import RowSet, min_norm_reactions
from blocks.multibody.staggered import staggered_integrate
from cosim import DiagramBuilder, Simulator
from cosim.errors import BuildError

from .test_multibody_finite import parallelogram

THETA0, T_END, H = -1.0, 2.0, 1e-3
MC, MCP, R, G = 0.2, 1.0, 0.2, 9.81


def minimal(t: np.ndarray, cranks: int = 3, theta0: float = THETA0) -> np.ndarray:
    """Crank angle: ``I theta'' = -g cos(theta) (n m_c r / 2 + m_cp r)``, ``I`` the ``n``
    cranks about their pivots plus the translating coupler."""
    inertia = cranks * (MC * R * R / 12 + MC * (R / 2) ** 2) + MCP * R * R
    sol = solve_ivp(lambda _, y: [y[1], -G * math.cos(y[0]) * (cranks * MC * R / 2 + MCP * R)
                                  / inertia], (0.0, float(t[-1])), [theta0, 0.0],
                    rtol=1e-12, atol=1e-12, dense_output=True)
    return sol.sol(t)[0]


BLOCK = {"lagrange": dict(alpha=10.0, beta=10.0), "lagrange (plain)": {},
         "penalty": {}, "augmented_lagrangian": {},
         "projection": dict(project_every_s=H), "partitioning": dict(project_every_s=H)}


def _block_run(form: str, mech: Mechanism, reactions=(), **options) -> tuple:
    b = DiagramBuilder("d")
    blk = b.add(MultibodyBlock("arm", mech, form.split()[0], reactions=reactions,
                               **{**BLOCK[form], **options}))
    outs = [blk.output("q")] + [blk.output(f"{j}_reaction") for j in reactions]
    res = Simulator(b.build(), solver="rk4", dt=H, record=outs).run(T_END)
    return np.asarray(res.time), res["arm.q"], [res[o.path] for o in outs[1:]]


def _crank(mech: Mechanism, q: np.ndarray) -> np.ndarray:
    return q[:, mech.layout()["crank1"]["q"]][:, 2]


# measured 2026-11-29 (rad, 2 s at h = 1 ms): lagrange 3.6e-10, plain 1.7e-10,
# projection 1.6e-10, partitioning 1.7e-10, penalty 3.6e-10 and AL 3.6e-10 (at the
# penalty's default 1e10 since its range-space solve; 1.1e-7 and 5.6e-8 at 1e7, their
# constraint compliance), Index3Stepper 4.7e-5 and the staggered schemes 1.7e-5..2.3e-5
# (second order in h: see test_the_staggered_schemes_converge)
BOUND = {"lagrange": 1e-9, "lagrange (plain)": 1e-9, "projection": 1e-9,
         "partitioning": 1e-9, "penalty": 1e-9, "augmented_lagrangian": 1e-9}


@pytest.mark.parametrize("form", list(BLOCK))
def test_every_block_formulation_runs_the_redundant_parallelogram(form):
    mech = parallelogram(theta0=THETA0, w0=0.0)
    t, q, _ = _block_run(form, mech)
    theta = _crank(mech, q)
    assert np.isfinite(q).all() and np.ptp(theta) > 0.5
    err = np.max(np.abs(theta - minimal(t)))
    assert err < BOUND[form], err
    assert mech.assembly["rank"] == 11 and len(mech.assembly["redundant"]) == 1


def test_index3_stepper_runs_the_redundant_parallelogram():
    mech = parallelogram(theta0=THETA0, w0=0.0)
    b = DiagramBuilder("d")
    st = b.add(Index3Stepper("arm", mech, H))
    res = Simulator(b.build(), solver="euler", dt=H, record=[st.output("q")]).run(T_END)
    err = np.max(np.abs(_crank(mech, res["arm.q"]) - minimal(np.asarray(res.time))))
    assert err < 1e-4, err  # measured 4.7e-5 rad (trapezoidal rule, second order in h)


@pytest.mark.parametrize("project", [False, True])
@pytest.mark.parametrize("constraints", ["index1", "pcst"])
def test_the_staggered_schemes_converge_on_the_redundant_parallelogram(constraints,
                                                                         project):
    """Second order in h (ratio 4 per halving, within 10 %) for every variant; ``pcst``
    before: 1.95e-4, 2.23e-4, 2.29e-4 rad at h = 2, 1, 0.5 ms (its fixed eps = 1e-6 set
    the error)."""
    errs = []
    for h in (2e-3, 1e-3, 5e-4):
        mech = parallelogram(theta0=THETA0, w0=0.0)
        run = staggered_integrate(mech, T_END, h, constraints=constraints, project=project)
        assert np.isfinite(run["q"]).all()
        errs.append(np.max(np.abs(_crank(mech, run["q"]) - minimal(run["t"]))))
    assert errs[1] < 5e-5, errs
    for coarse, fine in zip(errs, errs[1:]):
        assert 3.6 < coarse / fine < 4.4, errs


def test_reactions_are_the_minimum_norm_ones_and_shared_equally():
    """Identical cranks share the load equally, in every formulation: lagrange's
    minimum-norm rule and the penalty forms' reactions agree."""
    joints = ("G0", "G1", "G2")
    _, _, lag = _block_run("lagrange", parallelogram(theta0=THETA0, w0=0.0), joints)
    # the penalty's split of a load among redundant rows is set by 1/a against rounding:
    # to 8e-6 relative at the default a = 1e10, 1e-10 at 1e7
    _, _, pen = _block_run("penalty", parallelogram(theta0=THETA0, w0=0.0), joints,
                           penalty=1e7)
    scale = np.max(np.abs(lag[0]))
    assert scale > 1.0
    for k in (1, 2):
        assert np.max(np.abs(lag[k] - lag[0])) < 1e-9 * scale
        assert np.max(np.abs(pen[k] - pen[0])) < 1e-6 * scale
    assert np.max(np.abs(pen[0] - lag[0])) < 1e-5 * scale  # penalty 1e7: its own error


def test_a_row_can_be_dropped_by_name():
    """The dependent row the assembly names is dropped: it is not enforced, its reaction
    is 0, the motion is the same; the mechanism has no redundant row left."""
    probe = parallelogram(theta0=THETA0, w0=0.0)
    row = probe.assemble()["redundant"][0]
    mech = parallelogram(theta0=THETA0, w0=0.0)
    mech.drop_rows(row)
    joint, k = row.split(".")[0], probe.row_labels.index(row) - \
        probe.joint_rows[row.split(".")[0]].start
    t, q, (rj,) = _block_run("lagrange (plain)", mech, (joint,))
    rep = mech.assembly
    assert rep["redundant"] == [] and rep["dropped"] == [row] and rep["dof"] == 1
    assert np.max(np.abs(_crank(mech, q) - minimal(t))) < 1e-9
    assert np.all(rj[:, k] == 0.0) and np.max(np.abs(rj)) > 0.1


def test_dropping_an_unknown_row_says_which_rows_exist():
    mech = parallelogram()
    mech.drop_rows("T2.z")
    with pytest.raises(BuildError, match=r"drop_rows\('T2.z'\): no such constraint row; "
                                         r"joint 'T2' has rows T2.point\[0\], T2.point\[1\]"):
        mech.finalize()
    mech = parallelogram()
    mech.finalize()
    with pytest.raises(BuildError, match="call drop_rows before"):
        mech.drop_rows("T2.point[0]")


def test_the_row_set_is_chosen_again_when_the_rank_changes():
    """Row 2 depends on rows 0 and 1; then it turns independent (as when a mechanism
    leaves a position where its rows lined up): the kept set is dropped."""
    rows = RowSet(np.eye(3), np.ones(3))
    J = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    assert rows.select(J) and rows.A.size == 2 and rows.D.size == 1
    assert rows.update(J) is not None  # still valid: kept
    J2 = J.copy()
    J2[2, 2] = 1e-3
    assert rows.update(J2) is None and not rows.reduced  # all three independent now
    assert rows.selections == 2


def test_min_norm_reactions_of_identical_rows_are_equal():
    J = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    lam = min_norm_reactions(J, np.array([2.0, 3.0]), np.ones(3))
    assert lam == pytest.approx([1.0, 1.0, 3.0], abs=1e-14)


@pytest.mark.parametrize("cranks, theta0, redundant, singular, dof", [
    (3, THETA0, 1, 0, 1),    # the swinging parallelogram: one redundant row
    (4, 1.0, 2, 0, 1),       # two redundant cranks
    (2, 0.0, 0, 1, 1),       # a regular parallelogram at its singular position
    (4, 0.0, 2, 1, 1),       # both: redundant, and started at the singular position
])
def test_assembly_tells_redundant_rows_from_a_singular_start(cranks, theta0, redundant,
                                                             singular, dof):
    """A dependence that holds along the motion is redundant; one that holds only at the
    start (cranks along the coupler) is a singular position, which the index-1 monitors
    then stop at t = 0 (:func:`blocks.multibody.redundancy.persistent`)."""
    rep = parallelogram(cranks=cranks, theta0=theta0, w0=1.0).assemble()
    assert (len(rep["redundant"]), len(rep["singular"]), rep["dof"]) == \
        (redundant, singular, dof), rep


@pytest.mark.parametrize("kind", ["penalty", "partitioning", "Index3Stepper", "staggered"])
def test_a_dropped_row_is_left_out_by_every_stepper(kind):
    """Measured: penalty 1.4e-7 rad, partitioning 1.7e-10, Index3Stepper 4.7e-5, staggered
    1.7e-5 (their errors without the drop)."""
    mech = parallelogram(theta0=THETA0, w0=0.0)
    mech.drop_rows("T1.point[1]")
    if kind == "staggered":
        run = staggered_integrate(mech, T_END, H)
        t, q = run["t"], run["q"]
    elif kind == "Index3Stepper":
        b = DiagramBuilder("d")
        st = b.add(Index3Stepper("arm", mech, H))
        res = Simulator(b.build(), solver="euler", dt=H, record=[st.output("q")]).run(T_END)
        t, q = np.asarray(res.time), res["arm.q"]
    else:
        t, q, _ = _block_run(kind, mech)
    bound = {"penalty": 1e-6, "partitioning": 1e-9}.get(kind, 1e-4)
    assert np.max(np.abs(_crank(mech, q) - minimal(t))) < bound


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("cranks, redundant, singular", [(4, 2, 1), (2, 0, 1)])
def test_the_singular_start_does_not_depend_on_the_null_space_basis(monkeypatch, seed,
                                                                    cranks, redundant,
                                                                    singular):
    """At a singular start the free directions form a degenerate null space whose SVD basis
    is arbitrary (it changed with the LAPACK build: the basis vectors missed the narrow
    cone of the motion through q and every dependent row was called singular); the probe
    must find the same rows in any rotated basis."""
    import scipy.linalg as real_sla

    from blocks.multibody import redundancy
    rng = np.random.default_rng(seed)

    null_space = real_sla.null_space

    def rotated(A, rcond=None):
        N = null_space(A, rcond=rcond)
        Q, _ = np.linalg.qr(rng.normal(size=(N.shape[1], N.shape[1])))
        return N @ Q
    monkeypatch.setattr(redundancy.sla, "null_space", rotated)
    rep = parallelogram(cranks=cranks, theta0=0.0, w0=1.0).assemble()
    assert (len(rep["redundant"]), len(rep["singular"]), rep["dof"]) == \
        (redundant, singular, 1), rep
