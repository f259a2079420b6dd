"""Helpers for testing blocks without the scheduler, and spy blocks for schedules.

>>> h = BlockHarness(Gain("g", 2.0))        # doctest: +SKIP
>>> h.set_input("u", 3.0)                    # doctest: +SKIP
>>> h.output("y")                            # doctest: +SKIP
6.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .block import Block
from .diagram import DiagramBuilder
from .params import NON_NEGATIVE, POSITIVE


class BlockHarness:
    """One block in a diagram of its own, every input exported; a context to poke.

    Outputs, derivatives and updates are computed by calling the block's own
    functions directly: no scheduler, no solver.
    """

    def __init__(self, block: Block) -> None:
        b = DiagramBuilder(f"harness_{block.name}")
        b.add(block)
        for p in block.inputs.values():
            b.export_input(p, p.name)
        self.block = block
        self.diagram = b.build()
        self.ctx = self.diagram.create_context()
        for p in self.diagram.inputs.values():
            self.ctx.fix_input(p, p.zero())

    def set_input(self, name: str, value: Any) -> BlockHarness:
        port = self.diagram.input(name)
        if port.shape == ():
            value = float(value)
        else:
            value = np.asarray(value, dtype=port.dtype)
        self.ctx.fix_input(port, value)
        return self

    def set_inputs(self, **values: Any) -> BlockHarness:
        for k, v in values.items():
            self.set_input(k, v)
        return self

    def set_time(self, t: float) -> BlockHarness:
        self.ctx.ticks = int(round(float(t) * 1e9))  # any time: blocks see ctx.time
        self.ctx.time = self.ctx.mode_time = float(t)
        return self

    def output(self, name: str) -> Any:
        return self.block.output(name).calc(self.ctx)

    def derivatives(self) -> np.ndarray:
        return np.atleast_1d(np.asarray(self.block.derivatives(self.ctx), dtype=float))

    def update(self) -> None:
        """Run every periodic-update handler of the block once."""
        for u in self.block.periodic_updates:
            if u.handler is not None:
                u.handler(self.ctx)

    def state(self, name: str | None = None) -> Any:
        hs = self.block.continuous_states + self.block.discrete_states
        h = hs[0] if name is None else next(x for x in hs if x.name == name)
        if h in self.block.continuous_states:
            return self.ctx.state(h)
        return self.ctx.discrete(h)

    def set_state(self, name: str, value: Any) -> None:
        for h in self.block.continuous_states:
            if h.name == name:
                self.ctx.set_state(h, value)
                return
        for h in self.block.discrete_states:
            if h.name == name:
                self.ctx.set_discrete(h, value)
                return
        raise KeyError(name)


class SpyBlock(Block):
    """Records when it is evaluated and updated: ``log`` of ``(kind, tick)``.

    Ports
    -----
    in   u   scalar (optional, ``with_input=True``), read by the update only
    out  y   scalar: a counter of updates (sampled if ``period_s`` is given)
    """

    argument_checks = {"period_s": POSITIVE, "offset_s": NON_NEGATIVE}

    def __init__(self, name: str, period_s: float | None = None, offset_s: float = 0.0,
                 with_input: bool = False, feedthrough: bool = False) -> None:
        super().__init__(name)
        self.log: list[tuple[str, int]] = []
        self.seen: list[tuple[int, float]] = []
        self.u = self.declare_input("u") if with_input else None
        self.count = self.declare_discrete_state("count", 0)
        deps = ("u",) if (with_input and feedthrough) else ()
        self.y = self.declare_output("y", self._y, depends_on=deps)
        if period_s is not None:
            self.declare_periodic_update(period_s, self._update, offset_s)

    def _y(self, ctx: Any) -> float:
        self.log.append(("output", ctx.ticks))
        v = float(ctx.discrete(self.count))
        if self.u is not None and self.y.depends_on:
            v += ctx.input(self.u)
        return v

    def _update(self, ctx: Any) -> None:
        self.log.append(("update", ctx.ticks))
        if self.u is not None:
            self.seen.append((ctx.ticks, ctx.input(self.u)))
        ctx.set_discrete(self.count, ctx.discrete(self.count) + 1)

    def ticks(self, kind: str = "update") -> list[int]:
        return [t for k, t in self.log if k == kind]
