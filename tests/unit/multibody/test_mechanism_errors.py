"""Bad input gets a clear error: what, where and what to do."""

import numpy as np
import pytest

from blocks.multibody import Mechanism, MultibodyBlock
from cosim import DiagramBuilder, Simulator
from cosim.errors import BuildError, StepError


def test_non_positive_mass_and_inertia():
    m = Mechanism("m", dim=2)
    with pytest.raises(BuildError, match="body 'a': mass must be positive"):
        m.add_body("a", 0.0, 1.0, (0, 0))
    with pytest.raises(BuildError, match="body 'b': moment of inertia must be positive.*"
                                         "add_particle"):
        m.add_body("b", 1.0, -1.0, (0, 0))
    s = Mechanism("s", dim=3)
    with pytest.raises(BuildError, match="triangle inequality"):
        s.add_body("c", 1.0, (1.0, 1.0, 3.0), (0, 0, 0))
    with pytest.raises(BuildError, match="positive definite"):
        s.add_body("d", 1.0, (1.0, 0.0, 1.0), (0, 0, 0))


def test_unknown_body_marker_joint_kind():
    m = Mechanism("m", dim=2)
    m.add_body("link", 1.0, 0.1, (0.5, 0))
    with pytest.raises(BuildError, match="body 'lnk' not found.*Did you mean 'link'"):
        m.add_joint("revolute", "j", "ground.O", "lnk.cm")
    with pytest.raises(BuildError, match="marker 'link.tip' not found; give its position"):
        m.add_joint("revolute", "j", "ground.O", "link.tip")
    with pytest.raises(BuildError, match="unknown joint kind 'revolut'.*Did you mean 'revolute'"):
        m.add_joint("revolut", "j", "ground.O", "link.cm")
    with pytest.raises(BuildError, match="both markers are on body 'link'"):
        m.add_joint("revolute", "j", "link.cm", "link.cm")
    with pytest.raises(BuildError, match="spherical.*not defined for planar"):
        m.add_joint("spherical", "j", "ground.O", "link.cm")


def _double_hinge():
    """A planar link hinged to ground twice at the same point: 2 redundant rows."""
    m = Mechanism("m", dim=2, gravity=(0, -9.81))
    link = m.add_body("link", 1.0, 0.1, (0.5, 0.0))
    link.marker("end", (-0.5, 0.0))
    m.add_joint("revolute", "hinge", "ground.O", "link.end")
    m.add_joint("revolute", "hinge2", "ground.O", "link.end")
    return m


@pytest.mark.parametrize("form", ["lagrange", "projection", "partitioning",
                                  "augmented_lagrangian"])
def test_redundant_constraints_are_named_and_handled(form):
    """Before issue 32 the index-1 formulations refused them at build; now every
    formulation runs them (independent rows, minimum-norm reactions: the two hinges share
    the load equally)."""
    m = _double_hinge()
    rep = m.assemble()
    assert rep["rank"] == 2 and rep["dof"] == 1
    assert rep["redundant"] == ["hinge2.point[0]", "hinge2.point[1]"]
    b = DiagramBuilder("d")
    opts = {"penalty": 1e5} if form == "augmented_lagrangian" else \
        {"project_every_s": 1e-3} if form in ("projection", "partitioning") else {}
    blk = b.add(MultibodyBlock("b", _double_hinge(), form, markers=["link.cm"],
                               reactions=["hinge", "hinge2"], **opts))
    b.export_output(blk.output("link_cm_pos"), "P")
    b.export_output(blk.output("hinge_reaction"), "R1")
    b.export_output(blk.output("hinge2_reaction"), "R2")
    res = Simulator(b.build(), solver="rk4", dt=1e-3).run(0.5)
    assert np.max(np.abs(np.linalg.norm(res["d.P"], axis=1) - 0.5)) < 1e-6
    assert np.max(np.abs(res["d.R1"] - res["d.R2"])) <= 1e-6 * np.max(np.abs(res["d.R1"]))
    assert np.max(np.abs(res["d.R1"])) > 1.0  # they carry the link


