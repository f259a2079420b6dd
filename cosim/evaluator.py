"""The executable program of a plan: fused linear parts and generated code.

From a :class:`~cosim.compiler.Plan` and a context (for parameter values) the
:class:`Evaluator`

1. fuses each connected set of linear blocks into one affine state-space
   system (:mod:`cosim.linear`); only the fused outputs that something outside
   reads (another block, a recorder, an exported port, an override) are
   computed;
2. generates straight-line Python functions: ``evaluate(ctx, s)`` for the
   outputs (one per pattern of due rate groups; sampled blocks not due keep
   their held outputs) and ``derivatives(ctx, s, dx)``;
3. wraps algebraic loops in :class:`~cosim.loops.LoopSolver` objects;
4. decides whether the whole continuous part is a fused linear system driven
   by state-independent inputs, in which case explicit Runge-Kutta steps are
   done exactly by a precomputed propagator (one matrix product per step).

Errors raised inside generated code are traced back to the block and port.

A block may write one of its outputs into the generated code itself: an optional method
``inline_output(port, bind, plan) -> str | None`` returns a Python expression of ``ctx``
for the output's value (objects it needs are named through ``bind(obj) -> name``; the
plan gives the indices of its states and parameters in the context), or None to have
``port.calc(ctx)`` called.  The co-simulation's coupling inputs do this
(:class:`~cosim.subsystem.CouplingInput`: read at every solver stage, a call saved), and
so may a source that only reads a parameter (``ctx.params[i]``).
"""

from __future__ import annotations

import itertools
import linecache
import re
from typing import Any

import numpy as np
import scipy.sparse as sp

from .function_block import FunctionBlock
from .linear import fuse, rk_propagator
from .loops import LoopOptions, LoopSolver
from .propagator import Propagator, assemble

_counter = itertools.count()
#: a generated statement reading the state vector ``x``
_READS_X = re.compile(r"\bx\b")


