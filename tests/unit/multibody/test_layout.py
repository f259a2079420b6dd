"""Mechanism.layout(): which entries of q and v belong to which body (issue 24, item 6)."""

import numpy as np

from blocks.multibody import Mechanism


def test_layout_names_every_entry_of_q_and_v():
    m = Mechanism("m", dim=3)
    m.add_particle("p", 1.0, (1.0, 2.0, 3.0), velocity=(0.1, 0.2, 0.3))
    m.add_body("s", 2.0, (1.0, 1.0, 1.0), (4.0, 5.0, 6.0), ((0.0, 0.0, 1.0), 0.5),
               angular_velocity=(0.0, 0.0, 2.0))
    lay = m.layout()
    assert list(lay) == ["p", "s"]  # the order the bodies were added, ground excluded
    assert lay["p"]["q"] == slice(0, 3) and lay["p"]["v"] == slice(0, 3)
    assert lay["s"]["q"] == slice(3, 10) and lay["s"]["v"] == slice(3, 9)
    assert lay["s"]["q_names"][3:] == ("e0", "e1", "e2", "e3")
    np.testing.assert_allclose(m.q0[lay["s"]["q"]][:3], (4.0, 5.0, 6.0))
    np.testing.assert_allclose(m.q0[lay["s"]["q"]][3:], (np.cos(0.25), 0, 0, np.sin(0.25)))
    np.testing.assert_allclose(m.v0[lay["p"]["v"]], (0.1, 0.2, 0.3))
    np.testing.assert_allclose(m.v0[lay["s"]["v"]][3:], (0.0, 0.0, 2.0))  # body frame
    covered = sorted(i for d in lay.values() for i in range(d["q"].start, d["q"].stop))
    assert covered == list(range(m.nq))


def test_planar_layout():
    m = Mechanism("m", dim=2)
    m.add_body("b", 1.0, 0.1, (1.0, 2.0), 0.7, velocity=(3.0, 4.0), angular_velocity=5.0)
    lay = m.layout()["b"]
    assert lay["kind"] == "planar" and lay["q_names"] == ("x", "y", "theta")
    assert lay["v_names"] == ("vx", "vy", "w")
    np.testing.assert_allclose(m.q0[lay["q"]], (1.0, 2.0, 0.7))
    np.testing.assert_allclose(m.v0[lay["v"]], (3.0, 4.0, 5.0))
