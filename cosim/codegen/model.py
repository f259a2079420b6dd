"""The extension API: how a block describes itself in C.

A block that can be exported as generated C provides a :class:`CModel`: C
statements for each of its outputs, for the derivatives of its continuous
states and for its periodic (discrete) update.  It gets them in one of three
ways, tried in this order:

1. a method on the block class, ``c_model(self, cg) -> CModel``;
2. a function registered for the block's class (or a base class) with
   :func:`register_c_model` (how the built-in library is described, in
   :mod:`cosim.codegen.blocks`, so the block modules need no edits; a subclass that
   changes the arithmetic of a described base class must give its own);
3. for a linear block, its ``linear_model(ctx)``: the matrices become C
   constants (:func:`linear_c_model`).

The statements are written against the names the :class:`CContext` ``cg``
hands out, never against raw indices::

    def c_model(self, cg):
        k = cg.param("k", self.k, unit="1/s")           # a tunable FMI parameter
        return CModel(
            outputs={"y": f"{cg.y(self.y)} = {cg.x(self.x)};"},
            derivatives=f"{cg.dx(self.x)} = {k} * ({cg.u(self.u)} - {cg.x(self.x)});")

Names available in the statements (all ``double``):

=================  =====================================================
``cg.u(port, i)``  input element (read only)
``cg.y(port, i)``  output element (write in the output's statements)
``cg.x(h, i)``     continuous state (the solver's stage value)
``cg.dx(h, i)``    derivative (write in ``derivatives``)
``cg.xd(h, i)``    discrete state (read; write only in ``update``)
``cg.param(...)``  a parameter: an FMI tunable parameter or a constant
``cg.t``           time [s]; ``cg.mode_t``: the time that selects the branch
                   of piecewise functions of time (see ``blocks.sources.Step``)
=================  =====================================================

Each statement group is emitted inside its own ``{ }`` (declare locals freely);
``cg.fail("message")`` is a statement that makes the current FMI call return
an error with that message (e.g. a table input out of range).  Shared C
functions go to file scope once with ``cg.helper(key, code)``.

Compiled code outside the source (a Numba ``cfunc``: machine code the block's Python path
runs too) is called through ``name = cg.extern_fn(key, "int", "double, const double *",
address)``: ``name(args)`` in the statements calls the function at ``address``.  The
address is not in the source (it changes with every process and would defeat the cache):
the source holds a table of function pointers that the compiled Simulator fills after
loading the library (:func:`cosim.codegen.state.bind_externs`); a ``key`` names one
function (the same key, the same function in a process; the table is the one piece of
static data, identical for every instance).  A diagram with such a block runs in the
compiled Simulator only: the FMU export refuses it (the function lives in this process).

A block's zero crossings (``declare_zero_crossing``) need C too, by name:
``CModel(zero_crossings={"impact": CZeroCrossing(witness=h, handler=...)})``
(a C expression whose sign change is the event, statements that may assign
``cg.x`` and ``cg.xd``); they become Model Exchange state events, and the compiled
Simulator locates them in C.  Its monitors (``declare_monitor``) need a C condition for
the compiled Simulator, ``CModel(monitors={"name": CMonitor(condition)})``: the Python
monitor runs only where the condition holds (an FMU export ignores monitors).

Semantics are those of :mod:`cosim.simulator`: outputs in evaluation order;
a sampled block's outputs only at its hits (held in between); the update of
every due block after all outputs, with the same inputs.  The statements must
be pure functions of what they read (no static variables: two FMU instances
run in one process).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import BuildError


class CodegenError(BuildError):
    """A block or diagram cannot be generated as C (what, where, what to do).  The FMU
    export raises it as :class:`fmus.cgen.FMUExportError`, a subclass.  ``blocks``: the
    blocks that have no C form, when that is the reason (else empty); ``reasons``: why
    each has none (:func:`why_no_c_form`)."""

    blocks: tuple = ()
    reasons: tuple = ()

    @classmethod
    def without_c_form(cls, blocks: list, message: str, reasons: tuple = ()) -> CodegenError:
        err = cls(message)
        err.blocks = tuple(blocks)
        err.reasons = tuple(reasons)
        return err


@dataclass
class CZeroCrossing:
    """The C of one zero crossing a block declares (``declare_zero_crossing``): exported as
    a Model Exchange event indicator (state event).

    Attributes
    ----------
    witness : str
        A C expression (double) whose sign change is the event; it may read what the
        outputs read (``cg.x``, ``cg.u``, ``cg.xd``, parameters, ``cg.t``) and the block's
        own outputs ``cg.y``.
    handler : str
        Statements run at the event: they may assign continuous states (``cg.x``) and
        discrete states (``cg.xd``); empty for a crossing without handler.
    """

    witness: str
    handler: str = ""


@dataclass
class CMonitor:
    """The C of one monitor a block declares (``declare_monitor``), for the compiled
    Simulator: the monitor's Python ``fn`` does nothing unless ``condition`` holds.

    Attributes
    ----------
    condition : str
        A C expression (true or false) over what the monitor reads (``cg.t``, ``cg.x``,
        ``cg.xd``, parameters).  The C loop evaluates it where the Python loop calls the
        monitors (after every step's outputs, before the discrete updates); when one holds,
        the run returns to Python there, the monitors are called on the context, and the run
        goes on in C.  It must be true whenever ``fn`` would change anything or warn.
    """

    condition: str


@dataclass
class CModel:
    """The C description of one block (see the module docstring).

    Attributes
    ----------
    outputs : dict
        Output port name -> C statements writing ``cg.y(port)``.
    derivatives : str
        Statements writing ``cg.dx(h)`` for every continuous state of the block.
    update : str or list of str
        Statements of the periodic update (writing ``cg.xd(h)``); a list gives
        one entry per ``block.periodic_updates`` in declaration order.
    time_dependent : bool
        The outputs change continuously with time (``cg.t``) between events:
        such a block cannot feed the exact zero-order-hold integrator.
    zero_crossings : dict
        Zero-crossing name (as declared) -> :class:`CZeroCrossing`; needed for every
        zero crossing the block declares (exported in Model Exchange only).
    monitors : dict
        Monitor name (as declared) -> :class:`CMonitor`: what a compiled Simulator needs
        to run a block with monitors in C (an FMU export ignores monitors).
    """

    outputs: dict[str, str] = field(default_factory=dict)
    derivatives: str = ""
    update: str | list[str] = ""
    time_dependent: bool = False
    zero_crossings: dict[str, CZeroCrossing] = field(default_factory=dict)
    monitors: dict[str, CMonitor] = field(default_factory=dict)


# -------------------------------------------------------------- literals
def c_float(v: float) -> str:
    """An exact C literal of a double (shortest round trip, ``HUGE_VAL`` for inf)."""
    v = float(v)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "HUGE_VAL" if v > 0 else "(-HUGE_VAL)"
    r = repr(v)
    if "e" not in r and "." not in r and "inf" not in r:
        r += ".0"
    return r if v >= 0 else f"({r})"


def c_string(text: str) -> str:
    """A C string literal (ASCII, escaped)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            out.append(f"\\{ord(ch) & 0xFF:03o}" if ord(ch) < 256 else "?")
    return '"' + "".join(out) + '"'


# ------------------------------------------------------------- parameters
class CArray:
    """A flat array parameter or constant in C; ``a[i]`` / ``a[i, j]`` give elements."""

    def __init__(self, base: str, offset: int, shape: tuple[int, ...]) -> None:
        self.base, self.offset, self.shape = base, offset, tuple(shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    def __getitem__(self, idx: Any) -> str:
        if isinstance(idx, tuple):
            flat = 0
            for k, n in zip(idx, self.shape, strict=True):
                flat = flat * n + int(k)
        else:
            flat = int(idx)
        if not 0 <= flat < self.size:
            raise IndexError(f"index {idx!r} out of range for shape {self.shape}")
        return f"{self.base}[{self.offset + flat}]"

    @property
    def ptr(self) -> str:
        """A ``const double *`` to the first element."""
        return f"(&{self.base}[{self.offset}])"


@dataclass
class ParamDecl:
    """One FMI parameter of the exported model (flattened into ``p[]``)."""

    name: str  # FMI name, e.g. 'ctrl.kp'
    offset: int
    shape: tuple[int, ...]
    values: np.ndarray  # flat start values
    unit: str | None
    description: str


# --------------------------------------------------------------- registry
_REGISTRY: dict[str, Callable[[Any, CContext], CModel]] = {}
_REFUSALS: dict[str, Callable[[Any], str]] = {}


def _key(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register_c_model(cls: type | str, fn: Callable[[Any, CContext], CModel],
                     refusal: Callable[[Any], str] | None = None) -> None:
    """Describe instances of ``cls`` (and subclasses) in C with ``fn(block, cg)``.

    ``cls`` may be a class or its dotted name (``"blocks.math.Gain"``), so a
    description can be registered without importing the block's module.  ``refusal``:
    for a class whose instances may have no C form (a ``FunctionBlock``'s function),
    ``refusal(block)`` says why this one has none ('' when it has one).
    """
    key = cls if isinstance(cls, str) else _key(cls)
    _REGISTRY[key] = fn
    if refusal is not None:
        _REFUSALS[key] = refusal
    else:
        _REFUSALS.pop(key, None)


def registered_types() -> list[str]:
    """Class names with a registered C description (for error messages)."""
    return sorted(k.rsplit(".", 1)[-1] for k in _REGISTRY)


def find_c_model(block: Any) -> Callable[[Any, CContext], CModel] | None:
    """The C description of ``block``: its ``c_model`` method, a registered one, or the
    generic one of its linear model; ``None`` if there is none."""
    meth = getattr(type(block), "c_model", None)
    if callable(meth):
        return lambda b, cg: meth(b, cg)
    for cls in type(block).__mro__:
        fn = _REGISTRY.get(_key(cls))
        if fn is not None:
            return fn
    from ..block import Block
    if (type(block).linear_model is not Block.linear_model and not block.periodic_updates):
        return linear_c_model
    return None


def why_no_c_form(block: Any) -> str:
    """'' when ``block`` has a C form; else why not: the registered refusal's reason, or
    ``"no C description"``."""
    if find_c_model(block) is None:
        return "no C description"
    if callable(getattr(type(block), "c_model", None)):
        return ""
    for cls in type(block).__mro__:
        if _key(cls) in _REGISTRY:
            check = _REFUSALS.get(_key(cls))
            return check(block) if check is not None else ""
    return ""


# ----------------------------------------------------------------- context
class CContext:
    """Names and services for one block's C description (see the module docstring).

    Made by the exporter; ``value(handle)`` reads a declared parameter's value
    from the context the export was made from.
    """

    def __init__(self, program: Any, block: Any) -> None:
        self._prog = program
        self.block = block
        #: the C runs in this Python process (the compiled Simulator), not in an FMU: it may
        #: call this process's machine code (a Numba cfunc's address)
        self.in_process = bool(getattr(program, "in_process", False))
        self.t = "t"
        self.mode_t = "mt"

    # -------------------------------------------------------------- signals
    def _elem(self, base: int, size: int, i: Any, what: str) -> int:
        if i is None:
            if size != 1:
                raise CodegenError(f"C description of block '{self.block.path}': {what} has "
                                     f"{size} elements; give an index")
            return base
        i = int(i)
        if not 0 <= i < size:
            raise CodegenError(f"C description of block '{self.block.path}': index {i} out "
                                 f"of range for {what} ({size} elements)")
        return base + i

    def u(self, port: Any, i: Any = None) -> str:
        """The value of an input port element (after unit conversion)."""
        port = self._port(port, "input")
        off = self._prog.slot_offset[self._prog.plan.input_slot[port]]
        return f"s[{self._elem(off, port.size, i, f'input {port.name!r}')}]"

    def y(self, port: Any, i: Any = None) -> str:
        """An output port element (to assign)."""
        port = self._port(port, "output")
        off = self._prog.slot_offset[self._prog.plan.output_slot[port]]
        return f"s[{self._elem(off, port.size, i, f'output {port.name!r}')}]"

    def x(self, h: Any, i: Any = None) -> str:
        """A continuous state element (the integrator's stage value)."""
        a, b, _ = self._prog.plan.cstate_index[h]
        return f"x[{self._elem(a, b - a, i, f'state {h.name!r}')}]"

    def dx(self, h: Any, i: Any = None) -> str:
        """The derivative of a continuous state element (to assign)."""
        a, b, _ = self._prog.plan.cstate_index[h]
        return f"dx[{self._elem(a, b - a, i, f'state {h.name!r}')}]"

    def xd(self, h: Any, i: Any = None) -> str:
        """A discrete state element (bool and int states are stored as doubles)."""
        off, size = self._prog.dstate_layout[h]
        return f"xd[{self._elem(off, size, i, f'discrete state {h.name!r}')}]"

    def _port(self, port: Any, kind: str) -> Any:
        if isinstance(port, str):
            port = self.block.input(port) if kind == "input" else self.block.output(port)
        return port

    # ----------------------------------------------------------- parameters
    def value(self, handle: Any) -> Any:
        """The value of a declared parameter (``block.declare_parameter``) in the export
        context."""
        return self._prog.ctx.param(handle)

    def param(self, name: str, value: Any, *, unit: str | None = None, tunable: bool = True,
              description: str = "") -> Any:
        """A parameter named ``'<block path>.<name>'``.

        ``tunable=True``: an FMI tunable parameter (settable between steps; the C
        code reads it at every use).  ``tunable=False``: a constant baked into the C
        code.  Returns a C expression for a scalar, a :class:`CArray` for an array.
        """
        arr = np.asarray(value, dtype=float)
        if not tunable:
            return self.const(arr)
        return self._prog.add_param(self.block, name, arr, unit, description)

    def const(self, value: Any) -> Any:
        """A constant: a literal for a scalar, a ``static const double[]`` for an array."""
        arr = np.asarray(value, dtype=float)
        if arr.ndim == 0:
            return c_float(float(arr))
        return self._prog.add_const(arr)

    # -------------------------------------------------------------- services
    def helper(self, key: str, code: str) -> None:
        """C code at file scope (static functions), emitted once per ``key`` (the calls
        per key are counted: :func:`cosim.codegen.csource.helpers_text`)."""
        self._prog.helpers.setdefault(key, code)
        self._prog.helper_uses[key] = self._prog.helper_uses.get(key, 0) + 1

    def extern_fn(self, key: str, ret: str, args: str, address: int) -> str:
        """The C name of the compiled function at ``address`` (module docstring), of C type
        ``ret (*)(args)``; ``key`` names the function (one address per key)."""
        ext = self._prog.externs
        if key in ext:
            k, r0, a0, addr0 = ext[key]
            if (r0, a0, addr0) != (ret, args, int(address)):
                raise CodegenError(f"C description of block '{self.block.path}': external "
                                   f"function {key!r} given twice with another signature or "
                                   "address (a key names one function)")
        else:
            if not address:
                raise CodegenError(f"C description of block '{self.block.path}': external "
                                   f"function {key!r} has no address")
            k = len(ext)
            ext[key] = (k, ret, args, int(address))
        return f"COSIM_EXTERN_{k}"

    def fail(self, message: str) -> str:
        """A C statement that makes the current FMI call fail with ``message``."""
        return f"cosim_fail(M, {c_string(message)});"

    @property
    def period(self) -> float:
        """The sample period [s] of the block's first periodic update."""
        ups = self.block.periodic_updates
        if not ups:
            raise CodegenError(f"block '{self.block.path}' has no periodic update")
        return ups[0].period / 1e9


# ------------------------------------------------------- linear fallback
def linear_c_model(block: Any, cg: CContext) -> CModel:
    """The C description of a block from its ``linear_model(ctx)`` (constant matrices).

    Used for linear blocks without a specific description; the matrices are
    baked into the C code (not tunable).
    """
    m = block.linear_model(cg._prog.ctx)
    if m is None:
        raise CodegenError(
            f"block '{block.path}' ({type(block).__name__}) is not linear with these "
            "parameters (linear_model() returned None) and has no C description")
    us = [cg.u(p, k) for p in m.inputs for k in range(p.size)]
    xs = [cg.x(h, k) for h in m.states for k in range(h.size)]
    dxs = [cg.dx(h, k) for h in m.states for k in range(h.size)]
    outputs, row = {}, 0
    for p in m.outputs:
        lines = []
        for k in range(p.size):
            lines.append(f"{cg.y(p, k)} = {affine(m.C[row], xs, m.D[row], us)};")
            row += 1
        outputs[p.name] = "\n".join(lines)
    der = "\n".join(f"{dxs[i]} = {affine(m.A[i], xs, m.B[i], us)};" for i in range(len(xs)))
    return CModel(outputs=outputs, derivatives=der)


def dot(coeffs: Any, names: list[str]) -> str | None:
    """``c0*n0 + c1*n1 + ...`` over the nonzero coefficients (left to right); ``None``
    if all are zero."""
    terms = [f"{c_float(c)} * {n}" for c, n in zip(np.ravel(coeffs), names, strict=True)
             if c != 0.0]
    return " + ".join(terms) if terms else None


def affine(c1: Any, n1: list[str], c2: Any = (), n2: list[str] = (), const: float = 0.0,
           with_const: bool = False) -> str:
    """``(c1 . n1) + (c2 . n2) [+ const]`` as C, in that order (as NumPy's
    ``C @ x + D @ u + f``)."""
    parts = [s for s in (dot(c1, list(n1)), dot(c2, list(n2)) if len(n2) else None) if s]
    out = " + ".join(f"({s})" for s in parts) if parts else "0.0"
    if with_const:
        out = f"{out} + {c_float(const)}"
    return out
