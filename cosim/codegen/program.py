"""From a compiled diagram to the pieces of C that the FMU is made of.

:class:`Program` walks the :class:`~cosim.evaluator.Evaluator` of the diagram
(the same plan, fused linear groups, evaluation order and pruning that the
Python :class:`~cosim.simulator.Simulator` runs) and collects:

* the flat storage: signals ``s[]`` (one entry per element of every slot),
  continuous states ``x[]``, discrete states ``xd[]`` and parameters ``p[]``;
* the statements of the output evaluation in evaluation order (fused linear
  groups as straight-line matrix code with the coefficients as literals,
  other blocks from their :class:`~cosim.codegen.model.CModel`, unit conversions),
  sampled blocks guarded by their rate groups;
* the subset of that evaluation the derivatives need (as
  :meth:`Evaluator.derivative_evaluator`), the derivatives, the discrete updates
  per rate group, and for ``integrator="zoh"`` the stacked ``A, B, e`` of the
  whole continuous part and its inputs;
* the FMI variables (parameters, exported inputs and outputs, states,
  derivatives, optional locals) with units and output dependencies.

The C text and the model descriptions are made from a Program by
:mod:`cosim.codegen.csource`, :mod:`fmus.cgen.fmi2` and :mod:`fmus.cgen.fmi3`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..evaluator import Evaluator
from .model import (
    CContext,
    CModel,
    CodegenError,
    ParamDecl,
    affine,
    c_float,
    find_c_model,
    registered_types,
    why_no_c_form,
)
from .pycall import PyCalls
from .tangent import tangent_source
from .time_cache import TimeOnly

INTEGRATORS = ("euler", "heun", "midpoint", "rk4", "zoh")
_NO_TANGENT = ("static void cosim_jvp(Model *M, double *ts, const double *tx, double *tdx) {\n"
               "    /* in process: no directional derivatives are asked */\n"
               "    (void)M; (void)ts; (void)tx; (void)tdx;\n}")


@dataclass
class Var:
    """An FMI variable (an array for FMI 3; FMI 2 splits it into scalars)."""

    name: str
    kind: str  # time | param | input | output | state | der | local | indicator
    area: str  # T | P | S | X | DX | Z (event indicators)
    offset: int
    shape: tuple[int, ...]
    start: np.ndarray | None
    unit: str | None = None
    description: str = ""
    discrete: bool = False  # output of a sampled block (held between hits)
    deps: tuple = ((), ())  # (root input names, state names) for outputs
    state: str | None = None  # for derivatives: the state variable's name

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1


@dataclass
class Op:
    """One emitted piece of the output evaluation."""

    code: str
    groups: tuple[int, ...] = ()  # rate groups (sampled) or () for always
    for_derivatives: bool = False
    comment: str = ""
    #: a function of time only, skipped when its values are of the same time
    #: (:mod:`cosim.codegen.time_cache`)
    time_only: bool = False
    #: the offsets in ``s[]`` it writes (time-only ops: the look-ahead copies them)
    writes: tuple[int, ...] = ()


@dataclass
class Program:
    """Everything the C generator needs (see the module docstring)."""

    diagram: Any
    ctx: Any
    integrator: str = "rk4"
    step_ticks: int = 0
    fuse_linear: bool = True
    expose_locals: bool = False
    #: output ports whose values must be computed though no output reads them (the ports a
    #: compiled Simulator records)
    observed: tuple = ()
    kinds: tuple[str, ...] = ("cs",)
    #: the C runs in this process (the compiled Simulator), not in an exported FMU
    in_process: bool = False
    interpolate_inputs: bool = False  # Co-Simulation follows the input polynomial
    plan: Any = None
    slot_offset: list[int] = field(default_factory=list)
    n_signals: int = 0
    dstate_layout: dict = field(default_factory=dict)
    xd0: list[float] = field(default_factory=list)
    params: list[ParamDecl] = field(default_factory=list)
    p0: list[float] = field(default_factory=list)
    consts: list[tuple[str, np.ndarray]] = field(default_factory=list)
    helpers: dict[str, str] = field(default_factory=dict)
    helper_uses: dict[str, int] = field(default_factory=dict)  # key -> blocks registering it
    #: external functions (``CContext.extern_fn``): key -> (index, return type, args, address)
    externs: dict[str, tuple] = field(default_factory=dict)
    ops: list[Op] = field(default_factory=list)
    derivatives: list[str] = field(default_factory=list)
    updates: list[list[str]] = field(default_factory=list)  # per rate group
    rate_groups: list[tuple[int, int]] = field(default_factory=list)
    breakpoints: list[int] = field(default_factory=list)
    variables: list[Var] = field(default_factory=list)
    zoh: dict | None = None
    x_names: list[str] = field(default_factory=list)
    x0: list[float] = field(default_factory=list)
    #: the zero crossings are located by the compiled Simulator's C loop
    #: (:mod:`cosim.compiled_run`), not exported as Model Exchange event indicators
    state_events: bool = False
    #: the blocks' monitors have C conditions (:class:`~cosim.codegen.model.CMonitor`, the
    #: compiled Simulator's :attr:`monitors`)
    monitor_conditions: bool = False
    #: the monitors' C conditions: (expression, label), in the Python loop's calling order
    monitors: list[tuple] = field(default_factory=list)
    #: state events: (witness expression, handler code, direction, terminal, label)
    zero_crossings: list[tuple] = field(default_factory=list)
    tangent: str = ""  # C of cosim_jvp (cosim.codegen.tangent)
    #: a time-only op reads the mode time (its cache key holds it too)
    time_only_mt: bool = False

    # ------------------------------------------------------------- build
    def build(self) -> Program:
        self.plan = plan = self.diagram.compile()
        #: blocks without a C form called back in Python (an in-process run only)
        self.pycalls = PyCalls(self, why_no_c_form) if self.in_process else None
        self._check_supported()
        self._layout()
        consumers = set()
        if self.expose_locals:
            consumers = {plan.output_slot[p] for b in plan.blocks for p in b.outputs.values()}
        consumers |= {plan.output_slot[p] for p in self.observed}
        self.ev = Evaluator(plan, self.ctx, consumers=consumers,
                             fuse_linear=self.fuse_linear)
        self._cmodels: dict = {}
        self._missing: list = []
        self._missing_why: dict = {}
        self.rate_groups = [(g.period, g.offset) for g in plan.rate_groups]
        self._block_groups = {b: tuple(i for i, g in enumerate(plan.rate_groups)
                                       if b in g.blocks) for b in plan.blocks}
        self._emit_ops()
        self._emit_derivatives()
        self._emit_updates()
        self._emit_zero_crossings()
        if self.monitor_conditions:
            self._emit_monitors()
        if self._missing:
            self._raise_missing()
        if self.integrator == "zoh":
            self._prepare_zoh()
        self.breakpoints = sorted({t for b in plan.blocks for ev_ in b.time_events
                                   for t in ev_.times})
        self._variables()
        # the compiled Simulator asks no directional derivatives: no tangent program (it is
        # most of the source of a diagram of many nonlinear blocks)
        self.tangent = _NO_TANGENT if self.in_process else tangent_source(self, self.ev)
        del self.ev
        return self

    def _check_supported(self) -> None:
        plan = self.plan
        for b in plan.blocks:
            if b.zero_crossings and "cs" in self.kinds and not self.state_events:
                raise CodegenError(
                    f"export_fmu(): block '{b.path}' ({type(b).__name__}) declares zero "
                    "crossings (state events); generated C exports them as event indicators "
                    "in Model Exchange only (the Co-Simulation integrator does not locate "
                    "events). Export with kind='me', or replace the block by a sampled one")
            if b.opaque_states and not self._called_back(b):
                raise CodegenError(
                    f"export_fmu(): block '{b.path}' ({type(b).__name__}) keeps state outside "
                    "the context (an FMU or a device) and cannot be generated as C")
            for ev_ in b.time_events:
                if ev_.handler is not None:
                    raise CodegenError(
                        f"export_fmu(): block '{b.path}' ({type(b).__name__}) has a time event "
                        "with a Python handler, which generated C cannot run")
        for rin in self.diagram.inputs.values():
            if not np.issubdtype(rin.dtype, np.number) and rin.dtype != np.bool_:
                raise CodegenError(f"export_fmu(): exported input {rin.describe()} has dtype "
                                     f"{rin.dtype}; only numeric signals are exported")
        if self.integrator not in INTEGRATORS:
            raise CodegenError(f"export_fmu(): integrator must be one of "
                                 f"{', '.join(map(repr, INTEGRATORS))}, got {self.integrator!r}")

    def _layout(self) -> None:
        plan, ctx = self.plan, self.ctx
        off = 0
        for port in plan.slot_ports:
            self.slot_offset.append(off)
            off += port.size
        self.n_signals = off
        off = 0
        for h in plan.discrete_states:
            if self._called_back(h.block):  # its states stay in the context
                continue
            v = ctx.xd[plan.dstate_index[h]]
            try:
                arr = np.asarray(v if h.c_codec is None else h.c_codec[1](v),
                                 dtype=float).reshape(-1)
            except (TypeError, ValueError):
                raise CodegenError(
                    f"export_fmu(): discrete state '{h.path}' holds {type(v).__name__} "
                    f"{v!r}, not numbers; generated C keeps discrete states as doubles") from None
            self.dstate_layout[h] = (off, arr.size)
            self.xd0.extend(arr.tolist())
            off += arr.size
        x = np.asarray(ctx.xc, dtype=float)
        self.x0 = x.tolist()
        self.x_names = [""] * plan.n_continuous
        for h in plan.continuous_states:
            a, b, _ = plan.cstate_index[h]
            for k in range(a, b):
                self.x_names[k] = fmi_path(h.block) + "." + h.name + (
                    f"[{k - a + 1}]" if b - a > 1 or not h.scalar else "")

    # --------------------------------------------------------- C models
    def _called_back(self, b: Any) -> bool:
        return self.pycalls is not None and b in self.pycalls.blocks

    def cmodel(self, b: Any) -> CModel | None:
        """``b``'s C description; None for a block without one (named in the error) or
        called back in Python (:attr:`pycalls`)."""
        if b in self._cmodels:
            return self._cmodels[b]
        if self._called_back(b):
            self._cmodels[b] = None
            return None
        fn = find_c_model(b)
        cm = None
        why = why_no_c_form(b) if fn is not None else "no C description"
        if why:
            self._missing.append(b)
            self._missing_why[b] = why
        else:
            cm = fn(b, CContext(self, b))
            if not isinstance(cm, CModel):
                raise CodegenError(f"the C description of block '{b.path}' returned "
                                     f"{type(cm).__name__}, not a cosim.codegen.CModel")
        self._cmodels[b] = cm
        return cm

    def _raise_missing(self) -> None:
        lines = "\n  ".join(f"'{b.path}' ({type(b).__name__})" + (
            f": {why}" if (why := self._missing_why.get(b, "no C description"))
            != "no C description" else "") for b in self._missing)
        raise CodegenError.without_c_form(self._missing,
            f"export_fmu(): {len(self._missing)} block(s) of diagram '{self.diagram.name}' have "
            f"no C description, so they cannot be exported as generated C:\n  {lines}\n"
            "Give the class a c_model(self, cg) method returning a cosim.codegen.CModel, register "
            "one with cosim.codegen.register_c_model(cls, fn), implement linear_model() if the "
            "block is linear, or export this part as a Python FMU (pythonfmu3) instead. Blocks "
            "with a C description: " + ", ".join(registered_types()),
            [self._missing_why.get(b, "") for b in self._missing])

    def add_param(self, block: Any, name: str, value: np.ndarray, unit: str | None,
                  description: str) -> Any:
        from .model import CArray
        full = fmi_path(block) + "." + name
        taken = {q.name for q in self.params}
        k = 2
        base = full
        while full in taken:
            full = f"{base}_{k}"
            k += 1
        off = len(self.p0)
        self.params.append(ParamDecl(full, off, value.shape, value.reshape(-1).copy(), unit,
                                     description or f"parameter {name} of block "
                                     f"'{block.path}' ({type(block).__name__})"))
        self.p0.extend(value.reshape(-1).tolist())
        if value.ndim == 0:
            return f"p[{off}]"
        return CArray("p", off, value.shape)

    def add_const(self, arr: np.ndarray) -> Any:
        from .model import CArray
        for name, other in self.consts:
            if other.shape == arr.shape and np.array_equal(other, arr):
                return CArray(name, 0, arr.shape)
        name = f"K{len(self.consts)}"
        self.consts.append((name, arr.copy()))
        return CArray(name, 0, arr.shape)

    # ------------------------------------------------------------- ops
    def _slot(self, k: int, i: int = 0) -> str:
        return f"s[{self.slot_offset[k] + i}]"

    def _offsets(self, slots: Any) -> tuple[int, ...]:
        return tuple(self.slot_offset[k] + i for k in slots
                     for i in range(self.plan.slot_ports[k].size))

    def _v_names(self, g: Any) -> list[str]:
        out = []
        for k, size in zip(g.v_slots, g.v_sizes, strict=True):
            out.extend(self._slot(k, i) for i in range(size))
        return out

    def _emit_ops(self) -> None:
        ev, plan = self.ev, self.plan
        for kind, payload, _samp in ev.ops:
            if kind == "loopsolver":
                raise CodegenError(
                    f"export_fmu(): diagram '{self.diagram.name}' has an algebraic loop through "
                    f"nonlinear blocks ({payload.label}); generated C does not solve loops. "
                    "Break it with a state or a UnitDelay, or make it linear (linear loops are "
                    "solved exactly by fusion)")
        keep = self._derivative_subset()
        tonly = TimeOnly()
        for (kind, payload, samp), for_d in zip(ev.ops, keep, strict=True):
            if kind == "conv":
                n = payload
                src, dst = n.reads[0], n.slots[0]
                size = plan.slot_ports[dst].size
                code = "\n".join(f"{self._slot(dst, i)} = {c_float(n.scale)} * "
                                 f"{self._slot(src, i)} + {c_float(n.bias)};"
                                 for i in range(size))
                self.ops.append(Op(code, (), for_d, n.label, tonly.conv(n.reads, n.slots),
                                   self._offsets(n.slots)))
            elif kind == "group":
                gi, nodes = payload
                slots = [k for n in nodes for k in n.slots]
                self.ops.append(Op(self._group_outputs(gi, nodes), (), for_d,
                                   f"fused linear group {gi}: "
                                   + ", ".join(p.path for n in nodes for p in n.ports),
                                   tonly.group(self.ev.groups[gi], slots),
                                   self._offsets(slots)))
            else:  # "node"
                n = payload
                cm = self.cmodel(n.block)
                if cm is None and self._called_back(n.block):
                    groups = self._block_groups[n.block] if samp is not None else ()
                    code = self.pycalls.node(n, self.ev)
                    self.ops.append(Op(code, groups, for_d and samp is None,
                                       f"block '{n.block.path}' ({type(n.block).__name__}) "
                                       "called back in Python",
                                       tonly.node(n, samp is not None, code),
                                       self._offsets(n.slots)))
                    continue
                if cm is None:
                    continue
                parts = []
                for port in n.ports:
                    code = cm.outputs.get(port.name)
                    if code is None:
                        raise CodegenError(
                            f"the C description of block '{n.block.path}' "
                            f"({type(n.block).__name__}) gives no code for output "
                            f"{port.name!r}; outputs described: {', '.join(cm.outputs)}")
                    parts.append(code)
                groups = self._block_groups[n.block] if samp is not None else ()
                code = "\n".join(parts)
                self.ops.append(Op(code, groups, for_d and samp is None,
                                   f"block '{n.block.path}' ({type(n.block).__name__}) "
                                   + ", ".join(p.name for p in n.ports),
                                   tonly.node(n, samp is not None, code),
                                   self._offsets(n.slots)))
        self.time_only_mt = tonly.reads_mt

    def _derivative_subset(self) -> list[bool]:
        """Which ops the derivatives need (``Evaluator.derivative_ops``)."""
        return self.ev.derivative_ops()

    def _group_outputs(self, gi: int, nodes: list) -> str:
        g = self.ev.groups[gi]
        Cy, Dy = _dense(g.Cy), _dense(g.Dy)
        xs = [f"x[{int(i)}]" for i in g.state_index]
        vs = self._v_names(g)
        has_f = bool(np.any(g.fy))
        lines = []
        for n in nodes:
            for p, k in zip(n.ports, n.slots, strict=True):
                off = g.y_offsets[g.y_ports.index(p)]
                for i in range(p.size):
                    r = off + i
                    lines.append(f"{self._slot(k, i)} = "
                                 f"{affine(Cy[r], xs, Dy[r], vs, g.fy[r], has_f)};")
        return "\n".join(lines)

    def _emit_derivatives(self) -> None:
        ev = self.ev
        for gi, g in enumerate(ev.groups):
            if not g.state_index.size:
                continue
            A, B = _dense(g.A), _dense(g.B)
            xs = [f"x[{int(i)}]" for i in g.state_index]
            vs = self._v_names(g)
            has_e = bool(np.any(g.e))
            lines = [f"dx[{int(j)}] = {affine(A[r], xs, B[r], vs, g.e[r], has_e)};"
                     for r, j in enumerate(g.state_index)]
            self.derivatives.append(f"/* fused linear group {gi} */\n{{\n"
                                    + _indent("\n".join(lines)) + "\n}")
        for b in ev.nonfused_state_blocks:
            cm = self.cmodel(b)
            if cm is None:
                continue
            if not cm.derivatives.strip():
                raise CodegenError(f"the C description of block '{b.path}' "
                                     f"({type(b).__name__}) gives no derivatives for its "
                                     "continuous states")
            self.derivatives.append(f"/* block '{b.path}' derivatives */\n{{\n"
                                    + _indent(cm.derivatives) + "\n}")

    def _emit_updates(self) -> None:
        plan = self.plan
        for g in plan.rate_groups:
            codes = []
            for b in g.blocks:
                for ui, u in enumerate(b.periodic_updates):
                    if u.handler is None or u.period != g.period or u.offset != g.offset:
                        continue
                    cm = self.cmodel(b)
                    if cm is None and self._called_back(b):
                        codes.append(f"/* block '{b.path}' update, called back in Python */\n"
                                      + self.pycalls.update(b, u.handler))
                        continue
                    if cm is None:
                        continue
                    code = cm.update[ui] if isinstance(cm.update, list) else cm.update
                    if not code.strip():
                        raise CodegenError(
                            f"the C description of block '{b.path}' ({type(b).__name__}) "
                            "gives no update code for its periodic update")
                    codes.append(f"/* block '{b.path}' update */\n{{\n" + _indent(code)
                                 + "\n}")
            self.updates.append(codes)

    def _described(self, kind: str) -> Any:
        """``(block, its C description)`` of each block that declares ``kind``
        (``"zero_crossings"``, ``"monitors"``) and has a C form."""
        for b in self.plan.blocks:
            if getattr(b, kind):
                cm = self.cmodel(b)
                if cm is not None:
                    yield b, cm

    def _emit_zero_crossings(self) -> None:
        """Each declared zero crossing from the block's C description (by name)."""
        for b, cm in self._described("zero_crossings"):
            for z in b.zero_crossings:
                cz = cm.zero_crossings.get(z.name)
                if cz is None:
                    raise CodegenError(
                        f"the C description of block '{b.path}' ({type(b).__name__}) gives no "
                        f"C for its zero crossing {z.name!r}; add CModel(zero_crossings="
                        f"{{{z.name!r}: CZeroCrossing(witness, handler)}}) (described: "
                        f"{', '.join(cm.zero_crossings) or 'none'})")
                if z.handler is not None and not cz.handler.strip():
                    raise CodegenError(
                        f"the C description of block '{b.path}' ({type(b).__name__}) gives no "
                        f"handler code for zero crossing {z.name!r}, which has a handler")
                self.zero_crossings.append((cz.witness, cz.handler, int(z.direction),
                                            bool(z.terminal), f"{b.path}.{z.name}"))

    def _emit_monitors(self) -> None:
        """Each declared monitor's C condition from the block's C description (by name)."""
        for b, cm in self._described("monitors"):
            for m in b.monitors:
                cmon = cm.monitors.get(m.name)
                if cmon is None:
                    raise CodegenError(
                        f"the C description of block '{b.path}' ({type(b).__name__}) gives no "
                        f"C condition for its monitor {m.name!r} (a Python callback at every "
                        f"step); add CModel(monitors={{{m.name!r}: CMonitor(condition)}}) "
                        f"(described: {', '.join(cm.monitors) or 'none'})")
                self.monitors.append((cmon.condition, f"{b.path}.{m.name}"))

    # -------------------------------------------------------------- zoh
    def _prepare_zoh(self) -> None:
        ev, plan = self.ev, self.plan
        why = None
        if plan.n_continuous == 0:
            why = "the diagram has no continuous states"
        elif not ev.can_propagate:
            why = ("its continuous part is not one fused linear system driven by "
                   "state-independent inputs (a nonlinear block with states, or a nonlinear "
                   "block in a feedback path)")
            if ev.nonfused_state_blocks:
                why += ": " + ", ".join(f"'{b.path}'" for b in ev.nonfused_state_blocks[:5])
        else:
            needed = {v for g in ev.groups for v in g.v_slots}
            for kind, payload, samp in reversed(ev.ops):
                if kind == "node" and samp is None and any(s in needed for s in payload.slots):
                    cm = self._cmodels.get(payload.block)
                    if cm is not None and cm.time_dependent:
                        why = (f"block '{payload.block.path}' ({type(payload.block).__name__}) "
                               "feeds it a signal that varies with time within a step")
                        break
                    needed.update(payload.reads)
                elif kind == "conv" and payload.slots[0] in needed:
                    needed.update(payload.reads)
        if why:
            raise CodegenError(
                f"export_fmu(integrator='zoh'): the exact zero-order-hold step needs the whole "
                f"continuous part to be linear with inputs held between events, but {why}. "
                "Use integrator='rk4' with a step")
        n = plan.n_continuous
        v_names: list[str] = []
        for g in ev.groups:
            v_names.extend(self._v_names(g))
        nv = len(v_names)
        A, B, e = np.zeros((n, n)), np.zeros((n, nv)), np.zeros(n)
        col = 0
        for g in ev.groups:
            idx = g.state_index
            nvg = sum(g.v_sizes)
            if idx.size:
                A[np.ix_(idx, idx)] = _dense(g.A)
                if nvg:
                    B[np.ix_(idx, np.arange(col, col + nvg))] = _dense(g.B)
                e[idx] += g.e
            col += nvg
        self.zoh = {"A": A, "B": B, "e": e, "v": v_names}

    # -------------------------------------------------------- variables
    def _variables(self) -> None:
        plan, d = self.plan, self.diagram
        vs: list[Var] = [Var("time", "time", "T", 0, (), None, "s", "simulation time")]
        for q in self.params:
            vs.append(Var(q.name, "param", "P", q.offset, q.shape, q.values, q.unit,
                          q.description))
        for rin in d.inputs.values():
            k = plan.root_input_slot[rin]
            vs.append(Var(rin.name, "input", "S", self.slot_offset[k], rin.shape,
                          np.zeros(rin.size), rin.unit_text, rin.description or
                          "exported input"))
        deps = self._dependencies()
        in_names = {plan.root_input_slot[r]: r.name for r in d.inputs.values()}
        sampled_slots = {k for op in self.ev.ops if op[0] == "node" and op[2] is not None
                         for k in op[1].slots}
        for rout in d.outputs.values():
            k = plan.output_slot[rout]
            src = d.output_map[rout]
            ins, xs = deps.get(k, (frozenset(), frozenset()))
            vs.append(Var(rout.name, "output", "S", self.slot_offset[k], rout.shape, None,
                          rout.unit_text, rout.description or f"output of '{src.path}'",
                          discrete=k in sampled_slots and not src.block.continuous_states,
                          deps=(tuple(in_names[i] for i in sorted(ins)),
                                tuple(self.x_names[j] for j in sorted(xs)))))
        for h in plan.continuous_states:
            a, b, _ = plan.cstate_index[h]
            name = fmi_path(h.block) + "." + h.name
            shape = () if h.scalar else (b - a,)
            vs.append(Var(name, "state", "X", a, shape, np.asarray(self.x0[a:b]), None,
                          f"continuous state of block '{h.block.path}'"))
            if "me" in self.kinds:
                vs.append(Var(f"der({name})", "der", "DX", a, shape, None, None,
                              f"derivative of {name}", state=name))
        if "me" in self.kinds:  # event indicators (FMI 3 lists them in ModelStructure)
            k = 0
            for b in plan.blocks:
                for z in b.zero_crossings:
                    vs.append(Var(f"{fmi_path(b)}.{z.name}.witness", "indicator", "Z", k, (),
                                  None, None, f"event indicator of zero crossing {z.name!r} "
                                  f"of block '{b.path}'"))
                    k += 1
        if self.expose_locals:
            taken = {v.name for v in vs}
            for b in plan.blocks:
                for port in b.outputs.values():
                    k = plan.output_slot[port]
                    if k in self.ev.pruned:
                        continue
                    name = fmi_path(b) + "." + port.name
                    if name in taken:  # a parameter or state of the same name
                        name += "_out"
                    vs.append(Var(name, "local", "S",
                                  self.slot_offset[k], port.shape, None, port.unit_text,
                                  f"output '{port.path}'",
                                  discrete=k in sampled_slots and not b.continuous_states))
        names = [v.name for v in vs]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise CodegenError(f"export_fmu(): FMI variable names clash: {sorted(dup)}; "
                                 "rename the exported ports or blocks")
        self.variables = vs

    def _dependencies(self) -> dict[int, tuple[frozenset, frozenset]]:
        """Per slot: the root-input slots and global state indices it depends on directly
        (held sampled outputs depend on nothing between events)."""
        plan, ev = self.plan, self.ev
        empty = (frozenset(), frozenset())
        deps: dict[int, tuple[frozenset, frozenset]] = {
            k: (frozenset([k]), frozenset()) for k in plan.root_input_slot.values()}

        def union(slots: Any) -> tuple[frozenset, frozenset]:
            a, b = set(), set()
            for s in slots:
                da, db = deps.get(s, empty)
                a |= da
                b |= db
            return frozenset(a), frozenset(b)

        for kind, payload, samp in ev.ops:
            if kind == "conv":
                deps[payload.slots[0]] = deps.get(payload.reads[0], empty)
            elif kind == "node":
                n = payload
                if samp is not None:
                    for k in n.slots:
                        deps[k] = empty
                    continue
                ins, xs = union(n.reads)
                own = {j for h in n.block.continuous_states
                       for j in range(*plan.cstate_index[h][:2])}
                for k in n.slots:
                    deps[k] = (ins, xs | own)
            elif kind == "group":
                gi, nodes = payload
                g = ev.groups[gi]
                Cy, Dy = _dense(g.Cy), _dense(g.Dy)
                vslots = [k for k, z in zip(g.v_slots, g.v_sizes, strict=True)
                          for _ in range(z)]
                for n in nodes:
                    for p, k in zip(n.ports, n.slots, strict=True):
                        off = g.y_offsets[g.y_ports.index(p)]
                        rows = range(off, off + p.size)
                        xs = {int(g.state_index[c]) for r in rows
                              for c in np.flatnonzero(Cy[r])}
                        ins, xs2 = union({vslots[c] for r in rows
                                          for c in np.flatnonzero(Dy[r])})
                        deps[k] = (ins, frozenset(xs) | xs2)
        return deps


def fmi_path(block: Any) -> str:
    """A block path as an FMI name: ``'sub/blk'`` -> ``'sub.blk'``."""
    return block.path.replace("/", ".")


def _dense(m: Any) -> np.ndarray:
    return m.toarray() if sp.issparse(m) else np.asarray(m, dtype=float)


def _indent(code: str, n: int = 4) -> str:
    pad = " " * n
    return "\n".join(pad + line if line.strip() else line for line in code.splitlines())

