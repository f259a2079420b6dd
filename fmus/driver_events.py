"""Event Mode in an FMU driver: :class:`EventModeDriver`, the layer Model Exchange
(FMI 2 and 3) and Co-Simulation (FMI 3 with ``eventModeUsed``) share.

Entering Event Mode and iterating the discrete updates to a fixed point
(``fmi2NewDiscreteStates`` / ``fmi3UpdateDiscreteStates``).
"""

from __future__ import annotations

from .driver_base import Driver
from .errors import FMUCallError

__all__ = ["EventModeDriver"]


class EventModeDriver(Driver):
    """The Event Mode calls (a :class:`~fmus.driver_base.Driver` of an interface with an
    Event Mode; FMI 2 Co-Simulation has none: its calls then fail as FMI errors)."""

    def enter_event_mode(self) -> None:
        self._call("enterEventMode")

    def update_discrete(self) -> tuple:
        """One event iteration: ``(again, terminate, nominals_changed, values_changed,
        next_event_defined, next_event_time)``."""
        return tuple(self._call(self.calls.UPDATE_DISCRETE))

    def event_iteration(self, max_iter: int = 1000) -> tuple:
        """Iterate discrete updates to a fixed point (already in event mode); returns
        ``(terminate, values_changed, next_event_time or None)``."""
        changed = False
        for _ in range(max_iter):
            again, term, _nom, vals, defined, t_next = self.update_discrete()
            changed = changed or bool(vals)
            if term:
                return True, changed, None
            if not again:
                return False, changed, (float(t_next) if defined else None)
        raise FMUCallError(f"{self.label}: the event iteration at t = {self.time} s did not "
                           f"converge in {max_iter} rounds (newDiscreteStatesNeeded stays "
                           "true)", "newDiscreteStates", "error", self.time,
                           list(self.messages))
