"""Write hooks: overrides, scripted scenarios and fault injection.

A :class:`Manipulator` may (a) declare *overrides*: functions
``value = f(ctx, computed)`` applied to an output port right after the port is
computed, compiled into the evaluation code so that downstream blocks see the
manipulated value in the same evaluation; (b) act at given instants
(``breakpoints``): the integrator stops exactly there and
:meth:`Manipulator.at_time` runs (set parameters, change states).  Observers
read, manipulators write: the two interfaces are separate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .time import to_ticks


class Manipulator:
    """Base class of write hooks."""

    def overrides(self, sim: Any) -> dict:
        """``{output_port: f(ctx, computed_value) -> value}`` compiled into evaluation.

        A block whose output is overridden is not fused with other linear blocks,
        so that every reader sees the overridden value.
        """
        return {}

    def breakpoints(self) -> list[int]:
        """Instants (ticks) where :meth:`at_time` must run."""
        return []

    def at_time(self, sim: Any, ticks: int) -> None:
        """Act at a breakpoint (before outputs are evaluated there)."""


def _port(sim: Any, port: Any) -> Any:
    from .observers import resolve_ports
    return resolve_ports(sim.diagram, [port])[0]


class Override(Manipulator):
    """Replace an output by ``value`` (a constant or ``f(t, computed)``) in a time window.

    Parameters
    ----------
    port : output port or path
    value : float, array or callable ``f(t, computed) -> value``
    start_s, stop_s : float, optional
        Active for ``start_s <= t < stop_s``; both ends are breakpoints so the
        integrator does not step across the switch.
    """

    def __init__(self, port: Any, value: Any, start_s: float | None = None,
                 stop_s: float | None = None) -> None:
        self.port = port
        self.value = value
        self.start = -np.inf if start_s is None else float(start_s)
        self.stop = np.inf if stop_s is None else float(stop_s)
        self._bp = [to_ticks(t, "override time") for t in (start_s, stop_s) if t is not None]

    def breakpoints(self) -> list[int]:
        return self._bp

    def transform(self, t: float, computed: Any) -> Any:
        return self.value(t, computed) if callable(self.value) else self.value

    def overrides(self, sim: Any) -> dict:
        start, stop, fn = self.start, self.stop, self.transform

        def apply(ctx: Any, computed: Any) -> Any:
            # the window is chosen at ctx.mode_time (start of the integration interval)
            # so a step ending at a switching instant sees the value before the switch
            t = ctx.mode_time
            if start <= t + 1e-12 and t + 1e-12 < stop:
                return fn(ctx.time, computed)
            return computed
        return {_port(sim, self.port): apply}


class StuckAt(Override):
    """Fault: the signal freezes at ``value`` (sensor stuck) from ``start_s``."""


class Offset(Override):
    """Fault: a constant bias added to the signal."""

    def __init__(self, port: Any, offset: float, start_s=None, stop_s=None) -> None:
        super().__init__(port, lambda t, v: v + offset, start_s, stop_s)


class Scale(Override):
    """Fault: the signal is multiplied by ``gain`` (e.g. a degraded actuator)."""

    def __init__(self, port: Any, gain: float, start_s=None, stop_s=None) -> None:
        super().__init__(port, lambda t, v: v * gain, start_s, stop_s)


class Noise(Override):
    """Fault: additive Gaussian noise with standard deviation ``std`` (seeded)."""

    def __init__(self, port: Any, std: float, seed: int = 0, start_s=None, stop_s=None) -> None:
        rng = np.random.default_rng(seed)
        super().__init__(port, lambda t, v: v + std * rng.standard_normal(np.shape(v)),
                         start_s, stop_s)


class Scenario(Manipulator):
    """Scripted actions at given times: ``[(t_s, action(sim)), ...]``.

    Actions receive the simulator and may call ``sim.ctx.set_param(...)``,
    ``sim.ctx.set_state(...)``, ``sim.ctx.set_discrete(...)``.
    """

    def __init__(self, actions: Iterable[tuple[float, Callable[[Any], None]]]) -> None:
        self.actions = sorted(((to_ticks(t, "scenario time"), a) for t, a in actions),
                              key=lambda ta: ta[0])

    def breakpoints(self) -> list[int]:
        return [t for t, _ in self.actions]

    def at_time(self, sim: Any, ticks: int) -> None:
        for t, action in self.actions:
            if t == ticks:
                action(sim)
