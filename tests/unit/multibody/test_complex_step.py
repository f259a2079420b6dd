"""Complex-step derivatives of the constraint primitives and force elements.

:func:`blocks.multibody.analysis.linearize` differentiates the Python evaluation by complex
step (``f'(x) = Im f(x + i h) / h``), so every primitive, kinematic quantity and force
element must be analytic in complex arithmetic and keep the imaginary parts.  Checked here
against central differences along random directions, for every joint kind and element, on
planar and spatial mechanisms in random (inconsistent: it does not matter) states.
"""

import numpy as np
import pytest

from blocks.multibody import Mechanism, driver
from blocks.multibody.complex_dynamics import ComplexDynamics, ComplexWarning
from blocks.multibody.geometry import quat_axis_angle


def _planar():
    m = Mechanism("planar", dim=2, gravity=(0.0, -9.81), compiled=False)
    a = m.add_body("a", 1.0, 0.1, (0.3, 0.1), 0.2)
    b = m.add_body("b", 2.0, 0.2, (0.9, -0.1), -0.3)
    c = m.add_body("c", 1.5, 0.3, (0.4, 0.7), 1.0)
    m.add_particle("p", 0.5, (1.2, 0.3))
    for body in (a, b, c):
        body.marker("e", (-0.3, 0.05), 0.3)
        body.marker("f", (0.3, -0.02), -0.4)
    m.add_joint("revolute", "rev", "ground.O", "a.e")
    m.add_joint("prismatic", "pri", "a.f", "b.e")
    m.add_joint("fixed", "fix", "b.f", "c.e")
    m.add_joint("distance", "dist", "c.f", "p.cm", length=0.4)
    m.add_joint("angle_driver", "mot", "ground.O", "c.f",
                fn=driver(lambda t: 0.3 * t, lambda t: 0.3, lambda t: 0.0))
    m.add_joint("slide_driver", "sli", "a.e", "p.cm",
                fn=driver(lambda t: 0.1 * t, lambda t: 0.1, lambda t: 0.0))
    m.add_joint("knife_edge", "knife", "ground.O", "b.f")
    m.add_joint("path_driver", "path", "a.e", "c.cm",
                fn=lambda t: (np.array([0.1 * t, 0.2]), np.array([0.1, 0.0]), np.zeros(2)))
    m.add_spring_damper("sd", "a.f", "p.cm", stiffness=50.0, damping=2.0)
    m.add_spring_damper("rope", "ground.O", "c.cm", stiffness=80.0, damping=1.0, rope=True,
                        length0=0.2)
    m.add_spring_damper("law", "b.cm", "c.cm", force=lambda l, ld: 30.0 * l ** 2 + 3.0 * ld)
    m.add_bushing("bush", "ground.O", "b.e", translational=(40.0, 60.0), rotational=5.0,
                  damping_translational=1.0, damping_rotational=0.5)
    m.add_contact("ln", "p.cm", 0.3, (0.0, 0.1), (0.0, 1.0), stiffness=1e4, restitution=0.7,
                  friction=0.3)
    m.add_contact("hc", "c.f", 1.2, (0.0, 0.0), (0.0, 1.0), stiffness=1e4,
                  model="hunt_crossley", hc_alpha=0.3)
    m.add_force("field", "a.cm", lambda P, V, t: (-3.0 * P[0] * P[1], -2.0 * V[1] ** 2))
    m.add_load("F", "b.f")
    m.add_load("T", "c.cm", kind="torque")
    return m, {"F": np.array([1.0, -2.0]), "T": 0.7}


def _spatial():
    m = Mechanism("spatial", dim=3, gravity=(0.0, 0.0, -9.81), compiled=False)
    rng = np.random.default_rng(5)
    for k in range(6):
        b = m.add_body(f"b{k}", 1.0 + k, (0.1, 0.2, 0.25), rng.normal(size=3),
                       (rng.normal(size=3), rng.uniform(0.2, 2.0)))
        b.marker("e", rng.normal(size=3) * 0.2, (rng.normal(size=3), rng.uniform(0, 3)))
        b.marker("f", rng.normal(size=3) * 0.2, (rng.normal(size=3), rng.uniform(0, 3)))
    kinds = ["revolute", "spherical", "universal", "cylindrical", "prismatic", "planar",
             "fixed"]
    pairs = [("ground.O", "b0.e"), ("b0.f", "b1.e"), ("b1.f", "b2.e"), ("b2.f", "b3.e"),
             ("b3.f", "b4.e"), ("b4.f", "b5.e"), ("b5.f", "b0.cm")]
    for kind, (i, j) in zip(kinds, pairs):
        m.add_joint(kind, kind, i, j)
    m.add_joint("distance", "dist", "b1.cm", "b4.cm", length=0.7)
    m.add_joint("knife_edge", "knife", "ground.O", "b2.cm")
    plane = m.marker("ground", "plane", (0.0, 0.0, -0.5))
    m.add_joint("rolling_disk", "roll", plane, "b3.e", radius=0.3)
    m.add_joint("distance_driver", "act", "b0.cm", "b5.cm",
                fn=driver(lambda t: 1.0 + 0.1 * t, lambda t: 0.1, lambda t: 0.0))
    m.add_spring_damper("sd", "b0.e", "b2.f", stiffness=50.0, damping=2.0)
    m.add_bushing("bush", "b1.e", "b4.f", translational=(40.0, 60.0, 70.0),
                  rotational=(5.0, 6.0, 7.0), damping_translational=1.0,
                  damping_rotational=(0.5, 0.6, 0.7))
    m.add_contact("ln", "b5.f", 2.5, (0.0, 0.0, -1.0), (0.1, 0.0, 1.0), stiffness=1e4,
                  restitution=0.7, friction=0.3)
    m.add_force("field", "b4.cm", lambda P, V, t: -5.0 * P * (P @ P) - V)
    m.add_load("F", "b2.f")
    m.add_load("T", "b3.cm", kind="torque")
    return m, {"F": np.array([1.0, -2.0, 0.5]), "T": np.array([0.3, 0.2, -0.1])}


