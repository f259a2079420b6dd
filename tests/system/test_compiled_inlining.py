"""A FunctionBlock's C function shared by few blocks is left to the compiler to inline, one
shared by many keeps one copy (:data:`cosim.codegen.csource.INLINE_USES_MAX`); either way
the compiled run equals the Python loop bit for bit (inlining changes no operation; linear
blocks unfused, as the Python loop's fused groups sum in another order)."""

from __future__ import annotations

import math
import re
import shutil

import numpy as np
import pytest

from blocks import Integrator, Sine
from cosim import DiagramBuilder, FunctionBlock, Simulator
from cosim.codegen import cache, csource

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler")


def _chain(n: int):
    b = DiagramBuilder(f"chain{n}")
    prev = b.add(Sine("src", 1.0, 3.0)).y
    for i in range(n):
        fb = b.add(FunctionBlock(f"f{i}", lambda y: math.tanh(1.05 * y) + 0.01 * y * y))
        b.connect(prev, fb.in_ports[0])
        prev = fb.out_ports[0]
    z = b.add(Integrator("z"))
    b.connect(prev, z.u)
    return b.build(), [prev, z.y]


@pytest.mark.parametrize("n, inlined", [(3, True), (csource.INLINE_USES_MAX, True),
                                        (csource.INLINE_USES_MAX + 1, False)])
def test_shared_functions_inlined_by_their_blocks_count(n, inlined, monkeypatch):
    sources = []
    build = cache.shared_library

    def spy(stem, source, flags, who):
        sources.append(source)
        return build(stem, source, flags, who)

    monkeypatch.setattr(cache, "shared_library", spy)
    runs = []
    for compiled in (False, True):
        d, rec = _chain(n)
        runs.append(Simulator(d, solver="rk4", dt=1e-3, record=rec, compiled=compiled,
                              fuse_linear=False).run(0.05))
    py, c = runs
    assert c.diagnostics["compiled"] is True
    fns = [src for src in sources if "cosim_pyfn_" in src]
    assert fns, "the chain's C was built in this test"
    decl = re.findall(r"static (COSIM_NOINLINE )?int cosim_pyfn_\w+\(", fns[-1])
    assert decl == ["" if inlined else "COSIM_NOINLINE "]
    for k in py.signals:
        assert np.array_equal(py[k], c[k]), k
