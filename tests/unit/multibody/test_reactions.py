"""Reaction outputs: what the joint applies to body j (statics pins the convention)."""

import numpy as np

from blocks.multibody import Mechanism, MultibodyBlock
from cosim import DiagramBuilder, Simulator


def test_a_hanging_body_is_held_up_by_its_pin():
    m = Mechanism("hang", dim=2, gravity=(0, -9.81))
    bob = m.add_body("bob", 2.0, 0.1, (0.0, -1.0))  # centre of mass 1 m below the pin
    bob.marker("pin", (0.0, 1.0))
    m.add_joint("revolute", "pin", m.ground.marker("O"), bob.marker("pin"))
    b = DiagramBuilder("d")
    blk = b.add(MultibodyBlock("mb", m, "lagrange", reactions=["pin"]))
    b.export_output(blk.output("pin_reaction"), "F")
    res = Simulator(b.build(), solver="rk4", dt=1e-3).run(0.01)
    np.testing.assert_allclose(res["d.F"][0], [0.0, 2.0 * 9.81], atol=1e-9)
