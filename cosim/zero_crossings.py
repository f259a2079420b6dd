"""The zero-crossing witnesses of a run and the rule that says which of them crossed.

The Simulator holds one :class:`ZeroCrossings` (the blocks' declared crossings); its
advancer (:mod:`cosim.advancer`) reads the witnesses at the end of a step, asks
:meth:`ZeroCrossings.crossed` and locates the first crossing inside the step; the
Simulator handles it (``Simulator.handle_event``) and tells :meth:`ZeroCrossings.after_event`.
"""

from __future__ import annotations

from typing import Any


class ZeroCrossings:
    """The declared zero crossings of a diagram's blocks (``Block.zero_crossings``) and
    the witnesses' values at the last major point or event."""

    def __init__(self, crossings: list) -> None:
        self.items = list(crossings)
        #: the witnesses at the last point (:meth:`set_previous`)
        self.previous: list[float] = []
        self._zero_after_event: set[int] = set()
        self._post_event = False

    def __bool__(self) -> bool:
        return bool(self.items)

    def __getitem__(self, i: int) -> Any:
        return self.items[i]

    def witnesses(self, ctx: Any) -> list[float]:
        """Every witness at ``ctx`` (outputs evaluated there first)."""
        return [float(z.witness(ctx)) for z in self.items]

    def witness(self, i: int, ctx: Any) -> float:
        return float(self.items[i].witness(ctx))

    def after_event(self) -> None:
        """An event handler ran: the next :meth:`set_previous` remembers the witnesses it
        left exactly on zero (see :meth:`crossed`)."""
        self._post_event = True

    def set_previous(self, g: list[float]) -> None:
        """The witnesses at the current point."""
        self.previous = g
        self._zero_after_event = {i for i, v in enumerate(g) if v == 0.0} \
            if self._post_event else set()
        self._post_event = False

    def crossed(self, g_new: list[float]) -> list[int]:
        """The witnesses that crossed zero in their direction from :attr:`previous` to
        ``g_new``.  A witness an event handler left exactly on zero (a ball reset onto the
        floor) counts when it ends on the crossing side: it left the surface and came back
        within the step, or went straight through it (``first_root`` tells which)."""
        out = []
        zero = self._zero_after_event
        for i, (a, b) in enumerate(zip(self.previous, g_new)):
            d = self.items[i].direction
            rising = a < 0.0 <= b or (a == 0.0 and b > 0.0 and i in zero)
            falling = a > 0.0 >= b or (a == 0.0 and b < 0.0 and i in zero)
            if (d >= 0 and rising) or (d <= 0 and falling):
                out.append(i)
        return out