def _state(m, rng):
    m.finalize()
    q = m.q0 + rng.normal(size=m.nq) * 0.05
    for b in m.moving:
        if b.kind == "spatial":
            p = q[b.iq + 3:b.iq + 7]
            q[b.iq + 3:b.iq + 7] = p / np.linalg.norm(p)
    return q, rng.normal(size=m.nv)


def _check(f, m, q, v, rng, tol=1e-7):
    """Complex step against central differences along a random direction (and the real
    part against the real evaluation)."""
    dyn = ComplexDynamics(m, q, 0.3)
    tq, dv = dyn.qdot(q, rng.normal(size=m.nv)), rng.normal(size=m.nv)
    h, d = 1e-20, 1e-6
    with _no_complex_warning():
        zc = [np.asarray(x) for x in f(q + 1j * h * tq, v + 1j * h * dv)]
    zr = [np.asarray(x) for x in f(q, v)]
    zp = [np.asarray(x) for x in f(q + d * tq, v + d * dv)]
    zm = [np.asarray(x) for x in f(q - d * tq, v - d * dv)]
    for c, r, p, mm in zip(zc, zr, zp, zm):
        fd = (p - mm) / (2 * d)
        scale = 1.0 + np.max(np.abs(r), initial=0.0) + np.max(np.abs(fd), initial=0.0)
        np.testing.assert_allclose(c.imag / h, fd, atol=tol * scale)
        np.testing.assert_allclose(c.real, r, atol=1e-14 * scale)
    return zc


class _no_complex_warning:
    """Dropping an imaginary part anywhere is an error, as inside linearize."""

    def __enter__(self):
        import warnings
        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("error", ComplexWarning)

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


@pytest.mark.parametrize("build", [_planar, _spatial])
@pytest.mark.parametrize("seed", [1, 2])
def test_constraints_and_forces_by_complex_step_equal_central_differences(build, seed):
    m, loads = build()
    rng = np.random.default_rng(seed)
    q, v = _state(m, rng)
    dyn = ComplexDynamics(m, q, 0.3, loads)
    # Phi, J, Phi_t, gamma of every row
    out = _check(lambda q, v: m.constraints_py(q, v, 0.3), m, q, v, rng)
    assert all(np.iscomplexobj(x) for x in (out[0], out[1], out[3]))
    # each force element alone, and the whole Q (gravity, gyroscopic, elements, loads)
    for name, e in m.elements.items():
        Q = _check(lambda q, v, e=e: [dyn._element(e, q, v)], m, q, v, rng)[0]
        assert np.any(Q.imag != 0.0), name  # every element acts here
    _check(lambda q, v: [dyn.forces(q, v)], m, q, v, rng)
    assert not dyn.central  # nothing differenced (forces() used complex arithmetic)


def test_every_joint_kind_and_element_kind_is_covered():
    from blocks.multibody.joints import JOINTS
    kinds = {j.kind for build in (_planar, _spatial) for j in build()[0].joints.values()}
    assert kinds == set(JOINTS)
    elements = {type(e).__name__ for build in (_planar, _spatial)
                for e in build()[0].elements.values()}
    assert elements == {"PointToPoint", "Bushing", "SpherePlaneContact", "MarkerForce"}


def test_quaternion_matrix_keeps_the_imaginary_part():
    from blocks.multibody.geometry import quat_matrix
    p = quat_axis_angle((1.0, 2.0, 3.0), 0.7)
    dp = np.array([0.1, -0.2, 0.3, 0.05])
    h, d = 1e-20, 1e-6
    fd = (quat_matrix(p + d * dp) - quat_matrix(p - d * dp)) / (2 * d)
    np.testing.assert_allclose(quat_matrix(p + 1j * h * dp).imag / h, fd, atol=1e-9)