class Evaluator:
    """Generated evaluation code for one plan and one set of parameter values."""

    def __init__(self, plan: Any, ctx: Any, *, consumers: set | None = None,
                 overrides: dict | None = None, loop_options: LoopOptions | None = None,
                 fuse_linear: bool = True) -> None:
        self.plan = plan
        self.overrides = dict(overrides or {})  # output slot -> fn(ctx, value)
        self.loop_options = loop_options or LoopOptions()
        self.extra_consumed = set(consumers or ())
        self.fuse_linear = fuse_linear
        self._cache: dict[frozenset, Any] = {}
        self._globals = {"_array": np.array, "_concat": np.concatenate, "_ravel": np.ravel,
                         "_zeros": np.zeros, "_empty": np.empty, "_as_floats": _as_floats,
                         "float": float}
        self._line_map: dict[str, dict[int, str]] = {}
        self.loop_solvers: list[LoopSolver] = []
        self._build(ctx)

    # ------------------------------------------------------------- build
    def _build(self, ctx: Any) -> None:
        plan = self.plan
        mixed = set()
        for comp in plan.loops:
            if any(n.block is None or n.block not in plan.linear_candidates for n in comp):
                mixed |= {n.block for n in comp if n.block is not None}
        # an overridden output must be seen by every reader: its block is not fused
        overridden = {plan.slot_ports[k].block for k in self.overrides}
        models = {}
        if self.fuse_linear:
            for b in plan.linear_candidates:
                if b in mixed or b in overridden:
                    continue
                m = b.linear_model(ctx)
                if m is not None:
                    models[b] = m
        self.fused_blocks = set(models)
        # connected components of fused blocks
        adj: dict = {b: set() for b in models}
        for b in models:
            for p in b.inputs.values():
                src = plan.feed.get(p, (None,))[0]  # unconnected with a default: None
                sb = getattr(src, "block", None)
                if sb in models and sb is not b:
                    adj[b].add(sb)
                    adj[sb].add(b)
        seen, comps = set(), []
        for b in plan.blocks:
            if b in models and b not in seen:
                stack, comp = [b], []
                seen.add(b)
                while stack:
                    x = stack.pop()
                    comp.append(x)
                    for y in adj[x]:
                        if y not in seen:
                            seen.add(y)
                            stack.append(y)
                comp.sort(key=plan.blocks.index)
                comps.append(comp)
        self.groups = [fuse(c, [models[b] for b in c], plan) for c in comps]
        self.group_of = {b: gi for gi, c in enumerate(comps) for b in c}

        # which slots are read outside the fused groups
        needed = set(self.extra_consumed) | set(self.overrides)
        for rout in plan.diagram.outputs.values():
            needed.add(plan.output_slot[rout])
        for b in plan.blocks:
            if b in self.fused_blocks:
                continue
            for p in b.inputs.values():
                needed.add(plan.input_slot[p])
        for g in self.groups:
            needed.update(g.v_slots)
        self.conv_needed = set()
        for n in plan.nodes:
            if n.kind == "conv" and n.slots[0] in needed:
                self.conv_needed.add(n)
                needed.update(n.reads)
        self.needed = needed

        # per group: global output offsets
        for g in self.groups:
            g.slot_of = [plan.output_slot[p] for p in g.y_ports]
            g.index_slice = _as_slice(g.state_index)

        # nodes in evaluation order -> ops; outputs that no input, exported output,
        # observer or override reads are pruned (Context.output raises for them)
        self.ops: list[tuple] = []  # (kind, payload, sampled_block_or_None)
        self.pruned: set[int] = set()
        for comp in plan.order:
            is_loop = comp in plan.loops
            fused = [n for n in comp if n.block in self.fused_blocks]
            if is_loop and len(fused) != len(comp):
                self.ops.append(("loop", comp, None))
                continue
            for n in comp:
                if n.kind == "conv":
                    if n in self.conv_needed:
                        self.ops.append(("conv", n, None))
                elif n.block in self.fused_blocks:
                    if n.slots[0] in needed:
                        gi = self.group_of[n.block]
                        last = self.ops[-1] if self.ops else None
                        if last is not None and last[0] == "group" and last[1][0] == gi:
                            last[1][1].append(n)
                        else:
                            self.ops.append(("group", (gi, [n]), None))
                else:
                    samp = n.block if n.block.is_sampled else None
                    if not is_loop and samp is None and not any(k in needed for k in n.slots):
                        self.pruned.update(n.slots)  # nothing reads it: not computed
                        continue
                    self.ops.append(("node", n, samp))
        # state-dependent slots, for the propagator decision
        self._prepare_loops()
        self._prepare_propagation()

    def _prepare_loops(self) -> None:
        for op in self.ops:
            if op[0] != "loop":
                continue
            comp = op[1]
            src, lines = [], []
            for n in comp:
                self._emit_node(n, src, lines)
            fn = self._compile("loop_sweep", src, lines)
            slots = [s for n in comp for s in n.slots]
            label = " | ".join(n.label for n in comp)
            solver = LoopSolver(label, slots, fn, self.loop_options,
                                sorted({n.block.path for n in comp if n.block is not None}))
            self.loop_solvers.append(solver)
            op_index = self.ops.index(op)
            self.ops[op_index] = ("loopsolver", solver, None)

    def _prepare_propagation(self) -> None:
        plan = self.plan
        state_blocks = {b for b in plan.blocks if b.continuous_states
                        and b not in self.fused_blocks}
        self.nonfused_state_blocks = [b for b in plan.blocks if b in state_blocks]
        dependent: set[int] = set()
        for op in self.ops:
            kind, payload, _ = op
            if kind == "node":
                n = payload
                if op[2] is not None:
                    continue  # sampled: held constant between hits
                if n.block in state_blocks or any(r in dependent for r in n.reads):
                    dependent.update(n.slots)
            elif kind == "conv":
                if payload.reads[0] in dependent:
                    dependent.update(payload.slots)
            elif kind == "group":
                gi, nodes = payload
                g = self.groups[gi]
                if g.state_index.size or any(v in dependent for v in g.v_slots):
                    dependent.update(s for n in nodes for s in n.slots)
            elif kind == "loopsolver":
                dependent.update(payload.slots)  # conservative
        self.state_dependent_slots = dependent
        v_all = [v for g in self.groups for v in g.v_slots]
        self.can_propagate = (not state_blocks and bool(self.groups)
                              and plan.n_continuous > 0
                              and not any(v in dependent for v in v_all))

    # ----------------------------------------------------------- codegen
    def _emit_node(self, n: Any, src: list, lines: list) -> None:
        """Append the statements computing node ``n`` (one line each)."""
        plan = self.plan
        if n.kind == "conv":
            src.append(f"s[{n.slots[0]}] = {n.scale!r} * s[{n.reads[0]}] + {n.bias!r}")
            lines.append(n.label)
        elif n.kind == "func":
            b: FunctionBlock = n.block
            name = self._bind(b.fn)
            args = ", ".join(f"s[{plan.input_slot[p]}]" for p in b.in_ports)
            if b.needs_time:
                args = "ctx.time" + (", " + args if args else "")
            if len(n.slots) == 1:
                src.append(f"s[{n.slots[0]}] = {name}({args})")
            else:
                lhs = ", ".join(f"s[{k}]" for k in n.slots)
                src.append(f"{lhs} = {name}({args})")
            lines.append(f"block '{b.path}' (fn {getattr(b.fn, '__name__', b.fn)!s})")
        elif len(n.ports) > 1:  # an output group (Block.declare_outputs)
            name = self._bind(n.ports[0].group.calc)
            src.append(", ".join(f"s[{k}]" for k in n.slots) + f", = {name}(ctx)")
            lines.append("outputs " + ", ".join(f"'{p.path}'" for p in n.ports))
        else:
            port = n.ports[0]
            inline = getattr(port.block, "inline_output", None)
            expr = inline(port, self._bind, plan) if inline is not None else None
            if expr is None:
                expr = f"{self._bind(port.calc)}(ctx)"
            src.append(f"s[{n.slots[0]}] = {expr}")
            lines.append(f"output '{port.path}'")
        for k in n.slots:
            if k in self.overrides:
                ov = self._bind(self.overrides[k])
                src.append(f"s[{k}] = {ov}(ctx, s[{k}])")
                lines.append(f"override of '{plan.slot_ports[k].path}'")

    def _emit_gather(self, g: Any) -> str:
        if not g.v_slots:
            return ""
        if all(sz == 1 for sz in g.v_sizes) and all(
                self.plan.slot_ports[k].shape == () for k in g.v_slots):
            inner = ", ".join(f"s[{k}]" for k in g.v_slots)
            return f"_array(({inner},), dtype=float)"
        inner = ", ".join(f"_ravel(s[{k}])" for k in g.v_slots)
        return f"_concat(({inner},))"

    def _emit_group(self, gi: int, nodes: list, src: list, lines: list) -> None:
        g = self.groups[gi]
        rows, targets = [], []
        for n in nodes:
            for p, k in zip(n.ports, n.slots):
                off = g.y_offsets[g.y_ports.index(p)]
                rows.extend(range(off, off + p.size))
                targets.append((k, p, len(rows) - p.size))
        rows = np.array(rows, dtype=int)
        C = _rows(g.Cy, rows)
        D = _rows(g.Dy, rows)
        f = g.fy[rows]
        if self._emit_scalar_rows(g, targets, C, D, f, src, lines):
            return
        if (rows.size == 1 and targets[0][1].shape == () and not _nnz(D) and not np.any(f)
                and g.state_index.size and not sp.issparse(C)):
            k, p, _ = targets[0]
            c = np.ascontiguousarray(np.asarray(C, dtype=float).reshape(-1))
            whole = g.index_slice is not None and g.index_slice.start == 0 and \
                g.index_slice.stop == self.plan.n_continuous
            xs = "x" if whole else f"x[{_slice_src(g)}]"
            src.append(f"s[{k}] = float({self._bind(c)} @ {xs})")
            lines.append(f"output '{p.path}' (fused)")
            if k in self.overrides:
                src.append(f"s[{k}] = {self._bind(self.overrides[k])}(ctx, s[{k}])")
                lines.append(f"override of '{p.path}'")
            return
        terms = []
        if g.state_index.size and _nnz(C):
            terms.append(f"{self._bind(C)} @ x[{_slice_src(g)}]")
        gather = self._emit_gather(g)
        if gather and _nnz(D):
            src.append(f"_v = {gather}")
            lines.append(f"fused linear group {gi} inputs")
            terms.append(f"{self._bind(D)} @ _v")
        if np.any(f):
            terms.append(self._bind(f))
        expr = " + ".join(terms) if terms else f"_zeros({rows.size})"
        src.append(f"_y = {expr}")
        lines.append(f"fused linear group {gi}: " + ", ".join(p.path for _, p, _ in targets))
        for k, p, off in targets:
            if p.shape == ():
                src.append(f"s[{k}] = float(_y[{off}])")
            else:
                src.append(f"s[{k}] = _y[{off}:{off + p.size}].reshape({p.shape!r})")
            lines.append(f"output '{p.path}' (fused)")
            if k in self.overrides:
                src.append(f"s[{k}] = {self._bind(self.overrides[k])}(ctx, s[{k}])")
                lines.append(f"override of '{p.path}'")

    def _emit_scalar_rows(self, g: Any, targets: list, C: Any, D: Any, f: np.ndarray,
                          src: list, lines: list) -> bool:
        """A small group of scalar outputs that read no state (sums and gains between
        blocks), written out as Python float arithmetic: ``s[k] = c0 * s[a] + c1 * s[b]
        [+ f]``, the C's expression for the row (:func:`cosim.codegen.model.affine`, the
        same order of operations: equal to the compiled loop bit for bit), where NumPy's
        ``D @ v`` took about a microsecond a group at every evaluation (a two-input sum,
        timeit once: 0.95 us against 0.06).  ``C``, ``D``, ``f``: the targets' rows.
        False (nothing emitted) for larger, stateful or array groups."""
        plan = self.plan
        if (_nnz(C) or not all(p.shape == () for _, p, _ in targets)
                or not all(sz == 1 for sz in g.v_sizes)
                or not all(plan.slot_ports[k].shape == () for k in g.v_slots)):
            return False
        D = D.toarray() if sp.issparse(D) else np.asarray(D, dtype=float)
        if np.count_nonzero(D) > SCALAR_GROUP_MAX or not np.all(np.isfinite(D)) \
                or not np.all(np.isfinite(g.fy)):
            return False
        has_f = bool(np.any(g.fy))  # (the C adds the constant to every row of the group)
        vs = [f"s[{k}]" for k in g.v_slots]
        for k, p, off in targets:
            terms = [f"{float(c)!r} * {v}" for c, v in zip(D[off], vs) if c != 0.0]
            expr = " + ".join(terms) if terms else "0.0"
            if has_f:
                expr = f"({expr}) + {float(f[off])!r}"
            src.append(f"s[{k}] = float({expr})")
            lines.append(f"output '{p.path}' (fused)")
            if k in self.overrides:
                src.append(f"s[{k}] = {self._bind(self.overrides[k])}(ctx, s[{k}])")
                lines.append(f"override of '{p.path}'")
        return True

    def _bind(self, obj: Any) -> str:
        name = f"_o{len(self._globals)}"
        self._globals[name] = obj
        return name

    def _compile(self, fname: str, src: list, lines: list, args: str = "ctx, s",
                 tail: str = "", prologue: tuple = ()) -> Any:
        """Compile ``def fname(args)`` from statement lines; ``lines`` label each one;
        ``prologue``: unlabelled lines before them (and before ``x = ctx.xc``)."""
        body = "".join(f"    {line}\n" for line in src) or "    pass\n"
        # the state vector only where a statement reads it: a small system's solver stage
        # sets the states as floats, and the array is then made only if read
        uses_x = _READS_X.search(body) is not None
        header = (f"def {fname}({args}):\n" + "".join(f"    {p}\n" for p in prologue)
                  + ("    x = ctx.xc\n" if uses_x else ""))
        code = header + body + (f"    {tail}\n" if tail else "")
        filename = f"<cosim-generated-{next(_counter)}-{fname}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        first = 2 + len(prologue) + (1 if uses_x else 0)
        self._line_map[filename] = {i + first: lab for i, lab in enumerate(lines)}
        ns = dict(self._globals)
        exec(compile(code, filename, "exec"), ns)
        return ns[fname]

    def evaluator_for(self, due: frozenset) -> Any:
        """``evaluate(ctx, s)`` for the given set of due sampled blocks (cached)."""
        fn = self._cache.get(due)
        if fn is not None:
            return fn
        fn = self._compile("evaluate", *self._evaluation_src(due))
        self._cache[due] = fn
        return fn

    def _evaluation_src(self, due: frozenset) -> tuple[list, list]:
        src: list[str] = []
        lines: list[str] = []
        for kind, payload, samp in self.ops:
            if kind == "node":
                if samp is not None and samp not in due:
                    continue
                self._emit_node(payload, src, lines)
            elif kind == "conv":
                self._emit_node(payload, src, lines)
            elif kind == "group":
                self._emit_group(payload[0], payload[1], src, lines)
            elif kind == "loopsolver":
                src.append(f"{self._bind(payload)}.solve(ctx, s)")
                lines.append(f"algebraic loop {payload.label}")
        return src, lines

    def derivative_ops(self) -> list[bool]:
        """For each op, whether the derivatives need it: the inputs of the blocks with
        states and of fused groups, and what they read, transitively (sampled outputs are
        held, not evaluated)."""
        return self._derivative_needs()[0]

    def derivative_reads(self) -> set[int]:
        """Every slot the derivatives read, directly or through the outputs they need,
        held outputs of sampled blocks included (a change of one of those at a sample hit
        changes the right-hand side there)."""
        return self._derivative_needs()[1]

    def _derivative_needs(self) -> tuple[list[bool], set[int]]:
        plan = self.plan
        need: set[int] = set()
        for b in self.nonfused_state_blocks:
            need.update(plan.input_slot[p] for p in b.inputs.values())
        for g in self.groups:
            if g.state_index.size:
                need.update(g.v_slots)
        keep = [False] * len(self.ops)
        for i in range(len(self.ops) - 1, -1, -1):
            kind, payload, samp = self.ops[i]
            if kind in ("node", "conv"):
                if samp is None and any(k in need for k in payload.slots):
                    keep[i] = True
                    need.update(payload.reads)
            elif kind == "group":
                gi, nodes = payload
                if any(k in need for n in nodes for k in n.slots):
                    keep[i] = True
                    need.update(self.groups[gi].v_slots)
        return keep, need

    def derivative_evaluator(self) -> Any:
        """``evaluate(ctx, s)`` for the solver stages: only the outputs the derivatives
        read (the inputs of the blocks with states and of fused groups, transitively);
        outputs read only by exported ports, observers or sampled blocks wait for the
        full evaluation at the end of the step.  The full evaluator if there is a loop."""
        fn = self._cache.get("derivatives")
        if fn is not None:
            return fn
        if any(kind == "loopsolver" for kind, _, _ in self.ops):
            fn = self.evaluator_for(frozenset())
        else:
            fn = self._compile("evaluate_for_derivatives", *self._derivative_evaluation_src())
        self._cache["derivatives"] = fn
        return fn

    def _derivative_evaluation_src(self) -> tuple[list, list]:
        if any(kind == "loopsolver" for kind, _, _ in self.ops):
            return self._evaluation_src(frozenset())
        keep = self.derivative_ops()
        src: list[str] = []
        lines: list[str] = []
        for (kind, payload, _), k in zip(self.ops, keep):
            if not k:
                continue
            if kind == "group":
                self._emit_group(payload[0], payload[1], src, lines)
            else:
                self._emit_node(payload, src, lines)
        return src, lines

    def make_derivatives(self) -> Any:
        """``derivatives(ctx, s, dx)`` filling the whole derivative vector."""
        return self._compile("derivatives", *self._derivatives_src(), "ctx, s, dx",
                             tail="return dx")

    def make_rhs(self, ctx: Any, reuse: Any, derivatives: Any,
                 floats: bool = False) -> Any:
        """The right-hand side of the fixed-step solvers, one call per stage:
        ``rhs(t, x)`` sets the time and the states in ``ctx``, evaluates
        :meth:`derivative_evaluator`'s statements and then :meth:`make_derivatives`' (inline)
        and returns the derivatives, a new array.  Where ``reuse(x, t)`` says the outputs
        were evaluated at this ``(t, x)`` (the first stage at a major point), only
        ``derivatives(ctx, s, dx)`` runs.

        ``floats``: for the solvers' float path (:mod:`cosim.solvers`): ``x`` is a list of
        floats (a stage: set as the context's float form, as :meth:`Context.set_floats`
        does) or the step's start array, and the derivatives come back as a list."""
        src, lines = self._derivative_evaluation_src()
        dsrc, dlines = self._derivatives_src()
        n = self.plan.n_continuous
        r, d = self._bind(reuse), self._bind(derivatives)
        if floats:
            buf = self._bind(np.zeros(n))  # copied out by tolist(): one buffer serves all
            prologue = (
                "ctx.time = t",
                f"dx = {buf}",
                "if type(xs) is list:",
                "    ctx._xl = xs  # Context.set_floats, inline",
                "    ctx._xc = None",
                "else:",
                "    ctx.xc = xs",
                f"    if {r}(xs, t):",
                f"        return {d}(ctx, ctx.signals, dx).tolist()",
                "s = ctx.signals")
            tail = "return dx.tolist()"
            scalar = self._derivatives_list_src()
            if scalar is not None:  # every state scalar: the list without the buffer
                dsrc, dlines, tail = scalar
        else:
            prologue = (
                "ctx.time = t",
                "ctx.xc = xs",
                f"dx = _empty({n})",
                f"if {r}(xs, t):",
                f"    return {d}(ctx, ctx.signals, dx)",
                "s = ctx.signals")
            tail = "return dx"
        return self._compile("rhs_floats" if floats else "rhs", src + dsrc, lines + dlines,
                             f"t, xs, ctx={self._bind(ctx)}", tail=tail, prologue=prologue)

    def _derivatives_src(self) -> tuple[list, list]:
        plan = self.plan
        src, lines = [], []
        for gi, g in enumerate(self.groups):
            if not g.state_index.size:
                continue
            sl = _slice_src(g)
            terms = [f"{self._bind(g.A)} @ x[{sl}]"]
            gather = self._emit_gather(g)
            if gather and _nnz(g.B):
                terms.append(f"{self._bind(g.B)} @ {gather}")
            if np.any(g.e):
                terms.append(self._bind(g.e))
            src.append(f"dx[{sl}] = " + " + ".join(terms))
            lines.append(f"fused linear group {gi} derivatives")
        for b in self.nonfused_state_blocks:
            idx = [plan.cstate_index[h] for h in b.continuous_states]
            a, e = idx[0][0], idx[-1][1]
            if e - a == 1 and b.continuous_states[0].scalar:
                src.append(f"dx[{a}] = {self._bind(b.derivatives)}(ctx)")
            else:
                src.append(f"dx[{a}:{e}] = {self._bind(b.derivatives)}(ctx)")
            lines.append(f"block '{b.path}' derivatives")
        return src, lines

    def _derivatives_list_src(self) -> tuple[list, list, str] | None:
        """The derivatives as a list of floats where every state is a scalar state of a
        block that is not fused, without the array: a one-state block's value through
        ``float()``; a block's tuple of one float per state unpacked, anything else it
        returns converted as ``dx[a:b] = value`` converts it (:func:`_as_floats`).  None
        otherwise."""
        plan = self.plan
        if any(g.state_index.size for g in self.groups):
            return None
        src, lines, names = [], [], {}
        for b in self.nonfused_state_blocks:
            if not all(h.scalar for h in b.continuous_states):
                return None
            idx = [plan.cstate_index[h][0] for h in b.continuous_states]
            targets = [f"_d{i}" for i in idx]
            fn = self._bind(b.derivatives)
            if len(targets) == 1:
                src.append(f"{targets[0]} = {fn}(ctx)")
            else:
                k = len(targets)
                src.append(f"{', '.join(targets)}, = _v if type(_v := {fn}(ctx)) is tuple "
                           f"and len(_v) == {k} else _as_floats(_v, {k})")
            lines.append(f"block '{b.path}' derivatives")
            names.update(zip(idx, targets))
        if sorted(names) != list(range(plan.n_continuous)):
            return None
        tail = "return [" + ", ".join(f"float({names[i]})" for i in sorted(names)) + "]"
        return src, lines, tail

    # ------------------------------------------------------- propagation
    def make_propagator(self, tableau: tuple, h: float) -> Any:
        """Exact RK step for the all-fused, state-independent-input case."""
        plan = self.plan
        A, B, e = assemble(self.groups, plan.n_continuous)
        v_slots = [v for g in self.groups for v in g.v_slots]
        v_sizes = [z for g in self.groups for z in g.v_sizes]
        nv = sum(v_sizes)
        Phi, gammas, gconst = rk_propagator(A, B, e, tableau, h)
        # upstream nodes of the v slots (state independent): evaluate at stage times
        needed = set(v_slots)
        up_ops = []
        for op in reversed(self.ops):
            kind, payload, samp = op
            if kind == "node" and samp is None and any(s in needed for s in payload.slots):
                up_ops.append(op)
                needed.update(payload.reads)
            elif kind == "conv" and payload.slots[0] in needed:
                up_ops.append(op)
                needed.update(payload.reads)
            elif kind == "group" and any(k in needed for n in payload[1] for k in n.slots):
                # a state-free fused group on the way (a gain between an input and a
                # nonlinear block): its outputs move with time too
                up_ops.append(op)
                needed.update(self.groups[payload[0]].v_slots)
            elif kind == "loopsolver" and any(s in needed for s in payload.slots):
                up_ops.append(op)
        up_ops.reverse()
        src, lines = [], []
        for kind, payload, _ in up_ops:
            if kind == "loopsolver":
                src.append(f"{self._bind(payload)}.solve(ctx, s)")
                lines.append(f"algebraic loop {payload.label}")
            elif kind == "group":
                self._emit_group(payload[0], payload[1], src, lines)
            else:
                self._emit_node(payload, src, lines)
        if nv:
            if nv == 1 and plan.slot_ports[v_slots[0]].shape == ():
                src.append(f"return s[{v_slots[0]}]")  # scalar: see Propagator.step
            elif all(z == 1 for z in v_sizes) and all(plan.slot_ports[k].shape == ()
                                                      for k in v_slots):
                src.append("return (" + ", ".join(f"s[{k}]" for k in v_slots) + ",)")
            else:
                src.append("return _concat((" + ", ".join(f"_ravel(s[{k}])" for k in v_slots)
                           + ",))")
        else:
            src.append("return ()")
        lines.append("propagator inputs")
        vfun = self._compile("stage_inputs", src, lines)
        return Propagator(Phi, gammas, gconst, vfun, nv)

    # ----------------------------------------------------------- errors
    def locate(self, exc: BaseException) -> str | None:
        """Which block/port the generated code was evaluating when ``exc`` was raised."""
        tb = exc.__traceback__
        where = None
        while tb is not None:
            fn = tb.tb_frame.f_code.co_filename
            if fn in self._line_map:
                where = self._line_map[fn].get(tb.tb_lineno, where)
            tb = tb.tb_next
        return where

    def describe(self) -> str:
        lines = []
        for gi, g in enumerate(self.groups):
            lines.append(f"fused linear group {gi}: {len(g.blocks)} blocks, "
                         f"{g.state_index.size} states, {len(g.v_slots)} external inputs: "
                         + ", ".join(b.path for b in g.blocks[:8])
                         + (" ..." if len(g.blocks) > 8 else ""))
        lines.append("propagator: " + ("yes (exact RK step, one product per step)"
                                       if self.can_propagate else "no"))
        return "\n".join(lines)


def _as_floats(value: Any, k: int) -> list:
    """What ``dx[a:a + k] = value`` stores, as a list of floats (NumPy's conversion and
    broadcasting: a (1, k) array, a scalar for all ``k``)."""
    out = np.empty(k)
    out[:] = value
    return out.tolist()


def _as_slice(idx: np.ndarray) -> slice | None:
    if idx.size and np.all(np.diff(idx) == 1):
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return None


#: the most coefficients a group of scalar outputs written out as floats may have
#: (:meth:`Evaluator._emit_scalar_rows`; above, NumPy's product is as fast)
SCALAR_GROUP_MAX = 48


def _slice_src(g: Any) -> str:
    if g.index_slice is not None:
        return f"{g.index_slice.start}:{g.index_slice.stop}"
    return repr(list(map(int, g.state_index)))


def _rows(M: Any, rows: np.ndarray) -> Any:
    out = M[rows]
    if sp.issparse(out):
        out = sp.csr_matrix(out)
        if out.shape[0] * out.shape[1] <= 4096:
            out = out.toarray()
    return out


def _nnz(M: Any) -> int:
    if sp.issparse(M):
        return M.nnz
    return int(np.count_nonzero(M))
