"""Kinematic analysis, inverse dynamics and linearization against closed forms."""

import math

import numpy as np
import pytest

from blocks.multibody import Mechanism, driver
from blocks.multibody.analysis import inverse_dynamics, kinematics, linearize
from cosim.errors import BuildError

M, L, G = 2.0, 0.8, 9.81
J_CM = M * L ** 2 / 12  # slender rod


def _rod(driven: bool, w: float = 3.0, theta0: float = 0.0):
    """A rod hinged at one end; theta from +x, counter-clockwise."""
    m = Mechanism("rod", dim=2, gravity=(0.0, -G))
    c, s = math.cos(theta0), math.sin(theta0)
    rod = m.add_body("rod", M, J_CM, (L / 2 * c, L / 2 * s), theta0)
    rod.marker("end", (-L / 2, 0.0))
    m.add_joint("revolute", "hinge", "ground.O", "rod.end")
    if driven:
        m.add_joint("angle_driver", "motor", "ground.O", "rod.end",
                    fn=driver(lambda t: theta0 + w * t, lambda t: w, lambda t: 0.0))
    return m


def test_kinematics_of_a_driven_rod():
    k = kinematics(_rod(True), np.linspace(0, 1, 11))
    th = 3.0 * k["t"]
    np.testing.assert_allclose(k["q"][:, 2], th, atol=1e-10)
    np.testing.assert_allclose(k["q"][:, 0], L / 2 * np.cos(th), atol=1e-10)
    np.testing.assert_allclose(k["v"][:, 1], L / 2 * 3.0 * np.cos(th), atol=1e-10)
    np.testing.assert_allclose(k["vdot"][:, 0], -L / 2 * 9.0 * np.cos(th), atol=1e-9)


def test_inverse_dynamics_gives_the_motor_torque():
    """Constant speed: the motor holds gravity, tau = m g (L/2) cos(theta)."""
    res = inverse_dynamics(_rod(True), np.linspace(0, 2, 21))
    th = 3.0 * res["t"]
    tau = res["joints"]["motor"][:, 0]  # the torque the motor applies to the rod
    np.testing.assert_allclose(tau, M * G * L / 2 * np.cos(th), atol=1e-8)
    # hinge force on the rod: holds gravity and the centripetal force
    F = res["joints"]["hinge"]
    np.testing.assert_allclose(F[:, 1], M * G - M * L / 2 * 9.0 * np.sin(th), atol=1e-8)


def test_kinematics_refuses_free_mechanisms():
    with pytest.raises(BuildError, match="1 degree\\(s\\) of freedom are free; add driving"):
        kinematics(_rod(False), [0.0])


def test_linearized_pendulum_frequency():
    """Hanging rod: w^2 = m g (L/2) / J_O, J_O = m L^2 / 3."""
    lin = linearize(_rod(False, theta0=-math.pi / 2))
    ev = lin["eigenvalues"]
    w = math.sqrt(M * G * L / 2 / (M * L ** 2 / 3))
    np.testing.assert_allclose(sorted(ev.imag), [-w, w], rtol=1e-6)
    np.testing.assert_allclose(ev.real, 0.0, atol=1e-6)
    assert lin["N"].shape == (3, 1)


def _sorted(z):
    """Complex numbers by imaginary, then real part (robust to rounding signs)."""
    return np.array(sorted(z, key=lambda x: (round(x.imag, 6), round(x.real, 6))))


