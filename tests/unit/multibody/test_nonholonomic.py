"""Knife edge (no side slip): velocity-level constraint, checked two ways."""

import numpy as np
import pytest

from blocks.multibody import Mechanism, MultibodyBlock
from blocks.multibody.analysis import linearize
from cosim import DiagramBuilder, Simulator


def _skate(offset=0.0, u=1.0, w=0.5, dim=2):
    m = Mechanism("skate", dim=2)
    body = m.add_body("body", 3.0, 0.2, (0.0, 0.0), 0.0, velocity=(u, 0.0),
                      angular_velocity=w)
    body.marker("blade", (offset, 0.0))
    m.add_joint("knife_edge", "blade", "ground.O", "body.blade")
    return m


def test_gamma_is_minus_the_rate_of_the_constraint_along_the_motion():
    m = _skate(offset=0.3)
    m.finalize()
    rng = np.random.default_rng(3)
    q, v = m.q0 + rng.normal(size=3) * 0.3, rng.normal(size=3)
    _, J, _, gamma = m.constraints(q, v, 0.0)
    h = 1e-5
    rate = (m.constraints(q + h * m.qdot(q, v), v, 0.0)[1] @ v
            - m.constraints(q - h * m.qdot(q, v), v, 0.0)[1] @ v) / (2 * h)
    np.testing.assert_allclose(gamma, -rate, atol=1e-7)
    assert m.assemble()["dof"] == 2 and not m.holonomic.any()


def test_skate_with_the_blade_at_the_centre_runs_on_a_circle():
    """No forces, blade at the CM: forward speed u and yaw rate w stay, radius u / w."""
    b = DiagramBuilder("d")
    blk = b.add(MultibodyBlock("s", _skate(), "lagrange", markers=["body.cm"]))
    b.export_output(blk.output("body_cm_pos"), "P")
    b.export_output(blk.output("v"), "v")
    res = Simulator(b.build(), solver="rk4", dt=1e-3).run(10.0)
    P, v = res["d.P"], res["d.v"]
    centre = np.array([0.0, 2.0])  # starts at the origin heading +x, turning left
    np.testing.assert_allclose(np.linalg.norm(P - centre, axis=1), 2.0, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(v[:, :2], axis=1), 1.0, atol=1e-10)
    np.testing.assert_allclose(v[:, 2], 0.5, atol=1e-12)


def test_sleigh_linearization_keeps_positions_and_velocities_apart():
    """Chaplygin sleigh (blade behind the CM): 3 position, 2 velocity coordinates."""
    lin = linearize(_skate(offset=-0.4, u=1.0, w=0.0), v0=[1.0, 0.0, 0.0])
    assert lin["Nq"].shape == (3, 3) and lin["N"].shape == (3, 2)
    # straight motion with the blade behind the CM is stable: yaw rate decays
    # (eigenvalue -b m u / (J + m b^2) for offset b; Neimark & Fufaev)
    ev = lin["eigenvalues"]
    b, m_, J, u = 0.4, 3.0, 0.2, 1.0
    assert np.min(ev.real) == pytest.approx(-m_ * b * u / (J + m_ * b * b), rel=1e-5)
