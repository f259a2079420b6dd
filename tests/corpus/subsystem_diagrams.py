"""Random chains of core blocks for generated co-simulation subsystems (the compiled and held
subsystem tests)."""

from __future__ import annotations

import blocks as bl


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