@pytest.mark.parametrize("ratio", [0.5, 0.9, 1.1, 2.0])
def test_linearized_sleeping_top_is_rouths(ratio):
    """A symmetric top spinning upright at n on a spherical pivot (a steady motion: its
    spin angle is cyclic).  Routh: the two circular modes of the tilt have
    w = (C n +- sqrt(C^2 n^2 - 4 I1 m g l)) / (2 I1), I1 = B + m l^2, so the top sleeps
    (all eigenvalues imaginary) exactly for C^2 n^2 > 4 I1 m g l."""
    m, l, B, C = 1.0, 0.1, 0.004, 0.006
    I1 = B + m * l * l
    n = ratio * math.sqrt(4 * I1 * m * G * l) / C
    mech = Mechanism("top", dim=3, gravity=(0.0, 0.0, -G))
    top = mech.add_body("top", m, (B, B, C), (0.0, 0.0, l), np.eye(3),
                        angular_velocity=(0.0, 0.0, n))
    top.marker("tip", (0.0, 0.0, -l))
    mech.add_joint("spherical", "pivot", "ground.O", "top.tip")
    lin = linearize(mech)
    disc = np.sqrt(complex(C * C * n * n - 4 * I1 * m * G * l))
    w = np.array([(C * n + disc) / (2 * I1), (C * n - disc) / (2 * I1)])
    expected = _sorted(np.concatenate([1j * w, -1j * w]))
    ev = lin["eigenvalues"]
    big = _sorted(ev[np.abs(ev) > 1e-3])
    np.testing.assert_allclose(big, expected, rtol=1e-6)
    assert (np.max(np.abs(big.real)) < 1e-6) == (ratio > 1)  # sleeps above the limit


def _parallelogram(cranks, r=0.2, a=0.5, mk=0.2, mc=1.0):
    """``cranks`` equal cranks (length r, mass mk, pivots on the ground a apart) joined by one
    coupler (mass mc), hanging (cranks straight down, at rest; ``bench.multibody_corpus``).
    Three or more cranks: redundant constraints (Grübler counts 0 degrees of freedom, it
    has 1)."""
    from bench.multibody_corpus import parallelogram
    return parallelogram(cranks, r, a, -math.pi / 2, 0.0, m_crank=mk, m_coupler=mc)


@pytest.mark.parametrize("eps", [None, 1e-6])
@pytest.mark.parametrize("cranks", [2, 3, 4])
def test_a_redundant_parallelogram_linearizes_to_its_pendulum_mode(cranks, eps):
    """Issue 32 item 4: with a redundant third (and fourth) crank, linearize used to refuse
    (the index-1 solve's StepError, recommending Index3Stepper, which does not linearize).
    Now it works on independent rows: the coupler translates, so in the crank angle
    ``(n mk r^2 / 3 + mc r^2) theta'' = -(n mk g r / 2 + mc g r) theta``.  Measured
    relative error of the frequency 1.2e-16 to 4.9e-16; bound 1e-13."""
    r, mk, mc = 0.2, 0.2, 1.0
    w = math.sqrt((cranks * mk * G * r / 2 + mc * G * r) / (cranks * mk * r * r / 3 + mc * r * r))
    lin = linearize(_parallelogram(cranks), **({} if eps is None else {"eps": eps}))
    assert lin["Nq"].shape == (3 * (cranks + 1), 1) and lin["N"].shape == (3 * (cranks + 1), 1)
    ev = lin["eigenvalues"]
    np.testing.assert_allclose(np.sort(ev.imag), [-w, w], rtol=1e-13)
    np.testing.assert_allclose(ev.real, 0.0, atol=1e-13 * w)
    assert len(lin["redundant"]) == cranks - 2  # one row of a crank-coupler joint each
    assert all(row.startswith("T") for row in lin["redundant"])


def test_linearize_refuses_options_that_cannot_take_effect():
    from blocks.multibody import Formulation
    mech = _rod(False, theta0=-math.pi / 2)
    with pytest.raises(ValueError, match="form='penalty' cannot take effect"):
        linearize(mech, form=Formulation("penalty"))
    with pytest.raises(ValueError, match="form must be one of"):
        linearize(mech, form="euler")
    for eps in (0.0, -1e-6, 0.1):
        with pytest.raises(ValueError, match="eps is the complex step"):
            linearize(mech, eps=eps)
    # the index-1 kinds give the constrained dynamics on the manifold: the same A
    A = linearize(mech)["A"]
    for form in ("projection", Formulation("lagrange", alpha=5.0, beta=5.0)):
        np.testing.assert_array_equal(linearize(mech, form=form)["A"], A)


