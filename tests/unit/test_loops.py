"""Algebraic loops: solved by Newton (with diagnostics), exact when linear, errors otherwise."""

import math

import numpy as np
import pytest

from blocks.math import Gain, Sum
from blocks.sources import Constant
from cosim import DiagramBuilder, FunctionBlock, LoopOptions, Simulator
from cosim.errors import LoopConvergenceError


def _cos_loop(u=0.5):
    b = DiagramBuilder("loop")
    c = b.add(Constant("c", u))
    f = b.add(FunctionBlock("f", lambda u, y: math.cos(y) + u, inputs=["u", "fb"]))
    b.connect(c.y, f.in_ports[0])
    b.connect(f.out_ports[0], f.in_ports[1])
    return b.build()


def test_nonlinear_loop_is_solved_by_newton_with_diagnostics():
    sim = Simulator(_cos_loop(), record=["f.y"])
    y = sim.run(0.0)["f.y"][-1]
    assert abs(y - math.cos(y) - 0.5) < 1e-9
    diag = sim.diagnostics()["loops"][0]
    assert diag["loop"] == "f.y" and diag["iterations"] >= 2
    assert diag["last_residual"] < 1e-9


def test_fixed_point_method_also_converges():
    sim = Simulator(_cos_loop(), record=["f.y"], loop_options=LoopOptions(method="fixed_point"))
    y = sim.run(0.0)["f.y"][-1]
    assert abs(y - math.cos(y) - 0.5) < 1e-9


def test_linear_loop_among_linear_blocks_is_solved_exactly_by_fusion():
    b = DiagramBuilder("lin")
    c = b.add(Constant("c", 1.0))
    s = b.add(Sum("s", "+-"))
    g = b.add(Gain("g", 3.0))
    b.connect(c.y, s.ins[0])
    b.connect(s.y, g.u)
    b.connect(g.y, s.ins[1])
    d = b.build()
    sim = Simulator(d, record=["g.y"])
    # y = 3 (1 - y) -> y = 3/4; fixed-point iteration would diverge (gain 3)
    assert sim.run(0.0)["g.y"][-1] == pytest.approx(0.75, abs=1e-14)
    assert sim.diagnostics()["loops"] == []  # no iterative solver needed
    # unfused, Newton on the same loop
    sim2 = Simulator(d, record=["g.y"], fuse_linear=False)
    assert sim2.run(0.0)["g.y"][-1] == pytest.approx(0.75, abs=1e-9)


def test_loop_without_solution_reports_blocks_iterations_residual():
    b = DiagramBuilder("bad")
    f = b.add(FunctionBlock("f", lambda y: y + 1.0))
    b.connect(f.out_ports[0], f.in_ports[0])
    with pytest.raises(LoopConvergenceError) as ei:
        Simulator(b.build(), loop_options=LoopOptions(max_iter=20)).run(0.0)
    msg = str(ei.value)
    assert "algebraic loop f.y (blocks f) did not converge at t = 0 s" in msg
    assert "iterations" in msg and "residual 1" in msg


def test_user_jacobian_is_used():
    calls = []

    def jac(z):
        calls.append(1)
        return np.array([[-math.sin(z[0]) - 1.0]])
    sim = Simulator(_cos_loop(), record=["f.y"], loop_options=LoopOptions(jacobian=jac))
    y = sim.run(0.0)["f.y"][-1]
    assert abs(y - math.cos(y) - 0.5) < 1e-9 and calls
