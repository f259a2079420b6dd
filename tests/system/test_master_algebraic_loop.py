"""An algebraic loop across subsystems: both outputs have direct feedthrough.

A:  xa' = -xa + ua,   ya = xa + ka ua
B:  xb' = -xb + 1,    yb = xb + kb ub,     ua = yb, ub = ya

so at every communication point ``ya = (xa + ka xb) / (1 - ka kb)``.  With
``ka kb = -3`` plain sweeps diverge (loop gain 3); Newton with the
subsystems' output Jacobians (exact here, the feedthrough is linear) needs two
evaluations, Broyden a few more.  The co-simulation is checked against the
monolithic diagram, whose loop the core engine solves.
"""

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.math import Gain, Sum
from blocks.sources import Constant
from cosim import DiagramBuilder, Jacobi, MasterScheduler, Simulator
from cosim.errors import BuildError
from cosim.subsystem import DiagramSubsystem

KA, KB = 2.0, -1.5


def _a(b):
    u = b.add(Gain("ua", 1.0))
    lag = b.add(Sum("lag", "+-"))
    xa = b.add(Integrator("xa", 1.0))
    ka = b.add(Gain("ka", KA))
    ya = b.add(Sum("ya", "++"))
    b.connect(u.y, lag.ins[0])
    b.connect(xa.y, lag.ins[1])
    b.connect(lag.y, xa.u)
    b.connect(u.y, ka.u)
    b.connect(xa.y, ya.ins[0])
    b.connect(ka.y, ya.ins[1])
    return u.u, ya.y, xa.y


def _b(b):
    one = b.add(Constant("one", 1.0))
    lag = b.add(Sum("lagb", "+-"))
    xb = b.add(Integrator("xb", 0.0))
    kb = b.add(Gain("kb", KB))
    yb = b.add(Sum("yb", "++"))
    b.connect(one.y, lag.ins[0])
    b.connect(xb.y, lag.ins[1])
    b.connect(lag.y, xb.u)
    b.connect(xb.y, yb.ins[0])
    b.connect(kb.y, yb.ins[1])
    return kb.u, yb.y, xb.y


def _sub(name, build):
    b = DiagramBuilder(name)
    u, y, x = build(b)
    b.export_input(u, "u")
    b.export_output(y, "y")
    b.export_output(x, "x")
    return DiagramSubsystem(b.build(), solver="rk4", dt=1e-4)


def _master(loop_solver):
    return MasterScheduler([_sub("A", _a), _sub("B", _b)], [("A.y", "B.u"), ("B.y", "A.u")],
                           1e-3, coupling=Jacobi(), extrapolation=2, loop_solver=loop_solver)


def _monolithic():
    b = DiagramBuilder("AB")
    ua, ya, _ = _a(b)
    ub, yb, _ = _b(b)
    b.connect(ya, ub)
    b.connect(yb, ua)
    b.export_output(ya, "ya")
    b.export_output(yb, "yb")
    return Simulator(b.build(), solver="rk4", dt=1e-4).run(1.0)


@pytest.mark.parametrize("solver", ["newton", "broyden"])
def test_loop_across_subsystems_is_solved_at_every_communication_point(solver):
    res = _master(solver).run(1.0)
    ya, yb = res["A.y"], res["B.y"]
    # the loop holds at every point, with the states each subsystem published
    xa, xb = res["A.x"], res["B.x"]
    np.testing.assert_allclose(ya, (xa + KA * xb) / (1 - KA * KB), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(yb, (xb + KB * xa) / (1 - KA * KB), rtol=1e-9, atol=1e-12)
    mono = _monolithic()
    np.testing.assert_allclose(ya, mono["AB.ya"][::10], atol=1e-6)
    np.testing.assert_allclose(yb, mono["AB.yb"][::10], atol=1e-6)
    d = res.diagnostics
    # the start, every communication point, and the 2 points of each start-up sweep
    assert d["startup_sweeps"] >= 2
    assert d["loop_solves"] == 1 + 998 + 2 * d["startup_sweeps"]
    if solver == "newton":
        # linear feedthrough: one Newton step (evaluate, step, evaluate); the finite-
        # difference Jacobian is exact to ~1e-8, so a far-off start needs one more
        assert d["loop_evaluations_per_solve"] * 1001 <= 2 * 1001 + 1


def test_fixed_point_sweeps_diverge_with_loop_gain_above_one():
    with pytest.raises(BuildError, match="algebraic loop"):
        _master("fixed_point").run(0.01)


def test_output_jacobian_of_a_diagram_subsystem():
    a = _sub("A", _a)
    a.initialize(0)
    jac = a.output_jacobian()
    assert list(jac) == [("y", "u")]  # x has no feedthrough
    assert jac[("y", "u")] == pytest.approx(np.array([[KA]]), rel=1e-6)


def test_a_master_with_no_connections_runs():
    """A lone subsystem (e.g. an FMU with outputs only): nothing to couple or settle."""
    from blocks.sources import Sine
    from cosim import DiagramBuilder, DiagramSubsystem, MasterScheduler
    b = DiagramBuilder("src")
    s = b.add(Sine("s", 1.0, 1.0))
    b.export_output(s.y, "y")
    res = MasterScheduler([DiagramSubsystem(b.build(), solver="rk4", dt=1e-3)], [],
                          1e-3).run(0.01)
    import math
    assert res["src.y"][-1] == pytest.approx(math.sin(2 * math.pi * 0.01), rel=1e-12)
