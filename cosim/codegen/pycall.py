"""Blocks without a C form called back in Python from a compiled run.

A compiled Simulator (:mod:`cosim.compiled_run`) would otherwise run the whole diagram in
Python for one block that has no C form (a device bridge, an FMU stepped as a sampled task, a
user block).  Such a block, when it qualifies (:func:`callback_reason`), stays in Python and
the C calls it where the Python loop would: each of its output nodes at its place in the
evaluation order (a sampled block only at its hits, as in the Python loop; an unsampled one
at every evaluation, the solver's stages included), each periodic update with the other due
updates.  The C statement is a call of one function of this process,
``int cosim_pycall(void *model, int entry)`` (an external function of the C,
:meth:`cosim.codegen.model.CContext.extern_fn`'s table: its address is not in the source), which
finds the run by its model and runs the entry:

* the block's input signals from the C state into the context (in their Python types, as a
  hand-over of the whole state would: :func:`cosim.codegen.state.like`), the context's time,
  mode time and ticks from the C state;
* the very statement the Python loop runs for the node (:meth:`cosim.evaluator.Evaluator
  ._emit_node`: the output function, an output group, a ``FunctionBlock`` call), or the
  update's handler;
* the node's outputs from the context into the C state (floats).

The block's discrete and opaque states live in the context only (the C holds none of them);
everything else the block reads must be its inputs, its states, its parameters and time.  So
the values are those of the Python loop, bit for bit.

A Python exception in a call is kept and the C run stops there (the entry returns 1 and the
C fails); the run raises it as the Python loop raises it (``StepError`` "evaluating ...
failed at t = ..." for an output, "discrete update of block ... failed" for an update), with
the rows of the completed stops kept and the context where the C stopped (as the Python
loop leaves it when a block raises); so does ``KeyboardInterrupt`` (Ctrl-C arriving in the
Python of a call; one arriving between the C's calls is the run's, as always).  A run
whose blocks called back have no discrete or opaque state (functions of their inputs and
time) fails as any compiled run: back to its slice's start, the Python loop takes over and
raises its own error.  With such states (a frame sent on a bus cannot be unsent, a state
changed cannot be unchanged) a failure is not handed over: a failure of the C itself raises
its message (:class:`~cosim.errors.StepError`).

Not called back (the diagram stays in Python, the reason named): blocks with continuous
states, zero crossings or monitors, ports that are not numbers.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from ..errors import StepError
from .state import like

__all__ = ["KEY", "Calls", "PyCalls", "callback_reason", "register"]

#: the external function's key (:meth:`CContext.extern_fn`)
KEY = "cosim.pycall"

_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
_RUNS: dict[int, Any] = {}  #: model address -> its :class:`Calls`


def _dispatch(model: int, entry: int) -> int:
    try:
        calls = _RUNS.get(model)
        return 1 if calls is None else calls.call(entry)
    except BaseException as exc:  # noqa: BLE001 - never through C (Ctrl-C between lines)
        calls = _RUNS.get(model)
        if calls is not None and calls.error is None:
            calls.error = exc
        return 1


_DISPATCH = _CB(_dispatch)
ADDRESS = ctypes.cast(_DISPATCH, ctypes.c_void_p).value


def callback_reason(block: Any) -> str:
    """'' when ``block`` (without a C form) can be called back from the C; else why not."""
    if block.continuous_states:
        return "continuous states"
    if block.zero_crossings:
        return "zero crossings"
    if block.monitors:
        return "monitors"
    if any(ev.handler is not None for ev in block.time_events):
        return "a time event with a Python handler"
    bad = [p.name for p in list(block.inputs.values()) + list(block.outputs.values())
           if np.dtype(p.dtype).kind not in "fiub"]
    if bad:
        return f"ports that are not numbers ({', '.join(bad)})"
    return ""


class PyCalls:
    """The blocks of the in-process program ``prog`` (a :class:`~cosim.codegen.program.
    Program` being built) that are called back, and their entries."""

    def __init__(self, prog: Any, no_c_form: Any) -> None:
        self.prog = prog
        #: block -> '' (called back); the blocks without a C form that qualify
        self.blocks = {b for b in prog.plan.blocks if no_c_form(b) and not callback_reason(b)}
        #: per entry: ("out", fn, input slots, output slots, label) or
        #: ("update", handler, input slots, block)
        self.entries: list[tuple] = []

    def _call(self, entry: int, what: str) -> str:
        fn = self.prog.externs.get(KEY)
        if fn is None:
            self.prog.externs[KEY] = fn = (len(self.prog.externs), "int", "void *, int", ADDRESS)
        return (f"if (COSIM_EXTERN_{fn[0]}((void *)M, {entry})) "
                f"cosim_fail(M, \"a Python block called back failed ({what})\");")

    def _inputs(self, b: Any) -> list:
        plan = self.prog.plan
        return sorted({plan.input_slot[p] for p in b.inputs.values() if p in plan.input_slot})

    def node(self, n: Any, ev: Any) -> str:
        """The C of output node ``n`` (the Python loop's statement for it, called back)."""
        src: list = []
        lines: list = []
        ev._emit_node(n, src, lines)
        fn = ev._compile("pycall", src, lines)
        self.entries.append(("out", fn, self._inputs(n.block), list(n.slots), lines[0]))
        return self._call(len(self.entries) - 1, lines[0])

    def update(self, b: Any, handler: Any) -> str:
        """The C of ``b``'s periodic update ``handler`` (called back)."""
        self.entries.append(("update", handler, self._inputs(b), b))
        return self._call(len(self.entries) - 1, f"update of '{b.path}'")


class Calls:
    """The entries of one compiled run (:class:`~cosim.compiled_run.CompiledRun` ``run``),
    called from its C through :func:`_dispatch`."""

    def __init__(self, run: Any, pycalls: PyCalls) -> None:
        prog = run.program
        self.ctx = run.sim.ctx
        self.st = run.state
        self.c_s = run.state.s  # (ctypes: an element read or written as a Python float)
        self.s = run.views[2]
        off = prog.slot_offset
        ports = prog.plan.slot_ports

        def slots(ks: list) -> list:  # (slot, C offset, size, a Python float's slot)
            return [(k, off[k], ports[k].size, ports[k].shape == () and
                     np.dtype(ports[k].dtype).kind == "f") for k in ks]
        self.entries = [(e[0], e[1], slots(e[2]), slots(e[3]) if e[0] == "out" else e[3],
                         e[4] if e[0] == "out" else None) for e in pycalls.entries]
        self.error: BaseException | None = None  #: what a call raised (the run raises it)
        #: the blocks called back, named (diagnostics)
        self.names = sorted(f"'{b.path}' ({type(b).__name__})" for b in pycalls.blocks)
        #: every block called back is a function of its inputs and time (no discrete or
        #: opaque state): a failed slice may be redone by the Python loop
        self.pure = not any(b.discrete_states or b.opaque_states for b in pycalls.blocks)

    @staticmethod
    def unregister(model: int) -> None:
        """Forget the run of ``model`` (its ``__del__``: no import at interpreter exit)."""
        _RUNS.pop(model, None)

    def call(self, j: int) -> int:
        """Entry ``j`` (module docstring); 0, or 1 when it failed (the C then fails)."""
        if self.error is not None:
            return 1
        kind, fn, ins, outs, label = self.entries[j]
        ctx, c_s, st = self.ctx, self.c_s, self.st
        sig = ctx.signals
        for k, o, n, plain in ins:
            if plain:
                sig[k] = c_s[o]
            else:
                sig[k] = like(sig[k], self.s[o:o + n]) if sig[k] is not None else \
                    np.array(self.s[o:o + n])
        ctx.ticks, ctx.time, ctx.mode_time = st.ticks, st.time, st.mode_time
        try:
            if kind == "out":
                fn(ctx, sig)
                for k, o, n, plain in outs:
                    v = sig[k]
                    if plain and type(v) is float:
                        c_s[o] = v
                    else:
                        self.s[o:o + n] = _numbers(v, n, label)
            else:
                try:
                    fn(ctx)
                except Exception as exc:
                    raise StepError(f"discrete update of block '{outs.path}' failed at "
                                    f"t = {ctx.time:.9g} s: {exc!r}") from exc
        except StepError as exc:
            self.error = exc
            return 1
        except Exception as exc:  # noqa: BLE001 - never raised through C
            from ..errors import SimulationTerminated
            self.error = exc if isinstance(exc, SimulationTerminated) else StepError(
                f"evaluating {label} failed at t = {ctx.time:.9g} s: "
                f"{type(exc).__name__}: {exc}")
            self.error.__cause__ = None if self.error is exc else exc
            return 1
        except BaseException as exc:  # noqa: BLE001 - SystemExit and the like: kept
            self.error = exc
            return 1
        return 0


def _numbers(v: Any, n: int, label: str) -> np.ndarray:
    """An output's value as the ``n`` doubles the C holds (a ValueError naming it if not)."""
    try:
        out = np.asarray(v, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        out = None
    if out is None or out.size != n:
        raise ValueError(f"{label} gave {v!r}, not {n} number(s) (the C holds an output as "
                         "doubles)")
    return out


def register(run: Any, pycalls: PyCalls) -> Calls:
    """Make ``run``'s model call its entries; returns them."""
    calls = Calls(run, pycalls)
    _RUNS[run.model] = calls
    return calls

