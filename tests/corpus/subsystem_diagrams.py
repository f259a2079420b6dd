"""Random chains of core blocks for generated co-simulation subsystems (the compiled and held
subsystem tests)."""

from __future__ import annotations

import math

import blocks as bl
from cosim import DiagramBuilder, FunctionBlock


def random_chain(b, rng, prev, micro: float | None = None):
    """1-4 random blocks after the output ``prev`` in builder ``b``: saturations, squares,
    a sine added, first-order lags, and with a step ``micro`` also zero-order holds and unit
    delays sampled every 1-3 steps; returns the last output."""
    kinds = 4 if micro is None else 6
    for k in range(int(rng.integers(1, 5 if micro is not None else 4))):
        kind = int(rng.integers(0, kinds))
        if kind == 0:
            blk = b.add(bl.Saturation(f"s{k}", -float(rng.uniform(0.5, 3)),
                                      float(rng.uniform(0.5, 3))))
            b.connect(prev, blk.u)
        elif kind == 1:
            blk = b.add(bl.Product(f"p{k}", "**"))
            b.connect(prev, blk.input("u0"))
            b.connect(prev, blk.input("u1"))
        elif kind == 2:
            src = b.add(bl.Sine(f"w{k}", float(rng.uniform(0.1, 1)), float(rng.uniform(0.5, 3))))
            blk = b.add(bl.Sum(f"a{k}", "+-"))
            b.connect(prev, blk.input("u0"))
            b.connect(src.y, blk.input("u1"))
        elif kind == 3:
            blk = b.add(bl.FirstOrderLag(f"l{k}", float(rng.uniform(0.02, 0.5))))
            b.connect(prev, blk.u)
        elif kind == 4:
            blk = b.add(bl.ZeroOrderHold(f"z{k}", micro * int(rng.integers(1, 4))))
            b.connect(prev, blk.u)
        else:
            blk = b.add(bl.UnitDelay(f"d{k}", micro * int(rng.integers(1, 4))))
            b.connect(prev, blk.u)
        prev = blk.y
    return prev


class _Opaque:
    """A callable the C generator cannot translate (no C form: the block stays in Python)."""

    def __init__(self, k: float) -> None:
        self.k = k

    def __call__(self, u: float) -> float:
        return self.k * u - 0.1 * u ** 3


def sub_diagram(rng, name: str, feed: bool, micro: float, python_block: bool = False):
    """``u -> (random blocks) -> x`` (a state, damped, with a second input ``v``) and, with
    ``feed``, ``f = k u + x`` (a feedthrough output); ``python_block``: a FunctionBlock without
    a C form in the chain (the subsystem's Simulator then runs in Python, or calls it back)."""
    b = DiagramBuilder(name)
    first = b.add(bl.Gain("g0", float(rng.uniform(-2.0, 2.0))))
    b.export_input(first.u, "u")
    v = b.add(bl.Gain("gv", float(rng.uniform(-1.0, 1.0))))
    b.export_input(v.u, "v")
    prev = random_chain(b, rng, first.y, micro)
    if python_block:
        fb = b.add(FunctionBlock("opaque", _Opaque(float(rng.uniform(0.5, 1.5))), ["u"], ["y"]))
        b.connect(prev, fb.input("u"))
        prev = fb.output("y")
    damp = b.add(bl.Sum("damp", "+-+"))
    integ = b.add(bl.Integrator("x", float(rng.uniform(-1, 1))))
    b.connect(prev, damp.input("u0"))
    b.connect(integ.y, damp.input("u1"))
    b.connect(v.y, damp.input("u2"))
    b.connect(damp.y, integ.u)
    b.export_output(integ.y, "x")
    if feed:  # a direct path from the input to an output
        k = b.add(bl.Gain("k", float(rng.uniform(-1.0, 1.0))))
        f = b.add(bl.Sum("f", "++"))
        b.connect(first.y, k.u)
        b.connect(k.y, f.input("u0"))
        b.connect(integ.y, f.input("u1"))
        b.export_output(f.y, "f")
    return b.build()


def sqrt_diagram():
    """``x' = -0.5``, ``y = sqrt(x) + v``: the square root's argument turns negative at 2 s
    (a subsystem whose step fails there, in C and in Python)."""
    b = DiagramBuilder("w")
    src = b.add(bl.Constant("c", -0.5))
    i = b.add(bl.Integrator("x", 1.0))
    fb = b.add(FunctionBlock("r", lambda u, v: math.sqrt(u) + v, ["u", "v"], ["y"]))
    b.connect(src.y, i.u)
    b.connect(i.y, fb.input("u"))
    b.export_input(fb.input("v"), "v")
    b.export_output(fb.output("y"), "y")
    return b.build()
