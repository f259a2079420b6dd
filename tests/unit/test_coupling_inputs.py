"""Coupling inputs of a DiagramSubsystem in generated code (issue 30).

A scalar coupling input's linear case is written into the generated evaluation code
(``CouplingInput.inline_output``), the rest goes through ``CouplingInput._calc``.  Oracle:
``_calc`` itself, over a corpus of polynomial orders (0-3), scalar and vector inputs,
times within the step and snapshots/restores (the polynomial lives in ``ctx.xd``).
"""

from __future__ import annotations

import linecache

import numpy as np
import pytest

from cosim import DiagramBuilder, FunctionBlock
from cosim.subsystem import DiagramSubsystem


def _sub():
    b = DiagramBuilder("pass")
    f = b.add(FunctionBlock("f", lambda a, v: (a * 1.0, v * 1.0), inputs=["a", "v"],
                            outputs=["ya", "yv"]))
    b.export_input(f.in_ports[0], "a")
    b.export_input(f.in_ports[1], "v")
    b.export_output(f.out_ports[0], "ya")
    b.export_output(f.out_ports[1], "yv")
    sub = DiagramSubsystem(b.build(), solver="rk4", dt=1e-3)
    sub.initialize(0)
    return sub


def test_the_linear_case_of_a_scalar_input_is_inline():
    sub = _sub()
    drv = sub._drivers["a"]
    assert drv.xd_index is not None
    expr = drv.inline_output(drv.y, lambda obj: "_x", sub.wrapper.compile())
    assert expr is not None and "ctx.xd[" in expr
    sub.set_inputs(0.0, {"a": (1.0, 2.0), "v": (3.0,)})
    sub.refresh_outputs()
    fn = sub.sim.program.outputs
    code = "".join(linecache.getlines(fn.__code__.co_filename))
    assert f"ctx.xd[{drv.xd_index}]" in code


@pytest.mark.parametrize("order", [0, 1, 2, 3])
def test_generated_inputs_equal_calc(order):
    sub = _sub()
    rng = np.random.default_rng(order)
    ctx = sub.ctx
    for k in range(6):
        t0 = k * 1e-3
        coeffs = tuple(float(c) for c in rng.normal(size=order + 1) * 10.0 ** rng.integers(-3, 4))
        sub.set_inputs(t0, {"a": coeffs, "v": coeffs[:1]})
        snap = sub.save_state()
        for tau in (0.0, 3.7e-4, 1e-3):
            ctx.time = t0 + tau
            sub.sim.program.evaluate(sub.sim.ctx, sub.sim.program.outputs)
            out = sub.get_outputs()
            assert out["ya"] == sub._drivers["a"]._calc(ctx) * 1.0
            assert out["yv"] == sub._drivers["v"]._calc(ctx) * 1.0
        sub.set_inputs(t0, {"a": (0.0, 0.0), "v": (0.0,)})
        sub.restore_state(snap)
        ctx.time = t0 + 5e-4
        sub.sim.program.evaluate(sub.sim.ctx, sub.sim.program.outputs)
        assert sub.get_outputs()["ya"] == sub._drivers["a"]._calc(ctx) * 1.0


def test_vector_inputs_still_go_through_calc():
    b = DiagramBuilder("vec")
    f = b.add(FunctionBlock("f", lambda a: a * 2.0, inputs=[{"name": "a", "shape": 3}],
                            outputs=[{"name": "y", "shape": 3}]))
    b.export_input(f.in_ports[0], "a")
    b.export_output(f.out_ports[0], "y")
    sub = DiagramSubsystem(b.build(), solver="rk4", dt=1e-3)
    sub.initialize(0)
    drv = sub._drivers["a"]
    assert drv.inline_output(drv.y, lambda obj: "_x", sub.wrapper.compile()) is None
    c = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]])
    sub.set_inputs(0.0, {"a": c})
    sub.ctx.time = 4e-4
    sub.sim.program.evaluate(sub.sim.ctx, sub.sim.program.outputs)
    assert np.array_equal(sub.get_outputs()["y"], drv._calc(sub.ctx) * 2.0)
