"""The planar float paths (marker outputs, point forces) against the general Kin path."""

import numpy as np
import pytest

from blocks.multibody import Mechanism
from blocks.multibody.bodies import Kin, planar_point
from blocks.multibody.forces import apply_force


def _body():
    mech = Mechanism("m", dim=2, gravity=(0.0, -9.81))
    h = mech.add_body("b", mass=2.0, inertia=0.3, position=(0.4, -0.2), orientation=0.7)
    m = h.marker("p", (0.35, -0.12))
    mech.finalize()
    return mech, h.body, m


def test_planar_point_equals_the_general_point():
    mech, body, m = _body()
    rng = np.random.default_rng(1)
    for _ in range(20):
        q, v = rng.normal(size=mech.nq), rng.normal(size=mech.nv)
        p, J, pd, _ = Kin(body, q, v).point(m.s)
        iq, iv = body.iq, body.iv
        px, py, vx, vy = planar_point(*m.s.tolist(), *q[iq:iq + 3], *v[iv:iv + 3])
        assert np.allclose((px, py), p, rtol=0, atol=1e-14)
        assert np.allclose((vx, vy), pd, rtol=0, atol=1e-14)


def test_planar_point_force_equals_jacobian_transpose():
    mech, body, m = _body()
    rng = np.random.default_rng(2)
    for _ in range(20):
        q, v, F = rng.normal(size=mech.nq), rng.normal(size=mech.nv), rng.normal(size=2)
        k = Kin(body, q, v)
        _, J, _, _ = k.point(m.s)
        Q = np.zeros(mech.nv)
        apply_force(k, m, F, Q)
        ref = np.zeros(mech.nv)
        ref[k.cols] = J.T @ F
        assert np.allclose(Q, ref, rtol=0, atol=1e-14)


def test_marker_output_of_the_block_equals_the_general_point():
    from blocks.multibody import MultibodyBlock
    from cosim import DiagramBuilder
    mech, body, m = _body()
    b = DiagramBuilder("d")
    blk = b.add(MultibodyBlock("mb", mech, "lagrange", markers=["b.p"]))
    d = b.build()
    ctx = d.create_context()
    x = np.r_[np.array([0.1, 0.2, 1.3]), np.array([-0.4, 0.9, 2.1])]
    ctx.set_state(blk.x, x)
    p, pd = blk._marker_out(m)(ctx)
    ref_p, _, ref_pd, _ = Kin(body, x[:3], x[3:]).point(m.s)
    assert np.allclose(p, ref_p, atol=1e-14) and np.allclose(pd, ref_pd, atol=1e-14)


def _loaded_mechanism(seed):
    """1-3 planar bodies, point forces and torques at random markers (issue 30 corpus)."""
    rng = np.random.default_rng(seed)
    mech = Mechanism(f"m{seed}", dim=2, gravity=(0.0, -9.81))
    loads = {}
    for i in range(int(rng.integers(1, 4))):
        h = mech.add_body(f"b{i}", mass=float(rng.uniform(0.5, 5)),
                          inertia=float(rng.uniform(0.05, 1)),
                          position=tuple(rng.normal(size=2)), orientation=float(rng.normal()))
        for j in range(int(rng.integers(1, 3))):
            m = h.marker(f"p{j}", tuple(rng.normal(size=2)))
            kind = "force" if rng.random() < 0.7 else "torque"
            mech.add_load(f"l{i}{j}", m, kind)
            loads[f"l{i}{j}"] = (rng.normal(size=2) if kind == "force"
                                 else float(rng.normal()))
    mech.finalize()
    return mech, loads


def test_external_forces_of_planar_loads_equal_the_kin_path(monkeypatch):
    """Loads on planar bodies without force elements: the float path (no Kin) gives the
    general path's generalized forces bit for bit, and builds no Kin."""
    import blocks.multibody.mechanism as mm
    for seed in range(12):
        mech, loads = _loaded_mechanism(seed)
        rng = np.random.default_rng(100 + seed)
        for _ in range(5):
            q, v = rng.normal(size=mech.nq) * 3, rng.normal(size=mech.nv)
            ref = np.zeros(mech.nv)
            mech._elements_and_loads(mech.kins(q, v), 0.3, loads, None, ref)
            with monkeypatch.context() as m:
                m.setattr(mm._LazyKins, "__missing__",
                          lambda self, body: pytest.fail("a Kin was built"))
                got = mech.external_forces(q, v, 0.3, loads)
            assert isinstance(got, np.ndarray) and got.dtype == float
            assert np.array_equal(got, ref), seed
