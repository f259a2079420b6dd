"""Small fused groups of scalar outputs in the Python loop: written out as float arithmetic
(:meth:`cosim.evaluator.Evaluator._emit_scalar_rows`), in the C's order of operations.

The class: stateless linear networks between other blocks (sums with any signs, gains of
awkward values, constants feeding them, chains of them into each other), generated with
seeds, under each fixed-step solver.  Oracle: the compiled loop, which writes each row as
``c0 * s[a] + c1 * s[b] [+ f]``; the Python loop must now equal it bit for bit (NumPy's
``D @ v`` only agreed to rounding).
Groups larger than :data:`~cosim.evaluator.SCALAR_GROUP_MAX` keep the product.
"""

from __future__ import annotations

import linecache
import shutil

import numpy as np
import pytest

import blocks as bl
from cosim import DiagramBuilder, Simulator
from cosim import evaluator as ev_mod

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

#: gains that round differently in different orders of summation
AWKWARD = (1 / 3, 0.1, -2.7e-3, 7.25, -1 / 7, 1e5 / 3, -0.3, 2.0 ** -30, 1.0, -1.0)


def _network(seed: int):
    """Sources -> layers of sums and gains (fused groups) -> a nonlinear block between
    layers (so there are several groups) -> saturations that never limit (readers of the
    groups' outputs that are not fused)."""
    rng = np.random.default_rng(seed)
    b = DiagramBuilder(f"net{seed}")
    sigs = []
    for i in range(int(rng.integers(2, 5))):
        src = b.add(bl.Sine(f"sin{i}", amplitude=float(rng.uniform(0.5, 3.0)),
                            frequency_hz=float(rng.uniform(0.5, 5.0)),
                            phase_rad=float(rng.uniform(0, 3))))
        sigs.append(src.y)
    if rng.random() < 0.6:
        c = b.add(bl.Constant("c0", float(rng.choice(AWKWARD))))
        sigs.append(c.y)
    for layer in range(int(rng.integers(1, 4))):
        new = []
        for j in range(int(rng.integers(1, 4))):
            n = int(rng.integers(2, min(4, len(sigs)) + 1))
            pick = rng.choice(len(sigs), size=n, replace=False)
            signs = "".join(rng.choice(["+", "-"]) for _ in range(n))
            s = b.add(bl.Sum(f"sum{layer}_{j}", signs))
            for k, p in enumerate(pick):
                g = b.add(bl.Gain(f"g{layer}_{j}_{k}", float(rng.choice(AWKWARD))))
                b.connect(sigs[int(p)], g.u)
                b.connect(g.y, s.ins[k])
            new.append(s.y)
        if rng.random() < 0.5:  # a nonlinear block: the next layer is another group
            sat = b.add(bl.Saturation(f"sat{layer}", -2.0, 2.0))
            b.connect(new[0], sat.u)
            new[0] = sat.y
        sigs = sigs + new
    for i, y in enumerate(sigs[-3:]):  # the network's ends, read by a nonlinear block
        lim = b.add(bl.Saturation(f"lim{i}", -1e9, 1e9))
        b.connect(y, lim.u)
    return b.build()


def _generated_evaluate_sources(since: int) -> str:
    return "".join("".join(v[2]) for k, v in linecache.cache.items()
                   if isinstance(k, str) and k.startswith("<cosim-generated-")
                   and int(k.split("-")[2]) >= since and k.endswith("-evaluate>"))


@pytest.mark.parametrize("seed", range(16))
def test_scalar_groups_equal_the_compiled_loop_bit_for_bit(seed):
    solver = ["rk4", "heun", "midpoint", "euler"][seed % 4]
    first = next(ev_mod._counter)
    py = Simulator(_network(seed), solver=solver, dt=1e-3, compiled=False).run(0.3)
    src = _generated_evaluate_sources(first)
    assert " * s[" in src  # the corpus fuses groups of scalar outputs ...
    assert "@ _v" not in src  # ... all small: written out, no product
    c = Simulator(_network(seed), solver=solver, dt=1e-3, compiled=True).run(0.3)
    assert np.array_equal(py.time, c.time)
    for k in py.signals:
        assert np.array_equal(np.asarray(py[k]), np.asarray(c[k])), (seed, k)


def test_a_group_above_the_limit_keeps_the_product(monkeypatch):
    """With the limit at 0 every group takes NumPy's product (and stays within rounding of
    the C); the default writes the same diagram out."""
    monkeypatch.setattr(ev_mod, "SCALAR_GROUP_MAX", 0)
    first = next(ev_mod._counter)
    py = Simulator(_network(3), solver="rk4", dt=1e-3, compiled=False).run(0.3)
    assert "@ _v" in _generated_evaluate_sources(first)
    c = Simulator(_network(3), solver="rk4", dt=1e-3, compiled=True).run(0.3)
    for k in py.signals:
        a, b = np.asarray(py[k], dtype=float), np.asarray(c[k], dtype=float)
        assert np.max(np.abs(a - b), initial=0.0) <= 1e-12 * max(np.max(np.abs(a)), 1e-300)
