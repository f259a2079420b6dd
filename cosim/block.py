"""The block protocol: everything declared up front in the constructor.

A block is configuration plus pure functions.  In ``__init__`` it declares its
ports (shape, dtype, unit), which inputs each output reads (``depends_on``, the
feedthrough), its continuous and discrete states, its parameters, its periodic
updates, its zero-crossing events and its time events.  All mutable data lives
in a :class:`~cosim.context.Context`; a block never changes during a run.

Implementers' checklist
-----------------------
1. Call ``super().__init__(name)`` first.
2. Declare inputs with :meth:`Block.declare_input` and keep the handles.
3. Declare outputs with :meth:`Block.declare_output`, a ``calc(ctx)`` function
   and ``depends_on`` listing only the inputs the output reads directly
   (``depends_on=()`` for outputs computed from state alone).
4. Declare continuous states and implement :meth:`Block.derivatives`.
5. Declare discrete states and periodic updates whose handlers write them with
   ``ctx.set_discrete``.  Outputs of a block that has periodic updates and no
   continuous state are *sampled*: computed at its sample hits and held in
   between.
6. Linear time-invariant blocks may implement :meth:`Block.linear_model`;
   the compiler then fuses connected linear blocks into one state-space update.
7. Write a docstring with a Ports table and the equations.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import BuildError, ParameterError, PortError, RateError
from .params import checked_init, parameter_kind, show
from .ports import InputPort, OutputGroup, OutputPort
from .time import to_ticks

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ALL = None  # depends_on=ALL: the output reads every input (the conservative default)


def check_name(name: str, what: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise BuildError(
            f"invalid {what} name {name!r}: use letters, digits and '_' and start with a "
            "letter ('.' and '/' separate blocks and ports in paths)")
    return name


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    choices = list(choices)
    close = difflib.get_close_matches(name, choices, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    listing = ", ".join(choices) if choices else "(none)"
    return f"valid names: {listing}.{hint}"


@dataclass(eq=False)
class ContinuousState:
    """Handle of a continuous state vector declared by a block."""

    block: Block
    name: str
    initial: np.ndarray
    scalar: bool

    @property
    def size(self) -> int:
        return int(self.initial.size)

    @property
    def path(self) -> str:
        return f"{self.block.path}.{self.name}"


@dataclass(eq=False)
class DiscreteState:
    """Handle of a discrete state (any value: float, array, tuple, object).

    ``c_codec``: how generated C keeps a value that is not an array of numbers (a tuple of a
    time and coefficients, say), ``(size, pack, unpack)``: ``pack(value)`` gives ``size``
    doubles, ``unpack(doubles, old)`` the value back (:mod:`cosim.codegen.state`); None
    for numbers and arrays of them, kept as they are."""

    block: Block
    name: str
    initial: Any
    c_codec: Any = None

    @property
    def path(self) -> str:
        return f"{self.block.path}.{self.name}"


@dataclass(eq=False)
class OpaqueState:
    """State kept outside the context (an FMU instance, a device) with save/restore hooks.

    ``save()`` returns a value from which ``restore(value)`` brings the state
    back.  Without them the block cannot be checkpointed, and a snapshot of a
    context holding it is refused (never a silently wrong rollback).  Optionally
    ``save_into(value)`` saves into a value ``save`` returned that only the caller
    holds (a master's rollback slot: the memory behind it is reused) and returns the
    value holding the state now.
    """

    block: Block
    name: str
    save: Callable[[], Any] | None = None
    restore: Callable[[Any], None] | None = None
    save_into: Callable[[Any], Any] | None = None

    @property
    def path(self) -> str:
        return f"{self.block.path}.{self.name}"


@dataclass(eq=False)
class Parameter:
    """Handle of a block parameter; the value lives in the context.

    Its kind (a real number, an integer, a Boolean, a string, an array of a shape, an
    instance of a type) is the kind of its ``default`` (:func:`cosim.params.parameter_kind`);
    :meth:`check` refuses a value of another kind, then applies ``validate``.
    """

    block: Block
    name: str
    default: Any
    unit: str | None = None
    validate: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        self.kind = parameter_kind(self.default)

    @property
    def path(self) -> str:
        return f"{self.block.path}.{self.name}"

    @property
    def _owner(self) -> str:
        return type(self.block).__name__

    def check(self, value: Any) -> Any:
        """``value`` as it is to be stored; a :class:`ParameterError` naming the parameter,
        its declared kind and unit and the value if it does not fit."""
        unit = f" [{self.unit}]" if self.unit else ""
        if self.kind is not None:
            if not self.kind.accepts(value):
                raise ParameterError(
                    f"{self._owner} parameter '{self.path}' = {show(value)}{unit}: expected "
                    f"{self.kind.expected}, the kind of its default {show(self.default)}")
            value = self.kind.coerce(value)
        if self.validate is None:
            return value
        try:
            out = self.validate(value)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"{self._owner} parameter '{self.path}' = {show(value)}"
                                 f"{unit}: {exc}") from exc
        return value if out is None else out


@dataclass(eq=False)
class PeriodicUpdate:
    """A periodic discrete update: ``handler(ctx)`` at ``offset + k*period``."""

    block: Block
    period: int  # ticks
    offset: int  # ticks
    handler: Callable | None


@dataclass(eq=False)
class ZeroCrossing:
    """A state event: ``handler(ctx)`` runs where ``witness(ctx)`` crosses zero.

    ``direction`` +1 fires on rising crossings only, -1 on falling only, 0 on both.
    """

    block: Block
    name: str
    witness: Callable[[Any], float]
    handler: Callable[[Any], None] | None
    direction: int = 0
    terminal: bool = False


@dataclass(eq=False)
class TimeEvent:
    """Time events at given instants (ticks); the integrator stops exactly there."""

    block: Block
    times: list[int]
    handler: Callable | None = None


@dataclass(eq=False)
class DynamicTimeEvent:
    """A time event whose instant is known only while running (an FMU's next event time).

    ``next_time(ctx)`` [s] is asked after every major time point and event (``math.inf``:
    none); the integrator stops exactly on the first tick at or after it, where
    ``handler(ctx)`` runs once the outputs at that instant are evaluated.
    """

    block: Block
    name: str
    next_time: Callable[[Any], float]
    handler: Callable[[Any], None]


@dataclass(eq=False)
class Monitor:
    """``fn(ctx)`` after every accepted continuous step (see :meth:`Block.declare_monitor`)."""

    block: Block
    name: str
    fn: Callable[[Any], None]


@dataclass(eq=False)
class _Declarations:
    inputs: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    continuous_states: list = field(default_factory=list)
    discrete_states: list = field(default_factory=list)
    parameters: dict = field(default_factory=dict)
    periodic_updates: list = field(default_factory=list)
    zero_crossings: list = field(default_factory=list)
    time_events: list = field(default_factory=list)
    opaque_states: list = field(default_factory=list)
    monitors: list = field(default_factory=list)
    dynamic_time_events: list = field(default_factory=list)
    initial_checks: list = field(default_factory=list)


class Block:
    """Base class of every block (leaf blocks and diagrams).

    Parameters
    ----------
    name : str
        Name of the block, unique within its diagram.
    """

    #: True for a :class:`~cosim.diagram.Diagram` (lets lower layers, the compiler, tell a
    #: diagram from a leaf block without importing the diagram module)
    is_diagram = False

    #: rules of constructor arguments by name, beyond what their annotations say
    #: (:mod:`cosim.params`: ``{"mass_kg": POSITIVE, "method": one_of("a", "b")}``)
    argument_checks: dict = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every subclass's constructor checks its arguments before it runs
        (:func:`cosim.params.checked_init`)."""
        super().__init_subclass__(**kwargs)
        own = cls.__dict__
        if "__init__" in own:
            cls.__init__ = checked_init(own["__init__"], own.get("argument_checks", {}),
                                        cls.__name__)
        elif "argument_checks" in own:
            raise TypeError(f"{cls.__name__} declares argument_checks but no __init__")

    def __init__(self, name: str) -> None:
        self.name = check_name(name, "block")
        self.parent = None  # the Diagram this block belongs to (set by build())
        self._decl = _Declarations()

    # ------------------------------------------------------------- naming
    @property
    def path(self) -> str:
        """Path from the root diagram, e.g. ``'vehicle/tyre_fl'``."""
        if self.parent is None or self.parent.parent is None:
            return self.name
        return f"{self.parent.path}/{self.name}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} '{self.path}'>"

    # -------------------------------------------------------- declarations
    def declare_input(self, name: str, shape: Any = (), dtype: Any = float,
                      unit: str | None = None, description: str = "",
                      default: Any = None) -> InputPort:
        """Declare an input port and return its handle.

        ``default``: the value the input holds when it is left unconnected (``None``, the
        usual case: ``build()`` refuses an unconnected input).
        """
        self._check_new_port(name)
        port = InputPort(self, name, shape, dtype, unit, description, default=default)
        self._decl.inputs[name] = port
        return port

    def declare_output(self, name: str, calc: Callable[[Any], Any], shape: Any = (),
                       dtype: Any = float, unit: str | None = None,
                       depends_on: Iterable | None = ALL, description: str = "") -> OutputPort:
        """Declare an output port computed by ``calc(ctx)``.

        ``depends_on`` lists the inputs (handles or names) that ``calc`` reads;
        ``()`` for an output computed from state and parameters alone; the
        default ``ALL`` means every input.
        """
        self._check_new_port(name)
        deps = None
        if depends_on is not ALL:
            deps = frozenset(self._input_name(d) for d in depends_on)
        port = OutputPort(self, name, shape, dtype, unit, description, calc=calc, depends_on=deps)
        self._decl.outputs[name] = port
        return port

    def declare_outputs(self, specs: Iterable, calc: Callable[[Any], tuple],
                        depends_on: Iterable | None = ALL) -> tuple[OutputPort, ...]:
        """Declare outputs computed together by one ``calc(ctx)`` returning their values.

        ``specs``: ``(name, unit)`` pairs or dicts of :meth:`declare_output` arguments
        (``name``, ``shape``, ``dtype``, ``unit``, ``description``).  The engine calls
        ``calc`` once per evaluation for all of them (a block whose outputs share most of
        their work, e.g. a valve's four port flows).  They share one ``depends_on``: group
        only outputs with the same feedthrough, or an output that reads no input would
        appear to (a spurious algebraic loop).
        """
        group = OutputGroup(calc)
        ports = []
        for i, spec in enumerate(specs):
            kw = dict(spec) if isinstance(spec, dict) else {"name": spec[0], "unit": spec[1]}
            port = self.declare_output(calc=lambda ctx, i=i: calc(ctx)[i],
                                       depends_on=depends_on, **kw)
            port.group = group
            group.ports.append(port)
            ports.append(port)
        return tuple(ports)

    def declare_continuous_state(self, name: str, initial: Any = 0.0) -> ContinuousState:
        """Declare a continuous state vector; a float ``initial`` makes it a scalar."""
        check_name(name, "state")
        scalar = np.ndim(initial) == 0
        x0 = np.array(initial, dtype=float).reshape(-1)
        h = ContinuousState(self, name, x0, scalar)
        self._decl.continuous_states.append(h)
        return h

    def declare_discrete_state(self, name: str, initial: Any = 0.0) -> DiscreteState:
        """Declare a discrete state, written by periodic-update or event handlers."""
        check_name(name, "state")
        h = DiscreteState(self, name, initial)
        self._decl.discrete_states.append(h)
        return h

    def declare_opaque_state(self, name: str, save: Callable[[], Any] | None = None,
                             restore: Callable[[Any], None] | None = None,
                             save_into: Callable[[Any], Any] | None = None) -> OpaqueState:
        """Declare state held outside the context (see :class:`OpaqueState`)."""
        check_name(name, "state")
        if (save is None) != (restore is None):
            raise BuildError(f"block '{self.name}': opaque state {name!r} needs both save "
                             "and restore, or neither")
        if save_into is not None and save is None:
            raise BuildError(f"block '{self.name}': opaque state {name!r} has save_into "
                             "but no save and restore; give all three")
        h = OpaqueState(self, name, save, restore, save_into)
        self._decl.opaque_states.append(h)
        return h

    def declare_parameter(self, name: str, default: Any, unit: str | None = None,
                          validate: Callable[[Any], Any] | None = None) -> Parameter:
        """Declare a parameter; its value lives in the context (sweeps, tuning).

        The default declares the kind of value the parameter takes (a number, ``True`` a
        Boolean, a string, an array its shape; ``None`` anything); a value of another kind
        is refused when set.  ``validate(value)`` then checks the
        value further (raise ``ValueError``) and may return it converted.
        """
        check_name(name, "parameter")
        if name in self._decl.parameters:
            raise BuildError(f"block '{self.path}': parameter {name!r} declared twice")
        h = Parameter(self, name, default, unit, validate)
        h.check(default)
        self._decl.parameters[name] = h
        return h

    def declare_periodic_update(self, period_s: float, handler: Callable | None = None,
                                offset_s: float = 0.0) -> PeriodicUpdate:
        """Run ``handler(ctx)`` at ``offset_s + k*period_s``; ``handler=None`` only samples."""
        period = to_ticks(period_s, f"block '{self.name}' period")
        offset = to_ticks(offset_s, f"block '{self.name}' offset")
        if period <= 0:
            raise RateError(f"block '{self.name}': period must be positive, got {period_s!r} s")
        if not 0 <= offset < period:
            raise RateError(f"block '{self.name}': offset {offset_s!r} s must lie in "
                            f"[0, period={period_s!r} s)")
        u = PeriodicUpdate(self, period, offset, handler)
        self._decl.periodic_updates.append(u)
        return u

    def declare_zero_crossing(self, witness: Callable, handler: Callable | None = None,
                              direction: int = 0, name: str = "event",
                              terminal: bool = False) -> ZeroCrossing:
        """Declare a state event located by root finding on ``witness(ctx)``."""
        if direction not in (-1, 0, 1):
            raise BuildError(f"block '{self.name}': direction must be -1, 0 or +1")
        z = ZeroCrossing(self, name, witness, handler, direction, terminal)
        self._decl.zero_crossings.append(z)
        return z

    def declare_monitor(self, fn: Callable[[Any], None], name: str = "monitor") -> Monitor:
        """Call ``fn(ctx)`` after every accepted step of the continuous solver and at every
        major time point: a cheap check (a warning, a statistic) with no event location.

        ``fn`` reads the time, the continuous states and discrete states (outputs are not
        re-evaluated for it) and may set discrete states; it must not change continuous
        states.  Unlike a zero crossing it does not stop the integrator, so fixed-step runs
        keep their fast path: what it reports is known to the step, not located in it.
        """
        m = Monitor(self, name, fn)
        self._decl.monitors.append(m)
        return m

    def declare_time_event(self, times_s: float | Iterable[float],
                           handler: Callable | None = None) -> TimeEvent:
        """Make the integrator stop exactly at ``times_s`` and call ``handler(ctx)`` there."""
        times = [times_s] if np.ndim(times_s) == 0 else list(times_s)
        ticks = sorted(to_ticks(t, f"block '{self.name}' time event") for t in times)
        ev = TimeEvent(self, ticks, handler)
        self._decl.time_events.append(ev)
        return ev

    def declare_dynamic_time_event(self, next_time: Callable[[Any], float],
                                   handler: Callable[[Any], None],
                                   name: str = "time_event") -> DynamicTimeEvent:
        """A time event whose instant ``next_time(ctx)`` [s] the block knows only while
        running (:class:`DynamicTimeEvent`): the simulator stops exactly there and calls
        ``handler(ctx)`` after the outputs at that instant are evaluated (so the handler
        sees inputs that changed at the same instant), then evaluates the outputs again.
        A ``next_time`` at or before the current time means "at this instant".  A handler
        may end the run with :class:`~cosim.errors.SimulationTerminated`."""
        ev = DynamicTimeEvent(self, name, next_time, handler)
        self._decl.dynamic_time_events.append(ev)
        return ev

    def declare_initial_check(self, fn: Callable[[Any], bool]) -> None:
        """Call ``fn(ctx)`` after the outputs at the start time are evaluated; if it
        returns True (the block redid its initialization with the inputs it now sees,
        e.g. an FMU initialized before its inputs' sources had run), the start outputs are
        evaluated again (until no block asks for it, at most ``INIT_ROUNDS`` = 100 rounds of
        :mod:`cosim.simulator`)."""
        self._decl.initial_checks.append(fn)

    # ------------------------------------------------------------ protocol
    def derivatives(self, ctx: Any) -> Any:
        """Time derivative of the continuous states (concatenated, or a float)."""
        raise NotImplementedError(
            f"block '{self.path}' declares continuous states but does not implement "
            "derivatives(ctx)")

    def linear_model(self, ctx: Any) -> Any:
        """Optional: a :class:`~cosim.linear.LinearModel` for fusion; ``None`` if nonlinear."""
        return None

    # ------------------------------------------------------------- lookups
    @property
    def inputs(self) -> dict[str, InputPort]:
        return self._decl.inputs

    @property
    def outputs(self) -> dict[str, OutputPort]:
        return self._decl.outputs

    @property
    def continuous_states(self) -> list[ContinuousState]:
        return self._decl.continuous_states

    @property
    def discrete_states(self) -> list[DiscreteState]:
        return self._decl.discrete_states

    @property
    def parameters(self) -> dict[str, Parameter]:
        return self._decl.parameters

    @property
    def periodic_updates(self) -> list[PeriodicUpdate]:
        return self._decl.periodic_updates

    @property
    def zero_crossings(self) -> list[ZeroCrossing]:
        return self._decl.zero_crossings

    @property
    def time_events(self) -> list[TimeEvent]:
        return self._decl.time_events

    @property
    def monitors(self) -> list[Monitor]:
        return self._decl.monitors

    @property
    def dynamic_time_events(self) -> list[DynamicTimeEvent]:
        return self._decl.dynamic_time_events

    @property
    def initial_checks(self) -> list:
        return self._decl.initial_checks

    @property
    def opaque_states(self) -> list[OpaqueState]:
        return self._decl.opaque_states

    @property
    def is_sampled(self) -> bool:
        """Outputs computed at sample hits only and held in between."""
        return bool(self._decl.periodic_updates) and not self._decl.continuous_states

    def input(self, name: str) -> InputPort:
        """The input port called ``name``; the error lists the valid names."""
        try:
            return self._decl.inputs[name]
        except KeyError:
            raise PortError(f"input {name!r} not found on block '{self.path}'; "
                            + did_you_mean(name, self._decl.inputs)) from None

    def output(self, name: str) -> OutputPort:
        """The output port called ``name``; the error lists the valid names."""
        try:
            return self._decl.outputs[name]
        except KeyError:
            raise PortError(f"output {name!r} not found on block '{self.path}'; "
                            + did_you_mean(name, self._decl.outputs)) from None

    def parameter(self, name: str) -> Parameter:
        try:
            return self._decl.parameters[name]
        except KeyError:
            raise PortError(f"parameter {name!r} not found on block '{self.path}'; "
                            + did_you_mean(name, self._decl.parameters)) from None

    def _input_name(self, d: Any) -> str:
        if isinstance(d, InputPort):
            if d.block is not self:
                raise BuildError(f"block '{self.name}': depends_on names input {d.path} "
                                 "of another block")
            return d.name
        self.input(d)
        return d

    def _check_new_port(self, name: str) -> None:
        check_name(name, "port")
        if name in self._decl.inputs or name in self._decl.outputs:
            raise PortError(f"block '{self.name}': port {name!r} declared twice "
                            "(input and output names share one namespace)")

    def describe_ports(self) -> list[str]:
        """One line per port, for ``cosim info``."""
        lines = []
        for p in self.inputs.values():
            lines.append(f"in   {p.name:<16} {str(p.shape or '()'):<8} [{p.unit_label()}]")
        for p in self.outputs.values():
            deps = "all inputs" if p.depends_on is None else (
                ", ".join(sorted(p.depends_on)) or "no inputs")
            lines.append(f"out  {p.name:<16} {str(p.shape or '()'):<8} [{p.unit_label()}]"
                         f"  depends on: {deps}")
        return lines
