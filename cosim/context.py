"""Context: all mutable data of a simulation.

A :class:`Context` holds the time, the continuous state vector, the discrete
states, the parameter values, the current signal values (including the held
outputs of sampled blocks) and the fixed values of exported inputs.  Blocks
read it through handles (``ctx.input(port)``, ``ctx.state(h)``,
``ctx.param(h)``) and never store mutable data themselves.  So a reset is a new
context, a checkpoint is :meth:`Context.snapshot`, a rollback is
:meth:`Context.restore`, and a parameter sweep is many contexts over one
diagram.  A context knows the diagram that made it and says so when misused.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import ContextError
from .time import to_seconds, to_ticks

if TYPE_CHECKING:  # pragma: no cover
    from .compiler import Plan


_IMMUTABLE = (float, int, bool, str, type(None))
_PLAIN = frozenset(_IMMUTABLE)  # those exact types: the test of the common case


def _copy_value(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, _IMMUTABLE) or (type(v) is tuple and _immutable_tuple(v)):
        return v
    return copy.deepcopy(v)


def _copy_values(values: list) -> list:
    """``[_copy_value(v) for v in values]``, plain floats and such passed without a call."""
    return [v if type(v) in _PLAIN else _copy_value(v) for v in values]


def _immutable_tuple(v: tuple) -> bool:
    """A tuple of numbers, strings and such tuples (a coupling input's polynomial
    ``(t0, (c0, c1))``): shared by a snapshot, not copied (``deepcopy`` costs ~5 us)."""
    for x in v:
        if type(x) in _PLAIN:
            continue
        if type(x) is tuple:
            if not _immutable_tuple(x):
                return False
        elif not isinstance(x, _IMMUTABLE):
            return False
    return True


class Context:
    """Mutable simulation data for one compiled diagram.

    Made by :meth:`Diagram.create_context`; do not construct directly.
    """

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.diagram = plan.diagram
        self.ticks = 0
        self.time = 0.0  # evaluation time in seconds (solver stages move it)
        # time that selects the branch of piecewise functions of time: the start of
        # the integration interval while integrating, else ``time`` (see Step)
        self.mode_time = 0.0
        self.xc = plan.initial_continuous_state()
        self.xd = [_copy_value(h.initial) for h in plan.discrete_states]
        self.params = [_copy_value(h.default) for h in plan.parameters]
        self.signals: list[Any] = [p.zero() for p in plan.slot_ports]
        self._in = plan.input_slot
        self._out = plan.output_slot
        self.pruned_slots: frozenset = frozenset()  # set by the Simulator (Evaluator.pruned)
        self._cs = plan.cstate_index
        self._scalar_cs = {h: a for h, (a, _, sc) in plan.cstate_index.items() if sc}
        self._ds = plan.dstate_index
        self._ps = plan.param_index

    # ------------------------------------------------------ state vector
    @property
    def xc(self) -> np.ndarray:
        """The continuous state vector (assign a new array; change entries with set_state)."""
        x = self._xc
        if x is None:  # set as floats (set_floats): the array is made on first use
            x = self._xc = np.array(self._xl, dtype=float)
        return x

    @xc.setter
    def xc(self, value: np.ndarray) -> None:
        self._xc = value
        self._xl = None  # list copy for fast scalar reads, rebuilt on demand

    def set_floats(self, values: list) -> None:
        """Set the continuous state vector as a list of floats (a solver stage of a small
        system: scalar states are read from the list, the array ``xc`` is made only if
        something reads it).  The list must not be changed afterwards."""
        self._xl = values
        self._xc = None

    # -------------------------------------------------------------- time
    def set_time(self, seconds: float) -> None:
        """Set the time (start time of a run)."""
        self.ticks = to_ticks(seconds, "context time")
        self.time = self.mode_time = to_seconds(self.ticks)

    # ---------------------------------------------------------- signals
    def input(self, port: Any) -> Any:
        """Current value of an input port (after unit conversion)."""
        try:
            return self.signals[self._in[port]]
        except KeyError:
            raise self._foreign(port, "input port") from None

    def output(self, port: Any) -> Any:
        """Last computed value of an output port."""
        try:
            slot = self._out[port]
        except KeyError:
            raise self._foreign(port, "output port") from None
        if slot in self.pruned_slots:
            from .errors import PortError
            raise PortError(
                f"output '{port.path}' is not computed in this run: nothing reads it (no "
                "connection, export, recorder or observer); record it, e.g. "
                f"Simulator(..., record=[..., '{port.path}']), to have its values")
        return self.signals[slot]

    def fix_input(self, port: Any, value: Any) -> None:
        """Give an exported input of the root diagram a constant value."""
        port = self.plan.resolve_root_input(port)
        self.plan.check_value(port, value)
        self.signals[self.plan.root_input_slot[port]] = value
        self._fixed = getattr(self, "_fixed", set()) | {port}

    # ----------------------------------------------------------- states
    def state(self, h: Any) -> Any:
        """Continuous state: a float for scalar states, else a view (read only)."""
        a = self._scalar_cs.get(h)
        if a is not None:
            xl = self._xl
            if xl is None:
                xl = self._xl = self._xc.tolist()
            return xl[a]
        try:
            a, b, _ = self._cs[h]
        except KeyError:
            raise self._foreign(h, "continuous state") from None
        return self.xc[a:b]

    def set_state(self, h: Any, value: Any) -> None:
        """Overwrite a continuous state (event handlers, initial conditions)."""
        try:
            a, b, _ = self._cs[h]
        except KeyError:
            raise self._foreign(h, "continuous state") from None
        self.xc[a:b] = value
        self._xl = None

    def discrete(self, h: Any) -> Any:
        try:
            return self.xd[self._ds[h]]
        except KeyError:
            raise self._foreign(h, "discrete state") from None

    def set_discrete(self, h: Any, value: Any) -> None:
        try:
            self.xd[self._ds[h]] = value
        except KeyError:
            raise self._foreign(h, "discrete state") from None

    # ------------------------------------------------------- parameters
    def param(self, h: Any) -> Any:
        try:
            return self.params[self._ps[h]]
        except KeyError:
            raise self._foreign(h, "parameter") from None

    def set_param(self, h: Any, value: Any) -> None:
        """Set a parameter by handle or by path ``'block.param'``.

        A value of another kind than the parameter's default (a string for a number, an
        array for a scalar, an array of another shape, NaN) or one its block's check
        refuses raises :class:`~cosim.errors.ParameterError` here, naming the parameter,
        its kind and unit and the value (:meth:`~cosim.block.Parameter.check`).
        """
        h, value = self.check_param(h, value)
        self.params[self._ps[h]] = value
        self.plan.parameters_changed(self, h)

    def check_param(self, h: Any, value: Any) -> tuple[Any, Any]:
        """``(handle, value as it would be stored)`` for :meth:`set_param`, without
        storing it: a caller that applies the value later (at the next real-time frame)
        refuses a bad one now."""
        if isinstance(h, str):
            h = self.plan.find_parameter(h)
        if h not in self._ps:
            raise self._foreign(h, "parameter")
        return h, h.check(value)

    # ---------------------------------------------------- checkpointing
    def snapshot(self, into: Context | None = None) -> Context:
        """An independent copy (checkpoint) of this context.

        Opaque states (FMUs, devices) are saved through their hooks; a block
        without hooks makes the snapshot fail with :class:`ContextError`.

        ``into``: a snapshot of a context of the same diagram that its holder alone
        uses (a master's per-step rollback slot): overwritten and returned instead of
        a new copy, its opaque states saved into the tokens it holds where their
        blocks can (``OpaqueState.save_into``: an FMU's state memory is reused).
        """
        if into is not None and type(into) is type(self) and into.plan is self.plan:
            held = getattr(into, "_opaque", None) or {}
            into.__dict__.update(self.__dict__)
            new = into
        else:
            held = {}
            new = copy.copy(self)
        new._opaque = {}
        for h in self.plan.opaque_states:
            if h.save is None:
                raise ContextError(
                    f"cannot snapshot: block '{h.block.path}' keeps state {h.name!r} outside "
                    "the context and cannot save it; rollback is refused rather than "
                    "giving a wrong result (give the block save/restore hooks)")
            token = held.get(h)
            new._opaque[h] = h.save() if token is None or h.save_into is None else \
                h.save_into(token)
        new.xc = self.xc.copy()
        new.xd = _copy_values(self.xd)
        new.params = _copy_values(self.params)
        new.signals = _copy_values(self.signals)
        return new

    copy = snapshot

    def restore(self, snap: Context) -> None:
        """Roll back to a snapshot taken from a context of the same diagram."""
        if snap.diagram is not self.diagram:
            raise ContextError(
                f"cannot restore: the snapshot belongs to diagram '{snap.diagram.name}', "
                f"this context to '{self.diagram.name}'")
        self.ticks, self.time, self.mode_time = snap.ticks, snap.time, snap.mode_time
        self.xc = snap.xc.copy()
        self.xd = _copy_values(snap.xd)
        self.params = _copy_values(snap.params)
        self.signals = _copy_values(snap.signals)
        for h, value in getattr(snap, "_opaque", {}).items():
            h.restore(value)

    # ------------------------------------------------------------ errors
    def _foreign(self, obj: Any, what: str) -> ContextError:
        owner = getattr(obj, "block", None)
        where = f" of block '{owner.path}'" if owner is not None else ""
        name = getattr(obj, "name", repr(obj))
        return ContextError(
            f"{what} {name!r}{where} is not part of diagram '{self.diagram.name}' that made "
            "this context; use the context created by that block's own diagram "
            "(diagram.create_context())")

    def __repr__(self) -> str:
        return (f"<Context of '{self.diagram.name}' t={self.time:g} s, "
                f"{self.xc.size} continuous states>")