def test_inconsistent_initial_conditions_are_corrected_and_reported_or_refused():
    def mech():
        m = Mechanism("m", dim=2, gravity=(0, -9.81))
        bob = m.add_particle("bob", 1.0, (1.02, 0.0), velocity=(0.3, 0.0))
        m.add_joint("distance", "link", "ground.O", bob.marker("cm"), length=1.0)
        return m
    rep = mech().assemble()
    assert rep["position_residual"] == pytest.approx(1.02 ** 2 - 1.0)
    assert rep["position_change"] == pytest.approx(0.02, rel=1e-9)
    assert rep["velocity_change"] == pytest.approx(0.3, rel=1e-9)  # radial velocity removed
    with pytest.raises(BuildError, match="inconsistent initial conditions \\(position residual "
                                         "0.0404.*worst 'link.distance'"):
        MultibodyBlock("b", mech(), strict=True)


def test_conflicting_constraints_cannot_be_assembled():
    m = Mechanism("m", dim=2)
    bob = m.add_particle("bob", 1.0, (1.0, 0.0))
    m.add_joint("distance", "a", "ground.O", bob.marker("cm"), length=1.0)
    m.add_joint("distance", "b", "ground.O", bob.marker("cm"), length=2.0)
    with pytest.raises(BuildError, match="constraints cannot be satisfied.*conflicting"):
        m.assemble()


def test_singular_configuration_is_reported_during_the_run():
    """A particle held by two rods that are collinear at the start: J loses rank there.
    Assembly tells the dependence from a redundant one (a probe along the free
    direction: the rows do not stay dependent) and reports it as singular; the block's
    singular-position monitor stops the run at t = 0 (before issue 32 the block refused
    it at build as 'redundant')."""
    m = Mechanism("m", dim=2, gravity=(0.0, -9.81))
    bob = m.add_particle("bob", 1.0, (0.0, 0.0))
    m.ground.marker("L", (-1.0, 0.0))
    m.ground.marker("R", (1.0, 0.0))
    m.add_joint("distance", "left", "ground.L", bob.marker("cm"), length=1.0)
    m.add_joint("distance", "right", "ground.R", bob.marker("cm"), length=1.0)
    rep = m.assemble()
    assert rep["rank"] == 1 and rep["redundant"] == [] and rep["singular"] == ["right.distance"]
    assert rep["dof"] == 0
    b = DiagramBuilder("d")
    b.add(MultibodyBlock("b", m, "lagrange"))
    with pytest.raises(StepError, match=r"at t = 0 s: the constraint Jacobian lost rank.*1 rows "
                                        r"exactly dependent, 0 redundant at assembly.*"
                                        r"left.distance, right.distance.*Index3Stepper"):
        Simulator(b.build(), solver="rk4", dt=1e-3).run(1.0)


def test_singular_configuration_reached_during_a_run_is_reported():
    """A driven particle on a rod pushed to x = 1: rod and push become parallel at t = 0.5 s."""
    from blocks.multibody import driver
    m = Mechanism("m", dim=2)
    bob = m.add_particle("bob", 1.0, (0.5, 0.8660254037844386))
    m.add_joint("distance", "rod", "ground.O", bob.marker("cm"), length=1.0)
    m.add_joint("slide_driver", "push", "ground.O", bob.marker("cm"),
                fn=driver(lambda t: 0.5 + t, lambda t: 1.0, lambda t: 0.0))
    assert m.assemble()["dof"] == 0
    b = DiagramBuilder("d")
    b.add(MultibodyBlock("b", m, "lagrange"))
    with pytest.raises(StepError, match=r"mechanism 'm' at t = 0.50?\d* s: the constraint "
                                        r"Jacobian lost rank.*dependent rows: rod.distance, "
                                        r"push.slide\).*Index3Stepper"):
        Simulator(b.build(), solver="rk4", dt=1e-3).run(1.0)