def _sprung_rod(fn):
    """The hanging rod with a horizontal spring force ``fn(P, V, t)`` at its free end."""
    m = _rod(False, theta0=-math.pi / 2)
    m.marker("rod", "tip", (L / 2, 0.0))
    m.add_force("spring", "rod.tip", fn)
    return m


K_TIP = 30.0


@pytest.mark.parametrize("how", ["float", "abs"])
def test_a_force_that_is_not_analytic_is_differenced_and_said_so(how):
    """A force function written with ``float()`` (the complex step's imaginary part is
    discarded: NumPy's ComplexWarning, an error inside linearize) or with ``abs()`` (which
    gives a wrong, zero derivative silently) is found at the operating point, differenced
    alone by central differences, named in ``method`` and in a warning; the analytic
    twin is exact.  Rod with a tip spring: ``J_O w^2 = m g L/2 + k L^2``."""
    fns = {"float": lambda P, V, t: (-K_TIP * float(P[0]), 0.0),
           "abs": lambda P, V, t: (K_TIP * (np.abs(P[0] - 5.0) - 5.0), 0.0)}  # P[0] < 5
    w = math.sqrt((M * G * L / 2 + K_TIP * L * L) / (M * L * L / 3))
    exact = linearize(_sprung_rod(lambda P, V, t: (-K_TIP * P[0], 0.0)))
    assert exact["method"] == "complex step (h = 1e-20)"
    np.testing.assert_allclose(np.sort(exact["eigenvalues"].imag), [-w, w], rtol=1e-14)
    with pytest.warns(UserWarning, match="force element\\(s\\) 'spring' not analytic"):
        lin = linearize(_sprung_rod(fns[how]))
    assert "central differences (step 1e-6) for force element 'spring'" in lin["method"]
    assert ("ComplexWarning" in lin["method"]) == (how == "float")
    np.testing.assert_allclose(np.sort(lin["eigenvalues"].imag), [-w, w], rtol=1e-9)


def test_inverse_dynamics_of_a_driven_redundant_parallelogram():
    """Three equal cranks, the first driven at a constant rate: the kinematics in the
    independent rows, the reactions the minimum-norm ones, and the motor torque the
    minimal-coordinate one,
    ``tau = I theta'' + g cos(theta) (3 m_c r / 2 + m_cp r) = g cos(theta) (...)`` at
    constant rate.  Before: ``np.linalg.solve`` of the non-square J raised LinAlgError."""
    from bench.multibody_corpus import parallelogram
    w, r = 0.5, 0.2
    mech = parallelogram(cranks=3, r=r, theta0=-1.0, w0=w)
    mech.add_joint("angle_driver", "motor", "ground.g0", "crank0.P",
                   fn=driver(lambda t: -1.0 + w * t, lambda t: w, lambda t: 0.0))
    res = inverse_dynamics(mech, np.linspace(0.0, 1.0, 11))
    th = -1.0 + w * res["t"]
    np.testing.assert_allclose(res["q"][:, mech.layout()["crank2"]["q"]][:, 2], th,
                               atol=1e-10)
    tau = res["joints"]["motor"][:, 0]
    np.testing.assert_allclose(tau, G * np.cos(th) * (1.5 * 0.2 * r + 1.0 * r), rtol=1e-8)
    # minimum norm: equilibrium J' lam = Q - M vdot, and no part along the self-stress
    # (the null space of J' in the force-scaled norm of redundancy.py)
    from scipy.linalg import null_space
    scale = mech.row_scale / mech.length_scale
    for q, v, vd, lam in zip(res["q"], res["v"], res["vdot"], res["lambda"]):
        _, J, _, _ = mech.constraints(q, v, 0.0)
        f = mech.forces(q, v, 0.0) - mech.M @ vd
        np.testing.assert_allclose(J.T @ lam, f, atol=1e-9)
        stress = null_space(J.T / scale)  # self-stress modes of the scaled reactions
        assert stress.shape[1] == 1
        assert abs(stress[:, 0] @ (scale * lam)) < 1e-9 * np.linalg.norm(scale * lam)
